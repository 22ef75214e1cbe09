//! Spark 4.3's variant mutators over the bytes: `variant_insert`,
//! `variant_set`, `variant_delete`, `variant_array_append` and
//! `variant_strip_nulls`.
//!
//! Each writes the new value in one pass over the old one, without decoding it
//! into a tree: the containers on the path are rebuilt (their headers and
//! offsets change), and every value beside the path is copied as bytes. New
//! object keys are appended to the row's metadata dictionary, so existing field
//! ids stay valid (the dictionary is then marked unsorted, as the spec allows).
//! An inserted value that comes with its own dictionary (another variant) has
//! its field ids mapped into the row's.
//!
//! The semantics are Spark 4.3.0's, checked with pyspark 4.3.0 and pinned in
//! `sqllogictests/test_files/variant_mutate.slt`:
//!
//! * a missing object key or array index on the way to an insert or set is
//!   created (objects for keys, arrays padded with nulls for indexes), unless
//!   `variant_set` was told not to create, which leaves the value unchanged;
//! * a step that meets a value of the wrong type (a key on an array, an index
//!   on a string, anything under a variant null) is
//!   `VARIANT_PATH_TYPE_MISMATCH` for insert, set and append, and leaves the
//!   value unchanged for delete;
//! * inserting an existing key is `VARIANT_DUPLICATE_KEY`; inserting at index
//!   `i` shifts later elements right, past the end it pads with nulls;
//! * `variant_array_append` leaves the value unchanged when the path is missing
//!   and refuses a target that is not an array;
//! * `variant_strip_nulls` drops object fields whose value is a variant null,
//!   and null array elements unless told to keep them; containers it empties
//!   stay.
//!
//! ```
//! use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
//! use df_variant::variant::mutate::{Mutation, mutate};
//! use df_variant::variant::path::parse_path;
//! use df_variant::variant::format::to_json_string;
//! let parse = |s: &str| {
//!     let mut p = JsonToVariant::new(JsonParseOptions::default());
//!     p.parse(s).unwrap();
//!     (p.metadata().to_vec(), p.value().to_vec())
//! };
//! let (m, v) = parse(r#"{"b": [1, 2]}"#);
//! let (nm, nv) = parse(r#"{"x": true}"#);
//! let out = mutate(&m, &v, &parse_path("$.a").unwrap(), Mutation::Insert((&nm, &nv))).unwrap();
//! let (m2, v2) = (out.metadata.unwrap(), out.value.unwrap());
//! let json = to_json_string(&parquet_variant::Variant::try_new(&m2, &v2).unwrap(), &Default::default());
//! assert_eq!(json, r#"{"a":{"x":true},"b":[1,2]}"#);
//! ```

use std::collections::HashMap;

use super::encoding::{
    ARRAY, OBJECT, TooLarge, VARIANT_NULL, basic_type, container, write_array_from_ends,
    write_metadata, write_object,
};
use super::json::SIZE_LIMIT;
use super::path::PathSegment;
use super::raw::malformed;
use super::validate::{MalformedVariant, check_metadata, check_value_wide};

/// Why a mutation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutateError {
    /// The step after the first `at` segments of the path met a value of the
    /// wrong type (Spark's `VARIANT_PATH_TYPE_MISMATCH`).
    PathTypeMismatch {
        /// How many segments of the path lead to the value that does not fit.
        at: usize,
    },
    /// `variant_insert` of a key the object already has (`VARIANT_DUPLICATE_KEY`).
    DuplicateKey(String),
    /// The result would be larger than 128 MiB (`VARIANT_SIZE_LIMIT`).
    TooLarge,
    /// The input bytes are not a valid Variant.
    Malformed(MalformedVariant),
}

impl From<MalformedVariant> for MutateError {
    fn from(e: MalformedVariant) -> Self {
        Self::Malformed(e)
    }
}

impl From<TooLarge> for MutateError {
    fn from(_: TooLarge) -> Self {
        Self::TooLarge
    }
}

impl MutateError {
    /// Spark's message for this error, raised by `func` on the path `path`
    /// (`text` as the user wrote it).
    pub fn message(&self, func: &str, text: &str, path: &[PathSegment]) -> String {
        let text = super::shorten_quoted(text, '\'');
        match self {
            Self::PathTypeMismatch { at } => format!(
                "[VARIANT_PATH_TYPE_MISMATCH] The path {text} is incompatible with the variant value at {} in `{func}`.",
                super::shorten_quoted(&spark_prefix(&path[..(*at).min(path.len())]), '\'')
            ),
            Self::DuplicateKey(key) => format!(
                "[VARIANT_DUPLICATE_KEY] Failed to build variant because of a duplicate object key {}.",
                super::shorten_quoted(key, '`')
            ),
            Self::TooLarge => format!(
                "[VARIANT_SIZE_LIMIT] Cannot build variant bigger than 128.0 MiB in `{func}`."
            ),
            Self::Malformed(e) => format!("{e}"),
        }
    }
}

/// A path prefix as Spark prints it in `VARIANT_PATH_TYPE_MISMATCH`: `.key`,
/// or `['key']` for a key holding `.` or `[` (or empty), and `[i]`.
fn spark_prefix(path: &[PathSegment]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            PathSegment::Key(k) if k.is_empty() || k.contains(['.', '[']) => {
                s.push_str("['");
                s.push_str(k);
                s.push_str("']");
            }
            PathSegment::Key(k) => {
                s.push('.');
                s.push_str(k);
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

/// What to do at the end of the path. The new value comes as its own
/// `(metadata, value)` bytes.
#[derive(Debug, Clone, Copy)]
pub enum Mutation<'n> {
    /// `variant_insert`: add a key (an error if present) or insert at an index.
    Insert((&'n [u8], &'n [u8])),
    /// `variant_set`: replace or create; with `create: false`, only replace.
    Set {
        /// The new value's metadata and value bytes.
        value: (&'n [u8], &'n [u8]),
        /// Whether missing keys and indexes are created.
        create: bool,
    },
    /// `variant_delete` of one path.
    Delete,
    /// `variant_array_append`: the path names an array to append to.
    Append((&'n [u8], &'n [u8])),
}

impl Mutation<'_> {
    fn creates(&self) -> bool {
        match self {
            Self::Insert(_) => true,
            Self::Set { create, .. } => *create,
            Self::Delete | Self::Append(_) => false,
        }
    }

    fn new_value(&self) -> Option<(&[u8], &[u8])> {
        match self {
            Self::Insert(v) | Self::Append(v) | Self::Set { value: v, .. } => Some(*v),
            Self::Delete => None,
        }
    }
}

/// The result of a mutation: new metadata and value bytes, `None` where the
/// input's are unchanged.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mutated {
    /// The new metadata, when keys were added to the dictionary.
    pub metadata: Option<Vec<u8>>,
    /// The new value, when it changed.
    pub value: Option<Vec<u8>>,
}

/// Applies `mutation` at `path` to the Variant `(metadata, value)`. The path
/// must not be empty (Spark refuses `$` as a target of insert, set and
/// delete); `variant_array_append` accepts it.
///
/// # Errors
/// [`MutateError`]; the input (and the new value) are checked first, so
/// malformed bytes are [`MutateError::Malformed`], never a wrong result.
pub fn mutate(
    metadata: &[u8],
    value: &[u8],
    path: &[PathSegment],
    mutation: Mutation<'_>,
) -> Result<Mutated, MutateError> {
    let dict = check_metadata(metadata)?;
    // Edits work on the bytes: dates past chrono's years are carried as they are.
    let (len, _) = check_value_wide(value, &dict)?;
    if path.is_empty() && !matches!(mutation, Mutation::Append(_)) {
        // Not a target (the functions refuse `$` when they parse the path).
        return Ok(Mutated::default());
    }
    let new = match mutation.new_value() {
        Some((m, v)) => {
            let new_dict = check_metadata(m)?;
            let (new_len, _) = check_value_wide(v, &new_dict)?;
            Some((new_dict, &v[..new_len]))
        }
        None => None,
    };
    let mut editor = Editor {
        dict: Dictionary::new(&dict),
        path,
        mutation,
        new: new.as_ref().map(|(d, v)| (d.as_slice(), *v)),
    };
    let edited = editor.edit(&value[..len], 0)?;
    let value = match edited {
        Edit::Unchanged => None,
        Edit::Replaced(v) if v.len() > SIZE_LIMIT => return Err(MutateError::TooLarge),
        Edit::Replaced(v) => Some(v),
    };
    Ok(Mutated {
        metadata: editor.dict.finish()?,
        value,
    })
}

/// `variant_strip_nulls`: the value without object fields whose value is a
/// variant null, and without null array elements when `include_arrays`;
/// `None` when nothing was removed. The dictionary does not change.
///
/// # Errors
/// [`MutateError::Malformed`] for malformed input.
pub fn strip_nulls(
    metadata: &[u8],
    value: &[u8],
    include_arrays: bool,
) -> Result<Option<Vec<u8>>, MutateError> {
    let dict = check_metadata(metadata)?;
    let (len, _) = check_value_wide(value, &dict)?;
    Ok(match strip(&value[..len], include_arrays)? {
        Edit::Unchanged => None,
        Edit::Replaced(v) => Some(v),
    })
}

/// The `(field id, value bytes)` of the object at the start of `value`, in
/// stored order (checked bytes: every read fits).
fn object_fields(value: &[u8]) -> Result<Vec<(usize, &[u8])>, MalformedVariant> {
    let c = container(value, true).ok_or_else(|| malformed("an object header"))?;
    (0..c.n)
        .map(|i| {
            let id = c.id(value, i).ok_or_else(|| malformed("a field id"))?;
            let child = c.child(value, i).ok_or_else(|| malformed("a field"))?;
            Ok((id, child))
        })
        .collect()
}

/// The element bytes of the array at the start of `value`.
fn array_elements(value: &[u8]) -> Result<Vec<&[u8]>, MalformedVariant> {
    let c = container(value, false).ok_or_else(|| malformed("an array header"))?;
    (0..c.n)
        .map(|i| c.child(value, i).ok_or_else(|| malformed("an element")))
        .collect()
}

/// Writes an array of `elements`.
fn array_of<'e>(elements: impl IntoIterator<Item = &'e [u8]>) -> Result<Vec<u8>, MutateError> {
    let (mut data, mut ends) = (Vec::new(), Vec::new());
    for e in elements {
        if data.len() + e.len() > SIZE_LIMIT {
            return Err(MutateError::TooLarge);
        }
        data.extend_from_slice(e);
        ends.push(data.len());
    }
    let mut out = Vec::with_capacity(data.len() + 5 + 4 * ends.len());
    write_array_from_ends(&mut out, &ends, &data)?;
    Ok(out)
}

/// The array `elements` with `remove` elements at `at` replaced by `insert`.
fn spliced(
    elements: &[&[u8]],
    at: usize,
    remove: usize,
    insert: Option<&[u8]>,
) -> Result<Vec<u8>, MutateError> {
    array_of(
        elements[..at]
            .iter()
            .copied()
            .chain(insert)
            .chain(elements[at + remove..].iter().copied()),
    )
}

/// `count` variant nulls, refused past the size limit before any is made.
fn nulls<'e>(count: usize) -> Result<impl Iterator<Item = &'e [u8]>, MutateError> {
    if count > SIZE_LIMIT {
        return Err(MutateError::TooLarge);
    }
    Ok(std::iter::repeat_n::<&'e [u8]>(VARIANT_NULL, count))
}

enum Edit {
    Unchanged,
    Replaced(Vec<u8>),
}

/// The row's dictionary, with the keys a mutation adds.
struct Dictionary<'d, 'm> {
    strings: &'d [&'m str],
    added: Vec<String>,
    /// Name to id, built on the first lookup in a large dictionary.
    index: Option<HashMap<String, usize>>,
}

impl<'d, 'm> Dictionary<'d, 'm> {
    fn new(strings: &'d [&'m str]) -> Self {
        Self {
            strings,
            added: Vec::new(),
            index: None,
        }
    }

    fn name(&self, id: usize) -> Result<&str, MalformedVariant> {
        match self.strings.get(id) {
            Some(s) => Ok(s),
            None => self
                .added
                .get(id - self.strings.len())
                .map(String::as_str)
                .ok_or_else(|| malformed("a field id")),
        }
    }

    /// The id of `name`, appending it when the dictionary lacks it.
    fn id_of(&mut self, name: &str) -> usize {
        const LINEAR: usize = 16;
        let found = if self.strings.len() + self.added.len() <= LINEAR {
            self.strings
                .iter()
                .copied()
                .chain(self.added.iter().map(String::as_str))
                .position(|s| s == name)
        } else {
            let (strings, added) = (self.strings, &self.added);
            let index = self.index.get_or_insert_with(|| {
                let mut index = HashMap::with_capacity(strings.len() + added.len());
                for (id, s) in strings
                    .iter()
                    .copied()
                    .chain(added.iter().map(String::as_str))
                    .enumerate()
                {
                    index.entry(s.to_string()).or_insert(id);
                }
                index
            });
            index.get(name).copied()
        };
        found.unwrap_or_else(|| {
            let id = self.strings.len() + self.added.len();
            self.added.push(name.to_string());
            if let Some(index) = self.index.as_mut() {
                index.insert(name.to_string(), id);
            }
            id
        })
    }

    /// The new metadata bytes, when keys were added.
    fn finish(&self) -> Result<Option<Vec<u8>>, MutateError> {
        if self.added.is_empty() {
            return Ok(None);
        }
        let mut strings = Vec::new();
        let mut ends = Vec::with_capacity(self.strings.len() + self.added.len());
        for s in self
            .strings
            .iter()
            .copied()
            .chain(self.added.iter().map(String::as_str))
        {
            strings.extend_from_slice(s.as_bytes());
            ends.push(strings.len());
        }
        if strings.len() > SIZE_LIMIT {
            return Err(MutateError::TooLarge);
        }
        let mut out = Vec::new();
        write_metadata(&mut out, &ends, &strings)?;
        Ok(Some(out))
    }
}

struct Editor<'a, 'd, 'm> {
    dict: Dictionary<'d, 'm>,
    path: &'a [PathSegment],
    mutation: Mutation<'a>,
    /// The new value's dictionary and value bytes (checked).
    new: Option<(&'a [&'a str], &'a [u8])>,
}

impl Editor<'_, '_, '_> {
    /// Edits the value reached by the first `depth` segments of the path.
    fn edit(&mut self, value: &[u8], depth: usize) -> Result<Edit, MutateError> {
        let Some(segment) = self.path.get(depth) else {
            // Only an append walks the whole path: the value is its target.
            return self.append_to(value, depth);
        };
        let last = depth + 1 == self.path.len() && !matches!(self.mutation, Mutation::Append(_));
        let delete = matches!(self.mutation, Mutation::Delete);
        let header = value.first().copied().unwrap_or(0);
        match segment {
            PathSegment::Key(key) => {
                if basic_type(header) != OBJECT {
                    return if delete {
                        Ok(Edit::Unchanged)
                    } else {
                        Err(MutateError::PathTypeMismatch { at: depth })
                    };
                }
                let mut fields = object_fields(value)?;
                let mut at = None;
                for (i, (id, _)) in fields.iter().enumerate() {
                    if self.dict.name(*id)? == key {
                        at = Some(i);
                        break;
                    }
                }
                let replacement = match at {
                    Some(i) if !last => match self.edit(fields[i].1, depth + 1)? {
                        Edit::Unchanged => return Ok(Edit::Unchanged),
                        Edit::Replaced(child) => Some((i, child)),
                    },
                    Some(_) if matches!(self.mutation, Mutation::Insert(_)) => {
                        return Err(MutateError::DuplicateKey(key.clone()));
                    }
                    Some(i) if delete => {
                        fields.remove(i);
                        None
                    }
                    Some(i) => Some((i, self.chain(depth + 1)?)),
                    None if !self.mutation.creates() => return Ok(Edit::Unchanged),
                    None => {
                        let child = self.chain(depth + 1)?;
                        let id = self.dict.id_of(key);
                        return self.object_with(&fields, Some((id, child)), None);
                    }
                };
                self.object_with(&fields, None, replacement)
            }
            PathSegment::Index(index) => {
                let index = *index;
                if basic_type(header) != ARRAY {
                    return if delete {
                        Ok(Edit::Unchanged)
                    } else {
                        Err(MutateError::PathTypeMismatch { at: depth })
                    };
                }
                let elements = array_elements(value)?;
                let n = elements.len();
                if index < n && !last {
                    return Ok(match self.edit(elements[index], depth + 1)? {
                        Edit::Unchanged => Edit::Unchanged,
                        Edit::Replaced(child) => {
                            Edit::Replaced(spliced(&elements, index, 1, Some(&child))?)
                        }
                    });
                }
                if index < n && delete {
                    return Ok(Edit::Replaced(spliced(&elements, index, 1, None)?));
                }
                if index < n && matches!(self.mutation, Mutation::Set { .. }) {
                    let child = self.chain(depth + 1)?;
                    return Ok(Edit::Replaced(spliced(&elements, index, 1, Some(&child))?));
                }
                if index <= n && last && matches!(self.mutation, Mutation::Insert(_)) {
                    let child = self.chain(depth + 1)?;
                    return Ok(Edit::Replaced(spliced(&elements, index, 0, Some(&child))?));
                }
                if index < n || !self.mutation.creates() {
                    return Ok(Edit::Unchanged);
                }
                // Past the end: pad with nulls, then the rest of the path.
                let child = self.chain(depth + 1)?;
                Ok(Edit::Replaced(array_of(
                    elements
                        .iter()
                        .copied()
                        .chain(nulls(index - n)?)
                        .chain([child.as_slice()]),
                )?))
            }
        }
    }

    /// The object `fields` with `added` inserted in name order, or with the
    /// field at `replaced.0` given new bytes.
    fn object_with(
        &mut self,
        fields: &[(usize, &[u8])],
        added: Option<(usize, Vec<u8>)>,
        replaced: Option<(usize, Vec<u8>)>,
    ) -> Result<Edit, MutateError> {
        let mut all: Vec<(&str, usize, &[u8])> = Vec::with_capacity(fields.len() + 1);
        for (i, (id, bytes)) in fields.iter().enumerate() {
            let bytes = match &replaced {
                Some((r, new)) if *r == i => new.as_slice(),
                _ => bytes,
            };
            all.push((self.dict.name(*id)?, *id, bytes));
        }
        if let Some((id, bytes)) = &added {
            all.push((self.dict.name(*id)?, *id, bytes.as_slice()));
        }
        // The spec orders fields by name; a stored object may be in Spark's
        // UTF-16 order, so the whole list is put in byte order.
        if !all.is_sorted_by(|a, b| a.0 <= b.0) {
            all.sort_by(|a, b| a.0.cmp(b.0));
        }
        let pairs: Vec<(usize, &[u8])> = all.iter().map(|(_, id, b)| (*id, *b)).collect();
        let size: usize = pairs.iter().map(|p| p.1.len()).sum();
        if size > SIZE_LIMIT {
            return Err(MutateError::TooLarge);
        }
        let mut out = Vec::with_capacity(size + 9 + 8 * pairs.len());
        write_object(&mut out, &pairs)?;
        Ok(Edit::Replaced(out))
    }

    /// `variant_array_append` at its target, reached by `depth` segments.
    fn append_to(&mut self, value: &[u8], depth: usize) -> Result<Edit, MutateError> {
        if basic_type(value.first().copied().unwrap_or(0)) != ARRAY {
            return Err(MutateError::PathTypeMismatch { at: depth });
        }
        let elements = array_elements(value)?;
        let new = self.chain(depth)?;
        Ok(Edit::Replaced(array_of(
            elements.iter().copied().chain([new.as_slice()]),
        )?))
    }

    /// The value that the segments from `depth` on create, ending in the new
    /// value: an object per key, an array padded with nulls per index.
    fn chain(&mut self, depth: usize) -> Result<Vec<u8>, MutateError> {
        let append = matches!(self.mutation, Mutation::Append(_));
        match self.path.get(depth) {
            Some(PathSegment::Key(key)) if !append => {
                let child = self.chain(depth + 1)?;
                let id = self.dict.id_of(key);
                let mut out = Vec::with_capacity(child.len() + 8);
                write_object(&mut out, &[(id, &child)])?;
                Ok(out)
            }
            Some(PathSegment::Index(index)) if !append => {
                let child = self.chain(depth + 1)?;
                array_of(nulls(*index)?.chain([child.as_slice()]))
            }
            _ => {
                let (dict, value) = self.new.ok_or_else(|| malformed("the new value"))?;
                self.remap(dict, value)
            }
        }
    }

    /// `value` (with dictionary `dict`) with its field ids mapped into the
    /// row's dictionary.
    fn remap(&mut self, dict: &[&str], value: &[u8]) -> Result<Vec<u8>, MutateError> {
        match basic_type(value.first().copied().unwrap_or(0)) {
            OBJECT => {
                let fields = object_fields(value)?;
                let mut out_fields = Vec::with_capacity(fields.len());
                for (id, child) in fields {
                    let name = dict.get(id).ok_or_else(|| malformed("a field id"))?;
                    let child = self.remap(dict, child)?;
                    out_fields.push((self.dict.id_of(name), child));
                }
                let pairs: Vec<(usize, &[u8])> = out_fields
                    .iter()
                    .map(|(id, b)| (*id, b.as_slice()))
                    .collect();
                let mut out = Vec::new();
                write_object(&mut out, &pairs)?;
                Ok(out)
            }
            ARRAY => {
                let elements = array_elements(value)?;
                let mut copied = Vec::with_capacity(elements.len());
                for e in elements {
                    copied.push(self.remap(dict, e)?);
                }
                array_of(copied.iter().map(Vec::as_slice))
            }
            _ => Ok(value.to_vec()),
        }
    }
}

/// [`strip_nulls`] of one value.
fn strip(value: &[u8], include_arrays: bool) -> Result<Edit, MutateError> {
    let is_null = |v: &[u8]| v == VARIANT_NULL;
    match basic_type(value.first().copied().unwrap_or(0)) {
        OBJECT => {
            let fields = object_fields(value)?;
            let mut changed = false;
            let mut kept: Vec<(usize, std::borrow::Cow<'_, [u8]>)> =
                Vec::with_capacity(fields.len());
            for (id, child) in fields {
                if is_null(child) {
                    changed = true;
                    continue;
                }
                match strip(child, include_arrays)? {
                    Edit::Unchanged => kept.push((id, child.into())),
                    Edit::Replaced(c) => {
                        changed = true;
                        kept.push((id, c.into()));
                    }
                }
            }
            if !changed {
                return Ok(Edit::Unchanged);
            }
            let pairs: Vec<(usize, &[u8])> = kept.iter().map(|(id, b)| (*id, b.as_ref())).collect();
            let mut out = Vec::new();
            write_object(&mut out, &pairs)?;
            Ok(Edit::Replaced(out))
        }
        ARRAY => {
            let elements = array_elements(value)?;
            let mut changed = false;
            let mut kept: Vec<std::borrow::Cow<'_, [u8]>> = Vec::with_capacity(elements.len());
            for e in elements {
                if include_arrays && is_null(e) {
                    changed = true;
                    continue;
                }
                match strip(e, include_arrays)? {
                    Edit::Unchanged => kept.push(e.into()),
                    Edit::Replaced(c) => {
                        changed = true;
                        kept.push(c.into());
                    }
                }
            }
            if !changed {
                return Ok(Edit::Unchanged);
            }
            Ok(Edit::Replaced(array_of(kept.iter().map(AsRef::as_ref))?))
        }
        _ => Ok(Edit::Unchanged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::format::to_json_string;
    use crate::variant::json::{JsonParseOptions, JsonToVariant};
    use crate::variant::path::parse_path;
    use crate::variant::validate::check;

    fn parse(s: &str) -> (Vec<u8>, Vec<u8>) {
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        p.parse(s).unwrap();
        (p.metadata().to_vec(), p.value().to_vec())
    }

    fn json(m: &[u8], v: &[u8]) -> String {
        check(m, v).unwrap();
        to_json_string(
            &parquet_variant::Variant::try_new(m, v).unwrap(),
            &crate::variant::tz::SessionTz::default(),
        )
    }

    /// Applies `op` ("insert", "set", "set!" (no create), "delete", "append")
    /// of `new` at `path` to `input`; the JSON result or the error message.
    fn run(input: &str, path: &str, op: &str, new: &str) -> String {
        let (m, v) = parse(input);
        let (nm, nv) = parse(new);
        let segs = parse_path(path).unwrap();
        let mutation = match op {
            "insert" => Mutation::Insert((&nm, &nv)),
            "set" => Mutation::Set {
                value: (&nm, &nv),
                create: true,
            },
            "set!" => Mutation::Set {
                value: (&nm, &nv),
                create: false,
            },
            "delete" => Mutation::Delete,
            "append" => Mutation::Append((&nm, &nv)),
            _ => unreachable!(),
        };
        match mutate(&m, &v, &segs, mutation) {
            Ok(out) => {
                let m2 = out.metadata.unwrap_or(m.clone());
                let v2 = out.value.unwrap_or(v.clone());
                json(&m2, &v2)
            }
            Err(e) => e.message("f", path, &segs),
        }
    }

    /// Spark 4.3.0's answers (pyspark, `DESCRIBE FUNCTION EXTENDED` examples
    /// and our probes).
    #[test]
    fn matches_spark() {
        let cases = [
            (r#"{"a": 1}"#, "$.b", "insert", "2", r#"{"a":1,"b":2}"#),
            (r#"{"b": 1}"#, "$.a", "insert", "2", r#"{"a":2,"b":1}"#),
            ("{}", "$.a.b", "insert", "1", r#"{"a":{"b":1}}"#),
            (
                r#"["a","b","c"]"#,
                "$[1]",
                "insert",
                r#""z""#,
                r#"["a","z","b","c"]"#,
            ),
            (
                r#"["a","b"]"#,
                "$[5]",
                "insert",
                r#""z""#,
                r#"["a","b",null,null,null,"z"]"#,
            ),
            (
                r#"["a","b"]"#,
                "$[2]",
                "insert",
                r#""z""#,
                r#"["a","b","z"]"#,
            ),
            ("{}", "$.a[2]", "insert", "0", r#"{"a":[null,null,0]}"#),
            ("{}", "$.a[0].b", "insert", "0", r#"{"a":[{"b":0}]}"#),
            (
                r#"{"a":[{"x":1},{"y":2}]}"#,
                "$.a[1].z",
                "insert",
                "0",
                r#"{"a":[{"x":1},{"y":2,"z":0}]}"#,
            ),
            (
                r#"{"a":1}"#,
                "$.b",
                "insert",
                r#"{"a":{"z":1,"b":2}}"#,
                r#"{"a":1,"b":{"a":{"b":2,"z":1}}}"#,
            ),
            (
                r#"{"k1":1,"k3":3}"#,
                "$.k2",
                "insert",
                "2",
                r#"{"k1":1,"k2":2,"k3":3}"#,
            ),
            (
                r#"{"a": 1}"#,
                "$.a",
                "insert",
                "2",
                "[VARIANT_DUPLICATE_KEY] Failed to build variant because of a duplicate object key `a`.",
            ),
            (
                r#"{"a": 1}"#,
                "$.a.b",
                "insert",
                "2",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$.a.b' is incompatible with the variant value at '$.a' in `f`.",
            ),
            (
                r#"{"a": 1}"#,
                "$[0]",
                "insert",
                "2",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$[0]' is incompatible with the variant value at '$' in `f`.",
            ),
            (
                r#"{"a":null}"#,
                "$.a.b",
                "insert",
                "0",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$.a.b' is incompatible with the variant value at '$.a' in `f`.",
            ),
            (
                r#"{"b.c": 1}"#,
                r#"$["b.c"].x"#,
                "insert",
                "2",
                r#"[VARIANT_PATH_TYPE_MISMATCH] The path '$["b.c"].x' is incompatible with the variant value at '$['b.c']' in `f`."#,
            ),
            (r#"{"a": 1}"#, "$.a", "set", "2", r#"{"a":2}"#),
            (
                r#"{"a": {"b": 1}}"#,
                "$.a.c.d",
                "set",
                "2",
                r#"{"a":{"b":1,"c":{"d":2}}}"#,
            ),
            (
                r#"["a","b","c"]"#,
                "$[1]",
                "set",
                r#""z""#,
                r#"["a","z","c"]"#,
            ),
            (
                r#"["a","b","c"]"#,
                "$[5]",
                "set",
                r#""z""#,
                r#"["a","b","c",null,null,"z"]"#,
            ),
            (r#"{"a": 1}"#, "$.b", "set!", "2", r#"{"a":1}"#),
            (r"[1,2]", "$[3]", "set!", "9", "[1,2]"),
            (
                r#"{"a": 1}"#,
                "$.a.b",
                "set!",
                "9",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$.a.b' is incompatible with the variant value at '$.a' in `f`.",
            ),
            ("[]", "$[1].a", "set", "1", r#"[null,{"a":1}]"#),
            ("{}", "$.a[1][0]", "set", "1", r#"{"a":[null,[1]]}"#),
            (
                r"[[1,2],[3]]",
                "$[1][3]",
                "set",
                "7",
                "[[1,2],[3,null,null,7]]",
            ),
            (r#"{"a": 1, "b": 2}"#, "$.a", "delete", "0", r#"{"b":2}"#),
            (
                r#"{"a": 1, "b": 2}"#,
                "$.a.b",
                "delete",
                "0",
                r#"{"a":1,"b":2}"#,
            ),
            (
                r#"{"a": 1, "b": 2}"#,
                "$[0]",
                "delete",
                "0",
                r#"{"a":1,"b":2}"#,
            ),
            ("[1,2,3]", "$[5]", "delete", "0", "[1,2,3]"),
            ("[1,2,3]", "$[1]", "delete", "0", "[1,3]"),
            ("[1, 2, 3]", "$", "append", "4", "[1,2,3,4]"),
            (r#"{"a": [1, 2]}"#, "$.a", "append", "3", r#"{"a":[1,2,3]}"#),
            ("[1]", "$", "append", "[2, 3]", "[1,[2,3]]"),
            (r#"{"a": 1}"#, "$.missing", "append", "2", r#"{"a":1}"#),
            (r#"{"a": [[1]]}"#, "$.a[5]", "append", "2", r#"{"a":[[1]]}"#),
            (
                r#"{"a": 1}"#,
                "$.a",
                "append",
                "2",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$.a' is incompatible with the variant value at '$.a' in `f`.",
            ),
            (
                r#"{"a": 1}"#,
                "$.a.b",
                "append",
                "2",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$.a.b' is incompatible with the variant value at '$.a' in `f`.",
            ),
            (
                "null",
                "$",
                "append",
                "2",
                "[VARIANT_PATH_TYPE_MISMATCH] The path '$' is incompatible with the variant value at '$' in `f`.",
            ),
        ];
        for (input, path, op, new, expected) in cases {
            assert_eq!(
                run(input, path, op, new),
                expected,
                "{op} {path} of {new} into {input}"
            );
        }
    }

    #[test]
    fn strips_nulls_like_spark() {
        for (input, include_arrays, expected) in [
            (r#"{"a": 1, "b": null, "c": 3}"#, true, r#"{"a":1,"c":3}"#),
            ("[1, null, 3]", true, "[1,3]"),
            (
                r#"{"a": {"b": null, "c": [1, null]}}"#,
                true,
                r#"{"a":{"c":[1]}}"#,
            ),
            (r#"{"a": [1, null], "b": null}"#, false, r#"{"a":[1,null]}"#),
            (r#"{"a": null}"#, true, "{}"),
            ("null", true, "null"),
            (r#"[[null],{"a":null}]"#, false, "[[null],{}]"),
        ] {
            let (m, v) = parse(input);
            let out = strip_nulls(&m, &v, include_arrays).unwrap().unwrap_or(v);
            assert_eq!(json(&m, &out), expected, "{input}");
        }
    }

    /// Keys added to a large dictionary get new ids; old ids stay, and a key the
    /// dictionary has is not added twice.
    #[test]
    fn new_keys_extend_the_dictionary() {
        let wide: Vec<String> = (0..40).map(|i| format!("\"k{i:02}\":{i}")).collect();
        let input = format!("{{{}}}", wide.join(","));
        assert!(
            run(&input, "$.k41", "insert", r#"{"k00":[true]}"#)
                .ends_with(r#""k41":{"k00":[true]}}"#)
        );
        let (m, v) = parse(&input);
        let (nm, nv) = parse(r#"{"k05": 1}"#);
        let out = mutate(
            &m,
            &v,
            &parse_path("$.k39").unwrap(),
            Mutation::Set {
                value: (&nm, &nv),
                create: true,
            },
        )
        .unwrap();
        assert_eq!(out.metadata, None, "k05 is in the dictionary already");
    }

    #[test]
    fn huge_indexes_are_refused_before_anything_is_built() {
        assert_eq!(
            run("[0]", "$[2147483647]", "insert", "2"),
            "[VARIANT_SIZE_LIMIT] Cannot build variant bigger than 128.0 MiB in `f`."
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        let (m, _) = parse("1");
        let e = mutate(
            &m,
            &[0x02, 0x05],
            &parse_path("$.a").unwrap(),
            Mutation::Delete,
        )
        .unwrap_err();
        assert!(matches!(e, MutateError::Malformed(_)), "{e:?}");
    }
}
