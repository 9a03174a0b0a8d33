//! Writing a pack's JSON report, atomically, under the cargo target directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::run::PackRun;

/// Overrides where reports are written.
pub const REPORT_DIR_ENV: &str = "SYMFONIC_EVALS_REPORT_DIR";

/// Where reports go: `$SYMFONIC_EVALS_REPORT_DIR`, else
/// `<cargo target dir>/symfonic-evals`, found from the running executable
/// (cargo marks its target directory with `CACHEDIR.TAG`), else the system
/// temporary directory.
pub fn report_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(REPORT_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("symfonic-evals");
    }
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .find(|dir| dir.join("CACHEDIR.TAG").is_file())
            .map(Path::to_path_buf)
    });
    from_exe
        .unwrap_or_else(std::env::temp_dir)
        .join("symfonic-evals")
}

/// The report's file name: the package that ran it and the run's name,
/// with anything but letters, digits, `-` and `_` turned into dots, so two
/// crates sharing a target directory never overwrite each other's reports.
fn file_name(run_name: &str) -> String {
    let qualified = match super::document::package() {
        Some(package) => format!("{package}.{run_name}"),
        None => run_name.to_owned(),
    };
    let safe: String = qualified
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '.'
            }
        })
        .collect();
    format!("{safe}.json")
}

/// Writes the report, its line in the index and its viewer page (then the
/// viewer's index), and returns the report's path and the page's; `None`
/// for what could not be written (a report is evidence about the run, never
/// a reason to fail it), after saying so on stderr with the path and the
/// I/O error only.
pub(crate) fn write_report(run: &PackRun) -> (Option<PathBuf>, Option<PathBuf>) {
    let path = report_dir().join(file_name(&run.name));
    let document = super::document::document(run);
    match try_write(&document, &run.name, &path) {
        Ok(()) => {
            append_to_index(run, &document, &path);
            let page = super::viewer::write_after_report(&document, &path);
            (Some(path), page)
        }
        Err(error) => {
            eprintln!(
                "symfonic-evals: report {} not written: {error}",
                path.display()
            );
            (None, None)
        }
    }
}

/// The file in the report directory listing every run, one JSON line each.
pub const INDEX_FILE: &str = "index.jsonl";

/// Appends one line for `run` to the report directory's index: which binary
/// (so the runs of one build can be told from an earlier build's), the
/// report's file, the pack, the verdict, when and how long, on which
/// machine, and the viewer anchor of its first failure. Appends of one
/// short line are atomic, so concurrent test binaries interleave whole
/// lines.
fn append_to_index(run: &PackRun, document: &serde_json::Value, report: &Path) {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()));
    let line = serde_json::json!({
        "binary": binary,
        "package": document["package"],
        "name": run.name(),
        "pack": run.kind().name(),
        "verdict": document["verdict"],
        "fingerprint": run.fingerprint(),
        "started_unix_ms": document["started_unix_ms"],
        "duration_us": document["duration_us"],
        "report": report.file_name().map(|n| n.to_string_lossy().into_owned()),
        "machine": document["machine"],
        "first_failure": super::viewer::first_failure_anchor(document),
    });
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(report.with_file_name(INDEX_FILE))
        .and_then(|mut file| file.write_all(&bytes));
    if let Err(error) = appended {
        eprintln!("symfonic-evals: report index not updated: {error}");
    }
}

fn try_write(document: &serde_json::Value, name: &str, path: &Path) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        file_name(name),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let json = serde_json::to_vec_pretty(document)?;
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| {
            file.write_all(&json)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
