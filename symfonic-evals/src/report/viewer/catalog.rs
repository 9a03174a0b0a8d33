//! What each scenario a pack can run is for, in a line, and where its
//! contract is documented: read from the packs' own probe list (the
//! sentence each probe carries saying the failure it exists to catch), so
//! the overview's legend cannot drift from the probes that run.

use crate::PackKind;

/// Every pack, in the order the overview's columns show them.
pub(super) const PACKS: [PackKind; 4] = [
    PackKind::Procedural,
    PackKind::ApprovalResume,
    PackKind::ExtensionTool,
    PackKind::ExactlyOnce,
];

/// The pack a report names, if this build knows it.
pub(super) fn pack_named(name: &str) -> Option<PackKind> {
    PACKS.into_iter().find(|kind| kind.name() == name)
}

/// The pack's contract page: the documentation of its definition type,
/// for the harness version that wrote the overview.
pub(super) fn contract_page(kind: PackKind) -> String {
    let item = match kind {
        PackKind::Procedural => "ProceduralPack",
        PackKind::ApprovalResume => "ApprovalResumePack",
        PackKind::ExtensionTool => "ExtensionToolPack",
        PackKind::ExactlyOnce => "ExactlyOncePack",
    };
    format!(
        "https://docs.rs/symfonic-evals/{}/symfonic_evals/struct.{item}.html",
        env!("CARGO_PKG_VERSION")
    )
}

/// One scenario of a pack, as the legend lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Purpose {
    /// The scenario's name.
    pub(super) scenario: &'static str,
    /// What it is for, in a sentence.
    pub(super) purpose: &'static str,
}

/// The seed scenario's line: what every probe varies.
const SEED_PURPOSE: &str =
    "The seed scenario: the pack's contract, step by step, one of each thing, one restart.";

/// Every scenario the pack can run: the seed, then each probe with the
/// failure it exists to catch.
pub(super) fn purposes(kind: PackKind) -> Vec<Purpose> {
    std::iter::once(Purpose {
        scenario: kind.seed_scenario(),
        purpose: SEED_PURPOSE,
    })
    .chain(kind.probes().iter().map(|probe| Purpose {
        scenario: probe.name,
        purpose: probe.catches,
    }))
    .collect()
}

/// What the scenario `name` is for, if a pack this build knows runs it.
pub(super) fn purpose_of(name: &str) -> Option<&'static str> {
    PACKS
        .into_iter()
        .flat_map(purposes)
        .find(|p| p.scenario == name)
        .map(|p| p.purpose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pack_has_its_seed_and_probes_each_with_a_purpose_and_a_contract_page() {
        for kind in PACKS {
            assert_eq!(pack_named(kind.name()), Some(kind));
            let listed = purposes(kind);
            assert_eq!(listed[0].scenario, kind.seed_scenario());
            assert_eq!(listed.len(), 1 + kind.probes().len());
            assert!(listed.iter().all(|p| !p.purpose.is_empty()));
            assert!(contract_page(kind).ends_with("Pack.html"));
        }
        assert_eq!(pack_named("no-such-pack"), None);
        let probe = PackKind::ApprovalResume.probes()[0];
        assert_eq!(purpose_of(probe.name), Some(probe.catches));
    }
}
