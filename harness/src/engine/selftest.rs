//! What a profile gives `parity selftest` (DESIGN.md §Mutant zoo): its runs against faulty
//! peers, benign peers and the clean reference, each a future of run reports. The self-test
//! (`cli/selftest.rs`) gathers them from every profile of the registry, runs them a few at a
//! time, and judges each check's row from the reports; it names no profile.

use crate::engine::check::Timing;
use crate::engine::run::{EraSel, RunOptions, RunReport};
use crate::engine::scenario::Scenario;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Whose run a report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelftestRole {
    /// A faulty peer's run, against the checks it must trip (a MUST check needs a `fail`, a
    /// SHOULD or robustness check a `warn` or `fail`).
    Fault,
    /// A benign peer's run: a correct but unusual implementation, against the checks it must
    /// pass (no `fail`, `warn` or `timeout`).
    Benign,
    /// The clean reference, against every check it runs (all `pass`).
    Reference,
}

/// A future giving one peer's report, or nothing when the run could not happen (its row then
/// shows the peer missing).
pub type OneRun = Pin<Box<dyn Future<Output = Option<RunReport>> + Send + 'static>>;

/// A future giving several reports, each with its role and peer name.
pub type PacedRuns =
    Pin<Box<dyn Future<Output = Vec<(SelftestRole, String, RunReport)>> + Send + 'static>>;

/// One of a profile's self-test runs.
pub enum SelftestRun {
    /// One peer's run; the self-test keeps a few of these going at once, the reference's
    /// first (they are the longest), then the benign peers', then the faults'.
    One {
        /// Whose run it is.
        role: SelftestRole,
        /// The peer's name as the table shows it (`bad-version`, `reference MCP`).
        name: String,
        /// The run.
        run: OneRun,
    },
    /// A batch that paces itself (a host probe waits on time, not CPU) and runs beside the
    /// window of single runs.
    Paced(PacedRuns),
}

impl SelftestRun {
    /// A single run of `role` named `name`.
    pub fn one(
        role: SelftestRole,
        name: impl Into<String>,
        run: impl Future<Output = Option<RunReport>> + Send + 'static,
    ) -> SelftestRun {
        SelftestRun::One {
            role,
            name: name.into(),
            run: Box::pin(run),
        }
    }
}

/// How long a benign slow starter waits in the self-test (`parity_fakes::SLOW_START_VAR`), in
/// milliseconds: longer than the per-message deadline of the self-test's halved timing
/// (2.5 s), so its start-up phase is still what keeps it from timing out.
pub const SLOW_START_MS: u64 = 3_000;

/// How many requests a request-flooding benign peer sends in the self-test
/// (`parity_fakes::REQUEST_FLOOD_VAR`): enough to overfill a pipe both ways (about 100 KB of
/// requests, as much again in answers), small enough to be read within the halved deadlines
/// while four runs go at once.
pub const REQUEST_FLOOD: usize = 2_000;

/// What every profile's self-test runs share.
#[derive(Clone)]
pub struct SelftestContext {
    /// Cases each run keeps going at once (`--jobs`).
    pub jobs: usize,
    /// The self-test's deadlines: the default ones halved (messages 2.5 s, silence windows
    /// 150 ms), which leaves a loaded machine ample time against peers that stay silent.
    pub timing: Timing,
    /// This executable, whose `reference` and `fake` subcommands are the peers.
    pub exe: String,
    /// The shipped scenarios.
    pub scenarios: Arc<Vec<Arc<Scenario>>>,
}

impl SelftestContext {
    /// The context of a self-test with `jobs` cases at once per run and the shipped
    /// `scenarios`.
    pub fn new(jobs: usize, scenarios: Vec<Arc<Scenario>>) -> SelftestContext {
        SelftestContext {
            jobs,
            timing: Timing::scaled(0.5),
            exe: std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "parity".into()),
            scenarios: Arc::new(scenarios),
        }
    }

    /// Run options keeping the cases of the checks in `filter` (plain check ids; every case
    /// when empty), both eras. `None` when an id is not a valid glob, so the run is left out
    /// (and its checks show no fault).
    pub fn options(&self, filter: &[&str]) -> Option<RunOptions> {
        let filter: Vec<String> = filter.iter().map(|s| s.to_string()).collect();
        RunOptions::new(EraSel::All, &filter, &[], self.jobs, self.timing).ok()
    }

    /// The environment of a benign peer: its shorter slow start ([`SLOW_START_MS`]) and
    /// flood ([`REQUEST_FLOOD`]).
    pub fn benign_env(&self) -> [(String, String); 2] {
        [
            (
                parity_fakes::SLOW_START_VAR.to_string(),
                SLOW_START_MS.to_string(),
            ),
            (
                parity_fakes::REQUEST_FLOOD_VAR.to_string(),
                REQUEST_FLOOD.to_string(),
            ),
        ]
    }

    /// The runs of a profile whose reference and faulty peers run the same way: `run(None, o)`
    /// is the reference, named `reference`, against every check; `run(Some(name), o)` is each
    /// fault of `faults` (name, the checks it must trip), with `o` selecting those checks.
    pub fn reference_and_faults<Fut>(
        &self,
        reference: &str,
        faults: impl IntoIterator<Item = (&'static str, &'static [&'static str])>,
        run: impl Fn(Option<&'static str>, Option<RunOptions>) -> Fut,
    ) -> Vec<SelftestRun>
    where
        Fut: Future<Output = Option<RunReport>> + Send + 'static,
    {
        let mut runs = vec![SelftestRun::one(
            SelftestRole::Reference,
            reference,
            run(None, self.options(&[])),
        )];
        for (name, checks) in faults {
            let o = self.options(checks);
            runs.push(SelftestRun::one(
                SelftestRole::Fault,
                name,
                run(Some(name), o),
            ));
        }
        runs
    }
}
