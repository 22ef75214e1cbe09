//! Path navigation over raw Variant value bytes, so that `variant_get` can return a
//! sub-value as a byte slice sharing the row's metadata (as Spark does) without
//! re-encoding it.
//!
//! Every read is bounds-checked; callers pass bytes that [`super::validate::check`]
//! accepted, and on anything unexpected these functions return `None` rather than
//! panic.

use parquet_variant::VariantMetadata;

use super::path::PathSegment;

#[inline]
fn read_uint(bytes: &[u8], pos: usize, width: usize) -> Option<usize> {
    let slice = bytes.get(pos..pos.checked_add(width)?)?;
    let mut v = 0usize;
    for (i, b) in slice.iter().enumerate() {
        v |= (*b as usize) << (8 * i);
    }
    Some(v)
}

/// The layout of an object or array header.
struct Container {
    n: usize,
    /// Start of the field-id list (objects only).
    ids_start: usize,
    id_w: usize,
    offs_start: usize,
    off_w: usize,
    data_start: usize,
}

fn container(value: &[u8], is_object: bool) -> Option<Container> {
    let hdr = (*value.first()? >> 2) as usize;
    let off_w = (hdr & 0x03) + 1;
    let (id_w, large) = if is_object {
        (((hdr >> 2) & 0x03) + 1, hdr & 0x10 != 0)
    } else {
        (0, hdr & 0x04 != 0)
    };
    let count_w = if large { 4 } else { 1 };
    let n = read_uint(value, 1, count_w)?;
    let ids_start = 1 + count_w;
    let offs_start = ids_start + n.checked_mul(id_w)?;
    let data_start = offs_start + (n + 1).checked_mul(off_w)?;
    Some(Container {
        n,
        ids_start,
        id_w,
        offs_start,
        off_w,
        data_start,
    })
}

/// The encoded length of the value at the start of `value`.
pub fn value_len(value: &[u8]) -> Option<usize> {
    let header = *value.first()?;
    let hdr = (header >> 2) as usize;
    let len = match header & 0x03 {
        0 => match hdr {
            0..=2 => 1,
            3 => 2,
            4 => 3,
            5 | 14 => 5,
            6 | 7 | 12 | 13 | 17 | 18 | 19 => 9,
            8 => 6,
            9 => 10,
            10 => 18,
            11 => 5,
            15 | 16 => 5 + read_uint(value, 1, 4)?,
            20 => 17,
            _ => return None,
        },
        1 => 1 + hdr,
        b => {
            let c = container(value, b == 2)?;
            c.data_start + read_uint(value, c.offs_start + c.n * c.off_w, c.off_w)?
        }
    };
    (len <= value.len()).then_some(len)
}

/// The value bytes of field `key` of the object at the start of `value`.
pub fn object_field<'v>(
    metadata: &VariantMetadata<'_>,
    value: &'v [u8],
    key: &str,
) -> Option<&'v [u8]> {
    if value.first()? & 0x03 != 2 {
        return None;
    }
    let c = container(value, true)?;
    let name_at = |i: usize| -> Option<&str> {
        let id = read_uint(value, c.ids_start + i * c.id_w, c.id_w)?;
        metadata.get(id).ok()
    };
    let field_at = |i: usize| -> Option<&'v [u8]> {
        let off = read_uint(value, c.offs_start + i * c.off_w, c.off_w)?;
        let start = c.data_start.checked_add(off)?;
        let rest = value.get(start..)?;
        let len = value_len(rest)?;
        rest.get(..len)
    };
    // Binary search by UTF-8 name order (the spec's order).
    let (mut lo, mut hi) = (0usize, c.n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match name_at(mid)?.cmp(key) {
            std::cmp::Ordering::Equal => return field_at(mid),
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
        }
    }
    if key.is_ascii() {
        return None;
    }
    // Spark sorts by UTF-16 code units, which differs for some non-ASCII keys.
    (0..c.n)
        .find(|&i| name_at(i) == Some(key))
        .and_then(field_at)
}

/// The value bytes of element `index` of the array at the start of `value`.
pub fn array_element(value: &[u8], index: usize) -> Option<&[u8]> {
    if value.first()? & 0x03 != 3 {
        return None;
    }
    let c = container(value, false)?;
    if index >= c.n {
        return None;
    }
    let off = read_uint(value, c.offs_start + index * c.off_w, c.off_w)?;
    let end = read_uint(value, c.offs_start + (index + 1) * c.off_w, c.off_w)?;
    value.get(c.data_start + off..c.data_start + end)
}

/// Follows `path` through the value bytes; `None` when a step is missing.
///
/// ```
/// use df_variant::variant::{json::{JsonParseOptions, JsonToVariant}, path::parse_path, raw::get_path};
/// use parquet_variant::{Variant, VariantMetadata};
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// p.parse(r#"{"a": [10, {"b": "x"}]}"#).unwrap();
/// let meta = VariantMetadata::try_new(p.metadata()).unwrap();
/// let sub = get_path(&meta, p.value(), &parse_path("$.a[1].b").unwrap()).unwrap();
/// assert_eq!(Variant::try_new(p.metadata(), sub).unwrap(), Variant::from("x"));
/// ```
pub fn get_path<'v>(
    metadata: &VariantMetadata<'_>,
    value: &'v [u8],
    path: &[PathSegment],
) -> Option<&'v [u8]> {
    let mut current = value;
    for seg in path {
        current = match seg {
            PathSegment::Key(k) => object_field(metadata, current, k)?,
            PathSegment::Index(i) => array_element(current, *i)?,
        };
    }
    if path.is_empty() {
        let len = value_len(current)?;
        return current.get(..len);
    }
    Some(current)
}
