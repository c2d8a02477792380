//! The `hygiene` profile in the registry: the host's credential hygiene at `host#v1`.

use crate::engine::check::Check;
use crate::engine::profile::{at, needs, BoxRun, Profile, ProfileRun, RunRequest};
use crate::engine::selftest::{SelftestContext, SelftestRun};
use crate::engine::target::Target;

/// The `hygiene` profile: a host that spawns children, observed with canaries.
pub struct HygieneProfile;

impl Profile for HygieneProfile {
    fn bindings_doc(&self) -> String {
        "`host` (the credential hygiene of a host that launches children, revision `v1`; see docs/hygiene.md)".into()
    }
    fn name(&self) -> &'static str {
        "hygiene"
    }
    fn catalogue(&self) -> Vec<(&'static str, Check)> {
        at(super::BINDING, super::catalogue())
    }
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        vec![(super::BINDING, vec![super::REVISION])]
    }
    fn ready(&self, target: &Target) -> Result<(), String> {
        needs(
            target.hygiene.is_some(),
            "profile hygiene needs [hygiene] (the host command and its declarations, docs/hygiene.md); or run `parity hygiene -- CMD`",
        )
    }
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a> {
        Box::pin(async move {
            Ok(match super::run_profile(req.target, req.opts).await {
                Ok(r) => ProfileRun {
                    could_not_run: r.could_not_run.clone(),
                    report: r,
                    eras: None,
                },
                Err(e) => ProfileRun {
                    could_not_run: vec![format!("the hygiene probe could not run: {e}")],
                    ..ProfileRun::default()
                },
            })
        })
    }
    fn selftest(&self, cx: &SelftestContext) -> Vec<SelftestRun> {
        let cx = cx.clone();
        vec![SelftestRun::Paced(Box::pin(async move {
            super::selftest_runs(&cx).await
        }))]
    }
}
