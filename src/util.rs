//! Small shared helpers: Redis's exact number parsing and formatting, the cached clock, a PRNG.

/// Redis's `string2ll`: a canonical base-10 `i64` — no sign but `-`, no leading zeros, no spaces, and
/// not `-0`. Anything else is "not an integer".
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// Formats `n` into `buf`, returning the written digits.
pub fn fmt_i64(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    // Two digits a step from a table: half the divisions of one digit a step.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut i = buf.len();
    let mut v = n.unsigned_abs();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends `bytes` quoted and escaped as Redis's `sdscatrepr` does: `\\` and `"` backslashed,
/// `\n \r \t \a \b` as escapes, other bytes outside printable ASCII as `\xHH`.
pub fn cat_repr(out: &mut String, bytes: &[u8]) {
    use std::fmt::Write as _;
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' | b'"' => {
                out.push('\\');
                out.push(b as char);
            }
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
}

/// Redis's `string2d`-style strict float parse (used for timeouts and similar): the whole string must
/// be a number, no leading space, and NaN is refused.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let v: f64 = match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        _ => text.parse().ok()?,
    };
    (!v.is_nan()).then_some(v)
}

/// C's `%.17g`, as Redis formats doubles (RESP3 doubles, and their bulk-string form in RESP2).
pub fn fmt_g17(d: f64) -> String {
    let mut buf = [0u8; G17_LEN];
    String::from_utf8_lossy(fmt_g17_buf(d, &mut buf)).into_owned()
}

/// Room for any `%.17g` text (at most 24 bytes).
pub const G17_LEN: usize = 32;

/// `fmt_g17` into a caller's buffer: no allocation, for the reply path.
pub fn fmt_g17_buf(d: f64, buf: &mut [u8; G17_LEN]) -> &[u8] {
    if d.is_nan() {
        return b"nan";
    }
    if d.is_infinite() {
        return if d > 0.0 { b"inf" } else { b"-inf" };
    }
    if d == 0.0 {
        return if d.is_sign_negative() { b"-0" } else { b"0" };
    }
    // An integral value below 1e17 in magnitude prints as that integer (its exponent is below 17,
    // and trailing zeros are stripped): the common case of scores, without an exact conversion.
    if d.fract() == 0.0 && d.abs() < 1e17 {
        let (digits, _) = buf.split_at_mut(20);
        let digits: &mut [u8; 20] = digits.try_into().expect("20 bytes");
        return fmt_i64(d as i64, digits);
    }
    // The C library's own %.17g, as Redis's snprintf: one exact conversion (Rust's exact
    // formatting needed two, through its slow bignum path, and three allocations).
    // SAFETY: the format takes exactly one double; snprintf writes at most buf.len() bytes,
    // NUL included, and returns the length it needed (at most 24 for %.17g).
    let n = unsafe {
        libc::snprintf(
            buf.as_mut_ptr().cast::<libc::c_char>(),
            buf.len(),
            c"%.17g".as_ptr(),
            d,
        )
    };
    &buf[..(n.max(0) as usize).min(G17_LEN - 1)]
}

/// A score as a Redis 7.0 listpack stores it (its `d2string`), which is what ZSCAN returns for a
/// listpack-encoded sorted set: integers up to 2^62 in magnitude as integers (so `-0` is `0`), the
/// rest as `%.17g`.
pub fn fmt_listpack_score(d: f64) -> String {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if d.is_finite() && d.fract() == 0.0 && (-LIMIT..=LIMIT).contains(&d) {
        return (d as i64).to_string();
    }
    fmt_g17(d)
}

pub enum IncrFloatError {
    NotFloat,
    NanOrInfinity,
}

extern "C" {
    fn goblin_incr_long_double(
        cur: *const u8,
        curlen: usize,
        has_cur: i32,
        incr: *const u8,
        incrlen: usize,
        out: *mut u8,
        outlen: usize,
    ) -> libc::c_long;
}

/// INCRBYFLOAT's arithmetic, in long double exactly as Redis computes and prints it.
pub fn incr_long_double(cur: Option<&[u8]>, incr: &[u8]) -> Result<Vec<u8>, IncrFloatError> {
    let mut out = vec![0u8; 5 * 1024 + 64];
    let (cp, cl) = cur.map_or((std::ptr::null(), 0), |c| (c.as_ptr(), c.len()));
    // SAFETY: every pointer/length pair describes a live buffer; the C side writes at most outlen bytes.
    let n = unsafe {
        goblin_incr_long_double(
            cp,
            cl,
            cur.is_some() as i32,
            incr.as_ptr(),
            incr.len(),
            out.as_mut_ptr(),
            out.len(),
        )
    };
    match n {
        -3 => Err(IncrFloatError::NanOrInfinity),
        n if n < 0 => Err(IncrFloatError::NotFloat),
        n => {
            out.truncate(n as usize);
            Ok(out)
        }
    }
}

/// The process clock, cached once per command so that one command (or script) sees one instant, as
/// Redis's command time snapshot does.
pub mod clock {
    use std::cell::Cell;
    use std::time::{Instant, SystemTime, UNIX_EPOCH};

    thread_local! {
        static NOW_MS: Cell<i64> = const { Cell::new(0) };
        /// The LRU clock (seconds since start), refreshed with `NOW_MS`: every key lookup stamps
        /// it, so it must not cost a clock read of its own (Redis caches `server.lruclock` too).
        static LRU_NOW: Cell<u32> = const { Cell::new(0) };
        static NO_TOUCH: Cell<bool> = const { Cell::new(false) };
        static START: Instant = Instant::now();
        static START_MS: i64 = wall_us() / 1000;
        /// The wall clock (µs) and the tick counter read together by the last `update`.
        static BASE: Cell<(i64, u64)> = const { Cell::new((0, 0)) };
        /// `ticks()` when the innermost running command started.
        static CALL_START: Cell<u64> = const { Cell::new(0) };
        /// How many commands are running (one, or more when EXEC or a script runs others).
        static DEPTH: Cell<u32> = const { Cell::new(0) };
    }

    pub fn wall_us() -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    }

    /// Reads the wall clock; called once per event-loop turn and by the cron.
    pub fn update() {
        let base = (wall_us(), ticks());
        BASE.with(|b| b.set(base));
        set_now(base.0);
    }

    /// Refreshes the cached time from the tick counter `now` and the turn's wall clock reading (no
    /// system call), so a command after a slow one in the same pipeline still sees the time move on.
    fn advance_to(now: u64) {
        let (wall, at) = BASE.with(|b| b.get());
        let elapsed = ticks_to_ns(now.saturating_sub(at)) / 1000;
        set_now(wall + elapsed as i64);
    }

    fn set_now(wall_us: i64) {
        let now = wall_us / 1000;
        NOW_MS.with(|c| c.set(now));
        let start = START_MS.with(|s| *s);
        LRU_NOW.with(|c| c.set(((now - start).max(0) / 1000) as u32));
    }

    /// A monotonic counter for timing commands (commandstats) and scripts (the busy threshold),
    /// which read it twice per call, nested calls included: the CPU's time-stamp counter where it is
    /// invariant (a few ns), else nanoseconds from `Instant` (a `clock_gettime` each).
    pub fn ticks() -> u64 {
        #[cfg(target_arch = "x86_64")]
        if tsc::scale().is_some() {
            // SAFETY: RDTSC exists on every x86-64 CPU.
            return unsafe { std::arch::x86_64::_rdtsc() };
        }
        START.with(|s| s.elapsed().as_nanos() as u64)
    }

    /// Reads `ticks()` as a command starts (scripts take their start time from it). An outermost
    /// command also refreshes the cached time, Redis's per-command snapshot; the commands it runs
    /// (EXEC's queue, a script's calls) see that same instant.
    pub fn start_call() -> u64 {
        let t = ticks();
        CALL_START.with(|c| c.set(t));
        if DEPTH.with(|d| d.replace(d.get() + 1)) == 0 {
            advance_to(t);
        }
        t
    }

    /// Pairs with `start_call`.
    pub fn end_call() {
        DEPTH.with(|d| d.set(d.get() - 1));
    }

    /// `ticks()` when the innermost running command started.
    pub fn call_start() -> u64 {
        CALL_START.with(|c| c.get())
    }

    /// Nanoseconds in `ticks` ticks.
    pub fn ticks_to_ns(ticks: u64) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if let Some(scale) = tsc::scale() {
            return ((u128::from(ticks) * u128::from(scale)) >> 32) as u64;
        }
        ticks
    }

    #[cfg(target_arch = "x86_64")]
    mod tsc {
        use std::arch::x86_64::{__cpuid, _rdtsc};
        use std::sync::OnceLock;
        use std::time::{Duration, Instant};

        /// Nanoseconds per tick in 32.32 fixed point, or None without an invariant TSC (one that
        /// ticks at a constant rate across frequency changes and sleep states).
        pub fn scale() -> Option<u64> {
            static SCALE: OnceLock<Option<u64>> = OnceLock::new();
            *SCALE.get_or_init(calibrate)
        }

        fn calibrate() -> Option<u64> {
            // Leaf 0x8000_0007 (EDX bit 8: invariant TSC) is read only if the CPU reports it.
            let invariant =
                __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
            if !invariant {
                return None;
            }
            // Two milliseconds, once per process, measure the rate against the OS clock.
            let t0 = Instant::now();
            // SAFETY: as above.
            let c0 = unsafe { _rdtsc() };
            while t0.elapsed() < Duration::from_millis(2) {
                std::hint::spin_loop();
            }
            let ns = t0.elapsed().as_nanos() as u64;
            // SAFETY: as above.
            let ticks = unsafe { _rdtsc() }.wrapping_sub(c0);
            (ticks > 0).then(|| ((u128::from(ns) << 32) / u128::from(ticks)) as u64)
        }
    }

    pub fn now_ms() -> i64 {
        NOW_MS.with(|c| c.get())
    }

    /// Seconds since start as of the last `update`, the LRU clock behind OBJECT IDLETIME.
    pub fn lru_now() -> u32 {
        LRU_NOW.with(|c| c.get())
    }

    pub fn monotonic_us() -> u64 {
        START.with(|s| s.elapsed().as_micros() as u64)
    }

    /// Set while a CLIENT NO-TOUCH client's command runs: reads leave access times alone.
    pub fn set_no_touch(on: bool) {
        NO_TOUCH.with(|c| c.set(on));
    }

    pub fn no_touch() -> bool {
        NO_TOUCH.with(|c| c.get())
    }
}

/// xorshift64*: cheap randomness for sampling (RANDOMKEY, active expiry). Not for secrets.
/// 40 random hex digits: a run ID or a replication ID (Redis's `getRandomHexChars`).
pub fn random_hex40() -> String {
    (0..40)
        .map(|_| char::from_digit((rand_u64() % 16) as u32, 16).expect("a hex digit"))
        .collect()
}

pub fn rand_u64() -> u64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            (clock::wall_us() as u64 ^ ((std::process::id() as u64) << 32)) | 1
        );
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string2ll_rules() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [&b"-0"[..], b"01", b"+1", b" 1", b"1 ", b"", b"-", b"1a"] {
            assert_eq!(parse_i64(bad), None, "{:?}", bad);
        }
        let mut buf = [0u8; 20];
        assert_eq!(fmt_i64(i64::MIN, &mut buf), b"-9223372036854775808");
    }

    #[test]
    fn g17_matches_c() {
        assert_eq!(fmt_g17(1.5), "1.5");
        assert_eq!(fmt_g17(0.1), "0.10000000000000001");
        assert_eq!(fmt_g17(1e20), "1e+20");
        assert_eq!(fmt_g17(123456789.0), "123456789");
        assert_eq!(fmt_g17(0.00001), "1.0000000000000001e-05");
        assert_eq!(fmt_g17(-2.0), "-2");
        assert_eq!(fmt_g17(-0.0), "-0");
        assert_eq!(fmt_g17(99999999999999984.0), "99999999999999984");
        assert_eq!(fmt_g17(1e17), "1e+17");
        assert_eq!(fmt_g17(-123456789012345.0), "-123456789012345");
        assert_eq!(fmt_g17(2.5e-300), "2.5e-300");
        assert_eq!(fmt_g17(1.0 / 3.0), "0.33333333333333331");
        assert_eq!(fmt_g17(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(fmt_g17(-1.0e16 - 2.0), "-10000000000000002");
        assert_eq!(fmt_g17(0.5), "0.5");
    }

    #[test]
    fn listpack_scores() {
        assert_eq!(fmt_listpack_score(-0.0), "0");
        assert_eq!(
            fmt_listpack_score(123456789012345678.0),
            "123456789012345680"
        );
        assert_eq!(
            fmt_listpack_score(4611686018427387904.0),
            "4611686018427387904"
        );
        assert_eq!(
            fmt_listpack_score(4611686018427388928.0),
            "4.6116860184273889e+18"
        );
        assert_eq!(fmt_listpack_score(0.5), "0.5");
        assert_eq!(fmt_listpack_score(f64::INFINITY), "inf");
    }

    #[test]
    fn long_double_matches_redis_digits() {
        let r = incr_long_double(Some(b"10.5"), b"0.1").ok().unwrap();
        assert_eq!(r, b"10.6");
        let r = incr_long_double(Some(b"5.0e3"), b"2.0e2").ok().unwrap();
        assert_eq!(r, b"5200");
        assert!(incr_long_double(Some(b"abc"), b"1").is_err());
    }
}
