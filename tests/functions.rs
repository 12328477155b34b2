//! Redis Functions: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/STATS/KILL/HELP, FCALL and
//! FCALL_RO. The Lua path is differential against Debian's redis-server, byte for byte (RESP2 and
//! RESP3); DUMP payloads and RDB files cross between the two servers in both directions; every
//! engine with functions gets its libraries back after a restart, and its busy functions killed.

mod common;

use std::time::Duration;

use common::*;

/// A Lua library as the lines of a differential case (redis-cli quoting: `\n` is a newline).
fn lib(code: &str) -> String {
    format!("FUNCTION LOAD \"{}\"", code.replace('"', "\\\""))
}

#[test]
fn loading_errors_as_redis() {
    let cases: Vec<String> = [
        "x",
        "#!lua name=x",
        "#!lua\\n",
        "#!lua name=a name=b\\n",
        "#!lua foo=b name=x\\n",
        "#!lua NAME=x foo\\n",
        "#!nope name=x\\nreturn 1",
        "#!LUA name=x-y\\nreturn 1",
        "#!lua name=\\n",
        "#! name=x\\n",
        "#!lua name=x\\nlocal a = 1",
        "#!lua name=x\\nsyntax error here",
        "#!lua name=x\\nredis.call('set', 'a', 'b')",
        "#!lua name=x\\nlocal s = string.len('a')",
        "#!lua name=x\\nredis.setresp(3)",
        "#!lua name=x\\nerror('boom')",
        "#!lua name=x\\nx = 1",
        "#!lua name=x\\nredis.register_function('a', function() end, 'x')",
        "#!lua name=x\\nredis.register_function('a')",
        "#!lua name=x\\nredis.register_function('a', 1)",
        "#!lua name=x\\nredis.register_function(true, function() end)",
        "#!lua name=x\\nredis.register_function('a-b', function() end)",
        "#!lua name=x\\nredis.register_function('', function() end)",
        "#!lua name=x\\nredis.register_function('a', function() end) redis.register_function('a', function() end)",
        "#!lua name=x\\nredis.register_function{}",
        "#!lua name=x\\nredis.register_function{function_name='a'}",
        "#!lua name=x\\nredis.register_function{callback=function() end}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=function() end, foo=1}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=function() end, flags='no-writes'}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=function() end, flags={'bad'}}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=function() end, description=1}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=function() end, description={}}",
        "#!lua name=x\\nredis.register_function{function_name={}, callback=function() end}",
        "#!lua name=x\\nredis.register_function{function_name='a', callback=1}",
        "#!lua name=x\\nredis.register_function{[true]='a', callback=function() end}",
        "#!lua name=x\\nwhile true do end",
    ]
    .iter()
    .map(|c| lib(c))
    .collect();
    let mut lines: Vec<&str> = vec!["FUNCTION FLUSH"];
    lines.extend(cases.iter().map(String::as_str));
    lines.extend([
        "FUNCTION LIST",
        "FUNCTION LOAD",
        "FUNCTION LOAD REPLACE",
        "FUNCTION LOAD foo bar",
        "FUNCTION LOAD REPLACE REPLACE \"#!lua name=x\\nreturn\"",
    ]);
    compare(&[&lines]);
}

const LIB_ONE: &str = "#!lua name=one\\nredis.register_function{function_name='f1', callback=function(keys, args) return {keys[1], args[1]} end, flags={'no-writes', 'ALLOW-OOM'}, description='the first'}";
const LIB_TWO: &str = "#!lua name=two\\nredis.register_function('f2', function(keys, args) return redis.call('SET', keys[1], args[1]) end)";

#[test]
fn registry_commands_as_redis() {
    let (one, two) = (lib(LIB_ONE), lib(LIB_TWO));
    let two_again = lib(&LIB_TWO.replace("'f2'", "'f3'"));
    let clash = lib(&LIB_TWO.replace("two", "three"));
    let case: Vec<&str> = vec![
        "FUNCTION FLUSH",
        "?rdb_changes_since_last_save",
        &one,
        "?rdb_changes_since_last_save",
        &one,
        &clash,
        &two,
        "~FUNCTION LIST",
        "~FUNCTION LIST WITHCODE",
        "FUNCTION LIST LIBRARYNAME o*",
        "FUNCTION LIST LIBRARYNAME O*",
        "FUNCTION LIST LIBRARYNAME ONE",
        "FUNCTION LIST withcode LIBRARYNAME one",
        "FUNCTION LIST LIBRARYNAME nothing",
        "FUNCTION LIST LIBRARYNAME",
        "FUNCTION LIST WITHCODE WITHCODE",
        "FUNCTION LIST LIBRARYNAME a LIBRARYNAME b",
        "FUNCTION LIST foo",
        &two_again,
        "FCALL f2 1 k v",
        "FUNCTION LOAD REPLACE \"#!lua name=two\\nredis.register_function('f3', function() return 3 end)\"",
        "FCALL f2 0",
        "FCALL f3 0",
        "FCALL F3 0",
        "FUNCTION DELETE two",
        "FUNCTION DELETE two",
        "FUNCTION DELETE",
        "FCALL f3 0",
        "FUNCTION DELETE three",
        "FUNCTION DUMP",
        "FUNCTION FLUSH bad",
        "FUNCTION FLUSH ASYNC extra",
        "FUNCTION FLUSH SYNC",
        "FUNCTION LIST",
        "FUNCTION FLUSH async",
        "?rdb_changes_since_last_save",
        "FUNCTION DUMP",
        "FUNCTION RESTORE bad",
        "FUNCTION RESTORE bad APPEND x",
        "FUNCTION RESTORE bad nope",
        "FUNCTION KILL",
        "FUNCTION HELP",
        "FUNCTION NOPE",
        "FUNCTION STATS extra",
    ];
    compare_both(&[&case]);
}

/// A library of several functions sharing local helpers, every conversion, errors and the
/// read-only rules, through FCALL and FCALL_RO.
#[test]
fn fcall_as_redis() {
    let shared = lib("#!lua name=shop\\n\
        local function key(k) return 'item:' .. k end\\n\
        local function total(k) return tonumber(redis.call('GET', key(k)) or '0') end\\n\
        redis.register_function('add', function(keys, args) return redis.call('INCRBY', key(keys[1]), args[1]) end)\\n\
        redis.register_function{function_name='get', callback=function(keys) return total(keys[1]) end, flags={'no-writes'}}\\n\
        redis.register_function{function_name='sum', callback=function(keys) local s = 0 for _, k in ipairs(keys) do s = s + total(k) end return s end, flags={'no-writes'}}\\n\
        redis.register_function{function_name='ro_write', callback=function(keys) return redis.call('SET', keys[1], 'x') end, flags={'no-writes'}}");
    let conv = lib("#!lua name=conv\\n\
        redis.register_function('types', function(keys, args) return {1, 'two', {3, 'four'}, true, false, 3.99, {ok='fine'}, {err='My Error'}} end)\\n\
        redis.register_function('err', function() return {err='My Error'} end)\\n\
        redis.register_function('status', function() return redis.status_reply('FINE') end)\\n\
        redis.register_function('raise', function() error('boom') end)\\n\
        redis.register_function('raise_table', function() error({err='CUSTOM failure'}) end)\\n\
        redis.register_function('bad_cmd', function() return redis.call('NOSUCH') end)\\n\
        redis.register_function('wrong', function() return redis.call('INCR', 'str') end)\\n\
        redis.register_function('caught', function() return redis.pcall('INCR', 'str') end)\\n\
        redis.register_function('nested', function() return redis.call('FCALL', 'types', 0) end)\\n\
        redis.register_function('eval', function() return redis.call('EVAL', 'return 1', 0) end)\\n\
        redis.register_function('globals', function() return KEYS end)\\n\
        redis.register_function('setglobal', function() x = 1 end)\\n\
        redis.register_function('resp3', function() redis.setresp(3) return {redis.call('HGETALL', 'h'), {double=1.5}, {map={a=1}}, {set={b=true}}} end)\\n\
        redis.register_function('sha', function(keys, args) return redis.sha1hex(args[1]) end)\\n\
        redis.register_function('args', function(keys, args) return {#keys, #args, keys, args} end)");
    let case: Vec<&str> = vec![
        "FUNCTION FLUSH",
        &shared,
        &conv,
        "SET str hello",
        "HSET h f v",
        "FCALL add 1 a 5",
        "FCALL add 1 a 7",
        "FCALL add 1 b 1",
        "FCALL get 1 a",
        "FCALL_RO get 1 a",
        "FCALL_RO sum 3 a b c",
        "FCALL_RO add 1 a 1",
        "FCALL ro_write 1 a",
        "FCALL_RO ro_write 1 a",
        "FCALL types 0",
        "FCALL err 0",
        "FCALL status 0",
        "FCALL raise 0",
        "FCALL raise_table 0",
        "FCALL bad_cmd 0",
        "FCALL wrong 0",
        "FCALL caught 0",
        "FCALL nested 0",
        "FCALL eval 0",
        "FCALL globals 0",
        "FCALL setglobal 0",
        "FCALL resp3 0",
        "FCALL sha 0 abc",
        "FCALL args 2 k1 k2 a1 a2 a3",
        "FCALL args 0",
        "FCALL nope 0",
        "FCALL args x",
        "FCALL args -1",
        "FCALL args 3 a",
        "FCALL_RO nope 0",
        "FCALL",
        "MULTI",
        "FCALL add 1 a 1",
        "FCALL_RO get 1 a",
        "EXEC",
    ];
    compare_both(&[&case]);
}

#[test]
fn command_info_and_docs_match_redis() {
    let names = [
        "fcall",
        "fcall_ro",
        "function",
        "function|load",
        "function|list",
        "function|delete",
        "function|flush",
        "function|dump",
        "function|restore",
        "function|stats",
        "function|kill",
        "function|help",
    ];
    // The FUNCTION container itself is left out: Redis lists its subcommands in hash order; each
    // subcommand is compared on its own.
    let rows: Vec<&str> = names.into_iter().filter(|n| *n != "function").collect();
    common::command_info_and_docs_match_redis(&rows, &rows);
}

/// A bulk reply's payload.
fn bulk(reply: &[u8]) -> Vec<u8> {
    assert_eq!(reply[0], b'$', "{}", show(reply));
    let start = reply.iter().position(|&c| c == b'\n').unwrap() + 1;
    reply[start..reply.len() - 2].to_vec()
}

fn load(c: &mut Raw, code: &str) -> Vec<u8> {
    c.cmd(&[b"FUNCTION", b"LOAD", code.as_bytes()])
}

const LUA_LIB: &str = "#!lua name=cross\nredis.register_function{function_name='hello', callback=function(keys, args) return 'hello ' .. (args[1] or 'world') end, flags={'no-writes'}, description='greets'}";

#[test]
fn dump_and_restore_cross_both_ways() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    assert_eq!(load(&mut rc, LUA_LIB), b"$5\r\ncross\r\n");
    assert_eq!(load(&mut gc, LUA_LIB), b"$5\r\ncross\r\n");
    // The same library gives the same payload, byte for byte.
    let from_redis = bulk(&rc.cmd_str("FUNCTION DUMP"));
    let from_goblin = bulk(&gc.cmd_str("FUNCTION DUMP"));
    assert_eq!(from_redis, from_goblin);

    // Redis's payload into Goblin Core, with each policy.
    let restore = |c: &mut Raw, payload: &[u8], policy: Option<&str>| {
        let mut args: Vec<&[u8]> = vec![b"FUNCTION", b"RESTORE", payload];
        if let Some(p) = policy {
            args.push(p.as_bytes());
        }
        c.cmd(&args)
    };
    for c in [&mut rc, &mut gc] {
        assert_eq!(
            show(&restore(c, &from_redis, None)),
            "-ERR Library cross already exists\\r\\n"
        );
        assert_eq!(restore(c, &from_redis, Some("REPLACE")), b"+OK\r\n");
        assert_eq!(restore(c, &from_redis, Some("FLUSH")), b"+OK\r\n");
    }
    gc.cmd_str("FUNCTION FLUSH");
    assert_eq!(restore(&mut gc, &from_redis, None), b"+OK\r\n");
    assert_eq!(gc.cmd_str("FCALL_RO hello 0 you"), b"$9\r\nhello you\r\n");
    assert_eq!(
        gc.cmd_str("FUNCTION LIST WITHCODE"),
        rc.cmd_str("FUNCTION LIST WITHCODE")
    );

    // Goblin Core's payload into Redis.
    rc.cmd_str("FUNCTION FLUSH");
    assert_eq!(restore(&mut rc, &from_goblin, None), b"+OK\r\n");
    assert_eq!(rc.cmd_str("FCALL hello 0"), b"$11\r\nhello world\r\n");

    // A corrupted payload is refused by both.
    let mut bad = from_goblin.clone();
    bad[3] ^= 1;
    for c in [&mut rc, &mut gc] {
        assert_eq!(
            show(&restore(c, &bad, None)),
            "-ERR DUMP payload version or checksum are wrong\\r\\n"
        );
    }

    // Our engines' libraries travel in the same envelope; Redis has no such engine.
    gc.cmd_str("FUNCTION FLUSH");
    for code in LIBRARIES.iter().map(|(_, c)| c) {
        assert_eq!(load(&mut gc, code)[0], b'$', "{code}");
    }
    let all = bulk(&gc.cmd_str("FUNCTION DUMP"));
    let g2 = goblin(&[]);
    let mut g2c = g2.raw();
    assert_eq!(restore(&mut g2c, &all, None), b"+OK\r\n");
    check_libraries(&mut g2c);
    rc.cmd_str("FUNCTION FLUSH");
    let refused = show(&restore(&mut rc, &all, None));
    assert!(refused.starts_with("-ERR Engine '"), "{refused}");
}

/// One library per engine with functions (the same two functions in each language), and what
/// FCALL gives.
const LIBRARIES: &[(&str, &str)] = &[
    (
        "lua",
        "#!lua name=lib_lua\nlocal function twice(x) return x * 2 end\nredis.register_function('lua_twice', function(keys, args) return twice(tonumber(args[1])) end)\nredis.register_function{function_name='lua_get', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}",
    ),
    (
        "luau",
        "#!luau name=lib_luau\nlocal function twice(x) return x * 2 end\nredis.register_function('luau_twice', function(keys, args) return twice(tonumber(args[1])) end)\nredis.register_function{function_name='luau_get', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}",
    ),
    (
        "js",
        "#!js name=lib_js\nconst twice = (x) => x * 2;\nredis.register_function('js_twice', (keys, args) => twice(Number(args[0])));\nredis.register_function({function_name: 'js_get', callback: (keys) => redis.call('GET', keys[0]), flags: ['no-writes']});",
    ),
    (
        "wren",
        "#!wren name=lib_wren\nvar twice = Fn.new { |x| x * 2 }\nRedis.registerFunction(\"wren_twice\", Fn.new { |keys, args| twice.call(Num.fromString(args[0])) })\nRedis.registerFunction({\"function_name\": \"wren_get\", \"callback\": Fn.new { |keys, args| Redis.call(\"GET\", keys[0]) }, \"flags\": [\"no-writes\"]})",
    ),
    (
        "tcl",
        "#!tcl name=lib_tcl\nproc twice {x} {expr {$x * 2}}\nredis register_function tcl_twice {apply {{KEYS ARGV} {twice [lindex $ARGV 0]}}}\nredis register_function {function_name tcl_get callback {apply {{KEYS ARGV} {redis call GET [lindex $KEYS 0]}}} flags no-writes}",
    ),
    (
        "python",
        "#!python name=lib_python\ndef twice(x):\n    return x * 2\nredis.register_function('python_twice', lambda keys, args: twice(int(args[0])))\nredis.register_function(function_name='python_get', callback=lambda keys, args: redis.call('GET', keys[0]), flags=['no-writes'])",
    ),
];

fn check_libraries(c: &mut Raw) {
    c.cmd_str("SET k value");
    for (engine, _) in LIBRARIES {
        let twice = format!("FCALL {engine}_twice 0 21");
        assert_eq!(c.cmd_str(&twice), b":42\r\n", "{engine}");
        let get = format!("FCALL_RO {engine}_get 1 k");
        assert_eq!(c.cmd_str(&get), b"$5\r\nvalue\r\n", "{engine}");
    }
}

#[test]
fn libraries_survive_a_restart_in_every_engine() {
    let dir = scratch_dir("functions-restart");
    let d = dir.to_str().unwrap();
    let mut g = goblin(&["--dir", d, "--save", "3600 1"]);
    let mut c = g.raw();
    for (_, code) in LIBRARIES {
        assert_eq!(load(&mut c, code)[0], b'$', "{code}");
    }
    check_libraries(&mut c);
    assert_eq!(
        info_field(&mut c, "number_of_functions"),
        Some(2 * LIBRARIES.len() as i64)
    );
    assert!(info_field(&mut c, "used_memory_vm_functions").unwrap() > 0);
    let code: usize = LIBRARIES.iter().map(|(_, c)| c.len()).sum();
    assert_eq!(
        info_field(&mut c, "used_memory_functions"),
        Some(code as i64)
    );
    let listed = c.cmd_str("FUNCTION LIST WITHCODE");
    c.send(&encode(&[b"SHUTDOWN"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));

    let g = goblin(&["--dir", d, "--enable-debug-command", "yes"]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("FUNCTION LIST WITHCODE"), listed);
    check_libraries(&mut c);
    // DEBUG RELOAD saves and loads them again.
    assert_eq!(c.cmd_str("DEBUG RELOAD"), b"+OK\r\n");
    check_libraries(&mut c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rdb_files_carry_libraries_both_ways() {
    // Redis's file, with a Lua library, loads here.
    let r = redis(&[]);
    let mut rc = r.raw();
    assert_eq!(load(&mut rc, LUA_LIB), b"$5\r\ncross\r\n");
    rc.cmd_str("SET k v");
    assert_eq!(rc.cmd_str("SAVE"), b"+OK\r\n");
    let dir = scratch_dir("functions-from-redis");
    std::fs::copy(r.dir.join("dump.rdb"), dir.join("dump.rdb")).unwrap();
    let g = goblin(&["--dir", dir.to_str().unwrap()]);
    let mut gc = g.raw();
    assert_eq!(gc.cmd_str("FCALL hello 0 rdb"), b"$9\r\nhello rdb\r\n");
    assert_eq!(gc.cmd_str("GET k"), b"$1\r\nv\r\n");
    assert_eq!(
        gc.cmd_str("FUNCTION LIST WITHCODE"),
        rc.cmd_str("FUNCTION LIST WITHCODE")
    );

    // Ours loads into Redis.
    assert_eq!(gc.cmd_str("SAVE"), b"+OK\r\n");
    let rdir = scratch_dir("functions-to-redis");
    std::fs::copy(dir.join("dump.rdb"), rdir.join("dump.rdb")).unwrap();
    let r2 = redis(&["--dir", rdir.to_str().unwrap()]);
    let mut r2c = r2.raw();
    assert_eq!(r2c.cmd_str("FCALL hello 0"), b"$11\r\nhello world\r\n");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&rdir);
}

/// Reads one reply, waiting as long as a busy function may take.
fn slow_reply(c: &mut Raw) -> Vec<u8> {
    c.s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    c.reply()
}

/// A busy function and a busy script, seen from another client: the replies of `lines` (sent by
/// the other client while `busy` runs), then the busy client's own reply.
fn busy_transcript(s: &Server, setup: &str, busy: &[&[u8]], lines: &[&str]) -> Vec<String> {
    let mut runner = s.raw();
    if !setup.is_empty() {
        assert_eq!(load(&mut runner, setup)[0], b'$');
    }
    runner.send(&encode(busy));
    std::thread::sleep(Duration::from_millis(400));
    let mut other = s.raw();
    let mut out: Vec<String> = lines.iter().map(|l| show(&other.cmd_str(l))).collect();
    out.push(show(&slow_reply(&mut runner)));
    out.push(show(&other.cmd_str("PING")));
    out
}

#[test]
fn busy_functions_and_kill_as_redis() {
    let lua = "#!lua name=busy\nredis.register_function('spin', function() while true do end end)\nredis.register_function('spin_written', function(keys) redis.call('SET', keys[1], 'x') while true do end end)";
    let r = redis(&["--busy-reply-threshold", "200"]);
    let g = goblin(&["--busy-reply-threshold", "200"]);
    // (library to load, the busy command, what another client sends meanwhile)
    type Scenario<'a> = (&'a str, &'a [&'a [u8]], &'a [&'a str]);
    let scenarios: &[Scenario] = &[
        (
            lua,
            &[b"FCALL", b"spin", b"0"],
            &["PING", "SCRIPT KILL", "FUNCTION KILL"],
        ),
        (
            "",
            &[b"EVAL", b"while true do end", b"0"],
            &["PING", "FUNCTION KILL", "FUNCTION STATS", "SCRIPT KILL"],
        ),
    ];
    for (setup, busy, lines) in scenarios {
        let want = busy_transcript(&r, setup, busy, lines);
        let got = busy_transcript(&g, setup, busy, lines);
        assert_eq!(want, got);
    }
    // A function that wrote cannot be killed; SHUTDOWN NOSAVE ends it.
    for s in [&r, &g] {
        let mut runner = s.raw();
        runner.send(&encode(&[b"FCALL", b"spin_written", b"1", b"k"]));
        std::thread::sleep(Duration::from_millis(400));
        let mut other = s.raw();
        let got = show(&other.cmd_str("FUNCTION KILL"));
        assert!(got.starts_with("-UNKILLABLE"), "{got}");
        other.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
        assert!(other.is_closed());
    }
}

/// FUNCTION STATS lists every engine; while a function runs it shows its name and command.
#[test]
fn stats_while_a_function_runs_in_every_engine() {
    let spins = [
        "#!lua name=spin_lua\nredis.register_function('spin_lua', function() while true do end end)",
        "#!luau name=spin_luau\nredis.register_function('spin_luau', function() while true do end end)",
        "#!js name=spin_js\nredis.register_function('spin_js', () => { while (true) {} })",
        "#!wren name=spin_wren\nRedis.registerFunction(\"spin_wren\", Fn.new {\n  while (true) {}\n})",
        "#!tcl name=spin_tcl\nproc spin {KEYS ARGV} {while 1 {}}\nredis register_function spin_tcl spin",
        "#!python name=spin_python\ndef spin(keys, args):\n    while True:\n        pass\nredis.register_function('spin_python', spin)",
    ];
    let g = goblin(&["--busy-reply-threshold", "200"]);
    let mut c = g.raw();
    let idle = show(&c.cmd_str("FUNCTION STATS"));
    for engine in ["LUA", "LUAU", "JS", "TCL", "PYTHON", "WREN"] {
        assert!(
            idle.contains(&format!("${}\\r\\n{engine}\\r\\n", engine.len())),
            "{idle}"
        );
    }
    assert!(
        idle.starts_with("*4\\r\\n$14\\r\\nrunning_script\\r\\n$-1\\r\\n"),
        "{idle}"
    );
    for code in spins {
        let name = code
            .split("name=")
            .nth(1)
            .unwrap()
            .split('\n')
            .next()
            .unwrap();
        assert_eq!(load(&mut c, code)[0], b'$');
        let mut runner = g.raw();
        runner.send(&encode(&[b"FCALL", name.as_bytes(), b"0"]));
        std::thread::sleep(Duration::from_millis(400));
        let stats = show(&c.cmd_str("FUNCTION STATS"));
        assert!(
            stats.contains(&format!("$4\\r\\nname\\r\\n${}\\r\\n{name}\\r\\n$7\\r\\ncommand\\r\\n*3\\r\\n$5\\r\\nFCALL\\r\\n", name.len())),
            "{stats}"
        );
        assert!(stats.contains("libraries_count\\r\\n:1"), "{stats}");
        let busy = show(&c.cmd_str("GET x"));
        assert_eq!(
            busy,
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\\r\\n"
        );
        assert_eq!(c.cmd_str("FUNCTION KILL"), b"+OK\r\n");
        let got = show(&slow_reply(&mut runner));
        assert!(
            got.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
            "{name}: {got}"
        );
        assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    }
}

/// Engines refuse `redis.call` in the loading run and `register_function` outside it, stop a
/// loading run after its time, and report their errors with the library's line numbers.
#[test]
fn loading_runs_in_every_engine() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (engine, call, endless, redis) in [
        (
            "luau",
            "redis.call('SET', 'a', 'b')",
            "while true do end",
            "redis",
        ),
        (
            "js",
            "redis.call('SET', 'a', 'b');",
            "while (true) {}",
            "redis",
        ),
        (
            "wren",
            "Redis.call(\"SET\", \"a\", \"b\")",
            "while (true) {}",
            "Redis",
        ),
        (
            "python",
            "redis.call('SET', 'a', 'b')",
            "while True:\n    pass",
            "redis",
        ),
    ] {
        let refused = show(&load(&mut c, &format!("#!{engine} name=x\n{call}")));
        assert!(
            refused.starts_with(&format!("-ERR Error registering functions: ERR {redis}.call is only available while a script runs")),
            "{engine}: {refused}"
        );
        let timeout = show(&load(&mut c, &format!("#!{engine} name=x\n{endless}")));
        assert_eq!(
            timeout, "-ERR Error registering functions: ERR FUNCTION LOAD timeout\\r\\n",
            "{engine}"
        );
        let none = show(&load(&mut c, &format!("#!{engine} name=x\n")));
        assert_eq!(none, "-ERR No functions registered\\r\\n", "{engine}");
    }
    let got = show(&c.cmd_str("LUAU.EVAL \"redis.register_function('a', function() end)\" 0"));
    assert!(
        got.contains("redis.register_function can only be called on FUNCTION LOAD command"),
        "{got}"
    );
    let got = show(&c.cmd_str("QUICKJS.EVAL \"redis.register_function('a', () => 1)\" 0"));
    assert!(
        got.contains("redis.register_function can only be called on FUNCTION LOAD command"),
        "{got}"
    );
    let got = show(&c.cmd_str("UPYTHON.EVAL \"redis.register_function('a', len)\" 0"));
    assert!(
        got.contains("redis.register_function can only be called on FUNCTION LOAD command"),
        "{got}"
    );
    let got = show(&c.cmd(&[
        b"WREN.EVAL",
        b"Redis.registerFunction(\"a\", Fn.new { 1 })",
        b"0",
    ]));
    assert!(
        got.starts_with(
            "-ERR redis.register_function can only be called on FUNCTION LOAD command script: "
        ),
        "{got}"
    );
    // Errors name the function and its line in the library.
    assert_eq!(
        load(
            &mut c,
            "#!luau name=e\n\nredis.register_function('luau_err', function() error('boom') end)"
        )[0],
        b'$'
    );
    assert_eq!(
        show(&c.cmd_str("FCALL luau_err 0")),
        "-ERR user_function:3: boom script: luau_err, on @user_function:3.\\r\\n"
    );
    assert_eq!(
        load(
            &mut c,
            "#!js name=j\n\nredis.register_function('js_err', () => { throw new Error('boom'); })"
        )[0],
        b'$'
    );
    assert_eq!(
        show(&c.cmd_str("FCALL js_err 0")),
        "-ERR boom script: js_err, on user_function:3.\\r\\n"
    );
    assert_eq!(
        load(
            &mut c,
            "#!wren name=w\n\nRedis.registerFunction(\"wren_err\", Fn.new {\n  Fiber.abort(\"boom\")\n})"
        )[0],
        b'$'
    );
    assert_eq!(
        show(&c.cmd_str("FCALL wren_err 0")),
        "-ERR boom script: wren_err, on user_function:4.\\r\\n"
    );
    // Tcl: `redis call` has no `Run` while loading; errors carry the library's line.
    let refused = show(&load(&mut c, "#!tcl name=x\n\nredis call SET a b"));
    assert_eq!(
        refused,
        "-ERR Error registering functions: ERR redis call is only available while a script runs, on line 3.\\r\\n"
    );
    let timeout = show(&load(&mut c, "#!tcl name=x\nwhile 1 {}"));
    assert_eq!(
        timeout,
        "-ERR Error registering functions: ERR FUNCTION LOAD timeout\\r\\n"
    );
    let none = show(&load(&mut c, "#!tcl name=x\n"));
    assert_eq!(none, "-ERR No functions registered\\r\\n");
    let got = show(&c.cmd_str("TCL.EVAL \"redis register_function a list\" 0"));
    assert!(
        got.starts_with(
            "-ERR redis.register_function can only be called on FUNCTION LOAD command script: "
        ),
        "{got}"
    );
    assert_eq!(
        load(
            &mut c,
            "#!tcl name=t\n\nproc boom {KEYS ARGV} {\n  error boom\n}\nredis register_function tcl_err boom"
        )[0],
        b'$'
    );
    assert_eq!(
        show(&c.cmd_str("FCALL tcl_err 0")),
        "-ERR boom script: tcl_err, on line 4.\\r\\n"
    );
    assert_eq!(c.cmd_str("TCL.SCRIPT FLUSH"), b"+OK\r\n");
    assert!(show(&c.cmd_str("FCALL tcl_err 0")).contains("boom"));
    assert_eq!(
        load(
            &mut c,
            "#!python name=p\n\ndef err(keys, args):\n    raise ValueError('boom')\nredis.register_function('python_err', err)"
        )[0],
        b'$'
    );
    assert_eq!(
        show(&c.cmd_str("FCALL python_err 0")),
        "-ERR ValueError: boom script: python_err, on user_function:4.\\r\\n"
    );
    // SCRIPT FLUSH of an engine leaves its functions alone.
    assert_eq!(c.cmd_str("WREN.SCRIPT FLUSH"), b"+OK\r\n");
    assert!(show(&c.cmd_str("FCALL wren_err 0")).contains("boom"));
    assert_eq!(c.cmd_str("UPYTHON.SCRIPT FLUSH"), b"+OK\r\n");
    assert!(show(&c.cmd_str("FCALL python_err 0")).contains("boom"));
    assert_eq!(c.cmd_str("QUICKJS.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(c.cmd_str("LUAU.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(c.cmd_str("SCRIPT FLUSH"), b"+OK\r\n");
    assert!(show(&c.cmd_str("FCALL js_err 0")).contains("boom"));
    assert!(show(&c.cmd_str("FCALL luau_err 0")).contains("boom"));
}

/// A function that allocates without end fails with its engine's out-of-memory error naming the
/// function; the server keeps serving, the library still works and the memory is given back.
#[test]
fn memory_limit_in_every_engine() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (directive, lib) in [
        (
            "lua-memory-limit",
            "#!lua name=bomb_lua\nredis.register_function('bomb_lua', function() local t = {} while true do t[#t+1] = string.rep('x', 1e6) .. #t end end)\nredis.register_function('fine_lua', function() return 'still fine' end)",
        ),
        (
            "luau-memory-limit",
            "#!luau name=bomb_luau\nredis.register_function('bomb_luau', function() local t = {} while true do t[#t+1] = string.rep('x', 1e6) .. #t end end)\nredis.register_function('fine_luau', function() return 'still fine' end)",
        ),
        (
            "tcl-memory-limit",
            "#!tcl name=bomb_tcl\nproc bomb {KEYS ARGV} {set t {}; while 1 {lappend t [string repeat x 1000000][llength $t]}}\nredis register_function bomb_tcl bomb\nredis register_function fine_tcl {apply {{KEYS ARGV} {return {still fine}}}}",
        ),
        (
            "quickjs-memory-limit",
            "#!js name=bomb_js\nredis.register_function('bomb_js', () => { const t = []; while (true) t.push('x'.repeat(1e6) + t.length); });\nredis.register_function('fine_js', () => 'still fine');",
        ),
        (
            "wren-memory-limit",
            "#!wren name=bomb_wren\nRedis.registerFunction(\"bomb_wren\", Fn.new {\n  var t = []\n  var x = \"x\" * 1000\n  while (true) t.add(x + t.count.toString)\n})\nRedis.registerFunction(\"fine_wren\", Fn.new { \"still fine\" })",
        ),
        (
            "upython-memory-limit",
            "#!python name=bomb_python\ndef bomb(keys, args):\n    t = []\n    while True:\n        t.append(b'x' * 1000000 + str(len(t)).encode())\nredis.register_function('bomb_python', bomb)\nredis.register_function('fine_python', lambda keys, args: 'still fine')",
        ),
    ] {
        assert_eq!(
            c.cmd(&[b"CONFIG", b"SET", directive.as_bytes(), b"64mb"]),
            b"+OK\r\n"
        );
        assert_eq!(load(&mut c, lib)[0], b'$', "{lib}");
        let name = lib.split("name=").nth(1).unwrap().split('\n').next().unwrap();
        let got = show(&c.cmd(&[b"FCALL", name.as_bytes(), b"0"]));
        assert!(
            got.starts_with("-ERR Out of memory running script")
                && got.contains(&format!("script: {name}")),
            "{got}"
        );
        let fine = name.replace("bomb", "fine");
        assert_eq!(
            c.cmd(&[b"FCALL", fine.as_bytes(), b"0"]),
            b"$10\r\nstill fine\r\n"
        );
        assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    }
    let vm = info_field(&mut c, "used_memory_vm_functions").unwrap();
    assert!(vm < 16 << 20, "the functions' VMs still hold {vm} bytes");
}

/// Wren's `Redis.registerFunction`: every registration error (in Redis's Lua words), compile and
/// loading errors, a failed load leaving nothing behind, the memory limit of a loading run.
#[test]
fn wren_registration_errors() {
    let g = goblin(&["--wren-memory-limit", "32mb"]);
    let mut c = g.raw();
    let names = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
    let fine = "Fn.new { |keys, args| 1 }";
    let named = |rest: &str| format!("Redis.registerFunction({{{rest}}})");
    let errors: Vec<(String, &str)> = vec![
        ("Redis.registerFunction(1, 2)".into(), "second argument to redis.register_function must be a function"),
        (format!("Redis.registerFunction(null, {fine})"), "first argument to redis.register_function must be a string"),
        (format!("Redis.registerFunction(\"a-b\", {fine})"), names),
        (format!("Redis.registerFunction(\"\", {fine})"), names),
        (format!("Redis.registerFunction(\"a\", {fine})\nRedis.registerFunction(\"a\", {fine})"), "Function already exists in the library"),
        ("Redis.registerFunction(3)".into(), "calling redis.register_function with a single argument is only applicable to a Map (representing named arguments)."),
        (named("1: 2"), "named argument key given to redis.register_function is not a string"),
        (named("\"function_name\": \"a\""), "redis.register_function must get a callback argument"),
        (named(&format!("\"callback\": {fine}")), "redis.register_function must get a function name argument"),
        (named("\"function_name\": \"a\", \"callback\": 3"), "callback argument given to redis.register_function must be a function"),
        (named(&format!("\"function_name\": \"a\", \"callback\": {fine}, \"flags\": \"no-writes\"")), "flags argument to redis.register_function must be a list representing function flags"),
        (named(&format!("\"function_name\": \"a\", \"callback\": {fine}, \"flags\": [\"bad\"]")), "unknown flag given"),
        (named(&format!("\"function_name\": \"a\", \"callback\": {fine}, \"flags\": [1]")), "unknown flag given"),
        (named(&format!("\"function_name\": \"a\", \"callback\": {fine}, \"other\": 1")), "unknown argument given to redis.register_function"),
        (named(&format!("\"function_name\": [], \"callback\": {fine}")), "function_name argument given to redis.register_function must be a string"),
        (named(&format!("\"function_name\": \"a\", \"callback\": {fine}, \"description\": []")), "description argument given to redis.register_function must be a string"),
        ("Redis.registerFunction(\"a\", 1, 2)".into(), "Redis metaclass does not implement 'registerFunction(_,_,_)'."),
        ("import \"function:1\" for X".into(), "Could not resolve module 'function:1' imported from"),
    ];
    for (body, msg) in &errors {
        let got = show(&load(&mut c, &format!("#!wren name=w\n{body}")));
        let line = body.lines().count() + 1;
        assert!(
            got.starts_with(&format!("-ERR Error registering functions: ERR {msg}"))
                && got.ends_with(&format!(" (user_function:{line})\\r\\n")),
            "{body}: {got}"
        );
    }
    for (code, want) in [
        ("#!wren name=w\n\nvar = 3", "-ERR Error compiling function: user_function:3: Error at '=': Expect variable name.\\r\\n"),
        ("#!wren name=w\nvar x = 1\n", "-ERR No functions registered\\r\\n"),
        ("#!wren name=w\nvar t = []\nvar x = \"x\" * 1000\nwhile (true) t.add(x + t.count.toString)", "-ERR Error registering functions: ERR not enough memory\\r\\n"),
        ("#!wren name=w\nwhile (true) {}", "-ERR Error registering functions: ERR FUNCTION LOAD timeout\\r\\n"),
    ] {
        assert_eq!(show(&load(&mut c, code)), want, "{code}");
    }
    // A library that fails after registering leaves nothing behind.
    let late =
        format!("#!wren name=w\nRedis.registerFunction(\"left\", {fine})\nFiber.abort(\"late\")");
    assert_eq!(
        show(&load(&mut c, &late)),
        "-ERR Error registering functions: ERR late (user_function:3)\\r\\n"
    );
    assert_eq!(c.cmd_str("FCALL left 0"), b"-ERR Function not found\r\n");
    assert_eq!(c.cmd_str("FUNCTION LIST"), b"*0\r\n");
    assert_eq!(info_field(&mut c, "number_of_functions"), Some(0));
    let vm = info_field(&mut c, "used_memory_vm_functions").unwrap();
    assert!(vm < 4 << 20, "the functions' VM still holds {vm} bytes");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

/// A Wren library of several functions sharing module state, classes and `Fn`s; flags, both
/// protocols, and the registry commands on it.
#[test]
fn wren_libraries() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let shop = r#"#!wren name=shop
var Prefix = "item:"
class Shop {
  static key(k) { Prefix + k }
  static total(k) {
    var v = Redis.call("GET", key(k))
    return v == null ? 0 : Num.fromString(v)
  }
}
var calls = 0
Redis.registerFunction("add", Fn.new { |keys, args|
  calls = calls + 1
  return Redis.call("INCRBY", Shop.key(keys[0]), args[0])
})
Redis.registerFunction({"function_name": "total", "callback": Fn.new { |keys, args| keys.reduce(0) { |s, k| s + Shop.total(k) } }, "flags": ["no-writes", "ALLOW-OOM"], "description": "sums"})
Redis.registerFunction({"function_name": "calls", "callback": Fn.new { |keys, args| calls }, "flags": ["no-writes"]})
Redis.registerFunction({"function_name": "ro_write", "callback": Fn.new { |keys, args| Redis.call("SET", keys[0], "x") }, "flags": ["no-writes"]})
Redis.registerFunction("conv", Fn.new { |keys, args| [{"double": 1.5}, {"map": {"a": 1}}, true, Redis.call("HGETALL", "h")] })
Redis.registerFunction("resp3", Fn.new { |keys, args|
  Redis.setresp(3)
  return Redis.call("HGETALL", "h")
})"#;
    assert_eq!(load(&mut c, shop), b"$4\r\nshop\r\n");
    assert_eq!(
        show(&load(&mut c, shop)),
        "-ERR Library 'shop' already exists\\r\\n"
    );
    for (cmd, want) in [
        ("FCALL add 1 a 5", ":5\\r\\n"),
        ("FCALL add 1 a 7", ":12\\r\\n"),
        ("FCALL ADD 1 b 1", ":1\\r\\n"),
        ("FCALL_RO total 3 a b c", ":13\\r\\n"),
        ("FCALL_RO calls 0", ":3\\r\\n"),
        ("FCALL_RO add 1 a 1", "-ERR Can not execute a script with write flag using *_ro command.\\r\\n"),
        ("FCALL add 1 a x", "-ERR value is not an integer or out of range script: add, on user_function:13.\\r\\n"),
        ("HSET h f v", ":1\\r\\n"),
        ("FCALL conv 0", "*4\\r\\n$3\\r\\n1.5\\r\\n*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n:1\\r\\n*2\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n"),
        ("FCALL resp3 0", "*2\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n"),
    ] {
        assert_eq!(show(&c.cmd_str(cmd)), want, "{cmd}");
    }
    let ro = show(&c.cmd_str("FCALL ro_write 1 a"));
    assert!(
        ro.starts_with("-ERR Write commands are not allowed from read-only scripts."),
        "{ro}"
    );
    assert_eq!(c.cmd_str("HELLO 3")[0], b'%');
    assert_eq!(
        show(&c.cmd_str("FCALL conv 0")),
        "*4\\r\\n,1.5\\r\\n%1\\r\\n$1\\r\\na\\r\\n:1\\r\\n:1\\r\\n*2\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n"
    );
    assert_eq!(
        show(&c.cmd_str("FCALL resp3 0")),
        "%1\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n"
    );
    assert_eq!(c.cmd_str("HELLO 2")[0], b'*');

    // The registry commands on a Wren library.
    let listed = show(&c.cmd_str("FUNCTION LIST WITHCODE LIBRARYNAME shop"));
    for part in [
        "$6\\r\\nengine\\r\\n$4\\r\\nWREN\\r\\n",
        "$5\\r\\ntotal\\r\\n$11\\r\\ndescription\\r\\n$4\\r\\nsums\\r\\n$5\\r\\nflags\\r\\n*2\\r\\n+no-writes\\r\\n+allow-oom\\r\\n",
        &format!("$12\\r\\nlibrary_code\\r\\n${}\\r\\n#!wren name=shop", shop.len()),
    ] {
        assert!(listed.contains(part), "{part} not in {listed}");
    }
    let stats = show(&c.cmd_str("FUNCTION STATS"));
    assert!(
        stats.contains("$4\\r\\nWREN\\r\\n*4\\r\\n$15\\r\\nlibraries_count\\r\\n:1\\r\\n$15\\r\\nfunctions_count\\r\\n:6\\r\\n"),
        "{stats}"
    );
    let dump = bulk(&c.cmd_str("FUNCTION DUMP"));
    assert_eq!(c.cmd_str("FUNCTION FLUSH"), b"+OK\r\n");
    assert_eq!(
        c.cmd_str("FCALL_RO total 1 a"),
        b"-ERR Function not found\r\n"
    );
    assert_eq!(c.cmd(&[b"FUNCTION", b"RESTORE", &dump]), b"+OK\r\n");
    assert_eq!(c.cmd_str("FCALL_RO total 1 a"), b":12\r\n");
    // The restored library's state starts again.
    assert_eq!(c.cmd_str("FCALL_RO calls 0"), b":0\r\n");
    // REPLACE swaps the library; the old functions go with it.
    let replaced =
        "#!wren name=shop\nRedis.registerFunction(\"other\", Fn.new { |keys, args| \"new\" })";
    assert_eq!(
        c.cmd(&[b"FUNCTION", b"LOAD", b"REPLACE", replaced.as_bytes()]),
        b"$4\r\nshop\r\n"
    );
    assert_eq!(c.cmd_str("FCALL other 0"), b"$3\r\nnew\r\n");
    assert_eq!(c.cmd_str("FCALL add 1 a 1"), b"-ERR Function not found\r\n");
    assert_eq!(c.cmd_str("FUNCTION DELETE shop"), b"+OK\r\n");
    assert_eq!(c.cmd_str("FCALL other 0"), b"-ERR Function not found\r\n");
    // With no library left the functions' VM is gone (its tables only grow while it lives).
    assert_eq!(info_field(&mut c, "used_memory_vm_functions"), Some(0));
    // EVAL still works beside the functions.
    assert_eq!(c.cmd(&[b"WREN.EVAL", b"return 7", b"0"]), b":7\r\n");
}

/// A Tcl library's own interpreter: both registration forms, every registration error, flags,
/// shared procs and state, isolation from other libraries, and the registry commands.
#[test]
fn tcl_libraries() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let shop = "#!tcl name=shop\n\
        set ::prefix item:\n\
        proc key {k} {return $::prefix$k}\n\
        proc add {KEYS ARGV} {redis call INCRBY [key [lindex $KEYS 0]] [lindex $ARGV 0]}\n\
        redis register_function add add\n\
        redis register_function {function_name get callback {apply {{KEYS ARGV} {redis call GET [key [lindex $KEYS 0]]}}} flags {no-writes} description {reads one item}}\n\
        redis register_function {function_name sneaky callback add flags no-writes}\n\
        redis register_function echo [list apply {{KEYS ARGV} {list $KEYS $ARGV}}]";
    assert_eq!(load(&mut c, shop), b"$4\r\nshop\r\n");
    // Both forms; the procs and the global the library made serve every function.
    assert_eq!(c.cmd_str("FCALL add 1 a 5"), b":5\r\n");
    assert_eq!(c.cmd_str("FCALL add 1 a 2"), b":7\r\n");
    assert_eq!(c.cmd_str("GET item:a"), b"$1\r\n7\r\n");
    assert_eq!(c.cmd_str("FCALL_RO get 1 a"), b"$1\r\n7\r\n");
    assert_eq!(
        c.cmd_str("FCALL echo 2 k1 k2 x"),
        b"*2\r\n*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n*1\r\n$1\r\nx\r\n"
    );
    // Flags: FCALL_RO refuses a function without no-writes; a no-writes function cannot write.
    assert_eq!(
        show(&c.cmd_str("FCALL_RO add 1 a 1")),
        "-ERR Can not execute a script with write flag using *_ro command.\\r\\n"
    );
    assert_eq!(
        show(&c.cmd_str("FCALL sneaky 1 a 1")),
        "-ERR Write commands are not allowed from read-only scripts. script: sneaky, on line 4.\\r\\n"
    );
    // RESP3 replies as TCL.EVAL's.
    c.cmd_str("HELLO 3");
    let body = "redis setresp 3; list [redis call HGETALL h] [redis double 1.5] [redis bool 0]";
    let fn_lib =
        format!("#!tcl name=r3\nproc r3 {{KEYS ARGV}} {{{body}}}\nredis register_function r3 r3");
    c.cmd_str("HSET h f v");
    assert_eq!(load(&mut c, &fn_lib), b"$2\r\nr3\r\n");
    let eval = c.cmd(&[b"TCL.EVAL", body.as_bytes(), b"0"]);
    assert_eq!(show(&c.cmd_str("FCALL r3 0")), show(&eval));
    assert!(eval.starts_with(b"*3\r\n%1\r\n"), "{}", show(&eval));
    c.cmd_str("HELLO 2");

    // Every registration error, with Redis's Lua texts.
    let errors = [
        ("redis register_function a", "calling redis.register_function with a single argument is only applicable to a dict (representing named arguments)."),
        ("redis register_function a list x", "wrong number of arguments to redis.register_function"),
        ("redis register_function", "wrong number of arguments to redis.register_function"),
        ("redis register_function a nosuchproc", "second argument to redis.register_function must be a function"),
        ("redis register_function a {}", "second argument to redis.register_function must be a function"),
        ("redis register_function {function_name a}", "redis.register_function must get a callback argument"),
        ("redis register_function {callback list}", "redis.register_function must get a function name argument"),
        ("redis register_function {function_name a callback nosuch}", "callback argument given to redis.register_function must be a function"),
        ("redis register_function {function_name a callback list flags {no-writes bad}}", "unknown flag given"),
        ("redis register_function {function_name a callback list other 1}", "unknown argument given to redis.register_function"),
        ("redis register_function a-b list", "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("redis register_function {} list", "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("redis register_function a list\nredis register_function a list", "Function already exists in the library"),
    ];
    for (code, error) in errors {
        let line = code.matches('\n').count() + 2;
        let got = show(&load(&mut c, &format!("#!tcl name=bad\n{code}")));
        assert_eq!(
            got,
            format!("-ERR Error registering functions: ERR {error}, on line {line}.\\r\\n"),
            "{code}"
        );
    }
    let got = show(&load(&mut c, "#!tcl name=bad\nproc f {} {"));
    assert_eq!(
        got,
        "-ERR Error compiling function: missing close-brace\\r\\n"
    );
    let got = show(&load(
        &mut c,
        "#!tcl name=bad\nredis register_function add list",
    ));
    assert_eq!(got, "-ERR Function add already exists\\r\\n");
    let got = show(&load(
        &mut c,
        "#!tcl name=shop\nredis register_function x list",
    ));
    assert_eq!(got, "-ERR Library 'shop' already exists\\r\\n");

    // A library sees none of another's procs and globals, nor those of one that failed.
    let failed = "#!tcl name=bad\nproc leaked {} {return 1}\nset ::leaked 1\nerror late";
    assert!(show(&load(&mut c, failed)).contains("late"));
    let peek = "#!tcl name=peek\nproc peek {KEYS ARGV} {list [info procs] [info exists ::prefix] [info exists ::leaked]}\nredis register_function peek peek";
    assert_eq!(load(&mut c, peek), b"$4\r\npeek\r\n");
    assert_eq!(
        c.cmd_str("FCALL peek 0"),
        b"*3\r\n*1\r\n$4\r\npeek\r\n:0\r\n:0\r\n"
    );
    // A call that leaves a global behind gives the library a fresh interpreter, as TCL.EVAL does.
    let leaves = "#!tcl name=leaves\nproc leave {KEYS ARGV} {info exists ::left}\nproc make {KEYS ARGV} {set ::left 1; return ok}\nredis register_function leave leave\nredis register_function make make";
    assert_eq!(load(&mut c, leaves), b"$6\r\nleaves\r\n");
    assert_eq!(c.cmd_str("FCALL make 0"), b"$2\r\nok\r\n");
    assert_eq!(c.cmd_str("FCALL leave 0"), b":0\r\n");

    // The registry: LIST WITHCODE, STATS, DUMP + RESTORE, DELETE, FLUSH.
    let listed = show(&c.cmd_str("FUNCTION LIST WITHCODE LIBRARYNAME shop"));
    for part in [
        "$6\\r\\nengine\\r\\n$3\\r\\nTCL\\r\\n",
        "$3\\r\\nget\\r\\n$11\\r\\ndescription\\r\\n$14\\r\\nreads one item\\r\\n$5\\r\\nflags\\r\\n*1\\r\\n+no-writes\\r\\n",
        "$12\\r\\nlibrary_code\\r\\n$",
    ] {
        assert!(listed.contains(part), "{listed}");
    }
    assert!(listed.contains("set ::prefix item:"), "{listed}");
    let stats = show(&c.cmd_str("FUNCTION STATS"));
    assert!(
        stats.contains("$3\\r\\nTCL\\r\\n*4\\r\\n$15\\r\\nlibraries_count\\r\\n:4\\r\\n$15\\r\\nfunctions_count\\r\\n:8\\r\\n"),
        "{stats}"
    );
    // An interpreter abandoned past the memory limit frees its own memory only: the EVAL
    // interpreter's and each library's are apart.
    c.cmd_str("CONFIG SET tcl-memory-limit 16mb");
    let bomb = "set t {}; while 1 {lappend t [string repeat x 1000000][llength $t]}";
    let kept = c.cmd_str("TCL.SCRIPT LOAD \"return kept\"");
    let kept = &kept[kept.len() - 42..kept.len() - 2];
    let got = show(&c.cmd(&[b"TCL.EVAL", bomb.as_bytes(), b"0"]));
    assert!(
        got.starts_with("-ERR Out of memory running script"),
        "{got}"
    );
    assert_eq!(c.cmd_str("FCALL add 1 a 1"), b":8\r\n");
    let boom =
        format!("#!tcl name=boom\nproc b {{KEYS ARGV}} {{{bomb}}}\nredis register_function boom b");
    assert_eq!(load(&mut c, &boom), b"$4\r\nboom\r\n");
    let got = show(&c.cmd_str("FCALL boom 0"));
    assert!(
        got.starts_with("-ERR Out of memory running script") && got.ends_with("script: boom\\r\\n"),
        "{got}"
    );
    assert_eq!(c.cmd(&[b"TCL.EVALSHA", kept, b"0"]), b"$4\r\nkept\r\n");
    assert_eq!(c.cmd_str("FCALL add 1 a 1"), b":9\r\n");
    assert_eq!(c.cmd_str("FUNCTION DELETE boom"), b"+OK\r\n");
    c.cmd_str("CONFIG SET tcl-memory-limit 512mb");
    let dump = bulk(&c.cmd_str("FUNCTION DUMP"));
    assert_eq!(c.cmd_str("FUNCTION DELETE shop"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd_str("FCALL add 1 a 1")),
        "-ERR Function not found\\r\\n"
    );
    assert_eq!(c.cmd_str("FUNCTION FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd_str("FCALL peek 0")),
        "-ERR Function not found\\r\\n"
    );
    assert_eq!(info_field(&mut c, "used_memory_vm_functions"), Some(0));
    assert_eq!(c.cmd(&[b"FUNCTION", b"RESTORE", &dump]), b"+OK\r\n");
    assert_eq!(c.cmd_str("FCALL add 1 a 1"), b":10\r\n");
    assert_eq!(c.cmd_str("FCALL_RO get 1 a"), b"$2\r\n10\r\n");
    // SCRIPT FLUSH (Tcl's and Lua's) leaves the libraries.
    assert_eq!(c.cmd_str("TCL.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(c.cmd_str("SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(c.cmd_str("FCALL add 1 a 1"), b":11\r\n");
}

/// MicroPython's functions: both registration forms (and the dict form), flags, every
/// registration error, the loading run's limits, shared helpers and state, isolation between
/// libraries, the registry commands and SCRIPT FLUSH / a new heap leaving libraries loaded.
#[test]
fn micropython_functions() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let shop = "#!python name=shop\n\
        PREFIX = 'item:'\n\
        calls = [0]\n\
        def key(k):\n    return PREFIX + k.decode()\n\
        def total(k):\n    return int(redis.call('GET', key(k)) or 0)\n\
        def add(keys, args):\n    calls[0] += 1\n    return redis.call('INCRBY', key(keys[0]), args[0])\n\
        redis.register_function('add', add)\n\
        redis.register_function(function_name='get', callback=lambda keys, args: total(keys[0]), flags=['no-writes'], description='one total')\n\
        redis.register_function({'function_name': 'sum', 'callback': lambda keys, args: sum(total(k) for k in keys), 'flags': ('NO-WRITES', 'allow-oom')})\n\
        redis.register_function(function_name='ro_write', callback=lambda keys, args: redis.call('SET', keys[0], 'x'), flags=['no-writes'])\n\
        redis.register_function(function_name='calls', callback=lambda keys, args: calls[0], flags=None, description=None)\n\
        redis.register_function('args', lambda keys, args: [len(keys), len(args), keys, args])\n\
        def resp3(keys, args):\n    redis.setresp(3)\n    return [redis.call('HGETALL', 'h'), {'double': 1.5}]\n\
        redis.register_function('resp3', resp3)";
    assert_eq!(load(&mut c, shop), b"$4\r\nshop\r\n");
    let cases: &[(&str, &str)] = &[
        ("FCALL add 1 a 5", ":5\\r\\n"),
        ("FCALL add 1 a 7", ":12\\r\\n"),
        ("FCALL add 1 b 1", ":1\\r\\n"),
        ("FCALL_RO get 1 a", ":12\\r\\n"),
        ("FCALL_RO sum 3 a b c", ":13\\r\\n"),
        ("FCALL calls 0", ":3\\r\\n"),
        (
            "FCALL_RO add 1 a 1",
            "-ERR Can not execute a script with write flag using *_ro command.\\r\\n",
        ),
        (
            "FCALL ro_write 1 a",
            "-ERR Write commands are not allowed from read-only scripts. script: ro_write, on user_function:14.\\r\\n",
        ),
        (
            "FCALL args 2 k1 k2 a1",
            "*4\\r\\n:2\\r\\n:1\\r\\n*2\\r\\n$2\\r\\nk1\\r\\n$2\\r\\nk2\\r\\n*1\\r\\n$2\\r\\na1\\r\\n",
        ),
        ("FCALL args 0", "*4\\r\\n:0\\r\\n:0\\r\\n*0\\r\\n*0\\r\\n"),
    ];
    let check = |c: &mut Raw| {
        for (line, want) in cases {
            assert_eq!(show(&c.cmd_str(line)), *want, "{line}");
        }
    };
    check(&mut c);
    c.cmd_str("HSET h f v");
    assert_eq!(
        show(&c.cmd_str("HELLO 3")[..1]),
        "%",
        "RESP3 for the next reply"
    );
    assert_eq!(
        show(&c.cmd_str("FCALL resp3 0")),
        "*2\\r\\n%1\\r\\n$1\\r\\nf\\r\\n$1\\r\\nv\\r\\n,1.5\\r\\n"
    );
    c.cmd_str("HELLO 2");
    let listed = show(&c.cmd_str("FUNCTION LIST WITHCODE"));
    assert!(listed.contains("$6\\r\\nPYTHON\\r\\n"), "{listed}");
    assert!(listed.contains("$9\\r\\none total\\r\\n"), "{listed}");
    assert!(
        listed.contains("*2\\r\\n+no-writes\\r\\n+allow-oom\\r\\n"),
        "{listed}"
    );
    let stats = show(&c.cmd_str("FUNCTION STATS"));
    assert!(
        stats.contains("$6\\r\\nPYTHON\\r\\n*4\\r\\n$15\\r\\nlibraries_count\\r\\n:1\\r\\n$15\\r\\nfunctions_count\\r\\n:7\\r\\n"),
        "{stats}"
    );

    // Every registration error, as Redis's Lua words it (no line), and what else fails a load.
    let errors: &[(&str, &str)] = &[
        ("redis.register_function('a')", "calling redis.register_function with a single argument is only applicable to a dict (representing named arguments)."),
        ("redis.register_function()", "wrong number of arguments to redis.register_function"),
        ("redis.register_function('a', len, 1)", "wrong number of arguments to redis.register_function"),
        ("redis.register_function('a', len, flags=[])", "wrong number of arguments to redis.register_function"),
        ("redis.register_function(1, len)", "first argument to redis.register_function must be a string"),
        ("redis.register_function('a', 1)", "second argument to redis.register_function must be a function"),
        ("redis.register_function('a-b', len)", "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("redis.register_function('', len)", "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("redis.register_function('a', len)\nredis.register_function('a', len)", "Function already exists in the library"),
        ("redis.register_function({1: 'a'})", "named argument key given to redis.register_function is not a string"),
        ("redis.register_function(function_name='a', callback=len, foo=1)", "unknown argument given to redis.register_function"),
        ("redis.register_function(function_name=1, callback=len)", "function_name argument given to redis.register_function must be a string"),
        ("redis.register_function(function_name='a', callback=len, description=1)", "description argument given to redis.register_function must be a string"),
        ("redis.register_function(function_name='a', callback=len, flags='no-writes')", "flags argument to redis.register_function must be a list representing function flags"),
        ("redis.register_function(function_name='a', callback=len, flags=['bad'])", "unknown flag given"),
        ("redis.register_function(function_name='a', callback=len, flags=[1])", "unknown flag given"),
        ("redis.register_function(function_name='a', callback=1)", "callback argument given to redis.register_function must be a function"),
        ("redis.register_function(callback=len)", "redis.register_function must get a function name argument"),
        ("redis.register_function(function_name='a')", "redis.register_function must get a callback argument"),
        ("redis.register_function(function_name='a', callback=None)", "redis.register_function must get a callback argument"),
        ("redis.call('SET', 'a', 'b')", "redis.call is only available while a script runs"),
        ("redis.pcall('SET', 'a', 'b')", "redis.call is only available while a script runs"),
        ("while True:\n    pass", "FUNCTION LOAD timeout"),
    ];
    for (code, msg) in errors {
        let got = show(&load(&mut c, &format!("#!python name=bad\n{code}")));
        assert_eq!(
            got,
            format!("-ERR Error registering functions: ERR {msg}\\r\\n"),
            "{code}"
        );
    }
    let others: &[(&str, &str)] = &[
        (
            "redis.register_function('a', len)\nx = (",
            "-ERR Error compiling function: SyntaxError: invalid syntax (user_function:4)\\r\\n",
        ),
        (
            "redis.register_function('a', len)\n\nraise ValueError('bad')",
            "-ERR Error registering functions: ERR ValueError: bad (user_function:4)\\r\\n",
        ),
        (
            "import os",
            "-ERR Error registering functions: ERR ImportError: import of 'os' is not allowed (allowed: math, collections, struct, array, redis) (user_function:2)\\r\\n",
        ),
        ("x = 1", "-ERR No functions registered\\r\\n"),
        (
            "redis.register_function('add', len)",
            "-ERR Function add already exists\\r\\n",
        ),
    ];
    for (code, want) in others {
        let got = show(&load(&mut c, &format!("#!python name=bad\n{code}")));
        assert_eq!(got, *want, "{code}");
    }
    // A registration error the library catches does not register; the rest loads.
    let caught = "#!python name=caught\ntry:\n    redis.register_function('a-b', len)\nexcept redis.RedisError as e:\n    why = str(e)\nredis.register_function('why', lambda keys, args: why)";
    assert_eq!(load(&mut c, caught), b"$6\r\ncaught\r\n");
    assert_eq!(
        show(&c.cmd_str("FCALL why 0")),
        "$110\\r\\nERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\\r\\n"
    );
    // Nothing of a failed load stays: no library, no function, and the server serves.
    let listed = show(&c.cmd_str("FUNCTION LIST LIBRARYNAME bad"));
    assert_eq!(listed, "*0\\r\\n");
    assert_eq!(
        show(&c.cmd_str("FCALL a 0")),
        "-ERR Function not found\\r\\n"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");

    // A library's globals are its own: another library cannot see them, nor can a script.
    let peek = "#!python name=peek\nredis.register_function('peek', lambda keys, args: PREFIX)";
    assert_eq!(load(&mut c, peek), b"$4\r\npeek\r\n");
    let got = show(&c.cmd_str("FCALL peek 0"));
    assert!(
        got.starts_with("-ERR NameError: name 'PREFIX' isn't defined script: peek"),
        "{got}"
    );
    let got = show(&c.cmd_str("UPYTHON.EVAL \"return PREFIX\" 0"));
    assert!(got.starts_with("-ERR NameError"), "{got}");

    // SCRIPT FLUSH and a new heap restart the VM: the libraries are loaded again.
    assert_eq!(c.cmd_str("UPYTHON.SCRIPT FLUSH"), b"+OK\r\n");
    assert_eq!(c.cmd_str("FCALL_RO get 1 a"), b":12\r\n");
    assert_eq!(
        c.cmd_str("CONFIG SET upython-memory-limit 32mb"),
        b"+OK\r\n"
    );
    assert_eq!(c.cmd_str("FCALL_RO sum 2 a b"), b":13\r\n");

    // REPLACE with a failing library keeps the old one; DELETE, DUMP + RESTORE, FLUSH.
    let got = show(&c.cmd(&[
        b"FUNCTION",
        b"LOAD",
        b"REPLACE",
        b"#!python name=shop\nraise ValueError('no')",
    ]));
    assert!(got.starts_with("-ERR Error registering functions"), "{got}");
    assert_eq!(c.cmd_str("FCALL_RO get 1 a"), b":12\r\n");
    let dump = bulk(&c.cmd_str("FUNCTION DUMP"));
    assert_eq!(c.cmd_str("FUNCTION DELETE peek"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd_str("FCALL peek 0")),
        "-ERR Function not found\\r\\n"
    );
    assert_eq!(c.cmd_str("FUNCTION FLUSH"), b"+OK\r\n");
    assert_eq!(
        show(&c.cmd_str("FCALL add 1 a 1")),
        "-ERR Function not found\\r\\n"
    );
    assert_eq!(c.cmd(&[b"FUNCTION", b"RESTORE", &dump]), b"+OK\r\n");
    c.cmd_str("FLUSHALL");
    check(&mut c);
    assert!(show(&c.cmd_str("FCALL peek 0")).contains("NameError"));
}

/// A library's loading run is held to its engine's memory limit as CONFIG SET left it, at once:
/// a library holding ~20 MB fails to load under an 8 MB limit (the Lua library without `string`,
/// which Redis's loading run does not have) and loads under the default.
#[test]
fn loading_runs_follow_a_new_memory_limit() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (engine, default, lib) in [
        (
            "lua",
            "512mb",
            "#!lua name=big_lua\nlocal s = 'x' for i = 1, 17 do s = s .. s end\nlocal t = {} for i = 1, 200 do t[i] = s .. i end\nredis.register_function('big_lua', function() return #t end)",
        ),
        (
            "luau",
            "512mb",
            "#!luau name=big_luau\nlocal s = 'x' for i = 1, 17 do s = s .. s end\nlocal t = {} for i = 1, 200 do t[i] = s .. i end\nredis.register_function('big_luau', function() return #t end)",
        ),
        (
            "quickjs",
            "512mb",
            "#!js name=big_js\nconst t = []; for (let i = 0; i < 200; i++) t.push('x'.repeat(100000) + i);\nredis.register_function('big_js', () => t.length);",
        ),
        (
            "tcl",
            "512mb",
            "#!tcl name=big_tcl\nset ::t {}; for {set i 0} {$i < 200} {incr i} {lappend ::t [string repeat x 100000]$i}\nredis register_function big_tcl {apply {{KEYS ARGV} {llength $::t}}}",
        ),
        (
            "wren",
            "512mb",
            "#!wren name=big_wren\nvar s = \"x\"\nfor (i in 0...17) s = s + s\nvar T = []\nfor (i in 0...200) T.add(s + i.toString)\nRedis.registerFunction(\"big_wren\", Fn.new { |keys, args| T.count })",
        ),
        (
            "upython",
            "64mb",
            "#!python name=big_python\nt = [b'x' * 100000 + str(i).encode() for i in range(200)]\nredis.register_function('big_python', lambda keys, args: len(t))",
        ),
    ] {
        let directive = format!("{engine}-memory-limit");
        let name = lib.split("name=").nth(1).unwrap().split('\n').next().unwrap();
        assert_eq!(
            c.cmd(&[b"CONFIG", b"SET", directive.as_bytes(), b"8mb"]),
            b"+OK\r\n"
        );
        let got = show(&load(&mut c, lib));
        assert!(
            got.starts_with("-ERR Error registering functions:")
                && got.to_ascii_lowercase().contains("memory"),
            "{engine}: {got}"
        );
        assert_eq!(
            c.cmd(&[b"FCALL", name.as_bytes(), b"0"]),
            b"-ERR Function not found\r\n"
        );
        assert_eq!(
            c.cmd(&[b"CONFIG", b"SET", directive.as_bytes(), default.as_bytes()]),
            b"+OK\r\n"
        );
        assert_eq!(load(&mut c, lib)[0], b'$', "{engine}");
        assert_eq!(c.cmd(&[b"FCALL", name.as_bytes(), b"0"]), b":200\r\n");
    }
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

/// The named form's keys are read in any case, as Redis's Lua reads its table's
/// (`FUNCTION_NAME=...` registers on redis-server too); Wren's Map and JavaScript's object
/// are read by their exact names (see their pages).
#[test]
fn named_arguments_in_any_case() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (name, lib) in [
        ("case_lua", "#!lua name=case_lua\nredis.register_function{FUNCTION_NAME='case_lua', Callback=function() return 1 end, FLAGS={'no-writes'}}"),
        ("case_luau", "#!luau name=case_luau\nredis.register_function({FUNCTION_NAME='case_luau', Callback=function() return 1 end, FLAGS={'no-writes'}})"),
        ("case_tcl", "#!tcl name=case_tcl\nredis register_function {FUNCTION_NAME case_tcl Callback {apply {{KEYS ARGV} {redis int 1}}} FLAGS no-writes}"),
        ("case_python", "#!python name=case_python\nredis.register_function({'FUNCTION_NAME': 'case_python', 'Callback': lambda keys, args: 1, 'FLAGS': ['no-writes']})"),
    ] {
        assert_eq!(show(&load(&mut c, lib)), show(format!("${}\r\n{name}\r\n", name.len()).as_bytes()), "{lib}");
        assert_eq!(c.cmd(&[b"FCALL_RO", name.as_bytes(), b"0"]), b":1\r\n", "{name}");
    }
}
