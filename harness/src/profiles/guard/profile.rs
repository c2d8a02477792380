//! The `guard` profile in the registry: one case per rule at `source#guard-1`.

use crate::engine::check::Check;
use crate::engine::profile::{at, needs, BoxRun, Profile, RunRequest};
use crate::engine::target::Target;

/// The `guard` profile: architecture rules over a source tree.
pub struct GuardProfile;

impl Profile for GuardProfile {
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
}
