//! `parity selftest` proves every check fails on at least one faulty peer and the reference
//! passes everything; this test asserts it for every check of the catalogue.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Command;

#[test]
fn every_check_is_caught_by_a_fault_and_the_reference_is_clean() {
    let out = Command::new(common::parity())
        .arg("selftest")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "selftest failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every MCP, ACP and equivalence check has its row.
    let all = parity_harness::cli::selftest::all_checks(&parity_harness::profiles::builtin());
    assert!(all.iter().any(|(id, _)| id.starts_with("acp.")));
    assert!(all.iter().any(|(id, _)| id.starts_with("equivalence.")));
    for (id, level) in all {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("no selftest row for {id}:\n{stdout}"));
        assert!(!row.contains("NOT PROVEN"), "{row}");
        // The reference column (second) says pass; or skip, for a rule the reference leaves
        // out by design (2026-07-28 logging), when a benign peer passes it instead.
        match row.split_whitespace().nth(1) {
            Some("pass") => {}
            Some("skip") => assert!(
                parity_harness::engine::reference::SKIPPED_BY_DESIGN
                    .iter()
                    .any(|(c, _)| *c == id)
                    && row.contains("=pass"),
                "{id}: skipped by the reference, not by design or passed by no benign peer: {row}"
            ),
            other => panic!("{id}: the reference says {other:?}: {row}"),
        }
        let needed = level.violation_verdict().as_str();
        assert!(
            row.contains(&format!("={needed}")),
            "{id} needs a fault that makes it {needed}: {row}"
        );
    }
    // Every faulty facade fails each check it lists (the rows name each fault that caught it).
    for f in parity_fakes::facade_catalogue() {
        for id in f.checks {
            let row = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(*id))
                .unwrap_or_else(|| panic!("no selftest row for {id}:\n{stdout}"));
            assert!(
                row.contains(&format!(" {}=fail", f.name)),
                "{} must fail {id}: {row}",
                f.name
            );
        }
    }
    // Every benign peer gets no fail, warn or timeout from any check it lists, and the table
    // shows its verdict. The MCP stdio ones pass outright.
    let stdio: Vec<(&str, &[&str])> = parity_fakes::benign_catalogue()
        .iter()
        .map(|b| (b.name, b.passes))
        .collect();
    let acp: Vec<(&str, &[&str])> = parity_fakes::acp_benign_catalogue()
        .iter()
        .map(|b| (b.name, b.passes))
        .collect();
    let http: Vec<(&str, &[&str])> = parity_fakes::http_benign_catalogue()
        .iter()
        .map(|b| (b.name, b.passes))
        .collect();
    let hosts: Vec<(&str, &[&str])> = parity_fakes::host_benign_catalogue()
        .iter()
        .map(|b| (b.name, b.passes))
        .collect();
    // The peers declared by a target file as a user would (issue 23's conventions) pass
    // outright too: a facade that did not start, or an agent whose calls were all not-run,
    // would otherwise look clean.
    let facades: Vec<(&str, &[&str])> = parity_fakes::facade_benign_catalogue()
        .iter()
        .map(|b| (b.name, b.passes))
        .collect();
    let wrapped: &[&str] = &["equivalence.scenario", "equivalence.generated"];
    let declared: Vec<(&str, &[&str])> = facades
        .iter()
        .copied()
        .chain([
            ("acp-wrapped-call", wrapped),
            ("benign-status-results", wrapped),
        ])
        .collect();
    assert!(!facades.is_empty());
    for (name, passes) in stdio
        .iter()
        .chain(&acp)
        .chain(&http)
        .chain(&hosts)
        .chain(&declared)
    {
        for id in *passes {
            let row = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(*id))
                .unwrap_or_else(|| panic!("no selftest row for {id}:\n{stdout}"));
            let shown = format!("benign {name}=");
            let verdict = row
                .split(&shown)
                .nth(1)
                .and_then(|rest| rest.split([';', ' ']).next())
                .unwrap_or_else(|| panic!("{name} is not shown for {id}: {row}"));
            assert!(
                !matches!(verdict, "fail" | "warn" | "timeout"),
                "{name} must not fail {id}: {row}"
            );
            if stdio.iter().chain(&declared).any(|(n, _)| n == name) {
                assert_eq!(verdict, "pass", "{name} must pass {id}: {row}");
            }
        }
    }
}

#[test]
fn every_fault_names_checks_that_exist() {
    let ids: Vec<String> =
        parity_harness::cli::selftest::all_checks(&parity_harness::profiles::builtin())
            .into_iter()
            .map(|(id, _)| id)
            .collect();
    let mcp = parity_fakes::catalogue().iter().map(|f| (f.name, f.trips));
    let acp = parity_fakes::acp_catalogue()
        .iter()
        .map(|f| (f.name, f.trips));
    let hosts = parity_fakes::host_catalogue()
        .iter()
        .map(|f| (f.name, f.checks));
    let dispatchers = parity_fakes::dispatcher_catalogue()
        .iter()
        .map(|f| (f.name, f.checks));
    let benign = parity_fakes::benign_catalogue()
        .iter()
        .map(|f| (f.name, f.passes));
    let benign_hosts = parity_fakes::host_benign_catalogue()
        .iter()
        .map(|f| (f.name, f.passes));
    let benign_facades = parity_fakes::facade_benign_catalogue()
        .into_iter()
        .map(|f| (f.name, f.passes));
    let facades = parity_fakes::facade_catalogue()
        .into_iter()
        .map(|f| (f.name, f.checks));
    for (name, trips) in mcp
        .chain(acp)
        .chain(hosts)
        .chain(dispatchers)
        .chain(benign)
        .chain(benign_hosts)
        .chain(benign_facades)
        .chain(facades)
    {
        for t in trips {
            assert!(
                ids.iter().any(|i| i == t),
                "fault {name} names unknown check {t}"
            );
        }
    }
}
