//! Arrow-level Variant columns: the `arrow.parquet.variant` struct layout, detection
//! of Variant columns (by extension or by shape), row access over every legal
//! physical form, and a builder for output columns.

mod builder;
pub mod cast;
pub mod from_arrow;
pub mod get;
mod input;

pub(crate) use crate::shredding::unshred::encode_primitives;
pub use input::VariantInput;

pub use crate::variant::encoding::{EMPTY_METADATA, VARIANT_NULL};
pub use crate::variant::storage::{
    VARIANT_EXTENSION_NAME, is_variant_field, is_variant_type, variant_data_type,
    variant_extension_metadata, variant_field, variant_fields,
};

pub use builder::{SharedMetadata, VariantColumnBuilder};
