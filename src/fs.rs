//! Resolving the path argument of `read_json_variant` to a list of local files.
//!
//! Accepted forms:
//! - a path to a regular file;
//! - a path to a directory: every regular file directly inside it (not recursive),
//!   except hidden files (names starting with `.` or `_`, such as `.crc` or
//!   `_SUCCESS` side files);
//! - a glob with `*` (any run of characters) and `?` (one character) in the file name
//!   part, e.g. `data/*.jsonl`; the directory part must not contain wildcards.
//!   `*` and `?` do not match a leading `.` (as in a shell).
//!
//! A `file://` prefix is accepted and removed; any other URL scheme is refused.
//! Files are returned sorted by path.
//!
//! [`HideHiddenFiles`] applies the same rule to the listings of an object store,
//! so that `FROM 'dir/'` and tables over a folder skip hidden files too (the CLI
//! uses it for local files).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::Expr;
use datafusion::object_store::{
    self, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
    path::Path as ObjectPath,
};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};

/// One input file and its size in bytes when the query was planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// The path, as resolved from the pattern (relative paths stay relative).
    pub path: PathBuf,
    /// The size in bytes.
    pub size: u64,
}

/// Whether `pattern` matches `name` with `*` and `?` wildcards (by characters).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if n.first() == Some(&'.') && p.first() != Some(&'.') {
        return false;
    }
    // Iterative matcher with single-star backtracking: linear in practice.
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ni += 1;
            }
            Some(c) if *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?'])
}

fn is_hidden(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

/// Lists the regular files of `dir` whose name satisfies `keep`, sorted.
fn list_dir(
    function: &str,
    pattern: &str,
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<InputFile>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            return plan_err!(
                "{function}: cannot list '{}' for '{pattern}': {e}",
                dir.display()
            );
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => return plan_err!("{function}: cannot list '{}': {e}", dir.display()),
        };
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !keep(name) {
            continue;
        }
        // Follow symlinks: a link to a regular file counts as a file.
        let Ok(meta) = std::fs::metadata(entry.path()) else {
            continue;
        };
        if meta.is_file() {
            files.push(InputFile {
                path: entry.path(),
                size: meta.len(),
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Resolves a path, directory or glob to the files to read.
///
/// # Errors
/// A plan error when nothing matches, when a wildcard appears in the directory
/// part, or for a non-local URL.
pub fn resolve(function: &str, pattern: &str) -> Result<Vec<InputFile>> {
    let local = pattern.strip_prefix("file://").unwrap_or(pattern);
    if local.is_empty() {
        return plan_err!("{function}: the path must not be empty");
    }
    if let Some((scheme, _)) = local.split_once("://")
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return plan_err!("{function}: only local files are supported, got '{pattern}'");
    }
    let path = Path::new(local);
    let files = if has_wildcard(local) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let dir = match path.parent() {
            Some(d) if d.as_os_str().is_empty() => Path::new("."),
            Some(d) => d,
            None => Path::new("."),
        };
        if has_wildcard(&dir.to_string_lossy()) || !has_wildcard(name) {
            return plan_err!(
                "{function}: wildcards ('*', '?') are only supported in the file name part, got '{pattern}'"
            );
        }
        let strip_dot = path.parent().is_some_and(|d| d.as_os_str().is_empty());
        let mut files = list_dir(function, pattern, dir, |n| glob_match(name, n))?;
        if strip_dot {
            // `*.jsonl` lists `./x.jsonl`; report it as `x.jsonl`.
            for f in &mut files {
                if let Ok(p) = f.path.strip_prefix(".") {
                    f.path = p.to_path_buf();
                }
            }
        }
        files
    } else {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => list_dir(function, pattern, path, |n| !is_hidden(n))?,
            Ok(m) if m.is_file() => vec![InputFile {
                path: path.to_path_buf(),
                size: m.len(),
            }],
            Ok(_) => return plan_err!("{function}: '{pattern}' is not a file or directory"),
            Err(e) => return plan_err!("{function}: no file matches '{pattern}': {e}"),
        }
    };
    if files.is_empty() {
        return plan_err!("{function}: no file matches '{pattern}'");
    }
    Ok(files)
}

/// The one string-literal path argument of a table function `name(path)`.
///
/// # Errors
/// A plan error naming `name` for another number of arguments, a NULL, a
/// non-string or a non-literal argument.
pub fn path_argument(name: &str, exprs: &[Expr]) -> Result<String> {
    let [arg] = exprs else {
        return plan_err!(
            "{name} expects exactly one argument (a path or glob), got {}",
            exprs.len()
        );
    };
    match arg {
        Expr::Literal(value, _) => match value.try_as_str() {
            Some(Some(s)) => Ok(s.to_string()),
            Some(None) => plan_err!("{name}: the path must not be NULL"),
            None if value.is_null() => plan_err!("{name}: the path must not be NULL"),
            None => plan_err!("{name} expects a string path, got {}", value.data_type()),
        },
        other => plan_err!("{name} expects a string literal path, got {other}"),
    }
}

/// An object store whose listings leave out hidden files: objects with a name
/// below the listed prefix that starts with `.` or `_` (`.stale.parquet`, the
/// `._x.parquet` files macOS leaves on shared drives, `_SUCCESS`), or that lie in
/// such a folder, as Spark and Hive read a folder. DataFusion reads a folder's
/// files from the store's listing, so `FROM 'dir/'` and a table over `dir/` skip
/// them; a hidden file named on its own is still read. Every other call goes to
/// the wrapped store unchanged.
///
/// The CLI wraps its local file system in it. DataFusion alone reads hidden
/// files, and so does a session of `with_variant` unless its runtime wraps a
/// store the same way:
///
/// ```
/// use std::sync::Arc;
/// use datafusion::execution::object_store::ObjectStoreUrl;
/// use datafusion::execution::runtime_env::RuntimeEnv;
/// let runtime = RuntimeEnv::default();
/// let url = ObjectStoreUrl::local_filesystem();
/// let local = runtime.object_store(&url).unwrap();
/// runtime.register_object_store(url.as_ref(), Arc::new(df_variant::HideHiddenFiles::new(local)));
/// ```
#[derive(Debug)]
pub struct HideHiddenFiles {
    inner: Arc<dyn ObjectStore>,
}

impl HideHiddenFiles {
    /// `inner`, its listings without hidden files.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self { inner }
    }

    /// `listing` without the objects hidden below `prefix`.
    fn visible(
        prefix: Option<&ObjectPath>,
        listing: BoxStream<'static, object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let depth = prefix.map_or(0, |p| p.parts().count());
        listing
            .try_filter(move |meta| {
                let hidden = meta
                    .location
                    .parts()
                    .skip(depth)
                    .any(|part| is_hidden(part.as_ref()));
                std::future::ready(!hidden)
            })
            .boxed()
    }
}

impl std::fmt::Display for HideHiddenFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The wrapped store's name: the sink asks whether a store is local by it.
        write!(f, "{}", self.inner)
    }
}

#[async_trait::async_trait]
#[deny(clippy::missing_trait_methods)]
impl ObjectStore for HideHiddenFiles {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &ObjectPath,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        Self::visible(prefix, self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&ObjectPath>,
        offset: &ObjectPath,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        Self::visible(prefix, self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        // Folders (partitions) as they are; the files listed in them are filtered.
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        // The wrapped store's rename: a local one is atomic, which commits need.
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn listings_leave_out_hidden_files_below_the_prefix() {
        use datafusion::object_store::ObjectStoreExt;
        use datafusion::object_store::memory::InMemory;
        let inner: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        for name in [
            "d/a.parquet",
            "d/.b.parquet",
            "d/._a.parquet",
            "d/_c.parquet",
            "d/_t/x.parquet",
            "d/p=1/y.parquet",
            "d/p=1/.z.parquet",
            "_delta_log/00.json",
        ] {
            inner
                .put(&ObjectPath::from(name), PutPayload::from_static(b"1"))
                .await
                .unwrap();
        }
        let store = HideHiddenFiles::new(inner);
        let names = |listing: BoxStream<'static, object_store::Result<ObjectMeta>>| async {
            let mut names: Vec<String> = listing
                .map_ok(|m| m.location.to_string())
                .try_collect()
                .await
                .unwrap();
            names.sort();
            names
        };
        let d = ObjectPath::from("d");
        assert_eq!(
            names(store.list(Some(&d))).await,
            ["d/a.parquet", "d/p=1/y.parquet"]
        );
        // A hidden folder listed by name shows its files.
        let t = ObjectPath::from("d/_t");
        assert_eq!(names(store.list(Some(&t))).await, ["d/_t/x.parquet"]);
        let log = ObjectPath::from("_delta_log");
        assert_eq!(
            names(store.list_with_offset(Some(&log), &ObjectPath::from("_delta_log/0"))).await,
            ["_delta_log/00.json"]
        );
        // Everything else goes through: a hidden file by name, renames.
        assert!(store.head(&ObjectPath::from("d/.b.parquet")).await.is_ok());
        store
            .rename(
                &ObjectPath::from("d/_c.parquet"),
                &ObjectPath::from("d/c.parquet"),
            )
            .await
            .unwrap();
        assert_eq!(
            names(store.list(Some(&d))).await,
            ["d/a.parquet", "d/c.parquet", "d/p=1/y.parquet"]
        );
    }

    #[test]
    fn globs() {
        assert!(glob_match("*.jsonl", "a.jsonl"));
        assert!(!glob_match("*.jsonl", ".jsonl"));
        assert!(glob_match(".*", ".hidden"));
        assert!(glob_match("part-?.json", "part-1.json"));
        assert!(!glob_match("part-?.json", "part-12.json"));
        assert!(glob_match("*", "x"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("**x", "abx"));
        assert!(glob_match("é?", "éü"));
        assert!(!glob_match("", "a"));
        assert!(glob_match("", ""));
    }

    #[test]
    fn resolve_errors() {
        let e = resolve("f", "/definitely/not/here/x.jsonl").unwrap_err();
        assert!(
            e.to_string()
                .contains("no file matches '/definitely/not/here/x.jsonl'")
        );
        let e = resolve("f", "/definitely/*/x.jsonl").unwrap_err();
        assert!(e.to_string().contains("only supported in the file name"));
        let e = resolve("f", "s3://bucket/x.jsonl").unwrap_err();
        assert!(e.to_string().contains("only local files"));
        let e = resolve("f", "").unwrap_err();
        assert!(e.to_string().contains("must not be empty"));
    }

    #[test]
    fn resolve_dir_and_glob() {
        let dir =
            std::env::temp_dir().join(format!("df_variant_ingest_files_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (n, body) in [
            ("b.jsonl", "2\n"),
            ("a.jsonl", "1\n"),
            ("c.txt", "x"),
            (".h.jsonl", ""),
        ] {
            std::fs::write(dir.join(n), body).unwrap();
        }
        let d = dir.to_string_lossy().to_string();
        let all = resolve("f", &d).unwrap();
        let names: Vec<_> = all
            .iter()
            .map(|f| f.path.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a.jsonl", "b.jsonl", "c.txt"]);
        let g = resolve("f", &format!("{d}/*.jsonl")).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].size, 2);
        let e = resolve("f", &format!("{d}/*.csv")).unwrap_err();
        assert!(e.to_string().contains("no file matches"));
        let one = resolve("f", &format!("file://{d}/c.txt")).unwrap();
        assert_eq!(one[0].size, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
