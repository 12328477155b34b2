//! Redis Functions for MicroPython. A library's code runs once, as a module with globals of its
//! own (`user_function` in errors, lines counted from the shebang line): its top-level `def`s,
//! classes and variables are the library's shared helpers and state, which no other library
//! sees. It registers its functions with `redis.register_function(name, callback)`, or with
//! keyword arguments `redis.register_function(function_name=..., callback=..., flags=[...],
//! description=...)` (a dict with those keys as the one argument works too). Outside a loading
//! run `register_function` raises; inside one `redis.call` raises (no `Run` exists then); a
//! loading run is stopped past `LOAD_TIMEOUT_MS` by the VM hook, as SCRIPT KILL stops a script.
//!
//! MicroPython has one VM per process, so the libraries live in the scripts' VM: each keeps its
//! callbacks as a list in a root slot, and FCALL runs one through the same path as EVAL
//! (`MicroPython::invoke`). When the VM restarts (SCRIPT FLUSH, a new `upython-memory-limit`),
//! every library's code runs again, so the libraries stay (their module state starts afresh).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_long};
use std::time::{Duration, Instant};

use super::{goblin_upy_release, has_error_code, KILLED, TICKS};
use crate::script::function::{
    check_registration, parse_flag, same_functions, LibId, Registered, LOAD_TIMEOUT_ERROR,
    LOAD_TIMEOUT_MS,
};
use crate::script::Flags;

extern "C" {
    fn goblin_upy_load_library(
        src: *const u8,
        len: usize,
        kind: *mut c_int,
        err: *mut u8,
        err_len: *mut usize,
        line: *mut i64,
    ) -> c_long;
}

// How a library failed to load (`goblin_upy_load_library`'s kind), as in glue.c.
const LOAD_COMPILE: c_int = 0;
const LOAD_RAISED_REDIS: c_int = 1;
const LOAD_MEMORY: c_int = 3;

/// A loaded library: its code (run again when the VM restarts), the root slot of its
/// callbacks (-1 when it no longer loads the same functions after a restart) and their names.
struct Lib {
    code: Box<[u8]>,
    slot: c_long,
    names: Vec<String>,
}

#[derive(Default)]
pub(super) struct Libs {
    libs: BTreeMap<LibId, Lib>,
}

thread_local! {
    /// What the loading run registered so far; `None` outside one.
    static LOADING: RefCell<Option<Vec<Registered>>> = const { RefCell::new(None) };
    /// When the loading run must stop.
    static LOAD_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

impl Libs {
    /// `Engine::load_library` for MicroPython.
    pub fn load(&mut self, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
        let (slot, functions) = run_library(code)?;
        self.libs.insert(
            lib,
            Lib {
                code: code.into(),
                slot,
                names: functions.iter().map(|f| f.name.clone()).collect(),
            },
        );
        Ok(functions)
    }

    /// The root slot of a library's callbacks, if it has callback `index`: -1 if the library no
    /// longer loads.
    pub fn slot(&self, lib: LibId, index: usize) -> Option<c_long> {
        self.libs
            .get(&lib)
            .filter(|l| index < l.names.len())
            .map(|l| l.slot)
    }

    pub fn drop_library(&mut self, lib: LibId) {
        if let Some(l) = self.libs.remove(&lib) {
            release(l.slot);
        }
    }

    /// Every library loaded again, in a VM just restarted (its old slots are gone with it).
    pub fn reload(&mut self) {
        for lib in self.libs.values_mut() {
            lib.slot = match run_library(&lib.code) {
                Ok((slot, f)) if same_functions(&f, &lib.names) => slot,
                Ok((slot, _)) => {
                    release(slot);
                    -1
                }
                Err(_) => -1,
            };
        }
    }
}

fn release(slot: c_long) {
    if slot >= 0 {
        // SAFETY: a slot `goblin_upy_load_library` filled; the VM is idle.
        unsafe { goblin_upy_release(slot) };
    }
}

/// Runs a library's code in a loading run within the load deadline: the root slot of its
/// callbacks and what it registered, or the error text (no `ERR ` prefix).
fn run_library(code: &[u8]) -> Result<(c_long, Vec<Registered>), String> {
    LOADING.with(|c| *c.borrow_mut() = Some(Vec::new()));
    LOAD_DEADLINE.with(|d| {
        d.set(Some(
            Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS),
        ))
    });
    TICKS.with(|t| t.set(super::CHECK_EVERY));
    KILLED.with(|k| k.set(false));
    let mut err = [0u8; 512];
    let (mut kind, mut err_len, mut line) = (0, 0, 0);
    // SAFETY: the VM is ours and idle; C writes at most 512 bytes of error text.
    let slot = unsafe {
        goblin_upy_load_library(
            code.as_ptr(),
            code.len(),
            &mut kind,
            err.as_mut_ptr(),
            &mut err_len,
            &mut line,
        )
    };
    LOAD_DEADLINE.with(|d| d.set(None));
    super::collect_if_full();
    let functions = LOADING.with(|c| c.borrow_mut().take()).unwrap_or_default();
    if KILLED.with(|k| k.replace(false)) {
        release(slot);
        return Err(format!(
            "Error registering functions: ERR {LOAD_TIMEOUT_ERROR}"
        ));
    }
    if slot >= 0 {
        return Ok((slot, functions));
    }
    let msg = String::from_utf8_lossy(&err[..err_len.min(err.len())])
        .trim_end_matches(['\r', '\n'])
        .replace(['\r', '\n'], " ");
    let at_line = |text: String| match line {
        n if n > 0 => format!("{text} (user_function:{n})"),
        _ => text,
    };
    Err(match kind {
        LOAD_COMPILE => at_line(format!("Error compiling function: {msg}")),
        LOAD_MEMORY => "Error registering functions: ERR not enough memory".into(),
        // A RedisError is an error reply's text: as Redis's Lua, no line.
        LOAD_RAISED_REDIS if has_error_code(&msg) => format!("Error registering functions: {msg}"),
        LOAD_RAISED_REDIS => format!("Error registering functions: ERR {msg}"),
        _ => at_line(format!("Error registering functions: ERR {msg}")),
    })
}

/// The VM hook's question while a library loads (no `Run` then): whether it is past its time.
pub(super) fn load_expired() -> bool {
    LOAD_DEADLINE
        .with(|d| d.get())
        .is_some_and(|deadline| Instant::now() > deadline)
}

/// One flag name of `register_function`'s `flags`: its bit, or -1 (`unknown flag given`).
#[no_mangle]
unsafe extern "C" fn goblin_upy_host_flag(p: *const u8, len: usize) -> i64 {
    // SAFETY: C passes the bytes for the call.
    let name = unsafe { std::slice::from_raw_parts(p, len) };
    parse_flag(name).map_or(-1, i64::from)
}

/// `register_function`'s last step, once C has checked the arguments' types: the function's
/// name against those registered so far. 0, or 1 with the error text (`ERR ...`) in `err` (at
/// most 256 bytes).
#[no_mangle]
unsafe extern "C" fn goblin_upy_host_register(
    name: *const u8,
    name_len: usize,
    desc: *const u8,
    desc_len: usize,
    flags: i64,
    err: *mut u8,
    err_len: *mut usize,
) -> c_int {
    // SAFETY: C passes the bytes for the call (`desc` null when there is no description).
    let (name, description) = unsafe {
        let bytes = |p: *const u8, n: usize| {
            if n == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(p, n)
            }
        };
        let description = (!desc.is_null()).then(|| bytes(desc, desc_len).to_vec());
        (bytes(name, name_len), description)
    };
    let registered = LOADING.with(|c| match c.borrow_mut().as_mut() {
        None => Err("redis.register_function can only be called on FUNCTION LOAD command".into()),
        Some(registered) => check_registration(registered, name).map(|name| {
            registered.push(Registered {
                name,
                description,
                flags: Flags(flags as u32),
            })
        }),
    });
    match registered {
        Ok(()) => 0,
        Err(e) => {
            let text = format!("ERR {e}");
            let n = text.len().min(256);
            // SAFETY: C's buffer holds 256 bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), err, n);
                *err_len = n;
            }
            1
        }
    }
}
