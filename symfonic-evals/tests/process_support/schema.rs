//! A JSON Schema validator for exactly the subset `protocol/v1.schema.json`
//! uses: `type`, `const`, `enum`, `properties`, `required`,
//! `additionalProperties`, `items`, `minItems`, `uniqueItems`, `minimum`,
//! `minLength`, `maxLength`, `oneOf` and local `$ref`. Any other keyword is refused, so the
//! schema cannot silently grow past what this checks.

use serde_json::Value;

const KNOWN: [&str; 19] = [
    "$schema",
    "title",
    "description",
    "$defs",
    "$ref",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "uniqueItems",
    "minimum",
    "minLength",
    "maxLength",
    "oneOf",
    "$comment",
];

/// The protocol schema, loaded from the repository.
pub struct Schema {
    root: Value,
}

impl Schema {
    pub fn load() -> Self {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/v1.schema.json");
        let text = std::fs::read_to_string(path).expect("the protocol schema is committed");
        Self {
            root: serde_json::from_str(&text).expect("the schema is JSON"),
        }
    }

    /// Validates `value` against `#/$defs/<definition>`; the error is a JSON
    /// pointer into the value and the keyword that failed.
    pub fn validate(&self, definition: &str, value: &Value) -> Result<(), String> {
        let schema = self.resolve(&format!("#/$defs/{definition}"));
        self.check(schema, value, "")
    }

    fn resolve(&self, reference: &str) -> &Value {
        let pointer = reference.strip_prefix('#').expect("only local references");
        self.root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("unresolved reference {reference}"))
    }

    fn check(&self, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
        let Some(keywords) = schema.as_object() else {
            panic!("a schema must be an object at {at}");
        };
        for key in keywords.keys() {
            assert!(KNOWN.contains(&key.as_str()), "unsupported keyword {key}");
        }
        let fail = |why: String| Err(format!("{}: {why}", if at.is_empty() { "/" } else { at }));
        if let Some(reference) = keywords.get("$ref").and_then(Value::as_str) {
            self.check(self.resolve(reference), value, at)?;
        }
        if let Some(expected) = keywords.get("type").and_then(Value::as_str) {
            if !has_type(value, expected) {
                return fail(format!("type {expected}"));
            }
        }
        if let Some(expected) = keywords.get("const") {
            if value != expected {
                return fail(format!("const {expected}"));
            }
        }
        if let Some(options) = keywords.get("enum").and_then(Value::as_array) {
            if !options.contains(value) {
                return fail("enum".into());
            }
        }
        if let Some(minimum) = keywords.get("minimum").and_then(Value::as_f64) {
            if value.as_f64().is_some_and(|n| n < minimum) {
                return fail(format!("minimum {minimum}"));
            }
        }
        if let Some(min) = keywords.get("minLength").and_then(Value::as_u64) {
            if value
                .as_str()
                .is_some_and(|s| (s.chars().count() as u64) < min)
            {
                return fail(format!("minLength {min}"));
            }
        }
        if let Some(max) = keywords.get("maxLength").and_then(Value::as_u64) {
            if value
                .as_str()
                .is_some_and(|s| (s.chars().count() as u64) > max)
            {
                return fail(format!("maxLength {max}"));
            }
        }
        if let Some(items) = value.as_array() {
            if let Some(min) = keywords.get("minItems").and_then(Value::as_u64) {
                if (items.len() as u64) < min {
                    return fail(format!("minItems {min}"));
                }
            }
            if keywords.get("uniqueItems") == Some(&Value::Bool(true)) {
                for (i, item) in items.iter().enumerate() {
                    if items[..i].contains(item) {
                        return fail("uniqueItems".into());
                    }
                }
            }
            if let Some(item_schema) = keywords.get("items") {
                for (i, item) in items.iter().enumerate() {
                    self.check(item_schema, item, &format!("{at}/{i}"))?;
                }
            }
        }
        if let Some(object) = value.as_object() {
            let properties = keywords.get("properties").and_then(Value::as_object);
            for (name, member) in object {
                let path = format!("{at}/{name}");
                match properties.and_then(|p| p.get(name)) {
                    Some(property) => self.check(property, member, &path)?,
                    None => match keywords.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return fail(format!("additional property {name}"));
                        }
                        Some(extra @ Value::Object(_)) => self.check(extra, member, &path)?,
                        _ => {}
                    },
                }
            }
            // After the members, so a wrong tag is reported before a missing field.
            for name in keywords
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = name.as_str().expect("required names are strings");
                if !object.contains_key(name) {
                    return fail(format!("required {name}"));
                }
            }
        }
        if let Some(options) = keywords.get("oneOf").and_then(Value::as_array) {
            let results: Vec<Result<(), String>> = options
                .iter()
                .map(|option| self.check(option, value, at))
                .collect();
            let matched = results.iter().filter(|r| r.is_ok()).count();
            if matched == 0 {
                // An alternative whose tag matched explains best, then the one
                // that got furthest into the value.
                let deepest = results
                    .into_iter()
                    .filter_map(Result::err)
                    .max_by_key(|why| {
                        let depth = why.split(':').next().map_or(0, str::len);
                        (!why.contains(": const "), depth)
                    });
                return Err(deepest.unwrap_or_else(|| format!("{at}: oneOf is empty")));
            }
            if matched > 1 {
                return fail(format!("oneOf matched {matched} alternatives"));
            }
        }
        Ok(())
    }
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "null" => value.is_null(),
        other => panic!("unsupported type {other}"),
    }
}
