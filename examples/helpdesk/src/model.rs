//! The model behind the help desk: a trait any model client implements, the
//! text it is shown, and the deterministic scripted model embedded by default.
//!
//! The deployment talks to its model only through text: it renders a
//! [`ModelInput`] (system line, recall block of approved procedures, the tool
//! list, the user's request and everything observed so far) and asks for the
//! next step. The scripted model reads that same text back, so what it does
//! depends on what it was shown; an LLM client implementing [`Model`] would
//! be handed exactly the same string.

use serde_json::{json, Value};

use crate::honest::Variant;

/// What the model decided to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelStep {
    /// Call a tool with JSON arguments.
    Call {
        /// The tool's name, as listed in the input.
        tool: String,
        /// The arguments.
        arguments: Value,
    },
    /// Several calls in one message, as a model asked for one thing per
    /// subject of a request sends them: `(tool, arguments)` each, run in
    /// order, each through the gate on its own.
    Several(Vec<(String, Value)>),
    /// Finish the turn with this answer.
    Answer(String),
}

/// A model that decides one step at a time from the text it is shown.
pub trait Model: Send {
    /// The next step, given the full rendered input.
    fn next_step(&mut self, shown: &str) -> ModelStep;
}

/// The text the model is shown, assembled by the deployment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelInput {
    /// One line per recalled procedure (approved ones only).
    pub recall: Vec<String>,
    /// The tool names the model may call.
    pub tools: Vec<String>,
    /// The user's request.
    pub user: String,
    /// Observations so far, one line each (see [`observation`]).
    pub transcript: Vec<String>,
}

const SYSTEM: &str = "system: You are the help desk agent of a small outdoor shop. \
Use the tools listed; follow every recalled procedure before the tool it names.";

impl ModelInput {
    /// The exact string the model reads.
    pub fn render(&self) -> String {
        let mut text = String::from(SYSTEM);
        text.push_str("\nrecall:");
        if self.recall.is_empty() {
            text.push_str(" (none)");
        }
        for line in &self.recall {
            text.push_str("\n- ");
            text.push_str(line);
        }
        text.push_str("\ntools: ");
        text.push_str(&self.tools.join(", "));
        text.push_str("\nuser: ");
        text.push_str(&self.user);
        for line in &self.transcript {
            text.push('\n');
            text.push_str(line);
        }
        text
    }
}

/// The transcript line formats, written by the deployment and read by the
/// scripted model. Kept in one place so writer and reader cannot drift.
pub mod observation {
    use serde_json::Value;

    /// A call that returned `result`.
    pub fn succeeded(id: &str, tool: &str, arguments: &Value, result: &Value) -> String {
        format!("call {id} {tool} {arguments} -> ok {result}")
    }

    /// A call that ran and failed with a coded error.
    pub fn failed(id: &str, tool: &str, arguments: &Value, code: &str, message: &str) -> String {
        format!("call {id} {tool} {arguments} -> failed {code}: {message}")
    }

    /// A call a governance stage refused.
    pub fn refused(id: &str, tool: &str, arguments: &Value, stage: &str) -> String {
        format!("call {id} {tool} {arguments} -> refused by {stage}")
    }

    /// A call that paused the turn for a person.
    pub fn waiting(id: &str, tool: &str, arguments: &Value) -> String {
        format!("call {id} {tool} {arguments} -> waiting for a person")
    }

    /// What the person answered to the pausing call `id`.
    pub fn answered(id: &str, answer: &Value) -> String {
        format!("person answered {id}: {answer}")
    }
}

/// The embedded default: a deterministic model that understands refunds,
/// subscription cancellations and shipment tracking, honours recalled
/// preflight procedures by verifying first, and asks a person before an
/// irreversible cancellation.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptedModel {
    confirms_after_acting: bool,
    variant: Option<Variant>,
}

impl ScriptedModel {
    /// A script that cancels first and asks the person to confirm after:
    /// the `GatedActionBeforeAnswer` twin's model. Every answer it gives
    /// reads the same as the default's.
    pub fn confirming_after_acting() -> Self {
        Self {
            confirms_after_acting: true,
            variant: None,
        }
    }

    /// The script as the honest variant `variant` runs it (`None`: as the
    /// reference does).
    #[must_use]
    pub fn variant(mut self, variant: Option<Variant>) -> Self {
        self.variant = variant;
        self
    }
}

enum Intent {
    Refund(u64),
    /// "refund orders 6 and 7": one request, several refunds.
    Refunds(Vec<u64>),
    Cancel(u64),
    Track(u64),
    Unknown,
}

/// How one earlier call in the transcript ended.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Ok(Value),
    Failed(String),
    Refused(String),
    Waiting,
}

struct Reading<'a> {
    recall: Vec<&'a str>,
    tools: Vec<&'a str>,
    user: &'a str,
    calls: Vec<(&'a str, Seen)>,
    answers: Vec<Value>,
}

fn read(shown: &str) -> Reading<'_> {
    let mut reading = Reading {
        recall: Vec::new(),
        tools: Vec::new(),
        user: "",
        calls: Vec::new(),
        answers: Vec::new(),
    };
    for line in shown.lines() {
        if let Some(rest) = line.strip_prefix("- ") {
            reading.recall.push(rest);
        } else if let Some(rest) = line.strip_prefix("tools: ") {
            reading.tools = rest.split(", ").filter(|t| !t.is_empty()).collect();
        } else if let Some(rest) = line.strip_prefix("user: ") {
            reading.user = rest;
        } else if let Some(rest) = line.strip_prefix("call ") {
            if let Some(call) = read_call(rest) {
                reading.calls.push(call);
            }
        } else if let Some(rest) = line.strip_prefix("person answered ") {
            if let Some((_, answer)) = rest.split_once(": ") {
                reading
                    .answers
                    .push(serde_json::from_str(answer).unwrap_or(Value::Null));
            }
        }
    }
    reading
}

fn read_call(rest: &str) -> Option<(&str, Seen)> {
    let mut words = rest.splitn(3, ' ');
    let _id = words.next()?;
    let tool = words.next()?;
    let (_, outcome) = words.next()?.rsplit_once(" -> ")?;
    let seen = if let Some(result) = outcome.strip_prefix("ok ") {
        Seen::Ok(serde_json::from_str(result).unwrap_or(Value::Null))
    } else if let Some(error) = outcome.strip_prefix("failed ") {
        Seen::Failed(error.to_owned())
    } else if let Some(stage) = outcome.strip_prefix("refused by ") {
        Seen::Refused(stage.to_owned())
    } else {
        Seen::Waiting
    };
    Some((tool, seen))
}

fn number_after(text: &str, word: &str) -> Option<u64> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    words
        .windows(2)
        .find(|pair| pair[0] == word)
        .and_then(|pair| pair[1].parse().ok())
}

/// The numbers after `word` ("orders 6, 7 and 8"), when there are
/// several.
fn numbers_after(text: &str, word: &str) -> Vec<u64> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    let Some(start) = words.iter().position(|w| w == word) else {
        return Vec::new();
    };
    words[start + 1..]
        .iter()
        .filter(|w| *w != "and")
        .map_while(|w| w.parse().ok())
        .collect()
}

fn intent(user: &str) -> Intent {
    let lower = user.to_lowercase();
    let orders = numbers_after(user, "orders");
    if lower.contains("refund") && orders.len() > 1 {
        return Intent::Refunds(orders);
    }
    if lower.contains("refund") {
        if let Some(order) = number_after(user, "order") {
            return Intent::Refund(order);
        }
    }
    if lower.contains("cancel") && lower.contains("subscription") {
        if let Some(customer) = number_after(user, "customer") {
            return Intent::Cancel(customer);
        }
    }
    if ["where", "track", "parcel", "shipment"]
        .iter()
        .any(|w| lower.contains(w))
    {
        if let Some(order) = number_after(user, "order") {
            return Intent::Track(order);
        }
    }
    Intent::Unknown
}

impl Reading<'_> {
    fn last(&self, tool: &str) -> Option<&Seen> {
        self.calls
            .iter()
            .rev()
            .find(|(t, _)| *t == tool)
            .map(|(_, seen)| seen)
    }

    fn count(&self, tool: &str) -> usize {
        self.calls.iter().filter(|(t, _)| *t == tool).count()
    }

    fn offers(&self, tool: &str) -> bool {
        self.tools.contains(&tool)
    }

    fn preflight_before(&self, tool: &str) -> bool {
        let prefix = format!("preflight before {tool}:");
        self.recall.iter().any(|line| line.starts_with(&prefix))
    }
}

fn call(tool: &str, arguments: Value) -> ModelStep {
    ModelStep::Call {
        tool: tool.to_owned(),
        arguments,
    }
}

impl ScriptedModel {
    fn refund(reading: &Reading<'_>, order: u64) -> ModelStep {
        // A customer in a hurry gets the express refund, where the desk
        // offers one.
        let express = reading.user.to_lowercase().contains("express")
            && reading.offers(crate::tools::EXPRESS_REFUND);
        let tool = if express {
            crate::tools::EXPRESS_REFUND
        } else {
            "issue_refund"
        };
        // "in full": the whole order, which the desk holds for a manager.
        let arguments = if reading.user.to_lowercase().contains("in full") {
            json!({ "order": order, "full": true })
        } else {
            json!({ "order": order })
        };
        let verified = reading.last("lookup_account");
        if reading.preflight_before("issue_refund")
            && reading.offers("lookup_account")
            && verified.is_none()
        {
            return call("lookup_account", json!({ "order": order }));
        }
        match reading.last(tool) {
            None if reading.offers(tool) => call(tool, arguments),
            None => ModelStep::Answer("I cannot issue refunds from this desk.".into()),
            Some(Seen::Ok(_)) => ModelStep::Answer(format!("Refund for order {order} issued.")),
            // The tool's remedy says to verify the region: do that, then retry once.
            Some(Seen::Failed(error)) if error.starts_with("region_unverified") => match verified {
                None if reading.offers("lookup_account") => {
                    call("lookup_account", json!({ "order": order }))
                }
                Some(Seen::Ok(_)) if reading.count(tool) < 2 => call(tool, arguments),
                _ => ModelStep::Answer(format!(
                    "I could not refund order {order}: the account region could not be verified."
                )),
            },
            Some(Seen::Failed(error)) => {
                ModelStep::Answer(format!("I could not refund order {order}: {error}."))
            }
            Some(Seen::Refused(stage)) => ModelStep::Answer(format!(
                "The refund for order {order} is not allowed here ({stage})."
            )),
            Some(Seen::Waiting) => ModelStep::Answer("Still waiting on a person.".into()),
        }
    }

    /// Several refunds asked for at once: each call made for every order
    /// in one message (the lookups a recalled preflight asks for first),
    /// then one answer for them all.
    fn refunds(reading: &Reading<'_>, orders: &[u64]) -> ModelStep {
        let each = |tool: &str| {
            ModelStep::Several(
                orders
                    .iter()
                    .map(|order| (tool.to_owned(), json!({ "order": order })))
                    .collect(),
            )
        };
        if reading.preflight_before("issue_refund")
            && reading.offers("lookup_account")
            && reading.last("lookup_account").is_none()
        {
            return each("lookup_account");
        }
        if reading.last("issue_refund").is_none() {
            if !reading.offers("issue_refund") {
                return ModelStep::Answer("I cannot issue refunds from this desk.".into());
            }
            return each("issue_refund");
        }
        let done = reading
            .calls
            .iter()
            .filter(|(tool, seen)| *tool == "issue_refund" && matches!(seen, Seen::Ok(_)))
            .count();
        ModelStep::Answer(format!(
            "{done} of {} refunds issued; the others are not allowed here or failed.",
            orders.len()
        ))
    }

    fn cancel(self, reading: &Reading<'_>, customer: u64) -> ModelStep {
        if self.variant == Some(Variant::LooksUpBeforeActing)
            && reading.offers("lookup_subscription")
            && reading.last("lookup_subscription").is_none()
        {
            // Checks the subscription is there before asking to cancel it.
            return call("lookup_subscription", json!({ "customer": customer }));
        }
        if self.variant.is_some_and(Variant::holds_the_call) {
            // The desk holds the call itself for a person: the model just
            // calls, and reads back whether it ran.
            return match reading.last("cancel_subscription") {
                None => call("cancel_subscription", json!({ "customer": customer })),
                Some(Seen::Ok(_)) => ModelStep::Answer(format!(
                    "Cancelled the subscription of customer {customer} as confirmed."
                )),
                Some(Seen::Failed(error)) if error.starts_with("declined") => {
                    ModelStep::Answer(format!("Kept the subscription of customer {customer}."))
                }
                Some(Seen::Waiting) => ModelStep::Answer("Still waiting on a person.".into()),
                Some(_) => ModelStep::Answer(format!(
                    "The subscription of customer {customer} could not be cancelled."
                )),
            };
        }
        if reading.last("ask_user").is_none() && reading.offers("ask_user") {
            if self.confirms_after_acting && reading.last("cancel_subscription").is_none() {
                return call("cancel_subscription", json!({ "customer": customer }));
            }
            return call(
                "ask_user",
                json!({
                    "question": format!("Cancel the subscription of customer {customer}? It cannot be undone."),
                    // The person may say when it takes effect.
                    "schema": { "approved": "boolean", "effective": "string?" },
                }),
            );
        }
        let approved = reading
            .answers
            .last()
            .and_then(|answer| answer.get("approved"))
            .and_then(Value::as_bool);
        match (approved, reading.last("cancel_subscription")) {
            (None, _) => ModelStep::Answer("I need a person to confirm before cancelling.".into()),
            (Some(false), _)
                if reading.offers("notify_requester")
                    && reading.last("notify_requester").is_none() =>
            {
                call("notify_requester", json!({ "customer": customer }))
            }
            (Some(false), _) => {
                ModelStep::Answer(format!("Kept the subscription of customer {customer}."))
            }
            (Some(true), None)
                if reading.offers("issue_final_invoice")
                    && reading.last("issue_final_invoice").is_none() =>
            {
                call("issue_final_invoice", json!({ "customer": customer }))
            }
            (Some(true), None) => {
                let mut arguments = json!({ "customer": customer });
                // An amended approval says when; the cancellation follows it.
                if let Some(when) = reading
                    .answers
                    .last()
                    .and_then(|answer| answer.get("effective"))
                {
                    arguments["effective"] = when.clone();
                }
                call("cancel_subscription", arguments)
            }
            (Some(true), Some(Seen::Ok(_))) => ModelStep::Answer(format!(
                "Cancelled the subscription of customer {customer} as confirmed."
            )),
            (Some(true), Some(_)) => ModelStep::Answer(format!(
                "Confirmed, but the subscription of customer {customer} could not be cancelled."
            )),
        }
    }

    fn track(self, reading: &Reading<'_>, order: u64) -> ModelStep {
        match reading.last("track_shipment") {
            // The tool's defaulted argument, spelled out as some models do.
            None if reading.offers("track_shipment")
                && self.variant == Some(Variant::DefaultedToolArgument) =>
            {
                call(
                    "track_shipment",
                    json!({ "order": order, "include_eta": true, "detail": "summary" }),
                )
            }
            None if reading.offers("track_shipment") => call(
                "track_shipment",
                json!({ "order": order, "include_eta": true }),
            ),
            None => ModelStep::Answer("I have no way to track parcels.".into()),
            Some(Seen::Ok(result)) => {
                let status = result
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let carrier = result
                    .get("carrier")
                    .and_then(Value::as_str)
                    .unwrap_or("the carrier");
                let eta = match result.get("eta_days").and_then(Value::as_u64) {
                    Some(days) => format!(", expected in {days} days"),
                    None => String::new(),
                };
                ModelStep::Answer(format!("Order {order} is {status} with {carrier}{eta}."))
            }
            Some(_) => ModelStep::Answer(format!("I could not track order {order} right now.")),
        }
    }
}

impl Model for ScriptedModel {
    fn next_step(&mut self, shown: &str) -> ModelStep {
        let reading = read(shown);
        match intent(reading.user) {
            Intent::Refund(order) => Self::refund(&reading, order),
            Intent::Refunds(orders) => Self::refunds(&reading, &orders),
            Intent::Cancel(customer) => self.cancel(&reading, customer),
            Intent::Track(order) => self.track(&reading, order),
            Intent::Unknown => ModelStep::Answer(
                "I can help with refunds, subscription cancellations and parcel tracking.".into(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(recall: &[&str], transcript: &[String]) -> String {
        ModelInput {
            recall: recall.iter().map(|s| (*s).to_owned()).collect(),
            tools: [
                "issue_refund",
                "lookup_account",
                "ask_user",
                "cancel_subscription",
            ]
            .map(String::from)
            .to_vec(),
            user: "please refund order 4".into(),
            transcript: transcript.to_vec(),
        }
        .render()
    }

    #[test]
    fn refunds_directly_without_a_recalled_preflight() {
        let step = ScriptedModel::default().next_step(&shown(&[], &[]));
        assert_eq!(step, call("issue_refund", json!({"order": 4})));
    }

    #[test]
    fn a_recalled_preflight_makes_it_verify_first() {
        let recall = ["preflight before issue_refund: verify the account region"];
        let step = ScriptedModel::default().next_step(&shown(&recall, &[]));
        assert_eq!(step, call("lookup_account", json!({"order": 4})));
        let looked =
            observation::succeeded("c1", "lookup_account", &json!({"order": 4}), &json!({}));
        let step = ScriptedModel::default().next_step(&shown(&recall, &[looked]));
        assert_eq!(step, call("issue_refund", json!({"order": 4})));
    }

    #[test]
    fn an_unverified_region_is_recovered_from_by_verifying() {
        let failed = observation::failed(
            "c1",
            "issue_refund",
            &json!({"order": 4}),
            "region_unverified",
            "the account region is not verified",
        );
        let step = ScriptedModel::default().next_step(&shown(&[], std::slice::from_ref(&failed)));
        assert_eq!(step, call("lookup_account", json!({"order": 4})));
        let unknown = observation::failed(
            "c2",
            "lookup_account",
            &json!({"order": 4}),
            "account_unknown",
            "none",
        );
        let step = ScriptedModel::default().next_step(&shown(&[], &[failed, unknown]));
        assert!(matches!(step, ModelStep::Answer(_)));
    }

    #[test]
    fn several_orders_are_refunded_in_one_message() {
        let mut input = ModelInput {
            tools: ["issue_refund", "lookup_account"]
                .map(String::from)
                .to_vec(),
            user: "refund orders 6 and 7".into(),
            ..ModelInput::default()
        };
        let both = |tool: &str| {
            ModelStep::Several(vec![
                (tool.to_owned(), json!({"order": 6})),
                (tool.to_owned(), json!({"order": 7})),
            ])
        };
        let step = ScriptedModel::default().next_step(&input.render());
        assert_eq!(step, both("issue_refund"));
        input.recall = vec!["preflight before issue_refund: verify the account region".into()];
        let step = ScriptedModel::default().next_step(&input.render());
        assert_eq!(step, both("lookup_account"));
    }

    #[test]
    fn reads_a_refusal_back_out_of_the_transcript() {
        let refused = observation::refused("c1", "issue_refund", &json!({"order": 4}), "gate");
        let ModelStep::Answer(text) = ScriptedModel::default().next_step(&shown(&[], &[refused]))
        else {
            panic!("expected an answer");
        };
        assert!(text.contains("not allowed"));
    }
}
