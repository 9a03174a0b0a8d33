//! The help desk's tools: the trait, the catalog the model is shown and the
//! dispatcher runs, and the built-in tools.
//!
//! Every tool with a side effect applies it through the harness's ledger
//! under an idempotency key, and inside the ledger's effect writes the
//! business record to the outbox; a call the gate refused never gets here.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use symfonic_evals::contracts::resolve_path;
use symfonic_evals::{Applied, EffectCall, SideEffectLedger};

use crate::honest::Variant;
use crate::store::Store;
use crate::twins::Flaw;

/// What a tool may touch while it runs.
#[derive(Clone, Copy)]
pub struct ToolEnv<'a> {
    /// The side-effect ledger; every effect goes through it.
    pub ledger: &'a SideEffectLedger,
    /// The deployment's database (the outbox lives here).
    pub store: &'a Store,
    /// The turn's explicit state, when the request carried one.
    pub state: Option<&'a Value>,
    /// The conversation the turn belongs to.
    pub conversation: &'a str,
    /// The flaw switched on, if any (the reference has none).
    pub flaw: Option<Flaw>,
    /// The honest variant switched on, if any.
    pub variant: Option<Variant>,
    /// How many effects this process has keyed: only the
    /// `KeyFromProcessCounter` twin reads it.
    pub process_effects: &'a std::sync::atomic::AtomicU64,
    /// The trial's clock, as the context gives it.
    pub clock: &'a symfonic_evals::Clock,
}

/// A tool error with a machine-readable code and, when the tool knows one,
/// the remedy. Consolidation learns preflight procedures from remedies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    /// A stable error code, such as `region_unverified`.
    pub code: String,
    /// A human-readable account.
    pub message: String,
    /// What would have prevented the failure, in words.
    pub remedy: Option<String>,
}

impl ToolFailure {
    /// A failure with no known remedy.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
            remedy: None,
        }
    }
}

/// A tool the model can call.
pub trait Tool: Send {
    /// The registered name.
    fn name(&self) -> &str;
    /// Runs the tool.
    ///
    /// # Errors
    ///
    /// A [`ToolFailure`] the model sees in its transcript.
    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure>;
}

/// The tools the model is told about (declarations) and the ones the
/// dispatcher can actually run (bindings). They agree in a healthy
/// deployment; a tool declared without a binding fails when called.
#[derive(Default)]
pub struct ToolCatalog {
    declared: Vec<String>,
    bound: BTreeMap<String, Box<dyn Tool>>,
}

impl ToolCatalog {
    /// Declares a tool and binds its implementation.
    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.declare(tool.name());
        self.bound.insert(tool.name().to_owned(), tool);
    }

    /// Declares a name without binding anything to it.
    pub fn declare(&mut self, name: &str) {
        if !self.declared.iter().any(|known| known == name) {
            self.declared.push(name.to_owned());
        }
    }

    /// Declared names, in registration order.
    pub fn declared(&self) -> &[String] {
        &self.declared
    }

    /// Dispatches a call.
    ///
    /// # Errors
    ///
    /// The tool's own failure, or `tool_unbound` when nothing is bound.
    pub fn run(
        &self,
        name: &str,
        arguments: &Value,
        env: ToolEnv<'_>,
    ) -> Result<Value, ToolFailure> {
        match self.bound.get(name) {
            Some(tool) => tool.run(arguments, env),
            None => Err(ToolFailure::new(
                "tool_unbound",
                format!("no implementation is bound to {name}"),
            )),
        }
    }
}

fn positive_integer(arguments: &Value, field: &str) -> Result<u64, ToolFailure> {
    arguments
        .get(field)
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            ToolFailure::new(
                "bad_arguments",
                format!("`{field}` must be a positive integer"),
            )
        })
}

/// The account region in the turn state, read the way state predicates read
/// it (the library's resolver: UPPER then lower case); `None` when it is
/// missing or not text.
pub fn account_region(state: Option<&Value>) -> Option<&str> {
    resolve_path(state?, "region")?.as_str()
}

fn store_failure(_: rusqlite::Error) -> ToolFailure {
    ToolFailure::new("outbox_unavailable", "the outbox could not be written")
}

/// The idempotency key an effect on `subject` goes under: the subject
/// itself, so a call retried after a crash, by another process, names the
/// same effect and the ledger refuses it as a duplicate.
fn ledger_key(env: ToolEnv<'_>, subject: &str) -> Result<String, ToolFailure> {
    Ok(match env.flaw {
        Some(Flaw::LedgerKeyPerConversation) => format!("{subject}@{}", env.conversation),
        // One effect per subject per hour of the clock: a retry an hour
        // after the crash keys afresh.
        Some(Flaw::KeyFromClockHour) => {
            let hour = env
                .clock
                .now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs() / 3600);
            format!("{subject}@h{hour}")
        }
        // The n-th effect of this process: a retry after a crash, in a new
        // process, lands on the same n, but so does the next request.
        Some(Flaw::KeyFromProcessCounter) => {
            let n = env
                .process_effects
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            format!("effect-{n}")
        }
        // A call id drawn from a durable sequence: unique per attempt.
        Some(Flaw::KeyPerAttempt) => {
            let n = env.store.next("effect-attempt").map_err(store_failure)?;
            format!("{subject}#{n}")
        }
        // A fresh key remembered for the subject, but only once the
        // effect is done: a crash in between forgets it.
        Some(Flaw::KeyRecordedAfterEffect) => match env.store.recorded_key(subject) {
            Ok(Some(key)) => key,
            Ok(None) => {
                let n = env.store.next("effect-key").map_err(store_failure)?;
                format!("{subject}#k{n}")
            }
            Err(error) => return Err(store_failure(error)),
        },
        _ => subject.to_owned(),
    })
}

/// Applies one business action of `tool` on `subject` through the ledger
/// (naming the tool, so a pack can tell the gated action's effects from
/// the desk's other ones) and the outbox.
pub fn apply_effect(
    env: ToolEnv<'_>,
    tool: &str,
    subject: &str,
    action: &str,
    payload: Value,
) -> Result<Value, ToolFailure> {
    let key = ledger_key(env, subject)?;
    // The ledger and the outbox deduplicate under the same key, so every
    // effect the ledger applies is exactly one outbox row.
    let outbox_key = if env.flaw == Some(Flaw::LedgerKeyPerConversation) {
        subject
    } else {
        key.as_str()
    };
    let write = || {
        if env.variant == Some(Variant::OutboxAsJsonLines) {
            env.store
                .append_outbox_line(outbox_key, action, &payload)
                .map_err(|_| {
                    ToolFailure::new("outbox_unavailable", "the outbox could not be written")
                })
        } else {
            env.store
                .write_outbox(outbox_key, action, &payload)
                .map_err(store_failure)
        }
    };
    let mut written = Ok(());
    // The effect's arguments go with it, so the harness can tell a repeat
    // of this effect under another key from a different effect.
    let call = EffectCall::of(tool).with_arguments(&payload);
    let applied = env.ledger.apply_call(call, &key, || written = write());
    if env.variant == Some(Variant::SameKeyRetries) {
        // The acknowledgement was lost in transit, so the delivery layer
        // sends the effect again under its key; the ledger refuses it.
        env.ledger.apply_call(call, &key, || written = write());
    }
    // A duplicate is an effect the world already has, perhaps from a run
    // that died before writing its row: the row is written now (a no-op
    // when it exists), so the outbox never lags the world.
    if applied == Applied::Duplicate && env.flaw != Some(Flaw::OutboxOnlyWhenApplied) {
        written = write();
    }
    written?;
    if env.flaw == Some(Flaw::KeyRecordedAfterEffect) {
        env.store.record_key(subject, &key).map_err(store_failure)?;
    }
    let mut result = payload;
    result["duplicate"] = json!(applied == Applied::Duplicate);
    Ok(result)
}

/// Refunds an order. Refunds are routed by the account's region, so the
/// region must be known (verified into the turn state) before one can run.
pub struct IssueRefund;

impl Tool for IssueRefund {
    fn name(&self) -> &str {
        "issue_refund"
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let order = positive_integer(arguments, "order")?;
        if account_region(env.state).is_none() {
            return Err(ToolFailure {
                code: "region_unverified".into(),
                message: "the account region is not verified".into(),
                remedy: Some("verify the account region".into()),
            });
        }
        apply_effect(
            env,
            self.name(),
            &format!("refund:order:{order}"),
            "refund",
            json!({ "refunded_order": order }),
        )
    }
}

/// The express refund: a second tool reaching the same refund effect,
/// under the same key, for customers in a hurry (the gated-alias-tool
/// variant and the alias-tool twin offer it). Whether the gate judges it
/// under the refund's procedures is the deployment's choice.
pub struct ExpressRefund;

/// The express refund's name.
pub const EXPRESS_REFUND: &str = "express_refund";

impl Tool for ExpressRefund {
    fn name(&self) -> &str {
        EXPRESS_REFUND
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let order = positive_integer(arguments, "order")?;
        apply_effect(
            env,
            self.name(),
            &format!("refund:order:{order}"),
            "refund",
            json!({ "refunded_order": order }),
        )
    }
}

/// Reads the account on file for an order; no side effect.
pub struct LookupAccount;

impl Tool for LookupAccount {
    fn name(&self) -> &str {
        "lookup_account"
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let order = positive_integer(arguments, "order")?;
        match account_region(env.state) {
            Some(_) => Ok(json!({ "order": order, "region_verified": true })),
            None => Err(ToolFailure::new(
                "account_unknown",
                "no account is on file for this order",
            )),
        }
    }
}

/// Cancels a customer's subscription; the model asks a person first.
pub struct CancelSubscription;

impl Tool for CancelSubscription {
    fn name(&self) -> &str {
        "cancel_subscription"
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let customer = positive_integer(arguments, "customer")?;
        let subject = format!("cancel:customer:{customer}");
        let cancelled = apply_effect(
            env,
            self.name(),
            &subject,
            "cancel_subscription",
            json!({ "cancelled_customer": customer }),
        )?;
        if env.flaw == Some(Flaw::NoticeSharesCancellationKey) {
            // The customer is told under the request's key, the one the
            // cancellation just took, as this tool's effect with no
            // arguments of its own (the message is fixed): the ledger
            // refuses it as applied before, and the customer never hears.
            let key = ledger_key(env, &subject)?;
            let mut written = Ok(());
            env.ledger.apply_for(self.name(), &key, || {
                let notice = json!({ "customer": customer, "sent": "cancellation_notice" });
                written = env.store.write_outbox(&key, "cancellation_notice", &notice);
            });
            written.map_err(store_failure)?;
        }
        Ok(cancelled)
    }
}

/// Reads a customer's subscription; no side effect. Registered only in the
/// `LooksUpBeforeActing` variant, whose model checks the subscription
/// before asking to cancel it.
pub struct LookupSubscription;

impl Tool for LookupSubscription {
    fn name(&self) -> &str {
        "lookup_subscription"
    }

    fn run(&self, arguments: &Value, _env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let customer = positive_integer(arguments, "customer")?;
        Ok(json!({ "customer": customer, "subscription": "active", "plan": "monthly" }))
    }
}

/// A message to a customer about their subscription, applied as an effect
/// of its own: the `NotifyOnDenial` variant's word that the cancellation
/// was declined, and the `InvoiceBeforeCancelling` variant's final invoice.
pub struct CustomerNotice {
    /// The registered name.
    pub name: &'static str,
    /// The business action written to the outbox.
    pub action: &'static str,
    /// Whether each conversation sends its own (a reply to this request)
    /// rather than one per customer (a document about the account).
    pub per_conversation: bool,
}

impl CustomerNotice {
    /// `notify_requester`: tells the customer a person kept their
    /// subscription; one per conversation.
    pub const DENIAL: Self = Self {
        name: "notify_requester",
        action: "denial_notice",
        per_conversation: true,
    };
    /// `issue_final_invoice`: bills the running period before the
    /// cancellation; one per customer, like the cancellation itself.
    pub const FINAL_INVOICE: Self = Self {
        name: "issue_final_invoice",
        action: "final_invoice",
        per_conversation: false,
    };
}

impl Tool for CustomerNotice {
    fn name(&self) -> &str {
        self.name
    }

    fn run(&self, arguments: &Value, env: ToolEnv<'_>) -> Result<Value, ToolFailure> {
        let customer = positive_integer(arguments, "customer")?;
        let subject = if env.flaw == Some(Flaw::InvoiceSharesCancellationKey) {
            // One key per customer's cancellation request, whatever the
            // effect: the invoice takes it, and the cancellation is then
            // refused as applied before.
            format!("cancel:customer:{customer}")
        } else if self.per_conversation {
            format!("{}:customer:{customer}@{}", self.action, env.conversation)
        } else {
            format!("{}:customer:{customer}", self.action)
        };
        apply_effect(
            env,
            self.name,
            &subject,
            self.action,
            json!({ "customer": customer, "sent": self.action }),
        )
    }
}
