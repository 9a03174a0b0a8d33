//! From a checked definition to code: a hidden function that runs the pack
//! and returns its `PackRun`, a `#[test]` named after the annotated function
//! that finishes that run, and an inventory registration so a program can
//! list and run every pack in its binary.
//!
//! The generated code names everything by absolute path through
//! `::symfonic_evals::__private`, so an adopter's imports, shadowed names and
//! lint levels cannot change what it means.

use std::str::FromStr;

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Signature, Visibility};

use crate::check::{check, Checked, Typed};
use crate::json::Loaded;
use crate::parse::{combine, parse_args};
use crate::plain::{build_name, derived_name, home, plain, returned_type, Home, Parts};
use crate::schema::{Kind, Slot};
use crate::shape::{check_shape, check_test_shape};

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
    for error in stacked(kind, &item) {
        combine(&mut errors, error);
    }
    let names_builder = parsed.args.iter().any(|arg| arg.name == "builder");
    let parts = if names_builder {
        let Ok(function) = syn::parse2::<PackFn>(item.clone()) else {
            let message = format!(
                "#[{}(builder = ...)] goes on the test's function: `fn name() {{}}`",
                kind.attribute()
            );
            combine(&mut errors, syn::Error::new(Span::call_site(), message));
            return with_errors(&item, errors);
        };
        if let Err(error) = check_test_shape(&function.sig, &function.body) {
            combine(&mut errors, error);
        }
        function.into_test_parts()
    } else if let Some(parts) = plain(&item) {
        parts
    } else {
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
        function.into_parts()
    };
    match check(kind, &parsed.args, &parsed.failed) {
        Ok(checked) if errors.is_none() => generate(&checked, &parts),
        Ok(_) => with_errors(&quote!(#[allow(dead_code)] #item), errors),
        Err(error) => {
            combine(&mut errors, error);
            with_errors(&quote!(#[allow(dead_code)] #item), errors)
        }
    }
}

/// The other pack attributes stacked on the same function, each an error
/// spanned on it: every attribute writes a test named after the function,
/// so two cannot share one. They are recognised by the last segment of
/// their path, so an import under another name is not (it then fails on
/// the duplicate test name instead).
fn stacked(kind: Kind, item: &TokenStream) -> Vec<syn::Error> {
    let mut errors = Vec::new();
    let tokens: Vec<TokenTree> = item.clone().into_iter().collect();
    for pair in tokens.windows(2) {
        let (TokenTree::Punct(pound), TokenTree::Group(group)) = (&pair[0], &pair[1]) else {
            continue;
        };
        if pound.as_char() != '#' || group.delimiter() != Delimiter::Bracket {
            continue;
        }
        let last = group
            .stream()
            .into_iter()
            .take_while(|t| !matches!(t, TokenTree::Group(_)))
            .filter_map(|t| match t {
                TokenTree::Ident(ident) => Some(ident.to_string()),
                _ => None,
            })
            .last();
        if let Some(other) = last.filter(|name| Kind::named(name).is_some()) {
            errors.push(syn::Error::new(
                group.span(),
                format!(
                    "one pack attribute per function: #[{}] and #[{other}] would both write \
                     a test named after it; to run several packs against one builder, give \
                     each pack its own test, `#[{other}(builder = path, ...)] fn name() {{}}`, \
                     naming the shared builder",
                    kind.attribute()
                ),
            ));
        }
    }
    errors
}

fn with_errors(item: &TokenStream, errors: Option<syn::Error>) -> TokenStream {
    let errors = errors.map(|e| e.to_compile_error());
    quote!(#item #errors)
}

impl PackFn {
    /// The pieces the expansion needs, for a function that did not have the
    /// plain shape (see [`plain`]) but passed the shape check.
    fn into_parts(self) -> Parts {
        let (mut cfg, mut test, mut builder) =
            (TokenStream::new(), TokenStream::new(), TokenStream::new());
        for attr in &self.attrs {
            let target = match home(&attr.meta.to_token_stream()) {
                Home::All => &mut cfg,
                Home::Test => &mut test,
                Home::Builder => &mut builder,
            };
            attr.to_tokens(target);
        }
        // The builder keeps the user's tokens (and spans) under a derived
        // name; the test takes the user's name and visibility.
        let name = self.sig.ident.to_string();
        let mut sig = self.sig;
        sig.ident = syn::Ident::new(&build_name(&name), sig.ident.span());
        let is_async = sig.asyncness.is_some();
        let returned = match &sig.output {
            syn::ReturnType::Type(_, ty) => returned_type(ty.to_token_stream()),
            syn::ReturnType::Default => quote!(()),
        };
        let body = self.body;
        Parts {
            builder_fn: quote!(#cfg #builder #sig #body),
            cfg,
            test,
            vis: self.vis.to_token_stream(),
            name,
            is_async,
            returned,
        }
    }
}

impl PackFn {
    /// The pieces for the `builder = path` form: the function only names
    /// the test (and carries its `cfg`, `ignore` and `should_panic`); any
    /// other attribute lands on an empty item, where it is checked like
    /// anywhere else, rather than vanishing.
    fn into_test_parts(self) -> Parts {
        let (mut cfg, mut test, mut rest) =
            (TokenStream::new(), TokenStream::new(), TokenStream::new());
        for attr in &self.attrs {
            let target = match home(&attr.meta.to_token_stream()) {
                Home::All => &mut cfg,
                Home::Test => &mut test,
                Home::Builder => &mut rest,
            };
            attr.to_tokens(target);
        }
        let builder_fn = if rest.is_empty() {
            TokenStream::new()
        } else {
            quote!(#cfg #rest const _: () = ();)
        };
        Parts {
            builder_fn,
            cfg,
            test,
            vis: self.vis.to_token_stream(),
            name: self.sig.ident.to_string(),
            is_async: false,
            returned: TokenStream::new(),
        }
    }
}

/// Code the expansion writes itself. It is assembled as text and lexed in
/// one call: cheaper than building it token by token, which matters because
/// every pack is re-expanded on every rebuild.
fn code(text: &str) -> TokenStream {
    TokenStream::from_str(text).expect("the expansion writes valid Rust")
}

fn generate(checked: &Checked, parts: &Parts) -> TokenStream {
    let Parts {
        cfg,
        test,
        builder_fn,
        vis,
        name: n,
        is_async,
        returned,
    } = parts;
    let (runner, build) = (derived_name("pack", n), build_name(n));
    let accept = matches!(
        checked.get("accept_not_applicable"),
        Some(Typed::Bool(true))
    );
    let thread = matches!(checked.get("isolation"), Some(Typed::Str(mode)) if mode == "thread");
    let (text, files) = definition(checked);
    // The builder the runner calls: the annotated function under its
    // derived name, or the one `builder = path` names (with the path's own
    // spans, so a path that builds nothing is an error on it).
    let factory = match checked.get("builder") {
        Some(Typed::Path(path)) => quote!(builder #path),
        _ => {
            let mode = code(if *is_async { "async" } else { "sync" });
            let build = code(&build);
            quote!(#mode #build #returned)
        }
    };
    let tracked: Vec<String> = files.iter().map(|path| format!("{path:?}")).collect();
    let effects = match checked.get("effects_probe") {
        Some(Typed::Path(path)) => path.to_token_stream().to_string(),
        _ => String::new(),
    };
    // The items themselves are spelled out by `__private::pack!`, a
    // declarative macro: the compiler expands it natively, far faster than
    // this (unoptimised, in a debug build) proc macro could emit them.
    let head = code(&format!(
        "cfg: [{cfg}], test: [{test}], vis: {vis}, name: {n}, title: {title:?}, runner: {runner}, \
         factory:",
        title = n.strip_prefix("r#").unwrap_or(n),
    ));
    let tail = code(&format!(
        ", kind: {variant}, definition: {text:?}, \
         tracked: [{tracked}], accept: {accept}, thread: {thread}, effects: [{effects}], \
         expected_to_pass: {expected_to_pass}",
        tracked = tracked.join(", "),
        variant = variant(checked.kind),
        // `#[ignore]` or `#[should_panic]` on the test: not counted as
        // exercising its capability.
        expected_to_pass = test.is_empty(),
    ));
    quote!(#builder_fn ::symfonic_evals::__private::pack! { #head [#factory] #tail })
}

fn variant(kind: Kind) -> &'static str {
    match kind {
        Kind::Procedural => "Procedural",
        Kind::ApprovalResume => "ApprovalResume",
        Kind::ExtensionTool => "ExtensionTool",
        Kind::ExactlyOnce => "ExactlyOnce",
    }
}

/// The given arguments as one JSON object (defaults stay the runtime's), and the fixture files they were read from, which the
/// expansion tracks with `include_str!` so that editing one rebuilds the
/// test. A single string literal is far cheaper to expand and compile than a
/// field-by-field constructor, and every pack is re-expanded on each rebuild.
fn definition(checked: &Checked) -> (String, Vec<String>) {
    let mut fields = serde_json::Map::new();
    let mut files = Vec::new();
    for resolved in checked.values.iter().filter(|r| r.field.slot == Slot::Pack) {
        if let Typed::Json(Loaded {
            file: Some(path), ..
        }) = &resolved.value
        {
            files.push(path.clone());
        }
        fields.insert(resolved.field.name.to_owned(), json_of(&resolved.value));
    }
    if let Some((trials, required, timeout)) = checked.policy() {
        let mut policy = serde_json::json!({
            "trials": trials,
            "required": required,
            "step_timeout_ms": timeout,
        });
        if let Some(concurrency) = checked.int("concurrency") {
            policy["concurrency"] = concurrency.into();
        }
        fields.insert("policy".to_owned(), policy);
    }
    (serde_json::Value::Object(fields).to_string(), files)
}

/// An argument's value as the JSON the runtime deserialises the pack from.
fn json_of(typed: &Typed) -> serde_json::Value {
    match typed {
        Typed::Str(text) => text.clone().into(),
        Typed::StrList(items) => items.clone().into(),
        Typed::Json(loaded) => loaded.json.clone(),
        Typed::Bool(flag) => (*flag).into(),
        Typed::Int(n) => (*n).into(),
        Typed::Path(path) => path.to_token_stream().to_string().into(),
    }
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

    /// The expansion's two items: the builder and the `pack!` invocation,
    /// whose arguments are returned by name.
    fn items(out: &str) -> (syn::ItemFn, Vec<(String, String)>) {
        let file: syn::File = syn::parse_str(out).expect("valid items");
        let [syn::Item::Fn(builder), syn::Item::Macro(invocation)] = &file.items[..] else {
            panic!("a builder then one macro invocation: {out}")
        };
        let path = &invocation.mac.path;
        assert_eq!(
            quote!(#path).to_string(),
            ":: symfonic_evals :: __private :: pack"
        );
        let mut arguments = Vec::new();
        let mut tokens = invocation.mac.tokens.clone().into_iter().peekable();
        while let Some(name) = tokens.next() {
            tokens.next(); // the colon
            let mut value = TokenStream::new();
            while let Some(token) = tokens
                .next_if(|t| !matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','))
            {
                value.extend([token]);
            }
            tokens.next(); // the comma
            arguments.push((name.to_string(), value.to_string()));
        }
        (builder.clone(), arguments)
    }

    fn argument<'a>(arguments: &'a [(String, String)], name: &str) -> &'a str {
        &arguments.iter().find(|(n, _)| n == name).expect(name).1
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
        let (builder, arguments) = items(&out);
        assert_eq!(builder.sig.ident, "__symfonic_evals_build_weather");
        assert!(
            matches!(builder.vis, Visibility::Inherited),
            "the test carries the visibility"
        );
        assert!(builder.attrs.iter().any(|a| a.path().is_ident("doc")));
        assert!(!builder.attrs.iter().any(|a| a.path().is_ident("ignore")));
        for (name, value) in [
            ("cfg", "[]"),
            ("test", "[# [ignore]]"),
            ("vis", "pub"),
            ("name", "weather"),
            ("runner", "__symfonic_evals_pack_weather"),
            (
                "factory",
                "[sync __symfonic_evals_build_weather Deployment]",
            ),
            ("kind", "ExtensionTool"),
            ("tracked", "[]"),
            ("accept", "false"),
            ("thread", "false"),
            ("effects", "[]"),
            ("expected_to_pass", "false"),
        ] {
            assert_eq!(argument(&arguments, name), value, "{name}");
        }
    }

    #[test]
    fn a_signature_outside_the_plain_shape_expands_alike() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!()),
            quote!(
                #[cfg(test)]
                fn weather(ctx: &'static TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        let (builder, arguments) = items(&out);
        assert_eq!(builder.sig.ident, "__symfonic_evals_build_weather");
        assert!(builder.attrs.iter().any(|a| a.path().is_ident("cfg")));
        assert_eq!(argument(&arguments, "cfg"), "[# [cfg (test)]]");
        assert_eq!(argument(&arguments, "name"), "weather");
    }

    #[test]
    fn only_given_fields_are_assigned() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!(arguments = { "unit": "C", city: "Oslo" }, trials = 3)),
            quote!(
                fn weather(ctx: &TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        let (_, arguments) = items(&out);
        let literal: syn::LitStr =
            syn::parse_str(argument(&arguments, "definition")).expect("a string literal");
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
        let (builder, arguments) = items(&out);
        assert!(builder.sig.asyncness.is_some());
        assert_eq!(
            argument(&arguments, "factory"),
            "[async __symfonic_evals_build_weather Deployment]"
        );
    }

    #[test]
    fn a_named_builder_is_called_instead_and_the_function_only_names_the_test() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!(builder = desks::open)),
            quote!(
                #[ignore]
                fn weather() {}
            ),
        );
        let file: syn::File = syn::parse_str(&out).expect("valid items");
        let [syn::Item::Macro(invocation)] = &file.items[..] else {
            panic!("no builder is emitted, only the pack: {out}")
        };
        let tokens = invocation.mac.tokens.to_string();
        assert!(
            tokens.contains("factory : [builder desks :: open]"),
            "{tokens}"
        );
        assert!(tokens.contains("name : weather"), "{tokens}");
        assert!(tokens.contains("test : [# [ignore]]"), "{tokens}");
    }

    #[test]
    fn a_second_pack_attribute_on_the_function_is_an_error_on_it() {
        let out = expanded(
            Kind::ExtensionTool,
            extension(quote!()),
            quote!(
                #[symfonic_evals::approval_resume_pack(pause_prompt = "x")]
                #[doc = "kept"]
                fn weather(ctx: &TargetContext) -> Deployment {
                    todo!()
                }
            ),
        );
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(out.contains("one pack attribute per function"), "{out}");
        assert!(out.contains("fn weather"), "the item stays: {out}");
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
}
