//! Our binding of Lua 5.1.5's C API, as built by `build.rs`: every symbol carries the `gl51_` prefix
//! (see `vendor/lua51/README.md`), so it can share the binary with Luau. Only what the engine uses is
//! declared. Lua 5.1's C API is frozen, so this hand binding never drifts.
//!
//! Safety rule for host functions (Rust functions Lua calls): a Lua error is a `longjmp`, and it must
//! never cross a Rust frame. Host functions therefore call only API functions that cannot raise
//! (raw gets and sets, pushes; memory errors are ruled out because the allocator never fails while a
//! host function runs) and report their own errors through the C trampoline (`push_host_fn`).
#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_int, c_void};

pub enum lua_State {}
pub type lua_CFunction = unsafe extern "C-unwind" fn(*mut lua_State) -> c_int;
pub type lua_Alloc = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, usize) -> *mut c_void;
/// A Rust function Lua can call: returns its result count, or -1 with the error value on top.
pub type HostFn = unsafe extern "C" fn(*mut lua_State) -> c_int;

pub const LUA_REGISTRYINDEX: c_int = -10000;
pub const LUA_GLOBALSINDEX: c_int = -10002;
pub const LUA_MULTRET: c_int = -1;

pub const LUA_TNONE: c_int = -1;
pub const LUA_TNIL: c_int = 0;
pub const LUA_TBOOLEAN: c_int = 1;
pub const LUA_TLIGHTUSERDATA: c_int = 2;
pub const LUA_TNUMBER: c_int = 3;
pub const LUA_TSTRING: c_int = 4;
pub const LUA_TTABLE: c_int = 5;
pub const LUA_NOREF: c_int = -2;
pub const LUA_TFUNCTION: c_int = 6;
pub const LUA_TUSERDATA: c_int = 7;
pub const LUA_TTHREAD: c_int = 8;

pub const LUA_ERRRUN: c_int = 2;
pub const LUA_ERRSYNTAX: c_int = 3;
pub const LUA_ERRMEM: c_int = 4;
pub const LUA_ERRERR: c_int = 5;

pub const LUA_GCCOLLECT: c_int = 2;
pub const LUA_GCCOUNT: c_int = 3;
pub const LUA_GCCOUNTB: c_int = 4;

macro_rules! lua_api {
    ($( fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?; )*) => {
        extern "C-unwind" {
            $(
                #[link_name = concat!("gl51_", stringify!($name))]
                pub fn $name($($arg: $ty),*) $(-> $ret)?;
            )*
        }
    };
}

lua_api! {
    fn lua_newstate(f: lua_Alloc, ud: *mut c_void) -> *mut lua_State;
    fn lua_close(l: *mut lua_State);
    fn lua_gettop(l: *mut lua_State) -> c_int;
    fn lua_settop(l: *mut lua_State, idx: c_int);
    fn lua_pushvalue(l: *mut lua_State, idx: c_int);
    fn lua_remove(l: *mut lua_State, idx: c_int);
    fn lua_insert(l: *mut lua_State, idx: c_int);
    fn lua_replace(l: *mut lua_State, idx: c_int);
    fn lua_checkstack(l: *mut lua_State, sz: c_int) -> c_int;
    fn lua_type(l: *mut lua_State, idx: c_int) -> c_int;
    fn lua_tonumber(l: *mut lua_State, idx: c_int) -> f64;
    fn lua_toboolean(l: *mut lua_State, idx: c_int) -> c_int;
    fn lua_tolstring(l: *mut lua_State, idx: c_int, len: *mut usize) -> *const c_char;
    fn lua_objlen(l: *mut lua_State, idx: c_int) -> usize;
    fn lua_touserdata(l: *mut lua_State, idx: c_int) -> *mut c_void;
    fn lua_topointer(l: *mut lua_State, idx: c_int) -> *const c_void;
    fn lua_pushnil(l: *mut lua_State);
    fn lua_pushnumber(l: *mut lua_State, n: f64);
    fn lua_pushlstring(l: *mut lua_State, s: *const c_char, len: usize);
    fn lua_pushstring(l: *mut lua_State, s: *const c_char);
    fn lua_pushboolean(l: *mut lua_State, b: c_int);
    fn lua_pushlightuserdata(l: *mut lua_State, p: *mut c_void);
    fn lua_pushcclosure(l: *mut lua_State, f: lua_CFunction, n: c_int);
    fn lua_rawget(l: *mut lua_State, idx: c_int);
    fn lua_rawgeti(l: *mut lua_State, idx: c_int, n: c_int);
    fn lua_createtable(l: *mut lua_State, narr: c_int, nrec: c_int);
    fn lua_getfield(l: *mut lua_State, idx: c_int, k: *const c_char);
    fn lua_setfield(l: *mut lua_State, idx: c_int, k: *const c_char);
    fn lua_rawset(l: *mut lua_State, idx: c_int);
    fn lua_rawseti(l: *mut lua_State, idx: c_int, n: c_int);
    fn lua_setmetatable(l: *mut lua_State, idx: c_int) -> c_int;
    fn lua_getmetatable(l: *mut lua_State, idx: c_int) -> c_int;
    fn lua_call(l: *mut lua_State, nargs: c_int, nresults: c_int);
    fn lua_pcall(l: *mut lua_State, nargs: c_int, nresults: c_int, errfunc: c_int) -> c_int;
    fn lua_next(l: *mut lua_State, idx: c_int) -> c_int;
    fn lua_newuserdata(l: *mut lua_State, size: usize) -> *mut c_void;
    fn lua_gc(l: *mut lua_State, what: c_int, data: c_int) -> c_int;
    fn luaL_loadbuffer(l: *mut lua_State, buf: *const c_char, sz: usize, name: *const c_char) -> c_int;
    fn luaL_ref(l: *mut lua_State, t: c_int) -> c_int;
    fn luaL_unref(l: *mut lua_State, t: c_int, r: c_int);
    fn luaopen_base(l: *mut lua_State) -> c_int;
    fn luaopen_table(l: *mut lua_State) -> c_int;
    fn luaopen_string(l: *mut lua_State) -> c_int;
    fn luaopen_math(l: *mut lua_State) -> c_int;
    fn luaopen_debug(l: *mut lua_State) -> c_int;
    fn luaopen_os(l: *mut lua_State) -> c_int;
}

extern "C" {
    // Our glue (vendor/lua51/glue.c); these keep their own names.
    pub fn goblin_lua51_set_readonly(l: *mut lua_State, idx: c_int, on: c_int);
    pub fn goblin_lua51_reset_array(l: *mut lua_State, idx: c_int, n: c_int) -> c_int;
    pub fn goblin_lua51_is_readonly(l: *mut lua_State, idx: c_int) -> c_int;
    pub fn goblin_lua51_guard_setmetatable(l: *mut lua_State, globals: c_int);
    pub fn goblin_lua51_install_pcall(l: *mut lua_State, globals: c_int);
    pub fn goblin_lua51_push_host_fn(l: *mut lua_State, f: HostFn);
    pub fn goblin_lua51_push_host_closure(l: *mut lua_State, f: HostFn, nup: c_int);
    pub fn goblin_lua51_set_hook(l: *mut lua_State, count: c_int);
    pub fn goblin_lua51_where(l: *mut lua_State, level: c_int);
}

// The C API's macros.

pub unsafe fn lua_pop(l: *mut lua_State, n: c_int) {
    lua_settop(l, -n - 1)
}

/// The pseudo-index of a C closure's upvalue `i` (1-based).
pub const fn lua_upvalueindex(i: c_int) -> c_int {
    LUA_GLOBALSINDEX - i
}

pub unsafe fn lua_newtable(l: *mut lua_State) {
    lua_createtable(l, 0, 0)
}

/// A string's bytes; valid while the value stays on the stack. Numbers are converted in place, as
/// `lua_tolstring` does.
pub unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
    let mut len = 0usize;
    let p = lua_tolstring(l, idx, &mut len);
    if p.is_null() {
        None
    } else {
        Some(std::slice::from_raw_parts(p as *const u8, len))
    }
}

pub unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
    lua_pushlstring(l, b.as_ptr() as *const c_char, b.len())
}

/// Sets `t[k] = <top>` without metamethods (pops the value).
pub unsafe fn raw_set_field(l: *mut lua_State, t: c_int, k: impl AsRef<[u8]>) {
    let t = if t < 0 && t > LUA_REGISTRYINDEX {
        t - 1
    } else {
        t
    };
    push_bytes(l, k.as_ref());
    lua_insert(l, -2);
    lua_rawset(l, t);
}

/// Sets each host function of `functions` as the field of its name in the table on top.
pub unsafe fn set_functions(l: *mut lua_State, functions: &[(&str, HostFn)]) {
    for &(name, f) in functions {
        goblin_lua51_push_host_fn(l, f);
        raw_set_field(l, -2, name);
    }
}

/// Pushes `t[k]` without metamethods.
pub unsafe fn raw_get_field(l: *mut lua_State, t: c_int, k: impl AsRef<[u8]>) {
    let t = if t < 0 && t > LUA_REGISTRYINDEX {
        t - 1
    } else {
        t
    };
    push_bytes(l, k.as_ref());
    lua_rawget(l, t);
}

/// Lua 5.1's side of the C API shape shared with Luau (`shared.rs`).
pub struct Api;

impl super::shared::CApi for Api {
    type State = lua_State;
    const TNIL: c_int = LUA_TNIL;
    const TNUMBER: c_int = LUA_TNUMBER;
    const TSTRING: c_int = LUA_TSTRING;
    const TTABLE: c_int = LUA_TTABLE;
    const TBOOLEAN: c_int = LUA_TBOOLEAN;
    const TFUNCTION: c_int = LUA_TFUNCTION;

    unsafe fn type_of(l: *mut lua_State, idx: c_int) -> c_int {
        lua_type(l, idx)
    }
    unsafe fn to_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
        to_bytes(l, idx)
    }
    unsafe fn to_number(l: *mut lua_State, idx: c_int) -> f64 {
        lua_tonumber(l, idx)
    }
    unsafe fn to_boolean(l: *mut lua_State, idx: c_int) -> bool {
        lua_toboolean(l, idx) != 0
    }
    unsafe fn check_stack(l: *mut lua_State, n: c_int) -> bool {
        lua_checkstack(l, n) != 0
    }
    unsafe fn reserve_stack(l: *mut lua_State, n: c_int) {
        lua_checkstack(l, n);
    }
    unsafe fn raw_get_field(l: *mut lua_State, idx: c_int, name: &std::ffi::CStr) -> c_int {
        raw_get_field(l, idx, name.to_bytes());
        lua_type(l, -1)
    }
    unsafe fn raw_set_field(l: *mut lua_State, idx: c_int, name: &std::ffi::CStr) {
        raw_set_field(l, idx, name.to_bytes())
    }
    unsafe fn raw_get_index(l: *mut lua_State, idx: c_int, n: c_int) -> c_int {
        lua_rawgeti(l, idx, n);
        lua_type(l, -1)
    }
    unsafe fn raw_set_index(l: *mut lua_State, idx: c_int, n: c_int) {
        lua_rawseti(l, idx, n)
    }
    unsafe fn raw_set(l: *mut lua_State, idx: c_int) {
        lua_rawset(l, idx)
    }
    unsafe fn next(l: *mut lua_State, idx: c_int) -> c_int {
        lua_next(l, idx)
    }
    unsafe fn pop(l: *mut lua_State, n: c_int) {
        lua_pop(l, n)
    }
    unsafe fn push_nil(l: *mut lua_State) {
        lua_pushnil(l)
    }
    unsafe fn push_value(l: *mut lua_State, idx: c_int) {
        lua_pushvalue(l, idx)
    }
    unsafe fn push_bytes(l: *mut lua_State, b: &[u8]) {
        push_bytes(l, b)
    }
    unsafe fn push_number(l: *mut lua_State, n: f64) {
        lua_pushnumber(l, n)
    }
    unsafe fn push_boolean(l: *mut lua_State, b: bool) {
        lua_pushboolean(l, b as c_int)
    }
    unsafe fn create_table(l: *mut lua_State, narr: c_int, nrec: c_int) {
        lua_createtable(l, narr, nrec)
    }
    unsafe fn make_ref(l: *mut lua_State, idx: c_int) -> c_int {
        lua_pushvalue(l, idx);
        luaL_ref(l, LUA_REGISTRYINDEX)
    }
    unsafe fn unref(l: *mut lua_State, r: c_int) {
        luaL_unref(l, LUA_REGISTRYINDEX, r)
    }
    unsafe fn top(l: *mut lua_State) -> c_int {
        lua_gettop(l)
    }
    unsafe fn set_top(l: *mut lua_State, idx: c_int) {
        lua_settop(l, idx)
    }
    unsafe fn replace(l: *mut lua_State, idx: c_int) {
        lua_replace(l, idx)
    }
    unsafe fn arg_bytes<'a>(l: *mut lua_State, idx: c_int) -> Option<&'a [u8]> {
        // Lua 5.1's `lua_tolstring` gives a number's text (converting the slot in place).
        to_bytes(l, idx)
    }
    unsafe fn current<'a>() -> Option<&'a mut crate::script::Run<'a, 'a>> {
        super::current()
    }
    unsafe fn push_error_table(l: *mut lua_State, text: &[u8]) {
        super::api::push_error_table(l, text)
    }
    unsafe fn push_raised_table(l: *mut lua_State, text: &[u8]) {
        super::api::push_error_table(l, text)
    }
    unsafe fn push_where(l: *mut lua_State, level: c_int) {
        goblin_lua51_where(l, level)
    }
    unsafe fn raise_top(_l: *mut lua_State) -> c_int {
        // The C trampoline raises it once the host function has returned.
        -1
    }
}
