//! The replica side of replication (Redis 7.0's `replication.c`: `connectWithMaster`,
//! `syncWithMaster`, `readSyncBulkPayload`, `replicationSendAck`).
//!
//! `REPLICAOF host port` (or the `replicaof` directive) makes this server a replica: the link to
//! the primary goes through these states, driven by the event loop (`Io::link_event`) and the
//! cron (`Io::replication_cron`), never blocking it:
//!
//! - `Connecting`: a non-blocking connect; once writable, the handshake is sent as Redis 7.0
//!   sends it: `PING`, then back to back `AUTH` (with `masterauth`), `REPLCONF listening-port`,
//!   `REPLCONF ip-address` (with `replica-announce-ip`) and `REPLCONF capa eof capa psync2`.
//! - `Handshake`: one reply line per request; then `PSYNC <replid> <offset+1>` (what this server
//!   last applied, or `? -1`).
//! - `Transfer`: after `+FULLRESYNC <replid> <offset>`, the RDB as `$<len>\r\n<bytes>` (disk-based)
//!   or `$EOF:<40 bytes>\r\n<bytes><the same 40 bytes>` (diskless), received whole before anything
//!   is touched, then loaded into fresh databases that replace the old ones: a primary lost
//!   mid-transfer leaves the old data set, never a mix.
//! - Connected: the socket becomes the master client (`Client::is_master`), whose commands run
//!   through the gate like anyone's, but unrefused (no ACL, no read-only check), unanswered
//!   (`ReplyMode::Off`), and with expired keys still there for them. What it applied is counted in
//!   `offset` (a MULTI ... EXEC block at its EXEC); `REPLCONF ACK <offset>` goes back every second
//!   and at once on `REPLCONF GETACK`. `+CONTINUE` (a partial resync) goes straight here.
//!
//! A dropped link keeps the primary's replication ID and the offset applied, so the next attempt
//! asks for a partial resync. `REPLICAOF NO ONE` promotes: the old ID becomes `master_replid2`
//! up to this offset and a new one is drawn.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::ToSocketAddrs;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Token};

use super::client::{Client, Conn, ReplyMode};
use super::Io;
use crate::resp::reply::Reply;
use crate::{notice, warning};

/// The poll token of the link while it is not yet the master client.
pub const LINK_TOKEN: usize = usize::MAX - 2;

/// Redis's `CONFIG_RUN_ID_SIZE`: a replication ID's length.
const REPLID_LEN: usize = 40;

/// What the server knows of replication: whom it follows, and how far it got.
pub struct Replication {
    /// The primary to follow (REPLICAOF), `None` on a primary.
    pub master: Option<(String, u16)>,
    link: Link,
    /// The master client's slab key, once the link is up.
    pub master_client: Option<usize>,
    /// `master_repl_offset`: on a replica, the primary's stream applied so far.
    pub offset: i64,
    /// `master_replid2` and `second_repl_offset`: the history this server continues (after a
    /// promotion, its old primary's).
    pub replid2: String,
    pub second_offset: i64,
    /// Where this server's data set starts in the replication history (the full sync's offset),
    /// for the backlog fields; `None` before the first sync.
    pub history_start: Option<i64>,
    /// The primary's stream read but not applied yet: a MULTI block until its EXEC.
    pub unapplied: Vec<u8>,
    /// The database the primary's stream has selected, kept across a dropped link (a partial
    /// resync goes on where it was, without a SELECT).
    master_db: usize,
    /// The master's REPLCONF GETACK asked for an ACK after the command.
    pub ack_asked: bool,
    /// When the link last went down (`master_link_down_since_seconds`), `None` before it ever
    /// came up.
    pub down_since: Option<Instant>,
    /// The last byte received from the primary (`master_last_io_seconds_ago`, `repl-timeout`).
    pub last_io: Instant,
    /// When the once-a-second replication cron last ran.
    last_cron: Instant,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            master: None,
            link: Link::Idle,
            master_client: None,
            offset: 0,
            replid2: "0".repeat(REPLID_LEN),
            second_offset: -1,
            history_start: None,
            unapplied: Vec::new(),
            master_db: 0,
            ack_asked: false,
            down_since: None,
            last_io: Instant::now(),
            last_cron: Instant::now(),
        }
    }
}

enum Link {
    /// No primary, or waiting for the cron to connect again.
    Idle,
    Connecting(TcpStream),
    Handshake {
        stream: TcpStream,
        buf: Vec<u8>,
        /// The requests whose reply lines are still to come, oldest first.
        waiting: VecDeque<Step>,
    },
    Transfer {
        stream: TcpStream,
        buf: Vec<u8>,
        size: Payload,
        /// The primary's replication ID and offset from `+FULLRESYNC`.
        replid: String,
        offset: i64,
    },
    Connected,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Step {
    Ping,
    Auth,
    Port,
    Ip,
    Capa,
    Psync,
}

/// How the RDB payload ends.
enum Payload {
    /// The `$...` line has not come yet.
    Unknown,
    Length(usize),
    /// Diskless: the payload ends with this 40-byte mark.
    Mark([u8; REPLID_LEN]),
}

impl Replication {
    /// Whether the once-a-second work is due (the server's cron runs `hz` times a second).
    pub fn cron_due(&mut self) -> bool {
        if self.last_cron.elapsed().as_millis() < 1000 {
            return false;
        }
        self.last_cron = Instant::now();
        true
    }

    /// ROLE's state: `connect`, `connecting`, `handshake`, `sync` or `connected`.
    pub fn role_state(&self) -> &'static str {
        match self.link {
            Link::Idle => "connect",
            Link::Connecting(_) => "connecting",
            Link::Handshake { .. } => "handshake",
            Link::Transfer { .. } => "sync",
            Link::Connected => "connected",
        }
    }

    pub fn link_up(&self) -> bool {
        matches!(self.link, Link::Connected)
    }

    /// INFO's `master_sync_*` fields while an RDB is received: (total, read), total 0 while the
    /// length is not known (or the payload is diskless).
    pub fn transfer_progress(&self) -> Option<(usize, usize)> {
        match &self.link {
            Link::Transfer { buf, size, .. } => {
                let total = match size {
                    Payload::Length(n) => *n,
                    _ => 0,
                };
                Some((total, buf.len()))
            }
            _ => None,
        }
    }

    /// The applied offset ROLE shows: -1 while no master client exists.
    pub fn master_offset(&self) -> i64 {
        if self.master_client.is_some() {
            self.offset
        } else {
            -1
        }
    }
}

/// A request as RESP, the way Redis's `sendCommand` writes it.
fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut r = Reply::new(false);
    r.array(args.len());
    for a in args {
        r.bulk(a);
    }
    r.buf
}

/// `REPLCONF ACK <offset>`.
pub fn ack(offset: i64) -> Vec<u8> {
    request(&[b"REPLCONF", b"ACK", offset.to_string().as_bytes()])
}

/// REPLICAOF from a command: `Some` follows that primary, `None` promotes. Run through the event
/// loop's reactor the command was lent, so the connection starts now, as in Redis.
pub fn replicaof(ctx: &mut super::ctx::Ctx, target: Option<(String, u16)>) {
    let Some(reactor) = ctx.reactor.as_deref_mut() else {
        // Without the reactor (never for a client's command) the cron connects.
        if let Some(key) = ctx.srv.repl.master_client.take() {
            ctx.srv.kill_list.push(key);
        }
        ctx.srv.repl.link = Link::Idle;
        crate::store::set_replica_expiry(target.is_some());
        ctx.srv.config.replicaof = target.clone();
        ctx.srv.repl.master = target;
        return;
    };
    let mut io = Io::new(reactor, ctx.srv, ctx.clients);
    match target {
        Some((host, port)) => io.set_master(host, port),
        None => io.unset_master(),
    }
}

/// Why the link failed, for the log.
type LinkError = String;

impl Io<'_> {
    /// REPLICAOF host port: follows that primary from now on (Redis's `replicationSetMaster`).
    pub fn set_master(&mut self, host: String, port: u16) {
        let was_master = self.state.repl.master.is_none();
        self.drop_link();
        // This server's replicas stay: they get the new primary's stream relayed, or reconnect
        // if this server has to sync in full.
        super::blocking::unblock_all_with_error(
            self.state,
            self.clients,
            "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
        );
        if was_master {
            // PSYNC offers this server's own history: a primary that shares it (a sibling after a
            // failover) continues partially.
            self.state
                .repl
                .history_start
                .get_or_insert(self.state.repl.offset);
        }
        crate::store::set_replica_expiry(true);
        notice!("Connecting to MASTER {host}:{port}");
        self.state.config.replicaof = Some((host.clone(), port));
        self.state.repl.master = Some((host, port));
        self.connect_master();
    }

    /// REPLICAOF NO ONE: a primary again (Redis's `replicationUnsetMaster`).
    pub fn unset_master(&mut self) {
        if self.state.repl.master.is_none() {
            return;
        }
        self.drop_link();
        self.state.repl.master = None;
        self.state.config.replicaof = None;
        crate::store::set_replica_expiry(false);
        // This server's own writes start its stream: the first selects its database.
        super::primary::restart_stream(self.state);
        // The history so far stays reachable as the second ID (`shiftReplicationId`).
        let repl = &mut self.state.repl;
        repl.replid2 = std::mem::replace(&mut self.state.replid, crate::util::random_hex40());
        repl.second_offset = repl.offset + 1;
        repl.down_since = None;
        notice!(
            "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID is {}",
            repl.replid2,
            repl.second_offset,
            self.state.replid
        );
    }

    /// Closes the link, the master client with it; the offset applied is kept for PSYNC.
    fn drop_link(&mut self) {
        let link = std::mem::replace(&mut self.state.repl.link, Link::Idle);
        match link {
            Link::Connecting(mut s)
            | Link::Handshake { stream: mut s, .. }
            | Link::Transfer { stream: mut s, .. } => {
                let _ = self.r.poll.registry().deregister(&mut s);
            }
            Link::Idle | Link::Connected => {}
        }
        if let Some(key) = self.state.repl.master_client.take() {
            if let Some(c) = self.clients.get(key) {
                self.state.repl.master_db = c.db;
                self.close_client(key);
            }
        }
        self.state.repl.unapplied.clear();
    }

    /// The link broke: back to `Idle`, the cron tries again.
    fn link_failed(&mut self, why: LinkError) {
        warning!("{why}");
        self.drop_link();
        if self.state.repl.down_since.is_none() {
            self.state.repl.down_since = Some(Instant::now());
        }
    }

    /// Starts a non-blocking connection to the primary.
    fn connect_master(&mut self) {
        let Some((host, port)) = self.state.repl.master.clone() else {
            return;
        };
        let addr = match (host.as_str(), port).to_socket_addrs() {
            Ok(mut a) => a.next(),
            Err(_) => None,
        };
        let Some(addr) = addr else {
            warning!("Unable to connect to MASTER: can't resolve {host}");
            return;
        };
        let mut stream = match TcpStream::connect(addr) {
            Ok(s) => s,
            Err(e) => {
                warning!("Unable to connect to MASTER: {e}");
                return;
            }
        };
        // ACKs are small writes that must not wait for Nagle's timer (as clients' sockets).
        let _ = stream.set_nodelay(true);
        if let Err(e) = self.r.poll.registry().register(
            &mut stream,
            Token(LINK_TOKEN),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            warning!("Unable to connect to MASTER: {e}");
            return;
        }
        self.state.repl.last_io = Instant::now();
        self.state.repl.link = Link::Connecting(stream);
    }

    /// Readiness on the link before it is the master client.
    pub(super) fn link_event(&mut self) {
        if let Err(why) = self.advance_link() {
            self.link_failed(why);
        }
    }

    fn advance_link(&mut self) -> Result<(), LinkError> {
        loop {
            let link = std::mem::replace(&mut self.state.repl.link, Link::Idle);
            match link {
                Link::Connecting(mut stream) => {
                    if let Ok(Some(e)) | Err(e) = stream.take_error() {
                        return Err(format!("Error condition on socket for SYNC: {e}"));
                    }
                    if stream.peer_addr().is_err() {
                        // Not connected yet: wait for the next readiness.
                        self.state.repl.link = Link::Connecting(stream);
                        return Ok(());
                    }
                    notice!("MASTER <-> REPLICA sync started");
                    send(&mut stream, &request(&[b"PING"]))?;
                    let _ = self.r.poll.registry().reregister(
                        &mut stream,
                        Token(LINK_TOKEN),
                        Interest::READABLE,
                    );
                    self.state.repl.link = Link::Handshake {
                        stream,
                        buf: Vec::new(),
                        waiting: VecDeque::from([Step::Ping]),
                    };
                }
                Link::Handshake {
                    mut stream,
                    mut buf,
                    mut waiting,
                } => {
                    let closed = fill(&mut stream, &mut buf)?;
                    self.state.repl.last_io = Instant::now();
                    let mut outcome = None;
                    while let Some(line) = take_line(&mut buf) {
                        if line.is_empty() {
                            // A primary busy forking sends newlines while we wait for PSYNC's reply.
                            continue;
                        }
                        let Some(step) = waiting.pop_front() else {
                            return Err("Unexpected reply from MASTER during the handshake".into());
                        };
                        match self.handshake_reply(&mut stream, step, &line)? {
                            Some(Next::More(steps)) => waiting.extend(steps),
                            Some(done) => {
                                outcome = Some(done);
                                break;
                            }
                            None => {}
                        }
                    }
                    match outcome {
                        Some(Next::Transfer { replid, offset }) => {
                            self.state.repl.link = Link::Transfer {
                                stream,
                                buf,
                                size: Payload::Unknown,
                                replid,
                                offset,
                            };
                            // The payload may have come with the reply.
                            continue;
                        }
                        Some(Next::Continue { replid }) => {
                            return self.continue_sync(stream, buf, replid);
                        }
                        _ => {}
                    }
                    if closed {
                        return Err("MASTER closed the connection during the handshake".into());
                    }
                    self.state.repl.link = Link::Handshake {
                        stream,
                        buf,
                        waiting,
                    };
                    return Ok(());
                }
                Link::Transfer {
                    mut stream,
                    mut buf,
                    mut size,
                    replid,
                    offset,
                } => {
                    let closed = fill(&mut stream, &mut buf)?;
                    self.state.repl.last_io = Instant::now();
                    if let Payload::Unknown = size {
                        // Newlines first while the primary prepares the payload, then `$...`.
                        while buf.first() == Some(&b'\n') {
                            buf.remove(0);
                        }
                        if let Some(line) = take_line(&mut buf) {
                            size = payload_size(&line)?;
                        }
                    }
                    let complete = match &size {
                        Payload::Unknown => None,
                        Payload::Length(n) => (buf.len() >= *n).then_some(*n),
                        Payload::Mark(mark) => (buf.len() >= REPLID_LEN
                            && buf[buf.len() - REPLID_LEN..] == mark[..])
                            .then(|| buf.len() - REPLID_LEN),
                    };
                    if let Some(end) = complete {
                        let rest = buf.split_off(end);
                        let rest = match size {
                            // Nothing follows a mark but the stream, which waits for our ACK.
                            Payload::Mark(_) => Vec::new(),
                            _ => rest,
                        };
                        return self.full_sync_done(stream, buf, rest, replid, offset);
                    }
                    if closed {
                        return Err(
                            "I/O error trying to sync with MASTER: connection lost".to_string()
                        );
                    }
                    self.state.repl.link = Link::Transfer {
                        stream,
                        buf,
                        size,
                        replid,
                        offset,
                    };
                    return Ok(());
                }
                other => {
                    self.state.repl.link = other;
                    return Ok(());
                }
            }
        }
    }

    /// Handles one handshake reply line; says what comes next.
    fn handshake_reply(
        &mut self,
        stream: &mut TcpStream,
        step: Step,
        line: &[u8],
    ) -> Result<Option<Next>, LinkError> {
        let text = String::from_utf8_lossy(line).into_owned();
        match step {
            Step::Ping => {
                // As Redis: an authentication error now is expected (AUTH follows).
                if line[0] == b'-'
                    && !text.starts_with("-NOAUTH")
                    && !text.starts_with("-NOPERM")
                    && !text.starts_with("-ERR operation not permitted")
                {
                    return Err(format!("Error reply to PING from master: '{text}'"));
                }
                notice!("Master replied to PING, replication can continue...");
                let cfg = &self.state.config;
                let mut out = Vec::new();
                let mut steps = Vec::new();
                if !cfg.inert.masterauth.is_empty() {
                    let mut auth: Vec<&[u8]> = vec![b"AUTH"];
                    if !cfg.inert.masteruser.is_empty() {
                        auth.push(cfg.inert.masteruser.as_bytes());
                    }
                    auth.push(cfg.inert.masterauth.as_bytes());
                    out.extend(request(&auth));
                    steps.push(Step::Auth);
                }
                let port = match cfg.inert.replica_announce_port {
                    0 => self.state.tcp_port as i64,
                    p => p,
                };
                out.extend(request(&[
                    b"REPLCONF",
                    b"listening-port",
                    port.to_string().as_bytes(),
                ]));
                steps.push(Step::Port);
                if !cfg.inert.replica_announce_ip.is_empty() {
                    out.extend(request(&[
                        b"REPLCONF",
                        b"ip-address",
                        cfg.inert.replica_announce_ip.as_bytes(),
                    ]));
                    steps.push(Step::Ip);
                }
                out.extend(request(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]));
                steps.push(Step::Capa);
                send(stream, &out)?;
                Ok(Some(Next::More(steps)))
            }
            Step::Auth if line[0] == b'-' => Err(format!("Unable to AUTH to MASTER: {text}")),
            Step::Port | Step::Ip | Step::Capa if line[0] == b'-' => {
                // Only logged, as Redis: an old primary may not know the option.
                notice!("(Non critical) Master does not understand REPLCONF {step:?}: {text}");
                self.psync_if_last(stream, step)
            }
            Step::Auth | Step::Port | Step::Ip | Step::Capa => self.psync_if_last(stream, step),
            Step::Psync => psync_reply(&text).map(Some),
        }
    }

    /// After the last REPLCONF's reply, PSYNC with what this server last applied.
    fn psync_if_last(
        &mut self,
        stream: &mut TcpStream,
        step: Step,
    ) -> Result<Option<Next>, LinkError> {
        if step != Step::Capa {
            return Ok(None);
        }
        let repl = &self.state.repl;
        let (id, offset) = match repl.history_start {
            Some(_) => (self.state.replid.clone(), (repl.offset + 1).to_string()),
            None => ("?".to_string(), "-1".to_string()),
        };
        if id != "?" {
            notice!("Trying a partial resynchronization (request {id}:{offset}).");
        }
        send(
            stream,
            &request(&[b"PSYNC", id.as_bytes(), offset.as_bytes()]),
        )?;
        Ok(Some(Next::More(vec![Step::Psync])))
    }

    /// `+CONTINUE`: the data set stays; the stream goes on from our offset.
    fn continue_sync(
        &mut self,
        stream: TcpStream,
        rest: Vec<u8>,
        replid: Option<String>,
    ) -> Result<(), LinkError> {
        notice!("Successful partial resynchronization with master.");
        if let Some(new) = replid {
            if new != self.state.replid {
                // The primary's history continues under a new ID (it was promoted): ours too, and
                // this server's replicas reconnect to learn it (they resume partially).
                let old = std::mem::replace(&mut self.state.replid, new);
                self.state.repl.replid2 = old;
                self.state.repl.second_offset = self.state.repl.offset + 1;
                warning!("Master replication ID changed to {}", self.state.replid);
                for key in self.state.primary.replicas.clone() {
                    self.close_client(key);
                }
            }
        }
        notice!("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        self.make_master_client(stream, rest)
    }

    /// The whole RDB arrived: load it in place of the data set, then the stream follows.
    fn full_sync_done(
        &mut self,
        stream: TcpStream,
        rdb: Vec<u8>,
        rest: Vec<u8>,
        replid: String,
        offset: i64,
    ) -> Result<(), LinkError> {
        notice!(
            "MASTER <-> REPLICA sync: received {} bytes from master",
            rdb.len()
        );
        let databases = self.state.dbs.len();
        let mut dbs: Vec<crate::store::Db> = (0..databases).map(|_| Default::default()).collect();
        // A replica keeps keys already expired: the primary's DEL will come for them.
        let info = crate::persist::rdb::load(
            &rdb,
            &mut dbs,
            crate::persist::limits(&self.state.config),
            self.state.config.rdbchecksum,
            i64::MIN,
        )
        .map_err(|e| {
            format!("Failed trying to load the MASTER synchronization DB from socket: {e}")
        })?;
        notice!("MASTER <-> REPLICA sync: Flushing old data");
        self.server_ctx(|ctx| ctx.signal_flushed_all());
        self.state
            .scripting
            .replace_libraries(&info.functions)
            .map_err(|e| format!("Failed loading the MASTER's function libraries: {e}"))?;
        // INFO's keyspace_hits, keyspace_misses and expired_keys count on across the swap.
        for (new, old) in dbs.iter_mut().zip(&mut self.state.dbs) {
            new.stats = std::mem::take(&mut old.stats);
        }
        self.state.dbs = dbs;
        notice!("MASTER <-> REPLICA sync: Loading DB in memory");
        notice!(
            "Done loading RDB, keys loaded: {}, keys expired: {}.",
            info.keys_loaded,
            info.keys_expired
        );
        self.state.replid = replid;
        self.state.repl.offset = offset;
        self.state.repl.history_start = Some(offset);
        self.state.repl.master_db = info.repl_stream_db.unwrap_or(0);
        // This server's own replicas held the old history: they go and sync again; the backlog
        // starts over at the new offset.
        for key in self.state.primary.replicas.clone() {
            self.close_client(key);
        }
        super::primary::create_backlog(self.state);
        self.state.repl.replid2 = "0".repeat(REPLID_LEN);
        self.state.repl.second_offset = -1;
        // What was loaded is neither a change to save nor to log again.
        self.state.dirty = 0;
        if self.state.config.appendonly {
            // The AOF holds the old data set's history: it is rewritten from the new one (Redis's
            // `restartAOFAfterSYNC`), a rewrite already running from the old one dropped first.
            let mut host = self.state.persistence();
            crate::persist::aof::kill_child(&mut host);
            if host.persist.child_active() {
                host.persist.aof.scheduled = true;
            } else if let Err(e) = crate::persist::aof::rewrite_start(&mut host) {
                warning!("Failed to start the AOF rewrite after the sync with the MASTER: {e}");
                host.persist.aof.scheduled = true;
            }
        }
        notice!("MASTER <-> REPLICA sync: Finished with success");
        self.make_master_client(stream, rest)
    }

    /// The link becomes the master client; `rest` is what followed the payload.
    fn make_master_client(
        &mut self,
        mut stream: TcpStream,
        rest: Vec<u8>,
    ) -> Result<(), LinkError> {
        let _ = self.r.poll.registry().deregister(&mut stream);
        let entry = self.clients.vacant_entry();
        let key = entry.key();
        self.r
            .poll
            .registry()
            .register(&mut stream, Token(key), Interest::READABLE)
            .map_err(|e| format!("Registering the master link: {e}"))?;
        let addr = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let laddr = stream
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
        let id = self.state.next_client_id;
        self.state.next_client_id += 1;
        let mut c = Client::new(id, Conn::Tcp(stream), fd, addr, laddr, false);
        c.is_master = true;
        c.db = self.state.repl.master_db;
        c.authenticated = true;
        c.reply_mode = ReplyMode::Off;
        c.query = rest;
        // After a diskless payload the primary starts the stream on our first ACK.
        c.out.buf.extend_from_slice(&ack(self.state.repl.offset));
        entry.insert(c);
        let repl = &mut self.state.repl;
        repl.master_client = Some(key);
        repl.link = Link::Connected;
        repl.down_since = None;
        repl.unapplied.clear();
        repl.last_io = Instant::now();
        self.r.pending.push(key);
        self.process_input(key);
        Ok(())
    }

    /// The master client is gone (the primary closed the link, or a protocol error): the cron
    /// connects again, offering the offset applied.
    pub(super) fn master_client_closed(&mut self, key: usize, db: usize) {
        self.state.repl.master_db = db;
        if self.state.repl.master_client == Some(key) {
            self.state.repl.master_client = None;
            self.state.repl.link = Link::Idle;
            self.state.repl.unapplied.clear();
            self.state.repl.down_since = Some(Instant::now());
            notice!("Connection with master lost.");
        }
    }

    /// Once a second: connect if due, ACK the offset, and give up on a silent primary past
    /// `repl-timeout` (Redis's `replicationCron`).
    pub(super) fn replication_cron(&mut self) {
        if self.state.repl.master.is_none() {
            return;
        }
        let timeout = self.state.config.inert.repl_timeout.max(1) as u64;
        let silent = self.state.repl.last_io.elapsed().as_secs() > timeout;
        match self.state.repl.link {
            Link::Idle => self.connect_master(),
            Link::Connecting(_) | Link::Handshake { .. } if silent => {
                self.link_failed("Timeout connecting to the MASTER...".into())
            }
            Link::Transfer { .. } if silent => self.link_failed(
                "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.".into(),
            ),
            Link::Connected => {
                let Some(key) = self.state.repl.master_client else {
                    return;
                };
                let idle = self.clients[key].last_interaction.elapsed().as_secs() > timeout;
                if idle {
                    warning!("MASTER timeout: no data nor PING received...");
                    self.close_client(key);
                    return;
                }
                self.send_ack(key);
            }
            _ => {}
        }
    }

    /// After one of the primary's commands (`bytes` of its stream): an ACK if it asked (with the
    /// offset before its GETACK, as Redis), then the offset moves on, unless inside MULTI (a block
    /// counts at its EXEC, so a link cut mid-block resumes before MULTI).
    pub(super) fn count_applied(&mut self, key: usize, out: &mut Reply, bytes: &[u8]) {
        let repl = &mut self.state.repl;
        if std::mem::take(&mut repl.ack_asked) {
            out.buf.extend_from_slice(&ack(repl.offset));
        }
        repl.unapplied.extend_from_slice(bytes);
        repl.last_io = Instant::now();
        if self.clients[key].tx.in_multi() {
            return;
        }
        let applied = std::mem::take(&mut self.state.repl.unapplied);
        self.state.repl.offset += applied.len() as i64;
        super::primary::relay(self.state, &applied);
        let mut applied = applied;
        applied.clear();
        self.state.repl.unapplied = applied;
    }

    /// Queues `REPLCONF ACK <offset>` on the master client, past CLIENT REPLY's silence.
    pub(super) fn send_ack(&mut self, key: usize) {
        let offset = self.state.repl.offset;
        if let Some(c) = self.clients.get_mut(key) {
            c.out.buf.extend_from_slice(&ack(offset));
            self.r.pending.push(key);
        }
    }
}

/// What a handshake reply leads to.
enum Next {
    More(Vec<Step>),
    Transfer { replid: String, offset: i64 },
    Continue { replid: Option<String> },
}

/// PSYNC's reply (Redis's `slaveTryPartialResynchronization`).
fn psync_reply(text: &str) -> Result<Next, LinkError> {
    if let Some(rest) = text.strip_prefix("+FULLRESYNC") {
        let mut parts = rest.split_ascii_whitespace();
        let replid = parts.next().filter(|id| id.len() == REPLID_LEN);
        let offset = parts.next().and_then(|o| o.parse::<i64>().ok());
        return match (replid, offset) {
            (Some(id), Some(offset)) => {
                notice!("Full resync from master: {id}:{offset}");
                Ok(Next::Transfer {
                    replid: id.to_string(),
                    offset,
                })
            }
            _ => Err("Master replied with wrong +FULLRESYNC syntax.".into()),
        };
    }
    if let Some(rest) = text.strip_prefix("+CONTINUE") {
        let id = rest.trim();
        let replid = (id.len() == REPLID_LEN).then(|| id.to_string());
        return Ok(Next::Continue { replid });
    }
    Err(format!("Unexpected reply to PSYNC from master: {text}"))
}

/// The `$<len>` or `$EOF:<mark>` line before an RDB payload.
fn payload_size(line: &[u8]) -> Result<Payload, LinkError> {
    if line.first() == Some(&b'-') {
        return Err(format!(
            "MASTER aborted replication with an error: {}",
            String::from_utf8_lossy(&line[1..])
        ));
    }
    if line.first() != Some(&b'$') {
        return Err(format!(
            "Bad protocol from MASTER, the first byte is not '$' (we received '{}'), are you sure the host and port are right?",
            String::from_utf8_lossy(line)
        ));
    }
    if let Some(mark) = line[1..].strip_prefix(b"EOF:") {
        let mark: [u8; REPLID_LEN] = mark
            .try_into()
            .map_err(|_| "Bad EOF mark from MASTER".to_string())?;
        return Ok(Payload::Mark(mark));
    }
    std::str::from_utf8(&line[1..])
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .map(Payload::Length)
        .ok_or_else(|| "Bad payload length from MASTER".to_string())
}

/// Reads what the socket has into `buf`; true when the peer closed it.
fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<bool, LinkError> {
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("Error reading from MASTER: {e}")),
        }
    }
}

/// Takes a line ending in `\n` off the front of `buf`, `\r` dropped.
fn take_line(buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    let end = memchr::memchr(b'\n', buf)?;
    let mut line: Vec<u8> = buf.drain(..=end).collect();
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Some(line)
}

/// Writes a handshake request: a few dozen bytes a fresh socket always takes.
fn send(stream: &mut TcpStream, bytes: &[u8]) -> Result<(), LinkError> {
    stream
        .write_all(bytes)
        .map_err(|e| format!("Error writing to MASTER: {e}"))
}
