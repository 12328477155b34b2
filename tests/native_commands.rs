//! GOBLIN.CAD and GOBLIN.TD_LEADERBOARD_RESCORE: their replies, errors, and agreement with the
//! scripted idioms they replace (`benchmarks/scripts/cad.<ext>`, `rescore.<ext>`), in every
//! engine, on the same data.

mod common;
use common::{goblin, show, Raw};

/// Each engine's EVAL command and the extension of its copy of an idiom.
const ENGINES: &[(&str, &str)] = &[
    ("EVAL", "lua"),
    ("LUAU.EVAL", "luau"),
    ("QUICKJS.EVAL", "js"),
    ("TCL.EVAL", "tcl"),
    ("UPYTHON.EVAL", "py"),
    ("WREN.EVAL", "wren"),
];

const RESCORE: &str = "GOBLIN.TD_LEADERBOARD_RESCORE";

/// Every engine's copy of the idiom `name`: (its EVAL command, the script).
fn scripts(name: &str) -> Vec<(&'static str, Vec<u8>)> {
    ENGINES
        .iter()
        .map(|&(eval, ext)| {
            let path = format!(
                "{}/benchmarks/scripts/{name}.{ext}",
                env!("CARGO_MANIFEST_DIR")
            );
            let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            (eval, body)
        })
        .collect()
}

/// `cmd key args...` (a native command), or `cmd script 1 key args...` (an EVAL).
fn run(c: &mut Raw, cmd: &str, script: Option<&[u8]>, key: &[u8], args: &[&[u8]]) -> Vec<u8> {
    let mut line: Vec<&[u8]> = vec![cmd.as_bytes()];
    if let Some(script) = script {
        line.extend([script, b"1"]);
    }
    line.push(key);
    line.extend_from_slice(args);
    c.cmd(&line)
}

/// Whether a script's reply is the native command's error raised by the script's `redis.call`:
/// each engine replies its text followed by its own ` script: <sha>, on ...` suffix.
fn same_error_wrapped(native: &[u8], scripted: &[u8]) -> bool {
    let text = native.strip_suffix(b"\r\n").unwrap_or(native);
    native.starts_with(b"-")
        && scripted.starts_with(text)
        && scripted[text.len()..].starts_with(b" script: ")
}

#[test]
fn cad_replies_and_errors() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET lock tok");
    assert_eq!(c.cmd_str("GOBLIN.CAD lock other"), b":0\r\n");
    assert_eq!(c.cmd_str("GET lock"), b"$3\r\ntok\r\n");
    assert_eq!(c.cmd_str("GOBLIN.CAD lock tok"), b":1\r\n");
    assert_eq!(c.cmd_str("EXISTS lock"), b":0\r\n");
    assert_eq!(c.cmd_str("GOBLIN.CAD lock tok"), b":0\r\n");
    c.cmd_str("SET n 12");
    assert_eq!(
        c.cmd_str("GOBLIN.CAD n 12"),
        b":1\r\n",
        "an int-encoded string"
    );
    c.cmd_str("HSET h f v");
    assert_eq!(
        show(&c.cmd_str("GOBLIN.CAD h v")),
        "-WRONGTYPE Operation against a key holding the wrong kind of value\\r\\n"
    );
    assert_eq!(
        show(&c.cmd_str("GOBLIN.CAD lock")),
        "-ERR wrong number of arguments for 'goblin.cad' command\\r\\n"
    );
    // Binary-safe token.
    c.cmd(&[b"SET", b"bin", b"a\0b\r\n"]);
    assert_eq!(c.cmd(&[b"GOBLIN.CAD", b"bin", b"a\0b\r"]), b":0\r\n");
    assert_eq!(c.cmd(&[b"GOBLIN.CAD", b"bin", b"a\0b\r\n"]), b":1\r\n");
    // The key spec says what it does to the key: reads the value, may delete the key (GETDEL's
    // flags, spelt as Redis spells them).
    assert!(
        show(&c.cmd_str("COMMAND INFO goblin.cad"))
            .contains("$5\\r\\nflags\\r\\n*3\\r\\n+RW\\r\\n+access\\r\\n+delete\\r\\n"),
        "{}",
        show(&c.cmd_str("COMMAND INFO goblin.cad"))
    );
}

/// Each engine's `cad.<ext>` replies what GOBLIN.CAD replies and leaves the key as GOBLIN.CAD
/// does: a matching token (a plain, an int-encoded and a binary value) deletes, another token
/// (empty included) or a missing key leaves it alone. On a non-string the command replies
/// WRONGTYPE, and each script the same error with its engine's wrapping.
#[test]
fn cad_matches_every_engine() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let cases: &[(&[&[u8]], &[u8])] = &[
        (&[b"SET", b"k", b"tok"], b"tok"),
        (&[b"SET", b"k", b"tok"], b"other"),
        (&[b"SET", b"k", b"tok"], b""),
        (&[b"SET", b"k", b"tok"], b"TOK"),
        (&[b"SET", b"k", b"12"], b"12"),
        (&[b"SET", b"k", b"a\0b\r\n\xff"], b"a\0b\r\n\xff"),
        (&[b"SET", b"k", b"a\0b\r\n\xff"], b"a\0b\r\n"),
        (&[b"DEL", b"k"], b"tok"),
        (&[b"HSET", b"k", b"f", b"tok"], b"tok"),
    ];
    let state = |c: &mut Raw| (show(&c.cmd_str("TYPE k")), show(&c.cmd_str("DUMP k")));
    for &(setup, token) in cases {
        let what = format!("{} / {}", show(&setup.join(&b' ')), show(token));
        c.cmd_str("DEL k");
        c.cmd(setup);
        let native = c.cmd(&[b"GOBLIN.CAD", b"k", token]);
        let after = state(&mut c);
        for (eval, cad) in scripts("cad") {
            c.cmd_str("DEL k");
            c.cmd(setup);
            let got = run(&mut c, eval, Some(&cad), b"k", &[token]);
            if native.starts_with(b"-WRONGTYPE") {
                assert!(
                    same_error_wrapped(&native, &got),
                    "{eval}, {what}: {}",
                    show(&got)
                );
            } else {
                assert_eq!(show(&got), show(&native), "{eval}, {what}");
            }
            assert_eq!(state(&mut c), after, "{eval}, {what}: the key afterwards");
        }
    }
}

#[test]
fn rescore_errors_and_shapes() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("ZADD board 100 a 90 b 100 c");
    let e = |c: &mut Raw, line: &str| show(&c.cmd_str(line));
    assert_eq!(
        e(
            &mut c,
            "GOBLIN.TD_LEADERBOARD_RESCORE board 100 LINEAR 10 2"
        ),
        "*2\\r\\n$1\\r\\na\\r\\n$1\\r\\nc\\r\\n"
    );
    assert_eq!(
        e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE board 100 linear 10 5 WITHWEIGHTS"),
        "*6\\r\\n$1\\r\\na\\r\\n$1\\r\\n1\\r\\n$1\\r\\nc\\r\\n$1\\r\\n1\\r\\n$1\\r\\nb\\r\\n$3\\r\\n0.5\\r\\n"
    );
    c.cmd_str("HELLO 3");
    assert_eq!(
        e(
            &mut c,
            "GOBLIN.TD_LEADERBOARD_RESCORE board 100 EXP 10 5 WITHWEIGHTS"
        ),
        "*6\\r\\n$1\\r\\na\\r\\n,1\\r\\n$1\\r\\nc\\r\\n,1\\r\\n$1\\r\\nb\\r\\n,0.5\\r\\n"
    );
    c.cmd_str("HELLO 2");
    assert_eq!(
        e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE nosuch 100 STEP 10 5"),
        "*0\\r\\n"
    );
    assert_eq!(
        e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE board 100 STEP 5 5"),
        "*2\\r\\n$1\\r\\na\\r\\n$1\\r\\nc\\r\\n",
        "b is outside the window: weight 0, left out"
    );
    for (line, err) in [
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board x LINEAR 10 2",
            "-ERR value is not a valid float",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR nan 2",
            "-ERR value is not a valid float",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 CUBIC 10 2",
            "-ERR unknown mode 'CUBIC', expected LINEAR, EXP or STEP",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 0 2",
            "-ERR param must be greater than 0",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR -5 2",
            "-ERR param must be greater than 0",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 10 0",
            "-ERR k must be greater than 0",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 10 x",
            "-ERR value is not an integer or out of range",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 10 2 WITHSCORES",
            "-ERR syntax error",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 10 2 WITHWEIGHTS x",
            "-ERR syntax error",
        ),
        (
            "GOBLIN.TD_LEADERBOARD_RESCORE board 1 LINEAR 10",
            "-ERR wrong number of arguments for 'goblin.td_leaderboard_rescore' command",
        ),
    ] {
        assert_eq!(e(&mut c, line), format!("{err}\\r\\n"), "{line}");
    }
    c.cmd_str("SET s v");
    assert!(e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE s 1 LINEAR 10 2").starts_with("-WRONGTYPE"));
    // A NaN age (now and a score infinite alike) gives no weight: `up` is left out, `down` (an
    // infinite age in an infinite window) is in.
    c.cmd_str("ZADD inf inf up -inf down");
    assert_eq!(
        e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE inf inf STEP inf 5"),
        "*1\\r\\n$4\\r\\ndown\\r\\n"
    );
    assert_eq!(
        e(&mut c, "GOBLIN.TD_LEADERBOARD_RESCORE inf -inf LINEAR 10 5"),
        "*1\\r\\n$2\\r\\nup\\r\\n"
    );
    assert!(
        show(&c.cmd_str("COMMAND INFO goblin.td_leaderboard_rescore"))
            .contains("$5\\r\\nflags\\r\\n*2\\r\\n+RO\\r\\n+access\\r\\n")
    );
}

/// A small deterministic generator, so a failure names a reproducible board.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// On random boards (ties, future timestamps, equal scores), the native command and every
/// engine's scripted idiom reply the same array for every mode (spelled in several cases) and
/// several k.
#[test]
fn rescore_matches_every_engine_on_random_boards() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let engines = scripts("rescore");
    let mut rng = Lcg(7);
    for board in 0..20 {
        c.cmd_str("DEL board");
        let members = 1 + rng.next(300);
        let mut zadd: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"board".to_vec()];
        for m in 0..members {
            // Few distinct timestamps, some after `now`, so ties are common.
            let ts = 1_000_000 - rng.next(5_000) as i64 + 200;
            zadd.push(ts.to_string().into_bytes());
            zadd.push(format!("m{:03}", rng.next(1000) + m * 1000).into_bytes());
        }
        let refs: Vec<&[u8]> = zadd.iter().map(|a| a.as_slice()).collect();
        c.cmd(&refs);
        for (mode, param) in [
            ("LINEAR", "300"),
            ("exp", "120"),
            ("Step", "900"),
            ("STEP", "0.5"),
        ] {
            for k in ["1", "3", "10", "1000"] {
                let args: [&[u8]; 4] =
                    [b"1000000", mode.as_bytes(), param.as_bytes(), k.as_bytes()];
                let native = run(&mut c, RESCORE, None, b"board", &args);
                assert!(native.starts_with(b"*"), "{}", show(&native));
                for (eval, script) in &engines {
                    let got = run(&mut c, eval, Some(script), b"board", &args);
                    assert_eq!(
                        show(&got),
                        show(&native),
                        "{eval}: board {board}, {mode} {param} k={k}"
                    );
                }
            }
        }
    }
}

/// Where the scripts and the command could part, every engine's `rescore.<ext>` replies exactly
/// what the command replies: scores of `inf` and `-inf` (as ZRANGE writes them); `now` infinite,
/// spelled `inf`, `-inf`, `+inf`, `-INF` and `Infinity`, and `param` infinite; NaN ages (`now` and
/// a score infinite alike: no weight, left out); weights of 0 (out of the STEP window, an EXP
/// decay underflowed, a LINEAR infinite age); ties broken by the names' bytes (upper case, empty,
/// a prefix, UTF-8, a non-UTF-8 byte); k beyond the set; a missing key; the mode in any case, and
/// an unknown one (the command's error text, before param and k are parsed and the key is read).
/// On a key of another type the command replies WRONGTYPE, and each script the same error with its
/// engine's wrapping.
#[test]
fn rescore_matches_every_engine_on_edge_cases() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let engines = scripts("rescore");
    let boards: &[&[&[u8]]] = &[
        &[
            b"ZADD", b"board", b"inf", b"up", b"-inf", b"down", b"5", b"old", b"1000", b"now",
            b"999", b"recent",
        ],
        &[
            b"ZADD",
            b"board",
            b"900",
            b"b",
            b"900",
            b"a",
            b"900",
            b"B",
            b"900",
            b"",
            b"900",
            b"ab",
            b"900",
            b"\xc3\xa9",
            b"900",
            b"a\xff",
            b"900",
            b"z",
            b"950",
            b"y",
        ],
        &[
            b"ZADD", b"board", b"0", b"ancient", b"-1e300", b"older", b"999", b"fresh", b"2000",
            b"future",
        ],
        // A missing key.
        &[b"DEL", b"board"],
    ];
    let nows = ["1000", "inf", "-inf", "+inf", "-INF", "Infinity"];
    let params = ["100", "1", "inf"];
    let modes = ["LINEAR", "linear", "Exp", "sTeP", "STEP", "CUBIC", ""];
    let ks = ["1", "3", "1000"];
    for setup in boards {
        c.cmd_str("DEL board");
        c.cmd(setup);
        for now in nows {
            for param in params {
                for mode in modes {
                    for k in ks {
                        let args: [&[u8]; 4] = [
                            now.as_bytes(),
                            mode.as_bytes(),
                            param.as_bytes(),
                            k.as_bytes(),
                        ];
                        let native = run(&mut c, RESCORE, None, b"board", &args);
                        for (eval, script) in &engines {
                            let got = run(&mut c, eval, Some(script), b"board", &args);
                            assert_eq!(
                                show(&got),
                                show(&native),
                                "{eval}: {} / {now} {mode} {param} {k}",
                                show(&setup.join(&b' '))
                            );
                        }
                    }
                }
            }
        }
    }
    // The mode is checked before param and k, as the command does.
    let args: [&[u8]; 4] = [b"1000", b"CUBIC", b"x", b"0"];
    let native = run(&mut c, RESCORE, None, b"board", &args);
    for (eval, script) in &engines {
        let got = run(&mut c, eval, Some(script), b"board", &args);
        assert_eq!(
            show(&got),
            show(&native),
            "{eval}: an unknown mode and a bad param"
        );
    }
    c.cmd_str("SET board x");
    for mode in ["LINEAR", "CUBIC"] {
        let args: [&[u8]; 4] = [b"1000", mode.as_bytes(), b"100", b"3"];
        let native = run(&mut c, RESCORE, None, b"board", &args);
        for (eval, script) in &engines {
            let got = run(&mut c, eval, Some(script), b"board", &args);
            if mode == "LINEAR" {
                assert!(native.starts_with(b"-WRONGTYPE"), "{}", show(&native));
                assert!(same_error_wrapped(&native, &got), "{eval}: {}", show(&got));
            } else {
                assert_eq!(
                    show(&got),
                    show(&native),
                    "{eval}: a string key, mode {mode}"
                );
            }
        }
    }
}
