//! The evidence viewer: self-contained HTML beside the JSON reports.
//!
//! Each report `X.json` gets a page `X.html` rendered from the report's own
//! typed document (so the page carries exactly what the report carries:
//! digests, never turn content or state values), and the directory gets an
//! `index.html` overview of every run: the verdict line, a matrix of pack
//! by deployment, filters, and each test's trend over its latest runs.
//! Everything is inline: no server, no network, no remote script, style or
//! font.
//!
//! The pages are maud templates: checked when the crate compiles, every
//! interpolated value escaped unless marked otherwise.
//!
//! A pack run writes its page and rebuilds `index.html` from `index.jsonl`
//! (one line per run, so the rebuild reads one file, not every report).
//! Both are written to a temporary file and renamed into place, since the
//! tests of one build write reports concurrently. A viewer that cannot be
//! written is logged and never fails the run.

mod assets;
mod catalog;
mod overview;
mod run_page;
mod trend;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::anchors::page_name;
use super::atomic::write_atomic;
use super::index_digest::{latest_lines, Point};
use super::model::{IndexLine, ReportDocument};
use overview::Entry;

/// The viewer's entry page in a report directory: the overview.
pub const VIEWER_INDEX_FILE: &str = "index.html";

/// A whole page: the shared style (and `extra_style`), `body`, then the
/// page's `script`.
fn layout(title: &str, extra_style: &str, script: &str, body: &Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { (title) }
                style { (PreEscaped(assets::STYLE)) (PreEscaped(extra_style)) }
            }
            body {
                (body)
                footer class="meta" style="padding:8px 20px" {
                    "symfonic-evals evidence viewer " span id="viewer-status" { "static" }
                }
                script { (PreEscaped(script)) }
            }
        }
    }
    .into_string()
}

/// A verdict as a coloured badge.
fn verdict_badge(verdict: &str) -> Markup {
    let class = match verdict {
        "passed" => "verdict v-passed",
        "failed" => "verdict v-failed",
        _ => "verdict v-other",
    };
    html! { span class=(class) { (verdict.replace('_', " ")) } }
}

/// The entries `index.jsonl` lists, the last line of each report winning,
/// each with its latest runs, only those whose page exists.
fn entries_from_index(dir: &Path, index: &str) -> Vec<Entry> {
    let mut latest: BTreeMap<String, Entry> = BTreeMap::new();
    for found in latest_lines(dir, index) {
        let Some(report) = found.line.report.as_deref() else {
            continue;
        };
        let page = page_name(report);
        latest.insert(
            page.clone(),
            Entry {
                page,
                line: found.line,
                history: found.history,
            },
        );
    }
    latest
        .into_values()
        .filter(|e| dir.join(&e.page).is_file())
        .collect()
}

/// Rebuilds `dir/index.html` from `dir/index.jsonl` and returns its path.
/// Reads one file, whatever the number of reports, and parses only the
/// lines added since the last rebuild (see `index_digest`). If the index grew while
/// the page was being written (another test finished meanwhile), the page
/// is rebuilt, so the last writer's page lists every run.
///
/// # Errors
///
/// When the page cannot be written.
pub fn refresh_index(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join(VIEWER_INDEX_FILE);
    let index_file = dir.join(super::INDEX_FILE);
    for _ in 0..4 {
        let index =
            crate::bounded_read::read_regular(&index_file, crate::bounded_read::max_file_bytes())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .unwrap_or_default();
        let entries = entries_from_index(dir, &index);
        write_atomic(&path, overview::page(entries).as_bytes(), false)?;
        let now = std::fs::metadata(&index_file).map_or(0, |m| m.len());
        if now == index.len() as u64 {
            break;
        }
    }
    Ok(path)
}

/// Writes the page of a report just written to `report`, then rebuilds the
/// directory's overview. Returns the page's path; on an I/O error says so
/// on stderr and returns `None`: a viewer never fails a run.
pub(crate) fn write_after_report(document: &ReportDocument, report: &Path) -> Option<PathBuf> {
    let report_name = report.file_name()?.to_string_lossy().into_owned();
    let page = report.with_file_name(page_name(&report_name));
    if let Err(error) = write_atomic(&page, run_page::run_page(document).as_bytes(), false) {
        eprintln!(
            "symfonic-evals: viewer page {} not written: {error}",
            page.display()
        );
        return None;
    }
    if let Err(error) = refresh_index(report.parent().unwrap_or(Path::new("."))) {
        eprintln!("symfonic-evals: viewer index not written: {error}");
    }
    Some(page)
}

/// A report, if `bytes` are one (not the index, not a summary some program
/// wrote beside the reports).
fn as_report(bytes: &[u8]) -> Option<ReportDocument> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let is_report = value.get("schema_version").is_some()
        && value.get("pack").is_some()
        && value.get("verdict").is_some();
    if !is_report {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// Rebuilds a viewer in `out` from every JSON report in `dirs` (a suite
/// split over machines gives one directory per machine) and returns the
/// path of its `index.html`. Each report gets its page in `out`; a report
/// whose file name another directory already used gets its page under a
/// name prefixed with its directory's position (`2.X.html`). Unreadable
/// files, anything but a regular file (links followed), files past
/// [`max_file_bytes`](crate::bounded_read::max_file_bytes) and JSON that is
/// not a report are skipped. With no index to read, each test's trend is
/// its one report.
///
/// # Errors
///
/// When a directory cannot be listed or a page cannot be written.
pub fn build_viewer(dirs: &[PathBuf], out: &Path) -> std::io::Result<PathBuf> {
    let mut entries = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for (position, dir) in dirs.iter().enumerate() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            // A report directory is a user's path: only regular files, and
            // none past the cap (a link to /dev/zero is skipped, not read).
            let Ok(bytes) =
                crate::bounded_read::read_regular(&file, crate::bounded_read::max_file_bytes())
            else {
                continue;
            };
            let Some(document) = as_report(&bytes) else {
                continue;
            };
            let report_name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut page = page_name(&report_name);
            if !taken.insert(page.clone()) {
                page = format!("{}.{page}", position + 1);
                taken.insert(page.clone());
            }
            write_atomic(
                &out.join(&page),
                run_page::run_page(&document).as_bytes(),
                false,
            )?;
            let line = IndexLine::of(&document, Some(report_name));
            entries.push(Entry {
                page,
                history: vec![Point::of(&line)],
                line,
            });
        }
    }
    let path = out.join(VIEWER_INDEX_FILE);
    write_atomic(&path, overview::page(entries).as_bytes(), false)?;
    Ok(path)
}

#[cfg(test)]
mod tests;
