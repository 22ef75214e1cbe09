//! Delta protocol rules, checked on the log files themselves: the feature lists
//! and schema string of tables we create, the statistics format (nullCount for
//! VARIANT columns, z85 per-path bounds only on shredding-enabled tables),
//! refusal of reader and writer features we do not implement, concurrent appends,
//! conflicts, and all-or-nothing writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryViewArray, Int64Array, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use df_variant::array::{variant_extension_metadata, variant_fields};
use df_variant::delta::decode_path_values;
use df_variant::variant_context;
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("df_variant_delta_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = run(ctx, sql).await.unwrap();
    let c = batches[0].column(0);
    c.as_any().downcast_ref::<Int64Array>().unwrap().value(0)
}

/// The actions of commit `version` of the table at `dir`.
fn commit(dir: &Path, version: u64) -> Vec<Value> {
    let path = dir.join(format!("_delta_log/{version:020}.json"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn action<'a>(actions: &'a [Value], kind: &str) -> Vec<&'a Value> {
    actions.iter().filter_map(|a| a.get(kind)).collect()
}

const SRC: &str = "SELECT id, parse_json(j) AS v FROM (VALUES \
    (1, '{\"a\": 5, \"b\": \"m\", \"c\": {\"d\": 10}}'), \
    (2, '{\"a\": -3, \"b\": \"z\", \"c\": {\"d\": 20}}'), \
    (3, NULL), \
    (4, '{\"a\": 7, \"b\": \"a\", \"c\": {\"d\": 30}}')) t(id, j)";

#[tokio::test]
async fn written_logs_follow_the_protocol() {
    let ctx = variant_context();
    let plain = scratch("plain");
    let shredded = scratch("shredded");
    run(
        &ctx,
        &format!("COPY ({SRC}) TO '{}' STORED AS DELTA", plain.display()),
    )
    .await
    .unwrap();
    run(
        &ctx,
        &format!(
            "COPY ({SRC}) TO '{}' STORED AS DELTA OPTIONS ('delta.enableVariantShredding' 'true')",
            shredded.display()
        ),
    )
    .await
    .unwrap();

    // Unshredded: variantType in both lists, "variant" in the schema, nullCount
    // for the VARIANT column and no bounds for it.
    let c = commit(&plain, 0);
    let protocol = action(&c, "protocol")[0];
    assert_eq!(protocol["minReaderVersion"], 3);
    assert_eq!(protocol["minWriterVersion"], 7);
    assert_eq!(
        protocol["readerFeatures"],
        serde_json::json!(["variantType"])
    );
    assert_eq!(
        protocol["writerFeatures"],
        serde_json::json!(["variantType"])
    );
    let metadata = action(&c, "metaData")[0];
    let schema: Value = serde_json::from_str(metadata["schemaString"].as_str().unwrap()).unwrap();
    assert_eq!(schema["fields"][1]["name"], "v");
    assert_eq!(schema["fields"][1]["type"], "variant");
    assert_eq!(metadata["configuration"], serde_json::json!({}));
    let adds = action(&c, "add");
    assert_eq!(adds.len(), 1);
    let stats: Value = serde_json::from_str(adds[0]["stats"].as_str().unwrap()).unwrap();
    assert_eq!(stats["numRecords"], 4);
    assert_eq!(stats["nullCount"]["v"], 1);
    assert!(stats["minValues"].get("v").is_none(), "{stats}");
    assert!(stats["maxValues"].get("v").is_none(), "{stats}");
    assert_eq!(stats["minValues"]["id"], 1);
    assert_eq!(stats["maxValues"]["id"], 4);
    // Every file of the log exists.
    let path = adds[0]["path"].as_str().unwrap();
    assert!(plain.join(path).exists(), "{path}");

    // Shredded: the shredding feature in both lists, the property set, and z85
    // bounds of every shredded primitive path.
    let c = commit(&shredded, 0);
    let protocol = action(&c, "protocol")[0];
    assert_eq!(
        protocol["readerFeatures"],
        serde_json::json!(["variantType", "variantShredding"])
    );
    assert_eq!(protocol["writerFeatures"], protocol["readerFeatures"]);
    assert_eq!(
        action(&c, "metaData")[0]["configuration"]["delta.enableVariantShredding"],
        "true"
    );
    let stats: Value =
        serde_json::from_str(action(&c, "add")[0]["stats"].as_str().unwrap()).unwrap();
    assert_eq!(stats["nullCount"]["v"], 1);
    let min = decode_path_values(stats["minValues"]["v"].as_str().unwrap()).unwrap();
    let max = decode_path_values(stats["maxValues"]["v"].as_str().unwrap()).unwrap();
    let key = |k: &[&str]| {
        k.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };
    // Integers are shredded as INT (the narrowest the writer uses) or wider.
    let int = |s: &ScalarValue| match s {
        ScalarValue::Int32(Some(v)) => i64::from(*v),
        ScalarValue::Int64(Some(v)) => *v,
        other => panic!("not an integer bound: {other:?}"),
    };
    assert_eq!(int(&min[&key(&["a"])]), -3);
    assert_eq!(int(&max[&key(&["a"])]), 7);
    assert_eq!(int(&min[&key(&["c", "d"])]), 10);
    assert_eq!(int(&max[&key(&["c", "d"])]), 30);
    assert_eq!(min[&key(&["b"])], ScalarValue::Utf8(Some("a".into())));
    assert_eq!(max[&key(&["b"])], ScalarValue::Utf8(Some("z".into())));
    assert_eq!(min.len(), 3);
    // The raw text is the protocol's: z85 of metadata followed by value.
    let text = stats["minValues"]["v"].as_str().unwrap();
    assert_eq!(text.len() % 5, 0);
}

#[tokio::test]
async fn a_path_with_mixed_types_gets_no_bounds() {
    let ctx = variant_context();
    let dir = scratch("mixed");
    run(
        &ctx,
        &format!(
            "COPY (SELECT parse_json(j) AS v FROM (VALUES ('{{\"a\": 1, \"b\": 1}}'), ('{{\"a\": 2, \"b\": 2}}'), ('{{\"a\": \"x\", \"b\": 3}}')) t(j)) \
             TO '{}' STORED AS DELTA OPTIONS ('delta.enableVariantShredding' 'true')",
            dir.display()
        ),
    )
    .await
    .unwrap();
    let c = commit(&dir, 0);
    let stats: Value =
        serde_json::from_str(action(&c, "add")[0]["stats"].as_str().unwrap()).unwrap();
    let min = decode_path_values(stats["minValues"]["v"].as_str().unwrap()).unwrap();
    let key = |k: &str| vec![k.to_string()];
    // `a` is a string in one row: not every row has the shredded type.
    assert!(!min.contains_key(&key("a")), "{min:?}");
    assert!(min.contains_key(&key("b")), "{min:?}");
    // And a query on `a` still sees every row.
    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE m STORED AS DELTA LOCATION '{}'",
            dir.display()
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM m WHERE v:a::string = 'x'").await,
        1
    );
}

/// A table whose first commit has this protocol and configuration.
fn table_with(name: &str, protocol: Value, configuration: Value) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
    let schema = r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"variant","nullable":true,"metadata":{}}]}"#;
    let lines = [
        serde_json::json!({"protocol": protocol}),
        serde_json::json!({"metaData": {
            "id": "00000000-0000-4000-8000-000000000000",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema,
            "partitionColumns": [],
            "configuration": configuration,
            "createdTime": 0
        }}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("_delta_log/00000000000000000000.json"), text).unwrap();
    dir
}

/// Registers the Delta table at `dir` as `t`.
async fn open(ctx: &SessionContext, dir: &Path) -> datafusion::common::Result<Vec<RecordBatch>> {
    run(
        ctx,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{}'",
            dir.display()
        ),
    )
    .await
}

async fn open_error(dir: &Path) -> String {
    open(&variant_context(), dir).await.unwrap_err().to_string()
}

/// The error of an INSERT into the table at `dir`.
async fn insert_error(dir: &Path) -> String {
    let ctx = variant_context();
    open(&ctx, dir).await.unwrap();
    run(&ctx, "INSERT INTO t SELECT 1, parse_json('1')")
        .await
        .unwrap_err()
        .to_string()
}

#[tokio::test]
async fn reader_features_we_do_not_implement_are_refused_by_name() {
    let features = |r: &[&str]| serde_json::json!({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": r, "writerFeatures": r});
    let cm = table_with(
        "cm",
        features(&["variantType", "columnMapping"]),
        serde_json::json!({"delta.columnMapping.mode": "someday"}),
    );
    let err = open_error(&cm).await;
    assert!(err.contains("column mapping mode 'someday'"), "{err}");

    let unknown = table_with(
        "unknown",
        features(&["variantType", "someFutureFeature"]),
        serde_json::json!({}),
    );
    let err = open_error(&unknown).await;
    assert!(err.contains("someFutureFeature"), "{err}");
    // delta_table_info still describes a table we refuse (one kernel reads), with
    // the reason.
    let widened = table_with(
        "widened",
        features(&["variantType", "typeWidening"]),
        serde_json::json!({}),
    );
    let err = open_error(&widened).await;
    assert!(err.contains("'typeWidening'"), "{err}");
    let ctx = variant_context();
    let batches = run(
        &ctx,
        &format!(
            "SELECT CAST(readable AS INT), refused, array_to_string(reader_features, ',')              FROM delta_table_info('{}')",
            widened.display()
        ),
    )
    .await
    .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(
        text.contains("| 0 ")
            && text.contains("needs the reader feature 'typeWidening'")
            && text.contains("variantType,typeWidening"),
        "{text}"
    );

    let v4 = table_with(
        "v4",
        serde_json::json!({"minReaderVersion": 4, "minWriterVersion": 7, "readerFeatures": [], "writerFeatures": []}),
        serde_json::json!({}),
    );
    let err = open_error(&v4).await;
    assert!(err.contains('4'), "{err}");

    // Both variant feature names, GA and preview, are read.
    for names in [
        &["variantType"][..],
        &["variantType-preview"],
        &["variantType", "variantShredding"],
        &["variantType-preview", "variantShredding-preview"],
        &["variantType", "deletionVectors"],
    ] {
        let ok = table_with("ok", features(names), serde_json::json!({}));
        let ctx = variant_context();
        open(&ctx, &ok)
            .await
            .unwrap_or_else(|e| panic!("{names:?}: {e}"));
        assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 0);
    }
}

#[tokio::test]
async fn writer_features_we_do_not_implement_are_refused_by_name() {
    let dir = table_with(
        "rt",
        serde_json::json!({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["variantType"], "writerFeatures": ["variantType", "rowTracking", "domainMetadata"]}),
        serde_json::json!({}),
    );
    let err = insert_error(&dir).await;
    assert!(err.contains("'rowTracking'"), "{err}");

    let checked = table_with(
        "ck",
        serde_json::json!({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["variantType"], "writerFeatures": ["variantType", "checkConstraints"]}),
        serde_json::json!({"delta.constraints.positive": "id > 0"}),
    );
    let err = insert_error(&checked).await;
    assert!(err.contains("delta.constraints.positive"), "{err}");
    // Nothing was committed.
    assert!(
        !checked
            .join("_delta_log/00000000000000000001.json")
            .exists()
    );
}

#[tokio::test]
async fn concurrent_appends_both_commit() {
    let ctx = variant_context();
    let dir = scratch("concurrent");
    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t (id BIGINT, v VARIANT) STORED AS DELTA LOCATION '{}'",
            dir.display()
        ),
    )
    .await
    .unwrap();
    let inserts = (0..4).map(|i| {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            run(
                &ctx,
                &format!("INSERT INTO t SELECT {i}, parse_json('{{\"n\": {i}}}')"),
            )
            .await
            .map(|_| ())
        })
    });
    for r in futures::future::join_all(inserts).await {
        r.unwrap().unwrap();
    }
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 4);
    for v in 1..=4 {
        assert_eq!(action(&commit(&dir, v), "add").len(), 1, "version {v}");
    }
    assert!(!dir.join("_delta_log/00000000000000000005.json").exists());
}

fn variant_batch(metadata: &[&[u8]]) -> RecordBatch {
    let n = metadata.len();
    let v = StructArray::new(
        variant_fields(),
        vec![
            Arc::new(BinaryViewArray::from(metadata.to_vec())) as ArrayRef,
            Arc::new(BinaryViewArray::from(vec![&[0x0cu8, 0x05][..]; n])),
        ],
        None,
    );
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", v.data_type().clone(), true).with_metadata(variant_extension_metadata()),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n as i64)),
            Arc::new(v),
        ],
    )
    .unwrap()
}

#[tokio::test]
async fn a_failed_write_leaves_nothing_behind() {
    let ctx = variant_context();
    let empty: &[u8] = &[0x01, 0x00, 0x00];
    let good = variant_batch(&[empty; 3]);
    let bad = variant_batch(&[empty, &[0xff]]);
    let table = MemTable::try_new(good.schema(), vec![vec![good.clone(), bad]]).unwrap();
    ctx.register_table("src", Arc::new(table)).unwrap();
    let dir = scratch("atomic");
    let err = run(
        &ctx,
        &format!(
            "COPY (SELECT * FROM src) TO '{}' STORED AS DELTA",
            dir.display()
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("column 'v': malformed VARIANT value (metadata ff,"),
        "{err}"
    );
    let leftovers: Vec<_> = walk(&dir);
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // The same into an existing table: no new version, no new file.
    let existing = scratch("atomic_existing");
    run(
        &ctx,
        &format!(
            "COPY (SELECT * FROM src LIMIT 2) TO '{}' STORED AS DELTA",
            existing.display()
        ),
    )
    .await
    .unwrap();
    let before = walk(&existing);
    let err = run(
        &ctx,
        &format!(
            "COPY (SELECT * FROM src) TO '{}' STORED AS DELTA",
            existing.display()
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("malformed VARIANT"), "{err}");
    assert_eq!(walk(&existing), before);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Runs one statement the way embedders reach `ALTER TABLE` (`df_variant::sql::query`).
async fn query(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    df_variant::sql::query(ctx, sql).await?.collect().await
}

/// The protocol and metaData actions of commit `version`.
fn protocol_and_metadata(dir: &Path, version: u64) -> (Option<Value>, Option<Value>) {
    let actions = commit(dir, version);
    (
        action(&actions, "protocol").first().map(|v| (*v).clone()),
        action(&actions, "metaData").first().map(|v| (*v).clone()),
    )
}

#[tokio::test]
async fn alter_table_upgrades_and_downgrades_the_protocol() {
    let dir = scratch("alter");
    let ctx = variant_context();
    // Version 0: no VARIANT column, a legacy protocol.
    run(
        &ctx,
        &format!(
            "COPY (SELECT CAST(1 AS BIGINT) AS id) TO '{}' STORED AS DELTA",
            dir.display()
        ),
    )
    .await
    .unwrap();
    let (p, _) = protocol_and_metadata(&dir, 0);
    assert_eq!(p.unwrap()["minReaderVersion"], 1);
    open(&ctx, &dir).await.unwrap();

    // ADD COLUMN v VARIANT: table features with variantType (and what (1, 2) implied).
    query(&ctx, "ALTER TABLE t ADD COLUMN v VARIANT")
        .await
        .unwrap();
    let (p, m) = protocol_and_metadata(&dir, 1);
    let p = p.unwrap();
    assert_eq!(
        (p["minReaderVersion"].clone(), p["minWriterVersion"].clone()),
        (3.into(), 7.into())
    );
    assert_eq!(p["readerFeatures"], serde_json::json!(["variantType"]));
    assert_eq!(
        p["writerFeatures"],
        serde_json::json!(["appendOnly", "invariants", "variantType"])
    );
    let schema: Value = serde_json::from_str(m.unwrap()["schemaString"].as_str().unwrap()).unwrap();
    assert_eq!(schema["fields"][1]["name"], "v");
    assert_eq!(schema["fields"][1]["type"], "variant");
    // The registered table has the new column; appends fill it.
    run(&ctx, "INSERT INTO t SELECT 2, parse_json('{\"a\": 5}')")
        .await
        .unwrap();
    assert_eq!(count(&ctx, "SELECT count(v) FROM t").await, 1);
    assert_eq!(count(&ctx, "SELECT sum(v:a::bigint) FROM t").await, 5);

    // SET TBLPROPERTIES: variantShredding; files written after it are shredded
    // and carry per-path bounds.
    query(
        &ctx,
        "ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')",
    )
    .await
    .unwrap();
    let (p, m) = protocol_and_metadata(&dir, 3);
    let p = p.unwrap();
    assert_eq!(
        p["readerFeatures"],
        serde_json::json!(["variantType", "variantShredding"])
    );
    assert_eq!(
        m.unwrap()["configuration"]["delta.enableVariantShredding"],
        "true"
    );
    // DROP FEATURE before any file is shredded: the property goes, then the feature.
    query(&ctx, "ALTER TABLE t DROP FEATURE variantShredding")
        .await
        .unwrap();
    let (p, m) = protocol_and_metadata(&dir, 4);
    assert_eq!(
        p.unwrap()["readerFeatures"],
        serde_json::json!(["variantType"])
    );
    assert!(
        m.unwrap()["configuration"]
            .get("delta.enableVariantShredding")
            .is_none()
    );
    // On again, and a shredded file: now the feature cannot be dropped.
    query(
        &ctx,
        "ALTER TABLE t SET TBLPROPERTIES ('delta.enableVariantShredding' = 'true')",
    )
    .await
    .unwrap();
    run(&ctx, "INSERT INTO t SELECT 3, parse_json('{\"a\": 7}')")
        .await
        .unwrap();
    let add = action(&commit(&dir, 6), "add")[0].clone();
    assert!(add["stats"].as_str().unwrap().contains("\"v\":\""), "{add}");
    let shredded_path = add["path"].as_str().unwrap().to_string();
    // Dropping the feature now rewrites that file unshredded, in the commit
    // that downgrades the protocol.
    query(&ctx, "ALTER TABLE t DROP FEATURE variantShredding")
        .await
        .unwrap();
    let actions = commit(&dir, 7);
    let p = action(&actions, "protocol")[0];
    assert_eq!(p["readerFeatures"], serde_json::json!(["variantType"]));
    let removes = action(&actions, "remove");
    let adds = action(&actions, "add");
    assert_eq!(removes.len(), 1);
    assert_eq!(removes[0]["path"], shredded_path.as_str());
    assert_eq!(removes[0]["dataChange"], false);
    assert_eq!(
        (adds.len(), adds[0]["dataChange"].clone()),
        (1, false.into())
    );
    let new_file = dir.join(adds[0]["path"].as_str().unwrap());
    let batches = run(
        &ctx,
        &format!(
            "SELECT shredding FROM variant_shredding_schema('{}')",
            new_file.display()
        ),
    )
    .await
    .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(!text.contains("STRUCT<a"), "{text}");
    // variantType cannot go while v exists; unknown features are named.
    let err = query(&ctx, "ALTER TABLE t DROP FEATURE variantType")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("VARIANT column 'v' exists"), "{err}");
    let err = query(&ctx, "ALTER TABLE t DROP FEATURE rowTracking")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("does not have the feature 'rowTracking'"),
        "{err}"
    );
    // Existing columns and unknown properties are refused, nothing committed.
    for (sql, want) in [
        ("ALTER TABLE t ADD COLUMN id BIGINT", "already exists"),
        (
            "ALTER TABLE t SET TBLPROPERTIES ('delta.someday' = '1')",
            "unknown or unsupported Delta table property",
        ),
        (
            "ALTER TABLE t ADD COLUMN w NOTATYPE",
            "unknown type 'NOTATYPE'",
        ),
    ] {
        let err = query(&ctx, sql).await.unwrap_err().to_string();
        assert!(err.contains(want), "{sql}: {err}");
    }
    assert!(!dir.join("_delta_log/00000000000000000008.json").exists());
    assert_eq!(count(&ctx, "SELECT sum(v:a::bigint) FROM t").await, 12);
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variant_reshred_rewrites_a_delta_table_in_one_commit() {
    let dir = scratch("reshred");
    let ctx = variant_context();
    for (range, create) in [("id <= 3", true), ("id > 3", false)] {
        let options = if create {
            " OPTIONS ('delta.enableVariantShredding' 'true')"
        } else {
            ""
        };
        run(
            &ctx,
            &format!(
                "COPY (SELECT * FROM ({SRC}) WHERE {range}) TO '{}' STORED AS DELTA{options}",
                dir.display()
            ),
        )
        .await
        .unwrap();
    }
    open(&ctx, &dir).await.unwrap();
    let before = run(&ctx, "SELECT id, to_json(v) FROM t ORDER BY id")
        .await
        .unwrap();
    let batches = run(
        &ctx,
        &format!(
            "SELECT r.files, r.rows FROM (SELECT variant_reshred('{}', 'STRUCT<b: STRING>') AS r)",
            dir.display()
        ),
    )
    .await
    .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert!(text.contains("| 2        | 4       |"), "{text}");
    // One commit: every old file removed, a new one added, no data change.
    let actions = commit(&dir, 2);
    let removes = action(&actions, "remove");
    let adds = action(&actions, "add");
    assert_eq!((removes.len(), adds.len()), (2, 2));
    assert!(
        removes
            .iter()
            .chain(&adds)
            .all(|a| a["dataChange"] == false)
    );
    assert!(action(&actions, "protocol").is_empty());
    // The new files have the new shredding, and their stats the bounds of `b`.
    for add in &adds {
        let file = dir.join(add["path"].as_str().unwrap());
        let shredding = run(
            &ctx,
            &format!(
                "SELECT shredding FROM variant_shredding_schema('{}')",
                file.display()
            ),
        )
        .await
        .unwrap();
        let shredding = arrow::util::pretty::pretty_format_batches(&shredding)
            .unwrap()
            .to_string();
        assert!(shredding.contains("STRUCT<b: STRING>"), "{shredding}");
        let stats: Value = serde_json::from_str(add["stats"].as_str().unwrap()).unwrap();
        let bounds = decode_path_values(stats["minValues"]["v"].as_str().unwrap()).unwrap();
        assert!(
            bounds.keys().any(|k| k == &vec!["b".to_string()]),
            "{stats}"
        );
    }
    // The same rows.
    let after = run(&ctx, "SELECT id, to_json(v) FROM t ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        arrow::util::pretty::pretty_format_batches(&before)
            .unwrap()
            .to_string(),
        arrow::util::pretty::pretty_format_batches(&after)
            .unwrap()
            .to_string()
    );
    // A table that does not enable shredding is refused, untouched.
    let plain = scratch("reshred_plain");
    run(
        &ctx,
        &format!("COPY ({SRC}) TO '{}' STORED AS DELTA", plain.display()),
    )
    .await
    .unwrap();
    let err = run(
        &ctx,
        &format!(
            "SELECT variant_reshred('{}', 'STRUCT<b: STRING>')",
            plain.display()
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("does not enable shredding"), "{err}");
    assert!(!plain.join("_delta_log/00000000000000000001.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&plain);
}
