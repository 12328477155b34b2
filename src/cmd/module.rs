//! MODULE (Redis's module.c commands). Goblin Core loads no Redis modules (they are built against
//! Redis's C module API): MODULE LIST is always empty, and MODULE LOAD, LOADEX and UNLOAD, once
//! `enable-module-command` allows them, fail as Redis does for a module it cannot load or does
//! not have.

use super::{
    Args, CmdResult, Command, Ctx, Guard, ADMIN, LOADING, NOSCRIPT, NO_ASYNC_LOADING, STALE,
};

const GROUP: &str = "server";

/// LOAD, LOADEX and UNLOAD are refused unless `enable-module-command` allows them, as in Redis 7.
static GUARD: Guard = Guard {
    command: "MODULE",
    directive: "enable-module-command",
    setting: |c| c.enable_module_command,
};

/// MODULE LIST
///
/// # Format
/// `MODULE LIST` — the modules loaded: none.
fn module_list(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.array(0);
    Ok(())
}

/// MODULE LOAD path [arg ...]
///
/// # Format
/// `MODULE LOAD path [arg ...]` — Redis's error for a module that cannot be loaded.
fn module_load(_ctx: &mut Ctx, args: Args) -> CmdResult {
    crate::warning!(
        "Module {} failed to load: Goblin Core does not load Redis modules",
        String::from_utf8_lossy(&args[2])
    );
    Err("ERR Error loading the extension. Please check the server logs.".into())
}

/// MODULE UNLOAD name
///
/// # Format
/// `MODULE UNLOAD name` — Redis's error for a module it does not have.
fn module_unload(_ctx: &mut Ctx, _args: Args) -> CmdResult {
    Err("ERR Error unloading module: no such module with that name".into())
}

const MODULE_HELP: &[&str] = &[
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
];

/// MODULE HELP
///
/// # Format
/// `MODULE HELP` — the subcommands.
fn module_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("MODULE", MODULE_HELP);
    Ok(())
}

const LOADING_FLAGS: u32 = ADMIN | NOSCRIPT | NO_ASYNC_LOADING;

const MODULE_SUBCOMMANDS: &[Command] = &[
    Command::new("module|list", module_list, 2, ADMIN | NOSCRIPT)
        .tips(&["nondeterministic_output_order"])
        .group(GROUP)
        .doc(
            "List all modules loaded by the server",
            "4.0.0",
            "O(N) where N is the number of loaded modules.",
            "",
        ),
    Command::new("module|load", module_load, -3, LOADING_FLAGS)
        .guarded(&GUARD)
        .group(GROUP)
        .doc("Load a module", "4.0.0", "O(1)", "path [arg [arg ...]]"),
    Command::new("module|loadex", module_load, -3, LOADING_FLAGS)
        .guarded(&GUARD)
        .group(GROUP)
        .doc(
            "Load a module with extended parameters",
            "7.0.0",
            "O(1)",
            "path [CONFIG configs:(name value) [CONFIG configs:(name value) ...]] [ARGS args:(arg) [args:(arg) ...]]",
        ),
    Command::new("module|unload", module_unload, 3, LOADING_FLAGS)
        .guarded(&GUARD)
        .group(GROUP)
        .doc("Unload a module", "4.0.0", "O(1)", "name"),
    Command::new("module|help", module_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "5.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[Command::container("module", -2, MODULE_SUBCOMMANDS)
    .group(GROUP)
    .doc(
        "A container for module commands",
        "4.0.0",
        "Depends on subcommand.",
        "",
    )];
