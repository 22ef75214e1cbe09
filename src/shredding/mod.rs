//! Shredding Variant columns for Parquet: choosing a shredding schema from the
//! data and splitting values into typed columns.

pub mod shred;
