//! A `parity` with one more profile, `toy`, registered through the library entry point the
//! `parity` binary uses (`parity_harness::cli::run_with`): the registry is parity's own plus a
//! profile with one check, `toy.answer`, at binding `toy#v1`. `tests/tests/library.rs` drives
//! `list`, `run`, the JSON and JUnit reports and a baseline through it.
//!
//! `TOY_VERDICT=fail` makes the check fail (so a baseline can list it); anything else passes.

use parity_harness::engine::check::{Check, CheckKind, Finding, Level, Revs};
use parity_harness::engine::profile::{BoxRun, Profile, RunRequest};
use parity_harness::engine::run::{case_id, to_result, RunReport};
use parity_harness::engine::target::Target;
use std::sync::Arc;

const BINDING: &str = "toy";
const REVISION: &str = "v1";

fn check() -> Check {
    Check {
        id: "toy.answer",
        requirement: "The toy answers 42.",
        level: Level::Must,
        quote: "The toy MUST answer 42.",
        section: "docs/library.md#a-profile-of-your-own",
        revs: Revs::Only(&[REVISION]),
        capability: None,
        kind: CheckKind::Own,
    }
}

struct Toy;

impl Profile for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        vec![(BINDING, check())]
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(BINDING, vec![REVISION])]
    }
    fn ready(&self, _target: &Target) -> Result<(), String> {
        Ok(())
    }
    fn runs_by_default(&self, _target: &Target) -> bool {
        false
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let c = check();
            let mut report = RunReport {
                target: req.target.name.clone(),
                ..RunReport::default()
            };
            report.eras.insert(BINDING.into(), REVISION.into());
            if req
                .opts
                .selection
                .selects(&case_id(BINDING, c.id, REVISION))
            {
                let answer = if std::env::var("TOY_VERDICT").is_ok_and(|v| v == "fail") {
                    41
                } else {
                    42
                };
                let finding = if answer == 42 {
                    Finding::pass(vec![format!("the toy answered {answer}")])
                } else {
                    Finding::violated(
                        format!("the toy answered {answer}, not 42"),
                        vec![format!("the toy answered {answer}")],
                    )
                };
                report
                    .cases
                    .push(to_result(BINDING, &c, REVISION, finding, 0));
            }
            Ok(report.into())
        })
    }
}

fn main() {
    let mut registry = parity_harness::profiles::builtin();
    if let Err(e) = registry.register(Arc::new(Toy)) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    std::process::exit(parity_harness::cli::run_with(registry, std::env::args_os()));
}
