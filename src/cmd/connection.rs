//! Connection commands: PING, ECHO, QUIT, RESET, AUTH, HELLO, SELECT, and the CLIENT container.

use super::parse::{int, is, text};
use super::{
    err, Args, CmdError, CmdResult, Command, Ctx, ALLOW_BUSY, DISK_ERROR_DENIED, FAST, LOADING,
    MULTI_OOM_OK, NOSCRIPT, NO_AUTH, NO_QUEUE, STALE, SUB_OK,
};
use crate::config::REDIS_VERSION;
use crate::resp::reply::{DB_INDEX, SYNTAX};
use crate::server::client::ReplyMode;
use crate::server::pause::Kind;
use crate::server::tracking;

const GROUP: &str = "connection";

/// PING [message]
///
/// # Format
/// `PING [message]` — `+PONG`, or the message as a bulk string.
fn ping(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() <= 2 && !ctx.out.resp3 && ctx.client().subs.total() > 0 {
        // A RESP2 subscriber gets `[pong, message]`, as Redis.
        ctx.out.array(2);
        ctx.out.bulk(b"pong");
        ctx.out.bulk(args.get(1).unwrap_or(b""));
        return Ok(());
    }
    match args.len() {
        1 => ctx.out.simple("PONG"),
        2 => ctx.out.bulk(&args[1]),
        _ => return Err(err("wrong number of arguments for 'ping' command")),
    }
    Ok(())
}

/// ECHO message
///
/// # Format
/// `ECHO message` — the message.
fn echo(ctx: &mut Ctx, args: Args) -> CmdResult {
    ctx.out.bulk(&args[1]);
    Ok(())
}

/// QUIT
///
/// # Format
/// `QUIT` — `+OK`, then the server closes the connection.
fn quit(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.ok();
    ctx.client().close_after_reply = true;
    Ok(())
}

/// RESET
///
/// # Format
/// `RESET` — `+RESET`; the connection is back to its initial state (db 0, RESP2, no name, replies
/// on, out of MULTI, nothing watched or subscribed, and unauthenticated if a password is set).
fn reset(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let needs_auth = ctx.srv.acl.auth_required();
    let id = ctx.id;
    let c = &mut ctx.clients[id];
    crate::server::multi::discard_transaction(&mut ctx.srv.key_events, id, c);
    ctx.srv.pubsub.unsubscribe_all(&mut c.subs, id);
    crate::server::monitor::stop(ctx.srv, c, id);
    tracking::disable(&mut ctx.srv.tracking, &mut c.tracking, c.id);
    let c = ctx.client();
    c.db = 0;
    c.name.clear();
    c.reply_mode = ReplyMode::On;
    c.no_evict = false;
    c.no_touch = false;
    c.authenticated = !needs_auth;
    c.user = crate::server::acl::DEFAULT;
    c.user_name = Box::from(&b"default"[..]);
    ctx.db = 0;
    ctx.out.resp3 = false;
    ctx.out.simple("RESET");
    Ok(())
}

/// Authenticates the connection as `user` (Redis's `ACLAuthenticateUser`); a failure is logged
/// in ACL LOG with the name tried, as an `auth` denial of the command (`args[0]`).
fn authenticate(ctx: &mut Ctx, args: Args, user: &[u8], pass: &[u8]) -> CmdResult {
    let Some(slot) = ctx.srv.acl.check_credentials(user, pass) else {
        let context = if ctx.client().tx.in_multi() {
            "multi"
        } else {
            "toplevel"
        };
        crate::server::gate::log_denied(
            ctx,
            crate::server::acl::Denied::Auth,
            context,
            args[0].to_vec(),
            Some(user),
        );
        return Err("WRONGPASS invalid username-password pair or user is disabled.".into());
    };
    let c = ctx.client();
    c.authenticated = true;
    c.user = slot;
    c.user_name = Box::from(user);
    Ok(())
}

/// AUTH [username] password
///
/// # Format
/// `AUTH password`, `AUTH username password` — `+OK` or `-WRONGPASS ...`.
fn auth(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 {
        return Err(SYNTAX.into());
    }
    for i in 1..args.len() {
        ctx.redact(i);
    }
    if args.len() == 2 {
        if ctx.srv.acl.user(crate::server::acl::DEFAULT).nopass() {
            return Err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?".into());
        }
        authenticate(ctx, args, b"default", &args[1])?;
    } else {
        authenticate(ctx, args, &args[1], &args[2])?;
    }
    ctx.out.ok();
    Ok(())
}

/// Client names and library names: printable ASCII without spaces, as Redis requires.
fn valid_name(name: &[u8]) -> bool {
    name.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]]
///
/// # Format
/// `HELLO [protover [AUTH username password] [SETNAME clientname]]` — switches protocol and replies
/// the server's properties as a map.
fn hello(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut ver = 0;
    let mut j = 1;
    if args.len() >= 2 {
        ver = int(&args[1]).map_err(|_| {
            CmdError::from("ERR Protocol version is not an integer or out of range")
        })?;
        j = 2;
        if !(2..=3).contains(&ver) {
            return Err("NOPROTO unsupported protocol version".into());
        }
    }
    let (mut creds, mut name) = (None, None);
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "auth") && more >= 2 {
            ctx.redact(j + 1);
            ctx.redact(j + 2);
            creds = Some((&args[j + 1], &args[j + 2]));
            j += 3;
        } else if is(&args[j], "setname") && more >= 1 {
            name = Some(&args[j + 1]);
            j += 2;
        } else {
            return Err(err(format!(
                "Syntax error in HELLO option '{}'",
                text(&args[j])
            )));
        }
    }
    if let Some((user, pass)) = creds {
        authenticate(ctx, args, user, pass)?;
    }
    if !ctx.client().authenticated {
        return Err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time".into());
    }
    if let Some(n) = name {
        set_name(ctx, n)?;
    }
    if ver != 0 {
        ctx.out.resp3 = ver == 3;
    }
    let id = ctx.client().id as i64;
    let out = &mut *ctx.out;
    out.map(7);
    out.bulk_str("server");
    out.bulk_str("redis");
    out.bulk_str("version");
    out.bulk_str(REDIS_VERSION);
    out.bulk_str("proto");
    out.int(if out.resp3 { 3 } else { 2 });
    out.bulk_str("id");
    out.int(id);
    out.bulk_str("mode");
    out.bulk_str("standalone");
    out.bulk_str("role");
    out.bulk_str("master");
    out.bulk_str("modules");
    out.array(0);
    Ok(())
}

/// SELECT index
///
/// # Format
/// `SELECT index` — `+OK`; later commands use that database.
fn select(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = int(&args[1])?;
    if n < 0 || n >= ctx.srv.dbs.len() as i64 {
        return Err(DB_INDEX.into());
    }
    ctx.db = n as usize;
    ctx.client().db = n as usize;
    ctx.out.ok();
    Ok(())
}

fn set_name(ctx: &mut Ctx, name: &[u8]) -> CmdResult {
    if !valid_name(name) {
        return Err(
            "ERR Client names cannot contain spaces, newlines or special characters.".into(),
        );
    }
    ctx.client().name = name.to_vec();
    Ok(())
}

/// CLIENT ID
///
/// # Format
/// `CLIENT ID` — this connection's id.
fn client_id(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let id = ctx.client().id as i64;
    ctx.out.int(id);
    Ok(())
}

/// CLIENT SETNAME connection-name
///
/// # Format
/// `CLIENT SETNAME connection-name` — `+OK` (an empty name clears it).
fn client_setname(ctx: &mut Ctx, args: Args) -> CmdResult {
    set_name(ctx, &args[2])?;
    ctx.out.ok();
    Ok(())
}

/// CLIENT GETNAME
///
/// # Format
/// `CLIENT GETNAME` — the name, or nil.
fn client_getname(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let name = ctx.clients[ctx.id].name.clone();
    if name.is_empty() {
        ctx.out.null();
    } else {
        ctx.out.bulk(&name);
    }
    Ok(())
}

fn info_line(ctx: &Ctx, key: usize, args: Args) -> String {
    // The caller's reply buffer is lent to the command while it runs, and the running command is
    // this one.
    let c = &ctx.clients[key];
    let (out, argv_mem) = if key == ctx.id {
        (&*ctx.out, args.iter().map(|a| a.len()).sum())
    } else {
        (&c.out, c.blocked.as_ref().map_or(0, |b| b.argv_len()))
    };
    c.info_line(if out.resp3 { 3 } else { 2 }, out, argv_mem)
}

/// CLIENT INFO
///
/// # Format
/// `CLIENT INFO` — this connection's CLIENT LIST line.
fn client_info(ctx: &mut Ctx, args: Args) -> CmdResult {
    let line = info_line(ctx, ctx.id, args) + "\n";
    ctx.out.verbatim(line.as_bytes());
    Ok(())
}

/// CLIENT LIST [TYPE NORMAL | MASTER | REPLICA | PUBSUB] [ID client-id [client-id ...]]
///
/// # Format
/// `CLIENT LIST [TYPE type] [ID id [id ...]]` — one line per connection.
fn client_list(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut ids: Option<Vec<u64>> = None;
    let mut type_filter: Option<String> = None;
    let mut j = 2;
    while j < args.len() {
        if is(&args[j], "type") && j + 1 < args.len() {
            let t = text(&args[j + 1]).to_ascii_lowercase();
            if !matches!(
                t.as_str(),
                "normal" | "master" | "replica" | "slave" | "pubsub"
            ) {
                return Err(err(format!("Unknown client type '{}'", text(&args[j + 1]))));
            }
            // No client is a replica here (this server serves none): `replica` matches nobody.
            type_filter = Some(if t == "slave" { "replica".into() } else { t });
            j += 2;
        } else if is(&args[j], "id") && j + 1 < args.len() {
            let mut list = Vec::new();
            j += 1;
            while j < args.len() {
                match crate::util::parse_i64(&args[j]) {
                    Some(n) if n > 0 => list.push(n as u64),
                    _ => return Err("ERR Invalid client ID".into()),
                }
                j += 1;
            }
            ids = Some(list);
        } else {
            return Err(SYNTAX.into());
        }
    }
    let mut text_out = String::new();
    for (key, c) in ctx.clients.iter() {
        if ids.as_ref().is_some_and(|l| !l.contains(&c.id)) {
            continue;
        }
        if type_filter.as_deref().is_some_and(|t| t != c.class()) {
            continue;
        }
        text_out.push_str(&info_line(ctx, key, args));
        text_out.push('\n');
    }
    ctx.out.verbatim(text_out.as_bytes());
    Ok(())
}

/// CLIENT KILL ip:port | CLIENT KILL [ID id] [TYPE type] [USER username] [ADDR ip:port] [LADDR
/// ip:port] [SKIPME yes|no] ...
///
/// # Format
/// `CLIENT KILL addr` (old form, `+OK`) or `CLIENT KILL <filter value> ...` (the number killed).
fn client_kill(ctx: &mut Ctx, args: Args) -> CmdResult {
    let old_form = args.len() == 3;
    let (mut id, mut addr, mut laddr, mut user, mut ty) = (None, None, None, None, None);
    let mut skipme = !old_form;
    if old_form {
        addr = Some(text(&args[2]).into_owned());
    } else {
        if !args.len().is_multiple_of(2) {
            return Err(SYNTAX.into());
        }
        for pair in (2..args.len()).step_by(2) {
            let (k, v) = (&args[pair], &args[pair + 1]);
            if is(k, "id") {
                match crate::util::parse_i64(v) {
                    Some(n) if n > 0 => id = Some(n as u64),
                    _ => return Err("ERR client-id should be greater than 0".into()),
                }
            } else if is(k, "addr") {
                addr = Some(text(v).into_owned());
            } else if is(k, "laddr") {
                laddr = Some(text(v).into_owned());
            } else if is(k, "user") {
                if ctx.srv.acl.find(v).is_none() {
                    return Err(err(format!("No such user '{}'", super::parse::c_text(v))));
                }
                user = Some(v.to_vec());
            } else if is(k, "type") {
                let t = text(v).to_ascii_lowercase();
                if !matches!(
                    t.as_str(),
                    "normal" | "master" | "replica" | "slave" | "pubsub"
                ) {
                    return Err(err(format!("Unknown client type '{}'", text(v))));
                }
                ty = Some(if t == "slave" { "replica".into() } else { t });
            } else if is(k, "skipme") {
                skipme = if is(v, "yes") {
                    true
                } else if is(v, "no") {
                    false
                } else {
                    return Err(SYNTAX.into());
                };
            } else {
                return Err(SYNTAX.into());
            }
        }
    }
    let victims: Vec<usize> = ctx
        .clients
        .iter()
        .filter(|(key, c)| {
            id.is_none_or(|i| c.id == i)
                && addr.as_ref().is_none_or(|a| &c.addr == a)
                && laddr.as_ref().is_none_or(|a| &c.laddr == a)
                && user.as_ref().is_none_or(|u| u[..] == *c.user_name)
                && ty.as_deref().is_none_or(|t| t == c.class())
                && !(skipme && *key == ctx.id)
        })
        .map(|(key, _)| key)
        .collect();
    if old_form && victims.is_empty() {
        return Err("ERR No such client".into());
    }
    for &v in &victims {
        if v == ctx.id {
            ctx.client().close_after_reply = true;
        } else {
            ctx.srv.kill_list.push(v);
        }
    }
    if old_form {
        ctx.out.ok();
    } else {
        ctx.out.int(victims.len() as i64);
    }
    Ok(())
}

/// CLIENT SETINFO LIB-NAME libname | LIB-VER libver
///
/// # Format
/// `CLIENT SETINFO <LIB-NAME libname | LIB-VER libver>` — `+OK`.
fn client_setinfo(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (attr, val) = (&args[2], &args[3]);
    let is_name = is(attr, "lib-name");
    if !is_name && !is(attr, "lib-ver") {
        return Err(err(format!("Unrecognized option '{}'", text(attr))));
    }
    if !valid_name(val) {
        return Err(err(format!(
            "{} cannot contain spaces, newlines or special characters.",
            text(attr).to_ascii_lowercase()
        )));
    }
    let c = ctx.client();
    if is_name {
        c.lib_name = val.to_vec();
    } else {
        c.lib_ver = val.to_vec();
    }
    ctx.out.ok();
    Ok(())
}

fn on_off(arg: &[u8]) -> Result<bool, CmdError> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(SYNTAX.into())
    }
}

/// CLIENT NO-EVICT ON|OFF
///
/// # Format
/// `CLIENT NO-EVICT <ON | OFF>` — `+OK`.
fn client_no_evict(ctx: &mut Ctx, args: Args) -> CmdResult {
    ctx.client().no_evict = on_off(&args[2])?;
    ctx.out.ok();
    Ok(())
}

/// CLIENT NO-TOUCH ON|OFF
///
/// # Format
/// `CLIENT NO-TOUCH <ON | OFF>` — `+OK`; while on, this client's reads leave access times alone.
fn client_no_touch(ctx: &mut Ctx, args: Args) -> CmdResult {
    ctx.client().no_touch = on_off(&args[2])?;
    ctx.out.ok();
    Ok(())
}

/// CLIENT REPLY ON|OFF|SKIP
///
/// # Format
/// `CLIENT REPLY <ON | OFF | SKIP>` — ON replies `+OK`; OFF and SKIP reply nothing.
fn client_reply(ctx: &mut Ctx, args: Args) -> CmdResult {
    let a = &args[2];
    let mode = if is(a, "on") {
        ReplyMode::On
    } else if is(a, "off") {
        ReplyMode::Off
    } else if is(a, "skip") {
        ReplyMode::SkipNext
    } else {
        return Err(SYNTAX.into());
    };
    ctx.client().reply_mode = mode;
    if mode == ReplyMode::On {
        ctx.out.ok();
    }
    Ok(())
}

/// CLIENT UNBLOCK client-id [TIMEOUT | ERROR]
///
/// # Format
/// `CLIENT UNBLOCK id [TIMEOUT|ERROR]` — 1 if the client was blocked and is now unblocked (with its
/// command's timeout reply, or the `-UNBLOCKED` error), 0 otherwise.
fn client_unblock(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 4 {
        return Err(err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            text(&args[1])
        )));
    }
    let error = match args.get(3) {
        None => false,
        Some(r) if is(r, "timeout") => false,
        Some(r) if is(r, "error") => true,
        Some(_) => return Err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR".into()),
    };
    let id = int(&args[2])?;
    let target = ctx
        .clients
        .iter()
        .find(|(_, c)| c.id as i64 == id)
        .map(|(k, _)| k);
    let done = target.is_some_and(|t| {
        crate::server::blocking::unblock_by_request(ctx.srv, ctx.clients, t, error)
    });
    ctx.out.int(i64::from(done));
    Ok(())
}

/// CLIENT PAUSE timeout [WRITE | ALL]
///
/// # Format
/// `CLIENT PAUSE timeout [WRITE|ALL]` — `+OK`; for `timeout` ms clients' commands (ALL, the
/// default) or those that may write (WRITE) wait.
fn client_pause(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 4 {
        return Err(err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            text(&args[1])
        )));
    }
    let kind = match args.get(3) {
        None => Kind::All,
        Some(m) if is(m, "write") => Kind::Write,
        Some(m) if is(m, "all") => Kind::All,
        Some(_) => return Err("ERR CLIENT PAUSE mode must be WRITE or ALL".into()),
    };
    let timeout =
        crate::util::parse_i64(&args[2]).ok_or("ERR timeout is not an integer or out of range")?;
    if timeout < 0 {
        return Err("ERR timeout is negative".into());
    }
    let until = crate::util::clock::now_ms().saturating_add(timeout);
    ctx.srv.pause.start(kind, until);
    ctx.out.ok();
    Ok(())
}

/// CLIENT UNPAUSE
///
/// # Format
/// `CLIENT UNPAUSE` — `+OK`; the pause ends and the held commands run.
fn client_unpause(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.srv.pause.end();
    ctx.out.ok();
    Ok(())
}

/// CLIENT TRACKING <ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
///
/// # Format
/// `CLIENT TRACKING ON|OFF [options]` — `+OK`; with ON, the keys the connection reads (or, with
/// BCAST, every key under its prefixes) are tracked, and their changes sent to it (or to the
/// REDIRECT client) as invalidation messages.
fn client_tracking(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut redirect: Option<(u64, usize)> = None;
    let mut options = 0;
    let mut prefixes: Vec<&[u8]> = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let (a, more) = (&args[j], j + 1 < args.len());
        if is(a, "redirect") && more {
            j += 1;
            if redirect.is_some() {
                return Err(err("A client can only redirect to a single other client"));
            }
            let id = int(&args[j])?;
            let found = ctx.clients.iter().find(|(_, c)| c.id as i64 == id);
            let Some((key, _)) = found else {
                return Err(err("The client ID you want redirect to does not exist"));
            };
            redirect = Some((id as u64, key));
        } else if is(a, "bcast") {
            options |= tracking::BCAST;
        } else if is(a, "optin") {
            options |= tracking::OPTIN;
        } else if is(a, "optout") {
            options |= tracking::OPTOUT;
        } else if is(a, "noloop") {
            options |= tracking::NOLOOP;
        } else if is(a, "prefix") && more {
            j += 1;
            prefixes.push(&args[j]);
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    let mode = &args[2];
    if is(mode, "on") {
        let t = &ctx.clients[ctx.id].tracking;
        let bcast = options & tracking::BCAST != 0;
        if !bcast && !prefixes.is_empty() {
            return Err(err("PREFIX option requires BCAST mode to be enabled"));
        }
        if t.has(tracking::ON) && t.has(tracking::BCAST) != bcast {
            return Err(err("You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."));
        }
        if bcast && options & (tracking::OPTIN | tracking::OPTOUT) != 0 {
            return Err(err("OPTIN and OPTOUT are not compatible with BCAST"));
        }
        if options & tracking::OPTIN != 0 && options & tracking::OPTOUT != 0 {
            return Err(err("You can't specify both OPTIN mode and OPTOUT mode"));
        }
        if (options & tracking::OPTIN != 0 && t.has(tracking::OPTOUT))
            || (options & tracking::OPTOUT != 0 && t.has(tracking::OPTIN))
        {
            return Err(err("You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."));
        }
        if bcast && !tracking::check_prefixes(ctx, &prefixes) {
            return Ok(());
        }
        tracking::enable(ctx, redirect.unwrap_or((0, 0)), options, &prefixes);
    } else if is(mode, "off") {
        let c = &mut ctx.clients[ctx.id];
        tracking::disable(&mut ctx.srv.tracking, &mut c.tracking, c.id);
    } else {
        return Err(SYNTAX.into());
    }
    ctx.out.ok();
    Ok(())
}

/// CLIENT CACHING <YES | NO>
///
/// # Format
/// `CLIENT CACHING YES|NO` — `+OK`; in OPTIN mode YES tracks the keys of the next command (or
/// transaction), in OPTOUT mode NO does not.
fn client_caching(ctx: &mut Ctx, args: Args) -> CmdResult {
    let t = &mut ctx.clients[ctx.id].tracking;
    if !t.has(tracking::ON) {
        return Err(err("CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"));
    }
    let a = &args[2];
    if is(a, "yes") {
        if !t.has(tracking::OPTIN) {
            return Err(err(
                "CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            ));
        }
    } else if is(a, "no") {
        if !t.has(tracking::OPTOUT) {
            return Err(err(
                "CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            ));
        }
    } else {
        return Err(SYNTAX.into());
    }
    t.flags |= tracking::CACHING;
    ctx.out.ok();
    Ok(())
}

/// CLIENT GETREDIR
///
/// # Format
/// `CLIENT GETREDIR` — the id invalidation messages are redirected to: 0 without REDIRECT, -1
/// when tracking is off.
fn client_getredir(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let id = ctx.clients[ctx.id].tracking.redirect_id();
    ctx.out.int(id);
    Ok(())
}

/// CLIENT TRACKINGINFO
///
/// # Format
/// `CLIENT TRACKINGINFO` — a map: `flags` (a set: `on` or `off`, then `bcast`, `optin`,
/// `caching-yes`, `optout`, `caching-no`, `noloop`, `broken_redirect` as they apply), `redirect`
/// (as CLIENT GETREDIR) and `prefixes` (the BCAST prefixes).
fn client_trackinginfo(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let t = &ctx.clients[ctx.id].tracking;
    let caching = t.has(tracking::CACHING);
    let mut flags = vec![if t.has(tracking::ON) { "on" } else { "off" }];
    let named = [
        (t.has(tracking::BCAST), "bcast"),
        (t.has(tracking::OPTIN), "optin"),
        (t.has(tracking::OPTIN) && caching, "caching-yes"),
        (t.has(tracking::OPTOUT), "optout"),
        (t.has(tracking::OPTOUT) && caching, "caching-no"),
        (t.has(tracking::NOLOOP), "noloop"),
        (t.has(tracking::BROKEN_REDIR), "broken_redirect"),
    ];
    flags.extend(named.iter().filter(|(on, _)| *on).map(|&(_, name)| name));
    let out = &mut *ctx.out;
    out.map(3);
    out.bulk(b"flags");
    out.set(flags.len());
    for f in flags {
        out.bulk_str(f);
    }
    out.bulk(b"redirect");
    out.int(t.redirect_id());
    out.bulk(b"prefixes");
    out.bulks(t.prefixes.iter().map(|p| &p[..]));
    Ok(())
}

const CLIENT_HELP: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
];

/// CLIENT HELP
///
/// # Format
/// `CLIENT HELP` — the subcommands.
fn client_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("CLIENT", CLIENT_HELP);
    Ok(())
}

const CLIENT_FLAGS: u32 = NOSCRIPT | LOADING | STALE;

const CLIENT_SUBCOMMANDS: &[Command] = &[
    Command::new("client|id", client_id, 2, CLIENT_FLAGS).group(GROUP)
        .doc("Returns the client ID for the current connection", "5.0.0", "O(1)", ""),
    Command::new("client|setname", client_setname, 3, CLIENT_FLAGS).group(GROUP)
        .doc("Set the current connection name", "2.6.9", "O(1)", "connection-name"),
    Command::new("client|getname", client_getname, 2, CLIENT_FLAGS).group(GROUP)
        .doc("Get the current connection name", "2.6.9", "O(1)", ""),
    Command::new("client|info", client_info, 2, CLIENT_FLAGS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Returns information about the current client connection.", "6.2.0", "O(1)", ""),
    Command::new("client|list", client_list, -2, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .history(&[("2.8.12", "Added unique client `id` field."), ("5.0.0", "Added optional `TYPE` filter."), ("6.0.0", "Added `user` field."), ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."), ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."), ("7.0.3", "Added `ssub` field.")])
        .arg_since(&[("normal_master_replica_pubsub", "5.0.0"), ("id", "6.2.0")])
        .tips(&["nondeterministic_output"])
        .doc("Get the list of client connections", "2.4.0", "O(N) where N is the number of client connections",
            "[TYPE (NORMAL | MASTER | REPLICA | PUBSUB)] [ID id:(client-id:integer [client-id:integer ...])]"),
    Command::new("client|kill", client_kill, -3, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .history(&[("2.8.12", "Added new filter format."), ("2.8.12", "`ID` option."), ("3.2.0", "Added `master` type in for `TYPE` option."), ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."), ("6.2.0", "`LADDR` option.")])
        .arg_since(&[("client-id", "2.8.12"), ("type", "2.8.12"), ("master", "3.2.0"), ("replica", "5.0.0")])
        .doc("Kill the connection of a client", "2.4.0", "O(N) where N is the number of client connections",
            "ip:port | [ID client-id:integer] [TYPE type:(NORMAL | MASTER | SLAVE | REPLICA | PUBSUB)] [USER username] [ADDR ip:port] [LADDR ip:port] [SKIPME skipme:(YES | NO)]"),
    Command::new("client|setinfo", client_setinfo, 4, CLIENT_FLAGS).group(GROUP)
        .doc("Sets information specific to the client or connection.", "7.2.0", "O(1)", "attr:(LIB-NAME libname | LIB-VER libver)"),
    Command::new("client|no-evict", client_no_evict, 3, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .doc("Set client eviction mode for the current connection", "7.0.0", "O(1)", "enabled:(ON | OFF)"),
    Command::new("client|no-touch", client_no_touch, 3, CLIENT_FLAGS).group(GROUP)
        .doc("Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", "O(1)", "enabled:(ON | OFF)"),
    Command::new("client|reply", client_reply, 3, CLIENT_FLAGS).group(GROUP)
        .doc("Instruct the server whether to reply to commands", "3.2.0", "O(1)", "ON | OFF | SKIP"),
    Command::new("client|unblock", client_unblock, -3, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .doc("Unblock a client blocked in a blocking command from a different connection", "5.0.0",
            "O(log N) where N is the number of client connections", "client-id:integer [TIMEOUT | ERROR]"),
    Command::new("client|pause", client_pause, -3, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .history(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
        .arg_since(&[("mode", "6.2.0")])
        .doc("Stop processing commands from clients for some time", "2.9.50", "O(1)", "timeout:integer [mode:(WRITE | ALL)]"),
    Command::new("client|unpause", client_unpause, 2, CLIENT_FLAGS | super::ADMIN).group(GROUP)
        .doc("Resume processing of clients that were paused", "6.2.0", "O(N) Where N is the number of paused clients", ""),
    Command::new("client|tracking", client_tracking, -3, CLIENT_FLAGS).group(GROUP)
        .doc("Enable or disable server assisted client side caching support", "6.0.0", "O(1). Some options may introduce additional complexity.",
            "status:(ON | OFF) [REDIRECT client-id:integer] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]"),
    Command::new("client|caching", client_caching, 3, CLIENT_FLAGS).group(GROUP)
        .doc("Instruct the server about tracking or not keys in the next request", "6.0.0", "O(1)", "mode:(YES | NO)"),
    Command::new("client|getredir", client_getredir, 2, CLIENT_FLAGS).group(GROUP)
        .doc("Get tracking notifications redirection client ID if any", "6.0.0", "O(1)", ""),
    Command::new("client|trackinginfo", client_trackinginfo, 2, CLIENT_FLAGS).group(GROUP)
        .doc("Return information about server assisted client side caching for the current connection", "6.2.0",
            "O(1)", ""),
    Command::new("client|help", client_help, 2, LOADING | STALE).group(GROUP)
        .doc("Show helpful text about the different subcommands", "5.0.0", "O(1)", ""),
];

pub const COMMANDS: &[Command] = &[
    Command::new("ping", ping, -1, FAST | SUB_OK | DISK_ERROR_DENIED)
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .group(GROUP)
        .doc(
            "Ping the server",
            "1.0.0",
            "O(1)",
            "[message]",
        ),
    Command::new("echo", echo, 2, LOADING | STALE | FAST).group(GROUP).doc(
        "Echo the given string",
        "1.0.0",
        "O(1)",
        "message",
    ),
    Command::new(
        "quit",
        quit,
        -1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | NO_QUEUE | SUB_OK | MULTI_OOM_OK,
    )
    .group(GROUP)
    .doc("Close the connection", "1.0.0", "O(1)", ""),
    Command::new(
        "reset",
        reset,
        1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | NO_QUEUE | SUB_OK | MULTI_OOM_OK,
    )
    .group(GROUP)
    .doc("Reset the connection", "6.2.0", "O(1)", ""),
    Command::new(
        "auth",
        auth,
        -2,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH,
    ).history(&[("6.0.0", "Added ACL style (username and password).")]).arg_since(&[("username", "6.0.0")])
    .group(GROUP)
    .doc(
        "Authenticate to the server",
        "1.0.0",
        "O(N) where N is the number of passwords defined for the user",
        "[username] password",
    ),
    Command::new(
        "hello",
        hello,
        -1,
        ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH,
    ).history(&[("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context.")])
    .group(GROUP)
    .doc(
        "Handshake with Redis",
        "6.0.0",
        "O(1)",
        "[arguments:(protover:integer [AUTH username password] [SETNAME clientname])]",
    ),
    Command::new("select", select, 2, LOADING | STALE | FAST)
        .group(GROUP)
        .doc(
            "Change the selected database for the current connection",
            "1.0.0",
            "O(1)",
            "index:integer",
        ),
    Command::container("client", -2, CLIENT_SUBCOMMANDS)
        .group(GROUP)
        .doc(
            "A container for client connection commands",
            "2.4.0",
            "Depends on subcommand.",
            "",
        ),
];
