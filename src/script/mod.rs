//! Scripting: the engine-neutral layer all six engines plug into (Lua 5.1 first; Luau, QuickJS,
//! Jim Tcl, MicroPython and Wren each in their own module).
//!
//! What an engine gets from here, so it only maps its own values:
//! - `Engine`: the narrow trait an engine implements (load a body into its cache, run a cached
//!   script, flush, report memory). Each engine owns its non-`Send` VM on the main thread and keeps
//!   its compiled artifacts in a `cache::ScriptCache`.
//! - `Run`: the run context of one script execution. Its `call` sends a command through the same
//!   command table and checks as a client's, with the script rules (noscript commands refused,
//!   writes refused in read-only runs), and hands back the reply bytes, which `resp::walk` turns into
//!   engine values through a `ReplyBuilder`. Its `check_budget` is what every engine's interrupt hook
//!   calls.
//! - `Sink`: the one converter from engine values to the client's reply (RESP2 or RESP3), with a
//!   nesting limit and Redis's error and status rules.
//! - `Scripting`: the engines and the per-server scripting state, kept in `server::State`.
//!
//! - `function`: the registry of Redis Functions libraries (FUNCTION LOAD, FCALL), which an engine
//!   runs through three more `Engine` methods (`load_library`, `call_function`, `drop_library`).
//!
//! The commands themselves (EVAL, EVALSHA, SCRIPT ..., and their prefixed forms) are in
//! `cmd/scripting.rs`; FUNCTION, FCALL and FCALL_RO in `cmd/function.rs`.

pub mod cache;
pub mod function;
pub mod lua;
pub mod luau;
pub mod quickjs;
pub mod redis_api;
pub mod resp;
pub mod sink;
pub mod tcl;
pub mod upython;
pub mod wren;

use crate::util::clock;
use std::time::Instant;

use crate::resp::parser::Args;
use crate::resp::reply::Reply;
use crate::server::ctx::Ctx;
use cache::Sha;
use function::{LibId, Registered};
pub use sink::Sink;

/// The engines, each reached through its own command prefix.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EngineId {
    Lua,
    Luau,
    QuickJs,
    Tcl,
    MicroPython,
    Wren,
}

impl EngineId {
    pub const ALL: [EngineId; 6] = [
        EngineId::Lua,
        EngineId::Luau,
        EngineId::QuickJs,
        EngineId::Tcl,
        EngineId::MicroPython,
        EngineId::Wren,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The engine a scripting command belongs to, from its name: `EVAL` is Lua, `LUAU.EVAL` Luau.
    pub fn of_command(name: &[u8]) -> EngineId {
        let Some(dot) = memchr::memchr(b'.', name) else {
            return EngineId::Lua;
        };
        let prefix = &name[..dot];
        EngineId::ALL
            .into_iter()
            .find(|e| prefix.eq_ignore_ascii_case(e.name().as_bytes()))
            .unwrap_or(EngineId::Lua)
    }

    /// The engine's name: its command prefix in lowercase (`luau` for `LUAU.EVAL`), its INFO
    /// fields (`used_memory_vm_luau`) and its memory directive (`luau-memory-limit`).
    pub fn name(self) -> &'static str {
        match self {
            EngineId::Lua => "lua",
            EngineId::Luau => "luau",
            EngineId::QuickJs => "quickjs",
            EngineId::Tcl => "tcl",
            EngineId::MicroPython => "upython",
            EngineId::Wren => "wren",
        }
    }

    /// The engine's name in the server log (`Lua script killed by user ...`).
    pub fn title(self) -> &'static str {
        match self {
            EngineId::Lua => "Lua",
            EngineId::Luau => "Luau",
            EngineId::QuickJs => "QuickJS",
            EngineId::Tcl => "Tcl",
            EngineId::MicroPython => "MicroPython",
            EngineId::Wren => "Wren",
        }
    }

    /// The engine's `<name>-memory-limit` in bytes (0: none).
    pub fn memory_limit(self, config: &crate::config::Config) -> usize {
        let bytes = match self {
            EngineId::Lua => config.lua_memory_limit,
            EngineId::Luau => config.luau_memory_limit,
            EngineId::QuickJs => config.quickjs_memory_limit,
            EngineId::Tcl => config.tcl_memory_limit,
            EngineId::MicroPython => config.upython_memory_limit,
            EngineId::Wren => config.wren_memory_limit,
        };
        bytes as usize
    }

    /// The name a `#!name flags=...` shebang gives the engine (as Redis 7's `#!lua`).
    pub fn shebang(self) -> &'static str {
        match self {
            EngineId::QuickJs => "js",
            EngineId::MicroPython => "python",
            other => other.name(),
        }
    }
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

/// Parses the shebang line of a body for `engine`, as Redis's `evalExtractShebangFlags`: no shebang
/// is compatibility mode; `#!<engine> [flags=a,b]` sets those flags. Errors carry no code prefix.
pub fn shebang_flags(engine: EngineId, body: &[u8]) -> Result<Flags, String> {
    if !body.starts_with(b"#!") {
        return Ok(Flags(Flags::EVAL_COMPAT));
    }
    let Some(line_end) = memchr::memchr(b'\n', body) else {
        return Err("Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..line_end]);
    let mut parts = line.split_ascii_whitespace();
    let Some(first) = parts.next() else {
        return Err("Invalid script shebang".into());
    };
    if first.strip_prefix("#!") != Some(engine.shebang()) {
        return Err(format!("Unexpected engine in script shebang: {first}"));
    }
    let mut flags = 0;
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("Unknown lua shebang option: {part}"));
        };
        for f in list.split(',').filter(|f| !f.is_empty()) {
            match Flags::NAMES.iter().find(|(_, n)| *n == f) {
                Some((bit, _)) => flags |= bit,
                None => return Err(format!("Unexpected flag in script shebang: {f}")),
            }
        }
    }
    Ok(Flags(flags))
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
    /// The engine running it.
    pub engine: Option<EngineId>,
    /// The function running (FCALL), `None` for EVAL: FUNCTION KILL stops only functions and
    /// SCRIPT KILL only scripts; FUNCTION STATS shows it with its command line and start.
    pub function: Option<Box<str>>,
    pub command: Vec<Vec<u8>>,
    pub since: Option<Instant>,
}

impl Running {
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
        let engine = self.engine.map_or("Lua", EngineId::title);
        crate::warning!("{engine} script killed by user with {how}.");
        Ok(())
    }
}

/// The scripting state of the server: one slot per engine, indexed by `EngineId` (an engine is
/// taken out of its slot while it runs, so the engine and the keyspace can be borrowed at once),
/// and what is running.
///
/// # Memory
/// Each VM collects its own garbage as it allocates, paced by its own live size, so a script that
/// grew its VM by hundreds of megabytes can leave them held after it returns: nothing allocates
/// there until the next script of that engine, maybe never. So when an engine is put back after a
/// call (`put`), its VMs' size (the engine's own byte counters: a few dozen instructions) is
/// compared with its mark, `collect_at`; past it, the server's cron (`collect_due`), once the
/// engine has run no call for a cron period, has it collect in full (`Engine::collect`), gives the freed
/// pages back to the system (`alloc::trim_if_freed`), and sets the next mark half the live size
/// above it, at least `COLLECT_GROWTH`: a collection costs about the live size, so its cost per
/// byte a script allocates stays bounded, no call waits for it, and memory returns within two
/// cron periods of the last call.
///
/// VM memory is not `used_memory` (see `State::used_memory`): Luau's VM, which `mlua` allocates
/// through Rust's allocator, is reported to `alloc` (`alloc::set_vm`) so it is kept out of it.
pub struct Scripting {
    engines: Engines,
    pub running: Running,
    /// `Run` buffers, kept between runs.
    scratch: Scratch,
    /// Function libraries (`function.rs`), whichever engine runs them.
    pub functions: function::Libraries,
}

impl Scripting {
    /// Starts every engine this build has.
    pub fn new(config: &crate::config::Config) -> Scripting {
        let mut engines = Engines::default();
        engines[EngineId::Lua.index()] = Some(Box::new(lua::Lua::new(config)));
        engines[EngineId::Luau.index()] = Some(Box::new(luau::Luau::new(config)));
        engines[EngineId::QuickJs.index()] = Some(Box::new(quickjs::QuickJs::new(config)));
        engines[EngineId::Wren.index()] = Some(Box::new(wren::Wren::new(config)));
        engines[EngineId::MicroPython.index()] = Some(Box::new(upython::MicroPython::new(config)));
        engines[EngineId::Tcl.index()] = Some(Box::new(tcl::Tcl::new(config)));
        let mut scripting = Scripting {
            engines,
            running: Running::default(),
            scratch: Scratch::default(),
            functions: function::Libraries::default(),
        };
        // The first `put` and collection set each engine's mark and tell `alloc` what Luau's VM
        // holds.
        for id in EngineId::ALL {
            let engine = scripting.take(id);
            scripting.put(engine);
        }
        scripting.collect_due();
        scripting.collect_due();
        crate::alloc::restart_peak();
        scripting
    }

    pub fn engine(&self, id: EngineId) -> Option<&dyn Engine> {
        self.engines[id.index()].as_deref()
    }

    /// Takes an engine out of its slot for a call (`put` gives it back).
    pub fn take(&mut self, id: EngineId) -> Box<dyn Engine> {
        let engine = self.engines[id.index()]
            .take()
            .unwrap_or_else(|| panic!("the {} engine is not running", id.name()));
        if self.engines.in_rust[id.index()] > 0 {
            // Until `put`, the Rust heap grows with this VM: not data (see `alloc`).
            crate::alloc::set_vm(self.engines.in_rust.iter().sum(), true);
        }
        engine
    }

    /// Puts an engine back after a call (or a load, a flush), collecting its VMs in full if they
    /// grew past their mark (see the type's docs).
    pub fn put(&mut self, engine: Box<dyn Engine>) {
        let slot = engine.id().index();
        let e = &mut self.engines;
        let held = engine.memory() + engine.functions_memory();
        e.used_since_tick[slot] = true;
        if held > e.collect_at[slot] {
            // Collected by `collect_due`, from the cron once the engine is idle: neither the
            // reply of the call that grew the VM nor the next calls wait for it (a full
            // collection costs about the live size; while calls come, the VM's own collector
            // keeps pace).
            e.collect_due[slot] = true;
        } else {
            // A VM that shrank (a flush, a dropped library) gets a lower mark.
            e.collect_at[slot] = e.collect_at[slot].min(held + (held / 2).max(COLLECT_GROWTH));
        }
        // What the run freed (an engine collects by itself near its limit, and rebuilds a VM a
        // stopped run left unusable) goes back to the system.
        crate::alloc::trim_if_freed(TRIM_AFTER);
        e.note_in_rust(slot, &*engine, held);
        e[slot] = Some(engine);
    }

    /// Collects in full the VMs a call left past their mark (see the type's docs) whose engine
    /// ran no call since the last time, and sets their next mark: called by the server's cron, so
    /// memory comes back within two cron periods of the last call.
    pub fn collect_due(&mut self) {
        let e = &mut self.engines;
        for slot in 0..e.slots.len() {
            let idle = !std::mem::take(&mut e.used_since_tick[slot]);
            if !(e.collect_due[slot] && idle) {
                continue;
            }
            e.collect_due[slot] = false;
            let Some(mut engine) = e.slots[slot].take() else {
                continue;
            };
            let held = engine.memory() + engine.functions_memory();
            engine.collect();
            let after = engine.memory() + engine.functions_memory();
            crate::alloc::note_freed(held.saturating_sub(after));
            e.collect_at[slot] = after + (after / 2).max(COLLECT_GROWTH);
            e.note_in_rust(slot, &*engine, after);
            e.slots[slot] = Some(engine);
        }
        crate::alloc::trim_if_freed(TRIM_AFTER);
    }

    /// Gives every engine its memory limit from `config` (after CONFIG SET).
    pub fn apply_memory_limits(&mut self, config: &crate::config::Config) {
        for engine in self.engines.slots.iter_mut().flatten() {
            let bytes = engine.id().memory_limit(config);
            engine.set_memory_limit(bytes);
        }
    }

    fn each(&self) -> impl Iterator<Item = &dyn Engine> {
        self.engines.slots.iter().filter_map(|e| e.as_deref())
    }

    /// Scripts cached, summed over the engines (INFO `number_of_cached_scripts`).
    pub fn cached_scripts(&self) -> usize {
        self.each().map(|e| e.cache_stats().len).sum()
    }

    /// Bytes of the cached script bodies, summed over the engines.
    pub fn cached_body_bytes(&self) -> usize {
        self.each().map(|e| e.cache_stats().body_bytes).sum()
    }

    /// EVAL-only scripts evicted from the engines' caches (INFO `evicted_scripts`).
    pub fn evicted_scripts(&self) -> u64 {
        self.each().map(|e| e.cache_stats().evicted).sum()
    }

    /// Memory of the VMs engines keep for function libraries (INFO `used_memory_vm_functions`).
    pub fn functions_vm_memory(&self) -> usize {
        self.each().map(|e| e.functions_memory()).sum()
    }

    /// Bytes the VMs hold, all engines, functions' VMs included (INFO `used_memory_vm_total`).
    pub fn vm_total(&self) -> usize {
        self.each().map(|e| e.memory() + e.functions_memory()).sum()
    }

    /// Bytes of VMs that allocate through Rust's allocator (`Engine::allocates_in_rust`), which
    /// `alloc::used` counts and `used_memory` must not: as they are now, or as of its last `put`
    /// for an engine taken out to run.
    pub fn vm_in_rust(&self) -> usize {
        // Only such engines have bytes in `in_rust` (a live VM is never empty).
        let e = &self.engines;
        (0..e.slots.len())
            .filter(|&i| e.in_rust[i] > 0)
            .map(|i| match &e.slots[i] {
                Some(engine) => engine.memory() + engine.functions_memory(),
                None => e.in_rust[i],
            })
            .sum()
    }

    /// Memory used by the VMs, by engine name (INFO memory).
    pub fn vm_memory(&self) -> Vec<(&'static str, usize)> {
        self.each().map(|e| (e.id().name(), e.memory())).collect()
    }

    /// The flags a script or function command will run under, as Redis's `getCommandFlags` judges
    /// it before running: EVAL's from its body's shebang, EVALSHA's from the cached script, FCALL's
    /// from the function. None for other commands, a script without a shebang (its calls are
    /// judged one by one), or nothing found.
    pub fn declared_flags(&self, command: &str, args: Args) -> Option<Flags> {
        let base = command.rsplit('.').next().unwrap_or(command);
        let flags = match base {
            "eval" | "eval_ro" => {
                shebang_flags(EngineId::of_command(command.as_bytes()), &args[1]).ok()?
            }
            "evalsha" | "evalsha_ro" => {
                let sha = cache::parse_sha(&args[1])?;
                self.engine(EngineId::of_command(command.as_bytes()))?
                    .flags(&sha)?
            }
            "fcall" | "fcall_ro" => self.find_function(&args[1])?.flags,
            _ => return None,
        };
        (!flags.has(Flags::EVAL_COMPAT)).then_some(flags)
    }
}

/// The engine slots, indexed by `EngineId` (`engines[id.index()]`), and what `Scripting::put`
/// keeps for each.
#[derive(Default)]
struct Engines {
    slots: [Option<Box<dyn Engine>>; 6],
    /// The size of the engine's VMs past which `put` collects them in full.
    collect_at: [usize; 6],
    /// The bytes the engine's VMs hold in the Rust heap (see `Engine::allocates_in_rust`), as of
    /// its last `put`.
    in_rust: [usize; 6],
    /// Past its mark at its last `put`: `collect_due` collects it once the engine is idle.
    collect_due: [bool; 6],
    /// Put back (so, called) since the last `collect_due`.
    used_since_tick: [bool; 6],
}

impl Engines {
    /// Keeps what the engine in `slot`, holding `held` bytes, has in the Rust heap, for `alloc`.
    fn note_in_rust(&mut self, slot: usize, engine: &dyn Engine, held: usize) {
        let in_rust = if engine.allocates_in_rust() { held } else { 0 };
        if in_rust > 0 || self.in_rust[slot] > 0 {
            self.in_rust[slot] = in_rust;
            crate::alloc::set_vm(self.in_rust.iter().sum(), false);
        }
    }
}

impl std::ops::Index<usize> for Engines {
    type Output = Option<Box<dyn Engine>>;
    fn index(&self, i: usize) -> &Self::Output {
        &self.slots[i]
    }
}

impl std::ops::IndexMut<usize> for Engines {
    fn index_mut(&mut self, i: usize) -> &mut Self::Output {
        &mut self.slots[i]
    }
}

/// How much a VM may grow past its live size before `Scripting::put` collects it in full.
const COLLECT_GROWTH: usize = 8 << 20;
/// VMs that freed this much (see `alloc::note_freed`) give the allocator's free pages back to the
/// system.
const TRIM_AFTER: usize = 16 << 20;

/// The checks a script that declared its flags (not in EVAL compatibility mode) or a function
/// passes before it runs (Redis's `scriptPrepareForRun`): one that may write is refused where
/// writes are (MISCONF; `*_RO` commands), and when memory was over `maxmemory` as its command
/// began, unless it may not write or allows OOM.
pub fn check_declared(srv: &crate::server::State, flags: Flags, ro: bool) -> Result<(), String> {
    if flags.has(Flags::EVAL_COMPAT) {
        return Ok(());
    }
    if !flags.has(Flags::NO_WRITES) {
        if let Some(e) = crate::persist::writes_denied(srv) {
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

/// The trait each engine implements. `load` compiles into the engine's own cache; `run` executes a
/// cached script, writing its result (or error) to `run.ctx.out` through a `Sink`.
pub trait Engine {
    fn id(&self) -> EngineId;
    /// Compiles and caches `body` under `sha` unless cached (its shebang flags with it: see
    /// `shebang_flags`); `pinned` for SCRIPT LOAD. On error returns the error reply text.
    fn load(&mut self, sha: &Sha, body: &[u8], pinned: bool) -> Result<(), String>;
    /// The flags of a cached script; `None` if it is not cached.
    fn flags(&self, sha: &Sha) -> Option<Flags>;
    /// Runs a cached script; `false` if `sha` is not cached (NOSCRIPT).
    fn run(&mut self, run: &mut Run, sha: &Sha, keys: Args, argv: Args) -> bool;
    /// SCRIPT FLUSH: drops every cached script (and, where the engine can, resets the VM).
    fn flush(&mut self);
    /// Bytes the VM holds.
    fn memory(&self) -> usize;
    /// Its script cache's size and evictions (`ScriptCache::stats`).
    fn cache_stats(&self) -> cache::CacheStats;

    // Functions (FUNCTION LOAD, FCALL; see `function.rs`).

    /// Runs a library's `code` (its source from the newline ending the `#!<engine> name=...`
    /// line, so line numbers count as the whole source's) in a loading run, where only
    /// registering functions (and logging) is allowed, within `function::LOAD_TIMEOUT_MS`. Keeps
    /// each registered callback under (`lib`, its index) and returns what was registered, in
    /// order (checked with `function::check_registration` and `function::parse_flag`), or the
    /// error text (no `ERR ` prefix).
    fn load_library(&mut self, lib: LibId, code: &[u8]) -> Result<Vec<Registered>, String>;
    /// Runs function `index` of library `lib` with `keys` and `args`, as `run` runs a script
    /// (same conversions, hook, memory limit), writing its reply to `run.ctx.out`; error texts
    /// name the function (`Run::script_name`).
    fn call_function(&mut self, run: &mut Run, lib: LibId, index: usize, keys: Args, args: Args);
    /// Forgets a library's callbacks (FUNCTION DELETE or FLUSH, a replaced or failed library).
    fn drop_library(&mut self, lib: LibId);
    /// Takes a new `<name>-memory-limit` (CONFIG SET) at once, so a library's loading run is held
    /// to it; a script or function run applies the config's value itself.
    fn set_memory_limit(&mut self, bytes: usize);
    /// Bytes held by a VM the engine keeps for its libraries (0 when they live in the EVAL VM,
    /// whose `memory` counts them).
    fn functions_memory(&self) -> usize {
        0
    }
    /// Collects the garbage of every VM the engine has, in full, and drops scratch buffers a big
    /// run left large: `Scripting::put` calls it after a call that grew the VMs past their mark,
    /// so that memory is given back when the call that made it ends.
    fn collect(&mut self);
    /// Whether the VMs allocate through Rust's global allocator (so `alloc::used` counts them):
    /// their bytes are then taken out of `used_memory`, which counts no VM.
    fn allocates_in_rust(&self) -> bool {
        false
    }
}

/// The run context of one script execution.
pub struct Run<'r, 'c> {
    pub ctx: &'r mut Ctx<'c>,
    pub sha: Sha,
    pub flags: Flags,
    /// EVAL_RO / EVALSHA_RO, or a `no-writes` script.
    pub read_only: bool,
    /// The protocol scripts see replies in (`redis.setresp`).
    pub resp: u8,
    /// `clock::ticks()` when the script's command began (no clock read of its own).
    started: u64,
    /// Buffers for `call`, borrowed from `Scripting` for the run so no call allocates.
    scratch: Scratch,
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
        let scratch = std::mem::take(&mut ctx.srv.scripting.scratch);
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
        match &self.ctx.srv.scripting.running.function {
            Some(f) => f,
            None => self.sha_str(),
        }
    }

    /// Runs a command for the script, through the command table with the script rules, and returns
    /// its reply bytes (in the protocol `self.resp`). `args` yields the command and its arguments.
    pub fn call<'a>(&mut self, args: impl Iterator<Item = &'a [u8]>) -> &[u8] {
        let s = &mut self.scratch;
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
        let rules = crate::server::gate::ScriptRules {
            read_only: self.read_only,
            allow_oom: !self.flags.has(Flags::EVAL_COMPAT) && self.flags.has(Flags::ALLOW_OOM),
        };
        crate::server::gate::call_from_script(&mut sub, args, &rules);
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
        if !self.ctx.srv.scripting.running.busy {
            let elapsed =
                (clock::ticks_to_ns(clock::ticks().wrapping_sub(self.started)) / 1_000_000) as i64;
            if elapsed < self.ctx.srv.config.busy_reply_threshold {
                return None;
            }
            self.ctx.srv.scripting.running.busy = true;
            crate::warning!(
                "Slow script detected: still in execution after {elapsed} milliseconds. You can try killing the script using the SCRIPT KILL command. Script name is: {}.",
                self.script_name()
            );
        }
        if let Some(reactor) = self.ctx.reactor.as_deref_mut() {
            crate::server::Io::new(reactor, self.ctx.srv, self.ctx.clients).busy_turn(self.ctx.id);
        }
        let running = &self.ctx.srv.scripting.running;
        if running.kill_requested || self.ctx.srv.shutdown.is_some() {
            return Some(Stop::Killed(KILLED_ERROR));
        }
        None
    }
}

impl Drop for Run<'_, '_> {
    fn drop(&mut self) {
        // The buffers go back for the next run (shrunk if one call made them huge: a big reply,
        // or big arguments).
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.reply.buf.capacity() > 1 << 20
            || scratch.arg_buf.capacity() > 1 << 20
            || scratch.spans.capacity() > 1 << 16
        {
            scratch = Scratch::default();
        }
        self.ctx.srv.scripting.scratch = scratch;
        self.ctx.clients[self.ctx.id].deny_blocking = self.deny_before;
        self.ctx.db = self.db_before;
    }
}
