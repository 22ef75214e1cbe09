//! Rewrites `CAST`/`TRY_CAST` involving VARIANT into the crate's functions:
//!
//! ```text
//! CAST(v AS INT)          =>  variant_get(v, '$', 'int')
//! TRY_CAST(v AS INT)      =>  try_variant_get(v, '$', 'int')
//! CAST(variant_get(v, '$.a') AS INT)  =>  variant_get(v, '$.a', 'int')
//! CAST(x AS VARIANT)      =>  cast_to_variant(x)
//! CAST(v AS VARIANT)      =>  v
//! -- with variant.spark_functions = true (Spark's text for timestamps,
//! -- dates and floating point):
//! CAST(ts AS STRING)      =>  CAST(variant_get(cast_to_variant(ts), '$', 'string') AS STRING)
//! CAST(ts AS BIGINT)      =>  variant_get(cast_to_variant(ts), '$', 'bigint')  -- seconds
//! CAST(n AS TIMESTAMP)    =>  variant_get(cast_to_variant(n), '$', 'timestamp')
//! CAST(ts AS TIMESTAMP_NTZ) => variant_get(cast_to_variant(ts), '$', 'timestamp_ntz')
//! CAST(array AS STRING)   =>  to_spark_string(array)   -- also outside Spark mode when
//!                                                       -- the array, struct or map holds variants
//! ```
//!
//! It runs before DataFusion's type coercion, which cannot cast a struct to a
//! scalar. Output names are preserved.

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue, plan_err};
use datafusion::logical_expr::expr::{Cast, TryCast};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, lit};
use datafusion::optimizer::AnalyzerRule;

use crate::array::{is_variant_field, is_variant_type};
use crate::udf::{cast_to_variant_udf, to_spark_string_udf, try_variant_get_udf, variant_get_udf};

/// The analyzer rule described in the module docs.
#[derive(Debug, Default)]
pub struct VariantCastRewrite;

impl AnalyzerRule for VariantCastRewrite {
    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        let spark = config
            .extensions
            .get::<crate::config::VariantOptions>()
            .is_some_and(|o| o.spark_functions);
        let plan = plan.transform_up_with_subqueries(union_to_variant)?.data;
        rewrite_expressions(plan, |expr, schema| {
            rewrite_cast(expr, schema, spark)?.transform_data(|e| convert_mixed(e, schema))
        })
    }

    fn name(&self) -> &'static str {
        "variant_cast_rewrite"
    }
}

/// Rewrites every expression of every node (subqueries included) bottom-up with
/// `f(expr, input schema)`, keeping output names and recomputing the schemas of
/// the nodes that changed. The traversal of the analyzer rules of this crate.
pub(crate) fn rewrite_expressions(
    plan: LogicalPlan,
    f: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        let schema = input_schema(&node);
        let preserver = NamePreserver::new(&node);
        let result = node.map_expressions(|expr| {
            let saved = preserver.save(&expr);
            let rewritten = expr.transform_up(|e| f(e, &schema))?;
            Ok(rewritten.update_data(|e| saved.restore(e)))
        })?;
        if result.transformed {
            result.map_data(LogicalPlan::recompute_schema)
        } else {
            Ok(result)
        }
    })
    .map(|t| t.data)
}

/// The schema the node's expressions are evaluated against: its inputs merged.
pub(crate) fn input_schema(node: &LogicalPlan) -> DFSchema {
    let mut schema = DFSchema::empty();
    for input in node.inputs() {
        schema.merge(input.schema());
    }
    schema
}

fn rewrite_cast(expr: Expr, schema: &DFSchema, spark: bool) -> Result<Transformed<Expr>> {
    let (inner, field, safe) = match &expr {
        Expr::Cast(Cast { expr, field }) => (expr, field, false),
        Expr::TryCast(TryCast { expr, field }) => (expr, field, true),
        _ => return Ok(Transformed::no(expr)),
    };
    let Ok(inner_type) = inner.get_type(schema) else {
        return Ok(Transformed::no(expr));
    };
    let inner_is_variant = is_variant_type(&inner_type);
    if is_variant_field(field) {
        if inner_is_variant {
            return Ok(Transformed::yes(inner.as_ref().clone()));
        }
        return Ok(Transformed::yes(
            cast_to_variant_udf().call(vec![inner.as_ref().clone()]),
        ));
    }
    if spark && is_string_type(field.data_type()) && spark_prints_differently(&inner_type) {
        // Spark's text: `2024-01-15 10:20:30`, `1.0E20`; the variant cast
        // prints exactly that.
        let variant = cast_to_variant_udf().call(vec![inner.as_ref().clone()]);
        let call = variant_get_udf().call(vec![variant, lit("$"), lit("string")]);
        return Ok(Transformed::yes(Expr::Cast(Cast::new(
            Box::new(call),
            field.data_type().clone(),
        ))));
    }
    if spark && let Some(target) = spark_timestamp_cast(&inner_type, field.data_type()) {
        // Spark's meaning, which its variant cast shares: seconds since the
        // epoch, and the wall time in the session time zone.
        let getter = getter(safe);
        let variant = cast_to_variant_udf().call(vec![inner.as_ref().clone()]);
        let call = getter.call(vec![variant, lit("$"), lit(target.clone())]);
        return Ok(Transformed::yes(cast_if_needed(call, &target, field)));
    }
    if !inner_is_variant
        && is_string_type(field.data_type())
        && crate::udf::is_container(&inner_type)
        && (spark || holds_variant(&inner_type))
    {
        // Spark's text for containers (`{1, x}`, `{a -> 1}`); Arrow has no
        // cast of a struct to text at all, nor of a variant inside.
        let call = to_spark_string_udf().call(vec![inner.as_ref().clone()]);
        return Ok(Transformed::yes(if field.data_type() == &DataType::Utf8 {
            call
        } else {
            Expr::Cast(Cast::new(Box::new(call), field.data_type().clone()))
        }));
    }
    if !inner_is_variant {
        return cast_container(&expr, inner, &inner_type, field, safe, schema);
    }
    let Some(spark) = spark_type_name(field.data_type()) else {
        return plan_err!(
            "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast \"VARIANT\" to \"{}\"",
            field.data_type()
        );
    };
    let udf = getter(safe);
    // `CAST(variant_get(x, p) AS t)` (e.g. from `x:a.b::t`) is one extraction.
    let call = match inner.as_ref() {
        Expr::ScalarFunction(f)
            if f.func.name() == "variant_get" && f.args.len() == 2 && exact_path(&f.args[1]) =>
        {
            udf.call(vec![
                f.args[0].clone(),
                f.args[1].clone(),
                lit(spark.clone()),
            ])
        }
        _ => udf.call(vec![inner.as_ref().clone(), lit("$"), lit(spark.clone())]),
    };
    Ok(Transformed::yes(cast_if_needed(call, &spark, field)))
}

/// `try_variant_get` for a `TRY_CAST`, `variant_get` for a `CAST`.
fn getter(safe: bool) -> std::sync::Arc<datafusion::logical_expr::ScalarUDF> {
    if safe {
        try_variant_get_udf()
    } else {
        variant_get_udf()
    }
}

/// `call`, a `variant_get` to the Spark type `spark`, cast to `field`'s type
/// when that is not what the Spark type gives (a narrower string type, another
/// time zone).
fn cast_if_needed(call: Expr, spark: &str, field: &arrow::datatypes::FieldRef) -> Expr {
    let produced = crate::variant::types::SparkType::parse(spark)
        .map(|t| t.to_arrow())
        .ok();
    if produced.as_ref() == Some(field.data_type()) {
        call
    } else {
        Expr::Cast(Cast::new(Box::new(call), field.data_type().clone()))
    }
}

/// The Spark type through which a cast between a TIMESTAMP (an instant) and
/// `to` goes in Spark mode, where Spark and Arrow differ: to and from numbers
/// Spark counts seconds since the epoch (Arrow the type's units), and to
/// TIMESTAMP_NTZ it keeps the wall time in the session time zone (Arrow the
/// one in UTC). Spark's variant cast does what its plain cast does.
fn spark_timestamp_cast(from: &DataType, to: &DataType) -> Option<String> {
    match (from, to) {
        (DataType::Timestamp(_, Some(_)), DataType::Timestamp(_, None)) => {
            Some("timestamp_ntz".into())
        }
        (DataType::Timestamp(_, Some(_)), to) if to.is_numeric() => spark_type_name(to),
        (from, DataType::Timestamp(_, Some(_)))
            if from.is_numeric() && spark_type_name(from).is_some() =>
        {
            Some("timestamp".into())
        }
        _ => None,
    }
}

fn is_string_type(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// The types whose `CAST(x AS STRING)` text differs between Spark and Arrow:
/// timestamps (`2024-01-15 10:20:30` in the session time zone, not
/// `2024-01-15T10:20:30`), floating point (`1.0E20`, `Infinity`), and dates
/// past year 9999 (`+10000-01-01`). Decimals, integers and booleans print
/// alike.
fn spark_prints_differently(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Timestamp(..)
            | DataType::Date32
            | DataType::Date64
            | DataType::Float16
            | DataType::Float32
            | DataType::Float64
    )
}

/// Whether `dt` is an array, map or struct holding a VARIANT somewhere.
fn holds_variant(dt: &DataType) -> bool {
    match dt {
        _ if is_variant_type(dt) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            holds_variant(f.data_type())
        }
        DataType::Map(entries, _) => holds_variant(entries.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| holds_variant(f.data_type())),
        _ => false,
    }
}

/// `CAST`/`TRY_CAST` of an array, map or struct holding variants to a typed
/// one, element by element with Spark's rules (TRY_CAST makes only the failing
/// element or field NULL):
///
/// ```text
/// CAST(a AS ARRAY<INT>)        =>  variant_get(cast_to_variant(a), '$', 'array<int>')
/// CAST(m AS MAP<STRING, INT>)  =>  variant_get(to_variant_object(m), '$', 'map<string,int>')
/// CAST(s AS STRUCT<z INT>)     =>  CASE WHEN s IS NULL THEN NULL
///                                  ELSE named_struct('z', CAST(s.a AS INT)) END  (by position)
/// ```
fn cast_container(
    expr: &Expr,
    inner: &Expr,
    inner_type: &DataType,
    field: &arrow::datatypes::FieldRef,
    safe: bool,
    schema: &DFSchema,
) -> Result<Transformed<Expr>> {
    if !holds_variant(inner_type) || holds_variant(field.data_type()) {
        return Ok(Transformed::no(expr.clone()));
    }
    let getter = getter(safe);
    let target = field.data_type();
    let as_variant = match (inner_type, target) {
        (
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _),
            DataType::List(_) | DataType::LargeList(_),
        ) => cast_to_variant_udf().call(vec![inner.clone()]),
        (DataType::Map(_, _), DataType::Map(_, _)) => {
            crate::udf::to_variant_object_udf().call(vec![inner.clone()])
        }
        (DataType::Struct(from), DataType::Struct(to)) => {
            if from.len() != to.len() {
                return plan_err!(
                    "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast \"{inner_type}\" to \"{target}\": the structs have {} and {} fields",
                    from.len(),
                    to.len()
                );
            }
            let mut args = Vec::with_capacity(2 * to.len());
            for (f, t) in from.iter().zip(to.iter()) {
                let get = datafusion::functions::core::get_field()
                    .call(vec![inner.clone(), lit(f.name().as_str())]);
                let cast = if safe {
                    Expr::TryCast(TryCast::new(Box::new(get), t.data_type().clone()))
                } else {
                    Expr::Cast(Cast::new(Box::new(get), t.data_type().clone()))
                };
                args.push(lit(t.name().as_str()));
                args.push(rewrite_cast(cast, schema, false)?.data);
            }
            let built = datafusion::functions::core::named_struct().call(args);
            return Ok(Transformed::yes(
                datafusion::logical_expr::when(inner.clone().is_null(), lit(ScalarValue::Null))
                    .otherwise(built)?,
            ));
        }
        _ => return Ok(Transformed::no(expr.clone())),
    };
    let Some(spark) = spark_type_name(target) else {
        return plan_err!(
            "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast \"{inner_type}\" to \"{target}\""
        );
    };
    let call = getter.call(vec![as_variant, lit("$"), lit(spark.clone())]);
    let produced = crate::variant::types::SparkType::parse(&spark)
        .map(|t| t.to_arrow())
        .ok();
    Ok(Transformed::yes(if produced.as_ref() == Some(target) {
        call
    } else {
        Expr::Cast(Cast::new(Box::new(call), target.clone()))
    }))
}

/// `UNION ALL` of a VARIANT column with a STRING one: the strings become
/// VARIANT strings, as in Spark (the one implicit conversion to VARIANT; see
/// `crate::udf::coerce`); another type beside a VARIANT is Spark's
/// `INCOMPATIBLE_COLUMN_TYPE`.
fn union_to_variant(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    use crate::udf::coerce::implicitly_variant;
    let LogicalPlan::Union(union) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let columns = union.schema.fields().len();
    let mut convert = vec![false; columns];
    for (i, c) in convert.iter_mut().enumerate() {
        let types: Vec<&DataType> = union
            .inputs
            .iter()
            .filter_map(|p| p.schema().fields().get(i).map(|f| f.data_type()))
            .collect();
        if !types.iter().any(|t| is_variant_type(t)) || types.iter().all(|t| is_variant_type(t)) {
            continue;
        }
        if let Some(other) = types
            .iter()
            .find(|t| !is_variant_type(t) && !implicitly_variant(t))
        {
            return plan_err!(
                "[INCOMPATIBLE_COLUMN_TYPE] UNION can only be performed on inputs with compatible column types: column {} is \"VARIANT\" in one input and {other} in another; only STRING and NULL convert to VARIANT implicitly",
                i + 1
            );
        }
        *c = true;
    }
    if !convert.iter().any(|c| *c) {
        return Ok(Transformed::no(plan));
    }
    let mut inputs = Vec::with_capacity(union.inputs.len());
    for input in &union.inputs {
        let schema = input.schema();
        let needs = schema.fields().iter().zip(&convert).any(|(f, c)| {
            *c && !is_variant_type(f.data_type()) && f.data_type() != &DataType::Null
        });
        if !needs {
            inputs.push(std::sync::Arc::clone(input));
            continue;
        }
        let exprs: Vec<Expr> = schema
            .iter()
            .zip(&convert)
            .map(|((qualifier, field), c)| {
                let column = Expr::Column(datafusion::common::Column::from((qualifier, field)));
                if *c && !is_variant_type(field.data_type()) && field.data_type() != &DataType::Null
                {
                    cast_to_variant_udf().call(vec![column]).alias(field.name())
                } else {
                    column
                }
            })
            .collect();
        inputs.push(std::sync::Arc::new(
            datafusion::logical_expr::LogicalPlanBuilder::from(input.as_ref().clone())
                .project(exprs)?
                .build()?,
        ));
    }
    Ok(Transformed::yes(LogicalPlan::Union(
        datafusion::logical_expr::Union::try_new_with_loose_types(inputs)?,
    )))
}

/// Whether `path` is a literal path without wildcards: a conversion folds into
/// its extraction. With a wildcard the type would apply to each match
/// (`variant_get(v, '$.a[*]', 'int')` is an `array<int>`), so
/// `CAST(v:a[*] AS ARRAY<INT>)` converts the array instead.
fn exact_path(path: &Expr) -> bool {
    match path {
        Expr::Literal(value, _) => value.try_as_str().is_some_and(|p| {
            p.is_none_or(|p| {
                matches!(
                    crate::variant::path::parse_get_path(p),
                    Ok(crate::variant::path::GetPath::Exact(_)) | Err(_)
                )
            })
        }),
        _ => false,
    }
}

/// `CAST(v AS STRING)` of a VARIANT expression, as one extraction when `v` is
/// `variant_get(x, path)`.
fn variant_as_string(v: Expr) -> Expr {
    if let Expr::ScalarFunction(f) = &v
        && f.func.name() == "variant_get"
        && f.args.len() == 2
        && exact_path(&f.args[1])
    {
        return variant_get_udf().call(vec![f.args[0].clone(), f.args[1].clone(), lit("string")]);
    }
    variant_get_udf().call(vec![v, lit("$"), lit("string")])
}

/// Spark's one implicit conversion to VARIANT: where the values of `coalesce`,
/// `nvl`, `nvl2` or a `CASE` mix VARIANT with STRING (or NULL), the strings
/// become VARIANT strings; any other type beside a VARIANT is
/// `DATA_DIFF_TYPES` (see `crate::udf::coerce`).
fn convert_mixed(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    use crate::udf::coerce::{VariantCoercing, data_diff_types, implicitly_variant};
    let convert = |args: Vec<&mut Expr>, func: &str| -> Result<bool> {
        let mut types = Vec::with_capacity(args.len());
        for a in &args {
            match a.get_type(schema) {
                Ok(t) => types.push(t),
                Err(_) => return Ok(false),
            }
        }
        if !types.iter().any(is_variant_type) || types.iter().all(is_variant_type) {
            return Ok(false);
        }
        if let Some(other) = types
            .iter()
            .find(|t| !is_variant_type(t) && !implicitly_variant(t))
        {
            return Err(data_diff_types(func, other));
        }
        for (arg, t) in args.into_iter().zip(&types) {
            // A NULL too: a SQL NULL of type VARIANT, so that every value has one type.
            if !is_variant_type(t) {
                *arg = cast_to_variant_udf().call(vec![arg.clone()]);
            }
        }
        Ok(true)
    };
    match expr {
        Expr::ScalarFunction(mut f)
            if (f.func.inner().as_ref() as &dyn std::any::Any)
                .is::<crate::udf::coerce::VariantAsString>() =>
        {
            let mut changed = false;
            for arg in &mut f.args {
                if arg.get_type(schema).is_ok_and(|t| is_variant_type(&t)) {
                    *arg = variant_as_string(arg.clone());
                    changed = true;
                }
            }
            Ok(Transformed::new_transformed(
                Expr::ScalarFunction(f),
                changed,
            ))
        }
        Expr::Like(mut like) => {
            let mut changed = false;
            for side in [&mut like.expr, &mut like.pattern] {
                if side.get_type(schema).is_ok_and(|t| is_variant_type(&t)) {
                    **side = variant_as_string(side.as_ref().clone());
                    changed = true;
                }
            }
            Ok(Transformed::new_transformed(Expr::Like(like), changed))
        }
        Expr::ScalarFunction(mut f) => {
            let inner: &dyn std::any::Any = f.func.inner().as_ref();
            let Some(first) = inner
                .downcast_ref::<VariantCoercing>()
                .map(VariantCoercing::first_value)
            else {
                return Ok(Transformed::no(Expr::ScalarFunction(f)));
            };
            let name = f.func.name().to_string();
            let changed = convert(f.args.iter_mut().skip(first).collect(), &name)?;
            Ok(Transformed::new_transformed(
                Expr::ScalarFunction(f),
                changed,
            ))
        }
        Expr::Case(mut case) => {
            let mut values: Vec<&mut Expr> = case
                .when_then_expr
                .iter_mut()
                .map(|(_, then)| then.as_mut())
                .collect();
            if let Some(e) = case.else_expr.as_mut() {
                values.push(e.as_mut());
            }
            let changed = convert(values, "CASE")?;
            Ok(Transformed::new_transformed(Expr::Case(case), changed))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// The Spark type string for an Arrow type, where one exists.
pub fn spark_type_name(dt: &DataType) -> Option<String> {
    Some(match dt {
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s)
            if *s >= 0 =>
        {
            format!("decimal({p},{s})")
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        DataType::List(f) | DataType::LargeList(f) => {
            let inner = if is_variant_field(f) {
                "variant".to_string()
            } else {
                spark_type_name(f.data_type())?
            };
            format!("array<{inner}>")
        }
        DataType::Struct(fields) => {
            let mut parts = Vec::with_capacity(fields.len());
            for f in fields {
                let inner = if is_variant_field(f) {
                    "variant".to_string()
                } else {
                    spark_type_name(f.data_type())?
                };
                parts.push(format!("`{}`:{inner}", f.name().replace('`', "``")));
            }
            format!("struct<{}>", parts.join(","))
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return None;
            };
            if kv.len() != 2
                || !matches!(
                    kv[0].data_type(),
                    DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
                )
            {
                return None;
            }
            let inner = if is_variant_field(&kv[1]) {
                "variant".to_string()
            } else {
                spark_type_name(kv[1].data_type())?
            };
            format!("map<string,{inner}>")
        }
        _ => return None,
    })
}
