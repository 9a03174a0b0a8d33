//! The approval pack's scenarios: the seed's three steps, and each probe as
//! those steps varied.

use serde_json::Value;

use super::kept::kept;
use super::learned::resume_effects;
use super::{ApprovalResumePack, PROBES};
use crate::assertion::Assertion;
use crate::evidence::{PAUSED, PAUSE_NAME, PAUSE_RESUMABLE};
use crate::packs::probes::Selection;
use crate::runner::Session;
use crate::scenario::{
    Continuation, ErrorMatch, Forgery, QuestionSource, Scenario, Step, StepInput, TokenSource,
};

/// The name of the seed scenario, as the pack's contract gives it.
pub const SEED: &str = "approval-pause-resume-and-replay-refusal";

impl ApprovalResumePack {
    /// The turn that must pause, read off its terminal event.
    pub(super) fn pause(&self, label: &str, conversation: &str) -> Step {
        self.pausing(label, &self.pause_prompt, conversation)
    }

    /// `prompt`, a request that must pause as `pause_prompt` does.
    pub(super) fn pausing(&self, label: &str, prompt: &str, conversation: &str) -> Step {
        Step::prompt(label, prompt, conversation).asserting([
            Assertion::attribute_equals(PAUSED, Value::Bool(true)),
            Assertion::attribute_equals(PAUSE_NAME, Value::from(self.interaction_tool.as_str())),
            Assertion::attribute_equals(PAUSE_RESUMABLE, Value::Bool(self.resumable)),
        ])
    }

    /// The redemption through the deployment's own resume operation: the
    /// outcome came back, the token was bound to a checkpoint, the paused
    /// turn was rebuilt from it, and the interaction was not asked again.
    pub(super) fn resume(&self, label: &str, conversation: &str) -> Step {
        let tool = self.interaction_tool.as_str();
        Step::resume(label, self.answer.clone(), conversation).asserting([
            Assertion::attribute_equals(
                &self.resume_attribute,
                Value::from(self.resume_outcome.as_str()),
            ),
            Assertion::attribute_equals("resume_name", Value::from(tool)),
            Assertion::attribute_equals(&self.checkpoint_attribute, Value::Bool(true)),
            Assertion::attribute_equals(&self.continued_attribute, Value::Bool(self.resumable)),
            Assertion::tool_called(tool, 0),
        ])
    }

    /// The same retained token again, which must be refused by name.
    pub(super) fn replay(&self, label: &str, conversation: &str) -> Step {
        Step::resume(label, self.answer.clone(), conversation)
            .expecting(ErrorMatch::one_of(self.replay_error.iter().cloned()))
    }

    /// Whether the approval sits on the gated call itself: the pause is
    /// the gated tool's pending call.
    fn approval_on_the_call(&self) -> bool {
        self.gated_tool.as_deref() == Some(self.interaction_tool.as_str())
    }

    /// Where the deny-answer probe pauses and denies.
    fn denied_conversation(&self) -> String {
        format!("{}-deny", self.conversation)
    }

    /// The three steps of the seed scenario, in `conversation`.
    fn seed_steps(&self, conversation: &str) -> [Step; 3] {
        [
            self.pause("pause", conversation),
            self.resume("resume", conversation),
            self.replay("replay", conversation),
        ]
    }

    /// The seed scenario, exactly as the pack's contract fixes it: pause,
    /// resume, replay, with no restart.
    pub fn seed(&self) -> Scenario {
        Scenario::new(
            SEED,
            self.seed_steps(&self.conversation).into(),
            self.policy,
        )
    }

    /// The seed scenario and every enabled probe.
    pub fn scenarios(&self) -> Vec<Scenario> {
        let selection = Selection::new(&self.skip_probes);
        let mut scenarios = vec![self.seed()];
        for probe in PROBES {
            let given = match (probe.name, probe.needs) {
                ("approval/deny-answer", _) => self.denial().is_some(),
                ("approval/unfit-answer", _) => self.unfit().is_some(),
                ("approval/type-confused-answer", _) => !self.type_confused().is_empty(),
                (_, Some("amended_answer")) => self.amended_answer.is_some(),
                (_, None) => true,
                (_, Some("gated_tool")) => self.gated_tool.is_some(),
                (_, Some(_)) => false,
            };
            if selection.runs(probe, given) {
                scenarios.push(self.probe(probe.name));
            }
        }
        scenarios
    }

    fn probe(&self, name: &'static str) -> Scenario {
        let c = self.conversation.as_str();
        let probe = |steps: Vec<Step>| {
            Scenario::probe(name, steps.into_iter().map(kept).collect(), self.policy)
        };
        let [pause, resume, replay] = self.seed_steps(c);
        match name {
            "approval/restart-between-pause-and-resume" => {
                probe(vec![pause, resume, replay]).continued(RestartedResume { pack: self.clone() })
            }
            "approval/restart-before-replay" => probe(vec![pause, resume, replay.restarting(true)]),
            "approval/crash-inside-resume" => {
                probe(vec![pause, resume]).continued(CrashInsideResume { pack: self.clone() })
            }
            "approval/forged-token" => {
                // Every forgery is refused, and none spends the genuine
                // token: the resume after them still redeems it.
                let mut steps = vec![pause];
                steps.extend(Forgery::ALL.into_iter().map(|how| {
                    Step::resume(forged_label(how), self.answer.clone(), c)
                        .presenting(TokenSource::Forged(how))
                        .expecting(ErrorMatch::any())
                }));
                steps.extend([resume, replay]);
                probe(steps)
            }
            "approval/token-bound-to-conversation" => probe(vec![
                pause,
                Step::resume(
                    "foreign conversation",
                    self.answer.clone(),
                    format!("{c}-elsewhere"),
                )
                .presenting(TokenSource::Conversation(c.to_owned()))
                .expecting(ErrorMatch::any()),
                resume,
                replay,
            ]),
            "approval/two-conversations" => {
                let (a, b) = (format!("{c}-a"), format!("{c}-b"));
                probe(vec![
                    self.pause("pause a", &a),
                    self.pause("pause b", &b)
                        .asserting([Assertion::PauseTokenDistinct]),
                    self.resume("resume a", &a),
                    self.resume("resume b", &b),
                    self.replay("replay a", &a),
                    self.replay("replay b", &b),
                ])
            }
            "approval/token-predictable" => {
                // Three pauses side by side: none's token can be worked
                // out from the others', and the guess at the third from
                // the second neither redeems it nor spends it.
                let at = |n: u8| format!("{c}-guess-{n}");
                let unpredictable = [Assertion::PauseTokenUnpredictable];
                probe(vec![
                    self.pause("pause 1", &at(1)),
                    self.pause("pause 2", &at(2))
                        .asserting(unpredictable.clone()),
                    self.pause("pause 3", &at(3)).asserting(unpredictable),
                    Step::resume("guessed token", self.answer.clone(), at(3))
                        .presenting(TokenSource::Guessed(at(2)))
                        .expecting(ErrorMatch::any())
                        .asserting([Assertion::ledger_moved(0, 0, 0)]),
                    self.resume("resume 3", &at(3)),
                    self.replay("replay 3", &at(3)),
                ])
            }
            "approval/second-request" => {
                probe(vec![pause, resume, replay]).continued(SecondRequest { pack: self.clone() })
            }
            "approval/one-of-two" => probe(vec![pause, resume, replay])
                .continued(super::one_of_two::OneOfTwo { pack: self.clone() }),
            "approval/amended-answer" => {
                // The amendment is the answer: the seed's resume checks,
                // and the call it runs carries the change.
                let amended = format!("{c}-amended");
                let answer = self.amended_answer.clone().unwrap_or_default();
                let mut resume = self.resume("amended resume", &amended);
                resume.input = StepInput::Resume {
                    answer,
                    token: TokenSource::Own,
                    question: QuestionSource::Genuine,
                };
                probe(vec![
                    self.pause("pause", &amended),
                    resume.asserting([Assertion::AmendmentApplied {
                        tool: self.gated_tool.clone(),
                        arguments: self.amended_call.clone().unwrap_or_default(),
                    }]),
                    self.replay("replay", &amended),
                ])
            }
            "approval/edited-call" => {
                probe(vec![self.pause(
                    "pause",
                    &super::edited::EditedCall::conversation(self),
                )])
                .continued(super::edited::EditedCall { pack: self.clone() })
            }
            "approval/foreign-answer" => {
                probe(vec![pause, resume, replay]).continued(ForeignAnswer { pack: self.clone() })
            }
            "approval/pending-call-resolved" => {
                let tool = &self.interaction_tool;
                probe(vec![
                    pause.asserting([
                        Assertion::ToolPending {
                            tool: tool.clone(),
                            times: 1,
                        },
                        Assertion::tool_succeeded(tool, 0),
                    ]),
                    resume.asserting([Assertion::PendingResolved { tool: tool.clone() }]),
                ])
            }
            "approval/question-id-checked" => {
                probe(vec![pause]).continued(ForgedQuestion { pack: self.clone() })
            }
            "approval/gated-action" => {
                let gated = self.gated_tool.clone().unwrap_or_default();
                let effects = |n| Assertion::tool_effects(&gated, n, self.retries);
                if self.approval_on_the_call() {
                    // The pause is the gated call itself, pending: the
                    // approval settles it by running it once.
                    return probe(vec![
                        pause.asserting([
                            Assertion::ToolPending {
                                tool: gated.clone(),
                                times: 1,
                            },
                            Assertion::tool_succeeded(&gated, 0),
                            effects(0),
                        ]),
                        resume.asserting([
                            Assertion::PendingResolved {
                                tool: gated.clone(),
                            },
                            effects(1),
                        ]),
                        replay.asserting([effects(0)]),
                    ]);
                }
                probe(vec![
                    pause.asserting([Assertion::tool_succeeded(&gated, 0), effects(0)]),
                    resume.asserting([Assertion::tool_succeeded(&gated, 1), effects(1)]),
                    replay.asserting([effects(0)]),
                ])
            }
            "approval/deny-answer" => {
                let denied = self.denied_conversation();
                let deny = self.denial().unwrap_or_default();
                let Some(gated) = self.gated_tool.clone() else {
                    // Without the gated action's name, the denial is judged
                    // by the effects it leaves against the approval's.
                    return probe(vec![pause, resume])
                        .continued(DenialWithholds { pack: self.clone() });
                };
                let none = Assertion::tool_effects(&gated, 0, self.retries);
                let mut denial = Step::resume("deny", deny, &denied).asserting([
                    Assertion::tool_succeeded(&gated, 0),
                    Assertion::tool_called(&self.interaction_tool, 0),
                    none.clone(),
                ]);
                if self.approval_on_the_call() {
                    denial = denial.asserting([Assertion::PendingResolved {
                        tool: gated.clone(),
                    }]);
                }
                probe(vec![
                    self.pause("pause", &denied),
                    denial,
                    self.replay("replay", &denied).asserting([none]),
                ])
            }
            "approval/unfit-answer" => {
                let unfit = self.unfit().unwrap_or_default();
                probe(vec![
                    pause,
                    Step::resume("unfit answer", unfit, c)
                        .expecting(ErrorMatch::any())
                        .asserting([Assertion::ledger_moved(0, 0, 0)]),
                    resume,
                    replay,
                ])
            }
            "approval/type-confused-answer" => {
                // Each look-alike is refused and applies nothing. That a
                // refused answer leaves the token unspent is the
                // unfit-answer probe's to show.
                let mut steps = vec![pause];
                steps.extend(
                    self.type_confused()
                        .into_iter()
                        .enumerate()
                        .map(|(i, form)| {
                            Step::resume(format!("look-alike answer {}", i + 1), form, c)
                                .expecting(ErrorMatch::any())
                                .asserting([Assertion::ledger_moved(0, 0, 0)])
                        }),
                );
                probe(steps)
            }
            "approval/replicas" => probe(vec![
                pause,
                self.resume("resume on the second instance", c)
                    .on_second_instance(),
                self.replay("replay on the first instance", c),
                self.replay("replay on the second instance", c)
                    .on_second_instance(),
            ]),
            "approval/reset-between" => probe(super::reset::steps(self)),
            other => unreachable!("the approval pack has no probe {other}"),
        }
    }
}

/// After an uncrashed pause and resume: when the resume applied an effect
/// through the ledger and the deployment can be killed, the same pause from
/// fresh fixtures and a resume killed right after the ledger grants its
/// first new effect, the deployment rebuilt and the same resume (same
/// token) sent again, as a client retries. It must finish the turn with
/// the interrupted effect retried under its key and exactly the uncrashed
/// run's effects; then the replay is refused. Otherwise a note says why
/// nothing was crashed, and the probe runs the seed's replay.
struct CrashInsideResume {
    pack: ApprovalResumePack,
}

impl Continuation for CrashInsideResume {
    fn describe(&self) -> String {
        "when the uncrashed resume applied an effect through the ledger and the deployment runs \
         in a child process: fresh fixtures, pause, the resume killed right after its first new \
         effect is granted, the deployment rebuilt and the same resume sent again; the retry \
         returns the resume's record, retries the interrupted effect under its key \
         (CrashedEffectRetried) and ends with the uncrashed run's effects (EffectsApplied); then \
         the replay is refused"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let c = self.pack.conversation.as_str();
        let learned = session.steps();
        let (Some(paused), Some(resumed)) = (learned.first(), learned.last()) else {
            return;
        };
        let total = resumed.ledger.effects;
        let skipped = if total == paused.ledger.effects {
            Some("the resume applied no effect through the ledger, so there was none to crash at")
        } else if !session.can_crash() {
            Some(
                "the deployment runs on the harness's own thread, and a crash needs it in a \
                 child process (process isolation, or a process target)",
            )
        } else {
            None
        };
        if session.run(&self.pack.replay("replay", c)).is_none() {
            return;
        }
        if let Some(why) = skipped {
            session.unproven(format!("{why}; the probe ran the seed's replay only"));
            return;
        }
        if !session.reset("pause again") {
            return;
        }
        let crashed = self
            .pack
            .resume("resume killed at its first effect", c)
            .crashing_at_effect(1)
            .asserting([
                Assertion::CrashedEffectRetried,
                Assertion::EffectsApplied { effects: total },
            ]);
        for step in [
            self.pack.pause("pause again", c),
            crashed,
            self.pack.replay("replay after the crash", c),
        ] {
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
    }
}

/// After an approving pause and resume (which learn the approval's applied
/// effects, per tool): fresh fixtures, the same pause, and a resume with
/// the denial. The denial must return a record without asking again,
/// repeat nothing its pause applied, and leave out part of what the
/// approval did: of at least one tool the approval applied effects of,
/// fewer effects (whether the action would have run on the denial or
/// before any answer); effects of other tools (a notice that the request
/// was declined) are the denial's own. Then its token is spent. When the
/// approval applied no effect there is nothing to withhold, and a note
/// says so.
struct DenialWithholds {
    pack: ApprovalResumePack,
}

impl Continuation for DenialWithholds {
    fn describe(&self) -> String {
        "the approving run's applied effects learned per tool; fresh fixtures; the pause; the \
         denial, which returns a record, does not ask again, repeats no effect of its pause \
         under a new key (EffectNotRepeated) and leaves fewer effects than the approval of at \
         least one of the approval's tools (EffectsWithheld; effects of other tools, a notice \
         on denial, allowed); the replay of the denied token is refused"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let pack = &self.pack;
        let approved = crate::ledger::applied_by_tool(&session.context().ledger().events_since(0));
        let denied = pack.denied_conversation();
        if !session.reset("pause to deny") {
            return;
        }
        let mut deny = Step::resume("deny", pack.denial().unwrap_or_default(), &denied)
            .asserting([Assertion::tool_called(&pack.interaction_tool, 0)]);
        let nothing_to_withhold = approved.is_empty();
        if !nothing_to_withhold {
            deny = deny.asserting([Assertion::EffectsWithheld { approved }]);
        }
        for step in [
            pack.pause("pause to deny", &denied),
            deny,
            pack.replay("replay", &denied),
        ] {
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
        if nothing_to_withhold {
            session.note(
                "the approving resume applied no effect through the ledger, so the denial's \
                 effects could not be compared with it",
            );
        }
    }
}

/// After an approving pause, resume and replay (which learn the approval's
/// own effects, per tool, from the resume): the same request again in the
/// same conversation, then in a fresh one. Each must pause for a person
/// again, or attempt no effect of a tool the approval applied.
struct SecondRequest {
    pack: ApprovalResumePack,
}

impl Continuation for SecondRequest {
    fn describe(&self) -> String {
        "the approving resume's applied effects learned per tool; `same request again`: \
         `pause_prompt` in `conversation` once more, and `same request elsewhere`: in \
         `<conversation>-again`; each pauses for a person again, or attempts no effect of a tool \
         the approval applied (AskedOrWithheld)"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let pack = &self.pack;
        let Some(approved) = resume_effects(session) else {
            session.unproven(
                "the approving resume applied no effect through the ledger, so a second request \
                 could not be told from a granted one; the probe ran the seed's steps only",
            );
            return;
        };
        let again = format!("{}-again", pack.conversation);
        for (label, conversation) in [
            ("same request again", pack.conversation.as_str()),
            ("same request elsewhere", again.as_str()),
        ] {
            let step = Step::prompt(label, &pack.pause_prompt, conversation).asserting([
                Assertion::AskedOrWithheld {
                    approved: approved.clone(),
                },
            ]);
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
    }
}

/// After an uncrashed pause, resume and replay (which learn one approval's
/// effects, per tool): fresh fixtures, the pause, a real restart, and the
/// resume, which must carry the request out as the uncrashed one did, not
/// only report success; then the replay is refused. When the approval
/// applied nothing through the ledger, the restarted resume is judged by
/// its record alone, and a note says so.
struct RestartedResume {
    pack: ApprovalResumePack,
}

impl Continuation for RestartedResume {
    fn describe(&self) -> String {
        "the uncrashed resume's applied effects learned per tool; fresh fixtures; the pause; a \
         restart; the resume, which returns the seed's record and attempts at least and applies \
         at most the uncrashed approval's effects of each of its tools (EffectsOfOneApproval); \
         the replay is refused"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let pack = &self.pack;
        let c = pack.conversation.as_str();
        let approved = resume_effects(session);
        if !session.reset("pause before the restart") {
            return;
        }
        let mut resume = pack.resume("resume after the restart", c).restarting(true);
        match approved {
            Some(approved) => {
                resume = resume.asserting([Assertion::EffectsOfOneApproval {
                    approved,
                    retries: pack.retries,
                }]);
            }
            None => session.note(
                "the uncrashed resume applied no effect through the ledger, so the restarted \
                 resume was judged by its record alone",
            ),
        }
        for step in [
            pack.pause("pause before the restart", c),
            resume,
            pack.replay("replay", c),
        ] {
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
    }
}

/// After an approving pause, resume and replay (which learn one approval's
/// effects, per tool): fresh fixtures, the pause, and an approval from
/// someone not entitled (`foreign_answer`, or derived from the approvers
/// the pause publishes). It may be refused with an error or answered with
/// a record; either way it withholds what the approval carries out and
/// leaves the token unspent: the seed's resume then carries the request
/// out once, and the replay is refused. When neither spells an outsider's
/// answer, the pause is resumed as the seed does and a note says why.
struct ForeignAnswer {
    pack: ApprovalResumePack,
}

impl Continuation for ForeignAnswer {
    fn describe(&self) -> String {
        "the approving resume's applied effects learned per tool; fresh fixtures; `pause` in \
         `<conversation>-foreign`; `foreign answer`: a resume with `foreign_answer` (or, without \
         it, `answer` with the field the pause's published approvers name set to a name not on \
         their list), which may return a record or fail with any error, but leaves fewer \
         effects than the approval of at least one of its tools (EffectsWithheld); `resume`: \
         the seed's resume, so the token was left unspent, carrying the request out once \
         (EffectsOfOneApproval); `replay` is refused"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let pack = &self.pack;
        let approved = resume_effects(session);
        let foreign = format!("{}-foreign", pack.conversation);
        if !session.reset("pause") {
            return;
        }
        if session.run(&kept(pack.pause("pause", &foreign))).is_none() {
            return;
        }
        let published = session
            .last_record()
            .and_then(|record| record.pause())
            .and_then(|pause| pause.approvers.clone());
        let Some(outsider) = pack.foreign(published.as_deref()) else {
            session.unproven(
                "the pause published no approvers (`Pause::answered_by`) and no `foreign_answer` \
                 was given, so an answer from someone not entitled could not be spelled; the \
                 probe resumed the pause as the seed does",
            );
            for step in [
                pack.resume("resume", &foreign),
                pack.replay("replay", &foreign),
            ] {
                if session.run(&kept(step)).is_none() {
                    return;
                }
            }
            return;
        };
        let mut answer = Step::resume("foreign answer", outsider, &foreign)
            .record_or_any_error()
            .asserting([Assertion::tool_called(&pack.interaction_tool, 0)]);
        let mut resume = pack.resume("resume", &foreign);
        match approved {
            Some(approved) => {
                answer = answer.asserting([Assertion::EffectsWithheld {
                    approved: approved.clone(),
                }]);
                resume = resume.asserting([Assertion::EffectsOfOneApproval {
                    approved,
                    retries: pack.retries,
                }]);
            }
            None => {
                answer = answer.asserting([Assertion::ledger_moved(0, 0, 0)]);
                session.note(
                    "the approving resume applied no effect through the ledger, so the foreign \
                     answer was held to an unmoved ledger and an unspent token",
                );
            }
        }
        for step in [answer, resume, pack.replay("replay", &foreign)] {
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
    }
}

/// The label of the forged-token probe's step presenting a token forged
/// `how`.
fn forged_label(how: Forgery) -> &'static str {
    match how {
        Forgery::Value => "forged token",
        Forgery::LetterCase => "forged token (letter case)",
        Forgery::Truncated => "forged token (truncated)",
        Forgery::Extended => "forged token (extended)",
    }
}

/// After the pause: a resume passing a forged question id must be refused,
/// then the genuine redemption and the replay refusal as in the seed. When
/// the pause published no question id there is nothing to forge; the trial
/// says so in a note and goes on with the seed's steps.
struct ForgedQuestion {
    pack: ApprovalResumePack,
}

impl Continuation for ForgedQuestion {
    fn describe(&self) -> String {
        "when the pause published a question id: a resume passing a forged id must fail with an \
         error; then the seed's resume and replay"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let c = self.pack.conversation.as_str();
        let published = session
            .retained(c)
            .is_some_and(|pause| pause.question_id.is_some());
        if published {
            let forged = Step::resume("forged question id", self.pack.answer.clone(), c)
                .addressing(QuestionSource::Forged)
                .expecting(ErrorMatch::any());
            if session.run(&forged).is_none() {
                return;
            }
        } else {
            session.unproven(
                "the pause published no question id, so there was none to forge; \
                 the probe ran the seed's resume and replay only",
            );
        }
        for step in [self.pack.resume("resume", c), self.pack.replay("replay", c)] {
            if session.run(&kept(step)).is_none() {
                return;
            }
        }
    }
}
