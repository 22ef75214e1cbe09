//! Every ```` ```sql ```` block of the README and of `docs/` runs, in order, as
//! the `df-variant` shell runs it (`df_variant::sql::query`), one session per
//! page, in a scratch folder where the files the pages name exist: a doc
//! example that fails breaks `cargo test`.
//!
//! - A block may be preceded by a hidden setup comment, run first:
//!   `<!-- sql-setup: CREATE TABLE t AS ...; -->`; it makes the tables the
//!   block assumes (an embedder's `t`, `orders`, `src`).
//! - Paths in string literals are the pages' own: relative ones (`'events/'`,
//!   `'events.jsonl'`) and the absolute `/data/...` of the Delta page are
//!   taken inside the scratch folder.
//! - `events.jsonl` (and `data/events/*.jsonl`) hold 2,000 generated Bluesky
//!   events, the shape the pages' queries read.

use std::path::{Path, PathBuf};

/// The `sql` blocks of a page, each with the setup SQL before it.
fn blocks(page: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut setup = String::new();
    let mut lines = page.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        if let Some(rest) = line.trim().strip_prefix("<!-- sql-setup:") {
            let mut text = rest.to_string();
            while !text.trim_end().ends_with("-->") {
                let Some((_, next)) = lines.next() else { break };
                text.push('\n');
                text.push_str(next);
            }
            setup = text.trim_end().trim_end_matches("-->").to_string();
        } else if line.trim() == "```sql" {
            let mut sql = String::new();
            for (_, l) in lines.by_ref() {
                if l.trim() == "```" {
                    break;
                }
                sql.push_str(l);
                sql.push('\n');
            }
            out.push((n + 1, std::mem::take(&mut setup), sql));
        } else if !line.trim().is_empty() && !line.starts_with("<!--") {
            // A setup comment belongs to the block right after it.
            if line.starts_with("```") {
                setup.clear();
            }
        }
    }
    out
}

/// `sql` with the paths in its string literals taken inside `dir`.
fn localize(sql: &str, dir: &Path) -> String {
    let mut out = String::new();
    let mut rest = sql;
    while let Some(start) = rest.find('\'') {
        out.push_str(&rest[..=start]);
        rest = &rest[start + 1..];
        let end = rest.find('\'').unwrap_or(rest.len());
        let literal = &rest[..end];
        let is_path = !literal.is_empty()
            && literal
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./*-".contains(c))
            && (literal.ends_with('/')
                || [".jsonl", ".parquet", ".json"]
                    .iter()
                    .any(|e| literal.ends_with(e))
                || literal.starts_with("/data/"));
        if is_path {
            out.push_str(&dir.join(literal.trim_start_matches('/')).to_string_lossy());
        } else {
            out.push_str(literal);
        }
        rest = &rest[end..];
        if let Some(quote) = rest.strip_prefix('\'') {
            out.push('\'');
            rest = quote;
        }
    }
    out.push_str(rest);
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("df_variant_docs_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("data/events")).unwrap();
    let mut events = Vec::new();
    df_variant::demo::bluesky::write_ndjson(2000, 1, &mut events).unwrap();
    std::fs::write(dir.join("events.jsonl"), &events).unwrap();
    let half = events.len() / 2;
    let cut = half + events[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(dir.join("data/events/a.jsonl"), &events[..cut]).unwrap();
    std::fs::write(dir.join("data/events/b.jsonl"), &events[cut..]).unwrap();
    dir
}

/// Runs every block of `page` (relative to the repository), in order.
async fn run_page(page: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(page)).unwrap();
    let dir = scratch(&page.replace(['/', '.'], "_"));
    let ctx = df_variant::variant_context();
    let mut failures = Vec::new();
    for (line, setup, sql) in blocks(&text) {
        for (what, script) in [("setup", setup), ("block", sql)] {
            for statement in df_variant::sql::split_statements(&localize(&script, &dir)) {
                if statement.trim().is_empty()
                    || statement
                        .lines()
                        .all(|l| l.trim().is_empty() || l.trim().starts_with("--"))
                {
                    continue;
                }
                let result = match df_variant::sql::query(&ctx, &statement).await {
                    Ok(df) => df.collect().await.map(|_| ()),
                    Err(e) => Err(e),
                };
                if let Err(e) = result {
                    failures.push(format!(
                        "{page}:{line} ({what}): {}\n  {e}",
                        statement.trim()
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    failures
}

/// The pages whose SQL runs; a new page with a `sql` block must be added.
const PAGES: &[&str] = &[
    "README.md",
    "docs/cli.md",
    "docs/delta.md",
    "docs/ndjson.md",
    "docs/parquet.md",
];

#[tokio::test]
async fn every_sql_block_of_the_readme_and_the_docs_runs() {
    let mut failures = Vec::new();
    for page in PAGES {
        failures.extend(run_page(page).await);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_page_with_sql_is_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec!["README.md".to_string()];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        pages.push(format!("docs/{}", e.unwrap().file_name().to_string_lossy()));
    }
    for page in pages {
        let text = std::fs::read_to_string(root.join(&page)).unwrap_or_default();
        if !blocks(&text).is_empty() {
            assert!(
                PAGES.contains(&page.as_str()),
                "{page} has SQL blocks: add it to PAGES"
            );
        }
    }
}

#[test]
fn setup_comments_belong_to_the_next_block_and_paths_move() {
    let page = "<!-- sql-setup: CREATE TABLE t AS SELECT 1; -->\n```sql\nSELECT * FROM t;\n```\n```sql\nSELECT 2;\n```\n";
    let b = blocks(page);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].1.trim(), "CREATE TABLE t AS SELECT 1;");
    assert_eq!(b[1].1, "");
    let sql = localize(
        "COPY t TO 'events/' ; SELECT 'a b', 'x.parquet', '/data/t'",
        Path::new("/s"),
    );
    assert_eq!(
        sql,
        "COPY t TO '/s/events/' ; SELECT 'a b', '/s/x.parquet', '/s/data/t'"
    );
}
