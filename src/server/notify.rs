//! Keyspace notifications (Redis's `notify.c`): with `notify-keyspace-events` set, a change to a key
//! is published as `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>`
//! (message: the key) to ordinary Pub/Sub subscribers.
//!
//! Handlers call `Ctx::notify(class, event, key)` where Redis calls `notifyKeyspaceEvent`. The
//! store raises three events itself (`new` on every key it adds, `expired` on a lazy expiry,
//! `keymiss` on a read that misses): it records them in order while their class is on, and they
//! are published before the command's next event and when the command ends (`flush_store_events`),
//! so they come out where Redis emits them.

use crate::server::ctx::Ctx;
use crate::server::pubsub::{self, Kind};
use crate::store::{self, StoreEvent};

pub use crate::config::events::*;

/// Tells the store which of its own events to record (after start-up and every CONFIG SET).
pub fn configure(flags: u32) {
    let on = |class| flags & class != 0 && flags & (KEYSPACE | KEYEVENT) != 0;
    store::set_recorded_events(on(NEW), on(EXPIRED), on(KEY_MISS));
}

impl Ctx<'_> {
    /// Redis's `notifyKeyspaceEvent` for a key of the selected database.
    #[inline]
    pub fn notify(&mut self, class: u32, event: &str, key: &[u8]) {
        if self.srv.config.notify_keyspace_events & class != 0 {
            self.notify_in(self.db, class, event, key);
        }
    }

    /// `notify` for a key of database `db` (MOVE, COPY ... DB).
    pub fn notify_in(&mut self, db: usize, class: u32, event: &str, key: &[u8]) {
        let flags = self.srv.config.notify_keyspace_events;
        if flags & class == 0 {
            return;
        }
        flush_store_events(self);
        publish(self, flags, db, event, key);
    }
}

fn publish(ctx: &mut Ctx, flags: u32, db: usize, event: &str, key: &[u8]) {
    if flags & KEYSPACE != 0 {
        let mut channel = format!("__keyspace@{db}__:").into_bytes();
        channel.extend_from_slice(key);
        pubsub::publish(ctx, Kind::Channel, &channel, event.as_bytes());
    }
    if flags & KEYEVENT != 0 {
        let channel = format!("__keyevent@{db}__:{event}");
        pubsub::publish(ctx, Kind::Channel, channel.as_bytes(), key);
    }
}

/// Publishes the events the store recorded (`new`, `expired`, `keymiss`), in the order they
/// happened, database by database.
pub fn flush_store_events(ctx: &mut Ctx) {
    if !store::events_recorded() {
        return;
    }
    let flags = ctx.srv.config.notify_keyspace_events;
    for db in 0..ctx.srv.dbs.len() {
        if ctx.srv.dbs[db].events.is_empty() {
            continue;
        }
        for (event, key) in std::mem::take(&mut ctx.srv.dbs[db].events) {
            let name = match event {
                StoreEvent::New => "new",
                StoreEvent::Expired => "expired",
                StoreEvent::Miss => "keymiss",
            };
            publish(ctx, flags, db, name, &key);
        }
    }
}
