//! The synchronous NDJSON reader of one partition: reads byte ranges of files in
//! chunks, cuts them into lines, parses each line into a Variant and hands out
//! finished Variant columns of at most `batch_size` rows.
//!
//! Memory use is bounded by the chunk size plus the longest line (a line is kept
//! whole in the buffer while it is parsed), plus one output batch.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use arrow::array::ArrayRef;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};

use super::split::FileRange;
use crate::array::VariantColumnBuilder;
use crate::fs::InputFile;
use crate::variant::json::{JsonParseOptions, JsonToVariant};

/// Default size of one read from a file.
pub const DEFAULT_CHUNK_SIZE: usize = 8 << 20;

/// Smallest read used while finishing a line that extends past the end of a range.
const TAIL_READ: usize = 64 << 10;

/// How one partition reads its ranges.
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// The SQL function name, used in error messages.
    pub function: &'static str,
    /// When `true`, a malformed line gives a NULL row instead of an error.
    pub tolerant: bool,
    /// Bytes per read (at least 1).
    pub chunk_size: usize,
    /// Rows per output column (at least 1).
    pub batch_size: usize,
    /// JSON parser options.
    pub json: JsonParseOptions,
}

/// Whether the consumer wants more output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// The consumer is gone (or satisfied): stop.
    Stop,
}

/// Receives each finished Variant column; returns whether to go on.
pub type Sink<'a> = dyn FnMut(ArrayRef) -> Result<Flow> + 'a;

/// Where a line sits, for error messages.
struct LineAt<'a> {
    path: &'a Path,
    /// Absolute byte offset of the first line owned by the range.
    first_line_start: u64,
    /// Lines of the range before this one.
    local_index: u64,
    /// Absolute byte offset of this line.
    offset: u64,
}

/// Reads ranges of NDJSON files into Variant columns, with one reusable parser.
#[derive(Debug)]
pub struct LineReader<'a> {
    files: &'a [InputFile],
    options: ReaderOptions,
    parser: JsonToVariant,
    builder: VariantColumnBuilder,
}

impl<'a> LineReader<'a> {
    /// A reader over `files` (ranges refer to them by index).
    pub fn new(files: &'a [InputFile], mut options: ReaderOptions) -> Self {
        options.chunk_size = options.chunk_size.max(1);
        options.batch_size = options.batch_size.max(1);
        let parser = JsonToVariant::new(options.json);
        let builder = VariantColumnBuilder::new(options.batch_size);
        Self {
            files,
            options,
            parser,
            builder,
        }
    }

    /// Hands out the rows collected so far (if any) as a last, shorter column.
    pub fn flush(&mut self, sink: &mut Sink<'_>) -> Result<Flow> {
        if self.builder.is_empty() {
            return Ok(Flow::Continue);
        }
        sink(self.builder.finish())
    }

    fn io_error(&self, path: &Path, what: &str, e: &io::Error) -> DataFusionError {
        exec_datafusion_err!(
            "{}: cannot {what} {}: {e}",
            self.options.function,
            path.display()
        )
    }

    /// Reads every line that starts inside `range`.
    ///
    /// # Errors
    /// I/O errors; a malformed line unless the reader is tolerant; errors of `sink`.
    pub fn read_range(&mut self, range: FileRange, sink: &mut Sink<'_>) -> Result<Flow> {
        let Some(input) = self.files.get(range.file) else {
            return Err(DataFusionError::Internal(format!(
                "{}: no input file #{}",
                self.options.function, range.file
            )));
        };
        let path = input.path.as_path();
        if range.start >= range.end {
            return Ok(Flow::Continue);
        }
        let mut file = File::open(path).map_err(|e| self.io_error(path, "open", &e))?;
        // Start one byte early: if that byte is a newline, `start` begins a line.
        let mut pos = range.start.saturating_sub(1);
        if pos > 0 {
            file.seek(SeekFrom::Start(pos))
                .map_err(|e| self.io_error(path, "read", &e))?;
        }
        let mut skipping = range.start > 0;
        // Whether the last line ended with `\r`: a `\n` right after it closes the
        // same line (CRLF), not an empty one.
        let mut after_cr = false;
        let chunk = self.options.chunk_size;
        // Room for one chunk plus a carried-over partial line; reads are sized to
        // fit so the buffer only grows for lines longer than that.
        let slack = TAIL_READ.min(chunk);
        let initial = usize::try_from(range.end - pos).map_or(chunk, |n| n.min(chunk));
        let mut buf: Vec<u8> = Vec::with_capacity(initial.saturating_add(slack));
        // buf[..scanned] (from the current line start) holds no newline.
        let mut scanned = 0usize;
        let mut first_line_start: Option<u64> = None;
        let mut local_index = 0u64;
        let mut eof = false;
        loop {
            if !eof {
                let buf_end = pos + buf.len() as u64;
                let want = if buf_end < range.end {
                    usize::try_from(range.end - buf_end).map_or(chunk, |left| left.min(chunk))
                } else {
                    buf.len().max(TAIL_READ).min(chunk)
                };
                let room = buf.capacity() - buf.len();
                let want = if room >= slack { want.min(room) } else { want };
                let n = read_some(&mut file, &mut buf, want)
                    .map_err(|e| self.io_error(path, "read", &e))?;
                eof = n == 0;
            }
            let mut i = 0usize;
            if skipping {
                match find_newline(&buf[scanned..]) {
                    Some(k) => {
                        after_cr = buf[scanned + k] == b'\r';
                        i = scanned + k + 1;
                        scanned = i;
                        skipping = false;
                    }
                    None => {
                        pos += buf.len() as u64;
                        buf.clear();
                        scanned = 0;
                        if eof {
                            return Ok(Flow::Continue);
                        }
                        continue;
                    }
                }
            }
            let mut done = false;
            loop {
                let line_start = pos + i as u64;
                if line_start >= range.end {
                    done = true;
                    break;
                }
                if after_cr && buf.get(i) == Some(&b'\n') {
                    // The `\n` of a CRLF whose `\r` ended the previous line.
                    after_cr = false;
                    i += 1;
                    scanned = i;
                    continue;
                }
                if after_cr && i == buf.len() && !eof {
                    // Whether a `\n` follows the `\r` is in the next read.
                    scanned = i;
                    break;
                }
                let first = *first_line_start.get_or_insert(line_start);
                let from = scanned.max(i);
                let line_end = match find_newline(&buf[from..]) {
                    Some(k) => from + k,
                    None if eof => {
                        done = true;
                        buf.len()
                    }
                    None => {
                        scanned = buf.len();
                        break;
                    }
                };
                after_cr = buf.get(line_end) == Some(&b'\r');
                let at = LineAt {
                    path,
                    first_line_start: first,
                    local_index,
                    offset: line_start,
                };
                let flow = self.line(&buf[i..line_end], &at, sink)?;
                local_index += 1;
                i = (line_end + 1).min(buf.len());
                scanned = i;
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                if done {
                    break;
                }
            }
            buf.drain(..i);
            pos += i as u64;
            scanned = scanned.saturating_sub(i);
            if done || eof {
                return Ok(Flow::Continue);
            }
        }
    }

    /// Handles one line (without its terminator).
    fn line(&mut self, mut line: &[u8], at: &LineAt<'_>, sink: &mut Sink<'_>) -> Result<Flow> {
        if at.offset == 0 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Flow::Continue);
        }
        let problem = match std::str::from_utf8(line) {
            Ok(text) => match self.parser.parse(text) {
                Ok(()) => {
                    self.builder
                        .append(self.parser.metadata(), self.parser.value());
                    None
                }
                Err(e) => Some(format!("invalid JSON: {e}")),
            },
            Err(e) => Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
        };
        if let Some(problem) = problem {
            if !self.options.tolerant {
                return Err(self.line_error(at, &problem));
            }
            self.builder.append_null();
        }
        if self.builder.len() >= self.options.batch_size {
            return sink(self.builder.finish());
        }
        Ok(Flow::Continue)
    }

    /// The error for a malformed line, with its 1-based line number. The newlines
    /// before the range are counted only now (errors are rare).
    fn line_error(&self, at: &LineAt<'_>, problem: &str) -> DataFusionError {
        let function = self.options.function;
        let path = at.path.display();
        match count_newlines_before(at.path, at.first_line_start) {
            Ok(before) => {
                let line = before + at.local_index + 1;
                exec_datafusion_err!("{function}: {path} line {line}: {problem}")
            }
            Err(_) => exec_datafusion_err!(
                "{function}: {path} line at byte offset {}: {problem}",
                at.offset
            ),
        }
    }
}

/// Appends up to `want` bytes read from `file` to `buf`; returns how many (0 at EOF).
fn read_some(file: &mut File, buf: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    let old = buf.len();
    buf.resize(old + want, 0);
    loop {
        match file.read(&mut buf[old..]) {
            Ok(n) => {
                buf.truncate(old + n);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                buf.truncate(old);
                return Err(e);
            }
        }
    }
}

/// The first line terminator: `\n`, or `\r` (alone or as the start of `\r\n`).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n' || b == b'\r')
}

/// Counts the line terminators (`\n`, `\r\n` and a lone `\r`) in the first
/// `limit` bytes of a file. `limit` is the start of a line, so a `\r` just
/// before it ends a line of its own.
pub fn count_newlines_before(path: &Path, limit: u64) -> io::Result<u64> {
    let mut file = File::open(path)?.take(limit);
    let mut buf = vec![0u8; 1 << 20];
    let mut count = 0u64;
    let mut last = 0u8;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(count),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = &buf[..n];
        // Plain loops the compiler vectorises: every `\n` and `\r`, less the `\r\n`
        // pairs (counted twice), including a pair split across two reads.
        let ends = bytes
            .iter()
            .map(|&b| u64::from(b == b'\n' || b == b'\r'))
            .sum::<u64>();
        let pairs = bytes
            .windows(2)
            .map(|w| u64::from(w == b"\r\n"))
            .sum::<u64>()
            + u64::from(last == b'\r' && bytes[0] == b'\n');
        count += ends - pairs;
        last = bytes[n - 1];
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use arrow::array::Array;

    use super::super::split::split_ranges;
    use super::*;
    use parquet_variant::Variant;

    use crate::array::VariantInput;
    use crate::variant::format::to_json_string;
    use crate::variant::tz::SessionTz;

    struct TempFile(PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn temp_file(name: &str, body: &[u8]) -> (TempFile, InputFile) {
        let path =
            std::env::temp_dir().join(format!("df_variant_ingest_{}_{name}", std::process::id()));
        std::fs::write(&path, body).unwrap();
        let input = InputFile {
            path: path.clone(),
            size: body.len() as u64,
        };
        (TempFile(path), input)
    }

    fn options(chunk_size: usize, batch_size: usize, tolerant: bool) -> ReaderOptions {
        ReaderOptions {
            function: "read_json_variant",
            tolerant,
            chunk_size,
            batch_size,
            json: JsonParseOptions::default(),
        }
    }

    /// Reads the groups one after the other (as the partitions would) and returns
    /// the rows as JSON text (`None` for NULL) plus the batch lengths.
    fn read_all(
        files: &[InputFile],
        groups: &[Vec<FileRange>],
        opts: &ReaderOptions,
    ) -> Result<(Vec<Option<String>>, Vec<usize>)> {
        let mut rows = Vec::new();
        let mut lens = Vec::new();
        for group in groups {
            let mut reader = LineReader::new(files, opts.clone());
            let mut sink = |col: ArrayRef| -> Result<Flow> {
                lens.push(col.len());
                let input = VariantInput::try_new(&col)?;
                for row in 0..col.len() {
                    rows.push(input.get(row).map(|(m, v)| {
                        let v = Variant::try_new(m, v).expect("valid variant");
                        to_json_string(&v, &SessionTz::default())
                    }));
                }
                Ok(Flow::Continue)
            };
            for r in group {
                reader.read_range(*r, &mut sink)?;
            }
            reader.flush(&mut sink)?;
        }
        Ok((rows, lens))
    }

    fn texts(rows: &[Option<String>]) -> Vec<String> {
        rows.iter()
            .map(|r| r.clone().unwrap_or_else(|| "NULL".into()))
            .collect()
    }

    const DOCS: &str = "{\"a\":1}\n[1,2,3]\n\"text\"\n\n   \n{\"b\":{\"c\":null}}\r\n42\r\ntrue";

    #[test]
    fn every_chunk_size_and_split_gives_the_same_rows() {
        let (_t, f) = temp_file("docs", DOCS.as_bytes());
        let files = [f];
        let expected = [
            "{\"a\":1}",
            "[1,2,3]",
            "\"text\"",
            "{\"b\":{\"c\":null}}",
            "42",
            "true",
        ];
        for chunk in [1, 2, 3, 5, 7, 16, 1 << 20] {
            for parts in [1, 2, 3, 4, 7, 50, 200] {
                let groups = split_ranges(&[files[0].size], parts, 0);
                for batch in [1, 2, 4, 8192] {
                    let (rows, lens) = read_all(&files, &groups, &options(chunk, batch, false))
                        .unwrap_or_else(|e| panic!("chunk {chunk} parts {parts}: {e}"));
                    assert_eq!(
                        texts(&rows),
                        expected,
                        "chunk {chunk} parts {parts} batch {batch}"
                    );
                    assert!(lens.iter().all(|l| *l <= batch && *l > 0));
                }
            }
        }
    }

    #[test]
    fn trailing_newline_crlf_and_bom() {
        let (_t, f) = temp_file("crlf", b"\xEF\xBB\xBF{\"x\":\"a\"}\r\n\r\n[null]\r\n");
        let files = [f];
        let groups = split_ranges(&[files[0].size], 1, 0);
        let (rows, _) = read_all(&files, &groups, &options(3, 10, false)).unwrap();
        assert_eq!(texts(&rows), ["{\"x\":\"a\"}", "[null]"]);
    }

    #[test]
    fn every_line_terminator_and_split_gives_the_same_rows_and_line_numbers() {
        // `\n`, `\r\n` and a lone `\r` end lines alike; line 7 is broken.
        let body = b"1\r2\r\n3\n\r\n\r4\r\r\n{]\r\n5\r";
        let (_t, f) = temp_file("terminators", body);
        let files = [f];
        let mut bad_line = body.to_vec();
        bad_line.truncate(body.len() - 6);
        bad_line.extend_from_slice(b"6\r\n5\r");
        let (_g, good) = temp_file("terminators_good", &bad_line);
        let good = [good];
        for chunk in [1, 2, 3, 5, 1 << 20] {
            for parts in [1, 2, 3, 5, 7, 11, 25] {
                let opts = options(chunk, 3, false);
                let groups = split_ranges(&[good[0].size], parts, 0);
                let (rows, _) = read_all(&good, &groups, &opts).unwrap();
                assert_eq!(
                    texts(&rows),
                    ["1", "2", "3", "4", "6", "5"],
                    "chunk {chunk} parts {parts}"
                );
                let groups = split_ranges(&[files[0].size], parts, 0);
                let e = read_all(&files, &groups, &opts).unwrap_err().to_string();
                assert!(
                    e.contains(" line 8: invalid JSON"),
                    "chunk {chunk} parts {parts}: {e}"
                );
            }
        }
    }

    #[test]
    fn content_after_the_value_is_an_error_naming_the_line() {
        let (_t, f) = temp_file("two_values", b"{\"a\":1}\n{\"a\":1}{\"b\":2}\n");
        let files = [f];
        let groups = split_ranges(&[files[0].size], 1, 0);
        let mut strict = options(4, 10, false);
        strict.json.reject_trailing_content = true;
        let e = read_all(&files, &groups, &strict).unwrap_err().to_string();
        assert!(
            e.contains(" line 2: invalid JSON: content after the JSON value at byte 7"),
            "{e}"
        );
        // Spark's rule, on request: the rest of the line is ignored.
        let (rows, _) = read_all(&files, &groups, &options(4, 10, false)).unwrap();
        assert_eq!(texts(&rows), ["{\"a\":1}", "{\"a\":1}"]);
    }

    #[test]
    fn empty_and_blank_files() {
        for body in ["", "\n", "\n\n  \r\n\t\n", " "] {
            let (_t, f) = temp_file("blank", body.as_bytes());
            let files = [f];
            for parts in [1, 3] {
                let groups = split_ranges(&[files[0].size], parts, 0);
                let (rows, lens) = read_all(&files, &groups, &options(2, 10, false)).unwrap();
                assert!(rows.is_empty() && lens.is_empty(), "{body:?}");
            }
        }
    }

    fn numbered(n: usize, bad: &[usize]) -> String {
        let mut s = String::new();
        for i in 1..=n {
            if bad.contains(&i) {
                s.push_str("{\"broken\": }\n");
            } else if i % 5 == 0 {
                s.push('\n');
            } else {
                s.push_str(&format!("{{\"i\": {i}}}\n"));
            }
        }
        s
    }

    #[test]
    fn error_line_numbers_in_later_partitions() {
        let body = numbered(1000, &[777]);
        let (_t, f) = temp_file("errors", body.as_bytes());
        let name = f.path.display().to_string();
        let files = [f];
        for parts in [1, 2, 8, 100] {
            let groups = split_ranges(&[files[0].size], parts, 0);
            // Read only the partition that holds the bad line.
            let mut found = false;
            for group in &groups {
                let r = read_all(&files, std::slice::from_ref(group), &options(64, 16, false));
                if let Err(e) = r {
                    let msg = e.to_string();
                    assert!(
                        msg.contains(&format!(
                            "read_json_variant: {name} line 777: invalid JSON: "
                        )),
                        "{msg}"
                    );
                    assert!(msg.contains("at byte 11"), "{msg}");
                    assert!(!found);
                    found = true;
                }
            }
            assert!(found, "parts {parts}");
        }
    }

    #[test]
    fn first_and_last_line_errors() {
        for (body, line) in [
            (&b"oops\n1\n"[..], 1),
            (&b"1\n2\n["[..], 3),
            (&b"1\n\n\n\xFF\n"[..], 4),
        ] {
            let (_t, f) = temp_file("edge", body);
            let files = [f];
            for parts in [1, 2, 5] {
                let groups = split_ranges(&[files[0].size], parts, 0);
                let e = read_all(&files, &groups, &options(2, 4, false)).unwrap_err();
                assert!(e.to_string().contains(&format!(" line {line}: ")), "{e}");
            }
        }
        let (_t, f) = temp_file("utf8", b"\"\xC3\x28\"\n");
        let files = [f];
        let e = read_all(
            &files,
            &[vec![FileRange {
                file: 0,
                start: 0,
                end: 5,
            }]],
            &options(8, 4, false),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("line 1: invalid UTF-8 at byte 1"),
            "{e}"
        );
    }

    #[test]
    fn tolerant_reader_gives_nulls() {
        let body = "1\n{bad\n\n[2]\n\"unterminated\n{\"a\":1,\"a\":2}\n";
        let (_t, f) = temp_file("tolerant", body.as_bytes());
        let files = [f];
        for parts in [1, 4] {
            let groups = split_ranges(&[files[0].size], parts, 0);
            let (rows, _) = read_all(&files, &groups, &options(4, 3, true)).unwrap();
            assert_eq!(texts(&rows), ["1", "NULL", "[2]", "NULL", "NULL"]);
        }
    }

    #[test]
    fn long_lines_and_many_files() {
        let long = format!("[{}1]", "1,".repeat(50_000));
        let body_a = format!("{long}\n{long}\n");
        let (_a, fa) = temp_file("long_a", body_a.as_bytes());
        let (_b, fb) = temp_file("long_b", b"{\"k\":\"v\"}");
        let files = [fa, fb];
        let sizes = [files[0].size, files[1].size];
        for parts in [1, 2, 3, 6] {
            let groups = split_ranges(&sizes, parts, 0);
            let (rows, _) = read_all(&files, &groups, &options(1000, 8192, false)).unwrap();
            assert_eq!(rows.len(), 3);
            assert_eq!(rows[2].as_deref(), Some("{\"k\":\"v\"}"));
            assert_eq!(rows[0].as_deref().map(str::len), Some(long.len()));
        }
    }

    #[test]
    fn stop_ends_reading() {
        let (_t, f) = temp_file("stop", numbered(100, &[90]).as_bytes());
        let files = [f];
        let mut reader = LineReader::new(&files, options(16, 10, false));
        let mut batches = 0;
        let mut sink = |_col: ArrayRef| -> Result<Flow> {
            batches += 1;
            Ok(Flow::Stop)
        };
        let range = FileRange {
            file: 0,
            start: 0,
            end: files[0].size,
        };
        assert_eq!(reader.read_range(range, &mut sink).unwrap(), Flow::Stop);
        assert_eq!(batches, 1);
    }

    #[test]
    fn missing_file_is_an_error() {
        let files = [InputFile {
            path: PathBuf::from("/definitely/not/here.jsonl"),
            size: 10,
        }];
        let mut reader = LineReader::new(&files, options(16, 10, false));
        let mut sink = |_col: ArrayRef| -> Result<Flow> { Ok(Flow::Continue) };
        let e = reader
            .read_range(
                FileRange {
                    file: 0,
                    start: 0,
                    end: 10,
                },
                &mut sink,
            )
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot open /definitely/not/here.jsonl"),
            "{e}"
        );
        let e = reader
            .read_range(
                FileRange {
                    file: 3,
                    start: 0,
                    end: 10,
                },
                &mut sink,
            )
            .unwrap_err();
        assert!(e.to_string().contains("no input file #3"), "{e}");
    }
}
