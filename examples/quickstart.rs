//! Quickstart: register df-variant, parse JSON events into VARIANT, extract typed
//! values, infer schemas, and see Spark's error and NULL semantics.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use datafusion::error::Result;

/// A few embedded demo events, shaped like a web/social event stream.
const EVENTS: &[&str] = &[
    r#"{"event_id": 1, "type": "click", "user": {"id": 42, "name": "ana", "tags": ["new", "mobile"]}, "amount": null, "ts": "2024-01-15T10:20:30Z"}"#,
    r#"{"event_id": 2, "type": "purchase", "user": {"id": 7, "name": "émile"}, "amount": 12.50, "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-9", "qty": "3"}]}"#,
    r#"{"event_id": 3, "type": "purchase", "user": {"id": 42, "name": "ana"}, "amount": "N/A", "score": 1.5e1}"#,
    r#"{"event_id": 4, "type": "view", "user": {"id": 9}, "flag": true, "score": "high"}"#,
    r"[1, 2, 3]",
];

#[tokio::main]
async fn main() -> Result<()> {
    let ctx = df_variant::variant_context();
    let values = EVENTS
        .iter()
        .map(|e| format!("('{}')", e.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ");
    ctx.sql(&format!(
        "CREATE TABLE events AS SELECT parse_json(j) AS v FROM (VALUES {values}) t(j)"
    ))
    .await?
    .collect()
    .await?;

    let queries = [
        (
            "Typed extraction with Spark paths and casts",
            "SELECT variant_get(v, '$.event_id', 'int') AS id, \
                    variant_get(v, '$.type', 'string') AS type, \
                    variant_get(v, '$.user.name', 'string') AS name, \
                    try_variant_get(v, '$.amount', 'decimal(10,2)') AS amount, \
                    try_variant_get(v, '$.items[1].qty', 'int') AS second_qty \
             FROM events",
        ),
        (
            "Sub-documents stay VARIANT; to_json prints them the way Spark does",
            "SELECT to_json(variant_get(v, '$.user')) AS user_json, schema_of_variant(v) AS schema FROM events",
        ),
        (
            "The merged schema of the object rows (with the array row too it would be VARIANT, as in Spark)",
            "SELECT schema_of_variant_agg(v) AS merged_schema FROM events WHERE schema_of_variant(v) LIKE 'OBJECT%'",
        ),
        (
            "Aggregating on an extracted value",
            "SELECT variant_get(v, '$.user.id', 'bigint') AS user_id, count(*) AS events \
             FROM events GROUP BY 1 ORDER BY 2 DESC, 1",
        ),
        (
            "CAST to and from VARIANT",
            "SELECT CAST(parse_json('\" 42 \"') AS INT) AS i, to_json(CAST(1.50 AS VARIANT)) AS d, \
                    to_json(to_variant_object(named_struct('a', 1, 'b', [true, false]))) AS o",
        ),
    ];
    for (title, sql) in queries {
        println!("\n-- {title}\n{sql}\n");
        ctx.sql(sql).await?.show().await?;
    }

    println!("\n-- Errors say what went wrong; try_ functions return NULL instead");
    for sql in [
        "SELECT variant_get(parse_json('\"x\"'), '$', 'int')",
        "SELECT variant_get(parse_json('{}'), 'a.b')",
        "SELECT parse_json('{\"a\": 1, \"a\": 2}')",
        "SELECT v FROM events ORDER BY v",
    ] {
        match ctx.sql(sql).await {
            Ok(df) => match df.collect().await {
                Ok(_) => println!("{sql}\n  => ok (unexpected)"),
                Err(e) => println!("{sql}\n  => {}", e.strip_backtrace()),
            },
            Err(e) => println!("{sql}\n  => {}", e.strip_backtrace()),
        }
    }
    Ok(())
}
