//! Client-side caching (Redis's `tracking.c`): which clients may hold which keys, and the
//! invalidation messages sent when those keys change.
//!
//! A client in tracking mode (CLIENT TRACKING ON) has each key its read-only commands fetched
//! remembered in the table, keyed by name across every database; a change to the key (every write
//! path reaches `Ctx::signal_modified`) sends it `>2 invalidate [key]` (RESP3) or, through a
//! REDIRECT client subscribed in RESP2, a `message` on `__redis__:invalidate`, and forgets the key
//! for it. In BCAST mode nothing is remembered: keys changed under a client's prefixes are
//! collected and sent once per event loop turn (`broadcast`). A flush invalidates everything with
//! a null. Messages for the client running the command wait until its reply is written
//! (`flush_pending`), so they never interleave with it.
//!
//! Nothing here runs unless a client tracks: the gate and `Ctx` test `engaged` / `watching` first.

use std::collections::{BTreeMap, BTreeSet};

use crate::resp::parser::Args;
use crate::resp::reply::Reply;
use crate::server::ctx::Ctx;
use crate::server::table::{Command, FUNCTION_CALL, PUBSUB, READONLY, SCRIPT_BODY, SCRIPT_SHA};
use crate::store::dict::Dict;

/// CLIENT TRACKING is on (Redis's CLIENT_TRACKING).
pub const ON: u8 = 1 << 0;
/// The REDIRECT client was gone when a message was due (CLIENT_TRACKING_BROKEN_REDIR).
pub const BROKEN_REDIR: u8 = 1 << 1;
pub const BCAST: u8 = 1 << 2;
pub const OPTIN: u8 = 1 << 3;
pub const OPTOUT: u8 = 1 << 4;
/// CLIENT CACHING YES (OPTIN) or NO (OPTOUT) was given for the next command.
pub const CACHING: u8 = 1 << 5;
pub const NOLOOP: u8 = 1 << 6;

const CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking state.
#[derive(Default)]
pub struct ClientTracking {
    /// `ON`, `BCAST`, ...; zero for a client that does not track.
    pub flags: u8,
    /// The REDIRECT client's id (0: none) and slab key.
    pub redirect: u64,
    redirect_key: usize,
    /// BCAST prefixes, in Redis's (byte) order.
    pub prefixes: BTreeSet<Box<[u8]>>,
}

impl ClientTracking {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// CLIENT LIST's `flags=` letters for tracking, in Redis's order.
    pub fn letters(&self, flags: &mut String) {
        for (flag, letter) in [(ON, 't'), (BROKEN_REDIR, 'R'), (BCAST, 'B')] {
            if self.has(flag) {
                flags.push(letter);
            }
        }
    }

    /// CLIENT GETREDIR and CLIENT LIST's `redir=`: the REDIRECT id, 0 without one, -1 when off.
    pub fn redirect_id(&self) -> i64 {
        if self.has(ON) {
            self.redirect as i64
        } else {
            -1
        }
    }
}

/// The clients subscribed to one BCAST prefix and the keys changed under it this turn.
#[derive(Default)]
struct Prefix {
    /// Changed keys, each with the id of the client that last changed it (None: the server, or a
    /// script), which a NOLOOP subscriber is not told about.
    keys: BTreeMap<Box<[u8]>, Option<u64>>,
    /// (client id, slab key), in subscription order.
    clients: Vec<(u64, usize)>,
}

/// A message's payload after its `invalidate` header.
enum Payload<'a> {
    Key(&'a [u8]),
    /// Ready-made protocol: a BCAST array of keys.
    Proto(&'a [u8]),
    /// Everything (a flush): null in the tracking client's protocol.
    All,
}

/// An invalidation held back: for tracking client (slab key, id), of a key (None: a flush).
type Pending = (usize, u64, Option<Box<[u8]>>);

#[derive(Default)]
pub struct Tracking {
    /// Clients with tracking on (INFO's `tracking_clients`).
    pub clients: usize,
    /// Key → the (client id, slab key) pairs that may cache it.
    table: Dict<Vec<(u64, usize)>>,
    /// Pairs across the table (INFO's `tracking_total_items`).
    items: u64,
    prefixes: BTreeMap<Box<[u8]>, Prefix>,
    /// Invalidations that would reach the client running the command, sent after its reply.
    pending: Vec<Pending>,
    /// A tracking client's script ran a read-only command: the script's own keys are remembered
    /// once it ends (Redis's `script_caller` rule).
    script_read: bool,
    /// Successive `limit` runs that could not get under `tracking-table-max-keys`.
    limit_misses: u32,
}

impl Tracking {
    /// Whether a key change may concern a tracking client.
    pub fn watching(&self) -> bool {
        !self.table.is_empty() || !self.prefixes.is_empty()
    }

    /// Whether the gate has work here after a command.
    pub fn engaged(&self) -> bool {
        self.clients > 0 || !self.pending.is_empty()
    }

    pub fn total_keys(&self) -> usize {
        self.table.len()
    }

    pub fn total_items(&self) -> u64 {
        self.items
    }

    pub fn total_prefixes(&self) -> usize {
        self.prefixes.len()
    }
}

/// Whether two prefixes would both cover some key (Redis's `stringCheckPrefix`).
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// `%s` of a C string: up to its first NUL.
fn c_str(s: &[u8]) -> std::borrow::Cow<'_, str> {
    let end = memchr::memchr(0, s).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end])
}

/// Redis's `checkPrefixCollisionsOrReply`: replies the first overlap found. Returns whether to go
/// on enabling, which, as in Redis 7.0, is also the case when a prefix after the first overlaps
/// another given one (the error is then followed by `+OK`).
pub fn check_prefixes(ctx: &mut Ctx, prefixes: &[&[u8]]) -> bool {
    for (i, p) in prefixes.iter().enumerate() {
        let mine = &ctx.clients[ctx.id].tracking.prefixes;
        if let Some(old) = mine.iter().find(|old| overlap(old, p)) {
            let msg = format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                c_str(p),
                c_str(old)
            );
            ctx.out.error(&msg);
            return false;
        }
        if let Some(other) = prefixes[i + 1..].iter().find(|q| overlap(p, q)) {
            ctx.out.error(&format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                c_str(p),
                c_str(other)
            ));
            return i > 0;
        }
    }
    true
}

/// Redis's `enableTracking`: `options` are BCAST, OPTIN, OPTOUT, NOLOOP; `redirect` a client id
/// (0: none) and its slab key.
pub fn enable(ctx: &mut Ctx, redirect: (u64, usize), options: u8, prefixes: &[&[u8]]) {
    let me = ctx.id;
    let c = &mut ctx.clients[me];
    let t = &mut c.tracking;
    if !t.has(ON) {
        ctx.srv.tracking.clients += 1;
    }
    t.flags |= ON;
    t.flags &= !(BROKEN_REDIR | BCAST | OPTIN | OPTOUT | NOLOOP);
    (t.redirect, t.redirect_key) = redirect;
    if options & BCAST != 0 {
        t.flags |= BCAST;
        let empty: &[&[u8]] = &[b""];
        let id = c.id;
        for &p in if prefixes.is_empty() { empty } else { prefixes } {
            let subscribed = &mut ctx
                .srv
                .tracking
                .prefixes
                .entry(p.into())
                .or_default()
                .clients;
            if !subscribed.iter().any(|&(i, _)| i == id) {
                subscribed.push((id, me));
                ctx.clients[me].tracking.prefixes.insert(p.into());
            }
        }
    }
    ctx.clients[me].tracking.flags |= options & (OPTIN | OPTOUT | NOLOOP);
}

/// Redis's `disableTracking` (CLIENT TRACKING OFF, RESET, disconnection): the keys remembered for
/// the client stay in the table until they change, as in Redis.
pub fn disable(state: &mut Tracking, t: &mut ClientTracking, id: u64) {
    for p in std::mem::take(&mut t.prefixes) {
        if let Some(bs) = state.prefixes.get_mut(&p) {
            bs.clients.retain(|&(i, _)| i != id);
            if bs.clients.is_empty() {
                state.prefixes.remove(&p);
            }
        }
    }
    if t.has(ON) {
        state.clients -= 1;
        t.flags = 0;
    }
}

/// What the gate does after a command ran (at the end of Redis's `call`): remembers the keys a
/// tracking client read, and at the top level sends the invalidations held for the caller.
pub fn after_call(ctx: &mut Ctx, cmd: &Command, args: Args) {
    let Some(c) = ctx.clients.get(ctx.id) else {
        return;
    };
    let reads = c.tracking.has(ON) && !c.tracking.has(BCAST);
    if cmd.has(SCRIPT_BODY | SCRIPT_SHA | FUNCTION_CALL) {
        // A script that read remembers its declared keys; the read-only script commands are not
        // reads by themselves.
        if std::mem::take(&mut ctx.srv.tracking.script_read) && reads {
            remember(ctx, cmd, args);
        }
    } else if reads && cmd.has(READONLY) {
        let running = &ctx.srv.script_running;
        if running.active && running.client == ctx.id {
            ctx.srv.tracking.script_read = true;
        } else {
            remember(ctx, cmd, args);
        }
    }
    if !ctx.clients[ctx.id].deny_blocking {
        flush_pending(ctx);
    }
}

/// Redis's `trackingRememberKeys`.
fn remember(ctx: &mut Ctx, cmd: &Command, args: Args) {
    let c = &ctx.clients[ctx.id];
    let t = &c.tracking;
    let caching = t.has(CACHING);
    if (t.has(OPTIN) && !caching) || (t.has(OPTOUT) && caching) || cmd.has(PUBSUB) {
        return;
    }
    let entry = (c.id, ctx.id);
    let tracking = &mut ctx.srv.tracking;
    for (pos, _) in cmd.line_keys(args) {
        let key = &args[pos];
        let ids = match tracking.table.get_mut(key) {
            Some(ids) => ids,
            None => {
                let slot = tracking.table.insert_new(key, Vec::new());
                tracking.table.value_at_mut(slot)
            }
        };
        if !ids.iter().any(|&(id, _)| id == entry.0) {
            ids.push(entry);
            tracking.items += 1;
        }
    }
}

/// Redis's `trackingInvalidateKey`: `key` changed (`bcast`), or is dropped from the table
/// (`limit`). `by_client`: a client's command changed it, not the server (expiry, eviction).
pub fn invalidate(ctx: &mut Ctx, key: &[u8], by_client: bool, bcast: bool) {
    if bcast && !ctx.srv.tracking.prefixes.is_empty() {
        // A script's writes come from its own (fake) client in Redis: a NOLOOP caller hears them.
        let by = (by_client && !ctx.srv.script_running.active)
            .then(|| ctx.clients.get(ctx.id).map(|c| c.id))
            .flatten();
        for (p, bs) in ctx.srv.tracking.prefixes.iter_mut() {
            if key.starts_with(p) {
                bs.keys.insert(key.into(), by);
            }
        }
    }
    let tracking = &mut ctx.srv.tracking;
    let Some((_, ids)) = tracking.table.remove(key) else {
        return;
    };
    tracking.items -= ids.len() as u64;
    for (id, slot) in ids {
        let Some(target) = ctx.clients.get(slot).filter(|c| c.id == id) else {
            continue;
        };
        let t = &target.tracking;
        if !t.has(ON) || t.has(BCAST) || (t.has(NOLOOP) && slot == ctx.id) {
            continue;
        }
        if slot == ctx.id {
            ctx.srv.tracking.pending.push((slot, id, Some(key.into())));
        } else {
            send(ctx, slot, Payload::Key(key));
        }
    }
}

/// Redis's `trackingInvalidateKeysOnFlush`: every tracking client hears that all keys changed.
pub fn invalidate_all(ctx: &mut Ctx) {
    if ctx.srv.tracking.clients > 0 {
        let targets: Vec<(usize, u64)> = ctx
            .clients
            .iter()
            .filter(|(_, c)| c.tracking.has(ON))
            .map(|(k, c)| (k, c.id))
            .collect();
        for (k, id) in targets {
            if k == ctx.id {
                ctx.srv.tracking.pending.push((k, id, None));
            } else {
                send(ctx, k, Payload::All);
            }
        }
    }
    let tracking = &mut ctx.srv.tracking;
    tracking.table = Dict::default();
    tracking.items = 0;
}

/// Redis's `trackingHandlePendingKeyInvalidations`: the caller's invalidations, after its reply.
pub fn flush_pending(ctx: &mut Ctx) {
    if ctx.srv.tracking.pending.is_empty() {
        return;
    }
    for (slot, id, key) in std::mem::take(&mut ctx.srv.tracking.pending) {
        if ctx.clients.get(slot).is_some_and(|c| c.id == id) {
            match key {
                Some(k) => send(ctx, slot, Payload::Key(&k)),
                None => send(ctx, slot, Payload::All),
            }
        }
    }
}

/// Redis's `trackingLimitUsedSlots`: over `tracking-table-max-keys`, random keys are dropped
/// (their clients told, as if they changed), with more effort each time the limit stays passed.
pub fn limit(ctx: &mut Ctx) {
    let max = ctx.srv.config.tracking_table_max_keys as usize;
    if max == 0 || ctx.srv.tracking.table.len() <= max {
        ctx.srv.tracking.limit_misses = 0;
        return;
    }
    let effort = 100 * (ctx.srv.tracking.limit_misses as usize + 1);
    for _ in 0..effort {
        let table = &ctx.srv.tracking.table;
        let Some(slot) = table.random_slot(crate::util::rand_u64) else {
            break;
        };
        let key: Box<[u8]> = table.key_at(slot).into();
        invalidate(ctx, &key, false, false);
        if ctx.srv.tracking.table.len() <= max {
            ctx.srv.tracking.limit_misses = 0;
            return;
        }
    }
    ctx.srv.tracking.limit_misses += 1;
}

/// Whether some BCAST prefix has changed keys to send.
pub fn broadcast_due(state: &Tracking) -> bool {
    state.clients > 0 && state.prefixes.values().any(|bs| !bs.keys.is_empty())
}

/// Redis's `trackingBroadcastInvalidationMessages`, once per event loop turn: each prefix's changed
/// keys to its clients, one array each (without a NOLOOP client's own changes).
pub fn broadcast(ctx: &mut Ctx) {
    let mut prefixes = std::mem::take(&mut ctx.srv.tracking.prefixes);
    for bs in prefixes.values_mut() {
        if bs.keys.is_empty() {
            continue;
        }
        let all = keys_array(&bs.keys, None).unwrap_or_default();
        for &(id, slot) in &bs.clients {
            let Some(c) = ctx.clients.get(slot).filter(|c| c.id == id) else {
                continue;
            };
            if c.tracking.has(NOLOOP) {
                if let Some(own) = keys_array(&bs.keys, Some(id)) {
                    send(ctx, slot, Payload::Proto(&own));
                }
            } else {
                send(ctx, slot, Payload::Proto(&all));
            }
        }
        bs.keys.clear();
    }
    ctx.srv.tracking.prefixes = prefixes;
}

/// The array of `keys` (but those `except` changed last), or None if that leaves none (Redis's
/// `trackingBuildBroadcastReply`).
fn keys_array(keys: &BTreeMap<Box<[u8]>, Option<u64>>, except: Option<u64>) -> Option<Vec<u8>> {
    let mut out = Reply::default();
    let keep = |by: &Option<u64>| except.is_none() || *by != except;
    let n = keys.values().filter(|by| keep(by)).count();
    if n == 0 && except.is_some() {
        return None;
    }
    out.array(n);
    for (k, _) in keys.iter().filter(|(_, by)| keep(by)) {
        out.bulk(k);
    }
    Some(out.buf)
}

/// Redis's `sendTrackingMessage`: an invalidation for tracking client `slot`, to it or to its
/// REDIRECT client.
fn send(ctx: &mut Ctx, slot: usize, payload: Payload) {
    let me = ctx.id;
    let resp3_of = |ctx: &Ctx, k: usize| {
        if k == me {
            ctx.out.resp3
        } else {
            ctx.clients[k].out.resp3
        }
    };
    let own_resp3 = resp3_of(ctx, slot);
    let t = &ctx.clients[slot].tracking;
    let mut dest = slot;
    if t.redirect != 0 {
        let (id, key) = (t.redirect, t.redirect_key);
        if ctx.clients.get(key).is_none_or(|c| c.id != id) {
            ctx.clients[slot].tracking.flags |= BROKEN_REDIR;
            if own_resp3 {
                deliver(ctx, slot, |out| {
                    out.push(2);
                    out.bulk(b"tracking-redir-broken");
                    out.int(id as i64);
                });
            }
            return;
        }
        dest = key;
        if dest == me {
            let running = &ctx.srv.script_running;
            if running.active && running.client == me {
                // The caller's reply buffer is its script's until the script ends.
                let id = ctx.clients[slot].id;
                let key = match payload {
                    Payload::Key(k) => Some(k.into()),
                    _ => None,
                };
                ctx.srv.tracking.pending.push((slot, id, key));
                return;
            }
        }
    }
    let resp3 = resp3_of(ctx, dest);
    if !resp3 && (dest == slot || ctx.clients[dest].subs.total() == 0) {
        // RESP2 has no pushes: only a subscribed REDIRECT client can be told.
        return;
    }
    deliver(ctx, dest, |out| {
        if resp3 {
            out.push(2);
            out.bulk(b"invalidate");
        } else {
            out.push(3);
            out.bulk(b"message");
            out.bulk(CHANNEL);
        }
        match payload {
            Payload::Key(k) => {
                out.array(1);
                out.bulk(k);
            }
            Payload::Proto(p) => out.buf.extend_from_slice(p),
            Payload::All => {
                out.buf
                    .extend_from_slice(if own_resp3 { b"_\r\n" } else { b"$-1\r\n" })
            }
        }
    });
}

/// Writes a push to client `k` (the caller's lent buffer if it is the caller), queued to be
/// flushed this loop turn and held to its output buffer limit, as a pub/sub message.
fn deliver(ctx: &mut Ctx, k: usize, write: impl FnOnce(&mut Reply)) {
    let srv = &mut *ctx.srv;
    let Some(out) = crate::server::pubsub::deliver_target(ctx.clients, ctx.id, ctx.out, k) else {
        return;
    };
    out.pushed(write);
    if k != ctx.id {
        srv.pubsub.notified.push(k);
        crate::server::pubsub::check_limit(
            ctx.clients,
            k,
            &srv.config.obuf_limits,
            &mut srv.pubsub.to_close,
        );
    }
}
