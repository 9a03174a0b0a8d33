//! The one trait an adopter implements, and the fixtures the harness owns.

use std::path::{Path, PathBuf};

use crate::capability::CapabilityEvidence;
use crate::clock::Clock;
use crate::evidence::{
    PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnError, TurnRecord,
};
use crate::ledger::SideEffectLedger;

/// A deployment under evaluation.
///
/// The harness builds it from a [`TargetContext`], drives it one step at a
/// time on a thread of its own, and drops it to simulate a restart. A target
/// need not be `Send`: it lives and dies on that thread.
///
/// ```
/// use symfonic_evals::{CapabilityEvidence, PromptRequest, Target, TurnError, TurnRecord};
/// struct Echo;
/// impl Target for Echo {
///     fn capabilities(&self) -> CapabilityEvidence {
///         CapabilityEvidence::new()
///     }
///     fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
///         Ok(TurnRecord::builder().answer(request.prompt.clone()).build())
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a deployment the packs can drive: it does not implement `symfonic_evals::Target`",
    label = "the deployment this builder returns",
    note = "implement `symfonic_evals::Target` for `{Self}`; if it implements `AsyncTarget` instead, \
            make its builder an `async fn` (the harness then drives it on a runtime it owns)"
)]
pub trait Target {
    /// What the deployment declares it can do; packs decide applicability on it.
    fn capabilities(&self) -> CapabilityEvidence;

    /// Runs one prompt turn.
    ///
    /// # Errors
    ///
    /// A [`TurnError`] whose kind a step may expect.
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError>;

    /// Redeems the latest pause of a conversation with a person's answer.
    ///
    /// # Errors
    ///
    /// By default `ResumeUnsupported`; a deployment with the `resume`
    /// operation returns its own kinds, such as `PauseTokenReplayedError`.
    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let _ = request;
        Err(TurnError::resume_unsupported())
    }

    /// Carries out an operator's decision through the structured review
    /// door: approve a draft under a name, amend an approved procedure's
    /// precondition, or revoke it. A deployment whose review is an admin
    /// API implements it in a few lines and declares the `review`
    /// operation; the procedural pack's lifecycle probes then run. The
    /// record's attributes carry what the door shows afterwards (the same
    /// attributes an operator turn reports).
    ///
    /// # Errors
    ///
    /// By default `ReviewUnsupported`; a deployment returns its own kinds
    /// (no such draft, no such procedure).
    fn review_procedure(&mut self, request: &ReviewRequest) -> Result<TurnRecord, TurnError> {
        let _ = request;
        Err(TurnError::review_unsupported())
    }

    /// Resets (or cancels) a conversation, as a user's "new chat" or a
    /// cancel endpoint does: whatever the conversation had pending, its
    /// pauses included, is forgotten, so a token issued before the reset
    /// is refused after it. A deployment with such a door declares the
    /// `reset` operation; the `approval/reset-between` probe then runs.
    /// The record may be empty (nothing was said).
    ///
    /// # Errors
    ///
    /// By default `ResetUnsupported`; a deployment returns its own kinds.
    fn reset(&mut self, request: &ResetRequest) -> Result<TurnRecord, TurnError> {
        let _ = request;
        Err(TurnError::reset_unsupported())
    }

    /// Ends the deployment abruptly, as a crash would, when it can: a
    /// deployment in a child process is killed without warning, so nothing
    /// it meant to do on an orderly shutdown happens. Returns whether it
    /// did; a deployment on the harness's own thread cannot crash and keeps
    /// the default, `false`.
    #[doc(hidden)]
    fn kill(&mut self) -> bool {
        false
    }

    /// Whether the harness can kill this deployment at an effect boundary
    /// (it runs in a child process whose ledger requests the harness
    /// answers). Crash injection needs it.
    #[doc(hidden)]
    fn crashable(&self) -> bool {
        false
    }

    /// How this instance started, when not from nothing (a process target
    /// answered by a spare says `"from a spare"`): the report shows it on
    /// the step after the restart, so a reader knows what the restart
    /// cost. `None` by default.
    #[doc(hidden)]
    fn warm_start(&self) -> Option<&'static str> {
        None
    }
}

impl<T: Target + ?Sized> Target for Box<T> {
    fn capabilities(&self) -> CapabilityEvidence {
        (**self).capabilities()
    }
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        (**self).run_turn(request)
    }
    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        (**self).resume(request)
    }
    fn review_procedure(&mut self, request: &ReviewRequest) -> Result<TurnRecord, TurnError> {
        (**self).review_procedure(request)
    }
    fn reset(&mut self, request: &ResetRequest) -> Result<TurnRecord, TurnError> {
        (**self).reset(request)
    }
    fn kill(&mut self) -> bool {
        (**self).kill()
    }
    fn crashable(&self) -> bool {
        (**self).crashable()
    }
    fn warm_start(&self) -> Option<&'static str> {
        (**self).warm_start()
    }
}

/// The fixtures the harness owns and hands to the function that builds a
/// deployment: the side-effect ledger and a durable directory. Both live for
/// one trial: a restart rebuilds the deployment from the same context, and
/// the next trial gets a fresh one.
#[derive(Debug)]
pub struct TargetContext {
    ledger: SideEffectLedger,
    durable: Durable,
    trial: u32,
    /// Model replay (issue 14): the trial's model endpoint, if it has one.
    model_url: Option<String>,
    /// The trial's MCP server fixture, if the pack serves one.
    mcp_url: Option<String>,
    /// The address of its stdio side.
    mcp_stdio: Option<String>,
    /// The clock the deployment reads the time from.
    clock: Clock,
}

/// Where the durable directory comes from: the harness owns it (and removes
/// it after the trial), or a deployment served in a child borrows the
/// harness's.
#[derive(Debug)]
enum Durable {
    Owned(tempfile::TempDir),
    Borrowed(PathBuf),
}

/// The trial is over: the spare processes started for it (see
/// [`ProcessSpec::spare`](crate::process::ProcessSpec::spare)) are killed.
impl Drop for TargetContext {
    fn drop(&mut self) {
        crate::process::discard_spares(self.durable_dir());
    }
}

impl TargetContext {
    /// The context of a deployment served in a child process: the
    /// harness's durable directory (which the child must not remove), the
    /// harness's trial number, and a ledger that proxies to the harness.
    pub(crate) fn served(durable_dir: PathBuf, trial: u32, ledger: SideEffectLedger) -> Self {
        Self {
            ledger,
            durable: Durable::Borrowed(durable_dir),
            trial,
            model_url: None,
            mcp_url: None,
            mcp_stdio: None,
            clock: Clock::default(),
        }
    }

    /// A fresh context for trial number `trial` (zero-based).
    ///
    /// # Errors
    ///
    /// When the durable directory cannot be created.
    pub fn fresh(trial: u32) -> std::io::Result<Self> {
        // Named like any application's scratch directory: nothing in the
        // path tells a deployment it is under test.
        let durable = crate::scratch::tempdir("app-")?;
        Ok(Self {
            ledger: SideEffectLedger::new(),
            durable: Durable::Owned(durable),
            trial,
            model_url: None,
            mcp_url: None,
            mcp_stdio: None,
            clock: Clock::default(),
        })
    }

    /// This context with its model endpoint at `url` (the runner sets it
    /// for every trial of a pack run; a hand-built context can point at an
    /// endpoint started with [`ReplaySession::start`](crate::replay::ReplaySession::start)).
    #[must_use]
    pub fn with_model_url(mut self, url: impl Into<String>) -> Self {
        self.model_url = Some(url.into());
        self
    }

    /// The base URL of the trial's model endpoint (`http://127.0.0.1:<port>`;
    /// OpenAI clients take `<url>/v1`), which answers model requests from the
    /// pack's cassette. `None` when the run has no endpoint (replay mode
    /// `Off`, [`run_scenario`](crate::run_scenario), the capability probe).
    pub fn model_url(&self) -> Option<&str> {
        self.model_url.as_deref()
    }

    /// This context with the trial's MCP server fixture at `url` (the
    /// runner sets it for every trial of an extension pack run).
    #[must_use]
    pub fn with_mcp_url(mut self, url: impl Into<String>) -> Self {
        self.mcp_url = Some(url.into());
        self
    }

    /// The Streamable HTTP URL of the trial's MCP server fixture
    /// (`http://127.0.0.1:<port>/mcp`), which serves the extension pack's
    /// tool (see [`crate::mcp`]). `None` outside an extension pack run, or
    /// without the `mcp` feature. It is the same across the trial's
    /// restarts: a deployment binds it again each time it starts.
    pub fn mcp_url(&self) -> Option<&str> {
        self.mcp_url.as_deref()
    }

    /// This context with the stdio side of the trial's MCP fixture at
    /// `address` (`127.0.0.1:<port>`), which
    /// [`mcp_command`](Self::mcp_command) connects to.
    #[must_use]
    pub fn with_mcp_stdio(mut self, address: impl Into<String>) -> Self {
        self.mcp_stdio = Some(address.into());
        self
    }

    /// The command that serves the trial's MCP fixture over stdio, for a
    /// deployment that launches its MCP servers as commands: the crate's
    /// bridge (`symfonic-evals-mcp-stdio`) with the fixture's address.
    /// `None` outside an extension pack run, or when the bridge cannot be
    /// found (see [`mcp::stdio_bridge`](crate::mcp::stdio_bridge)).
    pub fn mcp_command(&self) -> Option<crate::mcp::McpCommand> {
        let address = self.mcp_stdio.clone()?;
        Some(crate::mcp::McpCommand {
            program: crate::mcp::stdio_bridge()?,
            args: vec![address],
        })
    }

    /// The variables a deployment in a child process finds this context's
    /// endpoints in: the model endpoint's, and the MCP fixture's.
    pub(crate) fn endpoint_env(&self) -> Vec<(&'static str, String)> {
        let mut env = self
            .model_url()
            .map(crate::replay::child_env)
            .unwrap_or_default();
        if let Some(url) = self.mcp_url() {
            env.push((crate::mcp::MCP_URL_ENV, url.to_owned()));
        }
        if let Some(address) = &self.mcp_stdio {
            env.push((crate::mcp::MCP_STDIO_ADDR_ENV, address.clone()));
            if let Some(bridge) = crate::mcp::stdio_bridge() {
                env.push((
                    crate::mcp::MCP_STDIO_BIN_ENV,
                    bridge.to_string_lossy().into_owned(),
                ));
            }
        }
        env
    }

    /// The same context with its clock `offset` ahead of the real one (a
    /// deployment in a child process reads the offset from the handshake).
    #[must_use]
    pub fn with_clock_offset(mut self, offset: std::time::Duration) -> Self {
        self.clock = Clock::ahead_by(offset);
        self
    }

    /// The clock to read the time from: the real time plus however far the
    /// harness has moved it. A deployment that keeps a clone sees every
    /// advance; one that derives keys or windows from the time and declares
    /// [`CONTEXT_CLOCK`](crate::CONTEXT_CLOCK) gets the clock probes.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// [`Clock::now`] of [`clock`](Self::clock).
    pub fn now(&self) -> std::time::SystemTime {
        self.clock.now()
    }

    /// The ledger the action tool applies its effects through.
    pub fn ledger(&self) -> &SideEffectLedger {
        &self.ledger
    }

    /// A directory that survives a restart within this trial.
    pub fn durable_dir(&self) -> &Path {
        match &self.durable {
            Durable::Owned(dir) => dir.path(),
            Durable::Borrowed(dir) => dir,
        }
    }

    /// A path inside the durable directory.
    pub fn durable_path(&self, name: &str) -> PathBuf {
        self.durable_dir().join(name)
    }

    /// Which trial this context belongs to (zero-based).
    pub fn trial(&self) -> u32 {
        self.trial
    }
}
