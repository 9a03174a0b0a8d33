//! Protocol lines are capped at 64 MiB by default: a turn record carrying a
//! long document as model input passes, and a line that grows past the cap
//! is refused as soon as it does, not after the whole line was read.
#![cfg(unix)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use symfonic_evals::process::{kinds, ProcessSpec, DEFAULT_MAX_LINE_BYTES};
use symfonic_evals::{ProcessTarget, PromptRequest, Target, TargetContext};

fn spec() -> ProcessSpec {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/misbehave.py");
    ProcessSpec::new("python3")
        .arg(script)
        .request_timeout(Duration::from_secs(20))
        .handshake_timeout(Duration::from_secs(10))
        .shutdown_grace(Duration::from_millis(500))
}

/// The process's peak resident memory so far, in MiB (Linux only).
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

fn turn(
    spec: &ProcessSpec,
    prompt: &str,
) -> (
    Result<symfonic_evals::TurnRecord, symfonic_evals::TurnError>,
    Duration,
) {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, spec).expect("the handshake succeeds");
    let started = Instant::now();
    let result = target.run_turn(&PromptRequest::new("lines", prompt));
    (result, started.elapsed())
}

#[test]
fn a_ten_megabyte_model_input_passes_under_the_default_cap() {
    assert_eq!(DEFAULT_MAX_LINE_BYTES, 64 << 20);
    let (record, took) = turn(&spec(), "big:10000000");
    let record = record.expect("a 10 MB record is read");
    assert_eq!(record.model_input().len(), 10_000_000);
    eprintln!(
        "a 10 MB line took {took:?}; peak RSS {:?} MiB",
        peak_rss_mib()
    );
}

#[test]
fn a_line_that_never_ends_is_refused_at_the_cap() {
    // The line never ends: read to its end first, it would run into the
    // request timeout instead.
    for cap in [1 << 20, DEFAULT_MAX_LINE_BYTES] {
        let (result, took) = turn(&spec().max_line_bytes(cap), "endless");
        let error = result.expect_err("refused");
        assert_eq!(error.kind, kinds::MESSAGE_TOO_LARGE, "{error}");
        assert!(
            error.message.contains(&format!("cap of {cap} bytes")),
            "{error}"
        );
        assert!(error.message.contains("max_line_bytes"), "{error}");
        assert!(took < Duration::from_secs(10), "cap {cap}: {took:?}");
        eprintln!("an endless line was refused at a {cap}-byte cap after {took:?}");
    }
}
