//! The `guard` profile in the registry: one case per rule at `source#guard-1`.

use crate::engine::check::Check;
use crate::engine::profile::{at, needs, BoxRun, Profile, RunRequest};
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;

/// The `guard` profile: architecture rules over a source tree.
pub struct GuardProfile;

impl Profile for GuardProfile {
    fn bindings_doc(&self) -> String {
        "`source` (the static architecture rules of a source tree, revision `guard-1`; see docs/guard.md)".into()
    }
    fn name(&self) -> &'static str {
        "guard"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        at(super::BINDING, super::catalogue())
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(super::BINDING, vec![super::REVISION])]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.guard.is_some(),
            "profile guard needs [guard] (the rules file and the root to scan, docs/guard.md); or run `parity guard`",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            super::run_profile(req.target, req.opts)
                .map(Into::into)
                .map_err(|e| format!("guard: {e}"))
        })
    }
    fn selftest(&self, _cx: &SelftestContext) -> Vec<SelftestRun> {
        // The scans are blocking file work: off the runtime's threads, beside the other runs.
        vec![SelftestRun::Paced(Box::pin(async {
            tokio::task::spawn_blocking(super::selftest_runs)
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|(fault, report)| match fault {
                    Some(name) => (SelftestRole::Fault, name.to_string(), report),
                    None => (SelftestRole::Reference, "clean tree".into(), report),
                })
                .collect()
        }))]
    }
}
