//! Starting Python by the interpreter's own path rather than a shim's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The interpreter that `program` (such as `"python3"`) starts, by its
/// absolute path, asked once per program and kept for the process.
///
/// Where `python3` on `PATH` is a version manager's shim (pyenv, asdf),
/// every start first runs a dozen shell processes to pick the version,
/// a few hundred milliseconds before Python itself begins; a pack starts a
/// deployment a dozen times or more, and a suite thousands. Give the path
/// this returns to [`ProcessSpec::new`](super::ProcessSpec::new) to pay
/// that once, where the deployment is started: not in code that every
/// process of the program runs, since a test binary re-executed for an
/// isolated run would ask again in each child. When the interpreter cannot
/// be asked (not installed, not Python), `program` comes back unchanged, so
/// starting it fails as it would have.
///
/// ```no_run
/// use symfonic_evals::process::{python_interpreter, ProcessSpec};
///
/// let spec = ProcessSpec::new(python_interpreter("python3")).arg("desk.py");
/// ```
pub fn python_interpreter(program: &str) -> PathBuf {
    static KNOWN: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(path) = known
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(program)
    {
        return path.clone();
    }
    let path = std::process::Command::new(program)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|path| PathBuf::from(path.trim()))
        .filter(|path| path.is_absolute())
        .unwrap_or_else(|| PathBuf::from(program));
    known
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(program.to_owned(), path.clone());
    path
}

#[cfg(test)]
mod tests {
    use super::python_interpreter;

    #[test]
    fn an_unknown_program_comes_back_unchanged() {
        let missing = "symfonic-evals-no-such-python";
        assert_eq!(python_interpreter(missing).as_os_str(), missing);
    }

    #[cfg(unix)]
    #[test]
    fn python3_resolves_to_an_absolute_interpreter_that_runs() {
        let path = python_interpreter("python3");
        assert!(path.is_absolute(), "{}", path.display());
        let out = std::process::Command::new(&path)
            .args(["-c", "print(1)"])
            .output()
            .expect("the resolved interpreter starts");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    }
}
