//! Plans across a process boundary. One fixture (Bluesky events in shredded
//! Parquet, a directory mixing a shredded and an unshredded file, a partitioned
//! Delta table with per-path bounds, an NDJSON file) and one list of queries (the
//! five JSONBench queries, pushdown, reassembly, Delta file skipping, NDJSON)
//! run:
//! - through bytes ([`df_variant::codec`]): the same rows and the same pruning
//!   counters as in one process; a planted fault (decoded scans without their
//!   adapter) must be caught;
//! - on an in-memory cluster of datafusion-distributed workers;
//! - on worker processes on loopback (`df-variant worker`), from Rust and from
//!   the CLI's `--workers`; a worker killed in the middle of a query fails it
//!   within seconds.
//!
//! The SQL-level version of the first two is the slt suite under
//! `DF_VARIANT_SLT_MODE=roundtrip` and `=distributed` (`.ci/run`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    DistributedExt, DistributedMetricsFormat, rewrite_distributed_plan_with_metrics,
};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use df_variant::codec::VariantPhysicalCodec;

/// The five JSONBench queries, as `benches/jsonbench.py` writes them for us.
const JSONBENCH: [&str; 5] = [
    "SELECT v:commit.collection::string AS event, count(*) AS count FROM bluesky GROUP BY event ORDER BY count DESC, event",
    "SELECT v:commit.collection::string AS event, count(*) AS count, count(DISTINCT v:did::string) AS users FROM bluesky WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' GROUP BY event ORDER BY count DESC, event",
    "SELECT v:commit.collection::string AS event, date_part('hour', to_timestamp_micros(v:time_us::bigint)) AS hour_of_day, count(*) AS count FROM bluesky WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' AND v:commit.collection::string IN ('app.bsky.feed.post', 'app.bsky.feed.repost', 'app.bsky.feed.like') GROUP BY event, hour_of_day ORDER BY hour_of_day, event",
    "SELECT v:did::string AS user_id, to_timestamp_micros(min(v:time_us::bigint)) AS first_post_ts FROM bluesky WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' AND v:commit.collection::string = 'app.bsky.feed.post' GROUP BY user_id ORDER BY first_post_ts ASC, user_id LIMIT 3",
    "SELECT v:did::string AS user_id, max(v:time_us::bigint) / 1000 - min(v:time_us::bigint) / 1000 AS activity_span FROM bluesky WHERE v:kind::string = 'commit' AND v:commit.operation::string = 'create' AND v:commit.collection::string = 'app.bsky.feed.post' GROUP BY user_id ORDER BY activity_span DESC, user_id LIMIT 3",
];

/// Queries over the other tables: (query, must prune row groups or files). The
/// JSONBench queries read shredded leaves (`extractions_pushed`) but their
/// filters match every row group of the random events.
const OTHERS: [(&str, bool); 7] = [
    (
        "SELECT count(*) AS n, sum(v:a::bigint) AS s FROM mixed WHERE v:a::bigint BETWEEN 1230 AND 1250",
        true,
    ),
    (
        "SELECT id, to_json(v) AS j FROM mixed WHERE id % 500 = 7 ORDER BY id",
        false,
    ),
    (
        "SELECT v:b::string AS b, count(*) AS n, sum(v:c.d::int) AS d FROM mixed GROUP BY b ORDER BY b",
        false,
    ),
    (
        "SELECT id FROM delta WHERE v:a::int > 100 ORDER BY id",
        true,
    ),
    (
        "SELECT p, count(*) AS n, max(to_json(v)) AS j FROM delta GROUP BY p ORDER BY p",
        false,
    ),
    (
        "SELECT count(*) AS n, count(DISTINCT v:did::string) AS users FROM read_json_variant('DIR/events.ndjson')",
        false,
    ),
    ("SELECT schema_of_variant_agg(v) AS s FROM mixed", false),
];

const BLUESKY_EVENTS: u64 = 20_000;

/// The tables, under a directory removed at the end.
struct Fixture {
    dir: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Fixture {
    async fn new(name: &str) -> Result<Self> {
        let dir =
            std::env::temp_dir().join(format!("df_variant_dist_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ndjson = dir.join("events.ndjson");
        df_variant::demo::bluesky::write_ndjson(
            BLUESKY_EVENTS,
            1,
            std::fs::File::create(&ndjson).unwrap(),
        )
        .unwrap();
        let ctx = df_variant::variant_context();
        let d = dir.display();
        for sql in [
            format!(
                "COPY (SELECT v FROM read_json_variant('{d}/events.ndjson')) TO '{d}/bluesky/' \
                 STORED AS PARQUET OPTIONS (max_row_group_size 2000)"
            ),
            "CREATE TABLE src AS SELECT id, parse_json('{\"a\":' || id || ',\"b\":\"k' || (id % 3) \
             || '\",\"c\":{\"d\":' || (id * 2) || '}}') AS v \
             FROM (SELECT CAST(value AS BIGINT) AS id FROM generate_series(0, 2999))"
                .to_string(),
            format!(
                "COPY src TO '{d}/mixed/shredded.parquet' STORED AS PARQUET \
                 OPTIONS (max_row_group_size 500)"
            ),
            format!(
                "COPY (SELECT id + 3000 AS id, v FROM src) TO '{d}/mixed/plain.parquet' \
                 STORED AS PARQUET OPTIONS ('variant.shredding' 'off', max_row_group_size 500)"
            ),
            format!(
                "COPY (SELECT id, p, parse_json(j) AS v FROM (VALUES \
                 (1, 'a', '{{\"a\": 1, \"b\": \"x\"}}'), (2, 'a', '{{\"a\": 2}}'), \
                 (3, 'b', '{{\"a\": 30}}'), (4, 'b', '[1, 2]'), (5, 'b', '{{\"a\": 31}}'), \
                 (8, 'c', '{{\"a\": 700, \"b\": \"w\"}}'), (9, 'c', '{{\"a\": 701}}')) t(id, p, j)) \
                 TO '{d}/delta' STORED AS DELTA PARTITIONED BY (p) \
                 OPTIONS ('delta.enableVariantShredding' 'true')"
            ),
        ] {
            ctx.sql(&sql).await?.collect().await?;
        }
        Ok(Self { dir })
    }

    /// Registers the tables in `ctx`.
    async fn register(&self, ctx: &SessionContext) -> Result<()> {
        let d = self.dir.display();
        for sql in [
            format!("CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{d}/bluesky/'"),
            format!("CREATE EXTERNAL TABLE mixed STORED AS PARQUET LOCATION '{d}/mixed/'"),
            format!("CREATE EXTERNAL TABLE delta STORED AS DELTA LOCATION '{d}/delta'"),
        ] {
            ctx.sql(&sql).await?.collect().await?;
        }
        Ok(())
    }

    fn queries(&self) -> Vec<(String, bool)> {
        let d = self.dir.display().to_string();
        JSONBENCH
            .iter()
            .map(|q| (q.to_string(), false))
            .chain(OTHERS.iter().map(|(q, p)| (q.replace("DIR", &d), *p)))
            .collect()
    }
}

/// The pruning and pushdown counters of the `VariantScanExec` nodes of a plan.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Counters {
    row_groups_pruned: usize,
    files_pruned: usize,
    pages_pruned: usize,
    extractions_pushed: usize,
    pruning_errors: usize,
}

impl Counters {
    fn of(plan: &Arc<dyn ExecutionPlan>) -> Self {
        let mut c = Counters::default();
        let _ = plan.apply(|node| {
            if node.name() == "VariantScanExec"
                && let Some(m) = node.metrics()
            {
                let get = |n: &str| m.sum_by_name(n).map_or(0, |v| v.as_usize());
                c.row_groups_pruned += get("row_groups_pruned");
                c.files_pruned += get("files_pruned");
                c.pages_pruned += get("pages_pruned");
                c.extractions_pushed += get("extractions_pushed");
                c.pruning_errors += get("pruning_errors");
            }
            Ok(TreeNodeRecursion::Continue)
        });
        c
    }

    fn pruned(&self) -> usize {
        self.row_groups_pruned + self.files_pruned + self.pages_pruned
    }
}

/// Runs `plan` in `ctx`: its rows as a table, and its counters.
async fn run(ctx: &SessionContext, plan: Arc<dyn ExecutionPlan>) -> Result<(String, Counters)> {
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    Ok((
        pretty_format_batches(&batches)?.to_string(),
        Counters::of(&plan),
    ))
}

async fn plan(ctx: &SessionContext, q: &str) -> Result<Arc<dyn ExecutionPlan>> {
    ctx.sql(q).await?.create_physical_plan().await
}

/// `plan` through bytes with `codec`, and back for `ctx`.
fn through_bytes(
    ctx: &SessionContext,
    plan: Arc<dyn ExecutionPlan>,
    codec: &VariantPhysicalCodec,
) -> Result<Arc<dyn ExecutionPlan>> {
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, codec)?;
    physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), codec)
}

/// The answers of one process, per query.
async fn one_process(f: &Fixture) -> Result<Vec<(String, Counters)>> {
    let ctx = df_variant::variant_context();
    f.register(&ctx).await?;
    let mut out = Vec::new();
    for (q, prunes) in f.queries() {
        let (rows, counters) = run(&ctx, plan(&ctx, &q).await?).await?;
        assert_eq!(counters.pruning_errors, 0, "{q}");
        if prunes {
            assert!(counters.pruned() > 0, "{q}: {counters:?}");
        }
        if q.contains("FROM bluesky") {
            assert!(counters.extractions_pushed > 0, "{q}: {counters:?}");
        }
        out.push((rows, counters));
    }
    Ok(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serialized_plans_give_the_answers_and_pruning_of_one_process() -> Result<()> {
    let f = Fixture::new("codec").await?;
    let expected = one_process(&f).await?;
    // The receiving side is another session (as in another process).
    let receiver = df_variant::variant_context();
    f.register(&receiver).await?;
    let codec = VariantPhysicalCodec::default();
    for ((q, _), (rows, counters)) in f.queries().iter().zip(&expected) {
        let decoded = through_bytes(&receiver, plan(&receiver, q).await?, &codec)?;
        let (got_rows, got_counters) = run(&receiver, decoded).await?;
        assert_eq!(&got_rows, rows, "{q}");
        assert_eq!(&got_counters, counters, "{q}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_trip_check_catches_a_codec_that_drops_the_adapter() -> Result<()> {
    let f = Fixture::new("fault").await?;
    let expected = one_process(&f).await?;
    let ctx = df_variant::variant_context();
    // With the scan cache on, a `VariantScanExec` installs its adapter on each
    // file scan itself, which hides the fault; with it off, a scan with
    // nothing to push runs the decoded input as it came, adapter or not.
    ctx.sql("SET variant.scan_cache_size = '0'")
        .await?
        .collect()
        .await?;
    f.register(&ctx).await?;
    let faulty = VariantPhysicalCodec::planted_fault_dropping_adapters();
    let mut caught = Vec::new();
    for ((q, _), (rows, counters)) in f.queries().iter().zip(&expected) {
        let decoded = through_bytes(&ctx, plan(&ctx, q).await?, &faulty)?;
        match run(&ctx, decoded).await {
            Ok((r, c)) if &r == rows && &c == counters => {}
            _ => caught.push(q.clone()),
        }
    }
    // Reassembling the mixed directory needs the adapter; so do the shredded reads.
    assert!(
        caught.iter().any(|q| q.contains("to_json(v)")),
        "the planted fault went unnoticed; caught only {caught:?}"
    );
    Ok(())
}

#[tokio::test]
async fn the_codec_refuses_what_it_cannot_carry() -> Result<()> {
    let ctx = df_variant::variant_context();
    ctx.sql("CREATE TABLE m (v VARIANT)")
        .await?
        .collect()
        .await?;
    let insert = plan(&ctx, "INSERT INTO m SELECT parse_json('1')").await?;
    let err = df_variant::codec::plan_to_bytes(insert)
        .unwrap_err()
        .to_string();
    assert!(err.contains("MemSink"), "{err}");
    Ok(())
}

/// Runs `q` on a distributed `ctx`: rows, and the counters gathered from the
/// workers.
async fn run_distributed(ctx: &SessionContext, q: &str) -> Result<(String, Counters, bool)> {
    let plan = plan(ctx, q).await?;
    let distributed = plan.name() == "DistributedExec";
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let counters = if distributed {
        let with_metrics = tokio::time::timeout(
            Duration::from_secs(30),
            rewrite_distributed_plan_with_metrics(plan, DistributedMetricsFormat::Aggregated),
        )
        .await
        .expect("the workers' metrics arrive")?;
        Counters::of(&with_metrics)
    } else {
        Counters::of(&plan)
    };
    Ok((
        pretty_format_batches(&batches)?.to_string(),
        counters,
        distributed,
    ))
}

/// Runs every query on `ctx` (a coordinator) and compares with one process.
async fn same_as_one_process(
    ctx: &SessionContext,
    f: &Fixture,
    expected: &[(String, Counters)],
) -> Result<()> {
    for ((q, prunes), (rows, _)) in f.queries().iter().zip(expected) {
        let (got, counters, distributed) = run_distributed(ctx, q).await?;
        assert_eq!(&got, rows, "{q}");
        assert_eq!(counters.pruning_errors, 0, "{q}");
        if q.contains("FROM bluesky") || q.contains("FROM mixed") {
            assert!(distributed, "{q} did not run on the workers");
        }
        if *prunes {
            assert!(counters.pruned() > 0, "{q}: nothing pruned on the workers");
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_memory_cluster_gives_the_answers_of_one_process() -> Result<()> {
    let f = Fixture::new("memory").await?;
    let expected = one_process(&f).await?;
    let runtime = Arc::new(RuntimeEnv::default());
    let cluster = df_variant::distributed::InMemoryCluster::start(3, Arc::clone(&runtime));
    let builder =
        df_variant::variant_state_builder(SessionConfig::new().with_target_partitions(2), runtime);
    let ctx = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
    f.register(&ctx).await?;
    same_as_one_process(&ctx, &f, &expected).await?;
    Ok(())
}

/// The opt-in speedups of plain plans (`df_variant::accel`) ship their own
/// node (`StringGroupCountExec`) and aggregate (`count_distinct_partitioned`):
/// accelerated plans give the default session's answers through bytes and on
/// an in-memory cluster of workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accelerated_plans_answer_as_the_default_session_through_bytes_and_on_workers() -> Result<()>
{
    let f = Fixture::new("accel").await?;
    let expected = one_process(&f).await?;
    let accelerated = df_variant::accel::accelerated_context();
    f.register(&accelerated).await?;
    let codec = VariantPhysicalCodec::default();
    let mut nodes = Vec::new();
    for ((q, _), (rows, _)) in f.queries().iter().zip(&expected) {
        let planned = plan(&accelerated, q).await?;
        let text = datafusion::physical_plan::displayable(planned.as_ref())
            .indent(true)
            .to_string();
        for node in [
            "StringGroupCountExec",
            "count_distinct_partitioned",
            "=view",
        ] {
            if text.contains(node) {
                nodes.push(node);
            }
        }
        let decoded = through_bytes(&accelerated, planned, &codec)?;
        let (got, _) = run(&accelerated, decoded).await?;
        assert_eq!(&got, rows, "{q}");
    }
    for node in [
        "StringGroupCountExec",
        "count_distinct_partitioned",
        "=view",
    ] {
        assert!(nodes.contains(&node), "no query planned {node}: {nodes:?}");
    }
    let runtime = Arc::new(RuntimeEnv::default());
    let cluster = df_variant::distributed::InMemoryCluster::start(3, Arc::clone(&runtime));
    let builder = df_variant::accel::with_accelerations(df_variant::variant_state_builder(
        SessionConfig::new().with_target_partitions(2),
        runtime,
    ));
    let ctx = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
    f.register(&ctx).await?;
    same_as_one_process(&ctx, &f, &expected).await?;
    Ok(())
}

/// `CREATE TABLE ... AS` keeps the events shredded in memory; the JSONBench
/// queries on it answer as on the file, in one process, through bytes (the
/// stored batches travel in the plan) and on workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_in_memory_table_answers_as_its_file_here_through_bytes_and_on_workers()
-> Result<()> {
    let f = Fixture::new("ctas").await?;
    let file = df_variant::variant_context();
    f.register(&file).await?;
    let create = "CREATE TABLE events AS SELECT v FROM bluesky";
    let mem = df_variant::variant_context();
    f.register(&mem).await?;
    df_variant::sql::query(&mem, create)
        .await?
        .collect()
        .await?;
    let runtime = Arc::new(RuntimeEnv::default());
    let cluster = df_variant::distributed::InMemoryCluster::start(3, Arc::clone(&runtime));
    let builder =
        df_variant::variant_state_builder(SessionConfig::new().with_target_partitions(2), runtime);
    let coordinator = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
    f.register(&coordinator).await?;
    df_variant::sql::query(&coordinator, create)
        .await?
        .collect()
        .await?;
    let codec = VariantPhysicalCodec::default();
    for q in JSONBENCH {
        let (want, _) = run(&file, plan(&file, q).await?).await?;
        let q = q.replace("FROM bluesky", "FROM events");
        let here = plan(&mem, &q).await?;
        let text = datafusion::physical_plan::displayable(here.as_ref())
            .indent(true)
            .to_string();
        assert!(
            text.contains("ShreddedMemoryExec: partitions=2, shredded=[v]"),
            "{text}"
        );
        assert!(text.contains("try_variant_get(v@0"), "{text}");
        let (got, _) = run(&mem, here).await?;
        assert_eq!(got, want, "{q}");
        // A fresh plan: a run leaves its TopK's dynamic filter in the plan.
        let decoded = through_bytes(&mem, plan(&mem, &q).await?, &codec)?;
        let (got, _) = run(&mem, decoded).await?;
        assert_eq!(got, want, "{q}, through bytes");
        let (got, _, _) = run_distributed(&coordinator, &q).await?;
        assert_eq!(got, want, "{q}, on workers");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variant_settings_reach_the_workers() -> Result<()> {
    // `variant.spark_functions` decides on each worker whether Spark's built-ins
    // are there to decode the plan with: `sha2` is only datafusion-spark's.
    let f = Fixture::new("settings").await?;
    let q = "SELECT v:b::string AS b, max(sha2(v:b::string, 256)) AS h FROM mixed GROUP BY b ORDER BY b";
    let spark = || {
        let mut config = SessionConfig::new()
            .with_target_partitions(2)
            .with_option_extension(df_variant::VariantOptions::default());
        config
            .options_mut()
            .set("variant.spark_functions", "true")
            .unwrap();
        config
    };
    let alone = df_variant::variant_context_with_config(spark());
    f.register(&alone).await?;
    let (expected, _) = run(&alone, plan(&alone, q).await?).await?;
    let runtime = Arc::new(RuntimeEnv::default());
    let cluster = df_variant::distributed::InMemoryCluster::start(2, Arc::clone(&runtime));
    let builder = df_variant::variant_state_builder(spark(), runtime);
    let ctx = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
    f.register(&ctx).await?;
    let (got, _, distributed) = run_distributed(&ctx, q).await?;
    assert!(distributed, "{q} did not run on the workers");
    assert_eq!(got, expected);
    Ok(())
}

/// The session time zone travels with each query: Variant timestamps that
/// workers print with `to_json` are in the coordinator's zone, not UTC (a
/// silent wrong answer before), and a `SET` between queries reaches them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_time_zone_reaches_the_workers() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("df_variant_dist_tz_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.display();
    let writer = df_variant::variant_context();
    for part in 0..4 {
        let sql = format!(
            "COPY (SELECT CAST(value % 3 AS BIGINT) AS k, CAST(arrow_cast(\
             to_timestamp_seconds(1700000000 + value * 3607), \
             'Timestamp(Microsecond, Some(\"UTC\"))') AS VARIANT) AS t \
             FROM generate_series({}, {})) TO '{d}/ts/{part}.parquet' STORED AS PARQUET",
            part * 500,
            part * 500 + 499
        );
        writer.sql(&sql).await?.collect().await?;
    }
    let q = "SELECT k, min(to_json(t)) AS first, max(to_json(t)) AS last, \
             count(DISTINCT to_json(t)) AS n FROM ts GROUP BY k ORDER BY k";
    let register = format!("CREATE EXTERNAL TABLE ts STORED AS PARQUET LOCATION '{d}/ts/'");
    let runtime = Arc::new(RuntimeEnv::default());
    let cluster = df_variant::distributed::InMemoryCluster::start(2, Arc::clone(&runtime));
    let builder =
        df_variant::variant_state_builder(SessionConfig::new().with_target_partitions(2), runtime);
    let ctx = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
    let alone = df_variant::variant_context();
    for c in [&ctx, &alone] {
        c.sql(&register).await?.collect().await?;
    }
    let mut answers = Vec::new();
    for zone in ["America/New_York", "+05:30", "UTC"] {
        let set = format!("SET datafusion.execution.time_zone = '{zone}'");
        for c in [&ctx, &alone] {
            c.sql(&set).await?.collect().await?;
        }
        let (expected, _) = run(&alone, plan(&alone, q).await?).await?;
        let (got, _, distributed) = run_distributed(&ctx, q).await?;
        assert!(distributed, "{q} did not run on the workers");
        assert_eq!(got, expected, "in {zone}");
        answers.push(got);
    }
    assert!(answers[0].contains("-05:00") && answers[1].contains("+05:30"));
    assert_ne!(answers[0], answers[2]);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A `df-variant worker` process on a free loopback port.
struct WorkerProcess {
    child: Child,
    url: url::Url,
}

impl WorkerProcess {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_df-variant"))
            .args(["worker", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("df-variant worker starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("a line");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"));
        Self {
            child,
            url: url::Url::parse(addr).unwrap(),
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A coordinator over `workers` that splits every scan.
fn coordinator(workers: &[WorkerProcess]) -> Result<SessionContext> {
    let builder = df_variant::variant_state_builder(
        SessionConfig::new().with_target_partitions(2),
        Arc::default(),
    );
    let urls = workers.iter().map(|w| w.url.clone()).collect();
    let state = df_variant::distributed::with_workers(builder, urls)?
        .with_distributed_file_scan_config_bytes_per_partition(1)?
        .build();
    Ok(SessionContext::new_with_state(state))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_processes_give_the_answers_of_one_process() -> Result<()> {
    let f = Fixture::new("processes").await?;
    let expected = one_process(&f).await?;
    let workers = [WorkerProcess::start(), WorkerProcess::start()];
    let ctx = coordinator(&workers)?;
    f.register(&ctx).await?;
    same_as_one_process(&ctx, &f, &expected).await?;

    // The same through the CLI: `df-variant --workers ...`.
    let urls: Vec<String> = workers.iter().map(|w| w.url.to_string()).collect();
    let d = f.dir.display();
    let cli = |extra: &[String]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_df-variant"));
        cmd.args(["--quiet", "--format", "csv"]).args(extra).args([
            "-c",
            &format!("CREATE EXTERNAL TABLE bluesky STORED AS PARQUET LOCATION '{d}/bluesky/'"),
            "-c",
            JSONBENCH[0],
            "-c",
            &format!("EXPLAIN ANALYZE {}", JSONBENCH[1]),
        ]);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let alone = cli(&[]);
    let spread = cli(&[
        "--workers".to_string(),
        urls.join(","),
        "-c".to_string(),
        "SET distributed.file_scan_config_bytes_per_partition = 1".to_string(),
    ]);
    let answer = |s: &str| s.split("plan_type").next().unwrap_or_default().to_string();
    assert_eq!(answer(&spread), answer(&alone));
    assert!(spread.contains("DistributedExec"), "{spread}");
    assert!(spread.contains("row_groups_pruned="), "{spread}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_query_fails_the_query_within_seconds() -> Result<()> {
    let f = Fixture::new("kill").await?;
    let mut workers = [WorkerProcess::start(), WorkerProcess::start()];
    let ctx = coordinator(&workers)?;
    f.register(&ctx).await?;
    // A self-join of the events on their collection, with tasks on both
    // workers.
    let q = "SELECT count(*) FROM bluesky a JOIN bluesky b \
             ON a.v:commit.collection::string = b.v:commit.collection::string";
    let plan = plan(&ctx, q).await?;
    assert_eq!(plan.name(), "DistributedExec");
    // The worker is stopped (SIGSTOP) before the query starts, so the query
    // cannot end before the kill however fast the build is: its tasks on that
    // worker wait, and the kill comes while they do.
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &workers[1].child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let task = tokio::spawn(collect(plan, ctx.task_ctx()));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !task.is_finished(),
        "the query ended without its stopped worker"
    );
    workers[1].child.kill().unwrap();
    let killed = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("the query ends within seconds of the kill")
        .expect("no panic");
    let err = outcome.expect_err("a query that lost a worker gives no answer");
    let lost = format!("lost df-variant worker {}", workers[1].url);
    assert!(err.to_string().contains(&lost), "{err}");
    println!(
        "failed {:.1} s after the kill: {}",
        killed.elapsed().as_secs_f64(),
        err.to_string().lines().next().unwrap_or_default()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_worker_fails_the_query_naming_it() -> Result<()> {
    let f = Fixture::new("unreachable").await?;
    let worker = WorkerProcess::start();
    // A loopback port nobody listens on any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = url::Url::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    let builder = df_variant::variant_state_builder(
        SessionConfig::new().with_target_partitions(2),
        Arc::default(),
    );
    let state =
        df_variant::distributed::with_workers(builder, vec![worker.url.clone(), dead.clone()])?
            .with_distributed_file_scan_config_bytes_per_partition(1)?
            .build();
    let ctx = SessionContext::new_with_state(state);
    f.register(&ctx).await?;
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        collect(plan(&ctx, JSONBENCH[0]).await?, ctx.task_ctx()),
    )
    .await
    .expect("the query ends within seconds");
    let err = outcome.expect_err("a query with an unreachable worker gives no answer");
    assert!(
        err.to_string()
            .contains(&format!("df-variant worker {dead}")),
        "{err}"
    );
    println!(
        "failed after {:.1} s: {err}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
