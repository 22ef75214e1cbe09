//! Dates and timestamps for Spark's casts: parsing date and timestamp text as
//! Spark does, and moving between UTC instants and session-local wall-clock times.

use chrono::{Datelike, NaiveDate, NaiveDateTime, TimeDelta};
use parquet_variant::Variant;

use super::calendar::{MICROS_PER_DAY, days_from_civil, split_micros};
use super::cast::{decimal_parts, f64_to_integral, pow10, string_of, trim_all};
use super::encoding::Temporal;
use super::tz::SessionTz;

// ---------------------------------------------------------------------------
// Dates and timestamps.
// ---------------------------------------------------------------------------

/// Days from 0001-01-01 (CE day 1) to 1970-01-01.
pub(crate) const UNIX_EPOCH_DAY_CE: i32 = 719_163;

pub(crate) fn days_since_epoch(d: &NaiveDate) -> i32 {
    d.num_days_from_ce() - UNIX_EPOCH_DAY_CE
}

pub(crate) fn naive_micros(t: &NaiveDateTime) -> i64 {
    t.and_utc().timestamp_micros()
}

/// The wall-clock time of a UTC instant in `tz`.
pub(crate) fn utc_to_local(utc: &NaiveDateTime, tz: &SessionTz) -> Option<NaiveDateTime> {
    let off = tz.offset_at_utc(utc).local_minus_utc();
    utc.checked_add_signed(TimeDelta::seconds(off.into()))
}

/// A wall-clock time in `tz` as a UTC instant; `None` near the ends of chrono's
/// range, where the conversion could overflow.
pub(crate) fn local_to_utc(local: &NaiveDateTime, tz: &SessionTz) -> Option<NaiveDateTime> {
    if local.year().abs() > 262_000 {
        return None;
    }
    Some(tz.local_to_utc(local))
}

pub(crate) fn to_date(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i32> {
    match v {
        Variant::TimestampNanos(t) => {
            Some(days_since_epoch(&utc_to_local(&t.naive_utc(), tz)?.date()))
        }
        Variant::TimestampNtzNanos(t) => Some(days_since_epoch(&t.date())),
        Variant::String(_) | Variant::ShortString(_) => parse_date(string_of(v)?),
        _ => temporal_to_date(temporal_of(v)?, tz),
    }
}

/// The [`Temporal`] of a parquet-variant date or microsecond timestamp.
fn temporal_of(v: &Variant<'_, '_>) -> Option<Temporal> {
    match v {
        Variant::Date(d) => Some(Temporal::Date(days_since_epoch(d))),
        Variant::TimestampMicros(t) => Some(Temporal::Timestamp(t.timestamp_micros())),
        Variant::TimestampNtzMicros(t) => Some(Temporal::TimestampNtz(naive_micros(t))),
        _ => None,
    }
}

/// A TIMESTAMP's wall-clock microseconds in the session zone.
fn local_micros(utc: i64, tz: &SessionTz) -> i128 {
    i128::from(utc) + i128::from(tz.offset_secs_at_micros(utc)) * 1_000_000
}

/// Spark's cast of a variant date or timestamp to DATE, over every value a Variant
/// holds (read from the bytes, see [`Temporal`]); `None` past the DATE range.
pub(crate) fn temporal_to_date(t: Temporal, tz: &SessionTz) -> Option<i32> {
    match t {
        Temporal::Date(days) => Some(days),
        Temporal::Timestamp(utc) => i32::try_from(split_micros(local_micros(utc, tz)).0).ok(),
        Temporal::TimestampNtz(local) => i32::try_from(split_micros(local.into()).0).ok(),
    }
}

/// Spark's cast of a variant date or timestamp to TIMESTAMP (microseconds since
/// the epoch); `None` when the instant is beyond the `i64` range.
pub(crate) fn temporal_to_timestamp(t: Temporal, tz: &SessionTz) -> Option<i64> {
    match t {
        Temporal::Timestamp(utc) => Some(utc),
        Temporal::TimestampNtz(local) => tz.local_micros_to_utc(local.into()),
        Temporal::Date(days) => {
            tz.local_micros_to_utc(i128::from(days) * i128::from(MICROS_PER_DAY))
        }
    }
}

/// Spark's cast of a variant date or timestamp to TIMESTAMP_NTZ; `None` beyond
/// the `i64` range.
pub(crate) fn temporal_to_timestamp_ntz(t: Temporal, tz: &SessionTz) -> Option<i64> {
    match t {
        Temporal::TimestampNtz(local) => Some(local),
        Temporal::Timestamp(utc) => i64::try_from(local_micros(utc, tz)).ok(),
        Temporal::Date(days) => i64::try_from(i128::from(days) * i128::from(MICROS_PER_DAY)).ok(),
    }
}

pub(crate) fn to_timestamp(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
    match v {
        Variant::TimestampNanos(t) => Some(t.timestamp_micros()),
        Variant::TimestampNtzNanos(t) => Some(naive_micros(&local_to_utc(t, tz)?)),
        Variant::Date(_) | Variant::TimestampMicros(_) | Variant::TimestampNtzMicros(_) => {
            temporal_to_timestamp(temporal_of(v)?, tz)
        }
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
            zone.as_ref().unwrap_or(tz).local_micros_to_utc(local)
        }
        _ => None,
    }
}

pub(crate) fn seconds_f64_to_micros(x: f64) -> Option<i64> {
    if !x.is_finite() {
        return None;
    }
    f64_to_integral(x * 1e6, i64::MIN, i64::MAX)
}

pub(crate) fn to_timestamp_ntz(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
    match v {
        Variant::TimestampNtzNanos(t) => Some(naive_micros(t)),
        Variant::TimestampNanos(t) => Some(naive_micros(&utc_to_local(&t.naive_utc(), tz)?)),
        Variant::String(_) | Variant::ShortString(_) => {
            // A zone in the text is checked but ignored: the wall time is kept.
            let (local, _zone) = parse_timestamp(string_of(v)?)?;
            i64::try_from(local).ok()
        }
        _ => temporal_to_timestamp_ntz(temporal_of(v)?, tz),
    }
}

/// Spark's date string parsing: `[+-]yyyy[y..]`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, and
/// after the day a space or `T` followed by anything (ignored). The year has 4 to 7
/// digits, month and day 1 or 2. Returns days from 1970-01-01, `None` past the
/// DATE range (`-5877641-06-23` to `+5881580-07-11`).
pub(crate) fn parse_date(s: &str) -> Option<i32> {
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
    let days = days_from_civil(
        sign * segs[0],
        u32::try_from(segs[1]).ok()?,
        u32::try_from(segs[2]).ok()?,
    )?;
    i32::try_from(days).ok()
}

/// Spark's timestamp string parsing:
/// `[+-]yyyy[-[m]m[-[d]d[( |T)[h]h[:[m]m[:[s]s[.fraction]]]]]][zone]`, the zone only
/// after the seconds (`Z`, `+hh:mm`, `+hhmm`, `+hh`, `UTC`, `GMT+1`, an IANA name;
/// white space before it allowed). More than 6 fraction digits are truncated.
/// Returns the wall time (microseconds from 1970-01-01T00:00, which may lie past the
/// TIMESTAMP range until the zone is applied) and the zone, if any. Time-only
/// strings (which Spark places on the current date) are rejected.
pub(crate) fn parse_timestamp(s: &str) -> Option<(i128, Option<SessionTz>)> {
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
    let days = days_from_civil(
        sign * segs[0],
        u32::try_from(segs[1]).ok()?,
        u32::try_from(segs[2]).ok()?,
    )?;
    if segs[3] > 23 || segs[4] > 59 || segs[5] > 59 {
        return None;
    }
    let of_day = (segs[3] * 3600 + segs[4] * 60 + segs[5]) * 1_000_000 + micros;
    let zone = match zone {
        Some(z) => Some(parse_zone(z)?),
        None => None,
    };
    Some((
        i128::from(days) * i128::from(MICROS_PER_DAY) + i128::from(of_day),
        zone,
    ))
}

/// A zone in a timestamp string. Java's `ZoneId.of` is case-sensitive; `UTC`, `Z`
/// and `GMT` and offsets (`+h`, `+hh`, `+hh:mm`, `+hhmm`, also after `UTC`/`GMT`)
/// and IANA names are accepted.
pub(crate) fn parse_zone(z: &str) -> Option<SessionTz> {
    if z.is_empty() {
        return None;
    }
    SessionTz::parse(z).ok()
}
