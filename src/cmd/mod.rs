//! Commands: the declarative command table and the families that implement it.
//!
//! Every command is one `Command` row, written beside its handler in its family's file (`string.rs`
//! has GET, SET, ...; `keys.rs` DEL, EXPIRE, SCAN, ...; `server.rs` INFO, CONFIG, ...). A row holds
//! everything about the command: name, arity (Redis's ±N), flags, key specs (`keyspec.rs`; the
//! key positions follow from them), ACL categories beyond those its flags and group imply, tips,
//! summary, since, complexity, history and syntax. That one row drives dispatch and the gate's
//! arity check (`server::gate`), `COMMAND`/`COMMAND INFO|DOCS|GETKEYS|LIST|COUNT` (`command.rs`),
//! and later what scripts and MULTI may run. Container commands (CONFIG, CLIENT, OBJECT, COMMAND)
//! list their subcommands as rows named `container|sub`.
//!
//! A handler is `fn(&mut Ctx, Args) -> CmdResult`: it reads its arguments, works on the store, and
//! answers through `ctx.out` (the reply builder) or by returning an error, which the gate replies.

pub mod bitops;
pub mod cluster;
pub mod command;
pub mod connection;
pub mod debug;
pub mod function;
pub mod geo;
pub mod goblin;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod keyspec;
pub mod latency;
pub mod list;
pub mod memory;
pub mod module;
pub mod monitor;
pub mod multi;
pub mod parse;
pub mod persist;
pub mod pubsub;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod set;
pub mod slowlog;
pub mod sort;
pub mod string;
pub mod zset;

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;

use slab::Slab;

pub use crate::resp::parser::Args;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::State;
use crate::store::Db;

/// An error reply a handler returns; the text starts with its code (`ERR ...`, `WRONGTYPE ...`).
#[derive(Debug)]
pub struct CmdError(pub Cow<'static, str>);

impl From<&'static str> for CmdError {
    fn from(s: &'static str) -> Self {
        CmdError(Cow::Borrowed(s))
    }
}

impl From<String> for CmdError {
    fn from(s: String) -> Self {
        CmdError(Cow::Owned(s))
    }
}

pub type CmdResult = Result<(), CmdError>;

/// An `ERR`-coded error from formatted text.
pub fn err(msg: impl std::fmt::Display) -> CmdError {
    CmdError(Cow::Owned(format!("ERR {msg}")))
}

/// What a command runs with: the server state, every client (the caller's reply buffer is `out`),
/// and the caller's selected database.
pub struct Ctx<'a> {
    pub srv: &'a mut State,
    pub clients: &'a mut Slab<Client>,
    /// The calling client's slab key.
    pub id: usize,
    /// The calling client's selected database.
    pub db: usize,
    pub out: &'a mut Reply,
    /// The event loop, lent to commands run from a client's input so a long script can keep
    /// serving others (`server::Io::busy_turn`); `None` for commands run by the server itself
    /// (served blocked clients, a script's own calls).
    pub reactor: Option<&'a mut crate::server::Reactor>,
}

impl Ctx<'_> {
    pub fn db(&mut self) -> &mut Db {
        &mut self.srv.dbs[self.db]
    }

    pub fn client(&mut self) -> &mut Client {
        &mut self.clients[self.id]
    }

    /// The running command, if it changes the dataset, propagates (to the AOF) as `args` instead
    /// of itself: an equivalent that replays the same (SET EX as SET PXAT, INCRBYFLOAT as SET;
    /// Redis's `rewriteClientCommandVector`). See `server::propagate`.
    pub fn propagate_as(&mut self, args: &[&[u8]]) {
        crate::server::propagate::rewrite(self.srv, args);
    }

    /// The running command propagates `args`, run in the selected database, and not itself; call
    /// it once for each op (SPOP's SREMs; Redis's `alsoPropagate` with
    /// `preventCommandPropagation`).
    pub fn propagate(&mut self, args: &[&[u8]]) {
        crate::server::propagate::op(self.srv, self.db, args);
    }

    /// The running command propagates even if it changed nothing (FLUSHALL; Redis's
    /// `forceCommandPropagation`).
    pub fn force_propagation(&mut self) {
        crate::server::propagate::force(self.srv);
    }

    /// Redis's `signalModifiedKey`: every handler calls this once for each key of the selected
    /// database it changed (written, deleted, expiry set or cleared). It fails the WATCHers' next EXEC
    /// and wakes clients blocked on the key.
    pub fn signal_modified(&mut self, key: &[u8]) {
        self.signal_modified_in(self.db, key);
    }

    /// What a store command (SINTERSTORE, ZRANGESTORE, BITOP, SORT ... STORE) does with its result:
    /// `Some(value)` replaces `dst` (without a TTL), notified as `event` of `class`, counting
    /// `changes` in `dirty`; `None` (an empty result) deletes `dst` if it is stored, even expired
    /// (Redis's `dbDelete`), notified as `del`.
    pub fn store_result(
        &mut self,
        dst: &[u8],
        value: Option<crate::store::Value>,
        class: u32,
        event: &str,
        changes: u64,
    ) {
        let db = &mut self.srv.dbs[self.db];
        match value {
            Some(v) => {
                db.set(dst, v, Some(crate::store::NO_EXPIRE));
                self.signal_modified(dst);
                self.notify(class, event, dst);
                self.srv.dirty += changes;
            }
            None => {
                if db.remove(dst).is_some() {
                    self.signal_modified(dst);
                    self.notify(crate::server::notify::GENERIC, "del", dst);
                    self.srv.dirty += 1;
                }
            }
        }
    }

    /// `signal_modified` for a key of another database (MOVE, COPY ... DB, SWAPDB).
    pub fn signal_modified_in(&mut self, db: usize, key: &[u8]) {
        if self.srv.key_events.is_empty() {
            return;
        }
        let present = self.srv.dbs[db].dict.find(key).is_some();
        for &c in self.srv.key_events.modified(db, key) {
            if let Some(client) = self.clients.get_mut(c) {
                multi::touch(client, db, key, present);
            }
        }
    }

    /// Database `db` is about to be emptied (FLUSHDB, FLUSHALL: call before clearing it). Watchers of
    /// keys that exist in it fail their EXEC, as Redis's `touchAllWatchedKeysInDb`; keys with blocked
    /// clients are queued to be served.
    pub fn signal_flushed(&mut self, db: usize) {
        if self.srv.key_events.is_empty() {
            return;
        }
        multi::touch_all_watched(self, db, None);
        self.signal_blocked_in(db);
    }

    /// Databases `a` and `b` traded contents (SWAPDB; before or after the swap, it is symmetric): a
    /// watched key of either fails its watchers' EXEC if it exists in either database.
    pub fn signal_swapped(&mut self, a: usize, b: usize) {
        if self.srv.key_events.is_empty() {
            return;
        }
        multi::touch_all_watched(self, a, Some(b));
        multi::touch_all_watched(self, b, Some(a));
        self.signal_blocked_in(a);
        self.signal_blocked_in(b);
    }

    /// Queues every key of `db` that blocked clients wait on.
    fn signal_blocked_in(&mut self, db: usize) {
        let keys: Vec<Box<[u8]>> = self
            .srv
            .key_events
            .waiting
            .iter()
            .filter(|((d, _), w)| *d == db && !w.blocked.is_empty())
            .map(|((_, k), _)| k.clone())
            .collect();
        for k in keys {
            self.srv.key_events.modified(db, &k);
        }
    }
}

pub type Handler = fn(&mut Ctx, Args) -> CmdResult;

/// Finds the key positions of a command line when its key specs cannot (Redis's `getkeys_proc`,
/// which COMMAND GETKEYS falls back to); empty when the line's key count is invalid.
pub type KeyFinder = fn(Args) -> Vec<usize>;

pub use keyspec::{KeySpec, KeySpecs};

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
    /// Where the keys are on a line the key specs do not fit (COMMAND GETKEYS).
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

/// Every command family, in the order COMMAND lists them.
fn families() -> &'static [&'static [Command]] {
    &[
        string::COMMANDS,
        bitops::COMMANDS,
        hash::COMMANDS,
        set::COMMANDS,
        keys::COMMANDS,
        sort::COMMANDS,
        list::COMMANDS,
        connection::COMMANDS,
        server::COMMANDS,
        debug::COMMANDS,
        memory::COMMANDS,
        latency::COMMANDS,
        module::COMMANDS,
        cluster::COMMANDS,
        slowlog::COMMANDS,
        replication::COMMANDS,
        monitor::COMMANDS,
        persist::COMMANDS,
        command::COMMANDS,
        zset::COMMANDS,
        geo::COMMANDS,
        hyperloglog::COMMANDS,
        multi::COMMANDS,
        function::COMMANDS,
        pubsub::COMMANDS,
        scripting::LUA_COMMANDS,
        scripting::LUAU_COMMANDS,
        scripting::QUICKJS_COMMANDS,
        scripting::WREN_COMMANDS,
        scripting::UPYTHON_COMMANDS,
        scripting::TCL_COMMANDS,
        goblin::COMMANDS,
    ]
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
    pub fn build() -> Table {
        let mut t = Table {
            rows: Vec::new(),
            by_name: NameMap::default(),
            recent: std::array::from_fn(|_| {
                std::array::from_fn(|_| Cell::new((NameKey::default(), 0)))
            }),
            stats: Vec::new(),
        };
        for &fam in families() {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in any case finds its row, first from the map and then from `recent`; names
    /// that share a slot or differ in one byte never find each other's row.
    #[test]
    fn find_by_any_case_and_through_recent_names() {
        let t = Table::build();
        for _ in 0..2 {
            for (idx, c) in t.rows.iter().enumerate() {
                let lower = c.name.as_bytes().to_vec();
                let upper = lower.to_ascii_uppercase();
                let mut mixed = lower.clone();
                mixed[0] = mixed[0].to_ascii_uppercase();
                for name in [&lower, &upper, &mixed] {
                    assert_eq!(t.find(name), Some(idx), "{}", c.name);
                }
                let mut other = upper.clone();
                *other.last_mut().unwrap() ^= 0x01;
                let found = t.find(&other);
                assert!(found.is_none() || found != Some(idx), "{}", c.name);
            }
        }
        for unknown in [
            &b""[..],
            b"g",
            b"ge",
            b"gett",
            b"getdelx",
            b"goblin.cadd",
            b"x".repeat(40).as_slice(),
        ] {
            assert_eq!(t.find(unknown), None);
            assert_eq!(t.find(unknown), None);
        }
    }

    #[test]
    fn every_row_is_complete() {
        let t = Table::build();
        for c in &t.rows {
            assert!(c.arity != 0, "{} has no arity", c.name);
            assert!(!c.group.is_empty(), "{} has no group", c.name);
            assert!(!c.summary.is_empty(), "{} has no summary", c.name);
            assert!(!c.since.is_empty(), "{} has no since", c.name);
            // Every row has a handler, or is a container whose subcommands all have one.
            if c.handler.is_none() {
                assert!(
                    !c.subcommands.is_empty(),
                    "{} has neither handler nor subcommands",
                    c.name
                );
            }
            for s in c.subcommands {
                assert!(s.handler.is_some(), "{} has no handler", s.name);
                assert!(
                    s.name.starts_with(&format!("{}|", c.name)),
                    "{} misnamed",
                    s.name
                );
            }
            if c.first_key > 0 {
                assert!(c.key_step > 0, "{} has keys but no step", c.name);
            }
            // Redis derives `movablekeys` from the key specs; the rows declare it, and agree.
            let movable = c.key_specs.legacy().movable;
            assert_eq!(c.has(MOVABLEKEYS), movable, "{}: movablekeys", c.name);
            assert!(
                c.key_finder.is_none() || movable,
                "{} has a key finder but its key specs find every key",
                c.name
            );
            // Every key spec says how the key is used: one of RO, RW, OW, RM (a shard channel's
            // `not_key` spec none).
            for ks in c.key_specs.as_slice() {
                let access = keyspec::RO | keyspec::RW | keyspec::OW | keyspec::RM;
                assert!(
                    (ks.flags & access).count_ones() == 1 || ks.flags & keyspec::NOT_KEY != 0,
                    "{}: a key spec needs exactly one of RO, RW, OW, RM",
                    c.name
                );
            }
        }
        assert!(t.find(b"GeT").is_some());
        assert!(t.find(b"nosuch").is_none());
        let config = t.find(b"config").unwrap();
        assert!(t.find_sub(config, b"get").is_some());
    }

    /// Every handler function in a family file is named by some table row (a handler without a row
    /// would be unreachable), and every row's handler is a function of its own family file.
    #[test]
    fn every_handler_has_a_row() {
        let families = [
            include_str!("string.rs"),
            include_str!("bitops.rs"),
            include_str!("keys.rs"),
            include_str!("list.rs"),
            include_str!("connection.rs"),
            include_str!("server.rs"),
            include_str!("command.rs"),
            include_str!("scripting.rs"),
            include_str!("hash.rs"),
            include_str!("set.rs"),
            include_str!("zset.rs"),
            include_str!("multi.rs"),
            include_str!("function.rs"),
            include_str!("pubsub.rs"),
            include_str!("goblin.rs"),
            include_str!("sort.rs"),
            include_str!("slowlog.rs"),
            include_str!("memory.rs"),
            include_str!("latency.rs"),
            include_str!("module.rs"),
            include_str!("cluster.rs"),
            include_str!("monitor.rs"),
            include_str!("replication.rs"),
            include_str!("hyperloglog.rs"),
            include_str!("geo.rs"),
        ];
        for src in families {
            let handlers: Vec<&str> = src
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("fn "))
                .filter(|l| l.contains(": &mut Ctx, ") && l.ends_with(": Args) -> CmdResult {"))
                .map(|l| l.split('(').next().unwrap())
                .collect();
            assert!(!handlers.is_empty());
            // Rows may be wrapped over lines by rustfmt: compare with the whitespace removed.
            let flat: String = src.split_whitespace().collect();
            // Rows written by a macro for a name prefix (the scripting engines) read
            // `Command::new(concat!($p,"name"),handler,...`.
            let row_handlers: Vec<&str> = flat
                .split("Command::new(\"")
                .skip(1)
                .map(|row| row.split(',').nth(1).unwrap())
                .chain(
                    flat.split("Command::new(concat!(")
                        .skip(1)
                        .map(|row| row.split(',').nth(2).unwrap()),
                )
                .collect();
            for h in &handlers {
                assert!(row_handlers.contains(h), "handler {h} has no command row");
            }
            for h in &row_handlers {
                assert!(
                    handlers.contains(h),
                    "a row uses {h}, which is not a handler of this family"
                );
            }
        }
    }
}
