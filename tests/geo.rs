//! Geospatial commands: differential cases against Debian's redis-server (GEOADD, GEOPOS,
//! GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE and the deprecated GEORADIUS family), in RESP2 and
//! RESP3: options, units, coordinates at the limits, ordering and COUNT (with ties, which Redis's
//! partial sort orders its own way), STORE forms, errors, keyspace events, scripts, MULTI, and a
//! few hundred pseudo-random points searched many ways.

mod common;
use common::{compare, compare_both, compare_events, goblin};

const SICILY: &str =
    "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1 17.241510 38.788135 edge2";

#[test]
fn add_pos_dist_hash() {
    compare_both(&[
        &[
            SICILY,
            "GEOPOS Sicily Palermo Catania NonExisting",
            "GEOPOS Sicily",
            "GEOPOS nokey a b",
            "GEODIST Sicily Palermo Catania",
            "GEODIST Sicily Palermo Catania m",
            "GEODIST Sicily Palermo Catania KM",
            "GEODIST Sicily Palermo Catania ft",
            "GEODIST Sicily Palermo Catania Mi",
            "GEODIST Sicily Palermo Palermo",
            "GEODIST Sicily Palermo Nope",
            "GEODIST nokey a b",
            "GEOHASH Sicily Palermo Catania edge1 Nope",
            "GEOHASH Sicily",
            "GEOHASH nokey a",
            "ZRANGE Sicily 0 -1 WITHSCORES",
            "TYPE Sicily",
            "OBJECT ENCODING Sicily",
        ],
        &[
            // NX, XX and CH are ZADD's.
            "GEOADD g 1 1 a 2 2 b",
            "GEOADD g 1 1 a 3 3 c",
            "GEOADD g NX 5 5 a 4 4 d",
            "GEOPOS g a d",
            "GEOADD g XX 6 6 a 7 7 e",
            "GEOPOS g a e",
            "GEOADD g CH 6 6 a 8 8 b 9 9 f",
            "GEOADD g XX CH 6 6 a 10 10 b",
            "GEOADD g ch nx xx 1 1 a",
            "GEOADD g CH XX CH 1 1 a",
            "GEOADD nokey XX 1 1 a",
            "EXISTS nokey",
            "ZRANGE g 0 -1 WITHSCORES",
        ],
        &[
            // The corners of the index and the antimeridian.
            "GEOADD e 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw 0 0 zero -0 -0 negzero 179.9999999 0 am1 -179.9999999 0 am2",
            "GEOPOS e ne sw se nw zero negzero am1 am2",
            "GEOHASH e ne sw se nw zero negzero am1 am2",
            "GEODIST e ne sw",
            "GEODIST e am1 am2 km",
            "GEODIST e nw ne mi",
            "GEODIST e zero negzero",
            "ZRANGE e 0 -1 WITHSCORES",
            "GEOADD e 180.0000001 0 x",
            "GEOADD e 0 85.05112879 x",
            "GEOADD e -180.0000001 0 x",
            "GEOADD e 0 -85.051128781 x",
        ],
        &[
            // Scores written by ZADD: whatever they are, they decode as Redis decodes them.
            "ZADD z 0 zero -1 neg 1.5 frac 4503599627370495 max52 4503599627370496 over52 1e19 huge -1e19 neghuge 9007199254740993 odd inf pinf -inf ninf",
            "GEOPOS z zero neg frac max52 over52 huge neghuge odd pinf ninf",
            "GEOHASH z zero neg frac max52 over52 huge neghuge odd pinf ninf",
            "GEODIST z zero max52",
            "GEODIST z neg huge km",
            "GEOSEARCH z FROMLONLAT 0 0 BYRADIUS 20000 km ASC WITHHASH WITHCOORD WITHDIST",
            "GEOSEARCH z FROMMEMBER neg BYBOX 40000 40000 km DESC WITHHASH",
            "GEORADIUSBYMEMBER z ninf 100 km WITHHASH",
        ],
    ]);
}

#[test]
fn search_options() {
    compare_both(&[&[
        SICILY,
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km DESC",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 KM WITHCOORD WITHDIST WITHHASH",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km withdist",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km withhash",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km withcoord",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200000 m WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 656168 ft WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 124.27 mi WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km DESC",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 m",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 0 km WITHDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 0 0 km WITHDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 2",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 2 DESC WITHDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 2 ANY",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 2 ANY ASC",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 2 ANY DESC WITHDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 100",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km COUNT 1 COUNT 3 ASC DESC",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km ANY COUNT 1",
        "GEOSEARCH Sicily BYRADIUS 500 km FROMMEMBER Catania withdist",
        "GEOSEARCH Sicily BYBOX 500 100 km FROMLONLAT 15 38 withdist asc",
        "GEOSEARCH Sicily FROMLONLAT 15 38 BYBOX 100 500 km withdist asc",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 m",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1e-300 m",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1e300 m",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS inf m",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX inf inf m",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1e300 1 mi",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 9223372036854775807",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 9223372036854775807 ANY",
        "GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km",
        "GEOSEARCH nokey FROMMEMBER x BYRADIUS 200 km",
    ]]);
}

#[test]
fn edges_of_the_map() {
    compare_both(&[&[
        "GEOADD w 179.99 0 a -179.99 0 b 179.5 0.5 c -179.5 -0.5 d 0 85.05 n1 90 85.05 n2 -90 85 n3 180 85.05112878 n4 0 -85.05 s1 120 -85 s2 -60 -84.9 s3",
        "GEOSEARCH w FROMLONLAT 180 0 BYRADIUS 100 km ASC WITHDIST",
        "GEOSEARCH w FROMLONLAT -180 0 BYRADIUS 100 km ASC WITHDIST",
        "GEOSEARCH w FROMMEMBER a BYRADIUS 200 km ASC WITHDIST",
        "GEOSEARCH w FROMMEMBER b BYBOX 300 300 km ASC WITHDIST",
        "GEOSEARCH w FROMLONLAT 0 85.05112878 BYRADIUS 2000 km ASC WITHDIST WITHCOORD",
        "GEOSEARCH w FROMLONLAT 0 85.05112878 BYRADIUS 20000 km ASC WITHDIST",
        "GEOSEARCH w FROMLONLAT 0 -85.05112878 BYRADIUS 2000 km ASC WITHDIST",
        "GEOSEARCH w FROMLONLAT 45 -85 BYBOX 3000 3000 km ASC WITHDIST",
        "GEOSEARCH w FROMLONLAT 45 85 BYBOX 5000 1000 km DESC WITHDIST",
        "GEOSEARCH w FROMLONLAT 0 0 BYRADIUS 40000 km ASC",
        "GEOSEARCH w FROMLONLAT 0 0 BYBOX 40000 40000 km ASC",
        "GEORADIUS w 180 85.05112878 5000 km ASC WITHDIST",
        "GEORADIUS w -180 -85.05112878 5000 km ASC WITHDIST",
    ]]);
}

/// Redis 7.0 writes distances as its `fixedpoint_d2string` does: the value times 10^4 rounded half
/// to even. This distance is 2144766.86585000017...: `%.4f` would print `2144766.8659`.
#[test]
fn distances_round_half_even() {
    compare_both(&[&[
        "GEOADD g 29.53788310289382935 -85.04007105894237384 p 0.9537531871592932 -66.5 c",
        "GEOSEARCH g FROMLONLAT 0.9537531871592932 -66.5 BYRADIUS 20678386.198915247 m WITHDIST",
        "GEORADIUS g 0.9537531871592932 -66.5 3000000 m WITHDIST",
        "GEOSEARCHSTORE d g FROMLONLAT 0.9537531871592932 -66.5 BYRADIUS 3000 km STOREDIST",
        "ZSCORE d p",
        "GEODIST g p c",
        "GEODIST g p p",
    ]]);
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("GEOADD g 29.53788310289382935 -85.04007105894237384 p");
    let r =
        c.cmd_str("GEOSEARCH g FROMLONLAT 0.9537531871592932 -66.5 BYRADIUS 3000000 m WITHDIST");
    assert_eq!(r, b"*1\r\n*2\r\n$1\r\np\r\n$12\r\n2144766.8658\r\n");
}

#[test]
fn ties_and_partial_sorts() {
    // Many members at a few identical points: equal distances, which Redis's stable qsort keeps
    // in score-then-member order and its partial quicksort (COUNT below the matches) reorders.
    let mut add = String::from("GEOADD t");
    for i in 0..60 {
        let (lon, lat) = [(10.0, 10.0), (10.01, 10.0), (10.0, 10.01)][i % 3];
        add.push_str(&format!(" {lon} {lat} m{i:02}"));
    }
    let mut case = vec![add];
    for count in [1, 2, 3, 5, 7, 8, 10, 20, 25, 41, 50, 59, 60, 61] {
        for order in ["ASC", "DESC"] {
            case.push(format!(
                "GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 10 km COUNT {count} {order} WITHDIST"
            ));
            case.push(format!(
                "GEORADIUS t 10.005 10.005 10 km COUNT {count} {order}"
            ));
        }
        case.push(format!(
            "GEOSEARCH t FROMMEMBER m01 BYBOX 10 10 km COUNT {count}"
        ));
    }
    case.push("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 10 km ASC".into());
    case.push("GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 10 km DESC".into());
    case.push("GEOSEARCHSTORE d t FROMLONLAT 10 10 BYRADIUS 10 km COUNT 7 STOREDIST".into());
    case.push("ZRANGE d 0 -1 WITHSCORES".into());
    let refs: Vec<&str> = case.iter().map(String::as_str).collect();
    compare_both(&[&refs]);
}

/// Partial sorts of a scattered index with some repeated positions, every way round: Redis 7.0's
/// partial quicksort leaves equal distances in an order of its own, which a stable sort (or a
/// later version of the same quicksort) would not reproduce.
#[test]
fn partial_sorts_of_scattered_points() {
    let mut rng = Lcg(42);
    let mut add = String::from("GEOADD s");
    let mut last = (0.0, 0.0);
    for i in 0..100 {
        if i % 9 != 4 {
            last = (rng.range(-120.0, 120.0), rng.range(-70.0, 70.0));
        }
        add.push_str(&format!(" {:.6} {:.6} m{i}", last.0, last.1));
    }
    let mut case = vec![add];
    for q in 0..40 {
        let count = 3 + q % 28;
        let order = if q % 2 == 0 { "DESC" } else { "ASC" };
        case.push(format!(
            "GEORADIUSBYMEMBER s m{} 40000 km COUNT {count} {order}",
            (q * 13) % 100
        ));
        case.push(format!(
            "GEOSEARCH s FROMMEMBER m{} BYBOX 30000 20000 mi COUNT {count} {order}",
            (q * 7) % 100
        ));
    }
    let refs: Vec<&str> = case.iter().map(String::as_str).collect();
    compare(&[&refs]);
}

#[test]
fn deprecated_radius_forms() {
    compare_both(&[&[
        SICILY,
        "GEORADIUS Sicily 15 37 200 km",
        "GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC",
        "GEORADIUS Sicily 15 37 200 km COUNT 1 DESC WITHDIST",
        "GEORADIUS Sicily 15 37 200 km COUNT 1 ANY",
        "GEORADIUS Sicily 15 37 200000 M",
        "GEORADIUS_RO Sicily 15 37 200 km WITHDIST ASC",
        "GEORADIUS_RO Sicily 15 37 200 mi COUNT 2 DESC",
        "GEORADIUSBYMEMBER Sicily Palermo 200 km WITHDIST ASC",
        "GEORADIUSBYMEMBER Sicily Palermo 200 km WITHCOORD WITHHASH COUNT 3",
        "GEORADIUSBYMEMBER_RO Sicily Catania 100 km WITHDIST",
        "GEORADIUSBYMEMBER_RO Sicily Catania 1000 ft",
        "GEORADIUS Sicily 15 37 200 km STORE d",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEORADIUS Sicily 15 37 200 km STOREDIST d",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEORADIUS Sicily 15 37 200 km STORE d STOREDIST e",
        "ZRANGE e 0 -1 WITHSCORES",
        "EXISTS d",
        "GEORADIUS Sicily 15 37 200 km STOREDIST f STORE g ASC COUNT 1",
        "ZRANGE g 0 -1 WITHSCORES",
        "EXISTS f",
        "GEORADIUSBYMEMBER Sicily Palermo 200 km STORE d",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEORADIUSBYMEMBER Sicily Palermo 200 km STOREDIST d DESC COUNT 1",
        "ZRANGE d 0 -1 WITHSCORES",
        // An empty result deletes the destination; so does a missing source.
        "GEORADIUS Sicily 0 0 1 km STORE d",
        "EXISTS d",
        "SET d x",
        "GEORADIUS nokey 0 0 1 km STORE d",
        "EXISTS d",
        "GEORADIUSBYMEMBER nokey m abc km",
        "GEORADIUSBYMEMBER nokey m abc km STORE d",
        "GEORADIUS nokey 0 0 1 km",
        // The read-only forms refuse STORE.
        "GEORADIUS_RO Sicily 15 37 200 km STORE d",
        "GEORADIUSBYMEMBER_RO Sicily Palermo 200 km STOREDIST d",
    ]]);
}

#[test]
fn search_store() {
    compare_both(&[&[
        SICILY,
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km",
        "ZRANGE d 0 -1 WITHSCORES",
        "OBJECT ENCODING d",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYBOX 400 400 km STOREDIST",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYBOX 400 400 km DESC COUNT 2 STOREDIST",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 300 mi COUNT 1 ANY",
        "ZRANGE d 0 -1 WITHSCORES",
        "GEOSEARCHSTORE Sicily Sicily FROMMEMBER Palermo BYRADIUS 100 km",
        "ZRANGE Sicily 0 -1 WITHSCORES",
        "SET s v",
        "GEOSEARCHSTORE s Sicily FROMLONLAT 13 38 BYRADIUS 100 km",
        "TYPE s",
        "GEOSEARCHSTORE s Sicily FROMLONLAT 0 0 BYRADIUS 1 km",
        "EXISTS s",
        "SET s v",
        "GEOSEARCHSTORE s nokey FROMLONLAT 0 0 BYRADIUS 1 km",
        "EXISTS s",
        "GEOSEARCHSTORE s nokey FROMMEMBER x BYRADIUS 1 km",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST STOREDIST",
        "?rdb_changes_since_last_save",
    ]]);
    // A big result is stored as a skiplist.
    let mut add = String::from("GEOADD big");
    for i in 0..200 {
        add.push_str(&format!(" {} {} p{i}", i as f64 * 0.001, i as f64 * 0.001));
    }
    compare(&[&[
        &add,
        "GEOSEARCHSTORE d big FROMLONLAT 0 0 BYRADIUS 100 km",
        "OBJECT ENCODING d",
        "GEOSEARCHSTORE d big FROMLONLAT 0 0 BYRADIUS 100 km COUNT 128",
        "OBJECT ENCODING d",
        "?rdb_changes_since_last_save",
    ]]);
}

#[test]
fn errors_and_wrong_types() {
    compare_both(&[&[
        SICILY,
        "SET str v",
        "GEOADD g 200 100 m",
        "GEOADD g 1 1 a 181 0 b",
        "EXISTS g",
        "GEOADD g -180.5 0 m",
        "GEOADD g 0 -86 m",
        "GEOADD g inf 0 m",
        "GEOADD g -inf 0 m",
        "GEOADD g 1e300 1 m",
        "GEOADD g nan 0 m",
        "GEOADD g x 0 m",
        "GEOADD g 0 x m",
        "GEOADD g 1 1",
        "GEOADD g 1 1 a 2",
        "GEOADD g NX XX 1 1 a",
        "GEOADD g GT 1 1 a",
        "GEOADD g NX CH",
        "GEOADD g CH CH NX",
        "GEOADD g",
        "GEOADD str 1 1 a",
        "GEOPOS str a",
        "GEOPOS",
        "GEODIST str a b",
        "GEODIST Sicily Palermo Catania yards",
        "GEODIST nokey a b yards",
        "GEODIST Sicily Palermo Catania km extra",
        "GEODIST Sicily Palermo",
        "GEOHASH str a",
        "GEOSEARCH str FROMLONLAT 0 0 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 0 0",
        "GEOSEARCH Sicily BYRADIUS 1 km COUNT 1",
        "GeoSearch Sicily BYRADIUS 1 km WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 0 0 WITHDIST",
        "GEOSEARCH Sicily FROMLONLAT 0 0 ASC WITHHASH",
        "geosearch Sicily FROMLONLAT 0 0 ASC WITHHASH",
        "GEOSEARCHSTORE d Sicily FROMLONLAT 0 0 ASC",
        "GEOSEARCHSTORE d Sicily BYRADIUS 1 km STOREDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 0 0 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 0 0 FROMMEMBER Palermo BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT 0 0 FROMLONLAT 1 1 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km BYBOX 1 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 1 km BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km BYRADIUS 2 km",
        "GEOSEARCH Sicily FROMMEMBER Nope BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS -1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS x km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS nan km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 yd",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX -1 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 -1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX x -1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 x km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 1 yd",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 1",
        "GEOSEARCH Sicily FROMLONLAT 200 100 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMLONLAT x 0 BYRADIUS 1 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT 0",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT -1",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT x",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km ANY",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km STORE d",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km STOREDIST",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km foo",
        "GEOSEARCH nokey FROMMEMBER Palermo BYRADIUS 1 km ANY",
        "GEOSEARCH nokey FROMMEMBER Palermo",
        "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 km WITHDIST",
        "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 km WITHHASH",
        "GEOSEARCHSTORE d str FROMMEMBER Palermo BYRADIUS 1 km",
        "GEOSEARCHSTORE str Sicily FROMMEMBER Palermo BYRADIUS 1000 km",
        "TYPE str",
        "SET str v",
        "GEORADIUS Sicily 15 37 200 km STORE d WITHDIST",
        "GEORADIUS Sicily 15 37 200 km WITHCOORD STOREDIST d",
        "GEORADIUS Sicily 15 37 200 km STORE",
        "GEORADIUS Sicily 15 37 200 km FROMMEMBER Palermo",
        "GEORADIUS Sicily 15 37 200 km BYBOX 1 1 km",
        "GEORADIUS Sicily 15 37 200 yd",
        "GEORADIUS Sicily 15 37 -1 km",
        "GEORADIUS Sicily 200 37 1 km",
        "GEORADIUS nokey 200 37 1 km",
        "GEORADIUS nokey 15 37 x km",
        "GEORADIUS str 15 37 1 km",
        "GEORADIUS Sicily 15 37 200 km ANY",
        "GEORADIUS Sicily 15 37 200 km COUNT 0",
        "GEORADIUSBYMEMBER Sicily Nope 200 km",
        "GEORADIUSBYMEMBER Sicily Palermo -200 km",
        "GEORADIUSBYMEMBER Sicily Palermo 200 parsecs",
        "GEORADIUSBYMEMBER str Palermo 200 km",
        "GEORADIUSBYMEMBER_RO Sicily Palermo 200 km STORE d",
        "GEORADIUS_RO Sicily 15 37 200 km STOREDIST d",
        "GEORADIUS_RO Sicily 15 37",
    ]]);
}

#[test]
fn keyspace_events() {
    compare_events(
        "KEA",
        &[
            &[
                SICILY,
                "GEOADD Sicily 13.361389 38.115556 Palermo",
                "GEOADD Sicily XX 1 1 nope",
                "GEOADD Sicily CH 13.5 38 Palermo",
                "GEOADD Sicily 200 0 x",
                "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km",
                "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST",
                "GEORADIUS Sicily 15 37 200 km STORE d",
                "GEORADIUSBYMEMBER Sicily Palermo 200 km STOREDIST e",
                "GEOSEARCHSTORE d Sicily FROMLONLAT 0 0 BYRADIUS 1 km",
                "GEORADIUS Sicily 0 0 1 km STORE e",
                "GEORADIUS Sicily 0 0 1 km STORE e",
                "SET d v",
                "GEOSEARCHSTORE d nokey FROMLONLAT 0 0 BYRADIUS 1 km",
                "SET d v",
                "GEORADIUSBYMEMBER nokey m 1 km STORE d",
                "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km",
                "GEOPOS Sicily Palermo",
            ],
            &[
                "GEOADD z 1 1 a",
                "GEOADD z NX 2 2 a 3 3 b",
                "GEOPOS nokey a",
            ],
        ],
    );
}

#[test]
fn keyspace_hits_and_misses() {
    compare(&[&[
        SICILY,
        "GEOPOS Sicily Palermo",
        "GEOPOS nokey a",
        "GEODIST Sicily Palermo Catania",
        "GEOHASH nokey a",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 10 km",
        "GEOSEARCHSTORE d nokey FROMMEMBER Palermo BYRADIUS 10 km",
        "GEORADIUS Sicily 15 37 200 km STORE d",
        "?keyspace_hits",
        "?keyspace_misses",
    ]]);
}

#[test]
fn scripts_and_multi() {
    compare_both(&[
        &[
            "EVAL \"return redis.call('GEOADD', KEYS[1], 13.361389, 38.115556, 'Palermo', 15.087269, 37.502669, 'Catania')\" 1 g",
            "EVAL \"return redis.call('GEOPOS', KEYS[1], 'Palermo', 'nope')\" 1 g",
            "EVAL \"redis.setresp(3); return redis.call('GEOPOS', KEYS[1], 'Palermo')\" 1 g",
            "EVAL \"return redis.call('GEODIST', KEYS[1], 'Palermo', 'Catania', 'km')\" 1 g",
            "EVAL \"return redis.call('GEOHASH', KEYS[1], 'Palermo')\" 1 g",
            "EVAL \"return redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'WITHDIST', 'WITHCOORD', 'WITHHASH')\" 1 g",
            "EVAL \"return redis.call('GEOSEARCHSTORE', KEYS[2], KEYS[1], 'FROMMEMBER', 'Palermo', 'BYBOX', 400, 400, 'km', 'STOREDIST')\" 2 g d",
            "EVAL \"return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')\" 1 d",
            "EVAL \"return redis.pcall('GEOADD', KEYS[1], 200, 100, 'x')\" 1 g",
            "EVAL \"return redis.pcall('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'STORE', 'x', 'WITHDIST')\" 1 g",
            "EVAL_RO \"return redis.call('GEORADIUS_RO', KEYS[1], 15, 37, 200, 'km')\" 1 g",
            "EVAL_RO \"return redis.pcall('GEOADD', KEYS[1], 1, 1, 'x')\" 1 g",
        ],
        &[
            SICILY,
            "MULTI",
            "GEOADD Sicily 1 1 a",
            "GEOPOS Sicily a",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km WITHDIST",
            "GEORADIUS Sicily 15 37 200 km STORE d",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS -1 km",
            "ZRANGE d 0 -1",
            "EXEC",
            "MULTI",
            "GEOADD Sicily 200 1 a",
            "EXEC",
        ],
    ]);
}

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

/// A few hundred points (spread over the map, clustered around a few places, some repeated, some
/// near the poles and the antimeridian) searched many ways, every reply compared with Redis's.
#[test]
fn random_points_differential() {
    let mut rng = Lcg(0x05ee_d6e0);
    let centres = [
        (13.4, 38.1),
        (-0.12, 51.5),
        (179.9, -16.5),
        (-179.8, 65.0),
        (0.0, 84.9),
        (151.2, -33.9),
    ];
    let mut points: Vec<(f64, f64)> = Vec::new();
    for i in 0..420 {
        let p = match i % 4 {
            0 => (rng.range(-180.0, 180.0), rng.range(-85.05, 85.05)),
            3 if i % 20 == 3 => points[i / 2],
            _ => {
                let (x, y) = centres[i % centres.len()];
                let lon = (x + rng.range(-1.5, 1.5)).clamp(-180.0, 180.0);
                let lat = (y + rng.range(-1.0, 1.0)).clamp(-85.05, 85.05);
                (lon, lat)
            }
        };
        points.push(p);
    }
    let mut add = String::from("GEOADD pts");
    for (i, (lon, lat)) in points.iter().enumerate() {
        add.push_str(&format!(" {lon:.7} {lat:.7} p{i}"));
    }
    let units = ["m", "km", "ft", "mi"];
    let mut lines = vec![add, "ZCARD pts".to_string()];
    for q in 0..160 {
        let unit = units[q % 4];
        let scale = match unit {
            "m" => 1000.0,
            "ft" => 3280.84,
            "mi" => 0.621371,
            _ => 1.0,
        };
        // Radii from a few meters to half the planet, mostly near the clusters.
        let km =
            [0.05, 1.0, 20.0, 80.0, 150.0, 600.0, 3000.0, 12000.0][q % 8] * rng.range(0.5, 1.5);
        let (lon, lat) = if q % 3 == 0 {
            (rng.range(-180.0, 180.0), rng.range(-85.0, 85.0))
        } else {
            let (x, y) = centres[q % centres.len()];
            (
                (x + rng.range(-1.0, 1.0)).clamp(-180.0, 180.0),
                (y + rng.range(-0.5, 0.5)).clamp(-85.05, 85.05),
            )
        };
        let r = km * scale;
        let from = if q % 5 == 4 {
            format!("FROMMEMBER p{}", (q * 7) % points.len())
        } else {
            format!("FROMLONLAT {lon:.6} {lat:.6}")
        };
        let tail = match q % 6 {
            0 => "ASC WITHDIST".to_string(),
            1 => "DESC WITHCOORD WITHHASH".to_string(),
            2 => format!("COUNT {} WITHDIST", 1 + q % 9),
            3 => format!("COUNT {} DESC WITHDIST WITHCOORD", 2 + q % 13),
            4 => format!("COUNT {} ANY WITHDIST", 1 + q % 4),
            _ => "WITHDIST WITHHASH".to_string(),
        };
        lines.push(format!(
            "GEOSEARCH pts {from} BYRADIUS {r:.4} {unit} {tail}"
        ));
        let (w, h) = (r * rng.range(0.3, 2.0), r * rng.range(0.3, 2.0));
        lines.push(format!(
            "GEOSEARCH pts {from} BYBOX {w:.4} {h:.4} {unit} {tail}"
        ));
        if q % 4 == 0 {
            lines.push(format!(
                "GEORADIUS pts {lon:.6} {lat:.6} {r:.4} {unit} ASC WITHDIST"
            ));
            lines.push(format!(
                "GEORADIUSBYMEMBER_RO pts p{} {r:.4} {unit} COUNT 5 WITHDIST",
                q % points.len()
            ));
            lines.push(format!(
                "GEOSEARCHSTORE d pts {from} BYBOX {w:.4} {h:.4} {unit} STOREDIST"
            ));
            lines.push("ZRANGE d 0 -1 WITHSCORES".to_string());
        }
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let replies = compare(&[&refs]);
    // The queries found things: not every reply is an empty array.
    let nonempty = replies
        .iter()
        .filter(|r| r.starts_with(b"*") && r.as_slice() != b"*0\r\n")
        .count();
    assert!(nonempty > 100, "only {nonempty} non-empty replies");
}

#[test]
fn command_info_docs_and_keys() {
    let names = [
        "geoadd",
        "geopos",
        "geodist",
        "geohash",
        "georadius",
        "georadius_ro",
        "georadiusbymember",
        "georadiusbymember_ro",
        "geosearch",
        "geosearchstore",
    ];
    common::command_info_and_docs_match_redis(&names, &names);
    compare(&[&[
        "COMMAND GETKEYS GEOADD k 1 1 m",
        "COMMAND GETKEYS GEORADIUS k 15 37 200 km",
        "COMMAND GETKEYS GEORADIUS k 15 37 200 km STORE d",
        "COMMAND GETKEYS GEORADIUS k 15 37 200 km STORE d STOREDIST e",
        "COMMAND GETKEYS GEORADIUS k 15 37 200 km STOREDIST e STORE d",
        "COMMAND GETKEYS GEORADIUS k 15 37 200 km COUNT 1 STORE",
        "COMMAND GETKEYS GEORADIUSBYMEMBER k m 200 km STOREDIST d",
        "COMMAND GETKEYS GEORADIUSBYMEMBER k store 200 km WITHDIST",
        "COMMAND GETKEYS GEOSEARCHSTORE d s FROMMEMBER m BYRADIUS 1 km",
        "COMMAND GETKEYS GEOSEARCH k FROMMEMBER m BYRADIUS 1 km",
        "~COMMAND LIST FILTERBY PATTERN geo*",
        "~COMMAND LIST FILTERBY ACLCAT geo",
    ]]);
}

/// Odd inputs answer promptly and leave the server serving: huge and tiny radii, a huge COUNT,
/// infinite sizes, a big index.
#[test]
fn odd_inputs_stay_bounded() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let mut add = String::from("GEOADD g");
    for i in 0..2000 {
        add.push_str(&format!(
            " {} {} m{i}",
            (i % 360) as f64 - 179.5,
            (i % 170) as f64 - 84.5
        ));
    }
    assert_eq!(c.cmd_str(&add), b":2000\r\n");
    let all = c.cmd_str("GEOSEARCH g FROMLONLAT 0 0 BYRADIUS 1e308 km COUNT 9223372036854775807");
    assert!(
        all.starts_with(b"*2000\r\n"),
        "{}",
        common::show(&all[..20])
    );
    let any = c.cmd_str("GEOSEARCH g FROMLONLAT 0 0 BYBOX inf inf km COUNT 3 ANY");
    assert!(any.starts_with(b"*3\r\n"), "{}", common::show(&any));
    let tiny = c.cmd_str("GEOSEARCH g FROMLONLAT 0.5 0.5 BYRADIUS 4.9e-324 m");
    assert_eq!(tiny, b"*0\r\n");
    let stored = c.cmd_str("GEORADIUS g 0 0 1e308 km STORE d COUNT 1500");
    assert_eq!(stored, b":1500\r\n");
    assert_eq!(c.cmd_str("ZCARD d"), b":1500\r\n");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}
