//! Ingest throughput: JSONBench-shaped Bluesky events (NDJSON) into Parquet with
//! `COPY (SELECT v FROM read_json_variant(..)) TO ..`, shredded (the default) and
//! unshredded, in MB/s of NDJSON input. Also the shredding kernels alone
//! (inference on a 4096-row sample, and shredding an 8192-row batch).
//!
//! ```text
//! cargo bench --bench ingest
//! ```
//!
//! The 1 GB measurement with peak memory is a CLI run, see the README:
//! `df-variant generate-bluesky --rows 2150000 --out bsky.ndjson` then
//! `/usr/bin/time -v df-variant -c "COPY (SELECT v FROM read_json_variant('bsky.ndjson')) TO 'out/'"`.

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use arrow::array::ArrayRef;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use df_variant::array::VariantColumnBuilder;
use df_variant::shredding::{ShreddingOptions, infer_typed_value, shred};
use df_variant::variant::json::JsonToVariant;

const ROWS: u64 = 50_000;

fn ndjson() -> (PathBuf, Vec<u8>) {
    let mut bytes = Vec::new();
    df_variant::demo::bluesky::write_ndjson(ROWS, 1, &mut bytes).expect("generate events");
    let path = std::env::temp_dir().join(format!("df_variant_bench_{}.ndjson", std::process::id()));
    std::fs::write(&path, &bytes).expect("write events");
    (path, bytes)
}

fn variant_column(ndjson: &[u8], rows: usize) -> ArrayRef {
    let mut parser = JsonToVariant::new(df_variant::variant::json::JsonParseOptions::default());
    let mut builder = VariantColumnBuilder::new(rows);
    for line in ndjson
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .take(rows)
    {
        parser
            .parse(std::str::from_utf8(line).expect("utf-8"))
            .expect("valid JSON");
        builder.append(parser.metadata(), parser.value());
    }
    builder.finish()
}

fn bench_copy(c: &mut Criterion) {
    let (path, bytes) = ndjson();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let out = std::env::temp_dir().join(format!("df_variant_bench_out_{}", std::process::id()));
    let mut group = c.benchmark_group("ingest");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for mode in ["auto", "off"] {
        group.bench_function(format!("ndjson_to_parquet_shredding_{mode}"), |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let _ = std::fs::remove_dir_all(&out);
                    let ctx = df_variant::variant_context();
                    let sql = format!(
                        "COPY (SELECT v FROM read_json_variant('{}')) TO '{}/' STORED AS PARQUET \
                         OPTIONS ('variant.shredding' '{mode}')",
                        path.display(),
                        out.display()
                    );
                    let batches = ctx
                        .sql(&sql)
                        .await
                        .expect("plan")
                        .collect()
                        .await
                        .expect("run");
                    black_box(batches);
                });
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&path);

    let column = variant_column(&bytes, 8192);
    let options = ShreddingOptions::default();
    let typed = infer_typed_value(&column, &options)
        .expect("infer")
        .expect("a shredding schema");
    let mut group = c.benchmark_group("shredding");
    group.throughput(Throughput::Elements(8192));
    group.bench_function("infer_8192_rows", |b| {
        b.iter(|| infer_typed_value(black_box(&column), &options).expect("infer"));
    });
    group.bench_function("shred_8192_rows", |b| {
        b.iter(|| shred(black_box(&column), &typed).expect("shred"));
    });
    group.finish();
}

criterion_group!(benches, bench_copy);
criterion_main!(benches);
