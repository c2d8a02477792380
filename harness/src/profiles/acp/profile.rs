//! The `acp` profile in the registry: the ACP v1 catalogue at `acp#v1`.

use crate::engine::check::{Check, McpTarget};
use crate::engine::profile::{at, needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::reference::{acp_fake_target, reference_acp_target};
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;
use crate::protocol::acp::{BINDING, REVISION};
use crate::transport::peer::PeerSpec;

/// The `acp` profile: an ACP v1 agent over stdio.
pub struct AcpProfile;

impl Profile for AcpProfile {
    fn bindings_doc(&self) -> String {
        "`acp` (the ACP v1 checks, revision `v1`)".into()
    }
    fn name(&self) -> &'static str {
        "acp"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        at(BINDING, super::catalogue())
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(BINDING, vec![REVISION])]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.acp.is_some(),
            "profile acp needs an ACP surface (--acp or [surfaces.acp]), and the target has none",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let Some(a) = &req.target.acp else {
                return Ok(ProfileRun::default());
            };
            let mut spec = PeerSpec::from_command_line(&a.command)
                .map_err(|e| format!("surfaces.acp.command: {e}"))?;
            spec.line_cap = req.line_cap;
            let mut t = McpTarget::new(a.command.clone(), spec);
            t.tool_method = a.tool_method.clone();
            t.tool_params = a.params.clone();
            t.cancel_prompt = a.cancel_prompt.clone();
            t.reference = req.is_reference;
            let r = super::run_acp(t, req.opts).await?;
            let mut could_not_run = Vec::new();
            if r.eras.is_empty() {
                let notes = r.notes.join("; ");
                let hint = if notes.contains("protocolVersion") {
                    " (the peer answered like an MCP server: check it with --mcp)"
                } else {
                    ""
                };
                could_not_run.push(format!(
                    "the ACP agent did not start, or did not answer initialize: {notes}{hint}"
                ));
            }
            Ok(ProfileRun {
                report: r,
                could_not_run,
                eras: None,
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let o = cx.options(&[]);
        let mut runs = vec![SelftestRun::one(
            SelftestRole::Reference,
            "reference ACP",
            async move { super::run_acp(reference_acp_target(), &o?).await.ok() },
        )];
        for f in parity_fakes::acp_benign_catalogue() {
            let o = cx.options(f.passes);
            let mut target = acp_fake_target(f.name);
            target.spec.env.extend(cx.benign_env());
            runs.push(SelftestRun::one(SelftestRole::Benign, f.name, async move {
                super::run_acp(target, &o?).await.ok()
            }));
        }
        // The faults of the equivalence profile are that profile's; one with no trips is a bad
        // agent for the harness's own tests.
        let faults = parity_fakes::acp_catalogue()
            .iter()
            .filter(|f| !f.trips.is_empty() && f.profile == parity_fakes::AcpProfile::Acp);
        for f in faults {
            let o = cx.options(f.trips);
            let target = acp_fake_target(f.name);
            runs.push(SelftestRun::one(SelftestRole::Fault, f.name, async move {
                super::run_acp(target, &o?).await.ok()
            }));
        }
        runs
    }
}
