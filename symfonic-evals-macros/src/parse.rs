//! Attribute arguments as written: `name = value` pairs, each value kept with
//! its tokens so a later check can point at exactly what is wrong.
//!
//! Parsing is deliberately untyped. Whether `demonstrations` should be a list
//! of strings is a question for the check, which knows the pack; here a value
//! is only a string, a boolean, a number, `null`, an array, a JSON object or a
//! `file("...")` reference. A malformed value stops that argument only, so
//! every argument still gets checked and every error is reported at once.

use proc_macro2::{Delimiter, Ident, Spacing, TokenStream, TokenTree};
use syn::{Lit, LitBool, LitInt, LitStr};

/// One `name = value` argument.
#[derive(Debug, Clone)]
pub struct Arg {
    /// The argument's name, spanned where it was written.
    pub name: Ident,
    /// Its value.
    pub value: Value,
}

/// A value together with the tokens it was parsed from.
#[derive(Debug, Clone)]
pub struct Value {
    /// What the value is.
    pub kind: ValueKind,
    /// Where it was written (for spanned errors).
    pub tokens: TokenStream,
}

/// The shapes a value can take.
#[derive(Debug, Clone)]
pub enum ValueKind {
    /// A string literal.
    Str(LitStr),
    /// `true` or `false`.
    Bool(LitBool),
    /// A non-negative integer literal without suffix.
    Int(LitInt),
    /// Any other JSON number (negative, fractional, exponent), as JSON text.
    Number(String),
    /// `null`.
    Null,
    /// `[a, b, ...]`.
    Array(Vec<Value>),
    /// `{ key: value, ... }` with quoted or bare-identifier keys.
    Object(Vec<(Key, Value)>),
    /// `file("relative/path.json")`: JSON read relative to the crate root.
    File(LitStr),
    /// A Rust path (`crate::oracle::count_refunds`), for arguments that name
    /// a function.
    Path(syn::Path),
}

/// An object key.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key text.
    pub name: String,
}

impl Value {
    /// A short phrase naming what this value is, for "found ..." messages.
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            ValueKind::Str(_) => "a string",
            ValueKind::Bool(_) => "a boolean",
            ValueKind::Int(_) | ValueKind::Number(_) => "a number",
            ValueKind::Null => "`null`",
            ValueKind::Array(_) => "an array",
            ValueKind::Object(_) => "a JSON object",
            ValueKind::File(_) => "a `file(...)` reference",
            ValueKind::Path(_) => "a path",
        }
    }
}

/// The argument list as parsed.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The arguments that parsed.
    pub args: Vec<Arg>,
    /// Names of arguments whose value did not parse (already reported, so
    /// not to be reported missing as well).
    pub failed: Vec<String>,
    /// The combined parse errors, if any.
    pub errors: Option<syn::Error>,
}

/// Parses the whole attribute argument list, keeping going after a bad
/// argument.
pub fn parse_args(tokens: TokenStream) -> Parsed {
    let mut parsed = Parsed::default();
    for segment in split_commas(tokens) {
        match parse_arg(&segment) {
            Ok(arg) => parsed.args.push(arg),
            Err(error) => {
                if let Some(TokenTree::Ident(name)) = segment.first() {
                    parsed.failed.push(name.to_string());
                }
                combine(&mut parsed.errors, error);
            }
        }
    }
    parsed
}

/// Adds `error` to an accumulated error.
pub fn combine(errors: &mut Option<syn::Error>, error: syn::Error) {
    match errors {
        Some(existing) => existing.combine(error),
        None => *errors = Some(error),
    }
}

/// Splits a token stream on top-level commas; a trailing comma is allowed,
/// an empty segment between two commas is kept (and rejected by the caller).
fn split_commas(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut segments = vec![Vec::new()];
    for tree in tokens {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' => segments.push(Vec::new()),
            _ => segments.last_mut().expect("never empty").push(tree),
        }
    }
    if segments.last().is_some_and(Vec::is_empty) {
        segments.pop();
    }
    segments
}

fn stream(trees: &[TokenTree]) -> TokenStream {
    trees.iter().cloned().collect()
}

fn parse_arg(segment: &[TokenTree]) -> syn::Result<Arg> {
    let Some(TokenTree::Ident(name)) = segment.first() else {
        let message = if segment.is_empty() {
            "expected an argument `name = value` before this comma"
        } else {
            "expected an argument name, as in `name = value`"
        };
        return Err(match segment.first() {
            Some(first) => syn::Error::new(first.span(), message),
            None => syn::Error::new(proc_macro2::Span::call_site(), message),
        });
    };
    match segment.get(1) {
        Some(TokenTree::Punct(p)) if p.as_char() == '=' && p.spacing() == Spacing::Alone => {}
        _ => {
            return Err(syn::Error::new_spanned(
                stream(segment),
                format!("expected `{name} = <value>`"),
            ))
        }
    }
    let rest = &segment[2..];
    if rest.is_empty() {
        return Err(syn::Error::new_spanned(
            stream(&segment[..2]),
            format!("expected a value after `{name} =`"),
        ));
    }
    let value = parse_value(rest, true)?;
    Ok(Arg {
        name: name.clone(),
        value,
    })
}

/// Parses one value from exactly the given tokens. `top` allows `file(...)`,
/// which only makes sense as a whole argument.
pub fn parse_value(trees: &[TokenTree], top: bool) -> syn::Result<Value> {
    // A fragment forwarded by `macro_rules!` (`$x:literal`, `$x:expr`)
    // arrives wrapped in an invisible group: read what it holds.
    if let [TokenTree::Group(group)] = trees {
        if group.delimiter() == Delimiter::None {
            let inner: Vec<TokenTree> = group.stream().into_iter().collect();
            let mut value = parse_value(&inner, top)?;
            value.tokens = stream(trees);
            return Ok(value);
        }
    }
    let tokens = stream(trees);
    let kind =
        match trees {
            [TokenTree::Literal(literal)] => literal_kind(&Lit::new(literal.clone()))?,
            [TokenTree::Ident(ident)] if ident == "true" || ident == "false" => {
                ValueKind::Bool(LitBool::new(ident == "true", ident.span()))
            }
            [TokenTree::Ident(ident)] if ident == "null" => ValueKind::Null,
            [TokenTree::Punct(minus), TokenTree::Literal(literal)] if minus.as_char() == '-' => {
                match literal_kind(&Lit::new(literal.clone()))? {
                    ValueKind::Int(int) => ValueKind::Number(format!("-{}", int.base10_digits())),
                    ValueKind::Number(text) => ValueKind::Number(format!("-{text}")),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            tokens,
                            "only a number can be negated",
                        ))
                    }
                }
            }
            [TokenTree::Group(group)] if group.delimiter() == Delimiter::Bracket => {
                let mut items = Vec::new();
                for item in split_commas(group.stream()) {
                    if item.is_empty() {
                        return Err(syn::Error::new(
                            group.span(),
                            "expected a value before this comma",
                        ));
                    }
                    items.push(parse_value(&item, false)?);
                }
                ValueKind::Array(items)
            }
            [TokenTree::Group(group)] if group.delimiter() == Delimiter::Brace => {
                ValueKind::Object(parse_object(group.stream(), group.span())?)
            }
            [TokenTree::Ident(ident), TokenTree::Group(group)]
                if ident == "file" && group.delimiter() == Delimiter::Parenthesis =>
            {
                if !top {
                    return Err(syn::Error::new_spanned(
                        tokens,
                        "`file(...)` stands for a whole argument, not a value nested inside JSON",
                    ));
                }
                match syn::parse2::<LitStr>(group.stream()) {
                    Ok(path) => ValueKind::File(path),
                    Err(_) => {
                        return Err(syn::Error::new_spanned(
                            tokens,
                            "expected `file(\"path/relative/to/the/crate.json\")`",
                        ))
                    }
                }
            }
            [TokenTree::Ident(_), ..] if top && is_path(trees) => {
                ValueKind::Path(syn::parse2::<syn::Path>(tokens.clone())?)
            }
            [TokenTree::Punct(colon), ..] if top && colon.as_char() == ':' && is_path(trees) => {
                ValueKind::Path(syn::parse2::<syn::Path>(tokens.clone())?)
            }
            _ => return Err(syn::Error::new_spanned(
                tokens,
                "expected a string, boolean, number, `null`, `[...]` array, `{...}` JSON object, \
                 `file(\"...\")` or a path",
            )),
        };
    Ok(Value { kind, tokens })
}

/// Whether the tokens are a plain path: identifiers joined by `::`, with no
/// generics (a function the harness calls by pointer).
fn is_path(trees: &[TokenTree]) -> bool {
    let mut expect_ident = true;
    let mut i = 0;
    if matches!(trees.first(), Some(TokenTree::Punct(p)) if p.as_char() == ':') {
        i = 0;
        expect_ident = false;
    }
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Ident(_) if expect_ident => {
                expect_ident = false;
                i += 1;
            }
            TokenTree::Punct(a)
                if !expect_ident && a.as_char() == ':' && a.spacing() == Spacing::Joint =>
            {
                match trees.get(i + 1) {
                    Some(TokenTree::Punct(b)) if b.as_char() == ':' => {
                        expect_ident = true;
                        i += 2;
                    }
                    _ => return false,
                }
            }
            _ => return false,
        }
    }
    !expect_ident
}

fn literal_kind(lit: &Lit) -> syn::Result<ValueKind> {
    match lit {
        Lit::Str(s) if s.suffix().is_empty() => Ok(ValueKind::Str(s.clone())),
        Lit::Int(i) if i.suffix().is_empty() => Ok(ValueKind::Int(i.clone())),
        Lit::Float(f) if f.suffix().is_empty() => {
            let text = f.base10_digits().to_owned();
            match serde_json::from_str::<serde_json::Number>(&text) {
                Ok(_) => Ok(ValueKind::Number(text)),
                Err(_) => Err(syn::Error::new(f.span(), "this number is not valid JSON")),
            }
        }
        Lit::Int(_) | Lit::Float(_) | Lit::Str(_) => Err(syn::Error::new(
            lit.span(),
            "a literal suffix has no meaning here; write the bare value",
        )),
        _ => Err(syn::Error::new(
            lit.span(),
            "expected a string, boolean, number, `null`, array or JSON object",
        )),
    }
}

fn parse_object(tokens: TokenStream, span: proc_macro2::Span) -> syn::Result<Vec<(Key, Value)>> {
    let mut entries: Vec<(Key, Value)> = Vec::new();
    for entry in split_commas(tokens) {
        let (key, rest) = match entry.as_slice() {
            [] => {
                return Err(syn::Error::new(
                    span,
                    "expected `key: value` before this comma",
                ))
            }
            [key, TokenTree::Punct(colon), rest @ ..] if colon.as_char() == ':' => (key, rest),
            [key, ..] => {
                return Err(syn::Error::new_spanned(
                    stream(&entry),
                    format!("expected `:` after the key, as in `{key}: value`"),
                ))
            }
        };
        let name = match key {
            TokenTree::Ident(ident) => ident.to_string(),
            TokenTree::Literal(literal) => match Lit::new(literal.clone()) {
                Lit::Str(s) => s.value(),
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        "a JSON key is a string literal or a bare identifier",
                    ))
                }
            },
            _ => {
                return Err(syn::Error::new(
                    key.span(),
                    "a JSON key is a string literal or a bare identifier",
                ))
            }
        };
        if rest.is_empty() {
            return Err(syn::Error::new_spanned(
                stream(&entry),
                format!("expected a value after `{name}:`"),
            ));
        }
        if entries.iter().any(|(k, _)| k.name == name) {
            return Err(syn::Error::new(
                key.span(),
                format!("duplicate key `{name}` in this JSON object"),
            ));
        }
        let value = parse_value(rest, false)?;
        entries.push((Key { name }, value));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn one(tokens: TokenStream) -> Value {
        let mut parsed = parse_args(tokens);
        assert!(parsed.errors.is_none(), "{:?}", parsed.errors);
        assert_eq!(parsed.args.len(), 1);
        parsed.args.remove(0).value
    }

    fn error(tokens: TokenStream) -> String {
        parse_args(tokens).errors.expect("an error").to_string()
    }

    #[test]
    fn parses_every_scalar_form() {
        let Parsed { args, errors, .. } =
            parse_args(quote!(a = "x", b = true, c = 7, d = -2.5, e = null,));
        assert!(errors.is_none());
        let names: Vec<String> = args.iter().map(|a| a.name.to_string()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e"]);
        assert!(matches!(&args[0].value.kind, ValueKind::Str(s) if s.value() == "x"));
        assert!(matches!(&args[1].value.kind, ValueKind::Bool(b) if b.value));
        assert!(matches!(&args[2].value.kind, ValueKind::Int(i) if i.base10_digits() == "7"));
        assert!(matches!(&args[3].value.kind, ValueKind::Number(n) if n == "-2.5"));
        assert!(matches!(args[4].value.kind, ValueKind::Null));
    }

    #[test]
    fn parses_nested_objects_with_both_key_styles() {
        let value = one(quote!(s = { "region": "US", tier: 2, flags: ["a"], limits: { max: 10 } }));
        let ValueKind::Object(entries) = value.kind else {
            panic!("object")
        };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
        assert_eq!(keys, ["region", "tier", "flags", "limits"]);
        assert!(matches!(&entries[3].1.kind, ValueKind::Object(inner) if inner.len() == 1));
    }

    #[test]
    fn parses_file_references_only_at_the_top() {
        let value = one(quote!(answer = file("fixtures/answer.json")));
        assert!(matches!(value.kind, ValueKind::File(p) if p.value() == "fixtures/answer.json"));
        assert!(error(quote!(answer = { a: file("x.json") })).contains("whole argument"));
    }

    #[test]
    fn reports_malformed_json_precisely() {
        assert!(error(quote!(s = { region "US" })).contains("expected `:` after the key"));
        assert!(error(quote!(s = { a: 1, a: 2 })).contains("duplicate key `a`"));
        assert!(error(quote!(s = { a: })).contains("expected a value after `a:`"));
        assert!(error(quote!(s = { 3: 1 })).contains("string literal or a bare identifier"));
        assert!(error(quote!(s = { a: undefined })).contains("expected a string"));
        assert!(error(quote!(s = { a: 1u8 })).contains("suffix"));
    }

    #[test]
    fn keeps_parsing_after_a_bad_argument() {
        let Parsed {
            args,
            failed,
            errors,
        } = parse_args(quote!(a "x", b = 1, = 2, c = ));
        assert_eq!(args.len(), 1);
        assert_eq!(failed, ["a", "c"]);
        let text: Vec<String> = errors.unwrap().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(text.len(), 3);
        assert!(text[0].contains("expected `a = <value>`"));
        assert!(text[1].contains("expected an argument name"));
        assert!(text[2].contains("expected a value after `c =`"));
    }
}
