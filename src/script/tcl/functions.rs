//! Redis Functions for Tcl: each library lives in an interpreter of its own (sandboxed as EVAL's,
//! with its own memory arena), so libraries cannot see each other's procs or globals, and SCRIPT
//! FLUSH, the EVAL interpreter's rebuilds and its abandonment never touch them.
//!
//! A library's code runs once at the global level of its interpreter: the procs and global
//! variables it makes are the library's shared helpers and state. It registers its functions
//! with `redis register_function name callback` or `redis register_function {function_name name
//! callback callback ?flags {no-writes ...}? ?description text?}` (a dict: Redis's named form).
//! A callback is a command prefix (a proc name, or `{apply {{KEYS ARGV} {...}}}`) naming a
//! command that exists when it is registered; a call runs it with two more words, the keys and
//! the arguments as lists, exactly as a script's proc gets KEYS and ARGV. Outside a loading run
//! `register_function` fails; inside one `redis call` fails (no `Run` exists), and the run is
//! stopped past `LOAD_TIMEOUT_MS` by the interrupt hook.
//!
//! A call goes through the engine's `execute`, as a script does. As for EVAL, a call that is
//! killed, passes the memory limit, or leaves new global variables or commands behind gives the
//! library a fresh interpreter, its code run again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::ptr;
use std::time::{Duration, Instant};

use super::ffi::*;
use super::{api, execute, incomplete, list, After, InArena, Stopped, Vm, HOOKS};
use crate::resp::parser::Args;
use crate::script::function::{
    parse_flag, same_functions, LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS,
};
use crate::script::Run;

/// The libraries, by id.
#[derive(Default)]
pub(super) struct Functions {
    libs: BTreeMap<LibId, Library>,
    items: Vec<*mut Obj>,
}

/// One library: its interpreter, the arena its blocks are in, each function's command prefix
/// (words we hold a reference to) and its code (to run again in a fresh interpreter).
struct Library {
    arena: *mut Arena,
    vm: Vm,
    callbacks: Vec<Vec<*mut Obj>>,
    code: Box<[u8]>,
    /// What the code registered, in order (a reload must register the same).
    names: Vec<String>,
}

/// What the loading run registered so far.
type Loading = crate::script::function::Loading<Vec<*mut Obj>>;

thread_local! {
    /// Set while a library's code runs: `redis register_function` adds to it.
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
}

impl Functions {
    /// `Engine::load_library` for Tcl.
    pub fn load(&mut self, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
        // SAFETY: a fresh arena, given to the library (its `Drop` frees it).
        let arena = unsafe { goblin_jim_arena_new() };
        let _in = InArena::enter(arena);
        let mut library = Library {
            arena,
            vm: Vm::new(),
            callbacks: Vec::new(),
            code: code.into(),
            names: Vec::new(),
        };
        let limit = HOOKS.with(|h| h.limit.get());
        let functions = library.run_code(limit)?;
        library.names = functions.iter().map(|f| f.name.clone()).collect();
        self.libs.insert(lib, library);
        Ok(functions)
    }

    pub fn drop_library(&mut self, lib: LibId) {
        self.libs.remove(&lib);
    }

    /// Bytes the libraries' interpreters hold.
    pub fn memory(&self) -> usize {
        self.libs
            .values()
            // SAFETY: live arenas.
            .map(|l| unsafe { goblin_jim_arena_used(l.arena) })
            .sum()
    }

    /// `Engine::call_function` for Tcl: the callback's words, the keys and the arguments, run as
    /// a script.
    pub fn call(&mut self, run: &mut Run, lib: LibId, index: usize, keys: Args, args: Args) {
        let Some(library) = self.libs.get_mut(&lib) else {
            run.out().error("ERR Function not found");
            return;
        };
        let Some(callback) = library.callbacks.get(index) else {
            run.out().error("ERR Function not found");
            return;
        };
        let _in = InArena::enter(library.arena);
        let interp = library.vm.interp;
        // SAFETY: objects of the library's interpreter, whose arena is the current one.
        let after = unsafe {
            let mut objv = callback.clone();
            objv.push(list(interp, &mut self.items, keys));
            objv.push(list(interp, &mut self.items, args));
            execute(interp, &objv, run)
        };
        match after {
            After::Abandoned => {
                library.abandon();
                library.reload();
            }
            After::Stopped => library.reload(),
            After::Kept if !library.vm.is_clean() => library.reload(),
            After::Kept => {}
        }
    }
}

impl Library {
    /// Runs the library's code in its interpreter (the loading run); what it registered, or the
    /// error text. `limit` caps the arena (0: no cap).
    fn run_code(&mut self, limit: usize) -> Result<Vec<Registered>, String> {
        let interp = self.vm.interp;
        // SAFETY: objects of the library's interpreter, whose arena is current; after a jump out
        // (-1) no object of it is touched.
        unsafe {
            let body = new_string(interp, &self.code);
            goblin_jim_incr(body);
            if let Some(missing) = incomplete(interp, body) {
                goblin_jim_decr(interp, body);
                return Err(format!("Error compiling function: missing {missing}"));
            }
            LOADING.with(|c| *c.borrow_mut() = Some(Loading::default()));
            HOOKS.with(|h| {
                h.stopped.set(Stopped::No);
                h.deadline.set(Some(
                    Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS),
                ));
            });
            let objv = [new_string(interp, b"eval"), body];
            let rc = goblin_jim_call(interp, 2, objv.as_ptr(), limit);
            let stopped = HOOKS.with(|h| {
                h.deadline.set(None);
                h.stopped.replace(Stopped::No)
            });
            let loading = LOADING.with(|c| c.borrow_mut().take()).unwrap_or_default();
            let out_of_memory = || {
                format!("Error registering functions: ERR Out of memory loading the library (tcl-memory-limit is {limit} bytes)")
            };
            if rc == -1 {
                self.abandon();
                return Err(out_of_memory());
            }
            goblin_jim_decr(interp, body);
            if stopped == Stopped::No && matches!(rc, JIM_OK | JIM_RETURN) {
                self.callbacks = loading.callbacks;
                self.vm.mark_clean();
                return Ok(loading.functions);
            }
            for w in loading.callbacks.into_iter().flatten() {
                goblin_jim_decr(interp, w);
            }
            let error = match (stopped, rc) {
                (Stopped::Killed, _) => format!("ERR {LOAD_TIMEOUT_ERROR}"),
                (Stopped::OutOfMemory, _) => return Err(out_of_memory()),
                (Stopped::No, JIM_ERR) => String::from_utf8_lossy(&api::error_text(
                    interp,
                    goblin_jim_result(interp),
                    None,
                ))
                .into_owned(),
                (_, other) => format!("ERR library ended with Tcl return code {other}"),
            };
            Err(format!("Error registering functions: {error}"))
        }
    }

    /// Releases the callbacks and the interpreter (the arena stays).
    fn release(&mut self) {
        let interp = self.vm.interp;
        for words in std::mem::take(&mut self.callbacks) {
            for w in words {
                // SAFETY: our references to objects of the library's interpreter.
                unsafe { goblin_jim_decr(interp, w) };
            }
        }
        if !interp.is_null() {
            // SAFETY: freed once; nothing of it is used after.
            unsafe { Jim_FreeInterp(interp) };
            self.vm.interp = ptr::null_mut();
        }
    }

    /// Forgets an interpreter a memory cap jumped out of and frees its blocks wholesale.
    fn abandon(&mut self) {
        self.callbacks.clear();
        self.vm.interp = ptr::null_mut();
        // SAFETY: nothing refers to the abandoned interpreter's blocks any more.
        unsafe { goblin_jim_arena_clear(self.arena) };
    }

    /// A fresh interpreter with the library's code run again (no memory cap: it loaded before).
    /// Should the code now fail, or register other functions, the library has no callbacks left
    /// (FCALL: function not found).
    fn reload(&mut self) {
        let _in = InArena::enter(self.arena);
        self.release();
        self.vm = Vm::new();
        match self.run_code(0) {
            Ok(functions) if same_functions(&functions, &self.names) => {}
            _ => {
                crate::warning!("A Tcl function library did not load the same functions again after a stopped call; they are gone until it is loaded again.");
                self.release();
            }
        }
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        {
            let _in = InArena::enter(self.arena);
            self.release();
        }
        // SAFETY: the arena is ours and nothing of it is used after.
        unsafe { goblin_jim_arena_free(self.arena) };
    }
}

/// `redis register_function name callback` or `redis register_function {function_name ...
/// callback ... ?flags {...}? ?description ...?}`, with the errors of Redis's Lua
/// `register_function`.
///
/// # Safety
/// `args` are live objects of `interp`.
pub(super) unsafe fn register_function(
    interp: *mut Interp,
    args: &[*mut Obj],
) -> Result<(), String> {
    LOADING.with(|c| match c.borrow_mut().as_mut() {
        None => Err("redis.register_function can only be called on FUNCTION LOAD command".into()),
        Some(loading) => read_registration(interp, args, loading),
    })
}

/// A registration's name, callback words (not yet referenced), flags and description.
type Named = (Vec<u8>, Vec<*mut Obj>, u32, Option<Vec<u8>>);

unsafe fn read_registration(
    interp: *mut Interp,
    args: &[*mut Obj],
    loading: &mut Loading,
) -> Result<(), String> {
    let (name, words, flags, description) = match args {
        [name, callback] => {
            let words = command_prefix(interp, *callback)
                .ok_or("second argument to redis.register_function must be a function")?;
            (bytes(*name).to_vec(), words, 0, None)
        }
        [named] => read_named(interp, *named)?,
        _ => return Err("wrong number of arguments to redis.register_function".into()),
    };
    let name = loading.check(&name)?;
    for &w in &words {
        goblin_jim_incr(w);
    }
    loading.push(name, description, flags, words);
    Ok(())
}

/// The words of a callback: a non-empty list whose first word names an existing command.
unsafe fn command_prefix(interp: *mut Interp, callback: *mut Obj) -> Option<Vec<*mut Obj>> {
    let n = Jim_ListLength(interp, callback);
    let words: Vec<*mut Obj> = (0..n)
        .map(|i| Jim_ListGetIndex(interp, callback, i))
        .collect();
    let first = *words.first()?;
    (!Jim_GetCommand(interp, first, 0).is_null()).then_some(words)
}

/// The dict form's entries.
unsafe fn read_named(interp: *mut Interp, named: *mut Obj) -> Result<Named, String> {
    let mut len: c_int = 0;
    let pairs = Jim_DictPairs(interp, named, &mut len);
    if pairs.is_null() && len != 0 {
        return Err("calling redis.register_function with a single argument is only applicable to a dict (representing named arguments).".into());
    }
    let pairs = match pairs.is_null() {
        true => &[][..],
        false => std::slice::from_raw_parts(pairs, len.max(0) as usize),
    };
    let (mut name, mut words, mut flags, mut description) = (None, None, 0, None);
    for pair in pairs.chunks_exact(2) {
        let value = pair[1];
        // Any case, as Redis's Lua reads the table's keys.
        match bytes(pair[0]).to_ascii_lowercase().as_slice() {
            b"function_name" => name = Some(bytes(value).to_vec()),
            b"callback" => {
                words = Some(command_prefix(interp, value).ok_or(
                    "callback argument given to redis.register_function must be a function",
                )?)
            }
            b"flags" => {
                flags = 0;
                for i in 0..Jim_ListLength(interp, value) {
                    flags |= parse_flag(bytes(Jim_ListGetIndex(interp, value, i)))?;
                }
            }
            b"description" => description = Some(bytes(value).to_vec()),
            _ => return Err("unknown argument given to redis.register_function".into()),
        }
    }
    let name = name.ok_or("redis.register_function must get a function name argument")?;
    let words = words.ok_or("redis.register_function must get a callback argument")?;
    Ok((name, words, flags, description))
}
