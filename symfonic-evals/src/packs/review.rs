//! The review projection and procedure identity, spelled once here so a
//! deployment publishes them in exactly the shape the pack compares.

use sha2::{Digest, Sha256};

/// The review door's rows as sorted `(status, governed tool)` pairs. An
/// unreviewed draft projects as `("draft", "")`: it governs nothing.
///
/// ```
/// use symfonic_evals::procedural_review_rows;
/// let rows = procedural_review_rows([("approved", "issue_refund"), ("draft", "")]);
/// assert_eq!(rows, vec![("approved".to_owned(), "issue_refund".to_owned()), ("draft".to_owned(), String::new())]);
/// ```
pub fn procedural_review_rows<S, T>(
    procedures: impl IntoIterator<Item = (S, T)>,
) -> Vec<(String, String)>
where
    S: AsRef<str>,
    T: AsRef<str>,
{
    let mut rows: Vec<(String, String)> = procedures
        .into_iter()
        .map(|(status, tool)| {
            let status = status.as_ref();
            // A draft governs nothing until reviewed, whatever it names.
            let tool = if status == "draft" { "" } else { tool.as_ref() };
            (status.to_owned(), tool.to_owned())
        })
        .collect();
    rows.sort();
    rows
}

/// A procedure's identity digest (hex sha256 over its governed tool, its
/// precondition as compact JSON and its text), so the review door and the
/// enforcement gate name the same procedure the same way.
///
/// ```
/// use symfonic_evals::procedure_identity;
/// let a = procedure_identity("issue_refund", &serde_json::json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]), "verify the account region");
/// assert_eq!(a.len(), 64);
/// assert_ne!(a, procedure_identity("issue_refund", &serde_json::json!([]), "verify the account region"));
/// ```
pub fn procedure_identity(tool: &str, precondition: &serde_json::Value, text: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [
        tool.as_bytes(),
        precondition.to_string().as_bytes(),
        text.as_bytes(),
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
