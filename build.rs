//! Builds the C parts: today only the long-double helper behind INCRBYFLOAT; the C scripting engines
//! (Jim Tcl, MicroPython, Wren) join here as their issues land.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/native/longdouble.c");
    cc::Build::new()
        .file("src/native/longdouble.c")
        .opt_level(2)
        .warnings(true)
        .compile("goblin_native");
}
