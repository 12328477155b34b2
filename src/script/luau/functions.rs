//! Redis Functions for Luau: a library is a chunk (named `user_function`) run once in the EVAL VM,
//! whose globals and libraries are read-only, so a library can only keep state in its own locals.
//! It registers its functions with Redis's Lua idiom, `redis.register_function(name, callback)` or
//! `redis.register_function{function_name=..., callback=..., flags={...}, description=...}`;
//! outside a loading run `register_function` raises, and inside one `redis.call` raises (no `Run`
//! exists then). The loading run is stopped after `LOAD_TIMEOUT_MS` by the interrupt.
//!
//! Each callback is a registry reference, kept per library; FCALL runs one through the same
//! trampoline as EVAL runs a chunk, with `keys` and `args` as its two arguments. Registration reads
//! its arguments as the Lua engine's does (`script::lua::shared::register_function`).

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::time::{Duration, Instant};

use mlua::ffi::{self, lua_State};

use super::{to_bytes, Luau};
use crate::script::function::{LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS};
use crate::script::lua::shared;

/// What the loading run registered so far.
type Loading = shared::Loading;

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
    static LOAD_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The chunk name of libraries: errors read `user_function:3: ...`, as Redis's Lua functions'.
const CHUNK_NAME: &std::ffi::CStr = c"@user_function";

/// `Engine::load_library` for Luau.
pub(super) fn load(luau: &mut Luau, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
    let bytecode = super::compile(code);
    let mut outcome: Result<(), String> = Ok(());
    LOADING.with(|c| *c.borrow_mut() = Some(Loading::default()));
    LOAD_DEADLINE.with(|d| {
        d.set(Some(
            Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS),
        ))
    });
    // SAFETY: loading and the run happen protected by `exec_raw`, with a balanced stack.
    let protected = unsafe {
        luau.lua.exec_raw::<()>((), |l| {
            if let Err(msg) = super::load_bytecode(l, &bytecode, CHUNK_NAME) {
                outcome = Err(format!("Error compiling function: {msg}"));
            } else if ffi::lua_pcall(l, 0, 0, 0) != ffi::LUA_OK {
                outcome = Err(format!("Error registering functions: {}", error_text(l)));
            }
            ffi::lua_settop(l, 0);
        })
    };
    LOAD_DEADLINE.with(|d| d.set(None));
    let loading = LOADING.with(|c| c.borrow_mut().take()).unwrap_or_default();
    let outcome = match protected {
        Err(mlua::Error::MemoryError(_)) => {
            Err("Error registering functions: ERR not enough memory".into())
        }
        Err(e) => Err(format!("Error registering functions: {e}")),
        Ok(()) => outcome,
    };
    if let Err(e) = outcome {
        for r in loading.callbacks {
            // SAFETY: references taken by `register_function`.
            unsafe { ffi::lua_unref(luau.l, r) };
        }
        return Err(e);
    }
    luau.libs.insert(lib, loading.callbacks);
    Ok(loading.functions)
}

/// The text of the error value on top: a string gets the `ERR` code, an error table gives its
/// `err` (as Redis's `luaExtractErrorInformation`).
unsafe fn error_text(l: *mut lua_State) -> String {
    unsafe {
        match ffi::lua_type(l, -1) {
            ffi::LUA_TSTRING => format!(
                "ERR {}",
                String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default())
            ),
            ffi::LUA_TTABLE => {
                ffi::lua_rawgetfield(l, -1, c"err".as_ptr());
                let msg = String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default()).into_owned();
                ffi::lua_settop(l, -2);
                msg
            }
            _ => "ERR unknown error".into(),
        }
    }
}

/// `Engine::drop_library` for Luau.
pub(super) fn drop_library(luau: &mut Luau, lib: LibId) {
    for r in luau.libs.remove(&lib).unwrap_or_default() {
        // SAFETY: references taken by `register_function`.
        unsafe { ffi::lua_unref(luau.l, r) };
    }
}

/// The interrupt's question while a library loads (no `Run` then): past the deadline?
pub(super) fn load_timed_out() -> bool {
    LOAD_DEADLINE.with(|d| d.get().is_some_and(|t| Instant::now() > t))
}

pub(super) const TIMEOUT_ERROR: &str = LOAD_TIMEOUT_ERROR;

/// `redis.register_function` (see `script::lua::shared::register_function`).
pub(super) unsafe extern "C-unwind" fn register_function(l: *mut lua_State) -> c_int {
    // SAFETY: reading the arguments of this call, raising from a C function of the VM.
    unsafe { shared::register_function::<super::Api>(l, &LOADING) }
}
