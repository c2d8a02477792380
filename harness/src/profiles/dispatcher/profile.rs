//! The `dispatcher` profile in the registry: lifecycle and policy through every stdio surface.

use crate::engine::check::Check;
use crate::engine::profile::{needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::selftest::{SelftestContext, SelftestRun};
use crate::engine::target::Target;

/// The `dispatcher` profile: one tool backend's lifecycle and policy, surface by surface.
pub struct DispatcherProfile;

impl Profile for DispatcherProfile {
    fn bindings_doc(&self) -> String {
        "the `dispatcher.*` lifecycle checks (one case per stdio surface, `mcp-stdio` in each era and `acp`; see docs/dispatcher.md)".into()
    }
    fn name(&self) -> &'static str {
        "dispatcher"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        super::catalogue()
            .into_iter()
            .map(|c| (super::binding_of(c.id), c))
            .collect()
    }
    /// Its cases run through every stdio surface, and its cross-surface check at the
    /// equivalence binding.
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![
            (
                crate::engine::check::STDIO_BINDING,
                crate::protocol::mcp::ALL_REVISIONS.to_vec(),
            ),
            (
                crate::protocol::acp::BINDING,
                vec![crate::protocol::acp::REVISION],
            ),
            (super::EQUIVALENCE_BINDING, vec!["all"]),
        ]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.dispatcher.is_some() && (target.mcp.is_some() || target.acp.is_some()),
            "profile dispatcher needs [dispatcher] (tool names, labels and the configurations, docs/dispatcher.md) and an MCP or ACP surface",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let Some(decl) = req.target.dispatcher.clone() else {
                return Ok(ProfileRun::default());
            };
            let (surfaces, notes) =
                super::surfaces(req.target, req.opts.timing, req.line_cap).await?;
            let mut r = super::run(&req.target.name, surfaces, decl, req.opts).await;
            let mut could_not_run = Vec::new();
            if !r.could_not_run.is_empty() {
                could_not_run.push(format!(
                    "{}: {}",
                    r.could_not_run.join("; "),
                    notes.join("; ")
                ));
            }
            r.notes.extend(notes);
            Ok(ProfileRun {
                report: r,
                could_not_run,
                eras: None,
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let faults = parity_fakes::dispatcher_catalogue()
            .iter()
            .map(|f| (f.name, f.checks));
        cx.reference_and_faults("reference dispatcher", faults, |fault, o| async move {
            super::run_reference(fault, &o?).await.ok()
        })
    }
}
