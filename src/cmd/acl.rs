//! The ACL family (Redis's acl.c `aclCommand`): SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI,
//! CAT, GENPASS, LOG, DRYRUN, LOAD, SAVE and HELP, over the users of `server::acl`.

use super::parse::{c_text, int, is, subcommand_syntax};
use super::{err, Args, CmdError, CmdResult, Command, Ctx, LOADING, NOSCRIPT, STALE};
use crate::server::acl::{
    self, category, load_file, merge_selectors, user_line, Denied, RuleError, User,
};
use crate::server::client::Client;

// The kernel's ACL categories, which rows of every family name as `super::acl::READ` etc.
pub use crate::server::table::acl::*;

const GROUP: &str = "server";
/// The `admin` command flag (the category of that name is `ADMIN` here).
const ADMIN_CMD: u32 = super::ADMIN;

/// `ACLStringSetUser`: applies `rules` to a copy of the user (or a new one), all or nothing;
/// the resulting user, or Redis's error text.
pub fn staged_user(ctx: &Ctx, name: &[u8], rules: &[&[u8]]) -> Result<User, String> {
    let merged = merge_selectors(rules).map_err(|i| {
        format!(
            "ERR Unmatched parenthesis in acl selector starting at '{}'.",
            c_text(rules[i])
        )
    })?;
    let t = &ctx.srv.table;
    let pubsub_all = ctx.srv.config.acl_pubsub_default == "allchannels";
    let mut u = match ctx.srv.acl.find(name) {
        Some(slot) => ctx.srv.acl.user(slot).clone(),
        None => User::new(name, t.rows.len(), pubsub_all),
    };
    for rule in &merged {
        u.apply(t, rule, pubsub_all).map_err(|e: RuleError| {
            format!(
                "ERR Error in ACL SETUSER modifier '{}': {}",
                c_text(rule),
                e.message()
            )
        })?;
    }
    Ok(u)
}

/// ACL SETUSER username [rule ...]
///
/// # Format
/// `ACL SETUSER username [rule ...]` — OK; the user is created or changed, all rules or none.
fn setuser(ctx: &mut Ctx, args: Args) -> CmdResult {
    for i in 2..args.len() {
        ctx.redact(i);
    }
    let name = &args[2];
    if name.iter().any(|&c| c == b' ' || c == 0) {
        return Err(err("Usernames can't contain spaces or null characters"));
    }
    let rules: Vec<&[u8]> = args.tail(3).iter().collect();
    let user = staged_user(ctx, name, &rules).map_err(CmdError::from)?;
    if let Some(slot) = ctx.srv.acl.find(name) {
        kill_revoked_subscribers(ctx, slot, &user);
    }
    ctx.srv.acl.put(user);
    ctx.out.ok();
    Ok(())
}

/// Closes the subscribers of the user at `slot` whose channels or patterns `new` no longer allows
/// (`ACLKillPubsubClientsIfNeeded`).
fn kill_revoked_subscribers(ctx: &mut Ctx, slot: usize, new: &User) {
    if new.all_channels() {
        return;
    }
    let victims: Vec<usize> = ctx
        .clients
        .iter()
        .filter(|(_, c)| c.user == slot && c.subs.total() > 0)
        .filter(|(_, c)| {
            c.subs
                .patterns
                .iter()
                .any(|(_, p, _)| !new.channel_allowed(p, true))
                || c.subs
                    .channels
                    .iter()
                    .any(|(_, ch, _)| !new.channel_allowed(ch, false))
                || c.subs
                    .shard
                    .iter()
                    .any(|(_, ch, _)| !new.channel_allowed(ch, false))
        })
        .map(|(k, _)| k)
        .collect();
    for v in victims {
        if v == ctx.id {
            ctx.client().close_after_reply = true;
        } else {
            ctx.srv.kill_list.push(v);
        }
    }
}

/// ACL GETUSER username
///
/// # Format
/// `ACL GETUSER username` — a map: flags, passwords (hashes), commands, keys, channels, selectors
/// (each a map of commands, keys, channels); nil for no such user.
fn getuser(ctx: &mut Ctx, args: Args) -> CmdResult {
    let Some(slot) = ctx.srv.acl.find(&args[2]) else {
        ctx.out.null();
        return Ok(());
    };
    let (t, u, out) = (&ctx.srv.table, ctx.srv.acl.user(slot), &mut *ctx.out);
    out.map(6);
    out.bulk(b"flags");
    let flags = u.flag_names();
    out.set(flags.len());
    for f in flags {
        out.bulk(f.as_bytes());
    }
    out.bulk(b"passwords");
    out.array(u.passwords().len());
    for p in u.passwords() {
        out.bulk(p.as_bytes());
    }
    let describe = |out: &mut crate::resp::reply::Reply, s: &acl::Selector| {
        out.bulk(b"commands");
        out.bulk(&s.describe_commands(t));
        out.bulk(b"keys");
        out.bulk(&s.describe_keys());
        out.bulk(b"channels");
        out.bulk(&s.describe_channels());
    };
    let selectors = u.selectors();
    describe(out, &selectors[0]);
    out.bulk(b"selectors");
    out.array(selectors.len() - 1);
    for s in &selectors[1..] {
        out.map(3);
        describe(out, s);
    }
    Ok(())
}

/// ACL DELUSER username [username ...]
///
/// # Format
/// `ACL DELUSER username [username ...]` — how many users were deleted; their connections close.
fn deluser(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.tail(2).iter().any(|n| n == b"default") {
        return Err(err("The 'default' user cannot be removed"));
    }
    let mut deleted = 0;
    for name in args.tail(2).iter() {
        let Some(slot) = ctx.srv.acl.remove(name) else {
            continue;
        };
        deleted += 1;
        disconnect_users(ctx, |c| c.user == slot);
    }
    ctx.out.int(deleted);
    Ok(())
}

/// ACL LIST / ACL USERS
///
/// # Format
/// `ACL LIST` — each user as a config-file line, `user <name> <rules>`; `ACL USERS` — the names.
fn list(ctx: &mut Ctx, args: Args) -> CmdResult {
    let names_only = is(&args[1], "users");
    let (t, a, out) = (&ctx.srv.table, &ctx.srv.acl, &mut *ctx.out);
    let users: Vec<_> = a.users().collect();
    out.array(users.len());
    for (_, u) in users {
        if names_only {
            out.bulk(&u.name);
        } else {
            out.bulk(&user_line(t, u));
        }
    }
    Ok(())
}

/// ACL WHOAMI
///
/// # Format
/// `ACL WHOAMI` — the connection's user name.
fn whoami(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let name = ctx.client().user_name.clone();
    ctx.out.bulk(&name);
    Ok(())
}

/// ACL CAT [category]
///
/// # Format
/// `ACL CAT` — the category names; `ACL CAT category` — the commands (and subcommands) in it.
fn cat(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 {
        return Err(subcommand_syntax("ACL", &args[1]));
    }
    if args.len() == 2 {
        ctx.out.array(NAMES.len());
        for (_, n) in NAMES {
            ctx.out.bulk(n.as_bytes());
        }
        return Ok(());
    }
    let sub = &args[2];
    let flag = category(sub).ok_or_else(|| {
        err(format!(
            "Unknown category '{}'",
            c_text(&sub[..sub.len().min(128)])
        ))
    })?;
    let names: Vec<&str> = ctx
        .srv
        .table
        .rows
        .iter()
        .filter(|c| crate::server::table::acl_bits(c) & flag != 0)
        .map(|c| c.name)
        .collect();
    ctx.out.array(names.len());
    for n in names {
        ctx.out.bulk(n.as_bytes());
    }
    Ok(())
}

/// ACL GENPASS [bits]
///
/// # Format
/// `ACL GENPASS [bits]` — a random password of `bits` (default 256) bits, in hex.
fn genpass(ctx: &mut Ctx, args: Args) -> CmdResult {
    const MAX_BITS: i64 = 4096;
    if args.len() > 3 {
        return Err(subcommand_syntax("ACL", &args[1]));
    }
    let bits = if args.len() == 3 { int(&args[2])? } else { 256 };
    if bits <= 0 || bits > MAX_BITS {
        return Err(err(format!("ACL GENPASS argument must be the number of bits for the output password, a positive number up to {MAX_BITS}")));
    }
    let chars = ((bits + 3) / 4) as usize;
    let mut hex = String::with_capacity(chars + 40);
    while hex.len() < chars {
        hex.push_str(&crate::util::random_hex40());
    }
    hex.truncate(chars);
    ctx.out.bulk(hex.as_bytes());
    Ok(())
}

/// ACL LOG [count | RESET]
///
/// # Format
/// `ACL LOG [count | RESET]` — the latest denials (default 10), each a map: count, reason,
/// context, object, username, age-seconds, client-info; RESET empties the log.
fn log(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut count: i64 = 10;
    if args.len() > 3 {
        return Err(subcommand_syntax("ACL", &args[1]));
    }
    if args.len() == 3 {
        if is(&args[2], "reset") {
            ctx.srv.acl.log.clear();
            ctx.out.ok();
            return Ok(());
        }
        count = int(&args[2])?.max(0);
    }
    let now = crate::util::clock::wall_us() / 1000;
    let (log, out) = (&ctx.srv.acl.log, &mut *ctx.out);
    let n = (count as usize).min(log.len());
    out.array(n);
    for e in log.iter().take(n) {
        out.map(7);
        out.bulk(b"count");
        out.int(e.count as i64);
        out.bulk(b"reason");
        out.bulk(e.reason.reason().as_bytes());
        out.bulk(b"context");
        out.bulk(e.context.as_bytes());
        out.bulk(b"object");
        out.bulk(&e.object);
        out.bulk(b"username");
        out.bulk(&e.username);
        out.bulk(b"age-seconds");
        out.double((now - e.ctime) as f64 / 1000.0);
        out.bulk(b"client-info");
        out.bulk(e.client_info.as_bytes());
    }
    Ok(())
}

/// ACL DRYRUN username command [arg ...]
///
/// # Format
/// `ACL DRYRUN username command [arg ...]` — OK if the user may run that command line, else a
/// bulk string saying why.
fn dryrun(ctx: &mut Ctx, args: Args) -> CmdResult {
    let slot = ctx
        .srv
        .acl
        .find(&args[2])
        .ok_or_else(|| err(format!("User '{}' not found", c_text(&args[2]))))?;
    let line = args.tail(3);
    let t = &ctx.srv.table;
    let mut row = t.find(&line[0]);
    if let Some(r) = row {
        if !t.rows[r].subcommands.is_empty() && line.len() >= 2 {
            row = t.find_sub(r, &line[1]);
        }
    }
    let row = row
        .filter(|&r| t.rows[r].handler.is_some() || line.len() < 2)
        .ok_or_else(|| err(format!("Command '{}' not found", c_text(&line[0]))))?;
    let c = t.rows[row];
    let argc = line.len() as i32;
    if (c.arity > 0 && c.arity != argc) || argc < -c.arity {
        return Err(err(format!(
            "wrong number of arguments for '{}' command",
            c.name
        )));
    }
    match ctx.srv.acl.user(slot).check(t, row, line) {
        Ok(()) => ctx.out.ok(),
        Err((why, pos)) => {
            let msg = match why {
                Denied::Command => format!(
                    "This user has no permissions to run the '{}' command",
                    c.name
                ),
                Denied::Key => format!(
                    "This user has no permissions to access the '{}' key",
                    c_text(&line[pos])
                ),
                _ => format!(
                    "This user has no permissions to access the '{}' channel",
                    c_text(&line[pos])
                ),
            };
            ctx.out.bulk(msg.as_bytes());
        }
    }
    Ok(())
}

const NO_ACLFILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

/// ACL LOAD / ACL SAVE
///
/// # Format
/// `ACL LOAD` — OK once the users of `aclfile` replace the current ones (all or nothing);
/// `ACL SAVE` — OK once every user is written to `aclfile`.
fn load_save(ctx: &mut Ctx, args: Args) -> CmdResult {
    if ctx.srv.config.aclfile.is_empty() {
        return Err(NO_ACLFILE.into());
    }
    let path = ctx.srv.config.aclfile.clone();
    if is(&args[1], "save") {
        let mut text = Vec::new();
        for (_, u) in ctx.srv.acl.users() {
            text.extend(user_line(&ctx.srv.table, u));
            text.push(b'\n');
        }
        let tmp = format!(
            "{path}.tmp-{}-{}",
            std::process::id(),
            crate::util::clock::wall_us() / 1000
        );
        let saved = std::fs::write(&tmp, &text).and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = saved {
            let _ = std::fs::remove_file(&tmp);
            crate::warning!("Failed saving the ACL file {path}: {e}");
            return Err(err("There was an error trying to save the ACLs. Please check the server logs for more information"));
        }
        ctx.out.ok();
        return Ok(());
    }
    let pubsub_all = ctx.srv.config.acl_pubsub_default == "allchannels";
    let users = load_file(&ctx.srv.table, pubsub_all, &path).map_err(err)?;
    replace_users(ctx, users);
    ctx.out.ok();
    Ok(())
}

/// Makes `users` the users, a missing `default` created as Redis creates it; the connections of
/// every other former user close, as `ACLLoadFromFile` frees the old users.
pub fn replace_users(ctx: &mut Ctx, users: Vec<User>) {
    let old: Vec<Vec<u8>> = ctx
        .srv
        .acl
        .users()
        .map(|(_, u)| u.name.clone())
        .filter(|n| n != b"default")
        .collect();
    for name in &old {
        ctx.srv.acl.remove(name);
    }
    let fresh = acl::Acl::new(&ctx.srv.table);
    ctx.srv.acl.put(fresh.user(acl::DEFAULT).clone());
    for u in users {
        ctx.srv.acl.put(u);
    }
    disconnect_users(ctx, |c| c.user_name[..] != b"default"[..]);
}

/// Disconnects the clients `which` picks, as Redis does those of a deleted or reloaded user: the
/// caller after its reply, the others at once. Until they close they run as nobody, since their
/// user's slot may be reused.
fn disconnect_users(ctx: &mut Ctx, which: impl Fn(&Client) -> bool) {
    let victims: Vec<usize> = ctx
        .clients
        .iter()
        .filter(|(_, c)| which(c))
        .map(|(k, _)| k)
        .collect();
    for v in victims {
        let c = &mut ctx.clients[v];
        c.user = acl::DEFAULT;
        c.authenticated = false;
        if v == ctx.id {
            c.close_after_reply = true;
        } else {
            ctx.srv.kill_list.push(v);
        }
    }
}

const HELP: &[&str] = &[
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

/// ACL HELP
///
/// # Format
/// `ACL HELP` — the subcommands.
fn help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("ACL", HELP);
    Ok(())
}

const SUBCOMMANDS: &[Command] = &[
    Command::new("acl|cat", cat, -2, NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("List the ACL categories or the commands inside a category", "6.0.0", "O(1) since the categories and commands are a fixed set.", "[categoryname]"),
    Command::new("acl|deluser", deluser, -3, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Remove the specified ACL users and the associated rules", "6.0.0", "O(1) amortized time considering the typical user.", "username [username ...]"),
    Command::new("acl|dryrun", dryrun, -4, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Returns whether the user can execute the given command without executing the command.", "7.0.0", "O(1).", "username command [arg [arg ...]]"),
    Command::new("acl|genpass", genpass, -2, NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Generate a pseudorandom secure password to use for ACL users", "6.0.0", "O(1)", "[bits:integer]"),
    Command::new("acl|getuser", getuser, 3, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .history(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation.")])
        .doc("Get the rules for a specific ACL user", "6.0.0", "O(N). Where N is the number of password, command and pattern rules that the user has.", "username"),
    Command::new("acl|help", help, 2, LOADING | STALE).group(GROUP)
        .doc("Show helpful text about the different subcommands", "6.0.0", "O(1)", ""),
    Command::new("acl|list", list, 2, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("List the current ACL rules in ACL config file format", "6.0.0", "O(N). Where N is the number of configured users.", ""),
    Command::new("acl|load", load_save, 2, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Reload the ACLs from the configured ACL file", "6.0.0", "O(N). Where N is the number of configured users.", ""),
    Command::new("acl|log", log, -2, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("List latest events denied because of ACLs in place", "6.0.0", "O(N) with N being the number of entries shown.", "[operation:(count:integer | RESET)]"),
    Command::new("acl|save", load_save, 2, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Save the current ACL rules in the configured ACL file", "6.0.0", "O(N). Where N is the number of configured users.", ""),
    Command::new("acl|setuser", setuser, -3, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .history(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and key based permissions.")])
        .doc("Modify or create the rules for a specific ACL user", "6.0.0", "O(N). Where N is the number of rules provided.", "username [rule [rule ...]]"),
    Command::new("acl|users", list, 2, ADMIN_CMD | NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("List the username of all the configured ACL rules", "6.0.0", "O(N). Where N is the number of configured users.", ""),
    Command::new("acl|whoami", whoami, 2, NOSCRIPT | LOADING | STALE).group(GROUP)
        .doc("Return the name of the user associated to the current connection", "6.0.0", "O(1)", ""),
];

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::container("acl", -2, SUBCOMMANDS).group(GROUP)
        .doc("A container for Access List Control commands ", "6.0.0", "Depends on subcommand.", ""),
];
