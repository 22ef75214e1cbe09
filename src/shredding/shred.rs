//! Shredding Variant columns (`docs/variant-spec.md` §10): choosing a `typed_value`
//! schema from the data ([`super::infer_typed_value`]) or from a Spark DDL type string
//! ([`super::typed_value_from_ddl`]), and splitting every row into `value` / `typed_value`
//! ([`shred`]).
//!
//! # The `typed_value` type ("typed shape")
//!
//! Like arrow-rs' `shred_variant(array, as_type)`, the functions here speak of the
//! *typed* shape only: `Struct{a: Int64, b: Utf8}`, `List(Utf8)`, `Int64`, ….
//! [`shred`] builds the `{value, typed_value}` wrappers itself, following the
//! canonical Arrow layout (`docs/variant-spec.md` §12):
//!
//! ```text
//! Struct {
//!   metadata: BinaryView (non-null),
//!   value: BinaryView (nullable),
//!   typed_value: W(T) (nullable),
//! }
//! W(primitive)      = the primitive (Utf8/LargeUtf8 → Utf8View, binaries → BinaryView)
//! W(Struct{f: T})   = Struct{ f: Struct{value: BinaryView, typed_value: W(T)} (non-nullable) }
//! W(List(T))        = List(element: Struct{value: BinaryView, typed_value: W(T)} (non-nullable))
//! ```
//!
//! Strings and binaries are written as view arrays, so a batch can never overflow
//! 32-bit offsets (the Parquet writer stores them as BYTE_ARRAY either way). Lists use
//! 32-bit offsets; more than `i32::MAX` elements in one batch is an error.
//!
//! # What goes into `typed_value` (exactness)
//!
//! A value is put into a typed column only when reassembly gives back the same
//! value of the same kind, so `to_json`, casts and `schema_of_variant` see no
//! difference beyond the spec's equivalence classes. Everything else goes to
//! `value` with its bytes unchanged:
//!
//! * integer columns (Int8/16/32/64) take Variant integers of any width whose value
//!   fits (they come back at the column's width; all widths are one class and
//!   `schema_of_variant` says `BIGINT` for each) — never booleans, decimals or
//!   floating-point values, which arrow-rs' casting shredder would accept;
//! * decimal columns `(p, s)` take Variant decimals and integers that are *exactly*
//!   representable with scale `s` in `p` digits (both are the "exact numeric" class;
//!   decimals print without trailing zeros, so `to_json` is unchanged — this is what
//!   Spark's shredder does too);
//! * Float32 takes only Variant floats, Float64 only doubles (an integer in a double
//!   column would come back as `1.0`);
//! * strings, binaries, booleans, dates, times and the four timestamp kinds take
//!   only their own kind (timestamp with a time zone ⇔ Variant `timestamp`, without ⇔
//!   `timestamp_ntz`, µs/ns by unit);
//! * objects go to a Struct `typed_value`: the shredded fields are routed to their
//!   field groups (a missing field has both `value` and `typed_value` null, a Variant
//!   null field has `value = 00`), the remaining fields form a residual object in
//!   `value` (field ids unchanged, sorted by UTF-8 name), or `value` is null when no
//!   field remains;
//! * arrays go to a List `typed_value`, element by element (a null element has
//!   `value = 00`).
//!
//! Every row is checked with the crate's byte-level guard
//! ([`crate::variant::validate::check`]) before it is read; malformed rows (including
//! objects with duplicate keys) make [`shred`] fail with an error, never a panic.
//!
//! # Why not arrow-rs `shred_variant`
//!
//! `parquet_variant_compute::shred_variant` (59.3.2) routes values through the
//! *casting* accessors (`Variant::as_int8`, `as_f64`, `variant_to_unscaled_decimal`,
//! …): a boolean or an integral double lands in an integer column, an integer in a
//! double column, a string or a double in a decimal column. Reassembly then returns a
//! different value (`true` → `1`, `1` → `1.0`, `"1.5"` → `1.5`). It also refuses
//! already-shredded input and can panic on objects with duplicate keys. So the
//! shredder here is our own; its output is checked against arrow-rs'
//! `VariantArray::try_new` and `unshred_variant` in the tests.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryViewBuilder, BooleanBuilder, Date32Builder, Decimal32Builder,
    Decimal64Builder, Decimal128Builder, Float32Builder, Float64Builder, Int8Builder, Int16Builder,
    Int32Builder, Int64Builder, ListArray, NullBufferBuilder, StringViewBuilder, StructArray,
    Time64MicrosecondBuilder, TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use arrow::buffer::{OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Date32Type, Field, FieldRef, Fields, TimeUnit};
use arrow::error::ArrowError;
use chrono::Timelike;
use parquet_variant::Variant;

use super::Result;
use super::rows::{Container, RowReader, basic_type, corrupt, field_name, primitive, write_object};
use crate::array::{EMPTY_METADATA, VariantInput};
use crate::variant::shredded::ShreddedPrimitive;

/// Deepest `typed_value` type accepted by [`shred`].
const MAX_TYPED_DEPTH: usize = 128;

// ---------------------------------------------------------------------------
// Shredding
// ---------------------------------------------------------------------------

fn bad_type(t: &DataType, why: &str) -> ArrowError {
    shred_plan_err!("{t} is not a valid variant shredding type{why}")
}

/// Checks a typed shape (see the module docs) before anything is built.
fn check_typed(t: &DataType, depth: usize) -> Result<()> {
    if depth > MAX_TYPED_DEPTH {
        return Err(bad_type(t, ": nested too deeply"));
    }
    if let Some(kind) = ShreddedPrimitive::of(t, None) {
        return if kind.is_written() {
            Ok(())
        } else {
            Err(bad_type(t, ""))
        };
    }
    match t {
        DataType::List(f) | DataType::LargeList(f) => check_typed(f.data_type(), depth + 1),
        DataType::Struct(fields) => {
            if fields.is_empty() {
                return Err(bad_type(t, ": a struct needs at least one field"));
            }
            for (i, f) in fields.iter().enumerate() {
                if fields.iter().skip(i + 1).any(|g| g.name() == f.name()) {
                    return Err(bad_type(t, &format!(": duplicate field `{}`", f.name())));
                }
                check_typed(f.data_type(), depth + 1)?;
            }
            Ok(())
        }
        _ => Err(bad_type(t, "")),
    }
}

/// A typed primitive column.
enum PrimBuilder {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    D32(Decimal32Builder, u8, i8),
    D64(Decimal64Builder, u8, i8),
    D128(Decimal128Builder, u8, i8),
    Date(Date32Builder),
    Time(Time64MicrosecondBuilder),
    /// `bool`: whether the column has a time zone (an instant).
    TsMicros(TimestampMicrosecondBuilder, bool),
    TsNanos(TimestampNanosecondBuilder, bool),
    Str(StringViewBuilder),
    Bin(BinaryViewBuilder),
}

/// The unscaled value of an integer or decimal at scale `scale`, if exact and within
/// `precision` digits.
fn exact_decimal(v: &Variant<'_, '_>, precision: u8, scale: i8) -> Option<i128> {
    let (unscaled, from): (i128, u8) = match v {
        Variant::Int8(i) => (*i as i128, 0),
        Variant::Int16(i) => (*i as i128, 0),
        Variant::Int32(i) => (*i as i128, 0),
        Variant::Int64(i) => (*i as i128, 0),
        Variant::Decimal4(d) => (d.integer() as i128, d.scale()),
        Variant::Decimal8(d) => (d.integer() as i128, d.scale()),
        Variant::Decimal16(d) => (d.integer(), d.scale()),
        _ => return None,
    };
    let to = u8::try_from(scale).ok()?;
    let scaled = if from <= to {
        unscaled.checked_mul(10i128.checked_pow((to - from) as u32)?)?
    } else {
        let d = 10i128.checked_pow((from - to) as u32)?;
        if unscaled % d != 0 {
            return None;
        }
        unscaled / d
    };
    (scaled.unsigned_abs() < 10u128.checked_pow(precision as u32)?).then_some(scaled)
}

fn int_of(v: &Variant<'_, '_>) -> Option<i64> {
    match v {
        Variant::Int8(i) => Some(*i as i64),
        Variant::Int16(i) => Some(*i as i64),
        Variant::Int32(i) => Some(*i as i64),
        Variant::Int64(i) => Some(*i),
        _ => None,
    }
}

impl PrimBuilder {
    fn new(t: &DataType, capacity: usize) -> Result<Self> {
        Ok(match t {
            DataType::Boolean => Self::Bool(BooleanBuilder::with_capacity(capacity)),
            DataType::Int8 => Self::I8(Int8Builder::with_capacity(capacity)),
            DataType::Int16 => Self::I16(Int16Builder::with_capacity(capacity)),
            DataType::Int32 => Self::I32(Int32Builder::with_capacity(capacity)),
            DataType::Int64 => Self::I64(Int64Builder::with_capacity(capacity)),
            DataType::Float32 => Self::F32(Float32Builder::with_capacity(capacity)),
            DataType::Float64 => Self::F64(Float64Builder::with_capacity(capacity)),
            DataType::Decimal32(p, s) => Self::D32(
                Decimal32Builder::with_capacity(capacity).with_precision_and_scale(*p, *s)?,
                *p,
                *s,
            ),
            DataType::Decimal64(p, s) => Self::D64(
                Decimal64Builder::with_capacity(capacity).with_precision_and_scale(*p, *s)?,
                *p,
                *s,
            ),
            DataType::Decimal128(p, s) => Self::D128(
                Decimal128Builder::with_capacity(capacity).with_precision_and_scale(*p, *s)?,
                *p,
                *s,
            ),
            DataType::Date32 => Self::Date(Date32Builder::with_capacity(capacity)),
            DataType::Time64(TimeUnit::Microsecond) => {
                Self::Time(Time64MicrosecondBuilder::with_capacity(capacity))
            }
            DataType::Timestamp(TimeUnit::Microsecond, tz) => Self::TsMicros(
                TimestampMicrosecondBuilder::with_capacity(capacity).with_timezone_opt(tz.clone()),
                tz.is_some(),
            ),
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => Self::TsNanos(
                TimestampNanosecondBuilder::with_capacity(capacity).with_timezone_opt(tz.clone()),
                tz.is_some(),
            ),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                Self::Str(StringViewBuilder::with_capacity(capacity))
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                Self::Bin(BinaryViewBuilder::with_capacity(capacity))
            }
            other => return Err(bad_type(other, "")),
        })
    }

    fn append_null(&mut self) {
        match self {
            Self::Bool(b) => b.append_null(),
            Self::I8(b) => b.append_null(),
            Self::I16(b) => b.append_null(),
            Self::I32(b) => b.append_null(),
            Self::I64(b) => b.append_null(),
            Self::F32(b) => b.append_null(),
            Self::F64(b) => b.append_null(),
            Self::D32(b, ..) => b.append_null(),
            Self::D64(b, ..) => b.append_null(),
            Self::D128(b, ..) => b.append_null(),
            Self::Date(b) => b.append_null(),
            Self::Time(b) => b.append_null(),
            Self::TsMicros(b, _) => b.append_null(),
            Self::TsNanos(b, _) => b.append_null(),
            Self::Str(b) => b.append_null(),
            Self::Bin(b) => b.append_null(),
        }
    }

    /// Appends `bytes` if its value belongs in this column exactly (see the module
    /// docs); otherwise appends nothing and returns `false`.
    fn try_append(&mut self, bytes: &[u8]) -> Result<bool> {
        if basic_type(bytes)? >= 2 {
            return Ok(false);
        }
        let v = primitive(bytes)?;
        macro_rules! put {
            ($b:expr, $x:expr) => {{
                match $x {
                    Some(x) => {
                        $b.append_value(x);
                        true
                    }
                    None => false,
                }
            }};
        }
        Ok(match self {
            Self::Bool(b) => put!(
                b,
                match v {
                    Variant::BooleanTrue => Some(true),
                    Variant::BooleanFalse => Some(false),
                    _ => None,
                }
            ),
            Self::I8(b) => put!(b, int_of(&v).and_then(|i| i8::try_from(i).ok())),
            Self::I16(b) => put!(b, int_of(&v).and_then(|i| i16::try_from(i).ok())),
            Self::I32(b) => put!(b, int_of(&v).and_then(|i| i32::try_from(i).ok())),
            Self::I64(b) => put!(b, int_of(&v)),
            Self::F32(b) => put!(
                b,
                if let Variant::Float(f) = v {
                    Some(f)
                } else {
                    None
                }
            ),
            Self::F64(b) => put!(
                b,
                if let Variant::Double(f) = v {
                    Some(f)
                } else {
                    None
                }
            ),
            Self::D32(b, p, s) => put!(
                b,
                exact_decimal(&v, *p, *s).and_then(|x| i32::try_from(x).ok())
            ),
            Self::D64(b, p, s) => put!(
                b,
                exact_decimal(&v, *p, *s).and_then(|x| i64::try_from(x).ok())
            ),
            Self::D128(b, p, s) => put!(b, exact_decimal(&v, *p, *s)),
            Self::Date(b) => put!(
                b,
                if let Variant::Date(d) = v {
                    Some(Date32Type::from_naive_date(d))
                } else {
                    None
                }
            ),
            Self::Time(b) => put!(
                b,
                if let Variant::Time(t) = v {
                    Some(
                        t.num_seconds_from_midnight() as i64 * 1_000_000
                            + (t.nanosecond() / 1_000) as i64,
                    )
                } else {
                    None
                }
            ),
            Self::TsMicros(b, zoned) => put!(
                b,
                match (v, *zoned) {
                    (Variant::TimestampMicros(t), true) => Some(t.timestamp_micros()),
                    (Variant::TimestampNtzMicros(t), false) => Some(t.and_utc().timestamp_micros()),
                    _ => None,
                }
            ),
            Self::TsNanos(b, zoned) => put!(
                b,
                match (v, *zoned) {
                    (Variant::TimestampNanos(t), true) => t.timestamp_nanos_opt(),
                    (Variant::TimestampNtzNanos(t), false) => t.and_utc().timestamp_nanos_opt(),
                    _ => None,
                }
            ),
            Self::Str(b) => put!(
                b,
                match &v {
                    Variant::String(s) => Some(*s),
                    Variant::ShortString(s) => Some(s.as_str()),
                    _ => None,
                }
            ),
            Self::Bin(b) => put!(
                b,
                if let Variant::Binary(x) = v {
                    Some(x)
                } else {
                    None
                }
            ),
        })
    }

    fn finish(self) -> ArrayRef {
        fn done<B: arrow::array::ArrayBuilder>(mut b: B) -> ArrayRef {
            b.finish()
        }
        match self {
            Self::Bool(b) => done(b),
            Self::I8(b) => done(b),
            Self::I16(b) => done(b),
            Self::I32(b) => done(b),
            Self::I64(b) => done(b),
            Self::F32(b) => done(b),
            Self::F64(b) => done(b),
            Self::D32(b, ..) => done(b),
            Self::D64(b, ..) => done(b),
            Self::D128(b, ..) => done(b),
            Self::Date(b) => done(b),
            Self::Time(b) => done(b),
            Self::TsMicros(b, _) => done(b),
            Self::TsNanos(b, _) => done(b),
            Self::Str(b) => done(b),
            Self::Bin(b) => done(b),
        }
    }
}

/// A shredded object `typed_value`: one field group per shredded field.
struct ObjectBuilder {
    names: Vec<String>,
    fields: Vec<Level>,
    lookup: HashMap<String, usize>,
    nulls: NullBufferBuilder,
    seen: Vec<bool>,
    /// Scratch buffer for the residual object.
    residual: Vec<u8>,
}

/// A shredded array `typed_value`.
struct ListBuilder {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    element: Box<Level>,
}

enum TypedBuilder {
    Prim(PrimBuilder),
    Object(ObjectBuilder),
    List(ListBuilder),
}

/// One `(value, typed_value)` pair.
struct Level {
    value: BinaryViewBuilder,
    typed: TypedBuilder,
}

fn pair_fields(typed: &ArrayRef) -> Fields {
    Fields::from(vec![
        Field::new("value", DataType::BinaryView, true),
        Field::new("typed_value", typed.data_type().clone(), true),
    ])
}

impl Level {
    fn new(t: &DataType, capacity: usize) -> Result<Self> {
        let typed = match t {
            DataType::Struct(fields) => {
                let names: Vec<String> = fields.iter().map(|f| f.name().clone()).collect();
                let lookup = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (n.clone(), i))
                    .collect();
                let levels = fields
                    .iter()
                    .map(|f| Level::new(f.data_type(), capacity))
                    .collect::<Result<Vec<_>>>()?;
                TypedBuilder::Object(ObjectBuilder {
                    seen: vec![false; names.len()],
                    names,
                    fields: levels,
                    lookup,
                    nulls: NullBufferBuilder::new(capacity),
                    residual: Vec::new(),
                })
            }
            DataType::List(f) | DataType::LargeList(f) => {
                let mut offsets = Vec::with_capacity(capacity + 1);
                offsets.push(0);
                TypedBuilder::List(ListBuilder {
                    offsets,
                    nulls: NullBufferBuilder::new(capacity),
                    element: Box::new(Level::new(f.data_type(), capacity)?),
                })
            }
            other => TypedBuilder::Prim(PrimBuilder::new(other, capacity)?),
        };
        Ok(Self {
            value: BinaryViewBuilder::with_capacity(capacity),
            typed,
        })
    }

    /// Both `value` and `typed_value` null: a missing object field (or a SQL NULL row).
    fn append_missing(&mut self) {
        self.value.append_null();
        self.append_typed_null();
    }

    fn append_typed_null(&mut self) {
        match &mut self.typed {
            TypedBuilder::Prim(p) => p.append_null(),
            TypedBuilder::Object(o) => {
                o.nulls.append_null();
                for f in &mut o.fields {
                    f.append_missing();
                }
            }
            TypedBuilder::List(l) => {
                let last = *l.offsets.last().unwrap_or(&0);
                l.offsets.push(last);
                l.nulls.append_null();
            }
        }
    }

    /// Appends one present value (a Variant null included).
    fn append(&mut self, dict: &[&str], bytes: &[u8]) -> Result<()> {
        let basic = basic_type(bytes)?;
        let shredded = match &mut self.typed {
            TypedBuilder::Prim(p) => p.try_append(bytes)?,
            TypedBuilder::Object(o) if basic == 2 => {
                let residual = o.append_object(dict, bytes)?;
                match residual {
                    Some(r) => self.value.append_value(r),
                    None => self.value.append_null(),
                }
                return Ok(());
            }
            TypedBuilder::List(l) if basic == 3 => {
                let c = Container::new(bytes)?;
                for i in 0..c.n {
                    l.element.append(dict, c.child(i)?)?;
                }
                let last = *l.offsets.last().unwrap_or(&0);
                let next = i32::try_from(c.n)
                    .ok()
                    .and_then(|n| last.checked_add(n))
                    .ok_or_else(|| shred_err!("shred: too many array elements in one batch"))?;
                l.offsets.push(next);
                l.nulls.append_non_null();
                true
            }
            _ => false,
        };
        if shredded {
            self.value.append_null();
        } else {
            self.append_typed_null();
            self.value.append_value(bytes);
        }
        Ok(())
    }

    /// `(value, typed_value)` arrays.
    fn finish(self) -> Result<(ArrayRef, ArrayRef)> {
        let mut value = self.value;
        let value: ArrayRef = Arc::new(value.finish());
        let typed: ArrayRef = match self.typed {
            TypedBuilder::Prim(p) => p.finish(),
            TypedBuilder::Object(o) => {
                let mut nulls = o.nulls;
                let mut fields: Vec<FieldRef> = Vec::with_capacity(o.names.len());
                let mut arrays: Vec<ArrayRef> = Vec::with_capacity(o.names.len());
                for (name, level) in o.names.into_iter().zip(o.fields) {
                    let group = level.finish_group()?;
                    fields.push(Arc::new(Field::new(name, group.data_type().clone(), false)));
                    arrays.push(group);
                }
                Arc::new(StructArray::try_new(
                    Fields::from(fields),
                    arrays,
                    nulls.finish(),
                )?)
            }
            TypedBuilder::List(l) => {
                let mut nulls = l.nulls;
                let element = l.element.finish_group()?;
                let field = Arc::new(Field::new("element", element.data_type().clone(), false));
                let offsets = OffsetBuffer::new(ScalarBuffer::from(l.offsets));
                Arc::new(ListArray::try_new(field, offsets, element, nulls.finish())?)
            }
        };
        Ok((value, typed))
    }

    /// The level as a non-null `Struct{value, typed_value}` group.
    fn finish_group(self) -> Result<ArrayRef> {
        let (value, typed) = self.finish()?;
        Ok(Arc::new(StructArray::try_new(
            pair_fields(&typed),
            vec![value, typed],
            None,
        )?))
    }
}

impl ObjectBuilder {
    /// Routes the fields of an object; returns the residual object's bytes, if any
    /// field is not shredded.
    fn append_object(&mut self, dict: &[&str], bytes: &[u8]) -> Result<Option<&[u8]>> {
        let c = Container::new(bytes)?;
        self.seen.fill(false);
        let mut rest: Vec<(&str, usize, &[u8])> = Vec::new();
        for i in 0..c.n {
            let id = c.id(i)?;
            let name = field_name(dict, id)?;
            let child = c.child(i)?;
            match self.lookup.get(name) {
                Some(&k) => {
                    if std::mem::replace(&mut self.seen[k], true) {
                        return Err(corrupt("duplicate field name"));
                    }
                    self.fields[k].append(dict, child)?;
                }
                None => rest.push((name, id, child)),
            }
        }
        for (k, seen) in self.seen.iter().enumerate() {
            if !seen {
                self.fields[k].append_missing();
            }
        }
        self.nulls.append_non_null();
        if rest.is_empty() {
            return Ok(None);
        }
        self.residual.clear();
        write_object(&mut rest, &mut self.residual)?;
        Ok(Some(&self.residual))
    }
}

/// Shreds a Variant column (unshredded, or shredded in any layout: it is reassembled
/// first) to the typed shape `typed_value` (see the module docs for the layout and
/// for which values go into typed columns). Returns
/// `Struct{metadata, value, typed_value}`; SQL NULL rows are null structs. The
/// result's type depends only on `typed_value`, so an empty column gives the file
/// schema.
///
/// ```
/// use arrow::array::{Array, ArrayRef, AsArray};
/// use arrow::datatypes::DataType;
/// use df_variant::array::{VariantColumnBuilder, VariantInput};
/// use df_variant::shredding::shred;
/// use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
///
/// let mut b = VariantColumnBuilder::new(3);
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// for doc in ["1", "\"one\""] {
///     p.parse(doc).unwrap();
///     b.append(p.metadata(), p.value());
/// }
/// b.append_null();
/// let column: ArrayRef = b.finish();
/// let shredded = shred(&column, &DataType::Int64).unwrap();
/// let s = shredded.as_struct();
/// assert!(s.column_by_name("typed_value").unwrap().is_valid(0)); // 1 is typed
/// assert!(s.column_by_name("value").unwrap().is_valid(1)); // "one" stays in value
/// assert!(s.is_null(2));
/// // Reading it back reassembles the original values.
/// let back = VariantInput::try_new(&shredded).unwrap();
/// assert_eq!(back.get(1).unwrap().1, column.as_struct().column(1).as_binary_view().value(1));
/// ```
///
/// # Errors
/// When `typed_value` cannot be shredded to (unsigned integers, maps, empty structs,
/// duplicate field names, …), the column is not a Variant column, or a row is not a
/// valid Variant.
pub fn shred(column: &ArrayRef, typed_value: &DataType) -> Result<ArrayRef> {
    check_typed(typed_value, 0)?;
    let input = VariantInput::try_new(column).map_err(|e| shred_err!("{e}"))?;
    let run = std::panic::AssertUnwindSafe(|| shred_rows(&input, typed_value));
    std::panic::catch_unwind(run)
        .unwrap_or_else(|_| Err(shred_err!("shred: {}", crate::boundary::PANIC_MESSAGE)))
}

fn shred_rows(input: &VariantInput, typed_value: &DataType) -> Result<ArrayRef> {
    let n = input.len();
    let mut level = Level::new(typed_value, n)?;
    let mut metadata = BinaryViewBuilder::with_capacity(n);
    let mut nulls = NullBufferBuilder::new(n);
    let mut reader = RowReader::new(input);
    for i in 0..n {
        match reader.row(i)? {
            None => {
                metadata.append_value(EMPTY_METADATA);
                level.append_missing();
                nulls.append_null();
            }
            Some((m, v)) => {
                level.append(&reader.dict, v)?;
                metadata.append_value(m);
                nulls.append_non_null();
            }
        }
    }
    let metadata: ArrayRef = Arc::new(metadata.finish());
    let (value, typed) = level.finish()?;
    let fields = Fields::from(vec![
        Field::new("metadata", DataType::BinaryView, false),
        Field::new("value", DataType::BinaryView, true),
        Field::new("typed_value", typed.data_type().clone(), true),
    ]);
    Ok(Arc::new(StructArray::try_new(
        fields,
        vec![metadata, value, typed],
        nulls.finish(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{VariantColumnBuilder, variant_extension_metadata};
    use crate::shredding::ddl::typed_value_from_ddl;
    use crate::shredding::infer::{ShreddingOptions, infer_typed_value};
    use crate::variant::format::to_json_string;
    use crate::variant::json::{JsonParseOptions, JsonToVariant};
    use crate::variant::tz::SessionTz;
    use crate::variant::validate::decode;
    use arrow::array::{AsArray, RecordBatch};
    use arrow::datatypes::Schema;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// A Variant column from JSON documents (`None`: SQL NULL).
    fn column(docs: &[Option<String>]) -> ArrayRef {
        let mut b = VariantColumnBuilder::new(docs.len());
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        for d in docs {
            match d {
                Some(d) => {
                    p.parse(d).unwrap_or_else(|e| panic!("{d}: {e:?}"));
                    b.append(p.metadata(), p.value());
                }
                None => b.append_null(),
            }
        }
        b.finish()
    }

    fn col(docs: &[&str]) -> ArrayRef {
        column(&docs.iter().map(|d| Some(d.to_string())).collect::<Vec<_>>())
    }

    /// `to_json` of every row, read through the crate's reader (which reassembles).
    fn jsons(column: &ArrayRef) -> Vec<Option<String>> {
        let input = VariantInput::try_new(column).unwrap();
        (0..input.len())
            .map(|i| {
                input
                    .get(i)
                    .map(|(m, v)| to_json_string(&decode(m, v).unwrap(), &SessionTz::utc()))
            })
            .collect()
    }

    /// `to_json` of every row, reassembled by arrow-rs (`unshred_variant`).
    fn arrow_rs_jsons(column: &ArrayRef) -> Vec<Option<String>> {
        let va = parquet_variant_compute::VariantArray::try_new(column.as_ref()).unwrap();
        let un = parquet_variant_compute::unshred_variant(&va).unwrap();
        (0..un.len())
            .map(|i| {
                un.is_valid(i)
                    .then(|| to_json_string(&un.value(i), &SessionTz::utc()))
            })
            .collect()
    }

    fn infer(docs: &[&str]) -> Option<DataType> {
        infer_typed_value(&col(docs), &ShreddingOptions::default()).unwrap()
    }

    fn f(name: &str, t: DataType) -> Field {
        Field::new(name, t, true)
    }

    fn st(fields: Vec<Field>) -> DataType {
        DataType::Struct(Fields::from(fields))
    }

    fn list(t: DataType) -> DataType {
        DataType::List(Arc::new(Field::new("element", t, true)))
    }

    #[test]
    fn infers_event_documents() {
        let mut docs = Vec::new();
        for i in 0..40 {
            let rare = if i == 7 { r#","rare":1"# } else { "" };
            let mixed = if i % 2 == 0 {
                "1".to_string()
            } else {
                format!("\"s{i}\"")
            };
            docs.push(format!(
                r#"{{"id":{id},"name":"user{i}","ok":{ok},"mixed":{mixed},"score":{i}.5,
                    "user":{{"age":{i},"tags":["a","b"]}},
                    "items":[{{"sku":"x{i}","qty":{i}}},{{"sku":"y","qty":null}}],
                    "ratio":{i}e-1,"nothing":null{rare}}}"#,
                id = 1000 + i,
                ok = i % 3 == 0,
            ));
        }
        let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let expected = st(vec![
            f("id", DataType::Int32),
            f(
                "items",
                list(st(vec![
                    f("qty", DataType::Int32),
                    f("sku", DataType::Utf8),
                ])),
            ),
            f("name", DataType::Utf8),
            f("ok", DataType::Boolean),
            f("ratio", DataType::Float64),
            f("score", DataType::Decimal128(9, 1)),
            f(
                "user",
                st(vec![
                    f("age", DataType::Int32),
                    f("tags", list(DataType::Utf8)),
                ]),
            ),
        ]);
        assert_eq!(infer(&docs), Some(expected.clone()));
        // Deterministic.
        assert_eq!(infer(&docs), Some(expected.clone()));
        // And it shreds and reads back.
        let c = col(&docs);
        let s = shred(&c, &expected).unwrap();
        assert_eq!(jsons(&s), jsons(&c));
        assert_eq!(arrow_rs_jsons(&s), jsons(&c));
    }

    #[test]
    fn integer_widths_and_decimals() {
        assert_eq!(infer(&["1", "-128", "127"]), Some(DataType::Int32));
        assert_eq!(infer(&["1", "300"]), Some(DataType::Int32));
        assert_eq!(infer(&["1", "70000"]), Some(DataType::Int32));
        assert_eq!(infer(&["1", "5000000000"]), Some(DataType::Int64));
        assert_eq!(
            infer(&["1.5", "22.25", "3"]),
            Some(DataType::Decimal128(9, 2))
        );
        assert_eq!(
            infer(&["12345678.5", "1"]),
            Some(DataType::Decimal128(9, 1))
        );
        assert_eq!(
            infer(&["123456789.5", "1"]),
            Some(DataType::Decimal128(18, 1))
        );
        assert_eq!(
            infer(&["9223372036854775808", "1.5"]),
            Some(DataType::Decimal128(38, 1))
        );
        assert_eq!(infer(&["1e3", "2.5e0"]), Some(DataType::Float64));
        // Integers must come back as integers: mixed with doubles nothing shreds.
        assert_eq!(infer(&["1", "2.5e0"]), None);
        assert_eq!(infer(&[r#"{"a":1}"#, r#"{"a":2e0}"#]), None);
        assert_eq!(
            infer(&[r#"{"a":1,"b":1}"#, r#"{"a":2e0,"b":2}"#]),
            Some(st(vec![f("b", DataType::Int32)]))
        );
    }

    #[test]
    fn a_strict_majority_kind_shreds_and_the_rest_stays_in_value() {
        let docs = [
            r#"{"a":1}"#,
            r#"{"a":"x"}"#,
            r#"{"a":300}"#,
            r#"{"a":null}"#,
        ];
        let expected = st(vec![f("a", DataType::Int32)]);
        assert_eq!(infer(&docs), Some(expected.clone()));
        let c = col(&docs);
        assert_eq!(jsons(&shred(&c, &expected).unwrap()), jsons(&c));
        // Objects beat the strings of the same path (JSONBench's `subject`).
        assert_eq!(
            infer(&[r#"{"s":{"u":"a"}}"#, r#"{"s":{"u":"b"}}"#, r#"{"s":"did"}"#]),
            Some(st(vec![f("s", st(vec![f("u", DataType::Utf8)]))]))
        );
        // A tie is no majority.
        assert_eq!(infer(&["1", r#""x""#]), None);
        assert_eq!(infer(&["1", "2", r#""x""#, "[1]", "true"]), None);
    }

    #[test]
    fn top_level_kinds() {
        assert_eq!(infer(&[r#"{"a":1}"#, "[1]"]), None);
        assert_eq!(infer(&[r#"{"a":1}"#, "1"]), None);
        assert_eq!(infer(&["1", "\"x\""]), None);
        assert_eq!(infer(&["\"x\"", "null", "\"y\""]), Some(DataType::Utf8));
        assert_eq!(infer(&["true", "false"]), Some(DataType::Boolean));
        assert_eq!(
            infer(&["[1,2]", "[]", "[null]"]),
            Some(list(DataType::Int32))
        );
        assert_eq!(infer(&["[1,\"a\"]"]), None);
        assert_eq!(infer(&["[]"]), None);
        assert_eq!(infer(&["{}", "{}"]), None);
        // All null: SQL NULLs and Variant nulls.
        let c = column(&[None, Some("null".into()), None]);
        assert_eq!(
            infer_typed_value(&c, &ShreddingOptions::default()).unwrap(),
            None
        );
        let c = column(&[]);
        assert_eq!(
            infer_typed_value(&c, &ShreddingOptions::default()).unwrap(),
            None
        );
        // Nulls do not prevent shredding.
        let c = column(&[None, Some("null".into()), Some(r#"{"a":"x"}"#.into())]);
        assert_eq!(
            infer_typed_value(&c, &ShreddingOptions::default()).unwrap(),
            Some(st(vec![f("a", DataType::Utf8)]))
        );
    }

    #[test]
    fn rare_fields_sampling_and_leaf_limit() {
        let mut docs: Vec<String> = (0..20).map(|i| format!(r#"{{"a":{i},"b":"x"}}"#)).collect();
        docs[3] = r#"{"a":1,"b":"x","rare":true}"#.into();
        docs[4] = r#"{"a":1,"b":"x","two":true}"#.into();
        docs[5] = r#"{"a":1,"b":"x","two":true}"#.into();
        let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
        let c = col(&docs);
        let opts = ShreddingOptions::default();
        let two = st(vec![
            f("a", DataType::Int32),
            f("b", DataType::Utf8),
            f("two", DataType::Boolean),
        ]);
        assert_eq!(infer_typed_value(&c, &opts).unwrap(), Some(two.clone()));
        let opts = ShreddingOptions {
            min_field_fraction: 0.0,
            ..Default::default()
        };
        let all = infer_typed_value(&c, &opts).unwrap().unwrap();
        assert_eq!(all.to_string().matches("Boolean").count(), 2);
        // max_leaves drops the rarest first.
        let opts = ShreddingOptions {
            min_field_fraction: 0.0,
            max_leaves: 3,
            ..Default::default()
        };
        assert_eq!(infer_typed_value(&c, &opts).unwrap(), Some(two));
        let opts = ShreddingOptions {
            max_leaves: 0,
            ..Default::default()
        };
        assert_eq!(infer_typed_value(&c, &opts).unwrap(), None);
        // Only the first sample_rows rows are looked at.
        let c = col(&["1", "2", "\"x\""]);
        let opts = ShreddingOptions {
            sample_rows: 2,
            ..Default::default()
        };
        assert_eq!(infer_typed_value(&c, &opts).unwrap(), Some(DataType::Int32));
        let s = shred(&c, &DataType::Int8).unwrap();
        assert_eq!(jsons(&s), jsons(&c));
        // A nested struct whose fields are all dropped disappears.
        let c = col(&[r#"{"a":1,"n":{"x":1}}"#, r#"{"a":1,"n":{"y":"z"}}"#]);
        let opts = ShreddingOptions {
            max_leaves: 1,
            ..Default::default()
        };
        assert_eq!(
            infer_typed_value(&c, &opts).unwrap(),
            Some(st(vec![f("a", DataType::Int32)]))
        );
    }

    #[test]
    fn other_kinds() {
        let c = col(&["1"]);
        // Build dates / timestamps / binaries through parquet-variant's builder.
        let mut b = VariantColumnBuilder::new(4);
        for v in [
            Variant::from(chrono::NaiveDate::from_ymd_opt(2024, 1, 15).unwrap()),
            Variant::from(chrono::NaiveDate::from_ymd_opt(1900, 2, 1).unwrap()),
        ] {
            let mut vb = parquet_variant::VariantBuilder::new();
            vb.append_value(v);
            let (m, v) = vb.finish();
            b.append(&m, &v);
        }
        let dates = b.finish();
        let opts = ShreddingOptions::default();
        assert_eq!(
            infer_typed_value(&dates, &opts).unwrap(),
            Some(DataType::Date32)
        );
        let s = shred(&dates, &DataType::Date32).unwrap();
        assert_eq!(jsons(&s), jsons(&dates));
        assert_eq!(s.as_struct().column(2).null_count(), 0);
        // An int is not a date.
        let s = shred(&c, &DataType::Date32).unwrap();
        assert_eq!(s.as_struct().column(2).null_count(), 1);

        let ts = chrono::DateTime::from_timestamp_micros(1_700_000_000_123_456).unwrap();
        for (v, t) in [
            (
                Variant::from(ts),
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
            (
                Variant::from(ts.naive_utc()),
                DataType::Timestamp(TimeUnit::Microsecond, None),
            ),
            (Variant::from(&b"\x00\x01"[..]), DataType::Binary),
            (Variant::from(1.5f32), DataType::Float32),
        ] {
            let mut b = VariantColumnBuilder::new(1);
            let mut vb = parquet_variant::VariantBuilder::new();
            vb.append_value(v);
            let (m, v) = vb.finish();
            b.append(&m, &v);
            let c = b.finish();
            assert_eq!(infer_typed_value(&c, &opts).unwrap(), Some(t.clone()));
            let s = shred(&c, &t).unwrap();
            assert_eq!(s.as_struct().column(1).null_count(), 1, "{t}");
            assert_eq!(jsons(&s), jsons(&c));
            // The other timestamp kind stays in value.
            let other = match &t {
                DataType::Timestamp(u, Some(_)) => DataType::Timestamp(*u, None),
                _ => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            };
            let s = shred(&c, &other).unwrap();
            assert_eq!(s.as_struct().column(1).null_count(), 0, "{t}");
            assert_eq!(jsons(&s), jsons(&c));
        }
    }

    #[test]
    fn ddl_types() {
        assert_eq!(
            typed_value_from_ddl("struct<a:bigint,b:struct<c:string>>").unwrap(),
            st(vec![
                f("a", DataType::Int64),
                f("b", st(vec![f("c", DataType::Utf8)])),
            ])
        );
        assert_eq!(typed_value_from_ddl("bigint").unwrap(), DataType::Int64);
        assert_eq!(
            typed_value_from_ddl("array<string>").unwrap(),
            list(DataType::Utf8)
        );
        assert_eq!(
            typed_value_from_ddl("decimal(10,2)").unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert_eq!(
            typed_value_from_ddl("timestamp").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            typed_value_from_ddl("timestamp_ntz").unwrap(),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(
            typed_value_from_ddl("STRUCT<a: INT, b: VARIANT>").unwrap(),
            st(vec![f("a", DataType::Int32)])
        );
        for bad in [
            "variant",
            "map<string,int>",
            "struct<b:variant>",
            "array<variant>",
            "struct<a:int,a:int>",
            "nope",
            "struct<a:int",
            "",
        ] {
            assert!(typed_value_from_ddl(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shred_rejects_bad_types_and_inputs() {
        let c = col(&["1"]);
        for t in [
            DataType::UInt8,
            DataType::Float16,
            DataType::FixedSizeBinary(4),
            DataType::Struct(Fields::empty()),
            DataType::Decimal128(0, 0),
            DataType::Decimal32(10, 2),
            DataType::Timestamp(TimeUnit::Millisecond, None),
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    st(vec![
                        Field::new("key", DataType::Utf8, false),
                        f("value", DataType::Int32),
                    ]),
                    false,
                )),
                false,
            ),
            st(vec![f("a", DataType::Int8), f("a", DataType::Int8)]),
        ] {
            assert!(shred(&c, &t).is_err(), "{t}");
        }
        // Not a variant column.
        let ints: ArrayRef = Arc::new(arrow::array::Int32Array::from(vec![1]));
        assert!(shred(&ints, &DataType::Int32).is_err());
        assert!(infer_typed_value(&ints, &ShreddingOptions::default()).is_err());
        // Malformed bytes (truncated int16; an object with a duplicate key) error out.
        for (m, v) in [
            (&[0x01u8, 0, 0][..], &[0x10u8, 0x01][..]),
            (
                &[0x01, 0x02, 0x00, 0x01, 0x02, b'a', b'a'][..],
                &[0x02, 0x02, 0x00, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00][..],
            ),
        ] {
            let mut b = VariantColumnBuilder::new(1);
            b.append(m, v);
            let c = b.finish();
            assert!(shred(&c, &st(vec![f("a", DataType::Int8)])).is_err());
            assert!(shred(&c, &DataType::Int8).is_err());
            assert_eq!(
                infer_typed_value(&c, &ShreddingOptions::default()).unwrap(),
                None
            );
        }
    }

    #[test]
    fn exact_routing() {
        let c = col(&[
            "1", "300", "1.5", "2.50e0", "true", "\"7\"", "null", "2.0", "1.25", "100000",
        ]);
        let cases: Vec<(DataType, Vec<bool>)> = vec![
            (
                DataType::Int8,
                vec![
                    true, false, false, false, false, false, false, false, false, false,
                ],
            ),
            (
                DataType::Int64,
                vec![
                    true, true, false, false, false, false, false, false, false, true,
                ],
            ),
            (
                DataType::Float64,
                vec![
                    false, false, false, true, false, false, false, false, false, false,
                ],
            ),
            (
                DataType::Decimal128(4, 1),
                vec![
                    true, true, true, false, false, false, false, true, false, false,
                ],
            ),
            (
                DataType::Decimal64(18, 2),
                vec![
                    true, true, true, false, false, false, false, true, true, true,
                ],
            ),
            (
                DataType::Boolean,
                vec![
                    false, false, false, false, true, false, false, false, false, false,
                ],
            ),
            (
                DataType::Utf8,
                vec![
                    false, false, false, false, false, true, false, false, false, false,
                ],
            ),
        ];
        for (t, typed) in cases {
            let s = shred(&c, &t).unwrap();
            let sa = s.as_struct();
            let tv = sa.column_by_name("typed_value").unwrap();
            let v = sa.column_by_name("value").unwrap();
            for (i, expect) in typed.iter().enumerate() {
                assert_eq!(tv.is_valid(i), *expect, "{t} row {i}");
                assert_eq!(v.is_valid(i), !*expect, "{t} row {i}");
            }
            assert_eq!(jsons(&s), jsons(&c), "{t}");
            assert_eq!(arrow_rs_jsons(&s), jsons(&c), "{t}");
        }
    }

    #[test]
    fn partially_shredded_objects() {
        let c = column(&[
            Some(r#"{"a":1,"b":"x","c":[1]}"#.into()),
            Some(r#"{"a":"no","c":{"d":1}}"#.into()),
            Some(r#"{"b":null}"#.into()),
            Some("{}".into()),
            Some("[1,2]".into()),
            Some("null".into()),
            None,
        ]);
        let t = st(vec![f("a", DataType::Int32), f("b", DataType::Utf8)]);
        let s = shred(&c, &t).unwrap();
        let sa = s.as_struct();
        assert!(sa.is_null(6));
        let value = sa.column_by_name("value").unwrap().as_binary_view();
        let typed = sa.column_by_name("typed_value").unwrap().as_struct();
        // Row 0: c stays in value, a and b are typed.
        assert!(value.is_valid(0) && typed.is_valid(0));
        // Row 3: {} is a non-null typed_value with a null value.
        assert!(value.is_null(3) && typed.is_valid(3));
        // Rows 4, 5: not objects.
        assert!(value.is_valid(4) && typed.is_null(4));
        assert!(value.is_valid(5) && typed.is_null(5));
        let a = typed.column_by_name("a").unwrap().as_struct();
        // Row 1: a is a string: in a's value. Row 2: a missing: both null.
        assert!(a.column(0).is_valid(1) && a.column(1).is_null(1));
        assert!(a.column(0).is_null(2) && a.column(1).is_null(2));
        let b = typed.column_by_name("b").unwrap().as_struct();
        // Row 2: b is a Variant null: value 00.
        assert_eq!(b.column(0).as_binary_view().value(2), &[0x00]);
        assert_eq!(jsons(&s), jsons(&c));
        assert_eq!(arrow_rs_jsons(&s), jsons(&c));
        assert!(parquet_variant_compute::VariantArray::try_new(s.as_ref()).is_ok());
        // Shredding shredded input (reassembled first) to another schema.
        let again = shred(&s, &st(vec![f("c", list(DataType::Int64))])).unwrap();
        assert_eq!(jsons(&again), jsons(&c));
        // The output type depends only on the typed shape.
        let empty = shred(&column(&[]), &t).unwrap();
        assert_eq!(empty.data_type(), s.data_type());
    }

    // ---- random round trips ----

    fn rand_string(rng: &mut StdRng) -> String {
        const POOL: &[&str] = &["a", "b", "é", "\\n", "\\\"", "\\u0001", "😀", " ", "x"];
        let n = rng.random_range(0..20);
        let mut s = String::from("\"");
        for _ in 0..n {
            s.push_str(POOL[rng.random_range(0..POOL.len())]);
        }
        s.push('"');
        s
    }

    fn rand_scalar(rng: &mut StdRng) -> String {
        match rng.random_range(0..10) {
            0 => rng.random_range(-100..100).to_string(),
            1 => rng.random::<i64>().to_string(),
            2 => rng.random_range(-40000..40000).to_string(),
            3 => format!(
                "{}.{}",
                rng.random_range(-999..999),
                rng.random_range(0..1000)
            ),
            4 => format!("{}e{}", rng.random_range(-99..99), rng.random_range(-5..5)),
            5 => rand_string(rng),
            6 => rng.random_bool(0.5).to_string(),
            7 => "null".into(),
            8 => "123456789012345678901234567890.5".into(),
            _ => format!(
                "{}.{:02}",
                rng.random_range(0..99999),
                rng.random_range(0..100)
            ),
        }
    }

    fn rand_value(rng: &mut StdRng, depth: usize) -> String {
        match rng.random_range(0..10) {
            0 | 1 if depth < 4 => {
                let n = rng.random_range(0..4);
                let keys = ["a", "b", "x", "y", "é"];
                let mut used = std::collections::BTreeSet::new();
                let parts: Vec<String> = (0..n)
                    .filter_map(|_| {
                        let k = keys[rng.random_range(0..keys.len())];
                        used.insert(k)
                            .then(|| format!("\"{k}\":{}", rand_value(rng, depth + 1)))
                    })
                    .collect();
                format!("{{{}}}", parts.join(","))
            }
            2 if depth < 4 => {
                let n = rng.random_range(0..4);
                let parts: Vec<String> = (0..n).map(|_| rand_value(rng, depth + 1)).collect();
                format!("[{}]", parts.join(","))
            }
            _ => rand_scalar(rng),
        }
    }

    /// A document mostly following a fixed shape, sometimes deviating.
    fn rand_doc(rng: &mut StdRng, noise: f64) -> String {
        let mut parts = Vec::new();
        let mut field = |name: &str, typical: String, rng: &mut StdRng| {
            if rng.random_bool(0.8) {
                let v = if rng.random_bool(noise) {
                    rand_value(rng, 1)
                } else {
                    typical
                };
                parts.push(format!("\"{name}\":{v}"));
            }
        };
        let a = rng.random_range(-1000..1000).to_string();
        field("a", a, rng);
        let b = rand_string(rng);
        field("b", b, rng);
        let c = format!("{}.{}", rng.random_range(0..1000), rng.random_range(1..10));
        field("c", c, rng);
        let d = rand_value(rng, 1);
        field("d", d, rng);
        let e = format!("{}e-1", rng.random_range(0..100));
        field("e", e, rng);
        let nested = format!(
            r#"{{"x":{},"y":{},"z":{}}}"#,
            rng.random_range(0..100000),
            rand_string(rng),
            rand_value(rng, 2)
        );
        field("nested", nested, rng);
        let n = rng.random_range(0..4);
        let l: Vec<String> = (0..n)
            .map(|_| rng.random_range(-5..5).to_string())
            .collect();
        field("list", format!("[{}]", l.join(",")), rng);
        let n = rng.random_range(0..3);
        let tags: Vec<String> = (0..n)
            .map(|_| {
                format!(
                    r#"{{"k":{},"v":{}}}"#,
                    rand_string(rng),
                    if rng.random_bool(0.8) {
                        rng.random_range(0..100).to_string()
                    } else {
                        rand_scalar(rng)
                    }
                )
            })
            .collect();
        field("tags", format!("[{}]", tags.join(",")), rng);
        if rng.random_bool(0.05) {
            field(
                &format!("k{}", rng.random_range(0..50)),
                rand_scalar(rng),
                rng,
            );
        }
        format!("{{{}}}", parts.join(","))
    }

    fn rand_docs(rng: &mut StdRng) -> Vec<Option<String>> {
        let mode = rng.random_range(0..6);
        let noise = [0.0, 0.05, 0.3][rng.random_range(0..3)];
        let n = rng.random_range(0..60);
        (0..n)
            .map(|_| {
                if rng.random_bool(0.05) {
                    return None;
                }
                if rng.random_bool(0.03) {
                    return Some("null".into());
                }
                Some(match mode {
                    0..=2 => rand_doc(rng, noise),
                    3 => {
                        if rng.random_bool(0.9) {
                            rand_doc(rng, noise)
                        } else {
                            rand_value(rng, 0)
                        }
                    }
                    4 => rand_scalar(rng),
                    _ => rand_value(rng, 0),
                })
            })
            .collect()
    }

    const DDLS: &[&str] = &[
        "struct<a:int>",
        "struct<a:tinyint,b:string>",
        "bigint",
        "string",
        "decimal(18,4)",
        "double",
        "array<int>",
        "array<struct<a:int>>",
        "struct<a:string,nested:struct<x:bigint,y:int,z:string>>",
        "struct<list:array<tinyint>,tags:array<struct<k:string,v:decimal(9,2)>>>",
        "struct<c:decimal(18,2),e:double,d:boolean>",
        "struct<d:timestamp,a:date,b:binary,c:float>",
        "struct<b:variant,a:bigint,d:array<string>>",
    ];

    #[test]
    fn random_round_trips() {
        let mut rng = StdRng::seed_from_u64(0x5eed);
        let mut shredded_somewhere = 0;
        for trial in 0..150 {
            let docs = rand_docs(&mut rng);
            let c = column(&docs);
            let expected = jsons(&c);
            let opts = ShreddingOptions {
                min_field_fraction: [0.0, 0.1, 0.5][trial % 3],
                max_leaves: [128, 3, 1][trial % 4 % 3],
                ..Default::default()
            };
            let mut types: Vec<DataType> = Vec::new();
            if let Some(t) = infer_typed_value(&c, &opts).unwrap() {
                shredded_somewhere += 1;
                types.push(t);
            }
            let ddl = DDLS[trial % DDLS.len()];
            types.push(typed_value_from_ddl(ddl).unwrap());
            for t in types {
                let s = shred(&c, &t).unwrap_or_else(|e| panic!("trial {trial} {t}: {e}"));
                assert_eq!(s.len(), c.len());
                assert_eq!(jsons(&s), expected, "trial {trial} {t}: {docs:?}");
                assert_eq!(arrow_rs_jsons(&s), expected, "trial {trial} {t} (arrow-rs)");
                // Shredding is idempotent on reassembly.
                let again = shred(&s, &t).unwrap();
                assert_eq!(jsons(&again), expected);
            }
        }
        assert!(shredded_somewhere >= 30, "{shredded_somewhere}");
    }

    #[test]
    fn parquet_round_trip() {
        use parquet::arrow::ArrowWriter;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        let mut rng = StdRng::seed_from_u64(42);
        // The sample (first 100 rows) is regular; later rows deviate and must
        // fall back to `value`.
        let docs: Vec<Option<String>> = (0..300)
            .map(|i| (i % 17 != 0).then(|| rand_doc(&mut rng, if i < 100 { 0.0 } else { 0.2 })))
            .collect();
        let c = column(&docs);
        let expected = jsons(&c);
        let opts = ShreddingOptions {
            sample_rows: 100,
            ..Default::default()
        };
        let inferred = infer_typed_value(&c, &opts).unwrap().unwrap();
        assert!(
            matches!(&inferred, DataType::Struct(f) if f.len() >= 6),
            "{inferred}"
        );
        for (k, t) in [
            inferred,
            typed_value_from_ddl(
                "struct<a:int,nested:struct<x:bigint>,tags:array<struct<v:decimal(9,2)>>>",
            )
            .unwrap(),
            typed_value_from_ddl("bigint").unwrap(),
        ]
        .into_iter()
        .enumerate()
        {
            let s = shred(&c, &t).unwrap();
            let schema = Arc::new(Schema::new(vec![
                Field::new("v", s.data_type().clone(), true)
                    .with_metadata(variant_extension_metadata()),
            ]));
            let batch = RecordBatch::try_new(Arc::clone(&schema), vec![s]).unwrap();
            let path = std::env::temp_dir().join(format!(
                "df_variant_shred_{}_{k}.parquet",
                std::process::id()
            ));
            let file = std::fs::File::create(&path).unwrap();
            let mut w = ArrowWriter::try_new(file, schema, None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap();
            let mut got = Vec::new();
            for b in reader {
                let b = b.unwrap();
                got.extend(jsons(b.column(0)));
            }
            std::fs::remove_file(&path).ok();
            assert_eq!(got, expected, "{t}");
        }
    }

    #[test]
    fn arrow_rs_shred_variant_is_lossy() {
        // Why we do not use parquet_variant_compute::shred_variant: it casts.
        let c = col(&["1", "true"]);
        let va = parquet_variant_compute::VariantArray::try_new(c.as_ref()).unwrap();
        let theirs = parquet_variant_compute::shred_variant(&va, &DataType::Float64).unwrap();
        let theirs: ArrayRef = Arc::new(theirs.into_inner());
        let back = parquet_variant_compute::unshred_variant(
            &parquet_variant_compute::VariantArray::try_new(theirs.as_ref()).unwrap(),
        )
        .unwrap();
        let json = to_json_string(&back.value(0), &SessionTz::utc());
        assert_eq!(json, "1.0", "arrow-rs turned the integer into a double");
        let ours = shred(&c, &DataType::Float64).unwrap();
        assert_eq!(jsons(&ours), jsons(&c));
    }
}
