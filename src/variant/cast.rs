//! Spark's cast rules from Variant values to scalar values, as used by
//! `variant_get`, `try_variant_get` and `cast(variant AS type)`. This module holds
//! the per-value rules; the Arrow column builder that applies them to a whole
//! column (element-wise into arrays, structs and maps) is `VariantCaster` in
//! `array/cast.rs`, and date and timestamp text is parsed in [`super::datetime`].
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
//! * string: [`super::format::write_cast_string`]; binary: strings (UTF-8 bytes) and binary;
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

use parquet_variant::Variant;

use super::tz::SessionTz;

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

// ---------------------------------------------------------------------------
// Scalar conversions. Each returns `None` for a value that cannot be converted;
// variant nulls never reach them.
// ---------------------------------------------------------------------------

/// `10^i` for `i` in `0..=38`.
pub(crate) const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

pub(crate) fn pow10(n: u32) -> Option<i128> {
    POW10.get(n as usize).copied()
}

/// The unscaled value and scale of a decimal variant.
pub(crate) fn decimal_parts(v: &Variant<'_, '_>) -> Option<(i128, u8)> {
    match v {
        Variant::Decimal4(d) => Some((d.integer().into(), d.scale())),
        Variant::Decimal8(d) => Some((d.integer().into(), d.scale())),
        Variant::Decimal16(d) => Some((d.integer(), d.scale())),
        _ => None,
    }
}

/// The text of a string variant.
pub(crate) fn string_of<'a>(v: &'a Variant<'_, '_>) -> Option<&'a str> {
    match v {
        Variant::String(s) => Some(s),
        Variant::ShortString(s) => Some(s.as_str()),
        _ => None,
    }
}

/// Spark's `trimAll`: strips ASCII white space and control characters at both ends.
pub(crate) fn trim_all(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ' || c == '\u{7f}')
}

/// Java's `String.trim`: strips characters up to U+0020 at both ends.
pub(crate) fn trim_java(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

pub(crate) fn to_boolean(v: &Variant<'_, '_>) -> Option<bool> {
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
pub(crate) fn f64_to_integral(x: f64, min: i64, max: i64) -> Option<i64> {
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
pub(crate) fn to_integral(v: &Variant<'_, '_>, min: i64, max: i64) -> Option<i64> {
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
pub(crate) fn parse_integral(s: &str) -> Option<i64> {
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
pub(crate) const F64_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal as the nearest double (Java's `BigDecimal.doubleValue`).
pub(crate) fn decimal_to_f64(u: i128, s: u8) -> f64 {
    if u.unsigned_abs() < (1u128 << 53) && (s as usize) < F64_POW10.len() {
        // Both operands are exact, so the quotient is correctly rounded.
        return u as f64 / F64_POW10[s as usize];
    }
    format!("{u}e-{s}").parse().unwrap_or(f64::NAN)
}

/// A decimal as the nearest float (Java's `BigDecimal.floatValue`).
pub(crate) fn decimal_to_f32(u: i128, s: u8) -> f32 {
    if u.unsigned_abs() < (1u128 << 24) && s <= 10 {
        return u as f32 / F64_POW10[s as usize] as f32;
    }
    format!("{u}e-{s}").parse().unwrap_or(f32::NAN)
}

/// Seconds since the epoch of a TIMESTAMP as a double.
pub(crate) fn timestamp_seconds(v: &Variant<'_, '_>) -> Option<f64> {
    match v {
        Variant::TimestampMicros(t) | Variant::TimestampNanos(t) => {
            Some(t.timestamp_micros() as f64 / 1e6)
        }
        _ => None,
    }
}

pub(crate) fn to_f64(v: &Variant<'_, '_>) -> Option<f64> {
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

pub(crate) fn to_f32(v: &Variant<'_, '_>) -> Option<f32> {
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
pub(crate) enum FloatText<'a> {
    /// NaN or an infinity.
    Special(f64),
    /// Decimal text (without Java's type suffix) that Rust's parser accepts.
    Number(&'a str),
}

/// Java's `Double.parseDouble` syntax (decimal forms, optional `f/F/d/D` suffix,
/// `NaN`, `Infinity`) plus Spark's special values (`inf`, `+inf`, `infinity`,
/// `+infinity`, `-inf`, `-infinity`, `nan`, case-insensitive). Hexadecimal
/// floating-point literals are not supported.
pub(crate) fn java_float_text(s: &str) -> Option<FloatText<'_>> {
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
pub(crate) struct DecimalText<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
    exp: i64,
}

/// Parses Java `BigDecimal` text: an optional sign, digits with an optional point
/// (at least one digit), an optional exponent. No white space.
pub(crate) fn parse_decimal_text(s: &str) -> Option<DecimalText<'_>> {
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
pub(crate) fn fits(x: i128, precision: u8) -> bool {
    let p = precision.min(38) as usize;
    x.unsigned_abs() < POW10[p].unsigned_abs()
}

/// Rounds decimal text half-up to `scale` and returns the unscaled value, or
/// `None` when it does not fit `precision`.
pub(crate) fn round_decimal_text(d: &DecimalText<'_>, precision: u8, scale: u8) -> Option<i128> {
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
pub(crate) fn rescale(u: i128, s: u8, precision: u8, scale: u8) -> Option<i128> {
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
pub(crate) fn f64_to_decimal(x: f64, precision: u8, scale: u8) -> Option<i128> {
    if !x.is_finite() {
        return None;
    }
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(x);
    round_decimal_text(&parse_decimal_text(text)?, precision, scale)
}

pub(crate) fn to_decimal(v: &Variant<'_, '_>, precision: u8, scale: u8) -> Option<i128> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
