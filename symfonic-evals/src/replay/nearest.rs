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

/// What the search keeps of one recording, packed so a scan of thousands
/// reads one contiguous array rather than chasing every exchange's strings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Summary {
    /// [`route`] of its method and path.
    pub(crate) route: u64,
    /// [`scope`] of its scenario and trial.
    pub(crate) scope: u64,
    /// Its one-based line, the last tie-break.
    pub(crate) line: usize,
    /// Its body's sketch.
    pub(crate) sketch: Sketch,
}

/// The hash a recording's method and path are compared by.
pub(crate) fn route(method: &str, path: &str) -> u64 {
    mix(mix(0, &method), &path)
}

/// The hash a recording's scenario and trial are compared by.
pub(crate) fn scope(scenario: &str, trial: u32) -> u64 {
    mix(mix(1, &scenario), &trial)
}

/// What a miss is compared against: the recordings' summaries, and each
/// recording's body when its method and path really are the miss's (the
/// hashes only shortlist).
pub(crate) struct Recordings<'a> {
    pub(crate) summaries: &'a [Summary],
    pub(crate) body: &'a dyn Fn(usize) -> Option<&'a Value>,
}

/// The recording nearest to a missed request with `body` on `route`,
/// preferring its `scope`: `(index, differences, more)`, listing at most
/// `listed` paths. `gone` is asked between candidates; when it says the
/// client went away, the search stops.
pub(crate) fn nearest(
    recordings: &Recordings<'_>,
    (route, scope): (u64, u64),
    body: &Value,
    listed: usize,
    gone: &dyn Fn() -> bool,
) -> Option<(usize, Vec<PathDiff>, usize)> {
    let sketch = Sketch::of(body);
    let on_route = || {
        recordings
            .summaries
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.route == route)
    };
    let scoped = on_route().any(|(_, s)| s.scope == scope);
    // (rank, line, index): the likeliest first, then the earliest line.
    let mut ranked: Vec<(i64, usize, usize)> = on_route()
        .filter(|(_, s)| s.scope == scope || !scoped)
        .map(|(index, s)| (-s.sketch.likeness(&sketch), s.line, index))
        .collect();
    if ranked.len() > DIFFED_CANDIDATES {
        ranked.select_nth_unstable(DIFFED_CANDIDATES - 1);
        ranked.truncate(DIFFED_CANDIDATES);
    }
    ranked.sort_unstable();
    let mut best: Option<(usize, usize, usize, &Value)> = None;
    for (_, line, index) in ranked {
        if gone() {
            return None;
        }
        let Some(recorded) = (recordings.body)(index) else {
            continue;
        };
        let found = json_diff_bounded(recorded, body, 0, DIFF_NODES).found;
        if best.is_none_or(|(f, l, _, _)| (found, line) < (f, l)) {
            best = Some((found, line, index, recorded));
        }
    }
    let (_, _, index, recorded) = best?;
    let diff = json_diff_bounded(recorded, body, listed, DIFF_NODES);
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
    Some((index, differences, more))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Searches `bodies` (each with whether it shares the miss's scope).
    fn search(
        bodies: &[(Value, bool)],
        request: &Value,
        listed: usize,
        gone: &dyn Fn() -> bool,
    ) -> Option<(usize, Vec<PathDiff>, usize)> {
        let summaries: Vec<Summary> = bodies
            .iter()
            .enumerate()
            .map(|(i, (body, same))| Summary {
                route: route("POST", "/v1/x"),
                scope: if *same { scope("s", 0) } else { scope("t", 1) },
                line: i + 1,
                sketch: Sketch::of(body),
            })
            .collect();
        let body = |i: usize| bodies.get(i).map(|(b, _)| b);
        let recordings = Recordings {
            summaries: &summaries,
            body: &body,
        };
        nearest(
            &recordings,
            (route("POST", "/v1/x"), scope("s", 0)),
            request,
            listed,
            gone,
        )
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
        let (index, diffs, more) =
            search(&bodies, &chat("refund order 5", "m1"), 8, &|| false).unwrap();
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
        let request = json!({"a": [9, 9, 9, 9, 9], "b": "y"});
        let (index, diffs, more) = search(&bodies, &request, 2, &|| false).unwrap();
        assert_eq!(index, 1, "the same-scope recording wins");
        assert_eq!((diffs.len(), more), (2, 4));
    }

    #[test]
    fn a_client_that_went_away_stops_the_search() {
        let bodies = vec![(json!({"a": 1}), false)];
        assert!(search(&bodies, &json!({"a": 2}), 8, &|| true).is_none());
    }

    #[test]
    fn a_sketch_reads_a_bounded_number_of_leaves() {
        let huge = Value::Array((0..100_000).map(Value::from).collect());
        let mut tail_changed = huge.clone();
        tail_changed.as_array_mut().unwrap()[99_999] = json!(-1);
        assert_eq!(Sketch::of(&huge), Sketch::of(&tail_changed));
    }
}
