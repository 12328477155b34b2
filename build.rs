//! Builds the C parts: the long-double helper behind INCRBYFLOAT, and the Lua 5.1 engine.
//!
//! Lua 5.1.5 comes from the `lua-src` crate (pinned in Cargo.toml, checksummed by Cargo.lock). We
//! compile its sources ourselves because two of our own changes go in at build time (see
//! `vendor/lua51/README.md`): every exported C symbol is renamed with the `gl51_` prefix, so Luau's
//! `lua_*` functions can be linked into the same binary without clashing or, worse, silently
//! binding to the wrong VM; and table writes in `lvm.c`/`lapi.c` go through our read-only check
//! (Redis 7's read-only globals and library tables).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Must match the `lua-src` version pinned in Cargo.toml.
const LUA_SRC_CRATE: &str = "lua-src-550.1.1";
const PREFIX: &str = "gl51_";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/native/longdouble.c");
    println!("cargo:rerun-if-changed=vendor/lua51");
    println!("cargo:rerun-if-env-changed=GOBLIN_LUA51_SRC");
    cc::Build::new()
        .file("src/native/longdouble.c")
        .opt_level(2)
        .warnings(true)
        .compile("goblin_native");
    build_lua51();
    build_tcl();
}

/// The `lua-5.1.5` directory of the `lua-src` crate Cargo downloaded, or `GOBLIN_LUA51_SRC`.
fn lua51_source() -> PathBuf {
    if let Some(dir) = std::env::var_os("GOBLIN_LUA51_SRC") {
        return PathBuf::from(dir);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registry = cargo_home.join("registry").join("src");
    for index in std::fs::read_dir(&registry).expect("cargo registry sources") {
        let dir = index.unwrap().path().join(LUA_SRC_CRATE).join("lua-5.1.5");
        if dir.join("lvm.c").exists() {
            return dir;
        }
    }
    panic!(
        "{LUA_SRC_CRATE} sources not found under {}; set GOBLIN_LUA51_SRC to a lua-5.1.5 directory",
        registry.display()
    );
}

fn lua_build(src: &Path) -> cc::Build {
    let mut b = cc::Build::new();
    b.include(src)
        .define("LUA_USE_POSIX", None)
        .opt_level(2)
        .warnings(false)
        .flag_if_supported("-fno-common");
    b
}

fn build_lua51() {
    let src = lua51_source();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // The Lua VM and API files whose table writes must honour read-only tables.
    let guarded = ["lvm.c", "lapi.c"];
    let mut core = lua_build(&src);
    let mut checked = lua_build(&src);
    checked
        .define("luaH_set", "goblin_ro_luaH_set")
        .define("luaH_setnum", "goblin_ro_luaH_setnum");
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".c") || matches!(name.as_str(), "lua.c" | "luac.c" | "print.c") {
            continue;
        }
        if guarded.contains(&name.as_str()) {
            checked.file(&path);
        } else {
            core.file(&path);
        }
    }
    core.file("vendor/lua51/glue.c");
    core.compile("gl51_core");
    checked.compile("gl51_checked");

    // Rename every global symbol the two archives define (our glue's `goblin_*` entry points keep
    // their names), in the archives themselves, so references between them follow.
    let archives = [out.join("libgl51_core.a"), out.join("libgl51_checked.a")];
    let mut map = String::new();
    for a in &archives {
        let nm = Command::new("nm")
            .args(["-g", "--defined-only", "-P"])
            .arg(a)
            .output()
            .expect("nm (binutils) is needed to build the Lua engine");
        assert!(nm.status.success(), "nm failed on {}", a.display());
        for line in String::from_utf8_lossy(&nm.stdout).lines() {
            let mut f = line.split_whitespace();
            let (Some(sym), Some(kind)) = (f.next(), f.next()) else {
                continue;
            };
            if sym.ends_with(':') || sym.starts_with("goblin_") || kind == "U" {
                continue;
            }
            map.push_str(&format!("{sym} {PREFIX}{sym}\n"));
        }
    }
    // The checked setters are defined by our glue under their own names but referenced as luaH_*
    // from nowhere else; nothing to add. Symbols the glue defines with `goblin_` keep their name.
    let map_file = out.join("gl51.syms");
    std::fs::write(&map_file, &map).unwrap();
    for a in &archives {
        let st = Command::new("objcopy")
            .arg(format!("--redefine-syms={}", map_file.display()))
            .arg(a)
            .status()
            .expect("objcopy (binutils) is needed to build the Lua engine");
        assert!(st.success(), "objcopy failed on {}", a.display());
    }
    // A clash would mean a symbol escaped renaming: fail the build rather than link wrongly.
    assert!(
        map.lines().any(|l| l.starts_with("lua_pushnil ")),
        "Lua symbols were not found for renaming"
    );
}

// ---- Jim Tcl, the TCL.EVAL engine (see vendor/jim/README.md) ----

/// Must match the `jimtcl-sys` version pinned in Cargo.toml (it carries Jim 0.84's sources).
const JIM_CRATE: &str = "jimtcl-sys-0.2.2+0.84";

/// The `jimtcl` directory of the `jimtcl-sys` crate Cargo downloaded, or `GOBLIN_JIM_SRC`.
fn jim_source() -> PathBuf {
    if let Some(dir) = std::env::var_os("GOBLIN_JIM_SRC") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registry = home.join("registry").join("src");
    std::fs::read_dir(&registry)
        .expect("cargo registry sources")
        .map(|index| index.unwrap().path().join(JIM_CRATE).join("jimtcl"))
        .find(|dir| dir.join("jim.c").exists())
        .unwrap_or_else(|| {
            panic!(
                "{JIM_CRATE} sources not found under {}; set GOBLIN_JIM_SRC to a Jim 0.84 source tree",
                registry.display()
            )
        })
}

/// Copies Jim's core sources to `OUT_DIR/jim`, applies our interrupt patch, and compiles the core
/// interpreter with our configuration headers and glue.
fn build_tcl() {
    println!("cargo:rerun-if-changed=vendor/jim");
    println!("cargo:rerun-if-env-changed=GOBLIN_JIM_SRC");
    let src = jim_source();
    let dir = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("jim");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if matches!(path.extension().and_then(|e| e.to_str()), Some("c" | "h")) {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    let patch = std::fs::canonicalize("vendor/jim/interrupt.patch").unwrap();
    let st = Command::new("patch")
        .args(["-p1", "-s", "-d"])
        .arg(&dir)
        .arg("-i")
        .arg(&patch)
        .status()
        .expect("patch is needed to build the Jim Tcl engine");
    assert!(st.success(), "vendor/jim/interrupt.patch did not apply");
    let mut b = cc::Build::new();
    b.include(&dir)
        .include("vendor/jim")
        .define("_GNU_SOURCE", None)
        .opt_level(2)
        .warnings(false);
    for f in ["jim.c", "jim-subcmd.c", "jim-format.c", "utf8.c"] {
        b.file(dir.join(f));
    }
    b.file("vendor/jim/glue.c");
    // One relocatable object whose only global symbols are those the Rust binding declares
    // (src/script/tcl/ffi.rs), so Jim's other symbols (utf8_fromunicode, Jim's internals) cannot
    // clash with another engine's at link time.
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let merged = out.join("goblin_jim.o");
    let st = Command::new("ld")
        .arg("-r")
        .arg("-o")
        .arg(&merged)
        .args(b.compile_intermediates())
        .status()
        .expect("ld (binutils) is needed to build the Jim Tcl engine");
    assert!(st.success(), "ld -r failed for the Jim Tcl objects");
    println!("cargo:rerun-if-changed=src/script/tcl/ffi.rs");
    let binding = std::fs::read_to_string("src/script/tcl/ffi.rs").unwrap();
    let keep: String = binding
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix("pub fn ")
                .or_else(|| l.strip_prefix("pub static mut "))?;
            let name = rest.split(['(', ':']).next()?;
            name.starts_with("Jim_")
                .then_some(name)
                .or_else(|| name.starts_with("goblin_jim_").then_some(name))
        })
        .map(|n| format!("{n}\n"))
        .collect();
    assert!(
        keep.contains("Jim_EvalObjVector\n"),
        "no Jim symbols found in ffi.rs"
    );
    let keep_file = out.join("goblin_jim.keep");
    std::fs::write(&keep_file, keep).unwrap();
    let st = Command::new("objcopy")
        .arg(format!("--keep-global-symbols={}", keep_file.display()))
        .arg(&merged)
        .status()
        .expect("objcopy (binutils) is needed to build the Jim Tcl engine");
    assert!(st.success(), "objcopy failed on the Jim Tcl object");
    let lib = out.join("libgoblin_jim.a");
    let _ = std::fs::remove_file(&lib);
    let st = Command::new("ar")
        .arg("crs")
        .arg(&lib)
        .arg(&merged)
        .status()
        .expect("ar (binutils) is needed to build the Jim Tcl engine");
    assert!(st.success(), "ar failed for the Jim Tcl library");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=goblin_jim");
}
