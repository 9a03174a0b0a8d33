//! A fast path for the function shape almost every pack uses:
//! `[attrs] [pub] [async] fn name(ctx: &TargetContext) -> Deployment { .. }`.
//!
//! Every pack is re-expanded on every rebuild of the adopter's tests, and in
//! a debug build this proc macro is not optimised, so handing the function to
//! syn (which walks every token, body included, and builds a full signature)
//! is the largest single cost of an expansion. The plain shape is recognised
//! from the top-level tokens alone. Anything else (generics, a `where`
//! clause, another argument shape, `unsafe`, `const`, an ABI, no return type
//! or `()`) is left to the syn path, which accepts or rejects it with a
//! spanned error; this module only ever accepts what that path accepts.

use proc_macro2::{Delimiter, Ident, Spacing, TokenStream, TokenTree};

/// The pieces of an annotated function the expansion needs.
pub struct Parts {
    /// `#[cfg(..)]` attributes: on everything emitted.
    pub cfg: TokenStream,
    /// `#[ignore]` and `#[should_panic]`: on the test.
    pub test: TokenStream,
    /// The builder: the user's function under `build_name`, with every other
    /// attribute and without its visibility (the test carries that).
    pub builder_fn: TokenStream,
    /// The visibility, for the test.
    pub vis: TokenStream,
    /// The function's name, which the test takes.
    pub name: String,
    /// Whether the builder is an `async fn`.
    pub is_async: bool,
    /// The deployment type the builder returns, with the user's spans (so
    /// a type that is no `Target` is an error on it); `_` for an `impl`
    /// type, which cannot be named.
    pub returned: TokenStream,
}

/// The returned type's tokens as the runner names them.
pub fn returned_type(tokens: TokenStream) -> TokenStream {
    match tokens.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) if ident == "impl" => {
            TokenStream::from(TokenTree::Ident(Ident::new("_", ident.span())))
        }
        _ => tokens,
    }
}

/// The name the builder is emitted under.
pub fn build_name(name: &str) -> String {
    derived_name("build", name)
}

/// A hidden item's name derived from the annotated function's: a raw
/// identifier (`r#match`) loses its `r#`, which cannot sit mid-identifier.
pub fn derived_name(role: &str, name: &str) -> String {
    format!(
        "__symfonic_evals_{role}_{}",
        name.strip_prefix("r#").unwrap_or(name)
    )
}

/// Which emitted item an attribute belongs on.
pub enum Home {
    /// `cfg`: everything.
    All,
    /// `ignore`, `should_panic`: the test.
    Test,
    /// Everything else: the builder.
    Builder,
}

/// Where the attribute whose bracket contents are `inner` goes.
pub fn home(inner: &TokenStream) -> Home {
    match inner.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) if ident == "cfg" => Home::All,
        Some(TokenTree::Ident(ident)) if ident == "ignore" || ident == "should_panic" => Home::Test,
        _ => Home::Builder,
    }
}

/// The parts of `item` when it has the plain shape, else `None`.
pub fn plain(item: &TokenStream) -> Option<Parts> {
    let tokens: Vec<TokenTree> = item.clone().into_iter().collect();
    let mut at = 0;
    let (mut cfg, mut test, mut attrs) =
        (TokenStream::new(), TokenStream::new(), TokenStream::new());
    while let (Some(TokenTree::Punct(pound)), Some(TokenTree::Group(group))) =
        (tokens.get(at), tokens.get(at + 1))
    {
        if pound.as_char() != '#' || group.delimiter() != Delimiter::Bracket {
            break;
        }
        let target = match home(&group.stream()) {
            Home::All => &mut cfg,
            Home::Test => &mut test,
            Home::Builder => &mut attrs,
        };
        target.extend(tokens[at..at + 2].iter().cloned());
        at += 2;
    }
    let mut vis = TokenStream::new();
    if is_ident(tokens.get(at), "pub") {
        vis.extend([tokens[at].clone()]);
        at += 1;
        if let Some(TokenTree::Group(scope)) = tokens.get(at) {
            if scope.delimiter() == Delimiter::Parenthesis {
                vis.extend([tokens[at].clone()]);
                at += 1;
            }
        }
    }
    let head_start = at;
    let is_async = is_ident(tokens.get(at), "async");
    at += usize::from(is_async);
    if !is_ident(tokens.get(at), "fn") {
        return None;
    }
    at += 1;
    let head = &tokens[head_start..at];
    let Some(TokenTree::Ident(name)) = tokens.get(at) else {
        return None;
    };
    at += 1;
    let Some(TokenTree::Group(arguments)) = tokens.get(at) else {
        return None;
    };
    if arguments.delimiter() != Delimiter::Parenthesis || !is_context_argument(&arguments.stream())
    {
        return None;
    }
    let tail = &tokens[at..];
    at += 1;
    if !(is_punct(tokens.get(at), '-', Some(Spacing::Joint))
        && is_punct(tokens.get(at + 1), '>', None))
    {
        return None;
    }
    at += 2;
    let (Some(TokenTree::Group(body)), Some(returned)) =
        (tokens.last(), tokens.get(at..tokens.len() - 1))
    else {
        return None;
    };
    if body.delimiter() != Delimiter::Brace || returned.is_empty() || is_unit(returned) {
        return None;
    }
    if returned.iter().any(|t| is_ident(Some(t), "where")) {
        return None;
    }
    let mut builder_fn = cfg.clone();
    builder_fn.extend(attrs);
    builder_fn.extend(head.iter().cloned());
    builder_fn.extend([TokenTree::Ident(Ident::new(
        &build_name(&name.to_string()),
        name.span(),
    ))]);
    builder_fn.extend(tail.iter().cloned());
    Some(Parts {
        cfg,
        test,
        builder_fn,
        vis,
        name: name.to_string(),
        is_async,
        returned: returned_type(returned.iter().cloned().collect()),
    })
}

fn is_ident(token: Option<&TokenTree>, word: &str) -> bool {
    matches!(token, Some(TokenTree::Ident(ident)) if ident == word)
}

/// Whether `token` is the punctuation `ch` (with `spacing`, when given).
fn is_punct(token: Option<&TokenTree>, ch: char, spacing: Option<Spacing>) -> bool {
    matches!(token, Some(TokenTree::Punct(p)) if p.as_char() == ch && spacing.is_none_or(|s| p.spacing() == s))
}

fn is_unit(returned: &[TokenTree]) -> bool {
    matches!(returned, [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty())
}

/// `name: &TargetContext`, `name: &symfonic_evals::TargetContext` or
/// `name: &::symfonic_evals::TargetContext` (the pattern a plain identifier
/// or `_`), with nothing else in the list but an optional trailing comma.
fn is_context_argument(arguments: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = arguments.clone().into_iter().collect();
    let tokens = match tokens.split_last() {
        Some((TokenTree::Punct(comma), rest)) if comma.as_char() == ',' => rest,
        _ => &tokens[..],
    };
    let [TokenTree::Ident(pattern), colon, amp, path @ ..] = tokens else {
        return false;
    };
    if pattern == "mut" || pattern == "self" || !is_punct(Some(colon), ':', None) {
        return false;
    }
    if !matches!(amp, TokenTree::Punct(p) if p.as_char() == '&') {
        return false;
    }
    let words: Vec<String> = path
        .iter()
        .map(|t| match t {
            TokenTree::Ident(ident) => ident.to_string(),
            TokenTree::Punct(p) if p.as_char() == ':' => ":".to_owned(),
            _ => "?".to_owned(),
        })
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    matches!(
        words.as_slice(),
        ["TargetContext"]
            | ["symfonic_evals", ":", ":", "TargetContext"]
            | [":", ":", "symfonic_evals", ":", ":", "TargetContext"]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn the_plain_shape_is_taken_apart() {
        let parts = plain(&quote!(
            /// Docs.
            #[cfg(test)]
            #[ignore]
            pub(crate) async fn desk(ctx: &::symfonic_evals::TargetContext) -> Desk {
                Desk::open(ctx)
            }
        ))
        .expect("plain");
        assert_eq!(parts.name, "desk");
        assert!(parts.is_async);
        assert_eq!(parts.vis.to_string(), "pub (crate)");
        assert_eq!(parts.cfg.to_string(), "# [cfg (test)]");
        assert_eq!(parts.test.to_string(), "# [ignore]");
        let builder = parts.builder_fn.to_string();
        assert!(
            builder.starts_with(
                "# [cfg (test)] # [doc = r\" Docs.\"] async fn __symfonic_evals_build_desk (ctx"
            ),
            "{builder}"
        );
        assert!(!builder.contains("pub"));
    }

    #[test]
    fn a_raw_identifier_name_derives_valid_names() {
        let parts = plain(&quote!(
            fn r#match(ctx: &TargetContext) -> Desk {
                todo!()
            }
        ))
        .unwrap();
        assert_eq!(parts.name, "r#match");
        assert!(parts
            .builder_fn
            .to_string()
            .contains("fn __symfonic_evals_build_match (ctx"));
        assert_eq!(
            derived_name("pack", "r#match"),
            "__symfonic_evals_pack_match"
        );
    }

    #[test]
    fn anything_unusual_goes_to_the_checked_path() {
        for item in [
            quote!(
                fn f<T>(ctx: &TargetContext) -> T {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &TargetContext) -> D
                where
                    D: Sized,
                {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &mut TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &'a TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &TargetContext, n: u8) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f(mut ctx: &TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &Other) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f(ctx: &TargetContext) {}
            ),
            quote!(
                fn f(ctx: &TargetContext) -> () {}
            ),
            quote!(
                unsafe fn f(ctx: &TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                const fn f(ctx: &TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                extern "C" fn f(ctx: &TargetContext) -> D {
                    todo!()
                }
            ),
            quote!(
                fn f() -> D {
                    todo!()
                }
            ),
        ] {
            assert!(plain(&item).is_none(), "{item}");
        }
    }
}
