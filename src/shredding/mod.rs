//! Shredding Variant columns for Parquet: choosing a shredding schema from the
//! data ([`infer`]) or from a DDL string ([`ddl`]) and splitting values into typed
//! columns ([`shred()`]), over the table of shredded types that the reassembly
//! in [`crate::variant`] shares ([`crate::variant::shredded`]).
//!
//! The functions return Arrow errors; DataFusion errors are made where they are
//! called (`boundary::shredding_error`). The module sits above [`crate::array`].

use arrow::error::ArrowError;

/// A data error of the shredder (a DataFusion execution error at the boundary).
macro_rules! shred_err {
    ($($arg:tt)*) => {
        arrow::error::ArrowError::ComputeError(format!($($arg)*))
    };
}

/// A schema error of the shredder (a DataFusion planning error at the boundary).
macro_rules! shred_plan_err {
    ($($arg:tt)*) => {
        arrow::error::ArrowError::InvalidArgumentError(format!($($arg)*))
    };
}

pub mod ddl;
pub mod infer;
mod rows;
pub mod shred;

pub use ddl::typed_value_from_ddl;
pub use infer::{ShreddingOptions, infer_typed_value};
pub use shred::shred;

/// The result of the shredding functions.
pub type Result<T> = std::result::Result<T, ArrowError>;
