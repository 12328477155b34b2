//! The layers point one way: `main → cmd → server ← script`, `server → persist →
//! store/resp/config`, nothing below importing anything above. This reads every `crate::` path in
//! `src/` and fails on an upward one.

use std::collections::BTreeSet;
use std::path::Path;

/// What each layer may name, besides itself and the leaf utilities every layer uses.
fn allowed(from: &str, to: &str) -> bool {
    // The leaf utilities, and the log macros at the crate root.
    const LEAVES: &[&str] = &["util", "log", "alloc", "notice", "warning", "verbose"];
    if from == to || LEAVES.contains(&to) {
        return true;
    }
    let below: &[&str] = match from {
        "main" | "lib" => return true,
        "cmd" => &["server", "script", "persist", "store", "resp", "config"],
        "script" => &["server", "store", "resp", "config"],
        "server" => &["persist", "store", "resp", "config"],
        "persist" => &["store", "resp", "config"],
        // The bottom layer: store, resp and config may use each other.
        "store" => &["resp", "config"],
        "config" => &["resp", "store"],
        "resp" | "util" | "log" | "alloc" => &[],
        other => panic!("src/{other} is in no layer: add it to tests/layers.rs"),
    };
    below.contains(&to)
}

/// The layer of a source file: its top directory under src/, or its module name.
fn layer_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `file -> layer` for every upward `crate::layer` the file names (comments aside).
fn upward_imports(src: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut found = BTreeSet::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let from = layer_of(rel);
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                let to: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `use crate::{a, b}` names several layers at once.
                let targets: Vec<String> = if to.is_empty() && rest.starts_with('{') {
                    rest[1..]
                        .split([',', '}'])
                        .map(|t| t.trim().split("::").next().unwrap_or("").to_string())
                        .filter(|t| {
                            !t.is_empty()
                                && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        })
                        .collect()
                } else {
                    vec![to]
                };
                for to in targets {
                    if !to.is_empty() && !allowed(&from, &to) {
                        found.insert(format!("src/{} -> {to}", rel.display()));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn layers_only_point_down() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = upward_imports(&root.join("src"));
    assert!(
        found.is_empty(),
        "upward imports (a lower layer naming a higher one):\n{}",
        found
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The reader itself: an upward path is found in every form a file may write it, and a comment
/// naming one is not.
#[test]
fn the_reader_finds_upward_paths() {
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("persist")).unwrap();
    std::fs::create_dir_all(src.join("server")).unwrap();
    std::fs::write(
        src.join("persist/mod.rs"),
        "use crate::server::State;\nuse crate::{store, script::Run};\n// crate::cmd in a comment\n",
    )
    .unwrap();
    std::fs::write(src.join("server/mod.rs"), "use crate::persist::Host;\n").unwrap();
    let found: Vec<String> = upward_imports(&src).into_iter().collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        found,
        [
            "src/persist/mod.rs -> script",
            "src/persist/mod.rs -> server"
        ]
    );
}
