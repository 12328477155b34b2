//! The Jim Tcl engine behind TCL.EVAL, TCL.EVALSHA and TCL.SCRIPT: Tcl scripts on Jim 0.84's core
//! interpreter, which `build.rs` compiles from the `jimtcl-sys` crate's sources with our patch and
//! glue (`vendor/jim/`).
//!
//! # The script form
//! A body is the body of a proc taking `KEYS` and `ARGV` (Tcl lists, 0-based: `lindex $KEYS 0`).
//! At `TCL.SCRIPT LOAD` or the first `TCL.EVAL` the body is parsed once (a syntax error is reported
//! there) and defined as `proc __script_<sha> {KEYS ARGV} <body>`; Jim keeps the parsed form in the
//! body object the proc holds, so `TCL.EVALSHA` calls the proc by a kept, reference-counted name
//! object with no parsing.
//!
//! # Budget and memory
//! Jim has no interrupt hook, so our patch adds one (`Jim_InterruptHook`), asked after every command
//! and on the fast paths Jim takes for `{}` and `incr v` loop bodies: every `HOOK_EVERY` calls it
//! asks `Run::check_budget`; once the script must stop it answers "stop" on every call, which ends
//! the script with `JIM_SIGNAL`, a code `catch` and `try` pass through (and a `catch -signal` that
//! took it is stopped again by the very next command). Jim never checks an allocation for NULL, so
//! our allocator (`Jim_Allocator`, in glue.c) keeps every block on a list and, while a script runs,
//! jumps out of the script at the allocation that would pass `tcl-memory-limit`; that interpreter
//! is abandoned, every block it had is freed, and a fresh one is made. (Past the limit inside the
//! `redis` command, where no jump may cross Rust frames, the next command stops the script.)
//!
//! # No state between runs
//! After a kill, an out-of-memory stop, or a run that created global variables or created, renamed
//! or deleted a command, the interpreter is rebuilt and every cached script defined again: nothing
//! a script leaves survives into the next, and the memory is returned.

mod api;
mod ffi;

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

use self::ffi::*;
use super::cache::{ScriptCache, Sha};
use super::{Engine, EngineId, Run, Sink, Stop, KILLED_ERROR};
use crate::cmd::Args;

/// Interrupt-hook calls (about one per Tcl command) between two budget checks.
const HOOK_EVERY: u32 = 1000;

/// Why the running script was stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stopped {
    No,
    Killed,
    OutOfMemory,
}

/// The per-thread state the C hooks see (Jim's allocator and interrupt hooks take no user data).
struct Hooks {
    /// The `Run` of the script executing now (type-erased: it borrows the server for the call).
    run: Cell<*mut c_void>,
    stopped: Cell<Stopped>,
    countdown: Cell<u32>,
    /// The memory limit (0: none).
    limit: Cell<usize>,
}

thread_local! {
    static HOOKS: Hooks = const {
        Hooks {
            run: Cell::new(ptr::null_mut()),
            stopped: Cell::new(Stopped::No),
            countdown: Cell::new(HOOK_EVERY),
            limit: Cell::new(0),
        }
    };
}

/// The running script's context, for the `redis` command. Only valid inside `Tcl::run`.
///
/// # Safety
/// Called only from the `redis` command, which Jim invokes while `run` lends the `Run` to the
/// script and does not touch it itself.
unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
    let p = HOOKS.with(|h| h.run.get());
    (p as *mut Run).as_mut()
}

/// Our patch's interrupt hook: non-zero stops the script.
unsafe extern "C" fn interrupt(_interp: *mut Interp) -> c_int {
    HOOKS.with(|h| {
        if h.run.get().is_null() {
            return 0;
        }
        if h.stopped.get() != Stopped::No {
            return 1;
        }
        let limit = h.limit.get();
        if limit > 0 && goblin_jim_used() > limit {
            h.stopped.set(Stopped::OutOfMemory);
            return 1;
        }
        let n = h.countdown.get() - 1;
        if n > 0 {
            h.countdown.set(n);
            return 0;
        }
        h.countdown.set(HOOK_EVERY);
        // SAFETY: the run pointer is set for the duration of the script.
        let run = &mut *(h.run.get() as *mut Run);
        match run.check_budget() {
            Some(Stop::Killed(_)) => {
                h.stopped.set(Stopped::Killed);
                1
            }
            None => 0,
        }
    })
}

/// A cached script: the name object of its proc (a reference we own) and its body, kept so a
/// rebuilt interpreter can define it again.
struct Compiled {
    name: *mut Obj,
    body: Box<[u8]>,
}

/// The interpreter and what a clean one looks like (to see what a run left behind).
struct Vm {
    interp: *mut Interp,
    epoch: std::ffi::c_ulong,
    globals: std::ffi::c_uint,
}

impl Vm {
    fn new() -> Vm {
        // SAFETY: the hooks are installed before the first interpreter exists (every block Jim
        // frees came from our allocator) and are the same for every interpreter.
        unsafe {
            static INSTALL: std::sync::Once = std::sync::Once::new();
            INSTALL.call_once(|| Jim_InterruptHook = Some(interrupt));
            let interp = goblin_jim_new();
            api::register(interp);
            let mut vm = Vm {
                interp,
                epoch: 0,
                globals: 0,
            };
            vm.mark_clean();
            vm
        }
    }

    fn mark_clean(&mut self) {
        // SAFETY: a live interpreter.
        unsafe {
            self.epoch = goblin_jim_epoch(self.interp);
            self.globals = goblin_jim_globals(self.interp);
        }
    }

    fn is_clean(&self) -> bool {
        // SAFETY: a live interpreter.
        unsafe {
            goblin_jim_epoch(self.interp) == self.epoch
                && goblin_jim_globals(self.interp) == self.globals
        }
    }

    /// Defines `proc <name> {KEYS ARGV} <body>` after checking that the body parses.
    fn define(&mut self, name: *mut Obj, body: &[u8]) -> Result<(), String> {
        // SAFETY: objects of this interpreter; Jim_EvalObjVector takes and drops its references.
        unsafe {
            let body = new_string(self.interp, body);
            goblin_jim_incr(body);
            let mut missing: std::ffi::c_char = 0;
            let complete = Jim_ScriptIsComplete(self.interp, body, &mut missing) != 0;
            let r = if !complete {
                Err(format!(
                    "ERR Error compiling script (new function): missing {}",
                    match missing as u8 {
                        b'{' => "close-brace",
                        b'[' => "close-bracket",
                        b'"' => "quote",
                        _ => "terminator",
                    }
                ))
            } else {
                let objv = [
                    new_string(self.interp, b"proc"),
                    name,
                    new_string(self.interp, b"KEYS ARGV"),
                    body,
                ];
                if Jim_EvalObjVector(self.interp, 4, objv.as_ptr()) == JIM_OK {
                    Ok(())
                } else {
                    Err(format!(
                        "ERR Error compiling script (new function): {}",
                        String::from_utf8_lossy(bytes(goblin_jim_result(self.interp)))
                    ))
                }
            };
            goblin_jim_decr(self.interp, body);
            self.mark_clean();
            r
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        if !self.interp.is_null() {
            // SAFETY: the interpreter is freed once; no object of it is used after.
            unsafe { Jim_FreeInterp(self.interp) }
        }
    }
}

pub struct Tcl {
    cache: ScriptCache<Compiled>,
    vm: Vm,
    items: Vec<*mut Obj>,
}

impl Tcl {
    pub fn new(config: &crate::config::Config) -> Tcl {
        HOOKS.with(|h| h.limit.set(config.tcl_memory_limit as usize));
        Tcl {
            cache: ScriptCache::default(),
            vm: Vm::new(),
            items: Vec::new(),
        }
    }

    /// A fresh interpreter with every cached script defined again.
    fn rebuild(&mut self) {
        self.release_names();
        self.define_all();
    }

    /// A fresh interpreter in which every cached script is defined.
    fn define_all(&mut self) {
        self.vm = Vm::new();
        let interp = self.vm.interp;
        for c in self.cache.artifacts_mut() {
            c.name = proc_name(interp, &c.body);
        }
        let defs: Vec<(*mut Obj, Box<[u8]>)> = self
            .cache
            .artifacts_mut()
            .map(|c| (c.name, c.body.clone()))
            .collect();
        for (name, body) in defs {
            // It parsed before, so it defines again.
            let _ = self.vm.define(name, &body);
        }
    }

    /// Replaces an interpreter a memory cap jumped out of (never touched again: its blocks are
    /// freed wholesale) with a fresh one holding every cached script.
    fn abandon(&mut self) {
        for c in self.cache.artifacts_mut() {
            c.name = ptr::null_mut();
        }
        self.vm.interp = ptr::null_mut();
        // SAFETY: nothing refers to the abandoned interpreter's blocks any more.
        unsafe { goblin_jim_free_all() };
        self.define_all();
    }

    fn release_names(&mut self) {
        let interp = self.vm.interp;
        for c in self.cache.artifacts_mut() {
            // SAFETY: our reference to an object of the current interpreter.
            unsafe { goblin_jim_decr(interp, c.name) };
            c.name = ptr::null_mut();
        }
    }

    /// A Tcl list of byte strings.
    unsafe fn list(&mut self, args: Args) -> *mut Obj {
        let interp = self.vm.interp;
        self.items.clear();
        for a in args.iter() {
            self.items.push(new_string(interp, a));
        }
        Jim_NewListObj(interp, self.items.as_ptr(), self.items.len() as c_int)
    }
}

/// The (owned) name object of a body's proc: `__script_<sha of the body>`.
fn proc_name(interp: *mut Interp, body: &[u8]) -> *mut Obj {
    let sha = super::cache::sha1_hex(body);
    let mut name = b"__script_".to_vec();
    name.extend_from_slice(&sha);
    // SAFETY: a live interpreter; we keep one reference.
    unsafe {
        let o = new_string(interp, &name);
        goblin_jim_incr(o);
        o
    }
}

impl Engine for Tcl {
    fn id(&self) -> EngineId {
        EngineId::Tcl
    }

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        if self.cache.contains(sha) {
            if pinned {
                self.cache.pin(sha);
            }
            return Ok(());
        }
        let flags = super::shebang_flags(EngineId::Tcl, body).map_err(|e| format!("ERR {e}"))?;
        let name = proc_name(self.vm.interp, body);
        if let Err(e) = self.vm.define(name, body) {
            // SAFETY: our reference.
            unsafe { goblin_jim_decr(self.vm.interp, name) };
            return Err(e);
        }
        let artifact = Compiled {
            name,
            body: body.into(),
        };
        for gone in self.cache.insert(*sha, artifact, flags, body.len(), pinned) {
            // SAFETY: objects of this interpreter; the proc goes with its name.
            unsafe {
                Jim_DeleteCommand(self.vm.interp, gone.name);
                goblin_jim_decr(self.vm.interp, gone.name);
            }
            self.vm.mark_clean();
        }
        Ok(())
    }

    fn flags(&self, sha: &Sha) -> Option<super::Flags> {
        self.cache.flags(sha)
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(name) = self.cache.get(sha).map(|c| c.name) else {
            return false;
        };
        let interp = self.vm.interp;
        HOOKS.with(|h| {
            // CONFIG SET tcl-memory-limit takes effect from the next call.
            h.limit.set(run.ctx.srv.config.tcl_memory_limit as usize);
            h.stopped.set(Stopped::No);
            h.countdown.set(HOOK_EVERY);
        });
        // SAFETY: objects are owned as Jim's reference counts say; the `Run` is reached through
        // HOOKS only while the proc runs, and used directly again after it is unset.
        let (rc, stopped) = unsafe {
            let keys = self.list(keys);
            let argv = self.list(argv);
            HOOKS.with(|h| h.run.set(run as *mut Run as *mut c_void));
            let limit = HOOKS.with(|h| h.limit.get());
            let rc = goblin_jim_call(interp, 3, [name, keys, argv].as_ptr(), limit);
            if rc == -1 {
                HOOKS.with(|h| h.stopped.set(Stopped::OutOfMemory));
            }
            HOOKS.with(|h| h.run.set(ptr::null_mut()));
            (rc, HOOKS.with(|h| h.stopped.replace(Stopped::No)))
        };
        let sha_text = run.sha_str().to_string();
        let (resp, limit) = (run.resp, run.ctx.srv.config.tcl_memory_limit);
        let mut sink = Sink::new(run.ctx.out);
        match stopped {
            Stopped::Killed => sink.error(format!("{KILLED_ERROR} script: {sha_text}").as_bytes()),
            Stopped::OutOfMemory => sink.error(
                format!(
                    "ERR Out of memory running script (tcl-memory-limit is {limit} bytes) script: {sha_text}"
                )
                .as_bytes(),
            ),
            // SAFETY: the result is a live object of the interpreter until the next command.
            Stopped::No => unsafe {
                let result = goblin_jim_result(interp);
                match rc {
                    JIM_OK | JIM_RETURN => api::write_result(interp, result, resp, &mut sink),
                    JIM_ERR => api::write_error(interp, result, &sha_text, &mut sink),
                    other => sink.error(
                        format!("ERR script ended with Tcl return code {other} script: {sha_text}")
                            .as_bytes(),
                    ),
                }
            },
        }
        if rc == -1 {
            self.abandon();
        } else if stopped != Stopped::No || !self.vm.is_clean() {
            self.rebuild();
        }
        true
    }

    fn flush(&mut self) {
        self.release_names();
        self.cache.drain();
        self.vm = Vm::new();
    }

    fn memory(&self) -> usize {
        // SAFETY: reads this thread's counter.
        unsafe { goblin_jim_used() }
    }

    fn cache_len(&self) -> usize {
        self.cache.len()
    }

    fn cache_body_bytes(&self) -> usize {
        self.cache.body_bytes()
    }

    fn evicted(&self) -> u64 {
        self.cache.evicted
    }
}

impl Drop for Tcl {
    fn drop(&mut self) {
        self.release_names();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body's parsed form (Jim's `script` representation) is made at load and is the one every
    /// call runs: the proc holds the same body object, still of that type, after each call.
    #[test]
    fn the_body_is_parsed_once_at_load() {
        let mut t = Tcl::new(&crate::config::Config::default());
        let body = b"set x 0\nforeach k $KEYS {incr x}\nreturn $x";
        let sha = crate::script::cache::sha1_hex(body);
        t.load(&sha, body, true).unwrap();
        let interp = t.vm.interp;
        let name = t.cache.get(&sha).unwrap().name;
        // SAFETY: objects of the engine's interpreter; no script calls `redis`.
        unsafe {
            let body_obj = || {
                let objv = [
                    new_string(interp, b"info"),
                    new_string(interp, b"body"),
                    name,
                ];
                assert_eq!(Jim_EvalObjVector(interp, 3, objv.as_ptr()), JIM_OK);
                let o = goblin_jim_result(interp);
                let kind = std::ffi::CStr::from_ptr(goblin_jim_type_name(o));
                (o as usize, kind.to_str().unwrap().to_string())
            };
            let loaded = body_obj();
            assert_eq!(loaded.1, "script");
            for _ in 0..3 {
                let keys = Jim_NewListObj(interp, [new_string(interp, b"a")].as_ptr(), 1);
                let objv = [name, keys, Jim_NewListObj(interp, ptr::null(), 0)];
                assert_eq!(Jim_EvalObjVector(interp, 3, objv.as_ptr()), JIM_OK);
                assert_eq!(bytes(goblin_jim_result(interp)), b"1");
                assert_eq!(body_obj(), loaded);
            }
        }
    }
}
