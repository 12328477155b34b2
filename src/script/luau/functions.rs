//! Redis Functions for Luau: a library is a chunk (named `user_function`) run once in the EVAL VM,
//! whose globals and libraries are read-only, so a library can only keep state in its own locals.
//! It registers its functions with Redis's Lua idiom, `redis.register_function(name, callback)` or
//! `redis.register_function{function_name=..., callback=..., flags={...}, description=...}`;
//! outside a loading run `register_function` raises, and inside one `redis.call` raises (no `Run`
//! exists then). The loading run is stopped after `LOAD_TIMEOUT_MS` by the interrupt.
//!
//! Each callback is a registry reference, kept per library; FCALL runs one through the same
//! trampoline as EVAL runs a chunk, with `keys` and `args` as its two arguments.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::time::{Duration, Instant};

use mlua::ffi::{self, lua_State};

use super::{to_bytes, Luau};
use crate::script::function::{parse_flag, LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS};

/// What the loading run registered so far.
type Loading = crate::script::function::Loading<c_int>;

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
    static LOAD_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The chunk name of libraries: errors read `user_function:3: ...`, as Redis's Lua functions'.
const CHUNK_NAME: &std::ffi::CStr = c"@user_function";

/// `Engine::load_library` for Luau.
pub(super) fn load(luau: &mut Luau, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
    let mut options = ffi::lua_CompileOptions::default();
    options.optimizationLevel = 2;
    options.debugLevel = 1;
    // SAFETY: the compiler only reads the source.
    let bytecode = unsafe { ffi::luau_compile(code, options) };
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
            let st = ffi::luau_load(
                l,
                CHUNK_NAME.as_ptr(),
                bytecode.as_ptr() as *const _,
                bytecode.len(),
                0,
            );
            if st != 0 {
                let msg = String::from_utf8_lossy(to_bytes(l, -1).unwrap_or_default());
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

/// `redis.register_function` (the same forms and errors as Redis's Lua `luaRegisterFunction`).
pub(super) unsafe extern "C-unwind" fn register_function(l: *mut lua_State) -> c_int {
    let registered = LOADING.with(|c| match c.borrow_mut().as_mut() {
        None => Err("redis.register_function can only be called on FUNCTION LOAD command".into()),
        // SAFETY: reading the arguments of this call.
        Some(loading) => unsafe { read_registration(l, loading) },
    });
    match registered {
        Ok(()) => 0,
        // SAFETY: raising from a C function of the VM.
        Err(msg) => unsafe { super::api::raise(l, &msg) },
    }
}

/// A string argument: a string, or a number's text (converted on a copy of the value).
unsafe fn string_arg(l: *mut lua_State, idx: c_int) -> Option<Vec<u8>> {
    unsafe {
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING => to_bytes(l, idx).map(<[u8]>::to_vec),
            ffi::LUA_TNUMBER => {
                ffi::lua_pushvalue(l, idx);
                let mut len = 0;
                let p = ffi::lua_tolstring(l, -1, &mut len);
                let s = std::slice::from_raw_parts(p as *const u8, len).to_vec();
                ffi::lua_settop(l, -2);
                Some(s)
            }
            _ => None,
        }
    }
}

unsafe fn read_registration(l: *mut lua_State, loading: &mut Loading) -> Result<(), String> {
    unsafe {
        let argc = ffi::lua_gettop(l);
        let (mut name, mut description, mut callback, mut flags) = (None, None, None, 0u32);
        let read = match argc {
            2 => match string_arg(l, 1) {
                None => Err("first argument to redis.register_function must be a string".into()),
                Some(_) if ffi::lua_type(l, 2) != ffi::LUA_TFUNCTION => {
                    Err("second argument to redis.register_function must be a function".into())
                }
                Some(n) => {
                    name = Some(n);
                    callback = Some(ffi::lua_ref(l, 2));
                    Ok(())
                }
            },
            1 => named(l, &mut name, &mut description, &mut callback, &mut flags),
            _ => Err("wrong number of arguments to redis.register_function".into()),
        };
        let checked = read.and_then(|()| {
            let name = name.ok_or("redis.register_function must get a function name argument")?;
            callback.ok_or("redis.register_function must get a callback argument")?;
            loading.check(&name)
        });
        match checked {
            Ok(name) => {
                loading.push(
                    name,
                    description,
                    flags,
                    callback.expect("the callback was checked above"),
                );
                Ok(())
            }
            Err(e) => {
                if let Some(r) = callback {
                    ffi::lua_unref(l, r);
                }
                Err(e)
            }
        }
    }
}

unsafe fn named(
    l: *mut lua_State,
    name: &mut Option<Vec<u8>>,
    description: &mut Option<Vec<u8>>,
    callback: &mut Option<c_int>,
    flags: &mut u32,
) -> Result<(), String> {
    unsafe {
        if ffi::lua_type(l, 1) != ffi::LUA_TTABLE {
            return Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".into());
        }
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, 1) != 0 {
            let key = match ffi::lua_type(l, -2) {
                ffi::LUA_TSTRING => to_bytes(l, -2).unwrap_or_default().to_ascii_lowercase(),
                ffi::LUA_TNUMBER => Vec::new(),
                _ => {
                    return Err(
                        "named argument key given to redis.register_function is not a string"
                            .into(),
                    )
                }
            };
            match &key[..] {
                b"function_name" => {
                    *name = Some(string_arg(l, -1).ok_or(
                        "function_name argument given to redis.register_function must be a string",
                    )?)
                }
                b"description" => {
                    *description = Some(string_arg(l, -1).ok_or(
                        "description argument given to redis.register_function must be a string",
                    )?)
                }
                b"callback" => {
                    if ffi::lua_type(l, -1) != ffi::LUA_TFUNCTION {
                        return Err(
                            "callback argument given to redis.register_function must be a function"
                                .into(),
                        );
                    }
                    if let Some(old) = callback.take() {
                        ffi::lua_unref(l, old);
                    }
                    *callback = Some(ffi::lua_ref(l, -1));
                }
                b"flags" => {
                    if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
                        return Err("flags argument to redis.register_function must be a table representing function flags".into());
                    }
                    let mut j = 1;
                    while ffi::lua_rawgeti_(l, -1, j) != ffi::LUA_TNIL {
                        let flag = string_arg(l, -1);
                        ffi::lua_settop(l, -2);
                        *flags |= parse_flag(&flag.ok_or("unknown flag given")?)?;
                        j += 1;
                    }
                    ffi::lua_settop(l, -2);
                }
                _ => return Err("unknown argument given to redis.register_function".into()),
            }
            ffi::lua_settop(l, -2);
        }
        Ok(())
    }
}
