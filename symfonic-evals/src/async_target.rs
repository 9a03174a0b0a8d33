//! Driving an async deployment without executor boilerplate.
//!
//! Most agent frameworks are async. An adopter implements [`AsyncTarget`] with
//! plain `async fn`s and hands the harness a [`TokioTarget`], which owns a
//! current-thread tokio runtime for the trial and blocks on each turn.

use std::future::Future;

use crate::capability::CapabilityEvidence;
use crate::evidence::{
    PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnError, TurnRecord,
};
#[cfg(feature = "tokio")]
use crate::runner::WORKER_PREFIX;
#[cfg(feature = "tokio")]
use crate::target::{Target, TargetContext};

/// An async deployment. Mirrors [`Target`] with `async fn`s.
///
/// Its builder is an `async fn(&TargetContext) -> T` under a pack attribute
/// (or named with `builder = path`), which needs the `tokio` feature (on by
/// default): the harness drives each trial's deployment on a
/// current-thread tokio runtime it owns ([`TokioTarget`]), so the futures
/// need not be `Send`, and the deployment may spawn local tasks on that
/// runtime but must not build one of its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an async deployment: it does not implement `symfonic_evals::AsyncTarget`",
    label = "the deployment this `async fn` builder returns",
    note = "implement `symfonic_evals::AsyncTarget` for `{Self}`; if it implements `Target` instead, \
            make its builder a plain `fn`"
)]
pub trait AsyncTarget {
    /// What the deployment declares it can do.
    fn capabilities(&self) -> CapabilityEvidence;

    /// Runs one prompt turn.
    fn run_turn(
        &mut self,
        request: &PromptRequest,
    ) -> impl Future<Output = Result<TurnRecord, TurnError>>;

    /// Redeems the latest pause of a conversation.
    fn resume(
        &mut self,
        request: &ResumeRequest,
    ) -> impl Future<Output = Result<TurnRecord, TurnError>> {
        let _ = request;
        async { Err(TurnError::resume_unsupported()) }
    }

    /// Carries out an operator's decision through the review door (see
    /// [`Target::review_procedure`](crate::Target::review_procedure)).
    fn review_procedure(
        &mut self,
        request: &ReviewRequest,
    ) -> impl Future<Output = Result<TurnRecord, TurnError>> {
        let _ = request;
        async { Err(TurnError::review_unsupported()) }
    }

    /// Resets (or cancels) a conversation (see
    /// [`Target::reset`](crate::Target::reset)).
    fn reset(
        &mut self,
        request: &ResetRequest,
    ) -> impl Future<Output = Result<TurnRecord, TurnError>> {
        let _ = request;
        async { Err(TurnError::reset_unsupported()) }
    }
}

/// Adapts an [`AsyncTarget`] to [`Target`] by owning a tokio runtime
/// (current-thread, with timers and I/O enabled). Needs the `tokio`
/// feature (on by default).
#[cfg(feature = "tokio")]
pub struct TokioTarget<T> {
    runtime: tokio::runtime::Runtime,
    inner: T,
}

#[cfg(feature = "tokio")]
impl<T: AsyncTarget> TokioTarget<T> {
    /// Builds the deployment with an async constructor (an `async fn` or
    /// async closure that may borrow the context) inside a new runtime.
    ///
    /// # Panics
    ///
    /// When the runtime cannot be created (the process is out of threads or
    /// file descriptors); the runner reports it as the step that broke.
    pub fn build<F>(context: &TargetContext, constructor: F) -> Self
    where
        F: AsyncFnOnce(&TargetContext) -> T,
    {
        let runtime = runtime();
        let inner = runtime.block_on(constructor(context));
        Self { runtime, inner }
    }

    /// Wraps an already-built deployment in a new runtime.
    ///
    /// # Panics
    ///
    /// When the runtime cannot be created.
    pub fn new(inner: T) -> Self {
        Self {
            runtime: runtime(),
            inner,
        }
    }

    /// The wrapped deployment.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

#[cfg(feature = "tokio")]
/// A current-thread runtime with timers and I/O. Its blocking-pool threads
/// carry the trial-thread prefix, so a panic there stays as quiet as one on
/// the trial thread (its message may quote turn state).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name(format!("{WORKER_PREFIX}tokio"))
        .build()
        .expect("a tokio runtime for the async target")
}

#[cfg(feature = "tokio")]
impl<T: AsyncTarget> Target for TokioTarget<T> {
    fn capabilities(&self) -> CapabilityEvidence {
        self.inner.capabilities()
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.runtime.block_on(self.inner.run_turn(request))
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        self.runtime.block_on(self.inner.resume(request))
    }

    fn review_procedure(&mut self, request: &ReviewRequest) -> Result<TurnRecord, TurnError> {
        self.runtime.block_on(self.inner.review_procedure(request))
    }

    fn reset(&mut self, request: &ResetRequest) -> Result<TurnRecord, TurnError> {
        self.runtime.block_on(self.inner.reset(request))
    }
}
