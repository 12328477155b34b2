//! Function commands (Redis 7's functions.c): the FUNCTION container (LOAD, LIST, DELETE, FLUSH,
//! DUMP, RESTORE, STATS, KILL, HELP), FCALL and FCALL_RO, for every engine: a library's shebang
//! picks its engine (`#!lua`, `#!luau`, `#!js`, ...). The registry is `script::function`; a
//! function runs through its engine's `Engine::call_function` with the same `Run` as EVAL.

use super::keyspec::{ACCESS, RO, RW, UPDATE};
use std::time::Instant;

use super::parse::is;
use super::{
    err, Args, CmdResult, Command, Ctx, ALLOW_BUSY, DENYOOM, FUNCTION_CALL, LOADING, MAY_REPLICATE,
    MOVABLEKEYS, NOSCRIPT, NO_MANDATORY_KEYS, READONLY, SKIP_MONITOR, STALE, WRITE,
};
use crate::persist::rdb;
use crate::script::function::engine_label;
use crate::script::{EngineId, Flags, Run, Running, Scripting};

const GROUP: &str = "scripting";

/// Redis's reply to a subcommand given too many arguments.
fn syntax_error(sub: &[u8]) -> super::CmdError {
    err(format!(
        "unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
        String::from_utf8_lossy(sub)
    ))
}

/// FUNCTION LOAD [REPLACE] function-code
///
/// # Format
/// `FUNCTION LOAD [REPLACE] code` — the library's name; its engine ran the code once, registering
/// its functions.
fn function_load(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut replace = false;
    for opt in args.iter().take(args.len() - 1).skip(2) {
        if !is(opt, "replace") {
            return Err(err(format!(
                "Unknown option given: {}",
                String::from_utf8_lossy(opt)
            )));
        }
        replace = true;
    }
    let code = &args[args.len() - 1];
    let name = Scripting::of_mut(ctx.srv)
        .load_library(code, replace)
        .map_err(err)?;
    ctx.srv.dirty += 1;
    ctx.out.bulk(name.as_bytes());
    Ok(())
}

/// FUNCTION LIST [LIBRARYNAME library-name-pattern] [WITHCODE]
///
/// # Format
/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]` — one map per library (in name order):
/// `library_name`, `engine`, `functions` (maps of `name`, `description`, `flags`), and
/// `library_code` with WITHCODE.
fn function_list(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (mut with_code, mut pattern) = (false, None);
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        if !with_code && is(a, "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(a, "libraryname") {
            if i + 1 >= args.len() {
                return Err("ERR library name argument was not given".into());
            }
            i += 1;
            pattern = Some(&args[i]);
        } else {
            return Err(err(format!(
                "Unknown argument {}",
                String::from_utf8_lossy(a)
            )));
        }
        i += 1;
    }
    let libs: Vec<_> = Scripting::of(ctx.srv)
        .functions
        .iter()
        .filter(|l| {
            // Redis 7.0 matches the pattern ignoring case.
            pattern.is_none_or(|p| crate::store::glob::matches(p, l.name.as_bytes(), true))
        })
        .collect();
    let out = &mut *ctx.out;
    out.array(libs.len());
    for lib in libs {
        out.map(if with_code { 4 } else { 3 });
        out.bulk_str("library_name");
        out.bulk_str(&lib.name);
        out.bulk_str("engine");
        out.bulk_str(&engine_label(lib.engine));
        out.bulk_str("functions");
        out.array(lib.functions.len());
        for f in &lib.functions {
            out.map(3);
            out.bulk_str("name");
            out.bulk_str(&f.name);
            out.bulk_str("description");
            match &f.description {
                Some(d) => out.bulk(d),
                None => out.null(),
            }
            out.bulk_str("flags");
            let names: Vec<_> = Flags::NAMES
                .iter()
                .filter(|(bit, _)| f.flags.has(*bit))
                .collect();
            out.set(names.len());
            for (_, n) in names {
                out.simple(n);
            }
        }
        if with_code {
            out.bulk_str("library_code");
            out.bulk(&lib.code);
        }
    }
    Ok(())
}

/// FUNCTION DELETE library-name
///
/// # Format
/// `FUNCTION DELETE library-name` — `+OK`; the library and its functions are gone.
fn function_delete(ctx: &mut Ctx, args: Args) -> CmdResult {
    if !Scripting::of_mut(ctx.srv).delete_library(&args[2]) {
        return Err("ERR Library not found".into());
    }
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// FUNCTION FLUSH [ASYNC | SYNC]
///
/// # Format
/// `FUNCTION FLUSH [ASYNC|SYNC]` — `+OK`; every library is deleted.
fn function_flush(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 {
        return Err(syntax_error(&args[1]));
    }
    if args.len() == 3 && !is(&args[2], "sync") && !is(&args[2], "async") {
        return Err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option".into());
    }
    Scripting::of_mut(ctx.srv).flush_libraries();
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// FUNCTION DUMP
///
/// # Format
/// `FUNCTION DUMP` — every library as Redis's payload: per library the RDB function opcode and its
/// code, then the RDB version and a CRC64, as DUMP's.
fn function_dump(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let opts = ctx.srv.persist.save_opts(&ctx.srv.config);
    let libs = &Scripting::of(ctx.srv).functions;
    let payload = rdb::functions_payload(libs.iter().map(|l| &l.code[..]), opts);
    ctx.out.bulk(&payload);
    Ok(())
}

/// FUNCTION RESTORE serialized-value [FLUSH | APPEND | REPLACE]
///
/// # Format
/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]` — `+OK`; the payload's libraries are loaded
/// (all or none): added (APPEND, the default; a library of the same name is an error), replacing
/// those of the same name (REPLACE), or replacing every library (FLUSH).
fn function_restore(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 4 {
        return Err(syntax_error(&args[1]));
    }
    let policy =
        match args.get(3) {
            None => "append",
            Some(p) if is(p, "append") => "append",
            Some(p) if is(p, "replace") => "replace",
            Some(p) if is(p, "flush") => "flush",
            Some(_) => return Err(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
                    .into(),
            ),
        };
    let codes = rdb::restore_functions(&args[2]).map_err(err)?;
    let scripting = Scripting::of_mut(ctx.srv);
    let set = scripting.compile_libraries(&codes).map_err(err)?;
    if policy == "flush" {
        scripting.swap_libraries(set);
    } else {
        scripting
            .join_libraries(set, policy == "replace")
            .map_err(err)?;
    }
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// FUNCTION STATS
///
/// # Format
/// `FUNCTION STATS` — a map: `running_script` (nil, or the running function's `name`, `command`
/// and `duration_ms`) and `engines` (every engine with its `libraries_count` and
/// `functions_count`). While a script (EVAL) runs: BUSY.
fn function_stats(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let running = &ctx.srv.script_running;
    if running.active && running.function.is_none() {
        return Err(crate::script::BUSY_ERROR.into());
    }
    let out = &mut *ctx.out;
    out.map(2);
    out.bulk_str("running_script");
    match (&running.function, running.active) {
        (Some(name), true) => {
            out.map(3);
            out.bulk_str("name");
            out.bulk_str(name);
            out.bulk_str("command");
            out.bulks(running.command.iter().map(|a| &a[..]));
            out.bulk_str("duration_ms");
            let ms = running.since.map_or(0, |s| s.elapsed().as_millis());
            out.int(ms as i64);
        }
        _ => out.null(),
    }
    out.bulk_str("engines");
    out.map(EngineId::ALL.len());
    for e in EngineId::ALL {
        let (libs, funcs) = Scripting::of(ctx.srv).functions.counts(e);
        out.bulk_str(&engine_label(e));
        out.map(2);
        out.bulk_str("libraries_count");
        out.int(libs as i64);
        out.bulk_str("functions_count");
        out.int(funcs as i64);
    }
    Ok(())
}

/// FUNCTION KILL
///
/// # Format
/// `FUNCTION KILL` — stops the running function if it has not written (`UNKILLABLE` once it has);
/// `NOTBUSY` when none runs; BUSY when what runs is a script (SCRIPT KILL's).
fn function_kill(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.srv.script_running.kill(true, "FUNCTION KILL")?;
    ctx.out.ok();
    Ok(())
}

const FUNCTION_HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

/// FUNCTION HELP
///
/// # Format
/// `FUNCTION HELP` — the subcommands.
fn function_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("FUNCTION", FUNCTION_HELP);
    Ok(())
}

/// FCALL and FCALL_RO (Redis's `fcallCommandGeneric`).
fn fcall_generic(ctx: &mut Ctx, args: Args, ro: bool) -> CmdResult {
    let Some(found) = Scripting::of(ctx.srv).find_function(&args[1]) else {
        return Err("ERR Function not found".into());
    };
    let n = crate::util::parse_i64(&args[2]).ok_or("ERR Bad number of keys provided")?;
    if n > args.len() as i64 - 3 {
        return Err("ERR Number of keys can't be greater than number of args".into());
    }
    if n < 0 {
        return Err("ERR Number of keys can't be negative".into());
    }
    crate::script::check_declared(ctx.srv, found.flags, ro)?;
    let all = args.tail(3);
    let (keys, argv) = (all.head(n as usize), all.tail(n as usize));
    ctx.srv.script_running = Running {
        active: true,
        client: ctx.id,
        engine: Some(found.engine.title()),
        function: Some(found.name.into()),
        command: args.iter().map(|a| a.to_vec()).collect(),
        since: Some(Instant::now()),
        ..Default::default()
    };
    let mut engine = Scripting::of_mut(ctx.srv).take(found.engine);
    let mut run = Run::new(ctx, [b'0'; 40], found.flags, ro);
    engine.call_function(&mut run, found.lib, found.index, keys, argv);
    drop(run);
    Scripting::of_mut(ctx.srv).put(engine);
    ctx.srv.script_running.end();
    Ok(())
}

/// FCALL function numkeys [key ...] [arg ...]
///
/// # Format
/// `FCALL function numkeys [key ...] [arg ...]` — the function's reply.
fn fcall(ctx: &mut Ctx, args: Args) -> CmdResult {
    fcall_generic(ctx, args, false)
}

/// FCALL_RO function numkeys [key ...] [arg ...]
///
/// # Format
/// `FCALL_RO function numkeys [key ...] [arg ...]` — the reply of a `no-writes` function; writes
/// inside it are refused.
fn fcall_ro(ctx: &mut Ctx, args: Args) -> CmdResult {
    fcall_generic(ctx, args, true)
}

/// The keys of an FCALL line: `numkeys` at position 2, then the keys.
fn fcall_keys(args: Args) -> Vec<(usize, u32)> {
    super::keyspec::keys_after_numkeys(args, 2, None)
}

const FCALL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS;

const SUBCOMMANDS: &[Command] = &[
    Command::new(
        "function|load",
        function_load,
        -3,
        WRITE | DENYOOM | NOSCRIPT,
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .group(GROUP)
    .doc(
        "Create a function with the given arguments (name, code, description)",
        "7.0.0",
        "O(1) (considering compilation time is redundant)",
        "[REPLACE] function-code",
    ),
    Command::new("function|list", function_list, -2, NOSCRIPT)
        .tips(&["nondeterministic_output_order"])
        .group(GROUP)
        .doc(
            "List information about all the functions",
            "7.0.0",
            "O(N) where N is the number of functions",
            "[LIBRARYNAME library-name-pattern] [WITHCODE]",
        ),
    Command::new("function|delete", function_delete, 3, WRITE | NOSCRIPT)
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .group(GROUP)
        .doc("Delete a function by name", "7.0.0", "O(1)", "library-name"),
    Command::new("function|flush", function_flush, -2, WRITE | NOSCRIPT)
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .group(GROUP)
        .doc(
            "Deleting all functions",
            "7.0.0",
            "O(N) where N is the number of functions deleted",
            "[async:(ASYNC | SYNC)]",
        ),
    Command::new("function|dump", function_dump, 2, NOSCRIPT)
        .group(GROUP)
        .doc(
            "Dump all functions into a serialized binary payload",
            "7.0.0",
            "O(N) where N is the number of functions",
            "",
        ),
    Command::new(
        "function|restore",
        function_restore,
        -3,
        WRITE | DENYOOM | NOSCRIPT,
    )
    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
    .group(GROUP)
    .doc(
        "Restore all the functions on the given payload",
        "7.0.0",
        "O(N) where N is the number of functions on the payload",
        "serialized-value [policy:(FLUSH | APPEND | REPLACE)]",
    ),
    Command::new("function|stats", function_stats, 2, NOSCRIPT | ALLOW_BUSY)
        .tips(&[
            "nondeterministic_output",
            "request_policy:all_shards",
            "response_policy:special",
        ])
        .group(GROUP)
        .doc(
            "Return information about the function currently running (name, description, duration)",
            "7.0.0",
            "O(1)",
            "",
        ),
    Command::new("function|kill", function_kill, 2, NOSCRIPT | ALLOW_BUSY)
        .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
        .group(GROUP)
        .doc(
            "Kill the function currently in execution.",
            "7.0.0",
            "O(1)",
            "",
        ),
    Command::new("function|help", function_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "7.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[
    Command::new(
        "fcall",
        fcall,
        -3,
        FCALL_FLAGS | MAY_REPLICATE | FUNCTION_CALL,
    )
    .key_num(2, RW | ACCESS | UPDATE)
    .key_notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")
    .key_finder(fcall_keys)
    .group(GROUP)
    .doc(
        "Invoke a function",
        "7.0.0",
        "Depends on the function that is executed.",
        "function numkeys:integer [key [key ...]] [arg [arg ...]]",
    ),
    Command::new(
        "fcall_ro",
        fcall_ro,
        -3,
        FCALL_FLAGS | READONLY | FUNCTION_CALL,
    )
    .key_num(2, RO | ACCESS)
    .key_notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")
    .key_finder(fcall_keys)
    .group(GROUP)
    .doc(
        "Invoke a read-only function",
        "7.0.0",
        "Depends on the function that is executed.",
        "function numkeys:integer [key [key ...]] [arg [arg ...]]",
    ),
    Command::container("function", -2, SUBCOMMANDS)
        .group(GROUP)
        .doc(
            "A container for function commands",
            "7.0.0",
            "Depends on subcommand.",
            "",
        ),
];
