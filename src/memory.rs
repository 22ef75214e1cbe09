//! The memory pool of [`memory_limited_runtime`] (`--memory-limit` in the CLI).
//!
//! DataFusion's `FairSpillPool` gives each spilling operator a fair share of the
//! limit, inside a `TrackConsumersPool` that names the largest consumers when an
//! allocation is refused. [`LimitedPool`] wraps both and adds to every refusal
//! what the limit is and what to change: DataFusion's own message says
//! `fair(pool_size: 64.0 MB)`, which a user who set `--memory-limit 64M` has to
//! decode. Operators that spill on a refusal still see a "Resources exhausted"
//! error and spill as before; the words only reach a user whose query could not
//! spill its way under the limit.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::memory_pool::{
    FairSpillPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation, TrackConsumersPool,
    human_readable_size,
};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};

/// A runtime whose queries together use at most `limit` bytes of tracked memory:
/// DataFusion's `FairSpillPool` (each spilling operator gets a fair share, and
/// sorts, aggregations and joins spill to the OS temporary directory when they
/// reach it), inside a pool that names its largest consumers when memory runs
/// out. A query that cannot fit fails with DataFusion's "Resources exhausted"
/// error, followed by the limit and what to change, instead of the process
/// growing without bound.
///
/// ```
/// let runtime = df_variant::memory_limited_runtime(64 << 20).unwrap();
/// let ctx = df_variant::variant_context_with_runtime(Default::default(), runtime);
/// # let _ = ctx;
/// ```
///
/// # Errors
/// When the disk manager cannot be set up.
pub fn memory_limited_runtime(limit: usize) -> Result<Arc<RuntimeEnv>> {
    RuntimeEnvBuilder::new()
        .with_memory_pool(Arc::new(LimitedPool::new(limit)))
        .build_arc()
}

/// DataFusion's fair spilling pool, tracking its 5 largest consumers, whose
/// refusals say what the limit is and what to change.
#[derive(Debug)]
pub(crate) struct LimitedPool {
    inner: TrackConsumersPool<FairSpillPool>,
    limit: usize,
}

impl LimitedPool {
    /// A pool of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            inner: TrackConsumersPool::new(
                FairSpillPool::new(limit),
                NonZeroUsize::new(5).unwrap_or(NonZeroUsize::MIN),
            ),
            limit,
        }
    }

    /// What to change, after DataFusion's refusal.
    fn advise(&self, e: DataFusionError) -> DataFusionError {
        match e {
            DataFusionError::ResourcesExhausted(message) => {
                DataFusionError::ResourcesExhausted(format!(
                    "{message}. The query needs more than the memory limit of {}: raise it \
                     (`--memory-limit` in the CLI, `memory_limited_runtime` in Rust), or run with \
                     fewer partitions (`--partitions`, `datafusion.execution.target_partitions`) so \
                     that each operator gets a larger share. Operators that spill still need their \
                     largest single group or batch in memory: a `count(DISTINCT ...)` beside other \
                     aggregates holds all distinct values of a group",
                    human_readable_size(self.limit)
                ))
            }
            other => other,
        }
    }
}

impl fmt::Display for LimitedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limited({})", self.inner)
    }
}

impl MemoryPool for LimitedPool {
    fn name(&self) -> &'static str {
        "limited"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer);
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer);
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.inner.grow(reservation, additional);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        self.inner
            .try_grow(reservation, additional)
            .map_err(|e| self.advise(e))
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_limit_and_what_to_change() {
        let pool: Arc<dyn MemoryPool> = Arc::new(LimitedPool::new(1 << 20));
        let reservation = MemoryConsumer::new("big").register(&pool);
        reservation.try_grow(1 << 19).unwrap();
        let e = reservation.try_grow(1 << 20).unwrap_err();
        assert!(matches!(e, DataFusionError::ResourcesExhausted(_)), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("big") && e.contains("memory limit of 1024.0 KB") && e.contains("raise it"),
            "{e}"
        );
        assert_eq!(pool.reserved(), 1 << 19);
        assert!(matches!(pool.memory_limit(), MemoryLimit::Finite(l) if l == 1 << 20));
    }
}
