//! The compact encodings inside RDB values: listpack, which Redis 7.0 writes for small hashes,
//! sorted sets and list nodes (built by `store::listpack`, read and validated here), intset (written and
//! read), and the ziplist and zipmap older files hold (read only). Every reader checks the blob's
//! framing and fails with `corrupt <encoding>` rather than read past it.

use super::{bad, R};
use crate::store::listpack::backlen;
pub use crate::store::listpack::{Elem, Listpack};

/// The intset of sorted `members`, in the narrowest width that holds them all (Redis's
/// `intsetAdd` upgrades to it).
pub(super) fn intset(members: &[i64]) -> Vec<u8> {
    let width: usize = if members.iter().all(|&n| i16::try_from(n).is_ok()) {
        2
    } else if members.iter().all(|&n| i32::try_from(n).is_ok()) {
        4
    } else {
        8
    };
    let mut is = Vec::with_capacity(8 + width * members.len());
    is.extend_from_slice(&(width as u32).to_le_bytes());
    is.extend_from_slice(&(members.len() as u32).to_le_bytes());
    for &n in members {
        is.extend_from_slice(&n.to_le_bytes()[..width]);
    }
    is
}

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |a, &x| (a << 8) | x as u64)
}

/// The elements of a listpack blob, validated.
pub(super) fn listpack_elems(lp: &[u8]) -> R<Vec<Elem<'_>>> {
    let e = || bad("listpack");
    if lp.len() < 7 || le(&lp[0..4]) as usize != lp.len() || lp[lp.len() - 1] != 0xFF {
        return Err(e());
    }
    let mut out = Vec::new();
    let mut p = 6;
    let end = lp.len() - 1;
    let get = |a: usize, n: usize| lp.get(a..a + n).filter(|_| a + n <= end).ok_or_else(e);
    while p < end {
        let b = lp[p];
        let (elem, enc_len) = if b & 0x80 == 0 {
            (Elem::Int((b & 0x7F) as i64), 1)
        } else if b & 0xC0 == 0x80 {
            let n = (b & 0x3F) as usize;
            (Elem::Bytes(get(p + 1, n)?), 1 + n)
        } else if b & 0xE0 == 0xC0 {
            let u = (((b & 0x1F) as i64) << 8) | *get(p + 1, 1)?.first().unwrap() as i64;
            (Elem::Int(if u >= 1 << 12 { u - (1 << 13) } else { u }), 2)
        } else if b & 0xF0 == 0xE0 {
            let n = (((b & 0x0F) as usize) << 8) | get(p + 1, 1)?[0] as usize;
            (Elem::Bytes(get(p + 2, n)?), 2 + n)
        } else {
            match b {
                0xF0 => {
                    let n = le(get(p + 1, 4)?) as usize;
                    (Elem::Bytes(get(p + 5, n)?), 5 + n)
                }
                0xF1 => (
                    Elem::Int(i16::from_le_bytes(get(p + 1, 2)?.try_into().unwrap()) as i64),
                    3,
                ),
                0xF2 => {
                    let u = le(get(p + 1, 3)?) as i64;
                    (Elem::Int(if u >= 1 << 23 { u - (1 << 24) } else { u }), 4)
                }
                0xF3 => (
                    Elem::Int(i32::from_le_bytes(get(p + 1, 4)?.try_into().unwrap()) as i64),
                    5,
                ),
                0xF4 => (
                    Elem::Int(i64::from_le_bytes(get(p + 1, 8)?.try_into().unwrap())),
                    9,
                ),
                _ => return Err(e()),
            }
        };
        let mut bl = Vec::new();
        backlen(&mut bl, enc_len);
        p += enc_len;
        if get(p, bl.len())? != &bl[..] {
            return Err(e());
        }
        p += bl.len();
        out.push(elem);
    }
    let n = le(&lp[4..6]) as usize;
    if n != 65535 && n != out.len() {
        return Err(e());
    }
    Ok(out)
}

/// The elements of a ziplist blob, validated.
pub(super) fn ziplist_elems(zl: &[u8]) -> R<Vec<Elem<'_>>> {
    let e = || bad("ziplist");
    if zl.len() < 11 || le(&zl[0..4]) as usize != zl.len() || zl[zl.len() - 1] != 0xFF {
        return Err(e());
    }
    let end = zl.len() - 1;
    let get = |a: usize, n: usize| zl.get(a..a + n).filter(|_| a + n <= end).ok_or_else(e);
    let mut out = Vec::new();
    let mut p = 10;
    while p < end {
        p += if zl[p] < 254 { 1 } else { 5 };
        let b = *get(p, 1)?.first().unwrap();
        let (elem, n) = match b >> 6 {
            0 => {
                let n = (b & 0x3F) as usize;
                (Elem::Bytes(get(p + 1, n)?), 1 + n)
            }
            1 => {
                let n = (((b & 0x3F) as usize) << 8) | get(p + 1, 1)?[0] as usize;
                (Elem::Bytes(get(p + 2, n)?), 2 + n)
            }
            2 => {
                let n = u32::from_be_bytes(get(p + 1, 4)?.try_into().unwrap()) as usize;
                (Elem::Bytes(get(p + 5, n)?), 5 + n)
            }
            _ => match b {
                0xC0 => (
                    Elem::Int(i16::from_le_bytes(get(p + 1, 2)?.try_into().unwrap()) as i64),
                    3,
                ),
                0xD0 => (
                    Elem::Int(i32::from_le_bytes(get(p + 1, 4)?.try_into().unwrap()) as i64),
                    5,
                ),
                0xE0 => (
                    Elem::Int(i64::from_le_bytes(get(p + 1, 8)?.try_into().unwrap())),
                    9,
                ),
                0xF0 => {
                    let u = le(get(p + 1, 3)?) as i64;
                    (Elem::Int(if u >= 1 << 23 { u - (1 << 24) } else { u }), 4)
                }
                0xFE => (Elem::Int(get(p + 1, 1)?[0] as i8 as i64), 2),
                0xF1..=0xFD => (Elem::Int((b & 0x0F) as i64 - 1), 1),
                _ => return Err(e()),
            },
        };
        p += n;
        out.push(elem);
    }
    Ok(out)
}

/// The (field, value) pairs of a zipmap blob.
pub(super) fn zipmap_pairs(zm: &[u8]) -> R<Vec<(Vec<u8>, Vec<u8>)>> {
    let e = || bad("zipmap");
    let get = |a: usize, n: usize| zm.get(a..a + n).ok_or_else(e);
    let mut p = 1;
    let mut out = Vec::new();
    let read_len = |p: &mut usize| -> R<usize> {
        let b = *zm.get(*p).ok_or_else(e)?;
        if b < 254 {
            *p += 1;
            Ok(b as usize)
        } else if b == 254 {
            let n = le(get(*p + 1, 4)?) as usize;
            *p += 5;
            Ok(n)
        } else {
            Err(e())
        }
    };
    loop {
        if *zm.get(p).ok_or_else(e)? == 0xFF {
            break;
        }
        let kl = read_len(&mut p)?;
        let k = get(p, kl)?.to_vec();
        p += kl;
        let vl = read_len(&mut p)?;
        let free = *zm.get(p).ok_or_else(e)? as usize;
        p += 1;
        let v = get(p, vl)?.to_vec();
        p += vl + free;
        out.push((k, v));
    }
    Ok(out)
}

/// The members of an intset blob, validated (ascending, each once).
pub(super) fn intset_members(is: &[u8]) -> R<Vec<i64>> {
    let e = || bad("intset");
    if is.len() < 8 {
        return Err(e());
    }
    let width = le(&is[0..4]) as usize;
    let n = le(&is[4..8]) as usize;
    if !matches!(width, 2 | 4 | 8) || is.len() != 8 + width * n {
        return Err(e());
    }
    let mut out = Vec::with_capacity(n);
    for c in is[8..].chunks(width) {
        let v = match width {
            2 => i16::from_le_bytes(c.try_into().unwrap()) as i64,
            4 => i32::from_le_bytes(c.try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(c.try_into().unwrap()),
        };
        if out.last().is_some_and(|&l| l >= v) {
            return Err(e());
        }
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpack_round_trip() {
        let mut lp = Listpack::default();
        let items: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"127".to_vec(),
            b"-4096".to_vec(),
            b"40000".to_vec(),
            b"-8000000".to_vec(),
            b"2000000000".to_vec(),
            b"9000000000000".to_vec(),
            vec![b'x'; 100],
            vec![b'y'; 5000],
            b"007".to_vec(),
        ];
        for i in &items {
            lp.push(i);
        }
        let blob = lp.finish();
        let back: Vec<Vec<u8>> = listpack_elems(&blob)
            .unwrap()
            .iter()
            .map(Elem::to_vec)
            .collect();
        assert_eq!(back, items);
    }
}
