//! A structural diff between two canonical request bodies: the JSON paths
//! whose values differ, each value digested unless
//! `SYMFONIC_EVALS_SHOW_VALUES` is set. It tells an adopter what changed in
//! a request (the prompt, the tool list, the model) without printing it.

use std::fmt;

use serde_json::Value;

use crate::redact::{sensitive, show_values};

/// One JSON path whose value differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathDiff {
    /// `$.messages[1].content` and the like.
    pub path: String,
    /// The recorded value (digested), or `absent`.
    pub recorded: String,
    /// The requested value (digested), or `absent`.
    pub requested: String,
}

impl fmt::Display for PathDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (recorded {}, requested {})",
            self.path, self.recorded, self.requested
        )
    }
}

/// Every leaf path at which `recorded` and `requested` differ, in document
/// order. Arrays compare index by index; a missing index or key is `absent`.
pub fn structural_diff(recorded: &Value, requested: &Value) -> Vec<PathDiff> {
    let mut out = Vec::new();
    walk("$", Some(recorded), Some(requested), &mut out);
    out
}

/// How many paths differ, cheaper than building the diff.
pub(crate) fn distance(recorded: &Value, requested: &Value) -> usize {
    fn count(a: Option<&Value>, b: Option<&Value>) -> usize {
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let mut n = 0;
                for (k, v) in x {
                    n += count(Some(v), y.get(k));
                }
                for (k, v) in y {
                    if !x.contains_key(k) {
                        n += count(None, Some(v));
                    }
                }
                n
            }
            (Some(Value::Array(x)), Some(Value::Array(y))) => (0..x.len().max(y.len()))
                .map(|i| count(x.get(i), y.get(i)))
                .sum(),
            (a, b) => usize::from(a != b),
        }
    }
    count(Some(recorded), Some(requested))
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "absent".to_owned(),
        Some(Value::String(text)) => {
            if show_values() {
                format!("{text:?}")
            } else {
                sensitive(text)
            }
        }
        Some(other) => sensitive(&other.to_string()),
    }
}

fn walk(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<PathDiff>) {
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for (k, v) in x {
                walk(&key_path(path, k), Some(v), y.get(k), out);
            }
            for (k, v) in y {
                if !x.contains_key(k) {
                    walk(&key_path(path, k), None, Some(v), out);
                }
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            for i in 0..x.len().max(y.len()) {
                walk(&format!("{path}[{i}]"), x.get(i), y.get(i), out);
            }
        }
        (a, b) if a != b => out.push(PathDiff {
            path: path.to_owned(),
            recorded: shown(a),
            requested: shown(b),
        }),
        _ => {}
    }
}

fn key_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{key:?}]")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_each_differing_path_and_digests_values() {
        let recorded = json!({"model": "m", "messages": [{"role": "user", "content": "refund order 4"}], "n": 1});
        let requested = json!({"model": "m", "messages": [{"role": "user", "content": "refund order 5"}], "tools": []});
        let diff = structural_diff(&recorded, &requested);
        let paths: Vec<&str> = diff.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["$.messages[0].content", "$.n", "$.tools"]);
        assert_eq!(distance(&recorded, &requested), 3);
        if !show_values() {
            assert!(diff[0].recorded.starts_with("sha256:"));
            assert!(!diff.iter().any(|d| d.to_string().contains("order")));
        }
        assert_eq!(diff[1].requested, "absent");
    }

    #[test]
    fn equal_values_have_no_diff_and_odd_keys_are_quoted() {
        let v = json!({"a b": [1, {"c": null}]});
        assert!(structural_diff(&v, &v).is_empty());
        let w = json!({"a b": [1, {"c": true}, 3]});
        let paths: Vec<String> = structural_diff(&v, &w)
            .into_iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(paths, [r#"$["a b"][1].c"#, r#"$["a b"][2]"#]);
    }
}
