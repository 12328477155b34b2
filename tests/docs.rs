//! The command reference under `docs/commands/`, kept true by the command table.
//!
//! Convention: one page per top-level command, named by the command in uppercase (`ZADD.md`,
//! `GOBLIN.CAD.md`, `LUAU.EVAL.md`); a container's page (`CONFIG.md`, `CLIENT.md`, `SCRIPT.md`, ...)
//! covers all its subcommands. Each page is `# NAME`, then a generated block between
//! `GEN_BEGIN` and `GEN_END` (syntax, summary, group, since, complexity, arity, flags, keys, key
//! specs and ACL categories of the row and of each subcommand row), then hand-written prose: replies in
//! RESP2 and RESP3, errors, differences from Redis, an example session.
//!
//! `cargo test --release --test docs` fails when a table row has no page, when a page's title names
//! no command, when a generated block or the index (`docs/commands/README.md`) disagrees with the
//! table, or when a page's prose is still the skeleton (`TODO(prose)`).
//!
//! `GOBLIN_WRITE_DOCS=1 cargo test --release --test docs` rewrites every generated block and the
//! index in place (prose untouched) and creates missing pages with a prose skeleton, which the
//! check then refuses until someone writes it.
//!
//! The second test asks a running server for `COMMAND DOCS` (what redis-cli's hints are built from)
//! and checks every command and subcommand has a summary, since, group and an argument tree that
//! names exactly the words of its syntax line.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use goblin_core::cmd::command::{acl_categories, doc_args, DocArg};
use goblin_core::cmd::keyspec::{BeginSearch, FindKeys, KEY_FLAG_NAMES};
use goblin_core::cmd::{Command, Table, FLAG_NAMES, MOVABLEKEYS};
use goblin_core::script::EngineId;

const GEN_BEGIN: &str =
    "<!-- generated from the command table: do not edit (GOBLIN_WRITE_DOCS=1 rewrites it) -->";
const GEN_END: &str = "<!-- end generated -->";
const TODO: &str = "TODO(prose)";

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands")
}

fn writing() -> bool {
    std::env::var_os("GOBLIN_WRITE_DOCS").is_some_and(|v| v != "0")
}

/// A command's name as a user types it: `CONFIG GET` for the row `config|get`.
fn display_name(c: &Command) -> String {
    c.name.replace('|', " ").to_ascii_uppercase()
}

/// The page a top-level command lives on, by its name.
fn page_name(top: &str) -> String {
    top.to_ascii_uppercase()
}

/// The row's syntax as a reader wants it: type suffixes dropped (`seconds:integer` is `seconds`),
/// a keyword's name dropped (`change:CH` is `CH`), a named group of choices `where:(A | B)` shown
/// as `<A | B>` (bare when it is all of a `[...]`: `[condition:(NX | XX)]` is `[NX | XX]`), and a
/// named group of anything else bare (`options:(count [WITHSCORES])`).
fn display_syntax(syntax: &str) -> String {
    let chars: Vec<char> = syntax.chars().collect();
    // What each parenthesis of a named group shows: `<` and `>`, or nothing.
    let mut shown: BTreeMap<usize, &str> = BTreeMap::new();
    for (open, _) in chars.iter().enumerate().filter(|(_, c)| **c == '(') {
        if open == 0 || chars[open - 1] != ':' {
            continue;
        }
        let (mut depth, mut close, mut choice) = (0, open, false);
        for (k, &c) in chars.iter().enumerate().skip(open) {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '|' if depth == 1 => choice = true,
                _ => {}
            }
            if depth == 0 {
                close = k;
                break;
            }
        }
        let name_start = chars[..open]
            .iter()
            .rposition(|c| " [(|".contains(*c))
            .map_or(0, |k| k + 1);
        let sole =
            name_start > 0 && chars[name_start - 1] == '[' && chars.get(close + 1) == Some(&']');
        let (l, r) = if choice && !sole {
            ("<", ">")
        } else {
            ("", "")
        };
        shown.insert(open, l);
        shown.insert(close, r);
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, next: Option<char>| {
        if word.is_empty() {
            return;
        }
        if next == Some('(') && word.ends_with(':') {
            word.clear();
            return;
        }
        let w = match word.split_once(':') {
            Some((n, "integer" | "double" | "key" | "key-pattern" | "unix-time" | "string")) => {
                n.to_string()
            }
            Some((_, t)) if is_keyword(t) => t.to_string(),
            _ => word.clone(),
        };
        out.push_str(&w);
        word.clear();
    };
    for (k, &ch) in chars.iter().enumerate() {
        match ch {
            ' ' | '[' | ']' | '(' | ')' | '|' => {
                flush(&mut word, &mut out, Some(ch));
                match (ch, shown.get(&k)) {
                    (_, Some(s)) => out.push_str(s),
                    ('(', None) => out.push('<'),
                    (')', None) => out.push('>'),
                    (c, None) => out.push(c),
                }
            }
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out, None);
    out
}

/// An upper-case word of a syntax line, a keyword the client types (`NX`, `WITHSCORES`).
fn is_keyword(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_uppercase()) && !w.chars().any(|c| c.is_ascii_lowercase())
}

fn syntax_line(c: &Command) -> String {
    let s = display_syntax(c.syntax);
    if s.is_empty() {
        display_name(c)
    } else {
        format!("{} {s}", display_name(c))
    }
}

fn keys_text(c: &Command) -> String {
    let mut s = if c.first_key > 0 {
        format!(
            "first {}, last {}, step {}",
            c.first_key, c.last_key, c.key_step
        )
    } else {
        "none by position".to_string()
    };
    if c.flags & MOVABLEKEYS != 0 {
        s.push_str("; found by parsing the arguments (movablekeys)");
    }
    if c.first_key <= 0 && c.flags & MOVABLEKEYS == 0 {
        s = "none".to_string();
    }
    s
}

/// The key specs as a reader wants them: how the command uses which arguments (COMMAND INFO's
/// key specs, flags spelt as there).
fn key_specs_text(c: &Command) -> Option<String> {
    let specs = c.key_specs.as_slice();
    if specs.is_empty() {
        return None;
    }
    let parts: Vec<String> = specs
        .iter()
        .map(|ks| {
            let flags: Vec<&str> = KEY_FLAG_NAMES
                .iter()
                .filter(|(f, _)| ks.flags & f != 0)
                .map(|(_, n)| *n)
                .collect();
            let at = match (ks.begin_search, ks.find_keys) {
                (BeginSearch::Index(i), FindKeys::Range { lastkey: 0, .. }) => {
                    format!("argument {i}")
                }
                (
                    BeginSearch::Index(i),
                    FindKeys::Range {
                        lastkey: -1,
                        keystep: 1,
                        ..
                    },
                ) => {
                    format!("arguments {i} to the last")
                }
                (
                    BeginSearch::Index(i),
                    FindKeys::Range {
                        lastkey: -2,
                        keystep: 1,
                        ..
                    },
                ) => {
                    format!("arguments {i} to the last but one")
                }
                (
                    BeginSearch::Index(i),
                    FindKeys::Range {
                        lastkey: -1,
                        keystep: 2,
                        ..
                    },
                ) => {
                    format!("every other argument from {i}")
                }
                (
                    BeginSearch::Index(i),
                    FindKeys::Keynum {
                        keynumidx: 0,
                        firstkey: 1,
                        keystep: 1,
                    },
                ) => format!("the keys counted by argument {i}"),
                (BeginSearch::Unknown, FindKeys::Unknown) => {
                    "arguments at no fixed position".to_string()
                }
                other => format!("{other:?}"),
            };
            let mut t = format!("`{}` on {at}", flags.join(" "));
            if let Some(notes) = ks.notes {
                let _ = write!(t, " ({notes})");
            }
            t
        })
        .collect();
    Some(parts.join("; "))
}

fn facts(c: &Command, o: &mut String) {
    let flags: Vec<&str> = FLAG_NAMES
        .iter()
        .filter(|(f, _)| c.has(*f))
        .map(|(_, n)| *n)
        .collect();
    let flags = if flags.is_empty() {
        "none".to_string()
    } else {
        flags.join(", ")
    };
    let _ = writeln!(o, "```\n{}\n```\n", syntax_line(c));
    let _ = writeln!(o, "{}\n", c.summary);
    let _ = writeln!(o, "- **Group:** {} · **Since:** {}", c.group, c.since);
    // Redis documents no complexity for a few commands (MONITOR); nor do we, to match COMMAND DOCS.
    if !c.complexity.is_empty() {
        let _ = writeln!(o, "- **Complexity:** {}", c.complexity);
    }
    let _ = writeln!(o, "- **Arity:** {} · **Flags:** {flags}", c.arity);
    let _ = writeln!(o, "- **Keys:** {}", keys_text(c));
    if let Some(specs) = key_specs_text(c) {
        let _ = writeln!(o, "- **Key specs:** {specs}");
    }
    let _ = writeln!(o, "- **ACL categories:** {}", acl_categories(c).join(", "));
}

/// The generated block of a top-level command's page (markers included).
fn generated_block(c: &Command) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{GEN_BEGIN}");
    facts(c, &mut o);
    if !c.subcommands.is_empty() {
        let _ = writeln!(o, "\n## Subcommands");
        for s in c.subcommands {
            let _ = writeln!(o, "\n### {}\n", display_name(s));
            facts(s, &mut o);
        }
    }
    o.push_str(GEN_END);
    o
}

fn skeleton(c: &Command) -> String {
    format!(
        "\n\n## Reply\n\n{TODO}: RESP2 and RESP3 replies of {n}.\n\n## Errors\n\n{TODO}\n\n\
         ## Differences from Redis\n\n{TODO}\n\n## Example\n\n```\n{TODO}\n```\n",
        n = display_name(c)
    )
}

/// A page split around its generated block: (text before, text after); `None` if it has none.
fn split_page(text: &str) -> Option<(&str, &str, &str)> {
    let b = text.find(GEN_BEGIN)?;
    let e = text[b..].find(GEN_END)? + b;
    Some((
        &text[..b],
        &text[b..e + GEN_END.len()],
        &text[e + GEN_END.len()..],
    ))
}

fn title(text: &str) -> Option<&str> {
    text.lines().next()?.strip_prefix("# ").map(str::trim)
}

/// The section of the index a command is listed under.
fn section(c: &Command) -> String {
    match c.group {
        "string" => "Strings".into(),
        "bitmap" => "Bitmaps".into(),
        "geo" => "Geospatial indices".into(),
        "hyperloglog" => "HyperLogLog".into(),
        "generic" => "Keys (generic)".into(),
        "hash" => "Hashes".into(),
        "list" => "Lists".into(),
        "set" => "Sets".into(),
        "sorted-set" => "Sorted sets".into(),
        "transactions" => "Transactions".into(),
        "pubsub" => "Pub/sub".into(),
        "scripting" => {
            let e = EngineId::of_command(c.name.as_bytes());
            format!("Scripting: {}", engine_title(e))
        }
        "server" => "Server".into(),
        "connection" => "Connection".into(),
        "goblin" => "Goblin native".into(),
        other => other.to_string(),
    }
}

fn engine_title(e: EngineId) -> &'static str {
    match e {
        EngineId::Lua => "Lua",
        EngineId::Luau => "Luau",
        EngineId::QuickJs => "QuickJS",
        EngineId::Tcl => "Tcl",
        EngineId::MicroPython => "MicroPython",
        EngineId::Wren => "Wren",
    }
}

const SECTION_ORDER: &[&str] = &[
    "Strings",
    "Bitmaps",
    "Keys (generic)",
    "Hashes",
    "Lists",
    "Sets",
    "Sorted sets",
    "Geospatial indices",
    "HyperLogLog",
    "Transactions",
    "Pub/sub",
    "Scripting: Lua",
    "Scripting: Luau",
    "Scripting: QuickJS",
    "Scripting: Tcl",
    "Scripting: MicroPython",
    "Scripting: Wren",
    "Server",
    "Connection",
    "Goblin native",
];

fn index_block(t: &Table) -> String {
    let mut sections: BTreeMap<(usize, String), Vec<&Command>> = BTreeMap::new();
    for c in t.top_level() {
        let s = section(c);
        let rank = SECTION_ORDER
            .iter()
            .position(|x| *x == s)
            .unwrap_or(SECTION_ORDER.len());
        sections.entry((rank, s)).or_default().push(c);
    }
    let mut o = String::new();
    let _ = writeln!(o, "{GEN_BEGIN}");
    for ((_, name), mut cmds) in sections {
        cmds.sort_by_key(|c| c.name);
        let _ = writeln!(o, "\n## {name}\n");
        for c in cmds {
            let page = page_name(c.name);
            let _ = writeln!(o, "- [{}]({page}.md) — {}", display_name(c), c.summary);
            for s in c.subcommands {
                let _ = writeln!(o, "  - [{}]({page}.md) — {}", display_name(s), s.summary);
            }
        }
    }
    o.push_str(GEN_END);
    o
}

const INDEX_INTRO: &str = "# Command reference\n\n\
One page per command; a container's page (`CONFIG`, `CLIENT`, `SCRIPT`, ...) covers its\n\
subcommands. Syntax, summary, group, since, complexity, arity, flags, keys, key specs and ACL\n\
categories on every page come from the command table in `src/cmd/` (the same rows `COMMAND INFO`\n\
and `COMMAND DOCS` answer from); the rest is written by hand. See `../README.md` for how the pages\n\
are regenerated and checked.\n\n";

/// Replaces (or inserts after the title) the generated block of `text`.
fn with_block(text: &str, block: &str) -> String {
    if let Some((before, _, after)) = split_page(text) {
        return format!("{before}{block}{after}");
    }
    match text.find('\n') {
        Some(nl) => format!("{}\n\n{block}\n{}", &text[..nl], &text[nl + 1..]),
        None => format!("{text}\n\n{block}\n"),
    }
}

#[test]
fn every_command_has_a_true_page() {
    let t = Table::build(goblin_core::cmd::families());
    let dir = docs_dir();
    let write = writing();
    let mut problems = Vec::new();
    let mut expected: BTreeSet<String> = BTreeSet::new();

    for c in t.top_level() {
        let page = page_name(c.name);
        expected.insert(page.clone());
        let path = dir.join(format!("{page}.md"));
        let block = generated_block(c);
        let text = std::fs::read_to_string(&path).ok();
        if write {
            let new = match &text {
                Some(old) => with_block(old, &block),
                None => format!("# {page}\n\n{block}{}", skeleton(c)),
            };
            if text.as_deref() != Some(new.as_str()) {
                std::fs::write(&path, &new).unwrap();
            }
        }
        let Some(text) = std::fs::read_to_string(&path).ok() else {
            problems.push(format!("{page}: no page docs/commands/{page}.md"));
            continue;
        };
        if title(&text) != Some(page.as_str()) {
            problems.push(format!("{page}.md: the title must be `# {page}`"));
        }
        match split_page(&text) {
            None => problems.push(format!("{page}.md: no generated block")),
            Some((_, got, prose)) => {
                if got != block {
                    problems.push(format!(
                        "{page}.md: the generated block disagrees with the command table\n--- page\n{got}\n--- table\n{block}"
                    ));
                }
                if text.contains(TODO) {
                    problems.push(format!("{page}.md: the prose is unfinished ({TODO})"));
                }
                if prose.split_whitespace().count() < 20 {
                    problems.push(format!("{page}.md: no hand-written prose after the block"));
                }
            }
        }
    }

    // Every page names a command that exists.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        if !file.ends_with(".md") || file == "README.md" {
            continue;
        }
        let stem = file.trim_end_matches(".md");
        let text = std::fs::read_to_string(&path).unwrap();
        match title(&text) {
            Some(name) if name != stem => {
                problems.push(format!("{file}: titled `{name}`, not `{stem}`"))
            }
            Some(name) if !expected.contains(name) => problems.push(format!(
                "{file}: `{name}` is not a command of the table (COMMAND INFO would not know it)"
            )),
            Some(_) => {}
            None => problems.push(format!("{file}: no `# NAME` title")),
        }
    }

    // The index.
    let index_path = dir.join("README.md");
    let block = index_block(&t);
    if write {
        let old = std::fs::read_to_string(&index_path).unwrap_or_default();
        let new = if old.is_empty() {
            format!("{INDEX_INTRO}{block}\n")
        } else {
            with_block(&old, &block)
        };
        if old != new {
            std::fs::write(&index_path, new).unwrap();
        }
    }
    match std::fs::read_to_string(&index_path) {
        Err(_) => problems.push("docs/commands/README.md: no index".into()),
        Ok(text) => match split_page(&text) {
            Some((_, got, _)) if got == block => {}
            _ => problems
                .push("docs/commands/README.md: the index disagrees with the command table".into()),
        },
    }

    assert!(
        problems.is_empty(),
        "{} problem(s) with docs/commands (GOBLIN_WRITE_DOCS=1 cargo test --release --test docs \
         regenerates the blocks and the index and creates missing pages; prose is written by \
         hand):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn display_syntax_reads_like_redis_docs() {
    assert_eq!(
        display_syntax("key where:(BEFORE | AFTER) pivot element"),
        "key <BEFORE | AFTER> pivot element"
    );
    assert_eq!(
        display_syntax("key [EX seconds:integer | PX milliseconds:integer] ip:port"),
        "key [EX seconds | PX milliseconds] ip:port"
    );
    assert_eq!(
        display_syntax("key now LINEAR|EXP|STEP param k [WITHWEIGHTS]"),
        "key now LINEAR|EXP|STEP param k [WITHWEIGHTS]"
    );
    assert_eq!(
        display_syntax(
            "key [condition:(NX | XX)] [change:CH] [options:(count:integer [WITHSCORES])]"
        ),
        "key [NX | XX] [CH] [count [WITHSCORES]]"
    );
    assert_eq!(
        display_syntax("parameter:(parameter) [parameter:(parameter) ...] [ID id:(a [a ...])]"),
        "parameter [parameter ...] [ID a [a ...]]"
    );
    assert_eq!(
        display_syntax("[TYPE (A | B)] [arguments:(protover [AUTH u p])] [async:(ASYNC | SYNC)]"),
        "[TYPE <A | B>] [protover [AUTH u p]] [ASYNC | SYNC]"
    );
}

/// A choice in a syntax line is grouped so the argument tree reads as intended: `x | y` at the top
/// level only as `ip:port | [filters ...]` or `ON | OFF` (a single word before the first `|`), and
/// a keyword before a choice written `AGGREGATE aggregate:(SUM | MIN | MAX)`, not
/// `[AGGREGATE SUM | MIN | MAX]` (which parses as `AGGREGATE SUM`, or `MIN`, or `MAX`).
#[test]
fn choices_are_grouped() {
    fn ambiguous(args: &[DocArg], in_oneof: bool, bad: &mut bool) {
        for a in args {
            // A group the syntax names (`no-one:(NO ONE)`, REPLICAOF's) is a block on purpose.
            let implicit_name = a
                .args
                .iter()
                .map(|x| x.name.as_str())
                .collect::<Vec<_>>()
                .join("_");
            if in_oneof
                && a.kind == "block"
                && a.args.len() >= 2
                && a.args[0].kind == "pure-token"
                && a.args[1].kind == "pure-token"
                && a.name == implicit_name
            {
                *bad = true;
            }
            ambiguous(&a.args, a.kind == "oneof", bad);
        }
    }
    let t = Table::build(goblin_core::cmd::families());
    let mut problems = Vec::new();
    for c in &t.rows {
        let mut depth = 0;
        let mut first_alt = String::new();
        for ch in c.syntax.chars() {
            match ch {
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                '|' if depth == 0 => {
                    if first_alt.split_whitespace().count() != 1 {
                        problems.push(format!("{}: `{}` has an ungrouped `|`", c.name, c.syntax));
                    }
                    break;
                }
                _ => {}
            }
            if depth == 0 {
                first_alt.push(ch);
            }
        }
        let mut bad = false;
        ambiguous(&doc_args(c.syntax), false, &mut bad);
        if bad {
            problems.push(format!(
                "{}: `{}` has a keyword before an ungrouped choice",
                c.name, c.syntax
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- COMMAND DOCS over the wire ----

#[derive(Debug, Clone)]
enum V {
    Str(String),
    Int,
    Nil,
    Arr(Vec<V>),
}

fn parse(b: &[u8], pos: &mut usize) -> V {
    let end = *pos + b[*pos..].windows(2).position(|w| w == b"\r\n").unwrap();
    let head = b[*pos];
    let line = std::str::from_utf8(&b[*pos + 1..end]).unwrap().to_string();
    *pos = end + 2;
    match head {
        b'+' | b'-' => V::Str(line),
        b':' => V::Int,
        b'$' => {
            let n: i64 = line.parse().unwrap();
            if n < 0 {
                return V::Nil;
            }
            let s = String::from_utf8_lossy(&b[*pos..*pos + n as usize]).into_owned();
            *pos += n as usize + 2;
            V::Str(s)
        }
        b'*' => {
            let n: i64 = line.parse().unwrap();
            V::Arr((0..n.max(0)).map(|_| parse(b, pos)).collect())
        }
        h => panic!("unexpected RESP2 type {:?}", h as char),
    }
}

/// A RESP2 map (a flat array of pairs) by field name.
fn fields(v: &V) -> BTreeMap<String, V> {
    let V::Arr(items) = v else {
        panic!("not a map: {v:?}")
    };
    items
        .chunks(2)
        .map(|p| match &p[0] {
            V::Str(k) => (k.clone(), p[1].clone()),
            k => panic!("map key {k:?}"),
        })
        .collect()
}

fn text(v: Option<&V>) -> String {
    match v {
        Some(V::Str(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The words a (wire) argument tree names: tokens and leaf names.
fn wire_words(args: &V, out: &mut BTreeSet<String>) {
    let V::Arr(list) = args else {
        panic!("arguments not an array")
    };
    for a in list {
        let f = fields(a);
        let kind = text(f.get("type"));
        assert!(!kind.is_empty(), "argument without a type: {f:?}");
        assert!(!text(f.get("name")).is_empty(), "argument without a name");
        if let Some(tok) = f.get("token") {
            out.insert(text(Some(tok)));
        }
        match f.get("arguments") {
            Some(sub) => wire_words(sub, out),
            None if kind != "pure-token" => {
                out.insert(text(f.get("name")));
            }
            None => {}
        }
    }
}

/// The words of a syntax line: keywords as written, argument names without their type suffix.
fn syntax_words(syntax: &str) -> BTreeSet<String> {
    display_syntax(syntax)
        .split(|c: char| " []<>|".contains(c))
        .filter(|w| !w.is_empty() && *w != "...")
        .map(String::from)
        .collect()
}

/// Commands whose COMMAND DOCS in Redis 7.0 has no complexity (ours matches it byte for byte).
const NO_COMPLEXITY_IN_REDIS: &[&str] = &["monitor", "lolwut", "sync", "psync"];

fn check_docs(c: &Command, v: &V, problems: &mut Vec<String>) {
    let f = fields(v);
    for field in ["summary", "since", "group", "complexity"] {
        if field == "complexity" && NO_COMPLEXITY_IN_REDIS.contains(&c.name) {
            continue;
        }
        if text(f.get(field)).is_empty() {
            problems.push(format!("{}: COMMAND DOCS has no {field}", c.name));
        }
    }
    if text(f.get("summary")) != c.summary || text(f.get("since")) != c.since {
        problems.push(format!("{}: COMMAND DOCS disagrees with the table", c.name));
    }
    let want = syntax_words(c.syntax);
    let mut got = BTreeSet::new();
    if let Some(args) = f.get("arguments") {
        wire_words(args, &mut got);
    }
    if want != got {
        problems.push(format!(
            "{}: arguments {got:?} but the syntax `{}` names {want:?}",
            c.name, c.syntax
        ));
    }
    // The tree the server sends is the one the library builds from the row.
    let tree: Vec<DocArg> = doc_args(c.syntax);
    let n = match f.get("arguments") {
        Some(V::Arr(a)) => a.len(),
        _ => 0,
    };
    if n != tree.len() {
        problems.push(format!("{}: {n} top-level arguments on the wire", c.name));
    }
    let subs = f.get("subcommands").map(fields).unwrap_or_default();
    for s in c.subcommands {
        match subs.get(s.name) {
            Some(sv) => check_docs(s, sv, problems),
            None => problems.push(format!("{}: missing from COMMAND DOCS", s.name)),
        }
    }
    if subs.len() != c.subcommands.len() {
        problems.push(format!("{}: extra subcommands in COMMAND DOCS", c.name));
    }
}

#[test]
fn command_docs_serves_every_command() {
    let t = Table::build(goblin_core::cmd::families());
    let server = common::goblin(&[]);
    let mut conn = server.raw();
    let reply = conn.cmd_str("COMMAND DOCS");
    let all = fields(&parse(&reply, &mut 0));
    let mut problems = Vec::new();
    for c in t.top_level() {
        match all.get(c.name) {
            Some(v) => check_docs(c, v, &mut problems),
            None => problems.push(format!("{}: missing from COMMAND DOCS", c.name)),
        }
        // Asking by name (as redis-cli does for one command) answers the same.
        let one = conn.cmd(&[b"COMMAND", b"DOCS", c.name.as_bytes()]);
        let one = fields(&parse(&one, &mut 0));
        if one.len() != 1 || !one.contains_key(c.name) {
            problems.push(format!(
                "{}: COMMAND DOCS {} answers {one:?}",
                c.name, c.name
            ));
        }
    }
    assert_eq!(
        all.len(),
        t.top_level().count(),
        "COMMAND DOCS lists extra commands"
    );
    // In RESP3 the same reply is a map of maps.
    let mut conn3 = server.raw();
    conn3.cmd_str("HELLO 3");
    let r3 = conn3.cmd_str("COMMAND DOCS get");
    assert!(
        r3.starts_with(b"%1\r\n$3\r\nget\r\n%"),
        "{}",
        common::show(&r3)
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- The idiom scripts on the pages ----

/// The idioms every engine has a script for (`benchmarks/scripts/<idiom>.<ext>`).
const IDIOMS: &[&str] = &["cad", "rescore"];

/// Per engine: the extension of its scripts, the command that runs one, the info strings its
/// fenced blocks may carry, and its EVAL page.
const IDIOM_ENGINES: &[(&str, &str, &[&str], &str)] = &[
    ("lua", "EVAL", &["lua"], "EVAL.md"),
    ("luau", "LUAU.EVAL", &["lua", "luau"], "LUAU.EVAL.md"),
    ("js", "QUICKJS.EVAL", &["js"], "QUICKJS.EVAL.md"),
    ("tcl", "TCL.EVAL", &["tcl"], "TCL.EVAL.md"),
    ("py", "UPYTHON.EVAL", &["python"], "UPYTHON.EVAL.md"),
    ("wren", "WREN.EVAL", &["wren"], "WREN.EVAL.md"),
];

/// A fenced block: its info string, its text (each line ending in `\n`), the paragraph before it,
/// and the line it opens on (1-based).
struct Fence {
    info: String,
    body: String,
    lead: String,
    line: usize,
}

fn fences(text: &str) -> Vec<Fence> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        // The paragraph before: blank lines skipped, the text lines up to a blank line or a fence.
        let mut stop = i;
        while stop > 0 && lines[stop - 1].trim().is_empty() {
            stop -= 1;
        }
        let mut start = stop;
        while start > 0
            && !lines[start - 1].trim().is_empty()
            && !lines[start - 1].trim_start().starts_with("```")
        {
            start -= 1;
        }
        let lead = lines[start..stop].join("\n");
        let mut end = i + 1;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        let body: String = lines[i + 1..end.min(lines.len())]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        out.push(Fence {
            info: info.trim().to_string(),
            body,
            lead,
            line: i + 1,
        });
        i = end + 1;
    }
    out
}

/// The idiom scripts a paragraph names in backticks (`benchmarks/scripts/cad.lua`): (idiom, ext).
fn named_scripts(lead: &str) -> Vec<(String, String)> {
    lead.split("`benchmarks/scripts/")
        .skip(1)
        .filter_map(|rest| {
            let name = &rest[..rest.find('`')?];
            let (idiom, ext) = name.rsplit_once('.')?;
            let known = IDIOMS.contains(&idiom) && IDIOM_ENGINES.iter().any(|e| e.0 == ext);
            known.then(|| (idiom.to_string(), ext.to_string()))
        })
        .collect()
}

/// The copies of the idiom scripts on the pages are the files the benchmarks and the conformance
/// tests run, so the docs cannot drift from them. A fenced block is a copy of
/// `benchmarks/scripts/<idiom>.<ext>` when the paragraph right before it names that file in
/// backticks; it must equal the file byte for byte, carry the engine's language, and the
/// paragraph must give the command that runs it (`` `TCL.EVAL script 1 ...` ``). A block that
/// starts like one of the files without naming it fails too. GOBLIN.CAD's and
/// GOBLIN.TD_LEADERBOARD_RESCORE's pages show every engine's copy, each linking the engine's EVAL
/// page; each engine's EVAL page shows its own two.
#[test]
fn idiom_scripts_on_the_pages_are_the_benchmark_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: BTreeMap<(String, String), String> = BTreeMap::new();
    for idiom in IDIOMS {
        for (ext, ..) in IDIOM_ENGINES {
            let path = root.join(format!("benchmarks/scripts/{idiom}.{ext}"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            files.insert((idiom.to_string(), ext.to_string()), text);
        }
    }
    let mut required: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for (page, idiom) in [
        ("GOBLIN.CAD.md", "cad"),
        ("GOBLIN.TD_LEADERBOARD_RESCORE.md", "rescore"),
    ] {
        let copies = IDIOM_ENGINES
            .iter()
            .map(|e| (idiom.to_string(), e.0.to_string()));
        required.entry(page).or_default().extend(copies);
    }
    for (ext, _, _, page) in IDIOM_ENGINES {
        let copies = IDIOMS.iter().map(|i| (i.to_string(), ext.to_string()));
        required.entry(page).or_default().extend(copies);
    }

    let mut problems = Vec::new();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(docs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    for path in pages {
        let page = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut found = Vec::new();
        for f in fences(&text) {
            let at = format!("{page}:{}", f.line);
            let named = named_scripts(&f.lead);
            let [(idiom, ext)] = named.as_slice() else {
                if named.len() > 1 {
                    problems.push(format!("{at}: the paragraph names several scripts"));
                }
                let first = f.body.lines().next().unwrap_or("");
                for ((idiom, ext), file) in &files {
                    if !first.trim().is_empty() && file.lines().next() == Some(first) {
                        problems.push(format!(
                            "{at}: starts like benchmarks/scripts/{idiom}.{ext} but the paragraph \
                             before does not name it"
                        ));
                    }
                }
                continue;
            };
            let (_, cmd, infos, engine_page) = IDIOM_ENGINES.iter().find(|e| e.0 == ext).unwrap();
            let file = &files[&(idiom.clone(), ext.clone())];
            if f.body != *file {
                let line = f
                    .body
                    .lines()
                    .zip(file.lines())
                    .position(|(a, b)| a != b)
                    .map_or("its length".to_string(), |n| format!("its line {}", n + 1));
                problems.push(format!(
                    "{at}: not benchmarks/scripts/{idiom}.{ext} (first difference: {line})"
                ));
            }
            if !infos.contains(&f.info.as_str()) {
                problems.push(format!("{at}: a {ext} script in a `{}` block", f.info));
            }
            if !f.lead.contains(&format!("`{cmd} script 1 ")) {
                problems.push(format!(
                    "{at}: the paragraph does not say how it runs (`{cmd} script 1 ...`)"
                ));
            }
            if page.starts_with("GOBLIN.") && !f.lead.contains(&format!("]({engine_page})")) {
                problems.push(format!("{at}: the paragraph does not link {engine_page}"));
            }
            found.push((idiom.clone(), ext.clone()));
        }
        for want in required.get(page.as_str()).into_iter().flatten() {
            if !found.contains(want) {
                problems.push(format!(
                    "{page}: no copy of benchmarks/scripts/{}.{}",
                    want.0, want.1
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Links between the pages are well formed and name pages that exist (a link whose text or
/// target was pasted over by other text fails here).
#[test]
fn links_between_pages_resolve() {
    let dir = docs_dir();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let page = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        // Outside fenced blocks only: code may hold `](`.
        let mut prose = String::new();
        let mut in_fence = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
            } else if !in_fence {
                prose.push_str(line);
                prose.push('\n');
            }
        }
        for rest in prose.split("](").skip(1) {
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let file = target.split('#').next().unwrap_or("");
            if target.contains(char::is_whitespace) || !dir.join(file).is_file() {
                let shown: String = target.chars().take(60).collect();
                problems.push(format!("{page}: a link to `{shown}`"));
            }
        }
    }
    problems.sort();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
