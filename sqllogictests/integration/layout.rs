//! `docs/layout.md` kept true: the modules of `src/` depend on each other the
//! way the page says. Each file's `crate::` paths (outside comments and its
//! `mod tests`) are read as the edges between top-level modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules it uses.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".rs").to_string()
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let top = relative
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            if !modules.contains(&top) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let used: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if used != top && modules.contains(&used) {
                        edges.entry(top.clone()).or_default().insert(used);
                    }
                }
            }
        }
    }
    edges
}

/// Whether `to` is reachable from `from`.
fn reaches(edges: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m.clone()) {
            stack.extend(edges.get(&m).into_iter().flatten().cloned());
        }
    }
    false
}

/// The edges that close a circle, as `docs/layout.md` lists them ("The
/// circles that remain"). A new one fails the test; one that is gone must be
/// taken off the page and this list.
const KNOWN_CIRCLE_EDGES: &[(&str, &str)] = &[
    ("array", "shredding"),
    ("boundary", "array"),
    ("delta", "parquet"),
    ("parquet", "delta"),
    ("parquet", "workload"),
    ("shredding", "array"),
    ("shredding", "boundary"),
    ("workload", "parquet"),
];

#[test]
fn circles_are_only_the_ones_the_layout_page_lists() {
    let edges = edges();
    let circles: BTreeSet<(String, String)> = edges
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |t| (from.clone(), t.clone())))
        .filter(|(from, to)| reaches(&edges, to, from))
        .collect();
    let known: BTreeSet<(String, String)> = KNOWN_CIRCLE_EDGES
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect();
    assert_eq!(
        circles, known,
        "the circles of src/ changed; update docs/layout.md and KNOWN_CIRCLE_EDGES"
    );
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/layout.md"))
            .unwrap();
    for (a, b) in KNOWN_CIRCLE_EDGES {
        assert!(
            page.contains(&format!("`{a}` → `{b}`")),
            "docs/layout.md does not list `{a}` → `{b}`"
        );
    }
}

#[test]
fn the_one_way_rules_of_the_layout_page_hold() {
    let edges = edges();
    let uses = |m: &str| edges.get(m).cloned().unwrap_or_default();
    // The Variant value layer uses nothing else of the crate.
    assert!(
        uses("variant").is_empty(),
        "variant uses {:?}",
        uses("variant")
    );
    // Only the plan codec and the distributed glue (and the CLI, outside
    // src/'s modules) know the opt-in speedups; the default path does not.
    for (m, to) in &edges {
        if to.contains("accel") {
            assert!(
                ["codec", "distributed"].contains(&m.as_str()),
                "{m} uses accel"
            );
        }
    }
    // The speedups are not about Variant: they use only the settings (and
    // the calendar arithmetic of the value layer).
    assert!(
        uses("accel").is_subset(&BTreeSet::from([
            "config".to_string(),
            "variant".to_string()
        ])),
        "accel uses {:?}",
        uses("accel")
    );
    // Nothing below the SQL layer uses it.
    for m in ["variant", "array", "shredding", "parquet", "udf", "delta"] {
        assert!(!uses(m).contains("sql"), "{m} uses sql");
    }
}
