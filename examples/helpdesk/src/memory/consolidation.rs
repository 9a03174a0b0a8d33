//! The consolidation cycle and its default, rule-based extractor.
//!
//! After every customer turn the cycle hands the recent episodes to an
//! extractor (anything implementing the library's `ProceduralExtractor`)
//! and stores what it proposes as drafts. A draft is inert: the recall block
//! and the gate read approved procedures only, so nothing learned here
//! changes behaviour until an operator approves it through the review door.
//! The cycle reports how many drafts it promoted (inserted or reinforced),
//! and that number, not a turn counter, is what the desk publishes.

use std::collections::{BTreeMap, BTreeSet};

use symfonic_evals::contracts::{
    extract_contained, Episode, ExtractionReport, Precondition, ProceduralDraft,
    ProceduralExtractor, ProceduralKind,
};

use crate::store::{Promotion, Store};

/// What one consolidation cycle did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CycleReport {
    /// Drafts inserted or reinforced by this cycle.
    pub promoted: u64,
    /// Episodes the cycle read.
    pub episodes: u64,
    /// Extractor errors contained during the cycle.
    pub extractor_errors: u32,
}

/// Runs one cycle over the recent episodes.
///
/// # Errors
///
/// On a database error; a broken extractor is contained and only counted.
pub fn run_cycle(
    store: &Store,
    extractor: &dyn ProceduralExtractor,
) -> rusqlite::Result<CycleReport> {
    let episodes = super::recent(store)?;
    let report = extract_contained(extractor, &episodes);
    let mut promoted = 0;
    for draft in &report.drafts {
        if store.promote_draft(draft)? != Promotion::Unchanged {
            promoted += 1;
        }
    }
    Ok(CycleReport {
        promoted,
        episodes: episodes.len() as u64,
        extractor_errors: report.errors,
    })
}

/// The default extractor: two rules over tool sequences, no model needed.
///
/// - **preflight**: a verification tool called right next to another tool
///   (before it, or as the recovery right after it failed) in at least
///   `preflight_support` episodes becomes "before that tool, verify first";
/// - **action**: a tool that ended at least `action_support` turns whose
///   requests start with the same word becomes "when asked to ..., call it".
#[derive(Debug, Clone)]
pub struct RuleExtractor {
    /// Read-only verification tools and what each verifies, in words.
    pub verifications: BTreeMap<String, String>,
    /// Episodes needed before a preflight draft is proposed.
    pub preflight_support: usize,
    /// Episodes needed before an action draft is proposed.
    pub action_support: usize,
    /// Count a preflight's support over every episode since the pairing
    /// was first seen rather than over the episodes that show it: the
    /// `PromotionCountsTurnsSinceFirstSeen` twin's threshold, which one
    /// demonstration and any later turn reach.
    pub support_since_first_seen: bool,
}

impl Default for RuleExtractor {
    fn default() -> Self {
        Self {
            verifications: BTreeMap::from([(
                "lookup_account".to_owned(),
                "verify the account region".to_owned(),
            )]),
            preflight_support: 2,
            action_support: 4,
            support_since_first_seen: false,
        }
    }
}

fn confidence(support: usize) -> f64 {
    let n = support as f64;
    n / (n + 1.0)
}

impl RuleExtractor {
    fn preflights(&self, episodes: &[Episode]) -> Vec<ProceduralDraft> {
        let mut support: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
        for episode in episodes {
            for pair in episode.tools.windows(2) {
                let (a, b) = (pair[0].as_str(), pair[1].as_str());
                let pairing = match (
                    self.verifications.contains_key(a),
                    self.verifications.contains_key(b),
                ) {
                    (true, false) => Some((b, a)),
                    (false, true) => Some((a, b)),
                    _ => None,
                };
                if let Some(key) = pairing {
                    support.entry(key).or_default().insert(&episode.id);
                }
            }
        }
        // How many episodes a pairing counts as support: those that show
        // it, or (the twin's) every episode from the first that did.
        let counted = |ids: &BTreeSet<&str>| {
            if !self.support_since_first_seen {
                return ids.len();
            }
            episodes
                .iter()
                .position(|e| ids.contains(e.id.as_str()))
                .map_or(0, |first| episodes.len() - first)
        };
        support
            .into_iter()
            .filter(|(_, ids)| counted(ids) >= self.preflight_support)
            .map(|((tool, verifier), ids)| {
                let rationale = format!(
                    "{verifier} was needed next to {tool} in {} episodes",
                    ids.len()
                );
                ids.iter()
                    .fold(
                        ProceduralDraft::builder(
                            ProceduralKind::Preflight,
                            format!("before {tool}"),
                            self.verifications[verifier].clone(),
                            rationale,
                        )
                        .confidence(confidence(ids.len()))
                        .precondition(Precondition::One(verifier.to_owned())),
                        |draft, id| draft.source_episode(*id),
                    )
                    .build()
            })
            .collect()
    }

    fn actions(&self, episodes: &[Episode]) -> Vec<ProceduralDraft> {
        let mut support: BTreeMap<(String, &str), BTreeSet<&str>> = BTreeMap::new();
        for episode in episodes {
            let verb = episode
                .prompt
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_lowercase();
            let last = episode.tools.last().map(String::as_str);
            if let Some(tool) = last.filter(|t| !self.verifications.contains_key(*t)) {
                support.entry((verb, tool)).or_default().insert(&episode.id);
            }
        }
        support
            .into_iter()
            .filter(|((verb, _), ids)| !verb.is_empty() && ids.len() >= self.action_support)
            .map(|((verb, tool), ids)| {
                ids.iter()
                    .fold(
                        ProceduralDraft::builder(
                            ProceduralKind::Action,
                            format!("when asked to {verb}"),
                            format!("call {tool}"),
                            format!("{tool} ended {} such turns", ids.len()),
                        )
                        .confidence(confidence(ids.len())),
                        |draft, id| draft.source_episode(*id),
                    )
                    .build()
            })
            .collect()
    }
}

impl ProceduralExtractor for RuleExtractor {
    fn extract(&self, episodes: &[Episode]) -> ExtractionReport {
        let mut drafts = self.preflights(episodes);
        drafts.extend(self.actions(episodes));
        ExtractionReport::found(drafts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(id: &str, prompt: &str, tools: &[&str]) -> Episode {
        tools
            .iter()
            .fold(Episode::new(id, prompt), |e, t| e.tool(*t))
    }

    #[test]
    fn a_recurring_recovery_becomes_one_preflight_draft() {
        let episodes = [
            episode("e1", "refund order 1", &["issue_refund", "lookup_account"]),
            episode("e2", "refund order 2", &["issue_refund", "lookup_account"]),
        ];
        let drafts = RuleExtractor::default().extract(&episodes).drafts;
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].kind(), ProceduralKind::Preflight);
        assert_eq!(drafts[0].trigger(), "before issue_refund");
        assert_eq!(drafts[0].action(), "verify the account region");
        assert_eq!(drafts[0].source_episode_ids(), ["e1", "e2"]);
    }

    #[test]
    fn one_episode_is_not_a_pattern() {
        let episodes = [episode(
            "e1",
            "refund order 1",
            &["issue_refund", "lookup_account"],
        )];
        assert!(RuleExtractor::default().extract(&episodes).found_nothing());
    }

    #[test]
    fn repeated_endings_become_an_action_draft() {
        let episodes: Vec<Episode> = (1..=4)
            .map(|i| {
                episode(
                    &format!("e{i}"),
                    &format!("track order {i}"),
                    &["track_shipment"],
                )
            })
            .collect();
        let drafts = RuleExtractor::default().extract(&episodes).drafts;
        assert_eq!(drafts.len(), 1);
        assert_eq!(drafts[0].kind(), ProceduralKind::Action);
        assert_eq!(drafts[0].action(), "call track_shipment");
    }
}
