//! Spark's `element_at(array, index)` / `element_at(map, key)` and
//! `try_element_at`, for Spark mode: DataFusion's `element_at` is an alias of
//! `map_extract`, which takes only maps and answers a one-element list.
//!
//! Spark 4.3's answers (pyspark 4.3.0, ANSI on as by default): an array index
//! counts from 1, a negative one from the end; index 0 is
//! `INVALID_INDEX_OF_ZERO` (also for `try_element_at`); an index past either end
//! is `INVALID_ARRAY_INDEX_IN_ELEMENT_AT` (`try_element_at`: NULL). A map key
//! that is missing, or NULL, gives NULL. The index must be an integer
//! (DataFusion's integer literals are BIGINT, which Spark calls `1L` and
//! refuses; any integer type is taken here).
//!
//! ```text
//! element_at(array(1, 2, 3), -1)                             => 3
//! element_at(variant_get(v, '$.a', 'array<int>'), 2)         => the second element
//! element_at(map('a', 1, 'b', 2), 'b')                       => 2
//! ```

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, GenericListArray, OffsetSizeTrait, UInt64Array, make_comparator,
};
use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// Which of Spark's element accessors a [`SparkElementAt`] is.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
pub enum Access {
    /// `element_at`: from 1, negative from the end, errors past either end.
    ElementAt,
    /// `try_element_at`: as `element_at`, NULL past either end.
    TryElementAt,
    /// `get(array, index)`: from 0, NULL outside the array.
    Get,
    /// `array[index]` in Spark SQL: from 0, `INVALID_ARRAY_INDEX` outside.
    Subscript,
}

/// `element_at`, `try_element_at`, `get` or the subscript of Spark SQL.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SparkElementAt {
    signature: Signature,
    access: Access,
}

impl SparkElementAt {
    /// The accessor `access`.
    pub fn new(access: Access) -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
            access,
        }
    }

    /// Whether the name takes maps too (`element_at`, `try_element_at`).
    fn takes_maps(&self) -> bool {
        matches!(self.access, Access::ElementAt | Access::TryElementAt)
    }
}

/// Spark's words for the type of an argument.
fn type_error(func: &str, pos: &str, required: &str, found: &DataType) -> DataFusionError {
    DataFusionError::Plan(format!(
        "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] {func}: the {pos} parameter requires the {required} type, however it has the type \"{}\"",
        crate::array::from_arrow::sql_type_name(found)
    ))
}

impl ScalarUDFImpl for SparkElementAt {
    fn name(&self) -> &'static str {
        match self.access {
            Access::ElementAt => "element_at",
            Access::TryElementAt => "try_element_at",
            Access::Get => "get",
            Access::Subscript => "spark_array_subscript",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let [container, key] = arg_types else {
            return plan_err!(
                "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `{}` requires 2 parameters but the actual number is {}.",
                self.name(),
                arg_types.len()
            );
        };
        match container {
            DataType::Map(entries, _) => {
                let DataType::Struct(fields) = entries.data_type() else {
                    return plan_err!("{}: a map without key and value fields", self.name());
                };
                // The key is compared as the map's key type.
                Ok(vec![container.clone(), fields[0].data_type().clone()])
            }
            _ => Ok(vec![container.clone(), key.clone()]),
        }
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        plan_err!("{}: return_field_from_args is used", self.name())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let func = self.name();
        let [container, key] = args.arg_fields else {
            return plan_err!("{func} requires 2 parameters");
        };
        let value = match container.data_type() {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                // Spark's subscript and `get` take a NULL index (NULL);
                // `element_at` refuses it as VOID.
                let null_ok = !self.takes_maps() && key.data_type() == &DataType::Null;
                if !key.data_type().is_integer() && !null_ok {
                    return Err(type_error(func, "second", "\"INT\"", key.data_type()));
                }
                f.data_type().clone()
            }
            DataType::Map(entries, _) if self.takes_maps() => match entries.data_type() {
                DataType::Struct(fields) if fields.len() == 2 => fields[1].data_type().clone(),
                other => return plan_err!("{func}: unexpected map entries {other}"),
            },
            DataType::Null => DataType::Null,
            other if self.takes_maps() => {
                return Err(type_error(func, "first", "(\"ARRAY\" or \"MAP\")", other));
            }
            other => return Err(type_error(func, "first", "\"ARRAY\"", other)),
        };
        Ok(Arc::new(Field::new(func, value, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [container, key] = arrays.as_slice() else {
            return exec_err!("{} requires 2 parameters", self.name());
        };
        let result = match container.data_type() {
            DataType::List(_) => self.list_element(container.as_list::<i32>(), key)?,
            DataType::LargeList(_) => self.list_element(container.as_list::<i64>(), key)?,
            DataType::FixedSizeList(..) => {
                let list = arrow::compute::cast(
                    container,
                    &DataType::List(Arc::new(Field::new_list_field(
                        container.as_fixed_size_list().value_type(),
                        true,
                    ))),
                )?;
                self.list_element(list.as_list::<i32>(), key)?
            }
            DataType::Map(..) => map_value(container, key)?,
            _ => arrow::array::new_null_array(args.return_field.data_type(), container.len()),
        };
        Ok(if scalar {
            ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&result, 0)?)
        } else {
            ColumnarValue::Array(result)
        })
    }
}

impl SparkElementAt {
    /// The element of each row's array at its index.
    fn list_element<O: OffsetSizeTrait>(
        &self,
        lists: &GenericListArray<O>,
        index: &ArrayRef,
    ) -> Result<ArrayRef> {
        let index = arrow::compute::cast(index, &DataType::Int64)?;
        let index = index.as_primitive::<arrow::datatypes::Int64Type>();
        let offsets = lists.value_offsets();
        let mut take = Vec::with_capacity(lists.len());
        for row in 0..lists.len() {
            if lists.is_null(row) || index.is_null(row) {
                take.push(None);
                continue;
            }
            let i = index.value(row);
            let start = offsets[row].as_usize();
            let len = (offsets[row + 1].as_usize() - start) as i64;
            let from_one = matches!(self.access, Access::ElementAt | Access::TryElementAt);
            if from_one && i == 0 {
                return exec_err!(
                    "[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1)."
                );
            }
            let position = match (from_one, i > 0) {
                (true, true) => i - 1,
                (true, false) => len + i,
                (false, _) => i,
            };
            if !(0..len).contains(&position) {
                match self.access {
                    Access::TryElementAt | Access::Get => {
                        take.push(None);
                        continue;
                    }
                    Access::ElementAt => {
                        return exec_err!(
                            "[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] The index {i} is out of bounds. The array has {len} elements. Use `try_element_at` to tolerate accessing element at invalid index and return NULL instead."
                        );
                    }
                    Access::Subscript => {
                        return exec_err!(
                            "[INVALID_ARRAY_INDEX] The index {i} is out of bounds. The array has {len} elements. Use the SQL function `get()` to tolerate accessing element at invalid index and return NULL instead."
                        );
                    }
                }
            }
            take.push(Some((start as u64) + position as u64));
        }
        Ok(arrow::compute::take(
            lists.values().as_ref(),
            &UInt64Array::from(take),
            None,
        )?)
    }
}

/// The value of each row's map at its key (NULL when missing).
fn map_value(maps: &ArrayRef, keys: &ArrayRef) -> Result<ArrayRef> {
    let maps = maps.as_map();
    let compare = make_comparator(maps.keys().as_ref(), keys.as_ref(), SortOptions::default())?;
    let offsets = maps.value_offsets();
    let mut take = Vec::with_capacity(maps.len());
    for row in 0..maps.len() {
        if maps.is_null(row) || keys.is_null(row) {
            take.push(None);
            continue;
        }
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        take.push(
            (start..end)
                .find(|&e| compare(e, row).is_eq())
                .map(|e| e as u64),
        );
    }
    Ok(arrow::compute::take(
        maps.values().as_ref(),
        &UInt64Array::from(take),
        None,
    )?)
}

/// DataFusion's `map_extract` without its `element_at` alias, for Spark mode: a
/// session holds each function under its name and its aliases, and one rebuilt
/// from another (`SessionStateBuilder::new_from_existing`) registers them again
/// in no fixed order, so that `element_at` was Spark's or `map_extract` by chance.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct MapExtractOnly(datafusion::logical_expr::ScalarUDF);

impl MapExtractOnly {
    /// DataFusion's `map_extract`.
    pub fn new() -> Self {
        Self(
            datafusion::functions_nested::map_extract::map_extract_udf()
                .as_ref()
                .clone(),
        )
    }
}

impl ScalarUDFImpl for MapExtractOnly {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn signature(&self) -> &Signature {
        self.0.signature()
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.0.coerce_types(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.0.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.0.return_field_from_args(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.0.invoke_with_args(args)
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        self.0.documentation()
    }
}

/// Plans `array[index]` on an ARRAY as Spark SQL does, from 0 with an error
/// outside the array ([`Access::Subscript`]); DataFusion's subscript counts
/// from 1, so `array(10, 20, 30)[0]` was NULL and `[2]` 20 where Spark says 10
/// and 30. Maps and VARIANT values keep their own subscripts.
#[derive(Debug, Default)]
pub struct SparkSubscriptPlanner;

impl datafusion::logical_expr::planner::ExprPlanner for SparkSubscriptPlanner {
    fn plan_field_access(
        &self,
        expr: datafusion::logical_expr::planner::RawFieldAccessExpr,
        schema: &datafusion::common::DFSchema,
    ) -> Result<
        datafusion::logical_expr::planner::PlannerResult<
            datafusion::logical_expr::planner::RawFieldAccessExpr,
        >,
    > {
        use datafusion::logical_expr::planner::PlannerResult;
        use datafusion::logical_expr::{ExprSchemable, GetFieldAccess, ScalarUDF};
        let is_array = matches!(
            expr.expr.get_type(schema),
            Ok(DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..))
        );
        match expr.field_access {
            GetFieldAccess::ListIndex { key } if is_array => {
                let udf = ScalarUDF::new_from_impl(SparkElementAt::new(Access::Subscript));
                Ok(PlannerResult::Planned(udf.call(vec![expr.expr, *key])))
            }
            field_access => Ok(PlannerResult::Original(
                datafusion::logical_expr::planner::RawFieldAccessExpr {
                    field_access,
                    expr: expr.expr,
                },
            )),
        }
    }
}
