//! Delta deletion vectors: rows a vector deletes never appear, not in `count(*)`,
//! not with shredded pushdown and row-group/page pruning on or off, not with
//! more partitions, not in a plan that went through bytes, and not in a table
//! without VARIANT columns. The vectors are written here the way the Delta
//! protocol describes inline vectors (a RoaringTreemap in the portable format
//! behind its magic number, z85-encoded in `add.deletionVector`), and the
//! answers are compared with the same rows filtered in SQL.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use df_variant::variant_context;
use serde_json::{Value, json};

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

fn text(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).unwrap().to_string()
}

/// The result of `sql`'s physical plan after a trip through the plan codec, as
/// a worker gets it.
async fn through_bytes(ctx: &SessionContext, sql: &str) -> String {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let bytes = df_variant::codec::plan_to_bytes(plan).unwrap();
    let decoded = df_variant::codec::plan_from_bytes(&bytes, &ctx.task_ctx()).unwrap();
    text(&collect(decoded, ctx.task_ctx()).await.unwrap())
}

/// The `id`s of one Parquet file in row order.
async fn ids_of(file: &Path) -> Vec<i64> {
    let ctx = SessionContext::new();
    let batches = ctx
        .read_parquet(
            file.to_str().unwrap(),
            datafusion::prelude::ParquetReadOptions::default(),
        )
        .await
        .unwrap()
        .select_columns(&["id"])
        .unwrap()
        .collect()
        .await
        .unwrap();
    batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

/// An inline deletion vector descriptor deleting `rows` (positions in a file).
fn inline_dv(rows: &[u64]) -> Value {
    let map: roaring::RoaringTreemap = rows.iter().copied().collect();
    let mut bytes = 1_681_511_377_u32.to_le_bytes().to_vec();
    map.serialize_into(&mut bytes).unwrap();
    // z85 wants a multiple of 4 bytes; the size says where the vector ends.
    let size = bytes.len();
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    json!({
        "storageType": "i",
        "pathOrInlineDv": z85::encode(&bytes),
        "sizeInBytes": size,
        "cardinality": rows.len(),
    })
}

/// Adds a commit to the Delta table at `dir` that deletes, with an inline
/// deletion vector per file, the rows whose `id` `deleted` accepts; returns the
/// ids kept.
async fn delete_with_vectors(dir: &Path, deleted: impl Fn(i64) -> bool) -> BTreeSet<i64> {
    let log = dir.join("_delta_log");
    let mut versions: Vec<u64> = std::fs::read_dir(&log)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json")?.parse().ok()
        })
        .collect();
    versions.sort_unstable();
    let mut protocol = Value::Null;
    let mut adds = Vec::new();
    for v in &versions {
        for line in std::fs::read_to_string(log.join(format!("{v:020}.json")))
            .unwrap()
            .lines()
        {
            let action: Value = serde_json::from_str(line).unwrap();
            if let Some(p) = action.get("protocol") {
                protocol = p.clone();
            }
            if let Some(a) = action.get("add") {
                adds.push(a.clone());
            }
        }
    }
    // A legacy protocol (the table without VARIANT columns is (1, 2)) becomes
    // table features, with the writer features (1, 2) implies.
    if protocol["minReaderVersion"].as_i64() != Some(3) {
        protocol = json!({"minReaderVersion": 3, "minWriterVersion": 7,
            "readerFeatures": [], "writerFeatures": ["appendOnly", "invariants"]});
    }
    for list in ["readerFeatures", "writerFeatures"] {
        let features = protocol[list].as_array_mut().unwrap();
        if !features.contains(&json!("deletionVectors")) {
            features.push(json!("deletionVectors"));
        }
    }
    let mut lines = vec![json!({"protocol": protocol})];
    let mut kept = BTreeSet::new();
    for add in adds {
        let path = add["path"].as_str().unwrap().to_string();
        let ids = ids_of(&dir.join(&path)).await;
        let rows: Vec<u64> = (0..ids.len() as u64)
            .filter(|&i| deleted(ids[i as usize]))
            .collect();
        kept.extend(ids.iter().filter(|&&id| !deleted(id)));
        lines.push(json!({"remove": {
            "path": path, "deletionTimestamp": 1, "dataChange": true,
            "extendedFileMetadata": true, "partitionValues": add["partitionValues"],
            "size": add["size"],
        }}));
        let mut add = add.clone();
        add["deletionVector"] = inline_dv(&rows);
        add["dataChange"] = json!(true);
        lines.push(json!({ "add": add }));
    }
    let next = versions.last().unwrap() + 1;
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(log.join(format!("{next:020}.json")), text).unwrap();
    kept
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_rows_never_appear() {
    let dir = std::env::temp_dir().join(format!("df_variant_dv_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ctx = variant_context();
    for sql in [
        "SET datafusion.execution.parquet.max_row_group_size = 500",
        "SET datafusion.execution.parquet.data_page_row_count_limit = 100",
        "SET datafusion.execution.parquet.write_batch_size = 100",
        "CREATE TABLE src AS SELECT CAST(value AS BIGINT) AS id, \
         parse_json('{\"a\":' || value || ',\"b\":\"k' || (value % 3) || '\"}') AS v \
         FROM generate_series(0, 2999)",
    ] {
        run(&ctx, sql).await.unwrap();
    }
    // Two files (two appends), shredded with per-path stats; and a table
    // without VARIANT columns.
    let shredded = dir.join("shredded");
    let plain = dir.join("plain");
    for range in ["id < 1500", "id >= 1500"] {
        run(
            &ctx,
            &format!(
                "COPY (SELECT * FROM src WHERE {range} ORDER BY id) TO '{}' STORED AS DELTA \
                 OPTIONS ('delta.enableVariantShredding' 'true')",
                shredded.display()
            ),
        )
        .await
        .unwrap();
        run(
            &ctx,
            &format!(
                "COPY (SELECT id FROM src WHERE {range} ORDER BY id) TO '{}' STORED AS DELTA",
                plain.display()
            ),
        )
        .await
        .unwrap();
    }
    // Every 7th row, one whole row group (ids 500..999) and one whole file's
    // last rows.
    let deleted = |id: i64| id % 7 == 0 || (500..1000).contains(&id) || id >= 2990;
    let kept = delete_with_vectors(&shredded, deleted).await;
    let kept_plain = delete_with_vectors(&plain, deleted).await;
    assert_eq!(kept, kept_plain);
    // 429 multiples of 7, 500 - 71 more in 500..999, 10 - 1 more from 2990.
    assert_eq!(kept.len(), 3000 - 429 - 429 - 9);

    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{}'",
            shredded.display()
        ),
    )
    .await
    .unwrap();
    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE p STORED AS DELTA LOCATION '{}'",
            plain.display()
        ),
    )
    .await
    .unwrap();
    run(
        &ctx,
        "CREATE TABLE expected AS SELECT * FROM src WHERE NOT (id % 7 = 0 OR id BETWEEN 500 AND 999 OR id >= 2990)",
    )
    .await
    .unwrap();
    let queries = [
        "SELECT count(*), sum(id) FROM {t}",
        "SELECT count(*), sum(v:a::bigint) FROM {t} WHERE v:a::bigint BETWEEN 480 AND 1020",
        "SELECT count(*), min(id), max(id) FROM {t} WHERE v:a::bigint >= 2900",
        "SELECT v:b::string AS b, count(*) FROM {t} WHERE id < 1600 GROUP BY b ORDER BY b",
        "SELECT id, to_json(v) FROM {t} WHERE v:a::bigint BETWEEN 693 AND 1001 ORDER BY id",
        "SELECT id FROM {t} ORDER BY id DESC LIMIT 3",
    ];
    let mut checked = 0;
    for partitions in [1, 4] {
        run(
            &ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await
        .unwrap();
        for pushdown in [true, false] {
            run(&ctx, &format!("SET variant.pushdown = {pushdown}"))
                .await
                .unwrap();
            for q in queries {
                let want = text(&run(&ctx, &q.replace("{t}", "expected AS t")).await.unwrap());
                let got = text(&run(&ctx, &q.replace("{t}", "t")).await.unwrap());
                assert_eq!(
                    got, want,
                    "{q} (partitions {partitions}, pushdown {pushdown})"
                );
                // The same plan through bytes, as a worker gets it.
                let shipped = through_bytes(&ctx, &q.replace("{t}", "t")).await;
                assert_eq!(shipped, want, "{q} through bytes");
                checked += 1;
            }
            // The table without VARIANT columns.
            for q in [
                "SELECT count(*), sum(id) FROM {t}",
                "SELECT id FROM {t} WHERE id BETWEEN 690 AND 1001 ORDER BY id",
            ] {
                let want = text(&run(&ctx, &q.replace("{t}", "expected AS t")).await.unwrap());
                let got = text(&run(&ctx, &q.replace("{t}", "p AS t")).await.unwrap());
                assert_eq!(got, want, "{q} on the table without VARIANT columns");
                let shipped = through_bytes(&ctx, &q.replace("{t}", "p AS t")).await;
                assert_eq!(shipped, want, "{q} through bytes, without VARIANT columns");
            }
        }
    }
    assert_eq!(checked, 24);
    // Pruning still works over the deletion vectors: the first file is skipped
    // on its log bounds, and of the second only the row group of ids
    // 2500..2999 can hold a >= 2900.
    run(&ctx, "SET variant.pushdown = true").await.unwrap();
    let plan = ctx
        .sql("SELECT count(*) FROM t WHERE v:a::bigint >= 2900")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
    assert_eq!(crate::rules::scan_metric(&plan, "files_pruned"), 1);
    assert_eq!(crate::rules::scan_metric(&plan, "row_groups_pruned"), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
