//! The COMMAND family: COMMAND, COMMAND COUNT|INFO|DOCS|LIST|GETKEYS|HELP, all answered from the
//! command table. DOCS builds each command's argument tree from its row's syntax line, so the hints
//! redis-cli shows and the syntax in the docs never disagree with what the server parses.

use super::keyspec::{BeginSearch, FindKeys, KeySpec, KEY_FLAG_NAMES};
use super::parse::{is, text};
use super::{
    acl, Args, CmdError, CmdResult, Command, Ctx, FLAG_NAMES, LOADING, NO_MANDATORY_KEYS, STALE,
};
use crate::resp::reply::Reply;
use crate::store::glob;

const GROUP: &str = "server";

pub use crate::server::table::acl_bits;

/// The ACL categories of a row (`@read`, `@string`, ...) in the order Redis lists them: COMMAND
/// INFO's seventh field, COMMAND LIST's ACLCAT filter and the docs pages.
pub fn acl_categories(c: &Command) -> Vec<String> {
    let bits = acl_bits(c);
    acl::NAMES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| format!("@{n}"))
        .collect()
}

fn reply_key_spec(out: &mut Reply, ks: &KeySpec) {
    out.map(3 + ks.notes.is_some() as usize);
    if let Some(notes) = ks.notes {
        out.bulk_str("notes");
        out.bulk_str(notes);
    }
    out.bulk_str("flags");
    let flags: Vec<&str> = KEY_FLAG_NAMES
        .iter()
        .filter(|(f, _)| ks.flags & f != 0)
        .map(|(_, n)| *n)
        .collect();
    out.set(flags.len());
    for f in flags {
        out.simple(f);
    }
    out.bulk_str("begin_search");
    out.map(2);
    out.bulk_str("type");
    match ks.begin_search {
        BeginSearch::Index(pos) => {
            out.bulk_str("index");
            out.bulk_str("spec");
            out.map(1);
            out.bulk_str("index");
            out.int(pos as i64);
        }
        BeginSearch::Keyword { keyword, startfrom } => {
            out.bulk_str("keyword");
            out.bulk_str("spec");
            out.map(2);
            out.bulk_str("keyword");
            out.bulk_str(keyword);
            out.bulk_str("startfrom");
            out.int(startfrom as i64);
        }
        BeginSearch::Unknown => {
            out.bulk_str("unknown");
            out.bulk_str("spec");
            out.map(0);
        }
    }
    out.bulk_str("find_keys");
    out.map(2);
    out.bulk_str("type");
    match ks.find_keys {
        FindKeys::Range {
            lastkey,
            keystep,
            limit,
        } => {
            out.bulk_str("range");
            out.bulk_str("spec");
            out.map(3);
            out.bulk_str("lastkey");
            out.int(lastkey as i64);
            out.bulk_str("keystep");
            out.int(keystep as i64);
            out.bulk_str("limit");
            out.int(limit as i64);
        }
        FindKeys::Keynum {
            keynumidx,
            firstkey,
            keystep,
        } => {
            out.bulk_str("keynum");
            out.bulk_str("spec");
            out.map(3);
            out.bulk_str("keynumidx");
            out.int(keynumidx as i64);
            out.bulk_str("firstkey");
            out.int(firstkey as i64);
            out.bulk_str("keystep");
            out.int(keystep as i64);
        }
        FindKeys::Unknown => {
            out.bulk_str("unknown");
            out.bulk_str("spec");
            out.map(0);
        }
    }
}

/// One command's COMMAND INFO entry, as server.c's `addReplyCommandInfo`.
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
    out.set(c.tips.len());
    for tip in c.tips {
        out.bulk_str(tip);
    }
    let specs = c.key_specs.as_slice();
    out.set(specs.len());
    for ks in specs {
        reply_key_spec(out, ks);
    }
    out.set(c.subcommands.len());
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
            // Redis's `addReplyNull`: `$-1` in RESP2.
            None => ctx.out.null(),
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
    /// Repeated with its token each time (`GET pattern [GET pattern ...]`).
    pub multiple_token: bool,
    /// A pattern that names keys (SORT's `BY` and `GET`, written `pattern:key-pattern`): these
    /// share one key spec.
    pub key_pattern: bool,
    pub args: Vec<DocArg>,
    /// The version that added it (the row's `arg_since`).
    pub since: Option<&'static str>,
    /// For a key: the key spec that finds it.
    pub key_spec_index: Option<usize>,
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

/// The punctuation a client types as a keyword (XADD's `*`, the trim operators `=` and `~`), with
/// the names Redis's docs give them.
const PUNCTUATION_TOKENS: &[(&str, &str)] = &[
    ("*", "auto_id"),
    ("=", "equal"),
    ("~", "approximately"),
    ("$", "new_id"),
];

fn leaf(word: &str) -> DocArg {
    if let Some(&(_, name)) = PUNCTUATION_TOKENS.iter().find(|(t, _)| *t == word) {
        let mut a = leaf("X");
        a.name = name.to_string();
        a.token = Some(word.to_string());
        return a;
    }
    if is_token_word(word) {
        return DocArg {
            name: word.to_ascii_lowercase(),
            kind: "pure-token",
            token: Some(word.to_string()),
            optional: false,
            multiple: false,
            multiple_token: false,
            key_pattern: false,
            args: Vec::new(),
            since: None,
            key_spec_index: None,
        };
    }
    // `name:TOKEN`: a keyword with a name of its own (ZADD's `change:CH`).
    if let Some((name, token)) = word.split_once(':').filter(|(_, t)| is_token_word(t)) {
        let mut a = leaf(token);
        a.name = name.to_string();
        return a;
    }
    let (name, kind) = match word.split_once(':') {
        Some((n, "integer")) => (n, "integer"),
        // A string named `key` (CLUSTER KEYSLOT's), not a key.
        Some((n, "string")) => (n, "string"),
        Some((n, "double")) => (n, "double"),
        Some((n, "key")) => (n, "key"),
        Some((n, "unix-time")) => (n, "unix-time"),
        Some((n, "key-pattern")) => (n, "pattern"),
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
        multiple_token: false,
        key_pattern: word.ends_with(":key-pattern"),
        args: Vec::new(),
        since: None,
        key_spec_index: None,
    }
}

fn block(name: &str, kind: &'static str, args: Vec<DocArg>) -> DocArg {
    DocArg {
        name: name.to_string(),
        kind,
        token: None,
        optional: false,
        multiple: false,
        multiple_token: false,
        key_pattern: false,
        args,
        since: None,
        key_spec_index: None,
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
    // `TOKEN a b`: a block introduced by the token, as Redis's `LIMIT offset count` (or XINFO
    // STREAM's `FULL [COUNT count]`).
    if items.len() >= 2
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
            .join("_");
        let mut b = block(&name, "block", items);
        b.token = token;
        return b;
    }
    let name = items
        .iter()
        .map(|a| a.name.clone())
        .collect::<Vec<_>>()
        .join("_");
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
                // A named group of one plain argument is a block holding it (CONFIG GET's
                // `parameter:(parameter)`), as in Redis's docs.
                if !matches!(one.kind, "oneof" | "block") {
                    one = block("", "block", vec![one]);
                }
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
                        one.multiple_token = n > 1 && one.token.is_some();
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
        .join("_");
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

/// A row's argument tree as COMMAND DOCS sends it: each key with the index of its key spec (in
/// order, the last spec for any further keys; every key pattern with the one spec they share, next
/// after the keys before the first), arguments with the version that added them.
pub fn command_doc_args(c: &Command) -> Vec<DocArg> {
    fn number_keys(
        args: &mut [DocArg],
        specs: usize,
        seen: &mut usize,
        patterns: &mut Option<usize>,
    ) {
        for a in args {
            if specs > 0 && (a.kind == "key" || a.key_pattern) {
                let index = match (a.key_pattern, *patterns) {
                    (true, Some(shared)) => shared,
                    _ => {
                        *seen += 1;
                        *seen - 1
                    }
                };
                if a.key_pattern {
                    *patterns = Some(index);
                }
                a.key_spec_index = Some(index.min(specs - 1));
            }
            number_keys(&mut a.args, specs, seen, patterns);
        }
    }
    /// The argument at `path`: `name` is the first argument so named, depth first; `outer.name`
    /// the first so named inside `outer` (FLUSHALL's `async.async` is the `ASYNC` keyword in the
    /// choice also named `async`).
    fn find<'a>(args: &'a mut [DocArg], path: &str) -> Option<&'a mut DocArg> {
        let (head, rest) = match path.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (path, None),
        };
        for a in args {
            if a.name == head {
                return match rest {
                    Some(rest) => find(&mut a.args, rest),
                    None => Some(a),
                };
            }
            if let Some(found) = find(&mut a.args, path) {
                return Some(found);
            }
        }
        None
    }
    let mut args = doc_args(c.syntax);
    number_keys(&mut args, c.key_specs.as_slice().len(), &mut 0, &mut None);
    for &(path, version) in c.arg_since {
        if let Some(a) = find(&mut args, path) {
            a.since = Some(version);
        }
    }
    args
}

fn reply_doc_arg(out: &mut Reply, a: &DocArg) {
    let mut fields = 2;
    fields += a.key_spec_index.is_some() as usize;
    fields += a.token.is_some() as usize;
    fields += a.since.is_some() as usize;
    let flags: Vec<&str> = [
        ("optional", a.optional),
        ("multiple", a.multiple),
        ("multiple_token", a.multiple_token),
    ]
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
    if let Some(i) = a.key_spec_index {
        out.bulk_str("key_spec_index");
        out.int(i as i64);
    }
    if let Some(t) = &a.token {
        out.bulk_str("token");
        out.bulk_str(t);
    }
    if let Some(v) = a.since {
        out.bulk_str("since");
        out.bulk_str(v);
    }
    if !flags.is_empty() {
        out.bulk_str("flags");
        out.set(flags.len());
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

/// One command's COMMAND DOCS entry, as server.c's `addReplyCommandDocs`.
fn reply_docs(out: &mut Reply, c: &Command) {
    let args = command_doc_args(c);
    let doc_flags: Vec<&str> = [("deprecated", c.deprecated.is_some()), ("syscmd", c.syscmd)]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
    let fields = 3
        + !c.complexity.is_empty() as usize
        + !doc_flags.is_empty() as usize
        + 2 * c.deprecated.is_some() as usize
        + !c.history.is_empty() as usize
        + !args.is_empty() as usize
        + !c.subcommands.is_empty() as usize;
    out.map(fields);
    out.bulk_str("summary");
    out.bulk_str(c.summary);
    out.bulk_str("since");
    out.bulk_str(c.since);
    out.bulk_str("group");
    out.bulk_str(c.group);
    if !c.complexity.is_empty() {
        out.bulk_str("complexity");
        out.bulk_str(c.complexity);
    }
    if !doc_flags.is_empty() {
        out.bulk_str("doc_flags");
        out.set(doc_flags.len());
        for f in doc_flags {
            out.simple(f);
        }
    }
    if let Some((since, replaced_by)) = c.deprecated {
        out.bulk_str("deprecated_since");
        out.bulk_str(since);
        out.bulk_str("replaced_by");
        out.bulk_str(replaced_by);
    }
    if !c.history.is_empty() {
        out.bulk_str("history");
        out.set(c.history.len());
        for (version, change) in c.history {
            out.array(2);
            out.bulk_str(version);
            out.bulk_str(change);
        }
    }
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

/// The keys of the command line `sub` with their flags, as Redis's `getKeysFromCommandWithSpecs`:
/// the key specs when their flags are fixed and they fit the line, else the row's own finder, which
/// flags the keys as this line uses them. Errors as COMMAND GETKEYS gives them.
fn keys_of_line(t: &super::Table, sub: Args) -> Result<Vec<(usize, u32)>, CmdError> {
    let Some(mut idx) = t.find(&sub[0]) else {
        return Err("ERR Invalid command specified".into());
    };
    if !t.rows[idx].subcommands.is_empty() && sub.len() >= 2 {
        idx = t
            .find_sub(idx, &sub[1])
            .ok_or("ERR Invalid command specified")?;
    }
    let c = t.rows[idx];
    if !c.key_specs.has_keys() && c.key_finder.is_none() {
        return Err("ERR The command has no key arguments".into());
    }
    let argc = sub.len() as i32;
    if (c.arity > 0 && c.arity != argc) || argc < -c.arity {
        return Err("ERR Invalid number of arguments specified for command".into());
    }
    let keys = c.line_keys(sub);
    if keys.is_empty() && !c.has(NO_MANDATORY_KEYS) {
        return Err("ERR Invalid arguments specified for command".into());
    }
    Ok(keys)
}

/// COMMAND GETKEYS command [arg [arg ...]]
///
/// # Format
/// `COMMAND GETKEYS command [arg ...]` — the key arguments of that command line.
fn command_getkeys(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args.tail(2);
    let keys = keys_of_line(&ctx.srv.table, sub)?;
    ctx.out.bulks(keys.iter().map(|&(k, _)| &sub[k]));
    Ok(())
}

/// COMMAND GETKEYSANDFLAGS command [arg [arg ...]]
///
/// # Format
/// `COMMAND GETKEYSANDFLAGS command [arg ...]` — each key argument of that command line with its
/// key-spec flags (`RO`, `RW`, `OW`, `RM`, `access`, `update`, `insert`, `delete`).
fn command_getkeysandflags(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args.tail(2);
    let keys = keys_of_line(&ctx.srv.table, sub)?;
    ctx.out.array(keys.len());
    for (pos, flags) in keys {
        ctx.out.array(2);
        ctx.out.bulk(&sub[pos]);
        let names: Vec<&str> = KEY_FLAG_NAMES
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, name)| *name)
            .collect();
        ctx.out.set(names.len());
        for n in names {
            ctx.out.simple(n);
        }
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
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
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
// Every COMMAND row is @connection too, as in Redis.
const ACL: u32 = acl::CONNECTION;

const COMMAND_SUBCOMMANDS: &[Command] = &[
    Command::new("command|count", command_count, 2, FLAGS)
        .acl(ACL)
        .group(GROUP)
        .doc("Get total number of Redis commands", "2.8.13", "O(1)", ""),
    Command::new("command|info", command_info, -2, FLAGS)
        .history(&[(
            "7.0.0",
            "Allowed to be called with no argument to get info on all commands.",
        )])
        .acl(ACL)
        .tips(&["nondeterministic_output_order"])
        .group(GROUP)
        .doc(
            "Get array of specific Redis command details, or all when no argument is given.",
            "2.8.13",
            "O(N) where N is the number of commands to look up",
            "[command-name [command-name ...]]",
        ),
    Command::new("command|docs", command_docs, -2, FLAGS)
        .acl(ACL)
        .tips(&["nondeterministic_output_order"])
        .group(GROUP)
        .doc(
            "Get array of specific Redis command documentation",
            "7.0.0",
            "O(N) where N is the number of commands to look up",
            "[command-name [command-name ...]]",
        ),
    Command::new("command|list", command_list, -2, FLAGS)
        .acl(ACL)
        .tips(&["nondeterministic_output_order"])
        .group(GROUP)
        .doc(
            "Get an array of Redis command names",
            "7.0.0",
            "O(N) where N is the total number of Redis commands",
            "[FILTERBY filterby:(MODULE module-name | ACLCAT category | PATTERN pattern)]",
        ),
    Command::new("command|getkeys", command_getkeys, -4, FLAGS)
        .acl(ACL)
        .group(GROUP)
        .doc(
            "Extract keys given a full Redis command",
            "2.8.13",
            "O(N) where N is the number of arguments to the command",
            "command [arg [arg ...]]",
        ),
    Command::new(
        "command|getkeysandflags",
        command_getkeysandflags,
        -4,
        FLAGS,
    )
    .acl(ACL)
    .group(GROUP)
    .doc(
        "Extract keys and access flags given a full Redis command",
        "7.0.0",
        "O(N) where N is the number of arguments to the command",
        "command [arg [arg ...]]",
    ),
    Command::new("command|help", command_help, 2, FLAGS)
        .acl(ACL)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "5.0.0",
            "O(1)",
            "",
        ),
];

pub const COMMANDS: &[Command] = &[Command::new("command", command, -1, FLAGS)
    .acl(ACL)
    .tips(&["nondeterministic_output_order"])
    .group(GROUP)
    .subs(COMMAND_SUBCOMMANDS)
    .doc(
        "Get array of Redis command details",
        "2.8.13",
        "O(N) where N is the total number of Redis commands",
        "",
    )];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `arg_since` entry of every row names an argument of its syntax.
    #[test]
    fn arg_since_names_arguments() {
        fn count(args: &[DocArg]) -> usize {
            args.iter()
                .map(|a| a.since.is_some() as usize + count(&a.args))
                .sum()
        }
        let t = super::super::Table::build(super::super::families());
        for c in &t.rows {
            assert_eq!(
                count(&command_doc_args(c)),
                c.arg_since.len(),
                "{}: an arg_since entry names no argument",
                c.name
            );
        }
    }

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
