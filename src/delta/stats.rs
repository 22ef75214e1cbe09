//! Delta file statistics: `numRecords`, `nullCount`, and for Variant columns of
//! shredding-enabled tables the per-path `minValues`/`maxValues` the protocol
//! stores as `z85(metadata ‖ value)` of a Variant object keyed by normalized
//! JSON paths (`$['a']['b']`).
//!
//! Written from the footer of the Parquet file just written: a shredded path gets
//! bounds only if its residual `value` is null in every row group (every row that
//! has the path holds the shredded type, as the protocol requires) and the typed
//! leaf's statistics are present and exact. Read back into
//! [`crate::parquet::PathBounds`] for file skipping; statistics that do
//! not decode are ignored (no skipping), never trusted.

use std::collections::HashMap;

use arrow::array::Array;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use chrono::{DateTime, NaiveDate};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;
use parquet_variant::{Variant, VariantBuilder};
use serde_json::{Map, Value, json};

use crate::array::is_variant_type;
use crate::parquet::PathBounds;

const Z85: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Z85 text of `bytes`, zero-padded to a multiple of four bytes (as Delta does).
pub fn z85_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut n = u32::from_be_bytes(word);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = Z85[(n % 85) as usize];
            n /= 85;
        }
        out.extend(digits.iter().map(|&c| c as char));
    }
    out
}

/// The bytes of a Z85 text.
pub fn z85_decode(text: &str) -> Result<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(5) {
        return Err(exec_datafusion_err!(
            "z85 text of length {} is not a multiple of 5",
            bytes.len()
        ));
    }
    let mut out = Vec::with_capacity(bytes.len() / 5 * 4);
    for chunk in bytes.chunks(5) {
        let mut n: u64 = 0;
        for &c in chunk {
            let d = Z85
                .iter()
                .position(|&z| z == c)
                .ok_or_else(|| exec_datafusion_err!("'{}' is not a z85 character", c as char))?;
            n = n * 85 + d as u64;
        }
        let n = u32::try_from(n).map_err(|_| exec_datafusion_err!("z85 group out of range"))?;
        out.extend_from_slice(&n.to_be_bytes());
    }
    Ok(out)
}

/// `$['a']['b']` for keys `a`, `b` (RFC 9535 normalized path).
pub fn normalized_path(keys: &[String]) -> String {
    let mut out = String::from("$");
    for k in keys {
        out.push_str("['");
        for c in k.chars() {
            match c {
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push_str("']");
    }
    out
}

/// The keys of a normalized path of object keys; `None` for anything else
/// (array indices, other syntax).
pub fn parse_normalized_path(path: &str) -> Option<Vec<String>> {
    let mut rest = path.strip_prefix('$')?;
    let mut keys = Vec::new();
    while !rest.is_empty() {
        rest = rest.strip_prefix("['")?;
        let mut key = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '\\' => key.push(chars.next()?.1),
                '\'' => break i,
                c => key.push(c),
            }
        };
        rest = rest[end + 1..].strip_prefix(']')?;
        keys.push(key);
    }
    Some(keys)
}

/// Length of the Variant metadata at the start of `bytes`.
fn metadata_len(bytes: &[u8]) -> Option<usize> {
    let header = *bytes.first()?;
    if header & 0x0f != 1 {
        return None;
    }
    let width = usize::from((header >> 6) + 1);
    let read = |pos: usize| -> Option<usize> {
        let b = bytes.get(pos..pos + width)?;
        Some(
            b.iter()
                .rev()
                .fold(0usize, |acc, &x| (acc << 8) | usize::from(x)),
        )
    };
    let size = read(1)?;
    let last = read(1 + width * (size + 1))?;
    let len = 1usize
        .checked_add(width.checked_mul(size.checked_add(2)?)?)?
        .checked_add(last)?;
    (len <= bytes.len()).then_some(len)
}

/// A Variant primitive as the scalar [`PathBounds`] uses.
fn scalar_of(v: &Variant<'_, '_>) -> Option<ScalarValue> {
    Some(match v {
        Variant::Int8(x) => ScalarValue::Int8(Some(*x)),
        Variant::Int16(x) => ScalarValue::Int16(Some(*x)),
        Variant::Int32(x) => ScalarValue::Int32(Some(*x)),
        Variant::Int64(x) => ScalarValue::Int64(Some(*x)),
        Variant::BooleanTrue => ScalarValue::Boolean(Some(true)),
        Variant::BooleanFalse => ScalarValue::Boolean(Some(false)),
        Variant::String(s) => ScalarValue::Utf8(Some((*s).to_string())),
        Variant::ShortString(s) => ScalarValue::Utf8(Some(s.as_str().to_string())),
        Variant::Date(d) => ScalarValue::Date32(Some(
            (*d - NaiveDate::from_ymd_opt(1970, 1, 1)?).num_days() as i32,
        )),
        Variant::TimestampMicros(t) => {
            ScalarValue::TimestampMicrosecond(Some(t.timestamp_micros()), Some("UTC".into()))
        }
        Variant::TimestampNtzMicros(t) => {
            ScalarValue::TimestampMicrosecond(Some(t.and_utc().timestamp_micros()), None)
        }
        Variant::Double(x) => ScalarValue::Float64(Some(*x)),
        Variant::Float(x) => ScalarValue::Float32(Some(*x)),
        _ => return None,
    })
}

/// The paths and values of one z85 Variant-stats object; `None` if it does not
/// decode (malformed statistics are ignored, never trusted).
pub fn decode_path_values(text: &str) -> Option<HashMap<Vec<String>, ScalarValue>> {
    let bytes = z85_decode(text).ok()?;
    let split = metadata_len(&bytes)?;
    let (metadata, value) = bytes.split_at(split);
    // arrow-rs can panic on malformed Variant bytes.
    std::panic::catch_unwind(|| {
        let v = Variant::try_new(metadata, value).ok()?;
        let object = v.as_object()?;
        let mut out = HashMap::new();
        for (k, v) in object.iter_try().filter_map(std::result::Result::ok) {
            if let (Some(keys), Some(s)) = (parse_normalized_path(k), scalar_of(&v)) {
                out.insert(keys, s);
            }
        }
        Some(out)
    })
    .ok()
    .flatten()
}

fn variant_of(s: &ScalarValue) -> Option<Variant<'static, '_>> {
    Some(match s {
        ScalarValue::Int8(Some(x)) => Variant::Int8(*x),
        ScalarValue::Int16(Some(x)) => Variant::Int16(*x),
        ScalarValue::Int32(Some(x)) => Variant::Int32(*x),
        ScalarValue::Int64(Some(x)) => Variant::Int64(*x),
        ScalarValue::Boolean(Some(x)) => Variant::from(*x),
        ScalarValue::Utf8(Some(x))
        | ScalarValue::Utf8View(Some(x))
        | ScalarValue::LargeUtf8(Some(x)) => Variant::from(x.as_str()),
        ScalarValue::Date32(Some(d)) => Variant::Date(
            NaiveDate::from_ymd_opt(1970, 1, 1)? + chrono::Duration::days(i64::from(*d)),
        ),
        ScalarValue::TimestampMicrosecond(Some(t), Some(_)) => {
            Variant::TimestampMicros(DateTime::from_timestamp_micros(*t)?)
        }
        ScalarValue::TimestampMicrosecond(Some(t), None) => {
            Variant::TimestampNtzMicros(DateTime::from_timestamp_micros(*t)?.naive_utc())
        }
        _ => return None,
    })
}

/// The z85 Variant-stats object of `paths` (sorted by path for determinism).
pub fn encode_path_values(paths: &[(Vec<String>, ScalarValue)]) -> Option<String> {
    let mut builder = VariantBuilder::new();
    let mut object = builder.new_object();
    for (keys, value) in paths {
        object.insert(&normalized_path(keys), variant_of(value)?);
    }
    object.finish();
    let (metadata, value) = builder.finish();
    let mut bytes = metadata;
    bytes.extend_from_slice(&value);
    Some(z85_encode(&bytes))
}

/// `numRecords` and the Variant path bounds of one `add.stats` JSON string.
pub fn bounds_of_stats(stats: &str, variant_columns: &[String]) -> PathBounds {
    let mut bounds = PathBounds::default();
    let Ok(v) = serde_json::from_str::<Value>(stats) else {
        return bounds;
    };
    bounds.num_rows = v.get("numRecords").and_then(Value::as_u64);
    let side = |key: &str, column: &str| -> HashMap<Vec<String>, ScalarValue> {
        v.get(key)
            .and_then(|m| m.get(column))
            .and_then(Value::as_str)
            .and_then(decode_path_values)
            .unwrap_or_default()
    };
    for column in variant_columns {
        let mins = side("minValues", column);
        let mut maxes = side("maxValues", column);
        for (keys, min) in mins {
            let max = maxes.remove(&keys);
            bounds
                .paths
                .insert((column.clone(), keys), (Some(min), max));
        }
        for (keys, max) in maxes {
            bounds
                .paths
                .insert((column.clone(), keys), (None, Some(max)));
        }
    }
    bounds
}

/// One shredded primitive path of a written file.
struct ShreddedLeaf {
    keys: Vec<String>,
    typed: usize,
    typed_type: DataType,
    value: Option<usize>,
}

fn shredded_leaves(
    descr: &parquet::schema::types::SchemaDescriptor,
    column: &str,
    typed_value: &DataType,
) -> Vec<ShreddedLeaf> {
    fn walk(
        descr: &parquet::schema::types::SchemaDescriptor,
        prefix: &mut Vec<String>,
        keys: &mut Vec<String>,
        fields: &arrow::datatypes::Fields,
        out: &mut Vec<ShreddedLeaf>,
    ) {
        let index_of = |parts: &[String]| {
            descr
                .columns()
                .iter()
                .position(|c| c.path().parts() == parts)
        };
        for f in fields {
            let DataType::Struct(group) = f.data_type() else {
                continue;
            };
            prefix.push("typed_value".to_string());
            prefix.push(f.name().clone());
            keys.push(f.name().clone());
            let mut value_path = prefix.clone();
            value_path.push("value".to_string());
            let value = group.find("value").and_then(|_| index_of(&value_path));
            if let Some((_, typed)) = group.find("typed_value") {
                match typed.data_type() {
                    DataType::Struct(inner) => walk(descr, prefix, keys, inner, out),
                    DataType::List(_) | DataType::LargeList(_) | DataType::ListView(_) => {}
                    t => {
                        let mut typed_path = prefix.clone();
                        typed_path.push("typed_value".to_string());
                        let has_value_leaf = group.find("value").is_none() || value.is_some();
                        if let (Some(i), true) = (index_of(&typed_path), has_value_leaf) {
                            out.push(ShreddedLeaf {
                                keys: keys.clone(),
                                typed: i,
                                typed_type: t.clone(),
                                value,
                            });
                        }
                    }
                }
            }
            keys.pop();
            prefix.pop();
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    if let DataType::Struct(fields) = typed_value {
        walk(
            descr,
            &mut vec![column.to_string()],
            &mut Vec::new(),
            fields,
            &mut out,
        );
    }
    out
}

/// A bounds-worthy type: exact order, no NaN, and a value the stats JSON
/// writes exactly (no decimals, microsecond timestamps only).
fn bound_type(t: &DataType) -> bool {
    crate::parquet::paths::exact_order(t)
        && !matches!(
            t,
            DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Timestamp(TimeUnit::Nanosecond, _)
        )
}

/// The overall (min, max) of a leaf over all row groups, if exact and complete.
fn leaf_bounds(
    metadata: &ParquetMetaData,
    leaf: usize,
    field: &Field,
) -> Result<Option<(ScalarValue, ScalarValue)>> {
    let descr = metadata.file_metadata().schema_descr();
    let row_groups = metadata.row_groups();
    let converter = StatisticsConverter::from_column_index(leaf, field, descr)?;
    let mins = converter.row_group_mins(row_groups.iter())?;
    let maxes = converter.row_group_maxes(row_groups.iter())?;
    let mut lo: Option<ScalarValue> = None;
    let mut hi: Option<ScalarValue> = None;
    for (r, rg) in row_groups.iter().enumerate() {
        let chunk = rg.column(leaf);
        let Some(stats) = chunk.statistics() else {
            return Ok(None);
        };
        let Some(nulls) = stats.null_count_opt() else {
            return Ok(None);
        };
        if nulls as i64 == rg.num_rows() {
            continue;
        }
        if mins.is_null(r) || maxes.is_null(r) || !stats.min_is_exact() || !stats.max_is_exact() {
            return Ok(None);
        }
        let a = ScalarValue::try_from_array(&mins, r)?;
        let b = ScalarValue::try_from_array(&maxes, r)?;
        lo = Some(match lo {
            Some(x) if x.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) => x,
            _ => a,
        });
        hi = Some(match hi {
            Some(x) if x.partial_cmp(&b) != Some(std::cmp::Ordering::Less) => x,
            _ => b,
        });
    }
    Ok(lo.zip(hi))
}

/// Whether leaf `i` is null in every row of the file (per its statistics).
fn all_null(metadata: &ParquetMetaData, i: usize) -> bool {
    metadata.row_groups().iter().all(|rg| {
        rg.column(i)
            .statistics()
            .and_then(parquet::file::statistics::Statistics::null_count_opt)
            .is_some_and(|n| n as i64 == rg.num_rows())
    })
}

fn null_count(metadata: &ParquetMetaData, i: usize) -> Option<u64> {
    metadata
        .row_groups()
        .iter()
        .map(|rg| {
            rg.column(i)
                .statistics()
                .and_then(parquet::file::statistics::Statistics::null_count_opt)
        })
        .sum()
}

fn json_of(s: &ScalarValue) -> Option<Value> {
    Some(match s {
        ScalarValue::Int8(Some(v)) => json!(v),
        ScalarValue::Int16(Some(v)) => json!(v),
        ScalarValue::Int32(Some(v)) => json!(v),
        ScalarValue::Int64(Some(v)) => json!(v),
        ScalarValue::Utf8(Some(v))
        | ScalarValue::Utf8View(Some(v))
        | ScalarValue::LargeUtf8(Some(v)) => {
            json!(v)
        }
        ScalarValue::Date32(Some(d)) => json!(
            (NaiveDate::from_ymd_opt(1970, 1, 1)? + chrono::Duration::days(i64::from(*d)))
                .format("%Y-%m-%d")
                .to_string()
        ),
        _ => return None,
    })
}

/// The `add.stats` JSON of a file just written with `file_schema` (its own,
/// possibly shredded, schema). `variant_bounds`: also per-path bounds of Variant
/// columns (only on shredding-enabled tables).
pub fn file_stats(
    metadata: &ParquetMetaData,
    file_schema: &Schema,
    variant_bounds: bool,
) -> Result<String> {
    let descr = metadata.file_metadata().schema_descr();
    let rows: i64 = metadata
        .row_groups()
        .iter()
        .map(parquet::file::metadata::RowGroupMetaData::num_rows)
        .sum();
    let index_of = |parts: &[&str]| {
        descr.columns().iter().position(|c| {
            c.path()
                .parts()
                .iter()
                .map(String::as_str)
                .eq(parts.iter().copied())
        })
    };
    let mut nulls = Map::new();
    let mut mins = Map::new();
    let mut maxes = Map::new();
    for field in file_schema.fields() {
        let name = field.name().as_str();
        if is_variant_type(field.data_type()) {
            // The required `metadata` leaf is null exactly where the value is.
            if let Some(n) = index_of(&[name, "metadata"]).and_then(|i| null_count(metadata, i)) {
                nulls.insert(name.to_string(), json!(n));
            }
            if !variant_bounds {
                continue;
            }
            let DataType::Struct(parts) = field.data_type() else {
                continue;
            };
            let Some((_, typed)) = parts.find("typed_value") else {
                continue;
            };
            let mut lo = Vec::new();
            let mut hi = Vec::new();
            for leaf in shredded_leaves(descr, name, typed.data_type()) {
                if !bound_type(&leaf.typed_type)
                    || leaf.value.is_some_and(|v| !all_null(metadata, v))
                {
                    continue;
                }
                let f = Field::new("typed_value", leaf.typed_type.clone(), true);
                if let Some((a, b)) = leaf_bounds(metadata, leaf.typed, &f)? {
                    lo.push((leaf.keys.clone(), a));
                    hi.push((leaf.keys, b));
                }
            }
            if !lo.is_empty()
                && let (Some(a), Some(b)) = (encode_path_values(&lo), encode_path_values(&hi))
            {
                mins.insert(name.to_string(), json!(a));
                maxes.insert(name.to_string(), json!(b));
            }
            continue;
        }
        if matches!(
            field.data_type(),
            DataType::Struct(_) | DataType::List(_) | DataType::Map(..)
        ) {
            continue;
        }
        let Some(i) = index_of(&[name]) else { continue };
        if let Some(n) = null_count(metadata, i) {
            nulls.insert(name.to_string(), json!(n));
        }
        if matches!(
            field.data_type(),
            DataType::Int8
                | DataType::Int16
                | DataType::Int32
                | DataType::Int64
                | DataType::Utf8
                | DataType::Utf8View
                | DataType::LargeUtf8
                | DataType::Date32
        ) && let Some((a, b)) = leaf_bounds(metadata, i, field)?
            && let (Some(a), Some(b)) = (json_of(&a), json_of(&b))
        {
            mins.insert(name.to_string(), a);
            maxes.insert(name.to_string(), b);
        }
    }
    let mut stats = Map::new();
    stats.insert("numRecords".into(), json!(rows));
    stats.insert("minValues".into(), Value::Object(mins));
    stats.insert("maxValues".into(), Value::Object(maxes));
    stats.insert("nullCount".into(), Value::Object(nulls));
    stats.insert("tightBounds".into(), json!(true));
    Ok(Value::Object(stats).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z85_round_trips_and_matches_the_spec_example() {
        // ZeroMQ RFC 32's example.
        let bytes = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(z85_encode(&bytes), "HelloWorld");
        assert_eq!(z85_decode("HelloWorld").unwrap(), bytes);
        // Padding to a multiple of four.
        let odd = [1u8, 2, 3, 4, 5];
        let text = z85_encode(&odd);
        assert_eq!(text.len(), 10);
        assert_eq!(&z85_decode(&text).unwrap()[..5], &odd);
        assert!(z85_decode("abc").is_err());
        assert!(z85_decode("abc\"~").is_err());
        assert!(z85_decode("#####").is_err(), "out of range");
    }

    #[test]
    fn normalized_paths_round_trip() {
        let keys = vec!["a".to_string(), "it's".to_string(), "b\\c".to_string()];
        let p = normalized_path(&keys);
        assert_eq!(p, r"$['a']['it\'s']['b\\c']");
        assert_eq!(parse_normalized_path(&p), Some(keys));
        assert_eq!(parse_normalized_path("$"), Some(vec![]));
        assert_eq!(parse_normalized_path("$[0]"), None);
        assert_eq!(parse_normalized_path("$.a"), None);
    }

    #[test]
    fn path_values_round_trip() {
        let paths = vec![
            (vec!["a".to_string()], ScalarValue::Int64(Some(-5))),
            (vec!["b".to_string()], ScalarValue::Utf8(Some("s1".into()))),
            (
                vec!["c".to_string(), "d".to_string()],
                ScalarValue::Int8(Some(3)),
            ),
            (vec!["t".to_string()], ScalarValue::Date32(Some(19000))),
        ];
        let text = encode_path_values(&paths).unwrap();
        let back = decode_path_values(&text).unwrap();
        assert_eq!(back.len(), 4);
        for (k, v) in &paths {
            assert_eq!(back.get(k), Some(v), "{k:?}");
        }
        // Garbage decodes to nothing rather than failing or panicking.
        assert_eq!(decode_path_values("00000"), None);
        assert_eq!(decode_path_values("nonsense!"), None);
    }

    #[test]
    fn stats_json_gives_bounds() {
        let lo =
            encode_path_values(&[(vec!["a".to_string()], ScalarValue::Int64(Some(1)))]).unwrap();
        let hi =
            encode_path_values(&[(vec!["a".to_string()], ScalarValue::Int64(Some(5)))]).unwrap();
        let stats = format!(
            r#"{{"numRecords":5,"minValues":{{"v":"{lo}","id":1}},"maxValues":{{"v":"{hi}"}},"nullCount":{{"v":0}}}}"#
        );
        let b = bounds_of_stats(&stats, &["v".to_string()]);
        assert_eq!(b.num_rows, Some(5));
        assert_eq!(
            b.paths.get(&("v".to_string(), vec!["a".to_string()])),
            Some(&(
                Some(ScalarValue::Int64(Some(1))),
                Some(ScalarValue::Int64(Some(5)))
            ))
        );
        // A scalar where an encoded object belongs is ignored.
        let b = bounds_of_stats(
            r#"{"numRecords":1,"minValues":{"v":3}}"#,
            &["v".to_string()],
        );
        assert!(b.paths.is_empty());
    }
}
