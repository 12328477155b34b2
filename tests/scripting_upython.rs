//! The MicroPython engine's own rules (docs/commands/UPYTHON.EVAL.md): conversions both ways in
//! RESP2 and RESP3, binary-safe bytes, the number edges, errors and their wording, pcall, the
//! `redis` helpers, the script cache commands, the GC under load, MemoryError, kills that
//! `except BaseException:` cannot swallow, and the body wrapping. What every engine shares (CAD,
//! rescore, busy scripts, the sandbox, the memory limit) is in `scripting_matrix.rs`.

mod common;
use common::{goblin, info_field, show, Raw};

/// `UPYTHON.EVAL script numkeys keys... args...`, the reply shown with `\r\n` escaped.
fn py(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> String {
    show(&py_raw(c, script, keys, args))
}

fn py_raw(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
    common::eval_raw(c, "UPYTHON.", script, keys, args)
}

fn py0(c: &mut Raw, script: &str) -> String {
    py(c, script, &[], &[])
}

/// UPYTHON.SCRIPT LOAD; the digest.
fn loaded(c: &mut Raw, script: &str) -> String {
    common::script_load(c, "UPYTHON.", script)
}

fn check_all(c: &mut Raw, cases: &[(&str, &str)]) {
    common::check_evals(c, "UPYTHON.", cases)
}

#[test]
fn values_to_replies() {
    let g = goblin(&[]);
    let mut c = g.raw();
    check_all(
        &mut c,
        &[
            ("return 42", ":42\\r\\n"),
            ("return -7", ":-7\\r\\n"),
            ("return 9223372036854775807", ":9223372036854775807\\r\\n"),
            // Beyond 64 bits an int is a big number (a bulk string for a RESP2 client).
            ("return 2 ** 64", "$20\\r\\n18446744073709551616\\r\\n"),
            ("return 3.99", ":3\\r\\n"),
            ("return -3.7", ":-3\\r\\n"),
            ("return float('nan')", ":-9223372036854775808\\r\\n"),
            ("return {'double': 1.5}", "$3\\r\\n1.5\\r\\n"),
            ("return b'bytes'", "$5\\r\\nbytes\\r\\n"),
            ("return 'text'", "$4\\r\\ntext\\r\\n"),
            ("return '\u{e9}'", "$2\\r\\n\u{e9}\\r\\n"),
            ("return bytearray(b'ab')", "$2\\r\\nab\\r\\n"),
            ("return ''", "$0\\r\\n\\r\\n"),
            ("return None", "$-1\\r\\n"),
            ("pass", "$-1\\r\\n"),
            ("return True", ":1\\r\\n"),
            ("return False", "$-1\\r\\n"),
            ("return []", "*0\\r\\n"),
            (
                "return (1, [2, None])",
                "*2\\r\\n:1\\r\\n*2\\r\\n:2\\r\\n$-1\\r\\n",
            ),
            ("return {'a': 1}", "*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n"),
            (
                "return {'map': {'a': 1}}",
                "*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n",
            ),
            ("return {5}", "*1\\r\\n:5\\r\\n"),
            ("return {'set': {'a': True}}", "*1\\r\\n$1\\r\\na\\r\\n"),
            ("return {'ok': 'FINE'}", "+FINE\\r\\n"),
            ("return {'err': 'MY failure'}", "-MY failure\\r\\n"),
            ("return redis.error_reply('oops')", "-ERR oops\\r\\n"),
            (
                "return {'big_number': '12345678901234567890'}",
                "$20\\r\\n12345678901234567890\\r\\n",
            ),
            (
                "return object()",
                "-ERR MicroPython script returned an unsupported value (object)\\r\\n",
            ),
        ],
    );
}

#[test]
fn resp3_replies_and_setresp() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("HELLO 3");
    c.cmd_str("HSET h f v");
    c.cmd_str("SADD s m");
    c.cmd_str("ZADD z 1.5 a");
    check_all(
        &mut c,
        &[
            ("return {'a': 1}", "%1\\r\\n$1\\r\\na\\r\\n:1\\r\\n"),
            ("return {5}", "~1\\r\\n:5\\r\\n"),
            ("return {'double': 1.5}", ",1.5\\r\\n"),
            ("return 2 ** 64", "(18446744073709551616\\r\\n"),
            ("return None", "_\\r\\n"),
            // Booleans stay integer/nil until the script asks for RESP3.
            ("return [True, False]", "*2\\r\\n:1\\r\\n_\\r\\n"),
            ("redis.setresp(3)\nreturn [True, False]", "*2\\r\\n#t\\r\\n#f\\r\\n"),
            (
                "redis.setresp(3)\nreturn redis.call('HGETALL', 'h')",
                "%1\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n",
            ),
            (
                "redis.setresp(3)\nh = redis.call('HGETALL', 'h')\ns = redis.call('SMEMBERS', 's')\nd = redis.call('ZSCORE', 'z', 'a')\nreturn [type(h).__name__, h[b'f'], type(s).__name__, b'm' in s, type(d).__name__, {'double': d}]",
                "*6\\r\\n$4\\r\\ndict\\r\\n$1\\r\\nv\\r\\n$3\\r\\nset\\r\\n#t\\r\\n$5\\r\\nfloat\\r\\n,1.5\\r\\n",
            ),
            (
                "redis.setresp(3)\nreturn [redis.call('GET', 'nokey') is None, redis.call('EXISTS', 's')]",
                "*2\\r\\n#t\\r\\n:1\\r\\n",
            ),
        ],
    );
    // RESP2 reads of the same commands.
    c.cmd_str("HELLO 2");
    check_all(
        &mut c,
        &[
            (
                "return type(redis.call('HGETALL', 'h')).__name__",
                "$4\\r\\nlist\\r\\n",
            ),
            ("return redis.call('ZSCORE', 'z', 'a')", "$3\\r\\n1.5\\r\\n"),
        ],
    );
}

#[test]
fn server_replies_into_python() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET s abc");
    c.cmd_str("RPUSH l a b");
    check_all(
        &mut c,
        &[
            ("return type(redis.call('GET', 's')).__name__", "$5\\r\\nbytes\\r\\n"),
            ("return redis.call('GET', 'nokey') is None", ":1\\r\\n"),
            ("return redis.call('STRLEN', 's') + 1", ":4\\r\\n"),
            ("return redis.call('SET', 'x', 'y')['ok']", "$2\\r\\nOK\\r\\n"),
            ("return redis.call('LRANGE', 'l', 0, -1)", "*2\\r\\n$1\\r\\na\\r\\n$1\\r\\nb\\r\\n"),
            ("return redis.pcall('INCR', 's')", "-ERR value is not an integer or out of range\\r\\n"),
            ("return redis.pcall('INCR', 's')['err']", "$43\\r\\nERR value is not an integer or out of range\\r\\n"),
            // Numbers travel as text: ints in decimal, floats as Python's repr.
            ("redis.call('SET', 'n', 1.5)\nreturn redis.call('GET', 'n')", "$3\\r\\n1.5\\r\\n"),
            ("redis.call('SET', 'n', 2 ** 70)\nreturn redis.call('GET', 'n')", "$22\\r\\n1180591620717411303424\\r\\n"),
            ("redis.call('SET', 'n', -12)\nreturn redis.call('INCRBY', 'n', 2)", ":-10\\r\\n"),
            ("return redis.call(b'GET', bytearray(b's'))", "$3\\r\\nabc\\r\\n"),
            ("return redis.sha1hex('abc')", "$40\\r\\na9993e364706816aba3e25717850c26c9cd0d89d\\r\\n"),
            ("return redis.sha1hex(b'')", "$40\\r\\nda39a3ee5e6b4b0d3255bfef95601890afd80709\\r\\n"),
            ("return redis.REDIS_VERSION", "$6\\r\\n7.0.15\\r\\n"),
            ("return [redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING]", "*4\\r\\n:0\\r\\n:1\\r\\n:2\\r\\n:3\\r\\n"),
            ("redis.log(redis.LOG_WARNING, 'from', b'python', 3)\nreturn 1", ":1\\r\\n"),
            ("import redis as r\nreturn r.status_reply('X')", "+X\\r\\n"),
            ("import math\nreturn int(math.sqrt(16))", ":4\\r\\n"),
            ("from collections import OrderedDict\nimport struct, array\nreturn list(struct.pack('<H', 258))", "*2\\r\\n:2\\r\\n:1\\r\\n"),
        ],
    );
}

#[test]
fn errors_and_their_wording() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET s abc");
    let cases: &[(&str, &str)] = &[
        ("raise ValueError('boom')", "-ERR ValueError: boom script: "),
        ("x = 1\ny = 2\nraise KeyError(x)", "-ERR KeyError: 1 script: "),
        ("raise redis.RedisError('MYCODE went wrong')", "-MYCODE went wrong script: "),
        ("raise redis.RedisError('plain')", "-ERR plain script: "),
        ("return redis.call('INCR', 's')", "-ERR value is not an integer or out of range script: "),
        ("return redis.call('HGET', 's', 'f')", "-WRONGTYPE Operation against a key holding the wrong kind of value script: "),
        ("return redis.call('GET', None)", "-ERR TypeError: redis.call arguments must be bytes, str, int or float script: "),
        ("return redis.call('GET', True)", "-ERR TypeError: redis.call arguments must be bytes, str, int or float script: "),
        ("redis.log(9, 'x')", "-ERR ValueError: redis.log level must be LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING script: "),
        ("redis.setresp(4)", "-ERR ValueError: RESP version must be 2 or 3 script: "),
        // The shared error class is read-only, as the `redis` module is.
        ("redis.RedisError.__init__ = len", "-ERR AttributeError: "),
        ("redis.RedisError.shared = {}", "-ERR AttributeError: "),
        ("def f():\n    return f()\nreturn f()", "-ERR RuntimeError: maximum recursion depth exceeded script: "),
        ("return 1 +", "-ERR Error compiling script: SyntaxError: invalid syntax (user_script:1)"),
        ("x = 1\n  y = 2", "-ERR Error compiling script: IndentationError: unexpected indent (user_script:2)"),
    ];
    let mut failures = Vec::new();
    for (script, want) in cases {
        let got = py0(&mut c, script);
        if !got.starts_with(want) {
            failures.push(format!("{script:?}: got {got}, want {want}..."));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The line is the body's own (the wrapping `def` is not counted).
    let got = py0(&mut c, "x = 1\ny = 2\nraise KeyError(x)");
    assert!(got.ends_with(", on user_script:3.\\r\\n"), "{got}");
    // A caught error from redis.call is a RedisError carrying the server's text.
    assert_eq!(
        py0(
            &mut c,
            "try:\n    redis.call('INCR', 's')\nexcept redis.RedisError as e:\n    return 'caught: ' + str(e)"
        ),
        "$51\\r\\ncaught: ERR value is not an integer or out of range\\r\\n"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn binary_safe_bytes() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let all: Vec<u8> = (0..=255u8).collect();
    let key: &[u8] = b"k\x00\xff\r\n";
    let got = py_raw(
        &mut c,
        "redis.call('SET', KEYS[0], ARGV[0])\nv = redis.call('GET', KEYS[0])\nreturn [len(v), v == ARGV[0], v, KEYS[0]]",
        &[key],
        &[&all],
    );
    let mut want = b"*4\r\n:256\r\n:1\r\n$256\r\n".to_vec();
    want.extend_from_slice(&all);
    want.extend_from_slice(b"\r\n$5\r\nk\x00\xff\r\n\r\n");
    assert_eq!(show(&got), show(&want));
    assert_eq!(c.cmd(&[b"GET", key]).len(), 256 + 8);
}

#[test]
fn script_cache_commands_and_wrapping() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let sha = loaded(&mut c, "return ARGV[0] + b'!'");
    assert_eq!(
        show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0", b"hi"])),
        "$3\\r\\nhi!\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[
            b"UPYTHON.SCRIPT",
            b"EXISTS",
            sha.as_bytes(),
            b"ffffffffffffffffffffffffffffffffffffffff"
        ])),
        "*2\\r\\n:1\\r\\n:0\\r\\n"
    );
    // Each engine has its own cache.
    assert_eq!(
        show(&c.cmd(&[b"SCRIPT", b"EXISTS", sha.as_bytes()])),
        "*1\\r\\n:0\\r\\n"
    );
    assert_eq!(c.cmd_str("UPYTHON.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0"])),
        "-NOSCRIPT No matching script. Please use EVAL.\\r\\n"
    );
    // The VM is fresh after a flush, and works.
    assert_eq!(py0(&mut c, "return 'again'"), "$5\\r\\nagain\\r\\n");
    assert!(info_field(&mut c, "used_memory_vm_upython").unwrap() > 0);
    assert_eq!(info_field(&mut c, "number_of_cached_scripts"), Some(1));

    // A body's lines cannot leave the function: a lone CR ends a line too, and gets its indent.
    for body in [
        "pass\rraise ValueError('ran at load')",
        "pass\nraise ValueError('ran at load')",
    ] {
        // Loading runs nothing; the second line runs when the script does, as its line 2.
        let sha = loaded(&mut c, body);
        let got = show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0"]));
        assert!(
            got.starts_with("-ERR ValueError: ran at load script: ")
                && got.ends_with(", on user_script:2.\\r\\n"),
            "{body:?}: {got}"
        );
    }
    // The body keeps its own indentation, tabs or spaces.
    assert_eq!(
        py0(
            &mut c,
            "if True:\n\tx = 1\n\tif x:\n\t        return 'tabs'"
        ),
        "$4\\r\\ntabs\\r\\n"
    );
    // Globals a script sets do not outlive its run.
    let sha = loaded(
        &mut c,
        "if 'counter' in globals():\n    return 'leaked'\nglobals()['counter'] = 1\nreturn 'fresh'",
    );
    for _ in 0..2 {
        assert_eq!(
            show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0"])),
            "$5\\r\\nfresh\\r\\n"
        );
    }
    // Shebang flags.
    assert!(py(
        &mut c,
        "#!python flags=no-writes\nreturn redis.call('SET', KEYS[0], 'v')",
        &[b"k"],
        &[]
    )
    .starts_with("-ERR Write commands are not allowed from read-only scripts."));
    assert!(py0(&mut c, "#!lua\nreturn 1").starts_with("-ERR Unexpected engine in script shebang"));
}

/// A script that allocates a lot and holds objects across `redis.call` (which allocates too), run
/// thousands of times on a small heap: the GC runs many times during calls and must see every
/// object the script and our glue hold.
#[test]
fn gc_heavy_script_thousands_of_times() {
    let g = goblin(&["--upython-memory-limit", "1mb"]);
    let mut c = g.raw();
    c.cmd_str("RPUSH l a bb ccc");
    let sha = loaded(
        &mut c,
        "keep = [b'x' * i for i in range(50)]\n\
         total = 0\n\
         for i in range(20):\n    \
             items = redis.call('LRANGE', KEYS[0], 0, -1)\n    \
             d = {str(j): [j, items, str(j) * 3] for j in range(10)}\n    \
             total += sum(len(x) for x in items) + len(d['9'][2])\n\
         return [total, sum(len(k) for k in keep), keep[49][:3], ARGV[0]]",
    );
    let mut pipeline = Vec::new();
    let n = 3000;
    for i in 0..n {
        let arg = format!("arg{i}");
        pipeline.extend(common::encode(&[
            b"UPYTHON.EVALSHA",
            sha.as_bytes(),
            b"1",
            b"l",
            arg.as_bytes(),
        ]));
    }
    c.send(&pipeline);
    for i in 0..n {
        let got = show(&c.reply());
        let arg = format!("arg{i}");
        let want = format!(
            "*4\\r\\n:180\\r\\n:1225\\r\\n$3\\r\\nxxx\\r\\n${}\\r\\n{arg}\\r\\n",
            arg.len()
        );
        assert_eq!(got, want, "call {i}");
    }
    assert!(info_field(&mut c, "used_memory_vm_upython").unwrap() < 1 << 20);
}

#[test]
fn memory_error_is_recoverable_and_never_a_crash() {
    let g = goblin(&["--upython-memory-limit", "2mb"]);
    let mut c = g.raw();
    // Caught by the script: it drops what it held and goes on.
    assert_eq!(
        py0(
            &mut c,
            "t = []\ntry:\n    while True:\n        t.append(b'x' * 10000)\nexcept MemoryError:\n    n = len(t)\n    t = None\n    return ['recovered', n > 50, len([0] * 1000)]"
        ),
        "*3\\r\\n$9\\r\\nrecovered\\r\\n:1\\r\\n:1000\\r\\n"
    );
    // Not caught: the out-of-memory error reply.
    let got = py0(&mut c, "t = []\nwhile True:\n    t.append(b'x' * 10000)");
    assert!(
        got.starts_with(
            "-ERR Out of memory running script (upython-memory-limit is 2097152 bytes) script: "
        ),
        "{got}"
    );
    // A single allocation bigger than the heap.
    let got = py0(&mut c, "return len(b'x' * 10000000)");
    assert!(
        got.starts_with("-ERR Out of memory running script"),
        "{got}"
    );
    assert_eq!(py0(&mut c, "return 'fine'"), "$4\\r\\nfine\\r\\n");
    assert!(info_field(&mut c, "used_memory_vm_upython").unwrap() < 1 << 20);
    // A new heap size restarts the VM; cached scripts are compiled again.
    let sha = loaded(&mut c, "return len(b'x' * 3000000)");
    assert!(
        show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0"])).starts_with("-ERR Out of memory")
    );
    assert_eq!(c.cmd_str("CONFIG SET upython-memory-limit 8mb"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd(&[b"UPYTHON.EVALSHA", sha.as_bytes(), b"0"])),
        ":3000000\\r\\n"
    );
    assert_eq!(
        show(&c.cmd_str("CONFIG SET upython-memory-limit 1000")),
        "-ERR CONFIG SET failed (possibly related to argument 'upython-memory-limit') - argument must be between 262144 and 1099511627776 inclusive\\r\\n"
    );
}

/// SCRIPT KILL stops a script however it tries to catch the KeyboardInterrupt that delivers it.
#[test]
fn except_base_exception_does_not_swallow_the_kill() {
    let g = goblin(&["--busy-reply-threshold", "100"]);
    let scripts = [
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
        "while True:\n    try:\n        while True:\n            pass\n    except KeyboardInterrupt:\n        continue",
        "try:\n    while True:\n        pass\nexcept BaseException:\n    return 'escaped'",
        "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 'finally'\nwhile True:\n    f()",
    ];
    for script in scripts {
        let mut runner = g.raw();
        runner.send(&common::encode(&[b"UPYTHON.EVAL", script.as_bytes(), b"0"]));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut other = g.raw();
        assert_eq!(other.cmd_str("UPYTHON.SCRIPT KILL"), b"+OK\r\n", "{script}");
        runner
            .s
            .set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let got = show(&runner.reply());
        assert!(
            got.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
            "{script}: {got}"
        );
        assert_eq!(runner.cmd_str("PING"), b"+PONG\r\n");
        // The VM is usable at once, with no kill left pending.
        assert_eq!(
            py0(
                &mut runner,
                "n = 0\nfor i in range(100000):\n    n += 1\nreturn n"
            ),
            ":100000\\r\\n"
        );
    }
}
