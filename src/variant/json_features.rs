//! Spark's JSON reader options (Jackson's read features) for `from_json`:
//! text that strict JSON refuses but a feature allows is rewritten into strict
//! JSON, which [`super::json::JsonToVariant`] then parses as always.
//!
//! | option (`from_json`'s map, any case) | Spark's default | what it admits |
//! |---|---|---|
//! | `allowSingleQuotes` | true | `'text'` strings and keys, `\'` in strings |
//! | `allowNonNumericNumbers` | true | `NaN`, `Infinity`, `+Infinity`, `-Infinity`, `+INF`, `-INF` as doubles |
//! | `allowUnquotedFieldNames` | false | keys without quotes (`{a: 1}`) |
//! | `allowNumericLeadingZeros` | false | `007` (7), `-01`, `00.5` |
//! | `allowComments` | false | `/* ... */` and `// ...` comments |
//! | `allowBackslashEscapingAnyCharacter` | false | `\q` (q) |
//! | `allowUnquotedControlChars` | false | raw control characters inside strings |
//!
//! Strict text never reaches the rewrite (it parses first), so `parse_json` and
//! `from_json` on valid JSON cost what they did. Answers were checked with
//! pyspark 4.3.0 (`interop/spark_probe/from_json_options.txt`).

/// Which of Spark's JSON reader options are on.
#[expect(
    clippy::struct_excessive_bools,
    reason = "one flag per Spark option, each set on its own"
)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonReadFeatures {
    /// `allowSingleQuotes`.
    pub single_quotes: bool,
    /// `allowNonNumericNumbers`.
    pub non_numeric_numbers: bool,
    /// `allowUnquotedFieldNames`.
    pub unquoted_field_names: bool,
    /// `allowNumericLeadingZeros`.
    pub numeric_leading_zeros: bool,
    /// `allowComments`.
    pub comments: bool,
    /// `allowBackslashEscapingAnyCharacter`.
    pub backslash_escaping_any_character: bool,
    /// `allowUnquotedControlChars`.
    pub unquoted_control_chars: bool,
}

impl JsonReadFeatures {
    /// Spark's `from_json` defaults: single quotes and non-numeric numbers.
    pub const SPARK_DEFAULTS: Self = Self {
        single_quotes: true,
        non_numeric_numbers: true,
        unquoted_field_names: false,
        numeric_leading_zeros: false,
        comments: false,
        backslash_escaping_any_character: false,
        unquoted_control_chars: false,
    };

    /// Whether any feature is on (otherwise text is strict JSON or invalid).
    pub fn any(&self) -> bool {
        *self != Self::default()
    }

    /// Sets the option `key` (any case) to `value` (`true`/`false`, any case).
    /// `Ok(false)` for a key that is not a JSON reader option.
    ///
    /// # Errors
    /// A value that is not a boolean, as Spark's `For input string: "maybe"`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let flag = match key.to_ascii_lowercase().as_str() {
            "allowsinglequotes" => &mut self.single_quotes,
            "allownonnumericnumbers" => &mut self.non_numeric_numbers,
            "allowunquotedfieldnames" => &mut self.unquoted_field_names,
            "allownumericleadingzeros" => &mut self.numeric_leading_zeros,
            "allowcomments" => &mut self.comments,
            "allowbackslashescapinganycharacter" => &mut self.backslash_escaping_any_character,
            "allowunquotedcontrolchars" => &mut self.unquoted_control_chars,
            _ => return Ok(false),
        };
        *flag = match value.to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => return Err(format!("option {key} must be true or false, got '{value}'")),
        };
        Ok(true)
    }
}

/// What a value position may hold next, while rewriting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Other,
}

/// `text` rewritten into strict JSON under `features`: single-quoted strings
/// double-quoted, unquoted keys quoted, comments blanked, leading zeros dropped,
/// `±Infinity` written `±1e999` (a double overflowing to infinity) and `NaN`
/// left for the parser ([`super::json::JsonParseOptions::allow_nan`]). What no
/// feature admits is copied as it is, for the strict parser to refuse.
pub fn rewrite(text: &str, features: &JsonReadFeatures) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + 16);
    let mut objects: Vec<bool> = Vec::new();
    let mut expect = Expect::Other;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'{' | b'[' => {
                objects.push(c == b'{');
                expect = if c == b'{' {
                    Expect::Key
                } else {
                    Expect::Other
                };
                out.push(c);
                i += 1;
            }
            b'}' | b']' => {
                objects.pop();
                expect = Expect::Other;
                out.push(c);
                i += 1;
            }
            b',' => {
                expect = if objects.last() == Some(&true) {
                    Expect::Key
                } else {
                    Expect::Other
                };
                out.push(c);
                i += 1;
            }
            b':' => {
                expect = Expect::Other;
                out.push(c);
                i += 1;
            }
            b'/' if features.comments && matches!(b.get(i + 1), Some(b'/' | b'*')) => {
                let end = if b.get(i + 1) == Some(&b'/') {
                    b[i..]
                        .iter()
                        .position(|&x| x == b'\n')
                        .map_or(b.len(), |p| i + p)
                } else {
                    match b[i + 2..].windows(2).position(|w| w == b"*/") {
                        Some(p) => i + 2 + p + 2,
                        // Unterminated: left for the parser to refuse.
                        None => {
                            out.extend_from_slice(&b[i..]);
                            break;
                        }
                    }
                };
                out.push(b' ');
                i = end;
            }
            b'"' => {
                i = string(b, i, b'"', features, &mut out);
                expect = Expect::Other;
            }
            b'\'' if features.single_quotes => {
                i = string(b, i, b'\'', features, &mut out);
                expect = Expect::Other;
            }
            _ if expect == Expect::Key && features.unquoted_field_names && is_name_byte(c) => {
                let end = b[i..]
                    .iter()
                    .position(|&x| !is_name_byte(x))
                    .map_or(b.len(), |p| i + p);
                out.push(b'"');
                out.extend_from_slice(&b[i..end]);
                out.push(b'"');
                expect = Expect::Other;
                i = end;
            }
            b'-' | b'+' | b'0'..=b'9' | b'N' | b'I' => {
                i = number(b, i, features, &mut out);
                expect = Expect::Other;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Only ASCII was inserted and input bytes were copied whole.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// A byte of an unquoted key, as Jackson reads one: letters, digits, `_`, `$`,
/// `@`, `#`, `*`, `+`, `-` and any non-ASCII character (pyspark 4.3.0 takes
/// `{1a: 1}`, `{a-b: 1}` and `{é: 1}`, and refuses `{a b: 1}`).
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_$@#*+-".contains(&c) || c >= 0x80
}

/// Copies the string starting at the quote `b[start]` (`"` or `'`) as a
/// double-quoted JSON string; returns the position after its closing quote.
fn string(b: &[u8], start: usize, quote: u8, f: &JsonReadFeatures, out: &mut Vec<u8>) -> usize {
    out.push(b'"');
    let mut i = start + 1;
    while let Some(&c) = b.get(i) {
        match c {
            _ if c == quote => {
                out.push(b'"');
                return i + 1;
            }
            b'"' => {
                // Inside single quotes.
                out.extend_from_slice(b"\\\"");
                i += 1;
            }
            b'\\' => {
                let Some(&e) = b.get(i + 1) else {
                    out.push(c);
                    return i + 1;
                };
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u' => {
                        out.extend_from_slice(&[b'\\', e]);
                    }
                    b'\'' if f.single_quotes || f.backslash_escaping_any_character => {
                        out.push(b'\'');
                    }
                    _ if f.backslash_escaping_any_character && e >= 0x20 => out.push(e),
                    // Left for the parser to refuse.
                    _ => out.extend_from_slice(&[b'\\', e]),
                }
                i += 2;
            }
            _ if c < 0x20 && f.unquoted_control_chars => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    i
}

/// Copies the number (or non-numeric number) at `start`; returns the position
/// after it.
fn number(b: &[u8], start: usize, f: &JsonReadFeatures, out: &mut Vec<u8>) -> usize {
    let mut i = start;
    let sign = match b.get(i) {
        Some(&s @ (b'-' | b'+')) => {
            i += 1;
            Some(s)
        }
        _ => None,
    };
    let word_end = b[i..]
        .iter()
        .position(|x| !x.is_ascii_alphabetic())
        .map_or(b.len(), |p| i + p);
    let word = &b[i..word_end];
    if f.non_numeric_numbers && !word.is_empty() {
        let infinite = word == b"Infinity" || (word == b"INF" && sign.is_some());
        match (sign, infinite, word == b"NaN") {
            (Some(b'-'), true, _) => {
                out.extend_from_slice(b"-1e999");
                return word_end;
            }
            (_, true, _) => {
                out.extend_from_slice(b"1e999");
                return word_end;
            }
            (None, _, true) => {
                out.extend_from_slice(b"NaN");
                return word_end;
            }
            _ => {}
        }
    }
    if let Some(s) = sign {
        out.push(s);
    }
    if f.numeric_leading_zeros {
        while b.get(i) == Some(&b'0') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let end = b[i..]
        .iter()
        .position(|x| !(x.is_ascii_alphanumeric() || matches!(x, b'.' | b'+' | b'-')))
        .map_or(b.len(), |p| i + p);
    out.extend_from_slice(&b[i..end]);
    end.max(start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> JsonReadFeatures {
        JsonReadFeatures {
            single_quotes: true,
            non_numeric_numbers: true,
            unquoted_field_names: true,
            numeric_leading_zeros: true,
            comments: true,
            backslash_escaping_any_character: true,
            unquoted_control_chars: true,
        }
    }

    #[test]
    fn each_feature_rewrites_what_it_admits_into_strict_json() {
        let f = all();
        for (text, strict) in [
            ("{'a': 'b'}", r#"{"a": "b"}"#),
            (r#"['it"s', 'x\'y']"#, r#"["it\"s", "x'y"]"#),
            ("{a: 1, b_c$: 2, 1a: 3}", r#"{"a": 1, "b_c$": 2, "1a": 3}"#),
            (
                "[NaN, Infinity, -Infinity, +INF, -INF]",
                "[NaN, 1e999, -1e999, 1e999, -1e999]",
            ),
            ("[007, -01, 00.5, 0, 00e1]", "[7, -1, 0.5, 0, 0e1]"),
            ("[1, /* x */ 2 // y\n]", "[1,   2  \n]"),
            (r#"["a\qb"]"#, r#"["aqb"]"#),
            ("[\"a\tb\"]", r#"["a\u0009b"]"#),
            (
                r#"{"a": {"b": [true, null]}}"#,
                r#"{"a": {"b": [true, null]}}"#,
            ),
        ] {
            assert_eq!(rewrite(text, &f), strict, "{text}");
        }
    }

    #[test]
    fn what_no_feature_admits_is_left_for_the_parser() {
        let f = JsonReadFeatures::SPARK_DEFAULTS;
        for text in [
            "{a: 1}",
            "[INF]",
            "[-NaN]",
            "[+1]",
            "[01]",
            "[1 /* x */]",
            r#"["\q"]"#,
        ] {
            let rewritten = rewrite(text, &f);
            let mut parser = super::super::json::JsonToVariant::new(
                super::super::json::JsonParseOptions::default(),
            );
            assert!(parser.parse(&rewritten).is_err(), "{text} -> {rewritten}");
        }
        assert_eq!(
            rewrite("{'a': 1}", &JsonReadFeatures::default()),
            "{'a': 1}"
        );
    }

    #[test]
    fn options_are_read_in_any_case_and_refuse_what_is_not_a_boolean() {
        let mut f = JsonReadFeatures::SPARK_DEFAULTS;
        assert_eq!(f.set("ALLOWSINGLEQUOTES", "FALSE"), Ok(true));
        assert!(!f.single_quotes);
        assert_eq!(f.set("mode", "FAILFAST"), Ok(false));
        assert!(
            f.set("allowComments", "maybe")
                .unwrap_err()
                .contains("'maybe'")
        );
        assert!(!JsonReadFeatures::default().any() && f.any());
    }
}
