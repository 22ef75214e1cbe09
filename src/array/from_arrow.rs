//! Converting Arrow arrays into Variant columns with Spark 4.3 semantics: the
//! kernels behind `CAST(x AS VARIANT)` and `to_variant_object(x)`.
//!
//! * [`ToVariantMode::Cast`] accepts scalars, arrays (Arrow lists of every kind) of
//!   castable elements, and Variant values; structs and maps (also inside arrays) are
//!   refused with `DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION`.
//! * [`ToVariantMode::ToVariantObject`] accepts a struct, a map with string keys or
//!   an array at the top level, and anything castable or nested below it; a plain
//!   scalar at the top level and maps with non-string keys are refused.
//!
//! Values are normalised as Spark does: integers are stored in the smallest width
//! that holds them, decimals lose trailing zeros and use the narrowest decimal width,
//! timestamps are microseconds (finer units truncate toward negative infinity).
//! Unsigned integers widen (`UInt64` above `i64::MAX` becomes `DECIMAL(20,0)`),
//! `Float16` widens to FLOAT, `Date64` becomes DATE (floor of the day), binary kinds
//! become BINARY. Dictionary and run-end encoded arrays are unpacked to their values.
//! Types Spark's variant has no counterpart for (TIME, intervals, durations, unions)
//! are refused.
//!
//! Within an object, a SQL NULL field becomes a key with a Variant null
//! (`{"a":null}`); a SQL NULL array element becomes a Variant null. Duplicate keys
//! (a struct with repeated field names, a map with repeated keys) keep the last value.

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, FixedSizeBinaryArray,
    FixedSizeListArray, LargeBinaryArray, LargeStringArray, StringArray, StringViewArray,
    make_array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Date64Type, Decimal32Type, Decimal64Type,
    Decimal128Type, Decimal256Type, Field, Fields, Float16Type, Float32Type, Float64Type, Int8Type,
    Int16Type, Int32Type, Int64Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
    i256,
};
use arrow::error::ArrowError;
use chrono::{DateTime, NaiveDate};
use parquet_variant::{
    ObjectFieldBuilder, Variant, VariantBuilder, VariantBuilderExt, VariantDecimal4,
    VariantDecimal8, VariantDecimal16,
};

use super::{VariantColumnBuilder, VariantInput};
use crate::variant::encoding::{self, Temporal};

/// Which Spark function's rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToVariantMode {
    /// `CAST(x AS VARIANT)`: scalars, arrays of castable values, variants.
    Cast,
    /// `to_variant_object(x)`: structs, maps with string keys and arrays at the top
    /// level, anything convertible below.
    ToVariantObject,
    /// What `to_json` of a struct, map or array prints: as `ToVariantObject`,
    /// except that struct fields that are SQL NULL are left out (Spark's
    /// `ignoreNullFields`); map values and array elements stay.
    ToJson,
}

impl ToVariantMode {
    /// Whether structs and maps become objects.
    fn objects(self) -> bool {
        matches!(self, Self::ToVariantObject | Self::ToJson)
    }
}

/// Whether a struct with these fields is a Variant storage struct: a `metadata`
/// field of type Binary, LargeBinary or BinaryView, a `value` field of one of those
/// types, optionally a `typed_value` field (shredding), and nothing else.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Fields};
/// use df_variant::array::from_arrow::is_variant_struct;
///
/// let fields = Fields::from(vec![
///     Field::new("metadata", DataType::BinaryView, false),
///     Field::new("value", DataType::Binary, true),
/// ]);
/// assert!(is_variant_struct(&fields));
/// let other = Fields::from(vec![Field::new("metadata", DataType::Utf8, false)]);
/// assert!(!is_variant_struct(&other));
/// ```
pub fn is_variant_struct(fields: &Fields) -> bool {
    let binary = |dt: &DataType| {
        matches!(
            dt,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    let mut metadata = false;
    let mut value = false;
    for f in fields {
        match f.name().as_str() {
            "metadata" if binary(f.data_type()) && !metadata => metadata = true,
            "value" if binary(f.data_type()) && !value => value = true,
            "typed_value" => {}
            _ => return false,
        }
    }
    metadata && value
}

/// A type that cannot be converted to VARIANT (Spark's
/// `DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotConvertible {
    /// The SQL name of the type.
    pub type_name: String,
    /// Why, naming the offending nested type where there is one.
    pub reason: String,
}

impl std::fmt::Display for NotConvertible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast \"{}\" to \"VARIANT\"; {}",
            self.type_name, self.reason
        )
    }
}

impl std::error::Error for NotConvertible {}

/// Plan-time check: whether values of `data_type` can be converted under `mode`.
///
/// # Errors
/// A message naming the type and Spark's error class, e.g.
/// `[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast "STRUCT<a: INT>" to
/// "VARIANT"; use to_variant_object`.
///
/// ```
/// use arrow::datatypes::{DataType, Field, Fields};
/// use df_variant::array::from_arrow::{ToVariantMode, check_convertible};
///
/// let st = DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int32, true)]));
/// assert!(check_convertible(&DataType::Int32, ToVariantMode::Cast).is_ok());
/// assert!(check_convertible(&st, ToVariantMode::Cast).unwrap_err().to_string().contains("to_variant_object"));
/// assert!(check_convertible(&st, ToVariantMode::ToVariantObject).is_ok());
/// assert!(check_convertible(&DataType::Int32, ToVariantMode::ToVariantObject).is_err());
/// ```
pub fn check_convertible(data_type: &DataType, mode: ToVariantMode) -> Result<(), NotConvertible> {
    let fail = |reason: String| NotConvertible {
        type_name: sql_type_name(data_type),
        reason,
    };
    if mode.objects() {
        let top = unpack_encoding(data_type);
        let nested = match top {
            DataType::Struct(fields) => !is_variant_struct(fields),
            DataType::Map(_, _)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(_, _)
            | DataType::ListView(_)
            | DataType::LargeListView(_) => true,
            _ => false,
        };
        if !nested {
            return Err(fail(
                "to_variant_object requires a struct, map or array".to_string(),
            ));
        }
    }
    check_nested(data_type, mode).map_err(|p| {
        fail(match p {
            Problem::NeedsObject => "use to_variant_object".to_string(),
            Problem::NonStringKey(k) => format!(
                "to_variant_object requires map keys of type STRING, found {}",
                sql_type_name(&k)
            ),
            Problem::Unsupported(t) => {
                format!("the type {} has no variant counterpart", sql_type_name(&t))
            }
        })
    })
}

/// Converts every row of `array` into a Variant under `mode`'s rules. SQL NULL rows
/// become SQL NULL rows (null struct slots). The result is the unshredded Variant
/// storage struct `Struct{metadata: BinaryView, value: BinaryView}`.
///
/// # Errors
/// When the type is not convertible (see [`check_convertible`]) or a value cannot be
/// represented (a decimal wider than 38 digits, a timestamp outside chrono's range,
/// an invalid or shredded nested variant); the message names the row and the type.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
/// use df_variant::array::from_arrow::{ToVariantMode, array_to_variant};
/// use parquet_variant::Variant;
///
/// let input: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None]));
/// let out = array_to_variant(input.as_ref(), ToVariantMode::Cast).unwrap();
/// let out = out.as_struct();
/// assert!(out.is_null(1));
/// let metadata = out.column(0).as_binary_view().value(0);
/// let value = out.column(1).as_binary_view().value(0);
/// assert_eq!(Variant::try_new(metadata, value).unwrap(), Variant::Int8(5));
/// ```
pub fn array_to_variant(array: &dyn Array, mode: ToVariantMode) -> Result<ArrayRef, ArrowError> {
    check_convertible(array.data_type(), mode)
        .map_err(|e| ArrowError::InvalidArgumentError(e.to_string()))?;
    let array: ArrayRef = make_array(array.to_data());
    let type_name = sql_type_name(array.data_type());
    let row_error = |_: usize, e: ArrowError| {
        ArrowError::InvalidArgumentError(format!(
            "cannot convert a value of type {type_name} to VARIANT: {}",
            strip_error_prefix(&e)
        ))
    };
    let len = array.len();
    let mut out = VariantColumnBuilder::new(len);

    // A Variant column at the top level (cast(variant AS variant)) is copied as is;
    // `VariantInput` also reassembles a shredded column.
    if let DataType::Struct(fields) = array.data_type()
        && is_variant_struct(fields)
    {
        let input = VariantInput::try_new(&array).map_err(|e| {
            ArrowError::InvalidArgumentError(format!(
                "cannot convert a column of type {type_name} to VARIANT: {}",
                strip_error_prefix(&e)
            ))
        })?;
        for i in 0..len {
            match input.get(i) {
                Some((metadata, value)) => out.append(metadata, value),
                None => out.append_null(),
            }
        }
        return Ok(out.finish());
    }

    let conv = Conv::try_new(&array, mode).map_err(|e| {
        ArrowError::InvalidArgumentError(format!(
            "cannot convert a column of type {type_name} to VARIANT: {}",
            strip_error_prefix(&e)
        ))
    })?;
    let mut scratch = Vec::new();
    for i in 0..len {
        if conv.is_null(i) {
            out.append_null();
            continue;
        }
        // A date or timestamp past chrono's years cannot go through parquet-variant's
        // builder; at the top level it is written as its bytes.
        if let Some(t) = conv.wide_temporal(i) {
            scratch.clear();
            encoding::push_temporal(&mut scratch, t);
            out.append(encoding::EMPTY_METADATA, &scratch);
            continue;
        }
        let mut builder = VariantBuilder::new();
        conv.append(&mut builder, i).map_err(|e| row_error(i, e))?;
        let (metadata, value) = builder.try_finish().map_err(|e| row_error(i, e))?;
        out.append(&metadata, &value);
    }
    Ok(out.finish())
}

/// The message of an error without `ArrowError`'s "Invalid argument error: " prefix.
fn strip_error_prefix(e: &ArrowError) -> String {
    match e {
        ArrowError::InvalidArgumentError(m) => m.clone(),
        other => other.to_string(),
    }
}

fn invalid(msg: impl Into<String>) -> ArrowError {
    ArrowError::InvalidArgumentError(msg.into())
}

// ---------------------------------------------------------------------------
// Type checks
// ---------------------------------------------------------------------------

/// Why a (nested) type cannot be converted.
enum Problem {
    /// A struct or map under `Cast`.
    NeedsObject,
    /// A map whose keys are not strings.
    NonStringKey(DataType),
    /// A type with no variant counterpart.
    Unsupported(DataType),
}

/// The value type of a dictionary or run-end encoded type, else the type itself.
fn unpack_encoding(dt: &DataType) -> &DataType {
    match dt {
        DataType::Dictionary(_, v) => unpack_encoding(v),
        DataType::RunEndEncoded(_, v) => unpack_encoding(v.data_type()),
        other => other,
    }
}

fn is_string_type(dt: &DataType) -> bool {
    matches!(
        unpack_encoding(dt),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

fn check_nested(dt: &DataType, mode: ToVariantMode) -> Result<(), Problem> {
    match dt {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(_, _) => Ok(()),
        DataType::Dictionary(_, v) => check_nested(v, mode),
        DataType::RunEndEncoded(_, v) => check_nested(v.data_type(), mode),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => check_nested(f.data_type(), mode),
        DataType::Struct(fields) if is_variant_struct(fields) => Ok(()),
        DataType::Struct(fields) => match mode {
            ToVariantMode::Cast => Err(Problem::NeedsObject),
            ToVariantMode::ToVariantObject | ToVariantMode::ToJson => fields
                .iter()
                .try_for_each(|f| check_nested(f.data_type(), mode)),
        },
        DataType::Map(entries, _) => {
            if mode == ToVariantMode::Cast {
                return Err(Problem::NeedsObject);
            }
            let (key, value) = map_entry_fields(entries).ok_or(Problem::Unsupported(dt.clone()))?;
            // `to_json` prints integer, floating-point, boolean, DATE (its day
            // number), DECIMAL (with its scale) and TIMESTAMP (its
            // microseconds) keys as their text, as Spark does (`{"1":2}`); an
            // object needs string keys.
            let printable = mode == ToVariantMode::ToJson
                && (key.data_type().is_integer()
                    || key.data_type().is_floating()
                    || key.data_type().is_decimal()
                    || matches!(
                        key.data_type(),
                        DataType::Boolean
                            | DataType::Date32
                            | DataType::Date64
                            | DataType::Timestamp(_, _)
                    ));
            if !is_string_type(key.data_type()) && !printable {
                return Err(Problem::NonStringKey(key.data_type().clone()));
            }
            check_nested(value.data_type(), mode)
        }
        other => Err(Problem::Unsupported(other.clone())),
    }
}

/// The key and value fields of a map's entries field.
fn map_entry_fields(entries: &Field) -> Option<(&Field, &Field)> {
    match entries.data_type() {
        DataType::Struct(fields) if fields.len() == 2 => Some((&fields[0], &fields[1])),
        _ => None,
    }
}

/// A Spark-style SQL name of an Arrow type, for error messages.
pub(crate) fn sql_type_name(dt: &DataType) -> String {
    match dt {
        DataType::Null => "VOID".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INT".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "STRING".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "BINARY".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP".into(),
        DataType::Timestamp(_, None) => "TIMESTAMP_NTZ".into(),
        DataType::Dictionary(_, v) => sql_type_name(v),
        DataType::RunEndEncoded(_, v) => sql_type_name(v.data_type()),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => format!("ARRAY<{}>", sql_type_name(f.data_type())),
        DataType::Struct(fields) if is_variant_struct(fields) => "VARIANT".into(),
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), sql_type_name(f.data_type())))
                .collect();
            format!("STRUCT<{}>", inner.join(", "))
        }
        DataType::Map(entries, _) => match map_entry_fields(entries) {
            Some((k, v)) => format!(
                "MAP<{}, {}>",
                sql_type_name(k.data_type()),
                sql_type_name(v.data_type())
            ),
            None => dt.to_string(),
        },
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Conversion tree
// ---------------------------------------------------------------------------

/// A converter for one (possibly nested) input column, prepared once per batch.
struct Conv {
    len: usize,
    nulls: Option<NullBuffer>,
    kind: Kind,
}

enum Kind {
    /// Arrow `Null`: every value is a Variant null.
    Null,
    Bool(BooleanBuffer),
    Int8(ScalarBuffer<i8>),
    Int16(ScalarBuffer<i16>),
    Int32(ScalarBuffer<i32>),
    Int64(ScalarBuffer<i64>),
    UInt8(ScalarBuffer<u8>),
    UInt16(ScalarBuffer<u16>),
    UInt32(ScalarBuffer<u32>),
    UInt64(ScalarBuffer<u64>),
    Float16(ScalarBuffer<<Float16Type as ArrowPrimitiveType>::Native>),
    Float32(ScalarBuffer<f32>),
    Float64(ScalarBuffer<f64>),
    Decimal32(ScalarBuffer<i32>, i8),
    Decimal64(ScalarBuffer<i64>, i8),
    Decimal128(ScalarBuffer<i128>, i8),
    Decimal256(ScalarBuffer<i256>, i8),
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    Utf8View(StringViewArray),
    Binary(BinaryArray),
    LargeBinary(LargeBinaryArray),
    BinaryView(BinaryViewArray),
    FixedSizeBinary(FixedSizeBinaryArray),
    Date32(ScalarBuffer<i32>),
    Date64(ScalarBuffer<i64>),
    /// Raw values in `unit`, and whether they are UTC instants (else local/NTZ).
    Timestamp {
        values: ScalarBuffer<i64>,
        unit: TimeUnit,
        utc: bool,
    },
    List {
        ranges: Ranges,
        child: Box<Conv>,
    },
    /// The fields, and whether SQL NULL fields are left out.
    Object(Vec<(String, Conv)>, bool),
    Map {
        offsets: OffsetBuffer<i32>,
        keys: Keys,
        values: Box<Conv>,
    },
    Variant(VariantInput),
}

/// Element ranges of the list kinds.
enum Ranges {
    Offsets32(OffsetBuffer<i32>),
    Offsets64(OffsetBuffer<i64>),
    Fixed(FixedSizeListArray),
    View32(ScalarBuffer<i32>, ScalarBuffer<i32>),
    View64(ScalarBuffer<i64>, ScalarBuffer<i64>),
}

impl Ranges {
    /// The element range `start..end` of list `i`.
    fn range(&self, i: usize) -> Option<(usize, usize)> {
        fn conv<T: TryInto<usize>>(
            start: T,
            end_or_len: T,
            is_len: bool,
        ) -> Option<(usize, usize)> {
            let start: usize = start.try_into().ok()?;
            let n: usize = end_or_len.try_into().ok()?;
            if is_len {
                Some((start, start.checked_add(n)?))
            } else {
                (n >= start).then_some((start, n))
            }
        }
        match self {
            Ranges::Offsets32(o) => conv(*o.get(i)?, *o.get(i + 1)?, false),
            Ranges::Offsets64(o) => conv(*o.get(i)?, *o.get(i + 1)?, false),
            Ranges::Fixed(a) => conv(a.value_offset(i), a.value_length(), true),
            Ranges::View32(o, s) => conv(*o.get(i)?, *s.get(i)?, true),
            Ranges::View64(o, s) => conv(*o.get(i)?, *s.get(i)?, true),
        }
    }
}

/// Map keys: strings of any flavour.
enum Keys {
    Utf8(StringArray),
    LargeUtf8(LargeStringArray),
    Utf8View(StringViewArray),
}

impl Keys {
    fn try_new(array: &ArrayRef) -> Result<Self, ArrowError> {
        Ok(match array.data_type() {
            DataType::Utf8 => Keys::Utf8(array.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Keys::LargeUtf8(array.as_string::<i64>().clone()),
            DataType::Utf8View => Keys::Utf8View(array.as_string_view().clone()),
            DataType::Dictionary(_, _) | DataType::RunEndEncoded(_, _) => {
                let unpacked = arrow::compute::cast(array, &DataType::Utf8View)?;
                Keys::Utf8View(unpacked.as_string_view().clone())
            }
            other => return Err(invalid(format!("map keys must be strings, found {other}"))),
        })
    }

    fn len(&self) -> usize {
        match self {
            Keys::Utf8(a) => a.len(),
            Keys::LargeUtf8(a) => a.len(),
            Keys::Utf8View(a) => a.len(),
        }
    }

    fn get(&self, i: usize) -> Option<&str> {
        match self {
            Keys::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Keys::LargeUtf8(a) => a.is_valid(i).then(|| a.value(i)),
            Keys::Utf8View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

fn list_child(values: &ArrayRef, mode: ToVariantMode) -> Result<Box<Conv>, ArrowError> {
    Ok(Box::new(Conv::try_new(values, mode)?))
}

impl Conv {
    fn try_new(array: &ArrayRef, mode: ToVariantMode) -> Result<Self, ArrowError> {
        let kind = match array.data_type() {
            DataType::Dictionary(_, v) => {
                let unpacked = arrow::compute::cast(array, v)?;
                return Self::try_new(&unpacked, mode);
            }
            DataType::RunEndEncoded(_, v) => {
                let unpacked = arrow::compute::cast(array, v.data_type())?;
                return Self::try_new(&unpacked, mode);
            }
            DataType::Null => Kind::Null,
            DataType::Boolean => Kind::Bool(array.as_boolean().values().clone()),
            DataType::Int8 => Kind::Int8(array.as_primitive::<Int8Type>().values().clone()),
            DataType::Int16 => Kind::Int16(array.as_primitive::<Int16Type>().values().clone()),
            DataType::Int32 => Kind::Int32(array.as_primitive::<Int32Type>().values().clone()),
            DataType::Int64 => Kind::Int64(array.as_primitive::<Int64Type>().values().clone()),
            DataType::UInt8 => Kind::UInt8(array.as_primitive::<UInt8Type>().values().clone()),
            DataType::UInt16 => Kind::UInt16(array.as_primitive::<UInt16Type>().values().clone()),
            DataType::UInt32 => Kind::UInt32(array.as_primitive::<UInt32Type>().values().clone()),
            DataType::UInt64 => Kind::UInt64(array.as_primitive::<UInt64Type>().values().clone()),
            DataType::Float16 => {
                Kind::Float16(array.as_primitive::<Float16Type>().values().clone())
            }
            DataType::Float32 => {
                Kind::Float32(array.as_primitive::<Float32Type>().values().clone())
            }
            DataType::Float64 => {
                Kind::Float64(array.as_primitive::<Float64Type>().values().clone())
            }
            DataType::Decimal32(_, s) => {
                Kind::Decimal32(array.as_primitive::<Decimal32Type>().values().clone(), *s)
            }
            DataType::Decimal64(_, s) => {
                Kind::Decimal64(array.as_primitive::<Decimal64Type>().values().clone(), *s)
            }
            DataType::Decimal128(_, s) => {
                Kind::Decimal128(array.as_primitive::<Decimal128Type>().values().clone(), *s)
            }
            DataType::Decimal256(_, s) => {
                Kind::Decimal256(array.as_primitive::<Decimal256Type>().values().clone(), *s)
            }
            DataType::Utf8 => Kind::Utf8(array.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Kind::LargeUtf8(array.as_string::<i64>().clone()),
            DataType::Utf8View => Kind::Utf8View(array.as_string_view().clone()),
            DataType::Binary => Kind::Binary(array.as_binary::<i32>().clone()),
            DataType::LargeBinary => Kind::LargeBinary(array.as_binary::<i64>().clone()),
            DataType::BinaryView => Kind::BinaryView(array.as_binary_view().clone()),
            DataType::FixedSizeBinary(_) => {
                Kind::FixedSizeBinary(array.as_fixed_size_binary().clone())
            }
            DataType::Date32 => Kind::Date32(array.as_primitive::<Date32Type>().values().clone()),
            DataType::Date64 => Kind::Date64(array.as_primitive::<Date64Type>().values().clone()),
            DataType::Timestamp(unit, tz) => {
                let values = match unit {
                    TimeUnit::Second => array.as_primitive::<TimestampSecondType>().values(),
                    TimeUnit::Millisecond => {
                        array.as_primitive::<TimestampMillisecondType>().values()
                    }
                    TimeUnit::Microsecond => {
                        array.as_primitive::<TimestampMicrosecondType>().values()
                    }
                    TimeUnit::Nanosecond => {
                        array.as_primitive::<TimestampNanosecondType>().values()
                    }
                };
                Kind::Timestamp {
                    values: values.clone(),
                    unit: *unit,
                    utc: tz.is_some(),
                }
            }
            DataType::List(_) => {
                let a = array.as_list::<i32>();
                Kind::List {
                    ranges: Ranges::Offsets32(a.offsets().clone()),
                    child: list_child(a.values(), mode)?,
                }
            }
            DataType::LargeList(_) => {
                let a = array.as_list::<i64>();
                Kind::List {
                    ranges: Ranges::Offsets64(a.offsets().clone()),
                    child: list_child(a.values(), mode)?,
                }
            }
            DataType::FixedSizeList(_, _) => {
                let a = array.as_fixed_size_list();
                Kind::List {
                    ranges: Ranges::Fixed(a.clone()),
                    child: list_child(a.values(), mode)?,
                }
            }
            DataType::ListView(_) => {
                let a = array.as_list_view::<i32>();
                Kind::List {
                    ranges: Ranges::View32(
                        ScalarBuffer::from(a.value_offsets().to_vec()),
                        ScalarBuffer::from(a.value_sizes().to_vec()),
                    ),
                    child: list_child(a.values(), mode)?,
                }
            }
            DataType::LargeListView(_) => {
                let a = array.as_list_view::<i64>();
                Kind::List {
                    ranges: Ranges::View64(
                        ScalarBuffer::from(a.value_offsets().to_vec()),
                        ScalarBuffer::from(a.value_sizes().to_vec()),
                    ),
                    child: list_child(a.values(), mode)?,
                }
            }
            // Shredded nested variants are reassembled by VariantInput.
            DataType::Struct(fields) if is_variant_struct(fields) => {
                Kind::Variant(VariantInput::try_new(array)?)
            }
            DataType::Struct(fields) if mode.objects() => {
                let st = array.as_struct();
                let children = fields
                    .iter()
                    .zip(st.columns())
                    .map(|(f, c)| Ok((f.name().clone(), Conv::try_new(c, mode)?)))
                    .collect::<Result<Vec<_>, ArrowError>>()?;
                Kind::Object(children, mode == ToVariantMode::ToJson)
            }
            DataType::Map(_, _) if mode.objects() => {
                let m = array.as_map();
                Kind::Map {
                    offsets: m.offsets().clone(),
                    keys: Keys::try_new(m.keys())?,
                    values: Box::new(Conv::try_new(m.values(), mode)?),
                }
            }
            DataType::Struct(_) | DataType::Map(_, _) => {
                return Err(invalid(format!(
                    "cannot cast {} to VARIANT; use to_variant_object",
                    sql_type_name(array.data_type())
                )));
            }
            other => {
                return Err(invalid(format!(
                    "the type {} has no variant counterpart",
                    sql_type_name(other)
                )));
            }
        };
        Ok(Self {
            len: array.len(),
            nulls: array.logical_nulls(),
            kind,
        })
    }

    fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.is_null(i))
    }

    /// The value at index `i` when it is a date or timestamp that chrono (and so
    /// parquet-variant's builder) cannot hold, though a Variant can.
    fn wide_temporal(&self, i: usize) -> Option<Temporal> {
        let t = match &self.kind {
            Kind::Date32(v) => Temporal::Date(*v.get(i)?),
            Kind::Timestamp { values, unit, utc } => {
                let micros = timestamp_micros(*values.get(i)?, *unit)?;
                if *utc {
                    Temporal::Timestamp(micros)
                } else {
                    Temporal::TimestampNtz(micros)
                }
            }
            _ => return None,
        };
        (!t.within_chrono()).then_some(t)
    }

    /// Appends the value at index `i` (which may be null) to `b`.
    fn append<B: VariantBuilderExt>(&self, b: &mut B, i: usize) -> Result<(), ArrowError> {
        if i >= self.len {
            return Err(invalid(format!(
                "index {i} out of bounds of a child array of length {}",
                self.len
            )));
        }
        if self.is_null(i) {
            b.append_value(Variant::Null);
            return Ok(());
        }
        match &self.kind {
            Kind::Null => b.append_value(Variant::Null),
            Kind::Bool(v) => b.append_value(v.value(i)),
            Kind::Int8(v) => b.append_value(int_variant(v[i].into())),
            Kind::Int16(v) => b.append_value(int_variant(v[i].into())),
            Kind::Int32(v) => b.append_value(int_variant(v[i].into())),
            Kind::Int64(v) => b.append_value(int_variant(v[i])),
            Kind::UInt8(v) => b.append_value(int_variant(v[i].into())),
            Kind::UInt16(v) => b.append_value(int_variant(v[i].into())),
            Kind::UInt32(v) => b.append_value(int_variant(v[i].into())),
            Kind::UInt64(v) => match i64::try_from(v[i]) {
                Ok(x) => b.append_value(int_variant(x)),
                Err(_) => b.append_value(Variant::Decimal16(VariantDecimal16::try_new(
                    i128::from(v[i]),
                    0,
                )?)),
            },
            Kind::Float16(v) => b.append_value(v[i].to_f32()),
            Kind::Float32(v) => b.append_value(v[i]),
            Kind::Float64(v) => b.append_value(v[i]),
            Kind::Decimal32(v, s) => b.append_value(decimal_variant(v[i].into(), *s)?),
            Kind::Decimal64(v, s) => b.append_value(decimal_variant(v[i].into(), *s)?),
            Kind::Decimal128(v, s) => b.append_value(decimal_variant(v[i], *s)?),
            Kind::Decimal256(v, s) => b.append_value(decimal256_variant(v[i], *s)?),
            Kind::Utf8(a) => b.append_value(a.value(i)),
            Kind::LargeUtf8(a) => b.append_value(a.value(i)),
            Kind::Utf8View(a) => b.append_value(a.value(i)),
            Kind::Binary(a) => b.append_value(a.value(i)),
            Kind::LargeBinary(a) => b.append_value(a.value(i)),
            Kind::BinaryView(a) => b.append_value(a.value(i)),
            Kind::FixedSizeBinary(a) => b.append_value(a.value(i)),
            Kind::Date32(v) => b.append_value(date_variant(i64::from(v[i]))?),
            Kind::Date64(v) => b.append_value(date_variant(v[i].div_euclid(86_400_000))?),
            Kind::Timestamp { values, unit, utc } => {
                let raw = values[i];
                let micros = timestamp_micros(raw, *unit).ok_or_else(|| {
                    invalid(format!("timestamp {raw} ({unit:?}) is out of range"))
                })?;
                let ts = DateTime::from_timestamp_micros(micros)
                    .ok_or_else(|| nested_wide(Temporal::Timestamp(micros)))?;
                if *utc {
                    b.append_value(Variant::TimestampMicros(ts));
                } else {
                    b.append_value(Variant::TimestampNtzMicros(ts.naive_utc()));
                }
            }
            Kind::List { ranges, child } => {
                let (start, end) = ranges
                    .range(i)
                    .filter(|&(_, end)| end <= child.len)
                    .ok_or_else(|| invalid(format!("invalid list offsets at index {i}")))?;
                let mut list = b.try_new_list()?;
                for j in start..end {
                    child.append(&mut list, j)?;
                }
                list.finish();
            }
            Kind::Object(fields, omit_nulls) => {
                let mut object = b.try_new_object()?;
                for (name, child) in fields {
                    if *omit_nulls && child.is_null(i) {
                        continue;
                    }
                    let mut field = ObjectFieldBuilder::new(name, &mut object);
                    child.append(&mut field, i)?;
                }
                object.finish();
            }
            Kind::Map {
                offsets,
                keys,
                values,
            } => {
                let (start, end) = match (offsets.get(i), offsets.get(i + 1)) {
                    (Some(&s), Some(&e)) => (usize::try_from(s).ok(), usize::try_from(e).ok()),
                    _ => (None, None),
                };
                let (start, end) = start
                    .zip(end)
                    .filter(|&(s, e)| s <= e && e <= keys.len() && e <= values.len)
                    .ok_or_else(|| invalid(format!("invalid map offsets at index {i}")))?;
                let mut object = b.try_new_object()?;
                for j in start..end {
                    let key = keys
                        .get(j)
                        .ok_or_else(|| invalid(format!("null map key at index {i}")))?;
                    let mut field = ObjectFieldBuilder::new(key, &mut object);
                    values.append(&mut field, j)?;
                }
                object.finish();
            }
            Kind::Variant(input) => match input.get(i) {
                None => b.append_value(Variant::Null),
                Some((metadata, value)) => {
                    let v = Variant::try_new(metadata, value)
                        .map_err(|e| invalid(format!("invalid nested variant: {e}")))?;
                    b.append_value(v);
                }
            },
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------

/// An integer in the smallest Variant integer width that holds it.
fn int_variant(v: i64) -> Variant<'static, 'static> {
    if let Ok(x) = i8::try_from(v) {
        Variant::Int8(x)
    } else if let Ok(x) = i16::try_from(v) {
        Variant::Int16(x)
    } else if let Ok(x) = i32::try_from(v) {
        Variant::Int32(x)
    } else {
        Variant::Int64(v)
    }
}

/// Days since the Unix epoch as a Variant date.
fn date_variant(days: i64) -> Result<Variant<'static, 'static>, ArrowError> {
    /// `NaiveDate::from_num_days_from_ce` of 1970-01-01.
    const EPOCH_FROM_CE: i64 = 719_163;
    let days = i32::try_from(days)
        .map_err(|_| invalid(format!("date {days} days from 1970-01-01 is out of range")))?;
    days.checked_add(EPOCH_FROM_CE as i32)
        .and_then(NaiveDate::from_num_days_from_ce_opt)
        .map(Variant::Date)
        .ok_or_else(|| nested_wide(Temporal::Date(days)))
}

/// A timestamp in the given unit as microseconds since the epoch (nanoseconds
/// rounded down); `None` when it overflows.
fn timestamp_micros(raw: i64, unit: TimeUnit) -> Option<i64> {
    match unit {
        TimeUnit::Second => raw.checked_mul(1_000_000),
        TimeUnit::Millisecond => raw.checked_mul(1_000),
        TimeUnit::Microsecond => Some(raw),
        TimeUnit::Nanosecond => Some(raw.div_euclid(1_000)),
    }
}

/// The refusal of a date or timestamp past chrono's years inside a struct, list
/// or map (at the top level they are written as bytes, see [`Conv::wide_temporal`]).
fn nested_wide(t: Temporal) -> ArrowError {
    let mut text = String::new();
    crate::variant::format::write_temporal(
        t,
        &crate::variant::tz::SessionTz::utc(),
        false,
        &mut text,
    );
    invalid(format!(
        "{text} is past the years ±262,143, which a VARIANT holds only at the top level here"
    ))
}

/// The largest unscaled value of a 38-digit decimal.
const MAX_DECIMAL38: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// A decimal `unscaled * 10^-scale` with trailing zeros stripped, in the narrowest
/// Variant decimal width (as Spark's `VariantBuilder.appendDecimal`).
fn decimal_variant(unscaled: i128, scale: i8) -> Result<Variant<'static, 'static>, ArrowError> {
    let (mut u, mut s) = (unscaled, i32::from(scale));
    while s > 0 && u % 10 == 0 {
        u /= 10;
        s -= 1;
    }
    if s < 0 {
        u = 10i128
            .checked_pow(s.unsigned_abs())
            .and_then(|p| u.checked_mul(p))
            .filter(|x| x.unsigned_abs() <= MAX_DECIMAL38 as u128)
            .ok_or_else(|| decimal_overflow(unscaled, scale))?;
        s = 0;
    }
    if s > 38 || u.unsigned_abs() > MAX_DECIMAL38 as u128 {
        return Err(decimal_overflow(unscaled, scale));
    }
    let s = s as u8;
    if s <= 9
        && let Ok(x) = i32::try_from(u)
        && let Ok(d) = VariantDecimal4::try_new(x, s)
    {
        return Ok(Variant::Decimal4(d));
    }
    if s <= 18
        && let Ok(x) = i64::try_from(u)
        && let Ok(d) = VariantDecimal8::try_new(x, s)
    {
        return Ok(Variant::Decimal8(d));
    }
    Ok(Variant::Decimal16(VariantDecimal16::try_new(u, s)?))
}

/// [`decimal_variant`] for 256-bit decimals: trailing zeros are stripped first, then
/// the value must fit 38 digits.
fn decimal256_variant(unscaled: i256, scale: i8) -> Result<Variant<'static, 'static>, ArrowError> {
    let ten = i256::from_i128(10);
    let (mut u, mut s) = (unscaled, scale);
    while s > 0 && u.checked_rem(ten) == Some(i256::ZERO) {
        match u.checked_div(ten) {
            Some(q) => u = q,
            None => break,
        }
        s -= 1;
    }
    let overflow = || {
        invalid(format!(
            "decimal {unscaled} with scale {scale} does not fit DECIMAL(38)"
        ))
    };
    let u = u.to_i128().ok_or_else(overflow)?;
    decimal_variant(u, s).map_err(|_| overflow())
}

fn decimal_overflow(unscaled: i128, scale: i8) -> ArrowError {
    invalid(format!(
        "decimal {unscaled} with scale {scale} does not fit DECIMAL(38)"
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        BooleanArray, Date32Array, Date64Array, Decimal32Array, Decimal64Array, Decimal128Array,
        Decimal256Array, DictionaryArray, DurationSecondArray, FixedSizeBinaryArray,
        FixedSizeListArray, Float16Array, Float32Array, Float64Array, Int8Array, Int32Array,
        Int64Array, LargeListArray, LargeStringArray, ListArray, ListViewArray, MapArray,
        NullArray, StringArray, StringViewArray, StructArray, Time32SecondArray,
        TimestampMicrosecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt8Array,
        UInt32Array, UInt64Array,
    };
    use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
    use arrow::datatypes::{Field, Fields, Int32Type};

    use super::*;
    use crate::array::{VariantColumnBuilder, variant_data_type};

    fn convert(array: ArrayRef, mode: ToVariantMode) -> ArrayRef {
        let out = array_to_variant(array.as_ref(), mode).expect("conversion succeeds");
        assert_eq!(out.len(), array.len());
        assert_eq!(out.data_type(), &variant_data_type());
        out
    }

    /// Renders a variant: objects as `{k: v}` in stored order, lists as `[..]`,
    /// scalars with their Debug form (so the physical type is visible).
    fn render(v: &Variant) -> String {
        match v {
            Variant::Object(o) => {
                let fields: Vec<String> = o
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", render(&v)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
            Variant::List(l) => {
                let items: Vec<String> = l.iter().map(|v| render(&v)).collect();
                format!("[{}]", items.join(", "))
            }
            Variant::ShortString(s) => format!("{:?}", s.as_str()),
            Variant::String(s) => format!("{s:?}"),
            other => format!("{other:?}"),
        }
    }

    /// Every row of a variant column rendered, `None` for SQL NULL.
    fn rows(out: &ArrayRef) -> Vec<Option<String>> {
        let st = out.as_struct();
        (0..st.len())
            .map(|i| {
                st.is_valid(i).then(|| {
                    let m = st.column(0).as_binary_view().value(i);
                    let v = st.column(1).as_binary_view().value(i);
                    render(&Variant::try_new(m, v).expect("valid variant"))
                })
            })
            .collect()
    }

    fn cast_rows(array: ArrayRef) -> Vec<Option<String>> {
        rows(&convert(array, ToVariantMode::Cast))
    }

    fn one(array: ArrayRef) -> String {
        cast_rows(array).remove(0).expect("not null")
    }

    fn some(items: &[&str]) -> Vec<Option<String>> {
        items.iter().map(|s| Some(s.to_string())).collect()
    }

    #[test]
    fn booleans_and_sql_nulls() {
        let a: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)]));
        assert_eq!(
            cast_rows(a),
            vec![
                Some("BooleanTrue".to_string()),
                None,
                Some("BooleanFalse".to_string())
            ]
        );
    }

    #[test]
    fn integers_use_the_smallest_width() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![
            5,
            -128,
            300,
            -70_000,
            5_000_000_000,
            i64::MIN,
        ]));
        assert_eq!(
            cast_rows(a),
            some(&[
                "Int8(5)",
                "Int8(-128)",
                "Int16(300)",
                "Int32(-70000)",
                "Int64(5000000000)",
                "Int64(-9223372036854775808)"
            ])
        );
        assert_eq!(one(Arc::new(Int8Array::from(vec![-3]))), "Int8(-3)");
        assert_eq!(one(Arc::new(Int32Array::from(vec![7]))), "Int8(7)");
    }

    #[test]
    fn unsigned_integers_widen() {
        assert_eq!(one(Arc::new(UInt8Array::from(vec![200]))), "Int16(200)");
        assert_eq!(
            one(Arc::new(UInt32Array::from(vec![u32::MAX]))),
            "Int64(4294967295)"
        );
        let a: ArrayRef = Arc::new(UInt64Array::from(vec![5, u64::MAX]));
        let out = rows(&convert(a, ToVariantMode::Cast));
        assert_eq!(out[0].as_deref(), Some("Int8(5)"));
        let max = out[1].as_deref().unwrap();
        assert!(max.starts_with("Decimal16"), "{max}");
        assert!(max.contains("18446744073709551615"), "{max}");
        assert!(max.contains("scale: 0"), "{max}");
    }

    #[test]
    fn floats_keep_their_width() {
        assert_eq!(
            one(Arc::new(Float32Array::from(vec![1.5f32]))),
            "Float(1.5)"
        );
        assert_eq!(
            one(Arc::new(Float64Array::from(vec![2.25]))),
            "Double(2.25)"
        );
        let h = Float16Array::from(vec![<Float16Type as ArrowPrimitiveType>::Native::from_f32(
            0.5,
        )]);
        assert_eq!(one(Arc::new(h)), "Float(0.5)");
    }

    fn decimal_of(v: &Variant) -> (i128, u8, u8) {
        match v {
            Variant::Decimal4(d) => (d.integer().into(), d.scale(), 4),
            Variant::Decimal8(d) => (d.integer().into(), d.scale(), 8),
            Variant::Decimal16(d) => (d.integer(), d.scale(), 16),
            other => panic!("not a decimal: {other:?}"),
        }
    }

    fn decimals(array: ArrayRef) -> Vec<(i128, u8, u8)> {
        let out = convert(array, ToVariantMode::Cast);
        let st = out.as_struct();
        (0..st.len())
            .map(|i| {
                let m = st.column(0).as_binary_view().value(i);
                let v = st.column(1).as_binary_view().value(i);
                decimal_of(&Variant::try_new(m, v).unwrap())
            })
            .collect()
    }

    #[test]
    fn decimals_lose_trailing_zeros_and_use_the_narrowest_width() {
        let a = Decimal128Array::from(vec![
            100,
            150,
            0,
            -150,
            5,
            12_345_678_901,
            10i128.pow(20),
            99_999_999_999_999_999_900,
            99_999_999_900,
            999_999_999_900,
        ])
        .with_precision_and_scale(38, 2)
        .unwrap();
        assert_eq!(
            decimals(Arc::new(a)),
            vec![
                (1, 0, 4),
                (15, 1, 4),
                (0, 0, 4),
                (-15, 1, 4),
                (5, 2, 4),
                (12_345_678_901, 2, 8),
                (10i128.pow(18), 0, 16),
                (999_999_999_999_999_999, 0, 8),
                (999_999_999, 0, 4),
                (9_999_999_999, 0, 8),
            ]
        );
        let wide = Decimal128Array::from(vec![10i128.pow(37) + 1, -(10i128.pow(37) + 1)])
            .with_precision_and_scale(38, 0)
            .unwrap();
        assert_eq!(
            decimals(Arc::new(wide)),
            vec![(10i128.pow(37) + 1, 0, 16), (-(10i128.pow(37) + 1), 0, 16)]
        );
        let d32 = Decimal32Array::from(vec![1230])
            .with_precision_and_scale(9, 3)
            .unwrap();
        assert_eq!(decimals(Arc::new(d32)), vec![(123, 2, 4)]);
        let d64 = Decimal64Array::from(vec![1_000_000_000_000])
            .with_precision_and_scale(18, 2)
            .unwrap();
        assert_eq!(decimals(Arc::new(d64)), vec![(10_000_000_000, 0, 8)]);
        // A negative Arrow scale is multiplied out.
        let neg = Decimal128Array::from(vec![3])
            .with_precision_and_scale(5, -2)
            .unwrap();
        assert_eq!(decimals(Arc::new(neg)), vec![(300, 0, 4)]);
    }

    #[test]
    fn decimal256_fits_38_digits_or_fails() {
        let ten = i256::from_i128(10);
        let big = ten.wrapping_pow(40); // 10^40 with scale 10 = 10^30
        let a = Decimal256Array::from(vec![big, i256::from_i128(-25)])
            .with_precision_and_scale(76, 10)
            .unwrap();
        assert_eq!(
            decimals(Arc::new(a)),
            vec![(10i128.pow(30), 0, 16), (-25, 10, 8)]
        );
        let too_big =
            Decimal256Array::from(vec![i256::from_i128(1), ten.wrapping_pow(40) + i256::ONE])
                .with_precision_and_scale(76, 0)
                .unwrap();
        let err = array_to_variant(&too_big, ToVariantMode::Cast).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("does not fit DECIMAL(38)"), "{msg}");
        assert!(msg.contains("DECIMAL(76,0)"), "{msg}");
    }

    #[test]
    fn strings_and_binaries() {
        let long = "x".repeat(100);
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            Some("hi"),
            None,
            Some(long.as_str()),
        ]));
        assert_eq!(
            cast_rows(a),
            vec![Some("\"hi\"".to_string()), None, Some(format!("{long:?}"))]
        );
        assert_eq!(one(Arc::new(LargeStringArray::from(vec!["a"]))), "\"a\"");
        assert_eq!(
            one(Arc::new(StringViewArray::from(vec![
                "a view string longer than 12"
            ]))),
            "\"a view string longer than 12\""
        );
        let b: ArrayRef = Arc::new(arrow::array::BinaryArray::from(vec![&b"\x01\x02"[..]]));
        assert_eq!(one(b), "Binary(01 02)");
        let f = FixedSizeBinaryArray::try_from_iter(vec![vec![7u8, 8]].into_iter()).unwrap();
        assert_eq!(one(Arc::new(f)), "Binary(07 08)");
    }

    #[test]
    fn dates() {
        let a: ArrayRef = Arc::new(Date32Array::from(vec![0, 19_737, -1]));
        assert_eq!(
            cast_rows(a),
            some(&["Date(1970-01-01)", "Date(2024-01-15)", "Date(1969-12-31)"])
        );
        let d: ArrayRef = Arc::new(Date64Array::from(vec![-1, 86_400_000]));
        assert_eq!(
            cast_rows(d),
            some(&["Date(1969-12-31)", "Date(1970-01-02)"])
        );
        // Past chrono's years: written as bytes at the top level, refused inside a
        // struct (parquet-variant's builder needs a chrono date).
        let wide: ArrayRef = Arc::new(Date32Array::from(vec![i32::MAX]));
        let out = array_to_variant(wide.as_ref(), ToVariantMode::Cast).unwrap();
        let input = VariantInput::try_new(&out).unwrap();
        let (m, v) = input.get(0).unwrap();
        assert_eq!(
            (m, v),
            (
                encoding::EMPTY_METADATA,
                &[0x2c, 0xff, 0xff, 0xff, 0x7f][..]
            )
        );
        let nested: ArrayRef = Arc::new(arrow::array::StructArray::from(vec![(
            Arc::new(arrow::datatypes::Field::new("d", DataType::Date32, true)),
            wide,
        )]));
        let e = array_to_variant(nested.as_ref(), ToVariantMode::ToVariantObject).unwrap_err();
        assert!(e.to_string().contains("+5881580-07-11"), "{e}");
    }

    #[test]
    fn timestamps_are_micros() {
        let utc: ArrayRef = Arc::new(TimestampSecondArray::from(vec![1]).with_timezone("UTC"));
        assert_eq!(one(utc), "TimestampMicros(1970-01-01T00:00:01Z)");
        let ns: ArrayRef =
            Arc::new(TimestampNanosecondArray::from(vec![-1, 1_999]).with_timezone("+01:00"));
        let out = convert(ns, ToVariantMode::Cast);
        let st = out.as_struct();
        let micros: Vec<i64> = (0..2)
            .map(|i| {
                let v = Variant::try_new(
                    st.column(0).as_binary_view().value(i),
                    st.column(1).as_binary_view().value(i),
                )
                .unwrap();
                match v {
                    Variant::TimestampMicros(t) => t.timestamp_micros(),
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(micros, vec![-1, 1]);
        let ntz: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![1_500_000]));
        assert_eq!(one(ntz), "TimestampNtzMicros(1970-01-01T00:00:01.500)");
        let huge: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MAX]));
        assert!(array_to_variant(huge.as_ref(), ToVariantMode::Cast).is_err());
    }

    #[test]
    fn null_type() {
        // A NULL of type NULL is a SQL NULL; inside an array it is a variant null.
        let a: ArrayRef = Arc::new(NullArray::new(2));
        assert_eq!(cast_rows(a), vec![None, None]);
        let values: ArrayRef = Arc::new(NullArray::new(2));
        let list = ListArray::new(
            Arc::new(Field::new_list_field(DataType::Null, true)),
            OffsetBuffer::from_lengths([2]),
            values,
            None,
        );
        assert_eq!(one(Arc::new(list)), "[Null, Null]");
    }

    fn int_list(rows: Vec<Option<Vec<Option<i32>>>>) -> ListArray {
        ListArray::from_iter_primitive::<Int32Type, _, _>(rows)
    }

    #[test]
    fn lists_with_nulls() {
        let list = int_list(vec![Some(vec![Some(1), None, Some(3)]), None, Some(vec![])]);
        assert_eq!(
            cast_rows(Arc::new(list.clone())),
            vec![
                Some("[Int8(1), Null, Int8(3)]".to_string()),
                None,
                Some("[]".to_string())
            ]
        );
        // Sliced input.
        assert_eq!(
            cast_rows(Arc::new(list.slice(1, 2))),
            vec![None, Some("[]".to_string())]
        );
        // A top-level list is allowed under to_variant_object too.
        assert_eq!(
            rows(&convert(Arc::new(list), ToVariantMode::ToVariantObject))[0].as_deref(),
            Some("[Int8(1), Null, Int8(3)]")
        );
    }

    #[test]
    fn nested_and_other_list_kinds() {
        let inner = int_list(vec![
            Some(vec![Some(1)]),
            None,
            Some(vec![Some(2), Some(3)]),
        ]);
        let outer = ListArray::new(
            Arc::new(Field::new_list_field(inner.data_type().clone(), true)),
            OffsetBuffer::from_lengths([3]),
            Arc::new(inner.clone()),
            None,
        );
        assert_eq!(
            one(Arc::new(outer)),
            "[[Int8(1)], Null, [Int8(2), Int8(3)]]"
        );

        let values: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
        let item = Arc::new(Field::new_list_field(DataType::Int32, true));
        let large = LargeListArray::new(
            Arc::clone(&item),
            OffsetBuffer::from_lengths([1, 3]),
            Arc::clone(&values),
            None,
        );
        assert_eq!(
            cast_rows(Arc::new(large)),
            some(&["[Int8(1)]", "[Int8(2), Int8(3), Int8(4)]"])
        );
        let fixed = FixedSizeListArray::new(Arc::clone(&item), 2, Arc::clone(&values), None);
        assert_eq!(
            cast_rows(Arc::new(fixed.slice(1, 1))),
            some(&["[Int8(3), Int8(4)]"])
        );
        let view = ListViewArray::new(
            item,
            ScalarBuffer::from(vec![2, 0]),
            ScalarBuffer::from(vec![2, 1]),
            values,
            Some(NullBuffer::from(vec![true, true])),
        );
        assert_eq!(
            cast_rows(Arc::new(view)),
            some(&["[Int8(3), Int8(4)]", "[Int8(1)]"])
        );
    }

    fn sample_struct() -> StructArray {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let b: ArrayRef = Arc::new(StringArray::from(vec!["x", "y", "z"]));
        let inner = int_list(vec![Some(vec![Some(1)]), None, Some(vec![])]);
        StructArray::new(
            Fields::from(vec![
                Field::new("b", DataType::Int32, true),
                Field::new("a", DataType::Utf8, false),
                Field::new("c", inner.data_type().clone(), true),
            ]),
            vec![a, b, Arc::new(inner)],
            Some(NullBuffer::from(vec![true, true, false])),
        )
    }

    #[test]
    fn structs_need_to_variant_object() {
        let st = sample_struct();
        let err = check_convertible(st.data_type(), ToVariantMode::Cast)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION]"),
            "{err}"
        );
        assert!(
            err.contains("\"STRUCT<b: INT, a: STRING, c: ARRAY<INT>>\""),
            "{err}"
        );
        assert!(err.contains("to_variant_object"), "{err}");
        assert!(array_to_variant(&st, ToVariantMode::Cast).is_err());

        // Arrays of structs, too.
        let list = ListArray::new(
            Arc::new(Field::new_list_field(st.data_type().clone(), true)),
            OffsetBuffer::from_lengths([3]),
            Arc::new(st.clone()),
            None,
        );
        let err = check_convertible(list.data_type(), ToVariantMode::Cast)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ARRAY<STRUCT<"), "{err}");
        assert!(err.contains("to_variant_object"), "{err}");

        // ... which to_variant_object turns into arrays of objects.
        assert_eq!(
            rows(&convert(Arc::new(list), ToVariantMode::ToVariantObject)),
            some(&["[{a: \"x\", b: Int8(1), c: [Int8(1)]}, {a: \"y\", b: Null, c: Null}, Null]"])
        );
    }

    #[test]
    fn to_variant_object_on_structs() {
        let out = rows(&convert(
            Arc::new(sample_struct()),
            ToVariantMode::ToVariantObject,
        ));
        assert_eq!(
            out,
            vec![
                Some("{a: \"x\", b: Int8(1), c: [Int8(1)]}".to_string()),
                Some("{a: \"y\", b: Null, c: Null}".to_string()),
                None
            ]
        );
        // Nested structs become nested objects; sliced input works.
        let st = sample_struct();
        let outer = StructArray::new(
            Fields::from(vec![Field::new("s", st.data_type().clone(), true)]),
            vec![Arc::new(st)],
            None,
        );
        assert_eq!(
            rows(&convert(
                Arc::new(outer.slice(1, 2)),
                ToVariantMode::ToVariantObject
            )),
            some(&["{s: {a: \"y\", b: Null, c: Null}}", "{s: Null}"])
        );
    }

    #[test]
    fn to_variant_object_rejects_scalars() {
        let err = check_convertible(&DataType::Int32, ToVariantMode::ToVariantObject)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("[DATATYPE_MISMATCH."), "{err}");
        assert!(
            err.contains("to_variant_object requires a struct, map or array"),
            "{err}"
        );
        let a = Int32Array::from(vec![1]);
        assert!(array_to_variant(&a, ToVariantMode::ToVariantObject).is_err());
    }

    /// Rows `{k2: 2, k1: NULL}`, `{dup: 1, dup: 9}` and `{}`.
    fn string_map() -> MapArray {
        let values = Int32Array::from(vec![Some(2), None, Some(1), Some(9)]);
        MapArray::new_from_strings(
            ["k2", "k1", "dup", "dup"].into_iter(),
            &values,
            &[0, 2, 4, 4],
        )
        .unwrap()
    }

    #[test]
    fn maps_with_string_keys_become_objects() {
        let map = string_map();
        let err = check_convertible(map.data_type(), ToVariantMode::Cast)
            .unwrap_err()
            .to_string();
        assert!(err.contains("MAP<STRING, INT>"), "{err}");
        assert!(err.contains("to_variant_object"), "{err}");
        assert_eq!(
            rows(&convert(Arc::new(map), ToVariantMode::ToVariantObject)),
            some(&["{k1: Null, k2: Int8(2)}", "{dup: Int8(9)}", "{}"])
        );
    }

    #[test]
    fn maps_with_other_keys_are_refused() {
        let entries = Fields::from(vec![
            Field::new("key", DataType::Int32, false),
            Field::new("value", DataType::Int32, true),
        ]);
        let entries_struct = StructArray::new(
            entries.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(Int32Array::from(vec![2])),
            ],
            None,
        );
        let map = MapArray::new(
            Arc::new(Field::new("entries", DataType::Struct(entries), false)),
            OffsetBuffer::from_lengths([1]),
            entries_struct,
            None,
            false,
        );
        let err = check_convertible(map.data_type(), ToVariantMode::ToVariantObject)
            .unwrap_err()
            .to_string();
        assert!(err.contains("MAP<INT, INT>"), "{err}");
        assert!(err.contains("STRING"), "{err}");
        assert!(array_to_variant(&map, ToVariantMode::ToVariantObject).is_err());
    }

    fn variant_column() -> ArrayRef {
        let mut b = VariantColumnBuilder::new(3);
        let mut vb = VariantBuilder::new();
        vb.new_object()
            .with_field("metadata", 1i8)
            .with_field("z", "q")
            .finish();
        let (m, v) = vb.finish();
        b.append(&m, &v);
        b.append_null();
        let mut vb = VariantBuilder::new();
        vb.append_value(Variant::Int64(7));
        let (m, v) = vb.finish();
        b.append(&m, &v);
        b.finish()
    }

    #[test]
    fn lists_of_variants_are_copied() {
        let values = variant_column();
        let list = ListArray::new(
            Arc::new(Field::new_list_field(values.data_type().clone(), true)),
            OffsetBuffer::from_lengths([3, 0]),
            values,
            Some(NullBuffer::from(vec![true, false])),
        );
        assert!(check_convertible(list.data_type(), ToVariantMode::Cast).is_ok());
        assert_eq!(
            cast_rows(Arc::new(list)),
            vec![
                Some("[{metadata: Int8(1), z: \"q\"}, Null, Int64(7)]".to_string()),
                None
            ]
        );
    }

    #[test]
    fn variant_fields_in_objects_and_top_level_variants() {
        let v = variant_column();
        let st = StructArray::new(
            Fields::from(vec![Field::new("v", v.data_type().clone(), true)]),
            vec![Arc::clone(&v)],
            None,
        );
        assert_eq!(
            rows(&convert(Arc::new(st), ToVariantMode::ToVariantObject)),
            some(&[
                "{v: {metadata: Int8(1), z: \"q\"}}",
                "{v: Null}",
                "{v: Int64(7)}"
            ])
        );
        // cast(variant AS variant) is the identity; to_variant_object refuses it.
        assert_eq!(
            cast_rows(Arc::clone(&v)),
            vec![
                Some("{metadata: Int8(1), z: \"q\"}".to_string()),
                None,
                Some("Int64(7)".to_string())
            ]
        );
        assert!(check_convertible(v.data_type(), ToVariantMode::ToVariantObject).is_err());
    }

    #[test]
    fn shredded_nested_variants_are_reassembled() {
        let fields = Fields::from(vec![
            Field::new("metadata", DataType::BinaryView, false),
            Field::new("value", DataType::BinaryView, true),
            Field::new("typed_value", DataType::Int32, true),
        ]);
        assert!(is_variant_struct(&fields));
        let shredded = StructArray::new(
            fields,
            vec![
                Arc::new(arrow::array::BinaryViewArray::from(vec![EMPTY])),
                Arc::new(arrow::array::BinaryViewArray::from(vec![None::<&[u8]>])),
                Arc::new(Int32Array::from(vec![1])),
            ],
            None,
        );
        let list = ListArray::new(
            Arc::new(Field::new_list_field(shredded.data_type().clone(), true)),
            OffsetBuffer::from_lengths([1]),
            Arc::new(shredded),
            None,
        );
        let out = array_to_variant(&list, ToVariantMode::Cast).unwrap();
        let input = VariantInput::try_new(&out).unwrap();
        let (m, v) = input.get(0).unwrap();
        assert_eq!(
            crate::variant::format::to_json_string(
                &Variant::try_new(m, v).unwrap(),
                &crate::variant::tz::SessionTz::utc()
            ),
            "[1]"
        );
    }

    const EMPTY: &[u8] = &[0x01, 0x00, 0x00];

    #[test]
    fn invalid_nested_variants_error_instead_of_panicking() {
        let fields = Fields::from(vec![
            Field::new("metadata", DataType::Binary, false),
            Field::new("value", DataType::Binary, false),
        ]);
        let bad = StructArray::new(
            fields,
            vec![
                Arc::new(arrow::array::BinaryArray::from(vec![EMPTY])),
                Arc::new(arrow::array::BinaryArray::from(vec![&[0x02u8, 0x05][..]])),
            ],
            None,
        );
        let list = ListArray::new(
            Arc::new(Field::new_list_field(bad.data_type().clone(), true)),
            OffsetBuffer::from_lengths([1]),
            Arc::new(bad),
            None,
        );
        let err = array_to_variant(&list, ToVariantMode::Cast)
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid nested variant"), "{err}");
    }

    #[test]
    fn is_variant_struct_shapes() {
        let f = |names: &[(&str, DataType)]| {
            Fields::from(
                names
                    .iter()
                    .map(|(n, t)| Field::new(*n, t.clone(), true))
                    .collect::<Vec<_>>(),
            )
        };
        assert!(is_variant_struct(&f(&[
            ("value", DataType::LargeBinary),
            ("metadata", DataType::Binary)
        ])));
        assert!(!is_variant_struct(&f(&[("metadata", DataType::Binary)])));
        assert!(!is_variant_struct(&f(&[
            ("metadata", DataType::Binary),
            ("value", DataType::Binary),
            ("extra", DataType::Int32)
        ])));
        assert!(!is_variant_struct(&f(&[
            ("metadata", DataType::Utf8),
            ("value", DataType::Binary)
        ])));
    }

    #[test]
    fn dictionaries_are_unpacked() {
        let dict: DictionaryArray<Int32Type> =
            vec![Some("a"), None, Some("a")].into_iter().collect();
        assert_eq!(
            cast_rows(Arc::new(dict)),
            vec![Some("\"a\"".to_string()), None, Some("\"a\"".to_string())]
        );
    }

    #[test]
    fn types_without_a_variant_counterpart_are_refused() {
        for a in [
            Arc::new(DurationSecondArray::from(vec![1])) as ArrayRef,
            Arc::new(Time32SecondArray::from(vec![1])) as ArrayRef,
        ] {
            let err = check_convertible(a.data_type(), ToVariantMode::Cast)
                .unwrap_err()
                .to_string();
            assert!(err.contains("CAST_WITHOUT_SUGGESTION"), "{err}");
            assert!(array_to_variant(a.as_ref(), ToVariantMode::Cast).is_err());
        }
    }

    #[test]
    fn empty_input() {
        let a: ArrayRef = Arc::new(Int32Array::from(Vec::<i32>::new()));
        assert!(cast_rows(a).is_empty());
    }
}
