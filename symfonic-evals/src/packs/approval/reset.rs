//! The `approval/reset-between` probe: a conversation paused, then reset
//! through the deployment's declared `reset` operation; the token issued
//! before the reset is refused after it, applies nothing, and a fresh
//! prompt in the same conversation pauses anew.
//!
//! A reset is a user starting over or cancelling what is in flight: an
//! approval asked for before it must not be redeemable once the user has
//! walked away from it, or a stale link in an inbox carries out a request
//! the user cancelled.

use super::ApprovalResumePack;
use crate::assertion::Assertion;
use crate::scenario::{ErrorMatch, Step};

/// Where the probe pauses and resets.
pub(super) fn conversation(pack: &ApprovalResumePack) -> String {
    format!("{}-reset", pack.conversation)
}

/// The probe's steps: pause, reset (a record), the pre-reset token refused
/// with any error and no ledger movement, then a fresh pause in the same
/// conversation that resumes once and refuses its replay (the deployment
/// still works after a reset; it did not just stop answering).
pub(super) fn steps(pack: &ApprovalResumePack) -> Vec<Step> {
    let c = conversation(pack);
    vec![
        pack.pause("pause", &c),
        Step::reset("reset", &c),
        Step::resume("pre-reset token", pack.answer.clone(), &c)
            .expecting(ErrorMatch::any())
            .asserting([Assertion::ledger_moved(0, 0, 0)]),
        pack.pause("fresh pause", &c),
        pack.resume("fresh resume", &c),
        pack.replay("fresh replay", &c),
    ]
}
