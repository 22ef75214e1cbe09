//! The guard in front of parquet-rs's footer reader.
//!
//! parquet 59.3.2 panics (an unsigned underflow in its metadata push decoder)
//! on a file whose footer length field is at least the file size minus 7,
//! where it should return an error. Every footer read of ours goes through
//! DataFusion's `DFParquetMetadata`, which calls that decoder, from three places:
//! schema inference (`FROM 'f'`, `CREATE EXTERNAL TABLE`), statistics inference,
//! and the scan itself (also for Delta tables and `VariantScanExec`'s pruning).
//! Each of them first checks the file's last 8 bytes here: the magic `PAR1` and
//! a footer length that fits in the file beside both magics. A file that fails
//! gets an error naming it, and parquet-rs never sees it.
//!
//! Files whose metadata DataFusion already holds in its metadata cache (same
//! size and modification time) are not checked again, so a warm scan reads
//! nothing more than before.
//!
//! parquet-rs also trusts the decoded metadata when it reads pages: a column
//! chunk with a negative offset panics in `ColumnChunkMetaData::byte_range`,
//! and an offset index whose page locations overlap, leave their column chunk
//! or run backwards makes its page reader slice past the bytes it fetched
//! (found by the long fuzz run). The scan's reader therefore always loads the
//! page index with the footer and checks both ([`check_page_locations`]) before
//! any page is read.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetFileReaderFactory;
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::PageIndexPolicy;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::FutureExt;
use futures::future::BoxFuture;

/// Length of the Parquet tail: a 4-byte little-endian footer length and `PAR1`.
const TAIL: u64 = 8;

/// Checks the last 8 bytes `tail` of the Parquet file `location` of `size` bytes.
///
/// ```
/// use df_variant::parquet::check_parquet_tail;
/// // A 100-byte file whose footer is 20 bytes long: fine.
/// assert!(check_parquet_tail("f", 100, &[20, 0, 0, 0, b'P', b'A', b'R', b'1']).is_ok());
/// // A footer length that does not fit in the file.
/// let e = check_parquet_tail("f", 100, &[93, 0, 0, 0, b'P', b'A', b'R', b'1']).unwrap_err();
/// assert!(e.contains("footer of 93 bytes"), "{e}");
/// ```
///
/// # Errors
/// A message naming the file and what is wrong with its tail.
pub fn check_parquet_tail(location: &str, size: u64, tail: &[u8]) -> Result<(), String> {
    let bad = |why: String| format!("{location} is not a valid Parquet file: {why}");
    // The leading magic, the footer length and the trailing magic.
    if size < 4 + TAIL {
        return Err(bad(format!("{size} bytes is too short")));
    }
    let [l0, l1, l2, l3, m0, m1, m2, m3] = *tail else {
        return Err(bad(format!("could not read its last {TAIL} bytes")));
    };
    match [m0, m1, m2, m3] {
        [b'P', b'A', b'R', b'1'] => {}
        [b'P', b'A', b'R', b'E'] => return Err(bad("its footer is encrypted".into())),
        other => return Err(bad(format!("it ends in {other:02x?}, not the magic PAR1"))),
    }
    let footer = u64::from(u32::from_le_bytes([l0, l1, l2, l3]));
    if footer + 4 + TAIL > size {
        return Err(bad(format!(
            "a footer of {footer} bytes does not fit in a file of {size} bytes"
        )));
    }
    Ok(())
}

/// Reads the tail of `object` from `store` and checks it (see the module docs).
///
/// # Errors
/// When the tail cannot be read or is not a valid Parquet tail.
pub async fn check_parquet_footer(store: &dyn ObjectStore, object: &ObjectMeta) -> Result<()> {
    let size = object.size;
    let tail = if size >= TAIL {
        store
            .get_range(&object.location, size - TAIL..size)
            .await
            .map_err(|e| {
                exec_datafusion_err!("cannot read {}: {e}", shown(object.location.as_ref()))
            })?
    } else {
        Bytes::new()
    };
    check_parquet_tail(&shown(object.location.as_ref()), size, &tail)
        .map_err(DataFusionError::Execution)
}

/// Whether DataFusion's metadata cache holds current metadata of `object`.
/// How an error names the file at object-store `location`: object-store
/// paths drop the leading `/` of a local file's absolute path, which is put
/// back when that file exists (a remote key stays as it is).
pub(crate) fn shown(location: &str) -> String {
    let local = format!("/{location}");
    if !location.starts_with('/') && std::path::Path::new(&local).exists() {
        local
    } else {
        location.to_string()
    }
}

pub(crate) fn cached(cache: Option<&Arc<FileMetadataCache>>, object: &ObjectMeta) -> bool {
    cache
        .and_then(|c| c.get(&object.location))
        .is_some_and(|entry| entry.is_valid_for(object))
}

/// A [`ParquetFileReaderFactory`] whose readers check the footer before the
/// wrapped factory's readers read it.
#[derive(Debug)]
pub struct GuardedReaderFactory {
    inner: Arc<dyn ParquetFileReaderFactory>,
    cache: Option<Arc<FileMetadataCache>>,
}

impl GuardedReaderFactory {
    /// Guards `inner`; files current in `cache` are not checked again.
    pub fn new(
        inner: Arc<dyn ParquetFileReaderFactory>,
        cache: Option<Arc<FileMetadataCache>>,
    ) -> Self {
        Self { inner, cache }
    }
}

impl ParquetFileReaderFactory for GuardedReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        let object = partitioned_file.object_meta.clone();
        let inner = self.inner.create_reader(
            partition_index,
            partitioned_file,
            metadata_size_hint,
            metrics,
        )?;
        let checked = cached(self.cache.as_ref(), &object);
        Ok(Box::new(GuardedReader {
            inner,
            object,
            checked,
        }))
    }
}

struct GuardedReader {
    inner: Box<dyn AsyncFileReader + Send>,
    object: ObjectMeta,
    checked: bool,
}

impl AsyncFileReader for GuardedReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            if !self.checked {
                let size = self.object.size;
                let tail = if size >= TAIL {
                    self.inner.get_bytes(size - TAIL..size).await?
                } else {
                    Bytes::new()
                };
                check_parquet_tail(&shown(self.object.location.as_ref()), size, &tail)
                    .map_err(ParquetError::General)?;
                self.checked = true;
            }
            // The page index comes with the footer, so that it is checked before
            // DataFusion's opener would load it behind this reader's back.
            let options = options
                .cloned()
                .unwrap_or_default()
                .with_page_index_policy(PageIndexPolicy::Optional);
            let metadata = self.inner.get_metadata(Some(&options)).await?;
            check_parquet_metadata(
                &shown(self.object.location.as_ref()),
                self.object.size,
                &metadata,
            )
            .map_err(ParquetError::General)?;
            Ok(metadata)
        }
        .boxed()
    }
}

/// Checks the decoded footer `metadata` of the file `location` of `size` bytes
/// for what parquet-rs would panic on later: its page locations
/// ([`check_page_locations`]) and its embedded Arrow schema
/// ([`super::check_embedded_arrow_schema`]).
///
/// # Errors
/// A message naming the file and what is wrong.
pub fn check_parquet_metadata(
    location: &str,
    size: u64,
    metadata: &ParquetMetaData,
) -> Result<(), String> {
    check_page_locations(location, size, metadata)?;
    super::check_embedded_arrow_schema(location, metadata)
}

/// Checks the Parquet file `object` before anything of DataFusion's reads it:
/// its tail ([`check_parquet_footer`], skipped when `cache` holds the file's
/// current metadata), then its decoded footer and page index
/// ([`check_parquet_metadata`]). The metadata is read through `cache`, so the
/// caller's own read that follows finds it there.
///
/// # Errors
/// When the file cannot be read or any check fails.
pub async fn check_parquet_file(
    store: &dyn ObjectStore,
    object: &ObjectMeta,
    cache: Option<Arc<FileMetadataCache>>,
) -> Result<()> {
    if !cached(cache.as_ref(), object) {
        check_parquet_footer(store, object).await?;
    }
    let metadata =
        datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata::new(
            store, object,
        )
        .with_file_metadata_cache(cache)
        .with_page_index_policy(Some(PageIndexPolicy::Optional))
        .fetch_metadata()
        .await?;
    check_parquet_metadata(&shown(object.location.as_ref()), object.size, &metadata)
        .map_err(DataFusionError::Execution)
}

/// Checks that every column chunk of `metadata` lies in the file of `size`
/// bytes, and that its offset index (when loaded) places each page inside its
/// chunk, in order, without overlap, and starting at row 0 with increasing rows.
///
/// # Errors
/// A message naming the file, the row group, the column and what is wrong.
pub fn check_page_locations(
    location: &str,
    size: u64,
    metadata: &ParquetMetaData,
) -> Result<(), String> {
    let offset_index = metadata.offset_index();
    for (rg, row_group) in metadata.row_groups().iter().enumerate() {
        let pages = offset_index.and_then(|index| index.get(rg));
        if let Some(pages) = pages
            && !pages.is_empty()
            && pages.len() != row_group.num_columns()
        {
            return Err(format!(
                "{location} is not a valid Parquet file: the offset index of row group {rg} has {} columns, not {}",
                pages.len(),
                row_group.num_columns()
            ));
        }
        for (c, chunk) in row_group.columns().iter().enumerate() {
            let bad = |why: String| {
                format!(
                    "{location} is not a valid Parquet file: column {} of row group {rg}: {why}",
                    chunk.column_path()
                )
            };
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or_else(|| chunk.data_page_offset());
            let len = chunk.compressed_size();
            let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
                return Err(bad(format!("a chunk at offset {start} of {len} bytes")));
            };
            let end = start.saturating_add(len);
            if end > size {
                return Err(bad(format!(
                    "its bytes {start}..{end} run past the end of the file ({size} bytes)"
                )));
            }
            let Some(locations) = pages.and_then(|p| p.get(c)).map(datafusion::parquet::file::page_index::offset_index::OffsetIndexMetaData::page_locations) else {
                continue;
            };
            if locations.is_empty() && row_group.num_rows() > 0 {
                return Err(bad("its offset index lists no pages".into()));
            }
            let (mut next_byte, mut last_row) = (start, -1_i64);
            for (p, page) in locations.iter().enumerate() {
                let offset = u64::try_from(page.offset).unwrap_or(u64::MAX);
                let page_size = u64::try_from(page.compressed_page_size).unwrap_or(0);
                let first_row_ok = if p == 0 {
                    page.first_row_index == 0
                } else {
                    page.first_row_index > last_row && page.first_row_index < row_group.num_rows()
                };
                if offset < next_byte
                    || page_size == 0
                    || offset.saturating_add(page_size) > end
                    || !first_row_ok
                {
                    return Err(bad(format!(
                        "page {p} of its offset index (offset {}, {} bytes, first row {}) does not fit in the chunk's bytes {start}..{end} after the page before it",
                        page.offset, page.compressed_page_size, page.first_row_index
                    )));
                }
                next_byte = offset + page_size;
                last_row = page.first_row_index;
            }
        }
    }
    Ok(())
}

/// `config` with the footer guard on its Parquet reader factory (a decoded plan
/// loses it: datafusion-proto keeps no custom reader factory).
///
/// # Errors
/// When the scan's object store is not registered in `runtime`.
pub fn guarded_scan_config(
    config: &FileScanConfig,
    runtime: &datafusion::execution::runtime_env::RuntimeEnv,
) -> Result<FileScanConfig> {
    let store = runtime.object_store(&config.object_store_url)?;
    let cache = Some(runtime.cache_manager.get_file_metadata_cache());
    Ok(guarded_config(config, cache, store).unwrap_or_else(|| config.clone()))
}

/// `config` with its Parquet source's reader factory guarded; `None` when the
/// source is not Parquet.
fn guarded_config(
    config: &FileScanConfig,
    cache: Option<Arc<FileMetadataCache>>,
    store: Arc<dyn ObjectStore>,
) -> Option<FileScanConfig> {
    let source = config.file_source().downcast_ref::<ParquetSource>()?;
    let inner: Arc<dyn ParquetFileReaderFactory> = match source.parquet_file_reader_factory() {
        Some(f) => Arc::clone(f),
        None => Arc::new(
            datafusion::datasource::physical_plan::parquet::DefaultParquetFileReaderFactory::new(
                store,
            ),
        ),
    };
    let source = source
        .clone()
        .with_parquet_file_reader_factory(Arc::new(GuardedReaderFactory::new(inner, cache)));
    Some(
        FileScanConfigBuilder::from(config.clone())
            .with_source(Arc::new(source))
            .build(),
    )
}

/// `plan` with the footer guard installed, when it is a Parquet `DataSourceExec`
/// (as `ParquetFormat::create_physical_plan` returns); otherwise unchanged.
///
/// # Errors
/// When the plan's object store is not registered in `state`.
pub fn guard_parquet_scan(
    plan: Arc<dyn ExecutionPlan>,
    state: &dyn datafusion::catalog::Session,
) -> Result<Arc<dyn ExecutionPlan>> {
    let Some(exec) = (plan.as_ref() as &dyn Any).downcast_ref::<DataSourceExec>() else {
        return Ok(plan);
    };
    let Some(config) = (exec.data_source().as_ref() as &dyn Any).downcast_ref::<FileScanConfig>()
    else {
        return Ok(plan);
    };
    let runtime = state.runtime_env();
    let store = runtime.object_store(&config.object_store_url)?;
    let cache = Some(runtime.cache_manager.get_file_metadata_cache());
    Ok(match guarded_config(config, cache, store) {
        Some(config) => DataSourceExec::from_data_source(config),
        None => plan,
    })
}
