//! Keeps a target's panic message out of the process's stderr.
//!
//! The default panic hook prints the message, and a target's message may
//! quote turn state. Trial threads are silenced (the runner reports the panic
//! as a digest); every other thread keeps the hook it had.

use std::sync::Once;

use super::trial::WORKER_PREFIX;

pub(crate) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_trial_thread = std::thread::current()
                .name()
                .is_some_and(|name| name.starts_with(WORKER_PREFIX));
            if !on_trial_thread {
                previous(info);
            }
        }));
    });
}
