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

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryViewArray, BinaryViewBuilder, BooleanArray, Date32Array,
    Decimal32Array, Decimal64Array, Decimal128Array, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeStringArray, StringArray,
    StringViewArray, StructArray, Time64MicrosecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field};
use arrow::error::ArrowError;
use std::cell::Cell;
use std::collections::HashMap;

use super::shredded::{DecimalWidth, ShreddedPrimitive};
use crate::variant::encoding::{self, value_len};
use crate::variant::storage::BinaryColumn;
use crate::variant::validate::check_metadata_into;

/// Rebuilds the `value` bytes of every row of a shredded Variant struct, one view
/// per row (never null: rows that are null in `nulls`, SQL NULL, hold a Variant
/// null, for the caller's null buffer to mask).
///
/// Each row is written straight into the output block, and the buffers of nested
/// objects and arrays are reused from row to row, so a batch allocates a handful of
/// times instead of once per object.
pub(crate) fn unshred(
    st: &StructArray,
    metadata: &BinaryColumn,
    nulls: Option<&NullBuffer>,
) -> Result<BinaryViewArray, ArrowError> {
    let mut slots = 0;
    let level = Level::try_new(st, "$", false, &mut slots)?;
    let mut ctx = RowCtx::new(slots);
    let mut out = ViewWriter::new(st.len());
    for row in 0..st.len() {
        if nulls.is_some_and(|n| n.is_null(row)) {
            out.data.push(0x00);
            out.end_row()?;
            continue;
        }
        let typed_null = level.typed.as_ref().is_none_or(|t| t.is_null(row));
        let value = level.value.as_ref().and_then(|v| v.get(row));
        match (typed_null, value) {
            // Unshredded row: the bytes as they are (checked by the readers).
            (true, Some(v)) => out.data.extend_from_slice(v),
            _ => {
                ctx.set_metadata(metadata.get(row).unwrap_or(encoding::EMPTY_METADATA));
                let written = level
                    .write(row, &mut ctx, &mut out.data)
                    .map_err(|e| e.into_arrow(row))?;
                if !written {
                    out.data.push(0x00);
                }
            }
        }
        out.end_row()?;
    }
    out.finish()
}

/// Rows written into data blocks, and a view of each.
struct ViewWriter {
    views: Vec<u128>,
    blocks: Vec<arrow::buffer::Buffer>,
    data: Vec<u8>,
    row_start: usize,
}

impl ViewWriter {
    /// A block is closed once it passes this size, so that view offsets (u32)
    /// never overflow however large one row is.
    const BLOCK: usize = 1 << 30;

    fn new(rows: usize) -> Self {
        Self {
            views: Vec::with_capacity(rows),
            blocks: Vec::new(),
            data: Vec::new(),
            row_start: 0,
        }
    }

    /// Ends the row that was appended to `data` since the last call.
    fn end_row(&mut self) -> Result<(), ArrowError> {
        let row = &self.data[self.row_start..];
        let too_large = || {
            ArrowError::InvalidArgumentError(format!(
                "a rebuilt variant value of {} bytes exceeds 4 GiB",
                row.len()
            ))
        };
        u32::try_from(row.len()).map_err(|_| too_large())?;
        let block = u32::try_from(self.blocks.len()).map_err(|_| too_large())?;
        let offset = u32::try_from(self.row_start).map_err(|_| too_large())?;
        self.views
            .push(arrow::array::builder::make_view(row, block, offset));
        if self.data.len() > Self::BLOCK {
            self.blocks
                .push(arrow::buffer::Buffer::from_vec(std::mem::take(
                    &mut self.data,
                )));
        }
        self.row_start = self.data.len();
        Ok(())
    }

    fn finish(mut self) -> Result<BinaryViewArray, ArrowError> {
        if !self.data.is_empty() {
            self.blocks.push(arrow::buffer::Buffer::from_vec(self.data));
        }
        BinaryViewArray::try_new(ScalarBuffer::from(self.views), self.blocks, None)
    }
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

/// A metadata dictionary met in the batch, read once however many rows share it.
struct Dict<'a> {
    /// Whether `names` (and `index`) have been read and checked.
    checked: bool,
    names: Vec<&'a str>,
    /// Name to id, for large dictionaries only (small ones are scanned).
    index: HashMap<&'a str, u32>,
    /// The dictionary id of every shredded object field (by slot, see
    /// [`ObjField::slot`]); `u32::MAX` until looked up.
    slot_ids: Vec<u32>,
}

impl Dict<'_> {
    fn new(slots: usize) -> Self {
        Self {
            checked: false,
            names: Vec::new(),
            index: HashMap::new(),
            slot_ids: vec![u32::MAX; slots],
        }
    }
}

/// Dictionaries up to this size are scanned for a name instead of hashed.
const SCAN_DICT: usize = 32;

/// At most this many distinct dictionaries are kept per batch (then the cache
/// starts again), so that a batch of all-different metadata stays bounded.
const MAX_DICTS: usize = 256;

/// What the rebuild of a batch carries from row to row.
struct RowCtx<'a> {
    slots: usize,
    /// The current row's metadata and its entry in `dicts`.
    metadata: &'a [u8],
    current: usize,
    dicts: Vec<Dict<'a>>,
    by_bytes: HashMap<&'a [u8], usize>,
    /// Reused buffers of the objects and arrays being written.
    frames: Vec<Frame<'a>>,
}

/// Buffers for writing one object or array.
#[derive(Default)]
struct Frame<'a> {
    entries: Vec<Entry<'a>>,
    /// Where each child starts, from the container's first data byte.
    starts: Vec<usize>,
}

impl<'a> RowCtx<'a> {
    fn new(slots: usize) -> Self {
        Self {
            slots,
            metadata: encoding::EMPTY_METADATA,
            current: 0,
            dicts: vec![Dict::new(slots)],
            by_bytes: HashMap::from([(encoding::EMPTY_METADATA, 0)]),
            frames: Vec::new(),
        }
    }

    /// Makes `metadata` the current row's. What was read of a dictionary is kept
    /// for every later row with the same bytes (rows of one writer share a few).
    fn set_metadata(&mut self, metadata: &'a [u8]) {
        if std::ptr::eq(self.metadata, metadata) || self.metadata == metadata {
            return;
        }
        self.metadata = metadata;
        self.current = if let Some(&i) = self.by_bytes.get(metadata) {
            i
        } else {
            if self.dicts.len() >= MAX_DICTS {
                self.dicts.clear();
                self.by_bytes.clear();
            }
            self.dicts.push(Dict::new(self.slots));
            self.by_bytes.insert(metadata, self.dicts.len() - 1);
            self.dicts.len() - 1
        };
    }

    fn current(&mut self) -> &mut Dict<'a> {
        &mut self.dicts[self.current]
    }

    /// The dictionary of the row's metadata (checked).
    fn dict(&mut self) -> R<&[&'a str]> {
        let metadata = self.metadata;
        let d = &mut self.dicts[self.current];
        if !d.checked {
            check_metadata_into(metadata, &mut d.names)
                .map_err(|e| Fail::new(format!("invalid metadata: {e}")))?;
            d.index.clear();
            if d.names.len() > SCAN_DICT {
                for (i, name) in d.names.iter().enumerate() {
                    // Ids fit in u32: the dictionary size is a 4-byte field at most.
                    d.index.entry(name).or_insert(i as u32);
                }
            }
            d.checked = true;
        }
        Ok(&d.names)
    }

    /// The dictionary id of a shredded field name (the first, where an unsorted
    /// dictionary holds it twice).
    fn field_id(&mut self, slot: usize, name: &str) -> R<u32> {
        if let Some(&id) = self
            .current()
            .slot_ids
            .get(slot)
            .filter(|id| **id != u32::MAX)
        {
            return Ok(id);
        }
        self.dict()?;
        let d = self.current();
        let found = if d.names.len() <= SCAN_DICT {
            d.names.iter().position(|n| *n == name).map(|i| i as u32)
        } else {
            d.index.get(name).copied()
        };
        let id = found.ok_or_else(|| {
            Fail::new(format!(
                "shredded field `{name}` is not in the row's metadata dictionary"
            ))
        })?;
        if let Some(cached) = d.slot_ids.get_mut(slot) {
            *cached = id;
        }
        Ok(id)
    }

    fn take_frame(&mut self) -> Frame<'a> {
        let mut frame = self.frames.pop().unwrap_or_default();
        frame.entries.clear();
        frame.starts.clear();
        frame
    }
}

/// A shredded object field.
struct ObjField {
    name: String,
    /// Its index among all object fields of the column, for [`RowCtx::field_id`].
    slot: usize,
    level: Level,
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
        /// Sorted by name (the order they are written in).
        fields: Vec<ObjField>,
        /// The offset width of the last row's object here: the guess for the
        /// next, whose header is reserved before its fields are written.
        width: Cell<u8>,
    },
    List {
        nulls: Option<NullBuffer>,
        offsets: ListOffsets,
        values_len: usize,
        element: Box<Level>,
        /// As for objects.
        width: Cell<u8>,
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
    let mut out = BinaryViewBuilder::with_capacity(typed.len());
    let written = for_each_primitive(typed, |bytes| {
        out.append_value(bytes.unwrap_or(&[0u8]));
        Ok::<(), std::convert::Infallible>(())
    });
    match written {
        Ok(None) => Ok(None),
        Ok(Some(Err(e))) => Err(e),
        Ok(Some(Ok(()))) => Ok(Some((out.finish(), typed.logical_nulls()))),
        Err(never) => match never {},
    }
}

/// Each row of a primitive `typed_value` column handed to `each` as the Variant
/// value bytes reassembly writes for it (`None` where the column is null), in
/// one reused buffer. `None` when the column is not a primitive shredded type;
/// `Some(Err)` (having stopped) for a row that cannot be encoded, naming it.
pub(crate) fn for_each_primitive<E>(
    typed: &ArrayRef,
    mut each: impl FnMut(Option<&[u8]>) -> Result<(), E>,
) -> Result<Option<Result<(), ArrowError>>, E> {
    let Ok(primitive) = Primitive::try_new(typed, None, "typed_value") else {
        return Ok(None);
    };
    let mut buf = Vec::with_capacity(16);
    for row in 0..typed.len() {
        if primitive.is_null(row) {
            each(None)?;
            continue;
        }
        buf.clear();
        if let Err(e) = primitive.write(row, &mut buf) {
            return Ok(Some(Err(e.into_arrow(row))));
        }
        each(Some(&buf))?;
    }
    Ok(Some(Ok(())))
}

/// A string `typed_value` column, downcast once per batch.
enum Strings {
    Utf8(StringArray),
    Large(LargeStringArray),
    View(StringViewArray),
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
    String(Strings),
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
            ShreddedPrimitive::String => Self::String(match data_type {
                DataType::Utf8 => Strings::Utf8(array.as_string().clone()),
                DataType::LargeUtf8 => Strings::Large(array.as_string().clone()),
                _ => Strings::View(array.as_string_view().clone()),
            }),
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
            Self::String(Strings::Utf8(a)) => a.is_null(row),
            Self::String(Strings::Large(a)) => a.is_null(row),
            Self::String(Strings::View(a)) => a.is_null(row),
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
                let s = match a {
                    Strings::Utf8(a) => a.value(row),
                    Strings::Large(a) => a.value(row),
                    Strings::View(a) => a.value(row),
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
    /// group's own nulls matter (object fields, list elements). `slots` counts the
    /// object fields numbered so far.
    fn try_new(
        st: &StructArray,
        path: &str,
        group: bool,
        slots: &mut usize,
    ) -> Result<Self, ArrowError> {
        let mut value = None;
        let mut typed = None;
        for (field, column) in st.fields().iter().zip(st.columns()) {
            match field.name().as_str() {
                "value" => {
                    // An all-null `value` (a fully shredded field) is not read per row.
                    if column.logical_null_count() < column.len() {
                        value = Some(BinaryColumn::try_new(column, "value")?);
                    }
                }
                "typed_value" => typed = Some(Typed::try_new(column, field, path, slots)?),
                "metadata" if !group => {}
                other => {
                    return Err(ArrowError::InvalidArgumentError(format!(
                        "invalid shredded variant: unexpected field `{other}` at `{path}`"
                    )));
                }
            }
        }
        Ok(Self {
            group_nulls: if group {
                st.nulls().filter(|n| n.null_count() > 0).cloned()
            } else {
                None
            },
            value,
            typed,
        })
    }

    /// Whether `row` has a value here (`typed_value` or `value` non-null).
    fn present(&self, row: usize) -> bool {
        self.typed.as_ref().is_some_and(|t| !t.is_null(row))
            || self.value.as_ref().is_some_and(|v| v.get(row).is_some())
    }

    /// Appends the rebuilt value of `row`; `Ok(false)` when both `value` and
    /// `typed_value` are null (nothing written).
    fn write<'a>(&'a self, row: usize, ctx: &mut RowCtx<'a>, out: &mut Vec<u8>) -> R<bool> {
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
                width,
                ..
            } => {
                if value.is_some() {
                    return Err(conflict());
                }
                let range = offsets.range(row)?;
                if range.end > *values_len {
                    return Err(Fail::new("list offsets out of range"));
                }
                let mut frame = ctx.take_frame();
                let open = Open::new(out, range.len(), 0, width)?;
                for (k, i) in range.enumerate() {
                    frame.starts.push(out.len() - open.data_start());
                    let present = !element.group_nulls.as_ref().is_some_and(|n| n.is_null(i));
                    let written = present
                        && element
                            .write(i, ctx, out)
                            .map_err(|e| e.within(format!("[{k}]")))?;
                    if !written {
                        // A missing element reads as a Variant null.
                        out.push(0x00);
                    }
                }
                open.close(out, std::iter::empty(), &frame.starts, width)?;
                ctx.frames.push(frame);
            }
            Typed::Object { fields, width, .. } => {
                write_object(row, ctx, fields, width, value, out)?;
            }
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
    fn try_new(
        column: &ArrayRef,
        field: &Field,
        path: &str,
        slots: &mut usize,
    ) -> Result<Self, ArrowError> {
        let mut list = |element: &ArrayRef| -> Result<Box<Level>, ArrowError> {
            let Some(st) = element.as_struct_opt() else {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "invalid shredded variant: list elements at `{path}` must be groups, found {}",
                    element.data_type()
                )));
            };
            Ok(Box::new(Level::try_new(
                st,
                &format!("{path}[*]"),
                true,
                slots,
            )?))
        };
        let nulls = column.nulls().filter(|n| n.null_count() > 0).cloned();
        Ok(match column.data_type() {
            DataType::Struct(_) => {
                let st = column.as_struct();
                let mut fields: Vec<ObjField> = Vec::with_capacity(st.num_columns());
                for (f, child) in st.fields().iter().zip(st.columns()) {
                    let child_path = format!("{path}.{}", f.name());
                    let Some(group) = child.as_struct_opt() else {
                        return Err(ArrowError::InvalidArgumentError(format!(
                            "invalid shredded variant: shredded field `{child_path}` must be \
                             a group, found {}",
                            child.data_type()
                        )));
                    };
                    let slot = *slots;
                    *slots += 1;
                    fields.push(ObjField {
                        name: f.name().clone(),
                        slot,
                        level: Level::try_new(group, &child_path, true, slots)?,
                    });
                }
                fields.sort_unstable_by(|a, b| a.name.cmp(&b.name));
                if let Some(pair) = fields.windows(2).find(|p| p[0].name == p[1].name) {
                    return Err(ArrowError::InvalidArgumentError(format!(
                        "invalid shredded variant: field `{path}.{}` is shredded twice",
                        pair[0].name
                    )));
                }
                Self::Object {
                    nulls,
                    fields,
                    width: Cell::new(1),
                }
            }
            DataType::List(_) => {
                let l = column.as_list::<i32>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::I32(l.offsets().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                    width: Cell::new(1),
                }
            }
            DataType::LargeList(_) => {
                let l = column.as_list::<i64>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::I64(l.offsets().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                    width: Cell::new(1),
                }
            }
            DataType::ListView(_) => {
                let l = column.as_list_view::<i32>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::View32(l.offsets().clone(), l.sizes().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                    width: Cell::new(1),
                }
            }
            DataType::LargeListView(_) => {
                let l = column.as_list_view::<i64>();
                Self::List {
                    nulls,
                    offsets: ListOffsets::View64(l.offsets().clone(), l.sizes().clone()),
                    values_len: l.values().len(),
                    element: list(l.values())?,
                    width: Cell::new(1),
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
                    width: Cell::new(1),
                }
            }
            _ => Self::Primitive(Primitive::try_new(column, Some(field), path)?),
        })
    }
}

/// One entry of a rebuilt object: name, dictionary id and where its bytes are.
struct Entry<'a> {
    name: &'a str,
    id: u32,
    bytes: Src<'a>,
}

enum Src<'a> {
    /// The shredded field at this index.
    Field(usize),
    Value(&'a [u8]),
}

/// A container whose header room is reserved in `out` before its children are
/// written after it, so that no child is copied again. The room follows a guess
/// of the offset width (the last row's); a wrong guess moves the children once.
struct Open {
    start: usize,
    n: usize,
    id_width: usize,
    reserved: usize,
}

impl Open {
    fn new(out: &mut Vec<u8>, n: usize, id_width: usize, width: &Cell<u8>) -> R<Self> {
        encoding::uint_width(n).ok_or_else(|| too_large(encoding::TooLarge))?;
        let reserved = encoding::container_header_size(n, id_width, usize::from(width.get()));
        let start = out.len();
        out.resize(start + reserved, 0);
        Ok(Self {
            start,
            n,
            id_width,
            reserved,
        })
    }

    fn data_start(&self) -> usize {
        self.start + self.reserved
    }

    /// Writes the header (an object's when `id_width > 0`) in front of the
    /// children, which begin at `starts` from the first data byte.
    fn close(
        self,
        out: &mut Vec<u8>,
        ids: impl Iterator<Item = usize>,
        starts: &[usize],
        width: &Cell<u8>,
    ) -> R<()> {
        let data_start = self.data_start();
        let data_len = out.len() - data_start;
        let off_w = encoding::uint_width(data_len).ok_or_else(|| too_large(encoding::TooLarge))?;
        width.set(off_w as u8);
        let size = encoding::container_header_size(self.n, self.id_width, off_w);
        if size > self.reserved {
            out.resize(out.len() + size - self.reserved, 0);
            out.copy_within(data_start..data_start + data_len, self.start + size);
        } else if size < self.reserved {
            out.copy_within(data_start.., self.start + size);
            out.truncate(self.start + size + data_len);
        }
        let h = &mut out[self.start..self.start + size];
        h[0] = if self.id_width > 0 {
            encoding::object_header(self.n, self.id_width, off_w)
        } else {
            encoding::array_header(self.n, off_w)
        };
        let mut p = 1;
        encoding::put_uint(h, &mut p, self.n, encoding::count_width(self.n));
        for id in ids {
            encoding::put_uint(h, &mut p, id, self.id_width);
        }
        for &start in starts {
            encoding::put_uint(h, &mut p, start, off_w);
        }
        encoding::put_uint(h, &mut p, data_len, off_w);
        Ok(())
    }
}

/// Writes the object of `row`: its present shredded `fields` (sorted by name),
/// merged with the fields of a partially shredded object's `value`.
fn write_object<'a>(
    row: usize,
    ctx: &mut RowCtx<'a>,
    fields: &'a [ObjField],
    width: &Cell<u8>,
    value: Option<&'a [u8]>,
    out: &mut Vec<u8>,
) -> R<()> {
    let mut frame = ctx.take_frame();
    for (i, field) in fields.iter().enumerate() {
        // A null field group (optional groups, case 84) is a missing field, as is
        // a group with both columns null.
        if field
            .level
            .group_nulls
            .as_ref()
            .is_some_and(|n| n.is_null(row))
            || !field.level.present(row)
        {
            continue;
        }
        let id = ctx
            .field_id(field.slot, &field.name)
            .map_err(|e| e.within(format!(".{}", field.name)))?;
        frame.entries.push(Entry {
            name: &field.name,
            id,
            bytes: Src::Field(i),
        });
    }
    if let Some(v) = value {
        merge_residual(ctx, fields, v, &mut frame.entries)?;
        // The shredded fields come sorted; the residual's are merged in.
        frame.entries.sort_unstable_by(|a, b| a.name.cmp(b.name));
        if let Some(pair) = frame.entries.windows(2).find(|p| p[0].name == p[1].name) {
            let name = pair[0].name;
            return Err(Fail::new(format!("key `{name}` appears twice in value")));
        }
    }
    let max_id = frame.entries.iter().map(|e| e.id).max().unwrap_or(0);
    let id_width =
        encoding::uint_width(max_id as usize).ok_or_else(|| too_large(encoding::TooLarge))?;
    let open = Open::new(out, frame.entries.len(), id_width, width)?;
    for e in &frame.entries {
        frame.starts.push(out.len() - open.data_start());
        match e.bytes {
            Src::Field(i) => {
                let field = &fields[i];
                field
                    .level
                    .write(row, ctx, out)
                    .map_err(|e| e.within(format!(".{}", field.name)))?;
            }
            Src::Value(bytes) => out.extend_from_slice(bytes),
        }
    }
    let ids = frame.entries.iter().map(|e| e.id as usize);
    open.close(out, ids, &frame.starts, width)?;
    ctx.frames.push(frame);
    Ok(())
}

/// Adds the fields of a partially shredded object's `value` to `entries`.
fn merge_residual<'a>(
    ctx: &mut RowCtx<'a>,
    fields: &[ObjField],
    v: &'a [u8],
    entries: &mut Vec<Entry<'a>>,
) -> R<()> {
    let basic = v.first().map(|h| encoding::basic_type(*h));
    if basic != Some(2) {
        return Err(Fail::new(format!(
            "typed_value is an object but value is not an object (it is {})",
            describe(v)
        )));
    }
    let bad = || Fail::new("value holds a malformed object");
    let c = encoding::container(v, true)
        .filter(|c| c.data_start <= v.len())
        .ok_or_else(bad)?;
    let dict: &[&'a str] = ctx.dict()?;
    for i in 0..c.n {
        let id = c.id(v, i).ok_or_else(bad)?;
        let bytes = c.child(v, i).ok_or_else(bad)?;
        let name: &'a str = dict
            .get(id)
            .copied()
            .ok_or_else(|| Fail::new(format!("field id {id} of value is not in the metadata")))?;
        if fields
            .binary_search_by(|f| f.name.as_str().cmp(name))
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
            id: u32::try_from(id).map_err(|_| bad())?,
            bytes: Src::Value(bytes),
        });
    }
    Ok(())
}

fn too_large(e: encoding::TooLarge) -> Fail {
    Fail::new(e.to_string())
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

    /// The Variant encoding of a string.
    fn string(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        if s.len() < 64 {
            out.push(((s.len() as u8) << 2) | 0x01);
        } else {
            out.push(16 << 2);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        out.extend_from_slice(s.as_bytes());
        out
    }

    #[test]
    fn headers_reserved_by_guess_are_right_when_the_guess_is_wrong() {
        // Rows whose objects and arrays need 1-, 2-, then 1-byte offsets, so that
        // the reserved header room is first too small and then too large.
        let texts = ["x".to_string(), "y".repeat(300), "z".to_string()];
        let meta: &[u8] = &[0x01, 2, 0, 1, 2, b'a', b'b'];
        // The residual {"b": 1} beside the shredded "a".
        let residual: &[u8] = &[0x02, 1, 1, 0, 2, 0x0c, 1];
        let a = group(
            None,
            Arc::new(StringArray::from(
                texts.iter().map(String::as_str).collect::<Vec<_>>(),
            )),
            None,
        );
        let object: ArrayRef = Arc::new(StructArray::new(
            Fields::from(vec![Field::new("a", a.data_type().clone(), false)]),
            vec![a],
            None,
        ));
        let column = variant(
            bin(vec![Some(meta); 3]),
            Some(bin(vec![Some(residual); 3])),
            object,
        );
        let input = VariantInput::try_new(&column).unwrap();
        for (row, text) in texts.iter().enumerate() {
            let mut expected = Vec::new();
            encoding::write_object(&mut expected, &[(0, &string(text)), (1, &[0x0c, 1])]).unwrap();
            assert_eq!(input.get(row).unwrap().1, expected.as_slice(), "row {row}");
        }

        // The same texts as one-element arrays.
        let element = group(
            None,
            Arc::new(StringArray::from(
                texts.iter().map(String::as_str).collect::<Vec<_>>(),
            )),
            None,
        );
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("element", element.data_type().clone(), true)),
            OffsetBuffer::from_lengths([1, 1, 1]),
            element,
            None,
        ));
        let input = VariantInput::try_new(&variant(bin(vec![Some(EMPTY); 3]), None, list)).unwrap();
        for (row, text) in texts.iter().enumerate() {
            let mut expected = Vec::new();
            encoding::write_array(&mut expected, &[&string(text)]).unwrap();
            assert_eq!(input.get(row).unwrap().1, expected.as_slice(), "row {row}");
        }
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
