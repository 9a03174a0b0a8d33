//! `approval/one-of-two`: two requests pending, one approved. One approval
//! carries out one request (counted per tool), and, where two requests
//! wait in one conversation, the request whose token was presented: the
//! effects of each are told apart by their arguments' digests, learned
//! from the runs where the same request waited alone.

use super::kept::kept;
use super::learned::resume_events;
use super::ApprovalResumePack;
use crate::assertion::Assertion;
use crate::ledger::{applied_by_tool, arguments_by_tool, ArgumentsByTool, LedgerEvent};
use crate::runner::Session;
use crate::scenario::{Continuation, Step, TokenSource};

/// After an approving pause, resume and replay (which learn one approval's
/// effects, per tool): fresh fixtures, two requests paused in two
/// conversations, the first approved. Its resume carries out its own
/// request and no other; the second still pends and resumes on its own;
/// both tokens are spent after. On a deployment declaring
/// [`CONCURRENT_PAUSES`](crate::CONCURRENT_PAUSES), with `second_prompt`:
/// fresh fixtures again and the same in one conversation, the earlier of
/// the two pauses approved first (so a desk that answers the
/// conversation's latest pause whatever the token is seen), and the
/// earlier request's effects, where its arguments are the same in all
/// three conversations it ran in alone, must be its own resume's.
pub(super) struct OneOfTwo {
    pub(super) pack: ApprovalResumePack,
}

impl Continuation for OneOfTwo {
    fn describe(&self) -> String {
        "the approving resume's applied effects learned per tool; fresh fixtures; `pause one` in \
         `<conversation>-one` and `pause two` in `<conversation>-two`; `resume one` attempts at \
         least and applies at most one approval's effects of each of its tools \
         (EffectsOfOneApproval); `resume two` returns a record and does the same; both replays \
         are refused. Where the deployment declares `concurrent-pauses` and `second_prompt` is \
         given: fresh fixtures; in `<conversation>-both`, `pause first` (`pause_prompt`) and \
         `pause second` (`second_prompt`); `resume first`, presenting the first pause's token, \
         and `resume second`, presenting the second's, each carry out one approval's effects \
         (EffectsOfOneApproval); where `pause_prompt`'s effects carried the same arguments in \
         `<conversation>`, `-one` and `-two`, `resume second` finds them carried out by \
         `resume first`, not by itself, and no effect attempted by both (RequestsNotCrossed); \
         both replays are refused"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        // `None` is the trial having ended; there is nothing more to run.
        let _ = self.steps(session);
    }
}

impl OneOfTwo {
    fn steps(&self, session: &mut Session<'_>) -> Option<()> {
        let pack = &self.pack;
        let seed = resume_events(session);
        let approved = applied_by_tool(&seed);
        if approved.is_empty() {
            session.unproven(
                "the approving resume applied no effect through the ledger, so one approval's \
                 effects could not be told from two; the probe ran the seed's steps only",
            );
            return Some(());
        }
        let (one, two) = (
            format!("{}-one", pack.conversation),
            format!("{}-two", pack.conversation),
        );
        if !session.reset("pause one") {
            return None;
        }
        let of_one = [Assertion::EffectsOfOneApproval {
            approved,
            retries: pack.retries,
        }];
        for step in [pack.pause("pause one", &one), pack.pause("pause two", &two)] {
            run_counting(session, &kept(step))?;
        }
        // The request's arguments as each of its lone resumes carried them.
        let mut witnesses = vec![arguments_by_tool(&seed)];
        for step in [
            pack.resume("resume one", &one).asserting(of_one.clone()),
            pack.resume("resume two", &two).asserting(of_one.clone()),
        ] {
            witnesses.push(arguments_by_tool(&run_counting(session, &kept(step))?));
        }
        for step in [
            pack.replay("replay one", &one),
            pack.replay("replay two", &two),
        ] {
            run_counting(session, &kept(step))?;
        }
        let declared = session.declares(crate::CONCURRENT_PAUSES);
        let Some(second) = pack.second_prompt.as_deref().filter(|_| declared) else {
            session.note(if declared {
                "the two requests were paused in two conversations only: the form with both in \
                 one conversation needs `second_prompt`, another request of the same kind"
            } else {
                "the two requests were paused in two conversations only: the form with both in \
                 one conversation runs on a deployment declaring `concurrent-pauses` (with \
                 `second_prompt`)"
            });
            return Some(());
        };
        let request = same_everywhere(&witnesses);
        if request.is_none() {
            session.note(
                "the request's effects carried no arguments, or other arguments in each \
                 conversation, so which of two requests a resume carried out was not judged; \
                 each was held to one approval's effects per tool",
            );
        }
        let both = format!("{}-both", pack.conversation);
        if !session.reset("pause first") {
            return None;
        }
        for step in [
            pack.pause("pause first", &both),
            pack.pausing("pause second", second, &both),
        ] {
            run_counting(session, &kept(step))?;
        }
        let answer = |label: &str, of: &str| {
            pack.resume(label, &both)
                .presenting(TokenSource::Step(of.into()))
                .asserting(of_one.clone())
        };
        let first = run_counting(session, &kept(answer("resume first", "pause first")))?;
        let mut resume_second = answer("resume second", "pause second");
        if let Some(request) = request {
            resume_second = resume_second.asserting([Assertion::RequestsNotCrossed {
                request,
                earlier: arguments_by_tool(&first),
            }]);
        }
        for step in [
            resume_second,
            pack.replay("replay first", &both)
                .presenting(TokenSource::Step("pause first".into())),
            pack.replay("replay second", &both)
                .presenting(TokenSource::Step("pause second".into())),
        ] {
            run_counting(session, &kept(step))?;
        }
        Some(())
    }
}

/// Runs `step` and returns the ledger attempts it made; `None` once the
/// trial has ended.
fn run_counting(session: &mut Session<'_>, step: &Step) -> Option<Vec<LedgerEvent>> {
    let before = session.context().ledger().counts().attempts;
    session.run(step)?;
    let from = usize::try_from(before).unwrap_or(usize::MAX);
    Some(session.context().ledger().events_since(from))
}

/// The argument digests every witness's effects carried, when all agree
/// and carry some: the request's effects are then told by their arguments
/// alone, whatever conversation they ran in.
fn same_everywhere(witnesses: &[ArgumentsByTool]) -> Option<ArgumentsByTool> {
    let (first, rest) = witnesses.split_first()?;
    let agreed = !first.is_empty() && rest.iter().all(|w| w == first);
    agreed.then(|| first.clone())
}

#[cfg(test)]
mod tests {
    use super::same_everywhere;
    use crate::ledger::ArgumentsByTool;

    fn witness(digest: &str) -> ArgumentsByTool {
        ArgumentsByTool::from([("cancel".to_owned(), [digest.to_owned()].into())])
    }

    #[test]
    fn a_request_is_told_by_its_arguments_only_where_every_run_agrees() {
        let agreed = same_everywhere(&[witness("a"), witness("a"), witness("a")]);
        assert_eq!(agreed, Some(witness("a")));
        assert_eq!(same_everywhere(&[witness("a"), witness("b")]), None);
        assert_eq!(same_everywhere(&[ArgumentsByTool::new()]), None);
        assert_eq!(same_everywhere(&[]), None);
    }
}
