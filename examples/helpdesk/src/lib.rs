//! Reference deployment.
