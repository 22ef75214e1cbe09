//! The extension's boundary: a session made with `with_variant` plans and
//! answers every query without VARIANT exactly as DataFusion does.
//!
//! A corpus of plain SQL (TPC-H- and ClickBench-like queries over a Parquet
//! file, a CSV file and a memory table: string group-bys and equalities,
//! `count(DISTINCT)`, `EXTRACT`/`date_part` with and without zones, joins,
//! subqueries, windows, string functions, `COPY` to Parquet) runs in a plain
//! DataFusion session and in one with df-variant, and must give the same
//! `EXPLAIN` text, the same function implementations behind every call of the
//! optimized plan, the same answers, and the same files written.
//!
//! The second test proves the corpus can see a leak: each opt-in piece of
//! `df_variant::accel`, installed alone on a plain session, must make it differ.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::prelude::{SessionConfig, SessionContext};

/// Rows of the Parquet table: more than one row group of the accelerated
/// default (128 Ki rows), fewer than DataFusion's (1 Mi). (`COPY` writes them
/// to one file: a folder would get four files, each under both sizes.)
const ROWS: usize = 140_000;

/// The folder of the generated tables, removed at the end.
struct Data {
    dir: PathBuf,
}

impl Drop for Data {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes the Parquet and CSV tables with a plain DataFusion session.
async fn data(name: &str) -> Result<Data> {
    let dir =
        std::env::temp_dir().join(format!("df_variant_boundary_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = SessionContext::new();
    let run = |q: String| {
        let ctx = ctx.clone();
        async move { ctx.sql(&q).await?.collect().await }
    };
    run(format!(
        "COPY (SELECT value AS id, value % 100 AS k, \
           'user_' || CAST(value % 1000 AS VARCHAR) AS user_name, \
           CASE value % 3 WHEN 0 THEN 'red' WHEN 1 THEN 'green' ELSE 'blue' END AS color, \
           CAST(value AS DOUBLE) / 7 AS price, \
           CAST(value % 1000 AS DECIMAL(10, 2)) AS amount, \
           to_timestamp_micros(1700000000000000 + value * 3600000000) AS ts, \
           arrow_cast(to_timestamp_micros(1700000000000000 + value * 60000000), \
                      'Timestamp(Microsecond, Some(\"UTC\"))') AS ts_utc, \
           CASE WHEN value % 7 = 0 THEN NULL ELSE 'note ' || CAST(value % 13 AS VARCHAR) END AS note \
         FROM generate_series(1, {ROWS})) TO '{}' STORED AS PARQUET",
        dir.join("t.parquet").display()
    ))
    .await?;
    run(format!(
        "COPY (SELECT value AS o_id, 'cust_' || CAST(value % 17 AS VARCHAR) AS cust, \
           CASE value % 4 WHEN 0 THEN 'F' WHEN 1 THEN 'O' ELSE 'P' END AS status, \
           CAST(value * 3 AS DOUBLE) AS total \
         FROM generate_series(0, 99)) TO '{}' STORED AS CSV OPTIONS (has_header 'true')",
        dir.join("c.csv").display()
    ))
    .await?;
    Ok(Data { dir })
}

/// DataFusion's defaults, with the test's fixed partitioning.
fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(2)
}

/// A plain DataFusion session.
fn plain() -> SessionStateBuilder {
    SessionStateBuilder::new()
        .with_config(config())
        .with_default_features()
}

/// The same session with df-variant.
fn with_variant() -> SessionStateBuilder {
    df_variant::with_variant(plain())
}

/// Registers the corpus's tables in `ctx`.
async fn register(ctx: &SessionContext, data: &Data) -> Result<()> {
    for q in [
        format!(
            "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION '{}'",
            data.dir.join("t.parquet").display()
        ),
        format!(
            "CREATE EXTERNAL TABLE c STORED AS CSV LOCATION '{}' OPTIONS (has_header 'true')",
            data.dir.join("c.csv").display()
        ),
        "CREATE TABLE m AS SELECT * FROM (VALUES \
           (1, 'apple', 'a'), (2, 'banana', 'b'), (3, 'apple', 'c'), \
           (4, 'cherry', 'a'), (5, 'banana', NULL), (6, 'a string longer than twelve', 'a')) \
           AS x(id, fruit, tag)"
            .to_string(),
    ] {
        ctx.sql(&q).await?.collect().await?;
    }
    Ok(())
}

/// The corpus: plain SQL only, no VARIANT anywhere.
const CORPUS: &[&str] = &[
    // ClickBench-like: string group-bys, string equalities, distinct counts.
    "SELECT count(*) FROM t",
    "SELECT color, count(*) FROM t GROUP BY color ORDER BY color",
    "SELECT user_name, count(*) AS c FROM t GROUP BY user_name ORDER BY c DESC, user_name LIMIT 10",
    "SELECT note, count(*) FROM t GROUP BY note ORDER BY note NULLS FIRST",
    "SELECT count(*) FROM t WHERE color = 'red'",
    "SELECT count(*) FROM t WHERE user_name = 'user_17' AND color <> 'blue'",
    "SELECT k, count(*) FROM t WHERE note = 'note 3' GROUP BY k ORDER BY k LIMIT 5",
    "SELECT count(DISTINCT user_name) FROM t",
    "SELECT k, count(DISTINCT user_name) AS n FROM t GROUP BY k ORDER BY k LIMIT 5",
    "SELECT color, count(DISTINCT user_name), count(*) FROM t GROUP BY color ORDER BY color",
    "SELECT color, count(DISTINCT k) FROM t GROUP BY color ORDER BY color",
    "SELECT count(*) FROM t WHERE user_name LIKE '%99%'",
    "SELECT min(user_name), max(user_name), min(note) FROM t",
    "SELECT k, count(*) FROM t GROUP BY k HAVING count(*) > 1399 ORDER BY k LIMIT 5",
    // Dates and times, with and without a zone.
    "SELECT EXTRACT(HOUR FROM ts) AS h, count(*) FROM t GROUP BY h ORDER BY h",
    "SELECT date_part('year', ts), date_part('month', ts), count(*) FROM t GROUP BY 1, 2 ORDER BY 1, 2",
    "SELECT date_part('hour', ts_utc) AS h, date_part('minute', ts_utc) AS mi, count(*) FROM t GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 5",
    "SELECT EXTRACT(DAY FROM ts_utc AT TIME ZONE 'Europe/Berlin') AS d, count(*) FROM t GROUP BY d ORDER BY d LIMIT 5",
    "SELECT date_trunc('day', ts) AS d, sum(amount) FROM t GROUP BY d ORDER BY d LIMIT 5",
    // TPC-H-like: aggregates, joins, subqueries.
    "SELECT color, sum(amount), avg(price), count(*) FROM t \
     WHERE ts < to_timestamp_micros(1800000000000000) GROUP BY color ORDER BY color",
    "SELECT c.status, sum(t.amount), count(*) FROM t JOIN c ON t.k = c.o_id GROUP BY c.status ORDER BY 1",
    "SELECT count(*) FROM t WHERE k IN (SELECT o_id FROM c WHERE status = 'F')",
    "SELECT c.cust, count(*) FROM c WHERE EXISTS (SELECT 1 FROM t WHERE t.k = c.o_id AND t.color = 'red') \
     GROUP BY c.cust ORDER BY c.cust",
    "SELECT status, count(DISTINCT cust), max(total) FROM c GROUP BY status ORDER BY status",
    "SELECT id, price FROM t ORDER BY price DESC LIMIT 5",
    "SELECT id, row_number() OVER (PARTITION BY color ORDER BY id) AS rn FROM t WHERE id < 20 ORDER BY id",
    // Strings and the functions df-variant wraps to take a VARIANT.
    "SELECT upper(color), lower(user_name), length(note), concat(color, '-', k), \
     coalesce(note, color), nvl(note, 'none'), nvl2(note, 1, 0), substr(user_name, 2, 3) \
     FROM t WHERE id <= 5 ORDER BY id",
    "SELECT color || '/' || note AS s FROM t WHERE id BETWEEN 10 AND 14 UNION ALL SELECT 'x' ORDER BY s",
    // A memory table.
    "SELECT fruit, count(*) FROM m GROUP BY fruit ORDER BY fruit",
    "SELECT tag, count(DISTINCT fruit) FROM m GROUP BY tag ORDER BY tag NULLS FIRST",
    "SELECT id FROM m WHERE fruit = 'a string longer than twelve' OR tag = 'b' ORDER BY id",
];

/// What a session makes of one query, for comparison.
#[derive(Debug, PartialEq)]
struct Seen {
    explain: String,
    functions: Vec<String>,
    answer: Vec<String>,
}

/// The name of the type behind a function (`DatePartFunc`, `Count`) from its
/// `Debug` text.
fn implementation(debug: &str) -> String {
    debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The implementation behind every function call of `plan`, seen through
/// df-variant's coercing wrappers of `coalesce`, `nvl` and the string
/// functions: they must exist for SQL planning to accept a VARIANT argument,
/// and they leave every call without one to DataFusion's function.
fn functions(plan: &LogicalPlan) -> Vec<String> {
    let mut found = Vec::new();
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            e.apply(|e| {
                match e {
                    Expr::ScalarFunction(call) => {
                        let f = df_variant::functions::unwrapped(&call.func);
                        found.push(format!(
                            "{}: {}",
                            f.name(),
                            implementation(&format!("{:?}", f.inner()))
                        ));
                    }
                    Expr::AggregateFunction(call) => found.push(format!(
                        "{}: {}",
                        call.func.name(),
                        implementation(&format!("{:?}", call.func.inner()))
                    )),
                    _ => {}
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })
    .unwrap();
    found
}

async fn seen(ctx: &SessionContext, q: &str) -> Result<Seen> {
    let explain = ctx.sql(&format!("EXPLAIN {q}")).await?.collect().await?;
    let plan = ctx.sql(q).await?.into_optimized_plan()?;
    let batches = ctx.sql(q).await?.collect().await?;
    // Rows in order where the query orders them; sorted, so that a query
    // without ORDER BY compares too.
    let mut answer: Vec<String> = pretty_format_batches(&batches)?
        .to_string()
        .lines()
        .map(str::to_string)
        .collect();
    if !q.contains("ORDER BY") {
        answer.sort();
    }
    Ok(Seen {
        explain: pretty_format_batches(&explain)?.to_string(),
        functions: functions(&plan),
        answer,
    })
}

/// The row-group sizes of the Parquet file `path`.
fn row_groups(path: &std::path::Path) -> Vec<i64> {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    reader
        .metadata()
        .row_groups()
        .iter()
        .map(datafusion::parquet::file::metadata::RowGroupMetaData::num_rows)
        .collect()
}

/// Every way the session of `other` differs from a plain one over the
/// corpus, `COPY` to Parquet included (empty: none).
async fn differences(data: &Data, other: SessionStateBuilder) -> Result<Vec<String>> {
    let base = SessionContext::new_with_state(plain().build());
    let other = SessionContext::new_with_state(other.build());
    register(&base, data).await?;
    register(&other, data).await?;
    let mut found = Vec::new();
    for q in CORPUS {
        let (a, b) = (seen(&base, q).await?, seen(&other, q).await?);
        if a.explain != b.explain {
            found.push(format!(
                "{q}\n  EXPLAIN differs:\n{}\n  ---\n{}",
                a.explain, b.explain
            ));
        }
        if a.functions != b.functions {
            found.push(format!(
                "{q}\n  functions differ: {:?} / {:?}",
                a.functions, b.functions
            ));
        }
        if a.answer != b.answer {
            found.push(format!(
                "{q}\n  answers differ:\n{}\n  ---\n{}",
                a.answer.join("\n"),
                b.answer.join("\n")
            ));
        }
    }
    // COPY to Parquet: the same plan, and files with the same row groups.
    let mut written = Vec::new();
    for (name, ctx) in [("base", &base), ("other", &other)] {
        let out = data.dir.join(format!("copy_{name}.parquet"));
        let copy = |to: &str| format!("COPY (SELECT * FROM t) TO '{to}' STORED AS PARQUET");
        let explain = ctx
            .sql(&format!("EXPLAIN {}", copy("out.parquet")))
            .await?
            .collect()
            .await?;
        ctx.sql(&copy(&out.display().to_string()))
            .await?
            .collect()
            .await?;
        written.push((
            pretty_format_batches(&explain)?.to_string(),
            row_groups(&out),
        ));
    }
    if written[0] != written[1] {
        found.push(format!(
            "COPY to Parquet differs: {:?} / {:?}",
            written[0], written[1]
        ));
    }
    Ok(found)
}

#[tokio::test]
async fn with_variant_plans_and_answers_plain_sql_as_datafusion_does() -> Result<()> {
    let data = data("invariance").await?;
    let found = differences(&data, with_variant()).await?;
    assert!(
        found.is_empty(),
        "with_variant changed {} plain queries:\n{}",
        found.len(),
        found.join("\n\n")
    );
    Ok(())
}

/// Each engine-wide piece that used to be on the default path, installed
/// alone: the corpus must notice it, so that putting one back into
/// `with_variant` fails the test above.
#[tokio::test]
async fn the_corpus_notices_each_engine_wide_piece() -> Result<()> {
    use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
    use df_variant::accel;
    let data = data("pieces").await?;
    let rule = |r: Arc<dyn datafusion::physical_optimizer::PhysicalOptimizerRule + Send + Sync>| {
        with_variant().with_physical_optimizer_rule(r)
    };
    let mut date_part = with_variant().with_analyzer_rule(Arc::new(accel::FastDatePartSwap));
    date_part
        .scalar_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(ScalarUDF::from(accel::FastDatePart::default())));
    let mut count = with_variant();
    count
        .aggregate_functions()
        .get_or_insert_with(Vec::new)
        .push(Arc::new(AggregateUDF::from(accel::FastCount::default())));
    let rows = df_variant::with_variant(
        SessionStateBuilder::new()
            .with_config(config().set_usize(
                "datafusion.execution.parquet.max_row_group_size",
                accel::ROW_GROUP_ROWS,
            ))
            .with_default_features(),
    );
    let pieces: Vec<(&str, SessionStateBuilder)> = vec![
        ("StringGroupCount", rule(Arc::new(accel::StringGroupCount))),
        ("StringViewFilter", rule(Arc::new(accel::StringViewFilter))),
        (
            "PartitionDistinctCount",
            rule(Arc::new(accel::PartitionDistinctCount)),
        ),
        ("FastDatePart", date_part),
        ("FastCount", count),
        ("ROW_GROUP_ROWS", rows),
    ];
    for (piece, builder) in pieces {
        let found = differences(&data, builder).await?;
        assert!(!found.is_empty(), "the corpus does not notice {piece}");
    }
    Ok(())
}

/// An analyzer rule of the embedder's, added before `with_variant` (or after),
/// still runs.
#[tokio::test]
async fn an_embedders_analyzer_rule_added_before_with_variant_runs() -> Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    #[derive(Debug, Default)]
    struct Counting(Arc<AtomicUsize>);
    impl datafusion::optimizer::AnalyzerRule for Counting {
        fn analyze(
            &self,
            plan: LogicalPlan,
            _config: &datafusion::common::config::ConfigOptions,
        ) -> Result<LogicalPlan> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(plan)
        }
        fn name(&self) -> &'static str {
            "counting"
        }
    }
    let (before, after) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let builder = plain().with_analyzer_rule(Arc::new(Counting(Arc::clone(&before))));
    let state = df_variant::with_variant(builder)
        .with_analyzer_rule(Arc::new(Counting(Arc::clone(&after))))
        .build();
    let ctx = SessionContext::new_with_state(state);
    ctx.sql("SELECT 1").await?.collect().await?;
    assert_eq!(
        (
            before.load(Ordering::Relaxed),
            after.load(Ordering::Relaxed)
        ),
        (1, 1)
    );
    Ok(())
}
