//! The sqllogictest runner, built on DataFusion's (`datafusion-sqllogictest`).
//!
//! ```text
//! cargo test --test sqllogictests                 # every .slt under sqllogictests/test_files
//! cargo test --test sqllogictests -- PATH...      # these files or folders
//! cargo test --test sqllogictests -- variant_get  # default files whose path contains the text
//! cargo test --test sqllogictests -- --complete [PATH...]    # write the actual results in
//! cargo test --test sqllogictests -- --workdir DIR PATH...   # a suite with paths relative to DIR
//! ```
//!
//! Values, column type letters (`B`, `D`, `I`, `P`, `R`, `T`, `?`), errors, and
//! the check of expected against actual results are DataFusion's runner code,
//! so a suite written for DataFusion runs unchanged. What is ours: each file
//! runs in its own session with the whole extension registered
//! ([`df_variant::variant_context_with_config`]); every record runs through
//! DataFusion's `ctx.sql`, the entry point embedders call, except a record
//! after a comment line `# df-variant: sql::query`, which needs
//! `df_variant::sql::query` (df-variant's dialect, where `:` binds as in Spark,
//! `ALTER TABLE` on Delta); `DF_VARIANT_SLT_ENTRY=query` runs every record
//! that way, as the CLI does; a file that starts with
//! `# df-variant: spark_functions`, or lies in a `spark/` folder, runs with
//! Spark's built-ins (`variant.spark_functions`); a file in an `accel/`
//! folder runs with the opt-in speedups of plain plans
//! (`df_variant::accel::with_accelerations`). Every statement and query is
//! counted; a failure does not stop the file; each failure is printed with its
//! `file:line`; the run ends with one line `N passed, N failed` and a non-zero
//! exit code when anything failed.
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
//!   with every file scan split into tasks. A record after a comment line
//!   `# not distributed: <why>` is skipped in this mode.

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_sqllogictest::{
    DFColumnType, DFOutput, DFSqlLogicTestError, convert_batches, convert_schema_to_types,
    df_value_validator, value_normalizer,
};
use sqllogictest::{AsyncDB, DBOutput, Record, Runner, strict_column_validator};

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
///
/// It is DataFusion's own engine (`datafusion_sqllogictest::DataFusion`) with
/// three changes: SQL is parsed with df-variant's dialect, a plan can go
/// through bytes or onto workers first ([`Mode`]), and the session is
/// [`df_variant::variant_context_with_config`]'s. Values, column types and
/// errors are rendered by DataFusion's code, so expected results read the same
/// as in DataFusion's own suites.
struct VariantDb {
    ctx: Arc<SessionContext>,
    mode: Mode,
    /// Whether the record runs through `df_variant::sql::query` (our dialect,
    /// `ALTER TABLE` on Delta, `COPY ... 'advice'`) instead of `ctx.sql`.
    ours: Arc<std::sync::atomic::AtomicBool>,
    /// Floats the way DataFusion's runner prints them for Spark files.
    spark: bool,
}

#[async_trait]
impl AsyncDB for VariantDb {
    type Error = DFSqlLogicTestError;
    type ColumnType = DFColumnType;

    async fn run(&mut self, sql: &str) -> Result<DFOutput, Self::Error> {
        // As embedders run it (`ctx.sql`), or as the CLI parses it, with `:`
        // binding as in Spark, where the record asks for that.
        let df = if self.ours.load(std::sync::atomic::Ordering::Relaxed) {
            df_variant::sql::query(&self.ctx, sql).await?
        } else {
            self.ctx.sql(sql).await?
        };
        let plan = df.create_physical_plan().await?;
        let schema = plan.schema();
        let task_ctx = self.ctx.task_ctx();
        let batches = match self.mode {
            // An INSERT, DELETE or UPDATE of a memory table writes into this
            // process: it cannot be shipped (the codec refuses it), so it runs
            // here.
            Mode::Roundtrip if !writes_memory_table(&plan) => {
                let bytes = df_variant::codec::plan_to_bytes(plan)?;
                let plan = df_variant::codec::plan_from_bytes(&bytes, &task_ctx)?;
                collect(plan, task_ctx).await?
            }
            Mode::Distributed => {
                if plan.name() == "DistributedExec" {
                    DISTRIBUTED_PLANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                collect(plan, task_ctx).await?
            }
            Mode::Direct | Mode::Roundtrip => collect(plan, task_ctx).await?,
        };
        finish(&schema, batches, self.spark)
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &'static str {
        "df-variant"
    }
}

/// This repository's folder as plans print file paths (an object store path:
/// no leading `/`).
fn workspace_root() -> String {
    env!("CARGO_MANIFEST_DIR")
        .trim_start_matches('/')
        .to_string()
}

/// The rows of a result, rendered by DataFusion's runner code.
fn finish(
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    spark: bool,
) -> Result<DFOutput, DFSqlLogicTestError> {
    let types = convert_schema_to_types(schema.fields());
    let mut rows = convert_batches(schema, batches, spark)?;
    // As DataFusion's runner does for its checkout: plans name files under
    // this repository the same on every machine.
    let root = workspace_root();
    for cell in rows.iter_mut().flatten() {
        if cell.contains(root.as_str()) {
            *cell = cell.replace(root.as_str(), "WORKSPACE_ROOT");
        }
    }
    if rows.is_empty() && types.is_empty() {
        Ok(DBOutput::StatementComplete(0))
    } else {
        Ok(DBOutput::Rows { types, rows })
    }
}

/// The least number of statements the distributed mode must run on workers.
const MIN_DISTRIBUTED_PLANS: usize = 50;

/// Queries that the distributed mode planned as distributed (ran on workers).
static DISTRIBUTED_PLANS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether `plan` inserts into, deletes from or updates an in-memory table.
fn writes_memory_table(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.downcast_ref::<datafusion::datasource::sink::DataSinkExec>()
        // DataFusion does not export `MemSink`.
        .is_some_and(|d| format!("{:?}", d.sink()).starts_with("MemSink"))
        // Nor the plan of a memory table's DELETE and UPDATE.
        || {
            use datafusion::common::tree_node::TreeNode;
            plan.exists(|p| Ok(p.name() == "DmlResultExec"))
                .unwrap_or(false)
        }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
}

/// One `.slt` file, with its path relative to the folder it was found in.
struct TestFile {
    path: PathBuf,
    relative: PathBuf,
}

impl TestFile {
    /// Whether the file runs with Spark's built-ins: it starts with
    /// `# df-variant: spark_functions`, or it lies in a `spark/` folder (where
    /// DataFusion's runner runs its Spark files).
    fn spark(&self) -> bool {
        self.relative.starts_with("spark")
            || std::fs::read_to_string(&self.path)
                .is_ok_and(|t| t.starts_with("# df-variant: spark_functions"))
    }

    /// Whether the file runs with the opt-in speedups of plain plans
    /// ([`df_variant::accel::with_accelerations`]): it lies in an `accel/`
    /// folder.
    fn accelerated(&self) -> bool {
        self.relative.starts_with("accel")
    }
}

async fn run_file(file: &TestFile, tally: &mut Tally, options: &Options) {
    let path = file.path.as_path();
    let records = match sqllogictest::parse_file::<DFColumnType>(path) {
        Ok(r) => r,
        Err(e) => {
            println!("FAILED {}: cannot parse: {e}", path.display());
            tally.failed += 1;
            return;
        }
    };
    if options.workdir.is_some()
        && let Err(e) = datafusion_sqllogictest::setup_scratch_dir(&file.relative)
    {
        println!("FAILED {}: scratch dir: {e}", path.display());
        tally.failed += 1;
        return;
    }
    let partitions = partitions();
    let mut config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_option_extension(df_variant::VariantOptions::default());
    // Settings read when the context is created.
    let spark = file.spark();
    if spark && let Err(e) = config.options_mut().set("variant.spark_functions", "true") {
        println!("FAILED {}: {e}", path.display());
        tally.failed += 1;
        return;
    }
    let mode = mode();
    // Dropped (workers stopped) when the file is done.
    let mut cluster = None;
    let runtime = Arc::new(datafusion::execution::runtime_env::RuntimeEnv::default());
    let mut builder = df_variant::variant_state_builder(config, Arc::clone(&runtime));
    if file.accelerated() {
        builder = df_variant::accel::with_accelerations(builder);
    }
    let state = if mode == Mode::Distributed {
        let workers = df_variant::distributed::InMemoryCluster::start(3, runtime);
        let state = workers.coordinator(builder).unwrap().build();
        cluster = Some(workers);
        state
    } else {
        builder.build()
    };
    // `SELECT ... FROM 'file.parquet'`, as in `variant_context`.
    let ctx = Arc::new(df_variant::enable_url_table(
        SessionContext::new_with_state(state),
    ));
    let ours = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let all_ours = entry() == Entry::Query;
    let record_ours = Arc::clone(&ours);
    let mut runner = Runner::new(move || {
        let ctx = Arc::clone(&ctx);
        let ours = Arc::clone(&record_ours);
        async move {
            Ok::<_, DFSqlLogicTestError>(VariantDb {
                ctx,
                mode,
                ours,
                spark,
            })
        }
    });
    // What DataFusion's runner checks: column types exactly, values after
    // trimming trailing blanks (with its `<slt:ignore>` marker).
    runner.with_column_validator(strict_column_validator);
    runner.with_normalizer(value_normalizer);
    runner.with_validator(df_value_validator);
    if options.complete {
        // Rewrites the file with the actual results as the expected ones.
        match runner
            .update_test_file(
                path,
                " ",
                df_value_validator,
                value_normalizer,
                strict_column_validator,
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
    // A comment line `not distributed: <why>` skips the next record in the
    // distributed mode (what the coordinator's session alone holds).
    let mut not_distributed = false;
    // A comment line `df-variant: sql::query` runs the next record through
    // `df_variant::sql::query` instead of `ctx.sql`.
    let mut through_query = false;
    for record in records {
        let counted = matches!(record, Record::Statement { .. } | Record::Query { .. });
        if matches!(record, Record::Halt { .. }) {
            break;
        }
        if let Record::Comment(lines) = &record {
            not_distributed |= lines.iter().any(|l| {
                l.trim_start_matches(['#', ' '])
                    .starts_with("not distributed:")
            });
            through_query |= lines.iter().any(|l| {
                l.trim_start_matches(['#', ' '])
                    .starts_with("df-variant: sql::query")
            });
            continue;
        }
        if counted {
            let marked = std::mem::take(&mut through_query);
            ours.store(all_ours || marked, std::sync::atomic::Ordering::Relaxed);
        }
        if counted && std::mem::take(&mut not_distributed) && mode == Mode::Distributed {
            tally.skipped += 1;
            continue;
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

/// Which entry point runs the records (`DF_VARIANT_SLT_ENTRY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    /// DataFusion's `ctx.sql`, as embedders call it; records after a comment
    /// line `df-variant: sql::query` through `df_variant::sql::query`.
    Ctx,
    /// Every record through `df_variant::sql::query`, as the CLI runs SQL.
    Query,
}

fn entry() -> Entry {
    match std::env::var("DF_VARIANT_SLT_ENTRY").as_deref() {
        Ok("query") => Entry::Query,
        Ok("" | "ctx") | Err(_) => Entry::Ctx,
        Ok(other) => panic!("DF_VARIANT_SLT_ENTRY={other}: expected ctx or query"),
    }
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

/// The `.slt` files under `root`, sorted, with paths relative to `root`.
fn collect_slt(root: &Path, dir: &Path, out: &mut Vec<TestFile>) {
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
            collect_slt(root, &p, out);
        } else if p.extension().is_some_and(|e| e == "slt") {
            let relative = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            out.push(TestFile { path: p, relative });
        }
    }
}

/// The runner's own flags; the others are cargo's and libtest's
/// (`--nocapture`, ...), ignored here.
struct Options {
    /// `--complete`: rewrite the files with the actual results (review the diff).
    complete: bool,
    /// `--workdir DIR`: run from `DIR`, so that relative paths in the files
    /// resolve as under their own runner, with DataFusion's per-file scratch
    /// folder `test_files/scratch/<file name>` made empty before each file.
    workdir: Option<PathBuf>,
    /// Files, folders, and filters on the default files' paths.
    args: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        complete: false,
        workdir: None,
        args: Vec::new(),
    };
    let mut all = std::env::args().skip(1);
    while let Some(a) = all.next() {
        if a == "--complete" {
            options.complete = true;
        } else if a == "--workdir" {
            let dir = all.next().ok_or("--workdir needs a folder")?;
            options.workdir = Some(PathBuf::from(dir));
        } else if let Some(dir) = a.strip_prefix("--workdir=") {
            options.workdir = Some(PathBuf::from(dir));
        } else if !a.starts_with('-') {
            options.args.push(a);
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            println!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if options.complete && (partitions() != DEFAULT_PARTITIONS || mode() != Mode::Direct) {
        println!(
            "--complete writes the EXPLAIN plans of {DEFAULT_PARTITIONS} partitions run directly; \
             unset DF_VARIANT_SLT_PARTITIONS and DF_VARIANT_SLT_MODE"
        );
        return ExitCode::FAILURE;
    }
    let mut files = Vec::new();
    let mut filters = Vec::new();
    for a in &options.args {
        // Absolute, so that `--workdir` does not move them.
        let p = std::path::absolute(a).unwrap_or_else(|_| PathBuf::from(a));
        if p.is_dir() {
            collect_slt(&p, &p, &mut files);
        } else if p.is_file() {
            let relative = PathBuf::from(p.file_name().unwrap_or_default());
            files.push(TestFile { path: p, relative });
        } else {
            filters.push(a.clone());
        }
    }
    if files.is_empty() {
        let mut all = Vec::new();
        let root = Path::new(DEFAULT_DIR);
        collect_slt(root, root, &mut all);
        files = all
            .into_iter()
            .filter(|f| {
                filters.is_empty()
                    || filters
                        .iter()
                        .any(|x| f.path.to_string_lossy().contains(x.as_str()))
            })
            .collect();
    }
    let _ = std::fs::remove_dir_all(SCRATCH_DIR);
    if let Some(dir) = &options.workdir
        && let Err(e) = std::env::set_current_dir(dir)
    {
        println!("--workdir {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut tally = Tally::default();
    for file in &files {
        let before = tally.failed;
        runtime.block_on(run_file(file, &mut tally, &options));
        let status = if tally.failed == before {
            "ok"
        } else {
            "FAILED"
        };
        println!("{status}: {}", file.path.display());
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
