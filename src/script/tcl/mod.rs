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
//! Jim has no interrupt hook, so our patch adds one (`Jim_InterruptHook`), asked after every
//! command, on the fast paths Jim takes for `{}` and `incr v` loop bodies, and every 100 steps of
//! the glob matcher (`string match` can backtrack for ever inside one command); glue.c counts the
//! calls and asks our `check` every thousandth (it asks `Run::check_budget`), and at once when the
//! memory limit is passed. Once the script must stop it answers "stop" on every call, which ends
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
//!
//! # Functions
//! Function libraries (`functions.rs`) each get an interpreter of their own, with its own memory
//! arena (glue.c), so SCRIPT FLUSH, a rebuild or an abandoned interpreter here never touches them;
//! a function runs through the same `execute` as a script.

mod api;
mod ffi;
mod functions;

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::time::Instant;

use self::ffi::*;
use super::cache::{ScriptCache, Sha};
use super::{Engine, EngineId, Run, Sink, Stop, KILLED_ERROR};
use crate::resp::parser::Args;

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
    /// The memory limit (0: none).
    limit: Cell<usize>,
    /// When a library's loading run (which has no `Run`) must stop.
    deadline: Cell<Option<Instant>>,
}

thread_local! {
    static HOOKS: Hooks = const {
        Hooks {
            run: Cell::new(ptr::null_mut()),
            stopped: Cell::new(Stopped::No),
            limit: Cell::new(0),
            deadline: Cell::new(None),
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

/// The engine's check behind our patch's interrupt hook (glue.c calls it every thousandth command,
/// when the arena is past the cap, and after every command once it said stop): non-zero stops the
/// script (or the loading run).
unsafe extern "C" fn check(_interp: *mut Interp) -> c_int {
    HOOKS.with(|h| {
        let deadline = h.deadline.get();
        if h.run.get().is_null() && deadline.is_none() {
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
        if let Some(deadline) = deadline {
            if Instant::now() > deadline {
                h.stopped.set(Stopped::Killed);
                return 1;
            }
            return 0;
        }
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
            INSTALL.call_once(|| goblin_jim_set_check(check));
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
            let r = if let Some(missing) = incomplete(self.interp, body) {
                Err(format!(
                    "ERR Error compiling script (new function): missing {missing}"
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

/// What a body that does not parse lacks (`close-brace`...); `None` if it parses.
///
/// # Safety
/// `body` is a live object of `interp`.
unsafe fn incomplete(interp: *mut Interp, body: *mut Obj) -> Option<&'static str> {
    let mut missing: std::ffi::c_char = 0;
    if Jim_ScriptIsComplete(interp, body, &mut missing) != 0 {
        return None;
    }
    Some(match missing as u8 {
        b'{' => "close-brace",
        b'[' => "close-bracket",
        b'"' => "quote",
        _ => "terminator",
    })
}

/// Makes an arena the one new Jim blocks go to while it lives (glue.c); the previous one after.
struct InArena(*mut Arena);

impl InArena {
    fn enter(arena: *mut Arena) -> InArena {
        // SAFETY: the arena is live (or null, the EVAL interpreter's).
        InArena(unsafe { goblin_jim_arena_use(arena) })
    }
}

impl Drop for InArena {
    fn drop(&mut self) {
        // SAFETY: as `enter`.
        unsafe { goblin_jim_arena_use(self.0) };
    }
}

/// A Tcl list of byte strings (`items` is a reused buffer).
///
/// # Safety
/// `interp` is live.
unsafe fn list(interp: *mut Interp, items: &mut Vec<*mut Obj>, args: Args) -> *mut Obj {
    items.clear();
    for a in args.iter() {
        items.push(new_string(interp, a));
    }
    Jim_NewListObj(interp, items.as_ptr(), items.len() as c_int)
}

/// What a run left of its interpreter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    /// Still usable, if still clean (`Vm::is_clean`).
    Kept,
    /// Killed or past the memory limit between two commands: to be rebuilt.
    Stopped,
    /// A memory cap jumped out of it mid-command: its arena is to be cleared, the interpreter
    /// never touched again.
    Abandoned,
}

/// Runs the command `objv` (a script's proc, or a function's callback, then the keys and the
/// arguments) as a script run in `interp`: the interrupt hook asks `run`'s budget, allocations are
/// capped at `tcl-memory-limit`, and the result or the error (naming `run.script_name()`) is
/// written to `run.out()`.
///
/// # Safety
/// `interp` is live and its arena the current one; `objv` are objects of it.
unsafe fn execute(interp: *mut Interp, objv: &[*mut Obj], run: &mut Run) -> After {
    let limit = run.config().tcl_memory_limit as usize;
    HOOKS.with(|h| {
        // CONFIG SET tcl-memory-limit takes effect from the next call.
        h.limit.set(limit);
        h.stopped.set(Stopped::No);
        // The `Run` is reached through HOOKS only while the command runs, and used directly
        // again after it is unset.
        h.run.set(run as *mut Run as *mut c_void);
    });
    let rc = goblin_jim_call(interp, objv.len() as c_int, objv.as_ptr(), limit);
    let stopped = HOOKS.with(|h| {
        h.run.set(ptr::null_mut());
        let stopped = h.stopped.replace(Stopped::No);
        if rc == -1 {
            Stopped::OutOfMemory
        } else {
            stopped
        }
    });
    let resp = run.resp;
    // The result is a live object of the interpreter until the next command (an interpreter a
    // stop abandoned is not read).
    if stopped == Stopped::No && matches!(rc, JIM_OK | JIM_RETURN) {
        let result = goblin_jim_result(interp);
        api::write_result(interp, result, resp, &mut Sink::new(run.out()));
    } else {
        // Errors name the script (a copy: the sink borrows the run's reply).
        let name = run.script_name().to_string();
        let mut sink = Sink::new(run.out());
        match (stopped, rc) {
            (Stopped::Killed, _) => sink.error(format!("{KILLED_ERROR} script: {name}").as_bytes()),
            (Stopped::OutOfMemory, _) => sink.error(
                format!(
                    "ERR Out of memory running script (tcl-memory-limit is {limit} bytes) script: {name}"
                )
                .as_bytes(),
            ),
            (_, JIM_ERR) => api::write_error(interp, goblin_jim_result(interp), &name, &mut sink),
            (_, other) => sink.error(
                format!("ERR script ended with Tcl return code {other} script: {name}").as_bytes(),
            ),
        }
    }
    match (rc, stopped) {
        (-1, _) => After::Abandoned,
        (_, Stopped::No) => After::Kept,
        _ => After::Stopped,
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
    functions: functions::Functions,
}

impl Tcl {
    pub fn new(config: &crate::config::Config) -> Tcl {
        HOOKS.with(|h| h.limit.set(config.tcl_memory_limit as usize));
        Tcl {
            cache: ScriptCache::default(),
            vm: Vm::new(),
            items: Vec::new(),
            functions: functions::Functions::default(),
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
        // What the stopped script held (up to the limit) goes back to malloc, and from there to
        // the system (`Scripting::put`).
        // SAFETY: reads the EVAL interpreter's counter.
        crate::alloc::note_freed(unsafe { goblin_jim_arena_used(ptr::null_mut()) });
        // SAFETY: nothing refers to the abandoned interpreter's blocks any more.
        unsafe { goblin_jim_arena_clear(ptr::null_mut()) };
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
    super::cache::engine_methods!(Tcl);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        let Some(flags) = self.cache.to_compile(EngineId::Tcl, sha, body, pinned)? else {
            return Ok(());
        };
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

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(name) = self.cache.get(sha).map(|c| c.name) else {
            return false;
        };
        let interp = self.vm.interp;
        // SAFETY: objects of the EVAL interpreter, whose arena is the current one.
        let after = unsafe {
            let keys = list(interp, &mut self.items, keys);
            let argv = list(interp, &mut self.items, argv);
            execute(interp, &[name, keys, argv], run)
        };
        match after {
            After::Abandoned => self.abandon(),
            After::Stopped => self.rebuild(),
            After::Kept if !self.vm.is_clean() => self.rebuild(),
            After::Kept => {}
        }
        true
    }

    fn flush(&mut self) {
        self.release_names();
        self.cache.drain();
        self.vm = Vm::new();
    }

    fn memory(&self) -> usize {
        // SAFETY: reads the EVAL interpreter's counter.
        unsafe { goblin_jim_arena_used(ptr::null_mut()) }
    }

    fn load_library(
        &mut self,
        lib: super::function::LibId,
        code: &[u8],
    ) -> Result<Vec<super::function::Registered>, String> {
        self.functions.load(lib, code)
    }

    fn call_function(
        &mut self,
        run: &mut Run,
        lib: super::function::LibId,
        index: usize,
        keys: Args,
        args: Args,
    ) {
        self.functions.call(run, lib, index, keys, args);
    }

    fn drop_library(&mut self, lib: super::function::LibId) {
        self.functions.drop_library(lib);
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        // The cap a library's loading run (and the next script) gets.
        HOOKS.with(|h| h.limit.set(bytes));
    }

    fn functions_memory(&self) -> usize {
        self.functions.memory()
    }

    fn collect(&mut self) {
        // Jim frees objects by reference count but pools every freed one for reuse, as many as a
        // script once had alive: a fresh interpreter (nothing passes between runs anyway) lets
        // them go. A function library's interpreter holds the library's state and keeps its pool.
        self.rebuild();
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
