//! One-pass JSON text → Variant encoder with Spark 4.3 `parse_json` semantics.
//!
//! [`JsonToVariant`] is a hand-written parser that writes Variant value bytes and
//! metadata bytes directly into reusable buffers: no DOM, no `serde_json`, no
//! allocation per value once its buffers have grown, and no recursion (nesting is
//! tracked on an explicit stack, so deep input cannot overflow the call stack).
//!
//! Semantics follow Spark 4.3 (`docs/spark-semantics.md` §1, §3, §15):
//!
//! * strict RFC 8259 for the first complete value; whatever follows it is ignored
//!   (`1 2` is `1`, `[1,2]]` is `[1,2]`). As in Spark's JSON reader (Jackson), a
//!   *top-level number* must be followed by whitespace or the end of the input
//!   (`1x` is an error) and a literal must not run into identifier characters
//!   (`truex` is an error);
//! * integers fitting `i64` use the smallest integer width; larger integers with at
//!   most 38 digits become decimals of scale 0, longer ones doubles;
//! * numbers with a fraction and no exponent become decimals with trailing fraction
//!   zeros stripped (doubles if the precision exceeds 38); any exponent gives a double
//!   (overflow gives ±infinity, underflow zero);
//! * duplicate keys in one object are an error unless
//!   [`JsonParseOptions::allow_duplicate_keys`] is set, in which case the last one wins;
//! * the metadata dictionary lists keys in first-seen order (`sorted_strings = 0`),
//!   object field ids are listed by key name (unsigned UTF-8 byte order) while field
//!   values stay in input order, and every width is the smallest that fits — the
//!   bytes are identical to what Spark writes.

use std::fmt;

use super::encoding::{self, put_uint};

/// Spark 4.3's size limit for both the value and the metadata of one Variant
/// (128 MiB; checked with pyspark 4.3.0: a 17 MB string parses, a 130 MB one is
/// refused).
pub const SIZE_LIMIT: usize = 128 << 20;

/// Largest number of decimal digits a Variant decimal can hold.
const MAX_DECIMAL_PRECISION: usize = 38;

/// The limits of Spark's JSON reader (Jackson's default `StreamReadConstraints`),
/// checked with pyspark 4.3.0: `parse_json` refuses a number with more than
/// 1000 digits in its integer part, its fraction or its exponent, an object key
/// longer than 50,000 characters and a string longer than 20,000,000 (in UTF-16
/// code units, after escapes are decoded), where `try_parse_json` answers NULL.
pub const MAX_NUMBER_DIGITS: usize = 1000;
/// See [`MAX_NUMBER_DIGITS`].
pub const MAX_KEY_CHARS: usize = 50_000;
/// See [`MAX_NUMBER_DIGITS`].
pub const MAX_STRING_CHARS: usize = 20_000_000;

/// Options for [`JsonToVariant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonParseOptions {
    /// When `true`, a key repeated within one object is not an error: the last
    /// occurrence wins (Spark's `spark.sql.variant.allowDuplicateKeys=true`).
    pub allow_duplicate_keys: bool,
    /// Maximum nesting depth of objects and arrays; deeper input is rejected with
    /// [`JsonErrorKind::TooDeep`]. A scalar has depth 0, `[1]` depth 1.
    pub max_depth: usize,
    /// When `true`, anything but whitespace after the first complete value is
    /// [`JsonErrorKind::TrailingContent`]. `false` is Spark's `parse_json` rule
    /// (the rest is ignored); the NDJSON reader sets it, so that a line holding
    /// two values is an error instead of silently losing the second.
    pub reject_trailing_content: bool,
    /// When `true`, `NaN` is a value: a double NaN (Jackson's
    /// `ALLOW_NON_NUMERIC_NUMBERS`, which Spark's `from_json` sets by default;
    /// `±Infinity` reach the parser as `±1e999` from [`super::json_features`]).
    pub allow_nan: bool,
}

impl JsonParseOptions {
    /// The options of NDJSON lines: Spark's defaults, with trailing content
    /// rejected unless `ignore_trailing_content`.
    pub fn for_lines(ignore_trailing_content: bool) -> Self {
        Self {
            reject_trailing_content: !ignore_trailing_content,
            ..Self::default()
        }
    }
}

impl Default for JsonParseOptions {
    /// Spark's defaults: duplicate keys rejected, at most 1000 levels of nesting,
    /// trailing content ignored.
    fn default() -> Self {
        Self {
            allow_duplicate_keys: false,
            max_depth: 1000,
            reject_trailing_content: false,
            allow_nan: false,
        }
    }
}

/// What went wrong while parsing JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// The input ended before the first value was complete (also: empty input).
    EofWhileParsing,
    /// A value was expected but something else was found.
    ExpectedValue,
    /// An object key (a double-quoted string) was expected.
    ExpectedKey,
    /// The `:` after an object key is missing.
    ExpectedColon,
    /// After an element, neither `,` nor the closing bracket of the container follows.
    ExpectedCommaOrEnd,
    /// A top-level number is directly followed by something other than whitespace
    /// (Jackson: "expected space separating root-level values").
    ExpectedWhitespaceAfterNumber,
    /// A malformed number (`01`, `1.`, `.5`, `-`, `1e`, ...).
    InvalidNumber,
    /// A malformed literal (`tru`, `nul`, `truex`, `NaN`, ...).
    InvalidLiteral,
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// `\u` not followed by four hex digits.
    InvalidUnicode,
    /// A UTF-16 surrogate escape that is not part of a valid pair.
    LoneSurrogate,
    /// A raw control character (below U+0020) inside a string.
    ControlCharacterInString,
    /// A key repeated within one object.
    DuplicateKey(String),
    /// Nesting deeper than the given maximum depth.
    TooDeep(usize),
    /// The resulting value or metadata would be larger than 128 MiB.
    TooLarge,
    /// Something other than whitespace follows the first complete value (only
    /// with [`JsonParseOptions::reject_trailing_content`]).
    TrailingContent,
    /// A number with more than [`MAX_NUMBER_DIGITS`] digits in one part.
    NumberTooLong,
    /// An object key longer than [`MAX_KEY_CHARS`] characters.
    KeyTooLong,
    /// A string longer than [`MAX_STRING_CHARS`] characters.
    StringTooLong,
}

/// A JSON parse failure: what went wrong and the byte offset in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    /// What went wrong.
    pub kind: JsonErrorKind,
    /// Byte offset in the input text where the problem was detected.
    pub offset: usize,
}

impl JsonError {
    fn new(kind: JsonErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            JsonErrorKind::EofWhileParsing => write!(f, "unexpected end of input at byte {at}"),
            JsonErrorKind::ExpectedValue => write!(f, "expected value at byte {at}"),
            JsonErrorKind::ExpectedKey => write!(f, "expected string key at byte {at}"),
            JsonErrorKind::ExpectedColon => write!(f, "expected ':' at byte {at}"),
            JsonErrorKind::ExpectedCommaOrEnd => {
                write!(f, "expected ',' or end of container at byte {at}")
            }
            JsonErrorKind::ExpectedWhitespaceAfterNumber => {
                write!(
                    f,
                    "unexpected character after top-level number at byte {at}"
                )
            }
            JsonErrorKind::InvalidNumber => write!(f, "invalid number at byte {at}"),
            JsonErrorKind::InvalidLiteral => write!(f, "invalid literal at byte {at}"),
            JsonErrorKind::InvalidEscape => write!(f, "invalid escape at byte {at}"),
            JsonErrorKind::InvalidUnicode => write!(f, "invalid unicode escape at byte {at}"),
            JsonErrorKind::LoneSurrogate => write!(f, "lone surrogate escape at byte {at}"),
            JsonErrorKind::ControlCharacterInString => {
                write!(f, "control character in string at byte {at}")
            }
            JsonErrorKind::DuplicateKey(key) => {
                write!(f, "duplicate key \"{}\" at byte {at}", key.escape_debug())
            }
            JsonErrorKind::TooDeep(max) => {
                write!(f, "nesting deeper than {max} levels at byte {at}")
            }
            JsonErrorKind::TrailingContent => {
                write!(f, "content after the JSON value at byte {at}")
            }
            JsonErrorKind::TooLarge => {
                write!(f, "variant larger than 128 MiB at byte {at}")
            }
            JsonErrorKind::NumberTooLong => write!(
                f,
                "number with more than {MAX_NUMBER_DIGITS} digits in one part (Spark's JSON \
                 reader's limit) at byte {at}"
            ),
            JsonErrorKind::KeyTooLong => write!(
                f,
                "object key longer than {MAX_KEY_CHARS} characters (Spark's JSON reader's \
                 limit) at byte {at}"
            ),
            JsonErrorKind::StringTooLong => write!(
                f,
                "string longer than {MAX_STRING_CHARS} characters (Spark's JSON reader's \
                 limit) at byte {at}"
            ),
        }
    }
}

impl std::error::Error for JsonError {}

// ---------------------------------------------------------------------------------------
// Key dictionary
// ---------------------------------------------------------------------------------------

const EMPTY_SLOT: u32 = u32::MAX;

/// The metadata dictionary: keys in first-seen order plus an open-addressing hash
/// index over them. Reset per parse without giving back capacity.
#[derive(Default)]
struct Dictionary {
    /// Concatenated key bytes.
    bytes: Vec<u8>,
    /// `offsets[i]..offsets[i + 1]` is key `i` in `bytes`; always starts with `0`.
    offsets: Vec<u32>,
    /// Hash slots holding key ids, `EMPTY_SLOT` when free. Length is a power of two.
    slots: Vec<u32>,
    /// The slot each key occupies, for cheap clearing.
    slot_of: Vec<u32>,
}

fn hash_key(key: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // Final avalanche so that the low bits used for slot selection are well mixed.
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

impl Dictionary {
    fn clear(&mut self) {
        for &s in &self.slot_of {
            if let Some(slot) = self.slots.get_mut(s as usize) {
                *slot = EMPTY_SLOT;
            }
        }
        self.slot_of.clear();
        self.bytes.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    #[inline]
    fn key(&self, id: u32) -> &[u8] {
        let id = id as usize;
        match (self.offsets.get(id), self.offsets.get(id + 1)) {
            (Some(&s), Some(&e)) => self.bytes.get(s as usize..e as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Returns the id of `key`, adding it if new; `None` when the dictionary would
    /// exceed the size limit.
    #[inline]
    fn intern(&mut self, key: &[u8]) -> Option<u32> {
        if self.slots.len() < 2 * (self.len() + 1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut pos = hash_key(key) as usize & mask;
        loop {
            let id = self.slots[pos];
            if id == EMPTY_SLOT {
                break;
            }
            if self.key(id) == key {
                return Some(id);
            }
            pos = (pos + 1) & mask;
        }
        if self.bytes.len() + key.len() > SIZE_LIMIT || self.len() >= SIZE_LIMIT {
            return None;
        }
        let id = self.len() as u32;
        self.bytes.extend_from_slice(key);
        self.offsets.push(self.bytes.len() as u32);
        self.slots[pos] = id;
        self.slot_of.push(pos as u32);
        Some(id)
    }

    fn grow(&mut self) {
        let new_len = (self.slots.len() * 2).max(64);
        self.slots.clear();
        self.slots.resize(new_len, EMPTY_SLOT);
        let mask = new_len - 1;
        self.slot_of.clear();
        for id in 0..self.len() as u32 {
            let mut pos = hash_key(self.key(id)) as usize & mask;
            while self.slots[pos] != EMPTY_SLOT {
                pos = (pos + 1) & mask;
            }
            self.slots[pos] = id;
            self.slot_of.push(pos as u32);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Encoder
// ---------------------------------------------------------------------------------------

/// One open object or array.
#[derive(Clone, Copy)]
struct Frame {
    /// Position in the value buffer where the container's children start.
    start: usize,
    /// Index into `children` of the container's first child.
    first_child: usize,
    is_object: bool,
}

/// One child of an open container.
#[derive(Clone, Copy)]
struct Child {
    /// Dictionary id of the key (unused for array elements).
    id: u32,
    /// Offset of the child's value relative to the container's `start`.
    offset: u32,
    /// Byte offset of the key in the input (for duplicate-key errors).
    pos: usize,
}

/// Reusable JSON → Variant encoder.
///
/// After a successful [`parse`](Self::parse), [`metadata`](Self::metadata) and
/// [`value`](Self::value) hold one complete Variant; after a failed parse both are
/// empty. All buffers are kept between calls, so one encoder should be reused for
/// a whole column.
///
/// ```
/// use df_variant::variant::json::{JsonParseOptions, JsonToVariant};
/// use parquet_variant::Variant;
///
/// let mut enc = JsonToVariant::new(JsonParseOptions::default());
/// enc.parse(r#"{"b": 1.50, "a": [1, null]}"#).unwrap();
/// let v = Variant::try_new(enc.metadata(), enc.value()).unwrap();
/// let obj = v.as_object().unwrap();
/// assert_eq!(obj.get("a").unwrap().as_list().unwrap().len(), 2);
/// assert_eq!(obj.get("b").unwrap().as_decimal4().map(|d| (d.integer(), d.scale())), Some((15, 1)));
///
/// enc.parse("1 2").unwrap(); // content after the first value is ignored
/// assert_eq!(enc.value(), &[0x0c, 0x01]);
/// assert!(enc.parse(r#"{"a":1,"a":2}"#).is_err());
/// ```
pub struct JsonToVariant {
    options: JsonParseOptions,
    value: Vec<u8>,
    metadata: Vec<u8>,
    dict: Dictionary,
    stack: Vec<Frame>,
    children: Vec<Child>,
    /// Scratch space for strings containing escapes.
    scratch: Vec<u8>,
}

impl JsonToVariant {
    /// Creates an encoder with the given options.
    pub fn new(options: JsonParseOptions) -> Self {
        Self {
            options,
            value: Vec::new(),
            metadata: Vec::new(),
            dict: Dictionary::default(),
            stack: Vec::new(),
            children: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Metadata bytes of the last successfully parsed Variant.
    pub fn metadata(&self) -> &[u8] {
        &self.metadata
    }

    /// Value bytes of the last successfully parsed Variant.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// Parses `text` (Spark `parse_json` semantics) into [`metadata`](Self::metadata)
    /// and [`value`](Self::value).
    pub fn parse(&mut self, text: &str) -> Result<(), JsonError> {
        self.value.clear();
        self.metadata.clear();
        self.dict.clear();
        self.stack.clear();
        self.children.clear();
        let result = self
            .parse_value(text)
            .and_then(|()| self.finish_metadata(text.len()));
        if result.is_err() {
            self.value.clear();
            self.metadata.clear();
        }
        result
    }

    /// The parse loop: one value at a time, with containers on an explicit stack.
    fn parse_value(&mut self, text: &str) -> Result<(), JsonError> {
        let b = text.as_bytes();
        let mut i = skip_ws(b, 0);
        loop {
            // Parse one value starting at `i` (whitespace already skipped).
            let Some(&c) = b.get(i) else {
                return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len()));
            };
            match c {
                b'{' => {
                    self.open(i, true)?;
                    i = skip_ws(b, i + 1);
                    match b.get(i) {
                        Some(b'}') => {
                            i += 1;
                            self.close(i - 1)?;
                        }
                        Some(b'"') => {
                            i = self.key(b, i)?;
                            continue;
                        }
                        Some(_) => return Err(JsonError::new(JsonErrorKind::ExpectedKey, i)),
                        None => {
                            return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len()));
                        }
                    }
                }
                b'[' => {
                    self.open(i, false)?;
                    i = skip_ws(b, i + 1);
                    if b.get(i) == Some(&b']') {
                        i += 1;
                        self.close(i - 1)?;
                    } else {
                        self.push_child(0, i)?;
                        continue;
                    }
                }
                b'"' => i = self.string_value(b, i)?,
                b't' => i = self.literal(text, i, b"true", 0x04)?,
                b'f' => i = self.literal(text, i, b"false", 0x08)?,
                b'n' => i = self.literal(text, i, b"null", 0x00)?,
                b'N' if self.options.allow_nan => {
                    i = self.literal(text, i, b"NaN", 0x1C)?;
                    self.value.extend_from_slice(&f64::NAN.to_le_bytes());
                }
                b'-' | b'0'..=b'9' => {
                    i = self.number(text, i)?;
                    if self.stack.is_empty()
                        && let Some(&next) = b.get(i)
                        && !matches!(next, b' ' | b'\t' | b'\n' | b'\r')
                    {
                        return Err(JsonError::new(
                            JsonErrorKind::ExpectedWhitespaceAfterNumber,
                            i,
                        ));
                    }
                }
                _ => return Err(JsonError::new(JsonErrorKind::ExpectedValue, i)),
            }
            // After a complete value: continue or close the enclosing containers.
            loop {
                let Some(frame) = self.stack.last() else {
                    // The first complete value is done; anything after it is
                    // ignored, unless the caller asked otherwise.
                    let rest = skip_ws(b, i);
                    if self.options.reject_trailing_content && rest < b.len() {
                        return Err(JsonError::new(JsonErrorKind::TrailingContent, rest));
                    }
                    return Ok(());
                };
                let is_object = frame.is_object;
                i = skip_ws(b, i);
                match b.get(i) {
                    Some(b',') => {
                        i = skip_ws(b, i + 1);
                        if is_object {
                            match b.get(i) {
                                Some(b'"') => i = self.key(b, i)?,
                                Some(_) => {
                                    return Err(JsonError::new(JsonErrorKind::ExpectedKey, i));
                                }
                                None => {
                                    return Err(JsonError::new(
                                        JsonErrorKind::EofWhileParsing,
                                        b.len(),
                                    ));
                                }
                            }
                        } else {
                            self.push_child(0, i)?;
                        }
                        break;
                    }
                    Some(b'}') if is_object => {
                        self.close(i)?;
                        i += 1;
                    }
                    Some(b']') if !is_object => {
                        self.close(i)?;
                        i += 1;
                    }
                    Some(_) => return Err(JsonError::new(JsonErrorKind::ExpectedCommaOrEnd, i)),
                    None => return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len())),
                }
            }
        }
    }

    fn open(&mut self, pos: usize, is_object: bool) -> Result<(), JsonError> {
        if self.stack.len() >= self.options.max_depth {
            return Err(JsonError::new(
                JsonErrorKind::TooDeep(self.options.max_depth),
                pos,
            ));
        }
        self.stack.push(Frame {
            start: self.value.len(),
            first_child: self.children.len(),
            is_object,
        });
        Ok(())
    }

    /// Records that the next value written is a child of the innermost container.
    #[inline]
    fn push_child(&mut self, id: u32, pos: usize) -> Result<(), JsonError> {
        let start = self.stack.last().map_or(0, |f| f.start);
        if self.value.len() > SIZE_LIMIT {
            return Err(JsonError::new(JsonErrorKind::TooLarge, pos));
        }
        self.children.push(Child {
            id,
            offset: (self.value.len() - start) as u32,
            pos,
        });
        Ok(())
    }

    /// Parses an object key at `i` (an opening quote), interns it, expects the colon
    /// and records the child. Returns the position of the value.
    fn key(&mut self, b: &[u8], i: usize) -> Result<usize, JsonError> {
        let (end, escaped) = scan_string(b, i + 1, &mut self.scratch)?;
        let key: &[u8] = if escaped {
            &self.scratch
        } else {
            b.get(i + 1..end).unwrap_or(&[])
        };
        if longer_than(key, MAX_KEY_CHARS) {
            return Err(JsonError::new(JsonErrorKind::KeyTooLong, i));
        }
        let id = self
            .dict
            .intern(key)
            .ok_or_else(|| JsonError::new(JsonErrorKind::TooLarge, i))?;
        let mut j = skip_ws(b, end + 1);
        match b.get(j) {
            Some(b':') => j = skip_ws(b, j + 1),
            Some(_) => return Err(JsonError::new(JsonErrorKind::ExpectedColon, j)),
            None => return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len())),
        }
        self.push_child(id, i)?;
        Ok(j)
    }

    /// Parses a string value at `i` (an opening quote) and writes it.
    fn string_value(&mut self, b: &[u8], i: usize) -> Result<usize, JsonError> {
        let (end, escaped) = scan_string(b, i + 1, &mut self.scratch)?;
        let s: &[u8] = if escaped {
            &self.scratch
        } else {
            b.get(i + 1..end).unwrap_or(&[])
        };
        if longer_than(s, MAX_STRING_CHARS) {
            return Err(JsonError::new(JsonErrorKind::StringTooLong, i));
        }
        if s.len() <= 63 {
            self.value.push(0x01 | ((s.len() as u8) << 2));
        } else {
            self.value.push(0x40);
            self.value
                .extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        self.value.extend_from_slice(s);
        Ok(end + 1)
    }

    /// Parses `true`, `false` or `null` at `i` and writes `header`.
    fn literal(
        &mut self,
        text: &str,
        i: usize,
        word: &[u8],
        header: u8,
    ) -> Result<usize, JsonError> {
        let b = text.as_bytes();
        let end = i + word.len();
        if b.get(i..end) != Some(word) {
            return Err(JsonError::new(JsonErrorKind::InvalidLiteral, i));
        }
        // Jackson rejects a literal that runs into identifier characters (`truex`).
        if let Some(next) = text.get(end..).and_then(|s| s.chars().next())
            && is_identifier_continuation(next)
        {
            return Err(JsonError::new(JsonErrorKind::InvalidLiteral, i));
        }
        self.value.push(header);
        Ok(end)
    }

    /// Parses a number at `start` and writes it; returns the position after it.
    fn number(&mut self, text: &str, start: usize) -> Result<usize, JsonError> {
        let b = text.as_bytes();
        let invalid = |at: usize| JsonError::new(JsonErrorKind::InvalidNumber, at);
        let mut i = start;
        let negative = b.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => {
                i += 1;
                if b.get(i).is_some_and(u8::is_ascii_digit) {
                    return Err(invalid(start));
                }
            }
            Some(b'1'..=b'9') => {
                i += 1;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(invalid(i)),
        }
        let int_end = i;
        let too_long = |from: usize, to: usize| {
            if to - from > MAX_NUMBER_DIGITS {
                Err(JsonError::new(JsonErrorKind::NumberTooLong, start))
            } else {
                Ok(())
            }
        };
        too_long(int_start, int_end)?;
        let mut frac = None;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let frac_start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == frac_start {
                return Err(invalid(i));
            }
            too_long(frac_start, i)?;
            frac = Some((frac_start, i));
        }
        let mut exponent = false;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            exponent = true;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == exp_start {
                return Err(invalid(i));
            }
            too_long(exp_start, i)?;
        }
        let int_digits = b.get(int_start..int_end).unwrap_or(&[]);

        if exponent {
            return self.double(text, start, i);
        }
        match frac {
            None => {
                if int_digits.len() <= 18 {
                    let u = fold_digits_u64(int_digits) as i64;
                    self.write_int(if negative { -u } else { u });
                } else if int_digits.len() <= MAX_DECIMAL_PRECISION {
                    let u = fold_digits_u128(int_digits.iter());
                    let v = if negative { -(u as i128) } else { u as i128 };
                    match i64::try_from(v) {
                        Ok(v) => self.write_int(v),
                        Err(_) => self.write_decimal(v, 0, int_digits.len()),
                    }
                } else {
                    return self.double(text, start, i);
                }
            }
            Some((frac_start, mut frac_end)) => {
                // Spark reads the literal as a Java BigDecimal and keeps it as a
                // decimal only when its scale and precision, before trailing zeros
                // are stripped, are both at most 38.
                let full_scale = frac_end - frac_start;
                let full_significant = int_digits
                    .iter()
                    .chain(b.get(frac_start..frac_end).unwrap_or(&[]))
                    .skip_while(|&&d| d == b'0')
                    .count();
                if full_scale > MAX_DECIMAL_PRECISION || full_significant > MAX_DECIMAL_PRECISION {
                    return self.double(text, start, i);
                }
                while frac_end > frac_start && b.get(frac_end - 1) == Some(&b'0') {
                    frac_end -= 1;
                }
                let frac_digits = b.get(frac_start..frac_end).unwrap_or(&[]);
                let scale = frac_digits.len();
                let significant = int_digits
                    .iter()
                    .chain(frac_digits)
                    .skip_while(|&&d| d == b'0')
                    .count();
                let precision = significant.max(scale).max(1);
                if precision > MAX_DECIMAL_PRECISION {
                    return self.double(text, start, i);
                }
                let u = fold_digits_u128(int_digits.iter().chain(frac_digits));
                let v = if negative { -(u as i128) } else { u as i128 };
                self.write_decimal(v, scale as u8, precision);
            }
        }
        Ok(i)
    }

    fn double(&mut self, text: &str, start: usize, end: usize) -> Result<usize, JsonError> {
        let d: f64 = text
            .get(start..end)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| JsonError::new(JsonErrorKind::InvalidNumber, start))?;
        self.value.push(0x1C);
        self.value.extend_from_slice(&d.to_le_bytes());
        Ok(end)
    }

    #[inline]
    fn write_int(&mut self, v: i64) {
        if let Ok(v) = i8::try_from(v) {
            self.value.extend_from_slice(&[0x0C, v as u8]);
        } else if let Ok(v) = i16::try_from(v) {
            self.value.push(0x10);
            self.value.extend_from_slice(&v.to_le_bytes());
        } else if let Ok(v) = i32::try_from(v) {
            self.value.push(0x14);
            self.value.extend_from_slice(&v.to_le_bytes());
        } else {
            self.value.push(0x18);
            self.value.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// Writes a decimal whose unscaled value has at most `precision` (≤ 38) digits.
    fn write_decimal(&mut self, unscaled: i128, scale: u8, precision: usize) {
        if precision <= 9 {
            self.value.extend_from_slice(&[0x20, scale]);
            self.value
                .extend_from_slice(&(unscaled as i32).to_le_bytes());
        } else if precision <= 18 {
            self.value.extend_from_slice(&[0x24, scale]);
            self.value
                .extend_from_slice(&(unscaled as i64).to_le_bytes());
        } else {
            self.value.extend_from_slice(&[0x28, scale]);
            self.value.extend_from_slice(&unscaled.to_le_bytes());
        }
    }

    /// Closes the innermost container (its closing bracket is at input offset `pos`):
    /// sorts object fields, checks duplicates, and splices the header in front of the
    /// children already written.
    fn close(&mut self, pos: usize) -> Result<(), JsonError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let first = frame.first_child;
        if self.value.len() - frame.start > SIZE_LIMIT {
            return Err(JsonError::new(JsonErrorKind::TooLarge, pos));
        }
        if frame.is_object {
            self.finish_object_fields(&frame)?;
        }
        let children = self.children.get(first..).unwrap_or(&[]);
        let n = children.len();
        let data_size = self.value.len() - frame.start;
        if data_size > SIZE_LIMIT {
            return Err(JsonError::new(JsonErrorKind::TooLarge, pos));
        }
        let too_large = || JsonError::new(JsonErrorKind::TooLarge, pos);
        let offset_width = encoding::uint_width(data_size).ok_or_else(too_large)?;
        let (header, id_width) = if frame.is_object {
            let max_id = children.iter().map(|c| c.id).max().unwrap_or(0);
            let id_width = encoding::uint_width(max_id as usize).ok_or_else(too_large)?;
            (encoding::object_header(n, id_width, offset_width), id_width)
        } else {
            (encoding::array_header(n, offset_width), 0)
        };
        let header_size = encoding::container_header_size(n, id_width, offset_width);

        // Make room for the header in front of the children and write it there.
        let old_len = self.value.len();
        self.value.resize(old_len + header_size, 0);
        self.value
            .copy_within(frame.start..old_len, frame.start + header_size);
        let h = &mut self.value[frame.start..frame.start + header_size];
        h[0] = header;
        let mut p = 1;
        put_uint(h, &mut p, n, encoding::count_width(n));
        if frame.is_object {
            for c in children {
                put_uint(h, &mut p, c.id as usize, id_width);
            }
        }
        for c in children {
            put_uint(h, &mut p, c.offset as usize, offset_width);
        }
        put_uint(h, &mut p, data_size, offset_width);
        self.children.truncate(first);
        Ok(())
    }

    /// Sorts the fields of the object being closed by key name and handles
    /// duplicate keys (error, or keep the last occurrence and compact the data).
    fn finish_object_fields(&mut self, frame: &Frame) -> Result<(), JsonError> {
        let dict = &self.dict;
        let fields = self
            .children
            .get_mut(frame.first_child..)
            .unwrap_or(&mut []);
        if fields.len() < 2 {
            return Ok(());
        }
        // Within equal keys, input order (ascending offset) is kept.
        let in_order = |a: &Child, b: &Child| {
            dict.key(a.id)
                .cmp(dict.key(b.id))
                .then(a.offset.cmp(&b.offset))
        };
        if !fields.is_sorted_by(|a, b| in_order(a, b).is_le()) {
            fields.sort_unstable_by(in_order);
        }
        let Some(dup) = fields.windows(2).position(|w| w[0].id == w[1].id) else {
            return Ok(());
        };
        if !self.options.allow_duplicate_keys {
            let later = fields[dup + 1];
            let key = String::from_utf8_lossy(dict.key(later.id)).into_owned();
            return Err(JsonError::new(JsonErrorKind::DuplicateKey(key), later.pos));
        }

        // Last occurrence wins: every offset in the (complete) list, to size the values.
        let data_end = (self.value.len() - frame.start) as u32;
        let mut all_offsets: Vec<u32> = fields.iter().map(|c| c.offset).collect();
        all_offsets.sort_unstable();
        let size_of = |offset: u32| -> u32 {
            let next = all_offsets.partition_point(|&o| o <= offset);
            all_offsets.get(next).copied().unwrap_or(data_end) - offset
        };
        // Keep the last entry of each run of equal ids (the greatest offset).
        let mut kept = 0;
        for r in 0..fields.len() {
            if fields
                .get(r + 1)
                .is_some_and(|next| next.id == fields[r].id)
            {
                continue;
            }
            fields[kept] = fields[r];
            kept += 1;
        }
        let fields = &mut fields[..kept];
        // Move the surviving values down, in input order, and renumber their offsets.
        fields.sort_unstable_by_key(|c| c.offset);
        let mut current = 0u32;
        for c in fields.iter_mut() {
            let size = size_of(c.offset);
            let from = frame.start + c.offset as usize;
            self.value
                .copy_within(from..from + size as usize, frame.start + current as usize);
            c.offset = current;
            current += size;
        }
        self.value.truncate(frame.start + current as usize);
        fields.sort_unstable_by(|a, b| dict.key(a.id).cmp(dict.key(b.id)));
        self.children.truncate(frame.first_child + kept);
        Ok(())
    }

    /// Writes the metadata bytes from the dictionary and checks the size limits.
    fn finish_metadata(&mut self, end: usize) -> Result<(), JsonError> {
        if self.value.len() > SIZE_LIMIT {
            return Err(JsonError::new(JsonErrorKind::TooLarge, end));
        }
        let n = self.dict.len();
        let total = self.dict.bytes.len();
        let width = encoding::uint_width(total.max(n))
            .ok_or_else(|| JsonError::new(JsonErrorKind::TooLarge, end))?;
        let size = 1 + width + (n + 1) * width + total;
        if size > SIZE_LIMIT {
            return Err(JsonError::new(JsonErrorKind::TooLarge, end));
        }
        let m = &mut self.metadata;
        m.reserve(size);
        m.push(0x01 | ((width as u8 - 1) << 6));
        encoding::push_uint(m, n, width);
        for &o in &self.dict.offsets {
            encoding::push_uint(m, o as usize, width);
        }
        m.extend_from_slice(&self.dict.bytes);
        Ok(())
    }
}

impl Default for JsonToVariant {
    fn default() -> Self {
        Self::new(JsonParseOptions::default())
    }
}

impl fmt::Debug for JsonToVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonToVariant")
            .field("options", &self.options)
            .field("metadata_len", &self.metadata.len())
            .field("value_len", &self.value.len())
            .finish_non_exhaustive()
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

#[inline]
fn fold_digits_u64(digits: &[u8]) -> u64 {
    digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'))
}

/// Folds at most 38 significant digits (plus leading zeros) into a `u128`.
#[inline]
fn fold_digits_u128<'a>(digits: impl Iterator<Item = &'a u8>) -> u128 {
    digits.fold(0u128, |acc, &d| {
        acc.wrapping_mul(10).wrapping_add(u128::from(d - b'0'))
    })
}

/// Whether `c` would continue an identifier in Java (approximation of
/// `Character.isJavaIdentifierPart` restricted to what Jackson checks: characters
/// `>= '0'` other than `]` and `}`).
fn is_identifier_continuation(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c == '_'
        || c == '\u{7f}'
        || (!c.is_ascii() && (c.is_alphanumeric() || ('\u{80}'..='\u{9f}').contains(&c)))
}

/// Whether any byte of `w` is `"`, `\` or below 0x20.
#[inline]
fn has_special_byte(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (LO * b'"' as u64);
    let backslash = w ^ (LO * b'\\' as u64);
    let t = (quote.wrapping_sub(LO) & !quote)
        | (backslash.wrapping_sub(LO) & !backslash)
        | (w.wrapping_sub(LO * 0x20) & !w);
    t & HI != 0
}

/// Scans a string body starting at `i` (just after the opening quote). Returns the
/// position of the closing quote and whether escapes were present; in that case the
/// decoded bytes are in `scratch`, otherwise the body is `b[i..end]` verbatim.
#[inline]
/// Whether the UTF-8 text `s` is longer than `max` UTF-16 code units (the
/// characters Jackson counts). Never more units than bytes, so most texts are
/// answered by their length alone.
fn longer_than(s: &[u8], max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    // A byte that starts a character counts one unit; a four-byte character
    // (lead byte 0xF0 and up) counts two.
    let units: usize = s
        .iter()
        .map(|&c| usize::from(c & 0xC0 != 0x80) + usize::from(c >= 0xF0))
        .sum();
    units > max
}

fn scan_string(b: &[u8], mut i: usize, scratch: &mut Vec<u8>) -> Result<(usize, bool), JsonError> {
    let start = i;
    loop {
        // Fast path: skip eight ordinary bytes at a time.
        while let Some(chunk) = b.get(i..).and_then(|s| s.first_chunk::<8>()) {
            if has_special_byte(u64::from_le_bytes(*chunk)) {
                break;
            }
            i += 8;
        }
        match b.get(i) {
            None => return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len())),
            Some(b'"') => return Ok((i, false)),
            Some(b'\\') => {
                scratch.clear();
                scratch.extend_from_slice(b.get(start..i).unwrap_or(&[]));
                return scan_escaped(b, i, scratch).map(|end| (end, true));
            }
            Some(&c) if c < 0x20 => {
                return Err(JsonError::new(JsonErrorKind::ControlCharacterInString, i));
            }
            Some(_) => i += 1,
        }
    }
}

/// Slow path of [`scan_string`]: decodes from the first backslash at `i` into
/// `scratch`; returns the position of the closing quote.
fn scan_escaped(b: &[u8], mut i: usize, scratch: &mut Vec<u8>) -> Result<usize, JsonError> {
    loop {
        let run_start = i;
        while let Some(&c) = b.get(i) {
            if c == b'"' || c == b'\\' || c < 0x20 {
                break;
            }
            i += 1;
        }
        scratch.extend_from_slice(b.get(run_start..i).unwrap_or(&[]));
        match b.get(i) {
            None => return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len())),
            Some(b'"') => return Ok(i),
            Some(b'\\') => {
                let escape_at = i;
                let Some(&e) = b.get(i + 1) else {
                    return Err(JsonError::new(JsonErrorKind::EofWhileParsing, b.len()));
                };
                i += 2;
                let byte = match e {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        let (ch, next) = unicode_escape(b, escape_at)?;
                        i = next;
                        let mut buf = [0u8; 4];
                        scratch.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        continue;
                    }
                    _ => return Err(JsonError::new(JsonErrorKind::InvalidEscape, escape_at)),
                };
                scratch.push(byte);
            }
            Some(_) => {
                return Err(JsonError::new(JsonErrorKind::ControlCharacterInString, i));
            }
        }
    }
}

/// Four hex digits at `i`.
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let digits = b.get(i..i + 4)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc * 16 + v)
    })
}

/// Decodes `\uXXXX` (and a following low surrogate escape when needed) starting at
/// the backslash at `at`. Returns the character and the position after the escape(s).
fn unicode_escape(b: &[u8], at: usize) -> Result<(char, usize), JsonError> {
    let bad_hex = |at: usize| {
        if b.len() < at + 6
            && b.get(at + 2..)
                .is_some_and(|s| s.iter().all(u8::is_ascii_hexdigit))
        {
            JsonError::new(JsonErrorKind::EofWhileParsing, b.len())
        } else {
            JsonError::new(JsonErrorKind::InvalidUnicode, at)
        }
    };
    let hi = hex4(b, at + 2).ok_or_else(|| bad_hex(at))?;
    let next = at + 6;
    let lone = JsonError::new(JsonErrorKind::LoneSurrogate, at);
    match hi {
        0xD800..=0xDBFF => {
            if b.get(next) != Some(&b'\\') || b.get(next + 1) != Some(&b'u') {
                return Err(lone);
            }
            let lo = hex4(b, next + 2).ok_or_else(|| bad_hex(next))?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(lone);
            }
            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            char::from_u32(c).map(|c| (c, next + 6)).ok_or(lone)
        }
        0xDC00..=0xDFFF => Err(lone),
        _ => char::from_u32(hi).map(|c| (c, next)).ok_or(lone),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet_variant::{Variant, VariantDecimal4, VariantDecimal8, VariantDecimal16};

    fn parse_with(opts: JsonParseOptions, text: &str) -> Result<(Vec<u8>, Vec<u8>), JsonError> {
        let mut p = JsonToVariant::new(opts);
        p.parse(text)?;
        Ok((p.metadata().to_vec(), p.value().to_vec()))
    }

    fn parse(text: &str) -> (Vec<u8>, Vec<u8>) {
        match parse_with(JsonParseOptions::default(), text) {
            Ok(r) => r,
            Err(e) => panic!("{text:?} failed: {e}"),
        }
    }

    fn err(text: &str) -> JsonError {
        match parse_with(JsonParseOptions::default(), text) {
            Ok((m, v)) => panic!("{text:?} unexpectedly parsed: {m:02x?} {v:02x?}"),
            Err(e) => e,
        }
    }

    /// Parses and fully validates; calls `check` with the decoded variant.
    fn with_variant(text: &str, check: impl FnOnce(&Variant<'_, '_>)) {
        let (m, v) = parse(text);
        let variant = Variant::try_new(&m, &v)
            .unwrap_or_else(|e| panic!("{text:?}: invalid variant {m:02x?} {v:02x?}: {e}"));
        check(&variant);
    }

    fn scalar(text: &str) -> Variant<'static, 'static> {
        let (m, v) = parse(text);
        let m: &'static [u8] = Box::leak(m.into_boxed_slice());
        let v: &'static [u8] = Box::leak(v.into_boxed_slice());
        Variant::try_new(m, v).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn scalars() {
        let d4 = |i, s| Variant::Decimal4(VariantDecimal4::try_new(i, s).unwrap());
        let d8 = |i, s| Variant::Decimal8(VariantDecimal8::try_new(i, s).unwrap());
        let d16 = |i, s| Variant::Decimal16(VariantDecimal16::try_new(i, s).unwrap());
        let cases: Vec<(&str, Variant<'static, 'static>)> = vec![
            ("null", Variant::Null),
            ("true", Variant::BooleanTrue),
            ("false", Variant::BooleanFalse),
            ("0", Variant::Int8(0)),
            ("-0", Variant::Int8(0)),
            ("1", Variant::Int8(1)),
            ("-128", Variant::Int8(-128)),
            ("127", Variant::Int8(127)),
            ("128", Variant::Int16(128)),
            ("-129", Variant::Int16(-129)),
            ("32767", Variant::Int16(32767)),
            ("32768", Variant::Int32(32768)),
            ("-2147483648", Variant::Int32(i32::MIN)),
            ("2147483648", Variant::Int64(2147483648)),
            ("9223372036854775807", Variant::Int64(i64::MAX)),
            ("-9223372036854775808", Variant::Int64(i64::MIN)),
            ("123456789012345678", Variant::Int64(123456789012345678)),
            ("9223372036854775808", d16(9223372036854775808, 0)),
            ("-9223372036854775809", d16(-9223372036854775809, 0)),
            (
                "99999999999999999999999999999999999999",
                d16(99999999999999999999999999999999999999, 0),
            ),
            (
                "-99999999999999999999999999999999999999",
                d16(-99999999999999999999999999999999999999, 0),
            ),
            (
                "999999999999999999999999999999999999999",
                Variant::Double(999999999999999999999999999999999999999.0),
            ),
            ("1.50", d4(15, 1)),
            ("1.0", d4(1, 0)),
            ("-0.0", d4(0, 0)),
            ("0.0", d4(0, 0)),
            ("100.0", d4(100, 0)),
            ("0.001", d4(1, 3)),
            ("-0.00100", d4(-1, 3)),
            ("1.23456789", d4(123456789, 8)),
            ("123456789.0", d4(123456789, 0)),
            ("1234567890.5", d8(12345678905, 1)),
            ("0.000000001", d4(1, 9)),
            ("0.0000000001", d8(1, 10)),
            ("123456789012345678.9", d16(1234567890123456789, 1)),
            ("0.00000000000000000000000000000000000001", d16(1, 38)),
            (
                "0.000000000000000000000000000000000000001",
                Variant::Double(1e-39),
            ),
            (
                "1.2345678901234567890123456789012345678",
                d16(12345678901234567890123456789012345678, 37),
            ),
            (
                "1.23456789012345678901234567890123456789",
                Variant::Double(1.234_567_890_123_456_8),
            ),
            ("1e3", Variant::Double(1000.0)),
            ("1E3", Variant::Double(1000.0)),
            ("1.5e+2", Variant::Double(150.0)),
            ("2.5E-1", Variant::Double(0.25)),
            ("0e0", Variant::Double(0.0)),
            ("1e309", Variant::Double(f64::INFINITY)),
            ("-1e309", Variant::Double(f64::NEG_INFINITY)),
            ("1e-400", Variant::Double(0.0)),
            ("\"\"", Variant::from("")),
            ("\"abc\"", Variant::from("abc")),
        ];
        for (text, expected) in cases {
            assert_eq!(scalar(text), expected, "{text}");
            // Also inside an array, and surrounded by whitespace.
            let wrapped = format!(" \t\r\n[ {text} ]\n");
            with_variant(&wrapped, |v| {
                assert_eq!(
                    v.as_list().unwrap().get(0),
                    Some(expected.clone()),
                    "{wrapped}"
                );
            });
        }
    }

    #[test]
    fn negative_zero_double_keeps_sign() {
        let Variant::Double(d) = scalar("-0e0") else {
            panic!("not a double");
        };
        assert!(d == 0.0 && d.is_sign_negative());
        let Variant::Double(d) = scalar("-0.0e5") else {
            panic!("not a double");
        };
        assert!(d.is_sign_negative());
    }

    #[test]
    fn spark_bytes() {
        let (m, v) = parse("1");
        assert_eq!(m, [0x01, 0x00, 0x00]);
        assert_eq!(v, [0x0c, 0x01]);
        assert_eq!(parse("null"), (vec![1, 0, 0], vec![0x00]));
        assert_eq!(parse("{}"), (vec![1, 0, 0], vec![0x02, 0x00, 0x00]));
        assert_eq!(parse("[]"), (vec![1, 0, 0], vec![0x03, 0x00, 0x00]));
        assert_eq!(parse("\"ab\""), (vec![1, 0, 0], vec![0x09, b'a', b'b']));
        assert_eq!(parse("1.50").1, vec![0x20, 0x01, 0x0f, 0x00, 0x00, 0x00]);

        // Keys in first-seen order in the metadata; ids listed by name, values in input order.
        let (m, v) = parse(r#"{"b":1,"a":2}"#);
        assert_eq!(m, [0x01, 0x02, 0x00, 0x01, 0x02, b'b', b'a']);
        assert_eq!(
            v,
            [
                0x02, 0x02, // object, 1-byte ids and offsets, 2 fields
                0x01, 0x00, // ids: a (1), b (0)
                0x02, 0x00, 0x04, // offsets: a at 2, b at 0, end 4
                0x0c, 0x01, 0x0c, 0x02, // values in input order: 1, 2
            ]
        );
        let variant = Variant::try_new(&m, &v).unwrap();
        let obj = variant.as_object().unwrap();
        assert_eq!(obj.get("a"), Some(Variant::Int8(2)));
        assert_eq!(obj.get("b"), Some(Variant::Int8(1)));

        let (m, v) = parse("[1,\"x\",null]");
        assert_eq!(m, [1, 0, 0]);
        assert_eq!(
            v,
            [
                0x03, 0x03, 0x00, 0x02, 0x04, 0x05, 0x0c, 0x01, 0x05, b'x', 0x00
            ]
        );
    }

    #[test]
    fn metadata_first_seen_order_across_levels() {
        let text = r#"{"event_id":1,"ts":2,"flag":true,"score":1.5,"type":"t",
            "user":{"id":7,"name":"n"},"tags":["x"],"ts":null}"#;
        // (duplicate "ts" → error; drop it for the order test)
        assert!(matches!(err(text).kind, JsonErrorKind::DuplicateKey(ref k) if k == "ts"));
        let text = text.replace(r#","ts":null"#, "");
        let (m, _) = parse(&text);
        let meta = parquet_variant::VariantMetadata::try_new(&m).unwrap();
        let keys: Vec<&str> = meta.iter().collect();
        assert_eq!(
            keys,
            [
                "event_id", "ts", "flag", "score", "type", "user", "id", "name", "tags"
            ]
        );
        assert_eq!(m[0], 0x01, "unsorted, 1-byte offsets");
    }

    #[test]
    fn nested_document() {
        let text = r#" {"z": {"y": [1, {"k": "v", "a": []}, -2.50], "x": {}},
                        "é": "ü\u00e9\ud83d\ude00", "A": null, "_": false, "0": 1e2} trailing"#;
        with_variant(text, |v| {
            let o = v.as_object().unwrap();
            assert_eq!(o.len(), 5);
            let names: Vec<&str> = o.iter().map(|(k, _)| k).collect();
            assert_eq!(names, ["0", "A", "_", "z", "é"]);
            assert_eq!(o.get("0"), Some(Variant::Double(100.0)));
            assert_eq!(o.get("A"), Some(Variant::Null));
            assert_eq!(o.get("_"), Some(Variant::BooleanFalse));
            assert_eq!(o.get("é").unwrap().as_string(), Some("üé😀"));
            let z = o.get("z").unwrap();
            let z = z.as_object().unwrap();
            assert_eq!(z.get("x").unwrap().as_object().unwrap().len(), 0);
            let y = z.get("y").unwrap();
            let y = y.as_list().unwrap();
            assert_eq!(y.len(), 3);
            assert_eq!(y.get(0), Some(Variant::Int8(1)));
            assert_eq!(
                y.get(2),
                Some(Variant::Decimal4(VariantDecimal4::try_new(-25, 1).unwrap()))
            );
            let inner = y.get(1).unwrap();
            let inner = inner.as_object().unwrap();
            assert_eq!(inner.get("k").unwrap().as_string(), Some("v"));
            assert_eq!(inner.get("a").unwrap().as_list().unwrap().len(), 0);
        });
    }

    #[test]
    fn strings_and_escapes() {
        let cases = [
            (r#""a\"b""#, "a\"b"),
            (r#""\\ \/ \b \f \n \r \t""#, "\\ / \u{8} \u{c} \n \r \t"),
            (r#""\u0041\u00e9\u20AC""#, "Aé€"),
            (r#""\ud83d\ude00""#, "😀"),
            (r#""x\uD83D\uDE00y""#, "x😀y"),
            (r#""\u0000""#, "\0"),
            ("\"é😀 raw\"", "é😀 raw"),
            ("\"\u{7f}\u{2028}\"", "\u{7f}\u{2028}"),
        ];
        for (text, expected) in cases {
            with_variant(text, |v| {
                assert_eq!(v.as_string(), Some(expected), "{text}");
            });
        }
        // Short string up to 63 bytes, long string beyond, with and without escapes.
        // (Zero-length keys are covered by `empty_key`.)
        for len in [0usize, 1, 7, 8, 9, 62, 63, 64, 65, 300, 70_000] {
            let s = "x".repeat(len);
            let (_, v) = parse(&format!("\"{s}\""));
            if len <= 63 {
                assert_eq!(v[0], 0x01 | ((len as u8) << 2));
                assert_eq!(v.len(), 1 + len);
            } else {
                assert_eq!(v[0], 0x40);
                assert_eq!(&v[1..5], &(len as u32).to_le_bytes());
                assert_eq!(v.len(), 5 + len);
            }
            let escaped = format!("\"\\n{s}\"");
            with_variant(&escaped, |v| {
                assert_eq!(v.as_string().map(str::len), Some(len + 1));
            });
            if len == 0 {
                continue;
            }
            // Keys past Spark's 50,000 characters are refused: two halves
            // give the dictionary as many bytes.
            let key = &s[..len.div_ceil(2)];
            let other = format!("{}y", &key[1..]);
            with_variant(&format!("{{\"{key}\":\"{s}\",\"{other}\":1}}"), |v| {
                assert_eq!(
                    v.as_object()
                        .unwrap()
                        .get(key)
                        .and_then(|x| x.as_string().map(str::to_owned)),
                    Some(s.clone())
                );
            });
        }
        // Escaped and unescaped spellings of one key are the same key.
        assert!(matches!(
            err(r#"{"a":1,"\u0061":2}"#).kind,
            JsonErrorKind::DuplicateKey(ref k) if k == "a"
        ));
    }

    #[test]
    fn empty_key() {
        // Spark writes the empty key as a zero-length dictionary entry (offsets 0, 0).
        let (m, v) = parse(r#"{"":1}"#);
        assert_eq!(m, [0x01, 0x01, 0x00, 0x00]);
        assert_eq!(v, [0x02, 0x01, 0x00, 0x00, 0x02, 0x0c, 0x01]);
        // parquet-variant 59.3.2's *full* validation wrongly requires strictly increasing
        // offsets in unsorted dictionaries and rejects this; shallow validation reads it.
        assert!(Variant::try_new(&m, &v).is_err());
        let variant = Variant::new(&m, &v);
        assert_eq!(variant.as_object().unwrap().get(""), Some(Variant::Int8(1)));
        let (m, v) = parse(r#"{"b":{"":"x"},"":null}"#);
        let variant = Variant::new(&m, &v);
        let obj = variant.as_object().unwrap();
        assert_eq!(obj.get(""), Some(Variant::Null));
        let inner = obj.get("b").unwrap();
        assert_eq!(inner.as_object().unwrap().get(""), Some(Variant::from("x")));
    }

    #[test]
    fn invalid_inputs() {
        use JsonErrorKind::*;
        let cases: Vec<(&str, JsonErrorKind)> = vec![
            ("", EofWhileParsing),
            ("   \n\t ", EofWhileParsing),
            ("NaN", ExpectedValue),
            ("Infinity", ExpectedValue),
            ("-Infinity", InvalidNumber),
            ("01", InvalidNumber),
            ("-01", InvalidNumber),
            ("00", InvalidNumber),
            (".5", ExpectedValue),
            ("+1", ExpectedValue),
            ("1.", InvalidNumber),
            ("1.e3", InvalidNumber),
            ("1e", InvalidNumber),
            ("1e+", InvalidNumber),
            ("-", InvalidNumber),
            ("- 1", InvalidNumber),
            ("[01]", InvalidNumber),
            ("[1.]", InvalidNumber),
            ("1x", ExpectedWhitespaceAfterNumber),
            ("1,2", ExpectedWhitespaceAfterNumber),
            ("1.5.3", ExpectedWhitespaceAfterNumber),
            ("tru", InvalidLiteral),
            ("nul", InvalidLiteral),
            ("True", ExpectedValue),
            ("truex", InvalidLiteral),
            ("null1", InvalidLiteral),
            ("{a:1}", ExpectedKey),
            ("{'a':1}", ExpectedKey),
            ("'a'", ExpectedValue),
            ("{\"a\" 1}", ExpectedColon),
            ("{\"a\":1 \"b\":2}", ExpectedCommaOrEnd),
            ("[1 2]", ExpectedCommaOrEnd),
            ("[1}", ExpectedCommaOrEnd),
            ("{\"a\":1]", ExpectedCommaOrEnd),
            ("[1,]", ExpectedValue),
            ("[,1]", ExpectedValue),
            ("{\"a\":1,}", ExpectedKey),
            ("{,}", ExpectedKey),
            ("[1,2", EofWhileParsing),
            ("[", EofWhileParsing),
            ("{", EofWhileParsing),
            ("{\"a\"", EofWhileParsing),
            ("{\"a\":", EofWhileParsing),
            ("\"abc", EofWhileParsing),
            ("\"abc\\", EofWhileParsing),
            ("// c\n1", ExpectedValue),
            ("/* c */ 1", ExpectedValue),
            ("[1 /* c */]", ExpectedCommaOrEnd),
            ("\"a\tb\"", ControlCharacterInString),
            ("\"a\nb\"", ControlCharacterInString),
            ("\"\\na\u{1}\"", ControlCharacterInString),
            ("\"\\x\"", InvalidEscape),
            ("\"\\'\"", InvalidEscape),
            ("\"\\U0041\"", InvalidEscape),
            ("\"\\u12\"", InvalidUnicode),
            ("\"\\u12G4\"", InvalidUnicode),
            ("\"\\ud83d\"", LoneSurrogate),
            ("\"\\ud83dx\"", LoneSurrogate),
            ("\"\\ud83d\\n\"", LoneSurrogate),
            ("\"\\ud83d\\u0041\"", LoneSurrogate),
            ("\"\\ud83d\\ud83d\"", LoneSurrogate),
            ("\"\\ude00\"", LoneSurrogate),
            ("\u{feff}1", ExpectedValue),
            ("\u{c}1", ExpectedValue),
        ];
        for (text, kind) in cases {
            let e = err(text);
            assert_eq!(e.kind, kind, "{text:?}: {e}");
            assert!(e.offset <= text.len(), "{text:?}: {e}");
        }
    }

    #[test]
    fn error_offsets_and_messages() {
        let e = err("invalid");
        assert_eq!(
            (e.kind.clone(), e.offset),
            (JsonErrorKind::ExpectedValue, 0)
        );
        assert_eq!(e.to_string(), "expected value at byte 0");
        let e = err("[1, 2, 01]");
        assert_eq!(e.offset, 7);
        assert_eq!(e.to_string(), "invalid number at byte 7");
        let e = err(r#"{"a":1, "b":2, "a":3}"#);
        assert_eq!(e.offset, 15);
        assert_eq!(e.to_string(), "duplicate key \"a\" at byte 15");
        let e = err("[1,2");
        assert_eq!(e.to_string(), "unexpected end of input at byte 4");
        let e = err(r#""\ud83d""#);
        assert_eq!(e.to_string(), "lone surrogate escape at byte 1");
        // Error type is usable as a boxed std error.
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(!boxed.to_string().is_empty());
    }

    #[test]
    fn trailing_content_rejected_on_request() {
        let strict = JsonParseOptions {
            reject_trailing_content: true,
            ..Default::default()
        };
        for (text, at) in [
            ("1 2", 2),
            ("{\"a\":1}{\"b\":2}", 7),
            ("[1]]", 3),
            ("\"a\" x", 4),
        ] {
            let e = parse_with(strict, text).unwrap_err();
            assert_eq!(e.kind, JsonErrorKind::TrailingContent, "{text}");
            assert_eq!(e.offset, at, "{text}");
        }
        for text in ["1", " 1 \t\r\n", "{\"a\":1}  ", "[] "] {
            assert!(parse_with(strict, text).is_ok(), "{text}");
        }
    }

    #[test]
    fn trailing_content_ignored() {
        let cases: Vec<(&str, Variant<'static, 'static>)> = vec![
            ("1 2", Variant::Int8(1)),
            ("1\n", Variant::Int8(1)),
            ("1\t}", Variant::Int8(1)),
            ("\"a\" \"b\"", Variant::from("a")),
            ("\"a\"x", Variant::from("a")),
            ("true false", Variant::BooleanTrue),
            ("null]", Variant::Null),
            ("true,", Variant::BooleanTrue),
            (
                "1.5 garbage \u{1} \"",
                Variant::Decimal4(VariantDecimal4::try_new(15, 1).unwrap()),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(scalar(text), expected, "{text:?}");
        }
        with_variant(r#"{"a":1} x"#, |v| {
            assert_eq!(v.as_object().unwrap().get("a"), Some(Variant::Int8(1)));
        });
        with_variant("[1,2]]", |v| assert_eq!(v.as_list().unwrap().len(), 2));
        with_variant("[1,2]{\"broken", |v| {
            assert_eq!(v.as_list().unwrap().len(), 2);
        });
        with_variant("{}{}", |v| assert_eq!(v.as_object().unwrap().len(), 0));
    }

    #[test]
    fn duplicate_keys() {
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"a":1}"#,
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"x":[{"k":{"a":null,"a":null}}]}"#,
            r#"[{"b":1},{"c":1,"c":1}]"#,
        ] {
            assert!(
                matches!(err(text).kind, JsonErrorKind::DuplicateKey(_)),
                "{text}"
            );
        }
        // The same key in different objects is fine.
        with_variant(r#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#, |v| {
            assert_eq!(v.as_object().unwrap().len(), 2);
        });

        let allow = JsonParseOptions {
            allow_duplicate_keys: true,
            ..Default::default()
        };
        let cases = [
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#),
            (
                r#"{"a":"long value to drop","b":2,"a":3}"#,
                r#"{"b":2,"a":3}"#,
            ),
            (
                r#"{"b":[1,2,3],"a":1,"b":{"c":"x"},"a":2,"b":4}"#,
                r#"{"b":4,"a":2}"#,
            ),
            (
                r#"{"a":{"a":1,"a":2},"a":{"a":3,"a":4}}"#,
                r#"{"a":{"a":4}}"#,
            ),
        ];
        for (text, equivalent) in cases {
            let (m, v) = parse_with(allow, text).unwrap();
            let got = Variant::try_new(&m, &v).unwrap();
            let (m2, v2) = parse(equivalent);
            let want = Variant::try_new(&m2, &v2).unwrap();
            assert_eq!(got, want, "{text}");
            // The dropped values are gone from the value bytes.
            assert_eq!(v.len(), v2.len(), "{text}");
        }
        // Dictionary still lists every key seen, in first-seen order (as Spark does).
        let (m, v) = parse_with(allow, r#"{"a":{"x":1},"a":2}"#).unwrap();
        let meta = parquet_variant::VariantMetadata::try_new(&m).unwrap();
        assert_eq!(meta.iter().collect::<Vec<_>>(), ["a", "x"]);
        assert_eq!(v, [0x02, 0x01, 0x00, 0x00, 0x02, 0x0c, 0x02]);
    }

    fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
        format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
    }

    #[test]
    fn depth_limits() {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            for depth in [1, 50, 999, 1000] {
                let text = nested(depth, open, close, "1");
                let (m, v) = parse(&text);
                // parquet-variant validates recursively: give it room for 1000 levels.
                let validated = std::thread::Builder::new()
                    .stack_size(256 << 20)
                    .spawn(move || {
                        Variant::try_new(&m, &v)
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    })
                    .unwrap()
                    .join()
                    .unwrap();
                assert_eq!(validated, Ok(()), "depth {depth}");
            }
            let text = nested(1001, open, close, "1");
            let e = err(&text);
            assert_eq!(e.kind, JsonErrorKind::TooDeep(1000));
            assert_eq!(e.offset, 1000 * open.len());
            assert_eq!(
                e.to_string(),
                format!("nesting deeper than 1000 levels at byte {}", e.offset)
            );
            // Very deep input fails cleanly without exhausting the stack.
            assert_eq!(
                err(&nested(100_000, open, close, "1")).kind,
                JsonErrorKind::TooDeep(1000)
            );
        }
        let shallow = JsonParseOptions {
            max_depth: 2,
            ..Default::default()
        };
        assert!(parse_with(shallow, "[[1]]").is_ok());
        assert!(parse_with(shallow, "[[[1]]]").is_err());
        let flat = JsonParseOptions {
            max_depth: 0,
            ..Default::default()
        };
        assert!(parse_with(flat, "1").is_ok());
        assert!(parse_with(flat, "[]").is_err());
    }

    #[test]
    fn wide_containers_and_offsets() {
        // > 255 elements: is_large; > 255 data bytes: 2-byte offsets; > 255 keys: 2-byte ids.
        for n in [255usize, 256, 1000, 70_000] {
            let arr = format!("[{}]", vec!["1"; n].join(","));
            let (m, v) = parse(&arr);
            let variant = Variant::try_new(&m, &v).unwrap();
            assert_eq!(variant.as_list().unwrap().len(), n);
            assert_eq!(v[0] & 0x10 != 0, n > 255, "array is_large for {n}");
            let data = 2 * n;
            let ow = encoding::uint_width(data).unwrap();
            assert_eq!(((v[0] >> 2) & 3) as usize + 1, ow);

            let fields: Vec<String> = (0..n).rev().map(|i| format!("\"k{i}\":{i}")).collect();
            let obj = format!("{{{}}}", fields.join(","));
            let (m, v) = parse(&obj);
            let variant = Variant::try_new(&m, &v).unwrap();
            let o = variant.as_object().unwrap();
            assert_eq!(o.len(), n);
            assert_eq!(v[0] & 0x40 != 0, n > 255, "object is_large for {n}");
            let id_width = encoding::uint_width(n - 1).unwrap();
            assert_eq!(((v[0] >> 4) & 3) as usize + 1, id_width);
            for i in [0, n / 2, n - 1] {
                let got = o.get(&format!("k{i}")).and_then(|x| x.as_int64());
                assert_eq!(got, Some(i as i64));
            }
            // metadata offset width follows total key bytes
            let total: usize = (0..n).map(|i| format!("k{i}").len()).sum();
            assert_eq!(
                ((m[0] >> 6) as usize) + 1,
                encoding::uint_width(total.max(n)).unwrap()
            );
        }
    }

    #[test]
    fn reuse_resets_state() {
        let mut p = JsonToVariant::new(JsonParseOptions::default());
        let docs = [
            r#"{"b":1,"a":2}"#,
            "1",
            r#"{"c":{"d":[true]}}"#,
            r#"{"a":1,"a":2}"#,
            "[1,2",
            r#"{"a":"x"}"#,
            "\"s\"",
        ];
        for round in 0..200 {
            for doc in docs {
                let expected = parse_with(JsonParseOptions::default(), doc);
                let got = p
                    .parse(doc)
                    .map(|()| (p.metadata().to_vec(), p.value().to_vec()));
                assert_eq!(got, expected, "round {round}: {doc}");
                if got.is_err() {
                    assert!(p.value().is_empty() && p.metadata().is_empty());
                }
            }
        }
        // Many distinct keys across parses (forces hash table growth), then a small doc.
        for i in 0..50 {
            let doc: Vec<String> = (0..i * 20).map(|k| format!("\"{i}_{k}\":{k}")).collect();
            p.parse(&format!("{{{}}}", doc.join(","))).unwrap();
            Variant::try_new(p.metadata(), p.value()).unwrap();
        }
        p.parse(r#"{"z":1}"#).unwrap();
        assert_eq!(p.metadata(), &[0x01, 0x01, 0x00, 0x01, b'z']);
        assert!(format!("{p:?}").contains("JsonToVariant"));
    }

    #[test]
    fn too_large() {
        // Seven strings of the longest length Spark reads: 140 MB of value.
        let part = format!("\"{}\"", "x".repeat(MAX_STRING_CHARS));
        let e = err(&format!("[{}]", [part.as_str(); 7].join(",")));
        assert_eq!(e.kind, JsonErrorKind::TooLarge);
        // Metadata: 2700 distinct keys of the longest length, 135 MB.
        let long_key = "k".repeat(MAX_KEY_CHARS - 5);
        let keys = (0..2700)
            .map(|i| format!("\"{i:05}{long_key}\":1"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(err(&format!("{{{keys}}}")).kind, JsonErrorKind::TooLarge);
    }

    #[test]
    fn jacksons_limits_are_sparks() {
        use JsonErrorKind::{KeyTooLong, NumberTooLong, StringTooLong};
        let digits = |n: usize| "1".repeat(n);
        for (text, refused) in [
            (digits(1000), None),
            (digits(1001), Some(NumberTooLong)),
            (format!("-{}", digits(1000)), None),
            (format!("0.{}", digits(1000)), None),
            (format!("0.{}", digits(1001)), Some(NumberTooLong)),
            (format!("{}.5", digits(1001)), Some(NumberTooLong)),
            (format!("1e{}1", "0".repeat(1000)), Some(NumberTooLong)),
            (format!("[{}]", digits(1001)), Some(NumberTooLong)),
            (format!("{{\"{}\":1}}", "k".repeat(MAX_KEY_CHARS)), None),
            (
                format!("{{\"{}\":1}}", "k".repeat(MAX_KEY_CHARS + 1)),
                Some(KeyTooLong),
            ),
            // Characters are UTF-16 code units: é is one, 😀 two.
            (format!("{{\"{}\":1}}", "é".repeat(MAX_KEY_CHARS)), None),
            (
                format!("{{\"{}\":1}}", "é".repeat(MAX_KEY_CHARS + 1)),
                Some(KeyTooLong),
            ),
            (
                format!("{{\"{}\":1}}", "😀".repeat(MAX_KEY_CHARS / 2)),
                None,
            ),
            (
                format!("{{\"{}\":1}}", "😀".repeat(MAX_KEY_CHARS / 2 + 1)),
                Some(KeyTooLong),
            ),
            (format!("\"{}\"", "a".repeat(MAX_STRING_CHARS)), None),
            (
                format!("\"{}\"", "a".repeat(MAX_STRING_CHARS + 1)),
                Some(StringTooLong),
            ),
            (format!("\"{}\"", "😀".repeat(MAX_STRING_CHARS / 2)), None),
            (
                format!("\"{}\"", "😀".repeat(MAX_STRING_CHARS / 2 + 1)),
                Some(StringTooLong),
            ),
            // Counted after escapes are decoded.
            (format!("[\"{}\"]", "\\n".repeat(MAX_STRING_CHARS)), None),
            (
                format!("[\"{}\"]", "\\n".repeat(MAX_STRING_CHARS + 1)),
                Some(StringTooLong),
            ),
        ] {
            let got = parse_with(JsonParseOptions::default(), &text)
                .err()
                .map(|e| e.kind);
            let head: String = text.chars().take(12).collect();
            assert_eq!(got, refused, "{head}...");
        }
    }

    #[test]
    fn no_panic_on_arbitrary_prefixes() {
        let doc = r#"{"a":[1,-2.50,3e4,"x\u00e9\ud83d\ude00",{"b":null,"c":true}],"d":false}"#;
        for end in 0..=doc.len() {
            if let Some(prefix) = doc.get(..end) {
                let _ = parse_with(JsonParseOptions::default(), prefix);
            }
            if let Some(rest) = doc.get(end..) {
                let _ = parse_with(JsonParseOptions::default(), rest);
            }
        }
        assert!(parse_with(JsonParseOptions::default(), doc).is_ok());
    }
}
