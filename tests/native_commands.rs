//! GOBLIN.CAD and GOBLIN.TD_LEADERBOARD_RESCORE: their replies, errors, and agreement with the
//! scripted idioms they replace (`benchmarks/scripts/cad.lua`, `rescore.lua`) on the same data.

mod common;
use common::{goblin, show, Raw};

fn script(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/benchmarks/scripts/{name}.lua",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
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
    // Same replies as the scripted idiom on the same inputs.
    let cad = script("cad");
    for (setup, token) in [("SET k t", "t"), ("SET k t", "u"), ("DEL k", "t")] {
        c.cmd_str(setup);
        let scripted = c.cmd(&[b"EVAL", &cad, b"1", b"k", token.as_bytes()]);
        c.cmd_str(setup);
        let native = c.cmd(&[b"GOBLIN.CAD", b"k", token.as_bytes()]);
        assert_eq!(native, scripted, "{setup} / {token}");
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

/// On random boards (ties, future timestamps, equal scores), the native command and the scripted
/// idiom reply the same array for every mode and several k.
#[test]
fn rescore_matches_the_scripted_idiom() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let rescore = script("rescore");
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
            ("EXP", "120"),
            ("STEP", "900"),
            ("STEP", "0.5"),
        ] {
            for k in ["1", "3", "10", "1000"] {
                let args: [&[u8]; 4] =
                    [b"1000000", mode.as_bytes(), param.as_bytes(), k.as_bytes()];
                let mut eval: Vec<&[u8]> = vec![b"EVAL", &rescore, b"1", b"board"];
                eval.extend(args);
                let scripted = c.cmd(&eval);
                let mut native: Vec<&[u8]> = vec![b"GOBLIN.TD_LEADERBOARD_RESCORE", b"board"];
                native.extend(args);
                let got = c.cmd(&native);
                assert_eq!(
                    show(&got),
                    show(&scripted),
                    "board {board}, {mode} {param} k={k}"
                );
            }
        }
    }
}
