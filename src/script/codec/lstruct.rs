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
                    return Err(LuaErr::Error(format!(
                        "integral size {sz} is larger than limit of {MAXINTSIZE}"
                    )));
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
                    return Err(LuaErr::Error(format!("alignment {a} is not a power of 2")));
                }
                h.align = a;
            }
            _ => {
                return Err(LuaErr::Arg(
                    1,
                    format!("invalid format option '{}'", opt as char),
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
        .ok_or_else(|| LuaErr::Arg(n, format!("string expected, got {}", arg_type(a))))
}

fn check_number(a: Option<&SValue>, n: usize) -> Result<f64, LuaErr> {
    a.and_then(lua_tonumber)
        .ok_or_else(|| LuaErr::Arg(n, format!("number expected, got {}", arg_type(a))))
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
