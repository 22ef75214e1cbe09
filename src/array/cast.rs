//! [`VariantCaster`]: Spark's cast matrix applied to whole columns. It converts
//! Variant values into typed Arrow arrays of one target [`SparkType`]
//! (element-wise into `array<T>`, `struct<..>` and `map<string,T>`), using the
//! per-value rules of [`crate::variant::cast`] and [`crate::variant::datetime`].
use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder,
    Float32Builder, Float64Builder, Int8Builder, Int16Builder, Int32Builder, Int64Builder,
    ListArray, MapArray, NullBufferBuilder, StringBuilder, StringViewBuilder, StructArray,
    TimestampMicrosecondBuilder,
};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, FieldRef, Fields};
use parquet_variant::{Variant, VariantBuilder, VariantObject};

use super::VariantColumnBuilder;
use crate::variant::cast::{
    CastError, CastOptions, f64_to_decimal, to_boolean, to_decimal, to_f32, to_f64, to_integral,
};
use crate::variant::datetime::{
    temporal_to_date, temporal_to_timestamp, temporal_to_timestamp_ntz, to_date, to_timestamp,
    to_timestamp_ntz,
};
use crate::variant::encoding::{
    EMPTY_METADATA, Temporal, VARIANT_NULL, read_int, read_temporal, string_bytes,
};
use crate::variant::format::{
    to_json_string, write_cast_string, write_json_checked, write_temporal,
};
use crate::variant::types::SparkType;
/// Accumulates converted values for one target type and produces an Arrow array
/// of type [`SparkType::to_arrow`].
///
/// ```
/// use arrow::array::{Array, AsArray};
/// use arrow::datatypes::Int32Type;
/// use df_variant::array::cast::VariantCaster;
/// use df_variant::variant::cast::CastOptions;
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
    /// target, an object or array into a STRING target (its JSON, written
    /// straight from the bytes by [`write_json_checked`]), an integer into an
    /// integer target that holds it. `value` must be bytes checked by
    /// [`crate::variant::validate`] against the row's dictionary `dict`. Returns
    /// `false` (appending nothing) when the general path is needed.
    ///
    /// Dates and microsecond timestamps always take this path (read by
    /// [`read_temporal`], never by parquet-variant, whose chrono values stop at the
    /// years ±262,143), so `value` may hold the ones
    /// [`crate::variant::validate::check_value_wide`] accepts.
    ///
    /// # Errors
    /// [`CastError`] when a date or timestamp cannot be converted and the options
    /// are not `safe`.
    #[inline]
    pub fn try_append_raw(&mut self, value: &[u8], dict: &[&str]) -> Result<bool, CastError> {
        if let Some(t) = read_temporal(value) {
            return self.append_temporal(t, value).map(|()| true);
        }
        Ok(self.try_append_raw_common(value, dict))
    }

    /// Strings, integers, and objects and arrays to STRING (see [`Self::try_append_raw`]).
    #[inline]
    fn try_append_raw_common(&mut self, value: &[u8], dict: &[&str]) -> bool {
        let Some(&header) = value.first() else {
            return false;
        };
        let string = string_bytes(value);
        let int = || read_int(value);
        match &mut self.builder {
            Builder::Utf8 { builder, scratch } => {
                match string.and_then(|s| std::str::from_utf8(s).ok()) {
                    Some(s) => {
                        builder.append_value(s);
                        true
                    }
                    None if matches!(header & 0x03, 2 | 3) => {
                        scratch.clear();
                        let written = write_json_checked(dict, value, &self.options.tz, scratch);
                        if written {
                            builder.append_value(scratch.as_str());
                        }
                        written
                    }
                    None => false,
                }
            }
            Builder::Int64(b) => int().map(|v| b.append_value(v)).is_some(),
            Builder::Int32(b) => int()
                .and_then(|v| i32::try_from(v).ok())
                .map(|v| b.append_value(v))
                .is_some(),
            _ => false,
        }
    }

    /// Spark's casts of a variant date or microsecond timestamp, over every value a
    /// Variant holds; `value` is its bytes (for a VARIANT target and the error text).
    fn append_temporal(&mut self, t: Temporal, value: &[u8]) -> Result<(), CastError> {
        let tz = self.options.tz;
        // Seconds since the epoch, for numeric targets (a DATE has none: Spark fails).
        let micros = match t {
            Temporal::Timestamp(utc) => Some(utc),
            Temporal::Date(_) | Temporal::TimestampNtz(_) => None,
        };
        let ok = match &mut self.builder {
            Builder::Date(b) => push(b, temporal_to_date(t, &tz)),
            Builder::Timestamp(b) => push(b, temporal_to_timestamp(t, &tz)),
            Builder::TimestampNtz(b) => push(b, temporal_to_timestamp_ntz(t, &tz)),
            Builder::Utf8 { builder, scratch } => {
                scratch.clear();
                write_temporal(t, &tz, false, scratch);
                builder.append_value(scratch.as_str());
                true
            }
            Builder::Variant(b) => {
                b.append(EMPTY_METADATA, value);
                true
            }
            Builder::Int8(b) => push(b, micros.and_then(|m| integral_seconds(m).ok())),
            Builder::Int16(b) => push(b, micros.and_then(|m| integral_seconds(m).ok())),
            Builder::Int32(b) => push(b, micros.and_then(|m| integral_seconds(m).ok())),
            Builder::Int64(b) => push(b, micros.map(|m| m.div_euclid(1_000_000))),
            Builder::Float64(b) => push(b, micros.map(|m| m as f64 / 1e6)),
            Builder::Float32(b) => push(b, micros.map(|m| (m as f64 / 1e6) as f32)),
            Builder::Decimal {
                builder,
                precision,
                scale,
            } => push(
                builder,
                micros.and_then(|m| f64_to_decimal(m as f64 / 1e6, *precision, *scale)),
            ),
            Builder::Boolean(_)
            | Builder::Binary(_)
            | Builder::List { .. }
            | Builder::Struct { .. }
            | Builder::Map { .. } => false,
        };
        if ok {
            return Ok(());
        }
        if self.options.safe {
            self.append_null();
            return Ok(());
        }
        let mut text = String::new();
        write_temporal(t, &tz, true, &mut text);
        Err(CastError {
            value: text,
            target: self.target.sql_name(),
        })
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
                    Arc::clone(field),
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
                    Arc::clone(entries),
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

/// Whole seconds (rounded toward negative infinity) of a TIMESTAMP, for an
/// integer target of type `T`.
fn integral_seconds<T: TryFrom<i64>>(micros: i64) -> Result<T, T::Error> {
    T::try_from(micros.div_euclid(1_000_000))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::json::{JsonParseOptions, JsonToVariant};
    use crate::variant::tz::SessionTz;
    use arrow::array::{Array, AsArray};
    use arrow::util::display::array_value_to_string;
    use chrono::{DateTime, NaiveTime, Utc};
    use chrono::{NaiveDate, NaiveDateTime, TimeDelta};

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
}
