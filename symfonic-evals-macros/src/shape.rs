//! The shape a pack function must have: one `&TargetContext` argument, a
//! returned deployment, nothing generic. Each deviation is its own error,
//! spanned on the part of the signature that is wrong, and every message
//! shows the expected shape.

use syn::{FnArg, ReturnType, Signature, Type};

use crate::parse::combine;

const EXPECTED: &str =
    "expected `fn name(ctx: &symfonic_evals::TargetContext) -> Deployment` (or `async fn`)";

/// Checks the function's signature.
///
/// # Errors
///
/// Every deviation from the expected shape, combined.
pub fn check_shape(sig: &Signature) -> Result<(), syn::Error> {
    let mut errors = None;
    let mut fail = |tokens: &dyn quote::ToTokens, what: &str| {
        combine(
            &mut errors,
            syn::Error::new_spanned(tokens, format!("{what}; {EXPECTED}")),
        );
    };
    if !sig.generics.params.is_empty() {
        fail(
            &sig.generics,
            "a pack function cannot be generic: the test calls it with no type to choose",
        );
    } else if let Some(clause) = &sig.generics.where_clause {
        fail(
            clause,
            "a pack function cannot have a `where` clause: nothing is left to constrain",
        );
    }
    if let Some(variadic) = &sig.variadic {
        fail(variadic, "a pack function cannot be variadic");
    }
    if let Some(unsafety) = &sig.unsafety {
        fail(
            unsafety,
            "a pack function cannot be `unsafe`: the harness calls it on every restart",
        );
    }
    if let Some(abi) = &sig.abi {
        fail(abi, "a pack function cannot declare an ABI");
    }
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    match inputs.as_slice() {
        [] => fail(
            &sig.ident,
            "a pack function takes the harness's `&TargetContext` and takes nothing else",
        ),
        [FnArg::Receiver(receiver)] => {
            fail(
                receiver,
                "a pack function cannot take `self`: it must be a free function",
            );
        }
        [FnArg::Typed(arg)] => {
            if !is_context_ref(&arg.ty) {
                fail(
                    &arg.ty,
                    "the argument of a pack function must be `&TargetContext`",
                );
            }
        }
        [_, extra, ..] => fail(
            extra,
            "a pack function takes exactly one argument, `&TargetContext`",
        ),
    }
    match &sig.output {
        ReturnType::Default => fail(
            &sig.ident,
            "a pack function must return the deployment it builds",
        ),
        ReturnType::Type(_, ty) if matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) => {
            fail(
                ty,
                "a pack function must return the deployment it builds, not `()`",
            );
        }
        ReturnType::Type(..) => {}
    }
    errors.map_or(Ok(()), Err)
}

const EXPECTED_TEST: &str = "expected `fn name() {}`: with `builder = path`, the annotated \
     function only names the test, and the builder it names builds the deployment";

/// Checks the function of the `builder = path` form: a test name and
/// nothing else, so nothing the user writes there is silently ignored.
///
/// # Errors
///
/// Every part that would be ignored, combined.
pub fn check_test_shape(sig: &Signature, body: &proc_macro2::Group) -> Result<(), syn::Error> {
    let mut errors = None;
    let mut fail = |tokens: &dyn quote::ToTokens, what: &str| {
        combine(
            &mut errors,
            syn::Error::new_spanned(tokens, format!("{what}; {EXPECTED_TEST}")),
        );
    };
    if let Some(asyncness) = &sig.asyncness {
        fail(
            asyncness,
            "the test function is not async (an async builder is named as it is)",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        fail(&sig.generics, "the test function cannot be generic");
    }
    if let Some(first) = sig.inputs.first() {
        fail(
            first,
            "the test function takes no arguments: the builder receives the context",
        );
    }
    if let ReturnType::Type(arrow, ty) = &sig.output {
        fail(
            &quote::quote!(#arrow #ty),
            "the test function returns nothing: the builder returns the deployment",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        fail(unsafety, "the test function cannot be `unsafe`");
    }
    if !body.stream().is_empty() {
        fail(
            body,
            "the test function's body stays empty: the pack is the test",
        );
    }
    errors.map_or(Ok(()), Err)
}

/// `&TargetContext`, `&symfonic_evals::TargetContext` or
/// `&::symfonic_evals::TargetContext` (shared, any lifetime).
fn is_context_ref(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else {
        return false;
    };
    if reference.mutability.is_some() {
        return false;
    }
    let Type::Path(path) = &*reference.elem else {
        return false;
    };
    if path.qself.is_some() {
        return false;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| {
            if s.arguments.is_none() {
                s.ident.to_string()
            } else {
                String::new()
            }
        })
        .collect();
    matches!(
        segments
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["TargetContext"] | ["symfonic_evals", "TargetContext"]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let function: syn::ItemFn = syn::parse2(tokens).unwrap();
        match check_shape(&function.sig) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn accepts_every_spelling_of_the_context() {
        assert!(errors(quote!(
            fn a(ctx: &TargetContext) -> D {
                D
            }
        ))
        .is_empty());
        assert!(errors(quote!(
            fn a(_: &symfonic_evals::TargetContext) -> D {
                D
            }
        ))
        .is_empty());
        assert!(errors(quote!(
            fn a(c: &'_ ::symfonic_evals::TargetContext) -> impl T {
                D
            }
        ))
        .is_empty());
        assert!(errors(quote!(
            async fn a(ctx: &TargetContext) -> D {
                D
            }
        ))
        .is_empty());
    }

    #[test]
    fn names_each_deviation() {
        let found = errors(quote!(
            fn a<T>(ctx: &mut TargetContext, extra: u8) {}
        ));
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].contains("cannot be generic"));
        assert!(found[1].contains("exactly one argument"));
        assert!(found[2].contains("must return the deployment"));
        assert!(found.iter().all(|e| e.contains(EXPECTED)));
        assert!(errors(quote!(
            fn a() -> D {
                D
            }
        ))[0]
            .contains("takes the harness's `&TargetContext`"));
        assert!(errors(quote!(
            fn a(ctx: TargetContext) -> D {
                D
            }
        ))[0]
            .contains("must be `&TargetContext`"));
        assert!(errors(quote!(
            fn a(&self) -> D {
                D
            }
        ))[0]
            .contains("cannot take `self`"));
        assert!(errors(quote!(
            fn a(ctx: &TargetContext) -> () {}
        ))[0]
            .contains("not `()`"));
        assert!(errors(quote!(
            unsafe fn a(ctx: &TargetContext) -> D {
                D
            }
        ))[0]
            .contains("`unsafe`"));
    }
}
