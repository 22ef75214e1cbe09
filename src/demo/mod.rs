//! Deterministic demo and benchmark data.
//!
//! [`bluesky`] generates JSONBench-shaped Bluesky events (a byte-exact port of
//! JSONBench's `bluesky_gen.py` generator), used by the CLI's `--demo`, the benchmarks
//! and the ingest measurements.
//!
//! ```
//! let mut out = Vec::new();
//! let bytes = df_variant::demo::bluesky::write_ndjson(3, 1, &mut out).unwrap();
//! assert_eq!(bytes as usize, out.len());
//! assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 3);
//! ```

pub mod bluesky;
