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
