//! The Wren engine's own rules (docs/commands/WREN.EVAL.md): conversions both ways in RESP2 and
//! RESP3, byte strings, the number edges, errors and their wording, pcall and `Fiber.try`, the
//! `Redis` helpers, the script cache commands, module isolation, and the memory directive. What
//! every engine shares (CAD, rescore, busy scripts, the sandbox, the memory limit) is in
//! `scripting_matrix.rs`.

mod common;
use common::{goblin, show, Raw};

/// `WREN.EVAL script numkeys keys... args...`, the reply shown with `\r\n` escaped.
fn wren(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> String {
    show(&wren_raw(c, script, keys, args))
}

fn wren_raw(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
    common::eval_raw(c, "WREN.", script, keys, args)
}

fn wren0(c: &mut Raw, script: &str) -> String {
    wren(c, script, &[], &[])
}

/// WREN.SCRIPT LOAD; the digest.
fn loaded(c: &mut Raw, script: &str) -> String {
    common::script_load(c, "WREN.", script)
}

/// The digest of a body, as the server computes it.
fn sha_of(c: &mut Raw, script: &str) -> String {
    loaded(c, script)
}

#[test]
fn values_to_replies() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let cases: &[(&str, &str)] = &[
        ("return 42", ":42\\r\\n"),
        ("return -3.7", ":-3\\r\\n"),
        ("return 3.99", ":3\\r\\n"),
        ("return -0", ":0\\r\\n"),
        ("return 2.pow(53)", ":9007199254740992\\r\\n"),
        ("return 2.pow(53) + 2", ":9007199254740994\\r\\n"),
        ("return -(2.pow(63))", ":-9223372036854775808\\r\\n"),
        // As Redis's Lua: beyond 64 bits, infinities and NaN give C's (long long) cast.
        ("return 2.pow(64)", ":-9223372036854775808\\r\\n"),
        ("return 1 / 0", ":-9223372036854775808\\r\\n"),
        ("return 0 / 0", ":-9223372036854775808\\r\\n"),
        ("return {\"double\": 3.5}", "$3\\r\\n3.5\\r\\n"),
        ("return {\"double\": 1 / 0}", "$3\\r\\ninf\\r\\n"),
        ("return \"hello\"", "$5\\r\\nhello\\r\\n"),
        ("return \"\"", "$0\\r\\n\\r\\n"),
        ("return \"\\x00\\xff\"", "$2\\r\\n\u{0}\u{fffd}\\r\\n"),
        ("return null", "$-1\\r\\n"),
        ("return", "$-1\\r\\n"),
        ("var x = 1", "$-1\\r\\n"),
        ("return true", ":1\\r\\n"),
        ("return false", "$-1\\r\\n"),
        ("return []", "*0\\r\\n"),
        (
            "return [1, \"two\", [3, [null]], true]",
            "*4\\r\\n:1\\r\\n$3\\r\\ntwo\\r\\n*2\\r\\n:3\\r\\n*1\\r\\n$-1\\r\\n:1\\r\\n",
        ),
        ("return {\"ok\": \"FINE\"}", "+FINE\\r\\n"),
        ("return {\"err\": \"MY failure\"}", "-MY failure\\r\\n"),
        ("return Redis.statusReply(\"FINE\")", "+FINE\\r\\n"),
        (
            "return Redis.errorReply(\"MY failure\")",
            "-MY failure\\r\\n",
        ),
        (
            "return Redis.errorReply(\"-MY failure\")",
            "-MY failure\\r\\n",
        ),
        ("return [Redis.errorReply(\"E x\")]", "*1\\r\\n-E x\\r\\n"),
        // `err` wins over `ok`, as in Redis's Lua tables.
        ("return {\"ok\": \"a\", \"err\": \"B c\"}", "-B c\\r\\n"),
        // A map without Redis's keys is a map reply (a flat array for a RESP2 client).
        ("return {\"a\": 1}", "*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n"),
        (
            "return {\"map\": {\"k\": \"v\"}}",
            "*2\\r\\n$1\\r\\nk\\r\\n$1\\r\\nv\\r\\n",
        ),
        ("return {\"set\": [\"m\"]}", "*1\\r\\n$1\\r\\nm\\r\\n"),
        ("return {\"set\": {\"m\": true}}", "*1\\r\\n$1\\r\\nm\\r\\n"),
        ("return {\"big_number\": \"123\"}", "$3\\r\\n123\\r\\n"),
        (
            "return {\"verbatim_string\": {\"format\": \"txt\", \"string\": \"hi\"}}",
            "$2\\r\\nhi\\r\\n",
        ),
        // Values with no reply form are nil (as a Lua function is).
        ("return Fn.new { 1 }", "$-1\\r\\n"),
        ("return 1..2", "$-1\\r\\n"),
        ("return Num", "$-1\\r\\n"),
        ("return [Fiber.new { 1 }]", "*1\\r\\n$-1\\r\\n"),
        // A script that yields instead of returning replies nil.
        ("Fiber.yield(1)", "$-1\\r\\n"),
        ("Fiber.suspend()", "$-1\\r\\n"),
    ];
    for (script, want) in cases {
        assert_eq!(wren0(&mut c, script), *want, "{script}");
    }
    // A list holding itself is cut at the nesting limit, not followed forever.
    let got = wren0(&mut c, "var l = []\nl.add(l)\nreturn l");
    assert!(got.contains("-ERR reached lua stack limit"), "{got}");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn resp3_replies_and_setresp() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("HELLO 3");
    let cases: &[(&str, &str)] = &[
        // Booleans follow the script's protocol (Redis.setresp), as in Redis's Lua.
        ("return true", ":1\\r\\n"),
        ("Redis.setresp(3)\nreturn true", "#t\\r\\n"),
        ("Redis.setresp(3)\nreturn false", "#f\\r\\n"),
        ("return null", "_\\r\\n"),
        ("return {\"double\": 3.5}", ",3.5\\r\\n"),
        ("return {\"a\": 1}", "%1\\r\\n$1\\r\\na\\r\\n:1\\r\\n"),
        (
            "return {\"map\": {\"a\": true}}",
            "%1\\r\\n$1\\r\\na\\r\\n#t\\r\\n",
        ),
        (
            "return {\"set\": [\"m\", 2]}",
            "~2\\r\\n$1\\r\\nm\\r\\n:2\\r\\n",
        ),
        ("return {\"big_number\": \"123\"}", "(123\\r\\n"),
        (
            "return {\"verbatim_string\": {\"format\": \"txt\", \"string\": \"hi\"}}",
            "=6\\r\\ntxt:hi\\r\\n",
        ),
    ];
    for (script, want) in cases {
        assert_eq!(wren0(&mut c, script), *want, "{script}");
    }
    // Server replies in RESP3 after Redis.setresp(3): maps, sets, doubles, booleans, null.
    c.cmd_str("HSET h f v");
    c.cmd_str("SADD s m");
    c.cmd_str("ZADD z 1.5 a");
    let script = "Redis.setresp(3)
var h = Redis.call(\"HGETALL\", \"h\")
var s = Redis.call(\"SMEMBERS\", \"s\")
var d = Redis.call(\"ZSCORE\", \"z\", \"a\")
var n = Redis.call(\"GET\", \"nokey\")
return [h[\"map\"][\"f\"], s[\"set\"][\"m\"], d[\"double\"] * 2, n == null, h, s, d]";
    assert_eq!(
        wren0(&mut c, script),
        "*7\\r\\n$1\\r\\nv\\r\\n#t\\r\\n:3\\r\\n#t\\r\\n%1\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n~1\\r\\n$1\\r\\nm\\r\\n,1.5\\r\\n"
    );
    // In RESP2 (the default) the same commands give lists and strings.
    let script = "var h = Redis.call(\"HGETALL\", \"h\")
var d = Redis.call(\"ZSCORE\", \"z\", \"a\")
return [h.count, h[0], d, Redis.call(\"GET\", \"nokey\") == null]";
    assert_eq!(
        wren0(&mut c, script),
        "*4\\r\\n:2\\r\\n$1\\r\\nf\\r\\n$3\\r\\n1.5\\r\\n:1\\r\\n"
    );
    // A reply built in a new fiber (whose stack starts small) moves the fiber's stack; the
    // fiber's locals are read right after it (the patch reloads the frame after foreign calls).
    let script = "Redis.setresp(3)
var out = []
for (i in 1..50) {
  out.add(Fiber.new {
    var a = \"A\"
    var r = Redis.call(\"HGETALL\", \"h\")
    var z = Redis.call(\"ZSCORE\", \"z\", \"a\")
    return a + r[\"map\"][\"f\"] + z[\"double\"].toString + i.toString
  }.call())
}
return [out.count, out[0], out[49]]";
    assert_eq!(
        wren0(&mut c, script),
        "*3\\r\\n:50\\r\\n$6\\r\\nAv1.51\\r\\n$7\\r\\nAv1.550\\r\\n"
    );
    for bad in ["Redis.setresp(4)", "Redis.setresp(\"3\")"] {
        let got = wren0(&mut c, bad);
        assert!(got.contains("RESP version must be 2 or 3."), "{bad}: {got}");
    }
}

#[test]
fn server_replies_into_wren() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("RPUSH l a b");
    let script = "var n = Redis.call(\"INCR\", \"n\")
var s = Redis.call(\"SET\", \"k\", \"v\")
var l = Redis.call(\"LRANGE\", \"l\", 0, -1)
var e = Redis.call(\"GET\", \"missing\")
return [n is Num, n + 0.5, s[\"ok\"], l.count, l[1], e == null]";
    assert_eq!(
        wren0(&mut c, script),
        "*6\\r\\n:1\\r\\n:1\\r\\n$2\\r\\nOK\\r\\n:2\\r\\n$1\\r\\nb\\r\\n:1\\r\\n"
    );
    // Numbers as arguments travel as %.17g text (as Redis's Lua): integral values up to 17 digits
    // (every integer within 2^53) as integers, others with a fraction or an exponent.
    assert_eq!(
        wren0(
            &mut c,
            "Redis.call(\"SET\", \"f\", 0.1)\nRedis.call(\"SET\", \"i\", 2.pow(53))\nRedis.call(\"SET\", \"e\", 2.pow(60))\nreturn [Redis.call(\"GET\", \"f\"), Redis.call(\"GET\", \"i\"), Redis.call(\"GET\", \"e\")]"
        ),
        "*3\\r\\n$19\\r\\n0.10000000000000001\\r\\n$16\\r\\n9007199254740992\\r\\n$21\\r\\n1.152921504606847e+18\\r\\n"
    );
    // One List argument is the whole command (more than 16 arguments, or built at run time).
    let script = "var cmd = [\"RPUSH\", \"big\"]
for (i in 1..20) cmd.add(i)
return Redis.call(cmd)";
    assert_eq!(wren0(&mut c, script), ":20\\r\\n");
    assert_eq!(
        wren0(
            &mut c,
            "return Redis.call(\"RPUSH\", \"w\", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)"
        ),
        ":14\\r\\n"
    );
}

#[test]
fn errors_pcall_and_their_wording() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET s abc");
    // A runtime error: ERR (unless the message has its own code), the digest and the body's line.
    let script = "var x = 1\nreturn x.nope";
    let sha = sha_of(&mut c, script);
    assert_eq!(
        wren0(&mut c, script),
        format!("-ERR Num does not implement 'nope'. script: {sha}, on user_script:2.\\r\\n")
    );
    let script = "Fiber.abort(\"MYCODE went wrong\")";
    let sha = sha_of(&mut c, script);
    assert_eq!(
        wren0(&mut c, script),
        format!("-MYCODE went wrong script: {sha}, on user_script:1.\\r\\n")
    );
    let got = wren0(&mut c, "Fiber.abort(42)");
    assert!(got.starts_with("-ERR [error object] script: "), "{got}");
    // Redis.call raises the server's error text.
    let script = "return Redis.call(\"INCR\", \"s\")";
    let sha = sha_of(&mut c, script);
    assert_eq!(
        wren0(&mut c, script),
        format!(
            "-ERR value is not an integer or out of range script: {sha}, on user_script:1.\\r\\n"
        )
    );
    let got = wren0(&mut c, "return Redis.call(\"GET\", \"s\", \"x\")");
    assert!(
        got.starts_with("-ERR Wrong number of args calling Redis command from script"),
        "{got}"
    );
    // pcall returns the error as {"err": text}; Fiber.try catches call's error as its text.
    assert_eq!(
        wren0(&mut c, "var r = Redis.pcall(\"INCR\", \"s\")\nreturn r"),
        "-ERR value is not an integer or out of range\\r\\n"
    );
    assert_eq!(
        wren0(
            &mut c,
            "var f = Fiber.new {\n  Redis.call(\"INCR\", \"s\")\n}\nvar e = f.try()\nreturn [e, f.error, f.isDone]"
        ),
        "*3\\r\\n$43\\r\\nERR value is not an integer or out of range\\r\\n$43\\r\\nERR value is not an integer or out of range\\r\\n:1\\r\\n"
    );
    // Arguments must be strings or numbers, and there must be one.
    let got = wren0(&mut c, "return Redis.call(\"SET\", \"k\", null)");
    assert!(
        got.starts_with("-ERR Redis.call arguments must be strings or numbers"),
        "{got}"
    );
    assert_eq!(
        wren0(&mut c, "return Redis.pcall(\"SET\", \"k\", [1])"),
        "-ERR Redis.call arguments must be strings or numbers\\r\\n"
    );
    let got = wren0(&mut c, "return Redis.call([])");
    assert!(
        got.starts_with("-ERR Please specify at least one argument for this redis lib call"),
        "{got}"
    );
    // Compile errors carry the body's line.
    assert_eq!(
        wren0(&mut c, "var x = 1\nvar y = )"),
        "-ERR Error compiling script (new function): user_script:2: Error at ')': Expected expression.\\r\\n"
    );
    assert_eq!(
        wren0(&mut c, "return Nope"),
        "-ERR Error compiling script (new function): user_script:1: Error at 'Nope': Variable is used but not defined.\\r\\n"
    );
    // A lower-case name is a method of `Script` (Wren's implicit `this`), found missing at run time.
    let sha = sha_of(&mut c, "return nope");
    assert_eq!(
        wren0(&mut c, "return nope"),
        format!("-ERR Script metaclass does not implement 'nope'. script: {sha}, on user_script:1.\\r\\n")
    );
    // A shebang line keeps the lines and sets flags.
    let got = wren(
        &mut c,
        "#!wren flags=no-writes\nreturn Redis.call(\"SET\", keys[0], \"v\")",
        &[b"k"],
        &[],
    );
    assert!(
        got.starts_with("-ERR Write commands are not allowed from read-only scripts."),
        "{got}"
    );
    let got = wren0(&mut c, "#!lua\nreturn 1");
    assert!(
        got.starts_with("-ERR Unexpected engine in script shebang"),
        "{got}"
    );
    assert_eq!(wren0(&mut c, "#!wren\nreturn 1"), ":1\\r\\n");
    // A NUL byte in a body cannot reach Wren's compiler.
    assert_eq!(
        wren0(&mut c, "return 1\u{0}"),
        "-ERR Error compiling script: the body holds a NUL byte\\r\\n"
    );
    assert_eq!(c.cmd_str("GET s"), b"$3\r\nabc\r\n");
}

#[test]
fn binary_safe_strings() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let all: Vec<u8> = (0..=255u8).collect();
    let got = wren_raw(
        &mut c,
        "Redis.call(\"SET\", keys[0], argv[0])\nreturn [Redis.call(\"GET\", keys[0]), argv[0].bytes.count, keys[0]]",
        &[b"k\x00\xff"],
        &[&all],
    );
    let mut want = b"*3\r\n$256\r\n".to_vec();
    want.extend_from_slice(&all);
    want.extend_from_slice(b"\r\n:256\r\n$3\r\nk\x00\xff\r\n");
    assert_eq!(got, want);
    assert_eq!(c.cmd(&[b"GET", b"k\x00\xff"])[..6], *b"$256\r\n");
    // Bytes made by the script travel as they are.
    assert_eq!(
        wren_raw(
            &mut c,
            "return String.fromByte(0) + String.fromByte(255)",
            &[],
            &[]
        ),
        b"$2\r\n\x00\xff\r\n"
    );
}

#[test]
fn helpers_keys_argv_and_isolation() {
    let g = goblin(&[]);
    let mut c = g.raw();
    assert_eq!(
        wren0(&mut c, "return Redis.sha1hex(\"abc\")"),
        "$40\\r\\na9993e364706816aba3e25717850c26c9cd0d89d\\r\\n"
    );
    assert_eq!(
        wren0(&mut c, "return Redis.sha1hex(\"\")"),
        "$40\\r\\nda39a3ee5e6b4b0d3255bfef95601890afd80709\\r\\n"
    );
    assert_eq!(
        wren0(
            &mut c,
            "Redis.log(Redis.LOG_WARNING, \"from wren\")\nreturn [Redis.LOG_DEBUG, Redis.LOG_VERBOSE, Redis.LOG_NOTICE, Redis.LOG_WARNING]"
        ),
        "*4\\r\\n:0\\r\\n:1\\r\\n:2\\r\\n:3\\r\\n"
    );
    let got = wren0(&mut c, "Redis.log(9, \"x\")");
    assert!(got.starts_with("-ERR Invalid debug level."), "{got}");
    // keys and argv are 0-based Lists of Strings; a script cannot change another's.
    assert_eq!(
        wren(
            &mut c,
            "return [keys.count, argv.count, keys[0], argv[-1], argv is List, argv[0] is String]",
            &[b"a"],
            &[b"1", b"2"]
        ),
        "*6\\r\\n:1\\r\\n:2\\r\\n$1\\r\\na\\r\\n$1\\r\\n2\\r\\n:1\\r\\n:1\\r\\n"
    );
    assert_eq!(
        wren0(&mut c, "return [keys.count, argv.count]"),
        "*2\\r\\n:0\\r\\n:0\\r\\n"
    );
    // Each script is its own module: the same names never collide. A module-level variable (a
    // body may close `run` and declare one) lives as long as its script stays cached.
    let counter = |tag: &str| {
        format!("Count = Count + 1\nreturn Count // {tag}\n}} }}\nvar Count = 0\nclass Other {{ static y() {{")
    };
    assert_eq!(wren0(&mut c, &counter("a")), ":1\\r\\n");
    assert_eq!(wren0(&mut c, &counter("a")), ":2\\r\\n");
    assert_eq!(wren0(&mut c, &counter("b")), ":1\\r\\n");
    assert_eq!(c.cmd_str("WREN.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(wren0(&mut c, &counter("a")), ":1\\r\\n");
    // Imports: Wren's random and meta modules only.
    assert_eq!(
        wren0(
            &mut c,
            "import \"random\" for Random\nreturn Random.new(7).int(1000) == Random.new(7).int(1000)"
        ),
        ":1\\r\\n"
    );
    assert_eq!(
        wren0(
            &mut c,
            "import \"meta\" for Meta\nreturn Meta.eval(\"1 + 1\")"
        ),
        "$-1\\r\\n"
    );
}

#[test]
fn script_cache_commands_and_memory() {
    let g = goblin(&["--wren-memory-limit", "8mb"]);
    let mut c = g.raw();
    assert_eq!(
        show(&c.cmd_str("CONFIG GET wren-memory-limit")),
        "*2\\r\\n$17\\r\\nwren-memory-limit\\r\\n$7\\r\\n8388608\\r\\n"
    );
    let sha = loaded(&mut c, "return argv[0]");
    assert_eq!(
        show(&c.cmd(&[b"WREN.EVALSHA", sha.as_bytes(), b"0", b"hi"])),
        "$2\\r\\nhi\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[
            b"WREN.EVALSHA_RO",
            sha.to_uppercase().as_bytes(),
            b"0",
            b"ro"
        ])),
        "$2\\r\\nro\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[b"WREN.SCRIPT", b"EXISTS", sha.as_bytes(), b"ffff"])),
        "*2\\r\\n:1\\r\\n:0\\r\\n"
    );
    // The Lua cache is another engine's.
    assert_eq!(
        show(&c.cmd(&[b"SCRIPT", b"EXISTS", sha.as_bytes()])),
        "*1\\r\\n:0\\r\\n"
    );
    let got = show(&c.cmd(&[b"WREN.SCRIPT", b"LOAD", b"return )"]));
    assert!(
        got.starts_with("-ERR Error compiling script (new function): user_script:1:"),
        "{got}"
    );
    assert_eq!(c.cmd_str("WREN.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd(&[b"WREN.EVALSHA", sha.as_bytes(), b"0"])),
        "-NOSCRIPT No matching script. Please use EVAL.\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[b"WREN.SCRIPT", b"EXISTS", sha.as_bytes()])),
        "*1\\r\\n:0\\r\\n"
    );
    assert_eq!(c.cmd_str("WREN.SCRIPT FLUSH ASYNC"), b"+OK\r\n");
    // Past the limit: an error, whether the allocation is one block or many, and Fiber.try
    // does not catch it.
    for bomb in [
        "return List.filled(10000000, 0).count",
        "var s = \"x\"\nwhile (true) s = s + s",
        "var t = []\nwhile (true) t.add(Fiber.new {\n  t.add(List.filled(100000, 1))\n}.try())",
        "var t = []\nwhile (true) t.add(Redis.call(\"LRANGE\", \"l\", 0, -1))",
        // Inside Wren's compiler (code compiled at run time by the meta module).
        "import \"meta\" for Meta\nvar s = \"1 + \"\nfor (i in 1..19) s = s + s\nreturn Meta.compileExpression(s + \"1\").call()",
    ] {
        c.cmd_str("RPUSH l a b c d e f g h i j");
        let got = wren0(&mut c, bomb);
        assert!(
            got.starts_with(
                "-ERR Out of memory running script (wren-memory-limit is 8388608 bytes)"
            ),
            "{bomb}: {got}"
        );
    }
    assert_eq!(wren0(&mut c, "return \"fresh\""), "$5\\r\\nfresh\\r\\n");
    // EVAL-only scripts beyond the cache's bound are evicted with their modules: the first one,
    // evicted, compiles again into a module of the same name.
    for i in 0..520 {
        assert_eq!(wren0(&mut c, &format!("return {i}")), format!(":{i}\\r\\n"));
    }
    let info = show(&c.cmd_str("INFO stats"));
    let evicted: u64 = info
        .split("evicted_scripts:")
        .nth(1)
        .and_then(|r| r.split("\\r\\n").next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(evicted >= 20, "{info}");
    assert_eq!(wren0(&mut c, "return 0"), ":0\\r\\n");
    let info = show(&c.cmd_str("INFO memory"));
    let used: usize = info
        .split("used_memory_vm_wren:")
        .nth(1)
        .and_then(|r| r.split("\\r\\n").next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(used > 0 && used < 4 << 20, "{used}");
    assert_eq!(c.cmd_str("CONFIG SET wren-memory-limit 0"), b"+OK\r\n");
    assert_eq!(
        wren0(&mut c, "return List.filled(10000000, 0).count"),
        ":10000000\\r\\n"
    );
}
