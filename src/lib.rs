//! Goblin Core's library: everything but the command line, so the integration tests and the
//! benchmarks can reach the same code the binary runs.
//!
//! Layout: `server` (reactor, clients, the dispatch gate), `resp` (parser, reply builder), `cmd` (the
//! command table and one file per command family), `store` (keyspace, values, expiry), `config`.

pub mod alloc;
pub mod cmd;
pub mod config;
pub mod log;
pub mod persist;
pub mod resp;
pub mod script;
pub mod server;
pub mod store;
pub mod util;
