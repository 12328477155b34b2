//! The `redis` table a Luau script sees (the same surface as the Lua engine's: `call`, `pcall`,
//! `error_reply`, `status_reply`, `sha1hex`, `log` and its levels, `setresp`, ..., whose rules are
//! written once for both in `script::lua::shared`), Redis's `pcall` (an error table comes back as
//! its message), `collectgarbage`, and the missing-global error.
//!
//! Every function here is a C function of the VM. Luau is built with C++ exceptions, so a host
//! function raises with `lua_error`, which unwinds through its (`C-unwind`) Rust frame.

use std::ffi::c_int;

use mlua::ffi::{self, lua_State};

use super::{push_bytes, to_bytes, Api, OUT_OF_MEMORY};
use crate::script::lua::shared;

type CFn = unsafe extern "C-unwind" fn(*mut lua_State) -> c_int;

/// Registers `redis` and replaces `pcall` and `collectgarbage` (on the globals, before the sandbox
/// locks them).
pub(super) unsafe fn register(l: *mut lua_State) {
    unsafe {
        ffi::lua_createtable(l, 0, 24);
        let register_function: (&std::ffi::CStr, CFn) =
            (c"register_function", super::functions::register_function);
        for (name, f) in REDIS_FUNCTIONS.iter().copied().chain([register_function]) {
            ffi::lua_pushcclosurek(l, f, name.as_ptr(), 0, None);
            ffi::lua_rawsetfield(l, -2, name.as_ptr());
        }
        shared::set_constants::<super::Api>(l, true);
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());

        ffi::lua_pushcclosurek(l, pcall, c"pcall".as_ptr(), 0, None);
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"pcall".as_ptr());
        ffi::lua_pushcclosurek(l, collectgarbage, c"collectgarbage".as_ptr(), 0, None);
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"collectgarbage".as_ptr());
    }
}

/// Pushes Redis's error table `{err = "CODE message"}` for `text`, which is either `-CODE message`,
/// `CODE message` or a bare message (given the `ERR` code), as `luaPushErrorBuff` does. With
/// `locate`, the table also gets the `line` of the nearest Lua function from that stack level up
/// (0: the running function, 1: the caller of the running C function).
pub(super) unsafe fn push_error_table(l: *mut lua_State, text: &[u8], locate: Option<c_int>) {
    unsafe {
        ffi::lua_createtable(l, 0, 2);
        push_bytes(l, &shared::error_table_text(text));
        ffi::lua_rawsetfield(l, -2, c"err".as_ptr());
        if let Some(line) = locate.and_then(|level| script_line(l, level)) {
            ffi::lua_pushnumber(l, line as f64);
            ffi::lua_rawsetfield(l, -2, c"line".as_ptr());
        }
    }
}

/// The current line of the nearest Lua function at `level` or above.
unsafe fn script_line(l: *mut lua_State, level: c_int) -> Option<c_int> {
    for level in level..level + 8 {
        // SAFETY: `lua_Debug` is plain data; `lua_getinfo` fills it.
        let mut ar: ffi::lua_Debug = unsafe { std::mem::zeroed() };
        if unsafe { ffi::lua_getinfo(l, level, c"l".as_ptr(), &mut ar) } == 0 {
            return None;
        }
        if ar.currentline > 0 {
            return Some(ar.currentline);
        }
    }
    None
}

/// Raises a plain error string prefixed with the calling script's position, as `luaL_error`.
unsafe fn raise_str(l: *mut lua_State, msg: &str) -> ! {
    unsafe { shared::raise_str::<Api>(l, msg) };
    unreachable!("lua_error unwinds")
}

/// The string (or number, as Luau writes it) at `idx`.
pub(super) unsafe fn arg_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    unsafe {
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING | ffi::LUA_TNUMBER => {
                let mut len = 0;
                let p = ffi::lua_tolstring(l, idx, &mut len);
                Some(std::slice::from_raw_parts(p as *const u8, len))
            }
            _ => None,
        }
    }
}

/// `_G`'s `__index`: reading a global that does not exist is an error (as Redis's Lua).
pub(super) unsafe extern "C-unwind" fn missing_global(l: *mut lua_State) -> c_int {
    unsafe { shared::missing_global::<Api>(l) }
}

shared::redis_functions!("C-unwind", Api);

/// Redis's `pcall`: Luau's, except that an error table `{err=...}` (what `redis.call` raises) comes
/// back as its message string, so `redis.error_reply(err)` works on it.
unsafe extern "C-unwind" fn pcall(l: *mut lua_State) -> c_int {
    unsafe {
        let argc = ffi::lua_gettop(l);
        if argc == 0 {
            raise_str(l, "missing argument #1 to 'pcall'");
        }
        ffi::lua_pushboolean(l, 1);
        ffi::lua_insert(l, 1);
        let st = ffi::lua_pcall(l, argc - 1, ffi::LUA_MULTRET, 0);
        if st != ffi::LUA_OK {
            if st == ffi::LUA_ERRMEM {
                // Out of memory is not the script's to catch: re-raised, and remembered (a raised
                // error is a run-time one) so the reply says what happened.
                OUT_OF_MEMORY.with(|o| o.set(true));
                ffi::lua_error(l);
            }
            ffi::lua_remove(l, 1);
            if ffi::lua_type(l, -1) == ffi::LUA_TTABLE
                && ffi::lua_rawgetfield(l, -1, c"err".as_ptr()) == ffi::LUA_TSTRING
            {
                ffi::lua_replace(l, -2);
            } else if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
                ffi::lua_settop(l, -2);
            }
            ffi::lua_pushboolean(l, 0);
            ffi::lua_insert(l, 1);
        }
        ffi::lua_gettop(l)
    }
}

/// Luau's own `collectgarbage`: `"collect"` (the default) runs a full collection, `"count"` answers
/// the heap size in KB.
unsafe extern "C-unwind" fn collectgarbage(l: *mut lua_State) -> c_int {
    unsafe {
        let option = if ffi::lua_type(l, 1) <= ffi::LUA_TNIL {
            Some(&b"collect"[..])
        } else {
            to_bytes(l, 1)
        };
        match option {
            Some(b"collect") => {
                ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
                0
            }
            Some(b"count") => {
                let kb = ffi::lua_gc(l, ffi::LUA_GCCOUNT, 0) as f64;
                let rem = ffi::lua_gc(l, ffi::LUA_GCCOUNTB, 0) as f64;
                ffi::lua_pushnumber(l, kb + rem / 1024.0);
                1
            }
            _ => raise_str(l, "collectgarbage must be called with 'count' or 'collect'"),
        }
    }
}
