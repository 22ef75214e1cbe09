//! Memory inside DataFusion's pool: every operator of ours that keeps state
//! (and the scan cache) reserves it in the runtime's `MemoryPool`, and a
//! `count(DISTINCT)` under a memory limit never fails where DataFusion's own
//! plan succeeds, and where it fails, fails at once naming the limit and what
//! to change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::datasource::MemTable;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::memory_pool::{
    GreedyMemoryPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
    human_readable_size,
};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};

/// A pool that remembers the peak reservation of each consumer (by name,
/// without its partition), around DataFusion's greedy pool.
#[derive(Debug)]
struct RecordingPool {
    inner: GreedyMemoryPool,
    peaks: Mutex<HashMap<String, usize>>,
}

impl RecordingPool {
    fn note(&self, reservation: &MemoryReservation, size: usize) {
        let name = reservation.consumer().name();
        let name = name.split('[').next().unwrap_or(name).to_string();
        let mut peaks = self.peaks.lock().unwrap();
        let peak = peaks.entry(name).or_default();
        *peak = (*peak).max(size);
    }
}

impl std::fmt::Display for RecordingPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "recording({})", self.inner)
    }
}

impl MemoryPool for RecordingPool {
    fn name(&self) -> &'static str {
        "recording"
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer);
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer);
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.note(reservation, reservation.size() + additional);
        self.inner.grow(reservation, additional);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        self.inner.try_grow(reservation, additional)?;
        self.note(reservation, reservation.size() + additional);
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
    }

    fn memory_limit(&self) -> MemoryLimit {
        self.inner.memory_limit()
    }
}

async fn sql(ctx: &SessionContext, q: &str) -> Result<String> {
    let batches = ctx.sql(q).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_sees_the_scan_cache_the_sinks_and_the_group_count() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("df_variant_memory_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pool = Arc::new(RecordingPool {
        inner: GreedyMemoryPool::new(1 << 30),
        peaks: Mutex::default(),
    });
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(Arc::clone(&pool) as Arc<dyn MemoryPool>)
        .build_arc()?;
    let builder =
        df_variant::variant_state_builder(SessionConfig::new().with_target_partitions(2), runtime);
    let ctx =
        SessionContext::new_with_state(df_variant::accel::with_accelerations(builder).build())
            .enable_url_table();
    let file = dir.join("t.parquet");
    sql(
        &ctx,
        &format!(
            "COPY (SELECT parse_json('{{\"k\": \"key ' || (value % 5) || '\", \"n\": ' || value || '}}') AS v \
             FROM generate_series(1, 20000)) TO '{}' STORED AS PARQUET",
            file.display()
        ),
    )
    .await?;
    sql(&ctx, "SET variant.scan_cache_size = '64M'").await?;
    let q = format!(
        "SELECT v:k::string AS k, count(*) FROM '{}' GROUP BY k ORDER BY k",
        file.display()
    );
    let first = sql(&ctx, &q).await?;
    assert_eq!(sql(&ctx, &q).await?, first, "served from the cache");
    let peaks = pool.peaks.lock().unwrap().clone();
    for consumer in [
        "VariantParquetSink",
        "variant scan cache",
        "StringGroupCountExec",
    ] {
        assert!(
            peaks.get(consumer).is_some_and(|&bytes| bytes > 0),
            "{consumer} reserved nothing: {peaks:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// 2M distinct strings in 4 groups.
async fn strings() -> Result<Arc<MemTable>> {
    let batches = SessionContext::new()
        .sql(
            "SELECT CAST(value % 4 AS BIGINT) AS g, 'did:plc:' || CAST(value AS VARCHAR) AS s \
             FROM generate_series(1, 2000000)",
        )
        .await?
        .collect()
        .await?;
    Ok(Arc::new(MemTable::try_new(
        batches[0].schema(),
        vec![batches],
    )?))
}

/// `q` in a session of `kind` under a `limit`: its answer, or `error: ` and
/// the kind of error (what ran out and by how much varies from run to run).
/// A query that neither ends nor fails in five minutes fails the test.
async fn limited(kind: &str, limit: usize, table: &Arc<MemTable>, q: &str) -> Result<String> {
    let runtime: Arc<RuntimeEnv> = df_variant::memory_limited_runtime(limit)?;
    let config = SessionConfig::new().with_target_partitions(2);
    let plain = || {
        SessionStateBuilder::new()
            .with_config(config.clone())
            .with_runtime_env(Arc::clone(&runtime))
            .with_default_features()
    };
    let state = match kind {
        "DataFusion" => plain().build(),
        "with_variant" => df_variant::with_variant(plain()).build(),
        "accelerated" => {
            df_variant::accel::with_accelerations(df_variant::with_variant(plain())).build()
        }
        _ => unreachable!(),
    };
    let ctx = SessionContext::new_with_state(state);
    ctx.register_table("t", Arc::clone(table) as _)?;
    let run = tokio::time::timeout(Duration::from_mins(5), sql(&ctx, q))
        .await
        .unwrap_or_else(|_| panic!("{kind} at {limit} bytes: {q} ran for five minutes"));
    Ok(match run {
        Ok(answer) => answer,
        Err(e) => {
            // Whatever failed, the message says what the limit was and what to
            // change (DataFusion's alone says `fair(pool_size: 64.0 MB)`).
            let e = e.to_string();
            let limit_named = e.contains(&format!(
                "The query needs more than the memory limit of {}: raise it",
                human_readable_size(limit)
            ));
            let ours = e.contains("SET variant.partition_distinct_count = false");
            assert!(
                limit_named || ours,
                "{kind} at {limit} bytes: {q}: the error does not say what to change: {e}"
            );
            if e.contains("Resources exhausted") {
                "error: resources exhausted".to_string()
            } else {
                format!("error: {e}")
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_distinct_under_a_memory_limit_fails_only_where_datafusion_does() -> Result<()> {
    let table = strings().await?;
    let runs = [
        (
            "SELECT g, count(DISTINCT s) AS d FROM t GROUP BY g ORDER BY g",
            64 << 20,
        ),
        (
            "SELECT g, count(*) AS n, count(DISTINCT s) AS d FROM t GROUP BY g ORDER BY g",
            64 << 20,
        ),
        (
            "SELECT g, count(*) AS n, count(DISTINCT s) AS d FROM t GROUP BY g ORDER BY g",
            2 << 30,
        ),
    ];
    for (q, limit) in runs {
        {
            let datafusion = limited("DataFusion", limit, &table, q).await?;
            for kind in ["with_variant", "accelerated"] {
                let ours = limited(kind, limit, &table, q).await?;
                if !datafusion.starts_with("error") || kind == "with_variant" {
                    assert_eq!(ours, datafusion, "{kind} at {limit} bytes: {q}");
                } else {
                    // Where DataFusion's plan fails, ours may answer; then right.
                    assert!(
                        ours.starts_with("error") || ours.contains("| 0 | 500000 |"),
                        "{kind} at {limit} bytes: {q}: {ours}"
                    );
                }
            }
            if limit > 64 << 20 {
                assert!(datafusion.contains("500000"), "{q}: {datafusion}");
            }
        }
    }
    Ok(())
}
