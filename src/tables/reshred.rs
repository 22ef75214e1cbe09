//! `variant_reshred(path, schema)`: rewrites the Parquet files of a folder (or
//! one file) with a new shredding, proves every row unchanged, and only then
//! swaps the files in.
//!
//! ```sql
//! SELECT variant_reshred('events/', 'STRUCT<commit: STRUCT<collection: STRING>, did: STRING>');
//! -- {files: 4, rows: 1000000, bytes_before: 61234567, bytes_after: 48765432, seconds: 3.2}
//! ```
//!
//! For each file, a new file is written beside it in a hidden staging folder
//! (`.reshred-<id>/`, which table listings skip) with the new shredding,
//! through the same writer as `COPY`. Then each new file is read back and
//! compared with the old one, row by row in file order: every column equal, and
//! every VARIANT column (also inside structs) equal through `to_json`, which
//! tells a SQL NULL (NULL) from a variant null (`null`). Only when every file
//! checks out are the new files renamed over the old ones, one atomic rename
//! each; a file is then either wholly old or wholly new, and both hold the same
//! rows. If anything fails, or the process is killed before the renames, the old
//! files stay as they were (a staging folder left by a killed run is removed by
//! the next run in that folder). It runs when the query runs (never while it is
//! planned or explained) and returns what it did.
//!
//! The argument is a Parquet file, or a folder or glob of them (the location of
//! a `CREATE EXTERNAL TABLE`); the schema is a shredding schema as
//! `variant.shredding_schema` takes it, such as the `schema` row of
//! `variant_shredding_advice`. A Delta table's folder is re-shredded by one
//! `remove` + `add` commit instead of renames ([`crate::delta::reshred`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, Float64Array, Int64Array, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, plan_datafusion_err, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

pub use crate::parquet::reshred::VARIANT_RESHRED;
use crate::parquet::reshred::{ReshredReport, reshred_files};

/// The function described in the module docs.
#[derive(Debug)]
pub struct VariantReshred {
    signature: Signature,
    /// The session's runtime, whose file listing cache must forget the
    /// rewritten files (DataFusion keeps a table's listing, sizes included).
    runtime: Option<Arc<RuntimeEnv>>,
}

impl PartialEq for VariantReshred {
    fn eq(&self, other: &Self) -> bool {
        self.signature == other.signature
    }
}

impl Eq for VariantReshred {}

impl std::hash::Hash for VariantReshred {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.signature.hash(state);
    }
}

impl VariantReshred {
    /// The function for a session on `runtime`.
    pub fn new(runtime: Option<Arc<RuntimeEnv>>) -> Self {
        Self {
            // Volatile: never folded into a constant while the query is planned.
            signature: Signature::exact(vec![DataType::Utf8, DataType::Utf8], Volatility::Volatile),
            runtime,
        }
    }
}

/// The function as a `ScalarUDF`, for a session on `runtime`.
pub fn variant_reshred_udf(runtime: Option<Arc<RuntimeEnv>>) -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(VariantReshred::new(runtime)))
}

fn report_fields() -> Fields {
    Fields::from(vec![
        Field::new("files", DataType::Int64, false),
        Field::new("rows", DataType::Int64, false),
        Field::new("bytes_before", DataType::Int64, false),
        Field::new("bytes_after", DataType::Int64, false),
        Field::new("seconds", DataType::Float64, false),
    ])
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        datafusion::logical_expr::DocSection {
            include: true,
            label: "Variant Functions",
            description: None,
        },
        "Rewrites Parquet files with a new shredding, checks every row, then swaps the files in.",
        "variant_reshred(path, shredding_schema)",
    )
    .build()
});

impl ScalarUDFImpl for VariantReshred {
    fn name(&self) -> &'static str {
        VARIANT_RESHRED
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Struct(report_fields()))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let text = |i: usize| -> Result<String> {
            match &args.args[i] {
                ColumnarValue::Scalar(s) => match s.try_as_str() {
                    Some(Some(t)) => Ok(t.to_string()),
                    _ => plan_err!("{VARIANT_RESHRED}: argument {} must not be NULL", i + 1),
                },
                ColumnarValue::Array(_) => {
                    plan_err!("{VARIANT_RESHRED}: argument {} must be a literal", i + 1)
                }
            }
        };
        let (path, ddl) = (text(0)?, text(1)?);
        if args.number_rows != 1 {
            return plan_err!(
                "{VARIANT_RESHRED}: call it once, on its own (SELECT {VARIANT_RESHRED}(...)), not over the {} rows of a table",
                args.number_rows
            );
        }
        let options = Arc::clone(&args.config_options);
        // The work blocks (it runs queries of its own): on a thread of its own.
        let report = std::thread::scope(|s| {
            s.spawn(|| {
                let report = if is_delta_table(&path) {
                    reshred_delta(&path, &ddl, &options)?
                } else {
                    let files = local_files(&path)?;
                    reshred_files(&files, &ddl, &options)?
                };
                // The session's tables listed the old files (sizes included).
                if let Some(cache) = self
                    .runtime
                    .as_ref()
                    .and_then(|r| r.cache_manager.get_list_files_cache())
                {
                    cache.clear();
                }
                Ok::<_, datafusion::error::DataFusionError>(report)
            })
            .join()
            .map_err(|_| exec_datafusion_err!("{VARIANT_RESHRED}: the rewrite panicked"))
        })??;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![report.files as i64])),
            Arc::new(Int64Array::from(vec![report.rows as i64])),
            Arc::new(Int64Array::from(vec![report.bytes_before as i64])),
            Arc::new(Int64Array::from(vec![report.bytes_after as i64])),
            Arc::new(Float64Array::from(vec![report.seconds])),
        ];
        let row = StructArray::try_new(report_fields(), columns, None)?;
        let value = ScalarValue::Struct(Arc::new(row));
        Ok(ColumnarValue::Scalar(value))
    }
}

/// Whether `path` is the folder of a Delta table.
fn is_delta_table(path: &str) -> bool {
    Path::new(path.strip_prefix("file://").unwrap_or(path))
        .join("_delta_log")
        .is_dir()
}

/// A Delta table's re-shred: one `remove` + `add` commit
/// ([`crate::delta::reshred`]).
fn reshred_delta(path: &str, ddl: &str, options: &ConfigOptions) -> Result<ReshredReport> {
    crate::shredding::typed_value_from_ddl(ddl)
        .map_err(|e| plan_datafusion_err!("{VARIANT_RESHRED}: {e}"))?;
    #[cfg(feature = "delta")]
    return crate::delta::reshred::reshred_table(path, ddl, options);
    #[cfg(not(feature = "delta"))]
    {
        let _ = options;
        plan_err!("{VARIANT_RESHRED}: {path} is a Delta table; this build has no Delta support")
    }
}

/// The Parquet files a path names.
fn local_files(path: &str) -> Result<Vec<PathBuf>> {
    Ok(crate::fs::resolve(VARIANT_RESHRED, path)?
        .into_iter()
        .map(|f| f.path)
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect())
}
