//! Databricks/Snowflake-style path syntax on VARIANT values (and JSON strings),
//! planned into the same `variant_get` calls users could write by hand, so the
//! optimizer sees one extraction per path:
//!
//! ```text
//! v:a.b                      =>  variant_get(v, '$.a.b')
//! v:a['key with space'][0]   =>  variant_get(v, '$.a.key with space[0]')
//! v:`a.b`, v:a['x.y']        =>  variant_get(v, '$.a.b'), variant_get(v, '$.a['x.y']')
//! v:a.b::bigint              =>  variant_get(v, '$.a.b', 'bigint')
//! TRY_CAST(v:a AS int)       =>  try_variant_get(v, '$.a', 'int')
//! v['a']['b'], v['a'][0]     =>  variant_get(v, '$.a.b'), variant_get(v, '$.a[0]')
//! v.a.b  (v a VARIANT column) =>  variant_get(v, '$.a.b')
//! s:a    (s a JSON string)   =>  variant_get(parse_json(s), '$.a')
//! ```
//!
//! A backquoted (or double-quoted) name is spliced into the path as Spark does,
//! so `` v:`a.b` `` is the path `$.a.b`; a key holding a dot is named in brackets.
//! Keys are case-sensitive. The result is VARIANT unless cast; casts follow
//! Spark's cast matrix (`variant_get`), `TRY_CAST` gives NULL instead of an error.

use arrow::datatypes::{DataType, Field};
use datafusion::common::{
    Column, DFSchema, Result, ScalarValue, TableReference, plan_datafusion_err, plan_err,
};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{
    ExprPlanner, PlannerResult, RawBinaryExpr, RawFieldAccessExpr,
};
use datafusion::logical_expr::{Expr, ExprSchemable, GetFieldAccess, lit};
use datafusion::sql::sqlparser::ast::BinaryOperator;

use crate::array::is_variant_type;
use crate::udf::{parse_json_udf, variant_get_udf};
use crate::variant::path::{Step, parse_get_path, steps_of, steps_to_string};
use crate::variant::validate::MAX_DEPTH;

/// The [`ExprPlanner`] described in the module docs; registered by
/// [`crate::with_variant`] ahead of DataFusion's planners.
#[derive(Debug, Default)]
pub struct VariantExprPlanner;

/// `(value, path steps)` of a `variant_get(value, '<literal path>')` call with
/// VARIANT output, so that chained accesses fold into one path. A wildcard
/// path is not one: a step after it applies to the array of its matches.
fn as_extraction(expr: &Expr) -> Option<(&Expr, Vec<Step>)> {
    let Expr::ScalarFunction(ScalarFunction { func, args }) = expr else {
        return None;
    };
    if func.name() != "variant_get" || args.len() != 2 {
        return None;
    }
    let Expr::Literal(ScalarValue::Utf8(Some(path)), _) = &args[1] else {
        return None;
    };
    Some((&args[0], steps_of(parse_get_path(path).ok()?.exact()?)))
}

/// `variant_get(base, path)` where `base` is a VARIANT expression, extending the
/// path of `base` when it is itself such an extraction.
///
/// A path longer than [`MAX_DEPTH`] steps finds nothing in any valid Variant
/// (none nests deeper), so its extraction is NULL and so is every longer one:
/// further steps leave it as it is. Each fold re-reads the path so far, so
/// unbounded folding made `v[0][0]...` quadratic to plan, and nesting calls past
/// the bound made DataFusion name every inner call again (also quadratic).
fn extract(base: Expr, mut segments: Vec<Step>) -> Expr {
    if let Some((inner, mut prefix)) = as_extraction(&base) {
        if prefix.len() > MAX_DEPTH {
            return base;
        }
        prefix.append(&mut segments);
        return variant_get_udf().call(vec![inner.clone(), lit(steps_to_string(&prefix))]);
    }
    variant_get_udf().call(vec![base, lit(steps_to_string(&segments))])
}

fn is_string(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// Parses the path text DataFusion passes for `value:path` (sqlparser's display
/// of the path without its leading `:`): `a.b`, `"a b".c`, `a['k'][0]`, `[0]`,
/// and the wildcard `a[*].b` (every element; see [`Step::Elements`]).
///
/// # Errors
/// A plan error naming the path for anything else (e.g. a computed subscript).
pub fn parse_colon_path(text: &str) -> Result<Vec<Step>> {
    let bad = |why: &str| {
        plan_datafusion_err!(
            "[{}] invalid variant path ':{text}': {why} (use variant_get for computed paths)",
            // Spark's classes: a subscript that is not a literal is not part of
            // the path; anything else does not parse.
            if why.starts_with("unsupported subscript") {
                "INVALID_EXTRACT_BASE_FIELD_TYPE"
            } else {
                "PARSE_SYNTAX_ERROR"
            }
        )
    };
    let chars: Vec<char> = text.chars().collect();
    let mut segments = Vec::new();
    let mut i = 0;
    let mut expect_key = true;
    while i < chars.len() {
        match chars[i] {
            '.' if !expect_key => {
                i += 1;
                expect_key = true;
                continue;
            }
            '[' => {
                let close = find_bracket_end(&chars, i + 1).ok_or_else(|| bad("unclosed ["))?;
                let inner: String = chars[i + 1..close].iter().collect();
                let inner = inner.trim();
                if let Some(q) = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
                    segments.push(Step::Key(q.replace("''", "'")));
                } else if let Some(q) = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                    segments.push(Step::Key(q.replace("\"\"", "\"")));
                } else if inner == "*" {
                    segments.push(Step::Elements);
                } else if let Ok(n) = inner.parse::<usize>() {
                    segments.push(Step::Index(n));
                } else {
                    return Err(bad(&format!("unsupported subscript [{inner}]")));
                }
                i = close + 1;
                expect_key = false;
                continue;
            }
            _ if !expect_key => return Err(bad(&format!("unexpected '{}'", chars[i]))),
            '"' | '`' => {
                // Spark splices a backquoted name into its path text unquoted
                // (pyspark 4.3.0: `:\`a.b\`` reads `$.a.b`, `:\`a[0]\`` reads
                // `$.a[0]`); `['a.b']` is its way to name a key with a dot.
                // sqlparser keeps no quote style here, so a double-quoted name
                // (Snowflake's form, a syntax error in Spark) is read the same.
                let quote = chars[i];
                let mut key = String::new();
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => return Err(bad("unclosed quoted key")),
                        Some(&c) if c == quote && chars.get(j + 1) == Some(&quote) => {
                            key.push(c);
                            j += 2;
                        }
                        Some(&c) if c == quote => break,
                        Some(&c) => {
                            key.push(c);
                            j += 1;
                        }
                    }
                }
                let steps = crate::variant::path::parse_steps(&format!("$.{key}"), false)
                    .map_err(|e| bad(&format!("`{key}` is the path $.{key}: {e}")))?;
                segments.extend(steps);
                i = j + 1;
            }
            _ => {
                let start = i;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                let key: String = chars[start..i].iter().collect();
                if key.is_empty() {
                    return Err(bad("empty key"));
                }
                segments.push(Step::Key(key));
            }
        }
        expect_key = false;
    }
    if segments.is_empty() || expect_key && text.ends_with('.') {
        return Err(bad("empty path"));
    }
    Ok(segments)
}

/// The index of the `]` closing a subscript whose content starts at `from`,
/// skipping quoted strings.
fn find_bracket_end(chars: &[char], from: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (j, &c) in chars.iter().enumerate().skip(from) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ']' => return Some(j),
            None => {}
        }
    }
    None
}

/// `1 + v:a`, `v:a = 1`, `v:c AND true`, `v:a + v:b`: Spark's error class
/// ([`crate::sql::checks`]) instead of DataFusion's coercion error, which
/// comes first (while the SQL is planned, before any analyzer rule).
fn refuse_variant_operand(
    expr: RawBinaryExpr,
    schema: &DFSchema,
) -> Result<PlannerResult<RawBinaryExpr>> {
    use super::checks::{OperatorKind, variant_operator_error};
    use BinaryOperator as B;
    let kind = match &expr.op {
        B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship => {
            OperatorKind::Comparison
        }
        B::Plus
        | B::Minus
        | B::Multiply
        | B::Divide
        | B::Modulo
        | B::And
        | B::Or
        | B::Xor
        | B::BitwiseOr
        | B::BitwiseAnd
        | B::BitwiseXor
        | B::DuckIntegerDivide
        | B::MyIntegerDivide
        | B::PGBitwiseShiftLeft
        | B::PGBitwiseShiftRight => OperatorKind::Other,
        _ => return Ok(PlannerResult::Original(expr)),
    };
    let (Ok(left), Ok(right)) = (expr.left.get_type(schema), expr.right.get_type(schema)) else {
        return Ok(PlannerResult::Original(expr));
    };
    let shown = format!("{} {} {}", expr.left, expr.op, expr.right);
    let Some(message) = variant_operator_error(kind, &expr.op, &left, &right, &shown) else {
        return Ok(PlannerResult::Original(expr));
    };
    // DataFusion's own parser reads `1 + v:a` as `(1 + v):a`, so the sum of a
    // VARIANT column reaches here before the path does: say so.
    let bare_column = |e: &Expr, t: &DataType| matches!(e, Expr::Column(_)) && is_variant_type(t);
    if kind == OperatorKind::Other
        && (bare_column(&expr.left, &left) || bare_column(&expr.right, &right))
    {
        let op = &expr.op;
        return plan_err!(
            "{message}. If the query has `x {op} v:path`: this SQL parser binds `:` looser than `{op}`, Spark tighter; write (v:path), or run the query through df_variant::sql::query or the df-variant CLI, which parse `:` as Spark does"
        );
    }
    plan_err!("{message}")
}

/// `a || b` with a VARIANT side: Spark casts the VARIANT to STRING (a string
/// variant loses its quotes, anything else is its JSON text, a variant null
/// is NULL), as `CAST(v AS STRING)` does (`v:h || 'x'` is `hix`).
fn concat_variant_as_string(
    mut expr: RawBinaryExpr,
    schema: &DFSchema,
) -> PlannerResult<RawBinaryExpr> {
    let is_variant = |e: &Expr| e.get_type(schema).is_ok_and(|t| is_variant_type(&t));
    let (left, right) = (is_variant(&expr.left), is_variant(&expr.right));
    if !left && !right {
        return PlannerResult::Original(expr);
    }
    // `v:h` is `variant_get(v, '$.h')`: one extraction with the type.
    let as_string = |e: Expr| match as_extraction(&e) {
        Some((base, path)) => variant_get_udf().call(vec![
            base.clone(),
            lit(steps_to_string(&path)),
            lit("string"),
        ]),
        None => variant_get_udf().call(vec![e, lit("$"), lit("string")]),
    };
    if left {
        expr.left = as_string(expr.left);
    }
    if right {
        expr.right = as_string(expr.right);
    }
    PlannerResult::Original(expr)
}

impl ExprPlanner for VariantExprPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        if expr.op == BinaryOperator::StringConcat {
            return Ok(concat_variant_as_string(expr, schema));
        }
        if !matches!(&expr.op, BinaryOperator::Custom(op) if op == ":") {
            return refuse_variant_operand(expr, schema);
        }
        let Expr::Literal(ScalarValue::Utf8(Some(path)), _) = &expr.right else {
            return Ok(PlannerResult::Original(expr));
        };
        let segments = parse_colon_path(path)?;
        // sqlparser's generic dialect binds `:` looser than arithmetic, so
        // `1 + v:a` arrives as `(1 + v):a`. Spark binds it tighter; say so
        // instead of failing on the sum (`crate::sql::VariantDialect` parses
        // it as Spark does).
        if let Expr::BinaryExpr(binary) = &expr.left
            && binary.left.get_type(schema).is_ok()
            && !expr
                .left
                .get_type(schema)
                .is_ok_and(|t| is_variant_type(&t) || is_string(&t))
        {
            return plan_err!(
                "the path ':{path}' applies to `{}`: this SQL parser binds `:` looser than `{}`, Spark tighter; write ({}:{path}), or run the query through df_variant::sql::query or the df-variant CLI, which parse `:` as Spark does",
                expr.left,
                binary.op,
                binary.right
            );
        }
        let base_type = expr.left.get_type(schema)?;
        let base = if is_variant_type(&base_type) {
            expr.left
        } else if is_string(&base_type) {
            parse_json_udf().call(vec![expr.left])
        } else {
            return plan_err!(
                "the path access ':{path}' needs a VARIANT or a JSON string, got {base_type}"
            );
        };
        Ok(PlannerResult::Planned(extract(base, segments)))
    }

    /// `[v:a, 'x']`: Spark's one implicit conversion to VARIANT, as in
    /// `coalesce` (see `crate::udf::coerce`): strings beside a VARIANT become
    /// VARIANT strings; another type beside one is `DATA_DIFF_TYPES`.
    fn plan_array_literal(
        &self,
        mut exprs: Vec<Expr>,
        schema: &DFSchema,
    ) -> Result<PlannerResult<Vec<Expr>>> {
        use crate::udf::coerce::{data_diff_types, implicitly_variant};
        let types: Vec<Option<DataType>> = exprs.iter().map(|e| e.get_type(schema).ok()).collect();
        let variant = |t: &Option<DataType>| t.as_ref().is_some_and(is_variant_type);
        if !types.iter().any(variant) || types.iter().all(variant) {
            return Ok(PlannerResult::Original(exprs));
        }
        for (e, t) in exprs.iter_mut().zip(&types) {
            match t {
                Some(t) if is_variant_type(t) || t == &DataType::Null => {}
                Some(t) if implicitly_variant(t) => {
                    *e = crate::udf::cast_to_variant_udf().call(vec![e.clone()]);
                }
                Some(t) => return Err(data_diff_types("array", t)),
                None => return Ok(PlannerResult::Original(exprs)),
            }
        }
        Ok(PlannerResult::Original(exprs))
    }

    /// `map(k1, v1, k2, v2, ...)` and `make_map(...)`: planned as DataFusion
    /// plans them, `map(make_array(k1, k2, ...), make_array(v1, v2, ...))`, but
    /// the values' `make_array` takes Spark's one implicit conversion to
    /// VARIANT (`map('k', v:a, 'j', 'x')` is a `MAP<STRING, VARIANT>`), as the
    /// registered `make_array` does. Without a VARIANT value nothing changes.
    /// (This planner sees no schema, so the types are left to the wrapper.)
    fn plan_make_map(&self, args: Vec<Expr>) -> Result<PlannerResult<Vec<Expr>>> {
        use crate::udf::coerce::VariantCoercing;
        use datafusion::functions_nested::make_array::make_array_udf;
        use datafusion::functions_nested::map::map_udf;
        use datafusion::logical_expr::ScalarUDF;
        if !args.len().is_multiple_of(2) {
            // DataFusion's planner names the problem.
            return Ok(PlannerResult::Original(args));
        }
        let (keys, values): (Vec<_>, Vec<_>) =
            args.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
        let keys = make_array_udf().call(keys.into_iter().map(|(_, e)| e).collect());
        let values = ScalarUDF::new_from_impl(VariantCoercing::map_values())
            .call(values.into_iter().map(|(_, e)| e).collect());
        Ok(PlannerResult::Planned(map_udf().call(vec![keys, values])))
    }

    /// `substr(v:h, 2)` / `substring(v:h, 2, 2)`: DataFusion plans these with its
    /// own `substr`, not the registered one, so a VARIANT extraction as the
    /// string is converted here, as Spark converts it (`CAST(v AS STRING)`).
    /// (This planner sees no schema: only an extraction, which is what `v:h`
    /// plans to, is recognised.)
    fn plan_substring(&self, mut args: Vec<Expr>) -> Result<PlannerResult<Vec<Expr>>> {
        if let Some(first) = args.first_mut()
            && let Some((base, path)) = as_extraction(first)
        {
            *first = variant_get_udf().call(vec![
                base.clone(),
                lit(steps_to_string(&path)),
                lit("string"),
            ]);
        }
        Ok(PlannerResult::Original(args))
    }

    fn plan_field_access(
        &self,
        expr: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        let Ok(base_type) = expr.expr.get_type(schema) else {
            return Ok(PlannerResult::Original(expr));
        };
        if !is_variant_type(&base_type) {
            return Ok(PlannerResult::Original(expr));
        }
        let segment = match &expr.field_access {
            GetFieldAccess::NamedStructField { name } => match name.try_as_str() {
                Some(Some(key)) => Step::Key(key.to_string()),
                _ => return plan_err!("a VARIANT field name must be a string literal, got {name}"),
            },
            GetFieldAccess::ListIndex { key } => match key.as_ref() {
                Expr::Literal(v, _) => match v.clone().cast_to(&DataType::Int64) {
                    Ok(ScalarValue::Int64(Some(i))) if i >= 0 => Step::Index(i as usize),
                    _ => match v.try_as_str() {
                        Some(Some(k)) => Step::Key(k.to_string()),
                        _ => {
                            return plan_err!(
                                "a VARIANT subscript must be a non-negative integer or a string literal, got {v}"
                            );
                        }
                    },
                },
                other => {
                    return plan_err!(
                        "a VARIANT subscript must be a literal, got {other}; use variant_get with a computed path"
                    );
                }
            },
            GetFieldAccess::ListRange { .. } => {
                return plan_err!("slices of VARIANT arrays are not supported");
            }
        };
        Ok(PlannerResult::Planned(extract(expr.expr, vec![segment])))
    }

    fn plan_compound_identifier(
        &self,
        field: &Field,
        qualifier: Option<&TableReference>,
        nested_names: &[String],
    ) -> Result<PlannerResult<Vec<Expr>>> {
        if !is_variant_type(field.data_type()) {
            return Ok(PlannerResult::Original(vec![]));
        }
        let column = Expr::Column(Column::new(qualifier.cloned(), field.name()));
        let segments = nested_names.iter().map(|n| Step::Key(n.clone())).collect();
        Ok(PlannerResult::Planned(extract(column, segments)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> String {
        steps_to_string(&parse_colon_path(text).unwrap())
    }

    #[test]
    fn colon_paths_become_spark_paths() {
        assert_eq!(path("a"), "$.a");
        assert_eq!(path("a.b"), "$.a.b");
        // Spark's dotted keys run to the next '.' or '[', spaces included.
        assert_eq!(path("a['key with space'][0]"), "$.a.key with space[0]");
        assert_eq!(path("a['x.y']"), "$.a['x.y']");
        assert_eq!(path("[0].x"), "$[0].x");
        // A quoted name is spliced into the path, as Spark does with backquotes.
        assert_eq!(path("\"a.b\".c"), "$.a.b.c");
        assert_eq!(path("`a.b`"), "$.a.b");
        assert_eq!(path("a.`x.y`"), "$.a.x.y");
        assert_eq!(path("`a[0]`.c"), "$.a[0].c");
        assert_eq!(path("`a b`.c"), "$.a b.c");
        assert_eq!(path("`$`"), "$.$");
        assert_eq!(path("`a'b`"), "$[\"a'b\"]");
        assert_eq!(path("````"), "$.`");
        assert_eq!(path("a[\"it's\"]"), "$.a[\"it's\"]");
        assert_eq!(path("a['it''s']"), "$.a[\"it's\"]");
        assert_eq!(path("UPPER.lower"), "$.UPPER.lower");
        assert_eq!(path("a[*].b"), "$.a[*].b");
        // A key `*` stays a key.
        assert_eq!(path("a['*']"), "$.a['*']");
    }

    /// Past [`MAX_DEPTH`] steps a chain stays one call (planning stays linear):
    /// the path already finds nothing in a valid Variant.
    #[test]
    fn chains_past_the_nesting_bound_stay_one_call() {
        let mut e = datafusion::logical_expr::col("v");
        for _ in 0..5 * MAX_DEPTH {
            e = extract(e, vec![Step::Index(0)]);
        }
        let (inner, path) = as_extraction(&e).unwrap();
        assert_eq!(inner, &datafusion::logical_expr::col("v"));
        assert_eq!(path.len(), MAX_DEPTH + 1);
    }

    #[test]
    fn computed_or_broken_paths_are_refused() {
        for bad in ["a[i]", "a[", "a[-1]", "", "a..b", "``", "`a..b`"] {
            let err = parse_colon_path(bad).unwrap_err().to_string();
            assert!(err.contains("invalid variant path"), "{bad}: {err}");
        }
    }
}
