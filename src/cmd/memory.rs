//! MEMORY (Redis's `memoryCommand` in object.c): USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and
//! HELP; and `Overhead`, the breakdown of used memory that MEMORY STATS, MEMORY DOCTOR and INFO
//! memory report (Redis's `getMemoryOverheadData`).
//!
//! The figures are Goblin Core's own accounting: the bytes allocated for everything but the
//! scripting VMs (`State::used_memory`, which the VMs are kept out of as Redis keeps its Lua VM out
//! of zmalloc's count), the VMs on their own, the resident set from /proc. Redis's come from
//! jemalloc, so the numbers differ between the two servers while their meaning and the replies'
//! shapes do not. As Redis built without jemalloc does, the allocator's own figures are derived:
//! allocated is the used memory, active and resident the resident set less the VMs (Redis takes
//! its Lua VM out), so the VMs show as the process's RSS overhead.

use super::parse::{int, is};
use super::{Args, CmdResult, Command, Ctx, READONLY};
use crate::resp::reply::{Reply, SYNTAX};
use crate::script::Scripting;
use crate::server::State;
use crate::store::Entry;

const GROUP: &str = "server";

/// Where used memory goes, apart from the dataset.
pub struct Overhead {
    /// `used_memory`.
    pub total: usize,
    pub peak: usize,
    /// Used memory once the server had started, before loading data.
    pub startup: usize,
    pub rss: usize,
    /// Query and output buffers and per-client state of every connection.
    pub clients_normal: usize,
    pub clients: usize,
    pub aof_buffer: usize,
    /// The scripting VMs, every engine's, functions' included: not in `total`, in `rss`.
    pub vms: usize,
    /// The scripting engines' caches of EVAL scripts (their bodies).
    pub script_caches: usize,
    /// The function libraries' code.
    pub function_caches: usize,
    /// (database, its key table's bytes, its expiry index's bytes) for each non-empty database.
    pub dbs: Vec<(usize, usize, usize)>,
    pub keys: usize,
    /// Everything above but the dataset.
    pub overhead_total: usize,
}

impl Overhead {
    pub fn of(srv: &State, clients: &slab::Slab<crate::server::client::Client>) -> Overhead {
        let total = srv.used_memory();
        let mut o = Overhead {
            total,
            peak: srv.peak_memory(),
            startup: srv.startup_memory,
            rss: crate::alloc::rss(),
            clients_normal: clients.iter().map(|(_, c)| c.memory()).sum(),
            clients: clients.len(),
            aof_buffer: crate::persist::aof::buffer_bytes(&srv.config, &srv.persist),
            vms: Scripting::of(srv).vm_total(),
            script_caches: Scripting::of(srv).cached_body_bytes(),
            function_caches: Scripting::of(srv).functions.code_bytes(),
            dbs: Vec::new(),
            keys: 0,
            overhead_total: 0,
        };
        for (i, db) in srv.dbs.iter().enumerate() {
            if db.is_empty() {
                continue;
            }
            o.keys += db.len();
            let main = db.dict.table_bytes() + db.len() * std::mem::size_of::<Entry>();
            o.dbs.push((i, main, db.expires_table_bytes()));
        }
        o.overhead_total = o.startup
            + o.clients_normal
            + o.aof_buffer
            + o.script_caches
            + o.function_caches
            + o.dbs.iter().map(|&(_, m, e)| m + e).sum::<usize>();
        o
    }

    /// The dataset: used memory less the overhead.
    pub fn dataset(&self) -> usize {
        self.total.saturating_sub(self.overhead_total)
    }

    /// Used memory grown since start-up (at least 1).
    fn net(&self) -> usize {
        self.total.saturating_sub(self.startup).max(1)
    }

    pub fn dataset_perc(&self) -> f32 {
        self.dataset() as f32 * 100.0 / self.net() as f32
    }

    pub fn peak_perc(&self) -> f32 {
        self.total as f32 * 100.0 / self.peak.max(1) as f32
    }

    pub fn bytes_per_key(&self) -> usize {
        self.net().checked_div(self.keys).unwrap_or(0)
    }

    /// RSS over used memory, and the bytes between them (`mem_fragmentation_ratio`: the VMs
    /// are in it, as Redis's Lua VM is in its).
    pub fn fragmentation(&self) -> (f32, i64) {
        ratio(self.rss, self.total)
    }

    /// The allocator's resident (and active) bytes, as Redis without jemalloc derives them: the
    /// resident set less the scripting VMs.
    pub fn allocator_resident(&self) -> usize {
        self.rss.saturating_sub(self.vms).max(1)
    }

    /// The allocator's resident bytes over used memory (`allocator_frag_ratio`).
    pub fn allocator_fragmentation(&self) -> (f32, i64) {
        ratio(self.allocator_resident(), self.total)
    }

    /// The resident set over the allocator's resident bytes (`rss_overhead_ratio`): the VMs.
    pub fn rss_overhead(&self) -> (f32, i64) {
        ratio(self.rss, self.allocator_resident())
    }
}

/// `a / b` and `a - b`.
fn ratio(a: usize, b: usize) -> (f32, i64) {
    (a as f32 / b.max(1) as f32, a as i64 - b as i64)
}

/// MEMORY USAGE key [SAMPLES count]
///
/// # Format
/// `MEMORY USAGE key [SAMPLES count]` — the bytes the key and its value take, aggregates estimated
/// from `count` of their elements (default 5, 0 for all); nil when the key does not exist.
fn memory_usage(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut samples = 5usize;
    let mut j = 3;
    while j < args.len() {
        if is(&args[j], "samples") && j + 1 < args.len() {
            let n = int(&args[j + 1])?;
            if n < 0 {
                return Err(SYNTAX.into());
            }
            samples = if n == 0 { usize::MAX } else { n as usize };
            j += 2;
        } else {
            return Err(SYNTAX.into());
        }
    }
    // As OBJECT: no access time refreshed.
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(slot) = db.find_live(&args[2]) else {
        ctx.out.null();
        return Ok(());
    };
    let e = db.dict.value_at(slot);
    let usage = args[2].len() + std::mem::size_of::<Entry>() + e.val.memory_usage(samples);
    ctx.out.int(usage as i64);
    Ok(())
}

/// MEMORY STATS
///
/// # Format
/// `MEMORY STATS` — a map of memory figures (an array of name, value pairs in RESP2).
fn memory_stats(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let o = Overhead::of(ctx.srv, ctx.clients);
    let (frag, frag_bytes) = o.fragmentation();
    let out = &mut *ctx.out;
    out.map(27 + o.dbs.len());
    fn int(out: &mut Reply, name: &str, n: i64) {
        out.bulk_str(name);
        out.int(n);
    }
    int(out, "peak.allocated", o.peak as i64);
    int(out, "total.allocated", o.total as i64);
    int(out, "startup.allocated", o.startup as i64);
    int(out, "replication.backlog", 0);
    int(out, "clients.slaves", 0);
    int(out, "clients.normal", o.clients_normal as i64);
    int(out, "cluster.links", 0);
    int(out, "aof.buffer", o.aof_buffer as i64);
    int(out, "lua.caches", o.script_caches as i64);
    int(out, "functions.caches", o.function_caches as i64);
    for &(db, main, expires) in &o.dbs {
        out.bulk_str(&format!("db.{db}"));
        out.map(3);
        int(out, "overhead.hashtable.main", main as i64);
        int(out, "overhead.hashtable.expires", expires as i64);
        int(out, "overhead.hashtable.slot-to-keys", 0);
    }
    int(out, "overhead.total", o.overhead_total as i64);
    int(out, "keys.count", o.keys as i64);
    int(out, "keys.bytes-per-key", o.bytes_per_key() as i64);
    int(out, "dataset.bytes", o.dataset() as i64);
    fn ratio(out: &mut Reply, name: &str, r: f32) {
        out.bulk_str(name);
        out.double(f64::from(r));
    }
    ratio(out, "dataset.percentage", o.dataset_perc());
    ratio(out, "peak.percentage", o.peak_perc());
    let resident = o.allocator_resident() as i64;
    let (alloc_frag, alloc_frag_bytes) = o.allocator_fragmentation();
    let (rss_extra, rss_extra_bytes) = o.rss_overhead();
    int(out, "allocator.allocated", o.total as i64);
    int(out, "allocator.active", resident);
    int(out, "allocator.resident", resident);
    ratio(out, "allocator-fragmentation.ratio", alloc_frag);
    int(out, "allocator-fragmentation.bytes", alloc_frag_bytes);
    ratio(out, "allocator-rss.ratio", 1.0);
    int(out, "allocator-rss.bytes", 0);
    ratio(out, "rss-overhead.ratio", rss_extra);
    int(out, "rss-overhead.bytes", rss_extra_bytes);
    ratio(out, "fragmentation", frag);
    int(out, "fragmentation.bytes", frag_bytes);
    Ok(())
}

/// MEMORY DOCTOR
///
/// # Format
/// `MEMORY DOCTOR` — a report of memory problems found, as text (verbatim in RESP3).
fn memory_doctor(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let o = Overhead::of(ctx.srv, ctx.clients);
    let report = doctor(&o, Scripting::of(ctx.srv).cached_scripts());
    ctx.out.verbatim(report.as_bytes());
    Ok(())
}

/// Redis's `getMemoryDoctorReport`, its texts and thresholds.
fn doctor(o: &Overhead, cached_scripts: usize) -> String {
    const MB: usize = 1024 * 1024;
    if o.total < 5 * MB {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".into();
    }
    let (frag, frag_bytes) = o.fragmentation();
    let (alloc_frag, alloc_frag_bytes) = o.allocator_fragmentation();
    let (rss_extra, rss_extra_bytes) = o.rss_overhead();
    let mut issues: Vec<&str> = Vec::new();
    if o.peak as f32 / o.total as f32 > 1.5 {
        issues.push(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n");
    }
    if frag > 1.4 && frag_bytes > 10 * MB as i64 {
        issues.push(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"libc\".\n\n");
    }
    if alloc_frag > 1.1 && alloc_frag_bytes > 10 * MB as i64 {
        issues.push(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n");
    }
    // The allocator's RSS overhead is always 1 without jemalloc; the rest of the process's is the
    // scripting VMs, as Redis's is its Lua VM.
    if rss_extra > 1.1 && rss_extra_bytes > 10 * MB as i64 {
        issues.push(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n");
    }
    if o.clients > 0 && o.clients_normal / o.clients > 200 * 1024 {
        issues.push(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n");
    }
    if cached_scripts > 1000 {
        issues.push(" * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n");
    }
    if issues.is_empty() {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".into();
    }
    let mut s =
        String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    for i in issues {
        s.push_str(i);
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}

/// MEMORY MALLOC-STATS
///
/// # Format
/// `MEMORY MALLOC-STATS` — the allocator's statistics; the system allocator has none to give.
fn memory_malloc_stats(ctx: &mut Ctx, _args: Args) -> CmdResult {
    // Redis's reply when not built with jemalloc.
    ctx.out
        .bulk_str("Stats not supported for the current allocator");
    Ok(())
}

/// MEMORY PURGE
///
/// # Format
/// `MEMORY PURGE` — `+OK`; free memory the allocator holds goes back to the system.
fn memory_purge(ctx: &mut Ctx, _args: Args) -> CmdResult {
    // SAFETY: malloc_trim only returns free pages of the heap to the system.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
    ctx.out.ok();
    Ok(())
}

const MEMORY_HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

/// MEMORY HELP
///
/// # Format
/// `MEMORY HELP` — the subcommands.
fn memory_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("MEMORY", MEMORY_HELP);
    Ok(())
}

const ALL_SHARDS: &str = "request_policy:all_shards";
/// The tips of the subcommands that report on the server.
const REPORT_TIPS: &[&str] = &[
    "nondeterministic_output",
    ALL_SHARDS,
    "response_policy:special",
];

const MEMORY_SUBCOMMANDS: &[Command] = &[
    Command::new("memory|usage", memory_usage, -3, READONLY)
        .key(2, super::keyspec::RO)
        .group(GROUP)
        .doc(
            "Estimate the memory usage of a key",
            "4.0.0",
            "O(N) where N is the number of samples.",
            "key [SAMPLES count:integer]",
        ),
    Command::new("memory|stats", memory_stats, 2, 0)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc("Show memory usage details", "4.0.0", "O(1)", ""),
    Command::new("memory|doctor", memory_doctor, 2, 0)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc("Outputs memory problems report", "4.0.0", "O(1)", ""),
    Command::new("memory|malloc-stats", memory_malloc_stats, 2, 0)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Show allocator internal stats",
            "4.0.0",
            "Depends on how much memory is allocated, could be slow",
            "",
        ),
    Command::new("memory|purge", memory_purge, 2, 0)
        .tips(&[ALL_SHARDS, "response_policy:all_succeeded"])
        .group(GROUP)
        .doc(
            "Ask the allocator to release memory",
            "4.0.0",
            "Depends on how much memory is allocated, could be slow",
            "",
        ),
    Command::new("memory|help", memory_help, 2, super::LOADING | super::STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "4.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[Command::container("memory", -2, MEMORY_SUBCOMMANDS)
    .group(GROUP)
    .doc(
        "A container for memory diagnostics commands",
        "4.0.0",
        "Depends on subcommand.",
        "",
    )];

#[cfg(test)]
mod tests {
    use super::*;

    fn overhead(total: usize, peak: usize, rss: usize) -> Overhead {
        with_vms(total, peak, rss, 0)
    }

    fn with_vms(total: usize, peak: usize, rss: usize, vms: usize) -> Overhead {
        Overhead {
            total,
            peak,
            startup: 0,
            rss,
            clients_normal: 0,
            clients: 1,
            aof_buffer: 0,
            vms,
            script_caches: 0,
            function_caches: 0,
            dbs: Vec::new(),
            keys: 0,
            overhead_total: 0,
        }
    }

    #[test]
    fn doctor_reports_as_redis() {
        const MB: usize = 1024 * 1024;
        assert!(doctor(&overhead(MB, MB, MB), 0).starts_with("Hi Sam, this instance is empty"));
        assert!(doctor(&overhead(10 * MB, 10 * MB, 10 * MB), 0)
            .starts_with("Hi Sam, I can't find any memory issue"));
        let peak = doctor(&overhead(10 * MB, 20 * MB, 10 * MB), 0);
        assert!(
            peak.contains(" * Peak memory:") && !peak.contains("RSS:"),
            "{peak}"
        );
        assert!(peak.ends_with("I'm here to keep you safe, Sam. I want to help you.\n"));
        let frag = doctor(&overhead(10 * MB, 10 * MB, 30 * MB), 0);
        assert!(frag.contains(" * High total RSS:") && frag.contains("fragmentation"));
        // Big scripting VMs are the process's RSS overhead, not the allocator's fragmentation.
        let vms = doctor(&with_vms(10 * MB, 10 * MB, 40 * MB, 28 * MB), 0);
        assert!(
            vms.contains(" * High total RSS:")
                && vms.contains(" * High process RSS overhead:")
                && !vms.contains(" * High allocator fragmentation:"),
            "{vms}"
        );
        assert!(doctor(&overhead(10 * MB, 10 * MB, 10 * MB), 1001).contains(" * Many scripts:"));
    }
}
