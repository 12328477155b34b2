//! Streams in RDB: written as `RDB_TYPE_STREAM_LISTPACKS_2` (Redis 7.0: nodes as they are, the
//! stream's IDs and counters, then each group with its PEL and consumers), read from it and from
//! Redis 5/6's `RDB_TYPE_STREAM_LISTPACKS` (no first ID, tombstone or counters: they are derived
//! as Redis's loader derives them). Each loaded node is checked as a stream node before the
//! store walks it.

use super::listpack::{listpack_elems, Elem};
use super::{bad, put_len, put_str, Reader, R};
use crate::store::stream::{Consumer, Group, Nack, Stream, StreamId, FLAG_SAMEFIELDS};

pub const TYPE_STREAM_LISTPACKS: u8 = 15;
pub const TYPE_STREAM_LISTPACKS_2: u8 = 19;

fn put_id(b: &mut Vec<u8>, id: StreamId) {
    put_len(b, id.ms);
    put_len(b, id.seq);
}

/// The body of a stream (`rdbSaveObject`'s stream part).
pub fn put_stream(b: &mut Vec<u8>, s: &Stream, compress: bool) {
    put_len(b, s.node_count() as u64);
    for (master, node) in s.nodes() {
        put_str(b, &master.encode(), compress);
        put_str(b, node, compress);
    }
    put_len(b, s.length);
    put_id(b, s.last_id);
    put_id(b, s.first_id);
    put_id(b, s.max_deleted_entry_id);
    put_len(b, s.entries_added);
    put_len(b, s.groups.len() as u64);
    for (name, g) in &s.groups {
        put_str(b, name, compress);
        put_id(b, g.last_id);
        put_len(b, g.entries_read as u64);
        put_len(b, g.pel.len() as u64);
        for (id, nack) in &g.pel {
            b.extend_from_slice(&id.encode());
            b.extend_from_slice(&nack.delivery_time.to_le_bytes());
            put_len(b, nack.delivery_count);
        }
        put_len(b, g.consumers.len() as u64);
        for (cname, c) in &g.consumers {
            put_str(b, cname, compress);
            b.extend_from_slice(&c.seen_time.to_le_bytes());
            put_len(b, c.pel.len() as u64);
            for id in &c.pel {
                b.extend_from_slice(&id.encode());
            }
        }
    }
}

fn raw_id(r: &mut Reader) -> R<StreamId> {
    Ok(StreamId::decode(r.take(16)?.try_into().expect("16 bytes")))
}

fn read_id(r: &mut Reader) -> R<StreamId> {
    Ok(StreamId::new(r.len()?, r.len()?))
}

fn ms_time(r: &mut Reader) -> R<i64> {
    Ok(i64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes")))
}

/// Whether `node` is a well-formed stream node (`streamValidateListpackIntegrity`, deep).
fn valid_node(node: &[u8], master: StreamId) -> R<()> {
    let e = || bad("stream listpack");
    let elems = listpack_elems(node)?;
    let int = |i: usize| match elems.get(i) {
        Some(Elem::Int(n)) => Ok(*n),
        _ => Err(e()),
    };
    let (count, deleted, mfields) = (int(0)?, int(1)?, int(2)?);
    if mfields < 0 || count < 0 || deleted < 0 {
        return Err(e());
    }
    let mut p = 3 + mfields as usize;
    if int(p)? != 0 {
        return Err(e());
    }
    p += 1;
    let (mut seen, mut last) = (0i64, None);
    while p < elems.len() {
        let start = p;
        let flags = int(p)?;
        let id = StreamId::new(
            master.ms.wrapping_add(int(p + 1)? as u64),
            master.seq.wrapping_add(int(p + 2)? as u64),
        );
        if last.is_some_and(|l| id <= l) || id < master {
            return Err(e());
        }
        last = Some(id);
        p += 3;
        let values = if flags & FLAG_SAMEFIELDS != 0 {
            mfields as usize
        } else {
            let n = int(p)?;
            if n < 0 {
                return Err(e());
            }
            p += 1;
            n as usize * 2
        };
        p += values;
        if p >= elems.len() || int(p)? != (p - start) as i64 {
            return Err(e());
        }
        p += 1;
        seen += 1;
    }
    if seen != count + deleted || seen == 0 {
        return Err(e());
    }
    Ok(())
}

/// A stream of RDB type `t` (either stream type).
pub fn read_stream(r: &mut Reader, t: u8) -> R<Stream> {
    let mut s = Stream::default();
    let nodes = r.count()?;
    for _ in 0..nodes {
        let key = r.string()?;
        let master = StreamId::decode(
            key.as_slice()
                .try_into()
                .map_err(|_| bad("stream node key"))?,
        );
        let node = r.string()?;
        valid_node(&node, master)?;
        if !s.insert_node(master, node) {
            return Err(bad("stream node key (repeated)"));
        }
    }
    s.length = r.len()?;
    s.last_id = read_id(r)?;
    if t == TYPE_STREAM_LISTPACKS_2 {
        s.first_id = read_id(r)?;
        s.max_deleted_entry_id = read_id(r)?;
        s.entries_added = r.len()?;
    } else {
        s.entries_added = s.length;
        s.first_id = s.edge_id(true, true);
    }
    if s.length != 0 && s.node_count() == 0 {
        return Err(bad("stream length"));
    }
    let groups = r.count()?;
    for _ in 0..groups {
        let name = r.string()?.into_boxed_slice();
        let last_id = read_id(r)?;
        let entries_read = if t == TYPE_STREAM_LISTPACKS_2 {
            r.len()? as i64
        } else {
            s.estimate_distance(last_id)
        };
        let mut g = Group::new(last_id, entries_read);
        let pel = r.count()?;
        for _ in 0..pel {
            let id = raw_id(r)?;
            let delivery_time = ms_time(r)?;
            let delivery_count = r.len()?;
            let nack = Nack {
                delivery_time,
                delivery_count,
                consumer: Box::default(),
            };
            if g.pel.insert(id, nack).is_some() {
                return Err(bad("stream group PEL (repeated ID)"));
            }
        }
        let consumers = r.count()?;
        for _ in 0..consumers {
            let cname = r.string()?.into_boxed_slice();
            let mut c = Consumer {
                seen_time: ms_time(r)?,
                ..Consumer::default()
            };
            let n = r.count()?;
            for _ in 0..n {
                let id = raw_id(r)?;
                let nack = g
                    .pel
                    .get_mut(&id)
                    .ok_or_else(|| bad("stream consumer PEL (not in the group's)"))?;
                nack.consumer = cname.clone();
                if !c.pel.insert(id) {
                    return Err(bad("stream consumer PEL (repeated ID)"));
                }
            }
            if g.consumers.insert(cname, c).is_some() {
                return Err(bad("stream consumer (repeated)"));
            }
        }
        if s.groups.insert(name, g).is_some() {
            return Err(bad("stream group (repeated)"));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::stream::NodeLimits;

    #[test]
    fn round_trip_with_groups() {
        let mut s = Stream::default();
        let lim = NodeLimits {
            max_bytes: 4096,
            max_entries: 2,
        };
        for ms in 1..=5u64 {
            let v = ms.to_string();
            s.append(
                &[b"f".as_slice(), v.as_bytes()],
                Some((StreamId::new(ms, 0), true)),
                0,
                lim,
            )
            .unwrap();
        }
        s.delete_ids(&[StreamId::new(2, 0)]);
        let mut g = Group::new(StreamId::new(3, 0), 3);
        g.pel.insert(
            StreamId::new(3, 0),
            Nack {
                delivery_time: 1234,
                delivery_count: 2,
                consumer: b"alice".as_slice().into(),
            },
        );
        let mut c = Consumer {
            seen_time: 99,
            ..Consumer::default()
        };
        c.pel.insert(StreamId::new(3, 0));
        g.consumers.insert(b"alice".as_slice().into(), c);
        g.consumers
            .insert(b"bob".as_slice().into(), Consumer::default());
        s.groups.insert(b"g1".as_slice().into(), g);
        let mut b = Vec::new();
        put_stream(&mut b, &s, true);
        let mut r = Reader::new(&b);
        let back = read_stream(&mut r, TYPE_STREAM_LISTPACKS_2).unwrap();
        assert_eq!(r.pos, b.len());
        let mut again = Vec::new();
        put_stream(&mut again, &back, true);
        assert_eq!(again, b);
        assert_eq!(back.groups, s.groups);
        assert_eq!(back.first_id, StreamId::new(1, 0));
        assert_eq!(back.max_deleted_entry_id, StreamId::new(2, 0));
    }
}
