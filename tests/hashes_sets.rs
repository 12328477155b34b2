//! Hashes and sets: differential cases against Debian's redis-server (every command, option, error,
//! arity, wrong type, encoding threshold, RESP2 and RESP3), property tests for the random commands
//! (HRANDFIELD, SRANDMEMBER, SPOP) and full HSCAN/SSCAN iterations, and round trips through the
//! `redis` crate.
//!
//! Small hashes (listpack) and small all-integer sets (intset) have a deterministic order in Redis,
//! so their replies are compared byte for byte; big ones (hashtable) are compared sorted (`~`).

mod common;
use std::collections::{HashMap, HashSet};

use common::{compare, goblin, Raw};
use redis::Commands;

/// `HSET key f0 v0 f1 v1 ...` with `n` fields.
fn hset_n(key: &str, n: usize, from: usize) -> String {
    let mut s = format!("HSET {key}");
    for i in from..from + n {
        s.push_str(&format!(" f{i} v{i}"));
    }
    s
}

/// `SADD key ...` with the integers `from..from+n`.
fn sadd_ints(key: &str, n: usize, from: i64) -> String {
    let mut s = format!("SADD {key}");
    for i in from..from + n as i64 {
        s.push_str(&format!(" {i}"));
    }
    s
}

fn run(cases: &[Vec<String>]) {
    let owned: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(|s| s.as_str()).collect())
        .collect();
    let refs: Vec<&[&str]> = owned.iter().map(|c| c.as_slice()).collect();
    compare(&refs);
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| s.to_string()).collect()
}

#[test]
fn hash_basics() {
    compare(&[
        &[
            "HSET h a 1 b 2 c 3",
            "HGET h a",
            "HGET h x",
            "HGET nokey a",
            "HMGET h a x b",
            "HMGET nokey a b",
            "HLEN h",
            "HLEN nokey",
            "HEXISTS h a",
            "HEXISTS h x",
            "HEXISTS nokey a",
            "HSTRLEN h a",
            "HSTRLEN h x",
            "HSTRLEN nokey a",
            "HGETALL h",
            "HKEYS h",
            "HVALS h",
            "HGETALL nokey",
            "HKEYS nokey",
            "HVALS nokey",
            "TYPE h",
            "?rdb_changes_since_last_save",
            "?keyspace_hits",
            "?keyspace_misses",
            "OBJECT ENCODING h",
        ],
        // Listpack order: updates keep their place, deletions close the gap, new fields append.
        &[
            "HSET h a 1 b 2 c 3",
            "HSET h b 20",
            "HDEL h a",
            "HSET h a 10",
            "HGETALL h",
            "HSET h d 4 a 11 e 5",
            "HGETALL h",
            "HSET h x 1 x 2",
            "HGET h x",
            "HKEYS h",
            "HVALS h",
            "HSET h '' ''",
            "HGET h ''",
            "HSTRLEN h ''",
            "HSET h n -123 m 007 big 12345678901234567890",
            "HSTRLEN h n",
            "HSTRLEN h m",
            "HGET h m",
            "HGETALL h",
            "?rdb_changes_since_last_save",
        ],
        &[
            "HSETNX h f v",
            "HSETNX h f w",
            "HGET h f",
            "HSETNX h g w",
            "HGETALL h",
            "HMSET h a 1 b 2",
            "HMSET h a 3",
            "HGETALL h",
            "HSET h a",
            "HSET h a b c",
            "HMSET h a b c",
            "HMSET h",
            "HSET h",
            "HSET",
            "HGETALL h",
            "?rdb_changes_since_last_save",
        ],
        &[
            "HSET h a 1 b 2 c 3",
            "HDEL h a x a",
            "HDEL h x",
            "HGETALL h",
            "HDEL h b c d",
            "EXISTS h",
            "HDEL nokey a",
            "HDEL h",
            "HSET h a 1",
            "HDEL h a a",
            "EXISTS h",
            "?rdb_changes_since_last_save",
        ],
        // Writes keep the TTL; the generic commands work on hashes.
        &[
            "HSET h a 1",
            "EXPIRE h 100",
            "HSET h b 2",
            "HDEL h a",
            "HINCRBY h c 1",
            "HINCRBYFLOAT h d 1.5",
            "HSETNX h e 1",
            "TTL h",
            "SCAN 0 TYPE hash",
            "SCAN 0 TYPE set",
            "RENAME h h2",
            "HGETALL h2",
            "TTL h2",
            "COPY h2 h3",
            "HGETALL h3",
            "OBJECT ENCODING h3",
            "TTL h3",
            "MOVE h3 1",
            "EXISTS h3",
            "DEL h2",
            "EXISTS h2",
            "TYPE h2",
            "SELECT 1",
            "HGETALL h3",
        ],
    ]);
}

#[test]
fn hash_counters() {
    compare(&[
        &[
            "HINCRBY h f 5",
            "HINCRBY h f -7",
            "HGET h f",
            "HINCRBY h f abc",
            "HINCRBY h f 1.5",
            "HINCRBY h f 9223372036854775808",
            "HSET h s hello sp ' 1' z 0",
            "HINCRBY h s 1",
            "HINCRBY h sp 1",
            "HINCRBY h z 0",
            "HSET h m 9223372036854775807",
            "HINCRBY h m 1",
            "HINCRBY h m -1",
            "HSET h m -9223372036854775808",
            "HINCRBY h m -1",
            "HINCRBY h m 9223372036854775807",
            "HINCRBY nokey f 0",
            "HGETALL nokey",
            "HGETALL h",
            "HINCRBY h f",
            "HINCRBY h f 1 2",
            "?rdb_changes_since_last_save",
        ],
        &[
            "HINCRBYFLOAT h f 10.5",
            "HINCRBYFLOAT h f 0.1",
            "HSET h nul \"1\\x00\"",
            "HINCRBYFLOAT h nul 10",
            "HINCRBYFLOAT h f \"1\\x00\"",
            "HINCRBYFLOAT h f \"2\\x003\"",
            "HINCRBYFLOAT h g 5.0e3",
            "HINCRBYFLOAT h g 2.0e2",
            "HINCRBYFLOAT h g -5200",
            "HGET h g",
            "HINCRBYFLOAT h i 3",
            "HINCRBYFLOAT h i 1.5",
            "HINCRBYFLOAT h f abc",
            "HINCRBYFLOAT h f inf",
            "HINCRBYFLOAT h f -inf",
            "HINCRBYFLOAT h f nan",
            "HINCRBYFLOAT h f ''",
            "HINCRBYFLOAT h f ' 1'",
            "HSET h s hello inf inf num 7",
            "HINCRBYFLOAT h s 1",
            "HINCRBYFLOAT h inf 1",
            "HINCRBYFLOAT h num 0.25",
            "HINCRBYFLOAT h big 1e308",
            "HINCRBYFLOAT h big 1e308",
            "HINCRBYFLOAT h tiny 0.0000001",
            "HINCRBYFLOAT h tiny -0.0000001",
            "HINCRBYFLOAT h neg -1.5",
            "OBJECT ENCODING h",
            "~HKEYS h",
            "~HVALS h",
            "HGET h f",
            "HGET h big",
            "HINCRBYFLOAT nokey f abc",
            "EXISTS nokey",
            "HINCRBYFLOAT h f",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

#[test]
fn hash_wrong_types_and_arity() {
    compare(&[
        &[
            "SET str x",
            "HSET str a b",
            "HMSET str a b",
            "HSETNX str a b",
            "HGET str a",
            "HMGET str a",
            "HDEL str a",
            "HLEN str",
            "HEXISTS str a",
            "HGETALL str",
            "HKEYS str",
            "HVALS str",
            "HINCRBY str a 1",
            "HINCRBY str a abc",
            "HINCRBYFLOAT str a 1",
            "HINCRBYFLOAT str a abc",
            "HINCRBYFLOAT str a inf",
            "HSTRLEN str a",
            "HSCAN str 0",
            "HSCAN str 0 COUNT 0",
            "HSCAN str abc",
            "HRANDFIELD str",
            "HRANDFIELD str 1",
            "HRANDFIELD str 0 WITHVALUES",
            "HRANDFIELD str abc",
            "GET str",
        ],
        &[
            "HSETNX h a",
            "HGET h",
            "HMGET h",
            "HDEL h",
            "HLEN",
            "HLEN a b",
            "HEXISTS h",
            "HGETALL",
            "HKEYS",
            "HVALS a b",
            "HINCRBY h",
            "HINCRBYFLOAT h a",
            "HSTRLEN h",
            "HSCAN h",
            "HRANDFIELD",
            "HSETNX h a b c",
        ],
    ]);
}

#[test]
fn hash_scan_and_random_deterministic() {
    compare(&[
        &[
            "HSET h a 1 b 2 c 3 ab 4",
            "HSCAN h 0",
            "HSCAN h 0 MATCH a*",
            "HSCAN h 0 MATCH *",
            "HSCAN h 0 COUNT 1",
            "HSCAN h 7",
            "HSCAN h 0 MATCH z* COUNT 100",
            "HSCAN h 0 COUNT 0",
            "HSCAN h 0 COUNT -1",
            "HSCAN h 0 COUNT abc",
            "HSCAN h abc",
            "HSCAN h 0 TYPE string",
            "HSCAN h 0 MATCH",
            "HSCAN h 0 FOO bar",
            "HSCAN nokey 0",
            "HSCAN nokey 0 COUNT 0",
            "HSCAN nokey 0 FOO",
            "HSCAN nokey abc",
        ],
        &[
            "HSET h a 1 b 2 c 3",
            "HRANDFIELD nokey",
            "HRANDFIELD nokey 5",
            "HRANDFIELD nokey -5 WITHVALUES",
            "HRANDFIELD h 0",
            "HRANDFIELD h 0 WITHVALUES",
            "HRANDFIELD h 3",
            "HRANDFIELD h 10",
            "HRANDFIELD h 10 WITHVALUES",
            "HRANDFIELD h abc",
            "HRANDFIELD h 1.5",
            "HRANDFIELD h -9223372036854775808",
            "HRANDFIELD h 9223372036854775807 WITHVALUES",
            "HRANDFIELD h -9223372036854775807 WITHVALUES",
            "HRANDFIELD h 4611686018427387904 WITHVALUES",
            "HRANDFIELD h 1 withvalue",
            "HRANDFIELD h 1 WITHVALUES x",
            "HRANDFIELD nokey 1 foo",
            "HRANDFIELD nokey abc",
            "HSET one f v",
            "HRANDFIELD one",
            "HRANDFIELD one 1",
            "HRANDFIELD one -3",
            "HRANDFIELD one -3 WITHVALUES",
            "HRANDFIELD one 1 WITHVALUES",
        ],
        &[
            "#HELLO 3",
            "HSET h a 1 b 2 c 3",
            "HGETALL h",
            "HGETALL nokey",
            "HKEYS h",
            "HVALS nokey",
            "HGET h x",
            "HMGET h a x",
            "HSCAN h 0",
            "HSCAN nokey 0",
            "HRANDFIELD h 10 WITHVALUES",
            "HRANDFIELD h 0 WITHVALUES",
            "HRANDFIELD nokey",
            "HRANDFIELD nokey 2 WITHVALUES",
            "HSET one f v",
            "HRANDFIELD one -2 WITHVALUES",
            "HRANDFIELD one -2",
            "HINCRBYFLOAT h a 1.5",
            "HINCRBY h b 1",
            "HEXISTS h a",
            "HSETNX h a 1",
        ],
    ]);
}

#[test]
fn hash_encoding_thresholds() {
    let long64 = "x".repeat(64);
    let long65 = "x".repeat(65);
    run(&[
        vec![
            // redis-server's compiled-in default is 512 (redis.conf's is 128): pin the threshold.
            "CONFIG SET hash-max-listpack-entries 128".into(),
            hset_n("h", 128, 0),
            "OBJECT ENCODING h".into(),
            "HGETALL h".into(),
            "HSET h f0 again".into(),
            "OBJECT ENCODING h".into(),
            "HSET h f128 v".into(),
            "OBJECT ENCODING h".into(),
            "HLEN h".into(),
            "~HGETALL h".into(),
            "~HKEYS h".into(),
            "~HVALS h".into(),
            "~HRANDFIELD h 1000".into(),
            "HDEL h f1 f2 f3 f4 f5 f6 f7 f8 f9 f10".into(),
            "OBJECT ENCODING h".into(),
            "#HELLO 3".into(),
            "~HGETALL h".into(),
            "~HRANDFIELD h 1000 WITHVALUES".into(),
        ],
        vec![
            format!("HSET h a {long64}"),
            "OBJECT ENCODING h".into(),
            format!("HSET h {long64} a"),
            "OBJECT ENCODING h".into(),
            format!("HSET h b {long65}"),
            "OBJECT ENCODING h".into(),
            format!("HSET h2 {long65} a"),
            "OBJECT ENCODING h2".into(),
            format!("HSETNX h3 {long65} a"),
            "OBJECT ENCODING h3".into(),
            // HSETNX on an existing field writes nothing, so converts nothing.
            "HSET h4 a b".into(),
            format!("HSETNX h4 a {long65}"),
            "OBJECT ENCODING h4".into(),
            format!("HSETNX h4 b {long65}"),
            "OBJECT ENCODING h4".into(),
            "HSET h5 a 1".into(),
            format!("HINCRBY h5 {long65} 1"),
            "OBJECT ENCODING h5".into(),
            "HSET h6 a 1".into(),
            format!("HINCRBYFLOAT h6 {long65} 1.5"),
            "OBJECT ENCODING h6".into(),
            "HSET h7 a 1".into(),
            "HINCRBYFLOAT h7 a 0.000000000000000000000000000001".into(),
            "OBJECT ENCODING h7".into(),
            "HSET h8 a 1 b 2".into(),
            format!("HSET h8 a 1 c {long65}"),
            "OBJECT ENCODING h8".into(),
            "~HGETALL h8".into(),
            "COPY h8 h9".into(),
            "OBJECT ENCODING h9".into(),
            "COPY h h10".into(),
            "OBJECT ENCODING h10".into(),
            "~HGETALL h10".into(),
        ],
        strings(&[
            "CONFIG SET hash-max-listpack-entries 3",
            "HSET h a 1 b 2 c 3",
            "OBJECT ENCODING h",
            "HSET h d 4",
            "OBJECT ENCODING h",
            "HDEL h a b c",
            "OBJECT ENCODING h",
            "HSET h2 a 1 b 2 c 3 d 4",
            "OBJECT ENCODING h2",
            "CONFIG SET hash-max-listpack-entries 0",
            "HSET h3 a 1",
            "OBJECT ENCODING h3",
            "CONFIG SET hash-max-listpack-entries 128",
            "CONFIG SET hash-max-ziplist-value 2",
            "HSET h4 ab cd",
            "OBJECT ENCODING h4",
            "HSET h5 abc d",
            "OBJECT ENCODING h5",
            "CONFIG SET hash-max-listpack-value 64",
        ]),
    ]);
}

#[test]
fn set_basics() {
    compare(&[
        &[
            "SADD s 3 1 2",
            "SADD s 2 3 4",
            "SMEMBERS s",
            "SCARD s",
            "SCARD nokey",
            "SISMEMBER s 1",
            "SISMEMBER s 01",
            "SISMEMBER s 5",
            "SISMEMBER nokey 1",
            "SMISMEMBER s 1 5 01 4",
            "SMISMEMBER nokey a b",
            "?keyspace_hits",
            "?keyspace_misses",
            "OBJECT ENCODING s",
            "TYPE s",
            "SMEMBERS nokey",
            "SADD s 10 -5 9223372036854775807 -9223372036854775808 0",
            "SMEMBERS s",
            "OBJECT ENCODING s",
            "SREM s 1 01 x 10 10",
            "SMEMBERS s",
            "SREM nokey a",
            "SREM s 2 3 4 -5 9223372036854775807 -9223372036854775808 0",
            "EXISTS s",
            "?rdb_changes_since_last_save",
        ],
        &[
            "SADD s a",
            "OBJECT ENCODING s",
            "SADD n 1 2 3",
            "SADD n x",
            "OBJECT ENCODING n",
            "~SMEMBERS n",
            "SREM n x",
            "OBJECT ENCODING n",
            "SADD e ''",
            "SISMEMBER e ''",
            "SMEMBERS e",
            "SADD p 1 +1 01 ' 1' 1.0",
            "SCARD p",
            "~SMEMBERS p",
            "OBJECT ENCODING p",
            "SADD s",
            "SREM s",
            "SCARD",
            "SMEMBERS a b",
            "SISMEMBER s",
            "SMISMEMBER s",
            "?rdb_changes_since_last_save",
        ],
        // Writes keep the TTL; the generic commands work on sets.
        &[
            "SADD s 1 2 3",
            "EXPIRE s 100",
            "SADD s 4",
            "SREM s 1",
            "SPOP s 0",
            "TTL s",
            "SCAN 0 TYPE set",
            "SCAN 0 TYPE hash",
            "SMOVE s t 2",
            "TTL s",
            "TTL t",
            "RENAME s s2",
            "SMEMBERS s2",
            "COPY s2 s3",
            "SMEMBERS s3",
            "OBJECT ENCODING s3",
            "SADD s3 x",
            "COPY s3 s4",
            "OBJECT ENCODING s4",
            "~SMEMBERS s4",
            "DEL s2 s3 s4 t",
            "EXISTS s2",
        ],
        &[
            "#HELLO 3",
            "SADD s 3 1 2",
            "SMEMBERS s",
            "SMEMBERS nokey",
            "SISMEMBER s 1",
            "SMISMEMBER s 1 9",
            "SCARD s",
            "SPOP nokey",
            "SPOP nokey 2",
            "SPOP s 0",
            "SRANDMEMBER nokey",
            "SRANDMEMBER nokey 2",
            "SRANDMEMBER s 10",
            "SINTER s nokey",
            "SINTER s",
            "SUNION s nokey",
            "SDIFF s nokey",
            "SINTERCARD 1 s",
            "SSCAN s 0",
            "SPOP s 10",
        ],
        // Popping nearly all of a table's members leaves a new set: integers only are an intset
        // again (the members popped are random: only their number is compared).
        &[
            "SADD s 1 2 3 4 5 6 a",
            "SREM s a",
            "OBJECT ENCODING s",
            "EVAL \"return #redis.call('SPOP', KEYS[1], 5)\" 1 s",
            "OBJECT ENCODING s",
            "SCARD s",
            "SADD t a b c d e f",
            "EVAL \"return #redis.call('SPOP', KEYS[1], 5)\" 1 t",
            "OBJECT ENCODING t",
            "SADD u 1 2 3 4 5 6 7 8 9 10 a",
            "SREM u a",
            "EVAL \"return #redis.call('SPOP', KEYS[1], 2)\" 1 u",
            "OBJECT ENCODING u",
        ],
    ]);
}

#[test]
fn set_wrong_types_and_arity() {
    compare(&[
        &[
            "SET str x",
            "SADD s 1 2",
            "SADD str a",
            "SREM str a",
            "SMEMBERS str",
            "SISMEMBER str a",
            "SMISMEMBER str a",
            "SCARD str",
            "SPOP str",
            "SPOP str 0",
            "SPOP str -1",
            "SRANDMEMBER str",
            "SRANDMEMBER str 0",
            "SRANDMEMBER str abc",
            "SMOVE str s a",
            "SMOVE s str 1",
            "SMOVE nokey str a",
            "SMOVE str nokey a",
            "SINTER s str",
            "SINTER nokey str",
            "SINTER str nokey",
            "SUNION s str",
            "SUNION nokey str",
            "SDIFF nokey str",
            "SDIFF s str",
            "SINTERSTORE d s str",
            "SINTERSTORE d nokey str",
            "SUNIONSTORE d s str",
            "SDIFFSTORE d s str",
            "SINTERSTORE str s",
            "GET str",
            "SUNIONSTORE str s",
            "TYPE str",
            "SET str x",
            "SDIFFSTORE str nokey",
            "EXISTS str",
            "SET str x",
            "SINTERCARD 2 nokey str",
            "SINTERCARD 1 str",
            "SSCAN str 0",
            "SSCAN str 0 COUNT 0",
            "SSCAN str abc",
            "EXISTS d",
        ],
        &[
            "SPOP",
            "SPOP s 1 2",
            "SPOP nokey 1 2",
            "SRANDMEMBER",
            "SRANDMEMBER s 1 2",
            "SMOVE a b",
            "SMOVE a b c d",
            "SINTER",
            "SUNION",
            "SDIFF",
            "SINTERSTORE d",
            "SUNIONSTORE d",
            "SDIFFSTORE d",
            "SINTERCARD",
            "SINTERCARD 1",
            "SSCAN s",
        ],
    ]);
}

#[test]
fn set_pop_random_move_deterministic() {
    compare(&[
        &[
            "SADD s 5 3 1 4 2",
            "SPOP nokey",
            "SPOP nokey 0",
            "SPOP nokey 5",
            "SPOP s 0",
            "SPOP s -1",
            "SPOP s abc",
            "SPOP s 1.5",
            "SCARD s",
            "SPOP s 5",
            "EXISTS s",
            "SADD s 5 3 1",
            "SPOP s 100",
            "EXISTS s",
            "SADD one only",
            "SPOP one",
            "EXISTS one",
            "SADD one 7",
            "SPOP one 1",
            "EXISTS one",
            // A table holding only integers: SPOP-all and SUNION rebuild it, as a sorted intset.
            "SADD t 3 1 2 x",
            "SREM t x",
            "OBJECT ENCODING t",
            "SUNION t",
            "SDIFF t nokey",
            "SUNIONSTORE u t",
            "OBJECT ENCODING u",
            "SRANDMEMBER u 10",
            "~SMEMBERS t",
            "~SRANDMEMBER t 10",
            "SPOP t 10",
            "?rdb_changes_since_last_save",
        ],
        &[
            "SADD s 5 3 1 4 2",
            "SRANDMEMBER nokey",
            "SRANDMEMBER nokey 5",
            "SRANDMEMBER nokey -5",
            "SRANDMEMBER nokey 0",
            "SRANDMEMBER s 0",
            "SRANDMEMBER s 5",
            "SRANDMEMBER s 100",
            "SRANDMEMBER s abc",
            "SRANDMEMBER s -9223372036854775808",
            "SRANDMEMBER nokey -9223372036854775808",
            "SADD one x",
            "SRANDMEMBER one",
            "SRANDMEMBER one 1",
            "SRANDMEMBER one -4",
            "SRANDMEMBER one 4",
            "SCARD s",
        ],
        &[
            "SADD a 1 2 3",
            "SADD b 3 4",
            "SMOVE a b 1",
            "SMEMBERS a",
            "SMEMBERS b",
            "SMOVE a b 9",
            "SMOVE a b 3",
            "SMEMBERS a",
            "SMEMBERS b",
            "SMOVE a a 2",
            "SMOVE a a 9",
            "SMOVE nokey a 2",
            "SMOVE a c 2",
            "EXISTS a",
            "SMEMBERS c",
            "SMOVE c b x",
            "SADD c x",
            "SMOVE c b x",
            "OBJECT ENCODING b",
            "~SMEMBERS b",
            "SMEMBERS c",
            "SADD d 1",
            "SMOVE d d 1",
            "SMEMBERS d",
            "SADD e hello",
            "SMOVE e f hello",
            "OBJECT ENCODING f",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

#[test]
fn set_algebra() {
    compare(&[
        &[
            "SADD a 1 2 3 4 5",
            "SADD b 5 4 3 9",
            "SADD c 3 4 10",
            "SINTER a b",
            "SINTER a b c",
            "SINTER c b a",
            "SINTER a nokey",
            "SINTER nokey a",
            "SINTER a",
            "SINTER a a",
            "SUNION a b c",
            "SUNION a nokey",
            "SUNION nokey",
            "SDIFF a b",
            "SDIFF a b c",
            "SDIFF b a",
            "SDIFF a nokey",
            "SDIFF nokey a",
            "SDIFF a a",
            "SDIFF a b a",
            "SINTERCARD 2 a b",
            "SINTERCARD 3 a b c",
            "SINTERCARD 2 a b LIMIT 1",
            "SINTERCARD 2 a b LIMIT 0",
            "SINTERCARD 2 a b LIMIT 100",
            "SINTERCARD 2 a b LIMIT 1 LIMIT 2",
            "SINTERCARD 2 a nokey",
            "SINTERCARD 1 a",
            "?keyspace_hits",
            "?keyspace_misses",
        ],
        &[
            "SADD a 1 2 3 x",
            "SADD b 2 3 x y",
            "~SINTER a b",
            "SADD c 1 2",
            "SINTER a b c",
            "~SUNION a b",
            "~SDIFF b a",
            "SDIFF a b",
            "SINTERCARD 2 a b",
            "SINTERSTORE d a b",
            "OBJECT ENCODING d",
            "~SMEMBERS d",
            "SADD e 1 2 x",
            "SADD f 1 2 y z",
            "SINTERSTORE g e f",
            "OBJECT ENCODING g",
            "SMEMBERS g",
        ],
        &[
            "SADD a 1 2 3",
            "SADD b 2 3 4",
            "SET dst old",
            "EXPIRE dst 1000",
            "SINTERSTORE dst a b",
            "TYPE dst",
            "TTL dst",
            "SMEMBERS dst",
            "SUNIONSTORE dst a b",
            "SMEMBERS dst",
            "SDIFFSTORE dst a b",
            "SMEMBERS dst",
            "SINTERSTORE dst a nokey",
            "EXISTS dst",
            "SINTERSTORE dst a nokey",
            "SUNIONSTORE dst nokey",
            "SDIFFSTORE dst a a",
            "SADD dst 9",
            "SDIFFSTORE dst a a",
            "EXISTS dst",
            "SINTERSTORE a a b",
            "SMEMBERS a",
            "SUNIONSTORE a a b",
            "SMEMBERS a",
            "SDIFFSTORE b b a",
            "EXISTS b",
            "SUNIONSTORE u a x",
            "~SMEMBERS u",
            "?rdb_changes_since_last_save",
        ],
        &[
            "SINTERCARD abc a",
            "SINTERCARD 0 a",
            "SINTERCARD -1 a",
            "SINTERCARD 3 a b",
            "SINTERCARD 1 a LIMIT -1",
            "SINTERCARD 1 a LIMIT abc",
            "SINTERCARD 1 a LIMIT",
            "SINTERCARD 1 a FOO 1",
            "SINTERCARD 1 a b",
            "SINTERCARD 9223372036854775807 a",
            "SINTERCARD 9223372036854775808 a",
        ],
    ]);
}

#[test]
fn set_encoding_thresholds_and_algebra_encodings() {
    let mut diff_algo_two = sadd_ints("big", 600, 0);
    diff_algo_two.push_str(" x");
    run(&[
        vec![
            sadd_ints("s", 512, 0),
            "OBJECT ENCODING s".into(),
            "SMEMBERS s".into(),
            "SSCAN s 0 COUNT 1".into(),
            "SRANDMEMBER s 1000".into(),
            "SADD s 512".into(),
            "OBJECT ENCODING s".into(),
            "SCARD s".into(),
            "~SMEMBERS s".into(),
            "SREM s 512 511 510".into(),
            "OBJECT ENCODING s".into(),
            "~SRANDMEMBER s 1000".into(),
            "~SUNION s".into(),
            // A union of intsets is built member by member: an intset again under the limit.
            sadd_ints("i1", 300, 0),
            sadd_ints("i2", 300, 200),
            "SUNIONSTORE u i1 i2".into(),
            "OBJECT ENCODING u".into(),
            "SCARD u".into(),
            sadd_ints("i3", 300, 212),
            "SUNIONSTORE u i1 i3".into(),
            "OBJECT ENCODING u".into(),
            "SUNION i1 i3".into(),
            "SINTER i1 i2".into(),
            "SDIFF i1 i2".into(),
        ],
        vec![
            sadd_ints("big", 600, 0),
            sadd_ints("rm", 200, 0),
            "SDIFFSTORE r big rm".into(),
            "OBJECT ENCODING r".into(),
            "SADD one 0".into(),
            "SADD two 1".into(),
            // Redis's second SDIFF algorithm copies the first set then removes: a table stays one.
            "SDIFFSTORE r2 big one two".into(),
            "OBJECT ENCODING r2".into(),
            "SCARD r2".into(),
            "~SDIFF big one two".into(),
            "SADD sm 1 2 3".into(),
            sadd_ints("many", 50, 2),
            "SDIFFSTORE r3 sm many".into(),
            "OBJECT ENCODING r3".into(),
            "SMEMBERS r3".into(),
            diff_algo_two,
            "SADD xs x".into(),
            "SDIFFSTORE r4 big xs one".into(),
            "OBJECT ENCODING r4".into(),
            "SCARD r4".into(),
            "SINTERSTORE r5 big rm".into(),
            "OBJECT ENCODING r5".into(),
            "SINTER rm big".into(),
            "SINTERCARD 2 big rm LIMIT 10".into(),
            "COPY big big2".into(),
            "OBJECT ENCODING big2".into(),
            "SCARD big2".into(),
        ],
        strings(&[
            "CONFIG SET set-max-intset-entries 3",
            "SADD s 1 2 3",
            "OBJECT ENCODING s",
            "SADD s 4",
            "OBJECT ENCODING s",
            "SREM s 1 2 3",
            "OBJECT ENCODING s",
            "SADD t 1 2 3 4",
            "OBJECT ENCODING t",
            "SADD a 1 2",
            "SADD b 3 4",
            "SUNIONSTORE u a b",
            "OBJECT ENCODING u",
            "SMOVE u c 1",
            "OBJECT ENCODING c",
            "CONFIG SET set-max-intset-entries 0",
            "SADD z 1",
            "OBJECT ENCODING z",
            "CONFIG SET set-max-intset-entries 512",
        ]),
    ]);
}

#[test]
fn set_scan_deterministic() {
    compare(&[&[
        "SADD s 10 2 33 4",
        "SSCAN s 0",
        "SSCAN s 0 MATCH 3*",
        "SSCAN s 0 MATCH *",
        "SSCAN s 0 COUNT 1",
        "SSCAN s 99",
        "SSCAN s 0 COUNT 0",
        "SSCAN s 0 COUNT abc",
        "SSCAN s abc",
        "SSCAN s 0 TYPE set",
        "SSCAN s 0 MATCH",
        "SSCAN nokey 0",
        "SSCAN nokey 0 COUNT 0",
        "SSCAN nokey abc",
        "SADD one x",
        "SSCAN one 0 MATCH x",
        "#HELLO 3",
        "SSCAN s 0",
    ]]);
}

// ---- Properties of the random commands and of full scans (Goblin Core only) ----

fn parse(c: &mut Raw, line: &str) -> Vec<String> {
    let r = c.cmd_str(line);
    let text = String::from_utf8(r).unwrap();
    assert!(!text.starts_with('-'), "{line}: unexpected error {text:?}");
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with('$') {
            out.push(lines[i + 1].to_string());
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

fn fill_set(c: &mut Raw, key: &str, members: &[String]) {
    let mut args: Vec<&[u8]> = vec![b"SADD", key.as_bytes()];
    args.extend(members.iter().map(|m| m.as_bytes()));
    c.cmd(&args);
}

fn members(n: usize, ints: bool) -> Vec<String> {
    (0..n)
        .map(|i| if ints { i.to_string() } else { format!("m{i}") })
        .collect()
}

#[test]
fn srandmember_properties() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (n, ints) in [(5, true), (5, false), (300, true), (2000, false)] {
        let all = members(n, ints);
        let set: HashSet<String> = all.iter().cloned().collect();
        c.cmd_str("DEL s");
        fill_set(&mut c, "s", &all);
        for count in [1usize, 2, n / 3, n / 2, n - 1, n, n + 10] {
            let got = parse(&mut c, &format!("SRANDMEMBER s {count}"));
            assert_eq!(got.len(), count.min(n), "SRANDMEMBER s {count} of {n}");
            let uniq: HashSet<&String> = got.iter().collect();
            assert_eq!(uniq.len(), got.len(), "repeated member for count {count}");
            assert!(got.iter().all(|m| set.contains(m)));
        }
        // Negative: exactly -count picks, repetitions allowed, every member reachable.
        let got = parse(&mut c, &format!("SRANDMEMBER s -{}", n * 20));
        assert_eq!(got.len(), n * 20);
        assert!(got.iter().all(|m| set.contains(m)));
        let seen: HashSet<&String> = got.iter().collect();
        if n <= 300 {
            assert_eq!(seen.len(), n, "some member never drawn in {} picks", n * 20);
        }
        let one = parse(&mut c, "SRANDMEMBER s");
        assert!(set.contains(&one[0]));
        assert_eq!(c.cmd_str("SCARD s"), format!(":{n}\r\n").into_bytes());
    }
}

#[test]
fn spop_properties() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (n, ints) in [(10, true), (10, false), (400, true), (3000, false)] {
        let all = members(n, ints);
        c.cmd_str("DEL s");
        fill_set(&mut c, "s", &all);
        let mut left: HashSet<String> = all.iter().cloned().collect();
        let mut popped = HashSet::new();
        for count in [1usize, n / 5, n / 2] {
            let got = parse(&mut c, &format!("SPOP s {count}"));
            assert_eq!(got.len(), count);
            for m in got {
                assert!(left.remove(&m), "SPOP returned {m}, not a member");
                assert!(popped.insert(m));
            }
            let card = String::from_utf8(c.cmd_str("SCARD s")).unwrap();
            assert_eq!(card, format!(":{}\r\n", left.len()));
            for m in &popped {
                assert_eq!(
                    c.cmd(&[b"SISMEMBER", b"s", m.as_bytes()]),
                    b":0\r\n",
                    "{m} still in the set"
                );
            }
        }
        let one = parse(&mut c, "SPOP s");
        assert!(left.remove(&one[0]));
        let rest = parse(&mut c, &format!("SPOP s {}", n * 2));
        assert_eq!(rest.len(), left.len());
        assert_eq!(rest.into_iter().collect::<HashSet<_>>(), left);
        assert_eq!(c.cmd_str("EXISTS s"), b":0\r\n");
    }
    // Popping one by one deletes the key with the last member.
    c.cmd_str("SADD t a b");
    parse(&mut c, "SPOP t");
    assert_eq!(c.cmd_str("EXISTS t"), b":1\r\n");
    parse(&mut c, "SPOP t");
    assert_eq!(c.cmd_str("EXISTS t"), b":0\r\n");
}

#[test]
fn hrandfield_properties() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for n in [5usize, 100, 1000] {
        c.cmd_str("DEL h");
        c.cmd_str(&hset_n("h", n, 0));
        let fields: HashSet<String> = (0..n).map(|i| format!("f{i}")).collect();
        for count in [1usize, 2, n / 3, n / 2, n - 1, n, n + 5] {
            let got = parse(&mut c, &format!("HRANDFIELD h {count}"));
            assert_eq!(got.len(), count.min(n));
            let uniq: HashSet<&String> = got.iter().collect();
            assert_eq!(uniq.len(), got.len());
            assert!(got.iter().all(|f| fields.contains(f)));
            let pairs = parse(&mut c, &format!("HRANDFIELD h {count} WITHVALUES"));
            assert_eq!(pairs.len(), 2 * count.min(n));
            for p in pairs.chunks(2) {
                assert_eq!(
                    p[1],
                    format!("v{}", &p[0][1..]),
                    "value does not go with field"
                );
            }
        }
        let got = parse(&mut c, &format!("HRANDFIELD h -{}", n * 10));
        assert_eq!(got.len(), n * 10);
        assert!(got.iter().all(|f| fields.contains(f)));
        if n <= 100 {
            assert_eq!(got.iter().collect::<HashSet<_>>().len(), n);
        }
        let pairs = parse(&mut c, &format!("HRANDFIELD h -{} WITHVALUES", n * 2));
        assert_eq!(pairs.len(), n * 4);
        for p in pairs.chunks(2) {
            assert_eq!(p[1], format!("v{}", &p[0][1..]));
        }
        // RESP3: one [field, value] pair per pick.
        c.cmd_str("HELLO 3");
        let r = String::from_utf8(c.cmd_str("HRANDFIELD h -3 WITHVALUES")).unwrap();
        assert!(r.starts_with("*3\r\n*2\r\n$"), "{r:?}");
        c.cmd_str("HELLO 2");
    }
}

/// Runs a full HSCAN/SSCAN iteration, mutating nothing; returns every element seen.
fn full_scan(c: &mut Raw, cmd: &str, count: usize) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    let mut rounds = 0;
    loop {
        let r = parse(c, &format!("{cmd} {cursor} COUNT {count}"));
        cursor = r[0].clone();
        seen.extend(r[1..].iter().cloned());
        rounds += 1;
        assert!(rounds < 100_000, "scan does not terminate");
        if cursor == "0" {
            return seen;
        }
    }
}

#[test]
fn full_scans_return_everything() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str(&hset_n("h", 1000, 0));
    let got = full_scan(&mut c, "HSCAN h", 17);
    assert_eq!(got.len(), 2000, "each field exactly once, with its value");
    let map: HashMap<&String, &String> = got.chunks(2).map(|p| (&p[0], &p[1])).collect();
    assert_eq!(map.len(), 1000);
    for (f, v) in map {
        assert_eq!(&v[1..], &f[1..]);
    }
    let all = members(1500, false);
    fill_set(&mut c, "s", &all);
    let got = full_scan(&mut c, "SSCAN s", 33);
    assert_eq!(got.len(), 1500);
    assert_eq!(
        got.into_iter().collect::<HashSet<_>>(),
        all.into_iter().collect::<HashSet<_>>()
    );
    // MATCH filters a big set too.
    let got = full_scan(&mut c, "SSCAN s", 100);
    assert_eq!(got.len(), 1500);
    let mut cursor = "0".to_string();
    let mut matched = Vec::new();
    loop {
        let r = parse(&mut c, &format!("SSCAN s {cursor} MATCH m1?? COUNT 50"));
        cursor = r[0].clone();
        matched.extend(r[1..].iter().cloned());
        if cursor == "0" {
            break;
        }
    }
    matched.sort();
    let mut want: Vec<String> = (100..200).map(|i| format!("m{i}")).collect();
    want.sort();
    assert_eq!(matched, want);
    // Members present for the whole scan are returned even when others come and go meanwhile.
    let mut cursor = "0".to_string();
    let mut seen = HashSet::new();
    let mut round = 0;
    loop {
        let r = parse(&mut c, &format!("SSCAN s {cursor} COUNT 20"));
        cursor = r[0].clone();
        seen.extend(r[1..].iter().cloned());
        // Add 30 members and remove the previous 30: the set changes but does not keep growing.
        let churn: Vec<String> = (0..30).map(|i| format!("churn{round}-{i}")).collect();
        fill_set(&mut c, "s", &churn);
        if round > 0 {
            let mut args: Vec<Vec<u8>> = vec![b"SREM".to_vec(), b"s".to_vec()];
            args.extend((0..30).map(|i| format!("churn{}-{i}", round - 1).into_bytes()));
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
            c.cmd(&refs);
        }
        round += 1;
        if cursor == "0" {
            break;
        }
    }
    for i in 0..1500 {
        assert!(seen.contains(&format!("m{i}")), "SSCAN missed m{i}");
    }
}

// ---- Through the redis crate ----

#[test]
fn redis_crate_hashes_and_sets() {
    let g = goblin(&[]);
    let mut con = g.client();
    let created: i64 = redis::cmd("HSET")
        .arg("h")
        .arg(&["a", "1", "b", "2", "c", "3"])
        .query(&mut con)
        .unwrap();
    assert_eq!(created, 3);
    con.hset_multiple::<_, _, _, ()>("h", &[("c", "3"), ("d", "4")])
        .unwrap();
    let all: HashMap<String, String> = con.hgetall("h").unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all["b"], "2");
    let n: i64 = con.hincr("h", "a", 41).unwrap();
    assert_eq!(n, 42);
    let f: f64 = con.hincr("h", "c", 0.5).unwrap();
    assert_eq!(f, 3.5);
    let vals: Vec<Option<String>> = redis::cmd("HMGET")
        .arg("h")
        .arg("a")
        .arg("zz")
        .query(&mut con)
        .unwrap();
    assert_eq!(vals, vec![Some("42".to_string()), None]);
    let deleted: i64 = con.hdel("h", &["a", "b", "zz"]).unwrap();
    assert_eq!(deleted, 2);
    let exists: bool = con.hexists("h", "c").unwrap();
    assert!(exists);

    let added: i64 = con.sadd("s", &["x", "y", "z", "x"]).unwrap();
    assert_eq!(added, 3);
    let members: HashSet<String> = con.smembers("s").unwrap();
    assert_eq!(
        members,
        ["x", "y", "z"].iter().map(|s| s.to_string()).collect()
    );
    let _: i64 = con.sadd("t", &["y", "z", "w"]).unwrap();
    let inter: HashSet<String> = con.sinter(&["s", "t"]).unwrap();
    assert_eq!(inter, ["y", "z"].iter().map(|s| s.to_string()).collect());
    let union: HashSet<String> = con.sunion(&["s", "t"]).unwrap();
    assert_eq!(union.len(), 4);
    let moved: bool = con.smove("s", "t", "x").unwrap();
    assert!(moved);
    let card: i64 = con.scard("t").unwrap();
    assert_eq!(card, 4);
    let is: bool = con.sismember("t", "x").unwrap();
    assert!(is);
    let popped: Option<String> = con.spop("s").unwrap();
    assert!(popped.is_some_and(|p| p == "y" || p == "z"));
    let ints: HashSet<i64> = {
        let _: i64 = con.sadd("n", &[3, 1, 2]).unwrap();
        con.smembers("n").unwrap()
    };
    assert_eq!(ints, [1, 2, 3].into_iter().collect());
}

// ---- Command table rows against redis-server's ----

/// A parsed RESP2 reply, enough to pick fields out of COMMAND INFO and COMMAND DOCS.
#[derive(Debug, PartialEq)]
enum Resp {
    Line(String),
    Bulk(String),
    Arr(Vec<Resp>),
}

fn parse_resp(b: &[u8], at: &mut usize) -> Resp {
    let end = *at + b[*at..].windows(2).position(|w| w == b"\r\n").unwrap();
    let head = b[*at];
    let body = String::from_utf8_lossy(&b[*at + 1..end]).into_owned();
    *at = end + 2;
    match head {
        b'$' => {
            let n: usize = body.parse().unwrap();
            let s = String::from_utf8_lossy(&b[*at..*at + n]).into_owned();
            *at += n + 2;
            Resp::Bulk(s)
        }
        b'*' => {
            let n: usize = body.parse().unwrap();
            Resp::Arr((0..n).map(|_| parse_resp(b, at)).collect())
        }
        _ => Resp::Line(body),
    }
}

/// (summary, since, complexity) of a COMMAND DOCS entry.
fn doc_fields(entry: &Resp) -> Vec<&Resp> {
    let Resp::Arr(items) = entry else {
        panic!("not a map")
    };
    ["summary", "since", "complexity"]
        .iter()
        .map(|want| {
            let i = items
                .iter()
                .position(|k| *k == Resp::Bulk(want.to_string()))
                .unwrap_or_else(|| panic!("no {want}"));
            &items[i + 1]
        })
        .collect()
}

#[test]
fn command_rows_match_redis() {
    let names = [
        "hset",
        "hsetnx",
        "hget",
        "hmget",
        "hmset",
        "hdel",
        "hlen",
        "hexists",
        "hgetall",
        "hkeys",
        "hvals",
        "hincrby",
        "hincrbyfloat",
        "hstrlen",
        "hscan",
        "hrandfield",
        "sadd",
        "srem",
        "smembers",
        "sismember",
        "smismember",
        "scard",
        "spop",
        "srandmember",
        "smove",
        "sinter",
        "sunion",
        "sdiff",
        "sinterstore",
        "sunionstore",
        "sdiffstore",
        "sintercard",
        "sscan",
    ];
    let r = common::redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for name in names {
        let info = |c: &mut Raw| {
            let raw = c.cmd_str(&format!("COMMAND INFO {name}"));
            let Resp::Arr(mut outer) = parse_resp(&raw, &mut 0) else {
                panic!()
            };
            let Resp::Arr(mut row) = outer.remove(0) else {
                panic!("{name} unknown")
            };
            // name, arity, flags, first key, last key, step.
            row.truncate(6);
            row
        };
        assert_eq!(info(&mut gc), info(&mut rc), "COMMAND INFO {name}");
        let docs = |c: &mut Raw| {
            let raw = c.cmd_str(&format!("COMMAND DOCS {name}"));
            let Resp::Arr(mut outer) = parse_resp(&raw, &mut 0) else {
                panic!()
            };
            outer.remove(1)
        };
        let (want, got) = (docs(&mut rc), docs(&mut gc));
        assert_eq!(doc_fields(&got), doc_fields(&want), "COMMAND DOCS {name}");
    }
}

// Keyspace notifications: the events each hash and set command publishes, compared message for
// message with Redis (`common::compare_events`). SPOP's and SRANDMEMBER's picks are random, so
// their cases use single-member sets, counts covering the whole set, or a script that hides which
// members were picked.

/// Every hash write: its event (`hset` for HSET, HMSET and HSETNX), `del` after `hdel` when HDEL
/// empties the hash, `new` before the first event of a created key, and nothing for no-ops and
/// errors.
const HASH_WRITE_EVENTS: &[&[&str]] = &[
    &[
        "HSET h a 1 b 2",
        "HSET h a 1",
        "HSET h a 9 c 3",
        "HMSET h d 4",
        "HMSET h2 x 1",
        "HSET h a 1 b",
        "SET str x",
        "HSET str a 1",
        "HMSET str a 1",
    ],
    &[
        "HSETNX h a 1",
        "HSETNX h a 2",
        "HSETNX h b 2",
        "SET str x",
        "HSETNX str a 1",
    ],
    &[
        "HDEL nokey a",
        "HSET h a 1 b 2 c 3",
        "HDEL h zz",
        "HDEL h a",
        "HDEL h zz b yy",
        "HDEL h c",
        "EXISTS h",
        "HSET h a 1 b 2",
        "HDEL h a b zz",
        "SET str x",
        "HDEL str a",
    ],
    &[
        "HINCRBY h f 5",
        "HINCRBY h f -2",
        "HINCRBY h g 0",
        "HINCRBY h f abc",
        "HINCRBY nokey f abc",
        "HSET h s hello m 9223372036854775807",
        "HINCRBY h s 1",
        "HINCRBY h m 1",
        "SET str x",
        "HINCRBY str f 1",
    ],
    &[
        "HINCRBYFLOAT h f 1.5",
        "HINCRBYFLOAT h f 0.25",
        "HINCRBYFLOAT h f abc",
        "HINCRBYFLOAT h f inf",
        "HINCRBYFLOAT nokey f nan",
        "HSET h s hello",
        "HINCRBYFLOAT h s 1",
        "HINCRBYFLOAT h big 1e4932",
        "HINCRBYFLOAT h big 1e4932",
        "SET str x",
        "HINCRBYFLOAT str f 1",
    ],
];

#[test]
fn hash_write_events() {
    for flags in ["KEA", "KEAn", "KEAnm", "Kh", "Eg", "En"] {
        common::compare_events(flags, HASH_WRITE_EVENTS);
    }
}

/// Every set write: SADD/SREM/SPOP/SMOVE and the STORE forms (`sinterstore`, `sunionstore`,
/// `sdiffstore`, or `del` when an empty result deletes the destination).
const SET_WRITE_EVENTS: &[&[&str]] = &[
    &[
        "SADD s a b",
        "SADD s a",
        "SADD s a c",
        "SADD i 1 2 3",
        "SET str x",
        "SADD str a",
    ],
    &[
        "SREM nokey a",
        "SADD s a b c d",
        "SREM s zz",
        "SREM s a",
        "SREM s zz b yy",
        "SREM s c d zz",
        "EXISTS s",
        "SET str x",
        "SREM str a",
    ],
    &[
        "SPOP nokey",
        "SPOP nokey 2",
        "SADD s only",
        "SPOP s",
        "EXISTS s",
        "SADD i 3 1 2",
        "SPOP i 0",
        "SPOP i -1",
        "SPOP i 1 2",
        "SPOP i 3",
        "EXISTS i",
        "SADD i 5 4",
        "SPOP i 10",
        "SADD s x",
        "SPOP s 1",
        "SET str x",
        "SPOP str",
        "SPOP str 1",
        "SPOP str 0",
    ],
    // Pops that leave members behind, through a script so the random picks stay hidden.
    &[
        "SADD s a b c d e f g h i j",
        "EVAL \"return #redis.call('spop', KEYS[1], ARGV[1])\" 1 s 2",
        "EVAL \"return #redis.call('spop', KEYS[1], ARGV[1])\" 1 s 7",
        "EVAL \"redis.call('spop', KEYS[1]) return redis.call('scard', KEYS[1])\" 1 s",
        "SCARD s",
    ],
    &[
        "SMOVE nokey d a",
        "SET str x",
        "SMOVE nokey str a",
        "SMOVE str d a",
        "SADD s a b c",
        "SMOVE s str a",
        "SMOVE s s a",
        "SMOVE s s zz",
        "SMOVE s d zz",
        "SMOVE s d a",
        "SADD d b",
        "SMOVE s d b",
        "SMOVE s d c",
        "EXISTS s",
        "SADD s c",
        "SMOVE s d c",
        "SCARD d",
    ],
    &[
        "SADD a 1 2 3",
        "SADD b 2 3 4",
        "SADD c x",
        "SINTERSTORE d a b",
        "SINTERSTORE d a b",
        "SINTERSTORE d a c",
        "SINTERSTORE d a c",
        "SET d x",
        "SINTERSTORE d a nokey",
        "SINTERSTORE d nokey",
        "SET d x",
        "SINTERSTORE d a b",
        "TYPE d",
        "SINTERSTORE d a str",
        "SET str x",
        "SINTERSTORE d a str",
        "SINTERSTORE d nokey str",
        "SINTERSTORE a a b",
    ],
    &[
        "SADD a 1 2 3",
        "SADD b 2 3 4",
        "SUNIONSTORE d a b",
        "SUNIONSTORE d nokey",
        "SUNIONSTORE d nokey",
        "SUNIONSTORE d a nokey",
        "SET str x",
        "SUNIONSTORE d a str",
        "SUNIONSTORE str a",
        "TYPE str",
        "SUNIONSTORE a a b",
    ],
    &[
        "SADD a 1 2 3",
        "SADD b 2 3 4",
        "SDIFFSTORE d a b",
        "SDIFFSTORE d a a",
        "SDIFFSTORE d a a",
        "SDIFFSTORE d a nokey",
        "SDIFFSTORE d nokey a",
        "SET str x",
        "SDIFFSTORE d a str",
        "SDIFFSTORE d nokey str",
        "SDIFFSTORE a a b",
    ],
];

#[test]
fn set_write_events() {
    for flags in ["KEA", "KEAn", "KEAnm", "Ks", "Eg", "En"] {
        common::compare_events(flags, SET_WRITE_EVENTS);
    }
}

/// Reads publish only `keymiss` (with `m`), once per missing key looked up, and only once the
/// arguments parsed; a key of another type is a hit. Writes look their keys up without `keymiss`,
/// except the STORE forms' sources.
#[test]
fn hash_and_set_keymiss_events() {
    let cases: &[&[&str]] = &[
        &[
            "HGET h a",
            "HMGET h a b",
            "HLEN h",
            "HSTRLEN h a",
            "HEXISTS h a",
            "HGETALL h",
            "HKEYS h",
            "HVALS h",
            "HSCAN h 0",
            "HSCAN h x",
            "HSCAN h 0 COUNT 0",
            "HRANDFIELD h",
            "HRANDFIELD h 2",
            "HRANDFIELD h 0",
            "HRANDFIELD h 2 WITHVALUES",
            "HRANDFIELD h x",
            "HRANDFIELD h 2 BAD",
            "HSET h a 1",
            "HGET h a",
            "HGET h zz",
            "HRANDFIELD h",
            "HRANDFIELD h -3 WITHVALUES",
            "SET str x",
            "HGET str a",
            "HGETALL str",
            "HDEL nokey a",
            "HINCRBY nokey2 a 1",
        ],
        &[
            "SMEMBERS s",
            "SISMEMBER s a",
            "SMISMEMBER s a b",
            "SCARD s",
            "SRANDMEMBER s",
            "SRANDMEMBER s 2",
            "SRANDMEMBER s x",
            "SSCAN s 0",
            "SSCAN s x",
            "SINTER s t",
            "SINTERCARD 2 s t",
            "SINTERCARD 2 s t LIMIT -1",
            "SINTERCARD 3 s t",
            "SUNION s t",
            "SDIFF s t",
            "SADD s a",
            "SRANDMEMBER s",
            "SRANDMEMBER s 5",
            "SRANDMEMBER nokey -2",
            "SRANDMEMBER t 2",
            "SINTER s t s",
            "SUNION t s u",
            "SDIFF s t",
            "SET str x",
            "SINTER nokey str other",
            "SUNION nokey str other",
            "SMEMBERS str",
            "SREM nokey a",
            "SPOP nokey",
            "SPOP nokey 2",
            "SMOVE nokey s a",
            "SMOVE s nokey2 a",
            "SINTERSTORE d nokey s nokey3",
            "SUNIONSTORE d nokey s",
            "SDIFFSTORE d s nokey",
        ],
    ];
    for flags in ["KEAm", "Km", "Em"] {
        common::compare_events(flags, cases);
    }
}

/// Keys whose time has passed: `expired` where the command looks them up, and a STORE form's
/// destination that has expired but is still stored is deleted (`del`) by an empty result, as
/// Redis's dbDelete does. The active expiry cycle is stopped so the commands find the keys first.
/// TTLs are 20 ms, not 1: Redis deletes at once (`del`) a key whose new time has already passed
/// when it checks, which a loaded machine can make true of 1 ms.
#[test]
fn hash_and_set_events_on_expired_keys() {
    let cases: &[&[&str]] = &[
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "HSET h a 1",
            "PEXPIRE h 20",
            "SADD s a",
            "PEXPIRE s 20",
            "SADD s2 a",
            "PEXPIRE s2 20",
            "sleep 50",
            "HGET h a",
            "SISMEMBER s a",
            "SADD s2 b",
        ],
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "SADD src a",
            "SADD d x",
            "PEXPIRE d 20",
            "SADD e x",
            "PEXPIRE e 20",
            "SADD m a",
            "SADD mdst b",
            "PEXPIRE mdst 20",
            "sleep 50",
            "SINTERSTORE d nokey",
            "SUNIONSTORE e src",
            "SMOVE m mdst a",
        ],
    ];
    for flags in ["KEAnm", "KEA"] {
        common::compare_events(flags, cases);
    }
}

/// INFO keyspace_hits / keyspace_misses after each hash and set command: reads count, writes do
/// not, except the STORE forms' sources and SPOP of the whole set (which Redis answers with a
/// SUNION of the key).
#[test]
fn hash_and_set_keyspace_hits_and_misses() {
    let commands = [
        "HSET h a 1 b 2",
        "HGET h a",
        "HGET nokey a",
        "HMGET h a b",
        "HLEN h",
        "HSTRLEN nokey a",
        "HEXISTS h a",
        "HGETALL nokey",
        "HKEYS h",
        "HVALS h",
        "HSCAN h 0",
        "HSCAN nokey x",
        "HRANDFIELD nokey",
        "HRANDFIELD h 0",
        "HRANDFIELD h 10 WITHVALUES",
        "HRANDFIELD h x",
        "HSETNX h c 3",
        "HDEL h c",
        "HINCRBY h n 1",
        "HINCRBYFLOAT h n 1",
        "SET str x",
        "HGET str a",
        "SADD s 1 2 3",
        "SADD t 3 4",
        "SMEMBERS s",
        "SISMEMBER nokey a",
        "SMISMEMBER s 1 9",
        "SCARD s",
        "SRANDMEMBER nokey",
        "SRANDMEMBER s 0",
        "SRANDMEMBER s 10",
        "SRANDMEMBER nokey -2",
        "SRANDMEMBER t 2",
        "SRANDMEMBER s x",
        "SMEMBERS nokey",
        "SSCAN s 0",
        "SINTER s nokey t",
        "SINTERCARD 2 s t",
        "SUNION s t nokey",
        "SDIFF nokey s",
        "SINTER nokey str t",
        "SINTERSTORE d s t nokey",
        "SUNIONSTORE d s t",
        "SDIFFSTORE d s t",
        "SREM s 9",
        "SMOVE s t 1",
        "SMOVE nokey t 1",
        "SPOP nokey",
        "SPOP s 0",
        "SADD one x",
        "SPOP one",
        "SPOP s 10",
        "SADD one x",
        "SPOP one 1",
    ];
    let mut case = Vec::new();
    for c in commands {
        case.extend([c, "?keyspace_hits", "?keyspace_misses"]);
    }
    compare(&[&case]);
}
