//! Per-extraction explanations for `EXPLAIN ANALYZE`: the `extractions` metric
//! of `VariantScanExec`.
//!
//! ```text
//! VariantScanExec: extractions=[v: $.a AS BIGINT], metrics=[...,
//!   extractions=v: $.a AS BIGINT: pushed in 13/20 files, not_shredded 7; residual read in 3 row groups; read 1.2 MB, avoided 30.5 MB]
//! ```
//!
//! For each extraction: in how many of the files it read it was pushed (read
//! from its shredded leaf, with or without the residual), the reasons it read
//! whole values in the others ([`crate::workload::Outcome`]), the row groups
//! whose residual had to be read, the compressed bytes it read, and the bytes a
//! whole-value read of the same row groups would have read on top.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::{self, Display, Formatter};
use std::sync::{Arc, Mutex};

use datafusion::physical_plan::metrics::{
    Count, CustomMetricValue, ExecutionPlanMetricsSet, MetricBuilder,
};

use crate::workload::{ExtractionRead, Outcome};

/// One extraction's totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Tally {
    files: u64,
    outcomes: BTreeMap<Outcome, u64>,
    residual_row_groups: u64,
    bytes_read: u64,
    bytes_avoided: u64,
}

/// The metric value (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ExtractionReport {
    /// Extraction description (`v: $.a AS BIGINT`) to its totals, in first-seen order.
    tallies: Mutex<Vec<(String, Tally)>>,
}

impl ExtractionReport {
    /// Adds one file scan's reads.
    pub(crate) fn add(&self, reads: &[ExtractionRead]) {
        let mut tallies = self
            .tallies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for r in reads {
            let name = format!(
                "{}: {} AS {}",
                r.column,
                r.path,
                r.target.to_ascii_uppercase()
            );
            let i = match tallies.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    tallies.push((name, Tally::default()));
                    tallies.len() - 1
                }
            };
            let t = &mut tallies[i].1;
            t.files += 1;
            *t.outcomes.entry(r.outcome).or_default() += 1;
            t.residual_row_groups += r.residual_row_groups;
            t.bytes_read += r.bytes;
            t.bytes_avoided += r.whole_bytes.saturating_sub(r.bytes);
        }
    }

    fn snapshot(&self) -> Vec<(String, Tally)> {
        self.tallies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

impl Display for ExtractionReport {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .snapshot()
            .iter()
            .map(|(name, t)| {
                let pushed = t.outcomes.get(&Outcome::Pushed).copied().unwrap_or(0)
                    + t.outcomes.get(&Outcome::ResidualRead).copied().unwrap_or(0);
                let others: Vec<String> = t
                    .outcomes
                    .iter()
                    .filter(|(o, _)| !matches!(o, Outcome::Pushed | Outcome::ResidualRead))
                    .map(|(o, n)| format!("{} {n}", o.name()))
                    .collect();
                let mut s = format!("{name}: pushed in {pushed}/{} files", t.files);
                if !others.is_empty() {
                    s.push_str(&format!(", {}", others.join(", ")));
                }
                s.push_str(&format!(
                    "; residual read in {} row groups; read {}, avoided {}",
                    t.residual_row_groups,
                    human(t.bytes_read),
                    human(t.bytes_avoided)
                ));
                s
            })
            .collect();
        f.write_str(&parts.join(" | "))
    }
}

impl CustomMetricValue for ExtractionReport {
    fn new_empty(&self) -> Arc<dyn CustomMetricValue> {
        Arc::new(ExtractionReport::default())
    }

    fn aggregate(&self, other: Arc<dyn CustomMetricValue + 'static>) {
        let Some(other) = other.as_any().downcast_ref::<ExtractionReport>() else {
            return;
        };
        let theirs = other.snapshot();
        let mut mine = self
            .tallies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (name, t) in theirs {
            match mine.iter_mut().find(|(n, _)| *n == name) {
                Some((_, m)) => {
                    m.files += t.files;
                    for (o, n) in t.outcomes {
                        *m.outcomes.entry(o).or_default() += n;
                    }
                    m.residual_row_groups += t.residual_row_groups;
                    m.bytes_read += t.bytes_read;
                    m.bytes_avoided += t.bytes_avoided;
                }
                None => mine.push((name, t)),
            }
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_usize(&self) -> usize {
        self.snapshot().len()
    }

    fn is_eq(&self, other: &Arc<dyn CustomMetricValue>) -> bool {
        other
            .as_any()
            .downcast_ref::<ExtractionReport>()
            .is_some_and(|o| o.snapshot() == self.snapshot())
    }
}

/// Counters shown by `EXPLAIN ANALYZE`.
#[derive(Debug, Clone)]
pub(super) struct ScanMetrics {
    pub(super) files: Count,
    pub(super) files_pruned: Count,
    pub(super) extractions_pushed: Count,
    pub(super) extractions_fallback: Count,
    pub(super) residuals_skipped: Count,
    pub(super) row_groups_pruned: Count,
    pub(super) row_groups_matched: Count,
    pub(super) pages_pruned: Count,
    pub(super) pages_matched: Count,
    pub(super) rows_pruned_by_pages: Count,
    pub(super) pruning_errors: Count,
    /// How each extraction read the files (the `extractions` metric).
    pub(super) extractions: Arc<ExtractionReport>,
}

impl ScanMetrics {
    pub(super) fn new(metrics: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let c = |name: &'static str| MetricBuilder::new(metrics).counter(name, partition);
        Self {
            files: c("file_scans"),
            files_pruned: c("files_pruned"),
            extractions_pushed: c("extractions_pushed"),
            extractions_fallback: c("extractions_fallback"),
            residuals_skipped: c("residuals_skipped"),
            row_groups_pruned: c("row_groups_pruned"),
            row_groups_matched: c("row_groups_matched"),
            pages_pruned: c("pages_pruned"),
            pages_matched: c("pages_matched"),
            rows_pruned_by_pages: c("rows_pruned_by_pages"),
            pruning_errors: c("pruning_errors"),
            extractions: {
                let report = Arc::new(ExtractionReport::default());
                MetricBuilder::new(metrics).with_partition(partition).build(
                    datafusion::physical_plan::metrics::MetricValue::Custom {
                        name: "extractions".into(),
                        value: Arc::clone(&report) as _,
                    },
                );
                report
            },
        }
    }
}
