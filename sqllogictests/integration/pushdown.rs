//! Differential test of the shredded pushdown: random documents written shredded
//! (inferred), partially shredded (an explicit schema covering some paths) and
//! unshredded, with small row groups and pages whose values straddle the
//! predicates' literals (the main numeric field is clustered), plus one table
//! holding all three layouts. Random queries with random predicates (=, <, >,
//! BETWEEN, IN, IS [NOT] NULL, AND, OR, NOT; typed `variant_get` and
//! `try_variant_get`; array indexes and wildcards through a random array of
//! mixed elements, which read the array's subtree; `array_has` on an array
//! clustered by id, which prunes on its element leaf) must give identical answers with `variant.pushdown` on and
//! off, with and without Parquet row filters, and identical to the unshredded
//! table. The pushdown must also have pruned something and pushed something.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::Result;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ROWS: usize = 2400;
const DATASETS: u64 = 3;
const QUERIES_PER_DATASET: usize = 100;

/// A document; `dirty` is the chance that a field has an unusual type (the
/// values then stay in the residual `value` and no row group with them prunes).
/// Every unusual value still converts to the queried type, so that `variant_get`
/// never fails (failing conversions are checked separately).
fn document(rng: &mut StdRng, id: usize, dirty: f64) -> Option<String> {
    if rng.random_bool(0.02) {
        return None;
    }
    if rng.random_bool(0.02) {
        return Some(
            ["5", "\"text\"", "[1,2]", "null", "true"][rng.random_range(0..5)].to_string(),
        );
    }
    let mut out = String::from("{");
    let field = |out: &mut String, name: &str, value: String| {
        if out.len() > 1 {
            out.push(',');
        }
        write!(out, "\"{name}\":{value}").unwrap();
    };
    // a: clustered integer.
    if !rng.random_bool(0.02) {
        let a = (id * 3) as i64;
        let value = if rng.random_bool(dirty) {
            match rng.random_range(0..4) {
                0 => format!("\"{a}\""),
                1 => format!("{a}.0"),
                2 => format!("{a}.25"),
                _ => "null".to_string(),
            }
        } else {
            a.to_string()
        };
        field(&mut out, "a", value);
    }
    // b: a few strings.
    if !rng.random_bool(0.05) {
        let value = if rng.random_bool(dirty) {
            rng.random_range(0..10).to_string()
        } else {
            format!(
                "\"{}\"",
                ["red", "green", "blue", "s1", "Zed"][rng.random_range(0..5)]
            )
        };
        field(&mut out, "b", value);
    }
    // c: an object {d: int, e: bool}, sometimes not an object.
    if !rng.random_bool(0.1) {
        let value = if rng.random_bool(dirty) {
            "\"flat\"".to_string()
        } else {
            let d = if rng.random_bool(dirty) {
                "\"x\"".to_string()
            } else {
                rng.random_range(0..100).to_string()
            };
            format!("{{\"d\":{d},\"e\":{}}}", rng.random_bool(0.5))
        };
        field(&mut out, "c", value);
    }
    // f: a decimal or a double.
    if rng.random_bool(0.7) {
        let value = if rng.random_bool(0.5) {
            format!("{}.5", rng.random_range(-50..50))
        } else {
            format!("{}e-1", rng.random_range(-500..500))
        };
        field(&mut out, "f", value);
    }
    // g: an array.
    if rng.random_bool(0.3) {
        field(&mut out, "g", "[1,\"two\",3]".to_string());
    }
    // t: an array of mostly strings, sometimes other elements (ints, objects,
    // nulls, nested arrays), sometimes not an array.
    if rng.random_bool(0.8) {
        let value = if rng.random_bool(dirty.max(0.02)) {
            "\"flat\"".to_string()
        } else {
            let n = rng.random_range(0..5);
            let items: Vec<String> = (0..n)
                .map(
                    |_| match rng.random_range(0..(if dirty > 0.0 { 10 } else { 6 })) {
                        0..=5 => format!("\"{}\"", ["x", "y", "z", "w"][rng.random_range(0..4)]),
                        6 => rng.random_range(0..9).to_string(),
                        7 => format!("{{\"k\":{}}}", rng.random_range(0..9)),
                        8 => "null".to_string(),
                        _ => "[\"x\"]".to_string(),
                    },
                )
                .collect();
            format!("[{}]", items.join(","))
        };
        field(&mut out, "t", value);
    }
    // u: an array of strings clustered by id (row groups prune on its element
    // leaf), with int elements and non-arrays in the dirty data.
    if rng.random_bool(0.9) {
        let value = if rng.random_bool(dirty / 2.0) {
            "\"flat\"".to_string()
        } else {
            let n = rng.random_range(0..3);
            let items: Vec<String> = (0..n)
                .map(|_| {
                    if rng.random_bool(dirty) {
                        rng.random_range(0..9).to_string()
                    } else {
                        format!("\"u{:02}\"", id / 150 + rng.random_range(0..2))
                    }
                })
                .collect();
            format!("[{}]", items.join(","))
        };
        field(&mut out, "u", value);
    }
    out.push('}');
    Some(out)
}

/// One random comparison on an extraction (or a plain column).
fn atom(rng: &mut StdRng) -> String {
    let n = rng.random_range(-10..(ROWS as i64 * 3 + 10));
    let m = n + rng.random_range(0..300);
    let small = rng.random_range(-5..105);
    let color = ["red", "green", "blue", "s1", "Zed", "nope"][rng.random_range(0..6)];
    let op = ["=", "<", "<=", ">", ">=", "<>"][rng.random_range(0..6)];
    match rng.random_range(0..22) {
        0 => format!("v:a::bigint {op} {n}"),
        1 => format!("v:a::bigint BETWEEN {n} AND {m}"),
        2 => format!("v:a::bigint IN ({n}, {m}, {})", n + 3),
        3 => "v:a::bigint IS NULL".to_string(),
        4 => "v:a::bigint IS NOT NULL".to_string(),
        5 => format!("variant_get(v, '$.a', 'bigint') {op} {n}"),
        6 => format!("try_variant_get(v, '$.a', 'int') {op} {n}"),
        7 => format!("v:b::string {op} '{color}'"),
        8 => format!("v:b::string IN ('{color}', 'red')"),
        9 => "v:b::string IS NULL".to_string(),
        10 => format!("try_variant_get(v, '$.c.d', 'int') {op} {small}"),
        11 => format!(
            "try_variant_get(v, '$.c.d', 'bigint') BETWEEN {small} AND {}",
            small + 20
        ),
        12 => format!(
            "try_variant_get(v, '$.c.e', 'boolean') = {}",
            rng.random_bool(0.5)
        ),
        13 => format!("id {op} {}", rng.random_range(0..ROWS)),
        14 => format!(
            "try_variant_get(v, '$.b', 'int') {op} {}",
            rng.random_range(0..10)
        ),
        15 => format!(
            "array_has(try_variant_get(v, '$.g[*]', 'string'), '{}')",
            ["two", "1", "x"][rng.random_range(0..3)]
        ),
        16 => format!(
            "array_has(v:t[*]::array<string>, '{}')",
            ["x", "y", "z", "3"][rng.random_range(0..4)]
        ),
        17 => format!(
            "v:t[{}]::string {op} '{}'",
            rng.random_range(0..3),
            ["x", "y", "z"][rng.random_range(0..3)]
        ),
        18 => format!("variant_array_length(v:t) {op} {}", rng.random_range(0..5)),
        // '3' is below every string element but equals an int element (kept in
        // the elements' residual) converted to a string.
        19 => format!(
            "array_has(v:u[*]::array<string>, '{}')",
            [format!("u{:02}", rng.random_range(0..18)), "3".into()][rng.random_range(0..2)]
        ),
        20 => format!(
            "array_contains(try_variant_get(v, '$.u[*]', 'string'), '{}')",
            [format!("u{:02}", rng.random_range(0..18)), "3".into()][rng.random_range(0..2)]
        ),
        _ => format!("v:f::double {op} {}", rng.random_range(-50..50)),
    }
}

fn predicate(rng: &mut StdRng, depth: usize) -> String {
    match rng.random_range(0..if depth > 1 { 1 } else { 5 }) {
        0 => atom(rng),
        1 | 2 => format!(
            "({} AND {})",
            predicate(rng, depth + 1),
            predicate(rng, depth + 1)
        ),
        3 => format!(
            "({} OR {})",
            predicate(rng, depth + 1),
            predicate(rng, depth + 1)
        ),
        _ => format!("NOT ({})", atom(rng)),
    }
}

fn query(rng: &mut StdRng, table: &str) -> String {
    let select = match rng.random_range(0..7) {
        0 => "id, v:a::bigint AS a, v:b::string AS b, to_json(v:c) AS c".to_string(),
        1 => "id, try_variant_get(v, '$.c.d', 'int') AS d, to_json(v:a) AS a, v:c.e::string AS e"
            .to_string(),
        2 => "id, to_json(v) AS v, try_variant_get(v, '$.f', 'decimal(10,2)') AS f".to_string(),
        // Wildcard paths are answered from the whole value in every layout.
        3 => "id, to_json(variant_get(v, '$.c.*')) AS c, to_json(variant_get(v, '$..d')) AS d, \
              try_variant_get(v, '$.g[*]', 'int') AS g"
            .to_string(),
        // Array steps and wildcards through the array `t`.
        4 => "id, to_json(v:t[*]) AS t, try_variant_get(v, '$.t[*].k', 'int') AS k, \
              to_json(v:t[1]) AS t1"
            .to_string(),
        // Conversions of typed leaves to other types (decimal and double to
        // DOUBLE, narrowing, numbers and strings to STRING, strings to numbers).
        5 => "id, try_variant_get(v, '$.f', 'double') AS f, try_variant_get(v, '$.a', 'tinyint') AS a, \
              try_variant_get(v, '$.c.d', 'string') AS d, try_variant_get(v, '$.b', 'binary') AS b, \
              try_variant_get(v, '$.a', 'double') AS a2"
            .to_string(),
        _ => {
            return format!(
                "SELECT count(*), sum(v:a::bigint), count(v:b), min(v:b::string) FROM {table} WHERE {}",
                predicate(rng, 0)
            );
        }
    };
    format!(
        "SELECT {select} FROM {table} WHERE {} ORDER BY 1, 2, 3, 4",
        predicate(rng, 0)
    )
}

/// The result's values, a line per row (no header: column names name the table).
/// A pruning error is an error of the query here.
async fn run(ctx: &SessionContext, sql: &str) -> std::result::Result<String, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let plan = df.create_physical_plan().await.map_err(|e| e.to_string())?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx())
        .await
        .map_err(|e| e.to_string())?;
    let errors = crate::rules::scan_metric(&plan, "pruning_errors");
    if errors > 0 {
        return Err(format!("{errors} pruning errors"));
    }
    let mut out = String::new();
    for batch in &batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &FormatOptions::default()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push_str(&cells.join(" | "));
            out.push('\n');
        }
    }
    Ok(out)
}

async fn set(ctx: &SessionContext, sql: &str) -> Result<()> {
    ctx.sql(sql).await?.collect().await?;
    Ok(())
}

/// Runs `sql` and sums a metric of its `VariantScanExec` nodes.
async fn scan_metric(ctx: &SessionContext, sql: &str, metric: &str) -> Result<usize> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    Ok(crate::rules::scan_metric(&plan, metric))
}

/// Runs `sql` and sums the Parquet scans' `bytes_scanned`.
async fn bytes_scanned(ctx: &SessionContext, sql: &str) -> Result<usize> {
    fn sum(plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> usize {
        let own = if plan.name() == "DataSourceExec" {
            plan.metrics()
                .and_then(|m| m.sum_by_name("bytes_scanned"))
                .map_or(0, |v| v.as_usize())
        } else {
            0
        };
        own + plan.children().into_iter().map(sum).sum::<usize>()
    }
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    Ok(sum(&plan))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushdown_on_and_off_agree_on_random_queries() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("df_variant_pushdown_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut combinations = 0;
    let mut failures = Vec::new();
    let mut pruned = 0;
    let mut pushed = 0;
    let mut elements_pruned = 0;
    for dataset in 0..DATASETS {
        let mut rng = StdRng::seed_from_u64(0xd1ff + dataset);
        // Clean data (everything typed: prunes), a little dirt, a lot of dirt.
        let dirty = [0.0, 0.01, 0.2][dataset as usize];
        let mut values = String::new();
        for id in 0..ROWS {
            if id > 0 {
                values.push_str(", ");
            }
            match document(&mut rng, id, dirty) {
                Some(doc) => write!(values, "({id}, '{doc}')").unwrap(),
                None => write!(values, "({id}, NULL)").unwrap(),
            }
        }
        let ctx = df_variant::variant_context();
        set(
            &ctx,
            &format!(
                "CREATE TABLE src AS SELECT CAST(id AS BIGINT) AS id, parse_json(j) AS v FROM (VALUES {values}) t(id, j)"
            ),
        )
        .await?;
        let base = dir.join(format!("d{dataset}"));
        let all = base.join("all");
        std::fs::create_dir_all(&all).unwrap();
        let layouts = [
            ("shredded", "auto", ""),
            ("partial", "auto", "struct<a:bigint,c:struct<d:int>>"),
            ("plain", "off", ""),
        ];
        for (name, shredding, schema) in layouts {
            let file = base.join(format!("{name}.parquet"));
            set(
                &ctx,
                &format!(
                    "COPY (SELECT id, v FROM src) TO '{}' STORED AS PARQUET OPTIONS (
                        'variant.shredding' '{shredding}', 'variant.shredding_schema' '{schema}',
                        max_row_group_size 300, data_page_row_count_limit 60, write_batch_size 60)",
                    file.display()
                ),
            )
            .await?;
            // The mixed table: each layout in two files (two halves of the ids).
            for (half, range) in [(0, "id < 1200"), (1, "id >= 1200")] {
                set(
                    &ctx,
                    &format!(
                        "COPY (SELECT id, v FROM src WHERE {range}) TO '{}/{name}_{half}.parquet' STORED AS PARQUET OPTIONS (
                            'variant.shredding' '{shredding}', 'variant.shredding_schema' '{schema}',
                            max_row_group_size 300, data_page_row_count_limit 60, write_batch_size 60)",
                        all.display()
                    ),
                )
                .await?;
            }
            set(
                &ctx,
                &format!(
                    "CREATE EXTERNAL TABLE {name} STORED AS PARQUET LOCATION '{}'",
                    file.display()
                ),
            )
            .await?;
        }
        set(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE mixed STORED AS PARQUET LOCATION '{}/'",
                all.display()
            ),
        )
        .await?;

        for q in 0..QUERIES_PER_DATASET {
            let table = ["shredded", "mixed", "partial", "mixed"][q % 4];
            let sql = query(&mut rng, table);
            let row_filter = rng.random_bool(0.5);
            set(
                &ctx,
                &format!("SET datafusion.execution.parquet.pushdown_filters = {row_filter}"),
            )
            .await?;
            set(&ctx, "SET variant.pushdown = true").await?;
            let on = run(&ctx, &sql).await;
            set(&ctx, "SET variant.pushdown = false").await?;
            let off = run(&ctx, &sql).await;
            // One combination per file the query reads.
            combinations += if table == "mixed" { 6 } else { 1 };
            if on != off {
                failures.push(format!(
                    "dataset {dataset}, row filter {row_filter}: {sql}\n  on:  {on:?}\n  off: {off:?}"
                ));
                continue;
            }
            // The same data unshredded, for the single-layout tables.
            if table != "mixed" {
                let plain = run(&ctx, &sql.replace(&format!("FROM {table} "), "FROM plain ")).await;
                if on != plain {
                    failures.push(format!(
                        "dataset {dataset}: {sql}\n  {table}: {on:?}\n  plain: {plain:?}"
                    ));
                }
            }
        }
        // Something was pushed and pruned (on the clean data).
        set(&ctx, "SET variant.pushdown = true").await?;
        let probe = "SELECT count(*) FROM shredded WHERE v:a::bigint BETWEEN 300 AND 330";
        pruned += scan_metric(&ctx, probe, "row_groups_pruned").await?;
        pushed += scan_metric(&ctx, probe, "extractions_pushed").await?;
        // Some element of a shredded array equals a value: row groups prune on
        // the element leaf's statistics.
        let probe = "SELECT count(*) FROM shredded WHERE array_has(v:u[*]::array<string>, 'u05')";
        elements_pruned += scan_metric(&ctx, probe, "row_groups_pruned").await?;
        // A path through the shredded array reads the array's chunks, not the
        // whole value.
        // A key below a shredded group that the group does not shred reads
        // the group's residual only.
        // A typed extraction of a shredded leaf reads the leaf only, and reads
        // the whole value with the pushdown off (the scan cache's per-file
        // adapter once ignored the setting).
        for probe in [
            "SELECT count(v:t[*]), count(v:t[1]) FROM shredded",
            "SELECT count(v:c.e) FROM partial",
            "SELECT count(v:a::bigint) FROM shredded",
        ] {
            set(&ctx, "SET variant.pushdown = true").await?;
            let on = bytes_scanned(&ctx, probe).await?;
            set(&ctx, "SET variant.pushdown = false").await?;
            let off = bytes_scanned(&ctx, probe).await?;
            assert!(
                on * 2 < off,
                "dataset {dataset}, {probe}: {on} bytes with the pushdown, {off} without"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(combinations >= 1000, "{combinations}");
    assert!(pruned > 0, "nothing was pruned");
    assert!(pushed > 0, "nothing was pushed");
    assert!(elements_pruned > 0, "nothing was pruned on an element leaf");
    assert!(
        failures.is_empty(),
        "{} of {combinations} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
    Ok(())
}

/// The 138 shredded files of apache/parquet-testing (valid and invalid ones):
/// extracting each shredded field, and the whole value, gives the same answer with
/// the pushdown on and off; and the pushdown never errors where the full read
/// does not (it reads less, so an error elsewhere in a row may go unnoticed: the
/// other way round is allowed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parquet_testing_shredded_files_agree_with_and_without_pushdown() -> Result<()> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/parquet-testing/shredded_variant");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/parquet-testing/shredded_variant")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    assert!(files.len() > 100, "{}", files.len());
    let ctx = df_variant::variant_context();
    let (mut compared, mut pushed_only_ok) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let Ok(reader) = std::fs::File::open(file) else {
            continue;
        };
        let Ok(builder) = ParquetRecordBatchReaderBuilder::try_new(reader) else {
            continue;
        };
        let schema = Arc::clone(builder.schema());
        let Ok(var) = schema.field_with_name("var") else {
            continue;
        };
        let mut paths = vec!["$".to_string()];
        if let arrow::datatypes::DataType::Struct(fields) = var.data_type()
            && let Some((_, typed)) = fields.find("typed_value")
            && let arrow::datatypes::DataType::Struct(object) = typed.data_type()
        {
            paths.extend(object.iter().map(|f| format!("$.{}", f.name())));
        }
        for path in paths {
            let sql = format!(
                "SELECT to_json(variant_get(var, '{path}')), try_variant_get(var, '{path}', 'bigint'), \
                 try_variant_get(var, '{path}', 'string') FROM '{}' ORDER BY 1, 2, 3",
                file.display()
            );
            set(&ctx, "SET variant.pushdown = true").await?;
            let on = run(&ctx, &sql).await;
            set(&ctx, "SET variant.pushdown = false").await?;
            let off = run(&ctx, &sql).await;
            compared += 1;
            match (&on, &off) {
                (Ok(a), Ok(b)) if a != b => failures.push(format!("{sql}\n  on: {a}\n  off: {b}")),
                (Err(e), Ok(_)) => failures.push(format!("{sql}\n  on fails: {e}")),
                (Ok(_), Err(_)) => pushed_only_ok += 1,
                _ => {}
            }
        }
    }
    assert!(compared > 150, "{compared}");
    eprintln!("{compared} extractions compared; {pushed_only_ok} read only with the pushdown");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
