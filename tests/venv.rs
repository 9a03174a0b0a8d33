//! A Python virtualenv under the cargo target directory with packages
//! installed by `pip`, for tests that must run a Python deployment against
//! what an adopter installs rather than against the checkout.

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The interpreter of a virtualenv with `requirements` installed, creating
/// it on first use. Requirements are `pip install` arguments; one starting
/// with `./` is a path from the workspace root (`"./python"` installs the
/// companion package from this checkout).
///
/// The virtualenv lives under the target directory, named by the
/// requirements and the contents of the local paths among them, so an
/// edited package is installed afresh. A file lock serialises creation
/// across test threads (each opens the file itself) and processes; a finished virtualenv is marked and
/// reused. Installing needs the package index for the build backend (and
/// for any requirement that is not a local path).
///
/// # Panics
///
/// When `python3 -m venv` or `pip install` fails: the test cannot run.
pub fn venv_python(requirements: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let resolved: Vec<String> = requirements
        .iter()
        .map(|r| match r.strip_prefix("./") {
            Some(path) => root.join(path).to_string_lossy().into_owned(),
            None => (*r).to_owned(),
        })
        .collect();
    let mut hasher = DefaultHasher::new();
    for requirement in &resolved {
        requirement.hash(&mut hasher);
        // A local path may name extras: `./python[langgraph]`.
        let path = requirement
            .split_once('[')
            .map_or(requirement.as_str(), |(p, _)| p);
        hash_tree(Path::new(path), &mut hasher);
    }
    let parent = target_dir().join("python-venvs");
    fs::create_dir_all(&parent).expect("the target directory is writable");
    let dir = parent.join(format!("{:016x}", hasher.finish()));
    let python = dir.join("bin").join("python");
    let done = dir.join(".installed");
    // Held until this function returns (the file closes); the kernel drops
    // it if the process dies, so a killed run leaves no stale lock.
    let lock = File::create(parent.join(format!("{:016x}.lock", hasher.finish())))
        .expect("a lock file under the target directory");
    lock.lock().expect("the virtualenv's lock");
    if done.exists() {
        return python;
    }
    let _ = fs::remove_dir_all(&dir);
    // A virtualenv without its own pip is made in a fifth of a second, one
    // with it in six: the interpreter's pip installs into it instead
    // (`--python`, pip 22.3 and later), and one made with pip is the
    // fallback where that pip is older or absent.
    run(Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&dir));
    let install = ["install", "--quiet", "--disable-pip-version-check"];
    let outside = Command::new("python3")
        .args(["-m", "pip", "--python"])
        .arg(&python)
        .args(install)
        .args(&resolved)
        .output();
    if !outside.is_ok_and(|output| output.status.success()) {
        let _ = fs::remove_dir_all(&dir);
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir));
        run(Command::new(&python)
            .arg("-m")
            .arg("pip")
            .args(install)
            .args(&resolved));
    }
    File::create(&done).expect("the virtualenv can be marked finished");
    python
}

/// `<target>/<profile>/deps/<test binary>` → `<target>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("a test binary lives in <target>/<profile>/deps")
        .to_path_buf()
}

/// Mixes every file under `path` (if it is a local directory) into the
/// hash: names and contents, in a stable order, caches and build output
/// left out.
fn hash_tree(path: &Path, hasher: &mut DefaultHasher) {
    let Ok(entries) = fs::read_dir(path) else {
        if let Ok(bytes) = fs::read(path) {
            bytes.hash(hasher);
        }
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for entry in entries {
        let name = entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "__pycache__" || name == "build" || name.ends_with(".egg-info") {
            continue;
        }
        name.hash(hasher);
        hash_tree(&entry, hasher);
    }
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{command:?}: {error}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
