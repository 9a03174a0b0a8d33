//! Accepting a cassette never writes through a planted symbolic link: not
//! at the cassette, not at its pending file, not at a temporary path, and
//! the same through the library and the `symfonic-evals-cassette` command.
//! Reading one follows links but reads only a regular file, up to a cap.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use symfonic_evals::bounded_read::MAX_FILE_BYTES_ENV;
use symfonic_evals::replay::{
    accept_pending, pending_path, Cassette, ReplayMode, ReplaySession, ReplaySettings,
};

const LINE: &str = r#"{"scenario":"s","trial":0,"ordinal":0,"request":{"method":"POST","path":"/v1/responses","body":{"input":"hi"}},"response":{"status":200,"content_type":"application/json","body":{"ok":1}},"recorded":"missing"}"#;

/// A cassette directory with a pending file, and a file outside it that a
/// link will point at.
struct Desk {
    _dir: tempfile::TempDir,
    cassette: PathBuf,
    outside: PathBuf,
}

fn desk() -> Desk {
    let dir = tempfile::tempdir().unwrap();
    let cassettes = dir.path().join("cassettes");
    fs::create_dir(&cassettes).unwrap();
    let cassette = cassettes.join("pack.jsonl");
    fs::write(pending_path(&cassette), format!("{LINE}\n")).unwrap();
    let outside = dir.path().join("outside.txt");
    fs::write(&outside, "untouched").unwrap();
    Desk {
        _dir: dir,
        cassette,
        outside,
    }
}

/// Plants links in a fresh desk and accepts, through the library and
/// through the command; each must refuse or succeed without touching the
/// file outside.
fn accept_both_ways(plant: impl Fn(&Path, &Path)) -> Vec<bool> {
    let mut outcomes = Vec::new();
    for through_command in [false, true] {
        let desk = desk();
        plant(&desk.cassette, &desk.outside);
        let ok = if through_command {
            Command::new(env!("CARGO_BIN_EXE_symfonic-evals-cassette"))
                .arg("accept")
                .arg(&desk.cassette)
                .output()
                .unwrap()
                .status
                .success()
        } else {
            accept_pending(&desk.cassette, &[]).is_ok()
        };
        assert_eq!(
            fs::read_to_string(&desk.outside).unwrap(),
            "untouched",
            "the file a link points at is never written"
        );
        if ok {
            let meta = fs::symlink_metadata(&desk.cassette).unwrap();
            assert!(meta.file_type().is_file(), "the cassette is a regular file");
        }
        outcomes.push(ok);
    }
    outcomes
}

#[test]
fn a_link_at_the_cassette_is_refused() {
    let outcomes = accept_both_ways(|cassette, outside| {
        symlink(outside, cassette).unwrap();
    });
    assert_eq!(outcomes, [false, false]);
}

#[test]
fn a_link_at_the_pending_file_is_refused() {
    let outcomes = accept_both_ways(|cassette, outside| {
        let pending = pending_path(cassette);
        fs::remove_file(&pending).unwrap();
        symlink(outside, &pending).unwrap();
    });
    assert_eq!(outcomes, [false, false]);
}

#[test]
fn links_at_temporary_paths_are_never_followed() {
    let outcomes = accept_both_ways(|cassette, outside| {
        // The temporary path earlier versions used, and the shapes of
        // today's temporaries: none may be written through.
        symlink(outside, cassette.with_extension("jsonl.accepting")).unwrap();
        for n in 0..64 {
            let name = format!(".pack.jsonl.{}.{n}.0.tmp", std::process::id());
            symlink(outside, cassette.with_file_name(name)).unwrap();
        }
    });
    assert_eq!(outcomes, [true, true], "accepted beside the planted links");
}

/// Runs `symfonic-evals-cassette check <path>`, ended if it has not
/// finished in a minute (a reader blocked on a FIFO would never finish):
/// whether it succeeded, and its standard error.
fn check_command(path: &Path) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_symfonic-evals-cassette"))
        .arg("check")
        .arg(path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the command is still reading {}", path.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A cassette that is a link to `/dev/zero` (read without end) or a FIFO
/// (blocks its reader) is refused by the library and by the command, each
/// naming the file and what it is.
#[test]
fn a_cassette_that_is_no_regular_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.jsonl");
    symlink("/dev/zero", &zero).unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (path, what) in [
        (&zero, "(a link to /dev/zero) a character device"),
        (&fifo, "a FIFO"),
    ] {
        let settings = ReplaySettings {
            mode: ReplayMode::Replay,
            cassette: path.clone(),
            pending: pending_path(path),
            volatile_fields: Vec::new(),
            scrub_patterns: Vec::new(),
            upstream: None,
        };
        let error = ReplaySession::with_settings(settings).unwrap_err();
        assert_eq!(error.name(), "CassetteUnreadable");
        let message = error.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(what), "{message}");
        let error = Cassette::load(path, &[]).unwrap_err().to_string();
        assert_eq!(error, message);
        let (ok, stderr) = check_command(path);
        assert!(!ok);
        assert!(stderr.contains(&message), "{stderr}");
    }
}

/// A cassette past the cap is refused, naming the file and the cap.
#[test]
fn a_cassette_past_the_size_cap_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("big.jsonl");
    let lines: String = (0..64)
        .map(|n| {
            format!(
                "{}\n",
                LINE.replace("\"ordinal\":0", &format!("\"ordinal\":{n}"))
            )
        })
        .collect();
    fs::write(&cassette, lines).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_symfonic-evals-cassette"))
        .env(MAX_FILE_BYTES_ENV, "1000")
        .arg("check")
        .arg(&cassette)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&cassette.display().to_string()), "{stderr}");
    assert!(stderr.contains("1000-byte cap"), "{stderr}");
    let output = Command::new(env!("CARGO_BIN_EXE_symfonic-evals-cassette"))
        .arg("check")
        .arg(&cassette)
        .output()
        .unwrap();
    assert!(output.status.success(), "under the default cap it is read");
}
