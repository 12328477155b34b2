//! Redis Functions for Wren: libraries live in a VM of their own (WREN.SCRIPT FLUSH rebuilds the
//! EVAL VM and never touches them), each library in its own module, `function:<id>`, whose
//! top-level code runs once at FUNCTION LOAD. Its module variables, classes and `Fn`s are the
//! library's shared helpers; another library cannot import the module (`resolve_module` knows only
//! `redis`, `random` and `meta`). The module imports `Redis` on its first line, the shebang line's
//! place, so error lines count as the library's source.
//!
//! The loading run registers functions with `Redis.registerFunction(name, Fn.new { |keys, args|
//! ... })` or `Redis.registerFunction({"function_name": name, "callback": fn, "flags":
//! ["no-writes"], "description": text})`; it is a `wrenCall` of the module's compiled top level
//! (`goblinWrenCompileModule`), so the memory limit applies, and it is stopped past
//! `LOAD_TIMEOUT_MS` at a safe point (`Phase::Library`). No `Run` exists then: `Redis.call` fails.
//! Outside that run `registerFunction` fails. A failed load releases what it registered and
//! forgets its module.
//!
//! FCALL calls the callback (a handle to the `Fn`) with `call(_,_)`, keys and args as two lists,
//! through the same `Vm::call` as EVAL.

use std::collections::HashMap;
use std::ffi::{c_int, CString};
use std::time::{Duration, Instant};

use super::api::{host, push_arg, raise};
use super::ffi::*;
use super::{state, with_code, Phase, Stopped, Vm};
use crate::resp::parser::Args;
use crate::script::function::{parse_flag, LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS};
use crate::script::Run;

/// What a library's loading run registered so far: the functions and their callbacks' handles.
pub(super) type Loading = crate::script::function::Loading<*mut WrenHandle>;

/// A loaded library: its module and a handle to each registered callback, by index.
struct Library {
    module: CString,
    callbacks: Vec<*mut WrenHandle>,
}

/// The functions' VM and its libraries.
pub(super) struct Functions {
    libs: HashMap<LibId, Library>,
    /// `call(_,_)`: runs a callback with keys and args.
    call_handle: *mut WrenHandle,
    /// `call()`: runs a library's compiled top level.
    load_handle: *mut WrenHandle,
    vm: Vm,
}

impl Functions {
    pub fn new(limit: usize) -> Functions {
        let vm = Vm::new(limit, 0);
        Functions {
            libs: HashMap::new(),
            call_handle: vm.call_handle(c"call(_,_)"),
            load_handle: vm.call_handle(c"call()"),
            vm,
        }
    }

    /// Bytes the functions' VM holds.
    pub fn memory(&self) -> usize {
        self.vm.state.heap.used()
    }

    /// Collects the functions' VM in full (`Engine::collect`).
    pub fn collect(&mut self) {
        self.vm.collect();
    }

    /// `Engine::load_library` for Wren: runs the library's code once, within `limit` bytes and
    /// `LOAD_TIMEOUT_MS`.
    pub fn load(
        &mut self,
        lib: LibId,
        code: &[u8],
        limit: usize,
    ) -> Result<Vec<Registered>, String> {
        let module = CString::new(format!("function:{lib}")).expect("no NUL in the name");
        let mut src = b"import \"redis\" for Redis".to_vec();
        src.extend_from_slice(code);
        let src = CString::new(src)
            .map_err(|_| "Error compiling function: the library holds a NUL byte".to_string())?;
        let vm = self.vm.raw;
        self.vm.begin(module.as_bytes());
        let st = &mut *self.vm.state;
        st.limit = limit;
        st.loading = Some(Loading::default());
        st.deadline = Some(Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS));
        st.phase = Phase::Library;
        // SAFETY: slot 0 holds the compiled top level for the `call()` handle; no `Run` is set,
        // so host functions that need one fail.
        let result = unsafe {
            wrenEnsureSlots(vm, 1);
            if goblinWrenCompileModule(vm, module.as_ptr(), src.as_ptr(), 0) {
                Some(wrenCall(vm, self.load_handle))
            } else {
                None
            }
        };
        let st = &mut *self.vm.state;
        st.phase = Phase::Setup;
        st.deadline = None;
        let loading = st.loading.take().unwrap_or_default();
        let error = match result {
            Some(WREN_RESULT_SUCCESS) => None,
            Some(_) => Some(format!(
                "Error registering functions: {}",
                self.load_error()
            )),
            None => {
                let (line, msg) = self.vm.state.compile_error.clone().unwrap_or_default();
                Some(format!(
                    "Error compiling function: user_function:{line}: {msg}"
                ))
            }
        };
        if let Some(e) = error {
            // SAFETY: handles made by `registerFunction` in this run; the module is this load's.
            unsafe {
                for h in loading.callbacks {
                    wrenReleaseHandle(vm, h);
                }
                goblinWrenRemoveModule(vm, module.as_ptr());
                wrenCollectGarbage(vm);
            }
            return Err(e);
        }
        self.libs.insert(
            lib,
            Library {
                module,
                callbacks: loading.callbacks,
            },
        );
        Ok(loading.functions)
    }

    /// Why a loading run failed: the timeout, the memory limit, or its error and line.
    fn load_error(&self) -> String {
        let st = &*self.vm.state;
        match st.stopped {
            Some(Stopped::LoadTime) => format!("ERR {LOAD_TIMEOUT_ERROR}"),
            Some(Stopped::OutOfMemory) => "ERR not enough memory".into(),
            _ => {
                let text = with_code(st.runtime_error.as_deref().unwrap_or("unknown error"));
                match st.error_line {
                    Some(line) => format!("{text} (user_function:{line})"),
                    None => text,
                }
            }
        }
    }

    /// `Engine::call_function` for Wren.
    pub fn call(&mut self, run: &mut Run, lib: LibId, index: usize, args: [Args; 2]) {
        let Some(library) = self.libs.get(&lib) else {
            run.out().error("ERR Function not found");
            return;
        };
        let Some(&callback) = library.callbacks.get(index) else {
            run.out().error("ERR Function not found");
            return;
        };
        let module = library.module.as_bytes();
        self.vm.call(
            run,
            (callback, self.call_handle),
            args,
            module,
            "user_function",
        );
    }

    /// `Engine::drop_library` for Wren: its callbacks and its module go.
    pub fn drop_library(&mut self, lib: LibId) {
        let Some(library) = self.libs.remove(&lib) else {
            return;
        };
        // SAFETY: handles made by `registerFunction`; the module is the library's own.
        unsafe {
            for h in library.callbacks {
                wrenReleaseHandle(self.vm.raw, h);
            }
            goblinWrenRemoveModule(self.vm.raw, library.module.as_ptr());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.libs.is_empty()
    }
}

impl Drop for Functions {
    fn drop(&mut self) {
        for lib in self.libs.keys().copied().collect::<Vec<_>>() {
            self.drop_library(lib);
        }
        // SAFETY: handles made with the VM, released before it goes.
        unsafe {
            wrenReleaseHandle(self.vm.raw, self.call_handle);
            wrenReleaseHandle(self.vm.raw, self.load_handle);
        }
    }
}

/// `Redis.registerFunction(name, callback)`: slots 1 and 2 hold them, slot 3 whether the callback
/// is a `Fn`.
pub(super) unsafe extern "C" fn register_positional(vm: *mut WrenVM) {
    unsafe {
        host(vm, || {
            register(vm, |loading| {
                let mut name = Vec::new();
                if !push_arg(vm, 1, &mut name) {
                    return Err("first argument to redis.register_function must be a string".into());
                }
                if !wrenGetSlotBool(vm, 3) {
                    return Err(
                        "second argument to redis.register_function must be a function".into(),
                    );
                }
                let name = loading.check(&name)?;
                add(vm, loading, name, None, 2, 0);
                Ok(())
            })
        })
    }
}

/// `Redis.registerFunction({"function_name": ..., "callback": ..., "flags": [...],
/// "description": ...})`: slot 1 holds the map, slot 2 whether its callback is a `Fn`.
pub(super) unsafe extern "C" fn register_named(vm: *mut WrenVM) {
    unsafe {
        host(vm, || {
            register(vm, |loading| {
                if wrenGetSlotType(vm, 1) != WREN_TYPE_MAP {
                    return Err("calling redis.register_function with a single argument is only applicable to a Map (representing named arguments).".into());
                }
                // Slots 3 and 4: an entry's key and value; 5: the callback; 6: a flag.
                wrenEnsureSlots(vm, 7);
                let (mut name, mut description, mut callback, mut flags) = (None, None, false, 0);
                for i in 0..goblinWrenMapCapacity(vm, 1) {
                    if !goblinWrenMapEntry(vm, 1, i, 3, 4) {
                        continue;
                    }
                    if wrenGetSlotType(vm, 3) != WREN_TYPE_STRING {
                        return Err(
                            "named argument key given to redis.register_function is not a string"
                                .into(),
                        );
                    }
                    match get_bytes(vm, 3) {
                        b"function_name" => name = Some(string(vm, 4, "function_name")?),
                        b"description" => description = Some(string(vm, 4, "description")?),
                        b"callback" => {
                            if !wrenGetSlotBool(vm, 2) {
                                return Err("callback argument given to redis.register_function must be a function".into());
                            }
                            callback = true;
                            wrenGetMapValue(vm, 1, 3, 5);
                        }
                        b"flags" => flags = read_flags(vm)?,
                        _ => return Err("unknown argument given to redis.register_function".into()),
                    }
                }
                let name =
                    name.ok_or("redis.register_function must get a function name argument")?;
                if !callback {
                    return Err("redis.register_function must get a callback argument".into());
                }
                let name = loading.check(&name)?;
                add(vm, loading, name, description, 5, flags);
                Ok(())
            })
        })
    }
}

/// Runs a registration against the loading run's state (refused outside one), raising its error
/// with the `ERR` code.
unsafe fn register(vm: *mut WrenVM, f: impl FnOnce(&mut Loading) -> Result<(), String>) {
    unsafe {
        let Some(mut loading) = state(vm).loading.take() else {
            return raise(
                vm,
                "ERR redis.register_function can only be called on FUNCTION LOAD command",
            );
        };
        let done = f(&mut loading);
        state(vm).loading = Some(loading);
        match done {
            Ok(()) => wrenSetSlotNull(vm, 0),
            Err(e) => raise(vm, &format!("ERR {e}")),
        }
    }
}

/// Registers function `name` whose callback is in `slot`.
unsafe fn add(
    vm: *mut WrenVM,
    loading: &mut Loading,
    name: String,
    description: Option<Vec<u8>>,
    slot: c_int,
    flags: u32,
) {
    loading.push(name, description, flags, unsafe {
        wrenGetSlotHandle(vm, slot)
    });
}

/// The string (or number's text) in `slot`, for the named argument `what`.
unsafe fn string(vm: *mut WrenVM, slot: c_int, what: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    if unsafe { push_arg(vm, slot, &mut out) } {
        Ok(out)
    } else {
        Err(format!(
            "{what} argument given to redis.register_function must be a string"
        ))
    }
}

/// The list of flag names in slot 4.
unsafe fn read_flags(vm: *mut WrenVM) -> Result<u32, String> {
    unsafe {
        if wrenGetSlotType(vm, 4) != WREN_TYPE_LIST {
            return Err("flags argument to redis.register_function must be a list representing function flags".into());
        }
        let mut flags = 0;
        for i in 0..wrenGetListCount(vm, 4) {
            wrenGetListElement(vm, 4, i, 6);
            let mut flag = Vec::new();
            if wrenGetSlotType(vm, 6) != WREN_TYPE_STRING || !push_arg(vm, 6, &mut flag) {
                return Err("unknown flag given".into());
            }
            flags |= parse_flag(&flag)?;
        }
        Ok(flags)
    }
}
