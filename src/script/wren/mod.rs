//! The Wren engine behind WREN.EVAL, WREN.EVALSHA, WREN.EVAL_RO, WREN.EVALSHA_RO and WREN.SCRIPT:
//! Wren 0.4 (the C source bundled in the `ruwren-sys` crate, patched and compiled by `build.rs`;
//! our binding is `ffi.rs`).
//!
//! # A script
//! Each body is compiled once (at `WREN.SCRIPT LOAD` or the first `WREN.EVAL`) into its own module,
//! named by its digest, as the static method `Script.run(keys, argv)` of a class `Script`:
//!
//! ```text
//! import "redis" for Redis
//! class Script { static run(keys, argv) {
//! <body>
//! } }
//! ```
//!
//! The cache keeps a handle to the class; one call handle `run(_,_)` serves every script, so a
//! call is: slot 0 the class, slots 1 and 2 new lists of byte strings, `wrenCall`, and the result
//! in slot 0 converted through the shared `Sink` (`convert.rs`): `Vm::call`. `Redis` is a class of the module
//! `redis`, loaded once per VM, whose foreign methods are `api.rs`. Host functions find the `Run`
//! through `CURRENT`.
//!
//! # Budget and memory (our patch to the interpreter: `vendor/wren/README.md`)
//! Wren has no interrupt hook, so the patch adds a safe point at every backward jump and every
//! call: every `GOBLIN_CHECK_EVERY` safe points it asks `goblin_wren_check`, which asks
//! `Run::check_budget` (busy replies, SCRIPT KILL, SHUTDOWN NOSAVE). A stop unhooks the whole chain
//! of fibers and ends the call, so `Fiber.try` cannot catch it.
//!
//! Wren does not survive a failed allocation (it rarely checks for NULL), so the memory limit is
//! enforced before the allocator is reached: the patched `wrenReallocate` asks `goblin_wren_admit`
//! and, past `wren-memory-limit` (after one collection), jumps back to `wrenCall`, which ends the
//! call the same uncatchable way. Wren collects at any allocation, so the heap is consistent at
//! every allocation point; the jump only discards the interrupted C frames (and what they kept in
//! temporary roots or the compiler). Allocations made inside a host function (a command's reply
//! turned into Wren values) are never refused, because the jump would cross Rust frames: they are
//! let through, and the next safe point stops the script.
//!
//! At load no code but class definitions may run: a body that closes `run` early and puts code
//! at the module's top level is refused at its first loop or call.
//!
//! # Flush
//! Wren cannot unload a module through its API; the patch adds `goblinWrenRemoveModule`, used when
//! an EVAL-only script is evicted. SCRIPT FLUSH releases every handle and starts a new VM, which
//! also drops what a VM only grows (its table of method names).
//!
//! # Functions
//! Function libraries (FUNCTION LOAD, FCALL) live in a second VM (`functions.rs`), which SCRIPT
//! FLUSH leaves alone. Both VMs are a `Vm`, and a script's run and a function's call are the same
//! `Vm::call`: conversions, budget, memory limit and error replies are one path.

mod api;
mod convert;
mod ffi;
mod functions;

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::time::Instant;

use self::ffi::*;
use super::cache::{ScriptCache, Sha};
use super::function::{LibId, Registered};
use super::heap::Heap;
use super::{Engine, EngineId, Run, Sink, Stop, KILLED_ERROR};
use crate::resp::parser::Args;

/// Lines the module puts before a body's first line (error lines are given in the body's lines).
const PREFIX_LINES: i32 = 2;
const PREFIX: &str = "import \"redis\" for Redis\nclass Script { static run(keys, argv) {\n";
const SUFFIX: &str = "\n} }\n";

thread_local! {
    /// The `Run` of the script executing now (type-erased: it borrows the server for the call).
    static CURRENT: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
}

/// The running script's context, for host functions. Only set inside `Wren::run`.
///
/// # Safety
/// Called only from host functions and the safe-point check, which Wren invokes while `run` holds
/// the `Run` exclusively for the call and does not touch it itself.
unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
    let p = CURRENT.with(|c| c.get());
    unsafe { (p as *mut Run).as_mut() }
}

/// What the VM is doing, for the safe-point check.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Setting up the VM (the core and `redis` modules): never stopped.
    Setup,
    /// Compiling a body: no code may run at a module's top level.
    Load,
    /// Running a script or a function under the budget.
    Run,
    /// Running a library's code at FUNCTION LOAD (no `Run`): stopped past `State::deadline`.
    Library,
}

/// Why a call ended early.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stopped {
    Killed,
    OutOfMemory,
    LoadTime,
}

/// The VM's user data: the allocator's accounts, the limit and what the error callback saw.
struct State {
    /// The VM's blocks; `used()` is what the limit is checked against.
    heap: Heap,
    /// 0: no limit.
    limit: usize,
    /// A host function is running: allocations are never refused (see the module docs).
    in_host: bool,
    /// The limit was passed; the next safe point stops the script.
    over: bool,
    phase: Phase,
    stopped: Option<Stopped>,
    /// The module of the script being loaded or run (stack-trace lines are taken from it).
    module: Vec<u8>,
    /// Lines the VM's modules put before their code (subtracted from error lines).
    prefix_lines: i32,
    /// When a library's loading run must stop (`Phase::Library`).
    deadline: Option<Instant>,
    /// What a library's loading run registered so far (`Some` only during that run:
    /// `Redis.registerFunction` refuses outside it).
    loading: Option<functions::Loading>,
    /// The first compile error (`line: message`), or the runtime error and its line.
    compile_error: Option<(i32, String)>,
    runtime_error: Option<String>,
    error_line: Option<i32>,
    /// Arguments of a `Redis.call`, concatenated, and their spans (reused between calls).
    arg_buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

/// The VM's state, from inside a callback.
///
/// # Safety
/// `vm` is one of our VMs, whose user data is its `State`.
unsafe fn state<'a>(vm: *mut WrenVM) -> &'a mut State {
    unsafe { &mut *(wrenGetUserData(vm) as *mut State) }
}

unsafe extern "C" fn reallocate(p: *mut c_void, size: usize, ud: *mut c_void) -> *mut c_void {
    let st = unsafe { &mut *(ud as *mut State) };
    // SAFETY: every block of this VM comes from its heap.
    let q = unsafe { st.heap.realloc(p, size) };
    if q.is_null() && size > 0 {
        // Wren cannot go on from a failed allocation; the limit keeps requests far below this,
        // so only the system itself running out gets here.
        crate::warning!("Wren: out of memory allocating {size} bytes");
        std::process::abort();
    }
    q
}

/// The patch's question at an allocation inside `wrenCall`: may it grow from `old` to `new`
/// bytes? `last` is set on the second try, after a collection.
///
/// # Safety
/// Called by the patched `wrenReallocate` of one of our VMs.
#[no_mangle]
pub unsafe extern "C" fn goblin_wren_admit(
    vm: *mut WrenVM,
    old: usize,
    new: usize,
    last: c_int,
) -> c_int {
    let st = unsafe { state(vm) };
    if st.limit == 0 || st.heap.used() + (new - old) <= st.limit {
        return 1;
    }
    st.over = true;
    if st.in_host {
        unsafe { goblinWrenInterrupt(vm) };
        return 1;
    }
    if last == 0 {
        // A collection may make room: not yet a stop.
        st.over = false;
    } else {
        st.stopped = Some(Stopped::OutOfMemory);
    }
    0
}

/// The patch's question at a safe point (every `GOBLIN_CHECK_EVERY` loops and calls): nonzero
/// stops the call.
///
/// # Safety
/// Called by the patched interpreter loop of one of our VMs.
#[no_mangle]
pub unsafe extern "C" fn goblin_wren_check(vm: *mut WrenVM) -> c_int {
    let st = unsafe { state(vm) };
    match st.phase {
        Phase::Setup => 0,
        Phase::Load => {
            st.stopped = Some(Stopped::LoadTime);
            1
        }
        Phase::Library => {
            if st.over {
                st.stopped = Some(Stopped::OutOfMemory);
                return 1;
            }
            if st.deadline.is_some_and(|d| Instant::now() > d) {
                st.stopped = Some(Stopped::LoadTime);
                return 1;
            }
            0
        }
        Phase::Run => {
            if st.over {
                st.stopped = Some(Stopped::OutOfMemory);
                return 1;
            }
            // SAFETY: safe points run inside `run`'s `wrenCall`, with CURRENT set.
            let Some(run) = (unsafe { current() }) else {
                return 0;
            };
            match run.check_budget() {
                None => 0,
                Some(Stop::Killed(_)) => {
                    st.stopped = Some(Stopped::Killed);
                    1
                }
            }
        }
    }
}

unsafe extern "C" fn on_error(
    vm: *mut WrenVM,
    kind: c_int,
    module: *const c_char,
    line: c_int,
    message: *const c_char,
) {
    let st = unsafe { state(vm) };
    let text = || {
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    let in_script =
        !module.is_null() && unsafe { CStr::from_ptr(module) }.to_bytes() == &st.module[..];
    match kind {
        WREN_ERROR_COMPILE if st.compile_error.is_none() => {
            st.compile_error = Some(((line - st.prefix_lines).max(1), text()));
        }
        WREN_ERROR_RUNTIME => st.runtime_error = Some(text()),
        WREN_ERROR_STACK_TRACE if in_script && st.error_line.is_none() => {
            st.error_line = Some((line - st.prefix_lines).max(1));
        }
        _ => {}
    }
}

/// Imports a script may make: the `redis` module and Wren's own `random` and `meta` (nothing else
/// exists: no module reaches files, processes or the network, and another script's module is not
/// importable).
unsafe extern "C" fn resolve_module(
    _vm: *mut WrenVM,
    _importer: *const c_char,
    name: *const c_char,
) -> *const c_char {
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"redis" | b"random" | b"meta" => name,
        _ => ptr::null(),
    }
}

/// A compiled script: its class (holding `run`) and its module's name.
struct Compiled {
    class: *mut WrenHandle,
    module: CString,
}

/// A Wren VM with the `redis` module loaded, and its `State` (the VM's user data).
struct Vm {
    raw: *mut WrenVM,
    state: Box<State>,
}

impl Vm {
    /// A full collection (`Engine::collect`, which `Scripting::put` counts the freed bytes of:
    /// the heap's own count starts again).
    fn collect(&mut self) {
        // SAFETY: collecting between calls is always allowed.
        unsafe { wrenCollectGarbage(self.raw) };
        self.state.heap.take_freed();
    }

    /// A new VM whose modules put `prefix_lines` lines before their code, with memory `limit`.
    fn new(limit: usize, prefix_lines: i32) -> Vm {
        let mut state = Box::new(State {
            heap: Heap::default(),
            limit,
            in_host: false,
            over: false,
            phase: Phase::Setup,
            stopped: None,
            module: Vec::new(),
            prefix_lines,
            deadline: None,
            loading: None,
            compile_error: None,
            runtime_error: None,
            error_line: None,
            arg_buf: Vec::new(),
            spans: Vec::new(),
        });
        // SAFETY: the configuration is initialised by Wren and then given our callbacks; the
        // state outlives the VM (`Drop` frees the VM, then the box goes).
        let raw = unsafe {
            let mut config = std::mem::MaybeUninit::<WrenConfiguration>::uninit();
            wrenInitConfiguration(config.as_mut_ptr());
            let mut config = config.assume_init();
            config.reallocate_fn = Some(reallocate);
            config.resolve_module_fn = Some(resolve_module);
            config.load_module_fn = None;
            config.bind_foreign_method_fn = Some(api::bind_foreign_method);
            config.bind_foreign_class_fn = None;
            config.write_fn = None;
            config.error_fn = Some(on_error);
            config.user_data = &mut *state as *mut State as *mut c_void;
            let vm = wrenNewVM(&mut config);
            assert!(!vm.is_null(), "the Wren VM starts");
            let prelude = CString::new(api::prelude()).expect("no NUL in the prelude");
            let st = wrenInterpret(vm, c"redis".as_ptr(), prelude.as_ptr());
            assert_eq!(st, WREN_RESULT_SUCCESS, "the redis module compiles");
            wrenCollectGarbage(vm);
            vm
        };
        Vm { raw, state }
    }

    /// A call handle for `signature` (released by its owner before the VM goes).
    fn call_handle(&self, signature: &CStr) -> *mut WrenHandle {
        // SAFETY: a valid signature on our VM.
        unsafe { wrenMakeCallHandle(self.raw, signature.as_ptr()) }
    }

    /// Readies the state for a new load or call of `module`.
    fn begin(&mut self, module: &[u8]) {
        let st = &mut *self.state;
        st.stopped = None;
        st.over = false;
        st.compile_error = None;
        st.runtime_error = None;
        st.error_line = None;
        st.module.clear();
        st.module.extend_from_slice(module);
    }

    /// Calls `method` on `receiver` with lists of `keys` and `argv` under the budget and the
    /// memory limit, and writes the result, or the error naming `run.script_name()` and a line
    /// of `file` (`module`'s lines), to `run.out()`: EVAL's and FCALL's one path.
    fn call(
        &mut self,
        run: &mut Run,
        (receiver, method): (*mut WrenHandle, *mut WrenHandle),
        [keys, argv]: [Args; 2],
        module: &[u8],
        file: &str,
    ) {
        let vm = self.raw;
        self.begin(module);
        // CONFIG SET wren-memory-limit takes effect from the next call.
        self.state.limit = run.config().wren_memory_limit as usize;
        let run_ptr = run as *mut Run as *mut c_void;
        // SAFETY: slots are set up for the call handle (receiver, keys, argv); host functions and
        // safe points reach the `Run` through CURRENT only while `wrenCall` runs.
        let st = unsafe {
            wrenEnsureSlots(vm, 4);
            wrenSetSlotHandle(vm, 0, receiver);
            set_list(vm, 1, 3, keys);
            set_list(vm, 2, 3, argv);
            CURRENT.with(|c| c.set(run_ptr));
            self.state.phase = Phase::Run;
            let st = wrenCall(vm, method);
            self.state.phase = Phase::Setup;
            CURRENT.with(|c| c.set(ptr::null_mut()));
            st
        };
        if st == WREN_RESULT_SUCCESS {
            let resp = run.resp;
            let mut sink = Sink::new(run.out());
            // SAFETY: after a successful call the result is in slot 0 (no slot at all if the
            // script's fiber yielded or suspended instead of returning: nil).
            unsafe {
                if wrenGetSlotCount(vm) == 0 {
                    sink.null();
                } else {
                    convert::reply(vm, 0, &mut sink, resp);
                }
            }
        } else {
            let text = self.error_text(run.script_name(), file);
            run.out().error(&text);
        }
        let st = &*self.state;
        if st.limit > 0 && st.heap.used() > st.limit / 2 {
            // A script that came close to the limit gives its garbage back now.
            // SAFETY: collecting between calls is always allowed.
            unsafe { wrenCollectGarbage(vm) };
        }
        // What the run (and that collection) gave back to malloc, which may return it to the
        // system (`Scripting::put`).
        crate::alloc::note_freed(self.state.heap.take_freed());
    }

    /// The error reply of a call that failed (`WREN_RESULT_RUNTIME_ERROR`).
    fn error_text(&self, name: &str, file: &str) -> String {
        let st = &*self.state;
        match st.stopped {
            Some(Stopped::Killed) => format!("{KILLED_ERROR} script: {name}"),
            Some(Stopped::OutOfMemory) => format!(
                "ERR Out of memory running script (wren-memory-limit is {} bytes) script: {name}",
                st.limit
            ),
            _ => {
                let mut text = with_code(st.runtime_error.as_deref().unwrap_or("unknown error"));
                text.push_str(&format!(" script: {name}"));
                if let Some(line) = st.error_line {
                    text.push_str(&format!(", on {file}:{line}."));
                }
                text
            }
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        // A VM dropped (SCRIPT FLUSH, a library's VM gone) frees what it held, and had freed
        // since asked.
        crate::alloc::note_freed(self.state.heap.high());
        // SAFETY: its owner released every handle first; no call is running.
        unsafe { wrenFreeVM(self.raw) };
    }
}

pub struct Wren {
    // Field order is drop order: the libraries' VM, then the EVAL VM (`Drop` releases the
    // EVAL VM's handles first).
    /// Function libraries, in a VM of their own (made at the first FUNCTION LOAD).
    functions: Option<Box<functions::Functions>>,
    /// The `run(_,_)` call handle, shared by every script.
    run_handle: *mut WrenHandle,
    cache: ScriptCache<Compiled>,
    vm: Vm,
}

impl Wren {
    pub fn new(config: &crate::config::Config) -> Wren {
        let vm = Vm::new(config.wren_memory_limit as usize, PREFIX_LINES);
        Wren {
            functions: None,
            run_handle: vm.call_handle(c"run(_,_)"),
            cache: ScriptCache::default(),
            vm,
        }
    }

    /// Releases a script's class and forgets its module.
    fn release(&mut self, c: Compiled) {
        // SAFETY: a handle we made in `load`; the module name is its own.
        unsafe {
            wrenReleaseHandle(self.vm.raw, c.class);
            goblinWrenRemoveModule(self.vm.raw, c.module.as_ptr());
        }
    }

    /// Releases every script's handle and the call handle (the VM goes next).
    fn release_all(&mut self) {
        for c in self.cache.drain() {
            // SAFETY: handles we made, released before the VM.
            unsafe { wrenReleaseHandle(self.vm.raw, c.class) };
        }
        // SAFETY: the handle made with the VM.
        unsafe { wrenReleaseHandle(self.vm.raw, self.run_handle) };
    }
}

/// `text` with the `ERR` code unless it starts with one of its own.
fn with_code(text: &str) -> String {
    if has_code(text) {
        text.to_string()
    } else {
        format!("ERR {text}")
    }
}

/// Whether `text` starts with an error code: an upper-case word followed by a space.
fn has_code(text: &str) -> bool {
    match text.split_once(' ') {
        Some((word, _)) => {
            word.starts_with(|c: char| c.is_ascii_uppercase())
                && word
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || b"_-".contains(&c))
        }
        None => false,
    }
}

/// The module source of a body (a shebang line stays, as a comment).
fn wrap(body: &[u8]) -> Result<CString, String> {
    let mut src = Vec::with_capacity(PREFIX.len() + body.len() + SUFFIX.len() + 1);
    src.extend_from_slice(PREFIX.as_bytes());
    src.extend_from_slice(body);
    if body.starts_with(b"#!") {
        src[PREFIX.len()..PREFIX.len() + 2].copy_from_slice(b"//");
    }
    src.extend_from_slice(SUFFIX.as_bytes());
    CString::new(src).map_err(|_| "ERR Error compiling script: the body holds a NUL byte".into())
}

/// Sets `slot` to a new list of `args` (`scratch` is a free slot above it).
unsafe fn set_list(vm: *mut WrenVM, slot: c_int, scratch: c_int, args: Args) {
    unsafe {
        wrenSetSlotNewList(vm, slot);
        for a in args.iter() {
            set_bytes(vm, scratch, a);
            wrenInsertInList(vm, slot, -1, scratch);
        }
    }
}

impl Engine for Wren {
    super::cache::engine_methods!(Wren);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        let Some(flags) = self.cache.to_compile(EngineId::Wren, sha, body, pinned)? else {
            return Ok(());
        };
        let source = wrap(body)?;
        let module = CString::new(&sha[..]).expect("hex digits");
        self.vm.begin(sha);
        self.vm.state.phase = Phase::Load;
        let vm = self.vm.raw;
        // SAFETY: compiling runs the module's top level, which may only define classes: its
        // first loop or call stops it (Phase::Load). Slots are ours between calls.
        let st = unsafe {
            goblinWrenInterrupt(vm);
            wrenInterpret(vm, module.as_ptr(), source.as_ptr())
        };
        self.vm.state.phase = Phase::Setup;
        if st != WREN_RESULT_SUCCESS {
            // SAFETY: a failed module is forgotten so a corrected body can use the name again.
            unsafe { goblinWrenRemoveModule(vm, module.as_ptr()) };
            let s = &*self.vm.state;
            return Err(match (&s.compile_error, s.stopped) {
                (Some((line, msg)), _) => {
                    format!("ERR Error compiling script (new function): user_script:{line}: {msg}")
                }
                (None, Some(Stopped::LoadTime)) => {
                    "ERR Error compiling script: code outside the script's body is not allowed"
                        .into()
                }
                _ => format!(
                    "ERR Error compiling script: {}",
                    s.runtime_error.as_deref().unwrap_or("unknown error")
                ),
            });
        }
        // SAFETY: the module defines `Script` (the body cannot remove it: it is a module
        // variable defined before the body's own code).
        let class = unsafe {
            wrenEnsureSlots(vm, 1);
            wrenGetVariable(vm, module.as_ptr(), c"Script".as_ptr(), 0);
            wrenGetSlotHandle(vm, 0)
        };
        let artifact = Compiled { class, module };
        for gone in self.cache.insert(*sha, artifact, flags, body.len(), pinned) {
            self.release(gone);
        }
        Ok(())
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(class) = self.cache.get(sha).map(|c| c.class) else {
            return false;
        };
        self.vm.call(
            run,
            (class, self.run_handle),
            [keys, argv],
            sha,
            "user_script",
        );
        true
    }

    fn flush(&mut self) {
        self.release_all();
        let limit = self.vm.state.limit;
        self.vm = Vm::new(limit, PREFIX_LINES);
        self.run_handle = self.vm.call_handle(c"run(_,_)");
    }

    fn memory(&self) -> usize {
        self.vm.state.heap.used()
    }

    fn load_library(&mut self, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
        let limit = self.vm.state.limit;
        self.functions
            .get_or_insert_with(|| Box::new(functions::Functions::new(limit)))
            .load(lib, code, limit)
    }

    fn call_function(&mut self, run: &mut Run, lib: LibId, index: usize, keys: Args, args: Args) {
        match self.functions.as_mut() {
            Some(f) => f.call(run, lib, index, [keys, args]),
            None => run.out().error("ERR Function not found"),
        }
    }

    fn drop_library(&mut self, lib: LibId) {
        if let Some(f) = self.functions.as_mut() {
            f.drop_library(lib);
            // The VM's method-name table only grows: with no library left, a fresh VM next time.
            if f.is_empty() {
                self.functions = None;
            }
        }
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        // A library's loading run takes this limit.
        self.vm.state.limit = bytes;
    }

    fn functions_memory(&self) -> usize {
        self.functions.as_ref().map_or(0, |f| f.memory())
    }

    fn collect(&mut self) {
        self.vm.collect();
        if let Some(f) = self.functions.as_mut() {
            f.collect();
        }
    }
}

impl Drop for Wren {
    fn drop(&mut self) {
        self.release_all();
    }
}
