//! The `Redis` class scripts see (module `redis`, imported by every script's module): its foreign
//! methods and the building of Wren values from command replies.
//!
//! Host functions run inside a foreign call: they set `State::in_host` (so no allocation is
//! refused while Rust frames are on the stack) and report errors with `wrenAbortFiber`, which a
//! script's `Fiber.try` may catch.

use std::ffi::{c_char, c_int, CStr};

use super::ffi::*;
use super::{current, state};
use crate::script::cache::sha1_hex;
use crate::script::redis_api::log_level;
use crate::script::resp::{walk, Aggregate, ReplyBuilder};
use crate::util::fmt_g17;

/// Wren's most parameters for a method.
const MAX_ARITY: usize = 16;

/// The `redis` module's source: `Redis.call` and `Redis.pcall` for 1 to 16 arguments (one List
/// argument is taken as the whole command), `Redis.registerFunction` (a library's loading run
/// only: `functions.rs`; whether the callback is a `Fn` is asked here, the C API cannot tell), the
/// reply helpers and the log levels.
pub fn prelude() -> String {
    let mut s = String::from("class Redis {\n");
    for name in ["call", "pcall"] {
        for n in 1..=MAX_ARITY {
            let params: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
            s.push_str(&format!("  foreign static {name}({})\n", params.join(", ")));
        }
    }
    s.push_str(
        r#"  static registerFunction(name, callback) { registerFunction_(name, callback, callback is Fn) }
  static registerFunction(named) {
    return registerFunction_(named, named is Map && named["callback"] is Fn)
  }
  foreign static registerFunction_(name, callback, isFn)
  foreign static registerFunction_(named, isFn)
  foreign static sha1hex(text)
  foreign static log(level, message)
  foreign static setresp(version)
  static errorReply(message) {
    if (!(message is String)) Fiber.abort("ERR wrong number or type of arguments")
    return {"err": message.startsWith("-") ? message[1..-1] : message}
  }
  static statusReply(message) {
    if (!(message is String)) Fiber.abort("ERR wrong number or type of arguments")
    return {"ok": message}
  }
  static LOG_DEBUG { 0 }
  static LOG_VERBOSE { 1 }
  static LOG_NOTICE { 2 }
  static LOG_WARNING { 3 }
}
"#,
    );
    s
}

/// Wren's question for each `foreign` method: only the `redis` module's `Redis` has any.
pub unsafe extern "C" fn bind_foreign_method(
    _vm: *mut WrenVM,
    module: *const c_char,
    class: *const c_char,
    is_static: bool,
    signature: *const c_char,
) -> Option<WrenForeignMethodFn> {
    let (module, class, signature) = unsafe {
        (
            CStr::from_ptr(module).to_bytes(),
            CStr::from_ptr(class).to_bytes(),
            CStr::from_ptr(signature).to_bytes(),
        )
    };
    if module != b"redis" || class != b"Redis" || !is_static {
        return None;
    }
    match signature {
        s if s.starts_with(b"call(") => Some(redis_call),
        s if s.starts_with(b"pcall(") => Some(redis_pcall),
        b"registerFunction_(_,_,_)" => Some(super::functions::register_positional),
        b"registerFunction_(_,_)" => Some(super::functions::register_named),
        b"sha1hex(_)" => Some(sha1hex),
        b"log(_,_)" => Some(log),
        b"setresp(_)" => Some(setresp),
        _ => None,
    }
}

/// Aborts the current fiber with `msg` (catchable by `Fiber.try`).
pub(super) unsafe fn raise(vm: *mut WrenVM, msg: &str) {
    unsafe {
        set_bytes(vm, 0, msg.as_bytes());
        wrenAbortFiber(vm, 0);
    }
}

/// Runs a host function with allocations never refused.
pub(super) unsafe fn host(vm: *mut WrenVM, f: impl FnOnce()) {
    unsafe { state(vm) }.in_host = true;
    f();
    unsafe { state(vm) }.in_host = false;
}

unsafe extern "C" fn redis_call(vm: *mut WrenVM) {
    unsafe { host(vm, || call_generic(vm, true)) }
}

unsafe extern "C" fn redis_pcall(vm: *mut WrenVM) {
    unsafe { host(vm, || call_generic(vm, false)) }
}

/// Appends the command argument in `slot` to the call's buffer: a string as it is, a number as
/// `%.17g` text (as Redis's Lua); false for any other value.
pub(super) unsafe fn push_arg(vm: *mut WrenVM, slot: c_int, buf: &mut Vec<u8>) -> bool {
    unsafe {
        match wrenGetSlotType(vm, slot) {
            WREN_TYPE_STRING => buf.extend_from_slice(get_bytes(vm, slot)),
            WREN_TYPE_NUM => buf.extend_from_slice(fmt_g17(wrenGetSlotDouble(vm, slot)).as_bytes()),
            _ => return false,
        }
    }
    true
}

/// `Redis.call` and `Redis.pcall`: an error reply aborts the fiber with the server's text (call)
/// or comes back as `{"err": text}` (pcall).
unsafe fn call_generic(vm: *mut WrenVM, raise_errors: bool) {
    unsafe {
        let st = state(vm);
        let mut buf = std::mem::take(&mut st.arg_buf);
        let mut spans = std::mem::take(&mut st.spans);
        buf.clear();
        spans.clear();
        let argc = wrenGetSlotCount(vm) - 1;
        let list = argc == 1 && wrenGetSlotType(vm, 1) == WREN_TYPE_LIST;
        let count = if list { wrenGetListCount(vm, 1) } else { argc };
        if list {
            wrenEnsureSlots(vm, 3);
        }
        let mut ok = true;
        for i in 0..count {
            let slot = if list {
                wrenGetListElement(vm, 1, i, 2);
                2
            } else {
                i + 1
            };
            let start = buf.len();
            if !push_arg(vm, slot, &mut buf) {
                ok = false;
                break;
            }
            spans.push((start, buf.len()));
        }
        let error = if count == 0 {
            Some("ERR Please specify at least one argument for this redis lib call")
        } else if !ok {
            Some("ERR Redis.call arguments must be strings or numbers")
        } else {
            None
        };
        match (error, current()) {
            (Some(e), _) => error_value(vm, e.as_bytes(), raise_errors),
            (None, None) => raise(vm, "ERR Redis.call is only available while a script runs"),
            (None, Some(run)) => {
                let reply = run.call(spans.iter().map(|&(s, e)| &buf[s..e]));
                if reply.first() == Some(&b'-') {
                    let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
                    error_value(vm, &reply[1..end], raise_errors);
                } else {
                    walk(reply, &mut Builder { vm, sp: 0 });
                }
            }
        }
        let st = state(vm);
        st.arg_buf = buf;
        st.spans = spans;
    }
}

/// An error for the script: raised, or returned as `{"err": text}`.
unsafe fn error_value(vm: *mut WrenVM, text: &[u8], raise_errors: bool) {
    unsafe {
        if raise_errors {
            set_bytes(vm, 0, text);
            wrenAbortFiber(vm, 0);
        } else {
            let mut b = Builder { vm, sp: 0 };
            b.error(text);
        }
    }
}

unsafe extern "C" fn sha1hex(vm: *mut WrenVM) {
    unsafe {
        host(vm, || {
            let mut text = Vec::new();
            if !push_arg(vm, 1, &mut text) {
                return raise(vm, "ERR Redis.sha1hex needs a string");
            }
            set_bytes(vm, 0, &sha1_hex(&text));
        })
    }
}

unsafe extern "C" fn log(vm: *mut WrenVM) {
    unsafe {
        host(vm, || {
            if wrenGetSlotType(vm, 1) != WREN_TYPE_NUM {
                return raise(vm, "First argument must be a number (log level).");
            }
            let Some(level) = log_level(wrenGetSlotDouble(vm, 1) as i64) else {
                return raise(vm, "Invalid debug level.");
            };
            let mut msg = Vec::new();
            if !push_arg(vm, 2, &mut msg) {
                return raise(vm, "ERR Redis.log needs a string message");
            }
            crate::log::log(level, &String::from_utf8_lossy(&msg));
            wrenSetSlotNull(vm, 0);
        })
    }
}

unsafe extern "C" fn setresp(vm: *mut WrenVM) {
    unsafe {
        host(vm, || {
            let v = if wrenGetSlotType(vm, 1) == WREN_TYPE_NUM {
                wrenGetSlotDouble(vm, 1)
            } else {
                0.0
            };
            if v != 2.0 && v != 3.0 {
                return raise(vm, "RESP version must be 2 or 3.");
            }
            if let Some(run) = current() {
                run.resp = v as u8;
            }
            wrenSetSlotNull(vm, 0);
        })
    }
}

/// Builds the Wren value of a command's reply in slot 0 (Redis's `redisProtocolToLuaType`, in
/// Wren's values; the table in docs/commands/WREN.EVAL.md). Values are made on a stack of slots:
/// each finished value sits at `sp - 1`, an aggregate below its elements.
struct Builder {
    vm: *mut WrenVM,
    sp: c_int,
}

impl Builder {
    /// The slot for the next value (with room for helpers above it).
    fn next(&mut self) -> c_int {
        // SAFETY: growing the slots of the current foreign call.
        unsafe { wrenEnsureSlots(self.vm, self.sp + 4) };
        self.sp += 1;
        self.sp - 1
    }

    /// `{key: <value in slot + 2>}` in `slot`, after the value was set.
    fn wrap(&mut self, slot: c_int, key: &[u8]) {
        // SAFETY: slots up to `slot + 3` exist (`next`).
        unsafe {
            wrenSetSlotNewMap(self.vm, slot);
            set_bytes(self.vm, slot + 1, key);
            wrenSetMapValue(self.vm, slot, slot + 1, slot + 2);
        }
    }

    fn keyed_bytes(&mut self, key: &[u8], value: &[u8]) {
        let slot = self.next();
        // SAFETY: see `wrap`.
        unsafe { set_bytes(self.vm, slot + 2, value) };
        self.wrap(slot, key);
    }
}

impl ReplyBuilder for Builder {
    fn int(&mut self, n: i64) {
        let slot = self.next();
        unsafe { wrenSetSlotDouble(self.vm, slot, n as f64) }
    }
    fn bulk(&mut self, b: &[u8]) {
        let slot = self.next();
        unsafe { set_bytes(self.vm, slot, b) }
    }
    fn status(&mut self, s: &[u8]) {
        self.keyed_bytes(b"ok", s);
    }
    fn error(&mut self, e: &[u8]) {
        self.keyed_bytes(b"err", e);
    }
    fn null(&mut self) {
        let slot = self.next();
        unsafe { wrenSetSlotNull(self.vm, slot) }
    }
    fn double(&mut self, d: f64) {
        let slot = self.next();
        unsafe { wrenSetSlotDouble(self.vm, slot + 2, d) };
        self.wrap(slot, b"double");
    }
    fn boolean(&mut self, b: bool) {
        let slot = self.next();
        unsafe { wrenSetSlotBool(self.vm, slot, b) }
    }
    fn big_number(&mut self, digits: &[u8]) {
        self.keyed_bytes(b"big_number", digits);
    }
    fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        let slot = self.next();
        let vm = self.vm;
        unsafe {
            wrenSetSlotNewMap(vm, slot + 2);
            set_bytes(vm, slot + 1, b"format");
            set_bytes(vm, slot + 3, format);
            wrenSetMapValue(vm, slot + 2, slot + 1, slot + 3);
            set_bytes(vm, slot + 1, b"string");
            set_bytes(vm, slot + 3, text);
            wrenSetMapValue(vm, slot + 2, slot + 1, slot + 3);
        }
        self.wrap(slot, b"verbatim_string");
    }
    fn begin(&mut self, kind: Aggregate, _len: usize) {
        let slot = self.next();
        unsafe {
            match kind {
                Aggregate::Array => wrenSetSlotNewList(self.vm, slot),
                // The wrapper `{"map": m}` / `{"set": m}` in `slot`, the map itself above it.
                Aggregate::Map | Aggregate::Set => {
                    let inner = self.next();
                    wrenSetSlotNewMap(self.vm, inner);
                }
            }
        }
    }
    fn item(&mut self, kind: Aggregate, _index: usize) {
        let (vm, sp) = (self.vm, self.sp);
        unsafe {
            match kind {
                Aggregate::Array => {
                    wrenInsertInList(vm, sp - 2, -1, sp - 1);
                    self.sp -= 1;
                }
                Aggregate::Map => {
                    wrenSetMapValue(vm, sp - 3, sp - 2, sp - 1);
                    self.sp -= 2;
                }
                Aggregate::Set => {
                    wrenSetSlotBool(vm, sp, true);
                    wrenSetMapValue(vm, sp - 2, sp - 1, sp);
                    self.sp -= 1;
                }
            }
        }
    }
    fn end(&mut self, kind: Aggregate) {
        let key: &[u8] = match kind {
            Aggregate::Array => return,
            Aggregate::Map => b"map",
            Aggregate::Set => b"set",
        };
        let (vm, sp) = (self.vm, self.sp);
        // The map is at sp - 1, its wrapper at sp - 2.
        unsafe {
            wrenSetSlotNewMap(vm, sp - 2);
            set_bytes(vm, sp, key);
            wrenSetMapValue(vm, sp - 2, sp, sp - 1);
        }
        self.sp -= 1;
    }
}
