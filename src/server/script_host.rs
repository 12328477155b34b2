//! The kernel's side of scripting: what it offers a running script, and what it needs of the
//! scripting layer (`script/`), which builds on this module and never the other way round.
//!
//! - `Run`: the host interface of one script execution, all an engine reaches the server through:
//!   `call` (a command through the same table and checks as a client's, with the script rules),
//!   `check_budget` (what every engine's interrupt hook calls: the time budget, SCRIPT KILL, and
//!   past `busy-reply-threshold` a turn of the event loop for the other clients).
//! - `Running`: what the server knows of the script running now (BUSY, SCRIPT/FUNCTION KILL,
//!   INFO), `Flags`: the flags a script declares (Redis's `SCRIPT_FLAG_*`), and
//!   `check_declared`: the checks a script with declared flags passes before it runs.
//! - `Scripts`: the scripting layer as the kernel holds it in `State` (its engines are `script/`'s):
//!   the flags a script command will run under, VM memory, the cron's collection, and the
//!   function libraries persistence saves and loads.

use std::any::Any;
use std::time::Instant;

use crate::resp::parser::Args;
use crate::resp::reply::Reply;
use crate::server::ctx::Ctx;
use crate::server::{gate, State};
use crate::util::clock;

/// A script's SHA1 digest as lowercase hex, the key of every engine's script cache.
pub type Sha = [u8; 40];

/// What kind of script command a row is (its flags say it: `SCRIPT_BODY`, `SCRIPT_SHA`,
/// `FUNCTION_CALL`), for `Scripts::declared_flags`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScriptCommand {
    /// EVAL and its forms: `args[1]` is the body, whose shebang declares the flags.
    Body,
    /// EVALSHA and its forms: `args[1]` names a cached script.
    Sha,
    /// FCALL and FCALL_RO: `args[1]` names a function.
    Function,
}

/// The scripting layer, as the kernel holds it (`State::scripting`). `script::Scripting`
/// implements it; the script commands reach that type through `as_any_mut`.
pub trait Scripts {
    /// The flags a script command will run under, as Redis's `getCommandFlags` judges it before
    /// running: EVAL's from its body's shebang, EVALSHA's from the cached script, FCALL's from
    /// the function. None for a script without a shebang (its calls are judged one by one), or
    /// nothing found. `command` is the row's name (its prefix names the engine).
    fn declared_flags(&self, kind: ScriptCommand, command: &str, args: Args) -> Option<Flags>;
    /// Bytes of VMs allocated through Rust's allocator, which `used_memory` must not count.
    fn vm_in_rust(&self) -> usize;
    /// The cron's part: collects VMs a call left past their mark.
    fn collect_due(&mut self);
    /// The function libraries' source code, in load order (saved ahead of the keys).
    fn library_codes(&self) -> Vec<&[u8]>;
    /// Replaces every function library by those compiled from `codes` (a loaded file's), or
    /// changes nothing and returns the error.
    fn replace_libraries(&mut self, codes: &[Vec<u8>]) -> Result<(), String>;
    /// Drops every function library.
    fn flush_libraries(&mut self);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// Script flags, from a `#!lua flags=...` shebang (Redis 7's `SCRIPT_FLAG_*`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Flags(pub u32);

impl Flags {
    pub const NO_WRITES: u32 = 1 << 0;
    pub const ALLOW_OOM: u32 = 1 << 1;
    pub const ALLOW_STALE: u32 = 1 << 2;
    pub const NO_CLUSTER: u32 = 1 << 3;
    pub const ALLOW_CROSS_SLOT: u32 = 1 << 4;
    /// No shebang: Redis's compatibility mode for pre-7 scripts.
    pub const EVAL_COMPAT: u32 = 1 << 5;

    pub const NAMES: [(u32, &'static str); 5] = [
        (Flags::NO_WRITES, "no-writes"),
        (Flags::ALLOW_OOM, "allow-oom"),
        (Flags::ALLOW_STALE, "allow-stale"),
        (Flags::NO_CLUSTER, "no-cluster"),
        (Flags::ALLOW_CROSS_SLOT, "allow-cross-slot-keys"),
    ];

    pub fn has(self, f: u32) -> bool {
        self.0 & f != 0
    }
}

/// Why a script must stop, as the engine's interrupt hook learns it from `Run::check_budget`.
pub enum Stop {
    /// SCRIPT KILL: raise an uncatchable error with this text.
    Killed(&'static str),
}

pub const KILLED_ERROR: &str = "ERR Script killed by user with SCRIPT KILL...";
/// What other clients get while a script runs past `busy-reply-threshold`.
pub const BUSY_ERROR: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// The same while a function (FCALL) runs.
pub const BUSY_FUNCTION_ERROR: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// What the server knows about the script running now (for BUSY, SCRIPT KILL, INFO).
#[derive(Default)]
pub struct Running {
    pub active: bool,
    /// Past `busy-reply-threshold`: the event loop is served from the script's interrupt hook and
    /// other clients' commands get BUSY (but those flagged ALLOW_BUSY).
    pub busy: bool,
    pub kill_requested: bool,
    /// The script has run a write command: SCRIPT KILL refuses (UNKILLABLE).
    pub wrote: bool,
    /// Slab key of the client running the script (never closed while it runs).
    pub client: usize,
    /// The title of the engine running it ("Luau"), for the log.
    pub engine: Option<&'static str>,
    /// The function running (FCALL), `None` for EVAL: FUNCTION KILL stops only functions and
    /// SCRIPT KILL only scripts; FUNCTION STATS shows it with its command line and start.
    pub function: Option<Box<str>>,
    pub command: Vec<Vec<u8>>,
    pub since: Option<Instant>,
}

impl Running {
    /// A script of `engine` starts for client `client` (EVAL's forms; FCALL also sets `function`,
    /// `command` and `since`).
    pub fn begin(&mut self, client: usize, engine: &'static str) {
        self.active = true;
        self.client = client;
        self.engine = Some(engine);
    }

    /// The script ended: nothing runs. Field by field, so a script's run drops nothing it did not
    /// set (building a new `Running` and dropping the old costs every EVALSHA ~150 instructions).
    pub fn end(&mut self) {
        self.active = false;
        self.busy = false;
        self.kill_requested = false;
        self.wrote = false;
        self.engine = None;
        if self.function.is_some() {
            self.function = None;
        }
        if !self.command.is_empty() {
            self.command = Vec::new();
        }
        self.since = None;
    }

    /// What other clients get while this runs past `busy-reply-threshold`.
    pub fn busy_error(&self) -> &'static str {
        if self.function.is_some() {
            BUSY_FUNCTION_ERROR
        } else {
            BUSY_ERROR
        }
    }

    /// SCRIPT KILL (`function` false) or FUNCTION KILL, sent as `how` (`LUAU.SCRIPT KILL`):
    /// Redis's `scriptKill`, errors included.
    pub fn kill(&mut self, function: bool, how: &str) -> Result<(), &'static str> {
        if !self.active {
            return Err("NOTBUSY No scripts in execution right now.");
        }
        if self.wrote {
            return Err("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.");
        }
        if self.function.is_some() != function {
            return Err(self.busy_error());
        }
        self.kill_requested = true;
        let engine = self.engine.unwrap_or("Lua");
        crate::warning!("{engine} script killed by user with {how}.");
        Ok(())
    }
}

/// The checks a script that declared its flags (not in EVAL compatibility mode) or a function
/// passes before it runs (Redis's `scriptPrepareForRun`): one that may write is refused where
/// writes are (MISCONF; `*_RO` commands), and when memory was over `maxmemory` as its command
/// began, unless it may not write or allows OOM.
pub fn check_declared(srv: &State, flags: Flags, ro: bool) -> Result<(), String> {
    if flags.has(Flags::EVAL_COMPAT) {
        return Ok(());
    }
    if !flags.has(Flags::NO_WRITES) {
        if let Some(e) = crate::persist::writes_denied(&srv.config, &srv.persist) {
            return Err(e);
        }
        if ro {
            return Err("ERR Can not execute a script with write flag using *_ro command.".into());
        }
    }
    if srv.config.maxmemory > 0
        && srv.eviction.oom_at_start
        && !flags.has(Flags::ALLOW_OOM | Flags::NO_WRITES)
    {
        return Err("OOM allowed memory has exceeded 'maxmemory'".into());
    }
    Ok(())
}

/// The run context of one script execution.
pub struct Run<'r, 'c> {
    ctx: &'r mut Ctx<'c>,
    pub sha: Sha,
    pub flags: Flags,
    /// EVAL_RO / EVALSHA_RO, or a `no-writes` script.
    pub read_only: bool,
    /// The protocol scripts see replies in (`redis.setresp`).
    pub resp: u8,
    /// `clock::ticks()` when the script's command began (no clock read of its own).
    started: u64,
    /// Buffers for `call`, borrowed from the server for the run so no call allocates.
    scratch: Option<Box<Scratch>>,
    /// The caller's `deny_blocking` before the run (set already inside EXEC).
    deny_before: bool,
    /// The caller's database: a SELECT in the script lasts until the script ends (inside EXEC, the
    /// next queued command runs where the transaction was).
    db_before: usize,
}

/// The buffers a run's `call`s reuse: the command's arguments and its reply.
#[derive(Default)]
pub struct Scratch {
    reply: Reply,
    arg_buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl<'r, 'c> Run<'r, 'c> {
    pub fn new(ctx: &'r mut Ctx<'c>, sha: Sha, flags: Flags, ro_command: bool) -> Self {
        // Boxed, so lending it costs a pointer's move (a script within a script does not exist).
        let scratch = Some(ctx.srv.script_scratch.take().unwrap_or_default());
        // A script never blocks: BLPOP and friends answer at once, as if timed out.
        let deny_before = std::mem::replace(&mut ctx.clients[ctx.id].deny_blocking, true);
        let db_before = ctx.db;
        Run {
            read_only: ro_command || flags.has(Flags::NO_WRITES),
            ctx,
            sha,
            flags,
            resp: 2,
            started: clock::call_start(),
            scratch,
            deny_before,
            db_before,
        }
    }

    /// The sha as text, for error messages.
    pub fn sha_str(&self) -> &str {
        std::str::from_utf8(&self.sha).expect("hex digits")
    }

    /// What error messages call the script: the function's name (FCALL), else the sha.
    pub fn script_name(&self) -> &str {
        self.function().unwrap_or_else(|| self.sha_str())
    }

    /// The function running (FCALL), `None` for a script.
    pub fn function(&self) -> Option<&str> {
        self.ctx.srv.script_running.function.as_deref()
    }

    /// The reply the script's result (or error) is written to, through a `Sink`.
    pub fn out(&mut self) -> &mut Reply {
        self.ctx.out
    }

    /// `out`, with what error texts call the script, for a result whose conversion may end in an
    /// error: the function's name (FCALL) and the sha (as bytes: only an error needs the text).
    pub fn out_and_names(&mut self) -> (&mut Reply, Option<&str>, &Sha) {
        let function = self.ctx.srv.script_running.function.as_deref();
        (&mut *self.ctx.out, function, &self.sha)
    }

    /// The server's configuration (an engine reads its memory limit from it as a run starts).
    pub fn config(&self) -> &crate::config::Config {
        &self.ctx.srv.config
    }

    /// Whether the server has command `name` (an engine's error for an unknown command says so).
    pub fn has_command(&self, name: &[u8]) -> bool {
        self.ctx.srv.table.find(name).is_some()
    }

    /// Runs a command for the script, through the command table with the script rules, and returns
    /// its reply bytes (in the protocol `self.resp`). `args` yields the command and its arguments.
    pub fn call<'a>(&mut self, args: impl Iterator<Item = &'a [u8]>) -> &[u8] {
        let s = self.scratch.as_deref_mut().expect("lent for the run");
        s.arg_buf.clear();
        s.spans.clear();
        for a in args {
            let start = s.arg_buf.len();
            s.arg_buf.extend_from_slice(a);
            s.spans.push((start, s.arg_buf.len()));
        }
        s.reply.buf.clear();
        s.reply.resp3 = self.resp == 3;
        let args = Args::new(&s.arg_buf, &s.spans);
        let caller_db = self.ctx.clients[self.ctx.id].db;
        let mut sub = Ctx {
            srv: self.ctx.srv,
            clients: self.ctx.clients,
            id: self.ctx.id,
            db: self.ctx.db,
            out: &mut s.reply,
            reactor: None,
        };
        let rules = gate::ScriptRules {
            read_only: self.read_only,
            allow_oom: !self.flags.has(Flags::EVAL_COMPAT) && self.flags.has(Flags::ALLOW_OOM),
        };
        gate::call_from_script(&mut sub, args, &rules);
        // SELECT inside a script changes the script's database, never the caller's.
        self.ctx.db = sub.db;
        self.ctx.clients[self.ctx.id].db = caller_db;
        for code in s.reply.errors.drain(..) {
            *self.ctx.srv.stats.errorstats.entry(code).or_insert(0) += 1;
            self.ctx.srv.stats.total_error_replies += 1;
        }
        &s.reply.buf
    }

    /// Called by every engine's interrupt hook: `Some` when the script must stop. Past
    /// `busy-reply-threshold` it also runs a turn of the event loop, so other clients get BUSY
    /// replies and SCRIPT KILL or SHUTDOWN NOSAVE can arrive (Redis's `scriptInterrupt`).
    pub fn check_budget(&mut self) -> Option<Stop> {
        if !self.ctx.srv.script_running.busy {
            let elapsed =
                (clock::ticks_to_ns(clock::ticks().wrapping_sub(self.started)) / 1_000_000) as i64;
            if elapsed < self.ctx.srv.config.busy_reply_threshold {
                return None;
            }
            self.ctx.srv.script_running.busy = true;
            crate::warning!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You can try killing the script using the SCRIPT KILL command. Script name is: {}.",
                self.script_name()
            );
        }
        if let Some(reactor) = self.ctx.reactor.as_deref_mut() {
            super::Io::new(reactor, self.ctx.srv, self.ctx.clients).busy_turn(self.ctx.id);
        }
        let running = &self.ctx.srv.script_running;
        if running.kill_requested || self.ctx.srv.shutdown.is_some() {
            return Some(Stop::Killed(KILLED_ERROR));
        }
        None
    }
}

impl Drop for Run<'_, '_> {
    fn drop(&mut self) {
        // The buffers go back for the next run (dropped if one call made them huge: a big reply,
        // or big arguments).
        let scratch = self.scratch.take().filter(|s| {
            s.reply.buf.capacity() <= 1 << 20
                && s.arg_buf.capacity() <= 1 << 20
                && s.spans.capacity() <= 1 << 16
        });
        self.ctx.srv.script_scratch = scratch;
        self.ctx.clients[self.ctx.id].deny_blocking = self.deny_before;
        self.ctx.db = self.db_before;
    }
}
