//! The kernel's side of persistence (`persist/` sits below and names nothing of the kernel): it
//! lends persistence the data it works on (`State::persistence`), records the AOF's write
//! latencies, and loads files at start-up and on DEBUG RELOAD / LOADAOF — an RDB file straight
//! into the keyspace, an AOF's commands through the gate, as a client with no socket would send
//! them (`AofLoader`, the `persist::Loader` the AOF reader feeds).

use std::time::Instant;

use slab::Slab;

use crate::notice;
use crate::persist::{self, aof, rdb, Host};
use crate::resp::parser::Args;
use crate::resp::reply::Reply;
use crate::server::client::{Client, Conn};
use crate::server::ctx::Ctx;
use crate::server::script_host::Scripts;
use crate::server::{gate, latency, State};

impl State {
    /// Lends persistence what it works on, for one call.
    pub fn persistence(&mut self) -> Host<'_> {
        Host {
            config: &self.config,
            persist: &mut self.persist,
            dbs: &mut self.dbs,
            dirty: &mut self.dirty,
            extras: &mut self.scripting,
        }
    }
}

/// What a snapshot holds besides the keys comes from the scripting layer.
impl persist::Extras for Box<dyn Scripts> {
    fn used_memory(&self) -> usize {
        super::used_memory_beside(&**self)
    }

    fn library_codes(&self) -> Vec<&[u8]> {
        (**self).library_codes()
    }

    fn replace_libraries(&mut self, codes: &[Vec<u8>]) -> Result<(), String> {
        (**self).replace_libraries(codes)
    }

    fn flush_libraries(&mut self) {
        (**self).flush_libraries()
    }
}

/// Once per event-loop turn, before replies are flushed: the AOF's writes of the turn
/// (`aof::flush_turn`), their times sampled by the latency monitor as Redis names them.
pub fn flush_aof(st: &mut State) {
    let Some(t) = aof::flush_turn(&st.config, &mut st.persist) else {
        return;
    };
    latency::sample(st, t.event, t.write_ms);
    latency::sample(st, "aof-write", t.write_ms);
    if let Some(ms) = t.fsync_ms {
        latency::sample(st, "aof-fsync-always", ms);
    }
}

/// Loads the data set at start-up: the AOF when `appendonly yes` (dump.rdb is not read then, as
/// in Redis), else the RDB file if there is one.
pub fn load_at_startup(st: &mut State) -> Result<(), String> {
    if !st.config.appendonly {
        return persist::load_rdb_at_startup(&mut st.persistence());
    }
    aof::prepare_load(&mut st.persistence())?;
    let start = Instant::now();
    if load_aof(st)? > 0 {
        notice!(
            "DB loaded from append only file: {:.3} seconds",
            start.elapsed().as_secs_f64()
        );
    }
    aof::open_on_startup(&mut st.persistence())
        .map_err(|e| format!("Can't open the append-only file: {e}"))
}

/// DEBUG LOADAOF (Redis's `debug loadaof`): the data set and the function libraries are emptied,
/// and the AOF that the manifest on disk describes is loaded in their place; its commands are not
/// logged again. An error (no AOF at all, a file missing or corrupt) leaves the data set partly
/// loaded: Redis exits then.
pub fn reload_aof(st: &mut State) -> Result<(), String> {
    for db in st.dbs.iter_mut() {
        db.clear();
    }
    st.scripting.flush_libraries();
    aof::prepare_reload(&mut st.persistence())?;
    // The replayed commands must not be appended to the file they come from (nor propagate
    // anything: propagation asks the AOF's state).
    let state = std::mem::replace(&mut st.persist.aof.state, aof::AofState::Off);
    let loaded = load_aof(st);
    st.persist.aof.state = state;
    st.persist.aof.current_size = loaded?;
    Ok(())
}

/// Loads the files of the AOF manifest; returns their total size (0: nothing was loaded).
fn load_aof(st: &mut State) -> Result<u64, String> {
    let config = st.config.clone();
    let manifest = st.persist.aof.manifest.clone();
    let mut loader = AofLoader::new(st)?;
    aof::load_files(&config, &manifest, &mut loader)
}

/// Replays an AOF into the server: its RDB preamble into the keyspace, its commands through the
/// gate as a client of its own (no socket, so no monitor sees them) would send them.
struct AofLoader<'a> {
    st: &'a mut State,
    clients: Slab<Client>,
    id: usize,
}

impl<'a> AofLoader<'a> {
    fn new(st: &'a mut State) -> Result<AofLoader<'a>, String> {
        let (sock, _peer) = mio::net::UnixStream::pair()
            .map_err(|e| format!("Can't create the AOF loading client: {e}"))?;
        let mut clients = Slab::new();
        let mut c = Client::new(0, Conn::Unix(sock), -1, String::new(), String::new(), true);
        c.authenticated = true;
        let id = clients.insert(c);
        Ok(AofLoader { st, clients, id })
    }
}

impl persist::Loader for AofLoader<'_> {
    fn preamble(&mut self, data: &[u8], name: &str) -> Result<usize, String> {
        let st = &mut *self.st;
        let lim = persist::limits(&st.config);
        // Keys already expired stay: later commands of the file may still touch them (Redis loads
        // a preamble with RDBFLAGS_AOF_PREAMBLE for that reason).
        let info =
            rdb::load(data, &mut st.dbs, lim, st.config.rdbchecksum, i64::MIN).map_err(|e| {
                format!("Error reading the RDB base file {name}, AOF loading aborted: {e}")
            })?;
        st.scripting
            .replace_libraries(&info.functions)
            .map_err(|e| format!("Failed loading library from {name}: {e}"))?;
        notice!(
            "Done loading RDB, keys loaded: {}, keys expired: {}.",
            info.keys_loaded,
            info.keys_expired
        );
        Ok(info.end)
    }

    fn command(&mut self, args: Args) {
        let id = self.id;
        let mut out = std::mem::replace(&mut self.clients[id].out, Reply::new(false));
        out.buf.clear();
        out.errors.clear();
        let db = self.clients[id].db;
        let mut ctx = Ctx {
            srv: self.st,
            clients: &mut self.clients,
            id,
            db,
            out: &mut out,
            reactor: None,
        };
        gate::execute(&mut ctx, args);
        self.clients[id].out = out;
    }

    fn knows(&self, name: &[u8]) -> bool {
        self.st.table.find(name).is_some()
    }
}
