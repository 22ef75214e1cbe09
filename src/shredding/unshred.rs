//! Reconstruction of shredded Variant columns into the binary form
//! (`docs/variant-spec.md` §10.8), with errors that name the row, the path and the problem.
//!
//! The shape of the column (`value` / `typed_value` at every level) is checked once;
//! then every row is rebuilt into value bytes that reuse the row's metadata:
//!
//! * `typed_value` non-null: a primitive is encoded as the Variant type its column
//!   stands for (Int8 → int8, Decimal by *precision* → decimal4/8/16, Timestamp with
//!   a zone → timestamp, without → timestamp_ntz, FixedSizeBinary(16) → uuid, …); a
//!   list becomes an array of its rebuilt elements; an object merges its present
//!   shredded fields with the fields of a (partially shredded) `value` object and
//!   writes them sorted by UTF-8 name;
//! * `typed_value` null: the `value` bytes are used as they are;
//! * both null: a missing field inside an object, a Variant null (`00`) elsewhere.
//!
//! Errors (the row is rejected, never silently rewritten):
//! * a primitive or list with both `value` and `typed_value` non-null;
//! * an object `typed_value` with a non-object `value` (including Variant null);
//! * a key of a partially shredded object's `value` that is also a shredded field
//!   name, even when that field is missing in the row (the spec's "engines should
//!   fail"; parquet-testing cases 43 and 125), or a key twice in `value`;
//! * a shredded field name missing from the row's metadata dictionary;
//! * a `typed_value` type the spec does not allow (unsigned integers, Float16,
//!   FixedSizeBinary other than 16 bytes or with a non-UUID extension, millisecond
//!   timestamps, …) — reported when the column is wrapped.
//!
//! Leniency: a null object-field group (optional field groups, parquet-testing case 84)
//! is a missing field; a null list element group is a Variant null; an omitted `value`
//! column is an all-null `value` (cases 41, 131, 132, 138).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryViewArray, BinaryViewBuilder, BooleanArray, Date32Array,
    Decimal32Array, Decimal64Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeBinaryBuilder, StructArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field};
use arrow::error::ArrowError;

use super::layout::{DecimalWidth, ShreddedPrimitive};
use crate::variant::encoding::{self, value_len};
use crate::variant::storage::BinaryColumn;
use crate::variant::validate::check_metadata;

/// Rebuilds the `value` bytes of every row of a shredded Variant struct. Rows that
/// are null in `nulls` (SQL NULL) get a null value.
pub(crate) fn unshred(
    st: &StructArray,
    metadata: &BinaryColumn,
    nulls: Option<&NullBuffer>,
) -> Result<arrow::array::LargeBinaryArray, ArrowError> {
    let level = Level::try_new(st, "$", false)?;
    let mut meta = MetaCache::default();
    // Large offsets: the rebuilt values of a batch may exceed 2 GiB.
    let mut builder = LargeBinaryBuilder::with_capacity(st.len(), 0);
    let mut out = Vec::new();
    for row in 0..st.len() {
        if nulls.is_some_and(|n| n.is_null(row)) {
            builder.append_null();
            continue;
        }
        out.clear();
        let md = metadata
            .get(row)
            .unwrap_or(crate::variant::encoding::EMPTY_METADATA);
        let typed_null = level.typed.as_ref().is_none_or(|t| t.is_null(row));
        let value = level.value.as_ref().and_then(|v| v.get(row));
        match (typed_null, value) {
            // Unshredded row: the bytes as they are (checked by the readers).
            (true, Some(v)) => out.extend_from_slice(v),
            _ => {
                let mut ctx = RowCtx {
                    metadata: md,
                    meta: &mut meta,
                };
                let written = level
                    .write(row, &mut ctx, &mut out)
                    .map_err(|e| e.into_arrow(row))?;
                if !written {
                    out.push(0x00);
                }
            }
        }
        builder.append_value(&out);
    }
    Ok(builder.finish())
}

/// A failure while rebuilding one row: the path from the innermost level outwards.
struct Fail {
    path: Vec<String>,
    msg: String,
}

impl Fail {
    fn new(msg: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            msg: msg.into(),
        }
    }

    fn within(mut self, segment: String) -> Self {
        self.path.push(segment);
        self
    }

    fn into_arrow(self, row: usize) -> ArrowError {
        let path: String = self.path.iter().rev().map(String::as_str).collect();
        ArrowError::InvalidArgumentError(format!(
            "invalid shredded variant in row {} at `${path}`: {}",
            row + 1,
            self.msg
        ))
    }
}

type R<T> = Result<T, Fail>;

/// The row's metadata dictionary, computed once per distinct metadata bytes.
#[derive(Default)]
struct MetaCache<'a> {
    bytes: Option<&'a [u8]>,
    dict: Vec<&'a str>,
    index: std::collections::HashMap<&'a str, u32>,
}

struct RowCtx<'c, 'a> {
    metadata: &'a [u8],
    meta: &'c mut MetaCache<'a>,
}

impl<'a> RowCtx<'_, 'a> {
    /// The dictionary of the row's metadata (checked).
    fn dict(&mut self) -> R<&[&'a str]> {
        if self.meta.bytes != Some(self.metadata) {
            let dict = check_metadata(self.metadata)
                .map_err(|e| Fail::new(format!("invalid metadata: {e}")))?;
            self.meta.index.clear();
            if dict.len() > 8 {
                for (i, name) in dict.iter().enumerate() {
                    // Ids fit in u32: the dictionary size is a 4-byte field at most.
                    self.meta.index.entry(name).or_insert(i as u32);
                }
            }
            self.meta.dict = dict;
            self.meta.bytes = Some(self.metadata);
        }
        Ok(&self.meta.dict)
    }

    /// The dictionary id of a shredded field name.
    fn field_id(&mut self, name: &str) -> R<u32> {
        self.dict()?;
        let found = if self.meta.index.is_empty() {
            self.meta
                .dict
                .iter()
                .position(|n| *n == name)
                .map(|i| i as u32)
        } else {
            self.meta.index.get(name).copied()
        };
        found.ok_or_else(|| {
            Fail::new(format!(
                "shredded field `{name}` is not in the row's metadata dictionary"
            ))
        })
    }
}

/// One `(value, typed_value)` pair: the top level, an object field or a list element.
struct Level {
    /// Validity of the group itself (object field groups and list elements).
    group_nulls: Option<NullBuffer>,
    value: Option<BinaryColumn>,
    typed: Option<Typed>,
}

enum Typed {
    Primitive(Primitive),
    Object {
        nulls: Option<NullBuffer>,
        fields: Vec<(String, Level)>,
        /// The shredded field names, sorted, for the conflict check.
        sorted_names: Vec<String>,
    },
    List {
        nulls: Option<NullBuffer>,
        offsets: ListOffsets,
        values_len: usize,
        element: Box<Level>,
    },
}

impl Typed {
    fn is_null(&self, row: usize) -> bool {
        match self {
            Self::Primitive(p) => p.is_null(row),
            Self::Object { nulls, .. } | Self::List { nulls, .. } => {
                nulls.as_ref().is_some_and(|n| n.is_null(row))
            }
        }
    }
}

enum ListOffsets {
    I32(OffsetBuffer<i32>),
    I64(OffsetBuffer<i64>),
    View32(ScalarBuffer<i32>, ScalarBuffer<i32>),
    View64(ScalarBuffer<i64>, ScalarBuffer<i64>),
    Fixed(usize),
}

impl ListOffsets {
    fn range(&self, row: usize) -> R<std::ops::Range<usize>> {
        let bad = || Fail::new("list offsets out of range");
        let conv = |x: i64| usize::try_from(x).map_err(|_| bad());
        let (start, end) = match self {
            Self::I32(o) => (
                conv(i64::from(*o.get(row).ok_or_else(bad)?))?,
                conv(i64::from(*o.get(row + 1).ok_or_else(bad)?))?,
            ),
            Self::I64(o) => (
                conv(*o.get(row).ok_or_else(bad)?)?,
                conv(*o.get(row + 1).ok_or_else(bad)?)?,
            ),
            Self::View32(o, s) => {
                let start = conv(i64::from(*o.get(row).ok_or_else(bad)?))?;
                (
                    start,
                    start + conv(i64::from(*s.get(row).ok_or_else(bad)?))?,
                )
            }
            Self::View64(o, s) => {
                let start = conv(*o.get(row).ok_or_else(bad)?)?;
                (start, start + conv(*s.get(row).ok_or_else(bad)?)?)
            }
            Self::Fixed(n) => (row * n, row * n + n),
        };
        if start > end {
            return Err(bad());
        }
        Ok(start..end)
    }
}

/// The Variant encoding of every row of a primitive `typed_value` column, exactly
/// as reassembly writes it (a Variant null where the column is null, and the
/// column's nulls beside); `None` when the column is not a primitive shredded type.
pub(crate) fn encode_primitives(
    typed: &ArrayRef,
) -> Result<Option<(BinaryViewArray, Option<NullBuffer>)>, ArrowError> {
    let Ok(primitive) = Primitive::try_new(typed, None, "typed_value") else {
        return Ok(None);
    };
    let mut out = BinaryViewBuilder::with_capacity(typed.len());
    let mut buf = Vec::with_capacity(16);
    for row in 0..typed.len() {
        if primitive.is_null(row) {
            out.append_value([0u8]);
            continue;
        }
        buf.clear();
        primitive
            .write(row, &mut buf)
            .map_err(|e| e.into_arrow(row))?;
        out.append_value(&buf);
    }
    Ok(Some((out.finish(), typed.logical_nulls())))
}

/// A primitive `typed_value` column and the Variant type it stands for.
enum Primitive {
    Boolean(BooleanArray),
    Int8(Int8Array),
    Int16(Int16Array),
    Int32(Int32Array),
    Int64(Int64Array),
    Float(Float32Array),
    Double(Float64Array),
    Decimal32(Decimal32Array, DecimalWidth, u8),
    Decimal64(Decimal64Array, DecimalWidth, u8),
    Decimal128(Decimal128Array, DecimalWidth, u8),
    Date(Date32Array),
    Time(Time64MicrosecondArray),
    TimestampMicros(TimestampMicrosecondArray, bool),
    TimestampNanos(TimestampNanosecondArray, bool),
    String(ArrayRef),
    Binary(BinaryColumn),
    Uuid(FixedSizeBinaryArray),
}

impl Primitive {
    fn try_new(array: &ArrayRef, field: Option<&Field>, path: &str) -> Result<Self, ArrowError> {
        let unsupported = || {
            ArrowError::InvalidArgumentError(format!(
                "invalid shredded variant: typed_value at `{path}` has type {}, which is not \
                 an allowed shredded type",
                array.data_type()
            ))
        };
        let data_type = array.data_type();
        if let DataType::Dictionary(_, v) = data_type {
            let cast = arrow::compute::cast(array, v)?;
            return Self::try_new(&cast, field, path);
        }
        if let DataType::RunEndEncoded(_, v) = data_type {
            let cast = arrow::compute::cast(array, v.data_type())?;
            return Self::try_new(&cast, field, path);
        }
        let extension = field
            .and_then(|f| f.metadata().get("ARROW:extension:name"))
            .map(String::as_str);
        let kind = ShreddedPrimitive::of(data_type, extension).ok_or_else(unsupported)?;
        Ok(match kind {
            ShreddedPrimitive::Boolean => Self::Boolean(array.as_boolean().clone()),
            ShreddedPrimitive::Int8 => Self::Int8(array.as_primitive().clone()),
            ShreddedPrimitive::Int16 => Self::Int16(array.as_primitive().clone()),
            ShreddedPrimitive::Int32 => Self::Int32(array.as_primitive().clone()),
            ShreddedPrimitive::Int64 => Self::Int64(array.as_primitive().clone()),
            ShreddedPrimitive::Float => Self::Float(array.as_primitive().clone()),
            ShreddedPrimitive::Double => Self::Double(array.as_primitive().clone()),
            ShreddedPrimitive::Decimal(w, s) => match data_type {
                DataType::Decimal32(..) => Self::Decimal32(array.as_primitive().clone(), w, s),
                DataType::Decimal64(..) => Self::Decimal64(array.as_primitive().clone(), w, s),
                _ => Self::Decimal128(array.as_primitive().clone(), w, s),
            },
            ShreddedPrimitive::Date => Self::Date(array.as_primitive().clone()),
            ShreddedPrimitive::Time => Self::Time(array.as_primitive().clone()),
            ShreddedPrimitive::TimestampMicros { utc } => {
                Self::TimestampMicros(array.as_primitive().clone(), utc)
            }
            ShreddedPrimitive::TimestampNanos { utc } => {
                Self::TimestampNanos(array.as_primitive().clone(), utc)
            }
            ShreddedPrimitive::String => Self::String(Arc::clone(array)),
            ShreddedPrimitive::Binary => Self::Binary(BinaryColumn::try_new(array, "typed_value")?),
            ShreddedPrimitive::Uuid => Self::Uuid(array.as_fixed_size_binary().clone()),
        })
    }

    fn is_null(&self, row: usize) -> bool {
        match self {
            Self::Boolean(a) => a.is_null(row),
            Self::Int8(a) => a.is_null(row),
            Self::Int16(a) => a.is_null(row),
            Self::Int32(a) => a.is_null(row),
            Self::Int64(a) => a.is_null(row),
            Self::Float(a) => a.is_null(row),
            Self::Double(a) => a.is_null(row),
            Self::Decimal32(a, ..) => a.is_null(row),
            Self::Decimal64(a, ..) => a.is_null(row),
            Self::Decimal128(a, ..) => a.is_null(row),
            Self::Date(a) => a.is_null(row),
            Self::Time(a) => a.is_null(row),
            Self::TimestampMicros(a, _) => a.is_null(row),
            Self::TimestampNanos(a, _) => a.is_null(row),
            Self::String(a) => a.is_null(row),
            Self::Binary(a) => a.get(row).is_none(),
            Self::Uuid(a) => a.is_null(row),
        }
    }

    /// Appends the Variant encoding of row `row` (known non-null).
    fn write(&self, row: usize, out: &mut Vec<u8>) -> R<()> {
        match self {
            Self::Boolean(a) => out.push(if a.value(row) { 0x04 } else { 0x08 }),
            Self::Int8(a) => primitive(out, 3, &a.value(row).to_le_bytes()),
            Self::Int16(a) => primitive(out, 4, &a.value(row).to_le_bytes()),
            Self::Int32(a) => primitive(out, 5, &a.value(row).to_le_bytes()),
            Self::Int64(a) => primitive(out, 6, &a.value(row).to_le_bytes()),
            Self::Double(a) => primitive(out, 7, &a.value(row).to_le_bytes()),
            Self::Float(a) => primitive(out, 14, &a.value(row).to_le_bytes()),
            Self::Decimal32(a, w, s) => decimal(out, i128::from(a.value(row)), *w, *s)?,
            Self::Decimal64(a, w, s) => decimal(out, i128::from(a.value(row)), *w, *s)?,
            Self::Decimal128(a, w, s) => decimal(out, a.value(row), *w, *s)?,
            Self::Date(a) => primitive(out, 11, &a.value(row).to_le_bytes()),
            Self::Time(a) => {
                let micros = a.value(row);
                if !(0..86_400_000_000).contains(&micros) {
                    return Err(Fail::new(format!("time {micros} µs is out of range")));
                }
                primitive(out, 17, &micros.to_le_bytes());
            }
            Self::TimestampMicros(a, tz) => {
                primitive(out, if *tz { 12 } else { 13 }, &a.value(row).to_le_bytes());
            }
            Self::TimestampNanos(a, tz) => {
                primitive(out, if *tz { 18 } else { 19 }, &a.value(row).to_le_bytes());
            }
            Self::String(a) => {
                let s = match a.data_type() {
                    DataType::Utf8 => a.as_string::<i32>().value(row),
                    DataType::LargeUtf8 => a.as_string::<i64>().value(row),
                    _ => a.as_string_view().value(row),
                };
                let len = s.len();
                if len < 64 {
                    out.push(((len as u8) << 2) | 0x01);
                    out.extend_from_slice(s.as_bytes());
                } else {
                    let len = u32::try_from(len).map_err(|_| Fail::new("string too long"))?;
                    primitive(out, 16, &len.to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
            Self::Binary(a) => {
                let b = a.get(row).unwrap_or_default();
                let len = u32::try_from(b.len()).map_err(|_| Fail::new("binary too long"))?;
                primitive(out, 15, &len.to_le_bytes());
                out.extend_from_slice(b);
            }
            // Parquet's UUID and the Variant's are both big-endian.
            Self::Uuid(a) => primitive(out, 20, a.value(row)),
        }
        Ok(())
    }
}

fn primitive(out: &mut Vec<u8>, type_id: u8, payload: &[u8]) {
    out.push(type_id << 2);
    out.extend_from_slice(payload);
}

fn decimal(out: &mut Vec<u8>, unscaled: i128, width: DecimalWidth, scale: u8) -> R<()> {
    let overflow = || Fail::new(format!("decimal {unscaled} does not fit its precision"));
    match width {
        DecimalWidth::D4 => {
            let v = i32::try_from(unscaled).map_err(|_| overflow())?;
            out.extend_from_slice(&[8 << 2, scale]);
            out.extend_from_slice(&v.to_le_bytes());
        }
        DecimalWidth::D8 => {
            let v = i64::try_from(unscaled).map_err(|_| overflow())?;
            out.extend_from_slice(&[9 << 2, scale]);
            out.extend_from_slice(&v.to_le_bytes());
        }
        DecimalWidth::D16 => {
            out.extend_from_slice(&[10 << 2, scale]);
            out.extend_from_slice(&unscaled.to_le_bytes());
        }
    }
    Ok(())
}

impl Level {
    /// Reads the `(value, typed_value)` pair of a group. `group` says whether the
    /// group's own nulls matter (object fields, list elements).
    fn try_new(st: &StructArray, path: &str, group: bool) -> Result<Self, ArrowError> {
        let mut value = None;
        let mut typed = None;
        for (field, column) in st.fields().iter().zip(st.columns()) {
            match field.name().as_str() {
                "value" => value = Some(BinaryColumn::try_new(column, "value")?),
                "typed_value" => typed = Some(Typed::try_new(column, field, path)?),
                "metadata" if !group => {}
                other => {
                    return Err(ArrowError::InvalidArgumentError(format!(
                        "invalid shredded variant: unexpected field `{other}` at `{path}`"
                    )));
                }
            }
        }
        Ok(Self {
            group_nulls: if group { st.nulls().cloned() } else { None },
            value,
            typed,
        })
    }

    /// Appends the rebuilt value of `row`; `Ok(false)` when both `value` and
    /// `typed_value` are null (nothing written).
    fn write(&self, row: usize, ctx: &mut RowCtx<'_, '_>, out: &mut Vec<u8>) -> R<bool> {
        let value = self.value.as_ref().and_then(|v| v.get(row));
        let typed = self.typed.as_ref().filter(|t| !t.is_null(row));
        let Some(typed) = typed else {
            let Some(v) = value else {
                return Ok(false);
            };
            let len = value_len(v).ok_or_else(|| Fail::new("malformed value bytes"))?;
            out.extend_from_slice(&v[..len]);
            return Ok(true);
        };
        match typed {
            Typed::Primitive(p) => {
                if value.is_some() {
                    return Err(conflict());
                }
                p.write(row, out)?;
            }
            Typed::List {
                offsets,
                values_len,
                element,
                ..
            } => {
                if value.is_some() {
                    return Err(conflict());
                }
                let range = offsets.range(row)?;
                if range.end > *values_len {
                    return Err(Fail::new("list offsets out of range"));
                }
                let mut data = Vec::new();
                let mut ends = Vec::with_capacity(range.len());
                for (k, i) in range.enumerate() {
                    let present = !element.group_nulls.as_ref().is_some_and(|n| n.is_null(i));
                    let written = present
                        && element
                            .write(i, ctx, &mut data)
                            .map_err(|e| e.within(format!("[{k}]")))?;
                    if !written {
                        // A missing element reads as a Variant null.
                        data.push(0x00);
                    }
                    ends.push(data.len());
                }
                write_array(out, &ends, &data)?;
            }
            Typed::Object {
                fields,
                sorted_names,
                ..
            } => write_object(row, ctx, fields, sorted_names, value, out)?,
        }
        Ok(true)
    }
}

fn conflict() -> Fail {
    Fail::new(
        "both value and typed_value are non-null (only partially shredded objects may set both)",
    )
}

impl Typed {
    fn try_new(column: &ArrayRef, field: &Field, path: &str) -> Result<Self, ArrowError> {
        let list = |element: &ArrayRef| -> Result<Box<Level>, ArrowError> {
            let Some(st) = element.as_struct_opt() else {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "invalid shredded variant: list elements at `{path}` must be groups, found {}",
                    element.data_type()
                )));
            };
            Ok(Box::new(Level::try_new(st, &format!("{path}[*]"), true)?))
        };
        let nulls = column.nulls().cloned();
        Ok(match column.data_type() {
            DataType::Struct(_) => {
                let st = column.as_struct();
                let mut fields: Vec<(String, Level)> = Vec::with_capacity(st.num_columns());
                for (f, child) in st.fields().iter().zip(st.columns()) {
                    let child_path = format!("{path}.{}", f.name());
                    let Some(group) = child.as_struct_opt() else {
                        return Err(ArrowError::InvalidArgumentError(format!(
                            "invalid shredded variant: shredded field `{child_path}` must be \
                             a group, found {}",
                            child.data_type()
                        )));
                    };
                    if fields.iter().any(|(n, _)| n == f.name()) {
                        return Err(ArrowError::InvalidArgumentError(format!(
                            "invalid shredded variant: field `{child_path}` is shredded twice"
                        )));
                    }
                    fields.push((f.name().clone(), Level::try_new(group, &child_path, true)?));
                }
                let mut sorted_names: Vec<String> = fields.iter().map(|(n, _)| n.clone()).collect();
                sorted_names.sort_unstable();
                Self::Object {
                    nulls,
                    fields,
                    sorted_names,
                }
            }
            DataType::List(_) => {
                let l = column.as_list::<i32>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::I32(l.offsets().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                }
            }
            DataType::LargeList(_) => {
                let l = column.as_list::<i64>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::I64(l.offsets().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                }
            }
            DataType::ListView(_) => {
                let l = column.as_list_view::<i32>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::View32(l.offsets().clone(), l.sizes().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                }
            }
            DataType::LargeListView(_) => {
                let l = column.as_list_view::<i64>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::View64(l.offsets().clone(), l.sizes().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                }
            }
            DataType::FixedSizeList(_, n) => {
                let l = column.as_fixed_size_list();
                let n = usize::try_from(*n).unwrap_or(0);
                Self::List {
                    nulls,
                    offsets: ListOffsets::Fixed(n),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                }
            }
            _ => Self::Primitive(Primitive::try_new(column, Some(field), path)?),
        })
    }
}

/// One entry of a rebuilt object: name, dictionary id and where its bytes are.
struct Entry<'s> {
    name: &'s str,
    id: u32,
    bytes: Src<'s>,
}

enum Src<'s> {
    Scratch(std::ops::Range<usize>),
    Value(&'s [u8]),
}

fn write_object<'s, 'a: 's>(
    row: usize,
    ctx: &mut RowCtx<'_, 'a>,
    fields: &'s [(String, Level)],
    sorted_names: &[String],
    value: Option<&'s [u8]>,
    out: &mut Vec<u8>,
) -> R<()> {
    let mut scratch = Vec::new();
    let mut entries: Vec<Entry<'s>> = Vec::with_capacity(fields.len());
    for (name, level) in fields {
        if level.group_nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            // A null field group (optional groups, case 84) is a missing field.
            continue;
        }
        let start = scratch.len();
        let written = level
            .write(row, ctx, &mut scratch)
            .map_err(|e| e.within(format!(".{name}")))?;
        if written {
            let id = ctx.field_id(name)?;
            entries.push(Entry {
                name,
                id,
                bytes: Src::Scratch(start..scratch.len()),
            });
        }
    }
    if let Some(v) = value {
        let basic = v.first().map(|h| encoding::basic_type(*h));
        if basic != Some(2) {
            return Err(Fail::new(format!(
                "typed_value is an object but value is not an object (it is {})",
                describe(v)
            )));
        }
        let dict: &[&'a str] = ctx.dict()?;
        for (id, bytes) in object_fields(v)? {
            let name: &'a str = usize::try_from(id)
                .ok()
                .and_then(|i| dict.get(i))
                .copied()
                .ok_or_else(|| {
                    Fail::new(format!("field id {id} of value is not in the metadata"))
                })?;
            if sorted_names
                .binary_search_by(|n| n.as_str().cmp(name))
                .is_ok()
            {
                // Even when the shredded field is missing in this row (case 43).
                return Err(Fail::new(format!(
                    "key `{name}` is in both value and typed_value (a partially shredded \
                     object's value must hold only non-shredded keys)"
                )));
            }
            entries.push(Entry {
                name,
                id,
                bytes: Src::Value(bytes),
            });
        }
    }
    entries.sort_by(|a, b| a.name.cmp(b.name));
    for pair in entries.windows(2) {
        if pair[0].name == pair[1].name {
            let name = pair[0].name;
            return Err(Fail::new(format!("key `{name}` appears twice in value")));
        }
    }
    let fields: Vec<(usize, &[u8])> = entries
        .iter()
        .map(|e| {
            let bytes = match &e.bytes {
                Src::Scratch(r) => &scratch[r.clone()],
                Src::Value(b) => *b,
            };
            (e.id as usize, bytes)
        })
        .collect();
    encoding::write_object(out, &fields).map_err(too_large)
}

fn write_array(out: &mut Vec<u8>, ends: &[usize], data: &[u8]) -> R<()> {
    encoding::write_array_from_ends(out, ends, data).map_err(too_large)
}

fn too_large(e: encoding::TooLarge) -> Fail {
    Fail::new(e.to_string())
}

/// The `(field id, value bytes)` pairs of the object at the start of `v`.
fn object_fields(v: &[u8]) -> R<Vec<(u32, &[u8])>> {
    let bad = || Fail::new("value holds a malformed object");
    let c = encoding::container(v, true)
        .filter(|c| c.data_start <= v.len())
        .ok_or_else(bad)?;
    let mut fields = Vec::with_capacity(c.n);
    for i in 0..c.n {
        let id = c.id(v, i).ok_or_else(bad)?;
        let child = c.child(v, i).ok_or_else(bad)?;
        fields.push((u32::try_from(id).map_err(|_| bad())?, child));
    }
    Ok(fields)
}

/// A short description of a value's type for error messages.
fn describe(v: &[u8]) -> &'static str {
    match v.first() {
        None => "empty",
        Some(0x00) => "a Variant null",
        Some(h) => match encoding::basic_type(*h) {
            0 => "a primitive",
            1 => "a string",
            2 => "an object",
            _ => "an array",
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{BinaryArray, Decimal128Array, Int32Array, ListArray, StringArray};
    use arrow::datatypes::{Field, Fields};

    use super::*;
    use crate::array::VariantInput;

    fn bin(rows: Vec<Option<&[u8]>>) -> ArrayRef {
        Arc::new(BinaryArray::from(rows))
    }

    fn variant(metadata: ArrayRef, value: Option<ArrayRef>, typed: ArrayRef) -> ArrayRef {
        let mut fields = vec![Field::new("metadata", metadata.data_type().clone(), false)];
        let mut columns = vec![metadata];
        if let Some(v) = value {
            fields.push(Field::new("value", v.data_type().clone(), true));
            columns.push(v);
        }
        fields.push(Field::new("typed_value", typed.data_type().clone(), true));
        columns.push(typed);
        Arc::new(StructArray::new(Fields::from(fields), columns, None))
    }

    fn group(value: Option<ArrayRef>, typed: ArrayRef, nulls: Option<NullBuffer>) -> ArrayRef {
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        if let Some(v) = value {
            fields.push(Field::new("value", v.data_type().clone(), true));
            columns.push(v);
        }
        fields.push(Field::new("typed_value", typed.data_type().clone(), true));
        columns.push(typed);
        Arc::new(StructArray::new(Fields::from(fields), columns, nulls))
    }

    const EMPTY: &[u8] = &[0x01, 0x00, 0x00];
    /// Metadata with the single key "a".
    const META_A: &[u8] = &[0x01, 0x01, 0x00, 0x01, b'a'];

    #[test]
    fn decimal_width_follows_precision() {
        let typed: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(12345), None])
                .with_precision_and_scale(5, 2)
                .unwrap(),
        );
        let meta = bin(vec![Some(EMPTY), Some(EMPTY)]);
        let value = bin(vec![None, Some(&[0x0c, 0x07])]);
        let input = VariantInput::try_new(&variant(meta, Some(value), typed)).unwrap();
        assert_eq!(input.get(0).unwrap().1, &[0x20, 2, 0x39, 0x30, 0, 0]);
        assert_eq!(input.get(1).unwrap().1, &[0x0c, 0x07]);
    }

    #[test]
    fn shredded_name_missing_from_metadata_is_an_error() {
        let a = group(None, Arc::new(Int32Array::from(vec![Some(1)])), None);
        let typed: ArrayRef = Arc::new(StructArray::new(
            Fields::from(vec![Field::new("b", a.data_type().clone(), false)]),
            vec![a],
            None,
        ));
        let e = VariantInput::try_new(&variant(bin(vec![Some(META_A)]), None, typed))
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 1") && e.contains("`b`"), "{e}");
    }

    #[test]
    fn null_field_group_is_missing_and_null_element_is_variant_null() {
        // {"a": 7} in row 0; row 1 has a null field group: {}.
        let a = group(
            None,
            Arc::new(Int32Array::from(vec![Some(7), Some(9)])),
            Some(NullBuffer::from(vec![true, false])),
        );
        let typed: ArrayRef = Arc::new(StructArray::new(
            Fields::from(vec![Field::new("a", a.data_type().clone(), true)]),
            vec![a],
            None,
        ));
        let input =
            VariantInput::try_new(&variant(bin(vec![Some(META_A); 2]), None, typed)).unwrap();
        assert_eq!(
            input.get(0).unwrap().1,
            &[0x02, 1, 0, 0, 5, 0x14, 7, 0, 0, 0]
        );
        assert_eq!(input.get(1).unwrap().1, &[0x02, 0, 0]);

        // ["x", <null element group>] sliced to its second row.
        let element = group(
            None,
            Arc::new(StringArray::from(vec![Some("z"), Some("x"), Some("y")])),
            Some(NullBuffer::from(vec![true, true, false])),
        );
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("element", element.data_type().clone(), true)),
            OffsetBuffer::from_lengths([1, 2]),
            element,
            None,
        ));
        let column = variant(bin(vec![Some(EMPTY); 2]), None, list).slice(1, 1);
        let input = VariantInput::try_new(&column).unwrap();
        assert_eq!(
            input.get(0).unwrap().1,
            &[0x03, 2, 0, 2, 3, 0x05, b'x', 0x00]
        );
    }

    #[test]
    fn malformed_value_in_a_merge_is_an_error_not_a_panic() {
        let a = group(None, Arc::new(Int32Array::from(vec![Some(1)])), None);
        let typed: ArrayRef = Arc::new(StructArray::new(
            Fields::from(vec![Field::new("a", a.data_type().clone(), false)]),
            vec![a],
            None,
        ));
        for bad in [&[0x02u8][..], &[0x02, 5, 0], &[0x02, 1, 9, 0, 1, 0x0c]] {
            let column = variant(
                bin(vec![Some(META_A)]),
                Some(bin(vec![Some(bad)])),
                Arc::clone(&typed),
            );
            assert!(VariantInput::try_new(&column).is_err(), "{bad:?}");
        }
    }
}
