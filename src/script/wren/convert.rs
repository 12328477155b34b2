//! A script's result (a Wren value in a slot) written as the reply through the shared `Sink`, by
//! Redis's Lua rules in Wren's values (the table in docs/commands/WREN.EVAL.md):
//! - String → bulk (any bytes); Num → integer, truncated toward zero as Redis's Lua does (use
//!   `{"double": x}` for a double); null → nil; true → 1 and false → nil in RESP2 (the script's
//!   protocol, `Redis.setresp`), booleans in RESP3;
//! - List → array; a Map with one of Redis's keys → that reply (`err`, `ok`, `double`,
//!   `big_number`, `map`, `set`, `verbatim_string`, checked in Redis's order); any other Map → a
//!   map reply (RESP2: a flat array of keys and values);
//! - anything else (a class, a function, a fiber, a range) → nil.
//!
//! Reading values never runs script code; elements are read into the slots above the value.

use std::ffi::c_int;

use super::ffi::*;
use crate::script::Sink;

/// Writes the value in `slot` (slots above it are free) to the sink.
///
/// # Safety
/// `vm` holds a value in `slot`, outside any call.
pub unsafe fn reply(vm: *mut WrenVM, slot: c_int, sink: &mut Sink, resp: u8) {
    unsafe {
        match wrenGetSlotType(vm, slot) {
            WREN_TYPE_STRING => sink.bulk(get_bytes(vm, slot)),
            WREN_TYPE_NUM => sink.number(wrenGetSlotDouble(vm, slot)),
            WREN_TYPE_BOOL => sink.boolean(wrenGetSlotBool(vm, slot), resp),
            WREN_TYPE_LIST => {
                if !sink.enter() {
                    return;
                }
                let n = wrenGetListCount(vm, slot);
                sink.array(n as usize);
                wrenEnsureSlots(vm, slot + 2);
                for i in 0..n {
                    wrenGetListElement(vm, slot, i, slot + 1);
                    reply(vm, slot + 1, sink, resp);
                }
                sink.leave();
            }
            WREN_TYPE_MAP => {
                if !sink.enter() {
                    return;
                }
                map_reply(vm, slot, sink);
                sink.leave();
            }
            _ => sink.null(),
        }
    }
}

/// Puts `map[key]` in `slot + 2` if the map (in `slot`) has `key`, and says its type.
unsafe fn field(vm: *mut WrenVM, slot: c_int, key: &[u8]) -> Option<c_int> {
    unsafe {
        set_bytes(vm, slot + 1, key);
        if !wrenGetMapContainsKey(vm, slot, slot + 1) {
            return None;
        }
        wrenGetMapValue(vm, slot, slot + 1, slot + 2);
        Some(wrenGetSlotType(vm, slot + 2))
    }
}

unsafe fn map_reply(vm: *mut WrenVM, slot: c_int, sink: &mut Sink) {
    unsafe {
        wrenEnsureSlots(vm, slot + 5);
        if field(vm, slot, b"err") == Some(WREN_TYPE_STRING) {
            return sink.error(get_bytes(vm, slot + 2));
        }
        if field(vm, slot, b"ok") == Some(WREN_TYPE_STRING) {
            return sink.status(get_bytes(vm, slot + 2));
        }
        if field(vm, slot, b"double") == Some(WREN_TYPE_NUM) {
            return sink.double(wrenGetSlotDouble(vm, slot + 2));
        }
        if field(vm, slot, b"big_number") == Some(WREN_TYPE_STRING) {
            return sink.big_number(get_bytes(vm, slot + 2));
        }
        if field(vm, slot, b"map") == Some(WREN_TYPE_MAP) {
            return entries(vm, slot + 2, sink, false);
        }
        match field(vm, slot, b"set") {
            Some(WREN_TYPE_MAP) => return entries(vm, slot + 2, sink, true),
            Some(WREN_TYPE_LIST) => {
                let n = wrenGetListCount(vm, slot + 2);
                sink.set(n as usize);
                for i in 0..n {
                    wrenGetListElement(vm, slot + 2, i, slot + 3);
                    reply(vm, slot + 3, sink, 3);
                }
                return;
            }
            _ => {}
        }
        if field(vm, slot, b"verbatim_string") == Some(WREN_TYPE_MAP) {
            // The inner map moves down to `slot + 3` so `field` can read it.
            let inner = slot + 3;
            wrenEnsureSlots(vm, inner + 3);
            wrenGetMapValue(vm, slot, slot + 1, inner);
            let format = (field(vm, inner, b"format") == Some(WREN_TYPE_STRING))
                .then(|| get_bytes(vm, inner + 2).to_vec());
            let text = (field(vm, inner, b"string") == Some(WREN_TYPE_STRING))
                .then(|| get_bytes(vm, inner + 2).to_vec());
            if let (Some(f), Some(t)) = (format, text) {
                return sink.verbatim(&f, &t);
            }
        }
        entries(vm, slot, sink, false);
    }
}

/// The map in `slot` as a map reply (or, for `set`, a set of its keys). Keys are value types
/// (strings, numbers, booleans, null, ranges, classes), so converting one uses no slot above it.
unsafe fn entries(vm: *mut WrenVM, slot: c_int, sink: &mut Sink, keys_only: bool) {
    unsafe {
        let n = wrenGetMapCount(vm, slot) as usize;
        if keys_only {
            sink.set(n);
        } else {
            sink.map(n);
        }
        wrenEnsureSlots(vm, slot + 4);
        let (key, value) = (slot + 1, slot + 2);
        for i in 0..goblinWrenMapCapacity(vm, slot) {
            if !goblinWrenMapEntry(vm, slot, i, key, value) {
                continue;
            }
            reply(vm, key, sink, 3);
            if !keys_only {
                reply(vm, value, sink, 3);
            }
        }
    }
}
