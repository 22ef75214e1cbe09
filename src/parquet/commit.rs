//! All-or-nothing multi-file writes to a directory, for our readers.
//!
//! A statement (`COPY ... TO 'dir/'`, `INSERT INTO` a Parquet table) writes
//! every file under a staging directory, `D/.df_variant/<stamp>/<name>`, beside
//! its final place `D/<name>` (DataFusion lists a table's directory without
//! subdirectories, so staged files are never read, and their names cannot
//! change which format DataFusion infers for the directory). When every file is
//! written, the commit:
//!
//! 1. puts a marker `D/.df_variant/<stamp>.pending` in each directory `D`
//!    receiving files, listing their names;
//! 2. renames each staged file to its final name;
//! 3. deletes the markers.
//!
//! Our reader ([`pending_files`], used by the Variant-aware Parquet format when it
//! infers a schema and when it plans a scan) leaves out every file a marker
//! lists. So a statement's files are seen all together or not at all, even if
//! the process dies between two renames: its marker stays, and its files stay
//! invisible to us (delete them and the marker by hand to clean up). A
//! statement killed before its commit leaves its staging folder behind
//! without a marker; on a local file system, the next statement that commits
//! into the same directory removes it once its writer is known to be dead (a
//! process of this machine's current boot that no longer runs: the stamp
//! names both), never a live writer's nor another machine's. Other
//! readers (pyarrow, DuckDB, Spark) ignore `.df_variant/` as a hidden directory,
//! but do not know the markers: after such a crash they see the files renamed
//! before it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use datafusion::common::{Result, exec_datafusion_err};
use datafusion::object_store::path::Path;
use datafusion::object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use futures::TryStreamExt;

/// The hidden directory, beside a statement's files, that holds its staged
/// files and its commit marker.
pub const STAGING_DIR: &str = ".df_variant";

/// The suffix of a commit marker.
const PENDING: &str = ".pending";

/// Environment variable of the commit's fault-injection point, for the crash
/// tests: `after_first_rename` aborts the process (as `kill -9` would) once the
/// first file of a multi-file commit is in place.
pub const FAILPOINT_ENV: &str = "DF_VARIANT_FAILPOINT";

fn parent_and_name(path: &Path) -> (Path, String) {
    let parts: Vec<_> = path.parts().collect();
    match parts.split_last() {
        Some((last, parent)) => (
            parent.iter().cloned().collect::<Path>(),
            last.as_ref().to_string(),
        ),
        None => (Path::default(), String::new()),
    }
}

/// Where the file finally at `path` is staged by the statement `stamp`.
pub fn staged_path(path: &Path, stamp: &str) -> Path {
    let (dir, name) = parent_and_name(path);
    dir.clone().join(STAGING_DIR).join(stamp).join(name)
}

/// A new statement's stamp: the time, the process and (on Linux) the boot, so
/// that a later statement can tell a dead writer's staging folder on this
/// machine from a live one's ([`is_dead_writer`]).
pub fn new_stamp() -> String {
    format!(
        "{:x}-{:x}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        std::process::id(),
        boot_id()
    )
}

/// This machine's current boot (Linux's `boot_id`, hex digits only), or empty.
fn boot_id() -> &'static str {
    static BOOT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.chars().filter(char::is_ascii_hexdigit).collect())
            .unwrap_or_default()
    });
    &BOOT
}

/// Whether the statement `stamp` ran in a process of this machine's current
/// boot that no longer runs. Unknown (another machine, another boot, an old
/// stamp without a boot, no `/proc`) is not dead.
fn is_dead_writer(stamp: &str) -> bool {
    let mut parts = stamp.split('-');
    let (Some(_time), Some(pid), Some(boot), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Ok(pid) = u32::from_str_radix(pid, 16) else {
        return false;
    };
    !boot.is_empty()
        && boot == boot_id()
        && pid != std::process::id()
        && std::path::Path::new("/proc/self").exists()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes the staging folders in `staging` (a local `.df_variant/`) that
/// writers killed before their commit left: a dead writer's
/// ([`is_dead_writer`]), without a commit marker.
fn remove_dead_staging(staging: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(staging) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && is_dead_writer(&name)
            && !staging.join(format!("{name}{PENDING}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn marker_path(dir: &Path, stamp: &str) -> Path {
    dir.clone()
        .join(STAGING_DIR)
        .join(format!("{stamp}{PENDING}"))
}

/// Moves the staged files (`(final, staged)` pairs of statement `stamp`) into
/// place as described in the module docs. On an error the files not yet moved
/// are deleted and the markers stay (the moved ones stay invisible to us).
///
/// # Errors
/// When the store refuses a marker, a rename or a delete.
pub async fn commit_files(
    store: &dyn ObjectStore,
    stamp: &str,
    files: &[(Path, Path)],
) -> Result<()> {
    let mut by_dir: BTreeMap<Path, Vec<String>> = BTreeMap::new();
    for (path, _) in files {
        let (dir, name) = parent_and_name(path);
        by_dir.entry(dir).or_default().push(name);
    }
    // One file is one rename: nothing to make atomic.
    let marked = files.len() > 1;
    if marked {
        for (dir, names) in &by_dir {
            let body = names.join("\n");
            store
                .put(
                    &marker_path(dir, stamp),
                    PutPayload::from(body.into_bytes()),
                )
                .await
                .map_err(|e| {
                    exec_datafusion_err!("cannot write the commit marker in {dir}: {e}")
                })?;
        }
    }
    let fail_after_first = std::env::var(FAILPOINT_ENV).is_ok_and(|v| v == "after_first_rename");
    for (i, (path, staged)) in files.iter().enumerate() {
        if let Err(e) = store.rename(staged, path).await {
            for (_, later) in &files[i..] {
                let _ = store.delete(later).await;
            }
            return Err(e.into());
        }
        if marked && i == 0 && fail_after_first {
            std::process::abort();
        }
    }
    if marked {
        for dir in by_dir.keys() {
            store.delete(&marker_path(dir, stamp)).await.map_err(|e| {
                exec_datafusion_err!("cannot remove the commit marker in {dir}: {e}")
            })?;
        }
    }
    remove_empty_staging(store, stamp, files);
    Ok(())
}

/// Object stores have no directories, but a local file system keeps the empty
/// staging directories a commit leaves; they are removed (when empty) so that a
/// finished statement leaves only its files, and so are those of dead writers
/// (see the module docs).
pub fn remove_empty_staging(store: &dyn ObjectStore, stamp: &str, files: &[(Path, Path)]) {
    if !store.to_string().starts_with("LocalFileSystem") {
        return;
    }
    let dirs: HashSet<Path> = files.iter().map(|(p, _)| parent_and_name(p).0).collect();
    for dir in dirs {
        let staging = std::path::PathBuf::from(format!("/{dir}")).join(STAGING_DIR);
        let _ = std::fs::remove_dir(staging.join(stamp));
        remove_dead_staging(&staging);
        let _ = std::fs::remove_dir(&staging);
    }
}

/// The files of directory `dir` that a commit marker lists: files of a
/// statement that has not finished its commit (or died in it), which our
/// readers leave out.
///
/// # Errors
/// When a marker exists but cannot be read.
pub async fn pending_files(store: &dyn ObjectStore, dir: &Path) -> Result<HashSet<Path>> {
    let staging = dir.clone().join(STAGING_DIR);
    let mut pending = HashSet::new();
    // A directory without markers (the usual case) lists nothing, or is missing.
    let listed: Vec<_> = match store.list(Some(&staging)).try_collect().await {
        Ok(listed) => listed,
        Err(datafusion::object_store::Error::NotFound { .. }) => return Ok(pending),
        Err(e) => return Err(e.into()),
    };
    for meta in listed {
        let is_marker = meta
            .location
            .filename()
            .is_some_and(|n| n.ends_with(PENDING))
            && meta
                .location
                .prefix_match(&staging)
                .is_some_and(|mut rest| rest.next().is_some() && rest.next().is_none());
        if !is_marker {
            continue;
        }
        let body = store
            .get(&meta.location)
            .await
            .map_err(|e| {
                exec_datafusion_err!("cannot read the commit marker {}: {e}", meta.location)
            })?
            .bytes()
            .await
            .map_err(|e| {
                exec_datafusion_err!("cannot read the commit marker {}: {e}", meta.location)
            })?;
        for name in String::from_utf8_lossy(&body).lines() {
            if !name.is_empty() {
                pending.insert(dir.clone().join(name));
            }
        }
    }
    Ok(pending)
}

/// The files among `paths` that a commit marker of their directory lists (see
/// [`pending_files`]); one listing per distinct directory.
///
/// # Errors
/// As [`pending_files`].
pub async fn pending_among<'a>(
    store: &dyn ObjectStore,
    paths: impl IntoIterator<Item = &'a Path>,
) -> Result<HashSet<Path>> {
    let mut dirs: BTreeSet<Path> = BTreeSet::new();
    for p in paths {
        dirs.insert(parent_and_name(p).0);
    }
    let mut out = HashSet::new();
    for dir in &dirs {
        out.extend(pending_files(store, dir).await?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_a_dead_writers_staging_without_a_marker_is_removed() {
        let staging =
            std::env::temp_dir().join(format!("df_variant_staging_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        // A finished child process: its pid no longer runs.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let boot = boot_id();
        assert!(!boot.is_empty(), "this test needs Linux's boot_id");
        let killed = format!("1-{dead:x}-{boot}");
        let killed_in_commit = format!("2-{dead:x}-{boot}");
        let live = format!("3-{:x}-{boot}", std::process::id());
        let init = format!("4-1-{boot}");
        let other_boot = format!("5-{dead:x}-0123abcd");
        let old_format = format!("6-{dead:x}");
        for s in [
            &killed,
            &killed_in_commit,
            &live,
            &init,
            &other_boot,
            &old_format,
        ] {
            std::fs::create_dir_all(staging.join(s)).unwrap();
            std::fs::write(staging.join(s).join("part-0.parquet"), b"x").unwrap();
        }
        std::fs::write(staging.join(format!("{killed_in_commit}{PENDING}")), b"a").unwrap();
        remove_dead_staging(&staging);
        assert!(!staging.join(&killed).exists());
        for kept in [&killed_in_commit, &live, &init, &other_boot, &old_format] {
            assert!(staging.join(kept).exists(), "{kept}");
        }
        assert!(new_stamp().ends_with(boot));
        std::fs::remove_dir_all(&staging).unwrap();
    }
    use super::*;
    use datafusion::object_store::memory::InMemory;

    #[tokio::test]
    async fn markers_hide_files_until_the_commit_ends() {
        let store = InMemory::new();
        let finals = [Path::from("t/a.parquet"), Path::from("t/p=1/b.parquet")];
        let files: Vec<(Path, Path)> = finals
            .iter()
            .map(|p| (p.clone(), staged_path(p, "s1")))
            .collect();
        assert_eq!(files[0].1, Path::from("t/.df_variant/s1/a.parquet"));
        for (_, staged) in &files {
            store
                .put(staged, PutPayload::from_static(b"x"))
                .await
                .unwrap();
        }
        // A marker written, then a crash: the listed files are pending.
        store
            .put(
                &marker_path(&Path::from("t"), "s0"),
                PutPayload::from_static(b"a.parquet\nc.parquet"),
            )
            .await
            .unwrap();
        let pending = pending_among(&store, &finals).await.unwrap();
        assert!(pending.contains(&Path::from("t/a.parquet")));
        assert!(pending.contains(&Path::from("t/c.parquet")));
        assert_eq!(pending.len(), 2);
        store
            .delete(&marker_path(&Path::from("t"), "s0"))
            .await
            .unwrap();
        // A finished commit leaves no marker and every file in place.
        commit_files(&store, "s1", &files).await.unwrap();
        assert!(pending_among(&store, &finals).await.unwrap().is_empty());
        for p in &finals {
            store.head(p).await.unwrap();
        }
        // A directory never written to has nothing pending.
        assert!(
            pending_files(&store, &Path::from("elsewhere"))
                .await
                .unwrap()
                .is_empty()
        );
    }
}
