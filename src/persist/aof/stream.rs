//! The AOF rewrite of a stream, as Redis's `rewriteStreamObject`.

use std::io::Write;

use crate::resp::command as encode;
use crate::store::stream::{Stream, StreamId};

/// A stream as Redis's `rewriteStreamObject` rebuilds it: its entries (or, empty, an entry added
/// and trimmed away), XSETID with its counters, then each group with its consumers and PEL.
pub(super) fn write_stream(w: &mut impl Write, key: &[u8], s: &Stream) -> std::io::Result<()> {
    let id_text = |id: StreamId| id.to_string().into_bytes();
    if s.is_empty() {
        let one = id_text(StreamId::new(0, 1));
        w.write_all(&encode(&[b"XADD", key, b"MAXLEN", b"0", &one, b"x", b"y"]))?;
    }
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        let id = id_text(e.id);
        let mut c: Vec<Vec<u8>> = Vec::with_capacity(3 + e.numfields * 2);
        c.extend([b"XADD".to_vec(), key.to_vec(), id]);
        for (f, v) in e.pairs() {
            c.push(f.to_vec());
            c.push(v.to_vec());
        }
        let parts: Vec<&[u8]> = c.iter().map(|p| &p[..]).collect();
        w.write_all(&encode(&parts))?;
    }
    w.write_all(&encode(&[
        b"XSETID",
        key,
        &id_text(s.last_id),
        b"ENTRIESADDED",
        s.entries_added.to_string().as_bytes(),
        b"MAXDELETEDID",
        &id_text(s.max_deleted_entry_id),
    ]))?;
    for (name, g) in &s.groups {
        w.write_all(&encode(&[
            b"XGROUP",
            b"CREATE",
            key,
            name,
            &id_text(g.last_id),
            b"ENTRIESREAD",
            g.entries_read.to_string().as_bytes(),
        ]))?;
        for (cname, c) in &g.consumers {
            if c.pel.is_empty() {
                w.write_all(&encode(&[b"XGROUP", b"CREATECONSUMER", key, name, cname]))?;
            }
            for id in &c.pel {
                let nack = &g.pel[id];
                w.write_all(&encode(&[
                    b"XCLAIM",
                    key,
                    name,
                    cname,
                    b"0",
                    &id_text(*id),
                    b"TIME",
                    nack.delivery_time.to_string().as_bytes(),
                    b"RETRYCOUNT",
                    nack.delivery_count.to_string().as_bytes(),
                    b"JUSTID",
                    b"FORCE",
                ]))?;
            }
        }
    }
    Ok(())
}
