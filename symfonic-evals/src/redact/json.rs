//! JSON as a report may show it: the shape (keys, positions, types) with
//! each leaf in clear only when that hides nothing, and structural diffs
//! naming the paths where two values differ.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::Value;

use super::{short_digest, shown, Shown};

/// Values that are public anyway: every leaf and key of a pack's own
/// arguments and of the values its assertions expect. A report shows them
/// in clear wherever they turn up in what a deployment reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublicValues {
    leaves: HashSet<String>,
}

impl PublicValues {
    /// Every leaf (as compact JSON) and every key of `values`.
    pub fn from_values<'a>(values: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut leaves = HashSet::new();
        let mut stack: Vec<&Value> = values.into_iter().collect();
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => {
                    for (key, child) in map {
                        leaves.insert(Value::String(key.clone()).to_string());
                        stack.push(child);
                    }
                }
                leaf => {
                    leaves.insert(leaf.to_string());
                }
            }
        }
        Self { leaves }
    }

    /// Adds `other`'s values.
    pub fn extend(&mut self, other: &Self) {
        self.leaves.extend(other.leaves.iter().cloned());
    }

    /// Whether a leaf is public.
    pub fn contains(&self, leaf: &Value) -> bool {
        self.leaves.contains(&leaf.to_string())
    }

    fn key(&self, key: &str) -> bool {
        self.leaves
            .contains(&Value::String(key.to_owned()).to_string())
    }
}

/// One leaf as a report shows it.
fn leaf(value: &Value, public: &PublicValues) -> String {
    match value {
        Value::Null | Value::Bool(_) => value.to_string(),
        _ if shown() >= Shown::Evidence || public.contains(value) => value.to_string(),
        Value::Number(_) => format!("<number {}>", short_digest(value.to_string().as_bytes())),
        _ => format!("<string {}>", short_digest(value.to_string().as_bytes())),
    }
}

fn key(name: &str, public: &PublicValues) -> String {
    if shown() >= Shown::Evidence || public.key(name) {
        format!("{name:?}")
    } else {
        format!("<key {}>", short_digest(name.as_bytes()))
    }
}

/// `value` as JSON with each leaf and key shown only when that hides
/// nothing (see [`PublicValues`]).
pub(crate) fn shape(value: &Value, public: &PublicValues) -> String {
    let mut out = String::new();
    write_shape(&mut out, value, public);
    out
}

fn write_shape(out: &mut String, value: &Value, public: &PublicValues) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_shape(out, item, public);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (name, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}: ", key(name, public));
                write_shape(out, item, public);
            }
            out.push('}');
        }
        other => out.push_str(&leaf(other, public)),
    }
}

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// One place where two values differ: the path, and what each side holds
/// there (`None` where it holds nothing).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Difference<'a> {
    pub(crate) path: Vec<Segment>,
    pub(crate) left: Option<&'a Value>,
    pub(crate) right: Option<&'a Value>,
}

/// Every leaf path at which `left` and `right` differ, in document order.
/// Arrays compare index by index; a missing index or key holds nothing.
pub(crate) fn json_diff<'a>(left: &'a Value, right: &'a Value) -> Vec<Difference<'a>> {
    json_diff_bounded(left, right, usize::MAX, usize::MAX).listed
}

/// A diff whose work is bounded: the first differences in document order,
/// how many were found in all, and whether the walk saw every node.
#[derive(Debug)]
pub(crate) struct BoundedDiff<'a> {
    /// At most the `listed` asked for.
    pub(crate) listed: Vec<Difference<'a>>,
    /// Every difference found (listed or not) before the budget ran out.
    pub(crate) found: usize,
    /// Whether both values were walked to the end.
    pub(crate) complete: bool,
}

/// As [`json_diff`], listing at most `listed` differences and visiting at
/// most `budget` nodes, so a diff of two huge values costs what it is
/// allowed to and no more.
pub(crate) fn json_diff_bounded<'a>(
    left: &'a Value,
    right: &'a Value,
    listed: usize,
    budget: usize,
) -> BoundedDiff<'a> {
    let mut walk = Walk {
        path: Vec::new(),
        out: BoundedDiff {
            listed: Vec::new(),
            found: 0,
            complete: true,
        },
        listed,
        budget,
    };
    walk.visit(Some(left), Some(right));
    walk.out
}

struct Walk<'a> {
    path: Vec<Segment>,
    out: BoundedDiff<'a>,
    listed: usize,
    budget: usize,
}

impl<'a> Walk<'a> {
    fn visit(&mut self, a: Option<&'a Value>, b: Option<&'a Value>) {
        if self.budget == 0 {
            self.out.complete = false;
            return;
        }
        self.budget -= 1;
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                for (k, v) in x {
                    self.path.push(Segment::Key(k.clone()));
                    self.visit(Some(v), y.get(k));
                    self.path.pop();
                }
                for (k, v) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                    self.path.push(Segment::Key(k.clone()));
                    self.visit(None, Some(v));
                    self.path.pop();
                }
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) => {
                for i in 0..x.len().max(y.len()) {
                    self.path.push(Segment::Index(i));
                    self.visit(x.get(i), y.get(i));
                    self.path.pop();
                }
            }
            (a, b) if a != b => {
                self.out.found += 1;
                if self.out.listed.len() < self.listed {
                    self.out.listed.push(Difference {
                        path: self.path.clone(),
                        left: a,
                        right: b,
                    });
                }
            }
            _ => {}
        }
    }
}

/// A path as `$.key[0]["odd key"]`, each key rendered by `key`.
pub(crate) fn render_path(path: &[Segment], key: impl Fn(&str) -> String) -> String {
    let mut out = String::from("$");
    for segment in path {
        match segment {
            Segment::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Segment::Key(name) => {
                let plain =
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                let shown = key(name);
                if plain && shown == format!("{name:?}") {
                    let _ = write!(out, ".{name}");
                } else {
                    let _ = write!(out, "[{shown}]");
                }
            }
        }
    }
    out
}

/// The differences between what a pack expected and what a deployment
/// reported, as report lines: each path, what was expected (the pack's own,
/// shown) and what was found (shown only when that hides nothing).
pub(crate) fn expected_vs_found(
    expected: &Value,
    found: &Value,
    public: &PublicValues,
    limit: usize,
) -> Vec<String> {
    let differences = json_diff(expected, found);
    let total = differences.len();
    let mut lines: Vec<String> = differences
        .into_iter()
        .take(limit)
        .map(|d| {
            let path = render_path(&d.path, |k| key(k, public));
            let side =
                |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), |v| shape(v, public));
            let wanted = d
                .left
                .map_or_else(|| "nothing".to_owned(), Value::to_string);
            format!("{path}: expected {wanted}, found {}", side(d.right))
        })
        .collect();
    if total > limit {
        lines.push(format!("and {} more difference(s)", total - limit));
    }
    lines
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn shapes_show_structure_booleans_null_and_public_values_only() {
        if shown() != Shown::Digests {
            return;
        }
        let public = PublicValues::from_values([&json!({"status": "draft", "tool": ""})]);
        let reported = json!([["draft", "issue_refund"], {"status": true, "card": "4111", "n": 3, "none": null}]);
        let text = shape(&reported, &public);
        assert!(text.starts_with("[[\"draft\", <string sha256:"), "{text}");
        assert!(text.contains("\"status\": true"), "{text}");
        assert!(text.contains("<key sha256:"), "{text}");
        assert!(text.contains("<number sha256:"), "{text}");
        assert!(text.contains("null"), "{text}");
        assert!(!text.contains("4111") && !text.contains("issue_refund") && !text.contains("card"));
    }

    #[test]
    fn a_diff_names_paths_and_shows_the_expected_side() {
        if shown() != Shown::Digests {
            return;
        }
        let expected = json!([["approved", "issue_refund"]]);
        let public = PublicValues::from_values([&expected, &json!(["draft", ""])]);
        let found = json!([["draft", ""], ["approved", "secret_tool"]]);
        let lines = expected_vs_found(&expected, &found, &public, 5);
        assert_eq!(
            lines[0], "$[0][0]: expected \"approved\", found \"draft\"",
            "{lines:?}"
        );
        assert_eq!(lines[1], "$[0][1]: expected \"issue_refund\", found \"\"");
        assert!(lines[2].starts_with("$[1]: expected nothing, found [\"approved\", <string"));
        assert!(!lines.iter().any(|l| l.contains("secret_tool")));
        let many = expected_vs_found(&json!([1, 2, 3]), &json!([4, 5, 6]), &public, 2);
        assert_eq!(many.last().unwrap(), "and 1 more difference(s)");
    }
}
