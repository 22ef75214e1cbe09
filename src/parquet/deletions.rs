//! Rows of a Parquet file that a table has deleted (Delta deletion vectors),
//! as the file's row-group access plan.
//!
//! A deletion vector lists row positions within a data file. The scan must never
//! return them, not even to `count(*)`. We turn the positions into a
//! [`ParquetAccessPlan`] on the file (row groups with every row deleted are
//! skipped, the others get a row selection), which DataFusion's Parquet scan
//! honours by itself. `VariantScanExec` starts its own pruning from that plan and
//! narrows it (`src/parquet/pruning.rs`), and the plan codec carries it
//! ([`crate::codec`]), so deleted rows stay deleted with shredded pushdown,
//! row-group and page pruning, and in plans shipped to other processes.
//!
//! Two row groups of 3 and 2 rows with rows 1, 3 and 4 deleted give a plan
//! that scans the first (with a selection) and skips the second
//! (`tests::two_row_groups_with_rows_1_3_and_4_deleted`).

use std::sync::Arc;

use datafusion::common::{Result, exec_err};
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

/// The sorted, distinct row positions of a file that are deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedRows(pub Vec<u64>);

/// The access plan of a file whose rows `deleted` (sorted, distinct positions
/// within the file) are not to be read. A position past the file's last row is an
/// error naming the file.
///
/// # Errors
/// A deleted position past the end of the file.
pub fn access_plan_without(
    metadata: &ParquetMetaData,
    deleted: &[u64],
    file: &str,
) -> Result<ParquetAccessPlan> {
    let groups = metadata.row_groups();
    let mut plan = ParquetAccessPlan::new_all(groups.len());
    let mut start = 0u64;
    let mut next = 0usize;
    for (r, group) in groups.iter().enumerate() {
        let rows = u64::try_from(group.num_rows()).unwrap_or(0);
        let end = start + rows;
        let first = next;
        while next < deleted.len() && deleted[next] < end {
            next += 1;
        }
        let here = &deleted[first..next];
        if here.len() as u64 == rows && rows > 0 {
            plan.skip(r);
        } else if !here.is_empty() {
            let mut selectors = Vec::with_capacity(here.len() * 2 + 1);
            let mut at = start;
            for &row in here {
                if row > at {
                    selectors.push(RowSelector::select((row - at) as usize));
                }
                selectors.push(RowSelector::skip(1));
                at = row + 1;
            }
            if end > at {
                selectors.push(RowSelector::select((end - at) as usize));
            }
            plan.scan_selection(r, RowSelection::from(selectors));
        }
        start = end;
    }
    if let Some(row) = deleted.get(next) {
        return exec_err!(
            "the deletion vector of {file} deletes row {row}, but the file has {start} rows"
        );
    }
    Ok(plan)
}

/// [`access_plan_without`] for a file in an object store, its footer read
/// through the footer guard and the session's metadata cache (the scan then
/// finds it there).
///
/// # Errors
/// A footer that cannot be read, or a deleted position past the end of the file.
pub async fn access_plan_for(
    store: &Arc<dyn ObjectStore>,
    cache: Arc<FileMetadataCache>,
    object: &ObjectMeta,
    deleted: &DeletedRows,
) -> Result<ParquetAccessPlan> {
    if !super::footer::cached(Some(&cache), object) {
        super::footer::check_parquet_footer(store.as_ref(), object).await?;
    }
    let metadata = DFParquetMetadata::new(store.as_ref(), object)
        .with_file_metadata_cache(Some(cache))
        .with_page_index_policy(Some(PageIndexPolicy::Optional))
        .fetch_metadata()
        .await?;
    access_plan_without(
        &metadata,
        &deleted.0,
        &super::footer::shown(object.location.as_ref()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::datasource::physical_plan::parquet::RowGroupAccess;
    use parquet::file::metadata::{FileMetaData, RowGroupMetaData};
    use parquet::schema::types::{SchemaDescriptor, Type};

    #[test]
    fn two_row_groups_with_rows_1_3_and_4_deleted() {
        let plan = access_plan_without(&metadata(&[3, 2]), &[1, 3, 4], "f.parquet").unwrap();
        assert!(plan.should_scan(0) && !plan.should_scan(1));
    }

    fn metadata(rows: &[i64]) -> ParquetMetaData {
        let schema = Arc::new(SchemaDescriptor::new(Arc::new(
            Type::group_type_builder("schema").build().unwrap(),
        )));
        let groups = rows
            .iter()
            .map(|&n| {
                RowGroupMetaData::builder(Arc::clone(&schema))
                    .set_num_rows(n)
                    .build()
                    .unwrap()
            })
            .collect();
        let file = FileMetaData::new(1, rows.iter().sum(), None, None, schema, None);
        ParquetMetaData::new(file, groups)
    }

    /// Per row group: `None` skipped, `Some(vec![])` scanned whole, else the
    /// selected row positions within the group.
    fn selected(plan: &ParquetAccessPlan, rows: &[i64]) -> Vec<Option<Vec<usize>>> {
        plan.inner()
            .iter()
            .zip(rows)
            .map(|(a, &n)| match a {
                RowGroupAccess::Skip => None,
                RowGroupAccess::Scan => Some(Vec::new()),
                RowGroupAccess::Selection(s) => {
                    let mut at = 0;
                    let mut out = Vec::new();
                    for sel in s.iter() {
                        if !sel.skip {
                            out.extend(at..at + sel.row_count);
                        }
                        at += sel.row_count;
                    }
                    assert_eq!(at, n as usize);
                    Some(out)
                }
            })
            .collect()
    }

    #[test]
    fn deleted_rows_become_selections_per_row_group() {
        let rows = [3, 2, 4, 1];
        let m = metadata(&rows);
        // Row group 0: rows 0..3 (1 deleted); 1: 3..5 (both); 2: 5..9 (5, 8); 3: 9.
        let plan = access_plan_without(&m, &[1, 3, 4, 5, 8], "f").unwrap();
        assert_eq!(
            selected(&plan, &rows),
            vec![Some(vec![0, 2]), None, Some(vec![1, 2]), Some(Vec::new())]
        );
        let plan = access_plan_without(&m, &[], "f").unwrap();
        assert!(
            plan.inner()
                .iter()
                .all(|a| matches!(a, RowGroupAccess::Scan))
        );
    }

    #[test]
    fn a_deleted_row_past_the_end_is_an_error_naming_the_file() {
        let err = access_plan_without(&metadata(&[3, 2]), &[4, 5], "part-0.parquet")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("part-0.parquet") && err.contains("row 5"),
            "{err}"
        );
    }
}
