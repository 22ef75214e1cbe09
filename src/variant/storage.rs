//! The Arrow storage type of Variant columns: the `arrow.parquet.variant`
//! extension over `Struct{metadata, value}` (plus `typed_value` when shredded),
//! and how a Variant column is recognised. A leaf module next to the encoding, so
//! that the Spark type layer can name the VARIANT type without depending on the
//! Arrow kernels.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, LargeBinaryArray};
use arrow::datatypes::{DataType, Field, FieldRef, Fields};
use arrow::error::ArrowError;

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

/// One binary child column, whatever its Arrow binary flavour.
#[derive(Debug, Clone)]
pub enum BinaryColumn {
    /// `Binary`.
    Binary(BinaryArray),
    /// `LargeBinary`.
    Large(LargeBinaryArray),
    /// `BinaryView` (dictionaries and run-end encodings are cast to it).
    View(BinaryViewArray),
}

impl BinaryColumn {
    /// The column `array` (the child `name` of a Variant column, for errors).
    pub fn try_new(array: &ArrayRef, name: &str) -> Result<Self, ArrowError> {
        Ok(match array.data_type() {
            DataType::Binary => Self::Binary(array.as_binary::<i32>().clone()),
            DataType::LargeBinary => Self::Large(array.as_binary::<i64>().clone()),
            DataType::BinaryView => Self::View(array.as_binary_view().clone()),
            DataType::Dictionary(_, _) | DataType::RunEndEncoded(_, _) => {
                let cast = arrow::compute::cast(array, &DataType::BinaryView)?;
                Self::View(cast.as_binary_view().clone())
            }
            other => {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "variant field `{name}` must be binary, found {other}"
                )));
            }
        })
    }

    /// The column as BinaryView (zero-copy when it already is one).
    pub fn to_view(&self) -> Result<BinaryViewArray, ArrowError> {
        Ok(match self {
            Self::View(a) => a.clone(),
            Self::Binary(a) => arrow::compute::cast(a, &DataType::BinaryView)?
                .as_binary_view()
                .clone(),
            Self::Large(a) => arrow::compute::cast(a, &DataType::BinaryView)?
                .as_binary_view()
                .clone(),
        })
    }

    /// The bytes of all rows together (null rows count as empty).
    pub fn total_len(&self) -> usize {
        match self {
            Self::Binary(a) => {
                a.value_offsets().last().map_or(0, |&e| e as usize)
                    - a.value_offsets().first().map_or(0, |&s| s as usize)
            }
            Self::Large(a) => {
                a.value_offsets().last().map_or(0, |&e| e as usize)
                    - a.value_offsets().first().map_or(0, |&s| s as usize)
            }
            Self::View(a) => a.views().iter().map(|&v| v as u32 as usize).sum(),
        }
    }

    /// Row `i`; `None` when it is null.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        match self {
            Self::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Self::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}
