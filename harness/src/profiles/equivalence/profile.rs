//! The `equivalence` profile in the registry: the same call through every surface, from the
//! scenarios and generated from each tool's `inputSchema`.

use crate::engine::check::Check;
use crate::engine::profile::{needs, BoxRun, Family, Profile, ProfileRun, RunRequest};
use crate::engine::run::RunReport;
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;

/// Each family of [`super::EQUIVALENCE_CHECKS`], with what one of its cases does.
const FAMILIES: [(&str, &str); 2] = [
    (super::EQUIVALENCE_CHECKS[0], "One case per scenario with tool calls (`equivalence.scenario.<scenario-id>@equivalence#all`): every `call` step runs through every surface (MCP stdio in each era the server speaks, MCP over Streamable HTTP, and ACP), each started fresh, and the outcomes must be equal after normalizing the target's volatile pointers."),
    (super::EQUIVALENCE_CHECKS[1], "One case per tool (`equivalence.generated.<tool>@equivalence#all`): calls generated from the tool's `inputSchema` (valid ones, and invalid ones made by mutation; `--cases`, `--seed`) run through every surface; a mismatch is shrunk to a minimal call printed as a scenario step."),
];

/// The `equivalence` profile: one backend behind several surfaces gives one outcome per call.
pub struct EquivalenceProfile;

impl Profile for EquivalenceProfile {
    fn bindings_doc(&self) -> String {
        "`equivalence` (the same calls through every surface; see docs/equivalence.md)".into()
    }
    fn name(&self) -> &'static str {
        "equivalence"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        Vec::new()
    }
    fn families(&self) -> Vec<Family> {
        FAMILIES
            .iter()
            .map(|&(id, description)| Family {
                id,
                description,
                binding: super::BINDING,
                level: "MUST",
                revisions: "all surfaces",
                capability: "tools",
                spec: super::SPEC,
                quote: super::QUOTE,
            })
            .collect()
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(super::BINDING, vec![super::REVISION])]
    }
    /// Two surfaces at least: an MCP server counts once per era it speaks (known only once it
    /// runs), an ACP agent once. A default run asks for both an MCP and an ACP surface.
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.mcp.is_some(),
            "profile equivalence needs two surfaces: an MCP surface (each protocol era it speaks counts) beside an ACP surface, or an MCP server that speaks both eras",
        )
    }
    fn runs_by_default(&self, target: &Target) -> bool {
        target.mcp.is_some() && target.acp.is_some()
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let target = req.target;
            let opts = req.opts;
            let (surfaces, notes) = super::surfaces_of(target, opts.timing, req.line_cap).await?;
            let seed = req
                .seed
                .or(target.equivalence.seed)
                .unwrap_or_else(random_seed);
            let plan = super::Plan {
                surfaces,
                volatile: target.equivalence.volatile.clone(),
                compare_messages: target.equivalence.compare_messages,
                stateful: target.equivalence.stateful.clone(),
                tools: target.equivalence.tools.clone(),
                calls: target.calls.clone(),
                cases: req.cases.or(target.equivalence.cases).unwrap_or(100),
                seed,
                reference: req.is_reference || target.mcp.as_ref().is_some_and(|m| m.reference),
            };
            let selected = |id: &str| opts.selection.selects(id);
            let (cases, more) = super::run(
                plan,
                req.scenarios,
                opts.timing,
                (opts.jobs, opts.control.clone()),
                &selected,
            )
            .await;
            let report = RunReport {
                target: target.name.clone(),
                notes: notes.into_iter().chain(more).collect(),
                cases,
                seed: Some(seed),
                ..RunReport::default()
            };
            // Too few surfaces: say why the missing ones are missing (a surface that did not
            // start or answer is a note of surfaces_of).
            let could_not_run = report
                .notes
                .iter()
                .find(|n| n.starts_with("equivalence needs at least two surfaces"))
                .map(|n| {
                    let why: Vec<&str> = report
                        .notes
                        .iter()
                        .filter(|m| *m != n)
                        .map(|m| m.strip_prefix("equivalence: ").unwrap_or(m))
                        .collect();
                    if why.is_empty() {
                        n.clone()
                    } else {
                        format!("{n}: {}", why.join("; "))
                    }
                })
                .into_iter()
                .collect();
            Ok(ProfileRun {
                report,
                could_not_run,
                eras: None,
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let mut runs = vec![SelftestRun::one(
            SelftestRole::Reference,
            "reference equivalence",
            {
                let cx = cx.clone();
                async move { Some(selftest_run(&["reference", "acp"], None, &[], &cx).await) }
            },
        )];
        let faults = parity_fakes::acp_catalogue()
            .iter()
            .filter(|f| !f.trips.is_empty() && f.profile == parity_fakes::AcpProfile::Equivalence);
        for f in faults {
            let cx = cx.clone();
            let (name, trips) = (f.name, f.trips);
            runs.push(SelftestRun::one(SelftestRole::Fault, name, async move {
                Some(selftest_run(&["fake", name], None, trips, &cx).await)
            }));
        }
        // A correct agent with its own call and result shape, declared as a user would
        // (`parity_fakes::WRAPPED_CALL_DECLARATION`): equivalence must pass it.
        let cx2 = cx.clone();
        let name = "acp-wrapped-call";
        runs.push(SelftestRun::one(SelftestRole::Benign, name, async move {
            Some(selftest_run(&["fake", name], None, &[], &cx2).await)
        }));
        // A correct MCP server whose tool results have a shape of their own
        // (`parity_fakes::STATUS_RESULTS_DECLARATION`): equivalence must pass it too.
        let cx = cx.clone();
        let name = "benign-status-results";
        runs.push(SelftestRun::one(SelftestRole::Benign, name, async move {
            Some(selftest_run(&["reference", "acp"], Some(name), &[], &cx).await)
        }));
        runs
    }
}

/// The ACP surface `command` with the tool-method keys of `declaration` (TOML lines of a
/// `[surfaces.acp]` table after `command`), read as a target file would read them.
///
/// Errors: the declaration does not parse (the message names line and key, the file being
/// `declaration`).
pub fn declared_acp(
    command: &str,
    declaration: &str,
) -> Result<crate::engine::target::AcpSurface, String> {
    let text = format!(
        "version = 1\n[surfaces.acp]\ncommand = {}\n{declaration}",
        toml::Value::String(command.to_string())
    );
    crate::engine::target::parse("declaration", &text)
        .map_err(|e| e.to_string())?
        .acp
        .ok_or_else(|| "the declaration has no [surfaces.acp]".to_string())
}

/// A seed from the clock and the process id, for runs that name none.
fn random_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ (u64::from(std::process::id()) << 32)
}

/// The self-test's equivalence run: the clean reference MCP server (or `parity fake
/// <mcp_fake>` declared with [`parity_fakes::STATUS_RESULTS_DECLARATION`]) beside the ACP
/// agent this executable serves with `acp_args` (`["reference", "acp"]` or `["fake", name]`),
/// 40 generated cases per tool from seed 1, keeping the cases whose check is in `checks` (all
/// when empty). A surface that does not start is a note of the report.
async fn selftest_run(
    acp_args: &[&str],
    mcp_fake: Option<&str>,
    checks: &[&str],
    cx: &SelftestContext,
) -> RunReport {
    let mut target = crate::engine::target::reference();
    let mut report = RunReport {
        target: match mcp_fake {
            Some(name) => format!("parity fake {name}"),
            None => format!("parity {}", acp_args.join(" ")),
        },
        seed: Some(1),
        ..RunReport::default()
    };
    if let (Some(name), Some(m)) = (mcp_fake, target.mcp.as_mut()) {
        let exe = crate::engine::target::shell_quote(&cx.exe);
        m.command = format!("{exe} fake {name}");
        let text = format!(
            "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n{}",
            parity_fakes::STATUS_RESULTS_DECLARATION
        );
        match crate::engine::target::parse("STATUS_RESULTS_DECLARATION", &text) {
            Ok(t) => {
                if let Some(d) = t.mcp {
                    m.rules.kinds = d.rules.kinds;
                }
            }
            Err(e) => {
                report.notes.push(e.to_string());
                return report;
            }
        }
    }
    if let Some(a) = target.acp.as_mut() {
        let exe = crate::engine::target::shell_quote(&cx.exe);
        a.command = format!("{exe} {}", acp_args.join(" "));
        // The benign agent with its own call shape, declared as its target file would.
        if acp_args.last() == Some(&"acp-wrapped-call") {
            match declared_acp(&a.command, parity_fakes::WRAPPED_CALL_DECLARATION) {
                Ok(d) => {
                    a.tool_method = d.tool_method;
                    a.params = d.params;
                    a.rules.kinds = d.rules.kinds;
                }
                Err(e) => {
                    report.notes.push(e);
                    return report;
                }
            }
        }
    }
    let (surfaces, notes) = match super::surfaces_of(
        &target,
        cx.timing,
        crate::transport::wire::DEFAULT_LINE_CAP,
    )
    .await
    {
        Ok(x) => x,
        Err(e) => {
            report.notes.push(e);
            return report;
        }
    };
    report.notes.extend(notes);
    let plan = super::Plan {
        surfaces,
        volatile: target.equivalence.volatile.clone(),
        compare_messages: false,
        stateful: target.equivalence.stateful.clone(),
        tools: Vec::new(),
        calls: crate::engine::reference::reference_target().calls,
        cases: if checks.is_empty() || checks.contains(&"equivalence.generated") {
            40
        } else {
            0
        },
        seed: 1,
        reference: true,
    };
    let keep =
        |id: &str| checks.is_empty() || checks.iter().any(|c| id.starts_with(&format!("{c}.")));
    let (cases, more) = super::run(
        plan,
        &cx.scenarios,
        cx.timing,
        (cx.jobs, Default::default()),
        &keep,
    )
    .await;
    report.cases = cases;
    report.notes.extend(more);
    report
}
