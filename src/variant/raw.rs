//! Path navigation over raw Variant value bytes, so that `variant_get` can return a
//! sub-value as a byte slice sharing the row's metadata (as Spark does) without
//! re-encoding it.
//!
//! Only the bytes on the path are read, every read is bounds-checked, and a
//! structure that does not hold together is reported as [`MalformedVariant`]
//! (a missing key or index is `Ok(None)`). Field names come from a dictionary
//! already checked by [`super::validate::check_metadata`]; the caller checks the
//! returned sub-value with [`super::validate::check_value_with`].

use super::encoding::{ARRAY, OBJECT, basic_type, container, read_uint, value_len};
use super::path::{PathSegment, Step};
use super::validate::MalformedVariant;

type R<T> = Result<T, MalformedVariant>;

#[cold]
#[inline(never)]
/// The error for a part of a value (`what`: "an object header") that its bytes
/// do not hold.
pub(crate) fn malformed(what: &str) -> MalformedVariant {
    MalformedVariant::new(format!("{what} does not fit in the value"))
}

#[inline]
fn read(bytes: &[u8], pos: usize, width: usize, what: &str) -> R<usize> {
    read_uint(bytes, pos, width).ok_or_else(|| malformed(what))
}

/// The value bytes of field `key` of the object at the start of `value`;
/// `Ok(None)` when the value is not an object or has no such field.
pub fn object_field<'v>(dict: &[&str], value: &'v [u8], key: &str) -> R<Option<&'v [u8]>> {
    if basic_type(*value.first().ok_or_else(|| malformed("a value header"))?) != OBJECT {
        return Ok(None);
    }
    let c = container(value, true).ok_or_else(|| malformed("an object header"))?;
    let name_at = |i: usize| -> R<&str> {
        let id = read(value, c.ids_start + i * c.id_w, c.id_w, "a field id")?;
        dict.get(id).copied().ok_or_else(|| malformed("a field id"))
    };
    let field_at = |i: usize| -> R<Option<&'v [u8]>> {
        read(value, c.offs_start + i * c.off_w, c.off_w, "a field offset")?;
        c.child(value, i)
            .map(Some)
            .ok_or_else(|| malformed("a field"))
    };
    // The fields are walked once: the spec orders them by name, and an object
    // that breaks the order is refused here exactly as `validate::check` refuses
    // it (so `variant_get`, `to_json` and every other function agree on it),
    // except the non-ASCII names that Spark orders by UTF-16 code units. Looking
    // up by binary search instead would silently miss fields of unsorted
    // objects (DuckDB writes such rows).
    let mut found = None;
    let mut prev: Option<&str> = None;
    for i in 0..c.n {
        let name = name_at(i)?;
        if let Some(p) = prev
            && p >= name
        {
            if p == name {
                return Err(MalformedVariant::new(format!(
                    "duplicate field name \"{name}\""
                )));
            }
            if name.is_ascii() && p.is_ascii() {
                return Err(MalformedVariant::new(format!(
                    "object fields are not sorted at \"{name}\""
                )));
            }
        }
        if found.is_none() && name == key {
            found = Some(i);
        }
        prev = Some(name);
    }
    match found {
        Some(i) => field_at(i),
        None => Ok(None),
    }
}

/// The value bytes of element `index` of the array at the start of `value`;
/// `Ok(None)` when the value is not an array or the index is out of range.
pub fn array_element(value: &[u8], index: usize) -> R<Option<&[u8]>> {
    if basic_type(*value.first().ok_or_else(|| malformed("a value header"))?) != ARRAY {
        return Ok(None);
    }
    let c = container(value, false).ok_or_else(|| malformed("an array header"))?;
    if index >= c.n {
        return Ok(None);
    }
    let off = read(
        value,
        c.offs_start + index * c.off_w,
        c.off_w,
        "an element offset",
    )?;
    let end = read(
        value,
        c.offs_start + (index + 1) * c.off_w,
        c.off_w,
        "an element offset",
    )?;
    value
        .get(c.data_start + off..c.data_start + end)
        .map(Some)
        .ok_or_else(|| malformed("an array element"))
}

/// One child of a container: its field name (objects) and its value bytes.
pub type Child<'d, 'v> = (Option<&'d str>, &'v [u8]);

/// The children of the object or array at the start of `value`, in stored order:
/// `(field name, value bytes)` for objects, `(None, element bytes)` for arrays;
/// `Ok(None)` for any other value.
///
/// # Errors
/// [`MalformedVariant`] when the container does not hold together.
pub fn children<'d, 'v>(dict: &[&'d str], value: &'v [u8]) -> R<Option<Vec<Child<'d, 'v>>>> {
    let is_object = match basic_type(*value.first().ok_or_else(|| malformed("a value header"))?) {
        OBJECT => true,
        ARRAY => false,
        _ => return Ok(None),
    };
    let c = container(value, is_object).ok_or_else(|| malformed("a container header"))?;
    let mut out = Vec::with_capacity(c.n.min(value.len()));
    for i in 0..c.n {
        let name = if is_object {
            let id = read(value, c.ids_start + i * c.id_w, c.id_w, "a field id")?;
            Some(*dict.get(id).ok_or_else(|| malformed("a field id"))?)
        } else {
            None
        };
        read(value, c.offs_start + i * c.off_w, c.off_w, "an offset")?;
        let child = c
            .child(value, i)
            .ok_or_else(|| malformed("a child value"))?;
        out.push((name, child));
    }
    Ok(Some(out))
}

/// Follows `path` through the value bytes: `Ok(None)` when a step is missing.
///
/// ```
/// use df_variant::variant::{json::{JsonParseOptions, JsonToVariant}, path::parse_path, raw::get_path};
/// use df_variant::variant::validate::check_metadata;
/// use parquet_variant::Variant;
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// p.parse(r#"{"a": [10, {"b": "x"}]}"#).unwrap();
/// let dict = check_metadata(p.metadata()).unwrap();
/// let sub = get_path(&dict, p.value(), &parse_path("$.a[1].b").unwrap()).unwrap().unwrap();
/// assert_eq!(Variant::try_new(p.metadata(), sub).unwrap(), Variant::from("x"));
/// ```
///
/// # Errors
/// [`MalformedVariant`] when a container on the path does not hold together.
pub fn get_path<'v>(dict: &[&str], value: &'v [u8], path: &[PathSegment]) -> R<Option<&'v [u8]>> {
    let mut current = value;
    for seg in path {
        let next = match seg {
            PathSegment::Key(k) => object_field(dict, current, k)?,
            PathSegment::Index(i) => array_element(current, *i)?,
        };
        match next {
            Some(n) => current = n,
            None => return Ok(None),
        }
    }
    if path.is_empty() {
        let len = value_len(current).ok_or_else(|| malformed("the value"))?;
        return Ok(current.get(..len));
    }
    Ok(Some(current))
}

/// The most values one row's wildcard path may match ([`get_all`]); past it the
/// row is an error rather than an output that grows with the product of the
/// wildcards (`$..a..a..a` over deep nesting).
pub const MAX_MATCHES: usize = 1 << 20;

/// The most values [`get_all`] may visit for one row (several `..` steps
/// multiply the work even when little matches).
pub const MAX_VISITS: usize = 1 << 24;

/// Why [`get_all`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WildcardError {
    /// The bytes on the way do not hold together.
    Malformed(MalformedVariant),
    /// The row's matches or visits passed [`MAX_MATCHES`] or [`MAX_VISITS`].
    TooMuch(String),
}

impl From<MalformedVariant> for WildcardError {
    fn from(e: MalformedVariant) -> Self {
        Self::Malformed(e)
    }
}

impl std::fmt::Display for WildcardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed(e) => e.fmt(f),
            Self::TooMuch(why) => f.write_str(why),
        }
    }
}

/// [`get_all`] after the keys and indexes that lead to the first wildcard:
/// `Ok(false)` (and nothing in `out`) when those find nothing, so that a
/// missing prefix is NULL as for a path without wildcards.
///
/// # Errors
/// As [`get_all`].
pub fn get_all_under_prefix<'v>(
    dict: &[&str],
    value: &'v [u8],
    steps: &[Step],
    out: &mut Vec<&'v [u8]>,
) -> Result<bool, WildcardError> {
    let mut node = value;
    let mut taken = 0;
    for step in steps {
        let next = match step {
            Step::Key(k) => object_field(dict, node, k)?,
            Step::Index(i) => array_element(node, *i)?,
            Step::Elements | Step::Fields | Step::Descendants(_) => break,
        };
        match next {
            Some(n) => node = n,
            None => return Ok(false),
        }
        taken += 1;
    }
    get_all(dict, node, &steps[taken..], out)?;
    Ok(true)
}

/// Follows a wildcard path through the value bytes and appends every match to
/// `out`, in document order (see [`Step`]). A step that finds nothing (a
/// missing key, an index out of range, `[*]` on a non-array, `.*` on a
/// non-object) drops that branch.
///
/// ```
/// use df_variant::variant::{json::{JsonParseOptions, JsonToVariant}, path::{parse_get_path, GetPath}, raw::get_all};
/// use df_variant::variant::validate::check_metadata;
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// p.parse(r#"{"a": [{"b": 1}, {"c": 2}, {"b": 3}]}"#).unwrap();
/// let dict = check_metadata(p.metadata()).unwrap();
/// let GetPath::Wildcard(steps) = parse_get_path("$.a[*].b").unwrap() else { unreachable!() };
/// let mut out = Vec::new();
/// get_all(&dict, p.value(), &steps, &mut out).unwrap();
/// assert_eq!(out.len(), 2);
/// ```
///
/// # Errors
/// [`WildcardError`] when the bytes on the way do not hold together, more
/// than [`MAX_MATCHES`] values match, or more than [`MAX_VISITS`] are visited.
pub fn get_all<'v>(
    dict: &[&str],
    value: &'v [u8],
    steps: &[Step],
    out: &mut Vec<&'v [u8]>,
) -> Result<(), WildcardError> {
    /// Work left: apply `steps[i..]` to a value, or look for
    /// `Descendants(steps[i])` inside a value's children.
    enum Work<'v> {
        Apply(&'v [u8], usize),
        Inside(&'v [u8], usize),
    }
    let too_many = || {
        WildcardError::TooMuch(format!(
            "the path matches more than {MAX_MATCHES} values in one row"
        ))
    };
    let mut stack = vec![Work::Apply(value, 0)];
    let mut visits = 0usize;
    while let Some(work) = stack.pop() {
        visits += 1;
        if visits > MAX_VISITS {
            return Err(WildcardError::TooMuch(format!(
                "the path visits more than {MAX_VISITS} values in one row"
            )));
        }
        match work {
            Work::Apply(v, i) => {
                let Some(step) = steps.get(i) else {
                    if out.len() >= MAX_MATCHES {
                        return Err(too_many());
                    }
                    let len = value_len(v).ok_or_else(|| malformed("the value"))?;
                    out.push(v.get(..len).ok_or_else(|| malformed("the value"))?);
                    continue;
                };
                match step {
                    Step::Key(k) => {
                        if let Some(c) = object_field(dict, v, k)? {
                            stack.push(Work::Apply(c, i + 1));
                        }
                    }
                    Step::Index(n) => {
                        if let Some(c) = array_element(v, *n)? {
                            stack.push(Work::Apply(c, i + 1));
                        }
                    }
                    Step::Elements | Step::Fields => {
                        let wanted = if matches!(step, Step::Elements) {
                            ARRAY
                        } else {
                            OBJECT
                        };
                        let header = *v.first().ok_or_else(|| malformed("a value header"))?;
                        if basic_type(header) != wanted {
                            continue;
                        }
                        if let Some(kids) = children(dict, v)? {
                            stack.extend(kids.iter().rev().map(|(_, c)| Work::Apply(c, i + 1)));
                        }
                    }
                    Step::Descendants(k) => {
                        // Pre-order: this value's field first, then what its
                        // children hold (pushed first, so popped after).
                        stack.push(Work::Inside(v, i));
                        if let Some(c) = object_field(dict, v, k)? {
                            stack.push(Work::Apply(c, i + 1));
                        }
                    }
                }
            }
            Work::Inside(v, i) => {
                if let Some(kids) = children(dict, v)? {
                    // Each child is looked at as the descendant search would
                    // look at the value itself.
                    stack.extend(kids.iter().rev().map(|(_, c)| Work::Apply(c, i)));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::path::parse_path;
    use crate::variant::validate::{check, check_metadata};

    // Sorted dictionary ["a", "b"]; an object listing "b" (= 1) before "a" (= 2).
    const META: [u8; 7] = [0x11, 0x02, 0x00, 0x01, 0x02, b'a', b'b'];
    const UNSORTED: [u8; 11] = [
        0x02, 0x02, 0x01, 0x00, 0x00, 0x02, 0x04, 0x0c, 0x01, 0x0c, 0x02,
    ];

    #[test]
    fn unsorted_objects_are_refused_like_the_full_check() {
        let dict = check_metadata(&META).unwrap();
        let full = check(&META, &UNSORTED).unwrap_err();
        for key in ["a", "b", "c"] {
            let e =
                get_path(&dict, &UNSORTED, &parse_path(&format!("$.{key}")).unwrap()).unwrap_err();
            assert_eq!(e, full, "key {key}");
        }
    }

    #[test]
    fn sorted_objects_find_every_field() {
        // Ids in name order, values stored the other way: "a" (= 2), "b" (= 1).
        let sorted = [
            0x02, 0x02, 0x00, 0x01, 0x02, 0x00, 0x04, 0x0c, 0x01, 0x0c, 0x02,
        ];
        check(&META, &sorted).unwrap();
        let dict = check_metadata(&META).unwrap();
        let get = |k: &str| get_path(&dict, &sorted, &parse_path(k).unwrap()).unwrap();
        assert_eq!(get("$.a"), Some(&[0x0c, 0x02][..]));
        assert_eq!(get("$.b"), Some(&[0x0c, 0x01][..]));
        assert_eq!(get("$.c"), None);
    }

    /// Several `..` steps over deep nesting multiply: the row is refused with
    /// an error that says why, instead of building an answer of millions of
    /// values.
    #[test]
    fn wildcard_matches_are_bounded() {
        use crate::variant::json::{JsonParseOptions, JsonToVariant};
        use crate::variant::path::{GetPath, parse_get_path};
        let depth = 120;
        let doc = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        p.parse(&doc).unwrap();
        let dict = check_metadata(p.metadata()).unwrap();
        let steps = |text: &str| match parse_get_path(text).unwrap() {
            GetPath::Wildcard(s) => s,
            GetPath::Exact(_) => unreachable!(),
        };
        let mut out = Vec::new();
        get_all(&dict, p.value(), &steps("$..a"), &mut out).unwrap();
        assert_eq!(out.len(), depth);
        out.clear();
        let e = get_all(&dict, p.value(), &steps("$..a..a..a..a"), &mut out).unwrap_err();
        assert!(
            matches!(&e, WildcardError::TooMuch(why) if why.contains("more than")),
            "{e}"
        );
    }
}
