//! The script cache every engine keeps its compiled artifacts in, keyed by the SHA1 of the body.
//!
//! Bodies loaded by `SCRIPT LOAD` stay until `SCRIPT FLUSH`; bodies that only arrived by `EVAL` live
//! in a bounded LRU (`EVAL_CACHE_MAX`, as Redis 7.4), the least recently used evicted first, so a
//! client generating endless distinct scripts cannot grow the cache without bound.
//!
//! Every engine's `Engine::load` starts with `ScriptCache::to_compile` (a cached script is only
//! pinned, see `loaded`; else the body's shebang flags), and answers `Engine::flags` and
//! `Engine::cache_stats` from its cache through `engine_methods!`.

use std::collections::HashMap;

use super::{shebang_flags, EngineId, Flags};

pub use crate::server::script_host::Sha;

/// How many EVAL-only scripts are kept.
pub const EVAL_CACHE_MAX: usize = 500;

/// The SHA1 digest of a body, as Redis's `sha1hex`.
pub fn sha1_hex(body: &[u8]) -> Sha {
    let hex = sha1_smol::Sha1::from(body).digest().to_string();
    let mut out = [0u8; 40];
    out.copy_from_slice(hex.as_bytes());
    out
}

/// Parses a digest argument, case-insensitively; `None` if it is not 40 bytes long. As Redis, the
/// digits are not checked: a digest that isn't hex is simply not in any cache (NOSCRIPT, or 0 for
/// SCRIPT EXISTS).
pub fn parse_sha(arg: &[u8]) -> Option<Sha> {
    let arg: &[u8; 40] = arg.try_into().ok()?;
    Some(arg.map(|c| c.to_ascii_lowercase()))
}

/// The cache's hasher: a digest's hex digits are already uniformly distributed (bodies are hashed
/// by SHA1 before they can be inserted), so its first eight bytes, mixed by one multiplication to
/// spread their few varying bits, are the hash; no keyed hash needed.
#[derive(Default)]
struct ShaHasher(u64);

impl std::hash::Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 = u64::from_le_bytes(first).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    /// The slice length `Hash` writes first: always 40.
    fn write_usize(&mut self, _: usize) {}
}

type ShaMap<V> = HashMap<Sha, V, std::hash::BuildHasherDefault<ShaHasher>>;

struct Entry<A> {
    artifact: A,
    flags: Flags,
    body_len: usize,
    /// Loaded by SCRIPT LOAD (never evicted), rather than only run by EVAL.
    pinned: bool,
    /// LRU stamp for EVAL-only entries.
    used: u64,
}

/// What INFO reports of an engine's cache, summed over the engines.
#[derive(Clone, Copy, Default)]
pub struct CacheStats {
    pub len: usize,
    pub body_bytes: usize,
    pub evicted: u64,
}

pub struct ScriptCache<A> {
    entries: ShaMap<Entry<A>>,
    clock: u64,
    eval_only: usize,
    pub evicted: u64,
    body_bytes: usize,
}

impl<A> Default for ScriptCache<A> {
    fn default() -> Self {
        ScriptCache {
            entries: ShaMap::default(),
            clock: 0,
            eval_only: 0,
            evicted: 0,
            body_bytes: 0,
        }
    }
}

impl<A> ScriptCache<A> {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, sha: &Sha) -> bool {
        self.entries.contains_key(sha)
    }

    /// Bytes of the cached bodies (INFO's `used_memory_scripts_eval` counterpart).
    pub fn body_bytes(&self) -> usize {
        self.body_bytes
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            len: self.len(),
            body_bytes: self.body_bytes,
            evicted: self.evicted,
        }
    }

    /// The artifact for `sha`, refreshing its LRU stamp.
    pub fn get(&mut self, sha: &Sha) -> Option<&A> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(sha).map(|e| {
            e.used = clock;
            &e.artifact
        })
    }

    /// The flags a cached script was loaded with.
    pub fn flags(&self, sha: &Sha) -> Option<Flags> {
        self.entries.get(sha).map(|e| e.flags)
    }

    /// Whether `sha` is cached already (an engine's `load` then has nothing to compile); a SCRIPT
    /// LOAD (`pinned`) of a cached script pins it.
    pub fn loaded(&mut self, sha: &Sha, pinned: bool) -> bool {
        if pinned {
            self.pin(sha)
        } else {
            self.contains(sha)
        }
    }

    /// The start of `engine`'s `Engine::load` of `body`: `None` when `sha` is cached already (see
    /// `loaded`), else the flags of its shebang to compile it with, or the error reply for a bad
    /// shebang.
    pub fn to_compile(
        &mut self,
        engine: EngineId,
        sha: &Sha,
        body: &[u8],
        pinned: bool,
    ) -> Result<Option<Flags>, String> {
        if self.loaded(sha, pinned) {
            return Ok(None);
        }
        shebang_flags(engine, body)
            .map(Some)
            .map_err(|e| format!("ERR {e}"))
    }

    /// Marks a cached script as loaded by SCRIPT LOAD; false if it is not cached.
    pub fn pin(&mut self, sha: &Sha) -> bool {
        match self.entries.get_mut(sha) {
            Some(e) => {
                if !e.pinned {
                    e.pinned = true;
                    self.eval_only -= 1;
                }
                true
            }
            None => false,
        }
    }

    /// Adds a compiled script. Returns the artifacts evicted to make room (the engine frees them).
    pub fn insert(
        &mut self,
        sha: Sha,
        artifact: A,
        flags: Flags,
        body_len: usize,
        pinned: bool,
    ) -> Vec<A> {
        let mut evicted = Vec::new();
        if !pinned {
            while self.eval_only >= EVAL_CACHE_MAX {
                let oldest = self
                    .entries
                    .iter()
                    .filter(|(_, e)| !e.pinned)
                    .min_by_key(|(_, e)| e.used)
                    .map(|(k, _)| *k);
                match oldest.and_then(|k| self.remove(&k)) {
                    Some(a) => {
                        self.evicted += 1;
                        evicted.push(a);
                    }
                    None => break,
                }
            }
            self.eval_only += 1;
        }
        self.clock += 1;
        self.body_bytes += body_len;
        let old = self.entries.insert(
            sha,
            Entry {
                artifact,
                flags,
                body_len,
                pinned,
                used: self.clock,
            },
        );
        debug_assert!(old.is_none(), "a script is compiled once");
        evicted
    }

    fn remove(&mut self, sha: &Sha) -> Option<A> {
        let e = self.entries.remove(sha)?;
        if !e.pinned {
            self.eval_only -= 1;
        }
        self.body_bytes -= e.body_len;
        Some(e.artifact)
    }

    /// Every cached artifact, for an engine that rebuilds its VM and recompiles in place.
    pub fn artifacts_mut(&mut self) -> impl Iterator<Item = &mut A> {
        self.entries.values_mut().map(|e| &mut e.artifact)
    }

    /// Empties the cache, handing every artifact back to the engine.
    pub fn drain(&mut self) -> Vec<A> {
        self.eval_only = 0;
        self.body_bytes = 0;
        self.entries.drain().map(|(_, e)| e.artifact).collect()
    }
}

/// The `Engine` methods every engine answers the same way, expanded inside its `impl Engine`: its
/// `id`, and from its `ScriptCache` (its field `cache`) a script's flags and the cache's stats.
macro_rules! engine_methods {
    ($id:ident) => {
        fn id(&self) -> $crate::script::EngineId {
            $crate::script::EngineId::$id
        }

        fn flags(&self, sha: &$crate::script::cache::Sha) -> Option<$crate::script::Flags> {
            self.cache.flags(sha)
        }

        fn cache_stats(&self) -> $crate::script::cache::CacheStats {
            self.cache.stats()
        }
    };
}
pub(crate) use engine_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_only_scripts_are_bounded_and_loaded_ones_kept() {
        let mut c: ScriptCache<u32> = ScriptCache::default();
        let pinned = sha1_hex(b"pinned");
        assert!(c.insert(pinned, 0, Flags::default(), 6, true).is_empty());
        let first = sha1_hex(b"0");
        for i in 0..EVAL_CACHE_MAX as u32 {
            c.insert(
                sha1_hex(i.to_string().as_bytes()),
                i,
                Flags::default(),
                1,
                false,
            );
        }
        assert!(c.get(&first).is_some());
        // One more evicts the least recently used: "1" (since "0" was just used).
        let gone = c.insert(sha1_hex(b"new"), 9999, Flags::default(), 3, false);
        assert_eq!(gone, vec![1]);
        assert_eq!(c.evicted, 1);
        assert!(c.contains(&pinned) && c.contains(&first));
        assert_eq!(c.len(), EVAL_CACHE_MAX + 1);
    }

    #[test]
    fn sha_parsing_and_digest() {
        assert_eq!(
            &sha1_hex(b"return 1"),
            b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
        assert!(parse_sha(b"E0E1F9FABFC9D4800C877A703B823AC0578FF8DB").is_some());
        assert!(parse_sha(b"xyz").is_none());
    }
}
