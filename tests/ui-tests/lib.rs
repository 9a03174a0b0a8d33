//! What the UI cases share: a deployment for cases that only need the
//! attributes to compile, and each pass case's own registrations.

use symfonic_evals::{
    registered_packs, CapabilityEvidence, PromptRequest, RegisteredPack, Target, TurnError,
    TurnRecord,
};

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

/// The packs the attributes written in `module` (its `module_path!()`) and
/// the modules inside it registered, in the registry's order. The program
/// that holds several pass cases registers them all; each case checks its
/// own.
pub fn registered_in(module: &str) -> Vec<&'static RegisteredPack> {
    registered_packs()
        .into_iter()
        .filter(|pack| {
            pack.module()
                .strip_prefix(module)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
        .collect()
}
