//! Property tests of everything in replay that reads outside input: the
//! cassette loader, request canonicalization, the scrubbers, the event
//! splitter, the request-target check and the miss search. Each runs a
//! bounded number of cases (`PROPTEST_CASES` raises it for a longer hunt);
//! a case that ever fails is kept below as a plain regression test.

use proptest::prelude::*;
use serde_json::Value;

use super::canonical::{volatile_paths, CanonicalRequest};
use super::cassette::Cassette;
use super::nearest::{nearest, route, scope, Recordings, Sketch, Summary};
use super::scrub::Scrubber;
use super::sse::EventSplitter;
use super::stream_scrub::scrub_events;
use super::target::{check_origin_form, UpstreamBase};

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "sk-abcdefghijklmnopqrstuv",
            "Bearer abc.def",
            "password=x"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,6}",
                    prop::sample::select(vec![
                        "model",
                        "messages",
                        "password",
                        "arguments",
                        "api_key"
                    ])
                    .prop_map(String::from)
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Cassette-shaped lines with parts broken: the loader's real input.
fn cassette_line() -> impl Strategy<Value = String> {
    prop_oneof![
        any_json().prop_map(|v| v.to_string()),
        (any::<u32>(), any_json(), any::<u16>(), any_json()).prop_map(
            |(trial, body, status, answer)| {
                serde_json::json!({
                "scenario": "s", "trial": trial, "ordinal": 0,
                "request": {"method": "POST", "path": "/v1/x", "body": body},
                "response": {"status": status, "content_type": "application/json", "body": answer},
            })
            .to_string()
            }
        ),
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_cassette_loader_never_panics(lines in prop::collection::vec(cassette_line(), 0..6), raw in prop::collection::vec(any::<u8>(), 0..64)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let mut bytes = lines.join("\n").into_bytes();
        bytes.extend_from_slice(&raw);
        std::fs::write(&path, &bytes).unwrap();
        if let Err(error) = Cassette::load(&path, &["$.seed".to_owned()]) {
            // An error names the file, never a line's content.
            let message = error.to_string();
            prop_assert!(message.contains("c.jsonl"));
        }
    }

    #[test]
    fn canonical_keys_ignore_key_order_and_never_panic(body in any_json(), path in ".{0,20}") {
        let volatile = volatile_paths(&["$.seed".to_owned(), "$.messages[*].id".to_owned()]);
        let scrubber = Scrubber::new(&["acct-*".to_owned()], &["literal-key".to_owned()]);
        let one = CanonicalRequest::new("POST", &path, body.clone(), &volatile, &scrubber);
        let reversed = reverse_keys(body);
        let two = CanonicalRequest::new("POST", &path, reversed, &volatile, &scrubber);
        prop_assert_eq!(one.key, two.key);
    }

    #[test]
    fn scrubbing_text_is_idempotent_and_never_panics(text in "\\PC{0,80}") {
        let scrubber = Scrubber::new(&["acct-*".to_owned(), "*x*".to_owned()], &["k3y-literal".to_owned()]);
        let (once, _) = scrubber.text(&text);
        let (twice, changed) = scrubber.text(&once);
        prop_assert_eq!(&once, &twice);
        prop_assert!(!changed);
    }

    #[test]
    fn the_event_splitter_sees_the_same_events_however_the_bytes_arrive(
        bytes in prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'd'), Just(b':'), any::<u8>()], 0..200),
        cuts in prop::collection::vec(0usize..200, 0..8),
    ) {
        let mut whole = EventSplitter::default();
        let mut expected = whole.push(&bytes);
        expected.extend(whole.finish());
        let mut pieces = EventSplitter::default();
        let mut got = Vec::new();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort_unstable();
        let mut from = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            got.extend(pieces.push(&bytes[from..cut]));
            from = cut;
        }
        got.extend(pieces.finish());
        // A CR LF pair split across pieces may end an event a piece later,
        // never change what the events hold once CR LF is normalized.
        let normalize = |events: Vec<String>| events.concat().replace('\r', "");
        prop_assert_eq!(normalize(got), normalize(expected));
    }

    #[test]
    fn scrubbing_events_never_panics_and_is_stable(events in prop::collection::vec(prop_oneof![
        any_json().prop_map(|v| format!("data: {v}")),
        ".{0,30}",
    ], 0..6)) {
        let scrubber = Scrubber::default();
        let once = scrub_events(&scrubber, events);
        let twice = scrub_events(&scrubber, once.clone());
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn an_accepted_target_never_changes_the_forward_host(target in "[/@:%.a-zA-Z0-9\\\\?&=#-]{0,24}") {
        let base = UpstreamBase::parse("https://api.example.com/base").unwrap();
        if check_origin_form(&target).is_ok() {
            let url = base.join(&target);
            let after_scheme = url.strip_prefix("https://").unwrap();
            let authority = after_scheme.split(['/', '?', '#']).next().unwrap();
            prop_assert_eq!(authority, "api.example.com");
            prop_assert!(!target.contains('@') && !target.contains("//") && !target.contains('\\'));
        }
    }

    #[test]
    fn the_miss_search_never_panics(recorded in prop::collection::vec(any_json(), 0..5), request in any_json()) {
        let summaries: Vec<Summary> = recorded
            .iter()
            .enumerate()
            .map(|(i, body)| Summary { route: route("POST", "/x"), scope: scope("s", u32::from(i % 2 == 0)), line: i + 1, sketch: Sketch::of(body) })
            .collect();
        let body = |i: usize| recorded.get(i);
        let recordings = Recordings { summaries: &summaries, body: &body };
        let found = nearest(&recordings, (route("POST", "/x"), scope("s", 0)), &request, 8, &|| false);
        prop_assert_eq!(found.is_some(), !recorded.is_empty());
        if let Some((_, listed, _)) = found {
            prop_assert!(listed.len() <= 8);
        }
    }
}

fn reverse_keys(value: Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .rev()
                .map(|(k, v)| (k, reverse_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(reverse_keys).collect()),
        other => other,
    }
}
