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

use std::time::Instant;

use slab::Slab;

use crate::cmd::Ctx;
use crate::config::parse_memory;
use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::store::dict::Dict;
use crate::store::glob;
use crate::warning;

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

/// `client-output-buffer-limit` for one class, in bytes and seconds (0 = no limit).
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub struct ObufLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_secs: u64,
}

/// Parses one class (`normal`, `slave`, `pubsub`) out of the config's
/// `client-output-buffer-limit` value (`normal h s t slave h s t pubsub h s t`, already validated
/// by CONFIG).
pub fn parse_class_limit(conf: &str, class: &str) -> ObufLimit {
    let words: Vec<&str> = conf.split_whitespace().collect();
    for ch in words.chunks(4) {
        if ch.len() == 4 && ch[0].eq_ignore_ascii_case(class) {
            let num = |s: &str| parse_memory(s).unwrap_or(0).max(0) as u64;
            return ObufLimit {
                hard: num(ch[1]),
                soft: num(ch[2]),
                soft_secs: ch[3].parse().unwrap_or(0),
            };
        }
    }
    ObufLimit::default()
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
    /// The parsed pubsub limit and the config text it came from (reparsed when CONFIG SET changes it).
    limit: ObufLimit,
    limit_src: String,
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

    /// The pubsub output limit, reparsed only when the configuration text changed.
    fn limit(&mut self, conf: &str) -> ObufLimit {
        if self.limit_src != conf {
            self.limit = parse_class_limit(conf, "pubsub");
            self.limit_src = conf.to_string();
        }
        self.limit
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
    let limit = srv.pubsub.limit(&srv.config.client_output_buffer_limit);
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
                check_limit(clients, c, limit, to_close);
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
fn deliver_target<'a>(
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

/// Redis's `checkClientOutputBufferLimits` for the pubsub and monitor classes: past the hard limit, or past the
/// soft limit for longer than soft-seconds, the client is scheduled to close (and logged once).
pub fn check_limit(
    clients: &mut Slab<Client>,
    c: usize,
    limit: ObufLimit,
    to_close: &mut Vec<(usize, u64)>,
) {
    if limit.hard == 0 && limit.soft == 0 {
        return;
    }
    let Some(client) = clients.get_mut(c) else {
        return;
    };
    let used = client.pending_output() as u64;
    let hard = limit.hard > 0 && used >= limit.hard;
    let mut soft = limit.soft > 0 && used >= limit.soft;
    if soft {
        match client.obuf_soft_since {
            None => {
                client.obuf_soft_since = Some(Instant::now());
                soft = false;
            }
            Some(t) => {
                if t.elapsed().as_secs() <= limit.soft_secs {
                    soft = false;
                }
            }
        }
    } else {
        client.obuf_soft_since = None;
    }
    if hard || soft {
        client.close_asap = true;
        let resp = if client.out.resp3 { 3 } else { 2 };
        warning!(
            "Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
            client.info_line(resp)
        );
        to_close.push((c, client.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_pubsub_class() {
        let conf = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";
        let l = parse_class_limit(conf, "pubsub");
        assert_eq!(
            l,
            ObufLimit {
                hard: 33554432,
                soft: 8388608,
                soft_secs: 60
            }
        );
        assert_eq!(
            parse_class_limit("normal 0 0 0", "pubsub"),
            ObufLimit::default()
        );
        let slave = parse_class_limit(conf, "slave");
        assert_eq!(
            (slave.hard, slave.soft, slave.soft_secs),
            (268435456, 67108864, 60)
        );
    }
}
