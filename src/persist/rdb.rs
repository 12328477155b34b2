//! Redis's RDB format, version 10 as Redis 7.0 writes it, and every older encoding Redis 7.0 loads.
//!
//! Writing: `write_header`, `write_db`, `write_footer` build a whole file (`persist::save_to`
//! drives them); `put_object` writes one value (type byte + body) as `rdbSaveObjectType` +
//! `rdbSaveObject` do, which DUMP reuses (`dump_payload`). Values are written in the encoding
//! OBJECT ENCODING reports: strings raw / int / LZF, lists as quicklist 2 of listpacks (split into
//! nodes as RPUSH would fill them), hashes and sorted sets as listpack or hashtable / ZSET_2, sets
//! as intset or plain set, streams as Redis 7.0's STREAM_LISTPACKS_2 (`rdb/stream.rs`).
//!
//! Loading: `load` reads a whole file into fresh databases; `read_object` one value (RESTORE uses
//! it through `restore_payload`). Accepted value types: string, list (linked, ziplist, quicklist
//! 1 and 2), set (plain, intset), zset (text doubles, ZSET_2, ziplist, listpack), hash (plain,
//! zipmap, ziplist, listpack), stream (STREAM_LISTPACKS 1 and 2). Modules are refused with a clear
//! error.
//! Loaded values get the encoding Redis's loader would give them under the current limits.
//!
//! The compact blobs inside values (listpack, intset, and the older ziplist and zipmap) are
//! `rdb/listpack.rs`'s to write and read.

mod listpack;
mod stream;

pub use listpack::Listpack;
use listpack::{intset, intset_members, listpack_elems, ziplist_elems, zipmap_pairs, Elem};

use super::lzf;
use crate::store::{hash::HashLimits, zset, Db, Hash, List, Set, Str, Value, ZSet, NO_EXPIRE};
use crate::util::{fmt_i64, fmt_listpack_score, parse_i64};

pub const RDB_VERSION: u16 = 10;

pub const TYPE_STRING: u8 = 0;
pub const TYPE_LIST: u8 = 1;
pub const TYPE_SET: u8 = 2;
pub const TYPE_ZSET: u8 = 3;
pub const TYPE_HASH: u8 = 4;
pub const TYPE_ZSET_2: u8 = 5;
pub const TYPE_HASH_ZIPMAP: u8 = 9;
pub const TYPE_LIST_ZIPLIST: u8 = 10;
pub const TYPE_SET_INTSET: u8 = 11;
pub const TYPE_ZSET_ZIPLIST: u8 = 12;
pub const TYPE_HASH_ZIPLIST: u8 = 13;
pub const TYPE_LIST_QUICKLIST: u8 = 14;
pub const TYPE_HASH_LISTPACK: u8 = 16;
pub const TYPE_ZSET_LISTPACK: u8 = 17;
pub const TYPE_LIST_QUICKLIST_2: u8 = 18;

const OP_FUNCTION2: u8 = 245;
const OP_FUNCTION: u8 = 246;
const OP_MODULE_AUX: u8 = 247;
const OP_IDLE: u8 = 248;
const OP_FREQ: u8 = 249;
const OP_AUX: u8 = 250;
const OP_RESIZEDB: u8 = 251;
const OP_EXPIRETIME_MS: u8 = 252;
const OP_EXPIRETIME: u8 = 253;
const OP_SELECTDB: u8 = 254;
const OP_EOF: u8 = 255;

/// What the writer needs from the configuration.
#[derive(Clone, Copy)]
pub struct SaveOpts {
    /// `rdbcompression`: LZF for strings over 20 bytes when it saves at least 4.
    pub compress: bool,
    /// `list-max-listpack-size`: how a list is split into quicklist nodes.
    pub list_fill: i64,
    /// What of each key's access stamp is saved, as Redis does under an LRU or LFU
    /// `maxmemory-policy`: its idle time (IDLE) or its LFU counter (FREQ).
    pub stamps: Stamps,
    /// The replication fields of a snapshot for replicas (Redis's `rdbSaveInfo`).
    pub repl: Option<ReplAux>,
}

/// Where a snapshot sits in the replication stream: the stream's history, its offset, and the
/// database it had selected (a replica starts applying what follows there).
#[derive(Clone, Copy)]
pub struct ReplAux {
    pub stream_db: usize,
    pub replid: [u8; 40],
    pub offset: i64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stamps {
    None,
    Idle,
    Freq,
}

/// The encoding limits a loaded value is converted under (Redis's loader applies the same).
#[derive(Clone, Copy)]
pub struct Limits {
    pub hash: HashLimits,
    pub set_intset: i64,
    pub zset: zset::Limits,
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Redis's `rdbSaveLen`.
pub fn put_len(b: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        b.push(n as u8);
    } else if n < 1 << 14 {
        b.push(0x40 | (n >> 8) as u8);
        b.push(n as u8);
    } else if n <= u32::MAX as u64 {
        b.push(0x80);
        b.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        b.push(0x81);
        b.extend_from_slice(&n.to_be_bytes());
    }
}

/// Redis's `rdbEncodeInteger`: the special int8/16/32 string encodings, if `v` fits.
fn put_encoded_int(b: &mut Vec<u8>, v: i64) -> bool {
    if (i8::MIN as i64..=i8::MAX as i64).contains(&v) {
        b.extend_from_slice(&[0xC0, v as i8 as u8]);
    } else if (i16::MIN as i64..=i16::MAX as i64).contains(&v) {
        b.push(0xC1);
        b.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        b.push(0xC2);
        b.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        return false;
    }
    true
}

/// Redis's `rdbSaveRawString`: int encoding for short canonical integers, LZF when enabled and
/// worth it, else length + bytes.
pub fn put_str(b: &mut Vec<u8>, s: &[u8], compress: bool) {
    if s.len() <= 11 {
        if let Some(v) = parse_i64(s) {
            if put_encoded_int(b, v) {
                return;
            }
        }
    }
    if compress && s.len() > 20 {
        if let Some(c) = lzf::compress(s, s.len() - 4) {
            b.push(0xC3);
            put_len(b, c.len() as u64);
            put_len(b, s.len() as u64);
            b.extend_from_slice(&c);
            return;
        }
    }
    put_len(b, s.len() as u64);
    b.extend_from_slice(s);
}

/// Redis's `rdbSaveLongLongAsStringObject`.
fn put_int_str(b: &mut Vec<u8>, v: i64) {
    if !put_encoded_int(b, v) {
        let mut tmp = [0u8; 20];
        let s = fmt_i64(v, &mut tmp);
        put_len(b, s.len() as u64);
        b.extend_from_slice(s);
    }
}

/// Redis 7.0's `_quicklistNodeAllowInsert`: may an element of `sz` bytes join a node of
/// `node_sz` bytes and `count` elements under `list-max-listpack-size` `fill`? (The size is
/// estimated with Redis's `SIZE_ESTIMATE_OVERHEAD` of 8 bytes per entry.)
fn node_allows(node_sz: usize, count: usize, fill: i64, sz: usize) -> bool {
    const LEVELS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
    let new_sz = node_sz + sz + 8;
    if fill < 0 {
        let off = (-fill - 1) as usize;
        if off < LEVELS.len() && new_sz <= LEVELS[off] {
            return true;
        }
    }
    if new_sz > 8192 {
        return false;
    }
    (count as i64) < fill
}

/// Walks a list's elements laid out in Redis 7.0's quicklist nodes under `list-max-listpack-size`
/// `fill`, handing each node to `each` as (container, bytes): QUICKLIST_NODE_CONTAINER_PACKED (2)
/// holds a listpack, PLAIN (1) one element past the packed threshold (Redis's `isLargeElement`),
/// which no other joins. Stops early when `each` returns false.
pub fn for_each_list_node<'a>(
    l: &'a List,
    fill: i64,
    mut each: impl FnMut(u64, std::borrow::Cow<'a, [u8]>) -> bool,
) {
    let mut cur: Option<Listpack> = None;
    let plain_from = crate::store::list::packed_threshold();
    for item in &l.items {
        if item.len() >= plain_from {
            if let Some(lp) = cur.take() {
                if !each(2, lp.finish().into()) {
                    return;
                }
            }
            if !each(1, item[..].into()) {
                return;
            }
            continue;
        }
        if let Some(lp) = &cur {
            if !node_allows(lp.bytes(), lp.len(), fill, item.len())
                && !each(2, cur.take().expect("some").finish().into())
            {
                return;
            }
        }
        cur.get_or_insert_with(Listpack::default).push(item);
    }
    if let Some(lp) = cur {
        each(2, lp.finish().into());
    }
}

fn put_list(b: &mut Vec<u8>, l: &List, opts: SaveOpts) {
    let mut nodes: Vec<(u64, std::borrow::Cow<[u8]>)> = Vec::new();
    for_each_list_node(l, opts.list_fill, |container, n| {
        nodes.push((container, n));
        true
    });
    put_len(b, nodes.len() as u64);
    for (container, n) in nodes {
        put_len(b, container);
        put_str(b, &n, opts.compress);
    }
}

/// The RDB type byte for a value in its current encoding.
pub fn object_type(v: &Value) -> u8 {
    match v {
        Value::Str(_) => TYPE_STRING,
        Value::List(_) => TYPE_LIST_QUICKLIST_2,
        Value::Hash(h) => match h {
            Hash::Listpack(_) => TYPE_HASH_LISTPACK,
            Hash::Table(_) => TYPE_HASH,
        },
        Value::Set(s) => match **s {
            Set::Intset(_) => TYPE_SET_INTSET,
            Set::Table(_) => TYPE_SET,
        },
        Value::ZSet(z) if z.is_listpack() => TYPE_ZSET_LISTPACK,
        Value::ZSet(_) => TYPE_ZSET_2,
        Value::Stream(_) => stream::TYPE_STREAM_LISTPACKS_2,
    }
}

/// Writes a value's type byte and body (`rdbSaveObjectType` + `rdbSaveObject`).
pub fn put_object(b: &mut Vec<u8>, v: &Value, opts: SaveOpts) {
    b.push(object_type(v));
    put_body(b, v, opts);
}

/// The listpack Redis holds for a listpack-encoded hash or sorted set (what DUMP writes, what
/// DEBUG LISTPACK shows); `None` for any other value.
pub fn as_listpack(v: &Value) -> Option<Vec<u8>> {
    let mut lp = Listpack::default();
    match v {
        Value::Hash(h) => match h {
            Hash::Listpack(pairs) => {
                for (k, v) in pairs.iter() {
                    lp.push(k);
                    lp.push(v);
                }
            }
            Hash::Table(_) => return None,
        },
        Value::ZSet(z) if z.is_listpack() => {
            let mut at = z.first();
            while let Some(id) = at {
                let (m, s) = z.get(id);
                lp.push(m);
                lp.push(fmt_listpack_score(s).as_bytes());
                at = z.next(id);
            }
        }
        _ => return None,
    }
    Some(lp.finish())
}

/// A value's body (`rdbSaveObject`), without the type byte.
fn put_body(b: &mut Vec<u8>, v: &Value, opts: SaveOpts) {
    match v {
        Value::Str(Str::Int(n)) => put_int_str(b, *n),
        Value::Str(s) => s.with_bytes(|data| put_str(b, data, opts.compress)),
        Value::List(l) => put_list(b, l, opts),
        Value::Hash(h) => match h {
            Hash::Listpack(_) => {
                put_str(b, &as_listpack(v).expect("a listpack hash"), opts.compress);
            }
            Hash::Table(d) => {
                put_len(b, d.len() as u64);
                for (_, k, v) in d.iter() {
                    put_str(b, k, opts.compress);
                    put_str(b, v, opts.compress);
                }
            }
        },
        Value::Set(s) => match &**s {
            Set::Intset(v) => put_str(b, &intset(v), opts.compress),
            Set::Table(d) => {
                put_len(b, d.len() as u64);
                for (_, k, _) in d.iter() {
                    put_str(b, k, opts.compress);
                }
            }
        },
        Value::ZSet(z) if z.is_listpack() => {
            put_str(b, &as_listpack(v).expect("a listpack zset"), opts.compress);
        }
        Value::ZSet(z) => {
            // From the greatest to the smallest, as Redis (its loader then inserts at the head).
            put_len(b, z.len() as u64);
            let mut at = z.last();
            while let Some(id) = at {
                let (m, s) = z.get(id);
                put_str(b, m, opts.compress);
                b.extend_from_slice(&s.to_le_bytes());
                at = z.prev(id);
            }
        }
        Value::Stream(s) => stream::put_stream(b, s, opts.compress),
    }
}

/// `REDIS0010` and the aux fields Redis 7.0 writes.
pub fn write_header(b: &mut Vec<u8>, used_mem: u64, opts: SaveOpts) {
    b.extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
    let aux = |b: &mut Vec<u8>, k: &str, v: &[u8]| {
        b.push(OP_AUX);
        put_str(b, k.as_bytes(), opts.compress);
        put_str(b, v, opts.compress);
    };
    aux(b, "redis-ver", crate::config::REDIS_VERSION.as_bytes());
    aux(b, "redis-bits", b"64");
    let now = crate::util::clock::wall_us() / 1_000_000;
    aux(b, "ctime", now.to_string().as_bytes());
    aux(b, "used-mem", used_mem.to_string().as_bytes());
    if let Some(r) = opts.repl {
        aux(b, "repl-stream-db", r.stream_db.to_string().as_bytes());
        aux(b, "repl-id", &r.replid);
        aux(b, "repl-offset", r.offset.to_string().as_bytes());
    }
    aux(b, "aof-base", b"0");
}

/// SELECTDB + RESIZEDB for a non-empty database; its keys follow through `put_key`.
pub fn write_db_start(b: &mut Vec<u8>, index: usize, db: &Db) {
    b.push(OP_SELECTDB);
    put_len(b, index as u64);
    b.push(OP_RESIZEDB);
    put_len(b, db.len() as u64);
    put_len(b, db.expires_len() as u64);
}

/// One key: its expiry (if any), its access stamp (see `Stamps`), then type, key and value.
pub fn put_key(
    b: &mut Vec<u8>,
    key: &[u8],
    e: &crate::store::Entry,
    expire_at: i64,
    opts: SaveOpts,
) {
    let val = &e.val;
    if expire_at != NO_EXPIRE {
        b.push(OP_EXPIRETIME_MS);
        b.extend_from_slice(&expire_at.to_le_bytes());
    }
    match opts.stamps {
        Stamps::None => {}
        Stamps::Idle => {
            b.push(OP_IDLE);
            put_len(b, crate::store::idle_seconds(e.lru));
        }
        Stamps::Freq => {
            b.push(OP_FREQ);
            b.push(crate::store::lfu_counter(e.lru) as u8);
        }
    }
    b.push(object_type(val));
    put_str(b, key, opts.compress);
    put_body(b, val, opts);
}

/// The DUMP payload: the value's serialization, the RDB version (2 bytes LE), the CRC64 (8 LE).
pub fn dump_payload(v: &Value, opts: SaveOpts) -> Vec<u8> {
    let mut b = Vec::new();
    put_object(&mut b, v, opts);
    put_footer(&mut b);
    b
}

/// A payload's body, once its footer (RDB version, CRC64) checks out, as Redis's
/// `verifyDumpPayload`.
fn payload_body(p: &[u8]) -> Result<&[u8], &'static str> {
    const WRONG: &str = "ERR DUMP payload version or checksum are wrong";
    if p.len() < 10 {
        return Err(WRONG);
    }
    let (body, footer) = p.split_at(p.len() - 10);
    let ver = u16::from_le_bytes([footer[0], footer[1]]);
    if ver > RDB_VERSION {
        return Err(WRONG);
    }
    let crc = u64::from_le_bytes(footer[2..10].try_into().expect("8 bytes"));
    if lzf::crc64(0, &p[..p.len() - 8]) != crc {
        return Err(WRONG);
    }
    Ok(body)
}

/// Appends the RDB version and the CRC64 of everything before, as DUMP's footer.
fn put_footer(b: &mut Vec<u8>) {
    b.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = lzf::crc64(0, b);
    b.extend_from_slice(&crc.to_le_bytes());
}

/// One function library as the RDB and FUNCTION DUMP save it: `OP_FUNCTION2`, then its code.
pub fn put_function(b: &mut Vec<u8>, code: &[u8], opts: SaveOpts) {
    b.push(OP_FUNCTION2);
    put_str(b, code, opts.compress);
}

/// FUNCTION DUMP's payload: every library's `put_function`, then DUMP's footer.
pub fn functions_payload<'a>(codes: impl Iterator<Item = &'a [u8]>, opts: SaveOpts) -> Vec<u8> {
    let mut b = Vec::new();
    for code in codes {
        put_function(&mut b, code, opts);
    }
    put_footer(&mut b);
    b
}

/// FUNCTION RESTORE's check and decode of a payload: the libraries' code, in order. Errors have
/// no `ERR ` prefix but the footer's.
pub fn restore_functions(p: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let body = payload_body(p).map_err(|e| e.trim_start_matches("ERR ").to_string())?;
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while r.pos < body.len() {
        match r.u8() {
            Ok(OP_FUNCTION2) => {}
            Ok(OP_FUNCTION) => return Err("Pre-GA function format not supported".into()),
            Ok(_) => return Err("given type is not a function".into()),
            Err(_) => return Err("can not read data type".into()),
        }
        codes.push(
            r.string()
                .map_err(|_| "failed loading the given functions payload".to_string())?,
        );
    }
    Ok(codes)
}

/// RESTORE's check and decode of a DUMP payload.
pub fn restore_payload(p: &[u8], lim: Limits) -> Result<Value, &'static str> {
    let body = payload_body(p)?;
    const BAD: &str = "ERR Bad data format";
    let mut r = Reader::new(body);
    let t = r.u8().map_err(|_| BAD)?;
    let v = read_object(&mut r, t, lim).map_err(|_| BAD)?;
    if r.pos != body.len() {
        return Err(BAD);
    }
    v.ok_or(BAD)
}

// ---------------------------------------------------------------------------------------------
// Loading

pub struct Reader<'a> {
    data: &'a [u8],
    pub pos: usize,
}

type R<T> = Result<T, String>;

enum Len {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    fn short(&self) -> String {
        format!("unexpected end of file at offset {}", self.pos)
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        if n > self.data.len() - self.pos {
            return Err(self.short());
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    fn len_or_enc(&mut self) -> R<Len> {
        let b = self.u8()?;
        Ok(match b >> 6 {
            0 => Len::Plain((b & 0x3F) as u64),
            1 => Len::Plain((((b & 0x3F) as u64) << 8) | self.u8()? as u64),
            3 => Len::Encoded(b & 0x3F),
            _ if b == 0x80 => {
                Len::Plain(u32::from_be_bytes(self.take(4)?.try_into().unwrap()) as u64)
            }
            _ if b == 0x81 => Len::Plain(u64::from_be_bytes(self.take(8)?.try_into().unwrap())),
            _ => {
                return Err(format!(
                    "unknown length encoding {b} at offset {}",
                    self.pos - 1
                ))
            }
        })
    }

    fn len(&mut self) -> R<u64> {
        match self.len_or_enc()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => Err(format!(
                "unexpected encoded length at offset {}",
                self.pos - 1
            )),
        }
    }

    /// A count of things each at least one byte long: bounded by what is left of the input.
    fn count(&mut self) -> R<usize> {
        let n = self.len()?;
        if n > (self.data.len() - self.pos) as u64 {
            return Err(format!(
                "length {n} past the end of the file at offset {}",
                self.pos
            ));
        }
        Ok(n as usize)
    }

    pub fn string(&mut self) -> R<Vec<u8>> {
        match self.len_or_enc()? {
            Len::Plain(n) => {
                if n > (self.data.len() - self.pos) as u64 {
                    return Err(self.short());
                }
                Ok(self.take(n as usize)?.to_vec())
            }
            Len::Encoded(0) => Ok((self.u8()? as i8).to_string().into_bytes()),
            Len::Encoded(1) => Ok(i16::from_le_bytes(self.take(2)?.try_into().unwrap())
                .to_string()
                .into_bytes()),
            Len::Encoded(2) => Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap())
                .to_string()
                .into_bytes()),
            Len::Encoded(3) => {
                let at = self.pos;
                let clen = self.len()?;
                let ulen = self.len()?;
                if clen > (self.data.len() - self.pos) as u64 || ulen > 1 << 32 {
                    return Err(self.short());
                }
                let c = self.take(clen as usize)?;
                lzf::decompress(c, ulen as usize)
                    .ok_or_else(|| format!("invalid LZF compressed string at offset {at}"))
            }
            Len::Encoded(e) => Err(format!(
                "unknown string encoding {e} at offset {}",
                self.pos - 1
            )),
        }
    }

    /// The text double of the old ZSET type (length byte; 253 nan, 254 +inf, 255 -inf).
    fn text_double(&mut self) -> R<f64> {
        let n = self.u8()?;
        match n {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            _ => {
                let at = self.pos;
                let s = self.take(n as usize)?;
                std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.parse::<f64>().ok())
                    .ok_or_else(|| format!("invalid double at offset {at}"))
            }
        }
    }

    fn binary_double(&mut self) -> R<f64> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
}

fn bad(what: &str) -> String {
    format!("corrupt {what}")
}

fn parse_score(e: &Elem) -> R<f64> {
    match e {
        Elem::Int(n) => Ok(*n as f64),
        Elem::Bytes(b) => crate::util::parse_f64(b).ok_or_else(|| bad("sorted set score")),
    }
}

/// Builds the value the loader would: each type through its own insertion path, so the encoding
/// follows the configured limits exactly as Redis's loader converts.
struct Build {
    lim: Limits,
}

impl Build {
    fn hash(&self, pairs: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>) -> R<Value> {
        let mut h = Hash::default();
        for (k, v) in pairs {
            if !h.set(&k, &v, self.lim.hash) {
                return Err("duplicate hash fields detected".into());
            }
        }
        Ok(Value::Hash(h))
    }

    fn set(&self, members: impl IntoIterator<Item = Vec<u8>>) -> R<Value> {
        let mut s = Set::default();
        for m in members {
            if !s.add(&m, self.lim.set_intset) {
                return Err("duplicate set members detected".into());
            }
        }
        Ok(Value::Set(Box::new(s)))
    }

    fn zset(&self, pairs: Vec<(Vec<u8>, f64)>) -> R<Value> {
        let mut z = ZSet::new(self.lim.zset.entries > 0);
        for (m, s) in pairs {
            if s.is_nan() {
                return Err("zset score is NaN".into());
            }
            if z.score(&m).is_some() {
                return Err("duplicate zset fields detected".into());
            }
            z.insert(&m, s, self.lim.zset);
        }
        Ok(Value::ZSet(Box::new(z)))
    }
}

/// Reads one value of RDB type `t`. `Ok(None)` for an empty aggregate (Redis skips those).
pub fn read_object(r: &mut Reader, t: u8, lim: Limits) -> R<Option<Value>> {
    let build = Build { lim };
    let v = match t {
        TYPE_STRING => Value::Str(Str::from_bytes(&r.string()?)),
        TYPE_LIST => {
            let n = r.count()?;
            let mut l = List::default();
            for _ in 0..n {
                l.items.push_back(r.string()?);
            }
            Value::List(Box::new(l))
        }
        TYPE_LIST_ZIPLIST => {
            let zl = r.string()?;
            let mut l = List::default();
            l.items.extend(ziplist_elems(&zl)?.iter().map(Elem::to_vec));
            Value::List(Box::new(l))
        }
        TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => {
            let n = r.count()?;
            let mut l = List::default();
            for _ in 0..n {
                let container = if t == TYPE_LIST_QUICKLIST_2 {
                    r.len()?
                } else {
                    2
                };
                let blob = r.string()?;
                match container {
                    1 => l.items.push_back(blob),
                    2 => {
                        let elems = if t == TYPE_LIST_QUICKLIST_2 {
                            listpack_elems(&blob)?
                        } else {
                            ziplist_elems(&blob)?
                        };
                        if elems.is_empty() {
                            return Err("empty quicklist node".into());
                        }
                        l.items.extend(elems.iter().map(Elem::to_vec));
                    }
                    c => return Err(format!("unknown quicklist node container {c}")),
                }
            }
            Value::List(Box::new(l))
        }
        TYPE_SET => {
            let n = r.count()?;
            let mut ms = Vec::with_capacity(n);
            for _ in 0..n {
                ms.push(r.string()?);
            }
            build.set(ms)?
        }
        TYPE_SET_INTSET => {
            let blob = r.string()?;
            let ms = intset_members(&blob)?;
            build.set(ms.into_iter().map(|n| fmt_i64(n, &mut [0u8; 20]).to_vec()))?
        }
        TYPE_ZSET | TYPE_ZSET_2 => {
            let n = r.count()?;
            let mut ps = Vec::with_capacity(n);
            for _ in 0..n {
                let m = r.string()?;
                let s = if t == TYPE_ZSET_2 {
                    r.binary_double()?
                } else {
                    r.text_double()?
                };
                ps.push((m, s));
            }
            build.zset(ps)?
        }
        TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => {
            let blob = r.string()?;
            let elems = if t == TYPE_ZSET_LISTPACK {
                listpack_elems(&blob)?
            } else {
                ziplist_elems(&blob)?
            };
            if elems.len() % 2 != 0 {
                return Err(bad("sorted set listpack"));
            }
            let mut ps = Vec::with_capacity(elems.len() / 2);
            for c in elems.chunks(2) {
                ps.push((c[0].to_vec(), parse_score(&c[1])?));
            }
            build.zset(ps)?
        }
        TYPE_HASH => {
            let n = r.count()?;
            let mut ps = Vec::with_capacity(n);
            for _ in 0..n {
                let k = r.string()?;
                ps.push((k, r.string()?));
            }
            build.hash(ps)?
        }
        TYPE_HASH_ZIPMAP => build.hash(zipmap_pairs(&r.string()?)?)?,
        TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK => {
            let blob = r.string()?;
            let elems = if t == TYPE_HASH_LISTPACK {
                listpack_elems(&blob)?
            } else {
                ziplist_elems(&blob)?
            };
            if elems.len() % 2 != 0 {
                return Err(bad("hash listpack"));
            }
            build.hash(elems.chunks(2).map(|c| (c[0].to_vec(), c[1].to_vec())))?
        }
        6 | 7 => return Err("module values are not supported by Goblin Core".into()),
        stream::TYPE_STREAM_LISTPACKS | stream::TYPE_STREAM_LISTPACKS_2 => {
            Value::Stream(Box::new(stream::read_stream(r, t)?))
        }
        _ => return Err(format!("unknown value type {t}")),
    };
    let empty = match &v {
        Value::Str(_) => false,
        Value::List(l) => l.is_empty(),
        Value::Hash(h) => h.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::ZSet(z) => z.is_empty(),
        // An empty stream is kept, as Redis keeps it (its IDs and groups still count).
        Value::Stream(_) => false,
    };
    Ok((!empty).then_some(v))
}

/// What a successful load found, for the start-up log lines.
#[derive(Default, Debug)]
pub struct LoadInfo {
    pub version: u32,
    /// The database the replication stream had selected when the snapshot was taken.
    pub repl_stream_db: Option<usize>,
    pub redis_ver: Option<String>,
    pub ctime: Option<i64>,
    pub used_mem: Option<i64>,
    pub keys_loaded: u64,
    pub keys_expired: u64,
    pub empty_skipped: u64,
    /// Function libraries' code (`OP_FUNCTION2`), for the caller to compile.
    pub functions: Vec<Vec<u8>>,
    /// Bytes read, checksum included: where an AOF's commands follow its RDB preamble.
    pub end: usize,
}

/// Loads a whole RDB file into `dbs` (fresh databases). `check_crc`: `rdbchecksum`. Keys already
/// expired at `now_ms` are skipped, as a master's loader does.
pub fn load(
    data: &[u8],
    dbs: &mut [Db],
    lim: Limits,
    check_crc: bool,
    now_ms: i64,
) -> Result<LoadInfo, String> {
    let mut r = Reader::new(data);
    let mut info = LoadInfo::default();
    let magic = r
        .take(9)
        .map_err(|_| "file too short to be an RDB file".to_string())?;
    if &magic[..5] != b"REDIS" {
        return Err("Wrong signature trying to load DB from file".into());
    }
    let version: u32 = std::str::from_utf8(&magic[5..])
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or("Wrong signature trying to load DB from file")?;
    if !(1..=RDB_VERSION as u32).contains(&version) {
        return Err(format!("Can't handle RDB format version {version}"));
    }
    info.version = version;
    let mut db = 0usize;
    let mut expire_at = NO_EXPIRE;
    let (mut idle, mut freq) = (None, None);
    loop {
        let at = r.pos;
        let t = r.u8()?;
        match t {
            OP_EXPIRETIME_MS => {
                expire_at = i64::from_le_bytes(r.take(8)?.try_into().unwrap());
                continue;
            }
            OP_EXPIRETIME => {
                expire_at = i32::from_le_bytes(r.take(4)?.try_into().unwrap()) as i64 * 1000;
                continue;
            }
            OP_IDLE => {
                idle = Some(r.len()?);
                continue;
            }
            OP_FREQ => {
                freq = Some(r.u8()?);
                continue;
            }
            OP_SELECTDB => {
                let n = r.len()?;
                if n >= dbs.len() as u64 {
                    return Err(format!("Data file was created with a Redis server configured to handle more than {} databases", dbs.len()));
                }
                db = n as usize;
                continue;
            }
            OP_RESIZEDB => {
                let keys = r.len()?;
                r.len()?;
                // A hint only: bounded by what the rest of the file could hold.
                let n = keys.min((data.len() - r.pos) as u64 / 3) as usize;
                dbs[db].dict.reserve(n);
                continue;
            }
            OP_AUX => {
                let k = r.string()?;
                let v = r.string()?;
                let text = String::from_utf8_lossy(&v).into_owned();
                match &k[..] {
                    b"redis-ver" => info.redis_ver = Some(text),
                    b"ctime" => info.ctime = text.parse().ok(),
                    b"used-mem" => info.used_mem = text.parse().ok(),
                    b"repl-stream-db" => info.repl_stream_db = text.parse().ok(),
                    _ => {}
                }
                continue;
            }
            OP_MODULE_AUX => return Err(format!("module data (at offset {at}) is not supported")),
            OP_FUNCTION2 => {
                info.functions.push(r.string()?);
                continue;
            }
            OP_FUNCTION => {
                return Err(format!(
                    "pre-GA function format (at offset {at}) not supported"
                ))
            }
            OP_EOF => break,
            _ => {}
        }
        let key = r.string()?;
        let val = read_object(&mut r, t, lim).map_err(|e| format!("{e} (key at offset {at})"))?;
        let exp = std::mem::replace(&mut expire_at, NO_EXPIRE);
        let stamp = crate::store::restored_stamp(idle.take(), freq.take());
        let Some(val) = val else {
            info.empty_skipped += 1;
            continue;
        };
        if exp != NO_EXPIRE && exp < now_ms {
            info.keys_expired += 1;
            continue;
        }
        if dbs[db].dict.find(&key).is_some() {
            return Err(format!(
                "duplicate key '{}' at offset {at}",
                String::from_utf8_lossy(&key)
            ));
        }
        dbs[db].insert_absent(&key, val, exp, stamp);
        info.keys_loaded += 1;
    }
    if version >= 5 {
        let computed = lzf::crc64(0, &data[..r.pos]);
        let expected = u64::from_le_bytes(r.take(8)?.try_into().unwrap());
        if check_crc && expected != 0 && expected != computed {
            return Err(format!(
                "Wrong RDB checksum expected: ({expected:016x}) got ({computed:016x})"
            ));
        }
    }
    info.end = r.pos;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        for n in [0u64, 63, 64, 16383, 16384, u32::MAX as u64, 1 << 40] {
            let mut b = Vec::new();
            put_len(&mut b, n);
            assert_eq!(Reader::new(&b).len().unwrap(), n);
        }
    }
}
