//! Values held by the keyspace. One enum, one variant per Redis type; each aggregate type lives in its
//! own file (`hash.rs`, `list.rs`, `set.rs`, `zset.rs`, `stream.rs`) and is boxed so an entry stays small. The
//! string type keeps an integer fast path (Redis's `int` encoding) so INCR and friends never parse or
//! format.

use super::{Hash, List, Set, Stream, ZSet};
use crate::util::fmt_i64;

/// Strings no longer than this are created as Redis's `embstr`; longer ones, and any string changed
/// in place (APPEND, SETRANGE), are `raw`. Tracked only so `OBJECT ENCODING` answers as Redis does.
pub const EMBSTR_MAX: usize = 44;

#[derive(Clone)]
pub enum Value {
    Str(Str),
    List(Box<List>),
    Hash(Hash),
    Set(Box<Set>),
    ZSet(Box<ZSet>),
    Stream(Box<Stream>),
}

#[derive(Clone)]
pub enum Str {
    Int(i64),
    /// A short string kept inside the value, with no allocation (where Redis embeds its embstr
    /// in the object's own allocation): most values are short.
    Inline {
        len: u8,
        buf: [u8; INLINE_MAX],
    },
    Bytes {
        data: Vec<u8>,
        raw: bool,
    },
}

/// The most bytes `Str::Inline` holds: what fits beside its tag and length in the 32 bytes a
/// `Value` takes anyway.
pub const INLINE_MAX: usize = 30;

impl Value {
    /// The name TYPE replies and SCAN's TYPE option matches.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// What OBJECT ENCODING answers: the representation Redis 7.0 would use for the same value.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(Str::Int(_)) => "int",
            Value::Str(Str::Inline { .. }) => "embstr",
            Value::Str(Str::Bytes { raw: true, .. }) => "raw",
            Value::Str(Str::Bytes { data, .. }) if data.len() > EMBSTR_MAX => "raw",
            Value::Str(Str::Bytes { .. }) => "embstr",
            Value::List(l) => l.encoding(),
            Value::Hash(h) => h.encoding(),
            Value::Set(s) => s.encoding(),
            Value::ZSet(z) => z.encoding(),
            Value::Stream(_) => "stream",
        }
    }

    /// A string value as SET creates it: integer-encoded when it is a canonical integer.
    pub fn string(data: &[u8]) -> Value {
        Value::Str(Str::from_bytes(data))
    }

    /// Approximate heap footprint (DEBUG OBJECT).
    pub fn heap_size(&self) -> usize {
        self.memory_usage(usize::MAX)
    }

    /// MEMORY USAGE's estimate of the value's heap footprint: an aggregate's first `samples`
    /// elements, their average scaled to its length (Redis's `objectComputeSize`).
    pub fn memory_usage(&self, samples: usize) -> usize {
        let (len, sizes): (usize, Box<dyn Iterator<Item = usize> + '_>) = match self {
            Value::Str(s) => return s.heap_size(),
            Value::Stream(s) => return s.heap_size(),
            Value::List(l) => (l.len(), Box::new(l.element_sizes())),
            Value::Hash(h) => (h.len(), h.element_sizes()),
            Value::Set(s) => (s.len(), s.element_sizes()),
            Value::ZSet(z) => (z.len(), Box::new(z.element_sizes())),
        };
        let (mut taken, mut sum) = (0usize, 0usize);
        for size in sizes.take(samples) {
            taken += 1;
            sum += size;
        }
        if taken == 0 || taken >= len {
            return sum;
        }
        (sum as f64 / taken as f64 * len as f64) as usize
    }
}

impl Str {
    pub fn from_bytes(data: &[u8]) -> Str {
        // Redis only tries the int encoding on strings of at most 20 bytes that round-trip exactly.
        if data.len() <= 20 {
            if let Some(n) = crate::util::parse_i64(data) {
                return Str::Int(n);
            }
        }
        Str::plain(data)
    }

    /// A string kept as written, never integer-encoded (Redis's `createStringObject`): inline
    /// when short.
    pub fn plain(data: &[u8]) -> Str {
        if data.len() <= INLINE_MAX {
            let mut buf = [0u8; INLINE_MAX];
            buf[..data.len()].copy_from_slice(data);
            Str::Inline {
                len: data.len() as u8,
                buf,
            }
        } else {
            Str::Bytes {
                data: data.to_vec(),
                raw: false,
            }
        }
    }

    /// The bytes of a string that is not integer-encoded.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Str::Int(_) => None,
            Str::Inline { len, buf } => Some(&buf[..*len as usize]),
            Str::Bytes { data, .. } => Some(data),
        }
    }

    /// Calls `f` with the string's bytes (formatting an integer on the stack).
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Str::Int(n) => {
                let mut buf = [0u8; 20];
                f(fmt_i64(*n, &mut buf))
            }
            Str::Inline { len, buf } => f(&buf[..*len as usize]),
            Str::Bytes { data, .. } => f(data),
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }

    pub fn len(&self) -> usize {
        match self {
            Str::Int(n) => {
                let mut buf = [0u8; 20];
                fmt_i64(*n, &mut buf).len()
            }
            Str::Inline { len, .. } => *len as usize,
            Str::Bytes { data, .. } => data.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes as an owned, in-place-modifiable (`raw`) buffer, converting from int if needed.
    pub fn make_raw(&mut self) -> &mut Vec<u8> {
        if !matches!(self, Str::Bytes { .. }) {
            *self = Str::Bytes {
                data: self.to_vec(),
                raw: true,
            };
        }
        match self {
            Str::Bytes { data, raw } => {
                *raw = true;
                data
            }
            _ => unreachable!("converted above"),
        }
    }

    /// Approximate heap footprint, for INFO memory and MEMORY USAGE.
    pub fn heap_size(&self) -> usize {
        match self {
            Str::Int(_) | Str::Inline { .. } => 0,
            Str::Bytes { data, .. } => data.capacity(),
        }
    }
}
