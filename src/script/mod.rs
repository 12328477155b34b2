//! Scripting: the libraries Redis ships to Lua scripts (`codec`), written in Rust.

pub mod codec;
