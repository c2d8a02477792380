//! The library entry point for `cargo test` (docs/library.md): check a server from a test the
//! way `parity run` does, and get its verdicts by case id.
//!
//! ```no_run
//! use parity_harness::api::Run;
//!
//! let outcome = Run::mcp("node dist/server.js")
//!     .profile("mcp")
//!     .timeout_multiplier(2.0)
//!     .execute()
//!     .expect("parity could run");
//! outcome.assert_passed(); // panics with each failing case's message, quote and evidence
//! ```
//!
//! A [`Run`] is `parity run` with its flags: [`Run::execute`] runs it exactly as the command
//! line would (the same target reading, profiles, deadlines, selection, baseline and redaction)
//! and returns an [`Outcome`] instead of printing. Nothing is printed but the notes `parity run`
//! writes to stderr.

use crate::engine::check::Verdict;
use crate::engine::profile::Registry;
use crate::engine::run::{CaseResult, RunReport};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// Why a run could not be made: the exit code `parity run` would have given (2 usage or
/// configuration, 3 could not run) and its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parity run: {message} (exit {code})")]
pub struct RunError {
    /// 2 (usage or configuration) or 3 (could not run: the target did not start).
    pub code: i32,
    /// What `parity run` prints after `error: ` (for code 3, each reason, joined by `; `).
    pub message: String,
}

/// One `parity run`, built from its flags (see `parity run --help` and docs/getting-started.md).
#[derive(Clone)]
pub struct Run {
    args: Vec<OsString>,
    registry: Option<Registry>,
}

impl Run {
    fn with(flag: &str, value: impl Into<OsString>) -> Run {
        Run {
            args: vec![
                "parity".into(),
                "run".into(),
                "--quiet".into(),
                flag.into(),
                value.into(),
            ],
            registry: None,
        }
    }

    /// An MCP server over stdio started by `command` (`--mcp`): the `mcp` profile in both eras.
    pub fn mcp(command: &str) -> Run {
        Run::with("--mcp", command)
    }

    /// An ACP v1 agent started by `command` (`--acp`).
    pub fn acp(command: &str) -> Run {
        Run::with("--acp", command)
    }

    /// An MCP server over Streamable HTTP at `url` (`--url`); add `.profile("mcp-http")`.
    pub fn url(url: &str) -> Run {
        Run::with("--url", url)
    }

    /// The target file at `path` (`--target`, docs/target.md).
    pub fn target(path: impl AsRef<Path>) -> Run {
        Run::with("--target", path.as_ref().as_os_str())
    }

    /// Runs this profile (`--profile`; repeatable). Default: every profile the target allows.
    pub fn profile(self, name: &str) -> Run {
        self.arg("--profile").arg(name)
    }

    /// Runs only the cases matching this glob (`--filter`, e.g. `mcp.tools.*`; repeatable).
    pub fn filter(self, glob: &str) -> Run {
        self.arg("--filter").arg(glob)
    }

    /// Leaves out the cases matching this glob (`--skip`; repeatable).
    pub fn skip(self, glob: &str) -> Run {
        self.arg("--skip").arg(glob)
    }

    /// Multiplies every deadline (`--timeout-multiplier`; a positive number).
    pub fn timeout_multiplier(self, factor: f64) -> Run {
        self.arg("--timeout-multiplier").arg(factor.to_string())
    }

    /// Cases run at once (`--jobs`).
    pub fn jobs(self, n: usize) -> Run {
        self.arg("--jobs").arg(n.to_string())
    }

    /// The seed of generated equivalence calls (`--seed`).
    pub fn seed(self, seed: u64) -> Run {
        self.arg("--seed").arg(seed.to_string())
    }

    /// Known failures (`--baseline FILE`, docs/ci.md): listed failures do not fail the run.
    pub fn baseline(self, path: impl AsRef<Path>) -> Run {
        self.arg("--baseline").arg(path.as_ref().as_os_str())
    }

    /// Any other `parity run` flag or value, as written on the command line.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Run {
        self.args.push(arg.into());
        self
    }

    /// Runs with these profiles instead of parity's own ([`crate::profiles::builtin`] extended
    /// with [`Registry::register`]).
    pub fn registry(mut self, registry: Registry) -> Run {
        self.registry = Some(registry);
        self
    }

    /// Runs on a runtime of its own and waits for the verdicts. Call it from a plain `#[test]`,
    /// not from inside an async runtime (use [`Run::execute_async`] there).
    ///
    /// Errors: a bad flag or target, or a console flag (`--verbose`, `--color`) (code 2); a
    /// target that could not run, or a `--filter`/`--skip` that kept no case (code 3, with the
    /// reasons); a run whose checks fail is an `Ok` outcome.
    pub fn execute(self) -> Result<Outcome, RunError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| RunError {
                code: super::EXIT_COULD_NOT_RUN,
                message: format!("failed to start the async runtime: {e}"),
            })?;
        runtime.block_on(self.execute_async())
    }

    /// [`Run::execute`] inside a running multi-threaded tokio runtime.
    ///
    /// Errors: as [`Run::execute`].
    pub async fn execute_async(self) -> Result<Outcome, RunError> {
        let usage = |message: String| RunError {
            code: super::EXIT_USAGE,
            message,
        };
        // The library prints no console report: the flags that shape it are refused, before
        // clap would report `--verbose` as clashing with the `--quiet` the library adds.
        let console = |a: &OsString| {
            let a = a.to_string_lossy();
            a == "--verbose" || a == "-v" || a == "--color" || a.starts_with("--color=")
        };
        if self.args.iter().skip(2).any(console) {
            return Err(usage(
                "--verbose and --color shape the console report, which the library does not print; read the outcome instead".into(),
            ));
        }
        let registry = self.registry.unwrap_or_else(crate::profiles::builtin);
        let cli = super::parse_with(&registry, &self.args).map_err(|e| usage(clap_text(&e)))?;
        let super::Command::Run(args) = cli.command else {
            return Err(usage("not a run".into()));
        };
        let finished = super::execute(&args, &registry).await.map_err(usage)?;
        super::write_report_files(&args, &finished.report, finished.baseline.as_deref())
            .map_err(usage)?;
        // Both a surface that did not start and a selection that kept no case.
        if !finished.report.could_not_run.is_empty() {
            return Err(RunError {
                code: super::EXIT_COULD_NOT_RUN,
                message: finished.report.could_not_run.join("; "),
            });
        }
        Ok(Outcome {
            report: finished.report,
        })
    }
}

/// The sentence of a clap error, without its `error: ` prefix and usage hint.
fn clap_text(e: &clap::Error) -> String {
    let text = e.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let first = text.split("\n\n").next().unwrap_or(text);
    first.trim().to_string()
}

/// The verdicts of a run that happened.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The whole report, as `--json` would write it (redacted).
    pub report: RunReport,
}

impl Outcome {
    /// Every case's verdict by case id (`mcp.base.ping@mcp-stdio#2025-11-25`).
    pub fn verdicts(&self) -> BTreeMap<String, Verdict> {
        self.report
            .cases
            .iter()
            .map(|c| (c.id.clone(), c.verdict))
            .collect()
    }

    /// The case of this id, when the run had it.
    pub fn case(&self, id: &str) -> Option<&CaseResult> {
        self.report.cases.iter().find(|c| c.id == id)
    }

    /// The cases that fail the run: `fail`, `timeout` and `not-run`, unless a baseline expects
    /// them; the cases a `--fail-fast` run never started are left out (the case that stopped it
    /// is among these).
    pub fn failures(&self) -> Vec<&CaseResult> {
        self.report
            .cases
            .iter()
            .filter(|c| {
                matches!(
                    c.verdict,
                    Verdict::Fail | Verdict::Timeout | Verdict::NotRun
                ) && c.expected.is_none()
                    && !c
                        .message
                        .starts_with(crate::engine::run::FAIL_FAST_NOT_STARTED)
            })
            .collect()
    }

    /// The exit code `parity run` would give ([`RunReport::exit_code`]): 0 as expected; 1 a
    /// check failed or timed out, or a baseline entry is stale; 3 no check executed, or a case
    /// was `not-run` without a baseline entry.
    pub fn exit_code(&self) -> i32 {
        self.report.exit_code()
    }

    /// Panics unless the run is as expected (exit code 0), with each failing case's id,
    /// verdict, message, level and quote, and its evidence.
    pub fn assert_passed(&self) {
        if self.exit_code() == 0 {
            return;
        }
        let mut text = format!(
            "parity: the run is not as expected (exit {}): {} of {} case(s) did not pass, {} stale baseline entr(ies)\n",
            self.exit_code(),
            self.failures().len(),
            self.report.cases.len(),
            self.report.stale.len()
        );
        for c in self.failures() {
            text.push_str(&format!(
                "\n{} {}\n  {}\n  {} {}: \"{}\"\n",
                c.verdict.as_str().to_uppercase(),
                c.id,
                c.message,
                c.level,
                c.spec,
                c.quote
            ));
            for e in &c.evidence {
                text.push_str(&format!("    {e}\n"));
            }
        }
        for s in &self.report.stale {
            text.push_str(&format!(
                "\nSTALE baseline entry `{}` (line {}): every case it lists passed ({}); remove it (its reason: {})\n",
                s.entry,
                s.line,
                s.cases.join(", "),
                s.reason
            ));
        }
        if self.report.executed() == 0 {
            text.push_str("\nno check executed: this run is not a pass (exit 3)\n");
        }
        panic!("{text}");
    }
}
