//! The check in front of parquet-rs's decoder of a file's embedded Arrow schema.
//!
//! A Parquet file written by an Arrow writer carries its Arrow schema as an IPC
//! flatbuffer, base64-encoded under the key `ARROW:schema`. parquet 59.3.2
//! decodes it with arrow-ipc's `fb_to_schema`, which verifies the flatbuffer
//! but then panics on contents it does not support: an unknown type tag
//! ("Type NONE not supported", found by the long fuzz run), a missing type
//! table, an integer of 12 bits, a list without its child, a decimal precision
//! past 255, and so on. [`check_embedded_arrow_schema`] walks the same
//! flatbuffer first and refuses, with an error naming the file and the field,
//! everything that decoder would panic on. It allows every type that a Parquet
//! file can hold, so a valid file reads as before.

use arrow_ipc::{Field, Precision, Type};
use base64::Engine;
use datafusion::parquet::file::metadata::ParquetMetaData;

/// The key under which Arrow writers embed their schema.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// Checks the embedded Arrow schema of the Parquet file `location` (when there
/// is one) for what arrow-ipc 59.3.2 would panic on.
///
/// ```
/// use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
/// use df_variant::parquet::check_embedded_arrow_schema;
/// // A file from the long fuzz run: one byte of its embedded schema changed a
/// // field's type tag to NONE, on which arrow-ipc panics.
/// let path = "sqllogictests/data/corrupt/arrow_schema_unknown_type.parquet";
/// let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
/// let e = check_embedded_arrow_schema(path, reader.metadata()).unwrap_err();
/// assert!(e.contains("embedded Arrow schema (ARROW:schema) field 'v'"), "{e}");
/// ```
///
/// # Errors
/// A message naming the file, the field and what is wrong. An embedded schema
/// that is not base64 or not a flatbuffer is left to parquet-rs, which reports
/// those as errors itself.
pub fn check_embedded_arrow_schema(
    location: &str,
    metadata: &ParquetMetaData,
) -> Result<(), String> {
    let Some(encoded) = metadata
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|kv| kv.key == ARROW_SCHEMA_KEY))
        .and_then(|kv| kv.value.as_deref())
    else {
        return Ok(());
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded) else {
        return Ok(());
    };
    // As parquet-rs: an optional continuation marker and length come first.
    let slice = if bytes.len() > 8 && bytes[0..4] == [255u8; 4] {
        &bytes[8..]
    } else {
        &bytes[..]
    };
    let Ok(message) = arrow_ipc::root_as_message(slice) else {
        return Ok(());
    };
    let Some(schema) = message.header_as_schema() else {
        return Ok(());
    };
    let bad = |why: String| {
        format!(
            "{location} is not a valid Parquet file: its embedded Arrow schema ({ARROW_SCHEMA_KEY}) {why}"
        )
    };
    let Some(fields) = schema.fields() else {
        return Err(bad("has no fields".into()));
    };
    let big_endian = schema.endianness() == arrow_ipc::Endianness::Big;
    for field in fields {
        check_field(field, big_endian, 0).map_err(|why| {
            bad(format!(
                "field '{}': {why}",
                field.name().unwrap_or_default()
            ))
        })?;
    }
    Ok(())
}

/// Nesting beyond which a schema is refused rather than walked.
const MAX_SCHEMA_DEPTH: usize = 256;

/// Checks one field as `get_data_type` would decode it (with its dictionary).
fn check_field(field: Field<'_>, big_endian: bool, depth: usize) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!("nests deeper than {MAX_SCHEMA_DEPTH} levels"));
    }
    if let Some(dictionary) = field.dictionary() {
        let index = dictionary
            .indexType()
            .ok_or("a dictionary without its index type")?;
        check_int(index.bitWidth())?;
    }
    let ty = field.type_type();
    let missing = || format!("a {ty:?} type without its parameters");
    let children = |n: usize| -> Result<(), String> {
        let children = field
            .children()
            .ok_or_else(|| format!("a {ty:?} without children"))?;
        if children.len() != n {
            return Err(format!(
                "a {ty:?} with {} children, not {n}",
                children.len()
            ));
        }
        children
            .iter()
            .try_for_each(|c| check_field(c, big_endian, depth + 1))
    };
    match ty {
        Type::Null
        | Type::Bool
        | Type::Binary
        | Type::BinaryView
        | Type::LargeBinary
        | Type::Utf8
        | Type::Utf8View
        | Type::LargeUtf8 => Ok(()),
        Type::Int => check_int(field.type_as_int().ok_or_else(missing)?.bitWidth()),
        Type::FixedSizeBinary => field
            .type_as_fixed_size_binary()
            .map(|_| ())
            .ok_or_else(missing),
        Type::FloatingPoint => {
            match field
                .type_as_floating_point()
                .ok_or_else(missing)?
                .precision()
            {
                Precision::HALF | Precision::SINGLE | Precision::DOUBLE => Ok(()),
                p => Err(format!("a floating point precision {}", p.0)),
            }
        }
        Type::Date => match field.type_as_date().ok_or_else(missing)?.unit() {
            arrow_ipc::DateUnit::DAY | arrow_ipc::DateUnit::MILLISECOND => Ok(()),
            u => Err(format!("a date unit {}", u.0)),
        },
        Type::Time => {
            let time = field.type_as_time().ok_or_else(missing)?;
            match (time.bitWidth(), time.unit()) {
                (32, arrow_ipc::TimeUnit::SECOND | arrow_ipc::TimeUnit::MILLISECOND)
                | (64, arrow_ipc::TimeUnit::MICROSECOND | arrow_ipc::TimeUnit::NANOSECOND) => {
                    Ok(())
                }
                (w, u) => Err(format!("a time of {w} bits in unit {}", u.0)),
            }
        }
        Type::Timestamp => check_time_unit(field.type_as_timestamp().ok_or_else(missing)?.unit()),
        Type::Duration => check_time_unit(field.type_as_duration().ok_or_else(missing)?.unit()),
        Type::Interval => match field.type_as_interval().ok_or_else(missing)?.unit() {
            arrow_ipc::IntervalUnit::YEAR_MONTH
            | arrow_ipc::IntervalUnit::DAY_TIME
            | arrow_ipc::IntervalUnit::MONTH_DAY_NANO => Ok(()),
            u => Err(format!("an interval unit {}", u.0)),
        },
        Type::List | Type::LargeList | Type::ListView | Type::LargeListView => children(1),
        Type::FixedSizeList => {
            field.type_as_fixed_size_list().ok_or_else(missing)?;
            children(1)
        }
        Type::Map => {
            field.type_as_map().ok_or_else(missing)?;
            children(1)
        }
        Type::RunEndEncoded => children(2),
        Type::Struct_ => field.children().map_or(Ok(()), |c| {
            c.iter()
                .try_for_each(|c| check_field(c, big_endian, depth + 1))
        }),
        Type::Decimal => {
            if big_endian {
                return Err("a big-endian decimal".into());
            }
            let decimal = field.type_as_decimal().ok_or_else(missing)?;
            let (precision, scale, width) =
                (decimal.precision(), decimal.scale(), decimal.bitWidth());
            if u8::try_from(precision).is_err() || i8::try_from(scale).is_err() {
                return Err(format!("a decimal({precision}, {scale})"));
            }
            match width {
                32 | 64 | 128 | 256 => Ok(()),
                w => Err(format!("a decimal of {w} bits")),
            }
        }
        // Unions are not Parquet types: parquet-rs would refuse the schema
        // later, but its decoder panics first on several malformed ones.
        Type::Union => Err("a union type".into()),
        t => Err(format!("the type tag {}", t.0)),
    }
}

fn check_int(width: i32) -> Result<(), String> {
    match width {
        8 | 16 | 32 | 64 => Ok(()),
        w => Err(format!("an integer of {w} bits")),
    }
}

fn check_time_unit(unit: arrow_ipc::TimeUnit) -> Result<(), String> {
    match unit {
        arrow_ipc::TimeUnit::SECOND
        | arrow_ipc::TimeUnit::MILLISECOND
        | arrow_ipc::TimeUnit::MICROSECOND
        | arrow_ipc::TimeUnit::NANOSECOND => Ok(()),
        u => Err(format!("a time unit {}", u.0)),
    }
}
