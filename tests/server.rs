//! Goblin Core over real sockets: pipelining, limits, auth, clients, expiry, SCAN, shutdown, config
//! files, the `redis` crate and redis-cli.

mod common;
use common::{encode, goblin, goblin_bin, scratch_dir, show, Raw};

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redis::Commands;

#[test]
fn pipeline_of_thousands_in_one_write() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let mut batch = Vec::new();
    for i in 0..5000 {
        batch.extend(encode(&[
            b"SET",
            format!("k{i}").as_bytes(),
            format!("v{i}").as_bytes(),
        ]));
        batch.extend(encode(&[b"GET", format!("k{i}").as_bytes()]));
    }
    c.send(&batch);
    for i in 0..5000 {
        assert_eq!(c.reply(), b"+OK\r\n");
        assert_eq!(
            c.reply(),
            format!("${}\r\nv{i}\r\n", format!("v{i}").len()).into_bytes()
        );
    }
    assert_eq!(c.cmd_str("DBSIZE"), b":5000\r\n");
}

#[test]
fn pipeline_replies_are_batched_into_few_writes() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let mut batch = Vec::new();
    for _ in 0..256 {
        batch.extend(encode(&[b"PING"]));
    }
    c.send(&batch);
    // All 256 replies (1792 bytes) arrive together: one read returns them all.
    std::thread::sleep(Duration::from_millis(100));
    let mut buf = vec![0u8; 65536];
    let n = c.s.read(&mut buf).unwrap();
    assert_eq!(n, 256 * 7, "replies split across writes");
}

#[test]
fn commands_split_across_packets_and_big_values() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let big = vec![b'x'; 3 * 1024 * 1024];
    let cmd = encode(&[b"SET", b"big", &big]);
    for chunk in cmd.chunks(7777) {
        c.send(chunk);
    }
    assert_eq!(c.reply(), b"+OK\r\n");
    assert_eq!(c.cmd_str("STRLEN big"), b":3145728\r\n");
    let reply = c.cmd_str("GET big");
    assert_eq!(reply.len(), big.len() + "$3145728\r\n\r\n".len());
}

#[test]
fn protocol_error_closes_only_that_connection() {
    let g = goblin(&[]);
    let mut good = g.raw();
    good.cmd_str("SET keep me");
    for garbage in [
        &b"*1\r\n$-1\r\n"[..],
        b"*-\r\n",
        b"*2\r\n$3\r\nGET\r\nX3\r\nabc\r\n",
        b"*1\r\n$9999999999999\r\n",
    ] {
        let mut bad = g.raw();
        bad.send(garbage);
        let r = bad.reply();
        assert!(r.starts_with(b"-ERR Protocol error: "), "{}", show(&r));
        assert!(bad.is_closed());
    }
    assert_eq!(good.cmd_str("GET keep"), b"$2\r\nme\r\n");
}

#[test]
fn over_long_inline_and_bulk_headers() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.send(&vec![b'a'; 70 * 1024]);
    assert_eq!(
        c.reply(),
        b"-ERR Protocol error: too big inline request\r\n"
    );
    assert!(c.is_closed());
    let mut c = g.raw();
    let mut b = b"*1\r\n$".to_vec();
    b.extend(vec![b'1'; 70 * 1024]);
    c.send(&b);
    assert_eq!(
        c.reply(),
        b"-ERR Protocol error: too big bulk count string\r\n"
    );
    let mut c = g.raw();
    c.send(b"*1\r\n$536870913\r\n");
    assert_eq!(c.reply(), b"-ERR Protocol error: invalid bulk length\r\n");
}

#[test]
fn query_buffer_limit_closes_the_client() {
    let g = goblin(&["--client-query-buffer-limit", "1mb"]);
    let mut c = g.raw();
    // A bulk announced as 2 MB: the query buffer passes 1 MB before the command is complete.
    c.send(b"*2\r\n$3\r\nGET\r\n$2000000\r\n");
    let chunk = vec![b'x'; 64 * 1024];
    for _ in 0..24 {
        if c.s.write_all(&chunk).is_err() {
            break;
        }
    }
    assert!(c.is_closed());
    assert_eq!(g.raw().cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn maxclients_is_enforced() {
    let g = goblin(&["--maxclients", "2"]);
    let mut a = g.raw();
    let mut b = g.raw();
    assert_eq!(a.cmd_str("PING"), b"+PONG\r\n");
    assert_eq!(b.cmd_str("PING"), b"+PONG\r\n");
    let mut c = g.raw();
    assert_eq!(c.reply(), b"-ERR max number of clients reached\r\n");
    assert!(c.is_closed());
}

#[test]
fn requirepass_and_auth() {
    let g = goblin(&["--requirepass", "s3cret"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("GET a"), b"-NOAUTH Authentication required.\r\n");
    assert_eq!(
        c.cmd_str("AUTH wrong"),
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    );
    assert!(c
        .cmd_str("HELLO 3")
        .starts_with(b"-NOAUTH HELLO must be called"));
    assert_eq!(c.cmd_str("AUTH s3cret"), b"+OK\r\n");
    assert_eq!(c.cmd_str("GET a"), b"$-1\r\n");
    let mut d = g.raw();
    assert!(d
        .cmd_str("HELLO 3 AUTH default s3cret")
        .starts_with(b"%7\r\n"));
    assert_eq!(d.cmd_str("GET a"), b"_\r\n");
    assert_eq!(d.cmd_str("RESET"), b"+RESET\r\n");
    assert_eq!(d.cmd_str("GET a"), b"-NOAUTH Authentication required.\r\n");
    // Before AUTH, large requests are refused as Redis does.
    let mut e = g.raw();
    e.send(b"*20\r\n");
    assert_eq!(
        e.reply(),
        b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    );
}

#[test]
fn resp3_after_hello() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let hello = c.cmd_str("HELLO 3 SETNAME app");
    let text = show(&hello);
    assert!(
        text.starts_with(
            "%7\\r\\n$6\\r\\nserver\\r\\n$5\\r\\nredis\\r\\n$7\\r\\nversion\\r\\n$6\\r\\n7.0.15"
        ),
        "{text}"
    );
    assert!(text.contains("$5\\r\\nproto\\r\\n:3"), "{text}");
    assert!(text.contains("$4\\r\\nmode\\r\\n$10\\r\\nstandalone\\r\\n$4\\r\\nrole\\r\\n$6\\r\\nmaster\\r\\n$7\\r\\nmodules\\r\\n*0\\r\\n"), "{text}");
    assert_eq!(c.cmd_str("CLIENT GETNAME"), b"$3\r\napp\r\n");
    assert_eq!(c.cmd_str("GET nothing"), b"_\r\n");
    assert_eq!(
        c.cmd_str("CONFIG GET hz"),
        b"%1\r\n$2\r\nhz\r\n$2\r\n10\r\n"
    );
    let info = c.cmd_str("INFO server");
    assert!(info.starts_with(b"="), "{}", show(&info));
    assert!(show(&info).contains("txt:# Server"));
    assert!(c.cmd_str("HELLO 2").starts_with(b"*14\r\n"));
    assert_eq!(c.cmd_str("GET nothing"), b"$-1\r\n");
}

#[test]
fn unix_socket_listener() {
    let dir = scratch_dir("sock");
    let path = dir.join("goblin.sock");
    let p = path.to_str().unwrap();
    let _g = goblin(&["--unixsocket", p, "--unixsocketperm", "700"]);
    let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
    s.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"+PONG\r\n");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn active_expiry_reclaims_untouched_keys() {
    let g = goblin(&["--hz", "50"]);
    let mut c = g.raw();
    let mut batch = Vec::new();
    for i in 0..2000 {
        batch.extend(encode(&[
            b"SET",
            format!("t{i}").as_bytes(),
            b"v",
            b"PX",
            b"100",
        ]));
    }
    batch.extend(encode(&[b"SET", b"forever", b"v"]));
    c.send(&batch);
    for _ in 0..2001 {
        c.reply();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // DBSIZE counts keys without looking them up, so it only falls if the cycle reclaimed them.
        if c.cmd_str("DBSIZE") == b":1\r\n" {
            break;
        }
        assert!(Instant::now() < deadline, "expired keys were not reclaimed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let info = show(&c.cmd_str("INFO stats"));
    assert!(info.contains("expired_keys:2000"), "{info}");
}

#[test]
fn lazy_expiry_on_access() {
    let g = goblin(&["--hz", "1"]);
    let mut c = g.raw();
    c.cmd_str("SET a 1 PX 30");
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(c.cmd_str("GET a"), b"$-1\r\n");
    assert_eq!(c.cmd_str("TTL a"), b":-2\r\n");
    assert_eq!(c.cmd_str("EXISTS a"), b":0\r\n");
}

/// Parses a SCAN reply into (cursor, keys).
fn scan_page(c: &mut Raw, cursor: &str) -> (String, Vec<String>) {
    let r = c.cmd_str(&format!("SCAN {cursor} COUNT 50"));
    let text = String::from_utf8(r).unwrap();
    let lines: Vec<&str> = text.split("\r\n").collect();
    let next = lines[2].to_string();
    let keys = lines[4..]
        .iter()
        .skip(1)
        .step_by(2)
        .filter(|s| !s.is_empty())
        .map(|s| s.to_string())
        .collect();
    (next, keys)
}

#[test]
fn scan_returns_every_key_present_throughout_despite_growth_and_deletion() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let mut batch = Vec::new();
    for i in 0..3000 {
        batch.extend(encode(&[b"SET", format!("stable{i}").as_bytes(), b"1"]));
    }
    c.send(&batch);
    for _ in 0..3000 {
        c.reply();
    }
    let mut seen = std::collections::HashSet::new();
    let mut cursor = "0".to_string();
    let mut round = 0;
    loop {
        let (next, keys) = scan_page(&mut c, &cursor);
        seen.extend(keys);
        // Between pages, grow the table a lot and delete other keys, forcing rehashes.
        let mut churn = Vec::new();
        for i in 0..500 {
            churn.extend(encode(&[
                b"SET",
                format!("churn{round}-{i}").as_bytes(),
                b"1",
            ]));
        }
        if round > 0 {
            for i in 0..500 {
                churn.extend(encode(&[
                    b"DEL",
                    format!("churn{}-{i}", round - 1).as_bytes(),
                ]));
            }
        }
        let n = if round > 0 { 1000 } else { 500 };
        c.send(&churn);
        for _ in 0..n {
            c.reply();
        }
        round += 1;
        cursor = next;
        if cursor == "0" {
            break;
        }
        assert!(round < 10_000, "scan did not terminate");
    }
    for i in 0..3000 {
        assert!(
            seen.contains(&format!("stable{i}")),
            "SCAN missed stable{i}"
        );
    }
}

#[test]
fn client_list_kill_and_info() {
    let g = goblin(&[]);
    let mut a = g.raw();
    let mut b = g.raw();
    a.cmd_str("CLIENT SETNAME alpha");
    b.cmd_str("CLIENT SETNAME beta");
    let list = String::from_utf8(a.cmd_str("CLIENT LIST")).unwrap();
    assert!(
        list.contains("name=alpha") && list.contains("name=beta"),
        "{list}"
    );
    assert!(list.contains(" cmd=client|list "), "{list}");
    let info = String::from_utf8(b.cmd_str("CLIENT INFO")).unwrap();
    let id: String = info
        .split("id=")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    assert!(info.contains("name=beta"));
    assert_eq!(a.cmd_str(&format!("CLIENT KILL ID {id}")), b":1\r\n");
    assert!(b.is_closed());
    assert_eq!(
        a.cmd_str("CLIENT KILL SKIPME no ID 0"),
        b"-ERR client-id should be greater than 0\r\n"
    );
    let my_id = String::from_utf8(a.cmd_str("CLIENT ID")).unwrap();
    assert!(my_id.starts_with(':'));
}

#[test]
fn idle_clients_are_closed_after_timeout() {
    let g = goblin(&["--timeout", "1"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(c.is_closed());
}

#[test]
fn shutdown_command_and_signals_exit_cleanly() {
    let mut g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(5)), Some(true));

    let mut g = goblin(&[]);
    // SAFETY: sending SIGTERM to our own child process.
    unsafe { libc::kill(g.pid() as i32, libc::SIGTERM) };
    assert_eq!(g.wait_exit(Duration::from_secs(5)), Some(true));

    // A save that fails (here the target name is a directory) keeps the server running.
    let g = goblin(&[]);
    std::fs::create_dir(g.dir.join("dump.rdb")).unwrap();
    let mut c = g.raw();
    assert_eq!(
        c.cmd_str("SHUTDOWN SAVE"),
        b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn info_has_the_fields_libraries_read() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.cmd_str("EXPIRE a 100");
    c.cmd_str("GET a");
    c.cmd_str("GET nope");
    c.cmd_str("SET s text");
    c.cmd_str("INCR s");
    let info = String::from_utf8(c.cmd_str("INFO")).unwrap();
    for field in [
        "redis_version:7.0.15",
        "arch_bits:64",
        "cluster_enabled:0",
        "loading:0",
        "role:master",
        "connected_clients:1",
        "db0:keys=2,expires=1,avg_ttl=0",
        "keyspace_hits:1",
        "keyspace_misses:1",
        "errorstat_ERR:count=1",
        "redis_mode:standalone",
        "maxmemory_policy:noeviction",
    ] {
        assert!(info.contains(field), "missing {field} in\n{info}");
    }
    let all = String::from_utf8(c.cmd_str("INFO commandstats")).unwrap();
    assert!(all.contains("cmdstat_get:calls=2,"), "{all}");
    assert!(
        all.contains("cmdstat_incr:calls=1,") && all.contains("failed_calls=1"),
        "{all}"
    );
    assert!(all.contains("cmdstat_info:calls=1,"), "{all}");
    assert_eq!(c.cmd_str("CONFIG RESETSTAT"), b"+OK\r\n");
    let stats = String::from_utf8(c.cmd_str("INFO stats")).unwrap();
    assert!(stats.contains("keyspace_hits:0"), "{stats}");
}

#[test]
fn command_table_introspection() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let count = String::from_utf8(c.cmd_str("COMMAND COUNT")).unwrap();
    let n: usize = count.trim_start_matches(':').trim().parse().unwrap();
    assert!(n > 60, "{n}");
    let info = show(&c.cmd_str("COMMAND INFO get"));
    assert!(info.starts_with("*1\\r\\n*10\\r\\n$3\\r\\nget\\r\\n:2\\r\\n*2\\r\\n+readonly\\r\\n+fast\\r\\n:1\\r\\n:1\\r\\n:1\\r\\n"), "{info}");
    let docs = show(&c.cmd_str("COMMAND DOCS set"));
    assert!(docs.contains("$7\\r\\nsummary\\r\\n"), "{docs}");
    assert!(
        docs.contains("$5\\r\\ntoken\\r\\n$2\\r\\nNX\\r\\n"),
        "{docs}"
    );
    let list = show(&c.cmd_str("COMMAND LIST FILTERBY PATTERN config*"));
    assert!(list.contains("config|get"), "{list}");
    assert_eq!(c.cmd_str("COMMAND INFO nosuch"), b"*1\r\n$-1\r\n");
}

#[test]
fn redis_crate_round_trips() {
    let g = goblin(&[]);
    let mut con = g.client();
    let _: () = con.set("name", "goblin").unwrap();
    let v: String = con.get("name").unwrap();
    assert_eq!(v, "goblin");
    let n: i64 = con.incr("counter", 5).unwrap();
    assert_eq!(n, 5);
    let f: f64 = redis::cmd("INCRBYFLOAT")
        .arg("float")
        .arg(2.5)
        .query(&mut con)
        .unwrap();
    assert_eq!(f, 2.5);
    let _: () = con.set_ex("ttl", "x", 100).unwrap();
    let ttl: i64 = con.ttl("ttl").unwrap();
    assert_eq!(ttl, 100);
    let vals: Vec<Option<String>> = con.mget(&["name", "missing"]).unwrap();
    assert_eq!(vals, vec![Some("goblin".to_string()), None]);
    let err = con.incr::<_, _, i64>("name", 1).unwrap_err();
    assert_eq!(
        err.detail(),
        Some("value is not an integer or out of range")
    );
    let mut pipe = redis::pipe();
    for i in 0..1000 {
        pipe.set(format!("p{i}"), i).ignore();
    }
    pipe.cmd("DBSIZE");
    let (size,): (i64,) = pipe.query(&mut con).unwrap();
    assert_eq!(size, 1004);
    let keys: Vec<String> = con.scan_match("p99*").unwrap().collect();
    assert_eq!(keys.len(), 11);
    let exists: bool = con.exists("p1").unwrap();
    assert!(exists);
}

fn redis_cli(port: u16, args: &[&str], stdin: Option<&[u8]>) -> String {
    let mut child = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("redis-cli installed");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn redis_cli_talks_to_goblin() {
    let g = goblin(&[]);
    assert_eq!(redis_cli(g.port, &["PING"], None), "PONG\n");
    assert_eq!(
        redis_cli(g.port, &["SET", "greeting", "hello world"], None),
        "OK\n"
    );
    assert_eq!(
        redis_cli(g.port, &["GET", "greeting"], None),
        "hello world\n"
    );
    let info = redis_cli(g.port, &["INFO", "server"], None);
    assert!(info.contains("redis_version:7.0.15"), "{info}");
    let docs = redis_cli(g.port, &["COMMAND", "DOCS", "get"], None);
    assert!(docs.contains("Get the value of a key"), "{docs}");
    let mut mass = Vec::new();
    for i in 0..10_000 {
        mass.extend(encode(&[
            b"SET",
            format!("mass{i}").as_bytes(),
            format!("{i}").as_bytes(),
        ]));
    }
    let piped = redis_cli(g.port, &["--pipe"], Some(&mass));
    assert!(piped.contains("errors: 0, replies: 10000"), "{piped}");
    assert_eq!(redis_cli(g.port, &["DBSIZE"], None), "10001\n");
    assert_eq!(redis_cli(g.port, &["GET", "mass9999"], None), "9999\n");
}

fn start_with_config(conf: &str) -> (bool, String) {
    let dir = scratch_dir("conf");
    let path = dir.join("test.conf");
    std::fs::write(&path, conf).unwrap();
    let out = Command::new(goblin_bin())
        .arg(&path)
        .args([
            "--port",
            "0",
            "--unixsocket",
            dir.join("s.sock").to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = out.id();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = out.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_config_lines_are_named() {
    for (conf, line, text, msg) in [
        (
            "port 6379\nnosuch directive\n",
            2,
            "nosuch directive",
            "Bad directive or wrong number of arguments",
        ),
        (
            "# comment\n\nprotected-mode maybe\n",
            3,
            "protected-mode maybe",
            "argument must be 'yes' or 'no'",
        ),
        (
            "hz abc\n",
            1,
            "hz abc",
            "argument couldn't be parsed into an integer",
        ),
        (
            "maxmemory-policy lots\n",
            1,
            "maxmemory-policy lots",
            "argument(s) must be one of the following",
        ),
        (
            "aof-timestamp-enabled yes\n",
            1,
            "aof-timestamp-enabled yes",
            "not supported by Goblin Core",
        ),
        (
            "databases 0\n",
            1,
            "databases 0",
            "argument must be between 1 and",
        ),
        (
            "requirepass \"unclosed\n",
            1,
            "requirepass \"unclosed",
            "Unbalanced quotes",
        ),
        (
            "proto-max-bulk-len 1zb\n",
            1,
            "proto-max-bulk-len 1zb",
            "argument must be a memory value",
        ),
    ] {
        let (ok, err) = start_with_config(conf);
        assert!(!ok, "{conf} was accepted");
        assert!(
            err.contains("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"),
            "{err}"
        );
        assert!(
            err.contains(&format!("at line {line}\n>>> '{text}'\n")),
            "{conf}: {err}"
        );
        assert!(err.contains(msg), "{conf}: {err}");
    }
}

#[test]
fn config_file_include_rewrite_and_overrides() {
    let dir = scratch_dir("rewrite");
    let inc = dir.join("inc.conf");
    std::fs::write(&inc, "maxmemory-policy allkeys-lru\n").unwrap();
    let main = dir.join("main.conf");
    std::fs::write(
        &main,
        format!(
            "# my settings\nhz 20\ninclude {}\nsave \"\"\nappendonly no\ndatabases 4\n",
            inc.display()
        ),
    )
    .unwrap();
    // CONFIG SET dir below needs the protected configs allowed.
    let g = goblin(&[
        main.to_str().unwrap(),
        "--timeout",
        "7",
        "--enable-protected-configs",
        "yes",
    ]);
    let mut c = g.raw();
    assert_eq!(
        c.cmd_str("CONFIG GET hz"),
        b"*2\r\n$2\r\nhz\r\n$2\r\n20\r\n"
    );
    assert_eq!(
        c.cmd_str("CONFIG GET timeout"),
        b"*2\r\n$7\r\ntimeout\r\n$1\r\n7\r\n"
    );
    assert_eq!(
        c.cmd_str("CONFIG GET maxmemory-policy"),
        b"*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n"
    );
    assert_eq!(c.cmd_str("SELECT 4"), b"-ERR DB index is out of range\r\n");
    assert_eq!(c.cmd_str("CONFIG SET hz 33 maxclients 50"), b"+OK\r\n");
    let workdir = dir.canonicalize().unwrap();
    let set_dir = format!("CONFIG SET dir {}", workdir.display());
    assert_eq!(c.cmd_str(&set_dir), b"+OK\r\n");
    assert_eq!(c.cmd_str("CONFIG REWRITE"), b"+OK\r\n");
    let text = std::fs::read_to_string(&main).unwrap();
    assert!(
        text.contains(&format!("\ndir {}\n", workdir.display())),
        "{text}"
    );
    assert!(text.starts_with("# my settings\nhz 33\n"), "{text}");
    assert!(text.contains("maxclients 50"), "{text}");
    assert!(text.contains("timeout 7"), "{text}");
    // The rewritten file starts a server with the same settings.
    let (ok, err) = start_with_config(&text);
    assert!(ok, "{err}");
    let plain = goblin(&[]);
    assert_eq!(
        plain.raw().cmd_str("CONFIG REWRITE"),
        b"-ERR The server is running without a config file\r\n"
    );
}

#[test]
fn config_set_is_all_or_nothing() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let r = c.cmd_str("CONFIG SET hz 50 maxclients nope");
    assert!(
        r.starts_with(b"-ERR CONFIG SET failed (possibly related to argument 'maxclients')"),
        "{}",
        show(&r)
    );
    assert_eq!(
        c.cmd_str("CONFIG GET hz"),
        b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"
    );
    // A value a directive's check refuses (a feature not built) undoes the others too.
    assert!(c
        .cmd_str("CONFIG SET hz 50 aof-timestamp-enabled yes")
        .starts_with(
            b"-ERR CONFIG SET failed (possibly related to argument 'aof-timestamp-enabled') - aof-timestamp-enabled yes"
        ));
    assert_eq!(
        c.cmd_str("CONFIG GET hz"),
        b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"
    );
    assert!(c.cmd_str("CONFIG GET *").len() > 500);
}

/// CONFIG SET port moves the listener (connected clients stay); a port already taken is refused
/// with Redis's words, and the server keeps listening where it was. `dir` shows the working directory.
#[test]
fn config_set_port_and_bind_move_the_listener() {
    let g = goblin(&[]);
    let r = common::redis(&[]);
    let mut c = g.raw();
    let moved = common::free_port();
    assert_eq!(c.cmd_str(&format!("CONFIG SET port {moved}")), b"+OK\r\n");
    assert_eq!(Raw::connect(moved).cmd_str("PING"), b"+PONG\r\n");
    assert!(std::net::TcpStream::connect(("127.0.0.1", g.port)).is_err());
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    let info = String::from_utf8(c.cmd_str("INFO server")).unwrap();
    assert!(info.contains(&format!("tcp_port:{moved}\r\n")), "{info}");
    // A port another socket holds: Redis's error on both servers, and nothing moves.
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let busy = format!("CONFIG SET port {}", taken.local_addr().unwrap().port());
    let want = r.raw().cmd_str(&busy);
    assert_eq!(
        show(&want),
        show(b"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n")
    );
    assert_eq!(show(&c.cmd_str(&busy)), show(&want));
    assert_eq!(
        c.cmd_str("CONFIG GET port"),
        format!("*2\r\n$4\r\nport\r\n$5\r\n{moved}\r\n").into_bytes()
    );
    assert_eq!(Raw::connect(moved).cmd_str("PING"), b"+PONG\r\n");
    // bind: only the loopback address, then an address this host doesn't have.
    assert_eq!(c.cmd_str("CONFIG SET bind 127.0.0.1"), b"+OK\r\n");
    assert_eq!(Raw::connect(moved).cmd_str("PING"), b"+PONG\r\n");
    assert_eq!(
        show(&c.cmd_str("CONFIG SET bind 192.0.2.1")),
        show(b"-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n")
    );
    assert_eq!(Raw::connect(moved).cmd_str("PING"), b"+PONG\r\n");
    assert_eq!(
        c.cmd_str("CONFIG GET bind"),
        b"*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n"
    );
    let dir = c.cmd_str("CONFIG GET dir");
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", g.pid())).unwrap();
    let cwd = cwd.display().to_string();
    assert_eq!(
        show(&dir),
        show(format!("*2\r\n$3\r\ndir\r\n${}\r\n{cwd}\r\n", cwd.len()).as_bytes())
    );
}

#[test]
fn client_no_touch_keeps_idle_time() {
    let g = goblin(&["--enable-debug-command", "yes"]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.cmd_str("DEBUG SLEEP 1.1");
    c.cmd_str("CLIENT NO-TOUCH on");
    c.cmd_str("GET a");
    let idle = c.cmd_str("OBJECT IDLETIME a");
    assert!(idle == b":1\r\n" || idle == b":2\r\n", "{}", show(&idle));
    c.cmd_str("CLIENT NO-TOUCH off");
    c.cmd_str("GET a");
    assert_eq!(c.cmd_str("OBJECT IDLETIME a"), b":0\r\n");
    let obj = show(&c.cmd_str("DEBUG OBJECT a"));
    assert!(obj.contains("encoding:int"), "{obj}");
}

/// `redis.conf.example` documents every directive of the config table, and the server starts from it
/// with each one answering CONFIG GET.
#[test]
fn example_config_documents_and_loads_every_directive() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/redis.conf.example");
    let text = std::fs::read_to_string(path).unwrap();
    let documented = |name: &str| {
        text.lines().any(|l| {
            let l = l.trim_start_matches('#').trim_start();
            l.split_whitespace().next() == Some(name)
        })
    };
    let missing: Vec<&str> = goblin_core::config::DIRECTIVES
        .iter()
        .map(|d| d.name)
        .filter(|n| !documented(n))
        .collect();
    assert!(missing.is_empty(), "not in redis.conf.example: {missing:?}");
    let g = goblin(&[path]);
    let mut c = g.raw();
    for d in goblin_core::config::DIRECTIVES {
        let reply = c.cmd(&[b"CONFIG", b"GET", d.name.as_bytes()]);
        assert!(
            reply.starts_with(b"*2\r\n"),
            "CONFIG GET {}: {}",
            d.name,
            show(&reply)
        );
        assert!(
            show(&reply).contains(d.name),
            "CONFIG GET {}: {}",
            d.name,
            show(&reply)
        );
    }
}

/// The redis.conf Debian's redis-server installs starts Goblin Core (with the command line
/// overriding what a service manager would: foreground, port, files in a scratch directory), and
/// every directive it sets answers CONFIG GET with the file's value.
#[test]
fn debian_redis_conf_starts_the_server() {
    let conf = "/etc/redis/redis.conf";
    let text = std::fs::read_to_string(conf)
        .expect("Debian's redis-server installs /etc/redis/redis.conf");
    let dir = scratch_dir("debian-conf");
    let d = dir.to_str().unwrap().to_string();
    let pid = format!("{d}/redis.pid");
    let g = goblin(&[
        conf,
        "--daemonize",
        "no",
        "--pidfile",
        &pid,
        "--logfile",
        "",
        "--dir",
        &d,
    ]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        let Some(name) = words.next().filter(|n| !n.starts_with('#')) else {
            continue;
        };
        if matches!(
            name,
            "daemonize" | "pidfile" | "logfile" | "dir" | "port" | "save"
        ) {
            continue;
        }
        // CONFIG GET shows memory amounts in bytes, as Redis does.
        let bytes = |w: &str| -> String {
            let lower = w.to_ascii_lowercase();
            for (unit, n) in [("gb", 1u64 << 30), ("mb", 1 << 20), ("kb", 1 << 10)] {
                if let Some(v) = lower.strip_suffix(unit).and_then(|v| v.parse::<u64>().ok()) {
                    return (v * n).to_string();
                }
            }
            w.to_string()
        };
        let want: Vec<String> = words.map(|w| bytes(w.trim_matches('"'))).collect();
        let got =
            String::from_utf8_lossy(&c.cmd(&[b"CONFIG", b"GET", name.as_bytes()])).into_owned();
        let value = got.split("\r\n").nth(4).unwrap_or("").to_string();
        let got_words: Vec<&str> = value.split_whitespace().collect();
        // Redis, and we, show the replica class of client-output-buffer-limit as `slave`.
        let want_words: Vec<&str> = want
            .iter()
            .flat_map(|w| w.split_whitespace())
            .map(|w| if w == "replica" { "slave" } else { w })
            .collect();
        // A directive given on several lines (client-output-buffer-limit) shows them all.
        assert!(
            want_words.is_empty()
                || got_words
                    .windows(want_words.len())
                    .any(|w| w == want_words.as_slice()),
            "{line}: CONFIG GET shows {value:?}"
        );
    }
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The last line that sets a directive decides: the command line may override a file's value this
/// build refuses, and the refusal names the line that set it last.
#[test]
fn unsupported_values_are_judged_after_every_line() {
    let (ok, err) = start_with_config("aof-timestamp-enabled yes\n");
    assert!(!ok);
    assert!(err.contains(">>> 'aof-timestamp-enabled yes'"), "{err}");
    let (ok, err) = start_with_config("aof-timestamp-enabled yes\naof-timestamp-enabled no\n");
    assert!(ok, "{err}");
    let (ok, err) =
        start_with_config("aof-timestamp-enabled no\naof-timestamp-enabled yes\nport 0\n");
    assert!(!ok);
    assert!(
        err.contains("at line 2") && err.contains(">>> 'aof-timestamp-enabled yes'"),
        "{err}"
    );
}

/// `daemonize yes`: the command returns at once (exit 0), the server runs in the background with
/// its pid in the pid file, and removes the file when it shuts down.
#[test]
fn daemonize_forks_and_writes_the_pid_file() {
    let dir = scratch_dir("daemon");
    let port = common::free_port();
    let pidfile = dir.join("goblin.pid");
    let status = Command::new(goblin_bin())
        .args(["--daemonize", "yes", "--port", &port.to_string()])
        .args(["--pidfile", pidfile.to_str().unwrap()])
        .args(["--logfile", dir.join("log").to_str().unwrap()])
        .args(["--dir", dir.to_str().unwrap(), "--save", ""])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        if let Ok(s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            drop(s);
            break Raw::connect(port);
        }
        assert!(Instant::now() < deadline, "the daemon did not come up");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let info = String::from_utf8_lossy(&c.cmd_str("INFO server")).into_owned();
    assert!(
        info.contains(&format!("process_id:{}\r\n", pid.trim())),
        "{pid} {info}"
    );
    c.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while pidfile.exists() {
        assert!(Instant::now() < deadline, "the pid file stayed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `supervised systemd`: status, READY=1 once it accepts connections and STOPPING=1 at shutdown
/// reach NOTIFY_SOCKET, and the server stays in the foreground even with `daemonize yes`.
#[test]
fn systemd_supervision_notifies() {
    let dir = scratch_dir("systemd");
    let socket = dir.join("notify.sock");
    let notify = std::os::unix::net::UnixDatagram::bind(&socket).unwrap();
    notify
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let port = common::free_port();
    let mut child = Command::new(goblin_bin())
        .args(["--supervised", "systemd", "--daemonize", "yes"])
        .args(["--port", &port.to_string(), "--save", ""])
        .args(["--logfile", dir.join("log").to_str().unwrap()])
        .env("NOTIFY_SOCKET", &socket)
        .spawn()
        .unwrap();
    let read = || {
        let mut buf = [0u8; 256];
        let n = notify.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    assert_eq!(read(), "STATUS=Goblin Core is loading...\n");
    assert_eq!(read(), "STATUS=Ready to accept connections\n");
    assert_eq!(read(), "READY=1\n");
    assert!(
        child.try_wait().unwrap().is_none(),
        "it stays in the foreground"
    );
    let mut c = Raw::connect(port);
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    c.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
    assert_eq!(read(), "STOPPING=1\n");
    assert!(child.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Directives for features this server does not have (of Redis's default redis.conf, and the
/// rest CONFIG GET answers: cluster, TLS, replication, test hooks): their values, ranges, errors
/// and aliases as Redis's.
#[test]
fn compatibility_directives_match_redis() {
    let mut lines = Vec::new();
    for (name, value) in [
        ("acllog-max-len", "256"),
        ("activerehashing", "no"),
        ("dynamic-hz", "no"),
        ("jemalloc-bg-thread", "no"),
        ("oom-score-adj-values", "\"0 100 900\""),
        ("proc-title-template", "\"{title} {port}\""),
        ("rdb-del-sync-files", "yes"),
        ("rdb-save-incremental-fsync", "no"),
        ("repl-disable-tcp-nodelay", "yes"),
        ("repl-diskless-load", "swapdb"),
        ("repl-diskless-sync", "no"),
        ("repl-diskless-sync-delay", "7"),
        ("repl-diskless-sync-max-replicas", "2"),
        ("replica-lazy-flush", "yes"),
        ("replica-priority", "50"),
        ("slave-read-only", "no"),
        ("replica-serve-stale-data", "no"),
        ("stream-node-max-bytes", "1kb"),
        ("stream-node-max-entries", "50"),
        // Redis 7.0.15's directives for modes this server is never in, and its test hooks.
        ("key-load-delay", "-5"),
        ("rdb-key-save-delay", "100"),
        ("watchdog-period", "-1"),
        ("watchdog-period", "200"),
        ("loading-process-events-interval-bytes", "10"),
        ("loading-process-events-interval-bytes", "4096"),
        ("use-exit-on-panic", "yes"),
        ("active-defrag-cycle-max", "100"),
        ("active-defrag-cycle-min", "5"),
        ("active-defrag-ignore-bytes", "1mb"),
        ("active-defrag-max-scan-fields", "0"),
        ("active-defrag-threshold-lower", "20"),
        ("active-defrag-threshold-upper", "1001"),
        ("bind-source-addr", "10.0.0.1"),
        ("cluster-allow-pubsubshard-when-down", "no"),
        ("cluster-allow-reads-when-down", "yes"),
        ("cluster-allow-replica-migration", "maybe"),
        ("cluster-announce-bus-port", "7000"),
        ("cluster-announce-hostname", "a.b-c"),
        ("cluster-announce-ip", "10.0.0.2"),
        ("cluster-announce-port", "65536"),
        ("cluster-announce-tls-port", "7001"),
        ("cluster-config-file", "x.conf"),
        ("cluster-link-sendbuf-limit", "1gb"),
        ("cluster-migration-barrier", "2"),
        ("cluster-node-timeout", "1kb"),
        ("cluster-node-timeout", "5000"),
        ("cluster-port", "5"),
        ("cluster-preferred-endpoint-type", "hostname"),
        ("cluster-slave-no-failover", "yes"),
        ("cluster-slave-validity-factor", "3"),
        ("cluster-require-full-coverage", "no"),
        ("cluster-enabled", "yes"),
        ("crash-log-enabled", "no"),
        ("crash-memcheck-enabled", "no"),
        ("ignore-warnings", "ARM64-COW-BUG"),
        ("io-threads-do-reads", "yes"),
        ("masterauth", "secret"),
        ("masteruser", "someone"),
        ("min-slaves-max-lag", "3"),
        ("repl-backlog-size", "0"),
        ("repl-backlog-size", "2mb"),
        ("repl-backlog-ttl", "60"),
        ("repl-ping-slave-period", "0"),
        ("repl-ping-replica-period", "5"),
        ("repl-timeout", "30"),
        ("slave-announce-ip", "10.0.0.3"),
        ("slave-announce-port", "6000"),
        ("replica-announced", "no"),
        ("replica-ignore-disk-write-errors", "yes"),
        ("slave-ignore-maxmemory", "no"),
        ("sanitize-dump-payload", "clients"),
        ("shutdown-timeout", "3"),
        ("syslog-facility", "local1"),
        ("syslog-ident", "x"),
        ("syslog-enabled", "yes"),
        ("socket-mark-id", "1"),
        ("bio_cpulist", "0"),
        ("tls-auth-clients", "optional"),
        ("tls-ca-cert-dir", "/tmp"),
        ("tls-ca-cert-file", "ca.crt"),
        ("tls-cert-file", "a.crt"),
        ("tls-ciphers", "DEFAULT"),
        ("tls-ciphersuites", "TLS_AES_256_GCM_SHA384"),
        ("tls-client-cert-file", "c.crt"),
        ("tls-client-key-file", "c.key"),
        ("tls-client-key-file-pass", "pw"),
        ("tls-dh-params-file", "dh.pem"),
        ("tls-key-file", "a.key"),
        ("tls-key-file-pass", "pw"),
        ("tls-protocols", "TLSv1.3"),
        ("tls-prefer-server-ciphers", "yes"),
        ("tls-session-cache-size", "-1"),
        ("tls-session-cache-timeout", "60"),
        ("tls-session-caching", "no"),
    ] {
        lines.push(format!("CONFIG GET {name}"));
        lines.push(format!("CONFIG SET {name} {value}"));
        lines.push(format!("CONFIG GET {name}"));
    }
    for bad in [
        "oom-score-adj maybe",
        "oom-score-adj-values \"1 2\"",
        "oom-score-adj-values \"0 200 3000\"",
        "proc-title-template \"{title}\"",
        "proc-title-template \"{nosuch}\"",
        "repl-diskless-load sometimes",
        "replica-priority -1",
        "acllog-max-len -1",
        "disable-thp no",
        "set-proc-title no",
    ] {
        lines.push(format!("CONFIG SET {bad}"));
    }
    lines.push("CONFIG GET disable-thp".into());
    lines.push("CONFIG GET set-proc-title".into());
    lines.push("CONFIG GET oom-score-adj".into());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::compare(&[&refs]);
}

/// CONFIG GET * answers every directive Redis 7.0.15 answers, with Redis's default values (those
/// of a server started the same way); ours has the engines' memory limits besides.
#[test]
fn config_get_answers_every_redis_directive() {
    let pairs = |c: &mut Raw| -> std::collections::BTreeMap<String, String> {
        let reply = String::from_utf8(c.cmd_str("CONFIG GET *")).unwrap();
        let bulks: Vec<String> = reply
            .split("\r\n")
            .skip(1)
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
        bulks
            .chunks(2)
            .filter(|p| p.len() == 2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect()
    };
    let r = common::redis(&[]);
    let g = goblin(&[]);
    let want = pairs(&mut r.raw());
    let got = pairs(&mut g.raw());
    // Where each server was started, and what the client-side caching work brings.
    let per_instance = ["bind", "daemonize", "dir", "pidfile", "port", "logfile"];
    let later = ["tracking-table-max-keys"];
    let mut failures = Vec::new();
    for (name, value) in &want {
        if per_instance.contains(&name.as_str()) || later.contains(&name.as_str()) {
            continue;
        }
        match got.get(name) {
            Some(v) if v == value => {}
            other => failures.push(format!("{name}: redis {value:?}, goblin {other:?}")),
        }
    }
    let ours: Vec<&String> = got.keys().filter(|n| !want.contains_key(*n)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        ours.iter().all(|n| n.ends_with("-memory-limit")),
        "directives Redis does not have: {ours:?}"
    );
}

/// The hidden directives (by exact name only), names answered as asked, replicaof, and the
/// special syntaxes and refusals Redis 7.0.15 shares with us.
#[test]
fn config_hidden_and_special_directives_match_redis() {
    let lines = [
        "CONFIG GET key-load-delay",
        "CONFIG GET rdb-key-save-delay",
        "CONFIG GET watchdog-period",
        "CONFIG GET loading-process-events-interval-bytes",
        "CONFIG GET use-exit-on-panic",
        "CONFIG GET key-load-*",
        "CONFIG GET *-delay",
        "CONFIG GET MAXMEMORY",
        "CONFIG GET Slave-Lazy-Flush",
        "~CONFIG GET replicaof slaveof",
        "~CONFIG GET maxmemory* maxmemory",
        "CONFIG SET replicaof \"no one\"",
        "CONFIG SET activedefrag yes",
        "CONFIG SET activedefrag no",
        "CONFIG SET maxmemory-clients abc",
        "CONFIG SET maxmemory-clients 101%",
        "CONFIG SET maxmemory-clients 0",
        "CONFIG SET shutdown-on-sigint \"save nosave\"",
        "CONFIG SET shutdown-on-sigint bogus",
        "CONFIG SET shutdown-on-sigint \"\"",
        "CONFIG SET shutdown-on-sigterm \"NOW force\"",
        "CONFIG GET shutdown-on-sigterm",
        "CONFIG SET shutdown-on-sigint \"default now\"",
        "CONFIG GET shutdown-on-sigint",
        "CONFIG SET shutdown-on-sigint save",
        "CONFIG GET shutdown-on-sigint",
        "CONFIG SET cluster-announce-hostname a_b",
        "CONFIG SET min-replicas-to-write 0",
        "CONFIG SET propagation-error-behavior bogus",
        "CONFIG SET tls-port 70000",
        "CONFIG SET tls-port 0",
    ];
    common::compare(&[&lines]);
}

/// Values Redis accepts that ask for what this server does not have are refused with a message
/// saying so.
#[test]
fn config_refuses_features_not_built() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (name, value) in [
        ("tls-port", "6380"),
        ("tls-replication", "yes"),
        ("tls-cluster", "yes"),
        ("aof-disable-auto-gc", "yes"),
        ("maxmemory-clients", "10%"),
        ("propagation-error-behavior", "panic"),
    ] {
        let reply = show(&c.cmd(&[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()]));
        assert!(
            reply.starts_with(&format!(
                "-ERR CONFIG SET failed (possibly related to argument '{name}') - "
            )) && reply.contains("Goblin Core"),
            "{name} {value}: {reply}"
        );
    }
    for conf in [
        "cluster-enabled yes\n",
        "syslog-enabled yes\n",
        "server_cpulist 0-3\n",
        "socket-mark-id 7\n",
    ] {
        let (ok, err) = start_with_config(conf);
        assert!(!ok && err.contains("Goblin Core"), "{conf}: {err}");
    }
    assert!(start_with_config("replicaof no one\n").0);
}

/// `shutdown-on-sigterm save` saves on SIGTERM without save points, `nosave` does not save with
/// them.
#[test]
fn shutdown_on_signal_flags() {
    for (flags, save, saved) in [("save", "", true), ("nosave", "3600 1", false)] {
        let dir = scratch_dir("sigflags");
        let d = dir.to_str().unwrap();
        let mut g = goblin(&["--dir", d, "--save", save, "--shutdown-on-sigterm", flags]);
        let mut c = g.raw();
        assert_eq!(c.cmd_str("SET k v"), b"+OK\r\n");
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(g.pid() as i32, libc::SIGTERM) };
        assert!(g.wait_exit(Duration::from_secs(10)).is_some());
        assert_eq!(dir.join("dump.rdb").exists(), saved, "{flags}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// FLUSHALL and FLUSHDB count the keys they delete as changes, and nothing more; with save points,
/// FLUSHALL saves at once, so no change is pending after it.
#[test]
fn flushes_count_their_changes_as_redis() {
    common::compare(&[
        &[
            "?rdb_changes_since_last_save",
            "FLUSHALL",
            "?rdb_changes_since_last_save",
            "MSET a 1 b 2",
            "FLUSHDB",
            "?rdb_changes_since_last_save",
            "FLUSHALL",
            "?rdb_changes_since_last_save",
        ],
        &[
            "CONFIG SET save \"3600 1\"",
            "SET a 1",
            "FLUSHALL",
            "?rdb_changes_since_last_save",
        ],
    ]);
}

/// LOLWUT byte for byte as Redis 7.0.15 wherever the drawing takes no random numbers: the version
/// line, Schotter with at most two rows of squares (only lower rows are disturbed at random), the
/// argument errors; in RESP2 and RESP3 (verbatim text).
#[test]
fn lolwut_matches_redis() {
    common::compare_both(&[&[
        "LOLWUT",
        "LOLWUT VERSION 7",
        "LOLWUT VERSION 4",
        "LOLWUT VERSION -1",
        "LOLWUT VERSION",
        "LOLWUT 5",
        "LOLWUT VERSION x",
        "LOLWUT VERSION 5 x",
        "LOLWUT VERSION 6 10 x",
        "LOLWUT VERSION 5 66 8 2",
        "LOLWUT VERSION 5 66 8 2 extra",
        "LOLWUT VERSION 5 10 3 1",
        "LOLWUT VERSION 5 1 1 1",
        "LOLWUT VERSION 5 -5 0 -1",
        "LOLWUT VERSION 5 40 7 2",
        "LOLWUT VERSION 5 2000 500 2",
        "LOLWUT VERSION 6 1 1",
        "LOLWUT VERSION 6 0 0",
    ]]);
    common::command_info_and_docs_match_redis(&["lolwut"], &["lolwut"]);
}

/// The drawings Redis makes with random numbers (Schotter's lower rows, the skyline): the same
/// shape as Redis's (lines, characters per line, pixels per line) and the same closing lines.
#[test]
fn lolwut_random_drawings_have_redis_shape() {
    let r = common::redis(&[]);
    let g = goblin(&[]);
    for args in [
        vec!["LOLWUT", "VERSION", "5"],
        vec!["LOLWUT", "VERSION", "5", "30", "5", "9"],
        vec!["LOLWUT", "VERSION", "6"],
        vec!["LOLWUT", "VERSION", "6", "120", "33"],
    ] {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let want = String::from_utf8(r.raw().cmd(&argv)).unwrap();
        let got = String::from_utf8(g.raw().cmd(&argv)).unwrap();
        let body = |s: &str| s.split_once("\r\n").unwrap().1.to_string();
        let (want, got) = (body(&want), body(&got));
        assert_eq!(want.len() > 100, got.len() > 100, "{args:?}");
        assert_eq!(want.lines().count(), got.lines().count(), "{args:?}");
        // Every pixel of the skyline is one escape sequence and a space; a braille line is one
        // character per two pixels.
        let pixels = |t: &str| -> Vec<usize> {
            t.lines()
                .map(|l| {
                    if l.contains('\u{1b}') {
                        l.matches("\u{1b}[0m").count()
                    } else {
                        l.chars().count()
                    }
                })
                .collect()
        };
        assert_eq!(pixels(&want), pixels(&got), "{args:?}");
        let tail = |t: &str| {
            t.lines()
                .rev()
                .take(2)
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(tail(&want), tail(&got), "{args:?}");
    }
}

/// CLIENT INFO and CLIENT LIST count the query buffer (`qbuf`: the whole buffer the running
/// command was read in, pipelined neighbours included; only the unparsed rest otherwise), the
/// arguments (`argv-mem`: the running command's, or a blocked client's), the MULTI queue
/// (`multi-mem`) and unsent output (`obl`, `oll`) as Redis 7.0.15 does for the same client state.
/// Not compared: what depends on the allocator or on the buffers' growth policy (`qbuf-free`,
/// `rbs`, `rbp`, `omem`, `tot-mem`), and the per-connection `id`, `addr`, `laddr`, `fd`; nor a
/// command received in part (Redis has moved its complete arguments to `argv-mem` already).
#[test]
fn client_info_counts_buffers_as_redis() {
    let fields = [
        "qbuf",
        "argv-mem",
        "multi-mem",
        "obl",
        "oll",
        "multi",
        "flags",
        "cmd",
    ];
    let pick = |reply: &[u8]| -> Vec<String> {
        let text = String::from_utf8_lossy(reply).into_owned();
        text.lines()
            .filter(|l| l.contains("id="))
            .map(|l| {
                l.split(' ')
                    .filter(|kv| fields.iter().any(|f| kv.starts_with(&format!("{f}="))))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let run = |s: &common::Server| -> Vec<Vec<String>> {
        let mut a = s.raw();
        let mut out = vec![pick(&a.cmd_str("CLIENT INFO"))];
        out.push(pick(&a.cmd_str("CLIENT INFO")));
        let mut pipeline = encode(&[b"PING"]);
        pipeline.extend(encode(&[b"SET", b"k", b"some value"]));
        pipeline.extend(encode(&[b"CLIENT", b"INFO"]));
        a.send(&pipeline);
        a.reply();
        a.reply();
        out.push(pick(&a.reply()));
        let mut m = s.raw();
        m.cmd_str("MULTI");
        m.cmd_str("SET a b");
        m.cmd_str("RPUSH list 1 2 3");
        let mut b = s.raw();
        b.send(&encode(&[b"BLPOP", b"nokey", b"0"]));
        std::thread::sleep(Duration::from_millis(100));
        out.push(pick(&a.cmd_str("CLIENT LIST")));
        out
    };
    let r = common::redis(&[]);
    let g = goblin(&[]);
    assert_eq!(run(&r), run(&g));
}

/// Which deletions Redis 7.0.15 frees on its lazy-free thread, seen in INFO's `lazyfreed_objects`:
/// UNLINK of a value above the free-effort threshold (a list of more than 64 quicklist nodes, a
/// hash table, set or skiplist of more than 64 elements) but not of a compact or small one; DEL
/// only with `lazyfree-lazy-user-del yes`; FLUSHALL and FLUSHDB with ASYNC, or without an option
/// under `lazyfree-lazy-user-flush yes` (every key counts); an expired key's value under
/// `lazyfree-lazy-expire yes`; CONFIG RESETSTAT starts again.
#[test]
fn lazy_freeing_counts_as_redis() {
    let members =
        |prefix: &str, n: usize| -> String { (0..n).map(|i| format!(" {prefix}{i}")).collect() };
    let scored = |n: usize| -> String { (0..n).map(|i| format!(" {i} m{i}")).collect() };
    let long = "x".repeat(8000);
    let nodes = |n: usize| -> String { (0..n).map(|_| format!(" {long}")).collect() };
    let lines = vec![
        "info:lazyfreed_objects".to_string(),
        format!("SADD bigset{}", members("member", 100)),
        format!("SADD smallset{}", members("member", 10)),
        format!("SADD intset{}", members("", 100)),
        format!("HSET bighash{}", scored(600)),
        format!("HSET packedhash{}", scored(100)),
        format!("ZADD bigzset{}", scored(200)),
        format!("ZADD packedzset{}", scored(100)),
        format!("RPUSH biglist{}", nodes(70)),
        format!("RPUSH shortlist{}", nodes(60)),
        format!("RPUSH manysmall{}", members("e", 3000)),
        "UNLINK smallset intset packedhash packedzset shortlist manysmall".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "UNLINK bigset bighash".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "DEL bigzset".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "CONFIG SET lazyfree-lazy-user-del yes".into(),
        "DEL biglist".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "MSET a 1 b 2 c 3".into(),
        "FLUSHDB SYNC".into(),
        "MSET a 1 b 2 c 3".into(),
        "FLUSHALL ASYNC".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "CONFIG SET lazyfree-lazy-user-flush yes".into(),
        "MSET a 1 b 2".into(),
        "FLUSHDB".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "info:lazyfree_pending_objects".into(),
        "CONFIG SET lazyfree-lazy-expire yes".into(),
        format!("SADD expiring{}", members("member", 100)),
        format!("SADD expiringsmall{}", members("member", 10)),
        "PEXPIRE expiring 1".into(),
        "PEXPIRE expiringsmall 1".into(),
        "sleep 20".into(),
        "EXISTS expiring expiringsmall".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "CONFIG RESETSTAT".into(),
        "info:lazyfreed_objects".into(),
        // `lazyfree-lazy-server-del`: values the server replaces or deletes itself.
        format!("SADD overwritten{}", members("member", 100)),
        "SET overwritten x".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        "CONFIG SET lazyfree-lazy-server-del yes".into(),
        format!("SADD overwritten2{}", members("member", 100)),
        "SET overwritten2 x".into(),
        format!("SADD unioned{}", members("member", 100)),
        "~SUNION unioned".into(),
        format!("SADD renamed{}", members("member", 100)),
        format!("SADD target{}", members("member", 100)),
        "RENAME renamed target".into(),
        format!("SADD stored{}", members("member", 100)),
        "SINTERSTORE stored nosuchkey".into(),
        format!("SADD popped{}", members("member", 100)),
        "~SPOP popped 200".into(),
        format!("SADD small{}", members("member", 10)),
        "SET small x".into(),
        "sleep 100".into(),
        "info:lazyfreed_objects".into(),
        // `lazyfree-lazy-eviction`: evicted values above the threshold.
        "FLUSHALL SYNC".into(),
        "CONFIG RESETSTAT".into(),
        "CONFIG SET maxmemory-policy allkeys-random".into(),
        format!("SADD evicted{}", members("member", 100)),
        "CONFIG SET lazyfree-lazy-eviction yes".into(),
        "CONFIG SET maxmemory 1".into(),
        "SET trigger 1".into(),
        "CONFIG SET maxmemory 0".into(),
        "sleep 100".into(),
        "EXISTS evicted".into(),
        "info:lazyfreed_objects".into(),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    common::scenario(&refs);
}
