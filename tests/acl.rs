//! ACL users against Debian's redis-server: every ACL subcommand and error text, AUTH and HELLO,
//! the permission matrix (categories, key patterns read and write, channels, selectors) from a
//! client, MULTI/EXEC and scripts of all six engines, ACL LOG, ACL files, `user` config lines,
//! and what happens to the connections of users that change or go.

mod common;

use common::*;

/// Users whose rules describe deterministically (Redis lists single commands in its command
/// dict's order, which changes from one start to the next: at most one single command each).
const USERS: &[&str] = &[
    "ACL SETUSER alice on >pw ~app:* &ch* +@read +@write -flushall",
    "ACL SETUSER bob +get ~k* &chan*",
    "ACL SETUSER carol on nopass +@all -@dangerous allkeys",
    "ACL SETUSER dave on >x %R~r* %W~w* %RW~rw* +@all",
    "ACL SETUSER erin on >x +get (~sel* +set) (+hget ~h*)",
    "ACL SETUSER frank on >x +@all -@keyspace ~* &* -debug",
];

fn with_users(lines: &[&'static str]) -> Vec<&'static str> {
    USERS.iter().chain(lines).copied().collect()
}

#[test]
fn acl_subcommands_match_redis() {
    let cases: Vec<Vec<&str>> = vec![
        with_users(&[
            "ACL WHOAMI",
            "ACL USERS",
            "ACL LIST",
            "ACL GETUSER default",
            "ACL GETUSER alice",
            "ACL GETUSER bob",
            "ACL GETUSER carol",
            "ACL GETUSER dave",
            "ACL GETUSER erin",
            "ACL GETUSER frank",
            "ACL GETUSER nosuch",
            "ACL SETUSER alice -@write +set",
            "ACL GETUSER alice",
            "ACL SETUSER alice resetkeys resetchannels nocommands",
            "ACL GETUSER alice",
            "ACL SETUSER alice allcommands allkeys allchannels",
            "ACL GETUSER alice",
            "ACL SETUSER alice <pw #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
            "ACL GETUSER alice",
            "ACL SETUSER alice !2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
            "ACL SETUSER alice nopass skip-sanitize-payload",
            "ACL GETUSER alice",
            "ACL SETUSER alice resetpass sanitize-payload clearselectors",
            "ACL SETUSER erin clearselectors",
            "ACL GETUSER erin",
            "ACL SETUSER h reset",
            "ACL GETUSER h",
            "ACL SETUSER h on nopass +@all ~* resetchannels &a",
            "ACL GETUSER h",
            "ACL SETUSER i +select|0",
            "ACL GETUSER i",
            "ACL SETUSER i2 +config|get",
            "ACL GETUSER i2",
            "ACL SETUSER j +@all -config|set",
            "ACL GETUSER j",
            "ACL SETUSER k \"\"",
            "ACL GETUSER k",
            "ACL LIST",
            "ACL USERS",
        ]),
        vec![
            "ACL SETUSER f +nosuch",
            "ACL SETUSER f +@nosuch",
            "ACL SETUSER f -nosuch",
            "ACL SETUSER f ~* ~x",
            "ACL SETUSER f allkeys %R~x",
            "ACL SETUSER f &* &x",
            "ACL SETUSER f allchannels &x",
            "ACL SETUSER f <nopw",
            "ACL SETUSER f !abc",
            "ACL SETUSER f #abc",
            "ACL SETUSER f #2D711642B726B04401627CA9FBAC32F5C8530FB1903CC4DB02258717921A4881",
            "ACL SETUSER f (+get",
            "ACL SETUSER f (+get ~x",
            "ACL SETUSER f (+nosuch)",
            "ACL SETUSER f +config|get|x",
            "ACL SETUSER f +config|",
            "ACL SETUSER f +config|nosuch",
            "ACL SETUSER f foo",
            "ACL SETUSER f %X~k",
            "ACL SETUSER f %RR~k",
            "ACL SETUSER f \"~a b\"",
            "ACL SETUSER f \"&a b\"",
            "ACL SETUSER \"a b\"",
            "ACL SETUSER g on +get nonsense",
            "ACL GETUSER g",
            "ACL USERS",
            "ACL SETUSER",
            "ACL DELUSER default",
            "ACL DELUSER nosuch default",
            "ACL SETUSER bob",
            "ACL DELUSER bob nosuch bob",
            "ACL DELUSER",
            "ACL CAT",
            "ACL CAT nosuch",
            "ACL CAT read extra",
            "ACL GENPASS 0",
            "ACL GENPASS -1",
            "ACL GENPASS 5000",
            "ACL GENPASS x",
            "ACL GENPASS 1 2",
            "ACL LOAD",
            "ACL SAVE",
            "ACL LOAD extra",
            "ACL HELP",
            "ACL HELP extra",
            "ACL",
            "ACL FOO",
            "ACL LOG",
            "ACL LOG x",
            "ACL LOG -1",
            "ACL LOG RESET",
            "ACL LOG RESET extra",
            "ACL WHOAMI extra",
            "ACL USERS extra",
            "ACL GETUSER",
        ],
        with_users(&[
            "ACL DRYRUN alice get app:1",
            "ACL DRYRUN alice get x",
            "ACL DRYRUN alice flushall",
            "ACL DRYRUN alice publish ch1 m",
            "ACL DRYRUN alice publish other m",
            "ACL DRYRUN alice subscribe ch1 other",
            "ACL DRYRUN alice psubscribe ch*",
            "ACL DRYRUN alice psubscribe c*",
            "ACL DRYRUN nosuch get x",
            "ACL DRYRUN alice nosuchcmd",
            "ACL DRYRUN alice get",
            "ACL DRYRUN alice config get maxmemory",
            "ACL DRYRUN alice config nosuch",
            "ACL DRYRUN dave set r1 v",
            "ACL DRYRUN dave get r1",
            "ACL DRYRUN dave get w1",
            "ACL DRYRUN dave set w1 v",
            "ACL DRYRUN dave set rw1 v",
            "ACL DRYRUN dave copy r1 w1",
            "ACL DRYRUN dave copy w1 r1",
            "ACL DRYRUN dave lmove r1 w1 left right",
            "ACL DRYRUN erin get x",
            "ACL DRYRUN erin set sel1 v",
            "ACL DRYRUN erin set x v",
            "ACL DRYRUN erin hget h1 f",
            "ACL DRYRUN erin hget x f",
            "ACL DRYRUN frank get k",
            "ACL DRYRUN frank del k",
            "ACL DRYRUN frank debug object k",
            "ACL DRYRUN carol flushall",
            "ACL DRYRUN carol keys *",
            "ACL DRYRUN default flushall",
            "ACL DRYRUN bob get k1",
            "ACL DRYRUN bob mget k1 x k2",
            "ACL DRYRUN bob mget x y",
        ]),
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    compare_both(&refs);
}

/// A user's commands from a client, inside MULTI (queued, and again at EXEC after the rules
/// change), and from a Lua script; each refusal's error text; then ACL LOG's entries.
#[test]
fn permissions_match_redis() {
    let cases: &[&[&str]] = &[&[
        "a:ACL SETUSER alice on >pw ~app:* &ch* +@read +@write -flushall +multi +exec +discard +subscribe +psubscribe +publish +eval +evalsha +script|load +acl|whoami",
        "b:AUTH alice wrong",
        "b:AUTH alice pw",
        "b:ACL WHOAMI",
        "b:GET app:1",
        "b:GET x",
        "b:SET x 1",
        "b:MSET app:1 a x b",
        "b:MSET app:1 a app:2 b",
        "b:FLUSHALL",
        "b:CONFIG GET maxmemory",
        "b:PUBLISH ch1 hi",
        "b:PUBLISH other hi",
        "b:SORT app:l BY app:w_* GET #",
        "b:SORT app:l GET app:*",
        "b:SORT app:l BY nosort",
        "b:MULTI",
        "b:GET x",
        "b:GET app:1",
        "b:EXEC",
        "b:MULTI",
        "b:GET app:1",
        "b:SET app:2 v",
        "a:ACL SETUSER alice -set",
        "b:EXEC",
        "b:EVAL \"return redis.call('get','x')\" 0",
        "b:EVAL \"return redis.pcall('get','x')\" 0",
        "b:EVAL \"return redis.call('get','app:1')\" 0",
        "b:EVAL \"return redis.call('flushall')\" 0",
        "b:EVAL \"return redis.call('publish','nope','x')\" 0",
        "b:AUTH nosuch x",
        "b:AUTH default x",
        "b:HELLO 3 AUTH alice wrong",
        "b:HELLO 2 AUTH alice pw",
        "a:ACL SETUSER alice off",
        "c:AUTH alice pw",
        "b:ACL WHOAMI",
        "a:ACL SETUSER alice on",
        "c:AUTH alice pw",
        "c:SUBSCRIBE ch1",
        "c:SUBSCRIBE other",
        "c:PSUBSCRIBE ch*",
        "c:PSUBSCRIBE c*",
    ]];
    let logs = scenarios(&[], cases);
    assert!(
        logs[0].iter().any(|l| l.contains("NOPERM")),
        "{:?}",
        logs[0]
    );
    // ACL LOG: the fields that do not depend on the clock or the connection.
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut entries = Vec::new();
    for server in [&r, &g] {
        let mut lines: Vec<&str> = cases[0].to_vec();
        lines.retain(|l| !l.starts_with("c:SUBSCRIBE") && !l.starts_with("c:PSUBSCRIBE"));
        run_scenario(server, &lines);
        let mut c = server.raw();
        entries.push(log_fields(&c.cmd_str("ACL LOG 100")));
    }
    assert!(entries[1].len() >= 10, "{:?}", entries[1]);
    assert_eq!(entries[1], entries[0]);
}

/// ACL LOG's entries as (count, reason, context, object, username).
fn log_fields(reply: &[u8]) -> Vec<[String; 5]> {
    let text = String::from_utf8_lossy(reply).into_owned();
    // Without the bulk headers: each field name is followed by its value.
    let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.starts_with('$')).collect();
    let mut out = Vec::new();
    for i in 0..lines.len() {
        if lines[i] == "count" && i + 9 < lines.len() {
            let field = |k: usize| lines[i + k].trim_start_matches(':').to_string();
            out.push([field(1), field(3), field(5), field(7), field(9)]);
        }
    }
    out
}

/// A script of every engine runs with its caller's user: a key it may not touch is refused
/// inside the script, the key stays as it was, and ACL LOG records it in the `lua` context.
#[test]
fn scripts_of_every_engine_are_checked() {
    let g = goblin(&[]);
    let mut admin = g.raw();
    admin.cmd_str("ACL SETUSER u on >pw ~ok:* +@all");
    admin.cmd_str("SET secret s");
    let scripts: &[(&str, &str)] = &[
        ("EVAL", "return redis.call('SET', 'secret', 'x')"),
        ("LUAU.EVAL", "return redis.call('SET', 'secret', 'x')"),
        ("QUICKJS.EVAL", "return redis.call('SET', 'secret', 'x')"),
        ("WREN.EVAL", "return Redis.call(\"SET\", \"secret\", \"x\")"),
        ("UPYTHON.EVAL", "return redis.call('SET', 'secret', 'x')"),
        ("TCL.EVAL", "redis call SET secret x"),
    ];
    let mut c = g.raw();
    assert_eq!(c.cmd_str("AUTH u pw"), b"+OK\r\n");
    for (cmd, body) in scripts {
        let reply = c.cmd(&[cmd.as_bytes(), body.as_bytes(), b"0"]);
        let text = show(&reply);
        assert!(
            text.starts_with('-')
                && text.contains("The user executing the script can't access at least one of the keys mentioned in the command arguments"),
            "{cmd}: {text}"
        );
        let ok = c.cmd(&[
            cmd.as_bytes(),
            body.replace("secret", "ok:1").as_bytes(),
            b"0",
        ]);
        assert!(!show(&ok).starts_with('-'), "{cmd}: {}", show(&ok));
    }
    assert_eq!(admin.cmd_str("GET secret"), b"$1\r\ns\r\n");
    let log = log_fields(&admin.cmd_str("ACL LOG"));
    assert_eq!(
        log,
        vec![[
            "6".to_string(),
            "key".into(),
            "lua".into(),
            "secret".into(),
            "u".into()
        ]]
    );
}

/// `requirepass`, AUTH and HELLO, RESET, and the connections of users that change or go.
#[test]
fn authentication_and_connections_match_redis() {
    let cases: &[&[&str]] = &[
        &[
            "a:AUTH x",
            "a:AUTH default x",
            "a:CONFIG SET requirepass secret",
            "b:PING",
            "b:AUTH wrong",
            "b:AUTH secret",
            "b:ACL WHOAMI",
            "c:HELLO 3",
            "c:HELLO 3 AUTH default wrong",
            "c:HELLO 3 AUTH default secret",
            "a:ACL GETUSER default",
            "a:ACL SETUSER default nopass",
            "a:CONFIG GET requirepass",
            "d:PING",
            "a:CONFIG SET requirepass \"\"",
            "a:ACL GETUSER default",
        ],
        &[
            "a:ACL SETUSER u on >pw +@all ~*",
            "b:AUTH u pw",
            "b:ACL WHOAMI",
            "b:RESET",
            "b:ACL WHOAMI",
            "b:AUTH u pw",
            "a:CLIENT KILL USER nosuch",
            "a:CLIENT KILL USER u",
            "b:quiet",
        ],
        &[
            "a:ACL SETUSER u on >pw +@all ~*",
            "b:AUTH u pw",
            "a:ACL DELUSER u",
            "b:quiet",
        ],
        &[
            "a:ACL SETUSER u on >pw +@all ~* resetchannels &news.*",
            "b:AUTH u pw",
            "b:SUBSCRIBE news.1",
            "a:ACL SETUSER u &news.1",
            "a:PUBLISH news.1 still",
            "b:<",
            "a:ACL SETUSER u resetchannels &other",
            "b:quiet",
        ],
    ];
    scenarios(&[], cases);
}

/// ACL SAVE writes what ACL LOAD reads, a file with errors changes nothing (Redis's messages), and
/// users come from `user` config lines or `aclfile` at start-up, never both.
#[test]
fn acl_files_and_config_users() {
    let dir = scratch_dir("acl-files");
    let file = dir.join("users.acl");
    std::fs::write(&file, "").unwrap();
    let path = file.to_str().unwrap();
    let g = goblin(&["--aclfile", path]);
    let mut c = g.raw();
    for l in USERS {
        assert_eq!(c.cmd_str(l), b"+OK\r\n");
    }
    let listed = c.cmd_str("ACL LIST");
    assert_eq!(c.cmd_str("ACL SAVE"), b"+OK\r\n");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.starts_with("user alice on #"), "{saved}");
    assert_eq!(saved.lines().count(), USERS.len() + 1);
    assert_eq!(c.cmd_str("ACL DELUSER alice bob"), b":2\r\n");
    let mut d = g.raw();
    assert_eq!(d.cmd_str("ACL LOAD"), b"+OK\r\n");
    assert_eq!(d.cmd_str("ACL LIST"), listed);
    // Redis's own server loads the same file to the same users.
    let r = redis(&["--aclfile", path]);
    let mut rc = r.raw();
    assert_eq!(rc.cmd_str("ACL LIST"), listed);
    // A bad file: every error, nothing changed; the same text as Redis's.
    std::fs::write(
        &file,
        "user a on +nosuch\n# comment\nuser b on ~* ~x\nuser a\nuser c (+get\nnotuser x\nuser \"q\" on\n",
    )
    .unwrap();
    let (want, got) = (rc.cmd_str("ACL LOAD"), d.cmd_str("ACL LOAD"));
    assert!(
        show(&want).contains("no change to the previously active ACL rules"),
        "{}",
        show(&want)
    );
    assert_eq!(show(&got), show(&want));
    assert_eq!(d.cmd_str("ACL LIST"), listed);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(show(&d.cmd_str("ACL LOAD")), show(&rc.cmd_str("ACL LOAD")));
    drop(r);
    // Users from config lines, checked as Redis checks them.
    let conf = dir.join("users.conf");
    std::fs::write(
        &conf,
        "user worker on >s ~q:* +@list\nuser default on nopass ~* &* +@all -flushall\n",
    )
    .unwrap();
    let g2 = goblin(&[conf.to_str().unwrap()]);
    let mut c2 = g2.raw();
    assert_eq!(
        c2.cmd_str("ACL LIST"),
        redis(&[conf.to_str().unwrap()]).raw().cmd_str("ACL LIST")
    );
    drop(g2);
    std::fs::write(&conf, "user worker on ~* ~x\n").unwrap();
    let out = std::process::Command::new(goblin_bin())
        .arg(&conf)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("Error in user declaration"), "{err}");
    std::fs::write(&conf, format!("user worker on ~*\naclfile {path}\n")).unwrap();
    let out = std::process::Command::new(goblin_bin())
        .arg(&conf)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        log.contains("please define either an ACL file or declare users directly"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// ACL CAT of every category names the same commands as Redis's, among the commands both have
/// (Redis lists them in its dict's order); ours that Redis lacks are in the categories their
/// pages document (the scripting engines' commands in @scripting, GOBLIN.CAD in @write @string).
#[test]
fn acl_cat_agrees_with_redis() {
    let (r, g) = (redis(&[]), goblin(&[]));
    let (mut rc, mut gc) = (r.raw(), g.raw());
    let names = |c: &mut Raw, line: &str| -> std::collections::BTreeSet<String> {
        String::from_utf8_lossy(&c.cmd_str(line))
            .split("\r\n")
            .filter(|l| !l.is_empty() && !l.starts_with(['*', '$']))
            .map(String::from)
            .collect()
    };
    assert_eq!(names(&mut gc, "ACL CAT"), names(&mut rc, "ACL CAT"));
    // The commands and subcommands both servers have: every one is in some category (@fast or
    // @slow at least).
    let cats = names(&mut rc, "ACL CAT");
    let all = |c: &mut Raw| -> std::collections::BTreeSet<String> {
        cats.iter()
            .flat_map(|cat| names(c, &format!("ACL CAT {cat}")))
            .collect()
    };
    let (redis_all, goblin_all) = (all(&mut rc), all(&mut gc));
    for cat in &cats {
        let line = format!("ACL CAT {cat}");
        let (want, got) = (names(&mut rc, &line), names(&mut gc, &line));
        let ours: std::collections::BTreeSet<_> = got.intersection(&redis_all).cloned().collect();
        let theirs: std::collections::BTreeSet<_> =
            want.intersection(&goblin_all).cloned().collect();
        assert_eq!(
            ours.difference(&theirs).collect::<Vec<_>>(),
            theirs.difference(&ours).collect::<Vec<_>>(),
            "@{cat}: only ours, only Redis's"
        );
    }
    let scripting = names(&mut gc, "ACL CAT scripting");
    for cmd in [
        "luau.eval",
        "quickjs.evalsha",
        "tcl.eval_ro",
        "wren.script|load",
        "upython.evalsha",
    ] {
        assert!(
            scripting.contains(cmd),
            "{cmd} not in @scripting: {scripting:?}"
        );
    }
    for cat in ["write", "string", "fast"] {
        assert!(
            names(&mut gc, &format!("ACL CAT {cat}")).contains("goblin.cad"),
            "@{cat}"
        );
    }
}

/// Functions run with the caller's user too, and `acl-pubsub-default` decides a new user's
/// channels.
#[test]
fn functions_and_pubsub_default_match_redis() {
    let cases: &[&[&str]] = &[&[
        "a:FUNCTION LOAD \"#!lua name=lib\nredis.register_function('setit', function(keys, args) return redis.call('set', keys[1], 'v') end)\"",
        "a:ACL SETUSER u on >pw ~ok* +@all",
        "b:AUTH u pw",
        "b:FCALL setit 1 ok1",
        "b:FCALL setit 1 no1",
        "a:GET no1",
        "a:CONFIG SET acl-pubsub-default allchannels",
        "a:ACL SETUSER p1",
        "a:ACL GETUSER p1",
        "a:ACL SETUSER p1 reset",
        "a:ACL GETUSER p1",
        "a:ACL SETUSER p2 (+get)",
        "a:ACL LIST",
        "a:CONFIG SET acl-pubsub-default resetchannels",
        "a:ACL SETUSER p3",
        "a:ACL GETUSER p3",
        "a:~CONFIG GET acl*",
        "a:CONFIG SET acllog-max-len 1",
        "b:GET no",
        "b:SET no x",
        "a:ACL LOG",
    ]];
    // ACL LOG's times and client lines differ: compare its length only.
    let logs = scenarios(&[], &cases[..0]);
    assert!(logs.is_empty());
    let mut without_log = cases[0].to_vec();
    without_log.pop();
    without_log.push("a:#ACL LOG");
    scenarios(&[], &[&without_log]);
    let g = goblin(&[]);
    run_scenario(&g, &without_log);
    assert_eq!(log_fields(&g.raw().cmd_str("ACL LOG")).len(), 1);
}

/// INFO's `acl_access_denied_*` (Redis 7.2's fields, which 7.0.15 lacks, so no comparison): one
/// per refusal, by reason, failed AUTHs included and repeated ones too (ACL LOG groups them);
/// CONFIG RESETSTAT keeps them, as Redis's does.
#[test]
fn access_denied_counters() {
    let g = goblin(&[]);
    let mut admin = g.raw();
    let mut u = g.raw();
    let counts = |c: &mut Raw| -> Vec<Option<i64>> {
        ["auth", "cmd", "key", "channel"]
            .iter()
            .map(|f| info_field(c, &format!("acl_access_denied_{f}")))
            .collect()
    };
    assert_eq!(counts(&mut admin), [Some(0); 4]);
    admin.cmd_str("ACL SETUSER u on >pw +get +publish ~k* &ch*");
    assert_eq!(
        show(&u.cmd_str("AUTH u wrong")),
        "-WRONGPASS invalid username-password pair or user is disabled.\\r\\n"
    );
    u.cmd_str("AUTH u wrong");
    assert_eq!(show(&u.cmd_str("AUTH u pw")), "+OK\\r\\n");
    assert!(u.cmd_str("SET k 1").starts_with(b"-NOPERM"));
    assert!(u.cmd_str("GET other").starts_with(b"-NOPERM"));
    assert!(u.cmd_str("GET other2").starts_with(b"-NOPERM"));
    assert!(u.cmd_str("PUBLISH news x").starts_with(b"-NOPERM"));
    assert_eq!(show(&u.cmd_str("GET k")), "$-1\\r\\n");
    assert_eq!(counts(&mut admin), [Some(2), Some(1), Some(2), Some(1)]);
    admin.cmd_str("CONFIG RESETSTAT");
    assert_eq!(counts(&mut admin), [Some(2), Some(1), Some(2), Some(1)]);
}
