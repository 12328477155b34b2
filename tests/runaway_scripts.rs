//! Runaway work inside one native call is stopped like any loop: past `busy-reply-threshold`
//! other clients get BUSY, `SCRIPT KILL` (or the engine's prefixed form) stops the script with the
//! killed error, and the data is kept. The cases are those no interrupt hook reached: Lua's
//! pattern matcher and other library loops, Jim's glob matcher, loops inside MicroPython builtins
//! and big-integer arithmetic, and MicroPython's collections with a full heap. Compiling deeply
//! nested source is refused quickly in every engine (MicroPython's parser took 30 s for 100k
//! brackets, and its compiler has a time limit now), and Lua 5.1 makes strings that differ only in their middle bytes quickly (stock 5.1
//! hashes a sample of their bytes, and they all went into one chain of the string table).

mod common;
use common::{encode, goblin, show, Server};

use std::time::Duration;

const BUSY: &str =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\\r\\n";
const KILLED: &str = "-ERR Script killed by user with SCRIPT KILL...";

/// A server whose scripts go busy after 100 ms, with a key written before any script runs.
fn server() -> Server {
    let g = goblin(&["--busy-reply-threshold", "100"]);
    assert_eq!(g.raw().cmd_str("SET kept before"), b"+OK\r\n");
    g
}

/// Runs `script` (`prefix`: the engine's command prefix, `""` for Lua) from one client and checks
/// that, past the threshold, another gets BUSY, that `<prefix>SCRIPT KILL` stops the script with
/// the killed error, and that the key written before is still there.
fn stopped(g: &Server, prefix: &str, script: &str) {
    stopped_after(g, prefix, script, Duration::from_millis(300));
}

/// `stopped`, with the other client's first command `after` the script started.
fn stopped_after(g: &Server, prefix: &str, script: &str, after: Duration) {
    let mut runner = g.raw();
    let eval = format!("{prefix}EVAL");
    runner.send(&encode(&[eval.as_bytes(), script.as_bytes(), b"0"]));
    std::thread::sleep(after);
    let mut other = g.raw();
    other
        .s
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(show(&other.cmd_str("GET kept")), BUSY, "{prefix}: {script}");
    let kill = format!("{prefix}SCRIPT");
    assert_eq!(
        other.cmd(&[kill.as_bytes(), b"KILL"]),
        b"+OK\r\n",
        "{prefix}: {script}"
    );
    runner
        .s
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let got = show(&runner.reply());
    assert!(got.starts_with(KILLED), "{prefix}: {script}: {got}");
    assert_eq!(other.cmd_str("GET kept"), b"$6\r\nbefore\r\n");
    assert_eq!(runner.cmd_str("PING"), b"+PONG\r\n");
}

/// Lua patterns that backtrack exponentially (each `a*` tries every length before the missing
/// `b` fails them all), in every function that matches, caught by pcall in a loop or not; and the
/// other library loops that run long without allocating.
#[test]
fn lua_long_library_calls_are_stopped() {
    let g = server();
    let setup = "local s, p = string.rep('a', 30), string.rep('a*', 30) .. 'b' ";
    for call in [
        "return string.find(s, p)",
        "return string.match(s, p)",
        "for m in string.gmatch(s, p) do end",
        "return string.gsub(s, p, 'x')",
        "while true do pcall(string.find, s, p) end",
    ] {
        stopped(&g, "", &format!("{setup}{call}"));
    }
    for script in [
        // A plain find over a long run of near-matches: quadratic, no pattern at all.
        "local s = string.rep('a', 4000000) return string.find(s, string.rep('a', 2000000) .. 'b', 1, true)",
        // Each insert at the front shifts the whole array: one VM instruction per million moves.
        "local t = {} for i = 1, 1000000 do t[i] = i end while true do table.insert(t, 1, 0) table.remove(t, 1) end",
    ] {
        stopped(&g, "", script);
    }
    // Each full collection walks 100k strings; the first command comes once they are made.
    stopped_after(
        &g,
        "",
        "local t = {} for i = 1, 100000 do t[i] = 'x' .. i end while true do collectgarbage() end",
        Duration::from_millis(1000),
    );
}

/// A pattern with more items than the C stack holds levels of the matcher's recursion is an error
/// (it crashed the server, as it crashes Redis).
#[test]
fn lua_deep_pattern_is_an_error() {
    let g = server();
    let mut c = g.raw();
    let got = show(&common::eval_raw(
        &mut c,
        "",
        "return string.find(string.rep('a', 300000), string.rep('a?', 300000))",
        &[],
        &[],
    ));
    assert!(
        got.starts_with("-ERR user_script:1: pattern too complex script: "),
        "{got}"
    );
    // Deep, but under the limit: still matched.
    assert_eq!(
        show(&common::eval_raw(
            &mut c,
            "",
            "return {string.find(string.rep('a', 4000), '^' .. string.rep('a?', 4000) .. '$')}",
            &[],
            &[]
        )),
        "*2\\r\\n:1\\r\\n:4000\\r\\n"
    );
    assert_eq!(c.cmd_str("GET kept"), b"$6\r\nbefore\r\n");
}

/// 1 KB strings that differ only in an 8-digit counter in their middle: 40,000 of them read from a
/// list, and 80,000 made by a script (26 s and 25 s before, the server frozen; redis-server takes
/// a fraction of a second). Each must reply correctly within the client's 10 s timeout.
#[test]
fn lua_strings_differing_in_the_middle_are_made_quickly() {
    let g = server();
    let mut c = g.raw();
    let value = |i: usize| format!("{}{i:08}{}", "h".repeat(508), "t".repeat(508));
    for start in (0..40_000).step_by(1000) {
        let values: Vec<String> = (start..start + 1000).map(value).collect();
        let mut line: Vec<&[u8]> = vec![b"RPUSH", b"L"];
        line.extend(values.iter().map(|v| v.as_bytes()));
        c.cmd(&line);
    }
    let lrange = "local l = redis.call('LRANGE', KEYS[1], 0, -1) \
                  return {#l, l[1] == l[2] and 1 or 0, l[40000]}";
    let got = common::eval_raw(&mut c, "", lrange, &[b"L"], &[]);
    assert_eq!(
        got,
        format!("*3\r\n:40000\r\n:0\r\n$1024\r\n{}\r\n", value(39_999)).into_bytes()
    );
    let build = "local head, tail = string.rep('h', 508), string.rep('t', 508) \
                 local t, seen = {}, {} \
                 for i = 1, 80000 do local s = head .. string.format('%08d', i) .. tail \
                 t[i] = s seen[s] = true end \
                 local n = 0 for _ in pairs(seen) do n = n + 1 end \
                 return {#t, n}";
    assert_eq!(
        common::eval_raw(&mut c, "", build, &[], &[]),
        b"*2\r\n:80000\r\n:80000\r\n"
    );
}

/// Jim's glob matcher backtracks on `*a*a*...b` against a long run of `a`, inside one command:
/// `string match`, `lsearch -glob`, `switch -glob`, also under `catch` in a loop.
#[test]
fn tcl_backtracking_glob_is_stopped() {
    let g = server();
    let setup = "set p [string repeat *a 20]b; set s [string repeat a 40]; ";
    for call in [
        "return [string match $p $s]",
        "return [lsearch -glob [list $s] $p]",
        "switch -glob $s $p {return 1} default {return 0}",
        "while 1 {catch {string match $p $s}}",
    ] {
        stopped(&g, "TCL.", &format!("{setup}{call}"));
    }
}

/// Loops inside MicroPython builtins and big-integer arithmetic run no bytecode, so the VM hook
/// never ran: iteration consumed by a builtin, digits converted to and from text, a power.
#[test]
fn upython_native_loops_are_stopped() {
    let g = server();
    for script in [
        "return sum(range(10 ** 12))",
        "return max(range(10 ** 12))",
        "return all(range(1, 10 ** 12))",
        "return len(str(7 ** 10 ** 6))",
        "return int('9' * 2000000) % 7",
        "x = 7\nreturn (x ** (3 * 10 ** 6)) % 7",
        "while True:\n    try:\n        sum(range(10 ** 12))\n    except BaseException:\n        pass",
    ] {
        stopped(&g, "UPYTHON.", script);
    }
}

/// A script that catches MemoryError in a loop: once the heap is full (the 64 MB default fills in
/// well under a second) every allocation collects, and a thousand collections ran between two VM
/// hooks (171 s without BUSY, a kill answered after 49 s; 121 s here).
#[test]
fn upython_memory_error_loop_is_stopped() {
    let g = server();
    stopped_after(
        &g,
        "UPYTHON.",
        "l = []\nwhile True:\n    try:\n        while True:\n            l.append(b'x' * 1000)\n    except MemoryError:\n        pass",
        Duration::from_millis(1500),
    );
    // The heap is usable again.
    let mut c = g.raw();
    assert_eq!(
        show(&common::eval_raw(
            &mut c,
            "UPYTHON.",
            "return len([b'x' * 1000 for i in range(1000)])",
            &[],
            &[]
        )),
        ":1000\\r\\n"
    );
}

/// A runaway native call in a script that wrote (so SCRIPT KILL refuses it) still lets SHUTDOWN
/// NOSAVE through, in each engine whose natives could not be stopped.
#[test]
fn shutdown_nosave_stops_a_runaway_native_call() {
    for (prefix, script) in [
        (
            "",
            "redis.call('SET', KEYS[1], 'x') return string.find(string.rep('a', 30), string.rep('a*', 30) .. 'b')",
        ),
        (
            "TCL.",
            "redis call SET [lindex $KEYS 0] x; return [string match [string repeat *a 20]b [string repeat a 40]]",
        ),
        (
            "UPYTHON.",
            "redis.call('SET', KEYS[0], 'x')\nreturn sum(range(10 ** 12))",
        ),
    ] {
        let mut g = server();
        let mut runner = g.raw();
        let eval = format!("{prefix}EVAL");
        runner.send(&encode(&[eval.as_bytes(), script.as_bytes(), b"1", b"k"]));
        std::thread::sleep(Duration::from_millis(300));
        let mut other = g.raw();
        other
            .s
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let kill = format!("{prefix}SCRIPT");
        let got = show(&other.cmd(&[kill.as_bytes(), b"KILL"]));
        assert!(got.starts_with("-UNKILLABLE"), "{prefix}: {got}");
        other.send(b"SHUTDOWN NOSAVE\r\n");
        assert_eq!(
            g.wait_exit(Duration::from_secs(10)),
            Some(true),
            "{prefix}: {script}"
        );
    }
}

/// 100k-deep nesting compiles, or is refused, quickly in every engine, and the server lives
/// (Wren's compiler, which recursed until the stack overflowed, refuses 2000 levels and more):
/// MicroPython refuses it (it took 30 s, 98 s for lambdas), as it refuses a 2-million-digit
/// literal (quadratic to convert) and no longer folds a huge constant at compile time (a minute
/// for `7 ** 10 ** 7`); compiling, which happens before the script runs and its budget exists,
/// stops at a time limit of its own.
#[test]
fn deep_nesting_compiles_quickly_or_is_refused() {
    let g = server();
    let mut c = g.raw();
    let n = 100_000;
    let (open, close) = ("(".repeat(n), ")".repeat(n));
    let nested = format!("{open}1{close}");
    let upython_refused =
        "-ERR Error compiling script: SyntaxError: too many nested syntax levels (user_script:1)\\r\\n";
    for body in [
        format!("return {nested}"),
        format!("return {}1{}", "[".repeat(n), "]".repeat(n)),
        format!("return ({}1){}", "lambda: ".repeat(n), "()".repeat(n)),
        format!("return {}1", "1 if 1 else ".repeat(n)),
    ] {
        assert_eq!(
            show(&common::eval_raw(&mut c, "UPYTHON.", &body, &[], &[])),
            upython_refused
        );
    }
    let literal = format!("return {}", "9".repeat(2_000_000));
    assert_eq!(
        show(&common::eval_raw(&mut c, "UPYTHON.", &literal, &[], &[])),
        "-ERR Error compiling script: SyntaxError: integer literal longer than 4300 characters (user_script:1)\\r\\n"
    );
    // Compiles at once; runs under the budget.
    stopped(&g, "UPYTHON.", "x = 7 ** 10 ** 7\nreturn 1");
    // Compiling has a time limit of its own (it runs before the script, where no BUSY or SCRIPT
    // KILL reaches): 25k distinct float constants, each searched for linearly, took 17 s.
    let floats: Vec<String> = (0..25_000).map(|i| format!("{i}.5")).collect();
    assert_eq!(
        show(&common::eval_raw(
            &mut c,
            "UPYTHON.",
            &format!("return len([{}])", floats.join(",")),
            &[],
            &[]
        )),
        "-ERR Error compiling script: compiling took longer than 1000 ms\\r\\n"
    );
    // 65536 distinct names in one function wrapped a 16-bit count and aborted the process.
    let names: String = (0..70_000).map(|i| format!("x{i} = {i}\n")).collect();
    let got = show(&common::eval_raw(&mut c, "UPYTHON.", &names, &[], &[]));
    assert!(got.starts_with("-ERR Error compiling script: "), "{got}");
    // What real code nests still compiles, a long script too, and small constants still fold.
    let long: String = (0..5000)
        .map(|i| format!("x{} = {i} + {i}\n", i % 100))
        .collect();
    for (body, want) in [
        (format!("{long}return x1"), ":9802\\r\\n"),
        (
            format!("return {}1{}", "(".repeat(300), ")".repeat(300)),
            ":1\\r\\n",
        ),
        (
            "X = const(2 ** 100)\nreturn str(X)".to_string(),
            "$31\\r\\n1267650600228229401496703205376\\r\\n",
        ),
    ] {
        assert_eq!(
            show(&common::eval_raw(&mut c, "UPYTHON.", &body, &[], &[])),
            want
        );
    }
    let others: [(&str, String, &str); 5] = [
        ("", format!("return {nested}"), "-ERR Error compiling script (new function): user_script:1: chunk has too many syntax levels"),
        ("LUAU.", format!("return {nested}"), "-ERR Error compiling script (new function): user_script:1: Exceeded allowed recursion depth"),
        ("QUICKJS.", format!("return {nested};"), "-ERR Error compiling script: RangeError: Maximum call stack size exceeded"),
        ("TCL.", format!("return [expr {{{nested}}}]"), "-ERR Expression too complex"),
        ("WREN.", format!("return {nested}"), "-ERR Error compiling script"),
    ];
    for (prefix, body, want) in others {
        let got = show(&common::eval_raw(&mut c, prefix, &body, &[], &[]));
        assert!(got.starts_with(want), "{prefix}: {got}");
    }
    // Wren's compiler recursed once per level until the C stack overflowed (at 200k levels the
    // server died): past 2000 levels of expressions or statements it refuses the source.
    let deep = 400_000;
    for body in [
        format!("return {}1{}", "(".repeat(deep), ")".repeat(deep)),
        format!("{}return 1", "if (true) ".repeat(deep)),
        format!("{}return 1{}", "{\n".repeat(deep), "\n}".repeat(deep)),
    ] {
        let got = show(&common::eval_raw(&mut c, "WREN.", &body, &[], &[]));
        assert!(
            got.contains("Code nested more than 2000 levels deep."),
            "WREN.: {}",
            &got[..got.len().min(300)]
        );
    }
    let fine = format!("return {}1{}", "(".repeat(1000), ")".repeat(1000));
    assert_eq!(
        show(&common::eval_raw(&mut c, "WREN.", &fine, &[], &[])),
        ":1\\r\\n"
    );
    assert_eq!(c.cmd_str("GET kept"), b"$6\r\nbefore\r\n");
}
