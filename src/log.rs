//! Logging in Redis's line format: `pid:M 02 Dec 2026 19:10:15.123 * message`, to stdout or to
//! `logfile`, filtered by `loglevel` (debug `.`, verbose `-`, notice `*`, warning `#`).

use std::cell::RefCell;
use std::io::Write;

#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub enum Level {
    Debug,
    Verbose,
    Notice,
    Warning,
}

struct Logger {
    min: u8,
    file: Option<std::fs::File>,
}

thread_local! {
    static LOGGER: RefCell<Logger> = const { RefCell::new(Logger { min: 2, file: None }) };
}

fn level_rank(name: &str) -> u8 {
    match name {
        "debug" => 0,
        "verbose" => 1,
        "notice" => 2,
        _ => 3, // "warning"
    }
}

/// (Re)configures the logger from `loglevel` and `logfile`.
pub fn configure(loglevel: &str, logfile: &str) -> std::io::Result<()> {
    let file = if logfile.is_empty() {
        None
    } else {
        Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(logfile)?,
        )
    };
    LOGGER.with(|l| {
        let mut l = l.borrow_mut();
        l.min = level_rank(loglevel);
        l.file = file;
    });
    Ok(())
}

pub fn set_level(loglevel: &str) {
    LOGGER.with(|l| l.borrow_mut().min = level_rank(loglevel));
}

/// Redis's role mark in each line: `M` for the server, `C` for a child writing a snapshot.
static ROLE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(b'M');

/// Marks this process's lines as a child's (`C`), as Redis's forked saver logs.
pub fn set_child_role() {
    ROLE.store(b'C', std::sync::atomic::Ordering::Relaxed);
}

pub fn log(level: Level, msg: &str) {
    LOGGER.with(|l| {
        let mut l = l.borrow_mut();
        if (level as u8) < l.min {
            return;
        }
        let mark = match level {
            Level::Debug => '.',
            Level::Verbose => '-',
            Level::Notice => '*',
            Level::Warning => '#',
        };
        let line = format!(
            "{}:{} {} {} {}\n",
            std::process::id(),
            ROLE.load(std::sync::atomic::Ordering::Relaxed) as char,
            timestamp(),
            mark,
            msg
        );
        match l.file.as_mut() {
            Some(f) => {
                let _ = f.write_all(line.as_bytes());
            }
            None => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes());
                let _ = out.flush();
            }
        }
    });
}

/// Local time as Redis prints it: `02 Dec 2026 19:10:15.123`.
fn timestamp() -> String {
    let us = crate::util::clock::wall_us();
    let secs = (us / 1_000_000) as libc::time_t;
    let ms = (us / 1000) % 1000;
    // SAFETY: localtime_r and strftime write only into the buffers passed.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut tm);
        let mut buf = [0u8; 64];
        let n = libc::strftime(
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
            c"%d %b %Y %H:%M:%S".as_ptr(),
            &tm,
        );
        format!("{}.{:03}", String::from_utf8_lossy(&buf[..n]), ms)
    }
}

#[macro_export]
macro_rules! notice { ($($t:tt)*) => { $crate::log::log($crate::log::Level::Notice, &format!($($t)*)) } }
#[macro_export]
macro_rules! warning { ($($t:tt)*) => { $crate::log::log($crate::log::Level::Warning, &format!($($t)*)) } }
#[macro_export]
macro_rules! verbose { ($($t:tt)*) => { $crate::log::log($crate::log::Level::Verbose, &format!($($t)*)) } }
