//! `VariantGetSplit`: the analyzer rule that splits a typed `variant_get` into
//! an extraction that cannot fail and the raising of its errors, which can.
//!
//! ```text
//! Filter: variant_get(v, '$.a', 'int') > 5
//!   TableScan: t
//! =>
//! Filter: raise_variant_get_error(variant_get_or_error(v, '$.a', 'int')) > 5
//!   TableScan: t
//! ```
//!
//! `variant_get_or_error` converts and keeps each row's error instead of
//! raising it, so it cannot fail: DataFusion's `ExpressionPlacement` moves it
//! into the scan's projection, where the Parquet reader answers it from the
//! path's shredded typed leaf ([`super::variant_get_pushdown`]), with no
//! Variant bytes built on the way. `raise_variant_get_error` stays where the
//! query put it, after the filters, so that an error is raised only for rows
//! that reach it. A conversion to STRING or VARIANT cannot fail: such a call
//! becomes `try_variant_get`, which moves as it is. A wildcard path's type
//! applies to each match, so its conversion stays a separate
//! `variant_get(variant_get(v, p), '$', 'array<type>')`.
//!
//! It does not fire on `try_variant_get`, on calls without a type, on a first
//! argument that is not a column, on a non-literal path or type, or on the path
//! `$` (which is already a plain conversion).
//!
//! It runs after [`crate::sql::VariantCastRewrite`] (which turns `CAST(v:a AS
//! INT)` into `variant_get(v, '$.a', 'int')`) and before DataFusion's type
//! coercion.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlan, lit};
use datafusion::optimizer::AnalyzerRule;

use crate::udf::{
    VariantGetFunc, raise_variant_get_error_udf, try_variant_get_udf, variant_get_or_error_udf,
    variant_get_udf,
};
use crate::variant::path::{GetPath, parse_get_path};
use crate::variant::types::SparkType;

/// The analyzer rule described in the module docs.
#[derive(Debug, Default)]
pub struct VariantGetSplit;

impl AnalyzerRule for VariantGetSplit {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        crate::sql::rewrite_expressions(plan, |e, _| split_extraction(e))
    }

    fn name(&self) -> &'static str {
        "variant_get_split"
    }
}

/// `variant_get(col, p, t)` => `raise_variant_get_error(variant_get_or_error(col, p, t))`.
///
/// The inner call cannot fail, so DataFusion may move it into the scan (where a
/// shredded file answers it from the path's leaves); the raising of its errors
/// stays where the query put it, after the filters. Only calls on a column
/// with a literal path other than `$` and a literal type are split; a conversion
/// to STRING or VARIANT, which cannot fail, becomes `try_variant_get` instead. A
/// wildcard path's type applies to each match, so its conversion is to
/// `array<type>`.
pub(crate) fn split_extraction(expr: Expr) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(f) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let is_variant_get = f
        .func
        .inner()
        .downcast_ref::<VariantGetFunc>()
        .is_some_and(|g| !g.is_safe());
    if !is_variant_get
        || f.args.len() != 3
        || !matches!(f.args[0], Expr::Column(_))
        || !matches!(f.args[2], Expr::Literal(..))
    {
        return Ok(Transformed::no(expr));
    }
    let wildcard = match &f.args[1] {
        Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)), _)
            if p.trim() != "$" =>
        {
            matches!(parse_get_path(p), Ok(GetPath::Wildcard(_)))
        }
        _ => return Ok(Transformed::no(expr)),
    };
    // A conversion to STRING or VARIANT cannot fail: the call is its `try_` form,
    // which moves as it is.
    if let Expr::Literal(ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t)), _) =
        &f.args[2]
        && matches!(
            SparkType::parse(t),
            Ok(SparkType::String | SparkType::Variant)
        )
    {
        return Ok(Transformed::yes(try_variant_get_udf().call(f.args.clone())));
    }
    // A wildcard path's type applies to each match: the conversion of the
    // array of matches is to `array<type>`.
    let conversion = match (&f.args[2], wildcard) {
        (Expr::Literal(ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t)), _), true) => {
            lit(format!("array<{t}>"))
        }
        (_, true) => return Ok(Transformed::no(expr)),
        (t, false) => t.clone(),
    };
    if !wildcard {
        // The conversion with its errors kept per row; raised after the filters.
        let inner = variant_get_or_error_udf().call(f.args.clone());
        return Ok(Transformed::yes(
            raise_variant_get_error_udf().call(vec![inner]),
        ));
    }
    let inner = variant_get_udf().call(vec![f.args[0].clone(), f.args[1].clone()]);
    Ok(Transformed::yes(variant_get_udf().call(vec![
        inner,
        lit("$"),
        conversion,
    ])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::col;

    fn split(expr: Expr) -> (bool, String) {
        let t = split_extraction(expr).unwrap();
        (t.transformed, t.data.to_string())
    }

    fn get(args: Vec<Expr>) -> Expr {
        variant_get_udf().call(args)
    }

    #[test]
    fn splits_a_typed_extraction_on_a_column() {
        assert_eq!(
            split(get(vec![col("v"), lit("$.a"), lit("int")])),
            (
                true,
                "raise_variant_get_error(variant_get_or_error(v, Utf8(\"$.a\"), Utf8(\"int\")))"
                    .into()
            )
        );
    }

    #[test]
    fn conversions_that_cannot_fail_become_try() {
        for t in ["string", "variant"] {
            let (fired, text) = split(get(vec![col("v"), lit("$.a"), lit(t)]));
            assert!(fired);
            assert_eq!(
                text,
                format!("try_variant_get(v, Utf8(\"$.a\"), Utf8(\"{t}\"))")
            );
        }
    }

    /// A wildcard path's type applies to each match: the array is converted.
    #[test]
    fn a_wildcard_extraction_converts_the_array_of_matches() {
        assert_eq!(
            split(get(vec![col("v"), lit("$.a[*].b"), lit("int")])),
            (
                true,
                "variant_get(variant_get(v, Utf8(\"$.a[*].b\")), Utf8(\"$\"), Utf8(\"array<int>\"))"
                    .into()
            )
        );
    }

    #[test]
    fn does_not_fire() {
        let cases = [
            // No type: already cannot fail.
            get(vec![col("v"), lit("$.a")]),
            // The path `$`: a plain conversion.
            get(vec![col("v"), lit("$"), lit("int")]),
            get(vec![col("v"), lit(" $ "), lit("int")]),
            // A non-literal path or type.
            get(vec![col("v"), col("p"), lit("int")]),
            get(vec![col("v"), lit("$.a"), col("t")]),
            // Not on a column.
            get(vec![
                get(vec![col("v"), lit("$.a")]),
                lit("$.b"),
                lit("int"),
            ]),
            // try_variant_get cannot fail.
            try_variant_get_udf().call(vec![col("v"), lit("$.a"), lit("int")]),
        ];
        for expr in cases {
            let before = expr.to_string();
            let (fired, after) = split(expr);
            assert!(!fired, "{before}");
            assert_eq!(after, before);
        }
    }
}
