//! The model endpoint end to end: recording against a scripted upstream on
//! loopback, the review step, replaying with no upstream, misses with their
//! structural diffs, streams chunk for chunk, independent samples per
//! trial, the CI refusal, secrets, malformed cassettes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use helpdesk::openai::{post, Client};
use helpdesk::{packs, upstream, Helpdesk, Pack};
use serde_json::{json, Value};
use symfonic_evals::replay::{
    accept_pending, pending_path, Cassette, ReplayConfig, ReplayMode, ReplaySession,
    ReplaySettings, ScriptedUpstream, Upstream, UpstreamAuth, UpstreamReply, RECORD_ENV,
};
use symfonic_evals::{
    run_pack, ExtensionToolPack, Isolation, PackDefinition, PackRun, RunOptions, TrialPolicy,
};

/// On a thread: the cassettes live in temporary directories this test
/// process made, which a re-executed child would not see.
fn options(config: ReplayConfig) -> RunOptions {
    RunOptions {
        replay: config,
        isolation: Isolation::Thread,
        ..RunOptions::default()
    }
}

fn extension(prompt: &str, trials: u32) -> PackDefinition {
    let PackDefinition::ExtensionTool(pack) = packs::definition(Pack::ExtensionTool) else {
        unreachable!("the extension pack")
    };
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: prompt.into(),
        policy: TrialPolicy::all_of(trials),
        ..pack
    })
}

const PARCEL: &str = "where is the parcel for order 7?";

fn record_extension(cassette: &Path, trials: u32) -> usize {
    let upstream = upstream::rust_desk().unwrap();
    let config = ReplayConfig::mode(ReplayMode::RecordAll)
        .with_cassette(cassette)
        .with_upstream(upstream.url())
        .allowing_loopback_recording_in_ci();
    run_pack(
        "replay.record",
        &extension(PARCEL, trials),
        &options(config),
        Helpdesk::open_over_http,
    )
    .assert_passed();
    accept_pending(cassette, &[]).unwrap();
    upstream.received().len()
}

fn replay_extension(cassette: &Path, prompt: &str, trials: u32) -> PackRun {
    let config = ReplayConfig::mode(ReplayMode::Replay).with_cassette(cassette);
    run_pack(
        "replay.replay",
        &extension(prompt, trials),
        &options(config),
        Helpdesk::open_over_http,
    )
}

#[test]
fn a_changed_prompt_is_a_miss_naming_the_step_and_the_differing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("ext.jsonl");
    record_extension(&cassette, 1);
    replay_extension(&cassette, PARCEL, 1).assert_passed();

    let changed = "where is the parcel for order 9?";
    let run = replay_extension(&cassette, changed, 1);
    let failure = symfonic_evals_e2e::fails_at(&run, "extension call", "ModelReplayMiss");
    let observed = &failure.observed;
    assert!(
        observed.starts_with("ModelReplayMiss: POST /v1/chat/completions sha256:"),
        "{observed}"
    );
    assert!(
        observed.contains("during step `extension call`"),
        "{observed}"
    );
    assert!(
        observed.contains("nearest recorded request is line 1"),
        "{observed}"
    );
    assert!(
        observed.contains("$.messages[1].content (recorded sha256:"),
        "{observed}"
    );
    assert!(
        !observed.contains("order 9") && !observed.contains("parcel"),
        "digests only: {observed}"
    );
    // Only the prompt differs: the model, the tools and the system line do not.
    assert!(
        !observed.contains("$.model") && !observed.contains("$.tools"),
        "{observed}"
    );
}

#[test]
fn three_recorded_trials_replay_as_three_distinct_samples() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("ext.jsonl");
    let forwarded = record_extension(&cassette, 3);
    let recorded = Cassette::load(&cassette, &[]).unwrap();
    assert_eq!(recorded.len(), forwarded);
    assert_eq!(
        recorded.recorded_trials("extension-tool-execution"),
        3,
        "scenario name"
    );
    // The same requests in each trial, answered by different samples.
    let first_call_ids: Vec<String> = (0..3)
        .map(|t| {
            recorded
                .exchanges()
                .find(|e| e.trial == t && e.ordinal == 0)
                .and_then(|e| {
                    e.response
                        .body
                        .as_ref()?
                        .get("id")?
                        .as_str()
                        .map(str::to_owned)
                })
                .unwrap()
        })
        .collect();
    let mut distinct = first_call_ids.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{first_call_ids:?}");

    // Replayed straight from the endpoint: trial t gets trial t's sample.
    let session = Arc::new(
        ReplaySession::with_settings(settings(ReplayMode::Replay, &cassette, None)).unwrap(),
    );
    let first_request = recorded.exchanges().next().unwrap().request.body.clone();
    let mut replayed = Vec::new();
    for trial in 0..3 {
        let endpoint = session.start("extension-tool-execution", trial).unwrap();
        let reply = post(
            endpoint.url(),
            "/v1/chat/completions",
            &[],
            first_request.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(reply.status, 200);
        replayed.push(reply.json().unwrap()["id"].as_str().unwrap().to_owned());
        assert!(endpoint.take_failures().is_empty());
    }
    assert_eq!(replayed, first_call_ids);

    // A fourth trial was never recorded: a miss that says so.
    let run = replay_extension(&cassette, PARCEL, 4);
    assert_eq!(run.seed().expect("the seed ran").trials.len(), 4);
    let failure = run.first_failure().unwrap();
    assert_eq!(
        (failure.trial, failure.assertion.as_str()),
        (3, "ModelReplayMiss")
    );
    assert!(
        failure.observed.contains("holds 3 trial(s) of this scenario and this is trial 4: replaying more trials than were recorded"),
        "{}",
        failure.observed
    );
}

fn settings(mode: ReplayMode, cassette: &Path, upstream: Option<Upstream>) -> ReplaySettings {
    let mut s = ReplaySettings::resolve_with(
        "replay.direct",
        &ReplayConfig::mode(ReplayMode::Replay).with_cassette(cassette),
        |_| None,
    )
    .unwrap();
    s.mode = mode;
    s.upstream = upstream;
    s
}

fn plain(url: &str) -> Option<Upstream> {
    Some(Upstream {
        url: url.to_owned(),
        key: None,
        auth: UpstreamAuth::Auto,
    })
}

#[test]
fn a_stream_replays_chunk_for_chunk_in_order() {
    let events: Vec<String> = (0..5)
        .map(|i| {
            format!(
                "data: {}",
                json!({"choices": [{"delta": {"content": format!("part {i} ")}}]})
            )
        })
        .chain(["event: done\ndata: [DONE]".to_owned()])
        .collect();
    let sent = events.clone();
    let up = ScriptedUpstream::start(move |_| UpstreamReply::Events(sent.clone())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("stream.jsonl");
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let expected: Vec<Vec<u8>> = events
        .iter()
        .map(|e| format!("{e}\n\n").into_bytes())
        .collect();
    {
        let session = Arc::new(
            ReplaySession::with_settings(settings(
                ReplayMode::RecordAll,
                &cassette,
                plain(up.url()),
            ))
            .unwrap(),
        );
        let endpoint = session.start("s", 0).unwrap();
        let reply = post(
            endpoint.url(),
            "/v1/chat/completions",
            &[],
            body.to_string().as_bytes(),
        )
        .unwrap();
        assert_eq!(reply.header("content-type"), Some("text/event-stream"));
        assert_eq!(reply.chunks, expected, "relayed while recording");
    }
    drop(up);
    accept_pending(&cassette, &[]).unwrap();
    let recorded = Cassette::load(&cassette, &[]).unwrap();
    assert_eq!(
        recorded
            .exchanges()
            .next()
            .unwrap()
            .response
            .events
            .as_ref(),
        Some(&events)
    );
    let session = Arc::new(
        ReplaySession::with_settings(settings(ReplayMode::Replay, &cassette, None)).unwrap(),
    );
    let endpoint = session.start("s", 0).unwrap();
    let reply = post(
        endpoint.url(),
        "/v1/chat/completions",
        &[],
        body.to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
    assert_eq!(
        reply.chunks, expected,
        "one chunk per recorded event, in order"
    );
}

#[test]
fn identical_requests_in_a_trial_replay_in_recorded_order_on_one_connection() {
    let counter = Arc::new(AtomicU64::new(0));
    let c = Arc::clone(&counter);
    let up = ScriptedUpstream::start(move |_| {
        UpstreamReply::json(json!({"sample": c.fetch_add(1, Ordering::SeqCst)}))
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("ordinals.jsonl");
    let body = br#"{"model":"m","input":"same"}"#;
    {
        let session = Arc::new(
            ReplaySession::with_settings(settings(
                ReplayMode::RecordMissing,
                &cassette,
                plain(up.url()),
            ))
            .unwrap(),
        );
        let endpoint = session.start("s", 0).unwrap();
        let mut client = Client::new(endpoint.url());
        for expected in 0..3 {
            let reply = client.post("/v1/responses", &[], body).unwrap();
            assert_eq!(reply.json().unwrap()["sample"], expected);
        }
    }
    drop(up);
    accept_pending(&cassette, &[]).unwrap();
    let session = Arc::new(
        ReplaySession::with_settings(settings(ReplayMode::Replay, &cassette, None)).unwrap(),
    );
    let endpoint = session.start("s", 0).unwrap();
    let mut client = Client::new(endpoint.url());
    for expected in 0..3 {
        let reply = client.post("/v1/responses", &[], body).unwrap();
        assert_eq!(reply.json().unwrap()["sample"], expected);
    }
    // A fourth identical request was never recorded.
    let reply = client.post("/v1/responses", &[], body).unwrap();
    assert_eq!(reply.status, 404);
    assert_eq!(reply.header("x-should-retry"), Some("false"));
    let miss = endpoint.take_failures().remove(0).to_string();
    assert!(miss.contains("recorded 3 time(s) in this trial"), "{miss}");
    assert_eq!(endpoint.requests(), 4);
}

#[test]
fn pending_exchanges_are_not_replayed_until_accepted() {
    let up = upstream::rust_desk().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("ext.jsonl");
    let config = ReplayConfig::mode(ReplayMode::RecordMissing)
        .with_cassette(&cassette)
        .with_upstream(up.url())
        .allowing_loopback_recording_in_ci();
    run_pack(
        "replay.pending",
        &extension(PARCEL, 1),
        &options(config),
        Helpdesk::open_over_http,
    )
    .assert_passed();
    drop(up);
    assert!(pending_path(&cassette).exists() && !cassette.exists());
    let run = replay_extension(&cassette, PARCEL, 1);
    let failure = symfonic_evals_e2e::fails_at(&run, "extension call", "ModelReplayMiss");
    assert!(
        failure.observed.contains("awaiting review"),
        "{}",
        failure.observed
    );
    assert!(
        failure.observed.contains("ext.pending.jsonl"),
        "{}",
        failure.observed
    );
    accept_pending(&cassette, &[]).unwrap();
    replay_extension(&cassette, PARCEL, 1).assert_passed();
}

#[test]
fn no_cassette_holds_an_authorization_header_a_key_or_a_cookie() {
    const UPSTREAM_KEY: &str = "up-key-5f1c0d7a9b";
    const CLIENT_KEY: &str = "sk-client0123456789abcdefghij";
    let up = ScriptedUpstream::start(|request| UpstreamReply::Json {
        status: 200,
        body: json!({
            "echo": request.header("authorization"),
            "api_key": "returned-secret",
            "note": "customer acct-99123 at sk-proj-abcdefghijklmnopqrstuv",
        }),
        headers: vec![("set-cookie".into(), "session=cookie-value-77".into())],
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("secrets.jsonl");
    let mut s = settings(
        ReplayMode::RecordAll,
        &cassette,
        Some(Upstream {
            url: up.url().to_owned(),
            key: Some(UPSTREAM_KEY.into()),
            auth: UpstreamAuth::Auto,
        }),
    );
    s.scrub_patterns = vec!["acct-*".into()];
    let session = Arc::new(ReplaySession::with_settings(s).unwrap());
    let endpoint = session.start("s", 0).unwrap();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": format!("my key is {CLIENT_KEY}")}], "api_key": "in-body"});
    let bearer = format!("Bearer {CLIENT_KEY}");
    let reply = post(
        endpoint.url(),
        "/v1/chat/completions",
        &[
            ("authorization", &bearer),
            ("x-api-key", CLIENT_KEY),
            ("cookie", "c=cookie-value-88"),
        ],
        body.to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    assert!(endpoint.take_failures().is_empty());
    // The upstream got its own key, never the client's credentials.
    let received = up.received();
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {UPSTREAM_KEY}").as_str())
    );
    assert_eq!(received[0].header("x-api-key"), None);
    assert_eq!(received[0].header("cookie"), None);
    // An Anthropic path presents the key as x-api-key.
    post(
        endpoint.url(),
        "/v1/messages",
        &[],
        br#"{"model":"c","max_tokens":1,"messages":[]}"#,
    )
    .unwrap();
    assert_eq!(up.received()[1].header("x-api-key"), Some(UPSTREAM_KEY));
    drop(endpoint);
    let pending = std::fs::read_to_string(pending_path(&cassette)).unwrap();
    for secret in [
        UPSTREAM_KEY,
        CLIENT_KEY,
        "returned-secret",
        "in-body",
        "cookie-value",
        "acct-99123",
        "sk-proj-",
    ] {
        assert!(!pending.contains(secret), "{secret} was stored:\n{pending}");
    }
    let lower = pending.to_lowercase();
    assert!(
        !lower.contains("authorization")
            && !lower.contains("cookie")
            && !lower.contains("x-api-key"),
        "{pending}"
    );
    assert!(pending.contains("[REDACTED]"));
    accept_pending(&cassette, &[]).unwrap();
    let kept = std::fs::read_to_string(&cassette).unwrap();
    assert!(!kept.contains(UPSTREAM_KEY) && !kept.contains(CLIENT_KEY));
}

#[test]
fn a_malformed_cassette_line_fails_the_pack_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("ext.jsonl");
    record_extension(&cassette, 1);
    let good = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(
        &cassette,
        format!("{good}{{\"scenario\": \"extension_tool\", \"trial\": 0\n"),
    )
    .unwrap();
    let run = replay_extension(&cassette, PARCEL, 1);
    assert!(!run.passed());
    let failure = run.first_failure().unwrap();
    assert_eq!(failure.assertion, "ModelEndpointFailed", "{}", run.render());
    let line = good.lines().count() + 1;
    let expected = format!("CassetteMalformed: {}:{line}:", cassette.display());
    assert!(
        failure.observed.starts_with(&expected),
        "{}",
        failure.observed
    );
}

#[test]
fn requests_the_endpoint_cannot_answer_are_named_misses() {
    let dir = tempfile::tempdir().unwrap();
    let session = Arc::new(
        ReplaySession::with_settings(settings(
            ReplayMode::Replay,
            &dir.path().join("none.jsonl"),
            None,
        ))
        .unwrap(),
    );
    let endpoint = session.start("s", 0).unwrap();
    endpoint.set_step(Some("first"));
    let reply = post(endpoint.url(), "/v1/chat/completions", &[], b"not json").unwrap();
    assert_eq!(reply.status, 400);
    let reply = post(
        endpoint.url(),
        "/v1/chat/completions",
        &[],
        br#"{"model":"m"}"#,
    )
    .unwrap();
    assert_eq!(reply.status, 404);
    let error: Value = reply.json().unwrap();
    assert_eq!(error["error"]["code"], "ModelReplayMiss");
    let failures: Vec<String> = endpoint
        .take_failures()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(failures.len(), 2);
    assert!(
        failures[0].contains("unsupported request: the body is not JSON"),
        "{}",
        failures[0]
    );
    assert!(
        failures[1].contains("during step `first`") && failures[1].contains("nothing is recorded"),
        "{}",
        failures[1]
    );
}

/// Runs only inside the child process `recording_under_ci_is_refused`
/// starts with `CI=true`: the refusal must come from the real environment.
#[test]
fn ci_refusal_probe() {
    if std::env::var_os("SYMFONIC_EVALS_CI_PROBE").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = ReplayConfig {
        cassette: Some(dir.path().join("ci.jsonl")),
        upstream_url: Some("http://127.0.0.1:9".into()),
        ..ReplayConfig::default()
    };
    let run = replay_probe(config);
    let failure = run.first_failure().expect("a refusal");
    assert_eq!(failure.assertion, "ModelEndpointFailed");
    assert!(
        failure.observed.starts_with(
            "RecordingRefusedInCi: recording (mode `missing`) is refused under CI=true"
        ),
        "{}",
        failure.observed
    );
    assert!(!pending_path(&dir.path().join("ci.jsonl")).exists());
}

fn replay_probe(config: ReplayConfig) -> PackRun {
    run_pack(
        "replay.ci",
        &extension(PARCEL, 1),
        &options(config),
        Helpdesk::open_over_http,
    )
}

#[test]
fn recording_under_ci_is_refused() {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([
            "--exact",
            "replay_endpoint::ci_refusal_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SYMFONIC_EVALS_CI_PROBE", "1")
        .env("CI", "true")
        .env(RECORD_ENV, "missing")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}
