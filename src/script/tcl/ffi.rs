//! The part of Jim Tcl's C API the engine uses, declared by hand (objects and the interpreter stay
//! opaque: what jim.h has as macros or struct fields comes through `vendor/jim/glue.c`).

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

#[repr(C)]
pub struct Interp {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct Obj {
    _opaque: [u8; 0],
}

/// Where an interpreter's blocks are kept and counted (glue.c): the EVAL interpreter's (null) or
/// one function library's.
#[repr(C)]
pub struct Arena {
    _opaque: [u8; 0],
}

pub const JIM_OK: c_int = 0;
pub const JIM_ERR: c_int = 1;
pub const JIM_RETURN: c_int = 2;

pub type CmdProc = unsafe extern "C" fn(*mut Interp, c_int, *const *mut Obj) -> c_int;

/// Tags of `goblin_jim_tagged` values (and what `goblin_jim_kind` answers for them).
pub const TAG_STATUS: c_int = 1;
pub const TAG_ERROR: c_int = 2;
pub const TAG_NIL: c_int = 3;
pub const TAG_BOOL: c_int = 4;
pub const TAG_DOUBLE: c_int = 5;
pub const TAG_BIG_NUMBER: c_int = 6;
pub const TAG_MAP: c_int = 7;
pub const TAG_SET: c_int = 8;
pub const TAG_BULK: c_int = 9;
/// `goblin_jim_kind` for Jim's own types.
pub const KIND_INT: c_int = -1;
pub const KIND_DOUBLE: c_int = -2;
pub const KIND_LIST: c_int = -3;
pub const KIND_DICT: c_int = -4;

extern "C" {
    pub fn Jim_FreeInterp(interp: *mut Interp);
    pub fn Jim_CreateCommand(
        interp: *mut Interp,
        name: *const c_char,
        proc_: CmdProc,
        priv_data: *mut c_void,
        del: *mut c_void,
    ) -> c_int;
    pub fn Jim_DeleteCommand(interp: *mut Interp, name: *mut Obj) -> c_int;
    pub fn Jim_GetCommand(interp: *mut Interp, name: *mut Obj, flags: c_int) -> *mut c_void;
    pub fn Jim_EvalObjVector(interp: *mut Interp, objc: c_int, objv: *const *mut Obj) -> c_int;
    pub fn Jim_ScriptIsComplete(
        interp: *mut Interp,
        script: *mut Obj,
        missing: *mut c_char,
    ) -> c_int;
    pub fn Jim_GetString(obj: *mut Obj, len: *mut c_int) -> *const c_char;
    pub fn Jim_NewStringObj(interp: *mut Interp, s: *const c_char, len: c_int) -> *mut Obj;
    pub fn Jim_NewIntObj(interp: *mut Interp, v: i64) -> *mut Obj;
    pub fn Jim_NewListObj(interp: *mut Interp, elems: *const *mut Obj, len: c_int) -> *mut Obj;
    pub fn Jim_ListLength(interp: *mut Interp, list: *mut Obj) -> c_int;
    pub fn Jim_ListGetIndex(interp: *mut Interp, list: *mut Obj, idx: c_int) -> *mut Obj;
    pub fn Jim_DictPairs(interp: *mut Interp, dict: *mut Obj, len: *mut c_int) -> *mut *mut Obj;
    pub fn Jim_GetWide(interp: *mut Interp, obj: *mut Obj, v: *mut i64) -> c_int;
    pub fn Jim_GetDouble(interp: *mut Interp, obj: *mut Obj, v: *mut f64) -> c_int;

    pub fn goblin_jim_new() -> *mut Interp;
    /// Bytes of the current arena.
    pub fn goblin_jim_used() -> usize;
    /// Installs the engine's check behind our patch's interrupt hook, which glue.c asks after every
    /// command and which calls `check` now and then (non-zero stops the script).
    pub fn goblin_jim_set_check(check: unsafe extern "C" fn(*mut Interp) -> c_int);
    pub fn goblin_jim_arena_new() -> *mut Arena;
    /// Makes `arena` (null: the EVAL interpreter's) the one new blocks go to; the previous one.
    pub fn goblin_jim_arena_use(arena: *mut Arena) -> *mut Arena;
    pub fn goblin_jim_arena_used(arena: *mut Arena) -> usize;
    /// Frees every block of an arena whose interpreter was abandoned.
    pub fn goblin_jim_arena_clear(arena: *mut Arena);
    /// Frees a library's arena and whatever blocks are left in it.
    pub fn goblin_jim_arena_free(arena: *mut Arena);
    /// `Jim_EvalObjVector` with allocations capped at `limit` bytes; -1 if the cap abandoned the
    /// interpreter (see glue.c).
    pub fn goblin_jim_call(
        interp: *mut Interp,
        objc: c_int,
        objv: *const *mut Obj,
        limit: usize,
    ) -> c_int;
    pub fn goblin_jim_host(entering: c_int);
    pub fn goblin_jim_tagged(
        interp: *mut Interp,
        s: *const c_char,
        len: c_int,
        tag: c_int,
        inner: *mut Obj,
    ) -> *mut Obj;
    pub fn goblin_jim_kind(obj: *mut Obj) -> c_int;
    pub fn goblin_jim_inner(obj: *mut Obj) -> *mut Obj;
    #[cfg(test)]
    pub fn goblin_jim_type_name(obj: *mut Obj) -> *const c_char;
    pub fn goblin_jim_incr(obj: *mut Obj);
    pub fn goblin_jim_decr(interp: *mut Interp, obj: *mut Obj);
    pub fn goblin_jim_result(interp: *mut Interp) -> *mut Obj;
    pub fn goblin_jim_set_result(interp: *mut Interp, obj: *mut Obj);
    pub fn goblin_jim_epoch(interp: *mut Interp) -> c_ulong;
    pub fn goblin_jim_globals(interp: *mut Interp) -> c_uint;
    pub fn goblin_jim_error_line(interp: *mut Interp) -> c_int;
}

/// The bytes of a value (its string form; binary-safe).
///
/// # Safety
/// `obj` is a live object; the slice lives as long as its string form is not changed.
pub unsafe fn bytes<'a>(obj: *mut Obj) -> &'a [u8] {
    let mut len: c_int = 0;
    let p = Jim_GetString(obj, &mut len);
    if p.is_null() || len <= 0 {
        return &[];
    }
    std::slice::from_raw_parts(p as *const u8, len as usize)
}

/// A new string object holding `b`.
///
/// # Safety
/// `interp` is live.
pub unsafe fn new_string(interp: *mut Interp, b: &[u8]) -> *mut Obj {
    Jim_NewStringObj(interp, b.as_ptr() as *const c_char, b.len() as c_int)
}

/// A new tagged value (see glue.c).
///
/// # Safety
/// `interp` is live; `inner` null or a live list.
pub unsafe fn new_tagged(interp: *mut Interp, b: &[u8], tag: c_int, inner: *mut Obj) -> *mut Obj {
    goblin_jim_tagged(
        interp,
        b.as_ptr() as *const c_char,
        b.len() as c_int,
        tag,
        inner,
    )
}

/// Sets the interpreter's result to the string `msg` (for an error).
///
/// # Safety
/// `interp` is live.
pub unsafe fn set_result_bytes(interp: *mut Interp, msg: &[u8]) {
    goblin_jim_set_result(interp, new_string(interp, msg));
}
