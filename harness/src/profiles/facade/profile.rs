//! The `facade` profile in the registry: the session-gating checks at `facade#2025-11-25`.

use crate::engine::check::Check;
use crate::engine::http_surface::open;
use crate::engine::profile::{at, needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::run::{RunOptions, RunReport};
use crate::engine::selftest::{SelftestContext, SelftestRole, SelftestRun};
use crate::engine::target::Target;

/// The `facade` profile: a session-gating facade over Streamable HTTP.
pub struct FacadeProfile;

impl Profile for FacadeProfile {
    fn bindings_doc(&self) -> String {
        "`facade` (session-gating checks of a facade; see docs/facade.md)".into()
    }
    fn name(&self) -> &'static str {
        "facade"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        at(super::BINDING, super::catalogue())
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(super::BINDING, vec![super::REVISION])]
    }
    /// The bundled reference facade, or an HTTP surface with `[facade]` declarations.
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.reference_facade.is_some() || (target.http.is_some() && target.facade.is_some()),
            "profile facade needs [surfaces.http] (the facade's url or command) and [facade] (hooks and declarations, docs/facade.md)",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            let mut could_not_run = Vec::new();
            let mut report = RunReport::default();
            match run_profile(req.target, req.opts).await {
                Ok(r) => {
                    if r.eras.is_empty() {
                        could_not_run.push(format!(
                            "the facade did not start, or did not answer initialize: {}",
                            r.notes.join("; ")
                        ));
                    }
                    report = r;
                }
                Err(e) => could_not_run.push(format!("the facade did not start: {e}")),
            }
            Ok(ProfileRun {
                report,
                could_not_run,
                eras: None,
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let faults = parity_fakes::facade_catalogue()
            .into_iter()
            .map(|f| (f.name, f.checks));
        let mut runs = cx.reference_and_faults("reference facade", faults, |fault, o| async move {
            super::run_reference(fault, super::CatalogueForm::Meta, &o?)
                .await
                .ok()
        });
        // Each benign facade, started and declared by its target file as a user would.
        for b in parity_fakes::facade_benign_catalogue() {
            let (o, exe) = (cx.options(b.passes), cx.exe.clone());
            runs.push(SelftestRun::one(SelftestRole::Benign, b.name, async move {
                run_benign(b.name, &exe, &o?).await.ok()
            }));
        }
        runs
    }
}

/// Runs the facade profile against benign facade `name` as its target file
/// ([`super::benign_target`]) declares it, with the audit log in a temporary directory.
///
/// Errors: no target file for `name`, or the temporary directory cannot be made; a target
/// that does not load, or a facade that does not start, is the error's text.
pub async fn run_benign(name: &str, exe: &str, opts: &RunOptions) -> Result<RunReport, String> {
    let dir = tempfile::Builder::new()
        .prefix("parity-facade-benign-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let audit = dir.path().join("audit.log");
    let text = super::benign_target(name, exe, &audit)
        .ok_or_else(|| format!("no target file for the benign facade {name}"))?;
    let file = format!("{name}.toml");
    let target = crate::engine::target::parse(&file, &text).map_err(|e| e.to_string())?;
    let report = run_profile(&target, opts).await;
    drop(dir);
    report
}

/// The facade profile of a run: the bundled reference facade, a facade at a URL, or one
/// parity starts from `[surfaces.http] command` (its endpoint from the URL or the port it
/// prints first; shut down afterwards).
///
/// Errors: the facade command could not start or printed no usable endpoint.
async fn run_profile(target: &Target, opts: &RunOptions) -> Result<RunReport, String> {
    if let Some(form) = target.reference_facade {
        return super::run_reference(None, form, opts).await;
    }
    let (Some(http), Some(decl)) = (&target.http, &target.facade) else {
        return Err("the target has no [surfaces.http] with [facade]".into());
    };
    let (url, mut started) = open(&http.source, opts.timing.case).await?;
    let r = super::run_facade(&target.name, &url, decl, opts).await;
    if let Some(s) = started.as_mut() {
        s.peer.shutdown(opts.timing.grace).await;
    }
    Ok(r)
}
