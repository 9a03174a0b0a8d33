//! [`ProcessTarget`]: a deployment in another process, driven over the
//! JSON-lines protocol and held to the same evidence model as a Rust one.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use super::child::{Silence, Supervised};
use super::kinds;
use super::pipes::StdoutEvent;
use super::protocol::{ChildMessage, HarnessMessage, SUPPORTED_VERSIONS};
use super::spare;
use super::spec::ProcessSpec;
use crate::capability::CapabilityEvidence;
use crate::evidence::{
    is_plain_name, PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnError, TurnRecord,
};
use crate::ledger::{Applied, SideEffectLedger};
use crate::target::{Target, TargetContext};
/// What separates the harness's account of a failed child from the tail of
/// the child's stderr it quotes (when the spec asks for it).
pub(crate) const STDERR_TAIL_MARKER: &str = "\n--- stderr tail ---\n";

/// The harness's own account in a process error's `message`, and the
/// child's stderr it quotes, if any.
pub(crate) fn split_stderr_tail(message: &str) -> (&str, Option<&str>) {
    match message.split_once(STDERR_TAIL_MARKER) {
        Some((account, tail)) => (account, Some(tail)),
        None => (message, None),
    }
}

/// How long a child that closed stdout gets to report its exit status.
const EXIT_REPORT_GRACE: Duration = Duration::from_millis(500);

/// A deployment running as a child process.
///
/// Built by [`ProcessTarget::spawn`] from the trial's [`TargetContext`], so a
/// pack's restart (drop, then build again) is a real process restart on the
/// same durable directory: whatever the deployment kept only in memory is
/// gone. Dropping it sends the shutdown message, waits the spec's grace
/// period, kills the process group if the child lingers, and reaps it.
///
/// The harness stays the ledger's owner: the child asks for each effect with
/// a `ledger_apply` line and the target applies it to the context's ledger.
///
/// Any breach of the protocol (the child exits mid-turn, writes a line that is
/// not a protocol message or is too long, answers late or answers a request
/// it was not sent) ends the step with a [`TurnError`] whose kind names the
/// cause (see [`kinds`]) and kills the child; later steps fail with
/// `ProcessUnavailable` until the pack restarts the deployment.
pub struct ProcessTarget {
    spec: ProcessSpec,
    child: Option<Supervised>,
    ledger: SideEffectLedger,
    capabilities: CapabilityEvidence,
    protocol_version: u32,
    next_id: u64,
    ended_by: Option<String>,
    /// Whether the process was a spare started ahead.
    from_spare: bool,
}

impl ProcessTarget {
    /// Starts the deployment for `context`'s trial and performs the
    /// handshake, caching the capability evidence it declares.
    ///
    /// # Errors
    ///
    /// `ProcessSpawnFailed` when the command cannot start; otherwise the same
    /// kinds a turn can fail with, plus `UnsupportedProtocolVersion` when the
    /// child declares a version this harness does not speak. The child is
    /// reaped before the error is returned.
    pub fn spawn(context: &TargetContext, spec: &ProcessSpec) -> Result<Self, TurnError> {
        let endpoints = context.endpoint_env();
        let spare_key = spec
            .keeps_spare()
            .then(|| spare::key(spec, context.durable_dir(), &endpoints));
        let spare = spare_key.as_deref().and_then(spare::take);
        let from_spare = spare.is_some();
        let child = match spare {
            Some(child) => child,
            None => {
                Supervised::spawn(spec, context.durable_dir(), &endpoints).map_err(|error| {
                    TurnError::harness(
                        kinds::PROCESS_SPAWN_FAILED,
                        format!("could not start `{}`: {error}", spec.program()),
                    )
                })?
            }
        };
        let mut target = Self {
            spec: spec.clone(),
            child: Some(child),
            ledger: context.ledger().clone(),
            capabilities: CapabilityEvidence::new(),
            protocol_version: 0,
            next_id: 1,
            ended_by: None,
            from_spare,
        };
        target.handshake(context)?;
        if let Some(key) = spare_key {
            // Once the trial has restarted, the next restart's process
            // starts now, while this one serves; one that cannot start
            // leaves that restart a cold one.
            if spare::restarting(&key, context.durable_dir()) {
                if let Ok(next) = Supervised::spawn(spec, context.durable_dir(), &endpoints) {
                    spare::stash(key, context.durable_dir(), next);
                }
            }
        }
        Ok(target)
    }

    /// Whether this process was a spare, started ahead and waiting for its
    /// handshake (see [`ProcessSpec::spare`]).
    pub fn from_spare(&self) -> bool {
        self.from_spare
    }

    /// The protocol version the child chose.
    pub fn protocol_version(&self) -> u32 {
        self.protocol_version
    }

    /// The child's process id while it runs; `None` once it has been reaped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Supervised::pid)
    }

    /// Shuts the child down in order now (as dropping does) and returns how
    /// it ended; `None` when it had already been stopped.
    pub fn shutdown(&mut self) -> Option<ExitStatus> {
        let grace = self.spec.shutdown_grace;
        self.child.take().map(|mut child| child.shutdown(grace))
    }

    fn handshake(&mut self, context: &TargetContext) -> Result<(), TurnError> {
        let deadline = Instant::now() + self.spec.handshake_timeout;
        self.send(&HarnessMessage::Hello {
            protocol_versions: SUPPORTED_VERSIONS.to_vec(),
            durable_dir: context.durable_dir().to_string_lossy().into_owned(),
            trial: context.trial(),
            clock_offset_ms: u64::try_from(context.clock().offset().as_millis())
                .unwrap_or(u64::MAX),
        });
        match self.next_message(deadline, self.spec.handshake_timeout, "the handshake")? {
            ChildMessage::Ready {
                protocol_version,
                capabilities,
            } => {
                if !SUPPORTED_VERSIONS.contains(&protocol_version) {
                    return Err(self.fail(
                        kinds::UNSUPPORTED_PROTOCOL_VERSION,
                        format!(
                            "the deployment speaks protocol version {protocol_version}; \
                             this harness speaks {SUPPORTED_VERSIONS:?}"
                        ),
                    ));
                }
                self.protocol_version = protocol_version;
                self.capabilities = capabilities;
                Ok(())
            }
            // A child that cannot start may say why instead of `ready`.
            ChildMessage::TurnError { id: 0, error } => {
                let error = self.trusted(error);
                self.fail(&error.kind, String::new());
                Err(error)
            }
            other => Err(self.fail(
                kinds::PROTOCOL_VIOLATION,
                format!(
                    "expected `ready` in answer to the handshake, got `{}`",
                    other.type_name()
                ),
            )),
        }
    }

    /// A served child's reports in the harness's own codes (a panic, an
    /// over-deep record) are the harness's own text.
    fn trusted(&self, mut error: TurnError) -> TurnError {
        if self.spec.served
            && error
                .code
                .as_deref()
                .is_some_and(super::protocol::is_harness_code)
        {
            error.harness = true;
        }
        error
    }

    /// Sends one turn request and serves the child's ledger operations until
    /// it answers, fails, or runs out of time.
    fn exchange(
        &mut self,
        make: impl FnOnce(u64) -> HarnessMessage,
    ) -> Result<TurnRecord, TurnError> {
        if let Some(cause) = &self.ended_by {
            return Err(TurnError::harness(
                kinds::PROCESS_UNAVAILABLE,
                format!("the deployment process was stopped earlier ({cause}); a restart spawns it again"),
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        let deadline = Instant::now() + self.spec.request_timeout;
        self.send(&make(id));
        loop {
            match self.next_message(deadline, self.spec.request_timeout, "a turn")? {
                ChildMessage::LedgerApply {
                    id: for_id,
                    key,
                    tool,
                    arguments,
                } if for_id == id => {
                    let call = crate::ledger::EffectCall {
                        tool: tool.as_deref(),
                        arguments: arguments.as_ref(),
                    };
                    let grant = self.ledger.grant(&key, call);
                    if grant.crash {
                        // Killed before it hears the grant: the effect
                        // happened, and the child never learned it did.
                        return Err(self.fail(
                            kinds::INJECTED_CRASH,
                            format!(
                                "the harness killed the deployment right after granting effect {}",
                                crate::redact::short_digest(key.as_bytes())
                            ),
                        ));
                    }
                    let applied = grant.applied == Applied::Applied;
                    self.send(&HarnessMessage::LedgerResult { id, key, applied });
                }
                ChildMessage::Witness {
                    id: for_id,
                    tool,
                    arguments,
                    outcome,
                } if for_id == id => self.ledger.witness(&tool, &arguments, outcome),
                ChildMessage::TurnRecord { id: for_id, record } if for_id == id => {
                    // A served child is this binary's own in-process
                    // deployment: the runner judges its record exactly as
                    // it would without the process, so both isolation modes
                    // report the same defect the same way.
                    let problem = (!self.spec.served)
                        .then(|| record.contract_problem())
                        .flatten();
                    if let Some(problem) = problem {
                        return Err(self.fail(
                            kinds::PROTOCOL_VIOLATION,
                            format!("the deployment's turn record breaks the protocol: {problem}"),
                        ));
                    }
                    return Ok(record);
                }
                ChildMessage::TurnError { id: for_id, error } if for_id == id => {
                    if error.code.as_deref().is_some_and(|c| !is_plain_name(c)) {
                        return Err(self.fail(
                            kinds::PROTOCOL_VIOLATION,
                            "the deployment's error code is not a plain name of at most 64 \
                             letters, digits and `_ : . -`"
                                .into(),
                        ));
                    }
                    return Err(self.trusted(error));
                }
                ChildMessage::Ready { .. } => {
                    return Err(self.fail(
                        kinds::PROTOCOL_VIOLATION,
                        "the deployment sent `ready` in the middle of a turn".into(),
                    ))
                }
                ChildMessage::LedgerApply { id: for_id, .. }
                | ChildMessage::Witness { id: for_id, .. }
                | ChildMessage::TurnRecord { id: for_id, .. }
                | ChildMessage::TurnError { id: for_id, .. } => {
                    return Err(self.fail(
                        kinds::RESPONSE_ID_MISMATCH,
                        format!("the deployment answered request {for_id} while request {id} was outstanding"),
                    ))
                }
            }
        }
    }

    /// The child's next protocol message, or the error that ends the step.
    fn next_message(
        &mut self,
        deadline: Instant,
        limit: Duration,
        during: &str,
    ) -> Result<ChildMessage, TurnError> {
        let Some(child) = self.child.as_mut() else {
            return Err(TurnError::harness(
                kinds::PROCESS_UNAVAILABLE,
                "the deployment process is not running",
            ));
        };
        match child.next_event(deadline) {
            Ok(StdoutEvent::Message(message)) => Ok(*message),
            Ok(StdoutEvent::Malformed(reason)) => Err(self.fail(
                kinds::PROTOCOL_VIOLATION,
                format!("the deployment wrote a line that is not a protocol message during {during} ({reason})"),
            )),
            Ok(StdoutEvent::Oversized) => Err(self.fail(
                kinds::MESSAGE_TOO_LARGE,
                format!(
                    "the deployment wrote a line longer than the cap of {} bytes during \
                     {during}; reading stopped there (ProcessSpec::max_line_bytes raises the cap)",
                    self.spec.max_line_bytes
                ),
            )),
            Ok(StdoutEvent::Closed) | Err(Silence::Gone) => {
                let status = if child.wait_for_exit(EXIT_REPORT_GRACE) {
                    child.kill().to_string()
                } else {
                    "closed its output but was still running".into()
                };
                Err(self.fail(
                    kinds::PROCESS_EXITED,
                    format!("the deployment process ended during {during} ({status})"),
                ))
            }
            Err(Silence::Timeout) => Err(self.fail(
                kinds::PROCESS_TIMEOUT,
                format!("the deployment did not answer within {limit:?} during {during}"),
            )),
        }
    }

    fn send(&self, message: &HarnessMessage) {
        if let Some(child) = &self.child {
            child.send(message);
        }
    }

    /// Ends the child (kill and reap: it broke the protocol, so an orderly
    /// shutdown cannot be trusted) and builds the step's error: the
    /// harness's own, whatever it quotes, so the runner classifies it (a
    /// process failure, an injected crash) by its kind alone. The child's
    /// stderr, when the spec quotes it, follows [`STDERR_TAIL_MARKER`];
    /// reports digest that part, which may hold turn content, and show the
    /// harness's account before it in clear.
    fn fail(&mut self, kind: &str, mut message: String) -> TurnError {
        if let Some(mut child) = self.child.take() {
            child.kill();
            if self.spec.stderr_tail {
                let tail = child.stderr_tail(self.spec.stderr_tail_bytes);
                if !tail.is_empty() {
                    message.push_str(STDERR_TAIL_MARKER);
                    message.push_str(&tail);
                }
            }
        }
        self.ended_by = Some(kind.to_owned());
        TurnError::harness(kind, message)
    }
}

impl Target for ProcessTarget {
    fn capabilities(&self) -> CapabilityEvidence {
        self.capabilities.clone()
    }

    fn warm_start(&self) -> Option<&'static str> {
        self.from_spare.then_some("from a spare")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.exchange(|id| HarnessMessage::Prompt {
            id,
            request: request.clone(),
        })
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        self.exchange(|id| HarnessMessage::Resume {
            id,
            request: request.clone(),
        })
    }

    fn review_procedure(&mut self, request: &ReviewRequest) -> Result<TurnRecord, TurnError> {
        self.exchange(|id| HarnessMessage::Review {
            id,
            request: request.clone(),
        })
    }

    fn reset(&mut self, request: &ResetRequest) -> Result<TurnRecord, TurnError> {
        self.exchange(|id| HarnessMessage::Reset {
            id,
            request: request.clone(),
        })
    }

    fn crashable(&self) -> bool {
        true
    }

    fn kill(&mut self) -> bool {
        match self.child.take() {
            Some(mut child) => {
                child.kill();
                self.ended_by = Some("killed".into());
                true
            }
            None => false,
        }
    }
}

impl Drop for ProcessTarget {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for ProcessTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessTarget")
            .field("program", &self.spec.program())
            .field("pid", &self.pid())
            .field("protocol_version", &self.protocol_version)
            .field("ended_by", &self.ended_by)
            .finish_non_exhaustive()
    }
}
