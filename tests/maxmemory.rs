//! `maxmemory` and eviction. The deterministic part runs on Debian's redis-server and on Goblin Core
//! and the transcripts must match byte for byte: with `maxmemory 1` every server is always over
//! its limit, so each command evicts every candidate its policy allows and the refusals (OOM
//! errors, EXECABORT, scripts and functions by their flags) are exact. Then Goblin Core alone under
//! a real limit: memory stays near it, LRU evicts the least recently used keys, the event loop
//! finishes what one command's time budget could not, and the AOF logs every eviction.

mod common;
use common::{goblin, info_field, scenarios, scratch_dir, Raw};
use std::time::{Duration, Instant};

/// Each case starts and ends without a limit, so the next one's FLUSHALL and setup run freely.
const RESET: &str = "CONFIG SET maxmemory 0 maxmemory-policy noeviction";

#[test]
fn out_of_memory_matches_redis() {
    scenarios(
        &[],
        &[
            // noeviction: what may grow memory is refused, the rest runs.
            &[
                RESET,
                "SET a va",
                "SETEX t 100 vt",
                "RPUSH l x",
                "CONFIG SET maxmemory 1",
                "GET a",
                "SET b vb",
                "INCR n",
                "APPEND a x",
                "LPUSH l y",
                "SADD s m",
                "HSET h f v",
                "ZADD z 1 m",
                "SETRANGE a 0 q",
                "LPOP l",
                "EXPIRE a 100",
                "DEL a",
                "EXISTS a t",
                "DBSIZE",
                "PING",
                "info:evicted_keys",
                // Inside MULTI anything queued is refused; EXEC then aborts.
                "MULTI",
                "GET t",
                "PING",
                "EXEC",
                "MULTI",
                "DISCARD",
                RESET,
                "SET b vb",
            ],
            // A queue holding a command that may grow memory: EXEC is refused when memory ran out
            // meanwhile; a queue of reads runs.
            &[
                RESET,
                "MULTI",
                "SET q v",
                "b:CONFIG SET maxmemory 1",
                "EXEC",
                "MULTI",
                "GET q",
                "EXEC",
                RESET,
            ],
            // volatile-*: keys with a TTL go, the others stay and SET is refused.
            &[
                RESET,
                "CONFIG SET notify-keyspace-events Ee",
                "b:SUBSCRIBE __keyevent@0__:evicted",
                "SET a va",
                "SETEX t 100 vt",
                "CONFIG SET maxmemory-policy volatile-lru",
                "CONFIG SET maxmemory 1",
                "GET a",
                "b:<",
                "TTL t",
                "SET c vc",
                "DBSIZE",
                "info:evicted_keys",
                "CONFIG SET maxmemory 0",
                "SETEX t 100 vt",
                "CONFIG SET maxmemory-policy volatile-ttl maxmemory 1",
                "EXISTS t",
                "b:<",
                "CONFIG SET maxmemory 0",
                "SETEX t 100 vt",
                "CONFIG SET maxmemory-policy volatile-random maxmemory 1",
                "EXISTS t",
                "b:<",
                "CONFIG SET maxmemory 0",
                "SETEX t 100 vt",
                "CONFIG SET maxmemory-policy volatile-lfu maxmemory 1",
                "EXISTS t",
                "b:<",
                "info:evicted_keys",
                "EXISTS a",
                RESET,
                "CONFIG SET notify-keyspace-events \"\"",
                "b:UNSUBSCRIBE",
            ],
            // allkeys-*: everything goes, in every database, and the write is still refused.
            &[
                RESET,
                "SET a va",
                "SETEX t 100 vt",
                "SELECT 3",
                "SET d3 v",
                "SELECT 0",
                "CONFIG SET maxmemory-policy allkeys-lru maxmemory 1",
                "GET a",
                "DBSIZE",
                "SELECT 3",
                "DBSIZE",
                "SET a v",
                "SELECT 0",
                "CONFIG SET maxmemory 0",
                "MSET a 1 b 2 c 3",
                "CONFIG SET maxmemory-policy allkeys-lfu maxmemory 1",
                "DBSIZE",
                "CONFIG SET maxmemory 0",
                "MSET a 1 b 2 c 3",
                "CONFIG SET maxmemory-policy allkeys-random maxmemory 1",
                "EXISTS a b c",
                "info:evicted_keys",
                RESET,
            ],
            // Scripts: a shebang declares what the script may do and is judged before it runs;
            // without one, its first write that may grow memory is refused.
            &[
                RESET,
                "SET a va",
                "CONFIG SET maxmemory 1",
                "EVAL \"return redis.call('set','a','b')\" 0",
                "EVAL \"return redis.pcall('set','a','b')\" 0",
                "EVAL \"return redis.call('get','a')\" 0",
                "EVAL \"redis.call('del','nokey'); return redis.call('set','a','c')\" 0",
                "GET a",
                "EVAL \"#!lua\\nreturn 1\" 0",
                "EVAL_RO \"#!lua\\nreturn 1\" 0",
                "EVAL \"#!lua flags=no-writes\\nreturn redis.call('get','a')\" 0",
                "EVAL \"#!lua flags=no-writes\\nreturn redis.call('set','a','d')\" 0",
                "EVAL \"#!lua flags=allow-oom\\nreturn redis.call('set','a','e')\" 0",
                "GET a",
                "SCRIPT LOAD \"#!lua\\nreturn redis.call('set','a','f')\"",
                "EVALSHA d72ace4ce81b11ca6455ea0566c758d9596dee5e 0",
                "EVALSHA_RO d72ace4ce81b11ca6455ea0566c758d9596dee5e 0",
                RESET,
                "EVAL_RO \"#!lua\\nreturn 1\" 0",
            ],
            &[
                RESET,
                "FUNCTION FLUSH",
                "FUNCTION LOAD \"#!lua name=lib\\nredis.register_function('w', function() return redis.call('set','a','w') end)\\nredis.register_function{function_name='r', callback=function() return redis.call('get','a') end, flags={'no-writes'}}\\nredis.register_function{function_name='o', callback=function() return redis.call('set','a','o') end, flags={'allow-oom'}}\"",
                "SET a va",
                "CONFIG SET maxmemory 1",
                "FUNCTION LOAD \"#!lua name=lib2\\nredis.register_function('x', function() return 1 end)\"",
                "FCALL w 0",
                "FCALL_RO w 0",
                "FCALL r 0",
                "FCALL o 0",
                "GET a",
                RESET,
                "FCALL w 0",
                "FUNCTION FLUSH",
            ],
            // The directives, and OBJECT FREQ and IDLETIME by policy.
            &[
                RESET,
                "CONFIG SET maxmemory 10mb",
                "CONFIG GET maxmemory",
                "CONFIG SET maxmemory-samples 0",
                "CONFIG SET maxmemory-samples 10",
                "CONFIG GET maxmemory-samples",
                "CONFIG SET maxmemory-eviction-tenacity 101",
                "CONFIG SET maxmemory-eviction-tenacity 20",
                "CONFIG GET maxmemory-eviction-tenacity",
                "CONFIG SET lfu-log-factor -1",
                "CONFIG SET lfu-log-factor 5 lfu-decay-time 2",
                "~CONFIG GET lfu-*",
                "CONFIG SET maxmemory-policy somepolicy",
                "SET k str",
                "OBJECT FREQ k",
                "CONFIG SET maxmemory-policy allkeys-lfu",
                "SET k2 str",
                "OBJECT FREQ k2",
                "OBJECT IDLETIME k2",
                "CONFIG SET maxmemory-policy allkeys-lru",
                "SET n 7",
                "OBJECT REFCOUNT n",
                "CONFIG SET maxmemory 0",
                "SET n2 7",
                "OBJECT REFCOUNT n2",
                "CONFIG SET maxmemory-samples 5 maxmemory-eviction-tenacity 10 lfu-log-factor 10 lfu-decay-time 1",
                RESET,
            ],
        ],
    );
}

/// A server that evicts under a real limit: `used_memory` stays near `maxmemory`, every write is
/// accepted, and keys are evicted.
#[test]
fn allkeys_lru_keeps_memory_near_the_limit() {
    let s = goblin(&[]);
    let mut c = s.raw();
    let base = info_field(&mut c, "used_memory").unwrap();
    let limit = base + 4 * 1024 * 1024;
    c.cmd_str(&format!(
        "CONFIG SET maxmemory {limit} maxmemory-policy allkeys-lru"
    ));
    let value = "v".repeat(1000);
    for i in 0..20_000 {
        let r = c.cmd_str(&format!("SET key:{i} {value}"));
        assert_eq!(r, b"+OK\r\n", "SET key:{i} under allkeys-lru");
    }
    let used = info_field(&mut c, "used_memory").unwrap();
    assert!(
        used <= limit + 64 * 1024,
        "used_memory {used} is past maxmemory {limit}"
    );
    let evicted = info_field(&mut c, "evicted_keys").unwrap();
    let dbsize = c.cmd_str("DBSIZE");
    let kept: i64 = String::from_utf8_lossy(&dbsize[1..dbsize.len() - 2])
        .parse()
        .unwrap();
    assert!(evicted > 10_000, "evicted_keys {evicted}");
    assert_eq!(
        kept + evicted,
        20_000,
        "every key is kept or counted evicted"
    );
}

/// Under noeviction and a real limit, writes are refused once it is reached and reads still work.
#[test]
fn noeviction_refuses_writes_at_the_limit() {
    let s = goblin(&[]);
    let mut c = s.raw();
    let base = info_field(&mut c, "used_memory").unwrap();
    c.cmd_str(&format!("CONFIG SET maxmemory {}", base + 2 * 1024 * 1024));
    let value = "v".repeat(1000);
    let mut refused_at = None;
    for i in 0..10_000 {
        let r = c.cmd_str(&format!("SET key:{i} {value}"));
        if r != b"+OK\r\n" {
            assert_eq!(
                r,
                b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
            );
            refused_at = Some(i);
            break;
        }
    }
    let refused_at = refused_at.expect("a write refused before 10 MB were written");
    assert!(refused_at > 1000, "refused after only {refused_at} keys");
    assert_eq!(
        c.cmd_str("GET key:0"),
        format!("${}\r\n{value}\r\n", value.len()).as_bytes()
    );
    assert_eq!(info_field(&mut c, "evicted_keys"), Some(0));
    // Deleting makes room again.
    c.cmd_str("FLUSHALL");
    assert_eq!(c.cmd_str("SET again v"), b"+OK\r\n");
}

/// LRU evicts keys not read for long before recently used ones: with half the keys idle for a
/// day (RESTORE ... IDLETIME) and memory pushed past the limit, the evicted keys are idle ones.
#[test]
fn lru_evicts_idle_keys_first() {
    let s = goblin(&[]);
    let mut c = s.raw();
    let value = "v".repeat(500);
    c.cmd_str(&format!("SET proto {value}"));
    let payload = dump(&mut c, "proto");
    for i in 0..2000 {
        let r = c.cmd(&[
            b"RESTORE",
            format!("idle:{i}").as_bytes(),
            b"0",
            &payload,
            b"IDLETIME",
            b"86400",
        ]);
        assert_eq!(r, b"+OK\r\n");
        c.cmd_str(&format!("SET hot:{i} {value}"));
    }
    let used = info_field(&mut c, "used_memory").unwrap();
    c.cmd_str(&format!(
        "CONFIG SET maxmemory {} maxmemory-policy allkeys-lru",
        used + 256 * 1024
    ));
    // About 1 MB more: some 2000 evictions are needed, fewer than the idle keys.
    for i in 0..1000 {
        c.cmd_str(&format!("SET new:{i} {value}"));
    }
    let evicted = info_field(&mut c, "evicted_keys").unwrap();
    assert!(evicted > 500, "evicted_keys {evicted}");
    let hot_left = (0..2000)
        .filter(|i| c.cmd_str(&format!("EXISTS hot:{i}")) == b":1\r\n")
        .count();
    // Sampling is approximate: a recently used key may go when no idle one was sampled.
    assert!(
        hot_left >= 1900,
        "only {hot_left} of 2000 recently used keys kept"
    );
}

fn dump(c: &mut Raw, key: &str) -> Vec<u8> {
    let r = c.cmd_str(&format!("DUMP {key}"));
    let at = r.iter().position(|&b| b == b'\n').unwrap() + 1;
    r[at..r.len() - 2].to_vec()
}

/// OBJECT FREQ and IDLETIME after RESTORE's FREQ and IDLETIME, and through an RDB file (which
/// keeps them under an LFU or LRU policy).
#[test]
fn restore_and_rdb_keep_access_stamps() {
    let s = goblin(&["--enable-debug-command", "yes"]);
    let mut c = s.raw();
    c.cmd_str("SET proto value");
    let payload = dump(&mut c, "proto");
    c.cmd_str("CONFIG SET maxmemory-policy allkeys-lfu");
    let r = c.cmd(&[b"RESTORE", b"f", b"0", &payload, b"FREQ", b"100"]);
    assert_eq!(r, b"+OK\r\n");
    assert_eq!(c.cmd_str("OBJECT FREQ f"), b":100\r\n");
    assert_eq!(c.cmd_str("DEBUG RELOAD"), b"+OK\r\n");
    assert_eq!(c.cmd_str("OBJECT FREQ f"), b":100\r\n");
    c.cmd_str("CONFIG SET maxmemory-policy allkeys-lru");
    let r = c.cmd(&[b"RESTORE", b"i", b"0", &payload, b"IDLETIME", b"5000"]);
    assert_eq!(r, b"+OK\r\n");
    assert_eq!(c.cmd_str("DEBUG RELOAD"), b"+OK\r\n");
    let idle = String::from_utf8_lossy(&c.cmd_str("OBJECT IDLETIME i"))
        .trim_start_matches(':')
        .trim()
        .parse::<i64>()
        .unwrap();
    assert!((5000..5005).contains(&idle), "idle {idle}");
}

/// When one command's time budget (`maxmemory-eviction-tenacity 0`: 16 keys) is not enough, the
/// event loop goes on evicting until memory is within the limit, with no further command.
#[test]
fn evictions_continue_between_commands() {
    let s = goblin(&[]);
    let mut c = s.raw();
    let value = "v".repeat(100);
    for i in 0..5000 {
        c.cmd_str(&format!("SET key:{i} {value}"));
    }
    c.cmd_str("CONFIG SET maxmemory-eviction-tenacity 0 maxmemory-policy allkeys-random");
    c.cmd_str("CONFIG SET maxmemory 1");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let evicted = info_field(&mut c, "evicted_keys").unwrap();
        if evicted == 5000 {
            break;
        }
        assert!(Instant::now() < deadline, "only {evicted} keys evicted");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.cmd_str("DBSIZE"), b":0\r\n");
}

/// Every eviction reaches the AOF as a DEL, or an UNLINK with `lazyfree-lazy-eviction`.
#[test]
fn aof_logs_evictions() {
    let s = goblin(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = s.raw();
    let aof = || -> String {
        let dir = s.dir.join("appendonlydir");
        let bytes: Vec<u8> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".incr.aof"))
            .flat_map(|e| std::fs::read(e.path()).unwrap())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    c.cmd_str("SET keep v");
    c.cmd_str("SETEX gone 100 v");
    c.cmd_str("SETEX lazy 100 v");
    c.cmd_str("CONFIG SET maxmemory-policy volatile-ttl");
    c.cmd_str("CONFIG SET maxmemory 1");
    assert_eq!(c.cmd_str("EXISTS keep gone lazy"), b":1\r\n");
    c.cmd_str("CONFIG SET maxmemory 0");
    let text = aof();
    assert!(text.contains("$3\r\nDEL\r\n$4\r\ngone\r\n"), "{text}");
    assert!(text.contains("$3\r\nDEL\r\n$4\r\nlazy\r\n"), "{text}");
    c.cmd_str("CONFIG SET lazyfree-lazy-eviction yes");
    c.cmd_str("SETEX third 100 v");
    c.cmd_str("CONFIG SET maxmemory 1");
    c.cmd_str("PING");
    c.cmd_str("CONFIG SET maxmemory 0");
    let text = aof();
    assert!(text.contains("$6\r\nUNLINK\r\n$5\r\nthird\r\n"), "{text}");
    assert_eq!(c.cmd_str("KEYS *"), b"*1\r\n$4\r\nkeep\r\n");
}

/// Every engine is held to the same rules: a script with a shebang that may write is refused
/// before it runs, one without a shebang at its first write, and `allow-oom` lets it write.
#[test]
fn every_engine_obeys_the_limit() {
    let s = goblin(&[]);
    let mut c = s.raw();
    c.cmd_str("SET a va");
    c.cmd_str("CONFIG SET maxmemory 1");
    let oom = "OOM command not allowed when used memory > 'maxmemory'.";
    // (prefix, shebang name, a body that writes `a`)
    let engines = [
        ("", "lua", "return redis.call('SET', 'a', 'x')"),
        ("LUAU.", "luau", "return redis.call('SET', 'a', 'x')"),
        ("QUICKJS.", "js", "return redis.call('SET', 'a', 'x');"),
        ("TCL.", "tcl", "return [redis call SET a x]"),
        ("UPYTHON.", "python", "return redis.call('SET', 'a', 'x')"),
        ("WREN.", "wren", "return Redis.call(\"SET\", \"a\", \"x\")"),
    ];
    for (prefix, shebang, body) in engines {
        let eval = format!("{prefix}EVAL");
        let r = c.cmd(&[eval.as_bytes(), body.as_bytes(), b"0"]);
        let text = String::from_utf8_lossy(&r).into_owned();
        assert!(
            text.starts_with(&format!("-{oom}")),
            "{prefix}EVAL without a shebang: {text}"
        );
        let declared = format!("#!{shebang}\n{body}");
        let r = c.cmd(&[eval.as_bytes(), declared.as_bytes(), b"0"]);
        assert_eq!(
            r,
            format!("-{oom}\r\n").as_bytes(),
            "{prefix}EVAL with a shebang"
        );
        let allowed = format!("#!{shebang} flags=allow-oom\n{body}");
        let r = c.cmd(&[eval.as_bytes(), allowed.as_bytes(), b"0"]);
        assert_eq!(r, b"+OK\r\n", "{prefix}EVAL with allow-oom");
    }
    assert_eq!(c.cmd_str("GET a"), b"$1\r\nx\r\n");
}

/// Loading the AOF is not held to the limit (what it holds was accepted once): a server restarted
/// with `maxmemory 1` and noeviction has every key back, and refuses writes afterwards.
#[test]
fn aof_loads_past_the_limit() {
    let dir = scratch_dir("maxmemory-aof");
    let d = dir.to_str().unwrap();
    let g = goblin(&["--dir", d, "--appendonly", "yes"]);
    let mut c = g.raw();
    for i in 0..100 {
        c.cmd_str(&format!("SET key:{i} value:{i}"));
    }
    drop(g);
    let g = goblin(&["--dir", d, "--appendonly", "yes", "--maxmemory", "1"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("DBSIZE"), b":100\r\n");
    assert_eq!(c.cmd_str("GET key:99"), b"$8\r\nvalue:99\r\n");
    assert_eq!(
        c.cmd_str("SET more v"),
        b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
    );
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}
