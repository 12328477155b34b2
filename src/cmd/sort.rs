//! SORT and SORT_RO (Redis's sort.c): the elements of a list, set or sorted set, sorted as numbers
//! or (ALPHA) as strings, by themselves or by other keys (`BY pattern`), with other keys' values in
//! their place (`GET pattern`), a window of the result (`LIMIT`), stored as a list (`STORE`).
//!
//! Redis's qsort (glibc's merge sort) is stable, and so is ours: equal elements keep the order they
//! were loaded in. Redis compares ALPHA strings with `strcoll` unless the result is stored; we
//! compare bytes up to the first NUL, which is `strcoll` in the C and C.UTF-8 locales.

use std::cmp::Ordering;

use super::keyspec::{source_and_store, BeginSearch, FindKeys, KeySpec, ACCESS, OW, RO, UPDATE};
use super::parse::{int, is, strtod};
use super::{acl, Args, CmdResult, Command, Ctx, DENYOOM, MOVABLEKEYS, READONLY, WRITE};
use crate::resp::reply::{SYNTAX, WRONGTYPE};
use crate::server::notify::LIST;
use crate::store::{Db, List, Value};

const GROUP: &str = "generic";

/// What one SORT line asks for, as Redis's `sortCommandGeneric` parses it.
struct Sort<'a> {
    desc: bool,
    alpha: bool,
    /// LIMIT's offset and count, as given.
    limit: (i64, i64),
    /// The last BY pattern.
    by: Option<&'a [u8]>,
    /// Some BY pattern had no `*` (`BY nosort`): keep the native order. A later BY with a `*` does
    /// not undo it, as in Redis.
    dont_sort: bool,
    gets: Vec<&'a [u8]>,
    store: Option<&'a [u8]>,
}

/// `full_key_access`: the user may read every key (Redis's `ACLUserCheckCmdWithUnrestrictedKeyAccess`),
/// which BY with a pattern and GET need, as they read keys the command line does not name.
fn parse(
    args: Args<'_>,
    read_only: bool,
    full_key_access: bool,
) -> Result<Sort<'_>, super::CmdError> {
    let mut s = Sort {
        desc: false,
        alpha: false,
        limit: (0, -1),
        by: None,
        dont_sort: false,
        gets: Vec::new(),
        store: None,
    };
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = &args[j];
        if is(a, "asc") {
            s.desc = false;
        } else if is(a, "desc") {
            s.desc = true;
        } else if is(a, "alpha") {
            s.alpha = true;
        } else if is(a, "limit") && left >= 2 {
            s.limit = (int(&args[j + 1])?, int(&args[j + 2])?);
            j += 2;
        } else if !read_only && is(a, "store") && left >= 1 {
            s.store = args.get(j + 1);
            j += 1;
        } else if is(a, "by") && left >= 1 {
            let pattern = args.get(j + 1).expect("counted");
            let real = c_str(pattern).contains(&b'*');
            if real && !full_key_access {
                return Err(super::err(
                    "BY option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            s.dont_sort |= !real;
            s.by = Some(pattern);
            j += 1;
        } else if is(a, "get") && left >= 1 {
            if !full_key_access {
                return Err(super::err(
                    "GET option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            s.gets.push(args.get(j + 1).expect("counted"));
            j += 1;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    Ok(s)
}

/// The bytes C's string functions see: up to the first NUL. Redis finds `*`, `->` and `#` in a
/// pattern and collates ALPHA strings this way.
fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |n| &b[..n])
}

/// Redis's `lookupKeyByPattern`: `#` is the element itself; otherwise the first `*` is replaced by
/// the element and the string key so named read, or with `key->field` that hash field. `None`
/// when there is no `*`, or the key is missing or of another type, or the field missing.
fn by_pattern(db: &mut Db, pattern: &[u8], elem: &[u8]) -> Option<Vec<u8>> {
    let c = c_str(pattern);
    if c == b"#" {
        return Some(elem.to_vec());
    }
    let star = c.iter().position(|&b| b == b'*')?;
    // A `->` after the `*` with something after it (before any NUL) names a hash field: the rest
    // of the pattern.
    let arrow = c[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&f| f + 2 < c.len());
    let key_end = arrow.unwrap_or(pattern.len());
    let mut key = Vec::with_capacity(key_end - 1 + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    let entry = db.lookup(&key)?;
    match (&entry.val, arrow) {
        (Value::Hash(h), Some(f)) => h.get(&pattern[f + 2..]).map(<[u8]>::to_vec),
        (Value::Str(s), None) => Some(s.to_vec()),
        _ => None,
    }
}

/// One element to sort and what it sorts by.
struct Item {
    elem: Vec<u8>,
    score: f64,
    /// ALPHA with BY: the value it sorts by, `None` (before every value) when missing.
    by: Option<Vec<u8>>,
}

/// Redis's `sortCompare`, ascending.
fn compare(a: &Item, b: &Item, alpha: bool, by: bool, store: bool) -> Ordering {
    let strings = |x: &[u8], y: &[u8]| {
        if store {
            x.cmp(y)
        } else {
            c_str(x).cmp(c_str(y))
        }
    };
    if !alpha {
        // Equal scores fall back to the elements' bytes, so the result is deterministic.
        a.score
            .partial_cmp(&b.score)
            .filter(|o| o.is_ne())
            .unwrap_or_else(|| a.elem.cmp(&b.elem))
    } else if by {
        match (&a.by, &b.by) {
            (Some(x), Some(y)) => strings(x, y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        }
    } else {
        strings(&a.elem, &b.elem)
    }
}

/// Redis's check of a score read by `strtod`: the whole string up to a NUL, no overflow or
/// underflow, not NaN. An empty string is 0.
fn score_of(v: &[u8]) -> Option<f64> {
    let (score, used, erange) = strtod(v);
    let whole = v.get(used).is_none_or(|&c| c == 0);
    (whole && !erange && !score.is_nan()).then_some(score)
}

/// The window of `len` elements LIMIT selects, as Redis computes it (offsets clamped to the
/// elements, a negative count for all the rest): (start, end) inclusive, empty when end < start.
fn window(len: i64, (offset, count): (i64, i64)) -> (i64, i64) {
    let mut start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

/// What the result holds, in order: each element, or with GET patterns the value each names for
/// it (`None` when missing).
fn results(db: &mut Db, picked: &[Item], gets: &[&[u8]]) -> Vec<Option<Vec<u8>>> {
    if gets.is_empty() {
        return picked.iter().map(|i| Some(i.elem.clone())).collect();
    }
    let mut out = Vec::with_capacity(picked.len() * gets.len());
    for item in picked {
        out.extend(gets.iter().map(|p| by_pattern(db, p, &item.elem)));
    }
    out
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA]
/// [STORE destination]
///
/// # Format
/// `SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC | DESC] [ALPHA] [STORE
/// destination]` — the sorted elements (or with GET the values they name, nil when missing); with
/// STORE the number of elements stored.
fn sort(ctx: &mut Ctx, args: Args) -> CmdResult {
    sort_generic(ctx, args, false)
}

/// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC]
/// [ALPHA]
///
/// # Format
/// `SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC | DESC] [ALPHA]` — as
/// SORT, without STORE (a syntax error).
fn sort_ro(ctx: &mut Ctx, args: Args) -> CmdResult {
    sort_generic(ctx, args, true)
}

fn sort_generic(ctx: &mut Ctx, args: Args, read_only: bool) -> CmdResult {
    let full_key_access = {
        let user = ctx.srv.acl.user(ctx.clients[ctx.id].user);
        let row = ctx
            .srv
            .table
            .find(&args[0])
            .expect("a command of the table");
        user.unrestricted()
            || user.command_with_all_keys(&ctx.srv.table, row, args, super::keyspec::ACCESS)
    };
    let mut s = parse(args, read_only, full_key_access)?;
    let from_script = ctx.srv.script_running.active;
    let db = &mut ctx.srv.dbs[ctx.db];
    // The elements in their native order; a set's is its own, a sorted set's by score.
    let (elems, is_set, ordered): (Vec<Vec<u8>>, bool, bool) = match db.lookup(&args[1]) {
        None => (Vec::new(), false, true),
        Some(e) => match &mut e.val {
            Value::List(l) => (l.items.iter().cloned().collect(), false, true),
            Value::Set(set) => (set.iter().map(|m| m.to_vec()).collect(), true, false),
            Value::ZSet(z) => {
                // Redis converts a listpack sorted set for SORT, for good.
                z.convert();
                let mut v = Vec::with_capacity(z.len());
                let mut at = z.first();
                while let Some(id) = at {
                    v.push(z.get(id).0.to_vec());
                    at = z.next(id);
                }
                (v, false, true)
            }
            _ => return Err(WRONGTYPE.into()),
        },
    };
    // A set's own order differs between servers: stored or scripted results are sorted anyway.
    if s.dont_sort && is_set && (s.store.is_some() || from_script) {
        s.dont_sort = false;
        s.alpha = true;
        s.by = None;
    }
    let (mut start, mut end) = window(elems.len() as i64, s.limit);
    let mut items: Vec<Item> = if s.dont_sort && ordered {
        // The native order, reversed by DESC, cut to the window at once.
        let mut v = elems;
        if s.desc {
            v.reverse();
        }
        let cut = if end >= start {
            v.drain(start as usize..=end as usize).collect()
        } else {
            Vec::new()
        };
        end -= start;
        start = 0;
        cut
    } else {
        elems
    }
    .into_iter()
    .map(|elem| Item {
        elem,
        score: 0.0,
        by: None,
    })
    .collect();

    let mut bad_score = false;
    if !s.dont_sort {
        for item in &mut items {
            let by_val = match s.by {
                Some(p) => match by_pattern(db, p, &item.elem) {
                    Some(v) => Some(v),
                    None => continue,
                },
                None => None,
            };
            if s.alpha {
                item.by = by_val;
            } else {
                match score_of(by_val.as_deref().unwrap_or(&item.elem)) {
                    Some(score) => item.score = score,
                    None => bad_score = true,
                }
            }
        }
        if !bad_score {
            let (alpha, by, store, desc) = (s.alpha, s.by.is_some(), s.store.is_some(), s.desc);
            items.sort_by(|a, b| {
                let o = compare(a, b, alpha, by, store);
                if desc {
                    o.reverse()
                } else {
                    o
                }
            });
        }
    }
    if bad_score {
        return Err("ERR One or more scores can't be converted into double".into());
    }

    let picked = if end >= start {
        &items[start as usize..=end as usize]
    } else {
        &[]
    };
    let values = results(db, picked, &s.gets);
    let out_len = values.len();
    let Some(dst) = s.store else {
        ctx.out.array(out_len);
        for v in &values {
            match v {
                Some(v) => ctx.out.bulk(v),
                None => ctx.out.null(),
            }
        }
        return Ok(());
    };
    // A missing value is stored as an empty string.
    let list = List {
        items: values.into_iter().map(Option::unwrap_or_default).collect(),
    };
    let value = (out_len > 0).then(|| Value::List(Box::new(list)));
    ctx.store_result(dst, value, LIST, "sortstore", out_len as u64);
    ctx.out.int(out_len as i64);
    Ok(())
}

/// COMMAND GETKEYS of SORT, as Redis's `sortGetKeys`: the key (read), and the destination of the
/// last STORE (overwritten), skipping the arguments of LIMIT, GET and BY.
fn sort_keys(args: Args) -> Vec<(usize, u32)> {
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        if is(a, "limit") {
            i += 2;
        } else if is(a, "get") || is(a, "by") {
            i += 1;
        } else if is(a, "store") && i + 1 < args.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    source_and_store(store)
}

/// COMMAND GETKEYS of SORT_RO, as Redis's `sortROGetKeys`: only the key, read.
fn sort_ro_keys(_args: Args) -> Vec<(usize, u32)> {
    source_and_store(None)
}

/// The keys BY and GET patterns name, which only the sorted elements tell.
const PATTERN_KEYS: KeySpec = KeySpec {
    notes: Some("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"),
    flags: RO | ACCESS,
    begin_search: BeginSearch::Unknown,
    find_keys: FindKeys::Unknown,
};

const STORE_KEY: KeySpec = KeySpec {
    notes: Some("For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"),
    flags: OW | UPDATE,
    begin_search: BeginSearch::Unknown,
    find_keys: FindKeys::Unknown,
};

const COMPLEXITY: &str = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).";

/// SORT_RO's arguments, which SORT's begin with.
macro_rules! sort_ro_syntax {
    () => {
        "key [BY pattern:key-pattern] [LIMIT offset:integer count:integer] [GET pattern:key-pattern [GET pattern:key-pattern ...]] [order:(ASC | DESC)] [sorting:ALPHA]"
    };
}

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::new("sort", sort, -2, WRITE | DENYOOM | MOVABLEKEYS).key(1, RO | ACCESS).key_spec(PATTERN_KEYS).key_spec(STORE_KEY)
        .acl(acl::SET | acl::SORTEDSET | acl::LIST | acl::DANGEROUS).key_finder(sort_keys).group(GROUP)
        .doc("Sort the elements in a list, set or sorted set", "1.0.0", COMPLEXITY, concat!(sort_ro_syntax!(), " [STORE destination:key]")),
    Command::new("sort_ro", sort_ro, -2, READONLY | MOVABLEKEYS).key(1, RO | ACCESS).key_spec(PATTERN_KEYS)
        .acl(acl::SET | acl::SORTEDSET | acl::LIST | acl::DANGEROUS).key_finder(sort_ro_keys).group(GROUP)
        .doc("Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0", COMPLEXITY, sort_ro_syntax!()),
];
