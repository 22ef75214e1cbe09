//! Distributed execution on [datafusion-distributed] 4.0: a coordinator plans
//! with the whole df-variant session and ships the stages' physical plans to
//! workers, through [`crate::codec::VariantPhysicalCodec`].
//!
//! - [`with_workers`] turns a session builder into a coordinator over a fixed list
//!   of worker URLs (`df-variant --workers http://127.0.0.1:50051,...`);
//! - [`worker`] is a worker with everything of df-variant registered, and
//!   [`serve`] runs one on a TCP listener (`df-variant worker --port 50051`).
//!
//! Planning never leaves the coordinator: the `VARIANT` type, the path syntax,
//! the analyzer rules and [`crate::optimizer::physical_rules`] run there. A scan
//! the planner splits into tasks keeps its [`crate::parquet::VariantScanExec`], so
//! each worker still reads shredded leaves, prunes row groups and pages, and skips
//! Delta files on their per-path bounds, for its share of the files; the counters
//! come back to the coordinator's `EXPLAIN ANALYZE`. `SET variant.*` settings
//! travel with every query (as request headers), and so do the DataFusion
//! settings that functions read while a plan runs ([`SESSION_SETTINGS`]: the
//! session time zone and ANSI mode), which datafusion-distributed alone does not
//! send. A worker runs each query with its coordinator's values, whatever its
//! own defaults, and refuses a query whose setting it cannot honour (a setting
//! it does not know, a time zone it cannot read) with an error naming it.
//!
//! Failures: a worker that cannot be reached within [`CONNECT_TIMEOUT`] fails the
//! query with an error naming its URL; a worker that dies in the middle of a query
//! fails it at once (the connection breaks) or, when it vanishes without closing
//! its connections, within [`KEEPALIVE_TIMEOUT`] of the last keep-alive.
//!
//! [datafusion-distributed]: https://github.com/datafusion-contrib/datafusion-distributed
//!
//! ```no_run
//! # async fn example() -> datafusion::error::Result<()> {
//! use std::sync::Arc;
//! use datafusion::prelude::{SessionConfig, SessionContext};
//! // On each worker machine:
//! //   df-variant worker --bind 0.0.0.0 --port 50051
//! // On the coordinator:
//! let workers = vec![url::Url::parse("http://10.0.0.2:50051").unwrap()];
//! let builder = df_variant::variant_state_builder(SessionConfig::new(), Arc::default());
//! let state = df_variant::distributed::with_workers(builder, workers)?.build();
//! let ctx = SessionContext::new_with_state(state);
//! ctx.sql("SELECT v:commit.collection::string AS c, count(*) FROM 's3://bucket/events/' GROUP BY c")
//!     .await?
//!     .show()
//!     .await?;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::{
    ChannelResolver, DistributedExt, SessionStateBuilderExt, Worker, WorkerChannel,
    WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse, WorkerQueryContext, WorkerResolver,
    grpc,
};
use tonic::transport::Endpoint;
use url::Url;

#[cfg(feature = "accel")]
use crate::accel::PartitionedDistinctCount;
use crate::codec::VariantPhysicalCodec;
use crate::config::VariantOptions;
use crate::parquet::{VariantScanExec, guarded_scan_config, scan_config};

/// How long the coordinator waits for a worker's TCP connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an idle connection to a worker is checked (HTTP/2 ping).
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
/// How long a ping may go unanswered before the worker counts as gone.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Makes `builder` a coordinator whose queries run on `workers` (URLs such as
/// `http://127.0.0.1:50051`). Call it on a builder that already has df-variant
/// ([`crate::variant_state_builder`] or [`crate::with_variant`]) and its
/// configuration: DataFusion's `with_config` after this would drop the
/// distributed settings.
///
/// Stages go to the workers; the coordinator runs the final stage. With fewer
/// than two workers or too little data to split, a query runs on the
/// coordinator as before.
///
/// # Errors
/// When `workers` is empty.
pub fn with_workers(
    builder: SessionStateBuilder,
    workers: Vec<Url>,
) -> Result<SessionStateBuilder> {
    if workers.is_empty() {
        return Err(exec_datafusion_err!("no worker URLs given"));
    }
    with_cluster(builder, StaticWorkers(workers), TcpChannels::default())
}

/// Like [`with_workers`], with the caller's worker list and channels (an
/// in-memory cluster, service discovery).
///
/// # Errors
/// When the distributed settings cannot be applied.
pub fn with_cluster(
    mut builder: SessionStateBuilder,
    workers: impl WorkerResolver + 'static,
    channels: impl ChannelResolver + Send + Sync + 'static,
) -> Result<SessionStateBuilder> {
    // The session's own `variant.*` values, which later `SET`s change and every
    // query sends along.
    let options = builder
        .config()
        .as_ref()
        .and_then(|c| c.options().extensions.get::<VariantOptions>().cloned())
        .unwrap_or_default();
    builder
        .with_distributed_planner()
        .with_distributed_worker_resolver(workers)
        .with_distributed_channel_resolver(SessionChannels(channels))
        .with_distributed_user_codec(VariantPhysicalCodec::default())
        .with_distributed_option_extension(options)
        .with_distributed_metrics_collection(true)
}

/// A worker with everything of df-variant: the functions (and Spark's, for a
/// query planned with `variant.spark_functions`), the codec, the
/// `variant.*` settings of each query, and the Parquet footer guard on every scan
/// it is sent. `runtime` holds the object stores the plans' files live in.
/// Workers reach each other (shuffles) over [`TcpChannels`].
pub fn worker(runtime: Arc<RuntimeEnv>) -> Worker {
    worker_with_channels(runtime, TcpChannels::default())
}

/// Like [`worker`], reaching other workers through `channels`.
pub fn worker_with_channels<C>(runtime: Arc<RuntimeEnv>, channels: C) -> Worker
where
    C: ChannelResolver + Clone + Send + Sync + 'static,
{
    let guard_runtime = Arc::clone(&runtime);
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let runtime = Arc::clone(&guard_runtime);
        let channels = channels.clone();
        async move {
            let mut builder = ctx
                .builder
                .with_distributed_option_extension_from_headers::<VariantOptions>(&ctx.headers)?;
            apply_session_settings(builder.config().get_or_insert_default(), &ctx.headers)?;
            // Spark's built-ins only for queries planned with them: some share a
            // name with DataFusion's (`date_part`), and plans name functions.
            let spark = builder
                .config()
                .as_ref()
                .and_then(|c| c.options().extensions.get::<VariantOptions>())
                .is_some_and(|o| o.spark_functions);
            if spark {
                builder = crate::spark::with_spark_functions(builder);
            }
            #[cfg_attr(not(feature = "accel"), allow(unused_mut))]
            let mut builder = crate::with_variant(builder);
            // Found by name: datafusion-distributed's composed codec asks its
            // own codec first, which claims every aggregate function with no
            // bytes, so ours never sees it. Workers do not plan SQL, so
            // nobody can call it here without the repartition it needs.
            #[cfg(feature = "accel")]
            builder
                .aggregate_functions()
                .get_or_insert_with(Vec::new)
                .push(PartitionedDistinctCount::udaf());
            let builder = builder
                .with_distributed_channel_resolver(channels)
                .with_distributed_user_codec(VariantPhysicalCodec::default())
                .with_distributed_worker_plan_rewrite_handler(move |ev: WorkerPlanRewriteEvent| {
                    guard_scans(ev.plan, &runtime).map(WorkerPlanRewriteEventResponse::new)
                });
            Ok(builder.build())
        }
    })
    .with_runtime_env(runtime)
}

/// Serves [`worker`] on `listener` until the process ends.
///
/// # Errors
/// When the server fails.
pub async fn serve(listener: tokio::net::TcpListener, runtime: Arc<RuntimeEnv>) -> Result<()> {
    tonic::transport::Server::builder()
        .add_service(worker(runtime).into_worker_server())
        .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

/// Parquet scans of a decoded plan with the footer guard back on (the scans under
/// a `VariantScanExec` got it from the codec).
fn guard_scans(
    plan: Arc<dyn ExecutionPlan>,
    runtime: &RuntimeEnv,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_down(|node| {
        if node.downcast_ref::<VariantScanExec>().is_some() {
            return Ok(Transformed::new(node, false, TreeNodeRecursion::Jump));
        }
        match scan_config(&node) {
            Some(config) => {
                let guarded = guarded_scan_config(config, runtime)?;
                Ok(Transformed::yes(
                    DataSourceExec::from_data_source(guarded) as Arc<dyn ExecutionPlan>
                ))
            }
            None => Ok(Transformed::no(node)),
        }
    })
    .map(|t| t.data)
}

/// The DataFusion settings that functions read while a plan runs, which each
/// query sends its workers: the session time zone (Variant timestamps printed by
/// `to_json` or cast to strings, `date_part` and the like) and ANSI mode
/// (casts that fail instead of giving NULL). Settings read while planning need
/// not travel: planning stays on the coordinator.
pub const SESSION_SETTINGS: &[&str] = &[
    "datafusion.execution.time_zone",
    "datafusion.execution.enable_ansi_mode",
];

/// The request header that carries a setting of [`SESSION_SETTINGS`], followed by
/// its key (an unset value is sent empty).
const SETTING_HEADER: &str = "x-df-variant-setting-";

/// The coordinator's [`SESSION_SETTINGS`] as request headers.
fn session_setting_headers(
    options: &datafusion::config::ConfigOptions,
    headers: &mut tonic::codegen::http::HeaderMap,
) -> Result<()> {
    use tonic::codegen::http::{HeaderName, HeaderValue};
    for entry in options.entries() {
        if !SESSION_SETTINGS.contains(&entry.key.as_str()) {
            continue;
        }
        let value = entry.value.unwrap_or_default();
        let name = HeaderName::from_bytes(format!("{SETTING_HEADER}{}", entry.key).as_bytes())
            .map_err(|e| exec_datafusion_err!("setting {}: {e}", entry.key))?;
        let value = Some(&value)
            .filter(|v| v.bytes().all(|b| b.is_ascii_graphic() || b == b' '))
            .and_then(|v| HeaderValue::from_str(v).ok())
            .ok_or_else(|| {
                exec_datafusion_err!(
                    "cannot send {} = '{value}' to the workers: only printable ASCII travels",
                    entry.key
                )
            })?;
        headers.insert(name, value);
    }
    Ok(())
}

/// Sets on a worker's session the [`SESSION_SETTINGS`] its coordinator sent.
///
/// # Errors
/// A configuration error naming the setting when this worker cannot honour it:
/// a key it does not know (a coordinator of another version) or a value it
/// cannot use (a time zone it cannot read).
fn apply_session_settings(
    config: &mut datafusion::prelude::SessionConfig,
    headers: &tonic::codegen::http::HeaderMap,
) -> Result<()> {
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(SETTING_HEADER) else {
            continue;
        };
        let value = String::from_utf8_lossy(value.as_bytes());
        let refuse = |why: &dyn std::fmt::Display| {
            DataFusionError::Configuration(format!(
                "this df-variant worker cannot honour the coordinator's setting {key} = '{value}': {why}"
            ))
        };
        if !SESSION_SETTINGS.contains(&key) {
            return Err(refuse(
                &"it does not know it (run the same df-variant version on the coordinator and its workers)",
            ));
        }
        let options = config.options_mut();
        if key == "datafusion.execution.time_zone" {
            options.execution.time_zone = (!value.is_empty()).then(|| value.to_string());
            crate::config::session_tz(options).map_err(|e| refuse(&e))?;
        } else {
            options.set(key, &value).map_err(|e| refuse(&e))?;
        }
    }
    Ok(())
}

/// A coordinator's channels to its workers, each query's [`SESSION_SETTINGS`]
/// added to the request that hands a worker its task.
struct SessionChannels<C>(C);

#[async_trait]
impl<C: ChannelResolver + Send + Sync> ChannelResolver for SessionChannels<C> {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        let inner = self.0.get_worker_client_for_url(url).await?;
        Ok(Box::new(SessionChannel(inner)))
    }
}

/// A worker's channel that sends the coordinator's [`SESSION_SETTINGS`].
struct SessionChannel(Box<dyn WorkerChannel>);

#[async_trait]
impl WorkerChannel for SessionChannel {
    async fn coordinator_channel(
        &mut self,
        mut headers: tonic::codegen::http::HeaderMap,
        set_plan_request: datafusion_distributed::SetPlanRequest,
        c2w_stream: futures::stream::BoxStream<
            'static,
            datafusion_distributed::CoordinatorToWorkerMsg,
        >,
        metrics: datafusion::physical_plan::metrics::ExecutionPlanMetricsSet,
        task_ctx: &Arc<datafusion::execution::TaskContext>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<datafusion_distributed::WorkerToCoordinatorMsg>>,
    > {
        session_setting_headers(task_ctx.session_config().options(), &mut headers)?;
        self.0
            .coordinator_channel(headers, set_plan_request, c2w_stream, metrics, task_ctx)
            .await
    }

    async fn execute_task(
        &mut self,
        headers: tonic::codegen::http::HeaderMap,
        request: datafusion_distributed::ExecuteTaskRequest,
        metrics: datafusion::physical_plan::metrics::ExecutionPlanMetricsSet,
        task_ctx: &Arc<datafusion::execution::TaskContext>,
    ) -> Result<Vec<futures::stream::BoxStream<'static, Result<arrow::array::RecordBatch>>>> {
        self.0
            .execute_task(headers, request, metrics, task_ctx)
            .await
    }

    async fn get_worker_info(
        &mut self,
        request: datafusion_distributed::GetWorkerInfoRequest,
    ) -> Result<datafusion_distributed::GetWorkerInfoResponse> {
        self.0.get_worker_info(request).await
    }
}

/// A fixed list of workers.
#[derive(Debug, Clone)]
pub struct StaticWorkers(pub Vec<Url>);

impl WorkerResolver for StaticWorkers {
    fn get_urls(&self) -> Result<Vec<Url>> {
        Ok(self.0.clone())
    }
}

/// gRPC channels to workers over TCP, one per URL, with a connect timeout and
/// HTTP/2 keep-alives (datafusion-distributed's default has neither, so a worker
/// that vanishes could leave a query waiting forever).
#[derive(Clone, Default)]
pub struct TcpChannels {
    channels: Arc<Mutex<HashMap<Url, grpc::BoxCloneSyncChannel>>>,
}

impl std::fmt::Debug for TcpChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TcpChannels")
    }
}

#[async_trait]
impl ChannelResolver for TcpChannels {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        let cached = self
            .channels
            .lock()
            .map_err(|_| exec_datafusion_err!("worker channel cache poisoned"))?
            .get(url)
            .cloned();
        let channel = match cached {
            Some(c) => c,
            None => {
                let endpoint = Endpoint::from_shared(url.to_string())
                    .map_err(|e| exec_datafusion_err!("worker URL '{url}': {e}"))?
                    .connect_timeout(CONNECT_TIMEOUT)
                    .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
                    .keep_alive_timeout(KEEPALIVE_TIMEOUT)
                    .keep_alive_while_idle(true);
                let channel = endpoint.connect().await.map_err(|e| {
                    exec_datafusion_err!("cannot connect to df-variant worker {url}: {e}")
                })?;
                let channel = grpc::BoxCloneSyncChannel::new(channel);
                self.channels
                    .lock()
                    .map_err(|_| exec_datafusion_err!("worker channel cache poisoned"))?
                    .insert(url.clone(), channel.clone());
                channel
            }
        };
        Ok(Box::new(NamedWorker {
            url: url.clone(),
            inner: grpc::create_worker_client(channel),
        }))
    }
}

/// A worker's channel whose transport failures name the worker: datafusion-distributed
/// reports a broken connection as a bare gRPC status ("h2 protocol error ..."). Errors
/// a worker sent back (a query's own errors) pass unchanged.
struct NamedWorker {
    url: Url,
    inner: Box<dyn WorkerChannel>,
}

impl NamedWorker {
    fn name(url: &Url, e: DataFusionError) -> DataFusionError {
        match e {
            DataFusionError::External(inner) => DataFusionError::Execution(format!(
                "lost df-variant worker {url} during the query: {inner}"
            )),
            other => other,
        }
    }

    fn named<T: Send + 'static>(
        &self,
        stream: futures::stream::BoxStream<'static, Result<T>>,
    ) -> futures::stream::BoxStream<'static, Result<T>> {
        use futures::StreamExt;
        let url = self.url.clone();
        stream
            .map(move |r| r.map_err(|e| Self::name(&url, e)))
            .boxed()
    }
}

#[async_trait]
impl WorkerChannel for NamedWorker {
    async fn coordinator_channel(
        &mut self,
        headers: tonic::codegen::http::HeaderMap,
        set_plan_request: datafusion_distributed::SetPlanRequest,
        c2w_stream: futures::stream::BoxStream<
            'static,
            datafusion_distributed::CoordinatorToWorkerMsg,
        >,
        metrics: datafusion::physical_plan::metrics::ExecutionPlanMetricsSet,
        task_ctx: &Arc<datafusion::execution::TaskContext>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<datafusion_distributed::WorkerToCoordinatorMsg>>,
    > {
        let stream = self
            .inner
            .coordinator_channel(headers, set_plan_request, c2w_stream, metrics, task_ctx)
            .await
            .map_err(|e| Self::name(&self.url, e))?;
        Ok(self.named(stream))
    }

    async fn execute_task(
        &mut self,
        headers: tonic::codegen::http::HeaderMap,
        request: datafusion_distributed::ExecuteTaskRequest,
        metrics: datafusion::physical_plan::metrics::ExecutionPlanMetricsSet,
        task_ctx: &Arc<datafusion::execution::TaskContext>,
    ) -> Result<Vec<futures::stream::BoxStream<'static, Result<arrow::array::RecordBatch>>>> {
        let streams = self
            .inner
            .execute_task(headers, request, metrics, task_ctx)
            .await
            .map_err(|e| Self::name(&self.url, e))?;
        Ok(streams.into_iter().map(|s| self.named(s)).collect())
    }

    async fn get_worker_info(
        &mut self,
        request: datafusion_distributed::GetWorkerInfoRequest,
    ) -> Result<datafusion_distributed::GetWorkerInfoResponse> {
        self.inner
            .get_worker_info(request)
            .await
            .map_err(|e| Self::name(&self.url, e))
    }
}

/// A cluster of workers inside this process, reached over in-memory pipes
/// instead of sockets: plans and data still go through gRPC and the codec. For
/// tests (it needs a running tokio runtime).
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> datafusion::error::Result<()> {
/// use std::sync::Arc;
/// use datafusion::prelude::{SessionConfig, SessionContext};
/// let cluster = df_variant::distributed::InMemoryCluster::start(2, Arc::default());
/// let builder = df_variant::variant_state_builder(SessionConfig::new(), Arc::default());
/// let ctx = SessionContext::new_with_state(cluster.coordinator(builder)?.build());
/// let df = ctx.sql(r#"SELECT to_json(parse_json('[1]')) AS j"#).await?;
/// assert_eq!(df.collect().await?[0].num_rows(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct InMemoryCluster {
    channels: InMemoryChannels,
    servers: Vec<tokio::task::JoinHandle<()>>,
}

impl InMemoryCluster {
    /// Starts `workers` workers (at least one) on `runtime`.
    pub fn start(workers: usize, runtime: Arc<RuntimeEnv>) -> Self {
        use futures::StreamExt;
        let mut map = std::collections::BTreeMap::new();
        let mut receivers = Vec::new();
        for i in 0..workers.max(1) {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<tokio::io::DuplexStream>();
            let url = format!("http://worker-{i}.in-memory:50051");
            let channel = Endpoint::from_shared(url.clone()).map(|e| {
                e.connect_with_connector_lazy(tower::service_fn(
                    move |_: tonic::codegen::http::Uri| {
                        let tx = tx.clone();
                        async move {
                            let (client, server) = tokio::io::duplex(1 << 20);
                            tx.send(server)
                                .map_err(|_| std::io::Error::other("in-memory worker stopped"))?;
                            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(client))
                        }
                    },
                ))
            });
            if let (Ok(channel), Ok(url)) = (channel, Url::parse(&url)) {
                map.insert(url, grpc::BoxCloneSyncChannel::new(channel));
                receivers.push(rx);
            }
        }
        let channels = InMemoryChannels(Arc::new(map));
        let servers = receivers
            .into_iter()
            .map(|rx| {
                let worker = worker_with_channels(Arc::clone(&runtime), channels.clone());
                let incoming = tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
                    .map(Ok::<_, std::io::Error>);
                tokio::spawn(async move {
                    let _ = tonic::transport::Server::builder()
                        .add_service(worker.into_worker_server())
                        .serve_with_incoming(incoming)
                        .await;
                })
            })
            .collect();
        Self { channels, servers }
    }

    /// `builder` as a coordinator of this cluster that splits every file scan
    /// into as many tasks as it can, so that even small test tables are
    /// distributed.
    ///
    /// # Errors
    /// When the distributed settings cannot be applied.
    pub fn coordinator(&self, builder: SessionStateBuilder) -> Result<SessionStateBuilder> {
        with_cluster(builder, self.channels.clone(), self.channels.clone())?
            .with_distributed_file_scan_config_bytes_per_partition(1)
    }
}

impl Drop for InMemoryCluster {
    fn drop(&mut self) {
        for s in &self.servers {
            s.abort();
        }
    }
}

/// The workers of an [`InMemoryCluster`], by URL.
#[derive(Clone)]
struct InMemoryChannels(Arc<std::collections::BTreeMap<Url, grpc::BoxCloneSyncChannel>>);

impl std::fmt::Debug for InMemoryChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl WorkerResolver for InMemoryChannels {
    fn get_urls(&self) -> Result<Vec<Url>> {
        Ok(self.0.keys().cloned().collect())
    }
}

#[async_trait]
impl ChannelResolver for InMemoryChannels {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        let channel = self
            .0
            .get(url)
            .ok_or_else(|| exec_datafusion_err!("no in-memory worker {url}"))?;
        Ok(grpc::create_worker_client(channel.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionConfig;
    use tonic::codegen::http::HeaderMap;

    fn sent(options: &datafusion::config::ConfigOptions) -> HeaderMap {
        let mut headers = HeaderMap::new();
        session_setting_headers(options, &mut headers).unwrap();
        headers
    }

    #[test]
    fn a_worker_runs_with_the_coordinators_settings_whatever_its_own() {
        let mut coordinator = SessionConfig::new();
        coordinator.options_mut().execution.time_zone = Some("America/New_York".into());
        coordinator.options_mut().execution.enable_ansi_mode = true;
        let mut worker = SessionConfig::new();
        worker.options_mut().execution.time_zone = Some("+02:00".into());
        apply_session_settings(&mut worker, &sent(coordinator.options())).unwrap();
        assert_eq!(
            worker.options().execution.time_zone.as_deref(),
            Some("America/New_York")
        );
        assert!(worker.options().execution.enable_ansi_mode);
        // An unset zone is sent too, and unsets the worker's.
        apply_session_settings(&mut worker, &sent(SessionConfig::new().options())).unwrap();
        assert_eq!(worker.options().execution.time_zone, None);
        assert!(!worker.options().execution.enable_ansi_mode);
    }

    #[test]
    fn a_worker_refuses_a_setting_it_cannot_honour() {
        let refused = |key: &str, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                tonic::codegen::http::HeaderName::from_bytes(
                    format!("{SETTING_HEADER}{key}").as_bytes(),
                )
                .unwrap(),
                value.parse().unwrap(),
            );
            apply_session_settings(&mut SessionConfig::new(), &headers)
                .unwrap_err()
                .to_string()
        };
        let e = refused("datafusion.execution.time_zone", "Mars/Olympus_Mons");
        assert!(
            e.contains("cannot honour") && e.contains("Mars/Olympus_Mons"),
            "{e}"
        );
        let e = refused("datafusion.execution.some_future_setting", "1");
        assert!(e.contains("does not know it"), "{e}");
        let e = refused("datafusion.execution.enable_ansi_mode", "perhaps");
        assert!(e.contains("enable_ansi_mode = 'perhaps'"), "{e}");
    }

    #[test]
    fn a_zone_that_is_not_ascii_is_refused_on_the_coordinator() {
        let mut options = datafusion::config::ConfigOptions::new();
        options.execution.time_zone = Some("Zone\u{e9}".into());
        let e = session_setting_headers(&options, &mut HeaderMap::new()).unwrap_err();
        assert!(e.to_string().contains("printable ASCII"), "{e}");
    }
}
