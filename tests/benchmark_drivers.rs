//! The benchmark drivers keep working: each runs at tiny sizes, with `python3`, against the
//! freshly built binary, verifies every form it finds and prints its table, ratios first, with a
//! row for every engine and for the native command; its `--json FILE` holds the same rows; the
//! `--redis-bin` reference row is there; `--chart` is a usage error without matplotlib and a PNG
//! with it; a wrong script makes a driver fail with a clear message. (The rescore driver needs
//! sorted sets: it builds its board with ZADD.)

mod common;
use common::{goblin, goblin_bin, scratch_dir};

use std::collections::BTreeMap;
use std::path::Path;
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

/// The scripting drivers' reference row: the Lua script on redis-server (`--redis-bin`).
const REFERENCE_ROW: &str = "lua EVALSHA (redis-server)";

/// The rescore driver's tiniest run: a 30-member board, top 5, one round of 20 calls.
const TINY_BOARD: [&str; 8] = [
    "--members",
    "30",
    "--k",
    "5",
    "--rounds",
    "1",
    "--calls",
    "20",
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

/// The driver exited 0; its stdout.
fn succeeded(driver: &str, out: &Output) -> String {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{driver} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    stdout
}

/// `--redis-bin redis-server` when redis-server is on PATH (CI installs it), otherwise nothing,
/// said on stderr: the reference row is then not checked.
fn redis_args(test: &str) -> Vec<&'static str> {
    let found = Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        vec!["--redis-bin", "redis-server"]
    } else {
        eprintln!("{test}: redis-server is not on PATH; the reference row is not checked");
        vec![]
    }
}

/// A driver's run with `--json` to a scratch file, and with `--redis-bin` when `reference` and
/// redis-server is on PATH: its output, its stdout (it exited 0), the JSON file read, and whether
/// the reference ran.
struct JsonRun {
    out: Output,
    stdout: String,
    data: Json,
    reference: bool,
}

fn run_with_json(driver: &str, args: &[&str], reference: bool) -> JsonRun {
    let redis = if reference {
        redis_args(driver)
    } else {
        vec![]
    };
    let dir = scratch_dir(&format!("bench-{}", driver.trim_end_matches(".py")));
    let json = dir.join("results.json");
    let json_arg = json.to_str().unwrap().to_string();
    let mut all = args.to_vec();
    all.extend(["--json", json_arg.as_str()]);
    all.extend(&redis);
    let out = run_driver(driver, &all);
    let stdout = succeeded(driver, &out);
    let data = Json::read(&json);
    let _ = std::fs::remove_dir_all(&dir);
    JsonRun {
        out,
        stdout,
        data,
        reference: !redis.is_empty(),
    }
}

/// One table of benchlib's `print_table`: the header's cells and each row's cells (columns are
/// separated by two spaces or more; a cell has single spaces at most).
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

/// Every table in a driver's stdout: a header line, a line of dashes, rows up to a blank line.
fn tables(stdout: &str) -> Vec<Table> {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(1) {
        if line.is_empty() || !line.chars().all(|c| c == '-') {
            continue;
        }
        let rows = lines[i + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .map(|l| cells(l))
            .collect();
        out.push(Table {
            header: cells(lines[i - 1]),
            rows,
        });
    }
    out
}

impl Table {
    fn names(&self) -> Vec<&str> {
        self.rows.iter().map(|r| r[0].as_str()).collect()
    }

    fn row(&self, name: &str) -> &[String] {
        self.rows
            .iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("no {name:?} row in the table {:?}", self.names()))
    }
}

/// A ratio-first cell, `3.02× (2.45)`: (the ratio, the measured number), as printed.
fn ratio_cell(cell: &str) -> (&str, &str) {
    let parsed = cell
        .strip_suffix(')')
        .and_then(|c| c.split_once("× ("))
        .filter(|(r, v)| number(r).is_some() && number(v).is_some());
    parsed.unwrap_or_else(|| panic!("{cell:?} is not a ratio-first cell like `3.02× (2.45)`"))
}

/// A number as the tables print it (`1,953`, `2.45`, `0.97×`).
fn number(shown: &str) -> Option<f64> {
    let plain: String = shown.trim_end_matches('×').replace(',', "");
    plain.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `shown` (printed with some decimals) is `exact` rounded: within half its last digit.
fn assert_rounds(shown: &str, exact: f64, what: &str) {
    let plain = shown.trim_end_matches('×').replace(',', "");
    let decimals = plain.split_once('.').map_or(0, |(_, d)| d.len());
    let half = 0.5 * 10f64.powi(-(decimals as i32));
    let value = number(shown).unwrap_or_else(|| panic!("{what}: {shown:?} is not a number"));
    assert!(
        (value - exact).abs() <= half * (1.0 + 1e-9) + 1e-12,
        "{what}: the table shows {shown}, the JSON file has {exact}"
    );
}

/// The leaves of a JSON file, `path/to/leaf` (keys and array indices) -> the value as JSON text,
/// read by python3's json module (no JSON crate among the dev-dependencies), which also rejects
/// what is not standard JSON (NaN, Infinity).
fn json_leaves(path: &Path) -> BTreeMap<String, String> {
    const FLATTEN: &str = r#"
import json, sys
def reject(name):
    raise ValueError(f"not standard JSON: {name}")
def walk(path, value):
    if isinstance(value, dict):
        for k, v in value.items():
            walk(path + [str(k)], v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            walk(path + [str(i)], v)
    else:
        print("/".join(path) + "\t" + json.dumps(value, ensure_ascii=False))
with open(sys.argv[1], encoding="utf-8") as f:
    walk([], json.load(f, parse_constant=reject))
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(FLATTEN)
        .arg(path)
        .output()
        .expect("cannot run python3");
    assert!(
        out.status.success(),
        "{} is not a JSON file: {}",
        path.display(),
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('\t').expect("a leaf line");
            (k.to_string(), v.to_string())
        })
        .collect()
}

struct Json(BTreeMap<String, String>);

impl Json {
    fn read(path: &Path) -> Json {
        Json(json_leaves(path))
    }

    fn raw(&self, key: &str) -> &str {
        self.0
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in the JSON file: {:?}", self.0.keys()))
    }

    fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    fn str(&self, key: &str) -> String {
        let raw = self.raw(key);
        let inner = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
        let inner = inner.unwrap_or_else(|| panic!("{key} is not a string: {raw}"));
        inner.replace("\\\"", "\"").replace("\\\\", "\\")
    }

    fn num(&self, key: &str) -> f64 {
        let raw = self.raw(key);
        raw.parse::<f64>()
            .unwrap_or_else(|_| panic!("{key} is not a number: {raw}"))
    }

    /// How many entries the array at `key` has.
    fn len(&self, key: &str) -> usize {
        (0..)
            .take_while(|i| {
                let prefix = format!("{key}/{i}");
                self.0
                    .keys()
                    .any(|k| k == &prefix || k.starts_with(&format!("{prefix}/")))
            })
            .count()
    }

    /// The head every driver's file has: benchmark, unit, time (UTC), server and reference.
    fn assert_head(&self, benchmark: &str, unit: &str, server: &str, reference: Option<&str>) {
        assert_eq!(self.str("benchmark"), benchmark);
        if unit == "null" {
            assert_eq!(self.raw("unit"), "null");
        } else {
            assert_eq!(self.str("unit"), unit);
        }
        let time = self.str("time");
        assert!(
            time.len() == 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
            "time {time:?}"
        );
        let got = self.str("server");
        assert!(got.starts_with(server), "server {got:?}, want {server}...");
        match reference {
            Some(r) => {
                let got = self.str("reference");
                assert!(got.starts_with(r), "reference {got:?}, want {r}...");
            }
            None => assert_eq!(self.raw("reference"), "null"),
        }
    }
}

/// A scripting driver's table (cad, rescore) read with its JSON file: the rows are `want`, in
/// order, each cell ratio first (`3.02× (2.45)`, the header naming `unit` as the parenthesised
/// number's), every number positive, the baseline row at 1.00× everywhere; and the JSON rows are
/// the same forms, their medians and ratios the ones printed, each ratio its median over the
/// baseline's.
fn assert_ratio_table(driver: &str, stdout: &str, json: &Json, unit: &str, want: &[&str]) {
    let all = tables(stdout);
    assert_eq!(all.len(), 1, "{driver}: one table expected:\n{stdout}");
    let table = &all[0];
    assert_eq!(table.names(), want, "{driver}: the rows:\n{stdout}");
    assert_eq!(table.header[0], "form");
    let columns = &table.header[1..];
    assert!(!columns.is_empty(), "{driver}: no columns:\n{stdout}");
    for h in columns {
        assert!(
            h.ends_with(&format!(": × ({unit})")),
            "{driver}: the header {h:?} does not say the parenthesised number is {unit}"
        );
    }
    let baseline = json.str("baseline");
    assert!(want.contains(&baseline.as_str()), "baseline {baseline}");
    assert_eq!(json.len("rows"), want.len(), "{driver}: JSON rows");
    let base_row = want.iter().position(|w| *w == baseline).unwrap();
    for (i, row) in table.rows.iter().enumerate() {
        assert_eq!(row.len(), columns.len() + 1, "{driver}: {row:?}");
        assert_eq!(json.str(&format!("rows/{i}/form")), row[0]);
        for (j, cell) in row[1..].iter().enumerate() {
            let (ratio, value) = ratio_cell(cell);
            let what = format!("{driver}: {} {}", row[0], columns[j]);
            // A ratio prints as 0.00 when the baseline took over 200 times as long, which a
            // timing outlier on a loaded machine can make: a number is all that is asked of it.
            assert!(
                number(ratio).unwrap() >= 0.0 && number(value).unwrap() > 0.0,
                "{what}: {cell}"
            );
            if row[0] == baseline {
                assert_eq!(ratio, "1.00", "{what}: the baseline's own ratio");
            }
            // The JSON key of this column: cad lists its columns, rescore's are its modes.
            let col = if json.has(&format!("columns/{j}")) {
                json.str(&format!("columns/{j}"))
            } else {
                columns[j].split(':').next().unwrap().to_string()
            };
            let median = json.num(&format!("rows/{i}/median/{col}"));
            let exact_ratio = json.num(&format!("rows/{i}/ratio/{col}"));
            let base = json.num(&format!("rows/{base_row}/median/{col}"));
            assert_rounds(value, median, &what);
            assert_rounds(ratio, exact_ratio, &what);
            assert!(
                (exact_ratio - median / base).abs() <= 1e-9 * exact_ratio,
                "{what}: JSON ratio {exact_ratio}, median {median} over baseline {base}"
            );
            let samples = format!("rows/{i}/samples/{col}");
            assert!(json.len(&samples) >= 1, "{what}: no samples");
        }
    }
}

fn assert_verified(driver: &str, out: &Output) {
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("verified:"),
        "{driver}: no verification reported on stderr:\n{stderr}"
    );
}

/// Every form has its row (the six engines, the native command, the naive client and, with
/// redis-server, the reference), and `--json` holds the same numbers.
#[test]
fn cad_benchmark_driver_runs_at_tiny_size() {
    let driver = "cad_benchmark.py";
    let JsonRun {
        out,
        stdout,
        data,
        reference,
    } = run_with_json(driver, &["--keys", "50", "--rounds", "1"], true);
    assert_verified(driver, &out);
    let mut want: Vec<&str> = ENGINE_ROWS.to_vec();
    want.extend(["native GOBLIN.CAD", "naive GET+DEL"]);
    if reference {
        want.push(REFERENCE_ROW);
    }
    data.assert_head(
        "cad",
        "us/op",
        "Goblin Core: ",
        reference.then_some("redis-server: "),
    );
    assert_eq!(data.str("baseline"), "native GOBLIN.CAD");
    assert_eq!(data.len("columns"), 4, "seq and pipe, tcp and unix");
    assert_ratio_table(driver, &stdout, &data, "µs/op", &want);
}

/// Under callgrind, every form is counted, and a script costs more instructions than the native
/// command it spells out, and than its engine's noop script, which calls no command (a count that
/// came out of nowhere would not be ordered so); the cells are ratios to the native command first.
#[test]
fn instructions_benchmark_driver_runs_at_tiny_size() {
    let driver = "instructions_benchmark.py";
    let JsonRun {
        out, stdout, data, ..
    } = run_with_json(driver, &["--ops", "100"], false);
    assert_verified(driver, &out);
    data.assert_head("cad_instructions", "instructions/op", "Goblin Core: ", None);
    let all = tables(&stdout);
    assert_eq!(all.len(), 2, "the forms and the floors:\n{stdout}");
    let (forms, floors) = (&all[0], &all[1]);
    for t in &all {
        assert_eq!(t.header, ["form", "× (instructions/op)"], "{stdout}");
    }
    let count = |t: &Table, form: &str| -> f64 {
        let (ratio, value) = ratio_cell(&t.row(form)[1]);
        assert!(number(ratio).unwrap() > 0.0, "{form}: {ratio}");
        number(value).unwrap()
    };
    let native = count(forms, "native GOBLIN.CAD");
    assert_eq!(ratio_cell(&forms.row("native GOBLIN.CAD")[1]).0, "1.00");
    for form in ENGINE_ROWS.iter().chain(&["naive GET+DEL"]) {
        let count = count(forms, form);
        assert!(
            count > native && native > 100.0,
            "{form}: {count} against native {native}"
        );
    }
    for form in ENGINE_ROWS {
        let floor = count(floors, &format!("{form} noop"));
        let cad = count(forms, form);
        assert!(
            floor > 100.0 && floor < cad,
            "{form}: noop {floor}, cad {cad}"
        );
    }
    for (key, table) in [("rows", forms), ("floor_rows", floors)] {
        assert_eq!(data.len(key), table.rows.len(), "{key}");
        for (i, row) in table.rows.iter().enumerate() {
            assert_eq!(data.str(&format!("{key}/{i}/form")), row[0]);
            let exact = data.num(&format!("{key}/{i}/instructions_per_op"));
            assert_rounds(ratio_cell(&row[1]).1, exact, &row[0]);
        }
    }
}

/// Every engine and the native command have a row, on the Unix socket of the server the driver
/// started, and the JSON file holds the same numbers.
#[test]
fn leaderboard_rescore_benchmark_driver_runs_at_tiny_size() {
    let driver = "leaderboard_rescore_benchmark.py";
    let JsonRun {
        out,
        stdout,
        data,
        reference,
    } = run_with_json(driver, &TINY_BOARD, true);
    assert_verified(driver, &out);
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .contains("over the Unix socket,"),
        "the header names the transport:\n{stdout}"
    );
    // Both reading orders by default: each script as written, then with ZRANGE ... REV.
    let mut want: Vec<String> = ENGINE_ROWS
        .iter()
        .flat_map(|e| [e.to_string(), format!("{e} REV")])
        .collect();
    want.push("native GOBLIN.TD_LEADERBOARD_RESCORE".into());
    if reference {
        want.push(REFERENCE_ROW.into());
        want.push("lua EVALSHA REV (redis-server)".into());
    }
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    data.assert_head(
        "leaderboard_rescore",
        "us/call",
        "Goblin Core: ",
        reference.then_some("redis-server: "),
    );
    assert_eq!(data.str("baseline"), "native GOBLIN.TD_LEADERBOARD_RESCORE");
    assert_eq!(data.str("transports/0"), "unix");
    assert_ratio_table(driver, &stdout, &data, "µs/call", &want);
    let modes: Vec<String> = tables(&stdout)[0].header[1..]
        .iter()
        .map(|h| h.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(modes, ["LINEAR", "EXP", "STEP"]);
}

/// On a running server reached by `--port` alone (TCP, no Unix socket) the header says TCP, and
/// the driver deletes its board afterwards.
#[test]
fn leaderboard_rescore_benchmark_names_tcp_on_a_tcp_only_server() {
    let driver = "leaderboard_rescore_benchmark.py";
    let server = goblin(&[]);
    let port = server.port.to_string();
    let mut args = vec!["--port", &port, "--engines", "lua"];
    args.extend(TINY_BOARD);
    let out = run_driver(driver, &args);
    let stdout = succeeded(driver, &out);
    let header = stdout.lines().next().unwrap();
    assert!(
        header.contains("over TCP,") && !header.contains("Unix socket"),
        "the header must name TCP: {header}"
    );
    let table = &tables(&stdout)[0];
    assert_eq!(
        table.names(),
        [
            "lua EVALSHA",
            "lua EVALSHA REV",
            "native GOBLIN.TD_LEADERBOARD_RESCORE"
        ]
    );
    assert_eq!(
        server.raw().cmd_str("DBSIZE"),
        b":0\r\n",
        "the board is left"
    );
}

/// `--chart`: without matplotlib a usage error (status 2) before any server starts; with it, a
/// PNG file.
#[test]
fn chart_option_needs_matplotlib_or_draws_a_png() {
    let driver = "leaderboard_rescore_benchmark.py";
    let has_matplotlib = Command::new("python3")
        .args(["-c", "import matplotlib"])
        .output()
        .expect("cannot run python3")
        .status
        .success();
    let dir = scratch_dir("bench-chart");
    let png = dir.join("rescore.png");
    let mut args = vec!["--engines", "lua", "--chart", png.to_str().unwrap()];
    args.extend(TINY_BOARD);
    let out = run_driver(driver, &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let written = std::fs::read(&png).ok();
    let _ = std::fs::remove_dir_all(&dir);
    if has_matplotlib {
        assert!(out.status.success(), "{stdout}\n{stderr}");
        let png = written.expect("no chart written");
        assert!(
            png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "not a PNG chart ({} bytes)",
            png.len()
        );
    } else {
        assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
        assert!(
            stderr.contains("--chart needs matplotlib"),
            "no clear message: {stderr}"
        );
        assert!(
            !stderr.contains("starting"),
            "no server may start: {stderr}"
        );
        assert!(stdout.is_empty() && written.is_none(), "{stdout}");
    }
}

/// Every engine's loop ran (the driver checks each loop's reply) and has a row with a positive
/// cost per call (enough calls that the call loop's time is well above the empty loop's), and
/// the JSON file holds the same rows; with redis-server, its Lua's row too.
#[test]
fn nested_call_benchmark_driver_runs_at_tiny_size() {
    let driver = "nested_call_benchmark.py";
    let JsonRun {
        stdout,
        data,
        reference,
        ..
    } = run_with_json(driver, &["--calls", "50000", "--rounds", "3"], true);
    data.assert_head(
        "nested_call",
        "us/call",
        "Goblin Core: ",
        reference.then_some("redis-server: "),
    );
    let mut want: Vec<&str> = ENGINE_ROWS.to_vec();
    if reference {
        want.push(REFERENCE_ROW);
    }
    let table = &tables(&stdout)[0];
    assert_eq!(table.header, ["form", "µs/call"]);
    assert_eq!(table.names(), want, "{stdout}");
    assert_eq!(data.len("rows"), want.len());
    for (i, row) in table.rows.iter().enumerate() {
        let us = number(&row[1]).unwrap_or_else(|| panic!("{row:?}"));
        assert!(us > 0.0, "{}: {us} µs per call\n{stdout}", row[0]);
        assert_eq!(data.str(&format!("rows/{i}/form")), row[0]);
        assert_rounds(&row[1], data.num(&format!("rows/{i}/median")), &row[0]);
        assert_eq!(data.len(&format!("rows/{i}/samples")), 3);
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

/// `server_benchmark.py`'s tiniest run: 5,000 requests from 5 clients, at pipelines 1 and 16.
const TINY_SERVER_RUN: [&str; 6] = [
    "--requests",
    "5000",
    "--clients",
    "5",
    "--pipelines",
    "1,16",
];

/// `server_benchmark.py`'s table and JSON file: the header puts the ratio before the ops/s; for
/// every transport, pipeline and test a row of a positive ratio, Goblin ops/s and Redis ops/s,
/// and a JSON row with the same numbers; no other JSON row. (Pipelines 1 and 16: TINY_SERVER_RUN.)
fn assert_server_rows(stdout: &str, data: &Json, tests: &[&str]) {
    data.assert_head("server", "ops/s", "Goblin Core: ", Some("Redis: "));
    let header = stdout
        .lines()
        .find(|l| l.starts_with("transport"))
        .unwrap_or_else(|| panic!("no table header:\n{stdout}"));
    let at = |h: &str| header.find(h).unwrap_or_else(|| panic!("{h}: {header}"));
    assert!(
        at("test") < at("Goblin/Redis") && at("Goblin/Redis") < at("Goblin ops/s"),
        "the ratio comes first: {header}"
    );
    assert!(at("Goblin ops/s") < at("Redis ops/s"), "{header}");
    let mut rows = 0;
    for transport in ["tcp", "unix"] {
        for pipeline in ["1", "16"] {
            for &test in tests {
                let needle = format!("  {test} ");
                let row = stdout.lines().find(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(transport) && w.next() == Some(pipeline) && l.contains(&needle)
                });
                let row = row.unwrap_or_else(|| {
                    panic!("no {transport} -P {pipeline} {test} row:\n{stdout}")
                });
                let rest: Vec<&str> = row[row.find(&needle).unwrap() + needle.len()..]
                    .split_whitespace()
                    .collect();
                let [ratio, g, r, cpu_ratio, g_cpu, r_cpu] = rest[..] else {
                    panic!("not ratio, Goblin ops/s, Redis ops/s, CPU ratio, µs, µs: {row:?}")
                };
                assert!(ratio.ends_with('×'), "{row:?}");
                for v in [ratio, g, r] {
                    assert!(number(v).is_some_and(|v| v > 0.0), "{v} in {row:?}");
                }
                // A tiny run may take less CPU than one clock tick: 0.00 µs, and no ratio.
                for v in [g_cpu, r_cpu] {
                    assert!(number(v).is_some_and(|v| v >= 0.0), "{v} in {row:?}");
                }
                assert!(
                    cpu_ratio == "-" || (cpu_ratio.ends_with('×') && number(cpu_ratio).is_some()),
                    "{row:?}"
                );
                // Its JSON row: the same point, the same numbers.
                let i = (0..data.len("rows"))
                    .find(|i| {
                        data.str(&format!("rows/{i}/transport")) == transport
                            && data.raw(&format!("rows/{i}/pipeline")) == pipeline
                            && data.str(&format!("rows/{i}/test")) == test
                    })
                    .unwrap_or_else(|| panic!("no JSON row for {row:?}"));
                assert_rounds(g, data.num(&format!("rows/{i}/goblin")), row);
                assert_rounds(r, data.num(&format!("rows/{i}/redis")), row);
                assert_rounds(ratio, data.num(&format!("rows/{i}/ratio")), row);
                let cpu = |who: &str| data.num(&format!("rows/{i}/cpu_us_per_request/{who}"));
                assert_rounds(g_cpu, cpu("goblin"), row);
                assert_rounds(r_cpu, cpu("redis"), row);
                rows += 1;
            }
        }
    }
    assert_eq!(data.len("rows"), rows, "one JSON row per printed row");
}

/// `server_benchmark.py --suite types` measures every data-type workload (the built-in `-t` tests
/// and the custom ZRANGE one over a preloaded sorted set) on both servers, with a ratio per point
/// before the ops/s; `--tests evalsha_cad` adds the compare-and-delete script by EVALSHA; the
/// `--json` file has a row for every printed one, with the same numbers.
#[test]
fn server_benchmark_types_suite_runs_at_tiny_size() {
    let driver = "server_benchmark.py";
    let mut args = vec![
        "--suite",
        "types",
        "--tests",
        "evalsha_cad",
        "--zrange-members",
        "200",
    ];
    args.extend(TINY_SERVER_RUN);
    let JsonRun { stdout, data, .. } = run_with_json(driver, &args, false);
    let tests = [
        "LPUSH",
        "LPOP",
        "SADD",
        "HSET",
        "ZADD",
        "ZRANGE 0 9 WITHSCORES",
        "EVALSHA cad.lua (missing keys)",
    ];
    assert_server_rows(&stdout, &data, &tests);
    // An unknown test is refused before any server starts.
    let out = run_driver(driver, &["--tests", "set,nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown test(s) nosuch"),
        "{}",
        text(&out.stderr)
    );
}

/// `server_benchmark.py --suite streams`: XADD to a stream recreated before every run, XRANGE
/// COUNT 10 over a prepared stream, and XREADGROUP COUNT 10 then XACK of what it delivered, on
/// both servers, ratio first, the JSON file the same rows.
#[test]
fn server_benchmark_streams_suite_runs_at_tiny_size() {
    let driver = "server_benchmark.py";
    let mut args = vec!["--suite", "streams", "--xrange-entries", "200"];
    args.extend(TINY_SERVER_RUN);
    let JsonRun { stdout, data, .. } = run_with_json(driver, &args, false);
    let tests = [
        "XADD * f v",
        "XRANGE - + COUNT 10",
        "XREADGROUP COUNT 10 >",
        "XACK 10 delivered IDs",
    ];
    assert_server_rows(&stdout, &data, &tests);
    assert_eq!(data.num("xrange_entries"), 200.0);
}

/// `stream_memory_benchmark.py` fills a fresh stream on each server with XADD and prints
/// used_memory's ratio first (then the stream's own share and the resident set), the JSON file the
/// same figures.
#[test]
fn stream_memory_benchmark_runs_at_tiny_size() {
    let driver = "stream_memory_benchmark.py";
    let JsonRun { stdout, data, .. } = run_with_json(driver, &["--entries", "2000"], false);
    data.assert_head("stream_memory", "bytes", "Goblin Core: ", Some("Redis: "));
    assert_eq!(data.num("entries"), 2000.0);
    let table = &tables(&stdout)[0];
    assert_eq!(
        table.header,
        ["measure", "Goblin/Redis", "Goblin Core", "Redis"]
    );
    let names = [
        "used_memory",
        "used_memory less at start",
        "used_memory_rss",
    ];
    assert_eq!(table.names(), names, "{stdout}");
    assert_eq!(data.len("rows"), names.len());
    for (i, row) in table.rows.iter().enumerate() {
        let [name, ratio, g, r] = &row[..] else {
            panic!("{row:?}")
        };
        assert!(ratio.ends_with('×'), "no ratio first in {row:?}");
        assert_eq!(data.str(&format!("rows/{i}/measure")), *name);
        let (jg, jr) = (
            data.num(&format!("rows/{i}/goblin")),
            data.num(&format!("rows/{i}/redis")),
        );
        assert!(jg > 0.0 && jr > 0.0, "{name}: {jg} {jr}");
        assert_rounds(g, jg, name);
        assert_rounds(r, jr, name);
        assert_rounds(ratio, jg / jr, name);
    }
}

/// `keyspace_memory_benchmark.py` loads every shape into both servers and prints, for each, the
/// net RSS and net used_memory rows, ratio first, then both figures and both per item; the
/// `--json` file holds the same rows.
#[test]
fn keyspace_memory_benchmark_runs_at_tiny_size() {
    let driver = "keyspace_memory_benchmark.py";
    let args = [
        "--keys",
        "20000",
        "--members",
        "20000",
        "--small-hashes",
        "2000",
    ];
    let JsonRun { stdout, data, .. } = run_with_json(driver, &args, false);
    data.assert_head("keyspace_memory", "bytes", "Goblin Core: ", Some("Redis: "));
    assert_eq!(data.num("keys"), 20000.0);
    let table = &tables(&stdout)[0];
    assert_eq!(
        table.header,
        [
            "shape",
            "measure",
            "Goblin/Redis",
            "Goblin Core",
            "Redis",
            "Goblin/item",
            "Redis/item"
        ]
    );
    let shapes = ["strings", "hash", "set", "zset", "small-hashes"];
    assert_eq!(table.rows.len(), shapes.len() * 2, "{stdout}");
    assert_eq!(data.len("rows"), table.rows.len());
    for (i, row) in table.rows.iter().enumerate() {
        let [_, measure, ratio, g, r, _, _] = &row[..] else {
            panic!("{row:?}")
        };
        assert_eq!(data.str(&format!("rows/{i}/shape")), shapes[i / 2]);
        assert_eq!(data.str(&format!("rows/{i}/measure")), *measure);
        let (jg, jr) = (
            data.num(&format!("rows/{i}/goblin")),
            data.num(&format!("rows/{i}/redis")),
        );
        assert_rounds(g, jg, measure);
        assert_rounds(r, jr, measure);
        // Allocated bytes always grow with the data; the resident set may not at this size.
        if measure == "net used_memory" {
            assert!(jg > 0.0 && jr > 0.0, "{row:?}");
            assert_rounds(ratio, jg / jr, measure);
        }
    }
}

/// `persistence_benchmark.py` measures SET with the AOF on (both fsync policies) and a BGSAVE with
/// a pinging client on both servers, and prints a ratio for each, before the two figures; the
/// `--json` file holds the same rows.
#[test]
fn persistence_benchmark_runs_at_tiny_size() {
    let driver = "persistence_benchmark.py";
    let args = ["--requests", "500", "--clients", "5", "--keys", "500"];
    let JsonRun { stdout, data, .. } = run_with_json(driver, &args, false);
    data.assert_head("persistence", "null", "Goblin Core: ", Some("Redis: "));
    let table = &tables(&stdout)[0];
    assert_eq!(
        table.header,
        ["measure", "Goblin/Redis", "Goblin Core", "Redis"]
    );
    // (the row's name, its JSON unit, the table's scale of the JSON figure)
    let want = [
        ("SET ops/s, appendfsync everysec", "ops/s", 1.0),
        ("SET ops/s, appendfsync always", "ops/s", 1.0),
        ("BGSAVE 500 keys, s", "s", 1.0),
        ("longest stall during BGSAVE, ms", "s", 1000.0),
    ];
    let names: Vec<&str> = want.iter().map(|w| w.0).collect();
    assert_eq!(table.names(), names, "{stdout}");
    assert_eq!(data.len("rows"), want.len());
    for (i, (row, (name, unit, scale))) in table.rows.iter().zip(want).enumerate() {
        let [_, ratio, g, r] = &row[..] else {
            panic!("{name}: {row:?}")
        };
        assert!(ratio.ends_with('×'), "{name}: no ratio first in {row:?}");
        assert!(
            number(ratio).is_some_and(|v| v > 0.0),
            "{name}: no ratio in {row:?}"
        );
        assert_eq!(data.str(&format!("rows/{i}/label")), name);
        assert_eq!(data.str(&format!("rows/{i}/unit")), unit);
        let (jg, jr) = (
            data.num(&format!("rows/{i}/goblin")),
            data.num(&format!("rows/{i}/redis")),
        );
        assert_rounds(g, jg * scale, name);
        assert_rounds(r, jr * scale, name);
        assert_rounds(ratio, data.num(&format!("rows/{i}/ratio")), name);
        assert_rounds(ratio, jg / jr, name);
    }
}

/// `lua_string_hash_benchmark.py` times, on both servers, the two Lua workloads whose strings differ
/// only in their middle bytes (LRANGE of such values, and building them in a script), ratio first.
#[test]
fn lua_string_hash_benchmark_runs_at_tiny_size() {
    let driver = "lua_string_hash_benchmark.py";
    let args = ["--values", "200", "--rounds", "1"];
    let JsonRun { stdout, data, .. } = run_with_json(driver, &args, true);
    assert_eq!(data.str("benchmark"), "lua_string_hash");
    let table = &tables(&stdout)[0];
    assert_eq!(table.names(), ["LRANGE", "build"], "{stdout}");
    for row in &table.rows {
        let [_, ratio, redis_ms] = &row[..] else {
            panic!("{row:?}")
        };
        assert!(ratio.contains('×'), "no ratio first in {row:?}");
        assert!(number(redis_ms).is_some_and(|v| v > 0.0), "{row:?}");
    }
}

/// `replication_benchmark.py`: writes with 0, 1 and 2 replicas, the catch-up WAIT, and a full
/// sync, on both servers; every row's ratio is Goblin Core's value over Redis's, as printed.
#[test]
fn replication_benchmark_driver_runs_at_tiny_size() {
    let driver = "replication_benchmark.py";
    let dir = scratch_dir("bench-replication");
    let json = dir.join("results.json");
    let out = run_driver(
        driver,
        &[
            "--requests",
            "2000",
            "--keys",
            "500",
            "--rounds",
            "1",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stdout = succeeded(driver, &out);
    let table = &tables(&stdout)[0];
    assert_eq!(table.header, ["figure", "ratio", "Goblin Core", "Redis"]);
    let names = [
        "SET req/s, 0 replica(s)",
        "SET req/s, 1 replica(s)",
        "SET req/s, 2 replica(s)",
        "catch-up ms after the run, 1 replica(s)",
        "catch-up ms after the run, 2 replica(s)",
        "full sync s, 500 keys",
    ];
    assert_eq!(table.names(), names);
    for name in names {
        let row = table.row(name);
        let (g, r): (f64, f64) = (row[2].parse().unwrap(), row[3].parse().unwrap());
        let ratio: f64 = row[1].trim_end_matches('×').parse().unwrap();
        assert!(g > 0.0 && r >= 0.0, "{name}: {row:?}");
        // Values shown to a tenth or less are too rounded to recompute the ratio from.
        if r >= 100.0 {
            assert!(
                (ratio - g / r).abs() <= 0.01 + 0.01 * ratio,
                "{name}: {row:?}"
            );
        }
    }
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.contains("\"full_sync\"") && text.contains("\"set_2\""),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
