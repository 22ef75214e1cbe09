//! Running statements: splitting scripts, planning, executing with a progress
//! spinner on a terminal, printing results and timings, one-line errors.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};

use df_variant::variant::tz::SessionTz;

use super::{Args, Format, print};

/// A session of the CLI: the context plus output settings.
pub struct Session {
    ctx: SessionContext,
    format: Format,
    quiet: bool,
    maxrows: usize,
    /// Spinners only when stderr is a terminal (none when piped).
    progress: bool,
    /// Whether Spark's built-ins are registered.
    spark: std::cell::Cell<bool>,
}

/// One line for an error: DataFusion's message without backtraces and context
/// wrappers that add nothing for a user.
pub fn one_line(e: &DataFusionError) -> String {
    let text = e.strip_backtrace();
    let text = text.trim();
    // Keep multi-line messages on one line.
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

impl Session {
    /// A session with everything of df-variant registered.
    pub fn new(args: &Args) -> Self {
        let mut config = SessionConfig::new()
            .with_information_schema(true)
            .with_option_extension(df_variant::VariantOptions::default());
        if let Some(p) = args.partitions {
            config = config.with_target_partitions(p.max(1));
        }
        if args.spark
            && let Err(e) = config.options_mut().set("variant.spark_functions", "true")
        {
            eprintln!("Error: {}", one_line(&e));
        }
        let runtime = match super::runtime(args.memory_limit) {
            Ok(runtime) => runtime,
            Err(e) => {
                // Running without the limit the user asked for would be wrong.
                eprintln!("Error: --memory-limit: {}", one_line(&e));
                std::process::exit(2);
            }
        };
        let mut builder = df_variant::variant_state_builder(config, runtime);
        if args.accelerate {
            builder = df_variant::accel::with_accelerations(builder);
        }
        #[cfg(feature = "distributed")]
        let builder = if args.workers.is_empty() {
            builder
        } else {
            match df_variant::distributed::with_workers(builder, args.workers.clone()) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("Error: --workers: {}", one_line(&e));
                    std::process::exit(2);
                }
            }
        };
        // `SELECT ... FROM 'file.parquet'` works, as users of Variant files expect.
        let ctx = df_variant::enable_url_table(SessionContext::new_with_state(builder.build()));
        Self {
            ctx,
            format: args.format,
            quiet: args.quiet,
            maxrows: args.maxrows,
            progress: std::io::stderr().is_terminal(),
            spark: std::cell::Cell::new(args.spark && df_variant::SPARK_FUNCTIONS_AVAILABLE),
        }
    }

    /// Registers Spark's built-ins once `variant.spark_functions` became true.
    fn apply_spark_setting(&self) -> Result<()> {
        let wanted = self
            .ctx
            .state_ref()
            .read()
            .config()
            .options()
            .extensions
            .get::<df_variant::VariantOptions>()
            .is_some_and(|o| o.spark_functions);
        if wanted && !self.spark.get() {
            df_variant::register_spark_functions(&self.ctx)?;
            self.spark.set(true);
        }
        Ok(())
    }

    /// Splits `sql` into statements (with `df_variant::sql::parse_statements`,
    /// whose dialect binds `:` as Spark does).
    pub fn parse(&self, sql: &str) -> Result<Vec<Statement>> {
        df_variant::sql::parse_statements(&self.ctx.state(), sql)
    }

    /// Runs every statement of a script, stopping at the first error (printed as
    /// one line naming `origin` and the statement number). `false` on error.
    pub async fn run_script(&self, sql: &str, origin: &str) -> bool {
        // `ALTER TABLE` on Delta tables runs here (DataFusion does not plan it);
        // a script holding one is split into its statements first.
        let pieces = df_variant::sql::split_statements(sql);
        let alters = pieces
            .iter()
            .map(|p| parse_alter(p))
            .collect::<Result<Vec<_>>>();
        let statements: Vec<Piece> = match alters {
            Ok(a) if a.iter().any(Option::is_some) => {
                let mut out = Vec::new();
                for (piece, alter) in pieces.iter().zip(a) {
                    match alter {
                        Some(alter) => out.push(Piece::Alter(alter)),
                        None => match self.parse(piece) {
                            Ok(s) => out.extend(s.into_iter().map(Piece::Sql)),
                            Err(e) => {
                                eprintln!("Error ({origin}): {}", one_line(&e));
                                return false;
                            }
                        },
                    }
                }
                out
            }
            Err(e) => {
                eprintln!("Error ({origin}): {}", one_line(&e));
                return false;
            }
            Ok(_) => match self.parse(sql) {
                Ok(s) => s.into_iter().map(Piece::Sql).collect(),
                Err(e) => {
                    eprintln!("Error ({origin}): {}", one_line(&e));
                    return false;
                }
            },
        };
        let many = statements.len() > 1;
        for (i, statement) in statements.into_iter().enumerate() {
            let result = match statement {
                Piece::Sql(statement) => self.run_statement(statement).await,
                Piece::Alter(alter) => self.run_alter(&alter).await,
            };
            if let Err(e) = result {
                if many {
                    eprintln!("Error ({origin}, statement {}): {}", i + 1, one_line(&e));
                } else {
                    eprintln!("Error: {}", one_line(&e));
                }
                return false;
            }
        }
        true
    }

    /// Runs an `ALTER TABLE` on a Delta table and prints its one row.
    #[cfg_attr(not(feature = "delta"), allow(clippy::unused_async))]
    async fn run_alter(&self, alter: &AlterStatement) -> Result<()> {
        #[cfg(not(feature = "delta"))]
        match *alter {}
        #[cfg(feature = "delta")]
        {
            let started = Instant::now();
            let df = df_variant::delta::alter::alter_table(&self.ctx, alter).await?;
            let schema = Arc::clone(df.schema().inner());
            let batches = df.collect().await?;
            let tz = self.session_tz()?;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            print::print(&mut out, self.format, &schema, &batches, self.maxrows, &tz)?;
            if !self.quiet {
                eprintln!("1 row in {:.3} s", started.elapsed().as_secs_f64());
            }
            Ok(())
        }
    }

    /// Plans one statement.
    pub async fn plan(&self, statement: Statement) -> Result<LogicalPlan> {
        df_variant::sql::plan_statement(&self.ctx.state(), statement).await
    }

    /// Plans, runs and prints one statement.
    pub async fn run_statement(&self, statement: Statement) -> Result<()> {
        let started = Instant::now();
        let spinner = self.spinner(&statement.to_string());
        let result = self.execute(statement, spinner.as_ref()).await;
        if let Some(s) = &spinner {
            s.finish_and_clear();
        }
        let (schema, batches) = result?;
        self.apply_spark_setting()?;
        let rows: usize = batches
            .iter()
            .map(arrow::array::RecordBatch::num_rows)
            .sum();
        let tz = self.session_tz()?;
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        if !schema.fields().is_empty() {
            print::print(&mut out, self.format, &schema, &batches, self.maxrows, &tz)?;
        }
        if !self.quiet {
            let elapsed = started.elapsed().as_secs_f64();
            let noun = if rows == 1 { "row" } else { "rows" };
            eprintln!("{rows} {noun} in {elapsed:.3} s");
        }
        Ok(())
    }

    async fn execute(
        &self,
        statement: Statement,
        spinner: Option<&ProgressBar>,
    ) -> Result<(arrow::datatypes::SchemaRef, Vec<arrow::array::RecordBatch>)> {
        let plan = self.plan(statement).await?;
        let df = df_variant::sql::execute(&self.ctx, plan).await?;
        let schema = Arc::clone(df.schema().inner());
        let mut stream = df.execute_stream().await?;
        let mut batches = Vec::new();
        let mut rows = 0usize;
        while let Some(batch) = stream.next().await {
            let batch = batch?;
            rows += batch.num_rows();
            if let Some(s) = spinner {
                s.set_message(format!("{rows} rows"));
            }
            batches.push(batch);
        }
        Ok((schema, batches))
    }

    fn spinner(&self, sql: &str) -> Option<ProgressBar> {
        if !self.progress {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        let label: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        let label = if label.chars().count() > 50 {
            format!("{}…", label.chars().take(50).collect::<String>())
        } else {
            label
        };
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {prefix} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(label);
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(bar)
    }

    fn session_tz(&self) -> Result<SessionTz> {
        df_variant::session_tz(self.ctx.state_ref().read().config().options())
    }
}

/// A statement of a script: SQL for DataFusion, or an `ALTER TABLE` run here.
enum Piece {
    Sql(Statement),
    Alter(AlterStatement),
}

#[cfg(feature = "delta")]
use df_variant::delta::alter::AlterStatement;

/// Without Delta support there is no `ALTER TABLE` to run.
#[cfg(not(feature = "delta"))]
enum AlterStatement {}

/// An `ALTER TABLE` on a Delta table, which the CLI runs itself.
fn parse_alter(sql: &str) -> Result<Option<AlterStatement>> {
    #[cfg(feature = "delta")]
    return df_variant::delta::alter::parse_alter(sql);
    #[cfg(not(feature = "delta"))]
    {
        let _ = sql;
        Ok(None)
    }
}
