//! The profile registry: what a profile declares and how the command line, selection, baselines
//! and `parity list` reach it without naming it (docs/architecture.md §Layers; docs/library.md).
//!
//! A profile is a type implementing [`Profile`]: its name (`--profile NAME`), its catalogue of
//! checks with the binding each runs at, the bindings with their revisions, the check families
//! whose cases it names itself (`equivalence.generated.<tool>`), whether a target can run it,
//! and how it plans and runs its cases into a [`RunReport`]. A [`Registry`] holds the profiles
//! of one `parity` in the order a default run runs them; `parity_harness::profiles::builtin()`
//! is parity's own, and a library user extends it with [`Registry::register`] before handing it
//! to `parity_harness::cli::run_with`.

use crate::engine::check::{Check, SlowCall};
use crate::engine::run::{EraSel, RunOptions, RunReport};
use crate::engine::scenario::Scenario;
use crate::engine::selftest::{SelftestContext, SelftestRun};
use crate::engine::target::Target;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What one `parity run` gives every profile it runs: the target, the run's options (selection,
/// jobs, deadlines, retries) and the flags some profiles read.
pub struct RunRequest<'a> {
    /// The target, from the target file, `--mcp`/`--acp`/`--url`, or the bundled reference.
    pub target: &'a Target,
    /// The run's options; a profile may narrow the eras on its own copy.
    pub opts: &'a RunOptions,
    /// The scenarios of the run: the shipped ones plus `--scenarios` and the target's.
    pub scenarios: &'a [Arc<Scenario>],
    /// `--era`, when given (otherwise a profile uses the target's eras, or all).
    pub era: Option<EraSel>,
    /// `--line-cap`: the longest line read from a peer, in bytes.
    pub line_cap: usize,
    /// `--slow-call`: the tool call the cancellation check sends, when given.
    pub slow_call: Option<SlowCall>,
    /// The run is against the bundled reference (no target, surface or URL named).
    pub is_reference: bool,
    /// `--seed`: the seed of generated calls, when given.
    pub seed: Option<u64>,
    /// `--cases`: generated calls per tool, when given.
    pub cases: Option<u32>,
}

/// What a profile's run gives back: its cases and notes, and why it could not run, when it
/// could not (each reason makes the run exit 3, DESIGN.md §Command line).
#[derive(Default)]
pub struct ProfileRun {
    /// The profile's report, merged into the run's.
    pub report: RunReport,
    /// One sentence per reason the profile could not run (empty when it ran).
    pub could_not_run: Vec<String>,
    /// The eras the profile ran, when it chose them (`--era`, else the target's): the run's
    /// options carry them on to the profiles after it, and a run whose eras end narrowed is
    /// judged as a narrowed run by snapshots and baselines.
    pub eras: Option<EraSel>,
}

impl From<RunReport> for ProfileRun {
    fn from(report: RunReport) -> Self {
        ProfileRun {
            report,
            could_not_run: Vec::new(),
            eras: None,
        }
    }
}

/// A boxed future of a profile's run, borrowed from the request.
///
/// `Err` is a usage or configuration error (a bad command line in the target): the run stops
/// with exit 2 and prints `error: <the text>`.
pub type BoxRun<'a> = Pin<Box<dyn Future<Output = Result<ProfileRun, String>> + Send + 'a>>;

/// A check family whose cases the profile names itself (`<id>.<case>`): listed once with its
/// spec reference and quote; a baseline may name the family or any of its cases.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The family id (`equivalence.generated`).
    pub id: &'static str,
    /// The binding its cases run at.
    pub binding: &'static str,
    /// Level keyword (`MUST`).
    pub level: &'static str,
    /// What `parity list` shows as its revisions.
    pub revisions: &'static str,
    /// The capability it needs.
    pub capability: &'static str,
    /// Spec reference URL.
    pub spec: &'static str,
    /// The quoted sentence it rests on.
    pub quote: &'static str,
    /// What one of its cases does, for the catalogue doc (`parity list --markdown`).
    pub description: &'static str,
}

/// One profile: a catalogue of checks and the way to run them (see the module doc).
pub trait Profile: Send + Sync {
    /// The name `--profile` and the target's `profiles` key use (`mcp-http`).
    fn name(&self) -> &'static str;
    /// The checks, each with the binding it runs at (`mcp-stdio`); a check that runs at several
    /// bindings in one case names them joined by `, ` (`mcp-stdio, acp`), and one that runs as
    /// separate cases per binding appears once per binding (in each profile that runs it).
    fn catalogue(&self) -> Vec<(&'static str, Check)>;
    /// What the profile's bindings are, as a phrase for the catalogue doc's list of bindings
    /// (``"`acp` (the ACP v1 checks, revision `v1`)"``). Default: each binding with its
    /// revisions.
    fn bindings_doc(&self) -> String {
        self.bindings()
            .iter()
            .map(|(b, revs)| {
                format!(
                    "`{b}` (profile `{}`, revisions {})",
                    self.name(),
                    revs.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
    /// Check families whose cases the profile names itself. Default: none.
    fn families(&self) -> Vec<Family> {
        Vec::new()
    }
    /// Every binding the profile's cases run at, with the revisions they run at (`("acp",
    /// ["v1"])`), for reading case ids in baselines and reports.
    fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)>;
    /// Whether `target` declares what this profile needs. Errors: why not, naming the flag or
    /// the target's table that would supply it.
    fn ready(&self, target: &Target) -> Result<(), String>;
    /// Whether a run with no `--profile` and no `profiles` key runs this profile on a target
    /// it is [`ready`](Profile::ready) for. Default: yes.
    fn runs_by_default(&self, _target: &Target) -> bool {
        true
    }
    /// Plans and runs the profile's cases.
    fn run<'a>(&'a self, req: &'a RunRequest<'a>) -> BoxRun<'a>;
    /// The profile's `parity selftest` runs: its faulty peers against the checks each must
    /// trip, its benign peers against the checks each must pass, and the clean reference
    /// (DESIGN.md §Mutant zoo). Default: none (its checks then show unproven).
    fn selftest(&self, _cx: &SelftestContext) -> Vec<SelftestRun> {
        Vec::new()
    }
}

/// The profiles of one `parity`, in the order a run runs them.
#[derive(Clone, Default)]
pub struct Registry {
    profiles: Vec<Arc<dyn Profile>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds a profile after the ones registered so far. Errors: a profile of that name is
    /// registered already.
    pub fn register(&mut self, profile: Arc<dyn Profile>) -> Result<(), String> {
        if self.get(profile.name()).is_some() {
            return Err(format!(
                "a profile named {} is registered already",
                profile.name()
            ));
        }
        self.profiles.push(profile);
        Ok(())
    }

    /// The profile named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Profile>> {
        self.profiles.iter().find(|p| p.name() == name)
    }

    /// Every profile, in run order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Profile>> {
        self.profiles.iter()
    }

    /// Every profile's name, in run order.
    pub fn names(&self) -> Vec<&'static str> {
        self.profiles.iter().map(|p| p.name()).collect()
    }

    /// The profiles a run with no `--profile` and no `profiles` key runs on `target`.
    pub fn defaults_for(&self, target: &Target) -> Vec<String> {
        self.profiles
            .iter()
            .filter(|p| p.ready(target).is_ok() && p.runs_by_default(target))
            .map(|p| p.name().to_string())
            .collect()
    }

    /// Every `(binding, check)` of every profile, in run order.
    pub fn checks(&self) -> Vec<(&'static str, Check)> {
        self.profiles.iter().flat_map(|p| p.catalogue()).collect()
    }

    /// The id of every check of every profile (scenario ids may not take one:
    /// [`crate::engine::scenario::load_all`]).
    pub fn check_ids(&self) -> Vec<&'static str> {
        self.checks().into_iter().map(|(_, c)| c.id).collect()
    }

    /// Every check family of every profile.
    pub fn families(&self) -> Vec<Family> {
        self.profiles.iter().flat_map(|p| p.families()).collect()
    }

    /// Every binding with its revisions, first declaration first, each binding once.
    pub fn bindings(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for (b, revs) in self.profiles.iter().flat_map(|p| p.bindings()) {
            match out.iter_mut().find(|(x, _)| *x == b) {
                Some((_, have)) => {
                    for r in revs {
                        if !have.contains(&r) {
                            have.push(r);
                        }
                    }
                }
                None => out.push((b, revs)),
            }
        }
        out
    }

    /// The revisions of `binding`, when some profile runs cases at it.
    pub fn revisions_of(&self, binding: &str) -> Option<Vec<&'static str>> {
        self.bindings()
            .into_iter()
            .find(|(b, _)| *b == binding)
            .map(|(_, r)| r)
    }

    /// Whether `check` names a check of some profile, or a family or a case of one
    /// (`equivalence.generated.read_file`).
    pub fn knows(&self, check: &str) -> bool {
        self.checks().iter().any(|(_, c)| c.id == check)
            || self.families().iter().any(|f| {
                check == f.id || check.strip_prefix(f.id).is_some_and(|r| r.starts_with('.'))
            })
    }
}

/// `checks`, each at `binding`: the catalogue of a profile whose checks all run at one binding.
pub fn at(binding: &'static str, checks: Vec<Check>) -> Vec<(&'static str, Check)> {
    checks.into_iter().map(|c| (binding, c)).collect()
}

/// [`Profile::ready`] from a condition: `Ok` when `ready`, else `why`.
///
/// Errors: `why`, when not ready.
pub fn needs(ready: bool, why: &str) -> Result<(), String> {
    if ready {
        Ok(())
    } else {
        Err(why.to_string())
    }
}
