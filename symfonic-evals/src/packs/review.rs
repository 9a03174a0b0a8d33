//! The review projection and procedure identity, spelled once here so a
//! deployment publishes them in exactly the shape the pack compares.

/// The review door's rows as sorted `(status, governed tool)` pairs, exactly
/// as stored. An unreviewed draft names no tool, so it projects as
/// `("draft", "")`; a draft that already names one shows it, and the pack's
/// draft probe then fails, because that draft claims to govern something
/// nobody approved.
///
/// ```
/// use symfonic_evals::procedural_review_rows;
/// let rows = procedural_review_rows([("draft", ""), ("approved", "issue_refund")]);
/// assert_eq!(rows, vec![("approved".to_owned(), "issue_refund".to_owned()), ("draft".to_owned(), String::new())]);
/// // A draft that already names a tool is not shown as governing nothing.
/// let early = procedural_review_rows([("draft", "issue_refund")]);
/// assert_eq!(early, vec![("draft".to_owned(), "issue_refund".to_owned())]);
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
        .map(|(status, tool)| (status.as_ref().to_owned(), tool.as_ref().to_owned()))
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
    // Each part behind its length, so no two splits of one text collide.
    let mut framed = Vec::new();
    for part in [
        tool.as_bytes(),
        precondition.to_string().as_bytes(),
        text.as_bytes(),
    ] {
        framed.extend_from_slice(&(part.len() as u64).to_le_bytes());
        framed.extend_from_slice(part);
    }
    crate::redact::sha256_hex(&framed)
}
