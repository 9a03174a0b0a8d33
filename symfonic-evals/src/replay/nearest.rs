//! The recorded request nearest to a miss, found with bounded work.
//!
//! Diffing a missed request against every recording on its path costs the
//! request's size times the cassette's: a 1 MiB request against thousands
//! of recordings pins a core for minutes. So each recording gets a sketch
//! (a 256-bit set of its leaves, each leaf hashed with its path), built
//! once on the first miss; a miss ranks the candidates by sketch overlap,
//! which costs a few word operations each, and diffs only the best few,
//! each within a node budget. Same-scope recordings (scenario and trial)
//! are still preferred over all others, as before.

use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::redact::{json_diff_bounded, render_path};

use super::diff::{shown, PathDiff};

/// How many leaves of one body a sketch reads.
const SKETCH_LEAVES: usize = 4096;
/// How many bytes of one string a sketch hashes (its length is hashed too).
const SKETCH_STRING_BYTES: usize = 16 * 1024;
/// How many of the best-sketched candidates are diffed to pick the nearest.
const DIFFED_CANDIDATES: usize = 4;
/// How many nodes one candidate's diff may visit.
const DIFF_NODES: usize = 200_000;

/// A fixed-size summary of a JSON body: bit `h % 256` set for the hash `h`
/// of each leaf's path and value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Sketch([u64; 4]);

impl Sketch {
    /// The sketch of `body`, reading at most [`SKETCH_LEAVES`] leaves.
    pub(crate) fn of(body: &Value) -> Self {
        let mut sketch = Self::default();
        let mut budget = SKETCH_LEAVES;
        sketch.add(body, 0, &mut budget);
        sketch
    }

    fn add(&mut self, value: &Value, path: u64, budget: &mut usize) {
        if *budget == 0 {
            return;
        }
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    self.add(field, mix(path, &key.as_str()), budget);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.add(item, mix(path, &i), budget);
                }
            }
            leaf => {
                *budget -= 1;
                let hash = match leaf {
                    Value::String(text) => {
                        let bytes = text.as_bytes();
                        let head = &bytes[..bytes.len().min(SKETCH_STRING_BYTES)];
                        mix(mix(path, &head), &bytes.len())
                    }
                    other => mix(path, &other.to_string()),
                };
                self.0[(hash >> 6) as usize % 4] |= 1 << (hash & 63);
            }
        }
    }

    /// How alike two sketches are: shared bits minus bits in one only.
    fn likeness(&self, other: &Self) -> i64 {
        let (mut shared, mut apart) = (0, 0);
        for (a, b) in self.0.iter().zip(&other.0) {
            shared += i64::from((a & b).count_ones());
            apart += i64::from((a ^ b).count_ones());
        }
        shared - apart
    }
}

fn mix(seed: u64, part: &impl Hash) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    seed.hash(&mut hasher);
    part.hash(&mut hasher);
    hasher.finish()
}

/// One recording a miss may be compared with.
pub(crate) struct Candidate<'a> {
    /// Its index among the cassette's entries.
    pub(crate) index: usize,
    /// Whether it was recorded in the missing request's scenario and trial.
    pub(crate) same_scope: bool,
    /// Its one-based line, the last tie-break.
    pub(crate) line: usize,
    /// Its canonical body.
    pub(crate) body: &'a Value,
    /// Its sketch.
    pub(crate) sketch: Sketch,
}

/// The nearest candidate to `body` and how it differs, listing at most
/// `listed` paths: `(index, differences, more)`. `gone` is asked between
/// candidates; when it says the client went away, the search stops.
pub(crate) fn nearest(
    candidates: &[Candidate<'_>],
    body: &Value,
    listed: usize,
    gone: &dyn Fn() -> bool,
) -> Option<(usize, Vec<PathDiff>, usize)> {
    let sketch = Sketch::of(body);
    let scoped = candidates.iter().any(|c| c.same_scope);
    let mut ranked: Vec<&Candidate<'_>> = candidates
        .iter()
        .filter(|c| c.same_scope || !scoped)
        .collect();
    ranked.sort_by_key(|c| (-c.sketch.likeness(&sketch), c.line));
    ranked.truncate(DIFFED_CANDIDATES);
    let mut best: Option<(usize, usize, &Candidate<'_>)> = None;
    for candidate in ranked {
        if gone() {
            return None;
        }
        let diff = json_diff_bounded(candidate.body, body, 0, DIFF_NODES);
        let rank = (diff.found, candidate.line);
        if best.is_none_or(|(found, line, _)| rank < (found, line)) {
            best = Some((diff.found, candidate.line, candidate));
        }
    }
    let (_, _, chosen) = best?;
    let diff = json_diff_bounded(chosen.body, body, listed, DIFF_NODES);
    let differences = diff
        .listed
        .into_iter()
        .map(|d| PathDiff {
            path: render_path(&d.path, |key| format!("{key:?}")),
            recorded: shown(d.left),
            requested: shown(d.right),
        })
        .collect::<Vec<_>>();
    let more = diff.found.saturating_sub(differences.len());
    Some((chosen.index, differences, more))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn candidates(bodies: &[(Value, bool)]) -> Vec<Candidate<'_>> {
        bodies
            .iter()
            .enumerate()
            .map(|(index, (body, same_scope))| Candidate {
                index,
                same_scope: *same_scope,
                line: index + 1,
                body,
                sketch: Sketch::of(body),
            })
            .collect()
    }

    fn chat(text: &str, model: &str) -> Value {
        json!({"model": model, "messages": [{"role": "system", "content": "desk"}, {"role": "user", "content": text}], "temperature": 0})
    }

    #[test]
    fn the_recording_with_fewest_differences_is_chosen() {
        let bodies = vec![
            (chat("cancel order 9", "m2"), false),
            (chat("refund order 4", "m1"), false),
            (json!({"input": "other shape"}), false),
        ];
        let c = candidates(&bodies);
        let (index, diffs, more) =
            nearest(&c, &chat("refund order 5", "m1"), 8, &|| false).unwrap();
        assert_eq!(index, 1);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].path, "$.messages[1].content");
        assert_eq!(more, 0);
    }

    #[test]
    fn the_same_scope_is_preferred_and_the_listing_is_capped() {
        let far = json!({"a": [1, 2, 3, 4, 5], "b": "x"});
        let bodies = vec![
            (json!({"a": [1, 2, 3, 4, 6], "b": "x"}), false),
            (far, true),
        ];
        let c = candidates(&bodies);
        let request = json!({"a": [9, 9, 9, 9, 9], "b": "y"});
        let (index, diffs, more) = nearest(&c, &request, 2, &|| false).unwrap();
        assert_eq!(index, 1, "the same-scope recording wins");
        assert_eq!((diffs.len(), more), (2, 4));
    }

    #[test]
    fn a_client_that_went_away_stops_the_search() {
        let bodies = vec![(json!({"a": 1}), false)];
        assert!(nearest(&candidates(&bodies), &json!({"a": 2}), 8, &|| true).is_none());
    }

    #[test]
    fn a_sketch_reads_a_bounded_number_of_leaves() {
        let huge = Value::Array((0..100_000).map(Value::from).collect());
        let mut tail_changed = huge.clone();
        tail_changed.as_array_mut().unwrap()[99_999] = json!(-1);
        assert_eq!(Sketch::of(&huge), Sketch::of(&tail_changed));
    }
}
