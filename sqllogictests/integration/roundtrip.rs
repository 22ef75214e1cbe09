//! Round trip through Parquet in every shredding mode: random JSON documents →
//! `COPY ... TO` with `variant.shredding` off / auto (several inference settings) /
//! explicit schemas that fit some rows and not others → read back → `to_json` of
//! every row identical to the source's. Small row groups and several files per
//! write; finally all the files of all modes are read as one table (each file with
//! its own layout) and compared again.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use arrow::array::{Array, AsArray};
use arrow::datatypes::Int64Type;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use parquet::basic::LogicalType;
use parquet::file::reader::{FileReader, SerializedFileReader};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Field names; the first few are frequent, the later ones rare.
const NAMES: &[&str] = &[
    "id", "kind", "user", "n", "tags", "price", "ts", "flag", "nested", "x y", "é", "rare1",
    "rare2",
];

fn scalar(rng: &mut StdRng, out: &mut String) {
    match rng.random_range(0..13) {
        0 => out.push_str("null"),
        1 => out.push_str(if rng.random() { "true" } else { "false" }),
        2 => write!(out, "{}", rng.random_range(-128i64..128)).unwrap(),
        3 => write!(out, "{}", rng.random_range(-40_000i64..40_000)).unwrap(),
        4 => write!(out, "{}", rng.random::<i32>()).unwrap(),
        5 => write!(out, "{}", rng.random::<i64>()).unwrap(),
        // Decimals as written, with trailing zeros and exponents.
        6 => write!(
            out,
            "{}.{:02}",
            rng.random_range(-999i64..999),
            rng.random_range(0..100)
        )
        .unwrap(),
        7 => write!(
            out,
            "{}e{}",
            rng.random_range(1..99),
            rng.random_range(-5..5)
        )
        .unwrap(),
        8 => write!(out, "{:e}", rng.random::<f64>() * 1e300).unwrap(),
        // Beyond decimal(38): a double.
        9 => out.push_str("123456789012345678901234567890123456789.5"),
        10 => write!(out, "\"s{}\"", rng.random_range(0..50)).unwrap(),
        11 => out.push_str("\"quote \\\" back \\\\ tab \\t ü 🙂\""),
        _ => out.push_str("\"2024-01-01T00:00:00Z\""),
    }
}

/// A value whose type tends to depend on the field (so inference shreds it) but
/// sometimes does not (so rows fall back to `value`).
fn value_for(rng: &mut StdRng, field: usize, depth: usize, out: &mut String) {
    let consistent = rng.random_bool(0.85);
    let kind = if consistent {
        field % 5
    } else {
        rng.random_range(0..5)
    };
    match kind {
        0 if depth < 3 => object(rng, depth + 1, out),
        1 if depth < 3 => {
            out.push('[');
            for i in 0..rng.random_range(0..4) {
                if i > 0 {
                    out.push(',');
                }
                if rng.random_bool(0.7) {
                    write!(out, "{}", rng.random_range(0..1000)).unwrap();
                } else {
                    value_for(rng, field + 1, depth + 1, out);
                }
            }
            out.push(']');
        }
        2 => write!(out, "{}", rng.random_range(-1000i64..1000)).unwrap(),
        3 => write!(out, "\"v{}\"", rng.random_range(0..20)).unwrap(),
        _ => scalar(rng, out),
    }
}

fn object(rng: &mut StdRng, depth: usize, out: &mut String) {
    out.push('{');
    let mut first = true;
    for (i, name) in NAMES.iter().enumerate() {
        let p = if i < 6 {
            0.9
        } else if i < 11 {
            0.4
        } else {
            0.03
        };
        if !rng.random_bool(p) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        write!(out, "\"{name}\":").unwrap();
        value_for(rng, i, depth, out);
    }
    out.push('}');
}

fn document(rng: &mut StdRng) -> Option<String> {
    let mut out = String::new();
    match rng.random_range(0..40) {
        0 => return None, // SQL NULL
        1 => scalar(rng, &mut out),
        2 => value_for(rng, 1, 1, &mut out),
        _ => object(rng, 0, &mut out),
    }
    Some(out)
}

async fn collect_json(ctx: &SessionContext, sql: &str) -> Result<BTreeMap<i64, Option<String>>> {
    let mut out = BTreeMap::new();
    for batch in ctx.sql(sql).await?.collect().await? {
        let ids = batch.column(0).as_primitive::<Int64Type>();
        let json = arrow::compute::cast(batch.column(1), &arrow::datatypes::DataType::Utf8)?;
        let json = json.as_string::<i32>();
        for i in 0..batch.num_rows() {
            let text = (!json.is_null(i)).then(|| json.value(i).to_string());
            assert!(out.insert(ids.value(i), text).is_none(), "duplicate id");
        }
    }
    Ok(out)
}

fn diff(
    what: &str,
    expected: &BTreeMap<i64, Option<String>>,
    got: &BTreeMap<i64, Option<String>>,
) -> Option<String> {
    if expected.len() != got.len() {
        return Some(format!(
            "{what}: {} rows, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (id, want) in expected {
        if got.get(id) != Some(want) {
            return Some(format!(
                "{what}: row {id}: got {:?}, expected {want:?}",
                got.get(id)
            ));
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_documents_round_trip_in_every_shredding_mode() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("df_variant_roundtrip_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let rows = 3000;
    let mut values = String::new();
    for id in 0..rows {
        if id > 0 {
            values.push_str(", ");
        }
        match document(&mut rng) {
            Some(doc) => write!(values, "({id}, '{}')", doc.replace('\'', "''")).unwrap(),
            None => write!(values, "({id}, NULL)").unwrap(),
        }
    }

    let ctx = df_variant::variant_context();
    ctx.sql(&format!(
        "CREATE TABLE src AS SELECT CAST(id AS BIGINT) AS id, parse_json(j) AS v FROM (VALUES {values}) t(id, j)"
    ))
    .await?
    .collect()
    .await?;
    // Small row groups and several output files per write.
    for set in [
        "SET datafusion.execution.parquet.max_row_group_size = 500",
        "SET datafusion.execution.target_partitions = 3",
        "SET datafusion.execution.batch_size = 700",
    ] {
        ctx.sql(set).await?.collect().await?;
    }
    let expected = collect_json(&ctx, "SELECT id, to_json(v) FROM src").await?;

    let modes: &[(&str, &[&str])] = &[
        ("off", &["SET variant.shredding = 'off'"]),
        ("auto", &["SET variant.shredding = 'auto'"]),
        (
            "auto_small_sample",
            &[
                "SET variant.shredding_sample_rows = 7",
                "SET variant.shredding_min_field_fraction = 0",
            ],
        ),
        ("auto_few_leaves", &["SET variant.shredding_max_leaves = 3"]),
        (
            "schema_object",
            &[
                "SET variant.shredding_sample_rows = 4096",
                "SET variant.shredding_max_leaves = 128",
                "SET variant.shredding_min_field_fraction = 0.1",
                "SET variant.shredding_schema = 'struct<id:tinyint,kind:decimal(5,2),user:struct<id:int,n:string>,n:bigint,tags:array<bigint>,price:double,ts:timestamp,flag:boolean,`x y`:date,`é`:binary>'",
            ],
        ),
        (
            "schema_scalar",
            &["SET variant.shredding_schema = 'bigint'"],
        ),
        (
            "schema_string",
            &["SET variant.shredding_schema = 'string'"],
        ),
        (
            "schema_array",
            &["SET variant.shredding_schema = 'array<struct<id:string>>'"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, settings) in modes {
        for s in *settings {
            ctx.sql(s).await?.collect().await?;
        }
        let out = dir.join(name);
        ctx.sql(&format!(
            "COPY (SELECT id, v FROM src) TO '{}/' STORED AS PARQUET",
            out.display()
        ))
        .await?
        .collect()
        .await?;
        let files = std::fs::read_dir(&out).unwrap().count();
        assert!(files > 1, "{name}: expected several files, got {files}");
        let got = collect_json(
            &ctx,
            &format!("SELECT id, to_json(v) FROM '{}/'", out.display()),
        )
        .await?;
        failures.extend(diff(name, &expected, &got));
    }

    // Every mode checked something real: at least one file per shredding mode
    // is shredded.
    let shredded = collect_json(
        &ctx,
        &format!(
            "SELECT CAST(count(*) AS BIGINT), CAST(count(shredding) AS VARCHAR) FROM variant_shredding_schema('{}/auto/')",
            dir.display()
        ),
    )
    .await?;
    let (files, with_shredding) = shredded.into_iter().next().unwrap();
    assert_eq!(with_shredding.as_deref(), Some(files.to_string().as_str()));

    // Every file carries the VARIANT annotation with specification version 1
    // (Spark 4.3 refuses a file without it).
    for (name, _) in modes {
        for entry in std::fs::read_dir(dir.join(name)).unwrap() {
            let path = entry.unwrap().path();
            let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
            let schema = reader.metadata().file_metadata().schema_descr_ptr();
            let v = schema
                .root_schema()
                .get_fields()
                .iter()
                .find(|f| f.name() == "v")
                .unwrap();
            assert_eq!(
                v.get_basic_info().logical_type_ref(),
                Some(&LogicalType::variant(Some(1))),
                "{}",
                path.display()
            );
        }
    }

    // All layouts in one table: the files disagree on v's layout.
    let all_dir = dir.join("all");
    std::fs::create_dir_all(&all_dir).unwrap();
    for (name, _) in modes {
        for entry in std::fs::read_dir(dir.join(name)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(
                entry.path(),
                all_dir.join(format!("{name}_{}", entry.file_name().to_string_lossy())),
            )
            .unwrap();
        }
    }
    let got_all = collect_json(
        &ctx,
        &format!(
            "SELECT id, min(to_json(v)) FROM '{}/' GROUP BY id HAVING count(DISTINCT coalesce(to_json(v), 'SQL NULL')) = 1 AND count(*) = {}",
            all_dir.display(),
            modes.len()
        ),
    )
    .await?;
    failures.extend(diff("all layouts in one table", &expected, &got_all));

    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
