//! Every expected output and error text below was recorded from Redis 7.0.15
//! (`redis-cli eval "return cjson.encode(...)" 0` and friends).
use super::super::test_values::*;
use super::super::Graph;
use super::*;

fn enc(g: &Graph, v: &SValue) -> Result<String, LuaErr> {
    encode(&CjsonConfig::default(), g, v).map(|b| String::from_utf8(b).unwrap())
}

fn err(m: &str) -> Result<String, LuaErr> {
    Err(LuaErr::Error(m.as_bytes().to_vec()))
}

fn int_keys(keys: &[f64]) -> (Graph, SValue) {
    table(keys.iter().map(|k| (num(*k), num(*k))).collect())
}

#[test]
fn encode_scalars() {
    let g = Graph::default();
    assert_eq!(enc(&g, &SValue::Nil), Ok("null".into()));
    assert_eq!(enc(&g, &SValue::Null), Ok("null".into()));
    assert_eq!(enc(&g, &SValue::Bool(true)), Ok("true".into()));
    assert_eq!(enc(&g, &s("")), Ok("\"\"".into()));
    assert_eq!(enc(&g, &num(-1e-300)), Ok("-1e-300".into()));
    assert_eq!(enc(&g, &num(2147483648.0)), Ok("2147483648".into()));
    assert_eq!(
        enc(&g, &SValue::Other("function")),
        err("Cannot serialise function: type not supported")
    );
    assert_eq!(
        enc(&g, &SValue::Other("thread")),
        err("Cannot serialise thread: type not supported")
    );
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(
            enc(&g, &num(bad)),
            err("Cannot serialise number: must not be NaN or Inf")
        );
    }
}

#[test]
fn encode_numbers() {
    let xs = [
        1e20,
        1.5,
        -0.0,
        -0.0,
        -1.0,
        123456789012345.0,
        12345678901234.0,
        0.1,
        1.0 / 3.0,
        1e-5,
        1e-4,
        123.456e-10,
        9007199254740992.0,
        -9223372036854775808.0,
        1e308,
        5e-324,
        1e14,
        1e15,
        0.00001234,
    ];
    let (g, t) = table(
        xs.iter()
            .enumerate()
            .map(|(i, x)| (num(i as f64 + 1.0), num(*x)))
            .collect(),
    );
    assert_eq!(
        enc(&g, &t),
        Ok("[1e+20,1.5,-0,-0,-1,1.2345678901234e+14,12345678901234,0.1,0.33333333333333,1e-05,0.0001,\
            1.23456e-08,9.007199254741e+15,-9.2233720368548e+18,1e+308,4.9406564584125e-324,1e+14,1e+15,\
            1.234e-05]"
            .into())
    );
}

#[test]
fn encode_every_byte() {
    let all: Vec<u8> = (0..=255).collect();
    let out = encode(
        &CjsonConfig::default(),
        &Graph::default(),
        &SValue::Str(all.clone()),
    )
    .unwrap();
    let mut want = b"\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\
\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f \
!\\\"#$%&'()*+,-.\\/0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\u007f"
        .to_vec();
    want.extend(0x80..=0xffu8);
    want.push(b'"');
    assert_eq!(out, want);
    // Round trip.
    let (_, v) = decode(&CjsonConfig::default(), &out).unwrap();
    assert_eq!(v, SValue::Str(all));
}

#[test]
fn encode_tables() {
    let mut g = Graph::default();
    let inner = g.add(vec![(s("a"), num(1.0))]);
    let outer = g.add(vec![
        (num(1.0), num(1.0)),
        (num(2.0), num(2.0)),
        (num(3.0), SValue::Table(inner)),
    ]);
    assert_eq!(enc(&g, &SValue::Table(outer)), Ok("[1,2,{\"a\":1}]".into()));
    let (g, t) = table(vec![]);
    assert_eq!(enc(&g, &t), Ok("{}".into()));
    let (g, t) = int_keys(&[1.0, 2.0, 4.0]);
    assert_eq!(enc(&g, &t), Ok("[1,2,null,4]".into()));
    let (g, t) = table(vec![(num(1.0), num(1.0)), (num(10.0), num(2.0))]);
    assert_eq!(
        enc(&g, &t),
        Ok("[1,null,null,null,null,null,null,null,null,2]".into())
    );
    let (g, t) = table(vec![(num(3.0), num(3.0))]);
    assert_eq!(enc(&g, &t), Ok("[null,null,3]".into()));
    let (g, t) = int_keys(&[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
    assert_eq!(
        enc(&g, &t),
        Ok("[1,null,3,null,5,null,7,null,9,null,11]".into())
    );
    let (g, t) = int_keys(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0]);
    assert_eq!(
        enc(&g, &t),
        Ok("[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,20]".into())
    );
    // Non-array keys.
    for (k, want) in [
        (0.0, "{\"0\":1}"),
        (1.5, "{\"1.5\":1}"),
        (-1.0, "{\"-1\":1}"),
        (1e10, "{\"10000000000\":1}"),
    ] {
        let (g, t) = table(vec![(num(k), num(1.0))]);
        assert_eq!(enc(&g, &t), Ok(want.into()));
    }
    // {[1e10]=1,[1]=2}: lua_next visits 1e10 first; (int)1e10 is INT_MIN, so the 1 wins.
    let (g, t) = table(vec![(num(1e10), num(1.0)), (num(1.0), num(2.0))]);
    assert_eq!(enc(&g, &t), Ok("[2]".into()));
    let (g, t) = table(vec![(num(1.0), num(1.0)), (s("a"), num(2.0))]);
    assert_eq!(enc(&g, &t), Ok("{\"1\":1,\"a\":2}".into()));
    let (g, t) = table(vec![
        (num(1.0), num(1.0)),
        (num(2.0), num(2.0)),
        (num(2.5), num(3.0)),
    ]);
    assert_eq!(enc(&g, &t), Ok("{\"1\":1,\"2\":2,\"2.5\":3}".into()));
    let mut g = Graph::default();
    let x = g.add(vec![(s("x"), SValue::Bool(true))]);
    let e = g.add(vec![]);
    let t = g.add(vec![
        (num(1.0), num(1.0)),
        (num(2.0), s("a")),
        (num(3.0), SValue::Table(x)),
        (num(4.0), SValue::Table(e)),
        (num(5.0), SValue::Null),
    ]);
    assert_eq!(
        enc(&g, &SValue::Table(t)),
        Ok("[1,\"a\",{\"x\":true},{},null]".into())
    );
}

#[test]
fn encode_errors() {
    let sparse = err("Cannot serialise table: excessively sparse array");
    for keys in [&[1.0, 11.0][..], &[2.0, 3.0, 4.0, 5.0, 12.0], &[1.0, 30.0]] {
        let (g, t) = int_keys(keys);
        assert_eq!(enc(&g, &t), sparse);
    }
    let (g, t) = table(vec![(SValue::Bool(true), num(1.0))]);
    assert_eq!(
        enc(&g, &t),
        err("Cannot serialise boolean: table key must be a number or string")
    );
    let (g, t) = table(vec![(num(f64::INFINITY), num(1.0))]);
    assert_eq!(
        enc(&g, &t),
        err("Cannot serialise number: must not be NaN or Inf")
    );
    let (g, t) = table(vec![(s("a"), SValue::Other("function"))]);
    assert_eq!(
        enc(&g, &t),
        err("Cannot serialise function: type not supported")
    );
}

#[test]
fn encode_nesting() {
    // t[1] = t and t.a = t.
    let mut g = Graph::default();
    g.add(vec![(num(1.0), SValue::Table(0))]);
    g.add(vec![(s("a"), SValue::Table(1))]);
    assert_eq!(
        enc(&g, &SValue::Table(0)),
        err("Cannot serialise, excessive nesting (1001)")
    );
    assert_eq!(
        enc(&g, &SValue::Table(1)),
        err("Cannot serialise, excessive nesting (1001)")
    );
    // 1000 nested tables encode, 1001 do not.
    for (levels, ok) in [(1000, true), (1001, false)] {
        let mut g = Graph::default();
        for i in 0..levels {
            let pairs = if i + 1 < levels {
                vec![(num(1.0), SValue::Table(i + 1))]
            } else {
                vec![]
            };
            g.add(pairs);
        }
        let r = enc(&g, &SValue::Table(0));
        if ok {
            assert_eq!(
                r.unwrap(),
                format!("{}{{}}{}", "[".repeat(999), "]".repeat(999))
            );
        } else {
            assert_eq!(r, err("Cannot serialise, excessive nesting (1001)"));
        }
    }
}

#[test]
fn encode_raised_limits_hit_the_lua_stack() {
    // encode_max_depth(100000): the C stack limit stops cycles at 7998 (arrays) / 4000 (objects).
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            let cfg = CjsonConfig {
                encode_max_depth: 100000,
                ..CjsonConfig::default()
            };
            let mut g = Graph::default();
            g.add(vec![(num(1.0), SValue::Table(0))]);
            g.add(vec![(s("a"), SValue::Table(1))]);
            fn e<T>(m: &str) -> Result<T, LuaErr> {
                Err(LuaErr::Error(m.into()))
            }
            assert_eq!(
                encode(&cfg, &g, &SValue::Table(0)),
                e("Cannot serialise, excessive nesting (7998)")
            );
            assert_eq!(
                encode(&cfg, &g, &SValue::Table(1)),
                e("Cannot serialise, excessive nesting (4000)")
            );
            let cfg = CjsonConfig {
                decode_max_depth: 100000,
                ..CjsonConfig::default()
            };
            let r = decode(&cfg, "[".repeat(9000).as_bytes()).map(|_| ());
            assert_eq!(
                r,
                e("Found too many nested data structures (7999) at character 7999")
            );
            let r = decode(&cfg, "{\"a\":".repeat(9000).as_bytes()).map(|_| ());
            assert_eq!(
                r,
                e("Found too many nested data structures (4000) at character 19996")
            );
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn encode_settings() {
    let mut g = Graph::default();
    let t = g.add(vec![
        (num(1.0), num(f64::NAN)),
        (num(2.0), num(f64::INFINITY)),
        (num(3.0), num(f64::NEG_INFINITY)),
        (num(4.0), num(1.5)),
    ]);
    let t = SValue::Table(t);
    let mut cfg = CjsonConfig::default();
    cfg.set_encode_invalid_numbers(&[SValue::Bool(true)])
        .unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[nan,inf,-inf,1.5]");
    cfg.set_encode_invalid_numbers(&[s("null")]).unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[null,null,null,1.5]");

    let mut cfg = CjsonConfig::default();
    let (g, t) = table(
        [std::f64::consts::PI, 1234.5, 0.0001234, 100.0]
            .iter()
            .enumerate()
            .map(|(i, x)| (num(i as f64 + 1.0), num(*x)))
            .collect(),
    );
    cfg.set_encode_number_precision(&[num(3.0)]).unwrap();
    assert_eq!(
        encode(&cfg, &g, &t).unwrap(),
        b"[3.14,1.23e+03,0.000123,100]"
    );
    let (g, t) = table(vec![
        (num(1.0), num(std::f64::consts::PI)),
        (num(2.0), num(15.0)),
        (num(3.0), num(0.05)),
    ]);
    cfg.set_encode_number_precision(&[num(1.0)]).unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[3,2e+01,0.05]");

    let (g, t) = table(vec![(num(1.0), num(1.0)), (num(11.0), num(2.0))]);
    let mut cfg = CjsonConfig::default();
    cfg.encode_sparse_array(&[SValue::Bool(true)]).unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), b"{\"1\":1,\"11\":2}");
    let (g, t) = table(vec![(num(1.0), num(1.0)), (num(13.0), num(2.0))]);
    let want = b"[1,null,null,null,null,null,null,null,null,null,null,null,2]";
    let mut cfg = CjsonConfig::default();
    cfg.encode_sparse_array(&[SValue::Bool(false), num(0.0)])
        .unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), want);
    let mut cfg = CjsonConfig::default();
    cfg.encode_sparse_array(&[SValue::Bool(false), num(2.0), num(20.0)])
        .unwrap();
    assert_eq!(encode(&cfg, &g, &t).unwrap(), want);

    let mut cfg = CjsonConfig::default();
    cfg.set_encode_max_depth(&[num(2.0)]).unwrap();
    let mut g = Graph::default();
    let a = g.add(vec![(num(1.0), num(1.0))]);
    let b = g.add(vec![(num(1.0), SValue::Table(a))]);
    let c = g.add(vec![(num(1.0), SValue::Table(b))]);
    assert_eq!(encode(&cfg, &g, &SValue::Table(b)).unwrap(), b"[[1]]");
    assert_eq!(
        encode(&cfg, &g, &SValue::Table(c)),
        Err(LuaErr::Error(
            "Cannot serialise, excessive nesting (3)".into()
        ))
    );
}

fn dec(text: &str) -> Result<(Graph, SValue), LuaErr> {
    decode(&CjsonConfig::default(), text.as_bytes())
}

fn dec_err(text: &[u8]) -> String {
    match decode(&CjsonConfig::default(), text) {
        Err(LuaErr::Error(m)) => String::from_utf8(m).unwrap(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn decode_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "{",
            "Expected object key string but found T_END at character 2",
        ),
        ("", "Expected value but found T_END at character 1"),
        (" ", "Expected value but found T_END at character 2"),
        (
            "[1,2",
            "Expected comma or array end but found T_END at character 5",
        ),
        (
            "[1 2]",
            "Expected comma or array end but found T_NUMBER at character 4",
        ),
        (
            "{\"a\" 1}",
            "Expected colon but found T_NUMBER at character 6",
        ),
        (
            "{\"a\":1 \"b\"}",
            "Expected comma or object end but found T_STRING at character 8",
        ),
        (
            "{1:2}",
            "Expected object key string but found T_NUMBER at character 2",
        ),
        ("[1,]", "Expected value but found T_ARR_END at character 4"),
        ("[,]", "Expected value but found T_COMMA at character 2"),
        ("}", "Expected value but found T_OBJ_END at character 1"),
        (
            "tru",
            "Expected value but found invalid token at character 1",
        ),
        (
            "nul",
            "Expected value but found invalid token at character 1",
        ),
        ("x", "Expected value but found invalid token at character 1"),
        ("1 2", "Expected the end but found T_NUMBER at character 3"),
        (
            "\"abc",
            "Expected value but found unexpected end of string at character 5",
        ),
        (
            "\"\\x\"",
            "Expected value but found invalid escape code at character 2",
        ),
        (
            "\"\\u12\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\uD800\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\uDC00\\uD800\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\uD800\\u0041\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\u00\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\uZZZZ\"",
            "Expected value but found invalid unicode escape code at character 2",
        ),
        (
            "\"\\",
            "Expected value but found invalid escape code at character 2",
        ),
        (
            "[1,\"x\\q\"]",
            "Expected value but found invalid escape code at character 6",
        ),
        (
            ".5",
            "Expected value but found invalid token at character 1",
        ),
        (
            "-",
            "Expected value but found invalid number at character 1",
        ),
        (
            "-x",
            "Expected value but found invalid number at character 1",
        ),
        (
            "+",
            "Expected value but found invalid number at character 1",
        ),
        (
            "+x",
            "Expected value but found invalid number at character 1",
        ),
        (
            "+-1",
            "Expected value but found invalid number at character 1",
        ),
        (
            "1e",
            "Expected the end but found invalid token at character 2",
        ),
        (
            "0x",
            "Expected the end but found invalid token at character 2",
        ),
        (
            "nan(",
            "Expected the end but found invalid token at character 4",
        ),
        (
            "infinit",
            "Expected the end but found invalid token at character 4",
        ),
        (
            "5\x0b",
            "Expected the end but found invalid token at character 2",
        ),
        (
            "[true",
            "Expected comma or array end but found T_END at character 6",
        ),
        (
            "[1}",
            "Expected comma or array end but found T_OBJ_END at character 3",
        ),
        (
            "{\"a\":1]",
            "Expected comma or object end but found T_ARR_END at character 7",
        ),
        (
            "{\"a\":}",
            "Expected value but found T_OBJ_END at character 6",
        ),
        ("{\"a\"", "Expected colon but found T_END at character 5"),
    ];
    for (text, want) in cases {
        assert_eq!(dec_err(text.as_bytes()), *want, "{text:?}");
    }
    assert_eq!(
        dec_err(b"\"a\0b\""),
        "Expected value but found unexpected end of string at character 3"
    );
    assert_eq!(
        dec_err(b"\0a"),
        "JSON parser does not support UTF-16 or UTF-32"
    );
    assert_eq!(
        dec_err(b"a\0"),
        "JSON parser does not support UTF-16 or UTF-32"
    );
    let nest = |open: &str, n: usize| dec_err(open.repeat(n).as_bytes());
    assert_eq!(
        nest("[", 1001),
        "Found too many nested data structures (1001) at character 1001"
    );
    assert_eq!(
        nest("{\"a\":", 1001),
        "Found too many nested data structures (1001) at character 5001"
    );
    assert_eq!(
        nest(" [", 1001),
        "Found too many nested data structures (1001) at character 2002"
    );
}

#[test]
fn decode_values() {
    assert_eq!(dec("null").unwrap().1, SValue::Null);
    assert_eq!(dec("true").unwrap().1, SValue::Bool(true));
    assert_eq!(dec("\t\r\n 5").unwrap().1, num(5.0));
    assert_eq!(dec("\"\\u0000\"").unwrap().1, SValue::Str(vec![0]));
    assert_eq!(dec("\"\x01\x1f\"").unwrap().1, SValue::Str(vec![1, 31]));
    assert_eq!(
        dec("\"\\u00e9\\uD83D\\uDE00\\u0041\\/\\b\\f\\n\\r\\t\\\"\\\\\"")
            .unwrap()
            .1,
        s("é😀A/\x08\x0c\n\r\t\"\\")
    );
    assert_eq!(
        decode(&CjsonConfig::default(), b"[1]\0junk")
            .unwrap()
            .0
            .tables[0],
        vec![(num(1.0), num(1.0))]
    );
    let (g, v) = dec("  [ true , false ]  ").unwrap();
    assert_eq!(v, SValue::Table(0));
    assert_eq!(
        g.tables[0],
        vec![
            (num(1.0), SValue::Bool(true)),
            (num(2.0), SValue::Bool(false))
        ]
    );
    let (g, v) = dec("{\"a\":[1,{\"b\":null}],\"c\":\"\\u20ac\"}").unwrap();
    assert_eq!(
        String::from_utf8(encode(&CjsonConfig::default(), &g, &v).unwrap()).unwrap(),
        "{\"a\":[1,{\"b\":null}],\"c\":\"€\"}"
    );
    let (g, _) = dec("{\"a\":1,\"a\":2}").unwrap();
    assert_eq!(g.tables[0], vec![(s("a"), num(2.0))]);
    let ok = dec(&format!("[{}{}", "[".repeat(999), "]".repeat(1000))).unwrap();
    assert_eq!(ok.0.tables.len(), 1000);
}

#[test]
fn decode_numbers() {
    // Values Redis printed with %.17g after cjson.decode.
    let cases: &[(&str, f64)] = &[
        ("1.5e3", 1500.0),
        ("-0", -0.0),
        ("1e400", f64::INFINITY),
        ("-1e400", f64::NEG_INFINITY),
        ("0x10", 16.0),
        ("+5", 5.0),
        ("inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("Infinity", f64::INFINITY),
        ("-Infinity", f64::NEG_INFINITY),
        ("INF", f64::INFINITY),
        ("007", 7.0),
        ("-007", -7.0),
        ("1.", 1.0),
        ("-0x1F", -31.0),
        ("1E2", 100.0),
        ("1e-400", 0.0),
        ("0x1P-2", 0.25),
        ("0x1.8p1", 3.0),
        ("0X1f", 31.0),
        ("0x.8", 0.5),
        ("-.5", -0.5),
        ("+.5", 0.5),
        ("123456789012345678901234567890", 1.2345678901234568e29),
        ("5e-324", 5e-324),
        ("1.7976931348623157e308", f64::MAX),
        ("1.7976931348623159e308", f64::INFINITY),
        ("0x1fffffffffffff1", 144115188075855856.0),
    ];
    for (text, want) in cases {
        let v = dec(text).unwrap().1;
        assert_eq!(v, num(*want), "{text}");
        if *want == 0.0 {
            assert_eq!(v, num(*want));
            let SValue::Num(x) = v else { unreachable!() };
            assert_eq!(x.is_sign_negative(), want.is_sign_negative(), "{text}");
        }
    }
    for text in ["nan", "NAN", "nAn(123)", "-nan"] {
        let SValue::Num(x) = dec(text).unwrap().1 else {
            panic!()
        };
        assert!(x.is_nan());
        assert_eq!(x.is_sign_negative(), text.starts_with('-'));
    }
    // decode_invalid_numbers(false)
    let cfg = CjsonConfig {
        decode_invalid_numbers: 0,
        ..CjsonConfig::default()
    };
    let cases: &[(&str, &str)] = &[
        (
            "0x10",
            "Expected value but found invalid number at character 1",
        ),
        (
            "+5",
            "Expected value but found invalid token at character 1",
        ),
        (
            "inf",
            "Expected value but found invalid token at character 1",
        ),
        (
            "nan",
            "Expected value but found invalid token at character 1",
        ),
        (
            "-inf",
            "Expected value but found invalid number at character 1",
        ),
        (
            "007",
            "Expected value but found invalid number at character 1",
        ),
        (
            "-007",
            "Expected value but found invalid number at character 1",
        ),
        (
            "Infinity",
            "Expected value but found invalid token at character 1",
        ),
        (
            "-",
            "Expected value but found invalid number at character 1",
        ),
        (
            "-x",
            "Expected value but found invalid number at character 1",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            decode(&cfg, text.as_bytes()).map(|_| ()),
            Err(LuaErr::Error(want.as_bytes().to_vec())),
            "{text}"
        );
    }
    assert_eq!(decode(&cfg, b"1.5").unwrap().1, num(1.5));
    assert_eq!(decode(&cfg, b"0").unwrap().1, num(0.0));
    // decode_max_depth(2)
    let cfg = CjsonConfig {
        decode_max_depth: 2,
        ..CjsonConfig::default()
    };
    let e = |t: &str| decode(&cfg, t.as_bytes()).map(|_| ());
    assert_eq!(
        e("[[[1]]]"),
        Err(LuaErr::Error(
            "Found too many nested data structures (3) at character 3".into()
        ))
    );
    assert_eq!(
        e("{\"a\":{\"b\":{}}}"),
        Err(LuaErr::Error(
            "Found too many nested data structures (3) at character 11".into()
        ))
    );
}

#[test]
fn config_functions() {
    let mut c = CjsonConfig::default();
    let arg = |n: usize, m: &str| Err(LuaErr::Arg(n, m.as_bytes().to_vec()));
    assert_eq!(c.set_encode_max_depth(&[]), Ok(vec![num(1000.0)]));
    assert_eq!(c.set_encode_max_depth(&[num(5.0)]), Ok(vec![num(5.0)]));
    assert_eq!(
        c.set_encode_max_depth(&[num(0.0)]),
        arg(1, "expected integer between 1 and 2147483647")
    );
    assert_eq!(
        c.set_encode_max_depth(&[s("x")]),
        arg(1, "number expected, got string")
    );
    assert_eq!(
        c.set_encode_max_depth(&[num(1.0), num(2.0)]),
        arg(2, "found too many arguments")
    );
    assert_eq!(c.set_encode_max_depth(&[num(2.7)]), Ok(vec![num(2.0)]));
    assert_eq!(c.set_decode_max_depth(&[]), Ok(vec![num(1000.0)]));
    assert_eq!(c.set_encode_number_precision(&[]), Ok(vec![num(14.0)]));
    assert_eq!(
        c.set_encode_number_precision(&[num(15.0)]),
        arg(1, "expected integer between 1 and 14")
    );
    assert_eq!(
        c.set_encode_number_precision(&[num(3.0)]),
        Ok(vec![num(3.0)])
    );

    let mut c = CjsonConfig::default();
    assert_eq!(
        c.encode_sparse_array(&[]),
        Ok(vec![SValue::Bool(false), num(2.0), num(10.0)])
    );
    assert_eq!(
        c.encode_sparse_array(&[SValue::Bool(true)]),
        Ok(vec![SValue::Bool(true), num(2.0), num(10.0)])
    );
    assert_eq!(
        c.encode_sparse_array(&[num(1.0)]),
        arg(1, "invalid option '1'")
    );
    assert_eq!(
        c.encode_sparse_array(&[s("on")]),
        Ok(vec![SValue::Bool(true), num(2.0), num(10.0)])
    );
    assert_eq!(
        c.encode_sparse_array(&[s("x")]),
        arg(1, "invalid option 'x'")
    );
    assert_eq!(
        c.encode_sparse_array(&[SValue::Nil, num(-1.0)]),
        arg(1, "expected integer between 0 and 2147483647")
    );
    assert_eq!(
        c.encode_sparse_array(&[SValue::Nil, num(3.0), num(4.0), num(5.0)]),
        arg(4, "found too many arguments")
    );

    let mut c = CjsonConfig::default();
    assert_eq!(c.set_encode_keep_buffer(&[]), Ok(vec![SValue::Bool(true)]));
    assert_eq!(
        c.set_encode_keep_buffer(&[SValue::Bool(false)]),
        Ok(vec![SValue::Bool(false)])
    );
    assert_eq!(
        c.set_encode_keep_buffer(&[s("on")]),
        Ok(vec![SValue::Bool(true)])
    );
    assert_eq!(
        c.set_encode_keep_buffer(&[s("off")]),
        Ok(vec![SValue::Bool(false)])
    );
    assert_eq!(
        c.set_encode_invalid_numbers(&[]),
        Ok(vec![SValue::Bool(false)])
    );
    assert_eq!(
        c.set_encode_invalid_numbers(&[s("null")]),
        Ok(vec![s("null")])
    );
    assert_eq!(
        c.set_encode_invalid_numbers(&[SValue::Bool(true)]),
        Ok(vec![SValue::Bool(true)])
    );
    assert_eq!(
        c.set_encode_invalid_numbers(&[s("maybe")]),
        arg(1, "invalid option 'maybe'")
    );
    assert_eq!(
        c.set_encode_invalid_numbers(&[num(5.0)]),
        arg(1, "invalid option '5'")
    );
    assert_eq!(
        c.set_decode_invalid_numbers(&[]),
        Ok(vec![SValue::Bool(true)])
    );
    assert_eq!(
        c.set_decode_invalid_numbers(&[s("on")]),
        Ok(vec![SValue::Bool(true)])
    );
}
