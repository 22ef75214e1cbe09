//! The one table of shredded primitive types: which Arrow type a `typed_value`
//! column may have, and which Variant type it stands for (the spec's shredding
//! table). The shredder ([`crate::shredding::shred()`]) and the
//! unshredder (`unshred.rs`) both read it, so a type is accepted on one side exactly
//! when the other side knows it.
//!
//! | Arrow `typed_value` | Variant type | we write it |
//! |---|---|---|
//! | Boolean | boolean | yes |
//! | Int8, Int16, Int32, Int64 | int8 … int64 | yes |
//! | Float32, Float64 | float, double | yes |
//! | Decimal32/64/128 (p, s), 0 ≤ s ≤ p | decimal4/8/16 by precision | yes |
//! | Date32 | date | yes |
//! | Time64(µs) | time | yes |
//! | Timestamp(µs/ns, tz or not) | timestamp(_ntz)(_nanos) | yes |
//! | Utf8, LargeUtf8, Utf8View | string | yes |
//! | Binary, LargeBinary, BinaryView | binary | yes |
//! | FixedSizeBinary(16) (`arrow.uuid` or no extension) | uuid | no: read only |
//!
//! UUIDs are read from other writers' files but never shredded by us: Arrow has
//! no UUID type outside the `arrow.uuid` extension, and Spark does not shred them.

use arrow::datatypes::{DataType, TimeUnit};

/// The width of a Variant decimal, chosen by the column's precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalWidth {
    /// decimal4: precision 1–9.
    D4,
    /// decimal8: precision 10–18.
    D8,
    /// decimal16: precision 19–38.
    D16,
}

/// The Variant primitive type a primitive `typed_value` column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShreddedPrimitive {
    /// boolean
    Boolean,
    /// int8
    Int8,
    /// int16
    Int16,
    /// int32
    Int32,
    /// int64
    Int64,
    /// float
    Float,
    /// double
    Double,
    /// decimal of the given width and scale
    Decimal(DecimalWidth, u8),
    /// date
    Date,
    /// time (microseconds)
    Time,
    /// timestamp in microseconds; `utc`: with a time zone (an instant)
    TimestampMicros {
        /// whether the column has a time zone
        utc: bool,
    },
    /// timestamp in nanoseconds; `utc`: with a time zone (an instant)
    TimestampNanos {
        /// whether the column has a time zone
        utc: bool,
    },
    /// string
    String,
    /// binary
    Binary,
    /// uuid
    Uuid,
}

impl ShreddedPrimitive {
    /// The shredded type of a primitive `typed_value` of Arrow type `data_type`,
    /// whose field has the Arrow extension `extension`; `None` when the type is
    /// not a shredded primitive (dictionary and run-end encodings are decoded by
    /// the caller first).
    pub fn of(data_type: &DataType, extension: Option<&str>) -> Option<Self> {
        let decimal = |p: u8, s: i8, max: u8| {
            let scale = u8::try_from(s).ok().filter(|s| *s <= p)?;
            let width = match p {
                1..=9 => DecimalWidth::D4,
                10..=18 => DecimalWidth::D8,
                19..=38 => DecimalWidth::D16,
                _ => return None,
            };
            (p <= max).then_some(Self::Decimal(width, scale))
        };
        Some(match data_type {
            DataType::Boolean => Self::Boolean,
            DataType::Int8 => Self::Int8,
            DataType::Int16 => Self::Int16,
            DataType::Int32 => Self::Int32,
            DataType::Int64 => Self::Int64,
            DataType::Float32 => Self::Float,
            DataType::Float64 => Self::Double,
            DataType::Decimal32(p, s) => decimal(*p, *s, 9)?,
            DataType::Decimal64(p, s) => decimal(*p, *s, 18)?,
            DataType::Decimal128(p, s) => decimal(*p, *s, 38)?,
            DataType::Date32 => Self::Date,
            DataType::Time64(TimeUnit::Microsecond) => Self::Time,
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Self::TimestampMicros { utc: tz.is_some() }
            }
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
                Self::TimestampNanos { utc: tz.is_some() }
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Self::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Self::Binary,
            DataType::FixedSizeBinary(16) if extension.is_none_or(|e| e == "arrow.uuid") => {
                Self::Uuid
            }
            _ => return None,
        })
    }

    /// Whether our shredder writes this type (see the module docs).
    pub fn is_written(self) -> bool {
        !matches!(self, Self::Uuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_read_but_not_written() {
        let uuid = ShreddedPrimitive::of(&DataType::FixedSizeBinary(16), Some("arrow.uuid"));
        assert_eq!(uuid, Some(ShreddedPrimitive::Uuid));
        assert!(!ShreddedPrimitive::Uuid.is_written());
        assert_eq!(
            ShreddedPrimitive::of(&DataType::FixedSizeBinary(16), Some("other")),
            None
        );
        assert_eq!(
            ShreddedPrimitive::of(&DataType::FixedSizeBinary(8), None),
            None
        );
    }

    #[test]
    fn decimals_take_their_width_from_the_precision() {
        let of = |t| ShreddedPrimitive::of(&t, None);
        assert_eq!(
            of(DataType::Decimal128(9, 2)),
            Some(ShreddedPrimitive::Decimal(DecimalWidth::D4, 2))
        );
        assert_eq!(
            of(DataType::Decimal64(18, 0)),
            Some(ShreddedPrimitive::Decimal(DecimalWidth::D8, 0))
        );
        assert_eq!(of(DataType::Decimal32(10, 0)), None);
        assert_eq!(of(DataType::Decimal128(5, 6)), None);
        assert_eq!(of(DataType::Decimal128(5, -1)), None);
        assert_eq!(of(DataType::Decimal128(0, 0)), None);
    }
}
