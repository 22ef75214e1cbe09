//! `--demo`: generates Bluesky-like events (the JSONBench shape) as NDJSON,
//! ingests them into shredded Parquet and runs showcase queries with plans.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use df_variant::demo::bluesky;

use super::{Args, Session};

/// The showcase: (title, SQL). `{dir}` is the demo directory.
const STEPS: &[(&str, &str)] = &[
    (
        "Ingest: NDJSON -> VARIANT -> shredded Parquet, one statement (all cores, streaming)",
        "COPY (SELECT v FROM read_json_variant('{dir}/events.ndjson')) TO '{dir}/events/' STORED AS PARQUET",
    ),
    (
        "What the writer chose: the shredding schema of each file (Spark DDL)",
        "SELECT regexp_replace(file, '.*/', '') AS file, rows, substr(shredding, 1, 100) || '...' AS shredding \
         FROM variant_shredding_schema('{dir}/events/')",
    ),
    (
        "A table over the files; VARIANT columns print as JSON",
        "CREATE EXTERNAL TABLE events STORED AS PARQUET LOCATION '{dir}/events/'",
    ),
    (
        "Typed extraction with Spark JSONPath and casts",
        "SELECT variant_get(v, '$.did', 'string') AS did, \
                variant_get(v, '$.time_us', 'bigint') AS time_us, \
                variant_get(v, '$.commit.collection', 'string') AS collection, \
                variant_get(v, '$.commit.record.createdAt', 'timestamp') AS created_at \
         FROM events WHERE variant_get(v, '$.kind', 'string') = 'commit' LIMIT 5",
    ),
    (
        "JSONBench Q1: events per collection, in Databricks/Snowflake path syntax",
        "SELECT v:commit.collection::string AS event, count(*) AS count \
         FROM events GROUP BY event ORDER BY count DESC LIMIT 10",
    ),
    (
        "JSONBench Q2: distinct users per collection, created events only",
        "SELECT variant_get(v, '$.commit.collection', 'string') AS event, count(*) AS count, \
                count(DISTINCT variant_get(v, '$.did', 'string')) AS users \
         FROM events WHERE variant_get(v, '$.kind', 'string') = 'commit' \
           AND variant_get(v, '$.commit.operation', 'string') = 'create' \
         GROUP BY event ORDER BY count DESC LIMIT 5",
    ),
    (
        "Type hazards: the same path is an object in likes and a string in follows",
        "SELECT variant_get(v, '$.commit.collection', 'string') AS collection, \
                schema_of_variant(variant_get(v, '$.commit.record.subject')) AS subject_type, count(*) AS n \
         FROM events WHERE variant_get(v, '$.commit.collection', 'string') IN ('app.bsky.feed.like', 'app.bsky.graph.follow') \
         GROUP BY collection, subject_type ORDER BY collection",
    ),
    (
        "Explode: the fields of one record as (pos, key, value) rows, with their types",
        "SELECT e['pos'] AS pos, e['key'] AS key, variant_typeof(e['value']) AS type, to_json(e['value']) AS value \
         FROM (SELECT unnest(variant_explode(v:commit.record)) AS e \
               FROM (SELECT v FROM events WHERE v:commit.collection::string = 'app.bsky.feed.post' \
                     AND v:commit.operation::string = 'create' LIMIT 1))",
    ),
    (
        "Schema inference over rows: the merged schema of post records",
        "SELECT schema_of_variant_agg(variant_get(v, '$.commit.record')) AS post_schema \
         FROM events WHERE variant_get(v, '$.commit.collection', 'string') = 'app.bsky.feed.post'",
    ),
    (
        "Spark semantics: failed casts error in variant_get, give NULL in try_variant_get",
        "SELECT try_variant_get(v, '$.commit.record.subject', 'int') AS subject_as_int, \
                to_json(variant_get(v, '$.commit.record.subject')) AS subject \
         FROM events WHERE variant_get(v, '$.commit.collection', 'string') = 'app.bsky.feed.like' LIMIT 3",
    ),
    (
        "The plan of a filtered extraction",
        "EXPLAIN SELECT count(*) FROM events \
         WHERE variant_get(v, '$.commit.collection', 'string') = 'app.bsky.feed.post'",
    ),
];

fn demo_dir(args: &Args) -> (PathBuf, bool) {
    match &args.demo_dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("df-variant-demo-{}", std::process::id())),
            true,
        ),
    }
}

fn generate(dir: &Path, rows: u64) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let events = dir.join("events");
    if events.exists() {
        std::fs::remove_dir_all(&events)?;
    }
    let file = std::fs::File::create(dir.join("events.ndjson"))?;
    bluesky::write_ndjson(rows, 1, file)
}

/// Runs the demo; non-zero exit code when a step fails.
pub async fn run(session: &Session, args: &Args) -> ExitCode {
    let (dir, temporary) = demo_dir(args);
    println!(
        "== Generating {} Bluesky-like events (JSONBench shape) into {}",
        args.demo_rows,
        dir.display()
    );
    let started = Instant::now();
    match generate(&dir, args.demo_rows) {
        Ok(bytes) => println!(
            "   {:.1} MB of NDJSON in {:.2} s\n",
            bytes as f64 / 1e6,
            started.elapsed().as_secs_f64()
        ),
        Err(e) => {
            eprintln!(
                "Error: cannot write the demo events to {}: {e}",
                dir.display()
            );
            return ExitCode::FAILURE;
        }
    }
    let dir_text = dir.display().to_string().replace('\'', "''");
    let mut ok = true;
    for (title, sql) in STEPS {
        let sql = sql.replace("{dir}", &dir_text);
        println!("== {title}");
        println!(
            "   {}",
            sql.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        if !session.run_script(&sql, "demo").await {
            ok = false;
            break;
        }
        println!();
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("Files kept in {}", dir.display());
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
