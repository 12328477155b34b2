//! The COMMAND family: COMMAND, COMMAND COUNT|INFO|DOCS|LIST|GETKEYS|HELP, all answered from the
//! command table. DOCS builds each command's argument tree from its row's syntax line, so the hints
//! redis-cli shows and the syntax in the docs never disagree with what the server parses.

use super::parse::{is, text};
use super::{
    Args, CmdResult, Command, Ctx, ADMIN, FAST, FLAG_NAMES, LOADING, PUBSUB, READONLY, STALE, WRITE,
};
use crate::resp::reply::Reply;
use crate::store::glob;

const GROUP: &str = "server";

/// ACL categories, derived from flags and group as Redis assigns them (COMMAND INFO's seventh
/// field; the docs pages show them too).
pub fn acl_categories(c: &Command) -> Vec<String> {
    let mut cats = Vec::new();
    if c.has(WRITE) {
        cats.push("@write".to_string());
    }
    // Redis's `setImplicitACLCategories` leaves read-only scripting commands out of @read.
    if c.has(READONLY) && c.group != "scripting" {
        cats.push("@read".to_string());
    }
    if c.has(PUBSUB) {
        cats.push("@pubsub".to_string());
    }
    if c.has(ADMIN) {
        cats.push("@admin".to_string());
        cats.push("@dangerous".to_string());
    }
    cats.push(if c.has(FAST) { "@fast" } else { "@slow" }.to_string());
    let group_cat = match c.group {
        "generic" => Some("@keyspace"),
        "string" => Some("@string"),
        "connection" => Some("@connection"),
        "list" => Some("@list"),
        "hash" => Some("@hash"),
        "set" => Some("@set"),
        "sorted-set" => Some("@sortedset"),
        "scripting" => Some("@scripting"),
        "transactions" => Some("@transaction"),
        _ => None,
    };
    cats.extend(group_cat.map(String::from));
    if c.has(super::BLOCKING) {
        cats.push("@blocking".to_string());
    }
    cats
}

fn reply_info(out: &mut Reply, c: &Command) {
    out.array(10);
    out.bulk_str(c.name);
    out.int(c.arity as i64);
    let flags: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(f, _)| c.has(*f))
        .map(|(_, n)| *n)
        .collect();
    out.set(flags.len());
    for f in flags {
        out.simple(f);
    }
    out.int(c.first_key as i64);
    out.int(c.last_key as i64);
    out.int(c.key_step as i64);
    let cats = acl_categories(c);
    out.set(cats.len());
    for cat in &cats {
        out.simple(cat);
    }
    out.set(0); // tips
    if c.first_key > 0 {
        out.array(1);
        out.map(3);
        out.bulk_str("flags");
        let kf: &[&str] = match c.key_spec_flags {
            Some(flags) => flags,
            None if c.has(WRITE) => &["RW", "UPDATE"],
            None => &["RO", "ACCESS"],
        };
        out.set(kf.len());
        for f in kf {
            out.simple(f);
        }
        out.bulk_str("begin_search");
        out.map(2);
        out.bulk_str("type");
        out.bulk_str("index");
        out.bulk_str("spec");
        out.map(1);
        out.bulk_str("index");
        out.int(c.first_key as i64);
        out.bulk_str("find_keys");
        out.map(2);
        out.bulk_str("type");
        out.bulk_str("range");
        out.bulk_str("spec");
        out.map(3);
        out.bulk_str("lastkey");
        out.int(if c.last_key < 0 {
            c.last_key as i64
        } else {
            (c.last_key - c.first_key) as i64
        });
        out.bulk_str("keystep");
        out.int(c.key_step as i64);
        out.bulk_str("limit");
        out.int(0);
    } else {
        out.array(0);
    }
    out.array(c.subcommands.len());
    for s in c.subcommands {
        reply_info(out, s);
    }
}

/// COMMAND
///
/// # Format
/// `COMMAND` — COMMAND INFO of every command.
fn command(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let rows: Vec<&'static Command> = ctx.srv.table.top_level().collect();
    ctx.out.array(rows.len());
    for c in rows {
        reply_info(ctx.out, c);
    }
    Ok(())
}

/// COMMAND COUNT
///
/// # Format
/// `COMMAND COUNT` — the number of (top-level) commands.
fn command_count(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let n = ctx.srv.table.top_level().count();
    ctx.out.int(n as i64);
    Ok(())
}

fn lookup(ctx: &Ctx, name: &[u8]) -> Option<&'static Command> {
    let t = &ctx.srv.table;
    let s = std::str::from_utf8(name).ok()?;
    t.find(s.as_bytes()).map(|i| t.rows[i])
}

/// COMMAND INFO [command-name [command-name ...]]
///
/// # Format
/// `COMMAND INFO [name ...]` — name, arity, flags, keys, ACL categories, tips, key specs and
/// subcommands of each; nil for unknown names.
fn command_info(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() == 2 {
        return command(ctx, args);
    }
    ctx.out.array(args.len() - 2);
    for name in args.tail(2).iter() {
        match lookup(ctx, name) {
            Some(c) => reply_info(ctx.out, c),
            None => ctx.out.null_array(),
        }
    }
    Ok(())
}

/// One argument of COMMAND DOCS's tree.
#[derive(Debug, Clone, PartialEq)]
pub struct DocArg {
    pub name: String,
    pub kind: &'static str,
    pub token: Option<String>,
    pub optional: bool,
    pub multiple: bool,
    pub args: Vec<DocArg>,
}

fn tokenize(syntax: &str) -> Vec<String> {
    let mut toks = Vec::new();
    let mut cur = String::new();
    for ch in syntax.chars() {
        match ch {
            '[' | ']' | '(' | ')' | '|' => {
                if !cur.is_empty() {
                    toks.push(std::mem::take(&mut cur));
                }
                toks.push(ch.to_string());
            }
            ' ' => {
                if !cur.is_empty() {
                    toks.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(ch),
        }
    }
    if !cur.is_empty() {
        toks.push(cur);
    }
    toks
}

fn is_token_word(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_uppercase()) && !w.chars().any(|c| c.is_ascii_lowercase())
}

fn leaf(word: &str) -> DocArg {
    if is_token_word(word) {
        return DocArg {
            name: word.to_ascii_lowercase(),
            kind: "pure-token",
            token: Some(word.to_string()),
            optional: false,
            multiple: false,
            args: Vec::new(),
        };
    }
    let (name, kind) = match word.split_once(':') {
        Some((n, "integer")) => (n, "integer"),
        Some((n, "double")) => (n, "double"),
        Some((n, "key")) => (n, "key"),
        Some((n, "unix-time")) => (n, "unix-time"),
        _ if word == "key" => (word, "key"),
        _ if word == "pattern" => (word, "pattern"),
        // A colon that is not a type suffix is part of the name (`ip:port`).
        _ => (word, "string"),
    };
    DocArg {
        name: name.to_string(),
        kind,
        token: None,
        optional: false,
        multiple: false,
        args: Vec::new(),
    }
}

fn block(name: &str, kind: &'static str, args: Vec<DocArg>) -> DocArg {
    DocArg {
        name: name.to_string(),
        kind,
        token: None,
        optional: false,
        multiple: false,
        args,
    }
}

/// Collapses `TOKEN arg` into one argument carrying the token, and a lone item into itself.
fn as_one(mut items: Vec<DocArg>) -> DocArg {
    if items.len() == 2
        && items[0].kind == "pure-token"
        && items[1].token.is_none()
        && items[1].kind != "pure-token"
    {
        let mut a = items.pop().expect("two items");
        a.token = items[0].token.clone();
        return a;
    }
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    // `TOKEN a b`: a block introduced by the token, as Redis's `LIMIT offset count`.
    if items.len() > 2
        && items[0].kind == "pure-token"
        && !items[0].optional
        && !items[0].multiple
        && items[1..].iter().all(|a| a.kind != "pure-token")
    {
        let token = items.remove(0).token;
        let name = items
            .iter()
            .map(|a| a.name.clone())
            .collect::<Vec<_>>()
            .join("-");
        let mut b = block(&name, "block", items);
        b.token = token;
        return b;
    }
    let name = items
        .iter()
        .map(|a| a.name.clone())
        .collect::<Vec<_>>()
        .join("-");
    block(&name, "block", items)
}

/// Parses a sequence until `]` or the end: alternatives separated by `|`.
fn parse_seq(toks: &[String], pos: &mut usize) -> Vec<DocArg> {
    let mut alts: Vec<Vec<DocArg>> = vec![Vec::new()];
    while *pos < toks.len() {
        let t = toks[*pos].as_str();
        *pos += 1;
        match t {
            "]" | ")" => break,
            "|" => alts.push(Vec::new()),
            // `(A | B)`: a required group, e.g. LINSERT's `key where:(BEFORE | AFTER) pivot element`,
            // where `name:` names it.
            name if name.ends_with(':') && toks.get(*pos).map(String::as_str) == Some("(") => {
                *pos += 1;
                let mut one = as_one(parse_seq(toks, pos));
                one.name = name.trim_end_matches(':').to_string();
                alts.last_mut().expect("one alternative").push(one);
            }
            "(" => {
                let inner = parse_seq(toks, pos);
                alts.last_mut()
                    .expect("one alternative")
                    .push(as_one(inner));
            }
            "[" => {
                let start = *pos;
                let inner = parse_seq(toks, pos);
                let cur = alts.last_mut().expect("one alternative");
                // `x [x ...]`: the bracket repeats the items before it.
                let raw: Vec<&str> = toks[start..*pos - 1].iter().map(|s| s.as_str()).collect();
                if raw.last() == Some(&"...") {
                    let n = inner.len();
                    if n > 0 && cur.len() >= n && cur[cur.len() - n..] == inner[..] {
                        let repeated = cur.split_off(cur.len() - n);
                        let mut one = as_one(repeated);
                        one.multiple = true;
                        cur.push(one);
                        continue;
                    }
                }
                let mut one = as_one(inner);
                one.optional = true;
                cur.push(one);
            }
            "..." => {}
            word => alts.last_mut().expect("one alternative").push(leaf(word)),
        }
    }
    if alts.len() == 1 {
        return alts.pop().expect("one alternative");
    }
    let options: Vec<DocArg> = alts.into_iter().map(as_one).collect();
    let name = options
        .iter()
        .map(|a| a.name.clone())
        .collect::<Vec<_>>()
        .join("-");
    vec![block(&name, "oneof", options)]
}

/// The argument tree of a syntax line such as `key value [NX | XX] [GET]`.
pub fn doc_args(syntax: &str) -> Vec<DocArg> {
    let toks = tokenize(syntax);
    let mut pos = 0;
    let mut all = Vec::new();
    while pos < toks.len() {
        all.extend(parse_seq(&toks, &mut pos));
    }
    // A top-level `TOKEN value` pair is one argument, as in Redis's own docs.
    let mut merged: Vec<DocArg> = Vec::new();
    for a in all {
        if let Some(prev) = merged.last() {
            if prev.kind == "pure-token"
                && !prev.optional
                && a.token.is_none()
                && a.kind != "pure-token"
                && a.args.is_empty()
                && !a.optional
            {
                let prev = merged.pop().expect("checked");
                let mut a = a;
                a.token = prev.token;
                merged.push(a);
                continue;
            }
        }
        merged.push(a);
    }
    merged
}

fn reply_doc_arg(out: &mut Reply, a: &DocArg) {
    let mut fields = 2;
    fields += a.token.is_some() as usize;
    let flags: Vec<&str> = [("optional", a.optional), ("multiple", a.multiple)]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
    fields += !flags.is_empty() as usize;
    fields += !a.args.is_empty() as usize;
    out.map(fields);
    out.bulk_str("name");
    out.bulk_str(&a.name);
    out.bulk_str("type");
    out.bulk_str(a.kind);
    if let Some(t) = &a.token {
        out.bulk_str("token");
        out.bulk_str(t);
    }
    if !flags.is_empty() {
        out.bulk_str("flags");
        out.array(flags.len());
        for f in flags {
            out.simple(f);
        }
    }
    if !a.args.is_empty() {
        out.bulk_str("arguments");
        out.array(a.args.len());
        for sub in &a.args {
            reply_doc_arg(out, sub);
        }
    }
}

fn reply_docs(out: &mut Reply, c: &Command) {
    let args = doc_args(c.syntax);
    let fields = 4 + !args.is_empty() as usize + !c.subcommands.is_empty() as usize;
    out.map(fields);
    out.bulk_str("summary");
    out.bulk_str(c.summary);
    out.bulk_str("since");
    out.bulk_str(c.since);
    out.bulk_str("group");
    out.bulk_str(c.group);
    out.bulk_str("complexity");
    out.bulk_str(c.complexity);
    if !args.is_empty() {
        out.bulk_str("arguments");
        out.array(args.len());
        for a in &args {
            reply_doc_arg(out, a);
        }
    }
    if !c.subcommands.is_empty() {
        out.bulk_str("subcommands");
        out.map(c.subcommands.len());
        for s in c.subcommands {
            out.bulk_str(s.name);
            reply_docs(out, s);
        }
    }
}

/// COMMAND DOCS [command-name [command-name ...]]
///
/// # Format
/// `COMMAND DOCS [name ...]` — a map from name to summary, since, group, complexity, arguments and
/// subcommands; unknown names are left out.
fn command_docs(ctx: &mut Ctx, args: Args) -> CmdResult {
    let rows: Vec<&'static Command> = if args.len() == 2 {
        ctx.srv.table.top_level().collect()
    } else {
        args.tail(2).iter().filter_map(|n| lookup(ctx, n)).collect()
    };
    ctx.out.map(rows.len());
    for c in rows {
        ctx.out.bulk_str(c.name);
        reply_docs(ctx.out, c);
    }
    Ok(())
}

/// COMMAND LIST [FILTERBY MODULE module-name | ACLCAT category | PATTERN pattern]
///
/// # Format
/// `COMMAND LIST [FILTERBY <MODULE name | ACLCAT category | PATTERN pattern>]` — command names.
fn command_list(ctx: &mut Ctx, args: Args) -> CmdResult {
    enum Filter<'a> {
        All,
        Module,
        AclCat(String),
        Pattern(&'a [u8]),
    }
    let filter = match args.len() {
        2 => Filter::All,
        5 if is(&args[2], "filterby") => {
            if is(&args[3], "module") {
                Filter::Module
            } else if is(&args[3], "aclcat") {
                Filter::AclCat(format!("@{}", text(&args[4]).to_ascii_lowercase()))
            } else if is(&args[3], "pattern") {
                Filter::Pattern(&args[4])
            } else {
                return Err(crate::resp::reply::SYNTAX.into());
            }
        }
        _ => return Err(crate::resp::reply::SYNTAX.into()),
    };
    let names: Vec<&'static str> = ctx
        .srv
        .table
        .rows
        .iter()
        .filter(|c| match &filter {
            Filter::All => true,
            Filter::Module => false,
            Filter::AclCat(cat) => acl_categories(c).contains(cat),
            Filter::Pattern(p) => glob::matches(p, c.name.as_bytes(), true),
        })
        .map(|c| c.name)
        .collect();
    ctx.out.array(names.len());
    for n in names {
        ctx.out.bulk_str(n);
    }
    Ok(())
}

/// COMMAND GETKEYS command [arg [arg ...]]
///
/// # Format
/// `COMMAND GETKEYS command [arg ...]` — the key arguments of that command line.
fn command_getkeys(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args.tail(2);
    let t = &ctx.srv.table;
    let Some(mut idx) = t.find(&sub[0]) else {
        return Err("ERR Invalid command specified".into());
    };
    if !t.rows[idx].subcommands.is_empty() && sub.len() >= 2 {
        idx = t
            .find_sub(idx, &sub[1])
            .ok_or("ERR Invalid command specified")?;
    }
    let c = t.rows[idx];
    let argc = sub.len() as i32;
    if (c.arity > 0 && c.arity != argc) || argc < -c.arity {
        return Err("ERR Invalid number of arguments specified for command".into());
    }
    if let Some(find) = c.key_finder {
        let keys = find(sub).ok_or("ERR Invalid arguments specified for command")?;
        ctx.out.bulks(keys.iter().map(|&k| &sub[k]));
        return Ok(());
    }
    let mut keys = c.key_positions(sub.len());
    // MSET-style commands: a trailing key without its value is not a key.
    if c.key_step > 1 && c.last_key < 0 {
        keys.retain(|&k| k + (c.key_step as usize - 1) < sub.len());
    }
    if keys.is_empty() {
        return Err("ERR The command has no key arguments".into());
    }
    ctx.out.array(keys.len());
    for k in keys {
        ctx.out.bulk(&sub[k]);
    }
    Ok(())
}

const COMMAND_HELP: &[&str] = &[
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
];

/// COMMAND HELP
///
/// # Format
/// `COMMAND HELP` — the subcommands.
fn command_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help("COMMAND", COMMAND_HELP);
    Ok(())
}

const FLAGS: u32 = LOADING | STALE;

const COMMAND_SUBCOMMANDS: &[Command] = &[
    Command::new("command|count", command_count, 2, FLAGS)
        .group(GROUP)
        .doc("Returns a count of commands.", "2.8.13", "O(1)", ""),
    Command::new("command|info", command_info, -2, FLAGS)
        .group(GROUP)
        .doc(
            "Returns information about one, multiple or all commands.",
            "2.8.13",
            "O(N) where N is the number of commands to look up",
            "[command-name [command-name ...]]",
        ),
    Command::new("command|docs", command_docs, -2, FLAGS)
        .group(GROUP)
        .doc(
            "Returns documentary information about one, multiple or all commands.",
            "7.0.0",
            "O(N) where N is the number of commands to look up",
            "[command-name [command-name ...]]",
        ),
    Command::new("command|list", command_list, -2, FLAGS)
        .group(GROUP)
        .doc(
            "Returns a list of command names.",
            "7.0.0",
            "O(N) where N is the total number of Redis commands",
            "[FILTERBY filterby:(MODULE module-name | ACLCAT category | PATTERN pattern)]",
        ),
    Command::new("command|getkeys", command_getkeys, -4, FLAGS)
        .group(GROUP)
        .doc(
            "Extracts the key names from an arbitrary command.",
            "2.8.13",
            "O(N) where N is the number of arguments to the command",
            "command [arg [arg ...]]",
        ),
    Command::new("command|help", command_help, 2, FLAGS)
        .group(GROUP)
        .doc(
            "Returns helpful text about the different subcommands.",
            "5.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[Command::new("command", command, -1, FLAGS)
    .group(GROUP)
    .subs(COMMAND_SUBCOMMANDS)
    .doc(
        "Returns detailed information about all commands.",
        "2.8.13",
        "O(N) where N is the total number of Redis commands",
        "",
    )];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_becomes_argument_tree() {
        let a = doc_args(
            "key value [NX | XX] [GET] [EX seconds:integer | PX milliseconds:integer | KEEPTTL]",
        );
        assert_eq!(a.len(), 5);
        assert_eq!(a[0].kind, "key");
        assert_eq!(a[2].kind, "oneof");
        assert!(a[2].optional);
        assert_eq!(a[2].args[0].token.as_deref(), Some("NX"));
        assert_eq!(a[3].kind, "pure-token");
        assert_eq!(a[4].args[0].name, "seconds");
        assert_eq!(a[4].args[0].token.as_deref(), Some("EX"));
        assert_eq!(a[4].args[0].kind, "integer");

        let m = doc_args("key value [key value ...]");
        assert_eq!(m.len(), 1);
        assert!(m[0].multiple);
        assert_eq!(m[0].kind, "block");

        let k = doc_args("key [key ...]");
        assert_eq!(k.len(), 1);
        assert!(k[0].multiple);
        assert_eq!(k[0].kind, "key");

        let g = doc_args("key where:(BEFORE | AFTER) pivot element");
        assert_eq!(g.len(), 4);
        assert_eq!(g[1].name, "where");
        assert_eq!(g[1].kind, "oneof");
        assert!(!g[1].optional);
        assert_eq!(g[1].args[1].token.as_deref(), Some("AFTER"));

        let l = doc_args("key min max [LIMIT offset:integer count:integer]");
        assert_eq!(l[3].kind, "block");
        assert_eq!(l[3].token.as_deref(), Some("LIMIT"));
        assert!(l[3].optional);
        assert_eq!(l[3].args.len(), 2);
        assert_eq!(l[3].args[0].kind, "integer");

        let s = doc_args("cursor:integer [MATCH pattern] [COUNT count:integer]");
        assert_eq!(s[1].token.as_deref(), Some("MATCH"));
        assert!(s[1].optional);
    }
}
