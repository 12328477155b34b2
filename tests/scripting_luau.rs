//! The Luau engine (LUAU.EVAL, LUAU.EVALSHA, LUAU.SCRIPT): conversions both ways, errors, pcall,
//! the redis API and the script cache, checked against Debian's redis-server running the same script
//! as Lua (where a script means the same in both languages, the replies must be byte-for-byte
//! Redis's); what is Luau's own (its language, its sandbox, its error wording); and Lua 5.1 and Luau
//! side by side in one server, which would show a symbol clash between the two VMs.

mod common;
use common::{goblin, redis, show, split, Raw};

/// Is `name` one of the commands that take an engine prefix?
fn scripting_command(name: &[u8]) -> bool {
    ["EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "SCRIPT"]
        .iter()
        .any(|c| name.eq_ignore_ascii_case(c.as_bytes()))
}

/// Runs each case's lines on redis-server as written, and on Goblin Core with the scripting
/// commands given the `LUAU.` prefix (other commands as written), each case on fresh connections
/// after FLUSHALL and SCRIPT FLUSH; every reply must be identical. A line starting with `#` is sent
/// to both and its reply not compared (`#HELLO 3`).
fn like_redis_lua(cases: &[&[&str]]) {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut failures = Vec::new();
    for (case_no, case) in cases.iter().enumerate() {
        let mut rc = r.raw();
        let mut gc = g.raw();
        for c in [&mut rc, &mut gc] {
            c.cmd_str("FLUSHALL");
        }
        rc.cmd_str("SCRIPT FLUSH");
        gc.cmd_str("LUAU.SCRIPT FLUSH");
        for line in *case {
            let (line, compared) = match line.strip_prefix('#') {
                Some(l) => (l, false),
                None => (*line, true),
            };
            let args = split(line);
            let mut luau_args = args.clone();
            if scripting_command(&args[0]) {
                luau_args[0] = [b"LUAU.", &args[0][..]].concat();
            }
            let want = rc.cmd(&args.iter().map(|a| a.as_slice()).collect::<Vec<_>>());
            let got = gc.cmd(&luau_args.iter().map(|a| a.as_slice()).collect::<Vec<_>>());
            if compared && want != got {
                failures.push(format!(
                    "case {case_no}: {line}\n    redis (Lua): {}\n    goblin (Luau): {}",
                    show(&want),
                    show(&got)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn eval(c: &mut Raw, script: &str, keys: &[&str], args: &[&str]) -> String {
    let n = keys.len().to_string();
    let mut v: Vec<&[u8]> = vec![b"LUAU.EVAL", script.as_bytes(), n.as_bytes()];
    v.extend(keys.iter().map(|k| k.as_bytes()));
    v.extend(args.iter().map(|a| a.as_bytes()));
    show(&c.cmd(&v))
}

#[test]
fn luau_values_to_replies_as_redis() {
    like_redis_lua(&[&[
        "EVAL \"return 1\" 0",
        "EVAL \"return -7\" 0",
        "EVAL \"return 3.99\" 0",
        "EVAL \"return -3.99\" 0",
        "EVAL \"return 'hello'\" 0",
        "EVAL \"return ''\" 0",
        "EVAL \"return true\" 0",
        "EVAL \"return false\" 0",
        "EVAL \"return nil\" 0",
        "EVAL \"return\" 0",
        "EVAL \"return {}\" 0",
        "EVAL \"return {1,2,3,'x',nil,5}\" 0",
        "EVAL \"return {1,{2,{3,{'deep'}}},true,false}\" 0",
        "EVAL \"return {ok='fine'}\" 0",
        "EVAL \"return {err='My Error'}\" 0",
        "EVAL \"return {err='ERR My Error'}\" 0",
        "EVAL \"return {err='CUSTOM code here'}\" 0",
        "EVAL \"return {ok='x', err='y'}\" 0",
        "EVAL \"return {a=1, b=2}\" 0",
        "EVAL \"return {1, 2, a=3}\" 0",
        "EVAL \"return {ok=1}\" 0",
        "EVAL \"return {err=1}\" 0",
        "EVAL \"return redis.error_reply('boom')\" 0",
        "EVAL \"return redis.error_reply('MY boom')\" 0",
        "EVAL \"return redis.error_reply('-MY boom')\" 0",
        "EVAL \"return redis.error_reply('-nospace')\" 0",
        "EVAL \"return redis.error_reply()\" 0",
        "EVAL \"return redis.status_reply('FINE')\" 0",
        "EVAL \"return redis.status_reply()\" 0",
        "EVAL \"return 1e20\" 0",
        "EVAL \"return 0/0\" 0",
        "EVAL \"return 2^63\" 0",
        "EVAL \"return -2^63\" 0",
        "EVAL \"return 2^53 + 1\" 0",
        "EVAL \"return -0.0\" 0",
        "EVAL \"return 1/0\" 0",
        "EVAL \"return function() end\" 0",
        "EVAL \"return coroutine.create(function() end)\" 0",
        "EVAL \"return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]}\" 2 k1 k2 a1 a2 a3",
        "EVAL \"return #KEYS + 10 * #ARGV\" 0",
        "EVAL \"return #KEYS + 10 * #ARGV\" 3 a b c d",
        "EVAL \"return ARGV\" 0 \"\" \"x y\"",
        "EVAL \"KEYS[1] = 'changed' return KEYS[1]\" 1 k",
        "EVAL \"return ARGV[1]\" 0 \"a\\x00b\\r\\n\\xff\\xfe\"",
        "EVAL \"return #ARGV[1]\" 0 \"a\\x00b\\r\\n\\xff\\xfe\"",
        "EVAL \"return string.byte(ARGV[1], 1, -1)\" 0 \"\\x00\\x7f\\x80\\xff\"",
        "EVAL \"return string.char(0, 255, 13, 10)\" 0",
        "EVAL \"return 1\" -1",
        "EVAL \"return 1\" 2 a",
        "EVAL \"return 1\" x",
    ]]);
}

#[test]
fn replies_to_luau_values_as_redis() {
    like_redis_lua(&[&[
        "SET s hello",
        "SET n 42",
        "EVAL \"return redis.call('GET', 's')\" 0",
        "EVAL \"return type(redis.call('GET', 'missing'))\" 0",
        "EVAL \"return tostring(redis.call('GET', 'missing'))\" 0",
        "EVAL \"return redis.call('INCR', 'n')\" 0",
        "EVAL \"return type(redis.call('INCR', 'n'))\" 0",
        "EVAL \"return redis.call('SET', 'a', 'b')\" 0",
        "EVAL \"return redis.call('SET', 'a', 'b').ok\" 0",
        "EVAL \"return redis.call('PING')\" 0",
        "EVAL \"return redis.call('MGET', 's', 'missing', 'n')\" 0",
        "EVAL \"local r = redis.call('MGET', 's', 'missing') return {type(r[1]), type(r[2])}\" 0",
        "EVAL \"return redis.pcall('INCR', 's')\" 0",
        "EVAL \"return redis.pcall('INCR', 's').err\" 0",
        "EVAL \"return redis.call('SET', 'f', 1.5)\" 0",
        "GET f",
        "EVAL \"return redis.call('SET', 'f', 0.1)\" 0",
        "GET f",
        "EVAL \"return redis.call('SET', 'f', 1e20)\" 0",
        "GET f",
        "EVAL \"return redis.call('SET', 'f', 123456789012)\" 0",
        "GET f",
        "EVAL \"return redis.call('SET', 'f', -0.5)\" 0",
        "GET f",
        "EVAL \"return redis.call('ECHO', 'a\\0b')\" 0",
        "EVAL \"return redis.call('SET', KEYS[1], ARGV[1])\" 1 \"bin\\x00key\" \"\\x00\\xff\\r\\n\"",
        "EVAL \"return redis.call('GET', KEYS[1])\" 1 \"bin\\x00key\"",
        "EVAL \"return redis.call('GET', KEYS[1]) == ARGV[1]\" 1 \"bin\\x00key\" \"\\x00\\xff\\r\\n\"",
        "HSET h f1 v1 f2 v2",
        "EVAL \"return redis.call('HGETALL', 'h')\" 0",
        "ZADD z 1.5 m 2 n",
        "EVAL \"return redis.call('ZRANGE', 'z', 0, -1, 'WITHSCORES')\" 0",
        "EVAL \"return redis.call('ZSCORE', 'z', 'm')\" 0",
        "EVAL \"return redis.call('INCRBYFLOAT', 'fl', '0.1')\" 0",
        "EVAL \"return redis.call('LRANGE', 'nolist', 0, -1)\" 0",
        "EVAL \"return redis.call('EXISTS', 's', 'n', 'missing')\" 0",
    ]]);
}

#[test]
fn resp3_after_setresp_as_redis() {
    like_redis_lua(&[
        &[
            "#HELLO 3",
            "SET s v",
            "HSET h a 1",
            "SADD st x",
            "ZADD z 1.5 m",
            "EVAL \"return true\" 0",
            "EVAL \"return false\" 0",
            "EVAL \"redis.setresp(3) return true\" 0",
            "EVAL \"redis.setresp(3) return false\" 0",
            "EVAL \"return {double=3.14}\" 0",
            "EVAL \"redis.setresp(3) return {double=3.14}\" 0",
            "EVAL \"redis.setresp(3) return {map={a=1}}\" 0",
            "EVAL \"redis.setresp(3) return {set={x=true}}\" 0",
            "EVAL \"redis.setresp(3) return {big_number='123456789012345678901234567890'}\" 0",
            "EVAL \"redis.setresp(3) return {verbatim_string={format='txt', string='hi'}}\" 0",
            "EVAL \"redis.setresp(3) return redis.call('GET', 'missing')\" 0",
            "EVAL \"redis.setresp(3) return type(redis.call('GET', 'missing'))\" 0",
            "EVAL \"redis.setresp(3) local r = redis.call('HELLO') return type(r)\" 0",
            "EVAL \"redis.setresp(3) return redis.call('HGETALL', 'h')\" 0",
            "EVAL \"redis.setresp(3) return redis.call('HGETALL', 'h').map.a\" 0",
            "EVAL \"redis.setresp(3) return redis.call('SMEMBERS', 'st')\" 0",
            "EVAL \"redis.setresp(3) return tostring(redis.call('SMEMBERS', 'st').set.x)\" 0",
            "EVAL \"redis.setresp(3) return redis.call('ZSCORE', 'z', 'm')\" 0",
            "EVAL \"redis.setresp(3) return redis.call('ZSCORE', 'z', 'm').double * 2\" 0",
            "EVAL \"return nil\" 0",
            "EVAL \"return redis.call('GET', 'missing')\" 0",
            "EVAL \"return {1, 'two', {ok='three'}}\" 0",
        ],
        &[
            "HSET h a 1",
            "EVAL \"redis.setresp(3) return true\" 0",
            "EVAL \"redis.setresp(3) return false\" 0",
            "EVAL \"redis.setresp(3) return {double=3.14}\" 0",
            "EVAL \"redis.setresp(3) return {map={a=1}}\" 0",
            "EVAL \"redis.setresp(3) return {set={x=true}}\" 0",
            "EVAL \"redis.setresp(3) return {big_number='123'}\" 0",
            "EVAL \"redis.setresp(3) return {verbatim_string={format='txt', string='hi'}}\" 0",
            "EVAL \"redis.setresp(3) return redis.call('HGETALL', 'h')\" 0",
        ],
    ]);
}

#[test]
fn errors_and_pcall_as_redis() {
    like_redis_lua(&[&[
        "SET s abc",
        "EVAL \"return redis.call('INCR', 's')\" 0",
        "EVAL \"return redis.call('nosuch')\" 0",
        "EVAL \"return redis.call('GET')\" 0",
        "EVAL \"return redis.call('EVAL', 'return 1', 0)\" 0",
        "EVAL \"return redis.call('SCRIPT', 'LOAD', 'return 1')\" 0",
        "EVAL \"return redis.call()\" 0",
        "EVAL \"return redis.call({})\" 0",
        "EVAL \"return redis.call('GET', {})\" 0",
        "EVAL \"return redis.call('GET', nil)\" 0",
        "EVAL \"\n\nreturn redis.call('INCR', 's')\" 0",
        "EVAL \"return redis.pcall('nosuch')\" 0",
        "EVAL \"return redis.pcall('GET')\" 0",
        // Argument errors too come back from pcall as an error table.
        "EVAL \"return redis.pcall('GET', {})\" 0",
        "EVAL \"return redis.pcall('GET', {}).err\" 0",
        "EVAL \"return redis.pcall()\" 0",
        "EVAL \"return redis.call('GET', {})\" 0",
        "EVAL \"local ok, e = pcall(redis.call, 'INCR', 's') return {tostring(ok), e}\" 0",
        "EVAL \"local ok, e = pcall(redis.call, 'INCR', 's') return redis.error_reply(e)\" 0",
        "EVAL \"return pcall(error, 'caught')\" 0",
        "EVAL \"return select('#', pcall(redis.call, 'nosuch'))\" 0",
        "EVAL \"return {pcall(function() return 1, 2 end)}\" 0",
        "EVAL \"return redis.setresp(4)\" 0",
        "EVAL \"return redis.setresp()\" 0",
        "EVAL \"return redis.sha1hex()\" 0",
        "EVAL \"return redis.log()\" 0",
        "EVAL \"return redis.log('x', 'y')\" 0",
        "EVAL \"return redis.log(99, 'y')\" 0",
        "EVAL \"return redis.set_repl(9)\" 0",
        "EVAL \"return redis.acl_check_cmd('nosuch')\" 0",
    ]]);
}

#[test]
fn redis_api_and_script_cache_as_redis() {
    like_redis_lua(&[&[
        "EVAL \"return redis.sha1hex('')\" 0",
        "EVAL \"return redis.sha1hex('abc')\" 0",
        "EVAL \"return redis.sha1hex(ARGV[1])\" 0 \"\\x00\\xff\"",
        "EVAL \"return redis.REDIS_VERSION\" 0",
        "EVAL \"return redis.REDIS_VERSION_NUM\" 0",
        "EVAL \"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}\" 0",
        "EVAL \"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}\" 0",
        "EVAL \"return tostring(redis.replicate_commands())\" 0",
        "EVAL \"return tostring(redis.breakpoint())\" 0",
        "EVAL \"return redis.set_repl(redis.REPL_ALL)\" 0",
        "EVAL \"return tostring(redis.acl_check_cmd('set', 'k', 'v'))\" 0",
        "EVAL \"return redis.log(redis.LOG_WARNING, 'from a script')\" 0",
        "SCRIPT LOAD \"return 'loaded'\"",
        "EVALSHA b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c 0",
        "EVALSHA B0FF9D11CAE6D6B2BFD59BB3C2AC5EC6BEE2DD3C 0",
        "SCRIPT EXISTS b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c nope B0FF9D11CAE6D6B2BFD59BB3C2AC5EC6BEE2DD3C",
        "EVALSHA abc 0",
        "EVALSHA ffffffffffffffffffffffffffffffffffffffff 0",
        "EVAL \"return 'via eval'\" 0",
        "SCRIPT FLUSH",
        "EVALSHA b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c 0",
        "SCRIPT FLUSH ASYNC",
        "SCRIPT FLUSH SYNC",
        "SCRIPT FLUSH bad",
        "SCRIPT KILL",
        "EVAL_RO \"return redis.call('SET','a','b')\" 0",
        "EVAL_RO \"return redis.call('GET','a')\" 0",
        "EVAL_RO \"return redis.pcall('SET','a','b')\" 0",
        "SCRIPT LOAD \"return redis.call('SET','ro','x')\"",
        "EVALSHA_RO 0f3a6e1b5ddbd1a7f9d5a0b8f3f2ac3a4c7d5d6e 0",
        "EVAL \"redis.call('SELECT', 1) redis.call('SET', 'indb1', 'v') return 1\" 0",
        "EXISTS indb1",
    ]]);
}

/// The shebang names the engine: `#!luau` (with Redis's flags); `#!lua` is refused by Luau.
#[test]
fn shebang_flags() {
    let g = goblin(&[]);
    let mut c = g.raw();
    assert_eq!(eval(&mut c, "#!luau\nreturn 1", &[], &[]), ":1\\r\\n");
    let ro = "#!luau flags=no-writes\nreturn redis.call('SET','a','b')";
    assert_eq!(
        eval(&mut c, ro, &[], &[]),
        format!(
            "-ERR Write commands are not allowed from read-only scripts. script: {}, on @user_script:2.\\r\\n",
            sha(ro)
        )
    );
    assert_eq!(
        eval(
            &mut c,
            "#!luau flags=no-writes\nreturn redis.call('GET','a')",
            &[],
            &[]
        ),
        "$-1\\r\\n"
    );
    assert_eq!(
        eval(&mut c, "#!lua\nreturn 1", &[], &[]),
        "-ERR Unexpected engine in script shebang: #!lua\\r\\n"
    );
    assert_eq!(
        eval(&mut c, "#!luau flags=bogus\nreturn 1", &[], &[]),
        "-ERR Unexpected flag in script shebang: bogus\\r\\n"
    );
    // Line numbers count the shebang line.
    let got = eval(&mut c, "#!luau\n\nerror('three')", &[], &[]);
    assert!(got.contains("user_script:3: three"), "{got}");
}

fn sha(body: &str) -> String {
    String::from_utf8(goblin_core::script::cache::sha1_hex(body.as_bytes()).to_vec()).unwrap()
}

/// What is Luau's own: its language (what a Lua 5.1 script cannot say), its number formatting, its
/// error wording, and the sandbox's read-only tables.
#[test]
fn luau_language_and_error_wording() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let cases: &[(&str, &str)] = &[
        ("return 7 // 2", ":3\\r\\n"),
        ("return -7 // 2", ":-4\\r\\n"),
        ("local x = 5 return `x is {x}, twice {x * 2}`", "$16\\r\\nx is 5, twice 10\\r\\n"),
        ("local n: number = 3 local s: string = 'a' return s:rep(n)", "$3\\r\\naaa\\r\\n"),
        ("local function f(a: number, b: number): number return a + b end return f(2, 3)", ":5\\r\\n"),
        ("type Pair = {key: string, value: number} local p: Pair = {key='k', value=1} return p.key", "$1\\r\\nk\\r\\n"),
        ("local n = 1 n += 2 n *= 3 return n", ":9\\r\\n"),
        ("local s = 'a' s ..= 'b' return s", "$2\\r\\nab\\r\\n"),
        ("return if #ARGV > 0 then 'some' else 'none'", "$4\\r\\nnone\\r\\n"),
        ("for i, v in {10, 20} do if i == 2 then return v end end", ":20\\r\\n"),
        ("local t = table.create(3, 'x') return table.concat(t)", "$3\\r\\nxxx\\r\\n"),
        ("local b = buffer.create(3) buffer.writeu8(b, 0, 65) buffer.writeu8(b, 2, 67) return b", "$3\\r\\nA\u{0}C\\r\\n"),
        ("return bit32.band(0xff, 0x0f)", ":15\\r\\n"),
        ("return utf8.char(72, 228)", "$3\\r\\nH\u{e4}\\r\\n"),
        ("return typeof(1)", "$6\\r\\nnumber\\r\\n"),
        ("return tostring(1/3)", "$18\\r\\n0.3333333333333333\\r\\n"),
        ("return tostring(0.1)", "$3\\r\\n0.1\\r\\n"),
        ("return string.format('%.3f', math.pi)", "$5\\r\\n3.142\\r\\n"),
        ("return math.floor(-3.5)", ":-4\\r\\n"),
        ("return select('#', ...)", ":2\\r\\n"),
        ("return collectgarbage('count') > 0", ":1\\r\\n"),
        ("return collectgarbage()", "$-1\\r\\n"),
    ];
    for (script, want) in cases {
        assert_eq!(&eval(&mut c, script, &[], &[]), want, "{script}");
    }
    let errors: &[(&str, &str)] = &[
        (
            "return nil + 1",
            "user_script:1: attempt to perform arithmetic (add) on nil and number",
        ),
        (
            "local t = nil return t.x",
            "user_script:1: attempt to index nil with 'x'",
        ),
        ("error('boom')", "user_script:1: boom"),
        ("\n\nerror('line three')", "user_script:3: line three"),
        (
            "return y",
            "user_script:1: Script attempted to access nonexistent global variable 'y'",
        ),
        ("x = 5", "user_script:1: attempt to modify a readonly table"),
        (
            "string.upper = nil",
            "user_script:1: attempt to modify a readonly table",
        ),
        ("rawset(_G, 'x', 1)", "attempt to modify a readonly table"),
        ("return setfenv", "nonexistent global variable 'setfenv'"),
        (
            "return loadstring",
            "nonexistent global variable 'loadstring'",
        ),
        (
            "return collectgarbage('stop')",
            "collectgarbage must be called with 'count' or 'collect'",
        ),
    ];
    for (script, part) in errors {
        let got = eval(&mut c, script, &[], &[]);
        assert!(
            got.starts_with("-ERR ") && got.contains(part),
            "{script}: {got}"
        );
        assert!(
            got.contains(&format!("script: {}", sha(script))),
            "{script}: {got}"
        );
    }
    // Runtime errors carry the line, as Redis's Lua errors do.
    assert_eq!(
        eval(&mut c, "\nerror('two')", &[], &[]),
        format!(
            "-ERR user_script:2: two script: {}, on @user_script:2.\\r\\n",
            sha("\nerror('two')")
        )
    );
    // An error table raised by the script itself is replied as is, with the script's sha.
    assert_eq!(
        eval(&mut c, "error({err='MY own'})", &[], &[]),
        format!("-MY own script: {}\\r\\n", sha("error({err='MY own'})"))
    );
    // Compile errors, as Lua's.
    assert_eq!(
        eval(&mut c, "return 1 +", &[], &[]),
        "-ERR Error compiling script (new function): user_script:1: Expected identifier when parsing expression, got <eof>\\r\\n"
    );
    // Lua 5.1 code that Luau parses differently is a compile error, not a silent change.
    assert!(eval(&mut c, "goto x", &[], &[]).starts_with("-ERR Error compiling script"));
}

/// The globals a script sees, and that the sandbox holds between scripts.
#[test]
fn sandbox_globals() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let got = eval(
        &mut c,
        "local t = {} for k in pairs(_G) do t[#t+1] = k end table.sort(t) return table.concat(t, ' ')",
        &[],
        &[],
    );
    assert_eq!(
        got,
        "$229\\r\\n_G _VERSION assert bit32 buffer collectgarbage coroutine error gcinfo getmetatable \
         ipairs math next pairs pcall rawequal rawget rawlen rawset redis select setmetatable string \
         table tonumber tostring type typeof unpack utf8 xpcall\\r\\n"
    );
    for script in [
        "return table.freeze == nil or table.isfrozen(string)",
        "return table.isfrozen(_G)",
        "return table.isfrozen(redis)",
        "return table.isfrozen(getmetatable(''))",
    ] {
        assert_eq!(eval(&mut c, script, &[], &[]), ":1\\r\\n", "{script}");
    }
    // KEYS and ARGV are the chunk's own: nothing of one call is seen by the next.
    assert_eq!(
        eval(&mut c, "return KEYS[1]", &["a"], &[]),
        "$1\\r\\na\\r\\n"
    );
    assert_eq!(
        eval(&mut c, "return KEYS[1]", &["b"], &[]),
        "$1\\r\\nb\\r\\n"
    );
    assert_eq!(eval(&mut c, "return #KEYS", &[], &[]), ":0\\r\\n");
    assert!(eval(&mut c, "return rawget(_G, 'KEYS')", &["k"], &[]) == "$-1\\r\\n");
}

/// `redis.log` writes to the server's log at the level given.
#[test]
fn log_reaches_the_server_log() {
    let g = goblin(&["--logfile", "server.log", "--loglevel", "verbose"]);
    let mut c = g.raw();
    assert_eq!(
        eval(
            &mut c,
            "redis.log(redis.LOG_WARNING, 'luau says', ARGV[1]) return 1",
            &[],
            &["hi"]
        ),
        ":1\\r\\n"
    );
    assert_eq!(
        eval(
            &mut c,
            "redis.log(redis.LOG_DEBUG, 'too quiet') return 1",
            &[],
            &[]
        ),
        ":1\\r\\n"
    );
    let log = std::fs::read_to_string(g.dir.join("server.log")).unwrap();
    assert!(log.contains("luau says hi"), "{log}");
    assert!(!log.contains("too quiet"), "{log}");
}

/// Each engine has its own cache: a script loaded into one is not in the other; SCRIPT FLUSH of
/// one leaves the other's; INFO counts both and reports the Luau VM's memory.
#[test]
fn caches_are_per_engine_and_info_reports_luau() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let body = "return 'which engine: ' .. _VERSION";
    let luau_sha = c.cmd(&[b"LUAU.SCRIPT", b"LOAD", body.as_bytes()]);
    assert_eq!(show(&luau_sha), format!("$40\\r\\n{}\\r\\n", sha(body)));
    let s = sha(body);
    assert_eq!(
        show(&c.cmd(&[b"SCRIPT", b"EXISTS", s.as_bytes()])),
        "*1\\r\\n:0\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[b"LUAU.SCRIPT", b"EXISTS", s.as_bytes()])),
        "*1\\r\\n:1\\r\\n"
    );
    assert!(show(&c.cmd(&[b"EVALSHA", s.as_bytes(), b"0"])).starts_with("-NOSCRIPT"));
    assert!(show(&c.cmd(&[b"LUAU.EVALSHA", s.as_bytes(), b"0"])).contains("which engine: Luau"));
    c.cmd(&[b"SCRIPT", b"LOAD", body.as_bytes()]);
    assert_eq!(c.cmd_str("SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd(&[b"LUAU.SCRIPT", b"EXISTS", s.as_bytes()])),
        "*1\\r\\n:1\\r\\n"
    );
    assert_eq!(c.cmd_str("LUAU.SCRIPT FLUSH ASYNC"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd(&[b"LUAU.SCRIPT", b"EXISTS", s.as_bytes()])),
        "*1\\r\\n:0\\r\\n"
    );
    assert_eq!(
        show(&c.cmd(&[b"LUAU.EVALSHA", s.as_bytes(), b"0"])),
        "-NOSCRIPT No matching script. Please use EVAL.\\r\\n"
    );
    let before = common::info_field(&mut c, "number_of_cached_scripts").unwrap();
    c.cmd(&[b"LUAU.SCRIPT", b"LOAD", b"return 1"]);
    c.cmd(&[b"LUAU.EVAL", b"return 2", b"0"]);
    assert_eq!(
        common::info_field(&mut c, "number_of_cached_scripts"),
        Some(before + 2)
    );
    let used = common::info_field(&mut c, "used_memory_vm_luau").unwrap();
    assert!(used > 0);
    c.cmd(&[
        b"LUAU.EVAL",
        b"local t = {} for i = 1, 1000 do t[i] = string.rep('x', 100) .. i end return #t",
        b"0",
    ]);
    assert!(common::info_field(&mut c, "used_memory_vm_luau").is_some());
    // Arity and subcommand errors name the Luau command.
    assert_eq!(
        show(&c.cmd_str("LUAU.EVAL \"return 1\"")),
        "-ERR wrong number of arguments for 'luau.eval' command\\r\\n"
    );
    assert_eq!(
        show(&c.cmd_str("LUAU.SCRIPT LOADX 1")),
        "-ERR unknown subcommand 'LOADX'. Try LUAU.SCRIPT HELP.\\r\\n"
    );
    let help = show(&c.cmd_str("LUAU.SCRIPT HELP"));
    assert!(help.contains("+LOAD <script>"), "{help}");
}

/// Lua 5.1 and Luau in one process: the same compare-and-delete script interleaved through EVAL and
/// LUAU.EVAL on one server, each VM answering with its own language. Were the two VMs' C symbols to
/// clash (both export `lua_*`), the link would fail, or every call would silently go to one VM and
/// `_VERSION`, `//` and interpolation would give the same answer on both.
#[test]
fn lua_and_luau_side_by_side() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let cad = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/scripts/cad.lua"
    ))
    .unwrap();
    let cad_luau = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/scripts/cad.luau"
    ))
    .unwrap();
    let lua_sha = c.cmd(&[b"SCRIPT", b"LOAD", &cad]);
    let luau_sha = c.cmd(&[b"LUAU.SCRIPT", b"LOAD", &cad_luau]);
    let lua_sha = &lua_sha[5..45];
    let luau_sha = &luau_sha[5..45];
    for i in 0..200 {
        let key = format!("lock{}", i % 7);
        let tok = format!("tok{i}");
        c.cmd(&[b"SET", key.as_bytes(), tok.as_bytes()]);
        let (evalsha, sha, other_evalsha): (&[u8], &[u8], &[u8]) = if i % 2 == 0 {
            (b"EVALSHA", lua_sha, b"LUAU.EVAL")
        } else {
            (b"LUAU.EVALSHA", luau_sha, b"EVAL")
        };
        // A wrong token through one engine keeps the key ...
        assert_eq!(
            c.cmd(&[evalsha, sha, b"1", key.as_bytes(), b"nope"]),
            b":0\r\n"
        );
        // ... the right one through the other engine deletes it ...
        let body: &[u8] = if i % 2 == 0 { &cad_luau } else { &cad };
        assert_eq!(
            c.cmd(&[other_evalsha, body, b"1", key.as_bytes(), tok.as_bytes()]),
            b":1\r\n"
        );
        // ... and then neither finds it.
        assert_eq!(
            c.cmd(&[evalsha, sha, b"1", key.as_bytes(), tok.as_bytes()]),
            b":0\r\n"
        );
    }
    assert_eq!(
        show(&c.cmd_str("EVAL \"return _VERSION\" 0")),
        "$7\\r\\nLua 5.1\\r\\n"
    );
    let v = show(&c.cmd_str("LUAU.EVAL \"return _VERSION\" 0"));
    assert!(v.starts_with("$10\\r\\nLuau 0."), "{v}");
    // Luau-only syntax: Lua 5.1 refuses it, Luau runs it.
    assert_eq!(c.cmd_str("LUAU.EVAL \"return 7 // 2\" 0"), b":3\r\n");
    assert!(show(&c.cmd_str("EVAL \"return 7 // 2\" 0")).starts_with("-ERR Error compiling script"));
    assert_eq!(
        show(&c.cmd_str("LUAU.EVAL \"local n = 4 return `n={n}`\" 0")),
        "$3\\r\\nn=4\\r\\n"
    );
    assert!(show(&c.cmd_str("EVAL \"local n = 4 return `n={n}`\" 0"))
        .starts_with("-ERR Error compiling script"));
    // Lua-5.1-only: the Lua engine's libraries, absent from Luau.
    assert_eq!(
        c.cmd_str("EVAL \"return cjson.encode({1})\" 0"),
        b"$3\r\n[1]\r\n"
    );
    assert!(show(&c.cmd_str("LUAU.EVAL \"return cjson\" 0"))
        .contains("nonexistent global variable 'cjson'"));
    // Both VMs' memory is reported, separately.
    assert!(common::info_field(&mut c, "used_memory_vm_lua").unwrap() > 0);
    assert!(common::info_field(&mut c, "used_memory_vm_luau").unwrap() > 0);
}

/// KEYS and ARGV are kept tables refilled for each script run: nothing a run did to them (new
/// entries, removed ones, a metatable, a freeze) reaches the next run; a function library, which
/// may keep what it is given in an upvalue, gets new tables every call.
#[test]
fn keys_and_argv_start_afresh_each_run() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let show_all = "local t = {} for i, k in ipairs(KEYS) do t[#t+1] = k end \
                    for i, a in ipairs(ARGV) do t[#t+1] = a end \
                    t[#t+1] = tostring(KEYS.extra) t[#t+1] = tostring(getmetatable(ARGV)) \
                    t[#t+1] = tostring(table.isfrozen(KEYS)) return t";
    let first = "KEYS[5] = 'x' KEYS.extra = 'y' table.insert(ARGV, 'z') \
                 setmetatable(ARGV, {}) table.freeze(KEYS) return 1";
    assert_eq!(
        eval(&mut c, first, &["a", "b"], &["1", "2", "3"]),
        ":1\\r\\n"
    );
    assert_eq!(
        eval(&mut c, show_all, &["k"], &["v"]),
        "*5\\r\\n$1\\r\\nk\\r\\n$1\\r\\nv\\r\\n$3\\r\\nnil\\r\\n$3\\r\\nnil\\r\\n$5\\r\\nfalse\\r\\n"
    );
    let shrink = "table.remove(KEYS, 1) ARGV[1] = nil KEYS[3] = 'q' return #KEYS";
    assert_eq!(eval(&mut c, shrink, &["a", "b"], &["1"]), ":1\\r\\n");
    assert_eq!(
        eval(&mut c, show_all, &[], &["only"]),
        "*4\\r\\n$4\\r\\nonly\\r\\n$3\\r\\nnil\\r\\n$3\\r\\nnil\\r\\n$5\\r\\nfalse\\r\\n"
    );
    // A function that keeps its first call's keys sees them unchanged at the second.
    let lib = "#!luau name=keeper\nlocal first\nredis.register_function('keep', function(keys) \
               if not first then first = keys end return first[1] end)";
    assert_eq!(
        show(&c.cmd(&[b"FUNCTION", b"LOAD", lib.as_bytes()])),
        "$6\\r\\nkeeper\\r\\n"
    );
    assert_eq!(show(&c.cmd_str("FCALL keep 1 one")), "$3\\r\\none\\r\\n");
    assert_eq!(show(&c.cmd_str("FCALL keep 1 two")), "$3\\r\\none\\r\\n");
}
