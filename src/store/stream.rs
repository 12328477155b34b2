//! The stream type, as Redis's `t_stream.c` lays it out: an ordered map of nodes keyed by their
//! master ID (Redis's rax), each node one listpack in exactly Redis's layout, so RDB and DUMP
//! write nodes as they are.
//!
//! A node's listpack starts with the master entry — `count` (live entries), `deleted`,
//! `num-fields`, the master fields, and a `0` terminator — then its entries, each `flags`,
//! `ms-delta`, `seq-delta` (from the master ID), `num-fields` and the fields unless the entry has
//! `SAMEFIELDS` (its fields are the master's), the values, and `lp-count` (how many elements the
//! entry took, so it can be walked backwards). Deleting flags an entry (`DELETED`) and frees the
//! node when its last live entry goes; trimming removes whole nodes, or flags entries of the
//! first node when exact.
//!
//! Also the consumer-group state: groups by name, each with its pending entries list (by ID) and
//! its consumers (by name, each with its own pending IDs in order).

use std::collections::{BTreeMap, BTreeSet};

use super::listpack::{self as lp, Elem};

pub const FLAG_DELETED: i64 = 1;
pub const FLAG_SAMEFIELDS: i64 = 2;

/// Redis's `STREAM_LISTPACK_MAX_SIZE`: no node and no entry grows past 1 GiB.
const LISTPACK_MAX_SIZE: usize = 1 << 30;

/// `SCG_INVALID_ENTRIES_READ`: a group's read counter when it cannot be known.
pub const ENTRIES_READ_INVALID: i64 = -1;

/// A stream entry ID: milliseconds and sequence, ordered as Redis compares them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Debug, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    pub fn is_zero(&self) -> bool {
        *self == StreamId::MIN
    }

    /// The next ID (`streamIncrID`), or `None` past the last possible one.
    pub fn incr(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(StreamId::new(ms + 1, 0)),
            (ms, seq) => Some(StreamId::new(ms, seq + 1)),
        }
    }

    /// The previous ID (`streamDecrID`), or `None` before 0-0.
    pub fn decr(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(StreamId::new(ms - 1, u64::MAX)),
            (ms, seq) => Some(StreamId::new(ms, seq - 1)),
        }
    }

    /// The 128-bit big-endian form the rax keys nodes and PEL entries by.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; 16]) -> StreamId {
        StreamId::new(
            u64::from_be_bytes(b[..8].try_into().unwrap()),
            u64::from_be_bytes(b[8..].try_into().unwrap()),
        )
    }
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// When a new node starts (`stream-node-max-bytes`, `stream-node-max-entries`; 0 = no limit).
#[derive(Clone, Copy)]
pub struct NodeLimits {
    pub max_bytes: usize,
    pub max_entries: i64,
}

#[derive(Debug, PartialEq)]
pub enum AddError {
    /// The ID is not greater than the stream's last ID (Redis's `EDOM`).
    NotGreater,
    /// The fields and values are too large for a node (Redis's `ERANGE`).
    TooLarge,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrimBy {
    MaxLen(u64),
    MinId(StreamId),
}

/// A trim request (Redis's `streamAddTrimArgs`): `limit` 0 is unlimited.
#[derive(Clone, Copy, Debug)]
pub struct Trim {
    pub by: TrimBy,
    pub approx: bool,
    pub limit: i64,
}

/// A pending entry: delivered to `consumer`, not yet acknowledged (Redis's `streamNACK`).
#[derive(Clone, Debug, PartialEq)]
pub struct Nack {
    /// Unix milliseconds of the last delivery.
    pub delivery_time: i64,
    pub delivery_count: u64,
    pub consumer: Box<[u8]>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Consumer {
    /// Unix milliseconds of the consumer's last interaction.
    pub seen_time: i64,
    /// The IDs pending for this consumer; each has its record in the group's `pel`.
    pub pel: BTreeSet<StreamId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub last_id: StreamId,
    /// The logical read counter (`entries-read`), or `ENTRIES_READ_INVALID`.
    pub entries_read: i64,
    pub pel: BTreeMap<StreamId, Nack>,
    pub consumers: BTreeMap<Box<[u8]>, Consumer>,
}

impl Group {
    pub fn new(last_id: StreamId, entries_read: i64) -> Group {
        Group {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }
}

#[derive(Clone, Default)]
pub struct Stream {
    nodes: BTreeMap<StreamId, Vec<u8>>,
    pub length: u64,
    pub last_id: StreamId,
    pub first_id: StreamId,
    pub max_deleted_entry_id: StreamId,
    pub entries_added: u64,
    pub groups: BTreeMap<Box<[u8]>, Group>,
}

/// The position of an entry's elements inside its node.
struct Parsed {
    id: StreamId,
    flags: i64,
    numfields: usize,
    /// The first field (or, with `SAMEFIELDS`, the first value).
    fields_at: usize,
    /// The entry's `lp-count` element.
    end: usize,
}

/// A node's master entry: the first master field, how many, and the terminator.
fn master(node: &[u8]) -> (usize, usize, usize) {
    let count = lp::first(node).expect("a master entry");
    let num = lp::next(node, lp::next(node, count).unwrap()).unwrap();
    let n = lp::get_int(node, num) as usize;
    let mut p = lp::next(node, num).unwrap();
    let first_field = p;
    for _ in 0..n {
        p = lp::next(node, p).unwrap();
    }
    (first_field, n, p)
}

/// Parses the entry whose `flags` element is at `p`.
fn parse_at(node: &[u8], base: StreamId, master_fields: usize, p: usize) -> Parsed {
    let flags = lp::get_int(node, p);
    let ms_at = lp::next(node, p).unwrap();
    let seq_at = lp::next(node, ms_at).unwrap();
    let id = StreamId::new(
        base.ms.wrapping_add(lp::get_int(node, ms_at) as u64),
        base.seq.wrapping_add(lp::get_int(node, seq_at) as u64),
    );
    let mut q = lp::next(node, seq_at).unwrap();
    let (numfields, elems) = if flags & FLAG_SAMEFIELDS != 0 {
        (master_fields, master_fields)
    } else {
        let n = lp::get_int(node, q) as usize;
        q = lp::next(node, q).unwrap();
        (n, n * 2)
    };
    let fields_at = q;
    for _ in 0..elems {
        q = lp::next(node, q).unwrap();
    }
    Parsed {
        id,
        flags,
        numfields,
        fields_at,
        end: q,
    }
}

/// One entry as an iterator yields it.
pub struct EntryRef<'a> {
    pub id: StreamId,
    pub flags: i64,
    pub numfields: usize,
    node: &'a [u8],
    master_fields_at: usize,
    fields_at: usize,
}

impl<'a> EntryRef<'a> {
    /// The entry's (field, value) pairs, in order.
    pub fn pairs(&self) -> impl Iterator<Item = (Elem<'a>, Elem<'a>)> + '_ {
        let node = self.node;
        let same = self.flags & FLAG_SAMEFIELDS != 0;
        let mut f = if same {
            self.master_fields_at
        } else {
            self.fields_at
        };
        let mut v = if same {
            self.fields_at
        } else {
            lp::next(node, f).unwrap_or(f)
        };
        (0..self.numfields).map(move |i| {
            let pair = (lp::get(node, f), lp::get(node, v));
            if i + 1 < self.numfields {
                if same {
                    f = lp::next(node, f).unwrap();
                    v = lp::next(node, v).unwrap();
                } else {
                    f = lp::next(node, v).unwrap();
                    v = lp::next(node, f).unwrap();
                }
            }
            pair
        })
    }
}

/// The node an iterator is in: its master ID, listpack, master fields, and the cursor (forward:
/// the `lp-count` of the entry last read; backward: that of the next entry to read).
#[derive(Clone, Copy)]
struct NodeCursor<'a> {
    base: StreamId,
    node: &'a [u8],
    mfields_at: usize,
    mcount: usize,
    cursor: Option<usize>,
}

/// Iterates the entries between two IDs (inclusive), forward or backward (`streamIterator`).
pub struct Iter<'a> {
    nodes: Box<dyn Iterator<Item = (&'a StreamId, &'a Vec<u8>)> + 'a>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    tombstones: bool,
    cur: Option<NodeCursor<'a>>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if self.cur.is_none() {
                let (&base, node) = self.nodes.next()?;
                let (mfields_at, mcount, term) = master(node);
                let cursor = if self.rev { lp::last(node) } else { Some(term) };
                self.cur = Some(NodeCursor {
                    base,
                    node,
                    mfields_at,
                    mcount,
                    cursor,
                });
            }
            let NodeCursor {
                base,
                node,
                mfields_at,
                mcount,
                cursor,
            } = self.cur.expect("a node");
            let flags_at = match cursor {
                Some(c) if self.rev => {
                    let n = lp::get_int(node, c);
                    if n == 0 {
                        None
                    } else {
                        let mut p = c;
                        for _ in 0..n {
                            p = lp::prev(node, p).unwrap();
                        }
                        Some(p)
                    }
                }
                Some(c) => lp::next(node, c),
                None => None,
            };
            let Some(flags_at) = flags_at else {
                self.cur = None;
                continue;
            };
            let e = parse_at(node, base, mcount, flags_at);
            let next_cursor = if self.rev {
                lp::prev(node, flags_at)
            } else {
                Some(e.end)
            };
            self.cur.as_mut().expect("a node").cursor = next_cursor;
            if !self.tombstones && e.flags & FLAG_DELETED != 0 {
                continue;
            }
            if self.rev {
                if e.id > self.end {
                    continue;
                }
                if e.id < self.start {
                    return None;
                }
            } else {
                if e.id < self.start {
                    continue;
                }
                if e.id > self.end {
                    return None;
                }
            }
            return Some(EntryRef {
                id: e.id,
                flags: e.flags,
                numfields: e.numfields,
                node,
                master_fields_at: mfields_at,
                fields_at: e.fields_at,
            });
        }
    }
}

impl Stream {
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The nodes in ID order: master ID and listpack (what RDB writes).
    pub fn nodes(&self) -> impl Iterator<Item = (&StreamId, &Vec<u8>)> {
        self.nodes.iter()
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Adds a node as loaded from RDB; false if one with that master ID exists.
    pub fn insert_node(&mut self, master: StreamId, node: Vec<u8>) -> bool {
        if self.nodes.contains_key(&master) {
            return false;
        }
        self.nodes.insert(master, node);
        true
    }

    /// The entries from `start` to `end` inclusive, live ones only.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Iter<'_> {
        self.iter(start, end, rev, false)
    }

    fn iter(&self, start: StreamId, end: StreamId, rev: bool, tombstones: bool) -> Iter<'_> {
        // Start at the node holding the edge ID (the last whose master ID is not above it).
        let edge = if rev { end } else { start };
        let from = self
            .nodes
            .range(..=edge)
            .next_back()
            .map(|(k, _)| *k)
            .filter(|_| !edge.is_zero());
        let nodes: Box<dyn Iterator<Item = _>> = match (rev, from) {
            (false, Some(k)) => Box::new(self.nodes.range(k..)),
            (false, None) => Box::new(self.nodes.iter()),
            (true, Some(k)) => Box::new(self.nodes.range(..=k).rev()),
            (true, None) => Box::new(self.nodes.iter().rev()),
        };
        Iter {
            nodes,
            start,
            end,
            rev,
            tombstones,
            cur: None,
        }
    }

    /// The first or last ID, tombstones included or not (`streamGetEdgeID`); with no entry,
    /// MAX for the first and MIN for the last.
    pub fn edge_id(&self, first: bool, skip_tombstones: bool) -> StreamId {
        match self
            .iter(StreamId::MIN, StreamId::MAX, !first, !skip_tombstones)
            .next()
        {
            Some(e) => e.id,
            None if first => StreamId::MAX,
            None => StreamId::MIN,
        }
    }

    /// The ID of the last live entry (`streamLastValidID`).
    pub fn last_valid_id(&self) -> StreamId {
        self.edge_id(false, true)
    }

    /// Appends an entry of `fv` (field, value, field, value, ...) as `streamAppendItem`: with
    /// `use_id` `None` the ID is made from `now_ms`; with `(id, false)` the sequence is made.
    pub fn append<T: AsRef<[u8]>>(
        &mut self,
        fv: &[T],
        use_id: Option<(StreamId, bool)>,
        now_ms: u64,
        limits: NodeLimits,
    ) -> Result<StreamId, AddError> {
        let id = match use_id {
            Some((id, true)) => id,
            Some((id, false)) if id.ms == self.last_id.ms => {
                if self.last_id.seq == u64::MAX {
                    return Err(AddError::NotGreater);
                }
                StreamId::new(id.ms, self.last_id.seq + 1)
            }
            Some((id, false)) => StreamId::new(id.ms, 0),
            None if now_ms > self.last_id.ms => StreamId::new(now_ms, 0),
            None => self.last_id.incr().unwrap_or(StreamId::MIN),
        };
        if id <= self.last_id {
            return Err(AddError::NotGreater);
        }
        let total: usize = fv.iter().map(|e| e.as_ref().len()).sum();
        if total > LISTPACK_MAX_SIZE {
            return Err(AddError::TooLarge);
        }
        let numfields = fv.len() / 2;
        let max_bytes = match limits.max_bytes {
            0 => LISTPACK_MAX_SIZE,
            n => n.min(LISTPACK_MAX_SIZE),
        };
        let mut tail = self.nodes.last_entry();
        if let Some(node) = &mut tail {
            let full = if node.get().len() + total >= max_bytes {
                true
            } else if limits.max_entries != 0 {
                let n = node.get();
                let c = lp::first(n).unwrap();
                lp::get_int(n, c) + lp::get_int(n, lp::next(n, c).unwrap()) >= limits.max_entries
            } else {
                false
            };
            if full {
                node.get_mut().shrink_to_fit();
                tail = None;
            }
        }
        let mut flags = 0;
        let (master_id, node) = match tail {
            None => {
                let mut n = lp::Listpack::default();
                n.push_int(1);
                n.push_int(0);
                n.push_int(numfields as i64);
                for f in fv.iter().step_by(2) {
                    n.push(f.as_ref());
                }
                n.push_int(0);
                flags |= FLAG_SAMEFIELDS;
                self.nodes.insert(id, n.finish());
                (id, self.nodes.get_mut(&id).expect("just inserted"))
            }
            Some(e) => {
                let master_id = *e.key();
                let node = e.into_mut();
                let c = lp::first(node).unwrap();
                let count = lp::get_int(node, c);
                lp::replace_int(node, c, count + 1);
                let (mut f, mcount, _) = master(node);
                if mcount == numfields {
                    let mut same = true;
                    for field in fv.iter().step_by(2) {
                        if !lp::get(node, f).eq_bytes(field.as_ref()) {
                            same = false;
                            break;
                        }
                        f = lp::next(node, f).unwrap_or(f);
                    }
                    if same {
                        flags |= FLAG_SAMEFIELDS;
                    }
                }
                (master_id, node)
            }
        };
        let same = flags & FLAG_SAMEFIELDS != 0;
        lp::append_int(node, flags);
        lp::append_int(node, id.ms.wrapping_sub(master_id.ms) as i64);
        lp::append_int(node, id.seq.wrapping_sub(master_id.seq) as i64);
        if !same {
            lp::append_int(node, numfields as i64);
        }
        for pair in fv.chunks(2) {
            if !same {
                lp::append(node, pair[0].as_ref());
            }
            lp::append(node, pair[1].as_ref());
        }
        let lp_count = 3 + numfields + if same { 0 } else { numfields + 1 };
        lp::append_int(node, lp_count as i64);
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// Flags the live entry `id` deleted (`streamDeleteItem`), freeing its node when it held the
    /// last live entry; false if there is no such entry. First ID and tombstone are the caller's.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((&base, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let (_, mcount, term) = master(node);
        let mut cursor = term;
        let found = loop {
            let Some(p) = lp::next(node, cursor) else {
                break None;
            };
            let e = parse_at(node, base, mcount, p);
            if e.id == id && e.flags & FLAG_DELETED == 0 {
                break Some((p, e.flags));
            }
            if e.id >= id {
                break None;
            }
            cursor = e.end;
        };
        let Some((flags_at, flags)) = found else {
            return false;
        };
        lp::replace_int(node, flags_at, flags | FLAG_DELETED);
        let c = lp::first(node).unwrap();
        let live = lp::get_int(node, c);
        if live == 1 {
            self.nodes.remove(&base);
        } else {
            lp::replace_int(node, c, live - 1);
            let d = lp::next(node, c).unwrap();
            let deleted = lp::get_int(node, d);
            lp::replace_int(node, d, deleted + 1);
        }
        self.length -= 1;
        true
    }

    /// XDEL's effect: deletes each of `ids` that is live, keeping the first ID and the greatest
    /// deleted ID; how many were deleted.
    pub fn delete_ids(&mut self, ids: &[StreamId]) -> u64 {
        let (mut deleted, mut first_gone) = (0, false);
        for &id in ids {
            if self.delete(id) {
                first_gone |= id == self.first_id;
                if id > self.max_deleted_entry_id {
                    self.max_deleted_entry_id = id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
            } else if first_gone {
                self.first_id = self.edge_id(true, true);
            }
        }
        deleted
    }

    /// Trims as `streamTrim`: whole nodes from the head, then (unless approximate) entries of the
    /// first remaining node; how many entries went.
    pub fn trim(&mut self, t: Trim) -> u64 {
        let mut deleted: i64 = 0;
        let keys: Vec<StreamId> = self.nodes.keys().copied().collect();
        for base in keys {
            if let TrimBy::MaxLen(max) = t.by {
                if self.length <= max {
                    break;
                }
            }
            let node = self.nodes.get_mut(&base).expect("a node");
            let c = lp::first(node).unwrap();
            let entries = lp::get_int(node, c);
            if t.limit != 0 && deleted + entries > t.limit {
                break;
            }
            let remove_node = match t.by {
                TrimBy::MaxLen(max) => self.length - entries as u64 >= max,
                TrimBy::MinId(min) => {
                    let last = lp::last(node).unwrap();
                    let n = lp::get_int(node, last);
                    let mut p = last;
                    for _ in 0..n {
                        p = lp::prev(node, p).unwrap();
                    }
                    let (_, mcount, _) = master(node);
                    n != 0 && parse_at(node, base, mcount, p).id < min
                }
            };
            if remove_node {
                self.nodes.remove(&base);
                self.length -= entries as u64;
                deleted += entries;
                continue;
            }
            if t.approx {
                break;
            }
            let (_, mcount, term) = master(node);
            let mut from_node = 0;
            let mut cursor = term;
            while let Some(p) = lp::next(node, cursor) {
                let e = parse_at(node, base, mcount, p);
                let stop = match t.by {
                    TrimBy::MaxLen(max) => self.length <= max,
                    TrimBy::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                cursor = e.end;
                if e.flags & FLAG_DELETED == 0 {
                    // The new flags take the same single byte, so `cursor` stays valid.
                    lp::replace_int(node, p, e.flags | FLAG_DELETED);
                    from_node += 1;
                    self.length -= 1;
                }
            }
            deleted += from_node;
            let c = lp::first(node).unwrap();
            lp::replace_int(node, c, entries - from_node);
            let d = lp::next(node, c).unwrap();
            let marked = lp::get_int(node, d);
            lp::replace_int(node, d, marked + from_node);
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.edge_id(true, true);
        }
        deleted as u64
    }

    /// A group's read counter for an ID (`streamEstimateDistanceFromFirstEverEntry`).
    pub fn estimate_distance(&self, id: StreamId) -> i64 {
        if self.entries_added == 0 {
            return 0;
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        if id == self.last_id {
            return self.entries_added as i64;
        }
        if id > self.last_id {
            return ENTRIES_READ_INVALID;
        }
        if self.max_deleted_entry_id.is_zero() || self.max_deleted_entry_id < self.first_id {
            if id < self.first_id {
                return (self.entries_added - self.length) as i64;
            }
            if id == self.first_id {
                return (self.entries_added - self.length + 1) as i64;
            }
        }
        ENTRIES_READ_INVALID
    }

    /// Bytes held: the nodes' listpacks and the groups' records (MEMORY USAGE, DEBUG OBJECT).
    pub fn heap_size(&self) -> usize {
        let nodes: usize = self.nodes.values().map(|n| n.capacity() + 48).sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| {
                name.len()
                    + 64
                    + g.pel.values().map(|n| n.consumer.len() + 56).sum::<usize>()
                    + g.consumers
                        .iter()
                        .map(|(n, c)| n.len() + 48 + c.pel.len() * 24)
                        .sum::<usize>()
            })
            .sum();
        nodes + groups + 64
    }
}

/// Consumer groups (Redis's `streamCG` operations). A pending entry's record lives in the group's
/// PEL; its consumer's PEL holds the ID, so both are updated together.
impl Group {
    /// The consumer, its seen-time refreshed to `now` unless `None` (`streamLookupConsumer`).
    pub fn consumer(&mut self, name: &[u8], now: Option<i64>) -> Option<&mut Consumer> {
        let c = self.consumers.get_mut(name)?;
        if let Some(t) = now {
            c.seen_time = t;
        }
        Some(c)
    }

    /// Creates a consumer seen at `now`; false if it exists (`streamCreateConsumer`).
    pub fn create_consumer(&mut self, name: &[u8], now: i64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.consumers.insert(
            Box::from(name),
            Consumer {
                seen_time: now,
                pel: BTreeSet::new(),
            },
        );
        true
    }

    /// Deletes a consumer and its pending entries; how many it had (`streamDelConsumer`).
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        for id in &c.pel {
            self.pel.remove(id);
        }
        Some(c.pel.len())
    }

    /// Acknowledges `id`: drops it from both PELs; false if it was not pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pel.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(&nack.consumer) {
            c.pel.remove(&id);
        }
        true
    }

    /// Makes `id` pending for `consumer` (which exists), moving it from its former owner; the
    /// record is created with delivery count 1 at `now` if there was none, else `update` sets
    /// its time and count. Returns the record.
    pub fn assign(
        &mut self,
        id: StreamId,
        consumer: &[u8],
        now: i64,
        update: impl FnOnce(&mut Nack),
    ) -> &Nack {
        let fresh = !self.pel.contains_key(&id);
        let nack = self.pel.entry(id).or_insert_with(|| Nack {
            delivery_time: now,
            delivery_count: 1,
            consumer: Box::from(consumer),
        });
        update(nack);
        if fresh || &nack.consumer[..] != consumer {
            if !fresh {
                if let Some(old) = self.consumers.get_mut(&nack.consumer) {
                    old.pel.remove(&id);
                }
                nack.consumer = Box::from(consumer);
            }
            self.consumers
                .get_mut(consumer)
                .expect("the consumer exists")
                .pel
                .insert(id);
        }
        nack
    }
}

impl Stream {
    /// Creates a group; false if one of that name exists (`streamCreateCG`).
    pub fn create_group(&mut self, name: &[u8], last_id: StreamId, entries_read: i64) -> bool {
        if self.groups.contains_key(name) {
            return false;
        }
        self.groups
            .insert(Box::from(name), Group::new(last_id, entries_read));
        true
    }

    /// Whether a live entry has this ID (`streamEntryExists`).
    pub fn contains(&self, id: StreamId) -> bool {
        self.range(id, id, false).next().is_some()
    }

    /// Whether a deleted entry may lie between `start` and `end` (`streamRangeHasTombstones`).
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        if self.length == 0 || self.max_deleted_entry_id.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted_entry_id {
            return false;
        }
        start <= self.max_deleted_entry_id && self.max_deleted_entry_id <= end
    }

    /// A group's counter after it is delivered `id`, past its last ID (the bookkeeping of
    /// `streamReplyWithRange`).
    pub fn advance_group(&mut self, group: &[u8], id: StreamId) {
        let tombstones = self.range_has_tombstones(id, StreamId::MAX);
        let estimate = self.estimate_distance(id);
        let added = self.entries_added;
        let g = self.groups.get_mut(group).expect("the group exists");
        if g.entries_read != ENTRIES_READ_INVALID && !tombstones {
            g.entries_read += 1;
        } else if added != 0 {
            g.entries_read = estimate;
        }
        g.last_id = id;
    }

    /// How many entries the group has yet to be delivered, when it can be known
    /// (`streamReplyWithCGLag`).
    pub fn group_lag(&self, g: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if g.entries_read != ENTRIES_READ_INVALID
            && !self.range_has_tombstones(g.last_id, StreamId::MAX)
        {
            return Some(self.entries_added as i64 - g.entries_read);
        }
        let read = self.estimate_distance(g.last_id);
        (read != ENTRIES_READ_INVALID).then(|| self.entries_added as i64 - read)
    }

    /// How many nodes Redis's radix tree of this stream's nodes has (XINFO's `radix-tree-nodes`):
    /// the root, each key, and each position right after a branch or after a key, in the trie of
    /// the 16-byte master IDs with single-child chains compressed.
    pub fn radix_tree_nodes(&self) -> usize {
        let keys: Vec<[u8; 16]> = self.nodes.keys().map(StreamId::encode).collect();
        // Children of each trie position (a prefix), counted from the sorted keys: a key adds one
        // child to the prefix it leaves the previous key's path at, and one to each deeper prefix.
        let mut children: std::collections::HashMap<&[u8], usize> = Default::default();
        for (i, k) in keys.iter().enumerate() {
            let shared = match i {
                0 => 0,
                _ => k
                    .iter()
                    .zip(&keys[i - 1])
                    .take_while(|(a, b)| a == b)
                    .count(),
            };
            for depth in shared..16 {
                *children.entry(&k[..depth]).or_default() += 1;
            }
        }
        // A position is a node of its own unless it is inside a compressed run: not a key, one
        // child, and its parent has one child too (keys are all 16 bytes: none is a prefix).
        let mut nodes = 1;
        for (prefix, &n) in &children {
            if prefix.is_empty() {
                continue;
            }
            let parent = children[&prefix[..prefix.len() - 1]];
            if !(n == 1 && parent == 1) {
                nodes += 1;
            }
        }
        // The keys themselves (leaves).
        nodes + keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: NodeLimits = NodeLimits {
        max_bytes: 4096,
        max_entries: 3,
    };

    fn ids(s: &Stream, rev: bool) -> Vec<StreamId> {
        s.range(StreamId::MIN, StreamId::MAX, rev)
            .map(|e| e.id)
            .collect()
    }

    fn add(s: &mut Stream, ms: u64, fv: &[&[u8]]) -> StreamId {
        s.append(fv, Some((StreamId::new(ms, 0), true)), 0, LIM)
            .unwrap()
    }

    #[test]
    fn append_range_and_fields() {
        let mut s = Stream::default();
        for ms in 1..=7 {
            let f: &[&[u8]] = if ms == 4 {
                &[b"other", b"x", b"b", b"y"]
            } else {
                &[b"a", b"1", b"b", b"22"]
            };
            add(&mut s, ms, f);
        }
        assert_eq!(s.node_count(), 3);
        assert_eq!(s.len(), 7);
        let fwd = ids(&s, false);
        let mut back = ids(&s, true);
        back.reverse();
        assert_eq!(fwd, back);
        assert_eq!(fwd.len(), 7);
        let e4: Vec<(Vec<u8>, Vec<u8>)> = s
            .range(StreamId::new(4, 0), StreamId::new(4, 0), false)
            .next()
            .unwrap()
            .pairs()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect();
        assert_eq!(
            e4,
            vec![
                (b"other".to_vec(), b"x".to_vec()),
                (b"b".to_vec(), b"y".to_vec())
            ]
        );
        let mid: Vec<u64> = s
            .range(StreamId::new(2, 1), StreamId::new(5, 0), true)
            .map(|e| e.id.ms)
            .collect();
        assert_eq!(mid, vec![5, 4, 3]);
        assert_eq!(
            s.append(&[b"a", b"b"], Some((StreamId::new(7, 0), true)), 0, LIM),
            Err(AddError::NotGreater)
        );
        let auto = s.append(&[b"a", b"b"], Some((StreamId::new(7, 0), false)), 0, LIM);
        assert_eq!(auto, Ok(StreamId::new(7, 1)));
        assert_eq!(
            s.append(&[b"a", b"b"], None, 3, LIM),
            Ok(StreamId::new(7, 2))
        );
    }

    #[test]
    fn delete_and_trim() {
        let mut s = Stream::default();
        for ms in 1..=10 {
            add(&mut s, ms, &[b"f", b"v"]);
        }
        assert_eq!(s.delete_ids(&[StreamId::new(1, 0), StreamId::new(5, 0)]), 2);
        assert!(!s.delete(StreamId::new(5, 0)));
        assert_eq!(s.first_id, StreamId::new(2, 0));
        assert_eq!(s.max_deleted_entry_id, StreamId::new(5, 0));
        // Deleting both live entries of the first node (1, 2, 3) frees it.
        s.delete_ids(&[StreamId::new(2, 0), StreamId::new(3, 0)]);
        assert_eq!(s.node_count(), 3);
        assert_eq!(s.len(), 6);
        let approx = Trim {
            by: TrimBy::MaxLen(2),
            approx: true,
            limit: 0,
        };
        assert_eq!(s.trim(approx), 2);
        assert_eq!(ids(&s, false).first(), Some(&StreamId::new(7, 0)));
        let exact = Trim {
            by: TrimBy::MinId(StreamId::new(9, 0)),
            approx: false,
            limit: 0,
        };
        assert_eq!(s.trim(exact), 2);
        assert_eq!(
            ids(&s, false),
            vec![StreamId::new(9, 0), StreamId::new(10, 0)]
        );
        assert_eq!(s.first_id, StreamId::new(9, 0));
        assert_eq!(s.edge_id(true, false), StreamId::new(7, 0));
    }

    /// Random appends, deletions, exact trims and ranges against a map of the live entries.
    #[test]
    fn matches_a_model() {
        use crate::util::rand_u64;
        for round in 0..20 {
            let lim = NodeLimits {
                max_bytes: [0, 60, 4096][round % 3],
                max_entries: (round % 5) as i64,
            };
            let mut s = Stream::default();
            let mut model: BTreeMap<StreamId, Vec<Vec<u8>>> = BTreeMap::new();
            let mut next = 1u64;
            for _ in 0..400 {
                match rand_u64() % 10 {
                    0..=4 => {
                        next += 1 + rand_u64() % 3;
                        let fields = if rand_u64().is_multiple_of(3) {
                            vec!["a", "b"]
                        } else {
                            vec!["x"]
                        };
                        let fv: Vec<Vec<u8>> = fields
                            .iter()
                            .flat_map(|f| {
                                [
                                    f.as_bytes().to_vec(),
                                    (rand_u64() % 300).to_string().into_bytes(),
                                ]
                            })
                            .collect();
                        let id = StreamId::new(next / 3, next % 3);
                        assert_eq!(s.append(&fv, Some((id, true)), 0, lim), Ok(id));
                        model.insert(id, fv);
                    }
                    5 | 6 => {
                        let ids: Vec<StreamId> = (0..2)
                            .map(|_| StreamId::new(rand_u64() % (next / 3 + 1), rand_u64() % 3))
                            .collect();
                        let mut unique = ids.clone();
                        unique.dedup();
                        let want = unique
                            .iter()
                            .filter(|id| model.remove(id).is_some())
                            .count();
                        assert_eq!(s.delete_ids(&ids) as usize, want);
                    }
                    7 => {
                        let keep = rand_u64() % 40;
                        let t = Trim {
                            by: TrimBy::MaxLen(keep),
                            approx: false,
                            limit: 0,
                        };
                        let gone = model.len().saturating_sub(keep as usize);
                        assert_eq!(s.trim(t) as usize, gone);
                        while model.len() > keep as usize {
                            model.pop_first();
                        }
                    }
                    _ => {
                        let a = StreamId::new(rand_u64() % (next / 3 + 1), rand_u64() % 3);
                        let b = StreamId::new(rand_u64() % (next / 3 + 1), rand_u64() % 3);
                        let rev = rand_u64().is_multiple_of(2);
                        let got: Vec<(StreamId, Vec<Vec<u8>>)> = s
                            .range(a, b, rev)
                            .map(|e| {
                                (
                                    e.id,
                                    e.pairs()
                                        .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
                                        .collect(),
                                )
                            })
                            .collect();
                        let mut want: Vec<(StreamId, Vec<Vec<u8>>)> = if a <= b {
                            model.range(a..=b).map(|(k, v)| (*k, v.clone())).collect()
                        } else {
                            Vec::new()
                        };
                        if rev {
                            want.reverse();
                        }
                        assert_eq!(got, want);
                    }
                }
                assert_eq!(s.len() as usize, model.len());
                let first = model.keys().next().copied().unwrap_or(StreamId::MIN);
                assert_eq!(s.first_id, first);
            }
        }
    }

    /// Random deliveries, claims, acks and consumer deletions against a map of who holds what:
    /// the group's PEL and its consumers' PELs always agree with it and with each other.
    #[test]
    fn group_pels_match_a_model() {
        use crate::util::rand_u64;
        let mut g = Group::new(StreamId::MIN, 0);
        let mut model: BTreeMap<StreamId, (Vec<u8>, u64)> = BTreeMap::new();
        let names: [&[u8]; 3] = [b"a", b"b", b""];
        for step in 0..5000 {
            let id = StreamId::new(rand_u64() % 40, 0);
            let who = names[(rand_u64() % 3) as usize];
            match rand_u64() % 4 {
                0 | 1 => {
                    g.create_consumer(who, step);
                    let count = g
                        .assign(id, who, step, |n| n.delivery_count += 1)
                        .delivery_count;
                    let e = model.entry(id).or_insert((Vec::new(), 1));
                    // A new record starts at 1 and the update counts this delivery too.
                    e.0 = who.to_vec();
                    e.1 += 1;
                    assert_eq!(count, e.1);
                }
                2 => assert_eq!(g.ack(id), model.remove(&id).is_some()),
                _ => {
                    let held = model.values().filter(|(c, _)| c == who).count();
                    let had = g.delete_consumer(who);
                    assert_eq!(had.unwrap_or(0), held);
                    model.retain(|_, (c, _)| c != who);
                }
            }
            assert_eq!(g.pel.len(), model.len());
            for (id, (c, n)) in &model {
                let nack = &g.pel[id];
                assert_eq!((&nack.consumer[..], nack.delivery_count), (&c[..], *n));
                assert!(g.consumers[&c[..]].pel.contains(id));
            }
            let held: usize = g.consumers.values().map(|c| c.pel.len()).sum();
            assert_eq!(held, model.len());
        }
    }
}
