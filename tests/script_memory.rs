//! Memory after big scripts, in every engine: a script's large reply or large temporary data is
//! given back when the call ends (`used_memory` and the engine's `used_memory_vm_<engine>` come
//! back near where they were), a VM is counted once and never in `used_memory`, so a script's
//! garbage never evicts a key, QUICKJS.SCRIPT FLUSH gives a big run's memory back, and a chain of
//! promise jobs that grows without end fails with the out-of-memory error.

mod common;
use common::{goblin, script_load, Raw};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const MB: i64 = 1 << 20;

/// Bytes in megabytes, for the figures printed.
fn mb(bytes: i64) -> String {
    format!("{:.1} MB", bytes as f64 / MB as f64)
}

/// Every numeric field of one INFO reply.
fn info(c: &mut Raw) -> HashMap<String, i64> {
    let text = String::from_utf8_lossy(&c.cmd_str("INFO")).into_owned();
    text.split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// A one-line reply as text (its `\r\n` dropped).
fn text(r: &[u8]) -> String {
    String::from_utf8_lossy(r.strip_suffix(b"\r\n").unwrap_or(r)).into_owned()
}

/// `used_memory` and the engine's VM figure.
fn figures(c: &mut Raw, vm_field: &str) -> (i64, i64) {
    let i = info(c);
    (i["used_memory"], i[vm_field])
}

/// Polls for up to a second until both figures are within `slack` of `base`; the last figures.
fn settled(c: &mut Raw, vm_field: &str, base: (i64, i64), slack: i64) -> (i64, i64) {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        let now = figures(c, vm_field);
        if (now.0 - base.0 <= slack && now.1 - base.1 <= slack) || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `<prefix>EVAL script 0`, its reply's first line (a big reply is read whole and summarized).
fn eval_head(c: &mut Raw, prefix: &str, script: &str) -> String {
    let command = format!("{prefix}EVAL");
    let r = c.cmd(&[command.as_bytes(), script.as_bytes(), b"0"]);
    let end = r.windows(2).position(|w| w == b"\r\n").unwrap_or(r.len());
    format!("{} ({} bytes)", String::from_utf8_lossy(&r[..end]), r.len())
}

/// For each engine, scripts that build big temporary data (and, for two of them, reply a big
/// array): `used_memory` and the engine's VM come back within 20 MB of where they were within a
/// second of the reply.
#[test]
fn every_engine_gives_a_big_scripts_memory_back() {
    // A bigger MicroPython heap, so its garbage is not collected by the near-the-limit rule alone.
    let server = goblin(&["--upython-memory-limit", "256mb"]);
    let mut c = server.raw();
    let cases: &[(&str, &str, &str, &str)] = &[
        // (engine prefix, VM field, what the script does, script)
        (
            "",
            "used_memory_vm_lua",
            "doubles a string until the memory limit stops it",
            "local s = 'x' while true do s = s .. s end",
        ),
        (
            "",
            "used_memory_vm_lua",
            "builds a table of 3M numbers",
            "local t = {} for i = 1, 3000000 do t[i] = i end return #t",
        ),
        (
            "LUAU.",
            "used_memory_vm_luau",
            "replies a 2M-element array",
            "return table.create(2000000, 7)",
        ),
        (
            "LUAU.",
            "used_memory_vm_luau",
            "builds 80k strings of 1 KB",
            "local t = {} for i = 1, 80000 do t[i] = string.rep('x', 1000) .. i end return #t",
        ),
        (
            "QUICKJS.",
            "used_memory_vm_quickjs",
            "replies a 2M-element array",
            "return new Array(2000000).fill(7);",
        ),
        (
            "TCL.",
            "used_memory_vm_tcl",
            "builds a list of 1M strings",
            "set l {}; for {set i 0} {$i < 1000000} {incr i} {lappend l x$i}; return [llength $l]",
        ),
        (
            "WREN.",
            "used_memory_vm_wren",
            "builds a list of 4M numbers",
            "var l = []\nfor (i in 0...4000000) l.add(i)\nreturn l.count",
        ),
        (
            "UPYTHON.",
            "used_memory_vm_upython",
            "builds 500k bytes objects",
            "l = [b'x%d' % i for i in range(500000)]\nreturn len(l)",
        ),
    ];
    let mut failed = Vec::new();
    for &(prefix, field, what, script) in cases {
        let base = figures(&mut c, field);
        let started = Instant::now();
        let reply = eval_head(&mut c, prefix, script);
        let took = started.elapsed();
        let after = figures(&mut c, field);
        let later = settled(&mut c, field, base, 20 * MB);
        println!(
            "{prefix}EVAL {what}: {reply} in {took:.2?}; used_memory {} -> {} -> {}, {field} {} -> {} -> {}",
            mb(base.0),
            mb(after.0),
            mb(later.0),
            mb(base.1),
            mb(after.1),
            mb(later.1),
        );
        if later.0 - base.0 > 20 * MB || later.1 - base.1 > 20 * MB {
            failed.push(format!(
                "{prefix}EVAL {what}: used_memory +{} MB, {field} +{} MB a second after",
                (later.0 - base.0) / MB,
                (later.1 - base.1) / MB
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Luau's VM (which `mlua` allocates through Rust's allocator, the one `used_memory` is read
/// from) is counted once, in `used_memory_vm_luau`, and not in `used_memory`: a function library
/// holding 2M values grows the VM figure by tens of megabytes and `used_memory` by next to
/// nothing.
#[test]
fn the_luau_vm_is_counted_once() {
    let server = goblin(&[]);
    let mut c = server.raw();
    let library = "#!luau name=keeper\nlocal kept = {}\nredis.register_function('keep', function(keys, args) for i = 1, tonumber(args[1]) do kept[#kept + 1] = i end return #kept end)";
    let r = c.cmd(&[b"FUNCTION", b"LOAD", library.as_bytes()]);
    assert_eq!(r, b"$6\r\nkeeper\r\n", "{}", text(&r));
    let base = figures(&mut c, "used_memory_vm_luau");
    let r = c.cmd(&[b"FCALL", b"keep", b"0", b"2000000"]);
    assert_eq!(text(&r), ":2000000");
    let after = figures(&mut c, "used_memory_vm_luau");
    let (used, vm) = (after.0 - base.0, after.1 - base.1);
    println!(
        "a Luau library keeping 2M values: used_memory +{:.1} MB, used_memory_vm_luau +{:.1} MB",
        used as f64 / MB as f64,
        vm as f64 / MB as f64
    );
    assert!(vm > 16 * MB, "the VM grew by {vm} bytes only");
    assert!(
        used < 2 * MB,
        "used_memory grew by {used} bytes with the VM's {vm}: the VM is counted in it"
    );
    // INFO's total counts it once too.
    let i = info(&mut c);
    let engines: i64 = ["lua", "luau", "quickjs", "tcl", "upython", "wren"]
        .iter()
        .map(|e| i[&format!("used_memory_vm_{e}")])
        .sum();
    assert_eq!(
        i["used_memory_vm_total"],
        engines + i["used_memory_vm_functions"]
    );
}

/// With `maxmemory` a few megabytes above the dataset and `allkeys-lru`, scripts that build far
/// more temporary data than that headroom evict nothing, as redis-server running the same Lua
/// script evicts nothing: the VMs are not in the memory `maxmemory` measures.
#[test]
fn script_garbage_evicts_no_key() {
    let server = goblin(&["--maxmemory-policy", "allkeys-lru"]);
    let mut c = server.raw();
    let value = vec![b'v'; 1000];
    let mut batch = Vec::new();
    for i in 0..20_000 {
        let key = format!("key:{i}");
        batch.extend_from_slice(&common::encode(&[b"SET", key.as_bytes(), &value]));
    }
    c.send(&batch);
    for _ in 0..20_000 {
        assert_eq!(c.reply(), b"+OK\r\n");
    }
    let used = info(&mut c)["used_memory"];
    let max = used + 4 * MB;
    let r = c.cmd_str(&format!("CONFIG SET maxmemory {max}"));
    assert_eq!(r, b"+OK\r\n");
    let scripts = [
        (
            "LUAU.",
            "local t = {} for i = 1, 80000 do t[i] = string.rep('x', 1000) .. i end return #t",
        ),
        (
            "",
            "local t = {} for i = 1, 80000 do t[i] = string.rep('x', 1000) .. i end return #t",
        ),
        (
            "QUICKJS.",
            "const t = []; for (let i = 0; i < 80000; i++) t.push('x'.repeat(1000) + i); return t.length;",
        ),
    ];
    for (prefix, script) in scripts {
        let r = eval_head(&mut c, prefix, script);
        assert!(r.starts_with(":80000"), "{prefix}EVAL: {r}");
        let dbsize = c.cmd_str("DBSIZE");
        let i = info(&mut c);
        println!(
            "{prefix}EVAL of 80k temporary strings under maxmemory {}: used_memory {}, DBSIZE {}, evicted_keys {}",
            mb(max),
            mb(i["used_memory"]),
            text(&dbsize),
            i["evicted_keys"]
        );
        assert_eq!(text(&dbsize), ":20000", "{prefix}EVAL evicted keys");
        assert_eq!(i["evicted_keys"], 0, "{prefix}EVAL evicted keys");
    }
}

/// QUICKJS.SCRIPT FLUSH after a script that replied a big array: `used_memory`, the VM and the
/// resident set are back near where they were (the buffers the reply was converted in are not
/// kept, and the freed VM's pages go back to the system).
#[test]
fn quickjs_script_flush_gives_memory_back() {
    let server = goblin(&[]);
    let mut c = server.raw();
    let field = "used_memory_vm_quickjs";
    let base = info(&mut c);
    let r = eval_head(&mut c, "QUICKJS.", "return new Array(2000000).fill(7);");
    assert!(r.starts_with("*2000000"), "{r}");
    let r = eval_head(
        &mut c,
        "QUICKJS.",
        "const o = []; for (let i = 0; i < 500000; i++) o.push({i, s: 'x' + i}); return o.length;",
    );
    assert!(r.starts_with(":500000"), "{r}");
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT FLUSH"), b"+OK\r\n");
    let now = settled(&mut c, field, (base["used_memory"], base[field]), 20 * MB);
    let rss = info(&mut c)["used_memory_rss"];
    println!(
        "QuickJS, big reply then SCRIPT FLUSH: used_memory {} -> {}, {field} {} -> {}, used_memory_rss {} -> {}",
        mb(base["used_memory"]),
        mb(now.0),
        mb(base[field]),
        mb(now.1),
        mb(base["used_memory_rss"]),
        mb(rss)
    );
    assert!(now.0 - base["used_memory"] <= 20 * MB, "used_memory kept");
    assert!(now.1 - base[field] <= 20 * MB, "the VM's memory kept");
    assert!(
        rss - base["used_memory_rss"] <= 40 * MB,
        "the resident set kept {} MB",
        (rss - base["used_memory_rss"]) / MB
    );
}

/// A script whose promise jobs queue more jobs without end, each chained to the last, fails with
/// the out-of-memory error of the QuickJS docs once its memory passes `quickjs-memory-limit` (it
/// replied 1); the VM is usable and its memory back afterwards. One whose jobs never grow memory
/// runs into BUSY and is stopped by QUICKJS.SCRIPT KILL like any long script.
#[test]
fn endless_promise_jobs_fail_out_of_memory() {
    let server = goblin(&[
        "--quickjs-memory-limit",
        "32mb",
        "--busy-reply-threshold",
        "100",
    ]);
    let mut c = server.raw();
    let base = figures(&mut c, "used_memory_vm_quickjs");
    let script = "const loop = () => Promise.resolve().then(loop); loop(); return 1;";
    let sha = script_load(&mut c, "QUICKJS.", script);
    let started = Instant::now();
    let r = c.cmd(&[b"QUICKJS.EVAL", script.as_bytes(), b"0"]);
    println!(
        "the promise loop replied {} in {:.2?}",
        text(&r),
        started.elapsed()
    );
    assert_eq!(
        text(&r),
        format!(
            "-ERR Out of memory running script (quickjs-memory-limit is 33554432 bytes) script: {sha}"
        )
    );
    assert_eq!(
        c.cmd_str("QUICKJS.EVAL \"return 1 + 1\" 0"),
        b":2\r\n",
        "the VM runs scripts after it"
    );
    let now = settled(&mut c, "used_memory_vm_quickjs", base, 4 * MB);
    assert!(
        now.1 - base.1 <= 4 * MB,
        "the VM kept {} bytes",
        now.1 - base.1
    );

    // Jobs that never grow memory: BUSY for others, and a kill stops them.
    let mut runner = server.raw();
    runner.send(&common::encode(&[
        b"QUICKJS.EVAL",
        b"const loop = () => { Promise.resolve().then(loop); }; loop(); return 1;",
        b"0",
    ]));
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let r = c.cmd_str("PING");
        if r.starts_with(b"-BUSY") {
            break;
        }
        assert!(Instant::now() < until, "never BUSY: {}", text(&r));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT KILL"), b"+OK\r\n");
    let r = text(&runner.reply());
    assert!(
        r.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
        "{r}"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}
