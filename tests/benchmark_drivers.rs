//! The benchmark drivers keep working: each runs at tiny sizes, with `python3`, against the
//! freshly built binary, verifies every form it finds and prints its table with the Lua row; a
//! wrong script makes a driver fail with a clear message. (The rescore driver needs sorted sets:
//! it builds its board with ZADD.)

mod common;
use common::{goblin_bin, scratch_dir};

use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The table rows of the six engines' EVALSHA forms.
const ENGINE_ROWS: [&str; 6] = [
    "lua EVALSHA",
    "luau LUAU.EVALSHA",
    "quickjs QUICKJS.EVALSHA",
    "tcl TCL.EVALSHA",
    "upython UPYTHON.EVALSHA",
    "wren WREN.EVALSHA",
];

/// Runs `python3 benchmarks/<driver> --goblin-bin <the built binary> <args>` from the repository
/// root. (Every driver's socket reads have a timeout, so this cannot hang for ever.)
fn run_driver(driver: &str, args: &[&str]) -> Output {
    let path = format!("{ROOT}/benchmarks/{driver}");
    Command::new("python3")
        .arg(&path)
        .arg("--goblin-bin")
        .arg(goblin_bin())
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {path}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The driver succeeded; the first number of its table's row for `form` (e.g. `lua EVALSHA`).
fn row_value(driver: &str, out: &Output, form: &str) -> f64 {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{driver} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let prefix = format!("{form} ");
    let row = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{driver}: no {form} row in its table:\n{stdout}\n{stderr}"));
    let first = row[prefix.len()..].split_whitespace().next();
    first
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{driver}: the {form} row has no measurement: {row:?}\n{stdout}"))
}

/// The driver succeeded, its table has a measured Lua row, and it verified its forms.
fn assert_ran_with_lua_row(driver: &str, out: &Output) {
    let us = row_value(driver, out, "lua EVALSHA");
    assert!(us > 0.0, "{driver}: the Lua row measured {us}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("verified:"),
        "{driver}: no verification reported on stderr:\n{stderr}"
    );
}

#[test]
fn cad_benchmark_driver_runs_at_tiny_size() {
    let out = run_driver("cad_benchmark.py", &["--keys", "50", "--rounds", "1"]);
    assert_ran_with_lua_row("cad_benchmark.py", &out);
}

/// Under callgrind, every form is counted, and a script costs more instructions than the native
/// command it spells out, and than its engine's noop script, which calls no command (a count that
/// came out of nowhere would not be ordered so).
#[test]
fn instructions_benchmark_driver_runs_at_tiny_size() {
    let driver = "instructions_benchmark.py";
    let out = run_driver(driver, &["--ops", "100"]);
    assert_ran_with_lua_row(driver, &out);
    let native = row_value(driver, &out, "native GOBLIN.CAD");
    for form in ENGINE_ROWS.iter().chain(&["naive GET+DEL"]) {
        let count = row_value(driver, &out, form);
        assert!(
            count > native && native > 100.0,
            "{form}: {count} against native {native}"
        );
    }
    for form in ENGINE_ROWS {
        let floor = row_value(driver, &out, &format!("{form} noop"));
        let cad = row_value(driver, &out, form);
        assert!(
            floor > 100.0 && floor < cad,
            "{form}: noop {floor}, cad {cad}"
        );
    }
}

#[test]
fn leaderboard_rescore_benchmark_driver_runs_at_tiny_size() {
    let out = run_driver(
        "leaderboard_rescore_benchmark.py",
        &[
            "--members",
            "30",
            "--k",
            "5",
            "--rounds",
            "1",
            "--calls",
            "20",
        ],
    );
    assert_ran_with_lua_row("leaderboard_rescore_benchmark.py", &out);
}

/// Every engine's loop ran (the driver checks each loop's reply) and has a row.
#[test]
fn nested_call_benchmark_driver_runs_at_tiny_size() {
    let driver = "nested_call_benchmark.py";
    let out = run_driver(driver, &["--calls", "200", "--rounds", "1"]);
    for form in ENGINE_ROWS {
        let us = row_value(driver, &out, form);
        assert!(us >= 0.0 && us.is_finite(), "{form}: {us}");
    }
}

#[test]
fn cad_benchmark_driver_fails_verification_on_a_wrong_script() {
    // A compare-and-delete that deletes whatever the token: the driver must refuse to time it.
    let dir = scratch_dir("bench-drivers");
    std::fs::write(dir.join("cad.lua"), "return redis.call('DEL', KEYS[1])\n").unwrap();
    let out = run_driver(
        "cad_benchmark.py",
        &[
            "--keys",
            "10",
            "--rounds",
            "1",
            "--engines",
            "lua",
            "--scripts-dir",
            dir.to_str().unwrap(),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "a wrong script must fail the run:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stderr.contains("verification failed") && stderr.contains("lua EVALSHA"),
        "no clear verification message:\n{stderr}"
    );
    assert!(
        !stdout.lines().any(|l| l.starts_with("lua EVALSHA ")),
        "nothing may be timed after a failed verification:\n{stdout}"
    );
}

/// `server_benchmark.py --suite types` measures every data-type workload (the built-in `-t` tests
/// and the custom ZRANGE one over a preloaded sorted set) on both servers, with a ratio per point;
/// `--tests evalsha_cad` adds the compare-and-delete script by EVALSHA.
#[test]
fn server_benchmark_types_suite_runs_at_tiny_size() {
    let out = run_driver(
        "server_benchmark.py",
        &[
            "--suite",
            "types",
            "--tests",
            "evalsha_cad",
            "--requests",
            "5000",
            "--clients",
            "5",
            "--pipelines",
            "1,16",
            "--zrange-members",
            "200",
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "server_benchmark.py failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    for transport in ["tcp", "unix"] {
        for pipeline in ["1", "16"] {
            for test in [
                "LPUSH",
                "LPOP",
                "SADD",
                "HSET",
                "ZADD",
                "ZRANGE 0 9 WITHSCORES",
                "EVALSHA cad.lua (missing keys)",
            ] {
                let row = stdout.lines().find(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(transport)
                        && w.next() == Some(pipeline)
                        && l.contains(&format!("  {test} "))
                });
                let row = row.unwrap_or_else(|| {
                    panic!("no {transport} -P {pipeline} {test} row:\n{stdout}\n{stderr}")
                });
                let ratio = row.split_whitespace().last().unwrap();
                assert!(
                    ratio.parse::<f64>().is_ok_and(|r| r > 0.0),
                    "no ratio in {row:?}"
                );
            }
        }
    }
    // An unknown test is refused before any server starts.
    let out = run_driver("server_benchmark.py", &["--tests", "set,nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown test(s) nosuch"),
        "{}",
        text(&out.stderr)
    );
}

/// `persistence_benchmark.py` measures SET with the AOF on (both fsync policies) and a BGSAVE with
/// a pinging client on both servers, and prints a ratio for each.
#[test]
fn persistence_benchmark_runs_at_tiny_size() {
    let out = run_driver(
        "persistence_benchmark.py",
        &["--requests", "500", "--clients", "5", "--keys", "500"],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "persistence_benchmark.py failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    for row in [
        "SET ops/s, appendfsync everysec",
        "SET ops/s, appendfsync always",
        "BGSAVE 500 keys, s",
        "longest stall during BGSAVE, ms",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row:?} row:\n{stdout}"));
        let ratio = line.split_whitespace().last().unwrap();
        assert!(
            ratio.parse::<f64>().is_ok_and(|r| r > 0.0),
            "{row}: no ratio in {line:?}"
        );
    }
}
