//! The SQL dialect of df-variant: DataFusion's generic dialect, except that
//! the path operator `:` binds as tightly as `::`, as in Spark and Databricks.
//!
//! sqlparser's generic dialect gives `:` a precedence below `+` and `*`, so
//! `1 + v:a::int` parses as `CAST((1 + v):a AS int)` and fails (or, worse,
//! `10 - v:a::int * 2` would compute `(10 - a) * 2`). [`VariantDialect`] parses
//! it as `1 + CAST(v:a AS int)`. [`crate::sql()`] and the CLI parse with it
//! when the session's dialect is the default `generic`. `SessionContext::sql`
//! cannot take a custom dialect: there, a `:` applied to an arithmetic
//! expression is a plan error that says to add parentheses (see
//! `path_syntax`).
//!
//! ```
//! use datafusion::sql::sqlparser::parser::Parser;
//! use df_variant::sql::VariantDialect;
//! let ast = Parser::parse_sql(&VariantDialect::default(), "SELECT 1 + v:a::int").unwrap();
//! assert_eq!(ast[0].to_string(), "SELECT 1 + v:a::INT");
//! ```

use std::any::TypeId;

use datafusion::sql::sqlparser::ast::{
    CastKind, DataType as SqlDataType, ExactNumberInfo, Expr, Ident, ObjectName, Value,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect, Precedence};
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Token;

/// [`GenericDialect`] with `:` at the precedence of `::` (see the module docs).
#[derive(Debug, Default)]
pub struct VariantDialect(GenericDialect);

/// Delegates to the generic dialect every method it overrides (the others keep
/// the trait's defaults, as the generic dialect does).
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name(&self, $($arg: $ty),*) -> bool {
                self.0.$name($($arg),*)
            }
        )*
    };
}

impl Dialect for VariantDialect {
    /// The generic dialect's type, so that the parser's `dialect_of!(... is
    /// GenericDialect)` checks treat this one as generic.
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if numeric_suffix(parser).is_some() {
            return Some(Ok(self.prec_value(Precedence::DoubleColon)));
        }
        if parser.peek_token_ref().token != Token::Colon {
            return None;
        }
        // A `:` before a string or a number is map syntax; leave it as it is.
        match parser.peek_nth_token_ref(1).token {
            Token::SingleQuotedString(_) | Token::Number(_, _) => None,
            _ => Some(Ok(self.prec_value(Precedence::DoubleColon))),
        }
    }

    /// Spark's `TIMESTAMP_LTZ '...'` literal (sqlparser reads `TIMESTAMP_NTZ
    /// '...'` only): `CAST('...' AS TIMESTAMP_LTZ)`, Spark mode's TIMESTAMP.
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let Token::Word(word) = &parser.peek_token_ref().token else {
            return None;
        };
        if word.quote_style.is_some() || !word.value.eq_ignore_ascii_case("timestamp_ltz") {
            return None;
        }
        if !matches!(
            parser.peek_nth_token_ref(1).token,
            Token::SingleQuotedString(_)
        ) {
            return None;
        }
        let name = Ident::new(word.value.clone());
        parser.next_token();
        Some(parser.parse_value().map(|value| Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(Expr::Value(value)),
            data_type: SqlDataType::Custom(ObjectName::from(vec![name]), vec![]),
            array: false,
            format: None,
        }))
    }

    /// Spark's typed numeric literals: `1.5D` is `CAST(1.5 AS DOUBLE)` (see
    /// `numeric_suffix`); and Spark's error for `v:*`.
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if parser.peek_token_ref().token == Token::Colon
            && parser.peek_nth_token_ref(1).token == Token::Mul
        {
            // `v:*`: Spark's words (sqlparser: "Expected: variant object key
            // name, found: *").
            return Some(Err(ParserError::ParserError(
                "[PARSE_SYNTAX_ERROR] Syntax error at or near '*'. SQLSTATE: 42601 \
                 (a `:` path names keys; `v:a[*]` is every element of an array)"
                    .into(),
            )));
        }
        let data_type = numeric_suffix(parser)?;
        let Expr::Value(value) = expr else {
            return None;
        };
        let Value::Number(digits, false) = &value.value else {
            return None;
        };
        let data_type = match data_type {
            // Spark's `1.5BD`: the literal's own precision and scale.
            SqlDataType::Decimal(_) => {
                let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
                let significant = int.trim_start_matches('0').len() + frac.len();
                SqlDataType::Decimal(ExactNumberInfo::PrecisionAndScale(
                    significant.max(frac.len()).max(1) as u64,
                    frac.len() as i64,
                ))
            }
            other => other,
        };
        parser.next_token_no_skip();
        Some(Ok(Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(expr.clone()),
            data_type,
            array: false,
            format: None,
        }))
    }

    /// Spark's `MAP<STRING, INT>` type syntax in casts (the generic dialect
    /// knows only ClickHouse's `Map(String, Int32)`).
    fn supports_map_literal_with_angle_brackets(&self) -> bool {
        true
    }

    delegate! {
        is_delimited_identifier_start(ch: char);
        is_identifier_start(ch: char);
        is_identifier_part(ch: char);
        supports_unicode_string_literal();
        supports_partition_by_after_order_by();
        supports_array_join_syntax();
        supports_group_by_expr();
        supports_group_by_with_modifier();
        supports_left_associative_joins_without_parens();
        supports_connect_by();
        supports_match_recognize();
        supports_pipe_operator();
        supports_start_transaction_modifier();
        supports_window_function_null_treatment_arg();
        supports_dictionary_syntax();
        supports_window_clause_named_window_reference();
        supports_parenthesized_set_variables();
        supports_select_wildcard_except();
        support_map_literal_syntax();
        allow_extract_custom();
        allow_extract_single_quotes();
        supports_extract_comma_syntax();
        supports_create_view_comment_syntax();
        supports_parens_around_table_factor();
        supports_values_as_table_factor();
        supports_create_index_with_clause();
        supports_explain_with_utility_options();
        supports_limit_comma();
        supports_update_order_by();
        supports_from_first_select();
        supports_projection_trailing_commas();
        supports_asc_desc_in_column_definition();
        supports_try_convert();
        supports_bitwise_shift_operators();
        supports_comment_on();
        supports_load_extension();
        supports_named_fn_args_with_assignment_operator();
        supports_struct_literal();
        supports_empty_projections();
        supports_nested_comments();
        supports_multiline_comment_hints();
        supports_user_host_grantee();
        supports_string_escape_constant();
        supports_array_typedef_with_brackets();
        supports_match_against();
        supports_set_names();
        supports_comma_separated_set_assignments();
        supports_filter_during_aggregation();
        supports_select_wildcard_exclude();
        supports_data_type_signed_suffix();
        supports_interval_options();
        supports_quote_delimited_string();
        supports_select_wildcard_replace();
        supports_select_wildcard_ilike();
        supports_select_wildcard_rename();
        supports_optimize_table();
        supports_install();
        supports_detach();
        supports_prewhere();
        supports_with_fill();
        supports_limit_by();
        supports_interpolate();
        supports_settings();
        supports_select_format();
        supports_comment_optimizer_hint();
        supports_constraint_keyword_without_name();
        supports_key_column_option();
        supports_comma_separated_trim();
        supports_cte_without_as();
        supports_select_item_multi_column_alias();
        supports_xml_expressions();
    }
}

/// The type of a Spark numeric literal suffix written right after a number
/// (no space between): `D` DOUBLE, `F` FLOAT, `S` SMALLINT, `Y` TINYINT, `BD`
/// DECIMAL (pyspark 4.3.0: `typeof(1.5D)` is `double`, `typeof(1.5BD)`
/// `decimal(2,1)`). `L` (BIGINT) is read by sqlparser already. With a space,
/// `1.5 d` stays a number with the alias `d`, as in Spark.
fn numeric_suffix(parser: &Parser) -> Option<SqlDataType> {
    if !matches!(parser.get_current_token().token, Token::Number(_, false)) {
        return None;
    }
    let Token::Word(word) = parser.peek_token_no_skip().token else {
        return None;
    };
    if word.quote_style.is_some() {
        return None;
    }
    match word.value.to_ascii_uppercase().as_str() {
        "D" => Some(SqlDataType::Double(ExactNumberInfo::None)),
        "F" => Some(SqlDataType::Float(ExactNumberInfo::None)),
        "S" => Some(SqlDataType::SmallInt(None)),
        "Y" => Some(SqlDataType::TinyInt(None)),
        "BD" => Some(SqlDataType::Decimal(ExactNumberInfo::None)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    use super::VariantDialect;

    /// The tree of `sql`'s only select item, with parentheses made visible.
    fn shape(dialect: &dyn datafusion::sql::sqlparser::dialect::Dialect, sql: &str) -> String {
        let statement = Parser::parse_sql(dialect, &format!("SELECT {sql}")).unwrap();
        let datafusion::sql::sqlparser::ast::Statement::Query(q) = &statement[0] else {
            unreachable!()
        };
        let datafusion::sql::sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() else {
            unreachable!()
        };
        format!("{:?}", s.projection[0])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn colon_binds_tighter_than_arithmetic() {
        let ours = shape(&VariantDialect::default(), "10 - v:a::int * 2");
        // The minus is the root: 10 - ((v:a::int) * 2).
        assert!(
            ours.starts_with("UnnamedExpr(BinaryOp { left: Value"),
            "{ours}"
        );
        assert!(
            ours.contains("op: Minus, right: BinaryOp { left: Cast"),
            "{ours}"
        );
        // The generic dialect makes the path apply to `10 - v`.
        let generic = shape(&GenericDialect {}, "10 - v:a::int * 2");
        assert!(
            generic.contains("JsonAccess { value: BinaryOp"),
            "{generic}"
        );
        // Map literal syntax keeps its meaning.
        let map = shape(&VariantDialect::default(), "MAP {'a': 1}");
        assert!(map.contains("Map"), "{map}");
    }

    /// Through `SessionContext::sql` (DataFusion's parser) the mis-associated
    /// path is a plan error that says what to do.
    #[tokio::test]
    async fn datafusions_parser_gets_a_clear_error() {
        let ctx = crate::variant_context();
        let sql = "SELECT 1 + v:a::int FROM (SELECT parse_json('{\"a\":1}') v)";
        let e = ctx.sql(sql).await.unwrap_err().to_string();
        assert!(
            e.contains("binds `:` looser than `+`") && e.contains("df_variant::sql::query"),
            "{e}"
        );
        let batches = crate::sql::query(&ctx, sql)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(batches[0].num_rows(), 1);
    }
}
