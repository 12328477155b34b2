//! Redis Functions (Redis 7's functions.c): the library registry behind FUNCTION LOAD, LIST,
//! DELETE, FLUSH, DUMP, RESTORE, STATS and FCALL/FCALL_RO, for every engine.
//!
//! A library is source whose first line names its engine and itself (`#!lua name=mylib`, and
//! `#!luau`, `#!js`, `#!tcl`, `#!python`, `#!wren`: the engine's `EngineId::shebang`). Its engine
//! runs it once, in a loading run where it may only register functions
//! (`redis.register_function` in each engine's idiom), and keeps each registered callback under
//! (library id, index); the registry here keeps the code, the names, descriptions and flags, and
//! finds a function for FCALL.
//!
//! What every engine implements for functions (three `Engine` methods): `load_library` (run the
//! code, hand back what it registered, validated with `check_registration` and `parse_flag`,
//! within `LOAD_TIMEOUT_MS`), `call_function` (run one callback as `run` runs a script: same
//! conversions, hook, memory limit; error texts name the function, `Run::script_name`),
//! `drop_library`.
//!
//! Entry points: `Scripting::load_library` (FUNCTION LOAD), `Scripting::find_function` (FCALL),
//! `Scripting::delete_library`, `Scripting::flush_libraries`, `Scripting::compile_libraries` with
//! `swap_libraries`/`join_libraries` (FUNCTION RESTORE and the RDB loader), and `Libraries` for
//! LIST, STATS, DUMP and the RDB writer.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{EngineId, Flags, Scripting};

/// A library's handle in its engine, unique for the server's life (a replaced library's old and
/// new versions coexist while the new one loads).
pub type LibId = u64;

static NEXT_LIB: AtomicU64 = AtomicU64::new(1);

/// How long a library's loading run may take (Redis's `LOAD_TIMEOUT_MS`); past it the engine
/// stops the run with `LOAD_TIMEOUT_ERROR`.
pub const LOAD_TIMEOUT_MS: u64 = 500;
pub const LOAD_TIMEOUT_ERROR: &str = "FUNCTION LOAD timeout";

/// A function as its library's loading run registered it.
#[derive(Clone, Debug)]
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: Flags,
}

pub struct Library {
    pub name: String,
    pub engine: EngineId,
    /// The whole source, shebang line included (FUNCTION LIST WITHCODE, DUMP, the RDB).
    pub code: Vec<u8>,
    pub id: LibId,
    pub functions: Vec<Registered>,
}

/// A set of libraries: the server's, or one being restored before it joins the server's.
#[derive(Default)]
pub struct Libraries {
    /// By name (case-sensitive, as Redis's), listed in name order.
    libs: BTreeMap<String, Library>,
    /// Lowercased function name → its library: FCALL finds functions case-insensitively.
    funcs: HashMap<String, String>,
}

/// What FCALL needs of a function, copied out of the registry so the engine can be borrowed.
pub struct Found {
    pub engine: EngineId,
    pub lib: LibId,
    pub index: usize,
    pub name: String,
    pub flags: Flags,
}

impl Libraries {
    pub fn iter(&self) -> impl Iterator<Item = &Library> {
        self.libs.values()
    }

    pub fn len(&self) -> usize {
        self.libs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.libs.is_empty()
    }

    /// Functions of every library (INFO `number_of_functions`).
    pub fn function_count(&self) -> usize {
        self.funcs.len()
    }

    /// Bytes of the libraries' code (INFO `used_memory_functions`).
    pub fn code_bytes(&self) -> usize {
        self.iter().map(|l| l.code.len()).sum()
    }

    /// Libraries and functions of one engine (FUNCTION STATS).
    pub fn counts(&self, engine: EngineId) -> (usize, usize) {
        self.iter()
            .filter(|l| l.engine == engine)
            .fold((0, 0), |(l, f), lib| (l + 1, f + lib.functions.len()))
    }

    fn link(&mut self, lib: Library) {
        for f in &lib.functions {
            self.funcs
                .insert(f.name.to_ascii_lowercase(), lib.name.clone());
        }
        self.libs.insert(lib.name.clone(), lib);
    }

    fn unlink(&mut self, name: &str) -> Option<Library> {
        let lib = self.libs.remove(name)?;
        for f in &lib.functions {
            self.funcs.remove(&f.name.to_ascii_lowercase());
        }
        Some(lib)
    }

    /// The first of `functions` that another library already has.
    fn collision<'a>(&self, functions: &'a [Registered]) -> Option<&'a str> {
        functions
            .iter()
            .find(|f| self.funcs.contains_key(&f.name.to_ascii_lowercase()))
            .map(|f| f.name.as_str())
    }
}

/// `[A-Za-z0-9_]+`, Redis's rule for library and function names.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// What an engine's `register_function` checks of a new function against those its library
/// registered so far (Redis 7.0's `functionLibCreateFunction`, error texts included).
pub fn check_registration(registered: &[Registered], name: &[u8]) -> Result<String, String> {
    if !valid_name(name) {
        return Err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
    }
    let name = String::from_utf8_lossy(name).into_owned();
    if registered.iter().any(|f| f.name == name) {
        return Err("Function already exists in the library".into());
    }
    Ok(name)
}

/// What a library's code has registered so far while it loads (FUNCTION LOAD, or a restarted VM
/// running it again): the functions in order, and each one's callback as its engine holds it (a
/// registry reference, a JS value, a Tcl command prefix, a Wren handle).
pub struct Loading<C> {
    pub functions: Vec<Registered>,
    pub callbacks: Vec<C>,
}

impl<C> Default for Loading<C> {
    fn default() -> Self {
        Loading {
            functions: Vec::new(),
            callbacks: Vec::new(),
        }
    }
}

impl<C> Loading<C> {
    /// Redis's checks of a new function's name against those registered so far.
    pub fn check(&self, name: &[u8]) -> Result<String, String> {
        check_registration(&self.functions, name)
    }

    /// Adds a function that passed `check`, with its callback.
    pub fn push(&mut self, name: String, description: Option<Vec<u8>>, flags: u32, callback: C) {
        self.functions.push(Registered {
            name,
            description,
            flags: Flags(flags),
        });
        self.callbacks.push(callback);
    }
}

/// Whether a library's code, run again (a VM restarted), registered the same functions in the
/// same order as when it was loaded: callbacks are found by their index.
pub fn same_functions(again: &[Registered], names: &[String]) -> bool {
    again.iter().map(|f| &f.name).eq(names.iter())
}

/// One flag of a registered function (`no-writes`, `allow-oom`, ...; any case, as Redis's).
pub fn parse_flag(name: &[u8]) -> Result<u32, String> {
    Flags::NAMES
        .iter()
        .find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|(bit, _)| *bit)
        .ok_or_else(|| "unknown flag given".into())
}

/// A library's first line, parsed as Redis's `functionExtractLibMetaData`: the engine's shebang
/// name, the library's name, and where the engine's code starts (the line's newline).
struct Metadata {
    engine: String,
    name: String,
    body_at: usize,
}

fn metadata(code: &[u8]) -> Result<Metadata, String> {
    const INVALID: &str = "Invalid library metadata";
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = memchr::memchr(b'\n', code) else {
        return Err(INVALID.into());
    };
    let (mut buf, mut spans) = (Vec::new(), Vec::new());
    if crate::resp::parser::split_args(&code[..end], &mut buf, &mut spans).is_err()
        || spans.is_empty()
    {
        return Err(INVALID.into());
    }
    let part = |i: usize| &buf[spans[i].0..spans[i].1];
    let engine = String::from_utf8_lossy(&part(0)[2.min(part(0).len())..]).into_owned();
    let mut name = None;
    for i in 1..spans.len() {
        let p = part(i);
        if p.len() >= 5 && p[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(String::from_utf8_lossy(&p[5..]).into_owned());
            continue;
        }
        return Err(format!(
            "Invalid metadata value given: {}",
            String::from_utf8_lossy(p)
        ));
    }
    let name = name.ok_or("Library name was not given")?;
    Ok(Metadata {
        engine,
        name,
        body_at: end,
    })
}

impl Scripting {
    /// Compiles `code` into a new library (Redis's `functionsCreateWithLibraryCtx`):
    /// metadata, engine, name collisions, the engine's loading run, then at least one function
    /// and no function another library has. `replace` replaces a library of the same name (kept
    /// if the new one fails). Returns the library's name, or the error (no `ERR ` prefix).
    pub fn load_library(&mut self, code: &[u8], replace: bool) -> Result<String, String> {
        let mut own = std::mem::take(&mut self.functions);
        let loaded = self.load_into(&mut own, code, replace);
        self.functions = own;
        loaded
    }

    /// `load_library` into another set than the server's (a payload being restored).
    fn load_into(
        &mut self,
        into: &mut Libraries,
        code: &[u8],
        replace: bool,
    ) -> Result<String, String> {
        let md = metadata(code)?;
        if !valid_name(md.name.as_bytes()) {
            return Err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
        }
        let engine = EngineId::ALL
            .into_iter()
            .find(|e| e.shebang().eq_ignore_ascii_case(&md.engine))
            .filter(|e| self.engine(*e).is_some())
            .ok_or_else(|| format!("Engine '{}' not found", md.engine))?;
        if into.libs.contains_key(&md.name) && !replace {
            return Err(format!("Library '{}' already exists", md.name));
        }
        let id = NEXT_LIB.fetch_add(1, Ordering::Relaxed);
        let mut e = self.take(engine);
        let loaded = e.load_library(id, &code[md.body_at..]);
        let functions = match loaded {
            Ok(f) if f.is_empty() => Err("No functions registered".to_string()),
            other => other,
        };
        let old = functions.is_ok().then(|| into.unlink(&md.name)).flatten();
        let checked = functions.and_then(|f| match into.collision(&f) {
            Some(name) => Err(format!("Function {name} already exists")),
            None => Ok(f),
        });
        let result = match checked {
            Ok(functions) => {
                if let Some(old) = old {
                    e.drop_library(old.id);
                }
                into.link(Library {
                    name: md.name.clone(),
                    engine,
                    code: code.to_vec(),
                    id,
                    functions,
                });
                Ok(md.name)
            }
            Err(err) => {
                e.drop_library(id);
                if let Some(old) = old {
                    into.link(old);
                }
                Err(err)
            }
        };
        self.put(e);
        result
    }

    /// FCALL's lookup (case-insensitive, as Redis's).
    pub fn find_function(&self, name: &[u8]) -> Option<Found> {
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        let lib = self.functions.libs.get(self.functions.funcs.get(&name)?)?;
        let (index, f) = lib
            .functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.name.eq_ignore_ascii_case(&name))?;
        Some(Found {
            engine: lib.engine,
            lib: lib.id,
            index,
            name: f.name.clone(),
            flags: f.flags,
        })
    }

    /// FUNCTION DELETE; false if there is no such library.
    pub fn delete_library(&mut self, name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        let Some(lib) = self.functions.unlink(&name) else {
            return false;
        };
        self.release(std::iter::once(lib));
        true
    }

    /// FUNCTION FLUSH (and RESTORE FLUSH, and a reload): every library goes.
    pub fn flush_libraries(&mut self) {
        let all = std::mem::take(&mut self.functions);
        self.release(all.libs.into_values());
    }

    /// Frees libraries' callbacks in their engines.
    fn release(&mut self, libs: impl Iterator<Item = Library>) {
        for lib in libs {
            if let Some(slot) = self.engines[lib.engine.index()].as_mut() {
                slot.drop_library(lib.id);
            }
        }
    }

    /// Compiles every library of `codes` into a new set (duplicates refused), as a payload or an
    /// RDB file carries them; on error nothing is kept.
    pub fn compile_libraries(&mut self, codes: &[Vec<u8>]) -> Result<Libraries, String> {
        let mut set = Libraries::default();
        for code in codes {
            if let Err(e) = self.load_into(&mut set, code, false) {
                self.release(std::mem::take(&mut set).libs.into_values());
                return Err(e);
            }
        }
        Ok(set)
    }

    /// Makes `set` the server's libraries (RESTORE FLUSH, loading an RDB file).
    pub fn swap_libraries(&mut self, set: Libraries) {
        self.flush_libraries();
        self.functions = set;
    }

    /// FUNCTION RESTORE APPEND/REPLACE: joins `set` to the server's libraries (Redis's
    /// `libraryJoin`): a library of the same name is an error, or replaced with `replace`; a
    /// function name another library has is an error. On error nothing changes.
    pub fn join_libraries(&mut self, set: Libraries, replace: bool) -> Result<(), String> {
        let mut replaced = Vec::new();
        let mut err = None;
        for name in set.libs.keys() {
            if self.functions.libs.contains_key(name) {
                if !replace {
                    err = Some(format!("Library {name} already exists"));
                    break;
                }
                replaced.extend(self.functions.unlink(name));
            }
        }
        if err.is_none() {
            err = set
                .libs
                .values()
                .find_map(|l| self.functions.collision(&l.functions))
                .map(|name| format!("Function {name} already exists"));
        }
        if let Some(e) = err {
            for old in replaced {
                self.functions.link(old);
            }
            self.release(set.libs.into_values());
            return Err(e);
        }
        for lib in set.libs.into_values() {
            self.functions.link(lib);
        }
        self.release(replaced.into_iter());
        Ok(())
    }
}

/// The name an engine has in FUNCTION LIST and STATS: its shebang name in capitals (`LUA`, as
/// Redis's; `LUAU`, `JS`, `TCL`, `PYTHON`, `WREN`).
pub fn engine_label(e: EngineId) -> String {
    e.shebang().to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_as_redis_parses_it() {
        let md = metadata(b"#!lua name=lib\nreturn").unwrap();
        assert_eq!(
            (md.engine.as_str(), md.name.as_str(), md.body_at),
            ("lua", "lib", 14)
        );
        assert_eq!(metadata(b"#!lua NAME=x \n").unwrap().name, "x");
        assert_eq!(metadata(b"x").err().unwrap(), "Missing library metadata");
        assert_eq!(
            metadata(b"#!lua name=x").err().unwrap(),
            "Invalid library metadata"
        );
        assert_eq!(
            metadata(b"#!lua\n").err().unwrap(),
            "Library name was not given"
        );
        assert_eq!(
            metadata(b"#!lua foo=1 name=x\n").err().unwrap(),
            "Invalid metadata value given: foo=1"
        );
        assert_eq!(
            metadata(b"#!lua name=a name=b\n").err().unwrap(),
            "Invalid metadata value, name argument was given multiple times"
        );
    }

    #[test]
    fn an_engine_this_build_lacks_is_not_found() {
        let mut s = Scripting {
            engines: Default::default(),
            functions: Libraries::default(),
        };
        assert_eq!(
            s.load_library(b"#!wren name=x\n", false),
            Err("Engine 'wren' not found".to_string())
        );
        assert!(s.functions.is_empty());
    }

    #[test]
    fn names_and_flags() {
        assert!(valid_name(b"a_1Z"));
        assert!(!valid_name(b"") && !valid_name(b"a-b"));
        assert_eq!(parse_flag(b"no-writes"), Ok(Flags::NO_WRITES));
        assert!(parse_flag(b"bad").is_err());
        let f = Registered {
            name: "f".into(),
            description: None,
            flags: Flags::default(),
        };
        assert!(check_registration(std::slice::from_ref(&f), b"f").is_err());
        let g = Registered {
            name: "g".into(),
            ..f.clone()
        };
        let names = ["f".to_string(), "g".to_string()];
        assert!(same_functions(&[f.clone(), g.clone()], &names));
        assert!(!same_functions(&[g, f.clone()], &names));
        assert!(!same_functions(&[f], &names));
    }
}
