//! `df-variant`: a SQL shell over DataFusion with everything of df-variant
//! registered (functions, the VARIANT type, the shredding Parquet writer,
//! `read_json_variant`, `variant_shredding_schema`).
//!
//! ```text
//! cargo run --release -- --demo                   # generate, ingest and query demo events
//! cargo run --release                             # interactive shell
//! cargo run --release -- -c "SELECT parse_json('{\"a\":1}')"
//! cargo run --release -- -f script.sql --format csv
//! ```

mod cli;

use std::process::ExitCode;

use clap::Parser;

// DataFusion's own CLI allocates with mimalloc too; glibc's malloc and free
// were a fifth of planning a JSONBench query.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(cli::run(args))
}
