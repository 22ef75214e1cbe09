//! The guard in front of `parquet-variant`: every Variant that comes from outside
//! (a column, a file, a literal) passes through [`decode`] before any code reads it.
//!
//! parquet-variant 59.3.2 validates most of the encoding in `Variant::try_new`, but
//! some malformed inputs make it panic or abort instead of returning an error
//! (dates out of chrono's range, truncated UUIDs, unbounded nesting, UTF-8
//! boundaries in unsorted dictionaries) and it accepts objects with duplicate field
//! names. [`check`] walks the bytes first with bounds-checked reads and a depth
//! limit, so that only inputs it has proven well-formed reach parquet-variant.
//!
//! Dates and timestamps past chrono's years (±262,143) are valid Variant values
//! (Spark writes DATEs up to `+5881580-07-11`) that parquet-variant cannot decode:
//! [`check`] refuses them, naming the value, and [`check_value_wide`] accepts them
//! for the readers that never hand them to parquet-variant (the raw JSON and text
//! writers, `variant_get`'s path walk and the caster's raw path, the mutators).
//! [`decode_shape`] decodes them as chrono's nearest value for readers of types.

use std::collections::HashSet;

use super::encoding;

use parquet_variant::{Variant, VariantMetadata};

pub use super::encoding::MAX_DEPTH;

/// Why a Variant's bytes were rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedVariant {
    /// A short description of the problem.
    pub reason: String,
    /// The bytes are valid, but hold a date or timestamp beyond the years that
    /// parquet-variant decodes (see [`check_value_wide`]).
    pub beyond_decoder: bool,
}

impl std::fmt::Display for MalformedVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.beyond_decoder {
            write!(
                f,
                "{}: dates and timestamps past the years ±262,143 are read only by to_json, casts \
                 and variant_get to scalar types, the type functions and the mutators",
                self.reason
            )
        } else {
            write!(f, "[MALFORMED_VARIANT] malformed variant: {}", self.reason)
        }
    }
}

impl std::error::Error for MalformedVariant {}

impl MalformedVariant {
    /// Malformed bytes, for the reason given (cold: kept out of the checks'
    /// hot loops).
    #[cold]
    #[inline(never)]
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            beyond_decoder: false,
        }
    }
}

/// The refusal of a valid date or timestamp that parquet-variant cannot decode.
#[cold]
#[inline(never)]
fn beyond_decoder(t: encoding::Temporal) -> MalformedVariant {
    let mut text = String::new();
    super::format::write_temporal(t, &super::tz::SessionTz::utc(), false, &mut text);
    let kind = match t {
        encoding::Temporal::Date(_) => "date",
        encoding::Temporal::Timestamp(_) => "timestamp (UTC)",
        encoding::Temporal::TimestampNtz(_) => "timestamp_ntz",
    };
    MalformedVariant {
        reason: format!("the variant {kind} {text} is out of range here"),
        beyond_decoder: true,
    }
}

type R<T> = Result<T, MalformedVariant>;

fn read_field(bytes: &[u8], pos: usize, width: usize, what: &str) -> R<usize> {
    encoding::read_uint(bytes, pos, width).ok_or_else(|| {
        MalformedVariant::new(format!(
            "{what} at byte {pos} is past the end ({} bytes)",
            bytes.len()
        ))
    })
}

/// Checks the metadata dictionary and returns its strings.
///
/// # Errors
/// [`MalformedVariant`] when the bytes are not a valid metadata dictionary.
pub fn check_metadata(metadata: &[u8]) -> R<Vec<&str>> {
    let mut strings = Vec::new();
    check_metadata_into(metadata, &mut strings)?;
    Ok(strings)
}

/// Like [`check_metadata`], filling a reused vector (cleared first) instead of
/// allocating one per row.
///
/// # Errors
/// [`MalformedVariant`] when the bytes are not a valid metadata dictionary.
pub fn check_metadata_into<'m>(metadata: &'m [u8], strings: &mut Vec<&'m str>) -> R<()> {
    strings.clear();
    let header = *metadata
        .first()
        .ok_or_else(|| MalformedVariant::new("empty metadata"))?;
    if header & 0x0f != 1 {
        return Err(MalformedVariant::new(format!(
            "unsupported metadata version {}",
            header & 0x0f
        )));
    }
    let width = ((header >> 6) & 0x03) as usize + 1;
    let size = read_field(metadata, 1, width, "dictionary size")?;
    let offsets_start = 1 + width;
    let bytes_start = size
        .checked_add(1)
        .and_then(|n| n.checked_mul(width))
        .and_then(|n| n.checked_add(offsets_start))
        .filter(|&n| n <= metadata.len())
        .ok_or_else(|| {
            MalformedVariant::new(format!(
                "metadata dictionary of {size} strings does not fit"
            ))
        })?;
    let data = &metadata[bytes_start..];
    strings.reserve(size);
    let mut prev = read_field(metadata, offsets_start, width, "metadata offset")?;
    if prev != 0 {
        return Err(MalformedVariant::new("first metadata offset is not 0"));
    }
    for i in 0..size {
        let next = read_field(
            metadata,
            offsets_start + (i + 1) * width,
            width,
            "metadata offset",
        )?;
        if next < prev || next > data.len() {
            return Err(MalformedVariant::new(format!(
                "metadata offset {i} out of range"
            )));
        }
        let s = std::str::from_utf8(&data[prev..next])
            .map_err(|_| MalformedVariant::new(format!("metadata string {i} is not UTF-8")))?;
        strings.push(s);
        prev = next;
    }
    if header & 0x10 != 0 {
        for w in strings.windows(2) {
            if w[0] >= w[1] {
                return Err(MalformedVariant::new(
                    "metadata marked sorted is not sorted and unique",
                ));
            }
        }
    }
    Ok(())
}

/// Checks the scale and digits of a decimal of `width` bytes at `pos`.
fn check_decimal(value: &[u8], pos: usize, width: usize) -> R<()> {
    let scale = value[pos + 1];
    // The same limits parquet-variant enforces: precision 9, 18 or 38
    // digits by width, and a scale no larger than that precision.
    let (max_precision, unscaled) = match width {
        4 => (
            9u8,
            i128::from(read_field(value, pos + 2, 4, "decimal")? as u32 as i32),
        ),
        8 => (
            18,
            i128::from(read_field(value, pos + 2, 8, "decimal")? as u64 as i64),
        ),
        _ => {
            let mut b = [0u8; 16];
            b.copy_from_slice(&value[pos + 2..pos + 18]);
            (38, i128::from_le_bytes(b))
        }
    };
    if scale > max_precision {
        return Err(MalformedVariant::new(format!(
            "decimal scale {scale} is above the precision {max_precision} of its width"
        )));
    }
    if unscaled.unsigned_abs() >= 10u128.pow(u32::from(max_precision)) {
        return Err(MalformedVariant::new(format!(
            "decimal {unscaled} has more than {max_precision} digits"
        )));
    }
    Ok(())
}

/// Returns the encoded length of the value starting at `pos`.
fn check_value(
    value: &[u8],
    pos: usize,
    dict: &[&str],
    depth: usize,
    mut wide: Option<&mut bool>,
) -> R<usize> {
    if depth > MAX_DEPTH {
        return Err(MalformedVariant::new(format!(
            "nesting deeper than {MAX_DEPTH} levels"
        )));
    }
    let header = *value.get(pos).ok_or_else(|| {
        MalformedVariant::new(format!("value ends at byte {pos}, expected a header"))
    })?;
    let basic = encoding::basic_type(header);
    let hdr = (header >> 2) as usize;
    let need = |len: usize| -> R<usize> {
        let total = len + 1;
        if pos + total > value.len() {
            Err(MalformedVariant::new(format!(
                "value at byte {pos} needs {total} bytes, {} left",
                value.len() - pos
            )))
        } else {
            Ok(total)
        }
    };
    match basic {
        0 => {
            let type_id = hdr as u8;
            let Some(size) = encoding::fixed_primitive_size(type_id) else {
                if !encoding::is_length_prefixed(type_id) {
                    return Err(MalformedVariant::new(format!(
                        "unknown primitive type {hdr} at byte {pos}"
                    )));
                }
                let len = read_field(value, pos + 1, 4, "string length")?;
                let n = need(
                    4usize
                        .checked_add(len)
                        .ok_or_else(|| MalformedVariant::new("length overflow"))?,
                )?;
                if hdr == 16 && std::str::from_utf8(&value[pos + 5..pos + 5 + len]).is_err() {
                    return Err(MalformedVariant::new(format!(
                        "string at byte {pos} is not UTF-8"
                    )));
                }
                return Ok(n);
            };
            let n = need(size)?;
            match hdr {
                17 => {
                    let micros = read_field(value, pos + 1, 8, "time")?;
                    if micros >= 86_400_000_000 {
                        return Err(MalformedVariant::new(format!(
                            "time of {micros} microseconds is out of range"
                        )));
                    }
                }
                11..=13 => {
                    let t = encoding::read_temporal(&value[pos..]).ok_or_else(|| {
                        MalformedVariant::new(format!("date or timestamp at byte {pos} is cut"))
                    })?;
                    if !t.within_chrono() {
                        match wide.as_deref_mut() {
                            Some(seen) => *seen = true,
                            None => return Err(beyond_decoder(t)),
                        }
                    }
                }
                8..=10 => check_decimal(value, pos, size - 1)?,
                _ => {}
            }
            Ok(n)
        }
        1 => {
            let n = need(hdr)?;
            if std::str::from_utf8(&value[pos + 1..pos + 1 + hdr]).is_err() {
                return Err(MalformedVariant::new(format!(
                    "string at byte {pos} is not UTF-8"
                )));
            }
            Ok(n)
        }
        2 => {
            let c = encoding::container(&value[pos..], true)
                .filter(|c| pos + c.data_start <= value.len())
                .ok_or_else(|| {
                    MalformedVariant::new(format!("object at byte {pos} does not fit"))
                })?;
            let (n, id_w, off_w) = (c.n, c.id_w, c.off_w);
            let (ids_start, offs_start, data_start) =
                (pos + c.ids_start, pos + c.offs_start, pos + c.data_start);
            let data_len = read_field(value, offs_start + n * off_w, off_w, "object end offset")?;
            if n == 0 && data_len != 0 {
                return Err(MalformedVariant::new(format!(
                    "empty object at byte {pos} has data"
                )));
            }
            let end = data_start
                .checked_add(data_len)
                .filter(|&e| e <= value.len())
                .ok_or_else(|| {
                    MalformedVariant::new(format!("object at byte {pos} runs past the end"))
                })?;
            // Fields are listed by name, so duplicates are neighbours; only objects
            // sorted another way (Spark sorts by UTF-16 code units, which differs
            // for some non-ASCII names) need a set to find them.
            let mut prev_name: Option<&str> = None;
            let mut in_byte_order = true;
            for i in 0..n {
                let id = read_field(value, ids_start + i * id_w, id_w, "field id")?;
                let name = *dict.get(id).ok_or_else(|| {
                    MalformedVariant::new(format!("field id {id} is not in the dictionary"))
                })?;
                if let Some(p) = prev_name {
                    if p == name {
                        return Err(MalformedVariant::new(format!(
                            "duplicate field name \"{name}\""
                        )));
                    }
                    if p > name {
                        // Out of byte order is fine only where UTF-16 order (Spark's)
                        // differs from it: supplementary characters against
                        // U+E000..U+FFFF.
                        if name.is_ascii() && p.is_ascii()
                            || p.encode_utf16().cmp(name.encode_utf16()).is_gt()
                        {
                            return Err(MalformedVariant::new(format!(
                                "object fields are not sorted at \"{name}\""
                            )));
                        }
                        in_byte_order = false;
                    }
                }
                prev_name = Some(name);
                let off = read_field(value, offs_start + i * off_w, off_w, "field offset")?;
                if off >= data_len {
                    return Err(MalformedVariant::new(format!(
                        "field offset {off} out of range"
                    )));
                }
                let child_len = check_value(
                    &value[..end],
                    data_start + off,
                    dict,
                    depth + 1,
                    wide.as_deref_mut(),
                )?;
                if data_start + off + child_len > end {
                    return Err(MalformedVariant::new("object field runs past the object"));
                }
            }
            if !in_byte_order {
                let mut seen: HashSet<&str> = HashSet::with_capacity(n);
                for i in 0..n {
                    let id = read_field(value, ids_start + i * id_w, id_w, "field id")?;
                    if !seen.insert(dict[id]) {
                        return Err(MalformedVariant::new(format!(
                            "duplicate field name \"{}\"",
                            dict[id]
                        )));
                    }
                }
            }
            Ok(end - pos)
        }
        _ => {
            let c = encoding::container(&value[pos..], false)
                .filter(|c| pos + c.data_start <= value.len())
                .ok_or_else(|| {
                    MalformedVariant::new(format!("array at byte {pos} does not fit"))
                })?;
            let (n, off_w, offs_start, data_start) =
                (c.n, c.off_w, pos + c.offs_start, pos + c.data_start);
            let data_len = read_field(value, offs_start + n * off_w, off_w, "array end offset")?;
            if n == 0 && data_len != 0 {
                return Err(MalformedVariant::new(format!(
                    "empty array at byte {pos} has data"
                )));
            }
            let end = data_start
                .checked_add(data_len)
                .filter(|&e| e <= value.len())
                .ok_or_else(|| {
                    MalformedVariant::new(format!("array at byte {pos} runs past the end"))
                })?;
            let mut prev = 0;
            for i in 0..n {
                let off = read_field(value, offs_start + i * off_w, off_w, "element offset")?;
                let next =
                    read_field(value, offs_start + (i + 1) * off_w, off_w, "element offset")?;
                if off != prev || next < off || next > data_len {
                    return Err(MalformedVariant::new(format!(
                        "array element {i} offsets out of order"
                    )));
                }
                let child_len = check_value(
                    &value[..end],
                    data_start + off,
                    dict,
                    depth + 1,
                    wide.as_deref_mut(),
                )?;
                if child_len != next - off {
                    return Err(MalformedVariant::new(format!(
                        "array element {i} has the wrong length"
                    )));
                }
                prev = next;
            }
            Ok(end - pos)
        }
    }
}

/// Checks the value at the start of `value` against an already checked dictionary
/// and returns its encoded length (trailing bytes are allowed).
///
/// # Errors
/// [`MalformedVariant`] naming the first problem found.
pub fn check_value_with(value: &[u8], dict: &[&str]) -> R<usize> {
    check_value(value, 0, dict, 0, None)
}

/// Like [`check_value_with`], but accepts dates and timestamps beyond chrono's
/// years (±262,143), which are valid Variant values (Spark writes DATEs up to
/// `+5881580-07-11`) that parquet-variant cannot decode. Returns the length and
/// whether the value holds any. Only readers that never hand such a value to
/// parquet-variant call this: the raw JSON writer, `variant_get`'s path walk and
/// the caster's raw path (which read them through [`encoding::read_temporal`]).
///
/// ```
/// use df_variant::variant::validate::{check_value_wide, check_value_with};
/// let mut date = vec![0x2c];
/// date.extend_from_slice(&i32::MAX.to_le_bytes());
/// assert_eq!(check_value_wide(&date, &[]).unwrap(), (5, true));
/// let e = check_value_with(&date, &[]).unwrap_err();
/// assert!(e.to_string().contains("+5881580-07-11"), "{e}");
/// ```
///
/// # Errors
/// [`MalformedVariant`] naming the first problem found.
pub fn check_value_wide(value: &[u8], dict: &[&str]) -> R<(usize, bool)> {
    let mut seen = false;
    let len = check_value(value, 0, dict, 0, Some(&mut seen))?;
    Ok((len, seen))
}

/// Checks that `metadata` and `value` form one well-formed Variant, without
/// panicking on any input.
///
/// # Errors
/// [`MalformedVariant`] naming the first problem found.
pub fn check(metadata: &[u8], value: &[u8]) -> Result<(), MalformedVariant> {
    let dict = check_metadata(metadata)?;
    check_value(value, 0, &dict, 0, None)?;
    Ok(())
}

/// Whether the bytes are one valid Variant (`is_valid_variant`): [`check`], but
/// dates and timestamps past chrono's years are valid, as in Spark.
pub fn is_valid(metadata: &[u8], value: &[u8]) -> bool {
    check_metadata(metadata).is_ok_and(|dict| check_value_wide(value, &dict).is_ok())
}

/// Checks the bytes with [`check`], then hands them to parquet-variant. The
/// returned Variant's accessors do not panic.
///
/// parquet-variant's own full validation is not used: [`check`] covers
/// everything it checks, and it wrongly rejects valid metadata that Spark writes
/// (an unsorted dictionary holding the empty key, as in `{"": 1}`).
///
/// ```
/// use df_variant::variant::validate::decode;
/// let v = decode(&[0x01, 0x00, 0x00], &[0x0c, 0x01]).unwrap();
/// assert_eq!(v, parquet_variant::Variant::Int8(1));
/// assert!(decode(&[0x01, 0x00, 0x00], &[0x0c]).is_err());
/// ```
///
/// # Errors
/// [`MalformedVariant`] when the bytes are not a valid Variant.
pub fn decode<'m, 'v>(
    metadata: &'m [u8],
    value: &'v [u8],
) -> Result<Variant<'m, 'v>, MalformedVariant> {
    check(metadata, value)?;
    decode_checked(metadata, value)
}

/// Hands checked bytes to parquet-variant.
fn decode_checked<'m, 'v>(
    metadata: &'m [u8],
    value: &'v [u8],
) -> Result<Variant<'m, 'v>, MalformedVariant> {
    let guarded = std::panic::catch_unwind(|| {
        Variant::new_with_metadata(VariantMetadata::new(metadata), value)
    });
    guarded.map_err(|_| MalformedVariant::new("the decoder rejected the bytes"))
}

/// [`decode`] for readers of a value's types and shape only (`schema_of_variant`,
/// `variant_typeof`, `variant_object_keys`, ...): a date or timestamp past
/// chrono's years, which parquet-variant cannot decode, is decoded from a copy
/// in `scratch` where it holds the nearest value chrono has instead. Every type,
/// field name, element and size stays as it is; only those values change.
///
/// ```
/// use df_variant::variant::validate::decode_shape;
/// let mut date = vec![0x2c];
/// date.extend_from_slice(&i32::MAX.to_le_bytes());
/// let mut scratch = Vec::new();
/// let v = decode_shape(&[0x01, 0x00, 0x00], &date, &mut scratch).unwrap();
/// assert!(matches!(v, parquet_variant::Variant::Date(_)));
/// ```
///
/// # Errors
/// [`MalformedVariant`] when the bytes are not a valid Variant.
pub fn decode_shape<'m, 'x>(
    metadata: &'m [u8],
    value: &'x [u8],
    scratch: &'x mut Vec<u8>,
) -> Result<Variant<'m, 'x>, MalformedVariant> {
    let dict = check_metadata(metadata)?;
    let (len, wide) = check_value_wide(value, &dict)?;
    if !wide {
        return decode_checked(metadata, value);
    }
    scratch.clear();
    scratch.extend_from_slice(&value[..len]);
    clamp_wide(scratch, 0);
    // Children may share bytes (offsets can overlap), so a clamped value can
    // change a neighbour: only bytes that pass the full check reach the decoder,
    // else the value is refused by name.
    if let Err(e) = check_value_with(scratch, &dict) {
        return Err(check_value_with(&value[..len], &dict).err().unwrap_or(e));
    }
    decode_checked(metadata, scratch)
}

/// Replaces, in checked bytes, every date or timestamp past chrono's years with
/// chrono's nearest one (see [`decode_shape`]).
fn clamp_wide(value: &mut [u8], depth: usize) {
    use encoding::{ARRAY, OBJECT, Temporal};
    let Some(&header) = value.first() else {
        return;
    };
    let basic = encoding::basic_type(header);
    if matches!(basic, OBJECT | ARRAY) {
        let Some(c) = encoding::container(value, basic == OBJECT) else {
            return;
        };
        for i in 0..c.n {
            let start = c.offset(value, i).and_then(|o| o.checked_add(c.data_start));
            if let Some(child) = start.and_then(|s| value.get_mut(s..))
                && depth < MAX_DEPTH
            {
                clamp_wide(child, depth + 1);
            }
        }
        return;
    }
    let Some(t) = encoding::read_temporal(value).filter(|t| !t.within_chrono()) else {
        return;
    };
    let date_edge = |d: chrono::NaiveDate| super::datetime::days_since_epoch(&d);
    let micros_edge = |t: chrono::NaiveDateTime| t.and_utc().timestamp_micros();
    let clamped = match t {
        Temporal::Date(d) if d > 0 => Temporal::Date(date_edge(chrono::NaiveDate::MAX)),
        Temporal::Date(_) => Temporal::Date(date_edge(chrono::NaiveDate::MIN)),
        Temporal::Timestamp(m) | Temporal::TimestampNtz(m) => {
            let edge = if m > 0 {
                micros_edge(chrono::NaiveDateTime::MAX)
            } else {
                micros_edge(chrono::NaiveDateTime::MIN)
            };
            match t {
                Temporal::Timestamp(_) => Temporal::Timestamp(edge),
                _ => Temporal::TimestampNtz(edge),
            }
        }
    };
    let mut bytes = Vec::with_capacity(9);
    encoding::push_temporal(&mut bytes, clamped);
    if let Some(dst) = value.get_mut(..bytes.len()) {
        dst.copy_from_slice(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet_variant::VariantBuilder;

    fn built() -> (Vec<u8>, Vec<u8>) {
        let mut b = VariantBuilder::new();
        let mut o = b.new_object();
        o.insert("b", 1i8);
        o.insert("a", "hello");
        let mut l = o.new_list("c");
        l.append_value(1.5f64);
        l.append_value(parquet_variant::Variant::Null);
        l.finish();
        o.finish();
        b.finish()
    }

    #[test]
    fn accepts_valid_variants() {
        let (m, v) = built();
        check(&m, &v).unwrap();
        assert!(decode(&m, &v).unwrap().as_object().is_some());
    }

    #[test]
    fn rejects_every_truncation() {
        let (m, v) = built();
        for cut in 0..v.len() {
            assert!(check(&m, &v[..cut]).is_err(), "value cut at {cut}");
        }
        for cut in 0..m.len() {
            assert!(check(&m[..cut], &v).is_err(), "metadata cut at {cut}");
        }
    }

    #[test]
    fn rejects_out_of_range_dates_and_short_uuids() {
        let meta = [0x01, 0x00, 0x00];
        let mut date = vec![0x2c];
        date.extend_from_slice(&i32::MAX.to_le_bytes());
        assert!(decode(&meta, &date).is_err());
        let uuid = [0x50, 1, 2, 3];
        assert!(decode(&meta, &uuid).is_err());
    }

    #[test]
    fn shape_decoding_refuses_a_wide_date_that_overlaps_a_neighbour() {
        // {"a": date, "b": 1} where the date's four bytes run over field b: clamping
        // the date in place would rewrite b's header.
        let meta = [0x01, 0x02, 0x00, 0x01, 0x02, b'a', b'b'];
        let value = [
            0x02, 0x02, 0x00, 0x01, 0x00, 0x01, 0x06, 0x2c, 0x0c, 0x08, 0x0c, 0x09, 0x00,
        ];
        let (_, wide) = check_value_wide(&value, &check_metadata(&meta).unwrap()).unwrap();
        assert!(wide);
        let mut scratch = Vec::new();
        let e = decode_shape(&meta, &value, &mut scratch).unwrap_err();
        assert!(e.beyond_decoder, "{e}");
        // Without the overlap, the date is read as chrono's last day.
        let apart = [
            0x02, 0x02, 0x00, 0x01, 0x00, 0x05, 0x07, 0x2c, 0xff, 0xff, 0xff, 0x7f, 0x0c, 0x09,
        ];
        let v = decode_shape(&meta, &apart, &mut scratch).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("a"), Some(Variant::Date(chrono::NaiveDate::MAX)));
        assert_eq!(o.get("b"), Some(Variant::Int8(9)));
    }

    #[test]
    fn rejects_duplicate_field_names() {
        // dictionary ["a", "a"] (unsorted), object {id0: 1, id1: 2}
        let meta = [0x01, 0x02, 0x00, 0x01, 0x02, b'a', b'a'];
        let value = [
            0x02, 0x02, 0x00, 0x01, 0x00, 0x02, 0x04, 0x0c, 0x01, 0x0c, 0x02,
        ];
        let e = check(&meta, &value).unwrap_err();
        assert!(e.reason.contains("duplicate"), "{e}");
    }

    #[test]
    fn rejects_deep_nesting_without_recursing_forever() {
        let meta = [0x01, 0x00, 0x00];
        // 5000 nested single-element arrays around a null.
        let depth = 5000;
        let mut value = vec![0x00];
        for _ in 0..depth {
            let len = value.len();
            let mut outer = if len <= 0xff {
                vec![0x03, 0x01, 0x00, len as u8]
            } else if len <= 0xffff {
                vec![0x07, 0x01, 0x00, 0x00, len as u8, (len >> 8) as u8]
            } else {
                let l = len as u32;
                let mut o = vec![0x0f, 0x01, 0, 0, 0, 0];
                o.extend_from_slice(&l.to_le_bytes());
                o
            };
            outer.extend_from_slice(&value);
            value = outer;
        }
        let e = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || check(&meta, &value).unwrap_err())
            .unwrap()
            .join()
            .unwrap();
        assert!(e.reason.contains("nesting"), "{e}");
    }

    /// An object in neither byte nor UTF-16 order is refused also when a name is
    /// not ASCII (found by the long fuzz run: `["\u{82}m", "e"]` was accepted); one
    /// in UTF-16 order (Spark's) but not in byte order is read.
    #[test]
    fn object_order_is_checked_for_non_ascii_names() {
        // One object {id0: 1, id1: 2} over the unsorted dictionary [k0, k1].
        let object = |k0: &str, k1: &str| {
            let mut meta = vec![
                0x01,
                0x02,
                0x00,
                k0.len() as u8,
                (k0.len() + k1.len()) as u8,
            ];
            meta.extend_from_slice(k0.as_bytes());
            meta.extend_from_slice(k1.as_bytes());
            let value = vec![
                0x02, 0x02, 0x00, 0x01, 0x00, 0x02, 0x04, 0x0c, 0x01, 0x0c, 0x02,
            ];
            (meta, value)
        };
        let (m, v) = object("\u{82}m", "e");
        let e = check(&m, &v).unwrap_err();
        assert!(e.reason.contains("not sorted"), "{e}");
        // U+1F600 (a surrogate pair in UTF-16) before U+FF21: UTF-16 order.
        let (m, v) = object("\u{1F600}", "\u{FF21}");
        check(&m, &v).unwrap();
        let (m, v) = object("e", "\u{82}m");
        check(&m, &v).unwrap();
    }

    #[test]
    fn rejects_bad_utf8_in_dictionary() {
        let meta = [0x01, 0x01, 0x00, 0x02, 0xc3, 0x28];
        assert!(check_metadata(&meta).is_err());
    }
}
