//! The `redis` command scripts see, and the conversions between RESP and Tcl values.
//!
//! Tcl values are strings; what a string cannot say (status, error, nil, a boolean, a RESP3 double,
//! map or set) rides on a tagged value (`vendor/jim/glue.c`): `redis call` gives them, the `redis`
//! constructors make them, and a script that returns one unchanged replies with its RESP meaning.
//! Jim's own internal types speak too: an integer (from `expr`, `incr`, `redis call`) replies an
//! integer, a list an array, a dict a map. Anything else is a bulk string. The table is on
//! docs/commands/TCL.EVAL.md.

use std::ffi::c_int;

use super::current;
use super::ffi::*;
use crate::script::cache::sha1_hex;
use crate::script::resp::{walk, Aggregate, ReplyBuilder};
use crate::script::Sink;

/// Registers the `redis` command in a new interpreter.
///
/// # Safety
/// `interp` is live.
pub unsafe fn register(interp: *mut Interp) {
    Jim_CreateCommand(
        interp,
        c"redis".as_ptr(),
        redis,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
}

const SUBCOMMANDS: &str = "call, pcall, error_reply, status_reply, sha1hex, log, setresp, nil, \
                           bool, int, double, bulk, map, set, type or register_function";

unsafe fn fail(interp: *mut Interp, msg: &[u8]) -> c_int {
    set_result_bytes(interp, msg);
    JIM_ERR
}

unsafe fn ok(interp: *mut Interp, v: *mut Obj) -> c_int {
    goblin_jim_set_result(interp, v);
    JIM_OK
}

/// The one argument of a subcommand, or an arity error.
unsafe fn one(interp: *mut Interp, args: &[*mut Obj], usage: &str) -> Result<*mut Obj, c_int> {
    match args {
        [v] => Ok(*v),
        _ => Err(fail(
            interp,
            format!("wrong # args: should be \"redis {usage}\"").as_bytes(),
        )),
    }
}

/// `redis subcommand ?arg ...?`: marked as host code while it runs, so the allocator never jumps
/// out of it (glue.c).
unsafe extern "C" fn redis(interp: *mut Interp, argc: c_int, argv: *const *mut Obj) -> c_int {
    goblin_jim_host(1);
    let rc = redis_subcommand(interp, argc, argv);
    goblin_jim_host(0);
    rc
}

unsafe fn redis_subcommand(interp: *mut Interp, argc: c_int, argv: *const *mut Obj) -> c_int {
    let argv = std::slice::from_raw_parts(argv, argc.max(0) as usize);
    if argv.len() < 2 {
        return fail(
            interp,
            b"wrong # args: should be \"redis subcommand ?arg ...?\"",
        );
    }
    let args = &argv[2..];
    let r = match bytes(argv[1]) {
        b"call" => return call(interp, args, true),
        b"pcall" => return call(interp, args, false),
        b"error_reply" => one(interp, args, "error_reply message").map(|m| {
            let text = error_line(bytes(m));
            new_tagged(interp, &text, TAG_ERROR, std::ptr::null_mut())
        }),
        b"status_reply" => one(interp, args, "status_reply message")
            .map(|m| new_tagged(interp, bytes(m), TAG_STATUS, std::ptr::null_mut())),
        b"sha1hex" => {
            one(interp, args, "sha1hex string").map(|s| new_string(interp, &sha1_hex(bytes(s))))
        }
        b"log" => return log(interp, args),
        b"setresp" => return setresp(interp, args),
        b"register_function" => {
            return match super::functions::register_function(interp, args) {
                Ok(()) => ok(interp, new_string(interp, b"")),
                Err(msg) => fail(interp, format!("ERR {msg}").as_bytes()),
            }
        }
        b"nil" => match args {
            [] => Ok(new_tagged(interp, b"", TAG_NIL, std::ptr::null_mut())),
            _ => return fail(interp, b"wrong # args: should be \"redis nil\""),
        },
        b"bool" => one(interp, args, "bool value").and_then(|v| {
            let t: &[u8] = match bytes(v) {
                b"1" | b"true" | b"yes" | b"on" => b"1",
                b"0" | b"false" | b"no" | b"off" => b"0",
                _ => return Err(fail(interp, b"redis bool: expected a boolean")),
            };
            Ok(new_tagged(interp, t, TAG_BOOL, std::ptr::null_mut()))
        }),
        b"int" => one(interp, args, "int number").and_then(|v| {
            let mut n = 0i64;
            if Jim_GetWide(interp, v, &mut n) == JIM_OK {
                return Ok(Jim_NewIntObj(interp, n));
            }
            let mut d = 0f64;
            if Jim_GetDouble(interp, v, &mut d) == JIM_OK && d.is_finite() {
                return Ok(Jim_NewIntObj(interp, d as i64));
            }
            Err(fail(interp, b"redis int: expected a number"))
        }),
        b"double" => one(interp, args, "double number").and_then(|v| {
            let mut d = 0f64;
            if Jim_GetDouble(interp, v, &mut d) != JIM_OK {
                return Err(fail(interp, b"redis double: expected a number"));
            }
            let text = crate::util::fmt_g17(d);
            Ok(new_tagged(
                interp,
                text.as_bytes(),
                TAG_DOUBLE,
                std::ptr::null_mut(),
            ))
        }),
        b"bulk" => one(interp, args, "bulk string")
            .map(|s| new_tagged(interp, bytes(s), TAG_BULK, std::ptr::null_mut())),
        b"map" if args.len() % 2 == 0 => Ok(aggregate(interp, args, TAG_MAP)),
        b"map" => return fail(interp, b"redis map: expected key value pairs"),
        b"set" => Ok(aggregate(interp, args, TAG_SET)),
        b"type" => one(interp, args, "type value").map(|v| {
            let name: &[u8] = match goblin_jim_kind(v) {
                TAG_STATUS => b"status",
                TAG_ERROR => b"error",
                TAG_NIL => b"nil",
                TAG_BOOL => b"bool",
                TAG_DOUBLE => b"double",
                TAG_BIG_NUMBER => b"big_number",
                TAG_MAP | KIND_DICT => b"map",
                TAG_SET => b"set",
                KIND_INT => b"integer",
                KIND_LIST => b"array",
                _ => b"string",
            };
            new_string(interp, name)
        }),
        other => {
            let msg = format!(
                "unknown redis subcommand \"{}\": must be {SUBCOMMANDS}",
                String::from_utf8_lossy(other)
            );
            return fail(interp, msg.as_bytes());
        }
    };
    match r {
        Ok(v) => ok(interp, v),
        Err(code) => code,
    }
}

/// A tagged map or set holding `elems`.
unsafe fn aggregate(interp: *mut Interp, elems: &[*mut Obj], tag: c_int) -> *mut Obj {
    let list = Jim_NewListObj(interp, elems.as_ptr(), elems.len() as c_int);
    new_tagged(interp, b"", tag, list)
}

/// Redis's error text for an error reply line `-CODE message` or a message: the leading `-` and
/// line ends dropped.
fn error_line(text: &[u8]) -> Vec<u8> {
    let t = text.strip_prefix(b"-").unwrap_or(text);
    let end = t
        .iter()
        .rposition(|&c| c != b'\r' && c != b'\n')
        .map_or(0, |i| i + 1);
    t[..end].to_vec()
}

/// `redis call|pcall command ?arg ...?`: the reply as a Tcl value; an error reply raises (call) or
/// is returned as a tagged error (pcall).
unsafe fn call(interp: *mut Interp, args: &[*mut Obj], raise: bool) -> c_int {
    if args.is_empty() {
        return fail(
            interp,
            b"ERR Please specify at least one argument for this redis lib call",
        );
    }
    let Some(run) = current() else {
        return fail(
            interp,
            b"ERR redis call is only available while a script runs",
        );
    };
    let reply = run.call(args.iter().map(|&a| bytes(a)));
    if raise && reply.first() == Some(&b'-') {
        let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        let text = error_line(&reply[..end]);
        return fail(interp, &text);
    }
    let mut b = Builder {
        interp,
        stack: Vec::new(),
        starts: Vec::new(),
    };
    walk(reply, &mut b);
    let v = b.stack.pop().unwrap_or_else(|| new_string(interp, b""));
    ok(interp, v)
}

/// `redis log level message ?message ...?`: level `debug`, `verbose`, `notice`, `warning` or 0-3.
unsafe fn log(interp: *mut Interp, args: &[*mut Obj]) -> c_int {
    if args.len() < 2 {
        return fail(
            interp,
            b"wrong # args: should be \"redis log level message\"",
        );
    }
    use crate::log::Level;
    let level = match bytes(args[0]) {
        b"0" | b"debug" => Level::Debug,
        b"1" | b"verbose" => Level::Verbose,
        b"2" | b"notice" => Level::Notice,
        b"3" | b"warning" => Level::Warning,
        _ => return fail(interp, b"ERR Invalid debug level."),
    };
    let msg: Vec<&[u8]> = args[1..].iter().map(|&a| bytes(a)).collect();
    crate::log::log(level, &String::from_utf8_lossy(&msg.join(&b' ')));
    ok(interp, new_string(interp, b""))
}

/// `redis setresp 2|3`: the protocol `redis call` replies come in.
unsafe fn setresp(interp: *mut Interp, args: &[*mut Obj]) -> c_int {
    let v = match args {
        [v] => bytes(*v),
        _ => return fail(interp, b"ERR redis.setresp() requires one argument."),
    };
    let resp = match v {
        b"2" => 2,
        b"3" => 3,
        _ => return fail(interp, b"ERR RESP version must be 2 or 3."),
    };
    if let Some(run) = current() {
        run.resp = resp;
    }
    ok(interp, new_string(interp, b""))
}

/// Builds Tcl values from a command's reply: integer → integer, bulk → string, nil → tagged nil
/// (the empty string), status/error/boolean/double/big number → tagged, verbatim → string,
/// array → list, map/set → tagged map/set over the element list.
struct Builder {
    interp: *mut Interp,
    stack: Vec<*mut Obj>,
    starts: Vec<usize>,
}

impl Builder {
    fn tagged(&mut self, b: &[u8], tag: c_int) {
        // SAFETY: a live interpreter.
        let v = unsafe { new_tagged(self.interp, b, tag, std::ptr::null_mut()) };
        self.stack.push(v);
    }
}

impl ReplyBuilder for Builder {
    fn int(&mut self, n: i64) {
        // SAFETY: a live interpreter.
        let v = unsafe { Jim_NewIntObj(self.interp, n) };
        self.stack.push(v);
    }
    fn bulk(&mut self, b: &[u8]) {
        // SAFETY: a live interpreter.
        let v = unsafe { new_string(self.interp, b) };
        self.stack.push(v);
    }
    fn status(&mut self, s: &[u8]) {
        self.tagged(s, TAG_STATUS);
    }
    fn error(&mut self, e: &[u8]) {
        self.tagged(e, TAG_ERROR);
    }
    fn null(&mut self) {
        self.tagged(b"", TAG_NIL);
    }
    fn double(&mut self, d: f64) {
        self.tagged(crate::util::fmt_g17(d).as_bytes(), TAG_DOUBLE);
    }
    fn boolean(&mut self, b: bool) {
        self.tagged(if b { b"1" } else { b"0" }, TAG_BOOL);
    }
    fn big_number(&mut self, digits: &[u8]) {
        self.tagged(digits, TAG_BIG_NUMBER);
    }
    fn verbatim(&mut self, _format: &[u8], text: &[u8]) {
        self.bulk(text);
    }
    fn begin(&mut self, _kind: Aggregate, _len: usize) {
        self.starts.push(self.stack.len());
    }
    fn item(&mut self, _kind: Aggregate, _index: usize) {}
    fn end(&mut self, kind: Aggregate) {
        let start = self.starts.pop().unwrap_or(0);
        // SAFETY: the elements are fresh objects; the list takes them.
        let v = unsafe {
            let elems = &self.stack[start..];
            let list = Jim_NewListObj(self.interp, elems.as_ptr(), elems.len() as c_int);
            match kind {
                Aggregate::Array => list,
                Aggregate::Map => new_tagged(self.interp, b"", TAG_MAP, list),
                Aggregate::Set => new_tagged(self.interp, b"", TAG_SET, list),
            }
        };
        self.stack.truncate(start);
        self.stack.push(v);
    }
}

/// Writes the script's result `v` as the reply (the table at the top of this file); `resp` is the
/// script's protocol (`redis setresp`), which decides how a boolean false reads in RESP2.
///
/// # Safety
/// `v` is a live object of `interp`.
pub unsafe fn write_result(interp: *mut Interp, v: *mut Obj, resp: u8, sink: &mut Sink) {
    if !sink.enter() {
        return;
    }
    match goblin_jim_kind(v) {
        TAG_STATUS => sink.status(bytes(v)),
        TAG_ERROR => sink.error(bytes(v)),
        TAG_NIL => sink.null(),
        // Unlike a Lua boolean, a true one stays a boolean in RESP2.
        TAG_BOOL => match (bytes(v) == b"1", resp) {
            (false, 2) => sink.null(),
            (b, _) => sink.resp3_boolean(b),
        },
        TAG_DOUBLE => {
            let mut d = 0f64;
            Jim_GetDouble(interp, v, &mut d);
            sink.double(d);
        }
        TAG_BIG_NUMBER => sink.big_number(bytes(v)),
        TAG_MAP => write_elements(interp, goblin_jim_inner(v), resp, sink),
        TAG_SET => {
            let inner = goblin_jim_inner(v);
            sink.set(Jim_ListLength(interp, inner) as usize);
            write_list_items(interp, inner, resp, sink);
        }
        KIND_INT => {
            let mut n = 0i64;
            Jim_GetWide(interp, v, &mut n);
            sink.int(n);
        }
        KIND_DOUBLE => {
            // A Tcl double replies an integer, truncated toward zero, as a Lua number does.
            let mut d = 0f64;
            Jim_GetDouble(interp, v, &mut d);
            sink.int(d as i64);
        }
        KIND_LIST => {
            sink.array(Jim_ListLength(interp, v) as usize);
            write_list_items(interp, v, resp, sink);
        }
        KIND_DICT => write_elements(interp, v, resp, sink),
        _ => sink.bulk(bytes(v)),
    }
    sink.leave();
}

unsafe fn write_list_items(interp: *mut Interp, list: *mut Obj, resp: u8, sink: &mut Sink) {
    for i in 0..Jim_ListLength(interp, list) {
        write_result(interp, Jim_ListGetIndex(interp, list, i), resp, sink);
    }
}

/// A map from key/value pairs (a dict, or the element list of a tagged map).
unsafe fn write_elements(interp: *mut Interp, v: *mut Obj, resp: u8, sink: &mut Sink) {
    let mut len: c_int = 0;
    let pairs = Jim_DictPairs(interp, v, &mut len);
    if pairs.is_null() {
        sink.map(0);
        return;
    }
    let pairs = std::slice::from_raw_parts(pairs, len.max(0) as usize);
    sink.map(pairs.len() / 2);
    for &p in pairs {
        write_result(interp, p, resp, sink);
    }
}

/// Writes the error a script raised (see `error_text`), naming the script.
///
/// # Safety
/// `v` is a live object of `interp`.
pub unsafe fn write_error(interp: *mut Interp, v: *mut Obj, script: &str, sink: &mut Sink) {
    sink.error(&error_text(interp, v, Some(script)));
}

/// The text of an error raised in `interp`: a tagged error (`error [redis error_reply ...]`, or a
/// `redis pcall` error) is its text as it is; any other message gets the `ERR` code unless it
/// carries one, then the script's name (`script: <sha or function>`, if given) and the line.
///
/// # Safety
/// `v` is a live object of `interp`.
pub unsafe fn error_text(interp: *mut Interp, v: *mut Obj, script: Option<&str>) -> Vec<u8> {
    let text = bytes(v);
    if goblin_jim_kind(v) == TAG_ERROR {
        return text.to_vec();
    }
    let mut msg = if starts_with_code(text) {
        text.to_vec()
    } else {
        [b"ERR ", text].concat()
    };
    if let Some(script) = script {
        msg.extend_from_slice(format!(" script: {script}").as_bytes());
    }
    let line = goblin_jim_error_line(interp);
    if line > 0 {
        msg.extend_from_slice(format!(", on line {line}.").as_bytes());
    }
    msg
}

/// Whether an error message starts with a code: an upper-case word, then a space.
fn starts_with_code(text: &[u8]) -> bool {
    match memchr::memchr(b' ', text) {
        Some(n) if n > 0 && text[0].is_ascii_uppercase() => text[..n]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-'),
        _ => false,
    }
}
