//! The command line: arguments, statement execution, output, the shell and the demo.

mod demo;
mod exec;
mod print;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

pub use exec::Session;

/// Output formats of query results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// An aligned text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line.
    Ndjson,
}

/// SQL over semi-structured data with DataFusion and the Variant type.
///
/// With no -c, -f or --demo, starts an interactive shell (statements end with
/// `;`; `\q` or Ctrl-D quits).
#[derive(Debug, Parser)]
#[command(name = "df-variant", version, about)]
#[allow(clippy::struct_excessive_bools)] // command-line switches
pub struct Args {
    /// Run this SQL (one or more statements); repeatable, run in order.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    pub commands: Vec<String>,

    /// Run the SQL statements of this file; repeatable, run in order after -c.
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub files: Vec<PathBuf>,

    /// Output format of query results.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Do not print timings and row counts (they go to stderr).
    #[arg(short, long)]
    pub quiet: bool,

    /// At most this many rows printed per result in table format (0 = all).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub maxrows: usize,

    /// Generate demo events, ingest them into shredded Parquet and run showcase
    /// queries with their plans.
    #[arg(long)]
    pub demo: bool,

    /// Number of demo events.
    #[arg(long, default_value_t = 100_000, value_name = "N", requires = "demo")]
    pub demo_rows: u64,

    /// Keep the demo files in this directory (default: a temporary one, removed).
    #[arg(long, value_name = "DIR", requires = "demo")]
    pub demo_dir: Option<PathBuf>,

    /// Spark SQL compatibility: also register datafusion-spark's Spark built-ins
    /// (`array`, `map`, `named_struct`, `element_at`, ...); same as
    /// `SET variant.spark_functions = true`.
    #[arg(long)]
    pub spark: bool,

    /// Also speed up plain DataFusion plans (`df_variant::accel`): string
    /// group counts and `=` by views, `count(DISTINCT s)` per partition, and
    /// `date_part` by arithmetic. Off by default, as in the library.
    #[arg(long)]
    pub accelerate: bool,

    /// Target partitions (threads per query); default: the number of cores.
    #[arg(long, value_name = "N")]
    pub partitions: Option<usize>,

    /// Most memory the queries may use (e.g. `512M`, `2G`): sorts, aggregations and
    /// joins spill to disk at the limit, and a query that still does not fit fails
    /// with "Resources exhausted". Default: no limit.
    #[arg(long, value_name = "SIZE", value_parser = df_variant::parse_memory_size)]
    pub memory_limit: Option<usize>,
    /// Run queries on these df-variant workers (comma-separated URLs such as
    /// `http://127.0.0.1:50051`, started with `df-variant worker`): this process
    /// plans and runs the last stage, the workers run the rest.
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "URLS", value_delimiter = ',')]
    pub workers: Vec<url::Url>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands besides SQL.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write JSONBench-shaped Bluesky events as NDJSON (byte-identical to
    /// `shared/bench/bluesky_gen.py` for the same rows and seed).
    GenerateBluesky {
        /// Number of events.
        #[arg(long, default_value_t = 1_000_000)]
        rows: u64,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file (default: standard output).
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
    },
    /// Serve a distributed-execution worker (datafusion-distributed, gRPC) with
    /// everything of df-variant, for coordinators started with `--workers`.
    /// Each query runs with its coordinator's settings (`variant.*`, the time
    /// zone, ANSI mode), so a worker has none to set. Prints
    /// `listening on http://ADDR:PORT` once it accepts queries.
    #[cfg(feature = "distributed")]
    Worker {
        /// TCP port (0: any free port, printed).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// Address to listen on; the default accepts only this machine.
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
    },
}

/// The CLI's runtime: `--memory-limit`'s pool (DataFusion's default without
/// one); folder listings read afresh by each statement (DataFusion keeps them
/// for the session, so files another process added or removed went unseen;
/// `SET datafusion.runtime.list_files_cache_limit = '1M'` brings the cache
/// back); and hidden files (`.x`, `_x`) left out of local folder listings, as
/// `read_json_variant`, Spark and Hive do.
fn runtime(
    memory_limit: Option<usize>,
) -> datafusion::common::Result<std::sync::Arc<datafusion::execution::runtime_env::RuntimeEnv>> {
    use datafusion::execution::object_store::ObjectStoreUrl;
    use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
    use std::sync::Arc;
    let base = match memory_limit {
        Some(limit) => df_variant::memory_limited_runtime(limit)?,
        None => Arc::new(RuntimeEnv::default()),
    };
    let runtime = RuntimeEnvBuilder::from_runtime_env(&base)
        .with_object_list_cache_limit(0)
        .build_arc()?;
    let local = ObjectStoreUrl::local_filesystem();
    let store = runtime.object_store(&local)?;
    runtime.register_object_store(
        local.as_ref(),
        Arc::new(df_variant::HideHiddenFiles::new(store)),
    );
    Ok(runtime)
}

/// `df-variant worker`: serves until killed.
#[cfg(feature = "distributed")]
async fn serve_worker(bind: std::net::IpAddr, port: u16, memory_limit: Option<usize>) -> ExitCode {
    use std::io::Write;
    let runtime = match runtime(memory_limit) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: --memory-limit: {e}");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind((bind, port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("Error: cannot listen on {bind}:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => {
            println!("listening on http://{addr}");
            let _ = std::io::stdout().flush();
        }
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    }
    match df_variant::distributed::serve(listener, runtime).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: worker stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

fn generate_bluesky(rows: u64, seed: u64, out: Option<&PathBuf>) -> ExitCode {
    let started = std::time::Instant::now();
    let written = match out {
        Some(path) => std::fs::File::create(path)
            .and_then(|f| df_variant::demo::bluesky::write_ndjson(rows, seed, f)),
        None => df_variant::demo::bluesky::write_ndjson(rows, seed, std::io::stdout().lock()),
    };
    match written {
        Ok(bytes) => {
            eprintln!(
                "{rows} events, {bytes} bytes in {:.2} s",
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: cannot write the events: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command line; the exit code is non-zero when a statement of -c / -f
/// or the demo failed.
pub async fn run(args: Args) -> ExitCode {
    match &args.command {
        Some(Command::GenerateBluesky { rows, seed, out }) => {
            return generate_bluesky(*rows, *seed, out.as_ref());
        }
        #[cfg(feature = "distributed")]
        Some(Command::Worker { port, bind }) => {
            return serve_worker(*bind, *port, args.memory_limit).await;
        }
        None => {}
    }
    let session = Session::new(&args);
    if args.demo {
        return demo::run(&session, &args).await;
    }
    if args.commands.is_empty() && args.files.is_empty() {
        return shell::run(&session).await;
    }
    for sql in &args.commands {
        if !session.run_script(sql, "-c").await {
            return ExitCode::FAILURE;
        }
    }
    for path in &args.files {
        let sql = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("Error: cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        };
        if !session.run_script(&sql, &path.display().to_string()).await {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
