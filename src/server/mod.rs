//! The server: one `mio` reactor on one thread. Listeners accept into a `slab` of clients; readable
//! clients have every complete command in their query buffer executed inline through the gate, with
//! replies appended to their reply buffer; once per loop turn every client with output is flushed
//! (WRITABLE interest only while the kernel buffer is full), so a pipeline gets its replies in as few
//! writes as the socket takes. A timer runs the cron (`hz`): active expiry, idle timeouts, stats.
//!
//! Entry points: `Server::new` (binds), `Server::run` (until SHUTDOWN or a signal).
//!
//! This is the kernel: it names no command family (`main` builds the table from
//! `cmd::families()`) and no engine (it holds the scripting layer as `script_host::Scripts`);
//! below it, `persist/` works on what `persistence.rs` lends it.

pub mod acl;
pub mod blocking;
pub mod client;
pub mod ctx;
pub mod evict;
pub mod gate;
pub mod key_events;
pub mod keyspec;
pub mod latency;
pub mod lazyfree;
pub mod monitor;
pub mod multi;
pub mod notify;
pub mod pause;
pub mod persistence;
pub mod primary;
pub mod propagate;
pub mod pubsub;
pub mod replica;
pub mod script_host;
mod signals;
pub mod slowlog;
pub mod supervise;
pub mod table;
pub mod tracking;

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, UnixListener};
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use crate::config::Config;
use crate::resp::parser::{Limits, Parsed};
use crate::server::ctx::Ctx;
use crate::server::table::Table;
use crate::store::{self, Db};
use crate::util::clock;
use crate::{notice, verbose, warning};
use client::{Client, Conn};

/// Everything commands work on, apart from the clients.
pub struct State {
    pub config: Config,
    pub config_file: Option<PathBuf>,
    pub dbs: Vec<Db>,
    pub table: Table,
    /// ACL users and the security log.
    pub acl: acl::Acl,
    pub stats: Stats,
    /// Changes since start (Redis's `server.dirty`), for INFO and later for save points.
    pub dirty: u64,
    pub shutdown: Option<Shutdown>,
    pub started: Instant,
    pub run_id: String,
    pub tcp_port: u16,
    /// Clients CLIENT KILL closed, to be dropped after the current batch.
    pub kill_list: Vec<usize>,
    /// Who waits on which key (WATCH, blocking commands), fed by `Ctx::signal_modified`.
    pub key_events: key_events::KeyEvents,
    /// Blocked clients' timers and the serving of ready keys (BLPOP, BZPOPMIN, ...).
    pub blocking: blocking::Blocking,
    /// The scripting layer (its engines, script caches and function libraries).
    pub scripting: Box<dyn script_host::Scripts>,
    /// The script running now, if one is.
    pub script_running: script_host::Running,
    /// `script_host::Run`'s buffers, kept between runs.
    pub script_scratch: Option<Box<script_host::Scratch>>,
    /// Channel, pattern and shard channel subscribers, and the clients messages went to.
    pub pubsub: pubsub::PubSub,
    /// Snapshot state: last save, the BGSAVE child.
    pub persist: crate::persist::Persist,
    /// What the running command propagates (to the AOF), collected until it ends.
    pub propagation: propagate::Propagation,
    next_client_id: u64,
    /// DEBUG SET-ACTIVE-EXPIRE: whether the cron reclaims expired keys nobody reads.
    pub active_expire_enabled: bool,
    /// What the other DEBUG subcommands set (PAUSE-CRON, REPLYBUFFER).
    pub debug: DebugSettings,
    /// The replication ID INFO shows as `master_replid` (DEBUG CHANGE-REPL-ID draws a new one); a
    /// replica's is its primary's.
    pub replid: String,
    /// Replication: the primary this server follows, and the offset applied (replica.rs).
    pub repl: replica::Replication,
    /// Replication: the replicas this server serves and its backlog (primary.rs).
    pub primary: primary::Primary,
    /// `maxmemory` eviction (evict.rs).
    pub eviction: evict::Eviction,
    /// CLIENT PAUSE (pause.rs).
    pub pause: pause::Pause,
    /// `used_memory` once the server was up, before loading data (INFO's `used_memory_startup`).
    pub startup_memory: usize,
    pub slowlog: slowlog::Slowlog,
    /// The latency monitor and the commands' latency histograms.
    pub latency: latency::Latency,
    /// Slab keys of the clients in MONITOR mode.
    pub monitors: Vec<usize>,
    /// Client-side caching: the keys tracking clients may hold, BCAST prefixes.
    pub tracking: tracking::Tracking,
}

/// What DEBUG sets that the rest of the server reads (Redis keeps these in `server.*`).
pub struct DebugSettings {
    /// PAUSE-CRON: the cron skips its periodic work (active expiry, idle timeouts, save points,
    /// stats) while set.
    pub pause_cron: bool,
    /// REPLYBUFFER PEAK-RESET-TIME: milliseconds between resets of a client's reply buffer peak
    /// (-1: never), which Redis's cron resizes the buffer by.
    pub reply_buffer_peak_reset_ms: i64,
    /// REPLYBUFFER RESIZING: whether that resizing runs.
    pub reply_buffer_resizing: bool,
}

impl Default for DebugSettings {
    fn default() -> Self {
        DebugSettings {
            pause_cron: false,
            // Redis's `REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME`.
            reply_buffer_peak_reset_ms: 5000,
            reply_buffer_resizing: true,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
pub enum Shutdown {
    Requested,
    Signal(i32),
}

#[derive(Default)]
pub struct Stats {
    pub total_connections_received: u64,
    pub total_commands_processed: u64,
    pub rejected_connections: u64,
    pub total_net_input_bytes: u64,
    pub total_net_output_bytes: u64,
    pub total_error_replies: u64,
    pub errorstats: HashMap<String, u64>,
    /// (time, commands) samples for instantaneous_ops_per_sec.
    pub ops_samples: Vec<(Instant, u64)>,
    pub expired_stale_perc: f64,
    pub expire_cycle_cpu_ms: u64,
    /// Error replies already accounted to a command's failed_calls in this batch (Redis's
    /// `prev_err_count`): EXEC is not failed by its queued commands' errors.
    pub err_mark: usize,
}

/// `State::used_memory`, for a server running `scripting`.
fn used_memory_beside(scripting: &dyn script_host::Scripts) -> usize {
    crate::alloc::used().saturating_sub(scripting.vm_in_rust())
}

impl State {
    /// INFO's `used_memory`, what `maxmemory` limits (less the AOF buffer, `evict.rs`), what
    /// MEMORY STATS calls `total.allocated`: the bytes the server allocated for everything but the
    /// scripting VMs — the keys, clients and their buffers, the script caches' bodies. As in Redis,
    /// whose Lua VM allocates outside zmalloc's counter: a script's garbage never costs a user's
    /// keys, and the VMs are reported on their own (`used_memory_vm_*`, bounded each by its
    /// `<engine>-memory-limit`). Most VMs allocate with malloc, outside the Rust allocator's count;
    /// Luau's allocates through it, so its bytes are taken out (while a Luau script runs, those
    /// of its VM when it started).
    pub fn used_memory(&self) -> usize {
        used_memory_beside(&*self.scripting)
    }

    /// The highest `used_memory` so far (INFO `used_memory_peak`), kept by the allocator, which
    /// leaves the Luau VM out (see `alloc::set_vm`).
    pub fn peak_memory(&self) -> usize {
        crate::alloc::data_peak().max(self.used_memory())
    }

    /// The state of a server started with `config` (read from `config_file`), running the
    /// commands of `table` and the scripts of `scripting`.
    pub fn new(
        config: Config,
        config_file: Option<PathBuf>,
        table: Table,
        scripting: Box<dyn script_host::Scripts>,
    ) -> State {
        let dbs = (0..config.databases).map(|_| Db::default()).collect();
        let run_id = crate::util::random_hex40();
        notify::configure(config.notify_keyspace_events);
        crate::store::set_lazy_expire(config.lazyfree_lazy_expire);
        crate::store::set_lazy_server_del(config.lazyfree_lazy_server_del);
        let mut state = State {
            scripting,
            script_running: Default::default(),
            script_scratch: Default::default(),
            config,
            config_file,
            dbs,
            acl: acl::Acl::new(&table),
            table,
            stats: Stats::default(),
            dirty: 0,
            shutdown: None,
            started: Instant::now(),
            run_id,
            tcp_port: 0,
            kill_list: Vec::new(),
            key_events: key_events::KeyEvents::default(),
            blocking: blocking::Blocking::default(),
            pubsub: pubsub::PubSub::default(),
            persist: crate::persist::Persist::default(),
            propagation: Default::default(),
            next_client_id: 1,
            active_expire_enabled: true,
            debug: Default::default(),
            replid: crate::util::random_hex40(),
            repl: Default::default(),
            primary: Default::default(),
            eviction: evict::Eviction::default(),
            pause: pause::Pause::default(),
            startup_memory: 0,
            slowlog: Default::default(),
            latency: Default::default(),
            monitors: Vec::new(),
            tracking: Default::default(),
        };
        evict::configure_stamps(&mut state);
        let password = state.config.requirepass.clone();
        state
            .acl
            .set_default_password(&state.table, password.as_bytes());
        state
    }

    pub fn instantaneous_ops(&self) -> u64 {
        let s = &self.stats.ops_samples;
        match (s.first(), s.last()) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                ((b.1 - a.1) as f64 / (b.0 - a.0).as_secs_f64()).round() as u64
            }
            _ => 0,
        }
    }
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

const SIGNAL_TOKEN: Token = Token(usize::MAX - 1);
const LISTENER_BASE: usize = usize::MAX - 64;

/// What the event loop owns besides the keyspace and the clients: the poller, the listening sockets,
/// the signal pipe and per-turn scratch. Kept apart from `State` and the clients so a command that
/// must keep the server responsive (a script past `busy-reply-threshold`) can be handed it and serve
/// the other clients from inside its own run (`Io::busy_turn`).
pub struct Reactor {
    poll: Poll,
    listeners: Vec<Listener>,
    signals: signals::SignalPipe,
    /// Clients that have output to flush this turn.
    pending: Vec<usize>,
    read_buf: Vec<u8>,
    /// Clients whose input arrived while they could not be read (the one running a busy script):
    /// read once the current command is over.
    reread: Vec<usize>,
    /// The readiness the last poll reported, handled in order from `batch_next`. A busy script's
    /// turn handles what is left of it first: edge-triggered readiness is reported once, so a
    /// client whose event came in the same poll as the script's would otherwise go unread until
    /// the script ends.
    batch: Vec<Ready>,
    batch_next: usize,
    events: Events,
}

/// One poll event, copied out of `mio::Events` so a busy turn can take over the rest of a batch.
#[derive(Clone, Copy)]
struct Ready {
    token: usize,
    readable: bool,
    read_closed: bool,
    writable: bool,
}

pub struct Server {
    reactor: Reactor,
    pub clients: Slab<Client>,
    pub state: State,
}

/// The event loop's working set, borrowed apart: what accepting, reading, executing and writing use.
/// The main loop builds it from the `Server`; a busy script builds it from its own command's `Ctx`.
pub struct Io<'a> {
    r: &'a mut Reactor,
    state: &'a mut State,
    clients: &'a mut Slab<Client>,
}

const READ_CHUNK: usize = 16 * 1024;

/// The TCP listening sockets of `bind` and `port` (none for port 0), and the port they listen on.
fn listen_tcp(cfg: &Config) -> io::Result<(Vec<TcpListener>, u16)> {
    let mut listeners = Vec::new();
    let mut port = 0;
    if cfg.port == 0 {
        return Ok((listeners, port));
    }
    for b in &cfg.bind {
        let (optional, host) = match b.strip_prefix('-') {
            Some(h) => (true, h),
            None => (false, b.as_str()),
        };
        let host = match host {
            "*" => "0.0.0.0",
            "::*" => "::",
            h => h,
        };
        let addr: SocketAddr = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => SocketAddr::new(ip, cfg.port as u16),
            Err(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("Invalid bind address '{host}'"),
                ))
            }
        };
        match TcpListener::bind(addr) {
            Ok(l) => {
                set_backlog(&l, cfg.tcp_backlog);
                port = l.local_addr()?.port();
                listeners.push(l);
            }
            Err(e) if optional => {
                verbose!("Could not bind optional address {addr}: {e}");
            }
            Err(e) => {
                warning!("Warning: Could not create server TCP listening socket {addr}: {e}");
                return Err(e);
            }
        }
    }
    Ok((listeners, port))
}

/// Registers every listener with the poller under its index's token.
fn register_listeners(poll: &Poll, listeners: &mut [Listener]) -> io::Result<()> {
    for (i, l) in listeners.iter_mut().enumerate() {
        let token = Token(LISTENER_BASE + i);
        match l {
            Listener::Tcp(t) => poll.registry().register(t, token, Interest::READABLE)?,
            Listener::Unix(u) => poll.registry().register(u, token, Interest::READABLE)?,
        }
    }
    Ok(())
}

impl Reactor {
    /// CONFIG SET port/bind (Redis's `changeListenPort`/`applyBind`): closes the TCP listeners and
    /// listens as `new` says; if that fails, listens as `old` said again and returns the error.
    /// Connected clients stay. Ok: the port now listened on.
    pub fn rebind_tcp(&mut self, new: &Config, old: &Config) -> io::Result<u16> {
        let registry = self.poll.registry();
        for l in &mut self.listeners {
            match l {
                Listener::Tcp(t) => registry.deregister(t)?,
                Listener::Unix(u) => registry.deregister(u)?,
            }
        }
        // Closed before binding anew: the same address may be asked for again.
        self.listeners.retain(|l| matches!(l, Listener::Unix(_)));
        let (tcp, outcome) = match listen_tcp(new) {
            Ok((tcp, port)) => (tcp, Ok(port)),
            Err(e) => match listen_tcp(old) {
                Ok((tcp, _)) => (tcp, Err(e)),
                Err(again) => {
                    warning!("Failed to listen again on the previous addresses: {again}");
                    (Vec::new(), Err(e))
                }
            },
        };
        let unix = std::mem::take(&mut self.listeners);
        self.listeners = tcp.into_iter().map(Listener::Tcp).chain(unix).collect();
        register_listeners(&self.poll, &mut self.listeners)?;
        outcome
    }
}

impl Server {
    pub fn new(state: State) -> io::Result<Server> {
        let poll = Poll::new()?;
        let mut state = state;
        let (tcp, port) = listen_tcp(&state.config)?;
        state.tcp_port = port;
        let mut listeners: Vec<Listener> = tcp.into_iter().map(Listener::Tcp).collect();
        let cfg = &state.config;
        if !cfg.unixsocket.is_empty() {
            let _ = std::fs::remove_file(&cfg.unixsocket);
            let l = UnixListener::bind(&cfg.unixsocket)?;
            if cfg.unixsocketperm != 0 {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(
                    &cfg.unixsocket,
                    std::fs::Permissions::from_mode(cfg.unixsocketperm as u32),
                )?;
            }
            listeners.push(Listener::Unix(l));
        }
        if listeners.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "Configured to not listen anywhere, exiting.",
            ));
        }
        register_listeners(&poll, &mut listeners)?;
        let mut signals = signals::SignalPipe::install()?;
        poll.registry()
            .register(signals.source(), SIGNAL_TOKEN, Interest::READABLE)?;
        Ok(Server {
            reactor: Reactor {
                poll,
                listeners,
                signals,
                pending: Vec::new(),
                read_buf: vec![0u8; READ_CHUNK],
                reread: Vec::new(),
                events: Events::with_capacity(1024),
                batch: Vec::new(),
                batch_next: 0,
            },
            clients: Slab::new(),
            state,
        })
    }

    pub fn tcp_port(&self) -> u16 {
        self.state.tcp_port
    }

    /// Runs the event loop until a shutdown is requested.
    pub fn run(&mut self) -> io::Result<()> {
        let mut io = Io {
            r: &mut self.reactor,
            state: &mut self.state,
            clients: &mut self.clients,
        };
        if let Some((host, port)) = io.state.config.replicaof.clone() {
            io.set_master(host, port);
        }
        io.run()
    }
}

impl<'a> Io<'a> {
    pub fn new(r: &'a mut Reactor, state: &'a mut State, clients: &'a mut Slab<Client>) -> Self {
        Io { r, state, clients }
    }

    /// One turn of the event loop while a script runs past its time budget (Redis's
    /// `processEventsWhileBlocked`): accept, read and answer the other clients — the gate refuses
    /// their commands with BUSY but for SCRIPT KILL, SHUTDOWN NOSAVE and the few Redis allows —
    /// and flush the replies. The script's own client is not read now (its command is running);
    /// its readiness is kept in `reread`.
    pub fn busy_turn(&mut self, script_client: usize) {
        // First what the poll that started the script reported for others, then anything new.
        self.handle_batch(Some(script_client));
        if self.poll_batch(Some(Duration::ZERO)).is_ok() {
            self.handle_batch(Some(script_client));
        }
        // The script may have started inside an accept loop (its client's data came with the
        // connection): connections queued behind it were reported by that same edge, so no event
        // will name them again.
        for which in 0..self.r.listeners.len() {
            self.accept(which);
        }
        self.flush_pending();
    }

    /// Polls into `batch` (left empty on an error).
    fn poll_batch(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let r = &mut *self.r;
        r.batch.clear();
        r.batch_next = 0;
        match r.poll.poll(&mut r.events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
        }
        r.batch.extend(r.events.iter().map(|ev| Ready {
            token: ev.token().0,
            readable: ev.is_readable() || ev.is_error(),
            read_closed: ev.is_read_closed(),
            writable: ev.is_writable(),
        }));
        Ok(())
    }

    /// Handles the batch's events not handled yet. `script_client` runs a busy script: its own
    /// input waits for the script to end (`reread`).
    fn handle_batch(&mut self, script_client: Option<usize>) {
        while let Some(&ev) = self.r.batch.get(self.r.batch_next) {
            self.r.batch_next += 1;
            let t = ev.token;
            if t == SIGNAL_TOKEN.0 {
                if let Some(sig) = self.r.signals.drain() {
                    self.state.shutdown = Some(Shutdown::Signal(sig));
                }
            } else if t == replica::LINK_TOKEN {
                self.link_event();
            } else if t >= LISTENER_BASE {
                self.accept(t - LISTENER_BASE);
            } else if Some(t) == script_client {
                self.r.reread.push(t);
            } else {
                if ev.readable || ev.read_closed {
                    self.read_client(t, ev.read_closed);
                }
                if ev.writable && self.clients.contains(t) {
                    self.r.pending.push(t);
                }
            }
        }
    }

    fn run(&mut self) -> io::Result<()> {
        let mut next_cron = Instant::now();
        loop {
            let now = Instant::now();
            let mut timeout = next_cron.saturating_duration_since(now);
            if let Some(t) = self.state.blocking.next_timeout() {
                timeout = timeout.min(t);
            }
            if self.state.eviction.running {
                timeout = Duration::ZERO;
            }
            if let Some(t) = self.state.pause.time_left() {
                timeout = timeout.min(t);
            }
            self.poll_batch(Some(timeout))?;
            clock::update();
            self.handle_batch(None);
            for key in std::mem::take(&mut self.r.reread) {
                self.read_client(key, false);
            }
            blocking::handle_timeouts(self.state, self.clients);
            if self.state.eviction.running && self.state.pause.kind().is_none() {
                self.evict_more();
            }
            pause::resume(self.state, self.clients, Some(&mut *self.r));
            self.process_unblocked();
            self.broadcast_invalidations();
            // The turn's writes reach the AOF (and, with `appendfsync always`, the disk) before
            // any reply to them leaves.
            propagate::expired_between_commands(self.state);
            lazyfree::free_let_go(
                &mut self.state.dbs,
                self.state.config.list_max_listpack_size,
            );
            persistence::flush_aof(self.state);
            self.deliver_stream();
            self.flush_pending();
            if Instant::now() >= next_cron {
                self.cron();
                let hz = self.state.config.hz.clamp(1, 500) as u64;
                next_cron = Instant::now() + Duration::from_micros(1_000_000 / hz);
            }
            if let Some(why) = self.state.shutdown {
                if let Shutdown::Signal(sig) = why {
                    if !self.final_save(sig) {
                        self.state.shutdown = None;
                        continue;
                    }
                }
                self.prepare_shutdown(why);
                return Ok(());
            }
        }
    }

    fn accept(&mut self, which: usize) {
        loop {
            // An event may name a listener CONFIG SET port/bind has since closed.
            let Some(listener) = self.r.listeners.get(which) else {
                return;
            };
            let accepted = match listener {
                Listener::Tcp(l) => l.accept().map(|(s, peer)| {
                    let laddr = s.local_addr().map(|a| a.to_string()).unwrap_or_default();
                    let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
                    let _ = s.set_nodelay(true);
                    set_keepalive(fd, self.state.config.tcp_keepalive);
                    (
                        Conn::Tcp(s),
                        fd,
                        peer.to_string(),
                        laddr,
                        false,
                        // Redis's `islocalClient`: these two addresses only, not all of 127/8.
                        peer.ip() == std::net::Ipv4Addr::LOCALHOST
                            || peer.ip() == std::net::Ipv6Addr::LOCALHOST,
                    )
                }),
                Listener::Unix(l) => l.accept().map(|(s, _)| {
                    let fd = std::os::fd::AsRawFd::as_raw_fd(&s);
                    let path = self.state.config.unixsocket.clone();
                    (Conn::Unix(s), fd, format!("{path}:0"), path, true, true)
                }),
            };
            let (mut conn, fd, addr, laddr, is_unix, local) = match accepted {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    warning!("Accepting client connection: {e}");
                    return;
                }
            };
            self.state.stats.total_connections_received += 1;
            let cfg = &self.state.config;
            if self.clients.len() as i64 >= cfg.maxclients {
                let _ = conn.write(b"-ERR max number of clients reached\r\n");
                self.state.stats.rejected_connections += 1;
                continue;
            }
            let default_nopass = self.state.acl.user(acl::DEFAULT).nopass();
            if cfg.protected_mode && default_nopass && !local {
                let _ = conn.write(PROTECTED_MODE_ERROR.as_bytes());
                self.state.stats.rejected_connections += 1;
                continue;
            }
            let entry = self.clients.vacant_entry();
            let token = Token(entry.key());
            if let Err(e) =
                self.r
                    .poll
                    .registry()
                    .register(conn.source(), token, Interest::READABLE)
            {
                warning!("Registering client: {e}");
                continue;
            }
            let id = self.state.next_client_id;
            self.state.next_client_id += 1;
            verbose!("Accepted {addr}");
            let mut c = Client::new(id, conn, fd, addr, laddr, is_unix);
            c.authenticated = !self.state.acl.auth_required();
            entry.insert(c);
            // Data may have arrived with the connection (edge-triggered): read it now.
            self.read_client(token.0, false);
        }
    }

    /// Reads what the client's socket has and executes every complete command. One short read
    /// means the kernel buffer is drained (edge-triggered polling reports any later data as a new
    /// event), which saves Redis-style a second `read` per request; only when the peer closed
    /// (`until_eof`) do we read on to see the end.
    fn read_client(&mut self, key: usize, until_eof: bool) {
        let Some(c) = self.clients.get_mut(key) else {
            return;
        };
        let mut closed = false;
        loop {
            match c.conn.read(&mut self.r.read_buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    let short = n < self.r.read_buf.len();
                    c.query.extend_from_slice(&self.r.read_buf[..n]);
                    self.state.stats.total_net_input_bytes += n as u64;
                    // A replica's primary is not held to it (Redis's master client is not).
                    if c.query.len() as i64 > self.state.config.client_query_buffer_limit
                        && !c.is_master
                    {
                        warning!(
                            "Closing client that reached max query buffer length: id={} addr={} (qbuf initial bytes: {:?})",
                            c.id,
                            c.addr,
                            String::from_utf8_lossy(&c.query[..c.query.len().min(64)])
                        );
                        self.close_client(key);
                        return;
                    }
                    if short && !until_eof {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        c.last_interaction = Instant::now();
        self.process_input(key);
        if closed && self.clients.contains(key) {
            self.close_client(key);
        }
    }

    /// Executes every complete command in the client's query buffer.
    fn process_input(&mut self, key: usize) {
        let c = &mut self.clients[key];
        if c.close_after_reply || c.close_asap || c.blocked.is_some() || c.postponed.is_some() {
            return;
        }
        let query = std::mem::take(&mut c.query);
        c.query_lent = (query.len(), query.capacity());
        let mut parser = std::mem::take(&mut c.parser);
        let mut out = std::mem::take(&mut c.out);
        let mut authenticated = c.authenticated;
        // A replica's primary: its commands see keys past their time (the primary deletes them),
        // and what they consumed is counted in the replication offset.
        let is_master = c.is_master;
        let mut counted_to = 0;
        loop {
            let limits = Limits {
                proto_max_bulk_len: self.state.config.proto_max_bulk_len,
                unauthenticated: !authenticated && self.state.acl.auth_required(),
            };
            match parser.next(&query, &limits) {
                Parsed::Command => {
                    let args = parser.args(&query);
                    let db = self.clients[key].db;
                    let mut ctx = Ctx {
                        srv: self.state,
                        clients: self.clients,
                        id: key,
                        db,
                        out: &mut out,
                        reactor: Some(&mut *self.r),
                    };
                    if is_master {
                        crate::store::set_obeying_master(true);
                    }
                    gate::execute(&mut ctx, args);
                    if is_master {
                        crate::store::set_obeying_master(false);
                        let end = parser.position();
                        self.count_applied(key, &mut out, &query[counted_to..end]);
                        counted_to = end;
                    }
                    if !self.state.key_events.ready.is_empty() {
                        // Serving re-executes other clients' commands: give this one its buffer back.
                        self.clients[key].out = std::mem::take(&mut out);
                        blocking::serve_ready(self.state, self.clients);
                        out = std::mem::take(&mut self.clients[key].out);
                    }
                    let c = &mut self.clients[key];
                    let limit = c.obuf_limit(&self.state.config.obuf_limits);
                    if c.over_obuf_limit(out.buf.len() - c.sent, limit) {
                        // Its reply buffer goes back first so the log line shows it.
                        c.out = std::mem::take(&mut out);
                        c.close_for_obuf();
                        out = std::mem::take(&mut c.out);
                        self.state.pubsub.to_close.push((key, c.id));
                        break;
                    }
                    authenticated = c.authenticated;
                    // A blocked or paused client's next commands wait until it is served.
                    if c.close_after_reply
                        || c.blocked.is_some()
                        || c.postponed.is_some()
                        || self.state.shutdown.is_some()
                    {
                        break;
                    }
                }
                Parsed::Incomplete => break,
                Parsed::Error(msg) => {
                    let c = &self.clients[key];
                    verbose!(
                        "Protocol error ({msg}) from client: id={} addr={}",
                        c.id,
                        c.addr
                    );
                    out.err(&msg);
                    self.clients[key].close_after_reply = true;
                    break;
                }
            }
        }
        let c = &mut self.clients[key];
        let mut query = query;
        let consumed = parser.pending_from();
        if consumed > 0 {
            query.drain(..consumed);
            parser.shift(consumed);
        }
        if query.is_empty() && query.capacity() > 64 * 1024 {
            query = Vec::new();
        }
        c.query = query;
        c.query_lent = (0, 0);
        c.parser = parser;
        c.out = out;
        for code in c.out.errors.drain(..) {
            *self.state.stats.errorstats.entry(code).or_insert(0) += 1;
            self.state.stats.total_error_replies += 1;
        }
        if c.pending_output() > 0 || c.close_after_reply {
            self.r.pending.push(key);
        }
    }

    /// Writes every client with pending output; those the kernel won't take more from get WRITABLE.
    fn flush_pending(&mut self) {
        for key in std::mem::take(&mut self.state.kill_list) {
            self.close_client(key);
        }
        self.close_over_limit();
        self.r.pending.append(&mut self.state.pubsub.notified);
        let mut pending = std::mem::take(&mut self.r.pending);
        pending.sort_unstable();
        pending.dedup();
        for key in pending.drain(..) {
            let Some(c) = self.clients.get_mut(key) else {
                continue;
            };
            match c.flush(&mut self.state.stats.total_net_output_bytes) {
                Ok(true) => {
                    if c.close_after_reply {
                        self.close_client(key);
                        continue;
                    }
                    if c.want_write {
                        c.want_write = false;
                        let _ = self.r.poll.registry().reregister(
                            c.conn.source(),
                            Token(key),
                            Interest::READABLE,
                        );
                    }
                }
                Ok(false) => {
                    if !c.want_write {
                        c.want_write = true;
                        let _ = self.r.poll.registry().reregister(
                            c.conn.source(),
                            Token(key),
                            Interest::READABLE | Interest::WRITABLE,
                        );
                    }
                }
                Err(_) => self.close_client(key),
            }
        }
        self.r.pending = pending;
    }

    /// Processes the pending input of the clients unblocked this turn (served, timed out, CLIENT
    /// UNBLOCK): the pipeline behind their blocking command.
    fn process_unblocked(&mut self) {
        loop {
            let ids = std::mem::take(&mut self.state.blocking.unblocked);
            if ids.is_empty() {
                return;
            }
            for key in ids {
                if self.clients.contains(key) {
                    self.r.pending.push(key);
                    self.process_input(key);
                }
            }
        }
    }

    /// Closes the clients found over their output buffer limit.
    fn close_over_limit(&mut self) {
        for (key, id) in std::mem::take(&mut self.state.pubsub.to_close) {
            if self.clients.get(key).is_some_and(|c| c.id == id) {
                self.close_client(key);
            }
        }
    }

    fn close_client(&mut self, key: usize) {
        let running = &self.state.script_running;
        if running.active && running.client == key {
            // Its command is still running (a busy script): close it once that returns.
            self.state.kill_list.push(key);
            return;
        }
        blocking::unblock(self.state, self.clients, key);
        if let Some(mut c) = self.clients.try_remove(key) {
            // Leave MULTI, unwatch, unsubscribe: nothing may point at a freed slab key.
            multi::discard_transaction(&mut self.state.key_events, key, &mut c);
            self.state.pubsub.unsubscribe_all(&mut c.subs, key);
            monitor::stop(self.state, &mut c, key);
            tracking::disable(&mut self.state.tracking, &mut c.tracking, c.id);
            let _ = self.r.poll.registry().deregister(c.conn.source());
            c.conn.shutdown();
            verbose!("Client closed connection id={} addr={}", c.id, c.addr);
            if c.is_master {
                self.master_client_closed(key, c.db);
            }
            if c.is_replica() {
                self.replica_closed(key);
            }
        }
    }

    /// The periodic job: close clients CLIENT KILL marked, idle timeouts, active expiry, ops sampling.
    fn cron(&mut self) {
        clock::update();
        let kill: Vec<usize> = self
            .clients
            .iter()
            .filter(|(_, c)| c.close_after_reply && c.pending_output() == 0)
            .map(|(k, _)| k)
            .collect();
        for k in kill {
            self.close_client(k);
        }
        // DEBUG PAUSE-CRON: none of the periodic work below (Redis's serverCron returns early).
        if self.state.debug.pause_cron {
            return;
        }
        let timeout = self.state.config.timeout;
        if timeout > 0 {
            let idle: Vec<usize> = self
                .clients
                .iter()
                // As Redis, a blocked client is not idle (it waits for its own timeout), and
                // subscribers only listen: Redis never times them out.
                .filter(|(_, c)| {
                    c.blocked.is_none()
                        && c.subs.total() == 0
                        && !c.is_master
                        && c.last_interaction.elapsed().as_secs() as i64 > timeout
                })
                .map(|(k, _)| k)
                .collect();
            for k in idle {
                verbose!("Closing idle client");
                self.close_client(k);
            }
        }
        self.active_expire();
        if self.state.repl.cron_due() {
            self.replication_cron();
            self.primary_cron();
        }
        // A CONFIG SET may have lowered `tracking-table-max-keys` on an idle server.
        if self.state.tracking.clients > 0 {
            self.server_ctx(tracking::limit);
        }
        // What expiry invalidated reaches the tracking clients now, not after the next poll.
        self.broadcast_invalidations();
        if !self.state.pubsub.notified.is_empty() {
            self.flush_pending();
        }
        self.state.scripting.collect_due();
        crate::persist::cron(&mut self.state.persistence());
        self.sync_replicas();
        let samples = &mut self.state.stats.ops_samples;
        samples.push((Instant::now(), self.state.stats.total_commands_processed));
        if samples.len() > 16 {
            samples.remove(0);
        }
    }

    /// Runs `f` with a context no client owns, for the server's own work between commands (its
    /// watchers and subscribers are all other clients).
    fn server_ctx(&mut self, f: impl FnOnce(&mut Ctx)) {
        let mut out = crate::resp::reply::Reply::default();
        let mut ctx = Ctx {
            srv: self.state,
            clients: self.clients,
            id: usize::MAX,
            db: 0,
            out: &mut out,
            reactor: None,
        };
        f(&mut ctx);
    }

    /// Sends the BCAST invalidations of the keys changed this turn (in Redis's `beforeSleep`).
    fn broadcast_invalidations(&mut self) {
        if tracking::broadcast_due(&self.state.tracking) {
            self.server_ctx(tracking::broadcast);
        }
    }

    /// Goes on evicting after a command's round ran out of time (Redis's `evictionTimeProc`).
    fn evict_more(&mut self) {
        self.server_ctx(|ctx| {
            evict::perform(ctx);
        });
    }

    /// Redis's slow active expiry cycle: at most 25% of a cron period, spread over every database.
    fn active_expire(&mut self) {
        // Nothing expires while clients are paused: the dataset holds still.
        // A replica's keys expire by its primary's DELs (they read as expired meanwhile).
        if !self.state.active_expire_enabled
            || self.state.pause.kind().is_some()
            || self.state.repl.master.is_some()
        {
            return;
        }
        let hz = self.state.config.hz.clamp(1, 500) as u64;
        let effort = self.state.config.active_expire_effort.clamp(1, 10) as usize;
        let per_round = 20 + 5 * (effort - 1);
        let budget_us = 1_000_000 * (25 + 2 * (effort as u64 - 1)) / 100 / hz;
        let start = clock::monotonic_us();
        let deadline = start + budget_us;
        let (mut sampled, mut expired) = (0, 0);
        let watching = !self.state.key_events.is_empty() || self.state.tracking.watching();
        let mut gone = Vec::new();
        for (i, db) in self.state.dbs.iter_mut().enumerate() {
            let run = db.active_expire_cycle(per_round, deadline, |key| {
                if watching {
                    gone.push((i, key.to_vec()));
                }
            });
            sampled += run.sampled;
            expired += run.expired;
            if clock::monotonic_us() >= deadline {
                break;
            }
        }
        if sampled > 0 {
            let perc = expired as f64 / sampled as f64;
            let s = &mut self.state.stats;
            s.expired_stale_perc = perc * 0.05 + s.expired_stale_perc * 0.95;
        }
        let elapsed_ms = (clock::monotonic_us() - start) / 1000;
        self.state.stats.expire_cycle_cpu_ms += elapsed_ms;
        latency::sample(self.state, "expire-cycle", elapsed_ms);
        if gone.is_empty() && !store::events_recorded() {
            return;
        }
        self.server_ctx(|ctx| {
            notify::flush_store_events(ctx);
            // As Redis's active expiry, a reclaimed key is a change for its watchers.
            for (db, key) in gone {
                ctx.signal_removed_in(db, &key);
            }
        });
        // A blocked XREADGROUP whose stream expired is released now.
        if !self.state.key_events.ready.is_empty() {
            blocking::serve_ready(self.state, self.clients);
            self.process_unblocked();
            self.flush_pending();
        }
    }

    /// On SIGTERM/SIGINT: stop a BGSAVE child and save when save points are configured, or as
    /// `shutdown-on-sigint`/`shutdown-on-sigterm` say (Redis's `prepareForShutdown` with those
    /// flags; `now` has no replicas to skip waiting for). False if the save failed without
    /// `force`: the server then keeps running.
    fn final_save(&mut self, sig: i32) -> bool {
        use crate::config::{SHUTDOWN_FORCE, SHUTDOWN_NOSAVE, SHUTDOWN_SAVE};
        let cfg = &self.state.config;
        let flags = if sig == libc::SIGINT {
            cfg.shutdown_on_sigint
        } else {
            cfg.shutdown_on_sigterm
        };
        let force = flags & SHUTDOWN_FORCE != 0;
        let failed = "SIGTERM received but errors trying to shut down the server, check the logs for more information";
        if crate::persist::aof::refuses_shutdown(&self.state.persist, force) {
            warning!("{failed}");
            return false;
        }
        crate::persist::kill_child(&mut self.state.persistence());
        let save = flags & SHUTDOWN_SAVE != 0
            || (flags & SHUTDOWN_NOSAVE == 0
                && !crate::persist::save_rules(&self.state.config).is_empty());
        if !save {
            return true;
        }
        notice!("Saving the final RDB snapshot before exiting.");
        if crate::persist::save(&mut self.state.persistence()).is_err() {
            if force {
                warning!("Error trying to save the DB. Exit anyway.");
                return true;
            }
            warning!("Error trying to save the DB, can't exit.");
            warning!("{failed}");
            return false;
        }
        true
    }

    fn prepare_shutdown(&mut self, why: Shutdown) {
        supervise::stopping();
        crate::persist::aof::shutdown(&mut self.state.persistence());
        match why {
            Shutdown::Signal(sig) => warning!(
                "Received {} scheduling shutdown...",
                if sig == libc::SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                }
            ),
            Shutdown::Requested => warning!("User requested shutdown..."),
        }
        let keys: Vec<usize> = self.clients.iter().map(|(k, _)| k).collect();
        for k in keys {
            // Replies already produced (e.g. to a pipeline before SHUTDOWN) still go out.
            let c = &mut self.clients[k];
            let _ = c.flush(&mut self.state.stats.total_net_output_bytes);
            self.close_client(k);
        }
        let cfg = &self.state.config;
        if !cfg.unixsocket.is_empty() {
            let _ = std::fs::remove_file(&cfg.unixsocket);
        }
        if !cfg.pidfile.is_empty() {
            let _ = std::fs::remove_file(&cfg.pidfile);
        }
        warning!("Goblin Core is now ready to exit, bye bye...");
    }
}

fn set_backlog(l: &TcpListener, backlog: i64) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(l);
    // SAFETY: listen() on our own listening socket only changes its backlog.
    unsafe {
        libc::listen(fd, backlog as libc::c_int);
    }
}

/// TCP keepalive as Redis's `anetKeepAlive`: first probe after `interval`, then every third of it.
fn set_keepalive(fd: i32, interval: i64) {
    if interval <= 0 {
        return;
    }
    let set = |level, opt, val: libc::c_int| {
        // SAFETY: setsockopt with a valid int option on our own socket.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                opt,
                &val as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    };
    let interval = interval.min(i32::MAX as i64) as libc::c_int;
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, interval);
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPINTVL,
        (interval / 3).max(1),
    );
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3);
}

const PROTECTED_MODE_ERROR: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Logs the start-up lines a Redis user expects to see.
pub fn log_ready(server: &Server) {
    notice!("Server initialized");
    if server.state.tcp_port != 0 {
        notice!("Ready to accept connections tcp");
    }
    if !server.state.config.unixsocket.is_empty() {
        notice!("Ready to accept connections unix");
    }
    supervise::ready();
}
