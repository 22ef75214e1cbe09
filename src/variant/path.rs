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
    Ok(parse_steps(path, false)?
        .into_iter()
        .map(|step| match step {
            Step::Key(k) => PathSegment::Key(k),
            Step::Index(i) => PathSegment::Index(i),
            // Only the wildcard grammar makes the others.
            Step::Elements | Step::Fields | Step::Descendants(_) => {
                unreachable!("parse_steps(_, false) gives keys and indexes only")
            }
        })
        .collect())
}

/// One step of an extraction path: Spark's steps plus the wildcards that
/// `variant_get`, `try_variant_get`, the `:` syntax and `variant_flatten`
/// accept beyond Spark.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// `.name`, `['name']`: an object field.
    Key(String),
    /// `[n]`: an array element.
    Index(usize),
    /// `[*]`: every element of an array, in order (nothing from other values).
    Elements,
    /// `.*`: every field value of an object, in the object's (sorted) key order
    /// (nothing from other values).
    Fields,
    /// `..name`, `..['name']`: field `name` of the value and of every value
    /// nested in it, in document order (pre-order: a parent's field before the
    /// fields found inside its children).
    Descendants(String),
}

/// A parsed extraction path: one value (Spark's grammar) or many (wildcards).
///
/// ```
/// use df_variant::variant::path::{GetPath, PathSegment, Step, parse_get_path};
/// assert_eq!(parse_get_path("$.a[0]").unwrap(),
///            GetPath::Exact(vec![PathSegment::Key("a".into()), PathSegment::Index(0)]));
/// assert_eq!(parse_get_path("$.a[*].b").unwrap(),
///            GetPath::Wildcard(vec![Step::Key("a".into()), Step::Elements, Step::Key("b".into())]));
/// // `.*` is a wildcard here; `['*']` still names a key "*".
/// assert!(matches!(parse_get_path("$.*").unwrap(), GetPath::Wildcard(_)));
/// assert!(matches!(parse_get_path("$['*']").unwrap(), GetPath::Exact(_)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GetPath {
    /// Keys and indexes only: at most one value per row.
    Exact(Vec<PathSegment>),
    /// At least one of `[*]`, `.*`, `..name`: an array of every match per row.
    Wildcard(Vec<Step>),
}

impl GetPath {
    /// The Spark path when there is no wildcard.
    pub fn exact(&self) -> Option<&[PathSegment]> {
        match self {
            GetPath::Exact(p) => Some(p),
            GetPath::Wildcard(_) => None,
        }
    }
}

/// Parses an extraction path: Spark's grammar plus `[*]`, `.*` and `..name`
/// (see [`Step`]). Differs from Spark in one place: Spark reads `$.*` as the key
/// `*`, here it is every field; `$['*']` is the key `*` in both.
///
/// # Errors
/// [`PathError`] (Spark's `INVALID_VARIANT_GET_PATH`) for anything else.
pub fn parse_get_path(path: &str) -> Result<GetPath, PathError> {
    let steps = parse_steps(path, true)?;
    if steps
        .iter()
        .all(|s| matches!(s, Step::Key(_) | Step::Index(_)))
    {
        return Ok(GetPath::Exact(
            steps
                .into_iter()
                .filter_map(|s| match s {
                    Step::Key(k) => Some(PathSegment::Key(k)),
                    Step::Index(i) => Some(PathSegment::Index(i)),
                    _ => None,
                })
                .collect(),
        ));
    }
    Ok(GetPath::Wildcard(steps))
}

/// The end of a `.name` key starting at `start`: the next `.` or `[`.
fn key_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    while end < bytes.len() && bytes[end] != b'.' && bytes[end] != b'[' {
        end += 1;
    }
    end
}

/// `['name']` / `["name"]` at `i` (the `[`): the name and the index after `]`;
/// `Ok(None)` when the bracket does not hold a quote.
fn quoted_key(path: &str, i: usize) -> Result<Option<(String, usize)>, ()> {
    let bytes = path.as_bytes();
    let quote = *bytes.get(i + 1).ok_or(())?;
    if quote != b'\'' && quote != b'"' {
        return Ok(None);
    }
    let start = i + 2;
    let mut end = start;
    loop {
        match bytes.get(end) {
            None => return Err(()),
            Some(&c) if c == quote => break,
            Some(_) => end += 1,
        }
    }
    if bytes.get(end + 1) != Some(&b']') {
        return Err(());
    }
    // Quotes and `]` are ASCII, so these are char boundaries.
    Ok(Some((path[start..end].to_string(), end + 2)))
}

/// The parser of both grammars; `wildcards` adds `[*]`, `.*` and `..name`.
pub(crate) fn parse_steps(path: &str, wildcards: bool) -> Result<Vec<Step>, PathError> {
    let err = || PathError {
        path: path.to_string(),
    };
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'$') {
        return Err(err());
    }
    let mut steps = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'.' if wildcards && bytes.get(i + 1) == Some(&b'.') => {
                let start = i + 2;
                if bytes.get(start) == Some(&b'[') {
                    let (key, next) = quoted_key(path, start)
                        .map_err(|()| err())?
                        .ok_or_else(err)?;
                    steps.push(Step::Descendants(key));
                    i = next;
                } else {
                    let end = key_end(bytes, start);
                    if end == start || &path[start..end] == "*" {
                        return Err(err());
                    }
                    steps.push(Step::Descendants(path[start..end].to_string()));
                    i = end;
                }
            }
            b'.' => {
                let start = i + 1;
                let end = key_end(bytes, start);
                if end == start {
                    return Err(err());
                }
                // `.` and `[` are ASCII, so these are char boundaries.
                let key = &path[start..end];
                steps.push(if wildcards && key == "*" {
                    Step::Fields
                } else {
                    Step::Key(key.to_string())
                });
                i = end;
            }
            b'[' => {
                if let Some((key, next)) = quoted_key(path, i).map_err(|()| err())? {
                    steps.push(Step::Key(key));
                    i = next;
                    continue;
                }
                if wildcards && bytes.get(i + 1..i + 3) == Some(b"*]") {
                    steps.push(Step::Elements);
                    i += 3;
                    continue;
                }
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
                steps.push(Step::Index(index));
                i = end + 1;
            }
            _ => return Err(err()),
        }
    }
    Ok(steps)
}

/// Renders an extraction path in the syntax [`parse_get_path`] reads back.
pub fn steps_to_string(steps: &[Step]) -> String {
    let mut s = String::from("$");
    for step in steps {
        match step {
            Step::Key(k) => push_key(&mut s, k),
            Step::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
            Step::Elements => s.push_str("[*]"),
            Step::Fields => s.push_str(".*"),
            Step::Descendants(k) => {
                // `..name` or `..['name']`.
                s.push('.');
                if !plain_key(k) {
                    s.push('.');
                }
                push_key(&mut s, k);
            }
        }
    }
    s
}

/// Whether `k` prints as `.name`.
fn plain_key(k: &str) -> bool {
    !k.is_empty() && k != "*" && !k.contains(['.', '[', '\''])
}

/// `.name`, or `['name']` / `["name"]` when `.name` would read back otherwise
/// (empty, `*`, or holding `.`, `[` or a quote).
fn push_key(s: &mut String, k: &str) {
    if plain_key(k) {
        s.push('.');
        s.push_str(k);
    } else if !k.contains('\'') {
        s.push_str("['");
        s.push_str(k);
        s.push_str("']");
    } else {
        s.push_str("[\"");
        s.push_str(k);
        s.push_str("\"]");
    }
}

/// The steps of a Spark path.
pub fn steps_of(path: &[PathSegment]) -> Vec<Step> {
    path.iter()
        .map(|seg| match seg {
            PathSegment::Key(k) => Step::Key(k.clone()),
            PathSegment::Index(i) => Step::Index(*i),
        })
        .collect()
}

/// Renders a path back into Spark syntax (`$.a[0]['b c']`). A key `*` is
/// written `['*']`, which both grammars read as the key.
pub fn path_to_string(path: &[PathSegment]) -> String {
    steps_to_string(&steps_of(path))
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
    fn wildcard_paths() {
        use Step::{Descendants, Elements, Fields};
        let k = |s: &str| Step::Key(s.to_string());
        let cases: Vec<(&str, Vec<Step>)> = vec![
            ("$[*]", vec![Elements]),
            ("$.a[*].b", vec![k("a"), Elements, k("b")]),
            ("$.*", vec![Fields]),
            ("$.a.*[0]", vec![k("a"), Fields, Step::Index(0)]),
            ("$..a", vec![Descendants("a".into())]),
            ("$..['a.b'].c", vec![Descendants("a.b".into()), k("c")]),
            ("$.x..y[*]", vec![k("x"), Descendants("y".into()), Elements]),
        ];
        for (text, expected) in cases {
            assert_eq!(
                parse_get_path(text).unwrap(),
                GetPath::Wildcard(expected.clone()),
                "{text}"
            );
            assert_eq!(steps_to_string(&expected), text);
        }
        for text in [
            "$..", "$...a", "$..*", "$..[*]", "$..[0]", "$[*", "$[**]", "$.a[ *]",
        ] {
            assert!(parse_get_path(text).is_err(), "{text:?} should be invalid");
        }
        // Spark's grammar is unchanged: `$.*` is the key `*`, `[*]` is refused.
        assert_eq!(parse_path("$.*").unwrap(), vec![key("*")]);
        assert!(parse_path("$[*]").is_err() && parse_path("$..a").is_err());
        // A key `*` prints so that both grammars read the key back.
        let star = path_to_string(&[key("*")]);
        assert_eq!(star, "$['*']");
        assert_eq!(
            parse_get_path(&star).unwrap(),
            GetPath::Exact(vec![key("*")])
        );
    }

    #[test]
    fn round_trips_through_display() {
        for text in ["$", "$.a[3]['b.c']", "$[\"it's\"]"] {
            let p = parse_path(text).unwrap();
            assert_eq!(parse_path(&path_to_string(&p)).unwrap(), p);
        }
    }
}
