//! From a checked definition to code: a hidden function that runs the pack
//! and returns its `PackRun`, a `#[test]` named after the annotated function
//! that finishes that run, and an inventory registration so a program can
//! list and run every pack in its binary.
//!
//! The generated code names everything by absolute path through
//! `::symfonic_evals::__private`, so an adopter's imports, shadowed names and
//! lint levels cannot change what it means.

use std::fmt::Write as _;
use std::str::FromStr;

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{quote, ToTokens};
use sha2::{Digest, Sha256};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Signature, Visibility};

use crate::check::{check, Checked, Typed};
use crate::json::Loaded;
use crate::parse::{combine, parse_args};
use crate::schema::{Kind, Slot};
use crate::shape::check_shape;

/// The annotated function, with its body kept as raw tokens: the body is
/// re-emitted untouched, so there is no reason to parse it.
struct PackFn {
    attrs: Vec<Attribute>,
    vis: Visibility,
    sig: Signature,
    body: Group,
}

impl Parse for PackFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected the function body"));
        }
        Ok(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// Expands one attribute. On any error, the annotated item is emitted
/// unchanged beside the errors, so completion and go-to-definition keep
/// working while the user fixes the attribute.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = parse_args(attr);
    let mut errors = parsed.errors;
    let Ok(function) = syn::parse2::<PackFn>(item.clone()) else {
        let message = format!(
            "#[{}] goes on a function that builds the deployment: \
             `fn name(ctx: &symfonic_evals::TargetContext) -> Deployment`",
            kind.attribute()
        );
        combine(&mut errors, syn::Error::new(Span::call_site(), message));
        return with_errors(&item, errors);
    };
    if let Err(error) = check_shape(&function.sig) {
        combine(&mut errors, error);
    }
    match check(kind, &parsed.args, &parsed.failed) {
        Ok(checked) if errors.is_none() => generate(&checked, function),
        Ok(_) => with_errors(&quote!(#[allow(dead_code)] #item), errors),
        Err(error) => {
            combine(&mut errors, error);
            with_errors(&quote!(#[allow(dead_code)] #item), errors)
        }
    }
}

fn with_errors(item: &TokenStream, errors: Option<syn::Error>) -> TokenStream {
    let errors = errors.map(|e| e.to_compile_error());
    quote!(#item #errors)
}

/// Which emitted item each of the user's attributes belongs on.
struct Attributes {
    /// `#[cfg(...)]`: on everything emitted.
    cfg: TokenStream,
    /// `#[ignore]`, `#[should_panic]`: on the test.
    test: TokenStream,
    /// Everything else (docs, allows): on the builder itself.
    builder: TokenStream,
}

fn split_attributes(attrs: &[Attribute]) -> Attributes {
    let mut split = Attributes {
        cfg: TokenStream::new(),
        test: TokenStream::new(),
        builder: TokenStream::new(),
    };
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("cfg") {
            attr.to_tokens(&mut split.cfg);
        } else if path.is_ident("ignore") || path.is_ident("should_panic") {
            attr.to_tokens(&mut split.test);
        } else {
            attr.to_tokens(&mut split.builder);
        }
    }
    split
}

/// Code the expansion writes itself. It is assembled as text and lexed in
/// one call: cheaper than building it token by token, which matters because
/// every pack is re-expanded on every rebuild.
fn code(text: &str) -> TokenStream {
    TokenStream::from_str(text).expect("the expansion writes valid Rust")
}

fn generate(checked: &Checked, function: PackFn) -> TokenStream {
    let n = function.sig.ident.to_string();
    let (hidden, build) = (
        format!("__symfonic_evals_pack_{n}"),
        format!("__symfonic_evals_build_{n}"),
    );
    let Attributes { cfg, test, builder } = split_attributes(&function.attrs);
    // The builder keeps the user's tokens (and spans) under a derived name;
    // the test takes the user's name.
    let mut sig = function.sig.clone();
    sig.ident = syn::Ident::new(&build, sig.ident.span());
    let block = &function.body;
    let builder_fn = quote!(#cfg #builder #sig #block);
    // A fn pointer, not the fn item: every pack whose builder returns the same
    // deployment type then shares one instantiation of the generic runner.
    let factory = if function.sig.asyncness.is_some() {
        format!(
            "(|ctx: &::symfonic_evals::TargetContext| \
             ::symfonic_evals::__private::tokio_target(ctx, {build})) \
             as fn(&::symfonic_evals::TargetContext) -> _"
        )
    } else {
        format!("{build} as fn(&::symfonic_evals::TargetContext) -> _")
    };
    let accept = matches!(
        checked.get("accept_not_applicable").value,
        Typed::Bool(true)
    );
    let (cfg, test, vis) = (
        cfg.to_string(),
        test.to_string(),
        function.vis.to_token_stream(),
    );
    let generated = code(&format!(
        "{cfg} #[doc(hidden)] fn {hidden}() -> ::symfonic_evals::__private::PackRun {{\
             ::symfonic_evals::__private::run_pack(\
                 ::core::concat!(::core::module_path!(), \"::{n}\"), &{definition}, \
                 &::symfonic_evals::__private::options({accept}), {factory})\
         }}\
         {cfg} #[::core::prelude::v1::test] {test} {vis} fn {n}() {{\
             ::symfonic_evals::__private::finish(&{hidden}());\
         }}\
         {cfg} ::symfonic_evals::__private::inventory::submit! {{\
             ::symfonic_evals::__private::RegisteredPack::new({n:?}, ::core::module_path!(), \
             ::symfonic_evals::__private::PackKind::{variant}, ::core::file!(), ::core::line!(), \
             {fingerprint:?}, {hidden})\
         }}",
        definition = definition(checked),
        variant = variant(checked.kind),
        fingerprint = fingerprint(checked),
    ));
    quote!(#builder_fn #generated)
}

fn variant(kind: Kind) -> &'static str {
    match kind {
        Kind::Procedural => "Procedural",
        Kind::ApprovalResume => "ApprovalResume",
        Kind::ExtensionTool => "ExtensionTool",
    }
}

/// `__private::definition(Kind, "<JSON>")`: one canonical JSON object of
/// the explicit arguments (defaults stay the runtime's), plus an
/// `include_str!` of each fixture file so that editing it rebuilds the test.
/// A single string literal is far cheaper to expand and compile than a
/// field-by-field constructor, and every pack is re-expanded on each rebuild.
fn definition(checked: &Checked) -> String {
    let mut fields = serde_json::Map::new();
    let mut tracked = String::new();
    for resolved in checked
        .values
        .iter()
        .filter(|r| r.explicit && r.field.slot == Slot::Pack)
    {
        if let Typed::Json(Loaded {
            file: Some(path), ..
        }) = &resolved.value
        {
            let _ = write!(
                tracked,
                "const _: &str = ::core::include_str!(::core::concat!(\
                 ::core::env!(\"CARGO_MANIFEST_DIR\"), {:?}));",
                format!("/{path}")
            );
        }
        fields.insert(resolved.field.name.to_owned(), json_of(&resolved.value));
    }
    if checked
        .values
        .iter()
        .any(|r| r.explicit && r.field.slot == Slot::Policy)
    {
        let timeout = checked
            .get("step_timeout_ms")
            .explicit
            .then(|| checked.int("step_timeout_ms"));
        fields.insert(
            "policy".to_owned(),
            serde_json::json!({
                "trials": checked.int("trials"),
                "required": checked.int("require"),
                "step_timeout_ms": timeout,
            }),
        );
    }
    let text = serde_json::Value::Object(fields).to_string();
    format!(
        "{{ {tracked} ::symfonic_evals::__private::definition(\
         ::symfonic_evals::__private::PackKind::{}, {text:?}) }}",
        variant(checked.kind)
    )
}

/// An argument's value as the JSON the runtime deserialises the pack from.
fn json_of(typed: &Typed) -> serde_json::Value {
    match typed {
        Typed::Str(text) => text.clone().into(),
        Typed::StrList(items) => items.clone().into(),
        Typed::Json(loaded) => loaded.json.clone(),
        Typed::Bool(flag) => (*flag).into(),
        Typed::Int(n) => (*n).into(),
        Typed::Absent => serde_json::Value::Null,
    }
}

/// A sha-256 over the whole resolved definition (defaults included, fixture
/// contents rather than paths), as lowercase hex. The hashed text is the
/// pack's name then one `name=<canonical JSON>` line per field in table
/// order, so two spellings of one definition hash alike.
pub fn fingerprint(checked: &Checked) -> String {
    let mut text = String::from(checked.kind.pack_name());
    for resolved in &checked.values {
        let json = match &resolved.value {
            Typed::Json(loaded) => serde_json::to_string(&loaded.json),
            Typed::Str(s) => serde_json::to_string(s),
            Typed::StrList(items) => serde_json::to_string(items),
            Typed::Bool(flag) => Ok(flag.to_string()),
            Typed::Int(n) => Ok(n.to_string()),
            Typed::Absent => Ok("null".to_owned()),
        };
        let json = json.expect("JSON values serialise");
        let _ = write!(text, "\n{}={json}", resolved.field.name);
    }
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(kind: Kind, attr: TokenStream, item: TokenStream) -> String {
        expand(kind, attr, item).to_string()
    }

    fn extension(extra: TokenStream) -> TokenStream {
        quote!(prompt = "what is the weather", tool_name = "weather_lookup", #extra)
    }

    #[test]
    fn the_test_takes_the_function_name_and_the_builder_a_derived_one() {
        let item = quote!(
            /// Builds it.
            #[ignore]
            pub fn weather(ctx: &TargetContext) -> Deployment {
                Deployment::open(ctx)
            }
        );
        let out = expanded(Kind::ExtensionTool, extension(quote!()), item);
        let file: syn::File = syn::parse_str(&out).expect("valid items");
        assert_eq!(file.items.len(), 4);
        let syn::Item::Fn(builder) = &file.items[0] else {
            panic!("builder first")
        };
        assert_eq!(builder.sig.ident, "__symfonic_evals_build_weather");
        assert!(
            matches!(builder.vis, Visibility::Inherited),
            "the test carries the visibility"
        );
        assert!(builder.attrs.iter().any(|a| a.path().is_ident("doc")));
        assert!(!builder.attrs.iter().any(|a| a.path().is_ident("ignore")));
        let syn::Item::Fn(hidden) = &file.items[1] else {
            panic!("runner second")
        };
        assert_eq!(hidden.sig.ident, "__symfonic_evals_pack_weather");
        let syn::Item::Fn(test) = &file.items[2] else {
            panic!("test third")
        };
        assert_eq!(test.sig.ident, "weather");
        assert!(matches!(test.vis, Visibility::Public(_)));
        let paths: Vec<String> = test.attrs.iter().map(|a| quote!(#a).to_string()).collect();
        assert_eq!(
            paths,
            ["# [:: core :: prelude :: v1 :: test]", "# [ignore]"]
        );
        assert!(matches!(&file.items[3], syn::Item::Macro(_)));
    }

    #[test]
    fn only_given_fields_are_assigned_and_json_is_canonical() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!(arguments = { "unit": "C", city: "Oslo" }, trials = 3)),
            quote!(
                fn weather(ctx: &TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        let call = ":: symfonic_evals :: __private :: definition (:: symfonic_evals :: __private :: PackKind :: ExtensionTool , \"";
        let start = out.find(call).expect("one definition call") + call.len() - 1;
        let literal: syn::LitStr =
            syn::parse_str(&out[start..start + out[start + 1..].find("\")").unwrap() + 2])
                .expect("a string literal");
        let fields: serde_json::Value = serde_json::from_str(&literal.value()).unwrap();
        assert_eq!(
            fields,
            serde_json::json!({
                "prompt": "what is the weather",
                "tool_name": "weather_lookup",
                "arguments": { "city": "Oslo", "unit": "C" },
                "policy": { "trials": 3, "required": 3, "step_timeout_ms": null },
            })
        );
        let text = literal.value();
        assert!(
            text.find("city") < text.find("unit"),
            "object keys are canonical (sorted)"
        );
        assert!(out.contains(":: symfonic_evals :: __private :: options (false)"));
    }

    #[test]
    fn an_async_builder_is_driven_through_tokio() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!()),
            quote!(
                async fn weather(ctx: &TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        assert!(out.contains(
            ":: symfonic_evals :: __private :: tokio_target (ctx , __symfonic_evals_build_weather)"
        ));
    }

    #[test]
    fn errors_keep_the_function() {
        let out = expanded(
            Kind::ExtensionTool,
            quote!(prompt = "", tool_nme = "x"),
            quote!(
                fn weather(ctx: &TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        assert!(out.contains("fn weather (ctx : & TargetContext) -> Deployment"));
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
        assert!(!out.contains("submit"));
    }

    #[test]
    fn fingerprints_ignore_spelled_out_defaults_and_key_order() {
        let fp = |attr: TokenStream| {
            let parsed = parse_args(attr);
            fingerprint(&check(Kind::ExtensionTool, &parsed.args, &parsed.failed).unwrap())
        };
        let plain = fp(extension(quote!(arguments = { a: 1, b: 2 })));
        let spelled = fp(extension(
            quote!(arguments = { b: 2, a: 1 }, conversation = "extensions", trials = 1),
        ));
        let other = fp(extension(quote!(arguments = { a: 1, b: 3 })));
        assert_eq!(plain, spelled);
        assert_ne!(plain, other);
        assert_eq!(plain.len(), 64);
    }
}
