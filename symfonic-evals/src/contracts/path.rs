//! Walking a dotted path through JSON state, and comparing JSON by value.
//!
//! Two naming conventions meet in turn state: prompt-rendered state tends to
//! arrive in UPPER_SNAKE and runtime state in snake_case. A rule written
//! against one must not silently stop matching under the other, so every
//! segment is tried upper case first, then lower case.

use serde_json::Value;

/// Resolves `path` (segments separated by `.`) inside `state`.
///
/// Returns `None` when the path is missing: an empty path, an empty segment
/// (a leading, trailing or doubled dot), a segment that lands on something
/// other than an object, or a key found in neither casing. An explicit JSON
/// `null` is *present*: it resolves to `Some(&Value::Null)`, which is what lets
/// `exists` tell "declared as null" from "never declared".
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::resolve_path;
///
/// let state = json!({"ACCOUNT": {"region": "US"}, "note": null});
/// assert_eq!(resolve_path(&state, "account.REGION"), Some(&json!("US")));
/// assert_eq!(resolve_path(&state, "note"), Some(&json!(null)));
/// assert_eq!(resolve_path(&state, "account..region"), None);
/// assert_eq!(resolve_path(&state, "missing"), None);
/// ```
pub fn resolve_path<'a>(state: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return None;
    }
    let mut cursor = state;
    for segment in path.split('.') {
        if segment.is_empty() {
            return None;
        }
        let object = cursor.as_object()?;
        cursor = object
            .get(&segment.to_uppercase())
            .or_else(|| object.get(&segment.to_lowercase()))?;
    }
    Some(cursor)
}

/// JSON equality by value: numbers compare numerically (`1` equals `1.0`),
/// arrays element-wise in order, objects key-wise regardless of key order.
///
/// `serde_json`'s own equality tells an integer from a float of the same
/// value, which would make a rule declaring `5` miss a state holding `5.0`
/// only because of how a client happened to encode it.
pub(crate) fn json_eq(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => numbers_eq(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| json_eq(x, y)))
        }
        _ => left == right,
    }
}

/// Equal by value. An integer and a float are equal only when the float is
/// a whole number that is exactly that integer: rounding both through `f64`
/// would make `9007199254740993` equal `9007199254740992.0`.
fn numbers_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (as_integer(a), as_integer(b)) {
        (Some(x), Some(y)) => x == y,
        (Some(i), None) => b.as_f64().is_some_and(|f| float_is_integer(f, i)),
        (None, Some(i)) => a.as_f64().is_some_and(|f| float_is_integer(f, i)),
        (None, None) => a.as_f64() == b.as_f64(),
    }
}

/// Whether `f` is exactly the integer `i` (2^127 bounds the i128 range).
fn float_is_integer(f: f64, i: i128) -> bool {
    const BOUND: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    f.fract() == 0.0 && (-BOUND..BOUND).contains(&f) && f as i128 == i
}

fn as_integer(n: &serde_json::Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upper_case_is_tried_before_lower_case() {
        let state = json!({"REGION": "upper", "region": "lower"});
        assert_eq!(resolve_path(&state, "Region"), Some(&json!("upper")));
        let only_lower = json!({"region": "lower"});
        assert_eq!(resolve_path(&only_lower, "REGION"), Some(&json!("lower")));
    }

    #[test]
    fn mixed_case_keys_are_not_found_by_either_casing() {
        let state = json!({"Region": "US"});
        assert_eq!(resolve_path(&state, "Region"), None);
    }

    #[test]
    fn malformed_paths_are_missing() {
        let state = json!({"a": {"b": 1}, "": 2});
        for path in ["", ".", ".a", "a.", "a..b", "a.b.", ".a.b"] {
            assert_eq!(resolve_path(&state, path), None, "path {path:?}");
        }
        assert_eq!(resolve_path(&state, "a.b"), Some(&json!(1)));
    }

    #[test]
    fn only_objects_are_walked() {
        let state = json!({"list": [1, 2], "text": "abc", "n": 3});
        assert_eq!(resolve_path(&state, "list.0"), None);
        assert_eq!(resolve_path(&state, "text.len"), None);
        assert_eq!(resolve_path(&state, "n.x"), None);
        assert_eq!(resolve_path(&json!([{"a": 1}]), "a"), None);
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(5), &json!(5.0)));
        assert!(json_eq(&json!(-1), &json!(-1)));
        assert!(!json_eq(&json!(u64::MAX), &json!(-1)));
        assert!(!json_eq(&json!(1), &json!("1")));
        assert!(json_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }
}
