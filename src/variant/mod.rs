//! Spark semantics over arrow-rs `parquet-variant` values, on top of the byte
//! encoding ([`encoding`]). Nothing in this module depends on DataFusion, nor on
//! the Arrow kernels (`array/`), which build on it. The shredded form of the
//! spec is here too: its table of typed columns ([`shredded`]) and its
//! reassembly into the binary form (`unshred.rs`), which the kernels read
//! shredded input through; the shredder itself is [`crate::shredding`].

pub mod calendar;
pub mod cast;
pub mod datetime;
pub mod encoding;
pub mod format;
pub mod json;
pub mod json_features;
pub mod mutate;
pub mod path;
pub mod raw;
pub mod schema;
pub mod shredded;
pub mod storage;
pub mod types;
pub mod tz;
pub(crate) mod unshred;
pub mod validate;

/// The longest input text an error message quotes, in characters.
pub const QUOTED_TEXT_LIMIT: usize = 100;

/// `text` quoted for an error message: in full up to [`QUOTED_TEXT_LIMIT`]
/// characters, otherwise its start, an ellipsis and the total length, so that a
/// megabyte of bad input gives a one-line error.
///
/// ```
/// use df_variant::variant::shorten;
/// assert_eq!(shorten("{\"a\": 1"), "'{\"a\": 1'");
/// let long = "x".repeat(1000);
/// assert_eq!(shorten(&long), format!("'{}...' (1000 characters)", "x".repeat(100)));
/// ```
pub fn shorten(text: &str) -> String {
    shorten_quoted(text, '\'')
}

/// [`shorten`] with another quote character (Spark quotes paths with backticks
/// and type strings with double quotes).
pub fn shorten_quoted(text: &str, quote: char) -> String {
    match text.char_indices().nth(QUOTED_TEXT_LIMIT) {
        None => format!("{quote}{text}{quote}"),
        Some((cut, _)) => format!(
            "{quote}{}...{quote} ({} characters)",
            &text[..cut],
            text.chars().count()
        ),
    }
}
