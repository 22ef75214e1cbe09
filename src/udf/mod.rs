//! The SQL scalar functions, one file per family. [`functions`] is the one list
//! that registration, tests, examples and benches use.

use std::sync::Arc;

use datafusion::logical_expr::ScalarUDF;

pub mod common;
mod is_variant_null;
mod parse_json;
mod schema_of_variant;
mod to_json;
mod to_variant;
mod variant_get;

pub use is_variant_null::IsVariantNullFunc;
pub use parse_json::ParseJsonFunc;
pub use schema_of_variant::SchemaOfVariantFunc;
pub use to_json::ToJsonFunc;
pub use to_variant::ToVariantFunc;
pub use variant_get::VariantGetFunc;

/// The Spark documentation section all our functions are listed under.
pub(crate) const DOC_SECTION: datafusion::logical_expr::DocSection =
    datafusion::logical_expr::DocSection {
        include: true,
        label: "Variant Functions",
        description: Some("Functions over the Parquet/Spark Variant type"),
    };

macro_rules! make_udf {
    ($accessor:ident, $ctor:expr) => {
        #[doc = concat!("The `", stringify!($accessor), "` function as a shared [`ScalarUDF`].")]
        pub fn $accessor() -> Arc<ScalarUDF> {
            static UDF: std::sync::LazyLock<Arc<ScalarUDF>> =
                std::sync::LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl($ctor)));
            Arc::clone(&UDF)
        }
    };
}

make_udf!(parse_json_udf, ParseJsonFunc::new(false));
make_udf!(try_parse_json_udf, ParseJsonFunc::new(true));
make_udf!(variant_get_udf, VariantGetFunc::new(false));
make_udf!(try_variant_get_udf, VariantGetFunc::new(true));
make_udf!(schema_of_variant_udf, SchemaOfVariantFunc::new());
make_udf!(is_variant_null_udf, IsVariantNullFunc::new());
make_udf!(to_json_udf, ToJsonFunc::new());
make_udf!(to_variant_object_udf, ToVariantFunc::to_variant_object());
make_udf!(cast_to_variant_udf, ToVariantFunc::cast());

/// Every scalar function of the crate.
pub fn functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        parse_json_udf(),
        try_parse_json_udf(),
        variant_get_udf(),
        try_variant_get_udf(),
        schema_of_variant_udf(),
        is_variant_null_udf(),
        to_json_udf(),
        to_variant_object_udf(),
        cast_to_variant_udf(),
    ]
}

/// [`Expr`](datafusion::logical_expr::Expr) builders for DataFrame users.
pub mod expr_fn {
    use datafusion::logical_expr::{Expr, lit};

    /// `parse_json(json)`
    pub fn parse_json(json: Expr) -> Expr {
        super::parse_json_udf().call(vec![json])
    }
    /// `try_parse_json(json)`
    pub fn try_parse_json(json: Expr) -> Expr {
        super::try_parse_json_udf().call(vec![json])
    }
    /// `variant_get(v, path, type)`; `target = None` returns a variant.
    pub fn variant_get(v: Expr, path: &str, target: Option<&str>) -> Expr {
        let mut args = vec![v, lit(path)];
        args.extend(target.map(lit));
        super::variant_get_udf().call(args)
    }
    /// `try_variant_get(v, path, type)`; `target = None` returns a variant.
    pub fn try_variant_get(v: Expr, path: &str, target: Option<&str>) -> Expr {
        let mut args = vec![v, lit(path)];
        args.extend(target.map(lit));
        super::try_variant_get_udf().call(args)
    }
    /// `schema_of_variant(v)`
    pub fn schema_of_variant(v: Expr) -> Expr {
        super::schema_of_variant_udf().call(vec![v])
    }
    /// `is_variant_null(v)`
    pub fn is_variant_null(v: Expr) -> Expr {
        super::is_variant_null_udf().call(vec![v])
    }
    /// `to_json(v)`
    pub fn to_json(v: Expr) -> Expr {
        super::to_json_udf().call(vec![v])
    }
    /// `to_variant_object(x)`
    pub fn to_variant_object(x: Expr) -> Expr {
        super::to_variant_object_udf().call(vec![x])
    }
    /// `cast(x AS variant)`
    pub fn cast_to_variant(x: Expr) -> Expr {
        super::cast_to_variant_udf().call(vec![x])
    }
}
