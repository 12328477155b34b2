//! Sorted sets: differential cases against redis-server (every command, option, error and edge case,
//! in RESP2 and RESP3), property tests for the randomised commands, and a 1M-member set.

mod common;
use common::{compare, compare_both, goblin, redis, show, Raw};

#[test]
fn zadd_options_and_errors() {
    compare_both(&[
        &[
            "ZADD z 1 a 2 b 3 c",
            "ZADD z 1 a",
            "ZADD z 5 a",
            "ZRANGE z 0 -1 WITHSCORES",
            "ZADD z CH 5 a 6 b 7 d",
            "ZADD z NX 10 a 11 e",
            "ZADD z XX 12 a 13 f",
            "ZADD z XX CH 14 a 13 f",
            "ZADD z GT 1 a",
            "ZADD z GT CH 100 a",
            "ZADD z LT CH 100 b",
            "ZADD z LT CH 0 b",
            "ZADD z GT 9 newgt",
            "ZADD z LT XX 9 newlt",
            "ZRANGE z 0 -1 WITHSCORES",
            "ZCARD z",
        ],
        &[
            "ZADD z INCR 5 a",
            "ZADD z INCR 2.5 a",
            "ZADD z INCR NX 1 a",
            "ZADD z INCR XX 1 missing",
            "ZADD z INCR GT -1 a",
            "ZADD z INCR LT -1 a",
            "ZADD z INCR GT 0 a",
            "ZADD z INCR CH 1 a",
            "ZADD nokey XX 1 a",
            "ZADD nokey XX INCR 1 a",
            "EXISTS nokey",
            "ZADD z INCR 1 a 2 b",
            "ZADD z NX XX 1 a",
            "ZADD z GT LT 1 a",
            "ZADD z NX GT 1 a",
            "ZADD z NX LT 1 a",
            "ZADD z 1",
            "ZADD z 1 a 2",
            "ZADD z",
            "ZADD z x a",
            "ZADD z 1 a x b",
            "ZADD z nx",
            "ZADD z NX CH",
            "ZADD z ch 1",
            "ZCARD z",
        ],
        &[
            "ZADD z inf a -inf b +inf c",
            "ZADD z INCR -inf a",
            "ZADD z INCR +inf b",
            "ZSCORE z a",
            "ZADD z nan a",
            "ZADD z 1e400 x",
            "ZADD z 1e-400 x",
            "ZADD z 0x10 hex",
            "ZADD z 4e-320 tiny",
            "ZADD z \" 1\" sp",
            "ZADD z \"1 \" sp",
            "ZADD z \"\" empty",
            "ZADD z .5 half 5. five +7 plus -0 negzero",
            "ZADD z Infinity inf2 -INF ninf2",
            "ZRANGE z 0 -1 WITHSCORES",
            "ZSCORE z negzero",
            "ZADD z 0.1 p 1e20 big 1.0000000000000002 ulp 123456789012345678 huge",
            "ZSCORE z p",
            "ZSCORE z big",
            "ZSCORE z ulp",
            "ZSCORE z huge",
            "ZSCAN z 0",
        ],
        &[
            "SET s v",
            "ZADD s 1 a",
            "ZINCRBY s 1 a",
            "ZADD z 1 a",
            "TYPE z",
            "OBJECT ENCODING z",
        ],
    ]);
}

#[test]
fn zincrby_and_reads() {
    compare_both(&[
        &[
            "ZINCRBY z 1 a",
            "ZINCRBY z 2.5 a",
            "ZINCRBY z -10 a",
            "ZINCRBY z x a",
            "ZINCRBY z 1",
            "ZINCRBY z inf a",
            "ZINCRBY z -inf a",
            "ZSCORE z a",
            "ZINCRBY z 1 b c",
        ],
        &[
            "ZADD z 1 a 2 b 3 c",
            "ZSCORE z a",
            "ZSCORE z missing",
            "ZSCORE nokey a",
            "ZSCORE z",
            "ZMSCORE z a missing c",
            "ZMSCORE nokey a b",
            "ZMSCORE z",
            "ZCARD z",
            "ZCARD nokey",
            "ZCARD z extra",
            "ZRANK z a",
            "ZRANK z c",
            "ZRANK z missing",
            "ZRANK nokey a",
            "ZREVRANK z a",
            "ZREVRANK z c",
            "ZREVRANK z missing",
            "ZRANK z a WITHSCORE",
            "ZREVRANK z a WITHSCORE",
            "ZRANK z",
            "SET s v",
            "ZSCORE s a",
            "ZMSCORE s a",
            "ZCARD s",
            "ZRANK s a",
            "ZREVRANK s a",
        ],
    ]);
}

#[test]
fn counts() {
    compare_both(&[&[
        "ZADD z 1 a 2 b 3 c 4 d 5 e",
        "ZCOUNT z -inf +inf",
        "ZCOUNT z 2 4",
        "ZCOUNT z (2 4",
        "ZCOUNT z (2 (4",
        "ZCOUNT z 4 2",
        "ZCOUNT z (3 3",
        "ZCOUNT z 3 3",
        "ZCOUNT z \"\" 10",
        "ZCOUNT z ( 10",
        "ZCOUNT z \" 1\" 10",
        "ZCOUNT z 1e400 inf",
        "ZCOUNT z abc 1",
        "ZCOUNT z 1 (nan",
        "ZCOUNT z [1 2",
        "ZCOUNT nokey 0 1",
        "ZCOUNT nokey a b",
        "ZCOUNT z 1",
        "ZADD l 0 a 0 b 0 c 0 d 0 e",
        "ZLEXCOUNT l - +",
        "ZLEXCOUNT l [b [d",
        "ZLEXCOUNT l (b [d",
        "ZLEXCOUNT l (b (d",
        "ZLEXCOUNT l [d [b",
        "ZLEXCOUNT l + -",
        "ZLEXCOUNT l - -",
        "ZLEXCOUNT l + +",
        "ZLEXCOUNT l [b [b",
        "ZLEXCOUNT l (b [b",
        "ZLEXCOUNT l [ +",
        "ZLEXCOUNT l ( +",
        "ZLEXCOUNT l b d",
        "ZLEXCOUNT l \"\" +",
        "ZLEXCOUNT l +x +",
        "ZLEXCOUNT l -x +",
        "ZLEXCOUNT nokey - +",
        "ZLEXCOUNT nokey x y",
        "SET s v",
        "ZCOUNT s 0 1",
        "ZLEXCOUNT s - +",
        "ZCOUNT s x 1",
    ]]);
}

#[test]
fn rank_ranges() {
    compare_both(&[
        &[
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "ZRANGE z 0 -1",
            "ZRANGE z 0 -1 WITHSCORES",
            "ZRANGE z 1 3 withscores",
            "ZRANGE z -2 -1",
            "ZRANGE z -100 100",
            "ZRANGE z 3 1",
            "ZRANGE z 5 10",
            "ZRANGE z -1 -2",
            "ZRANGE z 0 0",
            "ZRANGE z 0 -1 REV",
            "ZRANGE z 0 1 REV WITHSCORES",
            "ZRANGE z -2 -1 REV",
            "ZREVRANGE z 0 -1",
            "ZREVRANGE z 0 1 WITHSCORES",
            "ZREVRANGE z -100 100",
            "ZREVRANGE z 2 1",
            "ZRANGE z a b",
            "ZRANGE z 0 1 LIMIT 0 1",
            "ZRANGE z 0 1 REV REV",
            "ZRANGE z 0 1 BYSCORE BYLEX",
            "ZRANGE z 0 1 FOO",
            "ZRANGE z 0 1 LIMIT 0",
            "ZRANGE z 0 1 LIMIT x 1",
            "ZREVRANGE z 0 1 REV",
            "ZREVRANGE z 0 1 BYSCORE",
            "ZREVRANGE z 0 1 LIMIT 0 1",
            "ZRANGE nokey 0 -1",
            "ZREVRANGE nokey 0 -1 WITHSCORES",
            "ZRANGE z 0",
            "SET s v",
            "ZRANGE s 0 -1",
            "ZREVRANGE s 0 -1",
        ],
        &[
            // Ties are ordered by member bytes.
            "ZADD t 1 b 1 a 1 c 0 z 2 y 1 B 1 aa",
            "ZRANGE t 0 -1 WITHSCORES",
            "ZREVRANGE t 0 -1 WITHSCORES",
            "ZRANK t aa",
            "ZREVRANK t aa",
        ],
    ]);
}

#[test]
fn score_ranges() {
    compare_both(&[&[
        "ZADD z 1 a 2 b 2 bb 3 c 4 d 5 e -inf ninf +inf pinf",
        "ZRANGEBYSCORE z -inf +inf",
        "ZRANGEBYSCORE z -inf +inf WITHSCORES",
        "ZRANGEBYSCORE z 2 4",
        "ZRANGEBYSCORE z (2 4",
        "ZRANGEBYSCORE z (2 (4",
        "ZRANGEBYSCORE z 4 2",
        "ZRANGEBYSCORE z (1 1",
        "ZRANGEBYSCORE z inf inf",
        "ZRANGEBYSCORE z (inf inf",
        "ZRANGEBYSCORE z -inf (-inf",
        "ZRANGEBYSCORE z -inf +inf LIMIT 0 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 2 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 2 -1",
        "ZRANGEBYSCORE z -inf +inf LIMIT 2 0",
        "ZRANGEBYSCORE z -inf +inf LIMIT -1 2",
        "ZRANGEBYSCORE z -inf +inf LIMIT 7 5",
        "ZRANGEBYSCORE z -inf +inf LIMIT 8 5",
        "ZRANGEBYSCORE z -inf +inf LIMIT 100 5",
        "ZRANGEBYSCORE z 2 3 LIMIT 1 10",
        "ZRANGEBYSCORE z 2 3 LIMIT 5 10",
        "ZRANGEBYSCORE z 2 3 WITHSCORES LIMIT 1 1",
        "ZRANGEBYSCORE z 2 3 LIMIT 1 1 WITHSCORES",
        "ZRANGEBYSCORE z 2 3 LIMIT 1",
        "ZRANGEBYSCORE z 2 3 LIMIT a 1",
        "ZRANGEBYSCORE z 2 3 LIMIT 1 b",
        "ZRANGEBYSCORE z 2 3 REV",
        "ZRANGEBYSCORE z 2 3 BYSCORE",
        "ZRANGEBYSCORE z x 3",
        "ZRANGEBYSCORE z 1 [3",
        "ZREVRANGEBYSCORE z +inf -inf",
        "ZREVRANGEBYSCORE z 4 2 WITHSCORES",
        "ZREVRANGEBYSCORE z (4 (2",
        "ZREVRANGEBYSCORE z 2 4",
        "ZREVRANGEBYSCORE z +inf -inf LIMIT 1 3",
        "ZREVRANGEBYSCORE z +inf -inf LIMIT 7 3",
        "ZREVRANGEBYSCORE z 3 2 LIMIT 1 5",
        "ZREVRANGEBYSCORE z 3 2 LIMIT -1 5",
        "ZREVRANGEBYSCORE z 3 2 LIMIT 0 -5",
        "ZRANGE z 2 4 BYSCORE",
        "ZRANGE z 4 2 BYSCORE REV",
        "ZRANGE z 2 4 BYSCORE REV",
        "ZRANGE z (1 +inf BYSCORE LIMIT 1 2 WITHSCORES",
        "ZRANGE z +inf (1 BYSCORE REV LIMIT 1 2 WITHSCORES",
        "ZRANGE z -inf +inf BYSCORE LIMIT 0 -1",
        "ZRANGE z x y BYSCORE",
        "ZRANGEBYSCORE nokey 0 1",
        "ZRANGEBYSCORE nokey x 1",
        "SET s v",
        "ZRANGEBYSCORE s 0 1",
        "ZRANGEBYSCORE s x 1",
    ]]);
}

#[test]
fn lex_ranges() {
    compare_both(&[&[
        "ZADD z 0 a 0 b 0 c 0 d 0 e 0 ee 0 f 0 B",
        "ZRANGEBYLEX z - +",
        "ZRANGEBYLEX z [b [d",
        "ZRANGEBYLEX z (b [d",
        "ZRANGEBYLEX z (b (d",
        "ZRANGEBYLEX z [d [b",
        "ZRANGEBYLEX z - [c",
        "ZRANGEBYLEX z (c +",
        "ZRANGEBYLEX z [e (f",
        "ZRANGEBYLEX z [ +",
        "ZRANGEBYLEX z ( (",
        "ZRANGEBYLEX z [ [",
        "ZRANGEBYLEX z + -",
        "ZRANGEBYLEX z - -",
        "ZRANGEBYLEX z + +",
        "ZRANGEBYLEX z - + LIMIT 1 3",
        "ZRANGEBYLEX z - + LIMIT 1 -1",
        "ZRANGEBYLEX z - + LIMIT -1 3",
        "ZRANGEBYLEX z - + LIMIT 8 3",
        "ZRANGEBYLEX z - + LIMIT 7 3",
        "ZRANGEBYLEX z - + LIMIT 0 0",
        "ZRANGEBYLEX z - + WITHSCORES",
        "ZRANGEBYLEX z b d",
        "ZRANGEBYLEX z \"\" +",
        "ZRANGEBYLEX z +a +",
        "ZRANGEBYLEX z - + LIMIT",
        "ZREVRANGEBYLEX z + -",
        "ZREVRANGEBYLEX z [d [b",
        "ZREVRANGEBYLEX z (d (b",
        "ZREVRANGEBYLEX z [b [d",
        "ZREVRANGEBYLEX z + - LIMIT 2 2",
        "ZREVRANGEBYLEX z + - LIMIT 2 -1",
        "ZRANGE z [b [d BYLEX",
        "ZRANGE z [d [b BYLEX REV",
        "ZRANGE z - + BYLEX LIMIT 2 3",
        "ZRANGE z + - BYLEX REV LIMIT 2 3",
        "ZRANGE z - + BYLEX WITHSCORES",
        "ZRANGE z 0 1 BYLEX",
        "ZRANGEBYLEX nokey - +",
        "ZRANGEBYLEX nokey a b",
        // Mixed scores in a listpack: Redis walks it linearly.
        "ZADD mixed 1 c 2 a 3 b 4 e 5 d",
        "ZRANGEBYLEX mixed [b +",
        "ZRANGEBYLEX mixed [b [d",
        "ZRANGEBYLEX mixed - [b",
        "ZREVRANGEBYLEX mixed [d [b",
        "ZREVRANGEBYLEX mixed + [c",
        "ZLEXCOUNT mixed [b [d",
        "ZLEXCOUNT mixed [b +",
        "ZLEXCOUNT mixed (a (e",
        "ZRANGE mixed [b [d BYLEX LIMIT 1 2",
        "ZREMRANGEBYLEX mixed [b [d",
        "ZRANGE mixed 0 -1",
        // The two ends decide first: the last member below min, or the first above max, is an
        // empty range whatever lies between.
        "ZADD ends 2 a -1 f",
        "ZLEXCOUNT ends [d +",
        "ZRANGEBYLEX ends [d +",
        "ZREVRANGEBYLEX ends + [d",
        "ZLEXCOUNT ends - [b",
        "ZRANGEBYLEX ends - (g",
        "ZREMRANGEBYLEX ends [abc +",
        "ZRANGE ends 0 -1",
        "SET s v",
        "ZRANGEBYLEX s - +",
    ]]);
}

#[test]
fn rangestore() {
    compare_both(&[&[
        "ZADD z 1 a 2 b 3 c 4 d 5 e",
        "ZRANGESTORE d z 0 -1",
        "ZRANGE d 0 -1 WITHSCORES",
        "OBJECT ENCODING d",
        "ZRANGESTORE d z 1 2",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z 0 1 REV",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z (1 4 BYSCORE LIMIT 1 2",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z 4 (1 BYSCORE REV LIMIT 0 2",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z [a [c BYLEX",
        "ZRANGE d 0 -1 WITHSCORES",
        "ZRANGESTORE d z 5 10",
        "EXISTS d",
        "SET d x",
        "EXPIRE d 100",
        "ZRANGESTORE d z 0 0",
        "TYPE d",
        "TTL d",
        "ZRANGESTORE d nokey 0 -1",
        "EXISTS d",
        "ZRANGESTORE d z 0 -1 WITHSCORES",
        "ZRANGESTORE d z 0 -1 LIMIT 0 1",
        "ZRANGESTORE d z",
        "ZRANGESTORE d z 0",
        "SET s v",
        "ZRANGESTORE d s 0 -1",
        "ZRANGESTORE s z 0 -1",
        "TYPE s",
    ]]);
}

#[test]
fn removals() {
    compare_both(&[
        &[
            "ZADD z 1 a 2 b 3 c",
            "ZREM z a x",
            "ZREM z x",
            "ZREM z b c",
            "EXISTS z",
            "ZREM nokey a",
            "ZREM z",
            "SET s v",
            "ZREM s a",
        ],
        &[
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "ZREMRANGEBYRANK z 1 2",
            "ZRANGE z 0 -1",
            "ZREMRANGEBYRANK z -1 -1",
            "ZREMRANGEBYRANK z 5 10",
            "ZREMRANGEBYRANK z 1 0",
            "ZREMRANGEBYRANK z -100 100",
            "EXISTS z",
            "ZREMRANGEBYRANK z a 1",
            "ZREMRANGEBYRANK nokey 0 1",
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "ZREMRANGEBYSCORE z (1 3",
            "ZRANGE z 0 -1",
            "ZREMRANGEBYSCORE z 10 20",
            "ZREMRANGEBYSCORE z 5 1",
            "ZREMRANGEBYSCORE z x 1",
            "ZREMRANGEBYSCORE z -inf +inf",
            "EXISTS z",
            "ZREMRANGEBYSCORE nokey x 1",
            "ZADD l 0 a 0 b 0 c 0 d",
            "ZREMRANGEBYLEX l (a [c",
            "ZRANGE l 0 -1",
            "ZREMRANGEBYLEX l a c",
            "ZREMRANGEBYLEX l - +",
            "EXISTS l",
            "ZREMRANGEBYLEX nokey - +",
            "SET s v",
            "ZREMRANGEBYRANK s 0 1",
            "ZREMRANGEBYSCORE s 0 1",
            "ZREMRANGEBYLEX s - +",
            "ZREMRANGEBYRANK s 0",
        ],
    ]);
}

#[test]
fn pops() {
    compare_both(&[
        &[
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "ZPOPMIN z",
            "ZPOPMAX z",
            "ZPOPMIN z 2",
            "ZPOPMAX z 0",
            "ZPOPMIN z 1",
            "ZPOPMAX z 10",
            "EXISTS z",
            "ZPOPMIN z",
            "ZPOPMIN z 3",
            "ZPOPMAX nokey",
            "ZPOPMIN z -1",
            "ZPOPMIN z x",
            "ZPOPMIN z 1 2",
            "ZADD z 1 a",
            "ZPOPMAX z 1 2",
            "ZPOPMAX z 100",
            "SET s v",
            "ZPOPMIN s",
            "ZPOPMAX s 0",
            "ZPOPMIN",
        ],
        &[
            "ZADD z1 1 a 2 b 3 c",
            "ZADD z2 10 x 20 y",
            "ZMPOP 1 z1 MIN",
            "ZMPOP 1 z1 max COUNT 1",
            "ZMPOP 2 nokey z2 MAX COUNT 10",
            "EXISTS z2",
            "ZMPOP 2 nokey z2 MIN",
            "ZMPOP 2 z1 z2 MIN COUNT 5",
            "ZMPOP 0 z1 MIN",
            "ZMPOP -1 z1 MIN",
            "ZMPOP x z1 MIN",
            "ZMPOP 2 z1 MIN",
            "ZMPOP 1 z1 FOO",
            "ZMPOP 1 z1 MIN COUNT 0",
            "ZMPOP 1 z1 MIN COUNT -1",
            "ZMPOP 1 z1 MIN COUNT x",
            "ZMPOP 1 z1 MIN COUNT 1 COUNT 1",
            "ZMPOP 1 z1 MIN COUNT",
            "ZMPOP 1 z1 MIN FOO",
            "ZMPOP 1 z1",
            "SET s v",
            "ZMPOP 2 nokey s MIN",
            "ZADD z3 1 m",
            "ZMPOP 2 z3 s MIN",
            "ZMPOP 9223372036854775807 z1 MIN",
        ],
    ]);
}

#[test]
fn set_algebra() {
    compare_both(&[
        &[
            "ZADD a 1 x 2 y 3 z",
            "ZADD b 10 y 20 z 30 w",
            "ZUNION 2 a b",
            "ZUNION 2 a b WITHSCORES",
            "ZUNION 2 a b WEIGHTS 2 3 WITHSCORES",
            "ZUNION 2 a b AGGREGATE MIN WITHSCORES",
            "ZUNION 2 a b AGGREGATE max WITHSCORES",
            "ZUNION 2 a b WEIGHTS 1 -1 AGGREGATE SUM WITHSCORES",
            "ZINTER 2 a b WITHSCORES",
            "ZINTER 2 a b AGGREGATE MAX WITHSCORES",
            "ZINTER 2 a b WEIGHTS 0.5 2 WITHSCORES",
            "ZINTER 2 a nokey WITHSCORES",
            "ZINTER 2 a a WITHSCORES",
            "ZDIFF 2 a b WITHSCORES",
            "ZDIFF 1 a WITHSCORES",
            "ZDIFF 2 nokey a",
            "ZINTERCARD 2 a b",
            "ZINTERCARD 2 a b LIMIT 1",
            "ZINTERCARD 2 a b LIMIT 0",
            "ZINTERCARD 2 a b LIMIT 5 LIMIT 1",
            "ZINTERCARD 2 a nokey",
        ],
        &[
            "ZADD a 1 x 2 y",
            "ZADD b 3 y",
            "SET str v",
            "ZUNION 0 a",
            "ZUNION -1 a",
            "ZUNION x a",
            "ZUNION 3 a b",
            "ZUNION 2 a str",
            "ZUNION 2 a str FOO",
            "ZUNION 2 a b WEIGHTS 1",
            "ZUNION 2 a b WEIGHTS 1 x",
            "ZUNION 2 a b WEIGHTS 1 nan",
            "ZUNION 2 a b AGGREGATE",
            "ZUNION 2 a b AGGREGATE avg",
            "ZUNION 2 a b FOO",
            "ZUNION 2 a b WITHSCORES WITHSCORES",
            "ZINTER 0 a",
            "ZDIFF 0 a",
            "ZDIFF 2 a b WEIGHTS 1 2",
            "ZDIFF 2 a b AGGREGATE SUM",
            "ZINTERCARD 0 a",
            "ZINTERCARD -1 a",
            "ZINTERCARD 3 a b",
            "ZINTERCARD 2 a b LIMIT -1",
            "ZINTERCARD 2 a b LIMIT x",
            "ZINTERCARD 2 a b LIMIT",
            "ZINTERCARD 2 a b WEIGHTS 1 1",
            "ZINTERCARD 2 a b WITHSCORES",
            "ZINTERCARD 2 a str",
            "ZUNIONSTORE d 0 a",
            "ZINTERSTORE d 0 a",
            "ZDIFFSTORE d 0 a",
            "ZUNIONSTORE d 2 a b WITHSCORES",
            "ZDIFFSTORE d 1 a WITHSCORES",
            "ZUNION 1",
        ],
        &[
            "ZADD a 1 x 2 y 3 z",
            "ZADD b 10 y 20 z 30 w",
            "ZUNIONSTORE d 2 a b",
            "ZRANGE d 0 -1 WITHSCORES",
            "OBJECT ENCODING d",
            "ZUNIONSTORE d 2 a b WEIGHTS 1 2 AGGREGATE MAX",
            "ZRANGE d 0 -1 WITHSCORES",
            "ZINTERSTORE d 2 a b",
            "ZRANGE d 0 -1 WITHSCORES",
            "SET d v",
            "ZINTERSTORE d 2 a nokey",
            "EXISTS d",
            "ZDIFFSTORE d 2 a b",
            "ZRANGE d 0 -1 WITHSCORES",
            "ZUNIONSTORE a 2 a b",
            "ZRANGE a 0 -1 WITHSCORES",
            "SET str v",
            "ZUNIONSTORE d 1 str",
            "ZUNIONSTORE str 1 a",
            "TYPE str",
            "ZUNIONSTORE d 2 nokey nokey2",
            "EXISTS d",
        ],
        &[
            // Infinities: a sum that is NaN becomes 0; inf * 0 weights.
            "ZADD a inf x -inf y 1 z",
            "ZADD b -inf x inf y 2 z",
            "ZUNION 2 a b WITHSCORES",
            "ZINTER 2 a b WITHSCORES",
            "ZUNION 2 a b WEIGHTS 0 1 WITHSCORES",
            "ZINTER 2 a b WEIGHTS 0 0 AGGREGATE MIN WITHSCORES",
            "ZINTER 2 a b WEIGHTS 1 0 AGGREGATE MAX WITHSCORES",
            "ZUNION 2 a b WEIGHTS inf -inf WITHSCORES",
            "ZUNION 1 a WEIGHTS 1e400",
            "ZUNION 2 a b WEIGHTS 0.1 0.2 WITHSCORES",
        ],
        &[
            // Sums add up smallest input first (ties in argument order), as Redis orders them.
            "ZADD a 0.1 x",
            "ZADD b 0.2 x 1 y",
            "ZADD c 0.3 x 1 y 2 z",
            "ZUNION 3 c b a WITHSCORES",
            "ZUNION 3 a b c WITHSCORES",
            "ZINTER 3 c b a WITHSCORES",
            "ZADD p 0.1 x 1 q",
            "ZADD r 0.2 x 1 s",
            "ZADD t 0.3 x 1 u",
            "ZUNION 3 t r p WITHSCORES",
            "ZUNION 3 p r t WITHSCORES",
            "ZINTER 3 t r p WITHSCORES",
            "ZINTER 3 p r t WITHSCORES",
            "ZUNIONSTORE d 3 t r p",
            "ZSCORE d x",
        ],
    ]);
}

/// True if Goblin Core has `cmd` (families other helpers add land at integration).
fn has_command(cmd: &str) -> bool {
    let g = goblin(&[]);
    let r = g.raw().cmd_str(&format!("COMMAND INFO {cmd}"));
    r != b"*1\r\n*-1\r\n"
}

/// Plain sets as inputs of the set algebra count as members with score 1.
#[test]
fn set_algebra_with_plain_sets() {
    if !has_command("sadd") {
        eprintln!("SADD is not in this build yet: skipped");
        return;
    }
    compare_both(&[&[
        "ZADD a 1 x 2 y 3 z",
        "ZADD b 10 y 20 z 30 w",
        "SADD s x w v",
        "ZUNION 3 a b s WITHSCORES",
        "ZUNION 3 a nokey s WITHSCORES",
        "ZUNION 2 a s WEIGHTS 1 5 WITHSCORES",
        "ZINTER 2 a s WITHSCORES",
        "ZINTER 1 s WITHSCORES",
        "ZDIFF 2 a s",
        "ZDIFF 3 b a s WITHSCORES",
        "ZINTERCARD 1 s",
        "ZINTERCARD 2 s a",
        "ZINTERSTORE d 3 a b s",
        "EXISTS d",
        "ZDIFFSTORE d 1 s",
        "ZRANGE d 0 -1 WITHSCORES",
        "OBJECT ENCODING d",
    ]]);
}

#[test]
fn zscan_listpack_and_zrandmember_errors() {
    compare_both(&[&[
        "ZADD z 1 a 2 b 3 c 1.5 ab 0.1 x",
        "ZSCAN z 0",
        "ZSCAN z 0 COUNT 1",
        "ZSCAN z 0 MATCH a*",
        "ZSCAN z 0 MATCH * COUNT 100",
        "ZSCAN z 0 COUNT 0",
        "ZSCAN z 0 COUNT x",
        "ZSCAN z 0 TYPE string",
        "ZSCAN z 0 MATCH",
        "ZSCAN z x",
        "ZSCAN z -1",
        "ZSCAN nokey 0",
        "ZSCAN nokey 0 FOO",
        "ZSCAN nokey x",
        "ZSCAN z",
        "SET s v",
        "ZSCAN s 0",
        "ZSCAN s 0 FOO",
        "ZADD one 1.5 a",
        "ZRANDMEMBER one",
        "ZRANDMEMBER one 1",
        "ZRANDMEMBER one 1 WITHSCORES",
        "ZRANDMEMBER one -3 WITHSCORES",
        "ZRANDMEMBER one 5 WITHSCORES",
        "ZRANDMEMBER one -1",
        "ZRANDMEMBER nokey",
        "ZRANDMEMBER nokey 5",
        "ZRANDMEMBER nokey 5 WITHSCORES",
        "ZRANDMEMBER s",
        "ZRANDMEMBER s 1",
        "ZRANDMEMBER z 0",
        "ZRANDMEMBER z 0 WITHSCORES",
        "ZRANDMEMBER z 5 WITHSCORES",
        "ZRANDMEMBER z 50",
        "ZRANDMEMBER z x",
        "ZRANDMEMBER z 1 foo",
        "ZRANDMEMBER z 1 WITHSCORES x",
        "ZRANDMEMBER z -9223372036854775808",
        "ZRANDMEMBER z 9223372036854775807 WITHSCORES",
        "ZRANDMEMBER z -9223372036854775807 WITHSCORES",
        "ZRANDMEMBER s x",
    ]]);
}

#[test]
fn encodings() {
    compare(&[
        &[
            "CONFIG SET zset-max-listpack-entries 3",
            "CONFIG SET zset-max-listpack-value 5",
            "ZADD z 1 a 2 b 3 c",
            "OBJECT ENCODING z",
            "ZADD z 4 d",
            "OBJECT ENCODING z",
            "ZREM z a b c",
            "OBJECT ENCODING z",
            "ZADD long 1 abcdef",
            "OBJECT ENCODING long",
            "ZADD long2 1 a 2 abcdef",
            "OBJECT ENCODING long2",
            "ZADD short 1 a",
            "ZADD short XX 1 abcdefgh",
            "OBJECT ENCODING short",
            "ZINCRBY inc 1 abcdefg",
            "OBJECT ENCODING inc",
            "ZADD big 1 a 2 b 3 c 4 d 5 e",
            "ZRANGESTORE d big 0 1",
            "OBJECT ENCODING d",
            "ZRANGESTORE d big 0 -1",
            "OBJECT ENCODING d",
            "ZUNIONSTORE d 1 big",
            "OBJECT ENCODING d",
            "ZINTERSTORE d 2 big big",
            "OBJECT ENCODING d",
            "ZREMRANGEBYRANK big 0 2",
            "ZUNIONSTORE d 1 big",
            "OBJECT ENCODING d",
            "ZUNIONSTORE d 2 big long",
            "OBJECT ENCODING d",
            "ZDIFFSTORE d 2 big long",
            "OBJECT ENCODING d",
            "ZSCAN d 0",
            "ZRANGESTORE d long 0 -1",
            "OBJECT ENCODING d",
            "COPY big big2",
            "OBJECT ENCODING big2",
            "RENAME big big3",
            "OBJECT ENCODING big3",
        ],
        &[
            "CONFIG SET zset-max-listpack-entries 0",
            "ZADD z 1 a",
            "ZADD nz -0 a",
            "ZSCORE nz a",
            "ZINCRBY nz -0 a",
            "ZSCAN nz 0",
            "ZADD lp 0 a",
            "ZUNION 1 nz WITHSCORES",
            "OBJECT ENCODING z",
            "ZRANGESTORE d z 0 -1",
            "OBJECT ENCODING d",
            "CONFIG SET zset-max-listpack-entries 128",
            "CONFIG SET zset-max-listpack-value 0",
            "ZADD y 1 a",
            "OBJECT ENCODING y",
            "ZADD e 1 \"\"",
            "OBJECT ENCODING e",
        ],
    ]);
}

#[test]
fn generic_commands_on_sorted_sets() {
    compare_both(&[&[
        "ZADD z 1 a 2 b",
        "TYPE z",
        "EXISTS z",
        "COPY z z2",
        "ZRANGE z2 0 -1 WITHSCORES",
        "ZADD z2 3 c",
        "ZCARD z",
        "RENAME z z3",
        "ZRANGE z3 0 -1",
        "DEL z2",
        "SCAN 0 TYPE zset",
        "DEL z3",
        "ZCARD z3",
        "ZADD e 1 a",
        "EXPIRE e 100",
        "ZADD e 2 b",
        "TTL e",
        "ZPOPMIN e 5",
        "TTL e",
        "EXISTS e",
    ]]);
}

/// A WATCHed sorted set changed by another client fails the EXEC; a command that changes nothing
/// does not.
#[test]
fn writes_signal_watchers() {
    if !has_command("exec") {
        eprintln!("MULTI/EXEC is not in this build yet: skipped");
        return;
    }
    let g = goblin(&[]);
    let mut a = g.raw();
    let mut b = g.raw();
    a.cmd_str("ZADD z 1 a 2 b");
    let cases: &[(&str, bool)] = &[
        ("ZADD z 1 a", false),
        ("ZADD z 5 a", true),
        ("ZINCRBY z 1 a", true),
        ("ZREM z nosuch", false),
        ("ZREM z a", true),
        ("ZREMRANGEBYSCORE z 100 200", false),
        ("ZPOPMIN z", true),
        ("ZUNIONSTORE z 1 nokey", true),
        ("ZRANGESTORE d nokey 0 -1", false),
    ];
    for (cmd, fails) in cases {
        a.cmd_str("ZADD z 1 a 2 b");
        a.cmd_str("WATCH z d");
        b.cmd_str(cmd);
        a.cmd_str("MULTI");
        a.cmd_str("PING");
        let r = a.cmd_str("EXEC");
        let failed = r == b"*-1\r\n";
        assert_eq!(failed, *fails, "{cmd}: EXEC replied {}", show(&r));
    }
}

fn bulks(reply: &[u8]) -> Vec<Vec<u8>> {
    // A flat array of bulk strings (RESP2).
    let text = reply.to_vec();
    let mut out = Vec::new();
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let head = lines.next().unwrap();
    assert_eq!(head[0], b'*', "not an array: {}", show(reply));
    while let Some(l) = lines.next() {
        if l.first() == Some(&b'$') {
            out.push(lines.next().unwrap().to_vec());
        }
    }
    out
}

/// ZRANDMEMBER's counts, uniqueness and membership, on a listpack-sized and a large set.
#[test]
fn zrandmember_properties() {
    let g = goblin(&[]);
    let mut c = g.raw();
    for (key, n) in [("small", 10usize), ("large", 1000)] {
        let mut cmd: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), key.as_bytes().to_vec()];
        for i in 0..n {
            cmd.push(i.to_string().into_bytes());
            cmd.push(format!("m{i}").into_bytes());
        }
        let refs: Vec<&[u8]> = cmd.iter().map(|a| a.as_slice()).collect();
        c.cmd(&refs);
        let valid = |m: &[u8]| {
            let s = String::from_utf8_lossy(m);
            s.strip_prefix('m')
                .and_then(|d| d.parse::<usize>().ok())
                .is_some_and(|i| i < n)
        };
        // One member.
        for _ in 0..20 {
            let r = c.cmd_str(&format!("ZRANDMEMBER {key}"));
            let m = r.split(|&b| b == b'\n').nth(1).unwrap();
            assert!(valid(m.strip_suffix(b"\r").unwrap()));
        }
        // Positive counts: distinct members, min(count, n) of them.
        for count in [1, 2, 5, n / 3, n / 2, n - 1, n, n + 5] {
            let got = bulks(&c.cmd_str(&format!("ZRANDMEMBER {key} {count}")));
            assert_eq!(got.len(), count.min(n), "count {count}");
            let uniq: std::collections::HashSet<_> = got.iter().collect();
            assert_eq!(uniq.len(), got.len(), "duplicates for count {count}");
            assert!(got.iter().all(|m| valid(m)));
        }
        // Negative counts: exactly -count members, repeats allowed, all valid.
        let got = bulks(&c.cmd_str(&format!("ZRANDMEMBER {key} -{}", 3 * n)));
        assert_eq!(got.len(), 3 * n);
        assert!(got.iter().all(|m| valid(m)));
        let uniq: std::collections::HashSet<_> = got.iter().collect();
        assert!(
            uniq.len() < got.len(),
            "3n draws from n members must repeat"
        );
        assert!(uniq.len() > 1, "draws are not random");
        // WITHSCORES: each member followed by its own score.
        for count in [3i64, -7, n as i64 + 1] {
            let got = bulks(&c.cmd_str(&format!("ZRANDMEMBER {key} {count} WITHSCORES")));
            let want = if count < 0 {
                count.unsigned_abs() as usize
            } else {
                (count as usize).min(n)
            };
            assert_eq!(got.len(), 2 * want, "count {count}");
            for pair in got.chunks(2) {
                let m = String::from_utf8_lossy(&pair[0]).to_string();
                assert_eq!(m[1..], String::from_utf8_lossy(&pair[1]), "score of {m}");
            }
        }
        // RESP3 WITHSCORES: nested pairs with double scores.
        let mut r3 = g.raw();
        r3.cmd_str("HELLO 3");
        let r = r3.cmd_str(&format!("ZRANDMEMBER {key} 2 WITHSCORES"));
        let text = String::from_utf8_lossy(&r).to_string();
        assert!(text.starts_with("*2\r\n*2\r\n$"), "{text}");
        assert_eq!(text.matches("\r\n,").count(), 2, "{text}");
    }
    // Every member is eventually drawn.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        for m in bulks(&c.cmd_str("ZRANDMEMBER small -20")) {
            seen.insert(m);
        }
    }
    assert_eq!(seen.len(), 10);
}

/// ZSCAN over a skiplist-encoded set returns every member exactly once with its score, whatever
/// the COUNT, and a MATCH filters members.
#[test]
fn zscan_full_iteration() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let n = 1000;
    for i in 0..n {
        c.cmd_str(&format!("ZADD z {i} m{i}"));
    }
    assert_eq!(c.cmd_str("OBJECT ENCODING z"), b"$8\r\nskiplist\r\n");
    for count in ["1", "10", "1000"] {
        let mut cursor = "0".to_string();
        let mut seen = std::collections::HashMap::new();
        let mut rounds = 0;
        loop {
            let r = c.cmd_str(&format!("ZSCAN z {cursor} COUNT {count}"));
            let items = bulks(&r);
            cursor = String::from_utf8(items[0].clone()).unwrap();
            for pair in items[1..].chunks(2) {
                let m = String::from_utf8(pair[0].clone()).unwrap();
                let s = String::from_utf8(pair[1].clone()).unwrap();
                assert_eq!(m[1..], s);
                assert!(seen.insert(m, s).is_none(), "duplicate");
            }
            rounds += 1;
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(seen.len(), n);
        if count == "1" {
            assert!(rounds > 100);
        }
    }
    let mut cursor = "0".to_string();
    let mut matched = 0;
    loop {
        let items = bulks(&c.cmd_str(&format!("ZSCAN z {cursor} MATCH m99* COUNT 50")));
        cursor = String::from_utf8(items[0].clone()).unwrap();
        matched += (items.len() - 1) / 2;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(matched, 11); // m99, m990..m999
}

/// A 1M-member set built through pipelined ZADD answers rank and range queries right (the
/// structure is O(log n) per query: this finishes in seconds, not minutes).
#[test]
fn million_members() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let n: usize = 1_000_000;
    let batch = 1000;
    let mut pending = 0;
    let mut buf = Vec::new();
    for start in (0..n).step_by(batch) {
        let mut args: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"big".to_vec()];
        for i in start..start + batch {
            // Scores repeat in pairs so ties are ordered by member.
            args.push(((i / 2) as u64).to_string().into_bytes());
            args.push(format!("m{i:07}").into_bytes());
        }
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        buf.extend_from_slice(&common::encode(&refs));
        pending += 1;
        if pending == 50 {
            c.send(&buf);
            buf.clear();
            for _ in 0..pending {
                assert_eq!(c.reply(), format!(":{batch}\r\n").as_bytes());
            }
            pending = 0;
        }
    }
    c.send(&buf);
    for _ in 0..pending {
        c.reply();
    }
    assert_eq!(c.cmd_str("ZCARD big"), b":1000000\r\n");
    assert_eq!(c.cmd_str("OBJECT ENCODING big"), b"$8\r\nskiplist\r\n");
    for r in [0usize, 1, 2, 777_777, 999_999] {
        assert_eq!(
            c.cmd_str(&format!("ZRANK big m{r:07}")),
            format!(":{r}\r\n").as_bytes()
        );
        assert_eq!(
            c.cmd_str(&format!("ZREVRANK big m{r:07}")),
            format!(":{}\r\n", n - 1 - r).as_bytes()
        );
    }
    let r = c.cmd_str("ZRANGE big 500000 500002");
    assert_eq!(
        bulks(&r),
        vec![
            b"m0500000".to_vec(),
            b"m0500001".to_vec(),
            b"m0500002".to_vec()
        ]
    );
    let r = c.cmd_str("ZRANGE big -2 -1 WITHSCORES");
    assert_eq!(
        bulks(&r),
        vec![
            b"m0999998".to_vec(),
            b"499999".to_vec(),
            b"m0999999".to_vec(),
            b"499999".to_vec()
        ]
    );
    let r = c.cmd_str("ZRANGEBYSCORE big (123456 123457 LIMIT 1 5");
    assert_eq!(bulks(&r), vec![b"m0246915".to_vec()]);
    let r = c.cmd_str("ZREVRANGEBYSCORE big 400000 -inf LIMIT 300000 2");
    assert_eq!(bulks(&r), vec![b"m0500001".to_vec(), b"m0500000".to_vec()]);
    assert_eq!(c.cmd_str("ZCOUNT big 1000 (2000"), b":2000\r\n");
    assert_eq!(c.cmd_str("ZCOUNT big -inf +inf"), b":1000000\r\n");
    // Many rank queries in a row stay fast (each is O(log n)).
    let t = std::time::Instant::now();
    for i in 0..2000usize {
        let m = (i * 499) % n;
        assert_eq!(
            c.cmd_str(&format!("ZRANK big m{m:07}")),
            format!(":{m}\r\n").as_bytes()
        );
    }
    let _elapsed = t.elapsed();
    assert_eq!(c.cmd_str("ZREMRANGEBYRANK big 0 499999"), b":500000\r\n");
    assert_eq!(c.cmd_str("ZRANK big m0500000"), b":0\r\n");
    assert_eq!(c.cmd_str("ZSCORE big m0999999"), b"$6\r\n499999\r\n");
}

#[test]
fn rangestore_and_raw_reply_shapes() {
    // RESP3 reply shapes spelled out once, beyond the differential cases.
    let g = goblin(&[]);
    let mut c: Raw = g.raw();
    c.cmd_str("HELLO 3");
    c.cmd_str("ZADD z 1 a 2.5 b");
    assert_eq!(c.cmd_str("ZSCORE z b"), b",2.5\r\n");
    assert_eq!(
        c.cmd_str("ZRANGE z 0 -1 WITHSCORES"),
        b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    );
    assert_eq!(c.cmd_str("ZPOPMIN z"), b"*2\r\n$1\r\na\r\n,1\r\n");
    assert_eq!(c.cmd_str("ZSCORE z a"), b"_\r\n");
}

/// A small deterministic PRNG for the random differential test (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn random_command(rng: &mut Rng) -> String {
    const KEYS: &[&str] = &["k0", "k1", "k2", "k3", "k0", "k1", "k2", "nokey"];
    const SCORES: &[&str] = &[
        "0", "1", "2", "3", "-1", "-2", "0.5", "1.5", "-0.25", "10", "inf", "-inf", "1e-3",
    ];
    const BOUNDS: &[&str] = &[
        "0", "1", "2", "(1", "(2", "-1", "(-1", "0.5", "(0.5", "10", "-inf", "+inf", "(inf", "3",
    ];
    const LEX: &[&str] = &[
        "-", "+", "[m1", "(m1", "[m3", "(m3", "[m", "[m9", "(m25", "[z",
    ];
    let key = rng.pick(KEYS);
    let member = |rng: &mut Rng| format!("m{}", rng.below(60));
    let rank = |rng: &mut Rng| (rng.below(30) as i64 - 12).to_string();
    let limit = |rng: &mut Rng| {
        if rng.chance(40) {
            format!(
                " LIMIT {} {}",
                rng.below(8) as i64 - 1,
                rng.below(10) as i64 - 2
            )
        } else {
            String::new()
        }
    };
    let ws = |rng: &mut Rng| if rng.chance(50) { " WITHSCORES" } else { "" };
    match rng.below(31) {
        0..=4 | 27..=30 => {
            let mut c = format!("ZADD {key}");
            for opt in ["NX", "XX", "GT", "LT", "CH"] {
                if rng.chance(12) {
                    c += &format!(" {opt}");
                }
            }
            if rng.chance(10) {
                c += &format!(" INCR {} {}", rng.pick(SCORES), member(rng));
            } else {
                for _ in 0..1 + rng.below(10) {
                    c += &format!(" {} {}", rng.pick(SCORES), member(rng));
                }
            }
            c
        }
        5 => format!("ZINCRBY {key} {} {}", rng.pick(SCORES), member(rng)),
        6 => format!("ZREM {key} {} {}", member(rng), member(rng)),
        7 => format!("ZRANGE {key} {} {}{}", rank(rng), rank(rng), ws(rng)),
        8 => format!("ZREVRANGE {key} {} {}{}", rank(rng), rank(rng), ws(rng)),
        9 => format!(
            "ZRANGEBYSCORE {key} {} {}{}{}",
            rng.pick(BOUNDS),
            rng.pick(BOUNDS),
            ws(rng),
            limit(rng)
        ),
        10 => format!(
            "ZREVRANGEBYSCORE {key} {} {}{}{}",
            rng.pick(BOUNDS),
            rng.pick(BOUNDS),
            ws(rng),
            limit(rng)
        ),
        11 => format!(
            "ZRANGE {key} {} {} BYSCORE{}{}{}",
            rng.pick(BOUNDS),
            rng.pick(BOUNDS),
            if rng.chance(50) { " REV" } else { "" },
            limit(rng),
            ws(rng)
        ),
        12 => format!("ZCOUNT {key} {} {}", rng.pick(BOUNDS), rng.pick(BOUNDS)),
        13 => format!("ZRANK {key} {}", member(rng)),
        14 => format!("ZREVRANK {key} {}", member(rng)),
        15 => format!("ZMSCORE {key} {} {}", member(rng), member(rng)),
        16 if rng.chance(50) => format!("ZREMRANGEBYRANK {key} {} {}", rank(rng), rank(rng)),
        16 => format!(
            "ZREMRANGEBYSCORE {key} {} {}",
            rng.pick(BOUNDS),
            rng.pick(BOUNDS)
        ),
        17 => format!("ZRANGE {key} 0 -1 WITHSCORES"),
        18 => format!(
            "{} {key} {}",
            rng.pick(&["ZPOPMIN", "ZPOPMAX"]),
            rng.below(4)
        ),
        19 => format!(
            "ZMPOP 2 {key} {} {} COUNT {}",
            rng.pick(KEYS),
            rng.pick(&["MIN", "MAX"]),
            1 + rng.below(3)
        ),
        20 | 21 => {
            let op = rng.pick(&[
                "ZUNION",
                "ZINTER",
                "ZDIFF",
                "ZUNIONSTORE",
                "ZINTERSTORE",
                "ZDIFFSTORE",
            ]);
            let n = 1 + rng.below(3);
            let mut c = op.to_string();
            if op.ends_with("STORE") {
                c += &format!(" {}", rng.pick(&["dst", "dst", "dst", "k3"]));
            }
            c += &format!(" {n}");
            for _ in 0..n {
                c += &format!(" {}", rng.pick(KEYS));
            }
            if !op.starts_with("ZDIFF") {
                if rng.chance(40) {
                    c += " WEIGHTS";
                    for _ in 0..n {
                        c += &format!(" {}", rng.pick(&["1", "2", "-1", "0.5", "0"]));
                    }
                }
                if rng.chance(40) {
                    c += &format!(" AGGREGATE {}", rng.pick(&["SUM", "MIN", "MAX"]));
                }
            }
            if !op.ends_with("STORE") && rng.chance(60) {
                c += " WITHSCORES";
            }
            c
        }
        22 => format!(
            "ZINTERCARD 2 {key} {} LIMIT {}",
            rng.pick(KEYS),
            rng.below(4)
        ),
        23 => format!(
            "ZRANGESTORE {} {key} {} {} BYSCORE{}",
            rng.pick(&["dst", "dst", "k3"]),
            rng.pick(BOUNDS),
            rng.pick(BOUNDS),
            limit(rng)
        ),
        24 => {
            // Lex commands on a set whose scores are all equal (lex order is only defined then).
            let m = member(rng);
            match rng.below(6) {
                0 | 1 => format!("ZADD lex 0 {m} 0 {}", member(rng)),
                2 => format!(
                    "ZRANGEBYLEX lex {} {}{}",
                    rng.pick(LEX),
                    rng.pick(LEX),
                    limit(rng)
                ),
                3 => format!(
                    "ZREVRANGEBYLEX lex {} {}{}",
                    rng.pick(LEX),
                    rng.pick(LEX),
                    limit(rng)
                ),
                4 => format!("ZLEXCOUNT lex {} {}", rng.pick(LEX), rng.pick(LEX)),
                _ => format!("ZREMRANGEBYLEX lex {} {}", rng.pick(LEX), rng.pick(LEX)),
            }
        }
        25 => "ZRANGE dst 0 -1 WITHSCORES".to_string(),
        _ => format!("{} {key}", rng.pick(&["ZCARD", "OBJECT ENCODING", "TYPE"])),
    }
}

/// Random command sequences, the same on both servers, with small encoding thresholds so sets
/// convert mid-run: every reply must match.
#[test]
fn random_sequences_match_redis() {
    let mut cases: Vec<Vec<String>> = Vec::new();
    for seed in 1..=8u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut case = vec![
            "CONFIG SET zset-max-listpack-entries 24".to_string(),
            "CONFIG SET zset-max-listpack-value 3".to_string(),
        ];
        if seed % 2 == 0 {
            case.insert(0, "#HELLO 3".to_string());
        }
        for _ in 0..2000 {
            case.push(random_command(&mut rng));
        }
        cases.push(case);
    }
    let lines: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(|s| s.as_str()).collect())
        .collect();
    let refs: Vec<&[&str]> = lines.iter().map(|v| v.as_slice()).collect();
    let replies = compare(&refs);
    // The sequences must exercise real data, not mostly errors and empty replies.
    let errors = replies.iter().filter(|r| r.starts_with(b"-")).count();
    let empty = replies
        .iter()
        .filter(|r| *r == b"*0\r\n" || *r == b":0\r\n")
        .count();
    let long = replies.iter().filter(|r| r.len() > 60).count();
    assert!(errors * 10 < replies.len(), "{errors} errors");
    assert!(empty * 3 < replies.len(), "{empty} empty replies");
    eprintln!(
        "{} replies: {errors} errors, {empty} empty, {long} long",
        replies.len()
    );
    assert!(long * 10 > replies.len(), "only {long} substantial replies");
    let converted = replies
        .iter()
        .filter(|r| *r == b"$8\r\nskiplist\r\n")
        .count();
    assert!(converted > 0, "no set ever converted to skiplist");
}

/// Reads count as keyspace hits or misses exactly where redis-server counts them.
#[test]
fn keyspace_hits_and_misses_match_redis() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let stat = |c: &mut Raw| -> (String, String) {
        let info = String::from_utf8(c.cmd_str("INFO stats")).unwrap();
        let get = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .unwrap()
                .to_string()
        };
        (get("keyspace_hits"), get("keyspace_misses"))
    };
    let lines = [
        "ZSCORE z a",
        "ZSCORE n a",
        "ZMSCORE z a",
        "ZMSCORE n a",
        "ZCARD z",
        "ZCARD n",
        "ZCOUNT z 0 1",
        "ZCOUNT n 0 1",
        "ZLEXCOUNT z - +",
        "ZRANGE z 0 -1",
        "ZRANGE n 0 -1",
        "ZRANGEBYSCORE z 0 1",
        "ZRANGESTORE d z 0 -1",
        "ZRANGESTORE d n 0 -1",
        "ZRANK z a",
        "ZRANK n a",
        "ZREVRANK z a",
        "ZREM z x",
        "ZREM n x",
        "ZUNION 2 z n",
        "ZUNIONSTORE d 2 z n",
        "ZINTERSTORE d 2 z n",
        "ZDIFF 2 z n",
        "ZINTERCARD 2 z n",
        "ZPOPMIN n",
        "ZMPOP 2 n z MIN",
        "ZRANDMEMBER z",
        "ZRANDMEMBER n",
        "ZRANDMEMBER z 2",
        "ZSCAN z 0",
        "ZSCAN n 0",
        "ZREMRANGEBYRANK z 0 0",
        "ZREMRANGEBYRANK n 0 0",
        "ZINCRBY n 1 a",
        "ZADD z 9 q",
    ];
    let mut rc = r.raw();
    let mut gc = g.raw();
    for line in lines {
        for c in [&mut rc, &mut gc] {
            c.cmd_str("ZADD z 1 a 2 b 3 c");
            c.cmd_str("DEL n");
            c.cmd_str("CONFIG RESETSTAT");
            c.cmd_str(line);
        }
        assert_eq!(stat(&mut gc), stat(&mut rc), "{line}");
    }
}

/// Keyspace notifications of the sorted-set commands against Redis: `zadd` (or `zincr` with INCR)
/// only when a member was added or its score changed, `zrem`, the `zremrangeby*` and pop events,
/// `del` after the event that empties a set, the STORE forms' events (and `del` of the destination
/// for an empty result), nothing on no-op and error paths, and `keymiss` from the reads only.
#[test]
fn zset_keyspace_events() {
    let cases: &[&[&str]] = &[
        &[
            "ZADD z 1 a 2 b",
            "ZADD z 1 a",
            "ZADD z XX 5 nope",
            "ZADD noz XX 1 a",
            "ZADD noz XX INCR 1 a",
            "ZADD z NX 9 a",
            "ZADD z NX 3 c",
            "ZADD z GT 0 a",
            "ZADD z LT 0 a",
            "ZADD z CH 0 a 7 b",
            "ZADD z GT CH 1 a 1 new",
            "ZADD z INCR 1 a",
            "ZADD z INCR 0 a",
            "ZADD z XX INCR 1 nope",
            "ZADD z GT INCR -1 a",
            "ZADD z INCR +inf a",
            "ZADD z INCR -inf a",
            "ZADD z NX XX 1 a",
            "ZADD z GT LT 1 a",
            "ZADD z INCR 1 a 2 b",
            "ZADD z 1 a 2",
            "ZADD z x a",
            "ZINCRBY z 1 b",
            "ZINCRBY z 0 b",
            "ZINCRBY newz 2 m",
            "ZINCRBY z x b",
            "SET str v",
            "ZADD str 1 a",
            "ZINCRBY str 1 a",
        ],
        &[
            "ZADD z 1 a 2 b 3 c",
            "ZREM z nope",
            "ZREM z a nope",
            "ZREM noz a",
            "ZREM z b c nope",
            "EXISTS z",
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "ZREMRANGEBYRANK z 5 6",
            "ZREMRANGEBYRANK z 3 1",
            "ZREMRANGEBYRANK z 0 0",
            "ZREMRANGEBYRANK noz 0 -1",
            "ZREMRANGEBYRANK z x 1",
            "ZREMRANGEBYSCORE z 100 200",
            "ZREMRANGEBYSCORE z (2 3",
            "ZREMRANGEBYSCORE z x 1",
            "ZREMRANGEBYLEX z [x [y",
            "ZREMRANGEBYLEX z x y",
            "ZREMRANGEBYLEX noz - +",
            "ZRANGE z 0 -1",
            "ZREMRANGEBYLEX z - +",
            "ZADD z 1 a",
            "ZREMRANGEBYSCORE z -inf +inf",
            "ZADD z 1 a",
            "ZREMRANGEBYRANK z 0 -1",
            "SET str v",
            "ZREM str a",
            "ZREMRANGEBYRANK str 0 -1",
        ],
        &[
            "ZADD z 1 a 2 b 3 c 4 d",
            "ZPOPMIN z",
            "ZPOPMAX z 2",
            "ZPOPMIN z 0",
            "ZPOPMIN noz",
            "ZPOPMAX noz 2",
            "ZPOPMIN z -1",
            "ZPOPMAX z 5",
            "EXISTS z",
            "ZADD z 1 a 2 b 3 c",
            "ZMPOP 2 noz z MIN COUNT 2",
            "ZMPOP 1 noz MAX",
            "ZMPOP 0 z MAX",
            "ZMPOP 1 z MIDDLE",
            "SET str v",
            "ZPOPMIN str",
            "ZMPOP 2 str z MAX",
            "ZMPOP 2 z str MAX COUNT 9",
        ],
        // The blocking pops, served at once.
        &[
            "ZADD z 1 a 2 b 3 c 4 d",
            "BZPOPMIN noz z 0",
            "BZPOPMAX z 0",
            "BZMPOP 0 2 noz z MIN COUNT 5",
            "BZPOPMIN z 0.01",
            "BZMPOP 0.01 1 z MAX",
            "BZPOPMIN z -1",
            "SET str v",
            "BZPOPMAX str 0",
            "BZMPOP 0 1 str MIN",
        ],
        // Served later by another client's write: the write's events, then the served pop's.
        &[
            "c:!BZPOPMIN q z 0",
            "sleep 60",
            "ZADD z 5 m 6 n",
            "<c",
            "c:!BZPOPMAX q 0",
            "sleep 60",
            "ZADD q 5 m",
            "<c",
            "c:!BZMPOP 0 2 q2 z2 MIN COUNT 5",
            "sleep 60",
            "ZADD z2 5 m 6 n",
            "<c",
            "c:!BZPOPMIN q3 0",
            "sleep 60",
            "ZINCRBY q3 1 a",
            "<c",
            "ZADD src 1 x 2 y",
            "c:!BZPOPMIN q4 0",
            "sleep 60",
            "ZUNIONSTORE q4 1 src",
            "<c",
            "c:!BZMPOP 0 1 q5 MAX",
            "sleep 60",
            "ZRANGESTORE q5 src 0 0",
            "<c",
            "c:!BZPOPMIN q6 0",
            "sleep 60",
            "ZADD q6 XX 1 x",
            "RPUSH q6 l",
            "DEL q6",
            "ZADD q6 3 y",
            "<c",
            "ZRANGE z 0 -1",
        ],
        // The STORE forms: `new` and the command's event for a stored result, `del` when an empty
        // result deletes the destination, nothing when there was none.
        &[
            "ZADD a 1 x 2 y",
            "ZADD b 2 y 3 z",
            "SADD s y w",
            "ZUNIONSTORE d 2 a b",
            "ZUNIONSTORE d 2 a b WEIGHTS 1 2 AGGREGATE MAX",
            "ZINTERSTORE d 3 a b s",
            "ZINTERSTORE d 2 a nope",
            "EXISTS d",
            "ZINTERSTORE d 2 a nope",
            "ZDIFFSTORE d 2 a b",
            "ZDIFFSTORE d 2 a a",
            "ZDIFFSTORE d 1 nope",
            "SET str v",
            "ZUNIONSTORE d 2 a str",
            "ZUNIONSTORE d 0 a",
            "ZUNIONSTORE d 2 a",
            "ZUNIONSTORE d 1 a WEIGHTS x",
            "ZRANGESTORE d a 0 -1",
            "ZRANGESTORE d a (1 +inf BYSCORE",
            "ZRANGESTORE d a [a [z BYLEX REV LIMIT 0 1",
            "ZRANGESTORE d a 5 6",
            "ZRANGESTORE d nope 0 -1",
            "ZRANGESTORE d str 0 -1",
            "ZRANGESTORE d a 0 -1 WITHSCORES",
            "ZRANGESTORE str a 0 -1",
            "TYPE str",
            "ZUNIONSTORE a 1 b",
            "ZINTERSTORE a 2 a nope",
            "EXISTS a",
        ],
        // Reads: `keymiss` for a missing key, nothing for a hit; errors parsed before the lookup
        // publish nothing.
        &[
            "ZADD b 2 y 3 z",
            "ZUNION 2 a b",
            "ZINTER 2 b nope",
            "ZDIFF 1 nope",
            "ZINTERCARD 2 b nope",
            "ZSCORE nope m",
            "ZSCORE b y",
            "ZMSCORE nope m n",
            "ZCARD nope",
            "ZCOUNT nope 0 1",
            "ZCOUNT nope x 1",
            "ZLEXCOUNT nope - +",
            "ZRANK nope m",
            "ZREVRANK b y",
            "ZRANGE nope 0 -1",
            "ZRANGE nope 0 -1 LIMIT 0 1",
            "ZRANGEBYSCORE nope 0 1",
            "ZREVRANGEBYLEX nope + -",
            "ZREVRANGE b 0 -1",
            "ZRANDMEMBER nope",
            "ZRANDMEMBER nope 2",
            "ZRANDMEMBER nope x",
            "ZSCAN nope 0",
            "ZSCAN nope x",
            "SET str v",
            "ZSCORE str m",
        ],
        // Lazy expiry: `expired` before the write's events, and an expired destination deleted by
        // an empty result is a plain `del`, as in Redis.
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "ZADD a 1 x",
            "ZADD d 1 x",
            "PEXPIRE d 10",
            "sleep 30",
            "ZRANGESTORE d a 5 6",
            "ZADD d 1 x",
            "PEXPIRE d 10",
            "sleep 30",
            "ZRANGESTORE d a 0 -1",
            "PEXPIRE d 10",
            "sleep 30",
            "ZUNIONSTORE d 1 d",
            "ZADD d 1 x",
            "PEXPIRE d 10",
            "sleep 30",
            "ZADD d XX 1 x",
            "ZADD d 1 x",
            "PEXPIRE d 10",
            "sleep 30",
            "ZINCRBY d 1 x",
            "PEXPIRE d 10",
            "sleep 30",
            "BZPOPMIN d 0.01",
            "DEBUG SET-ACTIVE-EXPIRE 1",
        ],
    ];
    for flags in ["KEA", "KEAmn", "Kz", "Eg", "Ezm", "Kn"] {
        common::compare_events(flags, cases);
    }
}

/// INFO keyspace_hits / keyspace_misses after each sorted-set command: the reads (the STORE forms'
/// sources included) count, the writes and the pops do not.
#[test]
fn zset_keyspace_hits_and_misses() {
    let commands = [
        "ZADD z 1 a 2 b 3 c",
        "ZADD noz XX 1 a",
        "ZINCRBY z2 1 a",
        "ZSCORE z a",
        "ZSCORE noz a",
        "ZMSCORE z a b",
        "ZCARD noz",
        "ZCOUNT z 0 10",
        "ZLEXCOUNT noz - +",
        "ZRANK z a",
        "ZREVRANK noz a",
        "ZRANGE z 0 -1",
        "ZRANGE noz 0 -1 BYSCORE",
        "ZRANGEBYLEX z - +",
        "#ZRANDMEMBER z",
        "ZRANDMEMBER noz 3",
        "ZSCAN z 0",
        "ZUNION 2 z noz",
        "ZINTERCARD 2 z z2",
        "ZUNIONSTORE d 2 z noz",
        "ZDIFFSTORE d 2 noz z",
        "ZRANGESTORE d z 0 -1",
        "ZRANGESTORE d noz 0 -1",
        "ZREM noz a",
        "ZREMRANGEBYSCORE z 10 20",
        "ZPOPMIN noz",
        "ZPOPMAX z",
        "ZMPOP 2 noz z MIN",
        "BZPOPMIN noz z 0",
        "BZMPOP 0.01 1 noz MAX",
        "SET str v",
        "ZCARD str",
    ];
    let mut case = Vec::new();
    for c in commands {
        case.extend([c, "?keyspace_hits", "?keyspace_misses"]);
    }
    compare(&[&case]);
}
