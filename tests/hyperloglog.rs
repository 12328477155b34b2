//! HyperLogLog commands (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) against Debian's
//! redis-server: every reply, every byte of the HLL strings (GET after each change), error texts,
//! keyspace events and COMMAND INFO/DOCS must be Redis 7.0's.

mod common;
use common::{
    command_info_and_docs_match_redis, compare, compare_both, compare_events, goblin, redis, show,
    Raw,
};

/// A sparse header with a stale cache, then `ops` (redis-cli escapes), as a quoted argument.
fn sparse(ops: &str) -> String {
    format!("\"HYLL\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x80{ops}\"")
}

/// A dense header with a stale cache, then `n` copies of the register byte `fill`.
fn dense(fill: &str, n: usize) -> String {
    format!(
        "\"HYLL\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x80{}\"",
        fill.repeat(n)
    )
}

/// `PFADD key prefix0 prefix1 ...` with `n` elements from `from`.
fn pfadd_line(key: &str, prefix: &str, from: usize, n: usize) -> String {
    let mut line = format!("PFADD {key}");
    for i in from..from + n {
        line.push_str(&format!(" {prefix}{i}"));
    }
    line
}

fn run(cases: &[Vec<String>]) {
    let refs: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let slices: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
    compare(&slices);
}

#[test]
fn command_info_and_docs() {
    let names = ["pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"];
    command_info_and_docs_match_redis(&names, &names);
}

#[test]
fn pfadd_pfcount_sparse() {
    compare_both(&[
        &[
            "PFADD h a b c",
            "GET h",
            "OBJECT ENCODING h",
            "PFDEBUG ENCODING h",
            "PFDEBUG DECODE h",
            "PFCOUNT h",
            // The refreshed cache is written into the string.
            "GET h",
            "PFADD h a b c",
            "PFADD h d",
            "GET h",
            "PFCOUNT h",
            "PFCOUNT h",
            "GET h",
            "STRLEN h",
            "TYPE h",
        ],
        // A new key counts as a change even with no element; an existing one does not.
        &[
            "?rdb_changes_since_last_save",
            "PFADD e",
            "?rdb_changes_since_last_save",
            "PFADD e",
            "?rdb_changes_since_last_save",
            "GET e",
            "PFCOUNT e",
            "?rdb_changes_since_last_save",
            "PFCOUNT e",
            "?rdb_changes_since_last_save",
            "PFADD e x y z x",
            "?rdb_changes_since_last_save",
            "PFCOUNT missing",
            "EXISTS missing",
        ],
        // Elements that share registers, empty and binary elements.
        &[
            "PFADD h \"\" \"\\x00\" \"\\xff\\xfe\" aaaaaaaa aaaaaaaaa 1 2 3 12345678901234567890",
            "PFDEBUG DECODE h",
            "PFCOUNT h",
            "GET h",
        ],
        // A key with a TTL keeps it.
        &[
            "PFADD t a",
            "EXPIRE t 100",
            "PFADD t b",
            "PFCOUNT t",
            "TTL t",
        ],
    ]);
}

#[test]
fn sparse_to_dense_promotion() {
    // The sparse layout depends on the order of updates: compare the bytes after every batch, up
    // to and past the default 3000-byte limit.
    let mut case = Vec::new();
    for batch in 0..30 {
        case.push(pfadd_line("h", "e", batch * 100, 100));
        case.push("GET h".to_string());
        case.push("PFDEBUG ENCODING h".to_string());
        case.push("PFCOUNT h".to_string());
    }
    case.push("PFDEBUG GETREG h".to_string());
    // A lower limit promotes earlier; one element at a time.
    let mut small = vec!["CONFIG SET hll-sparse-max-bytes 60".to_string()];
    for i in 0..40 {
        small.push(format!("PFADD s x{i}"));
        small.push("GET s".to_string());
    }
    small.push("PFDEBUG ENCODING s".to_string());
    small.push("CONFIG SET hll-sparse-max-bytes 3000".to_string());
    // PFDEBUG TODENSE converts once and keeps the cached cardinality.
    let todense: Vec<String> = [
        "PFADD d a b c",
        "PFCOUNT d",
        "PFDEBUG TODENSE d",
        "PFDEBUG TODENSE d",
        "PFDEBUG ENCODING d",
        "GET d",
        "PFCOUNT d",
        "PFADD d e",
        "GET d",
        "PFDEBUG DECODE d",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    run(&[case, small, todense]);
}

#[test]
fn large_cardinalities() {
    let mut case = Vec::new();
    for batch in 0..100 {
        case.push(pfadd_line("big", &format!("el:{batch}:"), 0, 1000));
        if batch % 10 == 9 {
            case.push("PFCOUNT big".to_string());
        }
    }
    case.push("GET big".to_string());
    case.push(pfadd_line("other", "el:7:", 0, 5000));
    case.push("PFCOUNT big other".to_string());
    case.push("PFMERGE both other big".to_string());
    case.push("PFCOUNT both".to_string());
    case.push("GET both".to_string());
    let replies = {
        let refs: Vec<&str> = case.iter().map(String::as_str).collect();
        compare(&[&refs])
    };
    // The estimate of 100k distinct elements is within Redis's 0.81% standard error, times 3.
    let last = replies.iter().rev().find(|r| r.starts_with(b":")).unwrap();
    let n: i64 = String::from_utf8_lossy(&last[1..last.len() - 2])
        .parse()
        .unwrap();
    assert!((97_000..=103_000).contains(&n), "{n}");
}

#[test]
fn union_and_merge() {
    let small_a = pfadd_line("a", "a", 0, 200);
    let small_b = pfadd_line("b", "b", 0, 200);
    let big_c = pfadd_line("c", "c", 0, 3000);
    let mut sparse_union = vec![small_a.clone(), small_b.clone()];
    sparse_union.extend(
        [
            "PFCOUNT a b",
            "PFCOUNT a b missing",
            "PFCOUNT a a",
            "GET a",
            "PFMERGE m a b",
            "GET m",
            "PFDEBUG ENCODING m",
            "PFCOUNT m",
            // The destination is a source too.
            "PFMERGE a b",
            "GET a",
            "PFMERGE a",
            "GET a",
            "PFMERGE new",
            "GET new",
            "PFMERGE new2 missing",
            "GET new2",
        ]
        .map(String::from),
    );
    let mut dense_union = vec![small_a, big_c];
    dense_union.extend(
        [
            "PFDEBUG ENCODING c",
            "PFCOUNT a c",
            // A dense source makes the destination dense.
            "PFMERGE a c",
            "PFDEBUG ENCODING a",
            "GET a",
            "PFCOUNT a",
            "PFMERGE m2 c missing",
            "GET m2",
            // The union count leaves its keys alone.
            "PFCOUNT c m2",
            "GET c",
        ]
        .map(String::from),
    );
    // Merging sparse keys into a sparse destination promotes it past the limit.
    let mut promoted = vec![pfadd_line("x", "x", 0, 500), pfadd_line("y", "y", 0, 500)];
    promoted.extend(
        [
            "CONFIG SET hll-sparse-max-bytes 1000",
            "PFMERGE z x y",
            "PFDEBUG ENCODING z",
            "GET z",
            "CONFIG SET hll-sparse-max-bytes 3000",
            "PFMERGE z2 x y",
            "PFDEBUG ENCODING z2",
            "GET z2",
        ]
        .map(String::from),
    );
    run(&[sparse_union, dense_union, promoted]);
}

#[test]
fn corrupted_and_foreign_strings() {
    let strings = [
        ("short", sparse("\\x7f\\xfe")),
        ("long", sparse("\\x7f\\xff\\x00")),
        ("trailing_val", sparse("\\x7f\\xff\\x80")),
        ("val_overflow", sparse("\\x7f\\xfd\\x83")),
        ("lone_xzero", sparse("\\x7f\\xfe\\x40")),
        ("lone_xzero_past", sparse("\\x7f\\xff\\x40")),
        ("header_only", sparse("")),
        // Ends in the first byte of an XZERO: Redis reads its terminating NUL as the second.
        ("mid_opcode", sparse("\\x7f")),
        ("mid_opcode_after_val", sparse("\\x7f\\xff\\x80\\x7f")),
        ("many_xzero", sparse(&"\\x7f\\xff".repeat(3000))),
        ("vals_only", sparse(&"\\x83".repeat(4096))),
        ("high_vals", sparse(&"\\xfb".repeat(4096))),
        (
            "bad_encoding",
            "\"HYLL\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x7f\\xff\""
                .to_string(),
        ),
        (
            "bad_magic",
            "\"HYLX\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x7f\\xff\""
                .to_string(),
        ),
        ("dense_short", dense("\\x00", 100)),
        // Every register 63: Redis's estimate overflows to i64::MIN.
        ("dense_max", dense("\\xff", 12288)),
        // A valid cache is answered without looking at the registers.
        (
            "dense_cached",
            format!(
                "\"HYLL\\x00\\x00\\x00\\x00\\x07{}\"",
                "\\x00".repeat(7 + 12288)
            ),
        ),
        ("plain", "hello".to_string()),
        ("int", "12345".to_string()),
        ("hyll", "HYLL".to_string()),
    ];
    let ops = [
        "PFCOUNT k",
        "PFADD k a b c",
        "PFCOUNT k k",
        "PFMERGE k",
        "PFMERGE x k",
        "PFDEBUG DECODE k",
        "PFDEBUG GETREG k",
        "PFDEBUG TODENSE k",
        "PFDEBUG ENCODING k",
    ];
    let mut cases = Vec::new();
    for (_, value) in &strings {
        for op in ops {
            cases.push(
                [
                    format!("SET k {value}"),
                    "OBJECT ENCODING k".to_string(),
                    op.to_string(),
                    "GET k".to_string(),
                    "OBJECT ENCODING k".to_string(),
                    "EXISTS x".to_string(),
                    "PFCOUNT k".to_string(),
                ]
                .to_vec(),
            );
        }
    }
    run(&cases);
}

#[test]
fn errors_and_wrong_types() {
    compare_both(&[
        &[
            "PFADD",
            "PFCOUNT",
            "PFMERGE",
            "PFDEBUG ENCODING",
            "PFDEBUG ENCODING a b",
            "PFSELFTEST x",
            "LPUSH l a",
            "PFADD l a",
            "PFCOUNT l",
            "PFCOUNT missing l",
            "PFMERGE d l",
            "EXISTS d",
            "PFMERGE l",
            "PFDEBUG ENCODING l",
            "SET s hello",
            "PFADD s a",
            "PFCOUNT s",
            "PFADD h a",
            "PFCOUNT h s",
            "PFMERGE h s",
            "PFMERGE s h",
            "GET h",
        ],
        &[
            "PFDEBUG ENCODING missing",
            "PFDEBUG NOSUCH missing",
            "PFADD h a",
            "PFDEBUG NOSUCH h",
            "PFDEBUG \"nul\\x00after\" h",
            "PFDEBUG decode h",
            "PFDEBUG TODENSE h",
            "PFDEBUG DECODE h",
            "PFDEBUG encoding h",
        ],
    ]);
}

/// Which lookups count as keyspace hits and misses: reads (PFCOUNT, PFMERGE's sources and
/// destination) do, writes (PFADD, PFDEBUG) do not.
#[test]
fn keyspace_hits_and_misses() {
    compare(&[&[
        "?keyspace_hits",
        "?keyspace_misses",
        "PFADD h a",
        "PFADD h b",
        "?keyspace_hits",
        "?keyspace_misses",
        "PFCOUNT h",
        "PFCOUNT missing",
        "?keyspace_hits",
        "?keyspace_misses",
        "PFCOUNT h missing h other",
        "?keyspace_hits",
        "?keyspace_misses",
        "PFMERGE d h missing",
        "?keyspace_hits",
        "?keyspace_misses",
        "PFMERGE d h",
        "?keyspace_hits",
        "?keyspace_misses",
        "PFDEBUG ENCODING d",
        "PFDEBUG ENCODING missing",
        "?keyspace_hits",
        "?keyspace_misses",
    ]]);
}

#[test]
fn pfdebug_and_pfselftest() {
    compare(&[&[
        "PFADD h a b c d e f g",
        "?rdb_changes_since_last_save",
        "PFDEBUG GETREG h",
        "?rdb_changes_since_last_save",
        "PFDEBUG ENCODING h",
        "GET h",
        "PFDEBUG GETREG h",
        "?rdb_changes_since_last_save",
        "PFDEBUG TODENSE h",
        "?rdb_changes_since_last_save",
        "PFSELFTEST",
    ]]);
}

#[test]
fn keyspace_events() {
    // `m`: PFCOUNT and PFMERGE read their keys (missing ones raise keymiss), PFADD and PFDEBUG
    // look up for writing; `n`: the keys PFADD and PFMERGE create.
    for flags in ["KEA", "E$", "Kg", "Emn"] {
        compare_events(
            flags,
            &[
                &[
                    "PFADD h a",
                    "PFADD h a",
                    "PFADD h",
                    "PFADD new",
                    "PFCOUNT h",
                    "PFCOUNT h",
                    "PFCOUNT h new missing",
                    "PFMERGE h",
                    "PFMERGE d h new",
                    "PFMERGE d2 missing",
                    "PFDEBUG TODENSE h",
                    "PFDEBUG GETREG d",
                    "SET s x",
                    "PFADD s a",
                    "PFMERGE m s",
                ],
                &[
                    "EVAL \"return redis.call('PFADD', KEYS[1], 'x')\" 1 e",
                    "PFCOUNT e",
                ],
                &["MULTI", "PFADD m a", "PFMERGE m2 m", "PFCOUNT m", "EXEC"],
            ],
        );
    }
}

#[test]
fn scripts_and_transactions() {
    compare_both(&[
        &[
            "EVAL \"return redis.call('PFADD', KEYS[1], 'a', 'b', 'c')\" 1 h",
            "EVAL \"return redis.call('PFCOUNT', KEYS[1])\" 1 h",
            "EVAL \"return redis.call('PFMERGE', KEYS[1], KEYS[2])\" 2 d h",
            "EVAL \"return redis.call('PFDEBUG', 'ENCODING', KEYS[1])\" 1 d",
            "EVAL \"return redis.call('PFADD', KEYS[1], 'z')\" 1 missing",
            "EVAL \"return redis.pcall('PFADD', KEYS[1], 'z')\" 1 notstr",
            "GET d",
            "EVAL_RO \"return redis.call('PFADD', KEYS[1], 'x')\" 1 h",
            "EVAL_RO \"return redis.call('PFCOUNT', KEYS[1])\" 1 h",
            "SET bad hello",
            "EVAL \"return redis.pcall('PFCOUNT', KEYS[1])\" 1 bad",
        ],
        &[
            "MULTI",
            "PFADD h a b",
            "PFCOUNT h",
            "PFMERGE d h",
            "PFADD h a",
            "PFDEBUG ENCODING d",
            "EXEC",
            "GET d",
            "GET h",
        ],
    ]);
}

/// WATCH sees PFADD, PFMERGE and a PFCOUNT that refreshes the cache; not a PFCOUNT answered from
/// the cache, a union count, or PFDEBUG's conversion.
#[test]
fn watch() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let steps: &[(&str, &str)] = &[
        ("PFADD h a b", "PFCOUNT h"),
        ("", "PFCOUNT h"),
        ("", "PFADD h a"),
        ("", "PFADD h zz"),
        ("", "PFCOUNT h h"),
        ("", "PFDEBUG TODENSE h"),
        ("", "PFMERGE h"),
    ];
    let mut results = Vec::new();
    for s in [&r, &g] {
        let (mut a, mut b) = (s.raw(), s.raw());
        let mut log = Vec::new();
        for (setup, other) in steps {
            if !setup.is_empty() {
                a.cmd_str(setup);
            }
            a.cmd_str("WATCH h");
            log.push(show(&b.cmd_str(other)));
            a.cmd_str("MULTI");
            a.cmd_str("PING");
            log.push(format!("{other}: {}", show(&a.cmd_str("EXEC"))));
        }
        results.push(log);
    }
    assert_eq!(results[0], results[1]);
    assert!(results[1].iter().any(|l| l.ends_with("*-1\\r\\n")));
}

/// HLL strings written by Redis work here and back: GET/SET and DUMP/RESTORE.
#[test]
fn interop_with_redis_strings() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    let both = |rc: &mut Raw, gc: &mut Raw, line: &str| {
        let (want, got) = (rc.cmd_str(line), gc.cmd_str(line));
        assert_eq!(show(&want), show(&got), "{line}");
        want
    };
    for (key, n) in [("small", 50), ("dense", 5000)] {
        rc.cmd_str(&pfadd_line(key, "v", 0, n));
        let bytes = rc.cmd(&[b"GET", key.as_bytes()]);
        let value = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap() + 1..bytes.len() - 2];
        assert_eq!(gc.cmd(&[b"SET", key.as_bytes(), value]), b"+OK\r\n");
        both(&mut rc, &mut gc, &format!("PFCOUNT {key}"));
        both(&mut rc, &mut gc, &format!("GET {key}"));
        both(&mut rc, &mut gc, &pfadd_line(key, "w", 0, 100));
        both(&mut rc, &mut gc, &format!("GET {key}"));
        both(&mut rc, &mut gc, &format!("PFCOUNT {key}"));
        // A dump taken from Redis restores here into the same HLL.
        let dump = rc.cmd(&[b"DUMP", key.as_bytes()]);
        let payload = &dump[dump.iter().position(|&b| b == b'\n').unwrap() + 1..dump.len() - 2];
        let copy = format!("{key}-copy");
        assert_eq!(
            gc.cmd(&[b"RESTORE", copy.as_bytes(), b"0", payload]),
            b"+OK\r\n"
        );
        assert_eq!(
            show(&gc.cmd(&[b"GET", copy.as_bytes()])),
            show(&rc.cmd(&[b"GET", key.as_bytes()]))
        );
        both(&mut rc, &mut gc, &format!("DUMP {key}"));
    }
}
