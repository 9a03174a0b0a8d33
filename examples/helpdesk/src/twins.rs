//! Broken twins: the reference desk with one flaw switched on.
//!
//! Each [`Flaw`] is a failure a deployment can have while still *looking*
//! like it has the capability: the answer reads right, the attributes are
//! set, the pause is described. The switch sits at the exact line in the
//! real code where the flaw lives (search for `Flaw::` to find them), so a
//! reader sees how small the difference between a working desk and a broken
//! one can be, and which pack assertion notices it.

/// The three packs, as the twins are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pack {
    /// `procedural-skills`
    Procedural,
    /// `approval-resume`
    ApprovalResume,
    /// `extension-tools`
    ExtensionTool,
}

/// Declares [`Flaw`] and [`Flaw::ALL`] from one list, so a flaw cannot be
/// added without being run by the main job and the twin suite.
macro_rules! flaws {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// One failure, switched on in an otherwise real deployment.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Flaw {
            $($(#[$doc])* $name,)*
        }

        impl Flaw {
            /// Every flaw, in the order the main job reports them.
            pub const ALL: &'static [Self] = &[$(Self::$name),*];
        }
    };
}

flaws! {
    /// No consolidation cycle runs; the "promoted" count is a turn counter.
    PromotedCountIsTurnCounter,
    /// The gate reads drafts as well as approved procedures, so a draft
    /// governs before anyone reviewed it.
    DraftGovernsBeforeReview,
    /// The recall block lists drafts, so an unreviewed procedure reaches
    /// the model's input.
    DraftLeaksIntoPrompt,
    /// Approvals live in process memory; the review door shows them until
    /// the next restart.
    ApprovalOnlyInMemory,
    /// The gate enforces a compiled-in policy (the same-looking rule, under
    /// other wording) instead of the procedure the review door shows.
    EnforcementReadsShadowProcedure,
    /// The precondition stage judges the turn's state against the approved
    /// procedure, but runs in observe mode: a failing state is recorded as a
    /// downgraded refusal and the call admitted anyway.
    GateIgnoresState,
    /// The gate refuses the call and the record says so, but the tool's
    /// effect is applied anyway.
    ToolRunsDespiteRefusal,
    /// The turn completes and the pause is only described in attributes.
    PauseReportedAsAttribute,
    /// The pause issues a token but writes no checkpoint to bind it to.
    ResumeWithoutCheckpoint,
    /// Redemption loads the checkpoint and stops there: the paused turn is
    /// never carried on.
    ResumeWithoutContinuation,
    /// Redemption re-runs the request from the top instead of continuing
    /// from the checkpoint, so the interaction is asked again.
    ResumeRestartsTurn,
    /// The token is spent without checking it was unspent.
    TokenRedeemableTwice,
    /// The extension's manifest is declared but its tool is never bound.
    ExtensionDeclaredNotBound,
}

impl Flaw {
    /// A short kebab-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::GateIgnoresState => "gate-ignores-state",
            Self::DraftGovernsBeforeReview => "draft-governs-before-review",
            Self::DraftLeaksIntoPrompt => "draft-leaks-into-prompt",
            Self::ApprovalOnlyInMemory => "approval-only-in-memory",
            Self::EnforcementReadsShadowProcedure => "enforcement-reads-shadow-procedure",
            Self::ToolRunsDespiteRefusal => "tool-runs-despite-refusal",
            Self::PauseReportedAsAttribute => "pause-reported-as-attribute",
            Self::TokenRedeemableTwice => "token-redeemable-twice",
            Self::ResumeWithoutCheckpoint => "resume-without-checkpoint",
            Self::ResumeWithoutContinuation => "resume-without-continuation",
            Self::ResumeRestartsTurn => "resume-restarts-turn",
            Self::ExtensionDeclaredNotBound => "extension-declared-not-bound",
            Self::PromotedCountIsTurnCounter => "promoted-count-is-turn-counter",
        }
    }

    /// The pack whose scenario this flaw defeats.
    pub fn pack(self) -> Pack {
        match self {
            Self::PauseReportedAsAttribute
            | Self::TokenRedeemableTwice
            | Self::ResumeWithoutCheckpoint
            | Self::ResumeWithoutContinuation
            | Self::ResumeRestartsTurn => Pack::ApprovalResume,
            Self::ExtensionDeclaredNotBound => Pack::ExtensionTool,
            _ => Pack::Procedural,
        }
    }

    /// Where the pack must catch it: the step, the assertion kind, and a
    /// detail the failure's description (or, for an error step, its
    /// expectation) names.
    pub fn expected_catch(self) -> Catch {
        let seed = crate::packs::definition(self.pack()).kind().seed_scenario();
        let catch = |step, assertion, detail| Catch {
            scenario: seed,
            step,
            assertion,
            detail,
        };
        match self {
            Self::PromotedCountIsTurnCounter => catch(
                "draft probe",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::DraftGovernsBeforeReview => catch(
                "draft probe",
                "AttributeEquals",
                "AttributeEquals(procedural_enforcement_ids)",
            ),
            Self::DraftLeaksIntoPrompt => catch(
                "draft probe",
                "PromptRecallExcludes",
                "PromptRecallExcludes(fragment)",
            ),
            Self::ApprovalOnlyInMemory => catch(
                "satisfied",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::EnforcementReadsShadowProcedure => catch(
                "satisfied",
                "AttributesSameNonEmpty",
                "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
            ),
            Self::GateIgnoresState => catch(
                "blocked",
                "StageObserved",
                "StageObserved(procedural_precondition, outcome=rejected",
            ),
            Self::ToolRunsDespiteRefusal => catch(
                "blocked",
                "SideEffectCount",
                "SideEffectCount(attempts=2, effects=2, duplicates=0)",
            ),
            Self::PauseReportedAsAttribute => {
                catch("pause", "AttributeEquals", "AttributeEquals(paused)")
            }
            Self::ResumeWithoutCheckpoint => catch(
                "resume",
                "AttributeEquals",
                "AttributeEquals(resume_checkpoint)",
            ),
            Self::ResumeWithoutContinuation => catch(
                "resume",
                "AttributeEquals",
                "AttributeEquals(resume_continued)",
            ),
            Self::ResumeRestartsTurn => {
                catch("resume", "ToolCalled", "ToolCalled(ask_user, times=0)")
            }
            Self::TokenRedeemableTwice => {
                catch("replay", "ExpectedError", "PauseTokenReplayedError")
            }
            Self::ExtensionDeclaredNotBound => catch(
                "extension call",
                "ToolSucceeded",
                "ToolSucceeded(track_shipment, times=1)",
            ),
        }
    }
}

/// Where a pack must catch a twin: the scenario (the seed scenario's name
/// or a probe's), and in it the first failure's step, assertion and detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Catch {
    /// The scenario whose first failure it is.
    pub scenario: &'static str,
    /// The step label.
    pub step: &'static str,
    /// The assertion (or step error) kind.
    pub assertion: &'static str,
    /// Text the failure's description or expectation must contain.
    pub detail: &'static str,
}

impl Catch {
    /// Whether a failure is this catch.
    pub fn matches(&self, failure: &symfonic_evals::Failure) -> bool {
        failure.scenario == self.scenario
            && failure.step_label == self.step
            && failure.assertion == self.assertion
            && (failure.description.contains(self.detail) || failure.expected.contains(self.detail))
    }
}
