//! `cmsgpack` as Redis 7.0 ships it (lua-cmsgpack 0.4.0): `pack`, `unpack`, `unpack_one`,
//! `unpack_limit`, over the value graph.
//!
//! Encoding: a number that is an exact int64 packs as the smallest int form, other numbers as
//! float 32 when exact else float 64; strings as fixstr/str8/str16/str32 (0xa0/0xd9/0xda/0xdb);
//! a table whose keys are exactly 1..n as an array, else a map; tables nested 16 deep, nil,
//! `cjson.null` and functions/userdata/threads as nil (0xc0).

use super::{
    cast_i32, cast_i64, f32_to_f64, lua_tonumber, lua_tostring, type_name, Graph, LuaErr, SValue,
    TableBuilder, NIL,
};

const MAX_NESTING: usize = 16;
/// Lua 5.1's `LUAI_MAXCSTACK`.
const MAX_C_STACK: usize = 8000;

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_len(out: &mut Vec<u8>, n: usize, fix: u8, b16: u8, b32: u8) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(b16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(b32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn encode_bytes(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

fn encode_number(out: &mut Vec<u8>, n: f64) {
    // IS_INT64_EQUIVALENT: !isinf(n) && (int64_t)n == n, with x86's cast.
    if !n.is_infinite() && cast_i64(n) as f64 == n {
        encode_int(out, cast_i64(n));
    } else {
        let f = n as f32;
        if !n.is_nan() && f as f64 == n {
            out.push(0xca);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        } else {
            out.push(0xcb);
            out.extend_from_slice(&n.to_bits().to_be_bytes());
        }
    }
}

/// `table_is_an_array`: keys are numbers that are positive ints and the largest equals the count.
fn table_is_an_array(pairs: &[(SValue, SValue)]) -> bool {
    let mut count: i32 = 0;
    let mut max: i32 = 0;
    for (k, _) in pairs {
        match k {
            SValue::Num(n) if *n > 0.0 && cast_i32(*n) as f64 == *n => {
                let n = *n as i32;
                if n > max {
                    max = n;
                }
                count += 1;
            }
            _ => return false,
        }
    }
    max == count
}

fn encode_value(out: &mut Vec<u8>, g: &Graph, v: &SValue, level: usize) {
    match v {
        SValue::Str(s) => encode_bytes(out, s),
        SValue::Bool(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        SValue::Num(n) => encode_number(out, *n),
        SValue::Table(t) if level < MAX_NESTING => {
            let pairs = g.pairs(*t);
            if table_is_an_array(pairs) {
                let mut items: Vec<&SValue> = vec![&NIL; pairs.len()];
                for (k, v) in pairs {
                    if let SValue::Num(n) = k {
                        items[*n as usize - 1] = v;
                    }
                }
                encode_len(out, items.len(), 0x90, 0xdc, 0xdd);
                for item in items {
                    encode_value(out, g, item, level + 1);
                }
            } else {
                encode_len(out, pairs.len(), 0x80, 0xde, 0xdf);
                for (k, v) in pairs {
                    encode_value(out, g, k, level + 1);
                    encode_value(out, g, v, level + 1);
                }
            }
        }
        _ => out.push(0xc0),
    }
}

/// `cmsgpack.pack(v1, v2, ...)`: the values encoded one after another. Errors:
/// `Arg(0, ...)` for no arguments (Lua prints `bad argument #0 to 'pack' (...)`).
pub fn pack(g: &Graph, values: &[SValue]) -> Result<Vec<u8>, LuaErr> {
    if values.is_empty() {
        return Err(LuaErr::Arg(0, "MessagePack pack needs input.".into()));
    }
    if values.len() * 2 > MAX_C_STACK {
        return Err(LuaErr::Arg(
            0,
            "Too many arguments for MessagePack pack.".into(),
        ));
    }
    let mut out = Vec::new();
    for v in values {
        encode_value(&mut out, g, v, 0);
    }
    Ok(out)
}

enum Fail {
    Eof,
    BadFmt,
    Lua(LuaErr),
}

struct Decoder<'a> {
    d: &'a [u8],
    p: usize,
    g: Graph,
}

impl Decoder<'_> {
    fn need(&self, n: usize) -> Result<(), Fail> {
        if self.d.len() - self.p < n {
            Err(Fail::Eof)
        } else {
            Ok(())
        }
    }

    fn be(&self, at: usize, n: usize) -> u64 {
        self.d[at..at + n]
            .iter()
            .fold(0u64, |a, &b| (a << 8) | b as u64)
    }

    fn bytes(&mut self, hdr: usize, len: usize) -> Result<SValue, Fail> {
        self.need(hdr)?;
        if self.d.len() - self.p - hdr < len {
            return Err(Fail::Eof);
        }
        let s = self.d[self.p + hdr..self.p + hdr + len].to_vec();
        self.p += hdr + len;
        Ok(SValue::Str(s))
    }

    /// One scalar, or the header of a table (whose items the caller decodes); `used` is the Lua
    /// stack slots the C decoder holds before pushing it.
    fn item(&mut self, used: usize) -> Result<Item, Fail> {
        self.need(1)?;
        if used + 1 > MAX_C_STACK {
            return Err(Fail::Lua(LuaErr::Error(
                "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)".into(),
            )));
        }
        let c = self.d[self.p];
        let num = |v: f64| Ok(Item::Value(SValue::Num(v)));
        match c {
            0xcc | 0xd0 => {
                self.need(2)?;
                let b = self.d[self.p + 1];
                self.p += 2;
                num(if c == 0xcc { b as f64 } else { b as i8 as f64 })
            }
            0xcd | 0xd1 => {
                self.need(3)?;
                let v = self.be(self.p + 1, 2) as u16;
                self.p += 3;
                num(if c == 0xcd { v as f64 } else { v as i16 as f64 })
            }
            0xce | 0xd2 => {
                self.need(5)?;
                let v = self.be(self.p + 1, 4) as u32;
                self.p += 5;
                num(if c == 0xce { v as f64 } else { v as i32 as f64 })
            }
            0xcf | 0xd3 => {
                // Both go through a signed 64-bit integer on 64-bit Lua 5.1.
                self.need(9)?;
                let v = self.be(self.p + 1, 8) as i64;
                self.p += 9;
                num(v as f64)
            }
            0xc0 => {
                self.p += 1;
                Ok(Item::Value(SValue::Nil))
            }
            0xc2 | 0xc3 => {
                self.p += 1;
                Ok(Item::Value(SValue::Bool(c == 0xc3)))
            }
            0xca => {
                self.need(5)?;
                let v = f32::from_bits(self.be(self.p + 1, 4) as u32);
                self.p += 5;
                num(f32_to_f64(v))
            }
            0xcb => {
                self.need(9)?;
                let v = f64::from_bits(self.be(self.p + 1, 8));
                self.p += 9;
                num(v)
            }
            0xd9 => {
                self.need(2)?;
                let l = self.d[self.p + 1] as usize;
                self.bytes_item(2, l)
            }
            0xda => {
                self.need(3)?;
                let l = self.be(self.p + 1, 2) as usize;
                self.bytes_item(3, l)
            }
            0xdb => {
                self.need(5)?;
                let l = self.be(self.p + 1, 4) as usize;
                self.bytes_item(5, l)
            }
            0xdc | 0xde => {
                self.need(3)?;
                let l = self.be(self.p + 1, 2) as usize;
                self.p += 3;
                Ok(Item::Open {
                    map: c == 0xde,
                    len: l,
                })
            }
            0xdd | 0xdf => {
                self.need(5)?;
                let l = self.be(self.p + 1, 4) as usize;
                self.p += 5;
                Ok(Item::Open {
                    map: c == 0xdf,
                    len: l,
                })
            }
            _ if c & 0x80 == 0 => {
                self.p += 1;
                num(c as f64)
            }
            _ if c & 0xe0 == 0xe0 => {
                self.p += 1;
                num(c as i8 as f64)
            }
            _ if c & 0xe0 == 0xa0 => self.bytes_item(1, (c & 0x1f) as usize),
            _ if c & 0xf0 == 0x90 => {
                self.p += 1;
                Ok(Item::Open {
                    map: false,
                    len: (c & 0xf) as usize,
                })
            }
            _ if c & 0xf0 == 0x80 => {
                self.p += 1;
                Ok(Item::Open {
                    map: true,
                    len: (c & 0xf) as usize,
                })
            }
            _ => Err(Fail::BadFmt),
        }
    }

    fn bytes_item(&mut self, hdr: usize, len: usize) -> Result<Item, Fail> {
        self.bytes(hdr, len).map(Item::Value)
    }

    /// One value, tables decoded with an explicit stack (nesting is bounded only by the Lua stack
    /// limit, about 4000 levels, so no native recursion). `used` as for [`Decoder::item`].
    fn value(&mut self, used: usize) -> Result<SValue, Fail> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut cur = used;
        loop {
            let mut v = match self.item(cur)? {
                Item::Value(v) => v,
                Item::Open { map, len } => {
                    let id = self.g.add(Vec::new());
                    // mp_decode_to_lua_array checks the stack after lua_newtable.
                    if !map && cur + 2 > MAX_C_STACK {
                        return Err(Fail::Lua(LuaErr::Error(
                            "stack overflow (in function mp_decode_to_lua_array)".into(),
                        )));
                    }
                    let f = Frame {
                        id,
                        map,
                        remaining: len,
                        index: 0,
                        key: None,
                        t: TableBuilder::default(),
                        used: cur,
                    };
                    if let Some(u) = f.child_used() {
                        stack.push(f);
                        cur = u;
                        continue;
                    }
                    self.g.tables[id] = f.t.finish();
                    SValue::Table(id)
                }
            };
            // Hand `v` to the enclosing tables, closing the ones it completes.
            loop {
                let Some(f) = stack.last_mut() else {
                    return Ok(v);
                };
                if f.map {
                    match f.key.take() {
                        None => f.key = Some(v),
                        Some(k) => {
                            match k {
                                SValue::Nil => {
                                    return Err(Fail::Lua(LuaErr::Raw("table index is nil".into())))
                                }
                                SValue::Num(n) if n.is_nan() => {
                                    return Err(Fail::Lua(LuaErr::Raw(
                                        "table index is NaN".into(),
                                    )));
                                }
                                _ => f.t.set(k, v),
                            }
                            f.remaining -= 1;
                        }
                    }
                } else {
                    f.index += 1;
                    f.t.set(SValue::Num(f.index as f64), v);
                    f.remaining -= 1;
                }
                if let Some(u) = f.child_used() {
                    cur = u;
                    break;
                }
                let f = stack.pop().expect("frame");
                self.g.tables[f.id] = f.t.finish();
                v = SValue::Table(f.id);
            }
        }
    }
}

/// A scalar, or a table header.
enum Item {
    Value(SValue),
    Open { map: bool, len: usize },
}

/// A table being decoded.
struct Frame {
    id: usize,
    map: bool,
    /// Items (arrays) or pairs (maps) still to decode.
    remaining: usize,
    index: usize,
    /// A map key waiting for its value.
    key: Option<SValue>,
    t: TableBuilder,
    /// Lua stack slots in use before the table was pushed.
    used: usize,
}

impl Frame {
    /// The slots in use while decoding the next item, or None when the table is complete:
    /// an array holds table + index, a map the table (+ the key while decoding a value).
    fn child_used(&self) -> Option<usize> {
        if self.map {
            if self.key.is_some() {
                Some(self.used + 2)
            } else if self.remaining > 0 {
                Some(self.used + 1)
            } else {
                None
            }
        } else if self.remaining > 0 {
            Some(self.used + 2)
        } else {
            None
        }
    }
}

/// `mp_unpack_full(s, limit, offset)`: decodes up to `limit` values (0 with offset 0: all) from
/// byte `offset`. Returns the graph and the values to return to Lua in order: when not decoding
/// all, the first is the next offset (-1 once the input is consumed), then the values.
pub fn unpack(data: &[u8], limit: i64, offset: i64) -> Result<(Graph, Vec<SValue>), LuaErr> {
    let len = data.len();
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        return Err(LuaErr::Error(
            format!(
                "Invalid request to unpack with offset of {} and limit of {}.",
                offset as i32, len as i32
            )
            .into(),
        ));
    } else if offset as u64 > len as u64 {
        return Err(LuaErr::Error(
            format!(
                "Start offset {} greater than input length {}.",
                offset as i32, len as i32
            )
            .into(),
        ));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut dec = Decoder {
        d: data,
        p: offset as usize,
        g: Graph::default(),
    };
    let mut out = Vec::new();
    // The C function's frame holds the input string, then one slot per returned value.
    while dec.p < len && (out.len() as i64) < limit {
        match dec.value(1 + out.len()) {
            Ok(v) => out.push(v),
            Err(Fail::Eof) => return Err(LuaErr::Error("Missing bytes in input.".into())),
            Err(Fail::BadFmt) => return Err(LuaErr::Error("Bad data format in input.".into())),
            Err(Fail::Lua(e)) => return Err(e),
        }
    }
    if !decode_all {
        let next = if dec.p == len { -1 } else { dec.p as i64 };
        out.insert(0, SValue::Num(next as f64));
    }
    Ok((dec.g, out))
}

fn check_integer(args: &[SValue], n: usize) -> Result<i64, LuaErr> {
    let a = args.get(n - 1);
    match a.and_then(lua_tonumber) {
        Some(x) => Ok(cast_i64(x)),
        None => Err(LuaErr::Arg(
            n,
            format!(
                "number expected, got {}",
                a.map(type_name).unwrap_or("no value")
            )
            .into(),
        )),
    }
}

fn opt_integer(args: &[SValue], n: usize, def: i64) -> Result<i64, LuaErr> {
    match args.get(n - 1) {
        None | Some(SValue::Nil) => Ok(def),
        Some(_) => check_integer(args, n),
    }
}

fn check_string(args: &[SValue], n: usize) -> Result<Vec<u8>, LuaErr> {
    let a = args.get(n - 1);
    a.and_then(lua_tostring).ok_or_else(|| {
        LuaErr::Arg(
            n,
            format!(
                "string expected, got {}",
                a.map(type_name).unwrap_or("no value")
            )
            .into(),
        )
    })
}

/// `cmsgpack.unpack(s)` from its raw Lua arguments: the values to return.
pub fn unpack_lua(args: &[SValue]) -> Result<(Graph, Vec<SValue>), LuaErr> {
    let s = check_string(args, 1)?;
    unpack(&s, 0, 0)
}

/// `cmsgpack.unpack_one(s[, offset])` from its raw Lua arguments: next offset, then the value.
pub fn unpack_one_lua(args: &[SValue]) -> Result<(Graph, Vec<SValue>), LuaErr> {
    let offset = opt_integer(args, 2, 0)?;
    let s = check_string(args, 1)?;
    unpack(&s, 1, offset)
}

/// `cmsgpack.unpack_limit(s, limit[, offset])` from its raw Lua arguments: next offset (unless
/// limit and offset are both 0), then the values.
pub fn unpack_limit_lua(args: &[SValue]) -> Result<(Graph, Vec<SValue>), LuaErr> {
    let limit = check_integer(args, 2)?;
    let offset = opt_integer(args, 3, 0)?;
    let s = check_string(args, 1)?;
    unpack(&s, limit, offset)
}

#[cfg(test)]
mod tests {
    //! Every expected output and error text below was recorded from Redis 7.0.15
    //! (`redis-cli eval "return hex(cmsgpack.pack(...))" 0` and friends).
    use super::super::test_values::*;
    use super::*;

    fn pack_hex(g: &Graph, vals: &[SValue]) -> String {
        hex(&pack(g, vals).unwrap())
    }

    #[test]
    fn pack_numbers() {
        let g = Graph::default();
        let ints = [
            0.0,
            1.0,
            127.0,
            128.0,
            255.0,
            256.0,
            65535.0,
            65536.0,
            4294967295.0,
            4294967296.0,
            -1.0,
            -32.0,
            -33.0,
            -128.0,
            -129.0,
            -32768.0,
            -32769.0,
            -2147483648.0,
            -2147483649.0,
        ];
        assert_eq!(
            pack_hex(&g, &nums(&ints)),
            "00017fcc80ccffcd0100cdffffce00010000ceffffffffcf0000000100000000ffe0d0dfd080d1ff7fd18000d2ffff7fffd2\
             80000000d3ffffffff7fffffff"
        );
        let two63 = 9223372036854775808.0;
        let floats = [
            two63,
            -two63,
            two63 / 2.0,
            two63 * 2.0,
            -two63 * 2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(0xfff8_0000_0000_0000), // 0/0 on x86
            -0.0,
            0.5,
            0.1,
            1e300,
            f32::MAX as f64,
            1e-45,
        ];
        assert_eq!(
            pack_hex(&g, &nums(&floats)),
            "ca5f000000d38000000000000000cf4000000000000000ca5f800000cadf800000ca7f800000caff800000cbfff8000000000000\
             00ca3f000000cb3fb999999999999acb7e37e43c8800759cca7f7fffffcb3696d601ad376ab9"
        );
        assert_eq!(
            pack_hex(
                &g,
                &nums(&[9007199254740992.0, 9007199254740994.0, 1.5, -1.5])
            ),
            "cf0020000000000000cf0020000000000002ca3fc00000cabfc00000"
        );
    }

    #[test]
    fn pack_scalars_and_strings() {
        let g = Graph::default();
        let vals = [
            SValue::Bool(true),
            SValue::Bool(false),
            SValue::Nil,
            SValue::Null,
        ];
        assert_eq!(pack_hex(&g, &vals), "c3c2c0c0");
        assert_eq!(pack_hex(&g, &[SValue::Other("function")]), "c0");
        assert_eq!(pack_hex(&g, &[s(b"")]), "a0");
        assert_eq!(
            pack_hex(&g, &[s([b'a'; 31])]),
            format!("bf{}", "61".repeat(31))
        );
        for (n, head) in [
            (32, "d920"),
            (255, "d9ff"),
            (256, "da0100"),
            (65535, "daffff"),
            (65536, "db00010000"),
        ] {
            let out = pack_hex(&g, &[s(vec![b'a'; n])]);
            assert_eq!(out, format!("{head}{}", "61".repeat(n)), "{n}");
        }
        assert_eq!(
            pack(&g, &[]),
            Err(LuaErr::Arg(0, "MessagePack pack needs input.".into()))
        );
    }

    #[test]
    fn pack_tables() {
        let (g, t) = table(vec![]);
        assert_eq!(pack_hex(&g, &[t]), "90");
        let (g, t) = table(vec![
            (num(1.0), num(1.0)),
            (num(2.0), num(2.0)),
            (num(3.0), num(3.0)),
        ]);
        assert_eq!(pack_hex(&g, &[t]), "93010203");
        let (g, t) = table(vec![(num(1.0), num(1.0)), (num(3.0), num(3.0))]);
        assert_eq!(pack_hex(&g, &[t]), "8201010303");
        let (g, t) = table(vec![(s(b"a"), num(1.0))]);
        assert_eq!(pack_hex(&g, &[t]), "81a16101");
        for (k, want) in [
            (1.5, "81ca3fc0000001"),
            (0.0, "810001"),
            (1099511627776.0, "81cf000001000000000001"),
        ] {
            let (g, t) = table(vec![(num(k), num(1.0))]);
            assert_eq!(pack_hex(&g, &[t]), want);
        }
        let seq = |n: usize| {
            (1..=n)
                .map(|i| (num(i as f64), num(i as f64)))
                .collect::<Vec<_>>()
        };
        let (g, t) = table(seq(16));
        assert_eq!(pack_hex(&g, &[t]), "dc00100102030405060708090a0b0c0d0e0f10");
        let (g, t) = table(seq(15));
        assert!(pack_hex(&g, &[t]).starts_with("9f01"));
        let (g, t) = table((1..=65536).map(|i| (num(i as f64), num(1.0))).collect());
        assert!(pack_hex(&g, &[t]).starts_with("dd0001000001"));
        let keys = |n: usize| {
            (1..=n)
                .map(|i| (s(format!("k{i}").as_bytes()), num(1.0)))
                .collect::<Vec<_>>()
        };
        let (g, t) = table(keys(16));
        assert!(pack_hex(&g, &[t]).starts_with("de0010"));
        let (g, t) = table(keys(65536));
        assert!(pack_hex(&g, &[t]).starts_with("df00010000a"));
    }

    #[test]
    fn pack_nesting() {
        // t[1] = t; t.a = t: 16 levels, then nil.
        let mut g = Graph::default();
        g.add(vec![(num(1.0), SValue::Table(0))]);
        g.add(vec![(s(b"a"), SValue::Table(1))]);
        assert_eq!(
            pack_hex(&g, &[SValue::Table(0)]),
            format!("{}c0", "91".repeat(16))
        );
        assert_eq!(
            pack_hex(&g, &[SValue::Table(1)]),
            format!("{}c0", "81a161".repeat(16))
        );
        // {{{...{1}...}}} 18 deep.
        let mut g = Graph::default();
        for i in 0..18 {
            let v = if i < 17 {
                SValue::Table(i + 1)
            } else {
                num(1.0)
            };
            g.add(vec![(num(1.0), v)]);
        }
        assert_eq!(
            pack_hex(&g, &[SValue::Table(0)]),
            format!("{}c0", "91".repeat(16))
        );
    }

    fn all(data: &[u8]) -> Result<(Graph, Vec<SValue>), LuaErr> {
        unpack(data, 0, 0)
    }

    fn err(m: &str) -> LuaErr {
        LuaErr::Error(m.into())
    }

    #[test]
    fn unpack_values() {
        assert_eq!(all(b"").unwrap().1, vec![]);
        let (g, v) =
            all(&pack(&Graph::default(), &[num(1.0), s(b"a"), SValue::Bool(true)]).unwrap())
                .unwrap();
        assert!(g.tables.is_empty());
        assert_eq!(v, vec![num(1.0), s(b"a"), SValue::Bool(true)]);
        assert_eq!(
            all(b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff").unwrap().1,
            vec![num(-1.0)]
        );
        assert_eq!(
            all(b"\xcf\x80\0\0\0\0\0\0\x01").unwrap().1,
            vec![num(-9223372036854775808.0)]
        );
        assert_eq!(
            all(b"\xd3\x80\0\0\0\0\0\0\x01").unwrap().1,
            vec![num(-9223372036854775808.0)]
        );
        assert_eq!(
            all(b"\xcc\xff\xd0\xff\xcd\xff\xff\xd1\x80\0\xce\xff\xff\xff\xff\xd2\x80\0\0\0\xe0\xff\x7f").unwrap().1,
            nums(&[255.0, -1.0, 65535.0, -32768.0, 4294967295.0, -2147483648.0, -32.0, -1.0, 127.0])
        );
        assert_eq!(
            all(b"\xca\x3f\x99\x99\x9a").unwrap().1,
            vec![num(1.2000000476837158)]
        );
        let SValue::Num(nan) = all(b"\xca\xff\xc0\0\0").unwrap().1[0] else {
            panic!()
        };
        assert!(nan.is_nan() && nan.is_sign_negative());
        assert_eq!(
            all(b"\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a").unwrap().1,
            vec![num(0.1)]
        );
        assert_eq!(
            all(b"\xd9\x03abc\xda\x00\x02de\xdb\x00\x00\x00\x01f\xa3ghi\xa0")
                .unwrap()
                .1,
            vec![s(b"abc"), s(b"de"), s(b"f"), s(b"ghi"), s(b"")]
        );
        assert_eq!(all(b"12").unwrap().1, nums(&[49.0, 50.0]));
        // Every byte value survives a round trip.
        let bytes: Vec<u8> = (0..=255).collect();
        let packed = pack(&Graph::default(), &[s(&bytes)]).unwrap();
        assert_eq!(&packed[..3], b"\xda\x01\x00");
        assert_eq!(all(&packed).unwrap().1, vec![s(&bytes)]);
    }

    #[test]
    fn unpack_tables() {
        let one = |d: &[u8]| {
            let (g, v) = all(d).unwrap();
            assert_eq!(v, vec![SValue::Table(0)]);
            g
        };
        assert_eq!(
            one(b"\x93\x01\xc0\x03").tables[0],
            vec![(num(1.0), num(1.0)), (num(3.0), num(3.0))]
        );
        assert_eq!(
            one(b"\xdc\x00\x02\x01\x02").tables[0],
            vec![(num(1.0), num(1.0)), (num(2.0), num(2.0))]
        );
        assert_eq!(
            one(b"\xdd\x00\x00\x00\x02\x01\x02").tables[0],
            vec![(num(1.0), num(1.0)), (num(2.0), num(2.0))]
        );
        let g = one(b"\x82\xa1a\x01\xa1b\x91\x02");
        assert_eq!(
            g.tables[0],
            vec![(s(b"a"), num(1.0)), (s(b"b"), SValue::Table(1))]
        );
        assert_eq!(g.tables[1], vec![(num(1.0), num(2.0))]);
        assert_eq!(
            one(b"\xde\x00\x01\xa1a\x01").tables[0],
            vec![(s(b"a"), num(1.0))]
        );
        assert_eq!(
            one(b"\xdf\x00\x00\x00\x01\xa1a\x01").tables[0],
            vec![(s(b"a"), num(1.0))]
        );
        assert_eq!(
            one(b"\x82\xa1a\x01\xa1a\x02").tables[0],
            vec![(s(b"a"), num(2.0))]
        );
        assert_eq!(one(b"\x82\xa1a\x01\xa1a\xc0").tables[0], vec![]);
        assert_eq!(one(b"\x81\x01\xc0").tables[0], vec![]);
    }

    #[test]
    fn unpack_errors() {
        let e = |d: &[u8]| all(d).map(|_| ()).unwrap_err();
        let missing = err("Missing bytes in input.");
        let bad = err("Bad data format in input.");
        for d in [
            &b"\xcd\x01"[..],
            b"\x92\x01",
            b"\xd9\x04abc",
            b"\xdb\0\0\0\x09abc",
            b"\xdb\0\0",
            b"\xdc\0",
            b"\xde\0\x01\xa1a",
        ] {
            assert_eq!(e(d), missing, "{d:?}");
        }
        for d in [
            &b"\xc1"[..],
            b"\x92\xc1\x01",
            b"\xc4\x01a",
            b"\xc7",
            b"\xd4",
            b"\xc1\x01",
            b"\x01\xc1",
        ] {
            assert_eq!(e(d), bad, "{d:?}");
        }
        assert_eq!(e(b"\x81\xc0\x01"), LuaErr::Raw("table index is nil".into()));
        assert_eq!(
            e(b"\x81\xcb\x7f\xf8\0\0\0\0\0\0\x01"),
            LuaErr::Raw("table index is NaN".into())
        );
        assert_eq!(all(&[1u8; 7990]).unwrap().1.len(), 7990);
        let too_many = err("stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)");
        assert_eq!(e(&[1u8; 8000]), too_many);
        let nested = |prefix: &[u8], n: usize| {
            let mut d = prefix.repeat(n);
            d.push(1);
            d
        };
        assert_eq!(all(&nested(b"\x91", 3000)).unwrap().1.len(), 1);
        let deep = err("stack overflow (in function mp_decode_to_lua_array)");
        assert_eq!(e(&nested(b"\x91", 5000)), deep);
        assert_eq!(e(&nested(b"\x91", 100000)), deep);
        assert_eq!(e(&nested(b"\x81\x01", 5000)), too_many);
    }

    #[test]
    fn unpack_one_and_limit() {
        let p = pack(&Graph::default(), &nums(&[1.0, 2.0, 3.0])).unwrap();
        let sp = s(&p);
        let one = |args: &[SValue]| unpack_one_lua(args).map(|r| r.1);
        let lim = |args: &[SValue]| unpack_limit_lua(args).map(|r| r.1);
        assert_eq!(one(std::slice::from_ref(&sp)), Ok(nums(&[1.0, 1.0])));
        assert_eq!(one(&[sp.clone(), num(1.0)]), Ok(nums(&[2.0, 2.0])));
        assert_eq!(one(&[sp.clone(), num(2.0)]), Ok(nums(&[-1.0, 3.0])));
        assert_eq!(one(&[sp.clone(), num(3.0)]), Ok(nums(&[-1.0])));
        assert_eq!(
            one(&[sp.clone(), num(4.0)]),
            Err(err("Start offset 4 greater than input length 3."))
        );
        assert_eq!(
            one(&[sp.clone(), num(-1.0)]),
            Err(err(
                "Invalid request to unpack with offset of -1 and limit of 3."
            ))
        );
        assert_eq!(lim(&[sp.clone(), num(2.0)]), Ok(nums(&[2.0, 1.0, 2.0])));
        assert_eq!(
            lim(&[sp.clone(), num(2.0), num(2.0)]),
            Ok(nums(&[-1.0, 3.0]))
        );
        assert_eq!(lim(&[sp.clone(), num(0.0)]), Ok(nums(&[1.0, 2.0, 3.0])));
        assert_eq!(lim(&[sp.clone(), num(0.0), num(1.0)]), Ok(nums(&[1.0])));
        assert_eq!(
            lim(&[sp.clone(), num(-1.0)]),
            Err(err(
                "Invalid request to unpack with offset of 0 and limit of 3."
            ))
        );
        assert_eq!(
            lim(std::slice::from_ref(&sp)),
            Err(LuaErr::Arg(2, "number expected, got no value".into()))
        );
        assert_eq!(
            lim(&[sp.clone(), s(b"x")]),
            Err(LuaErr::Arg(2, "number expected, got string".into()))
        );
        assert_eq!(one(&[s(b""), num(0.0)]), Ok(nums(&[-1.0])));
        assert_eq!(one(&[s(b"\x01\xc1")]), Ok(nums(&[1.0, 1.0])));
        assert_eq!(
            one(&[s(b"\xc1\x01")]),
            Err(err("Bad data format in input."))
        );
        let t = SValue::Table(0);
        assert_eq!(
            unpack_lua(&[t]).map(|_| ()),
            Err(LuaErr::Arg(1, "string expected, got table".into()))
        );
        assert_eq!(unpack_lua(&[num(12.0)]).unwrap().1, nums(&[49.0, 50.0]));
    }
}
