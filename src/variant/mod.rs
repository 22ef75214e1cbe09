//! Spark semantics over arrow-rs `parquet-variant` values. Nothing in this module
//! depends on DataFusion.

pub mod cast;
pub mod format;
pub mod json;
pub mod path;
pub mod raw;
pub mod schema;
pub mod types;
pub mod tz;
pub mod validate;
