//! Writing a file whole or not at all: the report, the index digest and the
//! viewer's pages all go through it, so it sits below each of them.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `contents` to `path` through a temporary file beside it and a
/// rename, so a reader never sees half a file and concurrent writers each
/// leave a whole one; `sync` flushes it to disk first (a report is kept,
/// a page can be rebuilt).
pub(super) fn write_atomic(path: &Path, contents: &[u8], sync: bool) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| {
            file.write_all(contents)?;
            if sync {
                file.sync_all()?;
            }
            Ok(())
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}
