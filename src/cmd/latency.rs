//! LATENCY (Redis's latency.c): the commands that read the latency monitor and the per-command
//! latency histograms, which `server::latency` keeps.
//!
//! - The monitor: events that last at least `latency-monitor-threshold` ms (`sample`, called where
//!   Redis calls `latencyAddSampleIfNeeded`: commands, the active expiry cycle, evictions, AOF
//!   writes and fsyncs) keep, per event, the worst sample of each second in a ring of 160, and the
//!   worst of all time. LATENCY LATEST, HISTORY, RESET, GRAPH (Redis's ASCII sparkline) and DOCTOR
//!   (Redis's report and advice) read them.
//! - Tracking: with `latency-tracking`, every command's duration is counted (`track`, from the
//!   gate) in a histogram with Redis's hdr_histogram buckets (nanoseconds, two significant
//!   digits), which LATENCY HISTOGRAM shows as a cumulative distribution and INFO latencystats as
//!   the percentiles of `latency-tracking-info-percentiles`.

use super::{Args, CmdResult, Command, Ctx, LOADING, STALE};
use crate::server::latency::{unix_now, Sample, Series};
use crate::server::State;

const GROUP: &str = "server";

/// LATENCY LATEST
///
/// # Format
/// `LATENCY LATEST` — for each event: its name, the time of its latest sample, that sample's and
/// the worst latency in ms.
fn latency_latest(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let events = &ctx.srv.latency.events;
    ctx.out.array(events.len());
    for (name, s) in events {
        let last = s.latest();
        ctx.out.array(4);
        ctx.out.bulk_str(name);
        ctx.out.int(last.time);
        ctx.out.int(last.latency as i64);
        ctx.out.int(s.max as i64);
    }
    Ok(())
}

/// LATENCY HISTORY event
///
/// # Format
/// `LATENCY HISTORY event` — the event's samples, oldest first, each its time and latency (ms).
fn latency_history(ctx: &mut Ctx, args: Args) -> CmdResult {
    let Some((_, s)) = ctx.srv.latency.series(&args[2]) else {
        ctx.out.array(0);
        return Ok(());
    };
    let samples: Vec<Sample> = s.in_order().collect();
    ctx.out.array(samples.len());
    for smp in samples {
        ctx.out.array(2);
        ctx.out.int(smp.time);
        ctx.out.int(smp.latency as i64);
    }
    Ok(())
}

/// LATENCY RESET [event ...]
///
/// # Format
/// `LATENCY RESET [event ...]` — how many events were reset (all of them without arguments).
fn latency_reset(ctx: &mut Ctx, args: Args) -> CmdResult {
    let events = &mut ctx.srv.latency.events;
    let before = events.len();
    if args.len() == 2 {
        events.clear();
    } else {
        let names = args.tail(2);
        events.retain(|(name, _)| {
            !names
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name.as_bytes()))
        });
    }
    ctx.out.int((before - events.len()) as i64);
    Ok(())
}

/// LATENCY GRAPH event
///
/// # Format
/// `LATENCY GRAPH event` — an ASCII graph of the event's samples, as text.
fn latency_graph(ctx: &mut Ctx, args: Args) -> CmdResult {
    let Some((name, s)) = ctx.srv.latency.series(&args[2]) else {
        return Err(format!(
            "ERR No samples available for event '{}'",
            String::from_utf8_lossy(&args[2])
        )
        .into());
    };
    let graph = graph(name, s, unix_now());
    ctx.out.verbatim(graph.as_bytes());
    Ok(())
}

/// Redis's `latencyCommandGenSparkeline`: a header, a rule, then the samples as a sparkline of 4
/// rows, each labelled with how long ago it was.
fn graph(name: &str, s: &Series, now: i64) -> String {
    let samples: Vec<Sample> = s.in_order().collect();
    let min = samples.iter().map(|x| x.latency).min().unwrap_or(0);
    let max = samples.iter().map(|x| x.latency).max().unwrap_or(0);
    let labelled: Vec<(f64, String)> = samples
        .iter()
        .map(|x| {
            let ago = now - x.time;
            let label = match ago {
                ..=59 => format!("{ago}s"),
                60..=3599 => format!("{}m", ago / 60),
                3600..=86_399 => format!("{}h", ago / 3600),
                _ => format!("{}d", ago / 86_400),
            };
            (x.latency as f64, label)
        })
        .collect();
    let mut out = format!(
        "{name} - high {max} ms, low {min} ms (all time high {} ms)\n",
        s.max
    );
    out.push_str(&"-".repeat(GRAPH_COLUMNS));
    out.push('\n');
    sparkline(&mut out, &labelled, GRAPH_COLUMNS, 4);
    out
}

const GRAPH_COLUMNS: usize = 80;

/// Redis's sparkline.c with its fill option: each sample a column of `rows` rows of `_o#` with `|`
/// below, its label written downwards under a blank line; `columns` samples per block.
fn sparkline(out: &mut String, samples: &[(f64, String)], columns: usize, rows: usize) {
    const FILL: &[u8] = b"_o#";
    let min = samples.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let max = samples
        .iter()
        .map(|s| s.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let steps = (FILL.len() * rows) as i64;
    let relmax = if max - min == 0.0 { 1.0 } else { max - min };
    for (block, chunk) in samples.chunks(columns).enumerate() {
        if block > 0 {
            out.push('\n');
        }
        let mut row = 0;
        loop {
            let mut line = vec![b' '; chunk.len()];
            let mut more = false;
            for (j, (value, label)) in chunk.iter().enumerate() {
                // As C: the product truncated to an int, then divided.
                let mut step = (((value - min) * steps as f64) as i64 as f64 / relmax) as i64;
                step = step.clamp(0, steps - 1);
                if row < rows {
                    more = true;
                    let idx = step - ((rows - row - 1) * FILL.len()) as i64;
                    if (0..FILL.len() as i64).contains(&idx) {
                        line[j] = FILL[idx as usize];
                    } else if idx >= FILL.len() as i64 {
                        line[j] = b'|';
                    }
                } else if row == rows {
                    // The blank line between the graph and the labels.
                    more = true;
                    break;
                } else if let Some(&c) = label.as_bytes().get(row - rows - 1) {
                    more = true;
                    line[j] = c;
                }
            }
            if !more {
                break;
            }
            row += 1;
            out.push_str(&String::from_utf8_lossy(&line));
            out.push('\n');
        }
    }
}

/// Redis's `analyzeLatencyForEvent`.
struct Stats {
    samples: u64,
    avg: u64,
    mad: u64,
    /// Seconds since the oldest sample (at least 1).
    period: i64,
}

fn analyze(s: &Series, now: i64) -> Stats {
    let samples: Vec<Sample> = s.in_order().collect();
    let n = samples.len() as u64;
    if n == 0 {
        return Stats {
            samples: 0,
            avg: 0,
            mad: 0,
            period: 0,
        };
    }
    let avg = samples.iter().map(|x| x.latency).sum::<u64>() / n;
    let mad = samples
        .iter()
        .map(|x| (avg as i64 - x.latency as i64).unsigned_abs())
        .sum::<u64>()
        / n;
    let oldest = samples.iter().map(|x| x.time).min().unwrap_or(now);
    Stats {
        samples: n,
        avg,
        mad,
        period: (now - oldest).max(1),
    }
}

/// LATENCY DOCTOR
///
/// # Format
/// `LATENCY DOCTOR` — a report on the latency events and advice, as text.
fn latency_doctor(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let report = report(ctx.srv, unix_now(), anon_huge_pages() > 0);
    ctx.out.verbatim(report.as_bytes());
    Ok(())
}

/// Bytes of transparent huge pages the process uses (/proc/self/smaps's AnonHugePages).
fn anon_huge_pages() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .map(|s| {
            s.lines()
                .filter_map(|l| l.strip_prefix("AnonHugePages:"))
                .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .sum::<u64>()
                * 1024
        })
        .unwrap_or(0)
}

/// The pieces of advice the report may give, in the order it gives them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Advice {
    SlowlogEnabled,
    SlowlogTuning,
    SlowlogInspect,
    Scheduler,
    LocalDisk,
    Ssd,
    DataWriteback,
    DiskContention,
    NoAppendfsync,
    RelaxFsyncPolicy,
    Hz,
    LargeObjects,
    MassEviction,
    DisableThp,
}

const ADVICE_ORDER: [Advice; 14] = [
    Advice::SlowlogEnabled,
    Advice::SlowlogTuning,
    Advice::SlowlogInspect,
    Advice::Scheduler,
    Advice::LocalDisk,
    Advice::Ssd,
    Advice::DataWriteback,
    Advice::DiskContention,
    Advice::NoAppendfsync,
    Advice::RelaxFsyncPolicy,
    Advice::Hz,
    Advice::LargeObjects,
    Advice::MassEviction,
    Advice::DisableThp,
];

/// What each event suggests (with, for `command`, one of the slow log's two, by its setting).
const EVENT_ADVICE: &[(&str, &[Advice])] = {
    use Advice::*;
    &[
        ("command", &[SlowlogInspect, LargeObjects]),
        ("fast-command", &[Scheduler]),
        (
            "aof-write-pending-fsync",
            &[LocalDisk, DiskContention, Ssd, DataWriteback],
        ),
        (
            "aof-write-active-child",
            &[NoAppendfsync, DataWriteback, Ssd],
        ),
        ("aof-write-alone", &[LocalDisk, DataWriteback, Ssd]),
        ("aof-fsync-always", &[RelaxFsyncPolicy]),
        ("expire-cycle", &[Hz, LargeObjects]),
        ("eviction-del", &[LargeObjects]),
        ("eviction-cycle", &[MassEviction]),
    ]
};

/// Redis's text of a piece of advice; None when its setting makes it moot.
fn advice_text(a: Advice, cfg: &crate::config::Config) -> Option<String> {
    let threshold_us = cfg.latency_monitor_threshold.saturating_mul(1000);
    Some(match a {
        Advice::SlowlogEnabled => format!("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {threshold_us}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n"),
        Advice::SlowlogTuning => format!("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {threshold_us}'.\n"),
        Advice::SlowlogInspect => "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n".into(),
        Advice::Scheduler => "- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a computer / VM just for Redis if you are running other software in the same system.\n  3) Check if you have a \"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n".into(),
        Advice::LocalDisk => "- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n".into(),
        Advice::Ssd => "- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage and smaller final AOF rewrite buffer flushes). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n".into(),
        Advice::DataWriteback => "- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n".into(),
        Advice::DiskContention => "- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n".into(),
        Advice::NoAppendfsync => "- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n".into(),
        Advice::RelaxFsyncPolicy if cfg.appendfsync == "always" => "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n".into(),
        Advice::Hz if cfg.hz < 100 => "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n".into(),
        Advice::LargeObjects => "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n".into(),
        Advice::MassEviction => "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n".into(),
        Advice::DisableThp => "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n".into(),
        Advice::RelaxFsyncPolicy | Advice::Hz => return None,
    })
}

/// Redis's `createLatencyReport`: its texts, its advice for each kind of event.
fn report(srv: &State, now: i64, thp: bool) -> String {
    let cfg = &srv.config;
    let events = &srv.latency.events;
    if events.is_empty() && cfg.latency_monitor_threshold == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".into();
    }
    let mut out = String::new();
    // Every piece of advice an event or the process calls for, repeats included.
    let mut advice: Vec<Advice> = Vec::new();
    for (i, (name, s)) in events.iter().enumerate() {
        if i == 0 {
            out.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let st = analyze(s, now);
        out.push_str(&format!(
            "{}. {name}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.\n",
            i + 1,
            st.samples,
            st.avg,
            st.mad,
            st.period as f64 / st.samples as f64,
            s.max
        ));
        if *name == "command" {
            if cfg.slowlog_log_slower_than < 0 {
                advice.push(Advice::SlowlogEnabled);
            } else if cfg.slowlog_log_slower_than / 1000 > cfg.latency_monitor_threshold {
                advice.push(Advice::SlowlogTuning);
            }
        }
        if let Some((_, more)) = EVENT_ADVICE.iter().find(|(e, _)| e == name) {
            advice.extend_from_slice(more);
        }
    }
    if thp {
        advice.push(Advice::DisableThp);
    }
    if events.is_empty() && advice.is_empty() {
        out.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
        return out;
    }
    if advice.is_empty() {
        out.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
        return out;
    }
    out.push_str("\nI have a few advices for you:\n\n");
    for a in ADVICE_ORDER.iter().filter(|a| advice.contains(a)) {
        if let Some(text) = advice_text(*a, cfg) {
            out.push_str(&text);
        }
    }
    out
}

/// LATENCY HISTOGRAM [command ...]
///
/// # Format
/// `LATENCY HISTOGRAM [command ...]` — a map from each command (all that ran, or those named, with
/// a container's subcommands) to its `calls` and `histogram_usec`, the cumulative count of calls
/// at each power-of-two bucket of microseconds.
fn latency_histogram(ctx: &mut Ctx, args: Args) -> CmdResult {
    let table = &ctx.srv.table;
    let hists = &ctx.srv.latency.histograms;
    let has = |row: usize| hists.get(row).is_some_and(|h| h.is_some());
    let mut rows: Vec<usize> = Vec::new();
    if args.len() == 2 {
        rows.extend((0..table.rows.len()).filter(|&r| has(r)));
    } else {
        for name in args.tail(2).iter() {
            let Some(row) = table.find(name) else {
                continue;
            };
            if has(row) {
                rows.push(row);
            }
            for sub in table.rows[row].subcommands {
                if let Some(s) = table.find(sub.name.as_bytes()).filter(|&s| has(s)) {
                    rows.push(s);
                }
            }
        }
    }
    ctx.out.map(rows.len());
    for row in rows {
        let h = hists[row].as_deref().expect("rows with a histogram");
        ctx.out.bulk_str(table.rows[row].name);
        ctx.out.map(2);
        ctx.out.bulk_str("calls");
        ctx.out.int(h.total as i64);
        ctx.out.bulk_str("histogram_usec");
        let cdf = h.cdf();
        ctx.out.map(cdf.len());
        for (us, n) in cdf {
            ctx.out.int(us as i64);
            ctx.out.int(n as i64);
        }
    }
    Ok(())
}

const LATENCY_HELP: &[&str] = &[
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
];

/// LATENCY HELP
///
/// # Format
/// `LATENCY HELP` — the subcommands.
fn latency_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("LATENCY", LATENCY_HELP);
    Ok(())
}

const ALL_NODES: &str = "request_policy:all_nodes";
/// The flags and tips of every subcommand but HELP.
const FLAGS: u32 = super::ADMIN | super::NOSCRIPT | LOADING | STALE;
const REPORT_TIPS: &[&str] = &[
    "nondeterministic_output",
    ALL_NODES,
    "response_policy:special",
];

const LATENCY_SUBCOMMANDS: &[Command] = &[
    Command::new("latency|doctor", latency_doctor, 2, FLAGS)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Return a human readable latency analysis report.",
            "2.8.13",
            "O(1)",
            "",
        ),
    Command::new("latency|graph", latency_graph, 3, FLAGS)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Return a latency graph for the event.",
            "2.8.13",
            "O(1)",
            "event",
        ),
    Command::new("latency|history", latency_history, 3, FLAGS)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Return timestamp-latency samples for the event.",
            "2.8.13",
            "O(1)",
            "event",
        ),
    Command::new("latency|latest", latency_latest, 2, FLAGS)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Return the latest latency samples for all events.",
            "2.8.13",
            "O(1)",
            "",
        ),
    Command::new("latency|reset", latency_reset, -2, FLAGS)
        .tips(&[ALL_NODES, "response_policy:all_succeeded"])
        .group(GROUP)
        .doc(
            "Reset latency data for one or more events.",
            "2.8.13",
            "O(1)",
            "[event [event ...]]",
        ),
    Command::new("latency|histogram", latency_histogram, -2, FLAGS)
        .tips(REPORT_TIPS)
        .group(GROUP)
        .doc(
            "Return the cumulative distribution of latencies of a subset of commands or all.",
            "7.0.0",
            "O(N) where N is the number of commands with latency information being retrieved.",
            "[command [command ...]]",
        ),
    Command::new("latency|help", latency_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands.",
            "2.8.13",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[Command::container("latency", -2, LATENCY_SUBCOMMANDS)
    .group(GROUP)
    .doc(
        "A container for latency diagnostics commands",
        "2.8.13",
        "Depends on subcommand.",
        "",
    )];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::latency::Latency;

    /// The sparkline of Redis for three samples: a header, a rule, the graph and the labels.
    #[test]
    fn graph_draws_like_redis() {
        let mut l = Latency::default();
        l.add("command", 100, 10);
        l.add("command", 200, 20);
        l.add("command", 300, 30);
        let (name, s) = l.series(b"command").unwrap();
        let g = graph(name, s, 30);
        let want = "command - high 300 ms, low 100 ms (all time high 300 ms)\n".to_string()
            + &"-".repeat(80)
            + "\n  #\n _|\n ||\n_||\n   \n210\n00s\nss \n";
        assert_eq!(g, want);
    }
}
