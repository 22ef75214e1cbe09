//! The hot-data cache of [`super::VariantScanExec`]: the batches one file scan
//! produced (its extractions already answered from the shredded leaves), kept in
//! memory so that a repeated query neither decodes the file's pages again nor
//! converts its leaves again.
//!
//! What a file scan produces depends on more than the file, so the key holds all
//! of it: the file (path, size, modification time, ETag, byte range, partition
//! values), the rows the scan reads (the access plan after pruning and deletion
//! vectors), what it projects and how (projection, predicate, limit, table
//! schema, Parquet options, batch size) and the settings the extractions read
//! (time zone, `variant.*`), and a digest of the file's footer as it is at
//! the scan, read afresh from the store (one small read per file, made only
//! when the cache is on). A file rewritten in place has a new size,
//! modification time or footer, so its old entry is never used again and ages
//! out; the footer catches the rewrites that keep size and time (`cp -p`,
//! `rsync -t`, `touch -r`), since it holds every column chunk's offsets, sizes
//! and statistics.
//!
//! A scan is cached only when its output cannot change while the key stays the
//! same: never under a dynamic filter (a join's or a `TopK`'s, whose value
//! changes during the query), nor with an expression adapter of the caller's
//! under ours. Only a file scan that ran to its end is kept; one that failed or
//! was dropped early (a `LIMIT` above) is not.
//!
//! The cache is off by default. It is bounded by `variant.scan_cache_size` bytes
//! (the Arrow allocations the scan's batches hold, each counted once however
//! many batches share it), evicting the least recently used scans first; `0`
//! (the default) turns it off and empties it. It lives in the session (a
//! [`ScanCache`] in the `SessionConfig`'s extensions, added by
//! [`crate::with_variant`]), and what it keeps is reserved in the runtime's
//! memory pool, as a spillable consumer named `variant scan cache`: a pool
//! that refuses more makes it evict its oldest scans, or not keep the new one,
//! and under a finite pool (`--memory-limit`) it keeps at most half the limit,
//! so that queries always have the rest. `EXPLAIN ANALYZE`
//! shows `scan_cache_hits` and `scan_cache_hit_rows` on a scan that was served
//! from it.
//!
//! ```text
//! first run:   VariantScanExec: file 1 -> footer, pruning -> decode + extract -> batches (kept)
//! second run:  VariantScanExec: file 1 -> footer, pruning -> the kept batches
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use datafusion::arrow::array::ArrayData;
use datafusion::arrow::buffer::Buffer;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::Result;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::datasource::physical_plan::{FileScanConfig, ParquetSource};
use datafusion::execution::memory_pool::{
    MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr;
use futures::Stream;

/// The session's cache of file scans (see the module docs).
#[derive(Debug, Default)]
pub struct ScanCache {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    bytes: usize,
    clock: u64,
    /// The pool the kept bytes are reserved in, and the reservation (`bytes`).
    reservation: Option<(Arc<dyn MemoryPool>, MemoryReservation)>,
}

impl Inner {
    /// Evicts the least recently used scans until at most `capacity` bytes are
    /// kept, and gives the rest back to the pool.
    fn evict_to(&mut self, capacity: usize) {
        while self.bytes > capacity && self.evict_oldest() {}
    }

    /// Evicts the least recently used scan, if any, giving its bytes back.
    fn evict_oldest(&mut self) -> bool {
        let Some(oldest) = self
            .entries
            .iter()
            .min_by_key(|(_, e)| e.used)
            .map(|(k, _)| k.clone())
        else {
            return false;
        };
        if let Some(e) = self.entries.remove(&oldest) {
            self.bytes -= e.bytes;
        }
        self.give_back();
        true
    }

    /// Shrinks the reservation to the bytes kept.
    fn give_back(&self) {
        if let Some((_, reservation)) = &self.reservation {
            reservation.resize(self.bytes);
        }
    }

    /// Reserves `more` bytes beyond those kept in `pool`, evicting the least
    /// recently used scans while the pool refuses; whether it fits. Moved to
    /// another pool (the session got a new runtime), the cache starts empty.
    fn reserve(&mut self, pool: &Arc<dyn MemoryPool>, more: usize) -> bool {
        if let MemoryLimit::Finite(limit) = pool.memory_limit()
            && more > limit
        {
            return false;
        }
        if self
            .reservation
            .as_ref()
            .is_none_or(|(p, _)| !Arc::ptr_eq(p, pool))
        {
            self.entries.clear();
            self.bytes = 0;
            let reservation = MemoryConsumer::new("variant scan cache")
                .with_can_spill(true)
                .register(pool);
            self.reservation = Some((Arc::clone(pool), reservation));
        }
        loop {
            if let Some((_, reservation)) = &self.reservation
                && reservation.try_grow(more).is_ok()
            {
                return true;
            }
            if !self.evict_oldest() {
                return false;
            }
        }
    }
}

#[derive(Debug)]
struct Entry {
    batches: Arc<[RecordBatch]>,
    bytes: usize,
    used: u64,
}

impl ScanCache {
    /// The kept batches of the scan `key`, if any (marking them recently used).
    pub fn get(&self, key: &str) -> Option<Arc<[RecordBatch]>> {
        let mut inner = self.lock();
        inner.clock += 1;
        let clock = inner.clock;
        let entry = inner.entries.get_mut(key)?;
        entry.used = clock;
        Some(Arc::clone(&entry.batches))
    }

    /// Keeps `batches` under `key`, evicting the least recently used scans until
    /// all fit in `capacity` bytes and `pool` grants them; a scan larger than
    /// `capacity`, or than the pool grants with nothing else kept, is not kept.
    pub fn insert(
        &self,
        key: String,
        batches: Vec<RecordBatch>,
        bytes: usize,
        capacity: usize,
        pool: &Arc<dyn MemoryPool>,
    ) {
        if bytes > capacity {
            return;
        }
        let mut inner = self.lock();
        if let Some(old) = inner.entries.remove(&key) {
            inner.bytes -= old.bytes;
            inner.give_back();
        }
        inner.evict_to(capacity - bytes);
        if !inner.reserve(pool, bytes) {
            return;
        }
        inner.clock += 1;
        let used = inner.clock;
        inner.bytes += bytes;
        inner.entries.insert(
            key,
            Entry {
                batches: batches.into(),
                bytes,
                used,
            },
        );
    }

    /// Evicts the least recently used scans until at most `capacity` bytes are
    /// kept (`0`: all of them).
    pub fn shrink_to(&self, capacity: usize) {
        self.lock().evict_to(capacity);
    }

    /// The bytes kept, and how many scans.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.bytes, inner.entries.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while the lock was held leaves a consistent map (every
        // update is completed before the guard drops), so a poisoned lock is
        // still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `variant.scan_cache_size` in bytes, as the session has it, and at most
/// half the memory limit of a runtime that has one.
pub fn capacity(context: &TaskContext) -> usize {
    let setting = context
        .session_config()
        .options()
        .extensions
        .get::<crate::config::VariantOptions>()
        .map_or(crate::config::DEFAULT_SCAN_CACHE_BYTES, |o| {
            o.scan_cache_size.0
        });
    match context.runtime_env().memory_pool.memory_limit() {
        MemoryLimit::Finite(limit) => setting.min(limit / 2),
        MemoryLimit::Infinite | MemoryLimit::Unknown => setting,
    }
}

/// The part of a file scan's key that every file of the scan shares, or `None`
/// when the scan's output may change under an unchanged key (a dynamic filter,
/// a caller's expression adapter).
pub fn scan_key(
    config: &FileScanConfig,
    has_base_adapter: bool,
    pushdown: bool,
    context: &TaskContext,
) -> Option<String> {
    if has_base_adapter {
        return None;
    }
    let source = config.file_source().downcast_ref::<ParquetSource>()?;
    let filter = config.file_source().filter();
    if filter.as_ref().is_some_and(has_dynamic_filter) {
        return None;
    }
    let options = context.session_config().options();
    let mut key = String::new();
    // Writing into a String cannot fail.
    let _ = write!(
        key,
        "schema={:?}\nprojection={}\nfilter={}\nlimit={:?}\nbatch={}\nparquet={:?}\ntz={:?}\npushdown={pushdown}\nvariant={:?}\n",
        config.file_schema(),
        config
            .file_source()
            .projection()
            .map(ToString::to_string)
            .unwrap_or_default(),
        filter.map(|f| f.to_string()).unwrap_or_default(),
        config.limit,
        context.session_config().batch_size(),
        source.table_parquet_options(),
        options.execution.time_zone,
        options
            .extensions
            .get::<crate::config::VariantOptions>()
            .map(|o| {
                // Everything but the cache's own size, which does not change
                // what a scan produces.
                let mut o = o.clone();
                o.scan_cache_size = crate::config::ByteSize(0);
                o
            }),
    );
    Some(key)
}

/// A digest of the footer of `object` as the store holds it now (not from a
/// metadata cache, which keys on size and time too): the Parquet footer and
/// its length, read from the end of the file.
///
/// # Errors
/// When the store cannot read the file's end.
pub async fn footer_digest(
    store: &dyn datafusion::object_store::ObjectStore,
    object: &datafusion::object_store::ObjectMeta,
) -> datafusion::common::Result<u64> {
    use datafusion::object_store::ObjectStoreExt;
    use std::hash::{Hash, Hasher};
    let size = object.size;
    if size < 12 {
        return Ok(0);
    }
    let read = |range: std::ops::Range<u64>| async move {
        store.get_range(&object.location, range).await.map_err(|e| {
            datafusion::common::exec_datafusion_err!("cannot read /{}: {e}", object.location)
        })
    };
    let tail = read(size - 8..size).await?;
    let len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let footer = read(size.saturating_sub(8 + len).max(4)..size - 8).await?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    tail.hash(&mut hasher);
    footer.hash(&mut hasher);
    Ok(hasher.finish())
}

/// The whole key of one file scan: the scan's shared part, the file (with its
/// footer's digest), the rows it reads and which residuals it skips.
pub fn file_key(
    scan: &str,
    file: &PartitionedFile,
    value_free: &super::shredded_get::ValueFreeNodes,
    footer: u64,
) -> String {
    let meta = &file.object_meta;
    let mut skipped: Vec<_> = value_free.iter().collect();
    skipped.sort();
    format!(
        "{scan}file={}\nsize={}\nmodified={}\netag={:?}\nversion={:?}\nfooter={footer:x}\nrange={:?}\npartition={:?}\naccess={:?}\nvalue_free={skipped:?}",
        meta.location,
        meta.size,
        meta.last_modified.timestamp_nanos_opt().unwrap_or_default(),
        meta.e_tag,
        meta.version,
        file.range,
        file.partition_values,
        file.extensions.get::<ParquetAccessPlan>(),
    )
}

fn has_dynamic_filter(expr: &Arc<dyn PhysicalExpr>) -> bool {
    let mut found = false;
    let _ = expr.apply(|e| {
        if (e.as_ref() as &dyn std::any::Any).is::<DynamicFilterPhysicalExpr>() {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

/// A stream of kept batches.
pub fn replay(schema: SchemaRef, batches: Arc<[RecordBatch]>) -> SendableRecordBatchStream {
    let stream = futures::stream::iter((0..batches.len()).map(move |i| Ok(batches[i].clone())));
    Box::pin(datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(schema, stream))
}

/// Passes `inner` through and keeps its batches under `key` when it ends
/// without an error, unless they outgrow `capacity` first.
pub fn keep(
    inner: SendableRecordBatchStream,
    cache: Arc<ScanCache>,
    key: String,
    capacity: usize,
    pool: Arc<dyn MemoryPool>,
) -> SendableRecordBatchStream {
    Box::pin(Keeping {
        inner,
        cache,
        key,
        capacity,
        pool,
        kept: Some((Vec::new(), 0)),
        counted: HashSet::new(),
    })
}

struct Keeping {
    inner: SendableRecordBatchStream,
    cache: Arc<ScanCache>,
    key: String,
    capacity: usize,
    /// The pool the kept batches are reserved in.
    pool: Arc<dyn MemoryPool>,
    /// The batches so far and their bytes; `None` once the scan cannot be kept.
    kept: Option<(Vec<RecordBatch>, usize)>,
    /// The allocations counted so far: batches sliced from one buffer (a row
    /// group decoded or reassembled at once) hold it once, not once per batch.
    counted: HashSet<usize>,
}

/// The bytes of the allocations behind `data` (and its children) not in `counted`.
fn new_bytes(data: &ArrayData, counted: &mut HashSet<usize>) -> usize {
    let mut add = |buffer: &Buffer| {
        if counted.insert(buffer.data_ptr().as_ptr() as usize) {
            buffer.capacity()
        } else {
            0
        }
    };
    let mut bytes: usize = data.buffers().iter().map(&mut add).sum();
    if let Some(nulls) = data.nulls() {
        bytes += add(nulls.buffer());
    }
    bytes
        + data
            .child_data()
            .iter()
            .map(|child| new_bytes(child, counted))
            .sum::<usize>()
}

impl Stream for Keeping {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let polled = this.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(batch))) => {
                if let Some((batches, bytes)) = &mut this.kept {
                    let counted = &mut this.counted;
                    *bytes += batch
                        .columns()
                        .iter()
                        .map(|column| new_bytes(&column.to_data(), counted))
                        .sum::<usize>();
                    if *bytes > this.capacity {
                        this.kept = None;
                    } else {
                        batches.push(batch.clone());
                    }
                }
            }
            Poll::Ready(Some(Err(_))) => this.kept = None,
            Poll::Ready(None) => {
                if let Some((batches, bytes)) = this.kept.take() {
                    this.cache.insert(
                        std::mem::take(&mut this.key),
                        batches,
                        bytes,
                        this.capacity,
                        &this.pool,
                    );
                }
            }
            Poll::Pending => {}
        }
        polled
    }
}

impl RecordBatchStream for Keeping {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

    fn unbounded() -> Arc<dyn MemoryPool> {
        Arc::new(datafusion::execution::memory_pool::UnboundedMemoryPool::default())
    }

    #[test]
    fn reserves_what_it_keeps_in_the_pool_and_evicts_when_refused() {
        use datafusion::execution::memory_pool::GreedyMemoryPool;
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let cache = ScanCache::default();
        cache.insert("a".into(), vec![batch(1)], 40, 1000, &pool);
        cache.insert("b".into(), vec![batch(2)], 40, 1000, &pool);
        assert_eq!(pool.reserved(), 80, "the pool sees what the cache keeps");
        // The pool has 20 bytes left: the oldest scan goes to make room.
        cache.insert("c".into(), vec![batch(3)], 50, 1000, &pool);
        assert!(cache.get("a").is_none() && cache.get("b").is_some());
        assert_eq!((pool.reserved(), cache.usage()), (90, (90, 2)));
        // More than the pool holds at all: not kept, and nothing evicted for it.
        cache.insert("huge".into(), vec![batch(4)], 101, 1000, &pool);
        assert!(cache.get("huge").is_none());
        assert_eq!((pool.reserved(), cache.usage()), (90, (90, 2)));
        // A query's operator asking the pool for more is refused only by
        // what the cache keeps; emptying the cache gives it all back.
        cache.shrink_to(0);
        assert_eq!(pool.reserved(), 0);
    }

    fn batch(n: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![n]))])
            .expect("a valid batch")
    }

    #[test]
    fn evicts_the_least_recently_used_first() {
        let cache = ScanCache::default();
        let pool = unbounded();
        cache.insert("a".into(), vec![batch(1)], 40, 100, &pool);
        cache.insert("b".into(), vec![batch(2)], 40, 100, &pool);
        assert!(cache.get("a").is_some(), "a is now the most recently used");
        cache.insert("c".into(), vec![batch(3)], 40, 100, &pool);
        assert!(cache.get("b").is_none(), "b was the least recently used");
        assert!(cache.get("a").is_some());
        assert!(cache.get("c").is_some());
        assert_eq!(cache.usage(), (80, 2));
    }

    #[test]
    fn keeps_nothing_larger_than_its_capacity_and_empties_at_zero() {
        let cache = ScanCache::default();
        let pool = unbounded();
        cache.insert("big".into(), vec![batch(1)], 101, 100, &pool);
        assert!(cache.get("big").is_none());
        cache.insert("a".into(), vec![batch(1)], 60, 100, &pool);
        cache.insert("a".into(), vec![batch(2)], 70, 100, &pool);
        assert_eq!(
            cache.usage(),
            (70, 1),
            "a replaced entry is not counted twice"
        );
        cache.shrink_to(0);
        assert_eq!(cache.usage(), (0, 0));
    }

    #[tokio::test]
    async fn keeps_a_scan_only_when_it_ends_without_error() {
        use futures::StreamExt;
        let schema = batch(0).schema();
        let cache = Arc::new(ScanCache::default());
        let pool = unbounded();
        let ok = replay(Arc::clone(&schema), vec![batch(1), batch(2)].into());
        let kept = keep(
            ok,
            Arc::clone(&cache),
            "ok".into(),
            1 << 20,
            Arc::clone(&pool),
        );
        assert_eq!(kept.collect::<Vec<_>>().await.len(), 2);
        assert_eq!(cache.get("ok").map(|b| b.len()), Some(2));

        let failing = futures::stream::iter(vec![
            Ok(batch(1)),
            Err(datafusion::common::DataFusionError::Execution(
                "boom".into(),
            )),
        ]);
        let failing = Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                Arc::clone(&schema),
                failing,
            ),
        );
        let kept = keep(
            failing,
            Arc::clone(&cache),
            "bad".into(),
            1 << 20,
            Arc::clone(&pool),
        );
        assert_eq!(kept.collect::<Vec<_>>().await.len(), 2);
        assert!(cache.get("bad").is_none(), "a failed scan is not kept");

        let mut dropped = keep(
            replay(schema, vec![batch(1), batch(2)].into()),
            Arc::clone(&cache),
            "early".into(),
            1 << 20,
            pool,
        );
        assert!(dropped.next().await.is_some());
        drop(dropped);
        assert!(
            cache.get("early").is_none(),
            "a scan dropped early is not kept"
        );
    }

    #[tokio::test]
    async fn counts_a_buffer_shared_by_many_batches_once() {
        use futures::StreamExt;
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let whole = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(Int64Array::from_iter_values(0..8192))],
        )
        .expect("a valid batch");
        let slices: Vec<_> = (0..8).map(|i| whole.slice(i * 1024, 1024)).collect();
        let cache = Arc::new(ScanCache::default());
        let pool = unbounded();
        let kept = keep(
            replay(schema, slices.into()),
            Arc::clone(&cache),
            "sliced".into(),
            1 << 20,
            pool,
        );
        assert_eq!(kept.collect::<Vec<_>>().await.len(), 8);
        let (bytes, entries) = cache.usage();
        assert_eq!(entries, 1);
        assert!(
            (8192 * 8..2 * 8192 * 8).contains(&bytes),
            "one 64 KiB buffer behind 8 slices counts once, not 8 times: {bytes}"
        );
    }
}
