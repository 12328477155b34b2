//! No client waits forever behind a busy script: a request that arrives while a script runs, before
//! or after `busy-reply-threshold`, from a client connected before or after the script began, alone
//! or pipelined, gets `-BUSY ...` once the threshold passes, and its pipeline is served after the
//! script is killed — in every engine and for FCALL.

mod common;

use common::{encode, goblin, show, Raw};
use std::time::Duration;

const BUSY_SCRIPT: &str =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";
const BUSY_FUNCTION: &str =
    "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n";
const KILLED: &str = "-ERR Script killed by user with SCRIPT KILL...";

/// How a runaway is started and stopped: the command line that spins, the kill command, and the
/// BUSY text others get meanwhile.
struct Runaway {
    name: &'static str,
    spin: Vec<Vec<u8>>,
    kill: &'static [&'static str],
    busy: &'static str,
}

fn runaways() -> Vec<Runaway> {
    let eval = |name, prefix: &str, body: &str, kill| Runaway {
        name,
        spin: vec![
            format!("{prefix}EVAL").into_bytes(),
            body.as_bytes().to_vec(),
            b"0".to_vec(),
        ],
        kill,
        busy: BUSY_SCRIPT,
    };
    vec![
        eval("lua", "", "while true do end", &["SCRIPT", "KILL"]),
        eval(
            "luau",
            "LUAU.",
            "while true do end",
            &["LUAU.SCRIPT", "KILL"],
        ),
        eval(
            "quickjs",
            "QUICKJS.",
            "while (true) {}",
            &["QUICKJS.SCRIPT", "KILL"],
        ),
        eval("tcl", "TCL.", "while 1 {}", &["TCL.SCRIPT", "KILL"]),
        eval(
            "upython",
            "UPYTHON.",
            "while True:\n    pass",
            &["UPYTHON.SCRIPT", "KILL"],
        ),
        eval("wren", "WREN.", "while (true) {}", &["WREN.SCRIPT", "KILL"]),
        Runaway {
            name: "fcall",
            spin: vec![b"FCALL".to_vec(), b"spin".to_vec(), b"0".to_vec()],
            kill: &["FUNCTION", "KILL"],
            busy: BUSY_FUNCTION,
        },
    ]
}

/// Loads the library whose function `spin` never returns (the FCALL runaway).
fn load_spin_function(c: &mut Raw) {
    let lib =
        "#!lua name=spinlib\nredis.register_function('spin', function() while true do end end)";
    assert_eq!(
        c.cmd(&[b"FUNCTION", b"LOAD", lib.as_bytes()]),
        b"$7\r\nspinlib\r\n"
    );
}

fn slow(c: &mut Raw) -> &mut Raw {
    c.s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

/// The repro in a loop: client B, connected before the script starts, sends PING a moment
/// after A's script (often in the same poll as it); a client connecting meanwhile pipelines two
/// commands; A pipelines a PING behind its script. Every request is answered: BUSY while the
/// script runs, then the pipelines in order once it is killed.
#[test]
fn every_waiting_client_is_answered_during_a_busy_script() {
    let g = goblin(&["--busy-reply-threshold", "50"]);
    let mut admin = g.raw();
    load_spin_function(&mut admin);
    assert_eq!(admin.cmd_str("SET kept value"), b"+OK\r\n");
    let mut runs = 0;
    for r in runaways() {
        for round in 0..8 {
            let mut a = g.raw();
            let mut b = g.raw();
            let spin: Vec<&[u8]> = r.spin.iter().map(|a| a.as_slice()).collect();
            let mut pipeline = encode(&spin);
            pipeline.extend_from_slice(b"PING\r\n");
            a.send(&pipeline);
            if round % 2 == 1 {
                std::thread::sleep(Duration::from_millis(2));
            }
            b.send(b"PING\r\n");
            let mut late = g.raw();
            late.send(b"PING\r\nGET kept\r\n");
            let ctx = format!("{} round {round}", r.name);
            // A request handled in the same turn as the script but before it is served at once;
            // any other gets BUSY. Either way it is answered.
            let busy = show(r.busy.as_bytes());
            let answered = |got: Vec<u8>, served: &str| {
                let got = show(&got);
                assert!(got == busy || got == served, "{ctx}: {got}");
            };
            answered(slow(&mut b).reply(), "+PONG\\r\\n");
            answered(slow(&mut late).reply(), "+PONG\\r\\n");
            answered(late.reply(), "$5\\r\\nvalue\\r\\n");
            let kill: Vec<&[u8]> = r.kill.iter().map(|a| a.as_bytes()).collect();
            assert_eq!(b.cmd(&kill), b"+OK\r\n", "{ctx}");
            let killed = show(&slow(&mut a).reply());
            assert!(
                killed.starts_with(&show(KILLED.as_bytes())),
                "{ctx}: {killed}"
            );
            assert_eq!(a.reply(), b"+PONG\r\n", "{ctx}");
            assert_eq!(b.cmd_str("PING"), b"+PONG\r\n", "{ctx}");
            assert_eq!(late.cmd_str("GET kept"), b"$5\r\nvalue\r\n", "{ctx}");
            runs += 1;
        }
    }
    assert_eq!(runs, 56);
}

/// A script held by CLIENT PAUSE and run when the pause ends still serves the others once it is
/// busy: they get BUSY and can kill it.
#[test]
fn a_script_run_after_a_pause_still_serves_the_others() {
    let g = goblin(&["--busy-reply-threshold", "50"]);
    let mut admin = g.raw();
    assert_eq!(admin.cmd_str("CLIENT PAUSE 300 WRITE"), b"+OK\r\n");
    let mut a = g.raw();
    a.send(&encode(&[b"EVAL", b"while true do end", b"0"]));
    let mut b = g.raw();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        show(&slow(&mut b).cmd_str("PING")),
        show(BUSY_SCRIPT.as_bytes())
    );
    assert_eq!(b.cmd_str("SCRIPT KILL"), b"+OK\r\n");
    let killed = show(&slow(&mut a).reply());
    assert!(killed.starts_with(&show(KILLED.as_bytes())), "{killed}");
    assert_eq!(admin.cmd_str("PING"), b"+PONG\r\n");
}

/// The server log names the engine whose script SCRIPT KILL stopped (Redis's line for Lua).
#[test]
fn the_log_names_the_killed_engine() {
    let g = goblin(&["--busy-reply-threshold", "50", "--logfile", "goblin.log"]);
    let mut admin = g.raw();
    load_spin_function(&mut admin);
    for r in runaways() {
        let mut a = g.raw();
        let spin: Vec<&[u8]> = r.spin.iter().map(|a| a.as_slice()).collect();
        a.send(&encode(&spin));
        std::thread::sleep(Duration::from_millis(200));
        let kill: Vec<&[u8]> = r.kill.iter().map(|a| a.as_bytes()).collect();
        assert_eq!(slow(&mut admin).cmd(&kill), b"+OK\r\n", "{}", r.name);
        let killed = show(&slow(&mut a).reply());
        assert!(killed.starts_with(&show(KILLED.as_bytes())), "{killed}");
    }
    let log = std::fs::read_to_string(g.dir.join("goblin.log")).unwrap();
    for line in [
        "Lua script killed by user with SCRIPT KILL.",
        "Luau script killed by user with LUAU.SCRIPT KILL.",
        "QuickJS script killed by user with QUICKJS.SCRIPT KILL.",
        "Tcl script killed by user with TCL.SCRIPT KILL.",
        "MicroPython script killed by user with UPYTHON.SCRIPT KILL.",
        "Wren script killed by user with WREN.SCRIPT KILL.",
        "Lua script killed by user with FUNCTION KILL.",
    ] {
        assert!(log.contains(line), "{line} not in the log:\n{log}");
    }
}
