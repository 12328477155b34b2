//! The `redis` table a Luau script sees (the same surface as the Lua engine's: `call`, `pcall`,
//! `error_reply`, `status_reply`, `sha1hex`, `log` and its levels, `setresp`, ...), Redis's `pcall`
//! (an error table comes back as its message), `collectgarbage`, and the missing-global error.
//!
//! Every function here is a C function of the VM. Luau is built with C++ exceptions, so a host
//! function raises with `lua_error`, which unwinds through its (`C-unwind`) Rust frame.

use std::ffi::c_int;

use mlua::ffi::{self, lua_State};

use super::{current, push_bytes, to_bytes, OUT_OF_MEMORY};
use crate::config::REDIS_VERSION;
use crate::script::cache::sha1_hex;
use crate::script::resp::{walk, Aggregate, ReplyBuilder};
use crate::util::fmt_g17;

type CFn = unsafe extern "C-unwind" fn(*mut lua_State) -> c_int;

/// Registers `redis` and replaces `pcall` and `collectgarbage` (on the globals, before the sandbox
/// locks them).
pub(super) unsafe fn register(l: *mut lua_State) {
    unsafe {
        ffi::lua_createtable(l, 0, 24);
        let funcs: [(&std::ffi::CStr, CFn); 13] = [
            (c"call", redis_call),
            (c"pcall", redis_pcall),
            (c"error_reply", error_reply),
            (c"status_reply", status_reply),
            (c"sha1hex", sha1hex),
            (c"log", log),
            (c"setresp", setresp),
            (c"set_repl", set_repl),
            (c"replicate_commands", replicate_commands),
            (c"breakpoint", breakpoint),
            (c"debug", noop),
            (c"acl_check_cmd", acl_check_cmd),
            (c"register_function", super::functions::register_function),
        ];
        for (name, f) in funcs {
            ffi::lua_pushcclosurek(l, f, name.as_ptr(), 0, None);
            ffi::lua_rawsetfield(l, -2, name.as_ptr());
        }
        for (name, v) in [
            (c"LOG_DEBUG", 0.0),
            (c"LOG_VERBOSE", 1.0),
            (c"LOG_NOTICE", 2.0),
            (c"LOG_WARNING", 3.0),
            (c"REPL_NONE", 0.0),
            (c"REPL_AOF", 1.0),
            (c"REPL_SLAVE", 2.0),
            (c"REPL_REPLICA", 2.0),
            (c"REPL_ALL", 3.0),
            (c"REDIS_VERSION_NUM", redis_version_num() as f64),
        ] {
            ffi::lua_pushnumber(l, v);
            ffi::lua_rawsetfield(l, -2, name.as_ptr());
        }
        push_bytes(l, REDIS_VERSION.as_bytes());
        ffi::lua_rawsetfield(l, -2, c"REDIS_VERSION".as_ptr());
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());

        ffi::lua_pushcclosurek(l, pcall, c"pcall".as_ptr(), 0, None);
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"pcall".as_ptr());
        ffi::lua_pushcclosurek(l, collectgarbage, c"collectgarbage".as_ptr(), 0, None);
        ffi::lua_rawsetfield(l, ffi::LUA_GLOBALSINDEX, c"collectgarbage".as_ptr());
    }
}

/// `0x070000 | patch` style number of the Redis version we report (`7.0.15` → 0x07000f).
fn redis_version_num() -> u32 {
    let mut parts = REDIS_VERSION
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b, c) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    (a << 16) | (b << 8) | c
}

/// Pushes Redis's error table `{err = "CODE message"}` for `text`, which is either `-CODE message`,
/// `CODE message` or a bare message (given the `ERR` code), as `luaPushErrorBuff` does. With
/// `locate`, the table also gets the `line` of the nearest Lua function from that stack level up
/// (0: the running function, 1: the caller of the running C function).
pub(super) unsafe fn push_error_table(l: *mut lua_State, text: &[u8], locate: Option<c_int>) {
    let t = text.strip_prefix(b"-").unwrap_or(text);
    let formatted: Vec<u8> = if text.starts_with(b"-") {
        match memchr::memchr(b' ', t) {
            Some(i) => [&t[..i], b" ", trim_crlf(&t[i + 1..])].concat(),
            None => [b"ERR ", trim_crlf(t)].concat(),
        }
    } else {
        trim_crlf(text).to_vec()
    };
    unsafe {
        ffi::lua_createtable(l, 0, 2);
        push_bytes(l, &formatted);
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

fn trim_crlf(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .rposition(|&c| c != b'\r' && c != b'\n')
        .map_or(0, |i| i + 1);
    let start = b
        .iter()
        .position(|&c| c != b'\r' && c != b'\n')
        .unwrap_or(end);
    &b[start..end]
}

/// Raises Redis's error table `{err = "ERR <msg>"}`, located at the calling script line.
pub(super) unsafe fn raise(l: *mut lua_State, msg: &str) -> ! {
    unsafe {
        push_error_table(l, format!("ERR {msg}").as_bytes(), Some(1));
        ffi::lua_error(l)
    }
}

/// Raises a plain error string prefixed with the calling script's position, as `luaL_error`.
unsafe fn raise_str(l: *mut lua_State, msg: &str) -> ! {
    unsafe {
        ffi::luaL_where(l, 1);
        let mut text = to_bytes(l, -1).unwrap_or_default().to_vec();
        text.extend_from_slice(msg.as_bytes());
        push_bytes(l, &text);
        drop(text);
        ffi::lua_error(l)
    }
}

/// The string (or number, as Luau writes it) at `idx`.
unsafe fn arg_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
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
    unsafe {
        let name = to_bytes(l, 2).map(|n| String::from_utf8_lossy(n).into_owned());
        raise_str(
            l,
            &format!(
                "Script attempted to access nonexistent global variable '{}'",
                name.unwrap_or_default()
            ),
        )
    }
}

// ---- redis.* ----

/// Redis's `luaRedisGenericCommand`: arguments must be strings or numbers (numbers as `%.17g`).
unsafe fn call_generic(l: *mut lua_State, raise_errors: bool) -> c_int {
    unsafe {
        // As Redis, redis.pcall returns these errors as an error table rather than raising them.
        let refuse = |msg: &str| {
            if raise_errors {
                raise(l, msg)
            }
            push_error_table(l, format!("ERR {msg}").as_bytes(), None);
            1
        };
        let argc = ffi::lua_gettop(l);
        if argc == 0 {
            return refuse("Please specify at least one argument for this redis lib call");
        }
        for i in 1..=argc {
            match ffi::lua_type(l, i) {
                // Numbers travel as `%.17g` text, as in Redis: the slot is replaced by that string,
                // so every argument can be read in place below.
                ffi::LUA_TNUMBER => {
                    push_bytes(l, fmt_g17(ffi::lua_tonumber(l, i)).as_bytes());
                    ffi::lua_replace(l, i);
                }
                ffi::LUA_TSTRING => {}
                _ => return refuse("Lua redis lib command arguments must be strings or integers"),
            }
        }
        let Some(run) = current() else {
            raise(l, "redis.call is only available while a script runs");
        };
        let resp = run.resp;
        // The strings stay on the stack (so their bytes stay valid) until the call has copied them.
        let reply = run.call((1..=argc).map(|i| to_bytes(l, i).unwrap_or_default()));
        ffi::lua_settop(l, 0);
        if raise_errors && reply.first() == Some(&b'-') {
            let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
            push_error_table(l, &reply[..end], Some(1));
            ffi::lua_error(l);
        }
        walk(reply, &mut Builder { l, resp });
        1
    }
}

unsafe extern "C-unwind" fn redis_call(l: *mut lua_State) -> c_int {
    unsafe { call_generic(l, true) }
}

unsafe extern "C-unwind" fn redis_pcall(l: *mut lua_State) -> c_int {
    unsafe { call_generic(l, false) }
}

unsafe extern "C-unwind" fn error_reply(l: *mut lua_State) -> c_int {
    unsafe {
        let Some(e) = (ffi::lua_gettop(l) == 1).then(|| to_bytes(l, 1)).flatten() else {
            push_error_table(l, b"ERR wrong number or type of arguments", None);
            return 1;
        };
        let text = if e.starts_with(b"-") {
            e.to_vec()
        } else {
            [b"-", e].concat()
        };
        push_error_table(l, &text, None);
        1
    }
}

unsafe extern "C-unwind" fn status_reply(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_gettop(l) != 1 || ffi::lua_type(l, 1) != ffi::LUA_TSTRING {
            push_error_table(l, b"ERR wrong number or type of arguments", None);
            return 1;
        }
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_pushvalue(l, 1);
        ffi::lua_rawsetfield(l, -2, c"ok".as_ptr());
        1
    }
}

unsafe extern "C-unwind" fn sha1hex(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_gettop(l) != 1 {
            raise(l, "wrong number of arguments");
        }
        let digest = sha1_hex(arg_bytes(l, 1).unwrap_or_default());
        push_bytes(l, &digest);
        1
    }
}

unsafe extern "C-unwind" fn log(l: *mut lua_State) -> c_int {
    unsafe {
        let argc = ffi::lua_gettop(l);
        if argc < 2 {
            raise(l, "redis.log() requires two arguments or more.");
        }
        if ffi::lua_type(l, 1) != ffi::LUA_TNUMBER {
            raise(l, "First argument must be a number (log level).");
        }
        let level = match ffi::lua_tonumber(l, 1) as i64 {
            0 => crate::log::Level::Debug,
            1 => crate::log::Level::Verbose,
            2 => crate::log::Level::Notice,
            3 => crate::log::Level::Warning,
            _ => raise(l, "Invalid debug level."),
        };
        let mut msg = Vec::new();
        for i in 2..=argc {
            if i > 2 {
                msg.push(b' ');
            }
            if let Some(s) = arg_bytes(l, i) {
                msg.extend_from_slice(s);
            }
        }
        crate::log::log(level, &String::from_utf8_lossy(&msg));
        0
    }
}

unsafe extern "C-unwind" fn setresp(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_gettop(l) != 1 {
            raise(l, "redis.setresp() requires one argument.");
        }
        let v = ffi::lua_tonumber(l, 1) as i64;
        if v != 2 && v != 3 {
            raise(l, "RESP version must be 2 or 3.");
        }
        if let Some(run) = current() {
            run.resp = v as u8;
        }
        0
    }
}

unsafe extern "C-unwind" fn set_repl(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_gettop(l) != 1 {
            raise(l, "redis.set_repl() requires one argument.");
        }
        let v = ffi::lua_tonumber(l, 1) as i64;
        if !(0..=3).contains(&v) {
            raise(
                l,
                "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
            );
        }
        0
    }
}

unsafe extern "C-unwind" fn replicate_commands(l: *mut lua_State) -> c_int {
    unsafe { ffi::lua_pushboolean(l, 1) };
    1
}

unsafe extern "C-unwind" fn breakpoint(l: *mut lua_State) -> c_int {
    unsafe { ffi::lua_pushboolean(l, 0) };
    1
}

unsafe extern "C-unwind" fn noop(_l: *mut lua_State) -> c_int {
    0
}

unsafe extern "C-unwind" fn acl_check_cmd(l: *mut lua_State) -> c_int {
    unsafe {
        if ffi::lua_gettop(l) == 0 {
            raise(
                l,
                "Please specify at least one argument for this redis lib call",
            );
        }
        let name = arg_bytes(l, 1).unwrap_or_default();
        let known = current().is_some_and(|run| run.ctx.srv.table.find(name).is_some());
        if !known {
            raise(l, "Invalid command passed to redis.acl_check_cmd()");
        }
        // There are no ACL users besides the all-allowed default one.
        ffi::lua_pushboolean(l, 1);
        1
    }
}

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

// ---- Building Luau values from command replies (Redis's `redisProtocolToLuaType`). ----

struct Builder {
    l: *mut lua_State,
    resp: u8,
}

impl ReplyBuilder for Builder {
    fn int(&mut self, n: i64) {
        unsafe { ffi::lua_pushnumber(self.l, n as f64) }
    }
    fn bulk(&mut self, b: &[u8]) {
        unsafe { push_bytes(self.l, b) }
    }
    fn status(&mut self, s: &[u8]) {
        unsafe {
            ffi::lua_createtable(self.l, 0, 1);
            push_bytes(self.l, s);
            ffi::lua_rawsetfield(self.l, -2, c"ok".as_ptr());
        }
    }
    fn error(&mut self, e: &[u8]) {
        unsafe { push_error_table(self.l, &[b"-", e].concat(), None) }
    }
    fn null(&mut self) {
        unsafe {
            if self.resp == 2 {
                ffi::lua_pushboolean(self.l, 0);
            } else {
                ffi::lua_pushnil(self.l);
            }
        }
    }
    fn double(&mut self, d: f64) {
        unsafe {
            ffi::lua_createtable(self.l, 0, 1);
            ffi::lua_pushnumber(self.l, d);
            ffi::lua_rawsetfield(self.l, -2, c"double".as_ptr());
        }
    }
    fn boolean(&mut self, b: bool) {
        unsafe { ffi::lua_pushboolean(self.l, b as c_int) }
    }
    fn big_number(&mut self, digits: &[u8]) {
        unsafe {
            ffi::lua_createtable(self.l, 0, 1);
            push_bytes(self.l, digits);
            ffi::lua_rawsetfield(self.l, -2, c"big_number".as_ptr());
        }
    }
    fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        unsafe {
            ffi::lua_createtable(self.l, 0, 1);
            ffi::lua_createtable(self.l, 0, 2);
            push_bytes(self.l, format);
            ffi::lua_rawsetfield(self.l, -2, c"format".as_ptr());
            push_bytes(self.l, text);
            ffi::lua_rawsetfield(self.l, -2, c"string".as_ptr());
            ffi::lua_rawsetfield(self.l, -2, c"verbatim_string".as_ptr());
        }
    }
    fn begin(&mut self, kind: Aggregate, len: usize) {
        unsafe {
            ffi::lua_rawcheckstack(self.l, 4);
            match kind {
                Aggregate::Array => ffi::lua_createtable(self.l, len as c_int, 0),
                Aggregate::Map | Aggregate::Set => {
                    ffi::lua_createtable(self.l, 0, 1);
                    ffi::lua_createtable(self.l, 0, len as c_int);
                }
            }
        }
    }
    fn item(&mut self, kind: Aggregate, index: usize) {
        unsafe {
            match kind {
                Aggregate::Array => ffi::lua_rawseti_(self.l, -2, index as c_int + 1),
                Aggregate::Map => ffi::lua_rawset(self.l, -3),
                Aggregate::Set => {
                    ffi::lua_pushboolean(self.l, 1);
                    ffi::lua_rawset(self.l, -3);
                }
            }
        }
    }
    fn end(&mut self, kind: Aggregate) {
        unsafe {
            match kind {
                Aggregate::Array => {}
                Aggregate::Map => ffi::lua_rawsetfield(self.l, -2, c"map".as_ptr()),
                Aggregate::Set => ffi::lua_rawsetfield(self.l, -2, c"set".as_ptr()),
            }
        }
    }
}
