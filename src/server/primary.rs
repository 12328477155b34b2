//! The primary side of replication (Redis 7.0's `replication.c`: `syncCommand`,
//! `replicationFeedSlaves`, the backlog, `replconfCommand`'s ACK, `waitCommand`).
//!
//! A replica (redis-server's, or Goblin Core's `replica.rs`) sends `PSYNC <replid> <offset>`
//! after its REPLCONFs:
//! - a partial resync when it continues this server's history (`master_replid`, or
//!   `master_replid2` up to `second_repl_offset`) from an offset the backlog still holds:
//!   `+CONTINUE <replid>`, then the backlog from there;
//! - else a full one: `+FULLRESYNC <replid> <offset>`, a BGSAVE to `dbfilename` (disk-based, as
//!   Redis with `repl-diskless-sync no`), then `$<size>\r\n` and the file, then the stream queued
//!   meanwhile.
//!
//! The stream is what propagation hands the AOF (`propagate.rs`: effects, not scripts; MULTI/EXEC
//! around a command's ops; expired and evicted keys as DEL), with SELECT when the database
//! changes, and `PING` every `repl-ping-replica-period` seconds. Every byte counts in
//! `master_repl_offset` and goes into the backlog (a ring of `repl-backlog-size` bytes, made at
//! the first replica). Replicas ACK their offset every second (`REPLCONF ACK`); WAIT counts the
//! ones that acknowledged the caller's last write, asking them with `REPLCONF GETACK *`.

use std::collections::VecDeque;
use std::time::Instant;

use super::client::Client;
use super::ctx::Ctx;
use super::{Io, State};
use crate::resp::parser::Args;
use crate::{notice, warning};

/// The last bytes of the stream, for partial resyncs.
pub struct Backlog {
    bytes: VecDeque<u8>,
    size: usize,
    /// The offset of `bytes[0]`.
    first: i64,
}

impl Backlog {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend(data);
        let over = self.bytes.len().saturating_sub(self.size);
        if over > 0 {
            self.bytes.drain(..over);
            self.first += over as i64;
        }
    }

    /// The bytes from `offset` on, if the backlog still holds them.
    fn since(&self, offset: i64) -> Option<Vec<u8>> {
        let end = self.first + self.bytes.len() as i64;
        if offset < self.first || offset > end {
            return None;
        }
        Some(
            self.bytes
                .iter()
                .skip((offset - self.first) as usize)
                .copied()
                .collect(),
        )
    }

    pub fn first_byte_offset(&self) -> i64 {
        self.first
    }

    pub fn histlen(&self) -> usize {
        self.bytes.len()
    }
}

/// Where a replica is in its sync.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum PeerState {
    /// It sent REPLCONF, not yet SYNC or PSYNC: not a replica yet.
    Handshake,
    /// Its full sync waits for a BGSAVE to start (another child runs): nothing sent yet.
    WaitBgsaveStart,
    /// The BGSAVE for it runs: `+FULLRESYNC` was sent, the stream since waits in `pending`.
    WaitBgsave,
    Online,
}

/// What a primary knows of one replica (kept on its client).
pub struct Peer {
    pub state: PeerState,
    pub listening_port: i64,
    pub ip: Option<String>,
    /// The offset it acknowledged last, and when.
    pub ack_offset: i64,
    pub ack_time: Instant,
    /// The stream since its `+FULLRESYNC`, sent after the RDB.
    pending: Vec<u8>,
    /// SYNC (no PSYNC): no `+FULLRESYNC` line was sent.
    pub old_sync: bool,
}

impl Peer {
    fn new() -> Peer {
        Peer {
            state: PeerState::Handshake,
            listening_port: 0,
            ip: None,
            ack_offset: 0,
            ack_time: Instant::now(),
            pending: Vec::new(),
            old_sync: false,
        }
    }
}

/// The primary side's state.
#[derive(Default)]
pub struct Primary {
    pub backlog: Option<Backlog>,
    /// The database the stream last selected (`slaveseldb`); `None`: the next op selects.
    stream_db: Option<usize>,
    /// The replicas' slab keys, in the order they came.
    pub replicas: Vec<usize>,
    /// Replicas whose output the stream filled this turn.
    pub wake: Vec<usize>,
    /// The BGSAVE started for full syncs (its pid).
    sync_child: Option<i32>,
    /// INFO's `sync_full`, `sync_partial_ok`, `sync_partial_err`.
    pub sync_full: u64,
    pub sync_partial_ok: u64,
    pub sync_partial_err: u64,
    /// Stream bytes fed this turn, handed to the replicas at its end.
    queued: Vec<u8>,
    /// WAIT asked the replicas for an ACK this turn / an ACK came.
    getack_due: bool,
    pub acks_changed: bool,
    last_ping: Option<Instant>,
}

const PING: &[u8] = b"*1\r\n$4\r\nping\r\n";
const GETACK: &[u8] = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";

/// Whether the stream is being recorded: a backlog exists (made by the first replica).
pub fn streaming(srv: &State) -> bool {
    srv.primary.backlog.is_some()
}

/// Feeds a command's propagated ops to the stream (Redis's `replicationFeedSlaves`): SELECT
/// when the database changes, MULTI/EXEC around several.
pub fn feed(srv: &mut State, ops: &[(usize, Vec<u8>)]) {
    if !streaming(srv) || ops.is_empty() {
        return;
    }
    let mut bytes = Vec::new();
    let p = &mut srv.primary;
    let mut select = |bytes: &mut Vec<u8>, db: usize| {
        if p.stream_db != Some(db) {
            bytes.extend(crate::resp::command(&[
                b"SELECT",
                db.to_string().as_bytes(),
            ]));
            p.stream_db = Some(db);
        }
    };
    let wrap = ops.len() > 1;
    if wrap {
        select(&mut bytes, ops[0].0);
        bytes.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n");
    }
    for (db, op) in ops {
        select(&mut bytes, *db);
        bytes.extend_from_slice(op);
    }
    if wrap {
        bytes.extend_from_slice(b"*1\r\n$4\r\nEXEC\r\n");
    }
    feed_bytes(srv, &bytes);
}

/// Appends stream bytes: counted in `master_repl_offset`, kept in the backlog, queued for the
/// replicas (handed to them at the end of the loop's turn, `Io::deliver_stream`).
fn feed_bytes(srv: &mut State, bytes: &[u8]) {
    srv.repl.offset += bytes.len() as i64;
    if let Some(b) = srv.primary.backlog.as_mut() {
        b.push(bytes);
    }
    srv.primary.queued.extend_from_slice(bytes);
}

/// Hands the stream fed so far to the replicas: online ones get it as output (their keys noted
/// in `wake` for the writer), syncing ones keep it for after their RDB. Done at the end of each
/// turn, and before a replica joins, so it gets exactly what follows its offset.
fn deliver_queued(srv: &mut State, clients: &mut slab::Slab<Client>) {
    if srv.primary.queued.is_empty() {
        return;
    }
    let bytes = std::mem::take(&mut srv.primary.queued);
    for &key in &srv.primary.replicas {
        let Some(c) = clients.get_mut(key) else {
            continue;
        };
        let Some(peer) = c.peer.as_deref_mut() else {
            continue;
        };
        if peer.state == PeerState::Online {
            c.out.buf.extend_from_slice(&bytes);
            srv.primary.wake.push(key);
            // A replica that falls that far behind is dropped; it resyncs
            // (`client-output-buffer-limit replica`).
            let limit = c.obuf_limit(&srv.config.obuf_limits);
            if c.over_obuf_limit(c.out.buf.len() - c.sent, limit) {
                c.close_for_obuf();
                srv.pubsub.to_close.push((key, c.id));
            }
        } else if peer.state == PeerState::WaitBgsave {
            peer.pending.extend_from_slice(&bytes);
        }
        // One still waiting for its BGSAVE to start gets these in the snapshot.
    }
    // The buffer is kept for the next bytes.
    let mut bytes = bytes;
    bytes.clear();
    srv.primary.queued = bytes;
}

/// Whether writes may run (Redis's `checkGoodReplicasStatus`): without `min-replicas-to-write`
/// and `min-replicas-max-lag` both set, always; else when that many online replicas sent an ACK
/// within the lag. A replica's writes come from its primary: never refused.
pub fn enough_good_replicas(srv: &State, clients: &slab::Slab<Client>) -> bool {
    let (want, lag) = (
        srv.config.min_replicas_to_write,
        srv.config.inert.min_replicas_max_lag,
    );
    srv.repl.master.is_some() || want == 0 || lag == 0 || good_replicas(srv, clients) >= want
}

/// The replicas (slab keys) whose peer record passes `test`.
fn replicas_where(
    srv: &State,
    clients: &slab::Slab<Client>,
    test: impl Fn(&Peer) -> bool,
) -> Vec<usize> {
    srv.primary
        .replicas
        .iter()
        .copied()
        .filter(|&k| {
            clients
                .get(k)
                .and_then(|c| c.peer.as_deref())
                .is_some_and(&test)
        })
        .collect()
}

/// INFO's `min_slaves_good_slaves`: online replicas whose last ACK is within
/// `min-replicas-max-lag` seconds.
pub fn good_replicas(srv: &State, clients: &slab::Slab<Client>) -> i64 {
    let lag = srv.config.inert.min_replicas_max_lag.max(0) as u64;
    replicas_where(srv, clients, |p| {
        p.state == PeerState::Online && p.ack_time.elapsed().as_secs() <= lag
    })
    .len() as i64
}

/// The refusal of a write without enough good replicas.
pub const NOREPLICAS_ERROR: &str = "NOREPLICAS Not enough good replicas to write.";

/// A backlog starting after `master_repl_offset` (a replica makes one at each full sync, so its
/// own replicas can resume partially).
pub fn create_backlog(srv: &mut State) {
    srv.primary.backlog = Some(Backlog {
        bytes: VecDeque::new(),
        size: srv.config.inert.repl_backlog_size.max(16 * 1024) as usize,
        first: srv.repl.offset + 1,
    });
    srv.primary.stream_db = None;
    crate::store::set_log_expired_for_replicas(true);
}

/// The next op fed selects its database (Redis's `slaveseldb = -1`).
pub fn restart_stream(srv: &mut State) {
    srv.primary.stream_db = None;
}

/// A replica relays what it applied of its primary's stream, byte for byte, to its backlog and
/// its own replicas (Redis's `replicationFeedStreamFromMasterStream`): their offsets are its
/// primary's. `master_repl_offset` moved already.
pub fn relay(srv: &mut State, bytes: &[u8]) {
    if let Some(b) = srv.primary.backlog.as_mut() {
        b.push(bytes);
        srv.primary.queued.extend_from_slice(bytes);
    }
}

/// How many online replicas acknowledged `offset` (Redis's `replicationCountAcksByOffset`).
pub fn count_acks(srv: &State, clients: &slab::Slab<Client>, offset: i64) -> i64 {
    replicas_where(srv, clients, |p| {
        p.state == PeerState::Online && p.ack_offset >= offset
    })
    .len() as i64
}

/// The peer record of the calling client, made at its first REPLCONF.
pub fn peer_of<'a>(ctx: &'a mut Ctx) -> &'a mut Peer {
    ctx.clients[ctx.id]
        .peer
        .get_or_insert_with(|| Box::new(Peer::new()))
}

/// REPLCONF ACK from a replica: its offset (never answered).
pub fn ack(ctx: &mut Ctx, offset: i64) {
    let c = &mut ctx.clients[ctx.id];
    let Some(peer) = c
        .peer
        .as_deref_mut()
        .filter(|p| p.state != PeerState::Handshake)
    else {
        return;
    };
    peer.ack_offset = peer.ack_offset.max(offset);
    peer.ack_time = Instant::now();
    ctx.srv.primary.acks_changed = true;
}

/// SYNC and PSYNC (Redis's `syncCommand`): `replid`/`offset` are PSYNC's (`None` for SYNC).
pub fn sync(ctx: &mut Ctx, psync: Option<(&[u8], &[u8])>) -> Result<(), String> {
    if ctx.clients[ctx.id]
        .peer
        .as_ref()
        .is_some_and(|p| p.state != PeerState::Handshake)
    {
        // Already a replica: ignored, as Redis.
        return Ok(());
    }
    // A replica serves its own replicas the stream it applies, once it has one.
    if ctx.srv.repl.master.is_some() && !ctx.srv.repl.link_up() {
        return Err("NOMASTERLINK Can't SYNC while not connected with my master".into());
    }
    if !ctx.out.buf.is_empty() {
        return Err("ERR SYNC and PSYNC are invalid with pending output".into());
    }
    // What the stream already holds goes to the other replicas first: the new one starts after.
    deliver_queued(ctx.srv, ctx.clients);
    let srv = &mut *ctx.srv;
    if let Some((replid, offset)) = psync {
        let offset = crate::util::parse_i64(offset).unwrap_or(-1);
        let ours = replid == srv.replid.as_bytes()
            || (replid == srv.repl.replid2.as_bytes() && offset <= srv.repl.second_offset);
        let held = srv.primary.backlog.as_ref().and_then(|b| b.since(offset));
        if let (true, Some(data)) = (ours, held) {
            srv.primary.sync_partial_ok += 1;
            notice!(
                "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from offset {offset}.",
                ctx.clients[ctx.id].addr,
                data.len()
            );
            ctx.out.simple(&format!("CONTINUE {}", srv.replid));
            ctx.out.buf.extend_from_slice(&data);
            let peer = peer_of(ctx);
            peer.state = PeerState::Online;
            peer.ack_time = Instant::now();
            ctx.srv.primary.replicas.push(ctx.id);
            return Ok(());
        }
        if replid != b"?" {
            srv.primary.sync_partial_err += 1;
        }
    }
    let srv = &mut *ctx.srv;
    srv.primary.sync_full += 1;
    if srv.primary.backlog.is_none() {
        if srv.repl.master.is_none() {
            // The first replica of a primary: a new history starts here (Redis's
            // `changeReplicationId`). A replica's history is its primary's.
            srv.replid = crate::util::random_hex40();
            srv.repl.replid2 = "0".repeat(40);
            srv.repl.second_offset = -1;
        }
        create_backlog(srv);
        notice!(
            "Replication backlog created, my new replication IDs are '{}' and '{}'",
            srv.replid,
            srv.repl.replid2
        );
    }
    let addr = ctx.clients[ctx.id].addr.clone();
    notice!("Replica {addr} asks for synchronization");
    let peer = peer_of(ctx);
    peer.state = PeerState::WaitBgsaveStart;
    peer.old_sync = psync.is_none();
    ctx.srv.primary.replicas.push(ctx.id);
    start_sync(ctx.srv, ctx.clients, Some((ctx.id, &mut *ctx.out)));
    Ok(())
}

/// Starts the BGSAVE the replicas waiting for a full sync need, unless another child runs (then
/// the cron tries again): each gets `+FULLRESYNC <replid> <offset>` now, at the offset the
/// snapshot holds, and the stream from there waits for the file (Redis's
/// `startBgsaveForReplication` and `replicationSetupSlaveForFullResync`: nothing may run between
/// the line and the fork, or the replica would apply it twice). `caller` is the client running
/// SYNC or PSYNC now, with the output its command was lent.
fn start_sync(
    srv: &mut State,
    clients: &mut slab::Slab<Client>,
    mut caller: Option<(usize, &mut crate::resp::reply::Reply)>,
) {
    let starting = replicas_where(srv, clients, |p| p.state == PeerState::WaitBgsaveStart);
    if starting.is_empty() || srv.persist.child_active() {
        return;
    }
    // Everything before the snapshot goes to the replicas already streaming.
    deliver_queued(srv, clients);
    // The snapshot says where the stream stands: a replica relaying its primary's stream tells
    // the database that stream selected (its master client's); a primary's next op selects.
    let stream_db = srv
        .repl
        .master_client
        .and_then(|k| clients.get(k))
        .map_or(0, |c| c.db);
    let mut replid = [0u8; 40];
    replid.copy_from_slice(&srv.replid.as_bytes()[..40]);
    srv.persist.repl_aux = Some(crate::persist::rdb::ReplAux {
        stream_db,
        replid,
        offset: srv.repl.offset,
    });
    let forked = crate::persist::bgsave(&mut srv.persistence());
    srv.persist.repl_aux = None;
    if let Ok(pid) = forked {
        notice!("Starting BGSAVE for SYNC with target: disk");
        srv.primary.sync_child = Some(pid);
        // The stream restarts with a SELECT for whoever syncs now (Redis's `slaveseldb = -1`).
        srv.primary.stream_db = None;
    }
    for key in starting {
        let c = &mut clients[key];
        let peer = c.peer.as_deref_mut().expect("a replica");
        let line = match &forked {
            Ok(_) if peer.old_sync => None,
            Ok(_) => Some(format!(
                "+FULLRESYNC {} {}\r\n",
                srv.replid, srv.repl.offset
            )),
            Err(_) => Some("-ERR BGSAVE failed, replication can't continue\r\n".to_string()),
        };
        match &forked {
            Ok(_) => peer.state = PeerState::WaitBgsave,
            Err(e) => {
                warning!("BGSAVE for replication failed: {e}");
                c.close_after_reply = true;
            }
        }
        let out = match caller.as_mut() {
            Some((id, out)) if *id == key => &mut **out,
            _ => {
                srv.primary.wake.push(key);
                &mut c.out
            }
        };
        if let Some(line) = line {
            out.buf.extend_from_slice(line.as_bytes());
        }
    }
}

impl Io<'_> {
    /// Hands the stream fed this turn to the replicas (online: their output; syncing: kept for
    /// after their RDB), and asks for ACKs when a WAIT wants them.
    pub(super) fn deliver_stream(&mut self) {
        if std::mem::take(&mut self.state.primary.getack_due) && streaming(self.state) {
            feed_bytes(self.state, GETACK);
        }
        deliver_queued(self.state, self.clients);
        self.r.pending.append(&mut self.state.primary.wake);
        if std::mem::take(&mut self.state.primary.acks_changed) {
            self.answer_waits();
            // The answered WAITs' replies (and what their clients pipelined after) go out now.
            self.process_unblocked();
        }
    }

    /// Unblocks the WAITs the replicas' ACKs now satisfy (Redis's
    /// `processClientsWaitingReplicas`).
    fn answer_waits(&mut self) {
        let waiting: Vec<usize> = self
            .clients
            .iter()
            .filter(|(_, c)| c.blocked.as_ref().is_some_and(|b| b.waits_for_acks()))
            .map(|(k, _)| k)
            .collect();
        for key in waiting {
            let c = &self.clients[key];
            let want = c
                .blocked
                .as_ref()
                .and_then(|b| b.numreplicas())
                .unwrap_or(0);
            let acks = count_acks(self.state, self.clients, c.woff);
            if acks >= want {
                super::blocking::answer(self.state, self.clients, key, acks);
            }
        }
    }

    /// At every cron tick, once the BGSAVE child was reaped: its file goes to the replicas that
    /// waited for it, and the next one starts for those that came meanwhile.
    pub(super) fn sync_replicas(&mut self) {
        if self.state.primary.replicas.is_empty() {
            return;
        }
        self.finish_sync_child();
        start_sync(self.state, self.clients, None);
        self.r.pending.append(&mut self.state.primary.wake);
    }

    /// Once a second: PING the replicas, a newline to those waiting for their RDB, and drop the
    /// silent ones (Redis's `replicationCron`).
    pub(super) fn primary_cron(&mut self) {
        if self.state.primary.replicas.is_empty() {
            return;
        }
        // Keepalives: a newline to those waiting for their RDB (not counted), PING in the stream.
        for &key in &self.state.primary.replicas {
            if let Some(c) = self.clients.get_mut(key) {
                if c.peer.as_ref().is_some_and(|p| {
                    matches!(p.state, PeerState::WaitBgsaveStart | PeerState::WaitBgsave)
                }) {
                    c.out.buf.push(b'\n');
                    self.r.pending.push(key);
                }
            }
        }
        let period = self.state.config.inert.repl_ping_replica_period.max(1) as u64;
        let due = self
            .state
            .primary
            .last_ping
            .is_none_or(|t| t.elapsed().as_secs() >= period);
        // A replica relays its primary's PINGs instead.
        if due && self.state.repl.master.is_none() {
            self.state.primary.last_ping = Some(Instant::now());
            feed_bytes(self.state, PING);
        }
        let timeout = self.state.config.inert.repl_timeout.max(1) as u64;
        let silent = replicas_where(self.state, self.clients, |p| {
            p.state == PeerState::Online && !p.old_sync && p.ack_time.elapsed().as_secs() > timeout
        });
        for key in silent {
            warning!("Disconnecting timedout replica (streaming sync)");
            self.close_client(key);
        }
    }

    /// The full syncs' BGSAVE ended: its file goes to every replica waiting for it.
    fn finish_sync_child(&mut self) {
        let Some(pid) = self.state.primary.sync_child else {
            return;
        };
        if self
            .state
            .persist
            .child
            .as_ref()
            .is_some_and(|c| c.pid == pid)
        {
            return;
        }
        self.state.primary.sync_child = None;
        let rdb = if self.state.persist.last_bgsave_ok {
            std::fs::read(crate::persist::rdb_path(&self.state.config)).ok()
        } else {
            None
        };
        let Some(rdb) = rdb else {
            warning!(
                "Background saving for replication failed: dropping the replicas waiting for it"
            );
            self.drop_waiting_replicas();
            return;
        };
        for &key in &self.state.primary.replicas {
            let Some(c) = self.clients.get_mut(key) else {
                continue;
            };
            let Some(peer) = c
                .peer
                .as_deref_mut()
                .filter(|p| p.state == PeerState::WaitBgsave)
            else {
                continue;
            };
            // What was queued since its FULLRESYNC follows the file.
            c.out
                .buf
                .extend_from_slice(format!("${}\r\n", rdb.len()).as_bytes());
            c.out.buf.extend_from_slice(&rdb);
            c.out
                .buf
                .extend_from_slice(&std::mem::take(&mut peer.pending));
            peer.state = PeerState::Online;
            peer.ack_time = Instant::now();
            notice!("Synchronization with replica {} succeeded", c.addr);
            self.r.pending.push(key);
        }
    }

    fn drop_waiting_replicas(&mut self) {
        let waiting = replicas_where(self.state, self.clients, |p| {
            p.state == PeerState::WaitBgsave
        });
        for key in waiting {
            self.close_client(key);
        }
    }

    /// A replica's connection closed.
    pub(super) fn replica_closed(&mut self, key: usize) {
        self.state.primary.replicas.retain(|&k| k != key);
        notice!("Connection with replica lost.");
    }
}

/// WAIT numreplicas timeout, on a primary.
pub fn wait(
    ctx: &mut Ctx,
    args: Args,
    numreplicas: i64,
    timeout_ms: u64,
) -> Result<(), super::ctx::CmdError> {
    let woff = ctx.clients[ctx.id].woff;
    let acks = count_acks(ctx.srv, ctx.clients, woff);
    if acks >= numreplicas || ctx.clients[ctx.id].deny_blocking {
        ctx.out.int(acks);
        return Ok(());
    }
    ctx.srv.primary.getack_due = true;
    const ACKS: super::blocking::Wait = super::blocking::Wait {
        type_name: "",
        on_timeout: super::blocking::TimeoutReply::Acks,
        denied: super::blocking::TimeoutReply::Acks,
        gone: None,
    };
    ctx.block_on(args, &[], timeout_ms, ACKS)
}
