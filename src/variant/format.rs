//! Spark's exact text output for Variant values: `to_json(variant)` and
//! `cast(variant AS string)`.
//!
//! The layout follows what Spark 4.x prints (see `docs/spark-semantics.md` §4 and §5):
//!
//! * objects print their keys sorted by UTF-8 bytes, compact JSON, no spaces;
//! * doubles and floats print the Java way ([`write_java_double`], [`write_java_float`]);
//!   `NaN`/`Infinity`/`-Infinity` are JSON *strings* in `to_json` and raw text in a cast;
//! * decimals print in plain notation without trailing zeros ([`write_decimal`]);
//! * strings escape `"`, `\`, `\b \f \n \r \t` and other control characters as
//!   `\u00XX` with upper-case hex; everything else is written raw;
//! * dates print `2024-01-15`; years outside `0..=9999` print as Java's `LocalDate` does
//!   (`+10000-01-01`, `-0001-01-01`);
//! * TIMESTAMP prints the session-local wall time, `yyyy-MM-dd HH:mm:ss[.fraction]` with
//!   trailing fraction zeros removed, and in `to_json` the session offset at that instant
//!   as Java's `+HH:MM` pattern prints it (seconds of the offset are dropped, an offset that
//!   rounds to zero minutes prints `+00:00`); TIMESTAMP_NTZ prints the same without offset;
//! * binary prints as standard base64 with padding (in `to_json`).
//!
//! Extensions beyond Spark (types Spark's variant does not have): TIME prints
//! `HH:mm:ss[.fraction]`, UUID prints lower-case hyphenated, nanosecond timestamps print up to
//! nine fraction digits.
//!
//! Inputs must be well-formed: variants from [`crate::variant::validate::decode`] (which
//! checks every byte) or from a builder. The SQL functions only pass such variants.
//!
//! `to_json` and `CAST(v AS STRING)` of objects and arrays print from the checked bytes
//! directly ([`write_json_checked`]): one walk that writes field names, strings and
//! integers as it meets them, instead of building a parquet-variant value for every
//! field (which decodes and re-validates every name and string). Its output is the
//! same text; a unit test holds the two paths to each other.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use parquet_variant::{Variant, VariantList, VariantObject};

use super::calendar::{civil_from_days, split_micros};
use super::datetime::naive_micros;
use super::encoding::Temporal;
use super::tz::SessionTz;

/// Spark `to_json(variant)`: appends the compact JSON text of `v` to `out`.
///
/// Timestamps print in the session time zone `tz` with its offset.
pub fn write_json(v: &Variant<'_, '_>, tz: &SessionTz, out: &mut String) {
    match checked(v) {
        Some(v) => json_value(&v, tz, out),
        None => out.push_str("null"),
    }
}

/// Spark `to_json(variant)` as a new string.
///
/// ```
/// use df_variant::variant::format::to_json_string;
/// use df_variant::variant::tz::SessionTz;
/// use parquet_variant::{Variant, VariantBuilder};
///
/// let mut b = VariantBuilder::new();
/// let mut o = b.new_object();
/// o.insert("b", 1e7f64);
/// o.insert("a", "x\ny");
/// o.finish();
/// let (m, v) = b.finish();
/// let var = Variant::try_new(&m, &v).unwrap();
/// assert_eq!(to_json_string(&var, &SessionTz::utc()), r#"{"a":"x\ny","b":1.0E7}"#);
/// ```
pub fn to_json_string(v: &Variant<'_, '_>, tz: &SessionTz) -> String {
    let mut out = String::new();
    write_json(v, tz, &mut out);
    out
}

/// [`write_json`] of a Variant given as bytes that have been checked: `dict` is the
/// row's metadata dictionary (from [`crate::variant::validate::check_metadata_into`])
/// and `value` passed [`crate::variant::validate::check_value_with`] against it.
///
/// The same text as [`write_json`], in one walk over the bytes: objects, arrays,
/// strings and integers are written straight from them, without building
/// parquet-variant values (which decode every field name and string again); other
/// primitives go through [`write_json`]. Every read is bounds-checked: where the
/// bytes are not what a checked value holds, it returns `false` and leaves `out` as
/// it was.
///
/// ```
/// use df_variant::variant::format::write_json_checked;
/// use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
/// use df_variant::variant::tz::SessionTz;
/// use df_variant::variant::validate::{check_metadata, check_value_with};
///
/// let mut p = JsonToVariant::new(JsonParseOptions::default());
/// p.parse(r#"{"b": [1, "x\ny", 1.50], "a": null}"#).unwrap();
/// let dict = check_metadata(p.metadata()).unwrap();
/// check_value_with(p.value(), &dict).unwrap();
/// let mut out = String::new();
/// assert!(write_json_checked(&dict, p.value(), &SessionTz::utc(), &mut out));
/// assert_eq!(out, r#"{"a":null,"b":[1,"x\ny",1.5]}"#);
/// ```
pub fn write_json_checked(dict: &[&str], value: &[u8], tz: &SessionTz, out: &mut String) -> bool {
    let start = out.len();
    let written = raw_json(dict, value, tz, out, 0).is_some();
    if !written {
        out.truncate(start);
    }
    written
}

/// One value of [`write_json_checked`]; `None` where the bytes do not hold together.
fn raw_json(
    dict: &[&str],
    value: &[u8],
    tz: &SessionTz,
    out: &mut String,
    depth: usize,
) -> Option<()> {
    use super::encoding::{
        ARRAY, OBJECT, basic_type, container, read_int, read_temporal, string_bytes,
    };
    if depth > super::encoding::MAX_DEPTH {
        return None;
    }
    let header = *value.first()?;
    if let Some(bytes) = string_bytes(value) {
        write_json_string(std::str::from_utf8(bytes).ok()?, out);
        return Some(());
    }
    if let Some(i) = read_int(value) {
        push_int(i, out);
        return Some(());
    }
    if let Some(t) = read_temporal(value) {
        write_temporal(t, tz, true, out);
        return Some(());
    }
    match basic_type(header) {
        OBJECT => {
            let c = container(value, true)?;
            let name = |i: usize| -> Option<&str> { dict.get(c.id(value, i)?).copied() };
            let field = |i: usize| Some((name(i)?, c.child(value, i)?));
            let mut sorted = true;
            for i in 1..c.n {
                sorted &= name(i - 1)? <= name(i)?;
            }
            if sorted {
                raw_fields((0..c.n).map(field), dict, tz, out, depth)?;
            } else {
                // Spark's writer orders by UTF-16 code units (see `json_object`).
                let mut fields = (0..c.n).map(field).collect::<Option<Vec<_>>>()?;
                fields.sort_by(|a, b| a.0.cmp(b.0));
                raw_fields(fields.into_iter().map(Some), dict, tz, out, depth)?;
            }
        }
        ARRAY => {
            let c = container(value, false)?;
            out.push('[');
            for i in 0..c.n {
                if i > 0 {
                    out.push(',');
                }
                raw_json(dict, c.child(value, i)?, tz, out, depth + 1)?;
            }
            out.push(']');
        }
        _ => match header >> 2 {
            0 => out.push_str("null"),
            1 => out.push_str("true"),
            2 => out.push_str("false"),
            _ => {
                // Decimals, doubles, nanosecond timestamps, binary, UUIDs: the
                // metadata plays no part in a primitive.
                let v = Variant::try_new(super::encoding::EMPTY_METADATA, value).ok()?;
                json_value(&v, tz, out);
            }
        },
    }
    Some(())
}

/// The fields of an object in [`raw_json`], in the order given.
fn raw_fields<'a>(
    fields: impl Iterator<Item = Option<(&'a str, &'a [u8])>>,
    dict: &[&str],
    tz: &SessionTz,
    out: &mut String,
    depth: usize,
) -> Option<()> {
    out.push('{');
    for (i, field) in fields.enumerate() {
        let (name, child) = field?;
        if i > 0 {
            out.push(',');
        }
        write_json_string(name, out);
        out.push(':');
        raw_json(dict, child, tz, out, depth + 1)?;
    }
    out.push('}');
    Some(())
}

/// Spark `cast(variant AS string)` (and `variant_get(..., 'string')`): appends the text to
/// `out` and returns `true`, or returns `false` (SQL NULL, nothing written) for a variant
/// null.
///
/// A top-level string gives its raw text (no quotes); objects and arrays give their JSON
/// (nested strings quoted); timestamps print the session-local time without offset; doubles
/// and floats print as Java does, with raw `NaN`/`Infinity`; binary gives its bytes read as
/// UTF-8 (invalid sequences replaced by U+FFFD), as Spark's binary-to-string cast does.
pub fn write_cast_string(v: &Variant<'_, '_>, tz: &SessionTz, out: &mut String) -> bool {
    let Some(v) = checked(v) else {
        return false;
    };
    match &v {
        Variant::Null => return false,
        Variant::String(s) => out.push_str(s),
        Variant::ShortString(s) => out.push_str(s.as_str()),
        Variant::Double(x) => write_java_double(*x, out),
        Variant::Float(x) => write_java_float(*x, out),
        Variant::Date(d) => write_date(d, out),
        Variant::TimestampMicros(t) => write_timestamp_micros(t.timestamp_micros(), tz, false, out),
        Variant::TimestampNanos(t) => write_timestamp(&t.naive_utc(), tz, false, out),
        Variant::TimestampNtzMicros(t) => write_wall_micros(naive_micros(t).into(), out),
        Variant::TimestampNtzNanos(t) => write_datetime(t, out),
        Variant::Time(t) => write_time(t, out),
        Variant::Uuid(u) => push_display(u, out),
        Variant::Binary(b) => out.push_str(&String::from_utf8_lossy(b)),
        _ => json_value(&v, tz, out),
    }
    true
}

/// [`write_cast_string`] of a Variant given as checked bytes (as for
/// [`write_json_checked`]): strings, dates, timestamps, objects and arrays print
/// straight from the bytes, so dates and timestamps past chrono's years print
/// too; other primitives go through parquet-variant. `Some(false)` for a variant
/// null, `None` (nothing written) where the bytes do not hold together.
///
/// ```
/// use df_variant::variant::format::write_cast_string_checked;
/// use df_variant::variant::tz::SessionTz;
/// let mut date = vec![0x2c];
/// date.extend_from_slice(&i32::MAX.to_le_bytes());
/// let mut out = String::new();
/// assert_eq!(write_cast_string_checked(&[], &date, &SessionTz::utc(), &mut out), Some(true));
/// assert_eq!(out, "+5881580-07-11");
/// ```
pub fn write_cast_string_checked(
    dict: &[&str],
    value: &[u8],
    tz: &SessionTz,
    out: &mut String,
) -> Option<bool> {
    use super::encoding::{ARRAY, OBJECT, basic_type, read_temporal, string_bytes};
    let header = *value.first()?;
    if let Some(bytes) = string_bytes(value) {
        out.push_str(std::str::from_utf8(bytes).ok()?);
    } else if let Some(t) = read_temporal(value) {
        write_temporal(t, tz, false, out);
    } else if matches!(basic_type(header), OBJECT | ARRAY) {
        return write_json_checked(dict, value, tz, out).then_some(true);
    } else {
        let v = Variant::try_new(super::encoding::EMPTY_METADATA, value).ok()?;
        return Some(write_cast_string(&v, tz, out));
    }
    Some(true)
}

/// The variant to walk. Callers pass variants from [`crate::variant::validate::decode`]
/// (or built by a builder), whose bytes are proven well-formed, so no second validation
/// pass is made here (parquet-variant's own would also reject valid Spark metadata).
#[inline]
fn checked<'m, 'v>(v: &Variant<'m, 'v>) -> Option<Variant<'m, 'v>> {
    Some(v.clone())
}

/// Writes any `Display` value (used for UUIDs, whose `Display` is lower-case hyphenated).
fn push_display(x: &impl std::fmt::Display, out: &mut String) {
    use std::fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = write!(out, "{x}");
}

/// JSON text of a value whose bytes are known to be valid.
fn json_value(v: &Variant<'_, '_>, tz: &SessionTz, out: &mut String) {
    match v {
        Variant::Null => out.push_str("null"),
        Variant::BooleanTrue => out.push_str("true"),
        Variant::BooleanFalse => out.push_str("false"),
        Variant::Int8(i) => push_int(*i as i64, out),
        Variant::Int16(i) => push_int(*i as i64, out),
        Variant::Int32(i) => push_int(*i as i64, out),
        Variant::Int64(i) => push_int(*i, out),
        Variant::Decimal4(d) => write_decimal(d.integer() as i128, d.scale(), out),
        Variant::Decimal8(d) => write_decimal(d.integer() as i128, d.scale(), out),
        Variant::Decimal16(d) => write_decimal(d.integer(), d.scale(), out),
        Variant::Double(x) => {
            if x.is_finite() {
                write_java_double(*x, out);
            } else {
                quoted(out, |out| write_java_double(*x, out));
            }
        }
        Variant::Float(x) => {
            if x.is_finite() {
                write_java_float(*x, out);
            } else {
                quoted(out, |out| write_java_float(*x, out));
            }
        }
        Variant::String(s) => write_json_string(s, out),
        Variant::ShortString(s) => write_json_string(s.as_str(), out),
        Variant::Binary(b) => quoted(out, |out| write_base64(b, out)),
        Variant::Date(d) => quoted(out, |out| write_date(d, out)),
        Variant::TimestampMicros(t) => {
            write_temporal(Temporal::Timestamp(t.timestamp_micros()), tz, true, out);
        }
        Variant::TimestampNanos(t) => {
            quoted(out, |out| write_timestamp(&t.naive_utc(), tz, true, out));
        }
        Variant::TimestampNtzMicros(t) => {
            write_temporal(Temporal::TimestampNtz(naive_micros(t)), tz, true, out);
        }
        Variant::TimestampNtzNanos(t) => quoted(out, |out| write_datetime(t, out)),
        Variant::Time(t) => quoted(out, |out| write_time(t, out)),
        Variant::Uuid(u) => quoted(out, |out| push_display(u, out)),
        Variant::Object(o) => json_object(o, tz, out),
        Variant::List(l) => json_list(l, tz, out),
    }
}

fn quoted(out: &mut String, f: impl FnOnce(&mut String)) {
    out.push('"');
    f(out);
    out.push('"');
}

fn push_int(i: i64, out: &mut String) {
    out.push_str(itoa::Buffer::new().format(i));
}

fn json_list(l: &VariantList<'_, '_>, tz: &SessionTz, out: &mut String) {
    out.push('[');
    for (i, e) in l.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_value(&e, tz, out);
    }
    out.push(']');
}

fn json_object(o: &VariantObject<'_, '_>, tz: &SessionTz, out: &mut String) {
    // The encoding stores fields sorted by name (parquet-variant's validation insists on it),
    // so the fast path writes them as they come. Should they ever arrive unsorted (Spark's
    // writer sorts by UTF-16 code units, which differs from UTF-8 order only for characters
    // above U+FFFF against U+E000..U+FFFF), sort them here.
    let sorted = (1..o.len()).all(|i| o.field_name(i - 1) <= o.field_name(i));
    if sorted {
        write_fields(o.iter(), tz, out);
    } else {
        let mut fields: Vec<_> = o.iter().collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        write_fields(fields.into_iter(), tz, out);
    }
}

fn write_fields<'a, 'm: 'a, 'v: 'a>(
    fields: impl Iterator<Item = (&'a str, Variant<'m, 'v>)>,
    tz: &SessionTz,
    out: &mut String,
) {
    out.push('{');
    for (i, (name, value)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(name, out);
        out.push(':');
        json_value(&value, tz, out);
    }
    out.push('}');
}

/// Whether any of the 8 bytes of `w` is a control character, `"` or `\\`
/// (the bytes [`write_json_string`] escapes), tested on the whole word at once.
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte below 0x20 (a byte with its high bit set never counts), and a zero
    // byte after the XOR with '"' or '\\' (the usual "has zero byte" tests).
    let below_space = w.wrapping_sub(ONES * 0x20) & !w;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (below_space | quote.wrapping_sub(ONES) & !quote | backslash.wrapping_sub(ONES) & !backslash)
        & HIGH
        != 0
}

/// Writes `s` as a JSON string literal the way Jackson (and so Spark) escapes it.
pub fn write_json_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('"');
    let bytes = s.as_bytes();
    // Most text needs no escape: skip it eight bytes at a time, then look at
    // each byte from the first word that may hold one.
    let mut clean = 0;
    for chunk in bytes.chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if word_needs_escape(u64::from_le_bytes(w)) {
            break;
        }
        clean += 8;
    }
    if clean == bytes.len() {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate().skip(clean) {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `i` is an ASCII byte, hence a char boundary.
        out.push_str(&s[start..i]);
        if short.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0x0f) as usize] as char);
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Standard base64 (RFC 4648 alphabet, with `=` padding).
fn write_base64(bytes: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = chunk[0] as u32;
        let b1 = chunk.get(1).copied().unwrap_or(0) as u32;
        let b2 = chunk.get(2).copied().unwrap_or(0) as u32;
        let n = (b0 << 16) | (b1 << 8) | b2;
        out.push(ALPHABET[(n >> 18) as usize & 63] as char);
        out.push(ALPHABET[(n >> 12) as usize & 63] as char);
        if chunk.len() > 1 {
            out.push(ALPHABET[(n >> 6) as usize & 63] as char);
        } else {
            out.push('=');
        }
        if chunk.len() > 2 {
            out.push(ALPHABET[n as usize & 63] as char);
        } else {
            out.push('=');
        }
    }
}

/// Pushes `n` as exactly two digits (`n` < 100).
fn push_2(n: u32, out: &mut String) {
    out.push((b'0' + (n / 10 % 10) as u8) as char);
    out.push((b'0' + (n % 10) as u8) as char);
}

/// A year as Java's `LocalDate`/ISO formatter prints it: four digits for 0..=9999, a `+`
/// sign above, and `-` with at least four digits below zero.
fn write_year(year: i64, out: &mut String) {
    let mut buf = itoa::Buffer::new();
    if (0..=9999).contains(&year) {
        let s = buf.format(year);
        for _ in s.len()..4 {
            out.push('0');
        }
        out.push_str(s);
    } else if year > 9999 {
        out.push('+');
        out.push_str(buf.format(year));
    } else {
        out.push('-');
        let s = buf.format(year.unsigned_abs());
        for _ in s.len()..4 {
            out.push('0');
        }
        out.push_str(s);
    }
}

/// A DATE given as days from 1970-01-01, over the whole range a Variant holds
/// (`+5881580-07-11`), as Spark prints it.
///
/// ```
/// let mut s = String::new();
/// df_variant::variant::format::write_days(i64::from(i32::MIN), &mut s);
/// assert_eq!(s, "-5877641-06-23");
/// ```
pub fn write_days(days: i64, out: &mut String) {
    let (year, month, day) = civil_from_days(days);
    write_year(year, out);
    out.push('-');
    push_2(month, out);
    out.push('-');
    push_2(day, out);
}

fn write_date(d: &NaiveDate, out: &mut String) {
    write_days(i64::from(super::datetime::days_since_epoch(d)), out);
}

/// A wall-clock time given as microseconds from 1970-01-01T00:00 (any `i64`, plus
/// an offset): `yyyy-MM-dd HH:mm:ss[.fraction]`, as [`write_datetime`] prints it.
fn write_wall_micros(local: i128, out: &mut String) {
    let (days, of_day) = split_micros(local);
    write_days(days, out);
    out.push(' ');
    let secs = (of_day / 1_000_000) as u32;
    write_clock(
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        (of_day % 1_000_000) as u32 * 1000,
        out,
    );
}

/// A wall-clock time given as microseconds from 1970-01-01T00:00 as Spark's JSON
/// writer prints a TIMESTAMP field: `yyyy-MM-ddTHH:mm:ss.SSS`, milliseconds always
/// (`+294247-01-10T04:00:54.775`).
pub fn write_iso_millis(local: i128, out: &mut String) {
    let (days, of_day) = split_micros(local);
    write_days(days, out);
    out.push('T');
    let secs = (of_day / 1_000_000) as u32;
    write_clock(secs / 3600, secs / 60 % 60, secs % 60, 0, out);
    let millis = (of_day % 1_000_000 / 1000) as u32;
    out.push('.');
    push_2(millis / 10, out);
    out.push((b'0' + (millis % 10) as u8) as char);
}

/// A TIMESTAMP given as microseconds since the epoch, shown in the session zone;
/// with `with_offset`, followed by the zone's offset at that instant (as
/// [`write_timestamp`]). Covers every `i64`.
fn write_timestamp_micros(utc: i64, tz: &SessionTz, with_offset: bool, out: &mut String) {
    let offset = tz.offset_secs_at_micros(utc);
    write_wall_micros(i128::from(utc) + i128::from(offset) * 1_000_000, out);
    if with_offset {
        write_offset(offset, out);
    }
}

/// A date or microsecond timestamp read from a variant's bytes: its `to_json` text
/// (`json`: quoted, timestamps with the offset) or its `CAST(... AS STRING)` text.
/// These never go through parquet-variant, whose chrono values stop at the years
/// ±262,143 while Spark writes dates up to `+5881580-07-11`.
///
/// ```
/// use df_variant::variant::encoding::Temporal;
/// use df_variant::variant::format::write_temporal;
/// use df_variant::variant::tz::SessionTz;
/// let mut s = String::new();
/// write_temporal(Temporal::Timestamp(i64::MAX), &SessionTz::utc(), true, &mut s);
/// assert_eq!(s, r#""+294247-01-10 04:00:54.775807+00:00""#);
/// ```
pub fn write_temporal(t: Temporal, tz: &SessionTz, json: bool, out: &mut String) {
    if json {
        out.push('"');
    }
    match t {
        Temporal::Date(days) => write_days(i64::from(days), out),
        Temporal::Timestamp(utc) => write_timestamp_micros(utc, tz, json, out),
        Temporal::TimestampNtz(local) => write_wall_micros(i128::from(local), out),
    }
    if json {
        out.push('"');
    }
}

/// `HH:mm:ss` followed by the fraction of the second without trailing zeros (nothing, not
/// even the dot, when it is zero), as Java's `ISO_LOCAL_TIME` prints it.
fn write_time(t: &NaiveTime, out: &mut String) {
    // chrono represents a leap second as nanos >= 1e9; keep the fraction within 9 digits.
    let nanos = t.nanosecond() % 1_000_000_000;
    write_clock(t.hour(), t.minute(), t.second(), nanos, out);
}

/// The clock part of [`write_time`] from its fields (`nanos` < 10^9).
fn write_clock(hour: u32, minute: u32, second: u32, mut nanos: u32, out: &mut String) {
    push_2(hour, out);
    out.push(':');
    push_2(minute, out);
    out.push(':');
    push_2(second, out);
    if nanos != 0 {
        let mut width = 9;
        while nanos.is_multiple_of(10) {
            nanos /= 10;
            width -= 1;
        }
        out.push('.');
        let mut buf = itoa::Buffer::new();
        let s = buf.format(nanos);
        for _ in s.len()..width {
            out.push('0');
        }
        out.push_str(s);
    }
}

fn write_datetime(t: &NaiveDateTime, out: &mut String) {
    write_date(&t.date(), out);
    out.push(' ');
    write_time(&t.time(), out);
}

/// A UTC-adjusted timestamp shown in the session zone; with `with_offset`, followed by the
/// zone's offset at that instant in Java's `+HH:MM` pattern.
fn write_timestamp(utc: &NaiveDateTime, tz: &SessionTz, with_offset: bool, out: &mut String) {
    let offset = tz.offset_at_utc(utc);
    let local = utc.checked_add_offset(offset).unwrap_or(*utc);
    write_datetime(&local, out);
    if with_offset {
        write_offset(offset.local_minus_utc(), out);
    }
}

/// Java's `appendOffset("+HH:MM", "+00:00")`: sign, hours and minutes; the seconds of the
/// offset are ignored, and an offset whose hours and minutes are both zero prints `+00:00`.
fn write_offset(total_secs: i32, out: &mut String) {
    let abs = total_secs.unsigned_abs();
    let (hours, minutes) = (abs / 3600 % 100, abs / 60 % 60);
    if hours == 0 && minutes == 0 {
        out.push_str("+00:00");
        return;
    }
    out.push(if total_secs < 0 { '-' } else { '+' });
    push_2(hours, out);
    out.push(':');
    push_2(minutes, out);
}

/// Plain decimal text of `unscaled × 10^-scale` without trailing zeros, as Spark prints a
/// variant decimal (Java's `stripTrailingZeros().toPlainString()`): `1.5`, `100`, `0.001`,
/// `-12.3`; zero (of any scale, or negative) prints `0`.
///
/// ```
/// let mut s = String::new();
/// df_variant::variant::format::write_decimal(-12300, 3, &mut s);
/// assert_eq!(s, "-12.3");
/// ```
pub fn write_decimal(unscaled: i128, scale: u8, out: &mut String) {
    let negative = unscaled < 0;
    let mut mag = unscaled.unsigned_abs();
    let mut scale = scale as usize;
    while scale > 0 && mag.is_multiple_of(10) {
        mag /= 10;
        scale -= 1;
    }
    if mag == 0 {
        out.push('0');
        return;
    }
    if negative {
        out.push('-');
    }
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(mag);
    if scale == 0 {
        out.push_str(digits);
    } else if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else {
        out.push_str("0.");
        for _ in digits.len()..scale {
            out.push('0');
        }
        out.push_str(digits);
    }
}

/// Java's `Double.toString`: the shortest digits that round-trip (as JDK 19+ computes them),
/// in plain notation with at least one fractional digit for 10^-3 <= |x| < 10^7 (`1000.0`,
/// `0.001`, `31.6`), otherwise as `d.dddE±n` (`1.0E7`, `1.5E10`, `1.0E-4`); `-0.0`, `0.0`,
/// `NaN`, `Infinity`, `-Infinity`.
///
/// ```
/// let mut s = String::new();
/// df_variant::variant::format::write_java_double(12345678.0, &mut s);
/// assert_eq!(s, "1.2345678E7");
/// ```
pub fn write_java_double(x: f64, out: &mut String) {
    if let Some(special) =
        non_finite_or_zero(x.is_nan(), x.is_infinite(), x == 0.0, x.is_sign_negative())
    {
        out.push_str(special);
        return;
    }
    let mut buf = ryu::Buffer::new();
    let (mut digits, mut exp) = decompose(buf.format_finite(x));
    if digits.len == 1 {
        // Java never prints a single significant digit: it takes the two-digit decimal
        // closest to x among those that round to x (4.9E-324, not 5.0E-324).
        let two = format!("{:.1e}", x.abs());
        if two.parse::<f64>().ok() == Some(x.abs()) {
            (digits, exp) = decompose(&two);
        }
    }
    layout(x.is_sign_negative(), digits.as_slice(), exp, out);
}

/// Java's `Float.toString`: like [`write_java_double`] with the shortest digits that
/// round-trip through `f32` (`0.1`, `1.0E10`, `1.4E-45`).
///
/// ```
/// let mut s = String::new();
/// df_variant::variant::format::write_java_float(0.1f32, &mut s);
/// assert_eq!(s, "0.1");
/// ```
pub fn write_java_float(x: f32, out: &mut String) {
    if let Some(special) =
        non_finite_or_zero(x.is_nan(), x.is_infinite(), x == 0.0, x.is_sign_negative())
    {
        out.push_str(special);
        return;
    }
    let mut buf = ryu::Buffer::new();
    let (mut digits, mut exp) = decompose(buf.format_finite(x));
    if digits.len == 1 {
        let two = format!("{:.1e}", x.abs());
        if two.parse::<f32>().ok() == Some(x.abs()) {
            (digits, exp) = decompose(&two);
        }
    }
    layout(x.is_sign_negative(), digits.as_slice(), exp, out);
}

fn non_finite_or_zero(nan: bool, inf: bool, zero: bool, negative: bool) -> Option<&'static str> {
    match (nan, inf, zero, negative) {
        (true, ..) => Some("NaN"),
        (_, true, _, false) => Some("Infinity"),
        (_, true, _, true) => Some("-Infinity"),
        (_, _, true, false) => Some("0.0"),
        (_, _, true, true) => Some("-0.0"),
        _ => None,
    }
}

/// Splits a decimal rendering (`-1.5e-7`, `10000000.0`, `0.001`, `4.9e-324`) into its
/// significant digits (ASCII, no leading or trailing zeros, at least one) and the decimal
/// exponent of the first digit, so that the value is `d.ddd × 10^exp`.
fn decompose(s: &str) -> (Digits, i32) {
    let s = s.trim_start_matches(['-', '+']);
    let (mantissa, e) = match s.find(['e', 'E']) {
        Some(p) => (&s[..p], s[p + 1..].parse::<i32>().unwrap_or(0)),
        None => (s, 0),
    };
    let mut digits = Digits::default();
    let mut int_len: i32 = 0;
    let mut leading: i32 = 0;
    let mut after_point = false;
    for c in mantissa.bytes() {
        match c {
            b'.' => after_point = true,
            b'0'..=b'9' => {
                if !after_point {
                    int_len += 1;
                }
                if c == b'0' && digits.len == 0 {
                    leading += 1;
                } else {
                    digits.push(c);
                }
            }
            _ => {}
        }
    }
    digits.trim_trailing_zeros();
    if digits.len == 0 {
        digits.push(b'0');
        return (digits, 0);
    }
    (digits, int_len - leading - 1 + e)
}

/// Significant digits of a float rendering, kept on the stack (ryu and `{:.1e}` never
/// produce more than 17 significant digits; extra ones would be dropped, not panic).
#[derive(Default)]
struct Digits {
    buf: [u8; 32],
    len: usize,
}

impl Digits {
    fn push(&mut self, c: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = c;
            self.len += 1;
        }
    }

    fn trim_trailing_zeros(&mut self) {
        while self.len > 0 && self.buf[self.len - 1] == b'0' {
            self.len -= 1;
        }
    }

    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Lays out `d.ddd × 10^exp` the way Java's `Double.toString`/`Float.toString` do.
fn layout(negative: bool, digits: &[u8], exp: i32, out: &mut String) {
    if negative {
        out.push('-');
    }
    let push_digits = |out: &mut String, d: &[u8]| {
        for &c in d {
            out.push(c as char);
        }
    };
    if (-3..7).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                push_digits(out, digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                push_digits(out, &digits[..int_len]);
                out.push('.');
                push_digits(out, &digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            for _ in 1..-exp {
                out.push('0');
            }
            push_digits(out, digits);
        }
    } else {
        push_digits(out, &digits[..1]);
        out.push('.');
        if digits.len() > 1 {
            push_digits(out, &digits[1..]);
        } else {
            out.push('0');
        }
        out.push('E');
        out.push_str(itoa::Buffer::new().format(exp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
    use parquet_variant::{VariantBuilder, VariantDecimal4, VariantDecimal8, VariantDecimal16};

    fn utc() -> SessionTz {
        SessionTz::utc()
    }

    fn la() -> SessionTz {
        SessionTz::parse("America/Los_Angeles").unwrap()
    }

    fn json(v: &Variant<'_, '_>) -> String {
        to_json_string(v, &utc())
    }

    fn cast(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<String> {
        let mut s = String::new();
        write_cast_string(v, tz, &mut s).then_some(s)
    }

    fn dbl(x: f64) -> String {
        let mut s = String::new();
        write_java_double(x, &mut s);
        s
    }

    fn flt(x: f32) -> String {
        let mut s = String::new();
        write_java_float(x, &mut s);
        s
    }

    fn ts(s: &str) -> DateTime<Utc> {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
            .unwrap()
            .and_utc()
    }

    fn ntz(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    /// `write_json_checked` against `write_json` over parsed variants.
    fn same_json_both_ways(metadata: &[u8], value: &[u8], tz: &SessionTz) -> String {
        use crate::variant::validate::{check_metadata, check_value_with, decode};
        let dict = check_metadata(metadata).unwrap();
        let len = check_value_with(value, &dict).unwrap();
        let mut raw = String::from("kept:");
        assert!(write_json_checked(&dict, &value[..len], tz, &mut raw));
        let mut via_decoder = String::from("kept:");
        write_json(&decode(metadata, value).unwrap(), tz, &mut via_decoder);
        assert_eq!(raw, via_decoder);
        raw.split_off(5)
    }

    #[test]
    fn checked_bytes_print_as_the_decoder_does() {
        use crate::variant::json::{JsonParseOptions, JsonToVariant};
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        let docs = [
            r#"{"b": [1, -129, 40000, -3000000000, 1.50, 1e300, -0.0, "x\ny\u0001/é"], "a": null, "": {}}"#,
            r#"[true, false, null, [], [[]], {"z": {"y": [{"x": 1}]}}, 12345678901234567890123]"#,
            // Spark orders these keys by UTF-16 code units, not UTF-8 bytes.
            "{\"\u{E000}\": 1, \"\u{10000}\": 2, \"a\": 3}",
            r#""a string longer than sixty-three bytes, so not a short string at all......""#,
            "-128",
            "9223372036854775807",
        ];
        for doc in docs {
            p.parse(doc).unwrap();
            same_json_both_ways(p.metadata(), p.value(), &utc());
        }
        // An object in Spark's UTF-16 order, which is not UTF-8 order: printed sorted.
        let mut metadata = vec![0x01, 0x02, 0x00, 0x04, 0x07];
        metadata.extend_from_slice("\u{10000}\u{E000}".as_bytes());
        let object = [
            0x02, 0x02, 0x00, 0x01, 0x00, 0x02, 0x04, 0x0C, 0x01, 0x0C, 0x02,
        ];
        assert_eq!(
            same_json_both_ways(&metadata, &object, &utc()),
            "{\"\u{E000}\":2,\"\u{10000}\":1}"
        );
        let mut g = crate::demo::bluesky::BlueskyGen::new(7);
        let mut event = Vec::new();
        for _ in 0..500 {
            event.clear();
            g.next_event(&mut event);
            p.parse(std::str::from_utf8(&event).unwrap()).unwrap();
            same_json_both_ways(p.metadata(), p.value(), &la());
        }
        // Every other primitive, inside an object, in a zone with an offset.
        let mut b = VariantBuilder::new();
        let mut o = b.new_object();
        o.insert("d", NaiveDate::from_ymd_opt(2024, 1, 15).unwrap());
        o.insert("t", ts("2024-01-15 10:20:30.123"));
        o.insert("n", ntz("2024-01-15 10:20:30.5"));
        o.insert("f", 1.5f32);
        o.insert("x", f64::NAN);
        o.insert("b", &b"\x01\x02\xff"[..]);
        o.insert("m", VariantDecimal16::try_new(-12345, 3).unwrap());
        o.insert("i", 7i16);
        o.finish();
        let (m, v) = b.finish();
        assert_eq!(
            same_json_both_ways(&m, &v, &la()),
            r#"{"b":"AQL/","d":"2024-01-15","f":1.5,"i":7,"m":-12.345,"n":"2024-01-15 10:20:30.5","t":"2024-01-15 02:20:30.123-08:00","x":"NaN"}"#
        );
    }

    #[test]
    fn the_word_test_finds_every_byte_that_needs_an_escape() {
        for b in 0..=255u8 {
            let needs = b < 0x20 || b == b'"' || b == b'\\';
            for pos in 0..8 {
                let mut w = *b"abcdefgh";
                w[pos] = b;
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(w)),
                    needs,
                    "{b:#x} at {pos}"
                );
                // Next to bytes with the high bit set (UTF-8 continuations).
                let mut w = [0xC3u8; 8];
                w[pos] = b;
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(w)),
                    needs,
                    "{b:#x} at {pos}"
                );
            }
        }
        let mut out = String::new();
        write_json_string("0123456789abcdé\"\\\n\u{1}tail", &mut out);
        assert_eq!(out, r#""0123456789abcdé\"\\\n\u0001tail""#);
    }

    #[test]
    fn checked_writer_refuses_bytes_that_do_not_hold_together() {
        let mut out = String::from("kept");
        // An object whose field id is past the dictionary, a truncated string.
        assert!(!write_json_checked(
            &[],
            &[0x02, 0x01, 0x05, 0x00, 0x01, 0x00],
            &utc(),
            &mut out
        ));
        assert!(!write_json_checked(&["a"], &[0x0d, b'a'], &utc(), &mut out));
        assert_eq!(out, "kept");
    }

    #[test]
    fn java_double() {
        let cases: &[(f64, &str)] = &[
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (9999999.999999998, "9999999.999999998"),
            (1e-3, "0.001"),
            (9.99e-4, "9.99E-4"),
            (0.0009999999999999998, "9.999999999999998E-4"),
            (1e-4, "1.0E-4"),
            (1e20, "1.0E20"),
            (1e23, "1.0E23"),
            (123456789012.0, "1.23456789012E11"),
            (12345678.0, "1.2345678E7"),
            (1.5e10, "1.5E10"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (5e-324, "4.9E-324"),
            (1e-323, "9.9E-324"),
            (f64::MAX, "1.7976931348623157E308"),
            (-f64::MAX, "-1.7976931348623157E308"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.0, "1.0"),
            (-1.5, "-1.5"),
            (100.0, "100.0"),
            (1000.0, "1000.0"),
            (31.6, "31.6"),
            (0.1, "0.1"),
            (0.3, "0.3"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123.456, "123.456"),
            (0.00123, "0.00123"),
            (9223372036854775807.0, "9.223372036854776E18"),
            (1e16, "1.0E16"),
            (1.0e38, "1.0E38"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, want) in cases {
            assert_eq!(dbl(*x), *want, "{x:e}");
            // What Java prints always parses back to the same double.
            if x.is_finite() {
                assert_eq!(dbl(*x).parse::<f64>().unwrap().to_bits(), x.to_bits());
            }
        }
    }

    #[test]
    fn java_layout_round_trips() {
        // Deterministic pseudo-random bit patterns: every finite value prints in Java's
        // shape and parses back to the same bits.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let shape_ok = |s: &str, abs_ok_plain: bool| {
            let body = s.trim_start_matches('-');
            if abs_ok_plain {
                !body.contains('E') && body.contains('.') && !body.ends_with('.')
            } else {
                let (m, e) = body.split_once('E').unwrap();
                m.len() >= 3
                    && m.as_bytes()[1] == b'.'
                    && m.as_bytes()[0] != b'0'
                    && !e.starts_with('+')
                    && e.parse::<i32>().is_ok()
            }
        };
        for _ in 0..20_000 {
            let bits = next();
            let x = f64::from_bits(bits);
            if x.is_finite() && x != 0.0 {
                let s = dbl(x);
                assert_eq!(s.parse::<f64>().unwrap().to_bits(), bits, "{s}");
                let plain = (1e-3..1e7).contains(&x.abs());
                assert!(shape_ok(&s, plain), "{s}");
            }
            let y = f32::from_bits((bits >> 32) as u32);
            if y.is_finite() && y != 0.0 {
                let s = flt(y);
                assert_eq!(s.parse::<f32>().unwrap().to_bits(), y.to_bits(), "{s}");
                let plain = (1e-3..1e7).contains(&y.abs());
                assert!(shape_ok(&s, plain), "{s}");
            }
        }
    }

    #[test]
    fn java_float() {
        let cases: &[(f32, &str)] = &[
            (0.1, "0.1"),
            (1e10, "1.0E10"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (16777216.0, "1.6777216E7"),
            (0.001, "0.001"),
            (1e-4, "1.0E-4"),
            (1.1, "1.1"),
            (2.71, "2.71"),
            (1.0, "1.0"),
            (-2.5, "-2.5"),
            (f32::MAX, "3.4028235E38"),
            (f32::MIN_POSITIVE, "1.1754944E-38"),
            (1.4e-45, "1.4E-45"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (f32::NAN, "NaN"),
            (f32::INFINITY, "Infinity"),
            (f32::NEG_INFINITY, "-Infinity"),
        ];
        for (x, want) in cases {
            assert_eq!(flt(*x), *want, "{x:e}");
        }
    }

    #[test]
    fn decimals() {
        let cases: &[(i128, u8, &str)] = &[
            (15, 1, "1.5"),
            (150, 2, "1.5"),
            (100, 0, "100"),
            (10000, 2, "100"),
            (1, 3, "0.001"),
            (-123, 1, "-12.3"),
            (-5, 1, "-0.5"),
            (0, 0, "0"),
            (0, 5, "0"),
            (123, 0, "123"),
            (
                12345678901234567890123456789012345678,
                38,
                "0.12345678901234567890123456789012345678",
            ),
            (
                -99999999999999999999999999999999999999,
                0,
                "-99999999999999999999999999999999999999",
            ),
            (i128::MIN, 0, "-170141183460469231731687303715884105728"),
        ];
        for (u, s, want) in cases {
            let mut out = String::new();
            write_decimal(*u, *s, &mut out);
            assert_eq!(out, *want, "{u} scale {s}");
        }
        let mut out = String::new();
        write_decimal(-1, 255, &mut out);
        assert_eq!(out, format!("-0.{}1", "0".repeat(254)));
        // Through the variant types.
        let d4 = Variant::Decimal4(VariantDecimal4::try_new(150, 2).unwrap());
        let d8 = Variant::Decimal8(VariantDecimal8::try_new(-1_000_000_000_000, 12).unwrap());
        let d16 = Variant::Decimal16(VariantDecimal16::try_new(10i128.pow(20), 3).unwrap());
        assert_eq!(json(&d4), "1.5");
        assert_eq!(json(&d8), "-1");
        assert_eq!(json(&d16), "100000000000000000");
        assert_eq!(cast(&d4, &utc()).as_deref(), Some("1.5"));
    }

    #[test]
    fn string_escaping() {
        let cases: &[(&str, &str)] = &[
            ("plain", r#""plain""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\u{8}\u{c}\n\r\t", r#""\b\f\n\r\t""#),
            ("\u{0}", r#""\u0000""#),
            ("\u{1f}", r#""\u001F""#),
            ("\u{b}x\u{1a}", r#""\u000Bx\u001A""#),
            ("/\u{7f}", "\"/\u{7f}\""),
            ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
            ("é日本🎉", "\"é日本🎉\""),
            ("", r#""""#),
        ];
        for (s, want) in cases {
            let mut out = String::new();
            write_json_string(s, &mut out);
            assert_eq!(out, *want, "{s:?}");
            // Short strings and long strings print alike.
            assert_eq!(json(&Variant::from(*s)), *want);
            let long = s.repeat(30);
            assert_eq!(json(&Variant::String(&long)), {
                let mut w = String::new();
                write_json_string(&long, &mut w);
                w
            });
        }
    }

    #[test]
    fn scalars() {
        let d = NaiveDate::from_ymd_opt(2024, 1, 15).unwrap();
        let t = NaiveTime::from_hms_micro_opt(10, 20, 30, 500_000).unwrap();
        let uuid = "67E55044-10B1-426F-9247-BB680E5FE0C8".parse().unwrap();
        // (value, to_json, cast to string)
        let cases: Vec<(Variant, &str, Option<&str>)> = vec![
            (Variant::Null, "null", None),
            (Variant::BooleanTrue, "true", Some("true")),
            (Variant::BooleanFalse, "false", Some("false")),
            (Variant::Int8(-128), "-128", Some("-128")),
            (Variant::Int16(300), "300", Some("300")),
            (Variant::Int32(-70000), "-70000", Some("-70000")),
            (
                Variant::Int64(i64::MIN),
                "-9223372036854775808",
                Some("-9223372036854775808"),
            ),
            (Variant::Double(1e3), "1000.0", Some("1000.0")),
            (Variant::Double(f64::NAN), "\"NaN\"", Some("NaN")),
            (
                Variant::Double(f64::INFINITY),
                "\"Infinity\"",
                Some("Infinity"),
            ),
            (
                Variant::Double(f64::NEG_INFINITY),
                "\"-Infinity\"",
                Some("-Infinity"),
            ),
            (Variant::Float(0.1), "0.1", Some("0.1")),
            (Variant::Float(f32::NAN), "\"NaN\"", Some("NaN")),
            (
                Variant::Float(f32::NEG_INFINITY),
                "\"-Infinity\"",
                Some("-Infinity"),
            ),
            (Variant::from("a\"b"), r#""a\"b""#, Some("a\"b")),
            (Variant::String("x\ny"), r#""x\ny""#, Some("x\ny")),
            (Variant::Date(d), "\"2024-01-15\"", Some("2024-01-15")),
            (Variant::Time(t), "\"10:20:30.5\"", Some("10:20:30.5")),
            (
                Variant::Time(NaiveTime::from_hms_opt(0, 0, 0).unwrap()),
                "\"00:00:00\"",
                Some("00:00:00"),
            ),
            (
                Variant::Uuid(uuid),
                "\"67e55044-10b1-426f-9247-bb680e5fe0c8\"",
                Some("67e55044-10b1-426f-9247-bb680e5fe0c8"),
            ),
            (Variant::Binary(b""), "\"\"", Some("")),
            (Variant::Binary(b"f"), "\"Zg==\"", Some("f")),
            (Variant::Binary(b"fo"), "\"Zm8=\"", Some("fo")),
            (Variant::Binary(b"foo"), "\"Zm9v\"", Some("foo")),
            (Variant::Binary(b"foobar"), "\"Zm9vYmFy\"", Some("foobar")),
            (
                Variant::Binary(&[0xff, 0xfe]),
                "\"//4=\"",
                Some("\u{fffd}\u{fffd}"),
            ),
            (
                Variant::Binary(&[0xfb, 0xef, 0xbe]),
                "\"++++\"",
                Some("\u{fffd}\u{fffd}"),
            ),
        ];
        for (v, want_json, want_cast) in &cases {
            assert_eq!(json(v), *want_json, "{v:?}");
            assert_eq!(cast(v, &utc()).as_deref(), *want_cast, "{v:?}");
        }
    }

    #[test]
    fn dates_outside_four_digit_years() {
        let cases: &[(i32, &str)] = &[
            (0, "0000-03-01"),
            (999, "0999-03-01"),
            (9999, "9999-03-01"),
            (10000, "+10000-03-01"),
            (-1, "-0001-03-01"),
            (-12345, "-12345-03-01"),
        ];
        for (y, want) in cases {
            let d = NaiveDate::from_ymd_opt(*y, 3, 1).unwrap();
            assert_eq!(cast(&Variant::Date(d), &utc()).as_deref(), Some(*want));
        }
    }

    #[test]
    fn timestamps() {
        let plus_0530 = SessionTz::Fixed(FixedOffset::east_opt(5 * 3600 + 1800).unwrap());
        let thirty_secs = SessionTz::Fixed(FixedOffset::east_opt(30).unwrap());
        let minus_90_secs = SessionTz::Fixed(FixedOffset::west_opt(90).unwrap());
        // (value, zone, to_json, cast)
        let cases: Vec<(Variant, SessionTz, &str, &str)> = vec![
            (
                Variant::TimestampMicros(ts("2024-01-15 10:20:30.123")),
                utc(),
                "\"2024-01-15 10:20:30.123+00:00\"",
                "2024-01-15 10:20:30.123",
            ),
            (
                Variant::TimestampMicros(ts("2024-01-15 10:20:30.123")),
                la(),
                "\"2024-01-15 02:20:30.123-08:00\"",
                "2024-01-15 02:20:30.123",
            ),
            (
                Variant::TimestampMicros(ts("2024-07-15 10:20:30")),
                la(),
                "\"2024-07-15 03:20:30-07:00\"",
                "2024-07-15 03:20:30",
            ),
            (
                Variant::TimestampMicros(ts("2024-01-15 00:00:00.000001")),
                la(),
                "\"2024-01-14 16:00:00.000001-08:00\"",
                "2024-01-14 16:00:00.000001",
            ),
            (
                Variant::TimestampMicros(ts("2024-01-15 23:59:59.1")),
                plus_0530,
                "\"2024-01-16 05:29:59.1+05:30\"",
                "2024-01-16 05:29:59.1",
            ),
            // Local mean time before 1883: -07:52:58; Java's +HH:MM drops the seconds.
            (
                Variant::TimestampMicros(ts("1850-01-01 12:00:00")),
                la(),
                "\"1850-01-01 04:07:02-07:52\"",
                "1850-01-01 04:07:02",
            ),
            (
                Variant::TimestampMicros(ts("2024-01-15 10:20:00")),
                thirty_secs,
                "\"2024-01-15 10:20:30+00:00\"",
                "2024-01-15 10:20:30",
            ),
            (
                Variant::TimestampMicros(ts("2024-01-15 10:20:00")),
                minus_90_secs,
                "\"2024-01-15 10:18:30-00:01\"",
                "2024-01-15 10:18:30",
            ),
            (
                Variant::TimestampNanos(ts("2024-01-15 10:20:30.123456789")),
                utc(),
                "\"2024-01-15 10:20:30.123456789+00:00\"",
                "2024-01-15 10:20:30.123456789",
            ),
            (
                Variant::TimestampNanos(ts("2024-01-15 10:20:30.000000010")),
                la(),
                "\"2024-01-15 02:20:30.00000001-08:00\"",
                "2024-01-15 02:20:30.00000001",
            ),
            (
                Variant::TimestampNtzMicros(ntz("2024-01-15 10:20:30.5")),
                la(),
                "\"2024-01-15 10:20:30.5\"",
                "2024-01-15 10:20:30.5",
            ),
            (
                Variant::TimestampNtzNanos(ntz("2024-01-15 10:20:30.000000001")),
                la(),
                "\"2024-01-15 10:20:30.000000001\"",
                "2024-01-15 10:20:30.000000001",
            ),
            (
                Variant::TimestampNtzMicros(ntz("1969-12-31 23:59:59")),
                utc(),
                "\"1969-12-31 23:59:59\"",
                "1969-12-31 23:59:59",
            ),
        ];
        for (v, tz, want_json, want_cast) in &cases {
            assert_eq!(to_json_string(v, tz), *want_json, "{v:?}");
            assert_eq!(cast(v, tz).as_deref(), Some(*want_cast), "{v:?}");
        }
    }

    #[test]
    fn objects_and_arrays() {
        let mut b = VariantBuilder::new();
        let mut o = b.new_object();
        o.insert("z", 1i8);
        o.insert("é", "e");
        o.insert("a", 2.5f64);
        o.insert("_", ());
        o.insert("Z", true);
        o.insert("0", "q\"uote");
        {
            let mut l = o.new_list("arr");
            l.append_value(1i64);
            l.append_value("s");
            l.append_value(());
            l.new_list().finish();
            let mut inner = l.new_object();
            inner.insert("y", 1.5f32);
            inner.insert("x", f64::NAN);
            inner.finish();
            l.new_object().finish();
            l.finish();
        }
        {
            let mut n = o.new_object("nested");
            n.insert("b\n", VariantDecimal4::try_new(10, 1).unwrap());
            n.insert("a", Variant::Binary(b"hi"));
            n.finish();
        }
        o.finish();
        let (m, v) = b.finish();
        let var = Variant::try_new(&m, &v).unwrap();
        let want = r#"{"0":"q\"uote","Z":true,"_":null,"a":2.5,"arr":[1,"s",null,[],{"x":"NaN","y":1.5},{}],"nested":{"a":"aGk=","b\n":1},"z":1,"é":"e"}"#;
        assert_eq!(json(&var), want);
        // Cast of a container is its JSON; nested strings stay quoted.
        assert_eq!(cast(&var, &utc()).as_deref(), Some(want));

        let mut b = VariantBuilder::new();
        let mut l = b.new_list();
        l.append_value("a");
        l.append_value(Variant::TimestampMicros(ts("2024-01-15 10:20:30.123")));
        l.finish();
        let (m, v) = b.finish();
        let var = Variant::try_new(&m, &v).unwrap();
        assert_eq!(
            to_json_string(&var, &la()),
            r#"["a","2024-01-15 02:20:30.123-08:00"]"#
        );
        // Inside a container a timestamp prints as in to_json, with its offset.
        assert_eq!(
            cast(&var, &la()).as_deref(),
            Some(r#"["a","2024-01-15 02:20:30.123-08:00"]"#)
        );
    }

    #[test]
    fn unsorted_fields_are_sorted() {
        let fields = vec![
            ("b", Variant::Int8(1)),
            ("é", Variant::Int8(3)),
            ("a", Variant::from("x")),
        ];
        let mut sorted = fields.clone();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = String::new();
        write_fields(sorted.into_iter(), &utc(), &mut out);
        assert_eq!(out, r#"{"a":"x","b":1,"é":3}"#);
    }

    #[test]
    fn offsets() {
        let cases: &[(i32, &str)] = &[
            (0, "+00:00"),
            (3600, "+01:00"),
            (-8 * 3600, "-08:00"),
            (5 * 3600 + 45 * 60, "+05:45"),
            (-(7 * 3600 + 52 * 60 + 58), "-07:52"),
            (59, "+00:00"),
            (-59, "+00:00"),
            (-60, "-00:01"),
            (18 * 3600, "+18:00"),
        ];
        for (secs, want) in cases {
            let mut out = String::new();
            write_offset(*secs, &mut out);
            assert_eq!(out, *want, "{secs}");
        }
    }
}
