//! Spark's JSONPath subset for `variant_get`: `$`, `.name`, `['name']`, `["name"]`
//! and `[n]`.
//!
//! The grammar is small and literal (see Spark 4.3's behaviour in
//! `docs/spark-semantics.md` §6):
//!
//! * a path starts with `$`;
//! * `.name` takes every character up to the next `.` or `[` (so `$.a-b`,
//!   `$.key with space` and `$.*` are keys) and must not be empty;
//! * `['name']` / `["name"]` take every character up to the matching closing quote
//!   immediately followed by `]`; there are no escapes;
//! * `[n]` is an array index of decimal digits (leading zeros allowed) up to
//!   2^31-1; no sign, no spaces, no wildcards.
//!
//! ```
//! use df_variant::variant::path::{parse_path, PathSegment};
//! let path = parse_path("$.a[0]['b c']").unwrap();
//! assert_eq!(path, vec![
//!     PathSegment::Key("a".into()),
//!     PathSegment::Index(0),
//!     PathSegment::Key("b c".into()),
//! ]);
//! assert!(parse_path("a.b").is_err());
//! ```

use parquet_variant::Variant;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A path that Spark would reject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    /// The path text as given.
    pub path: String,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[INVALID_VARIANT_GET_PATH] The path {} is not a valid variant extraction path",
            super::shorten_quoted(&self.path, '`')
        )
    }
}

impl std::error::Error for PathError {}

const MAX_INDEX: usize = i32::MAX as usize;

/// Parses a Spark variant path.
///
/// # Errors
/// [`PathError`] for anything outside the grammar in the module docs.
pub fn parse_path(path: &str) -> Result<Vec<PathSegment>, PathError> {
    let err = || PathError {
        path: path.to_string(),
    };
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'$') {
        return Err(err());
    }
    let mut segments = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end] != b'.' && bytes[end] != b'[' {
                    end += 1;
                }
                if end == start {
                    return Err(err());
                }
                // `.` and `[` are ASCII, so these are char boundaries.
                segments.push(PathSegment::Key(path[start..end].to_string()));
                i = end;
            }
            b'[' => {
                let quote = *bytes.get(i + 1).ok_or_else(err)?;
                if quote == b'\'' || quote == b'"' {
                    let start = i + 2;
                    let mut end = start;
                    loop {
                        match bytes.get(end) {
                            None => return Err(err()),
                            Some(&c) if c == quote => break,
                            Some(_) => end += 1,
                        }
                    }
                    if bytes.get(end + 1) != Some(&b']') {
                        return Err(err());
                    }
                    segments.push(PathSegment::Key(path[start..end].to_string()));
                    i = end + 2;
                } else {
                    let start = i + 1;
                    let mut end = start;
                    while end < bytes.len() && bytes[end].is_ascii_digit() {
                        end += 1;
                    }
                    if end == start || bytes.get(end) != Some(&b']') {
                        return Err(err());
                    }
                    let digits = path[start..end].trim_start_matches('0');
                    let index = if digits.is_empty() {
                        0
                    } else if digits.len() > 10 {
                        return Err(err());
                    } else {
                        digits.parse::<usize>().map_err(|_| err())?
                    };
                    if index > MAX_INDEX {
                        return Err(err());
                    }
                    segments.push(PathSegment::Index(index));
                    i = end + 1;
                }
            }
            _ => return Err(err()),
        }
    }
    Ok(segments)
}

/// Renders a path back into Spark syntax (`$.a[0]['b c']`).
pub fn path_to_string(path: &[PathSegment]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            PathSegment::Key(k) if !k.is_empty() && !k.contains(['.', '[', '\'']) => {
                s.push('.');
                s.push_str(k);
            }
            PathSegment::Key(k) if !k.contains('\'') => {
                s.push_str("['");
                s.push_str(k);
                s.push_str("']");
            }
            PathSegment::Key(k) => {
                s.push_str("[\"");
                s.push_str(k);
                s.push_str("\"]");
            }
            PathSegment::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

/// Looks up one object field by name. Objects are sorted by UTF-8 name, so a
/// binary search finds the key; Spark writes objects sorted by UTF-16 code units,
/// which differs for some non-ASCII keys, so those fall back to a linear scan.
pub fn object_field<'m, 'v>(v: &Variant<'m, 'v>, key: &str) -> Option<Variant<'m, 'v>> {
    let Variant::Object(obj) = v else {
        return None;
    };
    if let Some(found) = obj.get(key) {
        return Some(found);
    }
    if key.is_ascii() {
        return None;
    }
    obj.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// Follows `path` from `v`. A missing key, an index out of range, or a step into
/// a scalar gives `None`.
///
/// The variant must have been validated (see [`super::validate`]).
pub fn extract<'m, 'v>(v: &Variant<'m, 'v>, path: &[PathSegment]) -> Option<Variant<'m, 'v>> {
    let mut current = v.clone();
    for seg in path {
        current = match seg {
            PathSegment::Key(k) => object_field(&current, k)?,
            PathSegment::Index(i) => match &current {
                Variant::List(list) => list.get(*i)?,
                _ => return None,
            },
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_quote_long_paths_cut() {
        let long = format!("$.{}[x]", "a".repeat(100_000));
        let e = super::parse_path(&long).unwrap_err().to_string();
        assert!(e.len() < 300, "{}", e.len());
        assert!(e.contains("...` (100005 characters)"), "{e}");
    }

    use super::*;
    use PathSegment::{Index, Key};

    fn key(k: &str) -> PathSegment {
        Key(k.to_string())
    }

    #[test]
    fn valid_paths() {
        let cases: Vec<(&str, Vec<PathSegment>)> = vec![
            ("$", vec![]),
            ("$.a", vec![key("a")]),
            ("$.a.b", vec![key("a"), key("b")]),
            ("$.key with space", vec![key("key with space")]),
            ("$.a-b", vec![key("a-b")]),
            ("$.é", vec![key("é")]),
            ("$.*", vec![key("*")]),
            ("$.0", vec![key("0")]),
            ("$[0]", vec![Index(0)]),
            ("$[01]", vec![Index(1)]),
            ("$[2147483647]", vec![Index(2147483647)]),
            ("$['a.b']", vec![key("a.b")]),
            ("$[\"a'b\"]", vec![key("a'b")]),
            ("$['']", vec![key("")]),
            ("$['a]b']", vec![key("a]b")]),
            (
                "$.a[0]['k'][1].z",
                vec![key("a"), Index(0), key("k"), Index(1), key("z")],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_path(text).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn invalid_paths() {
        for text in [
            "",
            "a",
            "$.",
            "$..a",
            "$a",
            "$[",
            "$[]",
            "$[-1]",
            "$[*]",
            "$[ 0]",
            "$[0 ]",
            "$['a]",
            "$['a'",
            "$[\"a\\\"b\"]",
            "$[2147483648]",
            "$[99999999999999999999]",
            "$ .a",
            "$['a'] ",
            ".a",
        ] {
            assert!(parse_path(text).is_err(), "{text:?} should be invalid");
        }
    }

    #[test]
    fn error_names_the_path() {
        let e = parse_path("$.").unwrap_err();
        assert!(e.to_string().contains("`$.`"), "{e}");
        assert!(e.to_string().contains("INVALID_VARIANT_GET_PATH"));
    }

    #[test]
    fn round_trips_through_display() {
        for text in ["$", "$.a[3]['b.c']", "$[\"it's\"]"] {
            let p = parse_path(text).unwrap();
            assert_eq!(parse_path(&path_to_string(&p)).unwrap(), p);
        }
    }
}
