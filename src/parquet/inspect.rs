//! `variant_shredding_schema(path)`: how each Parquet file stores its VARIANT columns.
//!
//! ```sql
//! SELECT * FROM variant_shredding_schema('events/');
//! -- file               | column | annotated | row_groups | rows  | has_value | shredding
//! -- events/part-0.parquet | v    | true      | 4          | 40000 | true      | STRUCT<id: BIGINT, kind: STRING>
//! ```
//!
//! One row per VARIANT column (top-level, or nested in structs as `a.b`) of each
//! file: whether the column carries the Parquet VARIANT logical type, how many row
//! groups and rows the file has, whether it has the residual `value` column, and
//! its shredding schema as a Spark DDL type string (`NULL` when unshredded) — the
//! same syntax `SET variant.shredding_schema` accepts, so a schema the writer
//! inferred can be pinned for later writes. Fields shredded without a
//! `typed_value` (value only) show as `VARIANT`.
//!
//! The path is a file, a directory (its regular files, without hidden names) or a
//! glob in the file name part, as for `read_json_variant`; files are read from the
//! local filesystem and only their footers are read.

use std::fs::File;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, plan_datafusion_err};
use datafusion::datasource::MemTable;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::array::{VARIANT_EXTENSION_NAME, is_variant_field};
use crate::fs::{self as files, InputFile};

/// The SQL name of the table function.
pub const VARIANT_SHREDDING_SCHEMA: &str = "variant_shredding_schema";

/// The table function described in the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub struct VariantShreddingSchema;

/// The output schema of [`VariantShreddingSchema`].
pub fn shredding_schema_table_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("file", DataType::Utf8, false),
        Field::new("column", DataType::Utf8, false),
        Field::new("annotated", DataType::Boolean, false),
        Field::new("row_groups", DataType::Int64, false),
        Field::new("rows", DataType::Int64, false),
        Field::new("has_value", DataType::Boolean, false),
        Field::new("shredding", DataType::Utf8, true),
    ]))
}

/// One VARIANT column of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnShredding {
    /// The column path (`v`, or `s.v` inside a struct).
    pub column: String,
    /// Whether the Parquet VARIANT logical type annotates the column.
    pub annotated: bool,
    /// Whether the residual `value` column exists.
    pub has_value: bool,
    /// The shredding schema as a Spark DDL type string, `None` when unshredded.
    pub shredding: Option<String>,
}

/// The VARIANT columns of an Arrow schema read from a Parquet file (with the
/// `variant_experimental` extension metadata), in schema order.
pub fn variant_columns_of(schema: &Schema) -> Vec<ColumnShredding> {
    let mut out = Vec::new();
    for field in schema.fields() {
        collect(field, "", &mut out);
    }
    out
}

fn collect(field: &Field, prefix: &str, out: &mut Vec<ColumnShredding>) {
    let path = if prefix.is_empty() {
        field.name().clone()
    } else {
        format!("{prefix}.{}", field.name())
    };
    if is_variant_field(field) {
        let DataType::Struct(children) = field.data_type() else {
            return;
        };
        out.push(ColumnShredding {
            column: path,
            annotated: field
                .metadata()
                .get("ARROW:extension:name")
                .is_some_and(|n| n == VARIANT_EXTENSION_NAME),
            has_value: children.find("value").is_some(),
            shredding: children
                .find("typed_value")
                .map(|(_, f)| typed_value_ddl(f.data_type())),
        });
    } else if let DataType::Struct(children) = field.data_type() {
        for child in children {
            collect(child, &path, out);
        }
    }
}

/// The Spark DDL of a `typed_value` type (upper case, as Spark prints types).
/// Types Spark has no name for get the Variant spec's: `TIME`, `UUID`,
/// `TIMESTAMP_NANOS`, `TIMESTAMP_NTZ_NANOS`.
pub fn typed_value_ddl(typed_value: &DataType) -> String {
    let mut out = String::new();
    write_ddl(typed_value, &mut out);
    out
}

/// The DDL of the `typed_value` of a shredded group `{value?, typed_value?}`
/// (`VARIANT` when there is none).
fn write_group_ddl(group: &DataType, out: &mut String) {
    match group {
        DataType::Struct(fields)
            if !fields.is_empty()
                && fields
                    .iter()
                    .all(|f| f.name() == "value" || f.name() == "typed_value") =>
        {
            match fields.find("typed_value") {
                Some((_, f)) => write_ddl(f.data_type(), out),
                None => out.push_str("VARIANT"),
            }
        }
        // A plain typed shape (as `typed_value_from_ddl` returns it).
        other => write_ddl(other, out),
    }
}

fn write_fields(fields: &Fields, out: &mut String) {
    out.push_str("STRUCT<");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        crate::variant::types::push_quoted_if_needed(f.name(), out);
        out.push_str(": ");
        write_group_ddl(f.data_type(), out);
    }
    out.push('>');
}

fn write_ddl(dt: &DataType, out: &mut String) {
    let name = match dt {
        DataType::Boolean => "BOOLEAN",
        DataType::Int8 => "TINYINT",
        DataType::Int16 => "SMALLINT",
        DataType::Int32 => "INT",
        DataType::Int64 => "BIGINT",
        DataType::Float32 => "FLOAT",
        DataType::Float64 => "DOUBLE",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "STRING",
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "BINARY",
        DataType::FixedSizeBinary(16) => "UUID",
        DataType::Date32 => "DATE",
        DataType::Time64(_) => "TIME",
        DataType::Timestamp(TimeUnit::Nanosecond, Some(_)) => "TIMESTAMP_NANOS",
        DataType::Timestamp(TimeUnit::Nanosecond, None) => "TIMESTAMP_NTZ_NANOS",
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP",
        DataType::Timestamp(_, None) => "TIMESTAMP_NTZ",
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => {
            out.push_str(&format!("DECIMAL({p},{s})"));
            return;
        }
        DataType::List(e)
        | DataType::LargeList(e)
        | DataType::ListView(e)
        | DataType::LargeListView(e)
        | DataType::FixedSizeList(e, _) => {
            out.push_str("ARRAY<");
            write_group_ddl(e.data_type(), out);
            out.push('>');
            return;
        }
        DataType::Struct(fields) => {
            write_fields(fields, out);
            return;
        }
        other => {
            // Not a shreddable type; show Arrow's name rather than guess.
            out.push_str(&format!("UNSUPPORTED({other})"));
            return;
        }
    };
    out.push_str(name);
}

/// Reads the footer of one file and describes its VARIANT columns.
///
/// # Errors
/// When the file cannot be opened or is not valid Parquet (naming the file).
pub fn describe_file(file: &InputFile) -> Result<(usize, i64, Vec<ColumnShredding>)> {
    let name = file.path.display();
    let fail = |e: &dyn std::fmt::Display| {
        plan_datafusion_err!(
            "{VARIANT_SHREDDING_SCHEMA}: cannot read the Parquet footer of {name}: {e}"
        )
    };
    let handle = File::open(&file.path).map_err(|e| fail(&e))?;
    let reader = SerializedFileReader::new(handle).map_err(|e| fail(&e))?;
    let metadata = reader.metadata();
    let file_metadata = metadata.file_metadata();
    super::check_embedded_arrow_schema(&name.to_string(), metadata).map_err(|e| fail(&e))?;
    let schema = parquet::arrow::parquet_to_arrow_schema(
        file_metadata.schema_descr(),
        file_metadata.key_value_metadata(),
    )
    .map_err(|e| fail(&e))?;
    Ok((
        metadata.num_row_groups(),
        file_metadata.num_rows(),
        variant_columns_of(&schema),
    ))
}

impl VariantShreddingSchema {
    /// The table for a path pattern: one row per VARIANT column per file.
    ///
    /// # Errors
    /// When nothing matches or a file is not readable Parquet.
    pub fn table(&self, pattern: &str) -> Result<MemTable> {
        let files = files::resolve(VARIANT_SHREDDING_SCHEMA, pattern)?;
        let mut file_col = Vec::new();
        let mut column = Vec::new();
        let mut annotated = Vec::new();
        let mut row_groups = Vec::new();
        let mut rows = Vec::new();
        let mut has_value = Vec::new();
        let mut shredding = Vec::new();
        for file in &files {
            let (groups, num_rows, columns) = describe_file(file)?;
            for c in columns {
                file_col.push(file.path.display().to_string());
                column.push(c.column);
                annotated.push(c.annotated);
                row_groups.push(groups as i64);
                rows.push(num_rows);
                has_value.push(c.has_value);
                shredding.push(c.shredding);
            }
        }
        let schema = shredding_schema_table_schema();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(file_col)),
            Arc::new(StringArray::from(column)),
            Arc::new(BooleanArray::from(annotated)),
            Arc::new(Int64Array::from(row_groups)),
            Arc::new(Int64Array::from(rows)),
            Arc::new(BooleanArray::from(has_value)),
            Arc::new(StringArray::from(shredding)),
        ];
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
        MemTable::try_new(schema, vec![vec![batch]])
    }
}

impl TableFunctionImpl for VariantShreddingSchema {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let pattern = files::path_argument(VARIANT_SHREDDING_SCHEMA, args.exprs())?;
        Ok(Arc::new(self.table(&pattern)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shredding::typed_value_from_ddl;

    #[test]
    fn ddl_round_trips_through_the_shredding_schema_parser() {
        for ddl in [
            "BIGINT",
            "STRUCT<a: BIGINT, b: STRING>",
            "STRUCT<`odd name`: DECIMAL(10,2), c: ARRAY<STRUCT<d: DOUBLE>>>",
            "ARRAY<TIMESTAMP_NTZ>",
        ] {
            let arrow = typed_value_from_ddl(ddl).unwrap();
            // The writer's physical typed_value wraps every field and element in a
            // {value, typed_value} group; the plain form above is also accepted.
            assert_eq!(typed_value_ddl(&arrow), ddl);
        }
    }

    #[test]
    fn value_only_fields_are_variant() {
        let group = DataType::Struct(Fields::from(vec![Field::new(
            "value",
            DataType::BinaryView,
            true,
        )]));
        let dt = DataType::Struct(Fields::from(vec![Field::new("x", group, true)]));
        assert_eq!(typed_value_ddl(&dt), "STRUCT<x: VARIANT>");
    }
}
