//! The command table: one `Command` row per command, written beside its handler in its family's
//! file under `cmd/` (`string.rs` has GET, SET, ...). A row holds everything about the command:
//! name, arity (Redis's ±N), flags, key specs (`keyspec.rs`; the key positions follow from them),
//! ACL categories beyond those its flags and group imply, tips, summary, since, complexity,
//! history, syntax and the setting that guards it. That one row drives dispatch and the gate's
//! checks (`gate.rs`), and `COMMAND` (`cmd/command.rs`). Container commands (CONFIG, CLIENT,
//! OBJECT, COMMAND) list their subcommands as rows named `container|sub`. `main` builds the table
//! from `cmd::families()`.

use std::cell::Cell;
use std::collections::HashMap;

use crate::resp::parser::Args;
use crate::server::ctx::{CmdResult, Ctx};
use crate::server::keyspec::{KeySpec, KeySpecs};

pub type Handler = fn(&mut Ctx, Args) -> CmdResult;

/// Finds the keys of a command line when its key specs cannot (Redis's `getkeys_proc`, which
/// COMMAND GETKEYS falls back to): each key's position with the key-spec flags this line gives it
/// (`keyspec::RO | keyspec::ACCESS`, ...), as COMMAND GETKEYSANDFLAGS shows them; empty when the
/// line's key count is invalid. A row whose key specs say `VARIABLE_FLAGS` needs one.
pub type KeyFinder = fn(Args) -> Vec<(usize, u32)>;

// Command flags, with Redis's meanings (server.h's CMD_* block). Shown by COMMAND INFO by these names.
/// May modify the keyspace.
pub const WRITE: u32 = 1 << 0;
/// Only reads data.
pub const READONLY: u32 = 1 << 1;
/// May grow memory: refused when over maxmemory.
pub const DENYOOM: u32 = 1 << 2;
/// Administrative; refused to scripts and shown as @admin @dangerous.
pub const ADMIN: u32 = 1 << 3;
/// Pub/sub related.
pub const PUBSUB: u32 = 1 << 4;
/// Not allowed from scripts.
pub const NOSCRIPT: u32 = 1 << 5;
/// May block the client.
pub const BLOCKING: u32 = 1 << 6;
/// Allowed while the dataset is loading.
pub const LOADING: u32 = 1 << 7;
/// Allowed on a replica with stale data.
pub const STALE: u32 = 1 << 8;
/// O(1) or O(log N), never blocks: shown as @fast.
pub const FAST: u32 = 1 << 9;
/// Allowed before AUTH.
pub const NO_AUTH: u32 = 1 << 10;
/// Not allowed inside MULTI.
pub const NO_MULTI: u32 = 1 << 11;
/// Allowed while a script is busy.
pub const ALLOW_BUSY: u32 = 1 << 12;
/// Its keys are found by parsing arguments, not by (first, last, step) alone.
pub const MOVABLEKEYS: u32 = 1 << 13;
/// Not shown by MONITOR.
pub const SKIP_MONITOR: u32 = 1 << 14;
/// Not logged by SLOWLOG.
pub const SKIP_SLOWLOG: u32 = 1 << 15;
/// May replicate even if read-only (e.g. PUBLISH).
pub const MAY_REPLICATE: u32 = 1 << 16;
/// Not counted in a script's or client's keyspace misses (e.g. EXISTS).
pub const NO_MANDATORY_KEYS: u32 = 1 << 17;
/// Refused while a replica loads its data asynchronously (SAVE, BGSAVE, BGREWRITEAOF); shown only,
/// as there is no replication.
pub const NO_ASYNC_LOADING: u32 = 1 << 18;

// Internal flags: not shown by COMMAND INFO (Redis tests these by handler identity in processCommand).
/// Runs at once inside MULTI instead of being queued (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET).
pub const NO_QUEUE: u32 = 1 << 30;
/// Allowed to a RESP2 client in subscriber mode ((P|S)(UN)SUBSCRIBE, PING, QUIT, RESET).
pub const SUB_OK: u32 = 1 << 29;
/// Runs the transaction's queue (EXEC): its line's flags include the queued commands', and a
/// refusal aborts the transaction.
pub const RUNS_QUEUE: u32 = 1 << 28;
/// Never refused for memory inside MULTI (EXEC, DISCARD, QUIT, RESET: Redis's `processCommand`).
pub const MULTI_OOM_OK: u32 = 1 << 27;
/// Refused with the writes after a disk error though it writes nothing (PING, as Redis).
pub const DISK_ERROR_DENIED: u32 = 1 << 26;
/// Touches its keys even for a CLIENT NO-TOUCH client (TOUCH).
pub const TOUCHES_ANYWAY: u32 = 1 << 25;
/// A script command whose `args[1]` is the script body (EVAL and its forms): its shebang's
/// flags stand for the row's (`script_host::ScriptCommand`).
pub const SCRIPT_BODY: u32 = 1 << 24;
/// A script command whose `args[1]` names a cached script (EVALSHA and its forms).
pub const SCRIPT_SHA: u32 = 1 << 23;
/// A function call (FCALL, FCALL_RO): the function's flags stand for the row's.
pub const FUNCTION_CALL: u32 = 1 << 22;

/// The flags COMMAND INFO shows, in its order (server.c's `addReplyFlagsForCommand`; Redis 7.0
/// hides `may_replicate`).
pub const FLAG_NAMES: &[(u32, &str)] = &[
    (WRITE, "write"),
    (READONLY, "readonly"),
    (DENYOOM, "denyoom"),
    (ADMIN, "admin"),
    (PUBSUB, "pubsub"),
    (NOSCRIPT, "noscript"),
    (BLOCKING, "blocking"),
    (LOADING, "loading"),
    (STALE, "stale"),
    (SKIP_MONITOR, "skip_monitor"),
    (SKIP_SLOWLOG, "skip_slowlog"),
    (FAST, "fast"),
    (NO_AUTH, "no_auth"),
    (NO_MANDATORY_KEYS, "no_mandatory_keys"),
    (NO_ASYNC_LOADING, "no_async_loading"),
    (NO_MULTI, "no_multi"),
    (MOVABLEKEYS, "movablekeys"),
    (ALLOW_BUSY, "allow_busy"),
];

/// ACL categories (acl.c's `ACLCommandCategories`), as bits in the order COMMAND INFO lists them.
/// A row gets `@write`, `@read`, `@admin` and `@dangerous`, `@pubsub`, `@fast` or `@slow` and
/// `@blocking` from its flags and one category from its group (`command::acl_categories`); `acl`
/// adds the others Redis gives it.
pub mod acl {
    pub const KEYSPACE: u32 = 1 << 0;
    pub const READ: u32 = 1 << 1;
    pub const WRITE: u32 = 1 << 2;
    pub const SET: u32 = 1 << 3;
    pub const SORTEDSET: u32 = 1 << 4;
    pub const LIST: u32 = 1 << 5;
    pub const HASH: u32 = 1 << 6;
    pub const STRING: u32 = 1 << 7;
    pub const BITMAP: u32 = 1 << 8;
    pub const HYPERLOGLOG: u32 = 1 << 9;
    pub const GEO: u32 = 1 << 10;
    pub const STREAM: u32 = 1 << 11;
    pub const PUBSUB: u32 = 1 << 12;
    pub const ADMIN: u32 = 1 << 13;
    pub const FAST: u32 = 1 << 14;
    pub const SLOW: u32 = 1 << 15;
    pub const BLOCKING: u32 = 1 << 16;
    pub const DANGEROUS: u32 = 1 << 17;
    pub const CONNECTION: u32 = 1 << 18;
    pub const TRANSACTION: u32 = 1 << 19;
    pub const SCRIPTING: u32 = 1 << 20;

    pub const NAMES: &[(u32, &str)] = &[
        (KEYSPACE, "keyspace"),
        (READ, "read"),
        (WRITE, "write"),
        (SET, "set"),
        (SORTEDSET, "sortedset"),
        (LIST, "list"),
        (HASH, "hash"),
        (STRING, "string"),
        (BITMAP, "bitmap"),
        (HYPERLOGLOG, "hyperloglog"),
        (GEO, "geo"),
        (STREAM, "stream"),
        (PUBSUB, "pubsub"),
        (ADMIN, "admin"),
        (FAST, "fast"),
        (SLOW, "slow"),
        (BLOCKING, "blocking"),
        (DANGEROUS, "dangerous"),
        (CONNECTION, "connection"),
        (TRANSACTION, "transaction"),
        (SCRIPTING, "scripting"),
    ];
}

pub struct Command {
    /// Lowercase full name: `get`, or `config|get` for a subcommand.
    pub name: &'static str,
    /// `None` only for a container that needs a subcommand.
    pub handler: Option<Handler>,
    /// Redis's arity: N means exactly N arguments (name included), -N at least N.
    pub arity: i32,
    pub flags: u32,
    /// The legacy key positions (COMMAND INFO's first, last, step), derived from `key_specs`.
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// Where the keys are and what the command does to them (`key`, `key_range`, `key_num`).
    pub key_specs: KeySpecs,
    /// ACL categories besides those that follow from the flags and the group (`acl::*` bits).
    pub acl: u32,
    /// Command tips for clients and cluster proxies (`nondeterministic_output`,
    /// `request_policy:all_shards`, ...).
    pub tips: &'static [&'static str],
    pub group: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    pub complexity: &'static str,
    /// Arguments after the name in Redis's notation (`key value [NX | XX]`), the source of COMMAND
    /// DOCS's argument tree and of the docs pages' syntax line.
    pub syntax: &'static str,
    pub subcommands: &'static [Command],
    /// Where the keys are, and how this line uses them, when the key specs cannot tell (COMMAND
    /// GETKEYS and GETKEYSANDFLAGS).
    pub key_finder: Option<KeyFinder>,
    /// COMMAND DOCS's `history`: (version, change) pairs.
    pub history: &'static [(&'static str, &'static str)],
    /// The version that added an argument, by its name in COMMAND DOCS (`("get", "6.2.0")`).
    pub arg_since: &'static [(&'static str, &'static str)],
    /// COMMAND DOCS's `deprecated_since` and `replaced_by`, for a deprecated command.
    pub deprecated: Option<(&'static str, &'static str)>,
    /// COMMAND DOCS's `syscmd` doc flag: a command for the system, not for users (DEBUG).
    pub syscmd: bool,
    /// The `enable-*` setting a protected command needs (Redis's CMD_PROTECTED).
    pub guard: Option<&'static Guard>,
}

/// What allows a protected command (DEBUG, MODULE LOAD): the gate refuses it, before it runs or
/// is queued, unless the setting allows the client (`yes`, or `local` from a local connection).
pub struct Guard {
    /// The command's name in the refusal (`DEBUG`).
    pub command: &'static str,
    /// The directive (`enable-debug-command`).
    pub directive: &'static str,
    pub setting: fn(&crate::config::Config) -> &'static str,
}

impl Command {
    pub const fn new(name: &'static str, handler: Handler, arity: i32, flags: u32) -> Command {
        Command {
            name,
            handler: Some(handler),
            arity,
            flags,
            first_key: 0,
            last_key: 0,
            key_step: 0,
            key_specs: KeySpecs::EMPTY,
            acl: 0,
            tips: &[],
            group: "",
            summary: "",
            since: "",
            complexity: "",
            syntax: "",
            subcommands: &[],
            key_finder: None,
            history: &[],
            arg_since: &[],
            deprecated: None,
            syscmd: false,
            guard: None,
        }
    }

    /// A container command (CONFIG, CLIENT, ...) that only dispatches to its subcommands.
    pub const fn container(
        name: &'static str,
        arity: i32,
        subcommands: &'static [Command],
    ) -> Command {
        Command {
            name,
            handler: None,
            arity,
            flags: 0,
            first_key: 0,
            last_key: 0,
            key_step: 0,
            key_specs: KeySpecs::EMPTY,
            acl: 0,
            tips: &[],
            group: "",
            summary: "",
            since: "",
            complexity: "",
            syntax: "",
            subcommands,
            key_finder: None,
            history: &[],
            arg_since: &[],
            deprecated: None,
            syscmd: false,
            guard: None,
        }
    }

    /// One key, at argument `index`, used as `flags` says (`keyspec::RO | keyspec::ACCESS`, ...).
    pub const fn key(self, index: i32, flags: u32) -> Command {
        self.key_spec(KeySpec::range(index, 0, 1, flags))
    }

    /// Every `keystep`-th argument from `index` to `lastkey` past it (negative: counted from the
    /// end, -1 the last argument): MGET is `key_range(1, -1, 1, ...)`, MSET `key_range(1, -1, 2, ...)`.
    pub const fn key_range(self, index: i32, lastkey: i32, keystep: i32, flags: u32) -> Command {
        self.key_spec(KeySpec::range(index, lastkey, keystep, flags))
    }

    /// `numkeys key [key ...]` with numkeys at argument `index`: ZUNION is `key_num(1, ...)`,
    /// EVAL `key_num(2, ...)`.
    pub const fn key_num(self, index: i32, flags: u32) -> Command {
        self.key_spec(KeySpec::keynum(index, 0, 1, 1, flags))
    }

    /// Any other key spec; the legacy positions follow from all the specs.
    pub const fn key_spec(mut self, spec: KeySpec) -> Command {
        self.key_specs = self.key_specs.push(spec);
        let legacy = self.key_specs.legacy();
        self.first_key = legacy.first;
        self.last_key = legacy.last;
        self.key_step = legacy.step;
        self
    }

    /// The last key spec's notes.
    pub const fn key_notes(mut self, notes: &'static str) -> Command {
        self.key_specs = self.key_specs.notes(notes);
        self
    }

    pub const fn acl(mut self, categories: u32) -> Command {
        self.acl |= categories;
        self
    }

    pub const fn tips(mut self, tips: &'static [&'static str]) -> Command {
        self.tips = tips;
        self
    }

    pub const fn history(mut self, history: &'static [(&'static str, &'static str)]) -> Command {
        self.history = history;
        self
    }

    pub const fn arg_since(mut self, since: &'static [(&'static str, &'static str)]) -> Command {
        self.arg_since = since;
        self
    }

    /// Deprecated since `since`, in favour of `replaced_by` (Redis's markdown: `` `GETRANGE` ``).
    pub const fn deprecated(mut self, since: &'static str, replaced_by: &'static str) -> Command {
        self.deprecated = Some((since, replaced_by));
        self
    }

    pub const fn syscmd(mut self) -> Command {
        self.syscmd = true;
        self
    }

    pub const fn guarded(mut self, guard: &'static Guard) -> Command {
        self.guard = Some(guard);
        self
    }

    pub const fn key_finder(mut self, f: KeyFinder) -> Command {
        self.key_finder = Some(f);
        self
    }

    pub const fn group(mut self, group: &'static str) -> Command {
        self.group = group;
        self
    }

    pub const fn subs(mut self, subcommands: &'static [Command]) -> Command {
        self.subcommands = subcommands;
        self
    }

    pub const fn doc(
        mut self,
        summary: &'static str,
        since: &'static str,
        complexity: &'static str,
        syntax: &'static str,
    ) -> Command {
        self.summary = summary;
        self.since = since;
        self.complexity = complexity;
        self.syntax = syntax;
        self
    }

    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// The keys of a command line and how it uses them, as Redis's `getKeysFromCommandWithSpecs`:
    /// by the key specs when their flags are fixed and they fit the line, else by the row's own
    /// finder; none when neither can tell.
    pub fn line_keys(&self, args: Args) -> Vec<(usize, u32)> {
        let variable = self.key_specs.all_flags() & crate::server::keyspec::VARIABLE_FLAGS != 0;
        let by_specs = (!variable)
            .then(|| self.key_specs.find_flagged(args))
            .flatten();
        match (by_specs, self.key_finder) {
            (Some(keys), _) => keys,
            (None, Some(find)) => find(args),
            // Specs that do not fit the line, and no finder (a row whose flags vary has one).
            (None, None) => Vec::new(),
        }
    }

    /// Positions of this command's key arguments in `args`, from (first, last, step).
    pub fn key_positions(&self, argc: usize) -> Vec<usize> {
        if self.first_key <= 0 {
            return Vec::new();
        }
        let last = if self.last_key < 0 {
            argc as i32 + self.last_key
        } else {
            self.last_key
        };
        (self.first_key..=last)
            .step_by(self.key_step.max(1) as usize)
            .filter(|&i| (i as usize) < argc)
            .map(|i| i as usize)
            .collect()
    }
}

/// A command name hashed and compared without regard to ASCII case, so a lookup needs no
/// lowercased copy of the client's argument.
#[repr(transparent)]
pub struct Caseless([u8]);

impl Caseless {
    pub fn new(name: &[u8]) -> &Caseless {
        // SAFETY: `Caseless` is a transparent wrapper of `[u8]`.
        unsafe { &*(name as *const [u8] as *const Caseless) }
    }
}

impl PartialEq for Caseless {
    fn eq(&self, other: &Caseless) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Eq for Caseless {}

impl std::hash::Hash for Caseless {
    /// Eight bytes at a time (short names in one or two overlapping loads, as wyhash reads them,
    /// with no copy) with bit 5 cleared, which folds ASCII letters' case (it also moves digits and
    /// punctuation, harmlessly: equality is what decides), mixed by multiplications.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        const FOLD: u64 = 0xdfdf_dfdf_dfdf_dfdf;
        let b = &self.0;
        let n = b.len();
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let half =
            |i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")));
        let mix = |h: u64, w: u64| {
            (h ^ (w & FOLD))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29)
        };
        let mut h = n as u64;
        if n >= 8 {
            let mut i = 0;
            while i + 8 < n {
                h = mix(h, word(i));
                i += 8;
            }
            h = mix(h, word(n - 8));
        } else if n >= 4 {
            h = mix(h, half(0) | half(n - 4) << 32);
        } else if n > 0 {
            h = mix(
                h,
                u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            );
        }
        state.write_u64(h);
    }
}

/// Passes `Caseless`'s hash through: names are short, and the map is never inserted into after
/// start-up, so a fast unkeyed hash cannot be flooded.
#[derive(Default)]
pub struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, h: u64) {
        self.0 = h;
    }
}

type NameMap = HashMap<&'static Caseless, usize, std::hash::BuildHasherDefault<NameHasher>>;

/// The command table: rows by lowercase full name, each with its own call statistics slot.
pub struct Table {
    pub rows: Vec<&'static Command>,
    by_name: NameMap,
    /// Names recently found, exactly as they were sent: a client (or a script) sends the same few
    /// names over and over, and comparing two words is cheaper than hashing and comparing without
    /// case. 128 sets of two, the more recent first.
    recent: [[Cell<(NameKey, u32)>; 2]; 128],
    pub stats: Vec<CallStats>,
}

/// A name of 1 to 16 bytes as its length and two words read from both ends (overlapping when
/// shorter than 16, as `Caseless`'s hash reads them): two names have equal keys exactly when they
/// have equal bytes.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct NameKey {
    len: usize,
    head: u64,
    tail: u64,
}

impl NameKey {
    fn of(b: &[u8]) -> Option<NameKey> {
        let n = b.len();
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let half =
            |i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")));
        let (head, tail) = match n {
            0 | 17.. => return None,
            8.. => (word(0), word(n - 8)),
            4.. => (half(0), half(n - 4)),
            _ => (
                u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
                0,
            ),
        };
        Some(NameKey { len: n, head, tail })
    }

    fn set(&self) -> usize {
        let mut h = self.head.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.tail ^ self.len as u64;
        h = (h ^ h >> 29).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        (h ^ h >> 32) as usize % 128
    }
}

#[derive(Default, Clone, Copy)]
pub struct CallStats {
    pub calls: u64,
    /// Time spent in the handler, in nanoseconds (INFO shows microseconds).
    pub nsec: u64,
    pub rejected: u64,
    pub failed: u64,
}

impl Table {
    /// The table of every row of `families` (and their subcommands).
    pub fn build(families: &[&'static [Command]]) -> Table {
        let mut t = Table {
            rows: Vec::new(),
            by_name: NameMap::default(),
            recent: std::array::from_fn(|_| {
                std::array::from_fn(|_| Cell::new((NameKey::default(), 0)))
            }),
            stats: Vec::new(),
        };
        for &fam in families {
            for c in fam.iter() {
                t.add(c);
                for s in c.subcommands {
                    t.add(s);
                }
            }
        }
        t
    }

    fn add(&mut self, c: &'static Command) {
        let prev = self
            .by_name
            .insert(Caseless::new(c.name.as_bytes()), self.rows.len());
        assert!(prev.is_none(), "command {} defined twice", c.name);
        self.rows.push(c);
        self.stats.push(CallStats::default());
    }

    /// Looks up a command or `container|sub` by name, case-insensitively.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        let Some(key) = NameKey::of(name) else {
            return self.by_name.get(Caseless::new(name)).copied();
        };
        // An empty entry's key has length 0, which no `NameKey` has.
        let [first, second] = &self.recent[key.set()];
        let (seen, idx) = first.get();
        if seen == key {
            return Some(idx as usize);
        }
        let (seen, idx) = second.get();
        if seen == key {
            second.set(first.get());
            first.set((key, idx));
            return Some(idx as usize);
        }
        let found = self.by_name.get(Caseless::new(name)).copied();
        if let Some(idx) = found {
            second.set(first.get());
            first.set((key, idx as u32));
        }
        found
    }

    /// Looks up `sub` of the container at `parent`.
    pub fn find_sub(&self, parent: usize, sub: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 96];
        let pname = self.rows[parent].name.as_bytes();
        let total = pname.len() + 1 + sub.len();
        if total > buf.len() {
            return None;
        }
        buf[..pname.len()].copy_from_slice(pname);
        buf[pname.len()] = b'|';
        buf[pname.len() + 1..total].copy_from_slice(sub);
        self.find(&buf[..total])
    }

    /// Top-level commands (no subcommands), in table order.
    pub fn top_level(&self) -> impl Iterator<Item = &'static Command> + '_ {
        self.rows.iter().copied().filter(|c| !c.name.contains('|'))
    }
}

/// The ACL categories of a row as bits (`super::acl`): those its flags imply (Redis's
/// `setImplicitACLCategories`), its group's, and the others the row names.
pub fn acl_bits(c: &Command) -> u32 {
    let mut cats = c.acl;
    // A container only dispatches: Redis gives it no category of its group (OBJECT is @slow only).
    if c.handler.is_some() {
        cats |= match c.group {
            // A generic command that names the types it works on (SORT: @set @sortedset @list), or
            // that is about the connection (WAIT), is in those instead.
            "generic" if c.acl & (acl::SET | acl::SORTEDSET | acl::LIST | acl::CONNECTION) == 0 => {
                acl::KEYSPACE
            }
            "string" => acl::STRING,
            "bitmap" => acl::BITMAP,
            "geo" => acl::GEO,
            "hyperloglog" => acl::HYPERLOGLOG,
            "connection" => acl::CONNECTION,
            "list" => acl::LIST,
            "hash" => acl::HASH,
            "set" => acl::SET,
            "sorted-set" => acl::SORTEDSET,
            "stream" => acl::STREAM,
            "scripting" => acl::SCRIPTING,
            "transactions" => acl::TRANSACTION,
            _ => 0,
        };
    }
    if c.has(WRITE) {
        cats |= acl::WRITE;
    }
    // Redis leaves read-only scripting commands out of @read.
    if c.has(READONLY) && cats & acl::SCRIPTING == 0 {
        cats |= acl::READ;
    }
    if c.has(ADMIN) {
        cats |= acl::ADMIN | acl::DANGEROUS;
    }
    if c.has(PUBSUB) {
        cats |= acl::PUBSUB;
    }
    if c.has(FAST) {
        cats |= acl::FAST;
    }
    if c.has(BLOCKING) {
        cats |= acl::BLOCKING;
    }
    if cats & acl::FAST == 0 {
        cats |= acl::SLOW;
    }
    cats
}
