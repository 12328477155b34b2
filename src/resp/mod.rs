//! RESP: the request parser (multibulk and inline) and the reply builder.

pub mod parser;
pub mod reply;
