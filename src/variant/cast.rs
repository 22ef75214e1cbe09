//! Spark's cast matrix from Variant values to typed Arrow columns, as used by
//! `variant_get`, `try_variant_get` and `cast(variant AS type)` (see
//! `spark-semantics.md` §5, §7, §8, §9).
//!
//! A [`VariantCaster`] accumulates the converted values of one target
//! [`SparkType`] and produces an Arrow array of [`SparkType::to_arrow`].
//!
//! Summary of the rules (the value's Variant type down, the target across):
//!
//! * integer targets: integers in range; decimals, doubles and floats truncate toward
//!   zero (out of range, NaN and infinities fail); booleans give 1/0; strings only when
//!   the trimmed text is an optionally signed run of digits; a TIMESTAMP gives its
//!   epoch seconds (floor division);
//! * float/double: every number (overflow gives an infinity, never an error),
//!   booleans 1/0, strings in Java `Double.parseDouble` syntax plus Spark's special
//!   values (`inf`, `infinity`, `nan` in any case, optionally signed), TIMESTAMP as
//!   epoch seconds;
//! * decimal: numbers and decimal text (exponents allowed) rounded half-up to the
//!   target scale, failing only when the integer part does not fit; doubles convert
//!   through their shortest decimal text (as Java's `Double.toString`);
//! * boolean: any non-zero number is `true` (NaN too); strings
//!   `t/true/y/yes/1` and `f/false/n/no/0`, case-insensitive and trimmed;
//! * string: [`write_cast_string`]; binary: strings (UTF-8 bytes) and binary;
//! * date, timestamp, timestamp_ntz: between each other through the session time
//!   zone, from strings as Spark parses them, numbers to TIMESTAMP as epoch seconds;
//! * `array<T>`, `struct<..>`, `map<string,T>`: element-wise; a variant null anywhere
//!   is SQL NULL (except for VARIANT targets, where it stays a variant null).
//!
//! A failure is [`CastError`] (`INVALID_VARIANT_CAST`) in strict mode; with
//! [`CastOptions::safe`] the failing value (or only the failing element inside a
//! container) becomes NULL.
//!
//! Inputs are expected to be well-formed (`super::validate::check` accepted them);
//! containers are additionally validated by parquet-variant once on entry, so that a
//! malformed container fails the cast instead of panicking.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder,
    Float32Builder, Float64Builder, Int8Builder, Int16Builder, Int32Builder, Int64Builder,
    ListArray, MapArray, NullBufferBuilder, StringBuilder, StringViewBuilder, StructArray,
    TimestampMicrosecondBuilder,
};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, FieldRef, Fields};
use chrono::{Datelike, NaiveDate, NaiveDateTime, TimeDelta};
use parquet_variant::{Variant, VariantBuilder, VariantObject};

use super::format::{to_json_string, write_cast_string};
use super::types::SparkType;
use super::tz::SessionTz;
use crate::array::{EMPTY_METADATA, VARIANT_NULL, VariantColumnBuilder};

/// How a cast behaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct CastOptions {
    /// `try_variant_get` / `try_cast`: a value that cannot be converted becomes NULL
    /// instead of an error.
    pub safe: bool,
    /// The session time zone, for conversions between TIMESTAMP and local times and
    /// for printing timestamps.
    pub tz: SessionTz,
}

/// A value that cannot be converted (Spark `INVALID_VARIANT_CAST`).
#[derive(Debug, Clone, PartialEq)]
pub struct CastError {
    /// The JSON text (`to_json`) of the offending value or element.
    pub value: String,
    /// The SQL name of the target type of that value or element, such as `INT`.
    pub target: String,
}

impl std::fmt::Display for CastError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[INVALID_VARIANT_CAST] The variant value `{}` cannot be cast into `\"{}\"`.",
            self.value, self.target
        )
    }
}

impl std::error::Error for CastError {}

/// Accumulates converted values for one target type and produces an Arrow array
/// of type [`SparkType::to_arrow`].
///
/// ```
/// use arrow::array::{Array, AsArray};
/// use arrow::datatypes::Int32Type;
/// use df_variant::variant::cast::{CastOptions, VariantCaster};
/// use df_variant::variant::types::SparkType;
/// use parquet_variant::Variant;
///
/// let mut c = VariantCaster::new(&SparkType::Int, CastOptions::default(), 3);
/// c.append_variant(&Variant::from(" 42 ")).unwrap();
/// c.append_variant(&Variant::from(1.9f64)).unwrap();
/// c.append_variant(&Variant::Null).unwrap();
/// let err = c.append_variant(&Variant::from("x")).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "[INVALID_VARIANT_CAST] The variant value `\"x\"` cannot be cast into `\"INT\"`."
/// );
///
/// let mut c = VariantCaster::new(&SparkType::Int, CastOptions { safe: true, ..Default::default() }, 2);
/// c.append_variant(&Variant::from(7i8)).unwrap();
/// c.append_variant(&Variant::from("x")).unwrap(); // NULL under try
/// let a = c.finish();
/// let a = a.as_primitive::<Int32Type>();
/// assert_eq!((a.value(0), a.is_null(1)), (7, true));
/// ```
pub struct VariantCaster {
    target: SparkType,
    options: CastOptions,
    builder: Builder,
}

impl std::fmt::Debug for VariantCaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VariantCaster")
            .field("target", &self.target)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The per-type output builders. One per caster (not per value), so the size
/// difference between variants does not matter and boxing would only add an
/// indirection on the hot path.
#[allow(clippy::large_enum_variant)]
enum Builder {
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Decimal {
        builder: Decimal128Builder,
        precision: u8,
        scale: u8,
    },
    Utf8 {
        builder: StringViewBuilder,
        scratch: String,
    },
    Binary(BinaryBuilder),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    TimestampNtz(TimestampMicrosecondBuilder),
    Variant(VariantColumnBuilder),
    List {
        field: FieldRef,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        child: Box<VariantCaster>,
    },
    Struct {
        fields: Fields,
        children: Vec<VariantCaster>,
        nulls: NullBufferBuilder,
    },
    Map {
        entries: FieldRef,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
        keys: StringBuilder,
        values: Box<VariantCaster>,
    },
}

impl VariantCaster {
    /// A caster to `target` with room for `capacity` values.
    pub fn new(target: &SparkType, options: CastOptions, capacity: usize) -> Self {
        let builder = match target {
            SparkType::Boolean => Builder::Boolean(BooleanBuilder::with_capacity(capacity)),
            SparkType::Byte => Builder::Int8(Int8Builder::with_capacity(capacity)),
            SparkType::Short => Builder::Int16(Int16Builder::with_capacity(capacity)),
            SparkType::Int => Builder::Int32(Int32Builder::with_capacity(capacity)),
            SparkType::Long => Builder::Int64(Int64Builder::with_capacity(capacity)),
            SparkType::Float => Builder::Float32(Float32Builder::with_capacity(capacity)),
            SparkType::Double => Builder::Float64(Float64Builder::with_capacity(capacity)),
            SparkType::Decimal { precision, scale } => Builder::Decimal {
                builder: Decimal128Builder::with_capacity(capacity)
                    .with_data_type(target.to_arrow()),
                precision: *precision,
                scale: *scale,
            },
            SparkType::String => Builder::Utf8 {
                builder: StringViewBuilder::with_capacity(capacity),
                scratch: String::new(),
            },
            SparkType::Binary => {
                Builder::Binary(BinaryBuilder::with_capacity(capacity, capacity * 8))
            }
            SparkType::Date => Builder::Date(Date32Builder::with_capacity(capacity)),
            SparkType::Timestamp => Builder::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone("UTC"),
            ),
            SparkType::TimestampNtz => {
                Builder::TimestampNtz(TimestampMicrosecondBuilder::with_capacity(capacity))
            }
            SparkType::Variant => Builder::Variant(VariantColumnBuilder::new(capacity)),
            SparkType::Array(element) => {
                let field = element.to_field("item");
                let mut offsets = Vec::with_capacity(capacity + 1);
                offsets.push(0);
                Builder::List {
                    field,
                    offsets,
                    nulls: NullBufferBuilder::new(capacity),
                    child: Box::new(VariantCaster::new(element, options, capacity)),
                }
            }
            SparkType::Struct(members) => {
                let fields = match target.to_arrow() {
                    DataType::Struct(f) => f,
                    _ => Fields::empty(),
                };
                Builder::Struct {
                    fields,
                    children: members
                        .iter()
                        .map(|(_, t)| VariantCaster::new(t, options, capacity))
                        .collect(),
                    nulls: NullBufferBuilder::new(capacity),
                }
            }
            SparkType::Map(value) => {
                let entries = match target.to_arrow() {
                    DataType::Map(e, _) => e,
                    // Unreachable: `to_arrow` of a map is a map.
                    _ => value.to_field("entries"),
                };
                let mut offsets = Vec::with_capacity(capacity + 1);
                offsets.push(0);
                Builder::Map {
                    entries,
                    offsets,
                    nulls: NullBufferBuilder::new(capacity),
                    keys: StringBuilder::new(),
                    values: Box::new(VariantCaster::new(value, options, capacity)),
                }
            }
        };
        Self {
            target: target.clone(),
            options,
            builder,
        }
    }

    /// The target type.
    pub fn target(&self) -> &SparkType {
        &self.target
    }

    /// Number of values appended since the last [`finish`](Self::finish).
    pub fn len(&self) -> usize {
        match &self.builder {
            Builder::Boolean(b) => b.len(),
            Builder::Int8(b) => b.len(),
            Builder::Int16(b) => b.len(),
            Builder::Int32(b) => b.len(),
            Builder::Int64(b) => b.len(),
            Builder::Float32(b) => b.len(),
            Builder::Float64(b) => b.len(),
            Builder::Decimal { builder, .. } => builder.len(),
            Builder::Utf8 { builder, .. } => builder.len(),
            Builder::Binary(b) => b.len(),
            Builder::Date(b) => b.len(),
            Builder::Timestamp(b) | Builder::TimestampNtz(b) => b.len(),
            Builder::Variant(b) => b.len(),
            Builder::List { nulls, .. }
            | Builder::Struct { nulls, .. }
            | Builder::Map { nulls, .. } => nulls.len(),
        }
    }

    /// Whether no values were appended since the last [`finish`](Self::finish).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Converts and appends one value. A variant null appends SQL NULL (a variant
    /// null for VARIANT targets).
    ///
    /// # Errors
    /// [`CastError`] when the value (or an element of it) cannot be converted and
    /// the options are not `safe`; the caster should then be discarded. In safe mode
    /// the failing value or element becomes NULL and this returns `Ok`.
    ///
    /// The variant must be well-formed: from [`crate::variant::validate::decode`]
    /// (which checks every byte) or from a builder; it is not checked again.
    pub fn append_variant(&mut self, v: &Variant<'_, '_>) -> Result<(), CastError> {
        self.append_valid(v)
    }

    /// Fast path for the commonest extractions: a string value into a STRING
    /// target, an integer into an integer target that holds it. `value` must be
    /// bytes checked by [`crate::variant::validate`]. Returns `false` (appending
    /// nothing) when the general path is needed.
    #[inline]
    pub fn try_append_raw(&mut self, value: &[u8]) -> bool {
        let Some(&header) = value.first() else {
            return false;
        };
        let string = match header & 0x03 {
            1 => value.get(1..1 + (header >> 2) as usize),
            0 if header >> 2 == 16 => value
                .get(1..5)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .and_then(|len| value.get(5..5 + len)),
            _ => None,
        };
        let int = || -> Option<i64> {
            Some(match header {
                0x0C => i64::from(*value.get(1)? as i8),
                0x10 => i64::from(i16::from_le_bytes(value.get(1..3)?.try_into().ok()?)),
                0x14 => i64::from(i32::from_le_bytes(value.get(1..5)?.try_into().ok()?)),
                0x18 => i64::from_le_bytes(value.get(1..9)?.try_into().ok()?),
                _ => return None,
            })
        };
        match &mut self.builder {
            Builder::Utf8 { builder, .. } => match string.and_then(|s| std::str::from_utf8(s).ok())
            {
                Some(s) => {
                    builder.append_value(s);
                    true
                }
                None => false,
            },
            Builder::Int64(b) => int().map(|v| b.append_value(v)).is_some(),
            Builder::Int32(b) => int()
                .and_then(|v| i32::try_from(v).ok())
                .map(|v| b.append_value(v))
                .is_some(),
            _ => false,
        }
    }

    /// Appends a SQL NULL.
    pub fn append_null(&mut self) {
        match &mut self.builder {
            Builder::Boolean(b) => b.append_null(),
            Builder::Int8(b) => b.append_null(),
            Builder::Int16(b) => b.append_null(),
            Builder::Int32(b) => b.append_null(),
            Builder::Int64(b) => b.append_null(),
            Builder::Float32(b) => b.append_null(),
            Builder::Float64(b) => b.append_null(),
            Builder::Decimal { builder, .. } => builder.append_null(),
            Builder::Utf8 { builder, .. } => builder.append_null(),
            Builder::Binary(b) => b.append_null(),
            Builder::Date(b) => b.append_null(),
            Builder::Timestamp(b) | Builder::TimestampNtz(b) => b.append_null(),
            Builder::Variant(b) => b.append_null(),
            Builder::List { offsets, nulls, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                nulls.append_null();
            }
            Builder::Struct {
                children, nulls, ..
            } => {
                for c in children {
                    c.append_null();
                }
                nulls.append_null();
            }
            Builder::Map { offsets, nulls, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                nulls.append_null();
            }
        }
    }

    /// Produces the array of everything appended so far (of type
    /// `target.to_arrow()`) and resets the caster.
    pub fn finish(&mut self) -> ArrayRef {
        match &mut self.builder {
            Builder::Boolean(b) => Arc::new(b.finish()),
            Builder::Int8(b) => Arc::new(b.finish()),
            Builder::Int16(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Float32(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Decimal { builder, .. } => Arc::new(builder.finish()),
            Builder::Utf8 { builder, .. } => Arc::new(builder.finish()),
            Builder::Binary(b) => Arc::new(b.finish()),
            Builder::Date(b) => Arc::new(b.finish()),
            Builder::Timestamp(b) | Builder::TimestampNtz(b) => Arc::new(b.finish()),
            Builder::Variant(b) => b.finish(),
            Builder::List {
                field,
                offsets,
                nulls,
                child,
            } => {
                let values = child.finish();
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                Arc::new(ListArray::new(
                    field.clone(),
                    offsets,
                    values,
                    nulls.finish(),
                ))
            }
            Builder::Struct {
                fields,
                children,
                nulls,
            } => {
                let len = nulls.len();
                let nulls = nulls.finish();
                if fields.is_empty() {
                    return Arc::new(StructArray::new_empty_fields(len, nulls));
                }
                let arrays = children.iter_mut().map(VariantCaster::finish).collect();
                Arc::new(StructArray::new(fields.clone(), arrays, nulls))
            }
            Builder::Map {
                entries,
                offsets,
                nulls,
                keys,
                values,
            } => {
                let kv = match entries.data_type() {
                    DataType::Struct(kv) => kv.clone(),
                    _ => Fields::empty(),
                };
                let keys: ArrayRef = Arc::new(keys.finish());
                let entry_array = StructArray::new(kv, vec![keys, values.finish()], None);
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                Arc::new(MapArray::new(
                    entries.clone(),
                    offsets,
                    entry_array,
                    nulls.finish(),
                    false,
                ))
            }
        }
    }

    /// A conversion failure of `v` at this level: NULL in safe mode, else an error.
    #[cold]
    fn fail(&mut self, v: &Variant<'_, '_>) -> Result<(), CastError> {
        if self.options.safe {
            self.append_null();
            Ok(())
        } else {
            Err(CastError {
                value: to_json_string(v, &self.options.tz),
                target: self.target.sql_name(),
            })
        }
    }

    /// Appends a value whose containers (if any) are known to be valid.
    fn append_valid(&mut self, v: &Variant<'_, '_>) -> Result<(), CastError> {
        if matches!(v, Variant::Null) && !matches!(self.builder, Builder::Variant(_)) {
            self.append_null();
            return Ok(());
        }
        let tz = self.options.tz;
        let ok = match &mut self.builder {
            Builder::Boolean(b) => match to_boolean(v) {
                Some(x) => {
                    b.append_value(x);
                    true
                }
                None => false,
            },
            Builder::Int8(b) => push(
                b,
                to_integral(v, i8::MIN.into(), i8::MAX.into()).map(|x| x as i8),
            ),
            Builder::Int16(b) => push(
                b,
                to_integral(v, i16::MIN.into(), i16::MAX.into()).map(|x| x as i16),
            ),
            Builder::Int32(b) => push(
                b,
                to_integral(v, i32::MIN.into(), i32::MAX.into()).map(|x| x as i32),
            ),
            Builder::Int64(b) => push(b, to_integral(v, i64::MIN, i64::MAX)),
            Builder::Float32(b) => push(b, to_f32(v)),
            Builder::Float64(b) => push(b, to_f64(v)),
            Builder::Decimal {
                builder,
                precision,
                scale,
            } => push(builder, to_decimal(v, *precision, *scale)),
            Builder::Utf8 { builder, scratch } => {
                scratch.clear();
                if write_cast_string(v, &tz, scratch) {
                    builder.append_value(scratch.as_str());
                } else {
                    builder.append_null();
                }
                true
            }
            Builder::Binary(b) => match v {
                Variant::String(s) => {
                    b.append_value(s.as_bytes());
                    true
                }
                Variant::ShortString(s) => {
                    b.append_value(s.as_str().as_bytes());
                    true
                }
                Variant::Binary(x) => {
                    b.append_value(x);
                    true
                }
                _ => false,
            },
            Builder::Date(b) => push(b, to_date(v, &tz)),
            Builder::Timestamp(b) => push(b, to_timestamp(v, &tz)),
            Builder::TimestampNtz(b) => push(b, to_timestamp_ntz(v, &tz)),
            Builder::Variant(b) => {
                if matches!(v, Variant::Null) {
                    b.append(EMPTY_METADATA, VARIANT_NULL);
                } else {
                    let mut vb = VariantBuilder::new();
                    vb.append_value(v.clone());
                    let (m, val) = vb.finish();
                    b.append(&m, &val);
                }
                true
            }
            Builder::List {
                offsets,
                nulls,
                child,
                ..
            } => match v {
                Variant::List(list) => {
                    for i in 0..list.len() {
                        match list.get(i) {
                            Some(e) => child.append_valid(&e)?,
                            None => child.append_null(),
                        }
                    }
                    offsets.push(i32::try_from(child.len()).unwrap_or(i32::MAX));
                    nulls.append_non_null();
                    true
                }
                _ => false,
            },
            Builder::Struct {
                fields,
                children,
                nulls,
            } => match v {
                Variant::Object(obj) => {
                    for (field, child) in fields.iter().zip(children.iter_mut()) {
                        match object_get(obj, field.name()) {
                            Some(fv) => child.append_valid(&fv)?,
                            None => child.append_null(),
                        }
                    }
                    nulls.append_non_null();
                    true
                }
                _ => false,
            },
            Builder::Map {
                offsets,
                nulls,
                keys,
                values,
                ..
            } => match v {
                Variant::Object(obj) => {
                    for i in 0..obj.len() {
                        let (Some(name), Some(fv)) = (obj.field_name(i), obj.field(i)) else {
                            continue;
                        };
                        keys.append_value(name);
                        values.append_valid(&fv)?;
                    }
                    offsets.push(i32::try_from(keys.len()).unwrap_or(i32::MAX));
                    nulls.append_non_null();
                    true
                }
                _ => false,
            },
        };
        if ok { Ok(()) } else { self.fail(v) }
    }
}

/// Appends `Some` to a primitive builder; `None` appends nothing and reports failure.
#[inline]
fn push<T: arrow::datatypes::ArrowPrimitiveType>(
    b: &mut arrow::array::PrimitiveBuilder<T>,
    x: Option<T::Native>,
) -> bool {
    match x {
        Some(x) => {
            b.append_value(x);
            true
        }
        None => false,
    }
}

/// Field `name` of a (validated) object: binary search by name, with a linear
/// fallback for non-ASCII names (whose sort order may differ between writers).
fn object_get<'m, 'v>(obj: &VariantObject<'m, 'v>, name: &str) -> Option<Variant<'m, 'v>> {
    if let Some(v) = obj.get(name) {
        return Some(v);
    }
    if name.is_ascii() {
        return None;
    }
    (0..obj.len())
        .find(|&i| obj.field_name(i) == Some(name))
        .and_then(|i| obj.field(i))
}

// ---------------------------------------------------------------------------
// Scalar conversions. Each returns `None` for a value that cannot be converted;
// variant nulls never reach them.
// ---------------------------------------------------------------------------

/// `10^i` for `i` in `0..=38`.
const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

fn pow10(n: u32) -> Option<i128> {
    POW10.get(n as usize).copied()
}

/// The unscaled value and scale of a decimal variant.
fn decimal_parts(v: &Variant<'_, '_>) -> Option<(i128, u8)> {
    match v {
        Variant::Decimal4(d) => Some((d.integer().into(), d.scale())),
        Variant::Decimal8(d) => Some((d.integer().into(), d.scale())),
        Variant::Decimal16(d) => Some((d.integer(), d.scale())),
        _ => None,
    }
}

/// The text of a string variant.
fn string_of<'a>(v: &'a Variant<'_, '_>) -> Option<&'a str> {
    match v {
        Variant::String(s) => Some(s),
        Variant::ShortString(s) => Some(s.as_str()),
        _ => None,
    }
}

/// Spark's `trimAll`: strips ASCII white space and control characters at both ends.
fn trim_all(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ' || c == '\u{7f}')
}

/// Java's `String.trim`: strips characters up to U+0020 at both ends.
fn trim_java(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

fn to_boolean(v: &Variant<'_, '_>) -> Option<bool> {
    Some(match v {
        Variant::BooleanTrue => true,
        Variant::BooleanFalse => false,
        Variant::Int8(x) => *x != 0,
        Variant::Int16(x) => *x != 0,
        Variant::Int32(x) => *x != 0,
        Variant::Int64(x) => *x != 0,
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            decimal_parts(v)?.0 != 0
        }
        // NaN != 0 is true, as in Java.
        Variant::Double(x) => *x != 0.0,
        Variant::Float(x) => *x != 0.0,
        Variant::String(_) | Variant::ShortString(_) => {
            let t = trim_all(string_of(v)?);
            let is = |words: &[&str]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
            if is(&["t", "true", "y", "yes", "1"]) {
                true
            } else if is(&["f", "false", "n", "no", "0"]) {
                false
            } else {
                return None;
            }
        }
        _ => return None,
    })
}

/// A double truncated toward zero into `min..=max` (Spark's exact numeric
/// conversion: `floor(x) <= max && ceil(x) >= min`, then a Java narrowing cast,
/// which for BIGINT admits exactly 2^63 and saturates it to `Long.MaxValue`).
fn f64_to_integral(x: f64, min: i64, max: i64) -> Option<i64> {
    if x.is_nan() {
        return None;
    }
    let t = x.trunc();
    if max == i64::MAX && t == 9_223_372_036_854_775_808.0 {
        return Some(i64::MAX);
    }
    if t < min as f64 || t > max as f64 {
        return None;
    }
    Some(t as i64)
}

/// An integral value in `min..=max`.
fn to_integral(v: &Variant<'_, '_>, min: i64, max: i64) -> Option<i64> {
    let x = match v {
        Variant::Int8(x) => i64::from(*x),
        Variant::Int16(x) => i64::from(*x),
        Variant::Int32(x) => i64::from(*x),
        Variant::Int64(x) => *x,
        Variant::BooleanTrue => 1,
        Variant::BooleanFalse => 0,
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            let (u, s) = decimal_parts(v)?;
            let q = match pow10(s.into()) {
                Some(d) => u / d,
                None => 0,
            };
            i64::try_from(q).ok()?
        }
        Variant::Double(x) => f64_to_integral(*x, min, max)?,
        Variant::Float(x) => f64_to_integral(f64::from(*x), min, max)?,
        Variant::String(_) | Variant::ShortString(_) => parse_integral(string_of(v)?)?,
        // Epoch seconds, rounded toward negative infinity.
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => t.timestamp(),
        _ => return None,
    };
    (min..=max).contains(&x).then_some(x)
}

/// Integer text: optional sign and ASCII digits, surrounding white space trimmed.
fn parse_integral(s: &str) -> Option<i64> {
    let t = trim_all(s).as_bytes();
    let (neg, digits) = match t.first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() {
        return None;
    }
    let mut acc: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        let d = i64::from(b - b'0');
        // Accumulate negatively so that i64::MIN is reachable.
        acc = acc.checked_mul(10)?.checked_sub(d)?;
    }
    if neg { Some(acc) } else { acc.checked_neg() }
}

/// `10^i` as f64 for `i` in `0..=22` (all exact).
const F64_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal as the nearest double (Java's `BigDecimal.doubleValue`).
fn decimal_to_f64(u: i128, s: u8) -> f64 {
    if u.unsigned_abs() < (1u128 << 53) && (s as usize) < F64_POW10.len() {
        // Both operands are exact, so the quotient is correctly rounded.
        return u as f64 / F64_POW10[s as usize];
    }
    format!("{u}e-{s}").parse().unwrap_or(f64::NAN)
}

/// A decimal as the nearest float (Java's `BigDecimal.floatValue`).
fn decimal_to_f32(u: i128, s: u8) -> f32 {
    if u.unsigned_abs() < (1u128 << 24) && s <= 10 {
        return u as f32 / F64_POW10[s as usize] as f32;
    }
    format!("{u}e-{s}").parse().unwrap_or(f32::NAN)
}

/// Seconds since the epoch of a TIMESTAMP as a double.
fn timestamp_seconds(v: &Variant<'_, '_>) -> Option<f64> {
    match v {
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => {
            Some(t.timestamp_micros() as f64 / 1e6)
        }
        _ => None,
    }
}

fn to_f64(v: &Variant<'_, '_>) -> Option<f64> {
    Some(match v {
        Variant::Int8(x) => f64::from(*x),
        Variant::Int16(x) => f64::from(*x),
        Variant::Int32(x) => f64::from(*x),
        Variant::Int64(x) => *x as f64,
        Variant::BooleanTrue => 1.0,
        Variant::BooleanFalse => 0.0,
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            let (u, s) = decimal_parts(v)?;
            decimal_to_f64(u, s)
        }
        Variant::Double(x) => *x,
        Variant::Float(x) => f64::from(*x),
        Variant::String(_) | Variant::ShortString(_) => {
            let t = java_float_text(string_of(v)?)?;
            match t {
                FloatText::Special(x) => x,
                FloatText::Number(n) => n.parse().ok()?,
            }
        }
        Variant::TimestampMicros(_) | Variant::TimestampNanos(_) => timestamp_seconds(v)?,
        _ => return None,
    })
}

fn to_f32(v: &Variant<'_, '_>) -> Option<f32> {
    Some(match v {
        Variant::Int8(x) => f32::from(*x),
        Variant::Int16(x) => f32::from(*x),
        Variant::Int32(x) => *x as f32,
        Variant::Int64(x) => *x as f32,
        Variant::BooleanTrue => 1.0,
        Variant::BooleanFalse => 0.0,
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            let (u, s) = decimal_parts(v)?;
            decimal_to_f32(u, s)
        }
        Variant::Double(x) => *x as f32,
        Variant::Float(x) => *x,
        Variant::String(_) | Variant::ShortString(_) => {
            let t = java_float_text(string_of(v)?)?;
            match t {
                FloatText::Special(x) => x as f32,
                FloatText::Number(n) => n.parse().ok()?,
            }
        }
        Variant::TimestampMicros(_) | Variant::TimestampNanos(_) => timestamp_seconds(v)? as f32,
        _ => return None,
    })
}

/// A floating-point string, classified.
enum FloatText<'a> {
    /// NaN or an infinity.
    Special(f64),
    /// Decimal text (without Java's type suffix) that Rust's parser accepts.
    Number(&'a str),
}

/// Java's `Double.parseDouble` syntax (decimal forms, optional `f/F/d/D` suffix,
/// `NaN`, `Infinity`) plus Spark's special values (`inf`, `+inf`, `infinity`,
/// `+infinity`, `-inf`, `-infinity`, `nan`, case-insensitive). Hexadecimal
/// floating-point literals are not supported.
fn java_float_text(s: &str) -> Option<FloatText<'_>> {
    let t = trim_java(s);
    let special = |words: &[&str]| words.iter().any(|w| t.eq_ignore_ascii_case(w));
    if special(&["inf", "+inf", "infinity", "+infinity"]) {
        return Some(FloatText::Special(f64::INFINITY));
    }
    if special(&["-inf", "-infinity"]) {
        return Some(FloatText::Special(f64::NEG_INFINITY));
    }
    if special(&["nan", "+nan", "-nan"]) {
        return Some(FloatText::Special(f64::NAN));
    }
    let body = match t.as_bytes().last()? {
        b'f' | b'F' | b'd' | b'D' => &t[..t.len() - 1],
        _ => t,
    };
    parse_decimal_text(body)?;
    Some(FloatText::Number(body))
}

/// Decimal text split into its parts: `[+-] int [. frac] [e[+-]exp]`.
struct DecimalText<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exp: i64,
}

/// Parses Java `BigDecimal` text: an optional sign, digits with an optional point
/// (at least one digit), an optional exponent. No white space.
fn parse_decimal_text(s: &str) -> Option<DecimalText<'_>> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first()? {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let digits_from =
        |start: usize| start + b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    let int_end = digits_from(i);
    let int = &b[i..int_end];
    i = int_end;
    let mut frac: &[u8] = &[];
    if b.get(i) == Some(&b'.') {
        let end = digits_from(i + 1);
        frac = &b[i + 1..end];
        i = end;
    }
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let end = digits_from(i);
        if end == i {
            return None;
        }
        for &c in &b[i..end] {
            exp = exp.saturating_mul(10).saturating_add(i64::from(c - b'0'));
        }
        // Java's BigDecimal rejects exponents beyond the int range.
        if exp > i64::from(i32::MAX) + 1 {
            return None;
        }
        if eneg {
            exp = -exp;
        }
        i = end;
    }
    (i == b.len()).then_some(DecimalText {
        neg,
        int,
        frac,
        exp,
    })
}

/// Whether `|x| < 10^precision`.
fn fits(x: i128, precision: u8) -> bool {
    let p = precision.min(38) as usize;
    x.unsigned_abs() < POW10[p].unsigned_abs()
}

/// Rounds decimal text half-up to `scale` and returns the unscaled value, or
/// `None` when it does not fit `precision`.
fn round_decimal_text(d: &DecimalText<'_>, precision: u8, scale: u8) -> Option<i128> {
    let all = || d.int.iter().chain(d.frac.iter()).map(|c| c - b'0');
    let lead = all().take_while(|&c| c == 0).count();
    let n = d.int.len() + d.frac.len() - lead;
    if n == 0 {
        return Some(0);
    }
    // value * 10^scale = D * 10^k, with D the n significant digits.
    let k = d.exp - d.frac.len() as i64 + i64::from(scale);
    let keep = n as i64 + k;
    if keep > 39 {
        return None;
    }
    let mut acc: i128 = 0;
    if k >= 0 {
        for c in all().skip(lead) {
            acc = acc.checked_mul(10)?.checked_add(i128::from(c))?;
        }
        acc = acc.checked_mul(pow10(u32::try_from(k).ok()?)?)?;
    } else {
        let kept = usize::try_from(keep.max(0)).ok()?;
        let mut sig = all().skip(lead);
        for c in sig.by_ref().take(kept) {
            acc = acc.checked_mul(10)?.checked_add(i128::from(c))?;
        }
        let round_digit = if keep >= 0 {
            sig.next().unwrap_or(0)
        } else {
            0
        };
        if round_digit >= 5 {
            acc += 1;
        }
    }
    let x = if d.neg { -acc } else { acc };
    fits(x, precision).then_some(x)
}

/// Rescales `u * 10^-s` to `scale`, rounding half-up; `None` when it does not fit.
fn rescale(u: i128, s: u8, precision: u8, scale: u8) -> Option<i128> {
    let x = if scale >= s {
        u.checked_mul(pow10(u32::from(scale - s))?)?
    } else {
        match pow10(u32::from(s - scale)) {
            Some(div) => {
                let (q, r) = (u / div, u % div);
                if r.unsigned_abs() * 2 >= div.unsigned_abs() {
                    q + u.signum()
                } else {
                    q
                }
            }
            // |u| < 2^127 < 10^39 / 2: rounds to zero.
            None => 0,
        }
    };
    fits(x, precision).then_some(x)
}

/// A double as a decimal, through its shortest decimal text (as Spark does with
/// Java's `Double.toString`).
fn f64_to_decimal(x: f64, precision: u8, scale: u8) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(x);
    round_decimal_text(&parse_decimal_text(text)?, precision, scale)
}

fn to_decimal(v: &Variant<'_, '_>, precision: u8, scale: u8) -> Option<i128> {
    match v {
        Variant::Int8(x) => rescale((*x).into(), 0, precision, scale),
        Variant::Int16(x) => rescale((*x).into(), 0, precision, scale),
        Variant::Int32(x) => rescale((*x).into(), 0, precision, scale),
        Variant::Int64(x) => rescale((*x).into(), 0, precision, scale),
        Variant::BooleanTrue => rescale(1, 0, precision, scale),
        Variant::BooleanFalse => rescale(0, 0, precision, scale),
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            let (u, s) = decimal_parts(v)?;
            rescale(u, s, precision, scale)
        }
        Variant::Double(x) => f64_to_decimal(*x, precision, scale),
        Variant::Float(x) => f64_to_decimal(f64::from(*x), precision, scale),
        Variant::String(_) | Variant::ShortString(_) => {
            let d = parse_decimal_text(trim_java(string_of(v)?))?;
            round_decimal_text(&d, precision, scale)
        }
        Variant::TimestampMicros(_) | Variant::TimestampNanos(_) => {
            f64_to_decimal(timestamp_seconds(v)?, precision, scale)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Dates and timestamps.
// ---------------------------------------------------------------------------

/// Days from 0001-01-01 (CE day 1) to 1970-01-01.
const UNIX_EPOCH_DAY_CE: i32 = 719_163;

fn days_since_epoch(d: &NaiveDate) -> i32 {
    d.num_days_from_ce() - UNIX_EPOCH_DAY_CE
}

fn naive_micros(t: &NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

/// The wall-clock time of a UTC instant in `tz`.
fn utc_to_local(utc: &NaiveDateTime, tz: &SessionTz) -> Option<NaiveDateTime> {
    let off = tz.offset_at_utc(utc).local_minus_utc();
    utc.checked_add_signed(TimeDelta::seconds(off.into()))
}

/// A wall-clock time in `tz` as a UTC instant; `None` near the ends of chrono's
/// range, where the conversion could overflow.
fn local_to_utc(local: &NaiveDateTime, tz: &SessionTz) -> Option<NaiveDateTime> {
    if local.year().abs() > 262_000 {
        return None;
    }
    Some(tz.local_to_utc(local))
}

fn to_date(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i32> {
    match v {
        Variant::Date(d) => Some(days_since_epoch(d)),
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => {
            Some(days_since_epoch(&utc_to_local(&t.naive_utc(), tz)?.date()))
        }
        Variant::TimestampNtzMicros(t) | Variant::TimestampNtzNanos(t) => {
            Some(days_since_epoch(&t.date()))
        }
        Variant::String(_) | Variant::ShortString(_) => {
            parse_date(string_of(v)?).map(|d| days_since_epoch(&d))
        }
        _ => None,
    }
}

fn to_timestamp(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
    match v {
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => Some(t.timestamp_micros()),
        Variant::TimestampNtzMicros(t) | Variant::TimestampNtzNanos(t) => {
            Some(naive_micros(&local_to_utc(t, tz)?))
        }
        Variant::Date(d) => Some(naive_micros(&local_to_utc(
            &d.and_time(chrono::NaiveTime::MIN),
            tz,
        )?)),
        Variant::Int8(x) => Some(i64::from(*x) * 1_000_000),
        Variant::Int16(x) => Some(i64::from(*x) * 1_000_000),
        Variant::Int32(x) => Some(i64::from(*x) * 1_000_000),
        Variant::Int64(x) => x.checked_mul(1_000_000),
        Variant::Decimal4(_) | Variant::Decimal8(_) | Variant::Decimal16(_) => {
            // Seconds to microseconds, truncated toward zero.
            let (u, s) = decimal_parts(v)?;
            let micros = if s <= 6 {
                u.checked_mul(pow10(u32::from(6 - s))?)?
            } else {
                match pow10(u32::from(s - 6)) {
                    Some(d) => u / d,
                    None => 0,
                }
            };
            i64::try_from(micros).ok()
        }
        Variant::Double(x) => seconds_f64_to_micros(*x),
        Variant::Float(x) => seconds_f64_to_micros(f64::from(*x)),
        Variant::String(_) | Variant::ShortString(_) => {
            let (local, zone) = parse_timestamp(string_of(v)?)?;
            let utc = match zone {
                Some(z) => local_to_utc(&local, &z)?,
                None => local_to_utc(&local, tz)?,
            };
            Some(naive_micros(&utc))
        }
        _ => None,
    }
}

fn seconds_f64_to_micros(x: f64) -> Option<i64> {
    if !x.is_finite() {
        return None;
    }
    f64_to_integral(x * 1e6, i64::MIN, i64::MAX)
}

fn to_timestamp_ntz(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
    match v {
        Variant::TimestampNtzMicros(t) | Variant::TimestampNtzNanos(t) => Some(naive_micros(t)),
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => {
            let local = utc_to_local(&t.naive_utc(), tz)?;
            Some(naive_micros(&local))
        }
        Variant::Date(d) => Some(naive_micros(&d.and_time(chrono::NaiveTime::MIN))),
        Variant::String(_) | Variant::ShortString(_) => {
            // A zone in the text is checked but ignored: the wall time is kept.
            let (local, _zone) = parse_timestamp(string_of(v)?)?;
            Some(naive_micros(&local))
        }
        _ => None,
    }
}

/// Spark's date string parsing: `[+-]yyyy[y..]`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, and
/// after the day a space or `T` followed by anything (ignored). The year has 4 to 7
/// digits, month and day 1 or 2.
fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = trim_all(s).as_bytes();
    let (sign, mut j) = match b.first()? {
        b'-' => (-1i64, 1),
        b'+' => (1, 1),
        _ => (1, 0),
    };
    let valid = |seg: usize, digits: u32| {
        if seg == 0 {
            (4..=7).contains(&digits)
        } else {
            (1..=2).contains(&digits)
        }
    };
    let mut segs = [1i64; 3];
    let (mut i, mut val, mut digits) = (0usize, 0i64, 0u32);
    while j < b.len() && b[j] != b' ' && b[j] != b'T' {
        let c = b[j];
        if i < 2 && c == b'-' {
            if !valid(i, digits) {
                return None;
            }
            segs[i] = val;
            (val, digits) = (0, 0);
            i += 1;
        } else if c.is_ascii_digit() {
            val = val * 10 + i64::from(c - b'0');
            digits += 1;
            if digits > 7 {
                return None;
            }
        } else {
            return None;
        }
        j += 1;
    }
    if !valid(i, digits) || (i < 2 && j < b.len()) {
        return None;
    }
    segs[i] = val;
    NaiveDate::from_ymd_opt(
        i32::try_from(sign * segs[0]).ok()?,
        u32::try_from(segs[1]).ok()?,
        u32::try_from(segs[2]).ok()?,
    )
}

/// Spark's timestamp string parsing:
/// `[+-]yyyy[-[m]m[-[d]d[( |T)[h]h[:[m]m[:[s]s[.fraction]]]]]][zone]`, the zone only
/// after the seconds (`Z`, `+hh:mm`, `+hhmm`, `+hh`, `UTC`, `GMT+1`, an IANA name;
/// white space before it allowed). More than 6 fraction digits are truncated.
/// Returns the wall time and the zone, if any. Time-only strings (which Spark
/// places on the current date) are rejected.
fn parse_timestamp(s: &str) -> Option<(NaiveDateTime, Option<SessionTz>)> {
    let t = trim_all(s);
    let b = t.as_bytes();
    let (sign, mut j) = match b.first()? {
        b'-' => (-1i64, 1),
        b'+' => (1, 1),
        _ => (1, 0),
    };
    let valid = |seg: usize, digits: u32| match seg {
        0 => (4..=6).contains(&digits),
        6 => true,
        _ => (1..=2).contains(&digits),
    };
    let mut segs = [1i64, 1, 1, 0, 0, 0, 0];
    let (mut i, mut val, mut digits, mut frac_digits) = (0usize, 0i64, 0u32, 0u32);
    let mut zone: Option<&str> = None;
    while j < b.len() {
        let c = b[j];
        if c.is_ascii_digit() {
            let d = i64::from(c - b'0');
            if i == 6 {
                if frac_digits < 6 {
                    val = val * 10 + d;
                    frac_digits += 1;
                }
            } else {
                if digits >= 7 {
                    return None;
                }
                val = val * 10 + d;
            }
            digits += 1;
            j += 1;
            continue;
        }
        let next = match (i, c) {
            (0 | 1, b'-') | (2, b' ' | b'T') | (3 | 4, b':') | (5, b'.') => true,
            (5 | 6, _) => false,
            _ => return None,
        };
        if !valid(i, digits) {
            return None;
        }
        segs[i] = val;
        (val, digits) = (0, 0);
        if next {
            i += 1;
            j += 1;
        } else {
            zone = Some(t[j..].trim_start());
            i = 7;
            break;
        }
    }
    if i < 7 {
        if !valid(i, digits) {
            return None;
        }
        segs[i] = val;
    }
    // `segs[6]` holds the first `frac_digits` (at most 6) fraction digits.
    let mut micros = segs[6];
    for _ in frac_digits..6 {
        micros *= 10;
    }
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(sign * segs[0]).ok()?,
        u32::try_from(segs[1]).ok()?,
        u32::try_from(segs[2]).ok()?,
    )?;
    let time = chrono::NaiveTime::from_hms_micro_opt(
        u32::try_from(segs[3]).ok()?,
        u32::try_from(segs[4]).ok()?,
        u32::try_from(segs[5]).ok()?,
        u32::try_from(micros).ok()?,
    )?;
    let zone = match zone {
        Some(z) => Some(parse_zone(z)?),
        None => None,
    };
    Some((date.and_time(time), zone))
}

/// A zone in a timestamp string. Java's `ZoneId.of` is case-sensitive; `UTC`, `Z`
/// and `GMT` and offsets (`+h`, `+hh`, `+hh:mm`, `+hhmm`, also after `UTC`/`GMT`)
/// and IANA names are accepted.
fn parse_zone(z: &str) -> Option<SessionTz> {
    if z.is_empty() {
        return None;
    }
    SessionTz::parse(z).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::json::{JsonParseOptions, JsonToVariant};
    use arrow::array::{Array, AsArray};
    use arrow::util::display::array_value_to_string;
    use chrono::{DateTime, NaiveTime, Utc};

    fn json(text: &str) -> (Vec<u8>, Vec<u8>) {
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        p.parse(text).unwrap();
        (p.metadata().to_vec(), p.value().to_vec())
    }

    fn build(f: impl FnOnce(&mut VariantBuilder)) -> (Vec<u8>, Vec<u8>) {
        let mut b = VariantBuilder::new();
        f(&mut b);
        b.finish()
    }

    fn scalar<'a>(x: impl Into<Variant<'a, 'a>>) -> (Vec<u8>, Vec<u8>) {
        let v = x.into();
        build(|b| b.append_value(v))
    }

    fn utc() -> CastOptions {
        CastOptions::default()
    }

    fn la() -> SessionTz {
        SessionTz::parse("America/Los_Angeles").unwrap()
    }

    /// Casts one value; `Ok(None)` is SQL NULL, `Ok(Some(text))` the Arrow display text.
    fn cast_with(
        mv: &(Vec<u8>, Vec<u8>),
        ty: &str,
        options: CastOptions,
    ) -> Result<Option<String>, CastError> {
        let t = SparkType::parse(ty).unwrap();
        let v = Variant::try_new(&mv.0, &mv.1).unwrap();
        let mut c = VariantCaster::new(&t, options, 1);
        c.append_variant(&v)?;
        let a = c.finish();
        assert_eq!(a.data_type(), &t.to_arrow());
        assert_eq!(a.len(), 1);
        if a.is_null(0) {
            return Ok(None);
        }
        Ok(Some(array_value_to_string(&a, 0).unwrap()))
    }

    /// Strict and safe agree on successes; on failures strict errors and safe is NULL.
    fn check(mv: &(Vec<u8>, Vec<u8>), ty: &str, tz: SessionTz, want: Option<&str>, label: &str) {
        let strict = cast_with(mv, ty, CastOptions { safe: false, tz });
        let safe = cast_with(mv, ty, CastOptions { safe: true, tz });
        match want {
            Some("<error>") => {
                assert!(
                    strict.is_err(),
                    "{label} as {ty}: expected an error, got {strict:?}"
                );
                assert_eq!(safe, Ok(None), "{label} as {ty} (safe)");
            }
            _ => {
                let want = want.map(str::to_string);
                assert_eq!(strict, Ok(want.clone()), "{label} as {ty}");
                assert_eq!(safe, Ok(want), "{label} as {ty} (safe)");
            }
        }
    }

    const ERR: Option<&str> = Some("<error>");

    /// A built value, a target type and the expected result.
    type Built = ((Vec<u8>, Vec<u8>), &'static str, Option<&'static str>);

    fn json_cases(cases: &[(&str, &str, Option<&str>)]) {
        for (input, ty, want) in cases {
            check(&json(input), ty, SessionTz::utc(), *want, input);
        }
    }

    #[test]
    fn to_integers() {
        json_cases(&[
            ("1", "int", Some("1")),
            ("127", "tinyint", Some("127")),
            ("128", "tinyint", ERR),
            ("-128", "byte", Some("-128")),
            ("-129", "byte", ERR),
            ("32767", "smallint", Some("32767")),
            ("32768", "short", ERR),
            ("2147483647", "int", Some("2147483647")),
            ("2147483648", "int", ERR),
            ("9223372036854775807", "bigint", Some("9223372036854775807")),
            ("9223372036854775808", "bigint", ERR),
            ("1.9", "int", Some("1")),
            ("-1.5", "int", Some("-1")),
            ("-0.9", "int", Some("0")),
            ("1.5e0", "int", Some("1")),
            ("-1.9e0", "long", Some("-1")),
            ("1e10", "int", ERR),
            ("1e10", "bigint", Some("10000000000")),
            ("127.9", "tinyint", Some("127")),
            ("128.0e0", "tinyint", ERR),
            ("99999999999999999999.5", "bigint", ERR),
            ("true", "int", Some("1")),
            ("false", "tinyint", Some("0")),
            ("\" 42 \"", "int", Some("42")),
            ("\"+7\"", "int", Some("7")),
            ("\"-0\"", "int", Some("0")),
            ("\"007\"", "smallint", Some("7")),
            ("\"4.2\"", "int", ERR),
            ("\"1e2\"", "int", ERR),
            ("\"\"", "int", ERR),
            ("\"-\"", "int", ERR),
            ("\"x\"", "int", ERR),
            ("\"300\"", "tinyint", ERR),
            (
                "\"-9223372036854775808\"",
                "bigint",
                Some("-9223372036854775808"),
            ),
            ("\"9223372036854775808\"", "bigint", ERR),
            ("null", "int", None),
            ("[1]", "int", ERR),
            ("{\"a\":1}", "int", ERR),
        ]);
        let cases: Vec<Built> = vec![
            (scalar(f64::NAN), "int", ERR),
            (scalar(f64::INFINITY), "bigint", ERR),
            (scalar(2147483647.9f64), "int", Some("2147483647")),
            (scalar(-2147483648.9f64), "int", Some("-2147483648")),
            (
                scalar(9_223_372_036_854_775_808.0f64),
                "bigint",
                Some("9223372036854775807"),
            ),
            (scalar(1.5e19f64), "bigint", ERR),
            (scalar(3.7f32), "int", Some("3")),
            (
                scalar(NaiveDate::from_ymd_opt(2024, 1, 15).unwrap()),
                "int",
                ERR,
            ),
            (scalar(ts_utc(-1_500_000)), "bigint", Some("-2")),
            (
                scalar(ts_utc(1_705_314_030_123_000)),
                "bigint",
                Some("1705314030"),
            ),
            (
                scalar(ts_utc(1_705_314_030_123_000)),
                "int",
                Some("1705314030"),
            ),
            (scalar(ts_utc(1_705_314_030_123_000)), "smallint", ERR),
            (scalar(ntz(2024, 1, 15, 0)), "bigint", ERR),
            (scalar(&b"ab"[..]), "int", ERR),
        ];
        for (mv, ty, want) in cases {
            check(&mv, ty, SessionTz::utc(), want, "built");
        }
    }

    fn ts_utc(micros: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_micros(micros).unwrap()
    }

    fn ntz(y: i32, m: u32, d: u32, micros_of_day: i64) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_time(NaiveTime::MIN)
            + TimeDelta::microseconds(micros_of_day)
    }

    #[test]
    fn to_floats() {
        json_cases(&[
            ("1", "double", Some("1.0")),
            ("1.5", "double", Some("1.5")),
            ("0.1", "float", Some("0.1")),
            ("1e39", "float", Some("inf")),
            ("-1e39", "float", Some("-inf")),
            ("1e308", "double", Some("1e308")),
            ("true", "double", Some("1.0")),
            ("false", "float", Some("0.0")),
            ("\"1e2\"", "double", Some("100.0")),
            ("\" 2.5 \"", "double", Some("2.5")),
            ("\"NaN\"", "double", Some("NaN")),
            ("\"Infinity\"", "double", Some("inf")),
            ("\"-Infinity\"", "double", Some("-inf")),
            ("\"+Infinity\"", "double", Some("inf")),
            ("\"inf\"", "double", Some("inf")),
            ("\"-INF\"", "float", Some("-inf")),
            ("\"nan\"", "float", Some("NaN")),
            ("\"1.5d\"", "double", Some("1.5")),
            ("\"1.5f\"", "float", Some("1.5")),
            ("\".5\"", "double", Some("0.5")),
            ("\"5.\"", "double", Some("5.0")),
            ("\"1e400\"", "double", Some("inf")),
            ("\"abc\"", "double", ERR),
            ("\"1e\"", "double", ERR),
            ("\"0x10\"", "double", ERR),
            ("\"\"", "double", ERR),
            ("[1]", "double", ERR),
            ("null", "double", None),
            (
                "123456789012345678901234567890.123",
                "double",
                Some("1.2345678901234568e29"),
            ),
        ]);
        check(
            &scalar(ts_utc(1_500_000)),
            "double",
            SessionTz::utc(),
            Some("1.5"),
            "ts",
        );
        check(
            &scalar(ts_utc(-1_500_000)),
            "float",
            SessionTz::utc(),
            Some("-1.5"),
            "ts",
        );
        check(
            &scalar(NaiveDate::from_ymd_opt(2024, 1, 1).unwrap()),
            "double",
            SessionTz::utc(),
            ERR,
            "date",
        );
        check(
            &scalar(1e39f64),
            "float",
            SessionTz::utc(),
            Some("inf"),
            "double",
        );
        check(
            &scalar(0.1f32),
            "double",
            SessionTz::utc(),
            Some("0.10000000149011612"),
            "float",
        );
        check(
            &scalar(i64::MAX),
            "float",
            SessionTz::utc(),
            Some("9.223372e18"),
            "long",
        );
    }

    #[test]
    fn to_decimals() {
        json_cases(&[
            ("1.005", "decimal(5,2)", Some("1.01")),
            ("-1.005", "decimal(5,2)", Some("-1.01")),
            ("1.004", "decimal(5,2)", Some("1.00")),
            ("0.5", "decimal(1,0)", Some("1")),
            ("-0.5", "decimal(1,0)", Some("-1")),
            ("0.4", "decimal(1,0)", Some("0")),
            ("1.5e-3", "decimal(5,2)", Some("0.00")),
            ("1.5e-2", "decimal(5,2)", Some("0.02")),
            ("1", "decimal(5,2)", Some("1.00")),
            ("123", "decimal(4,2)", ERR),
            ("99.995", "decimal(4,2)", ERR),
            ("99.994", "decimal(4,2)", Some("99.99")),
            (
                "9223372036854775808",
                "decimal(19,0)",
                Some("9223372036854775808"),
            ),
            ("9223372036854775808", "decimal(18,0)", ERR),
            ("1e3", "decimal(10,0)", Some("1000")),
            ("1e300", "decimal(38,0)", ERR),
            ("true", "decimal(3,1)", Some("1.0")),
            ("true", "decimal(1,1)", ERR),
            ("false", "decimal(1,1)", Some("0.0")),
            ("\"1.005\"", "decimal(5,2)", Some("1.01")),
            ("\" 12.5e1 \"", "decimal(5,1)", Some("125.0")),
            ("\"-1.5E-3\"", "decimal(5,3)", Some("-0.002")),
            (
                "\"0.0000000000000000000000000000000000000000005\"",
                "decimal(38,10)",
                Some("0.0000000000"),
            ),
            (
                "\"12345678901234567890123456789012345678901234567890e-30\"",
                "decimal(38,10)",
                Some("12345678901234567890.1234567890"),
            ),
            ("\"0e999\"", "decimal(5,2)", Some("0.00")),
            ("\"1e99999999999\"", "decimal(5,2)", ERR),
            ("\"NaN\"", "decimal(5,2)", ERR),
            ("\"abc\"", "decimal(5,2)", ERR),
            ("\"1.5d\"", "decimal(5,2)", ERR),
            ("\".5\"", "decimal(5,2)", Some("0.50")),
            ("{}", "decimal(5,2)", ERR),
            ("null", "decimal(5,2)", None),
        ]);
        let built: Vec<Built> = vec![
            (scalar(f64::NAN), "decimal(5,2)", ERR),
            (scalar(f64::INFINITY), "decimal(5,2)", ERR),
            (scalar(0.1f64), "decimal(5,2)", Some("0.10")),
            (scalar(0.125f64), "decimal(5,2)", Some("0.13")),
            (
                scalar(0.1f32),
                "decimal(20,18)",
                Some("0.100000001490116120"),
            ),
            (scalar(ts_utc(1_500_000)), "decimal(5,2)", Some("1.50")),
            (
                scalar(parquet_variant::VariantDecimal8::try_new(12345, 10).unwrap()),
                "decimal(38,38)",
                Some("0.00000123450000000000000000000000000000"),
            ),
        ];
        for (mv, ty, want) in built {
            check(&mv, ty, SessionTz::utc(), want, "built");
        }
    }

    #[test]
    fn to_booleans() {
        json_cases(&[
            ("true", "boolean", Some("true")),
            ("false", "boolean", Some("false")),
            ("1", "boolean", Some("true")),
            ("0", "boolean", Some("false")),
            ("-5", "boolean", Some("true")),
            ("0.0", "boolean", Some("false")),
            ("0.001", "boolean", Some("true")),
            ("0e0", "boolean", Some("false")),
            ("2.5e0", "boolean", Some("true")),
            ("\"t\"", "boolean", Some("true")),
            ("\" TRUE \"", "boolean", Some("true")),
            ("\"Yes\"", "boolean", Some("true")),
            ("\"y\"", "boolean", Some("true")),
            ("\"1\"", "boolean", Some("true")),
            ("\"f\"", "boolean", Some("false")),
            ("\"False\"", "boolean", Some("false")),
            ("\"NO\"", "boolean", Some("false")),
            ("\"n\"", "boolean", Some("false")),
            ("\"0\"", "boolean", Some("false")),
            ("\"2\"", "boolean", ERR),
            ("\"maybe\"", "boolean", ERR),
            ("[]", "boolean", ERR),
            ("null", "boolean", None),
        ]);
        check(
            &scalar(f64::NAN),
            "boolean",
            SessionTz::utc(),
            Some("true"),
            "nan",
        );
        check(&scalar(ts_utc(0)), "boolean", SessionTz::utc(), ERR, "ts");
        check(
            &scalar(NaiveDate::from_ymd_opt(2024, 1, 1).unwrap()),
            "boolean",
            SessionTz::utc(),
            ERR,
            "date",
        );
    }

    #[test]
    fn to_strings_and_binary() {
        json_cases(&[
            ("\"abc\"", "string", Some("abc")),
            ("1", "string", Some("1")),
            ("1.50", "string", Some("1.5")),
            ("1e3", "string", Some("1000.0")),
            ("true", "string", Some("true")),
            (
                "{\"b\":1,\"a\":\"x\"}",
                "string",
                Some("{\"a\":\"x\",\"b\":1}"),
            ),
            ("[1,\"a\",null]", "string", Some("[1,\"a\",null]")),
            ("null", "string", None),
            ("\"abc\"", "binary", Some("616263")),
            ("1", "binary", ERR),
            ("true", "binary", ERR),
            ("[]", "binary", ERR),
            ("null", "binary", None),
        ]);
        check(
            &scalar(&b"\x01\x02"[..]),
            "binary",
            SessionTz::utc(),
            Some("0102"),
            "binary",
        );
        check(
            &scalar(ts_utc(1_705_314_030_123_000)),
            "string",
            SessionTz::utc(),
            Some("2024-01-15 10:20:30.123"),
            "ts",
        );
        check(
            &scalar(ts_utc(1_705_314_030_123_000)),
            "string",
            la(),
            Some("2024-01-15 02:20:30.123"),
            "ts la",
        );
    }

    #[test]
    fn to_dates() {
        json_cases(&[
            ("\"2024-01-15\"", "date", Some("2024-01-15")),
            ("\"2024-1-5\"", "date", Some("2024-01-05")),
            ("\" 2024-01-15 \"", "date", Some("2024-01-15")),
            ("\"2024-01-15 10:00:00\"", "date", Some("2024-01-15")),
            ("\"2024-01-15T10:00:00\"", "date", Some("2024-01-15")),
            ("\"2024-01-15Tjunk\"", "date", Some("2024-01-15")),
            ("\"2024-01\"", "date", Some("2024-01-01")),
            ("\"2024\"", "date", Some("2024-01-01")),
            ("\"2024-02-29\"", "date", Some("2024-02-29")),
            ("\"2024-02-30\"", "date", ERR),
            ("\"2023-02-29\"", "date", ERR),
            ("\"20240115\"", "date", ERR),
            ("\"2024-01-15x\"", "date", ERR),
            ("\"2024-001-15\"", "date", ERR),
            ("\"24-01-15\"", "date", ERR),
            ("\"2024-\"", "date", ERR),
            ("\"2024 x\"", "date", ERR),
            ("\"\"", "date", ERR),
            ("1", "date", ERR),
            ("1.5", "date", ERR),
            ("true", "date", ERR),
            ("null", "date", None),
        ]);
        let d = NaiveDate::from_ymd_opt(2024, 1, 15).unwrap();
        check(
            &scalar(d),
            "date",
            SessionTz::utc(),
            Some("2024-01-15"),
            "date",
        );
        // 2024-01-15 05:00 UTC is still Jan 14 in Los Angeles.
        let t = ts_utc(1_705_294_800_000_000);
        check(
            &scalar(t),
            "date",
            SessionTz::utc(),
            Some("2024-01-15"),
            "ts",
        );
        check(&scalar(t), "date", la(), Some("2024-01-14"), "ts la");
        check(
            &scalar(ntz(2024, 1, 15, 86_399_000_000)),
            "date",
            la(),
            Some("2024-01-15"),
            "ntz",
        );
        check(
            &scalar(ntz(1969, 12, 31, 1)),
            "date",
            SessionTz::utc(),
            Some("1969-12-31"),
            "ntz neg",
        );
    }

    #[test]
    fn to_timestamps() {
        let u = SessionTz::utc();
        let cases: Vec<(&str, SessionTz, Option<&str>)> = vec![
            ("\"2024-01-15 10:20:30\"", u, Some("2024-01-15T10:20:30Z")),
            (
                "\"2024-01-15T10:20:30.123\"",
                u,
                Some("2024-01-15T10:20:30.123Z"),
            ),
            (
                "\"2024-01-15 10:20:30\"",
                la(),
                Some("2024-01-15T18:20:30Z"),
            ),
            (
                "\"2024-01-15 10:20:30Z\"",
                la(),
                Some("2024-01-15T10:20:30Z"),
            ),
            (
                "\"2024-01-15T10:20:30+02:00\"",
                u,
                Some("2024-01-15T08:20:30Z"),
            ),
            (
                "\"2024-01-15T10:20:30-0130\"",
                u,
                Some("2024-01-15T11:50:30Z"),
            ),
            (
                "\"2024-01-15T10:20:30.5+02\"",
                u,
                Some("2024-01-15T08:20:30.500Z"),
            ),
            (
                "\"2024-01-15 10:20:30 UTC\"",
                la(),
                Some("2024-01-15T10:20:30Z"),
            ),
            (
                "\"2024-01-15 10:20:30 America/Los_Angeles\"",
                u,
                Some("2024-01-15T18:20:30Z"),
            ),
            (
                "\"2024-01-15 10:20:30.123456789\"",
                u,
                Some("2024-01-15T10:20:30.123456Z"),
            ),
            ("\"2024-01-15 10:20:30.\"", u, Some("2024-01-15T10:20:30Z")),
            ("\"2024-01-15 1:2:3\"", u, Some("2024-01-15T01:02:03Z")),
            ("\"2024-01-15 10:20\"", u, Some("2024-01-15T10:20:00Z")),
            ("\"2024-01-15T10\"", u, Some("2024-01-15T10:00:00Z")),
            ("\"2024-01-15\"", la(), Some("2024-01-15T08:00:00Z")),
            ("\"2024-1-5\"", u, Some("2024-01-05T00:00:00Z")),
            ("\"2024\"", u, Some("2024-01-01T00:00:00Z")),
            ("\"2024-01-15T\"", u, ERR),
            ("\"2024-01-15 25:00:00\"", u, ERR),
            ("\"2024-02-30 10:00:00\"", u, ERR),
            ("\"2024-01-15 10:20:30 Mars/Base\"", u, ERR),
            ("\"2024-01-15 10:20Z\"", u, ERR),
            ("\"20240115\"", u, ERR),
            ("\"10:20:30\"", u, ERR),
            ("\"x\"", u, ERR),
            ("1", u, Some("1970-01-01T00:00:01Z")),
            ("1.5", u, Some("1970-01-01T00:00:01.500Z")),
            ("-1.5", u, Some("1969-12-31T23:59:58.500Z")),
            ("1.5e0", u, Some("1970-01-01T00:00:01.500Z")),
            ("1.0000005", u, Some("1970-01-01T00:00:01Z")),
            ("9223372036854775807", u, ERR),
            ("1e300", u, ERR),
            ("true", u, ERR),
            ("[1]", u, ERR),
            ("null", u, None),
        ];
        for (input, tz, want) in cases {
            check(&json(input), "timestamp", tz, want, input);
        }
        let t = ts_utc(1_705_314_030_123_456);
        check(
            &scalar(t),
            "timestamp",
            la(),
            Some("2024-01-15T10:20:30.123456Z"),
            "ts",
        );
        check(
            &scalar(ntz(2024, 1, 15, 0)),
            "timestamp",
            la(),
            Some("2024-01-15T08:00:00Z"),
            "ntz",
        );
        check(
            &scalar(NaiveDate::from_ymd_opt(2024, 7, 1).unwrap()),
            "timestamp",
            la(),
            Some("2024-07-01T07:00:00Z"),
            "date",
        );
        check(&scalar(f64::NAN), "timestamp", u, ERR, "nan");
        check(
            &scalar(1.5f32),
            "timestamp",
            u,
            Some("1970-01-01T00:00:01.500Z"),
            "float",
        );
    }

    #[test]
    fn to_timestamp_ntz() {
        let u = SessionTz::utc();
        let cases: Vec<(&str, SessionTz, Option<&str>)> = vec![
            ("\"2024-01-15 10:20:30\"", la(), Some("2024-01-15T10:20:30")),
            (
                "\"2024-01-15T10:20:30.5\"",
                u,
                Some("2024-01-15T10:20:30.500"),
            ),
            (
                "\"2024-01-15 10:20:30+02:00\"",
                u,
                Some("2024-01-15T10:20:30"),
            ),
            ("\"2024-01-15 10:20:30 Mars/Base\"", u, ERR),
            ("\"2024-01-15\"", la(), Some("2024-01-15T00:00:00")),
            ("\"2024-02-30\"", u, ERR),
            ("1", u, ERR),
            ("1.5", u, ERR),
            ("1e0", u, ERR),
            ("true", u, ERR),
            ("null", u, None),
        ];
        for (input, tz, want) in cases {
            check(&json(input), "timestamp_ntz", tz, want, input);
        }
        check(
            &scalar(ntz(2024, 1, 15, 1)),
            "timestamp_ntz",
            la(),
            Some("2024-01-15T00:00:00.000001"),
            "ntz",
        );
        let t = ts_utc(1_705_314_030_000_000);
        check(
            &scalar(t),
            "timestamp_ntz",
            u,
            Some("2024-01-15T10:20:30"),
            "ts",
        );
        check(
            &scalar(t),
            "timestamp_ntz",
            la(),
            Some("2024-01-15T02:20:30"),
            "ts la",
        );
        check(
            &scalar(NaiveDate::from_ymd_opt(2024, 1, 15).unwrap()),
            "timestamp_ntz",
            la(),
            Some("2024-01-15T00:00:00"),
            "date",
        );
    }

    #[test]
    fn error_messages() {
        let cases = [
            ("\"x\"", "int", "`\"x\"`", "\"INT\""),
            ("128", "tinyint", "`128`", "\"TINYINT\""),
            ("1.5", "date", "`1.5`", "\"DATE\""),
            ("{\"a\":1}", "array<int>", "`{\"a\":1}`", "\"ARRAY<INT>\""),
            ("[1,\"x\"]", "array<int>", "`\"x\"`", "\"INT\""),
            ("{\"a\":\"x\"}", "struct<a:int>", "`\"x\"`", "\"INT\""),
            (
                "{\"a\":[true,\"q\"]}",
                "map<string,array<boolean>>",
                "`\"q\"`",
                "\"BOOLEAN\"",
            ),
            ("1", "decimal(5,2)", "", ""),
            ("123456", "decimal(5,2)", "`123456`", "\"DECIMAL(5,2)\""),
        ];
        for (input, ty, value, target) in cases {
            let r = cast_with(&json(input), ty, utc());
            if value.is_empty() {
                assert!(r.is_ok());
                continue;
            }
            let msg = r.expect_err(input).to_string();
            assert_eq!(
                msg,
                format!(
                    "[INVALID_VARIANT_CAST] The variant value {value} cannot be cast into `{target}`."
                ),
                "{input} as {ty}"
            );
        }
        let e = cast_with(&json("\"x\""), "int", utc()).unwrap_err();
        assert_eq!(
            e,
            CastError {
                value: "\"x\"".into(),
                target: "INT".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "[INVALID_VARIANT_CAST] The variant value `\"x\"` cannot be cast into `\"INT\"`."
        );
        // Timestamps in the message print with the session offset, as to_json does.
        let e = cast_with(
            &scalar(ts_utc(0)),
            "date",
            CastOptions {
                safe: false,
                tz: la(),
            },
        );
        assert!(e.is_ok());
        let e = cast_with(
            &scalar(ts_utc(0)),
            "boolean",
            CastOptions {
                safe: false,
                tz: la(),
            },
        )
        .unwrap_err();
        assert_eq!(e.value, "\"1969-12-31 16:00:00-08:00\"");
    }

    fn cast_many(inputs: &[&str], ty: &str, safe: bool) -> Result<ArrayRef, CastError> {
        let t = SparkType::parse(ty).unwrap();
        let mut c = VariantCaster::new(
            &t,
            CastOptions {
                safe,
                tz: SessionTz::utc(),
            },
            inputs.len(),
        );
        for input in inputs {
            if *input == "SQLNULL" {
                c.append_null();
                continue;
            }
            let mv = json(input);
            c.append_variant(&Variant::try_new(&mv.0, &mv.1).unwrap())?;
        }
        let a = c.finish();
        assert_eq!(a.data_type(), &t.to_arrow());
        assert_eq!(a.len(), inputs.len());
        Ok(a)
    }

    fn show(a: &ArrayRef) -> Vec<String> {
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    "NULL".to_string()
                } else {
                    array_value_to_string(a, i).unwrap()
                }
            })
            .collect()
    }

    #[test]
    fn arrays() {
        let a = cast_many(
            &["[1,\"2\",null]", "[]", "null", "SQLNULL", "[3.9]"],
            "array<int>",
            false,
        )
        .unwrap();
        let l = a.as_list::<i32>();
        assert_eq!(show(&a), ["[1, 2, ]", "[]", "NULL", "NULL", "[3]"]);
        let values = l.values().as_primitive::<arrow::datatypes::Int32Type>();
        assert!(values.is_null(2));
        assert_eq!(values.len(), 4);
        // Strict: one bad element fails the whole value.
        let e = cast_many(&["[1,\"x\"]"], "array<int>", false).unwrap_err();
        assert_eq!((e.value.as_str(), e.target.as_str()), ("\"x\"", "INT"));
        let e = cast_many(&["5"], "array<int>", false).unwrap_err();
        assert_eq!((e.value.as_str(), e.target.as_str()), ("5", "ARRAY<INT>"));
        // Safe: only the element is NULL; a non-array is a NULL array.
        let a = cast_many(
            &["[1,\"x\",3]", "5", "{\"a\":1}", "[[1],[\"y\",2],3]"],
            "array<int>",
            true,
        );
        let a = a.unwrap();
        assert_eq!(show(&a)[..3], ["[1, , 3]", "NULL", "NULL"]);
        let a = cast_many(&["[[1],[\"y\",2],3]"], "array<array<int>>", true).unwrap();
        assert_eq!(show(&a), ["[[1], [, 2], ]"]);
        assert!(a.as_list::<i32>().value(0).as_list::<i32>().is_null(2));
        let a = cast_many(&["[\"a\",{\"b\":[1]},1.5]"], "array<string>", false).unwrap();
        assert_eq!(show(&a), ["[a, {\"b\":[1]}, 1.5]"]);
    }

    #[test]
    fn structs() {
        let ty = "struct<a:int,b:string>";
        let a = cast_many(
            &[
                "{\"a\":1,\"b\":\"y\",\"c\":true}",
                "{\"b\":{\"x\":[1]}}",
                "{}",
                "null",
                "SQLNULL",
            ],
            ty,
            false,
        )
        .unwrap();
        assert_eq!(
            show(&a),
            [
                "{a: 1, b: y}",
                "{a: , b: {\"x\":[1]}}",
                "{a: , b: }",
                "NULL",
                "NULL"
            ]
        );
        let e = cast_many(&["{\"a\":\"x\",\"b\":\"y\"}"], ty, false).unwrap_err();
        assert_eq!((e.value.as_str(), e.target.as_str()), ("\"x\"", "INT"));
        let e = cast_many(&["[1]"], ty, false).unwrap_err();
        assert_eq!(e.target, "STRUCT<a: INT, b: STRING>");
        let a = cast_many(&["{\"a\":\"x\",\"b\":\"y\"}", "[1]", "1"], ty, true).unwrap();
        assert_eq!(show(&a), ["{a: , b: y}", "NULL", "NULL"]);
        let s = a.as_struct();
        assert!(s.is_valid(0) && s.column(0).is_null(0) && s.is_null(1));
        // Case-sensitive exact matching, non-ASCII names, quoted names.
        assert!(SparkType::parse("struct<é:int>").is_err());
        let a = cast_many(
            &["{\"A\":1,\"a\":2,\"é\":3,\"x y\":4}"],
            "struct<a:int,A:int,`é`:int,`x y`:int,B:int>",
            false,
        )
        .unwrap();
        assert_eq!(show(&a), ["{a: 2, A: 1, é: 3, x y: 4, B: }"]);
        // Empty struct.
        let a = cast_many(&["{\"a\":1}", "1"], "struct<>", true).unwrap();
        assert_eq!((a.is_null(0), a.is_null(1)), (false, true));
    }

    #[test]
    fn maps() {
        let ty = "map<string,int>";
        let a = cast_many(
            &["{\"b\":1,\"a\":\"2\",\"c\":null}", "{}", "null"],
            ty,
            false,
        )
        .unwrap();
        assert_eq!(show(&a), ["{a: 2, b: 1, c: }", "{}", "NULL"]);
        let e = cast_many(&["[1]"], ty, false).unwrap_err();
        assert_eq!(e.target, "MAP<STRING, INT>");
        let e = cast_many(&["{\"a\":\"x\"}"], ty, false).unwrap_err();
        assert_eq!(e.target, "INT");
        let a = cast_many(&["{\"a\":\"x\",\"b\":2}", "\"s\""], ty, true).unwrap();
        assert_eq!(show(&a), ["{a: , b: 2}", "NULL"]);
        let a = cast_many(
            &["{\"a\":{\"b\":[1,2]}}"],
            "map<string,map<string,array<long>>>",
            false,
        )
        .unwrap();
        assert_eq!(show(&a), ["{a: {b: [1, 2]}}"]);
    }

    fn variant_at(a: &ArrayRef, i: usize) -> (Vec<u8>, Vec<u8>) {
        let s = a.as_struct();
        (
            s.column(0).as_binary_view().value(i).to_vec(),
            s.column(1).as_binary_view().value(i).to_vec(),
        )
    }

    #[test]
    fn variant_targets() {
        let a = cast_many(
            &["[1,null,{\"b\":\"x\",\"a\":[2]},\"s\"]", "null", "SQLNULL"],
            "array<variant>",
            false,
        )
        .unwrap();
        let l = a.as_list::<i32>();
        // A top-level variant null is SQL NULL for an array target.
        assert!(l.is_valid(0) && l.is_null(1) && l.is_null(2));
        let first = l.value(0);
        let DataType::List(item) = a.data_type() else {
            panic!()
        };
        assert!(crate::array::is_variant_field(item));
        let got: Vec<String> = (0..4)
            .map(|i| {
                let (m, v) = variant_at(&first, i);
                to_json_string(&Variant::try_new(&m, &v).unwrap(), &SessionTz::utc())
            })
            .collect();
        assert_eq!(got, ["1", "null", "{\"a\":[2],\"b\":\"x\"}", "\"s\""]);
        // The element variant null is a variant null, not SQL NULL.
        assert!(first.is_valid(1));
        let a = cast_many(
            &["{\"a\":null,\"v\":{\"x\":1}}"],
            "struct<a:variant,v:variant,m:variant>",
            false,
        )
        .unwrap();
        let s = a.as_struct();
        assert!(s.column(0).is_valid(0) && s.column(1).is_valid(0) && s.column(2).is_null(0));
        let (m, v) = variant_at(s.column(1), 0);
        assert_eq!(
            to_json_string(&Variant::try_new(&m, &v).unwrap(), &SessionTz::utc()),
            "{\"x\":1}"
        );
        let (m, v) = variant_at(s.column(0), 0);
        assert_eq!(Variant::try_new(&m, &v).unwrap(), Variant::Null);
        // A top-level variant target.
        let a = cast_many(&["null", "1.5"], "variant", false).unwrap();
        assert!(a.is_valid(0));
        let (m, v) = variant_at(&a, 1);
        assert_eq!(
            to_json_string(&Variant::try_new(&m, &v).unwrap(), &SessionTz::utc()),
            "1.5"
        );
    }

    #[test]
    fn reuse_after_finish() {
        let t = SparkType::parse("array<struct<a:int>>").unwrap();
        let mut c = VariantCaster::new(&t, utc(), 2);
        for round in 0..2 {
            let mv = json("[{\"a\":1},{\"a\":\"2\"}]");
            c.append_variant(&Variant::try_new(&mv.0, &mv.1).unwrap())
                .unwrap();
            c.append_null();
            assert_eq!(c.len(), 2);
            let a = c.finish();
            assert_eq!(show(&a), ["[{a: 1}, {a: 2}]", "NULL"], "round {round}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn decimal_helpers() {
        assert_eq!(rescale(1005, 3, 5, 2), Some(101));
        assert_eq!(rescale(-1005, 3, 5, 2), Some(-101));
        assert_eq!(rescale(i128::MAX, 0, 38, 0), None);
        assert_eq!(rescale(1, 0, 38, 38), None);
        assert_eq!(rescale(5, 39, 38, 0), Some(0));
        assert_eq!(parse_integral("  -12 "), Some(-12));
        assert_eq!(parse_integral("1 2"), None);
        assert!(parse_decimal_text("1.2.3").is_none());
        assert!(parse_decimal_text("e5").is_none());
        assert!(parse_decimal_text("+.5e-1").is_some());
        assert_eq!(
            decimal_to_f64(12345678901234567890123456789, 10),
            1_234_567_890_123_456_789.012_345_678_9
        );
        assert_eq!(decimal_to_f32(1, 1), 0.1f32);
    }
}
