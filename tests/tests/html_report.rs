//! The HTML matrix report in a real browser: a run of a faulty peer (`stdout-banner`, which
//! breaks stdout purity and nothing else) is written as JSON, rendered with
//! `parity_harness::reports::html::write`, and opened in headless Chromium with the URL fragment
//! `#case=<failing case id>`. The DOM after the page's script ran must hold that case's
//! `<details>` open (and only it), with the case's message and evidence as text; without a
//! fragment nothing is open. A screenshot is taken and must be a non-empty PNG.
//!
//! The browser is Debian's `chromium` at `/usr/bin/chromium` (`tests/interop/install-browser.sh`
//! installs it). Without it the test prints that it was skipped and passes, unless
//! `PARITY_REQUIRE_BROWSER=1` (CI), where it fails. Set `PARITY_HTML_ARTIFACT_DIR=<dir>` to keep
//! the page and the screenshot there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{fake_cmd, run_json};
use serde_json::Value;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BROWSER: &str = "/usr/bin/chromium";
/// The fault: a banner on stdout, so only `mcp.stdio.stdout-purity` fails (in each era).
const FAULT: &str = "stdout-banner";
const FAILING_CHECK: &str = "mcp.stdio.stdout-purity";
/// Upper bound for one browser run; the browser's process group is killed past it.
const BROWSER_DEADLINE: Duration = Duration::from_secs(60);

/// Whether the browser is there; panics when it must be (`PARITY_REQUIRE_BROWSER=1`).
fn browser_available() -> bool {
    if Path::new(BROWSER).is_file() {
        return true;
    }
    if std::env::var("PARITY_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!(
            "{BROWSER} not found and PARITY_REQUIRE_BROWSER=1: run tests/interop/install-browser.sh"
        );
    }
    eprintln!(
        "html_report: skipped: {BROWSER} not found (run tests/interop/install-browser.sh, or set \
         PARITY_REQUIRE_BROWSER=1 to make this a failure)"
    );
    false
}

/// What one browser run printed.
struct BrowserRun {
    stdout: String,
    stderr: String,
}

/// Runs headless Chromium with `args` then `url`, in its own process group with a fresh
/// profile, killing the group past [`BROWSER_DEADLINE`].
fn chromium(args: &[String], url: &str) -> BrowserRun {
    let profile = tempfile::tempdir().expect("profile tempdir");
    let mut cmd = Command::new(BROWSER);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(args)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let mut child = cmd.spawn().expect("failed to start chromium");
    let pgid = child.id();
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if started.elapsed() > BROWSER_DEADLINE {
            kill_group(pgid);
            let _ = child.wait();
            panic!("chromium {args:?} {url} did not finish within {BROWSER_DEADLINE:?} (killed)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever helper the browser left in its group goes too (the group is ours alone).
    kill_group(pgid);
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    assert!(
        status.success(),
        "chromium {args:?} {url} exited with {status}\n--- stderr ---\n{stderr}"
    );
    BrowserRun { stdout, stderr }
}

/// SIGKILL to the process group `pgid` (the browser's, started with `process_group(0)`).
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// `file://` URL of `path` with a fragment.
fn file_url(path: &Path, fragment: &str) -> String {
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url + fragment
}

/// Percent-encodes a case id for `#case=` (as the page's `encodeURIComponent`).
fn encode(id: &str) -> String {
    id.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Text as the browser serializes it inside an element.
fn as_dom_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

/// Opening tags of every case cell in a DOM dump, as (data-case, has the `open` attribute).
fn case_cells(dom: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for (at, _) in dom.match_indices("<details class=\"case\"") {
        let tag = &dom[at..at + dom[at..].find('>').expect("unterminated tag")];
        let case = tag
            .split_once("data-case=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(id, _)| id.replace("&amp;", "&"))
            .unwrap_or_default();
        let open = tag.contains(" open=\"\"") || tag.contains(" open ") || tag.ends_with(" open");
        out.push((case, open));
    }
    out
}

/// Where to keep the page and screenshot: `PARITY_HTML_ARTIFACT_DIR`, when set.
fn artifact_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PARITY_HTML_ARTIFACT_DIR")?);
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

#[test]
fn failing_case_opens_from_the_fragment_in_a_real_browser() {
    if !browser_available() {
        return;
    }
    let r = run_json(&["run", "--mcp", &fake_cmd(FAULT), "--profile", "mcp"]);
    r.assert_code(1);
    let report: Value = r.report.clone().expect("no JSON report");
    // Exactly the stdout-purity cases fail, and they carry evidence.
    let failing: Vec<(&String, &Value)> = r
        .cases()
        .iter()
        .filter(|(_, c)| c["verdict"] == "fail")
        .collect();
    assert!(!failing.is_empty(), "no failing case\n{r}");
    for (id, c) in &failing {
        assert_eq!(
            c["check"], FAILING_CHECK,
            "unexpected failing case {id}\n{r}"
        );
    }
    let (case_id, case) = failing[0];
    let message = case["message"].as_str().unwrap();
    let evidence: Vec<&str> = case["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!message.is_empty() && !evidence.is_empty(), "{case}");

    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    parity_harness::reports::html::write(std::slice::from_ref(&report), &page).unwrap();

    // 1. The DOM after the script ran, with the fragment naming the failing case, and a
    //    screenshot of that state.
    let url = file_url(&page, &format!("#case={}", encode(case_id)));
    let png = dir.path().join("report.png");
    let dump = chromium(
        &[
            "--dump-dom".to_string(),
            format!("--screenshot={}", png.display()),
            "--window-size=1400,1000".to_string(),
            "--hide-scrollbars".to_string(),
        ],
        &url,
    );
    let dom = &dump.stdout;
    assert!(
        dom.contains("</html>"),
        "no DOM dumped for {url}\n--- stderr ---\n{}",
        dump.stderr
    );
    let cells = case_cells(dom);
    assert_eq!(
        cells.len(),
        r.cases().len(),
        "one cell per case in the DOM of {url}"
    );
    let open: Vec<&String> = cells.iter().filter(|(_, o)| *o).map(|(c, _)| c).collect();
    assert_eq!(open, [case_id], "exactly the named case is open in {url}");
    // The fragment was found: the "no such case" notice stays hidden.
    assert!(
        dom.contains("<p id=\"note\" class=\"note\" hidden=\"\"></p>"),
        "notice shown for {url}"
    );
    assert!(
        dom.contains(&as_dom_text(message)),
        "the message of {case_id} is not in the DOM"
    );
    for line in &evidence {
        assert!(
            dom.contains(&as_dom_text(line)),
            "evidence line {line:?} of {case_id} is not in the DOM"
        );
    }
    assert!(dom.contains(case["spec"].as_str().unwrap()), "spec link");

    // 2. Without a fragment nothing is open (the page stays compact).
    let plain = chromium(&["--dump-dom".to_string()], &file_url(&page, ""));
    let plain_cells = case_cells(&plain.stdout);
    assert_eq!(plain_cells.len(), r.cases().len());
    assert!(
        plain_cells.iter().all(|(_, o)| !o),
        "a cell is open without a fragment"
    );

    // 3. The screenshot of step 1.
    let bytes = std::fs::read(&png).expect("no screenshot written");
    assert!(bytes.len() > 1000, "screenshot is {} bytes", bytes.len());
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");

    if let Some(keep) = artifact_dir() {
        std::fs::copy(&page, keep.join("report.html")).unwrap();
        std::fs::copy(&png, keep.join("report.png")).unwrap();
        eprintln!(
            "html_report: kept report.html and report.png in {}",
            keep.display()
        );
    }
}
