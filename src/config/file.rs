//! The configuration file side: redis.conf lines read (quoting, comments, `include`), applied in
//! order with Redis's fatal-error report, loaded with command-line overrides, and written back by
//! CONFIG REWRITE.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{find, os_error_text, Config, Directive, Kind, DIRECTIVES, REDIS_VERSION};
use crate::resp::parser::split_args;

/// One directive line as read from a file or the command line.
#[derive(Clone)]
pub struct Line {
    pub number: usize,
    pub text: String,
    pub args: Vec<String>,
}

/// A configuration error, printed as Redis prints one before exiting.
pub struct ConfigError {
    pub line: usize,
    pub text: String,
    pub msg: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\nReading the configuration file, at line {}\n>>> '{}'\n{}",
            self.line, self.text, self.msg
        )
    }
}

/// Splits config text into directive lines (comments and blank lines skipped).
pub fn split_lines(text: &str, first_line: usize) -> Result<Vec<Line>, ConfigError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\r');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut buf = Vec::new();
        let mut spans = Vec::new();
        let number = first_line + i;
        if split_args(trimmed.as_bytes(), &mut buf, &mut spans).is_err() {
            return Err(ConfigError {
                line: number,
                text: trimmed.to_string(),
                msg: "Unbalanced quotes in configuration line".into(),
            });
        }
        let args = spans
            .iter()
            .map(|&(s, e)| String::from_utf8_lossy(&buf[s..e]).into_owned())
            .collect();
        lines.push(Line {
            number,
            text: trimmed.to_string(),
            args,
        });
    }
    Ok(lines)
}

/// Applies directive lines in order; `include` reads another file in place.
pub fn apply_lines(c: &mut Config, lines: Vec<Line>, depth: usize) -> Result<(), ConfigError> {
    let mut last_set = Vec::new();
    apply_lines_into(c, lines, depth, &mut last_set)?;
    // Unsupported values are judged once every line is in: the last line to set a directive
    // decides, and an error names it.
    for (d, line) in last_set {
        d.supports(c).map_err(|msg| ConfigError {
            line: line.number,
            text: line.text.clone(),
            msg,
        })?;
    }
    Ok(())
}

/// The directives with a support check, each with the last line that set it.
type LastSet = Vec<(&'static Directive, Line)>;

fn apply_lines_into(
    c: &mut Config,
    lines: Vec<Line>,
    depth: usize,
    last_set: &mut LastSet,
) -> Result<(), ConfigError> {
    for line in lines {
        let fail = |msg: String| ConfigError {
            line: line.number,
            text: line.text.clone(),
            msg,
        };
        let Some((name, values)) = line.args.split_first() else {
            continue;
        };
        if name.eq_ignore_ascii_case("include") {
            let [path] = values else {
                return Err(fail("Bad directive or wrong number of arguments".into()));
            };
            if depth > 16 {
                return Err(fail("Too many nested includes".into()));
            }
            let text = std::fs::read_to_string(path).map_err(|e| {
                fail(format!(
                    "Fatal error, can't open config file '{path}': {}",
                    os_error_text(&e)
                ))
            })?;
            apply_lines_into(c, split_lines(&text, 1)?, depth + 1, last_set)?;
            continue;
        }
        if name.eq_ignore_ascii_case("user") && !values.is_empty() {
            c.users.push(line.clone());
            continue;
        }
        let Some(dir) = find(name) else {
            return Err(fail("Bad directive or wrong number of arguments".into()));
        };
        dir.parse_into(c, values).map_err(fail)?;
        if dir.supported.is_some() {
            last_set.retain(|(d, _)| !std::ptr::eq(*d, dir));
            last_set.push((dir, line.clone()));
        }
    }
    Ok(())
}

/// Loads the configuration as redis-server does: the file (or `-` for stdin) first, then each
/// `--name value ...` from the command line as one more line.
pub fn load(file: Option<&Path>, overrides: &[String]) -> Result<Config, ConfigError> {
    let mut c = Config::default();
    let mut text = String::new();
    if let Some(path) = file {
        let read = if path == Path::new("-") {
            std::io::read_to_string(std::io::stdin())
        } else {
            std::fs::read_to_string(path)
        };
        text = read.map_err(|e| ConfigError {
            line: 0,
            text: path.display().to_string(),
            msg: format!(
                "Fatal error, can't open config file '{}': {}",
                path.display(),
                os_error_text(&e)
            ),
        })?;
    }
    let mut lines = split_lines(&text, 1)?;
    let mut number = text.lines().count() + 1;
    let mut current: Option<Line> = None;
    for arg in overrides {
        if let Some(name) = arg.strip_prefix("--").filter(|n| !n.is_empty()) {
            lines.extend(current.take());
            current = Some(Line {
                number,
                text: name.to_string(),
                args: vec![name.to_string()],
            });
            number += 1;
        } else if let Some(line) = current.as_mut() {
            let _ = write!(line.text, " {}", quote_if_needed(arg));
            line.args.push(arg.clone());
        } else {
            return Err(ConfigError {
                line: number,
                text: arg.clone(),
                msg: "Bad directive or wrong number of arguments".into(),
            });
        }
    }
    lines.extend(current);
    apply_lines(&mut c, lines, 0)?;
    Ok(c)
}

fn quote_if_needed(arg: &str) -> String {
    if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        format!("{arg:?}")
    } else {
        arg.to_string()
    }
}

/// CONFIG REWRITE: rewrites the config file in place, keeping its comments and the order of its
/// lines, replacing each directive's lines with its current value, and appending directives that
/// now differ from their defaults.
pub fn rewrite(c: &mut Config, path: &PathBuf) -> Result<(), String> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let defaults = &mut Config::default();
    let mut written: Vec<&'static str> = Vec::new();
    let mut out = String::new();
    for raw in old.lines() {
        let trimmed = raw.trim();
        let name = trimmed.split_whitespace().next().unwrap_or("");
        if trimmed.starts_with('#') || name.is_empty() || name.eq_ignore_ascii_case("include") {
            out.push_str(raw);
            out.push('\n');
            continue;
        }
        match find(name) {
            Some(d) if !written.contains(&d.name) => {
                written.push(d.name);
                // A primary's `replicaof` line goes (Redis's `rewriteConfigReplicaOfOption`).
                if d.name == "replicaof" && d.get(c).is_empty() {
                    continue;
                }
                out.push_str(&format_line(d, c));
                out.push('\n');
            }
            Some(_) => {} // a later line of a directive already written (e.g. several `save` lines)
            None => {
                out.push_str(raw);
                out.push('\n');
            }
        }
    }
    let mut appended = false;
    for d in DIRECTIVES {
        // `dir` shows the working directory whether or not it was set: a set one is kept.
        let set_dir = d.name == "dir" && !c.dir.is_empty();
        if written.contains(&d.name) || (d.get(c) == d.get(defaults) && !set_dir) {
            continue;
        }
        if !appended {
            out.push_str("# Generated by CONFIG REWRITE\n");
            appended = true;
        }
        out.push_str(&format_line(d, c));
        out.push('\n');
    }
    let tmp = path.with_extension("tmp-rewrite");
    std::fs::write(&tmp, out).map_err(|e| os_error_text(&e))?;
    std::fs::rename(&tmp, path).map_err(|e| os_error_text(&e))
}

fn format_line(d: &Directive, c: &mut Config) -> String {
    let v = d.get(c);
    match d.kind {
        Kind::Special { .. }
            if matches!(d.name, "bind" | "client-output-buffer-limit" | "replicaof") =>
        {
            format!("{} {}", d.name, v)
        }
        _ if v.is_empty() || v.contains(|ch: char| ch.is_whitespace() || ch == '"') => {
            format!("{} {:?}", d.name, v)
        }
        _ => format!("{} {}", d.name, v),
    }
}
