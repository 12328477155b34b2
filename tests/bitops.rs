//! Bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO) against
//! Debian's redis-server: every reply, error text, keyspace event and COMMAND INFO/DOCS entry must
//! be byte-for-byte Redis 7.0's.

mod common;
use common::{command_info_and_docs_match_redis, compare, compare_both, compare_events, goblin};

#[test]
fn setbit_and_getbit() {
    compare_both(&[
        &[
            "SETBIT k 7 1",
            "SETBIT k 7 1",
            "SETBIT k 7 0",
            "SETBIT k 100 1",
            "GET k",
            "STRLEN k",
            "OBJECT ENCODING k",
            "GETBIT k 100",
            "GETBIT k 99",
            "GETBIT k 101",
            "GETBIT k 1000000",
            "GETBIT k 4294967295",
            "GETBIT missing 0",
            "GETBIT missing 4294967295",
        ],
        // An integer-encoded string is its decimal text; writing makes it raw.
        &[
            "SET n 12345",
            "GETBIT n 2",
            "GETBIT n 3",
            "GETBIT n 39",
            "GETBIT n 40",
            "OBJECT ENCODING n",
            "SETBIT n 0 1",
            "GET n",
            "OBJECT ENCODING n",
            "TYPE n",
        ],
        // A short (embstr) string becomes raw; the TTL is kept.
        &[
            "SET e abc EX 1000",
            "OBJECT ENCODING e",
            "SETBIT e 1 1",
            "SETBIT e 1 0",
            "GET e",
            "OBJECT ENCODING e",
            "TTL e",
            "SETBIT e 30 1",
            "GET e",
        ],
        &[
            "SET empty \"\"",
            "GETBIT empty 0",
            "SETBIT empty 0 1",
            "GET empty",
            "SETBIT fresh 0 0",
            "EXISTS fresh",
            "GET fresh",
            "OBJECT ENCODING fresh",
        ],
        // Offsets and values: numbers only, in range.
        &[
            "SETBIT k 1 1",
            "GETBIT k -1",
            "GETBIT k abc",
            "GETBIT k 1.5",
            "GETBIT k \"\"",
            "GETBIT k 4294967296",
            "GETBIT k 99999999999999999999",
            "GETBIT k +1",
            "GETBIT k 01",
            "GETBIT k \" 1\"",
            "GETBIT k #8",
            "SETBIT k 1 2",
            "SETBIT k 1 -1",
            "SETBIT k 1 x",
            "SETBIT k 1 \"\"",
            "SETBIT k 1 01",
            "SETBIT k -1 1",
            "SETBIT k 4294967296 1",
            "SETBIT k 4294967296 x",
            "SETBIT k x 5",
            "SETBIT k #1 1",
            "GET k",
        ],
        &[
            "RPUSH l a",
            "SETBIT l 0 1",
            "GETBIT l 0",
            "SETBIT l -1 1",
            "SETBIT l 0 2",
            "GETBIT l x",
            "SETBIT k",
            "SETBIT k 0",
            "SETBIT k 0 1 1",
            "GETBIT k",
            "GETBIT k 0 1",
        ],
        &[
            "?rdb_changes_since_last_save",
            "SETBIT k 0 1",
            "SETBIT k 0 1",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

#[test]
fn bitcount() {
    compare_both(&[
        &[
            "SET k foobar",
            "BITCOUNT k",
            "BITCOUNT k 0 0",
            "BITCOUNT k 1 1",
            "BITCOUNT k 1 1 BYTE",
            "BITCOUNT k 5 30 BIT",
            "BITCOUNT k 5 30 bit",
            "BITCOUNT k 0 -1",
            "BITCOUNT k -2 -1",
            "BITCOUNT k -1 -2",
            "BITCOUNT k -100 -50",
            "BITCOUNT k -100 -200",
            "BITCOUNT k -1 -2 NOTAUNIT",
            "BITCOUNT k -2 -1 NOTAUNIT",
            "BITCOUNT k -100 100",
            "BITCOUNT k 3 2",
            "BITCOUNT k 6 100",
            "BITCOUNT k 0 -1 BIT",
            "BITCOUNT k -1 -1 BIT",
            "BITCOUNT k -8 -1 BIT",
            "BITCOUNT k 1 1 BIT",
            "BITCOUNT k 0 7 BIT",
            "BITCOUNT k 7 8 BIT",
            "BITCOUNT k 9 14 BIT",
            "BITCOUNT k 47 47 BIT",
            "BITCOUNT k 48 100 BIT",
            "BITCOUNT k -9223372036854775808 9223372036854775807",
            "BITCOUNT k -9223372036854775808 9223372036854775807 BIT",
        ],
        &[
            "SETBIT b 0 1",
            "SETBIT b 15 1",
            "SETBIT b 16 1",
            "SETBIT b 100 1",
            "BITCOUNT b",
            "BITCOUNT b 0 15 BIT",
            "BITCOUNT b 1 14 BIT",
            "BITCOUNT b 15 16 BIT",
            "BITCOUNT b 17 99 BIT",
            "BITCOUNT b 17 100 BIT",
            "BITCOUNT b 2 2",
        ],
        &[
            "SET n 1234567",
            "BITCOUNT n",
            "BITCOUNT n 1 2",
            "BITCOUNT n 3 20 BIT",
            "SET empty \"\"",
            "BITCOUNT empty",
            "BITCOUNT empty 0 -1",
            "BITCOUNT empty 0 -1 BIT",
        ],
        // Redis 7.0 looks the key up first: a missing key answers 0 even to a bad range.
        &[
            "BITCOUNT missing",
            "BITCOUNT missing 0 1",
            "BITCOUNT missing 0",
            "BITCOUNT missing a b",
            "BITCOUNT missing 0 1 WORD",
            "BITCOUNT missing 0 1 BIT x",
        ],
        &[
            "SET k foobar",
            "BITCOUNT k 0",
            "BITCOUNT k a 1",
            "BITCOUNT k 0 b",
            "BITCOUNT k a b WORD",
            "BITCOUNT k 0 1 WORD",
            "BITCOUNT k 0 1 BIT x",
            "BITCOUNT k 1.5 2",
            "BITCOUNT",
            "HSET h f v",
            "BITCOUNT h",
            "BITCOUNT h a b",
            "BITCOUNT h 0",
        ],
    ]);
}

#[test]
fn bitpos() {
    compare_both(&[
        &[
            "SET k \"\\xff\\xf0\\x00\"",
            "BITPOS k 0",
            "BITPOS k 1",
            "BITPOS k 0 1",
            "BITPOS k 0 2",
            "BITPOS k 1 2",
            "BITPOS k 1 2 -1",
            "BITPOS k 0 0 0",
            "BITPOS k 0 0 1",
            "BITPOS k 1 -1",
            "BITPOS k 1 -100",
            "BITPOS k 0 -100 -50",
            "BITPOS k 1 -100 -200",
            "BITPOS k 0 5 1",
            "BITPOS k 0 3 100",
            "BITPOS k 0 0 -1 BYTE",
            "BITPOS k 0 7 15 BIT",
            "BITPOS k 0 12 15 BIT",
            "BITPOS k 1 12 23 BIT",
            "BITPOS k 0 0 11 BIT",
            "BITPOS k 1 3 3 BIT",
            "BITPOS k 0 3 3 BIT",
            "BITPOS k 0 3 3 bit",
            "BITPOS k 1 -1 -1 BIT",
            "BITPOS k 0 -1 -1 BIT",
            "BITPOS k 1 5 2 BIT",
            "BITPOS k 0 100 200 BIT",
        ],
        // Looking for a clear bit in all ones: past the end without an end, -1 with one.
        &[
            "SET ones \"\\xff\\xff\\xff\"",
            "BITPOS ones 0",
            "BITPOS ones 0 0",
            "BITPOS ones 0 1",
            "BITPOS ones 0 2",
            "BITPOS ones 0 -1",
            "BITPOS ones 0 0 -1",
            "BITPOS ones 0 0 2",
            "BITPOS ones 0 0 -1 BYTE",
            "BITPOS ones 0 0 -1 BIT",
            "BITPOS ones 0 0 23 BIT",
            "BITPOS ones 0 5 9 BIT",
            "BITPOS ones 1",
            "BITPOS ones 1 1",
            "BITPOS ones 1 5 9 BIT",
        ],
        &[
            "SET zeros \"\\x00\\x00\\x00\"",
            "BITPOS zeros 1",
            "BITPOS zeros 1 0 -1",
            "BITPOS zeros 1 0 -1 BIT",
            "BITPOS zeros 0",
            "BITPOS zeros 0 2",
            "BITPOS zeros 0 9 20 BIT",
            "SET n 255",
            "BITPOS n 0",
            "BITPOS n 1",
            "BITPOS n 1 1",
            "SET empty \"\"",
            "BITPOS empty 0",
            "BITPOS empty 1",
            "BITPOS empty 0 0",
            "BITPOS empty 0 0 -1",
        ],
        // A missing key is all zeros, answered before the range is read.
        &[
            "BITPOS missing 0",
            "BITPOS missing 1",
            "BITPOS missing 0 5 10",
            "BITPOS missing 1 a b",
            "BITPOS missing 0 0 1 WORD",
            "BITPOS missing 2",
            "BITPOS missing x",
        ],
        &[
            "SET k abc",
            "BITPOS k 2",
            "BITPOS k -1",
            "BITPOS k x",
            "BITPOS k 1 x",
            "BITPOS k 1 0 x",
            "BITPOS k 1 x 1 WORD",
            "BITPOS k 1 0 x WORD",
            "BITPOS k 1 0 1 WORD",
            "BITPOS k 1 0 x BIT",
            "BITPOS k 1 0 1 BIT x",
            "BITPOS k",
            "SADD s m",
            "BITPOS s 1",
            "BITPOS s 1 x",
            "BITPOS s 3",
        ],
    ]);
}

#[test]
fn bitop() {
    compare_both(&[
        &[
            "SET a \"\\xff\\x0f\\xaa\"",
            "SET b \"\\xf0\\xff\"",
            "SET c \"\\x01\"",
            "BITOP AND d a b",
            "GET d",
            "BITOP and d a b c",
            "GET d",
            "BITOP OR d a b c",
            "GET d",
            "BITOP XOR d a b c",
            "GET d",
            "BITOP XOR d a a",
            "GET d",
            "BITOP NOT d a",
            "GET d",
            "BITOP Not d c",
            "GET d",
            "OBJECT ENCODING d",
            "BITOP AND d a missing",
            "GET d",
            "BITOP OR d missing a",
            "GET d",
            "BITOP AND a a b",
            "GET a",
        ],
        // An empty result deletes the destination, whatever it held, and replies 0.
        &[
            "SET d v EX 1000",
            "BITOP OR d missing1 missing2",
            "EXISTS d",
            "RPUSH d x",
            "BITOP AND d missing",
            "EXISTS d",
            "SET empty \"\"",
            "SET d v",
            "BITOP NOT d empty",
            "EXISTS d",
            "BITOP NOT d missing",
        ],
        // The destination is overwritten whatever its type, and loses its TTL.
        &[
            "SET d v EX 1000",
            "SET a 12",
            "BITOP OR d a",
            "TTL d",
            "GET d",
            "OBJECT ENCODING d",
            "HSET h f v",
            "BITOP OR h a",
            "TYPE h",
            "GET h",
        ],
        &[
            "SET a x",
            "RPUSH l y",
            "BITOP AND d a l",
            "BITOP AND d l missing",
            "BITOP NOT d l",
            "BITOP NOT d a b",
            "BITOP NOT d l b",
            "BITOP NAND d a",
            "BITOP \"\" d a",
            "BITOP AND d",
            "BITOP AND",
            "EXISTS d",
        ],
        &[
            "SET a xyz",
            "?rdb_changes_since_last_save",
            "BITOP OR d a",
            "BITOP OR d m",
            "BITOP OR d m",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

#[test]
fn bitfield_get_set_incrby() {
    compare_both(&[
        &[
            "BITFIELD k SET i8 0 -100 GET i8 0 GET u8 0 GET u4 0 GET i4 4",
            "GET k",
            "OBJECT ENCODING k",
            "BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY i8 #2 -300 GET i8 16",
            "STRLEN k",
            "BITFIELD k GET u8 #0 GET u8 #1 GET u8 #2 GET u8 #100 GET i64 0 GET u63 1",
            "BITFIELD k set u16 #1 65535 get U16 #1 incrby I16 #1 1",
            "BITFIELD k",
            "BITFIELD missing",
            "BITFIELD missing GET u8 0 GET i64 1000",
            "EXISTS missing",
        ],
        // Reads past the end are zeros; fields straddle bytes.
        &[
            "SET s \"\\xab\\xcd\\xef\"",
            "BITFIELD s GET u12 4 GET i12 4 GET u5 20 GET i5 20 GET u63 0 GET i64 0 GET i64 7 GET u1 23 GET i1 23",
            "BITFIELD s SET u12 4 4095 GET u24 0",
            "GET s",
            "SET n 123",
            "BITFIELD n GET u24 0 GET u8 #2",
            "OBJECT ENCODING n",
            "BITFIELD n INCRBY u8 #2 1",
            "GET n",
            "OBJECT ENCODING n",
        ],
        // Writes grow the string to the last bit written; the TTL stays.
        &[
            "SET t x EX 1000",
            "BITFIELD t SET u8 100 1 GET u8 200",
            "STRLEN t",
            "TTL t",
            "BITFIELD t SET i64 #10 -1",
            "STRLEN t",
            "BITFIELD t GET i64 #10 GET u63 #10 GET i64 639",
        ],
        // Many operations in one call, mixed with OVERFLOW changes that last to the end.
        &[
            "BITFIELD m INCRBY u8 0 200 INCRBY u8 0 100 OVERFLOW SAT INCRBY u8 0 100 OVERFLOW FAIL INCRBY u8 0 1 OVERFLOW WRAP INCRBY u8 0 1 GET u8 0 OVERFLOW FAIL SET u8 0 256 SET u8 0 255 GET u8 0",
            "BITFIELD m OVERFLOW SAT OVERFLOW WRAP INCRBY u8 0 1",
            "BITFIELD m overflow sat incrby u8 0 1000 overflow fail incrby i8 0 1",
        ],
    ]);
}

/// Every overflow mode at the edges of several signed and unsigned widths, for SET and INCRBY.
#[test]
fn bitfield_overflow_edges() {
    let types: &[(&str, i128, i128)] = &[
        ("i1", -1, 0),
        ("i2", -2, 1),
        ("i8", -128, 127),
        ("i63", -(1 << 62), (1 << 62) - 1),
        ("i64", i64::MIN as i128, i64::MAX as i128),
        ("u1", 0, 1),
        ("u8", 0, 255),
        ("u63", 0, (1 << 63) - 1),
    ];
    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128);
    let mut lines = Vec::new();
    for &(ty, min, max) in types {
        for mode in ["WRAP", "SAT", "FAIL"] {
            for start in [min, max, 0, clamp(max + 1), clamp(min - 1)] {
                let start = clamp(start);
                for incr in [
                    1,
                    -1,
                    2,
                    -2,
                    clamp(max),
                    clamp(-max),
                    i64::MAX as i128,
                    i64::MIN as i128,
                    clamp(max - min + 1),
                ] {
                    lines.push(format!(
                        "BITFIELD f OVERFLOW WRAP SET {ty} 3 {start} OVERFLOW {mode} INCRBY {ty} 3 {incr} GET {ty} 3"
                    ));
                }
                lines.push(format!(
                    "BITFIELD f OVERFLOW {mode} SET {ty} 3 {start} GET {ty} 3"
                ));
            }
            for v in [-1, i64::MIN as i128, i64::MAX as i128] {
                lines.push(format!(
                    "BITFIELD f OVERFLOW {mode} SET {ty} 9 {v} GET {ty} 9"
                ));
            }
        }
    }
    lines.push("GET f".into());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let replies = compare(&[&refs]);
    // The cases do reach every mode's outcome: a nil (FAIL) and a saturated u63.
    assert!(replies
        .iter()
        .any(|r| r.windows(5).any(|w| w == b"$-1\r\n")));
    assert!(replies
        .iter()
        .any(|r| r.windows(21).any(|w| w == b":9223372036854775807\r")));
}

#[test]
fn bitfield_offsets_and_errors() {
    compare_both(&[
        &[
            "BITFIELD k GET u8 -1",
            "BITFIELD k GET u8 #-1",
            "BITFIELD k GET u8 #",
            "BITFIELD k GET u8 ##1",
            "BITFIELD k GET u8 x",
            "BITFIELD k GET u8 4294967296",
            "BITFIELD k GET u8 4294967295",
            "BITFIELD k GET u8 #536870911",
            "BITFIELD k GET u8 #536870912",
            "BITFIELD k GET i64 #67108863",
            "BITFIELD k GET i64 #67108864",
            "BITFIELD k GET i64 #288230376151711744",
            "BITFIELD k GET i64 #144115188075855872",
            "BITFIELD k GET u8 #9223372036854775807",
            "BITFIELD k GET i3 #3074457345618258603",
            "BITFIELD k GET u8 99999999999999999999",
            "EXISTS k",
        ],
        &[
            "BITFIELD k GET u64 0",
            "BITFIELD k GET i65 0",
            "BITFIELD k GET i0 0",
            "BITFIELD k GET u0 0",
            "BITFIELD k GET x8 0",
            "BITFIELD k GET I8 0",
            "BITFIELD k GET i 0",
            "BITFIELD k GET \"\" 0",
            "BITFIELD k GET i-8 0",
            "BITFIELD k GET i08 0",
            "BITFIELD k GET i8x 0",
            "BITFIELD k GET \"i8\\x00junk\" 0",
            "BITFIELD k GET u63 0",
            "BITFIELD k GET i64 0",
        ],
        &[
            "BITFIELD k GET",
            "BITFIELD k GET u8",
            "BITFIELD k SET u8 0",
            "BITFIELD k INCRBY u8 0",
            "BITFIELD k OVERFLOW",
            "BITFIELD k OVERFLOW NONE GET u8 0",
            "BITFIELD k OVERFLOW SAT",
            "BITFIELD k FOO u8 0",
            "BITFIELD k SET u8 0 x",
            "BITFIELD k SET u8 0 1.5",
            "BITFIELD k INCRBY u8 0 99999999999999999999",
            "BITFIELD k SET u8 0 1 GET u8 x",
            "BITFIELD k SET u8 0 1 GET u64 0",
            "BITFIELD k GET u8 0 BAD",
            "EXISTS k",
            "BITFIELD",
        ],
        // An unfinished op is checked before the ones before it run.
        &[
            "BITFIELD k SET u8 0 255 GET",
            "EXISTS k",
            "BITFIELD k SET u8 0 255 OVERFLOW BAD",
            "EXISTS k",
        ],
        &[
            "LPUSH l a",
            "BITFIELD l GET u8 0",
            "BITFIELD l SET u8 0 1",
            "BITFIELD l",
            "BITFIELD l GET u64 0",
            "BITFIELD_RO l GET u8 0",
        ],
        // OVERFLOW FAIL refuses the write, but the key is still created and padded.
        &[
            "BITFIELD f OVERFLOW FAIL SET u2 100 4",
            "EXISTS f",
            "STRLEN f",
            "GET f",
            "?rdb_changes_since_last_save",
            "BITFIELD f OVERFLOW FAIL SET u2 0 4 SET u2 0 5",
            "?rdb_changes_since_last_save",
            "BITFIELD f GET u2 0",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

#[test]
fn bitfield_ro() {
    compare_both(&[
        &[
            "SET k \"\\x01\\x02\\x03\"",
            "BITFIELD_RO k GET u8 0 GET u8 #1 GET i16 #1 GET u8 #10",
            "BITFIELD_RO k",
            "BITFIELD_RO missing GET i8 0",
            "EXISTS missing",
            "BITFIELD_RO k GET u8 0 OVERFLOW SAT GET u8 8",
            "BITFIELD_RO k SET u8 0 1",
            "BITFIELD_RO k INCRBY u8 0 1",
            "BITFIELD_RO k GET u8 0 INCRBY u8 0 1 GET u8 0",
            "BITFIELD_RO k SET u8 0 x",
            "BITFIELD_RO k SET u64 0 1",
            "BITFIELD_RO k GET u8",
            "BITFIELD_RO k FOO",
            "BITFIELD_RO missing SET u8 0 1",
            "EXISTS missing",
            "GET k",
            "BITFIELD_RO",
        ],
        &[
            "SET k 5",
            "?keyspace_hits",
            "?keyspace_misses",
            "BITFIELD_RO k GET u8 0",
            "BITFIELD_RO nope GET u8 0",
            "BITFIELD k GET u8 0",
            "BITCOUNT k",
            "BITPOS nope 1",
            "GETBIT nope 0",
            "?keyspace_hits",
            "?keyspace_misses",
        ],
    ]);
}

#[test]
fn keyspace_events() {
    for flags in ["KEA", "K$", "Eg", "E$n"] {
        compare_events(
            flags,
            &[
                &[
                    "SETBIT k 3 1",
                    "SETBIT k 3 1",
                    "SETBIT k 3 0",
                    "SETBIT k -1 1",
                    "SETBIT k 1 5",
                ],
                &[
                    "BITFIELD b GET u8 0",
                    "BITFIELD b SET u8 0 1",
                    "BITFIELD b INCRBY u8 0 1 GET u8 0",
                    "BITFIELD b OVERFLOW FAIL INCRBY u2 0 10",
                    "BITFIELD b GET u8 x",
                    "BITFIELD_RO b GET u8 0",
                    "BITFIELD new OVERFLOW FAIL SET u1 0 2",
                ],
                &[
                    "SET a xy",
                    "BITOP NOT d a",
                    "BITOP OR d a missing",
                    "BITOP AND d missing",
                    "BITOP AND d missing",
                    "BITOP NOT d a b",
                ],
                &[
                    "GETBIT k 0",
                    "BITCOUNT k",
                    "BITPOS k 1",
                    "BITFIELD_RO k GET u8 0",
                ],
            ],
        );
    }
}

#[test]
fn scripts_and_transactions() {
    compare_both(&[
        &[
            "EVAL \"redis.call('SETBIT', KEYS[1], 9, 1); return {redis.call('GETBIT', KEYS[1], 9), redis.call('BITCOUNT', KEYS[1]), redis.call('BITPOS', KEYS[1], 1)}\" 1 k",
            "EVAL \"return redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', 'INCRBY', 'u2', 0, 5, 'GET', 'u8', 0)\" 1 k",
            "EVAL \"return redis.call('BITFIELD_RO', KEYS[1], 'GET', 'i16', 0)\" 1 k",
            "EVAL \"return redis.call('BITOP', 'NOT', KEYS[2], KEYS[1])\" 2 k d",
            "EVAL \"return redis.pcall('SETBIT', KEYS[1], -1, 1)\" 1 k",
            "EVAL \"return redis.pcall('BITFIELD', KEYS[1], 'GET', 'u64', 0)\" 1 k",
            "EVAL_RO \"return redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 0)\" 1 k",
            "EVAL_RO \"return redis.pcall('BITFIELD', KEYS[1], 'GET', 'u8', 0)\" 1 k",
            "EVAL_RO \"return redis.pcall('SETBIT', KEYS[1], 0, 1)\" 1 k",
            "GET k",
            "GET d",
        ],
        &[
            "MULTI",
            "SETBIT k 0 1",
            "GETBIT k 0",
            "BITFIELD k INCRBY u8 0 1 GET u8 0",
            "BITCOUNT k",
            "BITPOS k 0",
            "BITOP NOT d k",
            "SETBIT k -1 1",
            "BITFIELD_RO k GET u4 0",
            "EXEC",
            "MULTI",
            "SETBIT k",
            "EXEC",
            "WATCH k",
            "SETBIT k 3 1",
            "MULTI",
            "GET k",
            "EXEC",
            // A write that changes nothing leaves a WATCH alone.
            "WATCH k",
            "SETBIT k 3 1",
            "BITFIELD k SET u1 3 1 OVERFLOW FAIL INCRBY u1 3 1",
            "MULTI",
            "GET k",
            "EXEC",
            "WATCH k",
            "BITFIELD k INCRBY u1 3 1",
            "MULTI",
            "GET k",
            "EXEC",
        ],
    ]);
}

#[test]
fn command_info_and_docs() {
    let names = [
        "setbit",
        "getbit",
        "bitcount",
        "bitpos",
        "bitop",
        "bitfield",
        "bitfield_ro",
    ];
    command_info_and_docs_match_redis(&names, &names);
    compare(&[&[
        "COMMAND GETKEYS SETBIT k 0 1",
        "COMMAND GETKEYS BITOP AND d a b c",
        "COMMAND GETKEYS BITFIELD k GET u8 0",
        "COMMAND GETKEYS BITFIELD_RO k GET u8 0",
        "~COMMAND LIST FILTERBY ACLCAT bitmap",
    ]]);
}

/// Bad input never takes the server down or makes it allocate beyond `proto-max-bulk-len`.
#[test]
fn abusive_input_is_refused() {
    compare(&[
        &[
            "CONFIG SET proto-max-bulk-len 1mb",
            "SETBIT k 8388607 1",
            "STRLEN k",
            "SETBIT k 8388608 1",
            "GETBIT k 8388608",
            "BITFIELD k SET u8 #1048575 1",
            "BITFIELD k SET u8 #1048576 1",
            "BITFIELD k GET i64 8388600",
            "BITFIELD k SET i64 8388607 -1",
            "STRLEN k",
            "BITFIELD k GET u8 #9223372036854775807",
            "SETRANGE k 1048576 x",
            "CONFIG SET proto-max-bulk-len 512mb",
        ],
        &[
            "SET a x",
            "BITCOUNT a -9223372036854775808 -9223372036854775807",
            "BITPOS a 0 -9223372036854775808 9223372036854775807 BIT",
            "BITPOS a 1 9223372036854775807 -9223372036854775808 BIT",
        ],
    ]);
    let g = goblin(&[]);
    let mut c = g.raw();
    // Hundreds of operations in one call, every one answered.
    let mut line: Vec<Vec<u8>> = vec![b"BITFIELD".to_vec(), b"k".to_vec()];
    for i in 0..500 {
        for part in ["INCRBY", "u7", &format!("#{i}"), "3"] {
            line.push(part.as_bytes().to_vec());
        }
        line.extend([
            b"GET".to_vec(),
            b"i64".to_vec(),
            format!("{}", i * 3).into_bytes(),
        ]);
    }
    let refs: Vec<&[u8]> = line.iter().map(Vec::as_slice).collect();
    let r = c.cmd(&refs);
    assert!(r.starts_with(b"*1000\r\n"), "{}", common::show(&r[..40]));
    assert_eq!(c.cmd_str("STRLEN k"), b":438\r\n");
    // The largest legal offset works, and reads past it cost nothing.
    assert_eq!(c.cmd_str("CONFIG SET proto-max-bulk-len 1mb"), b"+OK\r\n");
    assert_eq!(c.cmd_str("SETBIT big 8388607 1"), b":0\r\n");
    assert_eq!(c.cmd_str("BITCOUNT big"), b":1\r\n");
    assert_eq!(c.cmd_str("BITPOS big 1"), b":8388607\r\n");
    assert_eq!(c.cmd_str("BITPOS big 0 -1"), b":8388600\r\n");
    assert_eq!(c.cmd_str("BITOP NOT big2 big"), b":1048576\r\n");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}
