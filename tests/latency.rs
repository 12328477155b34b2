//! LATENCY and latency tracking. What does not depend on timing (help, errors, the reports with
//! no events, the percentile directives) is compared with redis-server byte for byte; reports of
//! a spike made with DEBUG SLEEP are compared with their numbers blanked; histograms and INFO
//! latencystats are checked for their structure and counts, which timing does not change.

mod common;
use common::{compare_both, goblin, scenarios, show, Raw};

#[test]
fn latency_matches_redis() {
    compare_both(&[&[
        "LATENCY HELP",
        "LATENCY DOCTOR",
        "LATENCY LATEST",
        "LATENCY HISTORY command",
        "LATENCY GRAPH command",
        "LATENCY RESET",
        "LATENCY RESET command fast-command",
        "LATENCY FOO",
        "LATENCY",
        "LATENCY GRAPH",
        "LATENCY LATEST x",
        "LATENCY HISTOGRAM nosuchcommand",
        "CONFIG SET latency-monitor-threshold -1",
        "CONFIG SET latency-monitor-threshold x",
        "CONFIG SET latency-monitor-threshold 100",
        "CONFIG GET latency-monitor-threshold",
        "LATENCY DOCTOR",
        "CONFIG SET latency-tracking-info-percentiles abc",
        "CONFIG SET latency-tracking-info-percentiles 101",
        "CONFIG SET latency-tracking-info-percentiles -1",
        "CONFIG SET latency-tracking-info-percentiles \"99.9 50\"",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG SET latency-tracking-info-percentiles 1e1",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG SET latency-tracking-info-percentiles 0.0001",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG SET latency-tracking-info-percentiles \"\"",
        "CONFIG GET latency-tracking-info-percentiles",
        "CONFIG SET latency-tracking-info-percentiles \"50 99 99.9\"",
        "CONFIG SET latency-tracking maybe",
        "CONFIG SET latency-tracking no",
        "CONFIG GET latency-tracking",
        "CONFIG SET latency-tracking yes",
        "CONFIG SET latency-monitor-threshold 0",
    ]]);
}

/// Every run of digits as `N`: latencies and times differ from run to run.
fn blank_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// A spike made by DEBUG SLEEP: LATEST, HISTORY, GRAPH and DOCTOR say the same as Redis's but for
/// the numbers.
#[test]
fn spikes_are_reported_as_redis() {
    let logs = scenarios(
        &["--enable-debug-command", "yes"],
        &[&[
            "CONFIG SET latency-monitor-threshold 10",
            "DEBUG SLEEP 0.05",
            "LATENCY HISTORY nosuch",
            "LATENCY RESET fast-command",
        ]],
    );
    assert_eq!(logs.len(), 1);
    // The replies that carry numbers, on each server with the numbers blanked.
    let spike = |c: &mut Raw| -> Vec<String> {
        c.cmd_str("CONFIG SET latency-monitor-threshold 10");
        c.cmd_str("LATENCY RESET");
        c.cmd_str("DEBUG SLEEP 0.05");
        let mut out = Vec::new();
        for line in [
            "LATENCY LATEST",
            "LATENCY HISTORY command",
            "LATENCY GRAPH command",
            "LATENCY DOCTOR",
        ] {
            out.push(format!(
                "{line} -> {}",
                blank_numbers(&show(&c.cmd_str(line)))
            ));
        }
        c.cmd_str("CONFIG SET latency-monitor-threshold 0");
        out
    };
    let r = common::redis(&["--enable-debug-command", "yes"]);
    let g = goblin(&["--enable-debug-command", "yes"]);
    let (want, got) = (spike(&mut r.raw()), spike(&mut g.raw()));
    assert_eq!(got, want);
    // And Goblin Core's own numbers: the sleep was at least 50 ms.
    let mut c = g.raw();
    c.cmd_str("CONFIG SET latency-monitor-threshold 10");
    c.cmd_str("DEBUG SLEEP 0.05");
    let latest = String::from_utf8_lossy(&c.cmd_str("LATENCY LATEST")).into_owned();
    let fields: Vec<&str> = latest.split("\r\n").collect();
    let ms: i64 = fields[fields.len() - 3]
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!((50..1000).contains(&ms), "{latest}");
    let doctor = String::from_utf8_lossy(&c.cmd_str("LATENCY DOCTOR")).into_owned();
    // Both sleeps may fall in one second, which keeps one sample: the worse.
    assert!(
        doctor.contains("1. command: ") && doctor.contains(" latency spikes (average "),
        "{doctor}"
    );
    assert_eq!(c.cmd_str("LATENCY RESET command"), b":1\r\n");
    assert_eq!(c.cmd_str("LATENCY LATEST"), b"*0\r\n");
}

/// A reply's integers in order.
fn ints(b: &[u8]) -> Vec<i64> {
    String::from_utf8_lossy(b)
        .split("\r\n")
        .filter_map(|l| l.strip_prefix(':'))
        .map(|n| n.parse().unwrap())
        .collect()
}

/// LATENCY HISTOGRAM counts every call, its buckets are powers of two of microseconds (as hdr's
/// logarithmic iteration labels them) with growing cumulative counts; it names subcommands
/// `container|sub`, and a container's name lists them.
#[test]
fn histograms_count_every_call() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for i in 0..50 {
        c.cmd_str(&format!("SET k{i} v"));
    }
    c.cmd_str("CONFIG GET maxmemory");
    c.cmd_str("CONFIG GET hz");
    let r = c.cmd_str("LATENCY HISTOGRAM set");
    let text = String::from_utf8_lossy(&r).into_owned();
    assert!(
        text.starts_with(
            "*2\r\n$3\r\nset\r\n*4\r\n$5\r\ncalls\r\n:50\r\n$14\r\nhistogram_usec\r\n"
        ),
        "{text}"
    );
    let n = ints(&r);
    assert_eq!(n[0], 50);
    let pairs: Vec<(i64, i64)> = n[1..].chunks(2).map(|p| (p[0], p[1])).collect();
    let labels = [
        1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454,
    ];
    let mut prev = 0;
    for &(us, count) in &pairs {
        assert!(labels.contains(&us), "bucket {us} in {text}");
        assert!(count > prev, "{text}");
        prev = count;
    }
    assert_eq!(prev, 50, "{text}");
    let config = String::from_utf8_lossy(&c.cmd_str("LATENCY HISTOGRAM config")).into_owned();
    assert!(
        config.starts_with("*2\r\n$10\r\nconfig|get\r\n"),
        "{config}"
    );
    assert!(config.contains("calls\r\n:2\r\n"), "{config}");
    // Without names: every command that ran, LATENCY HISTOGRAM itself included.
    let all = String::from_utf8_lossy(&c.cmd_str("LATENCY HISTOGRAM")).into_owned();
    for name in [
        "$3\r\nset\r\n",
        "$10\r\nconfig|get\r\n",
        "$17\r\nlatency|histogram\r\n",
    ] {
        assert!(all.contains(name), "{name} in {all}");
    }
    // INFO latencystats: the configured percentiles of each command.
    let info = String::from_utf8_lossy(&c.cmd_str("INFO latencystats")).into_owned();
    let set_line = info
        .lines()
        .find(|l| l.starts_with("latency_percentiles_usec_set:"))
        .unwrap_or_else(|| panic!("{info}"));
    let values: Vec<&str> = set_line.split(':').nth(1).unwrap().split(',').collect();
    assert_eq!(values.len(), 3, "{set_line}");
    for (v, p) in values.iter().zip(["p50=", "p99=", "p99.9="]) {
        let n = v.strip_prefix(p).unwrap_or_else(|| panic!("{set_line}"));
        let (_, decimals) = n.split_once('.').unwrap();
        assert_eq!(decimals.len(), 3, "{set_line}");
    }
    c.cmd_str("CONFIG SET latency-tracking-info-percentiles 0.0001");
    let info = String::from_utf8_lossy(&c.cmd_str("INFO latencystats")).into_owned();
    assert!(
        info.contains("latency_percentiles_usec_set:p0.0001="),
        "{info}"
    );
    // CONFIG RESETSTAT empties the histograms; latency-tracking no stops them.
    c.cmd_str("CONFIG RESETSTAT");
    c.cmd_str("CONFIG SET latency-tracking no");
    c.cmd_str("SET k v");
    assert_eq!(c.cmd_str("LATENCY HISTOGRAM set"), b"*0\r\n");
}
