//! What the UI cases share: a deployment for cases that only need the
//! attributes to compile.

use symfonic_evals::{CapabilityEvidence, PromptRequest, Target, TurnError, TurnRecord};

/// A deployment that declares nothing and answers every turn with an empty
/// record.
pub struct Inert;

impl Target for Inert {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}
