//! Reading Variant columns in every legal physical form.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryViewArray, StructArray};
use arrow::error::ArrowError;

use super::is_variant_type;
use crate::variant::storage::BinaryColumn;

/// Row access to a Variant column given in any legal physical form: Binary,
/// LargeBinary or BinaryView children (dictionary-encoded metadata too), fields in
/// any order, unshredded or shredded (shredded columns are reassembled into the
/// binary form first, following `docs/variant-spec.md` §10.8; see `variant/unshred.rs` for what is
/// rejected and what is read leniently).
#[derive(Debug, Clone)]
pub struct VariantInput {
    metadata: BinaryColumn,
    value: Option<BinaryColumn>,
    nulls: Option<arrow::buffer::NullBuffer>,
    len: usize,
}

/// A Variant null, as returned for rows whose `value` is absent.
const NULL_VALUE: &[u8] = &[0x00];

impl VariantInput {
    /// Wraps a Variant column.
    ///
    /// # Errors
    /// When the array is not a Variant struct, or a shredded column cannot be
    /// reassembled (invalid shredding).
    pub fn try_new(array: &ArrayRef) -> Result<Self, ArrowError> {
        if !is_variant_type(array.data_type()) {
            return Err(ArrowError::InvalidArgumentError(format!(
                "expected a variant column, found {}",
                array.data_type()
            )));
        }
        let st = array.as_struct();
        if st.column_by_name("typed_value").is_some() {
            return Self::from_shredded(st);
        }
        Self::from_unshredded(st)
    }

    /// Rebuilds the binary `value` of every row of a shredded column.
    fn from_shredded(st: &StructArray) -> Result<Self, ArrowError> {
        let metadata = st
            .column_by_name("metadata")
            .ok_or_else(|| ArrowError::InvalidArgumentError("variant has no metadata".into()))?;
        let metadata = BinaryColumn::try_new(metadata, "metadata")?;
        let nulls = st.logical_nulls();
        let value = crate::variant::unshred::unshred(st, &metadata, nulls.as_ref())?;
        Ok(Self {
            metadata,
            value: Some(BinaryColumn::View(value)),
            nulls,
            len: st.len(),
        })
    }

    fn from_unshredded(st: &StructArray) -> Result<Self, ArrowError> {
        let metadata = st
            .column_by_name("metadata")
            .ok_or_else(|| ArrowError::InvalidArgumentError("variant has no metadata".into()))?;
        let value = st
            .column_by_name("value")
            .map(|v| BinaryColumn::try_new(v, "value"))
            .transpose()?;
        Ok(Self {
            metadata: BinaryColumn::try_new(metadata, "metadata")?,
            value,
            nulls: st.logical_nulls(),
            len: st.len(),
        })
    }

    /// The metadata column as BinaryView, so an output that keeps each row's
    /// metadata (a sub-value extracted by `variant_get`) can share it.
    ///
    /// # Errors
    /// When the column cannot be cast to BinaryView.
    pub fn metadata_view(&self) -> Result<BinaryViewArray, ArrowError> {
        self.metadata.to_view()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The column in the unshredded form of [`super::variant_data_type`]. Where
    /// the children are already BinaryView with no null inside a valid row (a
    /// reassembled column, or a file's unshredded column), they are shared, not
    /// copied.
    ///
    /// # Errors
    /// When a child cannot be cast to BinaryView.
    pub fn to_column(&self) -> Result<ArrayRef, ArrowError> {
        let shareable = |c: &BinaryViewArray| {
            c.logical_nulls().is_none_or(|child| {
                // Every null child row must be a null row of the column.
                self.nulls.as_ref().is_some_and(|n| {
                    child
                        .inner()
                        .iter()
                        .zip(n.inner().iter())
                        .all(|(child_valid, valid)| child_valid || !valid)
                })
            })
        };
        let metadata = self.metadata.to_view()?;
        let value = self.value.as_ref().map(BinaryColumn::to_view).transpose()?;
        if let Some(value) = value.filter(|v| shareable(&metadata) && shareable(v)) {
            let (metadata, value) = (metadata.into_parts(), value.into_parts());
            // The children's own nulls lie under the column's: drop them, since the
            // Variant fields are declared non-null.
            let metadata = BinaryViewArray::try_new(metadata.0, metadata.1, None)?;
            let value = BinaryViewArray::try_new(value.0, value.1, None)?;
            return StructArray::try_new(
                crate::variant::storage::variant_fields(),
                vec![Arc::new(metadata), Arc::new(value)],
                self.nulls.clone(),
            )
            .map(|s| Arc::new(s) as ArrayRef);
        }
        let mut out = super::VariantColumnBuilder::new(self.len);
        for row in 0..self.len {
            match self.get(row) {
                Some((m, v)) => out.append(m, v),
                None => out.append_null(),
            }
        }
        Ok(out.finish())
    }

    /// The bytes of all rows' values together.
    pub fn value_bytes(&self) -> usize {
        self.value.as_ref().map_or(0, BinaryColumn::total_len)
    }

    /// The `(metadata, value)` bytes of row `i`, or `None` for SQL NULL. A row whose
    /// `value` is null reads as a Variant null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        let metadata = self.metadata.get(i).unwrap_or(super::EMPTY_METADATA);
        let value = self
            .value
            .as_ref()
            .and_then(|v| v.get(i))
            .unwrap_or(NULL_VALUE);
        Some((metadata, value))
    }
}
