//! CLIENT PAUSE and CLIENT UNPAUSE: the same scenarios, with several connections, run on Debian's
//! redis-server and on Goblin Core and their transcripts must match: what a pause holds (everything,
//! or only what may write: writes, scripts that may write, EXEC of a queue that writes, even a
//! write being queued), what runs meanwhile, the order held commands run in when it ends, keys that
//! do not expire while it lasts, and the errors.

mod common;
use common::scenarios;

#[test]
fn pause_matches_redis() {
    scenarios(
        &["--enable-debug-command", "yes"],
        &[
            // A client whose command the pause holds counts as blocked (INFO, CLIENT LIST flags).
            &[
                "CLIENT PAUSE 100000 WRITE",
                "info:blocked_clients",
                "b:!SET k new",
                "c:!INCR n",
                "sleep 50",
                "info:blocked_clients",
                "CLIENT UNPAUSE",
                "b:<",
                "c:<",
                "info:blocked_clients",
            ],
            // WRITE: writes wait, reads and PING run; UNPAUSE runs them in arrival order.
            &[
                "SET k old",
                "CLIENT PAUSE 100000 WRITE",
                "b:!SET k new",
                "c:!INCR n",
                "d:GET k",
                "d:PING",
                "b:quiet",
                "CLIENT UNPAUSE",
                "b:<",
                "c:<",
                "d:GET k",
            ],
            // ALL: everything waits, CLIENT UNPAUSE too, until the time is up.
            &[
                "CLIENT PAUSE 300",
                "b:!PING",
                "c:!CLIENT UNPAUSE",
                "b:quiet",
                "sleep 400",
                "b:<",
                "c:<",
                "b:PING",
            ],
            // Scripts by what they declare, MULTI, and EXEC by its queue.
            &[
                "CLIENT PAUSE 100000 WRITE",
                "b:!EVAL \"return redis.call('set','s','1')\" 0",
                "c:EVAL_RO \"return 1\" 0",
                "c:EVAL \"#!lua flags=no-writes\\nreturn 2\" 0",
                "c:MULTI",
                "c:GET s",
                "c:EXEC",
                "c:MULTI",
                "c:!SET q 1",
                "d:!PUBLISH ch m",
                "b:quiet",
                "c:quiet",
                "CLIENT UNPAUSE",
                "b:<",
                "c:<",
                "d:<",
                "c:EXEC",
                "c:MULTI",
                "c:SET q 2",
                "CLIENT PAUSE 100000 WRITE",
                "c:!EXEC",
                "c:quiet",
                "CLIENT UNPAUSE",
                "c:<",
                "GET q",
            ],
            // A longer or stricter pause wins; the shorter WRITE pause does not shorten it.
            &[
                "CLIENT PAUSE 300 ALL",
                "CLIENT PAUSE 10 WRITE",
                "b:!GET k",
                "b:quiet",
                "sleep 400",
                "b:<",
            ],
            // Keys do not expire while clients are paused: read as missing, but kept.
            &[
                "DEBUG SET-ACTIVE-EXPIRE 0",
                "SET e v PX 50",
                "CLIENT PAUSE 100000 WRITE",
                "sleep 100",
                "GET e",
                "DBSIZE",
                "CLIENT UNPAUSE",
                "GET e",
                "DBSIZE",
                "DEBUG SET-ACTIVE-EXPIRE 1",
            ],
            &[
                "CLIENT PAUSE",
                "CLIENT PAUSE x",
                "CLIENT PAUSE -1",
                "CLIENT PAUSE 10 foo",
                "CLIENT PAUSE 10 write extra",
                "CLIENT UNPAUSE x",
                "CLIENT PAUSE 99999999999999999999",
                "CLIENT UNPAUSE",
            ],
        ],
    );
}

/// CLIENT LIST shows a client held by a pause as blocked (`flags=b`), as Redis does.
#[test]
fn a_held_client_is_listed_as_blocked() {
    let mut seen = Vec::new();
    for s in [common::redis(&[]), common::goblin(&[])] {
        let mut a = s.raw();
        let mut b = s.raw();
        assert_eq!(b.cmd_str("CLIENT SETNAME held"), b"+OK\r\n");
        assert_eq!(a.cmd_str("CLIENT PAUSE 100000 WRITE"), b"+OK\r\n");
        b.send(b"SET k v\r\n");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let list = String::from_utf8(a.cmd_str("CLIENT LIST")).unwrap();
        let flags: Vec<String> = list
            .lines()
            .filter(|l| l.contains(" name=held "))
            .flat_map(|l| l.split(' ').filter(|f| f.starts_with("flags=")))
            .map(String::from)
            .collect();
        assert_eq!(a.cmd_str("CLIENT UNPAUSE"), b"+OK\r\n");
        assert_eq!(b.reply(), b"+OK\r\n");
        seen.push(flags);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[1], ["flags=b"]);
}
