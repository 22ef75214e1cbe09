//! Arrow-level Variant columns: the `arrow.parquet.variant` struct layout, detection
//! of Variant columns (by extension or by shape), row access over every legal
//! physical form, and a builder for output columns.

mod builder;
pub mod cast;
pub mod from_arrow;
pub mod get;
mod input;

pub(crate) use crate::variant::unshred::encode_primitives;
pub use input::VariantInput;

pub use crate::variant::encoding::{EMPTY_METADATA, VARIANT_NULL};
pub use crate::variant::storage::{
    VARIANT_EXTENSION_NAME, is_variant_field, is_variant_type, variant_data_type,
    variant_extension_metadata, variant_field, variant_fields,
};

pub use builder::{SharedMetadata, VariantColumnBuilder};

/// A metadata column of `rows` empty dictionaries (what a primitive needs), as
/// one view repeated: no per-row append.
pub fn empty_metadata_column(rows: usize) -> arrow::array::BinaryViewArray {
    let view = arrow::array::builder::make_view(EMPTY_METADATA, 0, 0);
    arrow::array::BinaryViewArray::new(vec![view; rows].into(), Vec::new(), None)
}
