//! SIGINT/SIGTERM as reactor events: the handler writes the signal number to a self-pipe that the
//! event loop polls (the only async-signal-safe way to wake it).

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use mio::net::UnixStream;

static WRITE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = WRITE_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; the fd stays open for the process's life.
        unsafe {
            libc::write(fd, &b as *const u8 as *const libc::c_void, 1);
        }
    }
}

pub struct SignalPipe {
    read: UnixStream,
    _write: UnixStream,
}

impl SignalPipe {
    pub fn install() -> io::Result<SignalPipe> {
        let (read, write) = UnixStream::pair()?;
        WRITE_FD.store(write.as_raw_fd(), Ordering::Relaxed);
        // SAFETY: installing a handler that only calls write(2).
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        Ok(SignalPipe {
            read,
            _write: write,
        })
    }

    pub fn source(&mut self) -> &mut UnixStream {
        &mut self.read
    }

    /// The last signal received, if any.
    pub fn drain(&mut self) -> Option<i32> {
        let mut buf = [0u8; 16];
        let mut last = None;
        while let Ok(n) = self.read.read(&mut buf) {
            if n == 0 {
                break;
            }
            last = Some(buf[n - 1] as i32);
        }
        last
    }
}
