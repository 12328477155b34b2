//! The Lua side of the `cjson`, `cmsgpack` and `struct` libraries: the codecs themselves are pure
//! Rust over a value graph (`codec/`); this file converts Lua values to and from that graph,
//! registers the functions, and raises their errors as the C modules did.
//!
//! Conversions never recurse on the native stack: tables are collected breadth-first through a
//! scratch Lua table, each distinct table once (so shared and cyclic tables keep their identity and
//! each codec applies its own depth limit), and rebuilt the same way.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};

use super::codec::cjson::{self, CjsonConfig};
use super::codec::{cmsgpack, lstruct, Graph, LuaErr, SValue};
use super::ffi::*;

/// Registers `cjson`, `cmsgpack` and `struct` as globals. Returns the `cjson` module's
/// configuration (SCRIPT FLUSH resets it, as Redis's new VM would).
pub(super) unsafe fn register(l: *mut lua_State) -> *mut CjsonConfig {
    let cfg = push_cjson_module(l, CjsonConfig::default());
    raw_set_field(l, LUA_GLOBALSINDEX, "cjson");

    lua_newtable(l);
    set_functions(
        l,
        &[
            ("pack", msgpack_pack),
            ("unpack", msgpack_unpack),
            ("unpack_one", msgpack_unpack_one),
            ("unpack_limit", msgpack_unpack_limit),
        ],
    );
    for (name, v) in [
        ("_NAME", "cmsgpack"),
        ("_VERSION", "lua-cmsgpack 0.4.0"),
        ("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"),
        ("_DESCRIPTION", "MessagePack C implementation for Lua"),
    ] {
        push_bytes(l, v.as_bytes());
        raw_set_field(l, -2, name);
    }
    raw_set_field(l, LUA_GLOBALSINDEX, "cmsgpack");

    lua_newtable(l);
    set_functions(
        l,
        &[
            ("pack", struct_pack),
            ("unpack", struct_unpack),
            ("size", struct_size),
        ],
    );
    raw_set_field(l, LUA_GLOBALSINDEX, "struct");
    cfg
}

/// Pushes a cjson module table whose functions share one configuration (a userdata upvalue), as
/// `cjson.new()` makes them.
unsafe fn push_cjson_module(l: *mut lua_State, cfg: CjsonConfig) -> *mut CjsonConfig {
    lua_newtable(l);
    let ud = lua_newuserdata(l, std::mem::size_of::<CjsonConfig>()) as *mut CjsonConfig;
    // The configuration is plain integers: Lua's collector frees the block, nothing to drop.
    ud.write(cfg);
    for (name, f) in [
        ("encode", cjson_encode as HostFn),
        ("decode", cjson_decode),
        ("encode_sparse_array", cjson_encode_sparse_array),
        ("encode_max_depth", cjson_encode_max_depth),
        ("decode_max_depth", cjson_decode_max_depth),
        ("encode_number_precision", cjson_encode_number_precision),
        ("encode_keep_buffer", cjson_encode_keep_buffer),
        ("encode_invalid_numbers", cjson_encode_invalid_numbers),
        ("decode_invalid_numbers", cjson_decode_invalid_numbers),
        ("new", cjson_new),
    ] {
        lua_pushvalue(l, -1);
        goblin_lua51_push_host_closure(l, f, 1);
        raw_set_field(l, -3, name);
    }
    lua_pop(l, 1);
    lua_pushlightuserdata(l, std::ptr::null_mut());
    raw_set_field(l, -2, "null");
    push_bytes(l, b"cjson");
    raw_set_field(l, -2, "_NAME");
    push_bytes(l, b"2.1.0");
    raw_set_field(l, -2, "_VERSION");
    ud
}

/// The configuration of the cjson module the running function belongs to.
unsafe fn cjson_config<'a>(l: *mut lua_State) -> &'a mut CjsonConfig {
    &mut *(lua_touserdata(l, lua_upvalueindex(2)) as *mut CjsonConfig)
}

/// Raises a codec error as the C module did: `luaL_error`/`luaL_argerror` messages carry the
/// calling script's position, VM errors do not.
unsafe fn raise(l: *mut lua_State, e: LuaErr, fname: &str) -> c_int {
    let mut text = Vec::new();
    if !matches!(e, LuaErr::Raw(_)) {
        goblin_lua51_where(l, 1);
        text.extend_from_slice(to_bytes(l, -1).unwrap_or_default());
        lua_pop(l, 1);
    }
    text.extend_from_slice(&e.message(fname));
    push_bytes(l, &text);
    -1
}

/// The function's arguments as codec values (tables into `g`).
unsafe fn args(l: *mut lua_State, g: &mut Graph) -> Vec<SValue> {
    let n = lua_gettop(l);
    let mut conv = ToGraph::new(l);
    let vals = (1..=n).map(|i| conv.value(i, g)).collect();
    conv.finish(g);
    vals
}

/// Lua → graph, breadth-first: `value` maps a stack slot, queueing new tables; `finish` walks the
/// queue, filling each table's pairs in `lua_next` order.
struct ToGraph {
    l: *mut lua_State,
    /// Stack slot of the scratch table holding the queued tables (1-based by graph index).
    queue: c_int,
    seen: HashMap<*const c_void, usize>,
}

impl ToGraph {
    unsafe fn new(l: *mut lua_State) -> ToGraph {
        lua_newtable(l);
        ToGraph {
            l,
            queue: lua_gettop(l),
            seen: HashMap::new(),
        }
    }

    unsafe fn value(&mut self, idx: c_int, g: &mut Graph) -> SValue {
        let l = self.l;
        match lua_type(l, idx) {
            LUA_TNIL | LUA_TNONE => SValue::Nil,
            LUA_TBOOLEAN => SValue::Bool(lua_toboolean(l, idx) != 0),
            LUA_TNUMBER => SValue::Num(lua_tonumber(l, idx)),
            LUA_TSTRING => SValue::Str(to_bytes(l, idx).unwrap_or_default().to_vec()),
            LUA_TLIGHTUSERDATA if lua_touserdata(l, idx).is_null() => SValue::Null,
            LUA_TTABLE => {
                let p = lua_topointer(l, idx);
                if let Some(&t) = self.seen.get(&p) {
                    return SValue::Table(t);
                }
                let t = g.add(Vec::new());
                self.seen.insert(p, t);
                lua_pushvalue(l, idx);
                lua_rawseti(l, self.queue, t as c_int + 1);
                SValue::Table(t)
            }
            LUA_TFUNCTION => SValue::Other("function"),
            LUA_TTHREAD => SValue::Other("thread"),
            _ => SValue::Other("userdata"),
        }
    }

    /// Fills every queued table (tables found meanwhile are queued too), then drops the scratch.
    unsafe fn finish(mut self, g: &mut Graph) {
        let l = self.l;
        let mut next = 0;
        while next < g.tables.len() {
            lua_rawgeti(l, self.queue, next as c_int + 1);
            if lua_type(l, -1) == LUA_TTABLE {
                let t = lua_gettop(l);
                let mut pairs = Vec::new();
                lua_pushnil(l);
                while lua_next(l, t) != 0 {
                    let k = self.value(-2, g);
                    let v = self.value(-1, g);
                    pairs.push((k, v));
                    lua_pop(l, 1);
                }
                g.tables[next] = pairs;
            }
            lua_pop(l, 1);
            next += 1;
        }
        lua_remove(l, self.queue);
    }
}

/// Pushes codec values, building every table of the graph first so shared tables stay shared.
unsafe fn push_values(l: *mut lua_State, g: &Graph, vals: &[SValue]) {
    lua_checkstack(l, vals.len() as c_int + 4);
    lua_createtable(l, g.tables.len() as c_int, 0);
    let tables = lua_gettop(l);
    for t in 0..g.tables.len() {
        lua_createtable(l, 0, 0);
        lua_rawseti(l, tables, t as c_int + 1);
    }
    for (t, pairs) in g.tables.iter().enumerate() {
        lua_rawgeti(l, tables, t as c_int + 1);
        for (k, v) in pairs {
            push_value(l, tables, k);
            push_value(l, tables, v);
            lua_rawset(l, -3);
        }
        lua_pop(l, 1);
    }
    for v in vals {
        push_value(l, tables, v);
    }
    lua_remove(l, tables);
}

unsafe fn push_value(l: *mut lua_State, tables: c_int, v: &SValue) {
    match v {
        SValue::Nil | SValue::Other(_) => lua_pushnil(l),
        SValue::Bool(b) => lua_pushboolean(l, *b as c_int),
        SValue::Num(n) => lua_pushnumber(l, *n),
        SValue::Str(s) => push_bytes(l, s),
        SValue::Table(t) => lua_rawgeti(l, tables, *t as c_int + 1),
        SValue::Null => lua_pushlightuserdata(l, std::ptr::null_mut()),
    }
}

/// Runs a codec on the function's arguments and pushes its results, or raises its error.
unsafe fn call(
    l: *mut lua_State,
    fname: &str,
    f: impl FnOnce(&Graph, Vec<SValue>) -> Result<(Graph, Vec<SValue>), LuaErr>,
) -> c_int {
    let mut g = Graph::default();
    let a = args(l, &mut g);
    match f(&g, a) {
        Ok((out_g, vals)) => {
            push_values(l, &out_g, &vals);
            vals.len() as c_int
        }
        Err(e) => raise(l, e, fname),
    }
}

fn string(v: Vec<u8>) -> (Graph, Vec<SValue>) {
    (Graph::default(), vec![SValue::Str(v)])
}

fn plain(vals: Vec<SValue>) -> (Graph, Vec<SValue>) {
    (Graph::default(), vals)
}

unsafe extern "C" fn cjson_encode(l: *mut lua_State) -> c_int {
    let cfg = cjson_config(l).clone();
    call(l, "encode", |g, a| {
        if a.len() != 1 {
            return Err(LuaErr::Arg(1, b"expected 1 argument".to_vec()));
        }
        cjson::encode(&cfg, g, &a[0]).map(string)
    })
}

unsafe extern "C" fn cjson_decode(l: *mut lua_State) -> c_int {
    let cfg = cjson_config(l).clone();
    call(l, "decode", |_, a| {
        if a.len() != 1 {
            return Err(LuaErr::Arg(1, b"expected 1 argument".to_vec()));
        }
        let Some(text) = super::codec::lua_tostring(&a[0]) else {
            let got = super::codec::type_name(&a[0]);
            return Err(LuaErr::Arg(
                1,
                format!("string expected, got {got}").into_bytes(),
            ));
        };
        cjson::decode(&cfg, &text).map(|(g, v)| (g, vec![v]))
    })
}

macro_rules! cjson_setter {
    ($name:ident, $lua:literal, $method:ident) => {
        unsafe extern "C" fn $name(l: *mut lua_State) -> c_int {
            let cfg = cjson_config(l);
            call(l, $lua, |_, a| cfg.$method(&a).map(plain))
        }
    };
}

cjson_setter!(
    cjson_encode_sparse_array,
    "encode_sparse_array",
    encode_sparse_array
);
cjson_setter!(
    cjson_encode_max_depth,
    "encode_max_depth",
    set_encode_max_depth
);
cjson_setter!(
    cjson_decode_max_depth,
    "decode_max_depth",
    set_decode_max_depth
);
cjson_setter!(
    cjson_encode_number_precision,
    "encode_number_precision",
    set_encode_number_precision
);
cjson_setter!(
    cjson_encode_keep_buffer,
    "encode_keep_buffer",
    set_encode_keep_buffer
);
cjson_setter!(
    cjson_encode_invalid_numbers,
    "encode_invalid_numbers",
    set_encode_invalid_numbers
);
cjson_setter!(
    cjson_decode_invalid_numbers,
    "decode_invalid_numbers",
    set_decode_invalid_numbers
);

/// `cjson.new()`: a fresh module with its own default configuration.
unsafe extern "C" fn cjson_new(l: *mut lua_State) -> c_int {
    push_cjson_module(l, CjsonConfig::default());
    1
}

unsafe extern "C" fn msgpack_pack(l: *mut lua_State) -> c_int {
    call(l, "pack", |g, a| cmsgpack::pack(g, &a).map(string))
}

unsafe extern "C" fn msgpack_unpack(l: *mut lua_State) -> c_int {
    call(l, "unpack", |_, a| cmsgpack::unpack_lua(&a))
}

unsafe extern "C" fn msgpack_unpack_one(l: *mut lua_State) -> c_int {
    call(l, "unpack_one", |_, a| cmsgpack::unpack_one_lua(&a))
}

unsafe extern "C" fn msgpack_unpack_limit(l: *mut lua_State) -> c_int {
    call(l, "unpack_limit", |_, a| cmsgpack::unpack_limit_lua(&a))
}

unsafe extern "C" fn struct_pack(l: *mut lua_State) -> c_int {
    call(l, "pack", |_, a| lstruct::pack(&a).map(string))
}

unsafe extern "C" fn struct_unpack(l: *mut lua_State) -> c_int {
    call(l, "unpack", |_, a| lstruct::unpack(&a).map(plain))
}

unsafe extern "C" fn struct_size(l: *mut lua_State) -> c_int {
    call(l, "size", |_, a| {
        lstruct::size(&a).map(|n| plain(vec![SValue::Num(n as f64)]))
    })
}
