//! The peer "DataFusion + datafusion-functions-json on JSON text" of the JSONBench
//! harness (`benches/jsonbench.py`): plain DataFusion 55 with the JSON functions
//! registered, no Variant anywhere.
//!
//! ```text
//! cargo run --release --example json_text -- TEXT.parquet RUNS QUERIES.sql
//! ```
//!
//! `QUERIES.sql` holds one query per line over the table `bluesky(j VARCHAR)`.
//! For each query it prints one JSON line: wall and CPU seconds of every run and
//! the rows of the last one (cells as strings).

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

use std::time::Instant;

// As datafusion-cli, which a DataFusion user runs, allocates (and as the
// df-variant CLI does).
#[cfg(feature = "cli")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::Result;
use datafusion::prelude::{ParquetReadOptions, SessionContext};

/// CPU seconds (user + system) of this process so far, from /proc.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the command name (which ends with ')'): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: json_text TEXT.parquet RUNS QUERIES.sql");
        std::process::exit(2);
    }
    let runs: usize = args[2].parse().unwrap_or(3);
    let queries = std::fs::read_to_string(&args[3])?;
    let mut ctx = SessionContext::new();
    datafusion_functions_json::register_all(&mut ctx)?;
    ctx.sql("SET datafusion.execution.time_zone = 'UTC'")
        .await?
        .collect()
        .await?;
    ctx.register_parquet("bluesky", &args[1], ParquetReadOptions::default())
        .await?;
    for (i, query) in queries.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let mut wall = Vec::new();
        let mut cpu = Vec::new();
        let mut rows: Vec<Vec<String>> = Vec::new();
        for _ in 0..runs {
            let (started, cpu_started) = (Instant::now(), cpu_seconds());
            let batches = ctx.sql(query).await?.collect().await?;
            wall.push(started.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - cpu_started);
            rows.clear();
            for batch in &batches {
                let formatters = batch
                    .columns()
                    .iter()
                    .map(|c| ArrayFormatter::try_new(c.as_ref(), &FormatOptions::default()))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                for r in 0..batch.num_rows() {
                    rows.push(formatters.iter().map(|f| f.value(r).to_string()).collect());
                }
            }
        }
        let rows_json: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "[{}]",
                    r.iter().map(|c| quote(c)).collect::<Vec<_>>().join(",")
                )
            })
            .collect();
        println!(
            "{{\"query\":{},\"wall\":{:?},\"cpu\":{:?},\"rows\":[{}]}}",
            i + 1,
            wall,
            cpu,
            rows_json.join(",")
        );
    }
    Ok(())
}
