//! Printing results as a table, CSV, JSON or NDJSON. VARIANT columns print as
//! their JSON text (Spark's `to_json`); in JSON output they are embedded as JSON.

use std::io::Write;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::{DataFusionError, Result};

use df_variant::functions::each_json;

use df_variant::array::from_arrow::{ToVariantMode, array_to_variant};
use df_variant::array::is_variant_field;
use df_variant::variant::format::write_json_string;
use df_variant::variant::tz::SessionTz;

use super::Format;

/// JSON text of every row of a Variant column (`None` for SQL NULL).
fn variant_json(column: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    let mut out = Vec::with_capacity(column.len());
    each_json(column, tz, |text| out.push(text.map(str::to_string)))?;
    Ok(out)
}

/// Plain display text of any column (NULL as `None`).
fn display_text(column: &ArrayRef) -> Result<Vec<Option<String>>> {
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(column.as_ref(), &options)?;
    Ok((0..column.len())
        .map(|i| (!column.is_null(i)).then(|| formatter.value(i).to_string()))
        .collect())
}

/// A JSON string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_json_string(s, &mut out);
    out
}

/// JSON fragments of a column: Variants as JSON, other types through their
/// Variant form (numbers, strings, lists, structs...), else as quoted text.
fn json_fragments(field: &Field, column: &ArrayRef, tz: &SessionTz) -> Result<Vec<Option<String>>> {
    if is_variant_field(field) {
        return variant_json(column, tz);
    }
    if let Ok(v) = array_to_variant(column.as_ref(), ToVariantMode::ToVariantObject)
        .or_else(|_| array_to_variant(column.as_ref(), ToVariantMode::Cast))
        && let Ok(out) = variant_json(&v, tz)
    {
        return Ok(out);
    }
    Ok(display_text(column)?
        .into_iter()
        .map(|t| t.map(|t| quote(&t)))
        .collect())
}

/// Whether a type holds a Variant below its top level (in a struct, list or map).
fn has_nested_variant(dt: &DataType) -> bool {
    match dt {
        DataType::Struct(fields) => fields
            .iter()
            .any(|f| is_variant_field(f) || has_nested_variant(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => is_variant_field(f) || has_nested_variant(f.data_type()),
        _ => false,
    }
}

/// The batch with every Variant column, and every column holding Variants inside,
/// replaced by its JSON text.
fn displayable(batch: &RecordBatch, tz: &SessionTz) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema
        .fields()
        .iter()
        .any(|f| is_variant_field(f) || has_nested_variant(f.data_type()))
    {
        return Ok(batch.clone());
    }
    as_text(batch, |field, column| {
        if is_variant_field(field) {
            variant_json(column, tz).map(Some)
        } else if has_nested_variant(field.data_type()) {
            json_fragments(field, column, tz).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// `batch` with the columns `text` gives text for replaced by that text
/// (nullable `Utf8` columns of the same names); the others kept.
fn as_text(
    batch: &RecordBatch,
    text: impl Fn(&Field, &ArrayRef) -> Result<Option<Vec<Option<String>>>>,
) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        match text(field, column)? {
            Some(rows) => {
                fields.push(Field::new(field.name(), DataType::Utf8, true));
                columns.push(Arc::new(StringArray::from(rows)));
            }
            None => {
                fields.push(field.as_ref().clone());
                columns.push(Arc::clone(column));
            }
        }
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// `batch` for the CSV writer, which cannot write lists, structs or maps: those
/// columns become their display text (as the table shows them).
fn csv_writable(batch: RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| f.data_type().is_nested()) {
        return Ok(batch);
    }
    as_text(&batch, |field, column| {
        if field.data_type().is_nested() {
            display_text(column).map(Some)
        } else {
            Ok(None)
        }
    })
}

/// Prints `batches` (with `schema`, for empty results) to `out`.
pub fn print(
    out: &mut dyn Write,
    format: Format,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    maxrows: usize,
    tz: &SessionTz,
) -> Result<()> {
    let io = |e: std::io::Error| DataFusionError::External(Box::new(e));
    match format {
        Format::Table => {
            let total: usize = batches
                .iter()
                .map(arrow::array::RecordBatch::num_rows)
                .sum();
            let mut shown = Vec::new();
            let mut left = if maxrows == 0 { usize::MAX } else { maxrows };
            for b in batches {
                if left == 0 {
                    break;
                }
                let take = b.num_rows().min(left);
                shown.push(displayable(&b.slice(0, take), tz)?);
                left -= take;
            }
            if shown.is_empty() {
                let empty = displayable(&RecordBatch::new_empty(Arc::clone(schema)), tz)?;
                shown.push(empty);
            }
            let table = arrow::util::pretty::pretty_format_batches(&shown)?;
            writeln!(out, "{table}").map_err(io)?;
            if total > maxrows && maxrows > 0 {
                writeln!(
                    out,
                    "({maxrows} of {total} rows shown; --maxrows 0 shows all)"
                )
                .map_err(io)?;
            }
        }
        Format::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut *out);
            if batches.is_empty() {
                writer.write(&csv_writable(displayable(
                    &RecordBatch::new_empty(Arc::clone(schema)),
                    tz,
                )?)?)?;
            }
            for b in batches {
                writer.write(&csv_writable(displayable(b, tz)?)?)?;
            }
        }
        Format::Json | Format::Ndjson => {
            let names: Vec<String> = schema.fields().iter().map(|f| quote(f.name())).collect();
            let mut first = true;
            if format == Format::Json {
                write!(out, "[").map_err(io)?;
            }
            for b in batches {
                let columns = b
                    .schema()
                    .fields()
                    .iter()
                    .zip(b.columns())
                    .map(|(f, c)| json_fragments(f, c, tz))
                    .collect::<Result<Vec<_>>>()?;
                for row in 0..b.num_rows() {
                    let mut line = String::from("{");
                    for (i, (name, col)) in names.iter().zip(&columns).enumerate() {
                        if i > 0 {
                            line.push(',');
                        }
                        line.push_str(name);
                        line.push(':');
                        line.push_str(col[row].as_deref().unwrap_or("null"));
                    }
                    line.push('}');
                    match format {
                        Format::Json if first => write!(out, "{line}"),
                        Format::Json => write!(out, ",\n{line}"),
                        _ => writeln!(out, "{line}"),
                    }
                    .map_err(io)?;
                    first = false;
                }
            }
            if format == Format::Json {
                writeln!(out, "]").map_err(io)?;
            }
        }
    }
    out.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    fn batch() -> RecordBatch {
        let ctx_v = {
            let mut b = df_variant::array::VariantColumnBuilder::new(2);
            let mut p = df_variant::variant::json::JsonToVariant::new(
                df_variant::variant::json::JsonParseOptions::default(),
            );
            p.parse(r#"{"b": [1, "x"], "a": 1.50}"#).unwrap();
            b.append(p.metadata(), p.value());
            b.append_null();
            b.finish()
        };
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            df_variant::array::variant_field("v", true).as_ref().clone(),
            Field::new("s", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![Some(1), None])),
                ctx_v,
                Arc::new(StringArray::from(vec![Some("q\"uote"), Some("x")])),
            ],
        )
        .unwrap()
    }

    fn render(format: Format) -> String {
        let b = batch();
        let mut out = Vec::new();
        print(&mut out, format, &b.schema(), &[b], 40, &SessionTz::utc()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_embeds_variants_as_json() {
        assert_eq!(
            render(Format::Ndjson),
            "{\"id\":1,\"v\":{\"a\":1.5,\"b\":[1,\"x\"]},\"s\":\"q\\\"uote\"}\n{\"id\":null,\"v\":null,\"s\":\"x\"}\n"
        );
        let json = render(Format::Json);
        assert!(
            json.starts_with("[{\"id\":1") && json.ends_with("}]\n"),
            "{json}"
        );
    }

    #[test]
    fn variants_inside_structs_print_as_json() {
        let b = batch();
        let wrapped = arrow::array::StructArray::try_new(
            arrow::datatypes::Fields::from(vec![b.schema().field(1).clone()]),
            vec![Arc::clone(b.column(1))],
            None,
        )
        .unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "s",
            wrapped.data_type().clone(),
            true,
        )]));
        let nested = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(wrapped)]).unwrap();
        let mut out = Vec::new();
        print(
            &mut out,
            Format::Csv,
            &schema,
            &[nested],
            40,
            &SessionTz::utc(),
        )
        .unwrap();
        let csv = String::from_utf8(out).unwrap();
        assert!(
            csv.contains(r#""{""v"":{""a"":1.5,""b"":[1,""x""]}}""#),
            "{csv}"
        );
    }

    #[test]
    fn table_and_csv_show_variant_text() {
        assert!(render(Format::Table).contains(r#"{"a":1.5,"b":[1,"x"]}"#));
        let csv = render(Format::Csv);
        assert!(csv.starts_with("id,v,s\n1,"), "{csv}");
        assert!(csv.contains(r#""{""a"":1.5,""b"":[1,""x""]}""#), "{csv}");
    }

    #[test]
    fn csv_prints_lists_and_structs_as_the_table_does() {
        let list: ArrayRef = Arc::new(arrow::array::ListArray::from_iter_primitive::<
            arrow::datatypes::Int32Type,
            _,
            _,
        >(vec![Some(vec![Some(1), Some(2)]), None]));
        let ints: ArrayRef = Arc::new(arrow::array::Int32Array::from(vec![1, 2]));
        let strukt: ArrayRef = Arc::new(arrow::array::StructArray::from(vec![(
            Arc::new(Field::new("a", DataType::Int32, false)),
            Arc::clone(&ints),
        )]));
        let batch =
            RecordBatch::try_from_iter(vec![("l", list), ("s", strukt), ("i", ints)]).unwrap();
        let mut out = Vec::new();
        print(
            &mut out,
            Format::Csv,
            &batch.schema(),
            &[batch],
            40,
            &SessionTz::utc(),
        )
        .unwrap();
        let csv = String::from_utf8(out).unwrap();
        assert_eq!(csv, "l,s,i\n\"[1, 2]\",{a: 1},1\n,{a: 2},2\n", "{csv}");
    }
}
