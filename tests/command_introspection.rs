//! Differential tests of the COMMAND family: clients (redis-py, ioredis, cluster clients) build
//! their command tables from COMMAND INFO and COMMAND DOCS and route by COMMAND GETKEYS, so for
//! every command both servers have, Goblin Core must answer byte for byte as Redis 7.0 does.
//!
//! Redis lists commands and a container's subcommands in its dictionaries' hash order, which
//! changes with every start: COMMAND, COMMAND LIST and a container's subcommands are compared as
//! sets of entries, everything else byte for byte.

mod common;
use std::collections::{BTreeMap, BTreeSet};

use common::{compare, goblin, redis, reply_len, show, Raw};

/// The elements of the aggregate reply `b`, each as its raw bytes (a map's keys and values in
/// turn).
fn elements(b: &[u8]) -> Vec<&[u8]> {
    let head = b[0];
    assert!(
        matches!(head, b'*' | b'~' | b'%'),
        "not an aggregate: {}",
        show(b)
    );
    let mut pos = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    let mut out = Vec::new();
    while pos < b.len() {
        let n = reply_len(b, pos).unwrap();
        out.push(&b[pos..pos + n]);
        pos += n;
    }
    out
}

/// The text of a bulk string reply.
fn bulk_text(b: &[u8]) -> String {
    let at = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    String::from_utf8(b[at..b.len() - 2].to_vec()).unwrap()
}

/// COMMAND LIST's names.
fn command_list(c: &mut Raw, filter: &str) -> BTreeSet<String> {
    let r = c.cmd_str(&format!("COMMAND LIST {filter}"));
    elements(&r).into_iter().map(bulk_text).collect()
}

/// A reply entry with the subcommands at `subs_at` (an element index, or for a map the index of
/// the key that names them) set apart: the entry without them, and the subcommands by name.
type Split<'a> = (Vec<&'a [u8]>, BTreeMap<String, &'a [u8]>);

/// COMMAND INFO's entry for one command (`*10`): its first nine fields, and its subcommand
/// entries by name.
fn split_info(entry: &[u8]) -> Split<'_> {
    let mut fields = elements(entry);
    assert_eq!(fields.len(), 10, "{}", show(entry));
    let subs = fields.pop().unwrap();
    let by_name = elements(subs)
        .into_iter()
        .map(|s| (bulk_text(elements(s)[0]), s))
        .collect();
    (fields, by_name)
}

/// COMMAND DOCS's entry for one command (a map, flat in RESP2): its fields but `subcommands`,
/// and the subcommands' docs by name.
fn split_docs(entry: &[u8]) -> Split<'_> {
    let items = elements(entry);
    let mut fields = Vec::new();
    let mut by_name = BTreeMap::new();
    for pair in items.chunks(2) {
        if bulk_text(pair[0]) == "subcommands" {
            let subs = elements(pair[1]);
            for s in subs.chunks(2) {
                by_name.insert(bulk_text(s[0]), s[1]);
            }
        } else {
            fields.extend_from_slice(pair);
        }
    }
    (fields, by_name)
}

/// Records a mismatch: what was asked, then both replies.
fn mismatch(failures: &mut Vec<String>, what: &str, want: &[u8], got: &[u8]) {
    failures.push(format!(
        "{what}\n    redis:  {}\n    goblin: {}",
        show(want),
        show(got)
    ));
}

/// Compares the entries Redis and Goblin Core give for `name`: byte for byte, but a container's
/// subcommands as a set (only those both servers have; each is also compared on its own).
fn compare_entry(
    name: &str,
    want: &[u8],
    got: &[u8],
    split: fn(&[u8]) -> Split<'_>,
    failures: &mut Vec<String>,
) {
    if want == got {
        return;
    }
    let ((want_fields, want_subs), (got_fields, got_subs)) = (split(want), split(got));
    let same_subs = want_subs
        .iter()
        .filter(|(n, _)| got_subs.contains_key(*n))
        .all(|(n, w)| got_subs[n] == *w);
    if want_subs.is_empty() || want_fields != got_fields || !same_subs {
        mismatch(failures, name, want, got);
    }
}

/// The commands (and subcommands) both servers have, as COMMAND LIST names them.
fn common_names(rc: &mut Raw, gc: &mut Raw) -> Vec<String> {
    let theirs = command_list(rc, "");
    let ours = command_list(gc, "");
    let both: Vec<String> = ours.intersection(&theirs).cloned().collect();
    // Guards against comparing nothing: Goblin Core implements most of Redis 7.0's core.
    assert!(both.len() > 200, "only {} common commands", both.len());
    both
}

/// COMMAND DOCS entries that still differ from Redis 7.0, and why.
const DOCS_DIFFERENCES: &[(&str, &str)] = &[
    (
        "client|kill",
        "Redis 7.0 nests the new filter format as a repeated choice, names its parts after \
         Redis's JSON (`normal_master_slave_pubsub`, `yes/no`) and marks the old `ip:port` form \
         deprecated; our tree is the syntax line's",
    ),
    (
        "debug",
        "Redis 7.0 lists no arguments for DEBUG; we document `subcommand [argument]`",
    ),
    (
        "command|getkeys",
        "Redis 7.0 lists no arguments for COMMAND GETKEYS; we document `command [arg ...]`, as \
         Redis 7.2 does",
    ),
    (
        "command|getkeysandflags",
        "Redis 7.0 lists no arguments for COMMAND GETKEYSANDFLAGS; we document `command [arg ...]`, \
         as Redis 7.2 does",
    ),
];

/// COMMAND INFO of every command both servers have, one name at a time and several at once, in
/// RESP2 and RESP3.
#[test]
fn command_info_matches_redis() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut failures = Vec::new();
    for hello in ["HELLO 2", "HELLO 3"] {
        let (mut rc, mut gc) = (r.raw(), g.raw());
        rc.cmd_str(hello);
        gc.cmd_str(hello);
        let names = common_names(&mut rc, &mut gc);
        for name in &names {
            let line: [&[u8]; 3] = [b"COMMAND", b"INFO", name.as_bytes()];
            let (want, got) = (rc.cmd(&line), gc.cmd(&line));
            let (want, got) = (elements(&want)[0], elements(&got)[0]);
            compare_entry(name, want, got, split_info, &mut failures);
        }
        // Several names, unknown ones and a name's case.
        for line in [
            "COMMAND INFO get mset nosuch zunionstore",
            "COMMAND INFO GET Object|Encoding config|nosuch",
            "COMMAND INFO nosuch",
        ] {
            let (want, got) = (rc.cmd_str(line), gc.cmd_str(line));
            if want != got {
                mismatch(&mut failures, &format!("{hello}: {line}"), &want, &got);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} COMMAND INFO mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// COMMAND DOCS of every command both servers have, in RESP2 and RESP3, but `DOCS_DIFFERENCES`.
#[test]
fn command_docs_matches_redis() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut failures = Vec::new();
    for hello in ["HELLO 2", "HELLO 3"] {
        let (mut rc, mut gc) = (r.raw(), g.raw());
        rc.cmd_str(hello);
        gc.cmd_str(hello);
        let names = common_names(&mut rc, &mut gc);
        for name in &names {
            if DOCS_DIFFERENCES.iter().any(|(n, _)| n == name) {
                continue;
            }
            let line: [&[u8]; 3] = [b"COMMAND", b"DOCS", name.as_bytes()];
            let (want, got) = (rc.cmd(&line), gc.cmd(&line));
            let (want, got) = (elements(&want)[1], elements(&got)[1]);
            // A container's own docs hold its subcommands' (the known differences among them
            // aside).
            let split = |b: &[u8]| -> Vec<u8> {
                let (fields, subs) = split_docs(b);
                let mut out = fields.concat();
                for (n, s) in subs {
                    if !DOCS_DIFFERENCES.iter().any(|(d, _)| *d == n) {
                        out.extend_from_slice(n.as_bytes());
                        out.extend_from_slice(s);
                    }
                }
                out
            };
            let (want_fields, want_subs) = split_docs(want);
            let (got_fields, got_subs) = split_docs(got);
            let same_subs = want_subs
                .iter()
                .filter(|(n, _)| got_subs.contains_key(*n))
                .filter(|(n, _)| !DOCS_DIFFERENCES.iter().any(|(d, _)| d == n))
                .all(|(n, w)| got_subs[n] == *w);
            let same = if want_subs.is_empty() {
                want == got
            } else {
                want_fields == got_fields && same_subs
            };
            if !same {
                let what = format!("{hello}: {name}");
                mismatch(&mut failures, &what, &split(want), &split(got));
            }
        }
        // Several names at once (unknown ones are left out).
        let line = "COMMAND DOCS get nosuch zadd";
        let (want, got) = (rc.cmd_str(line), gc.cmd_str(line));
        if want != got {
            mismatch(&mut failures, &format!("{hello}: {line}"), &want, &got);
        }
    }
    assert!(
        failures.is_empty(),
        "{} COMMAND DOCS mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Representative COMMAND GETKEYS lines: at least one for every command with keys (checked
/// below), and the edges of the key specs (a key count that is wrong, zero, too large or only
/// partly a number; a line shorter than its keys; shard channels, which are not keys).
const GETKEYS: &[&str] = &[
    "GET k",
    "SET k v",
    "SET k v GET",
    "SETNX k v",
    "SETEX k 10 v",
    "PSETEX k 10 v",
    "GETSET k v",
    "GETDEL k",
    "GETEX k EX 10",
    "MGET a b c",
    "MSET a 1 b 2",
    "MSET a 1 b",
    "MSETNX a 1 b 2",
    "INCR k",
    "DECR k",
    "INCRBY k 1",
    "DECRBY k 1",
    "INCRBYFLOAT k 1.5",
    "APPEND k v",
    "STRLEN k",
    "GETRANGE k 0 1",
    "SUBSTR k 0 1",
    "SETRANGE k 0 v",
    "SETBIT k 0 1",
    "GETBIT k 0",
    "BITCOUNT k 0 -1",
    "BITPOS k 1",
    "BITOP AND d a b",
    "BITFIELD k GET u8 0 SET u8 0 1",
    "BITFIELD_RO k GET u8 0",
    "LCS a b IDX MINMATCHLEN 2",
    "HSET h f v",
    "HSETNX h f v",
    "HGET h f",
    "HMGET h f g",
    "HMSET h f v",
    "HDEL h f",
    "HLEN h",
    "HEXISTS h f",
    "HGETALL h",
    "HKEYS h",
    "HVALS h",
    "HINCRBY h f 1",
    "HINCRBYFLOAT h f 1",
    "HSTRLEN h f",
    "HSCAN h 0",
    "HRANDFIELD h 2",
    "SADD s m",
    "SREM s m",
    "SMEMBERS s",
    "SISMEMBER s m",
    "SMISMEMBER s m n",
    "SCARD s",
    "SPOP s",
    "SRANDMEMBER s",
    "SMOVE s d m",
    "SINTER a b",
    "SINTERSTORE d a b",
    "SINTERCARD 2 a b LIMIT 1",
    "SINTERCARD 1 a",
    "SINTERCARD 3 a b",
    "SINTERCARD 0 a",
    "SINTERCARD 1x a",
    "SUNION a b",
    "SUNIONSTORE d a b",
    "SDIFF a b",
    "SDIFFSTORE d a b",
    "SSCAN s 0",
    "DEL a b c",
    "UNLINK a b",
    "EXISTS a b",
    "TOUCH a b",
    "TYPE k",
    "KEYS *",
    "SCAN 0",
    "RANDOMKEY",
    "RENAME a b",
    "RENAMENX a b",
    "COPY a b",
    "COPY a b DB 1 REPLACE",
    "MOVE k 1",
    "SORT k",
    "SORT k BY w_* GET # LIMIT 0 1 STORE d",
    "SORT k STORE a STORE b",
    "SORT k GET store LIMIT store store STORE",
    "SORT_RO k BY w_* GET #",
    "GEOADD k 13.36 38.11 m",
    "GEOPOS k m",
    "GEODIST k a b km",
    "GEOHASH k m",
    "GEORADIUS k 15 37 200 km STORE d",
    "GEORADIUS k 15 37 200 km STOREDIST d",
    "GEORADIUS_RO k 15 37 200 km",
    "GEORADIUSBYMEMBER k m 200 km STORE d",
    "GEORADIUSBYMEMBER_RO k m 200 km",
    "GEOSEARCH k FROMMEMBER m BYRADIUS 200 km",
    "GEOSEARCHSTORE d k FROMMEMBER m BYRADIUS 200 km",
    "PFADD k a b",
    "PFCOUNT a b",
    "PFMERGE d a b",
    "PFDEBUG GETREG k",
    "EXPIRE k 10",
    "PEXPIRE k 10",
    "EXPIREAT k 10",
    "PEXPIREAT k 10",
    "TTL k",
    "PTTL k",
    "EXPIRETIME k",
    "PEXPIRETIME k",
    "PERSIST k",
    "OBJECT ENCODING k",
    "MEMORY USAGE k",
    "BITFIELD k GET u8 0 OVERFLOW SAT GET u4 4",
    "BITFIELD k GET u8 0 INCRBY u8 0 1",
    "SET k v NX GET",
    "MEMORY USAGE k SAMPLES 5",
    "OBJECT REFCOUNT k",
    "OBJECT IDLETIME k",
    "OBJECT FREQ k",
    "OBJECT HELP",
    "OBJECT ENCODING",
    "OBJECT NOPE k",
    "LPUSH l a b",
    "RPUSH l a",
    "LPUSHX l a",
    "RPUSHX l a",
    "LPOP l",
    "RPOP l 2",
    "LLEN l",
    "LRANGE l 0 -1",
    "LINDEX l 0",
    "LSET l 0 v",
    "LREM l 0 v",
    "LTRIM l 0 1",
    "LINSERT l BEFORE p v",
    "LPOS l v",
    "LMOVE a b LEFT RIGHT",
    "RPOPLPUSH a b",
    "LMPOP 2 a b LEFT COUNT 2",
    "LMPOP 1x a LEFT",
    "LMPOP 3 a LEFT",
    "BLPOP a b 0",
    "BLPOP a",
    "BRPOP a 0",
    "BLMOVE a b LEFT RIGHT 0",
    "BRPOPLPUSH a b 0",
    "BLMPOP 0 2 a b LEFT",
    "BLMPOP 0 0 a LEFT",
    "DUMP k",
    "RESTORE k 0 x",
    "RESTORE k 0 x REPLACE",
    "ZADD z 1 m",
    "XADD s * f v",
    "XADD s NOMKSTREAM MAXLEN ~ 5 LIMIT 2 1-1 f v",
    "XLEN s",
    "XRANGE s - +",
    "XREVRANGE s + - COUNT 1",
    "XDEL s 1-1 2-2",
    "XTRIM s MINID 5",
    "XSETID s 5-5 ENTRIESADDED 3",
    "XREAD STREAMS a b 0 0",
    "XREAD COUNT 2 BLOCK 10 STREAMS a 0",
    "XREAD STREAMS a",
    "XREADGROUP GROUP g c STREAMS a b > 0",
    "XREADGROUP GROUP g c COUNT 1 BLOCK 5 NOACK STREAMS a >",
    "XREADGROUP GROUP g c STREAMS a",
    "XGROUP CREATE s g $ MKSTREAM",
    "XGROUP SETID s g 0",
    "XGROUP DESTROY s g",
    "XGROUP CREATECONSUMER s g c",
    "XGROUP DELCONSUMER s g c",
    "XACK s g 1-1 2-2",
    "XPENDING s g",
    "XCLAIM s g c 10 1-1",
    "XAUTOCLAIM s g c 10 0",
    "XINFO STREAM s FULL",
    "XINFO GROUPS s",
    "XINFO CONSUMERS s g",
    "XREAD STREAMS streams streams 0 0",
    "ZINCRBY z 1 m",
    "ZSCORE z m",
    "ZMSCORE z m n",
    "ZCARD z",
    "ZCOUNT z 0 1",
    "ZLEXCOUNT z - +",
    "ZRANGE z 0 -1",
    "ZRANGESTORE d z 0 -1",
    "ZREVRANGE z 0 -1",
    "ZRANGEBYSCORE z 0 1",
    "ZREVRANGEBYSCORE z 1 0",
    "ZRANGEBYLEX z - +",
    "ZREVRANGEBYLEX z + -",
    "ZRANK z m",
    "ZREVRANK z m",
    "ZREM z m",
    "ZREMRANGEBYRANK z 0 1",
    "ZREMRANGEBYSCORE z 0 1",
    "ZREMRANGEBYLEX z - +",
    "ZPOPMIN z",
    "ZPOPMAX z 2",
    "ZMPOP 2 a b MIN",
    "ZMPOP 1 a MAX COUNT 2",
    "ZMPOP 0 a MIN",
    "BZPOPMIN a b 0",
    "BZPOPMAX a 0",
    "BZMPOP 0 2 a b MIN",
    "BZMPOP 0 5 a MIN",
    "ZUNIONSTORE d 2 a b WEIGHTS 1 2",
    "ZUNIONSTORE d 1x a",
    "ZUNIONSTORE d 0 a",
    "ZINTERSTORE d 1 a",
    "ZDIFFSTORE d 2 a b",
    "ZUNION 2 a b WITHSCORES",
    "ZUNION 5 a",
    "ZUNION 1x a",
    "ZINTER 1 a",
    "ZDIFF 3 a b c",
    "ZINTERCARD 2 a b LIMIT 1",
    "ZRANDMEMBER z",
    "ZSCAN z 0",
    "WATCH a b",
    "EVAL s 2 k1 k2 arg",
    "EVAL s 0",
    "EVAL s 3 a",
    "EVAL s x a",
    "EVAL s 1x a",
    "EVAL s -1 a",
    "EVALSHA abc 1 k1",
    "EVAL_RO s 1 a b",
    "EVALSHA_RO abc 2 a b",
    "FCALL f 1 a",
    "FCALL f 0",
    "FCALL_RO f 2 a b c",
    "SSUBSCRIBE a b",
    "SUNSUBSCRIBE a",
    "SPUBLISH a b",
    // Commands without keys, and lines that are not commands.
    "PING",
    "ECHO x",
    "ECHO a b",
    "MULTI",
    "PUBLISH a b",
    "SUBSCRIBE a",
    "FUNCTION LIST",
    "SCRIPT LOAD x",
    "CONFIG GET x",
    "CLIENT ID",
    "INFO",
    "NOPE x",
    "GET a b",
    "SET a",
    "MSET a",
];

#[test]
fn command_getkeys_matches_redis() {
    let lines: Vec<String> = GETKEYS
        .iter()
        .map(|l| format!("COMMAND GETKEYS {l}"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    compare(&[&lines]);
    // The same lines with each key's flags, in both protocols (flags are a set in RESP3).
    let flagged: Vec<String> = GETKEYS
        .iter()
        .map(|l| format!("COMMAND GETKEYSANDFLAGS {l}"))
        .collect();
    let mut flagged: Vec<&str> = flagged.iter().map(String::as_str).collect();
    compare(&[&flagged]);
    flagged.insert(0, "#HELLO 3");
    compare(&[&flagged]);

    // Every command Redis gives keys (key specs, or keys found by parsing) that we have is
    // among the lines above.
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    let covered: BTreeSet<String> = GETKEYS
        .iter()
        .map(|l| {
            let w: Vec<String> = l.split(' ').map(str::to_ascii_lowercase).collect();
            w[0].clone() + "|" + w.get(1).map_or("", String::as_str)
        })
        .collect();
    let mut missing = Vec::new();
    for name in common_names(&mut rc, &mut gc) {
        let info = rc.cmd(&[b"COMMAND", b"INFO", name.as_bytes()]);
        let fields = elements(elements(&info)[0]);
        let has_keys = fields[8] != b"*0\r\n";
        let key = if name.contains('|') {
            name.clone()
        } else {
            name.clone() + "|"
        };
        let found = covered
            .iter()
            .any(|c| *c == key || (!name.contains('|') && c.starts_with(&key)));
        if has_keys && !found {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "no COMMAND GETKEYS line for {missing:?}"
    );
}

/// On each server: COMMAND COUNT counts COMMAND's entries and COMMAND LIST's top-level names;
/// COMMAND LIST names the entries of COMMAND (and of COMMAND INFO without names) and their
/// subcommands. Between the servers: COMMAND LIST's ACLCAT and PATTERN filters pick the same
/// commands among those both have.
#[test]
fn command_count_and_list_are_consistent() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for (server, c) in [("redis", &mut rc), ("goblin", &mut gc)] {
        let count = c.cmd_str("COMMAND COUNT");
        let count: usize = show(&count)[1..]
            .trim_end_matches("\\r\\n")
            .parse()
            .unwrap();
        let listed = command_list(c, "");
        let all = c.cmd_str("COMMAND");
        let entries = elements(&all);
        assert_eq!(count, entries.len(), "{server}: COMMAND COUNT and COMMAND");
        assert_eq!(
            count,
            listed.iter().filter(|n| !n.contains('|')).count(),
            "{server}: COMMAND COUNT and COMMAND LIST"
        );
        let mut named = BTreeSet::new();
        for e in &entries {
            let (fields, subs) = split_info(e);
            named.insert(bulk_text(fields[0]));
            named.extend(subs.into_keys());
        }
        assert_eq!(named, listed, "{server}: COMMAND LIST and COMMAND");
        let info_all = c.cmd_str("COMMAND INFO");
        let mut a = elements(&all);
        let mut b = elements(&info_all);
        a.sort();
        b.sort();
        assert_eq!(a, b, "{server}: COMMAND INFO without names and COMMAND");
    }
    let both: BTreeSet<String> = common_names(&mut rc, &mut gc).into_iter().collect();
    let mut filters: Vec<String> = [
        "keyspace",
        "read",
        "write",
        "set",
        "sortedset",
        "list",
        "hash",
        "string",
        "pubsub",
        "admin",
        "fast",
        "slow",
        "blocking",
        "dangerous",
        "connection",
        "transaction",
        "scripting",
        "NOSUCH",
    ]
    .iter()
    .map(|c| format!("FILTERBY ACLCAT {c}"))
    .collect();
    filters.extend(
        ["z*", "*store", "client|*", "?et", "nosuch"]
            .iter()
            .map(|p| format!("FILTERBY PATTERN {p}")),
    );
    for f in &filters {
        let want: BTreeSet<String> = command_list(&mut rc, f)
            .intersection(&both)
            .cloned()
            .collect();
        let got: BTreeSet<String> = command_list(&mut gc, f)
            .intersection(&both)
            .cloned()
            .collect();
        assert_eq!(want, got, "COMMAND LIST {f}");
    }
}

/// COMMAND HELP lists every subcommand Redis's does, GETKEYSANDFLAGS included.
#[test]
fn command_help_matches_redis() {
    common::compare_both(&[&["COMMAND HELP"]]);
}
