//! Criterion benches of the hot functions on 8192-row batches of realistic event
//! documents, each beside arrow-rs's own kernel on the same input:
//!
//! - `parse_json` vs `parquet_variant_compute::json_to_variant`
//! - `variant_get(v, '$.type', 'string')` and `variant_get(v, '$.user')` on
//!   unshredded variants vs `parquet_variant_compute::variant_get`
//!
//! ```text
//! cargo bench --bench functions
//! ```
//!
//! After the criterion groups, a summary prints the throughput ratio of each pair
//! (ours / arrow-rs, higher is better).

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::common::ScalarValue;
use datafusion::common::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use parquet_variant::VariantPath;
use parquet_variant_compute::{GetOptions, json_to_variant, variant_get};

/// DataFusion's default batch size.
const ROWS: usize = 8192;

/// Deterministic JSON event documents (web/social event stream shape).
fn events(rows: usize) -> ArrayRef {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let types = ["click", "view", "purchase", "like", "repost", "follow"];
    let names = ["ana", "bo", "chen", "dara", "émile", "femi", "gus", "hana"];
    let docs: Vec<String> = (0..rows)
        .map(|i| {
            let r = next();
            let kind = types[(r % types.len() as u64) as usize];
            let name = names[((r >> 8) % names.len() as u64) as usize];
            let amount = (r >> 16) % 100_000;
            let items = (0..(r >> 40) % 4)
                .map(|k| format!(r#"{{"sku":"S-{k}{}","qty":{},"price":{}.{:02}}}"#, (r >> 20) % 97, k + 1, (r >> 24) % 500, (r >> 30) % 100))
                .collect::<Vec<_>>()
                .join(",");
            format!(
                r#"{{"event_id":{i},"type":"{kind}","ts":"2024-01-{:02}T10:{:02}:{:02}Z","user":{{"id":{},"name":"{name}","tags":["t{}","mobile"]}},"amount":{}.{:02},"items":[{items}],"flag":{},"score":{}e-1,"geo":{{"lat":{}.{:04},"lon":-{}.{:04},"city":"c{}"}}}}"#,
                r % 28 + 1,
                (r >> 4) % 60,
                (r >> 10) % 60,
                (r >> 12) % 100_000,
                (r >> 33) % 10,
                amount / 100,
                amount % 100,
                r & 1 == 0,
                (r >> 36) % 1000,
                (r >> 3) % 90,
                (r >> 5) % 10_000,
                (r >> 7) % 180,
                (r >> 9) % 10_000,
                (r >> 11) % 50,
            )
        })
        .collect();
    Arc::new(StringArray::from(docs))
}

fn field(name: &str, array: &ArrayRef) -> FieldRef {
    let f = if df_variant::array::is_variant_type(array.data_type()) {
        Field::new(name, array.data_type().clone(), true)
            .with_metadata(df_variant::array::variant_extension_metadata())
    } else {
        Field::new(name, array.data_type().clone(), true)
    };
    Arc::new(f)
}

/// Calls a UDF the way DataFusion's executor does.
fn invoke(udf: &ScalarUDF, args: &[ColumnarValue], rows: usize) -> ArrayRef {
    let arg_fields: Vec<FieldRef> = args
        .iter()
        .map(|a| match a {
            ColumnarValue::Array(arr) => field("a", arr),
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
    let return_field = udf
        .return_field_from_args(ReturnFieldArgs {
            arg_fields: &arg_fields,
            scalar_arguments: &scalars,
        })
        .unwrap();
    let out = udf
        .invoke_with_args(ScalarFunctionArgs {
            args: args.to_vec(),
            arg_fields,
            number_rows: rows,
            return_field,
            config_options: Arc::new(ConfigOptions::default()),
        })
        .unwrap();
    match out {
        ColumnarValue::Array(a) => a,
        ColumnarValue::Scalar(s) => s.to_array().unwrap(),
    }
}

fn lit(s: &str) -> ColumnarValue {
    ColumnarValue::Scalar(ScalarValue::Utf8(Some(s.to_string())))
}

struct Inputs {
    json: ArrayRef,
    variants: ArrayRef,
}

fn inputs() -> Inputs {
    let json = events(ROWS);
    let variants = invoke(
        &df_variant::functions::parse_json_udf(),
        &[ColumnarValue::Array(Arc::clone(&json))],
        ROWS,
    );
    Inputs { json, variants }
}

fn ours_parse(i: &Inputs) -> ArrayRef {
    invoke(
        &df_variant::functions::parse_json_udf(),
        &[ColumnarValue::Array(Arc::clone(&i.json))],
        ROWS,
    )
}

fn arrow_parse(i: &Inputs) -> ArrayRef {
    let va = json_to_variant(&i.json).unwrap();
    let s: arrow::array::StructArray = va.into();
    Arc::new(s)
}

fn ours_get_string(i: &Inputs) -> ArrayRef {
    invoke(
        &df_variant::functions::variant_get_udf(),
        &[
            ColumnarValue::Array(Arc::clone(&i.variants)),
            lit("$.type"),
            lit("string"),
        ],
        ROWS,
    )
}

fn arrow_get_string(i: &Inputs) -> ArrayRef {
    let options = GetOptions::new_with_path(VariantPath::try_from("type").unwrap())
        .with_as_type(Some(Arc::new(Field::new("type", DataType::Utf8, true))));
    variant_get(&i.variants, options).unwrap()
}

fn ours_get_variant(i: &Inputs) -> ArrayRef {
    invoke(
        &df_variant::functions::variant_get_udf(),
        &[ColumnarValue::Array(Arc::clone(&i.variants)), lit("$.user")],
        ROWS,
    )
}

fn arrow_get_variant(i: &Inputs) -> ArrayRef {
    let options = GetOptions::new_with_path(VariantPath::try_from("user").unwrap());
    variant_get(&i.variants, options).unwrap()
}

type Case = (
    &'static str,
    fn(&Inputs) -> ArrayRef,
    fn(&Inputs) -> ArrayRef,
);

const CASES: [Case; 3] = [
    ("parse_json", ours_parse, arrow_parse),
    (
        "variant_get_string_one_level",
        ours_get_string,
        arrow_get_string,
    ),
    (
        "variant_get_variant_one_level",
        ours_get_variant,
        arrow_get_variant,
    ),
];

fn bench(c: &mut Criterion) {
    let i = inputs();
    for (name, ours, theirs) in CASES {
        let mut g = c.benchmark_group(name);
        g.throughput(criterion::Throughput::Elements(ROWS as u64));
        g.bench_function(format!("df_variant/{ROWS}"), |b| {
            b.iter(|| black_box(ours(&i)));
        });
        g.bench_function(format!("arrow_rs/{ROWS}"), |b| {
            b.iter(|| black_box(theirs(&i)));
        });
        g.finish();
    }
}

/// Median wall time of `f` over enough runs to fill about half a second.
fn median(i: &Inputs, f: fn(&Inputs) -> ArrayRef) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_millis(500) && times.len() < 200) {
        let t = Instant::now();
        black_box(f(i));
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn summary(_c: &mut Criterion) {
    let i = inputs();
    println!(
        "\nratio summary ({ROWS} rows, ours vs arrow-rs 59.3.2; >1 means df-variant is faster)"
    );
    for (name, ours, theirs) in CASES {
        let (a, b) = (median(&i, ours), median(&i, theirs));
        println!(
            "  {name:<32} df-variant {:>9.3} ms   arrow-rs {:>9.3} ms   ratio {:.2}x",
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}

criterion_group!(benches, bench, summary);
criterion_main!(benches);
