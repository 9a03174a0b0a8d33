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
    /// The operation or trait the deployment must declare for it to run
    /// (the structured review door, replicas); `None` when its pack's own
    /// requirements are enough. Declared, it runs by default.
    pub declared: Option<&'static str>,
}

impl Probe {
    /// A probe that runs unless skipped.
    pub(crate) const fn default_on(name: &'static str, catches: &'static str) -> Self {
        Self {
            name,
            catches,
            needs: None,
            declared: None,
        }
    }

    /// A probe that runs by default on a deployment declaring `operation`
    /// (an operation or a trait).
    pub(crate) const fn on_declaring(
        name: &'static str,
        operation: &'static str,
        catches: &'static str,
    ) -> Self {
        Self {
            name,
            catches,
            needs: None,
            declared: Some(operation),
        }
    }

    /// The flaw it catches, in a clause: the first clause of
    /// [`catches`](Self::catches), up to its colon or its first ", or" /
    /// ", and". A coverage line names it beside the argument that would
    /// run the probe, so a reader sees what is left unchecked, not only
    /// which argument is missing.
    pub fn flaw(&self) -> &'static str {
        let text = self.catches;
        let mut depth = 0usize;
        let end = text
            .char_indices()
            .find(|&(at, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                // A cut inside parentheses would leave one unclosed.
                depth == 0
                    && [":", ", or ", ", and "]
                        .iter()
                        .any(|cut| text[at..].starts_with(cut))
            })
            .map_or(text.len(), |(at, _)| at);
        text[..end].trim_end_matches(['.', ','])
    }

    /// The same probe, needing `argument` as well as its declaration.
    pub(crate) const fn and_needs(mut self, argument: &'static str) -> Self {
        self.needs = Some(argument);
        self
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
            declared: None,
        }
    }
}

/// A probe a pack run left out, and why. Only probe and argument names:
/// never an argument's value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProbeNotRun {
    /// The probe's name (`pack/what-it-proves`).
    pub probe: String,
    /// Why it did not run.
    #[serde(flatten)]
    pub reason: NotRunReason,
}

/// Why a probe did not run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NotRunReason {
    /// The argument that enables it was not given.
    Needs {
        /// The argument's name.
        argument: String,
        /// The flaw the probe would catch, in a clause (its
        /// [`Probe::flaw`]); empty in reports written before it was kept.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        catches: String,
    },
    /// Switched off by `skip_probes`.
    Skipped,
    /// The deployment does not declare the operation (or trait) it needs.
    Undeclared {
        /// The operation's or trait's name.
        operation: String,
    },
    /// On by default, but these arguments leave nothing for it to prove
    /// (the seed already does what it would).
    NotApplicable {
        /// In a few words, naming arguments only.
        why: String,
    },
    /// An earlier scenario of the run hung (a step ran out of time), so
    /// this one was not started: it would have waited out the step limit
    /// again on the same deployment.
    DeploymentHung {
        /// The scenario in which the deployment hung.
        scenario: String,
    },
    /// It ran, but the deployment published nothing its own check needs
    /// (no approvers, no question id, no effect through the ledger): its
    /// steps were the seed's and passed, which proves nothing new.
    NothingToJudge {
        /// Report-safe, in a sentence: what was missing.
        why: String,
    },
}

/// What a probe that is on by default says when its pack's arguments leave
/// it out and the pack gives no reason of its own.
pub(crate) const NOT_APPLICABLE: &str = "not applicable to these arguments";

impl std::fmt::Display for NotRunReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Needs { argument, catches } if catches.is_empty() => {
                write!(f, "add `{argument}` to run it")
            }
            Self::Needs { argument, catches } => {
                write!(f, "add `{argument}` to catch {catches}")
            }
            Self::Skipped => f.write_str("skipped by skip_probes"),
            Self::Undeclared { operation } => {
                write!(f, "the deployment does not declare `{operation}`")
            }
            Self::NotApplicable { why } => f.write_str(why),
            Self::DeploymentHung { scenario } => {
                write!(f, "not started: the deployment hung in {scenario}")
            }
            Self::NothingToJudge { why } => write!(f, "ran, with nothing to judge: {why}"),
        }
    }
}

impl std::fmt::Display for ProbeNotRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.probe, self.reason)
    }
}

/// The probes of `probes` that are not in `ran`, each with its reason:
/// `needs` when it has an argument to be enabled by and would not run even
/// unskipped (`would_run` says what runs with `skip_probes` cleared),
/// skipped when `skipped` names it, else `placement`'s reason for it or
/// "not applicable to these arguments".
pub(crate) fn not_run(
    probes: &[Probe],
    ran: &[&str],
    would_run: &[&str],
    skipped: &[String],
    declared: Option<&crate::capability::CapabilityEvidence>,
    placement: impl Fn(&str) -> Option<String>,
) -> Vec<ProbeNotRun> {
    probes
        .iter()
        .filter(|probe| !ran.contains(&probe.name))
        .map(|probe| {
            let is_skipped = skipped.iter().any(|name| name == probe.name);
            let undeclared = probe.declared.filter(|operation| {
                !is_skipped && declared.is_some_and(|evidence| !evidence.declares(operation))
            });
            let reason = match (undeclared, probe.needs) {
                (Some(operation), _) => NotRunReason::Undeclared {
                    operation: operation.to_owned(),
                },
                (None, Some(argument)) if !would_run.contains(&probe.name) => NotRunReason::Needs {
                    argument: argument.to_owned(),
                    catches: probe.flaw().to_owned(),
                },
                _ if is_skipped => NotRunReason::Skipped,
                _ => NotRunReason::NotApplicable {
                    why: placement(probe.name).unwrap_or_else(|| NOT_APPLICABLE.to_owned()),
                },
            };
            ProbeNotRun {
                probe: probe.name.to_owned(),
                reason,
            }
        })
        .collect()
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
    use super::{NotRunReason, Probe};
    use crate::packs::PackKind;

    #[test]
    fn a_probe_left_for_want_of_an_argument_names_the_flaw_it_would_catch() {
        let probe = Probe::enabled_by(
            "procedural/decoy-stays-draft",
            "decoy_demonstrations",
            "a review that approves every draft, or a second draft that leaks into recall",
        );
        assert_eq!(probe.flaw(), "a review that approves every draft");
        let colon = Probe::enabled_by("p/q", "x", "a gate judged by tool name: another wording");
        assert_eq!(colon.flaw(), "a gate judged by tool name");
        let aside = Probe::enabled_by(
            "p/q",
            "x",
            "a count over turns (since first seen, or all): x",
        );
        assert_eq!(
            aside.flaw(),
            "a count over turns (since first seen, or all)"
        );
        let reason = NotRunReason::Needs {
            argument: "decoy_demonstrations".into(),
            catches: probe.flaw().into(),
        };
        assert_eq!(
            reason.to_string(),
            "add `decoy_demonstrations` to catch a review that approves every draft"
        );
        // A report written before the flaw was kept still reads.
        let old: NotRunReason =
            serde_json::from_str(r#"{"reason": "needs", "argument": "gated_tool"}"#).unwrap();
        assert_eq!(old.to_string(), "add `gated_tool` to run it");
    }

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
                // The coverage line quotes the flaw of a probe left for
                // want of its argument: a clause, not the whole sentence.
                let flaw = probe.flaw();
                assert!(
                    probe.needs.is_none() || (12..=160).contains(&flaw.len()),
                    "{}: {flaw:?}",
                    probe.name
                );
            }
        }
    }
}
