//! The argument tables of each attribute's documentation page
//! (`docs/<attribute>.md`) against the attribute's own argument list
//! ([`crate::schema`]): every argument the attribute accepts has a row, in
//! the required table when it is required, no row names an argument it
//! does not accept, and the `skip_probes` row lists exactly the pack's
//! probes. The pages cannot drift from what the macro checks.

use std::collections::BTreeSet;

use crate::schema::{Kind, Presence};

fn page(kind: Kind) -> &'static str {
    match kind {
        Kind::Procedural => include_str!("../docs/procedural_pack.md"),
        Kind::ApprovalResume => include_str!("../docs/approval_resume_pack.md"),
        Kind::ExtensionTool => include_str!("../docs/extension_tool_pack.md"),
        Kind::ExactlyOnce => include_str!("../docs/exactly_once_pack.md"),
    }
}

/// One row of an argument table: the names its first cell documents (its
/// backticked names outside parentheses, which hold the default) and the
/// whole row.
struct Row<'a> {
    names: Vec<String>,
    line: &'a str,
}

/// The rows of every table in the page's `# Arguments` section, each with
/// whether its table is the required one (the first).
fn argument_rows(text: &str) -> Vec<(bool, Row<'_>)> {
    let mut in_section = false;
    let mut table = 0;
    let mut in_table = false;
    let mut rows = Vec::new();
    for line in text.lines() {
        if line.starts_with("# ") {
            in_section = line == "# Arguments";
            continue;
        }
        if !in_section {
            continue;
        }
        let is_row = line.starts_with('|');
        if is_row && !in_table {
            table += 1;
        }
        in_table = is_row;
        if !is_row || line.starts_with("| argument") || line.starts_with("|---") {
            continue;
        }
        let first = line.split('|').nth(1).unwrap_or("");
        rows.push((
            table == 1,
            Row {
                names: names_outside_parentheses(first),
                line,
            },
        ));
    }
    rows
}

fn names_outside_parentheses(cell: &str) -> Vec<String> {
    let mut depth = 0_u32;
    let mut outside = String::new();
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    outside
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_argument_has_a_row_in_its_table_and_every_row_an_argument() {
    for kind in Kind::ALL {
        let rows = argument_rows(page(kind));
        assert!(!rows.is_empty(), "{}: no argument tables", kind.attribute());
        let documented = |required: bool| -> BTreeSet<String> {
            rows.iter()
                .filter(|(r, _)| *r == required)
                .flat_map(|(_, row)| row.names.iter().cloned())
                .collect()
        };
        let accepted = |presence: Presence| -> BTreeSet<String> {
            kind.fields()
                .filter(|f| f.presence == presence)
                .map(|f| f.name.to_owned())
                .collect()
        };
        assert_eq!(
            documented(true),
            accepted(Presence::Required),
            "docs/{}.md: the required arguments' table",
            kind.attribute()
        );
        assert_eq!(
            documented(false),
            accepted(Presence::Optional),
            "docs/{}.md: the optional arguments' tables",
            kind.attribute()
        );
    }
}

#[test]
fn the_skip_probes_row_lists_every_probe() {
    for kind in Kind::ALL {
        let rows = argument_rows(page(kind));
        let row = rows
            .iter()
            .map(|(_, row)| row)
            .find(|row| row.names == ["skip_probes"])
            .unwrap_or_else(|| panic!("{}: no skip_probes row", kind.attribute()));
        let listed: BTreeSet<&str> = row
            .line
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|name| name.contains('/'))
            .collect();
        let probes: BTreeSet<&str> = kind.probes().iter().copied().collect();
        assert_eq!(
            listed,
            probes,
            "docs/{}.md: the skip_probes row",
            kind.attribute()
        );
    }
}

#[test]
fn a_cell_names_its_arguments_not_its_default() {
    assert_eq!(
        names_outside_parentheses(
            " `continued_attribute` (`\"resume_continued\"`), `checkpoint_attribute` (`\"x\"`) "
        ),
        ["continued_attribute", "checkpoint_attribute"]
    );
    let rows = argument_rows("# Arguments\n\n| argument | value |\n|---|---|\n| `a` | x |\n\nOptional:\n\n| argument | value |\n|---|---|\n| `b` (`1`) | y |\n\n# Errors\n| `c` | z |\n");
    let names: Vec<(bool, &[String])> = rows
        .iter()
        .map(|(r, row)| (*r, row.names.as_slice()))
        .collect();
    assert_eq!(
        names,
        [
            (true, &["a".to_owned()][..]),
            (false, &["b".to_owned()][..])
        ]
    );
}
