//! Running under a service manager, as redis-server does: `daemonize yes` forks into the
//! background (unless supervised), `supervised systemd` reports readiness and shutdown on
//! `NOTIFY_SOCKET` (sd_notify's protocol), `supervised upstart` stops itself (SIGSTOP) to signal
//! it started, `supervised auto` picks by `UPSTART_JOB` or `NOTIFY_SOCKET`.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::Config;

/// Supervised by systemd: readiness and stopping are reported.
static SYSTEMD: AtomicBool = AtomicBool::new(false);

/// Redis's `redisIsSupervised`: whether a supervisor runs the server (then it never daemonizes).
pub fn start(config: &Config) -> bool {
    let mut mode = config.supervised;
    if mode == "auto" {
        if std::env::var_os("UPSTART_JOB").is_some() {
            crate::verbose!("Upstart supervision detected.");
            mode = "upstart";
        } else if std::env::var_os("NOTIFY_SOCKET").is_some() {
            crate::verbose!("Systemd supervision detected.");
            mode = "systemd";
        }
    }
    match mode {
        "upstart" => {
            if std::env::var_os("UPSTART_JOB").is_none() {
                crate::warning!("upstart supervision requested, but UPSTART_JOB not found!");
                return false;
            }
            crate::notice!("supervised by upstart, will stop to signal readiness.");
            // SAFETY: raising a signal at this process.
            unsafe { libc::raise(libc::SIGSTOP) };
            std::env::remove_var("UPSTART_JOB");
            true
        }
        "systemd" => {
            if !send("STATUS=Goblin Core is loading...\n") {
                return false;
            }
            SYSTEMD.store(true, Ordering::Relaxed);
            crate::notice!("Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.");
            true
        }
        _ => false,
    }
}

/// The server accepts connections.
pub fn ready() {
    if SYSTEMD.load(Ordering::Relaxed) {
        send("STATUS=Ready to accept connections\n");
        send("READY=1\n");
    }
}

/// The server is shutting down.
pub fn stopping() {
    if SYSTEMD.load(Ordering::Relaxed) {
        send("STOPPING=1\n");
    }
}

/// One sd_notify message to `NOTIFY_SOCKET` (a path, or `@name` for an abstract socket).
fn send(msg: &str) -> bool {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        crate::warning!(
            "systemd supervision requested or auto-detected, but NOTIFY_SOCKET is not set"
        );
        return false;
    };
    let target = target.to_string_lossy().into_owned();
    let sent = (|| -> std::io::Result<()> {
        let sock = std::os::unix::net::UnixDatagram::unbound()?;
        match target.strip_prefix('@') {
            Some(name) => {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
                sock.send_to_addr(msg.as_bytes(), &addr)?;
            }
            None => {
                sock.send_to(msg.as_bytes(), &target)?;
            }
        }
        Ok(())
    })();
    if let Err(e) = &sent {
        crate::warning!("Can't send notification to systemd: {e}");
    }
    sent.is_ok()
}

/// Redis's `daemonize`: the parent exits, the child leads a new session with its standard
/// streams on /dev/null. Called before any thread starts.
pub fn daemonize() {
    // SAFETY: fork with one thread; the parent only exits.
    unsafe {
        if libc::fork() != 0 {
            libc::_exit(0);
        }
        libc::setsid();
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
        if fd != -1 {
            libc::dup2(fd, libc::STDIN_FILENO);
            libc::dup2(fd, libc::STDOUT_FILENO);
            libc::dup2(fd, libc::STDERR_FILENO);
            if fd > libc::STDERR_FILENO {
                libc::close(fd);
            }
        }
    }
}
