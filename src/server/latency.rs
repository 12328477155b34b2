//! The latency monitor and the per-command latency histograms (Redis's latency.c and the latency
//! tracking of server.c); the LATENCY command that reads them is in `cmd/latency.rs`.
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

use crate::config::percentile_text;
use crate::server::State;
use crate::util::clock;

/// Samples kept per event (Redis's `LATENCY_TS_LEN`).
pub(crate) const SERIES_LEN: usize = 160;

#[derive(Clone, Copy, Default)]
pub(crate) struct Sample {
    /// Unix seconds; 0 for an empty slot.
    pub(crate) time: i64,
    /// Milliseconds.
    pub(crate) latency: u64,
}

pub(crate) struct Series {
    pub(crate) samples: [Sample; SERIES_LEN],
    /// The next slot to fill.
    pub(crate) next: usize,
    pub(crate) max: u64,
}

impl Series {
    /// The samples, oldest first.
    pub(crate) fn in_order(&self) -> impl Iterator<Item = Sample> + '_ {
        (0..SERIES_LEN)
            .map(move |j| self.samples[(self.next + j) % SERIES_LEN])
            .filter(|s| s.time != 0)
    }

    pub(crate) fn latest(&self) -> Sample {
        self.samples[(self.next + SERIES_LEN - 1) % SERIES_LEN]
    }
}

/// A command's latencies, counted by hdr_histogram bucket (nanoseconds).
#[derive(Default)]
pub struct Histogram {
    /// Counts by bucket index (`bucket_index`), grown to the highest bucket used.
    counts: Vec<u64>,
    pub(crate) total: u64,
}

/// hdr_histogram's range and precision as Redis sets them: 1 ns to 1 s, two significant digits
/// (256 sub-buckets: values below 256 exact, above them a resolution of 1/128 of a power of two).
const MIN_NS: u64 = 1;
const MAX_NS: u64 = 1_000_000_000;

/// The resolution of the bucket holding `v`.
fn resolution(v: u64) -> u64 {
    if v < 256 {
        1
    } else {
        1 << (63 - v.leading_zeros() - 7)
    }
}

fn lowest_equivalent(v: u64) -> u64 {
    v - v % resolution(v)
}

fn highest_equivalent(v: u64) -> u64 {
    lowest_equivalent(v) + resolution(v) - 1
}

/// Buckets in value order: below 256 one per value, then 128 per power of two.
fn bucket_index(v: u64) -> usize {
    if v < 256 {
        return v as usize;
    }
    let m = 63 - v.leading_zeros() as u64;
    let sub = v >> (m - 7);
    (256 + (m - 8) * 128 + (sub - 128)) as usize
}

/// The lowest value of bucket `i`.
fn bucket_value(i: usize) -> u64 {
    if i < 256 {
        return i as u64;
    }
    let (k, sub) = ((i - 256) / 128, (i - 256) % 128 + 128);
    (sub as u64) << (k + 1)
}

impl Histogram {
    fn record(&mut self, ns: u64) {
        let i = bucket_index(ns.clamp(MIN_NS, MAX_NS));
        if self.counts.len() <= i {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    /// (bucket's lowest value, count) of the buckets used, in value order.
    fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (bucket_value(i), n))
    }

    /// hdr_histogram's `hdr_value_at_percentile`, in nanoseconds.
    fn value_at_percentile(&self, p: f64) -> u64 {
        let wanted = ((p.min(100.0) / 100.0 * self.total as f64) + 0.5) as u64;
        let wanted = wanted.max(1);
        let mut seen = 0;
        for (bucket, n) in self.buckets() {
            seen += n;
            if seen >= wanted {
                return if p == 0.0 {
                    bucket
                } else {
                    highest_equivalent(bucket)
                };
            }
        }
        0
    }

    /// The cumulative distribution Redis replies (hdr's logarithmic iteration from 1024 ns, by
    /// powers of two): (bucket's upper bound in µs, durations up to it), each point where the
    /// count grew.
    pub(crate) fn cdf(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let (mut level, mut seen, mut prev) = (1024u64, 0u64, 0u64);
        let mut buckets = self.buckets().peekable();
        while prev < self.total {
            while let Some(&(b, n)) = buckets.peek() {
                if b > level {
                    break;
                }
                seen += n;
                buckets.next();
            }
            if seen > prev {
                out.push((highest_equivalent(level) / 1000, seen));
            }
            prev = seen;
            level *= 2;
        }
        out
    }
}

/// The latency state of the server.
#[derive(Default)]
pub struct Latency {
    /// Events in the order they first happened.
    pub(crate) events: Vec<(&'static str, Box<Series>)>,
    /// By command table row, created on a command's first call.
    pub(crate) histograms: Vec<Option<Box<Histogram>>>,
}

impl Latency {
    pub(crate) fn series(&self, event: &[u8]) -> Option<(&'static str, &Series)> {
        self.events
            .iter()
            .find(|(name, _)| name.as_bytes() == event)
            .map(|(name, s)| (*name, &**s))
    }

    /// Redis's `latencyAddSample`.
    pub(crate) fn add(&mut self, event: &'static str, ms: u64, now: i64) {
        let at = match self.events.iter().position(|(name, _)| *name == event) {
            Some(at) => at,
            None => {
                let series = Series {
                    samples: [Sample::default(); SERIES_LEN],
                    next: 0,
                    max: 0,
                };
                self.events.push((event, Box::new(series)));
                self.events.len() - 1
            }
        };
        let s = &mut self.events[at].1;
        s.max = s.max.max(ms);
        // One sample per second: the worst.
        let prev = (s.next + SERIES_LEN - 1) % SERIES_LEN;
        if s.samples[prev].time == now {
            s.samples[prev].latency = s.samples[prev].latency.max(ms);
            return;
        }
        s.samples[s.next] = Sample {
            time: now,
            latency: ms,
        };
        s.next = (s.next + 1) % SERIES_LEN;
    }

    /// CONFIG RESETSTAT: the histograms start again.
    pub fn reset_histograms(&mut self) {
        self.histograms.clear();
    }
}

pub(crate) fn unix_now() -> i64 {
    clock::wall_us() / 1_000_000
}

/// Records that `event` took `ms` milliseconds, if that reaches `latency-monitor-threshold`
/// (Redis's `latencyAddSampleIfNeeded`).
#[inline]
pub fn sample(srv: &mut State, event: &'static str, ms: u64) {
    let threshold = srv.config.latency_monitor_threshold;
    if threshold > 0 && ms >= threshold as u64 {
        srv.latency.add(event, ms, unix_now());
    }
}

/// Counts a run of the command at table row `row` that took `ns` nanoseconds, with `latency-tracking`
/// (as Redis, whole microseconds).
pub fn track(srv: &mut State, row: usize, ns: u64) {
    if !srv.config.latency_tracking {
        return;
    }
    let h = &mut srv.latency.histograms;
    if h.len() <= row {
        h.resize_with(row + 1, || None);
    }
    h[row]
        .get_or_insert_with(Default::default)
        .record(ns / 1000 * 1000);
}

/// INFO's latencystats section.
pub fn info(srv: &State, o: &mut String) {
    o.push_str("# Latencystats\r\n");
    let percentiles = &srv.config.latency_tracking_info_percentiles;
    for (row, h) in srv.latency.histograms.iter().enumerate() {
        let Some(h) = h.as_deref().filter(|h| h.total > 0) else {
            continue;
        };
        o.push_str("latency_percentiles_usec_");
        o.push_str(srv.table.rows[row].name);
        o.push(':');
        let parts: Vec<String> = percentiles
            .iter()
            .map(|&p| {
                let us = h.value_at_percentile(p) as f64 / 1000.0;
                format!("p{}={us:.3}", percentile_text(p))
            })
            .collect();
        o.push_str(&parts.join(","));
        o.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hdr_histogram's buckets: what Redis reports for these durations.
    #[test]
    fn buckets_match_hdr() {
        assert_eq!(highest_equivalent(1), 1);
        assert_eq!(highest_equivalent(1000), 1003);
        assert_eq!(highest_equivalent(8000), 8031);
        assert_eq!(highest_equivalent(23_000), 23_039);
        assert_eq!(highest_equivalent(1_236_000), 1_236_991);
        let mut h = Histogram::default();
        for ns in [1000, 1000, 3000] {
            h.record(ns);
        }
        assert_eq!(h.value_at_percentile(50.0), 1003);
        assert_eq!(h.value_at_percentile(99.0), 3007);
        assert_eq!(h.value_at_percentile(0.0), 1000);
        // 1 µs twice: bucket 1; 3 µs: bucket 4 (2..4 µs).
        assert_eq!(h.cdf(), [(1, 2), (4, 3)]);
        let mut h = Histogram::default();
        h.record(0);
        assert_eq!(h.value_at_percentile(50.0), 1);
        assert_eq!(h.cdf(), [(1, 1)]);
    }

    /// Bucket indices follow values: each value's bucket starts at its lowest equivalent.
    #[test]
    fn bucket_indices_round_trip() {
        let mut last = None;
        for v in (1..5000).chain([65_535, 65_536, 999_999_999, MAX_NS]) {
            let i = bucket_index(v);
            assert_eq!(bucket_value(i), lowest_equivalent(v), "{v}");
            if let Some(prev) = last {
                assert!(i >= prev);
            }
            last = Some(i);
        }
        assert!(bucket_index(MAX_NS) < 3072);
    }

    /// One second's samples keep the worst; the ring keeps the last 160 seconds.
    #[test]
    fn series_keep_the_worst_per_second() {
        let mut l = Latency::default();
        l.add("command", 5, 100);
        l.add("command", 9, 100);
        l.add("command", 3, 101);
        let (_, s) = l.series(b"command").unwrap();
        let got: Vec<(i64, u64)> = s.in_order().map(|x| (x.time, x.latency)).collect();
        assert_eq!(got, [(100, 9), (101, 3)]);
        assert_eq!(s.max, 9);
        for t in 0..200 {
            l.add("command", 1, 1000 + t);
        }
        let (_, s) = l.series(b"command").unwrap();
        assert_eq!(s.in_order().count(), SERIES_LEN);
        assert_eq!(s.in_order().next().unwrap().time, 1040);
    }
}
