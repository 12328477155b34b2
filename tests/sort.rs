//! SORT and SORT_RO: differential cases against Debian's redis-server (lists, sets and sorted
//! sets; numeric and ALPHA; LIMIT; BY and GET with string keys and hash fields; BY nosort; STORE;
//! errors; keyspace events; scripts and MULTI), in RESP2 and RESP3.
//!
//! Only replies Redis makes deterministic are compared: a set's own order (SORT ... BY nosort
//! outside a script and without STORE) is left out, and so are ties that Redis's partial sort (BY
//! with LIMIT) may order either way.

mod common;
use common::{compare, compare_both, compare_events, goblin};

#[test]
fn numeric_and_alpha_orders() {
    compare_both(&[
        &[
            "RPUSH l 3 1 2 10 -5 1.5 -0.5 1e2 +7",
            "SORT l",
            "SORT l ASC",
            "SORT l DESC",
            "SORT l ALPHA",
            "SORT l ALPHA DESC",
            "SORT l desc alpha asc",
            "SORT_RO l",
            "SORT_RO l DESC ALPHA",
            // Equal scores are ordered by the elements' bytes, reversed by DESC.
            "RPUSH t 1 1.0 01 1e0 0 -0 0.0",
            "SORT t",
            "SORT t DESC",
            "SORT t ALPHA",
            // Duplicates stay.
            "RPUSH d 2 1 2 1",
            "SORT d",
            "SORT d ALPHA DESC",
        ],
        &[
            "SADD s 5 3 9 1 -2 100",
            "SORT s",
            "SORT s DESC",
            "SORT s ALPHA",
            "SADD big 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159 160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191 192 193 194 195 196 197 198 199 200 201 202 203 204 205 206 207 208 209 210 211 212 213 214 215 216 217 218 219 220 221 222 223 224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239 240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255 256 257 258 259 260 261 262 263 264 265 266 267 268 269 270 271 272 273 274 275 276 277 278 279 280 281 282 283 284 285 286 287 288 289 290 291 292 293 294 295 296 297 298 299 300 301 302 303 304 305 306 307 308 309 310 311 312 313 314 315 316 317 318 319 320 321 322 323 324 325 326 327 328 329 330 331 332 333 334 335 336 337 338 339 340 341 342 343 344 345 346 347 348 349 350 351 352 353 354 355 356 357 358 359 360 361 362 363 364 365 366 367 368 369 370 371 372 373 374 375 376 377 378 379 380 381 382 383 384 385 386 387 388 389 390 391 392 393 394 395 396 397 398 399 400 401 402 403 404 405 406 407 408 409 410 411 412 413 414 415 416 417 418 419 420 421 422 423 424 425 426 427 428 429 430 431 432 433 434 435 436 437 438 439 440 441 442 443 444 445 446 447 448 449 450 451 452 453 454 455 456 457 458 459 460 461 462 463 464 465 466 467 468 469 470 471 472 473 474 475 476 477 478 479 480 481 482 483 484 485 486 487 488 489 490 491 492 493 494 495 496 497 498 499 500 501 502 503 504 505 506 507 508 509 510 511 512 513 514 515 516 517 518 519 520 521 522 523 524 525 526 527 528 529 530 x1 x2",
            "SREM big x1 x2",
            "SORT big LIMIT 0 5",
            "SORT big DESC LIMIT 10 5",
            "SORT big ALPHA LIMIT 100 7",
            "SADD w banana apple cherry Apple 10 9",
            "SORT w ALPHA",
            "SORT w ALPHA DESC",
        ],
        &[
            "ZADD z 3 c 1 a 2 b 2 bb 0 zz",
            "SORT z ALPHA",
            "SORT z ALPHA DESC",
            "ZADD zn 1 30 2 20 3 10 4 -1",
            "SORT zn",
            "SORT zn DESC",
            // SORT converts a small sorted set to a skiplist, as Redis does.
            "OBJECT ENCODING zn",
        ],
        &[
            "RPUSH u é e f E ü",
            "SORT u ALPHA",
            "SORT u ALPHA DESC",
            "SORT u ALPHA STORE ud",
            "LRANGE ud 0 -1",
        ],
    ]);
}

#[test]
fn limit_edges() {
    compare_both(&[&[
        "RPUSH l 5 4 3 2 1",
        "SORT l LIMIT 0 2",
        "SORT l LIMIT 1 2",
        "SORT l LIMIT 3 10",
        "SORT l LIMIT 5 1",
        "SORT l LIMIT 4 1",
        "SORT l LIMIT 100 1",
        "SORT l LIMIT -1 2",
        "SORT l LIMIT -100 -100",
        "SORT l LIMIT 2 -1",
        "SORT l LIMIT 2 -5",
        "SORT l LIMIT 0 0",
        "SORT l LIMIT 2 0",
        "SORT l LIMIT 0 9223372036854775807",
        "SORT l LIMIT 3 9223372036854775807",
        "SORT l LIMIT 9223372036854775807 9223372036854775807",
        "SORT l LIMIT -9223372036854775808 -9223372036854775808",
        "SORT l LIMIT 9223372036854775807 1",
        "SORT l DESC LIMIT 1 3",
        "SORT l ALPHA LIMIT 1 3",
        "SORT l LIMIT 0 1 LIMIT 3 1",
        "SORT l BY nosort LIMIT 1 2",
        "SORT l BY nosort DESC LIMIT 1 2",
        "SORT l BY nosort LIMIT 4 100",
        "SORT l BY nosort LIMIT 5 1",
        "SORT l BY nosort LIMIT -5 2",
        "SORT l BY nosort LIMIT 0 9223372036854775807",
        "SORT l BY nosort DESC LIMIT 2 9223372036854775807",
        "SORT nokey LIMIT 0 10",
        "SORT nokey LIMIT 9223372036854775807 9223372036854775807",
        "SORT l LIMIT 1 2 GET # GET nokey*",
        "SORT l LIMIT 10 2 GET #",
    ]]);
}

#[test]
fn by_and_get_patterns() {
    compare_both(&[
        &[
            "RPUSH l 3 1 2 10",
            "MSET w_3 30 w_1 10 w_2 20 w_10 5",
            "SORT l BY w_*",
            "SORT l BY w_* DESC",
            "SORT l BY w_* GET #",
            "SORT l BY w_* GET # GET w_*",
            "SORT l BY w_* DESC GET w_* GET #",
            "SORT l BY w_* LIMIT 1 2 GET # GET w_*",
            "SORT l BY w_* ALPHA",
            "SORT l BY w_* ALPHA DESC",
            // A missing weight is 0 (numeric) or before every value (ALPHA).
            "DEL w_10",
            "SORT l BY w_*",
            "SORT l BY w_* ALPHA",
            "SORT l BY w_* ALPHA DESC",
            // Weights of another type are missing.
            "RPUSH w_2 x",
            "SORT l BY w_* GET w_*",
            // No `*`: a GET of a fixed key names nothing; a BY of one does not sort.
            "SET fixed v",
            "SORT l GET fixed",
            "SORT l BY fixed",
            "SORT l BY fixed DESC",
            // `*` anywhere, more than one (only the first is replaced).
            "MSET 3_x a 1_x b 2_x c 10_x d",
            "SORT l GET *_x",
            "SORT l BY *_x ALPHA GET #",
            "MSET a_3_* p",
            "SORT l GET a_*_*",
            "SORT l GET #x GET # GET ##",
            "SORT l GET *",
            // A bad weight fails the sort.
            "SET w_10 notanumber",
            "SORT l BY w_*",
            "SORT l BY w_* ALPHA",
        ],
        &[
            "RPUSH l 1 2 3 4",
            "HSET h_1 f 5 g a",
            "HSET h_2 f 3 g b",
            "HSET h_3 f 4",
            "SET h_4 notahash",
            "SORT l BY h_*->f",
            "SORT l BY h_*->f GET h_*->g GET #",
            "SORT l BY h_*->f DESC GET h_*->g GET # GET h_*->f",
            "SORT l BY h_*->g ALPHA GET #",
            "SORT l BY h_*->nofield GET #",
            // `->` with nothing after it is part of the key name; before the `*` it is too.
            "SET h_1-> direct",
            "SORT l GET h_*-> GET h_*->f",
            "HSET x->h_1 f hashy",
            "SORT l GET x->h_*->f",
            "HSET k_1->x g nested",
            "SORT l GET k_*->x->g",
            "SORT l BY nosort GET h_*->g GET nothing_* GET #",
        ],
        &[
            "SADD s 3 1 2",
            "MSET w_1 3 w_2 2 w_3 1",
            "SORT s BY w_*",
            "SORT s BY w_* GET # GET w_*",
            "ZADD z 1 a 2 b 3 c",
            "MSET n_a 3 n_b 1 n_c 2",
            "SORT z BY n_*",
            "SORT z BY n_* DESC GET n_* GET #",
        ],
    ]);
}

#[test]
fn by_nosort_keeps_native_order() {
    compare_both(&[
        &[
            "RPUSH l c a b 10 2",
            "SORT l BY nosort",
            "SORT l BY nosort DESC",
            "SORT l BY nosort ALPHA",
            "SORT l BY nosort LIMIT 1 3",
            "SORT l BY nosort DESC LIMIT 1 3",
            "SORT l BY nosort GET #",
            // A BY with a `*` after a constant one does not bring sorting back.
            "SORT l BY nosort BY w_*",
            "SORT_RO l BY nosort DESC LIMIT 0 2",
        ],
        &[
            "ZADD z 3 c 1 a 2 b 2 bb 5 e",
            "SORT z BY nosort",
            "SORT z BY nosort DESC",
            "SORT z BY nosort LIMIT 1 2",
            "SORT z BY nosort DESC LIMIT 1 2",
            "SORT z BY nosort LIMIT 4 10",
            "SORT z BY nosort DESC LIMIT 4 10",
            "SORT z BY nosort LIMIT 5 1",
            "SORT z BY nosort GET # GET nokey_*",
        ],
        &[
            // A set with BY nosort is sorted (ALPHA) when stored, for a deterministic result.
            "SADD s b a c 10 9",
            "SORT s BY nosort STORE d",
            "LRANGE d 0 -1",
            "SORT s BY nosort DESC STORE d",
            "LRANGE d 0 -1",
            "SORT s BY nosort LIMIT 1 2 STORE d",
            "LRANGE d 0 -1",
            "SADD one x",
            "SORT one BY nosort",
            "SORT one BY nosort GET #",
        ],
    ]);
}

#[test]
fn store_writes_a_list() {
    compare(&[
        &[
            "RPUSH l 3 1 2",
            "SORT l STORE d",
            "LRANGE d 0 -1",
            "TYPE d",
            "OBJECT ENCODING d",
            "?rdb_changes_since_last_save",
            // Overwrites any type and drops the TTL.
            "SET str v EX 100",
            "SORT l DESC STORE str",
            "LRANGE str 0 -1",
            "TTL str",
            "HSET h f v",
            "SORT l STORE h",
            "TYPE h",
            // GET values, missing ones stored as empty strings.
            "SET w_1 one",
            "SORT l GET # GET w_* STORE d",
            "LRANGE d 0 -1",
            "?rdb_changes_since_last_save",
            // An empty result deletes the destination.
            "SORT nokey STORE d",
            "EXISTS d",
            "SORT l LIMIT 10 1 STORE str",
            "EXISTS str",
            "SORT nokey STORE nothing",
            "?rdb_changes_since_last_save",
            // The sorted key itself as destination.
            "SORT l DESC STORE l",
            "LRANGE l 0 -1",
            "SORT l BY nosort STORE l",
            "LRANGE l 0 -1",
            // STORE anywhere, the last one wins; store is a keyword only with an argument.
            "SORT l STORE a STORE b",
            "EXISTS a b",
            "SORT l STORE",
            // Nothing is stored when a score is bad.
            "RPUSH bad 1 x",
            "SORT bad STORE d2",
            "EXISTS d2",
            "SORT bad ALPHA STORE d2",
            "LRANGE d2 0 -1",
            "?rdb_changes_since_last_save",
        ],
        &[
            "ZADD z 1 a 2 b",
            "SORT z BY nosort DESC STORE d",
            "LRANGE d 0 -1",
            "SORT z BY nosort LIMIT 2 1 STORE d",
            "EXISTS d",
        ],
    ]);
}

#[test]
fn errors_and_wrong_types() {
    compare_both(&[
        &[
            "RPUSH l 1 2",
            "SORT",
            "SORT_RO",
            "SORT l foo",
            "SORT l LIMIT",
            "SORT l LIMIT 1",
            "SORT l LIMIT a 1",
            "SORT l LIMIT 1 b",
            "SORT l LIMIT 1.5 1",
            "SORT l LIMIT 1 99999999999999999999",
            "SORT l BY",
            "SORT l GET",
            "SORT l GET # BY",
            "SORT l STORE",
            "SORT l ASC DESC foo",
            "SORT_RO l STORE d",
            "EXISTS d",
            "SORT_RO l GET # STORE",
            // A syntax error comes before the key's type is checked.
            "SET str x",
            "SORT str foo",
            "SORT str LIMIT x 1",
            "SORT str",
            "SORT str BY nosort",
            "SORT_RO str ALPHA",
            "SORT str STORE d",
            "HSET h f v",
            "SORT h",
            "SORT_RO h",
            // Missing keys are empty.
            "SORT nokey",
            "SORT_RO nokey BY w_* GET #",
            "SORT nokey ALPHA DESC LIMIT 0 1",
            // A wrong-type destination is no error.
            "SORT l STORE h",
            "TYPE h",
            // Numbers that do not convert.
            "RPUSH bad 1 a",
            "SORT bad",
            "SORT bad DESC LIMIT 0 1",
            "SORT bad ALPHA",
            "SORT bad BY nosort",
            "RPUSH sp \"1 \" 2",
            "SORT sp",
            "RPUSH nan nan 1",
            "SORT nan",
            "RPUSH odd \"\" \" 1\" 0x10 inf -inf -0 2.5e1",
            "SORT odd",
            "SORT odd DESC",
        ],
        &[
            "SADD s a 1",
            "SORT s",
            "ZADD z 1 a",
            "SORT z",
            "SORT z ALPHA",
        ],
    ]);
}

/// C string functions stop at a NUL byte: ALPHA without STORE compares up to it, a score is read
/// up to it, and `*`, `->` and `#` are looked for before it (the key named keeps every byte).
#[test]
fn nul_bytes_in_elements_and_patterns() {
    compare_both(&[&[
        r#"RPUSH n "a\x00b" "a\x00a" "a" "b" "a\x00c""#,
        "SORT n ALPHA",
        "SORT n ALPHA DESC",
        "SORT n ALPHA STORE nd",
        "LRANGE nd 0 -1",
        r#"RPUSH m "1\x00abc" "0.5" "2\x00""#,
        "SORT m",
        r#"SET "w\x00x_1" 5"#,
        "RPUSH p 1 2",
        r#"SORT p GET "w\x00x_*""#,
        r#"SORT p BY "nosort\x00*""#,
        r##"SORT p GET "#\x00zz""##,
        "MSET wx_1 b wx_2 a",
        r#"SORT p BY "wx_*\x00tail" ALPHA"#,
        r#"SET "wx_1\x00tail" z"#,
        r#"SORT p BY "wx_*\x00tail" ALPHA GET "wx_*\x00tail""#,
        r#"HSET hh_1 "f\x00g" v1"#,
        r#"SORT p GET "hh_*->f\x00g""#,
    ]]);
    // The same, sent as raw bytes: a score is read up to its NUL.
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd(&[b"RPUSH", b"m", b"1\x00abc", b"0.5"]);
    assert_eq!(
        c.cmd(&[b"SORT", b"m"]),
        b"*2\r\n$3\r\n0.5\r\n$5\r\n1\x00abc\r\n"
    );
}

/// Overflow and underflow are conversion errors. (Redis reads `errno` without clearing it, so a
/// range error can also fail a later numeric sort of non-integer elements on the same server:
/// these cases come last on their own server.)
#[test]
fn out_of_range_scores() {
    compare(&[&[
        "RPUSH a 1e400 1",
        "SORT a",
        "RPUSH b -1e400",
        "SORT b",
        "RPUSH c 1e-400",
        "SORT c",
        "RPUSH d 1e-310",
        "SORT d",
        "SORT d ALPHA",
    ]]);
}

#[test]
fn scripts_sort_sets_by_nosort() {
    compare_both(&[&[
        "SADD s b a c 10 9",
        "EVAL \"return redis.call('sort', KEYS[1], 'by', 'nosort')\" 1 s",
        "EVAL \"return redis.call('sort', KEYS[1], 'by', 'nosort', 'desc')\" 1 s",
        "EVAL \"return redis.call('sort_ro', KEYS[1], 'by', 'nosort', 'limit', 1, 2)\" 1 s",
        "EVAL \"return redis.call('sort', KEYS[1], 'by', 'nosort', 'store', KEYS[2])\" 2 s d",
        "LRANGE d 0 -1",
        "EVAL_RO \"return redis.call('sort_ro', KEYS[1], 'alpha')\" 1 s",
        "EVAL_RO \"return redis.call('sort', KEYS[1], 'alpha')\" 1 s",
        "EVAL \"return redis.call('sort', KEYS[1], 'get', 'w_*')\" 1 s",
        "RPUSH l 3 1 2",
        "SET w_1 x",
        "EVAL \"return redis.call('sort', KEYS[1], 'by', 'nosort', 'get', '#', 'get', 'w_*')\" 1 l",
        "EVAL \"return redis.call('sort', KEYS[1], 'by', 'w_*', 'get', 'w_*')\" 1 l",
        "EVAL \"return redis.pcall('sort', KEYS[1], 'foo')\" 1 l",
        "EVAL \"return redis.pcall('sort_ro', KEYS[1], 'store', 'x')\" 1 l",
        "SET str x",
        "EVAL \"return redis.pcall('sort', KEYS[1])\" 1 str",
    ]]);
}

#[test]
fn inside_multi() {
    compare_both(&[&[
        "RPUSH l 3 1 2",
        "SADD s b a",
        "MULTI",
        "SORT l",
        "SORT l DESC STORE d",
        "SORT_RO d",
        "SORT s BY nosort STORE d2",
        "SORT l foo",
        "LRANGE d2 0 -1",
        "EXEC",
        "MULTI",
        "SORT_RO l STORE d",
        "EXEC",
        "WATCH d",
        "SORT l STORE d",
        "MULTI",
        "GET x",
        "EXEC",
    ]]);
}

#[test]
fn keyspace_events() {
    compare_events(
        "KEA",
        &[
            &[
                "RPUSH l 3 1 2",
                "SORT l STORE d",
                "SORT l DESC GET # STORE d",
                "SORT l",
                "SORT nokey STORE d",
                "SORT nokey STORE d",
                "SET str v",
                "SORT l LIMIT 5 1 STORE str",
                "SORT l STORE l",
                "SORT_RO l",
                "SORT l foo STORE d",
                "SET x v",
                "SORT x STORE d",
                "RPUSH bad a",
                "SORT bad STORE d",
            ],
            &[
                "SADD s b a",
                "SORT s BY nosort STORE d",
                "ZADD z 1 a",
                "SORT z BY nosort STORE d",
            ],
        ],
    );
    // Keys the patterns name are read as any key is: a missing one is a key miss.
    compare_events(
        "KEm",
        &[&[
            "RPUSH l 2 1",
            "SET w_1 1",
            "SORT l BY w_* GET #",
            "SORT l BY nosort GET h_*->f",
            "SORT nokey",
            "SORT nokey STORE d",
        ]],
    );
}

#[test]
fn keyspace_hits_and_misses() {
    compare(&[&[
        "RPUSH l 2 1",
        "SET w_1 1",
        "SORT l BY w_* GET # GET w_*",
        "?keyspace_hits",
        "?keyspace_misses",
        "SORT l STORE d",
        "SORT nokey",
        "?keyspace_hits",
        "?keyspace_misses",
    ]]);
}

#[test]
fn command_info_docs_and_keys() {
    common::command_info_and_docs_match_redis(&["sort", "sort_ro"], &["sort", "sort_ro"]);
    compare(&[&[
        "COMMAND GETKEYS SORT k",
        "COMMAND GETKEYS SORT k STORE d",
        "COMMAND GETKEYS SORT k STORE d STORE e",
        "COMMAND GETKEYS SORT k BY store STORE d",
        "COMMAND GETKEYS SORT k GET store LIMIT 0 1 STORE e",
        "COMMAND GETKEYS SORT k LIMIT store store STORE f",
        "COMMAND GETKEYS SORT k LIMIT 1 2 STORE",
        "COMMAND GETKEYS SORT k store",
        "COMMAND GETKEYS SORT_RO k STORE d",
        "COMMAND GETKEYS SORT_RO k",
        "COMMAND GETKEYS SORT",
        "~COMMAND LIST FILTERBY PATTERN sort*",
    ]]);
}

/// Huge LIMIT values and many GET patterns on a big list answer promptly, sized by the list.
#[test]
fn huge_limits_stay_bounded() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let mut push = String::from("RPUSH l");
    for i in 0..1000 {
        push.push_str(&format!(" {i}"));
    }
    c.cmd_str(&push);
    let r = c.cmd_str("SORT l LIMIT 999 9223372036854775807");
    assert_eq!(r, b"*1\r\n$3\r\n999\r\n");
    let r = c.cmd_str("SORT l DESC LIMIT -9223372036854775808 2 GET # GET nokey_*");
    assert_eq!(r, b"*4\r\n$3\r\n999\r\n$-1\r\n$3\r\n998\r\n$-1\r\n");
    let r = c.cmd_str("SORT l BY nosort LIMIT 9223372036854775807 9223372036854775807 STORE d");
    assert_eq!(r, b":0\r\n");
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
}
