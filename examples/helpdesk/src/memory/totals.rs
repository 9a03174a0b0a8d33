//! Running totals across demonstrations: the `RunningTotals` variant's
//! consolidation. Instead of re-reading a window of recent episodes each
//! turn, the desk keeps each lesson's support in its store and adds the
//! turn's own episode to the lessons it shows; a lesson whose total
//! reaches the extractor's threshold is promoted (inserted, or reinforced
//! by the new episode).

use symfonic_evals::contracts::{Episode, ProceduralExtractor};

use super::consolidation::{CycleReport, RuleExtractor};
use crate::store::{Promotion, Store};

/// Counts `episode` towards every lesson it shows and promotes those whose
/// total reaches `extractor`'s threshold.
///
/// # Errors
///
/// On a database error.
pub fn run_totals(
    store: &Store,
    extractor: &RuleExtractor,
    episode: &Episode,
) -> rusqlite::Result<CycleReport> {
    // The lessons this one episode shows: the same rules with a threshold
    // of one.
    let single = RuleExtractor {
        preflight_support: 1,
        action_support: 1,
        ..extractor.clone()
    };
    let mut promoted = 0;
    for lesson in single.extract(std::slice::from_ref(episode)).drafts {
        let key = format!(
            "{}|{}|{}",
            lesson.kind().as_str(),
            lesson.trigger(),
            lesson.action()
        );
        let supporting = store.add_support(&key, &episode.id)?;
        // The lesson as the extractor words it over its whole support:
        // each supporting episode showed what this one shows.
        let episodes: Vec<Episode> = supporting
            .into_iter()
            .map(|id| Episode {
                id,
                ..episode.clone()
            })
            .collect();
        let drafts = extractor.extract(&episodes).drafts;
        let same = drafts.iter().find(|d| {
            d.kind() == lesson.kind()
                && d.trigger() == lesson.trigger()
                && d.action() == lesson.action()
        });
        if let Some(draft) = same {
            if store.promote_draft(draft)? != Promotion::Unchanged {
                promoted += 1;
            }
        }
    }
    Ok(CycleReport {
        promoted,
        episodes: 1,
        extractor_errors: 0,
    })
}
