//! `symfonic-evals conformance`: the protocol conformance check against a
//! deployment started as a command, for companions and adopters whose tests
//! run outside cargo (`npm test`, `pytest`).

use std::process::ExitCode;

use symfonic_evals::process::{conformance, ConformanceInputs, ProcessSpec};

const USAGE: &str = "usage: symfonic-evals conformance [OPTIONS] -- PROGRAM [ARG...]";

const HELP: &str = "\
usage: symfonic-evals conformance [OPTIONS] -- PROGRAM [ARG...]

Starts PROGRAM with its arguments as a deployment speaking the process
protocol (v1), runs the conformance check against it and prints the checks.
Exits 0 when every check passed, 1 when one failed, 2 on a usage error.

  --prompt TEXT         a prompt every deployment answers (default: hello)
  --effect-prompt TEXT  a prompt whose turn applies an effect through the
                        ledger (without one, the ledger round trip is not
                        checked, and the report says so)
  --effect-state JSON   the state sent with the effect prompt
  -h, --help            this help";

/// Runs `conformance` with the arguments after the command's name.
pub(crate) fn run(mut args: impl Iterator<Item = String>) -> ExitCode {
    let mut inputs = ConformanceInputs::default();
    let usage = |why: &str| {
        eprintln!("symfonic-evals conformance: {why}\n{USAGE}");
        ExitCode::from(2)
    };
    let command: Vec<String> = loop {
        let Some(arg) = args.next() else {
            return usage("no program to check (give it after `--`)");
        };
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "--" => break args.by_ref().collect(),
            "--prompt" => match value("--prompt") {
                Ok(prompt) => inputs.prompt = prompt,
                Err(why) => return usage(&why),
            },
            "--effect-prompt" => match value("--effect-prompt") {
                Ok(prompt) => inputs.effect_prompt = Some(prompt),
                Err(why) => return usage(&why),
            },
            "--effect-state" => match value("--effect-state").and_then(|text| {
                serde_json::from_str(&text).map_err(|e| format!("--effect-state is not JSON ({e})"))
            }) {
                Ok(state) => inputs.effect_state = Some(state),
                Err(why) => return usage(&why),
            },
            other => return usage(&format!("unknown option {other}")),
        }
    };
    let Some((program, rest)) = command.split_first() else {
        return usage("no program to check (give it after `--`)");
    };
    let spec = ProcessSpec::new(program)
        .args(rest)
        .include_stderr_tail(true);
    let report = conformance(&spec, &inputs);
    println!("{}", report.render());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
