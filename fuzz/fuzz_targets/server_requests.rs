//! The servers' request parsers at their boundaries, under libFuzzer: the
//! first byte picks the door (the model endpoint's HTTP side, the MCP
//! fixture's HTTP side, its line side as a stranger or after the bridge's
//! secret), the next few where the bytes are cut into writes, the rest is
//! what is sent. Any input must be answered well-formed or closed, and the
//! servers must go on serving; the same doors and rule as the property
//! test `symfonic-evals/tests/parser_boundaries.rs`.
#![no_main]

#[path = "../../symfonic-evals/tests/boundaries/mod.rs"]
mod boundaries;

use std::sync::OnceLock;

use boundaries::{Door, Servers};
use libfuzzer_sys::fuzz_target;

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(Servers::start)
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let door = Door::ALL[usize::from(selector) % Door::ALL.len()];
    let cuts = rest.len().min(3);
    let (cuts, bytes) = rest.split_at(cuts);
    let splits: Vec<usize> = cuts.iter().map(|c| usize::from(*c)).collect();
    if let Err(broken) = servers().probe(door, bytes, &splits) {
        panic!("{door:?}: {broken}");
    }
});
