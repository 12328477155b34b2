//! A connected client: its socket, query buffer and parser, reply buffer, and per-connection state
//! (selected db, protocol, name, auth, CLIENT REPLY mode).

use std::io::{self, Read, Write};
use std::time::Instant;

use mio::net::{TcpStream, UnixStream};

use crate::config::{ObufLimit, ObufLimits};
use crate::resp::parser::Parser;
use crate::resp::reply::Reply;

/// Redis's static reply buffer: output past it is what CLIENT LIST's `omem` shows and
/// `client-output-buffer-limit` measures (Redis's `reply_bytes`).
const REPLY_CHUNK: usize = 16 * 1024;

pub enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }

    pub fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Conn::Tcp(s) => s,
            Conn::Unix(s) => s,
        }
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Conn::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Conn::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }
}

#[derive(Clone, Copy, PartialEq)]
pub enum ReplyMode {
    On,
    Off,
    /// Discard the reply of the next command only.
    SkipNext,
    /// Discarding the reply of the command now running (the one after CLIENT REPLY SKIP).
    Skipping,
}

pub struct Client {
    pub id: u64,
    pub conn: Conn,
    pub fd: i32,
    pub addr: String,
    pub laddr: String,
    pub is_unix: bool,
    pub name: Vec<u8>,
    pub lib_name: Vec<u8>,
    pub lib_ver: Vec<u8>,
    pub created: Instant,
    pub last_interaction: Instant,
    pub db: usize,
    pub authenticated: bool,
    /// The ACL user's slot (`server::acl`): `default` until AUTH or HELLO names another.
    pub user: usize,
    /// Its name, for CLIENT LIST (a user is never renamed; deleting it closes its connections).
    pub user_name: Box<[u8]>,
    /// Close once the pending replies are written (QUIT, protocol errors, CLIENT KILL of self).
    pub close_after_reply: bool,
    pub query: Vec<u8>,
    /// Length and capacity of the query buffer while it is lent to the commands parsed from it
    /// (`process_input`): CLIENT LIST's `qbuf` and `qbuf-free` of a running client, as Redis's
    /// query buffer still holds them then.
    pub query_lent: (usize, usize),
    pub parser: Parser,
    pub out: Reply,
    /// Bytes of `out.buf` already written to the socket.
    pub sent: usize,
    pub last_cmd: &'static str,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    /// WRITABLE interest is registered (the kernel buffer filled up).
    pub want_write: bool,
    /// A WATCHed key changed since WATCH: the next EXEC fails (Redis's CLIENT_DIRTY_CAS).
    pub dirty_cas: bool,
    /// Set while the client runs EXEC's queued commands or a script: a blocking command then answers
    /// at once as if its timeout had passed (Redis's CLIENT_DENY_BLOCKING).
    pub deny_blocking: bool,
    /// Arguments of the running command its handler marked secret (`Ctx::redact`): the slow log
    /// and monitors show them as `(redacted)`.
    pub redacted: Vec<usize>,
    /// Set while the client waits in a blocking command (BLPOP, ...): see `server::blocking`.
    pub blocked: Option<Box<crate::server::blocking::Blocked>>,
    /// Set while a CLIENT PAUSE holds the client's command: see `server::pause`.
    pub postponed: Option<crate::server::pause::Postponed>,
    /// MULTI queue and WATCHed keys.
    pub tx: crate::server::multi::Tx,
    /// Channels, patterns and shard channels subscribed to.
    pub subs: crate::server::pubsub::Subs,
    /// Over its output buffer limit: gets no more output and closes this loop turn.
    pub close_asap: bool,
    /// In MONITOR mode: gets every command the server runs (`server::monitor`).
    pub monitor: bool,
    /// The link to this replica's primary: its commands are obeyed, not answered.
    pub is_master: bool,
    /// What a primary knows of this client as its replica (from its first REPLCONF).
    pub peer: Option<Box<crate::server::primary::Peer>>,
    /// `master_repl_offset` after this client's last command that fed the stream (WAIT's).
    pub woff: i64,
    /// Since when the output has been over the soft limit.
    pub obuf_soft_since: Option<Instant>,
    /// CLIENT TRACKING state (`server::tracking`).
    pub tracking: crate::server::tracking::ClientTracking,
}

impl Client {
    pub fn new(id: u64, conn: Conn, fd: i32, addr: String, laddr: String, is_unix: bool) -> Client {
        let now = Instant::now();
        Client {
            id,
            conn,
            fd,
            addr,
            laddr,
            is_unix,
            name: Vec::new(),
            lib_name: Vec::new(),
            lib_ver: Vec::new(),
            created: now,
            last_interaction: now,
            db: 0,
            authenticated: false,
            user: crate::server::acl::DEFAULT,
            user_name: Box::from(&b"default"[..]),
            close_after_reply: false,
            query: Vec::new(),
            query_lent: (0, 0),
            parser: Parser::default(),
            out: Reply::new(false),
            sent: 0,
            last_cmd: "NULL",
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            want_write: false,
            dirty_cas: false,
            deny_blocking: false,
            redacted: Vec::new(),
            blocked: None,
            postponed: None,
            tx: Default::default(),
            subs: Default::default(),
            close_asap: false,
            monitor: false,
            obuf_soft_since: None,
            tracking: Default::default(),
            is_master: false,
            peer: None,
            woff: 0,
        }
    }

    pub fn pending_output(&self) -> usize {
        self.out.buf.len() - self.sent
    }

    /// The `client-output-buffer-limit` class this client is held to: pubsub while subscribed,
    /// normal otherwise (a monitor too, as Redis's `getClientType`).
    pub fn obuf_limit(&self, limits: &ObufLimits) -> ObufLimit {
        if self.is_replica() {
            limits.replica
        } else if self.subs.total() > 0 {
            limits.pubsub
        } else {
            limits.normal
        }
    }

    /// Redis's `checkClientOutputBufferLimits`, for `unsent` bytes of output: over the hard limit,
    /// or over the soft limit continuously for longer than its seconds.
    pub fn over_obuf_limit(&mut self, unsent: usize, limit: ObufLimit) -> bool {
        if limit.hard == 0 && limit.soft == 0 {
            return false;
        }
        let used = unsent.saturating_sub(REPLY_CHUNK) as u64;
        let hard = limit.hard > 0 && used >= limit.hard;
        let soft = limit.soft > 0 && used >= limit.soft;
        if !soft {
            self.obuf_soft_since = None;
            return hard;
        }
        match self.obuf_soft_since {
            None => {
                self.obuf_soft_since = Some(Instant::now());
                hard
            }
            Some(t) => hard || t.elapsed().as_secs() > limit.soft_secs,
        }
    }

    /// Marks the client to close this loop turn for its output buffer, drops what it has not been
    /// sent (it will never be), and logs it as Redis does.
    pub fn close_for_obuf(&mut self) {
        self.close_asap = true;
        let resp = if self.out.resp3 { 3 } else { 2 };
        crate::warning!(
            "Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
            self.info_line(
                resp,
                &self.out,
                self.blocked.as_ref().map_or(0, |b| b.argv_len())
            )
        );
        self.out.buf = Vec::new();
        self.sent = 0;
    }

    /// Writes as much pending output as the socket takes. `Ok(true)` when all is written.
    pub fn flush(&mut self, net_out: &mut u64) -> io::Result<bool> {
        while self.sent < self.out.buf.len() {
            match self.conn.write(&self.out.buf[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.sent += n;
                    *net_out += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.sent = 0;
        self.out.buf.clear();
        // Give back memory after a huge reply, but keep a normal working size.
        if self.out.buf.capacity() > 1 << 20 {
            self.out.buf.shrink_to(16 * 1024);
        }
        Ok(true)
    }

    /// Connected over the Unix socket or from 127.0.0.1 or ::1 exactly (Redis's `islocalClient`,
    /// which protected mode and the `local` value of the `enable-*` settings go by).
    pub fn is_local(&self) -> bool {
        self.is_unix || self.addr.starts_with("127.0.0.1:") || self.addr.starts_with("[::1]:")
    }

    /// Whether an `enable-debug-command`, `enable-module-command` or `enable-protected-configs`
    /// value (`yes`, `no` or `local`) lets this client do what it guards (Redis's
    /// `allowProtectedAction`).
    pub fn allowed_by(&self, setting: &str) -> bool {
        match setting {
            "yes" => true,
            "local" => self.is_local(),
            _ => false,
        }
    }

    /// What the connection holds: its query and output buffers and its own state (CLIENT LIST's
    /// `tot-mem`, MEMORY STATS's `clients.normal`).
    pub fn memory(&self) -> usize {
        self.query.len() + self.out.buf.capacity() + std::mem::size_of::<Client>()
    }

    /// One line of CLIENT LIST / CLIENT INFO, with Redis's fields. `out` is the client's reply
    /// buffer (lent to the running command when it is the caller) and `argv_mem` the length of
    /// the arguments of the command it is running or blocked in (Redis's `argv_len_sum`).
    /// Redis's `getClientType`, as CLIENT LIST and CLIENT KILL's TYPE name it: `master` (this
    /// replica's link to its primary), `pubsub` (a subscriber), else `normal` (a monitor too).
    pub fn class(&self) -> &'static str {
        if self.is_master {
            "master"
        } else if self.is_replica() {
            "replica"
        } else if self.subs.total() > 0 {
            "pubsub"
        } else {
            "normal"
        }
    }

    /// A replica of this server (past SYNC or PSYNC).
    pub fn is_replica(&self) -> bool {
        self.peer
            .as_ref()
            .is_some_and(|p| p.state != crate::server::primary::PeerState::Handshake)
    }

    pub fn info_line(&self, resp: u8, out: &Reply, argv_mem: usize) -> String {
        let mut flags = String::new();
        if self.is_replica() {
            flags.push('S');
        }
        if self.monitor {
            flags.push('O');
        }
        if self.is_master {
            flags.push('M');
        }
        if self.subs.total() > 0 {
            flags.push('P');
        }
        if self.tx.in_multi() {
            flags.push('x');
        }
        if self.blocked.is_some() || self.postponed.is_some() {
            flags.push('b');
        }
        self.tracking.letters(&mut flags);
        if self.dirty_cas {
            flags.push('d');
        }
        if self.close_after_reply {
            flags.push('c');
        }
        if self.close_asap {
            flags.push('A');
        }
        if self.no_evict {
            flags.push('e');
        }
        if self.no_touch {
            flags.push('T');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        let events = if self.want_write { "rw" } else { "r" };
        // Between reads Redis's query buffer holds only what is not yet parsed (a blocked
        // client's command is in its arguments, no longer in the buffer).
        let unparsed = self.query.len().saturating_sub(self.parser.position());
        let (qbuf, qbuf_cap) = if self.query_lent != (0, 0) {
            self.query_lent
        } else {
            (
                unparsed,
                self.query.capacity() - self.query.len() + unparsed,
            )
        };
        let rbs = out.buf.capacity();
        // Redis keeps the first 16 KB of unsent output in the client's static buffer (`obl`) and
        // the rest in a list of 16 KB blocks (`oll`, `omem`).
        let pending = out.buf.len() - self.sent;
        let obl = pending.min(REPLY_CHUNK);
        let omem = pending - obl;
        format!(
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} oll={} omem={} tot-mem={} events={} cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            self.fd,
            String::from_utf8_lossy(&self.name),
            self.created.elapsed().as_secs(),
            self.last_interaction.elapsed().as_secs(),
            flags,
            self.db,
            self.subs.channels.len(),
            self.subs.patterns.len(),
            self.subs.shard.len(),
            self.tx.multi_count(),
            qbuf,
            qbuf_cap.saturating_sub(qbuf),
            argv_mem,
            self.tx.multi_mem(),
            rbs,
            out.buf.len(),
            obl,
            omem.div_ceil(REPLY_CHUNK),
            omem,
            self.memory(),
            events,
            self.last_cmd,
            String::from_utf8_lossy(&self.user_name),
            self.tracking.redirect_id(),
            resp,
            String::from_utf8_lossy(&self.lib_name),
            String::from_utf8_lossy(&self.lib_ver),
        )
    }
}
