//! Attribute macros for symfonic-evals (see the `symfonic-evals` crate).
