//! The checks every step of every approval probe carries beyond the seed's:
//! the probes' scenarios and their continuations all run their steps
//! through [`kept`], so it sits below both.

use crate::assertion::Assertion;
use crate::scenario::{Expect, Step, StepInput};

/// `step`, which also keeps every genuine token from the model when it
/// returns a record, and, when it answers a pause, repeats none of the
/// pause's effects under a new key: every step of every probe checks
/// both, the seed stays as its contract fixes it.
pub(super) fn kept(step: Step) -> Step {
    let resumes = matches!(step.input, StepInput::Resume { .. });
    match step.expect {
        Expect::Record if resumes => {
            step.asserting([Assertion::TokenKeptFromModel, Assertion::EffectNotRepeated])
        }
        Expect::Record => step.asserting([Assertion::TokenKeptFromModel]),
        Expect::Error(_) | Expect::RecordOrAnyError => step,
    }
}
