//! Resolving the path argument of `read_json_variant` to a list of local files.
//!
//! Accepted forms:
//! - a path to a regular file;
//! - a path to a directory: every regular file directly inside it (not recursive),
//!   except hidden files (names starting with `.` or `_`, such as `.crc` or
//!   `_SUCCESS` side files);
//! - a glob with `*` (any run of characters) and `?` (one character) in the file name
//!   part, e.g. `data/*.jsonl`; the directory part must not contain wildcards.
//!   `*` and `?` do not match a leading `.` (as in a shell).
//!
//! A `file://` prefix is accepted and removed; any other URL scheme is refused.
//! Files are returned sorted by path.

use std::path::{Path, PathBuf};

use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::Expr;

/// One input file and its size in bytes when the query was planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// The path, as resolved from the pattern (relative paths stay relative).
    pub path: PathBuf,
    /// The size in bytes.
    pub size: u64,
}

/// Whether `pattern` matches `name` with `*` and `?` wildcards (by characters).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if n.first() == Some(&'.') && p.first() != Some(&'.') {
        return false;
    }
    // Iterative matcher with single-star backtracking: linear in practice.
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ni += 1;
            }
            Some(c) if *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

fn is_hidden(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

/// Lists the regular files of `dir` whose name satisfies `keep`, sorted.
fn list_dir(
    function: &str,
    pattern: &str,
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<InputFile>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            return plan_err!(
                "{function}: cannot list '{}' for '{pattern}': {e}",
                dir.display()
            );
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => return plan_err!("{function}: cannot list '{}': {e}", dir.display()),
        };
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !keep(name) {
            continue;
        }
        // Follow symlinks: a link to a regular file counts as a file.
        let Ok(meta) = std::fs::metadata(entry.path()) else {
            continue;
        };
        if meta.is_file() {
            files.push(InputFile {
                path: entry.path(),
                size: meta.len(),
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Resolves a path, directory or glob to the files to read.
///
/// # Errors
/// A plan error when nothing matches, when a wildcard appears in the directory
/// part, or for a non-local URL.
pub fn resolve(function: &str, pattern: &str) -> Result<Vec<InputFile>> {
    let local = pattern.strip_prefix("file://").unwrap_or(pattern);
    if local.is_empty() {
        return plan_err!("{function}: the path must not be empty");
    }
    if let Some((scheme, _)) = local.split_once("://")
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return plan_err!("{function}: only local files are supported, got '{pattern}'");
    }
    let path = Path::new(local);
    let files = if has_wildcard(local) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let dir = match path.parent() {
            Some(d) if d.as_os_str().is_empty() => Path::new("."),
            Some(d) => d,
            None => Path::new("."),
        };
        if has_wildcard(&dir.to_string_lossy()) || !has_wildcard(name) {
            return plan_err!(
                "{function}: wildcards ('*', '?') are only supported in the file name part, got '{pattern}'"
            );
        }
        let strip_dot = path.parent().is_some_and(|d| d.as_os_str().is_empty());
        let mut files = list_dir(function, pattern, dir, |n| glob_match(name, n))?;
        if strip_dot {
            // `*.jsonl` lists `./x.jsonl`; report it as `x.jsonl`.
            for f in &mut files {
                if let Ok(p) = f.path.strip_prefix(".") {
                    f.path = p.to_path_buf();
                }
            }
        }
        files
    } else {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => list_dir(function, pattern, path, |n| !is_hidden(n))?,
            Ok(m) if m.is_file() => vec![InputFile {
                path: path.to_path_buf(),
                size: m.len(),
            }],
            Ok(_) => return plan_err!("{function}: '{pattern}' is not a file or directory"),
            Err(e) => return plan_err!("{function}: no file matches '{pattern}': {e}"),
        }
    };
    if files.is_empty() {
        return plan_err!("{function}: no file matches '{pattern}'");
    }
    Ok(files)
}

/// The one string-literal path argument of a table function `name(path)`.
///
/// # Errors
/// A plan error naming `name` for another number of arguments, a NULL, a
/// non-string or a non-literal argument.
pub fn path_argument(name: &str, exprs: &[Expr]) -> Result<String> {
    let [arg] = exprs else {
        return plan_err!(
            "{name} expects exactly one argument (a path or glob), got {}",
            exprs.len()
        );
    };
    match arg {
        Expr::Literal(value, _) => match value.try_as_str() {
            Some(Some(s)) => Ok(s.to_string()),
            Some(None) => plan_err!("{name}: the path must not be NULL"),
            None if value.is_null() => plan_err!("{name}: the path must not be NULL"),
            None => plan_err!("{name} expects a string path, got {}", value.data_type()),
        },
        other => plan_err!("{name} expects a string literal path, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.jsonl", "a.jsonl"));
        assert!(!glob_match("*.jsonl", ".jsonl"));
        assert!(glob_match(".*", ".hidden"));
        assert!(glob_match("part-?.json", "part-1.json"));
        assert!(!glob_match("part-?.json", "part-12.json"));
        assert!(glob_match("*", "x"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("**x", "abx"));
        assert!(glob_match("é?", "éü"));
        assert!(!glob_match("", "a"));
        assert!(glob_match("", ""));
    }

    #[test]
    fn resolve_errors() {
        let e = resolve("f", "/definitely/not/here/x.jsonl").unwrap_err();
        assert!(
            e.to_string()
                .contains("no file matches '/definitely/not/here/x.jsonl'")
        );
        let e = resolve("f", "/definitely/*/x.jsonl").unwrap_err();
        assert!(e.to_string().contains("only supported in the file name"));
        let e = resolve("f", "s3://bucket/x.jsonl").unwrap_err();
        assert!(e.to_string().contains("only local files"));
        let e = resolve("f", "").unwrap_err();
        assert!(e.to_string().contains("must not be empty"));
    }

    #[test]
    fn resolve_dir_and_glob() {
        let dir =
            std::env::temp_dir().join(format!("df_variant_ingest_files_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (n, body) in [
            ("b.jsonl", "2\n"),
            ("a.jsonl", "1\n"),
            ("c.txt", "x"),
            (".h.jsonl", ""),
        ] {
            std::fs::write(dir.join(n), body).unwrap();
        }
        let d = dir.to_string_lossy().to_string();
        let all = resolve("f", &d).unwrap();
        let names: Vec<_> = all
            .iter()
            .map(|f| f.path.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a.jsonl", "b.jsonl", "c.txt"]);
        let g = resolve("f", &format!("{d}/*.jsonl")).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].size, 2);
        let e = resolve("f", &format!("{d}/*.csv")).unwrap_err();
        assert!(e.to_string().contains("no file matches"));
        let one = resolve("f", &format!("file://{d}/c.txt")).unwrap();
        assert_eq!(one[0].size, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
