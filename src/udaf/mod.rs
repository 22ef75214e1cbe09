//! The aggregate functions. [`functions`] is the one list used everywhere.

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;

mod schema_of_variant_agg;

pub use schema_of_variant_agg::SchemaOfVariantAgg;

/// The `schema_of_variant_agg` aggregate as a shared [`AggregateUDF`].
pub fn schema_of_variant_agg_udaf() -> Arc<AggregateUDF> {
    static UDAF: std::sync::LazyLock<Arc<AggregateUDF>> = std::sync::LazyLock::new(|| {
        Arc::new(AggregateUDF::new_from_impl(SchemaOfVariantAgg::new()))
    });
    Arc::clone(&UDAF)
}

/// Every aggregate function of the crate.
pub fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![schema_of_variant_agg_udaf()]
}

/// [`Expr`](datafusion::logical_expr::Expr) builders.
pub mod expr_fn {
    use datafusion::logical_expr::Expr;

    /// `schema_of_variant_agg(v)`
    pub fn schema_of_variant_agg(v: Expr) -> Expr {
        super::schema_of_variant_agg_udaf().call(vec![v])
    }
}
