//! Geospatial indices (Redis's geo.c, geohash.c and geohash_helper.c): a sorted set whose scores
//! are 52-bit geohashes, latitude and longitude bits interleaved over Web Mercator's latitude range
//! (±85.05112878) and longitude's ±180.
//!
//! GEOADD rewrites itself into ZADD, as Redis does. The searches (GEOSEARCH, GEOSEARCHSTORE and the
//! deprecated GEORADIUS family, all in `search_generic`) scan the geohash cell holding the centre
//! and its eight neighbours at the step Redis estimates from the radius, so the members found near
//! the cells' edges are exactly those Redis finds; results are sorted with glibc's stable `qsort`
//! or, for a COUNT smaller than the matches, Redis's own partial quicksort (`pqsort`), whose order
//! of equal distances we reproduce.

use std::ffi::CStr;

use super::keyspec::{
    source_and_store, BeginSearch, FindKeys, KeySpec, ACCESS, OW, RO, RW, UPDATE,
};
use super::parse::{double_or, int, is, score, text};
use super::{err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, MOVABLEKEYS, READONLY, WRITE};
use crate::resp::parser::ArgLine;
use crate::resp::reply::{Reply, SYNTAX};
use crate::server::notify::ZSET;
use crate::store::zset::{Range, ScoreBound};
use crate::store::{Value, ZSet};

const GROUP: &str = "geo";

const LAT_MIN: f64 = -85.05112878;
const LAT_MAX: f64 = 85.05112878;
const LON_MIN: f64 = -180.0;
const LON_MAX: f64 = 180.0;
/// 26 bits each of latitude and longitude: 52, what a double holds exactly.
const STEP_MAX: u32 = 26;
const EARTH_RADIUS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;
const D_R: f64 = std::f64::consts::PI / 180.0;

/// A geohash of `step` bits per coordinate (Redis's `GeoHashBits`); bits 0 and step 0 is "none".
#[derive(Clone, Copy, PartialEq)]
struct Hash {
    bits: u64,
    step: u32,
}

const NO_HASH: Hash = Hash { bits: 0, step: 0 };

/// A geohash cell's extent: (min, max) of longitude and of latitude.
struct Area {
    lon: (f64, f64),
    lat: (f64, f64),
}

/// The low 32 bits of `v` spread to the even bit positions.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// `spread`'s inverse: the even bits of `x`, packed.
fn squash(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

/// Redis's `geohashEncode` over the ranges `lon_r` and `lat_r`: latitude bits at even positions,
/// longitude bits at odd ones. `None` outside Redis's coordinate limits or the ranges.
fn encode(lon_r: (f64, f64), lat_r: (f64, f64), lon: f64, lat: f64, step: u32) -> Option<Hash> {
    let valid = (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat);
    if !valid || !(lat_r.0..=lat_r.1).contains(&lat) || !(lon_r.0..=lon_r.1).contains(&lon) {
        return None;
    }
    let cells = (1u64 << step) as f64;
    let lat_offset = (lat - lat_r.0) / (lat_r.1 - lat_r.0) * cells;
    let lon_offset = (lon - lon_r.0) / (lon_r.1 - lon_r.0) * cells;
    Some(Hash {
        bits: spread(lat_offset as u32) | (spread(lon_offset as u32) << 1),
        step,
    })
}

/// `encode` over the index's own ranges.
fn encode_wgs84(lon: f64, lat: f64, step: u32) -> Option<Hash> {
    encode((LON_MIN, LON_MAX), (LAT_MIN, LAT_MAX), lon, lat, step)
}

/// Redis's `geohashDecode` over the index's ranges.
fn decode(h: Hash) -> Area {
    let ilat = squash(h.bits);
    let ilon = squash(h.bits >> 1);
    let cells = (1u64 << h.step) as f64;
    let (lat_scale, lon_scale) = (LAT_MAX - LAT_MIN, LON_MAX - LON_MIN);
    // The C code adds 1 in 32-bit arithmetic.
    let edge = |i: u32, min: f64, scale: f64| min + (f64::from(i) / cells) * scale;
    Area {
        lat: (
            edge(ilat, LAT_MIN, lat_scale),
            edge(ilat.wrapping_add(1), LAT_MIN, lat_scale),
        ),
        lon: (
            edge(ilon, LON_MIN, lon_scale),
            edge(ilon.wrapping_add(1), LON_MIN, lon_scale),
        ),
    }
}

/// x86-64's `(uint64_t)` of a double, as gcc compiles it: exact in range, a negative value wraps
/// through `int64_t`, anything else is 2^63 or 0. A score set by ZADD can be anything.
fn c_u64(d: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if d < TWO63 {
        if d > -TWO63 {
            d as i64 as u64
        } else {
            1 << 63
        }
    } else if d < 2.0 * TWO63 {
        (d - TWO63) as u64 ^ (1 << 63)
    } else {
        0
    }
}

/// x86-64's `(long long)` of a double: out of range is `LLONG_MIN`.
fn c_i64(d: f64) -> i64 {
    if d > -9_223_372_036_854_775_809.0 && d < 9_223_372_036_854_775_808.0 {
        d as i64
    } else {
        i64::MIN
    }
}

/// The centre of a score's cell (Redis's `decodeGeohash`), clamped to the valid coordinates.
fn decode_score(score: f64) -> (f64, f64) {
    let a = decode(Hash {
        bits: c_u64(score),
        step: STEP_MAX,
    });
    let lon = ((a.lon.0 + a.lon.1) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((a.lat.0 + a.lat.1) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The 52-bit score of a coordinate pair already checked to be valid.
fn score_of(lon: f64, lat: f64) -> u64 {
    encode_wgs84(lon, lat, STEP_MAX).map_or(0, align52)
}

/// Redis's `geohashAlign52Bits`: a cell's lowest score.
fn align52(h: Hash) -> u64 {
    h.bits << (52 - h.step * 2)
}

/// The distance between two latitudes on one meridian.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS * (lat2 * D_R - lat1 * D_R).abs()
}

/// Redis's haversine distance in meters (`geohashGetDistance`), term for term.
fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((lon2 * D_R - lon1 * D_R) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (lat1 * D_R, lat2 * D_R);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS * a.sqrt().asin()
}

/// Redis's `geohashEstimateStepsByRadius`: the step whose cells are about as large as the radius,
/// coarser towards the poles.
fn estimate_steps(range: f64, lat: f64) -> u32 {
    if range == 0.0 {
        return STEP_MAX;
    }
    let mut range = range;
    let mut step: i32 = 1;
    // Doubling reaches the limit from the smallest double in about 1100 rounds.
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, STEP_MAX as i32) as u32
}

/// Redis's `geohash_move_x` (`lon`) and `geohash_move_y`: the cell `d` (±1) over, wrapping.
fn moved(h: Hash, d: i32, lon: bool) -> Hash {
    if d == 0 {
        return h;
    }
    const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let (mine, other) = if lon { (ODD, EVEN) } else { (EVEN, ODD) };
    let shift = 64 - h.step * 2;
    let mut v = h.bits & mine;
    let rest = h.bits & other;
    let zz = other >> shift;
    if d > 0 {
        v = v.wrapping_add(zz.wrapping_add(1));
    } else {
        v |= zz;
        v = v.wrapping_sub(zz.wrapping_add(1));
    }
    v &= mine >> shift;
    Hash {
        bits: v | rest,
        step: h.step,
    }
}

/// What a search covers: a circle of `radius` or a `width` by `height` box, in the unit whose
/// size in meters is `conversion`, around `xy` (longitude, latitude).
struct Shape {
    xy: (f64, f64),
    by: By,
    conversion: f64,
}

#[derive(Clone, Copy)]
enum By {
    Radius(f64),
    Box(f64, f64),
}

/// The nine cells to scan, as Redis's `geohashCalculateAreasByShapeWGS84` finds them: the centre's,
/// then north, south, east, west, north-east, north-west, south-east, south-west; a cell the
/// bounding box does not reach is `NO_HASH`.
fn cells(shape: &Shape) -> [Hash; 9] {
    let (lon, lat) = shape.xy;
    let (half_h, half_w) = match shape.by {
        By::Radius(r) => (r, r),
        By::Box(w, h) => (h / 2.0, w / 2.0),
    };
    let height = shape.conversion * half_h;
    let width = shape.conversion * half_w;
    let lat_delta = height / EARTH_RADIUS / D_R;
    let lon_delta_top = width / EARTH_RADIUS / ((lat + lat_delta) * D_R).cos() / D_R;
    let lon_delta_bottom = width / EARTH_RADIUS / ((lat - lat_delta) * D_R).cos() / D_R;
    // In degrees of longitude the shape is widest on its side nearer the pole.
    let lon_delta = if lat < 0.0 {
        lon_delta_bottom
    } else {
        lon_delta_top
    };
    let (min_lon, max_lon) = (lon - lon_delta, lon + lon_delta);
    let (min_lat, max_lat) = (lat - lat_delta, lat + lat_delta);

    let radius = shape.conversion
        * match shape.by {
            By::Radius(r) => r,
            By::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
        };
    let mut steps = estimate_steps(radius, lat);
    let at = |steps: u32| {
        encode_wgs84(lon, lat, steps).unwrap_or(Hash {
            bits: 0,
            step: steps,
        })
    };
    let neighbours = |h: Hash| {
        let m = |dx: i32, dy: i32| moved(moved(h, dx, true), dy, false);
        // north, south, east, west, north-east, north-west, south-east, south-west
        [
            m(0, 1),
            m(0, -1),
            m(1, 0),
            m(-1, 0),
            m(1, 1),
            m(-1, 1),
            m(1, -1),
            m(-1, -1),
        ]
    };
    let mut hash = at(steps);
    let mut n = neighbours(hash);
    // Near a cell's edge the estimated step may leave part of the box outside the nine cells.
    let too_fine = decode(n[0]).lat.1 < max_lat
        || decode(n[1]).lat.0 > min_lat
        || decode(n[2]).lon.1 < max_lon
        || decode(n[3]).lon.0 > min_lon;
    if steps > 1 && too_fine {
        steps -= 1;
        hash = at(steps);
        n = neighbours(hash);
    }
    let area = decode(hash);
    if steps >= 2 {
        let (north, south, east, west, ne, nw, se, sw) = (0, 1, 2, 3, 4, 5, 6, 7);
        let mut clear = |cells: [usize; 3]| cells.iter().for_each(|&i| n[i] = NO_HASH);
        if area.lat.0 < min_lat {
            clear([south, sw, se]);
        }
        if area.lat.1 > max_lat {
            clear([north, ne, nw]);
        }
        if area.lon.0 < min_lon {
            clear([west, sw, nw]);
        }
        if area.lon.1 > max_lon {
            clear([east, se, ne]);
        }
    }
    [hash, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]
}

/// A member found by a search.
struct Point {
    lon: f64,
    lat: f64,
    /// Meters until the reply divides it by the unit.
    dist: f64,
    score: f64,
    member: Vec<u8>,
}

/// Redis's `geoWithinShape`: the member's coordinates and distance when it is inside.
fn within(shape: &Shape, score: f64) -> Option<(f64, f64, f64)> {
    let (lon, lat) = decode_score(score);
    let (cx, cy) = shape.xy;
    let dist = match shape.by {
        By::Radius(r) => {
            let d = distance(cx, cy, lon, lat);
            (d <= r * shape.conversion).then_some(d)?
        }
        By::Box(w, h) => {
            let (w, h) = (w * shape.conversion, h * shape.conversion);
            if lat_distance(lat, cy) > h / 2.0 || distance(lon, lat, cx, lat) > w / 2.0 {
                return None;
            }
            distance(cx, cy, lon, lat)
        }
    };
    Some((lon, lat, dist))
}

/// Redis's `membersOfAllNeighbors`: the members inside the shape, cell by cell in score order,
/// stopping once there are `limit` (0: no limit). A cell equal to the one scanned just before is
/// skipped, though not when that was the centre's, as in Redis.
fn search(z: &ZSet, shape: &Shape, limit: usize) -> Vec<Point> {
    let mut found = Vec::new();
    let cells = cells(shape);
    let mut last = 0;
    for (i, &cell) in cells.iter().enumerate() {
        if cell == NO_HASH || (last != 0 && cell == cells[last]) {
            continue;
        }
        if limit != 0 && found.len() >= limit {
            break;
        }
        let min = align52(cell) as f64;
        let max = align52(Hash {
            bits: cell.bits + 1,
            step: cell.step,
        }) as f64;
        let range = Range::Score(
            ScoreBound {
                value: min,
                exclusive: false,
            },
            ScoreBound {
                value: max,
                exclusive: true,
            },
        );
        let mut at = z.first_in(&range);
        while let Some(id) = at {
            let (member, score) = z.get(id);
            if score >= max {
                break;
            }
            if let Some((lon, lat, dist)) = within(shape, score) {
                found.push(Point {
                    lon,
                    lat,
                    dist,
                    score,
                    member: member.to_vec(),
                });
            }
            if limit != 0 && found.len() >= limit {
                break;
            }
            at = z.next(id);
        }
        last = i;
    }
    found
}

/// Redis's `sort_gp_asc` as a C comparator.
fn cmp_asc(a: &Point, b: &Point) -> i32 {
    if a.dist > b.dist {
        1
    } else if a.dist == b.dist {
        0
    } else {
        -1
    }
}

/// Redis's `pqsort`: a Bentley-McIlroy quicksort that only sorts the parts holding the positions
/// `lo..=hi`. Ported step for step, so that equal elements end where Redis puts them; Redis 7.0's
/// has no switch to insertion sort after a partition without swaps (later versions do).
fn pqsort<T>(v: &mut [T], cmp: &impl Fn(&T, &T) -> i32, lo: usize, hi: usize) {
    let n = v.len();
    pqsort_from(v, cmp, (lo, hi), 0, n);
}

/// `pqsort` of the `n` elements from `a` (Redis's `_pqsort`).
fn pqsort_from<T>(
    v: &mut [T],
    cmp: &impl Fn(&T, &T) -> i32,
    (lo, hi): (usize, usize),
    mut a: usize,
    mut n: usize,
) {
    // Whether the part of `n` from `a` holds a wanted position.
    let wanted = |a: usize, n: usize| !(hi < a || lo >= a + n);
    loop {
        if n < 7 {
            insertion_sort(v, cmp, a, n);
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, cmp, pl, pl + d, pl + 2 * d);
                pm = med3(v, cmp, pm - d, pm, pm + d);
                pn = med3(v, cmp, pn - 2 * d, pn - d, pn);
            }
            pm = med3(v, cmp, pl, pm, pn);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        loop {
            while pb <= pc {
                let c = cmp(&v[pb], &v[a]);
                if c > 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let c = cmp(&v[pc], &v[a]);
                if c < 0 {
                    break;
                }
                if c == 0 {
                    v.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        (0..r).for_each(|i| v.swap(a + i, pb - r + i));
        let r = (pd - pc).min(pn - pd - 1);
        (0..r).for_each(|i| v.swap(pb + i, pn - r + i));
        let r = pb - pa;
        if r > 1 && wanted(a, r) {
            pqsort_from(v, cmp, (lo, hi), a, r);
        }
        let r = pd - pc;
        if r <= 1 {
            return;
        }
        a = pn - r;
        n = r;
        if !wanted(a, n) {
            return;
        }
    }
}

fn insertion_sort<T>(v: &mut [T], cmp: &impl Fn(&T, &T) -> i32, a: usize, n: usize) {
    for m in a + 1..a + n {
        let mut l = m;
        while l > a && cmp(&v[l - 1], &v[l]) > 0 {
            v.swap(l, l - 1);
            l -= 1;
        }
    }
}

/// The median of three positions, as the C macro picks it.
fn med3<T>(v: &[T], cmp: &impl Fn(&T, &T) -> i32, a: usize, b: usize, c: usize) -> usize {
    if cmp(&v[a], &v[b]) < 0 {
        if cmp(&v[b], &v[c]) < 0 {
            b
        } else if cmp(&v[a], &v[c]) < 0 {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) > 0 {
        b
    } else if cmp(&v[a], &v[c]) < 0 {
        a
    } else {
        c
    }
}

/// C's `snprintf` of one double (`%.17f`, `%f`), exactly as Redis prints it.
fn c_format(fmt: &CStr, d: f64) -> String {
    let mut buf = [0u8; 512];
    // SAFETY: the format takes exactly one double; snprintf writes at most buf.len() bytes, NUL
    // included, and returns the length it needed.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), d) };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Redis's `addReplyHumanLongDouble` (GEOPOS, WITHCOORD): `%.17Lf` without trailing zeros, as a
/// bulk string in RESP2 and a double in RESP3.
fn reply_human(out: &mut Reply, d: f64) {
    let mut s = c_format(c"%.17f", d);
    if s.contains('.') {
        s.truncate(s.trim_end_matches('0').len());
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    out.double_text(&s);
}

/// Redis's `addReplyDoubleDistance`: four decimals as its `fixedpoint_d2string` writes them, a
/// bulk string in both protocols. The value times 10^4 is rounded half to even (`llrint`), which
/// `%.4f` would round differently at an exact half.
fn reply_distance(out: &mut Reply, d: f64) {
    if d == 0.0 {
        out.bulk(b"0.0000");
        return;
    }
    let scaled = (d * 10000.0).round_ties_even();
    // x86's out-of-range (and NaN) conversion yields LLONG_MIN.
    let n = if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&scaled) {
        scaled as i64
    } else {
        i64::MIN
    };
    let sign = if n < 0 { "-" } else { "" };
    let v = n.unsigned_abs();
    out.bulk(format!("{sign}{}.{:04}", v / 10000, v % 10000).as_bytes());
}

/// Redis's `extractLongLatOrReply`: `longitude latitude` at `args[at]`.
fn lon_lat(args: Args, at: usize) -> Result<(f64, f64), CmdError> {
    let lon = score(&args[at])?;
    let lat = score(&args[at + 1])?;
    if !(LON_MIN..=LON_MAX).contains(&lon) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return Err(err(format!(
            "invalid longitude,latitude pair {},{}",
            c_format(c"%f", lon),
            c_format(c"%f", lat)
        )));
    }
    Ok((lon, lat))
}

/// Redis's `extractUnitOrReply`: a unit's size in meters.
fn unit(arg: &[u8]) -> Result<f64, CmdError> {
    [("m", 1.0), ("km", 1000.0), ("ft", 0.3048), ("mi", 1609.34)]
        .iter()
        .find(|(name, _)| is(arg, name))
        .map(|&(_, m)| m)
        .ok_or_else(|| "ERR unsupported unit provided. please use M, KM, FT, MI".into())
}

/// Redis's `extractDistanceOrReply`: `radius unit` at `args[at]`, as (radius, conversion).
fn radius(args: Args, at: usize) -> Result<(f64, f64), CmdError> {
    let r = double_or(&args[at], "ERR need numeric radius")?;
    if r < 0.0 {
        return Err("ERR radius cannot be negative".into());
    }
    Ok((r, unit(&args[at + 1])?))
}

/// Redis's `extractBoxOrReply`: `width height unit` at `args[at]`, as (width, height, conversion).
fn bbox(args: Args, at: usize) -> Result<(f64, f64, f64), CmdError> {
    let w = double_or(&args[at], "ERR need numeric width")?;
    let h = double_or(&args[at + 1], "ERR need numeric height")?;
    if h < 0.0 || w < 0.0 {
        return Err("ERR height or width cannot be negative".into());
    }
    Ok((w, h, unit(&args[at + 2])?))
}

/// A member's coordinates, or Redis's error when it is missing.
fn member_xy(z: &ZSet, member: &[u8]) -> Result<(f64, f64), CmdError> {
    z.score(member)
        .map(decode_score)
        .ok_or_else(|| "ERR could not decode requested zset member".into())
}

/// GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]
///
/// # Format
/// `GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]` — the
/// number of members added (with CH: added or moved), as ZADD with the members' geohash scores.
fn geoadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    let line = as_zadd(args)?;
    let zadd = line.args();
    // It runs, and replays, as that ZADD (Redis's `replaceClientCommandVector`).
    ctx.propagate_as(&zadd.iter().collect::<Vec<_>>());
    super::zset::zadd_for_geoadd(ctx, zadd)
}

/// GEOADD's line as the `ZADD key [options] score member ...` Redis rewrites it into.
fn as_zadd(args: Args) -> Result<ArgLine, CmdError> {
    let (mut nx, mut xx) = (false, false);
    let mut at = 2;
    while at < args.len() {
        let opt = &args[at];
        if is(opt, "nx") {
            nx = true;
        } else if is(opt, "xx") {
            xx = true;
        } else if !is(opt, "ch") {
            break;
        }
        at += 1;
    }
    if !(args.len() - at).is_multiple_of(3) || (nx && xx) {
        return Err(SYNTAX.into());
    }
    let mut line = ArgLine::default();
    line.push(b"zadd");
    for arg in args.iter().take(at).skip(1) {
        line.push(arg);
    }
    for j in (at..args.len()).step_by(3) {
        let (lon, lat) = lon_lat(args, j)?;
        line.push(score_of(lon, lat).to_string().as_bytes());
        line.push(&args[j + 2]);
    }
    Ok(line)
}

/// GEOPOS key [member [member ...]]
///
/// # Format
/// `GEOPOS key [member ...]` — for each member `[longitude, latitude]`, or a nil array when missing.
fn geopos(ctx: &mut Ctx, args: Args) -> CmdResult {
    let z = super::zset::read(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    let out = &mut *ctx.out;
    out.array(args.len() - 2);
    for m in args.iter().skip(2) {
        match z.as_ref().and_then(|z| z.score(m)) {
            Some(s) => {
                let (lon, lat) = decode_score(s);
                out.array(2);
                reply_human(out, lon);
                reply_human(out, lat);
            }
            None => out.null_array(),
        }
    }
    Ok(())
}

/// GEODIST key member1 member2 [M | KM | FT | MI]
///
/// # Format
/// `GEODIST key member1 member2 [M|KM|FT|MI]` — the distance with four decimals, or nil when the
/// key or either member is missing.
fn geodist(ctx: &mut Ctx, args: Args) -> CmdResult {
    let to_meter = match args.len() {
        5 => unit(&args[4])?,
        4 => 1.0,
        _ => return Err(SYNTAX.into()),
    };
    let z = super::zset::read(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    match z.and_then(|z| Some((z.score(&args[2])?, z.score(&args[3])?))) {
        Some((s1, s2)) => {
            let ((lon1, lat1), (lon2, lat2)) = (decode_score(s1), decode_score(s2));
            reply_distance(ctx.out, distance(lon1, lat1, lon2, lat2) / to_meter);
        }
        None => ctx.out.null(),
    }
    Ok(())
}

/// GEOHASH key [member [member ...]]
///
/// # Format
/// `GEOHASH key [member ...]` — for each member its 11-character standard geohash, or nil.
fn geohash(ctx: &mut Ctx, args: Args) -> CmdResult {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let z = super::zset::read(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    let out = &mut *ctx.out;
    out.array(args.len() - 2);
    for m in args.iter().skip(2) {
        let Some(s) = z.as_ref().and_then(|z| z.score(m)) else {
            out.null();
            continue;
        };
        // Re-encoded over the standard latitude range ±90 that other geohash tools use.
        let (lon, lat) = decode_score(s);
        let bits = encode((-180.0, 180.0), (-90.0, 90.0), lon, lat, STEP_MAX).map_or(0, |h| h.bits);
        let mut hash = [b'0'; 11];
        for (i, c) in hash.iter_mut().enumerate().take(10) {
            *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
        }
        out.bulk(&hash);
    }
    Ok(())
}

/// Which command `search_generic` serves.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// GEORADIUS[_RO]: `key longitude latitude radius unit`.
    Radius,
    /// GEORADIUSBYMEMBER[_RO]: `key member radius unit`.
    RadiusByMember,
    Search,
    SearchStore,
}

/// Redis's `georadiusGeneric`: every search command. `store_ok` is false for the `_RO` forms.
fn search_generic(ctx: &mut Ctx, args: Args, kind: Kind, store_ok: bool) -> CmdResult {
    let src = if kind == Kind::SearchStore { 2 } else { 1 };
    let z = super::zset::read(&mut ctx.srv.dbs[ctx.db], &args[src])?;
    let mut shape = Shape {
        xy: (0.0, 0.0),
        by: By::Radius(0.0),
        conversion: 1.0,
    };
    let mut store: Option<&[u8]> = None;
    let base = match kind {
        Kind::Radius => {
            shape.xy = lon_lat(args, 2)?;
            let (r, conversion) = radius(args, 4)?;
            (shape.by, shape.conversion) = (By::Radius(r), conversion);
            6
        }
        // Without the key Redis parses neither the member nor the radius.
        Kind::RadiusByMember => {
            if let Some(z) = z.as_deref() {
                shape.xy = member_xy(z, &args[2])?;
                let (r, conversion) = radius(args, 3)?;
                (shape.by, shape.conversion) = (By::Radius(r), conversion);
            }
            5
        }
        Kind::Search => 2,
        Kind::SearchStore => {
            store = Some(&args[1]);
            3
        }
    };
    let searching = matches!(kind, Kind::Search | Kind::SearchStore);
    let (mut withdist, mut withhash, mut withcoord, mut any) = (false, false, false, false);
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) =
        (false, false, false, false);
    let mut storedist = false;
    let mut sort: Option<bool> = None; // Some(true) descending
    let mut count: i64 = 0;
    let mut i = base;
    while i < args.len() {
        let a = &args[i];
        let left = args.len() - i - 1;
        if is(a, "withdist") {
            withdist = true;
        } else if is(a, "withhash") {
            withhash = true;
        } else if is(a, "withcoord") {
            withcoord = true;
        } else if is(a, "any") {
            any = true;
        } else if is(a, "asc") {
            sort = Some(false);
        } else if is(a, "desc") {
            sort = Some(true);
        } else if is(a, "count") && left >= 1 {
            count = int(&args[i + 1])?;
            if count <= 0 {
                return Err("ERR COUNT must be > 0".into());
            }
            i += 1;
        } else if (is(a, "store") || is(a, "storedist")) && left >= 1 && store_ok && !searching {
            store = Some(&args[i + 1]);
            storedist = is(a, "storedist");
            i += 1;
        } else if is(a, "storedist") && kind == Kind::SearchStore {
            storedist = true;
        } else if is(a, "frommember") && left >= 1 && searching && !from_lonlat {
            if let Some(z) = z.as_deref() {
                shape.xy = member_xy(z, &args[i + 1])?;
            }
            from_member = true;
            i += 1;
        } else if is(a, "fromlonlat") && left >= 2 && searching && !from_member {
            shape.xy = lon_lat(args, i + 1)?;
            from_lonlat = true;
            i += 2;
        } else if is(a, "byradius") && left >= 2 && searching && !by_box {
            let (r, conversion) = radius(args, i + 1)?;
            (shape.by, shape.conversion) = (By::Radius(r), conversion);
            by_radius = true;
            i += 2;
        } else if is(a, "bybox") && left >= 3 && searching && !by_radius {
            let (w, h, conversion) = bbox(args, i + 1)?;
            (shape.by, shape.conversion) = (By::Box(w, h), conversion);
            by_box = true;
            i += 3;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if store.is_some() && (withdist || withhash || withcoord) {
        let what = if kind == Kind::SearchStore {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(err(format!(
            "{what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    if searching && !(from_member || from_lonlat) {
        return Err(err(format!(
            "exactly one of FROMMEMBER or FROMLONLAT can be specified for {}",
            text(&args[0])
        )));
    }
    if searching && !(by_radius || by_box) {
        return Err(err(format!(
            "exactly one of BYRADIUS and BYBOX can be specified for {}",
            text(&args[0])
        )));
    }
    if any && count == 0 {
        return Err("ERR the ANY argument requires COUNT argument".into());
    }
    let Some(z) = z else {
        match store {
            Some(dst) => {
                ctx.store_result(dst, None, ZSET, "", 0);
                ctx.out.int(0);
            }
            None => ctx.out.array(0),
        }
        return Ok(());
    };
    // COUNT means the nearest ones, unless ANY.
    if count != 0 && sort.is_none() && !any {
        sort = Some(false);
    }
    let mut found = search(z, &shape, if any { count as usize } else { 0 });
    let total = found.len();
    let returned = if count == 0 || (total as i64) < count {
        total
    } else {
        count as usize
    };
    if let Some(desc) = sort {
        let cmp = |a: &Point, b: &Point| {
            let c = cmp_asc(a, b);
            if desc {
                -c
            } else {
                c
            }
        };
        if returned == total {
            // glibc's qsort is a stable merge sort.
            found.sort_by(|a, b| cmp(a, b).cmp(&0));
        } else {
            pqsort(&mut found, &cmp, 0, returned - 1);
        }
    }
    found.truncate(returned);
    for p in &mut found {
        p.dist /= shape.conversion;
    }
    let Some(dst) = store else {
        let out = &mut *ctx.out;
        let options = usize::from(withdist) + usize::from(withhash) + usize::from(withcoord);
        out.array(returned);
        for p in &found {
            if options > 0 {
                out.array(options + 1);
            }
            out.bulk(&p.member);
            if withdist {
                reply_distance(out, p.dist);
            }
            if withhash {
                out.int(c_i64(p.score));
            }
            if withcoord {
                out.array(2);
                reply_human(out, p.lon);
                reply_human(out, p.lat);
            }
        }
        return Ok(());
    };
    let lim = super::zset::limits(ctx);
    let max_len = found.iter().map(|p| p.member.len()).max().unwrap_or(0);
    let mut result = ZSet::for_result(returned, max_len, lim);
    for p in &found {
        let s = if storedist { p.dist } else { p.score };
        // The scanned cells never overlap (Redis asserts it); a repeat must not corrupt the set.
        if result.score(&p.member).is_none() {
            result.insert(&p.member, s, lim);
        }
    }
    let event = if searching {
        "geosearchstore"
    } else {
        "georadiusstore"
    };
    let value = (returned > 0).then(|| Value::ZSet(Box::new(result)));
    ctx.store_result(dst, value, ZSET, event, returned as u64);
    ctx.out.int(returned as i64);
    Ok(())
}

/// GEORADIUS key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
/// [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]
///
/// # Format
/// `GEORADIUS key longitude latitude radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count
/// [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]` — the members within the radius (each with the
/// options asked for), or with STORE/STOREDIST the number stored.
fn georadius(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::Radius, true)
}

/// GEORADIUS_RO key longitude latitude radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
/// [COUNT count [ANY]] [ASC | DESC]
///
/// # Format
/// `GEORADIUS_RO key longitude latitude radius unit [WITH...] [COUNT count [ANY]] [ASC|DESC]` — as
/// GEORADIUS, without STORE.
fn georadius_ro(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::Radius, false)
}

/// GEORADIUSBYMEMBER key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
/// [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]
///
/// # Format
/// `GEORADIUSBYMEMBER key member radius unit [WITH...] [COUNT count [ANY]] [ASC|DESC] [STORE key]
/// [STOREDIST key]` — as GEORADIUS around a member.
fn georadiusbymember(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::RadiusByMember, true)
}

/// GEORADIUSBYMEMBER_RO key member radius M | KM | FT | MI [WITHCOORD] [WITHDIST] [WITHHASH]
/// [COUNT count [ANY]] [ASC | DESC]
///
/// # Format
/// `GEORADIUSBYMEMBER_RO key member radius unit [WITH...] [COUNT count [ANY]] [ASC|DESC]` — as
/// GEORADIUSBYMEMBER, without STORE.
fn georadiusbymember_ro(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::RadiusByMember, false)
}

/// GEOSEARCH key FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS radius unit | BYBOX
/// width height unit [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
///
/// # Format
/// `GEOSEARCH key FROMMEMBER member|FROMLONLAT lon lat BYRADIUS r unit|BYBOX w h unit [ASC|DESC]
/// [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]` — the members inside the circle or box.
fn geosearch(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::Search, false)
}

/// GEOSEARCHSTORE destination source FROMMEMBER member | FROMLONLAT longitude latitude BYRADIUS
/// radius unit | BYBOX width height unit [ASC | DESC] [COUNT count [ANY]] [STOREDIST]
///
/// # Format
/// `GEOSEARCHSTORE destination source FROM... BY... [ASC|DESC] [COUNT count [ANY]] [STOREDIST]` —
/// the number of members stored at `destination` (an empty result deletes it).
fn geosearchstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    search_generic(ctx, args, Kind::SearchStore, false)
}

/// COMMAND GETKEYS of GEORADIUS and GEORADIUSBYMEMBER, as Redis's `georadiusGetKeys`: the key
/// (read), and the destination of the last STORE or STOREDIST from argument 5 on (overwritten).
fn georadius_keys(args: Args) -> Vec<(usize, u32)> {
    let mut store = None;
    let mut i = 5;
    while i < args.len() {
        if (is(&args[i], "store") || is(&args[i], "storedist")) && i + 1 < args.len() {
            store = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    source_and_store(store)
}

/// The destination after `keyword` (STORE, STOREDIST), searched from argument `startfrom`.
const fn store_spec(keyword: &'static str, startfrom: i32) -> KeySpec {
    KeySpec {
        notes: None,
        flags: OW | UPDATE,
        begin_search: BeginSearch::Keyword { keyword, startfrom },
        find_keys: FindKeys::Range {
            lastkey: 0,
            keystep: 1,
            limit: 0,
        },
    }
}

const RADIUS_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";
const SEARCH_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape";
const UPPERCASE_UNITS: (&str, &str) = ("7.0.0", "Added support for uppercase unit names.");
const ANY_ADDED: (&str, &str) = ("6.2.0", "Added the `ANY` option for `COUNT`.");

/// The options GEORADIUS and GEORADIUSBYMEMBER share after the unit.
macro_rules! radius_options {
    () => {
        " unit:(M | KM | FT | MI) [WITHCOORD] [WITHDIST] [WITHHASH] [count:((COUNT count:integer) [ANY])] [order:(ASC | DESC)]"
    };
}

/// The centre and shape of GEOSEARCH and GEOSEARCHSTORE.
macro_rules! search_shape {
    () => {
        "from:(FROMMEMBER member | FROMLONLAT longitude:double latitude:double) by:(circle:((BYRADIUS radius:double) unit:(M | KM | FT | MI)) | box:((BYBOX width:double) height:double unit:(M | KM | FT | MI))) [order:(ASC | DESC)] [count:((COUNT count:integer) [ANY])]"
    };
}

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::new("geoadd", geoadd, -5, WRITE | DENYOOM).key(1, RW | UPDATE).group(GROUP)
        .history(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")])
        .arg_since(&[("condition", "6.2.0"), ("change", "6.2.0")])
        .doc("Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
            "key [condition:(NX | XX)] [change:CH] longitude:double latitude:double member [longitude:double latitude:double member ...]"),
    Command::new("geopos", geopos, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Returns longitude and latitude of members of a geospatial index", "3.2.0", "O(N) where N is the number of members requested.", "key member [member ...]"),
    Command::new("geodist", geodist, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Returns the distance between two members of a geospatial index", "3.2.0", "O(log(N))", "key member1 member2 [unit:(M | KM | FT | MI)]"),
    Command::new("geohash", geohash, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Returns members of a geospatial index as standard geohash strings", "3.2.0", "O(log(N)) for each member requested, where N is the number of elements in the sorted set.", "key member [member ...]"),
    Command::new("georadius", georadius, -6, WRITE | DENYOOM | MOVABLEKEYS).key(1, RO | ACCESS).key_spec(store_spec("STORE", 6)).key_spec(store_spec("STOREDIST", 6))
        .key_finder(georadius_keys).group(GROUP)
        .history(&[ANY_ADDED, UPPERCASE_UNITS])
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument")
        .arg_since(&[("any", "6.2.0")])
        .doc("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", RADIUS_COMPLEXITY,
            concat!("key longitude:double latitude:double radius:double", radius_options!(), " [STORE key] [STOREDIST key]")),
    Command::new("georadius_ro", georadius_ro, -6, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[ANY_ADDED])
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument")
        .arg_since(&[("any", "6.2.0")])
        .doc("A read-only variant for GEORADIUS", "3.2.10", RADIUS_COMPLEXITY,
            concat!("key longitude:double latitude:double radius:double", radius_options!())),
    Command::new("georadiusbymember", georadiusbymember, -5, WRITE | DENYOOM | MOVABLEKEYS).key(1, RO | ACCESS).key_spec(store_spec("STORE", 5)).key_spec(store_spec("STOREDIST", 5))
        .key_finder(georadius_keys).group(GROUP)
        .history(&[UPPERCASE_UNITS])
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .doc("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", RADIUS_COMPLEXITY,
            concat!("key member radius:double", radius_options!(), " [STORE key] [STOREDIST key]")),
    Command::new("georadiusbymember_ro", georadiusbymember_ro, -5, READONLY).key(1, RO | ACCESS).group(GROUP)
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .doc("A read-only variant for GEORADIUSBYMEMBER", "3.2.10", RADIUS_COMPLEXITY,
            concat!("key member radius:double", radius_options!())),
    Command::new("geosearch", geosearch, -7, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[UPPERCASE_UNITS])
        .doc("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", SEARCH_COMPLEXITY,
            concat!("key ", search_shape!(), " [WITHCOORD] [WITHDIST] [WITHHASH]")),
    Command::new("geosearchstore", geosearchstore, -8, WRITE | DENYOOM).key(1, OW | UPDATE).key(2, RO | ACCESS).group(GROUP)
        .history(&[UPPERCASE_UNITS])
        .doc("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", SEARCH_COMPLEXITY,
            concat!("destination:key source:key ", search_shape!(), " [STOREDIST]")),
];
