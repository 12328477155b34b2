//! Key specs: where a command's keys are in its arguments and what it does to them, as Redis 7's
//! `keySpec` (server.h). A table row declares them (`Command::key`, `key_range`, `key_num`);
//! COMMAND INFO shows them, COMMAND GETKEYS follows them, and the legacy (first, last, step) triple
//! and the `movablekeys` flag follow from them as in Redis's `populateCommandLegacyRangeSpec`.

use crate::resp::parser::Args;

// Key-spec flags (server.h's CMD_KEY_*). Redis writes the first four in upper case, the rest in
// lower case; `KEY_FLAG_NAMES` has them in COMMAND INFO's order.
/// Read-only: the value is read but the key is not changed.
pub const RO: u32 = 1 << 0;
/// Read-write: the value is read or changed, in place.
pub const RW: u32 = 1 << 1;
/// Overwrite: the value is replaced without being read.
pub const OW: u32 = 1 << 2;
/// Remove: the key is deleted without being read.
pub const RM: u32 = 1 << 3;
/// The value (or part of it) is returned or copied.
pub const ACCESS: u32 = 1 << 4;
/// The value is updated or replaced.
pub const UPDATE: u32 = 1 << 5;
/// Data is added to the value, nothing is removed or changed.
pub const INSERT: u32 = 1 << 6;
/// Data is removed from the value (or the key deleted).
pub const DELETE: u32 = 1 << 7;
/// Not a key (a shard channel), though cluster routing treats it as one.
pub const NOT_KEY: u32 = 1 << 8;
/// The spec may not find every key.
pub const INCOMPLETE: u32 = 1 << 9;
/// The flags depend on the other arguments (SET's `GET`).
pub const VARIABLE_FLAGS: u32 = 1 << 10;

pub const KEY_FLAG_NAMES: &[(u32, &str)] = &[
    (RO, "RO"),
    (RW, "RW"),
    (OW, "OW"),
    (RM, "RM"),
    (ACCESS, "access"),
    (UPDATE, "update"),
    (INSERT, "insert"),
    (DELETE, "delete"),
    (NOT_KEY, "not_key"),
    (INCOMPLETE, "incomplete"),
    (VARIABLE_FLAGS, "variable_flags"),
];

/// Where the search for a spec's keys begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeginSearch {
    /// At this argument (the command name is 0).
    Index(i32),
    /// After `keyword`, searched from argument `startfrom` on (backwards from the end when
    /// negative).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
    Unknown,
}

/// Which arguments, from where the search began, are the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindKeys {
    /// Every `keystep`-th argument up to `lastkey` past the first (negative: counted from the end
    /// of the line; with a `limit`, that part of the remaining arguments).
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// The number of keys is the argument `keynumidx` past the first, and the keys start
    /// `firstkey` past the first.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    pub flags: u32,
    pub begin_search: BeginSearch,
    pub find_keys: FindKeys,
}

impl KeySpec {
    const NONE: KeySpec = KeySpec {
        notes: None,
        flags: 0,
        begin_search: BeginSearch::Unknown,
        find_keys: FindKeys::Unknown,
    };

    pub const fn range(index: i32, lastkey: i32, keystep: i32, flags: u32) -> KeySpec {
        KeySpec {
            notes: None,
            flags,
            begin_search: BeginSearch::Index(index),
            find_keys: FindKeys::Range {
                lastkey,
                keystep,
                limit: 0,
            },
        }
    }

    pub const fn keynum(
        index: i32,
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
        flags: u32,
    ) -> KeySpec {
        KeySpec {
            notes: None,
            flags,
            begin_search: BeginSearch::Index(index),
            find_keys: FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            },
        }
    }

    const fn index_range(&self) -> Option<(i32, i32, i32)> {
        match (self.begin_search, self.find_keys) {
            (
                BeginSearch::Index(pos),
                FindKeys::Range {
                    lastkey, keystep, ..
                },
            ) => Some((pos, lastkey, keystep)),
            _ => None,
        }
    }
}

/// The most key specs a row holds (Redis's SORT and GEORADIUS have three).
pub const MAX_KEY_SPECS: usize = 3;

/// A row's key specs, held in the row so that builder calls can declare them.
#[derive(Clone, Copy, Debug)]
pub struct KeySpecs {
    specs: [KeySpec; MAX_KEY_SPECS],
    len: usize,
}

/// The legacy key positions COMMAND INFO shows beside the specs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Legacy {
    pub first: i32,
    /// Absolute, or negative counted from the end.
    pub last: i32,
    pub step: i32,
    /// Some key is not found by (first, last, step): the command is `movablekeys`.
    pub movable: bool,
}

impl KeySpecs {
    pub const EMPTY: KeySpecs = KeySpecs {
        specs: [KeySpec::NONE; MAX_KEY_SPECS],
        len: 0,
    };

    pub const fn push(mut self, spec: KeySpec) -> KeySpecs {
        assert!(self.len < MAX_KEY_SPECS, "too many key specs");
        self.specs[self.len] = spec;
        self.len += 1;
        self
    }

    /// Gives the last spec pushed its notes.
    pub const fn notes(mut self, notes: &'static str) -> KeySpecs {
        assert!(self.len > 0, "notes before any key spec");
        self.specs[self.len - 1].notes = Some(notes);
        self
    }

    pub fn as_slice(&self) -> &[KeySpec] {
        &self.specs[..self.len]
    }

    /// Redis's `populateCommandLegacyRangeSpec`: one index/range spec is the triple itself;
    /// otherwise consecutive index/range specs of step 1 are glued, and any other spec makes the
    /// command `movablekeys`.
    pub const fn legacy(&self) -> Legacy {
        let none = Legacy {
            first: 0,
            last: 0,
            step: 0,
            movable: false,
        };
        if self.len == 0 {
            return none;
        }
        if self.len == 1 {
            if let Some((pos, lastkey, keystep)) = self.specs[0].index_range() {
                return Legacy {
                    first: pos,
                    last: if lastkey >= 0 { pos + lastkey } else { lastkey },
                    step: keystep,
                    movable: self.specs[0].flags & INCOMPLETE != 0,
                };
            }
        }
        let mut movable = false;
        let mut first = i32::MAX;
        // Compared as unsigned, as Redis does, so a negative (from the end) last key wins.
        let mut last: u32 = 0;
        let mut prev_last: u32 = 0;
        let mut i = 0;
        while i < self.len {
            let spec = self.specs[i];
            i += 1;
            let Some((pos, lastkey, keystep)) = spec.index_range() else {
                movable = true;
                continue;
            };
            if keystep != 1 || (prev_last != 0 && prev_last != (pos - 1) as u32) {
                movable = true;
                continue;
            }
            if spec.flags & INCOMPLETE != 0 {
                movable = true;
            }
            if pos < first {
                first = pos;
            }
            let abs = if lastkey >= 0 { lastkey + pos } else { lastkey };
            if abs as u32 > last {
                last = abs as u32;
            }
            prev_last = last;
        }
        if first == i32::MAX {
            return Legacy {
                movable: true,
                ..none
            };
        }
        Legacy {
            first,
            last: last as i32,
            step: 1,
            movable,
        }
    }

    /// Some spec names real keys (not only `NOT_KEY` ones).
    pub fn has_keys(&self) -> bool {
        self.as_slice().iter().any(|s| s.flags & NOT_KEY == 0)
    }

    /// The flags of all the specs together.
    pub fn all_flags(&self) -> u32 {
        self.as_slice().iter().fold(0, |f, s| f | s.flags)
    }

    /// Redis's `getKeysUsingKeySpecs`: the key positions of a command line (`NOT_KEY` specs
    /// skipped), or `None` when a spec does not fit the line (a bad key count, keys past its end)
    /// or cannot tell (unknown, incomplete).
    pub fn find(&self, args: Args) -> Option<Vec<usize>> {
        self.find_flagged(args)
            .map(|keys| keys.into_iter().map(|(pos, _)| pos).collect())
    }

    /// `find`, each key with the flags of the spec that found it (COMMAND GETKEYSANDFLAGS).
    pub fn find_flagged(&self, args: Args) -> Option<Vec<(usize, u32)>> {
        let argc = args.len() as i64;
        let mut keys = Vec::new();
        for spec in self.as_slice() {
            if spec.flags & NOT_KEY != 0 {
                continue;
            }
            let mut first: i64 = match spec.begin_search {
                BeginSearch::Index(pos) => pos as i64,
                BeginSearch::Keyword { keyword, startfrom } => {
                    let (start, end) = if startfrom > 0 {
                        (startfrom as i64, argc - 1)
                    } else {
                        (argc + startfrom as i64, 1)
                    };
                    let mut found = 0;
                    let mut i = start;
                    while i != end && (1..argc).contains(&i) {
                        if args[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
                            found = i + 1;
                            break;
                        }
                        i += if start <= end { 1 } else { -1 };
                    }
                    if found == 0 {
                        continue;
                    }
                    found
                }
                BeginSearch::Unknown => return None,
            };
            let (last, step) = match spec.find_keys {
                FindKeys::Range {
                    lastkey,
                    keystep,
                    limit,
                } => {
                    let last = if lastkey >= 0 {
                        first + lastkey as i64
                    } else if limit == 0 {
                        argc + lastkey as i64
                    } else {
                        first + ((argc - first) / limit as i64 + lastkey as i64)
                    };
                    (last, keystep as i64)
                }
                FindKeys::Keynum {
                    keynumidx,
                    firstkey,
                    keystep,
                } => {
                    let at = first + keynumidx as i64;
                    if at >= argc {
                        return None;
                    }
                    let n = crate::util::parse_i64(&args[at as usize]).filter(|&n| n >= 0)?;
                    first += firstkey as i64;
                    // Redis narrows the count to an int.
                    (first + n as i32 as i64 - 1, keystep as i64)
                }
                FindKeys::Unknown => return None,
            };
            if last >= argc || last < first || first >= argc {
                return None;
            }
            let mut i = first;
            while i <= last {
                keys.push((i as usize, spec.flags));
                i += step.max(1);
            }
            if spec.flags & INCOMPLETE != 0 {
                return None;
            }
        }
        Some(keys)
    }
}

/// The keys of a `numkeys key [key ...]` command line whose numkeys is at `at`, as Redis's
/// `genericGetKeys` finds them when the specs do not: numkeys read as C's `atoi` does (`2x` is 2),
/// no keys when it is below 1 or more than the arguments left; `store`, the destination of a
/// *STORE form, comes last. Without flags, as `genericGetKeys` gives none.
pub fn keys_after_numkeys(args: Args, at: usize, store: Option<usize>) -> Vec<(usize, u32)> {
    let Some(n) = args.get(at).map(atoi) else {
        return Vec::new();
    };
    let room = args.len() as i64 - (at as i64 + 1);
    if n < 1 || n > room {
        return Vec::new();
    }
    (at + 1..at + 1 + n as usize)
        .chain(store)
        .map(|pos| (pos, 0))
        .collect()
}

/// The keys of a line that reads the key at 1 and may write a destination found by its own
/// parsing (SORT's STORE, GEORADIUS's STORE and STOREDIST), flagged as Redis's `sortGetKeys` and
/// `georadiusGetKeys` flag them.
pub fn source_and_store(store: Option<usize>) -> Vec<(usize, u32)> {
    std::iter::once((1, RO | ACCESS))
        .chain(store.map(|pos| (pos, OW | UPDATE)))
        .collect()
}

/// C's `atoi` as glibc has it (`(int) strtol(s, NULL, 10)`): leading blanks, a sign and the digits
/// that follow; 0 when there are none.
fn atoi(s: &[u8]) -> i64 {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i128 = 0;
    while let Some(d) = s.get(i).filter(|c| c.is_ascii_digit()) {
        v = (v * 10 + i128::from(d - b'0')).min(1 << 64);
        i += 1;
    }
    let v = if neg { -v } else { v };
    // strtol's long (clamped to its range), narrowed to int.
    v.clamp(i64::MIN.into(), i64::MAX.into()) as i32 as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_range_as_redis_derives_it() {
        let one = KeySpecs::EMPTY.push(KeySpec::range(1, 0, 1, RO | ACCESS));
        assert_eq!(
            one.legacy(),
            Legacy {
                first: 1,
                last: 1,
                step: 1,
                movable: false
            }
        );
        let mset = KeySpecs::EMPTY.push(KeySpec::range(1, -1, 2, OW | UPDATE));
        assert_eq!((mset.legacy().last, mset.legacy().step), (-1, 2));
        // SINTERSTORE: destination, then the sources to the end.
        let glued = KeySpecs::EMPTY
            .push(KeySpec::range(1, 0, 1, OW | UPDATE))
            .push(KeySpec::range(2, -1, 1, RO | ACCESS));
        assert_eq!((glued.legacy().first, glued.legacy().last), (1, -1));
        assert!(!glued.legacy().movable);
        // ZUNIONSTORE: the destination by position, the sources by count.
        let store = KeySpecs::EMPTY
            .push(KeySpec::range(1, 0, 1, OW | UPDATE))
            .push(KeySpec::keynum(2, 0, 1, 1, RO | ACCESS));
        assert_eq!(
            store.legacy(),
            Legacy {
                first: 1,
                last: 1,
                step: 1,
                movable: true
            }
        );
        let eval = KeySpecs::EMPTY.push(KeySpec::keynum(2, 0, 1, 1, RW | ACCESS | UPDATE));
        assert_eq!(
            eval.legacy(),
            Legacy {
                first: 0,
                last: 0,
                step: 0,
                movable: true
            }
        );
    }

    #[test]
    fn atoi_reads_like_c() {
        assert_eq!(atoi(b"12"), 12);
        assert_eq!(atoi(b"2x"), 2);
        assert_eq!(atoi(b"  -3"), -3);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b""), 0);
        assert_eq!(atoi(b"99999999999"), 1_215_752_191);
        assert_eq!(atoi(b"99999999999999999999"), -1);
        assert_eq!(atoi(b"-99999999999999999999"), 0);
    }
}
