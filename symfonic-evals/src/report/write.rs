//! Writing a pack's JSON report and its index line, atomically, under the
//! cargo target directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::atomic::write_atomic;
use super::model::{IndexLine, ReportDocument};
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
/// viewer's overview), and returns the report's path and the page's; `None`
/// for what could not be written (a report is evidence about the run, never
/// a reason to fail it), after saying so on stderr with the path and the
/// I/O error only.
pub(crate) fn write_report(run: &PackRun) -> (Option<PathBuf>, Option<PathBuf>) {
    let path = report_dir().join(file_name(&run.name));
    let document = super::document::document(run);
    let written = serde_json::to_vec_pretty(&document)
        .map_err(std::io::Error::from)
        .and_then(|json| write_atomic(&path, &json, true));
    match written {
        Ok(()) => {
            append_to_index(&document, &path);
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

/// Appends one [`IndexLine`] for the report just written to `report`.
/// Appends of one line are single writes to a file opened for appending,
/// so concurrent test binaries interleave whole lines.
fn append_to_index(document: &ReportDocument, report: &Path) {
    let line = IndexLine::of(
        document,
        report.file_name().map(|n| n.to_string_lossy().into_owned()),
    );
    let Ok(mut bytes) = serde_json::to_vec(&line) else {
        return;
    };
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
