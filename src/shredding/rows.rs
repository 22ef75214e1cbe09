//! Row access for inference and shredding: each row is checked with
//! [`crate::variant::validate::check`] before it is read, and every read on top of
//! [`crate::variant::encoding`] is still bounds-checked, so that nothing can panic.

use arrow::error::ArrowError;
use parquet_variant::Variant;

use super::Result;
use crate::array::{EMPTY_METADATA, VariantInput};
use crate::variant::encoding::{self, OBJECT, value_len};
use crate::variant::validate::{check, check_metadata};

pub(super) fn corrupt(what: &str) -> ArrowError {
    shred_err!("shred: malformed variant value ({what})")
}

/// Basic type of a value: 0 primitive, 1 short string, 2 object, 3 array.
pub(super) fn basic_type(bytes: &[u8]) -> Result<u8> {
    bytes
        .first()
        .map(|h| encoding::basic_type(*h))
        .ok_or_else(|| corrupt("empty value"))
}

/// An object or array with its layout.
pub(super) struct Container<'a> {
    bytes: &'a [u8],
    layout: encoding::Container,
    /// Number of fields or elements.
    pub(super) n: usize,
}

impl<'a> Container<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Result<Self> {
        let is_object = basic_type(bytes)? == OBJECT;
        let layout =
            encoding::container(bytes, is_object).ok_or_else(|| corrupt("container size"))?;
        Ok(Self {
            bytes,
            layout,
            n: layout.n,
        })
    }

    /// Field id `i` (objects only).
    pub(super) fn id(&self, i: usize) -> Result<usize> {
        self.layout
            .id(self.bytes, i)
            .ok_or_else(|| corrupt("an offset is past the end"))
    }

    /// The bytes of child `i`.
    pub(super) fn child(&self, i: usize) -> Result<&'a [u8]> {
        self.layout
            .offset(self.bytes, i)
            .ok_or_else(|| corrupt("an offset is past the end"))?;
        self.layout
            .child(self.bytes, i)
            .ok_or_else(|| corrupt("a child is past the end"))
    }
}

/// Decodes a primitive or short-string value (basic types 0 and 1).
pub(super) fn primitive(bytes: &[u8]) -> Result<Variant<'static, '_>> {
    Variant::try_new(EMPTY_METADATA, bytes).map_err(|e| corrupt(&e.to_string()))
}

/// Encodes an object from `(name, field id, value bytes)` triples that reuse the
/// row's metadata; fields are listed by UTF-8 name order.
pub(super) fn write_object(fields: &mut [(&str, usize, &[u8])], out: &mut Vec<u8>) -> Result<()> {
    fields.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let pairs: Vec<(usize, &[u8])> = fields.iter().map(|f| (f.1, f.2)).collect();
    encoding::write_object(out, &pairs).map_err(|_| shred_err!("shred: residual object too large"))
}

/// Reads rows of a Variant column: checks every row with the guard and keeps the
/// metadata dictionary of the last metadata seen.
pub(super) struct RowReader<'a> {
    input: &'a VariantInput,
    metadata: &'a [u8],
    pub(super) dict: Vec<&'a str>,
}

impl<'a> RowReader<'a> {
    pub(super) fn new(input: &'a VariantInput) -> Self {
        Self {
            input,
            metadata: &[],
            dict: Vec::new(),
        }
    }

    /// Row `i` as `(metadata, value)` with the value trimmed to its encoded length;
    /// `None` for SQL NULL. Refreshes [`Self::dict`].
    pub(super) fn row(&mut self, i: usize) -> Result<Option<(&'a [u8], &'a [u8])>> {
        let Some((m, v)) = self.input.get(i) else {
            return Ok(None);
        };
        check(m, v).map_err(|e| shred_err!("shred: {e}"))?;
        if self.dict.is_empty() || m != self.metadata {
            self.dict = check_metadata(m).map_err(|e| shred_err!("shred: {e}"))?;
            self.metadata = m;
        }
        let len = value_len(v).ok_or_else(|| corrupt("truncated value"))?;
        Ok(Some((m, &v[..len])))
    }
}

/// The name of field id `id`.
pub(super) fn field_name<'d>(dict: &[&'d str], id: usize) -> Result<&'d str> {
    dict.get(id)
        .copied()
        .ok_or_else(|| corrupt("a field id is not in the metadata"))
}
