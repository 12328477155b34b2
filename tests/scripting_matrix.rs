//! The scripting conformance matrix: every case is written once, as a row with one script per
//! engine, and runs on every engine that exists, by `EVAL` and by `SCRIPT LOAD` + `EVALSHA` (with
//! the engine's prefix), and as a function: the body wrapped by `library` into a one-function
//! library, `FUNCTION LOAD` + `FCALL`. An engine issue adds its column to `ENGINES` and its script
//! to every row (a row without a script for an existing engine fails), and its wrapper to
//! `library`.

mod common;
use common::{goblin, show, Raw};

/// One engine: its name (as in a case's scripts), command prefix and idiom file extension.
struct Engine {
    name: &'static str,
    prefix: &'static str,
    ext: &'static str,
}

const ENGINES: &[Engine] = &[
    Engine {
        name: "lua",
        prefix: "",
        ext: "lua",
    },
    Engine {
        name: "luau",
        prefix: "LUAU.",
        ext: "luau",
    },
    Engine {
        name: "quickjs",
        prefix: "QUICKJS.",
        ext: "js",
    },
    Engine {
        name: "wren",
        prefix: "WREN.",
        ext: "wren",
    },
    Engine {
        name: "upython",
        prefix: "UPYTHON.",
        ext: "py",
    },
    Engine {
        name: "tcl",
        prefix: "TCL.",
        ext: "tcl",
    },
];

/// A case's body as a library with one function, `matrix_case`, whose parameters are named KEYS
/// and ARGV so the body runs unchanged.
fn library(engine: &Engine, body: &[u8]) -> Vec<u8> {
    let body = String::from_utf8_lossy(body);
    let lib = match engine.name {
        "lua" | "luau" => format!(
            "#!{} name=matrix\nredis.register_function('matrix_case', function(KEYS, ARGV)\n{body}\nend)",
            engine.name
        ),
        "quickjs" => format!(
            "#!js name=matrix\nredis.register_function('matrix_case', function (KEYS, ARGV) {{\n{body}\n}});"
        ),
        "wren" => format!(
            "#!wren name=matrix\nRedis.registerFunction(\"matrix_case\", Fn.new {{ |keys, argv|\n{body}\n}})"
        ),
        // A script's body is a proc body already: a proc of the same parameters is the callback.
        "tcl" => format!(
            "#!tcl name=matrix\nproc matrix_case {{KEYS ARGV}} {{\n{body}\n}}\nredis register_function matrix_case matrix_case"
        ),
        // The body indented by a tab under the `def` (as UPYTHON.EVAL wraps it).
        "upython" => format!(
            "#!python name=matrix\ndef matrix_case(KEYS, ARGV):\n\t{}\n\tpass\nredis.register_function('matrix_case', matrix_case)",
            body.replace('\n', "\n\t")
        ),
        other => panic!("engine {other}: add its wrapper to `library`"),
    };
    lib.into_bytes()
}

enum Expect {
    /// The exact reply bytes.
    Reply(&'static str),
    /// The exact reply bytes, then each (command, exact reply) on the same connection: what the
    /// script left behind.
    ReplyThen(&'static str, &'static [(&'static str, &'static str)]),
    /// An error reply starting with this text.
    ErrorStarting(&'static str),
}

struct Case {
    name: &'static str,
    /// Commands run before the script (replies not checked).
    setup: &'static [&'static str],
    /// (engine, body); a body `@name` is the file `benchmarks/scripts/name.<ext>`.
    scripts: &'static [(&'static str, &'static str)],
    keys: &'static [&'static str],
    args: &'static [&'static str],
    expect: Expect,
}

fn body(engine: &Engine, case: &Case) -> Vec<u8> {
    let (_, script) = case
        .scripts
        .iter()
        .find(|(e, _)| *e == engine.name)
        .unwrap_or_else(|| panic!("case '{}' has no {} script", case.name, engine.name));
    match script.strip_prefix('@') {
        Some(file) => {
            let path = format!(
                "{}/benchmarks/scripts/{file}.{}",
                env!("CARGO_MANIFEST_DIR"),
                engine.ext
            );
            std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        }
        None => script.as_bytes().to_vec(),
    }
}

fn call(c: &mut Raw, cmd: &[u8], script: &[u8], case: &Case) -> Vec<u8> {
    let numkeys = case.keys.len().to_string();
    let mut args: Vec<&[u8]> = vec![cmd, script, numkeys.as_bytes()];
    args.extend(case.keys.iter().map(|k| k.as_bytes()));
    args.extend(case.args.iter().map(|a| a.as_bytes()));
    c.cmd(&args)
}

/// `None` if the reply (and what the script left behind) is as expected, else what differs.
fn check(c: &mut Raw, got: &[u8], expect: &Expect) -> Option<String> {
    let got = show(got);
    match expect {
        Expect::Reply(want) => (got != *want).then(|| format!("got {got}")),
        Expect::ReplyThen(want, after) => {
            if got != *want {
                return Some(format!("got {got}"));
            }
            after.iter().find_map(|(cmd, reply)| {
                let then = show(&c.cmd_str(cmd));
                (then != *reply).then(|| format!("then {cmd}: got {then}"))
            })
        }
        Expect::ErrorStarting(prefix) => {
            (!got.starts_with(&format!("-{prefix}"))).then(|| format!("got {got}"))
        }
    }
}

fn run_matrix(cases: &[Case]) {
    let g = goblin(&[]);
    let mut failures = Vec::new();
    for engine in ENGINES {
        for case in cases {
            let script = body(engine, case);
            let lib = library(engine, &script);
            for mode in ["EVAL", "EVALSHA", "FCALL"] {
                let mut c = g.raw();
                c.cmd_str("FLUSHALL");
                for s in case.setup {
                    c.cmd_str(s);
                }
                let got = match mode {
                    "EVALSHA" => {
                        let load = format!("{}SCRIPT", engine.prefix);
                        let sha = c.cmd(&[load.as_bytes(), b"LOAD", &script]);
                        let sha = &sha[sha.len() - 42..sha.len() - 2];
                        call(
                            &mut c,
                            format!("{}EVALSHA", engine.prefix).as_bytes(),
                            sha,
                            case,
                        )
                    }
                    "FCALL" => {
                        let loaded = c.cmd(&[b"FUNCTION", b"LOAD", b"REPLACE", &lib]);
                        assert_eq!(show(&loaded), "$6\\r\\nmatrix\\r\\n", "{}", case.name);
                        call(&mut c, b"FCALL", b"matrix_case", case)
                    }
                    _ => call(
                        &mut c,
                        format!("{}EVAL", engine.prefix).as_bytes(),
                        &script,
                        case,
                    ),
                };
                if let Some(why) = check(&mut c, &got, &case.expect) {
                    failures.push(format!("{} / {} ({mode}): {why}", engine.name, case.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every engine's `benchmarks/scripts/rescore.<ext>`.
const ALL_RESCORE: &[(&str, &str)] = &[
    ("lua", "@rescore"),
    ("luau", "@rescore"),
    ("quickjs", "@rescore"),
    ("upython", "@rescore"),
    ("tcl", "@rescore"),
    ("wren", "@rescore"),
];

#[test]
fn compare_and_delete_idiom() {
    run_matrix(&[
        Case {
            name: "cad deletes on a matching token",
            setup: &["SET lock tok"],
            scripts: &[
                ("lua", "@cad"),
                ("luau", "@cad"),
                ("quickjs", "@cad"),
                ("wren", "@cad"),
                ("upython", "@cad"),
                ("tcl", "@cad"),
            ],
            keys: &["lock"],
            args: &["tok"],
            expect: Expect::ReplyThen(":1\\r\\n", &[("EXISTS lock", ":0\\r\\n")]),
        },
        Case {
            name: "cad keeps on another token",
            setup: &["SET lock tok"],
            scripts: &[
                ("lua", "@cad"),
                ("luau", "@cad"),
                ("quickjs", "@cad"),
                ("wren", "@cad"),
                ("upython", "@cad"),
                ("tcl", "@cad"),
            ],
            keys: &["lock"],
            args: &["other"],
            expect: Expect::ReplyThen(":0\\r\\n", &[("GET lock", "$3\\r\\ntok\\r\\n")]),
        },
        Case {
            name: "cad on a missing key",
            setup: &[],
            scripts: &[
                ("lua", "@cad"),
                ("luau", "@cad"),
                ("quickjs", "@cad"),
                ("wren", "@cad"),
                ("upython", "@cad"),
                ("tcl", "@cad"),
            ],
            keys: &["lock"],
            args: &["tok"],
            expect: Expect::Reply(":0\\r\\n"),
        },
        Case {
            name: "cad on a wrong type",
            setup: &["HSET lock f v"],
            scripts: &[
                ("lua", "@cad"),
                ("luau", "@cad"),
                ("quickjs", "@cad"),
                ("wren", "@cad"),
                ("upython", "@cad"),
                ("tcl", "@cad"),
            ],
            keys: &["lock"],
            args: &["tok"],
            expect: Expect::ErrorStarting(
                "WRONGTYPE Operation against a key holding the wrong kind of value",
            ),
        },
    ]);
}

#[test]
fn conversions_to_replies() {
    run_matrix(&[
        Case {
            name: "integer",
            setup: &[],
            scripts: &[
                ("lua", "return 42"),
                ("luau", "return 42"),
                ("quickjs", "return 42"),
                ("wren", "return 42"),
                ("upython", "return 42"),
                ("tcl", "expr {42}"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply(":42\\r\\n"),
        },
        Case {
            name: "negative fraction truncates",
            setup: &[],
            scripts: &[
                ("lua", "return -3.7"),
                ("luau", "return -3.7"),
                ("quickjs", "return -3.7"),
                ("wren", "return -3.7"),
                ("upython", "return -3.7"),
                ("tcl", "expr {-3.7}"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply(":-3\\r\\n"),
        },
        Case {
            name: "binary-safe bytes",
            setup: &[],
            scripts: &[
                ("lua", "return ARGV[1]"),
                ("luau", "return ARGV[1]"),
                ("quickjs", "return ARGV[0]"),
                ("wren", "return argv[0]"),
                ("upython", "return ARGV[0]"),
                ("tcl", "lindex $ARGV 0"),
            ],
            keys: &[],
            args: &["a\u{0}b\r\n\u{7f}"],
            expect: Expect::Reply("$6\\r\\na\u{0}b\\r\\n\u{7f}\\r\\n"),
        },
        Case {
            name: "nil",
            setup: &[],
            scripts: &[
                ("lua", "return nil"),
                ("luau", "return nil"),
                ("quickjs", "return null"),
                ("wren", "return null"),
                ("upython", "return None"),
                ("tcl", "redis nil"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("$-1\\r\\n"),
        },
        Case {
            name: "nested array",
            setup: &[],
            scripts: &[
                ("lua", "return {1, 'two', {3}}"),
                ("luau", "return {1, 'two', {3}}"),
                ("quickjs", "return [1, 'two', [3]]"),
                ("wren", "return [1, \"two\", [3]]"),
                ("upython", "return [1, 'two', [3]]"),
                ("tcl", "list [redis int 1] two [list [redis int 3]]"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("*3\\r\\n:1\\r\\n$3\\r\\ntwo\\r\\n*1\\r\\n:3\\r\\n"),
        },
        Case {
            name: "status",
            setup: &[],
            scripts: &[
                ("lua", "return redis.status_reply('FINE')"),
                ("luau", "return redis.status_reply('FINE')"),
                ("quickjs", "return redis.status_reply('FINE')"),
                ("wren", "return Redis.statusReply(\"FINE\")"),
                ("upython", "return redis.status_reply('FINE')"),
                ("tcl", "redis status_reply FINE"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("+FINE\\r\\n"),
        },
        Case {
            name: "error",
            setup: &[],
            scripts: &[
                ("lua", "return redis.error_reply('MY failure')"),
                ("luau", "return redis.error_reply('MY failure')"),
                ("quickjs", "return redis.error_reply('MY failure')"),
                ("wren", "return Redis.errorReply(\"MY failure\")"),
                ("upython", "return redis.error_reply('MY failure')"),
                ("tcl", "redis error_reply {MY failure}"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("-MY failure\\r\\n"),
        },
        Case {
            name: "true and false",
            setup: &[],
            scripts: &[
                ("lua", "return {true, false}"),
                ("luau", "return {true, false}"),
                ("quickjs", "return [true, false]"),
                ("wren", "return [true, false]"),
                ("upython", "return [True, False]"),
                ("tcl", "list [redis bool true] [redis bool false]"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("*2\\r\\n:1\\r\\n$-1\\r\\n"),
        },
        Case {
            name: "keys and args in order",
            setup: &[],
            scripts: &[
                ("lua", "return {KEYS[1], KEYS[2], ARGV[1]}"),
                ("luau", "return {KEYS[1], KEYS[2], ARGV[1]}"),
                ("quickjs", "return [KEYS[0], KEYS[1], ARGV[0]]"),
                ("wren", "return [keys[0], keys[1], argv[0]]"),
                ("upython", "return [KEYS[0], KEYS[1], ARGV[0]]"),
                (
                    "tcl",
                    "list [lindex $KEYS 0] [lindex $KEYS 1] [lindex $ARGV 0]",
                ),
            ],
            keys: &["k1", "k2"],
            args: &["a1"],
            expect: Expect::Reply("*3\\r\\n$2\\r\\nk1\\r\\n$2\\r\\nk2\\r\\n$2\\r\\na1\\r\\n"),
        },
    ]);
}

#[test]
fn server_replies_into_the_script() {
    run_matrix(&[
        Case {
            name: "integer and bulk replies",
            setup: &["SET n 41"],
            scripts: &[
                (
                    "lua",
                    "return {redis.call('INCR', KEYS[1]), redis.call('GET', KEYS[1])}",
                ),
                (
                    "luau",
                    "return {redis.call('INCR', KEYS[1]), redis.call('GET', KEYS[1])}",
                ),
                (
                    "quickjs",
                    "return [redis.call('INCR', KEYS[0]), redis.call('GET', KEYS[0])]",
                ),
                (
                    "wren",
                    "return [Redis.call(\"INCR\", keys[0]), Redis.call(\"GET\", keys[0])]",
                ),
                (
                    "upython",
                    "return [redis.call('INCR', KEYS[0]), redis.call('GET', KEYS[0])]",
                ),
                ("tcl", "list [redis call INCR [lindex $KEYS 0]] [redis call GET [lindex $KEYS 0]]"),
            ],
            keys: &["n"],
            args: &[],
            expect: Expect::Reply("*2\\r\\n:42\\r\\n$2\\r\\n42\\r\\n"),
        },
        Case {
            name: "missing key is false",
            setup: &[],
            scripts: &[
                (
                    "lua",
                    "return redis.call('GET', KEYS[1]) == false and 'nil' or 'value'",
                ),
                (
                    "luau",
                    "return redis.call('GET', KEYS[1]) == false and 'nil' or 'value'",
                ),
                (
                    "quickjs",
                    "return redis.call('GET', KEYS[0]) === null ? 'nil' : 'value'",
                ),
                (
                    "wren",
                    "return Redis.call(\"GET\", keys[0]) == null ? \"nil\" : \"value\"",
                ),
                (
                    "upython",
                    "return 'nil' if redis.call('GET', KEYS[0]) is None else 'value'",
                ),
                ("tcl", "if {[redis type [redis call GET [lindex $KEYS 0]]] eq \"nil\"} {return nil} {return value}"),
            ],
            keys: &["missing"],
            args: &[],
            expect: Expect::Reply("$3\\r\\nnil\\r\\n"),
        },
        Case {
            name: "status reply",
            setup: &[],
            scripts: &[
                ("lua", "return redis.call('SET', KEYS[1], 'v')"),
                ("luau", "return redis.call('SET', KEYS[1], 'v')"),
                ("quickjs", "return redis.call('SET', KEYS[0], 'v')"),
                ("wren", "return Redis.call(\"SET\", keys[0], \"v\")"),
                ("upython", "return redis.call('SET', KEYS[0], 'v')"),
                ("tcl", "redis call SET [lindex $KEYS 0] v"),
            ],
            keys: &["k"],
            args: &[],
            expect: Expect::Reply("+OK\\r\\n"),
        },
        Case {
            name: "call raises the server's error",
            setup: &["SET s abc"],
            scripts: &[
                ("lua", "return redis.call('INCR', KEYS[1])"),
                ("luau", "return redis.call('INCR', KEYS[1])"),
                ("quickjs", "return redis.call('INCR', KEYS[0])"),
                ("wren", "return Redis.call(\"INCR\", keys[0])"),
                ("upython", "return redis.call('INCR', KEYS[0])"),
                ("tcl", "redis call INCR [lindex $KEYS 0]"),
            ],
            keys: &["s"],
            args: &[],
            expect: Expect::ErrorStarting("ERR value is not an integer or out of range"),
        },
        Case {
            name: "pcall returns the error",
            setup: &["SET s abc"],
            scripts: &[
                (
                    "lua",
                    "local r = redis.pcall('INCR', KEYS[1]) return 'caught: ' .. r.err",
                ),
                (
                    "luau",
                    "local r = redis.pcall('INCR', KEYS[1]) return 'caught: ' .. r.err",
                ),
                (
                    "quickjs",
                    "const r = redis.pcall('INCR', KEYS[0]); return 'caught: ' + r.err",
                ),
                (
                    "wren",
                    "var r = Redis.pcall(\"INCR\", keys[0])\nreturn \"caught: \" + r[\"err\"]",
                ),
                (
                    "upython",
                    "r = redis.pcall('INCR', KEYS[0])\nreturn 'caught: ' + r['err']",
                ),
                ("tcl", "set r [redis pcall INCR [lindex $KEYS 0]]; return \"caught: $r\""),
            ],
            keys: &["s"],
            args: &[],
            expect: Expect::Reply(
                "$51\\r\\ncaught: ERR value is not an integer or out of range\\r\\n",
            ),
        },
        Case {
            name: "unknown command",
            setup: &[],
            scripts: &[
                ("lua", "return redis.call('NOSUCH')"),
                ("luau", "return redis.call('NOSUCH')"),
                ("quickjs", "return redis.call('NOSUCH')"),
                ("wren", "return Redis.call(\"NOSUCH\")"),
                ("upython", "return redis.call('NOSUCH')"),
                ("tcl", "redis call NOSUCH"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::ErrorStarting("ERR Unknown Redis command called from script"),
        },
        Case {
            name: "noscript command refused",
            setup: &[],
            scripts: &[
                ("lua", "return redis.call('SCRIPT', 'FLUSH')"),
                ("luau", "return redis.call('SCRIPT', 'FLUSH')"),
                ("quickjs", "return redis.call('SCRIPT', 'FLUSH')"),
                ("wren", "return Redis.call(\"SCRIPT\", \"FLUSH\")"),
                ("upython", "return redis.call('SCRIPT', 'FLUSH')"),
                ("tcl", "redis call SCRIPT FLUSH"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::ErrorStarting("ERR This Redis command is not allowed from script"),
        },
        Case {
            // A function cannot call another through FCALL (nor a script a function), as in Redis.
            name: "FCALL from a script or function refused",
            setup: &["FUNCTION LOAD \"#!lua name=other\\nredis.register_function('other', function() return 1 end)\""],
            scripts: &[
                ("lua", "return redis.call('FCALL', 'other', 0)"),
                ("luau", "return redis.call('FCALL', 'other', 0)"),
                ("quickjs", "return redis.call('FCALL_RO', 'other', 0)"),
                ("wren", "return Redis.call(\"FCALL\", \"other\", 0)"),
                ("upython", "return redis.call('FCALL', 'other', 0)"),
                ("tcl", "redis call FCALL other 0"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::ErrorStarting("ERR This Redis command is not allowed from script"),
        },
        Case {
            name: "sha1hex",
            setup: &[],
            scripts: &[
                ("lua", "return redis.sha1hex('abc')"),
                ("luau", "return redis.sha1hex('abc')"),
                ("quickjs", "return redis.sha1hex('abc')"),
                ("wren", "return Redis.sha1hex(\"abc\")"),
                ("upython", "return redis.sha1hex('abc')"),
                ("tcl", "redis sha1hex abc"),
            ],
            keys: &[],
            args: &[],
            expect: Expect::Reply("$40\\r\\na9993e364706816aba3e25717850c26c9cd0d89d\\r\\n"),
        },
    ]);
}

#[test]
fn sandbox_escapes_are_refused() {
    let escapes: &[(&str, &str)] = &[
        ("lua", "return os.execute('true')"),
        ("lua", "return io.open('/etc/passwd')"),
        ("lua", "return require('os')"),
        ("lua", "return dofile('/etc/passwd')"),
        ("lua", "return loadfile('/etc/passwd')"),
        ("lua", "return package.loadlib('libc.so.6', 'system')"),
        ("lua", "return debug.getregistry()"),
        (
            "lua",
            "return loadstring(string.dump(function() return 1 end))()",
        ),
        ("lua", "print('x')"),
        ("lua", "rawset(_G, 'leak', 1)"),
        ("lua", "setmetatable(_G, {})"),
        ("lua", "string.rep = nil"),
        ("luau", "return os.execute('true')"),
        ("luau", "return io.open('/etc/passwd')"),
        ("luau", "return require('os')"),
        ("luau", "return require('./x')"),
        ("luau", "return dofile('/etc/passwd')"),
        ("luau", "return loadfile('/etc/passwd')"),
        ("luau", "return loadstring('return 1')()"),
        ("luau", "return load('return 1')()"),
        ("luau", "return package.loadlib('libc.so.6', 'system')"),
        ("luau", "return debug.info(1, 's')"),
        ("luau", "return getfenv(1)"),
        ("luau", "setfenv(1, {})"),
        ("luau", "return newproxy(true)"),
        ("luau", "print('x')"),
        ("luau", "leak = 1"),
        ("luau", "rawset(_G, 'leak', 1)"),
        ("luau", "setmetatable(_G, {})"),
        ("luau", "getmetatable(_G).__index = nil"),
        ("luau", "string.rep = nil"),
        ("luau", "getmetatable('').__index = {}"),
        ("luau", "redis.call = nil"),
        ("luau", "table.insert = nil"),
        ("quickjs", "return require('os')"),
        ("quickjs", "return std.loadFile('/etc/passwd')"),
        ("quickjs", "return os.exec(['true'])"),
        ("quickjs", "return process.env"),
        ("quickjs", "return eval('1')"),
        ("quickjs", "return (0, eval)('1')"),
        ("quickjs", "return Function('return 1')()"),
        (
            "quickjs",
            "return (function () {}).constructor('return 1')()",
        ),
        (
            "quickjs",
            "return (function* () {}).constructor('yield 1')().next().value",
        ),
        (
            "quickjs",
            "return (async function () {}).constructor('return 1')",
        ),
        ("quickjs", "return import('os')"),
        ("quickjs", "return this.constructor"),
        ("quickjs", "print('x')"),
        ("quickjs", "leak = 1"),
        ("quickjs", "globalThis.leak = 1"),
        (
            "quickjs",
            "Object.defineProperty(globalThis, 'leak', {value: 1})",
        ),
        ("quickjs", "Object.prototype.leak = 1"),
        ("quickjs", "Array.prototype.push = null"),
        ("quickjs", "redis.call = null"),
        (
            "quickjs",
            "Object.getPrototypeOf([][Symbol.iterator]()).next = null",
        ),
        (
            "quickjs",
            "Object.getPrototypeOf(Int8Array).prototype.leak = 1",
        ),
        ("quickjs", "}); globalThis.leak = 1; (function () {"),
        ("quickjs", "}); while (true) {} (function () {"),
        ("wren", "import \"os\" for Process"),
        ("wren", "import \"io\" for File"),
        ("wren", "import \"scheduler\" for Scheduler"),
        (
            "wren",
            "import \"0000000000000000000000000000000000000000\" for Script",
        ),
        (
            "wren",
            "class X {\n  foreign static system(cmd)\n}\nreturn X.system(\"true\")",
        ),
        ("wren", "return Process.allArguments"),
        ("wren", "return File.read(\"/etc/passwd\")"),
        ("wren", "System.print(\"x\")\nreturn Meta.eval(\"1\")"),
        ("wren", "} }\nleak = 1\nclass X { static y() {"),
        ("wren", "} }\nwhile (true) {}\nclass X { static y() {"),
        (
            "wren",
            "} }\nRedis.call(\"SET\", \"leak\", \"1\")\nclass X { static y() {",
        ),
        ("wren", "leak = 1"),
        ("upython", "import os"),
        ("upython", "import sys\nsys.exit()"),
        ("upython", "return __import__('os')"),
        ("upython", "import builtins"),
        ("upython", "import micropython"),
        ("upython", "import io"),
        ("upython", "return open('/etc/passwd')"),
        ("upython", "return eval('1')"),
        ("upython", "exec('leak = 1')"),
        ("upython", "return compile('1', 'f', 'eval')"),
        ("upython", "return input()"),
        ("upython", "print('x')"),
        ("upython", "redis.call = None"),
        ("upython", "del redis.call"),
        ("upython", "import math\nmath.pi = 3"),
        ("upython", "bytes.upper = None"),
        ("upython", "return sys"),
        ("tcl", "exec ls"),
        ("tcl", "open /etc/passwd"),
        ("tcl", "file exists /etc/passwd"),
        ("tcl", "source /etc/passwd"),
        ("tcl", "load libc.so.6"),
        ("tcl", "package require json"),
        ("tcl", "exit 1"),
        ("tcl", "env HOME"),
        ("tcl", "set ::env(HOME)"),
        ("tcl", "socket stream 127.0.0.1:6379"),
        ("tcl", "signal handle SIGINT"),
        ("tcl", "aio.socket stream 127.0.0.1:6379"),
        ("tcl", "glob /etc/*"),
        ("tcl", "pwd"),
        ("tcl", "cd /"),
        ("tcl", "readdir /"),
        ("tcl", "os.fork"),
        ("tcl", "os.getids"),
        ("tcl", "info nameofexecutable"),
        ("tcl", "info nameof"),
        ("tcl", "info hostname"),
        ("tcl", "info channels"),
        ("tcl", "info source {}"),
        ("tcl", "puts x"),
        ("tcl", "rename redis {}"),
        ("tcl", "rename set {}"),
        ("tcl", "xtrace {}"),
        ("tcl", "interp create"),
        ("tcl", "debug objcount"),
        ("tcl", "clock seconds"),
        ("tcl", "after 1"),
        ("tcl", "vwait x"),
        ("tcl", "eval exec ls"),
        ("tcl", "uplevel #0 {exec ls}"),
        ("tcl", "apply {{} {exec ls}}"),
        ("tcl", "} ; set ::leak 1; proc x {"),
        ("tcl", "ref x tag"),
        ("tcl", "collect"),
        ("tcl", "history getline"),
        ("tcl", "regexp a a"),
        ("tcl", "tailcall exec ls"),
        ("tcl", "unknown exec"),
    ];
    let g = goblin(&[]);
    let mut c = g.raw();
    for engine in ENGINES {
        let mine: Vec<&str> = escapes
            .iter()
            .filter(|(e, _)| *e == engine.name)
            .map(|(_, s)| *s)
            .collect();
        assert!(!mine.is_empty(), "no sandbox cases for {}", engine.name);
        for s in mine {
            let got = c.cmd(&[
                format!("{}EVAL", engine.prefix).as_bytes(),
                s.as_bytes(),
                b"0",
            ]);
            assert!(
                got.starts_with(b"-ERR"),
                "{}: {s} gave {}",
                engine.name,
                show(&got)
            );
        }
        // Nothing leaked into the next script.
        let leak: &[u8] = match engine.name {
            "tcl" => b"return $::leak",
            _ => b"return leak",
        };
        let got = c.cmd(&[format!("{}EVAL", engine.prefix).as_bytes(), leak, b"0"]);
        assert!(got.starts_with(b"-ERR"), "{}", show(&got));
    }
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

#[test]
fn nosuchscript_and_read_only_runs() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for engine in ENGINES {
        let evalsha = format!("{}EVALSHA", engine.prefix);
        let got = c.cmd(&[
            evalsha.as_bytes(),
            b"ffffffffffffffffffffffffffffffffffffffff",
            b"0",
        ]);
        assert_eq!(
            show(&got),
            "-NOSCRIPT No matching script. Please use EVAL.\\r\\n"
        );
        let write = match engine.name {
            "lua" | "luau" => "return redis.call('SET', KEYS[1], 'v')",
            "quickjs" | "upython" => "return redis.call('SET', KEYS[0], 'v')",
            "wren" => "return Redis.call(\"SET\", keys[0], \"v\")",
            "tcl" => "redis call SET [lindex $KEYS 0] v",
            other => panic!("no write script for {other}"),
        };
        let ro = format!("{}EVAL_RO", engine.prefix);
        let got = c.cmd(&[ro.as_bytes(), write.as_bytes(), b"1", b"k"]);
        assert!(
            show(&got).starts_with("-ERR Write commands are not allowed from read-only scripts."),
            "{}",
            show(&got)
        );
        assert_eq!(c.cmd_str("EXISTS k"), b":0\r\n");
    }
}

/// A script that allocates without end fails with an error reply; the server keeps serving and the
/// memory is given back.
#[test]
fn memory_limit() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for engine in ENGINES {
        let (directive, bomb) = match engine.name {
            "lua" => (
                "lua-memory-limit",
                "local t = {} while true do t[#t+1] = string.rep('x', 1e6) .. #t end",
            ),
            "luau" => (
                "luau-memory-limit",
                "local t = {} while true do t[#t+1] = string.rep('x', 1e6) .. #t end",
            ),
            "quickjs" => (
                "quickjs-memory-limit",
                "const t = []; while (true) t.push('x'.repeat(1e6) + t.length);",
            ),
            "wren" => (
                "wren-memory-limit",
                "var t = []\nvar x = \"x\" * 1000\nwhile (true) t.add(x + t.count.toString)",
            ),
            "upython" => (
                "upython-memory-limit",
                "t = []\nwhile True:\n    t.append(b'x' * 1000000 + str(len(t)).encode())",
            ),
            "tcl" => (
                "tcl-memory-limit",
                "set t [list]; while 1 {lappend t \"[string repeat x 1000000][llength $t]\"}",
            ),
            other => panic!("no memory case for {other}"),
        };
        assert_eq!(
            c.cmd(&[b"CONFIG", b"SET", directive.as_bytes(), b"64mb"]),
            b"+OK\r\n"
        );
        let eval = format!("{}EVAL", engine.prefix);
        let got = c.cmd(&[eval.as_bytes(), bomb.as_bytes(), b"0"]);
        assert!(
            show(&got).starts_with("-ERR"),
            "{}: {}",
            engine.name,
            show(&got)
        );
        assert!(
            show(&got).contains("memory"),
            "{}: {}",
            engine.name,
            show(&got)
        );
        assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
        let ok = match engine.name {
            "lua" | "luau" => "return 'still fine'",
            "quickjs" | "upython" => "return 'still fine'",
            "wren" => "return \"still fine\"",
            "tcl" => "return {still fine}",
            _ => unreachable!(),
        };
        let got = c.cmd(&[eval.as_bytes(), ok.as_bytes(), b"0"]);
        assert_eq!(show(&got), "$10\\r\\nstill fine\\r\\n");
        let info = show(&c.cmd_str("INFO memory"));
        let field = format!("used_memory_vm_{}:", engine.name);
        let used: usize = info
            .split(&field)
            .nth(1)
            .and_then(|r| r.split("\\r\\n").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in INFO"));
        assert!(used < 8 << 20, "{} still holds {used} bytes", engine.name);
    }
}

/// Reads one reply, waiting as long as a busy script may take.
fn slow_reply(c: &mut Raw) -> Vec<u8> {
    c.s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    c.reply()
}

/// Past `busy-reply-threshold` other clients get BUSY, SCRIPT KILL stops a script that has not
/// written (even one that tries to catch the kill), a script that wrote is UNKILLABLE, and
/// SHUTDOWN NOSAVE still works.
#[test]
fn busy_scripts_kill_and_shutdown() {
    let loops: &[(&str, &[&str], &str)] = &[
        (
            "lua",
            &[
                "while true do end",
                "local n = 0 while true do n = n + 1 end",
                "while true do pcall(function() while true do end end) end",
                "local ok = false while not ok do ok = pcall(error, 'x') ok = false end",
            ],
            "redis.call('SET', KEYS[1], 'written') while true do end",
        ),
        (
            "luau",
            &[
                "while true do end",
                "local n = 0 while true do n += 1 end",
                "while true do pcall(function() while true do end end) end",
                "local ok = false while not ok do ok = pcall(error, 'x') ok = false end",
                "while true do xpcall(function() while true do end end, function(e) return e end) end",
                "local function f() return f() end while true do pcall(f) end",
                "local co = coroutine.wrap(function() while true do end end) co()",
            ],
            "redis.call('SET', KEYS[1], 'written') while true do end",
        ),
        (
            "quickjs",
            &[
                "while (true) {}",
                "let n = 0; while (true) { n++; }",
                "while (true) { try { while (true) {} } catch (e) {} }",
                "for (;;) { try { throw new Error('x'); } catch (e) {} finally { continue; } }",
                "const f = () => Promise.resolve().then(f); f(); f(); return 1;",
            ],
            "redis.call('SET', KEYS[0], 'written'); while (true) {}",
        ),
        (
            "wren",
            &[
                "while (true) {}",
                "var n = 0\nwhile (true) n = n + 1",
                "while (true) Fiber.new {\n  while (true) {}\n}.try()",
                "for (i in 1..1e300) {}",
                "Fiber.new {\n  while (true) {}\n}.transfer()",
                "var f = Fn.new {\n  var g = Fn.new {\n    while (true) {}\n  }\n  g.call()\n}\nwhile (true) Fiber.new {\n  f.call()\n}.try()",
                "var t = []\nwhile (true) t.add(Fiber.new {\n  Fiber.abort(\"x\")\n}.try())",
            ],
            "Redis.call(\"SET\", keys[0], \"written\")\nwhile (true) {}",
        ),
        (
            "upython",
            &[
                "while True:\n    pass",
                "n = 0\nwhile True:\n    n += 1",
                "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
                "while True:\n    try:\n        raise ValueError('x')\n    except BaseException:\n        pass\n    finally:\n        continue",
                "def f():\n    try:\n        return f()\n    except BaseException:\n        return f()\nwhile True:\n    try:\n        f()\n    except BaseException:\n        pass",
                "try:\n    while True:\n        pass\nexcept BaseException:\n    return 'escaped'",
            ],
            "redis.call('SET', KEYS[0], 'written')\nwhile True:\n    pass",
        ),
        (
            "tcl",
            &[
                "while 1 {}",
                "while 1 {incr i}",
                "for {} 1 {} {}",
                "while 1 [list incr i]",
                "while 1 {catch {error x}}",
                "while 1 {catch -signal {while 1 {}}}",
                "while 1 {try {while 1 {}} on signal {} {} finally {}}",
                "proc f {} {tailcall f}; f",
                "time {} 1000000000000",
            ],
            "redis call SET [lindex $KEYS 0] written; while 1 {}",
        ),
    ];
    let busy = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\\r\\n";
    for engine in ENGINES {
        let (_, endless, writing) = loops
            .iter()
            .find(|(e, _, _)| *e == engine.name)
            .unwrap_or_else(|| panic!("no busy-script case for {}", engine.name));
        let mut g = goblin(&["--busy-reply-threshold", "200"]);
        let eval = format!("{}EVAL", engine.prefix);
        let kill = format!("{}SCRIPT", engine.prefix);
        for script in endless.iter() {
            let mut runner = g.raw();
            runner.send(&common::encode(&[eval.as_bytes(), script.as_bytes(), b"0"]));
            std::thread::sleep(std::time::Duration::from_millis(400));
            let mut other = g.raw();
            assert_eq!(show(&other.cmd_str("GET k")), busy, "{script}");
            assert_eq!(show(&other.cmd_str("PING")), busy, "{script}");
            assert_eq!(
                other.cmd(&[kill.as_bytes(), b"KILL"]),
                b"+OK\r\n",
                "{script}"
            );
            let got = show(&slow_reply(&mut runner));
            assert!(
                got.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
                "{}: {script}: {got}",
                engine.name
            );
            assert_eq!(other.cmd_str("PING"), b"+PONG\r\n");
            assert_eq!(runner.cmd_str("PING"), b"+PONG\r\n");
        }
        let mut runner = g.raw();
        runner.send(&common::encode(&[
            eval.as_bytes(),
            writing.as_bytes(),
            b"1",
            b"k",
        ]));
        std::thread::sleep(std::time::Duration::from_millis(400));
        let mut other = g.raw();
        assert!(show(&other.cmd(&[kill.as_bytes(), b"KILL"])).starts_with("-UNKILLABLE"));
        assert_eq!(show(&other.cmd_str("SHUTDOWN")), busy);
        other.send(b"SHUTDOWN NOSAVE\r\n");
        assert_eq!(g.wait_exit(std::time::Duration::from_secs(10)), Some(true));
    }
}

/// The leaderboard rescore idiom (`benchmarks/scripts/rescore.*`) in all three modes, on a small
/// board whose expected top-k was worked out by hand: ties by member name, zero weights left out,
/// future timestamps clamped to age 0, the mode in any case, an unknown mode's error, infinite
/// scores.
#[test]
fn leaderboard_rescore_idiom() {
    const SETUP: &[&str] =
        &["ZADD board 1000 alice 900 bob 1000 carol 100 dave 1100 eve 950 frank 0 gone"];
    run_matrix(&[
        Case {
            name: "rescore LINEAR",
            setup: SETUP,
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "LINEAR", "100", "4"],
            expect: Expect::Reply(
                "*4\\r\\n$5\\r\\nalice\\r\\n$5\\r\\ncarol\\r\\n$3\\r\\neve\\r\\n$5\\r\\nfrank\\r\\n",
            ),
        },
        Case {
            name: "rescore EXP",
            setup: SETUP,
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "EXP", "50", "3"],
            expect: Expect::Reply("*3\\r\\n$5\\r\\nalice\\r\\n$5\\r\\ncarol\\r\\n$3\\r\\neve\\r\\n"),
        },
        Case {
            name: "rescore STEP leaves zero weights out",
            setup: SETUP,
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "STEP", "60", "10"],
            expect: Expect::Reply(
                "*4\\r\\n$5\\r\\nalice\\r\\n$5\\r\\ncarol\\r\\n$3\\r\\neve\\r\\n$5\\r\\nfrank\\r\\n",
            ),
        },
        Case {
            name: "rescore of a missing board",
            setup: &[],
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "LINEAR", "100", "4"],
            expect: Expect::Reply("*0\\r\\n"),
        },
        Case {
            name: "rescore reads the mode in any case",
            setup: SETUP,
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "sTeP", "60", "10"],
            expect: Expect::Reply(
                "*4\\r\\n$5\\r\\nalice\\r\\n$5\\r\\ncarol\\r\\n$3\\r\\neve\\r\\n$5\\r\\nfrank\\r\\n",
            ),
        },
        Case {
            name: "rescore of an unknown mode: the command's error",
            setup: SETUP,
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "CUBIC", "60", "10"],
            expect: Expect::Reply(
                "-ERR unknown mode 'CUBIC', expected LINEAR, EXP or STEP\\r\\n",
            ),
        },
        Case {
            name: "rescore of infinite scores (ZRANGE's inf and -inf)",
            setup: &["ZADD board inf up -inf down 5 old"],
            scripts: ALL_RESCORE,
            keys: &["board"],
            args: &["1000", "LINEAR", "100", "5"],
            expect: Expect::Reply("*2\\r\\n$2\\r\\nup\\r\\n$3\\r\\nold\\r\\n"),
        },
    ]);
}

/// A script never blocks: blocking commands are refused inside scripts (as Redis 7.0 does), and the
/// caller's connection goes on at once.
#[test]
fn blocking_commands_inside_scripts_do_not_block() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for engine in ENGINES {
        let script = match engine.name {
            "lua" | "luau" => "return redis.call('BLPOP', 'nolist', 0)",
            "quickjs" | "upython" => "return redis.call('BLPOP', 'nolist', 0)",
            "wren" => "return Redis.call(\"BLPOP\", \"nolist\", 0)",
            "tcl" => "redis call BLPOP nolist 0",
            other => panic!("no blocking case for {other}"),
        };
        let eval = format!("{}EVAL", engine.prefix);
        let got = c.cmd(&[eval.as_bytes(), script.as_bytes(), b"0"]);
        assert!(
            show(&got).starts_with("-ERR This Redis command is not allowed from script"),
            "{}",
            show(&got)
        );
        assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    }
}

/// A script's writes wake clients blocked on the keys it pushed to, once the script is over (as an
/// EXEC's do), and signal WATCHers.
#[test]
fn scripts_wake_blocked_clients_and_fail_watchers() {
    let g = goblin(&[]);
    for engine in ENGINES {
        let push = match engine.name {
            "lua" | "luau" => "return redis.call('RPUSH', KEYS[1], 'a', 'b')",
            "quickjs" | "upython" => "return redis.call('RPUSH', KEYS[0], 'a', 'b')",
            "wren" => "return Redis.call(\"RPUSH\", keys[0], \"a\", \"b\")",
            "tcl" => "redis call RPUSH [lindex $KEYS 0] a b",
            other => panic!("no push script for {other}"),
        };
        let eval = format!("{}EVAL", engine.prefix);
        let mut waiter = g.raw();
        waiter.send(b"BLPOP queue 10\r\n");
        let mut watcher = g.raw();
        assert_eq!(watcher.cmd_str("WATCH queue"), b"+OK\r\n");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut c = g.raw();
        assert_eq!(
            c.cmd(&[eval.as_bytes(), push.as_bytes(), b"1", b"queue"]),
            b":2\r\n"
        );
        assert_eq!(
            show(&waiter.reply()),
            "*2\\r\\n$5\\r\\nqueue\\r\\n$1\\r\\na\\r\\n",
            "{}",
            engine.name
        );
        assert_eq!(c.cmd_str("LRANGE queue 0 -1"), b"*1\r\n$1\r\nb\r\n");
        watcher.cmd_str("MULTI");
        watcher.cmd_str("GET x");
        assert_eq!(
            watcher.cmd_str("EXEC"),
            b"*-1\r\n",
            "the script's write failed the WATCH"
        );
        c.cmd_str("DEL queue");
    }
}
