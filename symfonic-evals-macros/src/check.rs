//! Checking parsed arguments against a pack's table: names, types, rules and
//! the checks that span two arguments. Every problem becomes one spanned
//! error; all of them are combined, so a user fixes an attribute in one pass.

use proc_macro2::{Span, TokenStream};
use serde_json::Value as Json;

use crate::json::{is_empty, load_file, to_json, Loaded};
use crate::parse::{combine, Arg, Value, ValueKind};
use crate::schema::{Field, Kind, Presence, Rule, Ty};
use crate::suggest::closest;

/// A checked value of the field's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    /// A string.
    Str(String),
    /// A list of strings.
    StrList(Vec<String>),
    /// A JSON object (inline or from a fixture).
    Json(Loaded),
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(u64),
    /// A path to a function.
    Path(syn::Path),
}

/// One argument the attribute gave, checked.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The field.
    pub field: &'static Field,
    /// Its value.
    pub value: Typed,
}

/// A definition that passed every check: the arguments the attribute gave,
/// in table order. Everything left out takes the runtime's default.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The pack.
    pub kind: Kind,
    /// The given arguments, in table order.
    pub values: Vec<Resolved>,
}

impl Checked {
    /// The argument called `name`, if the attribute gave it.
    pub fn get(&self, name: &str) -> Option<&Typed> {
        self.values
            .iter()
            .find(|r| r.field.name == name)
            .map(|r| &r.value)
    }

    /// The integer argument called `name`, if given.
    pub fn int(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Typed::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// `(trials, required, step timeout)` when any policy argument was
    /// given: one trial by default, and `require` follows `trials`.
    pub fn policy(&self) -> Option<(u64, u64, Option<u64>)> {
        let timeout = self.int("step_timeout_ms");
        if self.int("trials").is_none()
            && self.int("require").is_none()
            && timeout.is_none()
            && self.int("concurrency").is_none()
        {
            return None;
        }
        let trials = self.int("trials").unwrap_or(1);
        Some((trials, self.int("require").unwrap_or(trials), timeout))
    }
}

/// Checks `args` for the `kind` attribute.
///
/// # Errors
///
/// Every problem found, combined.
pub fn check(kind: Kind, args: &[Arg], failed: &[String]) -> Result<Checked, syn::Error> {
    let mut errors = None;
    let mut given: Vec<(&'static Field, Typed, &Arg)> = Vec::new();
    for arg in args {
        let name = arg.name.to_string();
        let Some(field) = kind.field(&name) else {
            combine(&mut errors, unknown(kind, arg));
            continue;
        };
        if given.iter().any(|(f, _, _)| f.name == name) {
            let message = format!("duplicate argument `{name}`: give each argument once");
            combine(&mut errors, syn::Error::new(arg.name.span(), message));
            continue;
        }
        match typed(kind, field, &arg.value) {
            Ok(value) => given.push((field, value, arg)),
            Err(error) => combine(&mut errors, error),
        }
    }
    let mut values = Vec::new();
    for field in kind.fields() {
        match given.iter().find(|(f, _, _)| f.name == field.name) {
            Some((_, value, _)) => values.push(Resolved {
                field,
                value: value.clone(),
            }),
            None if field.presence == Presence::Required && !has_error_for(args, failed, field) => {
                combine(&mut errors, missing(kind, field));
            }
            None => {}
        }
    }
    cross_checks(&given, args, &mut errors);
    match errors {
        Some(errors) => Err(errors),
        None => Ok(Checked { kind, values }),
    }
}

/// A required argument that was given but rejected has already been
/// reported; it should not also be reported missing.
fn has_error_for(args: &[Arg], failed: &[String], field: &Field) -> bool {
    args.iter().any(|arg| arg.name == field.name) || failed.iter().any(|name| name == field.name)
}

fn unknown(kind: Kind, arg: &Arg) -> syn::Error {
    let name = arg.name.to_string();
    if let Some(hint) = kind.retired(&name) {
        let message = format!("#[{}] no longer takes `{name}`: {hint}", kind.attribute());
        return syn::Error::new(arg.name.span(), message);
    }
    let known: Vec<&str> = kind.fields().map(|f| f.name).collect();
    let message = match closest(&name, known.iter().copied()) {
        Some(suggestion) => format!(
            "unknown argument `{name}` for #[{}]; did you mean `{suggestion}`?",
            kind.attribute()
        ),
        None => format!(
            "unknown argument `{name}` for #[{}]; expected one of: {}",
            kind.attribute(),
            known.join(", ")
        ),
    };
    syn::Error::new(arg.name.span(), message)
}

fn missing(kind: Kind, field: &Field) -> syn::Error {
    let example = match field.ty {
        Ty::StrList => "[\"...\"]",
        Ty::Object => "{ ... }",
        _ => "\"...\"",
    };
    let message = format!(
        "#[{}] is missing the required argument `{}`: add `{} = {example}`",
        kind.attribute(),
        field.name,
        field.name
    );
    syn::Error::new(Span::call_site(), message)
}

fn wrong_type(field: &Field, value: &Value) -> syn::Error {
    syn::Error::new_spanned(
        &value.tokens,
        format!(
            "`{}` expects {}, found {}",
            field.name,
            field.ty.describe(),
            value.describe()
        ),
    )
}

fn empty(field: &Field, tokens: &TokenStream) -> syn::Error {
    syn::Error::new_spanned(
        tokens,
        format!("`{}` cannot be empty: it {}", field.name, field.why),
    )
}

/// Probe names: each a string naming one of the pack's probes.
fn probe_names(kind: Kind, field: &Field, items: &[Value]) -> syn::Result<Typed> {
    let known = kind.probes();
    let mut names = Vec::new();
    let mut errors = None;
    for item in items {
        match &item.kind {
            ValueKind::Str(s) if known.contains(&s.value().as_str()) => names.push(s.value()),
            ValueKind::Str(s) => {
                let name = s.value();
                let message = match closest(&name, known.iter().copied()) {
                    Some(suggestion) => {
                        format!(
                            "`{name}` is not a probe of #[{}]; did you mean `{suggestion}`?",
                            kind.attribute()
                        )
                    }
                    None => format!(
                        "`{name}` is not a probe of #[{}]; its probes are: {}",
                        kind.attribute(),
                        known.join(", ")
                    ),
                };
                combine(&mut errors, syn::Error::new_spanned(&item.tokens, message));
            }
            _ => combine(
                &mut errors,
                syn::Error::new_spanned(
                    &item.tokens,
                    format!(
                        "`{}` expects {}; this item is {}",
                        field.name,
                        field.ty.describe(),
                        item.describe()
                    ),
                ),
            ),
        }
    }
    match errors {
        Some(errors) => Err(errors),
        None => Ok(Typed::StrList(names)),
    }
}

/// Checks one value against its field's type and rule.
fn typed(kind: Kind, field: &Field, value: &Value) -> syn::Result<Typed> {
    let non_empty = field.rule == Rule::NonEmpty;
    let no_empty_item = field.rule != Rule::Any;
    match (field.ty, &value.kind) {
        (Ty::Str, ValueKind::Str(s)) => {
            if non_empty && s.value().is_empty() {
                return Err(empty(field, &value.tokens));
            }
            Ok(Typed::Str(s.value()))
        }
        (Ty::StrList, ValueKind::Array(items)) => {
            let mut strings = Vec::new();
            let mut errors = None;
            for item in items {
                match &item.kind {
                    ValueKind::Str(s) if no_empty_item && s.value().is_empty() => {
                        let message = if field.name == "demonstrations" {
                            "`demonstrations` has an empty item: each is a prompt, and an empty \
                             prompt gives the deployment nothing to act on"
                                .to_owned()
                        } else {
                            format!("`{}` has an empty item: they {}", field.name, field.why)
                        };
                        combine(&mut errors, syn::Error::new_spanned(&item.tokens, message));
                    }
                    ValueKind::Str(s) => strings.push(s.value()),
                    _ => {
                        let message = format!(
                            "`{}` expects {}; this item is {}",
                            field.name,
                            field.ty.describe(),
                            item.describe()
                        );
                        combine(&mut errors, syn::Error::new_spanned(&item.tokens, message));
                    }
                }
            }
            if let Some(errors) = errors {
                return Err(errors);
            }
            if non_empty && strings.is_empty() {
                return Err(empty(field, &value.tokens));
            }
            Ok(Typed::StrList(strings))
        }
        (Ty::Object, ValueKind::Object(_) | ValueKind::File(_)) => {
            let (json, file) = match &value.kind {
                ValueKind::File(path) => (load_file(path)?, Some(path.value())),
                _ => (to_json(value)?, None),
            };
            if !json.is_object() {
                let found = match json {
                    Json::Array(_) => "an array",
                    Json::String(_) => "a string",
                    Json::Number(_) => "a number",
                    Json::Bool(_) => "a boolean",
                    _ => "`null`",
                };
                return Err(syn::Error::new_spanned(
                    &value.tokens,
                    format!(
                        "`{}` expects a JSON object; the fixture holds {found}",
                        field.name
                    ),
                ));
            }
            if non_empty && is_empty(&json) {
                return Err(empty(field, &value.tokens));
            }
            Ok(Typed::Json(Loaded { json, file }))
        }
        (Ty::Bool, ValueKind::Bool(b)) => Ok(Typed::Bool(b.value)),
        (Ty::StrOrList, ValueKind::Str(_)) => {
            let as_str = Field {
                ty: Ty::Str,
                ..*field
            };
            typed(kind, &as_str, value).map(|t| match t {
                Typed::Str(one) => Typed::StrList(vec![one]),
                other => other,
            })
        }
        (Ty::StrOrList, ValueKind::Array(_)) => {
            let as_list = Field {
                ty: Ty::StrList,
                ..*field
            };
            typed(kind, &as_list, value)
        }
        (Ty::Choice(choices), ValueKind::Str(s)) => {
            if choices.contains(&s.value().as_str()) {
                Ok(Typed::Str(s.value()))
            } else {
                Err(syn::Error::new_spanned(
                    &value.tokens,
                    format!(
                        "`{}` is one of {}",
                        field.name,
                        choices
                            .iter()
                            .map(|c| format!("{c:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        }
        (Ty::Probes, ValueKind::Array(items)) => probe_names(kind, field, items),
        (Ty::Path, ValueKind::Path(path)) => Ok(Typed::Path(path.clone())),
        (Ty::Count | Ty::Millis, ValueKind::Int(int)) => {
            let parsed = if field.ty == Ty::Count {
                int.base10_parse::<u32>().map(u64::from)
            } else {
                int.base10_parse::<u64>()
            };
            match parsed {
                Ok(0) => Err(empty_count(field, &value.tokens)),
                Ok(n) => Ok(Typed::Int(n)),
                Err(_) => Err(syn::Error::new_spanned(
                    &value.tokens,
                    format!("`{}` is too large", field.name),
                )),
            }
        }
        _ => Err(wrong_type(field, value)),
    }
}

fn empty_count(field: &Field, tokens: &TokenStream) -> syn::Error {
    syn::Error::new_spanned(
        tokens,
        format!("`{}` cannot be zero: it {}", field.name, field.why),
    )
}

/// The checks that relate two arguments, each spanned on the argument to
/// change.
fn cross_checks(
    given: &[(&'static Field, Typed, &Arg)],
    args: &[Arg],
    errors: &mut Option<syn::Error>,
) {
    // Written, whether or not its value passed its own check.
    let written = |name: &str| args.iter().any(|a| a.name == name);
    let find = |name: &str| given.iter().find(|(f, _, _)| f.name == name);
    let mut refuse = |arg: &Arg, message: &str| {
        combine(errors, syn::Error::new_spanned(&arg.value.tokens, message));
    };
    let same = |a: &str, b: &str| match (find(a), find(b)) {
        (Some((_, x, _)), Some((_, y, arg))) if same_json(x, y) => Some(*arg),
        _ => None,
    };
    if let Some(arg) = same("satisfied_state", "blocked_state") {
        refuse(
            arg,
            "`satisfied_state` and `blocked_state` are the same JSON, so the two \
             enforcement turns would differ in nothing and a refusal would prove no \
             precondition was read; make the blocked state fail the precondition",
        );
    }
    if let Some(arg) = same("satisfied_state", "draft_state") {
        refuse(
            arg,
            "`draft_state` equals `satisfied_state`, a state the approved rule admits, so the \
             draft probe cannot show a draft that governs; use a state the rule would refuse \
             (the blocked state, say)",
        );
    }
    if let Some(arg) = same("answer", "unfit_answer") {
        refuse(
            arg,
            "`unfit_answer` equals `answer`: the answer that must be rejected is the one that \
             must fit",
        );
    }
    if let Some(arg) = same("prompt", "second_prompt") {
        refuse(
            arg,
            "`second_prompt` equals `prompt`: the second request must be a distinct one, or it \
             proves nothing the first did not",
        );
    }
    if let Some(arg) = same("arguments", "second_arguments") {
        refuse(
            arg,
            "`second_arguments` equals `arguments`: the second call must ask for something \
             else, or its result could rightly be the first one's",
        );
    }
    if let (Some((_, _, arg)), None) = (find("second_arguments"), find("second_prompt")) {
        refuse(
            arg,
            "`second_arguments` is read only by the fresh-result probe; give `second_prompt` \
             too, the request that makes that call",
        );
    }
    if let Some((_, Typed::Json(schema), arg)) = find("tool_schema") {
        if schema.json.get("type").and_then(|t| t.as_str()) != Some("object") {
            refuse(
                arg,
                "`tool_schema` must be the JSON Schema of an object (`{\"type\": \"object\", \
                 ...}`): MCP tools take their arguments as one",
            );
        }
    }
    if let Some((_, Typed::Json(result), arg)) = find("fixture_result") {
        if result.json.get("nonce").is_some() {
            refuse(
                arg,
                "`fixture_result` carries a `nonce`, which the MCP fixture writes itself, a \
                 fresh one per call; leave it out",
            );
        }
    }
    if let Some(arg) = same("answer", "deny_answer") {
        refuse(
            arg,
            "`deny_answer` equals `answer`, so the denial would be the approval",
        );
    }
    if let Some(arg) = same("answer", "foreign_answer") {
        refuse(
            arg,
            "`foreign_answer` equals `answer`, so the person not entitled would be the one who is",
        );
    }
    if let Some(arg) = same("answer", "amended_answer") {
        refuse(
            arg,
            "`amended_answer` equals `answer`, so there is no change to carry out",
        );
    }
    if let Some(arg) = same("pause_prompt", "second_prompt") {
        refuse(
            arg,
            "`second_prompt` equals `pause_prompt`: the same request twice may share its \
             effect's key, so the second request must name another subject",
        );
    }
    match (find("amended_answer"), find("amended_call")) {
        (Some((_, _, arg)), None) => refuse(
            arg,
            "`amended_answer` needs `amended_call`: the arguments the call must carry after the \
             change",
        ),
        (None, Some((_, _, arg))) => refuse(
            arg,
            "`amended_call` is read only with `amended_answer`: give the answer that makes the \
             change",
        ),
        _ => {}
    }
    let list = |name: &str| match find(name) {
        Some((_, Typed::StrList(items), arg)) => Some((items.clone(), *arg)),
        _ => None,
    };
    let demonstrations = list("demonstrations")
        .map(|(items, _)| items)
        .unwrap_or_default();
    let decoys = list("decoy_demonstrations");
    if let Some((items, arg)) = &decoys {
        if items.iter().any(|d| demonstrations.contains(d)) {
            refuse(
                arg,
                "`decoy_demonstrations` repeats a demonstration, so the decoy would teach the \
                 procedure under review rather than a second one",
            );
        }
        if find("decoy_fragment").is_none() {
            refuse(
                arg,
                "`decoy_demonstrations` needs `decoy_fragment`: the decoy's text is what must \
                 stay out of the model input",
            );
        }
    }
    if let Some((items, arg)) = list("control_demonstrations") {
        let decoy_items = decoys.as_ref().map(|(d, _)| d.clone()).unwrap_or_default();
        if items
            .iter()
            .any(|c| demonstrations.contains(c) || decoy_items.contains(c))
        {
            refuse(
                arg,
                "`control_demonstrations` repeats a demonstration, which has something to teach; \
                 a control turn must not",
            );
        }
    }
    if let (Some((items, arg)), Some((controls, _))) = (
        list("rejected_demonstrations"),
        list("control_demonstrations"),
    ) {
        if items.iter().any(|r| controls.contains(r)) {
            refuse(
                arg,
                "`rejected_demonstrations` repeats a control turn, which has nothing to teach, so \
                 its rejection would prove nothing; a rejected demonstration must be on-topic",
            );
        }
    }
    if let Some((items, arg)) = list("paraphrases") {
        let prompt = |name: &str| match find(name) {
            Some((_, Typed::Str(text), _)) => Some(text.clone()),
            _ => None,
        };
        let action = [prompt("satisfied_prompt"), prompt("blocked_prompt")];
        if items
            .iter()
            .any(|p| action.iter().flatten().any(|a| a == p))
        {
            refuse(
                arg,
                "`paraphrases` repeats the action prompt (`satisfied_prompt` or \
                 `blocked_prompt`), so it would run the seed's own wording again; a paraphrase \
                 must word the request otherwise",
            );
        }
    }
    if let Some((_, Typed::Str(interleaved), arg)) = find("interleaved_prompt") {
        let calls_the_action = ["draft_prompt", "satisfied_prompt", "blocked_prompt"]
            .iter()
            .any(|name| matches!(find(name), Some((_, Typed::Str(p), _)) if p == interleaved));
        if calls_the_action {
            refuse(
                arg,
                "`interleaved_prompt` repeats a prompt that calls `action_tool` (`draft_prompt`, \
                 `satisfied_prompt` or `blocked_prompt`); the turn between the draft and the \
                 review must call another tool",
            );
        }
    }
    if let Some((_, _, arg)) = find("decoy_fragment") {
        if decoys.is_none() {
            refuse(
                arg,
                "`decoy_fragment` is read only by the decoy probe; give `decoy_demonstrations` too",
            );
        }
    }
    if let Some(arg) = same("procedure_fragment", "decoy_fragment") {
        refuse(
            arg,
            "`decoy_fragment` equals `procedure_fragment`, so the decoy could not be told from \
             the approved procedure",
        );
    }
    for prompt in ["satisfied_prompt", "blocked_prompt"] {
        if let Some(arg) = same(prompt, "multi_call_prompt") {
            refuse(
                arg,
                &format!(
                    "`multi_call_prompt` repeats `{prompt}`, which names one subject; the \
                     multi-call probe needs a request that makes several governed calls at once"
                ),
            );
        }
    }
    match (find("approval_prompt"), find("approval_answer")) {
        (Some((_, _, arg)), None) if !written("approval_answer") => refuse(
            arg,
            "`approval_prompt` needs `approval_answer`: the person's answer that approves the \
             paused request",
        ),
        (None, Some((_, _, arg))) if !written("approval_prompt") => refuse(
            arg,
            "`approval_answer` needs `approval_prompt`: the request the person's answer approves",
        ),
        _ => {}
    }
    for prompt in ["draft_prompt", "satisfied_prompt", "blocked_prompt"] {
        if let Some(arg) = same(prompt, "approval_prompt") {
            refuse(
                arg,
                &format!(
                    "`approval_prompt` repeats `{prompt}`, which the seed runs without a pause; \
                     the request a person must approve is another one"
                ),
            );
        }
    }
    let trials = find("trials").map(|(_, t, _)| t.clone());
    match (trials, find("require")) {
        (Some(Typed::Int(trials)), Some((_, Typed::Int(require), arg))) if *require > trials => {
            refuse(
                arg,
                &format!("`require = {require}` exceeds `trials = {trials}`: at most every trial can pass"),
            );
        }
        (None, Some((_, Typed::Int(require), arg))) if *require > 1 => refuse(
            arg,
            &format!("`require = {require}` exceeds the single default trial; also give `trials`"),
        ),
        _ => {}
    }
}

fn same_json(a: &Typed, b: &Typed) -> bool {
    match (a, b) {
        (Typed::Json(a), Typed::Json(b)) => a.json == b.json,
        (Typed::Str(a), Typed::Str(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_args;
    use quote::quote;

    fn run(kind: Kind, tokens: TokenStream) -> Result<Checked, Vec<String>> {
        let parsed = parse_args(tokens);
        assert!(parsed.errors.is_none(), "{:?}", parsed.errors);
        check(kind, &parsed.args, &parsed.failed)
            .map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    fn procedural() -> TokenStream {
        quote! {
            demonstrations = ["refund order 1", "refund order 2"],
            draft_prompt = "refund order 3", draft_state = { region: "EU" },
            review_prompt = "approve", satisfied_prompt = "refund 4",
            satisfied_state = { region: "US" }, blocked_prompt = "refund 5",
            blocked_state = { region: "EU" }, action_tool = "issue_refund",
            procedure_fragment = "verify the account region",
        }
    }

    #[test]
    fn a_complete_procedural_pack_leaves_omitted_arguments_to_the_runtime() {
        let checked = run(Kind::Procedural, procedural()).unwrap();
        assert_eq!(
            checked.get("action_tool"),
            Some(&Typed::Str("issue_refund".into()))
        );
        assert_eq!(checked.get("conversation"), None);
        assert_eq!(checked.get("restart_before_enforcement"), None);
        assert_eq!(checked.policy(), None, "no policy argument, no policy");
    }

    #[test]
    fn require_follows_trials_unless_given() {
        let mut tokens = procedural();
        tokens.extend(quote!(trials = 5));
        assert_eq!(
            run(Kind::Procedural, tokens.clone()).unwrap().policy(),
            Some((5, 5, None))
        );
        tokens.extend(quote!(, require = 3));
        assert_eq!(
            run(Kind::Procedural, tokens.clone()).unwrap().policy(),
            Some((5, 3, None))
        );
        tokens.extend(quote!(, require = 9));
        let errors = run(Kind::Procedural, tokens).unwrap_err();
        assert!(errors
            .iter()
            .any(|e| e.contains("duplicate argument `require`")));
    }

    #[test]
    fn equal_states_are_rejected_whatever_their_key_order() {
        let errors = run(
            Kind::Procedural,
            quote! {
                demonstrations = ["a"], draft_prompt = "d", draft_state = { x: 1 },
                review_prompt = "r", satisfied_prompt = "s", blocked_prompt = "b",
                satisfied_state = { a: 1, b: [1, 2] }, blocked_state = { "b": [1, 2], "a": 1 },
                action_tool = "t", procedure_fragment = "f",
            },
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("are the same JSON"));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let errors = run(
            Kind::Procedural,
            quote! {
                demonstrations = [], draft_state = {}, review_prompt = "",
                satisfied_prompt = 3, blocked_prompt = "b", satisfied_state = { a: 1 },
                blocked_state = "x", action_tool = "", procedure_fragment = "f",
                demonstration = ["a"], restart_before_enforcement = "yes",
            },
        )
        .unwrap_err();
        let expected = [
            "`demonstrations` cannot be empty",
            "`draft_state` cannot be empty",
            "`review_prompt` cannot be empty",
            "`satisfied_prompt` expects a string literal, found a number",
            "`blocked_state` expects a JSON object",
            "`action_tool` cannot be empty",
            "did you mean `demonstrations`?",
            "`restart_before_enforcement` expects `true` or `false`, found a string",
            "missing the required argument `draft_prompt`",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (error, fragment) in errors.iter().zip(expected) {
            assert!(error.contains(fragment), "{error} lacks {fragment}");
        }
    }

    #[test]
    fn approval_and_extension_rules() {
        let errors = run(
            Kind::ApprovalResume,
            quote!(pause_prompt = "p", answer = {}, interaction_tool = ""),
        )
        .unwrap_err();
        assert!(errors[0].contains("`answer` cannot be empty"));
        assert!(errors[1].contains("`interaction_tool` cannot be empty"));
        let errors = run(
            Kind::ExtensionTool,
            quote!(prompt = "p", tool_name = "", trials = 0),
        )
        .unwrap_err();
        assert!(errors[0].contains("`tool_name` cannot be empty"));
        assert!(errors[1].contains("`trials` cannot be zero"));
        let ok = run(
            Kind::ExtensionTool,
            quote!(prompt = "p", tool_name = "t", arguments = {}),
        )
        .unwrap();
        assert!(
            matches!(ok.get("arguments"), Some(Typed::Json(l)) if l.json == serde_json::json!({}))
        );
    }

    #[test]
    fn a_fixture_must_hold_an_object() {
        let errors = run(
            Kind::ApprovalResume,
            quote!(
                pause_prompt = "p",
                interaction_tool = "t",
                answer = file("tests/fixtures/list.json")
            ),
        )
        .unwrap_err();
        assert_eq!(
            errors,
            ["`answer` expects a JSON object; the fixture holds an array"]
        );
    }

    #[test]
    fn demonstrations_reject_non_strings_and_empty_items() {
        let errors = run(Kind::Procedural, quote!(demonstrations = ["a", 1, ""])).unwrap_err();
        assert!(errors[0].contains("this item is a number"));
        assert!(errors[1].contains("`demonstrations` has an empty item"));
    }
}
