//! A conformance check for an adapter written in any language: before any
//! pack judges a deployment, drive its child through the protocol's edge
//! cases and say, check by check, whether it speaks the protocol.
//!
//! ```no_run
//! use symfonic_evals::process::{conformance, ConformanceInputs, ProcessSpec};
//! let report = conformance(
//!     &ProcessSpec::new("python3").arg("desk.py"),
//!     &ConformanceInputs::default().effect_prompt("refund order 3"),
//! );
//! println!("{}", report.render());
//! report.assert_passed();
//! ```

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::child::{Silence, Supervised};
use super::pipes::StdoutEvent;
use super::protocol::{ChildMessage, HarnessMessage, SUPPORTED_VERSIONS};
use super::spec::ProcessSpec;
use crate::evidence::PromptRequest;

/// What the checks may send the deployment beyond the protocol's own
/// messages.
#[derive(Debug, Clone)]
pub struct ConformanceInputs {
    /// A prompt every deployment can answer (with a record or a typed error).
    pub prompt: String,
    /// A prompt whose turn applies an effect through the ledger, for the
    /// ledger round trip; without one that check does not run (and says so).
    pub effect_prompt: Option<String>,
    /// The state sent with the effect prompt.
    pub effect_state: Option<Value>,
}

impl Default for ConformanceInputs {
    fn default() -> Self {
        Self {
            prompt: "hello".into(),
            effect_prompt: None,
            effect_state: None,
        }
    }
}

impl ConformanceInputs {
    /// The same inputs with an effect prompt for the ledger round trip.
    #[must_use]
    pub fn effect_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.effect_prompt = Some(prompt.into());
        self
    }

    /// The same inputs with state for the effect prompt.
    #[must_use]
    pub fn effect_state(mut self, state: Value) -> Self {
        self.effect_state = Some(state);
        self
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConformanceCheck {
    /// What was checked.
    pub name: &'static str,
    /// Passed, failed, or not run.
    pub verdict: CheckVerdict,
    /// What happened, in the harness's words (no line content).
    pub detail: String,
}

/// How one conformance check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckVerdict {
    /// The child did what the protocol asks.
    Passed,
    /// It did not.
    Failed,
    /// The check needs an input that was not given.
    NotRun,
}

/// Every check, in the order they ran.
#[derive(Debug, Clone)]
pub struct ConformanceReport {
    /// The checks.
    pub checks: Vec<ConformanceCheck>,
}

impl ConformanceReport {
    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.checks
            .iter()
            .all(|c| c.verdict != CheckVerdict::Failed)
    }

    /// One line per check.
    pub fn render(&self) -> String {
        let mut out = String::from("protocol conformance:\n");
        for check in &self.checks {
            let mark = match check.verdict {
                CheckVerdict::Passed => "ok  ",
                CheckVerdict::Failed => "FAIL",
                CheckVerdict::NotRun => "skip",
            };
            let _ = writeln!(out, "  {mark} {}: {}", check.name, check.detail);
        }
        out
    }

    /// Panics with the report unless every check passed or was not run.
    ///
    /// # Panics
    ///
    /// When a check failed.
    pub fn assert_passed(&self) {
        assert!(self.passed(), "{}", self.render());
    }
}

/// A harness that speaks to one child by hand, line by line.
struct Probe {
    child: Supervised,
    limit: Duration,
    _durable: tempfile::TempDir,
}

impl Probe {
    fn start(spec: &ProcessSpec) -> Result<Self, String> {
        let durable = crate::scratch::tempdir("app-").map_err(|e| e.to_string())?;
        let child = Supervised::spawn(spec, durable.path(), &[])
            .map_err(|error| format!("could not start `{}`: {error}", spec.program()))?;
        Ok(Self {
            child,
            limit: spec.handshake_timeout.max(spec.request_timeout),
            _durable: durable,
        })
    }

    fn hello(&self, versions: &[u32]) {
        self.child.send(&HarnessMessage::Hello {
            protocol_versions: versions.to_vec(),
            durable_dir: self._durable.path().to_string_lossy().into_owned(),
            trial: 0,
            clock_offset_ms: 0,
        });
    }

    /// The next message, or why there is none.
    fn next(&self) -> Result<ChildMessage, String> {
        match self.child.next_event(Instant::now() + self.limit) {
            Ok(StdoutEvent::Message(message)) => Ok(*message),
            Ok(StdoutEvent::Malformed(why)) => Err(format!(
                "wrote a line that is not a protocol message ({why})"
            )),
            Ok(StdoutEvent::Oversized) => Err("wrote a line longer than the cap".into()),
            Ok(StdoutEvent::Closed) | Err(Silence::Gone) => Err("closed its output".into()),
            Err(Silence::Timeout) => Err(format!("said nothing within {:?}", self.limit)),
        }
    }

    /// The answer to request `id`, serving any ledger requests meanwhile
    /// (every effect granted as new); how many it asked for.
    fn answer(&self, id: u64) -> Result<(ChildMessage, u32), String> {
        let mut effects = 0;
        loop {
            match self.next()? {
                ChildMessage::LedgerApply {
                    id: for_id, key, ..
                } if for_id == id => {
                    effects += 1;
                    self.child.send(&HarnessMessage::LedgerResult {
                        id,
                        key,
                        applied: true,
                    });
                }
                ChildMessage::Witness { id: for_id, .. } if for_id == id => {}
                message @ (ChildMessage::TurnRecord { .. } | ChildMessage::TurnError { .. }) => {
                    return Ok((message, effects))
                }
                other => return Err(format!("answered with `{}`", other.type_name())),
            }
        }
    }
}

fn answered_id(message: &ChildMessage) -> Option<u64> {
    match message {
        ChildMessage::TurnRecord { id, .. } | ChildMessage::TurnError { id, .. } => Some(*id),
        _ => None,
    }
}

fn check(name: &'static str, outcome: Result<String, String>) -> ConformanceCheck {
    match outcome {
        Ok(detail) => ConformanceCheck {
            name,
            verdict: CheckVerdict::Passed,
            detail,
        },
        Err(detail) => ConformanceCheck {
            name,
            verdict: CheckVerdict::Failed,
            detail,
        },
    }
}

/// Drives a child started from `spec` through the protocol's edge cases:
/// the handshake and its version choice, unknown fields ignored, request ids
/// echoed, the ledger round trip, shutdown, and end-of-file on its input.
/// Each check starts from the state the previous one left; a check that
/// cannot start (the child is gone) fails saying so.
pub fn conformance(spec: &ProcessSpec, inputs: &ConformanceInputs) -> ConformanceReport {
    let mut checks = Vec::new();
    let mut probe = match Probe::start(spec) {
        Ok(probe) => probe,
        Err(why) => {
            checks.push(check("starts", Err(why)));
            return ConformanceReport { checks };
        }
    };
    // Offer a version this harness will never speak beside the real ones:
    // the child must choose one it was offered and speaks.
    let mut offered = SUPPORTED_VERSIONS.to_vec();
    offered.push(u32::MAX);
    probe.hello(&offered);
    let ready = probe.next();
    checks.push(check(
        "handshake and version choice",
        match &ready {
            Ok(ChildMessage::Ready {
                protocol_version, ..
            }) if SUPPORTED_VERSIONS.contains(protocol_version) => Ok(format!(
                "answered `ready` choosing version {protocol_version} of {offered:?}"
            )),
            Ok(ChildMessage::Ready {
                protocol_version, ..
            }) => Err(format!(
                "chose version {protocol_version}, which was not among {SUPPORTED_VERSIONS:?}"
            )),
            Ok(other) => Err(format!(
                "answered `{}` instead of `ready`",
                other.type_name()
            )),
            Err(why) => Err(why.clone()),
        },
    ));
    if ready.is_err() {
        return ConformanceReport { checks };
    }
    // Fields a later version may add must not break today's child.
    let request = PromptRequest::new("conformance", &inputs.prompt);
    let mut line =
        serde_json::to_value(HarnessMessage::Prompt { id: 7, request }).unwrap_or(Value::Null);
    line["from_a_later_version"] = json!({"ignored": true});
    line["request"]["also_from_later"] = json!([1, 2]);
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    probe.child.send_line(bytes);
    let answered = probe.answer(7);
    checks.push(check(
        "unknown fields ignored",
        answered
            .as_ref()
            .map(|_| "answered a prompt carrying fields it does not know".into())
            .map_err(Clone::clone),
    ));
    checks.push(check(
        "request id echoed",
        match &answered {
            Ok((message, _)) if answered_id(message) == Some(7) => {
                Ok("answered request 7 as request 7".into())
            }
            Ok((message, _)) => Err(format!(
                "answered request 7 with id {:?}",
                answered_id(message)
            )),
            Err(why) => Err(format!("no answer to compare ({why})")),
        },
    ));
    checks.push(match &inputs.effect_prompt {
        None => ConformanceCheck {
            name: "ledger round trip",
            verdict: CheckVerdict::NotRun,
            detail: "no effect prompt was given".into(),
        },
        Some(prompt) => {
            let mut request = PromptRequest::new("conformance", prompt);
            request.state.clone_from(&inputs.effect_state);
            probe.child.send(&HarnessMessage::Prompt { id: 8, request });
            check(
                "ledger round trip",
                match probe.answer(8) {
                    Ok((_, 0)) => Err("the effect prompt asked the ledger for nothing".into()),
                    Ok((ChildMessage::TurnRecord { .. }, n)) => Ok(format!(
                        "asked for {n} effect(s) mid-turn, waited for each answer, then answered"
                    )),
                    Ok((_, n)) => Err(format!(
                        "asked for {n} effect(s), then failed the turn with a typed error"
                    )),
                    Err(why) => Err(why),
                },
            )
        }
    });
    let grace = spec.shutdown_grace;
    probe.child.send(&HarnessMessage::Shutdown);
    let exited = probe.child.wait_for_exit(grace);
    let status = probe.child.kill();
    checks.push(check(
        "shutdown",
        if exited && status.success() {
            Ok(format!("exited cleanly within {grace:?} of `shutdown`"))
        } else if exited {
            Err(format!("exited on `shutdown`, but with {status}"))
        } else {
            Err(format!(
                "still running {grace:?} after `shutdown`; it was killed"
            ))
        },
    ));
    // End of input without a shutdown message: treated as one.
    checks.push(check(
        "end of input is a shutdown",
        match Probe::start(spec) {
            Err(why) => Err(why),
            Ok(mut eof) => {
                eof.hello(SUPPORTED_VERSIONS.as_slice());
                match eof.next() {
                    Err(why) => Err(why),
                    Ok(_) => {
                        eof.child.close_input();
                        let exited = eof.child.wait_for_exit(grace);
                        let status = eof.child.kill();
                        if exited {
                            Ok(format!("exited ({status}) when its input closed"))
                        } else {
                            Err(format!("still running {grace:?} after its input closed"))
                        }
                    }
                }
            }
        },
    ));
    ConformanceReport { checks }
}
