//! Our binding of Wren 0.4's C API (`wren.h`, as `build.rs` compiles it with our patch): only what
//! the engine uses. `wren.h` is small and stable, so a hand binding needs no bindgen.
//!
//! The `goblin*` functions are the patch's own (`vendor/wren/goblin.patch`); the patch calls back
//! into `goblin_wren_check` and `goblin_wren_admit`, which the engine defines.
#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_int, c_void};

pub enum WrenVM {}
pub enum WrenHandle {}

pub type WrenReallocateFn = unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> *mut c_void;
pub type WrenForeignMethodFn = unsafe extern "C" fn(*mut WrenVM);
pub type WrenResolveModuleFn =
    unsafe extern "C" fn(*mut WrenVM, *const c_char, *const c_char) -> *const c_char;
pub type WrenLoadModuleCompleteFn =
    unsafe extern "C" fn(*mut WrenVM, *const c_char, WrenLoadModuleResult);
pub type WrenLoadModuleFn =
    unsafe extern "C" fn(*mut WrenVM, *const c_char) -> WrenLoadModuleResult;
pub type WrenBindForeignMethodFn = unsafe extern "C" fn(
    *mut WrenVM,
    *const c_char,
    *const c_char,
    bool,
    *const c_char,
) -> Option<WrenForeignMethodFn>;
pub type WrenWriteFn = unsafe extern "C" fn(*mut WrenVM, *const c_char);
pub type WrenErrorFn =
    unsafe extern "C" fn(*mut WrenVM, c_int, *const c_char, c_int, *const c_char);

#[repr(C)]
pub struct WrenLoadModuleResult {
    pub source: *const c_char,
    pub on_complete: Option<WrenLoadModuleCompleteFn>,
    pub user_data: *mut c_void,
}

#[repr(C)]
pub struct WrenForeignClassMethods {
    pub allocate: Option<WrenForeignMethodFn>,
    pub finalize: Option<unsafe extern "C" fn(*mut c_void)>,
}

pub type WrenBindForeignClassFn =
    unsafe extern "C" fn(*mut WrenVM, *const c_char, *const c_char) -> WrenForeignClassMethods;

#[repr(C)]
pub struct WrenConfiguration {
    pub reallocate_fn: Option<WrenReallocateFn>,
    pub resolve_module_fn: Option<WrenResolveModuleFn>,
    pub load_module_fn: Option<WrenLoadModuleFn>,
    pub bind_foreign_method_fn: Option<WrenBindForeignMethodFn>,
    pub bind_foreign_class_fn: Option<WrenBindForeignClassFn>,
    pub write_fn: Option<WrenWriteFn>,
    pub error_fn: Option<WrenErrorFn>,
    pub initial_heap_size: usize,
    pub min_heap_size: usize,
    pub heap_growth_percent: c_int,
    pub user_data: *mut c_void,
}

pub const WREN_ERROR_COMPILE: c_int = 0;
pub const WREN_ERROR_RUNTIME: c_int = 1;
pub const WREN_ERROR_STACK_TRACE: c_int = 2;

pub const WREN_RESULT_SUCCESS: c_int = 0;
pub const WREN_RESULT_COMPILE_ERROR: c_int = 1;
pub const WREN_RESULT_RUNTIME_ERROR: c_int = 2;

pub const WREN_TYPE_BOOL: c_int = 0;
pub const WREN_TYPE_NUM: c_int = 1;
pub const WREN_TYPE_FOREIGN: c_int = 2;
pub const WREN_TYPE_LIST: c_int = 3;
pub const WREN_TYPE_MAP: c_int = 4;
pub const WREN_TYPE_NULL: c_int = 5;
pub const WREN_TYPE_STRING: c_int = 6;
pub const WREN_TYPE_UNKNOWN: c_int = 7;

extern "C" {
    pub fn wrenInitConfiguration(config: *mut WrenConfiguration);
    pub fn wrenNewVM(config: *mut WrenConfiguration) -> *mut WrenVM;
    pub fn wrenFreeVM(vm: *mut WrenVM);
    pub fn wrenCollectGarbage(vm: *mut WrenVM);
    pub fn wrenInterpret(vm: *mut WrenVM, module: *const c_char, source: *const c_char) -> c_int;
    pub fn wrenMakeCallHandle(vm: *mut WrenVM, signature: *const c_char) -> *mut WrenHandle;
    pub fn wrenCall(vm: *mut WrenVM, method: *mut WrenHandle) -> c_int;
    pub fn wrenReleaseHandle(vm: *mut WrenVM, handle: *mut WrenHandle);
    pub fn wrenGetSlotCount(vm: *mut WrenVM) -> c_int;
    pub fn wrenEnsureSlots(vm: *mut WrenVM, num_slots: c_int);
    pub fn wrenGetSlotType(vm: *mut WrenVM, slot: c_int) -> c_int;
    pub fn wrenGetSlotBool(vm: *mut WrenVM, slot: c_int) -> bool;
    pub fn wrenGetSlotBytes(vm: *mut WrenVM, slot: c_int, length: *mut c_int) -> *const c_char;
    pub fn wrenGetSlotDouble(vm: *mut WrenVM, slot: c_int) -> f64;
    pub fn wrenGetSlotHandle(vm: *mut WrenVM, slot: c_int) -> *mut WrenHandle;
    pub fn wrenSetSlotBool(vm: *mut WrenVM, slot: c_int, value: bool);
    pub fn wrenSetSlotBytes(vm: *mut WrenVM, slot: c_int, bytes: *const c_char, length: usize);
    pub fn wrenSetSlotDouble(vm: *mut WrenVM, slot: c_int, value: f64);
    pub fn wrenSetSlotNewList(vm: *mut WrenVM, slot: c_int);
    pub fn wrenSetSlotNewMap(vm: *mut WrenVM, slot: c_int);
    pub fn wrenSetSlotNull(vm: *mut WrenVM, slot: c_int);
    pub fn wrenSetSlotHandle(vm: *mut WrenVM, slot: c_int, handle: *mut WrenHandle);
    pub fn wrenGetListCount(vm: *mut WrenVM, slot: c_int) -> c_int;
    pub fn wrenGetListElement(vm: *mut WrenVM, list_slot: c_int, index: c_int, element_slot: c_int);
    pub fn wrenInsertInList(vm: *mut WrenVM, list_slot: c_int, index: c_int, element_slot: c_int);
    pub fn wrenGetMapCount(vm: *mut WrenVM, slot: c_int) -> c_int;
    pub fn wrenGetMapContainsKey(vm: *mut WrenVM, map_slot: c_int, key_slot: c_int) -> bool;
    pub fn wrenGetMapValue(vm: *mut WrenVM, map_slot: c_int, key_slot: c_int, value_slot: c_int);
    pub fn wrenSetMapValue(vm: *mut WrenVM, map_slot: c_int, key_slot: c_int, value_slot: c_int);
    pub fn wrenGetVariable(
        vm: *mut WrenVM,
        module: *const c_char,
        name: *const c_char,
        slot: c_int,
    );
    pub fn wrenHasVariable(vm: *mut WrenVM, module: *const c_char, name: *const c_char) -> bool;
    pub fn wrenAbortFiber(vm: *mut WrenVM, slot: c_int);
    pub fn wrenGetUserData(vm: *mut WrenVM) -> *mut c_void;

    // The patch's additions (vendor/wren/goblin.patch).
    pub fn goblinWrenInterrupt(vm: *mut WrenVM);
    pub fn goblinWrenRemoveModule(vm: *mut WrenVM, name: *const c_char);
    pub fn goblinWrenCompileModule(
        vm: *mut WrenVM,
        module: *const c_char,
        source: *const c_char,
        slot: c_int,
    ) -> bool;
    pub fn goblinWrenMapCapacity(vm: *mut WrenVM, map_slot: c_int) -> c_int;
    pub fn goblinWrenMapEntry(
        vm: *mut WrenVM,
        map_slot: c_int,
        index: c_int,
        key_slot: c_int,
        value_slot: c_int,
    ) -> bool;
}

/// Sets a slot to a byte string (any bytes: Wren strings are byte strings).
pub unsafe fn set_bytes(vm: *mut WrenVM, slot: c_int, b: &[u8]) {
    wrenSetSlotBytes(vm, slot, b.as_ptr() as *const c_char, b.len())
}

/// The bytes of the string in `slot`; valid while the string stays in a slot.
pub unsafe fn get_bytes<'a>(vm: *mut WrenVM, slot: c_int) -> &'a [u8] {
    let mut len: c_int = 0;
    let p = wrenGetSlotBytes(vm, slot, &mut len);
    if p.is_null() || len <= 0 {
        return &[];
    }
    std::slice::from_raw_parts(p as *const u8, len as usize)
}
