//! Spark SQL type strings, as taken by `variant_get(v, path, type)`: parsing
//! ([`SparkType::parse`]), Spark's upper-case names for error messages
//! ([`SparkType::sql_name`]) and the Arrow type of the values ([`SparkType::to_arrow`]).
//!
//! Parsing follows Spark's DDL type grammar for the types a Variant can be cast to:
//! names are case-insensitive, Spark's aliases are accepted (`long`, `short`, `byte`,
//! `real`, `integer`, `dec`, `numeric`, `timestamp_ltz`), `struct` fields may be
//! separated from their type by `:` or by white space, field names may be
//! back-quoted (a doubled back quote inside stands for one), and white space is
//! allowed around every token. Types Spark knows but cannot cast a Variant to
//! (`void`, intervals, maps with non-string keys) give
//! [`TypeError::CannotCastVariant`], `char(n)`/`varchar(n)` give
//! [`TypeError::CharVarchar`], and unknown names give [`TypeError::Unsupported`].

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, TimeUnit};

use super::storage::variant_field;

/// A Spark SQL type that a Variant value can be converted to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SparkType {
    /// `BOOLEAN`.
    Boolean,
    /// `TINYINT` (`byte`).
    Byte,
    /// `SMALLINT` (`short`).
    Short,
    /// `INT` (`integer`).
    Int,
    /// `BIGINT` (`long`).
    Long,
    /// `FLOAT` (`real`).
    Float,
    /// `DOUBLE`.
    Double,
    /// `DECIMAL(p,s)` with `1 <= p <= 38` and `s <= p`.
    Decimal {
        /// Total number of digits.
        precision: u8,
        /// Digits after the decimal point.
        scale: u8,
    },
    /// `STRING`.
    String,
    /// `BINARY`.
    Binary,
    /// `DATE`.
    Date,
    /// `TIMESTAMP` (an instant, `timestamp_ltz`).
    Timestamp,
    /// `TIMESTAMP_NTZ` (a wall-clock time without zone).
    TimestampNtz,
    /// `VARIANT`.
    Variant,
    /// `ARRAY<T>`.
    Array(Box<SparkType>),
    /// `STRUCT<name: T, ...>`.
    Struct(Vec<(String, SparkType)>),
    /// `MAP<STRING, T>` (the key is always a string).
    Map(Box<SparkType>),
}

/// Why a type string was rejected. The `Display` text starts with Spark's error
/// class in brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeError {
    /// An unknown type name (Spark `UNSUPPORTED_DATATYPE`); holds the upper-case name.
    Unsupported(String),
    /// A type Spark knows but cannot cast a Variant to, such as `MAP<INT, INT>`,
    /// `VOID` or an interval (Spark `DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION`);
    /// holds the type's SQL name.
    CannotCastVariant(String),
    /// `char(n)` / `varchar(n)` (Spark `UNSUPPORTED_CHAR_OR_VARCHAR_AS_STRING`);
    /// holds the type as written, upper-cased.
    CharVarchar(String),
    /// Malformed text or invalid parameters; holds the complete message, including its
    /// error class (`[PARSE_SYNTAX_ERROR]`, `[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION]`, ...).
    Syntax(String),
}

impl std::fmt::Display for TypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeError::Unsupported(t) => {
                write!(f, "[UNSUPPORTED_DATATYPE] Unsupported data type \"{t}\".")
            }
            TypeError::CannotCastVariant(t) => write!(
                f,
                "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] Cannot resolve the cast due to data type mismatch: cannot cast \"VARIANT\" to \"{t}\"."
            ),
            TypeError::CharVarchar(t) => write!(
                f,
                "[UNSUPPORTED_CHAR_OR_VARCHAR_AS_STRING] The char/varchar type \"{t}\" can't be used here; use STRING instead."
            ),
            TypeError::Syntax(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for TypeError {}

impl SparkType {
    /// Parses a Spark type string, case-insensitively and tolerant of white space.
    ///
    /// ```
    /// use df_variant::variant::types::SparkType;
    /// assert_eq!(SparkType::parse("Integer").unwrap(), SparkType::Int);
    /// assert_eq!(
    ///     SparkType::parse("dec(4, 1)").unwrap(),
    ///     SparkType::Decimal { precision: 4, scale: 1 }
    /// );
    /// assert_eq!(
    ///     SparkType::parse("array< struct<a:int, `b c` string> >").unwrap().sql_name(),
    ///     "ARRAY<STRUCT<a: INT, `b c`: STRING>>"
    /// );
    /// assert!(SparkType::parse("map<int,int>").is_err());
    /// ```
    ///
    /// # Errors
    /// [`TypeError`] for unknown names, types a Variant cannot be cast to,
    /// `char`/`varchar`, invalid decimal parameters and malformed text.
    pub fn parse(s: &str) -> Result<SparkType, TypeError> {
        let mut p = Parser {
            s,
            pos: 0,
            depth: 0,
        };
        let t = p.parse_type()?;
        p.skip_ws();
        if p.pos < s.len() {
            return Err(p.syntax("unexpected text after the type"));
        }
        match t {
            Parsed::Ok(t) => Ok(t),
            Parsed::NotCastable(name) => Err(TypeError::CannotCastVariant(name)),
        }
    }

    /// Spark's upper-case SQL name, as used in error messages: `INT`, `DECIMAL(10,2)`,
    /// `ARRAY<INT>`, `STRUCT<a: INT, b: STRING>`, `MAP<STRING, INT>`.
    ///
    /// ```
    /// use df_variant::variant::types::SparkType;
    /// assert_eq!(SparkType::parse("map<string, long>").unwrap().sql_name(), "MAP<STRING, BIGINT>");
    /// ```
    pub fn sql_name(&self) -> String {
        let mut out = String::new();
        self.write_sql_name(&mut out);
        out
    }

    fn write_sql_name(&self, out: &mut String) {
        match self {
            SparkType::Boolean => out.push_str("BOOLEAN"),
            SparkType::Byte => out.push_str("TINYINT"),
            SparkType::Short => out.push_str("SMALLINT"),
            SparkType::Int => out.push_str("INT"),
            SparkType::Long => out.push_str("BIGINT"),
            SparkType::Float => out.push_str("FLOAT"),
            SparkType::Double => out.push_str("DOUBLE"),
            SparkType::Decimal { precision, scale } => {
                out.push_str(&format!("DECIMAL({precision},{scale})"));
            }
            SparkType::String => out.push_str("STRING"),
            SparkType::Binary => out.push_str("BINARY"),
            SparkType::Date => out.push_str("DATE"),
            SparkType::Timestamp => out.push_str("TIMESTAMP"),
            SparkType::TimestampNtz => out.push_str("TIMESTAMP_NTZ"),
            SparkType::Variant => out.push_str("VARIANT"),
            SparkType::Array(t) => {
                out.push_str("ARRAY<");
                t.write_sql_name(out);
                out.push('>');
            }
            SparkType::Struct(fields) => {
                out.push_str("STRUCT<");
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    push_quoted_if_needed(name, out);
                    out.push_str(": ");
                    t.write_sql_name(out);
                }
                out.push('>');
            }
            SparkType::Map(t) => {
                out.push_str("MAP<STRING, ");
                t.write_sql_name(out);
                out.push('>');
            }
        }
    }

    /// The Arrow type of values of this type. Variant values (also nested ones) use
    /// [`super::storage::variant_data_type`]; nested Variant fields carry the
    /// `arrow.parquet.variant` extension metadata.
    ///
    /// ```
    /// use arrow::datatypes::DataType;
    /// use df_variant::variant::types::SparkType;
    /// assert_eq!(SparkType::parse("decimal(5,2)").unwrap().to_arrow(), DataType::Decimal128(5, 2));
    /// ```
    pub fn to_arrow(&self) -> DataType {
        match self {
            SparkType::Boolean => DataType::Boolean,
            SparkType::Byte => DataType::Int8,
            SparkType::Short => DataType::Int16,
            SparkType::Int => DataType::Int32,
            SparkType::Long => DataType::Int64,
            SparkType::Float => DataType::Float32,
            SparkType::Double => DataType::Float64,
            SparkType::Decimal { precision, scale } => {
                DataType::Decimal128(*precision, *scale as i8)
            }
            // DataFusion's SQL string type: no conversion after an extraction.
            SparkType::String => DataType::Utf8View,
            SparkType::Binary => DataType::Binary,
            SparkType::Date => DataType::Date32,
            SparkType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            SparkType::TimestampNtz => DataType::Timestamp(TimeUnit::Microsecond, None),
            SparkType::Variant => super::storage::variant_data_type(),
            SparkType::Array(t) => DataType::List(t.to_field("item")),
            SparkType::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|(name, t)| t.to_field(name))
                    .collect::<Fields>(),
            ),
            SparkType::Map(t) => DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(Fields::from(vec![
                        Arc::new(Field::new("key", DataType::Utf8, false)),
                        t.to_field("value"),
                    ])),
                    false,
                )),
                false,
            ),
        }
    }

    /// A nullable field of this type; Variant fields carry the extension metadata.
    pub(crate) fn to_field(&self, name: &str) -> arrow::datatypes::FieldRef {
        match self {
            SparkType::Variant => variant_field(name, true),
            t => Arc::new(Field::new(name, t.to_arrow(), true)),
        }
    }
}

/// Writes a struct field name as Spark does in type names: plain when it is an
/// identifier, otherwise back-quoted with back quotes doubled.
pub(crate) fn push_quoted_if_needed(name: &str, out: &mut String) {
    let plain = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.bytes().all(|b| b.is_ascii_digit());
    if plain {
        out.push_str(name);
    } else {
        out.push('`');
        out.push_str(&name.replace('`', "``"));
        out.push('`');
    }
}

/// A parsed type: either representable, or a known type a Variant cannot be cast
/// to (reported once the whole string parsed, so syntax errors win).
enum Parsed {
    Ok(SparkType),
    NotCastable(String),
}

impl Parsed {
    fn sql_name(&self) -> String {
        match self {
            Parsed::Ok(t) => t.sql_name(),
            Parsed::NotCastable(n) => n.clone(),
        }
    }
}

/// Nesting limit for type strings (keeps the recursive parser off the stack limit).
const MAX_TYPE_DEPTH: usize = 200;

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn syntax(&self, what: &str) -> TypeError {
        TypeError::Syntax(format!(
            "[PARSE_SYNTAX_ERROR] Syntax error in the type {} at position {}: {what}.",
            super::shorten_quoted(self.s, '"'),
            self.pos
        ))
    }

    fn skip_ws(&mut self) {
        let rest = &self.s[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    /// Consumes `c` (after white space) if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), TypeError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.syntax(&format!("expected '{}'", c as char)))
        }
    }

    /// A word of letters, digits and underscores (may be empty).
    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        &self.s[start..self.pos]
    }

    fn number(&mut self) -> Result<u32, TypeError> {
        let w = self.word();
        if w.is_empty() || !w.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.syntax("expected a number"));
        }
        // Anything too large for u32 is surely too large for every parameter.
        Ok(w.parse::<u32>().unwrap_or(u32::MAX))
    }

    /// Optional `(n)` or `(n, m)` parameters.
    fn params(&mut self) -> Result<Vec<u32>, TypeError> {
        let mut out = Vec::new();
        if !self.eat(b'(') {
            return Ok(out);
        }
        loop {
            out.push(self.number()?);
            if self.eat(b')') {
                return Ok(out);
            }
            self.expect(b',')?;
        }
    }

    fn no_params(&mut self, name: &str) -> Result<(), TypeError> {
        self.skip_ws();
        if self.peek() == Some(b'(') {
            return Err(self.syntax(&format!("{name} takes no parameters")));
        }
        Ok(())
    }

    fn parse_type(&mut self) -> Result<Parsed, TypeError> {
        self.depth += 1;
        if self.depth > MAX_TYPE_DEPTH {
            return Err(self.syntax("the type is nested too deeply"));
        }
        let r = self.parse_type_inner();
        self.depth -= 1;
        r
    }

    fn parse_type_inner(&mut self) -> Result<Parsed, TypeError> {
        let word = self.word();
        if word.is_empty() {
            return Err(self.syntax("expected a type name"));
        }
        let lower = word.to_ascii_lowercase();
        let simple = match lower.as_str() {
            "boolean" => Some(SparkType::Boolean),
            "tinyint" | "byte" => Some(SparkType::Byte),
            "smallint" | "short" => Some(SparkType::Short),
            "int" | "integer" => Some(SparkType::Int),
            "bigint" | "long" => Some(SparkType::Long),
            "float" | "real" => Some(SparkType::Float),
            "double" => Some(SparkType::Double),
            "string" => Some(SparkType::String),
            "binary" => Some(SparkType::Binary),
            "date" => Some(SparkType::Date),
            "timestamp" | "timestamp_ltz" => Some(SparkType::Timestamp),
            "timestamp_ntz" => Some(SparkType::TimestampNtz),
            "variant" => Some(SparkType::Variant),
            _ => None,
        };
        if let Some(t) = simple {
            self.no_params(word)?;
            return Ok(Parsed::Ok(t));
        }
        match lower.as_str() {
            "decimal" | "dec" | "numeric" => {
                let params = self.params()?;
                let (p, s) = match params.as_slice() {
                    [] => (10, 0),
                    [p] => (*p, 0),
                    [p, s] => (*p, *s),
                    _ => return Err(self.syntax("DECIMAL takes at most two parameters")),
                };
                if p == 0 || p > 38 {
                    return Err(TypeError::Syntax(format!(
                        "[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] Decimal precision {p} exceeds max precision 38 (it must be between 1 and 38)."
                    )));
                }
                if s > p {
                    return Err(TypeError::Syntax(format!(
                        "[INVALID_PARAMETER_VALUE] Decimal scale ({s}) cannot be greater than precision ({p})."
                    )));
                }
                Ok(Parsed::Ok(SparkType::Decimal {
                    precision: p as u8,
                    scale: s as u8,
                }))
            }
            "char" | "varchar" | "character" => {
                let params = self.params()?;
                let mut name = lower.to_ascii_uppercase();
                if let [n] = params.as_slice() {
                    name.push_str(&format!("({n})"));
                }
                Err(TypeError::CharVarchar(name))
            }
            "void" => {
                self.no_params(word)?;
                Ok(Parsed::NotCastable("VOID".into()))
            }
            "interval" => {
                // `interval`, `interval year`, `interval day to second`, ...
                let mut name = String::from("INTERVAL");
                let units = ["year", "month", "day", "hour", "minute", "second"];
                let save = self.pos;
                let first = self.word().to_ascii_lowercase();
                if units.contains(&first.as_str()) {
                    name.push(' ');
                    name.push_str(&first.to_ascii_uppercase());
                    let save2 = self.pos;
                    if self.word().eq_ignore_ascii_case("to") {
                        let last = self.word().to_ascii_lowercase();
                        if !units.contains(&last.as_str()) {
                            return Err(self.syntax("expected an interval unit"));
                        }
                        name.push_str(" TO ");
                        name.push_str(&last.to_ascii_uppercase());
                    } else {
                        self.pos = save2;
                    }
                } else {
                    self.pos = save;
                }
                Ok(Parsed::NotCastable(name))
            }
            "array" => {
                self.expect(b'<')?;
                let inner = self.parse_type()?;
                self.expect(b'>')?;
                Ok(match inner {
                    Parsed::Ok(t) => Parsed::Ok(SparkType::Array(Box::new(t))),
                    Parsed::NotCastable(n) => Parsed::NotCastable(format!("ARRAY<{n}>")),
                })
            }
            "map" => {
                self.expect(b'<')?;
                let key = self.parse_type()?;
                self.expect(b',')?;
                let value = self.parse_type()?;
                self.expect(b'>')?;
                Ok(match (key, value) {
                    (Parsed::Ok(SparkType::String), Parsed::Ok(v)) => {
                        Parsed::Ok(SparkType::Map(Box::new(v)))
                    }
                    (k, v) => {
                        Parsed::NotCastable(format!("MAP<{}, {}>", k.sql_name(), v.sql_name()))
                    }
                })
            }
            "struct" => self.parse_struct(),
            _ => Err(TypeError::Unsupported(word.to_ascii_uppercase())),
        }
    }

    fn parse_struct(&mut self) -> Result<Parsed, TypeError> {
        self.expect(b'<')?;
        let mut fields: Vec<(String, Parsed)> = Vec::new();
        if !self.eat(b'>') {
            loop {
                let name = self.field_name()?;
                self.skip_ws();
                if self.peek() == Some(b':') {
                    self.pos += 1;
                } else if fields.is_empty() && name.is_empty() {
                    return Err(self.syntax("expected a field name"));
                }
                let t = self.parse_type()?;
                fields.push((name, t));
                if self.eat(b'>') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        if fields.iter().all(|(_, t)| matches!(t, Parsed::Ok(_))) {
            let fields = fields
                .into_iter()
                .filter_map(|(n, t)| match t {
                    Parsed::Ok(t) => Some((n, t)),
                    Parsed::NotCastable(_) => None,
                })
                .collect();
            return Ok(Parsed::Ok(SparkType::Struct(fields)));
        }
        let mut name = String::from("STRUCT<");
        for (i, (n, t)) in fields.iter().enumerate() {
            if i > 0 {
                name.push_str(", ");
            }
            push_quoted_if_needed(n, &mut name);
            name.push_str(": ");
            name.push_str(&t.sql_name());
        }
        name.push('>');
        Ok(Parsed::NotCastable(name))
    }

    /// A struct field name: an identifier or a back-quoted name.
    fn field_name(&mut self) -> Result<String, TypeError> {
        self.skip_ws();
        if self.peek() == Some(b'`') {
            self.pos += 1;
            let mut name = String::new();
            loop {
                let rest = &self.s[self.pos..];
                let Some(i) = rest.find('`') else {
                    return Err(self.syntax("unterminated quoted field name"));
                };
                name.push_str(&rest[..i]);
                self.pos += i + 1;
                if self.peek() == Some(b'`') {
                    name.push('`');
                    self.pos += 1;
                } else {
                    return Ok(name);
                }
            }
        }
        let w = self.word();
        if w.is_empty() {
            return Err(self.syntax("expected a field name"));
        }
        Ok(w.to_string())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_quote_long_types_cut() {
        let long = format!("{}int", "array<".repeat(100_000));
        let e = SparkType::parse(&long).unwrap_err().to_string();
        assert!(e.len() < 400, "{}", e.len());
        assert!(e.contains("...\" (600003 characters)"), "{e}");
    }

    use super::*;

    fn dec(precision: u8, scale: u8) -> SparkType {
        SparkType::Decimal { precision, scale }
    }

    #[test]
    fn parses_names_and_aliases() {
        let cases: Vec<(&str, SparkType)> = vec![
            ("boolean", SparkType::Boolean),
            ("BOOLEAN", SparkType::Boolean),
            ("tinyint", SparkType::Byte),
            ("byte", SparkType::Byte),
            ("smallint", SparkType::Short),
            ("Short", SparkType::Short),
            ("int", SparkType::Int),
            ("integer", SparkType::Int),
            ("bigint", SparkType::Long),
            ("LONG", SparkType::Long),
            ("float", SparkType::Float),
            ("real", SparkType::Float),
            ("double", SparkType::Double),
            ("decimal", dec(10, 0)),
            ("decimal(5)", dec(5, 0)),
            ("decimal(5,2)", dec(5, 2)),
            (" DEC ( 4 , 1 ) ", dec(4, 1)),
            ("numeric(4,1)", dec(4, 1)),
            ("decimal(38,38)", dec(38, 38)),
            ("string", SparkType::String),
            ("binary", SparkType::Binary),
            ("date", SparkType::Date),
            ("timestamp", SparkType::Timestamp),
            ("timestamp_ltz", SparkType::Timestamp),
            ("TIMESTAMP_NTZ", SparkType::TimestampNtz),
            ("variant", SparkType::Variant),
            ("array<int>", SparkType::Array(Box::new(SparkType::Int))),
            (
                " array < array<variant> > ",
                SparkType::Array(Box::new(SparkType::Array(Box::new(SparkType::Variant)))),
            ),
            ("map<string,int>", SparkType::Map(Box::new(SparkType::Int))),
            (
                "MAP< STRING , array<long> >",
                SparkType::Map(Box::new(SparkType::Array(Box::new(SparkType::Long)))),
            ),
            (
                "struct<a:int, b string,`c d`:double, `x``y` : date>",
                SparkType::Struct(vec![
                    ("a".into(), SparkType::Int),
                    ("b".into(), SparkType::String),
                    ("c d".into(), SparkType::Double),
                    ("x`y".into(), SparkType::Date),
                ]),
            ),
            ("struct<>", SparkType::Struct(vec![])),
            (
                "struct<A:int,a:int>",
                SparkType::Struct(vec![
                    ("A".into(), SparkType::Int),
                    ("a".into(), SparkType::Int),
                ]),
            ),
            (
                "struct<1a:int>",
                SparkType::Struct(vec![("1a".into(), SparkType::Int)]),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(SparkType::parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn rejects_with_spark_error_classes() {
        let cases: Vec<(&str, &str)> = vec![
            (
                "foo",
                "[UNSUPPORTED_DATATYPE] Unsupported data type \"FOO\".",
            ),
            (
                "array<foo>",
                "[UNSUPPORTED_DATATYPE] Unsupported data type \"FOO\".",
            ),
            (
                "map<int,int>",
                "cannot cast \"VARIANT\" to \"MAP<INT, INT>\".",
            ),
            ("void", "cannot cast \"VARIANT\" to \"VOID\"."),
            ("array<void>", "cannot cast \"VARIANT\" to \"ARRAY<VOID>\"."),
            ("interval", "cannot cast \"VARIANT\" to \"INTERVAL\"."),
            (
                "interval day to second",
                "cannot cast \"VARIANT\" to \"INTERVAL DAY TO SECOND\".",
            ),
            (
                "struct<a:interval year>",
                "cannot cast \"VARIANT\" to \"STRUCT<a: INTERVAL YEAR>\".",
            ),
            ("varchar(10)", "[UNSUPPORTED_CHAR_OR_VARCHAR_AS_STRING]"),
            ("char(3)", "CHAR(3)"),
            ("decimal(39,0)", "[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION]"),
            ("decimal(0)", "[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION]"),
            ("decimal(5,6)", "[INVALID_PARAMETER_VALUE]"),
            ("decimal(1,2,3)", "[PARSE_SYNTAX_ERROR]"),
            ("decimal(x)", "[PARSE_SYNTAX_ERROR]"),
            ("int(3)", "[PARSE_SYNTAX_ERROR]"),
            ("array<int", "[PARSE_SYNTAX_ERROR]"),
            ("array<>", "[PARSE_SYNTAX_ERROR]"),
            ("int int", "[PARSE_SYNTAX_ERROR]"),
            ("", "[PARSE_SYNTAX_ERROR]"),
            ("struct<a:int,>", "[PARSE_SYNTAX_ERROR]"),
            ("struct<`a:int>", "[PARSE_SYNTAX_ERROR]"),
            ("map<string>", "[PARSE_SYNTAX_ERROR]"),
            ("é", "[PARSE_SYNTAX_ERROR]"),
        ];
        for (text, want) in cases {
            let err = SparkType::parse(text).expect_err(text);
            let msg = err.to_string();
            assert!(msg.contains(want), "{text}: {msg}");
        }
        assert_eq!(
            SparkType::parse("map<int,int>"),
            Err(TypeError::CannotCastVariant("MAP<INT, INT>".into()))
        );
        assert_eq!(
            SparkType::parse("Foo"),
            Err(TypeError::Unsupported("FOO".into()))
        );
        let deep = "array<".repeat(10_000);
        assert!(matches!(SparkType::parse(&deep), Err(TypeError::Syntax(_))));
    }

    #[test]
    fn sql_names() {
        let cases = [
            ("tinyint", "TINYINT"),
            ("short", "SMALLINT"),
            ("integer", "INT"),
            ("long", "BIGINT"),
            ("real", "FLOAT"),
            ("double", "DOUBLE"),
            ("boolean", "BOOLEAN"),
            ("decimal", "DECIMAL(10,0)"),
            ("dec(10,2)", "DECIMAL(10,2)"),
            ("string", "STRING"),
            ("binary", "BINARY"),
            ("date", "DATE"),
            ("timestamp_ltz", "TIMESTAMP"),
            ("timestamp_ntz", "TIMESTAMP_NTZ"),
            ("variant", "VARIANT"),
            ("array<int>", "ARRAY<INT>"),
            ("struct<a:int,b:string>", "STRUCT<a: INT, b: STRING>"),
            (
                "struct<`a b`:int,`1`:int,_x:int>",
                "STRUCT<`a b`: INT, `1`: INT, _x: INT>",
            ),
            ("map<string,int>", "MAP<STRING, INT>"),
            ("struct<>", "STRUCT<>"),
        ];
        for (text, want) in cases {
            assert_eq!(SparkType::parse(text).unwrap().sql_name(), want, "{text}");
        }
    }

    #[test]
    fn arrow_types() {
        use crate::variant::storage::{is_variant_field, variant_data_type};
        let cases = [
            ("boolean", DataType::Boolean),
            ("byte", DataType::Int8),
            ("short", DataType::Int16),
            ("int", DataType::Int32),
            ("long", DataType::Int64),
            ("float", DataType::Float32),
            ("double", DataType::Float64),
            ("decimal(5,2)", DataType::Decimal128(5, 2)),
            ("string", DataType::Utf8View),
            ("binary", DataType::Binary),
            ("date", DataType::Date32),
            (
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
            (
                "timestamp_ntz",
                DataType::Timestamp(TimeUnit::Microsecond, None),
            ),
            ("variant", variant_data_type()),
            (
                "array<int>",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(SparkType::parse(text).unwrap().to_arrow(), want, "{text}");
        }
        let DataType::Struct(fields) = SparkType::parse("struct<a:int,v:variant>")
            .unwrap()
            .to_arrow()
        else {
            panic!("not a struct");
        };
        assert!(fields[0].is_nullable() && fields[1].is_nullable());
        assert!(is_variant_field(&fields[1]));
        assert_eq!(
            fields[1]
                .metadata()
                .get("ARROW:extension:name")
                .map(String::as_str),
            Some("arrow.parquet.variant")
        );
        let DataType::List(item) = SparkType::parse("array<variant>").unwrap().to_arrow() else {
            panic!("not a list");
        };
        assert!(!item.metadata().is_empty());
        let DataType::Map(entries, sorted) =
            SparkType::parse("map<string,double>").unwrap().to_arrow()
        else {
            panic!("not a map");
        };
        assert!(!sorted);
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("entries not a struct");
        };
        assert_eq!(kv[0].name(), "key");
        assert_eq!(kv[0].data_type(), &DataType::Utf8);
        assert!(!kv[0].is_nullable());
        assert_eq!(kv[1].name(), "value");
        assert!(kv[1].is_nullable());
    }
}
