//! What the Lua 5.1 engine (`script::lua`) and the Luau engine (`script::luau`) share: their C
//! APIs have the same shape (a value stack, tables read and written raw, registry references), so
//! the Redis rules written against that shape are written once, here, generic over `CApi`:
//! - a script's result on top of the stack into the reply (`reply`: Redis's
//!   `luaReplyToRedisReply`, with the `{err}`, `{ok}`, `{double}`, `{map}`, ... tables);
//! - a command's reply into script values (`Builder`: Redis's `redisProtocolToLuaType`);
//! - the `redis` table's functions (`call`, `error_reply`, `status_reply`, `sha1hex`, `log`,
//!   `setresp`, `set_repl`, `acl_check_cmd`), which each engine wraps in a C function of its ABI
//!   (`redis_functions!`), and `redis.register_function` of function libraries;
//! - argument tables (`push_array`), the text of Redis's error tables (`error_table_text`), the
//!   `redis` table's constants (`set_constants`), `luaL_error`-style errors (`raise_str`) and the
//!   missing-global error (`missing_global`).
//!
//! Why a trait rather than one engine calling the other's code: the two VMs are separate C
//! libraries with their own symbols (`gl51_lua_*` for Lua 5.1, `mlua`'s `lua_*` for Luau) and
//! type tags (Luau's numbering differs and adds integers and buffers), so each engine implements
//! `CApi` over its own binding, and the generic code is compiled once per engine: no dynamic
//! dispatch on the per-call path. What stays apart in each engine is what really differs: how an
//! error is raised (Lua 5.1's host functions return -1 to a C trampoline that raises, since a
//! `longjmp` must not cross Rust frames; Luau's raise through `C-unwind`), the sandbox, the
//! budget hook, loading a chunk, and the error reply's wording.

use std::cell::RefCell;
use std::ffi::{c_int, CStr};
use std::thread::LocalKey;

use crate::config::REDIS_VERSION;
use crate::script::cache::sha1_hex;
use crate::script::function::parse_flag;
use crate::script::redis_api::{log_level, redis_version_num, trim_crlf, LOG_LEVELS, REPL_FLAGS};
use crate::script::resp::walk;
use crate::script::resp::{Aggregate, ReplyBuilder};
use crate::script::{Run, Sink};
use crate::util::fmt_g17;

/// The part of a Lua-shaped C API the shared rules use. Type tags are the engine's own.
///
/// # Safety
/// Every function takes a live state and valid stack indices, as the C API it wraps.
pub(crate) trait CApi {
    type State;
    const TNIL: c_int;
    const TNUMBER: c_int;
    const TSTRING: c_int;
    const TTABLE: c_int;
    const TBOOLEAN: c_int;
    const TFUNCTION: c_int;

    unsafe fn type_of(l: *mut Self::State, idx: c_int) -> c_int;
    /// The string at `idx` as the engine's own `to_bytes` reads it.
    unsafe fn to_bytes<'a>(l: *mut Self::State, idx: c_int) -> Option<&'a [u8]>;
    unsafe fn to_number(l: *mut Self::State, idx: c_int) -> f64;
    unsafe fn to_boolean(l: *mut Self::State, idx: c_int) -> bool;
    unsafe fn check_stack(l: *mut Self::State, n: c_int) -> bool;
    /// Makes room for `n` more slots while building a reply's values.
    unsafe fn reserve_stack(l: *mut Self::State, n: c_int);
    /// Pushes `t[name]` (raw) and returns its type.
    unsafe fn raw_get_field(l: *mut Self::State, idx: c_int, name: &CStr) -> c_int;
    /// `t[name] = <top>` (raw), popping the value.
    unsafe fn raw_set_field(l: *mut Self::State, idx: c_int, name: &CStr);
    /// Pushes `t[n]` (raw) and returns its type.
    unsafe fn raw_get_index(l: *mut Self::State, idx: c_int, n: c_int) -> c_int;
    unsafe fn raw_set_index(l: *mut Self::State, idx: c_int, n: c_int);
    unsafe fn raw_set(l: *mut Self::State, idx: c_int);
    unsafe fn next(l: *mut Self::State, idx: c_int) -> c_int;
    unsafe fn pop(l: *mut Self::State, n: c_int);
    unsafe fn push_nil(l: *mut Self::State);
    unsafe fn push_value(l: *mut Self::State, idx: c_int);
    unsafe fn push_bytes(l: *mut Self::State, b: &[u8]);
    unsafe fn push_number(l: *mut Self::State, n: f64);
    unsafe fn push_boolean(l: *mut Self::State, b: bool);
    unsafe fn create_table(l: *mut Self::State, narr: c_int, nrec: c_int);
    /// A registry reference to the value at `idx` (which stays on the stack).
    unsafe fn make_ref(l: *mut Self::State, idx: c_int) -> c_int;
    unsafe fn unref(l: *mut Self::State, r: c_int);
    unsafe fn top(l: *mut Self::State) -> c_int;
    unsafe fn set_top(l: *mut Self::State, idx: c_int);
    unsafe fn replace(l: *mut Self::State, idx: c_int);
    /// A host function's argument as a string: a string, or a number's text.
    unsafe fn arg_bytes<'a>(l: *mut Self::State, idx: c_int) -> Option<&'a [u8]>;
    /// The `Run` of the script executing now (none while a library loads).
    unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>>;
    /// Pushes Redis's error table for `text` (see `error_table_text`).
    unsafe fn push_error_table(l: *mut Self::State, text: &[u8]);
    /// Pushes the error table a host function raises for `text` (Luau's also says the script
    /// line).
    unsafe fn push_raised_table(l: *mut Self::State, text: &[u8]);
    /// Pushes the position (`user_script:1: `) of the function at stack `level`, as `luaL_where`.
    unsafe fn push_where(l: *mut Self::State, level: c_int);
    /// Raises the error value on top from a host function: what the host function returns (Lua
    /// 5.1's trampoline raises on -1; Luau raises here and does not return).
    unsafe fn raise_top(l: *mut Self::State) -> c_int;
    /// Replies a value of a type only this engine has (Luau's integers and buffers); false if `t`
    /// is none of them.
    unsafe fn reply_own_type(_l: *mut Self::State, _t: c_int, _sink: &mut Sink) -> bool {
        false
    }
}

/// Converts the value on top of the stack into the reply (Redis's `luaReplyToRedisReply`); `resp`
/// is the script's protocol.
pub(crate) unsafe fn reply<A: CApi>(l: *mut A::State, sink: &mut Sink, resp: u8) {
    let t = A::type_of(l, -1);
    match t {
        _ if t == A::TSTRING => sink.bulk(A::to_bytes(l, -1).unwrap_or_default()),
        _ if t == A::TBOOLEAN => sink.boolean(A::to_boolean(l, -1), resp),
        _ if t == A::TNUMBER => sink.number(A::to_number(l, -1)),
        _ if t == A::TTABLE => table_reply::<A>(l, sink, resp),
        _ if A::reply_own_type(l, t, sink) => {}
        _ => sink.null(),
    }
}

unsafe fn table_reply<A: CApi>(l: *mut A::State, sink: &mut Sink, resp: u8) {
    if !A::check_stack(l, 4) {
        sink.error_message("ERR reached lua stack limit");
        return;
    }
    if !sink.enter() {
        return;
    }
    // Field checks in Redis's order: err, ok, double, big_number, map, set, verbatim_string.
    for (field, status) in [(c"err", false), (c"ok", true)] {
        if A::raw_get_field(l, -1, field) == A::TSTRING {
            let text = A::to_bytes(l, -1).unwrap_or_default();
            if status {
                sink.status(text);
            } else {
                sink.error(text);
            }
            A::pop(l, 1);
            sink.leave();
            return;
        }
        A::pop(l, 1);
    }
    if !resp3_table::<A>(l, sink) {
        // An array up to the first nil.
        let mut n = 0;
        while A::raw_get_index(l, -1, n + 1) != A::TNIL {
            A::pop(l, 1);
            n += 1;
        }
        A::pop(l, 1);
        sink.array(n as usize);
        for i in 1..=n {
            A::raw_get_index(l, -1, i);
            reply::<A>(l, sink, resp);
            A::pop(l, 1);
        }
    }
    sink.leave();
}

/// The RESP3 table forms (`{double=}`, `{map=}`, ...), honoured whatever the script's protocol (the
/// sink downgrades them for RESP2 clients, as Redis does; their elements are read as RESP3);
/// false if none of them.
unsafe fn resp3_table<A: CApi>(l: *mut A::State, sink: &mut Sink) -> bool {
    if A::raw_get_field(l, -1, c"double") == A::TNUMBER {
        sink.double(A::to_number(l, -1));
        A::pop(l, 1);
        return true;
    }
    A::pop(l, 1);
    if A::raw_get_field(l, -1, c"big_number") == A::TSTRING {
        sink.big_number(A::to_bytes(l, -1).unwrap_or_default());
        A::pop(l, 1);
        return true;
    }
    A::pop(l, 1);
    for (is_map, field) in [(true, c"map"), (false, c"set")] {
        if A::raw_get_field(l, -1, field) == A::TTABLE {
            let mut n = 0;
            A::push_nil(l);
            while A::next(l, -2) != 0 {
                A::pop(l, 1);
                n += 1;
            }
            if is_map {
                sink.map(n);
            } else {
                sink.set(n);
            }
            A::push_nil(l);
            while A::next(l, -2) != 0 {
                A::push_value(l, -2);
                reply::<A>(l, sink, 3);
                A::pop(l, 1);
                if is_map {
                    reply::<A>(l, sink, 3);
                }
                A::pop(l, 1);
            }
            A::pop(l, 1);
            return true;
        }
        A::pop(l, 1);
    }
    if A::raw_get_field(l, -1, c"verbatim_string") == A::TTABLE {
        A::raw_get_field(l, -1, c"format");
        A::raw_get_field(l, -2, c"string");
        let done = match (A::to_bytes(l, -2), A::to_bytes(l, -1)) {
            (Some(f), Some(t)) => {
                sink.verbatim(f, t);
                true
            }
            _ => false,
        };
        A::pop(l, 3);
        return done;
    }
    A::pop(l, 1);
    false
}

/// Pushes `args` as an array of strings (KEYS, ARGV, a function's `keys` and `args`).
pub(crate) unsafe fn push_array<A: CApi>(l: *mut A::State, args: crate::resp::parser::Args) {
    A::create_table(l, args.len() as c_int, 0);
    for (i, a) in args.iter().enumerate() {
        A::push_bytes(l, a);
        A::raw_set_index(l, -2, i as c_int + 1);
    }
}

/// The `err` of Redis's error table for `text`, which is either `-CODE message`, `CODE message` or
/// a bare message (given the `ERR` code), as `luaPushErrorBuff` makes it.
pub(crate) fn error_table_text(text: &[u8]) -> Vec<u8> {
    let t = text.strip_prefix(b"-").unwrap_or(text);
    if text.starts_with(b"-") {
        match memchr::memchr(b' ', t) {
            Some(i) => [&t[..i], b" ", trim_crlf(&t[i + 1..])].concat(),
            None => [b"ERR ", trim_crlf(t)].concat(),
        }
    } else {
        trim_crlf(text).to_vec()
    }
}

/// Sets the `redis` table's constants on the table on top: the log levels, with `repl` the
/// replication flags, `REDIS_VERSION_NUM` and `REDIS_VERSION`.
pub(crate) unsafe fn set_constants<A: CApi>(l: *mut A::State, repl: bool) {
    let repl_flags = if repl { &REPL_FLAGS[..] } else { &[] };
    for &(name, v) in LOG_LEVELS.iter().chain(repl_flags) {
        A::push_number(l, v as f64);
        A::raw_set_field(l, -2, name);
    }
    A::push_number(l, redis_version_num() as f64);
    A::raw_set_field(l, -2, c"REDIS_VERSION_NUM");
    A::push_bytes(l, REDIS_VERSION.as_bytes());
    A::raw_set_field(l, -2, c"REDIS_VERSION");
}

/// Builds script values from a command's reply (Redis's `redisProtocolToLuaType`), in the
/// script's protocol `resp`.
pub(crate) struct Builder<A: CApi> {
    pub l: *mut A::State,
    pub resp: u8,
}

impl<A: CApi> Builder<A> {
    /// `{field = <string>}`.
    unsafe fn keyed_bytes(&mut self, field: &CStr, b: &[u8]) {
        A::create_table(self.l, 0, 1);
        A::push_bytes(self.l, b);
        A::raw_set_field(self.l, -2, field);
    }
}

impl<A: CApi> ReplyBuilder for Builder<A> {
    fn int(&mut self, n: i64) {
        unsafe { A::push_number(self.l, n as f64) }
    }
    fn bulk(&mut self, b: &[u8]) {
        unsafe { A::push_bytes(self.l, b) }
    }
    fn status(&mut self, s: &[u8]) {
        unsafe { self.keyed_bytes(c"ok", s) }
    }
    fn error(&mut self, e: &[u8]) {
        unsafe { A::push_error_table(self.l, &[b"-", e].concat()) }
    }
    fn null(&mut self) {
        unsafe {
            if self.resp == 2 {
                A::push_boolean(self.l, false);
            } else {
                A::push_nil(self.l);
            }
        }
    }
    fn double(&mut self, d: f64) {
        unsafe {
            A::create_table(self.l, 0, 1);
            A::push_number(self.l, d);
            A::raw_set_field(self.l, -2, c"double");
        }
    }
    fn boolean(&mut self, b: bool) {
        unsafe { A::push_boolean(self.l, b) }
    }
    fn big_number(&mut self, digits: &[u8]) {
        unsafe { self.keyed_bytes(c"big_number", digits) }
    }
    fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        unsafe {
            A::create_table(self.l, 0, 1);
            A::create_table(self.l, 0, 2);
            A::push_bytes(self.l, format);
            A::raw_set_field(self.l, -2, c"format");
            A::push_bytes(self.l, text);
            A::raw_set_field(self.l, -2, c"string");
            A::raw_set_field(self.l, -2, c"verbatim_string");
        }
    }
    fn begin(&mut self, kind: Aggregate, len: usize) {
        unsafe {
            A::reserve_stack(self.l, 4);
            match kind {
                Aggregate::Array => A::create_table(self.l, len as c_int, 0),
                Aggregate::Map | Aggregate::Set => {
                    A::create_table(self.l, 0, 1);
                    A::create_table(self.l, 0, len as c_int);
                }
            }
        }
    }
    fn item(&mut self, kind: Aggregate, index: usize) {
        unsafe {
            match kind {
                Aggregate::Array => A::raw_set_index(self.l, -2, index as c_int + 1),
                Aggregate::Map => A::raw_set(self.l, -3),
                Aggregate::Set => {
                    A::push_boolean(self.l, true);
                    A::raw_set(self.l, -3);
                }
            }
        }
    }
    fn end(&mut self, kind: Aggregate) {
        unsafe {
            match kind {
                Aggregate::Array => {}
                Aggregate::Map => A::raw_set_field(self.l, -2, c"map"),
                Aggregate::Set => A::raw_set_field(self.l, -2, c"set"),
            }
        }
    }
}

// ---- redis.* (each engine wraps these in C functions of its own ABI) ----

/// Raises Redis's error table `{err = "ERR <msg>"}`.
pub(crate) unsafe fn raise<A: CApi>(l: *mut A::State, msg: &str) -> c_int {
    {
        let text = format!("ERR {msg}");
        A::push_raised_table(l, text.as_bytes());
    }
    A::raise_top(l)
}

/// Raises a plain error string prefixed with the calling script's position, as `luaL_error`.
pub(crate) unsafe fn raise_str<A: CApi>(l: *mut A::State, msg: &str) -> c_int {
    {
        A::push_where(l, 1);
        let mut text = A::to_bytes(l, -1).unwrap_or_default().to_vec();
        A::pop(l, 1);
        text.extend_from_slice(msg.as_bytes());
        A::push_bytes(l, &text);
    }
    A::raise_top(l)
}

/// `_G`'s `__index`: reading a global that does not exist is an error (Redis's
/// `luaProtectedTableError`).
pub(crate) unsafe fn missing_global<A: CApi>(l: *mut A::State) -> c_int {
    let name = A::to_bytes(l, 2).map(|n| String::from_utf8_lossy(n).into_owned());
    let msg = format!(
        "Script attempted to access nonexistent global variable '{}'",
        name.unwrap_or_default()
    );
    raise_str::<A>(l, &msg)
}

/// `redis.call`: Redis's `luaRedisGenericCommand`, raising the command's error.
pub(crate) unsafe fn call<A: CApi>(l: *mut A::State) -> c_int {
    call_generic::<A>(l, true)
}

/// `redis.pcall`: the command's error comes back as an error table.
pub(crate) unsafe fn pcall<A: CApi>(l: *mut A::State) -> c_int {
    call_generic::<A>(l, false)
}

/// Redis's `luaRedisGenericCommand`. Arguments must be strings or numbers (numbers as `%.17g`).
unsafe fn call_generic<A: CApi>(l: *mut A::State, raise_errors: bool) -> c_int {
    // As Redis, redis.pcall returns these errors as an error table rather than raising them.
    let refuse = |msg: &str| {
        if raise_errors {
            return raise::<A>(l, msg);
        }
        A::push_error_table(l, format!("ERR {msg}").as_bytes());
        1
    };
    let argc = A::top(l);
    if argc == 0 {
        return refuse("Please specify at least one argument for this redis lib call");
    }
    for i in 1..=argc {
        let t = A::type_of(l, i);
        if t == A::TNUMBER {
            // Numbers travel as `%.17g` text (Lua's own tostring would give 14 digits): the slot
            // is replaced by that string, so every argument can be read in place below.
            A::push_bytes(l, fmt_g17(A::to_number(l, i)).as_bytes());
            A::replace(l, i);
        } else if t != A::TSTRING {
            return refuse("Lua redis lib command arguments must be strings or integers");
        }
    }
    let Some(run) = A::current() else {
        return raise::<A>(l, "redis.call is only available while a script runs");
    };
    let resp = run.resp;
    // The strings stay on the stack (so their bytes stay valid) until the call has copied them.
    let reply = run.call((1..=argc).map(|i| A::to_bytes(l, i).unwrap_or_default()));
    A::set_top(l, 0);
    if raise_errors && reply.first() == Some(&b'-') {
        let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        A::push_raised_table(l, &reply[..end]);
        return A::raise_top(l);
    }
    walk(reply, &mut Builder::<A> { l, resp });
    1
}

/// The one string argument of `redis.error_reply` or `redis.status_reply`, or `None` after
/// pushing their error table.
unsafe fn reply_arg<'a, A: CApi>(l: *mut A::State) -> Option<&'a [u8]> {
    if A::top(l) != 1 || A::type_of(l, 1) != A::TSTRING {
        A::push_error_table(l, b"ERR wrong number or type of arguments");
        return None;
    }
    A::to_bytes(l, 1)
}

/// `redis.error_reply(text)`: `{err = text}`, with the `-` of an error line.
pub(crate) unsafe fn error_reply<A: CApi>(l: *mut A::State) -> c_int {
    if let Some(e) = reply_arg::<A>(l) {
        let text = if e.starts_with(b"-") {
            e.to_vec()
        } else {
            [b"-", e].concat()
        };
        A::push_error_table(l, &text);
    }
    1
}

/// `redis.status_reply(text)`: `{ok = text}`.
pub(crate) unsafe fn status_reply<A: CApi>(l: *mut A::State) -> c_int {
    if reply_arg::<A>(l).is_some() {
        A::create_table(l, 0, 1);
        A::push_value(l, 1);
        A::raw_set_field(l, -2, c"ok");
    }
    1
}

pub(crate) unsafe fn sha1hex<A: CApi>(l: *mut A::State) -> c_int {
    if A::top(l) != 1 {
        return raise::<A>(l, "wrong number of arguments");
    }
    let digest = sha1_hex(A::arg_bytes(l, 1).unwrap_or_default());
    A::push_bytes(l, &digest);
    1
}

pub(crate) unsafe fn log<A: CApi>(l: *mut A::State) -> c_int {
    let argc = A::top(l);
    if argc < 2 {
        return raise::<A>(l, "redis.log() requires two arguments or more.");
    }
    if A::type_of(l, 1) != A::TNUMBER {
        return raise::<A>(l, "First argument must be a number (log level).");
    }
    let Some(level) = log_level(A::to_number(l, 1) as i64) else {
        return raise::<A>(l, "Invalid debug level.");
    };
    let mut msg = Vec::new();
    for i in 2..=argc {
        if i > 2 {
            msg.push(b' ');
        }
        if let Some(s) = A::arg_bytes(l, i) {
            msg.extend_from_slice(s);
        }
    }
    crate::log::log(level, &String::from_utf8_lossy(&msg));
    0
}

pub(crate) unsafe fn setresp<A: CApi>(l: *mut A::State) -> c_int {
    if A::top(l) != 1 {
        return raise::<A>(l, "redis.setresp() requires one argument.");
    }
    let v = A::to_number(l, 1) as i64;
    if v != 2 && v != 3 {
        return raise::<A>(l, "RESP version must be 2 or 3.");
    }
    if let Some(run) = A::current() {
        run.resp = v as u8;
    }
    0
}

pub(crate) unsafe fn set_repl<A: CApi>(l: *mut A::State) -> c_int {
    if A::top(l) != 1 {
        return raise::<A>(l, "redis.set_repl() requires one argument.");
    }
    let v = A::to_number(l, 1) as i64;
    if !(0..=3).contains(&v) {
        return raise::<A>(
            l,
            "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
        );
    }
    0
}

pub(crate) unsafe fn acl_check_cmd<A: CApi>(l: *mut A::State) -> c_int {
    if A::top(l) == 0 {
        return raise::<A>(
            l,
            "Please specify at least one argument for this redis lib call",
        );
    }
    let name = A::arg_bytes(l, 1).unwrap_or_default();
    let known = A::current().is_some_and(|run| run.has_command(name));
    if !known {
        return raise::<A>(l, "Invalid command passed to redis.acl_check_cmd()");
    }
    // There are no ACL users besides the all-allowed default one.
    A::push_boolean(l, true);
    1
}

pub(crate) unsafe fn replicate_commands<A: CApi>(l: *mut A::State) -> c_int {
    A::push_boolean(l, true);
    1
}

pub(crate) unsafe fn breakpoint<A: CApi>(l: *mut A::State) -> c_int {
    A::push_boolean(l, false);
    1
}

/// `redis.debug`, which does nothing outside Redis's debugger.
pub(crate) unsafe fn noop<A: CApi>(_l: *mut A::State) -> c_int {
    0
}

// ---- Function libraries: `redis.register_function` ----

/// What a library's loading run registered so far (callbacks as registry references).
pub(crate) type Loading = crate::script::function::Loading<c_int>;

/// `redis.register_function(name, callback)` and `redis.register_function{function_name=...,
/// callback=..., flags={...}, description=...}` (Redis's `luaRegisterFunction`, errors included),
/// adding to `loading` (the engine's, set only while a library loads).
pub(crate) unsafe fn register_function<A: CApi>(
    l: *mut A::State,
    loading: &'static LocalKey<RefCell<Option<Loading>>>,
) -> c_int {
    let registered = loading.with(|c| match c.borrow_mut().as_mut() {
        None => Err("redis.register_function can only be called on FUNCTION LOAD command".into()),
        Some(loading) => read_registration::<A>(l, loading),
    });
    match registered {
        Ok(()) => 0,
        Err(msg) => raise::<A>(l, &msg),
    }
}

unsafe fn read_registration<A: CApi>(
    l: *mut A::State,
    loading: &mut Loading,
) -> Result<(), String> {
    let (mut name, mut description, mut callback, mut flags) = (None, None, None, 0u32);
    let read = match A::top(l) {
        2 => match string_arg::<A>(l, 1) {
            None => Err("first argument to redis.register_function must be a string".into()),
            Some(_) if A::type_of(l, 2) != A::TFUNCTION => {
                Err("second argument to redis.register_function must be a function".into())
            }
            Some(n) => {
                name = Some(n);
                callback = Some(A::make_ref(l, 2));
                Ok(())
            }
        },
        1 => named::<A>(l, &mut name, &mut description, &mut callback, &mut flags),
        _ => Err("wrong number of arguments to redis.register_function".into()),
    };
    let checked = read.and_then(|()| {
        let name = name.ok_or("redis.register_function must get a function name argument")?;
        callback.ok_or("redis.register_function must get a callback argument")?;
        loading.check(&name)
    });
    match checked {
        Ok(name) => {
            loading.push(
                name,
                description,
                flags,
                callback.expect("the callback was checked above"),
            );
            Ok(())
        }
        Err(e) => {
            if let Some(r) = callback {
                A::unref(l, r);
            }
            Err(e)
        }
    }
}

unsafe fn named<A: CApi>(
    l: *mut A::State,
    name: &mut Option<Vec<u8>>,
    description: &mut Option<Vec<u8>>,
    callback: &mut Option<c_int>,
    flags: &mut u32,
) -> Result<(), String> {
    if A::type_of(l, 1) != A::TTABLE {
        return Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".into());
    }
    A::push_nil(l);
    while A::next(l, 1) != 0 {
        let t = A::type_of(l, -2);
        let key = if t == A::TSTRING {
            A::to_bytes(l, -2).unwrap_or_default().to_ascii_lowercase()
        } else if t == A::TNUMBER {
            // A number key is a string to Lua, but never an argument's name.
            Vec::new()
        } else {
            return Err(
                "named argument key given to redis.register_function is not a string".into(),
            );
        };
        match &key[..] {
            b"function_name" => {
                *name = Some(string_arg::<A>(l, -1).ok_or(
                    "function_name argument given to redis.register_function must be a string",
                )?);
            }
            b"description" => {
                *description = Some(string_arg::<A>(l, -1).ok_or(
                    "description argument given to redis.register_function must be a string",
                )?);
            }
            b"callback" => {
                if A::type_of(l, -1) != A::TFUNCTION {
                    return Err(
                        "callback argument given to redis.register_function must be a function"
                            .into(),
                    );
                }
                if let Some(old) = callback.take() {
                    A::unref(l, old);
                }
                *callback = Some(A::make_ref(l, -1));
            }
            b"flags" => {
                if A::type_of(l, -1) != A::TTABLE {
                    return Err("flags argument to redis.register_function must be a table representing function flags".into());
                }
                *flags = read_flags::<A>(l)?;
            }
            _ => return Err("unknown argument given to redis.register_function".into()),
        }
        A::pop(l, 1);
    }
    Ok(())
}

/// The array of flag names on top (Redis's `luaRegisterFunctionReadFlags`).
unsafe fn read_flags<A: CApi>(l: *mut A::State) -> Result<u32, String> {
    let mut flags = 0;
    let mut j = 1;
    while A::raw_get_index(l, -1, j) != A::TNIL {
        let flag = string_arg::<A>(l, -1);
        A::pop(l, 1);
        flags |= parse_flag(&flag.ok_or("unknown flag given")?)?;
        j += 1;
    }
    A::pop(l, 1);
    Ok(flags)
}

/// A string argument as Redis's `luaGetStringSds` takes it: a string, or a number's text
/// (converted on a copy: the original may be a key `next` still needs).
unsafe fn string_arg<A: CApi>(l: *mut A::State, idx: c_int) -> Option<Vec<u8>> {
    let t = A::type_of(l, idx);
    if t == A::TSTRING {
        A::to_bytes(l, idx).map(<[u8]>::to_vec)
    } else if t == A::TNUMBER {
        A::push_value(l, idx);
        let s = A::arg_bytes(l, -1).map(<[u8]>::to_vec);
        A::pop(l, 1);
        s
    } else {
        None
    }
}

/// Declares module `redis_fns`, the `redis` table's functions above as C functions of the
/// engine's ABI (`"C"` for Lua 5.1's trampoline, `"C-unwind"` for Luau, whose errors unwind), and
/// `REDIS_FUNCTIONS`, them by name.
macro_rules! redis_functions {
    ($abi:tt, $api:ident) => {
        $crate::script::lua::shared::redis_functions!(
            $abi,
            $api,
            c"call" => call,
            c"pcall" => pcall,
            c"error_reply" => error_reply,
            c"status_reply" => status_reply,
            c"sha1hex" => sha1hex,
            c"log" => log,
            c"setresp" => setresp,
            c"set_repl" => set_repl,
            c"replicate_commands" => replicate_commands,
            c"breakpoint" => breakpoint,
            c"debug" => noop,
            c"acl_check_cmd" => acl_check_cmd
        );
    };
    ($abi:tt, $api:ident, $($name:literal => $f:ident),*) => {
        /// The `redis` table's functions (their rules are in `script::lua::shared`).
        pub(super) mod redis_fns {
            use std::ffi::c_int;

            use $crate::script::lua::shared::{self as s, CApi};

            type State = <super::$api as CApi>::State;
            $(
                pub unsafe extern $abi fn $f(l: *mut State) -> c_int {
                    unsafe { s::$f::<super::$api>(l) }
                }
            )*
        }

        pub(super) const REDIS_FUNCTIONS: &[(
            &std::ffi::CStr,
            unsafe extern $abi fn(
                *mut <$api as $crate::script::lua::shared::CApi>::State,
            ) -> std::ffi::c_int,
        )] = &[$((
            $name,
            redis_fns::$f,
        )),*];
    };
}
pub(crate) use redis_functions;
