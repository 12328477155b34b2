//! RESP: the request parser (multibulk and inline) and the reply builder.

pub mod parser;
pub mod reply;

/// A command as a RESP array of bulk strings, the form the parser reads: what the AOF holds and
/// what propagation hands on.
pub fn command(args: &[&[u8]]) -> Vec<u8> {
    command_from(args.len(), args.iter().copied())
}

/// `command` for `n` arguments given by an iterator.
pub fn command_from<'a>(n: usize, args: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + 32 * n);
    let mut tmp = [0u8; 20];
    b.push(b'*');
    b.extend_from_slice(crate::util::fmt_i64(n as i64, &mut tmp));
    b.extend_from_slice(b"\r\n");
    for a in args {
        b.push(b'$');
        b.extend_from_slice(crate::util::fmt_i64(a.len() as i64, &mut tmp));
        b.extend_from_slice(b"\r\n");
        b.extend_from_slice(a);
        b.extend_from_slice(b"\r\n");
    }
    b
}
