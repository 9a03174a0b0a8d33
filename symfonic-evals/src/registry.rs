//! Every pack an attribute expanded in this binary, registered at link time,
//! so a program (not only `cargo test`) can list and run them, and so a suite
//! can prove it exercises every capability its deployment claims.

use std::fmt;

use crate::capability::CapabilityEvidence;
use crate::packs::{PackDefinition, PackKind};
use crate::report::PackRun;

/// One expanded pack: where it was written, what it checks (the explicit
/// arguments, from which the definition and its fingerprint are resolved),
/// and the function that runs it.
#[derive(Debug)]
pub struct RegisteredPack {
    name: &'static str,
    module: &'static str,
    kind: PackKind,
    file: &'static str,
    line: u32,
    arguments: &'static str,
    expected_to_pass: bool,
    run: fn() -> PackRun,
}

inventory::collect!(RegisteredPack);

impl RegisteredPack {
    /// What the attribute expansion registers. Not meant to be called by
    /// hand: a pack written without an attribute has no place in the list.
    #[doc(hidden)]
    pub const fn new(
        name: &'static str,
        module: &'static str,
        kind: PackKind,
        (file, line): (&'static str, u32),
        arguments: &'static str,
        expected_to_pass: bool,
        run: fn() -> PackRun,
    ) -> Self {
        Self {
            name,
            module,
            kind,
            file,
            line,
            arguments,
            expected_to_pass,
            run,
        }
    }

    /// Whether its test expects the pack to pass: false for a test marked
    /// `#[ignore]` or `#[should_panic]` (a broken twin, say), which then
    /// exercises no capability.
    pub fn expected_to_pass(&self) -> bool {
        self.expected_to_pass
    }

    /// The annotated function's name (also the test's name).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The module it was written in, as `module_path!()` spells it.
    pub fn module(&self) -> &'static str {
        self.module
    }

    /// The test's name as the test harness lists it (its module path
    /// without the crate, then the function), so `cargo test -- --exact
    /// PATH` (or `cargo nextest run -E 'test(=PATH)'`) runs exactly it.
    pub fn path(&self) -> String {
        match self.module.split_once("::") {
            Some((_crate, inner)) => format!("{inner}::{}", self.name),
            None => self.name.to_owned(),
        }
    }

    /// Which pack it runs.
    pub fn kind(&self) -> PackKind {
        self.kind
    }

    /// The source file and line of the pack attribute.
    pub fn location(&self) -> (&'static str, u32) {
        (self.file, self.line)
    }

    /// The pack's definition, resolved exactly as its test runs it.
    pub fn definition(&self) -> PackDefinition {
        PackDefinition::from_arguments(self.kind, self.arguments)
            .expect("a registered pack's arguments were checked when it expanded")
    }

    /// A sha-256 (hex) of the resolved definition, defaults and fixture
    /// contents included: equal for two packs that run the same scenario
    /// (see [`PackDefinition::fingerprint`]).
    pub fn fingerprint(&self) -> String {
        self.definition().fingerprint()
    }

    /// Runs the pack against the deployment its function builds.
    pub fn run(&self) -> PackRun {
        (self.run)()
    }
}

/// Every registered pack in this binary, ordered by module and name.
pub fn registered_packs() -> Vec<&'static RegisteredPack> {
    let mut packs: Vec<&'static RegisteredPack> =
        inventory::iter::<RegisteredPack>.into_iter().collect();
    packs.sort_by_key(|pack| (pack.module, pack.name));
    packs
}

/// Capabilities a deployment declares that no pack exercises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncoveredCapabilities {
    /// The uncovered capability names, sorted.
    pub capabilities: Vec<String>,
}

impl fmt::Display for UncoveredCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.capabilities.iter().map(|c| format!("`{c}`")).collect();
        let (noun, verb) = if names.len() == 1 {
            ("capability", "is")
        } else {
            ("capabilities", "are")
        };
        write!(
            f,
            "{noun} {} {verb} declared by the deployment but exercised by no registered pack",
            names.join(", ")
        )
    }
}

impl std::error::Error for UncoveredCapabilities {}

/// Checks that every capability `evidence` declares is exercised by at least
/// one pack registered in this binary.
///
/// # Errors
///
/// The capabilities nothing exercises, by name.
pub fn check_capability_coverage(
    evidence: &CapabilityEvidence,
) -> Result<(), UncoveredCapabilities> {
    let exercised = registered_packs()
        .into_iter()
        .filter(|pack| pack.expected_to_pass())
        .map(RegisteredPack::kind);
    check_coverage_by(evidence, exercised)
}

/// [`check_capability_coverage`] against an explicit list of pack kinds, for
/// suites that run packs written by hand.
///
/// # Errors
///
/// The capabilities none of `kinds` exercises, by name.
pub fn check_coverage_by(
    evidence: &CapabilityEvidence,
    kinds: impl IntoIterator<Item = PackKind>,
) -> Result<(), UncoveredCapabilities> {
    let covered: Vec<&'static str> = kinds.into_iter().map(PackKind::capability).collect();
    let capabilities: Vec<String> = evidence
        .capabilities
        .iter()
        .filter(|name| !covered.contains(&name.as_str()))
        .cloned()
        .collect();
    if capabilities.is_empty() {
        Ok(())
    } else {
        Err(UncoveredCapabilities { capabilities })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::PackDefinition;
    use crate::runner::{run_pack, RunOptions};

    const SILENT: &str = r#"{"prompt": "p", "tool_name": "t"}"#;

    fn run_nothing() -> PackRun {
        struct Silent;
        impl crate::Target for Silent {
            fn capabilities(&self) -> CapabilityEvidence {
                CapabilityEvidence::new()
            }
            fn run_turn(
                &mut self,
                _: &crate::PromptRequest,
            ) -> Result<crate::TurnRecord, crate::TurnError> {
                Ok(crate::TurnRecord::builder().build())
            }
        }
        let pack = PackDefinition::from_arguments(PackKind::ExtensionTool, SILENT).unwrap();
        run_pack("registry::silent", &pack, &RunOptions::default(), |_| {
            Silent
        })
    }

    inventory::submit! {
        RegisteredPack::new("silent", "registry_test::inner", PackKind::ExtensionTool, (file!(), line!()), SILENT, true, run_nothing)
    }

    #[test]
    fn lists_and_runs_what_was_registered() {
        let packs = registered_packs();
        let silent = packs.iter().find(|p| p.path() == "inner::silent").unwrap();
        assert_eq!(silent.module(), "registry_test::inner");
        assert_eq!(silent.kind(), PackKind::ExtensionTool);
        assert_eq!(silent.location().0, file!());
        assert!(
            !silent.run().passed(),
            "a deployment declaring nothing is not applicable"
        );
    }

    #[test]
    fn names_every_uncovered_capability() {
        let evidence = CapabilityEvidence::new()
            .capability("tools")
            .capability("human")
            .capability("memory");
        let error = check_coverage_by(&evidence, [PackKind::Procedural]).unwrap_err();
        assert_eq!(error.capabilities, ["human", "memory"]);
        assert_eq!(
            error.to_string(),
            "capabilities `human`, `memory` are declared by the deployment but exercised by no registered pack"
        );
        let covered = [PackKind::Procedural, PackKind::ApprovalResume];
        let error = check_coverage_by(&evidence, covered).unwrap_err();
        assert_eq!(
            error.to_string(),
            "capability `memory` is declared by the deployment but exercised by no registered pack"
        );
        assert!(check_coverage_by(
            &CapabilityEvidence::new().capability("extensions"),
            [PackKind::ExtensionTool]
        )
        .is_ok());
    }

    #[test]
    fn this_binary_covers_extensions_only() {
        let evidence = CapabilityEvidence::new().capability("extensions");
        assert!(check_capability_coverage(&evidence).is_ok());
        let evidence = evidence.capability("tools");
        let error = check_capability_coverage(&evidence).unwrap_err();
        assert_eq!(error.capabilities, ["tools"]);
    }
}
