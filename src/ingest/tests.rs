//! End-to-end tests of the table functions through SQL.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties, collect};
use datafusion::prelude::{SessionConfig, SessionContext};

use super::*;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "df_variant_ingest_sql_{}_{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, name: &str, body: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ctx(partitions: usize, batch_size: usize) -> SessionContext {
    let mut config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_batch_size(batch_size);
    config.options_mut().optimizer.repartition_file_min_size = 1;
    crate::variant_context_with_config(config)
}

async fn query(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let b = query(ctx, sql).await.unwrap();
    b[0].column(0).as_primitive::<Int64Type>().value(0)
}

/// `{"i": n}` for n in 1..=rows, every 7th line blank, with CRLF endings on every
/// 3rd line and no final newline.
fn numbered(rows: usize, bad: Option<usize>) -> String {
    let mut s = String::new();
    for i in 1..=rows {
        if i > 1 {
            s.push_str(if i % 3 == 0 { "\r\n" } else { "\n" });
        }
        if Some(i) == bad {
            s.push_str("{\"i\": tru}");
        } else if i % 7 != 0 {
            s.push_str(&format!(
                "{{\"i\": {i}, \"pad\": \"{}\"}}",
                "x".repeat(i % 13)
            ));
        }
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_file_is_read_by_every_partition() {
    let dir = TempDir::new("parallel");
    let path = dir.write("big.jsonl", &numbered(20_000, None));
    let ctx = ctx(4, 1000);
    let df = ctx
        .sql(&format!("SELECT v FROM read_json_variant('{path}')"))
        .await
        .unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let text = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(false)
        .to_string();
    assert!(text.contains("ReadJsonVariantExec"), "{text}");
    assert!(text.contains("partitions=4"), "{text}");
    assert_eq!(plan.output_partitioning().partition_count(), 4);
    let batches = collect(plan, ctx.task_ctx()).await.unwrap();
    assert!(batches.iter().all(|b| b.num_rows() <= 1000));
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let expected = (1..=20_000).filter(|i| i % 7 != 0).count();
    assert_eq!(rows, expected);
    let field = batches[0].schema().field(0).clone();
    assert!(crate::array::is_variant_field(&field));

    // Every value once: sum of $.i over all partitions.
    let sql = format!(
        "SELECT sum(variant_get(v, '$.i', 'bigint')), count(*), count(v) FROM read_json_variant('{path}')"
    );
    let b = query(&ctx, &sql).await.unwrap();
    let sum = b[0].column(0).as_primitive::<Int64Type>().value(0);
    let want: i64 = (1..=20_000i64).filter(|i| i % 7 != 0).sum();
    assert_eq!(sum, want);
    assert_eq!(
        b[0].column(1).as_primitive::<Int64Type>().value(0),
        expected as i64
    );
    assert_eq!(
        b[0].column(2).as_primitive::<Int64Type>().value(0),
        expected as i64
    );

    // Empty projection (count(*)) alone.
    let n = count(
        &ctx,
        &format!("SELECT count(*) FROM read_json_variant('{path}')"),
    )
    .await;
    assert_eq!(n, expected as i64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_chunks_through_the_plan() {
    let dir = TempDir::new("chunks");
    let path = dir.write("a.jsonl", &numbered(500, None));
    let table = ReadJsonVariant::strict().table(&path).unwrap();
    let ctx = ctx(3, 64);
    for chunk in [1, 7, 100] {
        let plan = table.plan(None, 3, 1).unwrap().with_chunk_size(chunk);
        assert_eq!(plan.groups().len(), 3);
        let batches = collect(Arc::new(plan), ctx.task_ctx()).await.unwrap();
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(
            rows,
            (1..=500).filter(|i| i % 7 != 0).count(),
            "chunk {chunk}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_names_file_and_line_in_a_later_partition() {
    let dir = TempDir::new("error");
    let path = dir.write("events.jsonl", &numbered(5_000, Some(4_321)));
    let ctx = ctx(4, 128);
    let e = query(
        &ctx,
        &format!("SELECT count(*) FROM read_json_variant('{path}')"),
    )
    .await
    .unwrap_err()
    .strip_backtrace();
    assert!(
        e.contains(&format!(
            "read_json_variant: {path} line 4321: invalid JSON: "
        )),
        "{e}"
    );

    // The tolerant function gives one NULL row.
    let sql = format!("SELECT count(*), count(v) FROM try_read_json_variant('{path}')");
    let b = query(&ctx, &sql).await.unwrap();
    let rows = (1..=5_000).filter(|i| i % 7 != 0).count() as i64;
    assert_eq!(b[0].column(0).as_primitive::<Int64Type>().value(0), rows);
    assert_eq!(
        b[0].column(1).as_primitive::<Int64Type>().value(0),
        rows - 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn globs_directories_and_limit() {
    let dir = TempDir::new("glob");
    dir.write("a.jsonl", "1\n2\n");
    dir.write("b.jsonl", "3");
    dir.write("c.json", "4\n");
    dir.write(".hidden.jsonl", "oops\n");
    let ctx = ctx(2, 8192);
    let d = dir.path();
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM read_json_variant('{d}/*.jsonl')")
        )
        .await,
        3
    );
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM read_json_variant('{d}/?.json*')")
        )
        .await,
        4
    );
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM read_json_variant('{d}')")
        )
        .await,
        4
    );
    let b = query(
        &ctx,
        &format!("SELECT to_json(v) FROM read_json_variant('{d}') LIMIT 1"),
    )
    .await
    .unwrap();
    assert_eq!(b.iter().map(RecordBatch::num_rows).sum::<usize>(), 1);
    let e = query(
        &ctx,
        &format!("SELECT * FROM read_json_variant('{d}/*.csv')"),
    )
    .await
    .unwrap_err()
    .strip_backtrace();
    assert!(
        e.contains(&format!("read_json_variant: no file matches '{d}/*.csv'")),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_at_plan_time() {
    let ctx = ctx(2, 8192);
    for (sql, msg) in [
        (
            "SELECT * FROM read_json_variant()",
            "expects exactly one argument",
        ),
        (
            "SELECT * FROM read_json_variant('a', 'b')",
            "expects exactly one argument",
        ),
        (
            "SELECT * FROM read_json_variant(1)",
            "expects a string path, got Int64",
        ),
        (
            "SELECT * FROM try_read_json_variant(NULL)",
            "the path must not be NULL",
        ),
        (
            "SELECT * FROM read_json_variant('s3://b/k.jsonl')",
            "only local files",
        ),
    ] {
        let e = ctx.sql(sql).await.unwrap_err();
        assert!(
            matches!(e, datafusion::error::DataFusionError::Plan(_)),
            "{sql}: {e:?}"
        );
        assert!(e.strip_backtrace().contains(msg), "{sql}: {e}");
    }
}

#[test]
fn schema_and_registration() {
    let schema = read_json_variant_schema();
    assert_eq!(schema.fields().len(), 1);
    assert_eq!(schema.field(0).name(), "v");
    assert!(schema.field(0).is_nullable());
    assert!(crate::array::is_variant_field(schema.field(0)));
    let names: Vec<_> = table_functions()
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    assert_eq!(names, [READ_JSON_VARIANT, TRY_READ_JSON_VARIANT]);
    // DataFusion's own table functions stay registered.
    let ctx = crate::variant_context();
    let state = ctx.state();
    assert!(state.table_functions().contains_key("generate_series"));
    assert!(state.table_functions().contains_key(READ_JSON_VARIANT));
    let plan = JsonVariantTable::new(READ_JSON_VARIANT, vec![], false)
        .plan(Some(&vec![]), 4, 1)
        .unwrap();
    assert_eq!(plan.schema().fields().len(), 0);
    assert_eq!(plan.groups().len(), 1);
}

/// A manual throughput check: `cargo test --release --lib ingest::tests::throughput
/// -- --ignored --nocapture` (about 100 MiB of events in a temporary file).
#[tokio::test(flavor = "multi_thread")]
#[ignore = "slow; run by hand in release mode"]
async fn throughput() {
    use std::io::Write;
    let dir = TempDir::new("throughput");
    let path = dir.0.join("events.jsonl");
    let rows: i64 = std::env::var("ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(600_000);
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 0..rows {
            writeln!(
                w,
                r#"{{"id": {i}, "user": {{"name": "user{i}", "tags": ["a", "b", "c"]}}, "amount": {}.25, "ok": true, "note": "some text to make lines longer than a few bytes, some text to make lines longer"}}"#,
                i % 1000
            )
            .unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let peak_rss = || {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM"))
                    .map(str::to_string)
            })
            .unwrap_or_default()
    };
    println!("before: {}", peak_rss());
    let sql = format!(
        "SELECT count(v) FROM read_json_variant('{}')",
        path.display()
    );
    for partitions in [1, 2, 4] {
        let ctx = ctx(partitions, 8192);
        let start = std::time::Instant::now();
        assert_eq!(count(&ctx, &sql).await, rows);
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{partitions} partition(s): {:.0} MiB in {secs:.2}s = {:.0} MiB/s, {}",
            size as f64 / 1048576.0,
            size as f64 / 1048576.0 / secs,
            peak_rss()
        );
    }
}
