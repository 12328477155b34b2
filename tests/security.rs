//! Protected mode and protected configs, compared with Debian's redis-server: a client from a
//! loopback address other than 127.0.0.1 is refused while no password is set, and CONFIG SET of
//! `dir` and `dbfilename` is refused unless `enable-protected-configs` allows it.

mod common;

use common::{goblin, redis, show, Raw, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::FromRawFd;
use std::time::Duration;

/// A TCP connection to 127.0.0.1:`port` whose own address is `from` (another 127/8 address): as
/// a client on another host looks to the server, without leaving the machine.
fn connect_from(from: [u8; 4], port: u16) -> TcpStream {
    fn sockaddr(ip: [u8; 4], port: u16) -> libc::sockaddr_in {
        libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(ip),
            },
            sin_zero: [0; 8],
        }
    }
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a fresh socket, bound and connected with valid sockaddr_in values, then owned by
    // the TcpStream.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let local = sockaddr(from, 0);
        assert_eq!(
            libc::bind(fd, &local as *const _ as *const libc::sockaddr, len),
            0
        );
        let remote = sockaddr([127, 0, 0, 1], port);
        assert_eq!(
            libc::connect(fd, &remote as *const _ as *const libc::sockaddr, len),
            0
        );
        let s = TcpStream::from_raw_fd(fd);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }
}

/// What a server sends a client from `from` that sends PING, until it closes the connection.
fn greeting_from(from: [u8; 4], port: u16) -> Vec<u8> {
    let mut s = connect_from(from, port);
    let _ = s.write_all(b"PING\r\n");
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

fn both(args: &[&str]) -> [(&'static str, Server); 2] {
    [("redis", redis(args)), ("goblin", goblin(args))]
}

/// Protected mode (the default) refuses a client from 127.0.0.2 with Redis's exact DENIED text and
/// closes it; 127.0.0.1 is served; a password or `protected-mode no` lets 127.0.0.2 in.
#[test]
fn protected_mode_refuses_other_addresses() {
    let [(_, r), (_, g)] = both(&[]);
    let denied = greeting_from([127, 0, 0, 2], r.port);
    assert!(denied.starts_with(b"-DENIED Redis is running in protected mode"));
    assert_eq!(show(&greeting_from([127, 0, 0, 2], g.port)), show(&denied));
    let mut c = g.raw();
    assert_eq!(c.cmd_str("PING"), b"+PONG\r\n");
    let rejected = common::info_field(&mut c, "rejected_connections");
    assert_eq!(rejected, Some(1));

    for args in [
        &["--protected-mode", "no"][..],
        &["--requirepass", "secret"][..],
    ] {
        for (name, s) in both(args) {
            let mut c = connect_from([127, 0, 0, 2], s.port);
            c.write_all(b"PING\r\n").unwrap();
            let mut buf = [0u8; 64];
            let n = c.read(&mut buf).unwrap();
            let expect: &[u8] = if args[0] == "--requirepass" {
                b"-NOAUTH Authentication required.\r\n"
            } else {
                b"+PONG\r\n"
            };
            assert_eq!(show(&buf[..n]), show(expect), "{name} {args:?}");
        }
    }
}

/// CONFIG SET dir / dbfilename: refused by default with Redis's error (so CONFIG SET dir + SAVE
/// can't write a file anywhere), allowed with `enable-protected-configs yes`, and with `local`
/// from 127.0.0.1 but not from 127.0.0.2. The directive itself can't be changed at run time.
#[test]
fn protected_configs() {
    let cases: &[&[&str]] = &[
        &["CONFIG", "SET", "dir", "/tmp"],
        &["CONFIG", "SET", "dbfilename", "evil.rdb"],
        &["CONFIG", "SET", "maxmemory", "0", "dir", "/tmp"],
        &["CONFIG", "GET", "enable-protected-configs"],
        &["CONFIG", "SET", "enable-protected-configs", "yes"],
    ];
    let [(_, r), (_, g)] = both(&["--protected-mode", "no"]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for args in cases {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let expect = rc.cmd(&args);
        assert_eq!(show(&gc.cmd(&args)), show(&expect), "{args:?}");
    }
    assert_eq!(
        show(&gc.cmd_str("CONFIG SET dir /tmp")),
        "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\\r\\n"
    );
    // Nothing changed: the save still goes where it went.
    assert_eq!(
        gc.cmd_str("CONFIG GET dbfilename"),
        b"*2\r\n$10\r\ndbfilename\r\n$8\r\ndump.rdb\r\n"
    );

    for setting in ["yes", "local"] {
        for (name, s) in both(&[
            "--protected-mode",
            "no",
            "--enable-protected-configs",
            setting,
        ]) {
            let dir = std::env::temp_dir().join(format!("goblin-protected-{name}-{}", s.port));
            std::fs::create_dir_all(&dir).unwrap();
            let set = format!("CONFIG SET dir {}", dir.display());
            let mut local = s.raw();
            assert_eq!(local.cmd_str(&set), b"+OK\r\n", "{name} {setting}");
            assert_eq!(
                local.cmd_str("CONFIG SET dbfilename other.rdb"),
                b"+OK\r\n",
                "{name} {setting}"
            );
            let mut far = Raw::over(connect_from([127, 0, 0, 2], s.port));
            let got = show(&far.cmd_str("CONFIG SET dbfilename third.rdb"));
            if setting == "yes" {
                assert_eq!(got, "+OK\\r\\n", "{name}");
            } else {
                assert_eq!(
                    got,
                    "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\\r\\n",
                    "{name}"
                );
            }
            assert_eq!(local.cmd_str("CONFIG SET dir /"), b"+OK\r\n");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
