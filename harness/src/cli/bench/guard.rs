//! The guard part: files per second over a generated tree of five languages beside a plain
//! parallel walk (`parity bench --only guard`).

use super::*;

/// The guard part's figures: `crate::profiles::guard::scan` of a generated tree beside a plain parallel
/// `ignore` walk that reads every file (the same walker and thread count), medians of
/// alternating passes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardBench {
    /// Files in the generated tree.
    pub files: usize,
    /// Bytes in the generated tree.
    pub bytes: u64,
    /// Timed passes of each side.
    pub repeats: usize,
    /// Median wall time of the plain walk, milliseconds.
    pub walk_ms: f64,
    /// Median wall time of the guard scan, milliseconds.
    pub scan_ms: f64,
    /// Files per second of the plain walk.
    pub walk_per_s: f64,
    /// Files per second of the guard scan: the figure judged (≥ [`GUARD_TARGET_PER_S`]).
    pub files_per_s: f64,
    /// Files the scan visited (equals `files`).
    pub scanned: usize,
    /// Files that went through a grammar (a raw candidate match for a code-only rule).
    pub parsed: usize,
    /// Violations found (equals `expected_violations`).
    pub violations: usize,
    /// Violations the generator planted.
    pub expected_violations: usize,
}

/// The guard part's rules: the TypeScript example's kinds over a multi-language tree.
#[cfg(feature = "guard")]
pub(super) const GUARD_BENCH_RULES: &str = r#"
[[rule]]
id = "surfaces-no-internals"
kind = "forbidden"
reason = "surfaces hold no tool logic"
files = ["src/surfaces/**"]
symbols = ["readFileCapped", "listDir", "lockedWrite", "buildExecArgv"]

[[rule]]
id = "spawn-confined"
kind = "confined"
reason = "only the runtime spawns"
allow = ["src/runtime/**"]
patterns = ['\bspawn\(']

[[rule]]
id = "dispatcher-entry"
kind = "entry-point"
reason = "surfaces call only dispatcher.call"
files = ["src/surfaces/**"]
receivers = ["dispatcher"]
entry = ["call"]
"#;

/// Writes the guard part's tree under `root`: `files` small files in five languages over 100
/// directories (surfaces, tools, runtime), each about 2 KiB. One file in 50 names an internal in a
/// comment (parsed, no violation); one in 100 holds a real violation. Returns (bytes, planted
/// violations).
pub fn guard_tree(root: &Path, files: usize) -> Result<(u64, usize), String> {
    let exts = ["rs", "ts", "py", "go", "js"];
    let (mut bytes, mut planted) = (0u64, 0usize);
    for i in 0..files {
        let area = match i % 10 {
            0..=3 => "surfaces",
            4..=7 => "tools",
            _ => "runtime",
        };
        let dir = root.join(format!("src/{area}/d{:02}", (i / 10) % 100));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
        let ext = exts[i % exts.len()];
        let c = if ext == "py" { "#" } else { "//" };
        let mut text = String::new();
        for l in 0..24 {
            text.push_str(&format!(
                "{c} generated line {l} of file {i}: nothing to see here\n"
            ));
            text.push_str(&format!("let value_{l} = compute(value_{l}, {i});\n"));
        }
        if i % 50 == 1 {
            // A surface file (i % 10 == 1): a candidate, parsed, but only a comment.
            text.push_str(&format!("{c} never call listDir from here\n"));
        }
        if i % 100 == 3 {
            // A surface file (i % 10 == 3) that reaches past the entry point.
            text.push_str("dispatcher.reset();\n");
            planted += 1;
        }
        let path = dir.join(format!("f{i}.{ext}"));
        bytes += text.len() as u64;
        std::fs::write(&path, text)
            .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
    }
    Ok((bytes, planted))
}

/// Generates the guard part's tree in a temporary directory and times alternating passes of a
/// plain walk and the guard scan.
#[cfg(feature = "guard")]
pub fn guard_speed(files: usize, repeats: usize) -> Result<GuardBench, String> {
    let dir =
        tempfile::tempdir().map_err(|e| format!("failed to create a temporary directory: {e}"))?;
    let (bytes, planted) = guard_tree(dir.path(), files)?;
    let rules = crate::profiles::guard::parse_rules("bench rules", GUARD_BENCH_RULES)
        .map_err(|e| e.to_string())?;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let walk = || -> usize {
        let count = std::sync::atomic::AtomicUsize::new(0);
        ignore::WalkBuilder::new(dir.path())
            .hidden(false)
            .require_git(false)
            .threads(threads)
            .build_parallel()
            .run(|| {
                let count = &count;
                Box::new(move |e| {
                    if let Ok(e) = e {
                        if e.file_type().is_some_and(|t| t.is_file())
                            && std::fs::read(e.path()).is_ok()
                        {
                            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                    ignore::WalkState::Continue
                })
            });
        count.into_inner()
    };
    // Warm the page cache and the parsers once.
    let _ = walk();
    let mut last = crate::profiles::guard::scan(dir.path(), &rules, &[]);
    let (mut walk_ms, mut scan_ms) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        let n = walk();
        walk_ms.push(t.elapsed().as_secs_f64() * 1e3);
        if n != files {
            return Err(format!("the plain walk read {n} files of {files}"));
        }
        let t = Instant::now();
        last = crate::profiles::guard::scan(dir.path(), &rules, &[]);
        scan_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    if last.violations.len() != planted {
        return Err(format!(
            "the scan found {} violations, the generator planted {planted}",
            last.violations.len()
        ));
    }
    walk_ms.sort_by(f64::total_cmp);
    scan_ms.sort_by(f64::total_cmp);
    let (w, g) = (median(&walk_ms), median(&scan_ms));
    Ok(GuardBench {
        files,
        bytes,
        repeats: repeats.max(1),
        walk_ms: w,
        scan_ms: g,
        walk_per_s: files as f64 / (w / 1e3).max(1e-9),
        files_per_s: files as f64 / (g / 1e3).max(1e-9),
        scanned: last.files_scanned,
        parsed: last.files_parsed,
        violations: last.violations.len(),
        expected_violations: planted,
    })
}

/// Without the `guard` feature there is no guard to time.
///
/// Errors: always, saying so.
#[cfg(not(feature = "guard"))]
pub fn guard_speed(_files: usize, _repeats: usize) -> Result<GuardBench, String> {
    Err("this parity was built without the `guard` feature".into())
}
