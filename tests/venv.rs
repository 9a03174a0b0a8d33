//! A Python virtual environment the tests set up by themselves, so
//! `cargo test --workspace` on a fresh machine (with `python3`) installs
//! what the Python deployments need from the package registry instead of
//! skipping the tests that need it.
//!
//! The environment lives under the cargo target directory, one per set of
//! requirements, and is created once: an exclusive file lock makes parallel
//! tests and test processes wait for the one that is installing, and a
//! marker written last says the environment is complete.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

use symfonic_evals::short_digest;

/// The cargo target directory this test binary was built in
/// (`<target>/<profile>/deps/<binary>`), or `CARGO_TARGET_DIR`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "deps"))
        .and_then(|deps| deps.parent()?.parent())
        .map_or_else(|| PathBuf::from("target"), Path::to_path_buf)
}

struct Lock(File);

impl Lock {
    fn exclusive(path: &Path) -> Self {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .unwrap_or_else(|e| panic!("cannot open the lock {}: {e}", path.display()));
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock(2) on a descriptor we own; it blocks until the
            // lock is ours and touches no memory.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            assert_eq!(rc, 0, "cannot lock {}", path.display());
        }
        Self(file)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: as above; unlocking a lock we hold.
            unsafe {
                libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
            }
        }
    }
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The interpreter of a virtual environment with `requirements` installed
/// (pip requirement specifiers, e.g. `openai` or `./python`), creating it
/// with `python3 -m venv` and `pip install` on first use.
///
/// # Panics
///
/// When `python3` is missing or the installation fails: a test that needs
/// the environment fails saying why rather than skipping.
pub fn python_with(requirements: &[&str]) -> PathBuf {
    let id = short_digest(requirements.join("\n").as_bytes()).replace("sha256:", "");
    let root = target_dir().join("symfonic-evals-venv");
    fs::create_dir_all(&root).unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
    let venv = root.join(&id);
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    let ready = venv.join(".symfonic-evals-ready");
    let _lock = Lock::exclusive(&root.join(format!("{id}.lock")));
    if ready.exists() && python.exists() {
        return python;
    }
    if venv.exists() {
        // A half-made environment from an interrupted run.
        fs::remove_dir_all(&venv)
            .unwrap_or_else(|e| panic!("cannot remove {}: {e}", venv.display()));
    }
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "python3 -m venv",
    );
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(requirements),
        &format!("pip install {}", requirements.join(" ")),
    );
    fs::write(&ready, requirements.join("\n"))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", ready.display()));
    python
}

/// The interpreter with the official OpenAI SDK, for the Python desk's
/// model mode.
pub fn python_with_openai() -> PathBuf {
    python_with(&["openai"])
}
