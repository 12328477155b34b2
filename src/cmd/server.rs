//! Server commands: INFO, CONFIG, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, TIME, SHUTDOWN (DEBUG is in
//! `debug.rs`).

use crate::script::Scripting;
use std::fmt::Write as _;

use super::parse::{is, text};
use super::{
    acl, err, Args, CmdResult, Command, Ctx, ADMIN, ALLOW_BUSY, FAST, LOADING, NOSCRIPT, NO_MULTI,
    READONLY, STALE, WRITE,
};
use crate::config::{self, REDIS_VERSION};
use crate::resp::reply::{DB_INDEX, SYNTAX};
use crate::server::acl::Denied;
use crate::server::Shutdown;
use crate::util::clock;
use crate::{notice, warning};

const GROUP: &str = "server";

/// DBSIZE
///
/// # Format
/// `DBSIZE` — the number of keys in the selected database.
fn dbsize(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let n = ctx.db().len();
    ctx.out.int(n as i64);
    Ok(())
}

/// Whether a flush frees its keys on the background thread: ASYNC, or no option and
/// `lazyfree-lazy-user-flush yes` (Redis's `getFlushCommandFlags`).
fn flush_async(ctx: &Ctx, args: Args) -> Result<bool, crate::server::ctx::CmdError> {
    match args.len() {
        1 => Ok(ctx.srv.config.lazyfree_lazy_user_flush),
        2 if is(&args[1], "async") => Ok(true),
        2 if is(&args[1], "sync") => Ok(false),
        _ => Err(SYNTAX.into()),
    }
}

fn flush(db: &mut crate::store::Db, lazy: bool) -> usize {
    if lazy {
        crate::server::lazyfree::flush_db(db)
    } else {
        db.clear()
    }
}

/// FLUSHDB [ASYNC | SYNC]
///
/// # Format
/// `FLUSHDB [ASYNC|SYNC]` — `+OK`; the selected database is emptied.
fn flushdb(ctx: &mut Ctx, args: Args) -> CmdResult {
    let lazy = flush_async(ctx, args)?;
    ctx.signal_flushed(ctx.db);
    let n = flush(ctx.db(), lazy);
    ctx.srv.dirty += n as u64;
    // Replayed even on an empty database, as Redis's `forceCommandPropagation`.
    ctx.force_propagation();
    ctx.out.ok();
    Ok(())
}

/// FLUSHALL [ASYNC | SYNC]
///
/// # Format
/// `FLUSHALL [ASYNC|SYNC]` — `+OK`; every database is emptied.
fn flushall(ctx: &mut Ctx, args: Args) -> CmdResult {
    let lazy = flush_async(ctx, args)?;
    ctx.signal_flushed_all();
    let n: usize = ctx.srv.dbs.iter_mut().map(|d| flush(d, lazy)).sum();
    ctx.srv.dirty += n as u64;
    // As Redis's `flushAllDataAndResetRDB`: a running BGSAVE is stopped and, with save points,
    // the (now empty) snapshot is written at once so a restart does not bring the data back.
    crate::persist::kill_child(&mut ctx.srv.persistence());
    if !crate::persist::save_rules(&ctx.srv.config).is_empty() {
        let _ = crate::persist::save(&mut ctx.srv.persistence());
    }
    // Propagated even when there was nothing to delete (Redis's `forceCommandPropagation`),
    // without counting a change of its own.
    ctx.force_propagation();
    ctx.out.ok();
    Ok(())
}

/// SWAPDB index1 index2
///
/// # Format
/// `SWAPDB index1 index2` — `+OK`; the two databases trade contents.
fn swapdb(ctx: &mut Ctx, args: Args) -> CmdResult {
    let a = crate::util::parse_i64(&args[1]).ok_or_else(|| err("invalid first DB index"))?;
    let b = crate::util::parse_i64(&args[2]).ok_or_else(|| err("invalid second DB index"))?;
    let n = ctx.srv.dbs.len() as i64;
    if a < 0 || a >= n || b < 0 || b >= n {
        return Err(DB_INDEX.into());
    }
    // A database swapped with itself is unchanged: its watchers are not told (as Redis).
    if a != b {
        ctx.srv.dbs.swap(a as usize, b as usize);
        ctx.signal_swapped(a as usize, b as usize);
    }
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// TIME
///
/// # Format
/// `TIME` — `[unix-seconds, microseconds]`.
fn time(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let us = clock::wall_us();
    ctx.out.array(2);
    ctx.out.bulk_int(us / 1_000_000);
    ctx.out.bulk_int(us % 1_000_000);
    Ok(())
}

/// SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]
///
/// # Format
/// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]` — no reply on success: the server exits.
fn shutdown(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (mut save, mut nosave, mut abort, mut force) = (false, false, false, false);
    for a in args.tail(1).iter() {
        if is(a, "nosave") {
            nosave = true;
        } else if is(a, "save") {
            save = true;
        } else if is(a, "force") {
            force = true;
        } else if is(a, "now") {
        } else if is(a, "abort") {
            abort = true;
        } else {
            return Err(SYNTAX.into());
        }
    }
    if (save && nosave) || (abort && args.len() > 2) {
        return Err(SYNTAX.into());
    }
    if abort {
        return Err("ERR No shutdown in progress.".into());
    }
    // Past its time budget a script can only be stopped by SHUTDOWN NOSAVE (it may have written).
    if ctx.srv.script_running.busy && !nosave {
        return Err(crate::script::BUSY_ERROR.into());
    }
    if crate::persist::aof::refuses_shutdown(&ctx.srv.persist, force) {
        return Err("ERR Errors trying to SHUTDOWN. Check logs.".into());
    }
    // As Redis: save when asked to, or when save points are configured and NOSAVE was not given.
    crate::persist::kill_child(&mut ctx.srv.persistence());
    if save || (!nosave && !crate::persist::save_rules(&ctx.srv.config).is_empty()) {
        notice!("Saving the final RDB snapshot before exiting.");
        if crate::persist::save(&mut ctx.srv.persistence()).is_err() {
            warning!("Error trying to save the DB, can't exit.");
            return Err("ERR Errors trying to SHUTDOWN. Check logs.".into());
        }
    }
    ctx.srv.shutdown = Some(Shutdown::Requested);
    Ok(())
}

fn human(bytes: usize) -> String {
    let b = bytes as f64;
    if b < 1024.0 {
        format!("{bytes}B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.2}K", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}M", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2}G", b / 1024.0 / 1024.0 / 1024.0)
    }
}

fn rusage(who: i32) -> (f64, f64) {
    // SAFETY: getrusage fills the struct passed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_stime), t(ru.ru_utime))
}

fn uname() -> String {
    // SAFETY: uname fills the struct passed; its fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        let f = |s: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(s.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        format!("{} {} {}", f(&u.sysname), f(&u.release), f(&u.machine))
    }
}

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "module_list",
    "errorstats",
    "cluster",
    "keyspace",
];

/// INFO [section [section ...]]
///
/// # Format
/// `INFO [section ...]` — `field:value` lines by `# Section`, with Redis's field names: `default`,
/// `all` (adds commandstats), `everything`, or named sections.
fn info(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut wanted: Vec<String> = Vec::new();
    for a in args.tail(1).iter() {
        let s = text(a).to_ascii_lowercase();
        match s.as_str() {
            "default" => wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string())),
            "all" | "everything" => {
                wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
                wanted.push("commandstats".into());
                wanted.push("latencystats".into());
            }
            _ => wanted.push(s),
        }
    }
    if wanted.is_empty() {
        wanted.extend(DEFAULT_SECTIONS.iter().map(|s| s.to_string()));
    }
    let mut out = String::new();
    let order = [
        "server",
        "clients",
        "memory",
        "persistence",
        "stats",
        "replication",
        "cpu",
        "modules",
        "module_list",
        "commandstats",
        "errorstats",
        "latencystats",
        "cluster",
        "keyspace",
    ];
    for section in order {
        if !wanted.iter().any(|w| w == section) {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        info_section(ctx, section, &mut out);
    }
    ctx.out.verbatim(out.as_bytes());
    Ok(())
}

fn info_section(ctx: &mut Ctx, section: &str, o: &mut String) {
    let srv = &*ctx.srv;
    let cfg = &srv.config;
    let uptime = srv.started.elapsed().as_secs();
    macro_rules! f {
        ($($t:tt)*) => {{ let _ = write!(o, $($t)*); o.push_str("\r\n"); }};
    }
    match section {
        "server" => {
            o.push_str("# Server\r\n");
            f!("redis_version:{REDIS_VERSION}");
            f!("redis_git_sha1:00000000");
            f!("redis_git_dirty:0");
            f!("redis_build_id:0");
            f!("redis_mode:standalone");
            f!("goblin_version:{}", env!("CARGO_PKG_VERSION"));
            f!("os:{}", uname());
            f!("arch_bits:{}", usize::BITS);
            f!("monotonic_clock:POSIX clock_gettime");
            f!("multiplexing_api:epoll");
            f!("atomicvar_api:c11-builtin");
            f!("gcc_version:0.0.0");
            f!("process_id:{}", std::process::id());
            f!("process_supervised:no");
            f!("run_id:{}", srv.run_id);
            f!("tcp_port:{}", srv.tcp_port);
            f!("server_time_usec:{}", clock::wall_us());
            f!("uptime_in_seconds:{uptime}");
            f!("uptime_in_days:{}", uptime / 86400);
            f!("hz:{}", cfg.hz);
            f!("configured_hz:{}", cfg.hz);
            f!("lru_clock:{}", clock::lru_now() & 0xFF_FFFF);
            f!(
                "executable:{}",
                std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
            f!(
                "config_file:{}",
                srv.config_file
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
            f!("io_threads_active:0");
        }
        "clients" => {
            o.push_str("# Clients\r\n");
            f!("connected_clients:{}", ctx.clients.len());
            f!("cluster_connections:0");
            f!("maxclients:{}", cfg.maxclients);
            let max_in = ctx
                .clients
                .iter()
                .map(|(_, c)| c.query.len())
                .max()
                .unwrap_or(0);
            let max_out = ctx
                .clients
                .iter()
                .map(|(_, c)| c.out.buf.len())
                .max()
                .unwrap_or(0);
            f!("client_recent_max_input_buffer:{max_in}");
            f!("client_recent_max_output_buffer:{max_out}");
            // A client whose command a CLIENT PAUSE holds is blocked too, as in Redis.
            let paused = ctx.clients.iter().filter(|(_, c)| c.postponed.is_some());
            let blocked = ctx.srv.blocking.blocked_clients + paused.count();
            f!("blocked_clients:{blocked}");
            f!("tracking_clients:{}", ctx.srv.tracking.clients);
            f!(
                "clients_in_timeout_table:{}",
                ctx.srv.blocking.in_timeout_table()
            );
        }
        "memory" => {
            let mem = super::memory::Overhead::of(srv, ctx.clients);
            let vm_total = mem.vms;
            let (used, peak, rss) = (mem.total, mem.peak, mem.rss);
            let (frag, frag_bytes) = mem.fragmentation();
            // SAFETY: sysconf has no preconditions.
            let total =
                unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) * libc::sysconf(libc::_SC_PAGESIZE) }
                    as usize;
            o.push_str("# Memory\r\n");
            f!("used_memory:{used}");
            f!("used_memory_human:{}", human(used));
            f!("used_memory_rss:{rss}");
            f!("used_memory_rss_human:{}", human(rss));
            f!("used_memory_peak:{peak}");
            f!("used_memory_peak_human:{}", human(peak));
            f!("used_memory_peak_perc:{:.2}%", mem.peak_perc());
            f!("used_memory_overhead:{}", mem.overhead_total);
            f!("used_memory_startup:{}", mem.startup);
            f!("used_memory_dataset:{}", mem.dataset());
            f!("used_memory_dataset_perc:{:.2}%", mem.dataset_perc());
            // Without jemalloc, Redis's allocator figures: allocated is used, active and resident
            // the RSS less the scripting VMs (which are not in used_memory, as Redis's Lua VM).
            let resident = mem.allocator_resident();
            let (alloc_frag, alloc_frag_bytes) = mem.allocator_fragmentation();
            let (rss_extra, rss_extra_bytes) = mem.rss_overhead();
            f!("allocator_allocated:{used}");
            f!("allocator_active:{resident}");
            f!("allocator_resident:{resident}");
            f!("total_system_memory:{total}");
            f!("total_system_memory_human:{}", human(total));
            let lua_vm = Scripting::of(srv)
                .engine(crate::script::EngineId::Lua)
                .map_or(0, |l| l.memory());
            let eval_scripts = Scripting::of(srv).cached_body_bytes();
            let functions = Scripting::of(srv).functions.code_bytes();
            let scripts = eval_scripts + functions;
            f!("used_memory_lua:{lua_vm}");
            f!("used_memory_vm_eval:{lua_vm}");
            f!("used_memory_lua_human:{}", human(lua_vm));
            f!("used_memory_scripts_eval:{eval_scripts}");
            f!(
                "number_of_cached_scripts:{}",
                Scripting::of(srv).cached_scripts()
            );
            f!(
                "number_of_functions:{}",
                Scripting::of(srv).functions.function_count()
            );
            f!("number_of_libraries:{}", Scripting::of(srv).functions.len());
            f!(
                "used_memory_vm_functions:{}",
                Scripting::of(srv).functions_vm_memory()
            );
            f!("used_memory_vm_total:{vm_total}");
            f!("used_memory_vm_total_human:{}", human(vm_total));
            for (engine, bytes) in Scripting::of(srv).vm_memory() {
                f!("used_memory_vm_{engine}:{bytes}");
            }
            f!("used_memory_functions:{functions}");
            f!("used_memory_scripts:{scripts}");
            f!("used_memory_scripts_human:{}", human(scripts));
            f!("maxmemory:{}", cfg.maxmemory);
            f!("maxmemory_human:{}", human(cfg.maxmemory as usize));
            f!("maxmemory_policy:{}", cfg.maxmemory_policy);
            f!("allocator_frag_ratio:{alloc_frag:.2}");
            f!("allocator_frag_bytes:{alloc_frag_bytes}");
            f!("allocator_rss_ratio:1.00");
            f!("allocator_rss_bytes:0");
            f!("rss_overhead_ratio:{rss_extra:.2}");
            f!("rss_overhead_bytes:{rss_extra_bytes}");
            f!("mem_fragmentation_ratio:{frag:.2}");
            f!("mem_fragmentation_bytes:{frag_bytes}");
            f!("mem_not_counted_for_evict:{}", mem.aof_buffer);
            f!("mem_replication_backlog:0");
            f!("mem_total_replication_buffers:0");
            f!("mem_clients_slaves:0");
            f!("mem_clients_normal:{}", mem.clients_normal);
            f!("mem_cluster_links:0");
            f!("mem_aof_buffer:{}", mem.aof_buffer);
            f!("mem_allocator:libc");
            f!("active_defrag_running:0");
            f!(
                "lazyfree_pending_objects:{}",
                crate::server::lazyfree::pending()
            );
            f!("lazyfreed_objects:{}", crate::server::lazyfree::freed());
        }
        "persistence" => {
            o.push_str("# Persistence\r\n");
            f!("loading:0");
            f!("async_loading:0");
            f!("current_cow_peak:0");
            f!("current_cow_size:0");
            f!("current_cow_size_age:0");
            f!("current_fork_perc:0.00");
            f!("current_save_keys_processed:0");
            f!("current_save_keys_total:0");
            let p = &srv.persist;
            f!("rdb_changes_since_last_save:{}", srv.dirty);
            f!("rdb_bgsave_in_progress:{}", u8::from(p.child.is_some()));
            f!("rdb_last_save_time:{}", p.lastsave);
            f!(
                "rdb_last_bgsave_status:{}",
                if p.last_bgsave_ok { "ok" } else { "err" }
            );
            f!("rdb_last_bgsave_time_sec:{}", p.last_bgsave_secs);
            f!(
                "rdb_current_bgsave_time_sec:{}",
                p.child
                    .as_ref()
                    .map_or(-1, |c| c.started.elapsed().as_secs() as i64)
            );
            f!("rdb_saves:{}", p.saves);
            f!("rdb_last_cow_size:0");
            f!("rdb_last_load_keys_expired:{}", p.loaded_expired);
            f!("rdb_last_load_keys_loaded:{}", p.loaded_keys);
            crate::persist::aof::info(&srv.persist, o);
        }
        "stats" => {
            let s = &srv.stats;
            let sum = |f: fn(&crate::store::DbStats) -> u64| {
                srv.dbs.iter().map(|d| f(&d.stats)).sum::<u64>()
            };
            o.push_str("# Stats\r\n");
            f!(
                "total_connections_received:{}",
                s.total_connections_received
            );
            f!("total_commands_processed:{}", s.total_commands_processed);
            f!("instantaneous_ops_per_sec:{}", srv.instantaneous_ops());
            f!("total_net_input_bytes:{}", s.total_net_input_bytes);
            f!("total_net_output_bytes:{}", s.total_net_output_bytes);
            f!("rejected_connections:{}", s.rejected_connections);
            f!("sync_full:{}", srv.primary.sync_full);
            f!("sync_partial_ok:{}", srv.primary.sync_partial_ok);
            f!("sync_partial_err:{}", srv.primary.sync_partial_err);
            f!("expired_keys:{}", sum(|d| d.expired_keys));
            f!("expired_stale_perc:{:.2}", s.expired_stale_perc * 100.0);
            f!("expired_time_cap_reached_count:0");
            f!("expire_cycle_cpu_milliseconds:{}", s.expire_cycle_cpu_ms);
            f!("evicted_keys:{}", srv.eviction.evicted_keys);
            f!("evicted_clients:0");
            let (total, current) = srv.eviction.exceeded_ms();
            f!("total_eviction_exceeded_time:{total}");
            f!("current_eviction_exceeded_time:{current}");
            f!("keyspace_hits:{}", sum(|d| d.hits));
            f!("keyspace_misses:{}", sum(|d| d.misses));
            f!("pubsub_channels:{}", srv.pubsub.channels.len());
            f!("pubsub_patterns:{}", srv.pubsub.patterns.len());
            f!("pubsubshard_channels:{}", srv.pubsub.shard.len());
            f!("latest_fork_usec:0");
            f!("total_forks:0");
            f!("tracking_total_keys:{}", srv.tracking.total_keys());
            f!("tracking_total_items:{}", srv.tracking.total_items());
            f!("tracking_total_prefixes:{}", srv.tracking.total_prefixes());
            f!("total_error_replies:{}", s.total_error_replies);
            f!("evicted_scripts:{}", Scripting::of(srv).evicted_scripts());
            // Redis 7.2's, which monitoring tools read where present.
            let denied = |d: Denied| srv.acl.denied[d as usize];
            f!("acl_access_denied_auth:{}", denied(Denied::Auth));
            f!("acl_access_denied_cmd:{}", denied(Denied::Command));
            f!("acl_access_denied_key:{}", denied(Denied::Key));
            f!("acl_access_denied_channel:{}", denied(Denied::Channel));
        }
        "replication" => {
            o.push_str("# Replication\r\n");
            let repl = &srv.repl;
            match &repl.master {
                None => f!("role:master"),
                Some((host, port)) => {
                    f!("role:slave");
                    f!("master_host:{host}");
                    f!("master_port:{port}");
                    f!(
                        "master_link_status:{}",
                        if repl.link_up() { "up" } else { "down" }
                    );
                    let last_io = repl
                        .master_client
                        .and_then(|k| ctx.clients.get(k))
                        .map_or(-1, |c| c.last_interaction.elapsed().as_secs() as i64);
                    f!("master_last_io_seconds_ago:{last_io}");
                    let transfer = repl.transfer_progress();
                    f!("master_sync_in_progress:{}", u8::from(transfer.is_some()));
                    let applied = if repl.history_start.is_some() {
                        repl.offset
                    } else {
                        1
                    };
                    f!(
                        "slave_read_repl_offset:{}",
                        applied + repl.unapplied.len() as i64
                    );
                    f!("slave_repl_offset:{applied}");
                    if let Some((total, read)) = transfer {
                        let perc = if total > 0 {
                            read as f64 / total as f64 * 100.0
                        } else {
                            0.0
                        };
                        f!("master_sync_total_bytes:{total}");
                        f!("master_sync_read_bytes:{read}");
                        f!("master_sync_left_bytes:{}", total as i64 - read as i64);
                        f!("master_sync_perc:{perc:.2}");
                        f!(
                            "master_sync_last_io_seconds_ago:{}",
                            repl.last_io.elapsed().as_secs()
                        );
                    }
                    if !repl.link_up() {
                        let down = repl.down_since.map_or(-1, |t| t.elapsed().as_secs() as i64);
                        f!("master_link_down_since_seconds:{down}");
                    }
                    f!("slave_priority:{}", srv.config.replica_priority);
                    f!("slave_read_only:{}", u8::from(srv.config.replica_read_only));
                    f!(
                        "replica_announced:{}",
                        u8::from(srv.config.inert.replica_announced)
                    );
                }
            }
            let replicas: Vec<&crate::server::client::Client> = srv
                .primary
                .replicas
                .iter()
                .filter_map(|&k| ctx.clients.get(k))
                .collect();
            f!("connected_slaves:{}", replicas.len());
            if srv.config.min_replicas_to_write > 0 && srv.config.inert.min_replicas_max_lag > 0 {
                let good = crate::server::primary::good_replicas(srv, ctx.clients);
                f!("min_slaves_good_slaves:{good}");
            }
            for (i, c) in replicas.iter().enumerate() {
                let Some(p) = c.peer.as_deref() else { continue };
                use crate::server::primary::PeerState;
                let (state, lag) = match p.state {
                    PeerState::Online => ("online", p.ack_time.elapsed().as_secs()),
                    _ => ("wait_bgsave", 0),
                };
                let ip =
                    p.ip.clone()
                        .unwrap_or_else(|| super::replication::peer_ip(&c.addr));
                f!(
                    "slave{i}:ip={ip},port={},state={state},offset={},lag={lag}",
                    p.listening_port,
                    p.ack_offset
                );
            }
            f!("master_failover_state:no-failover");
            f!("master_replid:{}", srv.replid);
            f!("master_replid2:{}", repl.replid2);
            f!("master_repl_offset:{}", repl.offset);
            f!("second_repl_offset:{}", repl.second_offset);
            // A replica keeps the stream it applied since its sync (a primary without replicas
            // keeps none).
            match repl.history_start {
                _ if srv.primary.backlog.is_some() => {
                    let b = srv.primary.backlog.as_ref().expect("checked");
                    f!("repl_backlog_active:1");
                    f!("repl_backlog_size:{}", srv.config.inert.repl_backlog_size);
                    f!("repl_backlog_first_byte_offset:{}", b.first_byte_offset());
                    f!("repl_backlog_histlen:{}", b.histlen());
                }
                Some(start) if repl.master.is_some() => {
                    let size = srv.config.inert.repl_backlog_size;
                    f!("repl_backlog_active:1");
                    f!("repl_backlog_size:{size}");
                    let histlen = (repl.offset - start).min(size);
                    f!(
                        "repl_backlog_first_byte_offset:{}",
                        repl.offset - histlen + 1
                    );
                    f!("repl_backlog_histlen:{histlen}");
                }
                _ => {
                    f!("repl_backlog_active:0");
                    f!("repl_backlog_size:{}", srv.config.inert.repl_backlog_size);
                    f!("repl_backlog_first_byte_offset:0");
                    f!("repl_backlog_histlen:0");
                }
            }
        }
        "cpu" => {
            let (sys, user) = rusage(libc::RUSAGE_SELF);
            let (csys, cuser) = rusage(libc::RUSAGE_CHILDREN);
            o.push_str("# CPU\r\n");
            f!("used_cpu_sys:{sys:.6}");
            f!("used_cpu_user:{user:.6}");
            f!("used_cpu_sys_children:{csys:.6}");
            f!("used_cpu_user_children:{cuser:.6}");
        }
        "modules" | "module_list" => o.push_str("# Modules\r\n"),
        "commandstats" => {
            o.push_str("# Commandstats\r\n");
            for (i, c) in srv.table.rows.iter().enumerate() {
                let s = srv.table.stats[i];
                if s.calls == 0 && s.rejected == 0 && s.failed == 0 {
                    continue;
                }
                f!(
                    "cmdstat_{}:calls={},usec={},usec_per_call={:.2},rejected_calls={},failed_calls={}",
                    c.name,
                    s.calls,
                    s.nsec / 1000,
                    if s.calls > 0 { s.nsec as f64 / 1000.0 / s.calls as f64 } else { 0.0 },
                    s.rejected,
                    s.failed
                );
            }
        }
        "errorstats" => {
            o.push_str("# Errorstats\r\n");
            let mut codes: Vec<_> = srv.stats.errorstats.iter().collect();
            codes.sort();
            for (code, n) in codes {
                f!("errorstat_{code}:count={n}");
            }
        }
        "latencystats" => crate::server::latency::info(srv, o),
        "cluster" => {
            o.push_str("# Cluster\r\n");
            f!("cluster_enabled:0");
        }
        "keyspace" => {
            o.push_str("# Keyspace\r\n");
            for (i, db) in srv.dbs.iter().enumerate() {
                if !db.is_empty() {
                    f!(
                        "db{i}:keys={},expires={},avg_ttl=0",
                        db.len(),
                        db.expires_len()
                    );
                }
            }
        }
        _ => {}
    }
}

/// CONFIG GET parameter [parameter ...]
///
/// # Format
/// `CONFIG GET parameter [parameter ...]` — a map of every matching directive (glob patterns).
fn config_get(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pat in args.tail(2).iter() {
        for (name, val) in config::get_matching(&mut ctx.srv.config, pat) {
            if !pairs.iter().any(|(n, _)| *n == name) {
                pairs.push((name, val));
            }
        }
    }
    ctx.out.map(pairs.len());
    for (n, v) in pairs {
        ctx.out.bulk_str(&n);
        ctx.out.bulk_str(&v);
    }
    Ok(())
}

/// CONFIG SET parameter value [parameter value ...]
///
/// # Format
/// `CONFIG SET parameter value [parameter value ...]` — `+OK`; all or nothing.
fn config_set(ctx: &mut Ctx, args: Args) -> CmdResult {
    // A parameter without its value (the arity lets an odd count through).
    if !args.len().is_multiple_of(2) {
        return Err(SYNTAX.into());
    }
    // Every sensitive value is redacted, even on a line refused below, as Redis does.
    for i in (2..args.len()).step_by(2) {
        if config::is_sensitive(&args[i]) {
            ctx.redact(i + 1);
        }
    }
    let mut seen: Vec<&'static str> = Vec::new();
    let mut changes = Vec::new();
    for i in (2..args.len()).step_by(2) {
        let name = text(&args[i]).into_owned();
        let Some(d) = config::find(&name) else {
            return Err(err(format!(
                "Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        if seen.contains(&d.name) {
            return Err(err(format!(
                "CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter"
            )));
        }
        seen.push(d.name);
        if !d.mutable {
            return Err(err(format!(
                "CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
            )));
        }
        if d.protected && !ctx.clients[ctx.id].allowed_by(ctx.srv.config.enable_protected_configs) {
            return Err(err(format!(
                "CONFIG SET failed (possibly related to argument '{name}') - can't set protected config"
            )));
        }
        changes.push((name, d, text(&args[i + 1]).into_owned()));
    }
    let mut next = ctx.srv.config.clone();
    let old_dir = std::env::current_dir().ok();
    for (name, d, value) in &changes {
        let values: Vec<String> =
            if matches!(d.name, "save" | "bind" | "client-output-buffer-limit") {
                value.split_whitespace().map(String::from).collect()
            } else {
                vec![value.clone()]
            };
        if let Err(msg) = d.set(&mut next, &values) {
            if let Some(dir) = old_dir {
                let _ = std::env::set_current_dir(dir);
            }
            return Err(err(format!(
                "CONFIG SET failed (possibly related to argument '{name}') - {msg}"
            )));
        }
    }
    let old = &ctx.srv.config;
    if next.port != old.port || next.bind != old.bind {
        let (arg, msg) = if next.port != old.port {
            ("port", "Unable to listen on this port. Check server logs.")
        } else {
            ("bind", "Failed to bind to specified addresses.")
        };
        let rebound = match ctx.reactor.as_deref_mut() {
            Some(r) => r.rebind_tcp(&next, old).ok(),
            None => None,
        };
        let Some(port) = rebound else {
            if let Some(dir) = old_dir {
                let _ = std::env::set_current_dir(dir);
            }
            return Err(err(format!(
                "CONFIG SET failed (possibly related to argument '{arg}') - {msg}"
            )));
        };
        ctx.srv.tcp_port = port;
    }
    if next.loglevel != ctx.srv.config.loglevel {
        crate::log::set_level(next.loglevel);
    }
    let aof_was = ctx.srv.config.appendonly;
    let maxmemory_was = ctx.srv.config.maxmemory;
    Scripting::of_mut(ctx.srv).apply_memory_limits(&next);
    // `requirepass` is the default user's password (Redis's `ACLUpdateDefaultUserPassword`).
    if next.requirepass != ctx.srv.config.requirepass {
        let t = &ctx.srv.table;
        ctx.srv
            .acl
            .set_default_password(t, next.requirepass.as_bytes());
    }
    ctx.srv.config = next;
    crate::server::evict::configure_stamps(ctx.srv);
    crate::config::oom::apply(&ctx.srv.config, crate::config::oom::Class::Server);
    if ctx.srv.config.maxmemory != maxmemory_was {
        crate::server::evict::limit_changed(ctx.srv);
    }
    crate::server::notify::configure(ctx.srv.config.notify_keyspace_events);
    crate::store::set_lazy_expire(ctx.srv.config.lazyfree_lazy_expire);
    crate::store::set_lazy_server_del(ctx.srv.config.lazyfree_lazy_server_del);
    // As Redis's `updateAppendonly`: turning AOF on starts a rewrite that writes its first base.
    if ctx.srv.config.appendonly && !aof_was {
        if crate::persist::aof::start(&mut ctx.srv.persistence()).is_err() {
            ctx.srv.config.appendonly = false;
            return Err(err("CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. Check server logs."));
        }
    } else if !ctx.srv.config.appendonly && aof_was {
        crate::persist::aof::stop(&mut ctx.srv.persistence());
    }
    ctx.out.ok();
    Ok(())
}

/// CONFIG RESETSTAT
///
/// # Format
/// `CONFIG RESETSTAT` — `+OK`; INFO's counters, commandstats and errorstats start again from zero.
fn config_resetstat(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let s = &mut ctx.srv.stats;
    *s = crate::server::Stats::default();
    for st in &mut ctx.srv.table.stats {
        *st = Default::default();
    }
    for db in &mut ctx.srv.dbs {
        db.stats = Default::default();
    }
    ctx.srv.latency.reset_histograms();
    crate::server::lazyfree::reset_stats();
    ctx.out.ok();
    Ok(())
}

/// CONFIG REWRITE
///
/// # Format
/// `CONFIG REWRITE` — `+OK`; the config file now holds the running configuration.
fn config_rewrite(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let Some(path) = ctx.srv.config_file.clone() else {
        return Err("ERR The server is running without a config file".into());
    };
    match config::rewrite(&mut ctx.srv.config, &path) {
        Ok(()) => {
            notice!("CONFIG REWRITE executed with success.");
            ctx.out.ok();
            Ok(())
        }
        Err(e) => {
            warning!("CONFIG REWRITE failed: {e}");
            Err(err(format!("Rewriting config file: {e}")))
        }
    }
}

const CONFIG_HELP: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

/// CONFIG HELP
///
/// # Format
/// `CONFIG HELP` — the subcommands.
fn config_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("CONFIG", CONFIG_HELP);
    Ok(())
}

const CONFIG_SUBCOMMANDS: &[Command] = &[
    Command::new(
        "config|get",
        config_get,
        -3,
        ADMIN | NOSCRIPT | LOADING | STALE,
    )
    .history(&[(
        "7.0.0",
        "Added the ability to pass multiple pattern parameters in one call",
    )])
    .group(GROUP)
    .doc(
        "Get the values of configuration parameters",
        "2.0.0",
        "O(N) when N is the number of configuration parameters provided",
        "parameter:(parameter) [parameter:(parameter) ...]",
    ),
    Command::new(
        "config|set",
        config_set,
        -4,
        ADMIN | NOSCRIPT | LOADING | STALE,
    )
    .history(&[(
        "7.0.0",
        "Added the ability to set multiple parameters in one call.",
    )])
    .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
    .group(GROUP)
    .doc(
        "Set configuration parameters to the given values",
        "2.0.0",
        "O(N) when N is the number of configuration parameters provided",
        "parameter value [parameter value ...]",
    ),
    Command::new(
        "config|resetstat",
        config_resetstat,
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
    )
    .group(GROUP)
    .doc("Reset the stats returned by INFO", "2.0.0", "O(1)", ""),
    Command::new(
        "config|rewrite",
        config_rewrite,
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
    )
    .group(GROUP)
    .doc(
        "Rewrite the configuration file with the in memory configuration",
        "2.8.0",
        "O(1)",
        "",
    ),
    Command::new("config|help", config_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "5.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[
    Command::new("dbsize", dbsize, 1, READONLY | FAST).acl(acl::KEYSPACE).group(GROUP)
        .tips(&["request_policy:all_shards", "response_policy:agg_sum"])
        .doc("Return the number of keys in the selected database", "1.0.0", "O(1)", ""),
    Command::new("flushdb", flushdb, -1, WRITE).acl(acl::KEYSPACE | acl::DANGEROUS).group(GROUP)
        .history(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .arg_since(&[("async.async", "4.0.0"), ("sync", "6.2.0")])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .doc("Remove all keys from the current database", "1.0.0", "O(N) where N is the number of keys in the selected database", "[async:(ASYNC | SYNC)]"),
    Command::new("flushall", flushall, -1, WRITE).acl(acl::KEYSPACE | acl::DANGEROUS).group(GROUP)
        .history(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .arg_since(&[("async.async", "4.0.0"), ("sync", "6.2.0")])
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .doc("Remove all keys from all databases", "1.0.0", "O(N) where N is the total number of keys in all databases", "[async:(ASYNC | SYNC)]"),
    Command::new("swapdb", swapdb, 3, WRITE | FAST).acl(acl::KEYSPACE | acl::DANGEROUS).group(GROUP)
        .doc("Swaps two Redis databases", "4.0.0", "O(N) where N is the count of clients watching or blocking on keys from both databases.", "index1:integer index2:integer"),
    Command::new("time", time, 1, LOADING | STALE | FAST).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Return the current server time", "2.6.0", "O(1)", ""),
    Command::new("shutdown", shutdown, -1, ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY).group(GROUP)
        .history(&[("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers.")])
        .arg_since(&[("now", "7.0.0"), ("force", "7.0.0"), ("abort", "7.0.0")])
        .doc("Synchronously save the dataset to disk and then shut down the server", "1.0.0", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)", "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"),
    Command::new("info", info, -1, LOADING | STALE).acl(acl::DANGEROUS).group(GROUP)
        .history(&[("7.0.0", "Added support for taking multiple section arguments.")])
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
        .doc("Get information and statistics about the server", "1.0.0", "O(1)", "[section [section ...]]"),
    Command::container("config", -2, CONFIG_SUBCOMMANDS).group(GROUP)
        .doc("A container for server configuration commands", "2.0.0", "Depends on subcommand.", ""),
];
