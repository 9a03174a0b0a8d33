//! A reference deployment for symfonic-evals: a small help desk agent that
//! earns all three packs and every probe, and the broken twins that each
//! fail one, where their flaw shows.
//!
//! Read it in this order:
//!
//! - [`model`]: the model trait and the deterministic scripted model;
//! - [`store`]: the SQLite database in the durable directory, and the
//!   effect oracle that counts what it holds;
//! - [`tools`] and [`extension`]: what the agent can call;
//! - [`memory`]: episodes and the consolidation cycle that drafts procedures;
//! - [`review`]: the operator's review door and identity digests;
//! - [`gate`]: the governance pipeline every call passes;
//! - [`interaction`]: `ask_user`, checkpoints, single-use tokens and
//!   question ids;
//! - [`deployment`]: the agent loop and the `Target` implementation;
//! - [`twins`]: the flaws, one switch each;
//! - [`honest`]: the honest variants, correct configurations every pack
//!   they are meant for must pass;
//! - [`packs`]: the pack arguments this desk is evaluated with, and its run
//!   options;
//! - [`python`]: the same desk in Python, judged over the process protocol;
//! - [`frameworks`]: the desk on LangGraph and the OpenAI Agents SDK,
//!   through the companion's adapters;
//! - [`typescript`]: the desk in TypeScript, plain, on LangGraph.js and on
//!   the OpenAI Agents SDK for JavaScript, judged under `node`;
//! - [`openai`] and [`upstream`]: the model over HTTP (an OpenAI-compatible
//!   client for the harness's replay endpoint) and the scripted upstreams
//!   cassettes are recorded against.
#![warn(missing_docs)]

pub mod deployment;
pub mod extension;
pub mod frameworks;
pub mod gate;
pub mod honest;
pub mod interaction;
pub mod memory;
pub mod model;
pub mod openai;
pub mod packs;
pub mod python;
pub mod review;
pub mod store;
pub mod tools;
pub mod twins;
pub mod typescript;
pub mod upstream;

pub use deployment::{Helpdesk, OpenError};
pub use honest::Variant;
pub use twins::{Catch, Flaw, Pack};
