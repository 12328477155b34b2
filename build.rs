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
    build_wren();
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

// ---- Wren ----

/// Must match the `ruwren-sys` version pinned in Cargo.toml (its bundled Wren 0.4 source).
const WREN_SRC_CRATE: &str = "ruwren-sys-0.4.10";

/// The `ruwren-sys` crate directory Cargo downloaded (holding `src/`, `include/`, `optional/`), or
/// `GOBLIN_WREN_SRC`.
fn wren_source() -> PathBuf {
    println!("cargo:rerun-if-env-changed=GOBLIN_WREN_SRC");
    if let Some(dir) = std::env::var_os("GOBLIN_WREN_SRC") {
        return PathBuf::from(dir);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registry = cargo_home.join("registry").join("src");
    for index in std::fs::read_dir(&registry).expect("cargo registry sources") {
        let dir = index.unwrap().path().join(WREN_SRC_CRATE);
        if dir.join("src").join("wren_vm.c").exists() {
            return dir;
        }
    }
    panic!(
        "{WREN_SRC_CRATE} sources not found under {}; set GOBLIN_WREN_SRC to its directory",
        registry.display()
    );
}

/// Copies Wren's C source to `OUT_DIR`, applies our patch (`vendor/wren/goblin.patch`: safe points
/// in the interpreter loop and the memory limit, see `vendor/wren/README.md`) and compiles it with
/// the `meta` and `random` optional modules.
fn build_wren() {
    println!("cargo:rerun-if-changed=vendor/wren");
    let src = wren_source();
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("wren");
    let _ = std::fs::remove_dir_all(&out);
    for dir in ["src", "include", "optional"] {
        std::fs::create_dir_all(out.join(dir)).unwrap();
        for entry in std::fs::read_dir(src.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, out.join(dir).join(path.file_name().unwrap())).unwrap();
        }
    }
    let patch = std::fs::canonicalize("vendor/wren/goblin.patch").unwrap();
    let st = Command::new("patch")
        .args(["-p1", "--quiet", "--no-backup-if-mismatch", "-d"])
        .arg(&out)
        .arg("-i")
        .arg(&patch)
        .status()
        .expect("patch is needed to build the Wren engine");
    assert!(st.success(), "vendor/wren/goblin.patch does not apply");
    let mut b = cc::Build::new();
    for dir in ["src", "optional"] {
        for entry in std::fs::read_dir(out.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "c") {
                b.file(path);
            }
        }
    }
    b.include(out.join("include"))
        .include(out.join("src"))
        .include(out.join("optional"))
        .std("c99")
        .opt_level(2)
        .warnings(false)
        .compile("goblin_wren");
}
