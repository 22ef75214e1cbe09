//! Rule tests at the rule level, the way DataFusion tests its physical
//! optimizer: the plan before `VariantGetPushdown` (every other rule applied)
//! and after it, pinned as text, plus the cases where it must not fire. The
//! per-file decisions (an array step, an unshredded file, a float leaf, an
//! inexact conversion) are checked where they are made, on the scan's metrics.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::{ExecutionPlan, collect, displayable};
use datafusion::prelude::SessionContext;
use df_variant::optimizer::{VariantGetPushdown, VariantWriteRule};

/// A directory with a shredded, an unshredded and a plain (no VARIANT) table, in
/// files of 10 row groups.
struct Fixture {
    dir: PathBuf,
    ctx: SessionContext,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn sql(ctx: &SessionContext, q: &str) -> Result<()> {
    ctx.sql(q).await?.collect().await?;
    Ok(())
}

async fn fixture(name: &str) -> Result<Fixture> {
    fixture_in(name, df_variant::variant_context()).await
}

/// The fixture in a session with the opt-in speedups of plain plans
/// (`df_variant::accel`), whose rules the tests below check.
async fn accel_fixture(name: &str) -> Result<Fixture> {
    fixture_in(name, df_variant::accel::accelerated_context()).await
}

async fn fixture_in(name: &str, ctx: SessionContext) -> Result<Fixture> {
    let dir = std::env::temp_dir().join(format!("df_variant_rules_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    sql(
        &ctx,
        "CREATE TABLE src AS SELECT CAST(i AS BIGINT) AS id, '$.a' AS p, \
         parse_json('{\"a\": ' || i || ', \"f\": ' || i || '.5, \"l\": [' || i || ']}') AS v \
         FROM generate_series(1, 1000) t(i)",
    )
    .await?;
    for (table, shredding) in [("shredded", "auto"), ("unshredded", "off")] {
        let file = dir.join(format!("{table}.parquet"));
        sql(
            &ctx,
            &format!(
                "COPY (SELECT id, p, v FROM src) TO '{}' STORED AS PARQUET \
                 OPTIONS ('variant.shredding' '{shredding}', max_row_group_size 100)",
                file.display()
            ),
        )
        .await?;
        register(&ctx, table, &file).await?;
    }
    let plain = dir.join("plain.parquet");
    sql(
        &ctx,
        &format!(
            "COPY (SELECT id FROM src) TO '{}' STORED AS PARQUET",
            plain.display()
        ),
    )
    .await?;
    register(&ctx, "plain", &plain).await?;
    Ok(Fixture { dir, ctx })
}

async fn register(ctx: &SessionContext, table: &str, file: &Path) -> Result<()> {
    sql(
        ctx,
        &format!(
            "CREATE EXTERNAL TABLE {table} STORED AS PARQUET LOCATION '{}'",
            file.display()
        ),
    )
    .await
}

/// The physical plan of `q` with every rule but `VariantGetPushdown`.
async fn before(f: &Fixture, q: &str) -> Result<Arc<dyn ExecutionPlan>> {
    let state = f.ctx.state();
    let rules: Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> = state
        .physical_optimizers()
        .iter()
        .filter(|r| r.name() != VariantGetPushdown.name())
        .cloned()
        .collect();
    let state = SessionStateBuilder::new_from_existing(state)
        .with_physical_optimizer_rules(rules)
        .build();
    let plan = state.create_logical_plan(q).await?;
    state.create_physical_plan(&plan).await
}

/// The plan as text, with the fixture's directory and the file groups' byte
/// ranges replaced.
fn text(f: &Fixture, plan: &Arc<dyn ExecutionPlan>) -> String {
    let s = displayable(plan.as_ref()).indent(true).to_string();
    let dir = f.dir.display().to_string();
    let s = s.replace(dir.trim_start_matches('/'), "DIR");
    s.lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(before, after)` plans of `q`.
async fn plans(f: &Fixture, q: &str) -> Result<(String, String)> {
    let plan = before(f, q).await?;
    let options = Arc::clone(f.ctx.state().config_options());
    let after = VariantGetPushdown.optimize(Arc::clone(&plan), &options)?;
    Ok((text(f, &plan), text(f, &after)))
}

#[tokio::test]
async fn pushdown_wraps_a_scan_that_extracts_and_hands_it_the_filter() -> Result<()> {
    let f = fixture("fires").await?;
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 1").await?;
    let (b, a) = plans(&f, "SELECT id FROM shredded WHERE v:a::bigint > 990").await?;
    assert!(!b.contains("VariantScanExec"), "{b}");
    let expected_before = "\
FilterExec: raise_variant_get_error(__datafusion_extracted_1@0) > 990, projection=[id@1]
  DataSourceExec: file_groups={1 group: [[DIR/shredded.parquet]]}, projection=[variant_get_or_error(v@2, $.a, bigint) as __datafusion_extracted_1, id], file_type=parquet";
    assert_eq!(b, expected_before, "before:\n{b}");
    let expected_after = "\
FilterExec: raise_variant_get_error(__datafusion_extracted_1@0) > 990, projection=[id@1]
  VariantScanExec: extractions=[v: $.a AS BIGINT], pruning_predicate=[raise_variant_get_error(variant_get_or_error(v@2, $.a, bigint)) > 990]
    DataSourceExec: file_groups={1 group: [[DIR/shredded.parquet]]}, projection=[variant_get_or_error(v@2, $.a, bigint) as __datafusion_extracted_1, id], file_type=parquet";
    assert_eq!(a, expected_after, "after:\n{a}");
    Ok(())
}

#[tokio::test]
async fn pushdown_pushes_nothing_where_nothing_is_extracted() -> Result<()> {
    let f = fixture("not").await?;
    // No VARIANT column in the scan: the plan is left alone.
    let q = "SELECT id FROM plain WHERE id > 5";
    let (b, a) = plans(&f, q).await?;
    assert!(!a.contains("VariantScanExec"), "{q}:\n{a}");
    assert_eq!(a, b, "{q}: the plan changed");
    for q in [
        // A non-literal path stays above the scan.
        "SELECT variant_get(v, p, 'bigint') FROM shredded",
        // The whole value.
        "SELECT to_json(v) FROM shredded",
    ] {
        // The scan is wrapped (the node carries its adapter), with nothing to push.
        let (_, a) = plans(&f, q).await?;
        assert!(a.contains("VariantScanExec: extractions=[]\n"), "{q}:\n{a}");
    }
    sql(&f.ctx, "SET variant.pushdown = false").await?;
    let (_, a) = plans(&f, "SELECT id FROM shredded WHERE v:a::bigint > 5").await?;
    assert!(
        a.contains("VariantScanExec: extractions=[], pushdown=off\n"),
        "pushdown off:\n{a}"
    );
    Ok(())
}

#[tokio::test]
async fn pushdown_rule_is_idempotent() -> Result<()> {
    let f = fixture("twice").await?;
    for q in [
        "SELECT id FROM shredded WHERE v:a::bigint > 990",
        "SELECT to_json(v) FROM unshredded",
    ] {
        let plan = before(&f, q).await?;
        let options = Arc::clone(f.ctx.state().config_options());
        let once = VariantGetPushdown.optimize(plan, &options)?;
        let twice = VariantGetPushdown.optimize(Arc::clone(&once), &options)?;
        assert_eq!(text(&f, &once), text(&f, &twice), "{q}");
    }
    Ok(())
}

#[tokio::test]
async fn write_rule_fires_only_on_parquet_sinks_with_variant_columns() -> Result<()> {
    let f = fixture("write").await?;
    let out = f.dir.join("out");
    for (q, fires) in [
        (
            format!("COPY (SELECT v FROM src) TO '{}/a.parquet'", out.display()),
            true,
        ),
        (
            format!("COPY (SELECT id FROM src) TO '{}/b.parquet'", out.display()),
            false,
        ),
        (
            format!(
                "COPY (SELECT to_json(v) AS j FROM src) TO '{}/c.csv'",
                out.display()
            ),
            false,
        ),
    ] {
        let state = f.ctx.state();
        let logical = state.create_logical_plan(&q).await?;
        let plan = state.create_physical_plan(&logical).await?;
        let sink = text(&f, &plan);
        assert_eq!(sink.contains("VariantParquetSink"), fires, "{q}:\n{sink}");
        // Applying the rule again changes nothing.
        let again = VariantWriteRule.optimize(Arc::clone(&plan), state.config_options())?;
        assert_eq!(text(&f, &again), sink, "{q}");
    }
    Ok(())
}

/// Sums a metric over the `VariantScanExec` nodes of an executed plan (also used
/// by the pushdown tests, for `pruning_errors`).
pub(crate) fn scan_metric(plan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    let own = if plan.name() == "VariantScanExec" {
        plan.metrics()
            .and_then(|m| m.sum_by_name(name))
            .map_or(0, |v| v.as_usize())
    } else {
        0
    };
    own + plan
        .children()
        .into_iter()
        .map(|c| scan_metric(c, name))
        .sum::<usize>()
}

/// Runs `q` and returns (rows, row groups pruned, extractions pushed,
/// extractions that fell back).
async fn scan(f: &Fixture, q: &str) -> Result<(usize, usize, usize, usize)> {
    let state = f.ctx.state();
    let logical = state.create_logical_plan(q).await?;
    let plan = state.create_physical_plan(&logical).await?;
    let batches = collect(Arc::clone(&plan), f.ctx.task_ctx()).await?;
    let rows = batches
        .iter()
        .map(arrow::array::RecordBatch::num_rows)
        .sum();
    assert_eq!(scan_metric(&plan, "pruning_errors"), 0, "{q}");
    Ok((
        rows,
        scan_metric(&plan, "row_groups_pruned"),
        scan_metric(&plan, "extractions_pushed"),
        scan_metric(&plan, "extractions_fallback"),
    ))
}

#[tokio::test]
async fn per_file_decisions_prune_only_where_sound() -> Result<()> {
    let f = fixture("files").await?;
    // Control: an integer leaf read as bigint prunes 9 of 10 row groups.
    let (rows, pruned, pushed, _) =
        scan(&f, "SELECT id FROM shredded WHERE v:a::bigint > 990").await?;
    assert_eq!((rows, pruned), (10, 9));
    assert!(pushed > 0);
    // Each case gives the rows of the full read and prunes nothing.
    for (q, pushes) in [
        // Unshredded file: the whole value is read.
        ("SELECT id FROM unshredded WHERE v:a::bigint > 990", false),
        // An array step: not answered from leaves.
        ("SELECT id FROM shredded WHERE v:l[0]::bigint > 990", false),
        // `$`: a Variant null is not a missing field, which leaves cannot tell.
        (
            "SELECT id FROM shredded WHERE v::string > '{\"a\":990'",
            false,
        ),
        // A float leaf: statistics leave NaN out, so no pruning.
        ("SELECT id FROM shredded WHERE v:f::double > 990.0", true),
        // An inexact conversion (bigint leaf read as string orders differently).
        ("SELECT id FROM shredded WHERE v:a::string > '990'", true),
    ] {
        sql(&f.ctx, "SET variant.pushdown = false").await?;
        let (full, ..) = scan(&f, q).await?;
        sql(&f.ctx, "SET variant.pushdown = true").await?;
        let (rows, pruned, pushed, fallback) = scan(&f, q).await?;
        assert!(full > 0, "{q}");
        assert_eq!(rows, full, "{q}");
        assert_eq!(pruned, 0, "{q}");
        if !pushes {
            assert_eq!(pushed, 0, "{q}");
            // Where the scan was wrapped, the extraction fell back to the value.
            assert!(fallback > 0 || q.contains("v::"), "{q}");
        }
    }
    Ok(())
}

#[tokio::test]
async fn element_tests_prune_only_where_sound() -> Result<()> {
    let f = fixture("elements").await?;
    // Control: `l` is `[i]`, its element leaf (int) read as bigint prunes 9 of
    // 10 row groups.
    let (rows, pruned, ..) = scan(
        &f,
        "SELECT id FROM shredded WHERE array_has(v:l[*]::array<bigint>, 995)",
    )
    .await?;
    assert_eq!((rows, pruned), (1, 9));
    let (rows, pruned, ..) = scan(
        &f,
        "SELECT id FROM shredded WHERE array_contains(try_variant_get(v, '$.l[*]', 'bigint'), 995)",
    )
    .await?;
    assert_eq!((rows, pruned), (1, 9));
    // Each case gives the rows of the full read and prunes nothing.
    for q in [
        // Unshredded file: no element leaf.
        "SELECT id FROM unshredded WHERE array_has(v:l[*]::array<bigint>, 995)",
        // An inexact conversion: bigint elements as strings order differently.
        "SELECT id FROM shredded WHERE array_has(v:l[*]::array<string>, '995')",
        // A narrowing conversion (the leaf is int) can fail.
        "SELECT id FROM shredded WHERE array_has(try_variant_get(v, '$.l[*]', 'tinyint'), CAST(5 AS TINYINT))",
        // Not a wildcard: the array as a value.
        "SELECT id FROM shredded WHERE array_has(variant_get(v, '$.l', 'array<bigint>'), 995)",
        // Not a literal.
        "SELECT id FROM shredded WHERE array_has(v:l[*]::array<bigint>, id)",
        // A path column.
        "SELECT id FROM shredded WHERE \
         array_has(variant_get(variant_get(v, replace(p, '.a', '.l[*]')), '$', 'array<bigint>'), 995)",
    ] {
        sql(&f.ctx, "SET variant.pushdown = false").await?;
        let (full, ..) = scan(&f, q).await?;
        sql(&f.ctx, "SET variant.pushdown = true").await?;
        let (rows, pruned, ..) = scan(&f, q).await?;
        assert!(full > 0, "{q}");
        assert_eq!(rows, full, "{q}");
        assert_eq!(pruned, 0, "{q}");
    }
    Ok(())
}

/// Runs `q` and returns its rows as text and the summed `passed_rows` of its
/// `StringGroupCountExec` nodes (`None` when the plan has none).
async fn counted(ctx: &SessionContext, q: &str) -> Result<(String, Option<usize>)> {
    let plan = ctx.sql(q).await?.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let mut passed = None;
    let mut stack = vec![Arc::clone(&plan)];
    while let Some(node) = stack.pop() {
        if node.name() == "StringGroupCountExec" {
            let rows = node
                .metrics()
                .and_then(|m| m.sum_by_name("passed_rows"))
                .map_or(0, |v| v.as_usize());
            *passed.get_or_insert(0) += rows;
        }
        stack.extend(node.children().into_iter().cloned());
    }
    let text = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
    Ok((text, passed))
}

/// Whether the physical plan of `q`, as text, holds `needle`.
async fn plan_has(ctx: &SessionContext, q: &str, needle: &str) -> Result<bool> {
    let plan = ctx.sql(q).await?.create_physical_plan().await?;
    Ok(displayable(plan.as_ref())
        .indent(true)
        .to_string()
        .contains(needle))
}

/// Whether the physical plan of `q` holds a `StringGroupCountExec`.
async fn fires(ctx: &SessionContext, q: &str) -> Result<bool> {
    plan_has(ctx, q, "StringGroupCountExec").await
}

#[tokio::test]
async fn string_group_count_fires_only_on_a_partial_count_of_one_string() -> Result<()> {
    let f = accel_fixture("group_count").await?;
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 2").await?;
    sql(
        &f.ctx,
        "CREATE TABLE s AS SELECT arrow_cast('k' || (i % 3), 'Utf8View') AS sv, \
         'k' || (i % 3) AS s8, i FROM generate_series(1, 100) t(i)",
    )
    .await?;
    for q in [
        "SELECT sv, count(*) FROM s GROUP BY sv",
        "SELECT sv, count(1), count(*) FROM s GROUP BY sv",
        "SELECT DISTINCT sv FROM s",
        "SELECT v:a::string AS a, count(*) FROM shredded GROUP BY a",
    ] {
        assert!(fires(&f.ctx, q).await?, "must fire: {q}");
    }
    for q in [
        // Utf8, not views.
        "SELECT s8, count(*) FROM s GROUP BY s8",
        // Aggregates other than a count of rows.
        "SELECT sv, count(i) FROM s GROUP BY sv",
        "SELECT sv, count(DISTINCT i) FROM s GROUP BY sv",
        "SELECT sv, count(*) FILTER (WHERE i > 5) FROM s GROUP BY sv",
        "SELECT sv, count(*), sum(i) FROM s GROUP BY sv",
        // Two groups, a grouping set, a non-string group.
        "SELECT sv, s8, count(*) FROM s GROUP BY sv, s8",
        "SELECT sv, count(*) FROM s GROUP BY ROLLUP (sv)",
        "SELECT i, count(*) FROM s GROUP BY i",
    ] {
        assert!(!fires(&f.ctx, q).await?, "must not fire: {q}");
    }
    // One partition: a single aggregate, not a partial one.
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 1").await?;
    let q = "SELECT v:a::string AS a, count(*) FROM shredded GROUP BY a";
    assert!(!fires(&f.ctx, q).await?, "must not fire: {q}");
    // Off.
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 2").await?;
    sql(&f.ctx, "SET variant.string_group_count = false").await?;
    assert!(!fires(&f.ctx, "SELECT sv, count(*) FROM s GROUP BY sv").await?);
    Ok(())
}

/// Rule on against rule off over strings of every kind: long and inline, empty
/// and NULL, few and many per batch; in memory (each row its own view) and
/// from Parquet dictionary pages (equal strings, equal views), with more groups
/// than a partition keeps before it flushes.
#[tokio::test]
async fn string_group_count_answers_as_datafusion_does() -> Result<()> {
    let f = accel_fixture("group_count_answers").await?;
    let ctx = &f.ctx;
    sql(ctx, "SET datafusion.execution.target_partitions = 2").await?;
    sql(
        ctx,
        "CREATE TABLE m AS SELECT \
         arrow_cast(CASE WHEN i % 9 = 0 THEN NULL \
           ELSE 'a group name longer than twelve bytes ' || (i % 10) END, 'Utf8View') AS low, \
         arrow_cast('g' || (i / 16), 'Utf8View') AS mid, \
         arrow_cast(CASE WHEN i % 4 = 0 THEN '' ELSE 'k' || (i % 3) END, 'Utf8View') AS short \
         FROM generate_series(1, 600000) t(i)",
    )
    .await?;
    let file = f.dir.join("strings.parquet");
    sql(
        ctx,
        &format!("COPY m TO '{}' STORED AS PARQUET", file.display()),
    )
    .await?;
    register(ctx, "p", &file).await?;
    for (table, column, passes) in [
        ("m", "low", true),
        ("m", "short", false),
        ("p", "low", false),
        ("p", "mid", false),
        ("p", "short", false),
    ] {
        let q = format!(
            "SELECT {column} AS g, count(*) AS n, count(1) AS m FROM {table} \
             GROUP BY g ORDER BY g NULLS FIRST"
        );
        sql(ctx, "SET variant.string_group_count = true").await?;
        let (on, passed) = counted(ctx, &q).await?;
        sql(ctx, "SET variant.string_group_count = false").await?;
        let (off, none) = counted(ctx, &q).await?;
        assert_eq!(on, off, "{q}");
        assert_eq!(none, None, "{q}: the rule fired while off");
        let passed = passed.unwrap_or_else(|| panic!("{q}: the rule did not fire"));
        assert_eq!(passed > 0, passes, "{q}: {passed} rows passed on");
    }
    Ok(())
}

/// Whether the physical plan of `q` counts a `DISTINCT` per partition of its
/// argument (`PartitionDistinctCount`).
async fn partitions_distinct(ctx: &SessionContext, q: &str) -> Result<bool> {
    plan_has(ctx, q, "count_distinct_partitioned(").await
}

#[tokio::test]
async fn partition_distinct_count_fires_only_on_one_distinct_count_of_a_string_column() -> Result<()>
{
    let f = accel_fixture("distinct_partition").await?;
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 2").await?;
    sql(
        &f.ctx,
        "CREATE TABLE s AS SELECT arrow_cast('k' || (i % 3), 'Utf8View') AS sv, \
         arrow_cast('u' || (i % 17), 'Utf8View') AS uv, 'u' || (i % 17) AS u8, i \
         FROM generate_series(1, 100) t(i)",
    )
    .await?;
    for q in [
        "SELECT sv, count(*), count(DISTINCT uv) FROM s GROUP BY sv",
        "SELECT sv, count(*), count(DISTINCT uv), sum(i), avg(i) FROM s GROUP BY sv",
        "SELECT sv, count(DISTINCT uv) FILTER (WHERE i > 5) FROM s GROUP BY sv",
        "SELECT sv, i % 2 AS p, count(*), count(DISTINCT uv) FROM s GROUP BY sv, p",
        "SELECT v:a::string AS a, count(*), count(DISTINCT v:f::string) FROM shredded GROUP BY a",
    ] {
        assert!(partitions_distinct(&f.ctx, q).await?, "must fire: {q}");
    }
    for q in [
        // DataFusion's SingleDistinctToGroupBy makes a DISTINCT alone (or
        // beside sum, min, max) two GROUP BYs without DISTINCT.
        "SELECT sv, count(DISTINCT uv) FROM s GROUP BY sv",
        // No GROUP BY, Utf8 strings, an integer, an expression.
        "SELECT count(*), count(DISTINCT uv) FROM s",
        "SELECT sv, count(*), count(DISTINCT u8) FROM s GROUP BY sv",
        "SELECT sv, count(*), count(DISTINCT i) FROM s GROUP BY sv",
        "SELECT sv, count(*), count(DISTINCT arrow_cast(lower(u8), 'Utf8View')) FROM s GROUP BY sv",
        // Two DISTINCT aggregates, a grouping set.
        "SELECT sv, count(DISTINCT uv), count(DISTINCT sv) FROM s GROUP BY sv",
        "SELECT sv, count(*), count(DISTINCT uv) FROM s GROUP BY ROLLUP (sv)",
        // An aggregate that needs its input in order.
        "SELECT sv, count(DISTINCT uv), first_value(i ORDER BY i DESC) FROM s GROUP BY sv",
    ] {
        assert!(!partitions_distinct(&f.ctx, q).await?, "must not fire: {q}");
    }
    let q = "SELECT sv, count(*), count(DISTINCT uv) FROM s GROUP BY sv";
    assert!(partitions_distinct(&f.ctx, q).await?, "must fire: {q}");
    // One partition: a single aggregate, not two phases.
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 1").await?;
    assert!(!partitions_distinct(&f.ctx, q).await?, "must not fire: {q}");
    // Off.
    sql(&f.ctx, "SET datafusion.execution.target_partitions = 2").await?;
    sql(&f.ctx, "SET variant.partition_distinct_count = false").await?;
    assert!(!partitions_distinct(&f.ctx, q).await?);
    Ok(())
}

/// Rule on against rule off, and the rule's plan run from its serialized
/// bytes, over many partitions and groups; then a memory limit that makes the
/// partial aggregate pass its groups on early: an error naming the setting,
/// never a count that is too high.
#[tokio::test]
async fn partition_distinct_count_answers_as_datafusion_does() -> Result<()> {
    let f = accel_fixture("distinct_partition_answers").await?;
    let ctx = &f.ctx;
    sql(
        ctx,
        "CREATE TABLE m AS SELECT \
         arrow_cast('group ' || (i % 13), 'Utf8View') AS g, \
         arrow_cast(CASE WHEN i % 11 = 0 THEN NULL WHEN i % 7 = 0 THEN 'u' || (i % 5) \
           ELSE 'did:plc:a-long-user-identifier-' || (i * 31 % 40009) END, 'Utf8View') AS u, i \
         FROM generate_series(1, 200000) t(i)",
    )
    .await?;
    let run = |q: &'static str, partitions: usize, on: bool| async move {
        sql(
            ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await?;
        sql(ctx, &format!("SET variant.partition_distinct_count = {on}")).await?;
        let plan = ctx.sql(q).await?.create_physical_plan().await?;
        let text = displayable(plan.as_ref()).indent(true).to_string();
        assert_eq!(
            text.contains("count_distinct_partitioned("),
            on && partitions > 1,
            "{q}"
        );
        let shipped = df_variant::codec::plan_from_bytes(
            &df_variant::codec::plan_to_bytes(Arc::clone(&plan))?,
            &ctx.task_ctx(),
        )?;
        let here = collect(plan, ctx.task_ctx()).await?;
        let there = collect(shipped, ctx.task_ctx()).await?;
        let here = arrow::util::pretty::pretty_format_batches(&here)?.to_string();
        let there = arrow::util::pretty::pretty_format_batches(&there)?.to_string();
        assert_eq!(here, there, "{q}: serialized plan");
        Ok::<_, datafusion::error::DataFusionError>(here)
    };
    let q = "SELECT g, count(*) AS n, count(DISTINCT u) AS d, sum(i) AS s FROM m \
             GROUP BY g ORDER BY g";
    let filtered = "SELECT g, count(DISTINCT u) FILTER (WHERE i % 2 = 0) AS e FROM m \
                    GROUP BY g ORDER BY g";
    let mut expected = Vec::new();
    // Only our own bytes decode to the aggregate; anything else names it.
    {
        use datafusion_proto::physical_plan::PhysicalExtensionCodec;
        let codec = df_variant::codec::VariantPhysicalCodec::default();
        let err = codec
            .try_decode_udaf("my_count", b"not ours")
            .expect_err("unknown bytes")
            .to_string();
        assert!(
            err.contains("does not know the aggregate function my_count"),
            "{err}"
        );
    }
    for q in [q, filtered] {
        expected.push(run(q, 2, false).await?);
        for partitions in [2, 3, 8] {
            let on = run(q, partitions, true).await?;
            assert_eq!(Some(&on), expected.last(), "{q}: {partitions} partitions");
        }
    }
    // Under a memory limit, a partial aggregate of more groups than a batch
    // passes them on early: an error naming the setting, never a count that
    // is too high.
    sql(
        ctx,
        "CREATE TABLE w AS SELECT arrow_cast('group ' || (i % 20000), 'Utf8View') AS g, \
         arrow_cast('did:plc:a-long-user-identifier-' || (i * 31 % 40009), 'Utf8View') AS u, i \
         FROM generate_series(1, 400000) t(i)",
    )
    .await?;
    let q = "SELECT count(*), sum(e) FROM (SELECT g, count(*) AS n, count(DISTINCT u) AS e \
             FROM w GROUP BY g)";
    sql(ctx, "SET variant.partition_distinct_count = false").await?;
    let batches = ctx.sql(q).await?.collect().await?;
    let expected = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
    let limited = SessionContext::new_with_state(
        df_variant::accel::with_accelerations(df_variant::variant_state_builder(
            datafusion::prelude::SessionConfig::new().with_target_partitions(2),
            df_variant::memory_limited_runtime(8 * 1024 * 1024)?,
        ))
        .build(),
    );
    limited.register_table("w", ctx.table_provider("w").await?)?;
    // A session with a memory limit starts with the rule off.
    assert!(
        !partitions_distinct(&limited, q).await?,
        "on under a memory limit"
    );
    // Which operator runs out of memory first depends on scheduling: either
    // way an error (the unit tests pin the partial aggregate's own), or else
    // the right answer, with the rule on and off.
    for on in [true, false] {
        sql(
            &limited,
            &format!("SET variant.partition_distinct_count = {on}"),
        )
        .await?;
        match limited.sql(q).await?.collect().await {
            Ok(batches) => {
                let text = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
                assert_eq!(text, expected, "rule {on}");
            }
            Err(e) => assert!(
                e.to_string().contains("Resources exhausted"),
                "rule {on}: {e}"
            ),
        }
    }
    Ok(())
}
