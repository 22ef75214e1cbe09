//! Where the kernels meet DataFusion: the guard around every batch of work on
//! variant data, and the conversion of the kernels' errors.
//!
//! [`guard`] gives a batch enough stack for 1000-level variants, and turns a
//! panic from a dependency (arrow-rs and parquet-rs can panic on malformed input)
//! into an error that names the function. Every UDF and the Parquet reader's
//! shredded reads call it; a caught panic is always a bug, and the robustness
//! tests fail on its message ([`PANIC_MESSAGE`]).

use std::task::Poll;

use arrow::error::ArrowError;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, plan_datafusion_err};
use datafusion::execution::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, StructArray, new_null_array};
use arrow::datatypes::{DataType, Field, Fields};

use crate::array::get::{GetError, PathArg, TRY_VARIANT_GET, VARIANT_GET, variant_get};
use crate::variant::cast::CastOptions;
use crate::variant::types::SparkType;

/// Stack that must remain before a batch starts; below it, the batch runs on a
/// fresh segment. Variants may nest 1000 levels and every reader recurses.
const STACK_RED_ZONE: usize = 16 << 20;
/// Size of that fresh segment (virtual memory; only touched pages are used).
const STACK_SEGMENT: usize = 64 << 20;

/// The words of the error made from a caught panic.
pub const PANIC_MESSAGE: &str = "internal error while reading variant data";

/// The words of the error made from a panic caught around a Parquet scan's
/// decoding stream: parquet-rs 59.3.2's page decoders panic on some corrupt
/// page contents (an RLE bit width over 64, say), which no check in front of
/// them can see without decoding the page itself.
pub const DECODER_PANIC_MESSAGE: &str =
    "the Parquet decoder (parquet-rs 59.3.2) failed on corrupt page data";

/// Runs one batch of work `f`: on enough stack for 1000-level variants, and with
/// a panic from a dependency turned into an error naming `func`.
pub fn guard<T>(func: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let caught = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
    });
    match caught {
        Ok(r) => r,
        Err(p) => Err(exec_datafusion_err!(
            "{func}: {PANIC_MESSAGE}: {}",
            panic_text(p.as_ref())
        )),
    }
}

/// The message of a caught panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// `stream` with a panic while polling it (parquet-rs's page decoders on a
/// corrupt page) turned into one error naming `what` (the file being read) and
/// [`DECODER_PANIC_MESSAGE`], after which the stream ends. The checks in front
/// of parquet-rs catch what the footer and page index can show; this catches
/// what only the page bytes can.
pub fn catch_stream_panics(
    stream: SendableRecordBatchStream,
    what: String,
) -> SendableRecordBatchStream {
    let schema = stream.schema();
    let mut stream = Some(stream);
    let guarded = futures::stream::poll_fn(move |cx| {
        let Some(inner) = stream.as_mut() else {
            return Poll::Ready(None);
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll_next_unpin(cx))) {
            Ok(poll) => poll,
            Err(p) => {
                stream = None;
                Poll::Ready(Some(Err(exec_datafusion_err!(
                    "{what}: {DECODER_PANIC_MESSAGE}: {}",
                    panic_text(p.as_ref())
                ))))
            }
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, guarded))
}

/// The error of the `variant_get` kernel as `func` reports it: data errors name
/// the function, Arrow errors stay Arrow errors.
pub fn get_error(func: &str, e: GetError) -> DataFusionError {
    match e {
        GetError::Arrow(e) => DataFusionError::from(e),
        e => exec_datafusion_err!("{func}: {e}"),
    }
}

/// The DataFusion error for an error of [`crate::shredding`]: a schema error is a
/// planning error, a data error an execution error, with the same message.
pub fn shredding_error(e: ArrowError) -> DataFusionError {
    match e {
        ArrowError::InvalidArgumentError(msg) => plan_datafusion_err!("{msg}"),
        ArrowError::ComputeError(msg) => exec_datafusion_err!("{msg}"),
        e => DataFusionError::from(e),
    }
}

// ---- The `variant_get` kernel behind DataFusion: its errors as DataFusion's,
// and the split of a typed `variant_get` into `variant_get_or_error` and
// `raise_variant_get_error`, for the UDFs and the Parquet scan alike.

/// The `variant_get` kernel on a column the reader built from leaves, under the
/// crate's guard, with `func`'s errors.
pub(crate) fn run_kernel(
    func: &str,
    column: &ArrayRef,
    path: PathArg<'_>,
    target: Option<&SparkType>,
    options: CastOptions,
) -> Result<ArrayRef> {
    guard(func, || {
        variant_get(column, path, target, options).map_err(|e| get_error(func, e))
    })
}

/// The registered name of `variant_get_or_error`: `variant_get` with its
/// conversion errors kept per row (the analyzer's split of a typed
/// `variant_get`, `optimizer::variant_get_split`).
pub const VARIANT_GET_OR_ERROR: &str = "variant_get_or_error";
/// The registered name of `raise_variant_get_error`, the other half of the split.
pub const RAISE_VARIANT_GET_ERROR: &str = "raise_variant_get_error";

/// The fields of `variant_get_or_error`'s result: `{value, error}`.
pub fn or_error_fields(value: &DataType) -> Fields {
    Fields::from(vec![
        Field::new("value", value.clone(), true),
        Field::new("error", DataType::Utf8, true),
    ])
}

/// `{value, error}` with no errors.
pub(crate) fn without_errors(values: ArrayRef) -> Result<ArrayRef> {
    let rows = values.len();
    Ok(Arc::new(StructArray::try_new(
        or_error_fields(values.data_type()),
        vec![values, new_null_array(&DataType::Utf8, rows)],
        None,
    )?))
}

/// The text an error is raised with again by `raise_variant_get_error`.
fn error_text(e: datafusion::common::DataFusionError) -> String {
    match e {
        datafusion::common::DataFusionError::Execution(message) => message,
        other => other.strip_backtrace(),
    }
}

/// `variant_get_or_error`'s kernel: `variant_get`'s strict conversion, with
/// the error it would raise kept per row (`{value, error}`) instead of
/// raised, so that it can be raised later, for the rows that a filter keeps.
/// A batch without errors costs one strict pass; a batch with one is run again
/// with `try_` semantics for the values and row by row for the errors.
pub(crate) fn run_or_error_kernel(
    column: &ArrayRef,
    path: PathArg<'_>,
    target: &SparkType,
    tz: crate::variant::tz::SessionTz,
) -> Result<ArrayRef> {
    let strict = CastOptions { safe: false, tz };
    if let Ok(values) = run_kernel(VARIANT_GET, column, path, Some(target), strict) {
        return without_errors(values);
    }
    let values = run_kernel(
        TRY_VARIANT_GET,
        column,
        path,
        Some(target),
        CastOptions { safe: true, tz },
    )?;
    let errors: arrow::array::StringArray = (0..column.len())
        .map(|i| {
            let row = column.slice(i, 1);
            let result = match path {
                PathArg::Column(paths) => {
                    let paths = paths.slice(i, 1);
                    run_kernel(
                        VARIANT_GET,
                        &row,
                        PathArg::Column(&paths),
                        Some(target),
                        strict,
                    )
                }
                path => run_kernel(VARIANT_GET, &row, path, Some(target), strict),
            };
            result.err().map(error_text)
        })
        .collect();
    Ok(Arc::new(StructArray::try_new(
        or_error_fields(values.data_type()),
        vec![values, Arc::new(errors)],
        None,
    )?))
}
