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

/// The edges of `edges` that close a circle.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    edges
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |t| (from.clone(), t.clone())))
        .filter(|(from, to)| reaches(edges, to, from))
        .collect()
}

#[test]
fn no_module_of_src_is_in_a_circle() {
    let circles = circles(&edges());
    assert!(
        circles.is_empty(),
        "these imports close a circle between the modules of src/ (docs/layout.md says each uses only those below it): {circles:?}"
    );
}

/// Within each folder of `src/`, file -> the sibling files it uses (through
/// `super::file` or `crate::folder::file`, also inside `use super::{...}`);
/// `mod.rs`, the folder's own page, is left out.
fn file_edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for dir in std::fs::read_dir(&src).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let folder = dir.file_name().unwrap().to_string_lossy().into_owned();
        let files: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_suffix(".rs")
                    .filter(|n| *n != "mod")
                    .map(str::to_string)
            })
            .collect();
        for file in &files {
            let text = std::fs::read_to_string(dir.join(format!("{file}.rs"))).unwrap();
            let code: String = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let own = format!("crate::{folder}::");
            let mut used = BTreeSet::new();
            for prefix in ["super::", own.as_str()] {
                for (i, _) in code.match_indices(prefix) {
                    let rest = &code[i + prefix.len()..];
                    // `super::name` or `super::{a::X, b, c::{..}}`: the
                    // names directly inside the braces.
                    let names: Vec<&str> = match rest.strip_prefix('{') {
                        Some(group) => {
                            let mut depth = 0;
                            let end = group
                                .char_indices()
                                .find(|&(_, c)| {
                                    depth += i32::from(c == '{') - i32::from(c == '}');
                                    depth < 0
                                })
                                .map_or(group.len(), |(e, _)| e);
                            group[..end]
                                .split(',')
                                .map(|n| n.trim().split("::").next().unwrap_or_default())
                                .collect()
                        }
                        None => vec![
                            rest.split(|c: char| {
                                !(c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                            })
                            .next()
                            .unwrap_or_default(),
                        ],
                    };
                    for name in names {
                        if name != file && files.contains(name) {
                            used.insert(name.to_string());
                        }
                    }
                }
            }
            edges.insert(
                format!("{folder}/{file}"),
                used.into_iter().map(|u| format!("{folder}/{u}")).collect(),
            );
        }
    }
    edges
}

#[test]
fn no_file_of_a_folder_is_in_a_circle_with_its_siblings() {
    let edges = file_edges();
    // The reading sees the edges it must (a planted circle would be seen).
    assert!(
        edges["parquet/scan"].contains("parquet/pruning"),
        "{:?}",
        edges["parquet/scan"]
    );
    assert!(
        edges["delta/write"].contains("delta/log"),
        "{:?}",
        edges["delta/write"]
    );
    let circles = circles(&edges);
    assert!(
        circles.is_empty(),
        "these imports close a circle between the files of a folder: {circles:?}"
    );
}

/// The layers of `docs/layout.md` (its `layers` block): module -> line.
fn layers() -> BTreeMap<String, usize> {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/layout.md"))
            .unwrap();
    let block = page
        .split("```layers\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/layout.md has a ```layers block");
    block
        .lines()
        .enumerate()
        .flat_map(|(i, line)| line.split('·').map(move |m| (m.trim().to_string(), i)))
        .collect()
}

#[test]
fn every_module_uses_only_the_layers_above_it_on_the_layout_page() {
    let layers = layers();
    let edges = edges();
    let mut wrong = Vec::new();
    for module in edges.keys().chain(edges.values().flatten()) {
        if !layers.contains_key(module) {
            wrong.push(format!("{module} is not on the page"));
        }
    }
    for (from, to) in edges
        .iter()
        .flat_map(|(f, t)| t.iter().map(move |t| (f, t)))
    {
        if let (Some(a), Some(b)) = (layers.get(from), layers.get(to))
            && a <= b
        {
            wrong.push(format!("{from} (line {a}) uses {to} (line {b})"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/layout.md's layers are not the code's: {wrong:?}"
    );
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
