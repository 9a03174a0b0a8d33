//! Turning parsed values into JSON: inline literals and `file("...")`
//! fixtures read at expansion. Key order never matters: object equality
//! ignores it, and the runtime sorts keys for a pack's fingerprint.

use std::path::PathBuf;

use serde_json::{Map, Number, Value as Json};

use crate::parse::{Value, ValueKind};

/// A JSON value and, when it came from a fixture, the fixture's path
/// relative to the crate root (so the expansion can make a change to it
/// rebuild the test).
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The value.
    pub json: Json,
    /// The fixture path as written, for `file("...")` values.
    pub file: Option<String>,
}

/// Converts an inline value (anything but `file(...)`) to JSON.
pub fn to_json(value: &Value) -> syn::Result<Json> {
    Ok(match &value.kind {
        ValueKind::Str(s) => Json::String(s.value()),
        ValueKind::Bool(b) => Json::Bool(b.value),
        ValueKind::Int(i) => number(&value.tokens, i.base10_digits())?,
        ValueKind::Number(text) => number(&value.tokens, text)?,
        ValueKind::Null => Json::Null,
        ValueKind::Array(items) => {
            Json::Array(items.iter().map(to_json).collect::<syn::Result<_>>()?)
        }
        ValueKind::Object(entries) => {
            let mut map = Map::new();
            for (key, item) in entries {
                map.insert(key.name.clone(), to_json(item)?);
            }
            Json::Object(map)
        }
        ValueKind::File(path) => {
            return Err(syn::Error::new(
                path.span(),
                "a `file(...)` cannot be nested",
            ))
        }
        ValueKind::Path(_) => {
            return Err(syn::Error::new_spanned(
                &value.tokens,
                "a path is not JSON; quote it if it is text",
            ))
        }
    })
}

fn number(tokens: &proc_macro2::TokenStream, text: &str) -> syn::Result<Json> {
    serde_json::from_str::<Number>(text)
        .map(Json::Number)
        .map_err(|_| syn::Error::new_spanned(tokens, "this number is not valid JSON"))
}

/// Reads and parses a `file("...")` fixture relative to the crate being
/// compiled. Errors point at the path literal.
pub fn load_file(path: &syn::LitStr) -> syn::Result<Json> {
    let relative = path.value();
    if std::path::Path::new(&relative).is_absolute() {
        // The test tracks the file relative to the crate root too, so an
        // absolute path would be read here and then missed there.
        return Err(syn::Error::new(
            path.span(),
            format!("JSON fixture `{relative}` must be a path relative to the crate root"),
        ));
    }
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(PathBuf::new, PathBuf::from);
    let full = root.join(&relative);
    let text = std::fs::read_to_string(&full).map_err(|error| {
        syn::Error::new(
            path.span(),
            format!("cannot read JSON fixture `{relative}` (relative to the crate root): {error}"),
        )
    })?;
    serde_json::from_str(&text).map_err(|error| {
        syn::Error::new(
            path.span(),
            format!("JSON fixture `{relative}` is malformed: {error}"),
        )
    })
}

/// Whether a JSON value is "empty": `{}`, `[]`, `""` or `null`.
pub fn is_empty(json: &Json) -> bool {
    match json {
        Json::Object(map) => map.is_empty(),
        Json::Array(items) => items.is_empty(),
        Json::String(text) => text.is_empty(),
        Json::Null => true,
        Json::Bool(_) | Json::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_args;
    use quote::quote;

    fn json_of(tokens: proc_macro2::TokenStream) -> Json {
        let parsed = parse_args(tokens);
        assert!(parsed.errors.is_none());
        to_json(&parsed.args[0].value).unwrap()
    }

    #[test]
    fn converts_every_json_form() {
        let json = json_of(quote!(s = {
            region: "US", "tier": 2, ratio: -0.5, big: 1e3, on: true, none: null,
            flags: ["a", 1, [false]], limits: { max: 10 }
        }));
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            r#"{"region":"US","tier":2,"ratio":-0.5,"big":1000.0,"on":true,"none":null,"flags":["a",1,[false]],"limits":{"max":10}}"#
        );
    }

    #[test]
    fn key_order_does_not_make_two_objects_differ() {
        let a = json_of(quote!(s = { b: 1, a: { y: 2, x: 3 } }));
        let b = json_of(quote!(s = { "a": { "x": 3, "y": 2 }, "b": 1 }));
        assert_eq!(a, b);
        assert_ne!(a, json_of(quote!(s = { a: { x: 3, y: 2 }, b: 2 })));
    }

    #[test]
    fn emptiness_covers_every_container() {
        assert!(is_empty(&json_of(quote!(s = {}))));
        assert!(is_empty(&Json::Null));
        assert!(!is_empty(&json_of(quote!(s = { a: null }))));
    }

    #[test]
    fn malformed_fixture_is_refused_with_its_path() {
        let path = syn::LitStr::new(
            "tests/fixtures/malformed.json",
            proc_macro2::Span::call_site(),
        );
        let error = load_file(&path).unwrap_err().to_string();
        assert!(
            error.starts_with("JSON fixture `tests/fixtures/malformed.json` is malformed"),
            "{error}"
        );
        let path = syn::LitStr::new(
            "tests/fixtures/blocked.json",
            proc_macro2::Span::call_site(),
        );
        assert_eq!(load_file(&path).unwrap()["region"], "EU");
    }

    #[test]
    fn an_absolute_fixture_path_is_refused() {
        let path = syn::LitStr::new("/etc/fixture.json", proc_macro2::Span::call_site());
        let error = load_file(&path).unwrap_err().to_string();
        assert!(
            error.contains("must be a path relative to the crate root"),
            "{error}"
        );
    }

    #[test]
    fn missing_fixture_names_its_path() {
        let path = syn::LitStr::new("no/such/fixture.json", proc_macro2::Span::call_site());
        let error = load_file(&path).unwrap_err().to_string();
        assert!(
            error.contains("cannot read JSON fixture `no/such/fixture.json`"),
            "{error}"
        );
    }
}
