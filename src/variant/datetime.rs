//! Dates and timestamps for Spark's casts: parsing date and timestamp text as
//! Spark does, and moving between UTC instants and session-local wall-clock times.

use chrono::{Datelike, NaiveDate, NaiveDateTime, TimeDelta};
use parquet_variant::Variant;

use super::cast::{decimal_parts, f64_to_integral, pow10, string_of, trim_all};
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

pub(crate) fn to_timestamp(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
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

pub(crate) fn seconds_f64_to_micros(x: f64) -> Option<i64> {
    if !x.is_finite() {
        return None;
    }
    f64_to_integral(x * 1e6, i64::MIN, i64::MAX)
}

pub(crate) fn to_timestamp_ntz(v: &Variant<'_, '_>, tz: &SessionTz) -> Option<i64> {
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
pub(crate) fn parse_date(s: &str) -> Option<NaiveDate> {
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
pub(crate) fn parse_timestamp(s: &str) -> Option<(NaiveDateTime, Option<SessionTz>)> {
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
pub(crate) fn parse_zone(z: &str) -> Option<SessionTz> {
    if z.is_empty() {
        return None;
    }
    SessionTz::parse(z).ok()
}
