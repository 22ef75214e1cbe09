//! `s = 'literal'` in a filter, compared by the strings' views.
//!
//! A shredded string leaf (`v:kind::string`) is usually dictionary-encoded in
//! Parquet, and parquet-rs decodes such a page into a `StringViewArray` whose
//! equal strings have equal 16-byte views (the same length, prefix, buffer and
//! offset). Arrow's `=` compares every row's bytes once length and prefix
//! agree, and JSONBench's values share their prefix (`app.bsky.feed.post`,
//! `app.bsky.feed.like`, ...), so each row costs a `memcmp`. [`ViewEqExpr`]
//! answers a view it has seen before from a small table of the batch's recent
//! views instead: a `u128` compare per row, a `memcmp` per distinct view.
//!
//! ```text
//! before: FilterExec: __datafusion_extracted_3@0 = commit AND __datafusion_extracted_5@2 = app.bsky.feed.post
//!           VariantScanExec: extractions=[v: $.kind AS STRING, ..., v: $.commit.collection AS STRING]
//! after:  FilterExec: __datafusion_extracted_3@0 =view commit AND __datafusion_extracted_5@2 =view app.bsky.feed.post
//!           VariantScanExec: extractions=[v: $.kind AS STRING, ..., v: $.commit.collection AS STRING]
//! ```
//!
//! The rule [`StringViewFilter`] rewrites `=` and `!=` (either operand order)
//! between a `Utf8View` expression and a non-null string literal inside a
//! `FilterExec`'s predicate, and nothing else: other operators, other types, a
//! NULL literal and expressions outside filters are left to DataFusion. It runs
//! after [`super::VariantGetPushdown`], which reads the filter's `=` for
//! pruning. The answers are DataFusion's, NULL rows included.
//!
//! Through `df_variant::codec` (and so datafusion-distributed) the expression
//! travels as DataFusion's own `=`: a worker answers the same, by bytes.
//! `variant.string_view_filter = false` turns the rule off.

use std::any::Any;
use std::fmt::{self, Display, Formatter};
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::builder::make_view;
use datafusion::arrow::array::{Array, AsArray, BooleanArray, StringViewArray};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, ScalarValue, internal_err};
use datafusion::logical_expr::{ColumnarValue, Operator};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{BinaryExpr, Literal};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};

use crate::config::VariantOptions;

/// The physical optimizer rule described in the module docs.
#[derive(Debug, Default)]
pub struct StringViewFilter;

impl PhysicalOptimizerRule for StringViewFilter {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !VariantOptions::enabled(config, |o| o.string_view_filter) {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let Some(filter) = (node.as_ref() as &dyn Any).downcast_ref::<FilterExec>() else {
                return Ok(Transformed::no(node));
            };
            let schema = filter.input().schema();
            let predicate = Arc::clone(filter.predicate()).transform_up(|e| {
                Ok(match ViewEqExpr::replacing(&e, &schema) {
                    Some(view_eq) => Transformed::yes(Arc::new(view_eq) as Arc<dyn PhysicalExpr>),
                    None => Transformed::no(e),
                })
            })?;
            if !predicate.transformed {
                return Ok(Transformed::no(node));
            }
            let rebuilt = FilterExecBuilder::from(filter)
                .with_predicate(predicate.data)
                .build()?;
            Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &'static str {
        "StringViewFilter"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `input = literal` (or `!=` when `negated`) over a `Utf8View` input, by
/// views (see the module docs).
#[derive(Debug, Eq)]
pub struct ViewEqExpr {
    input: Arc<dyn PhysicalExpr>,
    literal: String,
    negated: bool,
}

impl PartialEq for ViewEqExpr {
    fn eq(&self, other: &Self) -> bool {
        self.input.as_ref() == other.input.as_ref()
            && self.literal == other.literal
            && self.negated == other.negated
    }
}

impl Hash for ViewEqExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.input.as_ref().hash(state);
        self.literal.hash(state);
        self.negated.hash(state);
    }
}

impl ViewEqExpr {
    /// The expression that replaces `expr`, when the rule applies to it.
    fn replacing(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<Self> {
        let binary = expr.downcast_ref::<BinaryExpr>()?;
        let negated = match binary.op() {
            Operator::Eq => false,
            Operator::NotEq => true,
            _ => return None,
        };
        let literal_of = |e: &Arc<dyn PhysicalExpr>| match e.downcast_ref::<Literal>()?.value() {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)) => Some(s.clone()),
            _ => None,
        };
        let (input, literal) = match (literal_of(binary.left()), literal_of(binary.right())) {
            (None, Some(l)) => (binary.left(), l),
            (Some(l), None) => (binary.right(), l),
            _ => return None,
        };
        if input.data_type(schema).ok()? != DataType::Utf8View {
            return None;
        }
        Some(Self {
            input: Arc::clone(input),
            literal,
            negated,
        })
    }

    /// The same comparison as DataFusion's `=` / `!=`, for the codec.
    fn as_binary(&self) -> BinaryExpr {
        let op = if self.negated {
            Operator::NotEq
        } else {
            Operator::Eq
        };
        let literal = Literal::new(ScalarValue::Utf8View(Some(self.literal.clone())));
        BinaryExpr::new(Arc::clone(&self.input), op, Arc::new(literal))
    }
}

impl Display for ViewEqExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let op = if self.negated { "!=view" } else { "=view" };
        write!(f, "{} {op} {}", self.input, self.literal)
    }
}

impl PhysicalExpr for ViewEqExpr {
    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, input_schema: &Schema) -> Result<bool> {
        self.input.nullable(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let answer = |s: &str| (s == self.literal) != self.negated;
        match self.input.evaluate(batch)? {
            ColumnarValue::Array(array) => {
                let Some(strings) = array.as_string_view_opt() else {
                    return internal_err!(
                        "ViewEqExpr over {}, not Utf8View: {}",
                        array.data_type(),
                        self.input
                    );
                };
                let equal = view_eq(strings, &self.literal);
                let values = if self.negated { !&equal } else { equal };
                let answer = BooleanArray::new(values, strings.nulls().cloned());
                Ok(ColumnarValue::Array(Arc::new(answer)))
            }
            ColumnarValue::Scalar(
                ScalarValue::Utf8View(s) | ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s),
            ) => Ok(ColumnarValue::Scalar(ScalarValue::Boolean(
                s.as_deref().map(answer),
            ))),
            ColumnarValue::Scalar(s) => {
                internal_err!("ViewEqExpr over a {} scalar", s.data_type())
            }
        }
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [input] = <[_; 1]>::try_from(children).map_err(|c| {
            datafusion::common::internal_datafusion_err!(
                "ViewEqExpr takes one child, got {}",
                c.len()
            )
        })?;
        Ok(Arc::new(Self {
            input,
            literal: self.literal.clone(),
            negated: self.negated,
        }))
    }

    fn fmt_sql(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.as_binary().fmt_sql(f)
    }

    #[cfg(feature = "proto")]
    fn try_to_proto(
        &self,
        ctx: &datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx<
            '_,
        >,
    ) -> Result<Option<datafusion_proto::protobuf::PhysicalExprNode>> {
        let binary: Arc<dyn PhysicalExpr> = Arc::new(self.as_binary());
        ctx.encode_child(&binary).map(Some)
    }
}

/// Recent long views kept by [`view_eq`] with their answers, slotted by the
/// view's buffer and offset bits.
const SLOTS: usize = 16;

/// Where each row of `strings` equals `literal` (the values only: NULL rows
/// are `false` here, their validity is the caller's).
///
/// Strings of up to 12 bytes live in their view, so one `u128` compare
/// decides. A longer literal first needs the view's length and 4-byte prefix
/// (the view's low 64 bits) to agree; then a view (buffer and offset) seen
/// among the last few gives its answer again, and only a new one compares
/// bytes.
pub(crate) fn view_eq(strings: &StringViewArray, literal: &str) -> BooleanBuffer {
    let views = strings.views();
    let target = make_view(literal.as_bytes(), 0, 0);
    if literal.len() <= 12 {
        return BooleanBuffer::collect_bool(views.len(), |i| views[i] == target);
    }
    let head = target as u64;
    let mut seen = [(0u128, false); SLOTS];
    BooleanBuffer::collect_bool(views.len(), |i| {
        let view = views[i];
        if view as u64 != head {
            return false;
        }
        let slot = ((view >> 96) as usize ^ (view >> 64) as usize) % SLOTS;
        // A long view is never 0 (its length is past 12), so the empty slots
        // match nothing.
        if seen[slot].0 == view {
            return seen[slot].1;
        }
        let equal = strings.value(i) == literal;
        seen[slot] = (view, equal);
        equal
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::StringViewBuilder;
    use datafusion::arrow::compute::kernels::cmp;

    /// Strings whose equal long values share one buffer position, as a
    /// dictionary page decodes, and others copied apart.
    fn column() -> StringViewArray {
        let mut b = StringViewBuilder::new().with_deduplicate_strings();
        for s in [
            Some("app.bsky.feed.post"),
            Some("app.bsky.feed.like"),
            None,
            Some("app.bsky.feed.post"),
            Some("commit"),
            Some("app.bsky.feed.posts"),
            Some(""),
            Some("app.bsky.feed.like"),
            Some("app.bsky.feed.pose"),
        ] {
            b.append_option(s);
        }
        let mut plain = StringViewBuilder::new();
        for s in [
            "app.bsky.feed.post",
            "commit",
            "commit!",
            "app.bsky.feed.like",
        ] {
            plain.append_value(s);
        }
        let a = b.finish();
        let p = plain.finish();
        let joined = datafusion::arrow::compute::concat(&[&a, &p, &a]).unwrap();
        joined.as_string_view().clone()
    }

    #[test]
    fn answers_as_arrow_does() {
        let strings = column();
        for literal in [
            "app.bsky.feed.post",
            "app.bsky.feed.like",
            "commit",
            "commit!",
            "",
            "app.bsky.feed.posts",
            "app.bsky.feed.pos",
            "absent and long enough",
        ] {
            let ours = BooleanArray::new(view_eq(&strings, literal), strings.nulls().cloned());
            let scalar = StringViewArray::new_scalar(literal);
            let arrow = cmp::eq(&strings, &scalar).unwrap();
            assert_eq!(ours, arrow, "{literal}");
        }
    }

    #[test]
    fn the_rule_fires_on_string_view_equality_only() {
        use datafusion::physical_expr::expressions::col;
        let schema = Schema::new(vec![
            datafusion::arrow::datatypes::Field::new("s", DataType::Utf8View, true),
            datafusion::arrow::datatypes::Field::new("u", DataType::Utf8, true),
        ]);
        let lit = |v: ScalarValue| Arc::new(Literal::new(v)) as Arc<dyn PhysicalExpr>;
        let s = col("s", &schema).unwrap();
        let u = col("u", &schema).unwrap();
        let text = || lit(ScalarValue::Utf8(Some("x".into())));
        let binary = |l, op, r| Arc::new(BinaryExpr::new(l, op, r)) as Arc<dyn PhysicalExpr>;
        let fires = |e: Arc<dyn PhysicalExpr>| ViewEqExpr::replacing(&e, &schema).is_some();
        assert!(fires(binary(Arc::clone(&s), Operator::Eq, text())));
        assert!(fires(binary(text(), Operator::NotEq, Arc::clone(&s))));
        assert!(!fires(binary(Arc::clone(&s), Operator::Lt, text())));
        assert!(!fires(binary(Arc::clone(&u), Operator::Eq, text())));
        assert!(!fires(binary(
            Arc::clone(&s),
            Operator::Eq,
            lit(ScalarValue::Utf8(None))
        )));
        assert!(!fires(binary(Arc::clone(&s), Operator::Eq, Arc::clone(&s))));
    }
}
