//! One step of a scenario: what it sends, as whom, in which conversation,
//! what it must show, and how the deployment is interrupted around it.

use serde_json::Value;

use crate::assertion::Assertion;
use crate::evidence::{Role, TurnError};

/// Which pause token a resume step presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// The latest token retained in the step's own conversation.
    Own,
    /// The genuine token retained in another conversation, presented in
    /// this one: a token must redeem only the conversation that paused.
    Conversation(String),
    /// A forgery the harness derives from this conversation's genuine token
    /// in the given way. Whatever the way, the forgery means something else:
    /// it differs from the genuine token as text and, when the token reads as
    /// hex, base64 or base64url (dot-separated segments included, as in a
    /// JWT), as the bytes it decodes to.
    Forged(Forgery),
    /// The guess a holder of another conversation's genuine token makes at
    /// the next one (its last number moved on by one; a forgery of it when
    /// it holds no number), presented in this conversation.
    Guessed(String),
    /// The genuine token of the pause the step with this label ended in,
    /// presented in this step's conversation: a conversation may hold
    /// several pending pauses (the `concurrent-pauses` trait), and the
    /// latest one's token is not the only one a person answers.
    Step(String),
}

/// How a forged token (or question id) is derived from the genuine one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forgery {
    /// A different value of the same shape: for an encoded token one decoded
    /// byte flipped and the token encoded again (in a JWT, a byte of the
    /// signature); for a plain token its last letter or digit moved to the
    /// next one of its class.
    Value,
    /// One letter in the other case, where case carries meaning (never in a
    /// token that reads as hex, whose case is not part of its value; there
    /// it falls back to [`Forgery::Value`]).
    LetterCase,
    /// The genuine token cut short (by as few characters as it takes to
    /// change what it decodes to): a token compared by prefix accepts it.
    Truncated,
    /// The genuine token with a character appended: a token compared only
    /// up to the genuine one's length accepts it.
    Extended,
}

impl Forgery {
    /// Every way, in the order the forged-token probe presents them.
    pub const ALL: [Forgery; 4] = [
        Forgery::Value,
        Forgery::LetterCase,
        Forgery::Truncated,
        Forgery::Extended,
    ];

    /// How a report names a token forged this way.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Value => "a forged token (the genuine one's shape, another value)",
            Self::LetterCase => "the genuine token with one letter in the other case",
            Self::Truncated => "the genuine token cut short",
            Self::Extended => "the genuine token with a character appended",
        }
    }
}

/// Which question id a resume step passes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionSource {
    /// The id the pause published with the token (if any).
    Genuine,
    /// A different id of the same shape: a redemption that addresses
    /// questions must refuse it.
    Forged,
}

/// What a step sends through the deployment.
#[derive(Debug, Clone, PartialEq)]
pub enum StepInput {
    /// A prompt turn.
    Prompt(String),
    /// Redeem a retained pause token with `answer`.
    Resume {
        /// What the person answered.
        answer: Value,
        /// Which token to present.
        token: TokenSource,
        /// Which question id to pass back.
        question: QuestionSource,
    },
    /// An operator's decision through the structured review door.
    Review(crate::evidence::ReviewAction),
    /// Reset the conversation through the deployment's `reset` operation.
    Reset,
}

/// The errors a step accepts, each matching a [`TurnError`]'s kind or its
/// code. Empty accepts any error: a forged token must be refused, and how a
/// deployment names the refusal is its own business.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorMatch {
    /// Kinds or codes, any of which satisfies the step.
    pub any_of: Vec<String>,
}

impl ErrorMatch {
    /// Any error at all.
    pub fn any() -> Self {
        Self::default()
    }

    /// An error whose kind or code is one of `names`.
    pub fn one_of(names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            any_of: names.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether `error` satisfies this match.
    pub fn matches(&self, error: &TurnError) -> bool {
        self.any_of.is_empty()
            || self
                .any_of
                .iter()
                .any(|name| *name == error.kind || error.code.as_deref() == Some(name.as_str()))
    }

    /// The expectation as a report line (the names are the pack's own).
    pub fn describe(&self) -> String {
        match self.any_of.as_slice() {
            [] => "an error (any kind)".to_owned(),
            [one] => format!("error {one}"),
            many => format!("an error of kind or code {}", many.join(" or ")),
        }
    }
}

/// How the turn must end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Expect {
    /// With a turn record (completed or paused).
    #[default]
    Record,
    /// With an error matching this.
    Error(ErrorMatch),
    /// Either way: a record, judged by every assertion, or any error,
    /// judged by the assertions that need no record (the ledger's). A
    /// refusal a deployment may give as an answer or as an error, such
    /// as an approval from someone not entitled to give it.
    RecordOrAnyError,
}

/// What happens to the deployment before the step runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Restart {
    /// Nothing: the step runs on the deployment as it is.
    #[default]
    No,
    /// An orderly restart: the deployment is dropped (a child is shut down)
    /// and built again from the same context.
    Before,
    /// A crash: a child process is killed without warning, then the
    /// deployment is built again. An in-thread deployment cannot be killed;
    /// it is dropped as for [`Restart::Before`], and the step says so.
    CrashBefore,
    /// A restart as an outage makes one: a child process is killed without
    /// warning (nothing it keeps for an orderly exit survives), then the
    /// deployment is built again; an in-thread deployment is dropped. What
    /// every probe's restart is: an orderly shutdown hides a deployment that
    /// writes its state only on the way out.
    KillBefore,
}

impl Restart {
    /// Whether the deployment is rebuilt before the step.
    pub fn rebuilds(self) -> bool {
        self != Self::No
    }
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// A readable name for reports ("draft probe", "resume", ...), never the prompt.
    pub label: String,
    /// What the step sends.
    pub input: StepInput,
    /// Who speaks (prompt steps).
    pub role: Role,
    /// The conversation it belongs to.
    pub conversation: String,
    /// Explicit turn state (a JSON object), if the step declares one.
    pub state: Option<Value>,
    /// A reviewer's verdict the prompt carries (a demonstration marked
    /// rejected), if any.
    pub feedback: Option<crate::evidence::Feedback>,
    /// What the evidence must show.
    pub assertions: Vec<Assertion>,
    /// How the turn must end.
    pub expect: Expect,
    /// What happens to the deployment before the step.
    pub restart: Restart,
    /// Kill the deployment (a child) right after the harness grants the
    /// k-th ledger effect of this step (counting from 1), then restart it
    /// and retry the request as a client would; the assertions judge the
    /// retried turn.
    pub crash_at_effect: Option<u32>,
    /// Which instance of the deployment serves the step: `0`, the one
    /// every trial has, or `1`, a second instance built at the start of the
    /// trial from the same context (the same durable directory and ledger),
    /// as a replica behind a load balancer would be.
    pub instance: u8,
    /// Move the trial's clock forward by this much before the step runs;
    /// with `crash_at_effect`, after the crash and before the rebuild, so
    /// the retry runs on the later clock (a long outage between a crash and
    /// the client's retry).
    pub clock_jump: Option<std::time::Duration>,
    /// Have the trial's MCP fixture answer the step's tool calls with a
    /// tool error (an upstream that failed), so the step shows how the
    /// deployment reports it.
    pub fixture_error: bool,
}

impl Step {
    /// A prompt step in `conversation` with no assertions yet.
    pub fn prompt(
        label: impl Into<String>,
        prompt: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Self {
        Self::new(label, StepInput::Prompt(prompt.into()), conversation)
    }

    /// A resume step in `conversation` answering with `answer`, presenting
    /// the conversation's own retained token.
    pub fn resume(
        label: impl Into<String>,
        answer: Value,
        conversation: impl Into<String>,
    ) -> Self {
        let input = StepInput::Resume {
            answer,
            token: TokenSource::Own,
            question: QuestionSource::Genuine,
        };
        Self::new(label, input, conversation)
    }

    /// A review step: the harness, as the operator, carries out `action`
    /// through the deployment's review door in `conversation`.
    pub fn review(
        label: impl Into<String>,
        action: crate::evidence::ReviewAction,
        conversation: impl Into<String>,
    ) -> Self {
        Self::new(label, StepInput::Review(action), conversation).by(Role::Operator)
    }

    /// A reset step: the harness resets `conversation` through the
    /// deployment's `reset` operation.
    pub fn reset(label: impl Into<String>, conversation: impl Into<String>) -> Self {
        Self::new(label, StepInput::Reset, conversation)
    }

    fn new(label: impl Into<String>, input: StepInput, conversation: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            input,
            role: Role::User,
            conversation: conversation.into(),
            state: None,
            feedback: None,
            assertions: Vec::new(),
            expect: Expect::Record,
            restart: Restart::No,
            crash_at_effect: None,
            instance: 0,
            clock_jump: None,
            fixture_error: false,
        }
    }

    /// Adds assertions.
    #[must_use]
    pub fn asserting(mut self, assertions: impl IntoIterator<Item = Assertion>) -> Self {
        self.assertions.extend(assertions);
        self
    }

    /// Declares the turn state.
    #[must_use]
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// The prompt is a demonstration a reviewer marked rejected.
    #[must_use]
    pub fn rejected(mut self) -> Self {
        self.feedback = Some(crate::evidence::Feedback::Rejected);
        self
    }

    /// The turn is spoken by `role`.
    #[must_use]
    pub fn by(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// Declares the error kind (or code) the turn must fail with.
    #[must_use]
    pub fn expecting_error(self, kind: impl Into<String>) -> Self {
        self.expecting(ErrorMatch::one_of([kind.into()]))
    }

    /// Accepts a record or any error alike (see [`Expect::RecordOrAnyError`]).
    #[must_use]
    pub fn record_or_any_error(mut self) -> Self {
        self.expect = Expect::RecordOrAnyError;
        self
    }

    /// Declares the errors the turn must fail with.
    #[must_use]
    pub fn expecting(mut self, errors: ErrorMatch) -> Self {
        self.expect = Expect::Error(errors);
        self
    }

    /// Rebuilds the deployment before this step when `restart` is true, as
    /// an outage would: a deployment in a child process is killed first
    /// ([`Restart::KillBefore`]).
    #[must_use]
    pub fn restarting(self, restart: bool) -> Self {
        self.interrupted(if restart {
            Restart::KillBefore
        } else {
            Restart::No
        })
    }

    /// Sets what happens to the deployment before the step.
    #[must_use]
    pub fn interrupted(mut self, restart: Restart) -> Self {
        self.restart = restart;
        self
    }

    /// Presents `token` instead of the conversation's own (resume steps).
    #[must_use]
    pub fn presenting(mut self, source: TokenSource) -> Self {
        if let StepInput::Resume { token, .. } = &mut self.input {
            *token = source;
        }
        self
    }

    /// Passes back `source`'s question id (resume steps).
    #[must_use]
    pub fn addressing(mut self, source: QuestionSource) -> Self {
        if let StepInput::Resume { question, .. } = &mut self.input {
            *question = source;
        }
        self
    }

    /// Moves the trial's clock forward by `by` (after the crash, when the
    /// step crashes; see [`Step::clock_jump`]).
    #[must_use]
    pub fn jumping_clock(mut self, by: std::time::Duration) -> Self {
        self.clock_jump = Some(by);
        self
    }

    /// Has the trial's MCP fixture answer the step's calls with a tool
    /// error (see [`Step::fixture_error`]).
    #[must_use]
    pub fn failing_fixture_calls(mut self) -> Self {
        self.fixture_error = true;
        self
    }

    /// Runs the step on the trial's second instance of the deployment.
    #[must_use]
    pub fn on_second_instance(mut self) -> Self {
        self.instance = 1;
        self
    }

    /// Crashes the deployment at the step's `k`-th granted effect, then
    /// restarts it and retries the request.
    #[must_use]
    pub fn crashing_at_effect(mut self, k: u32) -> Self {
        self.crash_at_effect = Some(k);
        self
    }

    /// What `steps` expect, as values a report may show in clear: the
    /// values their assertions name and the errors they accept. Never what
    /// a step sends (a prompt, a state, an answer): that is turn content,
    /// and a secret an adopter puts there must stay out of every report.
    pub fn public_values(steps: &[Self]) -> crate::redact::PublicValues {
        let mut said: Vec<Value> = Vec::new();
        for step in steps {
            said.push(Value::String(step.conversation.clone()));
            if let Expect::Error(errors) = &step.expect {
                said.extend(errors.any_of.iter().cloned().map(Value::String));
            }
            for assertion in &step.assertions {
                said.extend(assertion.public_values());
            }
        }
        crate::redact::PublicValues::from_values(&said)
    }

    /// The error match, when the step expects one.
    pub fn expected_error(&self) -> Option<&ErrorMatch> {
        match &self.expect {
            Expect::Error(errors) => Some(errors),
            Expect::Record | Expect::RecordOrAnyError => None,
        }
    }
}
