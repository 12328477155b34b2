//! MEMORY and INFO memory. Replies that do not depend on how memory is counted (help, errors, nil
//! for a missing key, the doctor's report on an almost empty instance) are compared with
//! redis-server byte for byte; MEMORY STATS and INFO memory are compared by their fields' names
//! and types, since the figures come from different allocators; MEMORY USAGE's estimates are
//! checked for what they must show.

mod common;
use common::{compare_both, goblin, redis, reply_len, Raw};

#[test]
fn memory_matches_redis() {
    compare_both(&[&[
        "MEMORY HELP",
        "MEMORY DOCTOR",
        "MEMORY PURGE",
        "MEMORY USAGE nokey",
        "SET k v",
        "MEMORY USAGE k SAMPLES -1",
        "MEMORY USAGE k SAMPLES x",
        "MEMORY USAGE k SAMPLES",
        "MEMORY USAGE k FOO",
        "MEMORY USAGE nokey SAMPLES x",
        "MEMORY USAGE nokey SAMPLES 0",
        "MEMORY FOO",
        "MEMORY",
        "MEMORY STATS x",
        "MEMORY DOCTOR x",
        "MEMORY MALLOC-STATS x",
        "MEMORY USAGE",
    ]]);
}

/// A reply's shape: each element's type, and the text of bulk strings at even positions of a
/// flat array or the keys of a map (the names), numbers blanked.
fn shape(b: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    walk(b, 0, &mut out);
    out
}

fn walk(b: &[u8], at: usize, out: &mut Vec<String>) -> usize {
    let end = at + reply_len(b, at).unwrap();
    let line_end = at + b[at..].windows(2).position(|w| w == b"\r\n").unwrap();
    match b[at] {
        b'*' | b'%' => {
            out.push(format!("{}", b[at] as char));
            let mut pos = line_end + 2;
            let mut i = 0;
            while pos < end {
                // Names are the bulk strings in even positions; values only by type.
                if i % 2 == 0 && b[pos] == b'$' {
                    let text_at = pos + b[pos..].windows(2).position(|w| w == b"\r\n").unwrap() + 2;
                    let n = reply_len(b, pos).unwrap();
                    out.push(String::from_utf8_lossy(&b[text_at..pos + n - 2]).into_owned());
                    pos += n;
                } else {
                    pos += walk(b, pos, out);
                }
                i += 1;
            }
            out.push("end".into());
        }
        head => out.push(format!("{}", head as char)),
    }
    end - at
}

/// MEMORY STATS has Redis's fields, in Redis's order and with Redis's types, in RESP2 and RESP3.
#[test]
fn memory_stats_has_redis_fields() {
    let (r, g) = (redis(&[]), goblin(&[]));
    for hello in ["HELLO 2", "HELLO 3"] {
        let mut rc = r.raw();
        let mut gc = g.raw();
        for c in [&mut rc, &mut gc] {
            c.cmd_str(hello);
            c.cmd_str("SET k v");
            c.cmd_str("SELECT 2");
            c.cmd_str("SETEX t 100 v");
        }
        let want = shape(&rc.cmd_str("MEMORY STATS"));
        let got = shape(&gc.cmd_str("MEMORY STATS"));
        assert_eq!(got, want, "{hello}");
        assert!(got.contains(&"db.2".to_string()), "{got:?}");
    }
}

/// The names of INFO memory's fields.
fn info_fields(c: &mut Raw) -> Vec<String> {
    String::from_utf8_lossy(&c.cmd_str("INFO memory"))
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .collect()
}

/// INFO memory has every field of Redis's, in its order (ours adds each engine's VM bytes).
#[test]
fn info_memory_has_redis_fields() {
    let want = info_fields(&mut redis(&[]).raw());
    let got: Vec<String> = info_fields(&mut goblin(&[]).raw())
        .into_iter()
        .filter(|f| !f.starts_with("used_memory_vm_") || want.contains(f))
        .collect();
    assert_eq!(got, want);
}

fn int_reply(r: &[u8]) -> i64 {
    assert_eq!(r[0], b':', "{}", String::from_utf8_lossy(r));
    String::from_utf8_lossy(&r[1..r.len() - 2]).parse().unwrap()
}

/// MEMORY USAGE grows with the value, counts the key, and samples aggregates: SAMPLES 0 reads
/// every element, a small sample extrapolates from the first ones.
#[test]
fn memory_usage_estimates() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET small v");
    c.cmd_str(&format!("SET big {}", "v".repeat(10_000)));
    let small = int_reply(&c.cmd_str("MEMORY USAGE small"));
    let big = int_reply(&c.cmd_str("MEMORY USAGE big"));
    assert!((2..200).contains(&small), "{small}");
    assert!((10_000..10_400).contains(&big), "{big}");
    c.cmd_str(&format!("SET {} v", "k".repeat(1000)));
    let long_key = int_reply(&c.cmd_str(&format!("MEMORY USAGE {}", "k".repeat(1000))));
    assert!(long_key >= small + 990, "{long_key} vs {small}");
    // A list whose first elements are small and the rest big.
    c.cmd_str("RPUSH l a b c d e");
    for _ in 0..95 {
        c.cmd_str(&format!("RPUSH l {}", "x".repeat(1000)));
    }
    let sampled = int_reply(&c.cmd_str("MEMORY USAGE l"));
    let all = int_reply(&c.cmd_str("MEMORY USAGE l SAMPLES 0"));
    assert!(all > 95_000, "{all}");
    assert!(sampled < all / 10, "sampled {sampled}, all {all}");
    for key in ["h", "s", "z"] {
        c.cmd_str("FLUSHALL");
        for i in 0..200 {
            let cmd = match key {
                "h" => format!("HSET h f{i} {}", "v".repeat(100)),
                "s" => format!("SADD s {}{i}", "m".repeat(100)),
                _ => format!("ZADD z {i} {}{i}", "m".repeat(100)),
            };
            c.cmd_str(&cmd);
        }
        let n = int_reply(&c.cmd_str(&format!("MEMORY USAGE {key} SAMPLES 0")));
        assert!(n > 200 * 100, "{key}: {n}");
    }
    assert_eq!(
        c.cmd_str("MEMORY MALLOC-STATS"),
        b"$45\r\nStats not supported for the current allocator\r\n"
    );
}
