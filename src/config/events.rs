//! Keyspace notification classes (`notify-keyspace-events`): the flags and their letters, as
//! Redis's `keyspaceEventsStringToFlags` / `keyspaceEventsFlagsToString`. They live with the
//! configuration that parses and prints them; `server::notify` publishes the events.

pub const KEYSPACE: u32 = 1 << 0; // K
pub const KEYEVENT: u32 = 1 << 1; // E
pub const GENERIC: u32 = 1 << 2; // g
pub const STRING: u32 = 1 << 3; // $
pub const LIST: u32 = 1 << 4; // l
pub const SET: u32 = 1 << 5; // s
pub const HASH: u32 = 1 << 6; // h
pub const ZSET: u32 = 1 << 7; // z
pub const EXPIRED: u32 = 1 << 8; // x
pub const EVICTED: u32 = 1 << 9; // e
pub const STREAM: u32 = 1 << 10; // t
pub const KEY_MISS: u32 = 1 << 11; // m
pub const MODULE: u32 = 1 << 13; // d
pub const NEW: u32 = 1 << 14; // n
/// `A`: every class but `m` and `n`.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// Redis's `keyspaceEventsStringToFlags`: None for a character that names no class.
pub fn parse_flags(classes: &str) -> Option<u32> {
    classes.chars().try_fold(0, |flags, c| {
        Some(
            flags
                | match c {
                    'A' => ALL,
                    'g' => GENERIC,
                    '$' => STRING,
                    'l' => LIST,
                    's' => SET,
                    'h' => HASH,
                    'z' => ZSET,
                    'x' => EXPIRED,
                    'e' => EVICTED,
                    'K' => KEYSPACE,
                    'E' => KEYEVENT,
                    't' => STREAM,
                    'm' => KEY_MISS,
                    'd' => MODULE,
                    'n' => NEW,
                    _ => return None,
                },
        )
    })
}

/// Redis's `keyspaceEventsFlagsToString`, as CONFIG GET and CONFIG REWRITE show the setting.
pub fn flags_to_string(flags: u32) -> String {
    let mut s = String::new();
    if flags & ALL == ALL {
        s.push('A');
    } else {
        let classes = [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
        ];
        s.extend(
            classes
                .iter()
                .filter(|(f, _)| flags & f != 0)
                .map(|(_, c)| c),
        );
    }
    for (f, c) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if flags & f != 0 {
            s.push(c);
        }
    }
    s
}
