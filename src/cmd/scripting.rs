//! Scripting commands (Redis's eval.c): EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and the SCRIPT container,
//! for every engine. The engine is chosen by the command's prefix (`EVAL` runs Lua, `LUAU.EVAL` Luau
//! ...; see `script::EngineId`), so one handler per command serves all engines; the work is in
//! `src/script/`.

use super::keyspec::{ACCESS, RO, RW, UPDATE};
use super::parse::{int, is, text};
use super::{
    Args, CmdError, CmdResult, Command, Ctx, ALLOW_BUSY, LOADING, MAY_REPLICATE, MOVABLEKEYS,
    NOSCRIPT, NO_MANDATORY_KEYS, READONLY, SCRIPT_BODY, SCRIPT_SHA, SKIP_MONITOR, STALE,
};
use crate::script::cache::{parse_sha, sha1_hex, Sha};
use crate::script::{Engine, EngineId, Run, Scripting};

const GROUP: &str = "scripting";

/// Splits `numkeys key... arg...` (from `args[2]`) into keys and arguments, with Redis's errors.
fn keys_and_args<'a>(args: Args<'a>) -> Result<(Args<'a>, Args<'a>), CmdError> {
    let n = int(&args[2])?;
    if n < 0 {
        return Err("ERR Number of keys can't be negative".into());
    }
    if n as usize > args.len() - 3 {
        return Err("ERR Number of keys can't be greater than number of args".into());
    }
    let all = args.tail(3);
    Ok((all.head(n as usize), all.tail(n as usize)))
}

/// EVAL, EVAL_RO, EVALSHA and EVALSHA_RO for any engine (Redis's `evalGenericCommand`).
fn eval_generic(ctx: &mut Ctx, args: Args, by_sha: bool) -> CmdResult {
    let name = &args[0];
    let id = EngineId::of_command(name);
    let ro = name.len() >= 3 && name[name.len() - 3..].eq_ignore_ascii_case(b"_ro");
    let (keys, argv) = keys_and_args(args)?;
    let mut engine = Scripting::of_mut(ctx.srv).take(id);
    let result = run_script(ctx, &mut engine, args, by_sha, ro, keys, argv);
    Scripting::of_mut(ctx.srv).put(engine);
    result
}

fn run_script(
    ctx: &mut Ctx,
    engine: &mut Box<dyn Engine>,
    args: Args,
    by_sha: bool,
    ro: bool,
    keys: Args,
    argv: Args,
) -> CmdResult {
    let (sha, body): (Sha, Option<&[u8]>) = if by_sha {
        match parse_sha(&args[1]) {
            Some(sha) => (sha, None),
            None => return Err(NOSCRIPT_ERROR.into()),
        }
    } else {
        (sha1_hex(&args[1]), Some(&args[1][..]))
    };
    if let Some(body) = body {
        engine.load(&sha, body, false).map_err(CmdError::from)?;
    }
    let Some(flags) = engine.flags(&sha) else {
        return Err(NOSCRIPT_ERROR.into());
    };
    crate::script::check_declared(ctx.srv, flags, ro)?;
    ctx.srv.script_running.begin(ctx.id, engine.id().title());
    let mut run = Run::new(ctx, sha, flags, ro);
    engine.run(&mut run, &sha, keys, argv);
    drop(run);
    ctx.srv.script_running.end();
    Ok(())
}

const NOSCRIPT_ERROR: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// EVAL script numkeys [key ...] [arg ...]
///
/// # Format
/// `EVAL script numkeys [key ...] [arg ...]` — the script's reply. `EVAL_RO` refuses writes.
fn eval(ctx: &mut Ctx, args: Args) -> CmdResult {
    eval_generic(ctx, args, false)
}

/// EVALSHA sha1 numkeys [key ...] [arg ...]
///
/// # Format
/// `EVALSHA sha1 numkeys [key ...] [arg ...]` — runs a cached script; `NOSCRIPT` if it is not
/// cached. `EVALSHA_RO` refuses writes.
fn evalsha(ctx: &mut Ctx, args: Args) -> CmdResult {
    eval_generic(ctx, args, true)
}

/// SCRIPT LOAD script
///
/// # Format
/// `SCRIPT LOAD script` — compiles and caches the script (until SCRIPT FLUSH); replies its SHA1.
fn script_load(ctx: &mut Ctx, args: Args) -> CmdResult {
    let id = EngineId::of_command(&args[0]);
    let body = &args[2];
    let sha = sha1_hex(body);
    let mut engine = Scripting::of_mut(ctx.srv).take(id);
    let loaded = engine.load(&sha, body, true).map_err(CmdError::from);
    Scripting::of_mut(ctx.srv).put(engine);
    loaded?;
    ctx.out.bulk(&sha);
    Ok(())
}

/// SCRIPT EXISTS sha1 [sha1 ...]
///
/// # Format
/// `SCRIPT EXISTS sha1 [sha1 ...]` — an array of 1/0, one per digest.
fn script_exists(ctx: &mut Ctx, args: Args) -> CmdResult {
    let id = EngineId::of_command(&args[0]);
    ctx.out.array(args.len() - 2);
    for a in args.tail(2).iter() {
        let found = parse_sha(a).is_some_and(|sha| {
            Scripting::of(ctx.srv)
                .engine(id)
                .is_some_and(|e| e.flags(&sha).is_some())
        });
        ctx.out.int(found as i64);
    }
    Ok(())
}

/// SCRIPT FLUSH [ASYNC | SYNC]
///
/// # Format
/// `SCRIPT FLUSH [ASYNC|SYNC]` — `+OK`; the engine's script cache is emptied.
fn script_flush(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 || (args.len() == 3 && !is(&args[2], "sync") && !is(&args[2], "async")) {
        return Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option".into());
    }
    let id = EngineId::of_command(&args[0]);
    let mut engine = Scripting::of_mut(ctx.srv).take(id);
    engine.flush();
    Scripting::of_mut(ctx.srv).put(engine);
    ctx.out.ok();
    Ok(())
}

/// SCRIPT KILL
///
/// # Format
/// `SCRIPT KILL` — stops the running script if it has not written (`UNKILLABLE` once it has);
/// `NOTBUSY` when none runs.
fn script_kill(ctx: &mut Ctx, args: Args) -> CmdResult {
    let how = format!("{} KILL", text(&args[0]).to_ascii_uppercase());
    ctx.srv.script_running.kill(false, &how)?;
    ctx.out.ok();
    Ok(())
}

const SCRIPT_HELP: &[&str] = &[
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
];

/// SCRIPT HELP
///
/// # Format
/// `SCRIPT HELP` — the subcommands.
fn script_help(ctx: &mut Ctx, args: Args) -> CmdResult {
    let container = String::from_utf8_lossy(&args[0]).to_uppercase();
    ctx.out.help(&container, SCRIPT_HELP);
    Ok(())
}

/// The keys of an EVAL-family line: `numkeys` at position 2, then the keys.
fn eval_keys(args: Args) -> Vec<(usize, u32)> {
    super::keyspec::keys_after_numkeys(args, 2, None)
}

// The key specs' notes of EVAL and EVAL_RO (Redis gives EVALSHA and EVALSHA_RO none).
const WORST_RW: &str =
    "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE";
const WORST_RO: &str =
    "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS";

const EVAL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS;
/// EVAL and EVALSHA (not their _RO forms) may replicate: a monitor may not run them.
const EVAL_RW_FLAGS: u32 = EVAL_FLAGS | MAY_REPLICATE;

/// The `SCRIPT` subcommand rows of an engine whose commands start with `$p` (`""` for Lua,
/// `"luau."` for Luau); `$lang` names the language in the summaries.
macro_rules! script_subcommands {
    ($p:literal, $lang:literal) => {
        &[
            Command::new(concat!($p, "script|load"), script_load, 3, NOSCRIPT | STALE)
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .group(GROUP)
                .doc(
                    concat!("Load the specified ", $lang, " script into the script cache."),
                    "2.6.0",
                    "O(N) with N being the length in bytes of the script body.",
                    "script",
                ),
            Command::new(concat!($p, "script|exists"), script_exists, -3, NOSCRIPT)
                .tips(&["request_policy:all_shards", "response_policy:agg_logical_and"])
                .group(GROUP)
                .doc(
                    "Check existence of scripts in the script cache.",
                    "2.6.0",
                    "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
                    "sha1 [sha1 ...]",
                ),
            Command::new(concat!($p, "script|flush"), script_flush, -2, NOSCRIPT)
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .history(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
                .arg_since(&[("async", "6.2.0")])
                .group(GROUP)
                .doc(
                    "Remove all the scripts from the script cache.",
                    "2.6.0",
                    "O(N) with N being the number of scripts in cache",
                    "[async:(ASYNC | SYNC)]",
                ),
            Command::new(concat!($p, "script|kill"), script_kill, 2, NOSCRIPT | ALLOW_BUSY)
                .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
                .group(GROUP)
                .doc(
                    "Kill the script currently in execution.",
                    "2.6.0",
                    "O(1)",
                    "",
                ),
            Command::new(concat!($p, "script|help"), script_help, 2, LOADING | STALE)
                .group(GROUP)
                .doc("Show helpful text about the different subcommands", "5.0.0", "O(1)", ""),
        ]
    };
}

/// The EVAL family rows of an engine (see `script_subcommands!`), its SCRIPT container last.
macro_rules! eval_commands {
    ($p:literal, $lang:literal, $subs:expr) => {
        &[
            Command::new(concat!($p, "eval"), eval, -3, EVAL_RW_FLAGS | SCRIPT_BODY)
                .key_num(2, RW | ACCESS | UPDATE)
                .key_notes(WORST_RW)
                .key_finder(eval_keys)
                .group(GROUP)
                .doc(
                    concat!("Execute a ", $lang, " script server side"),
                    "2.6.0",
                    "Depends on the script that is executed.",
                    "script numkeys:integer [key [key ...]] [arg [arg ...]]",
                ),
            Command::new(
                concat!($p, "evalsha"),
                evalsha,
                -3,
                EVAL_RW_FLAGS | SCRIPT_SHA,
            )
            .key_num(2, RW | ACCESS | UPDATE)
            .key_finder(eval_keys)
            .group(GROUP)
            .doc(
                concat!("Execute a ", $lang, " script server side"),
                "2.6.0",
                "Depends on the script that is executed.",
                "sha1 numkeys:integer [key [key ...]] [arg [arg ...]]",
            ),
            Command::new(
                concat!($p, "eval_ro"),
                eval,
                -3,
                EVAL_FLAGS | READONLY | SCRIPT_BODY,
            )
            .key_num(2, RO | ACCESS)
            .key_notes(WORST_RO)
            .key_finder(eval_keys)
            .group(GROUP)
            .doc(
                concat!("Execute a read-only ", $lang, " script server side"),
                "7.0.0",
                "Depends on the script that is executed.",
                "script numkeys:integer [key [key ...]] [arg [arg ...]]",
            ),
            Command::new(
                concat!($p, "evalsha_ro"),
                evalsha,
                -3,
                EVAL_FLAGS | READONLY | SCRIPT_SHA,
            )
            .key_num(2, RO | ACCESS)
            .key_finder(eval_keys)
            .group(GROUP)
            .doc(
                concat!("Execute a read-only ", $lang, " script server side"),
                "7.0.0",
                "Depends on the script that is executed.",
                "sha1 numkeys:integer [key [key ...]] [arg [arg ...]]",
            ),
            Command::container(concat!($p, "script"), -2, $subs)
                .group(GROUP)
                .doc(
                    concat!("A container for ", $lang, " scripts management commands"),
                    "2.6.0",
                    "Depends on subcommand.",
                    "",
                ),
        ]
    };
}

/// Lua 5.1: Redis's own EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT.
pub const LUA_COMMANDS: &[Command] = eval_commands!("", "Lua", script_subcommands!("", "Lua"));
/// Luau: LUAU.EVAL, LUAU.EVALSHA, LUAU.EVAL_RO, LUAU.EVALSHA_RO and LUAU.SCRIPT (`script::luau`).
pub const LUAU_COMMANDS: &[Command] =
    eval_commands!("luau.", "Luau", script_subcommands!("luau.", "Luau"));

/// QuickJS: JavaScript scripts (QUICKJS.EVAL, QUICKJS.EVALSHA, QUICKJS.EVAL_RO,
/// QUICKJS.EVALSHA_RO and QUICKJS.SCRIPT).
pub const QUICKJS_COMMANDS: &[Command] = eval_commands!(
    "quickjs.",
    "JavaScript",
    script_subcommands!("quickjs.", "JavaScript")
);

/// Wren: WREN.EVAL, WREN.EVALSHA, WREN.EVAL_RO, WREN.EVALSHA_RO and WREN.SCRIPT (`script::wren`).
pub const WREN_COMMANDS: &[Command] =
    eval_commands!("wren.", "Wren", script_subcommands!("wren.", "Wren"));
/// MicroPython: Python scripts (UPYTHON.EVAL, UPYTHON.EVALSHA, UPYTHON.EVAL_RO,
/// UPYTHON.EVALSHA_RO and UPYTHON.SCRIPT; `script::upython`).
pub const UPYTHON_COMMANDS: &[Command] = eval_commands!(
    "upython.",
    "Python",
    script_subcommands!("upython.", "Python")
);
/// Jim Tcl: TCL.EVAL, TCL.EVALSHA, TCL.EVAL_RO, TCL.EVALSHA_RO and TCL.SCRIPT (`script::tcl`).
pub const TCL_COMMANDS: &[Command] =
    eval_commands!("tcl.", "Tcl", script_subcommands!("tcl.", "Tcl"));
