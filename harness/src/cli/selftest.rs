//! `parity selftest`: the proof that the suite can fail.
//!
//! Runs each fault of the zoo (as a process, `parity fake <fault>`) against the checks it must
//! trip, then the clean reference against every check, and prints one row per check: its level,
//! the faults that caught it with their verdicts, and the reference's verdicts. Exit 0 only when
//! every check is caught at its level (a MUST check needs a `fail`; a SHOULD or robustness check
//! a `warn` or `fail`) and the reference passes everything.

use crate::cli::{acp_fake_target, fake_target, reference_acp_target, reference_target};
use crate::engine::check::{Level, Timing, Verdict};
use crate::engine::run::{EraSel, RunOptions, RunReport};
use crate::profiles::acp as checks_acp;
use crate::profiles::acp::run_acp;
use crate::profiles::mcp as checks_mcp;
use crate::profiles::mcp::run_mcp;
use parity_fakes::AcpProfile;
use std::collections::BTreeMap;

pub use crate::profiles::equivalence::EQUIVALENCE_CHECKS;

/// Every check of the self-test, in order: MCP, ACP, HTTP, facade, hygiene, dispatcher,
/// guard, equivalence; with
/// its level.
pub fn all_checks() -> Vec<(String, Level)> {
    let checks: Vec<crate::engine::check::Check> = checks_mcp::catalogue()
        .into_iter()
        .chain(checks_acp::catalogue())
        .chain(crate::profiles::mcp::http::catalogue())
        .chain(crate::profiles::facade::catalogue())
        .chain(crate::profiles::hygiene::catalogue())
        .chain(crate::profiles::dispatcher::catalogue())
        .collect();
    #[cfg(feature = "guard")]
    let checks: Vec<crate::engine::check::Check> = checks
        .into_iter()
        .chain(crate::profiles::guard::catalogue())
        .collect();
    let mut v: Vec<(String, Level)> = checks.iter().map(|c| (c.id.to_string(), c.level)).collect();
    v.extend(
        EQUIVALENCE_CHECKS
            .iter()
            .map(|c| (c.to_string(), Level::Must)),
    );
    v
}

/// The equivalence profile with the clean reference MCP server and the given ACP agent
/// subcommand (`["reference", "acp"]` or `["fake", name]`), 40 generated cases per tool from
/// seed 1, keeping the cases whose check is in `checks` (all when empty).
async fn equivalence_run(
    acp_args: &[&str],
    checks: &[&str],
    timing: Timing,
    jobs: usize,
) -> RunReport {
    let mut target = crate::engine::target::reference();
    if let Some(a) = target.acp.as_mut() {
        let exe = crate::engine::target::shell_quote(
            &std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "parity".into()),
        );
        a.command = format!("{exe} {}", acp_args.join(" "));
    }
    let mut report = RunReport {
        target: format!("parity {}", acp_args.join(" ")),
        seed: Some(1),
        ..RunReport::default()
    };
    let (surfaces, notes) = match crate::profiles::equivalence::surfaces_of(
        &target,
        timing,
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
    let plan = crate::profiles::equivalence::Plan {
        surfaces,
        volatile: target.equivalence.volatile.clone(),
        compare_messages: false,
        stateful: target.equivalence.stateful.clone(),
        tools: Vec::new(),
        cases: if checks.is_empty() || checks.contains(&"equivalence.generated") {
            40
        } else {
            0
        },
        seed: 1,
        reference: true,
    };
    let scenarios = crate::engine::scenario::load_all(&[], &crate::profiles::builtin().check_ids())
        .unwrap_or_default();
    let keep =
        |id: &str| checks.is_empty() || checks.iter().any(|c| id.starts_with(&format!("{c}.")));
    let (cases, more) = crate::profiles::equivalence::run(
        plan,
        &scenarios,
        timing,
        (jobs, Default::default()),
        &keep,
    )
    .await;
    report.cases = cases;
    report.notes.extend(more);
    report
}

/// One fault's run: the report of the checks it must trip, when the run could happen.
type FaultRun =
    std::pin::Pin<Box<dyn std::future::Future<Output = Option<RunReport>> + Send + 'static>>;

/// How long the benign slow starter waits here ([`parity_fakes::SLOW_START_VAR`]), in
/// milliseconds: longer than the per-message deadline of the self-test's halved timing
/// (2.5 s), so its start-up phase is still what keeps it from timing out.
const SLOW_START_MS: u64 = 3_000;

/// How many requests the request-flooding benign peers send here
/// ([`parity_fakes::REQUEST_FLOOD_VAR`]): enough to overfill a pipe both ways (about 100 KB of
/// requests, as much again in answers), small enough to be read within the halved deadlines
/// while four runs go at once.
const REQUEST_FLOOD: usize = 2_000;

/// The environment of a benign peer in the self-test: its shorter slow start and flood.
fn benign_env() -> [(String, String); 2] {
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

/// How many fault or benign runs [`rows`] keeps going at once. Each run is parallel itself
/// (`jobs` cases), but spends most of its time waiting on its peer.
const RUNS_AT_ONCE: usize = 4;

/// Runs `runs` with at most `width` of them going at once (a sliding window: the next starts
/// as soon as one ends) and gives back each run's report in the order the runs were given.
/// A run that gave no report, or whose task panicked, is left out.
async fn in_window<T: Send + 'static>(
    runs: Vec<(T, FaultRun)>,
    width: usize,
) -> Vec<(T, RunReport)> {
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

/// Whose run a report is, in the self-test's one window of runs.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// A faulty peer's run, against the checks it must trip.
    Fault,
    /// A benign peer's run, against the checks it must pass.
    Benign,
    /// The reference, under one runner.
    Reference,
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
    pub fn reference_clean(&self) -> bool {
        self.reference == Some(Verdict::Pass)
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

/// The self-test row of a case's check: equivalence cases (`equivalence.generated.read_file`)
/// count for their family (`equivalence.generated`).
fn row_of(check: &str) -> String {
    EQUIVALENCE_CHECKS
        .iter()
        .find(|f| check.starts_with(&format!("{f}.")))
        .map(|f| f.to_string())
        .unwrap_or_else(|| check.to_string())
}

fn worst_per_check(report: &RunReport) -> BTreeMap<String, Verdict> {
    let mut m: BTreeMap<String, Verdict> = BTreeMap::new();
    for c in &report.cases {
        let e = m.entry(row_of(&c.check)).or_insert(c.verdict);
        if severity(c.verdict) > severity(*e) {
            *e = c.verdict;
        }
    }
    m
}

/// Computes the self-test rows (no printing). `jobs` is the parallelism of each run.
pub async fn rows(jobs: usize) -> Vec<Row> {
    // Faulty peers often stay silent; shorter deadlines keep the self-test quick while leaving a
    // loaded machine ample time (messages 2.5 s, silence windows 150 ms). The filters are
    // plain check ids, which are valid globs.
    // A fault whose trip list were not valid globs would run nothing and show as catching
    // nothing in the table.
    let opts =
        |filter: Vec<String>| RunOptions::new(EraSel::All, &filter, &[], jobs, Timing::scaled(0.5));
    let mut rows: BTreeMap<String, Row> = all_checks()
        .into_iter()
        .map(|(id, level)| {
            (
                id.clone(),
                Row {
                    check: id,
                    level: level.as_str().to_string(),
                    needed: level.violation_verdict(),
                    caught_by: Vec::new(),
                    reference: None,
                    benign: Vec::new(),
                },
            )
        })
        .collect();
    // Every fault's run, against the checks it must trip: MCP stdio faults, ACP faults (or,
    // beside the clean reference MCP server, the equivalence checks), faulty HTTP servers in
    // their direct catalogue form, and faulty facades.
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    let mut runs: Vec<(&'static str, FaultRun)> = Vec::new();
    for f in parity_fakes::catalogue()
        .iter()
        .filter(|f| !f.trips.is_empty())
    {
        let Ok(o) = opts(f.trips.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        runs.push((
            name,
            Box::pin(async move { run_mcp(fake_target(name), &o).await.ok() }),
        ));
    }
    // ACP faults with no trips are bad agents for the harness's own tests, like MCP's.
    for f in parity_fakes::acp_catalogue()
        .iter()
        .filter(|f| !f.trips.is_empty())
    {
        let Ok(o) = opts(f.trips.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let (name, profile, trips) = (f.name, f.profile, f.trips);
        runs.push((
            name,
            Box::pin(async move {
                match profile {
                    AcpProfile::Acp => run_acp(acp_fake_target(name), &o).await.ok(),
                    AcpProfile::Equivalence => {
                        Some(equivalence_run(&["fake", name], trips, o.timing, o.jobs).await)
                    }
                }
            }),
        ));
    }
    for f in parity_fakes::http_catalogue() {
        let Ok(o) = opts(f.checks.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        let spec = crate::transport::peer::PeerSpec::new(
            exe.clone(),
            ["fake-http", name, "--catalogue", "direct"]
                .map(String::from)
                .to_vec(),
        );
        runs.push((
            name,
            Box::pin(async move {
                crate::profiles::mcp::http::run_mcp_http(
                    &format!("parity fake-http {name}"),
                    crate::engine::http_surface::FacadeSource::Command(spec),
                    &o,
                    crate::transport::wire::DEFAULT_LINE_CAP,
                )
                .await
                .ok()
            }),
        ));
    }
    for f in parity_fakes::facade_catalogue() {
        let Ok(o) = opts(f.checks.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        runs.push((
            name,
            Box::pin(async move {
                crate::profiles::facade::run_reference(
                    Some(name),
                    crate::profiles::facade::CatalogueForm::Meta,
                    &o,
                )
                .await
                .ok()
            }),
        ));
    }
    for f in parity_fakes::dispatcher_catalogue() {
        let Ok(o) = opts(f.checks.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        runs.push((
            name,
            Box::pin(async move {
                crate::profiles::dispatcher::run_reference(Some(name), &o)
                    .await
                    .ok()
            }),
        ));
    }
    // Benign peers (MCP over stdio, ACP agents, MCP servers over HTTP), a few at a time, each
    // against the checks it must pass.
    let mut benign_runs: Vec<(&'static str, FaultRun)> = Vec::new();
    for f in parity_fakes::benign_catalogue() {
        let Ok(o) = opts(f.passes.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        let mut target = fake_target(name);
        target.spec.env.extend(benign_env());
        benign_runs.push((
            name,
            Box::pin(async move { run_mcp(target, &o).await.ok() }),
        ));
    }
    for f in parity_fakes::acp_benign_catalogue() {
        let Ok(o) = opts(f.passes.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        let mut target = acp_fake_target(name);
        target.spec.env.extend(benign_env());
        benign_runs.push((
            name,
            Box::pin(async move { run_acp(target, &o).await.ok() }),
        ));
    }
    for f in parity_fakes::http_benign_catalogue() {
        let Ok(o) = opts(f.passes.iter().map(|s| s.to_string()).collect()) else {
            continue;
        };
        let name = f.name;
        let spec = crate::transport::peer::PeerSpec::new(
            exe.clone(),
            ["fake-http", name, "--catalogue", "direct"]
                .map(String::from)
                .to_vec(),
        );
        benign_runs.push((
            name,
            Box::pin(async move {
                crate::profiles::mcp::http::run_mcp_http(
                    &format!("parity fake-http {name}"),
                    crate::engine::http_surface::FacadeSource::Command(spec),
                    &o,
                    crate::transport::wire::DEFAULT_LINE_CAP,
                )
                .await
                .ok()
            }),
        ));
    }
    // The reference under every runner.
    let mut reference_runs: Vec<(&'static str, FaultRun)> = Vec::new();
    if let Ok(clean) = opts(Vec::new()) {
        let runs = &mut reference_runs;
        let o = clean.clone();
        runs.push((
            "reference facade",
            Box::pin(async move {
                crate::profiles::facade::run_reference(
                    None,
                    crate::profiles::facade::CatalogueForm::Meta,
                    &o,
                )
                .await
                .ok()
            }),
        ));
        let o = clean.clone();
        let spec = crate::profiles::facade::reference_http_spec(exe);
        runs.push((
            "reference facade over HTTP",
            Box::pin(async move {
                let mut report = crate::profiles::mcp::http::run_mcp_http(
                    "parity reference facade",
                    crate::engine::http_surface::FacadeSource::Command(spec),
                    &o,
                    crate::transport::wire::DEFAULT_LINE_CAP,
                )
                .await
                .ok()?;
                // Only the transport's own checks: the transport-neutral ones have their
                // reference verdict from the stdio run.
                report.cases.retain(|c| c.check.starts_with("mcp.http."));
                Some(report)
            }),
        ));
        let o = clean.clone();
        runs.push((
            "reference dispatcher",
            Box::pin(async move {
                crate::profiles::dispatcher::run_reference(None, &o)
                    .await
                    .ok()
            }),
        ));
        let o = clean.clone();
        runs.push((
            "reference MCP",
            Box::pin(async move { run_mcp(reference_target(), &o).await.ok() }),
        ));
        let o = clean.clone();
        runs.push((
            "reference ACP",
            Box::pin(async move { run_acp(reference_acp_target(), &o).await.ok() }),
        ));
        let timing = clean.timing;
        runs.push((
            "reference equivalence",
            Box::pin(async move {
                Some(equivalence_run(&["reference", "acp"], &[], timing, jobs).await)
            }),
        ));
    }
    // Every run above, a few at a time in one window (each run is itself parallel, and most
    // of its time is spent waiting on its peer), the slowest kinds first so none is left
    // running alone at the end; the hygiene probe's runs beside them.
    let mut all: Vec<((Role, &'static str), FaultRun)> = Vec::new();
    all.extend(
        reference_runs
            .into_iter()
            .map(|(n, r)| ((Role::Reference, n), r)),
    );
    all.extend(benign_runs.into_iter().map(|(n, r)| ((Role::Benign, n), r)));
    all.extend(runs.into_iter().map(|(n, r)| ((Role::Fault, n), r)));
    let (window, hygiene) = tokio::join!(
        in_window(all, RUNS_AT_ONCE),
        crate::profiles::hygiene::selftest_runs(|f| opts(f).ok())
    );
    let mut reference_reports = Vec::new();
    for ((role, name), report) in window {
        match role {
            Role::Reference => reference_reports.push(report),
            Role::Benign | Role::Fault => {
                for (check, v) in worst_per_check(&report) {
                    if let Some(r) = rows.get_mut(&check) {
                        let seen = (name.to_string(), v);
                        match role {
                            Role::Benign => r.benign.push(seen),
                            _ => r.caught_by.push(seen),
                        }
                    }
                }
            }
        }
    }
    // Faulty hosts and the reference launcher under the hygiene probe.
    for (fault, report) in hygiene {
        match fault {
            Some(name) => {
                for (check, v) in worst_per_check(&report) {
                    if let Some(r) = rows.get_mut(&check) {
                        r.caught_by.push((name.to_string(), v));
                    }
                }
            }
            None => reference_reports.push(report),
        }
    }
    // Source trees under the guard: one faulty tree per rule kind, and the clean tree.
    #[cfg(feature = "guard")]
    for (fault, report) in crate::profiles::guard::selftest_runs() {
        match fault {
            Some(name) => {
                for (check, v) in worst_per_check(&report) {
                    if let Some(r) = rows.get_mut(&check) {
                        r.caught_by.push((name.to_string(), v));
                    }
                }
            }
            None => reference_reports.push(report),
        }
    }
    for report in &reference_reports {
        for (check, v) in worst_per_check(report) {
            if let Some(r) = rows.get_mut(&check) {
                r.reference = Some(v);
            }
        }
    }
    let order: Vec<String> = all_checks().into_iter().map(|(id, _)| id).collect();
    order
        .into_iter()
        .filter_map(|id| rows.remove(&id))
        .collect()
}

/// Runs the self-test, prints the table and returns the exit code (0 all caught and clean,
/// 1 otherwise).
pub async fn run(jobs: usize) -> i32 {
    let rows = rows(jobs).await;
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
    let benign_peers = parity_fakes::benign_catalogue().len()
        + parity_fakes::acp_benign_catalogue().len()
        + parity_fakes::http_benign_catalogue().len();
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
