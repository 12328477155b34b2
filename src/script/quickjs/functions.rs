//! Redis Functions for JavaScript: libraries live in a VM of their own (SCRIPT FLUSH and the
//! EVAL VM's rebuilds never touch them). A library's code is the body of a strict-mode function
//! (`(function () {<code>\n})`, named `user_function` in errors) called once: its top-level
//! `const`/`let`/`function`s are the library's shared locals, and it registers its functions with
//! `redis.register_function(name, callback)` or `redis.register_function({function_name,
//! callback, flags: [...], description})`. Outside a loading run `register_function` throws;
//! inside one `redis.call` throws (no `Run` exists then). The loading run (and the promise jobs
//! it queued) is stopped past `LOAD_TIMEOUT_MS` by the interrupt handler.
//!
//! FCALL swaps this VM into the engine's place and runs the callback, with `keys` and `args`
//! arrays as its two arguments, exactly as EVAL runs a script (`QuickJs::call`). A kill that leaves
//! promise jobs queued rebuilds the VM and runs every library's code again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::time::{Duration, Instant};

use rquickjs_sys as q;

use super::api::{args, host_fn, throw_error};
use super::convert::{self, string_bytes};
use super::vm::Vm;
use crate::script::function::{parse_flag, LibId, Registered, LOAD_TIMEOUT_ERROR, LOAD_TIMEOUT_MS};

/// The functions' VM, each library's callbacks (values we own) and code (for a rebuild).
pub(super) struct Functions {
    // Field order is drop order; `Drop` frees the callbacks before the VM goes.
    pub libs: BTreeMap<LibId, Vec<q::JSValue>>,
    codes: BTreeMap<LibId, Vec<u8>>,
    /// Set while `rebuild` reloads the libraries (a library failing then does not rebuild again).
    rebuilding: bool,
    pub vm: Vm,
}

/// What the loading run registered so far.
type Loading = crate::script::function::Loading<q::JSValue>;

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
}

impl Functions {
    pub fn new(limit: usize) -> Functions {
        Functions {
            libs: BTreeMap::new(),
            codes: BTreeMap::new(),
            rebuilding: false,
            vm: Vm::new(limit),
        }
    }

    /// `Engine::load_library` for JavaScript.
    pub fn load(&mut self, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String> {
        let (functions, callbacks) = self.run_library(code)?;
        self.libs.insert(lib, callbacks);
        self.codes.insert(lib, code.to_vec());
        Ok(functions)
    }

    pub fn drop_library(&mut self, lib: LibId) {
        for v in self.libs.remove(&lib).unwrap_or_default() {
            self.vm.free_value(v);
        }
        self.codes.remove(&lib);
    }

    /// A fresh VM with every library loaded again (after a kill left promise jobs queued).
    pub fn rebuild(&mut self) {
        for (_, callbacks) in std::mem::take(&mut self.libs) {
            for v in callbacks {
                self.vm.free_value(v);
            }
        }
        let limit = self.vm.memory_limit();
        self.vm = Vm::new(limit);
        self.vm.set_memory_limit(0);
        self.rebuilding = true;
        for (lib, code) in std::mem::take(&mut self.codes) {
            if let Ok((_, callbacks)) = self.run_library(&code) {
                self.libs.insert(lib, callbacks);
            }
            self.codes.insert(lib, code);
        }
        self.rebuilding = false;
        self.vm.set_memory_limit(limit);
    }

    /// Runs a library's code once (and the promise jobs it queued) within the load deadline;
    /// what it registered.
    fn run_library(&mut self, code: &[u8]) -> Result<(Vec<Registered>, Vec<q::JSValue>), String> {
        let mut src = Vec::with_capacity(code.len() + 24);
        src.extend_from_slice(b"(function () {");
        src.extend_from_slice(code);
        src.extend_from_slice(b"\n})\0");
        let wrapper = self
            .vm
            .compile_as(&src, c"user_function")
            .map_err(|e| format!("Error compiling function: {e}"))?;
        let ctx = self.vm.ctx;
        LOADING.with(|c| *c.borrow_mut() = Some(Loading::default()));
        self.vm.update_stack_top();
        self.vm.set_deadline(Some(
            Instant::now() + Duration::from_millis(LOAD_TIMEOUT_MS),
        ));
        // SAFETY: the wrapper and the result are owned and freed once; no `Run` is set, so host
        // functions that need one throw.
        let error = unsafe {
            let r = q::JS_Call(ctx, wrapper, q::JS_UNDEFINED, 0, std::ptr::null_mut());
            q::JS_FreeValue(ctx, wrapper);
            let error = if q::JS_IsException(r) {
                Some(self.exception_text())
            } else {
                q::JS_FreeValue(ctx, r);
                None
            };
            let drained = self.vm.run_jobs();
            error.or_else(|| (!drained || self.vm.killed()).then(|| self.exception_text()))
        };
        self.vm.set_deadline(None);
        let loading = LOADING.with(|c| c.borrow_mut().take()).unwrap_or_default();
        if let Some(e) = error {
            for v in loading.callbacks {
                self.vm.free_value(v);
            }
            if self.vm.jobs_pending() && !self.rebuilding {
                // Jobs of a failed library must never run later: a fresh VM, libraries reloaded.
                self.rebuild();
            }
            return Err(format!("Error registering functions: {e}"));
        }
        Ok((loading.functions, loading.callbacks))
    }

    /// The pending exception as a loading error's text (`ERR <message>`, or the timeout or
    /// memory errors).
    unsafe fn exception_text(&mut self) -> String {
        let ctx = self.vm.ctx;
        let e = q::JS_GetException(ctx);
        let refused = self.vm.take_refused();
        let text = if self.vm.killed() {
            format!("ERR {LOAD_TIMEOUT_ERROR}")
        } else if refused {
            "ERR not enough memory".into()
        } else {
            let (text, line) = convert::error_text(ctx, &self.vm.names, e);
            let text = String::from_utf8_lossy(&convert::with_code(text.as_bytes())).into_owned();
            match line {
                Some(n) => format!("{text} (user_function:{n})"),
                None => text,
            }
        };
        q::JS_FreeValue(ctx, e);
        text
    }
}

impl Drop for Functions {
    fn drop(&mut self) {
        for (_, callbacks) in std::mem::take(&mut self.libs) {
            for v in callbacks {
                self.vm.free_value(v);
            }
        }
    }
}

host_fn! {
    /// `redis.register_function(name, callback)` or `redis.register_function({function_name,
    /// callback, flags, description})`, with the errors of Redis's Lua `register_function`.
    pub(super) fn register_function(ctx, argv) {
        let registered = LOADING.with(|c| match c.borrow_mut().as_mut() {
            None => Err("redis.register_function can only be called on FUNCTION LOAD command".into()),
            Some(loading) => read_registration(ctx, argv, loading),
        });
        match registered {
            Ok(()) => q::JS_UNDEFINED,
            Err(msg) => throw_error(ctx, format!("ERR {msg}").as_bytes()),
        }
    }
}

/// A string argument's bytes (a string, or a number's text).
unsafe fn text(ctx: *mut q::JSContext, v: q::JSValue) -> Option<Vec<u8>> {
    if !q::JS_IsString(v) && !q::JS_IsNumber(v) {
        return None;
    }
    let mut out = Vec::new();
    string_bytes(ctx, v, &mut out).then_some(out)
}

unsafe fn read_registration(
    ctx: *mut q::JSContext,
    argv: &[q::JSValue],
    loading: &mut Loading,
) -> Result<(), String> {
    let (name, description, callback, flags) = match argv {
        [name, callback] => {
            let name = text(ctx, *name)
                .ok_or("first argument to redis.register_function must be a string")?;
            if !q::JS_IsFunction(ctx, *callback) {
                return Err("second argument to redis.register_function must be a function".into());
            }
            (name, None, q::JS_DupValue(ctx, *callback), 0)
        }
        [named] => {
            if !q::JS_IsObject(*named) || q::JS_IsFunction(ctx, *named) {
                return Err("calling redis.register_function with a single argument is only applicable to an object (representing named arguments).".into());
            }
            read_named(ctx, *named)?
        }
        _ => return Err("wrong number of arguments to redis.register_function".into()),
    };
    let name = match loading.check(&name) {
        Ok(name) => name,
        Err(e) => {
            q::JS_FreeValue(ctx, callback);
            return Err(e);
        }
    };
    loading.push(name, description, flags, callback);
    Ok(())
}

type Named = (Vec<u8>, Option<Vec<u8>>, q::JSValue, u32);

/// The object form's properties; the callback is owned (a getter may have made it).
unsafe fn read_named(ctx: *mut q::JSContext, obj: q::JSValue) -> Result<Named, String> {
    let prop = |name: &std::ffi::CStr| q::JS_GetPropertyStr(ctx, obj, name.as_ptr());
    let name_v = prop(c"function_name");
    let name = text(ctx, name_v);
    let name_defined = !q::JS_IsUndefined(name_v);
    q::JS_FreeValue(ctx, name_v);
    let desc_v = prop(c"description");
    let description = (!q::JS_IsUndefined(desc_v)).then(|| text(ctx, desc_v));
    q::JS_FreeValue(ctx, desc_v);
    let flags_v = prop(c"flags");
    let flags = read_flags(ctx, flags_v);
    q::JS_FreeValue(ctx, flags_v);
    let callback = prop(c"callback");
    let checked = named_checks(ctx, name, name_defined, description, flags, callback);
    if checked.is_err() {
        q::JS_FreeValue(ctx, callback);
    }
    checked
}

unsafe fn named_checks(
    ctx: *mut q::JSContext,
    name: Option<Vec<u8>>,
    name_defined: bool,
    description: Option<Option<Vec<u8>>>,
    flags: Result<u32, String>,
    callback: q::JSValue,
) -> Result<Named, String> {
    if name_defined && name.is_none() {
        return Err(
            "function_name argument given to redis.register_function must be a string".into(),
        );
    }
    if let Some(None) = description {
        return Err(
            "description argument given to redis.register_function must be a string".into(),
        );
    }
    let flags = flags?;
    if !q::JS_IsUndefined(callback) && !q::JS_IsFunction(ctx, callback) {
        return Err("callback argument given to redis.register_function must be a function".into());
    }
    let name = name.ok_or("redis.register_function must get a function name argument")?;
    if q::JS_IsUndefined(callback) {
        return Err("redis.register_function must get a callback argument".into());
    }
    Ok((name, description.flatten(), callback, flags))
}

/// The `flags` array (absent: none).
unsafe fn read_flags(ctx: *mut q::JSContext, v: q::JSValue) -> Result<u32, String> {
    if q::JS_IsUndefined(v) {
        return Ok(0);
    }
    if !q::JS_IsArray(v) {
        return Err("flags argument to redis.register_function must be an array representing function flags".into());
    }
    let mut len = 0i64;
    q::JS_GetLength(ctx, v, &mut len);
    let mut flags = 0;
    for i in 0..len.max(0) as u32 {
        let f = q::JS_GetPropertyUint32(ctx, v, i);
        let name = text(ctx, f);
        q::JS_FreeValue(ctx, f);
        flags |= parse_flag(&name.ok_or("unknown flag given")?)?;
    }
    Ok(flags)
}
