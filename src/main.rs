//! Goblin Core: a drop-in, Redis-compatible server. One thread, one event loop.
//!
//! `goblin-core [/path/to/redis.conf] [--directive value ...]`, exactly like redis-server; with no
//! arguments it starts on the embedded defaults (127.0.0.1:6379, no persistence).

use std::path::PathBuf;

use goblin_core::{alloc, config, log, notice, server, warning};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

fn cli() -> clap::Command {
    clap::Command::new("goblin-core")
        .version(env!("CARGO_PKG_VERSION"))
        .about("A drop-in, Redis-compatible server with embedded scripting engines")
        .override_usage(
            "goblin-core [/path/to/redis.conf] [--directive value ...]\n       goblin-core --port 7777\n       goblin-core /etc/redis/6379.conf --loglevel verbose",
        )
        .arg(
            clap::Arg::new("args")
                .num_args(0..)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .help("A config file (or - for stdin) first, then --directive value overrides"),
        )
}

fn main() -> ExitCode {
    let matches = cli().get_matches();
    let args: Vec<String> = matches
        .get_many::<String>("args")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    let (file, overrides) = match args.first() {
        Some(first) if !first.starts_with("--") => (Some(PathBuf::from(first)), &args[1..]),
        _ => (None, &args[..]),
    };
    let mut config = match config::load(file.as_deref(), overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let table = server::table::Table::build(goblin_core::cmd::families());
    if let Err(e) = server::acl::check_config_users(&table, &config) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = log::configure(config.loglevel, &config.logfile) {
        eprintln!("Can't open the log file: {e}");
        return ExitCode::FAILURE;
    }
    notice!("oO0OoO0OoO0Oo Goblin Core is starting oO0OoO0OoO0Oo");
    notice!(
        "Goblin Core version={}, Redis compatibility={}, bits=64, pid={}, just started",
        env!("CARGO_PKG_VERSION"),
        config::REDIS_VERSION,
        std::process::id()
    );
    // As redis-server: a supervised server stays in the foreground; otherwise `daemonize yes`
    // forks into the background, once it has logged that it is starting and before any thread or
    // socket exists.
    let supervised = server::supervise::start(&config);
    let background = config.daemonize && !supervised;
    if background {
        server::supervise::daemonize();
    }
    if file.is_none() {
        warning!("Warning: no config file specified, using the default config. In order to specify a config file use goblin-core /path/to/redis.conf");
    } else {
        notice!("Configuration loaded");
    }
    // A daemon always has a PID file (Redis's default path when none is set).
    if background && config.pidfile.is_empty() {
        config.pidfile = "/var/run/redis.pid".into();
    }
    if !config.pidfile.is_empty() {
        if let Err(e) = std::fs::write(&config.pidfile, format!("{}\n", std::process::id())) {
            warning!("Failed to write PID file: {e}");
        }
    }
    let config_file = file
        .filter(|f| f.as_os_str() != "-")
        .map(|f| std::fs::canonicalize(&f).unwrap_or(f));
    // As Redis by default: no transparent huge pages (a fork's copy-on-write of huge pages stalls).
    #[cfg(target_os = "linux")]
    if config.disable_thp {
        // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
    goblin_core::config::oom::apply(&config, goblin_core::config::oom::Class::Server);
    let scripting = Box::new(goblin_core::script::Scripting::new(&config));
    let mut state = server::State::new(config, config_file, table, scripting);
    if let Err(e) = server::acl::load_at_startup(&mut state) {
        warning!("{e}");
        return ExitCode::FAILURE;
    }
    let mut srv = match server::Server::new(state) {
        Ok(s) => s,
        Err(e) => {
            warning!("Failed listening: {e}");
            return ExitCode::FAILURE;
        }
    };
    notice!("Running mode=standalone, port={}.", srv.tcp_port());
    srv.state.startup_memory = srv.state.used_memory();
    if let Err(e) = server::persistence::load_at_startup(&mut srv.state) {
        warning!("{e}");
        return ExitCode::FAILURE;
    }
    let maxmemory = srv.state.config.maxmemory;
    if maxmemory > 0 && maxmemory < 1024 * 1024 {
        warning!("WARNING: You specified a maxmemory value that is less than 1MB (current value is {maxmemory} bytes). Are you sure this is what you really want?");
    }
    server::log_ready(&srv);
    match srv.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            warning!("Event loop failed: {e}");
            ExitCode::FAILURE
        }
    }
}
