//! CLIENT PAUSE and CLIENT UNPAUSE (Redis's `pauseClients`): for a while, clients' commands wait,
//! all of them (ALL) or those that may write (WRITE: writes, and what may replicate, such as EVAL
//! without a `no-writes` shebang, PUBLISH, PFCOUNT, and EXEC of a queue holding one). The gate
//! postpones such a command (`postpone`): it keeps the command on its client, which reads nothing
//! more meanwhile. When the pause ends (its time passes, or CLIENT UNPAUSE), the event loop runs the
//! postponed commands through the gate again, in the order they came (`resume`).
//!
//! While paused, keys do not expire (a key past its time reads as missing but stays) and nothing is
//! evicted, as in Redis: the dataset holds still.

use std::collections::VecDeque;
use std::time::Duration;

use slab::Slab;

use crate::resp::parser::Args;
use crate::server::client::Client;
use crate::server::ctx::Ctx;
use crate::server::{blocking, gate, Reactor, State};
use crate::util::clock;

/// What a pause holds back.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Kind {
    Write,
    All,
}

#[derive(Default)]
pub struct Pause {
    /// Some while paused.
    kind: Option<Kind>,
    /// When the pause ends, in Unix milliseconds.
    until_ms: i64,
    /// Clients holding a postponed command, in arrival order, with their ids (a slab key may be
    /// reused by a later connection).
    queue: VecDeque<(usize, u64)>,
}

/// A command held back by a pause, owned.
pub struct Postponed {
    argv: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Pause {
    pub fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// CLIENT PAUSE: the stricter kind and the later end win over a pause already running.
    pub fn start(&mut self, kind: Kind, until_ms: i64) {
        self.kind = Some(self.kind.map_or(kind, |k| k.max(kind)));
        self.until_ms = self.until_ms.max(until_ms);
        crate::store::set_expiry_paused(true);
    }

    /// CLIENT UNPAUSE, or the pause's time has passed.
    pub fn end(&mut self) {
        self.kind = None;
        self.until_ms = 0;
        crate::store::set_expiry_paused(false);
    }

    /// How long the event loop may sleep before the pause ends.
    pub fn time_left(&self) -> Option<Duration> {
        self.kind?;
        let left = self.until_ms - clock::now_ms();
        Some(Duration::from_millis(left.max(0) as u64))
    }

    /// Whether a command that may (`writes`) or may not write must wait now.
    pub fn holds(&self, writes: bool) -> bool {
        match self.kind {
            Some(Kind::All) => true,
            Some(Kind::Write) => writes,
            None => false,
        }
    }
}

/// Keeps the client's command for when the pause ends; the client reads nothing more meanwhile.
pub fn postpone(ctx: &mut Ctx, args: Args) {
    let (mut argv, mut spans) = (Vec::new(), Vec::new());
    for a in args.iter() {
        let start = argv.len();
        argv.extend_from_slice(a);
        spans.push((start, argv.len()));
    }
    let client = &mut ctx.clients[ctx.id];
    client.postponed = Some(Postponed { argv, spans });
    ctx.srv.pause.queue.push_back((ctx.id, client.id));
}

/// Once per event loop turn: ends a pause whose time has passed, and when no pause runs, runs the
/// postponed commands through the gate in arrival order; each client then reads its pending input
/// (`blocking.unblocked`). A postponed command may pause again: the rest then waits anew. With the
/// `reactor`, a postponed script that runs past `busy-reply-threshold` serves the others as any
/// script does.
pub fn resume(srv: &mut State, clients: &mut Slab<Client>, mut reactor: Option<&mut Reactor>) {
    if srv.pause.kind.is_some() && srv.pause.until_ms <= clock::now_ms() {
        srv.pause.end();
    }
    while srv.pause.kind.is_none() {
        let Some((key, id)) = srv.pause.queue.pop_front() else {
            return;
        };
        let Some(p) = clients
            .get_mut(key)
            .filter(|c| c.id == id)
            .and_then(|c| c.postponed.take())
        else {
            continue;
        };
        let mut out = std::mem::take(&mut clients[key].out);
        let db = clients[key].db;
        {
            let mut ctx = Ctx {
                srv,
                clients,
                id: key,
                db,
                out: &mut out,
                reactor: reactor.as_deref_mut(),
            };
            gate::execute(&mut ctx, Args::new(&p.argv, &p.spans));
        }
        clients[key].out = out;
        // Its writes may serve blocked clients, as any command's.
        if !srv.key_events.ready.is_empty() {
            blocking::serve_ready(srv, clients);
        }
        if clients[key].postponed.is_none() {
            srv.blocking.unblocked.push(key);
        }
    }
}
