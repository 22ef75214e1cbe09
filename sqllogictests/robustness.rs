//! Seeded robustness test: mutate valid Variant bytes and JSON texts and push them
//! through every entry point. Nothing may panic; every bad input must give a clean
//! error (or NULL from a `try_` function).
//!
//! `cargo test --test robustness` runs 100k+ mutated inputs;
//! `cargo test --release --test robustness -- --ignored` runs a ten times longer pass.

use std::sync::Arc;

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{Field, FieldRef};
use datafusion::common::ScalarValue;
use datafusion::common::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use df_variant::array::{VariantColumnBuilder, variant_extension_metadata};
use df_variant::variant::cast::{CastOptions, VariantCaster};
use df_variant::variant::format::{to_json_string, write_cast_string};
use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
use df_variant::variant::path::parse_path;
use df_variant::variant::raw::get_path;
use df_variant::variant::schema::schema_of;
use df_variant::variant::types::SparkType;
use df_variant::variant::tz::SessionTz;
use df_variant::variant::validate::{check, check_metadata, check_value_with, decode};
use parquet_variant::{Variant, VariantMetadata};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Seed documents covering every JSON shape and number kind.
const SEEDS: &[&str] = &[
    r#"{"a": 1, "b": [true, false, null, "x"], "c": {"d": 1.50, "e": -1e-7, "f": "héllo"}}"#,
    r#"[1, 127, 128, 32768, 2147483648, 9223372036854775807, 9223372036854775808, 1e308]"#,
    r#"{"event_id": 42, "user": {"id": 7, "name": "émile", "tags": ["a", "b"]}, "amount": 12.34}"#,
    r#""a string that is longer than sixty-three bytes so it uses the long string form""#,
    r#"[[[[[[{"deep": [1, {"x": null}]}]]]]]]"#,
    r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9}"#,
    r#"0.000000000000000000000000000000000001"#,
    r#"-12345678901234567890.123456789"#,
    r#"{"":{"":{"":[]}},"z":{}}"#,
];

const PATHS: &[&str] = &[
    "$",
    "$.a",
    "$.b[1]",
    "$.c.d",
    "$[0]",
    "$[7]",
    "$.user.tags[1]",
    "$.k5",
    "$['']",
];

const TYPES: &[&str] = &[
    "boolean",
    "tinyint",
    "int",
    "bigint",
    "float",
    "double",
    "decimal(10,2)",
    "decimal(38,18)",
    "string",
    "binary",
    "date",
    "timestamp",
    "timestamp_ntz",
    "variant",
    "array<int>",
    "array<variant>",
    "struct<a:int,b:array<string>,c:struct<d:decimal(5,1)>>",
    "map<string,string>",
];

fn mutate(rng: &mut StdRng, bytes: &mut Vec<u8>) {
    let edits = rng.random_range(1..4);
    for _ in 0..edits {
        if bytes.is_empty() {
            bytes.push(rng.random());
            continue;
        }
        let i = rng.random_range(0..bytes.len());
        match rng.random_range(0..6) {
            0 => bytes[i] ^= 1 << rng.random_range(0..8),
            1 => bytes[i] = rng.random(),
            2 => bytes.truncate(i),
            3 => bytes.insert(i, rng.random()),
            4 => {
                bytes.remove(i);
            }
            _ => bytes[i] = [0x00, 0x01, 0x02, 0x03, 0xff, 0x7f, 0x80][rng.random_range(0..7)],
        }
    }
}

struct Targets {
    casters: Vec<SparkType>,
    paths: Vec<Vec<df_variant::variant::path::PathSegment>>,
}

/// Every Rust-level entry point on one (metadata, value) pair.
fn exercise_bytes(t: &Targets, tz: &SessionTz, metadata: &[u8], value: &[u8]) -> bool {
    let checked = check(metadata, value).is_ok();
    // Path navigation reads unvalidated bytes in variant_get: it must not panic.
    if let Ok(dict) = check_metadata(metadata) {
        for p in &t.paths {
            if let Ok(Some(sub)) = get_path(&dict, value, p) {
                let _ = check_value_with(sub, &dict);
            }
        }
    }
    let Ok(v) = decode(metadata, value) else {
        assert!(
            !checked || std::env::var("ROBUSTNESS_DEBUG").is_err(),
            "check accepted bytes the decoder refused: {metadata:02x?} {value:02x?}"
        );
        return false;
    };
    let _ = to_json_string(&v, tz);
    let mut s = String::new();
    let _ = write_cast_string(&v, tz, &mut s);
    let _ = schema_of(&v);
    let meta = VariantMetadata::new(metadata);
    let dict = check_metadata(metadata).expect("decode checked the metadata");
    for p in &t.paths {
        if let Ok(Some(sub)) = get_path(&dict, value, p) {
            let len =
                check_value_with(sub, &dict).expect("a sub-value of a valid variant is valid");
            let sv = Variant::new_with_metadata(meta.clone(), &sub[..len]);
            let _ = to_json_string(&sv, tz);
        }
    }
    for ty in &t.casters {
        for safe in [false, true] {
            let mut c = VariantCaster::new(ty, CastOptions { safe, tz: *tz }, 1);
            let r = c.append_variant(&v);
            if safe {
                assert!(r.is_ok(), "try-cast must not fail: {r:?}");
            }
            // After a strict failure the caster is discarded, as variant_get does.
            if r.is_ok() {
                let _ = c.finish();
            }
        }
    }
    true
}

fn field(name: &str, array: &ArrayRef, variant: bool) -> FieldRef {
    let f = Field::new(name, array.data_type().clone(), true);
    Arc::new(if variant {
        f.with_metadata(variant_extension_metadata())
    } else {
        f
    })
}

/// Calls a UDF like DataFusion does; errors are fine, panics are not.
fn invoke(udf: &ScalarUDF, args: Vec<ColumnarValue>, variant_first: bool) {
    let rows = match &args[0] {
        ColumnarValue::Array(a) => a.len(),
        ColumnarValue::Scalar(_) => 1,
    };
    let arg_fields: Vec<FieldRef> = args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            ColumnarValue::Array(arr) => field("a", arr, i == 0 && variant_first),
            ColumnarValue::Scalar(s) => Arc::new(Field::new("s", s.data_type(), true)),
        })
        .collect();
    let scalars: Vec<Option<&ScalarValue>> = args
        .iter()
        .map(|a| match a {
            ColumnarValue::Scalar(s) => Some(s),
            ColumnarValue::Array(_) => None,
        })
        .collect();
    let Ok(return_field) = udf.return_field_from_args(ReturnFieldArgs {
        arg_fields: &arg_fields,
        scalar_arguments: &scalars,
    }) else {
        return;
    };
    let _ = udf.invoke_with_args(ScalarFunctionArgs {
        args,
        arg_fields,
        number_rows: rows,
        return_field,
        config_options: Arc::new(ConfigOptions::default()),
    });
}

fn lit(s: &str) -> ColumnarValue {
    ColumnarValue::Scalar(ScalarValue::Utf8(Some(s.to_string())))
}

/// Runs `rounds` mutated variants and `rounds` mutated JSON texts.
fn run(rounds: usize, seed: u64) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let tz = SessionTz::parse("America/Los_Angeles").unwrap();
    let t = Targets {
        casters: TYPES.iter().map(|s| SparkType::parse(s).unwrap()).collect(),
        paths: PATHS.iter().map(|p| parse_path(p).unwrap()).collect(),
    };
    let mut parser = JsonToVariant::new(JsonParseOptions::default());
    let seeds: Vec<(Vec<u8>, Vec<u8>)> = SEEDS
        .iter()
        .map(|s| {
            parser.parse(s).unwrap();
            (parser.metadata().to_vec(), parser.value().to_vec())
        })
        .collect();
    let mut decoded = 0;
    let mut batch = VariantColumnBuilder::new(64);
    let mut batch_texts: Vec<String> = Vec::new();
    for round in 0..rounds {
        // A mutated Variant.
        let (m, v) = &seeds[round % seeds.len()];
        let (mut m, mut v) = (m.clone(), v.clone());
        if rng.random_range(0..4) == 0 {
            mutate(&mut rng, &mut m);
        } else {
            mutate(&mut rng, &mut v);
        }
        if exercise_bytes(&t, &tz, &m, &v) {
            decoded += 1;
        }
        batch.append(&m, &v);
        // A mutated JSON text.
        let mut text = SEEDS[rng.random_range(0..SEEDS.len())].as_bytes().to_vec();
        mutate(&mut rng, &mut text);
        let text = String::from_utf8_lossy(&text).to_string();
        if parser.parse(&text).is_ok() {
            assert!(
                check(parser.metadata(), parser.value()).is_ok(),
                "parse_json wrote invalid bytes for {text:?}"
            );
        }
        batch_texts.push(text);
        // Every 64 rounds, the SQL functions see the same inputs one row at a time.
        if batch.len() == 64 {
            let column = batch.finish();
            let texts: ArrayRef = Arc::new(StringArray::from(std::mem::take(&mut batch_texts)));
            for row in 0..column.len() {
                let one = ColumnarValue::Array(column.slice(row, 1));
                for udf in df_variant::udf::functions() {
                    match udf.name() {
                        "variant_get" | "try_variant_get" => {
                            for (p, ty) in
                                [("$", "string"), ("$.a", "int"), ("$.b[1]", "array<int>")]
                            {
                                invoke(&udf, vec![one.clone(), lit(p), lit(ty)], true);
                            }
                            invoke(&udf, vec![one.clone(), lit("$.c")], true);
                        }
                        "parse_json" | "try_parse_json" => {
                            invoke(&udf, vec![ColumnarValue::Array(texts.slice(row, 1))], false);
                        }
                        _ => invoke(&udf, vec![one.clone()], true),
                    }
                }
            }
        }
    }
    (rounds * 2, decoded)
}

#[test]
fn mutated_inputs_never_panic() {
    let (inputs, decoded) = run(60_000, 42);
    assert!(inputs >= 100_000);
    // Some mutations stay valid; most must be rejected cleanly.
    assert!(decoded > 0 && decoded < inputs);
}

#[test]
#[ignore = "long run: cargo test --release --test robustness -- --ignored"]
fn mutated_inputs_never_panic_long() {
    for seed in 0..10 {
        run(100_000, seed);
    }
}
