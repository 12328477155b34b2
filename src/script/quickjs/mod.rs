//! The QuickJS engine behind QUICKJS.EVAL, QUICKJS.EVALSHA and QUICKJS.SCRIPT: JavaScript
//! (QuickJS-ng, built by `rquickjs-sys`, the C layer of rquickjs 0.14) over the keyspace.
//!
//! # Why the raw C API
//! rquickjs's high-level layer allocates per host call (argument vectors, a context reference per
//! value). The engine talks to QuickJS-ng's C API directly instead, as the Lua engine does to Lua
//! 5.1, so a call builds KEYS and ARGV and nothing else; `vm.rs` owns every raw handle and frees
//! them in the one order QuickJS accepts (values, then the context, then the runtime).
//!
//! # The script form
//! A body is a function body with `KEYS` and `ARGV` in scope, compiled once (at `SCRIPT LOAD` or
//! the first `EVAL`) in strict mode as `(function (KEYS, ARGV) {<body>\n})`; the cache keeps the
//! function object, which `EVALSHA` calls with no parsing. KEYS and ARGV are JS arrays (0-based)
//! of Latin-1 strings: each byte is one char code 0-255, so every byte survives (`convert.rs`).
//!
//! # A call
//! `run` builds KEYS and ARGV, calls the function, runs the promise jobs the script queued, and
//! converts the result (or the thrown value) to reply nodes while the run context is still set
//! (getters in a returned object are script code and stay under the budget); the nodes are then
//! written through the shared `Sink`. Host functions (`api.rs`) reach the `Run` through the
//! runtime's `Budget`, which the interrupt handler also reads: it asks `Run::check_budget`, and
//! once a script is killed it keeps interrupting, and QuickJS's interrupt error is uncatchable.

mod api;
mod convert;
mod functions;
mod vm;

use std::ffi::c_void;

use rquickjs_sys as q;

use super::cache::{ScriptCache, Sha};
use super::{Engine, EngineId, Run, Sink, KILLED_ERROR};
use crate::resp::parser::Args;
use convert::Out;
use vm::Vm;

/// A compiled script: the function object (a reference we own; undefined if a rebuilt VM could
/// not compile it again) and its body, kept so the VM can be rebuilt with every cached script.
struct Compiled {
    func: q::JSValue,
    body: Box<[u8]>,
}

pub struct QuickJs {
    // Field order is drop order: the cache's functions are freed in `Drop` before `vm`.
    cache: ScriptCache<Compiled>,
    vm: Vm,
    /// Reply nodes of the current result, reused between runs.
    out: Out,
    /// Values for KEYS and ARGV, and the Latin-1 scratch, reused between runs.
    items: Vec<q::JSValue>,
    text: Vec<u8>,
    /// What error texts call the code's file: `user_script`, or `user_function` in FCALL.
    file: &'static str,
    /// Function libraries and their VM (`functions.rs`), started by the first FUNCTION LOAD.
    functions: Option<Box<functions::Functions>>,
}

/// The source QuickJS compiles for a body: the function expression around it, in strict mode
/// (`JS_EVAL_FLAG_STRICT`), on the body's first line so line numbers match the body's;
/// NUL-terminated for QuickJS's parser.
fn wrap(body: &[u8]) -> Vec<u8> {
    let mut src = Vec::with_capacity(body.len() + 32);
    src.extend_from_slice(b"(function (KEYS, ARGV) {");
    if body.starts_with(b"#!") {
        // The shebang line stays, as a comment.
        src.extend_from_slice(b"//");
        src.extend_from_slice(&body[2..]);
    } else {
        src.extend_from_slice(body);
    }
    src.extend_from_slice(b"\n})\0");
    src
}

impl QuickJs {
    pub fn new(config: &crate::config::Config) -> QuickJs {
        QuickJs {
            cache: ScriptCache::default(),
            vm: Vm::new(config.quickjs_memory_limit as usize),
            out: Out::default(),
            items: Vec::new(),
            text: Vec::new(),
            file: "user_script",
            functions: None,
        }
    }

    /// Replaces the VM with a fresh one (a kill that left promise jobs queued, or a body that ran
    /// code at load time), compiling every cached script into it again.
    fn rebuild(&mut self) {
        for c in self.cache.artifacts_mut() {
            self.vm.free_value(c.func);
            c.func = q::JS_UNDEFINED;
        }
        let limit = self.vm.memory_limit();
        self.vm = Vm::new(limit);
        self.vm.set_memory_limit(0);
        for c in self.cache.artifacts_mut() {
            c.func = self.vm.compile(&wrap(&c.body)).unwrap_or(q::JS_UNDEFINED);
        }
        self.vm.set_memory_limit(limit);
    }

    /// A JS array of Latin-1 strings.
    unsafe fn new_array(&mut self, args: Args) -> q::JSValue {
        let ctx = self.vm.ctx;
        self.items.clear();
        for a in args.iter() {
            let s = convert::new_string(ctx, a, &mut self.text);
            if q::JS_IsException(s) {
                for v in self.items.drain(..) {
                    q::JS_FreeValue(ctx, v);
                }
                return s;
            }
            self.items.push(s);
        }
        // JS_NewArrayFrom takes the values (and frees them if it fails).
        let arr = q::JS_NewArrayFrom(ctx, self.items.len() as _, self.items.as_ptr());
        self.items.clear();
        arr
    }

    /// The error of a run that passed the memory limit.
    fn out_of_memory(&self, sha: &str) -> String {
        format!(
            "ERR Out of memory running script (quickjs-memory-limit is {} bytes) script: {sha}",
            self.vm.memory_limit()
        )
    }

    /// Turns the pending exception into the error reply node, as Redis words a script's error:
    /// `<CODE> <message> script: <sha>, on user_script:<line>.` (the code is `ERR` unless the
    /// message starts with one), or the kill and out-of-memory errors.
    unsafe fn exception_nodes(&mut self, sha: &str) {
        let ctx = self.vm.ctx;
        let e = q::JS_GetException(ctx);
        let refused = self.vm.take_refused();
        if self.vm.killed() {
            q::JS_FreeValue(ctx, e);
            self.out.clear();
            self.out
                .error(format!("{KILLED_ERROR} script: {sha}").as_bytes());
            return;
        }
        if refused {
            q::JS_FreeValue(ctx, e);
            self.out.clear();
            self.out.error(self.out_of_memory(sha).as_bytes());
            return;
        }
        self.out.clear();
        // A thrown `{err: ...}` replies its text as returned (Redis's `error({err=...})`).
        if q::JS_IsObject(e) && !q::JS_IsError(e) {
            if let Some(text) = convert::string_property(ctx, e, self.vm.names.err) {
                q::JS_FreeValue(ctx, e);
                self.out.error(&text);
                return;
            }
        }
        let (text, line) = convert::error_text(ctx, &self.vm.names, e);
        q::JS_FreeValue(ctx, e);
        let mut msg = convert::with_code(text.as_bytes());
        match line {
            Some(n) => {
                let file = self.file;
                msg.extend_from_slice(format!(" script: {sha}, on {file}:{n}.").as_bytes())
            }
            None => msg.extend_from_slice(format!(" script: {sha}").as_bytes()),
        }
        if self.vm.killed() {
            self.out
                .error(format!("{KILLED_ERROR} script: {sha}").as_bytes());
        } else {
            self.out.error(&msg);
        }
    }

    /// The result `v` (owned) as reply nodes; a promise replies its settled value.
    unsafe fn result_nodes(&mut self, v: q::JSValue, sha: &str) {
        let ctx = self.vm.ctx;
        let mut v = v;
        if q::JS_IsPromise(v) {
            match q::JS_PromiseState(ctx, v) {
                q::JSPromiseStateEnum_JS_PROMISE_FULFILLED => {
                    let r = q::JS_PromiseResult(ctx, v);
                    q::JS_FreeValue(ctx, v);
                    v = r;
                }
                q::JSPromiseStateEnum_JS_PROMISE_REJECTED => {
                    let r = q::JS_PromiseResult(ctx, v);
                    q::JS_FreeValue(ctx, v);
                    q::JS_Throw(ctx, r);
                    self.exception_nodes(sha);
                    return;
                }
                _ => {
                    q::JS_FreeValue(ctx, v);
                    self.out.clear();
                    self.out
                        .error(b"ERR QuickJS script returned a promise that never settled");
                    return;
                }
            }
        }
        self.out.clear();
        let names = self.vm.names;
        let r = convert::to_nodes(ctx, &names, v, &mut self.out, 0);
        q::JS_FreeValue(ctx, v);
        if r.is_err() {
            self.exception_nodes(sha);
        }
    }
}

impl QuickJs {
    /// Calls `func` (a script's function, or a library's callback) with KEYS and ARGV (a
    /// function's `keys` and `args`), runs the promise jobs it queued, and writes its reply. True
    /// when the VM must be rebuilt (a kill left jobs queued).
    fn call(&mut self, run: &mut Run, func: q::JSValue, keys: Args, argv: Args) -> bool {
        // CONFIG SET quickjs-memory-limit takes effect from the next call.
        self.vm
            .set_memory_limit(run.config().quickjs_memory_limit as usize);
        self.vm.update_stack_top();
        self.vm.take_refused();
        // The digest (or the function's name) as text, for error replies (a copy: `run` is lent
        // to the script).
        let sha_bytes = run.sha;
        let function = run.function().map(Box::<str>::from);
        let sha_text = function
            .as_deref()
            .unwrap_or_else(|| std::str::from_utf8(&sha_bytes).unwrap_or_default());
        let ctx = self.vm.ctx;
        let run_ptr = run as *mut Run as *mut c_void;
        // SAFETY: values are owned and freed once on every path; the `Run` is reached only through
        // the budget pointer while script code may run, and used directly again after it is unset.
        unsafe {
            self.vm.set_run(run_ptr);
            if !q::JS_IsFunction(ctx, func) {
                self.out.clear();
                self.out.error(
                    b"ERR the QuickJS VM was rebuilt and could not compile this script again",
                );
            } else {
                let keys = self.new_array(keys);
                let argv = self.new_array(argv);
                let result = if q::JS_IsException(keys) || q::JS_IsException(argv) {
                    for v in [keys, argv] {
                        q::JS_FreeValue(ctx, v);
                    }
                    q::JS_EXCEPTION
                } else {
                    let mut a = [keys, argv];
                    let r = q::JS_Call(ctx, func, q::JS_UNDEFINED, 2, a.as_mut_ptr());
                    q::JS_FreeValue(ctx, keys);
                    q::JS_FreeValue(ctx, argv);
                    r
                };
                if q::JS_IsException(result) {
                    self.exception_nodes(sha_text);
                    self.vm.run_jobs();
                } else {
                    // Promise jobs the script queued run before its reply, within its budget
                    // and its memory limit.
                    self.vm.run_jobs();
                    if self.vm.killed() {
                        q::JS_FreeValue(ctx, result);
                        self.out.clear();
                        self.out
                            .error(format!("{KILLED_ERROR} script: {sha_text}").as_bytes());
                    } else {
                        self.result_nodes(result, sha_text);
                    }
                }
            }
            self.vm.set_run(std::ptr::null_mut());
        }
        if self.vm.take_refused() && !self.vm.killed() {
            // An allocation past the limit fails the run wherever it was refused: in a job, or
            // in script code that caught the error.
            self.out.clear();
            self.out.error(self.out_of_memory(sha_text).as_bytes());
        }
        // Jobs a stopped run left queued must never run in another script.
        let rebuild = self.vm.jobs_pending();
        let resp = run.resp;
        self.out.write(&mut Sink::new(run.out()), resp);
        self.out.clear();
        self.vm.trim_scratch();
        let (used, limit) = (self.vm.memory_used(), self.vm.memory_limit());
        if limit > 0 && used > limit / 2 {
            // A script that came close to the limit gives its garbage back now.
            self.vm.gc();
        }
        // What the run (and that collection) gave back to malloc, which may return it to the
        // system (`Scripting::put`).
        crate::alloc::note_freed(self.vm.take_freed());
        rebuild
    }
}

impl Engine for QuickJs {
    super::cache::engine_methods!(QuickJs);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        let Some(flags) = self
            .cache
            .to_compile(EngineId::QuickJs, sha, body, pinned)?
        else {
            return Ok(());
        };
        let compiled = self.vm.compile(&wrap(body));
        if self.vm.jobs_pending() {
            // Code that ran at load time queued jobs: they must never run in a script.
            self.rebuild();
        }
        let func = compiled.map_err(|e| format!("ERR Error compiling script: {e}"))?;
        let artifact = Compiled {
            func,
            body: body.into(),
        };
        for gone in self.cache.insert(*sha, artifact, flags, body.len(), pinned) {
            self.vm.free_value(gone.func);
        }
        Ok(())
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(func) = self.cache.get(sha).map(|c| c.func) else {
            return false;
        };
        if self.call(run, func, keys, argv) {
            self.rebuild();
        }
        true
    }

    fn flush(&mut self) {
        for c in self.cache.drain() {
            self.vm.free_value(c.func);
        }
        // A fresh VM: nothing a script left (the symbol registry, a shape cache) survives.
        let limit = self.vm.memory_limit();
        self.vm = Vm::new(limit);
    }

    fn memory(&self) -> usize {
        self.vm.memory_used()
    }

    fn load_library(
        &mut self,
        lib: super::function::LibId,
        code: &[u8],
    ) -> Result<Vec<super::function::Registered>, String> {
        let limit = self.vm.memory_limit();
        self.functions
            .get_or_insert_with(|| Box::new(functions::Functions::new(limit)))
            .load(lib, code)
    }

    fn call_function(
        &mut self,
        run: &mut Run,
        lib: super::function::LibId,
        index: usize,
        keys: Args,
        args: Args,
    ) {
        let Some(mut f) = self.functions.take() else {
            run.out().error("ERR Function not found");
            return;
        };
        match f.libs.get(&lib).and_then(|c| c.get(index)).copied() {
            Some(func) => {
                // The functions' VM takes the engine's place for the call.
                std::mem::swap(&mut self.vm, &mut f.vm);
                self.file = "user_function";
                let rebuild = self.call(run, func, keys, args);
                self.file = "user_script";
                std::mem::swap(&mut self.vm, &mut f.vm);
                if rebuild {
                    f.rebuild();
                }
            }
            None => run.out().error("ERR Function not found"),
        }
        self.functions = Some(f);
    }

    fn drop_library(&mut self, lib: super::function::LibId) {
        if let Some(f) = self.functions.as_mut() {
            f.drop_library(lib);
        }
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        self.vm.set_memory_limit(bytes);
        if let Some(f) = self.functions.as_mut() {
            f.vm.set_memory_limit(bytes);
        }
    }

    fn functions_memory(&self) -> usize {
        self.functions.as_ref().map_or(0, |f| f.vm.memory_used())
    }

    fn collect(&mut self) {
        // `Scripting::put` counts what this frees: the VMs' own count starts again.
        self.vm.gc();
        self.vm.take_freed();
        if let Some(f) = self.functions.as_mut() {
            f.vm.gc();
            f.vm.take_freed();
        }
        if self.text.capacity() > vm::SCRATCH_MAX {
            self.text = Vec::new();
        }
        if self.items.capacity() * std::mem::size_of::<q::JSValue>() > vm::SCRATCH_MAX {
            self.items = Vec::new();
        }
    }
}

impl Drop for QuickJs {
    fn drop(&mut self) {
        // The functions go before the VM (QuickJS aborts if objects outlive their runtime).
        for c in self.cache.drain() {
            self.vm.free_value(c.func);
        }
    }
}
