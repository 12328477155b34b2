//! Client-side caching (CLIENT TRACKING) against redis-server: the same writes must bring a RESP3
//! tracking client and a RESP2 redirect pair exactly Redis's invalidation messages, whatever path
//! made the change (a command, a script, EXEC, expiry, eviction, a flush), in BCAST, OPTIN, OPTOUT
//! and NOLOOP modes; every error of CLIENT TRACKING and CLIENT CACHING; CLIENT TRACKINGINFO,
//! GETREDIR, CLIENT LIST's fields and INFO's.

mod common;
use std::time::{Duration, Instant};

use common::{goblin, redis, scenarios, show, Raw};

const DEBUG: &[&str] = &["--enable-debug-command", "yes"];

/// A RESP2 client subscribed to the invalidation channel, which `a` redirects to.
const REDIRECT_PAIR: &[&str] = &[
    "b:SUBSCRIBE __redis__:invalidate",
    "CLIENT TRACKING on REDIRECT {id:b}",
];

fn with_pair<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    REDIRECT_PAIR.iter().chain(lines).copied().collect()
}

#[test]
fn resp3_invalidations_by_every_write_path() {
    let script = "EVAL \"return redis.call('get', KEYS[1])\" 1 k";
    scenarios(
        DEBUG,
        &[
            // A command of another client, then the client's own write (after its reply).
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "SET k 1",
                "GET k",
                "b:SET k 2",
                "<",
                "GET k",
                "SET k 3",
                "<",
                "MGET k j l",
                "b:DEL k j l",
                "<",
                "b:SET l 1",
                "<",
                "b:SET k 1",
                "quiet",
                "info:tracking_clients",
                "info:tracking_total_keys",
                "info:tracking_total_items",
            ],
            // Keys read inside a script: the script's declared keys are tracked; its writes
            // invalidate like any command's.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                script,
                "b:SET k 1",
                "<",
                "EVAL \"redis.call('get', 'x') return 1\" 1 k",
                "b:SET x 1",
                "b:SET k 2",
                "<",
                "GET k",
                "b:EVAL \"return redis.call('set', KEYS[1], 'v')\" 1 k",
                "<",
                "GET k",
                "EVAL \"redis.call('set', KEYS[1], 'w') return redis.call('get', KEYS[1])\" 1 k",
                "<",
                // A script that only writes tracks nothing; EVAL_RO reads.
                "EVAL \"return redis.call('set', KEYS[1], 'z')\" 1 y",
                "b:SET y 1",
                "EVAL_RO \"return redis.call('get', KEYS[1])\" 1 y",
                "b:SET y 2",
                "<",
                "FUNCTION LOAD \"#!lua name=lib\\nredis.register_function{function_name='get', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}\"",
                "FCALL_RO get 1 f",
                "b:SET f 1",
                "<",
                "FUNCTION FLUSH",
                "quiet",
            ],
            // EXEC: the invalidations of the transaction's own writes follow its reply.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "SET k 1",
                "GET k",
                "MULTI",
                "GET k",
                "SET k 2",
                "GET j",
                "DEL j",
                "EXEC",
                "<",
                "GET k",
                "b:MULTI",
                "b:SET k 3",
                "b:INCR k",
                "b:EXEC",
                "<",
                "quiet",
            ],
            // Expiry: the active cycle, and a lazy one by another client's read.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "SET k 1 PX 50",
                "GET k",
                "sleep 300",
                "<",
                "DEBUG SET-ACTIVE-EXPIRE 0",
                "SET j 1 PX 10",
                "GET j",
                "sleep 50",
                "b:GET j",
                "<",
                "SET l 1 PX 10",
                "GET l",
                "sleep 50",
                "GET l",
                "<",
                // Keys another client expires without naming them: SCAN and RANDOMKEY delete
                // them (and tell); 7.0's KEYS only skips them.
                "SET m 1 PX 10",
                "GET m",
                "sleep 50",
                "b:SCAN 0",
                "<",
                "SET n 1 PX 10",
                "GET n",
                "sleep 50",
                "b:RANDOMKEY",
                "<",
                "SET o 1 PX 10",
                "GET o",
                "sleep 50",
                "b:KEYS *",
                "b:DBSIZE",
                "quiet",
                "DEBUG SET-ACTIVE-EXPIRE 1",
                "quiet",
            ],
            // Flushes: a null for everything, after the flushing client's own reply.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "GET k",
                "b:FLUSHALL",
                "<",
                "b:FLUSHDB",
                "<",
                "FLUSHDB",
                "<",
                "FLUSHALL ASYNC",
                "<",
                "MULTI",
                "FLUSHDB",
                "EXEC",
                "<",
                "info:tracking_total_keys",
                "b:SELECT 1",
                "b:FLUSHDB",
                "<",
                "quiet",
            ],
            // RENAME, MOVE and SWAPDB as Redis (SWAPDB tells nothing).
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "MSET k 1 j 2",
                "MGET k j l",
                "b:RENAME k l",
                "<",
                "<",
                "GET l",
                "b:MOVE l 1",
                "<",
                "GET j",
                "b:SWAPDB 0 1",
                "quiet",
                "b:SWAPDB 0 1",
                "b:COPY j m",
                "GET m",
                "b:COPY j m REPLACE",
                "<",
                "quiet",
            ],
            // Different protocols on one key; a RESP2 client without redirection hears nothing.
            &[
                "CLIENT TRACKING on",
                "GET k",
                "c:#HELLO 3",
                "c:CLIENT TRACKING on",
                "c:GET k",
                "b:SET k 1",
                "c:<",
                "quiet",
            ],
        ],
    );
}

#[test]
fn redirected_invalidations() {
    scenarios(
        DEBUG,
        &[
            &with_pair(&[
                "GET k",
                "SET k 1",
                "b:<",
                "GET k",
                "c:SET k 2",
                "b:<",
                "MGET k j",
                "c:MSET k 1 j 2",
                "b:<",
                "b:<",
                "GET k",
                "c:FLUSHALL",
                "b:<",
                "GET k",
                "EVAL \"return redis.call('incr', KEYS[1])\" 1 k",
                "b:<",
                "%CLIENT GETREDIR",
                "b:quiet",
            ]),
            // Expiry and FLUSHDB through the redirect; the RESP3 redirect target.
            &with_pair(&[
                "SET k 1 PX 50",
                "GET k",
                "sleep 300",
                "b:<",
                "GET k",
                "FLUSHDB",
                "b:<",
                "c:#HELLO 3",
                "CLIENT TRACKING on REDIRECT {id:c}",
                "SET k 1",
                "GET k",
                "SET k 2",
                "c:<",
                "b:quiet",
            ]),
            // A RESP3 client redirecting to a RESP2 one, flush included (its null is RESP3's).
            &[
                "b:SUBSCRIBE __redis__:invalidate",
                "#HELLO 3",
                "CLIENT TRACKING on REDIRECT {id:b}",
                "GET k",
                "c:SET k 1",
                "b:<",
                "GET k",
                "c:FLUSHALL",
                "b:<",
                "quiet",
            ],
            // A RESP2 redirect target that is not subscribed gets nothing.
            &[
                "CLIENT TRACKING on REDIRECT {id:b}",
                "GET k",
                "c:SET k 1",
                "b:PING",
                "b:quiet",
            ],
            // The redirect client is gone: a RESP3 client is told so once per message.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on REDIRECT {id:b}",
                "b:close",
                "sleep 100",
                "GET k",
                "c:SET k 1",
                "%<",
                "%CLIENT TRACKINGINFO",
                "GET k",
                "SET k 2",
                "%<",
                "quiet",
            ],
            // Several clients redirect to one.
            &[
                "c:SUBSCRIBE __redis__:invalidate",
                "CLIENT TRACKING on REDIRECT {id:c}",
                "b:CLIENT TRACKING on REDIRECT {id:c}",
                "GET k",
                "b:GET k",
                "d:SET k 1",
                "c:<",
                "c:<",
                "c:quiet",
            ],
        ],
    );
}

#[test]
fn eviction_invalidates_before_the_reply() {
    scenarios(
        DEBUG,
        &[&[
            "#HELLO 3",
            "CLIENT TRACKING on",
            "SET k 1",
            "GET k",
            "b:CONFIG SET maxmemory-policy allkeys-random",
            "b:CONFIG SET maxmemory 1",
            "SET j 1",
            "<",
            "b:CONFIG SET maxmemory 0",
            "b:CONFIG SET maxmemory-policy noeviction",
            "quiet",
        ]],
    );
}

#[test]
fn bcast_prefixes() {
    scenarios(
        DEBUG,
        &[
            &[
                "#HELLO 3",
                "CLIENT TRACKING on BCAST PREFIX a: PREFIX b:",
                "b:SET a:1 x",
                "<",
                "b:MSET a:2 x b:1 y c:1 z a:1 w",
                "<",
                "<",
                "b:SET c:2 z",
                "quiet",
                "CLIENT TRACKINGINFO",
                "info:tracking_total_prefixes",
                "CLIENT TRACKING on BCAST PREFIX d",
                "CLIENT TRACKINGINFO",
                "info:tracking_total_prefixes",
                "b:SET d1 1",
                "<",
                "CLIENT TRACKING off",
                "info:tracking_total_prefixes",
                "b:SET a:1 1",
                "quiet",
            ],
            // The empty prefix: every key; NOLOOP leaves out the client's own changes.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on BCAST NOLOOP",
                "b:SET k 1",
                "<",
                "SET j 1",
                "b:SET l 1 ;; SET j 2",
                "quiet",
                "MSET m 1 n 2 ;; b:DEL m",
                "SET x 1",
                "b:DEL x",
                "<",
                "EVAL \"return redis.call('set', KEYS[1], '1')\" 1 s",
                "<",
                "FLUSHALL",
                "<",
                "quiet",
            ],
            // RESP2 through a redirect, with prefixes.
            &with_pair(&[
                "CLIENT TRACKING off",
                "CLIENT TRACKING on BCAST PREFIX user: REDIRECT {id:b}",
                "c:SET user:1 a",
                "b:<",
                "c:SET other 1",
                "b:quiet",
            ]),
            // Switching normal tracking to BCAST: what was read before is not sent.
            &[
                "#HELLO 3",
                "CLIENT TRACKING on",
                "GET k",
                "CLIENT TRACKING off",
                "CLIENT TRACKING on BCAST PREFIX x",
                "b:SET k 1",
                "quiet",
            ],
            // Prefix collisions.
            &[
                "CLIENT TRACKING on BCAST PREFIX FOOBAR PREFIX FOO",
                "CLIENT TRACKING on BCAST PREFIX FOO PREFIX BAR",
                "CLIENT TRACKING on BCAST PREFIX FO",
                "CLIENT TRACKING on BCAST PREFIX BARB",
                "CLIENT TRACKING on BCAST PREFIX FOO",
                "CLIENT TRACKING on BCAST PREFIX X PREFIX Y PREFIX YZ",
                "<",
                "CLIENT TRACKINGINFO",
                "CLIENT TRACKING on BCAST",
                "CLIENT TRACKINGINFO",
            ],
        ],
    );
}

#[test]
fn optin_optout_noloop() {
    scenarios(
        DEBUG,
        &[
            &[
                "#HELLO 3",
                "CLIENT TRACKING on OPTIN",
                "GET k",
                "b:SET k 1",
                "quiet",
                "CLIENT CACHING yes",
                "CLIENT TRACKINGINFO",
                "GET k",
                "CLIENT TRACKINGINFO",
                "b:SET k 2",
                "<",
                // YES holds for one command, or for a whole transaction.
                "CLIENT CACHING yes",
                "MULTI",
                "GET j",
                "GET l",
                "EXEC",
                "GET m",
                "b:MSET j 1 l 1 m 1",
                "<",
                "<",
                "quiet",
                "CLIENT CACHING yes",
                "%CLIENT ID",
                "GET n",
                "b:SET n 1",
                "<",
            ],
            &[
                "#HELLO 3",
                "CLIENT TRACKING on OPTOUT",
                "GET k",
                "b:SET k 1",
                "<",
                "CLIENT CACHING no",
                "CLIENT TRACKINGINFO",
                "GET j",
                "b:SET j 1",
                "quiet",
                "GET j",
                "b:SET j 2",
                "<",
            ],
            &[
                "#HELLO 3",
                "CLIENT TRACKING on NOLOOP",
                "GET k",
                "SET k 1",
                "quiet",
                "GET k",
                "b:SET k 2",
                "<",
                "GET k",
                "EVAL \"return redis.call('set', KEYS[1], '1')\" 1 k",
                "quiet",
                "GET k",
                "MULTI",
                "SET k 3",
                "EXEC",
                "quiet",
                "CLIENT TRACKINGINFO",
            ],
        ],
    );
}

#[test]
fn command_errors_and_info() {
    scenarios(
        DEBUG,
        &[
            &[
                "CLIENT TRACKING",
                "CLIENT TRACKING maybe",
                "CLIENT TRACKING on FOO",
                "CLIENT TRACKING on REDIRECT",
                "CLIENT TRACKING on REDIRECT x",
                "CLIENT TRACKING on REDIRECT 0",
                "CLIENT TRACKING on REDIRECT 999999",
                "CLIENT TRACKING on REDIRECT {id:b} REDIRECT {id:b}",
                "CLIENT TRACKING on PREFIX",
                "CLIENT TRACKING on PREFIX a",
                "CLIENT TRACKING on BCAST OPTIN",
                "CLIENT TRACKING on BCAST OPTOUT",
                "CLIENT TRACKING on OPTIN OPTOUT",
                "CLIENT TRACKING off BCAST PREFIX a",
                "CLIENT TRACKING on OPTIN",
                "CLIENT TRACKING on OPTOUT",
                "CLIENT TRACKING on BCAST",
                "CLIENT TRACKING on OPTIN NOLOOP",
                "CLIENT TRACKINGINFO",
                "CLIENT TRACKING off",
                "CLIENT TRACKING on BCAST",
                "CLIENT TRACKING on",
                "CLIENT TRACKING off",
                "CLIENT CACHING yes",
                "CLIENT CACHING",
                "CLIENT CACHING yes no",
                "CLIENT TRACKING on",
                "CLIENT CACHING yes",
                "CLIENT CACHING no",
                "CLIENT CACHING maybe",
                "CLIENT TRACKING off",
                "CLIENT TRACKING on OPTOUT",
                "CLIENT CACHING yes",
                "CLIENT CACHING no",
                "CLIENT GETREDIR x",
                "CLIENT TRACKINGINFO x",
            ],
            // TRACKINGINFO and GETREDIR in both protocols and every mode.
            &[
                "CLIENT TRACKINGINFO",
                "CLIENT GETREDIR",
                "CLIENT TRACKING on",
                "CLIENT TRACKINGINFO",
                "CLIENT GETREDIR",
                "CLIENT TRACKING on REDIRECT {id:b} NOLOOP",
                "%CLIENT TRACKINGINFO",
                "%CLIENT GETREDIR",
                "CLIENT TRACKING off",
                "CLIENT GETREDIR",
                "#HELLO 3",
                "CLIENT TRACKINGINFO",
                "CLIENT TRACKING on BCAST PREFIX b PREFIX a",
                "CLIENT TRACKINGINFO",
                "CLIENT TRACKING off",
                "CLIENT TRACKING on OPTOUT",
                "CLIENT CACHING no",
                "CLIENT TRACKINGINFO",
                "RESET",
                "CLIENT TRACKINGINFO",
                "info:tracking_clients",
            ],
            // INFO's counts: keys, items (a pair per client and key), prefixes, clients.
            &[
                "CLIENT TRACKING on",
                "b:CLIENT TRACKING on",
                "c:CLIENT TRACKING on BCAST PREFIX p PREFIX q",
                "d:CLIENT TRACKING on BCAST PREFIX p",
                "MGET k j",
                "b:GET k",
                "info:tracking_clients",
                "info:tracking_total_keys",
                "info:tracking_total_items",
                "info:tracking_total_prefixes",
                "SET k 1",
                "info:tracking_total_keys",
                "info:tracking_total_items",
                "b:close",
                "sleep 100",
                "info:tracking_clients",
                "d:CLIENT TRACKING off",
                "info:tracking_total_prefixes",
                "CONFIG GET tracking-table-max-keys",
                "CONFIG SET tracking-table-max-keys -1",
                "CONFIG SET tracking-table-max-keys 10",
                "CONFIG GET tracking-table-max-keys",
                "CONFIG SET tracking-table-max-keys 1000000",
            ],
            &["COMMAND INFO client|tracking client|caching client|getredir client|trackinginfo"],
            &["COMMAND DOCS client|tracking client|caching client|getredir client|trackinginfo"],
        ],
    );
}

/// CLIENT LIST's `flags=` and `redir=` fields of the calling connection.
fn flags_and_redir(c: &mut Raw) -> (String, String) {
    let info = String::from_utf8_lossy(&c.cmd_str("CLIENT INFO")).into_owned();
    let field = |name: &str| {
        info.split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .unwrap_or_default()
            .to_string()
    };
    (field("flags="), field("redir="))
}

#[test]
fn client_list_fields() {
    for server in [redis(&[]), goblin(&[])] {
        let mut a = server.raw();
        let mut b = server.raw();
        let b_id = common::client_id(&mut b);
        assert_eq!(flags_and_redir(&mut a), ("N".into(), "-1".into()));
        a.cmd_str("CLIENT TRACKING on");
        assert_eq!(flags_and_redir(&mut a), ("t".into(), "0".into()));
        a.cmd_str(&format!("CLIENT TRACKING on REDIRECT {b_id}"));
        assert_eq!(flags_and_redir(&mut a), ("t".into(), b_id.to_string()));
        a.cmd_str("GET k");
        drop(b);
        std::thread::sleep(Duration::from_millis(100));
        server.raw().cmd_str("SET k 1");
        assert_eq!(flags_and_redir(&mut a), ("tR".into(), b_id.to_string()));
        a.cmd_str("CLIENT TRACKING off");
        a.cmd_str("CLIENT TRACKING on BCAST");
        assert_eq!(flags_and_redir(&mut a), ("tB".into(), "0".into()));
        let list = String::from_utf8_lossy(&a.cmd_str("CLIENT LIST")).into_owned();
        assert!(list.contains("flags=tB "), "{list}");
    }
}

/// Over `tracking-table-max-keys`, random keys are dropped and their clients told (which key is
/// random, in Redis too: one of the two).
#[test]
fn table_limit_evicts_tracked_keys() {
    for server in [redis(&[]), goblin(&[])] {
        let mut b = server.raw();
        b.cmd_str("SUBSCRIBE __redis__:invalidate");
        let b_id = {
            let mut c = server.raw();
            let list = String::from_utf8_lossy(&c.cmd_str("CLIENT LIST")).into_owned();
            let line = list
                .lines()
                .find(|l| l.contains("cmd=subscribe"))
                .expect("the subscriber")
                .to_string();
            line.split_whitespace().next().unwrap()[3..].to_string()
        };
        let mut a = server.raw();
        a.cmd_str(&format!("CLIENT TRACKING on REDIRECT {b_id} NOLOOP"));
        a.cmd_str("MSET key1 1 key2 2");
        a.cmd_str("MGET key1 key2");
        assert_eq!(common::info_field(&mut a, "tracking_total_keys"), Some(2));
        a.cmd_str("CONFIG SET tracking-table-max-keys 1");
        let msg = show(&b.reply());
        assert!(
            msg.contains("__redis__:invalidate") && (msg.contains("key1") || msg.contains("key2")),
            "{msg}"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while common::info_field(&mut a, "tracking_total_keys") != Some(1) {
            assert!(Instant::now() < deadline, "the table stayed over its limit");
            std::thread::sleep(Duration::from_millis(20));
        }
        a.cmd_str("CONFIG SET tracking-table-max-keys 1000000");
    }
}

/// Every scripting engine's reads track the script's keys and its writes invalidate them, as
/// Lua's do in Redis (the differential cases above cover Lua).
#[test]
fn scripts_of_every_engine() {
    // (command prefix, a script reading KEYS' first key, one writing it)
    let engines: &[(&str, &str, &str)] = &[
        (
            "",
            "return redis.call('GET', KEYS[1])",
            "return redis.call('SET', KEYS[1], 'v')",
        ),
        (
            "LUAU.",
            "return redis.call('GET', KEYS[1])",
            "return redis.call('SET', KEYS[1], 'v')",
        ),
        (
            "QUICKJS.",
            "return redis.call('GET', KEYS[0])",
            "return redis.call('SET', KEYS[0], 'v')",
        ),
        (
            "WREN.",
            "return Redis.call(\"GET\", keys[0])",
            "return Redis.call(\"SET\", keys[0], \"v\")",
        ),
        (
            "UPYTHON.",
            "return redis.call('GET', KEYS[0])",
            "return redis.call('SET', KEYS[0], 'v')",
        ),
        (
            "TCL.",
            "redis call GET [lindex $KEYS 0]",
            "redis call SET [lindex $KEYS 0] v",
        ),
    ];
    let server = goblin(&[]);
    let mut a = server.raw();
    let mut b = server.raw();
    a.cmd_str("HELLO 3");
    a.cmd_str("CLIENT TRACKING on");
    let pushed = b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n".to_vec();
    for (prefix, read, write) in engines {
        let eval = format!("{prefix}EVAL");
        a.cmd(&[eval.as_bytes(), read.as_bytes(), b"1", b"k"]);
        b.cmd(&[eval.as_bytes(), write.as_bytes(), b"1", b"k"]);
        assert_eq!(
            show(&a.reply()),
            show(&pushed),
            "{eval}: another client's script"
        );
        // The client's own script: the invalidation follows its reply.
        a.cmd(&[eval.as_bytes(), read.as_bytes(), b"1", b"k"]);
        let reply = a.cmd(&[eval.as_bytes(), write.as_bytes(), b"1", b"k"]);
        assert_eq!(show(&reply), show(b"+OK\r\n"), "{eval}");
        assert_eq!(show(&a.reply()), show(&pushed), "{eval}: its own script");
    }
}
