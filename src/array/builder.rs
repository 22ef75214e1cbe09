//! A builder for unshredded Variant output columns (BinaryView children).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryViewBuilder, NullBufferBuilder, StructArray};

use super::variant_fields;
use crate::variant::encoding::{EMPTY_METADATA, VARIANT_NULL};

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

    /// Stores `metadata` once, for several rows to share with
    /// [`Self::append_shared`] (rows cut out of one Variant, as `variant_explode`
    /// makes, would otherwise copy its whole dictionary into every row).
    pub fn share_metadata(&mut self, metadata: &[u8]) -> SharedMetadata {
        // Views of up to 12 bytes are stored inline: nothing to share.
        if metadata.len() <= 12 || u32::try_from(metadata.len()).is_err() {
            return SharedMetadata { block: None };
        }
        let block = self
            .metadata
            .append_block(arrow::buffer::Buffer::from(metadata));
        SharedMetadata { block: Some(block) }
    }

    /// Appends one Variant whose `metadata` was stored by [`Self::share_metadata`].
    pub fn append_shared(&mut self, shared: SharedMetadata, metadata: &[u8], value: &[u8]) {
        let viewed = shared.block.is_some_and(|block| {
            u32::try_from(metadata.len())
                .is_ok_and(|len| self.metadata.try_append_view(block, 0, len).is_ok())
        });
        if !viewed {
            self.metadata.append_value(metadata);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, BinaryViewArray};

    #[test]
    fn shared_metadata_is_stored_once() {
        let metadata: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let mut b = VariantColumnBuilder::new(4);
        let shared = b.share_metadata(&metadata);
        for v in [&[0x0c, 1][..], &[0x0c, 2], &[0x00]] {
            b.append_shared(shared, &metadata, v);
        }
        b.append_null();
        let s = b.finish_struct();
        let m: &BinaryViewArray = s.column(0).as_binary_view();
        assert_eq!(
            m.data_buffers()
                .iter()
                .map(arrow::buffer::Buffer::len)
                .sum::<usize>(),
            1000
        );
        for i in 0..3 {
            assert_eq!(m.value(i), &metadata[..]);
        }
        assert_eq!(s.column(1).as_binary_view().value(1), &[0x0c, 2]);
        assert!(s.is_null(3));
        // Short metadata is inline.
        let mut b = VariantColumnBuilder::new(1);
        let shared = b.share_metadata(EMPTY_METADATA);
        b.append_shared(shared, EMPTY_METADATA, VARIANT_NULL);
        assert_eq!(
            b.finish_struct().column(0).as_binary_view().value(0),
            EMPTY_METADATA
        );
    }
}

/// A metadata stored once by [`VariantColumnBuilder::share_metadata`].
#[derive(Clone, Copy, Debug)]
pub struct SharedMetadata {
    block: Option<u32>,
}
