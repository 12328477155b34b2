//! The hash of keys, fields and members: SipHash-1-2 under a key drawn once at start-up, as Redis's
//! `siphash.c` — one compression round per 8 bytes and two finalization rounds. It is cheaper than
//! std's SipHash-1-3 (which also hashes a slice's length separately), and without the key nobody
//! can choose names that collide to slow a table down.

use std::sync::OnceLock;

#[derive(Clone, Copy)]
pub struct SipKey {
    k0: u64,
    k1: u64,
}

impl SipKey {
    /// The process's key, drawn from the OS on first use.
    pub fn process() -> SipKey {
        static KEY: OnceLock<SipKey> = OnceLock::new();
        *KEY.get_or_init(|| {
            let mut bytes = [0u8; 16];
            // SAFETY: `bytes` is writable for its length.
            let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
            if n != bytes.len() as isize {
                // No getrandom: std's per-process random seed, taken through its hasher.
                use std::hash::BuildHasher;
                let seed = std::hash::RandomState::new();
                bytes[..8].copy_from_slice(&seed.hash_one(0u8).to_le_bytes());
                bytes[8..].copy_from_slice(&seed.hash_one(1u8).to_le_bytes());
            }
            SipKey {
                k0: u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
                k1: u64::from_le_bytes(bytes[8..].try_into().expect("8 bytes")),
            }
        })
    }

    pub fn hash(&self, bytes: &[u8]) -> u64 {
        sip::<1, 2>(self.k0, self.k1, bytes)
    }
}

#[inline(always)]
fn round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// Up to 7 bytes as a little-endian word, in at most three loads (overlapping loads put the same
/// byte in the same place twice, which `|` leaves as it is).
#[inline(always)]
fn tail(b: &[u8]) -> u64 {
    let n = b.len();
    let half = |i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")));
    if n >= 4 {
        half(0) | half(n - 4) << (8 * (n - 4))
    } else if n > 0 {
        u64::from(b[0])
            | u64::from(b[n / 2]) << (8 * (n / 2))
            | u64::from(b[n - 1]) << (8 * (n - 1))
    } else {
        0
    }
}

/// SipHash-C-D of `m` under the key (`k0`, `k1`).
#[inline]
fn sip<const C: usize, const D: usize>(k0: u64, k1: u64, m: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let compress = |v: &mut [u64; 4], w: u64| {
        v[3] ^= w;
        for _ in 0..C {
            round(v);
        }
        v[0] ^= w;
    };
    let mut words = m.chunks_exact(8);
    for w in &mut words {
        compress(&mut v, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    compress(&mut v, (m.len() as u64) << 56 | tail(words.remainder()));
    v[2] ^= 0xff;
    for _ in 0..D {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference SipHash-2-4 vectors (key 00..0f, message 00..len-1) check the shared code;
    /// 1-2 differs only in its round counts.
    #[test]
    fn reference_vectors() {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0..64).collect();
        assert_eq!(sip::<2, 4>(k0, k1, &msg[..0]), 0x726f_db47_dd0e_0e31);
        assert_eq!(sip::<2, 4>(k0, k1, &msg[..1]), 0x74f8_39c5_93dc_67fd);
        assert_eq!(sip::<2, 4>(k0, k1, &msg[..15]), 0xa129_ca61_49be_45e5);
        // Every tail length, against the byte-by-byte definition.
        for n in 0..8 {
            let want = msg[..n]
                .iter()
                .enumerate()
                .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i));
            assert_eq!(tail(&msg[..n]), want, "tail of {n} bytes");
        }
    }

    #[test]
    fn depends_on_every_byte_and_the_length() {
        let key = SipKey::process();
        assert_ne!(key.hash(b"key:1"), key.hash(b"key:2"));
        assert_ne!(key.hash(b"abc"), key.hash(b"abc\0"));
        assert_ne!(key.hash(b"12345678a"), key.hash(b"12345678b"));
        assert_eq!(key.hash(b"same"), SipKey::process().hash(b"same"));
    }
}
