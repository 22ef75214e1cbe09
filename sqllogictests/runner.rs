//! The sqllogictest runner.
//!
//! ```text
//! cargo test --test sqllogictests                 # every .slt under sqllogictests/
//! cargo test --test sqllogictests -- PATH...      # these files or folders
//! cargo test --test sqllogictests -- variant_get  # default files whose path contains the text
//! ```
//!
//! Each file runs in its own `SessionContext` with the whole extension
//! registered ([`df_variant::variant_context`]). Every statement and query is
//! counted; a failure does not stop the file; each failure is printed with its
//! `file:line`; the run ends with one line `N passed, N failed` and a non-zero exit
//! code when anything failed.
//!
//! Files run with `target_partitions = 2`; `DF_VARIANT_SLT_PARTITIONS=N` runs them
//! with `N` instead (`.ci/run` uses 1, 3 and 8, so that no expected answer or
//! error depends on partitioning), skipping the `EXPLAIN` records, whose plans
//! are pinned for 2.
//!
//! `DF_VARIANT_SLT_MODE` runs every statement and query another way, with the
//! same expected answers (`EXPLAIN` records skipped):
//! - `roundtrip`: each physical plan goes through bytes and back
//!   ([`df_variant::codec`]) before it runs;
//! - `distributed`: each query runs on an in-memory cluster of three
//!   datafusion-distributed workers ([`df_variant::distributed::InMemoryCluster`]),
//!   with every file scan split into tasks.

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use async_trait::async_trait;
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType, Record, Runner};

const DEFAULT_DIR: &str = "sqllogictests/test_files";
/// Where `.slt` files write; emptied at the start of every run.
const SCRATCH_DIR: &str = "sqllogictests/test_files/scratch";

/// How statements run (`DF_VARIANT_SLT_MODE`, see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Direct,
    Roundtrip,
    Distributed,
}

fn mode() -> Mode {
    match std::env::var("DF_VARIANT_SLT_MODE").as_deref() {
        Ok("roundtrip") => Mode::Roundtrip,
        Ok("distributed") => Mode::Distributed,
        Ok("" | "direct") | Err(_) => Mode::Direct,
        Ok(other) => panic!("DF_VARIANT_SLT_MODE={other}: expected roundtrip or distributed"),
    }
}

/// The engine under test: one DataFusion session with df-variant registered.
struct VariantDb {
    ctx: Arc<SessionContext>,
    mode: Mode,
}

#[derive(Debug)]
struct DbError(String);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DbError {}

impl From<DataFusionError> for DbError {
    fn from(e: DataFusionError) -> Self {
        // Strip DataFusion's context wrappers so messages stay readable.
        DbError(e.strip_backtrace())
    }
}

fn column_type(dt: &DataType) -> DefaultColumnType {
    match dt {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => DefaultColumnType::Integer,
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => DefaultColumnType::FloatingPoint,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DefaultColumnType::Text,
        _ => DefaultColumnType::Any,
    }
}

fn format_cell(formatter: &ArrayFormatter<'_>, array: &ArrayRef, row: usize) -> String {
    if array.is_null(row) {
        return "NULL".to_string();
    }
    let s = formatter.value(row).to_string();
    if s.is_empty() {
        "(empty)".to_string()
    } else {
        s
    }
}

#[async_trait]
impl AsyncDB for VariantDb {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        // Parsed as the CLI parses, with `:` binding as in Spark.
        let df = df_variant::sql::query(&self.ctx, sql).await?;
        let schema = Arc::clone(df.schema().inner());
        let batches = if self.mode == Mode::Roundtrip {
            let plan = df.create_physical_plan().await?;
            if writes_memory_table(&plan) {
                // An INSERT into a memory table writes into this process: it
                // cannot be shipped (the codec refuses it), so it runs here.
                let task_ctx = self.ctx.task_ctx();
                return finish(
                    schema,
                    datafusion::physical_plan::collect(plan, task_ctx).await?,
                );
            }
            let bytes = df_variant::codec::plan_to_bytes(plan)?;
            let task_ctx = self.ctx.task_ctx();
            let plan = df_variant::codec::plan_from_bytes(&bytes, &task_ctx)?;
            datafusion::physical_plan::collect(plan, task_ctx).await?
        } else if self.mode == Mode::Distributed {
            let plan = df.create_physical_plan().await?;
            if plan.name() == "DistributedExec" {
                DISTRIBUTED_PLANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            datafusion::physical_plan::collect(plan, self.ctx.task_ctx()).await?
        } else {
            df.collect().await?
        };
        finish(schema, batches)
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &'static str {
        "df-variant"
    }
}

/// The least number of statements the distributed mode must run on workers.
const MIN_DISTRIBUTED_PLANS: usize = 50;

/// Queries that the distributed mode planned as distributed (ran on workers).
static DISTRIBUTED_PLANS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether `plan` inserts into an in-memory table.
fn writes_memory_table(plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> bool {
    plan.downcast_ref::<datafusion::datasource::sink::DataSinkExec>()
        // DataFusion does not export `MemSink`.
        .is_some_and(|d| format!("{:?}", d.sink()).starts_with("MemSink"))
}

/// The rows of a result, as the runner compares them.
fn finish(
    schema: arrow::datatypes::SchemaRef,
    batches: Vec<arrow::array::RecordBatch>,
) -> Result<DBOutput<DefaultColumnType>, DbError> {
    {
        if schema.fields().is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        let types = schema
            .fields()
            .iter()
            .map(|f| column_type(f.data_type()))
            .collect();
        let options = FormatOptions::default().with_null("NULL");
        let mut rows = Vec::new();
        for batch in &batches {
            let formatters = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| DbError(e.to_string()))?;
            for row in 0..batch.num_rows() {
                let cells: Vec<String> = formatters
                    .iter()
                    .zip(batch.columns())
                    .map(|(f, c)| format_cell(f, c, row))
                    .collect();
                // Multi-line cells (EXPLAIN plans) continue on rows of their own,
                // so a test lists one plan line per line.
                let lines: Vec<Vec<&str>> = cells.iter().map(|c| c.lines().collect()).collect();
                let height = lines.iter().map(Vec::len).max().unwrap_or(1).max(1);
                if height == 1 {
                    rows.push(cells);
                    continue;
                }
                for k in 0..height {
                    let parts: Vec<&str> = lines.iter().filter_map(|l| l.get(k).copied()).collect();
                    if k == 0 {
                        rows.push(parts.iter().map(std::string::ToString::to_string).collect());
                    } else {
                        rows.push(vec![parts.join(" ")]);
                    }
                }
            }
        }
        Ok(DBOutput::Rows { types, rows })
    }
}

/// Column types must match, except that `?` in the test matches anything.
/// (The signature is fixed by `sqllogictest::ColumnTypeValidator`.)
#[allow(clippy::ptr_arg)]
fn column_validator(actual: &Vec<DefaultColumnType>, expected: &Vec<DefaultColumnType>) -> bool {
    actual.len() == expected.len()
        && actual
            .iter()
            .zip(expected)
            .all(|(a, e)| matches!(e, DefaultColumnType::Any) || a == e)
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
}

async fn run_file(path: &Path, tally: &mut Tally, complete: bool) {
    let records = match sqllogictest::parse_file::<DefaultColumnType>(path) {
        Ok(r) => r,
        Err(e) => {
            println!("FAILED {}: cannot parse: {e}", path.display());
            tally.failed += 1;
            return;
        }
    };
    let partitions = partitions();
    let mut config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_option_extension(df_variant::config::VariantOptions::default());
    // A file that starts with `# df-variant: spark_functions` runs with Spark's
    // built-ins registered (settings read when the context is created).
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if text.starts_with("# df-variant: spark_functions")
        && let Err(e) = config.options_mut().set("variant.spark_functions", "true")
    {
        println!("FAILED {}: {e}", path.display());
        tally.failed += 1;
        return;
    }
    let mode = mode();
    // Dropped (workers stopped) when the file is done.
    let mut cluster = None;
    let ctx = if mode == Mode::Distributed {
        let runtime = Arc::new(datafusion::execution::runtime_env::RuntimeEnv::default());
        let workers = df_variant::distributed::InMemoryCluster::start(3, Arc::clone(&runtime));
        let builder = df_variant::variant_state_builder(config, runtime);
        let state = workers.coordinator(builder).unwrap().build();
        cluster = Some(workers);
        Arc::new(SessionContext::new_with_state(state).enable_url_table())
    } else {
        Arc::new(df_variant::variant_context_with_config(config))
    };
    let mut runner = Runner::new(move || {
        let ctx = Arc::clone(&ctx);
        async move { Ok::<_, DbError>(VariantDb { ctx, mode }) }
    });
    runner.with_column_validator(column_validator);
    if complete {
        // Rewrites the file with the actual results as the expected ones.
        match runner
            .update_test_file(
                path,
                " ",
                sqllogictest::default_validator,
                sqllogictest::default_normalizer,
                column_validator,
            )
            .await
        {
            Ok(()) => tally.passed += 1,
            Err(e) => {
                tally.failed += 1;
                println!("FAILED {}: cannot complete: {e}", path.display());
            }
        }
        return;
    }
    for record in records {
        let counted = matches!(record, Record::Statement { .. } | Record::Query { .. });
        if matches!(record, Record::Halt { .. }) {
            break;
        }
        let sql = match &record {
            Record::Statement { sql, .. } | Record::Query { sql, .. } => Some(sql.as_str()),
            _ => None,
        };
        if (partitions != DEFAULT_PARTITIONS || mode != Mode::Direct)
            && sql.is_some_and(|s| s.trim_start().to_ascii_uppercase().starts_with("EXPLAIN"))
        {
            tally.skipped += 1;
            continue;
        }
        match runner.run_async(record).await {
            Ok(_) if counted => tally.passed += 1,
            Ok(_) => {}
            Err(e) => {
                tally.failed += 1;
                println!("FAILED {}\n", e.display(false));
            }
        }
    }
    drop(cluster);
}

/// The partitions the `EXPLAIN` records of the files are written for.
const DEFAULT_PARTITIONS: usize = 2;

/// `target_partitions` of every session: `DF_VARIANT_SLT_PARTITIONS` or 2.
fn partitions() -> usize {
    std::env::var("DF_VARIANT_SLT_PARTITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_PARTITIONS)
}

fn collect_slt(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "scratch") {
                continue;
            }
            collect_slt(&p, out);
        } else if p.extension().is_some_and(|e| e == "slt") {
            out.push(p);
        }
    }
}

fn main() -> ExitCode {
    let all_args: Vec<String> = std::env::args().skip(1).collect();
    // `--complete` rewrites the files with the actual results (review the diff);
    // other flags are cargo's and libtest's (`--nocapture`, ...), ignored here.
    let complete = all_args.iter().any(|a| a == "--complete");
    if complete && (partitions() != DEFAULT_PARTITIONS || mode() != Mode::Direct) {
        println!(
            "--complete writes the EXPLAIN plans of {DEFAULT_PARTITIONS} partitions run directly; \
             unset DF_VARIANT_SLT_PARTITIONS and DF_VARIANT_SLT_MODE"
        );
        return ExitCode::FAILURE;
    }
    let args: Vec<String> = all_args
        .into_iter()
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut files = Vec::new();
    let mut filters = Vec::new();
    for a in &args {
        let p = PathBuf::from(a);
        if p.is_dir() {
            collect_slt(&p, &mut files);
        } else if p.is_file() {
            files.push(p);
        } else {
            filters.push(a.clone());
        }
    }
    if files.is_empty() {
        let mut all = Vec::new();
        collect_slt(Path::new(DEFAULT_DIR), &mut all);
        files = all
            .into_iter()
            .filter(|p| {
                filters.is_empty()
                    || filters
                        .iter()
                        .any(|f| p.to_string_lossy().contains(f.as_str()))
            })
            .collect();
    }
    let _ = std::fs::remove_dir_all(SCRATCH_DIR);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut tally = Tally::default();
    for file in &files {
        let before = tally.failed;
        runtime.block_on(run_file(file, &mut tally, complete));
        let status = if tally.failed == before {
            "ok"
        } else {
            "FAILED"
        };
        println!("{status}: {}", file.display());
    }
    if mode() == Mode::Distributed {
        let n = DISTRIBUTED_PLANS.load(std::sync::atomic::Ordering::Relaxed);
        println!("{n} statements ran on the in-memory cluster's workers");
        // 60 when this was written; far fewer means scans stopped being split
        // (with DataFusion-distributed's default 16 MiB per task, 1 is).
        if n < MIN_DISTRIBUTED_PLANS {
            println!("FAILED: fewer than {MIN_DISTRIBUTED_PLANS} plans were distributed");
            tally.failed += 1;
        }
    }
    if tally.skipped > 0 {
        println!(
            "{} passed, {} failed, {} skipped",
            tally.passed, tally.failed, tally.skipped
        );
    } else {
        println!("{} passed, {} failed", tally.passed, tally.failed);
    }
    if tally.failed == 0 && tally.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
