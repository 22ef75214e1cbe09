//! `to_json(v) -> string` in Spark's exact text format; also of arrays,
//! structs and maps that hold variants.

use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature,
};

use super::common::{Arrays, any_one, check_variant_arg, for_each_variant, session_tz, unary_doc};
use crate::array::from_arrow::{ToVariantMode, array_to_variant, check_convertible};
use crate::array::is_variant_field;
use crate::variant::format::{write_json, write_json_string};
use crate::variant::tz::SessionTz;

/// `to_json(v)`: compact JSON with keys sorted, Java-style doubles, decimals
/// without trailing zeros, NaN/Infinity as strings, timestamps in the session
/// time zone. An array, struct or map (holding variants or not) prints as
/// Spark prints it: variants embedded as JSON, struct fields and map entries in
/// their own order, struct fields that are SQL NULL left out.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ToJsonFunc {
    signature: Signature,
}

impl ToJsonFunc {
    /// Creates the function.
    pub fn new() -> Self {
        Self {
            signature: any_one(),
        }
    }
}

impl Default for ToJsonFunc {
    fn default() -> Self {
        Self::new()
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "Renders a VARIANT as JSON text exactly as Spark does: keys sorted, no spaces, doubles printed the Java way (1.0E20), decimals without trailing zeros, NaN/Infinity as strings, timestamps as 'yyyy-MM-dd HH:mm:ss[.f]+hh:mm' in the session time zone. An array, struct or map prints the same way, with its variants embedded, struct fields and map entries in their own order, and struct fields that are SQL NULL left out.",
        "to_json(v)",
        "> SELECT to_json(parse_json('{\"b\": 1e20, \"a\": 1.50}'));\n{\"a\":1.5,\"b\":1.0E20}",
    )
});

impl ScalarUDFImpl for ToJsonFunc {
    fn name(&self) -> &'static str {
        "to_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let [arg] = args.arg_fields else {
            return plan_err!("to_json takes exactly one argument");
        };
        let container = matches!(
            arg.data_type(),
            DataType::List(_)
                | DataType::LargeList(_)
                | DataType::FixedSizeList(_, _)
                | DataType::Map(_, _)
                | DataType::Struct(_)
        );
        if is_variant_field(arg)
            || !container
            || check_convertible(arg.data_type(), ToVariantMode::ToJson).is_err()
        {
            check_variant_arg("to_json", 0, arg)?;
        }
        Ok(Arc::new(Field::new("to_json", DataType::Utf8, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let tz = session_tz(&args.config_options)?;
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let input = &arrays.arrays[0];
        let texts = if is_variant_field(&args.arg_fields[0]) || input.data_type() == &DataType::Null
        {
            leaf_json(input, &tz)?
        } else {
            // Struct fields and map entries keep their order, as in Spark.
            super::common::guard("to_json", || container_json(input, &tz))?
        };
        arrays.finish(Arc::new(StringArray::from(texts)))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The JSON text of each row of a VARIANT column, or of any other leaf (a
/// value converted as `CAST(x AS VARIANT)` would convert it).
fn leaf_json(array: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    let variants = if crate::array::is_variant_type(array.data_type())
        || array.data_type() == &DataType::Null
    {
        Arc::clone(array)
    } else {
        array_to_variant(array.as_ref(), ToVariantMode::Cast)
            .map_err(|e| exec_datafusion_err!("to_json: {e}"))?
    };
    let mut out = Vec::with_capacity(array.len());
    for_each_variant("to_json", &variants, |_, v| {
        out.push(v.map(|v| {
            let mut buf = String::new();
            write_json(v, tz, &mut buf);
            buf
        }));
        Ok(())
    })?;
    Ok(out)
}

/// The JSON text of each row of an array, struct or map (holding variants or
/// not), as Spark's `to_json` writes it: elements and map entries in order,
/// struct fields in schema order with SQL NULL fields left out, a NULL element
/// or map value as `null`, map keys as strings.
fn container_json(array: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    use arrow::array::{Array, AsArray};
    let valid = |i: usize| array.is_valid(i);
    Ok(match array.data_type() {
        t if crate::array::is_variant_type(t) => leaf_json(array, tz)?,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => {
            let (values, ranges) = list_ranges(array);
            let elements = container_json(&values, tz)?;
            ranges
                .into_iter()
                .enumerate()
                .map(|(i, (a, b))| {
                    valid(i).then(|| {
                        let items: Vec<&str> = elements[a..b]
                            .iter()
                            .map(|e| e.as_deref().unwrap_or("null"))
                            .collect();
                        format!("[{}]", items.join(","))
                    })
                })
                .collect()
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let children = s
                .columns()
                .iter()
                .map(|c| container_json(c, tz))
                .collect::<Result<Vec<_>>>()?;
            let names: Vec<String> = fields
                .iter()
                .map(|f| {
                    let mut name = String::new();
                    write_json_string(f.name(), &mut name);
                    name
                })
                .collect();
            (0..s.len())
                .map(|i| {
                    valid(i).then(|| {
                        let parts: Vec<String> = names
                            .iter()
                            .zip(&children)
                            .filter_map(|(name, c)| c[i].as_deref().map(|v| format!("{name}:{v}")))
                            .collect();
                        format!("{{{}}}", parts.join(","))
                    })
                })
                .collect()
        }
        DataType::Map(_, _) => {
            let m = array.as_map();
            let keys = container_json(m.keys(), tz)?;
            let values = container_json(m.values(), tz)?;
            let o = m.value_offsets();
            (0..m.len())
                .map(|i| {
                    valid(i).then(|| {
                        let (a, b) = (o[i] as usize, o[i + 1] as usize);
                        let parts: Vec<String> = (a..b)
                            .map(|j| {
                                let key = keys[j].as_deref().unwrap_or("null");
                                let key = if key.starts_with('"') {
                                    key.to_string()
                                } else {
                                    let mut quoted = String::new();
                                    write_json_string(key, &mut quoted);
                                    quoted
                                };
                                format!("{key}:{}", values[j].as_deref().unwrap_or("null"))
                            })
                            .collect();
                        format!("{{{}}}", parts.join(","))
                    })
                })
                .collect()
        }
        DataType::Timestamp(_, zone) => {
            // Microseconds, as Spark keeps them (the same zone: the same instants).
            let micros = arrow::compute::cast(
                array,
                &DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, zone.clone()),
            )?;
            micros
                .as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                .iter()
                .map(|v| v.and_then(|m| json_timestamp(m, zone.is_some(), tz)))
                .collect()
        }
        _ => leaf_json(array, tz)?,
    })
}

/// The values of a list array and each row's range in them.
fn list_ranges(array: &ArrayRef) -> (ArrayRef, Vec<(usize, usize)>) {
    use arrow::array::{Array, AsArray};
    fn offsets<O: arrow::array::OffsetSizeTrait>(
        l: &arrow::array::GenericListArray<O>,
    ) -> (ArrayRef, Vec<(usize, usize)>) {
        let ranges = l
            .value_offsets()
            .windows(2)
            .map(|w| (w[0].as_usize(), w[1].as_usize()))
            .collect();
        (Arc::clone(l.values()), ranges)
    }
    match array.data_type() {
        DataType::List(_) => offsets(array.as_list::<i32>()),
        DataType::LargeList(_) => offsets(array.as_list::<i64>()),
        _ => {
            let l = array.as_fixed_size_list();
            let n = l.value_length() as usize;
            (
                Arc::clone(l.values()),
                (0..l.len()).map(|i| (i * n, (i + 1) * n)).collect(),
            )
        }
    }
}

/// A TIMESTAMP (with a zone: `with_zone`) or TIMESTAMP_NTZ field as Spark's
/// JSON writer prints it by default (`yyyy-MM-dd'T'HH:mm:ss[.SSS]XXX`):
/// `"2024-01-01T00:00:00.000Z"`, `"2024-01-01T02:00:00.000+02:00"` in the
/// session time zone; without a zone `"2024-01-01T00:00:00.000"`.
fn json_timestamp(micros: i64, with_zone: bool, tz: &SessionTz) -> Option<String> {
    let utc = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
    let (local, offset) = if with_zone {
        let offset = tz.offset_at_utc(&utc);
        (
            utc.checked_add_offset(offset)?,
            Some(offset.local_minus_utc()),
        )
    } else {
        (utc, None)
    };
    let mut out = format!("\"{}", local.format("%Y-%m-%dT%H:%M:%S%.3f"));
    match offset {
        None => {}
        Some(0) => out.push('Z'),
        Some(secs) => {
            let abs = secs.unsigned_abs();
            out.push(if secs < 0 { '-' } else { '+' });
            out.push_str(&format!("{:02}:{:02}", abs / 3600, abs / 60 % 60));
        }
    }
    out.push('"');
    Some(out)
}
