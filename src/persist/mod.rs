//! Persistence: RDB snapshots (`rdb.rs` holds the format, `lzf.rs` its compression and checksum)
//! and the append-only file (`aof.rs`).
//!
//! Persistence sits below the kernel and names nothing above it: the server lends it what it works
//! on as a `Host` (the configuration, this module's bookkeeping, the data set, the changes count,
//! and through `Extras` what a snapshot holds besides the keys), and loading hands what it reads to
//! a `Loader` the server implements (an RDB file or preamble into its keyspace, each AOF command
//! through its gate).
//!
//! Entry points: `save` (SAVE, SHUTDOWN), `bgsave` (a forked child writes `temp-<pid>.rdb` and
//! renames it into place, as Redis: the child sees a point-in-time copy of the keyspace, the loop
//! never waits), `cron` (reaps the child with `waitpid(WNOHANG)`, applies `save <secs> <changes>`
//! rules), `read_file` (the RDB file, for start-up and DEBUG RELOAD), and `Persist::save_opts` /
//! `limits` (the configuration the format needs).

pub mod aof;
pub mod lzf;
pub mod rdb;

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::config::Config;
use crate::resp::parser::Args;
use crate::store::Db;
use crate::util::clock;
use crate::{notice, warning};

/// The refusal of writes after a failed background save (`stop-writes-on-bgsave-error`).
pub const MISCONF_ERROR: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

/// What persistence works on, lent by the server that owns it for one call.
pub struct Host<'a> {
    pub config: &'a Config,
    pub persist: &'a mut Persist,
    pub dbs: &'a mut Vec<Db>,
    /// Changes since the last save (Redis's `server.dirty`).
    pub dirty: &'a mut u64,
    pub extras: &'a mut dyn Extras,
}

/// What a snapshot holds besides the keys, asked of the server only when a file is written or
/// read.
pub trait Extras {
    /// INFO's `used_memory`, for the file's `used-mem` field.
    fn used_memory(&self) -> usize;
    /// The function libraries' source code, in load order (saved ahead of the keys).
    fn library_codes(&self) -> Vec<&[u8]>;
    /// Replaces every function library by those compiled from a loaded file's `codes`.
    fn replace_libraries(&mut self, codes: &[Vec<u8>]) -> Result<(), String>;
    fn flush_libraries(&mut self);
}

/// Where loaded data goes (the server: its keyspace, function libraries and command table).
pub trait Loader {
    /// Loads an RDB preamble at the start of an AOF file `name`; returns where it ends.
    fn preamble(&mut self, data: &[u8], name: &str) -> Result<usize, String>;
    /// Replays one command of an AOF file as a client would send it.
    fn command(&mut self, args: Args);
    /// Whether `name` is a command the server has (an AOF naming another is corrupt).
    fn knows(&self, name: &[u8]) -> bool;
}

/// Why writes are refused now, if they are (Redis's `writeCommandsDeniedByDiskError`): a failed
/// background save with `stop-writes-on-bgsave-error` and save points, or a failed AOF write.
pub fn writes_denied(config: &Config, p: &Persist) -> Option<String> {
    if !p.last_bgsave_ok && config.stop_writes_on_bgsave_error && !save_rules(config).is_empty() {
        return Some(MISCONF_ERROR.into());
    }
    aof::write_error(p)
}

/// Redis's `CONFIG_BGSAVE_RETRY_DELAY`: after a failed BGSAVE, save rules wait this long.
const BGSAVE_RETRY_DELAY: i64 = 5;

/// Snapshot bookkeeping (Redis's `server.lastsave`, `rdb_child_pid`, `lastbgsave_status`...).
pub struct Persist {
    /// Unix time of the last successful save (LASTSAVE).
    pub lastsave: i64,
    pub last_bgsave_ok: bool,
    pub last_bgsave_try: i64,
    pub last_bgsave_secs: i64,
    pub child: Option<Child>,
    /// Successful saves since start (`rdb_saves`).
    pub saves: u64,
    /// BGSAVE SCHEDULE while a child ran: start one as soon as it is reaped.
    pub scheduled: bool,
    /// The start-up load's counts, for INFO.
    pub loaded_keys: u64,
    pub loaded_expired: u64,
    /// The append-only file (`aof.rs`).
    pub aof: aof::Aof,
    /// What a snapshot keeps of each key's access stamp under the eviction policy (the server
    /// keeps it current).
    pub stamps: rdb::Stamps,
    /// Set by a primary around the BGSAVE of a full sync: the snapshot's replication fields.
    pub repl_aux: Option<rdb::ReplAux>,
}

pub struct Child {
    pub pid: libc::pid_t,
    pub started: Instant,
    /// `dirty` when the child forked: what a successful save makes persistent.
    pub dirty_at_start: u64,
}

impl Default for Persist {
    fn default() -> Self {
        Persist {
            lastsave: clock::wall_us() / 1_000_000,
            last_bgsave_ok: true,
            last_bgsave_try: 0,
            last_bgsave_secs: -1,
            child: None,
            saves: 0,
            scheduled: false,
            loaded_keys: 0,
            loaded_expired: 0,
            aof: aof::Aof::default(),
            stamps: rdb::Stamps::None,
            repl_aux: None,
        }
    }
}

impl Persist {
    /// How values are written under `c` (DUMP and FUNCTION DUMP use it too).
    pub fn save_opts(&self, c: &Config) -> rdb::SaveOpts {
        rdb::SaveOpts {
            compress: c.rdbcompression,
            list_fill: c.list_max_listpack_size,
            stamps: self.stamps,
            repl: self.repl_aux,
        }
    }
}

pub fn limits(c: &Config) -> rdb::Limits {
    rdb::Limits {
        hash: crate::store::hash::HashLimits {
            entries: c.hash_max_listpack_entries,
            value: c.hash_max_listpack_value,
        },
        set_intset: c.set_max_intset_entries,
        zset: crate::store::zset::Limits {
            entries: c.zset_max_listpack_entries.max(0) as usize,
            value: c.zset_max_listpack_value.max(0) as usize,
        },
    }
}

/// The `save` rules as (seconds, changes) pairs.
pub fn save_rules(c: &Config) -> Vec<(i64, u64)> {
    let nums: Vec<i64> = c
        .save
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    nums.chunks(2)
        .filter(|p| p.len() == 2)
        .map(|p| (p[0], p[1].max(0) as u64))
        .collect()
}

/// The snapshot's path: `dbfilename` in `dir` (the working directory, as Redis's `dir` changes it).
pub fn rdb_path(c: &Config) -> PathBuf {
    PathBuf::from(&c.dbfilename)
}

/// Writes the function libraries and every database to `path` through a temporary file renamed
/// into place, so a failed or interrupted save never damages the previous snapshot.
pub fn write_snapshot(
    path: &std::path::Path,
    dbs: &[Db],
    extras: &dyn Extras,
    opts: rdb::SaveOpts,
    checksum: bool,
) -> std::io::Result<()> {
    let tmp = PathBuf::from(format!("temp-{}.rdb", std::process::id()));
    let res = (|| {
        let f = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        let mut buf = Vec::with_capacity(1 << 16);
        let mut crc = 0u64;
        let mut flush = |buf: &mut Vec<u8>, w: &mut std::io::BufWriter<std::fs::File>| {
            if checksum {
                crc = lzf::crc64(crc, buf);
            }
            let r = w.write_all(buf);
            buf.clear();
            r
        };
        rdb::write_header(&mut buf, extras.used_memory() as u64, opts);
        for code in extras.library_codes() {
            rdb::put_function(&mut buf, code, opts);
        }
        for (i, db) in dbs.iter().enumerate() {
            if db.is_empty() {
                continue;
            }
            rdb::write_db_start(&mut buf, i, db);
            for (_, key, e) in db.dict.iter() {
                rdb::put_key(&mut buf, key, e, db.expire_of_entry(e), opts);
                if buf.len() >= 1 << 16 {
                    flush(&mut buf, &mut w)?;
                }
            }
        }
        buf.push(255); // EOF
        flush(&mut buf, &mut w)?;
        w.write_all(&crc.to_le_bytes())?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable, as Redis 7.0's `fsyncFileDir`.
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::File::open(parent)?.sync_all()
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// SAVE: a synchronous snapshot. On success the changes count restarts, as Redis's `rdbSave`.
pub fn save(st: &mut Host) -> Result<(), String> {
    let path = rdb_path(st.config);
    match write_snapshot(
        &path,
        st.dbs,
        &*st.extras,
        st.persist.save_opts(st.config),
        st.config.rdbchecksum,
    ) {
        Ok(()) => {
            notice!("DB saved on disk");
            *st.dirty = 0;
            st.persist.lastsave = clock::wall_us() / 1_000_000;
            st.persist.last_bgsave_ok = true;
            st.persist.saves += 1;
            Ok(())
        }
        Err(e) => {
            let cwd = std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let msg = format!(
                "Failed opening the temp RDB file temp-{}.rdb (in server root dir {cwd}) for saving: {e}",
                std::process::id()
            );
            warning!("{msg}");
            Err(msg)
        }
    }
}

/// BGSAVE: forks a child that writes the snapshot and exits; `cron` reaps it.
pub fn bgsave(st: &mut Host) -> Result<libc::pid_t, String> {
    if st.persist.child.is_some() {
        return Err("Background save already in progress".into());
    }
    if st.persist.aof.child.is_some() {
        return Err("Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.".into());
    }
    let started = Instant::now();
    st.persist.last_bgsave_try = clock::wall_us() / 1_000_000;
    // SAFETY: the server is single-threaded; the child only writes the file and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        st.persist.last_bgsave_ok = false;
        warning!("Can't save in background: fork: {e}");
        return Err(format!("Can't save in background: fork: {e}"));
    }
    if pid == 0 {
        crate::log::set_child_role();
        crate::config::oom::apply(st.config, crate::config::oom::Class::Child);
        // SAFETY: restoring default dispositions in the child: a SIGTERM meant for it must not
        // reach the parent's shutdown pipe, which the child shares.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
        let path = rdb_path(st.config);
        let code = match write_snapshot(
            &path,
            st.dbs,
            &*st.extras,
            st.persist.save_opts(st.config),
            st.config.rdbchecksum,
        ) {
            Ok(()) => {
                notice!("DB saved on disk");
                0
            }
            Err(e) => {
                warning!("Write error saving DB on disk: {e}");
                1
            }
        };
        // SAFETY: leave without running the parent's destructors or atexit handlers.
        unsafe { libc::_exit(code) };
    }
    notice!("Background saving started by pid {pid}");
    st.persist.child = Some(Child {
        pid,
        started,
        dirty_at_start: *st.dirty,
    });
    Ok(pid)
}

/// Reaps a finished BGSAVE child (without waiting) and records its outcome.
pub fn reap_child(st: &mut Host) {
    let Some(child) = &st.persist.child else {
        return;
    };
    let mut status = 0;
    // SAFETY: waitpid on our own child, without blocking.
    let r = unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
    if r == 0 {
        return;
    }
    let child = st.persist.child.take().expect("checked");
    st.persist.last_bgsave_secs = child.started.elapsed().as_secs() as i64;
    let ok = r == child.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if ok {
        notice!("Background saving terminated with success");
        *st.dirty = st.dirty.saturating_sub(child.dirty_at_start);
        st.persist.lastsave = clock::wall_us() / 1_000_000;
        st.persist.last_bgsave_ok = true;
        st.persist.saves += 1;
    } else {
        if r == child.pid && libc::WIFSIGNALED(status) {
            warning!(
                "Background saving terminated by signal {}",
                libc::WTERMSIG(status)
            );
        } else {
            warning!("Background saving error");
        }
        let _ = std::fs::remove_file(format!("temp-{}.rdb", child.pid));
        st.persist.last_bgsave_ok = false;
    }
}

/// Stops a running BGSAVE child (SHUTDOWN, FLUSHALL), removing its temporary file.
pub fn kill_child(st: &mut Host) {
    if let Some(child) = st.persist.child.take() {
        warning!("There is a child saving an .rdb. Killing it!");
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(child.pid, libc::SIGUSR1);
            let mut status = 0;
            libc::waitpid(child.pid, &mut status, 0);
        }
        let _ = std::fs::remove_file(format!("temp-{}.rdb", child.pid));
    }
}

/// The cron's part: reap a finished child, then start a BGSAVE if a save rule is met.
pub fn cron(st: &mut Host) {
    reap_child(st);
    aof::cron(st);
    if st.persist.child_active() {
        return;
    }
    if std::mem::take(&mut st.persist.scheduled) {
        let _ = bgsave(st);
        return;
    }
    let now = clock::wall_us() / 1_000_000;
    for (secs, changes) in save_rules(st.config) {
        if *st.dirty >= changes
            && now - st.persist.lastsave > secs
            && (st.persist.last_bgsave_ok || now - st.persist.last_bgsave_try > BGSAVE_RETRY_DELAY)
        {
            notice!("{changes} changes in {secs} seconds. Saving...");
            let _ = bgsave(st);
            break;
        }
    }
}

/// Reads `dbfilename` into `databases` fresh databases. `Ok(None)`: there is no file. The
/// caller swaps them in with the file's function libraries (`LoadInfo::functions`).
pub fn read_file(
    config: &Config,
    databases: usize,
) -> Result<Option<(Vec<Db>, rdb::LoadInfo)>, String> {
    let path = rdb_path(config);
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("Fatal error loading the DB: {e}. Exiting.")),
    };
    let mut dbs: Vec<Db> = (0..databases).map(|_| Db::default()).collect();
    let info = rdb::load(
        &data,
        &mut dbs,
        limits(config),
        config.rdbchecksum,
        clock::now_ms(),
    )
    .map_err(|e| {
        format!(
            "Fatal error loading the DB {}: {e}. Exiting.",
            path.display()
        )
    })?;
    Ok(Some((dbs, info)))
}

/// Reads `dbfilename` and swaps its databases and function libraries in. `Ok(None)`: there is no
/// file.
pub fn load_file(st: &mut Host) -> Result<Option<rdb::LoadInfo>, String> {
    let Some((dbs, info)) = read_file(st.config, st.dbs.len())? else {
        return Ok(None);
    };
    // The file's function libraries replace the server's (none at start-up).
    st.extras.replace_libraries(&info.functions).map_err(|e| {
        format!(
            "Failed loading library from {}: {e}",
            rdb_path(st.config).display()
        )
    })?;
    *st.dbs = dbs;
    st.persist.loaded_keys = info.keys_loaded;
    st.persist.loaded_expired = info.keys_expired;
    Ok(Some(info))
}

/// Loads `dbfilename` at start-up if it exists, logging as Redis does. An unreadable or corrupt
/// file is an error: the server must not start (and later overwrite it) with an empty keyspace.
pub fn load_rdb_at_startup(st: &mut Host) -> Result<(), String> {
    let start = Instant::now();
    // Keys already expired are skipped: the cached time must be now, before the loop first sets it.
    clock::update();
    let Some(info) = load_file(st)? else {
        return Ok(());
    };
    let now = clock::now_ms();
    if let Some(v) = &info.redis_ver {
        notice!("Loading RDB produced by version {v}");
    }
    if let Some(t) = info.ctime {
        notice!("RDB age {} seconds", (now / 1000 - t).max(0));
    }
    if let Some(m) = info.used_mem {
        notice!(
            "RDB memory usage when created {:.2} Mb",
            m as f64 / (1024.0 * 1024.0)
        );
    }
    if info.empty_skipped > 0 {
        notice!(
            "Done loading RDB, keys loaded: {}, keys expired: {}, empty keys skipped: {}.",
            info.keys_loaded,
            info.keys_expired,
            info.empty_skipped
        );
    } else {
        notice!(
            "Done loading RDB, keys loaded: {}, keys expired: {}.",
            info.keys_loaded,
            info.keys_expired
        );
    }
    notice!(
        "DB loaded from disk: {:.3} seconds",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
