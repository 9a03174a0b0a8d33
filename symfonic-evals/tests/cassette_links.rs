//! Accepting a cassette never writes through a planted symbolic link: not
//! at the cassette, not at its pending file, not at a temporary path, and
//! the same through the library and the `symfonic-evals-cassette` command.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use symfonic_evals::replay::{accept_pending, pending_path};

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
