//! `parity selftest` proves every check fails on at least one faulty peer and the reference
//! passes everything; this test asserts it for every check of the catalogue.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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
    for check in parity_harness::checks_mcp::catalogue() {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(check.id))
            .unwrap_or_else(|| panic!("no selftest row for {}:\n{stdout}", check.id));
        assert!(!row.contains("NOT PROVEN"), "{row}");
        // The reference column (second) says pass.
        assert_eq!(row.split_whitespace().nth(1), Some("pass"), "{row}");
        let needed = check.level.violation_verdict().as_str();
        assert!(
            row.contains(&format!("={needed}")),
            "{} needs a fault that makes it {needed}: {row}",
            check.id
        );
    }
}

#[test]
fn every_fault_names_checks_that_exist() {
    let ids: Vec<&str> = parity_harness::checks_mcp::catalogue()
        .iter()
        .map(|c| c.id)
        .collect();
    for f in parity_fakes::catalogue() {
        for t in f.trips {
            assert!(ids.contains(t), "fault {} names unknown check {t}", f.name);
        }
    }
}
