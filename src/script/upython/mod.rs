//! The MicroPython engine behind UPYTHON.EVAL, UPYTHON.EVALSHA, UPYTHON.EVAL_RO, UPYTHON.EVALSHA_RO
//! and UPYTHON.SCRIPT.
//!
//! # Where MicroPython comes from
//! MicroPython 1.25 (its embed port), built by `build.rs` from Debian's source package with our
//! port files in `vendor/micropython/` (see its README): one relocatable object in which only the
//! glue's `goblin_upy_*` functions are global.
//!
//! # The split between C and Rust
//! MicroPython raises with nlr (setjmp/longjmp), which must never cross a Rust frame, so every
//! MicroPython object is touched in C (`vendor/micropython/glue.c`): each entry point catches its
//! own nlr, and C calls back into Rust only for what Rust owns — running a command
//! (`goblin_upy_host_call`, which walks the reply into Python values through `goblin_upy_build`,
//! one protected step at a time), the budget check, logging, SHA1 — and for writing the script's
//! result through the `Sink` (`goblin_upy_out`). Rust never allocates in the VM.
//!
//! # A script
//! `load` wraps the body as `def __script(KEYS, ARGV):` with every line indented by one tab (Python's
//! tab stops keep the body's own indentation, whatever it is) and compiles it once; the function
//! is kept in a rooted list, and its index is the cache's artifact. `run` calls it with KEYS and
//! ARGV as lists of `bytes`; what it returns is the reply. The globals a script sets are dropped
//! after each run, so nothing passes from one run to the next.
//!
//! # Functions
//! FUNCTION LOAD `#!python name=...` libraries live in the same VM (see `functions.rs`); FCALL runs
//! a library's callback through the same `invoke` as EVAL runs a script, errors naming the
//! function and its line in `user_function`.
//!
//! # Budget and limits
//! The VM calls our hook every 1000 backward jumps and returns, and loops inside builtins and
//! big-integer arithmetic call the native hook every 1000 steps (our patch, `vendor/micropython/`);
//! every `CHECK_EVERY` hooks ask `Run::check_budget`, and so does every garbage collection (with
//! the heap full, each allocation collects). A kill is delivered as a scheduled `KeyboardInterrupt`
//! (raised at once inside a native loop) and re-armed at every later jump and return, so
//! `except BaseException:` cannot swallow it; the reply is the kill error whatever the script
//! does. Compiling, before the script runs, stops at `COMPILE_TIMEOUT_MS`. Memory: the GC heap
//! is fixed (`upython-memory-limit`), so running out is a `MemoryError` (an error reply unless
//! the script catches it), never a crash. MicroPython's state is global: one VM per process (a
//! second server in the same process, as some unit tests start, gets an engine that refuses
//! scripts).

mod functions;

use std::cell::Cell;
use std::ffi::{c_int, c_long, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::cache::{ScriptCache, Sha};
use super::resp::{walk, Aggregate, ReplyBuilder};
use super::{Engine, EngineId, Run, Sink, Stop};
use crate::config::REDIS_VERSION;
use crate::resp::parser::Args;

/// VM hooks (each every 1000 jumps or returns) between two budget checks.
const CHECK_EVERY: u32 = 10;

/// How long compiling a script may take. It happens before the script runs, outside the busy
/// machinery (no BUSY replies, no SCRIPT KILL), so it has a limit of its own; a source that reaches
/// it (megabytes, or thousands of distinct constants or names, which MicroPython's compiler
/// searches linearly) is refused.
const COMPILE_TIMEOUT_MS: u64 = 1000;

/// What the body is wrapped in: its lines follow, each after a tab.
const PREFIX: &[u8] = b"def __script(KEYS, ARGV):\n\t";
const SUFFIX: &[u8] = b"\n\tpass\n";

/// One argument of `redis.call` as C hands it over (`goblin_arg_t`).
#[repr(C)]
struct Arg {
    p: *const u8,
    len: usize,
    /// 0: the bytes `p`/`len`; 1: the integer `i`; 2: the float `d`.
    kind: c_int,
    i: i64,
    d: f64,
    keep: *mut c_void,
}

/// A byte string handed to C (`goblin_bytes_t`).
#[repr(C)]
struct Bytes {
    p: *const u8,
    len: usize,
}

extern "C" {
    fn goblin_upy_init(
        size: usize,
        version: *const u8,
        version_len: usize,
        version_num: i64,
    ) -> c_int;
    fn goblin_upy_deinit();
    fn goblin_upy_memory(collect: c_int, used: *mut usize, total: *mut usize);
    fn goblin_upy_compile(
        src: *const u8,
        len: usize,
        err: *mut u8,
        err_len: *mut usize,
        line: *mut i64,
    ) -> c_long;
    fn goblin_upy_release(slot: c_long);
    fn goblin_upy_run(
        slot: c_long,
        index: c_long,
        keys: *const Bytes,
        n_keys: usize,
        argv: *const Bytes,
        n_argv: usize,
        sink: *mut c_void,
    );
    fn goblin_upy_build(op: c_int, i: i64, d: f64, p: *const u8, len: usize) -> c_int;
}

// Reply sink operations (`goblin_upy_out`), as in glue.c.
const OUT_INT: c_int = 0;
const OUT_FLOAT: c_int = 1;
const OUT_BULK: c_int = 2;
const OUT_NULL: c_int = 3;
const OUT_BOOL: c_int = 4;
const OUT_DOUBLE: c_int = 5;
const OUT_ARRAY: c_int = 6;
const OUT_MAP: c_int = 7;
const OUT_SET: c_int = 8;
const OUT_STATUS: c_int = 9;
const OUT_ERROR: c_int = 10;
const OUT_BIG: c_int = 11;
const OUT_ENTER: c_int = 12;
const OUT_LEAVE: c_int = 13;
const OUT_UNSUPPORTED: c_int = 14;
const OUT_RAISED_REDIS: c_int = 15;
const OUT_RAISED: c_int = 16;
const OUT_RAISED_MEMORY: c_int = 17;
const OUT_FAILED: c_int = 18;

// Build operations (`goblin_upy_build`), as in glue.c.
const B_INT: c_int = 0;
const B_BYTES: c_int = 1;
const B_STR: c_int = 2;
const B_FLOAT: c_int = 3;
const B_BOOL: c_int = 4;
const B_NONE: c_int = 5;
const B_BIG: c_int = 6;
const B_LIST: c_int = 7;
const B_DICT: c_int = 8;
const B_SET: c_int = 9;
const B_ITEM_LIST: c_int = 10;
const B_ITEM_DICT: c_int = 11;
const B_ITEM_SET: c_int = 12;
const B_WRAP_OK: c_int = 13;
const B_WRAP_ERR: c_int = 14;

/// Whether a `MicroPython` owns the process's one VM.
static VM_TAKEN: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The `Run` of the script executing now (type-erased: it borrows the server for the call).
    static CURRENT: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
    /// Hooks left before the next budget check.
    static TICKS: Cell<u32> = const { Cell::new(CHECK_EVERY) };
    /// Set when the budget check says stop (SCRIPT KILL, shutdown, a compile past its time).
    static KILLED: Cell<bool> = const { Cell::new(false) };
    /// While a script compiles: when it must stop.
    static COMPILE_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The running script's context, for host functions and the hook. Only set inside `run`.
///
/// # Safety
/// Called only from callbacks C makes while `run` is inside `goblin_upy_run`, which holds the
/// `Run` exclusively for the call without touching it.
unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
    let p = CURRENT.with(|c| c.get());
    unsafe { (p as *mut Run).as_mut() }
}

/// A cached script: the function's slot in the VM's roots, and the body (compiled again when the
/// VM restarts with another heap size).
struct Script {
    slot: c_long,
    body: Box<[u8]>,
}

pub struct MicroPython {
    cache: ScriptCache<Script>,
    /// Function libraries (`functions.rs`), in the same VM as the scripts.
    libs: functions::Libs,
    /// The heap size the VM runs with; 0 when this instance does not own the VM.
    heap: usize,
    /// KEYS and ARGV for C, kept between runs so no run allocates them.
    keys: Vec<Bytes>,
    argv: Vec<Bytes>,
}

impl MicroPython {
    pub fn new(config: &crate::config::Config) -> MicroPython {
        let mut engine = MicroPython {
            cache: ScriptCache::default(),
            libs: functions::Libs::default(),
            heap: 0,
            keys: Vec::new(),
            argv: Vec::new(),
        };
        if VM_TAKEN
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            engine.start(config.upython_memory_limit as usize);
        }
        engine
    }

    fn start(&mut self, heap: usize) {
        let num = super::redis_api::redis_version_num();
        // SAFETY: this instance owns the process's VM (VM_TAKEN), which is not running.
        let st = unsafe {
            goblin_upy_init(
                heap,
                REDIS_VERSION.as_ptr(),
                REDIS_VERSION.len(),
                num as i64,
            )
        };
        assert!(st == 0, "the MicroPython VM starts on a {heap}-byte heap");
        self.heap = heap;
    }

    /// Restarts the VM on a heap of `heap` bytes, compiles the cached scripts and loads the
    /// function libraries again (one that no longer fits keeps slot -1 and fails when run).
    fn restart(&mut self, heap: usize) {
        // SAFETY: the VM is ours and idle.
        unsafe { goblin_upy_deinit() };
        self.start(heap);
        for script in self.cache.artifacts_mut() {
            script.slot = compile(&script.body).unwrap_or(-1);
        }
        self.libs.reload();
    }

    /// CONFIG SET upython-memory-limit: a new heap before the next script or function.
    fn follow_limit(&mut self, run: &Run) {
        let heap = run.config().upython_memory_limit as usize;
        if heap != self.heap {
            self.restart(heap);
        }
    }

    /// The error of a script or function whose code no longer fits the heap.
    fn no_room(&self, run: &mut Run, what: &str) {
        run.out().error(&format!(
            "ERR Error compiling {what}: not enough memory (upython-memory-limit is {} bytes)",
            self.heap
        ));
    }

    /// Runs a script (`index` -1: the function in `slot`) or function `index` of the library in
    /// `slot` with KEYS and ARGV, writing its reply (or error, naming `Run::script_name` and the
    /// line in `file`) through the `Sink`, under the budget: EVAL's and FCALL's one path.
    fn invoke(
        &mut self,
        run: &mut Run,
        (slot, index): (c_long, c_long),
        file: &'static str,
        keys: Args,
        argv: Args,
    ) {
        fill(&mut self.keys, keys);
        fill(&mut self.argv, argv);
        let mark = (run.out().buf.len(), run.out().errors.len());
        TICKS.with(|t| t.set(CHECK_EVERY));
        KILLED.with(|k| k.set(false));
        let run_ptr = run as *mut Run as *mut c_void;
        CURRENT.with(|c| c.set(run_ptr));
        let mut out = Out {
            run: run_ptr,
            sink: None,
            resp: 2,
            heap: self.heap,
            mark: mark.0,
            file,
        };
        // SAFETY: the VM is ours and idle; KEYS/ARGV point into `keys`/`argv`, alive for the call.
        // Host callbacks reach the `Run` through CURRENT while the script runs; `out` reaches it
        // once the script is over (its first operation clears CURRENT).
        unsafe {
            goblin_upy_run(
                slot,
                index,
                self.keys.as_ptr(),
                self.keys.len(),
                self.argv.as_ptr(),
                self.argv.len(),
                &mut out as *mut Out as *mut c_void,
            );
        }
        CURRENT.with(|c| c.set(ptr::null_mut()));
        self.keys.clear();
        self.argv.clear();
        if KILLED.with(|k| k.replace(false)) {
            run.out().truncate(mark.0);
            run.out().errors.truncate(mark.1);
            let msg = format!("{} script: {}", super::KILLED_ERROR, run.script_name());
            run.out().error(&msg);
        }
        collect_if_full();
    }
}

/// After a run that came close to the limit, its garbage is given back at once.
fn collect_if_full() {
    let mut used = 0;
    let mut total = 0;
    // SAFETY: the VM is idle; a collection between runs is always allowed.
    unsafe { goblin_upy_memory(0, &mut used, &mut total) };
    if used > total / 2 {
        let before = used;
        unsafe { goblin_upy_memory(1, &mut used, &mut total) };
        crate::alloc::note_freed(before.saturating_sub(used));
    }
}

impl Drop for MicroPython {
    fn drop(&mut self) {
        if self.heap > 0 {
            // SAFETY: the VM is ours and idle.
            unsafe { goblin_upy_deinit() };
            VM_TAKEN.store(false, Ordering::Release);
        }
    }
}

/// The body as the module source `load` compiles: `def __script(KEYS, ARGV):` and every line of the
/// body after a tab (after `\n`, and after a lone `\r`, which MicroPython also ends a line with).
fn wrap_body(body: &[u8]) -> Vec<u8> {
    let mut src = Vec::with_capacity(PREFIX.len() + body.len() + body.len() / 16 + SUFFIX.len());
    src.extend_from_slice(PREFIX);
    for (i, &c) in body.iter().enumerate() {
        src.push(c);
        if c == b'\n' || (c == b'\r' && body.get(i + 1) != Some(&b'\n')) {
            src.push(b'\t');
        }
    }
    src.extend_from_slice(SUFFIX);
    src
}

/// Compiles a body; the slot of its function, or the error reply text.
fn compile(body: &[u8]) -> Result<c_long, String> {
    let src = wrap_body(body);
    let mut err = [0u8; 512];
    let mut err_len = 0;
    let mut line = 0;
    TICKS.with(|t| t.set(CHECK_EVERY));
    KILLED.with(|k| k.set(false));
    COMPILE_DEADLINE.with(|d| {
        d.set(Some(
            Instant::now() + Duration::from_millis(COMPILE_TIMEOUT_MS),
        ))
    });
    // SAFETY: the VM is ours and idle; C writes at most 512 bytes of error text.
    let slot = unsafe {
        goblin_upy_compile(
            src.as_ptr(),
            src.len(),
            err.as_mut_ptr(),
            &mut err_len,
            &mut line,
        )
    };
    COMPILE_DEADLINE.with(|d| d.set(None));
    if KILLED.with(|k| k.replace(false)) {
        return Err(format!(
            "ERR Error compiling script: compiling took longer than {COMPILE_TIMEOUT_MS} ms"
        ));
    }
    if slot >= 0 {
        return Ok(slot);
    }
    let msg = String::from_utf8_lossy(&err[..err_len.min(err.len())]);
    Err(if line > 0 {
        format!("ERR Error compiling script: {msg} (user_script:{line})")
    } else {
        format!("ERR Error compiling script: {msg}")
    })
}

impl Engine for MicroPython {
    super::cache::engine_methods!(MicroPython);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        if self.cache.loaded(sha, pinned) {
            return Ok(());
        }
        if self.heap == 0 {
            return Err("ERR the MicroPython engine runs in another server of this process".into());
        }
        let flags =
            super::shebang_flags(EngineId::MicroPython, body).map_err(|e| format!("ERR {e}"))?;
        let slot = compile(body)?;
        let script = Script {
            slot,
            body: body.into(),
        };
        for gone in self.cache.insert(*sha, script, flags, body.len(), pinned) {
            // SAFETY: a slot we filled in `compile`; the VM is idle.
            unsafe { goblin_upy_release(gone.slot) };
        }
        Ok(())
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        if !self.cache.contains(sha) {
            return false;
        }
        self.follow_limit(run);
        let Some(slot) = self.cache.get(sha).map(|s| s.slot) else {
            return false;
        };
        if slot < 0 {
            self.no_room(run, "script");
        } else {
            self.invoke(run, (slot, -1), "user_script", keys, argv);
        }
        true
    }

    fn flush(&mut self) {
        self.cache.drain();
        if self.heap > 0 {
            // A fresh VM: nothing of the flushed scripts (their qstrs included) stays.
            let heap = self.heap;
            self.restart(heap);
        }
    }

    fn memory(&self) -> usize {
        if self.heap == 0 {
            return 0;
        }
        let mut used = 0;
        let mut total = 0;
        // SAFETY: reading the GC's counters; the VM is idle.
        unsafe { goblin_upy_memory(0, &mut used, &mut total) };
        used
    }

    fn load_library(
        &mut self,
        lib: super::function::LibId,
        code: &[u8],
    ) -> Result<Vec<super::function::Registered>, String> {
        if self.heap == 0 {
            return Err("the MicroPython engine runs in another server of this process".into());
        }
        self.libs.load(lib, code)
    }

    fn call_function(
        &mut self,
        run: &mut Run,
        lib: super::function::LibId,
        index: usize,
        keys: Args,
        args: Args,
    ) {
        self.follow_limit(run);
        match self.libs.slot(lib, index) {
            None => run.out().error("ERR Function not found"),
            Some(slot) if slot < 0 => self.no_room(run, "function"),
            Some(slot) => self.invoke(run, (slot, index as c_long), "user_function", keys, args),
        }
    }

    fn drop_library(&mut self, lib: super::function::LibId) {
        self.libs.drop_library(lib);
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        // The limit is the heap's size: a new heap now (0: the VM belongs to another server).
        if self.heap != 0 && bytes != self.heap {
            self.restart(bytes);
        }
    }

    fn collect(&mut self) {
        if self.heap > 0 {
            let (mut used, mut total) = (0, 0);
            // SAFETY: the VM is ours and idle; a collection between runs is always allowed.
            unsafe { goblin_upy_memory(1, &mut used, &mut total) };
        }
    }
}

fn fill(to: &mut Vec<Bytes>, args: Args) {
    to.clear();
    to.extend(args.iter().map(|a| Bytes {
        p: a.as_ptr(),
        len: a.len(),
    }));
}

// ---- Callbacks from C ----

/// The VM and native hooks ask whether the script must stop (1) every `CHECK_EVERY` calls; a
/// garbage collection asks `at_once` (each is a walk of the heap).
#[no_mangle]
extern "C" fn goblin_upy_budget(at_once: c_int) -> c_int {
    let left = TICKS.with(|t| t.get());
    if left > 1 && at_once == 0 {
        TICKS.with(|t| t.set(left - 1));
        return 0;
    }
    TICKS.with(|t| t.set(CHECK_EVERY));
    // SAFETY: hooks run inside `goblin_upy_run`, with CURRENT set (or null once replying).
    let Some(run) = (unsafe { current() }) else {
        // No script: a library's loading run or a script compiling, stopped past its time.
        let compile_expired = COMPILE_DEADLINE
            .with(|d| d.get())
            .is_some_and(|deadline| Instant::now() > deadline);
        if functions::load_expired() || compile_expired {
            KILLED.with(|k| k.set(true));
            return 1;
        }
        return 0;
    };
    match run.check_budget() {
        None => 0,
        Some(Stop::Killed(_)) => {
            KILLED.with(|k| k.set(true));
            1
        }
    }
}

/// `redis.call` (`raise` 1) and `redis.pcall`: runs the command and builds its reply onto C's build
/// stack. 0: the value is built; 1: the error text is built, to raise; 2: building failed (C raises
/// what it caught); 3: no script is running.
#[no_mangle]
unsafe extern "C" fn goblin_upy_host_call(args: *const Arg, n: usize, raise: c_int) -> c_int {
    // SAFETY: host functions run inside `goblin_upy_run`, with CURRENT set.
    let Some(run) = (unsafe { current() }) else {
        return 3;
    };
    // SAFETY: C passes `n` arguments whose bytes stay alive (on its stack) for the call.
    let args = unsafe { std::slice::from_raw_parts(args, n) };
    // Numbers travel as text: integers in decimal, floats as Python's repr.
    use std::fmt::Write;
    let mut numbers = String::new();
    let mut spans = Vec::new();
    for a in args {
        let start = numbers.len();
        let _ = match a.kind {
            1 => write!(numbers, "{}", a.i),
            2 => write!(numbers, "{:?}", a.d),
            _ => Ok(()),
        };
        spans.push((start, numbers.len()));
    }
    let reply = run.call(args.iter().zip(&spans).map(|(a, &(s, e))| {
        if a.kind == 0 {
            // SAFETY: see above.
            unsafe { std::slice::from_raw_parts(a.p, a.len) }
        } else {
            &numbers.as_bytes()[s..e]
        }
    }));
    let mut b = Builder { failed: false };
    if raise != 0 && reply.first() == Some(&b'-') {
        let end = memchr::memchr(b'\r', reply).unwrap_or(reply.len());
        let text = error_text(&reply[1..end]);
        b.op(B_STR, 0, 0.0, &text);
        return if b.failed { 2 } else { 1 };
    }
    walk(reply, &mut b);
    if b.failed {
        2
    } else {
        0
    }
}

/// An error reply's line as a script sees it: `CODE message`, or `ERR message` when it has no code.
fn error_text(line: &[u8]) -> Vec<u8> {
    if memchr::memchr(b' ', line).is_some() {
        line.to_vec()
    } else {
        [b"ERR ", line].concat()
    }
}

#[no_mangle]
unsafe extern "C" fn goblin_upy_host_log(level: c_int, p: *const u8, len: usize) {
    // SAFETY: C passes its buffer for the call.
    let msg = unsafe { std::slice::from_raw_parts(p, len) };
    let level = match level {
        0 => crate::log::Level::Debug,
        1 => crate::log::Level::Verbose,
        2 => crate::log::Level::Notice,
        _ => crate::log::Level::Warning,
    };
    crate::log::log(level, &String::from_utf8_lossy(msg));
}

#[no_mangle]
extern "C" fn goblin_upy_host_setresp(resp: c_int) {
    // SAFETY: host functions run inside `goblin_upy_run`, with CURRENT set.
    if let Some(run) = unsafe { current() } {
        run.resp = resp as u8;
    }
}

#[no_mangle]
unsafe extern "C" fn goblin_upy_host_sha1hex(p: *const u8, len: usize, out: *mut u8) {
    // SAFETY: C passes the bytes and a 40-byte buffer for the call.
    unsafe {
        let digest = super::cache::sha1_hex(std::slice::from_raw_parts(p, len));
        ptr::copy_nonoverlapping(digest.as_ptr(), out, 40);
    }
}

/// Where the script's result goes: the `Sink`, made at the first operation (the script is over
/// then, so no host function holds the `Run` any more).
struct Out {
    /// The `Run` (type-erased, as CURRENT).
    run: *mut c_void,
    /// Borrows the `Run`'s reply buffer; lives only inside `goblin_upy_run`.
    sink: Option<Sink<'static>>,
    resp: u8,
    heap: usize,
    /// Where the reply starts in the buffer (cut on `OUT_FAILED`).
    mark: usize,
    /// What error lines are counted in: `user_script` (EVAL) or `user_function` (FCALL).
    file: &'static str,
}

/// One step of writing the script's result. Returns 0 only for `OUT_ENTER` past the nesting limit
/// (the sink has written the error element instead).
#[no_mangle]
unsafe extern "C" fn goblin_upy_out(
    out: *mut c_void,
    op: c_int,
    i: i64,
    d: f64,
    p: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: `out` is the `Out` that `run` passed to `goblin_upy_run`, alive for the call; the
    // bytes are C's for the call.
    let (out, bytes) = unsafe {
        let out = &mut *(out as *mut Out);
        let bytes = if p.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(p, len)
        };
        (out, bytes)
    };
    if out.sink.is_none() {
        CURRENT.with(|c| c.set(ptr::null_mut()));
        // SAFETY: the script is over; `run` is not borrowed elsewhere until `goblin_upy_run` ends.
        let run = unsafe { &mut *(out.run as *mut Run) };
        out.resp = run.resp;
        out.sink = Some(Sink::new(run.out()));
    }
    let (heap, file) = (out.heap, out.file);
    // SAFETY: as above; only the name (the function's, else the sha) is read, on error paths.
    let run_ptr = out.run as *const Run;
    let name = || unsafe { (*run_ptr).script_name().to_owned() };
    let resp = out.resp;
    let sink = out.sink.as_mut().expect("made above");
    match op {
        OUT_INT => sink.int(i),
        // A float replies as an integer, truncated toward zero (as Redis's Lua numbers).
        OUT_FLOAT => sink.number(d),
        OUT_BULK => sink.bulk(bytes),
        OUT_NULL => sink.null(),
        OUT_BOOL => sink.boolean(i != 0, resp),
        OUT_DOUBLE => sink.double(d),
        OUT_ARRAY => sink.array(i as usize),
        OUT_MAP => sink.map(i as usize),
        OUT_SET => sink.set(i as usize),
        OUT_STATUS => sink.status(bytes),
        OUT_ERROR => sink.error(bytes),
        OUT_BIG => sink.big_number(bytes),
        OUT_ENTER => return sink.enter() as c_int,
        OUT_LEAVE => sink.leave(),
        OUT_UNSUPPORTED => sink.error_message(&format!(
            "ERR MicroPython script returned an unsupported value ({})",
            String::from_utf8_lossy(bytes)
        )),
        OUT_RAISED_REDIS | OUT_RAISED => {
            let text = String::from_utf8_lossy(bytes);
            let text = text
                .trim_end_matches(['\r', '\n'])
                .replace(['\r', '\n'], " ");
            let text = if op == OUT_RAISED_REDIS && has_error_code(&text) {
                text
            } else {
                format!("ERR {text}")
            };
            if i > 0 {
                sink.error_message(&format!("{text} script: {}, on {file}:{i}.", name()));
            } else {
                sink.error_message(&format!("{text} script: {}", name()));
            }
        }
        OUT_RAISED_MEMORY => sink.error_message(&format!(
            "ERR Out of memory running script (upython-memory-limit is {heap} bytes) script: {}",
            name()
        )),
        OUT_FAILED => {
            sink.truncate(out.mark);
            sink.error_message(&format!(
                "ERR MicroPython script's reply could not be converted script: {}",
                name()
            ));
        }
        _ => unreachable!("glue.c sends no output operation {op}"),
    }
    1
}

/// Whether an error text starts with its own code: an upper-case word and a space (`ERR`,
/// `WRONGTYPE`, `MYAPP_BUSY`).
fn has_error_code(text: &str) -> bool {
    match text.split_once(' ') {
        Some((code, _)) => {
            !code.is_empty()
                && code
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
        }
        None => false,
    }
}

// ---- Building Python values from command replies ----

/// Drives C's build stack; after the first failure (out of memory, an unhashable set member) the
/// rest of the walk is skipped.
struct Builder {
    failed: bool,
}

impl Builder {
    fn op(&mut self, op: c_int, i: i64, d: f64, bytes: &[u8]) {
        // SAFETY: C copies the bytes; each step is protected on the C side.
        if !self.failed && unsafe { goblin_upy_build(op, i, d, bytes.as_ptr(), bytes.len()) } != 0 {
            self.failed = true;
        }
    }
}

/// The builder ops that begin an aggregate of `kind` and add an item to it.
fn aggregate_ops(kind: Aggregate) -> (c_int, c_int) {
    match kind {
        Aggregate::Array => (B_LIST, B_ITEM_LIST),
        Aggregate::Map => (B_DICT, B_ITEM_DICT),
        Aggregate::Set => (B_SET, B_ITEM_SET),
    }
}

impl ReplyBuilder for Builder {
    fn int(&mut self, n: i64) {
        self.op(B_INT, n, 0.0, &[]);
    }
    fn bulk(&mut self, b: &[u8]) {
        self.op(B_BYTES, 0, 0.0, b);
    }
    fn status(&mut self, s: &[u8]) {
        self.op(B_STR, 0, 0.0, s);
        self.op(B_WRAP_OK, 0, 0.0, &[]);
    }
    fn error(&mut self, e: &[u8]) {
        self.op(B_STR, 0, 0.0, &error_text(e));
        self.op(B_WRAP_ERR, 0, 0.0, &[]);
    }
    fn null(&mut self) {
        self.op(B_NONE, 0, 0.0, &[]);
    }
    fn double(&mut self, d: f64) {
        self.op(B_FLOAT, 0, d, &[]);
    }
    fn boolean(&mut self, b: bool) {
        self.op(B_BOOL, b as i64, 0.0, &[]);
    }
    fn big_number(&mut self, digits: &[u8]) {
        self.op(B_BIG, 0, 0.0, digits);
    }
    fn verbatim(&mut self, _format: &[u8], text: &[u8]) {
        self.op(B_BYTES, 0, 0.0, text);
    }
    fn begin(&mut self, kind: Aggregate, _len: usize) {
        self.op(aggregate_ops(kind).0, 0, 0.0, &[]);
    }
    fn item(&mut self, kind: Aggregate, _index: usize) {
        self.op(aggregate_ops(kind).1, 0, 0.0, &[]);
    }
    fn end(&mut self, _kind: Aggregate) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_indented_line_by_line() {
        assert_eq!(
            wrap_body(b"x = 1\nif x:\n    return x\r\nreturn 0\rpass"),
            b"def __script(KEYS, ARGV):\n\tx = 1\n\tif x:\n\t    return x\r\n\treturn 0\r\tpass\n\tpass\n"
        );
    }

    #[test]
    fn error_codes() {
        assert!(has_error_code("WRONGTYPE Operation"));
        assert!(has_error_code("MY_APP-2 failed"));
        assert!(!has_error_code("boom"));
        assert!(!has_error_code("Bad thing"));
        assert_eq!(error_text(b"ERR x y"), b"ERR x y");
        assert_eq!(error_text(b"oops"), b"ERR oops");
    }
}
