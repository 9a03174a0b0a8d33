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

fn file_name(run_name: &str) -> String {
    let safe: String = run_name
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

/// Writes the report and returns its path; `None` when the disk refuses
/// (a report is evidence about the run, never a reason to fail it).
pub(crate) fn write_report(run: &PackRun) -> Option<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = report_dir();
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join(file_name(&run.name));
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        file_name(&run.name),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let json = serde_json::to_vec_pretty(run).ok()?;
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(&json)?;
        file.sync_all()
    });
    if written.is_err() || std::fs::rename(&temp, &path).is_err() {
        let _ = std::fs::remove_file(&temp);
        return None;
    }
    Some(path)
}
