//! Explicit shredding schemas: the `typed_value` type (typed shape) for a Spark
//! DDL type string ([`typed_value_from_ddl`]).

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};

use super::Result;
use crate::variant::types::SparkType;

// ---------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------

/// The `typed_value` type (typed shape) for an explicit Spark DDL type string, as
/// Spark's `spark.sql.variant.forceShreddingSchemaForTest` takes it:
/// `struct<a:bigint,b:struct<c:string>>`, `bigint`, `array<string>`, ….
///
/// Spark types map as `SparkType::to_arrow` does (`string` → Utf8, `timestamp` →
/// `Timestamp(µs, "UTC")`, `timestamp_ntz` → `Timestamp(µs, None)`, …); arrays become
/// `List` with an `element` field. A `variant` struct field means "not shredded": it is
/// left out of the typed shape (its values stay in the residual `value`). Maps, a
/// top-level or array-element `variant`, and structs left without fields are errors.
///
/// ```
/// use std::sync::Arc;
/// use arrow::datatypes::{DataType, Field, Fields};
/// use df_variant::shredding::typed_value_from_ddl;
///
/// assert_eq!(typed_value_from_ddl("bigint").unwrap(), DataType::Int64);
/// assert_eq!(
///     typed_value_from_ddl("struct<a:int, b:array<string>>").unwrap(),
///     DataType::Struct(Fields::from(vec![
///         Field::new("a", DataType::Int32, true),
///         Field::new(
///             "b",
///             DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))),
///             true,
///         ),
///     ]))
/// );
/// assert!(typed_value_from_ddl("map<string,int>").is_err());
/// ```
///
/// # Errors
/// When the string does not parse or names a type that cannot be shredded.
pub fn typed_value_from_ddl(ddl: &str) -> Result<DataType> {
    let t = SparkType::parse(ddl).map_err(|e| shred_plan_err!("shredding schema {ddl:?}: {e}"))?;
    let dt = ddl_type(&t).map_err(|e| shred_plan_err!("shredding schema {ddl:?}: {e}"))?;
    dt.ok_or_else(|| shred_plan_err!("shredding schema {ddl:?}: VARIANT cannot be shredded"))
}

/// `Ok(None)` for `variant` (not shredded).
fn ddl_type(t: &SparkType) -> std::result::Result<Option<DataType>, String> {
    Ok(Some(match t {
        SparkType::Variant => return Ok(None),
        SparkType::Map(_) => return Err("MAP cannot be shredded".into()),
        SparkType::Array(e) => {
            let e = ddl_type(e)?.ok_or("ARRAY<VARIANT> cannot be shredded")?;
            DataType::List(Arc::new(Field::new("element", e, true)))
        }
        SparkType::Struct(fields) => {
            let mut out: Vec<Field> = Vec::with_capacity(fields.len());
            for (name, ft) in fields {
                if fields.iter().filter(|(n, _)| n == name).count() > 1 {
                    return Err(format!("duplicate field name `{name}`"));
                }
                if let Some(dt) = ddl_type(ft)? {
                    out.push(Field::new(name, dt, true));
                }
            }
            if out.is_empty() {
                return Err("a STRUCT needs at least one shredded field".into());
            }
            DataType::Struct(Fields::from(out))
        }
        // Files store strings as plain UTF-8 columns.
        SparkType::String => DataType::Utf8,
        other => other.to_arrow(),
    }))
}
