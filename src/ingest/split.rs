//! Splitting the input files into byte ranges, one group of ranges per partition.
//!
//! The files are laid end to end and cut into `n` pieces of (nearly) equal byte size,
//! so a single large file is split across all partitions and many small files are
//! grouped. A range `[start, end)` of a file owns every line that *starts* inside it
//! (a line starts at offset 0 or right after a `\n`); the reader of a range skips
//! the tail of a line begun before `start` and finishes a line begun before `end`
//! even when it extends past `end`. Line ownership therefore does not depend on
//! where the cuts fall, and every line is read exactly once.

/// A byte range of one input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRange {
    /// Index into the list of input files.
    pub file: usize,
    /// First byte (inclusive).
    pub start: u64,
    /// Last byte (exclusive).
    pub end: u64,
}

/// Splits files of the given sizes into at most `partitions` groups of contiguous
/// ranges of about equal byte size. No range is smaller than `min_range` bytes unless
/// it is the remainder of a file or of the whole input. Empty files get no range.
/// Always returns at least one (possibly empty) group.
pub fn split_ranges(sizes: &[u64], partitions: usize, min_range: u64) -> Vec<Vec<FileRange>> {
    let total: u64 = sizes.iter().fold(0u64, |a, s| a.saturating_add(*s));
    let n = partitions.max(1) as u64;
    let per = total.div_ceil(n).max(min_range).max(1);
    let mut groups = Vec::new();
    let mut current: Vec<FileRange> = Vec::new();
    let mut fill = 0u64;
    for (file, &size) in sizes.iter().enumerate() {
        let mut offset = 0u64;
        while offset < size {
            let take = (size - offset).min(per - fill);
            current.push(FileRange {
                file,
                start: offset,
                end: offset + take,
            });
            offset += take;
            fill += take;
            if fill >= per {
                groups.push(std::mem::take(&mut current));
                fill = 0;
            }
        }
    }
    if !current.is_empty() || groups.is_empty() {
        groups.push(current);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(groups: &[Vec<FileRange>], sizes: &[u64]) {
        // Every byte of every file is covered exactly once, in order.
        let mut next = vec![0u64; sizes.len()];
        for r in groups.iter().flatten() {
            assert_eq!(r.start, next[r.file], "{groups:?}");
            assert!(r.end > r.start);
            next[r.file] = r.end;
        }
        assert_eq!(next, sizes);
    }

    #[test]
    fn one_big_file_is_split_evenly() {
        let g = split_ranges(&[1000], 4, 0);
        assert_eq!(g.len(), 4);
        assert_eq!(
            g.iter().map(|r| (r[0].start, r[0].end)).collect::<Vec<_>>(),
            [(0, 250), (250, 500), (500, 750), (750, 1000)]
        );
        covered(&g, &[1000]);
        let g = split_ranges(&[10], 3, 0);
        assert_eq!(g.len(), 3);
        covered(&g, &[10]);
    }

    #[test]
    fn small_files_are_grouped() {
        let sizes = [10, 10, 10, 10, 0, 10, 10];
        let g = split_ranges(&sizes, 2, 0);
        assert_eq!(g.len(), 2);
        covered(&g, &sizes);
        assert!(
            g.iter()
                .all(|r| r.iter().map(|x| x.end - x.start).sum::<u64>() == 30)
        );
    }

    #[test]
    fn minimum_range_limits_partitions() {
        let g = split_ranges(&[100, 50], 8, 1 << 20);
        assert_eq!(g.len(), 1);
        covered(&g, &[100, 50]);
        let g = split_ranges(&[100], 8, 40);
        assert_eq!(g.len(), 3);
        covered(&g, &[100]);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(split_ranges(&[], 4, 0), vec![vec![]]);
        assert_eq!(split_ranges(&[0, 0], 4, 0), vec![vec![]]);
        let g = split_ranges(&[5], 0, 0);
        assert_eq!(
            g,
            vec![vec![FileRange {
                file: 0,
                start: 0,
                end: 5
            }]]
        );
        let g = split_ranges(&[3], 10, 0);
        assert_eq!(g.len(), 3);
        covered(&g, &[3]);
    }
}
