//! The QuickJS engine's own rules (docs/commands/QUICKJS.EVAL.md): conversions both ways in RESP2
//! and RESP3, Latin-1 byte strings, the number edges, errors and their wording, pcall, the
//! `redis` helpers, the script cache commands, promises, and a clean exit after SCRIPT FLUSH and
//! on shutdown. What every engine shares (CAD, rescore, busy scripts, the sandbox, the memory
//! limit) is in `scripting_matrix.rs`.

mod common;
use common::{goblin, show, Raw};

/// `QUICKJS.EVAL script numkeys keys... args...`, the reply shown with `\r\n` escaped.
fn js(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> String {
    show(&js_raw(c, script, keys, args))
}

fn js_raw(c: &mut Raw, script: &str, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
    common::eval_raw(c, "QUICKJS.", script, keys, args)
}

/// QUICKJS.SCRIPT LOAD; the digest.
fn loaded(c: &mut Raw, script: &str) -> String {
    common::script_load(c, "QUICKJS.", script)
}

fn js0(c: &mut Raw, script: &str) -> String {
    js(c, script, &[], &[])
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
        ("return 2 ** 53", ":9007199254740992\\r\\n"),
        ("return 2 ** 53 + 2", ":9007199254740994\\r\\n"),
        ("return -(2 ** 63)", ":-9223372036854775808\\r\\n"),
        ("return 9007199254740993n", ":9007199254740993\\r\\n"),
        ("return 2n ** 63n - 1n", ":9223372036854775807\\r\\n"),
        ("return -(2n ** 63n)", ":-9223372036854775808\\r\\n"),
        // Beyond 64 bits a BigInt is a big number (a bulk string for a RESP2 client).
        ("return 2n ** 64n", "$20\\r\\n18446744073709551616\\r\\n"),
        ("return 'hello'", "$5\\r\\nhello\\r\\n"),
        ("return ''", "$0\\r\\n\\r\\n"),
        ("return null", "$-1\\r\\n"),
        ("return undefined", "$-1\\r\\n"),
        ("return", "$-1\\r\\n"),
        ("return true", ":1\\r\\n"),
        ("return false", "$-1\\r\\n"),
        ("return []", "*0\\r\\n"),
        (
            "return [1, 'two', [3, [null]], undefined, true]",
            "*5\\r\\n:1\\r\\n$3\\r\\ntwo\\r\\n*2\\r\\n:3\\r\\n*1\\r\\n$-1\\r\\n$-1\\r\\n:1\\r\\n",
        ),
        (
            "const a = [1]; a[2] = 3; return a",
            "*3\\r\\n:1\\r\\n$-1\\r\\n:3\\r\\n",
        ),
        (
            "return new Uint8Array([0, 255, 13, 10])",
            "$4\\r\\n\u{0}\u{fffd}\\r\\n\\r\\n",
        ),
        ("return {ok: 'FINE'}", "+FINE\\r\\n"),
        ("return {err: 'MY failure'}", "-MY failure\\r\\n"),
        ("return {err: 'plain'}", "-plain\\r\\n"),
        ("return {ok: 'x', err: 'y'}", "-y\\r\\n"),
        ("return {double: 3.5}", "$3\\r\\n3.5\\r\\n"),
        ("return {double: 0 / 0}", "$3\\r\\nnan\\r\\n"),
        (
            "return {big_number: '123456789012345678901234567890'}",
            "$30\\r\\n123456789012345678901234567890\\r\\n",
        ),
        (
            "return new Map([['a', 1], ['b', [2]]])",
            "*4\\r\\n$1\\r\\na\\r\\n:1\\r\\n$1\\r\\nb\\r\\n*1\\r\\n:2\\r\\n",
        ),
        (
            "return new Set(['x', 'y'])",
            "*2\\r\\n$1\\r\\nx\\r\\n$1\\r\\ny\\r\\n",
        ),
        ("return {map: {a: 1}}", "*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n"),
        ("return {set: ['p']}", "*1\\r\\n$1\\r\\np\\r\\n"),
        ("return {set: {q: true}}", "*1\\r\\n$1\\r\\nq\\r\\n"),
        (
            "return {verbatim_string: {format: 'txt', string: 'hi'}}",
            "$2\\r\\nhi\\r\\n",
        ),
        ("return redis.status_reply('FINE')", "+FINE\\r\\n"),
        ("return redis.error_reply('MY boom')", "-MY boom\\r\\n"),
        ("return redis.error_reply('-MY boom')", "-MY boom\\r\\n"),
        ("return redis.error_reply('boom')", "-ERR boom\\r\\n"),
        ("return redis.error_reply('-nospace')", "-ERR nospace\\r\\n"),
        ("return new Error('returned')", "-ERR returned\\r\\n"),
        ("return new TypeError('bad')", "-ERR TypeError: bad\\r\\n"),
        (
            "return [1, {err: 'E inside'}, 2]",
            "*3\\r\\n:1\\r\\n-E inside\\r\\n:2\\r\\n",
        ),
    ];
    for (script, want) in cases {
        assert_eq!(js0(&mut c, script), *want, "{script}");
    }
    // What has no integer value is an error, named.
    for (script, what) in [
        ("return 0 / 0", "NaN"),
        ("return 1 / 0", "Infinity"),
        ("return -1 / 0", "-Infinity"),
        ("return 2 ** 63", "9223372036854776000"),
    ] {
        let got = js0(&mut c, script);
        assert!(
            got.starts_with(&format!(
                "-ERR QuickJS script returned {what} which is not an integer"
            )),
            "{script}: {got}"
        );
    }
    for script in [
        "return () => 1",
        "return Symbol('s')",
        "return {a: 1}",
        "return Promise.resolve({a: 1})",
        "return new Date(0)",
    ] {
        let got = js0(&mut c, script);
        assert!(
            got.starts_with("-ERR QuickJS script returned"),
            "{script}: {got}"
        );
    }
    // A reply nested too deep, or a cycle, ends in an error element, not a hang.
    let got = js0(&mut c, "const a = []; a.push(a); return a");
    assert!(
        got.contains("-ERR reply nested deeper than 1000 levels"),
        "{got}"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn resp3_replies_and_setresp() {
    let g = goblin(&[]);
    let mut c = g.raw();
    assert!(show(&c.cmd_str("HELLO 3")).starts_with('%'));
    let cases: &[(&str, &str)] = &[
        ("return true", "#t\\r\\n"),
        ("return false", "#f\\r\\n"),
        ("return null", "_\\r\\n"),
        ("return {double: 3.5}", ",3.5\\r\\n"),
        ("return 2n ** 64n", "(18446744073709551616\\r\\n"),
        (
            "return new Map([['a', 1]])",
            "%1\\r\\n$1\\r\\na\\r\\n:1\\r\\n",
        ),
        ("return new Set(['x'])", "~1\\r\\n$1\\r\\nx\\r\\n"),
        (
            "return {verbatim_string: {format: 'txt', string: 'hi'}}",
            "=6\\r\\ntxt:hi\\r\\n",
        ),
    ];
    for (script, want) in cases {
        // Booleans follow the script's protocol (redis.setresp), as in Redis's Lua.
        let script = format!("redis.setresp(3); {script}");
        assert_eq!(js0(&mut c, &script), *want, "{script}");
    }
    assert_eq!(js0(&mut c, "return true"), ":1\\r\\n");
    c.cmd_str("HSET h f v");
    c.cmd_str("ZADD z 1.5 m");
    c.cmd_str("SADD s a");
    let cases: &[(&str, &str)] = &[
        // RESP3 replies arrive as JS's own types.
        (
            "redis.setresp(3); const m = redis.call('HGETALL', 'h'); return [m instanceof Map, m.get('f')]",
            "*2\\r\\n#t\\r\\n$1\\r\\nv\\r\\n",
        ),
        (
            "redis.setresp(3); const s = redis.call('SMEMBERS', 's'); return [s instanceof Set, s.has('a')]",
            "*2\\r\\n#t\\r\\n#t\\r\\n",
        ),
        (
            "redis.setresp(3); const d = redis.call('ZSCORE', 'z', 'm'); return [typeof d, {double: d}]",
            "*2\\r\\n$6\\r\\nnumber\\r\\n,1.5\\r\\n",
        ),
        (
            "redis.setresp(3); return redis.call('GET', 'missing') === null",
            "#t\\r\\n",
        ),
        ("redis.setresp(3); return redis.call('HGETALL', 'h')", "%1\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n"),
        // In RESP2 the same replies are arrays and strings.
        (
            "const m = redis.call('HGETALL', 'h'); return [Array.isArray(m), m]",
            "*2\\r\\n:1\\r\\n*2\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n",
        ),
        ("return typeof redis.call('ZSCORE', 'z', 'm')", "$6\\r\\nstring\\r\\n"),
    ];
    for (script, want) in cases {
        assert_eq!(js0(&mut c, script), *want, "{script}");
    }
    for bad in ["redis.setresp(4)", "redis.setresp()"] {
        assert!(js0(&mut c, bad).starts_with("-ERR"), "{bad}");
    }
}

#[test]
fn server_replies_into_js() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET s hello");
    c.cmd_str("SET big 9007199254740990");
    let cases: &[(&str, &str)] = &[
        ("return redis.call('GET', 's')", "$5\\r\\nhello\\r\\n"),
        ("return redis.call('GET', 'missing') === null", ":1\\r\\n"),
        ("return typeof redis.call('INCR', 'n')", "$6\\r\\nnumber\\r\\n"),
        // Integers arrive exact: numbers up to 2^53 - 1, BigInt beyond.
        (
            "return [typeof redis.call('INCR', 'big'), typeof redis.call('INCR', 'big'), redis.call('GET', 'big')]",
            "*3\\r\\n$6\\r\\nnumber\\r\\n$6\\r\\nbigint\\r\\n$16\\r\\n9007199254740992\\r\\n",
        ),
        ("return redis.call('INCRBY', 'big', 1) + 1n", ":9007199254740994\\r\\n"),
        (
            "return redis.call('DECRBY', 'neg', '9223372036854775807') - 1n",
            ":-9223372036854775808\\r\\n",
        ),
        ("return redis.call('SET', 'a', 'b')", "+OK\\r\\n"),
        ("return redis.call('SET', 'a', 'b').ok", "$2\\r\\nOK\\r\\n"),
        ("return redis.call('PING')", "+PONG\\r\\n"),
        (
            "const r = redis.call('MGET', 's', 'missing'); return [r.length, r[1] === null]",
            "*2\\r\\n:2\\r\\n:1\\r\\n",
        ),
        // Numbers are sent as their JS string form; BigInts exactly.
        ("redis.call('SET', 'f', 0.1); return redis.call('GET', 'f')", "$3\\r\\n0.1\\r\\n"),
        ("redis.call('SET', 'f', 1e21); return redis.call('GET', 'f')", "$5\\r\\n1e+21\\r\\n"),
        ("redis.call('SET', 'f', -0.5); return redis.call('GET', 'f')", "$4\\r\\n-0.5\\r\\n"),
        (
            "redis.call('SET', 'f', 2n ** 63n - 1n); return redis.call('GET', 'f')",
            "$19\\r\\n9223372036854775807\\r\\n",
        ),
        (
            "redis.call('SET', 'f', new Uint8Array([104, 105])); return redis.call('GET', 'f')",
            "$2\\r\\nhi\\r\\n",
        ),
        ("return redis.call('ECHO', 'a\\0b')", "$3\\r\\na\u{0}b\\r\\n"),
    ];
    for (script, want) in cases {
        assert_eq!(js0(&mut c, script), *want, "{script}");
    }
}

#[test]
fn errors_pcall_and_their_wording() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET s abc");
    let sha = |script: &str| {
        use std::fmt::Write;
        let digest = sha1_smol::Sha1::from(script).digest().bytes();
        digest.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    // An uncaught error names the script and its line; ERR unless the message has a code.
    let script = "\nthrow new Error('boom')";
    assert_eq!(
        js0(&mut c, script),
        format!("-ERR boom script: {}, on user_script:2.\\r\\n", sha(script))
    );
    let script = "throw new Error('MYCODE custom failure')";
    assert!(js0(&mut c, script).starts_with("-MYCODE custom failure script: "));
    let script = "null.x";
    assert!(js0(&mut c, script)
        .starts_with("-ERR TypeError: cannot read property 'x' of null script: "));
    assert!(js0(&mut c, "throw 'a string'").starts_with("-ERR a string script: "));
    assert_eq!(js0(&mut c, "throw {err: 'OWN code'}"), "-OWN code\\r\\n");
    assert!(
        js0(&mut c, "throw {message: 'plain object'}").starts_with("-ERR plain object script: ")
    );
    assert!(js0(&mut c, "throw {a: 1}").starts_with("-ERR [object Object] script: "));
    // redis.call throws an Error whose message is the server's error text.
    let got = js0(&mut c, "\n\nreturn redis.call('INCR', 's')");
    assert!(
        got.starts_with("-ERR value is not an integer or out of range script: ")
            && got.contains(", on user_script:3."),
        "{got}"
    );
    let got = js0(&mut c, "return redis.call('HGET', 's', 'f')");
    assert!(
        got.starts_with(
            "-WRONGTYPE Operation against a key holding the wrong kind of value script: "
        ),
        "{got}"
    );
    assert_eq!(
        js0(
            &mut c,
            "try { redis.call('INCR', 's') } catch (e) { return [e instanceof Error, e.message] }"
        ),
        "*2\\r\\n:1\\r\\n$43\\r\\nERR value is not an integer or out of range\\r\\n"
    );
    // pcall returns the error as {err}; returning it replies the error.
    assert_eq!(
        js0(&mut c, "return redis.pcall('INCR', 's').err"),
        "$43\\r\\nERR value is not an integer or out of range\\r\\n"
    );
    assert_eq!(
        js0(&mut c, "return redis.pcall('INCR', 's')"),
        "-ERR value is not an integer or out of range\\r\\n"
    );
    assert_eq!(
        js0(&mut c, "return redis.pcall('GET', 's')"),
        "$3\\r\\nabc\\r\\n"
    );
    for (script, prefix) in [
        (
            "return redis.call()",
            "-ERR Please specify at least one argument for this redis lib call",
        ),
        (
            "return redis.call('GET', {})",
            "-ERR TypeError: redis.call arguments must be strings, numbers, BigInts or Uint8Arrays",
        ),
        (
            "return redis.call('GET', null)",
            "-ERR TypeError: redis.call arguments must be",
        ),
        (
            "return redis.call('NOSUCH')",
            "-ERR Unknown Redis command called from script",
        ),
        (
            "return redis.call('GET')",
            "-ERR Wrong number of args calling Redis command from script",
        ),
        (
            "return redis.error_reply(1)",
            "-ERR TypeError: redis.error_reply takes one string",
        ),
        (
            "return redis.status_reply()",
            "-ERR TypeError: redis.status_reply takes one string",
        ),
        (
            "redis.log(redis.LOG_WARNING)",
            "-ERR redis.log() requires two arguments or more.",
        ),
        (
            "redis.log('x', 'y')",
            "-ERR First argument must be a number (log level).",
        ),
        ("redis.log(9, 'y')", "-ERR Invalid debug level."),
        ("return }", "-ERR Error compiling script: SyntaxError"),
        (
            "#!lua\nreturn 1",
            "-ERR Unexpected engine in script shebang: #!lua",
        ),
    ] {
        let got = js0(&mut c, script);
        assert!(got.starts_with(prefix), "{script}: {got}");
    }
    // Stack overflow is a catchable RangeError; the server goes on.
    assert_eq!(
        js0(
            &mut c,
            "try { (function f() { f(); })(); } catch (e) { return e.message }"
        ),
        "$32\\r\\nMaximum call stack size exceeded\\r\\n"
    );
    assert!(js0(&mut c, "function f() { return f() + 1 } return f()")
        .starts_with("-ERR RangeError: Maximum call stack size exceeded"));
    // A body cannot close its function to run code at load time.
    assert_eq!(
        js0(&mut c, "}); while (true) {} (function () {"),
        "-ERR Error compiling script: the body runs code outside its function\\r\\n"
    );
    assert_eq!(
        js0(
            &mut c,
            "}); Promise.resolve().then(() => redis.call('SET', 'x', 'y')); (function () {"
        ),
        "-ERR Error compiling script: the body runs code outside its function\\r\\n"
    );
    assert_eq!(js0(&mut c, "return redis.call('EXISTS', 'x')"), ":0\\r\\n");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

/// Every byte survives KEYS/ARGV → JS → a command → the reply: strings are Latin-1.
#[test]
fn binary_safe_latin1_strings() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let all: Vec<u8> = (0..=255u8).collect();
    let key: Vec<u8> = [b"k\xff\x00", &all[..]].concat();
    let got = js_raw(
        &mut c,
        "redis.call('SET', KEYS[0], ARGV[0]); return [ARGV[0].length, ARGV[0].charCodeAt(255), redis.call('GET', KEYS[0]), ARGV[0]]",
        &[&key],
        &[&all],
    );
    let mut want = b"*4\r\n:256\r\n:255\r\n$256\r\n".to_vec();
    want.extend_from_slice(&all);
    want.extend_from_slice(b"\r\n$256\r\n");
    want.extend_from_slice(&all);
    want.extend_from_slice(b"\r\n");
    assert_eq!(got, want);
    assert_eq!(c.cmd(&[b"STRLEN", &key]), b":256\r\n");
    // JS text: chars up to 255 are bytes; a string with a char above 255 goes as UTF-8.
    assert_eq!(js0(&mut c, "return '\\u00e9'"), "$1\\r\\n\u{fffd}\\r\\n");
    assert_eq!(
        js_raw(&mut c, "return '\\u00e9'", &[], &[]),
        b"$1\r\n\xe9\r\n"
    );
    assert_eq!(js0(&mut c, "return '\u{20ac}'"), "$3\\r\\n\u{20ac}\\r\\n");
    assert_eq!(
        js0(&mut c, "return redis.toUtf8('\u{e9}')"),
        "$2\\r\\n\u{e9}\\r\\n"
    );
    assert_eq!(
        js(&mut c, "return [ARGV[0].length, redis.fromUtf8(ARGV[0]).length, redis.fromUtf8(ARGV[0]) === '\u{e9}\u{20ac}']", &[], &["\u{e9}\u{20ac}".as_bytes()]),
        "*3\\r\\n:5\\r\\n:2\\r\\n:1\\r\\n"
    );
    // Comparisons and ordering are by byte.
    assert_eq!(
        js(&mut c, "return ARGV[0] < ARGV[1]", &[], &[b"\x7f", b"\x80"]),
        ":1\\r\\n"
    );
}

#[test]
fn keys_argv_helpers_and_isolation() {
    let g = goblin(&["--logfile", "server.log"]);
    let mut c = g.raw();
    assert_eq!(
        js(
            &mut c,
            "return [KEYS.length, ARGV.length, KEYS[1], ARGV[2]]",
            &[b"k1", b"k2"],
            &[b"a1", b"a2", b"a3"]
        ),
        "*4\\r\\n:2\\r\\n:3\\r\\n$2\\r\\nk2\\r\\n$2\\r\\na3\\r\\n"
    );
    assert_eq!(
        js(&mut c, "KEYS.push('x'); return KEYS.length", &[b"k"], &[]),
        ":2\\r\\n"
    );
    assert_eq!(
        js(&mut c, "KEYS.push('x'); return KEYS.length", &[b"k"], &[]),
        ":2\\r\\n"
    );
    assert_eq!(
        js0(&mut c, "return redis.sha1hex('abc')"),
        "$40\\r\\na9993e364706816aba3e25717850c26c9cd0d89d\\r\\n"
    );
    assert_eq!(
        js0(&mut c, "return redis.sha1hex('')"),
        "$40\\r\\nda39a3ee5e6b4b0d3255bfef95601890afd80709\\r\\n"
    );
    assert_eq!(
        js0(
            &mut c,
            "return [redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING]"
        ),
        "*4\\r\\n:0\\r\\n:1\\r\\n:2\\r\\n:3\\r\\n"
    );
    assert_eq!(
        js0(
            &mut c,
            "redis.log(redis.LOG_WARNING, 'from', 'js'); return 1"
        ),
        ":1\\r\\n"
    );
    let log = std::fs::read_to_string(g.dir.join("server.log")).unwrap();
    assert!(log.contains("from js"), "{log}");
    assert_eq!(
        js0(&mut c, "return redis.REDIS_VERSION"),
        "$6\\r\\n7.0.15\\r\\n"
    );
    // Nothing a script does is seen by the next one.
    assert!(js0(&mut c, "Math.leak = 1").starts_with("-ERR TypeError"));
    assert!(js0(&mut c, "JSON.parse = null").starts_with("-ERR TypeError"));
    assert!(js0(&mut c, "return leak").starts_with("-ERR ReferenceError: leak is not defined"));
    assert_eq!(
        js0(&mut c, "var x = 1; return typeof globalThis.x"),
        "$9\\r\\nundefined\\r\\n"
    );
    // The language is all there: classes, closures, generators, JSON, RegExp, BigInt, Date.
    assert_eq!(
        js0(&mut c, "class P { constructor(x) { this.x = x } get d() { return this.x * 2 } } function* g() { yield 1; yield 2 } return [new P(2).d, [...g()].length, JSON.stringify({a: [1]}), /b+/.exec('abbc')[0], String(10n ** 20n), typeof Date.now()]"),
        "*6\\r\\n:4\\r\\n:2\\r\\n$9\\r\\n{\"a\":[1]}\\r\\n$2\\r\\nbb\\r\\n$21\\r\\n100000000000000000000\\r\\n$6\\r\\nnumber\\r\\n"
    );
    // Promise jobs run before the reply; a returned promise replies its value.
    assert_eq!(
        js0(
            &mut c,
            "Promise.resolve().then(() => redis.call('SET', 'p', 'done')); return 1"
        ),
        ":1\\r\\n"
    );
    assert_eq!(c.cmd_str("GET p"), b"$4\r\ndone\r\n");
    assert_eq!(
        js0(&mut c, "return (async () => { const v = redis.call('GET', 'p'); await null; return [v, 'after'] })()"),
        "*2\\r\\n$4\\r\\ndone\\r\\n$5\\r\\nafter\\r\\n"
    );
    assert!(
        js0(&mut c, "return Promise.reject(new Error('nope'))").starts_with("-ERR nope script: ")
    );
    assert_eq!(
        js0(&mut c, "return new Promise(() => {})"),
        "-ERR QuickJS script returned a promise that never settled\\r\\n"
    );
}

#[test]
fn script_cache_commands_and_clean_exit() {
    let mut g = goblin(&[]);
    let mut c = g.raw();
    let sha = loaded(&mut c, "return ARGV[0] + '!'");
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.EVALSHA {sha} 0 hi")),
        b"$3\r\nhi!\r\n"
    );
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.EVALSHA {} 0 hi", sha.to_uppercase())),
        b"$3\r\nhi!\r\n"
    );
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.EVALSHA_RO {sha} 0 ro")),
        b"$3\r\nro!\r\n"
    );
    // Each engine has its own cache.
    assert_eq!(c.cmd_str(&format!("SCRIPT EXISTS {sha}")), b"*1\r\n:0\r\n");
    assert_eq!(
        c.cmd_str(&format!(
            "QUICKJS.SCRIPT EXISTS {sha} ffffffffffffffffffffffffffffffffffffffff"
        )),
        b"*2\r\n:1\r\n:0\r\n"
    );
    assert!(show(&c.cmd_str("INFO memory")).contains("used_memory_vm_quickjs:"));
    assert!(show(&c.cmd_str("INFO memory")).contains("number_of_cached_scripts:1"));
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd_str(&format!("QUICKJS.EVALSHA {sha} 0 hi"))),
        "-NOSCRIPT No matching script. Please use EVAL.\\r\\n"
    );
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.SCRIPT EXISTS {sha}")),
        b"*1\r\n:0\r\n"
    );
    assert_eq!(
        c.cmd_str("QUICKJS.EVAL \"return ARGV[0] + '!'\" 0 again"),
        b"$6\r\nagain!\r\n"
    );
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.EVALSHA {sha} 0 hi")),
        b"$3\r\nhi!\r\n"
    );
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT FLUSH ASYNC"), b"+OK\r\n");
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT FLUSH SYNC"), b"+OK\r\n");
    assert!(show(&c.cmd_str("QUICKJS.SCRIPT FLUSH bad"))
        .starts_with("-ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
    assert!(show(&c.cmd_str("QUICKJS.SCRIPT KILL")).starts_with("-NOTBUSY"));
    assert!(show(&c.cmd_str("QUICKJS.SCRIPT HELP")).contains("QUICKJS.SCRIPT <subcommand>"));
    assert!(show(&c.cmd_str("QUICKJS.SCRIPT LOAD \"return }\""))
        .starts_with("-ERR Error compiling script"));
    // Shebang flags: no-writes refuses writes.
    let got = show(
        &c.cmd_str("QUICKJS.EVAL \"#!js flags=no-writes\nreturn redis.call('SET', 'k', 'v')\" 0"),
    );
    assert!(
        got.starts_with("-ERR Write commands are not allowed from read-only scripts."),
        "{got}"
    );
    assert_eq!(c.cmd_str("QUICKJS.EVAL \"#!js\nreturn 1\" 0"), b":1\r\n");
    // Scripts alive in the cache (and a VM rebuilt by FLUSH) at shutdown: the process exits 0.
    c.cmd_str("QUICKJS.SCRIPT LOAD \"return new Map([['a', [1, 2]]])\"");
    c.cmd_str("QUICKJS.EVAL \"return 1\" 0");
    c.send(b"SHUTDOWN NOSAVE\r\n");
    assert_eq!(g.wait_exit(std::time::Duration::from_secs(10)), Some(true));
}

/// SCRIPT KILL of a script whose promise jobs never end: the VM is rebuilt (the jobs never run
/// in another script) with the loaded scripts still there; SHUTDOWN then exits cleanly.
#[test]
fn kill_with_pending_jobs_rebuilds_the_vm() {
    let mut g = goblin(&["--busy-reply-threshold", "100"]);
    let mut c = g.raw();
    let sha = loaded(&mut c, "return 'kept'");
    let mut runner = g.raw();
    runner.send(&common::encode(&[
        b"QUICKJS.EVAL",
        b"const f = () => Promise.resolve().then(() => { redis.call('INCR', 'jobs'); f(); }); f(); return 1",
        b"0",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    // It wrote (INCR), so it cannot be killed; SHUTDOWN NOSAVE ends it.
    assert!(show(&c.cmd_str("QUICKJS.SCRIPT KILL")).starts_with("-UNKILLABLE"));
    c.send(b"SHUTDOWN NOSAVE\r\n");
    assert_eq!(g.wait_exit(std::time::Duration::from_secs(10)), Some(true));

    let g = goblin(&["--busy-reply-threshold", "100"]);
    let mut c = g.raw();
    assert_eq!(loaded(&mut c, "return 'kept'"), sha);
    let mut runner = g.raw();
    runner.send(&common::encode(&[
        b"QUICKJS.EVAL",
        b"const f = () => Promise.resolve().then(() => { f(); }); f(); return 1",
        b"0",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT KILL"), b"+OK\r\n");
    runner
        .s
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    assert!(show(&runner.reply()).starts_with("-ERR Script killed by user with SCRIPT KILL..."));
    assert_eq!(
        c.cmd_str(&format!("QUICKJS.EVALSHA {sha} 0")),
        b"$4\r\nkept\r\n"
    );
    assert_eq!(
        c.cmd_str("QUICKJS.EVAL \"return 'fresh'\" 0"),
        b"$5\r\nfresh\r\n"
    );
    let used = show(&c.cmd_str("INFO memory"));
    let used: usize = used
        .split("used_memory_vm_quickjs:")
        .nth(1)
        .and_then(|r| r.split("\\r\\n").next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(used < 4 << 20, "{used}");
}

#[test]
fn memory_limit_directive() {
    let g = goblin(&["--quickjs-memory-limit", "8mb"]);
    let mut c = g.raw();
    assert_eq!(
        show(&c.cmd_str("CONFIG GET quickjs-memory-limit")),
        "*2\\r\\n$20\\r\\nquickjs-memory-limit\\r\\n$7\\r\\n8388608\\r\\n"
    );
    let got = js0(&mut c, "return 'x'.repeat(16 << 20).length");
    assert!(
        got.starts_with(
            "-ERR Out of memory running script (quickjs-memory-limit is 8388608 bytes)"
        ),
        "{got}"
    );
    // Catching the error does not get past the limit, and the VM stays usable.
    let got = js0(
        &mut c,
        "const t = []; for (;;) { try { t.push('y'.repeat(1 << 20)) } catch (e) { t.push(e) } }",
    );
    assert!(got.contains("memory"), "{got}");
    assert_eq!(c.cmd_str("CONFIG SET quickjs-memory-limit 0"), b"+OK\r\n");
    assert_eq!(
        js0(&mut c, "return 'x'.repeat(16 << 20).length"),
        ":16777216\\r\\n"
    );
}
