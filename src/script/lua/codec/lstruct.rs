//! `struct` as Redis 7.0 ships it (Roberto Ierusalimschy's struct.c 1.4 / library 0.2, with
//! Redis's overflow fixes), on x86-64: native little endian, `short` 2, `int` 4, `long`/`size_t` 8
//! bytes, maximum alignment 8, integral sizes up to 32.
//!
//! The functions take the raw Lua arguments (format first) so argument numbers in errors match.
//! Formats: `>` `<` `!n` ` ` `x` `b` `B` `h` `H` `l` `L` `T` `in` `In` `f` `d` `cn` `s`; the format
//! is read as a C string (a NUL ends it).

use super::{
    cast_i64, cast_u64, f32_to_f64, f64_to_f32, lua_tonumber, lua_tostring, type_name, LuaErr,
    SValue, NIL,
};

const MAXINTSIZE: usize = 32;
const MAXALIGN: usize = 8;
/// Lua 5.1's `LUAI_MAXCSTACK`.
const MAX_C_STACK: usize = 8000;

#[derive(Clone, Copy, PartialEq)]
enum Endian {
    Big,
    Little,
}

struct Header {
    endian: Endian,
    align: usize,
}

impl Header {
    fn new() -> Self {
        Header {
            endian: Endian::Little,
            align: 1,
        }
    }
}

struct Fmt {
    f: Vec<u8>,
    i: usize,
}

impl Fmt {
    fn peek(&self) -> u8 {
        self.f.get(self.i).copied().unwrap_or(0)
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c == 0 {
            None
        } else {
            self.i += 1;
            Some(c)
        }
    }

    /// `getnum` with Redis's overflow check.
    fn getnum(&mut self, df: usize) -> Result<usize, LuaErr> {
        if !self.peek().is_ascii_digit() {
            return Ok(df);
        }
        let mut a: i32 = 0;
        while self.peek().is_ascii_digit() {
            let d = (self.peek() - b'0') as i32;
            if a > i32::MAX / 10 || a * 10 > i32::MAX - d {
                return Err(LuaErr::Error("integral size overflow".into()));
            }
            a = a * 10 + d;
            self.i += 1;
        }
        Ok(a as usize)
    }

    fn optsize(&mut self, opt: u8) -> Result<usize, LuaErr> {
        Ok(match opt {
            b'B' | b'b' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'x' => 1,
            b'c' => self.getnum(1)?,
            b'i' | b'I' => {
                let sz = self.getnum(4)?;
                if sz > MAXINTSIZE {
                    return Err(LuaErr::Error(
                        format!("integral size {sz} is larger than limit of {MAXINTSIZE}").into(),
                    ));
                }
                sz
            }
            _ => 0,
        })
    }

    /// `controloptions`.
    fn control(&mut self, opt: u8, h: &mut Header) -> Result<(), LuaErr> {
        match opt {
            b' ' => {}
            b'>' => h.endian = Endian::Big,
            b'<' => h.endian = Endian::Little,
            b'!' => {
                let a = self.getnum(MAXALIGN)?;
                if !(a > 0 && a & (a - 1) == 0) {
                    return Err(LuaErr::Error(
                        format!("alignment {a} is not a power of 2").into(),
                    ));
                }
                h.align = a;
            }
            _ => {
                return Err(LuaErr::Arg(
                    1,
                    [&b"invalid format option '"[..], &[opt], b"'"].concat(),
                ))
            }
        }
        Ok(())
    }
}

fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size.wrapping_sub(len & (size - 1))) & (size - 1)
}

fn arg_type(a: Option<&SValue>) -> &'static str {
    a.map(type_name).unwrap_or("no value")
}

fn check_string(a: Option<&SValue>, n: usize) -> Result<Vec<u8>, LuaErr> {
    a.and_then(lua_tostring)
        .ok_or_else(|| LuaErr::Arg(n, format!("string expected, got {}", arg_type(a)).into()))
}

fn check_number(a: Option<&SValue>, n: usize) -> Result<f64, LuaErr> {
    a.and_then(lua_tonumber)
        .ok_or_else(|| LuaErr::Arg(n, format!("number expected, got {}", arg_type(a)).into()))
}

fn format_arg(args: &[SValue]) -> Result<Fmt, LuaErr> {
    let mut f = check_string(args.first(), 1)?;
    if let Some(n) = f.iter().position(|&c| c == 0) {
        f.truncate(n);
    }
    Ok(Fmt { f, i: 0 })
}

fn put_ordered(out: &mut Vec<u8>, le: &[u8], endian: Endian) {
    if endian == Endian::Little {
        out.extend_from_slice(le);
    } else {
        out.extend(le.iter().rev());
    }
}

/// `struct.pack(fmt, ...)`: the packed string.
pub fn pack(args: &[SValue]) -> Result<Vec<u8>, LuaErr> {
    let mut fmt = format_arg(args)?;
    // b_pack pushes a nil after its arguments: the first missing argument reads as nil.
    let arg_at = |n: usize| -> Option<&SValue> {
        if n <= args.len() {
            args.get(n - 1)
        } else if n == args.len() + 1 {
            Some(&NIL)
        } else {
            None
        }
    };
    let mut h = Header::new();
    let mut arg = 2;
    let mut total: usize = 0;
    let mut out = Vec::new();
    while let Some(opt) = fmt.next() {
        let mut size = fmt.optsize(opt)?;
        let toalign = gettoalign(total, &h, opt, size);
        total = total.wrapping_add(toalign);
        out.resize(out.len() + toalign, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = check_number(arg_at(arg), arg)?;
                arg += 1;
                let mut value = if n < 0.0 {
                    cast_i64(n) as u64
                } else {
                    cast_u64(n)
                };
                let mut le = Vec::with_capacity(size);
                for _ in 0..size {
                    le.push((value & 0xff) as u8);
                    value >>= 8;
                }
                put_ordered(&mut out, &le, h.endian);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = f64_to_f32(check_number(arg_at(arg), arg)?);
                arg += 1;
                put_ordered(&mut out, &f.to_bits().to_le_bytes(), h.endian);
            }
            b'd' => {
                let d = check_number(arg_at(arg), arg)?;
                arg += 1;
                put_ordered(&mut out, &d.to_bits().to_le_bytes(), h.endian);
            }
            b'c' | b's' => {
                let s = check_string(arg_at(arg), arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return Err(LuaErr::Arg(arg, "string too short".into()));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            _ => fmt.control(opt, &mut h)?,
        }
        total = total.wrapping_add(size);
    }
    Ok(out)
}

fn getinteger(b: &[u8], endian: Endian, signed: bool, size: usize) -> f64 {
    let mut l: u64 = 0;
    let ordered: Vec<u8> = if endian == Endian::Big {
        b.to_vec()
    } else {
        b.iter().rev().copied().collect()
    };
    for &c in &ordered {
        l = (l << 8) | c as u64;
    }
    if !signed {
        return l as f64;
    }
    // `~0 << (size*8 - 1)` with x86's shift-count masking.
    let shift = ((size as i64) * 8 - 1) as u32;
    let mask = (!0u64).wrapping_shl(shift);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

/// `struct.unpack(fmt, data[, pos])`: the unpacked values, then the next position.
pub fn unpack(args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
    let mut fmt = format_arg(args)?;
    let data = check_string(args.get(1), 2)?;
    let ld = data.len();
    let start = match args.get(2) {
        None | Some(SValue::Nil) => 1,
        Some(a) => cast_i64(check_number(Some(a), 3)?),
    } as u64 as usize;
    if start == 0 {
        return Err(LuaErr::Arg(3, "offset must be 1 or greater".into()));
    }
    let mut pos = start - 1;
    let mut h = Header::new();
    let mut res: Vec<SValue> = Vec::new();
    let too_short = || LuaErr::Arg(2, "data string too short".into());
    while let Some(opt) = fmt.next() {
        let mut size = fmt.optsize(opt)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Err(too_short());
        }
        if args.len() + res.len() + 2 > MAX_C_STACK {
            return Err(LuaErr::Error("stack overflow (too many results)".into()));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let signed = opt.is_ascii_lowercase();
                res.push(SValue::Num(getinteger(
                    &data[pos..pos + size],
                    h.endian,
                    signed,
                    size,
                )));
            }
            b'x' => {}
            b'f' => {
                let mut b = [0u8; 4];
                b.copy_from_slice(&data[pos..pos + 4]);
                if h.endian == Endian::Big {
                    b.reverse();
                }
                res.push(SValue::Num(f32_to_f64(f32::from_bits(u32::from_le_bytes(
                    b,
                )))));
            }
            b'd' => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&data[pos..pos + 8]);
                if h.endian == Endian::Big {
                    b.reverse();
                }
                res.push(SValue::Num(f64::from_bits(u64::from_le_bytes(b))));
            }
            b'c' => {
                if size == 0 {
                    let prev = res.last().and_then(lua_tonumber);
                    let Some(n) = prev else {
                        return Err(LuaErr::Error("format 'c0' needs a previous size".into()));
                    };
                    size = cast_u64(n) as usize;
                    res.pop();
                    if !(size <= ld && pos <= ld - size) {
                        return Err(too_short());
                    }
                }
                res.push(SValue::Str(data[pos..pos + size].to_vec()));
            }
            b's' => {
                let Some(e) = data[pos..].iter().position(|&c| c == 0) else {
                    return Err(LuaErr::Error("unfinished string in data".into()));
                };
                size = e + 1;
                res.push(SValue::Str(data[pos..pos + e].to_vec()));
            }
            _ => fmt.control(opt, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    res.push(SValue::Num(pos.wrapping_add(1) as i64 as f64));
    Ok(res)
}

/// `struct.size(fmt)`: the size of the packed structure.
pub fn size(args: &[SValue]) -> Result<usize, LuaErr> {
    let mut fmt = format_arg(args)?;
    let mut h = Header::new();
    let mut pos: usize = 0;
    while let Some(opt) = fmt.next() {
        let size = fmt.optsize(opt)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return Err(LuaErr::Arg(1, "option 's' has no fixed size".into()));
        } else if opt == b'c' && size == 0 {
            return Err(LuaErr::Arg(1, "option 'c0' has no fixed size".into()));
        }
        if !opt.is_ascii_alphanumeric() {
            fmt.control(opt, &mut h)?;
        }
        pos = pos.wrapping_add(size);
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    //! Every expected output and error text below was recorded from Redis 7.0.15
    //! (`redis-cli eval "return hex(struct.pack(...))" 0` and friends).
    use super::super::test_values::*;
    use super::*;

    /// `struct.pack(fmt, nums...)` as hex.
    fn p(fmt: &str, xs: &[f64]) -> String {
        let mut args = vec![s(fmt.as_bytes())];
        args.extend(xs.iter().map(|x| num(*x)));
        hex(&pack(&args).unwrap())
    }

    fn pack_err(args: &[SValue]) -> LuaErr {
        pack(args).unwrap_err()
    }

    fn arg(n: usize, m: &str) -> LuaErr {
        LuaErr::Arg(n, m.into())
    }

    fn err(m: &str) -> LuaErr {
        LuaErr::Error(m.into())
    }

    const TWO63: f64 = 9223372036854775808.0;

    #[test]
    fn pack_every_format() {
        let xs = [
            -1.0, 255.0, -2.0, 65534.0, -3.0, 3.0, 4.0, -5.0, 5.0, 1.5, -2.25,
        ];
        assert_eq!(
            p("bBhHlLTiIfd", &xs),
            "fffffefffefffdffffffffffffff03000000000000000400000000000000fbffffff050000000000c03f00000000000002c0"
        );
        assert_eq!(
            p(">bBhHlLTiIfd", &xs),
            "fffffffefffefffffffffffffffd00000000000000030000000000000004fffffffb000000053fc00000c002000000000000"
        );
        assert_eq!(
            p(
                "<i1i2i3i4i5i6i7i8",
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
            ),
            "010200030000040000000500000000060000000000070000000000000800000000000000"
        );
        assert_eq!(p(">i3I3", &[-2.0, 16777215.0]), "fffffeffffff");
        assert_eq!(p("<i16", &[-1.0]), "ffffffffffffffff0000000000000000");
        assert_eq!(p(">i16", &[-1.0]), "0000000000000000ffffffffffffffff");
        assert_eq!(
            p("<I16", &[TWO63 * 2.0]),
            "00000000000000000000000000000000"
        );
        assert_eq!(p("<i32", &[1.0]), format!("01{}", "00".repeat(31)));
        assert_eq!(p("i0", &[1.0]), "");
        assert_eq!(p("i5", &[1.0]), "0100000000");
        assert_eq!(p("i3", &[1.0]), "010000");
        assert_eq!(p("<I3", &[1099511627783.0]), "070000");
        assert_eq!(p(">I2<I2", &[258.0, 258.0]), "01020201");
        // Out-of-range conversions follow x86-64.
        let cases: &[(&str, f64, &str)] = &[
            ("<b", 300.0, "2c"),
            ("<B", -1.0, "ff"),
            ("<L", TWO63, "0000000000000080"),
            ("<l", TWO63, "0000000000000080"),
            ("<L", TWO63 * 2.0, "0000000000000000"),
            ("<L", 1e30, "0000000000000000"),
            ("<l", -1e30, "0000000000000080"),
            ("<L", f64::NAN, "0000000000000080"),
            ("<i", 1.9, "01000000"),
            ("<i", -1.9, "ffffffff"),
            ("<L", f64::INFINITY, "0000000000000000"),
            ("<l", f64::NEG_INFINITY, "0000000000000080"),
            ("<l", -TWO63, "0000000000000080"),
            ("<l", -TWO63 * 2.0, "0000000000000080"),
            ("<h", 65535.0, "ffff"),
            ("<H", -1.0, "ffff"),
            ("<h", 32768.0, "0080"),
            ("f", 1e40, "0000807f"),
            ("f", 0.1, "cdcccc3d"),
            (">f", -0.0, "80000000"),
            (
                ">d",
                f64::from_bits(0xfff8_0000_0000_0000),
                "fff8000000000000",
            ),
            (">f", f64::from_bits(0xfff8_0000_0000_0000), "ffc00000"),
        ];
        for (fmt, x, want) in cases {
            assert_eq!(p(fmt, &[*x]), *want, "{fmt} {x}");
        }
        assert_eq!(p("x", &[]), "00");
        assert_eq!(p("xbx", &[1.0]), "000100");
        assert_eq!(p("", &[]), "");
        assert_eq!(p("i", &[1.0, 2.0, 3.0]), "01000000");
        assert_eq!(p("b\0b", &[1.0, 2.0]), "01");
    }

    #[test]
    fn pack_strings() {
        let ps = |fmt: &str, v: SValue| hex(&pack(&[s(fmt.as_bytes()), v]).unwrap());
        assert_eq!(ps("s", s(b"ab")), "616200");
        assert_eq!(ps("c", s(b"ab")), "61");
        assert_eq!(ps("c0", s(b"abc")), "616263");
        assert_eq!(ps("c2", s(b"abc")), "6162");
        assert_eq!(ps("s", s(b"a\0b")), "61006200");
        assert_eq!(ps("s", s(b"")), "00");
        assert_eq!(ps("s", num(12.5)), "31322e3500");
        assert_eq!(ps("c0", num(12.5)), "31322e35");
        assert_eq!(ps("i", s(b"12")), "0c000000");
        assert_eq!(ps("i", s(b" 0x10 ")), "10000000");
        assert_eq!(ps("b", s(b" 0x10 ")), "10");
        assert_eq!(ps("d", s(b"1e1")), "0000000000002440");
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(pack(&[s(b"c0"), s(&bytes)]).unwrap(), bytes);
    }

    #[test]
    fn pack_alignment() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(
            p("!4 b i b h b d", &xs),
            "010000000200000003000400050000000000000000001840"
        );
        assert_eq!(
            p("!b i b h b d", &xs),
            "010000000200000003000400050000000000000000001840"
        );
        assert_eq!(p("!8bd", &[1.0, 2.0]), "01000000000000000000000000000040");
        assert_eq!(p("!2bd", &[1.0, 2.0]), "01000000000000000040");
        assert_eq!(
            p("!16bi16", &[1.0, 2.0]),
            "0100000000000000000000000000000002000000000000000000000000000000"
        );
        assert_eq!(p("!4 i3 b i3", &[1.0, 2.0, 3.0]), "000001000002030000");
        let ten: Vec<f64> = (1..=10).map(|i| i as f64).collect();
        assert_eq!(
            p("!8 b h b l b T b f b d", &ten),
            "0100020003000000040000000000000005000000000000000600000000000000070000000000004109000000000000000000000000002440"
        );
        let mixed =
            |fmt: &str| hex(&pack(&[s(fmt.as_bytes()), num(1.0), s(b"abc"), num(2.0)]).unwrap());
        assert_eq!(mixed("!4bc3i"), "0161626302000000");
        let mixed = hex(&pack(&[s(b"!4bsi"), num(1.0), s(b"ab"), num(2.0)]).unwrap());
        assert_eq!(mixed, "0161620002000000");
    }

    #[test]
    fn pack_errors() {
        let f = |x: &str| s(x.as_bytes());
        assert_eq!(
            pack_err(&[f("z"), num(1.0)]),
            arg(1, "invalid format option 'z'")
        );
        assert_eq!(
            pack_err(&[f("="), num(1.0)]),
            arg(1, "invalid format option '='")
        );
        assert_eq!(
            pack_err(&[f("i"), f("x")]),
            arg(2, "number expected, got string")
        );
        assert_eq!(
            pack_err(&[f("d"), f("1x")]),
            arg(2, "number expected, got string")
        );
        assert_eq!(pack_err(&[f("i")]), arg(2, "number expected, got nil"));
        assert_eq!(
            pack_err(&[f("i"), SValue::Nil]),
            arg(2, "number expected, got nil")
        );
        assert_eq!(
            pack_err(&[f("i"), SValue::Bool(true)]),
            arg(2, "number expected, got boolean")
        );
        assert_eq!(
            pack_err(&[f("iii"), num(1.0)]),
            arg(3, "number expected, got nil")
        );
        assert_eq!(
            pack_err(&[f("iiii"), num(1.0)]),
            arg(3, "number expected, got nil")
        );
        assert_eq!(
            pack_err(&[f("s"), SValue::Table(0)]),
            arg(2, "string expected, got table")
        );
        assert_eq!(pack_err(&[f("c5"), f("abc")]), arg(3, "string too short"));
        assert_eq!(
            pack_err(&[f("<i33"), num(1.0)]),
            err("integral size 33 is larger than limit of 32")
        );
        assert_eq!(
            pack_err(&[f("i99999999999"), num(1.0)]),
            err("integral size overflow")
        );
        assert_eq!(
            pack_err(&[f("c99999999999"), num(1.0)]),
            err("integral size overflow")
        );
        assert_eq!(
            pack_err(&[f("!99999999999"), num(1.0)]),
            err("integral size overflow")
        );
        assert_eq!(
            pack_err(&[f("!3bd"), num(1.0), num(2.0)]),
            err("alignment 3 is not a power of 2")
        );
        assert_eq!(
            pack_err(&[f("!0bd"), num(1.0), num(2.0)]),
            err("alignment 0 is not a power of 2")
        );
        assert_eq!(
            pack_err(&[num(12.0), num(1.0)]),
            arg(1, "invalid format option '1'")
        );
        assert_eq!(
            pack_err(&[SValue::Table(0), num(1.0)]),
            arg(1, "string expected, got table")
        );
        assert_eq!(pack_err(&[]), arg(1, "string expected, got no value"));
    }

    fn u(args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        unpack(args)
    }

    fn ub(fmt: &str, data: &[u8]) -> Result<Vec<SValue>, LuaErr> {
        unpack(&[s(fmt.as_bytes()), s(data)])
    }

    #[test]
    fn unpack_every_format() {
        let xs = [
            -1.0, 255.0, -2.0, 65534.0, -3.0, 3.0, 4.0, -5.0, 5.0, 1.5, -2.25,
        ];
        let mut args = vec![s(b"bBhHlLTiIfd")];
        args.extend(nums(&xs));
        let packed = pack(&args).unwrap();
        let mut want = nums(&xs);
        want.push(num(51.0));
        assert_eq!(ub("bBhHlLTiIfd", &packed), Ok(want));
        let ff = [0xffu8; 16];
        assert_eq!(
            ub("<lL", &ff),
            Ok(nums(&[-1.0, 18446744073709551616.0, 17.0]))
        );
        assert_eq!(ub("<i16", &ff), Ok(nums(&[-1.0, 17.0])));
        assert_eq!(
            ub("<I16", &[1u8; 16]),
            Ok(nums(&[72340172838076672.0, 17.0]))
        );
        let big = b"\0\0\0\0\0\0\0\0\x80\0\0\0\0\0\0\x01";
        assert_eq!(ub(">i16", big), Ok(nums(&[-TWO63, 17.0])));
        assert_eq!(ub("<i9", b"\x01\0\0\0\0\0\0\0\x80"), Ok(nums(&[1.0, 10.0])));
        assert_eq!(
            ub("<i12", b"\x01\0\0\0\0\0\0\0\0\0\0\x80"),
            Ok(nums(&[1.0, 13.0]))
        );
        assert_eq!(ub("<i3", b"\xff\xff\x7f"), Ok(nums(&[8388607.0, 4.0])));
        assert_eq!(ub("<i3", b"\0\0\x80"), Ok(nums(&[-8388608.0, 4.0])));
        assert_eq!(ub("i0", b"abc"), Ok(nums(&[0.0, 1.0])));
        assert_eq!(ub(">h", b"\xff\xfe"), Ok(nums(&[-2.0, 3.0])));
        assert_eq!(ub("<H", b"\xff\xfe"), Ok(nums(&[65279.0, 3.0])));
        assert_eq!(ub("I3", b"\x01\x02\x03"), Ok(nums(&[197121.0, 4.0])));
        assert_eq!(
            ub("<I8", &ff[..8]),
            Ok(nums(&[18446744073709551616.0, 9.0]))
        );
        assert_eq!(ub(">d", b"\x3f\xf8\0\0\0\0\0\0"), Ok(nums(&[1.5, 9.0])));
        assert_eq!(ub("<f", b"\0\0\xc0\x3f"), Ok(nums(&[1.5, 5.0])));
        assert_eq!(
            ub(">d", b"\x7f\xf0\0\0\0\0\0\0"),
            Ok(nums(&[f64::INFINITY, 9.0]))
        );
        let r = ub(">f", b"\xff\xc0\0\0").unwrap();
        assert!(matches!(r[0], SValue::Num(x) if x.is_nan() && x.is_sign_negative()));
        assert_eq!(ub("x", b"abc"), Ok(nums(&[2.0])));
        assert_eq!(ub("xb", b"abc"), Ok(nums(&[98.0, 3.0])));
        assert_eq!(
            ub("!4bi", b"\x01\0\0\0\x02\0\0\0"),
            Ok(nums(&[1.0, 2.0, 9.0]))
        );
        assert_eq!(ub("bb\0b", b"\x01\x02\x03"), Ok(nums(&[1.0, 2.0, 3.0])));
        assert_eq!(ub("", b"abc"), Ok(nums(&[1.0])));
        let ten: Vec<f64> = (1..=10).map(|i| i as f64).collect();
        let mut args = vec![s(b"!8 b h b l b T b f b d")];
        args.extend(nums(&ten));
        let packed = pack(&args).unwrap();
        let mut want = ten.clone();
        want.push(57.0);
        assert_eq!(ub("!8 b h b l b T b f b d", &packed), Ok(nums(&want)));
    }

    #[test]
    fn unpack_strings() {
        let st = |x: &[u8]| s(x);
        assert_eq!(ub("s", b"ab\0cd\0"), Ok(vec![st(b"ab"), num(4.0)]));
        assert_eq!(
            ub("ss", b"ab\0cd\0"),
            Ok(vec![st(b"ab"), st(b"cd"), num(7.0)])
        );
        assert_eq!(ub("s", b"\0"), Ok(vec![st(b""), num(2.0)]));
        assert_eq!(ub("c", b"abc"), Ok(vec![st(b"a"), num(2.0)]));
        assert_eq!(ub("c2c", b"abc"), Ok(vec![st(b"ab"), st(b"c"), num(4.0)]));
        assert_eq!(ub("bc0", b"\x02abc"), Ok(vec![st(b"ab"), num(4.0)]));
        assert_eq!(ub("bc0", b"\0abc"), Ok(vec![st(b""), num(2.0)]));
        assert_eq!(ub("c1c0", b"3abc"), Ok(vec![st(b"abc"), num(5.0)]));
        assert_eq!(ub("c1c0", b"2.5abc"), Ok(vec![st(b".5"), num(4.0)]));
        assert_eq!(ub("bxc0", b"\x02\0abc"), Ok(vec![st(b"ab"), num(5.0)]));
        assert_eq!(u(&[s(b"b"), num(12.0)]), Ok(nums(&[49.0, 2.0])));
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(ub("c256", &bytes), Ok(vec![st(&bytes), num(257.0)]));
    }

    #[test]
    fn unpack_positions() {
        let d = s(b"abcdef");
        let at = |fmt: &str, pos: SValue| u(&[s(fmt.as_bytes()), d.clone(), pos]);
        assert_eq!(at("<i", num(3.0)), Ok(nums(&[1717920867.0, 7.0])));
        assert_eq!(at("<b", num(1.9)), Ok(nums(&[97.0, 2.0])));
        assert_eq!(at("<b", s(b"2")), Ok(nums(&[98.0, 3.0])));
        assert_eq!(at("<b", SValue::Nil), Ok(nums(&[97.0, 2.0])));
        let short = Err(arg(2, "data string too short"));
        assert_eq!(at("<i", num(4.0)), short);
        assert_eq!(at("<b", num(7.0)), short);
        assert_eq!(at("<b", num(8.0)), short);
        assert_eq!(at("<b", num(-1.0)), short);
        assert_eq!(
            at("<b", num(0.0)),
            Err(arg(3, "offset must be 1 or greater"))
        );
        assert_eq!(
            at("<b", s(b"x")),
            Err(arg(3, "number expected, got string"))
        );
        let abc = |pos: f64| u(&[s(b""), s(b"abc"), num(pos)]);
        assert_eq!(abc(3.0), Ok(nums(&[3.0])));
        assert_eq!(abc(-1.0), Ok(nums(&[-1.0])));
        assert_eq!(abc(5.0), Ok(nums(&[5.0])));
        assert_eq!(u(&[s(b"b"), s(b"abc"), num(5.0)]), short);
        assert_eq!(
            ub("!4bi", b"\x01\0\0\0\x02\0\0\0\x03"),
            Ok(nums(&[1.0, 2.0, 9.0]))
        );
    }

    #[test]
    fn unpack_errors() {
        let short = Err(arg(2, "data string too short"));
        assert_eq!(ub("<i", b"abc"), short);
        assert_eq!(ub("bc0", b"\x05abc"), short);
        assert_eq!(ub("bc0", b"\xffabc"), short);
        assert_eq!(ub("c2c0", b"12abc"), short);
        assert_eq!(ub("c3", b"ab"), short);
        assert_eq!(ub("!4bi", b"\x01\0\0\0\x02\0\0"), short);
        let c0 = Err(err("format 'c0' needs a previous size"));
        assert_eq!(ub("c0", b"abc"), c0);
        assert_eq!(ub("c2c0", b"x2abc"), c0);
        assert_eq!(ub("c1c0", b" 3 abc"), c0);
        assert_eq!(ub("xc0", b"2abc"), c0);
        assert_eq!(ub("s", b"abc"), Err(err("unfinished string in data")));
        assert_eq!(ub("z", b"abc"), Err(arg(1, "invalid format option 'z'")));
        assert_eq!(
            ub("<i33", b"abc"),
            Err(err("integral size 33 is larger than limit of 32"))
        );
        assert_eq!(
            ub("i99999999999", b"abc"),
            Err(err("integral size overflow"))
        );
        assert_eq!(u(&[s(b"b")]), Err(arg(2, "string expected, got no value")));
        assert_eq!(u(&[]), Err(arg(1, "string expected, got no value")));
    }

    #[test]
    fn sizes() {
        let sz = |fmt: &str| size(&[s(fmt.as_bytes())]);
        assert_eq!(sz("bBhHlLTiIfdx"), Ok(51));
        assert_eq!(sz("!4bi"), Ok(8));
        assert_eq!(sz("!bd"), Ok(16));
        assert_eq!(sz("i7c3"), Ok(10));
        assert_eq!(sz("c"), Ok(1));
        assert_eq!(sz("z"), Ok(0));
        assert_eq!(sz("zq"), Ok(0));
        assert_eq!(sz(""), Ok(0));
        assert_eq!(sz("b\0b"), Ok(1));
        assert_eq!(sz("!8 b h b l b T b f b d"), Ok(56));
        assert_eq!(size(&[num(12.0)]), Ok(0));
        assert_eq!(sz("s"), Err(arg(1, "option 's' has no fixed size")));
        assert_eq!(sz("c0"), Err(arg(1, "option 'c0' has no fixed size")));
        assert_eq!(sz("="), Err(arg(1, "invalid format option '='")));
        assert_eq!(sz("!3"), Err(err("alignment 3 is not a power of 2")));
        assert_eq!(
            sz("<i33"),
            Err(err("integral size 33 is larger than limit of 32"))
        );
        assert_eq!(size(&[]), Err(arg(1, "string expected, got no value")));
    }
}
