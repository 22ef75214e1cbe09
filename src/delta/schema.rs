//! Delta `schemaString` <-> Arrow schema.
//!
//! Delta's `"variant"` type is our VARIANT column (the unshredded
//! `Struct{metadata, value}` with the `arrow.parquet.variant` extension); each
//! data file may still store it shredded, which the Parquet scan handles per file.
//! Strings and binaries are read as view types, as DataFusion's Parquet reader
//! produces them.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, TimeUnit};
use datafusion::common::{DataFusionError, Result, plan_datafusion_err};
use serde_json::{Value, json};

use crate::array::{is_variant_field, variant_field};

fn bad(what: &str) -> DataFusionError {
    plan_datafusion_err!("unsupported Delta schema: {what}")
}

/// The Arrow schema of a Delta `schemaString`.
pub fn arrow_schema(schema_string: &str) -> Result<Schema> {
    let v: Value = serde_json::from_str(schema_string)
        .map_err(|e| plan_datafusion_err!("the Delta schemaString is not JSON: {e}"))?;
    let fields = struct_fields(&v)?;
    Ok(Schema::new(fields))
}

/// The metadata key of a field's physical name under column mapping.
const PHYSICAL_NAME: &str = "delta.columnMapping.physicalName";

/// Under column mapping, the physical name of each top-level column that has
/// one (the name of its column in the data files, and in `partitionValues` and
/// the statistics). A nested field whose physical name differs from its name is
/// refused by name: the data files' structs would need renaming, which this
/// reader does not do.
///
/// # Errors
/// A schema that is not JSON, or a renamed nested field.
pub fn physical_names(schema_string: &str) -> Result<Vec<(String, String)>> {
    fn nested(path: &str, ty: &Value) -> Result<()> {
        let children: Vec<(String, &Value)> = match ty.get("type").and_then(Value::as_str) {
            Some("struct") => ty
                .get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|f| {
                    let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                    let physical = f
                        .get("metadata")
                        .and_then(|m| m.get(PHYSICAL_NAME))
                        .and_then(Value::as_str);
                    if let Some(p) = physical
                        && p != name
                    {
                        return Err(plan_datafusion_err!(
                            "the Delta table renames the nested field '{path}.{name}' (physical \
                             name '{p}') by column mapping, which this reader implements only \
                             for top-level columns"
                        ));
                    }
                    Ok((
                        format!("{path}.{name}"),
                        f.get("type").unwrap_or(&Value::Null),
                    ))
                })
                .collect::<Result<_>>()?,
            Some("array") => vec![(
                format!("{path}[]"),
                ty.get("elementType").unwrap_or(&Value::Null),
            )],
            Some("map") => vec![
                (
                    format!("{path}.key"),
                    ty.get("keyType").unwrap_or(&Value::Null),
                ),
                (
                    format!("{path}.value"),
                    ty.get("valueType").unwrap_or(&Value::Null),
                ),
            ],
            _ => Vec::new(),
        };
        for (p, t) in children {
            nested(&p, t)?;
        }
        Ok(())
    }
    let v: Value = serde_json::from_str(schema_string)
        .map_err(|e| plan_datafusion_err!("the Delta schemaString is not JSON: {e}"))?;
    let mut out = Vec::new();
    for f in v
        .get("fields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
        if let Some(p) = f
            .get("metadata")
            .and_then(|m| m.get(PHYSICAL_NAME))
            .and_then(Value::as_str)
        {
            out.push((name.to_string(), p.to_string()));
        }
        nested(name, f.get("type").unwrap_or(&Value::Null))?;
    }
    Ok(out)
}

fn struct_fields(v: &Value) -> Result<Fields> {
    if v.get("type").and_then(Value::as_str) != Some("struct") {
        return Err(bad(&format!("expected a struct type, got {v}")));
    }
    let fields = v
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("a struct without fields"))?;
    fields.iter().map(field).collect()
}

fn field(v: &Value) -> Result<FieldRef> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("a field without a name"))?;
    let nullable = v.get("nullable").and_then(Value::as_bool).unwrap_or(true);
    let ty = v.get("type").ok_or_else(|| bad("a field without a type"))?;
    if ty.as_str() == Some("variant") {
        return Ok(variant_field(name, nullable));
    }
    Ok(Arc::new(Field::new(name, data_type(ty)?, nullable)))
}

fn data_type(v: &Value) -> Result<DataType> {
    if let Some(name) = v.as_str() {
        return Ok(match name {
            "string" => DataType::Utf8View,
            "long" => DataType::Int64,
            "integer" => DataType::Int32,
            "short" => DataType::Int16,
            "byte" => DataType::Int8,
            "float" => DataType::Float32,
            "double" => DataType::Float64,
            "boolean" => DataType::Boolean,
            "binary" => DataType::BinaryView,
            "date" => DataType::Date32,
            "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
            "variant" => crate::array::variant_data_type(),
            d if d.starts_with("decimal(") && d.ends_with(')') => {
                let inner = &d["decimal(".len()..d.len() - 1];
                let (p, s) = inner
                    .split_once(',')
                    .ok_or_else(|| bad(&format!("type {d}")))?;
                let p: u8 = p.trim().parse().map_err(|_| bad(&format!("type {d}")))?;
                let s: i8 = s.trim().parse().map_err(|_| bad(&format!("type {d}")))?;
                DataType::Decimal128(p, s)
            }
            other => return Err(bad(&format!("type {other}"))),
        });
    }
    match v.get("type").and_then(Value::as_str) {
        Some("struct") => Ok(DataType::Struct(struct_fields(v)?)),
        Some("array") => {
            let element = v
                .get("elementType")
                .ok_or_else(|| bad("an array without elementType"))?;
            let nullable = v
                .get("containsNull")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            Ok(DataType::List(nested("element", element, nullable)?))
        }
        Some("map") => {
            let key = v
                .get("keyType")
                .ok_or_else(|| bad("a map without keyType"))?;
            let value = v
                .get("valueType")
                .ok_or_else(|| bad("a map without valueType"))?;
            let nullable = v
                .get("valueContainsNull")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    // DataFusion's map access compares keys with Utf8 literals.
                    match data_type(key)? {
                        DataType::Utf8View => Arc::new(Field::new("key", DataType::Utf8, false)),
                        _ => nested("key", key, false)?,
                    },
                    nested("value", value, nullable)?,
                ])),
                false,
            );
            Ok(DataType::Map(Arc::new(entries), false))
        }
        _ => Err(bad(&format!("type {v}"))),
    }
}

fn nested(name: &str, ty: &Value, nullable: bool) -> Result<FieldRef> {
    if ty.as_str() == Some("variant") {
        return Ok(variant_field(name, nullable));
    }
    Ok(Arc::new(Field::new(name, data_type(ty)?, nullable)))
}

/// The Delta `schemaString` of an Arrow schema (for tables we create).
pub fn schema_string(schema: &Schema) -> Result<String> {
    let fields: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| delta_field(f))
        .collect::<Result<_>>()?;
    Ok(json!({"type": "struct", "fields": fields}).to_string())
}

fn delta_field(f: &Field) -> Result<Value> {
    Ok(json!({
        "name": f.name(),
        "type": delta_type(f)?,
        "nullable": f.is_nullable(),
        "metadata": {},
    }))
}

fn delta_type(f: &Field) -> Result<Value> {
    if is_variant_field(f) {
        return Ok(json!("variant"));
    }
    let unsupported = |t: &DataType| {
        plan_datafusion_err!("column '{}': type {t} has no Delta equivalent", f.name())
    };
    Ok(match f.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => json!("string"),
        DataType::Int64 => json!("long"),
        DataType::Int32 => json!("integer"),
        DataType::Int16 => json!("short"),
        DataType::Int8 => json!("byte"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Boolean => json!("boolean"),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => json!("binary"),
        DataType::Date32 => json!("date"),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => json!("timestamp"),
        DataType::Timestamp(TimeUnit::Microsecond, None) => json!("timestamp_ntz"),
        DataType::Decimal128(p, s) if *s >= 0 => json!(format!("decimal({p},{s})")),
        DataType::Struct(fields) => {
            let fields: Vec<Value> = fields
                .iter()
                .map(|f| delta_field(f))
                .collect::<Result<_>>()?;
            json!({"type": "struct", "fields": fields})
        }
        DataType::List(e) | DataType::LargeList(e) | DataType::ListView(e) => json!({
            "type": "array",
            "elementType": delta_type(e)?,
            "containsNull": e.is_nullable(),
        }),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(unsupported(f.data_type()));
            };
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(unsupported(f.data_type()));
            };
            json!({
                "type": "map",
                "keyType": delta_type(k)?,
                "valueType": delta_type(v)?,
                "valueContainsNull": v.is_nullable(),
            })
        }
        other => return Err(unsupported(other)),
    })
}

/// The Arrow type a Delta writer stores for `t` (the types `delta_type` maps
/// to), used to cast incoming columns: timestamps in microseconds.
pub fn writable_type(t: &DataType) -> DataType {
    match t {
        DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Microsecond, tz.clone()),
        DataType::Date64 => DataType::Date32,
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::variant_data_type;

    #[test]
    fn reads_variant_and_nested_types() {
        let s = r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{}},
            {"name":"v","type":"variant","nullable":true,"metadata":{}},
            {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"variant","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"a","type":{"type":"array","elementType":"variant","containsNull":true},"nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"variant","valueContainsNull":true},"nullable":true,"metadata":{}},
            {"name":"d","type":"decimal(10,2)","nullable":false,"metadata":{}}]}"#;
        let schema = arrow_schema(s).unwrap();
        assert_eq!(schema.field(0).data_type(), &DataType::Int64);
        assert!(is_variant_field(schema.field(1)));
        assert_eq!(schema.field(1).data_type(), &variant_data_type());
        let DataType::Struct(inner) = schema.field(2).data_type() else {
            panic!()
        };
        assert!(is_variant_field(&inner[0]));
        assert!(matches!(schema.field(3).data_type(), DataType::List(e) if is_variant_field(e)));
        assert!(matches!(schema.field(4).data_type(), DataType::Map(..)));
        assert_eq!(schema.field(5).data_type(), &DataType::Decimal128(10, 2));
        assert!(!schema.field(5).is_nullable());
        // And back.
        let again = arrow_schema(&schema_string(&schema).unwrap()).unwrap();
        assert_eq!(again, schema);
    }

    #[test]
    fn column_mapping_names_top_level_columns_and_refuses_renamed_nested_fields() {
        let meta =
            |p: &str| json!({"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": p});
        let top = json!({"type": "struct", "fields": [
            {"name": "id", "type": "long", "nullable": true, "metadata": meta("col-1")},
            {"name": "v", "type": "variant", "nullable": true, "metadata": meta("col-2")},
            {"name": "s", "type": {"type": "struct", "fields": [
                {"name": "x", "type": "long", "nullable": true, "metadata": meta("x")}]},
             "nullable": true, "metadata": meta("col-3")}]});
        assert_eq!(
            physical_names(&top.to_string()).unwrap(),
            vec![
                ("id".to_string(), "col-1".to_string()),
                ("v".to_string(), "col-2".to_string()),
                ("s".to_string(), "col-3".to_string())
            ]
        );
        let nested = json!({"type": "struct", "fields": [
            {"name": "s", "type": {"type": "array", "elementType": {"type": "struct", "fields": [
                {"name": "x", "type": "long", "nullable": true, "metadata": meta("col-9")}]},
                "containsNull": true}, "nullable": true, "metadata": meta("col-3")}]});
        let err = physical_names(&nested.to_string()).unwrap_err().to_string();
        assert!(err.contains("'s[].x'") && err.contains("col-9"), "{err}");
    }

    #[test]
    fn refuses_unknown_types() {
        let s = r#"{"type":"struct","fields":[{"name":"g","type":"geometry","nullable":true,"metadata":{}}]}"#;
        let err = arrow_schema(s).unwrap_err().to_string();
        assert!(err.contains("geometry"), "{err}");
        let arrow = Schema::new(vec![Field::new(
            "t",
            DataType::Time64(TimeUnit::Microsecond),
            true,
        )]);
        let err = schema_string(&arrow).unwrap_err().to_string();
        assert!(err.contains("column 't'"), "{err}");
    }
}
