//! From a checked definition to code: a hidden function that runs the pack
//! and returns its `PackRun`, a `#[test]` named after the annotated function
//! that finishes that run, and an inventory registration so a program can
//! list and run every pack in its binary.
//!
//! The generated code names everything by absolute path through
//! `::symfonic_evals::__private`, so an adopter's imports, shadowed names and
//! lint levels cannot change what it means.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use sha2::{Digest, Sha256};
use syn::{Attribute, ItemFn, Visibility};

use crate::check::{check, Checked, Typed};
use crate::json::canonical;
use crate::parse::{combine, parse_args};
use crate::schema::{Default, Kind, Slot};
use crate::shape::check_shape;

/// Expands one attribute. On any error, the annotated item is emitted
/// unchanged beside the errors, so completion and go-to-definition keep
/// working while the user fixes the attribute.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = parse_args(attr);
    let mut errors = parsed.errors;
    let Ok(function) = syn::parse2::<ItemFn>(item.clone()) else {
        let message = format!(
            "#[{}] goes on a function that builds the deployment: \
             `fn name(ctx: &symfonic_evals::TargetContext) -> Deployment`",
            kind.attribute()
        );
        combine(&mut errors, syn::Error::new(Span::call_site(), message));
        return with_errors(&item, errors);
    };
    if let Err(error) = check_shape(&function) {
        combine(&mut errors, error);
    }
    match check(kind, &parsed.args, &parsed.failed) {
        Ok(checked) if errors.is_none() => generate(&checked, function),
        Ok(_) => with_errors(&quote!(#[allow(dead_code)] #function), errors),
        Err(error) => {
            combine(&mut errors, error);
            with_errors(&quote!(#[allow(dead_code)] #function), errors)
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
    cfg: Vec<Attribute>,
    /// `#[ignore]`, `#[should_panic]`: on the test.
    test: Vec<Attribute>,
    /// Everything else (docs, allows): on the builder itself.
    builder: Vec<Attribute>,
}

fn split_attributes(attrs: &[Attribute]) -> Attributes {
    let mut split = Attributes {
        cfg: Vec::new(),
        test: Vec::new(),
        builder: Vec::new(),
    };
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("cfg") {
            split.cfg.push(attr.clone());
        } else if path.is_ident("ignore") || path.is_ident("should_panic") {
            split.test.push(attr.clone());
        } else {
            split.builder.push(attr.clone());
        }
    }
    split
}

fn generate(checked: &Checked, mut function: ItemFn) -> TokenStream {
    let name = function.sig.ident.clone();
    let name_text = name.to_string();
    let hidden = format_ident!("__symfonic_evals_pack_{}", name);
    let attrs = split_attributes(&function.attrs);
    let (cfg, test_attrs) = (&attrs.cfg, &attrs.test);
    let vis = std::mem::replace(&mut function.vis, Visibility::Inherited);
    function.attrs.clone_from(&attrs.builder);
    let factory = if function.sig.asyncness.is_some() {
        quote!(|ctx: &::symfonic_evals::TargetContext| ::symfonic_evals::__private::tokio_target(ctx, #name))
    } else {
        quote!(#name)
    };
    let definition = definition(checked);
    let accept = matches!(
        checked.get("accept_not_applicable").value,
        Typed::Bool(true)
    );
    let variant = format_ident!("{}", variant(checked.kind));
    let fingerprint = fingerprint(checked);
    let here = name.span();
    let file = quote_spanned!(here=> ::core::file!());
    let line = quote_spanned!(here=> ::core::line!());
    quote! {
        #(#cfg)*
        #[doc(hidden)]
        fn #hidden() -> ::symfonic_evals::__private::PackRun {
            #function
            ::symfonic_evals::__private::run_pack(
                ::core::concat!(::core::module_path!(), "::", #name_text),
                &#definition,
                &::symfonic_evals::__private::options(#accept),
                #factory,
            )
        }

        #(#cfg)*
        #[::core::prelude::v1::test]
        #(#test_attrs)*
        #vis fn #name() {
            ::symfonic_evals::__private::finish(&#hidden());
        }

        #(#cfg)*
        ::symfonic_evals::__private::inventory::submit! {
            ::symfonic_evals::__private::RegisteredPack::new(
                #name_text,
                ::core::module_path!(),
                ::symfonic_evals::__private::PackKind::#variant,
                #file,
                #line,
                #fingerprint,
                #hidden,
            )
        }
    }
}

fn variant(kind: Kind) -> &'static str {
    match kind {
        Kind::Procedural => "Procedural",
        Kind::ApprovalResume => "ApprovalResume",
        Kind::ExtensionTool => "ExtensionTool",
    }
}

/// `__private::<kind>(|pack| { pack.field = value; ... })`: only the given
/// fields are assigned, so every default stays the runtime's.
fn definition(checked: &Checked) -> TokenStream {
    let builder = format_ident!(
        "{}",
        match checked.kind {
            Kind::Procedural => "procedural",
            Kind::ApprovalResume => "approval_resume",
            Kind::ExtensionTool => "extension_tool",
        }
    );
    let mut assignments = Vec::new();
    for resolved in checked
        .values
        .iter()
        .filter(|r| r.explicit && r.field.slot == Slot::Pack)
    {
        let field = format_ident!("{}", resolved.field.name);
        let mut value = value(&resolved.value);
        if resolved.field.default == Default::Absent {
            value = quote!(::core::option::Option::Some(#value));
        }
        assignments.push(quote!(pack.#field = #value;));
    }
    let policy_given = checked
        .values
        .iter()
        .any(|r| r.explicit && r.field.slot == Slot::Policy);
    if policy_given {
        let trials =
            Literal::u32_unsuffixed(u32::try_from(checked.int("trials")).unwrap_or(u32::MAX));
        let require =
            Literal::u32_unsuffixed(u32::try_from(checked.int("require")).unwrap_or(u32::MAX));
        let timeout = if checked.get("step_timeout_ms").explicit {
            let ms = Literal::u64_unsuffixed(checked.int("step_timeout_ms"));
            quote!(::core::option::Option::Some(#ms))
        } else {
            quote!(::core::option::Option::None)
        };
        assignments.push(
            quote!(pack.policy = ::symfonic_evals::__private::policy(#trials, #require, #timeout);),
        );
    }
    quote!(::symfonic_evals::__private::#builder(|pack| { #(#assignments)* }))
}

fn value(typed: &Typed) -> TokenStream {
    match typed {
        Typed::Str(text) => quote!(::std::string::String::from(#text)),
        Typed::StrList(items) => quote!(::symfonic_evals::__private::strings(&[#(#items),*])),
        Typed::Json(loaded) => match &loaded.file {
            Some(path) => {
                let relative = format!("/{path}");
                quote! {
                    ::symfonic_evals::__private::json_file(
                        ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #relative)),
                        #path,
                    )
                }
            }
            None => {
                let text = serde_json::to_string(&loaded.json).expect("JSON values serialise");
                quote!(::symfonic_evals::__private::json(#text))
            }
        },
        Typed::Bool(flag) => quote!(#flag),
        Typed::Int(n) => {
            let n = Literal::u64_unsuffixed(*n);
            quote!(#n)
        }
        Typed::Absent => quote!(::core::option::Option::None),
    }
}

/// A sha-256 over the whole resolved definition (defaults included, fixture
/// contents rather than paths), as lowercase hex.
pub fn fingerprint(checked: &Checked) -> String {
    let mut fields = serde_json::Map::new();
    for resolved in &checked.values {
        let json = match &resolved.value {
            Typed::Str(text) => serde_json::Value::String(text.clone()),
            Typed::StrList(items) => serde_json::Value::from(items.clone()),
            Typed::Json(loaded) => loaded.json.clone(),
            Typed::Bool(flag) => serde_json::Value::Bool(*flag),
            Typed::Int(n) => serde_json::Value::from(*n),
            Typed::Absent => serde_json::Value::Null,
        };
        fields.insert(resolved.field.name.to_owned(), json);
    }
    let document = serde_json::json!({ "pack": checked.kind.pack_name(), "fields": fields });
    let text = serde_json::to_string(&canonical(&document)).expect("JSON values serialise");
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    fn the_test_keeps_the_function_name_and_the_builder_moves_inside() {
        let item = quote!(
            /// Builds it.
            #[ignore]
            pub fn weather(ctx: &TargetContext) -> Deployment {
                Deployment::open(ctx)
            }
        );
        let out = expanded(Kind::ExtensionTool, extension(quote!()), item);
        let file: syn::File = syn::parse_str(&out).expect("valid items");
        assert_eq!(file.items.len(), 3);
        let syn::Item::Fn(hidden) = &file.items[0] else {
            panic!("hidden fn first")
        };
        assert_eq!(hidden.sig.ident, "__symfonic_evals_pack_weather");
        let syn::Stmt::Item(syn::Item::Fn(builder)) = &hidden.block.stmts[0] else {
            panic!("builder first in the hidden fn")
        };
        assert_eq!(builder.sig.ident, "weather");
        assert!(matches!(builder.vis, Visibility::Inherited));
        assert!(builder.attrs.iter().any(|a| a.path().is_ident("doc")));
        let syn::Item::Fn(test) = &file.items[1] else {
            panic!("test fn second")
        };
        assert_eq!(test.sig.ident, "weather");
        assert!(matches!(test.vis, Visibility::Public(_)));
        let paths: Vec<String> = test.attrs.iter().map(|a| quote!(#a).to_string()).collect();
        assert_eq!(
            paths,
            ["# [:: core :: prelude :: v1 :: test]", "# [ignore]"]
        );
        assert!(matches!(&file.items[2], syn::Item::Macro(_)));
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
        assert!(out.contains(r#"pack . arguments = :: core :: option :: Option :: Some (:: symfonic_evals :: __private :: json ("{\"city\":\"Oslo\",\"unit\":\"C\"}"))"#), "{out}");
        assert!(out.contains("pack . policy = :: symfonic_evals :: __private :: policy (3 , 3 , :: core :: option :: Option :: None)"));
        assert!(!out.contains("pack . conversation"));
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
        assert!(out.contains(":: symfonic_evals :: __private :: tokio_target (ctx , weather)"));
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
