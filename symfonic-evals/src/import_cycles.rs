//! The crate's files import one way: no file reaches itself through the
//! `crate::` and `super::` paths of the files it names. A circle makes a
//! module impossible to read, test or move without the others in it, so a
//! test keeps any from coming back.
//!
//! The graph is file-level: a path resolves to the longest module file it
//! names (`crate::runner::Session` is `runner/mod.rs`,
//! `crate::runner::session::Session` is `runner/session.rs`), a file naming
//! its own ancestor does not count, and everything from a file's
//! `#[cfg(test)] mod tests` on is left out (tests come last in a file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module, as the path of its segments (`["runner", "session"]`).
type Module = Vec<String>;

/// The module a source file under `src` holds: `lib.rs` is the root,
/// `a/mod.rs` is `a`, `a/b.rs` is `a::b`.
fn module_of(file: &str) -> Module {
    let mut parts: Module = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts
        .last()
        .is_some_and(|last| last == "mod" || last == "lib")
    {
        parts.pop();
    }
    parts
}

/// Every full path a `use`-like reference at the start of `text` names,
/// its groups (`a::{b, c::d}`) expanded; `prefix` is what came before.
fn paths(text: &str, prefix: &Module, out: &mut Vec<Module>) {
    let mut path = prefix.clone();
    let mut rest = text;
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end > 0 && &rest[..end] != "self" {
            path.push(rest[..end].to_owned());
        }
        rest = &rest[end..];
        match rest.strip_prefix("::") {
            Some(after) if after.starts_with('{') => return group(&after[1..], &path, out),
            Some(after) => rest = after,
            None => return out.push(path),
        }
    }
}

/// The items of a group, up to its closing brace, each expanded by [`paths`].
fn group(text: &str, prefix: &Module, out: &mut Vec<Module>) {
    let (mut depth, mut start) = (0, 0);
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return paths(text[start..at].trim_start(), prefix, out),
            '}' => depth -= 1,
            ',' if depth == 0 => {
                paths(text[start..at].trim_start(), prefix, out);
                start = at + 1;
            }
            _ => {}
        }
    }
}

/// `source` up to its `#[cfg(test)] mod tests {`, if it has one.
fn without_tests(source: &str) -> &str {
    let tests = source
        .match_indices("#[cfg(test)]")
        .find(|(at, attribute)| {
            source[at + attribute.len()..]
                .trim_start()
                .starts_with("mod tests {")
        });
    tests.map_or(source, |(at, _)| &source[..at])
}

/// The file-level import graph of `files` (path under `src`, source).
fn graph(files: &[(String, String)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<Module> = files.iter().map(|(file, _)| module_of(file)).collect();
    let resolve = |path: &Module| {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| modules.contains(prefix))
    };
    let mut edges = BTreeMap::new();
    for (file, source) in files {
        let me = module_of(file);
        let source = without_tests(source);
        let mut named = Vec::new();
        for (at, _) in source
            .match_indices("crate::")
            .chain(source.match_indices("super::"))
        {
            let before = source[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // inside a longer name, or a later `super::` of a chain
            }
            let mut rest = &source[at..];
            let mut base = me.clone();
            if let Some(after) = rest.strip_prefix("crate::") {
                base.clear();
                rest = after;
            }
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            paths(rest, &base, &mut named);
        }
        let targets = named
            .iter()
            .filter_map(&resolve)
            .filter(|target| !me.starts_with(target))
            .collect();
        edges.insert(me, targets);
    }
    edges
}

/// A circle in `edges`, as its modules in import order, if there is one.
fn cycle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        at: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        done: &mut BTreeSet<Module>,
        trail: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(start) = trail.iter().position(|m| m == at) {
            return Some(trail[start..].to_vec());
        }
        if !done.insert(at.clone()) {
            return None;
        }
        trail.push(at.clone());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, edges, done, trail) {
                return Some(found);
            }
        }
        trail.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|start| visit(start, edges, &mut done, &mut Vec::new()))
}

/// Every `.rs` file under `dir`, as (path under `root`, source).
fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("a readable source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let name = path.strip_prefix(root).expect("under the root");
            let name = name.to_string_lossy().replace('\\', "/");
            out.push((
                name,
                std::fs::read_to_string(&path).expect("a readable source"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(f, s)| ((*f).to_owned(), (*s).to_owned()))
            .collect()
    }

    fn names(cycle: &[Module]) -> Vec<String> {
        cycle.iter().map(|m| m.join("/")).collect()
    }

    #[test]
    fn the_crate_imports_one_way() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        sources(&root, &root, &mut found);
        assert!(found.len() > 50, "the crate's sources: {}", found.len());
        if let Some(circle) = cycle(&graph(&found)) {
            panic!(
                "these files import each other in a circle: {:?}",
                names(&circle)
            );
        }
    }

    #[test]
    fn a_circle_through_a_group_or_a_parent_is_found() {
        let two = files(&[
            ("lib.rs", ""),
            ("a/mod.rs", "use crate::b::{self, Thing};"),
            ("b/mod.rs", "use crate::a::c::Other;"),
            ("a/c.rs", "use super::super::b::d::{x, y::{Z, W}};"),
            ("b/d.rs", "fn f() -> crate::a::A { todo!() }"),
        ]);
        let circle = cycle(&graph(&two)).expect("a circle");
        assert_eq!(names(&circle), ["a", "b", "a/c", "b/d"]);
    }

    #[test]
    fn ancestors_tests_and_longer_names_make_no_circle() {
        let fine = files(&[
            ("lib.rs", ""),
            ("a/mod.rs", "use crate::a::b::B;\nuse my_crate::b::X;"),
            ("a/b.rs", "use super::A;\nuse crate::a::Thing;"),
            ("c.rs", "#[cfg(test)]\nmod tests {\n    use crate::d::D;\n}"),
            ("d.rs", "use crate::c::C;"),
        ]);
        let edges = graph(&fine);
        assert_eq!(cycle(&edges), None);
        assert_eq!(
            names(
                &edges[&module_of("a/mod.rs")]
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
            ),
            ["a/b"]
        );
        assert_eq!(
            names(
                &edges[&module_of("d.rs")]
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
            ),
            ["c"]
        );
        assert!(edges[&module_of("c.rs")].is_empty());
    }
}
