//! The byte-level building blocks of the Variant encoding, in one place: the
//! constants, value headers, little-endian unsigned integers of 1–4 bytes, the
//! layout of object and array headers, the length of an encoded value, and the
//! writers of objects, arrays and metadata dictionaries.
//!
//! Every other module that reads or writes Variant bytes (`raw`, `validate`,
//! `json`, the shredder and the unshredder) calls these; none keeps a copy.
//! Reads are bounds-checked and return `None` when the bytes do not fit, so
//! that no input can make them panic.
//!
//! ```
//! use df_variant::variant::encoding::{write_array, write_object, value_len, EMPTY_METADATA};
//! // {"a": [true]} with field id 0: an object holding an array.
//! let mut array = Vec::new();
//! write_array(&mut array, &[&[0x04][..]]).unwrap();
//! let mut object = Vec::new();
//! write_object(&mut object, &[(0, &array[..])]).unwrap();
//! assert_eq!(value_len(&object), Some(object.len()));
//! assert_eq!(parquet_variant::Variant::try_new(&[0x01, 0x01, 0x00, 0x01, b'a'], &object)
//!     .unwrap().get_object_field("a").unwrap().as_list().unwrap().len(), 1);
//! # let _ = EMPTY_METADATA;
//! ```

/// The deepest nesting accepted (Spark's JSON parser limit).
pub const MAX_DEPTH: usize = 1000;

/// The metadata of a Variant without object fields: version 1, no strings.
pub const EMPTY_METADATA: &[u8] = &[0x01, 0x00, 0x00];

/// The value bytes of a Variant null.
pub const VARIANT_NULL: &[u8] = &[0x00];

/// Basic type of a primitive value (the low two bits of its header).
pub const PRIMITIVE: u8 = 0;
/// Basic type of a short string (up to 63 bytes, length in the header).
pub const SHORT_STRING: u8 = 1;
/// Basic type of an object.
pub const OBJECT: u8 = 2;
/// Basic type of an array.
pub const ARRAY: u8 = 3;

/// The largest value an offset, id or count may take (4-byte fields).
pub const MAX_UINT: usize = u32::MAX as usize;

/// The basic type (0–3) of a value header byte.
#[inline]
pub fn basic_type(header: u8) -> u8 {
    header & 0x03
}

/// The value header of a primitive with the given type id.
#[inline]
pub fn primitive_header(type_id: u8) -> u8 {
    type_id << 2
}

/// The little-endian unsigned integer of `width` bytes at `pos`; `None` when it
/// does not fit in `bytes`.
#[inline]
pub fn read_uint(bytes: &[u8], pos: usize, width: usize) -> Option<usize> {
    let slice = bytes.get(pos..pos.checked_add(width)?)?;
    Some(
        slice
            .iter()
            .rev()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b)),
    )
}

/// The smallest number of bytes (1–4) that holds `max` as an unsigned integer;
/// `None` when it needs more than 4.
#[inline]
pub fn uint_width(max: usize) -> Option<usize> {
    Some(match max {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ if max <= MAX_UINT => 4,
        _ => return None,
    })
}

/// Appends the low `width` bytes of `v`, little-endian.
#[inline]
pub fn push_uint(out: &mut Vec<u8>, v: usize, width: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes()[..width]);
}

/// Writes the low `width` bytes of `v` at `*pos` in `buf` and advances `*pos`
/// (for headers written in place in front of their children).
#[inline]
pub fn put_uint(buf: &mut [u8], pos: &mut usize, v: usize, width: usize) {
    if let Some(dst) = buf.get_mut(*pos..*pos + width) {
        dst.copy_from_slice(&(v as u32).to_le_bytes()[..width]);
    }
    *pos += width;
}

/// The header byte of an object with `n` fields, field ids of `id_width` bytes
/// and offsets of `offset_width` bytes.
#[inline]
pub fn object_header(n: usize, id_width: usize, offset_width: usize) -> u8 {
    OBJECT
        | ((offset_width as u8 - 1) << 2)
        | ((id_width as u8 - 1) << 4)
        | (u8::from(is_large(n)) << 6)
}

/// The header byte of an array with `n` elements and offsets of `offset_width`
/// bytes.
#[inline]
pub fn array_header(n: usize, offset_width: usize) -> u8 {
    ARRAY | ((offset_width as u8 - 1) << 2) | (u8::from(is_large(n)) << 4)
}

/// Whether a container of `n` children writes its count in 4 bytes (else 1).
#[inline]
pub fn is_large(n: usize) -> bool {
    n > 0xFF
}

/// The number of bytes of a container's child count.
#[inline]
pub fn count_width(n: usize) -> usize {
    if is_large(n) { 4 } else { 1 }
}

/// The size of an object (`id_width > 0`) or array (`id_width == 0`) header for
/// `n` children: header byte, count, field ids and the `n + 1` offsets.
#[inline]
pub fn container_header_size(n: usize, id_width: usize, offset_width: usize) -> usize {
    1 + count_width(n) + n * id_width + (n + 1) * offset_width
}

/// The layout of an object or array header: where its field ids (objects only),
/// offsets and values start, and their widths.
#[derive(Debug, Clone, Copy)]
pub struct Container {
    /// Number of fields or elements.
    pub n: usize,
    /// Start of the field-id list (objects only).
    pub ids_start: usize,
    /// Width of a field id (0 for arrays).
    pub id_w: usize,
    /// Start of the offset list.
    pub offs_start: usize,
    /// Width of an offset.
    pub off_w: usize,
    /// Start of the children's bytes.
    pub data_start: usize,
}

impl Container {
    /// Field id `i` (objects only); `None` when it does not fit in `value`.
    #[inline]
    pub fn id(&self, value: &[u8], i: usize) -> Option<usize> {
        read_uint(value, self.ids_start + i * self.id_w, self.id_w)
    }

    /// Offset `i` (`0..=n`), relative to [`Self::data_start`].
    #[inline]
    pub fn offset(&self, value: &[u8], i: usize) -> Option<usize> {
        read_uint(value, self.offs_start + i * self.off_w, self.off_w)
    }

    /// The bytes of child `i`, trimmed to its encoded length; `None` when they
    /// do not fit in `value`.
    #[inline]
    pub fn child<'v>(&self, value: &'v [u8], i: usize) -> Option<&'v [u8]> {
        let rest = value.get(self.data_start.checked_add(self.offset(value, i)?)?..)?;
        rest.get(..value_len(rest)?)
    }
}

/// Parses the header of the object (`is_object`) or array at the start of
/// `value`; `None` when the header does not fit in a `usize` computation or the
/// value is empty (the lists themselves are checked by the reads).
pub fn container(value: &[u8], is_object: bool) -> Option<Container> {
    let hdr = (*value.first()? >> 2) as usize;
    let off_w = (hdr & 0x03) + 1;
    let (id_w, large) = if is_object {
        (((hdr >> 2) & 0x03) + 1, hdr & 0x10 != 0)
    } else {
        (0, hdr & 0x04 != 0)
    };
    let count_w = if large { 4 } else { 1 };
    let n = read_uint(value, 1, count_w)?;
    let ids_start = 1 + count_w;
    let offs_start = n.checked_mul(id_w)?.checked_add(ids_start)?;
    let data_start = n
        .checked_add(1)?
        .checked_mul(off_w)?
        .checked_add(offs_start)?;
    Some(Container {
        n,
        ids_start,
        id_w,
        offs_start,
        off_w,
        data_start,
    })
}

/// The payload size of a fixed-size primitive with type id `type_id` (the bytes
/// after the header); `None` for strings and binaries (length-prefixed) and for
/// unknown type ids.
pub fn fixed_primitive_size(type_id: u8) -> Option<usize> {
    Some(match type_id {
        0..=2 => 0,
        3 => 1,
        4 => 2,
        5 | 11 | 14 => 4,
        6 | 7 | 12 | 13 | 17 | 18 | 19 => 8,
        8 => 5,
        9 => 9,
        10 => 17,
        20 => 16,
        _ => return None,
    })
}

/// Type ids of the length-prefixed primitives (binary 15, string 16).
pub fn is_length_prefixed(type_id: u8) -> bool {
    matches!(type_id, 15 | 16)
}

/// The integer (int8, int16, int32 or int64) at the start of `value`; `None` for
/// any other value or bytes that do not fit.
#[inline]
pub fn read_int(value: &[u8]) -> Option<i64> {
    Some(match *value.first()? {
        0x0C => i64::from(*value.get(1)? as i8),
        0x10 => i64::from(i16::from_le_bytes(value.get(1..3)?.try_into().ok()?)),
        0x14 => i64::from(i32::from_le_bytes(value.get(1..5)?.try_into().ok()?)),
        0x18 => i64::from_le_bytes(value.get(1..9)?.try_into().ok()?),
        _ => return None,
    })
}

/// A DATE or a microsecond TIMESTAMP / TIMESTAMP_NTZ, read from a value's bytes
/// as the integers they hold: days from 1970-01-01 and microseconds since the
/// epoch. Every `i32` and `i64` is a valid value (Spark writes them all), though
/// parquet-variant can decode only those within chrono's years (±262,143).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Temporal {
    /// A DATE: days from 1970-01-01.
    Date(i32),
    /// A TIMESTAMP: microseconds since 1970-01-01T00:00Z.
    Timestamp(i64),
    /// A TIMESTAMP_NTZ: microseconds of wall-clock time since 1970-01-01T00:00.
    TimestampNtz(i64),
}

impl Temporal {
    /// Whether chrono, and so parquet-variant's decoder, can hold the value.
    pub fn within_chrono(self) -> bool {
        match self {
            Self::Date(days) => days
                .checked_add(719_163)
                .and_then(chrono::NaiveDate::from_num_days_from_ce_opt)
                .is_some(),
            Self::Timestamp(micros) | Self::TimestampNtz(micros) => {
                chrono::DateTime::from_timestamp_micros(micros).is_some()
            }
        }
    }
}

/// The date or microsecond timestamp at the start of `value`; `None` for any
/// other value or bytes that do not fit.
///
/// ```
/// use df_variant::variant::encoding::{Temporal, read_temporal};
/// let mut date = vec![0x2c];
/// date.extend_from_slice(&i32::MAX.to_le_bytes());
/// assert_eq!(read_temporal(&date), Some(Temporal::Date(i32::MAX)));
/// assert!(!Temporal::Date(i32::MAX).within_chrono());
/// ```
#[inline]
pub fn read_temporal(value: &[u8]) -> Option<Temporal> {
    let long = || Some(i64::from_le_bytes(value.get(1..9)?.try_into().ok()?));
    Some(match *value.first()? {
        0x2C => Temporal::Date(i32::from_le_bytes(value.get(1..5)?.try_into().ok()?)),
        0x30 => Temporal::Timestamp(long()?),
        0x34 => Temporal::TimestampNtz(long()?),
        _ => return None,
    })
}

/// Appends the encoding of a date or microsecond timestamp (the inverse of
/// [`read_temporal`]); with [`EMPTY_METADATA`] it is a whole Variant.
pub fn push_temporal(out: &mut Vec<u8>, t: Temporal) {
    match t {
        Temporal::Date(days) => {
            out.push(0x2C);
            out.extend_from_slice(&days.to_le_bytes());
        }
        Temporal::Timestamp(micros) => {
            out.push(0x30);
            out.extend_from_slice(&micros.to_le_bytes());
        }
        Temporal::TimestampNtz(micros) => {
            out.push(0x34);
            out.extend_from_slice(&micros.to_le_bytes());
        }
    }
}

/// The UTF-8 bytes of the string (short or long) at the start of `value`;
/// `None` for any other value or bytes that do not fit.
#[inline]
pub fn string_bytes(value: &[u8]) -> Option<&[u8]> {
    let header = *value.first()?;
    match basic_type(header) {
        SHORT_STRING => value.get(1..1 + usize::from(header >> 2)),
        PRIMITIVE if header >> 2 == 16 => {
            let len = read_uint(value, 1, 4)?;
            value.get(5..5usize.checked_add(len)?)
        }
        _ => None,
    }
}

/// The encoded length of the value at the start of `value`; `None` when the
/// header is unknown or the value does not fit.
pub fn value_len(value: &[u8]) -> Option<usize> {
    let header = *value.first()?;
    let hdr = header >> 2;
    let len = match basic_type(header) {
        PRIMITIVE if is_length_prefixed(hdr) => 5usize.checked_add(read_uint(value, 1, 4)?)?,
        PRIMITIVE => 1 + fixed_primitive_size(hdr)?,
        SHORT_STRING => 1 + hdr as usize,
        b => {
            let c = container(value, b == OBJECT)?;
            c.data_start.checked_add(c.offset(value, c.n)?)?
        }
    };
    (len <= value.len()).then_some(len)
}

/// A container or dictionary too large for the encoding's 4-byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("value too large for the variant encoding (over 4 GiB or 2^32 entries)")
    }
}

impl std::error::Error for TooLarge {}

/// Appends an object whose fields are `(field id, value bytes)` pairs, given in
/// the order the spec requires (by field name); the ids refer to the row's
/// metadata.
///
/// # Errors
/// [`TooLarge`] when the fields or their bytes do not fit 4-byte offsets.
pub fn write_object(out: &mut Vec<u8>, fields: &[(usize, &[u8])]) -> Result<(), TooLarge> {
    write_object_parts(out, fields.iter().copied())
}

/// Like [`write_object`], for fields given by an iterator (walked several times,
/// so that no list of them needs to be built).
///
/// # Errors
/// [`TooLarge`] when the data or a field id does not fit 4-byte offsets.
pub fn write_object_parts<'b, I>(out: &mut Vec<u8>, fields: I) -> Result<(), TooLarge>
where
    I: Iterator<Item = (usize, &'b [u8])> + Clone,
{
    let (mut n, mut data_len, mut max_id) = (0, 0, 0);
    for (id, bytes) in fields.clone() {
        n += 1;
        data_len += bytes.len();
        max_id = max_id.max(id);
    }
    let id_w = uint_width(max_id).ok_or(TooLarge)?;
    let off_w = uint_width(data_len).ok_or(TooLarge)?;
    uint_width(n).ok_or(TooLarge)?;
    out.reserve(container_header_size(n, id_w, off_w) + data_len);
    out.push(object_header(n, id_w, off_w));
    push_uint(out, n, count_width(n));
    for (id, _) in fields.clone() {
        push_uint(out, id, id_w);
    }
    let mut off = 0;
    for (_, bytes) in fields.clone() {
        push_uint(out, off, off_w);
        off += bytes.len();
    }
    push_uint(out, off, off_w);
    for (_, bytes) in fields {
        out.extend_from_slice(bytes);
    }
    Ok(())
}

/// Appends an array of the given elements.
///
/// # Errors
/// [`TooLarge`] when the elements do not fit 4-byte offsets.
pub fn write_array(out: &mut Vec<u8>, elements: &[&[u8]]) -> Result<(), TooLarge> {
    let data_len: usize = elements.iter().map(|e| e.len()).sum();
    let n = elements.len();
    let off_w = uint_width(data_len).ok_or(TooLarge)?;
    uint_width(n).ok_or(TooLarge)?;
    out.reserve(container_header_size(n, 0, off_w) + data_len);
    out.push(array_header(n, off_w));
    push_uint(out, n, count_width(n));
    let mut off = 0;
    push_uint(out, 0, off_w);
    for e in elements {
        off += e.len();
        push_uint(out, off, off_w);
    }
    for e in elements {
        out.extend_from_slice(e);
    }
    Ok(())
}

/// Appends an array whose elements are already concatenated in `data`, element
/// `i` ending at `ends[i]`.
///
/// # Errors
/// [`TooLarge`] when `data` does not fit 4-byte offsets.
pub fn write_array_from_ends(
    out: &mut Vec<u8>,
    ends: &[usize],
    data: &[u8],
) -> Result<(), TooLarge> {
    let n = ends.len();
    let off_w = uint_width(data.len()).ok_or(TooLarge)?;
    uint_width(n).ok_or(TooLarge)?;
    out.reserve(container_header_size(n, 0, off_w) + data.len());
    out.push(array_header(n, off_w));
    push_uint(out, n, count_width(n));
    push_uint(out, 0, off_w);
    for end in ends {
        push_uint(out, *end, off_w);
    }
    out.extend_from_slice(data);
    Ok(())
}

/// Appends a metadata dictionary (version 1, not sorted) of `n` strings whose
/// bytes are `strings`, string `i` ending at `ends[i]`.
///
/// # Errors
/// [`TooLarge`] when the dictionary does not fit 4-byte offsets.
pub fn write_metadata(out: &mut Vec<u8>, ends: &[usize], strings: &[u8]) -> Result<(), TooLarge> {
    let n = ends.len();
    let width = uint_width(strings.len().max(n)).ok_or(TooLarge)?;
    out.reserve(1 + width * (n + 2) + strings.len());
    out.push(0x01 | ((width as u8 - 1) << 6));
    push_uint(out, n, width);
    push_uint(out, 0, width);
    for end in ends {
        push_uint(out, *end, width);
    }
    out.extend_from_slice(strings);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_cover_every_byte_count() {
        assert_eq!(uint_width(0), Some(1));
        assert_eq!(uint_width(0xFF), Some(1));
        assert_eq!(uint_width(0x100), Some(2));
        assert_eq!(uint_width(0xFF_FFFF), Some(3));
        assert_eq!(uint_width(0x100_0000), Some(4));
        assert_eq!(uint_width(MAX_UINT), Some(4));
        assert_eq!(uint_width(MAX_UINT + 1), None);
    }

    #[test]
    fn reads_are_little_endian_and_bounds_checked() {
        assert_eq!(read_uint(&[0x01, 0x02, 0x03], 0, 3), Some(0x03_02_01));
        assert_eq!(read_uint(&[0x01, 0x02], 1, 2), None);
        assert_eq!(read_uint(&[0x01], usize::MAX, 2), None);
    }

    #[test]
    fn objects_and_arrays_decode_with_parquet_variant() {
        let metadata = [0x01, 0x02, 0x00, 0x01, 0x02, b'a', b'b'];
        let one = [primitive_header(3), 1];
        let many: Vec<&[u8]> = (0..300).map(|_| &one[..]).collect();
        let mut array = Vec::new();
        write_array(&mut array, &many).unwrap();
        let mut object = Vec::new();
        write_object(&mut object, &[(0, &one[..]), (1, &array[..])]).unwrap();
        assert_eq!(value_len(&object), Some(object.len()));
        let v = parquet_variant::Variant::try_new(&metadata, &object).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("a"), Some(parquet_variant::Variant::Int8(1)));
        assert_eq!(o.get("b").unwrap().as_list().unwrap().len(), 300);

        let mut by_ends = Vec::new();
        write_array_from_ends(&mut by_ends, &[2, 4], &[one, one].concat()).unwrap();
        let mut by_slices = Vec::new();
        write_array(&mut by_slices, &[&one, &one]).unwrap();
        assert_eq!(by_ends, by_slices);
    }

    #[test]
    fn metadata_decodes_with_parquet_variant() {
        let mut m = Vec::new();
        write_metadata(&mut m, &[1, 3], b"abc").unwrap();
        let md = parquet_variant::VariantMetadata::try_new(&m).unwrap();
        assert_eq!(md.get(1).unwrap(), "bc");
    }

    #[test]
    fn value_len_refuses_truncated_and_unknown_values() {
        assert_eq!(value_len(&[]), None);
        assert_eq!(value_len(&[primitive_header(6), 0, 0]), None);
        assert_eq!(value_len(&[primitive_header(21)]), None);
        assert_eq!(
            value_len(&[primitive_header(16), 0xFF, 0xFF, 0xFF, 0xFF]),
            None
        );
        assert_eq!(value_len(&[0x05, b'a', b'b']), Some(2));
    }
}
