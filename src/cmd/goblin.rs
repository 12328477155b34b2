//! Goblin Core's native commands: hot scripting idioms done without a VM.
//! GOBLIN.CAD (compare-and-delete, the Redlock unlock) and GOBLIN.TD_LEADERBOARD_RESCORE (a
//! time-decay top-k over a sorted set). Each replies exactly what the scripted idiom in every
//! engine replies (`benchmarks/scripts/cad.*`, `rescore.*`), which `tests/native_commands.rs`
//! checks (a script's WRONGTYPE error carries its engine's suffix).

use super::keyspec::{ACCESS, DELETE, RO, RW};
use super::parse::{float, int, is, text};
use super::string::read_str;
use super::{Args, CmdError, CmdResult, Command, Ctx, FAST, READONLY, WRITE};
use crate::resp::reply::SYNTAX;
use crate::server::notify::GENERIC;

const GROUP: &str = "goblin";

/// GOBLIN.CAD key token
///
/// # Format
/// `GOBLIN.CAD key token` — `:1` after deleting `key` if it holds the string `token`, else `:0`
/// (missing key, other value). WRONGTYPE on a non-string, as the scripted GET would fail.
fn cad(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (key, token) = (&args[1], &args[2]);
    let db = ctx.db();
    let matches = read_str(db, key)?.is_some_and(|s| s.with_bytes(|b| b == token));
    if matches {
        db.remove(key);
        ctx.signal_modified(key);
        ctx.srv.dirty += 1;
        // The scripted idiom's DEL, which is also what the AOF and the replicas get: a
        // redis-server replica has no GOBLIN.CAD.
        ctx.notify(GENERIC, "del", key);
        ctx.propagate_as(&[b"DEL", key]);
    }
    ctx.out.int(matches as i64);
    Ok(())
}

#[derive(Clone, Copy)]
enum Decay {
    Linear,
    Exp,
    Step,
}

impl Decay {
    /// The weight of a member `age` seconds old. Written as the scripts compute it, so every
    /// engine's double arithmetic gives the same bits.
    fn weight(self, age: f64, param: f64) -> f64 {
        match self {
            Decay::Linear => 1.0 / (1.0 + age / param),
            Decay::Exp => 0.5f64.powf(age / param),
            Decay::Step => {
                if age <= param {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

/// The `k` best (weight, member) pairs: weight descending, member ascending among equal weights.
/// A bounded insertion-sorted array (no full sort): each candidate costs a comparison with the
/// worst kept one, and a winner a binary search plus an insertion that moves up to `k` entries,
/// so N candidates cost O(N*k) in the worst case (each one beating all the kept ones).
struct TopK<'a> {
    k: usize,
    best: Vec<(f64, &'a [u8])>,
}

impl<'a> TopK<'a> {
    fn new(k: usize, capacity: usize) -> Self {
        TopK {
            k,
            best: Vec::with_capacity(k.min(capacity)),
        }
    }

    /// True if `(w, m)` ranks before `(w2, m2)`.
    fn before(w: f64, m: &[u8], w2: f64, m2: &[u8]) -> bool {
        w > w2 || (w == w2 && m < m2)
    }

    fn offer(&mut self, w: f64, m: &'a [u8]) {
        if self.best.len() == self.k {
            let &(lw, lm) = self.best.last().expect("k > 0");
            if !Self::before(w, m, lw, lm) {
                return;
            }
            self.best.pop();
        }
        let at = self
            .best
            .partition_point(|&(bw, bm)| Self::before(bw, bm, w, m));
        self.best.insert(at, (w, m));
    }
}

/// GOBLIN.TD_LEADERBOARD_RESCORE key now mode param k [WITHWEIGHTS]
///
/// # Format
/// `GOBLIN.TD_LEADERBOARD_RESCORE key now LINEAR|EXP|STEP param k [WITHWEIGHTS]` — the top `k`
/// members of the sorted set at `key` (scores: last-activity unix times) by recency weight, with
/// `age = max(0, now - score)`: LINEAR `1/(1 + age/param)`, EXP `0.5^(age/param)`, STEP 1 while
/// `age <= param` else 0. Weight descending, ties by member ascending, zero weights left out; with
/// WITHWEIGHTS each member is followed by its weight (a double). Missing key: an empty array.
/// A NaN age (`now` and a score both infinite with the same sign) gives no weight: left out.
fn td_leaderboard_rescore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let now = float(&args[2])?;
    let mode = &args[3];
    let decay = if is(mode, "linear") {
        Decay::Linear
    } else if is(mode, "exp") {
        Decay::Exp
    } else if is(mode, "step") {
        Decay::Step
    } else {
        return Err(CmdError::from(format!(
            "ERR unknown mode '{}', expected LINEAR, EXP or STEP",
            text(mode)
        )));
    };
    let param = float(&args[4])?;
    if param <= 0.0 {
        return Err("ERR param must be greater than 0".into());
    }
    let k = int(&args[5])?;
    if k <= 0 {
        return Err("ERR k must be greater than 0".into());
    }
    let with_weights = match args.get(6) {
        None => false,
        Some(a) if is(a, "withweights") && args.len() == 7 => true,
        Some(_) => return Err(SYNTAX.into()),
    };
    let Some(z) = super::zset::read(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        ctx.out.array(0);
        return Ok(());
    };
    // One pass over the set's own table: no copy of the set, no sort.
    let mut top = TopK::new(k as usize, z.len());
    for (_, member, &score) in z.dict().iter() {
        // Not `(now - score).max(0.0)`, which makes a NaN age (now and score infinite alike)
        // 0, weight 1: a NaN age has no weight and the member is left out, as in the scripts.
        let age = if now < score { 0.0 } else { now - score };
        let w = decay.weight(age, param);
        if w > 0.0 {
            top.offer(w, member);
        }
    }
    let out = &mut *ctx.out;
    out.array(top.best.len() * if with_weights { 2 } else { 1 });
    for (w, m) in top.best {
        out.bulk(m);
        if with_weights {
            out.double(w);
        }
    }
    Ok(())
}

pub const COMMANDS: &[Command] = &[
    Command::new("goblin.cad", cad, 3, WRITE | FAST)
        // It reads the value to compare and may delete the key, as GETDEL does.
        .key(1, RW | ACCESS | DELETE)
        // ACL: a string command, as GETDEL (`+@string` grants it).
        .acl(super::acl::STRING)
        .group(GROUP)
        .doc(
            "Deletes a key if it holds the given string (compare-and-delete, the Redlock unlock).",
            "0.1.0",
            "O(1)",
            "key token",
        ),
    Command::new(
        "goblin.td_leaderboard_rescore",
        td_leaderboard_rescore,
        -6,
        READONLY,
    )
    .key(1, RO | ACCESS)
    // ACL: a sorted-set read, as ZRANGE (`+@sortedset` grants it).
    .acl(super::acl::SORTEDSET)
    .group(GROUP)
    .doc(
        "Returns the top k members of a sorted set of last-activity times by time-decayed weight.",
        "0.1.0",
        "O(N*k) worst case, with N the number of members in the sorted set and k the number asked \
         for (one pass; an insertion into the sorted top k moves up to k entries).",
        "key now mode:(LINEAR | EXP | STEP) param k [WITHWEIGHTS]",
    ),
];
