//! Access control (Redis 7.0's acl.c): users, their selectors, the rules that set them and the
//! checks the gate makes before a command runs.
//!
//! A user has flags (`on`/`off`, `nopass`, payload sanitizing), SHA-256 password hashes, and
//! selectors: the root one (the rules given outside parentheses) and any `(...)` ones. A command
//! is allowed when one selector allows the command (its bit, by table row, or a first argument
//! `+cmd|arg` allows), every key it names with the access its key spec declares (`%R~`, `%W~`,
//! `~`), and every channel it publishes or subscribes to (`&`). Command rules are kept as bits
//! and described back as Redis describes them: `+@all` or `-@all`, the categories that best fit,
//! then single commands.

use std::collections::{BTreeMap, VecDeque};

use sha2::{Digest, Sha256};

use crate::config::{Config, ConfigError};
use crate::resp::parser::Args;
use crate::server::table::{acl as cat, acl_bits, Command, Table, NO_AUTH};
use crate::server::State;
use crate::store::glob;

/// Key pattern permissions (`%R~`, `%W~`; `~` is both).
pub const KEY_READ: u8 = 1;
pub const KEY_WRITE: u8 = 2;
const KEY_ALL: u8 = KEY_READ | KEY_WRITE;

/// Why a rule was refused (the `errno` of `ACLSetUser`), with Redis's messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleError {
    UnknownName,
    Syntax,
    KeyAfterAllKeys,
    ChannelAfterAllChannels,
    NoSuchPassword,
    BadHash,
    SubcommandFirstArg,
    Duplicate,
}

impl RuleError {
    /// `ACLSetUserStringError`.
    pub fn message(self) -> &'static str {
        match self {
            RuleError::UnknownName => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeyAfterAllKeys => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAllChannels => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::SubcommandFirstArg => "Allowing first-arg of a subcommand is not supported",
            RuleError::Duplicate => "Duplicate user found. A user can only be defined once in config files",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    pub flags: u8,
}

impl KeyPattern {
    /// `sdsCatPatternString`: `~p`, `%R~p` or `%W~p`.
    fn describe(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match self.flags {
            KEY_READ => b"%R~",
            KEY_WRITE => b"%W~",
            _ => b"~",
        });
        out.extend_from_slice(&self.pattern);
    }
}

/// One set of permissions (`aclSelector`).
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    root: bool,
    /// Allowed commands, one bit per table row.
    allowed: Vec<u64>,
    /// Redis's reserved bit: set by `+@all`, so commands added later are allowed too.
    future: bool,
    /// `SELECTOR_FLAG_ALLCOMMANDS`: every bit is set and no check is needed.
    all_commands: bool,
    /// `+cmd|first-arg` rules of commands not otherwise allowed, by row.
    first_args: BTreeMap<usize, Vec<Vec<u8>>>,
    keys: Vec<KeyPattern>,
    all_keys: bool,
    channels: Vec<Vec<u8>>,
    all_channels: bool,
}

impl Selector {
    fn new(rows: usize, root: bool, all_channels: bool) -> Selector {
        Selector {
            root,
            allowed: vec![0; rows.div_ceil(64)],
            future: false,
            all_commands: false,
            first_args: BTreeMap::new(),
            keys: Vec::new(),
            all_keys: false,
            channels: Vec::new(),
            all_channels,
        }
    }

    fn bit(&self, row: usize) -> bool {
        self.allowed[row / 64] & (1 << (row % 64)) != 0
    }

    fn set_bit(&mut self, row: usize, on: bool) {
        if on {
            self.allowed[row / 64] |= 1 << (row % 64);
        } else {
            self.allowed[row / 64] &= !(1 << (row % 64));
            self.all_commands = false;
        }
    }

    /// `ACLChangeSelectorPerm`: the command, and a container's subcommands with it.
    fn change(&mut self, t: &Table, row: usize, on: bool) {
        self.set_bit(row, on);
        self.first_args.remove(&row);
        for s in t.rows[row].subcommands {
            if let Some(sub) = t.find(s.name.as_bytes()) {
                self.set_bit(sub, on);
            }
        }
    }

    /// Every command of a category (`ACLSetSelectorCommandBitsForCategory`).
    fn change_category(&mut self, t: &Table, flag: u32, on: bool) {
        for (row, c) in t.rows.iter().enumerate() {
            if acl_bits(c) & flag != 0 {
                self.change(t, row, on);
            }
        }
    }

    fn set_all(&mut self, on: bool) {
        let word = if on { u64::MAX } else { 0 };
        self.allowed.iter_mut().for_each(|w| *w = word);
        self.future = on;
        self.all_commands = on;
        self.first_args.clear();
    }

    /// `ACLSetSelector`: one rule about commands, keys or channels.
    fn apply(&mut self, t: &Table, op: &[u8]) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        match &lower[..] {
            b"allkeys" | b"~*" => {
                self.all_keys = true;
                self.keys.clear();
            }
            b"resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            b"allchannels" | b"&*" => {
                self.all_channels = true;
                self.channels.clear();
            }
            b"resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            b"allcommands" | b"+@all" => self.set_all(true),
            b"nocommands" | b"-@all" => self.set_all(false),
            _ => match op[0] {
                b'~' | b'%' => self.add_key_pattern(op)?,
                b'&' => {
                    if self.all_channels {
                        return Err(RuleError::ChannelAfterAllChannels);
                    }
                    let pat = &op[1..];
                    if pat.contains(&b' ') {
                        return Err(RuleError::Syntax);
                    }
                    if !self.channels.iter().any(|c| c == pat) {
                        self.channels.push(pat.to_vec());
                    }
                    self.all_channels = false;
                }
                b'+' | b'-' if op.get(1) == Some(&b'@') => {
                    let flag = category(&op[2..]).ok_or(RuleError::UnknownName)?;
                    self.change_category(t, flag, op[0] == b'+');
                }
                b'+' => self.allow_command(t, &op[1..])?,
                b'-' => {
                    let row = t.find(&op[1..]).ok_or(RuleError::UnknownName)?;
                    self.change(t, row, false);
                }
                _ => return Err(RuleError::Syntax),
            },
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAllKeys);
        }
        let (mut flags, mut at) = (0u8, 1);
        if op[0] == b'%' {
            loop {
                match op.get(at).map(u8::to_ascii_uppercase) {
                    Some(b'R') if flags & KEY_READ == 0 => flags |= KEY_READ,
                    Some(b'W') if flags & KEY_WRITE == 0 => flags |= KEY_WRITE,
                    Some(b'~') => {
                        at += 1;
                        break;
                    }
                    // The end without a `~`: the pattern is empty, as Redis takes it.
                    None => break,
                    _ => return Err(RuleError::Syntax),
                }
                at += 1;
            }
        } else {
            flags = KEY_ALL;
        }
        let pattern = &op[at.min(op.len())..];
        if pattern.contains(&b' ') {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(k) => k.flags |= flags,
            None => self.keys.push(KeyPattern {
                pattern: pattern.to_vec(),
                flags,
            }),
        }
        self.all_keys = false;
        Ok(())
    }

    /// `+command`, `+container|sub`, or `+command|first-arg`.
    fn allow_command(&mut self, t: &Table, name: &[u8]) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
            let row = t.find(name).ok_or(RuleError::UnknownName)?;
            self.change(t, row, true);
            return Ok(());
        };
        let (base, sub) = (&name[..bar], &name[bar + 1..]);
        let row = t.find(base).ok_or(RuleError::UnknownName)?;
        if t.rows[row].name.contains('|') {
            return Err(RuleError::SubcommandFirstArg);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !t.rows[row].subcommands.is_empty() {
            let sub_row = t.find(name).ok_or(RuleError::UnknownName)?;
            self.change(t, sub_row, true);
            return Ok(());
        }
        let allowed = self.first_args.entry(row).or_default();
        if !allowed.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
            allowed.push(sub.to_vec());
        }
        Ok(())
    }

    /// How many commands of the category this selector allows and denies.
    fn count_category(&self, t: &Table, flag: u32) -> (usize, usize) {
        let (mut on, mut off) = (0, 0);
        for (row, c) in t.rows.iter().enumerate() {
            if acl_bits(c) & flag != 0 {
                if self.bit(row) {
                    on += 1;
                } else {
                    off += 1;
                }
            }
        }
        (on, off)
    }

    /// `ACLDescribeSelectorCommandRules`: `+@all` or `-@all`, the categories that fit best, then
    /// the single commands (and first arguments) that make the bits exact.
    pub fn describe_commands(&self, t: &Table) -> Vec<u8> {
        let additive = !self.future;
        let mut rules: Vec<u8> = if additive { b"-@all " } else { b"+@all " }.to_vec();
        let mut fake = Selector::new(t.rows.len(), false, false);
        fake.set_all(!additive);
        let mut temp = self.clone();
        let mut applied = [false; cat::NAMES.len()];
        loop {
            let mut best = None;
            let (mut min_diff, mut max_same) = (usize::MAX, 0);
            for (j, &(flag, _)) in cat::NAMES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = temp.count_category(t, flag);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                    best = Some(j);
                    min_diff = diff;
                    max_same = same;
                }
            }
            let Some(j) = best else { break };
            let (flag, name) = cat::NAMES[j];
            fake.change_category(t, flag, additive);
            temp.change_category(t, flag, !additive);
            rules.extend_from_slice(if additive { b"+@" } else { b"-@" });
            rules.extend_from_slice(name.as_bytes());
            rules.push(b' ');
            applied[j] = true;
        }
        for (row, c) in t.rows.iter().enumerate() {
            let user = self.bit(row);
            if user != fake.bit(row) {
                rules.push(if user { b'+' } else { b'-' });
                rules.extend_from_slice(c.name.as_bytes());
                rules.push(b' ');
                fake.change(t, row, user);
            }
            if !user {
                for a in self.first_args.get(&row).into_iter().flatten() {
                    rules.push(b'+');
                    rules.extend_from_slice(c.name.as_bytes());
                    rules.push(b'|');
                    rules.extend_from_slice(a);
                    rules.push(b' ');
                }
            }
        }
        rules.pop();
        rules
    }

    /// The key patterns as ACL GETUSER shows them (`~*` for allkeys).
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            k.describe(&mut out);
        }
        out
    }

    /// The channel patterns as ACL GETUSER shows them (`&*` for allchannels).
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(c);
        }
        out
    }

    /// `ACLDescribeSelector`: keys, channels, then command rules.
    fn describe(&self, t: &Table) -> Vec<u8> {
        let mut out = Vec::new();
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                k.describe(&mut out);
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(c);
                out.push(b' ');
            }
        }
        out.extend(self.describe_commands(t));
        out
    }

    /// `ACLSelectorCheckKey`: whether a pattern grants the access the key spec flags ask for.
    fn key_allowed(&self, key: &[u8], spec_flags: u32) -> bool {
        if self.all_keys {
            return true;
        }
        let need = key_access(spec_flags);
        self.keys
            .iter()
            .any(|p| p.flags & need == need && glob::matches(&p.pattern, key, false))
    }

    /// `ACLSelectorHasUnrestrictedKeyAccess`: a `*` pattern with that access.
    fn all_keys_with(&self, spec_flags: u32) -> bool {
        let need = key_access(spec_flags);
        self.all_keys
            || self
                .keys
                .iter()
                .any(|p| p.flags & need == need && p.pattern == b"*")
    }

    fn channel_allowed(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p == channel
                } else {
                    glob::matches(p, channel, false)
                }
            })
    }

    /// `ACLSelectorCheckCmd`.
    fn check(&self, t: &Table, row: usize, args: Args, keys: &mut KeyCache) -> Check {
        let c = t.rows[row];
        if !self.all_commands && !c.has(NO_AUTH) && !self.bit(row) {
            let first = if c.name.contains('|') { 2 } else { 1 };
            let ok = args.len() >= 2
                && args.len() > first
                && self
                    .first_args
                    .get(&row)
                    .is_some_and(|a| a.iter().any(|a| a.eq_ignore_ascii_case(&args[first])));
            if !ok {
                return Check::Denied(Denied::Command, 0);
            }
        }
        if !self.all_keys {
            for &(pos, flags) in keys.get(c, args) {
                if !self.key_allowed(&args[pos], flags) {
                    return Check::Denied(Denied::Key, pos);
                }
            }
        }
        if !self.all_channels {
            for (pos, is_pattern) in channels(c, args) {
                if !self.channel_allowed(&args[pos], is_pattern) {
                    return Check::Denied(Denied::Channel, pos);
                }
            }
        }
        Check::Allowed
    }
}

/// The access a key spec's flags ask for (`ACCESS` reads; `INSERT`, `DELETE`, `UPDATE` write).
fn key_access(spec_flags: u32) -> u8 {
    use crate::server::keyspec::{ACCESS, DELETE, INSERT, UPDATE};
    let mut need = 0;
    if spec_flags & ACCESS != 0 {
        need |= KEY_READ;
    }
    if spec_flags & (INSERT | DELETE | UPDATE) != 0 {
        need |= KEY_WRITE;
    }
    need
}

/// A category by name (`ACLGetCommandCategoryFlagByName`).
pub fn category(name: &[u8]) -> Option<u32> {
    cat::NAMES
        .iter()
        .find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|&(f, _)| f)
}

/// The channels a command line publishes or subscribes to, and whether each is a pattern
/// (Redis's `getChannelsFromCommand`, without the unsubscribing ones ACL does not check).
fn channels(c: &Command, args: Args) -> Vec<(usize, bool)> {
    match c.name {
        "publish" | "spublish" => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..args.len()).map(|i| (i, false)).collect(),
        "psubscribe" => (1..args.len()).map(|i| (i, true)).collect(),
        _ => Vec::new(),
    }
}

/// The keys of a command line, found once for all the selectors that look at them.
#[derive(Default)]
struct KeyCache {
    keys: Option<Vec<(usize, u32)>>,
}

impl KeyCache {
    fn get(&mut self, c: &Command, args: Args) -> &[(usize, u32)] {
        self.keys.get_or_insert_with(|| c.line_keys(args))
    }
}

/// What a selector, or a user, says about a command.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    Allowed,
    /// Denied, at this argument (a key or channel).
    Denied(Denied, usize),
}

/// Why a command was refused, in Redis's order of relevance (`ACL_DENIED_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denied {
    Command,
    Key,
    Auth,
    Channel,
}

impl Denied {
    /// The reason ACL LOG shows.
    pub fn reason(self) -> &'static str {
        match self {
            Denied::Command => "command",
            Denied::Key => "key",
            Denied::Auth => "auth",
            Denied::Channel => "channel",
        }
    }

    /// `getAclErrorMessage`.
    pub fn message(self) -> &'static str {
        match self {
            Denied::Command => "can't run this command or subcommand",
            Denied::Key => {
                "can't access at least one of the keys mentioned in the command arguments"
            }
            Denied::Channel => "can't publish to the channel mentioned in the command",
            Denied::Auth => "lacking the permissions for the command",
        }
    }
}

/// User flags, in the order ACL LIST describes them.
const ENABLED: u8 = 1;
const DISABLED: u8 = 2;
const NOPASS: u8 = 4;
const SKIP_SANITIZE: u8 = 8;
const SANITIZE: u8 = 16;
const USER_FLAGS: &[(u8, &str)] = &[
    (ENABLED, "on"),
    (DISABLED, "off"),
    (NOPASS, "nopass"),
    (SKIP_SANITIZE, "skip-sanitize-payload"),
    (SANITIZE, "sanitize-payload"),
];

#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub name: Vec<u8>,
    flags: u8,
    /// SHA-256 hashes, lowercase hex, in the order they were added.
    passwords: Vec<String>,
    /// The root selector first.
    selectors: Vec<Selector>,
}

/// The SHA-256 of a password as lowercase hex (`ACLHashPassword`).
pub fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn valid_hash(h: &[u8]) -> bool {
    h.len() == 64 && h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

impl User {
    /// A new user: off, no passwords, no permissions (`ACLCreateUser`).
    pub fn new(name: &[u8], rows: usize, pubsub_all: bool) -> User {
        User {
            name: name.to_vec(),
            flags: DISABLED,
            passwords: Vec::new(),
            selectors: vec![Selector::new(rows, true, pubsub_all)],
        }
    }

    pub fn enabled(&self) -> bool {
        self.flags & DISABLED == 0
    }

    /// Whether some selector allows everything, so no command needs checking.
    pub fn unrestricted(&self) -> bool {
        self.selectors
            .iter()
            .any(|s| s.all_commands && s.all_keys && s.all_channels)
    }

    pub fn nopass(&self) -> bool {
        self.flags & NOPASS != 0
    }

    /// Whether `password` is one of the user's (`ACLCheckUserCredentials` without the lookup).
    pub fn password_matches(&self, password: &[u8]) -> bool {
        if self.nopass() {
            return true;
        }
        let h = hash_password(password);
        self.passwords
            .iter()
            .any(|p| constant_time_eq(p.as_bytes(), h.as_bytes()))
    }

    /// `ACLSetUser`: one rule.
    pub fn apply(&mut self, t: &Table, op: &[u8], pubsub_all: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let lower = op.to_ascii_lowercase();
        match &lower[..] {
            b"on" => self.flags = (self.flags | ENABLED) & !DISABLED,
            b"off" => self.flags = (self.flags | DISABLED) & !ENABLED,
            b"skip-sanitize-payload" => self.flags = (self.flags | SKIP_SANITIZE) & !SANITIZE,
            b"sanitize-payload" => self.flags = (self.flags | SANITIZE) & !SKIP_SANITIZE,
            b"nopass" => {
                self.flags |= NOPASS;
                self.passwords.clear();
            }
            b"resetpass" => {
                self.flags &= !NOPASS;
                self.passwords.clear();
            }
            b"clearselectors" => self.selectors.truncate(1),
            b"reset" => {
                for rule in ["resetpass", "resetkeys", "resetchannels"] {
                    self.apply(t, rule.as_bytes(), pubsub_all)?;
                }
                if pubsub_all {
                    self.apply(t, b"allchannels", pubsub_all)?;
                }
                for rule in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                    self.apply(t, rule.as_bytes(), pubsub_all)?;
                }
            }
            _ => match op[0] {
                b'>' | b'#' => {
                    let hash = if op[0] == b'>' {
                        hash_password(&op[1..])
                    } else if valid_hash(&op[1..]) {
                        String::from_utf8(op[1..].to_vec()).expect("hex")
                    } else {
                        return Err(RuleError::BadHash);
                    };
                    if !self.passwords.contains(&hash) {
                        self.passwords.push(hash);
                    }
                    self.flags &= !NOPASS;
                }
                b'<' | b'!' => {
                    let hash = if op[0] == b'<' {
                        hash_password(&op[1..])
                    } else if valid_hash(&op[1..]) {
                        String::from_utf8(op[1..].to_vec()).expect("hex")
                    } else {
                        return Err(RuleError::BadHash);
                    };
                    let at = self
                        .passwords
                        .iter()
                        .position(|p| *p == hash)
                        .ok_or(RuleError::NoSuchPassword)?;
                    self.passwords.remove(at);
                }
                b'(' if op.ends_with(b")") => {
                    let mut s = Selector::new(t.rows.len(), false, pubsub_all);
                    for rule in split_args(&op[1..op.len() - 1]).ok_or(RuleError::Syntax)? {
                        s.apply(t, &rule)?;
                    }
                    self.selectors.push(s);
                }
                _ => self.selectors[0].apply(t, op)?,
            },
        }
        Ok(())
    }

    /// `ACLDescribeUser`: the rules that make this user (ACL LIST, ACL SAVE).
    pub fn describe(&self, t: &Table) -> Vec<u8> {
        let mut out = Vec::new();
        for &(flag, name) in USER_FLAGS {
            if self.flags & flag != 0 {
                out.extend_from_slice(name.as_bytes());
                out.push(b' ');
            }
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p.as_bytes());
            out.push(b' ');
        }
        for s in &self.selectors {
            let d = s.describe(t);
            if s.root {
                out.extend(d);
            } else {
                out.extend_from_slice(b" (");
                out.extend(d);
                out.push(b')');
            }
        }
        out
    }

    /// The flags ACL GETUSER lists.
    pub fn flag_names(&self) -> Vec<&'static str> {
        USER_FLAGS
            .iter()
            .filter(|(f, _)| self.flags & f != 0)
            .map(|&(_, n)| n)
            .collect()
    }

    pub fn passwords(&self) -> &[String] {
        &self.passwords
    }

    pub fn selectors(&self) -> &[Selector] {
        &self.selectors
    }

    /// `ACLCheckAllUserCommandPerm`: allowed, or why not and at which argument (the last key or
    /// channel no selector allowed, the command if none allowed it).
    pub fn check(&self, t: &Table, row: usize, args: Args) -> Result<(), (Denied, usize)> {
        let mut keys = KeyCache::default();
        let (mut worst, mut at) = (Denied::Command, 0);
        for s in &self.selectors {
            match s.check(t, row, args, &mut keys) {
                Check::Allowed => return Ok(()),
                Check::Denied(why, pos) => {
                    if why > worst || (why == worst && pos > at) {
                        worst = why;
                        at = pos;
                    }
                }
            }
        }
        Err((worst, at))
    }

    /// `ACLUserCheckKeyPerm`: whether some selector grants this access to `key`.
    pub fn key_allowed(&self, key: &[u8], spec_flags: u32) -> bool {
        self.selectors
            .iter()
            .any(|s| s.key_allowed(key, spec_flags))
    }

    /// `ACLUserCheckCmdWithUnrestrictedKeyAccess`: the command is allowed by a selector that also
    /// grants this access to every key.
    pub fn command_with_all_keys(
        &self,
        t: &Table,
        row: usize,
        args: Args,
        spec_flags: u32,
    ) -> bool {
        let mut keys = KeyCache::default();
        self.selectors.iter().any(|s| {
            s.check(t, row, args, &mut keys) == Check::Allowed && s.all_keys_with(spec_flags)
        })
    }

    /// `ACLUserCheckChannelPerm`.
    pub fn channel_allowed(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.selectors
            .iter()
            .any(|s| s.channel_allowed(channel, is_pattern))
    }

    /// Whether every selector lets this user at every channel (no subscriber to check).
    pub fn all_channels(&self) -> bool {
        self.selectors.iter().any(|s| s.all_channels)
    }
}

/// Compares two equal-length strings in time independent of where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// `sdssplitargs`: words, with double and single quotes; `None` for unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let (mut buf, mut spans) = (Vec::new(), Vec::new());
    crate::resp::parser::split_args(line, &mut buf, &mut spans).ok()?;
    Some(spans.iter().map(|&(s, e)| buf[s..e].to_vec()).collect())
}

/// One ACL LOG entry (`ACLLogEntry`).
#[derive(Clone, Debug)]
pub struct LogEntry {
    pub count: u64,
    pub reason: Denied,
    /// "toplevel", "multi", "lua" (a script of any engine) or "module".
    pub context: &'static str,
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// Unix milliseconds of the last occurrence.
    pub ctime: i64,
    pub client_info: String,
}

/// Entries this close in time, and otherwise alike, are counted as one.
const LOG_GROUPING_MS: i64 = 60_000;

/// The users and the security log. A client holds its user's slot: changing a user changes what
/// its connections may do at once, and deleting one closes them (the slot is then reused).
pub struct Acl {
    slots: Vec<Option<User>>,
    by_name: BTreeMap<Vec<u8>, usize>,
    pub log: VecDeque<LogEntry>,
    /// Refusals by reason, indexed by `Denied` (INFO's `acl_access_denied_*`, Redis 7.2's). Kept
    /// here, not in the stats, because Redis's CONFIG RESETSTAT leaves them alone.
    pub denied: [u64; 4],
}

/// The default user's slot.
pub const DEFAULT: usize = 0;

impl Acl {
    /// The `default` user with every permission and no password (`ACLCreateDefaultUser`).
    pub fn new(t: &Table) -> Acl {
        let mut u = User::new(b"default", t.rows.len(), false);
        for rule in ["+@all", "~*", "&*", "on", "nopass"] {
            u.apply(t, rule.as_bytes(), false).expect("valid");
        }
        let mut by_name = BTreeMap::new();
        by_name.insert(b"default".to_vec(), DEFAULT);
        Acl {
            slots: vec![Some(u)],
            by_name,
            log: VecDeque::new(),
            denied: [0; 4],
        }
    }

    pub fn user(&self, slot: usize) -> &User {
        self.slots[slot].as_ref().expect("a live user slot")
    }

    pub fn user_mut(&mut self, slot: usize) -> &mut User {
        self.slots[slot].as_mut().expect("a live user slot")
    }

    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Users in name order, with their slots.
    pub fn users(&self) -> impl Iterator<Item = (usize, &User)> {
        self.by_name.values().map(|&i| (i, self.user(i)))
    }

    /// Adds or replaces the user of that name; its slot.
    pub fn put(&mut self, u: User) -> usize {
        if let Some(&i) = self.by_name.get(&u.name) {
            self.slots[i] = Some(u);
            return i;
        }
        let i = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.by_name.insert(u.name.clone(), i);
        self.slots[i] = Some(u);
        i
    }

    /// Removes a user (never `default`); its former slot.
    pub fn remove(&mut self, name: &[u8]) -> Option<usize> {
        let i = self.by_name.remove(name)?;
        self.slots[i] = None;
        Some(i)
    }

    /// Whether a connection must authenticate before running commands (`authRequired`).
    pub fn auth_required(&self) -> bool {
        let d = self.user(DEFAULT);
        !d.nopass() || !d.enabled()
    }

    /// `requirepass`: the default user's only password, or `nopass` when empty
    /// (`ACLUpdateDefaultUserPassword`).
    pub fn set_default_password(&mut self, t: &Table, password: &[u8]) {
        let u = self.user_mut(DEFAULT);
        u.apply(t, b"resetpass", false).expect("valid");
        let rule = if password.is_empty() {
            b"nopass".to_vec()
        } else {
            [&b">"[..], password].concat()
        };
        u.apply(t, &rule, false).expect("valid");
    }

    /// `ACLCheckUserCredentials`: the user's slot if the pair is valid and the user is on.
    pub fn check_credentials(&self, name: &[u8], password: &[u8]) -> Option<usize> {
        let i = self.find(name)?;
        let u = self.user(i);
        (u.enabled() && u.password_matches(password)).then_some(i)
    }

    /// `addACLLogEntry`: a new entry first, or the matching recent one counted again.
    pub fn add_log(&mut self, mut e: LogEntry, max_len: usize) {
        let found = self.log.iter().take(10).position(|o| {
            o.reason == e.reason
                && o.context == e.context
                && (o.ctime - e.ctime).abs() <= LOG_GROUPING_MS
                && o.object == e.object
                && o.username == e.username
        });
        if let Some(i) = found {
            let mut old = self.log.remove(i).expect("found");
            old.client_info = std::mem::take(&mut e.client_info);
            old.ctime = e.ctime;
            old.count += 1;
            self.log.push_front(old);
        } else {
            self.log.push_front(e);
            self.log.truncate(max_len);
        }
    }
}

/// `ACLMergeSelectorArguments`: a `(` argument runs, joined by spaces, to the one ending in `)`.
pub fn merge_selectors(rules: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::with_capacity(rules.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, &r) in rules.iter().enumerate() {
        if let Some((_, sel)) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(r);
            if r.last() == Some(&b')') {
                out.push(open.take().expect("open").1);
            }
            continue;
        }
        if r.first() == Some(&b'(') && r.last() != Some(&b')') {
            open = Some((i, r.to_vec()));
            continue;
        }
        out.push(r.to_vec());
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(out),
    }
}

/// `user <name> <rules>`, as ACL LIST and ACL SAVE write it.
pub fn user_line(t: &Table, u: &User) -> Vec<u8> {
    let mut line = b"user ".to_vec();
    line.extend_from_slice(&u.name);
    line.push(b' ');
    line.extend(u.describe(t));
    line
}

/// Reads an ACL file as `ACLLoadFromFile` does: every line `user <name> <rules>` split on single
/// spaces (no quoting; comments are errors), all lines checked. The users, or the errors Redis
/// reports, each naming the file and line.
pub fn load_file(t: &Table, pubsub_all: bool, path: &str) -> Result<Vec<User>, String> {
    let content = std::fs::read(path).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{path}': {}",
            strerror(&e)
        )
    })?;
    let mut users: Vec<User> = Vec::new();
    let mut errors = String::new();
    for (i, raw) in content.split(|&c| c == b'\n').enumerate() {
        let n = i + 1;
        let line = trim(raw, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let words: Vec<&[u8]> = line.split(|&c| c == b' ').collect();
        if words[0] != b"user" || words.len() < 2 {
            errors +=
                &format!("{path}:{n} should start with user keyword followed by the username. ");
            continue;
        }
        let name = words[1];
        if name.iter().any(|&c| c == b' ' || c == 0) {
            errors += &format!(
                "'{path}:{n}: username '{}' contains invalid characters. ",
                text(name)
            );
            continue;
        }
        if users.iter().any(|u| u.name == name) {
            errors += &format!(
                "WARNING: Duplicate user '{}' found on line {n}. ",
                text(name)
            );
            continue;
        }
        let mut u = User::new(name, t.rows.len(), pubsub_all);
        let Ok(merged) = merge_selectors(&words[2..]) else {
            errors += &format!("{path}:{n}: Unmatched parenthesis in selector definition.");
            users.push(u);
            continue;
        };
        let mut syntax_error = false;
        for rule in &merged {
            let rule = trim(rule, b"\t\r\n");
            match u.apply(t, rule, pubsub_all) {
                Ok(()) => {}
                Err(RuleError::UnknownName) => {
                    errors += &format!(
                        "{path}:{n}: Error in applying operation '{}': {}. ",
                        text(rule),
                        RuleError::UnknownName.message()
                    );
                }
                Err(e) if !syntax_error => {
                    errors += &format!("{path}:{n}: {}. ", e.message());
                    syntax_error = true;
                }
                Err(_) => {}
            }
        }
        users.push(u);
    }
    if !errors.is_empty() {
        errors += "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
        return Err(errors);
    }
    Ok(users)
}

/// `sdstrim`: `chars` removed from both ends.
fn trim<'a>(b: &'a [u8], chars: &[u8]) -> &'a [u8] {
    let start = b.iter().position(|c| !chars.contains(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !chars.contains(c))
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// An I/O error as C's `strerror` words it (Rust adds ` (os error N)`).
fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}

/// An argument as text for messages, up to its first NUL byte (as Redis prints `%s`).
fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
}

/// `ACLAppendUserForLoading`'s check of the config file's `user` lines, as it parses them: a rule
/// that cannot apply (anything but a command unknown so far) is a fatal config error.
pub fn check_config_users(t: &Table, config: &Config) -> Result<(), ConfigError> {
    let mut seen: Vec<&str> = Vec::new();
    for line in &config.users {
        let args = &line.args;
        let fail = |at: usize, e: RuleError| ConfigError {
            line: line.number,
            text: line.text.clone(),
            // Redis names the argument by its index among the rules, counted from `user`.
            msg: format!(
                "Error in user declaration '{}': {}",
                args.get(at).map_or("", String::as_str),
                e.message()
            ),
        };
        if seen.contains(&args[1].as_str()) {
            return Err(fail(1, RuleError::Duplicate));
        }
        seen.push(&args[1]);
        let rules: Vec<&[u8]> = args[2..].iter().map(|a| a.as_bytes()).collect();
        let merged = merge_selectors(&rules).map_err(|i| fail(i, RuleError::Syntax))?;
        let mut fake = User::new(b"", t.rows.len(), false);
        for (j, rule) in merged.iter().enumerate() {
            match fake.apply(t, rule, false) {
                Ok(()) | Err(RuleError::UnknownName) => {}
                Err(e) => return Err(fail(j, e)),
            }
        }
    }
    Ok(())
}

/// `ACLLoadUsersAtStartup`: the config file's users, or the ACL file's (never both).
pub fn load_at_startup(state: &mut State) -> Result<(), String> {
    let config = &state.config;
    if !config.aclfile.is_empty() && !config.users.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    let pubsub_all = config.acl_pubsub_default == "allchannels";
    let t = &state.table;
    for line in &config.users {
        let name = line.args[1].as_bytes();
        if name.iter().any(|&c| c == b' ' || c == 0) {
            crate::warning!("Spaces not allowed in ACL usernames");
            return Err("Critical error while loading ACLs. Exiting.".into());
        }
        let mut u = User::new(name, t.rows.len(), pubsub_all);
        if name == b"default" {
            u = state.acl.user(DEFAULT).clone();
            u.apply(t, b"reset", pubsub_all).expect("valid");
        }
        let rules: Vec<&[u8]> = line.args[2..].iter().map(|a| a.as_bytes()).collect();
        let merged = merge_selectors(&rules)
            .map_err(|_| "Critical error while loading ACLs. Exiting.".to_string())?;
        for rule in &merged {
            if let Err(e) = u.apply(t, rule, pubsub_all) {
                crate::warning!(
                    "Error loading ACL rule '{}' for the user named '{}': {}",
                    text(rule),
                    text(name),
                    e.message()
                );
                return Err("Critical error while loading ACLs. Exiting.".into());
            }
        }
        if !u.enabled() {
            crate::notice!("The user '{}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.", text(name));
        }
        state.acl.put(u);
    }
    if !config.aclfile.is_empty() {
        let users = load_file(t, pubsub_all, &config.aclfile)
            .map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
        let fresh = Acl::new(t);
        state.acl = fresh;
        for u in users {
            state.acl.put(u);
        }
    }
    Ok(())
}
