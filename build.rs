//! Builds the C parts: the long-double helper behind INCRBYFLOAT and the Lua 5.1, Wren,
//! MicroPython and Jim Tcl engines.
//!
//! Lua 5.1.5 comes from the `lua-src` crate (pinned in Cargo.toml, checksummed by Cargo.lock). We
//! compile its sources ourselves because our own changes go in at build time (see
//! `vendor/lua51/README.md`): every exported C symbol is renamed with the `gl51_` prefix, so Luau's
//! `lua_*` functions can be linked into the same binary without clashing or, worse, silently
//! binding to the wrong VM; table writes in `lvm.c`/`lapi.c` go through our read-only check
//! (Redis 7's read-only globals and library tables); and `vendor/lua51/goblin.patch`, applied to a
//! copy of the sources, hashes every byte of a string (as Redis's Lua), gives long loops inside
//! library functions (the pattern matcher, table.sort...) a step budget, and bounds the pattern
//! matcher's recursion.

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
    build_micropython();
    build_tcl();
}

/// A C source tree some crate carries: `$env` if set, else `<crate>/<subdir>` in Cargo's registry
/// sources (found by the file `marker` in it). Cargo downloaded the crate (pinned in Cargo.toml,
/// checksummed by Cargo.lock); we compile its sources ourselves, with our patches.
fn crate_source(env: &str, krate: &str, subdir: &str, marker: &str) -> PathBuf {
    println!("cargo:rerun-if-env-changed={env}");
    if let Some(dir) = std::env::var_os(env) {
        return PathBuf::from(dir);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registry = cargo_home.join("registry").join("src");
    std::fs::read_dir(&registry)
        .expect("cargo registry sources")
        .map(|index| index.unwrap().path().join(krate).join(subdir))
        .find(|dir| dir.join(marker).exists())
        .unwrap_or_else(|| {
            panic!(
                "{krate} sources not found under {}; set {env} to where its sources are",
                registry.display()
            )
        })
}

/// The `lua-5.1.5` directory of the `lua-src` crate Cargo downloaded, or `GOBLIN_LUA51_SRC`.
fn lua51_source() -> PathBuf {
    crate_source("GOBLIN_LUA51_SRC", LUA_SRC_CRATE, "lua-5.1.5", "lvm.c")
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
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let src = patched_copy(
        &lua51_source(),
        &out.join("lua51"),
        "vendor/lua51/goblin.patch",
        "Lua 5.1",
    );
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

/// Copies the C sources and headers of `src` (not its subdirectories) to `dir`, afresh, and applies
/// `patch` (paths `a/<file>`) there: the crate's own files are never touched.
fn patched_copy(src: &Path, dir: &Path, patch: &str, what: &str) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        if matches!(path.extension().and_then(|e| e.to_str()), Some("c" | "h")) {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    apply_patch(dir, patch, what);
    dir.to_path_buf()
}

/// Applies `patch` (paths `a/<file>`, relative to `dir`) in `dir`.
fn apply_patch(dir: &Path, patch: &str, what: &str) {
    let st = Command::new("patch")
        .args(["-p1", "-s", "--no-backup-if-mismatch", "-d"])
        .arg(dir)
        .arg("-i")
        .arg(std::fs::canonicalize(patch).unwrap())
        .status()
        .unwrap_or_else(|e| panic!("patch is needed to build the {what} engine ({e})"));
    assert!(st.success(), "{patch} does not apply");
}

// ---- Wren ----

/// Must match the `ruwren-sys` version pinned in Cargo.toml (its bundled Wren 0.4 source).
const WREN_SRC_CRATE: &str = "ruwren-sys-0.4.10";

/// The `ruwren-sys` crate directory Cargo downloaded (holding `src/`, `include/`, `optional/`), or
/// `GOBLIN_WREN_SRC`.
fn wren_source() -> PathBuf {
    crate_source("GOBLIN_WREN_SRC", WREN_SRC_CRATE, ".", "src/wren_vm.c")
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

// ---- MicroPython (the UPYTHON.EVAL engine) ----
//
// No crate carries MicroPython, and no third-party source is kept in the repository: the source is
// Debian's source package `micropython` 1.25.0+ds-1 (trixie), fetched once into a cache directory
// under the target directory with apt-get's source download (its own source list and state, the
// system's apt configuration untouched) and checked against the SHA-256 below. Its embed port
// generates a self-contained C tree (the qstr and module tables for our `mpconfigport.h`) into
// OUT_DIR; we compile that tree with our port files from `vendor/micropython/`, link it into one
// relocatable object and localise every symbol but our glue's (`-fvisibility=hidden` + `ld -r` +
// `objcopy --localize-hidden`), so nothing clashes with another engine (Jim Tcl also defines
// `utf8_charlen`). `GOBLIN_MICROPYTHON_SRC` may name any MicroPython 1.25 source tree instead.

const MICROPYTHON_PACKAGE: &str = "micropython";
const MICROPYTHON_TARBALL: &str = "micropython_1.25.0+ds.orig.tar.xz";
const MICROPYTHON_TARBALL_SHA256: &str =
    "7b25be99a502f070b2de81dafc08da7051d992325d6e67daa9045a918fffdbea";
const MICROPYTHON_DIR: &str = "micropython-1.25.0";

fn build_micropython() {
    println!("cargo:rerun-if-changed=vendor/micropython");
    println!("cargo:rerun-if-env-changed=GOBLIN_MICROPYTHON_SRC");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let top = micropython_source(&out);
    let embed = micropython_generate(&top, &out);
    micropython_compile(&embed, &out);
}

fn run_tool(cmd: &mut Command, what: &str, hint: &str) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot run {:?} ({e}); {hint}", cmd.get_program()));
    assert!(status.success(), "{what} failed ({status}); {hint}");
}

/// The MicroPython source tree: `GOBLIN_MICROPYTHON_SRC`, or Debian's tarball (fetched into the
/// cache when absent, checked) unpacked into OUT_DIR.
fn micropython_source(out: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("GOBLIN_MICROPYTHON_SRC") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("ports/embed/embed.mk").exists(),
            "GOBLIN_MICROPYTHON_SRC={} is not a MicroPython 1.25 source tree (no ports/embed/embed.mk)",
            dir.display()
        );
        return dir;
    }
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out: the cache sits beside <profile>.
    let target = out
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "build"))
        .and_then(|b| b.parent()?.parent())
        .unwrap_or(out);
    let cache = target.join("micropython-source");
    let tarball = cache.join(MICROPYTHON_TARBALL);
    if !tarball.exists() {
        micropython_fetch(&cache);
    }
    let sum = Command::new("sha256sum")
        .arg(&tarball)
        .output()
        .expect("sha256sum (coreutils) is needed to check the MicroPython source");
    let sum = String::from_utf8_lossy(&sum.stdout);
    assert!(
        sum.split_whitespace().next() == Some(MICROPYTHON_TARBALL_SHA256),
        "{} has SHA-256 {} but the build expects {MICROPYTHON_TARBALL_SHA256}: delete it to fetch it again, \
         or set GOBLIN_MICROPYTHON_SRC to a MicroPython 1.25 source tree",
        tarball.display(),
        sum.split_whitespace().next().unwrap_or("?")
    );
    let unpacked = out.join("micropython-src");
    let top = unpacked.join(MICROPYTHON_DIR);
    if !top.join("ports/embed/embed.mk").exists() {
        let _ = std::fs::remove_dir_all(&unpacked);
        std::fs::create_dir_all(&unpacked).unwrap();
        run_tool(
            Command::new("tar")
                .arg("-xJf")
                .arg(&tarball)
                .arg("-C")
                .arg(&unpacked),
            "unpacking the MicroPython source",
            "tar with xz support (xz-utils) is needed",
        );
    }
    top
}

/// Downloads Debian's `micropython` source package into `cache` with apt-get, from the mirror the
/// machine's apt already uses, with a private source list and state (no system change).
fn micropython_fetch(cache: &Path) {
    let hint =
        "the MicroPython source comes from Debian's `micropython` source package (trixie) via \
                apt-get; on a machine without apt or network, set GOBLIN_MICROPYTHON_SRC to a \
                MicroPython 1.25 source tree";
    let mirror = [
        "/etc/apt/sources.list.d/debian.sources",
        "/etc/apt/sources.list",
    ]
    .iter()
    .filter_map(|f| std::fs::read_to_string(f).ok())
    .find_map(|text| {
        text.lines().find_map(|l| {
            let l = l.trim();
            if let Some(uris) = l.strip_prefix("URIs:") {
                return uris
                    .split_whitespace()
                    .find(|u| !u.contains("security"))
                    .map(String::from);
            }
            let mut f = l.split_whitespace();
            (f.next() == Some("deb"))
                .then(|| f.find(|w| w.contains("://")).map(String::from))
                .flatten()
                .filter(|u| !u.contains("security"))
        })
    })
    .unwrap_or_else(|| panic!("no Debian mirror found in the apt configuration; {hint}"));
    let work = cache.join("apt");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("lists/partial")).unwrap();
    std::fs::create_dir_all(work.join("cache/archives/partial")).unwrap();
    let list = work.join("sources.list");
    std::fs::write(
        &list,
        format!("deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} trixie main\n"),
    )
    .unwrap();
    let apt = |args: &[&str]| {
        let mut c = Command::new("apt-get");
        c.current_dir(&work)
            .arg("-q")
            .arg("-o")
            .arg(format!("Dir::Etc::SourceList={}", list.display()))
            .args(["-o", "Dir::Etc::SourceParts=-"])
            .arg("-o")
            .arg(format!(
                "Dir::State::Lists={}",
                work.join("lists").display()
            ))
            .arg("-o")
            .arg(format!("Dir::Cache={}", work.join("cache").display()))
            .args(args);
        c
    };
    run_tool(
        &mut apt(&["update"]),
        "apt-get update (MicroPython source list)",
        hint,
    );
    run_tool(
        &mut apt(&["source", "--download-only", MICROPYTHON_PACKAGE]),
        "apt-get source micropython",
        hint,
    );
    std::fs::rename(
        work.join(MICROPYTHON_TARBALL),
        cache.join(MICROPYTHON_TARBALL),
    )
    .unwrap_or_else(|e| panic!("apt-get did not leave {MICROPYTHON_TARBALL} ({e}); {hint}"));
    let _ = std::fs::remove_dir_all(&work);
}

/// Runs the embed port's generator (`make -f embed.mk`, python3) with our `mpconfigport.h` and
/// applies our patch to what it generated; returns the generated `micropython_embed` directory.
fn micropython_generate(top: &Path, out: &Path) -> PathBuf {
    let gen = out.join("micropython-gen");
    let _ = std::fs::remove_dir_all(&gen);
    std::fs::create_dir_all(&gen).unwrap();
    std::fs::copy(
        "vendor/micropython/mpconfigport.h",
        gen.join("mpconfigport.h"),
    )
    .unwrap();
    std::fs::write(
        gen.join("Makefile"),
        format!(
            "MICROPYTHON_TOP = {}\ninclude $(MICROPYTHON_TOP)/ports/embed/embed.mk\n",
            top.display()
        ),
    )
    .unwrap();
    run_tool(
        Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(&gen)
            .env_remove("MAKEFLAGS"),
        "generating the MicroPython embed tree",
        "it needs make and python3",
    );
    let embed = gen.join("micropython_embed");
    // Our changes to the generated copy of py/ (see vendor/micropython/README.md).
    apply_patch(&embed, "vendor/micropython/goblin.patch", "MicroPython");
    embed
}

/// Compiles the embed tree and our glue into `libgoblin_upython.a`: one relocatable object in which
/// only the glue's entry points are global.
fn micropython_compile(embed: &Path, out: &Path) {
    let mut b = cc::Build::new();
    b.include(embed)
        .include("vendor/micropython")
        .opt_level(2)
        .warnings(false)
        .flag("-std=gnu99")
        .flag("-fvisibility=hidden")
        .flag_if_supported("-fno-common");
    let mut files: Vec<PathBuf> = std::fs::read_dir(embed.join("py"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    files.push(embed.join("shared/runtime/gchelper_generic.c"));
    // The port's own embed_util.c and mphalport.c are replaced by glue.c.
    files.push(PathBuf::from("vendor/micropython/glue.c"));
    b.files(&files);
    let objects = b.compile_intermediates();
    let linked = out.join("goblin_upython.o");
    run_tool(
        Command::new("ld")
            .arg("-r")
            .arg("-o")
            .arg(&linked)
            .args(&objects),
        "ld -r of the MicroPython objects",
        "binutils is needed",
    );
    run_tool(
        Command::new("objcopy")
            .arg("--localize-hidden")
            .arg(&linked),
        "objcopy --localize-hidden",
        "binutils is needed",
    );
    let lib = out.join("libgoblin_upython.a");
    let _ = std::fs::remove_file(&lib);
    run_tool(
        Command::new("ar").arg("crs").arg(&lib).arg(&linked),
        "ar of the MicroPython object",
        "binutils is needed",
    );
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=goblin_upython");
}

// ---- Jim Tcl, the TCL.EVAL engine (see vendor/jim/README.md) ----

/// Must match the `jimtcl-sys` version pinned in Cargo.toml (it carries Jim 0.84's sources).
const JIM_CRATE: &str = "jimtcl-sys-0.2.2+0.84";

/// The Jim Tcl source tree the `jimtcl-sys` crate carries, or `GOBLIN_JIM_SRC`.
fn jim_source() -> PathBuf {
    crate_source("GOBLIN_JIM_SRC", JIM_CRATE, "jimtcl", "jim.c")
}

/// Copies Jim's core sources to `OUT_DIR/jim`, applies our interrupt patch, and compiles the core
/// interpreter with our configuration headers and glue.
fn build_tcl() {
    println!("cargo:rerun-if-changed=vendor/jim");
    let dir = patched_copy(
        &jim_source(),
        &PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("jim"),
        "vendor/jim/interrupt.patch",
        "Jim Tcl",
    );
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
