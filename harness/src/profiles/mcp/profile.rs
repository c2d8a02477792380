//! The `mcp` profile in the registry: the stdio catalogue, in each era the server speaks.

use super::run_mcp_with_scenarios;
use crate::engine::check::{Check, McpTarget};
use crate::engine::profile::{at, needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::reference::{fake_target, reference_target};
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;
use crate::transport::peer::PeerSpec;

/// The `mcp` profile: MCP over stdio (binding `mcp-stdio`), both eras.
pub struct McpProfile;

impl Profile for McpProfile {
    fn bindings_doc(&self) -> String {
        "`mcp-stdio` (the MCP checks, one case per protocol era the server speaks)".into()
    }
    fn name(&self) -> &'static str {
        "mcp"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        at(super::BINDING, super::catalogue())
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(super::BINDING, crate::protocol::mcp::ALL_REVISIONS.to_vec())]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.mcp.is_some(),
            "profile mcp needs an MCP surface (--mcp or [surfaces.mcp]), and the target has none",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let Some(m) = &req.target.mcp else {
                return Ok(ProfileRun::default());
            };
            let mut spec = PeerSpec::from_command_line(&m.command)
                .map_err(|e| format!("surfaces.mcp.command: {e}"))?;
            spec.line_cap = req.line_cap;
            let mut t = McpTarget::new(m.command.clone(), spec);
            t.reference = m.reference;
            if req.is_reference {
                t = crate::engine::reference::reference_target();
                t.spec.line_cap = req.line_cap;
            }
            // The target's declarations (the bundled reference's own, when it is the target).
            t.calls = req.target.calls.clone();
            t.prompt_arguments = req.target.prompt_arguments.clone();
            if req.slow_call.is_some() {
                t.slow_call = req.slow_call.clone();
            }
            let mut opts = req.opts.clone();
            opts.eras = req.era.unwrap_or(m.eras);
            let r = run_mcp_with_scenarios(t, &opts, req.scenarios).await?;
            let mut could_not_run = Vec::new();
            if r.eras.is_empty() {
                let notes = r.notes.join("; ");
                let hint = if notes.contains("protocolVersion") {
                    " (the peer answered like an ACP agent: check it with --acp)"
                } else {
                    ""
                };
                could_not_run.push(format!(
                    "the MCP surface did not start, or answered neither initialize nor server/discover: {notes}{hint}"
                ));
            }
            Ok(ProfileRun {
                report: r,
                could_not_run,
                eras: Some(opts.eras),
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let o = cx.options(&[]);
        let mut runs = vec![SelftestRun::one(
            SelftestRole::Reference,
            "reference MCP",
            async move { super::run_mcp(reference_target(), &o?).await.ok() },
        )];
        for f in parity_fakes::benign_catalogue() {
            let o = cx.options(f.passes);
            let mut target = fake_target(f.name);
            target.spec.env.extend(cx.benign_env());
            runs.push(SelftestRun::one(SelftestRole::Benign, f.name, async move {
                super::run_mcp(target, &o?).await.ok()
            }));
        }
        // A fault with no trips is a bad peer for the harness's own tests.
        for f in parity_fakes::catalogue()
            .iter()
            .filter(|f| !f.trips.is_empty())
        {
            let o = cx.options(f.trips);
            let target = fake_target(f.name);
            runs.push(SelftestRun::one(SelftestRole::Fault, f.name, async move {
                super::run_mcp(target, &o?).await.ok()
            }));
        }
        runs
    }
}
