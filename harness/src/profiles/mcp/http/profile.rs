//! The `mcp-http` profile in the registry: the transport-neutral MCP checks and the Streamable
//! HTTP transport's own, at `mcp-http`.

use crate::engine::check::{Check, McpTarget, HTTP_BINDING};
use crate::engine::http_surface::{open, reference_http_spec, FacadeSource};
use crate::engine::profile::{needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::run::{EraSel, RunOptions, RunReport};
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;
use crate::transport::peer::PeerSpec;

/// The `mcp-http` profile: an MCP server over Streamable HTTP.
pub struct McpHttpProfile;

impl Profile for McpHttpProfile {
    fn bindings_doc(&self) -> String {
        "`mcp-http` (the same MCP checks over Streamable HTTP, except the stdio-only ones, plus the `mcp.http.*` transport checks)".into()
    }
    fn name(&self) -> &'static str {
        "mcp-http"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        crate::profiles::mcp::catalogue()
            .into_iter()
            .filter(|c| !super::stdio_only(c.id))
            .chain(super::catalogue())
            .map(|c| (HTTP_BINDING, c))
            .collect()
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(HTTP_BINDING, crate::protocol::mcp::ALL_REVISIONS.to_vec())]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.http.is_some() || target.reference_facade.is_some(),
            "profile mcp-http needs an MCP server over Streamable HTTP (--url or [surfaces.http])",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let mut opts = req.opts.clone();
            opts.eras = req.era.unwrap_or(EraSel::All);
            let mut could_not_run = Vec::new();
            let mut report = RunReport::default();
            match run_profile(req.target, &opts, req.line_cap).await {
                Ok(r) => {
                    if r.eras.is_empty() {
                        could_not_run.push(format!(
                            "the MCP server over Streamable HTTP answered neither initialize nor server/discover: {}",
                            r.notes.join("; ")
                        ));
                    }
                    report = r;
                }
                Err(e) => {
                    could_not_run.push(format!("the MCP server over HTTP did not start: {e}"))
                }
            }
            Ok(ProfileRun {
                report,
                could_not_run,
                eras: Some(opts.eras),
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        // A fake HTTP server in its direct catalogue form, as `parity fake-http <name>` starts it.
        let fake = |name: &'static str, o: Option<RunOptions>, exe: &str| {
            let spec = PeerSpec::new(
                exe.to_owned(),
                ["fake-http", name, "--catalogue", "direct"]
                    .map(String::from)
                    .to_vec(),
            );
            async move {
                run_mcp_http(
                    &format!("parity fake-http {name}"),
                    FacadeSource::Command(spec),
                    &o?,
                    crate::transport::wire::DEFAULT_LINE_CAP,
                )
                .await
                .ok()
            }
        };
        let o = cx.options(&[]);
        let spec = reference_http_spec(cx.exe.clone());
        let mut runs = vec![SelftestRun::one(
            SelftestRole::Reference,
            "reference facade over HTTP",
            async move {
                let mut report = run_mcp_http(
                    "parity reference facade",
                    FacadeSource::Command(spec),
                    &o?,
                    crate::transport::wire::DEFAULT_LINE_CAP,
                )
                .await
                .ok()?;
                // Only the transport's own checks: the transport-neutral ones have their
                // reference verdict from the stdio run.
                report.cases.retain(|c| c.check.starts_with("mcp.http."));
                Some(report)
            },
        )];
        for f in parity_fakes::http_benign_catalogue() {
            let run = fake(f.name, cx.options(f.passes), &cx.exe);
            runs.push(SelftestRun::one(SelftestRole::Benign, f.name, run));
        }
        for f in parity_fakes::http_catalogue() {
            let run = fake(f.name, cx.options(f.checks), &cx.exe);
            runs.push(SelftestRun::one(SelftestRole::Fault, f.name, run));
        }
        runs
    }
}

/// The mcp-http profile of a run: the MCP checks that are not stdio-specific plus the
/// Streamable HTTP transport's own, against the `--url`/`[surfaces.http]` endpoint, one
/// parity starts from `[surfaces.http] command`, or the bundled reference facade in its
/// direct catalogue form answering in SSE (started, then shut down).
///
/// Errors: the command could not start or printed no URL.
async fn run_profile(
    target: &Target,
    opts: &RunOptions,
    line_cap: usize,
) -> Result<RunReport, String> {
    let source = match (&target.http, target.reference_facade) {
        (Some(h), _) => h.source.clone(),
        (None, Some(_)) => {
            let exe = std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|e| format!("cannot find this executable: {e}"))?;
            FacadeSource::Command(reference_http_spec(exe))
        }
        (None, None) => return Err("the target has no [surfaces.http]".into()),
    };
    let name = if target.reference_facade.is_some() && target.http.is_none() {
        "parity reference facade --catalogue direct --response sse".to_owned()
    } else {
        target.name.clone()
    };
    run_mcp_http_declared(&name, source, opts, line_cap, target).await
}

/// Runs the mcp-http profile against an endpoint, or a command parity starts (and shuts
/// down) that prints its endpoint first.
///
/// Errors: the command could not start or printed no URL.
pub async fn run_mcp_http(
    name: &str,
    source: FacadeSource,
    opts: &RunOptions,
    line_cap: usize,
) -> Result<RunReport, String> {
    run_mcp_http_declared(name, source, opts, line_cap, &Target::default()).await
}

/// [`run_mcp_http`] with the declarations of `decl` a check reads: the tools it may call
/// (`[tools]`) and the prompt argument values (`[prompts.<name>]`).
///
/// Errors: as [`run_mcp_http`].
pub async fn run_mcp_http_declared(
    name: &str,
    source: FacadeSource,
    opts: &RunOptions,
    line_cap: usize,
    decl: &Target,
) -> Result<RunReport, String> {
    let (url, mut started) = open(&source, opts.timing.case).await?;
    let mut spec = PeerSpec::new(url.clone(), Vec::new());
    spec.line_cap = line_cap;
    let mut t = McpTarget::new(name, spec);
    t.http = Some(url);
    t.calls = decl.calls.clone();
    t.prompt_arguments = decl.prompt_arguments.clone();
    let r = crate::profiles::mcp::run_mcp_with_scenarios(t, opts, &[]).await;
    if let Some(s) = started.as_mut() {
        s.peer.shutdown(opts.timing.grace).await;
    }
    r
}
