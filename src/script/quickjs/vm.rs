//! One QuickJS runtime and context, with what the host side keeps beside them: the allocator's
//! accounting (`Mem`), the interrupt state (`Budget`), the host functions' scratch (`Host`) and the
//! atoms and helper values the engine uses (`Names`).
//!
//! Each of `Mem`, `Budget` and `Host` is its own heap object reached through a raw pointer, because
//! QuickJS calls back into each while the others may be in use: the allocator from inside any API
//! call, the interrupt handler from inside script code, host functions from inside a call.
//!
//! Drop order (QuickJS asserts it at `JS_FreeRuntime`): every value we hold, then the context,
//! then the runtime, then the boxes the callbacks point at.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;

use rquickjs_sys as q;

use super::api;
use crate::script::{Run, Stop};

/// Bytes of C stack script code may use (deep recursion becomes a catchable RangeError).
const MAX_STACK: usize = 1 << 20;

/// Promise jobs run between two budget checks of `run_jobs`.
const JOBS_PER_CHECK: u32 = 1024;

/// Bytes a scratch buffer may keep between calls.
pub const SCRATCH_MAX: usize = 1 << 20;

/// The allocator's accounting and limit (`quickjs-memory-limit`); 0 is no limit.
pub struct Mem {
    pub used: usize,
    /// The most `used` has been since `Vm::take_freed` last asked: QuickJS frees most objects by
    /// reference count, as a script goes, so what a run gave back to malloc is this less `used`.
    pub high: usize,
    pub limit: usize,
    /// Set when an allocation was refused, so the error reply can say why.
    pub refused: bool,
}

/// What the interrupt handler and the host functions share for the current run.
pub struct Budget {
    /// The `Run` of the executing script (type-erased: it borrows the server for the call), null
    /// outside a run.
    pub run: *mut c_void,
    /// SCRIPT KILL (or shutdown) landed: interrupt at every chance until the run ends.
    pub killed: bool,
    /// Compiling: the top-level code of a well-formed body only creates the function, so a body
    /// that closes the wrapper and runs code of its own is interrupted (`interrupts` counts).
    pub loading: bool,
    pub load_interrupts: u32,
    /// A function library's loading run (no `Run`) stops past this instant.
    pub deadline: Option<std::time::Instant>,
}

/// Atoms and helper values, copied where needed (all `Copy` handles owned by the `Vm`).
#[derive(Clone, Copy)]
pub struct Names {
    pub err: q::JSAtom,
    pub ok: q::JSAtom,
    pub double: q::JSAtom,
    pub big_number: q::JSAtom,
    pub map: q::JSAtom,
    pub set: q::JSAtom,
    pub verbatim_string: q::JSAtom,
    pub format: q::JSAtom,
    pub string: q::JSAtom,
    pub message: q::JSAtom,
    pub name: q::JSAtom,
    pub stack: q::JSAtom,
    /// `helpers.mapEntries(m)`: a Map as a flat [k, v, ...] array.
    pub map_entries: q::JSValue,
    /// `helpers.setValues(s)`: a Set as an array.
    pub set_values: q::JSValue,
    /// `helpers.makeMap(flat)` and `helpers.makeSet(list)`.
    pub make_map: q::JSValue,
    pub make_set: q::JSValue,
    pub helpers: q::JSValue,
}

/// The host functions' scratch, reused between calls.
pub struct Host {
    pub names: Names,
    pub budget: *mut Budget,
    /// `redis.call` arguments, as bytes and spans.
    pub args: Vec<u8>,
    pub spans: Vec<(usize, usize)>,
    /// A copy of the command's reply, walked into JS values.
    pub reply: Vec<u8>,
    /// Latin-1 → UTF-8 expansion for new strings.
    pub text: Vec<u8>,
    /// The reply builder's stack of values, and where each open aggregate's elements start.
    pub stack: Vec<q::JSValue>,
    pub starts: Vec<usize>,
}

pub struct Vm {
    pub rt: *mut q::JSRuntime,
    pub ctx: *mut q::JSContext,
    pub names: Names,
    mem: *mut Mem,
    pub budget: *mut Budget,
    host: *mut Host,
}

unsafe extern "C" fn js_malloc(opaque: *mut c_void, size: q::size_t) -> *mut c_void {
    let size = size as usize;
    let mem = &mut *(opaque as *mut Mem);
    if mem.limit > 0 && mem.used + size > mem.limit {
        mem.refused = true;
        return ptr::null_mut();
    }
    let p = libc::malloc(size);
    if !p.is_null() {
        mem.used += libc::malloc_usable_size(p);
        mem.high = mem.high.max(mem.used);
    }
    p
}

unsafe extern "C" fn js_calloc(
    opaque: *mut c_void,
    count: q::size_t,
    size: q::size_t,
) -> *mut c_void {
    let mem = &mut *(opaque as *mut Mem);
    let (count, size) = (count as usize, size as usize);
    let total = count.saturating_mul(size);
    if mem.limit > 0 && mem.used + total > mem.limit {
        mem.refused = true;
        return ptr::null_mut();
    }
    let p = libc::calloc(count, size);
    if !p.is_null() {
        mem.used += libc::malloc_usable_size(p);
        mem.high = mem.high.max(mem.used);
    }
    p
}

unsafe extern "C" fn js_free(opaque: *mut c_void, p: *mut c_void) {
    if p.is_null() {
        return;
    }
    let mem = &mut *(opaque as *mut Mem);
    mem.used -= libc::malloc_usable_size(p);
    libc::free(p);
}

unsafe extern "C" fn js_realloc(
    opaque: *mut c_void,
    p: *mut c_void,
    size: q::size_t,
) -> *mut c_void {
    let size = size as usize;
    let mem = &mut *(opaque as *mut Mem);
    let old = if p.is_null() {
        0
    } else {
        libc::malloc_usable_size(p)
    };
    if mem.limit > 0 && size > old && mem.used + (size - old) > mem.limit {
        mem.refused = true;
        return ptr::null_mut();
    }
    let n = libc::realloc(p, size);
    if !n.is_null() {
        mem.used = mem.used - old + libc::malloc_usable_size(n);
        mem.high = mem.high.max(mem.used);
    } else if size == 0 {
        mem.used -= old;
    }
    n
}

unsafe extern "C" fn js_usable_size(p: *const c_void) -> q::size_t {
    libc::malloc_usable_size(p as *mut c_void) as q::size_t
}

static MALLOC_FUNCTIONS: q::JSMallocFunctions = q::JSMallocFunctions {
    js_calloc: Some(js_calloc),
    js_malloc: Some(js_malloc),
    js_free: Some(js_free),
    js_realloc: Some(js_realloc),
    js_malloc_usable_size: Some(js_usable_size),
};

/// The interrupt handler: the shared busy check, and a kill that keeps interrupting.
unsafe extern "C" fn interrupt(_rt: *mut q::JSRuntime, opaque: *mut c_void) -> c_int {
    let budget = opaque as *mut Budget;
    if (*budget).killed {
        return 1;
    }
    if (*budget).loading {
        (*budget).load_interrupts += 1;
        return ((*budget).load_interrupts > 1) as c_int;
    }
    let run = (*budget).run as *mut Run;
    // SAFETY: `run` is set only while `QuickJs::run` lends the `Run` to the script and does not
    // touch it itself; nothing else holds it during script code.
    let Some(run) = run.as_mut() else {
        // No script runs: a function library may be loading, within its deadline.
        let late = (*budget)
            .deadline
            .is_some_and(|d| std::time::Instant::now() > d);
        (*budget).killed = late;
        return late as c_int;
    };
    match run.check_budget() {
        None => 0,
        Some(Stop::Killed(_)) => {
            (*budget).killed = true;
            1
        }
    }
}

/// Sources are handed to QuickJS NUL-terminated (its parser reads `input[input_len]`).
const PRELUDE: &str = concat!(include_str!("prelude.js"), "\0");

impl Vm {
    /// A fresh runtime and context with the `redis` object, locked by the prelude.
    pub fn new(limit: usize) -> Vm {
        let mem = Box::into_raw(Box::new(Mem {
            used: 0,
            high: 0,
            limit: 0,
            refused: false,
        }));
        let budget = Box::into_raw(Box::new(Budget {
            run: ptr::null_mut(),
            killed: false,
            loading: false,
            load_interrupts: 0,
            deadline: None,
        }));
        // SAFETY: a fresh runtime and context; set-up runs code we wrote, with no limit.
        unsafe {
            let rt = q::JS_NewRuntime2(&MALLOC_FUNCTIONS, mem as *mut c_void);
            assert!(!rt.is_null(), "cannot create the QuickJS runtime");
            q::JS_SetMaxStackSize(rt, MAX_STACK as q::size_t);
            q::JS_SetCanBlock(rt, false);
            q::JS_SetInterruptHandler(rt, Some(interrupt), budget as *mut c_void);
            let ctx = q::JS_NewContextRaw(rt);
            assert!(!ctx.is_null(), "cannot create the QuickJS context");
            let adds: [unsafe extern "C" fn(*mut q::JSContext) -> c_int; 10] = [
                q::JS_AddIntrinsicBaseObjects,
                q::JS_AddIntrinsicDate,
                q::JS_AddIntrinsicEval,
                q::JS_AddIntrinsicRegExp,
                q::JS_AddIntrinsicJSON,
                q::JS_AddIntrinsicProxy,
                q::JS_AddIntrinsicMapSet,
                q::JS_AddIntrinsicTypedArrays,
                q::JS_AddIntrinsicPromise,
                q::JS_AddIntrinsicAToB,
            ];
            for add in adds {
                assert_eq!(add(ctx), 0, "cannot add a QuickJS intrinsic");
            }
            let atom = |s: &CStr| q::JS_NewAtom(ctx, s.as_ptr());
            let mut names = Names {
                err: atom(c"err"),
                ok: atom(c"ok"),
                double: atom(c"double"),
                big_number: atom(c"big_number"),
                map: atom(c"map"),
                set: atom(c"set"),
                verbatim_string: atom(c"verbatim_string"),
                format: atom(c"format"),
                string: atom(c"string"),
                message: atom(c"message"),
                name: atom(c"name"),
                stack: atom(c"stack"),
                map_entries: q::JS_UNDEFINED,
                set_values: q::JS_UNDEFINED,
                make_map: q::JS_UNDEFINED,
                make_set: q::JS_UNDEFINED,
                helpers: q::JS_UNDEFINED,
            };
            let host = Box::into_raw(Box::new(Host {
                names,
                budget,
                args: Vec::new(),
                spans: Vec::new(),
                reply: Vec::new(),
                text: Vec::new(),
                stack: Vec::new(),
                starts: Vec::new(),
            }));
            q::JS_SetContextOpaque(ctx, host as *mut c_void);
            let redis = api::redis_object(ctx);
            let prelude = q::JS_Eval(
                ctx,
                PRELUDE.as_ptr() as *const _,
                PRELUDE.len() as q::size_t - 1,
                c"prelude".as_ptr(),
                q::JS_EVAL_TYPE_GLOBAL as c_int,
            );
            let mut args = [redis];
            let helpers = if q::JS_IsException(prelude) {
                prelude
            } else {
                q::JS_Call(ctx, prelude, q::JS_UNDEFINED, 1, args.as_mut_ptr())
            };
            q::JS_FreeValue(ctx, prelude);
            q::JS_FreeValue(ctx, redis);
            if q::JS_IsException(helpers) {
                let e = q::JS_GetException(ctx);
                let stack = q::JS_GetPropertyStr(ctx, e, c"stack".as_ptr());
                let msg = super::convert::debug_string(ctx, e);
                let at = super::convert::debug_string(ctx, stack);
                q::JS_FreeValue(ctx, stack);
                q::JS_FreeValue(ctx, e);
                panic!("the QuickJS prelude failed: {msg} {at}");
            }
            let get = |name: &CStr| q::JS_GetPropertyStr(ctx, helpers, name.as_ptr());
            names.map_entries = get(c"mapEntries");
            names.set_values = get(c"setValues");
            names.make_map = get(c"makeMap");
            names.make_set = get(c"makeSet");
            names.helpers = helpers;
            (*host).names = names;
            (*mem).limit = limit;
            Vm {
                rt,
                ctx,
                names,
                mem,
                budget,
                host,
            }
        }
    }

    pub fn memory_used(&self) -> usize {
        // SAFETY: `mem` lives as long as the VM.
        unsafe { (*self.mem).used }
    }

    pub fn memory_limit(&self) -> usize {
        // SAFETY: as above.
        unsafe { (*self.mem).limit }
    }

    pub fn set_memory_limit(&mut self, limit: usize) {
        // SAFETY: as above; no allocation runs now.
        unsafe { (*self.mem).limit = limit };
    }

    /// The bytes given back to malloc since the last time: the most the VM held since then, less
    /// what it holds now.
    pub fn take_freed(&mut self) -> usize {
        // SAFETY: as above.
        let mem = unsafe { &mut *self.mem };
        let freed = mem.high - mem.used;
        mem.high = mem.used;
        freed
    }

    /// Whether an allocation was refused since the last call; clears the flag.
    pub fn take_refused(&mut self) -> bool {
        // SAFETY: as above.
        unsafe { std::mem::take(&mut (*self.mem).refused) }
    }

    /// Re-reads the stack position QuickJS measures its stack limit from (the engine is called
    /// from different depths of the server's stack).
    pub fn update_stack_top(&self) {
        // SAFETY: the runtime is ours.
        unsafe { q::JS_UpdateStackTop(self.rt) };
    }

    /// Evaluates a wrapped body, NUL-terminated; the function object, or the error message.
    pub fn compile(&mut self, src: &[u8]) -> Result<q::JSValue, String> {
        self.compile_as(src, c"user_script")
    }

    /// `compile` with the file name errors give (`user_function` for function libraries).
    pub fn compile_as(&mut self, src: &[u8], file: &CStr) -> Result<q::JSValue, String> {
        debug_assert_eq!(src.last(), Some(&0));
        self.update_stack_top();
        // SAFETY: the budget box lives as long as the VM; JS_Eval copies the source.
        unsafe {
            (*self.budget).loading = true;
            (*self.budget).killed = false;
            (*self.budget).load_interrupts = 0;
            let v = q::JS_Eval(
                self.ctx,
                src.as_ptr() as *const _,
                src.len() as q::size_t - 1,
                file.as_ptr(),
                (q::JS_EVAL_TYPE_GLOBAL | q::JS_EVAL_FLAG_STRICT) as c_int,
            );
            (*self.budget).loading = false;
            let refused = self.take_refused();
            if q::JS_IsException(v) {
                let e = q::JS_GetException(self.ctx);
                let msg = if refused {
                    "not enough memory".to_string()
                } else if (*self.budget).load_interrupts > 1 {
                    "the body runs code outside its function".to_string()
                } else {
                    match super::convert::error_text(self.ctx, &self.names, e) {
                        (text, Some(line)) => {
                            format!("{text} ({}:{line})", file.to_string_lossy())
                        }
                        (text, None) => text,
                    }
                };
                q::JS_FreeValue(self.ctx, e);
                return Err(msg);
            }
            if !q::JS_IsFunction(self.ctx, v) || q::JS_IsJobPending(self.rt) {
                q::JS_FreeValue(self.ctx, v);
                return Err("the body runs code outside its function".into());
            }
            Ok(v)
        }
    }

    pub fn free_value(&self, v: q::JSValue) {
        // SAFETY: a value of this VM that the caller owns.
        unsafe { q::JS_FreeValue(self.ctx, v) };
    }

    /// Runs queued promise jobs until none is left, the script is killed, or an allocation was
    /// refused (past the memory limit the run fails: a chain of jobs that keeps growing must not
    /// end as if it had succeeded); a job's error is dropped (an unhandled rejection). The budget
    /// is asked every `JOBS_PER_CHECK` jobs too, as script code asks it, so jobs that run little
    /// script code each still get BUSY replies sent and a kill heard. False when jobs are left.
    pub fn run_jobs(&mut self) -> bool {
        // SAFETY: the runtime is ours; exceptions are taken from the job's context.
        unsafe {
            let mut jobs = 0u32;
            while q::JS_IsJobPending(self.rt) {
                if (*self.budget).killed || (*self.mem).refused {
                    return false;
                }
                jobs = jobs.wrapping_add(1);
                if jobs.is_multiple_of(JOBS_PER_CHECK)
                    && interrupt(self.rt, self.budget as *mut c_void) != 0
                {
                    return false;
                }
                let mut jctx: *mut q::JSContext = ptr::null_mut();
                if q::JS_ExecutePendingJob(self.rt, &mut jctx) < 0 && !jctx.is_null() {
                    let e = q::JS_GetException(jctx);
                    q::JS_FreeValue(jctx, e);
                }
            }
        }
        true
    }

    pub fn jobs_pending(&self) -> bool {
        // SAFETY: the runtime is ours.
        unsafe { q::JS_IsJobPending(self.rt) }
    }

    /// Starts (`Some`) or ends a function library's loading run, which the interrupt stops at
    /// `deadline`.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        // SAFETY: the budget box lives as long as the VM.
        unsafe {
            (*self.budget).deadline = deadline;
            (*self.budget).killed = false;
        }
    }

    pub fn killed(&self) -> bool {
        // SAFETY: the budget box lives as long as the VM.
        unsafe { (*self.budget).killed }
    }

    /// Sets the run the host functions and the interrupt handler see (null after the run).
    pub fn set_run(&mut self, run: *mut c_void) {
        // SAFETY: as above.
        unsafe {
            (*self.budget).run = run;
            if !run.is_null() {
                (*self.budget).killed = false;
            }
        }
    }

    pub fn gc(&mut self) {
        // SAFETY: between calls.
        unsafe { q::JS_RunGC(self.rt) };
    }

    /// Drops the host functions' buffers if a big `redis.call` (its arguments, its reply, the
    /// values built from it) left them large: they are kept between calls only to save the
    /// allocations of ordinary ones.
    pub fn trim_scratch(&mut self) {
        // SAFETY: the host box lives as long as the VM; no call is running.
        let h = unsafe { &mut *self.host };
        if h.args.capacity() > SCRATCH_MAX {
            h.args = Vec::new();
        }
        if h.reply.capacity() > SCRATCH_MAX {
            h.reply = Vec::new();
        }
        if h.text.capacity() > SCRATCH_MAX {
            h.text = Vec::new();
        }
        if h.spans.capacity() * std::mem::size_of::<(usize, usize)>() > SCRATCH_MAX {
            h.spans = Vec::new();
        }
        if h.stack.is_empty()
            && h.stack.capacity() * std::mem::size_of::<q::JSValue>() > SCRATCH_MAX
        {
            h.stack = Vec::new();
        }
        if h.starts.capacity() * std::mem::size_of::<usize>() > SCRATCH_MAX {
            h.starts = Vec::new();
        }
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        // A VM dropped (SCRIPT FLUSH, a rebuild) frees what it held, and had freed since asked.
        // SAFETY: `mem` is freed last, below.
        crate::alloc::note_freed(unsafe { (*self.mem).high });
        // SAFETY: every value the engine held is freed before this (the cache frees its functions
        // first); then ours, the context, the runtime, and the boxes its callbacks used.
        unsafe {
            let n = self.names;
            for v in [
                n.map_entries,
                n.set_values,
                n.make_map,
                n.make_set,
                n.helpers,
            ] {
                q::JS_FreeValue(self.ctx, v);
            }
            for a in [
                n.err,
                n.ok,
                n.double,
                n.big_number,
                n.map,
                n.set,
                n.verbatim_string,
                n.format,
                n.string,
                n.message,
                n.name,
                n.stack,
            ] {
                q::JS_FreeAtom(self.ctx, a);
            }
            let host = Box::from_raw(self.host);
            for v in &host.stack {
                q::JS_FreeValue(self.ctx, *v);
            }
            q::JS_FreeContext(self.ctx);
            q::JS_RunGC(self.rt);
            q::JS_FreeRuntime(self.rt);
            drop(host);
            drop(Box::from_raw(self.budget));
            drop(Box::from_raw(self.mem));
        }
    }
}
