//! `parity selftest`: the proof that the suite can fail.
//!
//! Gathers every profile's self-test runs from the registry ([`Profile::selftest`]): each fault
//! of the zoo (as a process, `parity fake <fault>`) against the checks it must trip, the benign
//! peers against the checks they must pass, and the clean reference against every check. Prints
//! one row per check: its level, the faults that caught it with their verdicts, and the
//! reference's verdicts. Exit 0 only when every check is caught at its level (a MUST check needs
//! a `fail`; a SHOULD or robustness check a `warn` or `fail`) and the reference passes
//! everything. Names no profile.
//!
//! [`Profile::selftest`]: crate::engine::profile::Profile::selftest

use crate::engine::check::{Level, Verdict};
use crate::engine::profile::{Family, Registry};
use crate::engine::run::RunReport;
use crate::engine::selftest::{OneRun, SelftestContext, SelftestRole, SelftestRun};
use std::collections::BTreeMap;

/// Every row of the self-test, in order, with its level: each check of `registry` once (in
/// run order, first binding first), then each check family (`equivalence.generated`), whose
/// cases count for it.
pub fn all_checks(registry: &Registry) -> Vec<(String, Level)> {
    let mut v: Vec<(String, Level)> = Vec::new();
    for (_, c) in registry.checks() {
        if !v.iter().any(|(id, _)| id == c.id) {
            v.push((c.id.to_string(), c.level));
        }
    }
    for f in registry.families() {
        if !v.iter().any(|(id, _)| id == f.id) {
            v.push((
                f.id.to_string(),
                Level::from_keyword(f.level).unwrap_or(Level::Must),
            ));
        }
    }
    v
}

/// How many fault or benign runs [`rows`] keeps going at once. Each run is parallel itself
/// (`jobs` cases), but spends most of its time waiting on its peer.
const RUNS_AT_ONCE: usize = 4;

/// Runs `runs` with at most `width` of them going at once (a sliding window: the next starts
/// as soon as one ends) and gives back each run's report in the order the runs were given.
/// A run that gave no report, or whose task panicked, is left out.
async fn in_window<T: Send + 'static>(runs: Vec<(T, OneRun)>, width: usize) -> Vec<(T, RunReport)> {
    let mut pending = runs.into_iter().enumerate();
    let mut set = tokio::task::JoinSet::new();
    let mut done: Vec<(usize, T, RunReport)> = Vec::new();
    loop {
        while set.len() < width.max(1) {
            let Some((i, (name, run))) = pending.next() else {
                break;
            };
            set.spawn(async move { (i, name, run.await) });
        }
        let Some(joined) = set.join_next().await else {
            break;
        };
        if let Ok((i, name, Some(report))) = joined {
            done.push((i, name, report));
        }
    }
    done.sort_by_key(|(i, _, _)| *i);
    done.into_iter().map(|(_, n, r)| (n, r)).collect()
}

/// One row of the self-test table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Check id.
    pub check: String,
    /// Level keyword.
    pub level: String,
    /// The verdict a violation must get.
    pub needed: Verdict,
    /// (fault, worst verdict of the check's cases under that fault).
    pub caught_by: Vec<(String, Verdict)>,
    /// Worst verdict of the check's cases against the reference.
    pub reference: Option<Verdict>,
    /// (benign peer, worst verdict of the check's cases under it): correct but unusual
    /// implementations that must pass the check.
    pub benign: Vec<(String, Verdict)>,
}

impl Row {
    /// Caught at its level by at least one fault.
    pub fn caught(&self) -> bool {
        self.caught_by.iter().any(|(_, v)| match self.needed {
            Verdict::Fail => *v == Verdict::Fail,
            _ => matches!(v, Verdict::Fail | Verdict::Warn),
        })
    }
    /// The reference passed every case of the check.
    ///
    /// A check the reference skips by design
    /// ([`crate::engine::reference::SKIPPED_BY_DESIGN`]: the 2026-07-28 logging rules the
    /// reference does not adopt, the input-required retry it never needs) is clean when a
    /// benign peer that lists it passes it instead: that peer is the correct implementation the
    /// check is proven against. Any other skip on the reference is not clean.
    pub fn reference_clean(&self) -> bool {
        match self.reference {
            Some(Verdict::Pass) => true,
            Some(Verdict::Skip) => {
                crate::engine::reference::SKIPPED_BY_DESIGN
                    .iter()
                    .any(|(c, _)| *c == self.check)
                    && self.benign.iter().any(|(_, v)| *v == Verdict::Pass)
            }
            _ => false,
        }
    }
    /// No benign peer that lists the check got a fail, warn or timeout from it (no cry of
    /// wolf; a skip or not-run that says why it could not judge is allowed).
    pub fn benign_clean(&self) -> bool {
        self.benign
            .iter()
            .all(|(_, v)| !matches!(v, Verdict::Fail | Verdict::Warn | Verdict::Timeout))
    }
    /// Caught, clean on the reference, and clean on every benign peer.
    pub fn proven(&self) -> bool {
        self.caught() && self.reference_clean() && self.benign_clean()
    }
}

fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Pass | Verdict::Flaky => 0,
        Verdict::Skip => 1,
        Verdict::NotRun => 2,
        Verdict::Warn => 3,
        Verdict::Timeout => 4,
        Verdict::Fail => 5,
    }
}

/// The self-test row of a case's check: a family's cases (`equivalence.generated.read_file`)
/// count for their family (`equivalence.generated`).
fn row_of(families: &[Family], check: &str) -> String {
    families
        .iter()
        .find(|f| check.strip_prefix(f.id).is_some_and(|r| r.starts_with('.')))
        .map(|f| f.id.to_string())
        .unwrap_or_else(|| check.to_string())
}

fn worst_per_check(families: &[Family], report: &RunReport) -> BTreeMap<String, Verdict> {
    let mut m: BTreeMap<String, Verdict> = BTreeMap::new();
    for c in &report.cases {
        let e = m.entry(row_of(families, &c.check)).or_insert(c.verdict);
        if severity(c.verdict) > severity(*e) {
            *e = c.verdict;
        }
    }
    m
}

/// Where a role's runs go in the window: the reference's first (they are the longest), then
/// the benign peers', then the faults', so none is left running alone at the end.
fn window_rank(role: SelftestRole) -> u8 {
    match role {
        SelftestRole::Reference => 0,
        SelftestRole::Benign => 1,
        SelftestRole::Fault => 2,
    }
}

/// Computes the self-test rows of `registry`'s checks (no printing). `jobs` is the parallelism
/// of each run.
pub async fn rows(registry: &Registry, jobs: usize) -> Vec<Row> {
    let order = all_checks(registry);
    let families = registry.families();
    let mut rows: BTreeMap<String, Row> = order
        .iter()
        .map(|(id, level)| {
            (
                id.clone(),
                Row {
                    check: id.clone(),
                    level: level.as_str().to_string(),
                    needed: level.violation_verdict(),
                    caught_by: Vec::new(),
                    reference: None,
                    benign: Vec::new(),
                },
            )
        })
        .collect();
    let scenarios =
        crate::engine::scenario::load_all(&[], &registry.check_ids()).unwrap_or_default();
    let cx = SelftestContext::new(jobs, scenarios);
    let mut window: Vec<((SelftestRole, String), OneRun)> = Vec::new();
    let mut paced = tokio::task::JoinSet::new();
    for run in registry.iter().flat_map(|p| p.selftest(&cx)) {
        match run {
            SelftestRun::One { role, name, run } => window.push(((role, name), run)),
            SelftestRun::Paced(batch) => {
                paced.spawn(batch);
            }
        }
    }
    window.sort_by_key(|((role, _), _)| window_rank(*role));
    // The window's runs a few at a time (each run is itself parallel, and most of its time is
    // spent waiting on its peer); the paced batches beside them.
    let mut reports = in_window(window, RUNS_AT_ONCE).await;
    while let Some(joined) = paced.join_next().await {
        if let Ok(batch) = joined {
            reports.extend(batch.into_iter().map(|(role, name, r)| ((role, name), r)));
        }
    }
    let mut reference_reports = Vec::new();
    for ((role, name), report) in reports {
        if role == SelftestRole::Reference {
            reference_reports.push(report);
            continue;
        }
        for (check, v) in worst_per_check(&families, &report) {
            if let Some(r) = rows.get_mut(&check) {
                let seen = (name.clone(), v);
                match role {
                    SelftestRole::Benign => r.benign.push(seen),
                    _ => r.caught_by.push(seen),
                }
            }
        }
    }
    for report in &reference_reports {
        for (check, v) in worst_per_check(&families, report) {
            if let Some(r) = rows.get_mut(&check) {
                r.reference = Some(v);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|(id, _)| rows.remove(&id))
        .collect()
}

/// Runs the self-test of `registry`'s profiles, prints the table and returns the exit code (0
/// all caught and clean, 1 otherwise).
pub async fn run(registry: &Registry, jobs: usize) -> i32 {
    let rows = rows(registry, jobs).await;
    let mut ok = true;
    crate::outln!(
        "{:<44} {:<10} {:<11} caught by",
        "check",
        "reference",
        "level"
    );
    for r in &rows {
        let caught: Vec<String> = r
            .caught_by
            .iter()
            .map(|(f, v)| format!("{f}={}", v.as_str()))
            .collect();
        let status = if r.proven() { "" } else { "  <-- NOT PROVEN" };
        let benign: String = r
            .benign
            .iter()
            .map(|(f, v)| format!("; benign {f}={}", v.as_str()))
            .collect();
        if !status.is_empty() {
            ok = false;
        }
        crate::outln!(
            "{:<44} {:<10} {:<11} {}{benign}{}",
            r.check,
            r.reference.map(|v| v.as_str()).unwrap_or("(none)"),
            r.level,
            if caught.is_empty() {
                "(no fault)".to_string()
            } else {
                caught.join(", ")
            },
            status
        );
    }
    let proven = rows.iter().filter(|r| r.proven()).count();
    let mut benign_peers: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.benign.iter().map(|(name, _)| name.as_str()))
        .collect();
    benign_peers.sort_unstable();
    benign_peers.dedup();
    let benign_peers = benign_peers.len();
    let benign_checks = rows.iter().filter(|r| !r.benign.is_empty()).count();
    crate::outln!(
        "selftest: {proven} of {} checks caught by a faulty peer with the reference clean; {benign_checks} checks passed by the {benign_peers} benign peers that list them",
        rows.len()
    );
    if ok {
        0
    } else {
        1
    }
}
