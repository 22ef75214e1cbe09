//! Interop check helper: writes VARIANT Parquet files for other engines to read, and
//! prints our reading of Parquet files other engines wrote. Driven by
//! `interop/check.py` (see `interop/README.md`).
//!
//! ```text
//! cargo run --example interop -- write OUT_DIR
//! cargo run --example interop -- read FILE.parquet [COLUMN]
//! ```
//!
//! `write OUT_DIR` builds ~200 varied JSON documents (deterministic, embedded here),
//! parses them into a VARIANT column `v` beside a BIGINT `id` and writes one Parquet
//! file per writer mode into `OUT_DIR`:
//!
//! | file | rows | writer settings |
//! |---|---|---|
//! | `unshredded.parquet` | all | `variant.shredding = 'off'` |
//! | `auto.parquet` | objects, JSON nulls and SQL NULLs | `variant.shredding = 'auto'` |
//! | `auto_mixed.parquet` | all | `'auto'` on a column mixing objects, arrays and scalars |
//! | `explicit.parquet` | all | `'auto'` + `variant.shredding_schema = 'struct<...>'` ([`EXPLICIT_SCHEMA`]) |
//! | `scalars.parquet` | all | `'auto'` + `variant.shredding_schema = 'bigint'` |
//! | `arrays.parquet` | all | `'auto'` + `variant.shredding_schema = 'array<struct<sku:string,qty:bigint>>'` |
//!
//! Every file has row groups of at most 64 rows. It also writes `OUT_DIR/docs.jsonl`
//! (one line per row: `{"id": N, "doc": "<JSON text>" | null}`, null for a SQL NULL
//! row) and `OUT_DIR/answers.json`: `{"<file>": [[id, "<to_json(v)>" | null], ...]}`,
//! each file read back with this crate, ordered by `id`.
//!
//! `read FILE [COLUMN]` prints one NDJSON line per row of the file, in file order:
//! `{"row": N, "id": ID | null, "<column>": "<to_json text>" | null, ...}` for every
//! VARIANT column of the file (or only `COLUMN`); `id` is the file's `id` column cast
//! to BIGINT when there is one. A row whose value cannot be read gets `null` there
//! and `"errors": {"<column>": "<message>"}` (the other rows are still printed).

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use parquet::file::reader::{FileReader, SerializedFileReader};
use serde_json::{Value, json};

/// The explicit shredding schema of `explicit.parquet`: some of the generated
/// event fields, with types that fit most rows (the others fall back to `value`).
const EXPLICIT_SCHEMA: &str = "struct<event_id:bigint,kind:string,\
user:struct<id:bigint,name:string,tags:array<string>>,\
price:decimal(18,3),score:double,flag:boolean,mixed:bigint,big:bigint,\
items:array<struct<sku:string,qty:int>>,empty:struct<x:int>>";

/// Rows per row group of every file written.
const ROW_GROUP_ROWS: usize = 64;

/// Hand-written documents covering the edge cases; `None` is a SQL NULL row.
const FIXED: &[Option<&str>] = &[
    Some(r#"{"a": 1, "b": "x", "c": {"d": 1.5}, "tags": ["p", "q"]}"#),
    Some(r#"{"price": 12.50, "tiny": 1e-3, "huge": 1.5e300, "neg": -2.5E-300, "e20": 1e20}"#),
    Some(
        r#"{"i8": 127, "i8n": -128, "i16": 32767, "i32": 2147483647, "i32n": -2147483648, "gt31": 2147483648, "gt32": 4294967296, "gt53": 9007199254740993, "i64max": 9223372036854775807, "i64min": -9223372036854775808}"#,
    ),
    Some(
        r#"{"gt63": 9223372036854775808, "neg_gt63": -9223372036854775809, "u64max": 18446744073709551615}"#,
    ),
    Some(
        r#"{"dec": 0.001, "dec2": -0.50, "dec9": 1234567.89, "dec18": 1234567890123456.78, "dec38": 12345678901234567890123456789012345.678, "over38": 123456789012345678901234567890123456789.5}"#,
    ),
    Some(
        r#"{"zero": 0, "negzero": -0, "dzero": 0.0, "dnegzero": -0.0, "ezero": 0e0, "one_e": 1E0, "sub": 5e-324, "max": 1.7976931348623157e308, "third": 0.3333333333333333}"#,
    ),
    Some(
        r#"{"s": "plain", "u": "h\u00e9llo w\u00f6rld", "raw": "émile 日本語 😀", "esc": "q\"uote\\back\/slash", "ctl": "tab\there\nnl\r\u0001\u001f\b\f", "surrogate": "\ud83d\ude00"}"#,
    ),
    Some(
        r#"{"": "empty key", "with space": 1, "quo\"te": 2, "ключ": 3, "😀": 4, "a.b": 5, "[0]": 6}"#,
    ),
    Some(
        r#"{"t": true, "f": false, "n": null, "nested_null": {"x": null}, "arr_null": [null, null]}"#,
    ),
    Some(r"{}"),
    Some(r"[]"),
    Some(
        r#"{"e": {}, "a": [], "ea": [{}, []], "deep": {"l1": {"l2": {"l3": {"l4": {"l5": [[[[1]]]]}}}}}}"#,
    ),
    Some(r"[1, 2, 3]"),
    Some(r#"["a", null, 1.5, true, {"k": "v"}, [1, [2, [3]]]]"#),
    Some(r#"[{"sku": "A-1", "qty": 2}, {"sku": "B-9", "qty": "3"}, {"sku": null}]"#),
    Some(r#""just a string""#),
    Some(r"42"),
    Some(r"-9223372036854775808"),
    Some(r"3.14"),
    Some(r"2.5e-7"),
    Some(r"true"),
    Some(r"false"),
    Some(r"null"),
    None,
    Some(r#""""#),
    Some(r#"  {"ws" :  [ 1 ,2 ] }  "#),
    Some(r#"{"b": 2, "a": 1, "c": {"z": 26, "y": 25, "x": 24}}"#),
    Some(r#"{"A": 1, "a": 2, "B": 3, "b": 4, "_": 5, "~": 6, "é": 7, "e": 8}"#),
    None,
];

/// A tiny deterministic PRNG (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// JSON string literal; `ascii` escapes every non-ASCII character as `\uXXXX`
/// (surrogate pairs above the BMP), to exercise the parser's escape handling.
fn json_str(s: &str, ascii: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

const NAMES: &[&str] = &[
    "ana",
    "émile",
    "zoë",
    "李雷",
    "o'brien",
    "say \"hi\"",
    "back\\slash",
    "tab\tname",
    "😀 smile",
    "",
];
const KINDS: &[&str] = &["click", "view", "purchase", "signup", "logout"];
const TAGS: &[&str] = &["new", "mobile", "vip", "beta", "ünïcödé", "line\nbreak"];
const DECIMALS: &[&str] = &["12.50", "0.001", "3", "-7.125", "99999.999", "0.10"];
const DOUBLES: &[&str] = &[
    "1.5e300",
    "1e-3",
    "2.5E-10",
    "-1.25e2",
    "6.02214076e23",
    "1e20",
    "0.1e1",
];

/// One generated event object.
fn event(rng: &mut Rng, id: i64) -> String {
    let mut fields: Vec<String> = Vec::new();
    let ascii = rng.chance(30);
    fields.push(format!(
        r#""event_id": {}"#,
        id * 1000 + rng.below(1000) as i64
    ));
    fields.push(format!(r#""kind": {}"#, json_str(rng.pick(KINDS), ascii)));
    if rng.chance(90) {
        let mut user = vec![format!(r#""id": {}"#, rng.below(100_000))];
        if rng.chance(85) {
            user.push(format!(r#""name": {}"#, json_str(rng.pick(NAMES), ascii)));
        }
        if rng.chance(70) {
            let n = rng.below(4);
            let tags: Vec<String> = (0..n).map(|_| json_str(rng.pick(TAGS), ascii)).collect();
            user.push(format!(r#""tags": [{}]"#, tags.join(", ")));
        }
        fields.push(format!(r#""user": {{{}}}"#, user.join(", ")));
    }
    match rng.below(10) {
        0 => fields.push(r#""price": null"#.to_string()),
        1 => {} // missing
        2 => fields.push(r#""price": "n/a""#.to_string()),
        _ => fields.push(format!(r#""price": {}"#, rng.pick(DECIMALS))),
    }
    if rng.chance(80) {
        fields.push(format!(r#""score": {}"#, rng.pick(DOUBLES)));
    }
    if rng.chance(75) {
        fields.push(format!(r#""flag": {}"#, rng.chance(50)));
    }
    // A field whose type changes between rows.
    let mixed = match rng.below(7) {
        0 => format!("{}", rng.below(1000) as i64 - 500),
        1 => json_str("text", false),
        2 => r#"{"nested": [1, "two", 3.0]}"#.to_string(),
        3 => "[true, null]".to_string(),
        4 => "null".to_string(),
        5 => "4.75".to_string(),
        _ => format!("{}", 1u64 << (31 + rng.below(32))),
    };
    fields.push(format!(r#""mixed": {mixed}"#));
    if rng.chance(60) {
        // > 2^31 and > 2^53.
        let big = match rng.below(3) {
            0 => (1i64 << 31) + rng.below(1000) as i64,
            1 => (1i64 << 53) + 1 + rng.below(1000) as i64,
            _ => -(1i64 << 62) - rng.below(1000) as i64,
        };
        fields.push(format!(r#""big": {big}"#));
    }
    if rng.chance(50) {
        let n = rng.below(4);
        let items: Vec<String> = (0..n)
            .map(|i| {
                let qty = if rng.chance(85) {
                    format!("{}", rng.below(20))
                } else {
                    json_str("many", false)
                };
                format!(r#"{{"sku": "S-{i}{}", "qty": {qty}}}"#, rng.below(100))
            })
            .collect();
        fields.push(format!(r#""items": [{}]"#, items.join(", ")));
    }
    if rng.chance(20) {
        fields.push(r#""empty": {}"#.to_string());
    }
    if rng.chance(10) {
        fields.push(format!(r#""rare_{}": "r""#, rng.below(3)));
    }
    // Field order in the text must not matter.
    for i in (1..fields.len()).rev() {
        if rng.chance(20) {
            let j = rng.below(i as u64 + 1) as usize;
            fields.swap(i, j);
        }
    }
    format!("{{{}}}", fields.join(", "))
}

/// The documents by id (1-based): the fixed ones, a few large ones and generated rows.
fn documents() -> Vec<(i64, Option<String>)> {
    let mut docs: Vec<Option<String>> = FIXED.iter().map(|d| d.map(str::to_string)).collect();
    // Large containers: > 255 fields / elements (is_large), 2- and 3-byte offsets.
    let many_fields: Vec<String> = (0..300).map(|i| format!(r#""f{i:03}": {i}"#)).collect();
    docs.push(Some(format!("{{{}}}", many_fields.join(", "))));
    let many_elems: Vec<String> = (0..300).map(|i| format!("{}", i * 7)).collect();
    docs.push(Some(format!("[{}]", many_elems.join(","))));
    docs.push(Some(format!(
        r#"{{"long": {}, "after": 1}}"#,
        json_str(&"0123456789abcdef".repeat(5000), false)
    )));
    docs.push(Some(format!(
        r#"{{"medium": {}, "ascii64": {}}}"#,
        json_str(&"ü".repeat(200), false),
        json_str(&"x".repeat(64), false)
    )));

    let mut rng = Rng(0x5EED_2026);
    while docs.len() < 200 {
        let id = docs.len() as i64 + 1;
        let doc = match id % 20 {
            0 => None,
            7 => Some(match rng.below(4) {
                0 => format!("[{}, {}]", rng.below(10), rng.below(10)),
                1 => format!(
                    r#"[{{"sku": "X-{}", "qty": {}}}]"#,
                    rng.below(9),
                    rng.below(9)
                ),
                2 => "[]".to_string(),
                _ => format!(r"[{}, null]", event(&mut rng, id)),
            }),
            13 => Some(
                rng.pick(&["1", "\"s\"", "null", "12.50", "1.5e300", "false", "{}"])
                    .to_string(),
            ),
            _ => Some(event(&mut rng, id)),
        };
        docs.push(doc);
    }
    docs.into_iter()
        .enumerate()
        .map(|(i, d)| (i as i64 + 1, d))
        .collect()
}

fn err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Execution(msg.into())
}

fn io(e: std::io::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A session that writes row groups of [`ROW_GROUP_ROWS`] rows and reads files in
/// order (one partition).
fn session() -> SessionContext {
    let mut config = SessionConfig::new().with_target_partitions(1);
    config.options_mut().execution.parquet.max_row_group_size = ROW_GROUP_ROWS;
    df_variant::variant_context_with_config(config)
}

/// `(rows, row groups, typed_value leaf columns)` of a Parquet file.
fn parquet_shape(path: &Path) -> Result<(i64, usize, usize)> {
    let file = fs::File::open(path).map_err(io)?;
    let reader = SerializedFileReader::new(file)?;
    let meta = reader.metadata();
    let typed = meta
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .filter(|c| c.path().parts().iter().any(|p| p == "typed_value"))
        .count();
    Ok((
        meta.file_metadata().num_rows(),
        meta.num_row_groups(),
        typed,
    ))
}

async fn write(out_dir: &Path) -> Result<()> {
    fs::create_dir_all(out_dir).map_err(io)?;
    let docs = documents();

    let mut jsonl = String::new();
    for (id, doc) in &docs {
        jsonl.push_str(&json!({"id": id, "doc": doc}).to_string());
        jsonl.push('\n');
    }
    fs::write(out_dir.join("docs.jsonl"), jsonl).map_err(io)?;

    let ctx = session();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("j", DataType::Utf8, true),
    ]));
    let ids = Int64Array::from_iter_values(docs.iter().map(|(id, _)| *id));
    let texts: StringArray = docs.iter().map(|(_, d)| d.as_deref()).collect();
    let batch = RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(texts)])?;
    ctx.register_batch("docs", batch)?;
    run(
        &ctx,
        "CREATE TABLE src AS SELECT id, parse_json(j) AS v FROM docs",
    )
    .await?;

    let objects = "WHERE v IS NULL OR is_variant_null(v) OR schema_of_variant(v) LIKE 'OBJECT%'";
    let files: [(&str, &str, &str, &str); 6] = [
        ("unshredded.parquet", "off", "", ""),
        ("auto.parquet", "auto", "", objects),
        ("auto_mixed.parquet", "auto", "", ""),
        ("explicit.parquet", "auto", EXPLICIT_SCHEMA, ""),
        ("scalars.parquet", "auto", "bigint", ""),
        (
            "arrays.parquet",
            "auto",
            "array<struct<sku:string,qty:bigint>>",
            "",
        ),
    ];

    let mut answers: BTreeMap<String, Value> = BTreeMap::new();
    for (name, shredding, schema, filter) in files {
        let path = out_dir.join(name);
        let path_str = path
            .to_str()
            .ok_or_else(|| err(format!("not UTF-8: {}", path.display())))?;
        let _ = fs::remove_file(&path);
        run(&ctx, &format!("SET variant.shredding = '{shredding}'")).await?;
        run(
            &ctx,
            &format!("SET variant.shredding_schema = {}", sql_str(schema)),
        )
        .await?;
        run(
            &ctx,
            &format!(
                "COPY (SELECT id, v FROM src {filter} ORDER BY id) TO {} STORED AS PARQUET",
                sql_str(path_str)
            ),
        )
        .await?;

        // Read it back with a fresh session (nothing cached).
        let reader = session();
        let batches = run(
            &reader,
            &format!(
                "SELECT id, to_json(v) FROM {} ORDER BY id",
                sql_str(path_str)
            ),
        )
        .await?;
        let mut rows = Vec::new();
        let mut nulls = 0;
        for b in &batches {
            let ids = b.column(0).as_primitive::<Int64Type>();
            let texts = b.column(1).as_string::<i32>();
            for i in 0..b.num_rows() {
                let text = (!texts.is_null(i)).then(|| texts.value(i).to_string());
                nulls += usize::from(text.is_none());
                rows.push(json!([ids.value(i), text]));
            }
        }
        let (n, groups, typed) = parquet_shape(&path)?;
        if n as usize != rows.len() {
            return Err(err(format!(
                "{name}: {n} rows in the file, {} read",
                rows.len()
            )));
        }
        println!(
            "{name:<20} rows={n:<4} sql_nulls={nulls:<3} row_groups={groups} typed_value_leaves={typed:<3} \
             shredding={shredding} schema={}",
            if schema.is_empty() { "-" } else { schema }
        );
        answers.insert(name.to_string(), Value::Array(rows));
    }
    let text = serde_json::to_string_pretty(&answers).map_err(|e| err(e.to_string()))?;
    fs::write(out_dir.join("answers.json"), text).map_err(io)?;
    println!(
        "wrote {} documents, {} files and answers.json to {}",
        docs.len(),
        answers.len(),
        out_dir.display()
    );
    Ok(())
}

/// `to_json` of every column of `batch`, one `Vec` per row.
async fn to_json_rows(batch: RecordBatch) -> Result<Vec<Vec<Option<String>>>> {
    let ctx = session();
    let cols: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| format!("to_json(\"{}\")", f.name().replace('"', "\"\"")))
        .collect();
    ctx.register_batch("b", batch)?;
    let out = run(&ctx, &format!("SELECT {} FROM b", cols.join(", "))).await?;
    let mut rows = Vec::new();
    for b in &out {
        for i in 0..b.num_rows() {
            rows.push(
                (0..b.num_columns())
                    .map(|k| {
                        let texts = b.column(k).as_string::<i32>();
                        (!texts.is_null(i)).then(|| texts.value(i).to_string())
                    })
                    .collect(),
            );
        }
    }
    Ok(rows)
}

async fn read(file: &Path, column: Option<&str>) -> Result<()> {
    let ctx = session();
    let path = file
        .to_str()
        .ok_or_else(|| err(format!("not UTF-8: {}", file.display())))?;
    // DataFusion's own Parquet reader: the columns exactly as the file stores them
    // (a shredded column stays shredded), so that a row the file shreds against
    // the spec is reported by `to_json` below, row by row, instead of failing the
    // reassembly of its whole batch in the scan.
    ctx.register_parquet("interop_file", path, ParquetReadOptions::default())
        .await?;
    let table = "interop_file";
    let df = ctx.sql(&format!("SELECT * FROM {table}")).await?;
    let schema = df.schema().as_arrow().clone();
    let variant_cols: Vec<String> = schema
        .fields()
        .iter()
        .filter(|f| match column {
            Some(c) => f.name() == c,
            None => df_variant::array::is_variant_field(f),
        })
        .map(|f| f.name().clone())
        .collect();
    if variant_cols.is_empty() {
        return Err(err(match column {
            Some(c) => format!("{path}: no column {c}"),
            None => format!("{path}: no VARIANT column in {schema}"),
        }));
    }
    let has_id = schema
        .fields()
        .iter()
        .any(|f| f.name() == "id" && f.data_type().is_integer());
    let id_expr = if has_id {
        "CAST(\"id\" AS BIGINT)"
    } else {
        "CAST(NULL AS BIGINT)"
    };
    let cols: Vec<String> = variant_cols
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect();
    // The raw columns first, then `to_json` per batch; when a batch fails, per row
    // and column, so one bad row does not hide the others.
    let raw = run(
        &ctx,
        &format!("SELECT {id_expr}, {} FROM {table}", cols.join(", ")),
    )
    .await?;
    let mut row = 0u64;
    let mut out = String::new();
    for b in &raw {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let values = b.project(&(1..b.num_columns()).collect::<Vec<_>>())?;
        let texts: Vec<Vec<std::result::Result<Option<String>, String>>> =
            match to_json_rows(values.clone()).await {
                Ok(rows) => rows
                    .into_iter()
                    .map(|r| r.into_iter().map(Ok).collect())
                    .collect(),
                Err(_) => {
                    let mut rows = Vec::new();
                    for i in 0..values.num_rows() {
                        let mut cells = Vec::new();
                        for k in 0..values.num_columns() {
                            let one = values.slice(i, 1).project(&[k])?;
                            cells.push(match to_json_rows(one).await {
                                Ok(mut r) => Ok(r.pop().and_then(|mut c| c.pop()).flatten()),
                                Err(e) => Err(e.strip_backtrace()),
                            });
                        }
                        rows.push(cells);
                    }
                    rows
                }
            };
        for (i, cells) in texts.into_iter().enumerate() {
            let mut line = serde_json::Map::new();
            line.insert("row".into(), json!(row));
            line.insert(
                "id".into(),
                if ids.is_null(i) {
                    Value::Null
                } else {
                    json!(ids.value(i))
                },
            );
            let mut errors = serde_json::Map::new();
            for (name, cell) in variant_cols.iter().zip(cells) {
                let v = match cell {
                    Ok(Some(text)) => Value::String(text),
                    Ok(None) => Value::Null,
                    Err(e) => {
                        errors.insert(name.clone(), Value::String(e));
                        Value::Null
                    }
                };
                line.insert(name.clone(), v);
            }
            if !errors.is_empty() {
                line.insert("errors".into(), Value::Object(errors));
            }
            out.push_str(&Value::Object(line).to_string());
            out.push('\n');
            row += 1;
        }
    }
    std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes()).map_err(io)?;
    Ok(())
}

fn usage() -> DataFusionError {
    err("usage: interop write OUT_DIR | interop read FILE.parquet [COLUMN]")
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", dir] => write(&PathBuf::from(dir)).await,
        ["read", file] => read(Path::new(file), None).await,
        ["read", file, column] => read(Path::new(file), Some(column)).await,
        _ => Err(usage()),
    }
}
