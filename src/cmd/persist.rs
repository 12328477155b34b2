//! Persistence commands: SAVE, BGSAVE, LASTSAVE (snapshots, `crate::persist`), BGREWRITEAOF
//! (`persist::aof`) and DUMP, RESTORE
//! (one value in RDB serialization, `persist::rdb`).

use super::keyspec::{ACCESS, OW, RO, UPDATE};
use super::parse::{int, is};
use super::{
    acl, Args, CmdResult, Command, Ctx, ADMIN, DENYOOM, FAST, LOADING, NOSCRIPT, NO_ASYNC_LOADING,
    NO_MULTI, READONLY, STALE, WRITE,
};
use crate::persist::{self, rdb};
use crate::resp::reply::SYNTAX;
use crate::server::notify::GENERIC;
use crate::util::clock;

const GROUP: &str = "server";

/// SAVE
///
/// # Format
/// `SAVE` — writes the snapshot synchronously; OK, or a bare `ERR` if it failed (as Redis).
fn save(ctx: &mut Ctx, _args: Args) -> CmdResult {
    if ctx.srv.persist.child.is_some() {
        return Err("ERR Background save already in progress".into());
    }
    match persist::save(&mut ctx.srv.persistence()) {
        Ok(()) => ctx.out.ok(),
        Err(_) => return Err("ERR".into()),
    }
    Ok(())
}

/// BGSAVE [SCHEDULE]
///
/// # Format
/// `BGSAVE [SCHEDULE]` — forks a child that writes the snapshot: `Background saving started`.
fn bgsave(ctx: &mut Ctx, args: Args) -> CmdResult {
    let schedule = match args.len() {
        1 => false,
        2 if is(&args[1], "schedule") => true,
        _ => return Err(SYNTAX.into()),
    };
    if ctx.srv.persist.child.is_some() && !schedule {
        return Err("ERR Background save already in progress".into());
    }
    if ctx.srv.persist.child_active() {
        if schedule {
            ctx.srv.persist.scheduled = true;
            ctx.out.simple("Background saving scheduled");
            return Ok(());
        }
        return Err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.".into());
    }
    match persist::bgsave(&mut ctx.srv.persistence()) {
        Ok(_) => ctx.out.simple("Background saving started"),
        Err(_) => return Err("ERR".into()),
    }
    Ok(())
}

/// BGREWRITEAOF
///
/// # Format
/// `BGREWRITEAOF` — forks a child that writes a new AOF base while writes go to a new incr file:
/// `Background append only file rewriting started`; `...scheduled` while a BGSAVE runs.
fn bgrewriteaof(ctx: &mut Ctx, _args: Args) -> CmdResult {
    if ctx.srv.persist.aof.child.is_some() {
        return Err("ERR Background append only file rewriting already in progress".into());
    }
    if ctx.srv.persist.child_active() || ctx.client().tx.running > 0 {
        let a = &mut ctx.srv.persist.aof;
        a.scheduled = true;
        a.consecutive_failures = 0;
        ctx.out
            .simple("Background append only file rewriting scheduled");
        return Ok(());
    }
    match persist::aof::rewrite_start(&mut ctx.srv.persistence()) {
        Ok(()) => ctx.out.simple("Background append only file rewriting started"),
        Err(_) => return Err("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.".into()),
    }
    Ok(())
}

/// LASTSAVE
///
/// # Format
/// `LASTSAVE` — the Unix time of the last successful save.
fn lastsave(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.int(ctx.srv.persist.lastsave);
    Ok(())
}

/// DUMP key
///
/// # Format
/// `DUMP key` — the value's RDB serialization + RDB version + CRC64, or nil.
fn dump(ctx: &mut Ctx, args: Args) -> CmdResult {
    let opts = ctx.srv.persist.save_opts(&ctx.srv.config);
    match ctx.db().lookup(&args[1]) {
        Some(e) => {
            let p = rdb::dump_payload(&e.val, opts);
            ctx.out.bulk(&p);
        }
        None => ctx.out.null(),
    }
    Ok(())
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
///
/// # Format
/// `RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]` — OK; `BUSYKEY` if the key
/// exists without REPLACE. A TTL already in the past restores nothing (and deletes with REPLACE).
fn restore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (i64, i64) = (-1, -1);
    let mut j = 4;
    while j < args.len() {
        let more = args.len() - j - 1;
        if is(&args[j], "replace") {
            replace = true;
        } else if is(&args[j], "absttl") {
            absttl = true;
        } else if is(&args[j], "idletime") && more >= 1 && freq == -1 {
            idle = int(&args[j + 1])?;
            if idle < 0 {
                return Err("ERR Invalid IDLETIME value, must be >= 0".into());
            }
            j += 1;
        } else if is(&args[j], "freq") && more >= 1 && idle == -1 {
            freq = int(&args[j + 1])?;
            if !(0..=255).contains(&freq) {
                return Err("ERR Invalid FREQ value, must be >= 0 and <= 255".into());
            }
            j += 1;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    let key = &args[1];
    if !replace && ctx.db().lookup_mut(key).is_some() {
        return Err("BUSYKEY Target key name already exists.".into());
    }
    let mut ttl = int(&args[2])?;
    if ttl < 0 {
        return Err("ERR Invalid TTL value, must be >= 0".into());
    }
    let lim = persist::limits(&ctx.srv.config);
    let val = rdb::restore_payload(&args[3], lim)?;
    let deleted = replace && ctx.db().server_delete(key);
    if ttl != 0 && !absttl {
        ttl = ttl.saturating_add(clock::now_ms());
    }
    if ttl != 0 && ttl <= clock::now_ms() {
        if deleted {
            ctx.signal_modified(key);
            ctx.srv.dirty += 1;
            ctx.notify(GENERIC, "del", key);
            let verb: &[u8] = if ctx.srv.config.lazyfree_lazy_server_del {
                b"UNLINK"
            } else {
                b"DEL"
            };
            ctx.propagate_as(&[verb, key]);
        }
        ctx.out.ok();
        return Ok(());
    }
    if ttl != 0 && !absttl {
        // A relative TTL replays as the absolute time it came to (Redis's `restoreCommand`).
        let at = ttl.to_string();
        let mut line: Vec<&[u8]> = args.iter().collect();
        line[2] = at.as_bytes();
        line.push(b"ABSTTL");
        ctx.propagate_as(&line);
    }
    let at = if ttl != 0 {
        ttl
    } else {
        crate::store::NO_EXPIRE
    };
    ctx.db().set(key, val, Some(at));
    let idle = u64::try_from(idle).ok();
    let freq = u8::try_from(freq).ok();
    if let Some(stamp) = crate::store::restored_stamp(idle, freq) {
        // Set directly: a write lookup would refresh the access time it sets.
        let db = ctx.db();
        if let Some(slot) = db.dict.find(key) {
            db.dict.value_at_mut(slot).lru = stamp;
        }
    }
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(GENERIC, "restore", key);
    ctx.out.ok();
    Ok(())
}

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::new("save", save, 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI).group(GROUP)
        .doc("Synchronously save the dataset to disk", "1.0.0", "O(N) where N is the total number of keys in all databases", ""),
    Command::new("bgsave", bgsave, -1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING).group(GROUP)
        .history(&[("3.2.2", "Added the `SCHEDULE` option.")])
        .arg_since(&[("schedule", "3.2.2")])
        .doc("Asynchronously save the dataset to disk", "1.0.0", "O(1)", "[SCHEDULE]"),
    Command::new("bgrewriteaof", bgrewriteaof, 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING).group(GROUP)
        .doc("Asynchronously rewrite the append-only file", "1.0.0", "O(1)", ""),
    Command::new("lastsave", lastsave, 1, LOADING | STALE | FAST).acl(acl::ADMIN | acl::DANGEROUS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Get the UNIX time stamp of the last successful save to disk", "1.0.0", "O(1)", ""),
    Command::new("dump", dump, 2, READONLY).key(1, RO | ACCESS).group("generic")
        .tips(&["nondeterministic_output"])
        .doc("Return a serialized version of the value stored at the specified key.", "2.6.0", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).", "key"),
    Command::new("restore", restore, -4, WRITE | DENYOOM).key(1, OW | UPDATE).acl(acl::DANGEROUS).group("generic")
        .history(&[("3.0.0", "Added the `REPLACE` modifier."), ("5.0.0", "Added the `ABSTTL` modifier."), ("5.0.0", "Added the `IDLETIME` and `FREQ` options.")])
        .arg_since(&[("replace", "3.0.0"), ("absttl", "5.0.0"), ("seconds", "5.0.0"), ("frequency", "5.0.0")])
        .doc("Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).", "key ttl:integer serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds:integer] [FREQ frequency:integer]"),
];
