//! The append-only file, as Redis 7.0's multi-part AOF: `appenddirname` holds a manifest
//! (`<appendfilename>.manifest`), one base file (an RDB preamble, or plain commands with
//! `aof-use-rdb-preamble no`) and incr files of RESP commands, so a Redis 7 `appendonlydir` loads
//! here and ours loads in Redis.
//!
//! Entry points (the server lends the data as a `Host`; see `persist`):
//! - `append`: the effects one command propagated (`server::propagate`, where handlers say how
//!   they replay), SELECT when the database changes, MULTI/EXEC around more than one.
//! - `flush_turn`, once per event-loop turn before replies are flushed: writes the turn's commands;
//!   `appendfsync always` fdatasyncs them there (group commit: a reply leaves only once its write is
//!   durable); `everysec` hands the fsync to a thread at most once a second.
//! - `rewrite_start` (BGREWRITEAOF, automatic rewrite, `appendonly yes` at run time): opens a new
//!   incr file for the writes to come, then a forked child writes the new base; `cron` reaps it and
//!   installs the new manifest atomically. No rewrite buffer: nothing written meanwhile is lost.
//! - `prepare_load`, `load_files`, `open_on_startup`: at start-up (and DEBUG LOADAOF) the manifest
//!   (or an old single `appendonly.aof`, moved into the dir), then base and incrs, their RDB
//!   preamble and commands handed to the server's `Loader`, read by the one request parser.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

mod stream;

use super::{Host, Loader, Persist};
use crate::config::Config;
use crate::resp::command as encode;
use crate::resp::parser::{Limits, Parsed, Parser};
use crate::store::{self, Value, NO_EXPIRE};
use crate::{notice, warning};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AofState {
    Off,
    On,
    /// Turned on at run time: the first rewrite is running (or scheduled).
    WaitRewrite,
}

/// One line of the manifest.
#[derive(Clone)]
pub struct AofFile {
    pub name: String,
    pub seq: u64,
}

/// The manifest: which files make the AOF, in Redis 7.0's text format.
#[derive(Clone, Default)]
pub struct Manifest {
    pub base: Option<AofFile>,
    pub incrs: Vec<AofFile>,
    pub base_seq: u64,
    pub incr_seq: u64,
}

/// A running rewrite child.
pub struct Rewrite {
    pub pid: libc::pid_t,
    pub started: Instant,
}

/// The AOF's state (Redis's `aof_*` server fields).
pub struct Aof {
    pub state: AofState,
    /// The commands of this turn, written by `flush_turn` (Redis's `aof_buf`).
    buf: Vec<u8>,
    /// The database the incr file is positioned in; `None` on a new file (SELECT comes first).
    selected_db: Option<usize>,
    file: Option<Arc<File>>,
    pub manifest: Manifest,
    pub current_size: u64,
    pub base_size: u64,
    /// Written since the last fsync.
    unsynced: bool,
    last_fsync: Instant,
    fsyncer: Option<Fsyncer>,
    pub child: Option<Rewrite>,
    pub scheduled: bool,
    pub last_rewrite_secs: i64,
    pub last_rewrite_ok: bool,
    pub rewrites: u64,
    pub consecutive_failures: u64,
    pub last_write_error: Option<String>,
    pub delayed_fsync: u64,
}

impl Default for Aof {
    fn default() -> Self {
        Aof {
            state: AofState::Off,
            buf: Vec::new(),
            selected_db: None,
            file: None,
            manifest: Manifest::default(),
            current_size: 0,
            base_size: 0,
            unsynced: false,
            last_fsync: Instant::now(),
            fsyncer: None,
            child: None,
            scheduled: false,
            last_rewrite_secs: -1,
            last_rewrite_ok: true,
            rewrites: 0,
            consecutive_failures: 0,
            last_write_error: None,
            delayed_fsync: 0,
        }
    }
}

impl Aof {
    /// Whether writes are being logged: AOF on, or being turned on with its first rewrite running
    /// (the child's snapshot covers what came before).
    pub fn recording(&self) -> bool {
        self.state == AofState::On || (self.state == AofState::WaitRewrite && self.child.is_some())
    }
}

/// The `everysec` fsync: a thread that only calls fdatasync on the file it is handed (Redis's
/// `BIO_AOF_FSYNC` job). It touches no data and no server state, so the single-threaded design
/// holds; it exists because fdatasync can take long on a busy disk and the loop must not stall.
struct Fsyncer {
    tx: mpsc::Sender<Arc<File>>,
    busy: Arc<AtomicBool>,
}

impl Fsyncer {
    fn spawn() -> Fsyncer {
        let (tx, rx) = mpsc::channel::<Arc<File>>();
        let busy = Arc::new(AtomicBool::new(false));
        let flag = busy.clone();
        std::thread::Builder::new()
            .name("aof-fsync".into())
            .spawn(move || {
                while let Ok(f) = rx.recv() {
                    let _ = f.sync_data();
                    flag.store(false, Ordering::Release);
                }
            })
            .expect("spawn the AOF fsync thread");
        Fsyncer { tx, busy }
    }
}

// ---------------------------------------------------------------------------------------------
// The manifest and the directory

pub fn dir(c: &Config) -> PathBuf {
    PathBuf::from(&c.appenddirname)
}

fn manifest_name(c: &Config) -> String {
    format!("{}.manifest", c.appendfilename)
}

fn base_name(c: &Config, seq: u64, preamble: bool) -> String {
    let ext = if preamble { "rdb" } else { "aof" };
    format!("{}.{seq}.base.{ext}", c.appendfilename)
}

fn incr_name(c: &Config, seq: u64) -> String {
    format!("{}.{seq}.incr.aof", c.appendfilename)
}

fn temp_incr_name(c: &Config) -> String {
    format!("temp-{}.incr", c.appendfilename)
}

fn temp_rewrite_name(pid: libc::pid_t) -> String {
    format!("temp-rewriteaof-bg-{pid}.aof")
}

/// A file name as the manifest writes it: quoted (Redis's `sdscatrepr`) only when it must be.
fn manifest_field(name: &str) -> String {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\')
    {
        return name.to_string();
    }
    let mut s = String::new();
    crate::util::cat_repr(&mut s, name.as_bytes());
    s
}

impl Manifest {
    /// Redis's `getAofManifestAsString`: `file <name> seq <n> type <b|i>` per line, base first.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if let Some(b) = &self.base {
            let _ = writeln!(s, "file {} seq {} type b", manifest_field(&b.name), b.seq);
        }
        for i in &self.incrs {
            let _ = writeln!(s, "file {} seq {} type i", manifest_field(&i.name), i.seq);
        }
        s
    }

    /// Parses a manifest (Redis's `aofLoadManifestFromFile`); history lines are skipped.
    pub fn parse(text: &[u8]) -> Result<Manifest, String> {
        let mut m = Manifest::default();
        for line in text.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) || line.first() == Some(&b'#') {
                continue;
            }
            let (mut buf, mut spans) = (Vec::new(), Vec::new());
            crate::resp::parser::split_args(line, &mut buf, &mut spans)
                .map_err(|_| "Invalid AOF manifest file format".to_string())?;
            if spans.len() % 2 != 0 {
                return Err("Invalid AOF manifest file format".into());
            }
            let (mut name, mut seq, mut kind) = (None, None, None);
            for p in spans.chunks(2) {
                let k = &buf[p[0].0..p[0].1];
                let v = String::from_utf8_lossy(&buf[p[1].0..p[1].1]).into_owned();
                match k {
                    b"file" => name = Some(v),
                    b"seq" => seq = v.parse::<u64>().ok(),
                    b"type" => kind = v.chars().next(),
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err("Invalid AOF manifest file format".into());
            };
            let f = AofFile { name, seq };
            match kind {
                'b' => {
                    if m.base.is_some() {
                        return Err("Found duplicate base file information".into());
                    }
                    m.base_seq = seq;
                    m.base = Some(f);
                }
                'i' => {
                    if seq <= m.incr_seq && !m.incrs.is_empty() {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    m.incr_seq = seq;
                    m.incrs.push(f);
                }
                'h' => {}
                _ => return Err("Unknown AOF file type".into()),
            }
        }
        Ok(m)
    }
}

fn fsync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Writes the manifest through a temporary file renamed into place, then fsyncs the directory: a
/// crash leaves the old manifest or the new one, never a mix.
fn persist_manifest(c: &Config, m: &Manifest) -> std::io::Result<()> {
    let d = dir(c);
    let tmp = d.join(format!("temp-{}", manifest_name(c)));
    let mut f = File::create(&tmp)?;
    f.write_all(m.render().as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, d.join(manifest_name(c)))?;
    fsync_dir(&d)
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn open_append(p: &Path) -> std::io::Result<Arc<File>> {
    Ok(Arc::new(
        OpenOptions::new().create(true).append(true).open(p)?,
    ))
}

// ---------------------------------------------------------------------------------------------
// Propagation

/// Bytes of the turn's buffer while the AOF is on: what eviction does not count as used memory,
/// or the DELs it logs would call for more evictions (Redis's `freeMemoryGetNotCountedMemory`).
pub fn buffer_bytes(config: &Config, p: &Persist) -> usize {
    if config.appendonly {
        p.aof.buf.capacity()
    } else {
        0
    }
}

/// Appends the ops one command propagated (`server::propagate`), with their databases, to the
/// turn's buffer: MULTI/EXEC around more than one (Redis 7.0's `propagatePendingCommands`),
/// SELECT whenever the database changes.
pub fn append(a: &mut Aof, ops: &[(usize, Vec<u8>)]) {
    if !a.recording() || ops.is_empty() {
        return;
    }
    let wrap = ops.len() > 1;
    if wrap {
        select(a, ops[0].0);
        a.buf.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n");
    }
    for (db, op) in ops {
        select(a, *db);
        a.buf.extend_from_slice(op);
    }
    if wrap {
        a.buf.extend_from_slice(b"*1\r\n$4\r\nEXEC\r\n");
    }
}

fn select(a: &mut Aof, db: usize) {
    if a.selected_db != Some(db) {
        a.buf
            .extend_from_slice(&encode(&[b"SELECT", db.to_string().as_bytes()]));
        a.selected_db = Some(db);
    }
}

// ---------------------------------------------------------------------------------------------
// Writing and fsync

/// How long a turn's write (and its `always` fsync) took, for the latency monitor's AOF events.
pub struct WriteLatency {
    /// What the write may have waited for, as Redis names the event: `aof-write-pending-fsync`,
    /// `aof-write-active-child` or `aof-write-alone`.
    pub event: &'static str,
    pub write_ms: u64,
    /// The `appendfsync always` fdatasync.
    pub fsync_ms: Option<u64>,
}

/// Once per event-loop turn, before replies are flushed: writes the turn's commands and applies
/// `appendfsync`. With `always`, the fdatasync is here, so no reply of this turn leaves before
/// its write is durable (one fsync for every write of the turn).
pub fn flush_turn(config: &Config, p: &mut Persist) -> Option<WriteLatency> {
    let policy = config.appendfsync;
    let child = p.child_active();
    let no_fsync = config.no_appendfsync_on_rewrite && child;
    let a = &mut p.aof;
    if a.buf.is_empty() {
        if a.unsynced && policy == "everysec" && !no_fsync {
            background_fsync(a);
        }
        return None;
    }
    let Some(file) = a.file.clone() else {
        a.buf.clear();
        return None;
    };
    let fsync_pending = a
        .fsyncer
        .as_ref()
        .is_some_and(|f| f.busy.load(Ordering::Acquire));
    let started = Instant::now();
    let written = (&*file).write_all(&a.buf);
    let mut latency = WriteLatency {
        event: match (fsync_pending, child) {
            (true, _) => "aof-write-pending-fsync",
            (false, true) => "aof-write-active-child",
            (false, false) => "aof-write-alone",
        },
        write_ms: started.elapsed().as_millis() as u64,
        fsync_ms: None,
    };
    match written {
        Ok(()) => {
            if a.last_write_error.take().is_some() {
                warning!("AOF write error looks solved, Redis can write again.");
            }
            a.current_size += a.buf.len() as u64;
            a.buf.clear();
            a.unsynced = true;
        }
        Err(e) => {
            // A partial write may have reached the file; Redis truncates it back, so do we.
            let _ = file.set_len(a.current_size);
            if policy == "always" {
                warning!("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
                std::process::exit(1);
            }
            if a.last_write_error.is_none() {
                warning!("Error writing to the AOF file: {e}");
            }
            a.last_write_error = Some(e.to_string());
            return Some(latency);
        }
    }
    match policy {
        "always" if !no_fsync => {
            let started = Instant::now();
            let synced = file.sync_data();
            latency.fsync_ms = Some(started.elapsed().as_millis() as u64);
            if let Err(e) = synced {
                warning!("Can't persist AOF for fsync error when the AOF fsync policy is 'always': {e}. Exiting...");
                std::process::exit(1);
            }
            a.unsynced = false;
            a.last_fsync = Instant::now();
        }
        "everysec" if !no_fsync => background_fsync(a),
        _ => {}
    }
    Some(latency)
}

/// `everysec`: hands an fsync to the fsync thread if a second has passed and none is running.
fn background_fsync(a: &mut Aof) {
    if a.last_fsync.elapsed().as_millis() < 1000 {
        return;
    }
    let Some(file) = a.file.clone() else {
        return;
    };
    let f = a.fsyncer.get_or_insert_with(Fsyncer::spawn);
    if f.busy.load(Ordering::Acquire) {
        // The disk is slow: Redis counts a delayed fsync and tries again on a later turn.
        a.delayed_fsync += 1;
        return;
    }
    f.busy.store(true, Ordering::Release);
    if f.tx.send(file).is_err() {
        f.busy.store(false, Ordering::Release);
        return;
    }
    a.unsynced = false;
    a.last_fsync = Instant::now();
}

/// Writes what is buffered and fsyncs it in place (rewrite start, turning AOF off, shutdown).
fn flush_and_sync(a: &mut Aof) {
    if let Some(file) = a.file.clone() {
        if !a.buf.is_empty() && (&*file).write_all(&a.buf).is_ok() {
            a.current_size += a.buf.len() as u64;
        }
        a.buf.clear();
        let _ = file.sync_data();
        a.unsynced = false;
    }
}

/// Whether shutting down would lose the data set (Redis's `prepareForShutdown`): AOF is being
/// turned on and its first base is still being written. FORCE exits anyway.
pub fn refuses_shutdown(p: &Persist, force: bool) -> bool {
    let a = &p.aof;
    if a.state != AofState::WaitRewrite || a.child.is_none() {
        return false;
    }
    if force {
        warning!("Writing initial AOF. Exit anyway.");
        return false;
    }
    warning!("Writing initial AOF, can't exit.");
    true
}

/// SHUTDOWN and signals: the last writes are made durable, a rewrite child is stopped.
pub fn shutdown(st: &mut Host) {
    if st.persist.aof.state != AofState::Off {
        notice!("Calling fsync() on the AOF file.");
        flush_and_sync(&mut st.persist.aof);
    }
    kill_child(st);
}

// ---------------------------------------------------------------------------------------------
// Rewrite

/// Opens the incr file the writes go to from now on: a new `<name>.<n>.incr.aof` in the manifest,
/// or the temporary one while AOF is being turned on.
fn open_new_incr(st: &mut Host) -> std::io::Result<()> {
    let c = st.config;
    let d = dir(c);
    let a = &mut st.persist.aof;
    match a.state {
        AofState::Off => return Ok(()),
        AofState::WaitRewrite => {
            let p = d.join(temp_incr_name(c));
            let f = File::create(&p)?;
            a.file = Some(Arc::new(f));
            a.current_size = 0;
        }
        AofState::On => {
            let mut m = a.manifest.clone();
            m.incr_seq += 1;
            let name = incr_name(c, m.incr_seq);
            let f = open_append(&d.join(&name))?;
            m.incrs.push(AofFile {
                name,
                seq: m.incr_seq,
            });
            persist_manifest(c, &m)?;
            a.manifest = m;
            a.file = Some(f);
        }
    }
    a.selected_db = None;
    Ok(())
}

/// Starts a background rewrite: a new incr file for the writes to come, then a forked child that
/// writes the new base from its point-in-time copy of the keyspace.
pub fn rewrite_start(st: &mut Host) -> Result<(), String> {
    if st.persist.aof.child.is_some() {
        return Err("Background append only file rewriting already in progress".into());
    }
    if let Err(e) = std::fs::create_dir_all(dir(st.config)) {
        warning!(
            "Can't open or create append-only dir {}: {e}",
            st.config.appenddirname
        );
        return Err(e.to_string());
    }
    flush_and_sync(&mut st.persist.aof);
    if let Err(e) = open_new_incr(st) {
        warning!("Can't open the append-only file: {e}");
        return Err(e.to_string());
    }
    let started = Instant::now();
    // SAFETY: the server is single-threaded apart from the fsync thread, which holds no lock the
    // child needs; the child only writes its file and `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        warning!("Can't rewrite append only file in background: fork: {e}");
        st.persist.aof.last_rewrite_ok = false;
        return Err(e.to_string());
    }
    if pid == 0 {
        crate::log::set_child_role();
        crate::config::oom::apply(st.config, crate::config::oom::Class::Child);
        // SAFETY: default dispositions in the child, as the BGSAVE child.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
        let path = dir(st.config).join(temp_rewrite_name(std::process::id() as libc::pid_t));
        let code = match write_base(st, &path) {
            Ok(()) => {
                notice!(
                    "Successfully created the temporary AOF base file {}",
                    temp_rewrite_name(std::process::id() as libc::pid_t)
                );
                0
            }
            Err(e) => {
                warning!("Write error writing append only file on disk: {e}");
                1
            }
        };
        // SAFETY: leave without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    notice!("Background append only file rewriting started by pid {pid}");
    st.persist.aof.child = Some(Rewrite { pid, started });
    st.persist.aof.scheduled = false;
    Ok(())
}

/// The new base: an RDB preamble (`aof-use-rdb-preamble yes`) or the commands that rebuild it.
fn write_base(st: &Host, path: &Path) -> std::io::Result<()> {
    if st.config.aof_use_rdb_preamble {
        return super::write_snapshot(
            path,
            st.dbs,
            &*st.extras,
            st.persist.save_opts(st.config),
            st.config.rdbchecksum,
        );
    }
    let tmp = path.with_extension("tmp");
    let f = File::create(&tmp)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
    // Function libraries first, as Redis's `rewriteFunctions`.
    for code in st.extras.library_codes() {
        w.write_all(&encode(&[b"FUNCTION", b"LOAD", code]))?;
    }
    for (i, db) in st.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        w.write_all(&encode(&[b"SELECT", i.to_string().as_bytes()]))?;
        for (_, key, e) in db.dict.iter() {
            write_key(&mut w, key, &e.val)?;
            let at = db.expire_of_entry(e);
            if at != NO_EXPIRE {
                w.write_all(&encode(&[b"PEXPIREAT", key, at.to_string().as_bytes()]))?;
            }
        }
    }
    let f = w.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Redis's `AOF_REWRITE_ITEMS_PER_CMD`: aggregates are rebuilt 64 items per command.
const ITEMS_PER_CMD: usize = 64;

fn write_key(w: &mut impl Write, key: &[u8], v: &Value) -> std::io::Result<()> {
    let batches = |w: &mut dyn Write, verb: &[u8], items: Vec<Vec<u8>>, per: usize| {
        for chunk in items.chunks(ITEMS_PER_CMD * per) {
            let mut c: Vec<&[u8]> = vec![verb, key];
            c.extend(chunk.iter().map(|i| &i[..]));
            w.write_all(&encode(&c))?;
        }
        Ok::<(), std::io::Error>(())
    };
    match v {
        Value::Str(s) => s.with_bytes(|data| w.write_all(&encode(&[b"SET", key, data]))),
        Value::List(l) => batches(w, b"RPUSH", l.items.iter().cloned().collect(), 1),
        Value::Set(s) => batches(w, b"SADD", s.iter().map(|m| m.to_vec()).collect(), 1),
        Value::Hash(h) => batches(
            w,
            b"HMSET",
            h.iter()
                .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
                .collect(),
            2,
        ),
        Value::ZSet(z) => {
            let mut items = Vec::with_capacity(z.len() * 2);
            let mut at = z.first();
            while let Some(id) = at {
                let (m, s) = z.get(id);
                items.push(crate::util::fmt_g17(s).into_bytes());
                items.push(m.to_vec());
                at = z.next(id);
            }
            batches(w, b"ZADD", items, 2)
        }
        Value::Stream(s) => stream::write_stream(w, key, s),
    }
}

/// Reaps a finished rewrite child and installs its base: the new manifest names the new base and
/// the incr files opened since the rewrite started; the older files are deleted.
fn reap_child(st: &mut Host) {
    let Some(child) = &st.persist.aof.child else {
        return;
    };
    let mut status = 0;
    // SAFETY: waitpid on our own child, without blocking.
    let r = unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
    if r == 0 {
        return;
    }
    let child = st.persist.aof.child.take().expect("checked");
    let ok = r == child.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let d = dir(st.config);
    let temp = d.join(temp_rewrite_name(child.pid));
    st.persist.aof.last_rewrite_secs = child.started.elapsed().as_secs() as i64;
    if ok {
        notice!("Background AOF rewrite terminated with success");
        match install_base(st, &temp) {
            Ok(()) => {
                notice!("Background AOF rewrite finished successfully");
                let a = &mut st.persist.aof;
                a.last_rewrite_ok = true;
                a.rewrites += 1;
                a.consecutive_failures = 0;
                return;
            }
            Err(e) => warning!("Error trying to install the new AOF base: {e}"),
        }
    } else if r == child.pid && libc::WIFSIGNALED(status) {
        warning!(
            "Background AOF rewrite terminated by signal {}",
            libc::WTERMSIG(status)
        );
    } else {
        warning!("Background AOF rewrite terminated with error");
    }
    let _ = std::fs::remove_file(&temp);
    let _ = std::fs::remove_file(format!("temp-{}.rdb", child.pid));
    let a = &mut st.persist.aof;
    a.last_rewrite_ok = false;
    a.consecutive_failures += 1;
    if a.state == AofState::WaitRewrite {
        // Turning AOF on must end with a base: try again from the cron.
        a.scheduled = true;
    }
}

fn install_base(st: &mut Host, temp: &Path) -> std::io::Result<()> {
    let c = st.config;
    let d = dir(c);
    let a = &mut st.persist.aof;
    let mut m = a.manifest.clone();
    m.base_seq += 1;
    let name = base_name(c, m.base_seq, c.aof_use_rdb_preamble);
    std::fs::rename(temp, d.join(&name))?;
    notice!(
        "Successfully renamed the temporary AOF base file {} into {name}",
        temp.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut history: Vec<String> = m.base.take().map(|b| b.name).into_iter().collect();
    m.base = Some(AofFile {
        name: name.clone(),
        seq: m.base_seq,
    });
    match a.state {
        AofState::On => {
            // The last incr was opened when the rewrite started: the older ones are in the base.
            let keep = m.incrs.pop();
            history.extend(m.incrs.drain(..).map(|f| f.name));
            m.incrs.extend(keep);
        }
        AofState::WaitRewrite => {
            history.extend(m.incrs.drain(..).map(|f| f.name));
            m.incr_seq += 1;
            let incr = incr_name(c, m.incr_seq);
            std::fs::rename(d.join(temp_incr_name(c)), d.join(&incr))?;
            notice!(
                "Successfully renamed the temporary AOF incr file {} into {incr}",
                temp_incr_name(c)
            );
            m.incrs.push(AofFile {
                name: incr,
                seq: m.incr_seq,
            });
        }
        AofState::Off => history.extend(m.incrs.drain(..).map(|f| f.name)),
    }
    persist_manifest(c, &m)?;
    for h in history {
        if std::fs::remove_file(d.join(&h)).is_ok() {
            notice!("Removing the history file {h} in the background");
        }
    }
    let incr_size = m.incrs.last().map_or(0, |f| file_size(&d.join(&f.name)));
    a.current_size = file_size(&d.join(&name)) + incr_size;
    a.base_size = a.current_size;
    a.manifest = m;
    if a.state == AofState::WaitRewrite {
        a.state = AofState::On;
    }
    Ok(())
}

/// Stops a rewrite child (SHUTDOWN, turning AOF off) and removes its temporary files.
pub fn kill_child(st: &mut Host) {
    if let Some(child) = st.persist.aof.child.take() {
        notice!("Killing running AOF rewrite child: {}", child.pid);
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(child.pid, libc::SIGUSR1);
            let mut status = 0;
            libc::waitpid(child.pid, &mut status, 0);
        }
        let _ = std::fs::remove_file(dir(st.config).join(temp_rewrite_name(child.pid)));
        let _ = std::fs::remove_file(format!("temp-{}.rdb", child.pid));
    }
}

/// The cron's part: reap the child, start a scheduled or automatic rewrite (Redis's growth rule:
/// `auto-aof-rewrite-percentage` over the size after the last rewrite, past the minimum size).
pub fn cron(st: &mut Host) {
    reap_child(st);
    if st.persist.aof.child.is_some() || st.persist.child.is_some() {
        return;
    }
    let a = &st.persist.aof;
    if a.scheduled {
        let _ = rewrite_start(st);
        return;
    }
    let c = st.config;
    if a.state == AofState::On
        && c.auto_aof_rewrite_percentage > 0
        && a.current_size as i64 > c.auto_aof_rewrite_min_size
    {
        let base = a.base_size.max(1);
        let growth = (a.current_size * 100 / base) as i64 - 100;
        if growth >= c.auto_aof_rewrite_percentage {
            notice!("Starting automatic rewriting of AOF on {growth}% growth");
            let _ = rewrite_start(st);
        }
    }
}

impl Persist {
    /// Whether a background process of either kind runs (Redis's `hasActiveChildProcess`).
    pub fn child_active(&self) -> bool {
        self.child.is_some() || self.aof.child.is_some()
    }
}

// ---------------------------------------------------------------------------------------------
// Turning AOF on and off at run time

/// `CONFIG SET appendonly yes`: as Redis's `startAppendOnly`, a rewrite writes the first base.
pub fn start(st: &mut Host) -> Result<(), String> {
    let d = dir(st.config);
    if let Err(e) = std::fs::create_dir_all(&d) {
        warning!(
            "Can't open or create append-only dir {}: {e}",
            st.config.appenddirname
        );
        return Err(e.to_string());
    }
    // Keep numbering after the files an earlier run left, which the new base replaces.
    if let Ok(text) = std::fs::read(d.join(manifest_name(st.config))) {
        if let Ok(m) = Manifest::parse(&text) {
            st.persist.aof.manifest = m;
        }
    }
    st.persist.aof.state = AofState::WaitRewrite;
    store::set_log_expired(true);
    if st.persist.child_active() {
        st.persist.aof.scheduled = true;
        warning!("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
    } else if let Err(e) = rewrite_start(st) {
        st.persist.aof.state = AofState::Off;
        store::set_log_expired(false);
        warning!("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
        return Err(e);
    }
    Ok(())
}

/// `CONFIG SET appendonly no`: the file is flushed, fsynced and closed; a rewrite is stopped.
pub fn stop(st: &mut Host) {
    flush_and_sync(&mut st.persist.aof);
    kill_child(st);
    let a = &mut st.persist.aof;
    if a.state == AofState::WaitRewrite {
        let _ = std::fs::remove_file(dir(st.config).join(temp_incr_name(st.config)));
    }
    a.file = None;
    a.state = AofState::Off;
    a.scheduled = false;
    store::set_log_expired(false);
}

// ---------------------------------------------------------------------------------------------
// Loading

/// Why a file stopped loading.
enum Stop {
    Done,
    /// The last command is cut short; the file is good up to this offset.
    Truncated(usize),
}

/// Before loading at start-up: an old single `appendonly.aof` is moved into the directory (Redis
/// 7's upgrade), and the manifest read.
pub fn prepare_load(st: &mut Host) -> Result<(), String> {
    let d = dir(st.config);
    let mpath = d.join(manifest_name(st.config));
    let old = PathBuf::from(&st.config.appendfilename);
    if !mpath.exists() && old.is_file() {
        upgrade(st, &old).map_err(|e| format!("Failed to migrate the old-style AOF: {e}"))?;
    }
    if let Ok(text) = std::fs::read(&mpath) {
        st.persist.aof.manifest = Manifest::parse(&text)
            .map_err(|e| format!("{e} (in the AOF manifest {})", mpath.display()))?;
    }
    Ok(())
}

/// DEBUG LOADAOF's start: what is buffered is written and synced, and the manifest on disk read
/// again. Err when there is no AOF at all.
pub fn prepare_reload(st: &mut Host) -> Result<(), String> {
    if st.persist.aof.state != AofState::Off {
        flush_and_sync(&mut st.persist.aof);
    }
    let mpath = dir(st.config).join(manifest_name(st.config));
    st.persist.aof.manifest = match std::fs::read(&mpath) {
        Ok(text) => Manifest::parse(&text)
            .map_err(|e| format!("{e} (in the AOF manifest {})", mpath.display()))?,
        Err(_) => Manifest::default(),
    };
    let m = &st.persist.aof.manifest;
    if m.base.is_none() && m.incrs.is_empty() {
        return Err("There is no append only file to load".into());
    }
    Ok(())
}

/// Loads the files of `manifest`, base first (Redis's `loadAppendOnlyFiles`), into `loader`;
/// returns their total size (0: nothing was loaded).
pub fn load_files(
    config: &Config,
    manifest: &Manifest,
    loader: &mut dyn Loader,
) -> Result<u64, String> {
    let d = dir(config);
    let files: Vec<(&AofFile, bool)> = manifest
        .base
        .iter()
        .map(|b| (b, true))
        .chain(manifest.incrs.iter().map(|i| (i, false)))
        .collect();
    let total: u64 = files.iter().map(|(f, _)| file_size(&d.join(&f.name))).sum();
    if total > 0 {
        store::set_loading(true);
        let n = files.len();
        let mut res = Ok(());
        for (i, (f, is_base)) in files.iter().enumerate() {
            let t = Instant::now();
            res = load_one(config, loader, &d.join(&f.name), &f.name, i + 1 == n);
            if res.is_err() {
                break;
            }
            notice!(
                "DB loaded from {} file {}: {:.3} seconds",
                if *is_base { "base" } else { "incr" },
                f.name,
                t.elapsed().as_secs_f64()
            );
        }
        store::set_loading(false);
        res?;
    }
    Ok(total)
}

/// Redis 7's upgrade of a 6.x `appendonly.aof`: moved into the directory as the base.
fn upgrade(st: &mut Host, old: &Path) -> std::io::Result<()> {
    let c = st.config;
    let d = dir(c);
    std::fs::create_dir_all(&d)?;
    std::fs::rename(old, d.join(&c.appendfilename))?;
    let m = Manifest {
        base: Some(AofFile {
            name: c.appendfilename.clone(),
            seq: 1,
        }),
        incrs: Vec::new(),
        base_seq: 1,
        incr_seq: 0,
    };
    persist_manifest(c, &m)?;
    notice!("Successfully migrated an old-style AOF into the AOF directory");
    st.persist.aof.manifest = m;
    Ok(())
}

/// After loading at start-up: a base and an incr file exist (created now if missing), the last
/// incr is open.
pub fn open_on_startup(st: &mut Host) -> std::io::Result<()> {
    let c = st.config;
    let d = dir(c);
    std::fs::create_dir_all(&d)?;
    let mut m = st.persist.aof.manifest.clone();
    if m.base.is_none() {
        m.base_seq += 1;
        let name = base_name(c, m.base_seq, c.aof_use_rdb_preamble);
        write_base(st, &d.join(&name))?;
        notice!("Creating AOF base file {name} on server start");
        m.base = Some(AofFile {
            name,
            seq: m.base_seq,
        });
    }
    let created = m.incrs.is_empty();
    if created {
        m.incr_seq += 1;
        m.incrs.push(AofFile {
            name: incr_name(c, m.incr_seq),
            seq: m.incr_seq,
        });
    }
    let incr = m.incrs.last().expect("one incr").name.clone();
    let f = open_append(&d.join(&incr))?;
    if created {
        persist_manifest(c, &m)?;
        notice!("Creating AOF incr file {incr} on server start");
    } else {
        notice!("Opening AOF incr file {incr} on server start");
    }
    let size: u64 = m
        .base
        .iter()
        .chain(m.incrs.iter())
        .map(|f| file_size(&d.join(&f.name)))
        .sum();
    let a = &mut st.persist.aof;
    a.manifest = m;
    a.file = Some(f);
    a.current_size = size;
    a.base_size = size;
    a.selected_db = None;
    a.state = AofState::On;
    store::set_log_expired(true);
    Ok(())
}

const CHECK_AOF_HINT: &str =
    "make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>";

/// Loads one file: an RDB preamble if it starts with `REDIS`, then commands, replayed through the
/// loader as a client would send them (MULTI/EXEC included).
fn load_one(
    config: &Config,
    loader: &mut dyn Loader,
    path: &Path,
    name: &str,
    last: bool,
) -> Result<(), String> {
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("The AOF file {name} doesn't exist"))
        }
        Err(e) => {
            return Err(format!(
                "Fatal error: can't open the append log file {name} for reading: {e}"
            ))
        }
    };
    let mut pos = 0;
    if data.starts_with(b"REDIS") {
        notice!("Reading RDB base file on AOF loading...");
        pos = loader.preamble(&data, name)?;
    }
    match replay(loader, &data, pos, name)? {
        Stop::Done => Ok(()),
        Stop::Truncated(valid) => {
            if !(last && config.aof_load_truncated) {
                return Err(format!("Unexpected end of file reading the append only file {name} (offset {valid}). You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."));
            }
            warning!("!!! Warning: short read while loading the AOF file {name}!!!");
            warning!("!!! Truncating the AOF {name} at offset {valid} !!!");
            OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(valid as u64))
                .map_err(|e| format!("Error truncating the AOF file {name}: {e}"))?;
            warning!("AOF {name} loaded anyway because aof-load-truncated is enabled");
            Ok(())
        }
    }
}

/// Replays the commands from `pos` into `loader`, read by the server's request parser. Unlike a
/// client's, a file's command must be a multibulk of at least one argument, as Redis's loader
/// requires.
fn replay(loader: &mut dyn Loader, data: &[u8], pos: usize, name: &str) -> Result<Stop, String> {
    let bad = |at: usize| {
        format!(
            "Bad file format reading the append only file {name} at offset {at}: {CHECK_AOF_HINT}"
        )
    };
    // No bulk length limit: the file holds what the server accepted.
    let limits = Limits {
        proto_max_bulk_len: i64::MAX,
        unauthenticated: false,
    };
    let mut parser = Parser::default();
    parser.skip_to(pos);
    let mut valid_before_multi = 0;
    let mut in_multi = false;
    loop {
        let start = parser.position();
        if start >= data.len() {
            break;
        }
        // Timestamp annotations (`#TS:...`) that aof-timestamp-enabled adds: skipped, as Redis.
        if data[start] == b'#' {
            match memchr::memchr(b'\n', &data[start..]) {
                Some(nl) => {
                    parser.skip_to(start + nl + 1);
                    continue;
                }
                None => return Ok(Stop::Truncated(start)),
            }
        }
        // Where a command cut short is truncated: before an unfinished MULTI, with it.
        let cut = Stop::Truncated(if in_multi { valid_before_multi } else { start });
        if data[start] != b'*' || matches!(data.get(start + 1), Some(b'0' | b'-')) {
            return Err(bad(start));
        }
        match parser.next(data, &limits) {
            Parsed::Command => {}
            Parsed::Incomplete => return Ok(cut),
            Parsed::Error(_) => return Err(bad(start)),
        }
        let args = parser.args(data);
        if !loader.knows(&args[0]) {
            return Err(format!(
                "Unknown command '{}' reading the append only file {name}",
                String::from_utf8_lossy(&args[0])
            ));
        }
        if args[0].eq_ignore_ascii_case(b"multi") {
            valid_before_multi = start;
            in_multi = true;
        } else if args[0].eq_ignore_ascii_case(b"exec") {
            in_multi = false;
        }
        loader.command(args);
    }
    if in_multi {
        // A MULTI without its EXEC at the very end: the transaction never ran (Redis reverts it).
        warning!("Revert incomplete MULTI/EXEC transaction in AOF file {name}");
        return Ok(Stop::Truncated(valid_before_multi));
    }
    Ok(Stop::Done)
}

// ---------------------------------------------------------------------------------------------
// INFO

/// The AOF lines of INFO persistence, as Redis 7.0 prints them.
pub fn info(p: &Persist, o: &mut String) {
    let a = &p.aof;
    let mut f = |k: &str, v: String| {
        let _ = write!(o, "{k}:{v}\r\n");
    };
    f(
        "aof_enabled",
        u8::from(a.state != AofState::Off).to_string(),
    );
    f(
        "aof_rewrite_in_progress",
        u8::from(a.child.is_some()).to_string(),
    );
    f("aof_rewrite_scheduled", u8::from(a.scheduled).to_string());
    f("aof_last_rewrite_time_sec", a.last_rewrite_secs.to_string());
    f(
        "aof_current_rewrite_time_sec",
        a.child
            .as_ref()
            .map_or(-1, |c| c.started.elapsed().as_secs() as i64)
            .to_string(),
    );
    f(
        "aof_last_bgrewrite_status",
        if a.last_rewrite_ok { "ok" } else { "err" }.into(),
    );
    f("aof_rewrites", a.rewrites.to_string());
    f(
        "aof_rewrites_consecutive_failures",
        a.consecutive_failures.to_string(),
    );
    f(
        "aof_last_write_status",
        if a.last_write_error.is_none() {
            "ok"
        } else {
            "err"
        }
        .into(),
    );
    f("aof_last_cow_size", "0".into());
    f("module_fork_in_progress", "0".into());
    f("module_fork_last_cow_size", "0".into());
    if a.state != AofState::Off {
        f("aof_current_size", a.current_size.to_string());
        f("aof_base_size", a.base_size.to_string());
        f("aof_pending_rewrite", u8::from(a.scheduled).to_string());
        f("aof_buffer_length", a.buf.len().to_string());
        let busy = a
            .fsyncer
            .as_ref()
            .is_some_and(|f| f.busy.load(Ordering::Acquire));
        f("aof_pending_bio_fsync", u8::from(busy).to_string());
        f("aof_delayed_fsync", a.delayed_fsync.to_string());
    }
}

/// The refusal of writes while the AOF can't be written (Redis's `writeCommandsDeniedByDiskError`).
pub fn write_error(p: &Persist) -> Option<String> {
    let e = p.aof.last_write_error.as_ref()?;
    Some(format!("MISCONF Errors writing to the AOF file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trip_and_redis_format() {
        let text = b"file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.base_seq, 1);
        assert_eq!(m.incr_seq, 2);
        assert_eq!(m.render().as_bytes(), text);
        let q = Manifest::parse(b"file \"a b.aof\" seq 3 type b\n").unwrap();
        assert_eq!(q.base.as_ref().unwrap().name, "a b.aof");
        assert_eq!(q.render(), "file \"a b.aof\" seq 3 type b\n");
        assert!(Manifest::parse(b"file x seq 1\n").is_err());
    }
}
