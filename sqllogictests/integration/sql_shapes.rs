//! A fuzzer for the SQL shapes around extractions: random queries that put
//! `v:path::type` extractions in aliased projections, filters, joins, `IN` and
//! `EXISTS` subqueries, `GROUP BY`, window functions and `ORDER BY`, and in
//! `UPDATE`/`DELETE`, over in-memory tables (shredded or not) and Parquet
//! files (shredded or not), with pushdown on and off, in one process and
//! through plan bytes.
//!
//! The oracle is the same query with every extraction computed first, in a
//! subquery that replaces each table (`(SELECT *, v:id::bigint AS e0, ... FROM
//! t) a`): a planning or run error that form does not have, or another answer,
//! is a failure. `cargo test` runs 300 queries; the long run is
//! `DF_VARIANT_SQL_SHAPES=100000 cargo test --profile profiling --test
//! integration sql_shapes -- --nocapture` (`DF_VARIANT_SQL_SHAPES_SEED` picks
//! another sequence; 7 by default).

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The extractions, as SQL over a table alias (`{a}`) and as the name of the
/// column that precomputes them.
const EXTRACTIONS: &[&str] = &[
    "{a}.v:id::bigint",
    "{a}.v:g::string",
    "{a}.v['o']['a']::int",
    "{a}.v:x::bigint",
    "variant_get({a}.v, '$.id', 'bigint')",
    "try_variant_get({a}.v, '$.g', 'string')",
    "{a}.v:o.a::int",
];

/// The tables: in-memory shredded, in-memory plain, Parquet shredded,
/// Parquet unshredded.
const TABLES: &[&str] = &["ms", "mp", "ps", "pu"];

struct Query {
    /// The query as written.
    sql: String,
    /// The same with every extraction precomputed.
    oracle: String,
    /// Whether it changes a table (runs on a fresh copy, checked by the
    /// copy's rows afterwards).
    dml: bool,
}

/// A table reference `t a` and its precomputed form.
fn table(t: &str, alias: &str) -> (String, String) {
    let columns: Vec<String> = EXTRACTIONS
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{} AS e{i}", e.replace("{a}", t)))
        .collect();
    (
        format!("{t} {alias}"),
        format!("(SELECT *, {} FROM {t}) {alias}", columns.join(", ")),
    )
}

/// Extraction `i` over `alias`, as written and precomputed.
fn ex(i: usize, alias: &str) -> (String, String) {
    (
        EXTRACTIONS[i].replace("{a}", alias),
        format!("{alias}.e{i}"),
    )
}

/// A predicate on `alias` (written, precomputed).
fn predicate(rng: &mut StdRng, alias: &str) -> (String, String) {
    match rng.random_range(0..4) {
        0 => {
            let (w, o) = ex(0, alias);
            let n = rng.random_range(0..20);
            (format!("{w} > {n}"), format!("{o} > {n}"))
        }
        1 => {
            let (w, o) = ex([1, 5][rng.random_range(0..2)], alias);
            let k = rng.random_range(0..4);
            (format!("{w} = 'k{k}'"), format!("{o} = 'k{k}'"))
        }
        2 => {
            let (w, o) = ex([2, 6][rng.random_range(0..2)], alias);
            (format!("{w} IS NOT NULL"), format!("{o} IS NOT NULL"))
        }
        _ => {
            let (w, o) = ex(3, alias);
            let n = rng.random_range(0..50);
            (
                format!("coalesce({w}, 0) < {n}"),
                format!("coalesce({o}, 0) < {n}"),
            )
        }
    }
}

fn pick<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

fn query(rng: &mut StdRng) -> Query {
    let t1 = pick(rng, TABLES);
    let t2 = pick(rng, TABLES);
    let (f1, o1) = table(t1, "a");
    let (f2, o2) = table(t2, "b");
    let e = rng.random_range(0..EXTRACTIONS.len());
    let k = [0, 1, 2, 4, 5, 6][rng.random_range(0..6)];
    let (ea, oa) = ex(e, "a");
    let (ka, oka) = ex(k, "a");
    let (kb, okb) = ex(k, "b");
    let (pa, opa) = predicate(rng, "a");
    let (pb, opb) = predicate(rng, "b");
    let shape = rng.random_range(0..9);
    let (sql, oracle) = match shape {
        0 => (
            format!("SELECT a.rn, {ea} AS x FROM {f1} WHERE {pa} ORDER BY a.rn"),
            format!("SELECT a.rn, {oa} AS x FROM {o1} WHERE {opa} ORDER BY a.rn"),
        ),
        1 => (
            format!("SELECT count(*), sum(a.rn) FROM {f1} JOIN {f2} ON {ka} = {kb} WHERE {pa}"),
            format!("SELECT count(*), sum(a.rn) FROM {o1} JOIN {o2} ON {oka} = {okb} WHERE {opa}"),
        ),
        2 => (
            format!(
                "SELECT a.rn, {ea} FROM {f1} LEFT JOIN {f2} ON {ka} = {kb} AND {pb} ORDER BY 1, 2 NULLS FIRST"
            ),
            format!(
                "SELECT a.rn, {oa} FROM {o1} LEFT JOIN {o2} ON {oka} = {okb} AND {opb} ORDER BY 1, 2 NULLS FIRST"
            ),
        ),
        3 => (
            format!(
                "SELECT a.rn FROM {f1} WHERE {ka} IN (SELECT {kb} FROM {f2} WHERE {pb}) ORDER BY a.rn"
            ),
            format!(
                "SELECT a.rn FROM {o1} WHERE {oka} IN (SELECT {okb} FROM {o2} WHERE {opb}) ORDER BY a.rn"
            ),
        ),
        4 => (
            format!(
                "SELECT a.rn FROM {f1} WHERE EXISTS (SELECT 1 FROM {f2} WHERE {kb} = {ka} AND {pb}) ORDER BY a.rn"
            ),
            format!(
                "SELECT a.rn FROM {o1} WHERE EXISTS (SELECT 1 FROM {o2} WHERE {okb} = {oka} AND {opb}) ORDER BY a.rn"
            ),
        ),
        5 => (
            format!(
                "SELECT {ka} AS k, count(*), max(a.rn) FROM {f1} WHERE {pa} GROUP BY {ka} ORDER BY 1 NULLS FIRST"
            ),
            format!(
                "SELECT {oka} AS k, count(*), max(a.rn) FROM {o1} WHERE {opa} GROUP BY {oka} ORDER BY 1 NULLS FIRST"
            ),
        ),
        6 => (
            format!(
                "SELECT a.rn, row_number() OVER (PARTITION BY {ka} ORDER BY {ea} NULLS FIRST, a.rn) FROM {f1} ORDER BY a.rn"
            ),
            format!(
                "SELECT a.rn, row_number() OVER (PARTITION BY {oka} ORDER BY {oa} NULLS FIRST, a.rn) FROM {o1} ORDER BY a.rn"
            ),
        ),
        7 => {
            // DML on a fresh copy of a table; the oracle is the table it must
            // leave, computed by a query with the predicate precomputed.
            let (p, op) = predicate(rng, "c");
            let (p, op) = (p.replace("c.", ""), op.replace("c.e", "x.e"));
            let copy = table("c", "x").1;
            if rng.random_bool(0.5) {
                (
                    format!("DELETE FROM c WHERE {p}"),
                    format!(
                        "SELECT rn, to_json(v) FROM {copy} WHERE NOT coalesce({op}, false) ORDER BY rn"
                    ),
                )
            } else {
                (
                    format!("UPDATE c SET rn = rn + 1000 WHERE {p}"),
                    format!(
                        "SELECT CASE WHEN coalesce({op}, false) THEN rn + 1000 ELSE rn END AS rn, to_json(v) FROM {copy} ORDER BY rn"
                    ),
                )
            }
        }
        _ => (
            format!(
                "SELECT x, count(*) FROM (SELECT {ea} AS x FROM {f1} WHERE {pa}) s GROUP BY x ORDER BY 1 NULLS FIRST"
            ),
            format!(
                "SELECT x, count(*) FROM (SELECT {oa} AS x FROM {o1} WHERE {opa}) s GROUP BY x ORDER BY 1 NULLS FIRST"
            ),
        ),
    };
    Query {
        sql,
        oracle,
        dml: shape == 7,
    }
}

/// The rows of `sql`, pretty-printed, or its error; through plan bytes when
/// `bytes` is set.
async fn run(ctx: &SessionContext, sql: &str, bytes: bool) -> Result<String, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = if bytes {
        let plan = df.create_physical_plan().await.map_err(|e| e.to_string())?;
        let b = df_variant::codec::plan_to_bytes(plan).map_err(|e| e.to_string())?;
        let plan =
            df_variant::codec::plan_from_bytes(&b, &ctx.task_ctx()).map_err(|e| e.to_string())?;
        collect(plan, ctx.task_ctx())
            .await
            .map_err(|e| e.to_string())?
    } else {
        df.collect().await.map_err(|e| e.to_string())?
    };
    rows(&batches).map_err(|e| e.to_string())
}

/// The rows of `batches` as text, one line each, without the column names
/// (which differ between a query and its oracle).
fn rows(batches: &[RecordBatch]) -> Result<String, arrow::error::ArrowError> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = String::new();
    for b in batches {
        let formatters = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for r in 0..b.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            out.push_str(&cells.join(" | "));
            out.push('\n');
        }
    }
    Ok(out)
}

/// A session with the four tables (`dir`: where the Parquet files go).
async fn session(dir: &std::path::Path) -> SessionContext {
    let ctx = df_variant::variant_context();
    let rows = "SELECT CAST(value AS BIGINT) AS rn, parse_json(\
        '{\"id\":' || (value % 20) || ',\"g\":\"k' || (value % 4) || '\"' || \
        CASE WHEN value % 3 = 0 THEN '' ELSE ',\"x\":' || (value * 7 % 50) END || \
        CASE WHEN value % 5 = 0 THEN '' ELSE ',\"o\":{\"a\":' || (value % 6) || '}' END || '}') AS v \
        FROM generate_series(1, 60)";
    let statements = [
        format!("CREATE TABLE ms AS {rows}"),
        "SET variant.shredding = 'off'".to_string(),
        format!("CREATE TABLE mp AS {rows}"),
        format!(
            "COPY ({rows}) TO '{}/pu.parquet' STORED AS PARQUET",
            dir.display()
        ),
        "SET variant.shredding = 'auto'".to_string(),
        format!(
            "COPY ({rows}) TO '{}/ps.parquet' STORED AS PARQUET OPTIONS (max_row_group_size 16)",
            dir.display()
        ),
        format!(
            "CREATE EXTERNAL TABLE ps STORED AS PARQUET LOCATION '{}/ps.parquet'",
            dir.display()
        ),
        format!(
            "CREATE EXTERNAL TABLE pu STORED AS PARQUET LOCATION '{}/pu.parquet'",
            dir.display()
        ),
    ];
    for s in statements {
        ctx.sql(&s).await.unwrap().collect().await.unwrap();
    }
    ctx
}

/// Runs `n` random queries from `seed`; returns the failures.
async fn fuzz(n: usize, seed: u64) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!(
        "df_variant_sql_shapes_{}_{seed}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = session(&dir).await;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut failures = Vec::new();
    let mut oracle_errors = 0usize;
    for i in 0..n {
        let q = query(&mut rng);
        let pushdown = rng.random_bool(0.7);
        let bytes = !q.dml && rng.random_bool(0.3);
        ctx.sql(&format!("SET variant.pushdown = {pushdown}"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let (got, want) = if q.dml {
            let source = pick(&mut rng, &["ms", "mp"]);
            ctx.sql(&format!(
                "CREATE OR REPLACE TABLE c AS SELECT * FROM {source}"
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
            // The oracle reads the table before the statement changes it.
            let want = run(&ctx, &q.oracle, false).await;
            let got = match run(&ctx, &q.sql, false).await {
                Ok(_) => run(&ctx, "SELECT rn, to_json(v) FROM c ORDER BY rn", false).await,
                Err(e) => Err(e),
            };
            (got, want)
        } else {
            (
                run(&ctx, &q.sql, bytes).await,
                run(&ctx, &q.oracle, false).await,
            )
        };
        let ok = match (&got, &want) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Ok(_)) => false,
            // The oracle itself fails (a DataFusion limit of that form, or an
            // error of the data both share): nothing to compare.
            (_, Err(_)) => {
                oracle_errors += 1;
                true
            }
        };
        if !ok {
            failures.push(format!(
                "#{i} (pushdown {pushdown}, bytes {bytes}):\n  {}\n  got: {}\n  oracle: {}\n  want: {}",
                q.sql,
                shorten(&got),
                q.oracle,
                shorten(&want)
            ));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{oracle_errors} of {n} oracles failed themselves (not compared)");
    failures
}

fn shorten(r: &Result<String, String>) -> String {
    let s = match r {
        Ok(s) => s.clone(),
        Err(e) => format!("ERROR {e}"),
    };
    s.chars().take(600).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extractions_plan_and_answer_in_every_shape_as_when_precomputed() {
    let n = std::env::var("DF_VARIANT_SQL_SHAPES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let seed = std::env::var("DF_VARIANT_SQL_SHAPES_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    let failures = fuzz(n, seed).await;
    println!("{n} queries, {} failures", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
