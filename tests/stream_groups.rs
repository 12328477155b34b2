//! Stream consumer groups against Debian's redis-server: XGROUP, XREADGROUP (blocking too), XACK,
//! XPENDING, XCLAIM, XAUTOCLAIM and XINFO, reply for reply in RESP2 and RESP3, their keyspace
//! events, transactions and scripts, what they log to the AOF and that it replays, and random
//! sequences of stream commands. Replies that depend on the clock (idle and seen times) are
//! compared with those integers masked.

mod common;

use common::*;

/// A stream with entries in two nodes, one deleted, and a group read by two consumers.
const SETUP: &[&str] = &[
    "CONFIG SET stream-node-max-entries 3",
    "XADD s 1-1 a 1",
    "XADD s 1-2 b 2 c 3",
    "XADD s 2-0 a 4",
    "XADD s 3-0 a 5",
    "XADD s 4-0 a 6",
    "XGROUP CREATE s g 0",
    "XREADGROUP GROUP g alice COUNT 2 STREAMS s >",
    "XREADGROUP GROUP g bob STREAMS s >",
    "CONFIG SET stream-node-max-entries 100",
];

fn with_setup(lines: &[&'static str]) -> Vec<&'static str> {
    SETUP.iter().chain(lines).copied().collect()
}

#[test]
fn xgroup_matches_redis() {
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "XGROUP CREATE s g 0",
            "XGROUP CREATE s g 0 MKSTREAM",
            "XGROUP CREATE s g 0 MKSTREAM",
            "TYPE s",
            "XGROUP CREATE s g2 $ ENTRIESREAD 5",
            "XGROUP CREATE s g3 $ ENTRIESREAD -2",
            "XGROUP CREATE s g3 $ ENTRIESREAD x",
            "XGROUP CREATE s g3 $ ENTRIESREAD -1",
            "XGROUP CREATE s g4 $ FOO",
            "XGROUP CREATE s g4 $ ENTRIESREAD",
            "XGROUP CREATE s g4 $ MKSTREAM MKSTREAM MKSTREAM MKSTREAM",
            "XGROUP CREATE s g4 1-x",
            "XGROUP CREATE s g4 -",
            "XGROUP CREATE s g4 5",
            "XGROUP SETID s nog 0",
            "XGROUP SETID s g + ENTRIESREAD 3",
            "XGROUP SETID s g -",
            "XGROUP SETID s g 5",
            "XGROUP SETID s g x",
            "XGROUP SETID s g 0 MKSTREAM",
            "XGROUP SETID s g 0 ENTRIESREAD",
            "XGROUP SETID nokey g 0",
            "XGROUP DESTROY s g2",
            "XGROUP DESTROY s g2",
            "XGROUP DESTROY nokey g2",
            "XGROUP CREATECONSUMER s g alice",
            "XGROUP CREATECONSUMER s g alice",
            "XGROUP CREATECONSUMER s nog alice",
            "XGROUP DELCONSUMER s g alice",
            "XGROUP DELCONSUMER s g bob",
            "XGROUP DELCONSUMER s nog bob",
            "XGROUP HELP",
            "XGROUP",
            "XGROUP FOO",
            "XGROUP HELP extra",
            "XGROUP DESTROY s",
            "XGROUP DESTROY s g extra",
            "XGROUP CREATE",
            "XGROUP CREATECONSUMER s g",
            "~XINFO GROUPS s",
            "SET str x",
            "XGROUP CREATE str g $",
            "XGROUP CREATE str g $ MKSTREAM",
            "XGROUP DESTROY str g",
        ],
        with_setup(&[
            "XGROUP DELCONSUMER s g alice",
            "XPENDING s g",
            "XGROUP DESTROY s g",
            "XINFO GROUPS s",
        ]),
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

#[test]
fn xreadgroup_and_xack_match_redis() {
    let cases: Vec<Vec<&str>> = vec![
        with_setup(&[
            "XREADGROUP GROUP g bob STREAMS s >",
            "XREADGROUP GROUP g alice STREAMS s 0",
            "XREADGROUP GROUP g alice STREAMS s 1-1",
            "XREADGROUP GROUP g alice COUNT 1 STREAMS s 0",
            "XREADGROUP GROUP g nobody STREAMS s 0",
            "XREADGROUP GROUP g alice STREAMS s $",
            "XREADGROUP GROUP nog alice STREAMS s >",
            "XREADGROUP GROUP g alice STREAMS nokey >",
            "XREADGROUP GROUP g alice STREAMS s nokey > >",
            "XREADGROUP STREAMS s >",
            "XREADGROUP GROUP g STREAMS s >",
            "XREADGROUP GROUP g alice STREAMS s",
            "XREADGROUP GROUP g alice STREAMS s x",
            "XREADGROUP GROUP g alice COUNT x STREAMS s >",
            "XREADGROUP GROUP g alice BLOCK x STREAMS s >",
            "XREADGROUP GROUP g alice FOO STREAMS s >",
            "XREAD GROUP g alice STREAMS s >",
            "XREAD NOACK STREAMS s 0",
            "XACK s g 1-1 9-9",
            "XACK s g 1-1",
            "XACK s nog 1-1",
            "XACK nokey g 1-1",
            "XACK s g bad",
            "XACK s g 1-2 bad",
            "XACK s g 2",
            "XPENDING s g",
            "XDEL s 3-0",
            "XREADGROUP GROUP g bob STREAMS s 0",
            "XREADGROUP GROUP g bob STREAMS s 0",
            "XINFO GROUPS s",
            "&XINFO STREAM s FULL",
            "XADD s 5-0 n 1",
            "XADD s 6-0 n 2",
            "XREADGROUP GROUP g carol NOACK STREAMS s >",
            "XPENDING s g - + 10 carol",
            "XINFO GROUPS s",
            "XGROUP SETID s g 0",
            "XREADGROUP GROUP g dave COUNT 2 STREAMS s >",
            "XPENDING s g",
            "%XINFO CONSUMERS s g",
            "XINFO CONSUMERS s nog",
            "SET str x",
            "XREADGROUP GROUP g alice STREAMS str >",
            "XACK str g 1-1",
        ]),
        vec![
            "XGROUP CREATE e g $ MKSTREAM",
            "XREADGROUP GROUP g c STREAMS e >",
            "XREADGROUP GROUP g c STREAMS e 0",
            "XINFO CONSUMERS e g",
            "XREADGROUP GROUP g c COUNT 0 STREAMS e >",
            "XADD e 1-0 f v",
            "XADD e 2-0 f v",
            "XADD e 3-0 f v",
            "XREADGROUP GROUP g c COUNT 0 STREAMS e >",
            "XREADGROUP GROUP g c COUNT -5 STREAMS e 0",
            "XGROUP CREATE other g 0 MKSTREAM",
            "XADD other 1-0 x y",
            "XREADGROUP GROUP g c STREAMS e other 0 >",
            "XREADGROUP GROUP g c STREAMS e other > >",
        ],
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

#[test]
fn xpending_matches_redis() {
    let cases: Vec<Vec<&str>> = vec![with_setup(&[
        "XPENDING s g",
        "%XPENDING s g - + 10",
        "%XPENDING s g - + 10 bob",
        "XPENDING s g - + 10 nobody",
        "%XPENDING s g IDLE 0 - + 10",
        "XPENDING s g IDLE 100000 - + 10",
        "%XPENDING s g IDLE -5 - + 10",
        "%XPENDING s g ( + 10",
        "%XPENDING s g (1-1 + 10",
        "%XPENDING s g - (3-0 10",
        "%XPENDING s g (0-0 (3-0 10",
        "XPENDING s g (18446744073709551615-18446744073709551615 + 10",
        "XPENDING s g - (0-0 10",
        "XPENDING s g 5 1 10",
        "XPENDING s g - + 0",
        "%XPENDING s g - + -3",
        "XPENDING s g - + x",
        "XPENDING s g - +",
        "XPENDING s g IDLE 1 - +",
        "XPENDING s g IDLE x - + 10",
        // Extra arguments are ignored: entries come back, with idle times masked.
        "%XPENDING s g - + 10 bob extra",
        "XPENDING s g x + 10",
        "XPENDING s g - x 10",
        "XPENDING s g 1",
        "XPENDING s nog",
        "XPENDING nokey g",
        "XPENDING s nog - + 10",
        "SET str x",
        "XPENDING str g",
    ])];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

#[test]
fn xclaim_and_xautoclaim_match_redis() {
    let cases: Vec<Vec<&str>> = vec![
        with_setup(&[
            "XCLAIM s g dave 0 1-2 3-0 JUSTID",
            "XPENDING s g",
            "XCLAIM s g dave 0 1-2 3-0 RETRYCOUNT 7 TIME 1000",
            "%XPENDING s g - + 10",
            "XCLAIM s g erin 0 1-2 IDLE 5000",
            "%XPENDING s g - + 10",
            "XCLAIM s g erin 3600000 1-2",
            "XCLAIM s g erin 0 1-2 IDLE x",
            "XCLAIM s g erin 0 1-2 TIME x",
            "XCLAIM s g erin 0 1-2 RETRYCOUNT x",
            "XCLAIM s g erin x 1-2",
            "XCLAIM s g erin 0 1-2 FOO",
            "XCLAIM s g erin 0 1-2 LASTID x",
            "XCLAIM s g erin 0 1-2 LASTID 9-0 JUSTID",
            "XINFO GROUPS s",
            "XCLAIM s g erin 0 1-2 LASTID 1-0 JUSTID",
            "XCLAIM s nog erin 0 1-2",
            "XCLAIM nokey g erin 0 1-2",
            "XCLAIM s g erin 0 9-9",
            "XCLAIM s g erin 0 9-9 FORCE",
            "XADD s 5-0 x y",
            "XCLAIM s g erin 0 5-0",
            "XCLAIM s g erin 0 5-0 FORCE TIME 123 RETRYCOUNT 2",
            "&XINFO STREAM s FULL",
            "XCLAIM s g frank 0 5-0 FORCE",
            "%XPENDING s g - + 10 frank",
            "XDEL s 1-1",
            "XCLAIM s g frank 0 1-1 2-0",
            "XPENDING s g",
            "XCLAIM s g frank 0 IDLE 10",
            "XCLAIM s g frank -5 2-0 IDLE -100 RETRYCOUNT -1",
            "XCLAIM s g frank 0 2-0 TIME 99999999999999",
            "XCLAIM s g frank 0 2 JUSTID",
            "SET str x",
            "XCLAIM str g erin 0 1-2",
        ]),
        with_setup(&[
            "XAUTOCLAIM s g carol 0 0 JUSTID",
            "XPENDING s g",
            "XAUTOCLAIM s g dave 0 0 COUNT 2",
            "XAUTOCLAIM s g dave 0 (1-1 COUNT 2 JUSTID",
            "XAUTOCLAIM s g dave 0 - COUNT 1",
            "XAUTOCLAIM s g dave 3600000 0",
            "XAUTOCLAIM s g carol 0 0 COUNT 0",
            "XAUTOCLAIM s g carol 0 0 COUNT -1",
            "XAUTOCLAIM s g carol 0 0 COUNT x",
            "XAUTOCLAIM s g carol 0 0 COUNT 8070450532247928833",
            "XAUTOCLAIM s g carol 0 0 COUNT",
            "XAUTOCLAIM s g carol x 0",
            "XAUTOCLAIM s g carol 0 x",
            "XAUTOCLAIM s g carol 0 (18446744073709551615-18446744073709551615",
            "XAUTOCLAIM s g carol 0 0 FOO",
            "XAUTOCLAIM s nog carol 0 0",
            "XAUTOCLAIM nokey g carol 0 0",
            "XDEL s 1-2 2-0",
            "XAUTOCLAIM s g erin 0 0 COUNT 1",
            "XAUTOCLAIM s g erin 0 0",
            "XPENDING s g",
            "XTRIM s MAXLEN 0",
            "XAUTOCLAIM s g erin 0 0 JUSTID",
            "&XINFO STREAM s FULL",
            "SET str x",
            "XAUTOCLAIM str g carol 0 0",
        ]),
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

#[test]
fn xinfo_matches_redis() {
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "XINFO HELP",
            "XINFO HELP extra",
            "XINFO STREAM nokey",
            "XINFO GROUPS nokey",
            "XINFO CONSUMERS nokey g",
            "XINFO FOO nokey",
            "XINFO",
            "XGROUP CREATE s g $ MKSTREAM",
            "XINFO STREAM s",
            "XINFO STREAM s FULL",
            "XINFO STREAM s FOO",
            "XINFO STREAM s FULL COUNT",
            "XINFO STREAM s FULL COUNT x",
            "XINFO STREAM s FULL FOO 1",
            "XINFO STREAM s FULL COUNT 1 extra",
            "XINFO GROUPS s extra",
            "XINFO CONSUMERS s",
            "XINFO CONSUMERS s nog",
            "XINFO CONSUMERS s g",
            "SET str x",
            "XINFO STREAM str",
        ],
        with_setup(&[
            "XINFO STREAM s",
            "&XINFO STREAM s FULL",
            "&XINFO STREAM s FULL COUNT 1",
            "&XINFO STREAM s FULL COUNT 0",
            "&XINFO STREAM s FULL COUNT -1",
            "XINFO GROUPS s",
            "%XINFO CONSUMERS s g",
            "XDEL s 4-0",
            "XINFO STREAM s",
            "XINFO GROUPS s",
            "XGROUP CREATE s fresh 0",
            "XGROUP CREATE s future 9-9",
            "XGROUP CREATE s known 1-2 ENTRIESREAD 2",
            "XINFO GROUPS s",
            "XTRIM s MAXLEN 0",
            "XINFO STREAM s",
            "XINFO GROUPS s",
            "XSETID s 10-0 ENTRIESADDED 99",
            "XINFO GROUPS s",
        ]),
        // Node shapes: the radix tree's node count as entries come and go.
        vec![
            "CONFIG SET stream-node-max-entries 2",
            "XADD t 1-1 f v",
            "XINFO STREAM t",
            "XADD t 1-2 f v",
            "XADD t 2-0 f v",
            "XADD t 256-0 f v",
            "XADD t 257-0 f v",
            "XADD t 65536-0 f v",
            "XADD t 65536-1 f v",
            "XADD t 65536-256 f v",
            "XADD t 4294967296-0 f v",
            "XINFO STREAM t",
            "XDEL t 256-0 257-0",
            "XINFO STREAM t",
            "XTRIM t MAXLEN 2",
            "XINFO STREAM t",
            "XTRIM t MAXLEN 0",
            "XINFO STREAM t",
            "CONFIG SET stream-node-max-entries 100",
        ],
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

/// Blocked XREADGROUP readers: woken by XADD from another client, EXEC and a script, served in
/// the order they blocked, timing out, released with an error when the group or the stream goes,
/// and never blocking inside MULTI or a script; a pipeline behind a blocked reader waits for it.
#[test]
fn blocking_xreadgroup_matches_redis() {
    let cases: &[&[&str]] = &[
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "c:!XREADGROUP GROUP g carl COUNT 1 BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:info:blocked_clients",
            "a:XADD s 1-0 f v",
            "b:<",
            "a:XADD s 2-0 f v",
            "c:<",
            "a:XPENDING s g",
            "a:info:blocked_clients",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob COUNT 1 BLOCK 0 STREAMS s > ;; PING",
            "sleep 50",
            "a:MULTI",
            "a:XADD s 1-0 a 1",
            "a:XADD s 2-0 b 2",
            "a:EXEC",
            "b:<",
            "b:<",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:EVAL \"return redis.call('xadd', KEYS[1], '7-7', 'f', 'v')\" 1 s",
            "b:<",
            "a:%XPENDING s g - + 10 bob",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "a:XGROUP CREATE t g $ MKSTREAM",
            "b:HELLO 3",
            "b:!XREADGROUP GROUP g bob BLOCK 0 NOACK STREAMS s t > >",
            "sleep 50",
            "a:XADD t 3-3 f v",
            "b:<",
            "a:XPENDING t g",
            "a:XINFO GROUPS t",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob BLOCK 100 STREAMS s >",
            "sleep 250",
            "b:<",
            "b:PING",
            "a:MULTI",
            "a:XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "a:EXEC",
            "a:EVAL \"return redis.pcall('xreadgroup', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', KEYS[1], '>')\" 1 s",
            "a:EVAL \"return redis.call('xreadgroup', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')\" 1 s",
            "a:XINFO GROUPS s",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "c:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:XGROUP DESTROY s g",
            "b:<",
            "c:quiet",
            "a:XGROUP CREATE s g $",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:DEL s",
            "b:<",
            "c:quiet",
            "a:XADD s 1-1 f v",
            "c:<",
            "a:XGROUP CREATE s g $",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:SET s x",
            "b:<",
            "a:DEL s",
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:FLUSHALL",
            "b:<",
            "a:info:cmdstat_xreadgroup",
            "a:info:errorstat_UNBLOCKED",
            "a:info:errorstat_NOGROUP",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:MULTI",
            "a:XADD s 5-0 a b",
            "a:XDEL s 5-0",
            "a:EXEC",
            "b:<",
            "a:XINFO GROUPS s",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:CLIENT UNBLOCK {id:b} ERROR",
            "b:<",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 50",
            "a:CLIENT UNBLOCK {id:b}",
            "b:<",
            "a:info:cmdstat_xreadgroup",
        ],
        &[
            "a:XGROUP CREATE s g $ MKSTREAM",
            "a:PEXPIRE s 200",
            "b:!XREADGROUP GROUP g bob BLOCK 0 STREAMS s >",
            "sleep 600",
            "b:<",
        ],
    ];
    scenarios(&[], cases);
}

/// Keyspace events of the group commands, as Redis raises them.
#[test]
fn keyspace_events_match_redis() {
    compare_events(
        "KEA",
        &[&[
            "XGROUP CREATE s g $ MKSTREAM",
            "XGROUP CREATE s g $",
            "XADD s 1-1 a b",
            "XGROUP CREATECONSUMER s g c",
            "XGROUP CREATECONSUMER s g c",
            "XREADGROUP GROUP g d STREAMS s >",
            "XREADGROUP GROUP g e STREAMS s 0",
            "XCLAIM s g f 0 1-1",
            "XAUTOCLAIM s g h 0 0",
            "XACK s g 1-1",
            "XGROUP SETID s g 0",
            "XGROUP DELCONSUMER s g c",
            "XGROUP DELCONSUMER s g c",
            "XGROUP DESTROY s g",
            "XGROUP DESTROY s g",
        ]],
    );
}

/// WATCH (Redis 7.0 touches a watched stream only when XGROUP CREATE ... MKSTREAM makes it), the
/// OOM refusal of the commands that may grow memory, MULTI, and scripts.
#[test]
fn watch_oom_transactions_and_scripts_match_redis() {
    let watch = |w: &'static str| -> Vec<&'static str> {
        vec![
            "a:FLUSHALL",
            "a:XADD s 1-1 f v",
            "a:XGROUP CREATE s g 0",
            "a:WATCH s",
            w,
            "a:MULTI",
            "a:PING",
            "a:EXEC",
        ]
    };
    let mut cases: Vec<Vec<&str>> = [
        "b:XGROUP CREATE s g2 0",
        "b:XGROUP SETID s g 1-1",
        "b:XGROUP CREATECONSUMER s g c",
        "b:XREADGROUP GROUP g c STREAMS s >",
        "b:XACK s g 1-1",
        "b:XCLAIM s g c 0 1-1 FORCE",
        "b:XGROUP DESTROY s g",
    ]
    .into_iter()
    .map(watch)
    .collect();
    cases.push(vec![
        "a:FLUSHALL",
        "a:WATCH s",
        "b:XGROUP CREATE s g 0 MKSTREAM",
        "a:MULTI",
        "a:PING",
        "a:EXEC",
    ]);
    cases.push(vec![
        "a:FLUSHALL",
        "a:XADD s 1-1 f v",
        "a:XGROUP CREATE s g 0",
        "a:CONFIG SET maxmemory 1",
        "a:XGROUP CREATE s g2 0",
        "a:XGROUP CREATECONSUMER s g c",
        "a:XGROUP SETID s g 0",
        "a:XREADGROUP GROUP g c STREAMS s >",
        "a:XACK s g 1-1",
        "a:XGROUP DELCONSUMER s g c",
        "a:XGROUP DESTROY s g",
        "a:CONFIG SET maxmemory 0",
    ]);
    cases.push(vec![
        "a:FLUSHALL",
        "a:XADD s 1-1 f v",
        "a:MULTI",
        "a:XGROUP CREATE s g 0",
        "a:XREADGROUP GROUP g c STREAMS s >",
        "a:XPENDING s g",
        "a:XACK s g 1-1",
        "a:EXEC",
        "a:EVAL \"redis.call('xgroup', 'create', KEYS[1], 'lg', '0'); return redis.call('xreadgroup', 'group', 'lg', 'c', 'streams', KEYS[1], '>')\" 1 s",
        "a:EVAL \"return redis.call('xpending', KEYS[1], 'lg')\" 1 s",
        "a:EVAL_RO \"return redis.call('xpending', KEYS[1], 'lg')\" 1 s",
        "a:EVAL_RO \"return redis.call('xinfo', 'groups', KEYS[1])\" 1 s",
        "a:EVAL_RO \"return redis.call('xack', KEYS[1], 'lg', '1-1')\" 1 s",
        "a:EVAL_RO \"return redis.call('xreadgroup', 'group', 'lg', 'c', 'streams', KEYS[1], '0')\" 1 s",
        "a:EVAL \"return redis.call('xautoclaim', KEYS[1], 'lg', 'd', '0', '0')\" 1 s",
    ]);
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    scenarios(&[], &refs);
}

/// Group writes, logged as Redis logs them: XREADGROUP as the XCLAIMs (and, with NOACK, the
/// XGROUP CREATECONSUMER and SETID) of its effect, XCLAIM and XAUTOCLAIM as their effects.
const GROUP_WRITES: &[&str] = &[
    "XGROUP CREATE s g 0 MKSTREAM",
    "XADD s 1-1 a b",
    "XADD s 2-1 c d",
    "XADD s 3-1 e f",
    "XADD s 4-1 g h",
    "XREADGROUP GROUP g alice COUNT 2 STREAMS s >",
    "XREADGROUP GROUP g bob NOACK COUNT 1 STREAMS s >",
    "XREADGROUP GROUP g alice STREAMS s 0",
    "XREADGROUP GROUP g alice STREAMS s >",
    "XACK s g 1-1",
    "XACK s g 1-1",
    "XCLAIM s g carol 0 2-1 TIME 1000000000000",
    "XCLAIM s g carol 0 2-1 LASTID 5-0 JUSTID TIME 1000000000001",
    "XCLAIM s g carol 0 9-9 LASTID 6-0",
    "XCLAIM s g carol 0 9-9",
    "XDEL s 2-1",
    "XAUTOCLAIM s g dave 0 0 JUSTID",
    "XGROUP CREATECONSUMER s g erin",
    "XGROUP DELCONSUMER s g erin",
    "XGROUP DELCONSUMER s g erin",
    "XGROUP SETID s g 3-1 ENTRIESREAD 3",
    "XGROUP CREATE s g2 $",
    "XGROUP DESTROY s g2",
    "XGROUP CREATE t g $ MKSTREAM ENTRIESREAD 0",
    "XADD t 1-1 a b",
    "MULTI",
    "XREADGROUP GROUP g c1 STREAMS t >",
    "XACK t g 1-1",
    "EXEC",
    "XADD t 2-1 a b",
    "EVAL \"return redis.call('xreadgroup', 'GROUP', 'g', 'c2', 'STREAMS', KEYS[1], '>')\" 1 t",
];

/// The AOF's incremental files as text, Unix millisecond times as `<ms>`.
fn group_log(dir: &std::path::Path) -> String {
    aof_incr_lines(dir)
        .iter()
        .map(|l| {
            let clock = l.len() == 13 && l.bytes().all(|c| c.is_ascii_digit());
            if clock && l != "1000000000000" {
                "<ms>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// XINFO STREAM FULL with the consumers' seen-times (the time a replay makes them) masked.
fn full_info(c: &mut Raw, key: &str) -> String {
    let r = show(&c.cmd_str(&format!("XINFO STREAM {key} FULL")));
    let mut out = String::new();
    let mut rest = r.as_str();
    while let Some(at) = rest.find("seen-time\\r\\n:") {
        let (head, tail) = rest.split_at(at + "seen-time\\r\\n:".len());
        out += head;
        out += "<ms>";
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out + rest
}

#[test]
fn aof_logs_what_redis_logs_and_replays() {
    let dirs = [scratch_dir("groups-aof-r"), scratch_dir("groups-aof-g")];
    let args: Vec<Vec<String>> = dirs
        .iter()
        .map(|d| {
            [
                "--dir",
                d.to_str().unwrap(),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--enable-debug-command",
                "yes",
            ]
            .map(String::from)
            .to_vec()
        })
        .collect();
    let args: Vec<Vec<&str>> = args
        .iter()
        .map(|a| a.iter().map(String::as_str).collect())
        .collect();
    let r = redis(&args[0]);
    let g = goblin(&args[1]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for l in GROUP_WRITES {
        let (want, got) = (rc.cmd_str(l), gc.cmd_str(l));
        assert_eq!(show(&got), show(&want), "{l}");
    }
    let log = group_log(&dirs[1]);
    assert!(
        log.contains("XCLAIM") && log.contains("CREATECONSUMER"),
        "{log}"
    );
    assert_eq!(log, group_log(&dirs[0]));
    let keys = ["s", "t"];
    // Across servers, delivery times (each server's clock) are masked too.
    let info = |c: &mut Raw, k: &str| {
        show(&mask_ints(
            &c.cmd_str(&format!("XINFO STREAM {k} FULL")),
            12,
        ))
    };
    for k in keys {
        assert_eq!(info(&mut gc, k), info(&mut rc, k), "{k}");
    }
    // The log replays as Redis replays it (XCLAIM's LASTID moves a group without its read
    // counter, in Redis as here).
    for c in [&mut rc, &mut gc] {
        assert_eq!(c.cmd_str("DEBUG LOADAOF"), b"+OK\r\n");
    }
    let replayed: Vec<String> = keys.iter().map(|k| full_info(&mut gc, k)).collect();
    for k in keys {
        assert_eq!(info(&mut gc, k), info(&mut rc, k), "{k} replayed");
    }
    // A rewrite into commands, or with an RDB preamble, replays to the same groups.
    for preamble in ["no", "yes"] {
        gc.cmd_str(&format!("CONFIG SET aof-use-rdb-preamble {preamble}"));
        rewrite_aof(&mut gc);
        assert_eq!(gc.cmd_str("DEBUG LOADAOF"), b"+OK\r\n");
        for (k, want) in keys.iter().zip(&replayed) {
            assert_eq!(
                &full_info(&mut gc, k),
                want,
                "{k} after a rewrite ({preamble})"
            );
        }
    }
    drop((r, g));
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A small deterministic generator (xorshift), so a failing sequence can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Random sequences of stream and group commands run on both servers, reply for reply: Redis is
/// the model. IDs are explicit and small so deletions, claims and acks hit existing entries.
#[test]
fn random_sequences_match_redis() {
    let mut cases: Vec<Vec<String>> = Vec::new();
    for seed in 1..=6u64 {
        let mut rng = Rng(seed * 0x9E37_79B9_7F4A_7C15);
        let mut lines = vec![
            format!("CONFIG SET stream-node-max-entries {}", 1 + rng.below(5)),
            "XGROUP CREATE s g 0 MKSTREAM".to_string(),
        ];
        let mut top = 0u64;
        let id = |rng: &mut Rng, top: u64| format!("{}-{}", rng.below(top + 2), rng.below(2));
        for _ in 0..400 {
            let consumer = format!("c{}", rng.below(3));
            let line = match rng.below(16) {
                0..=3 => {
                    top += 1 + rng.below(2);
                    format!("XADD s {top}-{} f {}", rng.below(2), rng.below(100))
                }
                4 => format!("XDEL s {} {}", id(&mut rng, top), id(&mut rng, top)),
                5 => match rng.below(3) {
                    0 => format!("XTRIM s MAXLEN {}", rng.below(8)),
                    1 => format!("XTRIM s MAXLEN ~ {}", rng.below(8)),
                    _ => format!("XTRIM s MINID {}", id(&mut rng, top)),
                },
                6 => format!("XRANGE s {} + COUNT {}", id(&mut rng, top), rng.below(5)),
                7 | 8 => format!(
                    "XREADGROUP GROUP g {consumer} COUNT {} STREAMS s >",
                    1 + rng.below(3)
                ),
                9 => format!("XREADGROUP GROUP g {consumer} STREAMS s 0"),
                10 => format!("XACK s g {} {}", id(&mut rng, top), id(&mut rng, top)),
                11 => format!(
                    "XCLAIM s g {consumer} 0 {} {}{}",
                    id(&mut rng, top),
                    id(&mut rng, top),
                    if rng.below(2) == 0 { " JUSTID" } else { "" }
                ),
                12 => format!(
                    "XAUTOCLAIM s g {consumer} 0 {} COUNT {}",
                    id(&mut rng, top),
                    1 + rng.below(4)
                ),
                13 => "XPENDING s g".to_string(),
                14 => "XINFO GROUPS s".to_string(),
                _ => match rng.below(3) {
                    0 => format!("XGROUP SETID s g {}", id(&mut rng, top)),
                    1 => format!("XGROUP DELCONSUMER s g {consumer}"),
                    _ => "XINFO STREAM s".to_string(),
                },
            };
            lines.push(line);
        }
        lines.push("&XINFO STREAM s FULL COUNT 0".to_string());
        lines.push("CONFIG SET stream-node-max-entries 100".to_string());
        cases.push(lines);
    }
    let cases: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare(&refs);
}
