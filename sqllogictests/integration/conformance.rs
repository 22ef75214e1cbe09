//! Conformance with the official Variant test vectors of apache/parquet-testing
//! (`testdata/parquet-testing/variant/`): every vector decodes through the crate's
//! guard to the value listed in `data_dictionary.json`, prints as Spark's
//! `to_json` would (session time zone UTC), and round-trips through
//! `parse_json(to_json(v))`.

use std::path::PathBuf;

use chrono::{NaiveDate, NaiveTime, TimeZone, Utc};
use df_variant::variant::format::to_json_string;
use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
use df_variant::variant::tz::SessionTz;
use df_variant::variant::validate::decode;
use parquet_variant::{Variant, VariantDecimal4, VariantDecimal8, VariantDecimal16};

fn vectors_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/parquet-testing/variant");
    assert!(
        dir.is_dir(),
        "missing {}: the test vectors live in testdata/parquet-testing",
        dir.display()
    );
    dir
}

fn load(name: &str) -> (Vec<u8>, Vec<u8>) {
    let dir = vectors_dir();
    let m = std::fs::read(dir.join(format!("{name}.metadata"))).unwrap();
    let v = std::fs::read(dir.join(format!("{name}.value"))).unwrap();
    (m, v)
}

/// (vector, expected scalar value if primitive, expected Spark to_json text)
fn cases() -> Vec<(
    &'static str,
    Option<Variant<'static, 'static>>,
    &'static str,
)> {
    let ts = |micros: i64| Utc.timestamp_micros(micros).unwrap();
    vec![
        ("array_empty", None, "[]"),
        (
            "array_nested",
            None,
            r#"[{"id":1,"thing":{"names":["Contrarian","Spider"]}},null,{"id":2,"names":["Apple","Ray",null],"type":"if"}]"#,
        ),
        ("array_primitive", None, "[2,1,5,9]"),
        ("object_empty", None, "{}"),
        (
            "object_nested",
            None,
            r#"{"id":1,"observation":{"location":"In the Volcano","time":"12:34:56","value":{"humidity":456,"temperature":123}},"species":{"name":"lava monster","population":6789}}"#,
        ),
        (
            "object_primitive",
            None,
            r#"{"boolean_false_field":false,"boolean_true_field":true,"double_field":1.23456789,"int_field":1,"null_field":null,"string_field":"Apache Parquet","timestamp_field":"2025-04-16T12:34:56.78"}"#,
        ),
        (
            "primitive_binary",
            Some(Variant::Binary(&[
                0x03, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe,
            ])),
            r#""AxM33q2+78r+""#,
        ),
        (
            "primitive_boolean_false",
            Some(Variant::BooleanFalse),
            "false",
        ),
        ("primitive_boolean_true", Some(Variant::BooleanTrue), "true"),
        (
            "primitive_date",
            Some(Variant::Date(NaiveDate::from_ymd_opt(2025, 4, 16).unwrap())),
            r#""2025-04-16""#,
        ),
        (
            "primitive_decimal4",
            Some(Variant::Decimal4(
                VariantDecimal4::try_new(1234, 2).unwrap(),
            )),
            "12.34",
        ),
        (
            "primitive_decimal8",
            Some(Variant::Decimal8(
                VariantDecimal8::try_new(1_234_567_890, 2).unwrap(),
            )),
            "12345678.9",
        ),
        (
            "primitive_decimal16",
            Some(Variant::Decimal16(
                VariantDecimal16::try_new(1_234_567_891_234_567_890, 2).unwrap(),
            )),
            "12345678912345678.9",
        ),
        (
            "primitive_double",
            Some(Variant::Double(1234567890.1234)),
            "1.2345678901234E9",
        ),
        // Shortest round-trip digits, as Java 19+ prints floats (Spark on Java 17 prints
        // the older, longer "1.23456794E9").
        (
            "primitive_float",
            Some(Variant::Float(1234567940.0)),
            "1.234568E9",
        ),
        ("primitive_int8", Some(Variant::Int8(42)), "42"),
        ("primitive_int16", Some(Variant::Int16(1234)), "1234"),
        ("primitive_int32", Some(Variant::Int32(123456)), "123456"),
        (
            "primitive_int64",
            Some(Variant::Int64(1234567890123456789)),
            "1234567890123456789",
        ),
        ("primitive_null", Some(Variant::Null), "null"),
        (
            "primitive_string",
            Some(Variant::from(
                "This string is longer than 64 bytes and therefore does not fit in a short_string and it also includes several non ascii characters such as 🐢, 💖, ♥\u{fe0f}, 🎣 and 🤦!!",
            )),
            "\"This string is longer than 64 bytes and therefore does not fit in a short_string and it also includes several non ascii characters such as 🐢, 💖, ♥\u{fe0f}, 🎣 and 🤦!!\"",
        ),
        (
            "long_string",
            Some(Variant::from(
                "This string is for sure and certainly longer than 64 bytes and it also includes several non ascii characters such as 🐢, 💖, ♥\u{fe0f}, 🎣 and 🤦!!",
            )),
            "\"This string is for sure and certainly longer than 64 bytes and it also includes several non ascii characters such as 🐢, 💖, ♥\u{fe0f}, 🎣 and 🤦!!\"",
        ),
        (
            "short_string",
            Some(Variant::from("Less than 64 bytes (❤\u{fe0f} with utf8)")),
            "\"Less than 64 bytes (❤\u{fe0f} with utf8)\"",
        ),
        (
            "primitive_time",
            Some(Variant::Time(
                NaiveTime::from_hms_micro_opt(12, 33, 54, 123456).unwrap(),
            )),
            r#""12:33:54.123456""#,
        ),
        (
            "primitive_timestamp",
            Some(Variant::TimestampMicros(ts(1744821296780000))),
            r#""2025-04-16 16:34:56.78+00:00""#,
        ),
        (
            "primitive_timestampntz",
            Some(Variant::TimestampNtzMicros(
                ts(1744806896780000).naive_utc(),
            )),
            r#""2025-04-16 12:34:56.78""#,
        ),
        (
            "primitive_timestamp_nanos",
            Some(Variant::TimestampNanos(
                Utc.timestamp_nanos(1730982834123456789),
            )),
            r#""2024-11-07 12:33:54.123456789+00:00""#,
        ),
        (
            "primitive_timestampntz_nanos",
            Some(Variant::TimestampNtzNanos(
                Utc.timestamp_nanos(1730982834123456789).naive_utc(),
            )),
            r#""2024-11-07 12:33:54.123456789""#,
        ),
        (
            "primitive_uuid",
            Some(Variant::Uuid(
                "f24f9b64-81fa-49d1-b74e-8c09a6e31c56".parse().unwrap(),
            )),
            r#""f24f9b64-81fa-49d1-b74e-8c09a6e31c56""#,
        ),
    ]
}

#[test]
fn every_vector_is_covered() {
    let mut on_disk: Vec<String> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(".value").map(str::to_string)
        })
        .collect();
    on_disk.sort();
    let mut covered: Vec<String> = cases().iter().map(|c| c.0.to_string()).collect();
    covered.sort();
    assert_eq!(on_disk, covered);
    assert_eq!(covered.len(), 29);
}

#[test]
fn vectors_decode_to_their_listed_values() {
    let tz = SessionTz::utc();
    for (name, expected, json) in cases() {
        let (m, v) = load(name);
        let variant = decode(&m, &v).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(expected) = expected {
            assert_eq!(variant, expected, "{name}");
        }
        assert_eq!(to_json_string(&variant, &tz), json, "{name}");
    }
}

#[test]
fn vectors_round_trip_through_to_json() {
    let tz = SessionTz::utc();
    let mut parser = JsonToVariant::new(JsonParseOptions::default());
    for (name, _, _) in cases() {
        let (m, v) = load(name);
        let first = to_json_string(&decode(&m, &v).unwrap(), &tz);
        parser
            .parse(&first)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = to_json_string(&decode(parser.metadata(), parser.value()).unwrap(), &tz);
        assert_eq!(first, again, "{name}");
    }
}

#[test]
fn vectors_survive_every_truncation_without_panicking() {
    for (name, _, _) in cases() {
        let (m, v) = load(name);
        for cut in 0..v.len() {
            // Some prefixes are themselves valid (e.g. nothing); none may panic.
            let _ = decode(&m, &v[..cut]);
        }
    }
}
