//! LZF (Marc Lehmann's liblzf 3.6, as vendored by Redis) and Redis's CRC-64 (Jones polynomial).
//!
//! `compress` reproduces liblzf's output byte for byte (Redis's build: `HLOG 16`, `VERY_FAST`,
//! matches never start at offset 0), so a DUMP payload or an RDB string matches redis-server's.
//! Entry points: `compress`, `decompress`, `crc64`.

const HLOG: u32 = 16;
const HSIZE: usize = 1 << HLOG;
const MAX_LIT: usize = 1 << 5;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);

#[inline]
fn idx(h: u32) -> usize {
    ((h >> (3 * 8 - HLOG)).wrapping_sub(h.wrapping_mul(5)) as usize) & (HSIZE - 1)
}

/// Compresses `input` into at most `out_len` bytes; `None` when it does not fit (liblzf's 0).
pub fn compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    // Slot values are positions + 1; 0 is an empty slot (liblzf's table holds offsets, and a match
    // at offset 0 is refused by its `ref > in_data` test anyway).
    let mut htab = vec![0u32; HSIZE];
    let mut out = vec![0u8; out_len];
    let mut op: usize = 1; // start run
    let mut lit: usize = 0;
    let mut ip: usize = 0;
    let at = |i: usize| input[i] as u32;
    let mut hval: u32 = if in_len >= 2 { (at(0) << 8) | at(1) } else { 0 };
    while in_len >= 3 && ip < in_len - 2 {
        hval = (hval << 8) | at(ip + 2);
        let slot = idx(hval);
        let refp = htab[slot] as usize; // position + 1, or 0
        htab[slot] = ip as u32 + 1;
        let matched = refp > 1 && {
            let r = refp - 1;
            r < ip
                && ip - r - 1 < MAX_OFF
                && input[r + 2] == input[ip + 2]
                && input[r] == input[ip]
                && input[r + 1] == input[ip + 1]
        };
        if matched {
            let r = refp - 1;
            let off = ip - r - 1;
            let mut len: usize = 2;
            let maxlen = (in_len - ip - len).min(MAX_REF);
            if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
            op -= usize::from(lit == 0); // undo run if length is zero
            'scan: {
                if maxlen > 16 {
                    for _ in 0..16 {
                        len += 1;
                        if input[r + len] != input[ip + len] {
                            break 'scan;
                        }
                    }
                }
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2; // len is now #octets - 1
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start run
            ip += len + 1;
            if ip >= in_len - 2 {
                break;
            }
            ip -= 2;
            hval = (at(ip) << 8) | at(ip + 1);
            hval = (hval << 8) | at(ip + 2);
            htab[idx(hval)] = ip as u32 + 1;
            ip += 1;
            hval = (hval << 8) | at(ip + 2);
            htab[idx(hval)] = ip as u32 + 1;
            ip += 1;
        } else {
            if op >= out_len {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1);
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

/// Decompresses `input` into exactly `out_len` bytes; `None` on malformed data.
pub fn decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            if ip + n > input.len() || out.len() + n > out_len {
                return None;
            }
            out.extend_from_slice(&input[ip..ip + n]);
            ip += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += *input.get(ip)? as usize;
                ip += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(ip)? as usize + 1;
            ip += 1;
            len += 2;
            if back > out.len() || out.len() + len > out_len {
                return None;
            }
            let start = out.len() - back;
            for i in 0..len {
                let b = out[start + i];
                out.push(b);
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

/// Redis's CRC-64 (Jones polynomial, reflected, initial value `crc`, no final xor).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let t = crc_table();
    for &b in data {
        crc = t[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

fn crc_table() -> &'static [u64; 256] {
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        const POLY: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9 reflected
        let mut t = [0u64; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u64;
            for _ in 0..8 {
                c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            }
            *slot = c;
        }
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_check_value() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn lzf_round_trip() {
        let data: Vec<u8> = b"hello hello hello hello world, hello hello hello!!"
            .iter()
            .cycle()
            .take(5000)
            .copied()
            .collect();
        let c = compress(&data, data.len() - 4).unwrap();
        assert!(c.len() < 200);
        assert_eq!(decompress(&c, data.len()).unwrap(), data);
        let noise: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8).collect();
        if let Some(c) = compress(&noise, noise.len() - 4) {
            assert_eq!(decompress(&c, noise.len()).unwrap(), noise);
        }
    }
}
