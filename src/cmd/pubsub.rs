//! Pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
//! PUBLISH, SPUBLISH and the PUBSUB container (CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB,
//! HELP). The registry and delivery live in `server::pubsub`; shard channels behave as Redis does in
//! standalone mode (a namespace of their own, reached only by SPUBLISH).
//!
//! A RESP2 client with any subscription is in subscriber mode: the gate then only lets the commands
//! flagged `SUB_OK` through. RESP3 clients get `>` pushes and may run anything.

use super::keyspec::NOT_KEY;
use super::parse::text;
use super::{
    err, Args, CmdResult, Command, Ctx, FAST, LOADING, MAY_REPLICATE, NOSCRIPT, PUBSUB, STALE,
    SUB_OK,
};
use crate::server::pubsub::{Kind, PubSub};
use crate::store::glob;

const GROUP: &str = "pubsub";

/// The (un)subscribe confirmation: `[kind, name, count]`, a push under RESP3; `name` None is Redis's
/// null channel of an UNSUBSCRIBE without subscriptions.
fn confirm(ctx: &mut Ctx, what: &str, name: Option<&[u8]>, count: usize) {
    ctx.out.pushed(|out| {
        out.push(3);
        out.bulk_str(what);
        match name {
            Some(n) => out.bulk(n),
            None => out.null(),
        }
        out.int(count as i64);
    });
}

fn subscribe_generic(ctx: &mut Ctx, args: Args, kind: Kind) -> CmdResult {
    let id = ctx.id;
    let (what, _, _) = kind.names();
    for name in args.tail(1).iter() {
        let c = &mut ctx.clients[id];
        ctx.srv.pubsub.subscribe(&mut c.subs, id, kind, name);
        let count = c.subs.count(kind);
        confirm(ctx, what, Some(name), count);
    }
    Ok(())
}

fn unsubscribe_generic(ctx: &mut Ctx, args: Args, kind: Kind) -> CmdResult {
    let id = ctx.id;
    let (_, what, _) = kind.names();
    let names: Vec<Box<[u8]>> = if args.len() > 1 {
        args.tail(1).iter().map(Box::from).collect()
    } else {
        PubSub::names_of(&ctx.clients[id].subs, kind)
    };
    if names.is_empty() {
        let count = ctx.clients[id].subs.count(kind);
        confirm(ctx, what, None, count);
    }
    for name in names {
        let c = &mut ctx.clients[id];
        ctx.srv.pubsub.unsubscribe(&mut c.subs, id, kind, &name);
        let count = c.subs.count(kind);
        confirm(ctx, what, Some(&name), count);
    }
    Ok(())
}

/// SUBSCRIBE channel [channel ...]
///
/// # Format
/// `SUBSCRIBE channel [channel ...]` — one `[subscribe, channel, count]` per channel; then messages
/// arrive as `[message, channel, payload]`.
fn subscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    subscribe_generic(ctx, args, Kind::Channel)
}

/// UNSUBSCRIBE [channel [channel ...]]
///
/// # Format
/// `UNSUBSCRIBE [channel ...]` — one `[unsubscribe, channel, count]` per channel (every subscribed
/// channel when none is named).
fn unsubscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Channel)
}

/// PSUBSCRIBE pattern [pattern ...]
///
/// # Format
/// `PSUBSCRIBE pattern [pattern ...]` — one `[psubscribe, pattern, count]` per pattern; messages on
/// matching channels arrive as `[pmessage, pattern, channel, payload]`.
fn psubscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    subscribe_generic(ctx, args, Kind::Pattern)
}

/// PUNSUBSCRIBE [pattern [pattern ...]]
///
/// # Format
/// `PUNSUBSCRIBE [pattern ...]` — one `[punsubscribe, pattern, count]` per pattern.
fn punsubscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Pattern)
}

/// SSUBSCRIBE shardchannel [shardchannel ...]
///
/// # Format
/// `SSUBSCRIBE shardchannel [shardchannel ...]` — one `[ssubscribe, channel, count]` per channel;
/// messages arrive as `[smessage, channel, payload]`. Refused inside EXEC (deny-blocking), as Redis.
fn ssubscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    if ctx.client().deny_blocking {
        return Err(err("SSUBSCRIBE isn't allowed for a DENY BLOCKING client"));
    }
    subscribe_generic(ctx, args, Kind::Shard)
}

/// SUNSUBSCRIBE [shardchannel [shardchannel ...]]
///
/// # Format
/// `SUNSUBSCRIBE [shardchannel ...]` — one `[sunsubscribe, channel, count]` per shard channel.
fn sunsubscribe(ctx: &mut Ctx, args: Args) -> CmdResult {
    unsubscribe_generic(ctx, args, Kind::Shard)
}

fn publish_generic(ctx: &mut Ctx, args: Args, kind: Kind) -> CmdResult {
    let n = crate::server::pubsub::publish(ctx, kind, &args[1], &args[2]);
    ctx.out.int(n as i64);
    Ok(())
}

/// PUBLISH channel message
///
/// # Format
/// `PUBLISH channel message` — the number of receivers (channel plus pattern subscriptions).
fn publish(ctx: &mut Ctx, args: Args) -> CmdResult {
    publish_generic(ctx, args, Kind::Channel)
}

/// SPUBLISH shardchannel message
///
/// # Format
/// `SPUBLISH shardchannel message` — the number of shard channel subscribers that received it.
fn spublish(ctx: &mut Ctx, args: Args) -> CmdResult {
    publish_generic(ctx, args, Kind::Shard)
}

/// PUBSUB CHANNELS / SHARDCHANNELS: the active names, optionally filtered by a glob pattern.
fn list_channels(ctx: &mut Ctx, args: Args, kind: Kind) -> CmdResult {
    if args.len() > 3 {
        return Err(err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            text(&args[1])
        )));
    }
    let pattern = args.get(2);
    let names: Vec<&[u8]> = ctx
        .srv
        .pubsub
        .registry_ref(kind)
        .iter()
        .map(|(_, k, _)| k)
        .filter(|k| pattern.is_none_or(|p| glob::matches(p, k, false)))
        .collect();
    ctx.out.array(names.len());
    for n in names {
        ctx.out.bulk(n);
    }
    Ok(())
}

/// PUBSUB NUMSUB / SHARDNUMSUB: `name, count` pairs (a flat array in both protocols, as Redis).
fn count_subscribers(ctx: &mut Ctx, args: Args, kind: Kind) -> CmdResult {
    ctx.out.array((args.len() - 2) * 2);
    for name in args.tail(2).iter() {
        let n = ctx
            .srv
            .pubsub
            .registry_ref(kind)
            .get(name)
            .map_or(0, |l| l.len());
        ctx.out.bulk(name);
        ctx.out.int(n as i64);
    }
    Ok(())
}

/// PUBSUB CHANNELS [pattern]
///
/// # Format
/// `PUBSUB CHANNELS [pattern]` — the channels with at least one subscriber (pattern subscriptions
/// aside), matching the pattern if one is given.
fn pubsub_channels(ctx: &mut Ctx, args: Args) -> CmdResult {
    list_channels(ctx, args, Kind::Channel)
}

/// PUBSUB NUMSUB [channel [channel ...]]
///
/// # Format
/// `PUBSUB NUMSUB [channel ...]` — each channel and its number of subscribers.
fn pubsub_numsub(ctx: &mut Ctx, args: Args) -> CmdResult {
    count_subscribers(ctx, args, Kind::Channel)
}

/// PUBSUB NUMPAT
///
/// # Format
/// `PUBSUB NUMPAT` — the number of distinct patterns subscribed to.
fn pubsub_numpat(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let n = ctx.srv.pubsub.patterns.len();
    ctx.out.int(n as i64);
    Ok(())
}

/// PUBSUB SHARDCHANNELS [pattern]
///
/// # Format
/// `PUBSUB SHARDCHANNELS [pattern]` — the shard channels with at least one subscriber.
fn pubsub_shardchannels(ctx: &mut Ctx, args: Args) -> CmdResult {
    list_channels(ctx, args, Kind::Shard)
}

/// PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]
///
/// # Format
/// `PUBSUB SHARDNUMSUB [shardchannel ...]` — each shard channel and its number of subscribers.
fn pubsub_shardnumsub(ctx: &mut Ctx, args: Args) -> CmdResult {
    count_subscribers(ctx, args, Kind::Shard)
}

const PUBSUB_HELP: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

/// PUBSUB HELP
///
/// # Format
/// `PUBSUB HELP` — the subcommands.
fn pubsub_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.array(PUBSUB_HELP.len() + 3);
    ctx.out
        .simple("PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    for l in PUBSUB_HELP {
        ctx.out.simple(l);
    }
    ctx.out.simple("HELP");
    // Redis's pubsub help says "Prints", where the shared help line says "Print".
    ctx.out.simple("    Prints this help.");
    Ok(())
}

const PUBSUB_SUBCOMMANDS: &[Command] = &[
    Command::new("pubsub|numsub", pubsub_numsub, -2, PUBSUB | LOADING | STALE)
        .group(GROUP)
        .doc("Get the count of subscribers for channels", "2.8.0", "O(N) for the NUMSUB subcommand, where N is the number of requested channels", "[channel [channel ...]]"),
    Command::new("pubsub|help", pubsub_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc("Show helpful text about the different subcommands", "6.2.0", "O(1)", ""),
    Command::new("pubsub|channels", pubsub_channels, -2, PUBSUB | LOADING | STALE)
        .group(GROUP)
        .doc("List active channels", "2.8.0", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)", "[pattern]"),
    Command::new("pubsub|shardnumsub", pubsub_shardnumsub, -2, PUBSUB | LOADING | STALE)
        .group(GROUP)
        .doc("Get the count of subscribers for shard channels", "7.0.0", "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels", "[shardchannel [shardchannel ...]]"),
    Command::new("pubsub|numpat", pubsub_numpat, 2, PUBSUB | LOADING | STALE)
        .group(GROUP)
        .doc("Get the count of unique patterns pattern subscriptions", "2.8.0", "O(1)", ""),
    Command::new("pubsub|shardchannels", pubsub_shardchannels, -2, PUBSUB | LOADING | STALE)
        .group(GROUP)
        .doc("List active shard channels", "7.0.0", "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).", "[pattern]"),
];

pub const COMMANDS: &[Command] = &[
    Command::new("subscribe", subscribe, -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK)
        .group(GROUP)
        .doc("Listen for messages published to the given channels", "2.0.0", "O(N) where N is the number of channels to subscribe to.", "channel [channel ...]"),
    Command::new("unsubscribe", unsubscribe, -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK)
        .group(GROUP)
        .doc("Stop listening for messages posted to the given channels", "2.0.0", "O(N) where N is the number of clients already subscribed to a channel.", "[channel [channel ...]]"),
    Command::new("psubscribe", psubscribe, -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK)
        .group(GROUP)
        .doc("Listen for messages published to channels matching the given patterns", "2.0.0", "O(N) where N is the number of patterns the client is already subscribed to.", "pattern:(pattern) [pattern:(pattern) ...]"),
    Command::new("punsubscribe", punsubscribe, -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK)
        .group(GROUP)
        .doc("Stop listening for messages posted to channels matching the given patterns", "2.0.0", "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).", "[pattern [pattern ...]]"),
    Command::new("ssubscribe", ssubscribe, -2, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK).key_range(1, -1, 1, NOT_KEY)
        .group(GROUP)
        .doc("Listen for messages published to the given shard channels", "7.0.0", "O(N) where N is the number of shard channels to subscribe to.", "shardchannel [shardchannel ...]"),
    Command::new("sunsubscribe", sunsubscribe, -1, PUBSUB | NOSCRIPT | LOADING | STALE | SUB_OK).key_range(1, -1, 1, NOT_KEY)
        .group(GROUP)
        .doc("Stop listening for messages posted to the given shard channels", "7.0.0", "O(N) where N is the number of clients already subscribed to a shard channel.", "[shardchannel [shardchannel ...]]"),
    Command::new("publish", publish, 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE)
        .group(GROUP)
        .doc("Post a message to a channel", "2.0.0", "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).", "channel message"),
    Command::new("spublish", spublish, 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE).key(1, NOT_KEY)
        .group(GROUP)
        .doc("Post a message to a shard channel", "7.0.0", "O(N) where N is the number of clients subscribed to the receiving shard channel.", "shardchannel message"),
    Command::container("pubsub", -2, PUBSUB_SUBCOMMANDS)
        .group(GROUP)
        .doc("A container for Pub/Sub commands", "2.8.0", "Depends on subcommand.", ""),
];
