//! The `redis` table and the small libraries Redis gives Lua scripts that are not codecs: `bit`
//! (LuaBitOp), Redis's `math.random`, and the binary-chunk guard on `load`/`loadstring`.
//!
//! Every function here is a host function (see `ffi.rs` for the rules): it returns its result
//! count, or -1 with an error value on top of the stack for the C trampoline to raise.

use std::ffi::c_int;

use super::current;
use super::ffi::*;
use crate::config::REDIS_VERSION;
use crate::script::cache::sha1_hex;
use crate::script::resp::{walk, Aggregate, ReplyBuilder};
use crate::util::fmt_g17;

/// Registers `redis`, `bit` and Redis's `math.random`/`math.randomseed` as globals.
pub(super) unsafe fn register(l: *mut lua_State) {
    lua_newtable(l);
    let funcs: [(&str, HostFn); 12] = [
        ("call", redis_call),
        ("pcall", redis_pcall),
        ("error_reply", error_reply),
        ("status_reply", status_reply),
        ("sha1hex", sha1hex),
        ("log", log),
        ("setresp", setresp),
        ("set_repl", set_repl),
        ("replicate_commands", replicate_commands),
        ("breakpoint", breakpoint),
        ("debug", noop),
        ("acl_check_cmd", acl_check_cmd),
    ];
    for (name, f) in funcs {
        goblin_lua51_push_host_fn(l, f);
        raw_set_field(l, -2, name);
    }
    for (name, v) in [
        ("LOG_DEBUG", 0.0),
        ("LOG_VERBOSE", 1.0),
        ("LOG_NOTICE", 2.0),
        ("LOG_WARNING", 3.0),
        ("REPL_NONE", 0.0),
        ("REPL_AOF", 1.0),
        ("REPL_SLAVE", 2.0),
        ("REPL_REPLICA", 2.0),
        ("REPL_ALL", 3.0),
        ("REDIS_VERSION_NUM", redis_version_num() as f64),
    ] {
        lua_pushnumber(l, v);
        raw_set_field(l, -2, name);
    }
    push_bytes(l, REDIS_VERSION.as_bytes());
    raw_set_field(l, -2, "REDIS_VERSION");
    raw_set_field(l, LUA_GLOBALSINDEX, "redis");

    lua_newtable(l);
    let bits: [(&str, HostFn); 12] = [
        ("tobit", bit_tobit),
        ("tohex", bit_tohex),
        ("bnot", bit_bnot),
        ("band", bit_band),
        ("bor", bit_bor),
        ("bxor", bit_bxor),
        ("lshift", bit_lshift),
        ("rshift", bit_rshift),
        ("arshift", bit_arshift),
        ("rol", bit_rol),
        ("ror", bit_ror),
        ("bswap", bit_bswap),
    ];
    for (name, f) in bits {
        goblin_lua51_push_host_fn(l, f);
        raw_set_field(l, -2, name);
    }
    raw_set_field(l, LUA_GLOBALSINDEX, "bit");

    raw_get_field(l, LUA_GLOBALSINDEX, "math");
    goblin_lua51_push_host_fn(l, math_random);
    raw_set_field(l, -2, "random");
    goblin_lua51_push_host_fn(l, math_randomseed);
    raw_set_field(l, -2, "randomseed");
    lua_pop(l, 1);
}

/// `0x070000 | patch` style number of the Redis version we report (`7.0.15` → 0x07000f).
pub(super) fn redis_version_num() -> u32 {
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

/// Wraps `load` and `loadstring` so a binary (precompiled) chunk is refused: Lua 5.1's bytecode
/// loader trusts its input, which is how sandbox escapes were built.
pub(super) unsafe fn guard_loaders(l: *mut lua_State) {
    goblin_lua51_push_host_fn(l, loadstring_text_only);
    raw_get_field(l, LUA_GLOBALSINDEX, "loadstring");
    // The original goes in the registry, reached by the guard.
    lua_pushvalue(l, -1);
    raw_set_field(l, LUA_REGISTRYINDEX, "goblin.loadstring");
    lua_pop(l, 1);
    raw_set_field(l, LUA_GLOBALSINDEX, "loadstring");
    goblin_lua51_push_host_fn(l, load_text_only);
    raw_set_field(l, LUA_GLOBALSINDEX, "load");
}

/// Pushes Redis's error table `{err = "CODE message"}` for `text`, which is either `-CODE message`,
/// `CODE message` or a bare message (given the `ERR` code), as `luaPushErrorBuff` does.
pub(crate) unsafe fn push_error_table(l: *mut lua_State, text: &[u8]) {
    let t = text.strip_prefix(b"-").unwrap_or(text);
    let formatted: Vec<u8> = if text.starts_with(b"-") {
        match memchr::memchr(b' ', t) {
            Some(i) => [&t[..i], b" ", trim_crlf(&t[i + 1..])].concat(),
            None => [b"ERR ", trim_crlf(t)].concat(),
        }
    } else {
        trim_crlf(text).to_vec()
    };
    lua_createtable(l, 0, 1);
    push_bytes(l, &formatted);
    raw_set_field(l, -2, "err");
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

/// Raises a Redis-style error: `{err = "ERR <msg>"}`.
unsafe fn raise(l: *mut lua_State, msg: &str) -> c_int {
    push_error_table(l, format!("ERR {msg}").as_bytes());
    -1
}

/// Raises a plain Lua error string as `luaL_error` does: prefixed with the calling script's
/// position (`user_script:1: `).
unsafe fn raise_str(l: *mut lua_State, msg: &str) -> c_int {
    goblin_lua51_where(l, 1);
    let mut text = to_bytes(l, -1).unwrap_or_default().to_vec();
    lua_pop(l, 1);
    text.extend_from_slice(msg.as_bytes());
    push_bytes(l, &text);
    -1
}

/// `_G`'s `__index`: reading a global that does not exist is an error (Redis's
/// `luaProtectedTableError`).
pub(super) unsafe extern "C" fn missing_global(l: *mut lua_State) -> c_int {
    let name = to_bytes(l, 2).map(|n| String::from_utf8_lossy(n).into_owned());
    raise_str(
        l,
        &format!(
            "Script attempted to access nonexistent global variable '{}'",
            name.unwrap_or_default()
        ),
    )
}

// ---- redis.* ----

/// Runs `f` with the current script's run context (none outside a call).
unsafe fn with_run<R>(f: impl FnOnce(&mut crate::script::Run) -> R) -> Option<R> {
    current().map(f)
}

/// Redis's `luaRedisGenericCommand`: arguments must be strings or numbers (numbers as `%.17g`).
unsafe fn call_generic(l: *mut lua_State, raise_errors: bool) -> c_int {
    // As Redis, redis.pcall returns these errors as an error table rather than raising them.
    let refuse = |msg: &str| {
        if raise_errors {
            raise(l, msg)
        } else {
            push_error_table(l, format!("ERR {msg}").as_bytes());
            1
        }
    };
    let argc = lua_gettop(l);
    if argc == 0 {
        return refuse("Please specify at least one argument for this redis lib call");
    }
    for i in 1..=argc {
        match lua_type(l, i) {
            // Numbers travel as `%.17g` text (Lua's own tostring would give 14 digits): the slot
            // is replaced by that string, so every argument can be read in place below.
            LUA_TNUMBER => {
                push_bytes(l, fmt_g17(lua_tonumber(l, i)).as_bytes());
                lua_replace(l, i);
            }
            LUA_TSTRING => {}
            _ => return refuse("Lua redis lib command arguments must be strings or integers"),
        }
    }
    let Some(run) = current() else {
        return raise(l, "redis.call is only available while a script runs");
    };
    let resp = run.resp;
    // The strings stay on the stack (so their bytes stay valid) until the call has copied them.
    let reply = run.call((1..=argc).map(|i| to_bytes(l, i).unwrap_or_default()));
    lua_settop(l, 0);
    if raise_errors && reply.first() == Some(&b'-') {
        let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        push_error_table(l, &reply[..end]);
        return -1;
    }
    let mut b = LuaBuilder { l, resp };
    walk(reply, &mut b);
    1
}

unsafe extern "C" fn redis_call(l: *mut lua_State) -> c_int {
    call_generic(l, true)
}

unsafe extern "C" fn redis_pcall(l: *mut lua_State) -> c_int {
    call_generic(l, false)
}

unsafe extern "C" fn error_reply(l: *mut lua_State) -> c_int {
    if lua_gettop(l) != 1 || lua_type(l, -1) != LUA_TSTRING {
        push_error_table(l, b"ERR wrong number or type of arguments");
        return 1;
    }
    let e = to_bytes(l, -1).unwrap_or_default().to_vec();
    let text = if e.starts_with(b"-") {
        e
    } else {
        [b"-", &e[..]].concat()
    };
    push_error_table(l, &text);
    1
}

unsafe extern "C" fn status_reply(l: *mut lua_State) -> c_int {
    if lua_gettop(l) != 1 || lua_type(l, -1) != LUA_TSTRING {
        push_error_table(l, b"ERR wrong number or type of arguments");
        return 1;
    }
    lua_createtable(l, 0, 1);
    lua_pushvalue(l, -2);
    raw_set_field(l, -2, "ok");
    1
}

unsafe extern "C" fn sha1hex(l: *mut lua_State) -> c_int {
    if lua_gettop(l) != 1 {
        return raise(l, "wrong number of arguments");
    }
    let s = to_bytes(l, 1).unwrap_or_default();
    push_bytes(l, &sha1_hex(s));
    1
}

pub(super) unsafe extern "C" fn log(l: *mut lua_State) -> c_int {
    let argc = lua_gettop(l);
    if argc < 2 {
        return raise(l, "redis.log() requires two arguments or more.");
    }
    if lua_type(l, 1) != LUA_TNUMBER {
        return raise(l, "First argument must be a number (log level).");
    }
    let level = lua_tonumber(l, 1) as i64;
    let level = match level {
        0 => crate::log::Level::Debug,
        1 => crate::log::Level::Verbose,
        2 => crate::log::Level::Notice,
        3 => crate::log::Level::Warning,
        _ => return raise(l, "Invalid debug level."),
    };
    let mut msg = Vec::new();
    for i in 2..=argc {
        if i > 2 {
            msg.push(b' ');
        }
        if let Some(s) = to_bytes(l, i) {
            msg.extend_from_slice(s);
        }
    }
    crate::log::log(level, &String::from_utf8_lossy(&msg));
    0
}

unsafe extern "C" fn setresp(l: *mut lua_State) -> c_int {
    if lua_gettop(l) != 1 {
        return raise(l, "redis.setresp() requires one argument.");
    }
    let v = lua_tonumber(l, 1) as i64;
    if v != 2 && v != 3 {
        return raise(l, "RESP version must be 2 or 3.");
    }
    with_run(|run| run.resp = v as u8);
    0
}

unsafe extern "C" fn set_repl(l: *mut lua_State) -> c_int {
    if lua_gettop(l) != 1 {
        return raise(l, "redis.set_repl() requires one argument.");
    }
    let v = lua_tonumber(l, 1) as i64;
    if !(0..=3).contains(&v) {
        return raise(
            l,
            "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
        );
    }
    0
}

unsafe extern "C" fn replicate_commands(l: *mut lua_State) -> c_int {
    lua_pushboolean(l, 1);
    1
}

unsafe extern "C" fn breakpoint(l: *mut lua_State) -> c_int {
    lua_pushboolean(l, 0);
    1
}

unsafe extern "C" fn noop(_l: *mut lua_State) -> c_int {
    0
}

unsafe extern "C" fn acl_check_cmd(l: *mut lua_State) -> c_int {
    let argc = lua_gettop(l);
    if argc == 0 {
        return raise(
            l,
            "Please specify at least one argument for this redis lib call",
        );
    }
    let name = to_bytes(l, 1).unwrap_or_default().to_vec();
    let known = with_run(|run| run.ctx.srv.table.find(&name).is_some()).unwrap_or(false);
    if !known {
        return raise(l, "Invalid command passed to redis.acl_check_cmd()");
    }
    // There are no ACL users besides the all-allowed default one.
    lua_pushboolean(l, 1);
    1
}

// ---- Building Lua values from command replies (Redis's `redisProtocolToLuaType`). ----

struct LuaBuilder {
    l: *mut lua_State,
    resp: u8,
}

impl ReplyBuilder for LuaBuilder {
    fn int(&mut self, n: i64) {
        unsafe { lua_pushnumber(self.l, n as f64) }
    }
    fn bulk(&mut self, b: &[u8]) {
        unsafe { push_bytes(self.l, b) }
    }
    fn status(&mut self, s: &[u8]) {
        unsafe {
            lua_createtable(self.l, 0, 1);
            push_bytes(self.l, s);
            raw_set_field(self.l, -2, "ok");
        }
    }
    fn error(&mut self, e: &[u8]) {
        unsafe { push_error_table(self.l, &[b"-", e].concat()) }
    }
    fn null(&mut self) {
        unsafe {
            if self.resp == 2 {
                lua_pushboolean(self.l, 0);
            } else {
                lua_pushnil(self.l);
            }
        }
    }
    fn double(&mut self, d: f64) {
        unsafe {
            lua_createtable(self.l, 0, 1);
            lua_pushnumber(self.l, d);
            raw_set_field(self.l, -2, "double");
        }
    }
    fn boolean(&mut self, b: bool) {
        unsafe { lua_pushboolean(self.l, b as c_int) }
    }
    fn big_number(&mut self, digits: &[u8]) {
        unsafe {
            lua_createtable(self.l, 0, 1);
            push_bytes(self.l, digits);
            raw_set_field(self.l, -2, "big_number");
        }
    }
    fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        unsafe {
            lua_createtable(self.l, 0, 1);
            lua_createtable(self.l, 0, 2);
            push_bytes(self.l, format);
            raw_set_field(self.l, -2, "format");
            push_bytes(self.l, text);
            raw_set_field(self.l, -2, "string");
            raw_set_field(self.l, -2, "verbatim_string");
        }
    }
    fn begin(&mut self, kind: Aggregate, len: usize) {
        unsafe {
            lua_checkstack(self.l, 4);
            match kind {
                Aggregate::Array => lua_createtable(self.l, len as c_int, 0),
                Aggregate::Map | Aggregate::Set => {
                    lua_createtable(self.l, 0, 1);
                    lua_createtable(self.l, 0, len as c_int);
                }
            }
        }
    }
    fn item(&mut self, kind: Aggregate, index: usize) {
        unsafe {
            match kind {
                Aggregate::Array => lua_rawseti(self.l, -2, index as c_int + 1),
                Aggregate::Map => lua_rawset(self.l, -3),
                Aggregate::Set => {
                    lua_pushboolean(self.l, 1);
                    lua_rawset(self.l, -3);
                }
            }
        }
    }
    fn end(&mut self, kind: Aggregate) {
        unsafe {
            match kind {
                Aggregate::Array => {}
                Aggregate::Map => raw_set_field(self.l, -2, "map"),
                Aggregate::Set => raw_set_field(self.l, -2, "set"),
            }
        }
    }
}

// ---- load / loadstring ----

unsafe extern "C" fn loadstring_text_only(l: *mut lua_State) -> c_int {
    if let Some(s) = to_bytes(l, 1) {
        if s.first() == Some(&0x1b) {
            lua_pushnil(l);
            push_bytes(l, b"attempt to load a binary chunk");
            return 2;
        }
    }
    if lua_type(l, 1) != LUA_TSTRING && lua_type(l, 1) != LUA_TNUMBER {
        let got = type_name(lua_type(l, 1));
        return raise_str(
            l,
            &format!("bad argument #1 to 'loadstring' (string expected, got {got})"),
        );
    }
    // The original only returns (nil, message) for a bad chunk; a protected call keeps any other
    // error inside Lua.
    raw_get_field(l, LUA_REGISTRYINDEX, "goblin.loadstring");
    lua_insert(l, 1);
    let n = lua_gettop(l) - 1;
    if lua_pcall(l, n, 2, 0) != 0 {
        return -1;
    }
    2
}

unsafe extern "C" fn load_text_only(l: *mut lua_State) -> c_int {
    // Redis's `load` is Lua 5.1's (a reader function); scripts use it with strings rarely. Accept a
    // string (as loadstring) and refuse reader functions, whose chunks could be binary.
    if lua_type(l, 1) == LUA_TSTRING {
        return loadstring_text_only(l);
    }
    lua_pushnil(l);
    push_bytes(l, b"load with a reader function is not allowed in scripts");
    2
}

// ---- math.random (Redis's redisLrand48 PRNG, so sequences match Redis's) ----

struct Rand48;

thread_local! {
    static RAND: std::cell::Cell<u64> = const { std::cell::Cell::new(0x1234_ABCD_330E) };
}

impl Rand48 {
    fn next() -> i32 {
        RAND.with(|r| {
            let x = (r.get().wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & ((1 << 48) - 1);
            r.set(x);
            (x >> 17) as i32
        })
    }
    fn seed(s: i32) {
        RAND.with(|r| r.set((((s as u32) as u64) << 16) | 0x330E));
    }
}

const LRAND48_MAX: f64 = i32::MAX as f64;

unsafe extern "C" fn math_random(l: *mut lua_State) -> c_int {
    let r = (Rand48::next() as i64 % i32::MAX as i64) as f64 / LRAND48_MAX;
    match lua_gettop(l) {
        0 => lua_pushnumber(l, r),
        1 => {
            let u = lua_tonumber(l, 1) as c_int;
            if u < 1 {
                return raise_str(l, "bad argument #1 to 'random' (interval is empty)");
            }
            lua_pushnumber(l, (r * u as f64).floor() + 1.0);
        }
        2 => {
            let lo = lua_tonumber(l, 1) as c_int;
            let up = lua_tonumber(l, 2) as c_int;
            if lo > up {
                return raise_str(l, "bad argument #2 to 'random' (interval is empty)");
            }
            lua_pushnumber(l, (r * (up as f64 - lo as f64 + 1.0)).floor() + lo as f64);
        }
        _ => return raise_str(l, "wrong number of arguments"),
    }
    1
}

unsafe extern "C" fn math_randomseed(l: *mut lua_State) -> c_int {
    Rand48::seed(lua_tonumber(l, 1) as i32);
    0
}

// ---- bit (LuaBitOp 1.0.2 semantics: 32-bit two's complement on Lua numbers) ----

/// LuaBitOp's normalisation of a number to int32 (wrapping modulo 2^32).
fn tobit(n: f64) -> i32 {
    let b = n + 6755399441055744.0; // 2^52 + 2^51: the low 32 bits land in the mantissa
    (b.to_bits() as u32) as i32
}

unsafe fn arg_bit(l: *mut lua_State, i: c_int, name: &str) -> Result<i32, c_int> {
    if lua_type(l, i) != LUA_TNUMBER {
        let got = if lua_type(l, i) == LUA_TNONE {
            "no value".to_string()
        } else {
            type_name(lua_type(l, i)).to_string()
        };
        return Err(raise_str(
            l,
            &format!("bad argument #{i} to '{name}' (number expected, got {got})"),
        ));
    }
    Ok(tobit(lua_tonumber(l, i)))
}

fn type_name(t: c_int) -> &'static str {
    match t {
        LUA_TNIL => "nil",
        LUA_TBOOLEAN => "boolean",
        LUA_TLIGHTUSERDATA | LUA_TUSERDATA => "userdata",
        LUA_TNUMBER => "number",
        LUA_TSTRING => "string",
        LUA_TTABLE => "table",
        LUA_TFUNCTION => "function",
        LUA_TTHREAD => "thread",
        _ => "no value",
    }
}

macro_rules! bit_fn {
    ($name:ident, $lua:literal, |$l:ident, $x:ident| $body:expr) => {
        unsafe extern "C" fn $name($l: *mut lua_State) -> c_int {
            let $x = match arg_bit($l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            lua_pushnumber($l, ($body) as f64);
            1
        }
    };
}

macro_rules! bit_fold {
    ($name:ident, $lua:literal, |$a:ident, $b:ident| $op:expr) => {
        unsafe extern "C" fn $name(l: *mut lua_State) -> c_int {
            let mut acc = match arg_bit(l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            for i in 2..=lua_gettop(l) {
                match arg_bit(l, i, $lua) {
                    Ok(v) => {
                        let ($a, $b) = (acc, v);
                        acc = $op;
                    }
                    Err(e) => return e,
                }
            }
            lua_pushnumber(l, acc as f64);
            1
        }
    };
}

macro_rules! bit_shift {
    ($name:ident, $lua:literal, |$x:ident, $n:ident| $body:expr) => {
        unsafe extern "C" fn $name(l: *mut lua_State) -> c_int {
            let $x = match arg_bit(l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let $n = match arg_bit(l, 2, $lua) {
                Ok(v) => (v as u32) & 31,
                Err(e) => return e,
            };
            lua_pushnumber(l, ($body) as f64);
            1
        }
    };
}

bit_fn!(bit_tobit, "tobit", |l, x| x);
bit_fn!(bit_bnot, "bnot", |l, x| !x);
bit_fn!(bit_bswap, "bswap", |l, x| x.swap_bytes());
bit_fold!(bit_band, "band", |a, b| a & b);
bit_fold!(bit_bor, "bor", |a, b| a | b);
bit_fold!(bit_bxor, "bxor", |a, b| a ^ b);
bit_shift!(bit_lshift, "lshift", |x, n| ((x as u32) << n) as i32);
bit_shift!(bit_rshift, "rshift", |x, n| ((x as u32) >> n) as i32);
bit_shift!(bit_arshift, "arshift", |x, n| x >> n);
bit_shift!(bit_rol, "rol", |x, n| (x as u32).rotate_left(n) as i32);
bit_shift!(bit_ror, "ror", |x, n| (x as u32).rotate_right(n) as i32);

unsafe extern "C" fn bit_tohex(l: *mut lua_State) -> c_int {
    let x = match arg_bit(l, 1, "tohex") {
        Ok(v) => v as u32,
        Err(e) => return e,
    };
    let mut n: i32 = if lua_type(l, 2) <= LUA_TNIL {
        8
    } else {
        match arg_bit(l, 2, "tohex") {
            Ok(v) => v,
            Err(e) => return e,
        }
    };
    let upper = n < 0;
    if upper {
        n = -n;
    }
    let n = n.min(8) as usize;
    let digits: &[u8] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = vec![0u8; n];
    let mut v = x;
    for i in (0..n).rev() {
        out[i] = digits[(v & 15) as usize];
        v >>= 4;
    }
    push_bytes(l, &out);
    1
}
