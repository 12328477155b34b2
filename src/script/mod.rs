//! Scripting: the engine-neutral layer all six engines plug into (Lua 5.1 first; Luau, QuickJS,
//! Jim Tcl, MicroPython and Wren each in their own module).
//!
//! What an engine gets from here, so it only maps its own values:
//! - `Engine`: the narrow trait an engine implements (load a body into its cache, run a cached
//!   script, flush, report memory). Each engine owns its non-`Send` VM on the main thread and keeps
//!   its compiled artifacts in a `cache::ScriptCache`.
//! - `Run` (the kernel's, `server::script_host`, re-exported here with `Flags`, `Running` and
//!   `Stop`): the host interface of one script execution, all an engine reaches the server
//!   through. Its `call` sends a command through the same command table and checks as a client's,
//!   with the script rules (noscript commands refused, writes refused in read-only runs), and
//!   hands back the reply bytes, which `resp::walk` turns into engine values through a
//!   `ReplyBuilder`. Its `check_budget` is what every engine's interrupt hook calls.
//! - `Sink`: the one converter from engine values to the client's reply (RESP2 or RESP3), with a
//!   nesting limit and Redis's error and status rules.
//! - `Scripting`: the engines, their caches and the function libraries. The kernel holds it as
//!   `dyn server::script_host::Scripts` (`State::scripting`); the script commands reach it with
//!   `Scripting::of` / `of_mut`.
//!
//! - `function`: the registry of Redis Functions libraries (FUNCTION LOAD, FCALL), which an engine
//!   runs through three more `Engine` methods (`load_library`, `call_function`, `drop_library`).
//!
//! The commands themselves (EVAL, EVALSHA, SCRIPT ..., and their prefixed forms) are in
//! `cmd/scripting.rs`; FUNCTION, FCALL and FCALL_RO in `cmd/function.rs`.

pub mod cache;
pub mod function;
pub mod heap;
pub mod lua;
pub mod luau;
pub mod quickjs;
pub mod redis_api;
pub mod resp;
pub mod sink;
pub mod tcl;
pub mod upython;
pub mod wren;

use crate::resp::parser::Args;
use crate::server::script_host::{ScriptCommand, Scripts};
use crate::server::State;
use cache::Sha;

pub use crate::server::script_host::{
    check_declared, Flags, Run, Running, Stop, BUSY_ERROR, BUSY_FUNCTION_ERROR, KILLED_ERROR,
};
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
        // A plain scan: names are a few bytes, shorter than memchr's set-up.
        let Some(dot) = name.iter().position(|&b| b == b'.') else {
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
}

impl Scripting {
    /// The server's scripting layer (the kernel holds it as `dyn Scripts`).
    #[inline]
    pub fn of(srv: &State) -> &Scripting {
        srv.scripting
            .as_any()
            .downcast_ref()
            .expect("the server's scripts are script::Scripting")
    }

    #[inline]
    pub fn of_mut(srv: &mut State) -> &mut Scripting {
        srv.scripting
            .as_any_mut()
            .downcast_mut()
            .expect("the server's scripts are script::Scripting")
    }
}

impl Scripts for Scripting {
    fn declared_flags(&self, kind: ScriptCommand, command: &str, args: Args) -> Option<Flags> {
        let engine = EngineId::of_command(command.as_bytes());
        let flags = match kind {
            ScriptCommand::Body => shebang_flags(engine, &args[1]).ok()?,
            ScriptCommand::Sha => self.engine(engine)?.flags(&cache::parse_sha(&args[1])?)?,
            ScriptCommand::Function => self.find_function(&args[1])?.flags,
        };
        (!flags.has(Flags::EVAL_COMPAT)).then_some(flags)
    }

    fn vm_in_rust(&self) -> usize {
        Scripting::vm_in_rust(self)
    }

    fn collect_due(&mut self) {
        Scripting::collect_due(self)
    }

    fn library_codes(&self) -> Vec<&[u8]> {
        self.functions.iter().map(|lib| &lib.code[..]).collect()
    }

    fn replace_libraries(&mut self, codes: &[Vec<u8>]) -> Result<(), String> {
        let libraries = self.compile_libraries(codes)?;
        self.swap_libraries(libraries);
        Ok(())
    }

    fn flush_libraries(&mut self) {
        Scripting::flush_libraries(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
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

/// The trait each engine implements. `load` compiles into the engine's own cache; `run` executes a
/// cached script, writing its result (or error) to `run.out()` through a `Sink`.
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
    /// (same conversions, hook, memory limit), writing its reply to `run.out()`; error texts
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
