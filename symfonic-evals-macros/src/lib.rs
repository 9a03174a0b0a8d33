//! Attribute macros for symfonic-evals. Use them through the runtime crate,
//! as `symfonic_evals::procedural_pack` and friends; the generated code
//! names only `::symfonic_evals` paths.
//!
//! Each attribute is a thin shim over three steps on `proc_macro2` tokens:
//! `parse` the arguments, `check` them (and the function's `shape`) with
//! every error spanned and combined, then `expand` into a builder and one
//! `__private::pack!` invocation that writes the test, the runner and the
//! registration.

mod check;
#[cfg(test)]
mod doc_tables;
mod expand;
mod json;
mod parse;
mod plain;
mod schema;
mod shape;
mod suggest;

use proc_macro::TokenStream;

use crate::schema::Kind;

#[doc = include_str!("../docs/procedural_pack.md")]
#[proc_macro_attribute]
pub fn procedural_pack(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Procedural, attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/approval_resume_pack.md")]
#[proc_macro_attribute]
pub fn approval_resume_pack(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::ApprovalResume, attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/extension_tool_pack.md")]
#[proc_macro_attribute]
pub fn extension_tool_pack(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::ExtensionTool, attr.into(), item.into()).into()
}

#[doc = include_str!("../docs/exactly_once_pack.md")]
#[proc_macro_attribute]
pub fn exactly_once_pack(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::ExactlyOnce, attr.into(), item.into()).into()
}
