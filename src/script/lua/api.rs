//! The `redis` table and the small libraries Redis gives Lua scripts that are not codecs: `bit`
//! (LuaBitOp), Redis's `math.random`, and the binary-chunk guard on `load`/`loadstring`. The
//! `redis` table's functions are the ones Luau has too: their rules are in `shared.rs`, and this
//! file only registers them (`redis_functions!` makes them C functions of this engine).
//!
//! Every function here is a host function (see `ffi.rs` for the rules): it returns its result
//! count, or -1 with an error value on top of the stack for the C trampoline to raise.

use std::ffi::c_int;

use super::ffi::*;
use super::shared;

/// Registers `redis`, `bit` and Redis's `math.random`/`math.randomseed` as globals.
pub(super) unsafe fn register(l: *mut lua_State) {
    lua_newtable(l);
    for &(name, f) in REDIS_FUNCTIONS {
        goblin_lua51_push_host_fn(l, f);
        raw_set_field(l, -2, name.to_bytes());
    }
    super::shared::set_constants::<Api>(l, true);
    raw_set_field(l, LUA_GLOBALSINDEX, "redis");

    lua_newtable(l);
    set_functions(
        l,
        &[
            ("tobit", bit_tobit),
            ("tohex", bit_tohex),
            ("bnot", bit_bnot),
            ("band", bit_band),
            ("bor", bit_bor),
            ("bxor", bit_bxor),
            ("lshift", bit_lshift),
            ("rshift", bit_rshift),
            ("arshift", bit_arshift),
            ("rol", bit_rol),
            ("ror", bit_ror),
            ("bswap", bit_bswap),
        ],
    );
    raw_set_field(l, LUA_GLOBALSINDEX, "bit");

    raw_get_field(l, LUA_GLOBALSINDEX, "math");
    goblin_lua51_push_host_fn(l, math_random);
    raw_set_field(l, -2, "random");
    goblin_lua51_push_host_fn(l, math_randomseed);
    raw_set_field(l, -2, "randomseed");
    lua_pop(l, 1);
}

/// Wraps `load` and `loadstring` so a binary (precompiled) chunk is refused: Lua 5.1's bytecode
/// loader trusts its input, which is how sandbox escapes were built.
pub(super) unsafe fn guard_loaders(l: *mut lua_State) {
    goblin_lua51_push_host_fn(l, loadstring_text_only);
    raw_get_field(l, LUA_GLOBALSINDEX, "loadstring");
    // The original goes in the registry, reached by the guard.
    lua_pushvalue(l, -1);
    raw_set_field(l, LUA_REGISTRYINDEX, "goblin.loadstring");
    lua_pop(l, 1);
    raw_set_field(l, LUA_GLOBALSINDEX, "loadstring");
    goblin_lua51_push_host_fn(l, load_text_only);
    raw_set_field(l, LUA_GLOBALSINDEX, "load");
}

/// Pushes Redis's error table `{err = "CODE message"}` for `text`, which is either `-CODE message`,
/// `CODE message` or a bare message (given the `ERR` code), as `luaPushErrorBuff` does.
pub(crate) unsafe fn push_error_table(l: *mut lua_State, text: &[u8]) {
    lua_createtable(l, 0, 1);
    push_bytes(l, &super::shared::error_table_text(text));
    raw_set_field(l, -2, "err");
}

/// Raises a plain Lua error string as `luaL_error` does: prefixed with the calling script's
/// position (`user_script:1: `).
unsafe fn raise_str(l: *mut lua_State, msg: &str) -> c_int {
    shared::raise_str::<Api>(l, msg)
}

/// `_G`'s `__index`: reading a global that does not exist is an error (Redis's
/// `luaProtectedTableError`).
pub(super) unsafe extern "C" fn missing_global(l: *mut lua_State) -> c_int {
    shared::missing_global::<Api>(l)
}

shared::redis_functions!("C", Api);

// ---- load / loadstring ----

unsafe extern "C" fn loadstring_text_only(l: *mut lua_State) -> c_int {
    if let Some(s) = to_bytes(l, 1) {
        if s.first() == Some(&0x1b) {
            lua_pushnil(l);
            push_bytes(l, b"attempt to load a binary chunk");
            return 2;
        }
    }
    if lua_type(l, 1) != LUA_TSTRING && lua_type(l, 1) != LUA_TNUMBER {
        let got = type_name(lua_type(l, 1));
        return raise_str(
            l,
            &format!("bad argument #1 to 'loadstring' (string expected, got {got})"),
        );
    }
    // The original only returns (nil, message) for a bad chunk; a protected call keeps any other
    // error inside Lua.
    raw_get_field(l, LUA_REGISTRYINDEX, "goblin.loadstring");
    lua_insert(l, 1);
    let n = lua_gettop(l) - 1;
    if lua_pcall(l, n, 2, 0) != 0 {
        return -1;
    }
    2
}

unsafe extern "C" fn load_text_only(l: *mut lua_State) -> c_int {
    // Redis's `load` is Lua 5.1's (a reader function); scripts use it with strings rarely. Accept a
    // string (as loadstring) and refuse reader functions, whose chunks could be binary.
    if lua_type(l, 1) == LUA_TSTRING {
        return loadstring_text_only(l);
    }
    lua_pushnil(l);
    push_bytes(l, b"load with a reader function is not allowed in scripts");
    2
}

// ---- math.random (Redis's redisLrand48 PRNG, so sequences match Redis's) ----

struct Rand48;

thread_local! {
    static RAND: std::cell::Cell<u64> = const { std::cell::Cell::new(0x1234_ABCD_330E) };
}

impl Rand48 {
    fn next() -> i32 {
        RAND.with(|r| {
            let x = (r.get().wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & ((1 << 48) - 1);
            r.set(x);
            (x >> 17) as i32
        })
    }
    fn seed(s: i32) {
        RAND.with(|r| r.set((((s as u32) as u64) << 16) | 0x330E));
    }
}

const LRAND48_MAX: f64 = i32::MAX as f64;

unsafe extern "C" fn math_random(l: *mut lua_State) -> c_int {
    let r = (Rand48::next() as i64 % i32::MAX as i64) as f64 / LRAND48_MAX;
    match lua_gettop(l) {
        0 => lua_pushnumber(l, r),
        1 => {
            let u = lua_tonumber(l, 1) as c_int;
            if u < 1 {
                return raise_str(l, "bad argument #1 to 'random' (interval is empty)");
            }
            lua_pushnumber(l, (r * u as f64).floor() + 1.0);
        }
        2 => {
            let lo = lua_tonumber(l, 1) as c_int;
            let up = lua_tonumber(l, 2) as c_int;
            if lo > up {
                return raise_str(l, "bad argument #2 to 'random' (interval is empty)");
            }
            lua_pushnumber(l, (r * (up as f64 - lo as f64 + 1.0)).floor() + lo as f64);
        }
        _ => return raise_str(l, "wrong number of arguments"),
    }
    1
}

unsafe extern "C" fn math_randomseed(l: *mut lua_State) -> c_int {
    Rand48::seed(lua_tonumber(l, 1) as i32);
    0
}

// ---- bit (LuaBitOp 1.0.2 semantics: 32-bit two's complement on Lua numbers) ----

/// LuaBitOp's normalisation of a number to int32 (wrapping modulo 2^32).
fn tobit(n: f64) -> i32 {
    let b = n + 6755399441055744.0; // 2^52 + 2^51: the low 32 bits land in the mantissa
    (b.to_bits() as u32) as i32
}

unsafe fn arg_bit(l: *mut lua_State, i: c_int, name: &str) -> Result<i32, c_int> {
    if lua_type(l, i) != LUA_TNUMBER {
        let got = if lua_type(l, i) == LUA_TNONE {
            "no value".to_string()
        } else {
            type_name(lua_type(l, i)).to_string()
        };
        return Err(raise_str(
            l,
            &format!("bad argument #{i} to '{name}' (number expected, got {got})"),
        ));
    }
    Ok(tobit(lua_tonumber(l, i)))
}

fn type_name(t: c_int) -> &'static str {
    match t {
        LUA_TNIL => "nil",
        LUA_TBOOLEAN => "boolean",
        LUA_TLIGHTUSERDATA | LUA_TUSERDATA => "userdata",
        LUA_TNUMBER => "number",
        LUA_TSTRING => "string",
        LUA_TTABLE => "table",
        LUA_TFUNCTION => "function",
        LUA_TTHREAD => "thread",
        _ => "no value",
    }
}

macro_rules! bit_fn {
    ($name:ident, $lua:literal, |$l:ident, $x:ident| $body:expr) => {
        unsafe extern "C" fn $name($l: *mut lua_State) -> c_int {
            let $x = match arg_bit($l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            lua_pushnumber($l, ($body) as f64);
            1
        }
    };
}

macro_rules! bit_fold {
    ($name:ident, $lua:literal, |$a:ident, $b:ident| $op:expr) => {
        unsafe extern "C" fn $name(l: *mut lua_State) -> c_int {
            let mut acc = match arg_bit(l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            for i in 2..=lua_gettop(l) {
                match arg_bit(l, i, $lua) {
                    Ok(v) => {
                        let ($a, $b) = (acc, v);
                        acc = $op;
                    }
                    Err(e) => return e,
                }
            }
            lua_pushnumber(l, acc as f64);
            1
        }
    };
}

macro_rules! bit_shift {
    ($name:ident, $lua:literal, |$x:ident, $n:ident| $body:expr) => {
        unsafe extern "C" fn $name(l: *mut lua_State) -> c_int {
            let $x = match arg_bit(l, 1, $lua) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let $n = match arg_bit(l, 2, $lua) {
                Ok(v) => (v as u32) & 31,
                Err(e) => return e,
            };
            lua_pushnumber(l, ($body) as f64);
            1
        }
    };
}

bit_fn!(bit_tobit, "tobit", |l, x| x);
bit_fn!(bit_bnot, "bnot", |l, x| !x);
bit_fn!(bit_bswap, "bswap", |l, x| x.swap_bytes());
bit_fold!(bit_band, "band", |a, b| a & b);
bit_fold!(bit_bor, "bor", |a, b| a | b);
bit_fold!(bit_bxor, "bxor", |a, b| a ^ b);
bit_shift!(bit_lshift, "lshift", |x, n| ((x as u32) << n) as i32);
bit_shift!(bit_rshift, "rshift", |x, n| ((x as u32) >> n) as i32);
bit_shift!(bit_arshift, "arshift", |x, n| x >> n);
bit_shift!(bit_rol, "rol", |x, n| (x as u32).rotate_left(n) as i32);
bit_shift!(bit_ror, "ror", |x, n| (x as u32).rotate_right(n) as i32);

unsafe extern "C" fn bit_tohex(l: *mut lua_State) -> c_int {
    let x = match arg_bit(l, 1, "tohex") {
        Ok(v) => v as u32,
        Err(e) => return e,
    };
    let mut n: i32 = if lua_type(l, 2) <= LUA_TNIL {
        8
    } else {
        match arg_bit(l, 2, "tohex") {
            Ok(v) => v,
            Err(e) => return e,
        }
    };
    let upper = n < 0;
    if upper {
        n = -n;
    }
    let n = n.min(8) as usize;
    let digits: &[u8] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut out = vec![0u8; n];
    let mut v = x;
    for i in (0..n).rev() {
        out[i] = digits[(v & 15) as usize];
        v >>= 4;
    }
    push_bytes(l, &out);
    1
}
