//! The SQL scalar functions, one file per family. [`functions`] is the one list
//! that registration, tests, examples and benches use.

use std::sync::Arc;

use datafusion::logical_expr::ScalarUDF;

pub(crate) mod coerce;
pub(crate) mod common;
pub(crate) mod explode;
pub(crate) mod flatten;
mod is_variant_null;
mod mutate;
mod parse_json;
mod schema_of_variant;
#[cfg(test)]
mod spark_functions;
mod structure;
mod to_json;
pub use to_json::each_json;
mod to_variant;
mod variant_get;

pub use explode::{VariantExplodeFunc, VariantExplodeOuterFunc, VariantExplodeTable};
pub use flatten::{VariantFlattenFunc, VariantFlattenTable};
pub use is_variant_null::IsVariantNullFunc;
pub(crate) use mutate::CONSTANT_BOOLEAN_ARGUMENTS;
pub use mutate::{
    IsValidVariantFunc, MutateKind, VariantDeleteFunc, VariantMutateFunc, VariantStripNullsFunc,
};
pub use parse_json::{FromJsonFunc, ParseJsonFunc};
pub use schema_of_variant::SchemaOfVariantFunc;
pub use structure::{VariantArrayLengthFunc, VariantObjectKeysFunc, VariantTypeofFunc};
pub(crate) use to_json::is_container;
pub use to_json::{ToJsonFunc, ToSparkStringFunc};
pub use to_variant::ToVariantFunc;
pub use variant_get::{RaiseVariantGetErrorFunc, VariantGetFunc, VariantGetOrErrorFunc};

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
make_udf!(variant_get_or_error_udf, VariantGetOrErrorFunc::new());
make_udf!(raise_variant_get_error_udf, RaiseVariantGetErrorFunc::new());
make_udf!(schema_of_variant_udf, SchemaOfVariantFunc::new());
make_udf!(is_variant_null_udf, IsVariantNullFunc::new());
make_udf!(to_json_udf, ToJsonFunc::new());
make_udf!(to_spark_string_udf, ToSparkStringFunc::new());
make_udf!(to_variant_object_udf, ToVariantFunc::to_variant_object());
make_udf!(cast_to_variant_udf, ToVariantFunc::cast());
make_udf!(variant_typeof_udf, VariantTypeofFunc::new());
make_udf!(variant_object_keys_udf, VariantObjectKeysFunc::new());
make_udf!(variant_array_length_udf, VariantArrayLengthFunc::new());
make_udf!(variant_explode_udf, VariantExplodeFunc::new());
make_udf!(variant_explode_outer_udf, VariantExplodeOuterFunc::new());
make_udf!(variant_flatten_udf, VariantFlattenFunc::new());
make_udf!(
    variant_insert_udf,
    VariantMutateFunc::new(MutateKind::Insert, false)
);
make_udf!(
    try_variant_insert_udf,
    VariantMutateFunc::new(MutateKind::Insert, true)
);
make_udf!(
    variant_set_udf,
    VariantMutateFunc::new(MutateKind::Set, false)
);
make_udf!(
    try_variant_set_udf,
    VariantMutateFunc::new(MutateKind::Set, true)
);
make_udf!(
    variant_array_append_udf,
    VariantMutateFunc::new(MutateKind::ArrayAppend, false)
);
make_udf!(
    try_variant_array_append_udf,
    VariantMutateFunc::new(MutateKind::ArrayAppend, true)
);
make_udf!(variant_delete_udf, VariantDeleteFunc::new());
make_udf!(variant_strip_nulls_udf, VariantStripNullsFunc::new());
make_udf!(is_valid_variant_udf, IsValidVariantFunc::new());
make_udf!(from_json_udf, FromJsonFunc::new());

/// Every scalar function of the crate. (DataFusion's `coalesce`, `nvl` and
/// `nvl2`, wrapped to take a VARIANT beside strings, are [`coerce::coercing_functions`].)
pub fn functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        parse_json_udf(),
        try_parse_json_udf(),
        variant_get_udf(),
        try_variant_get_udf(),
        variant_get_or_error_udf(),
        raise_variant_get_error_udf(),
        schema_of_variant_udf(),
        is_variant_null_udf(),
        to_json_udf(),
        to_spark_string_udf(),
        to_variant_object_udf(),
        cast_to_variant_udf(),
        variant_typeof_udf(),
        variant_object_keys_udf(),
        variant_array_length_udf(),
        variant_explode_udf(),
        variant_explode_outer_udf(),
        variant_flatten_udf(),
        variant_insert_udf(),
        try_variant_insert_udf(),
        variant_set_udf(),
        try_variant_set_udf(),
        variant_array_append_udf(),
        try_variant_array_append_udf(),
        variant_delete_udf(),
        variant_strip_nulls_udf(),
        is_valid_variant_udf(),
        from_json_udf(),
    ]
}

/// The table functions of this module: `variant_explode(<constant>)`,
/// `variant_explode_outer(<constant>)` and `variant_flatten(<constant>, ...)`.
pub fn table_functions() -> Vec<Arc<datafusion::catalog::TableFunction>> {
    let mut functions: Vec<_> = [
        VariantExplodeTable::new(false),
        VariantExplodeTable::new(true),
    ]
    .into_iter()
    .map(|f| {
        Arc::new(datafusion::catalog::TableFunction::new(
            f.name().to_string(),
            Arc::new(f),
        ))
    })
    .collect();
    functions.push(Arc::new(datafusion::catalog::TableFunction::new(
        flatten::VARIANT_FLATTEN.to_string(),
        Arc::new(VariantFlattenTable),
    )));
    functions
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
    /// `variant_typeof(v)`
    pub fn variant_typeof(v: Expr) -> Expr {
        super::variant_typeof_udf().call(vec![v])
    }
    /// `variant_object_keys(v)`
    pub fn variant_object_keys(v: Expr) -> Expr {
        super::variant_object_keys_udf().call(vec![v])
    }
    /// `variant_array_length(v)`
    pub fn variant_array_length(v: Expr) -> Expr {
        super::variant_array_length_udf().call(vec![v])
    }
    /// `variant_explode(v)` (a list of `(pos, key, value)` structs)
    pub fn variant_explode(v: Expr) -> Expr {
        super::variant_explode_udf().call(vec![v])
    }
    /// `variant_explode_outer(v)`
    pub fn variant_explode_outer(v: Expr) -> Expr {
        super::variant_explode_outer_udf().call(vec![v])
    }
    /// `variant_insert(v, path, val)`; `try_variant_insert` when `safe`.
    pub fn variant_insert(v: Expr, path: &str, val: Expr, safe: bool) -> Expr {
        let udf = if safe {
            super::try_variant_insert_udf()
        } else {
            super::variant_insert_udf()
        };
        udf.call(vec![v, lit(path), val])
    }
    /// `variant_set(v, path, val, create_if_missing)`; `try_variant_set` when `safe`.
    pub fn variant_set(
        v: Expr,
        path: &str,
        val: Expr,
        create_if_missing: bool,
        safe: bool,
    ) -> Expr {
        let udf = if safe {
            super::try_variant_set_udf()
        } else {
            super::variant_set_udf()
        };
        udf.call(vec![v, lit(path), val, lit(create_if_missing)])
    }
    /// `variant_array_append(v, path, val)`; `try_variant_array_append` when `safe`.
    pub fn variant_array_append(v: Expr, path: &str, val: Expr, safe: bool) -> Expr {
        let udf = if safe {
            super::try_variant_array_append_udf()
        } else {
            super::variant_array_append_udf()
        };
        udf.call(vec![v, lit(path), val])
    }
    /// `variant_delete(v, path1, path2, ...)`
    pub fn variant_delete(v: Expr, paths: &[&str]) -> Expr {
        let mut args = vec![v];
        args.extend(paths.iter().map(|p| lit(*p)));
        super::variant_delete_udf().call(args)
    }
    /// `variant_strip_nulls(v, include_arrays)`
    pub fn variant_strip_nulls(v: Expr, include_arrays: bool) -> Expr {
        super::variant_strip_nulls_udf().call(vec![v, lit(include_arrays)])
    }
    /// `is_valid_variant(v)`
    pub fn is_valid_variant(v: Expr) -> Expr {
        super::is_valid_variant_udf().call(vec![v])
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    /// Every SQL example in the functions' documentation (`> SELECT ...`
    /// followed by its answer, one line per row, values separated by spaces)
    /// gives that answer.
    #[tokio::test]
    async fn every_documented_example_gives_its_answer() {
        use arrow::util::display::{ArrayFormatter, FormatOptions};
        let ctx = crate::variant_context();
        let mut checked = 0;
        for f in super::functions() {
            let Some(example) = f.documentation().and_then(|d| d.sql_example.clone()) else {
                continue;
            };
            // (SQL, answer lines) per `> ` line.
            let mut examples: Vec<(&str, Vec<&str>)> = Vec::new();
            for line in example.lines() {
                match (line.strip_prefix("> "), examples.last_mut()) {
                    (Some(sql), _) => examples.push((sql, Vec::new())),
                    (None, Some((_, answer))) => answer.push(line),
                    (None, None) => panic!("{}: an answer without SQL: {line}", f.name()),
                }
            }
            for (sql, expected) in examples {
                let df = ctx.sql(sql).await;
                let batches = match df {
                    Ok(df) => df.collect().await,
                    Err(e) => Err(e),
                }
                .unwrap_or_else(|e| panic!("{}: {sql}: {e}", f.name()));
                let options = FormatOptions::default().with_null("NULL");
                let mut lines = Vec::new();
                for batch in &batches {
                    let formatters: Vec<_> = batch
                        .columns()
                        .iter()
                        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
                        .collect();
                    for row in 0..batch.num_rows() {
                        let cells: Vec<String> = formatters
                            .iter()
                            .map(|f| f.value(row).to_string())
                            .collect();
                        lines.push(cells.join(" "));
                    }
                }
                assert_eq!(lines, expected, "{}: {sql}", f.name());
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} examples");
    }

    use arrow::array::{
        ArrayRef, AsArray, BinaryArray, Int32Array, LargeBinaryArray, RecordBatch, StructArray,
    };
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    use datafusion::datasource::MemTable;

    use crate::variant::json::{JsonParseOptions, JsonToVariant};

    const DOCS: [&str; 3] = [r#"{"a": 1, "b": [true, "x"]}"#, "null", r#""s""#];

    fn encoded() -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        DOCS.iter()
            .map(|d| {
                p.parse(d).unwrap();
                (p.metadata().to_vec(), p.value().to_vec())
            })
            .collect()
    }

    /// A variant column with `value` before `metadata`, the given binary type,
    /// no extension metadata, and a SQL NULL as the last row.
    fn column(binary: &DataType) -> (Field, ArrayRef) {
        let rows = encoded();
        let mut values: Vec<Option<&[u8]>> = rows.iter().map(|r| Some(r.1.as_slice())).collect();
        let mut metas: Vec<Option<&[u8]>> = rows.iter().map(|r| Some(r.0.as_slice())).collect();
        values.push(Some(&[0]));
        metas.push(Some(&[1, 0, 0]));
        let (v, m): (ArrayRef, ArrayRef) = match binary {
            DataType::Binary => (
                Arc::new(BinaryArray::from(values)),
                Arc::new(BinaryArray::from(metas)),
            ),
            _ => (
                Arc::new(LargeBinaryArray::from(values)),
                Arc::new(LargeBinaryArray::from(metas)),
            ),
        };
        let fields = Fields::from(vec![
            Field::new("value", binary.clone(), false),
            Field::new("metadata", binary.clone(), false),
        ]);
        let nulls = arrow::buffer::NullBuffer::from(vec![true, true, true, false]);
        let s = StructArray::new(fields.clone(), vec![v, m], Some(nulls));
        (Field::new("v", DataType::Struct(fields), true), Arc::new(s))
    }

    #[tokio::test]
    async fn functions_accept_every_binary_flavour_and_field_order_without_extension() {
        for binary in [DataType::Binary, DataType::LargeBinary] {
            let (field, col) = column(&binary);
            let id: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 4]));
            let schema = Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, false),
                field,
            ]));
            let batch = RecordBatch::try_new(Arc::clone(&schema), vec![id, col]).unwrap();
            let ctx = crate::variant_context();
            ctx.register_table(
                "t",
                Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
            )
            .unwrap();
            let out = ctx
                .sql(
                    "SELECT to_json(v), variant_get(v, '$.b[1]', 'string'), schema_of_variant(v), \
                     is_variant_null(v) FROM t ORDER BY id",
                )
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            let b = &out[0];
            let json = b.column(0).as_string::<i32>();
            let rows: Vec<Option<&str>> = json.iter().collect();
            assert_eq!(
                rows,
                vec![
                    Some(r#"{"a":1,"b":[true,"x"]}"#),
                    Some("null"),
                    Some(r#""s""#),
                    None
                ],
                "{binary}"
            );
            assert_eq!(b.column(1).as_string_view().value(0), "x");
            assert_eq!(b.column(2).as_string::<i32>().value(1), "VOID");
            let is_null = b.column(3).as_boolean();
            assert!(!is_null.value(0) && is_null.value(1) && !is_null.value(3));
        }
    }

    #[tokio::test]
    async fn malformed_bytes_are_an_error_naming_the_problem() {
        let fields = Fields::from(vec![
            Field::new("metadata", DataType::Binary, false),
            Field::new("value", DataType::Binary, false),
        ]);
        let good: &[u8] = &[0x0c, 0x01];
        let bad: &[u8] = &[0x02, 0x05];
        let s = StructArray::new(
            fields.clone(),
            vec![
                Arc::new(BinaryArray::from(vec![&[1u8, 0, 0][..], &[1, 0, 0]])),
                Arc::new(BinaryArray::from(vec![good, bad])),
            ],
            None,
        );
        let schema = Arc::new(Schema::new(vec![Field::new(
            "v",
            DataType::Struct(fields),
            true,
        )]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(s)]).unwrap();
        let ctx = crate::variant_context();
        ctx.register_table(
            "t",
            Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
        )
        .unwrap();
        for sql in [
            "SELECT to_json(v) FROM t",
            "SELECT variant_get(v, '$', 'int') FROM t",
            "SELECT try_variant_get(v, '$', 'int') FROM t",
            "SELECT schema_of_variant_agg(v) FROM t",
        ] {
            let err = ctx
                .sql(sql)
                .await
                .unwrap()
                .collect()
                .await
                .unwrap_err()
                .to_string();
            // What is wrong, and no batch-local row number (it would not find
            // the row again under another partitioning).
            assert!(err.contains("MALFORMED_VARIANT"), "{sql}: {err}");
            assert!(!err.contains("row "), "{sql}: {err}");
        }
    }
}
