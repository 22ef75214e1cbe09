//! `schema_of_variant_agg(v) -> string`: the merged Spark type of all values.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{
    Accumulator, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use crate::udf::common::{check_variant_arg, for_each_variant_shape};
use crate::variant::schema::{VariantSchema, merge, schema_of};

/// `schema_of_variant_agg(v)`: merges the schema of every non-NULL value with
/// Spark's widening rules; `VOID` over no rows or only NULLs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SchemaOfVariantAgg {
    signature: Signature,
}

impl SchemaOfVariantAgg {
    /// Creates the aggregate.
    pub fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl Default for SchemaOfVariantAgg {
    fn default() -> Self {
        Self::new()
    }
}

static DOC: LazyLock<Documentation> = LazyLock::new(|| {
    Documentation::builder(
        crate::udf::DOC_SECTION,
        "Returns the merged Spark SQL type of all VARIANT values in the group, widening numbers (BIGINT with DECIMAL to DECIMAL, anything with DOUBLE to DOUBLE), merging objects field by field, and VARIANT for incompatible types. VOID when there are no non-NULL values.",
        "schema_of_variant_agg(v)",
    )
    .with_sql_example("> SELECT schema_of_variant_agg(parse_json(j)) FROM (VALUES ('{\"a\":1}'), ('{\"b\":\"x\"}')) t(j);\nOBJECT<a: BIGINT, b: STRING>")
    .with_argument("v", "A VARIANT.")
    .build()
});

impl AggregateUDFImpl for SchemaOfVariantAgg {
    fn name(&self) -> &'static str {
        "schema_of_variant_agg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let [arg] = arg_fields else {
            return plan_err!("{} takes exactly one argument", self.name());
        };
        check_variant_arg(self.name(), 0, arg)?;
        Ok(Arc::new(Field::new(self.name(), DataType::Utf8, true)))
    }

    fn accumulator(&self, _acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::new(SchemaOfVariantAccumulator::default()))
    }

    fn documentation(&self) -> Option<&Documentation> {
        Some(&DOC)
    }
}

/// The running merged schema; `None` until a non-NULL value is seen.
#[derive(Debug, Default)]
struct SchemaOfVariantAccumulator {
    schema: Option<VariantSchema>,
}

impl SchemaOfVariantAccumulator {
    fn add(&mut self, s: VariantSchema) {
        self.schema = Some(match self.schema.take() {
            None => s,
            Some(prev) => merge(prev, s),
        });
    }
}

impl Accumulator for SchemaOfVariantAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        for_each_variant_shape("schema_of_variant_agg", &values[0], |_, v| {
            if let Some(v) = v {
                self.add(schema_of(v));
            }
            Ok(())
        })
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let s = self.schema.clone().unwrap_or(VariantSchema::Void);
        Ok(ScalarValue::Utf8(Some(s.to_string())))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.schema.as_ref().map_or(0, |s| s.to_string().len())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![ScalarValue::Utf8(
            self.schema.as_ref().map(std::string::ToString::to_string),
        )])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let states = arrow::compute::cast(&states[0], &DataType::Utf8)?;
        for text in states.as_string::<i32>().iter().flatten() {
            match parse_schema(text) {
                Some(s) => self.add(s),
                None => {
                    return exec_err!("schema_of_variant_agg: cannot read partial state {text:?}");
                }
            }
        }
        Ok(())
    }
}

/// Parses the text that `VariantSchema`'s `Display` writes (the partial state).
fn parse_schema(text: &str) -> Option<VariantSchema> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let s = p.schema()?;
    (p.i == p.s.len()).then_some(s)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn eat(&mut self, t: &str) -> bool {
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    fn number(&mut self) -> Option<u8> {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .parse()
            .ok()
    }

    fn key(&mut self) -> Option<String> {
        if self.eat("`") {
            let mut out = Vec::new();
            loop {
                let c = *self.s.get(self.i)?;
                self.i += 1;
                if c == b'`' {
                    if self.s.get(self.i) == Some(&b'`') {
                        self.i += 1;
                        out.push(b'`');
                    } else {
                        break;
                    }
                } else {
                    out.push(c);
                }
            }
            String::from_utf8(out).ok()
        } else {
            let start = self.i;
            while self.i < self.s.len() && self.s[self.i] != b':' {
                self.i += 1;
            }
            String::from_utf8(self.s[start..self.i].to_vec()).ok()
        }
    }

    fn schema(&mut self) -> Option<VariantSchema> {
        use VariantSchema as S;
        // Longer names first where one is a prefix of another.
        for (name, s) in [
            ("VOID", S::Void),
            ("BIGINT", S::Bigint),
            ("DOUBLE", S::Double),
            ("FLOAT", S::Float),
            ("BOOLEAN", S::Boolean),
            ("STRING", S::String),
            ("DATE", S::Date),
            ("TIMESTAMP_NTZ", S::TimestampNtz),
            ("TIMESTAMP", S::Timestamp),
            ("BINARY", S::Binary),
            ("TIME", S::Time),
            ("UUID", S::Uuid),
            ("VARIANT", S::Variant),
        ] {
            if self.eat(name) {
                return Some(s);
            }
        }
        if self.eat("DECIMAL(") {
            let precision = self.number()?;
            if !self.eat(",") {
                return None;
            }
            let scale = self.number()?;
            return self.eat(")").then_some(S::Decimal { precision, scale });
        }
        if self.eat("ARRAY<") {
            let inner = self.schema()?;
            return self.eat(">").then(|| S::Array(Box::new(inner)));
        }
        if self.eat("OBJECT<") {
            let mut fields = BTreeMap::new();
            if self.eat(">") {
                return Some(S::Object(fields));
            }
            loop {
                let k = self.key()?;
                if !self.eat(": ") && !self.eat(":") {
                    return None;
                }
                let v = self.schema()?;
                fields.insert(k, v);
                if self.eat(">") {
                    return Some(S::Object(fields));
                }
                if !self.eat(", ") && !self.eat(",") {
                    return None;
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_text_round_trips() {
        use VariantSchema as S;
        let mut fields = BTreeMap::new();
        fields.insert(
            "a".to_string(),
            S::Array(Box::new(S::Decimal {
                precision: 21,
                scale: 1,
            })),
        );
        fields.insert("weird key`x".to_string(), S::Variant);
        fields.insert("é".to_string(), S::TimestampNtz);
        fields.insert(String::new(), S::Object(BTreeMap::new()));
        let s = S::Object(fields);
        assert_eq!(parse_schema(&s.to_string()), Some(s));
        assert_eq!(
            parse_schema("ARRAY<VOID>"),
            Some(S::Array(Box::new(S::Void)))
        );
        assert_eq!(parse_schema("BIGINT junk"), None);
    }
}
