//! DEBUG: the subcommands test suites and client libraries use. The differential tests run the same
//! lines on Debian's redis-server and on Goblin Core (both with `enable-debug-command yes`) and
//! compare every reply byte for byte: DIGEST and DIGEST-VALUE over every type and encoding, with
//! and without TTLs, in several databases; POPULATE; PROTOCOL in RESP2 and RESP3; ERROR; HELP; the
//! errors; RELOAD; QUICKLIST-PACKED-THRESHOLD through the DUMP of a list; LOADAOF; and LISTPACK's
//! dump on standard output. What cannot be compared (LOG's line, PAUSE-CRON, CHANGE-REPL-ID,
//! SLEEP, LOADAOF's file and exit) is checked on Goblin Core alone.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const DEBUG: &[&str] = &["--enable-debug-command", "yes"];

/// `scenarios` with DEBUG enabled, for cases built at run time.
fn compare_debug(extra: &[&str], cases: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut args = DEBUG.to_vec();
    args.extend_from_slice(extra);
    let refs: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(|s| s.as_str()).collect())
        .collect();
    let cases: Vec<&[&str]> = refs.iter().map(|c| c.as_slice()).collect();
    scenarios(&args, &cases)
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `CMD key a0 a1 ...` with `n` generated arguments.
fn many(cmd: &str, n: usize, arg: impl Fn(usize) -> String) -> String {
    let mut s = cmd.to_string();
    for i in 0..n {
        s.push(' ');
        s.push_str(&arg(i));
    }
    s
}

#[test]
fn digest_matches_redis_for_every_type() {
    let long = "x".repeat(100);
    let cases = vec![
        // No keys: 40 zeros, and DIGEST-VALUE of nothing or of a missing key.
        lines(&[
            "DEBUG DIGEST",
            "DEBUG DIGEST-VALUE",
            "DEBUG DIGEST-VALUE missing",
        ]),
        // Strings: integer-encoded, embstr, raw, empty, changed in place.
        vec![
            "SET i 12345".into(),
            "SET neg -7".into(),
            "SET max 9223372036854775807".into(),
            "SET lead 0123".into(),
            "SET empty \"\"".into(),
            "SET s hello".into(),
            format!("SET long {long}"),
            "SET app 10".into(),
            "APPEND app 5".into(),
            "OBJECT ENCODING i".into(),
            "OBJECT ENCODING app".into(),
            "DEBUG DIGEST-VALUE i neg max lead empty s long app".into(),
            "DEBUG DIGEST".into(),
        ],
        // Lists: order matters, elements integer or not.
        vec![
            "RPUSH l a b c 1 -2 300000".into(),
            "LPUSH l first".into(),
            "RPUSH rev 300000 -2 1 c b a".into(),
            many("RPUSH big", 1000, |i| format!("item-{i}")),
            "DEBUG DIGEST-VALUE l rev big".into(),
            "DEBUG DIGEST".into(),
        ],
        // Hashes: listpack and hashtable (by count and by value length) give the same digests
        // for the same content, whatever the order.
        vec![
            "HSET h f v n 1 neg -5".into(),
            "HSET h2 neg -5 n 1 f v".into(),
            many("HSET hbig", 600, |i| format!("f{i} v{i}")),
            format!("HSET hlong f {long} g 2"),
            "OBJECT ENCODING hbig".into(),
            "OBJECT ENCODING hlong".into(),
            "DEBUG DIGEST-VALUE h h2 hbig hlong".into(),
            "DEBUG DIGEST".into(),
        ],
        // Sets: intsets (of each width) and hashtables, of integers too.
        vec![
            "SADD is 1 2 3 -4".into(),
            "SADD is32 100000 -100000".into(),
            "SADD is64 9000000000 1".into(),
            "SADD s a b c 1".into(),
            many("SADD bigints", 600, |i| (i * 7).to_string()),
            "OBJECT ENCODING bigints".into(),
            "DEBUG DIGEST-VALUE is is32 is64 s bigints".into(),
            "DEBUG DIGEST".into(),
        ],
        // Sorted sets: listpack and skiplist, integer and fractional scores, infinities, -0.
        vec![
            "ZADD z 1 a 2.5 b -3 c 1e100 d -inf e inf f 0.1 g".into(),
            "ZADD zint 1 100 2 200".into(),
            "ZADD zneg -0 a".into(),
            many("ZADD zbig", 200, |i| format!("{} m{i}", i as f64 / 3.0)),
            "ZADD zbig -0 zero inf top".into(),
            format!("ZADD zlong 1 {long} 2 short"),
            "OBJECT ENCODING zbig".into(),
            "OBJECT ENCODING zlong".into(),
            "DEBUG DIGEST-VALUE z zint zneg zbig zlong".into(),
            "DEBUG DIGEST".into(),
        ],
        // A TTL adds its mark (not its time); PERSIST takes it away.
        lines(&[
            "SET k v",
            "DEBUG DIGEST-VALUE k",
            "DEBUG DIGEST",
            "EXPIRE k 1000",
            "DEBUG DIGEST-VALUE k",
            "DEBUG DIGEST",
            "PEXPIRE k 5000000",
            "DEBUG DIGEST-VALUE k",
            "RPUSH l a",
            "EXPIRE l 100",
            "SADD s a",
            "EXPIRE s 100",
            "HSET h a b",
            "EXPIRE h 100",
            "ZADD z 1 a",
            "EXPIRE z 100",
            "DEBUG DIGEST-VALUE l s h z",
            "DEBUG DIGEST",
            "PERSIST k",
            "DEBUG DIGEST-VALUE k",
            "DEBUG DIGEST",
        ]),
        // A key expired but not yet reclaimed is still in the digest, as Redis reads the table.
        lines(&[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "SET gone v PX 1",
            "SET stays v",
            "sleep 30",
            "DEBUG DIGEST-VALUE gone",
            "DEBUG DIGEST",
            "DBSIZE",
            "DEBUG SET-ACTIVE-EXPIRE 1",
        ]),
        // The database number is part of the digest; the same data elsewhere differs.
        lines(&[
            "SET k v",
            "DEBUG DIGEST",
            "SELECT 1",
            "SET k v",
            "DEBUG DIGEST",
            "SELECT 0",
            "DEL k",
            "DEBUG DIGEST",
            "SELECT 3",
            "RPUSH l a b",
            "DEBUG DIGEST",
            "DEBUG DIGEST-VALUE l k",
        ]),
        // The same replies in RESP3 (status lines, an array of them).
        lines(&[
            "#HELLO 3",
            "SET k v",
            "DEBUG DIGEST",
            "DEBUG DIGEST-VALUE k nokey",
        ]),
    ];
    let logs = compare_debug(&[], &cases);
    // The empty data set digests to zeros.
    assert!(
        logs[0][0].ends_with("-> +0000000000000000000000000000000000000000\\r\\n"),
        "{}",
        logs[0][0]
    );
}

#[test]
fn populate_matches_redis() {
    let prefix = "p".repeat(130);
    let cases = vec![
        lines(&[
            "DEBUG POPULATE 100",
            "DBSIZE",
            "GET key:0",
            "GET key:99",
            "EXISTS key:100",
            "DEBUG DIGEST",
        ]),
        // A prefix and a size: values cut short or padded with zero bytes.
        lines(&[
            "DEBUG POPULATE 12 item 20",
            "GET item:3",
            "GET item:11",
            "DEBUG POPULATE 3 short 2",
            "GET short:2",
            "DEBUG POPULATE 2 exact 7",
            "GET exact:1",
            "DEBUG POPULATE 0",
            "DBSIZE",
            "DEBUG DIGEST",
        ]),
        // Existing keys are left alone, whatever their type.
        lines(&[
            "SET key:2 mine",
            "RPUSH key:4 a",
            "DEBUG POPULATE 6",
            "GET key:2",
            "TYPE key:4",
            "GET key:5",
            "DEBUG DIGEST",
        ]),
        // Errors and argument counts.
        lines(&[
            "DEBUG POPULATE -1",
            "DEBUG POPULATE abc",
            "DEBUG POPULATE 1.5",
            "DEBUG POPULATE 5 p -1",
            "DEBUG POPULATE 5 p x",
            "DEBUG POPULATE",
            "DEBUG POPULATE 1 a 2 3",
            "DBSIZE",
        ]),
        // A name longer than Redis's 128-byte buffer is cut at 127 bytes.
        vec![
            format!("DEBUG POPULATE 12 {prefix}"),
            "~KEYS *".into(),
            "DEBUG DIGEST".into(),
        ],
    ];
    compare_debug(&[], &cases);
}

#[test]
fn protocol_matches_redis_in_resp2_and_resp3() {
    let types = [
        "string", "integer", "double", "bignum", "null", "array", "set", "map", "verbatim", "true",
        "false",
    ];
    let mut resp2: Vec<String> = types
        .iter()
        .map(|t| format!("DEBUG PROTOCOL {t}"))
        .collect();
    resp2.extend(lines(&[
        "DEBUG PROTOCOL attrib",
        "DEBUG PROTOCOL push",
        "DEBUG PROTOCOL STRING",
        "DEBUG PROTOCOL nosuchtype",
        "DEBUG PROTOCOL",
        "DEBUG PROTOCOL string extra",
        "info:total_error_replies",
    ]));
    let mut resp3 = vec!["#HELLO 3".to_string()];
    resp3.extend(types.iter().map(|t| format!("DEBUG PROTOCOL {t}")));
    // An attribute and a push are each followed by a real reply: read it as well.
    resp3.extend(lines(&[
        "DEBUG PROTOCOL attrib",
        "<",
        "DEBUG PROTOCOL push",
        "<",
        "DEBUG PROTOCOL Map",
        "DEBUG PROTOCOL nosuchtype",
        // A push still arrives when replies are off; the real reply after it does not.
        "!CLIENT REPLY OFF",
        "!DEBUG PROTOCOL push",
        "<",
        "CLIENT REPLY ON",
        "PING",
    ]));
    let logs = compare_debug(&[], &[resp2, resp3]);
    let resp3 = logs[1].join("\n");
    for want in [
        "DEBUG PROTOCOL double -> ,3.141\\r\\n",
        "DEBUG PROTOCOL bignum -> (1234567999999999999999999999999999999\\r\\n",
        "DEBUG PROTOCOL verbatim -> =29\\r\\ntxt:This is a verbatim\nstring\\r\\n",
        "DEBUG PROTOCOL attrib -> |1\\r\\n",
        "DEBUG PROTOCOL push -> >2\\r\\n",
    ] {
        assert!(resp3.contains(want), "{want} not in\n{resp3}");
    }
}

#[test]
fn error_help_and_argument_errors_match_redis() {
    let long_name = "z".repeat(200);
    let cases = vec![
        // ERROR sends its text as the error line, newlines blanked, no code added, and it is not
        // counted as an error reply.
        lines(&[
            "info:total_error_replies",
            "DEBUG ERROR \"some message\"",
            "DEBUG ERROR \"ERR with a code\"",
            "DEBUG ERROR \"line1\\r\\nline2\"",
            "DEBUG ERROR \"\"",
            "info:total_error_replies",
            "DEBUG ERROR",
            "DEBUG ERROR a b",
            "info:total_error_replies",
        ]),
        lines(&[
            "DEBUG HELP",
            "DEBUG help",
            "DEBUG HELP extra",
            "DEBUG",
            "DEBUG NOSUCH",
            "DEBUG STRINGMATCH-LEN",
            "DEBUG STRINGMATCH-TEST extra",
            "DEBUG DIGEST extra",
            "DEBUG LOG",
            "DEBUG LOG a b",
            "DEBUG SLEEP",
            "DEBUG CHANGE-REPL-ID now",
            "DEBUG PAUSE-CRON",
            "DEBUG OBJECT",
            "DEBUG LISTPACK",
        ]),
        // The subcommand named in the error is cut at 128 bytes.
        vec![format!("DEBUG {long_name}")],
        // Switches and settings: OK, with Redis's errors for what it refuses.
        lines(&[
            "DEBUG LOG \"a line from the test\"",
            "DEBUG SLEEP 0",
            "DEBUG SLEEP -1",
            "DEBUG SLEEP nonsense",
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "DEBUG SET-ACTIVE-EXPIRE 1",
            "DEBUG PAUSE-CRON 1",
            "DEBUG PAUSE-CRON 0",
            "DEBUG CHANGE-REPL-ID",
            "DEBUG LEAK something",
            "DEBUG REPLYBUFFER PEAK-RESET-TIME never",
            "DEBUG REPLYBUFFER peak-reset-time RESET",
            "DEBUG REPLYBUFFER peak-reset-time 100",
            "DEBUG REPLYBUFFER peak-reset-time abc",
            "DEBUG REPLYBUFFER peak-reset-time 1.5",
            "DEBUG REPLYBUFFER resizing 0",
            "DEBUG REPLYBUFFER RESIZING 1",
            "DEBUG REPLYBUFFER other 1",
            "DEBUG REPLYBUFFER peak-reset-time",
            "DEBUG REPLYBUFFER resizing 1 2",
            "DEBUG RELOAD BADOPTION",
        ]),
        // OBJECT and LISTPACK on missing keys and on values of other encodings.
        lines(&[
            "DEBUG OBJECT nokey",
            "DEBUG LISTPACK nokey",
            "SET s v",
            "RPUSH l a",
            "SADD set 1",
            "DEBUG LISTPACK s",
            "DEBUG LISTPACK l",
            "DEBUG LISTPACK set",
            "HSET h f v",
            "ZADD z 1 m",
            "DEBUG LISTPACK h",
            "DEBUG LISTPACK z",
            "info:keyspace_hits",
            "info:keyspace_misses",
        ]),
        lines(&["#HELLO 3", "DEBUG HELP", "DEBUG NOSUCH", "DEBUG ERROR boom"]),
    ];
    compare_debug(&[], &cases);
}

#[test]
fn reload_matches_redis() {
    // No dump.rdb yet: the load fails and leaves the data set empty, as Redis's.
    let cases = vec![lines(&[
        "SET k v",
        "DEBUG RELOAD NOSAVE",
        "DBSIZE",
        "SET k v",
        "RPUSH l a b",
        "DEBUG RELOAD",
        "DEBUG DIGEST",
        "DEBUG RELOAD MERGE",
        "DEBUG RELOAD nosave merge",
        "LRANGE l 0 -1",
        "DEBUG DIGEST",
        "DEBUG RELOAD FAST",
    ])];
    compare_debug(&[], &cases);
}

#[test]
fn debug_is_refused_unless_enabled() {
    compare(&[&[
        "DEBUG HELP",
        "DEBUG DIGEST",
        "DEBUG NOSUCH",
        "DEBUG",
        "DEBUG POPULATE 10",
        "DBSIZE",
        // Refused before it is queued: the transaction aborts, as Redis's CMD_PROTECTED.
        "MULTI",
        "DEBUG SLEEP 0",
        "SET k v",
        "EXEC",
        "GET k",
        "MULTI",
        "MODULE LOAD /nonexistent.so",
        "MODULE LIST",
        "EXEC",
    ]]);
}

#[test]
fn stringmatch_test_matches_redis() {
    // Ten million random patterns: several seconds on either server, more on a busy machine.
    let mut replies = Vec::new();
    for s in [common::redis(DEBUG), common::goblin(DEBUG)] {
        let mut c = s.raw();
        c.s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
            .unwrap();
        replies.push((c.cmd_str("DEBUG STRINGMATCH-TEST"), c.cmd_str("PING")));
    }
    assert_eq!(replies[0], replies[1]);
    assert_eq!(replies[1].1, b"+PONG\r\n");
}

#[test]
fn quicklist_packed_threshold_matches_redis() {
    let big: String = (0..150)
        .map(|i| ((i * 7 % 26) as u8 + b'a') as char)
        .collect();
    let cases = vec![
        // Elements at or over the threshold are plain nodes of their own: DUMP shows them.
        vec![
            "DEBUG QUICKLIST-PACKED-THRESHOLD 100b".into(),
            format!("RPUSH l a b {big} c d {big} {big} e"),
            "DUMP l".into(),
            "DEBUG QUICKLIST-PACKED-THRESHOLD 150".into(),
            format!("RPUSH l2 a {big} b"),
            "DUMP l2".into(),
            "DEBUG QUICKLIST-PACKED-THRESHOLD 151".into(),
            format!("RPUSH l3 a {big} b"),
            "DUMP l3".into(),
            // 0 restores the default (1 GB): a list made now is packed nodes only. (Redis keeps
            // the nodes an element got when it was inserted; see DEBUG.md.)
            "DEBUG QUICKLIST-PACKED-THRESHOLD 0".into(),
            format!("RPUSH l4 a b {big} c d {big} {big} e"),
            "DUMP l4".into(),
            "LRANGE l 0 -1".into(),
        ],
        lines(&[
            "DEBUG QUICKLIST-PACKED-THRESHOLD 5gb",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 4293918721",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 4293918720",
            "DEBUG QUICKLIST-PACKED-THRESHOLD -1",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 1x",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 1K",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 2Mb",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 1g",
            "DEBUG QUICKLIST-PACKED-THRESHOLD \"\"",
            "DEBUG QUICKLIST-PACKED-THRESHOLD",
            "DEBUG QUICKLIST-PACKED-THRESHOLD 0",
        ]),
    ];
    compare_debug(&[], &cases);
}

#[test]
fn loadaof_matches_redis() {
    // POPULATE's keys are not logged: reloading the AOF drops them and keeps the logged writes;
    // a WATCHed key is touched by the reload; the loaded data is not counted as changes.
    let cases = vec![lines(&[
        "SET a 1",
        "EXPIRE a 1000",
        "RPUSH l x y z",
        "HSET h f v",
        "ZADD z 1 m",
        "b:WATCH a",
        "DEBUG POPULATE 5",
        "DBSIZE",
        "DEBUG LOADAOF",
        "DBSIZE",
        "GET a",
        "LRANGE l 0 -1",
        "EXISTS key:0",
        "DEBUG DIGEST",
        "info:rdb_changes_since_last_save",
        "b:MULTI",
        "b:GET a",
        "b:EXEC",
        "SET after 2",
        "DEBUG LOADAOF extra",
        "GET after",
        "DEBUG DIGEST",
    ])];
    compare_debug(&["--appendonly", "yes"], &cases);
}

/// Both servers' standard output after `DEBUG LISTPACK` of the same values, log lines dropped and
/// addresses blanked, must be identical.
#[test]
fn listpack_dump_matches_redis() {
    let setup = [
        "HSET h f v num 1 neg -5000 big 100000 huge 9000000000 small -70000 x 2147483648",
        &format!("HSET h2 f {} g {}", "a".repeat(50), "b".repeat(64)),
        "HSET h3 name -3",
        "ZADD z 1 a 2.5 b -3 c 1e10 d inf e 100000 f -9000000000 g",
        "ZADD z2 1 -1 2 65536",
    ];
    let mut outs = Vec::new();
    for bin in ["redis-server", goblin_bin()] {
        let p = Piped::start(bin, &["--save", "", "--appendonly", "no"]);
        let mut c = Raw::connect(p.port);
        for l in setup {
            c.cmd_str(l);
        }
        for k in ["h", "h2", "h3", "z", "z2"] {
            let line = format!("DEBUG LISTPACK {k}");
            assert_eq!(
                c.cmd_str(&line),
                b"+Listpack structure printed on stdout\r\n",
                "{bin}: {line}"
            );
        }
        outs.push(p.stdout_after_shutdown(&mut c));
    }
    assert!(outs[0].contains("{num entries 14}"), "{}", outs[0]);
    assert_eq!(outs[0], outs[1]);
}

/// A server whose standard output goes to a file (for LISTPACK's dump).
struct Piped {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Piped {
    fn start(bin: &str, args: &[&str]) -> Piped {
        let port = free_port();
        let dir = scratch_dir("debug-stdout");
        let out = std::fs::File::create(dir.join("stdout")).unwrap();
        let child = Command::new(bin)
            .args(["--port", &port.to_string()])
            .args(args)
            .args(DEBUG)
            .current_dir(&dir)
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{bin} did not come up");
            std::thread::sleep(Duration::from_millis(20));
        }
        Piped { child, port, dir }
    }

    /// Shuts the server down (redis-server flushes its buffered stdout on exit) and returns what
    /// it printed that is not a log line, with addresses blanked.
    fn stdout_after_shutdown(mut self, c: &mut Raw) -> String {
        c.send(&encode_line("SHUTDOWN NOSAVE"));
        let _ = self.child.wait();
        let mut text = String::new();
        std::fs::File::open(self.dir.join("stdout"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text.lines()
            .filter(|l| !is_log_line(l))
            .map(|l| match l.strip_prefix("\taddr: ") {
                Some(_) => "\taddr: (blanked)".to_string(),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `pid:M 02 Dec 2026 ...`: a log line of either server.
fn is_log_line(l: &str) -> bool {
    let Some((pid, rest)) = l.split_once(':') else {
        return false;
    };
    !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && rest.chars().nth(1) == Some(' ')
}

// ---------------------------------------------------------------------------------------------
// Goblin Core alone

fn goblin_debug(extra: &[&str]) -> Server {
    let mut args = DEBUG.to_vec();
    args.extend_from_slice(extra);
    goblin(&args)
}

fn status(c: &mut Raw, line: &str) -> String {
    let r = c.cmd_str(line);
    String::from_utf8_lossy(&r).trim_end().to_string()
}

fn info_text(c: &mut Raw, field: &str) -> String {
    let info = String::from_utf8_lossy(&c.cmd_str("INFO everything")).into_owned();
    info.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO"))
        .to_string()
}

#[test]
fn log_writes_the_line_to_the_log() {
    let g = goblin_debug(&["--logfile", "server.log", "--loglevel", "warning"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("DEBUG LOG \"hello from a test\""), b"+OK\r\n");
    // Read as a C string: up to a NUL byte.
    assert_eq!(
        c.cmd(&[b"DEBUG", b"LOG", b"before\0after"]),
        b"+OK\r\n".to_vec()
    );
    let log = std::fs::read_to_string(g.dir.join("server.log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.ends_with(" # DEBUG LOG: hello from a test")),
        "{log}"
    );
    assert!(
        log.lines().any(|l| l.ends_with(" # DEBUG LOG: before")),
        "{log}"
    );
    assert!(!log.contains("after"), "{log}");
}

#[test]
fn pause_cron_stops_active_expiry() {
    let g = goblin_debug(&["--hz", "100"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("DEBUG PAUSE-CRON 1"), b"+OK\r\n");
    for i in 0..20 {
        c.cmd_str(&format!("SET k{i} v PX 20"));
    }
    std::thread::sleep(Duration::from_millis(400));
    // DBSIZE counts stored keys without reclaiming them: nothing was expired in the background.
    assert_eq!(c.cmd_str("DBSIZE"), b":20\r\n");
    assert_eq!(info_field(&mut c, "expired_keys"), Some(0));
    assert_eq!(c.cmd_str("DEBUG PAUSE-CRON 0"), b"+OK\r\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.cmd_str("DBSIZE") != b":0\r\n" {
        assert!(
            Instant::now() < deadline,
            "active expiry did not resume after PAUSE-CRON 0"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(info_field(&mut c, "expired_keys"), Some(20));
}

/// Sum of the sizes of the files in `appendonlydir`.
fn aof_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn loadaof_reloads_the_append_only_file() {
    let g = goblin_debug(&["--appendonly", "yes"]);
    let mut c = g.raw();
    // FLUSHALL is always logged, even with nothing to flush: replaying it must not log LOADAOF.
    c.cmd_str("FLUSHALL");
    let lib = "#!lua name=lib\nredis.register_function('f', function() return 7 end)";
    assert_eq!(
        c.cmd(&[b"FUNCTION", b"LOAD", lib.as_bytes()]),
        b"$3\r\nlib\r\n".to_vec()
    );
    c.cmd_str("SET a 1");
    c.cmd_str("RPUSH l x y z");
    c.cmd_str("EXPIRE l 1000");
    let logged = status(&mut c, "DEBUG DIGEST");
    let changes = info_field(&mut c, "rdb_changes_since_last_save");
    c.cmd_str("DEBUG POPULATE 50");
    assert_eq!(c.cmd_str("DBSIZE"), b":52\r\n");
    // POPULATE's keys are not changes: neither counted nor logged.
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), changes);
    let size = aof_bytes(&g.dir);
    assert_eq!(c.cmd_str("DEBUG LOADAOF"), b"+OK\r\n");
    // The data set is the AOF's again: what POPULATE made (never logged) is gone, the function
    // library came back with it, and the replay was not appended to the file.
    assert_eq!(c.cmd_str("DBSIZE"), b":2\r\n");
    assert_eq!(status(&mut c, "DEBUG DIGEST"), logged);
    assert_eq!(c.cmd_str("FCALL f 0"), b":7\r\n");
    assert_eq!(aof_bytes(&g.dir), size);
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(0));
    // Writes after the reload are logged and load again.
    c.cmd_str("SET b 2");
    assert_eq!(c.cmd_str("DEBUG LOADAOF"), b"+OK\r\n");
    assert_eq!(c.cmd_str("GET b"), b"$1\r\n2\r\n");
    assert_eq!(c.cmd_str("DBSIZE"), b":3\r\n");
}

#[test]
fn loadaof_without_an_aof_exits_as_redis() {
    // Redis exits when DEBUG LOADAOF finds nothing to load (its data set is gone by then).
    let mut g = goblin_debug(&[]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.send(&encode_line("DEBUG LOADAOF"));
    assert!(c.is_closed(), "the connection stays open");
    assert_eq!(g.wait_exit(Duration::from_secs(5)), Some(false));
}

#[test]
fn change_repl_id_changes_master_replid() {
    let g = goblin_debug(&[]);
    let mut c = g.raw();
    let run_id = info_text(&mut c, "run_id");
    let before = info_text(&mut c, "master_replid");
    assert_eq!(before.len(), 40);
    assert_eq!(c.cmd_str("DEBUG CHANGE-REPL-ID"), b"+OK\r\n");
    let after = info_text(&mut c, "master_replid");
    assert_eq!(after.len(), 40);
    assert!(after.bytes().all(|b| b.is_ascii_hexdigit()), "{after}");
    assert_ne!(before, after);
    assert_eq!(info_text(&mut c, "run_id"), run_id);
    assert_eq!(
        info_text(&mut c, "master_replid2"),
        "0000000000000000000000000000000000000000"
    );
    assert_eq!(info_text(&mut c, "second_repl_offset"), "-1");
}

#[test]
fn sleep_blocks_the_server() {
    let g = goblin_debug(&[]);
    let mut a = g.raw();
    let mut b = g.raw();
    let started = Instant::now();
    a.send(&encode_line("DEBUG SLEEP 0.3"));
    std::thread::sleep(Duration::from_millis(50));
    // Another client waits for the sleep to end.
    assert_eq!(b.cmd_str("PING"), b"+PONG\r\n");
    assert!(started.elapsed() >= Duration::from_millis(290));
    assert_eq!(a.reply(), b"+OK\r\n");
    // The seconds are read as C's strtod reads them: a number's prefix.
    let started = Instant::now();
    assert_eq!(a.cmd_str("DEBUG SLEEP 0.2xyz"), b"+OK\r\n");
    assert!(started.elapsed() >= Duration::from_millis(190));
    let started = Instant::now();
    assert_eq!(a.cmd_str("DEBUG SLEEP -5"), b"+OK\r\n");
    assert!(started.elapsed() < Duration::from_secs(1));
}
