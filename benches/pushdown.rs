//! Shredded pushdown on JSONBench-shaped Bluesky events: the same queries over a
//! shredded and an unshredded copy of the same events (1M by default), in time
//! (criterion) and in bytes read and row groups skipped (`EXPLAIN ANALYZE`,
//! printed before the timings).
//!
//! ```text
//! cargo bench --bench pushdown                       # 1M events
//! DF_VARIANT_BENCH_ROWS=200000 cargo bench --bench pushdown
//! ```
//!
//! Queries:
//! - `path`: one shredded path, JSONBench Q1 (`v:commit.collection` counts);
//! - `selective`: `v:time_us` (clustered: event time) in a range holding 1 % of
//!   the rows, plus a second path of the matching rows.
//!
//! Files are written in event-time order (`ORDER BY v:time_us`: the parallel
//! NDJSON reader does not keep the file's order) with row groups of 65,536 rows
//! (16 for 1M events).

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow::util::pretty::pretty_format_batches;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;

const ROW_GROUP: usize = 65_536;

fn rows() -> u64 {
    std::env::var("DF_VARIANT_BENCH_ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1_000_000)
}

struct Setup {
    ctx: SessionContext,
    runtime: tokio::runtime::Runtime,
    dir: PathBuf,
    queries: Vec<(&'static str, String)>,
}

fn sql(runtime: &tokio::runtime::Runtime, ctx: &SessionContext, q: &str) -> String {
    runtime.block_on(async {
        let batches = ctx
            .sql(q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        pretty_format_batches(&batches).expect("format").to_string()
    })
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The number after `name=` on the first line containing `node` (K/M suffixes).
fn metric(explain: &str, node: &str, name: &str) -> f64 {
    let Some(line) = explain.lines().find(|l| l.contains(node)) else {
        return f64::NAN;
    };
    let Some(rest) = line.split(&format!("{name}=")).nth(1) else {
        return f64::NAN;
    };
    let text: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ' ' || c.is_ascii_uppercase())
        .collect();
    let mut parts = text.split_whitespace();
    let value: f64 = parts
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    match parts.next() {
        Some("K") => value * 1e3,
        Some("M") => value * 1e6,
        Some("G") => value * 1e9,
        _ => value,
    }
}

fn setup() -> Setup {
    let rows = rows();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir =
        std::env::temp_dir().join(format!("df_variant_bench_pushdown_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ndjson = dir.join("events.ndjson");
    let file = std::fs::File::create(&ndjson).expect("create");
    df_variant::demo::bluesky::write_ndjson(rows, 1, std::io::BufWriter::new(file))
        .expect("generate events");
    let ctx = df_variant::variant_context();
    for (name, shredding) in [("shredded", "auto"), ("plain", "off")] {
        let started = Instant::now();
        sql(
            &runtime,
            &ctx,
            &format!(
                "COPY (SELECT v FROM read_json_variant('{}') ORDER BY v:time_us::bigint) TO '{}/{name}.parquet' STORED AS PARQUET
                 OPTIONS ('variant.shredding' '{shredding}', max_row_group_size {ROW_GROUP})",
                ndjson.display(),
                dir.display()
            ),
        );
        eprintln!(
            "wrote {name}.parquet: {} rows, {:.1} MB in {:.1} s",
            rows,
            file_size(&dir.join(format!("{name}.parquet"))) as f64 / 1e6,
            started.elapsed().as_secs_f64()
        );
        sql(
            &runtime,
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE {name} STORED AS PARQUET LOCATION '{}/{name}.parquet'",
                dir.display()
            ),
        );
    }
    // 1 % of the rows, in the middle of the file (time_us grows evenly).
    let bounds = sql(
        &runtime,
        &ctx,
        "SELECT min(v:time_us::bigint) || ',' || max(v:time_us::bigint) AS b FROM plain",
    );
    let (min, max) = bounds
        .lines()
        .find_map(|l| {
            let (a, b) = l.trim_matches(|c| c == '|' || c == ' ').split_once(',')?;
            Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?))
        })
        .expect("time bounds");
    let lo = min + (max - min) / 2;
    let hi = lo + (max - min) / 100;
    let queries = vec![
        (
            "path",
            "SELECT v:commit.collection::string AS event, count(*) AS count FROM {t} GROUP BY event ORDER BY count DESC".to_string(),
        ),
        (
            "selective",
            format!(
                "SELECT count(*) AS rows, count(DISTINCT v:did::string) AS users FROM {{t}} WHERE v:time_us::bigint BETWEEN {lo} AND {hi}"
            ),
        ),
    ];
    Setup {
        ctx,
        runtime,
        dir,
        queries,
    }
}

fn best_of(setup: &Setup, q: &str, n: usize) -> Duration {
    (0..n)
        .map(|_| {
            let started = Instant::now();
            sql(&setup.runtime, &setup.ctx, q);
            started.elapsed()
        })
        .min()
        .expect("runs")
}

fn report(setup: &Setup) {
    let sizes = [
        file_size(&setup.dir.join("shredded.parquet")),
        file_size(&setup.dir.join("plain.parquet")),
    ];
    eprintln!(
        "\n{:<10} {:>13} {:>13} {:>7} {:>12} {:>12} {:>9} {:>13}",
        "query",
        "shredded ms",
        "plain ms",
        "speedup",
        "shredded MB",
        "plain MB",
        "bytes %",
        "row groups"
    );
    for (name, q) in &setup.queries {
        let qs = q.replace("{t}", "shredded");
        let qp = q.replace("{t}", "plain");
        assert_eq!(
            sql(&setup.runtime, &setup.ctx, &qs),
            sql(&setup.runtime, &setup.ctx, &qp),
            "{name}: different answers"
        );
        let (ts, tp) = (best_of(setup, &qs, 3), best_of(setup, &qp, 3));
        let es = sql(&setup.runtime, &setup.ctx, &format!("EXPLAIN ANALYZE {qs}"));
        let ep = sql(&setup.runtime, &setup.ctx, &format!("EXPLAIN ANALYZE {qp}"));
        let (bs, bp) = (
            metric(&es, "DataSourceExec", "bytes_scanned"),
            metric(&ep, "DataSourceExec", "bytes_scanned"),
        );
        let pruned = metric(&es, "VariantScanExec", "row_groups_pruned");
        let matched = metric(&es, "VariantScanExec", "row_groups_matched");
        eprintln!(
            "{:<10} {:>13.1} {:>13.1} {:>6.1}x {:>12.2} {:>12.2} {:>8.1}% {:>6}/{:<6}",
            name,
            ts.as_secs_f64() * 1e3,
            tp.as_secs_f64() * 1e3,
            tp.as_secs_f64() / ts.as_secs_f64(),
            bs / 1e6,
            bp / 1e6,
            100.0 * bs / bp,
            if pruned.is_nan() { 0.0 } else { pruned },
            if pruned.is_nan() {
                0.0
            } else {
                pruned + matched
            },
        );
    }
    eprintln!(
        "files: shredded {:.1} MB, plain {:.1} MB (bytes % = shredded bytes read / plain bytes read; row groups = skipped/total)\n",
        sizes[0] as f64 / 1e6,
        sizes[1] as f64 / 1e6
    );
}

fn bench_pushdown(c: &mut Criterion) {
    let setup = setup();
    report(&setup);
    let mut group = c.benchmark_group("pushdown");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for (name, q) in &setup.queries {
        for table in ["shredded", "plain"] {
            let q = q.replace("{t}", table);
            group.bench_function(format!("{name}_{table}"), |b| {
                b.iter(|| sql(&setup.runtime, &setup.ctx, &q));
            });
        }
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&setup.dir);
}

criterion_group!(benches, bench_pushdown);
criterion_main!(benches);
