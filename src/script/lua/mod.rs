//! The Lua 5.1 engine behind EVAL, EVALSHA and SCRIPT: Redis-compatible scripting.
//!
//! # How Lua 5.1 and Luau share the binary (decided once, here)
//! Only one `mlua` flavour can link (`mlua-sys` declares `links = "lua"`), and both VMs export the
//! same C symbols. Lua 5.1 gets our own binding (`ffi.rs`) to a build whose symbols are renamed
//! `gl51_*` (`build.rs`, `vendor/lua51/`); Luau, whose C API drifts between releases, is left to
//! `mlua`, which tracks it. Lua 5.1 is frozen, so a hand binding never drifts, and a raw binding lets
//! the per-call path stay lean (no per-call glue allocation beyond KEYS/ARGV themselves).
//!
//! # The sandbox (Redis 7)
//! Only Redis's allow-listed globals exist; `_G` and every library table are read-only (a flag our
//! patched table setters check: `Attempt to modify a readonly table`); reading a missing global is
//! an error (`Script attempted to access nonexistent global variable 'x'`); no `os`, `io`, `print`,
//! `dofile`, `loadfile`, `require`; `load`/`loadstring` refuse binary chunks (what `string.dump`
//! makes); `pcall` hands back `redis.call`'s error as a string, as Redis's does; `math.random` is
//! Redis's deterministic PRNG.
//!
//! # A call
//! The compiled chunk of each script is kept in the registry (the cache holds its reference).
//! `run` pushes Redis's error handler and the chunk, sets `KEYS` and `ARGV`, and calls it under an
//! instruction-count hook that asks `Run::check_budget` whether to stop; long loops inside library
//! functions (a backtracking pattern, `table.sort`...) ask the same every so many steps of their
//! work (our patch, `vendor/lua51/`). Host functions (`redis.call` and friends, `api.rs`) find the
//! current `Run` through `CURRENT`.
//!
//! # Layout
//! `ffi.rs` is the binding; `api.rs` the `redis` table, `bit` and `math.random`; `libs.rs` the glue
//! of the `cjson`, `cmsgpack` and `struct` libraries, whose codecs are pure Rust in `codec/`;
//! `functions.rs` Redis Functions. `shared.rs` holds what this engine and Luau (`script::luau`)
//! share, generic over their common C API shape: the result's conversion into the reply, command
//! replies into Lua values, and the `redis` table's functions.

mod api;
pub mod codec;
mod ffi;
mod functions;
mod libs;
pub(crate) mod shared;

use std::cell::Cell;
use std::ffi::{c_int, c_void, CStr, CString};
use std::ptr;

use self::ffi::*;
use self::shared::push_array;
use super::cache::{ScriptCache, Sha};
use super::heap::SizedHeap;
use super::{Engine, EngineId, Run, Sink, Stop};
use crate::resp::parser::Args;

/// Instructions between two budget checks (as Redis's `LUA_MASKCOUNT` hook).
const HOOK_EVERY: c_int = 100_000;

thread_local! {
    /// The `Run` of the script executing now (type-erased: it borrows the server for the call).
    static CURRENT: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
}

/// The running script's context, for host functions. Only valid inside `Lua::run`.
///
/// # Safety
/// Called only from host functions and the hook, which Lua invokes while `run` holds the `Run`
/// exclusively for the call and does not touch it itself.
unsafe fn current<'a>() -> Option<&'a mut Run<'a, 'a>> {
    let p = CURRENT.with(|c| c.get());
    (p as *mut Run).as_mut()
}

/// The allocator's accounting and limit. Allocation never fails while a host function runs (a
/// memory error there would `longjmp` over Rust: the C trampoline counts host calls in
/// `goblin_lua51_in_host`); the limit then applies to the next allocation.
struct Mem {
    /// Bytes of the VM's live blocks, as Lua counts them.
    used: usize,
    heap: SizedHeap,
    limit: usize,
    /// Set when an allocation was refused, so the error reply can say why.
    refused: bool,
}

extern "C" {
    static goblin_lua51_in_host: c_int;
}

unsafe extern "C" fn alloc(
    ud: *mut c_void,
    p: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    let mem = &mut *(ud as *mut Mem);
    if nsize == 0 {
        mem.heap.realloc(p, osize, 0);
        mem.used -= osize;
        return ptr::null_mut();
    }
    let grow = nsize.saturating_sub(osize);
    if grow > 0 && goblin_lua51_in_host == 0 && mem.limit > 0 && mem.used + grow > mem.limit {
        mem.refused = true;
        return ptr::null_mut();
    }
    let q = mem.heap.realloc(p, osize, nsize);
    if !q.is_null() {
        mem.used = mem.used - osize + nsize;
    }
    q
}

pub struct Lua {
    l: *mut lua_State,
    mem: Box<Mem>,
    cache: ScriptCache<c_int>,
    /// Registry reference of `__redis__err__handler`.
    err_handler: c_int,
    /// Registry references of the KEYS and ARGV tables, refilled for each run.
    keys_table: c_int,
    argv_table: c_int,
    /// The `cjson` module's settings (a userdata the module's functions hold).
    cjson_config: *mut codec::cjson::CjsonConfig,
    /// The VM of function libraries (`functions.rs`), started by the first FUNCTION LOAD.
    functions: Option<Box<functions::Functions>>,
}

/// Lua source run once at start-up, before the globals are locked: Redis 7's error handler, which
/// turns any error into `{err=..., source=..., line=...}` for the reply's `script: ..., on ...`.
const PRELUDE: &str = r#"
local dbg = debug
__redis__err__handler = function(err)
  local i = dbg.getinfo(2,'nSl')
  if i and i.what == 'C' then
    i = dbg.getinfo(3,'nSl')
  end
  if type(err) ~= 'table' then
    err = {err='ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
"#;

/// The globals a script sees (Redis 7.0.15's, as `pairs(_G)` lists them there).
const ALLOWED_GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "__redis__err__handler",
    "assert",
    "bit",
    "cjson",
    "cmsgpack",
    "collectgarbage",
    "coroutine",
    "error",
    "gcinfo",
    "getmetatable",
    "ipairs",
    "load",
    "loadstring",
    "math",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawset",
    "redis",
    "select",
    "setmetatable",
    "string",
    "struct",
    "table",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "xpcall",
];

/// Library tables locked read-only after set-up.
const LOCKED_TABLES: &[&str] = &[
    "string",
    "table",
    "math",
    "coroutine",
    "bit",
    "cjson",
    "cmsgpack",
    "struct",
    "redis",
];

impl Lua {
    pub fn new(config: &crate::config::Config) -> Lua {
        let mut mem = Box::new(Mem {
            used: 0,
            heap: SizedHeap::default(),
            limit: config.lua_memory_limit as usize,
            refused: false,
        });
        // SAFETY: a fresh state with our allocator; set-up runs Lua code we wrote, in C-protected
        // calls (`lua_call` of library openers cannot fail here but for memory, unlimited now).
        unsafe {
            let saved = mem.limit;
            mem.limit = 0;
            let l = lua_newstate(alloc, &mut *mem as *mut Mem as *mut c_void);
            assert!(!l.is_null(), "cannot create the Lua VM");
            for (open, name) in [
                (luaopen_base as lua_CFunction, ""),
                (luaopen_table, "table"),
                (luaopen_string, "string"),
                (luaopen_math, "math"),
                (luaopen_debug, "debug"),
            ] {
                lua_pushcclosure(l, open, 0);
                let name = CString::new(name).unwrap();
                lua_pushstring(l, name.as_ptr());
                lua_call(l, 1, 0);
            }
            api::register(l);
            let cjson_config = libs::register(l);
            run_prelude(l);
            lua_createtable(l, 0, 1);
            goblin_lua51_push_host_fn(l, api::missing_global);
            raw_set_field(l, -2, "__index");
            lua_setmetatable(l, LUA_GLOBALSINDEX);
            lua_getfield(l, LUA_GLOBALSINDEX, c"__redis__err__handler".as_ptr());
            let err_handler = luaL_ref(l, LUA_REGISTRYINDEX);
            sandbox(l);
            mem.limit = saved;
            Lua {
                l,
                mem,
                cache: ScriptCache::default(),
                err_handler,
                keys_table: LUA_NOREF,
                argv_table: LUA_NOREF,
                cjson_config,
                functions: None,
            }
        }
    }

    pub fn set_memory_limit(&mut self, limit: usize) {
        self.mem.limit = limit;
    }

    /// Full collections until one frees little: a Lua 5.1 cycle only halves the string table and
    /// the buffer strings are built in (`checkSizes`), which a script that made a big string
    /// (`s .. s`) leaves as big as that string. A cycle costs about the live size, so another
    /// runs only while the last freed a sixteenth of it.
    fn collect_fully(&mut self) {
        for _ in 0..32 {
            let before = self.mem.used;
            // SAFETY: a full collection is always allowed between calls.
            unsafe { lua_gc(self.l, LUA_GCCOLLECT, 0) };
            if before.saturating_sub(self.mem.used) < (self.mem.used / 16).max(64 << 10) {
                break;
            }
        }
    }
}

/// Compiles `code` as chunk `name`, leaving its function on the stack; on error pops the message
/// and returns it with the status.
unsafe fn load_chunk(l: *mut lua_State, code: &[u8], name: &CStr) -> Result<(), (c_int, String)> {
    let st = luaL_loadbuffer(l, code.as_ptr() as *const _, code.len(), name.as_ptr());
    if st == 0 {
        return Ok(());
    }
    let msg = to_bytes(l, -1).map(|m| String::from_utf8_lossy(m).into_owned());
    lua_pop(l, 1);
    Err((st, msg.unwrap_or_default()))
}

unsafe fn run_prelude(l: *mut lua_State) {
    let st = luaL_loadbuffer(
        l,
        PRELUDE.as_ptr() as *const _,
        PRELUDE.len(),
        c"=prelude".as_ptr(),
    );
    assert_eq!(st, 0, "prelude compiles");
    lua_call(l, 0, 0);
}

/// Removes every global not on the allow-list and locks `_G` and the libraries read-only.
unsafe fn sandbox(l: *mut lua_State) {
    // Collect the names first: a table must not change while `lua_next` walks it.
    let mut names: Vec<Vec<u8>> = Vec::new();
    lua_pushnil(l);
    while lua_next(l, LUA_GLOBALSINDEX) != 0 {
        lua_pop(l, 1);
        if let Some(k) = to_bytes(l, -1) {
            if lua_type(l, -1) == LUA_TSTRING {
                names.push(k.to_vec());
            }
        }
    }
    for name in names {
        if !ALLOWED_GLOBALS.iter().any(|a| a.as_bytes() == &name[..]) {
            push_bytes(l, &name);
            lua_pushnil(l);
            lua_rawset(l, LUA_GLOBALSINDEX);
        }
    }
    goblin_lua51_install_pcall(l, LUA_GLOBALSINDEX);
    goblin_lua51_guard_setmetatable(l, LUA_GLOBALSINDEX);
    api::guard_loaders(l);
    for t in LOCKED_TABLES {
        raw_get_field(l, LUA_GLOBALSINDEX, t);
        if lua_type(l, -1) == LUA_TTABLE {
            goblin_lua51_set_readonly(l, -1, 1);
        }
        lua_pop(l, 1);
    }
    // The string metatable (strings index `string` through it) and _G's own metatable.
    push_bytes(l, b"");
    if lua_getmetatable(l, -1) != 0 {
        goblin_lua51_set_readonly(l, -1, 1);
        lua_pop(l, 1);
    }
    lua_pop(l, 1);
    if lua_getmetatable(l, LUA_GLOBALSINDEX) != 0 {
        goblin_lua51_set_readonly(l, -1, 1);
        lua_pop(l, 1);
    }
    lua_pushvalue(l, LUA_GLOBALSINDEX);
    goblin_lua51_set_readonly(l, -1, 1);
    lua_pop(l, 1);
}

/// Fills the table behind registry reference `slot` with `args` — a new table, set as global
/// `name`, when the last one can't be reused (see `goblin_lua51_reset_array`).
unsafe fn refill_global_array(l: *mut lua_State, slot: &mut c_int, args: Args, name: &str) {
    lua_rawgeti(l, LUA_REGISTRYINDEX, *slot);
    let n = args.len() as c_int;
    if lua_type(l, -1) == LUA_TTABLE && goblin_lua51_reset_array(l, -1, n) != 0 {
        for (i, a) in args.iter().enumerate() {
            push_bytes(l, a);
            lua_rawseti(l, -2, i as c_int + 1);
        }
        lua_pop(l, 1);
        return;
    }
    lua_pop(l, 1);
    luaL_unref(l, LUA_REGISTRYINDEX, *slot);
    push_array::<Api>(l, args);
    lua_pushvalue(l, -1);
    *slot = luaL_ref(l, LUA_REGISTRYINDEX);
    set_global_unlocked(l, name);
}

/// Sets a global past the read-only lock (KEYS and ARGV, as Redis does before each call).
unsafe fn set_global_unlocked(l: *mut lua_State, name: &str) {
    lua_pushvalue(l, LUA_GLOBALSINDEX);
    goblin_lua51_set_readonly(l, -1, 0);
    lua_insert(l, -2);
    raw_set_field(l, -2, name);
    goblin_lua51_set_readonly(l, -1, 1);
    lua_pop(l, 1);
}

impl Engine for Lua {
    super::cache::engine_methods!(Lua);

    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String> {
        let Some(flags) = self.cache.to_compile(EngineId::Lua, sha, body, pinned)? else {
            return Ok(());
        };
        let l = self.l;
        // A shebang line stays in the source as a comment, so line numbers match the body's.
        let mut src;
        let code: &[u8] = if body.starts_with(b"#!") {
            src = body.to_vec();
            src[..2].copy_from_slice(b"--");
            &src
        } else {
            src = Vec::new();
            let _ = &src;
            body
        };
        // SAFETY: compiling leaves either the function or an error message on the stack.
        unsafe {
            if let Err((st, msg)) = load_chunk(l, code, c"@user_script") {
                if st == LUA_ERRMEM {
                    self.mem.refused = false;
                    return Err("ERR Error compiling script: not enough memory".into());
                }
                return Err(format!("ERR Error compiling script (new function): {msg}"));
            }
            let r = luaL_ref(l, LUA_REGISTRYINDEX);
            for gone in self.cache.insert(*sha, r, flags, body.len(), pinned) {
                luaL_unref(l, LUA_REGISTRYINDEX, gone);
            }
        }
        Ok(())
    }

    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool {
        let Some(&func) = self.cache.get(sha) else {
            return false;
        };
        let l = self.l;
        // SAFETY: `invoke` takes the error handler and the chunk off the stack.
        unsafe {
            lua_rawgeti(l, LUA_REGISTRYINDEX, self.err_handler);
            lua_rawgeti(l, LUA_REGISTRYINDEX, func);
            refill_global_array(l, &mut self.keys_table, keys, "KEYS");
            refill_global_array(l, &mut self.argv_table, argv, "ARGV");
            self.invoke(run, 0);
        }
        true
    }

    fn flush(&mut self) {
        // SAFETY: the cjson module (a global) keeps the settings' userdata alive.
        unsafe { *self.cjson_config = Default::default() };
        for r in self.cache.drain() {
            // SAFETY: references we took in `load`.
            unsafe { luaL_unref(self.l, LUA_REGISTRYINDEX, r) };
        }
        // SAFETY: a full collection is always allowed between calls.
        unsafe { lua_gc(self.l, LUA_GCCOLLECT, 0) };
    }

    fn memory(&self) -> usize {
        self.mem.used
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
        functions::call(self, run, lib, index, keys, args);
    }

    fn drop_library(&mut self, lib: super::function::LibId) {
        functions::drop_library(self, lib);
    }

    fn set_memory_limit(&mut self, bytes: usize) {
        // A library's loading run takes its VM's limit from this one.
        self.mem.limit = bytes;
    }

    fn functions_memory(&self) -> usize {
        self.functions.as_ref().map_or(0, |f| f.memory())
    }

    fn collect(&mut self) {
        self.collect_fully();
        if let Some(f) = self.functions.as_mut() {
            f.collect();
        }
    }
}

impl Lua {
    /// Calls the function under `nargs` arguments on the stack, with the error handler below it,
    /// under the hook and the memory limit, and writes its result or error as the reply (EVAL's
    /// scripts and FCALL's functions alike). Leaves the stack empty.
    unsafe fn invoke(&mut self, run: &mut Run, nargs: c_int) {
        // CONFIG SET lua-memory-limit takes effect from the next call.
        self.mem.limit = run.config().lua_memory_limit as usize;
        let l = self.l;
        // Host functions reach `run` through CURRENT only while `lua_pcall` runs, and `run` is
        // not used here meanwhile.
        CURRENT.with(|c| c.set(run as *mut Run as *mut c_void));
        goblin_lua51_set_hook(l, HOOK_EVERY);
        let st = lua_pcall(l, nargs, 1, -(nargs + 2));
        goblin_lua51_set_hook(l, 0);
        CURRENT.with(|c| c.set(ptr::null_mut()));
        // What the error texts call the script: its sha, or the function's name (FCALL). Only
        // error replies need it.
        let resp = run.resp;
        let (out, function, sha) = run.out_and_names();
        let name = || function.unwrap_or_else(|| std::str::from_utf8(sha).unwrap_or_default());
        let mut sink = Sink::new(out);
        if st == 0 {
            shared::reply::<Api>(l, &mut sink, resp);
        } else if st == LUA_ERRMEM || self.mem.refused {
            self.mem.refused = false;
            sink.error_message(&format!(
                "ERR Out of memory running script (lua-memory-limit is {} bytes) script: {}",
                self.mem.limit,
                name()
            ));
        } else {
            error_reply(l, &mut sink, name());
        }
        lua_settop(l, 0);
        if self.mem.used > self.mem.limit / 2 && self.mem.limit > 0 {
            // A script that came close to the limit gives its garbage back now.
            let before = self.mem.used;
            lua_gc(l, LUA_GCCOLLECT, 0);
            crate::alloc::note_freed(before.saturating_sub(self.mem.used));
        }
    }
}

impl Drop for Lua {
    fn drop(&mut self) {
        // SAFETY: the state is ours and no call is running.
        unsafe { lua_close(self.l) };
    }
}

/// The error reply for a failed call, as Redis 7's `luaCallFunction` words it.
unsafe fn error_reply(l: *mut lua_State, sink: &mut Sink, sha: &str) {
    if lua_type(l, -1) == LUA_TTABLE {
        raw_get_field(l, -1, "err");
        let msg = to_bytes(l, -1).map(|m| m.to_vec());
        lua_pop(l, 1);
        raw_get_field(l, -1, "source");
        let source = to_bytes(l, -1).map(|m| m.to_vec());
        lua_pop(l, 1);
        raw_get_field(l, -1, "line");
        let line = to_bytes(l, -1).map(|m| m.to_vec());
        lua_pop(l, 1);
        let msg = String::from_utf8_lossy(msg.as_deref().unwrap_or(b"ERR unknown error"));
        match (source, line) {
            (Some(s), Some(n)) => sink.error_message(&format!(
                "{} script: {}, on {}:{}.",
                msg.trim_end_matches(['\r', '\n']),
                sha,
                String::from_utf8_lossy(&s),
                String::from_utf8_lossy(&n)
            )),
            _ => sink.error_message(&msg),
        }
    } else {
        let msg = to_bytes(l, -1).map(|m| String::from_utf8_lossy(m).into_owned());
        sink.error_message(&format!(
            "ERR Error running script (call to f_{}): @user_script: {}",
            sha,
            msg.unwrap_or_default()
        ));
    }
}

/// The instruction-count hook's question (see `vendor/lua51/glue.c`).
///
/// # Safety
/// Called by Lua's hook with the running state.
#[no_mangle]
pub unsafe extern "C" fn goblin_lua51_on_hook(l: *mut lua_State) -> c_int {
    // SAFETY: the hook runs inside `lua_pcall` of `Lua::run`, with CURRENT set.
    let Some(run) = (unsafe { current() }) else {
        // No script runs: a function library is loading.
        return unsafe { functions::load_hook(l) };
    };
    match run.check_budget() {
        None => 0,
        Some(Stop::Killed(msg)) => {
            // SAFETY: pushing an error table for the C hook to raise.
            unsafe { api::push_error_table(l, msg.as_bytes()) };
            2
        }
    }
}
