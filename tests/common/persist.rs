//! Persistence test helpers shared by the RDB and AOF tests: a data set of every type in each
//! encoding (`fill`), its comparable image (`snapshot`, `assert_same`), and a start-up that must fail.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// Commands that build one key of every type in each of its encodings, with TTLs.
pub fn fill(c: &mut Raw) {
    let mut lines: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut add = |args: Vec<Vec<u8>>| lines.push(args);
    let s = |x: &str| x.as_bytes().to_vec();
    for l in [
        "SET s:int 12345",
        "SET s:neg -7",
        "SET s:big 1099511627776",
        "SET s:huge 12345678901234567890",
        "SET s:emb hello",
        "SET s:m0 -0",
        "SET s:lead 007",
        "SET s:empty \"\"",
        "APPEND s:app 123",
        "APPEND s:appstr abc",
        "SET s:ttl v PX 500000",
        "SET s:ttl2 12 EX 100000",
        "RPUSH l:small a b 1 -5 70000",
        "HSET h:small f1 v1 f2 12 n -3",
        "EXPIRE h:small 100000",
        "SADD st:ints 5 1 -3 100",
        "SADD st:wide 5 8589934592",
        "SADD st:mid 5 70000",
        "SADD st:str a b c",
        "ZADD z:small 1 a 2.5 b -1e10 c inf d 0.1 e 3e20 f -inf g",
        "SELECT 3",
        "SET other:db 1",
        "RPUSH other:list x",
        "SELECT 0",
    ] {
        add(split(l));
    }
    add(vec![s("SET"), s("s:rawz"), vec![b'a'; 100]]);
    add(vec![
        s("SET"),
        s("s:noise"),
        (0..=255u8).cycle().take(700).collect(),
    ]);
    add(vec![s("SET"), s("s:bin"), b"\x00\xff\x01abc".to_vec()]);
    let mut v = vec![s("RPUSH"), s("l:ints")];
    v.extend(
        (-3000..3000)
            .step_by(7)
            .map(|i: i32| i.to_string().into_bytes()),
    );
    add(v);
    let mut v = vec![s("RPUSH"), s("l:big")];
    v.extend((0..3000).map(|i| format!("elem-{i}").into_bytes()));
    add(v);
    let mut v = vec![s("RPUSH"), s("l:fat")];
    v.extend((0..40).map(|i| format!("{}{i}", "y".repeat(600)).into_bytes()));
    add(v);
    add(vec![s("RPUSH"), s("l:long"), vec![b'q'; 20000], s("tail")]);
    let mut v = vec![s("HSET"), s("h:big")];
    for i in 0..600 {
        v.push(format!("f{i}").into_bytes());
        v.push(format!("v{i}").into_bytes());
    }
    add(v);
    add(vec![s("HSET"), s("h:longval"), s("a"), vec![b'b'; 100]]);
    let mut v = vec![s("SADD"), s("st:big")];
    v.extend((0..1000).map(|i: i32| i.to_string().into_bytes()));
    add(v);
    let mut v = vec![s("ZADD"), s("z:big")];
    for i in 0..300 {
        v.push(format!("{}", i as f64 * 1.5).into_bytes());
        v.push(format!("m{i}").into_bytes());
    }
    add(v);
    add(vec![s("ZADD"), s("z:long"), s("1"), vec![b'q'; 100]]);
    for l in lines {
        let refs: Vec<&[u8]> = l.iter().map(|a| a.as_slice()).collect();
        let r = c.cmd(&refs);
        assert!(
            !r.starts_with(b"-"),
            "{:?}: {}",
            show(&refs.concat()),
            show(&r)
        );
    }
}

/// What a key holds, as comparable bytes: type, encoding, contents and whether it has a TTL (and
/// the TTL rounded to 100 s, which a test cannot move across).
pub type Snapshot = BTreeMap<(u8, Vec<u8>), (String, String, Vec<u8>, i64)>;

pub fn snapshot(c: &mut Raw) -> Snapshot {
    let mut out = BTreeMap::new();
    for db in [0u8, 3] {
        c.cmd_str(&format!("SELECT {db}"));
        let keys = c.cmd_str("KEYS *");
        for key in parse_array(&keys) {
            let t = String::from_utf8_lossy(&c.cmd(&[b"TYPE", &key])).into_owned();
            let enc = String::from_utf8_lossy(&c.cmd(&[b"OBJECT", b"ENCODING", &key])).into_owned();
            let val = match t.trim() {
                "+string" => c.cmd(&[b"GET", &key]),
                "+list" => c.cmd(&[b"LRANGE", &key, b"0", b"-1"]),
                "+hash" => sorted_reply(&c.cmd(&[b"HGETALL", &key])),
                "+set" => sorted_reply(&c.cmd(&[b"SMEMBERS", &key])),
                "+zset" => c.cmd(&[b"ZRANGE", &key, b"0", b"-1", b"WITHSCORES"]),
                other => panic!("unexpected type {other}"),
            };
            let pttl = String::from_utf8_lossy(&c.cmd(&[b"PTTL", &key]))
                .trim()
                .trim_start_matches(':')
                .parse::<i64>()
                .unwrap();
            let ttl = if pttl < 0 { pttl } else { pttl / 100_000 };
            out.insert((db, key), (t, enc, val, ttl));
        }
    }
    c.cmd_str("SELECT 0");
    out
}

pub fn parse_array(b: &[u8]) -> Vec<Vec<u8>> {
    let after = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    let mut pos = after;
    let mut out = Vec::new();
    while pos < b.len() {
        let n = reply_len(b, pos).unwrap();
        let item = &b[pos..pos + n];
        let start = item.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
        out.push(item[start..item.len() - 2].to_vec());
        pos += n;
    }
    out
}

pub fn assert_same(a: &Snapshot, b: &Snapshot) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "key sets differ"
    );
    for (k, va) in a {
        let vb = &b[k];
        assert!(
            va == vb,
            "key {:?} differs:\n  {:?}\n  {:?}",
            String::from_utf8_lossy(&k.1),
            (&va.0, &va.1, show(&va.2), va.3),
            (&vb.0, &vb.1, show(&vb.2), vb.3)
        );
    }
}

/// Starts goblin with `args` expecting it to refuse to start; returns its log.
pub fn start_fails(args: &[&str]) -> String {
    let port = free_port().to_string();
    let mut child = Command::new(goblin_bin())
        .args(["--port", &port])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(!st.success(), "start-up should fail");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("goblin started on a corrupt file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}
