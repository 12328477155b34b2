//! The Luau engine behind LUAU.EVAL, LUAU.EVALSHA, LUAU.EVAL_RO, LUAU.EVALSHA_RO and LUAU.SCRIPT.
//!
//! # Linking (see `script::lua` for the decision)
//! Luau comes from `mlua` (its `luau` feature builds the pinned `luau0-src` crate), which owns the
//! unprefixed `lua_*` symbols; Lua 5.1 is our own `gl51_`-renamed build, so the two VMs link side by
//! side (`tests/scripting_luau.rs` runs them interleaved in one server). `mlua` creates the VM with
//! its allocator (memory accounting and `set_memory_limit`) and runs the set-up protected
//! (`exec_raw`); everything per call is the raw C API through `mlua::ffi`, because `mlua`'s
//! high-level call path allocates per call (a fresh closure for each protected call, value handles
//! for each argument) and that is most of the cost of a script as small as compare-and-delete.
//!
//! # A script
//! `load` compiles the body with the Luau compiler into bytecode, prefixed by
//! `local KEYS, ARGV = ...;` on its first line (line numbers are unchanged), and loads the bytecode
//! once into a function kept in the registry (the cache holds its reference). KEYS and ARGV are the
//! chunk's arguments, not globals: with the globals read-only and `safeenv` on, Luau resolves global
//! lookups when a chunk is loaded, so globals set per call would be read stale.
//!
//! `run` makes one protected call of the `entry` trampoline (a C function kept in the registry, so
//! no closure is made per call), which fills KEYS and ARGV (two kept tables refilled for a script,
//! new ones for a function: `push_kept_array`), calls the chunk in a nested protected
//! call and writes its result or its error through the `Sink`. Everything that can allocate in the
//! VM (and so fail at the memory limit) happens inside the outer protected call; if it fails the
//! partial reply is discarded. Host functions (`api.rs`) and the interrupt find the `Run` through
//! `CURRENT`.
//!
//! # Budget and limits
//! Luau calls the interrupt callback at every loop back edge and call. Ours counts down and asks
//! `Run::check_budget` every `CHECK_EVERY` interrupts (`mlua`'s `set_interrupt` wraps each
//! interrupt in its callback machinery, too heavy for every back edge of a hot loop). Once a script
//! is killed every later interrupt raises again, so `pcall` cannot swallow the kill. Memory: `mlua`'s
//! allocator refuses allocations past `luau-memory-limit`; the script fails with an error reply.
//!
//! # The sandbox
//! Only the allow-listed globals exist; `_G`, every library table and the string metatable are
//! read-only (`luaL_sandbox`); reading a missing global is an error; no `os`, `io`, `debug`,
//! `require`, `loadstring`, `getfenv`/`setfenv`, `print` or `newproxy`.
//!
//! # Shared with Lua 5.1
//! The result's conversion into the reply, command replies into Luau values, argument tables and
//! the `redis` table's functions are written once for both engines in `script::lua::shared`; this
//! engine implements its `CApi` (`Api`, below) over `mlua::ffi`, adding Luau's own integer and
//! buffer values.

mod api;
mod functions;

use std::cell::Cell;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

use mlua::ffi::{self, lua_State};

use super::cache::{ScriptCache, Sha};
use super::lua::shared::{self, push_array, CApi};
use super::{Engine, EngineId, Run, Sink, Stop};
use crate::resp::parser::Args;

/// Interrupts (loop back edges and calls) between two budget checks.
const CHECK_EVERY: u32 = 10_000;

/// What runs before a script's first line, on that line.
const CHUNK_PREFIX: &[u8] = b"local KEYS, ARGV = ...; ";

/// The chunk name: errors read `user_script:3: ...`, as Redis's Lua scripts'.
const CHUNK_NAME: &std::ffi::CStr = c"@user_script";

thread_local! {
    /// The `Run` of the script executing now (type-erased: it borrows the server for the call).
    static CURRENT: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
    /// Interrupts left before the next budget check; 0 once the script is killed.
    static TICKS: Cell<u32> = const { Cell::new(CHECK_EVERY) };
    /// Set by SCRIPT KILL (or shutdown): every later interrupt raises.
    static KILLED: Cell<bool> = const { Cell::new(false) };
    /// The running script hit the memory limit (even if a `pcall` saw it first).
    static OUT_OF_MEMORY: Cell<bool> = const { Cell::new(false) };
}

/// The running script's context, for host functions and the interrupt. Only set inside `run`.
///
/// # Safety
/// Called only from host functions and the interrupt, which Luau invokes while `run` holds the
/// `Run` exclusively for the call and does not touch it itself.
unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
    let p = CURRENT.with(|c| c.get());
    unsafe { (p as *mut Run).as_mut() }
}

pub struct Luau {
    lua: mlua::Lua,
    /// The main state (stable for the VM's life): the per-call path drives it directly.
    l: *mut lua_State,
    cache: ScriptCache<c_int>,
    /// Registry reference of the `entry` trampoline.
    entry: c_int,
    /// Registry references of the KEYS and ARGV tables scripts (not functions) get, refilled for
    /// each run (see `push_kept_array`).
    kept: [c_int; 2],
    /// The memory limit in force (re-read from the config at each run).
    limit: usize,
    /// The registered callbacks of each function library (`functions.rs`).
    libs: std::collections::HashMap<super::function::LibId, Vec<c_int>>,
}

/// The globals a script sees: Luau's safe library minus what reaches outside the VM or defeats
/// the sandbox, plus `redis`.
const ALLOWED_GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "assert",
    "bit32",
    "buffer",
    "collectgarbage",
    "coroutine",
    "error",
    "gcinfo",
    "getmetatable",
    "ipairs",
    "math",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "redis",
    "select",
    "setmetatable",
    "string",
    "table",
    "tonumber",
    "tostring",
    "type",
    "typeof",
    "unpack",
    "utf8",
    "xpcall",
];

impl Luau {
    pub fn new(config: &crate::config::Config) -> Luau {
        use mlua::StdLib;
        let libs = StdLib::COROUTINE
            | StdLib::TABLE
            | StdLib::STRING
            | StdLib::BIT
            | StdLib::UTF8
            | StdLib::MATH
            | StdLib::BUFFER;
        let lua =
            mlua::Lua::new_with(libs, mlua::LuaOptions::default()).expect("the Luau VM starts");
        let mut l = ptr::null_mut();
        let mut entry = 0;
        let mut kept = [0; 2];
        // SAFETY: set-up runs protected by `exec_raw`, on the main state, with a balanced stack.
        unsafe {
            lua.exec_raw::<()>((), |state| {
                l = state;
                api::register(state);
                ffi::lua_pushcclosurek(state, entry_trampoline, c"entry".as_ptr(), 0, None);
                entry = ffi::lua_ref(state, -1);
                ffi::lua_settop(state, -2);
                for slot in &mut kept {
                    ffi::lua_createtable(state, 0, 0);
                    *slot = ffi::lua_ref(state, -1);
                    ffi::lua_settop(state, -2);
                }
                sandbox(state);
            })
            .expect("the Luau VM is set up");
            (*ffi::lua_callbacks(l)).interrupt = Some(interrupt);
            ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0);
        }
        let limit = config.luau_memory_limit as usize;
        lua.set_memory_limit(limit)
            .expect("mlua's allocator keeps the accounts");
        Luau {
            lua,
            l,
            cache: ScriptCache::default(),
            entry,
            kept,
            limit,
            libs: Default::default(),
        }
    }
}

/// Removes every global not on the allow-list, makes reading a missing global an error, and locks
/// `_G`, the libraries and the string metatable read-only (with `safeenv`, which lets Luau resolve
/// global and library lookups once, at load).
unsafe fn sandbox(l: *mut lua_State) {
    unsafe {
        // Collect the names first: a table must not change while `lua_next` walks it.
        let mut names: Vec<Vec<u8>> = Vec::new();
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, ffi::LUA_GLOBALSINDEX) != 0 {
            ffi::lua_settop(l, -2);
            if let Some(k) = to_bytes(l, -1) {
                names.push(k.to_vec());
            }
        }
        for name in names {
            if !ALLOWED_GLOBALS.iter().any(|a| a.as_bytes() == &name[..]) {
                push_bytes(l, &name);
                ffi::lua_pushnil(l);
                ffi::lua_rawset(l, ffi::LUA_GLOBALSINDEX);
            }
        }
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_pushcclosurek(l, api::missing_global, c"__index".as_ptr(), 0, None);
        ffi::lua_rawsetfield(l, -2, c"__index".as_ptr());
        ffi::lua_setreadonly(l, -1, 1);
        ffi::lua_setmetatable(l, ffi::LUA_GLOBALSINDEX);
        ffi::luaL_sandbox(l, 1);
    }
}

/// Compiles Luau source to bytecode, as every chunk is (optimized, with line numbers for errors).
fn compile(src: &[u8]) -> Vec<u8> {
    let mut options = ffi::lua_CompileOptions::default();
    options.optimizationLevel = 2;
    options.debugLevel = 1;
    // SAFETY: the compiler only reads the source.
    unsafe { ffi::luau_compile(src, options) }
}

/// Loads `bytecode` as chunk `name`: its function on top of the stack, or (also left on the stack)
/// the error message, returned.
unsafe fn load_bytecode(l: *mut lua_State, bytecode: &[u8], name: &CStr) -> Result<(), String> {
    unsafe {
        let st = ffi::luau_load(
            l,
            name.as_ptr(),
            bytecode.as_ptr() as *const _,
            bytecode.len(),
            0,
        );
        if st == 0 {
            return Ok(());
        }
        Err(String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default()).into_owned())
    }
}

/// What `run` hands the trampoline (as a light userdata).
struct Frame<'f> {
    run: *mut Run<'f, 'f>,
    keys: Args<'f>,
    argv: Args<'f>,
    func: c_int,
    /// The kept KEYS and ARGV tables, for a script; `None` for a function, whose library may keep
    /// what it is given in an upvalue from one call to the next.
    kept: Option<[c_int; 2]>,
}

/// The protected body of a call: KEYS and ARGV, the chunk (in a nested protected call), and its
/// result or error written as the reply.
unsafe extern "C-unwind" fn entry_trampoline(l: *mut lua_State) -> c_int {
    unsafe {
        let frame = &mut *(ffi::lua_touserdata(l, 1) as *mut Frame);
        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, frame.func);
        match frame.kept {
            Some([keys, argv]) => {
                push_kept_array(l, keys, frame.keys);
                push_kept_array(l, argv, frame.argv);
            }
            None => {
                push_array::<Api>(l, frame.keys);
                push_array::<Api>(l, frame.argv);
            }
        }
        let st = ffi::lua_pcall(l, 2, 1, 0);
        KILLED.with(|k| k.set(false));
        // The chunk has returned: no host function holds the `Run` any more.
        let run = &mut *frame.run;
        let resp = run.resp;
        // Error texts name a function by its name and its chunk `user_function`.
        let (out, function, sha) = run.out_and_names();
        let (name, chunk) = match function {
            Some(f) => (f, "user_function"),
            None => (std::str::from_utf8(sha).unwrap_or_default(), "user_script"),
        };
        let mut sink = Sink::new(out);
        match st {
            ffi::LUA_OK => shared::reply::<Api>(l, &mut sink, resp),
            ffi::LUA_ERRMEM => OUT_OF_MEMORY.with(|o| o.set(true)),
            _ => error_reply(l, &mut sink, name, chunk),
        }
        0
    }
}

/// Pushes the table behind registry reference `slot`, emptied and filled with `args`: two tables
/// made and collected per call cost Luau more than the rest of an empty script. A script can keep
/// no value past its call (the globals are read-only, and it has no `setfenv`), so what it did to
/// its KEYS last time is all there is to undo: its entries (`lua_cleartable`), or a metatable or a
/// freeze, after which a new table takes the slot.
unsafe fn push_kept_array(l: *mut lua_State, slot: c_int, args: Args) {
    unsafe {
        ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, slot);
        let frozen = ffi::lua_getreadonly(l, -1) != 0;
        // `lua_getmetatable` pushes the metatable when there is one.
        let has_metatable = !frozen && ffi::lua_getmetatable(l, -1) != 0;
        if frozen || has_metatable {
            ffi::lua_settop(l, if has_metatable { -3 } else { -2 });
            ffi::lua_createtable(l, args.len() as c_int, 0);
            ffi::lua_pushvalue(l, -1);
            ffi::lua_rawseti_(l, ffi::LUA_REGISTRYINDEX, slot);
        } else {
            ffi::lua_cleartable(l, -1);
        }
        for (i, a) in args.iter().enumerate() {
            push_bytes(l, a);
            ffi::lua_rawseti_(l, -2, i as c_int + 1);
        }
    }
}

pub(crate) unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
    unsafe { ffi::lua_pushlstring_(l, b.as_ptr() as *const _, b.len()) }
}

/// The bytes of the string at `idx`; `None` for any other type (numbers are not converted, so the
/// stack is never changed).
pub(crate) unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return None;
        }
        let mut len = 0;
        let p = ffi::lua_tolstring(l, idx, &mut len);
        Some(std::slice::from_raw_parts(p as *const u8, len))
    }
}

/// Luau's interrupt: at loop back edges and calls (and GC steps, `gc >= 0`, where raising is not
/// allowed). Every `CHECK_EVERY` interrupts it asks the shared budget; a kill raises, and keeps
/// raising at every later interrupt.
unsafe extern "C-unwind" fn interrupt(l: *mut lua_State, gc: c_int) {
    if gc >= 0 {
        return;
    }
    let left = TICKS.with(|t| t.get());
    if left > 0 {
        TICKS.with(|t| t.set(left - 1));
        return;
    }
    if !KILLED.with(|k| k.get()) {
        TICKS.with(|t| t.set(CHECK_EVERY));
        // SAFETY: interrupts run inside `run`'s protected call, with CURRENT set.
        let Some(run) = (unsafe { current() }) else {
            // No script runs: a function library is loading.
            if functions::load_timed_out() {
                // SAFETY: raising from the interrupt of running Lua code.
                unsafe {
                    api::push_error_table(
                        l,
                        format!("ERR {}", functions::TIMEOUT_ERROR).as_bytes(),
                        Some(0),
                    );
                    ffi::lua_error(l);
                }
            }
            return;
        };
        match run.check_budget() {
            None => return,
            Some(Stop::Killed(_)) => {
                KILLED.with(|k| k.set(true));
                TICKS.with(|t| t.set(0));
            }
        }
    }
    // SAFETY: raising from the interrupt of running Lua code (not a GC step) is allowed.
    unsafe {
        api::push_error_table(l, super::KILLED_ERROR.as_bytes(), Some(0));
        ffi::lua_error(l);
    }
}

impl Engine for Luau {
    super::cache::engine_methods!(Luau);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        let Some(flags) = self.cache.to_compile(EngineId::Luau, sha, body, pinned)? else {
            return Ok(());
        };
        let mut src = Vec::with_capacity(CHUNK_PREFIX.len() + body.len());
        src.extend_from_slice(CHUNK_PREFIX);
        src.extend_from_slice(body);
        if body.starts_with(b"#!") {
            // The shebang line stays, as a comment.
            src[CHUNK_PREFIX.len()..CHUNK_PREFIX.len() + 2].copy_from_slice(b"--");
        }
        let bytecode = compile(&src);
        let mut loaded: Result<c_int, String> = Err(String::new());
        // SAFETY: `luau_load` runs protected by `exec_raw`; the stack is balanced on both paths.
        let protected = unsafe {
            self.lua.exec_raw::<()>((), |l| {
                loaded = load_bytecode(l, &bytecode, CHUNK_NAME).map(|()| ffi::lua_ref(l, -1));
                ffi::lua_settop(l, -2);
            })
        };
        let func = match (protected, loaded) {
            (Ok(()), Ok(func)) => func,
            (Ok(()), Err(msg)) => {
                return Err(format!("ERR Error compiling script (new function): {msg}"))
            }
            (Err(mlua::Error::MemoryError(_)), _) => {
                return Err("ERR Error compiling script: not enough memory".into())
            }
            (Err(e), _) => return Err(format!("ERR Error compiling script (new function): {e}")),
        };
        for gone in self.cache.insert(*sha, func, flags, body.len(), pinned) {
            // SAFETY: a reference we took above.
            unsafe { ffi::lua_unref(self.l, gone) };
        }
        Ok(())
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(&func) = self.cache.get(sha) else {
            return false;
        };
        self.call(run, func, keys, argv, Some(self.kept));
        true
    }

    fn flush(&mut self) {
        for r in self.cache.drain() {
            // SAFETY: references we took in `load`.
            unsafe { ffi::lua_unref(self.l, r) };
        }
        // SAFETY: a full collection is always allowed between calls.
        unsafe { ffi::lua_gc(self.l, ffi::LUA_GCCOLLECT, 0) };
    }

    fn memory(&self) -> usize {
        self.lua.used_memory()
    }

    fn load_library(
        &mut self,
        lib: super::function::LibId,
        code: &[u8],
    ) -> Result<Vec<super::function::Registered>, String> {
        functions::load(self, lib, code)
    }

    fn call_function(
        &mut self,
        run: &mut Run,
        lib: super::function::LibId,
        index: usize,
        keys: Args,
        args: Args,
    ) {
        match self.libs.get(&lib).and_then(|c| c.get(index)) {
            Some(&func) => self.call(run, func, keys, args, None),
            None => run.out().error("ERR Function not found"),
        }
    }

    fn drop_library(&mut self, lib: super::function::LibId) {
        functions::drop_library(self, lib);
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        if bytes != self.limit {
            self.limit = bytes;
            let _ = self.lua.set_memory_limit(bytes);
        }
    }

    fn collect(&mut self) {
        // Function libraries live in this VM too: one collection covers them.
        // SAFETY: a full collection is allowed between calls (Luau's GC does not raise).
        unsafe { ffi::lua_gc(self.l, ffi::LUA_GCCOLLECT, 0) };
    }

    fn allocates_in_rust(&self) -> bool {
        // mlua's allocator hands every block to Rust's global allocator.
        true
    }
}

impl Luau {
    /// Calls the function `func` (a registry reference: a script's chunk or a library's
    /// callback) with KEYS and ARGV (a function's `keys` and `args`) through the trampoline, and
    /// writes its reply.
    fn call(
        &mut self,
        run: &mut Run,
        func: c_int,
        keys: Args,
        argv: Args,
        kept: Option<[c_int; 2]>,
    ) {
        // CONFIG SET luau-memory-limit takes effect from the next call.
        let limit = run.config().luau_memory_limit as usize;
        if limit != self.limit {
            self.limit = limit;
            let _ = self.lua.set_memory_limit(limit);
        }
        let l = self.l;
        let mark = (run.out().buf.len(), run.out().errors.len());
        TICKS.with(|t| t.set(CHECK_EVERY));
        KILLED.with(|k| k.set(false));
        OUT_OF_MEMORY.with(|o| o.set(false));
        let run_ptr = run as *mut Run as *mut c_void;
        CURRENT.with(|c| c.set(run_ptr));
        let mut frame = Frame {
            run: run_ptr as *mut Run,
            keys,
            argv,
            func,
            kept,
        };
        // SAFETY: no allocation happens outside the protected call (pushing a registry value and
        // a light userdata does not allocate); the stack is restored afterwards. Host functions
        // reach the `Run` through CURRENT only while the call runs, and `frame.run` is used by
        // the trampoline only after the chunk returned.
        let st = unsafe {
            let top = ffi::lua_gettop(l);
            ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, self.entry);
            ffi::lua_pushlightuserdata(l, &mut frame as *mut Frame as *mut c_void);
            let st = ffi::lua_pcall(l, 1, 0, 0);
            ffi::lua_settop(l, top);
            st
        };
        CURRENT.with(|c| c.set(ptr::null_mut()));
        KILLED.with(|k| k.set(false));
        if st != ffi::LUA_OK || OUT_OF_MEMORY.with(|o| o.get()) {
            // Whatever the trampoline had written is cut (it failed half way, out of memory).
            run.out().truncate(mark.0);
            run.out().errors.truncate(mark.1);
            let msg = format!(
                "ERR Out of memory running script (luau-memory-limit is {} bytes) script: {}",
                self.limit,
                run.script_name()
            );
            run.out().error(&msg);
        }
        let before = self.lua.used_memory();
        if self.limit > 0 && before > self.limit / 2 {
            // A script that came close to the limit gives its garbage back now.
            // SAFETY: a full collection is allowed between calls (Luau's GC does not raise).
            unsafe { ffi::lua_gc(l, ffi::LUA_GCCOLLECT, 0) };
            crate::alloc::note_freed(before.saturating_sub(self.lua.used_memory()));
        }
    }
}

/// The error reply for a failed chunk, in the shape of the Lua engine's: `<error> script: <sha>`,
/// and `, on @user_script:<line>.` when the line is known (an error raised by `redis.call` or a
/// kill carries it; a runtime error's message starts with `user_script:<line>:`).
unsafe fn error_reply(l: *mut lua_State, sink: &mut Sink, sha: &str, chunk: &str) {
    unsafe {
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_rawgetfield(l, -1, c"err".as_ptr());
            let msg = to_bytes(l, -1).map(|m| String::from_utf8_lossy(m).into_owned());
            ffi::lua_rawgetfield(l, -2, c"line".as_ptr());
            let line = (ffi::lua_type(l, -1) == ffi::LUA_TNUMBER).then(|| ffi::lua_tonumber(l, -1));
            ffi::lua_settop(l, -3);
            let msg = msg.unwrap_or_else(|| "ERR unknown error".into());
            let msg = msg.trim_end_matches(['\r', '\n']);
            match line {
                Some(n) => sink.error_message(&format!("{msg} script: {sha}, on @{chunk}:{n}.")),
                None => sink.error_message(&format!("{msg} script: {sha}")),
            }
            return;
        }
        let msg = match ffi::lua_type(l, -1) {
            ffi::LUA_TSTRING => {
                String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default()).into_owned()
            }
            ffi::LUA_TNUMBER => crate::util::fmt_g17(ffi::lua_tonumber(l, -1)),
            ffi::LUA_TNIL => "nil".into(),
            _ => "(error object is not a string)".into(),
        };
        let line = msg
            .strip_prefix(chunk)
            .and_then(|rest| rest.strip_prefix(':'))
            .and_then(|rest| rest.split(':').next())
            .filter(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
        match line {
            Some(n) => sink.error_message(&format!("ERR {msg} script: {sha}, on @{chunk}:{n}.")),
            None => sink.error_message(&format!("ERR {msg} script: {sha}")),
        }
    }
}

/// Luau's side of the C API shape shared with Lua 5.1 (`script::lua::shared`).
struct Api;

impl CApi for Api {
    type State = lua_State;
    const TNIL: c_int = ffi::LUA_TNIL;
    const TNUMBER: c_int = ffi::LUA_TNUMBER;
    const TSTRING: c_int = ffi::LUA_TSTRING;
    const TTABLE: c_int = ffi::LUA_TTABLE;
    const TBOOLEAN: c_int = ffi::LUA_TBOOLEAN;
    const TFUNCTION: c_int = ffi::LUA_TFUNCTION;

    unsafe fn type_of(l: *mut lua_State, idx: c_int) -> c_int {
        unsafe { ffi::lua_type(l, idx) }
    }
    unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
        unsafe { to_bytes(l, idx) }
    }
    unsafe fn to_number(l: *mut lua_State, idx: c_int) -> f64 {
        unsafe { ffi::lua_tonumber(l, idx) }
    }
    unsafe fn to_boolean(l: *mut lua_State, idx: c_int) -> bool {
        unsafe { ffi::lua_toboolean(l, idx) != 0 }
    }
    unsafe fn check_stack(l: *mut lua_State, n: c_int) -> bool {
        unsafe { ffi::lua_checkstack(l, n) != 0 }
    }
    unsafe fn reserve_stack(l: *mut lua_State, n: c_int) {
        unsafe { ffi::lua_rawcheckstack(l, n) }
    }
    unsafe fn raw_get_field(l: *mut lua_State, idx: c_int, name: &std::ffi::CStr) -> c_int {
        unsafe { ffi::lua_rawgetfield(l, idx, name.as_ptr()) }
    }
    unsafe fn raw_set_field(l: *mut lua_State, idx: c_int, name: &std::ffi::CStr) {
        unsafe { ffi::lua_rawsetfield(l, idx, name.as_ptr()) }
    }
    unsafe fn raw_get_index(l: *mut lua_State, idx: c_int, n: c_int) -> c_int {
        unsafe { ffi::lua_rawgeti_(l, idx, n) }
    }
    unsafe fn raw_set_index(l: *mut lua_State, idx: c_int, n: c_int) {
        unsafe { ffi::lua_rawseti_(l, idx, n) }
    }
    unsafe fn raw_set(l: *mut lua_State, idx: c_int) {
        unsafe { ffi::lua_rawset(l, idx) }
    }
    unsafe fn next(l: *mut lua_State, idx: c_int) -> c_int {
        unsafe { ffi::lua_next(l, idx) }
    }
    unsafe fn pop(l: *mut lua_State, n: c_int) {
        unsafe { ffi::lua_settop(l, -n - 1) }
    }
    unsafe fn push_nil(l: *mut lua_State) {
        unsafe { ffi::lua_pushnil(l) }
    }
    unsafe fn push_value(l: *mut lua_State, idx: c_int) {
        unsafe { ffi::lua_pushvalue(l, idx) }
    }
    unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
        unsafe { push_bytes(l, b) }
    }
    unsafe fn push_number(l: *mut lua_State, n: f64) {
        unsafe { ffi::lua_pushnumber(l, n) }
    }
    unsafe fn push_boolean(l: *mut lua_State, b: bool) {
        unsafe { ffi::lua_pushboolean(l, b as c_int) }
    }
    unsafe fn create_table(l: *mut lua_State, narr: c_int, nrec: c_int) {
        unsafe { ffi::lua_createtable(l, narr, nrec) }
    }
    unsafe fn make_ref(l: *mut lua_State, idx: c_int) -> c_int {
        unsafe { ffi::lua_ref(l, idx) }
    }
    unsafe fn unref(l: *mut lua_State, r: c_int) {
        unsafe { ffi::lua_unref(l, r) };
    }
    unsafe fn top(l: *mut lua_State) -> c_int {
        unsafe { ffi::lua_gettop(l) }
    }
    unsafe fn set_top(l: *mut lua_State, idx: c_int) {
        unsafe { ffi::lua_settop(l, idx) }
    }
    unsafe fn replace(l: *mut lua_State, idx: c_int) {
        unsafe { ffi::lua_replace(l, idx) }
    }
    unsafe fn arg_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
        unsafe { api::arg_bytes(l, idx) }
    }
    unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
        unsafe { current() }
    }
    unsafe fn push_error_table(l: *mut lua_State, text: &[u8]) {
        unsafe { api::push_error_table(l, text, None) }
    }
    unsafe fn push_raised_table(l: *mut lua_State, text: &[u8]) {
        // Located at the calling script line.
        unsafe { api::push_error_table(l, text, Some(1)) }
    }
    unsafe fn push_where(l: *mut lua_State, level: c_int) {
        unsafe { ffi::luaL_where(l, level) }
    }
    unsafe fn raise_top(l: *mut lua_State) -> c_int {
        unsafe { ffi::lua_error(l) }
    }
    unsafe fn reply_own_type(l: *mut lua_State, t: c_int, sink: &mut Sink) -> bool {
        unsafe {
            match t {
                ffi::LUA_TINTEGER => sink.int(ffi::lua_tointeger64(l, -1, ptr::null_mut())),
                ffi::LUA_TBUFFER => {
                    let mut len = 0;
                    let p = ffi::lua_tobuffer(l, -1, &mut len) as *const u8;
                    let bytes = if len == 0 {
                        &[][..]
                    } else {
                        std::slice::from_raw_parts(p, len)
                    };
                    sink.bulk(bytes);
                }
                _ => return false,
            }
            true
        }
    }
}
