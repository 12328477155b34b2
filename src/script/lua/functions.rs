//! Redis Functions for Lua, as Redis 7's function_lua.c: libraries live in a VM of their own (the
//! EVAL VM's SCRIPT FLUSH never touches them), sandboxed as EVAL's, whose globals table is empty
//! and read-only with a metatable `__index` that is switched between two tables:
//! - the loading API while a library's code runs: only `redis.register_function`, `redis.log`,
//!   the `LOG_*` levels and `REDIS_VERSION`/`REDIS_VERSION_NUM` exist (so `redis.call` there is
//!   `Script attempted to access nonexistent global variable 'call'`, as in Redis), and the run is
//!   stopped after `LOAD_TIMEOUT_MS`;
//! - the sandboxed globals of EVAL (without KEYS/ARGV: a function gets `keys` and `args` as its
//!   arguments) whenever a function runs.
//!
//! Each registered callback is a registry reference, kept per library (`Functions::libs`);
//! `redis.register_function` reads its arguments as Luau's does (`shared::register_function`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_int;
use std::time::{Duration, Instant};

use super::api;
use super::ffi::*;
use super::shared::{self, push_array};
use super::Lua;
use crate::resp::parser::Args;
use crate::script::function::{LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS};
use crate::script::Run;

/// The functions' VM and the callbacks of each library.
pub(super) struct Functions {
    vm: Lua,
    libs: HashMap<LibId, Vec<c_int>>,
    /// Registry references of the two tables the globals' `__index` switches between.
    runtime_api: c_int,
    load_api: c_int,
}

/// What the loading run registered so far.
type Loading = shared::Loading;

thread_local! {
    /// Set while a library's code runs: `redis.register_function` adds to it.
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
    /// When the loading run must stop.
    static LOAD_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

impl Functions {
    fn new(limit: usize) -> Box<Functions> {
        let mut vm = Lua::new(&crate::config::Config::default());
        vm.mem.limit = 0;
        let l = vm.l;
        // SAFETY: set-up on a fresh VM, unlimited memory, balanced stack.
        let (load_api, runtime_api) = unsafe {
            lua_newtable(l);
            lua_newtable(l);
            goblin_lua51_push_host_fn(l, register_function);
            raw_set_field(l, -2, "register_function");
            goblin_lua51_push_host_fn(l, api::redis_fns::log);
            raw_set_field(l, -2, "log");
            super::shared::set_constants::<Api>(l, false);
            lock_with_error_metatable(l);
            raw_set_field(l, -2, "redis");
            lock_with_error_metatable(l);
            let load_api = luaL_ref(l, LUA_REGISTRYINDEX);
            lua_pushvalue(l, LUA_GLOBALSINDEX);
            let runtime_api = luaL_ref(l, LUA_REGISTRYINDEX);
            // The new globals: empty, read-only, reading through the switched `__index`.
            lua_newtable(l);
            lua_newtable(l);
            lua_rawgeti(l, LUA_REGISTRYINDEX, runtime_api);
            raw_set_field(l, -2, "__index");
            goblin_lua51_set_readonly(l, -1, 1);
            lua_setmetatable(l, -2);
            goblin_lua51_set_readonly(l, -1, 1);
            lua_replace(l, LUA_GLOBALSINDEX);
            (load_api, runtime_api)
        };
        vm.mem.limit = limit;
        Box::new(Functions {
            vm,
            libs: HashMap::new(),
            runtime_api,
            load_api,
        })
    }

    /// Bytes the functions' VM holds.
    pub fn memory(&self) -> usize {
        self.vm.mem.used
    }

    /// Collects the functions' VM in full (`Engine::collect`).
    pub(super) fn collect(&mut self) {
        self.vm.collect_fully();
    }

    /// Points the globals' `__index` at the table `api` refers to.
    unsafe fn switch_globals(&self, api: c_int) {
        let l = self.vm.l;
        lua_getmetatable(l, LUA_GLOBALSINDEX);
        goblin_lua51_set_readonly(l, -1, 0);
        lua_rawgeti(l, LUA_REGISTRYINDEX, api);
        raw_set_field(l, -2, "__index");
        goblin_lua51_set_readonly(l, -1, 1);
        lua_pop(l, 1);
    }
}

/// Gives the table on top a metatable whose `__index` raises Redis's "nonexistent global" error,
/// and locks both read-only (Redis's `luaSetErrorMetatable` and table protection).
unsafe fn lock_with_error_metatable(l: *mut lua_State) {
    lua_newtable(l);
    goblin_lua51_push_host_fn(l, api::missing_global);
    raw_set_field(l, -2, "__index");
    goblin_lua51_set_readonly(l, -1, 1);
    lua_setmetatable(l, -2);
    goblin_lua51_set_readonly(l, -1, 1);
}

/// `Engine::load_library` for Lua (Redis's `luaEngineCreate`).
pub(super) fn load(lua: &mut Lua, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
    let limit = lua.mem.limit;
    let f = lua.functions.get_or_insert_with(|| Functions::new(limit));
    f.vm.mem.limit = limit;
    let l = f.vm.l;
    // SAFETY: the chunk runs protected; the stack is restored on every path; host functions see
    // LOADING only during the call.
    unsafe {
        if let Err((_, msg)) = super::load_chunk(l, code, c"@user_function") {
            lua_settop(l, 0);
            f.vm.mem.refused = false;
            return Err(format!("Error compiling function: {msg}"));
        }
        f.switch_globals(f.load_api);
        LOADING.with(|c| *c.borrow_mut() = Some(Loading::default()));
        LOAD_DEADLINE.with(|d| {
            d.set(Some(
                Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS),
            ))
        });
        goblin_lua51_set_hook(l, super::HOOK_EVERY);
        let st = lua_pcall(l, 0, 0, 0);
        goblin_lua51_set_hook(l, 0);
        LOAD_DEADLINE.with(|d| d.set(None));
        let loading = LOADING.with(|c| c.borrow_mut().take()).unwrap_or_default();
        f.switch_globals(f.runtime_api);
        if st != 0 {
            let msg = if st == LUA_ERRMEM || f.vm.mem.refused {
                "ERR not enough memory".to_string()
            } else {
                error_text(l)
            };
            f.vm.mem.refused = false;
            lua_settop(l, 0);
            for r in loading.callbacks {
                luaL_unref(l, LUA_REGISTRYINDEX, r);
            }
            return Err(format!("Error registering functions: {msg}"));
        }
        f.libs.insert(lib, loading.callbacks);
        Ok(loading.functions)
    }
}

/// The text of the error value on top (Redis's `luaExtractErrorInformation`): a string gets the
/// `ERR` code, an error table gives its `err`.
unsafe fn error_text(l: *mut lua_State) -> String {
    match lua_type(l, -1) {
        LUA_TSTRING | LUA_TNUMBER => format!(
            "ERR {}",
            String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default())
        ),
        LUA_TTABLE => {
            raw_get_field(l, -1, "err");
            let msg = to_bytes(l, -1).map(|m| String::from_utf8_lossy(m).into_owned());
            lua_pop(l, 1);
            msg.unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// `Engine::call_function` for Lua (Redis's `luaEngineCall`): the callback with `keys` and `args`
/// tables as its arguments, under the error handler, the hook and the memory limit of EVAL.
pub(super) fn call(lua: &mut Lua, run: &mut Run, lib: LibId, index: usize, keys: Args, args: Args) {
    let Some(f) = lua.functions.as_mut() else {
        run.out().error("ERR Function not found");
        return;
    };
    let Some(&func) = f.libs.get(&lib).and_then(|c| c.get(index)) else {
        run.out().error("ERR Function not found");
        return;
    };
    let l = f.vm.l;
    // SAFETY: `invoke` takes the error handler, the function and its two arguments off the stack.
    unsafe {
        lua_rawgeti(l, LUA_REGISTRYINDEX, f.vm.err_handler);
        lua_rawgeti(l, LUA_REGISTRYINDEX, func);
        push_array::<Api>(l, keys);
        push_array::<Api>(l, args);
        f.vm.invoke(run, 2);
    }
}

/// `Engine::drop_library` for Lua.
pub(super) fn drop_library(lua: &mut Lua, lib: LibId) {
    let Some(f) = lua.functions.as_mut() else {
        return;
    };
    for r in f.libs.remove(&lib).unwrap_or_default() {
        // SAFETY: references taken by `register_function`.
        unsafe { luaL_unref(f.vm.l, LUA_REGISTRYINDEX, r) };
    }
}

/// The hook's question while a library loads (no `Run` then): stop past the deadline.
pub(super) unsafe fn load_hook(l: *mut lua_State) -> c_int {
    match LOAD_DEADLINE.with(|d| d.get()) {
        Some(deadline) if Instant::now() > deadline => {
            api::push_error_table(l, format!("ERR {LOAD_TIMEOUT_ERROR}").as_bytes());
            2
        }
        _ => 0,
    }
}

/// `redis.register_function` (see `shared::register_function`).
unsafe extern "C" fn register_function(l: *mut lua_State) -> c_int {
    shared::register_function::<Api>(l, &LOADING)
}
