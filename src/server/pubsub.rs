//! The pub/sub registry (Redis's `server.pubsub_channels`, `pubsub_patterns`, `pubsub_shard_channels`)
//! and message delivery with output-buffer limits.
//!
//! Each channel, pattern and shard channel maps to its subscribers (slab keys) in subscription order;
//! each client keeps its own sets (`Subs`) so its counts and UNSUBSCRIBE-all are cheap. Both sides are
//! updated together by `subscribe` / `unsubscribe`, and `unsubscribe_all` runs when a client leaves.
//!
//! Delivery (`publish`) appends a `message`/`pmessage`/`smessage` (a `>` push under RESP3) to each
//! receiver's reply buffer, in order: channel subscribers first, then pattern subscribers, as Redis.
//! A receiver whose unsent output passes `client-output-buffer-limit` for its class (hard limit, or
//! soft limit held for soft-seconds) is scheduled to close, as Redis's
//! `closeClientOnOutputBufferLimitReached`: a slow subscriber never makes the server buffer without
//! bound. Receivers are queued in `notified` for the reactor to flush this loop turn.

use slab::Slab;

use crate::config::ObufLimits;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::ctx::Ctx;
use crate::store::dict::Dict;
use crate::store::glob;

/// The three subscription kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    /// The reply names of (subscribe, unsubscribe, message) for this kind.
    pub fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Channel => ("subscribe", "unsubscribe", "message"),
            Kind::Pattern => ("psubscribe", "punsubscribe", "pmessage"),
            Kind::Shard => ("ssubscribe", "sunsubscribe", "smessage"),
        }
    }
}

/// One client's subscriptions.
#[derive(Default)]
pub struct Subs {
    pub channels: Dict<()>,
    pub patterns: Dict<()>,
    pub shard: Dict<()>,
}

impl Subs {
    fn of(&self, kind: Kind) -> &Dict<()> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    fn of_mut(&mut self, kind: Kind) -> &mut Dict<()> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// The count (P)SUBSCRIBE replies carry: channels plus patterns (shard channels count apart).
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Shard => self.shard.len(),
            _ => self.channels.len() + self.patterns.len(),
        }
    }

    /// Every subscription: non-zero means the client is in pub/sub mode (Redis's CLIENT_PUBSUB).
    pub fn total(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard.len()
    }
}

#[derive(Default)]
pub struct PubSub {
    pub channels: Dict<Vec<usize>>,
    pub patterns: Dict<Vec<usize>>,
    pub shard: Dict<Vec<usize>>,
    /// Clients that received messages during the current command, to flush this loop turn.
    pub notified: Vec<usize>,
    /// Clients over their output limit, by (slab key, client id), to close this loop turn.
    pub to_close: Vec<(usize, u64)>,
}

impl PubSub {
    fn registry(&mut self, kind: Kind) -> &mut Dict<Vec<usize>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    pub fn registry_ref(&self, kind: Kind) -> &Dict<Vec<usize>> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    /// Adds a subscription; false if the client already had it.
    pub fn subscribe(&mut self, subs: &mut Subs, client: usize, kind: Kind, name: &[u8]) -> bool {
        let mine = subs.of_mut(kind);
        if mine.find(name).is_some() {
            return false;
        }
        mine.insert_new(name, ());
        let reg = self.registry(kind);
        match reg.get_mut(name) {
            Some(list) => list.push(client),
            None => {
                reg.insert_new(name, vec![client]);
            }
        }
        true
    }

    /// Drops a subscription; false if the client did not have it.
    pub fn unsubscribe(&mut self, subs: &mut Subs, client: usize, kind: Kind, name: &[u8]) -> bool {
        if subs.of_mut(kind).remove(name).is_none() {
            return false;
        }
        let reg = self.registry(kind);
        if let Some(list) = reg.get_mut(name) {
            list.retain(|&c| c != client);
            if list.is_empty() {
                reg.remove(name);
            }
        }
        true
    }

    /// The client's subscriptions of one kind, in subscription order.
    pub fn names_of(subs: &Subs, kind: Kind) -> Vec<Box<[u8]>> {
        subs.of(kind).iter().map(|(_, k, _)| Box::from(k)).collect()
    }

    /// Drops every subscription of a client (disconnect, RESET), without notifying it.
    pub fn unsubscribe_all(&mut self, subs: &mut Subs, client: usize) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in Self::names_of(subs, kind) {
                self.unsubscribe(subs, client, kind, &name);
            }
        }
    }
}

/// Delivers `msg` on `channel` (a shard channel if `kind` is `Shard`) to every subscriber and every
/// matching pattern subscriber; the publisher's own messages go to its lent reply buffer. Returns the
/// number of receivers, as PUBLISH replies.
pub fn publish(ctx: &mut Ctx, kind: Kind, channel: &[u8], msg: &[u8]) -> usize {
    let Ctx {
        srv,
        clients,
        id,
        out,
        ..
    } = ctx;
    let (me, my_out) = (*id, &mut **out);
    let limits = &srv.config.obuf_limits;
    let PubSub {
        channels,
        patterns,
        shard,
        notified,
        to_close,
        ..
    } = &mut srv.pubsub;
    let mut receivers = 0;
    let reg = if kind == Kind::Shard { shard } else { channels };
    let mut deliver = |clients: &mut Slab<Client>, c: usize, pattern: Option<&[u8]>| {
        receivers += 1;
        let kind = if pattern.is_some() {
            Kind::Pattern
        } else {
            kind
        };
        if let Some(out) = deliver_target(clients, me, my_out, c) {
            write_message(out, kind, pattern, channel, msg);
            if c != me {
                notified.push(c);
                check_limit(clients, c, limits, to_close);
            }
        }
    };
    if let Some(list) = reg.get(channel) {
        for &c in list {
            deliver(clients, c, None);
        }
    }
    if kind == Kind::Channel && !patterns.is_empty() {
        for (_, pattern, list) in patterns.iter() {
            if glob::matches(pattern, channel, false) {
                for &c in list {
                    deliver(clients, c, Some(pattern));
                }
            }
        }
    }
    receivers
}

/// The reply buffer a message for client `c` goes to: the caller's own buffer is lent to the running
/// command. None for a client already scheduled to close (Redis gives such clients no more output).
pub fn deliver_target<'a>(
    clients: &'a mut Slab<Client>,
    me: usize,
    my_out: &'a mut Reply,
    c: usize,
) -> Option<&'a mut Reply> {
    if c == me {
        return Some(my_out);
    }
    let client = clients.get_mut(c)?;
    if client.close_asap {
        return None;
    }
    Some(&mut client.out)
}

/// A `message` (`[message, channel, payload]`) or `pmessage` (`[pmessage, pattern, channel, payload]`).
fn write_message(out: &mut Reply, kind: Kind, pattern: Option<&[u8]>, channel: &[u8], msg: &[u8]) {
    let (_, _, name) = kind.names();
    out.pushed(|out| {
        out.push(if pattern.is_some() { 4 } else { 3 });
        out.bulk_str(name);
        if let Some(p) = pattern {
            out.bulk(p);
        }
        out.bulk(channel);
        out.bulk(msg);
    });
}

/// Schedules client `c` to close this loop turn if its unsent output is over the limit of its
/// class (`Client::over_obuf_limit`), as Redis's `closeClientOnOutputBufferLimitReached` after
/// each reply appended to a client other than the one running the command.
pub fn check_limit(
    clients: &mut Slab<Client>,
    c: usize,
    limits: &ObufLimits,
    to_close: &mut Vec<(usize, u64)>,
) {
    let Some(client) = clients.get_mut(c) else {
        return;
    };
    let limit = client.obuf_limit(limits);
    if client.over_obuf_limit(client.pending_output(), limit) {
        client.close_for_obuf();
        to_close.push((c, client.id));
    }
}
