//! Probes: the scenarios a pack runs beside its seed scenario, each named
//! for what it proves.
//!
//! A seed scenario holds one of each thing (one draft, one conversation, one
//! pause, the genuine token only, one turn) and restarts at one fixed place,
//! so it cannot tell a working deployment from many that only look like
//! one. Probes vary exactly that: where the restart falls (placement), how
//! many of a thing there are and whether forged or foreign inputs are
//! refused (multiplicity), and whether the evidence matches what the harness
//! recomputes from the content the deployment published (binding). Each is
//! reported on its own, so a reader sees "fails only after a restart" at a
//! glance.

/// One probe a pack can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// `pack/what-it-proves`: the scenario's name, and what `skip_probes`
    /// names to switch it off.
    pub name: &'static str,
    /// The failure it exists to catch, in a sentence.
    pub catches: &'static str,
    /// The argument that enables it; `None` when it runs by default.
    pub needs: Option<&'static str>,
}

impl Probe {
    /// A probe that runs unless skipped.
    pub(crate) const fn default_on(name: &'static str, catches: &'static str) -> Self {
        Self {
            name,
            catches,
            needs: None,
        }
    }

    /// A probe that runs when `argument` is given.
    pub(crate) const fn enabled_by(
        name: &'static str,
        argument: &'static str,
        catches: &'static str,
    ) -> Self {
        Self {
            name,
            catches,
            needs: Some(argument),
        }
    }
}

/// Which probes a pack run includes.
pub(crate) struct Selection<'a> {
    skipped: &'a [String],
}

impl<'a> Selection<'a> {
    pub(crate) fn new(skipped: &'a [String]) -> Self {
        Self { skipped }
    }

    /// Whether `probe` runs: not skipped, and enabled (`given` says whether
    /// the argument it needs was given; probes on by default pass `true`).
    pub(crate) fn runs(&self, probe: &Probe, given: bool) -> bool {
        given && !self.skipped.iter().any(|name| name == probe.name)
    }
}

#[cfg(test)]
mod tests {
    use crate::packs::PackKind;

    #[test]
    fn every_probe_is_named_for_its_pack_and_described_in_plain_prose() {
        for kind in [
            PackKind::Procedural,
            PackKind::ApprovalResume,
            PackKind::ExtensionTool,
            PackKind::ExactlyOnce,
        ] {
            for probe in kind.probes() {
                let (pack, what) = probe.name.split_once('/').expect("pack/what");
                assert!(kind.name().starts_with(pack), "{}", probe.name);
                assert!(!what.is_empty() && !what.contains(' '), "{}", probe.name);
                // `explain` and the README print these sentences: a broken
                // line continuation shows up as a run of spaces.
                assert!(!probe.catches.contains("  "), "{}", probe.name);
                assert!(!probe.catches.trim().is_empty(), "{}", probe.name);
            }
        }
    }
}
