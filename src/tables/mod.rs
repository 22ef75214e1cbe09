//! The functions that take a table by path or by name, above [`crate::parquet`]
//! and [`crate::delta`]: `variant_paths`, `variant_shredding_advice`,
//! `variant_workload` and `variant_reshred`. What they compute lives below
//! (footers, samples and rewrites in [`crate::parquet`], the log in
//! [`crate::workload`], Delta commits in [`crate::delta`]); this module decides
//! which files an argument names: a registered table over Parquet files or a
//! Delta table, a Delta table's folder (its live files), or a file, folder or
//! glob of Parquet files.
//!
//! ```sql
//! SELECT path, type FROM variant_paths('events/');      -- a folder
//! SELECT path, type FROM variant_paths('events');       -- a registered table
//! SELECT * FROM variant_workload('delta_events/');     -- a Delta table's folder
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::catalog::{
    Session, TableFunction, TableFunctionArgs, TableFunctionImpl, TableProvider,
};
use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::datasource::MemTable;
use datafusion::datasource::listing::ListingTable;

use crate::parquet::{advice, paths};
use crate::workload::{
    Outcome, VARIANT_WORKLOAD, VariantWorkload, WorkloadLog, log_dir, summarize,
    variant_workload_schema,
};

mod reshred;

pub use reshred::{VARIANT_RESHRED, VariantReshred, variant_reshred_udf};

/// The table functions of this module (`variant_paths`,
/// `variant_shredding_advice`, `variant_workload`).
pub fn table_functions() -> Vec<Arc<TableFunction>> {
    vec![
        Arc::new(TableFunction::new(
            paths::VARIANT_PATHS.to_string(),
            Arc::new(paths::VariantPaths),
        )),
        Arc::new(TableFunction::new(
            advice::VARIANT_SHREDDING_ADVICE.to_string(),
            Arc::new(advice::VariantShreddingAdvice),
        )),
        Arc::new(TableFunction::new(
            VARIANT_WORKLOAD.to_string(),
            Arc::new(VariantWorkload),
        )),
    ]
}

/// The files a `function(path or table)` argument names, as the workload log
/// keys them: absolute, symbolic links resolved.
///
/// # Errors
/// When the argument names no table and no readable file.
pub(crate) fn table_file_keys(
    session: &dyn Session,
    function: &str,
    arg: &str,
) -> Result<Vec<String>> {
    files_of(session, function, arg)?
        .into_iter()
        .map(|p| {
            std::fs::canonicalize(&p)
                .map(|c| c.to_string_lossy().into_owned())
                .map_err(|e| plan_datafusion_err!("{function}: {}: {e}", p.display()))
        })
        .collect()
}

/// The local Parquet files a `variant_paths` argument names.
pub(crate) fn files_of(session: &dyn Session, function: &str, arg: &str) -> Result<Vec<PathBuf>> {
    if let Some(files) = table_files(session, function, arg)? {
        return Ok(files);
    }
    #[cfg(feature = "delta")]
    {
        let dir = std::path::Path::new(arg.strip_prefix("file://").unwrap_or(arg));
        if dir.join("_delta_log").is_dir() {
            let table = crate::delta::DeltaTable::open_blocking(session, arg, None)?;
            return delta_files(function, &table);
        }
    }
    Ok(crate::fs::resolve(function, arg)?
        .into_iter()
        .map(|f| f.path)
        .collect())
}

#[cfg(feature = "delta")]
fn delta_files(function: &str, table: &crate::delta::DeltaTable) -> Result<Vec<PathBuf>> {
    let snapshot = table.snapshot();
    snapshot
        .files
        .iter()
        .map(|f| {
            snapshot
                .url
                .join(&f.path)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| {
                    plan_datafusion_err!(
                        "{function}: the Delta file {} is not on the local file system",
                        f.path
                    )
                })
        })
        .collect()
}

/// The files of a registered table named `name`, if there is one.
fn table_files(session: &dyn Session, function: &str, name: &str) -> Result<Option<Vec<PathBuf>>> {
    let Some(state) = session
        .as_any()
        .downcast_ref::<datafusion::execution::SessionState>()
    else {
        return Ok(None);
    };
    let reference = datafusion::common::TableReference::parse_str(name).resolve(
        &state.config_options().catalog.default_catalog,
        &state.config_options().catalog.default_schema,
    );
    let Some(schema) = state
        .catalog_list()
        .catalog(&reference.catalog)
        .and_then(|c| c.schema(&reference.schema))
    else {
        return Ok(None);
    };
    if !schema.table_exist(&reference.table) {
        return Ok(None);
    }
    // In-memory catalogs answer at once.
    let table = futures::executor::block_on(schema.table(&reference.table))?;
    let Some(table) = table else {
        return Ok(None);
    };
    if let Some(listing) = table.downcast_ref::<ListingTable>() {
        let mut out = Vec::new();
        for url in listing.table_paths() {
            let location = format!("/{}", url.prefix());
            let pattern = match url.get_glob() {
                Some(glob) => format!("{}/{}", location.trim_end_matches('/'), glob.as_str()),
                None => location,
            };
            out.extend(
                crate::fs::resolve(function, &pattern)?
                    .into_iter()
                    .map(|f| f.path),
            );
        }
        return Ok(Some(out));
    }
    #[cfg(feature = "delta")]
    if let Some(delta) = table.downcast_ref::<crate::delta::DeltaTable>() {
        return delta_files(function, delta).map(Some);
    }
    plan_err!(
        "{function}: table '{name}' is not over Parquet files or a Delta table (its paths are known only to its data)"
    )
}

impl TableFunctionImpl for paths::VariantPaths {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let (arg, sample) = paths::arguments(args.exprs())?;
        let paths = files_of(args.session(), paths::VARIANT_PATHS, &arg)?;
        Ok(Arc::new(self.table_of_files(&paths, sample)?))
    }
}

impl TableFunctionImpl for advice::VariantShreddingAdvice {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let arg = crate::fs::path_argument(advice::VARIANT_SHREDDING_ADVICE, args.exprs())?;
        let session = args.session();
        let files = files_of(session, advice::VARIANT_SHREDDING_ADVICE, &arg)?;
        let keys = table_file_keys(session, advice::VARIANT_SHREDDING_ADVICE, &arg)?;
        Ok(Arc::new(advice::session_table(
            session, &arg, &files, &keys,
        )?))
    }
}

impl TableFunctionImpl for VariantWorkload {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let arg = crate::fs::path_argument(VARIANT_WORKLOAD, args.exprs())?;
        let session = args.session();
        let files = table_file_keys(session, VARIANT_WORKLOAD, &arg)?;
        let log = session.config().get_extension::<WorkloadLog>();
        let dir = log_dir(session.config_options());
        let rows = summarize(log.as_deref(), dir.as_deref(), &files)?;
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.column.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.path.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.target.to_ascii_uppercase()),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.file_scans as i64),
            )),
        ];
        for i in 0..Outcome::ALL.len() {
            columns.push(Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.outcomes[i] as i64),
            )));
        }
        columns.push(Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.bytes_read as i64),
        )));
        let schema = variant_workload_schema();
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
