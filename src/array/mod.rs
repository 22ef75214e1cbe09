//! Arrow-level Variant columns: the `arrow.parquet.variant` struct layout, detection
//! of Variant columns (by extension or by shape), row access over every legal
//! physical form, and a builder for output columns.

mod builder;
pub mod from_arrow;
mod input;
mod unshred;

pub use input::VariantInput;
pub(crate) use unshred::encode_primitives;

pub use builder::{EMPTY_METADATA, VARIANT_NULL};

pub use builder::{SharedMetadata, VariantColumnBuilder};

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields};

/// The canonical Arrow extension name of Variant columns.
pub const VARIANT_EXTENSION_NAME: &str = "arrow.parquet.variant";

/// The storage type of the Variant columns this crate produces:
/// `Struct{metadata: BinaryView not null, value: BinaryView not null}`.
pub fn variant_data_type() -> DataType {
    DataType::Struct(variant_fields())
}

/// The two child fields of [`variant_data_type`].
pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Field::new("metadata", DataType::BinaryView, false),
        Field::new("value", DataType::BinaryView, false),
    ])
}

/// A field of [`variant_data_type`] carrying the `arrow.parquet.variant` extension.
pub fn variant_field(name: &str, nullable: bool) -> FieldRef {
    Arc::new(
        Field::new(name, variant_data_type(), nullable).with_metadata(variant_extension_metadata()),
    )
}

/// The field metadata that marks a field as a Variant.
pub fn variant_extension_metadata() -> HashMap<String, String> {
    HashMap::from([
        (
            "ARROW:extension:name".to_string(),
            VARIANT_EXTENSION_NAME.to_string(),
        ),
        ("ARROW:extension:metadata".to_string(), String::new()),
    ])
}

/// Whether `data_type` is a Variant storage struct: a `metadata` binary field plus
/// a `value` binary field and/or a `typed_value` field, and nothing else. Used to
/// recognise Variant columns whose extension metadata was stripped (DataFusion's
/// Parquet reader drops field metadata by default).
pub fn is_variant_type(data_type: &DataType) -> bool {
    let DataType::Struct(fields) = data_type else {
        return false;
    };
    let mut has_metadata = false;
    let mut has_value = false;
    for f in fields {
        match f.name().as_str() {
            "metadata" if is_binary_like(f.data_type()) => has_metadata = true,
            "value" if is_binary_like(f.data_type()) => has_value = true,
            "typed_value" => has_value = true,
            _ => return false,
        }
    }
    has_metadata && has_value
}

/// Whether a field is a Variant: by its extension name, or by its shape.
pub fn is_variant_field(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == VARIANT_EXTENSION_NAME)
        || is_variant_type(field.data_type())
}

fn is_binary_like(dt: &DataType) -> bool {
    match dt {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => true,
        DataType::Dictionary(_, v) => is_binary_like(v),
        DataType::RunEndEncoded(_, v) => is_binary_like(v.data_type()),
        _ => false,
    }
}
