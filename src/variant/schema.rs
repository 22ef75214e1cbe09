//! `schema_of_variant` and the merge rules of `schema_of_variant_agg`, as Spark 4.x
//! computes and prints them (`docs/spark-semantics.md` §10).
//!
//! Spark merges two schemas with its JSON-inference rule (`JsonInferSchema.compatibleType`
//! with `VARIANT` as the fallback), which first tries the *tightest common type* and only
//! then the wider rules. [`merge`] follows the same two steps:
//!
//! 1. Tightest: equal types stay; `VOID` gives way to anything; `BIGINT` < `FLOAT` < `DOUBLE`
//!    (so `BIGINT` with `FLOAT` is `FLOAT`); `BIGINT` with a decimal that already holds 20
//!    integer digits is that decimal; `DATE` with `TIMESTAMP` is `TIMESTAMP`, `DATE` with
//!    `TIMESTAMP_NTZ` is `TIMESTAMP_NTZ`, `TIMESTAMP` with `TIMESTAMP_NTZ` is `TIMESTAMP`;
//!    arrays whose elements have a tightest type; and objects with the same number of fields
//!    whose names match pairwise (in sorted order) *ignoring case*, where every pair has a
//!    tightest type — the result keeps the first object's names (Spark's default
//!    case-insensitive resolver: `{"a":1}` and `{"A":2}` merge to `OBJECT<a: BIGINT>`).
//! 2. Wider: `DOUBLE` or `FLOAT` with a decimal is `DOUBLE`; two decimals widen to
//!    `max(integer digits) + max(scale)` digits, and to `DOUBLE` if that exceeds 38;
//!    `BIGINT` with a decimal widens as if the integer were `DECIMAL(20,0)`; objects merge
//!    field-wise (union of keys, exact names); arrays merge their element types; anything
//!    else is `VARIANT`.
//!
//! Extensions beyond Spark (its variant has no such types): `TIME` (time of day),
//! nanosecond timestamps report as `TIMESTAMP`/`TIMESTAMP_NTZ`, and `UUID` (which recent
//! Spark also reports as `UUID`). They merge only with themselves (and `VOID`).

use std::collections::BTreeMap;
use std::fmt;

use parquet_variant::Variant;

/// The schema of a Variant value, as `schema_of_variant` reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum VariantSchema {
    /// A variant null (`VOID`), and the element type of an empty array.
    Void,
    /// Any integer, whatever its stored width (`BIGINT`).
    Bigint,
    /// A decimal (`DECIMAL(p,s)`), with trailing fractional zeros stripped before measuring.
    Decimal {
        /// Total digits, at least `scale`.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// `DOUBLE`.
    Double,
    /// `FLOAT`.
    Float,
    /// `BOOLEAN`.
    Boolean,
    /// `STRING`.
    String,
    /// `DATE`.
    Date,
    /// `TIMESTAMP` (UTC-adjusted, micro- or nanoseconds).
    Timestamp,
    /// `TIMESTAMP_NTZ` (micro- or nanoseconds).
    TimestampNtz,
    /// `BINARY`.
    Binary,
    /// `TIME` (extension: Spark's variant has no time type).
    Time,
    /// `UUID`.
    Uuid,
    /// `OBJECT<...>`, fields ordered by UTF-8 bytes of their names.
    Object(BTreeMap<String, VariantSchema>),
    /// `ARRAY<...>`.
    Array(Box<VariantSchema>),
    /// `VARIANT`: values of incompatible types.
    Variant,
}

/// The schema of one value (`schema_of_variant`). Array element types are merged with
/// [`merge`]; an empty array is `ARRAY<VOID>`.
///
/// ```
/// use df_variant::variant::schema::schema_of;
/// use parquet_variant::{Variant, VariantBuilder, VariantDecimal4};
///
/// let mut b = VariantBuilder::new();
/// let mut l = b.new_list();
/// l.append_value(1i8);
/// l.append_value(VariantDecimal4::try_new(25, 1).unwrap());
/// l.finish();
/// let (m, v) = b.finish();
/// let var = Variant::try_new(&m, &v).unwrap();
/// assert_eq!(schema_of(&var).to_string(), "ARRAY<DECIMAL(21,1)>");
/// ```
///
/// The variant must come from [`crate::variant::validate::decode`] (or a builder):
/// its bytes are not checked again here.
pub fn schema_of(v: &Variant<'_, '_>) -> VariantSchema {
    schema_of_valid(v)
}

fn schema_of_valid(v: &Variant<'_, '_>) -> VariantSchema {
    use VariantSchema as S;
    match v {
        Variant::Null => S::Void,
        Variant::Int8(_) | Variant::Int16(_) | Variant::Int32(_) | Variant::Int64(_) => S::Bigint,
        Variant::Decimal4(d) => decimal_schema(d.integer() as i128, d.scale()),
        Variant::Decimal8(d) => decimal_schema(d.integer() as i128, d.scale()),
        Variant::Decimal16(d) => decimal_schema(d.integer(), d.scale()),
        Variant::Float(_) => S::Float,
        Variant::Double(_) => S::Double,
        Variant::BooleanTrue | Variant::BooleanFalse => S::Boolean,
        Variant::String(_) | Variant::ShortString(_) => S::String,
        Variant::Date(_) => S::Date,
        Variant::TimestampMicros(_) | Variant::TimestampNanos(_) => S::Timestamp,
        Variant::TimestampNtzMicros(_) | Variant::TimestampNtzNanos(_) => S::TimestampNtz,
        Variant::Binary(_) => S::Binary,
        Variant::Time(_) => S::Time,
        Variant::Uuid(_) => S::Uuid,
        Variant::Object(o) => S::Object(
            o.iter()
                .map(|(k, v)| (k.to_owned(), schema_of_valid(&v)))
                .collect(),
        ),
        Variant::List(l) => S::Array(Box::new(
            l.iter()
                .fold(S::Void, |acc, e| merge(acc, schema_of_valid(&e))),
        )),
    }
}

/// `DECIMAL(p,s)` of a value as Spark measures it: trailing fractional zeros are stripped
/// (scale not below 0), then `p = max(digits, s)` (`0.001` is `DECIMAL(3,3)`, `1.50` is
/// `DECIMAL(2,1)`, `100` is `DECIMAL(3,0)`, `0` is `DECIMAL(1,0)`).
fn decimal_schema(unscaled: i128, scale: u8) -> VariantSchema {
    let mut mag = unscaled.unsigned_abs();
    let mut scale = scale;
    while scale > 0 && mag.is_multiple_of(10) {
        mag /= 10;
        scale -= 1;
    }
    let mut digits: u8 = 1;
    while mag >= 10 {
        mag /= 10;
        digits += 1;
    }
    VariantSchema::Decimal {
        precision: digits.max(scale),
        scale,
    }
}

/// Merges two schemas the way `schema_of_variant_agg` (and the element types of one array)
/// do; see the module documentation for the rules.
///
/// ```
/// use df_variant::variant::schema::{merge, VariantSchema as S};
///
/// let a = S::Decimal { precision: 3, scale: 3 }; // 0.001
/// let b = S::Decimal { precision: 6, scale: 1 }; // 12345.6
/// assert_eq!(merge(a, b).to_string(), "DECIMAL(8,3)");
/// assert_eq!(merge(S::Bigint, S::String).to_string(), "VARIANT");
/// ```
pub fn merge(a: VariantSchema, b: VariantSchema) -> VariantSchema {
    use VariantSchema as S;
    // Containers merge element by element, in one pass over both schemas (no
    // whole-schema comparison or copy per level, so deep schemas merge in linear
    // time): for arrays, and objects with the same field names, Spark's tightest
    // type and its wider type give the same answer per element.
    match (a, b) {
        (S::Void, t) | (t, S::Void) => t,
        (S::Array(x), S::Array(y)) => S::Array(Box::new(merge(*x, *y))),
        (S::Object(f1), S::Object(f2))
            if f1.len() == f2.len() && f1.keys().zip(f2.keys()).all(|(x, y)| x == y) =>
        {
            S::Object(
                f1.into_iter()
                    .zip(f2)
                    .map(|((name, t1), (_, t2))| (name, merge(t1, t2)))
                    .collect(),
            )
        }
        (a, b) => match tightest(&a, &b) {
            Some(t) => t,
            None => wider(a, b),
        },
    }
}

/// Rank of the numeric types that widen into one another without a decimal.
fn float_rank(t: &VariantSchema) -> Option<u8> {
    match t {
        VariantSchema::Bigint => Some(0),
        VariantSchema::Float => Some(1),
        VariantSchema::Double => Some(2),
        _ => None,
    }
}

/// Spark's `findTightestCommonType` (non-ANSI `TypeCoercion`), restricted to variant types.
fn tightest(a: &VariantSchema, b: &VariantSchema) -> Option<VariantSchema> {
    use VariantSchema as S;
    match (a, b) {
        (S::Array(x), S::Array(y)) => tightest(x, y).map(|e| S::Array(Box::new(e))),
        (S::Object(f1), S::Object(f2)) if f1.len() == f2.len() => {
            let mut out = BTreeMap::new();
            for ((n1, t1), (n2, t2)) in f1.iter().zip(f2) {
                if !java_equals_ignore_case(n1, n2) {
                    return None;
                }
                out.insert(n1.clone(), tightest(t1, t2)?);
            }
            Some(S::Object(out))
        }
        (S::Void, t) | (t, S::Void) => Some(t.clone()),
        // Containers are handled above, so this compares scalars only.
        (S::Array(_) | S::Object(_), _) | (_, S::Array(_) | S::Object(_)) => None,
        _ if a == b => Some(a.clone()),
        (S::Bigint, d @ S::Decimal { precision, scale })
        | (d @ S::Decimal { precision, scale }, S::Bigint)
            if precision.saturating_sub(*scale) >= 20 =>
        {
            Some(d.clone())
        }
        (S::Date, S::Timestamp) | (S::Timestamp, S::Date) => Some(S::Timestamp),
        (S::Date, S::TimestampNtz) | (S::TimestampNtz, S::Date) => Some(S::TimestampNtz),
        (S::Timestamp, S::TimestampNtz) | (S::TimestampNtz, S::Timestamp) => Some(S::Timestamp),
        _ => match (float_rank(a), float_rank(b)) {
            (Some(x), Some(y)) => Some(if x >= y { a.clone() } else { b.clone() }),
            _ => None,
        },
    }
}

/// The second step of Spark's `compatibleType`, once no tightest type exists.
fn wider(a: VariantSchema, b: VariantSchema) -> VariantSchema {
    use VariantSchema as S;
    match (a, b) {
        (S::Double | S::Float, S::Decimal { .. }) | (S::Decimal { .. }, S::Double | S::Float) => {
            S::Double
        }
        (
            S::Decimal {
                precision: p1,
                scale: s1,
            },
            S::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => widen_decimals((p1, s1), (p2, s2)),
        (S::Bigint, S::Decimal { precision, scale })
        | (S::Decimal { precision, scale }, S::Bigint) => {
            widen_decimals((20, 0), (precision, scale))
        }
        (S::Object(f1), S::Object(f2)) => {
            let mut out = f1;
            for (name, t2) in f2 {
                let merged = match out.remove(&name) {
                    Some(t1) => merge(t1, t2),
                    None => t2,
                };
                out.insert(name, merged);
            }
            S::Object(out)
        }
        (S::Array(x), S::Array(y)) => S::Array(Box::new(merge(*x, *y))),
        (S::Timestamp, S::TimestampNtz) | (S::TimestampNtz, S::Timestamp) => S::Timestamp,
        _ => S::Variant,
    }
}

/// Two decimals widen to hold both: `max(scale)` fractional digits and `max(p - s)` integer
/// digits; past 38 digits Spark gives up on decimals and answers `DOUBLE`.
fn widen_decimals((p1, s1): (u8, u8), (p2, s2): (u8, u8)) -> VariantSchema {
    let scale = s1.max(s2);
    let range = p1.saturating_sub(s1).max(p2.saturating_sub(s2));
    let precision = range as u16 + scale as u16;
    if precision > 38 {
        VariantSchema::Double
    } else {
        VariantSchema::Decimal {
            precision: precision as u8,
            scale,
        }
    }
}

/// Java's `String.equalsIgnoreCase`, per character: equal, or equal after simple
/// upper-casing, or equal after lower-casing the upper-cased characters.
fn java_equals_ignore_case(a: &str, b: &str) -> bool {
    fn simple(mut it: impl Iterator<Item = char>, c: char) -> char {
        match (it.next(), it.next()) {
            (Some(x), None) => x,
            _ => c,
        }
    }
    let upper = |c: char| simple(c.to_uppercase(), c);
    let lower = |c: char| simple(c.to_lowercase(), c);
    a == b
        || (a.chars().count() == b.chars().count()
            && a.chars()
                .zip(b.chars())
                .all(|(x, y)| x == y || upper(x) == upper(y) || lower(upper(x)) == lower(upper(y))))
}

/// Whether Spark prints an object key without back-quotes: an ASCII letter or `_`, then
/// ASCII letters, digits or `_`.
fn is_plain_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn write_key(name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if is_plain_identifier(name) {
        f.write_str(name)
    } else {
        f.write_str("`")?;
        for (i, part) in name.split('`').enumerate() {
            if i > 0 {
                f.write_str("``")?;
            }
            f.write_str(part)?;
        }
        f.write_str("`")
    }
}

/// Spark's text for the schema: `BIGINT`, `DECIMAL(2,1)`, `OBJECT<a: BIGINT, `b c`: STRING>`,
/// `OBJECT<>`, `ARRAY<VOID>`, `VARIANT`, ...
impl fmt::Display for VariantSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use VariantSchema as S;
        match self {
            S::Void => f.write_str("VOID"),
            S::Bigint => f.write_str("BIGINT"),
            S::Decimal { precision, scale } => write!(f, "DECIMAL({precision},{scale})"),
            S::Double => f.write_str("DOUBLE"),
            S::Float => f.write_str("FLOAT"),
            S::Boolean => f.write_str("BOOLEAN"),
            S::String => f.write_str("STRING"),
            S::Date => f.write_str("DATE"),
            S::Timestamp => f.write_str("TIMESTAMP"),
            S::TimestampNtz => f.write_str("TIMESTAMP_NTZ"),
            S::Binary => f.write_str("BINARY"),
            S::Time => f.write_str("TIME"),
            S::Uuid => f.write_str("UUID"),
            S::Variant => f.write_str("VARIANT"),
            S::Array(e) => write!(f, "ARRAY<{e}>"),
            S::Object(fields) => {
                f.write_str("OBJECT<")?;
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_key(name, f)?;
                    write!(f, ": {t}")?;
                }
                f.write_str(">")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use VariantSchema as S;
    use chrono::{NaiveDate, NaiveTime};
    use parquet_variant::{VariantBuilder, VariantDecimal4, VariantDecimal8, VariantDecimal16};

    fn dec(unscaled: i32, scale: u8) -> Variant<'static, 'static> {
        Variant::Decimal4(VariantDecimal4::try_new(unscaled, scale).unwrap())
    }

    fn d(precision: u8, scale: u8) -> S {
        S::Decimal { precision, scale }
    }

    fn obj(fields: &[(&str, S)]) -> S {
        S::Object(
            fields
                .iter()
                .map(|(k, t)| (k.to_string(), t.clone()))
                .collect(),
        )
    }

    fn arr(t: S) -> S {
        S::Array(Box::new(t))
    }

    /// Schema text of an array built from `values`.
    fn array_schema(values: &[Variant<'_, '_>]) -> String {
        let mut b = VariantBuilder::new();
        let mut l = b.new_list();
        for v in values {
            l.append_value(v.clone());
        }
        l.finish();
        let (m, v) = b.finish();
        schema_of(&Variant::try_new(&m, &v).unwrap()).to_string()
    }

    #[test]
    fn scalars() {
        let date = NaiveDate::from_ymd_opt(2024, 1, 15).unwrap();
        let dt = date.and_hms_opt(1, 2, 3).unwrap();
        let cases: Vec<(Variant, &str)> = vec![
            (Variant::Null, "VOID"),
            (Variant::Int8(1), "BIGINT"),
            (Variant::Int16(1), "BIGINT"),
            (Variant::Int32(1), "BIGINT"),
            (Variant::Int64(i64::MAX), "BIGINT"),
            (dec(15, 1), "DECIMAL(2,1)"),
            (dec(150, 2), "DECIMAL(2,1)"),
            (dec(1, 3), "DECIMAL(3,3)"),
            (dec(-1, 3), "DECIMAL(3,3)"),
            (dec(100, 0), "DECIMAL(3,0)"),
            (dec(100, 2), "DECIMAL(1,0)"),
            (dec(0, 2), "DECIMAL(1,0)"),
            (dec(123456, 1), "DECIMAL(6,1)"),
            (
                Variant::Decimal8(VariantDecimal8::try_new(-999_999_999_999_999_999, 0).unwrap()),
                "DECIMAL(18,0)",
            ),
            (
                Variant::Decimal16(VariantDecimal16::try_new(10i128.pow(37) + 1, 38).unwrap()),
                "DECIMAL(38,38)",
            ),
            (
                Variant::Decimal16(VariantDecimal16::try_new(-(10i128.pow(38) - 1), 0).unwrap()),
                "DECIMAL(38,0)",
            ),
            (Variant::Double(1.5), "DOUBLE"),
            (Variant::Float(1.5), "FLOAT"),
            (Variant::BooleanTrue, "BOOLEAN"),
            (Variant::BooleanFalse, "BOOLEAN"),
            (Variant::from("s"), "STRING"),
            (Variant::String("s"), "STRING"),
            (Variant::Date(date), "DATE"),
            (Variant::TimestampMicros(dt.and_utc()), "TIMESTAMP"),
            (Variant::TimestampNanos(dt.and_utc()), "TIMESTAMP"),
            (Variant::TimestampNtzMicros(dt), "TIMESTAMP_NTZ"),
            (Variant::TimestampNtzNanos(dt), "TIMESTAMP_NTZ"),
            (Variant::Binary(b"x"), "BINARY"),
            (
                Variant::Time(NaiveTime::from_hms_opt(1, 2, 3).unwrap()),
                "TIME",
            ),
            (
                Variant::Uuid("00000000-0000-0000-0000-000000000001".parse().unwrap()),
                "UUID",
            ),
        ];
        for (v, want) in &cases {
            assert_eq!(schema_of(v).to_string(), *want, "{v:?}");
        }
    }

    #[test]
    fn arrays() {
        let cases: Vec<(Vec<Variant>, &str)> = vec![
            (vec![], "ARRAY<VOID>"),
            (vec![Variant::Null], "ARRAY<VOID>"),
            (vec![Variant::Int8(1), dec(25, 1)], "ARRAY<DECIMAL(21,1)>"),
            (vec![dec(1, 3), dec(123456, 1)], "ARRAY<DECIMAL(8,3)>"),
            (vec![Variant::Null, Variant::Int8(1)], "ARRAY<BIGINT>"),
            (
                vec![Variant::Int8(1), Variant::Int64(1 << 40)],
                "ARRAY<BIGINT>",
            ),
            (
                vec![Variant::Int8(1), Variant::Double(1.5)],
                "ARRAY<DOUBLE>",
            ),
            (vec![dec(15, 1), Variant::Double(1.5)], "ARRAY<DOUBLE>"),
            (vec![Variant::Int8(1), Variant::Float(1.5)], "ARRAY<FLOAT>"),
            (vec![dec(15, 1), Variant::Float(1.5)], "ARRAY<DOUBLE>"),
            (vec![Variant::Int8(1), Variant::from("a")], "ARRAY<VARIANT>"),
            (
                vec![Variant::BooleanTrue, Variant::Int8(1)],
                "ARRAY<VARIANT>",
            ),
            (
                vec![Variant::Int8(1), Variant::from("a"), Variant::Null],
                "ARRAY<VARIANT>",
            ),
        ];
        for (values, want) in &cases {
            assert_eq!(array_schema(values), *want, "{values:?}");
        }
    }

    #[test]
    fn nested() {
        // [{"b": true, "a": 0}, {"c": 1.23}, [], {}] and friends, built by hand.
        let mut b = VariantBuilder::new();
        let mut l = b.new_list();
        let mut o = l.new_object();
        o.insert("b", true);
        o.insert("a", 0i8);
        o.finish();
        let mut o = l.new_object();
        o.insert("c", VariantDecimal4::try_new(123, 2).unwrap());
        o.insert("a", ());
        o.finish();
        l.finish();
        let (m, v) = b.finish();
        let var = Variant::try_new(&m, &v).unwrap();
        assert_eq!(
            schema_of(&var).to_string(),
            "ARRAY<OBJECT<a: BIGINT, b: BOOLEAN, c: DECIMAL(3,2)>>"
        );

        let mut b = VariantBuilder::new();
        let mut o = b.new_object();
        o.new_object("empty").finish();
        o.new_list("none").finish();
        {
            let mut l = o.new_list("nested");
            let mut inner = l.new_list();
            inner.append_value(1i8);
            inner.finish();
            let mut inner = l.new_list();
            inner.append_value(VariantDecimal4::try_new(25, 1).unwrap());
            inner.finish();
            l.finish();
        }
        {
            let mut l = o.new_list("mixed");
            l.new_object().finish();
            l.new_list().finish();
            l.finish();
        }
        o.finish();
        let (m, v) = b.finish();
        let var = Variant::try_new(&m, &v).unwrap();
        assert_eq!(
            schema_of(&var).to_string(),
            "OBJECT<empty: OBJECT<>, mixed: ARRAY<VARIANT>, nested: ARRAY<ARRAY<DECIMAL(21,1)>>, none: ARRAY<VOID>>"
        );
    }

    #[test]
    fn key_quoting() {
        let keys = [
            "a.b",
            "weird key",
            "é",
            "_x1",
            "A",
            "1a",
            "0",
            "a`b",
            "a1_B",
        ];
        let mut b = VariantBuilder::new();
        let mut o = b.new_object();
        for k in keys {
            o.insert(k, 1i8);
        }
        o.finish();
        let (m, v) = b.finish();
        let var = Variant::try_new(&m, &v).unwrap();
        assert_eq!(
            schema_of(&var).to_string(),
            "OBJECT<`0`: BIGINT, `1a`: BIGINT, A: BIGINT, _x1: BIGINT, `a.b`: BIGINT, \
             a1_B: BIGINT, `a``b`: BIGINT, `weird key`: BIGINT, `é`: BIGINT>"
        );
    }

    #[test]
    fn merges() {
        let a_big = obj(&[("a", S::Bigint)]);
        let cases: Vec<(S, S, S)> = vec![
            (S::Void, S::Void, S::Void),
            (S::Void, S::Bigint, S::Bigint),
            (S::String, S::Void, S::String),
            (S::Void, a_big.clone(), a_big.clone()),
            (S::Void, S::Variant, S::Variant),
            (S::Bigint, S::Bigint, S::Bigint),
            (S::Bigint, d(2, 1), d(21, 1)),
            (d(2, 1), S::Bigint, d(21, 1)),
            (S::Bigint, d(25, 2), d(25, 2)),
            (S::Bigint, d(20, 0), d(20, 0)),
            (S::Bigint, d(38, 18), d(38, 18)),
            (S::Bigint, d(38, 19), S::Double),
            (d(3, 3), d(6, 1), d(8, 3)),
            (d(38, 0), d(2, 1), S::Double),
            (d(38, 38), d(1, 0), S::Double),
            (d(10, 2), d(10, 2), d(10, 2)),
            (S::Bigint, S::Double, S::Double),
            (S::Double, S::Bigint, S::Double),
            (S::Bigint, S::Float, S::Float),
            (S::Float, S::Double, S::Double),
            (S::Float, S::Float, S::Float),
            (S::Float, d(2, 1), S::Double),
            (d(2, 1), S::Double, S::Double),
            (S::Date, S::Timestamp, S::Timestamp),
            (S::Date, S::TimestampNtz, S::TimestampNtz),
            (S::TimestampNtz, S::Timestamp, S::Timestamp),
            (S::Time, S::Time, S::Time),
            (S::Time, S::Timestamp, S::Variant),
            (S::Uuid, S::String, S::Variant),
            (S::Binary, S::String, S::Variant),
            (S::String, S::Bigint, S::Variant),
            (S::Boolean, S::Bigint, S::Variant),
            (S::Boolean, S::Boolean, S::Boolean),
            (a_big.clone(), arr(S::Bigint), S::Variant),
            (S::Variant, S::Bigint, S::Variant),
            (S::Bigint, S::Variant, S::Variant),
            (arr(S::Void), arr(S::Bigint), arr(S::Bigint)),
            (arr(S::Bigint), arr(d(2, 1)), arr(d(21, 1))),
            (arr(S::Bigint), arr(S::String), arr(S::Variant)),
            (
                a_big.clone(),
                obj(&[("b", S::Boolean)]),
                obj(&[("a", S::Bigint), ("b", S::Boolean)]),
            ),
            (
                a_big.clone(),
                obj(&[("a", d(3, 2))]),
                obj(&[("a", d(22, 2))]),
            ),
            (a_big.clone(), obj(&[]), a_big.clone()),
            (obj(&[]), obj(&[]), obj(&[])),
            // Spark's case-insensitive struct matching keeps the first side's names...
            (a_big.clone(), obj(&[("A", S::Bigint)]), a_big.clone()),
            (
                obj(&[("A", S::Void)]),
                a_big.clone(),
                obj(&[("A", S::Bigint)]),
            ),
            // ... but only when every field pair has a tightest type.
            (
                a_big.clone(),
                obj(&[("A", S::String)]),
                obj(&[("A", S::String), ("a", S::Bigint)]),
            ),
            (
                obj(&[("a", S::Bigint), ("b", S::Bigint)]),
                obj(&[("a", S::Bigint), ("c", S::Bigint)]),
                obj(&[("a", S::Bigint), ("b", S::Bigint), ("c", S::Bigint)]),
            ),
            (
                obj(&[("x", arr(S::Void))]),
                obj(&[("x", arr(obj(&[("y", S::Date)])))]),
                obj(&[("x", arr(obj(&[("y", S::Date)])))]),
            ),
        ];
        for (a, b, want) in &cases {
            assert_eq!(merge(a.clone(), b.clone()), *want, "{a} + {b}");
        }
    }

    #[test]
    fn aggregate_over_rows() {
        // schema_of_variant_agg over {"a": 1}, {"b": true}, {"c": 1.23}, null.
        let rows = [
            obj(&[("a", S::Bigint)]),
            obj(&[("b", S::Boolean)]),
            obj(&[("c", d(3, 2))]),
            S::Void,
        ];
        let merged = rows.into_iter().fold(S::Void, merge);
        assert_eq!(
            merged.to_string(),
            "OBJECT<a: BIGINT, b: BOOLEAN, c: DECIMAL(3,2)>"
        );
    }

    #[test]
    fn display() {
        let cases: Vec<(S, &str)> = vec![
            (S::Void, "VOID"),
            (d(2, 1), "DECIMAL(2,1)"),
            (obj(&[]), "OBJECT<>"),
            (arr(S::Void), "ARRAY<VOID>"),
            (S::Variant, "VARIANT"),
            (
                obj(&[("b c", S::String), ("a", S::Bigint)]),
                "OBJECT<a: BIGINT, `b c`: STRING>",
            ),
            (obj(&[("``", S::Binary)]), "OBJECT<``````: BINARY>"),
            // (parquet-variant 59.3.2 rejects an unsorted dictionary holding an empty key,
            // so the empty key is only tested here.)
            (
                obj(&[("", S::Bigint), ("x", S::Float)]),
                "OBJECT<``: BIGINT, x: FLOAT>",
            ),
            (arr(arr(S::TimestampNtz)), "ARRAY<ARRAY<TIMESTAMP_NTZ>>"),
        ];
        for (s, want) in &cases {
            assert_eq!(s.to_string(), *want);
        }
    }

    #[test]
    fn identifiers() {
        for k in ["a", "A", "_", "_x1", "abc_123", "Z9"] {
            assert!(is_plain_identifier(k), "{k}");
        }
        for k in ["", "1a", "0", "a.b", "a b", "é", "a-b", "a`"] {
            assert!(!is_plain_identifier(k), "{k}");
        }
        assert!(java_equals_ignore_case("abc", "ABC"));
        assert!(java_equals_ignore_case("é", "É"));
        assert!(!java_equals_ignore_case("a", "b"));
        assert!(!java_equals_ignore_case("ß", "SS"));
    }
}
