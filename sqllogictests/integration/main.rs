//! The integration tests, in one binary so that DataFusion is linked once.
//! Run one module with `cargo test --test integration <module>::`.

#![allow(clippy::unwrap_used, missing_docs)] // a test, bench or tool: panics are its failure mode

mod boundary;
mod cli;
mod conformance;
mod deletion_vectors;
mod delta;
mod distributed;
mod docs;
mod layout;
mod memory;
mod pushdown;
mod robustness;
mod roundtrip;
mod rules;
mod shredded_conformance;
mod sql_shapes;
