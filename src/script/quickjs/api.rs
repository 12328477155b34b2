//! The `redis` object scripts see, and the conversion of command replies into JS values.
//!
//! Host functions are C functions (`JSCFunction`, declared with `host_fn!`, which writes their
//! signature once) that find the VM's `Host` through the context's opaque pointer and the running
//! `Run` through the `Budget`. The constants and log levels of `redis` come from
//! `script::redis_api`. They hold no Rust borrow across a
//! call into script code: a command's reply is copied into the host scratch before it is walked,
//! so the interrupt handler may use the `Run` meanwhile.

use std::ffi::{c_int, CStr};

use rquickjs_sys as q;

use super::convert::{new_integer, new_string, string_bytes};
use super::vm::Host;
use crate::config::REDIS_VERSION;
use crate::script::cache::sha1_hex;
use crate::script::redis_api::{log_level, redis_version_num, trim_crlf, LOG_LEVELS, REPL_FLAGS};
use crate::script::resp::{walk, Aggregate, ReplyBuilder};
use crate::script::Run;

type HostFn =
    unsafe extern "C" fn(*mut q::JSContext, q::JSValue, c_int, *mut q::JSValue) -> q::JSValue;

/// Declares a C function of the VM (a `HostFn`) whose body sees `ctx` and its arguments as a slice.
macro_rules! host_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($ctx:ident, $argv:ident) $body:block) => {
        $(#[$attr])*
        $vis unsafe extern "C" fn $name(
            $ctx: *mut q::JSContext,
            _this: q::JSValue,
            argc: c_int,
            argv: *mut q::JSValue,
        ) -> q::JSValue {
            let $argv = args(argc, argv);
            $body
        }
    };
}
pub(super) use host_fn;

/// The `redis` object (frozen later by the prelude).
///
/// # Safety
/// `ctx` is a fresh context whose opaque is its `Host`.
pub unsafe fn redis_object(ctx: *mut q::JSContext) -> q::JSValue {
    let redis = q::JS_NewObject(ctx);
    let funcs: [(&CStr, HostFn, c_int); 12] = [
        (c"call", redis_call, 1),
        (c"pcall", redis_pcall, 1),
        (c"error_reply", error_reply, 1),
        (c"status_reply", status_reply, 1),
        (c"sha1hex", sha1hex, 1),
        (c"log", log, 2),
        (c"setresp", setresp, 1),
        (c"set_repl", set_repl, 1),
        (c"replicate_commands", replicate_commands, 0),
        (c"toUtf8", to_utf8, 1),
        (c"fromUtf8", from_utf8, 1),
        (c"register_function", super::functions::register_function, 2),
    ];
    for (name, f, len) in funcs {
        let fv = q::JS_NewCFunction2(
            ctx,
            Some(f),
            name.as_ptr(),
            len,
            q::JSCFunctionEnum_JS_CFUNC_generic,
            0,
        );
        q::JS_SetPropertyStr(ctx, redis, name.as_ptr(), fv);
    }
    for (name, v) in LOG_LEVELS.into_iter().chain(REPL_FLAGS) {
        q::JS_SetPropertyStr(ctx, redis, name.as_ptr(), q::JS_MKVAL(q::JS_TAG_INT, v));
    }
    let version = q::JS_NewStringLen(
        ctx,
        REDIS_VERSION.as_ptr() as *const _,
        REDIS_VERSION.len() as q::size_t,
    );
    q::JS_SetPropertyStr(ctx, redis, c"REDIS_VERSION".as_ptr(), version);
    let num = redis_version_num() as i32;
    q::JS_SetPropertyStr(
        ctx,
        redis,
        c"REDIS_VERSION_NUM".as_ptr(),
        q::JS_MKVAL(q::JS_TAG_INT, num),
    );
    redis
}

/// The VM's host scratch.
unsafe fn host<'a>(ctx: *mut q::JSContext) -> &'a mut Host {
    &mut *(q::JS_GetContextOpaque(ctx) as *mut Host)
}

pub(super) unsafe fn args<'a>(argc: c_int, argv: *mut q::JSValue) -> &'a [q::JSValue] {
    if argc <= 0 || argv.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(argv, argc as usize)
    }
}

/// Throws an `Error` whose message is `msg` (Latin-1 bytes); it carries the script's stack, so
/// an uncaught one names the script line.
pub unsafe fn throw_error(ctx: *mut q::JSContext, msg: &[u8]) -> q::JSValue {
    q::JS_ThrowPlainError(ctx, c"%s".as_ptr(), c"".as_ptr());
    let e = q::JS_GetException(ctx);
    let h = host(ctx);
    let m = new_string(ctx, msg, &mut h.text);
    if q::JS_IsException(m) {
        q::JS_FreeValue(ctx, e);
        return q::JS_EXCEPTION;
    }
    q::JS_DefinePropertyValue(
        ctx,
        e,
        h.names.message,
        m,
        (q::JS_PROP_WRITABLE | q::JS_PROP_CONFIGURABLE) as c_int,
    );
    q::JS_Throw(ctx, e)
}

unsafe fn throw_type_error(ctx: *mut q::JSContext, msg: &CStr) -> q::JSValue {
    q::JS_ThrowTypeError(ctx, c"%s".as_ptr(), msg.as_ptr())
}

/// `{<atom>: bytes}`, as the status and error objects.
unsafe fn tagged(ctx: *mut q::JSContext, atom: q::JSAtom, bytes: &[u8]) -> q::JSValue {
    let h = host(ctx);
    let s = new_string(ctx, bytes, &mut h.text);
    if q::JS_IsException(s) {
        return s;
    }
    let o = q::JS_NewObject(ctx);
    if q::JS_IsException(o) {
        q::JS_FreeValue(ctx, s);
        return o;
    }
    q::JS_DefinePropertyValue(ctx, o, atom, s, q::JS_PROP_C_W_E as c_int);
    o
}

/// Redis's error text for an error reply line `-CODE message` (or `CODE message`, or a bare
/// message, which gets `ERR`), as `luaPushErrorBuff` formats it.
pub fn error_line(text: &[u8]) -> Vec<u8> {
    let t = text.strip_prefix(b"-").unwrap_or(text);
    let t = trim_crlf(t);
    if text.starts_with(b"-") {
        match memchr::memchr(b' ', t) {
            Some(i) => [&t[..i], b" ", trim_crlf(&t[i + 1..])].concat(),
            None => [b"ERR ", t].concat(),
        }
    } else {
        t.to_vec()
    }
}

// ---- redis.call / redis.pcall ----

/// Appends argument `v` of a command as bytes: strings (Latin-1), numbers and BigInts (their JS
/// string form: `1`, `0.5`, `1e+21`), `Uint8Array`s (their bytes). False with an exception thrown
/// otherwise.
unsafe fn push_arg(ctx: *mut q::JSContext, v: q::JSValue, out: &mut Vec<u8>) -> bool {
    let tag = q::JS_VALUE_GET_NORM_TAG(v);
    match tag {
        q::JS_TAG_STRING
        | q::JS_TAG_STRING_ROPE
        | q::JS_TAG_INT
        | q::JS_TAG_FLOAT64
        | q::JS_TAG_BIG_INT
        | q::JS_TAG_SHORT_BIG_INT => string_bytes(ctx, v, out),
        q::JS_TAG_OBJECT
            if q::JS_GetTypedArrayType(v) == q::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8 as c_int =>
        {
            let mut len: q::size_t = 0;
            let p = q::JS_GetUint8Array(ctx, &mut len, v);
            if p.is_null() {
                return false;
            }
            out.extend_from_slice(std::slice::from_raw_parts(p, len as usize));
            true
        }
        _ => {
            throw_type_error(
                ctx,
                c"redis.call arguments must be strings, numbers, BigInts or Uint8Arrays",
            );
            false
        }
    }
}

unsafe fn call_generic(ctx: *mut q::JSContext, argv: &[q::JSValue], raise: bool) -> q::JSValue {
    if argv.is_empty() {
        return throw_error(
            ctx,
            b"ERR Please specify at least one argument for this redis lib call",
        );
    }
    let h = host(ctx);
    h.args.clear();
    h.spans.clear();
    for &a in argv {
        let start = h.args.len();
        if !push_arg(ctx, a, &mut h.args) {
            return q::JS_EXCEPTION;
        }
        h.spans.push((start, h.args.len()));
    }
    let run = (*h.budget).run as *mut Run;
    // SAFETY: set for the duration of the script's call; the borrow ends before any script code
    // runs again (the reply is copied out first).
    let Some(run) = run.as_mut() else {
        return throw_error(ctx, b"ERR redis.call is only available while a script runs");
    };
    let reply = run.call(h.spans.iter().map(|&(s, e)| &h.args[s..e]));
    h.reply.clear();
    h.reply.extend_from_slice(reply);
    if raise && h.reply.first() == Some(&b'-') {
        let end = memchr::memchr(b'\r', &h.reply).unwrap_or(h.reply.len());
        let text = error_line(&h.reply[..end]);
        return throw_error(ctx, &text);
    }
    let reply = std::mem::take(&mut h.reply);
    let mut b = Builder { ctx, failed: false };
    walk(&reply, &mut b);
    let h = host(ctx);
    h.reply = reply;
    h.starts.clear();
    if b.failed {
        for v in h.stack.drain(..) {
            q::JS_FreeValue(ctx, v);
        }
        return q::JS_EXCEPTION;
    }
    h.stack.pop().unwrap_or(q::JS_UNDEFINED)
}

host_fn! {
    fn redis_call(ctx, argv) {
        call_generic(ctx, argv, true)
    }
}

host_fn! {
    fn redis_pcall(ctx, argv) {
        call_generic(ctx, argv, false)
    }
}

/// The one string argument of `redis.error_reply` and friends, as bytes.
unsafe fn string_arg(
    ctx: *mut q::JSContext,
    argv: &[q::JSValue],
    what: &CStr,
) -> Result<Vec<u8>, q::JSValue> {
    if argv.len() != 1 || !q::JS_IsString(argv[0]) {
        return Err(throw_type_error(ctx, what));
    }
    let mut out = Vec::new();
    if !string_bytes(ctx, argv[0], &mut out) {
        return Err(q::JS_EXCEPTION);
    }
    Ok(out)
}

host_fn! {
    fn error_reply(ctx, argv) {
        match string_arg(ctx, argv, c"redis.error_reply takes one string") {
            Ok(e) => {
                let text = if e.starts_with(b"-") {
                    e
                } else {
                    [b"-", &e[..]].concat()
                };
                tagged(ctx, host(ctx).names.err, &error_line(&text))
            }
            Err(e) => e,
        }
    }
}

host_fn! {
    fn status_reply(ctx, argv) {
        match string_arg(ctx, argv, c"redis.status_reply takes one string") {
            Ok(s) => tagged(ctx, host(ctx).names.ok, &s),
            Err(e) => e,
        }
    }
}

/// The one argument of `redis.sha1hex` and `redis.fromUtf8`, as bytes (see `push_arg`).
unsafe fn bytes_arg(
    ctx: *mut q::JSContext,
    argv: &[q::JSValue],
    what: &CStr,
) -> Result<Vec<u8>, q::JSValue> {
    if argv.len() != 1 {
        return Err(throw_type_error(ctx, what));
    }
    let mut bytes = Vec::new();
    if !push_arg(ctx, argv[0], &mut bytes) {
        return Err(q::JS_EXCEPTION);
    }
    Ok(bytes)
}

/// A JS string of UTF-8 `text` (QuickJS decodes it; not a Latin-1 byte string).
unsafe fn plain_string(ctx: *mut q::JSContext, text: &[u8]) -> q::JSValue {
    q::JS_NewStringLen(ctx, text.as_ptr() as *const _, text.len() as q::size_t)
}

host_fn! {
    fn sha1hex(ctx, argv) {
        match bytes_arg(ctx, argv, c"redis.sha1hex takes one argument") {
            Ok(bytes) => plain_string(ctx, &sha1_hex(&bytes)),
            Err(e) => e,
        }
    }
}

host_fn! {
    fn log(ctx, argv) {
        if argv.len() < 2 {
            return throw_error(ctx, b"ERR redis.log() requires two arguments or more.");
        }
        if !q::JS_IsNumber(argv[0]) {
            return throw_error(ctx, b"ERR First argument must be a number (log level).");
        }
        let mut level = 0.0;
        q::JS_ToFloat64(ctx, &mut level, argv[0]);
        let Some(level) = log_level(level as i64) else {
            return throw_error(ctx, b"ERR Invalid debug level.");
        };
        let mut msg = Vec::new();
        for (i, &a) in argv[1..].iter().enumerate() {
            if i > 0 {
                msg.push(b' ');
            }
            if !string_bytes(ctx, a, &mut msg) {
                return q::JS_EXCEPTION;
            }
        }
        crate::log::log(level, &String::from_utf8_lossy(&msg));
        q::JS_UNDEFINED
    }
}

host_fn! {
    fn setresp(ctx, argv) {
        if argv.len() != 1 {
            return throw_error(ctx, b"ERR redis.setresp() requires one argument.");
        }
        let mut v = 0.0;
        if q::JS_ToFloat64(ctx, &mut v, argv[0]) < 0 {
            return q::JS_EXCEPTION;
        }
        if v != 2.0 && v != 3.0 {
            return throw_error(ctx, b"ERR RESP version must be 2 or 3.");
        }
        let run = (*host(ctx).budget).run as *mut Run;
        if let Some(run) = run.as_mut() {
            run.resp = v as u8;
        }
        q::JS_UNDEFINED
    }
}

host_fn! {
    fn set_repl(ctx, argv) {
        let mut v = -1.0;
        if argv.len() == 1 {
            q::JS_ToFloat64(ctx, &mut v, argv[0]);
        }
        if !(0.0..=3.0).contains(&v) {
            return throw_error(
                ctx,
                b"ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
            );
        }
        q::JS_UNDEFINED
    }
}

host_fn! {
    fn replicate_commands(_ctx, _argv) {
        q::JS_TRUE
    }
}

host_fn! {
    /// `redis.toUtf8(text)`: the UTF-8 bytes of a string, as a byte string (one char per byte).
    fn to_utf8(ctx, argv) {
        if argv.len() != 1 || !q::JS_IsString(argv[0]) {
            return throw_type_error(ctx, c"redis.toUtf8 takes one string");
        }
        let mut len: usize = 0;
        let p = q::JS_ToCStringLen(ctx, &mut len, argv[0]);
        if p.is_null() {
            return q::JS_EXCEPTION;
        }
        let utf8 = std::slice::from_raw_parts(p as *const u8, len).to_vec();
        q::JS_FreeCString(ctx, p);
        new_string(ctx, &utf8, &mut host(ctx).text)
    }
}

host_fn! {
    /// `redis.fromUtf8(bytes)`: the text a byte string holds as UTF-8 (bad sequences as U+FFFD).
    fn from_utf8(ctx, argv) {
        match bytes_arg(ctx, argv, c"redis.fromUtf8 takes one argument") {
            Ok(bytes) => plain_string(ctx, String::from_utf8_lossy(&bytes).as_bytes()),
            Err(e) => e,
        }
    }
}

// ---- Command replies as JS values ----

/// Builds JS values on the host stack (Redis's `redisProtocolToLuaType`, in JS's own types where
/// it has them): integer → number (BigInt beyond 2^53), bulk → string, nil → null, status →
/// `{ok}`, error → `{err}`, array → Array, RESP3 map → Map, set → Set, double → number, boolean →
/// boolean, big number → BigInt, verbatim → `{verbatim_string: {format, string}}`.
struct Builder {
    ctx: *mut q::JSContext,
    failed: bool,
}

impl Builder {
    fn push(&mut self, v: q::JSValue) {
        // SAFETY: the host scratch of this builder's context.
        unsafe {
            if q::JS_IsException(v) {
                self.failed = true;
                host(self.ctx).stack.push(q::JS_UNDEFINED);
            } else {
                host(self.ctx).stack.push(v);
            }
        }
    }

    fn string(&mut self, b: &[u8]) -> q::JSValue {
        // SAFETY: as above.
        unsafe { new_string(self.ctx, b, &mut host(self.ctx).text) }
    }
}

impl ReplyBuilder for Builder {
    fn int(&mut self, n: i64) {
        let v = unsafe { new_integer(self.ctx, n) };
        self.push(v);
    }
    fn bulk(&mut self, b: &[u8]) {
        let v = self.string(b);
        self.push(v);
    }
    fn status(&mut self, s: &[u8]) {
        let v = unsafe { tagged(self.ctx, host(self.ctx).names.ok, s) };
        self.push(v);
    }
    fn error(&mut self, e: &[u8]) {
        let text = error_line(&[b"-", e].concat());
        let v = unsafe { tagged(self.ctx, host(self.ctx).names.err, &text) };
        self.push(v);
    }
    fn null(&mut self) {
        self.push(q::JS_NULL);
    }
    fn double(&mut self, d: f64) {
        self.push(q::JS_NewFloat64(d));
    }
    fn boolean(&mut self, b: bool) {
        self.push(if b { q::JS_TRUE } else { q::JS_FALSE });
    }
    fn big_number(&mut self, digits: &[u8]) {
        // SAFETY: a BigInt from its digits through the BigInt function, as a script would.
        let v = unsafe {
            let s = self.string(digits);
            if q::JS_IsException(s) {
                s
            } else {
                let global = q::JS_GetGlobalObject(self.ctx);
                let bigint = q::JS_GetPropertyStr(self.ctx, global, c"BigInt".as_ptr());
                q::JS_FreeValue(self.ctx, global);
                let mut a = [s];
                let r = q::JS_Call(self.ctx, bigint, q::JS_UNDEFINED, 1, a.as_mut_ptr());
                q::JS_FreeValue(self.ctx, bigint);
                q::JS_FreeValue(self.ctx, s);
                r
            }
        };
        self.push(v);
    }
    fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        // SAFETY: objects of this context; each value is owned once.
        let v = unsafe {
            let names = host(self.ctx).names;
            let inner = q::JS_NewObject(self.ctx);
            let f = self.string(format);
            let t = self.string(text);
            q::JS_DefinePropertyValue(self.ctx, inner, names.format, f, q::JS_PROP_C_W_E as c_int);
            q::JS_DefinePropertyValue(self.ctx, inner, names.string, t, q::JS_PROP_C_W_E as c_int);
            let outer = q::JS_NewObject(self.ctx);
            q::JS_DefinePropertyValue(
                self.ctx,
                outer,
                names.verbatim_string,
                inner,
                q::JS_PROP_C_W_E as c_int,
            );
            outer
        };
        self.push(v);
    }
    fn begin(&mut self, _kind: Aggregate, _len: usize) {
        // The elements collect on the stack; `end` makes them one array (maps and sets then
        // become a Map or Set).
        // SAFETY: the host scratch of this builder's context.
        unsafe {
            let h = host(self.ctx);
            h.starts.push(h.stack.len());
        }
    }
    fn item(&mut self, _kind: Aggregate, _index: usize) {}
    fn end(&mut self, kind: Aggregate) {
        // SAFETY: the elements above `start` are owned values; JS_NewArrayFrom takes them all
        // (and frees them if it fails).
        let arr = unsafe {
            let h = host(self.ctx);
            let start = h.starts.pop().unwrap_or(0);
            let count = h.stack.len() - start;
            let arr = q::JS_NewArrayFrom(self.ctx, count as c_int, h.stack.as_ptr().add(start));
            h.stack.truncate(start);
            arr
        };
        let helper = match kind {
            Aggregate::Array => return self.push(arr),
            // SAFETY: the helpers live as long as the VM.
            Aggregate::Map => unsafe { host(self.ctx).names.make_map },
            Aggregate::Set => unsafe { host(self.ctx).names.make_set },
        };
        if unsafe { q::JS_IsException(arr) } {
            return self.push(arr);
        }
        // SAFETY: the helper is our own frozen prelude function.
        unsafe {
            let mut flat = [arr];
            let v = q::JS_Call(self.ctx, helper, q::JS_UNDEFINED, 1, flat.as_mut_ptr());
            q::JS_FreeValue(self.ctx, arr);
            self.push(v);
        }
    }
}
