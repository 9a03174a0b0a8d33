//! A structural diff between two canonical request bodies: the JSON paths
//! whose values differ, each value digested unless
//! `SYMFONIC_EVALS_SHOW_VALUES` is set. It tells an adopter what changed in
//! a request (the prompt, the tool list, the model) without printing it.

use std::fmt;

use serde_json::Value;

use crate::redact::{json_diff, render_path, sensitive, show_values};

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
/// Keys are shown as they are: in a request body they are the API's field
/// names, not content.
pub fn structural_diff(recorded: &Value, requested: &Value) -> Vec<PathDiff> {
    json_diff(recorded, requested)
        .into_iter()
        .map(|d| PathDiff {
            path: render_path(&d.path, |key| format!("{key:?}")),
            recorded: shown(d.left),
            requested: shown(d.right),
        })
        .collect()
}

/// A differing value as a miss shows it: digested unless every value is
/// to be shown.
pub(crate) fn shown(value: Option<&Value>) -> String {
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
