//! A builder for unshredded Variant output columns (BinaryView children).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryViewBuilder, NullBufferBuilder, StructArray};

use super::variant_fields;

/// Builds an unshredded Variant column: `Struct{metadata, value}` with BinaryView
/// children. Null rows get empty children and a null struct slot.
#[derive(Debug)]
pub struct VariantColumnBuilder {
    metadata: BinaryViewBuilder,
    value: BinaryViewBuilder,
    nulls: NullBufferBuilder,
}

impl VariantColumnBuilder {
    /// A builder with room for `capacity` rows.
    pub fn new(capacity: usize) -> Self {
        Self {
            metadata: BinaryViewBuilder::with_capacity(capacity),
            value: BinaryViewBuilder::with_capacity(capacity),
            nulls: NullBufferBuilder::new(capacity),
        }
    }

    /// Appends one Variant given its metadata and value bytes.
    pub fn append(&mut self, metadata: &[u8], value: &[u8]) {
        self.metadata.append_value(metadata);
        self.value.append_value(value);
        self.nulls.append_non_null();
    }

    /// Appends a SQL NULL (not a Variant null).
    pub fn append_null(&mut self) {
        self.metadata.append_value(EMPTY_METADATA);
        self.value.append_value(VARIANT_NULL);
        self.nulls.append_null();
    }

    /// Number of rows appended so far.
    pub fn len(&self) -> usize {
        self.nulls.len()
    }

    /// Whether no rows were appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Finishes the column as a `StructArray`.
    pub fn finish_struct(&mut self) -> StructArray {
        let metadata: ArrayRef = Arc::new(self.metadata.finish());
        let value: ArrayRef = Arc::new(self.value.finish());
        let nulls = self.nulls.finish();
        StructArray::new(variant_fields(), vec![metadata, value], nulls)
    }

    /// Finishes the column as an `ArrayRef`.
    pub fn finish(&mut self) -> ArrayRef {
        let s = self.finish_struct();
        debug_assert!(s.len() == s.column(0).len());
        Arc::new(s)
    }
}

/// The 3-byte empty metadata dictionary `01 00 00`.
pub const EMPTY_METADATA: &[u8] = &[0x01, 0x00, 0x00];
/// A Variant null value.
pub const VARIANT_NULL: &[u8] = &[0x00];
