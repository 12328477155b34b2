//! The sorted-set type (Redis's t_zset.c data side): member → score, ordered by (score, member).
//!
//! Two structures, as Redis's skiplist encoding:
//! - `dict`: member → score on the keyspace's `Dict`, for O(1) ZSCORE, ZSCAN's stable cursor and
//!   ZRANDMEMBER's O(1) sampling;
//! - a skiplist with spans (Redis's `zskiplist`) on an index arena: nodes live in one `Vec` and link by
//!   `u32` index, so rank ↔ node, range bounds and ordered walks are O(log n).
//!
//! Entry points: `ZSet::new`, `insert`, `update`, `remove`, `score`, `rank`, `at_rank`, `next`,
//! `prev`, `first_in`, `last_in` (with a `Range` of scores or of member bytes), `random`, `dict`.
//!
//! `OBJECT ENCODING` follows Redis 7.0: a set is created `listpack` (unless the thresholds forbid)
//! and becomes `skiplist` for good once it has more than `zset-max-listpack-entries` members or a
//! member longer than `zset-max-listpack-value` bytes. The representation is the same either way.

use super::compact::CompactBytes;
use super::Dict;
use crate::util::rand_u64;

const MAX_LEVEL: usize = 32;
const NIL: u32 = u32::MAX;
const HEAD: u32 = 0;

/// A node's position in the arena. Valid until the node is removed.
pub type NodeId = u32;

#[derive(Clone, Copy)]
struct Level {
    next: u32,
    /// Number of level-0 steps this link jumps over.
    span: u32,
}

#[derive(Clone)]
struct Node {
    member: CompactBytes,
    score: f64,
    prev: u32,
    levels: Box<[Level]>,
}

/// The encoding thresholds (`zset-max-listpack-entries`, `zset-max-listpack-value`).
#[derive(Clone, Copy)]
pub struct Limits {
    pub entries: usize,
    pub value: usize,
}

/// One end of a score range (`1.5`, `(1.5`, `-inf`).
#[derive(Clone, Copy, Debug)]
pub struct ScoreBound {
    pub value: f64,
    pub exclusive: bool,
}

/// One end of a lexicographic range (`-`, `+`, `[abc`, `(abc`).
#[derive(Clone, Debug, PartialEq)]
pub enum LexBound {
    Min,
    Max,
    Incl(Vec<u8>),
    Excl(Vec<u8>),
}

/// A range of scores or of members (Redis's `zrangespec` / `zlexrangespec`).
#[derive(Clone, Debug)]
pub enum Range {
    Score(ScoreBound, ScoreBound),
    Lex(LexBound, LexBound),
}

/// Redis's `sdscmplex`: compares a member with a lex bound's value (`-` below all, `+` above all).
fn cmp_lex(a: &LexBound, b: &LexBound) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    use LexBound::*;
    let val = |x: &LexBound| match x {
        Incl(v) | Excl(v) => Some(v.clone()),
        _ => None,
    };
    match (a, b) {
        (Min, Min) | (Max, Max) => Equal,
        (Min, _) | (_, Max) => Less,
        (Max, _) | (_, Min) => Greater,
        _ => val(a).cmp(&val(b)),
    }
}

impl Range {
    /// True when no value can be in the range (min above max, or equal with an exclusive end).
    pub fn is_empty(&self) -> bool {
        match self {
            Range::Score(min, max) => {
                min.value > max.value
                    || (min.value == max.value && (min.exclusive || max.exclusive))
            }
            Range::Lex(min, max) => {
                let c = cmp_lex(min, max);
                let ex = |b: &LexBound| !matches!(b, LexBound::Incl(_));
                c.is_gt() || (c.is_eq() && (ex(min) || ex(max)))
            }
        }
    }

    /// The (score, member) is at or above the range's lower end.
    pub fn above_min(&self, score: f64, member: &[u8]) -> bool {
        match self {
            Range::Score(min, _) => {
                if min.exclusive {
                    score > min.value
                } else {
                    score >= min.value
                }
            }
            Range::Lex(min, _) => match min {
                LexBound::Min => true,
                LexBound::Max => false,
                LexBound::Incl(v) => member >= &v[..],
                LexBound::Excl(v) => member > &v[..],
            },
        }
    }

    /// The (score, member) is at or below the range's upper end.
    pub fn below_max(&self, score: f64, member: &[u8]) -> bool {
        match self {
            Range::Score(_, max) => {
                if max.exclusive {
                    score < max.value
                } else {
                    score <= max.value
                }
            }
            Range::Lex(_, max) => match max {
                LexBound::Min => false,
                LexBound::Max => true,
                LexBound::Incl(v) => member <= &v[..],
                LexBound::Excl(v) => member < &v[..],
            },
        }
    }
}

pub struct ZSet {
    dict: Dict<f64>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    tail: u32,
    level: usize,
    listpack: bool,
}

impl Clone for ZSet {
    fn clone(&self) -> Self {
        let mut dict = Dict::default();
        for (_, k, v) in self.dict.iter() {
            dict.insert_new(k, *v);
        }
        ZSet {
            dict,
            nodes: self.nodes.clone(),
            free: self.free.clone(),
            tail: self.tail,
            level: self.level,
            listpack: self.listpack,
        }
    }
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet::new(false)
    }
}

/// (score, member) order: by score, ties by member bytes.
fn less(s1: f64, m1: &[u8], s2: f64, m2: &[u8]) -> bool {
    s1 < s2 || (s1 == s2 && m1 < m2)
}

fn random_level() -> usize {
    // Redis's ZSKIPLIST_P = 0.25: each extra level with probability 1/4.
    let r = rand_u64();
    let mut level = 1;
    let mut bits = r;
    while level < MAX_LEVEL && bits & 3 == 0 {
        level += 1;
        bits >>= 2;
    }
    level
}

impl ZSet {
    /// An empty set, reported as `listpack` when `listpack` is true.
    pub fn new(listpack: bool) -> ZSet {
        ZSet {
            dict: Dict::default(),
            nodes: vec![Node {
                member: CompactBytes::default(),
                score: 0.0,
                prev: NIL,
                levels: vec![Level { next: NIL, span: 0 }; MAX_LEVEL].into_boxed_slice(),
            }],
            free: Vec::new(),
            tail: NIL,
            level: 1,
            listpack,
        }
    }

    /// The set a store command (ZUNIONSTORE, ZRANGESTORE, ...) would create for a result with this
    /// many members, the longest `max_len` bytes: Redis's `zsetConvertToListpackIfNeeded`.
    pub fn for_result(len: usize, max_len: usize, lim: Limits) -> ZSet {
        ZSet::new(len <= lim.entries && max_len <= lim.value)
    }

    pub fn len(&self) -> usize {
        self.dict.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    pub fn encoding(&self) -> &'static str {
        if self.listpack {
            "listpack"
        } else {
            "skiplist"
        }
    }

    pub fn is_listpack(&self) -> bool {
        self.listpack
    }

    /// Switches to `skiplist` for good (a member too long or too many members).
    pub fn convert(&mut self) {
        self.listpack = false;
    }

    /// Each member's approximate heap footprint (MEMORY USAGE): in the table and in the ordered
    /// index.
    pub fn element_sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.dict
            .iter()
            .map(|(_, k, _)| 2 * k.len() + 80 + std::mem::size_of::<Node>())
    }

    /// The member → score table (ZSCAN walks its slots, ZRANDMEMBER samples it).
    pub fn dict(&self) -> &Dict<f64> {
        &self.dict
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.dict.get(member).copied()
    }

    /// A uniformly random member and its score.
    pub fn random(&self) -> Option<(&[u8], f64)> {
        let slot = self.dict.random_slot(rand_u64)?;
        Some((self.dict.key_at(slot), *self.dict.value_at(slot)))
    }

    /// Adds a member known to be absent, converting the encoding as Redis's `zsetAdd` does.
    pub fn insert(&mut self, member: &[u8], score: f64, lim: Limits) {
        if self.listpack && (self.len() + 1 > lim.entries || member.len() > lim.value) {
            self.listpack = false;
        }
        let score = self.stored(score);
        self.dict.insert_new(member, score);
        self.sl_insert(score, member.into());
    }

    /// A listpack keeps scores as text, where `-0` is written `0`: so does a set reported as one.
    fn stored(&self, score: f64) -> f64 {
        if self.listpack && score == 0.0 {
            0.0
        } else {
            score
        }
    }

    /// Changes the score of a present member.
    pub fn update(&mut self, member: &[u8], score: f64) {
        let score = self.stored(score);
        let slot = self.dict.find(member).expect("member present");
        let old = *self.dict.value_at(slot);
        if old.to_bits() == score.to_bits() {
            return;
        }
        *self.dict.value_at_mut(slot) = score;
        let boxed = self.sl_delete(old, member).expect("member in skiplist");
        self.sl_insert(score, boxed);
    }

    /// Removes a member, returning its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let (_, score) = self.dict.remove(member)?;
        self.sl_delete(score, member).expect("member in skiplist");
        Some(score)
    }

    /// 0-based rank of a member in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.rank_of(score, member))
    }

    /// 0-based rank of a present (score, member).
    fn rank_of(&self, score: f64, member: &[u8]) -> usize {
        let mut x = HEAD;
        let mut rank = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.next == NIL {
                    break;
                }
                let n = &self.nodes[l.next as usize];
                if less(n.score, &n.member, score, member)
                    || (n.score == score && *n.member == *member)
                {
                    rank += l.span as usize;
                    x = l.next;
                } else {
                    break;
                }
            }
            let n = &self.nodes[x as usize];
            if x != HEAD && n.score == score && *n.member == *member {
                return rank - 1;
            }
        }
        rank.saturating_sub(1)
    }

    /// 0-based rank of a node.
    pub fn rank_of_node(&self, id: NodeId) -> usize {
        let n = &self.nodes[id as usize];
        self.rank_of(n.score, &n.member)
    }

    /// The node at 0-based ascending rank `r`.
    pub fn at_rank(&self, r: usize) -> Option<NodeId> {
        if r >= self.len() {
            return None;
        }
        let target = r + 1;
        let mut x = HEAD;
        let mut traversed = 0usize;
        for i in (0..self.level).rev() {
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.next != NIL && traversed + l.span as usize <= target {
                    traversed += l.span as usize;
                    x = l.next;
                } else {
                    break;
                }
            }
            if traversed == target {
                return Some(x);
            }
        }
        None
    }

    /// The member and score of a node.
    pub fn get(&self, id: NodeId) -> (&[u8], f64) {
        let n = &self.nodes[id as usize];
        (&n.member, n.score)
    }

    pub fn first(&self) -> Option<NodeId> {
        let n = self.nodes[HEAD as usize].levels[0].next;
        (n != NIL).then_some(n)
    }

    pub fn last(&self) -> Option<NodeId> {
        (self.tail != NIL).then_some(self.tail)
    }

    pub fn next(&self, id: NodeId) -> Option<NodeId> {
        let n = self.nodes[id as usize].levels[0].next;
        (n != NIL).then_some(n)
    }

    pub fn prev(&self, id: NodeId) -> Option<NodeId> {
        let p = self.nodes[id as usize].prev;
        (p != NIL).then_some(p)
    }

    /// Whether `range` can hold a member at all (Redis's `zslIsInRange` / `zslIsInLexRange`): not
    /// empty, the last member not below its min and the first not above its max. Scores are
    /// sorted, so for a score range that only spares a search; a lex range over unequal scores
    /// (unordered members) is empty whenever the two ends say so, as in Redis.
    fn may_hold(&self, range: &Range) -> bool {
        if range.is_empty() {
            return false;
        }
        let (Some(first), Some(last)) = (self.first(), self.last()) else {
            return false;
        };
        let (lm, ls) = self.get(last);
        let (fm, fs) = self.get(first);
        range.above_min(ls, lm) && range.below_max(fs, fm)
    }

    /// The first node inside `range` (Redis's `zslFirstInRange` / `zslFirstInLexRange`).
    pub fn first_in(&self, range: &Range) -> Option<NodeId> {
        if !self.may_hold(range) {
            return None;
        }
        if self.linear(range) {
            let mut cur = self.first();
            while let Some(id) = cur {
                let (m, s) = self.get(id);
                if range.above_min(s, m) {
                    return range.below_max(s, m).then_some(id);
                }
                cur = self.next(id);
            }
            return None;
        }
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let nx = self.nodes[x as usize].levels[i].next;
                if nx == NIL {
                    break;
                }
                let n = &self.nodes[nx as usize];
                if range.above_min(n.score, &n.member) {
                    break;
                }
                x = nx;
            }
        }
        let nx = self.nodes[x as usize].levels[0].next;
        if nx == NIL {
            return None;
        }
        let n = &self.nodes[nx as usize];
        range.below_max(n.score, &n.member).then_some(nx)
    }

    /// The last node inside `range` (Redis's `zslLastInRange` / `zslLastInLexRange`).
    pub fn last_in(&self, range: &Range) -> Option<NodeId> {
        if !self.may_hold(range) {
            return None;
        }
        if self.linear(range) {
            let mut cur = self.last();
            while let Some(id) = cur {
                let (m, s) = self.get(id);
                if range.below_max(s, m) {
                    return range.above_min(s, m).then_some(id);
                }
                cur = self.prev(id);
            }
            return None;
        }
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let nx = self.nodes[x as usize].levels[i].next;
                if nx == NIL {
                    break;
                }
                let n = &self.nodes[nx as usize];
                if !range.below_max(n.score, &n.member) {
                    break;
                }
                x = nx;
            }
        }
        if x == HEAD {
            return None;
        }
        let n = &self.nodes[x as usize];
        range.above_min(n.score, &n.member).then_some(x)
    }

    /// Lex ranges over a listpack are found by a linear walk, as Redis's `zzlFirstInLexRange`
    /// does. It only differs from the skiplist's descent when scores differ, where Redis's lex
    /// order is undefined but a small set's answer is still deterministic.
    fn linear(&self, range: &Range) -> bool {
        self.listpack && matches!(range, Range::Lex(..))
    }

    /// Number of members inside `range` (ZCOUNT, ZLEXCOUNT), in O(log n), as Redis computes it:
    /// from the ranks of the first and last members in range (a walk for a listpack's lex range).
    pub fn count_in(&self, range: &Range) -> i64 {
        let Some(first) = self.first_in(range) else {
            return 0;
        };
        if self.linear(range) {
            let mut n = 0;
            let mut cur = Some(first);
            while let Some(id) = cur {
                let (m, s) = self.get(id);
                if !range.below_max(s, m) {
                    break;
                }
                n += 1;
                cur = self.next(id);
            }
            return n;
        }
        let len = self.len() as i64;
        let mut count = len - self.rank_of_node(first) as i64;
        if let Some(last) = self.last_in(range) {
            count -= len - 1 - self.rank_of_node(last) as i64;
        }
        count
    }

    fn alloc(&mut self, node: Node) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Redis's `zslInsert`: (score, member) must not be present.
    #[allow(clippy::needless_range_loop)] // levels index several parallel arrays, as in Redis
    fn sl_insert(&mut self, score: f64, member: CompactBytes) {
        let mut update = [HEAD; MAX_LEVEL];
        let mut rank = [0u32; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
            loop {
                let l = self.nodes[x as usize].levels[i];
                if l.next == NIL {
                    break;
                }
                let n = &self.nodes[l.next as usize];
                if less(n.score, &n.member, score, &member) {
                    rank[i] += l.span;
                    x = l.next;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let level = random_level();
        if level > self.level {
            for i in self.level..level {
                rank[i] = 0;
                update[i] = HEAD;
                self.nodes[HEAD as usize].levels[i].span = self.len() as u32 - 1;
            }
            self.level = level;
        }
        let id = self.alloc(Node {
            member,
            score,
            prev: NIL,
            levels: vec![Level { next: NIL, span: 0 }; level].into_boxed_slice(),
        });
        for i in 0..level {
            let u = update[i] as usize;
            let ul = self.nodes[u].levels[i];
            self.nodes[id as usize].levels[i] = Level {
                next: ul.next,
                span: ul.span - (rank[0] - rank[i]),
            };
            self.nodes[u].levels[i] = Level {
                next: id,
                span: (rank[0] - rank[i]) + 1,
            };
        }
        for i in level..self.level {
            self.nodes[update[i] as usize].levels[i].span += 1;
        }
        self.nodes[id as usize].prev = if update[0] == HEAD { NIL } else { update[0] };
        let next0 = self.nodes[id as usize].levels[0].next;
        if next0 != NIL {
            self.nodes[next0 as usize].prev = id;
        } else {
            self.tail = id;
        }
    }

    /// Redis's `zslDelete`: unlinks (score, member), returning the member's bytes.
    #[allow(clippy::needless_range_loop)] // levels index several parallel arrays, as in Redis
    fn sl_delete(&mut self, score: f64, member: &[u8]) -> Option<CompactBytes> {
        let mut update = [HEAD; MAX_LEVEL];
        let mut x = HEAD;
        for i in (0..self.level).rev() {
            loop {
                let nx = self.nodes[x as usize].levels[i].next;
                if nx == NIL {
                    break;
                }
                let n = &self.nodes[nx as usize];
                if less(n.score, &n.member, score, member) {
                    x = nx;
                } else {
                    break;
                }
            }
            update[i] = x;
        }
        let target = self.nodes[x as usize].levels[0].next;
        if target == NIL {
            return None;
        }
        let t = &self.nodes[target as usize];
        if t.score != score || *t.member != *member {
            return None;
        }
        for i in 0..self.level {
            let u = update[i] as usize;
            if self.nodes[u].levels[i].next == target {
                let tl = self.nodes[target as usize].levels[i];
                self.nodes[u].levels[i].span += tl.span;
                self.nodes[u].levels[i].span -= 1;
                self.nodes[u].levels[i].next = tl.next;
            } else {
                self.nodes[u].levels[i].span -= 1;
            }
        }
        let next0 = self.nodes[target as usize].levels[0].next;
        let prev = self.nodes[target as usize].prev;
        if next0 != NIL {
            self.nodes[next0 as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        while self.level > 1 && self.nodes[HEAD as usize].levels[self.level - 1].next == NIL {
            self.level -= 1;
        }
        let node = &mut self.nodes[target as usize];
        let member = std::mem::take(&mut node.member);
        node.levels = Box::default();
        self.free.push(target);
        if self.dict.is_empty() {
            // Start over so the arena doesn't keep the high-water mark of a drained set.
            let listpack = self.listpack;
            *self = ZSet::new(listpack);
        }
        Some(member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, HashMap};

    const LIM: Limits = Limits {
        entries: 128,
        value: 64,
    };

    /// A total order on f64 for the model (scores are never NaN).
    #[derive(Clone, Copy, PartialEq, PartialOrd, Debug)]
    struct S(f64);
    impl Eq for S {}
    #[allow(clippy::derive_ord_xor_partial_ord)]
    impl Ord for S {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            self.0.partial_cmp(&o.0).expect("no NaN")
        }
    }

    #[derive(Default)]
    struct Model {
        order: BTreeSet<(S, Vec<u8>)>,
        scores: HashMap<Vec<u8>, f64>,
    }

    fn check_invariants(z: &ZSet, m: &Model) {
        assert_eq!(z.len(), m.scores.len());
        let want: Vec<(f64, Vec<u8>)> = m.order.iter().map(|(s, k)| (s.0, k.clone())).collect();
        let mut got = Vec::new();
        let mut cur = z.first();
        while let Some(id) = cur {
            let (k, s) = z.get(id);
            got.push((s, k.to_vec()));
            cur = z.next(id);
        }
        assert_eq!(got, want);
        // Backward links agree.
        let mut back = Vec::new();
        let mut cur = z.last();
        while let Some(id) = cur {
            let (k, s) = z.get(id);
            back.push((s, k.to_vec()));
            cur = z.prev(id);
        }
        back.reverse();
        assert_eq!(back, want);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(u8, i8),
        Remove(u8),
        Rank(u8),
        AtRank(u8),
        ScoreRange(i8, bool, i8, bool),
        LexRange(u8, bool, u8, bool),
    }

    fn member(i: u8) -> Vec<u8> {
        format!("m{:02}", i % 40).into_bytes()
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u8>(), -8i8..8).prop_map(|(m, s)| Op::Add(m, s)),
            2 => any::<u8>().prop_map(Op::Remove),
            1 => any::<u8>().prop_map(Op::Rank),
            1 => any::<u8>().prop_map(Op::AtRank),
            1 => (-9i8..9, any::<bool>(), -9i8..9, any::<bool>())
                .prop_map(|(a, x, b, y)| Op::ScoreRange(a, x, b, y)),
            1 => (any::<u8>(), any::<bool>(), any::<u8>(), any::<bool>())
                .prop_map(|(a, x, b, y)| Op::LexRange(a, x, b, y)),
        ]
    }

    fn check_range(z: &ZSet, m: &Model, range: &Range) {
        let want: Vec<Vec<u8>> = m
            .order
            .iter()
            .filter(|(s, k)| range.above_min(s.0, k) && range.below_max(s.0, k))
            .map(|(_, k)| k.clone())
            .collect();
        let mut got = Vec::new();
        if let Some(mut id) = z.first_in(range) {
            loop {
                let (k, s) = z.get(id);
                if !range.below_max(s, k) {
                    break;
                }
                got.push(k.to_vec());
                match z.next(id) {
                    Some(n) => id = n,
                    None => break,
                }
            }
        }
        let mut rev = Vec::new();
        if let Some(mut id) = z.last_in(range) {
            loop {
                let (k, s) = z.get(id);
                if !range.above_min(s, k) {
                    break;
                }
                rev.push(k.to_vec());
                match z.prev(id) {
                    Some(n) => id = n,
                    None => break,
                }
            }
        }
        rev.reverse();
        assert_eq!(got, want);
        assert_eq!(rev, want);
        assert_eq!(z.count_in(range), want.len() as i64);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn skiplist_matches_model(
            ops in proptest::collection::vec(op(), 1..200),
            same in any::<bool>(),
            listpack in any::<bool>(),
        ) {
            // Lex ranges are only meaningful (as in Redis) when every score is the same.
            // A listpack answers lex ranges by a linear walk, a skiplist by its descent.
            let mut z = ZSet::new(listpack);
            let mut m = Model::default();
            for op in ops {
                match op {
                    Op::Add(i, s) => {
                        let k = member(i);
                        let s = if same { 0.0 } else { s as f64 };
                        match m.scores.insert(k.clone(), s) {
                            Some(old) => {
                                m.order.remove(&(S(old), k.clone()));
                                z.update(&k, s);
                            }
                            None => z.insert(&k, s, LIM),
                        }
                        m.order.insert((S(s), k));
                    }
                    Op::Remove(i) => {
                        let k = member(i);
                        let want = m.scores.remove(&k);
                        if let Some(s) = want {
                            m.order.remove(&(S(s), k.clone()));
                        }
                        prop_assert_eq!(z.remove(&k), want);
                    }
                    Op::Rank(i) => {
                        let k = member(i);
                        let want = m.order.iter().position(|(_, x)| *x == k);
                        prop_assert_eq!(z.rank(&k), want);
                    }
                    Op::AtRank(r) => {
                        let r = r as usize % (m.order.len() + 2);
                        let want = m.order.iter().nth(r).map(|(s, k)| (k.clone(), s.0));
                        let got = z.at_rank(r).map(|id| {
                            let (k, s) = z.get(id);
                            (k.to_vec(), s)
                        });
                        prop_assert_eq!(got, want);
                    }
                    Op::ScoreRange(a, x, b, y) => {
                        let range = Range::Score(
                            ScoreBound { value: a as f64, exclusive: x },
                            ScoreBound { value: b as f64, exclusive: y },
                        );
                        check_range(&z, &m, &range);
                    }
                    Op::LexRange(..) if !same => {}
                    Op::LexRange(a, x, b, y) => {
                        let bound = |i: u8, ex: bool| match i % 10 {
                            0 => LexBound::Min,
                            1 => LexBound::Max,
                            _ if ex => LexBound::Excl(member(i)),
                            _ => LexBound::Incl(member(i)),
                        };
                        let range = Range::Lex(bound(a, x), bound(b, y));
                        check_range(&z, &m, &range);
                    }
                }
            }
            check_invariants(&z, &m);
        }
    }

    #[test]
    fn encoding_converts_one_way() {
        let lim = Limits {
            entries: 3,
            value: 4,
        };
        let mut z = ZSet::new(true);
        for (i, k) in [b"a", b"b", b"c"].iter().enumerate() {
            z.insert(*k, i as f64, lim);
        }
        assert_eq!(z.encoding(), "listpack");
        z.insert(b"d", 3.0, lim);
        assert_eq!(z.encoding(), "skiplist");
        z.remove(b"d");
        assert_eq!(z.encoding(), "skiplist");
        let mut z = ZSet::new(true);
        z.insert(b"toolong", 1.0, lim);
        assert_eq!(z.encoding(), "skiplist");
    }

    #[test]
    fn big_set_ranks() {
        let mut z = ZSet::new(false);
        let n = 200_000;
        for i in 0..n {
            z.insert(format!("m{i:07}").as_bytes(), (i / 2) as f64, LIM);
        }
        for r in [0, 1, 12345, n / 2, n - 1] {
            let id = z.at_rank(r).unwrap();
            assert_eq!(z.get(id).0, format!("m{r:07}").as_bytes());
            assert_eq!(z.rank(format!("m{r:07}").as_bytes()), Some(r));
        }
        let range = Range::Score(
            ScoreBound {
                value: 100.0,
                exclusive: false,
            },
            ScoreBound {
                value: 200.0,
                exclusive: true,
            },
        );
        assert_eq!(z.count_in(&range), 200);
    }
}
