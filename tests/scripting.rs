//! Scripting against real Redis: the same EVAL/EVALSHA/SCRIPT sequences on Debian's redis-server and
//! on Goblin Core, replies compared byte for byte (conversions both ways, errors and their wording,
//! pcall, the sandbox, the libraries, shebang flags, read-only runs, RESP3). Each case starts on
//! a fresh connection after FLUSHALL (`tests/common`'s `compare`).

mod common;
use common::{compare, goblin, show};

#[test]
fn lua_to_resp_conversions() {
    compare(&[&[
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
        "EVAL \"return {ok='two\\r\\nlines'}\" 0",
        "EVAL \"return {err='My Error'}\" 0",
        "EVAL \"return {err='ERR My Error'}\" 0",
        "EVAL \"return {err='CUSTOM code here'}\" 0",
        "EVAL \"return {err='line\\r\\nbreak'}\" 0",
        "EVAL \"return {ok='x', err='y'}\" 0",
        "EVAL \"return {a=1, b=2}\" 0",
        "EVAL \"return {1, 2, a=3}\" 0",
        "EVAL \"return {ok=1}\" 0",
        "EVAL \"return {err=1}\" 0",
        "EVAL \"return redis.error_reply('boom')\" 0",
        "EVAL \"return redis.error_reply('MY boom')\" 0",
        "EVAL \"return redis.error_reply('-MY boom')\" 0",
        "EVAL \"return redis.error_reply('-nospace')\" 0",
        "EVAL \"return redis.error_reply(1)\" 0",
        "EVAL \"return redis.error_reply()\" 0",
        "EVAL \"return redis.status_reply('FINE')\" 0",
        "EVAL \"return redis.status_reply()\" 0",
        "EVAL \"return 1e20\" 0",
        "EVAL \"return 0/0\" 0",
        "EVAL \"return 2^63\" 0",
        "EVAL \"return -2^63\" 0",
        "EVAL \"return tostring(1/3)\" 0",
        "EVAL \"return function() end\" 0",
        "EVAL \"return coroutine.create(function() end)\" 0",
    ]]);
}

#[test]
fn resp_to_lua_conversions() {
    compare(&[&[
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
        "EVAL \"local ok, e = pcall(redis.call, 'INCR', 's') return {tostring(ok), e.err}\" 0",
        "EVAL \"return redis.call('INCR', 's')\" 0",
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
    ]]);
}

#[test]
fn keys_and_argv() {
    compare(&[&[
        "EVAL \"return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]}\" 2 k1 k2 a1 a2 a3",
        "EVAL \"return #KEYS + 10 * #ARGV\" 0",
        "EVAL \"return #KEYS + 10 * #ARGV\" 3 a b c d",
        "EVAL \"return ARGV\" 0 \"\" \"x y\"",
        "EVAL \"KEYS[1] = 'changed' return KEYS[1]\" 1 k",
        // Whatever a script does to KEYS and ARGV, the next call gets exactly its own.
        "EVAL \"KEYS.x = 1 KEYS[5] = 'z' table.insert(ARGV, 'extra') return #ARGV\" 1 k a",
        "EVAL \"return {#KEYS, #ARGV, tostring(KEYS.x), tostring(KEYS[5]), tostring(ARGV[2])}\" 1 k a",
        "EVAL \"setmetatable(KEYS, {__index = function() return 'meta' end}) return KEYS[9]\" 1 k",
        "EVAL \"return tostring(KEYS[9])\" 1 k",
        "EVAL \"return #KEYS\" 20 a b c d e f g h i j k l m n o p q r s t",
        "EVAL \"return {#KEYS, tostring(KEYS[2]), tostring(KEYS[20])}\" 1 k",
        "EVAL \"KEYS[2] = 'more' return #KEYS\" 1 k",
        "EVAL \"return {#KEYS, tostring(KEYS[2])}\" 1 k",
        "EVAL \"return 1\" -1",
        "EVAL \"return 1\" 2 a",
        "EVAL \"return 1\" x",
        "EVAL \"return 1\"",
        "EVAL",
        "SET lock tok",
        "EVAL \"if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 end\" 1 lock other",
        "EVAL \"if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 end\" 1 lock tok",
        "EXISTS lock",
    ]]);
}

#[test]
fn errors_and_their_wording() {
    compare(&[&[
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
        "EVAL \"return redis.pcall('nosuch')\" 0",
        "EVAL \"return redis.pcall('GET')\" 0",
        // Argument errors too come back from pcall as an error table.
        "EVAL \"return redis.pcall('GET', {})\" 0",
        "EVAL \"return redis.pcall('GET', {}).err\" 0",
        "EVAL \"return redis.pcall()\" 0",
        "EVAL \"return redis.call('GET', {})\" 0",
        "EVAL \"error('x')\" 0",
        "EVAL \"error('x', 0)\" 0",
        "EVAL \"error({err='custom'})\" 0",
        "EVAL \"error({err='MY custom code'})\" 0",
        "EVAL \"error()\" 0",
        "EVAL \"error(42)\" 0",
        "EVAL \"local t = nil; return t.x\" 0",
        "EVAL \"return 1 +\" 0",
        "EVAL \"return 'unterminated\" 0",
        "EVAL \"\n\nerror('line three')\" 0",
        "EVAL \"local function f() error('inner') end f()\" 0",
        "EVAL \"return pcall(error, 'caught')\" 0",
        "EVAL \"local ok, e = pcall(function() error({err='T'}) end) return e.err\" 0",
        "EVAL \"return select('#', pcall(redis.call, 'nosuch'))\" 0",
        "EVAL \"return redis.setresp(4)\" 0",
        "EVAL \"return redis.setresp()\" 0",
        "EVAL \"return redis.sha1hex()\" 0",
        "EVAL \"return redis.log()\" 0",
        "EVAL \"return redis.log('x', 'y')\" 0",
        "EVAL \"return redis.log(99, 'y')\" 0",
    ]]);
}

#[test]
fn sandbox_and_globals() {
    compare(&[&[
        "EVAL \"local t = {} for k,v in pairs(_G) do t[#t+1]=k..':'..type(v) end table.sort(t) return t\" 0",
        "EVAL \"local t = {} for k,v in pairs(redis) do t[#t+1]=k..':'..type(v) end table.sort(t) return t\" 0",
        "EVAL \"local t = {} for k,v in pairs(string) do t[#t+1]=k end table.sort(t) return t\" 0",
        "EVAL \"local t = {} for k,v in pairs(math) do t[#t+1]=k end table.sort(t) return t\" 0",
        "EVAL \"local t = {} for k,v in pairs(table) do t[#t+1]=k end table.sort(t) return t\" 0",
        "EVAL \"local t = {} for k,v in pairs(bit) do t[#t+1]=k end table.sort(t) return t\" 0",
        "EVAL \"x = 5\" 0",
        "EVAL \"return y\" 0",
        "EVAL \"return os\" 0",
        "EVAL \"return io\" 0",
        "EVAL \"return print\" 0",
        "EVAL \"return dofile\" 0",
        "EVAL \"return loadfile\" 0",
        "EVAL \"return require\" 0",
        "EVAL \"return debug\" 0",
        "EVAL \"return setfenv\" 0",
        "EVAL \"return getfenv\" 0",
        "EVAL \"return newproxy\" 0",
        "EVAL \"return string.dump\" 0",
        "EVAL \"string.foo = 1\" 0",
        "EVAL \"string.upper = nil\" 0",
        "EVAL \"redis.call = nil\" 0",
        "EVAL \"math.pi = 3\" 0",
        "EVAL \"rawset(_G, 'x', 1)\" 0",
        "EVAL \"rawset(string, 'x', 1)\" 0",
        "EVAL \"table.insert(string, 'x')\" 0",
        "EVAL \"setmetatable(_G, nil)\" 0",
        "EVAL \"getmetatable(_G).__index = nil\" 0",
        "EVAL \"getmetatable('').__index = nil\" 0",
        "EVAL \"_G.KEYS = 1\" 0",
        "EVAL \"local t = setmetatable({}, {__index=function() return 7 end}) return t.x\" 0",
        "EVAL \"return loadstring(string.char(27)..'Lua')\" 0",
        "EVAL \"return loadstring('return 1 + 1')()\" 0",
        "EVAL \"return loadstring('x = 1')()\" 0",
        "EVAL \"return ('abc'):upper()\" 0",
        "EVAL \"return _VERSION\" 0",
        "EVAL \"return {math.random(1000), math.random(1000), math.random(1, 6)}\" 0",
        "EVAL \"math.randomseed(42) return {math.random(1000), math.random(100)}\" 0",
        "EVAL \"return tostring(math.random() < 1)\" 0",
        "EVAL \"return math.random(0)\" 0",
        "EVAL \"return math.random(3, 1)\" 0",
        "EVAL \"return redis.REDIS_VERSION\" 0",
        "EVAL \"return redis.REDIS_VERSION_NUM\" 0",
        "EVAL \"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}\" 0",
        "EVAL \"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}\" 0",
        "EVAL \"return redis.sha1hex('')\" 0",
        "EVAL \"return redis.sha1hex('abc')\" 0",
        "EVAL \"return tostring(redis.replicate_commands())\" 0",
        "EVAL \"return tostring(redis.breakpoint())\" 0",
        "EVAL \"return redis.set_repl(redis.REPL_ALL)\" 0",
        "EVAL \"return redis.set_repl(9)\" 0",
        "EVAL \"return tostring(redis.acl_check_cmd('set', 'k', 'v'))\" 0",
        "EVAL \"return redis.acl_check_cmd('nosuch')\" 0",
        "EVAL \"return redis.log(redis.LOG_WARNING, 'from a script')\" 0",
        "EVAL \"local c = coroutine.wrap(function() coroutine.yield(1) end) return c()\" 0",
    ]]);
}

#[test]
fn bit_library() {
    compare(&[&[
        "EVAL \"return {bit.tobit(0xffffffff), bit.tobit(2^32 + 5), bit.tobit(-1)}\" 0",
        "EVAL \"return {bit.tohex(255), bit.tohex(-1), bit.tohex(255, 4), bit.tohex(255, -4), bit.tohex(0x1234, 2)}\" 0",
        "EVAL \"return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3)}\" 0",
        "EVAL \"return {bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.lshift(1, 33)}\" 0",
        "EVAL \"return {bit.rol(0x12345678, 8), bit.ror(0x12345678, 8), bit.bswap(0x12345678)}\" 0",
        "EVAL \"return bit.band('x')\" 0",
        "EVAL \"return bit.band()\" 0",
    ]]);
}

#[test]
fn script_cache_commands() {
    compare(&[&[
        "#SCRIPT FLUSH",
        "SCRIPT LOAD \"return 'loaded'\"",
        "EVALSHA 6d3b8f9c9b6d4e21d1b8bcbd6b0bd5db6b7d1b9c 0",
        "EVALSHA b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c 0",
        "EVALSHA B0FF9D11CAE6D6B2BFD59BB3C2AC5EC6BEE2DD3C 0",
        "SCRIPT EXISTS b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c nope B0FF9D11CAE6D6B2BFD59BB3C2AC5EC6BEE2DD3C",
        "EVALSHA abc 0",
        "EVALSHA ffffffffffffffffffffffffffffffffffffffff 0",
        "EVAL \"return 'via eval'\" 0",
        "EVALSHA 7d93fbfd6bd8b1b21e5d3e9e2a1ac7e3a5fc51b4 0",
        "SCRIPT FLUSH",
        "EVALSHA b0ff9d11cae6d6b2bfd59bb3c2ac5ec6bee2dd3c 0",
        "SCRIPT FLUSH ASYNC",
        "SCRIPT FLUSH SYNC",
        "SCRIPT FLUSH bad",
        "SCRIPT FLUSH SYNC ASYNC",
        "SCRIPT KILL",
        "SCRIPT LOAD",
        "SCRIPT LOAD \"return 1 +\"",
        "SCRIPT LOADX 1",
        "SCRIPT",
        "SCRIPT EXISTS",
    ]]);
}

#[test]
fn shebang_flags_and_read_only_runs() {
    compare(&[&[
        "EVAL \"#!lua\nreturn 1\" 0",
        "EVAL \"#!lua\nerror('x')\" 0",
        "EVAL \"#!lua flags=no-writes\nreturn redis.call('SET','a','b')\" 0",
        "EVAL \"#!lua flags=no-writes\nreturn redis.call('GET','a')\" 0",
        "EVAL \"#!lua flags=no-writes,allow-oom\nreturn 2\" 0",
        "EVAL \"#!lua flags=bogus\nreturn 1\" 0",
        "EVAL \"#!lua foo=1\nreturn 1\" 0",
        "EVAL \"#!luax\nreturn 1\" 0",
        "EVAL \"#!lua\" 0",
        "EVAL \"#!\nreturn 1\" 0",
        "EVAL \"#!lua flags=\nreturn 3\" 0",
        "EVAL_RO \"return redis.call('SET','a','b')\" 0",
        "EVAL_RO \"return redis.call('GET','a')\" 0",
        "SCRIPT LOAD \"return redis.call('SET','ro','x')\"",
        "EVALSHA_RO 4d7d1ee33e11e2d8f7b0e2e1d8c2d6d3b0c5e8f1 0",
        "EVAL \"return redis.call('SET','ro','x')\" 0",
        "EVALSHA_RO 0f3a6e1b5ddbd1a7f9d5a0b8f3f2ac3a4c7d5d6e 0",
        "EVAL_RO \"return redis.pcall('SET','a','b')\" 0",
        // What may replicate counts as a write for a read-only script.
        "EVAL_RO \"return redis.call('PUBLISH','c','m')\" 0",
        "EVAL \"#!lua flags=no-writes\nreturn redis.call('PUBLISH','c','m')\" 0",
        "EVAL \"return redis.call('PUBLISH','c','m')\" 0",
        "EVAL \"return redis.call('SELECT', 1)\" 0",
        "EVAL \"redis.call('SELECT', 1) redis.call('SET', 'indb1', 'v') return 1\" 0",
        "EXISTS indb1",
        "SELECT 1",
        "EXISTS indb1",
    ]]);
}

#[test]
fn resp3_conversions() {
    compare(&[
        &[
            "#HELLO 3",
            "SET s v",
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
            "EVAL \"return nil\" 0",
            "EVAL \"return redis.call('GET', 'missing')\" 0",
            "EVAL \"return {1, 'two', {ok='three'}}\" 0",
        ],
        &[
            "EVAL \"redis.setresp(3) return true\" 0",
            "EVAL \"redis.setresp(3) return false\" 0",
            "EVAL \"redis.setresp(3) return {double=3.14}\" 0",
            "EVAL \"redis.setresp(3) return {map={a=1}}\" 0",
            "EVAL \"redis.setresp(3) return {set={x=true}}\" 0",
            "EVAL \"redis.setresp(3) return {big_number='123'}\" 0",
            "EVAL \"redis.setresp(3) return {verbatim_string={format='txt', string='hi'}}\" 0",
        ],
    ]);
}

/// SCRIPT HELP lists what we have: Redis's lines but SCRIPT DEBUG (the Lua debugger, which Goblin
/// Core does not offer, so SCRIPT DEBUG is an unknown subcommand).
#[test]
fn script_help_and_no_debugger() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let help = show(&c.cmd_str("SCRIPT HELP"));
    assert!(help.starts_with("*15\\r\\n+SCRIPT <subcommand>"), "{help}");
    for line in [
        "+EXISTS <sha1>",
        "+FLUSH [ASYNC|SYNC]",
        "+KILL",
        "+LOAD <script>",
        "+    Prints this help.",
    ] {
        assert!(help.contains(line), "{line} missing from {help}");
    }
    assert!(!help.contains("DEBUG"), "{help}");
    assert_eq!(
        show(&c.cmd_str("SCRIPT DEBUG YES")),
        "-ERR unknown subcommand 'DEBUG'. Try SCRIPT HELP.\\r\\n"
    );
}

/// `error({})` (an error table without `err`) crashes Redis 7.0.15; Goblin Core replies an error
/// and keeps serving.
#[test]
fn error_table_without_message_is_an_error_reply() {
    let g = goblin(&[]);
    let mut c = g.raw();
    assert_eq!(
        show(&c.cmd_str("EVAL \"error({})\" 0")),
        "-ERR unknown error script: 367bf7fe449ba40e54d99d9086aa3c2164008136, on @user_script:1.\\r\\n"
    );
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}

/// Quotes a script for a command line (the splitter the differential tests share reads
/// redis-cli's quoting).
fn quoted(script: &str) -> String {
    let mut q = String::from("\"");
    for c in script.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\0' => q.push_str("\\x00"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// cjson, cmsgpack and struct: outputs and errors as Redis's C libraries give them.
#[test]
fn cjson_cmsgpack_struct_libraries() {
    let scripts: &[&str] = &[
        r#"return cjson.encode({1,2,{a=1,b='x'},cjson.null, 1.5, 1e20})"#,
        r#"return cjson.encode({a={b={c={1,2,3}}}, s='x"y\\z/'})"#,
        r#"return cjson.encode(1/3)"#,
        r#"local t = {} t[1]=t return cjson.encode(t)"#,
        r#"return cjson.encode({[1]=1,[5]=5})"#,
        r#"return cjson.encode({[1]=1,[50]=5})"#,
        r#"return cjson.encode(function() end)"#,
        r#"return cjson.decode('[1,2,{"a":[true,false,null]}]')[3].a[1]"#,
        r#"return cjson.decode('{')"#,
        r#"return cjson.decode('{"a":1,"b":[1,2]}').b[2]"#,
        r#"return type(cjson.decode('null'))"#,
        r#"return cjson.decode('null') == cjson.null"#,
        r#"return cjson.encode(cjson.decode('{"x":"\\u00e9\\ud83d\\ude00"}'))"#,
        r#"return cjson.encode_max_depth(2)"#,
        r#"return cjson.encode({{{1}}})"#,
        r#"return cjson.encode_max_depth()"#,
        r#"local c = cjson.new() c.encode_max_depth(1) return {pcall(c.encode, {{1}}), cjson.encode({{1}})}"#,
        r#"return cmsgpack.pack({1,2,3}, 'abc', 1.5, -1, 2^40, {a=1})"#,
        r#"return {cmsgpack.unpack(cmsgpack.pack({1,2,3}, 'abc', true, false))}"#,
        r#"return cmsgpack.unpack('')"#,
        r#"return cmsgpack.unpack(string.char(0xc1))"#,
        r#"return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3))}"#,
        r#"return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)}"#,
        r#"local t = {} t[1] = t return cmsgpack.pack(t)"#,
        r#"return cmsgpack.pack()"#,
        r#"return struct.pack('>I2', 24930)"#,
        r#"return {struct.unpack('>I2', 'ab')}"#,
        r#"return struct.pack('bBhHlLiIfd', -1, 255, -2, 65535, -3, 4294967295, -4, 7, 1.5, 2.25)"#,
        r#"return {struct.unpack('s', 'hello\0world')}"#,
        r#"return struct.size('bhi')"#,
        r#"return struct.pack('x')"#,
        r#"return struct.pack('i', 'notanumber')"#,
        r#"return struct.pack('z')"#,
        r#"return struct.unpack('I', 'ab')"#,
        r#"cjson.foo = 1"#,
        r#"cmsgpack.pack = nil"#,
        r#"struct.x = 1"#,
        r#"return cjson.encode({[true]=1})"#,
        r#"return cjson.encode(0/0)"#,
    ];
    let lines: Vec<String> = scripts
        .iter()
        .map(|s| format!("EVAL {} 0", quoted(s)))
        .collect();
    let case: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
    compare(&[&case]);
}

/// Scripts that only arrived by EVAL live in a bounded cache (500, least recently used evicted
/// first, counted in INFO); scripts loaded by SCRIPT LOAD stay until SCRIPT FLUSH.
#[test]
fn eval_cache_is_bounded_and_loaded_scripts_stay() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let loaded = c.cmd_str("SCRIPT LOAD \"return 'kept'\"");
    let sha = String::from_utf8_lossy(&loaded[5..45]).into_owned();
    for i in 0..510 {
        let got = c.cmd_str(&format!("EVAL \"return {i}\" 0"));
        assert_eq!(got, format!(":{i}\r\n").into_bytes());
    }
    let info = show(&c.cmd_str("INFO"));
    assert!(
        info.contains("number_of_cached_scripts:501\\r\\n"),
        "{info}"
    );
    assert!(info.contains("evicted_scripts:10\\r\\n"), "{info}");
    assert_eq!(c.cmd_str(&format!("EVALSHA {sha} 0")), b"$4\r\nkept\r\n");
    // The oldest EVAL-only scripts went first; the newest are still there.
    let first = c.cmd_str("SCRIPT EXISTS e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    assert_eq!(first, b"*1\r\n:0\r\n", "'return 1' was evicted");
    let newest = c.cmd_str("EVAL \"return 509\" 0");
    assert_eq!(newest, b":509\r\n");
    assert!(show(&c.cmd_str("INFO")).contains("evicted_scripts:10\\r\\n"));
    assert_eq!(c.cmd_str("SCRIPT FLUSH"), b"+OK\r\n");
    assert!(show(&c.cmd_str("INFO")).contains("number_of_cached_scripts:0\\r\\n"));
}

/// The collector still runs between calls: scripts that each leave about 100 KB of garbage,
/// 400 times over (40 MB in all), leave the Lua VM holding a few MB at most.
#[test]
fn garbage_of_many_calls_is_collected() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let script = "local t = {} for i = 1, 1000 do t[i] = ARGV[1] .. i end return #t";
    let sha = c.cmd(&[b"SCRIPT", b"LOAD", script.as_bytes()]);
    let sha = &sha[5..45];
    let filler = vec![b'x'; 64];
    for _ in 0..400 {
        assert_eq!(c.cmd(&[b"EVALSHA", sha, b"0", &filler]), b":1000\r\n");
    }
    let info = String::from_utf8(c.cmd_str("INFO memory")).unwrap();
    let used: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory_lua:"))
        .expect("used_memory_lua in INFO memory")
        .trim()
        .parse()
        .unwrap();
    assert!(
        used < 4 << 20,
        "used_memory_lua {used} after 40 MB of garbage"
    );
}

/// A script's SELECT lasts until the script ends, also inside MULTI: the next queued command runs
/// in the transaction's database.
#[test]
fn select_in_a_script_inside_multi() {
    compare(&[
        &[
            "SET s3 1",
            "MULTI",
            "EVAL \"return redis.call('SELECT', 1)\" 0",
            "SET s3 2",
            "GET s3",
            "EXEC",
            "GET s3",
            "SELECT 1",
            "GET s3",
            "FLUSHALL",
        ],
        &[
            "SET k v",
            "MULTI",
            "EVAL \"redis.call('SELECT', 1) return redis.call('SET', 'k', 'in1')\" 0",
            "GET k",
            "EXEC",
            "SELECT 1",
            "GET k",
            "FLUSHALL",
        ],
    ]);
}
