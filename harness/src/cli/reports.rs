//! The commands that read reports rather than run checks: `parity baseline write`,
//! `parity report merge | summary`, and `parity list`.

use super::*;

/// `parity baseline write --from REPORT… [--out FILE] [--scenarios DIR]…`: 0 written, 2 a bad
/// report, a report of a run that could not happen, or an unwritable file. A sharded run's
/// reports are combined (a note names missing shards); an existing `--out` keeps its reasons.
pub(super) fn cmd_baseline_write(
    registry: &crate::engine::profile::Registry,
    from: &[PathBuf],
    out: Option<&std::path::Path>,
    scenario_dirs: &[PathBuf],
) -> i32 {
    for f in from {
        if let Some(e) = same_file(&[("--from", Some(f)), ("--out", out)]) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    let reports = match load_reports(registry, from, scenario_dirs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut cases = serde_json::Map::new();
    let mut shards: std::collections::BTreeMap<String, std::collections::BTreeSet<u64>> =
        Default::default();
    for (path, r) in from.iter().zip(&reports) {
        if r.get("exit_code").and_then(Value::as_i64) == Some(EXIT_COULD_NOT_RUN.into()) {
            eprintln!(
                "error: {}: that run could not happen (exit_code 3), so it says nothing about failures",
                path.display()
            );
            return EXIT_USAGE;
        }
        if let Some((kind_k, n)) = r
            .get("partition")
            .and_then(Value::as_str)
            .and_then(|p| p.rsplit_once('/'))
        {
            if let Some((kind, k)) = kind_k.split_once(':') {
                if let Ok(k) = k.parse() {
                    shards.entry(format!("{kind}:*/{n}")).or_default().insert(k);
                }
            }
        }
        if let Some(c) = r.get("cases").and_then(Value::as_object) {
            for (id, v) in c {
                cases.entry(id.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    for (pattern, ks) in &shards {
        let n: u64 = pattern
            .rsplit('/')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if (ks.len() as u64) < n {
            eprintln!(
                "note: the reports hold {} of the {n} shards of {pattern}: the baseline lists only their failures (give every shard's report with --from)",
                ks.len()
            );
        }
    }
    let mut combined = reports.first().cloned().unwrap_or(Value::Null);
    combined["cases"] = Value::Object(cases);
    let source = from
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // Rewriting a baseline keeps the reasons someone wrote.
    let mut keep = std::collections::HashMap::new();
    if let Some(path) = out.filter(|p| p.exists()) {
        let scenarios = crate::engine::scenario::load_all(scenario_dirs, &registry.check_ids())
            .unwrap_or_default();
        // The checks the reports describe are known here too, so an entry for a user's
        // scenario the old baseline listed is kept without `--scenarios`.
        let described: std::collections::BTreeSet<String> = reports
            .iter()
            .flat_map(crate::reports::report_file::described_checks)
            .collect();
        let known = |check: &str| {
            described.contains(check)
                || crate::engine::select::known_check(registry, check, &scenarios)
        };
        match crate::reports::baseline::load(
            path,
            &crate::reports::baseline::Known {
                check: &known,
                bindings: &registry.bindings(),
            },
        ) {
            Ok(b) => {
                for e in b.entries {
                    keep.insert(e.case, e.reason);
                }
            }
            Err(e) => {
                eprintln!("error: --out {} exists and is not a baseline this parity reads ({e}); move it away first", path.display());
                return EXIT_USAGE;
            }
        }
    }
    let text = crate::reports::baseline::write_from_report_keeping(&combined, &source, &keep);
    match out {
        None => {
            crate::out!("{text}");
            0
        }
        Some(path) => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            if let Some(Err(e)) = dir.map(std::fs::create_dir_all) {
                eprintln!(
                    "error: failed to create the directory of {}: {e}",
                    path.display()
                );
                return EXIT_USAGE;
            }
            match std::fs::write(path, text) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: failed to write {}: {e}", path.display());
                    EXIT_USAGE
                }
            }
        }
    }
}

/// `parity report merge A.json B.json… --html FILE [--scenarios DIR]…`: 0 written, 2 a bad report or an
/// unwritable file.
pub(super) fn cmd_report_merge(
    registry: &crate::engine::profile::Registry,
    reports: &[PathBuf],
    html: &std::path::Path,
    scenario_dirs: &[PathBuf],
) -> i32 {
    for r in reports {
        if let Some(e) = same_file(&[("a report", Some(r)), ("--html", Some(html))]) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    let values = match load_reports(registry, reports, scenario_dirs) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    match crate::reports::html::write(&values, html) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: failed to write {}: {e}", html.display());
            EXIT_USAGE
        }
    }
}

/// Reads JSON reports strictly (`crate::reports::report_file`), their case ids checked against the
/// shipped checks plus the scenarios of `scenario_dirs`, a case that describes its own check
/// being accepted without them; one value per path, in order.
///
/// Errors: a scenario directory or a report that does not load, with file and line.
/// `parity report summary`: the Markdown of [`crate::reports::summary::markdown`] on stdout; exit 2 when
/// a report is unreadable or invalid.
pub(super) fn cmd_report_summary(
    registry: &crate::engine::profile::Registry,
    reports: &[PathBuf],
    html_url: Option<&str>,
) -> i32 {
    let values = match load_reports(registry, reports, &[]) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(crate::reports::summary::markdown(&values, html_url).as_bytes()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("error: failed to write the summary: {e}");
            EXIT_USAGE
        }
    }
}

pub(super) fn load_reports(
    registry: &crate::engine::profile::Registry,
    paths: &[PathBuf],
    scenario_dirs: &[PathBuf],
) -> Result<Vec<Value>, String> {
    let scenarios = crate::engine::scenario::load_all(scenario_dirs, &registry.check_ids())?;
    let known = |check: &str| crate::engine::select::known_check(registry, check, &scenarios);
    let bindings = registry.bindings();
    paths
        .iter()
        .map(|p| {
            crate::reports::report_file::load(
                p,
                &crate::reports::baseline::Known {
                    check: &known,
                    bindings: &bindings,
                },
            )
            .map_err(|e| e.to_string())
        })
        .collect()
}

pub(super) fn cmd_list(
    registry: &crate::engine::profile::Registry,
    as_json: bool,
    markdown: bool,
    scenario_dirs: &[PathBuf],
) -> i32 {
    if markdown {
        crate::out!("{}", crate::reports::catalogue_doc::markdown(registry));
        return 0;
    }
    // --- scenarios (crate::engine::scenario): listed after the checks ---
    let scenarios = match crate::engine::scenario::load_all(scenario_dirs, &registry.check_ids()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let with_binding: Vec<(&str, crate::engine::check::Check)> = registry.checks();
    if as_json {
        let mut items: Vec<Value> = with_binding
            .iter()
            .map(|(binding, c)| {
                json!({
                        "id": c.id,
                        "binding": binding,
                        "kind": match c.kind { CheckKind::Active(_)
                | CheckKind::Own => "active", CheckKind::Monitor(_) => "monitor" },
                        "level": c.level.as_str(),
                        "revisions": c.revs.describe(),
                        "capability": c.capability,
                        "spec": c.spec_url(c.home_revision()),
                        "requirement": c.requirement,
                        "quote": c.quote,
                    })
            })
            .collect();
        items.extend(registry.families().iter().map(|f| {
            json!({
                "id": f.id,
                "binding": f.binding,
                "kind": "active",
                "level": f.level,
                "revisions": f.revisions,
                "capability": f.capability,
                "spec": f.spec,
                "requirement": f.quote,
                "quote": f.quote,
            })
        }));
        items.extend(scenarios.iter().map(|s| {
            json!({
                "id": s.id,
                "binding": checks_mcp::BINDING,
                "kind": "scenario",
                "level": s.level.as_str(),
                "revisions": s.revisions(),
                "capability": s.capability,
                "spec": s.spec_url("2025-11-25"),
                "requirement": s.description,
                "quote": s.quote_or_description(),
                "source": s.source,
                "targets": if s.reference_only { json!(["reference"]) } else { json!([]) },
            })
        }));
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&items).unwrap_or_default()
        );
        return 0;
    }
    // The text list names each check once (the JSON list has one item per binding).
    let mut shown = std::collections::HashSet::new();
    for (_, c) in &with_binding {
        if !shown.insert(c.id) {
            continue;
        }
        crate::outln!(
            "{:<44} {:<10} {:<24} {}",
            c.id,
            c.level.as_str(),
            c.revs.describe(),
            c.spec_url(c.home_revision())
        );
    }
    for f in registry.families() {
        crate::outln!(
            "{:<44} {:<10} {:<24} {}",
            f.id,
            f.level,
            f.revisions,
            f.spec
        );
    }
    for s in &scenarios {
        crate::outln!(
            "{:<44} {:<10} {:<24} {}",
            s.id,
            s.level.as_str(),
            s.revisions(),
            s.spec_url("2025-11-25")
        );
    }
    0
}
