//! `variant_explode(v)` / `variant_explode_outer(v)`: one row `(pos, key, value)`
//! per element of a VARIANT array or field of a VARIANT object, as Spark 4.3.
//!
//! Two forms:
//! - **Table function** on a constant: `SELECT * FROM variant_explode(parse_json('[1, 2]'))`.
//! - **Scalar function** returning a list of `struct<pos, key, value>`, for rows of a
//!   table, expanded with `unnest`:
//!
//! ```sql
//! SELECT id, e['pos'] AS pos, e['key'] AS key, e['value'] AS value
//! FROM (SELECT id, unnest(variant_explode(v)) AS e FROM t);
//! ```
//!
//! `pos` is the 0-based position (fields of an object in the Variant's sorted key
//! order), `key` the field name (NULL for array elements), `value` a VARIANT.
//! `variant_explode` gives no rows for SQL NULL, scalars and empty containers;
//! `variant_explode_outer` gives one row of NULLs for them.

use std::sync::{Arc, LazyLock};

use arrow::array::{
    Array, ArrayRef, Int32Builder, ListArray, RecordBatch, StringBuilder, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, exec_datafusion_err, plan_err};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{ColumnarValue, Documentation, ScalarFunctionArgs};

use super::common::{
    Arrays, constant_argument, guard, struct_list_element, unary_doc, unary_variant_udf,
    variant_input,
};
use crate::array::{VariantColumnBuilder, variant_field};
use crate::variant::raw::children;
use crate::variant::validate::{check_metadata, check_value_with};

/// The fields `pos`, `key`, `value` of one exploded row.
pub fn explode_fields() -> Fields {
    Fields::from(vec![
        Arc::new(Field::new("pos", DataType::Int32, true)),
        Arc::new(Field::new("key", DataType::Utf8, true)),
        variant_field("value", true),
    ])
}

fn element_field() -> FieldRef {
    struct_list_element(explode_fields())
}

/// `List<Struct<pos, key, value>>`.
pub fn explode_type() -> DataType {
    DataType::List(element_field())
}

/// Explodes every row of a Variant column into a list of `(pos, key, value)`.
///
/// # Errors
/// When a row's bytes are malformed (naming `func` and the problem).
pub fn explode_column(func: &str, column: &ArrayRef, outer: bool) -> Result<ListArray> {
    guard(func, || {
        let input = variant_input(func, column)?;
        let rows = column.len();
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0i32);
        let mut pos = Int32Builder::new();
        let mut key = StringBuilder::new();
        let mut value = VariantColumnBuilder::new(rows);
        let mut count = 0i32;
        for row in 0..rows {
            let bytes = input.as_ref().and_then(|i| i.get(row));
            let mut produced = 0i32;
            if let Some((m, v)) = bytes {
                let bad = |e: &dyn std::fmt::Display| {
                    exec_datafusion_err!("{func}: [MALFORMED_VARIANT] {e}")
                };
                let dict = check_metadata(m).map_err(|e| bad(&e))?;
                check_value_with(v, &dict).map_err(|e| bad(&e))?;
                if let Some(items) = children(&dict, v).map_err(|e| bad(&e))? {
                    // Every element shares the row's metadata, stored once.
                    let shared = value.share_metadata(m);
                    for (i, (name, child)) in items.into_iter().enumerate() {
                        pos.append_value(i as i32);
                        key.append_option(name);
                        value.append_shared(shared, m, child);
                        produced += 1;
                    }
                }
            }
            if produced == 0 && outer {
                pos.append_null();
                key.append_null();
                value.append_null();
                produced = 1;
            }
            count = count.checked_add(produced).ok_or_else(|| {
                exec_datafusion_err!("{func}: more than 2^31 exploded rows in one batch")
            })?;
            offsets.push(count);
        }
        let values = StructArray::try_new(
            explode_fields(),
            vec![
                Arc::new(pos.finish()),
                Arc::new(key.finish()),
                value.finish(),
            ],
            None,
        )?;
        Ok(ListArray::try_new(
            element_field(),
            OffsetBuffer::new(offsets.into()),
            Arc::new(values),
            None::<NullBuffer>,
        )?)
    })
}

unary_variant_udf!(
    /// `variant_explode(v)` as a scalar function: a list of `(pos, key, value)`
    /// structs, to expand with `unnest`.
    VariantExplodeFunc,
    "variant_explode",
    returns = explode_type(),
    nullable = false,
    param = Some("input")
);

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    unary_doc(
        "The elements of a VARIANT array or fields of a VARIANT object as a list of struct<pos INT, key STRING, value VARIANT> (empty for other values and SQL NULL); expand with unnest. In FROM, variant_explode(<constant>) is a table function with the columns pos, key, value.",
        "variant_explode(v)",
        "> SELECT e['key'], e['pos'] FROM (SELECT unnest(variant_explode(parse_json('{\"a\": 1, \"b\": 2}'))) AS e);\na 0\nb 1",
    )
});

impl VariantExplodeFunc {
    fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = Arrays::new(&args.args, args.number_rows)?;
        let list = explode_column("variant_explode", &arrays.arrays[0], false)?;
        arrays.finish(Arc::new(list))
    }
}

pub use outer::VariantExplodeOuterFunc;

mod outer {
    use super::{
        Arc, Arrays, ColumnarValue, Documentation, LazyLock, Result, ScalarFunctionArgs,
        explode_column, explode_type, unary_doc, unary_variant_udf,
    };

    unary_variant_udf!(
        /// `variant_explode_outer(v)` as a scalar function: like `variant_explode`,
        /// with one all-NULL struct for SQL NULL, scalars and empty containers.
        VariantExplodeOuterFunc,
        "variant_explode_outer",
        returns = explode_type(),
        nullable = false,
        param = Some("input")
    );

    static DOC: LazyLock<Documentation> = LazyLock::new(|| {
        unary_doc(
            "Like variant_explode, but SQL NULL, scalars and empty arrays/objects give one struct of NULLs instead of none.",
            "variant_explode_outer(v)",
            "> SELECT e['pos'] FROM (SELECT unnest(variant_explode_outer(parse_json('1'))) AS e);\nNULL",
        )
    });

    impl VariantExplodeOuterFunc {
        fn invoke(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
            let arrays = Arrays::new(&args.args, args.number_rows)?;
            let list = explode_column("variant_explode_outer", &arrays.arrays[0], true)?;
            arrays.finish(Arc::new(list))
        }
    }
}

/// The table functions `variant_explode(<constant>)` and
/// `variant_explode_outer(<constant>)`.
#[derive(Debug, Clone, Copy)]
pub struct VariantExplodeTable {
    outer: bool,
}

impl VariantExplodeTable {
    /// `variant_explode` (`outer = false`) or `variant_explode_outer`.
    pub fn new(outer: bool) -> Self {
        Self { outer }
    }

    /// The SQL name.
    pub fn name(&self) -> &'static str {
        if self.outer {
            "variant_explode_outer"
        } else {
            "variant_explode"
        }
    }
}

impl TableFunctionImpl for VariantExplodeTable {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let name = self.name();
        let [arg] = args.exprs() else {
            return plan_err!(
                "{name} takes exactly one VARIANT argument, got {}",
                args.exprs().len()
            );
        };
        if !arg.column_refs().is_empty() {
            return plan_err!(
                "{name} in FROM takes a constant; for rows of a table write FROM t, LATERAL {name}(t.v)"
            );
        }
        let value = constant_argument(args.session(), arg)?;
        if !crate::array::is_variant_type(value.data_type()) && value.data_type() != &DataType::Null
        {
            return plan_err!("{name} expects a VARIANT, got {}", value.data_type());
        }
        let list = explode_column(name, &value, self.outer)?;
        let rows = list
            .values()
            .as_any()
            .downcast_ref::<StructArray>()
            .cloned();
        let rows = rows.ok_or_else(|| exec_datafusion_err!("{name}: unexpected list values"))?;
        let schema = Arc::new(Schema::new(explode_fields()));
        let batch = RecordBatch::try_new(Arc::clone(&schema), rows.columns().to_vec())?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}
