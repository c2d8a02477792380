//! The command line (DESIGN.md §Command line). Exit codes: 0 every result as expected; 1 a
//! check failed or timed out; 2 usage or configuration error; 3 could not run (the target did not
//! start, or no check executed).
//!
//! Size (1550 lines): the argument definitions of every subcommand and their effective values
//! (about 500 lines), the dispatch, `parity run` (execute, then the reporters) and `parity replay`;
//! the servers are in `serve`, the report commands in `reports`, `parity hygiene` in `hygiene`,
//! the library entry point in `api`.

pub mod api;
pub mod bench;
pub mod hygiene;
pub mod logging;
mod reports;
pub mod selftest;
mod serve;

use reports::*;
#[cfg(feature = "http")]
pub use serve::serve_facade;
use serve::*;
pub use serve::{reference_dispatcher, reference_root};

pub use crate::engine::reference::{
    acp_fake_target, fake_target, reference_acp_target, reference_slow_call, reference_target,
};

use crate::engine::check::{CheckKind, SlowCall, Timing};
use crate::engine::run::{EraSel, RunOptions};
use crate::profiles::mcp as checks_mcp;
use crate::transport::peer::PeerSpec;
use clap::{Parser, Subcommand};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::base::exit::{EXIT_COULD_NOT_RUN, EXIT_USAGE};

/// parity: conformance and equivalence harness for JSON-RPC tool surfaces (MCP, ACP).
#[derive(Parser, Debug)]
#[command(name = "parity", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the checks against a target (default: the bundled reference, MCP and ACP).
    Run(Box<RunArgs>),
    /// List every check and scenario with its spec reference.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Print the Markdown check catalogue (docs/checks.md).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
        /// Also list the scenarios of this directory (every `*.yaml`/`*.yml`, recursively).
        #[arg(long, value_name = "DIR")]
        scenarios: Vec<PathBuf>,
    },
    /// Run every check against its faulty peers and the clean reference, and print the table.
    Selftest {
        /// Parallel cases per run.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
    },
    /// Serve a bundled reference surface.
    Reference {
        #[command(subcommand)]
        surface: ReferenceCmd,
    },
    /// Serve a faulty peer: the reference with one injected fault (used by selftest).
    #[command(hide = true)]
    Fake {
        /// Fault name (see `parity fake --list`).
        fault: Option<String>,
        /// List the faults.
        #[arg(long)]
        list: bool,
    },
    /// Serve a faulty facade: the reference facade with one injected fault (used by selftest).
    #[command(hide = true)]
    #[cfg(feature = "http")]
    FakeFacade {
        /// Fault name (`parity fake --list` lists them).
        fault: String,
        #[command(flatten)]
        args: FacadeArgs,
    },
    /// A token hook for a facade that serves parity's admin hook: `mint CHANNEL` prints a
    /// token, `revoke TOKEN` revokes it (the benign facades' declarations use it as their
    /// `mint_command` and `revoke_command`; docs/facade.md).
    #[command(hide = true)]
    #[cfg(feature = "http")]
    FakeFacadeAdmin {
        /// The facade's endpoint URL; the hook is at its origin plus `/admin`.
        #[arg(long, conflicts_with = "port", required_unless_present = "port")]
        url: Option<String>,
        /// The facade's port on 127.0.0.1.
        #[arg(long)]
        port: Option<u16>,
        /// `mint` or `revoke`.
        #[arg(value_parser = ["mint", "revoke"])]
        action: String,
        /// The channel to mint for, or the token to revoke.
        value: String,
    },
    /// Serve a faulty dispatcher: the reference MCP server or ACP agent, started with a
    /// policy file, behind one lifecycle or policy fault (used by selftest; docs/dispatcher.md).
    #[command(hide = true)]
    FakeDispatcher {
        /// Fault name (`parity fake --list` lists them).
        fault: String,
        /// The surface: `mcp` or `acp`.
        #[arg(value_parser = ["mcp", "acp"])]
        surface: String,
        /// The policy file of the reference dispatcher behind the fault.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
    },
    /// Serve a faulty MCP server over Streamable HTTP: the reference facade with one injected
    /// HTTP fault (used by selftest).
    #[command(hide = true)]
    #[cfg(feature = "http")]
    FakeHttp {
        /// Fault name (`parity fake --list` lists them).
        fault: String,
        #[command(flatten)]
        args: FacadeArgs,
    },
    /// Prove a host that launches children keeps the bearer token out of their environment,
    /// argv, its output and loose files, hands them a private file, rotates it in place and
    /// cleans up (docs/hygiene.md). Without a target or CMD: the bundled
    /// `parity reference launch -- parity reference bridge`.
    Hygiene(Box<hygiene::HygieneArgs>),
    /// The hygiene probe's stub: stop (SIGSTOP) so the tracer can attach, then execute CMD.
    #[command(hide = true)]
    HygieneExec {
        /// The host command and its arguments, after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// The peer watchdog: waits for end-of-file on stdin (parity PID ended), then kills every
    /// process PID's peers started (docs/architecture.md).
    #[command(hide = true)]
    Watchdog {
        /// The parity process whose peers to kill.
        pid: u32,
    },
    /// Serve a faulty host for the hygiene probe (used by selftest): `clean`, a fault, or a
    /// helper mode (`parity fake --list` lists them).
    #[command(hide = true)]
    FakeHost {
        /// The mode.
        mode: String,
        /// The child command (default: `parity fake-host idle`), after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Check a source tree against architecture rules (docs/guard.md): forbidden references,
    /// symbols confined to allow-listed files, modules reached only through their entry points.
    #[cfg(feature = "guard")]
    Guard(crate::profiles::guard::GuardArgs),
    /// Measure round trips and run times against baselines measured in the same run.
    Bench(crate::cli::bench::BenchArgs),
    /// Baseline files of expected failures (docs/ci.md).
    Baseline {
        #[command(subcommand)]
        action: BaselineCmd,
    },
    /// Work with JSON reports written by `parity run --json`.
    Report {
        #[command(subcommand)]
        action: ReportCmd,
    },
    /// Record a session: start CMD behind a transparent stdio proxy and write its transcript
    /// (docs/transcripts.md). Exits with CMD's status.
    Record {
        /// The transcript file to write (JSONL, mode 0600; its directory is created).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// A value (or a regular expression) redacted as well; repeatable (docs/redaction.md).
        #[arg(long, value_name = "VALUE")]
        redact: Vec<String>,
        /// The server or agent command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Replay a transcript against a live server or agent and report every difference, or
    /// serve it as a mock server (docs/transcripts.md).
    #[command(group(clap::ArgGroup::new("against").required(true).args(["mcp", "acp", "serve", "target"])))]
    Replay {
        /// The transcript (`parity record --out FILE`).
        file: PathBuf,
        /// The MCP stdio server to replay against (quoted, split like a shell).
        #[arg(long, value_name = "CMD")]
        mcp: Option<String>,
        /// The ACP agent to replay against (quoted, split like a shell).
        #[arg(long, value_name = "CMD")]
        acp: Option<String>,
        /// Play the recorded server on stdin/stdout for a client under test.
        #[arg(long, conflicts_with_all = ["mcp", "acp"])]
        serve: bool,
        /// A target file: its volatile outcome pointers' member names are volatile, and its
        /// MCP or ACP command (by the transcript's protocol) is the default to replay against.
        #[arg(long, value_name = "FILE")]
        target: Option<PathBuf>,
        /// A JSON pointer into each message whose value is volatile (e.g.
        /// `/result/structuredContent/value/since_ms`); repeatable.
        #[arg(long, value_name = "POINTER")]
        volatile: Vec<String>,
        /// An object member name whose value is volatile wherever it appears, also inside
        /// text holding serialized JSON (e.g. `since_ms`); repeatable.
        #[arg(long, value_name = "NAME")]
        volatile_key: Vec<String>,
        /// Per-message deadline in milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 5000)]
        timeout_ms: u64,
        /// A value (or a regular expression) redacted from the output; repeatable
        /// (docs/redaction.md).
        #[arg(long, value_name = "VALUE")]
        redact: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
enum BaselineCmd {
    /// Write a baseline listing every failed or timed-out case of JSON reports (give every
    /// shard's report of a sharded run). Rewriting an existing `--out` keeps the reasons of the
    /// entries it still lists.
    Write {
        /// A JSON report (`parity run --json FILE`); repeatable.
        #[arg(long, value_name = "REPORT", required = true)]
        from: Vec<PathBuf>,
        /// Where to write the baseline (default: stdout); its directory is created.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The scenario directories the run used (`parity run --scenarios DIR`), so their
        /// checks are known.
        #[arg(long, value_name = "DIR")]
        scenarios: Vec<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum ReportCmd {
    /// Put several JSON reports side by side in one HTML matrix (one column group per
    /// implementation, like Autobahn|Testsuite's table).
    Merge {
        /// JSON reports (`parity run --json FILE`), at least one.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// The HTML page to write.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
        /// The scenario directories the runs used (`parity run --scenarios DIR`), so their
        /// checks are known.
        #[arg(long, value_name = "DIR")]
        scenarios: Vec<PathBuf>,
    },
    /// Print a Markdown summary of JSON reports: verdict counts, every case that fails the
    /// run with its check id and quoted requirement, stale baseline entries (for a CI job
    /// summary such as `$GITHUB_STEP_SUMMARY`).
    Summary {
        /// JSON reports (`parity run --json FILE`), at least one; one section each.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        /// Where the HTML report can be seen (an uploaded artifact's URL); linked at the end.
        #[arg(long, value_name = "URL")]
        html_url: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
enum ReferenceCmd {
    /// The reference MCP server over stdio (both protocol eras).
    Mcp(ReferenceArgs),
    /// The reference ACP v1 agent over stdio (tools through the `_parity/tool` extension method).
    Acp(ReferenceAcpArgs),
    /// The reference session-gating facade over MCP Streamable HTTP (docs/facade.md). Prints
    /// its endpoint URL as the first stdout line; stops on SIGTERM/SIGINT, or at EOF when
    /// stdin is a pipe. (Built with the `http` feature, the default.)
    #[cfg(feature = "http")]
    Facade(FacadeArgs),
    /// A host that hands CMD a credential file, never the bearer (docs/credentials.md): the
    /// header comes from PARITY_MCP_AUTHORIZATION (or the first stdin line with
    /// --bearer-stdin) and is written to a private 0600 file; CMD gets
    /// PARITY_MCP_AUTHORIZATION_FILE and PARITY_MCP_ENDPOINT. stdin line `rotate <header>`
    /// rotates the file; stdin EOF, SIGTERM or SIGINT stops CMD and removes the file.
    Launch {
        /// The MCP endpoint handed to CMD (default: $PARITY_MCP_ENDPOINT, else none).
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
        /// Read the Authorization header value from the first line of stdin.
        #[arg(long)]
        bearer_stdin: bool,
        /// The command to start, and its arguments.
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "CMD"
        )]
        command: Vec<std::ffi::OsString>,
    },
    /// A stdio MCP to Streamable HTTP bridge (docs/credentials.md): reads the endpoint from
    /// PARITY_MCP_ENDPOINT and the Authorization header from the file named by
    /// PARITY_MCP_AUTHORIZATION_FILE, re-read before every request. Exit 2 when either is
    /// missing or unusable. (Built with the `http` feature, the default.)
    #[cfg(feature = "http")]
    Bridge,
}

/// Options of `parity reference facade` (and of the faulty facades).
#[derive(clap::Args, Debug, Clone)]
pub struct FacadeArgs {
    /// The address to listen on; only loopback addresses are accepted.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// The endpoint path.
    #[arg(long, default_value = "/mcp")]
    pub path: String,
    /// How capabilities are published: `meta` (search_capabilities/execute_capability) or
    /// `direct` (one MCP tool per capability).
    #[arg(long, default_value = "meta", value_parser = ["meta", "direct"])]
    pub catalogue: String,
    /// Separator of prefixed names in the direct catalogue (`[A-Za-z0-9_.-]`).
    #[arg(long, default_value = parity_reference::facade::DEFAULT_DIRECT_SEPARATOR)]
    pub separator: String,
    /// A downstream MCP stdio server, `NAME=COMMAND` (repeatable; the command is split like
    /// a shell without expansion).
    #[arg(long, value_name = "NAME=COMMAND")]
    pub downstream: Vec<String>,
    /// A session-bound echo source with this provider label and tool `echo_channel`
    /// (repeatable; default: one, `echo`).
    #[arg(long, value_name = "PROVIDER")]
    pub session_source: Vec<String>,
    /// Do not mount the reference dispatcher as the host-level source `parity`.
    #[arg(long)]
    pub no_dispatcher: bool,
    /// Workspace root of the dispatcher's tools (default: a fresh temporary directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Append audit lines to this file (mode 0600) instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Enable the loopback admin hook (`POST /admin/mint`, `POST /admin/revoke`).
    #[arg(long)]
    pub admin: bool,
    /// Response framing of requests: `json` or `sse`.
    #[arg(long, default_value = "json", value_parser = ["json", "sse"])]
    pub response: String,
    /// A policy file for the mounted reference dispatcher (TOML, docs/dispatcher.md).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

#[derive(clap::Args, Debug, Clone)]
struct ReferenceAcpArgs {
    /// Workspace root of the tools (default: a fresh temporary directory, removed at exit).
    #[arg(long)]
    root: Option<PathBuf>,
    /// The tool extension method to serve.
    #[arg(long, default_value = parity_reference::acp::TOOL_METHOD)]
    tool_method: String,
    /// A policy file (TOML, docs/dispatcher.md): policy mode, startup budget, queue and tool
    /// time limits, backend runtime.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
}

#[derive(clap::Args, Debug, Clone)]
struct ReferenceArgs {
    /// Workspace root of the tools (default: a fresh temporary directory, removed at exit).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Tools per tools/list page (0 = all on one page).
    #[arg(long, default_value_t = parity_reference::mcp::DEFAULT_PAGE_SIZE)]
    page_size: usize,
    /// The version the server reports (`serverInfo.version`, and `_meta` serverInfo in
    /// 2026-07-28) instead of parity's own: lets tests show that snapshots and replays
    /// survive a server upgrade. Hidden: it changes nothing a user checks.
    #[arg(long, hide = true, value_name = "VERSION")]
    server_version: Option<String>,
    /// A policy file (TOML, docs/dispatcher.md): policy mode, startup budget, queue and tool
    /// time limits, backend runtime.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// A value (or a regular expression) redacted from every report, besides the values of
    /// secret-named environment variables; repeatable (docs/redaction.md).
    #[arg(long, value_name = "VALUE")]
    redact: Vec<String>,
    /// A target file (`parity.toml`, docs/target.md): surfaces, profiles, outcome extraction,
    /// deadlines. `--mcp`/`--acp` override its commands.
    #[arg(long, value_name = "FILE")]
    target: Option<PathBuf>,
    /// The MCP stdio server command to check (quoted, split like a shell without expansion).
    /// Default: this binary's `reference mcp` (when neither --target nor --acp is given).
    #[arg(long)]
    mcp: Option<String>,
    /// An MCP server over Streamable HTTP to check (profile mcp-http), e.g.
    /// `http://127.0.0.1:8080/mcp`. Default for the bundled reference: `reference facade
    /// --catalogue direct`, started by parity.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The ACP agent command to check. Default: this binary's `reference acp` (when neither
    /// --target nor --mcp is given).
    #[arg(long)]
    acp: Option<String>,
    /// The ACP agent's tool extension method. Without it the tool-method checks use the
    /// method the agent advertises (`agentCapabilities._meta`), or skip; equivalence calls
    /// `_parity/tool`.
    #[arg(long)]
    tool_method: Option<String>,
    /// Profiles to run: mcp, acp, equivalence, mcp-http, facade, hygiene, dispatcher, guard
    /// (repeatable). Default: every profile the target allows; on the bundled reference (no
    /// target, --mcp, --acp or --url) that is mcp, acp, equivalence, mcp-http, facade, hygiene
    /// and dispatcher (guard needs a target with [guard]).
    #[arg(long)]
    profile: Vec<String>,
    /// Generated equivalence: cases per tool (default 100; 0 turns generation off).
    #[arg(long)]
    cases: Option<u32>,
    /// Generated equivalence: the seed (default: random; every report prints the one used).
    #[arg(long)]
    seed: Option<u64>,
    /// Which MCP protocol eras to check (default: every era the server speaks, or the target
    /// file's `eras`, which this flag overrides).
    #[arg(long, value_enum)]
    era: Option<EraSel>,
    /// Equivalence: a JSON pointer into the outcome whose value differs from run to run
    /// (`/value/since_ms`), normalized before comparing; repeatable, added to the target's.
    #[arg(long, value_name = "POINTER")]
    volatile: Vec<String>,
    /// ACP: a prompt text the agent keeps its turn open for until `session/cancel` (the
    /// reference's is `wait_for_cancel`); overrides the target's `cancel_prompt`.
    #[arg(long, value_name = "TEXT")]
    cancel_prompt: Option<String>,
    /// Write the JSON report here (schema: docs/report.schema.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a JUnit XML report here: one test suite per profile, one test case per case.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write a self-contained HTML matrix report here (checks × surfaces and eras).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// A baseline of expected failures (YAML, docs/ci.md): listed failures exit 0; a listed
    /// check that now passes fails the run as stale. Overrides the target's `run.baseline`.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Run one shard of the cases: `hash:K/N` or `count:K/N` (docs/ci.md). Shards 1/N…N/N
    /// together run every case once; an empty shard exits 0.
    #[arg(long, value_name = "KIND:K/N")]
    partition: Option<String>,
    /// Start no more cases after the first unexpected failure or timeout; the rest are
    /// reported not-run.
    #[arg(long)]
    fail_fast: bool,
    /// Run a failed or timed-out case up to N more times (at most 100); a case that then passes
    /// is reported flaky, never as a plain pass.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100))]
    retries: u32,
    /// Compare each scenario's exchange with its snapshot in DIR (created when missing); a
    /// difference fails the case and writes `<case>.snap.new` (docs/transcripts.md).
    /// Overrides the target's `run.snapshots`.
    #[arg(long, value_name = "DIR")]
    snapshots: Option<PathBuf>,
    /// With --snapshots (or the target's `run.snapshots`): write differing exchanges as the
    /// new snapshots instead of failing.
    #[arg(long)]
    accept: bool,
    /// Print only the cases that did not pass and the summary; no progress.
    #[arg(long, short, conflicts_with = "verbose")]
    quiet: bool,
    /// Keep only cases whose id matches one of these globs (a bare check id keeps all its cases).
    #[arg(long)]
    filter: Vec<String>,
    /// Drop cases whose id matches one of these globs.
    #[arg(long)]
    skip: Vec<String>,
    /// Cases run in parallel (most of a case's time is spent waiting on the peer); at least 1.
    /// Default: the target's `run.jobs`, else 8.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
    /// Multiply every deadline by this factor (slow machines, slow servers). Default: the
    /// target's `run.timeout_multiplier`, else 1.
    /// Negative numbers are taken as values, so `-1` is refused by name, not as an unknown flag.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    timeout_multiplier: Option<f64>,
    /// A tool call the target declares slow enough to cancel in flight, as JSON
    /// `{"name": "...", "arguments": {...}, "ms": N}` where `ms` is how long it takes when left
    /// alone (default 1000). Without it the cancellation check can only prove the server keeps
    /// serving. The reference's is declared by default.
    #[arg(long)]
    slow_call: Option<String>,
    /// Which tools the tool-result checks may call besides those the target lists in
    /// `[tools] safe`: `read-only` adds the tools annotated `readOnlyHint: true` without
    /// `destructiveHint: true` (trust the server's annotations); `declared` (the target's
    /// `tools.call`, by default) only the listed ones (docs/target.md, "Calling tools").
    #[arg(long, value_name = "WHICH", value_parser = ["declared", "read-only"])]
    call_tools: Option<String>,
    /// Per-line byte cap on the server's stdout (default 16 MiB). A longer line is skipped to
    /// its newline and kept as a prefix, its length and its SHA-256.
    #[arg(long, default_value_t = crate::transport::wire::DEFAULT_LINE_CAP)]
    line_cap: usize,
    /// Print evidence for every case that did not pass.
    #[arg(long, short)]
    verbose: bool,
    /// Colour the verdict words of the console report: `auto` (the default) on a terminal
    /// unless `NO_COLOR` is set, `always`, or `never`.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = crate::reports::report::ColorChoice::Auto)]
    color: crate::reports::report::ColorChoice,
    /// Also run the scenario files of this directory (every `*.yaml`/`*.yml`, recursively,
    /// sorted; see docs/scenarios.md). The shipped scenarios always run. Repeatable; given
    /// at all, it replaces the target's `run.scenarios`.
    #[arg(long, value_name = "DIR")]
    scenarios: Vec<PathBuf>,
}

/// Default `--jobs`.
const DEFAULT_JOBS: u64 = 8;

/// The `[run]` settings in force: each flag when given, else the target file's key, else the
/// default.
struct Effective {
    scenarios: Vec<PathBuf>,
    snapshots: Option<PathBuf>,
    baseline: Option<PathBuf>,
    jobs: u64,
    timeout_multiplier: f64,
}

impl Effective {
    fn new(args: &RunArgs, target: &crate::engine::target::Target) -> Effective {
        let d = &target.run;
        Effective {
            scenarios: if args.scenarios.is_empty() {
                d.scenarios.clone()
            } else {
                args.scenarios.clone()
            },
            snapshots: args.snapshots.clone().or_else(|| d.snapshots.clone()),
            baseline: args.baseline.clone().or_else(|| d.baseline.clone()),
            jobs: args.jobs.or(d.jobs).unwrap_or(DEFAULT_JOBS),
            timeout_multiplier: args
                .timeout_multiplier
                .or(d.timeout_multiplier)
                .unwrap_or(1.0),
        }
    }
}

/// Whether `command` serves a faulty facade or HTTP server (one thread, as every served
/// surface).
fn served_over_http(command: &Command) -> bool {
    #[cfg(feature = "http")]
    {
        matches!(
            command,
            Command::FakeFacade { .. } | Command::FakeHttp { .. }
        )
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = command;
        false
    }
}

/// Parses the process's command line and runs it with parity's own profiles
/// ([`crate::profiles::builtin`]); returns the process exit code.
pub fn main() -> i32 {
    run_with(crate::profiles::builtin(), std::env::args_os())
}

/// Parses `args` (the program name first) as `parity`'s command line, with `run --profile`
/// taking exactly the names of `registry`'s profiles (listed in `run --help`).
///
/// Errors: clap's usage error (an unknown flag, a profile the registry does not hold, …).
fn parse_with<I, T>(
    registry: &crate::engine::profile::Registry,
    args: I,
) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let names = registry.names();
    let cmd = Cli::command().mut_subcommand("run", |run| {
        run.mut_arg("profile", |a| {
            a.value_parser(clap::builder::PossibleValuesParser::new(names))
        })
    });
    let matches = cmd.try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// Parses `args` (the program name first, as `std::env::args_os` gives them), starts the async
/// runtime that fits the command and runs it with the profiles of `registry`; returns the exit
/// code (0 as expected, 1 a check failed or timed out, 2 usage, 3 could not run). The library
/// entry point the `parity` binary uses: a registry extended with
/// [`Registry::register`](crate::engine::profile::Registry::register) adds profiles to `run`,
/// `list` and `baseline write` (docs/library.md).
pub fn run_with<I, T>(registry: crate::engine::profile::Registry, args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    crate::transport::watchdog::enable();
    let cli = match parse_with(&registry, args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    // A served surface (the reference, a faulty peer) and the benchmark run on one thread:
    // every message then stays on the thread that read it, with no cross-thread wake-ups.
    // Runs and the self-test use a multi-threaded runtime, since starting peers blocks.
    let single = matches!(
        cli.command,
        Command::Reference { .. }
            | Command::Fake { .. }
            | Command::FakeDispatcher { .. }
            | Command::HygieneExec { .. }
            | Command::Watchdog { .. }
            | Command::FakeHost { .. }
            | Command::Bench(_)
    ) || served_over_http(&cli.command);
    let runtime = if single {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    };
    match runtime {
        Ok(rt) => rt.block_on(dispatch(cli, &registry)),
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            EXIT_COULD_NOT_RUN
        }
    }
}

/// Runs a parsed command line; returns the process exit code.
pub async fn dispatch(cli: Cli, registry: &crate::engine::profile::Registry) -> i32 {
    match cli.command {
        Command::Run(args) => {
            watch_signals();
            let code = cmd_run(*args, registry).await;
            crate::transport::peer::reap_orphans().await;
            code
        }
        Command::List {
            json,
            markdown,
            scenarios,
        } => cmd_list(registry, json, markdown, &scenarios),
        Command::Selftest { jobs } => {
            watch_signals();
            let code = crate::cli::selftest::run(registry, jobs).await;
            crate::transport::peer::reap_orphans().await;
            code
        }
        Command::Reference { surface } => match surface {
            ReferenceCmd::Mcp(a) => serve_reference(a).await,
            ReferenceCmd::Acp(a) => serve_reference_acp(a).await,
            #[cfg(feature = "http")]
            ReferenceCmd::Facade(a) => serve_facade(a, None, None, None).await,
            ReferenceCmd::Launch {
                endpoint,
                bearer_stdin,
                command,
            } => {
                parity_reference::credentials::launch::run(
                    parity_reference::credentials::launch::LaunchOptions {
                        endpoint,
                        bearer_stdin,
                        command,
                    },
                )
                .await
            }
            #[cfg(feature = "http")]
            ReferenceCmd::Bridge => parity_reference::credentials::bridge::run().await,
        },
        Command::Fake { fault, list } => cmd_fake(fault, list).await,
        #[cfg(feature = "http")]
        Command::FakeFacade { fault, args } => {
            match (
                parity_fakes::find_facade_fault(&fault),
                parity_fakes::find_facade_benign(&fault),
            ) {
                (Some(f), _) => serve_facade(args, Some(f), None, None).await,
                (None, Some(b)) => serve_facade(args, None, None, Some(b)).await,
                (None, None) => {
                    eprintln!(
                        "error: unknown faulty facade `{fault}`; `parity fake --list` lists them"
                    );
                    EXIT_USAGE
                }
            }
        }
        #[cfg(feature = "http")]
        Command::FakeFacadeAdmin {
            url,
            port,
            action,
            value,
        } => facade_admin(url, port, &action, &value).await,
        Command::FakeDispatcher {
            fault,
            surface,
            policy,
        } => serve_fake_dispatcher(&fault, &surface, policy.as_deref()).await,
        #[cfg(feature = "http")]
        Command::FakeHttp { fault, args } => {
            let layer = parity_fakes::find_http_fault(&fault)
                .or_else(|| parity_fakes::find_http_benign(&fault).map(|b| b.layer()));
            match layer {
                Some(f) => serve_facade(args, None, Some(f), None).await,
                None => {
                    eprintln!("error: unknown faulty HTTP server `{fault}`; `parity fake --list` lists them");
                    EXIT_USAGE
                }
            }
        }
        Command::Hygiene(args) => {
            watch_signals();
            let code = hygiene::cmd(*args).await;
            crate::transport::peer::reap_orphans().await;
            code
        }
        Command::HygieneExec { command } => crate::transport::proctrack::stub_exec(&command),
        Command::Watchdog { pid } => crate::transport::watchdog::serve(pid),
        Command::FakeHost { mode, command } => parity_fakes::serve_host(&mode, &command),
        #[cfg(feature = "guard")]
        Command::Guard(args) => crate::profiles::guard::cmd(args),
        Command::Bench(args) => crate::cli::bench::run(args).await,
        Command::Baseline {
            action:
                BaselineCmd::Write {
                    from,
                    out,
                    scenarios,
                },
        } => cmd_baseline_write(registry, &from, out.as_deref(), &scenarios),
        Command::Report {
            action:
                ReportCmd::Merge {
                    reports,
                    html,
                    scenarios,
                },
        } => cmd_report_merge(registry, &reports, &html, &scenarios),
        Command::Report {
            action: ReportCmd::Summary { reports, html_url },
        } => cmd_report_summary(registry, &reports, html_url.as_deref()),
        Command::Record {
            out,
            redact,
            command,
        } => {
            crate::features::record::run(crate::features::record::RecordOptions {
                out,
                redact,
                command,
            })
            .await
        }
        Command::Replay {
            file,
            mcp,
            acp,
            serve,
            target,
            volatile,
            volatile_key,
            timeout_ms,
            redact,
        } => {
            let argv: Vec<String> = mcp
                .iter()
                .chain(acp.iter())
                .flat_map(|c| crate::transport::peer::split_words(c).unwrap_or_default())
                .collect();
            if let Err(e) = crate::engine::redact::install_from(&[], &argv, &redact) {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
            let against = match (mcp, acp) {
                (Some(c), _) => Some(("mcp", c)),
                (None, Some(c)) => Some(("acp", c)),
                (None, None) => None,
            };
            let code = cmd_replay(
                &file,
                (against, target.as_deref()),
                serve,
                (volatile, volatile_key),
                timeout_ms,
            )
            .await;
            // Exit at once: a pending read of stdin (--serve) must not hold the process open.
            let _ = std::io::stdout().flush();
            std::process::exit(code)
        }
    }
}

/// `parity replay`: exit 0 without differences, 1 with, 2 for a bad transcript or pointer, 3
/// when the target could not start or took no message.
async fn cmd_replay(
    file: &std::path::Path,
    (against, target_file): (Option<(&str, String)>, Option<&std::path::Path>),
    serve: bool,
    (volatile, mut volatile_keys): (Vec<String>, Vec<String>),
    timeout_ms: u64,
) -> i32 {
    let t = match crate::protocol::transcript::load(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if let Some(bad) = volatile
        .iter()
        .find(|p| !p.is_empty() && !p.starts_with('/'))
    {
        eprintln!("error: --volatile {bad}: a JSON pointer starts with `/`");
        return EXIT_USAGE;
    }
    let mut against = against;
    if let Some(path) = target_file {
        let target = match crate::engine::target::load(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        };
        volatile_keys.extend(crate::protocol::replay::volatile_names(
            &target.equivalence.volatile,
        ));
        if against.is_none() {
            against = if t.header.protocol == "acp" {
                target.acp.map(|a| ("acp", a.command))
            } else {
                target.mcp.map(|m| ("mcp", m.command))
            };
        }
    }
    let norm = crate::protocol::replay::Normalizer::new(volatile, volatile_keys);
    if serve {
        return crate::protocol::replay::serve(&t, norm).await;
    }
    let Some((proto, cmd)) = against else {
        eprintln!(
            "error: the target has no {} surface: give --mcp CMD or --acp CMD",
            t.header.protocol
        );
        return EXIT_USAGE;
    };
    if t.header.protocol != "unknown" && t.header.protocol != proto {
        eprintln!(
            "warning: the transcript records {} but --{proto} was given",
            t.header.protocol
        );
    }
    let spec = match PeerSpec::from_command_line(&cmd) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: --{proto}: {e}");
            return EXIT_USAGE;
        }
    };
    let mut peer = match crate::transport::peer::Peer::spawn(&spec) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    // The live exchange is compared whole: the log gets room for twice the recording.
    peer.set_log_budget(crate::transport::framelog::Budget::at_least(
        t.frame_bytes().saturating_mul(2),
    ));
    let driven =
        crate::protocol::replay::drive(&t, &mut peer, std::time::Duration::from_millis(timeout_ms))
            .await;
    peer.shutdown(crate::transport::peer::ShutdownGrace::default())
        .await;
    let (dropped, dropped_bytes) = peer.log_dropped();
    if dropped > 0 {
        eprintln!(
            "error: replay {}: the live exchange was not compared: the target sent more than the frame log keeps (twice the recording), and {dropped} frames ({dropped_bytes} bytes) were left out",
            t.source
        );
        return EXIT_COULD_NOT_RUN;
    }
    let live = crate::protocol::replay::Exchange::of_wire(&peer.events());
    let recorded = crate::protocol::replay::Exchange::of_transcript(&t);
    let diffs = crate::protocol::replay::compare(&recorded, &live, &norm);
    let red = crate::engine::redact::text;
    print!(
        "{}",
        red(&crate::protocol::replay::render(&t.source, &diffs))
    );
    for n in &driven.notes {
        println!("note: {}", red(n));
    }
    println!(
        "replay {} against `{}`: {} client message(s) sent, {} response(s) received; {} difference(s)",
        t.source,
        red(&spec.display().to_string()),
        driven.sent,
        driven.answered,
        diffs.len()
    );
    let unanswered = crate::protocol::replay::unanswered_in_recording(&recorded);
    if unanswered > 0 {
        println!(
            "note: {unanswered} recorded request(s) have no recorded response (the recording ended first); the target's responses to them were not compared"
        );
    }
    let wants = |d| recorded.iter().any(|m| m.dir == d);
    let got_nothing = !live
        .iter()
        .any(|m| m.dir == crate::protocol::transcript::Direction::S2c);
    if (driven.sent == 0 && wants(crate::protocol::transcript::Direction::C2s))
        || (got_nothing && wants(crate::protocol::transcript::Direction::S2c))
    {
        eprintln!(
            "error: the target took no message or sent nothing back: the replay could not run"
        );
        return EXIT_COULD_NOT_RUN;
    }
    i32::from(!diffs.is_empty())
}

/// On SIGINT or SIGTERM, ends every running peer (they live in their own process groups, so
/// a Ctrl-C or a cancelled CI job would not reach them) and exits 130 or 143.
fn watch_signals() {
    use tokio::signal::unix::{signal, SignalKind};
    for (kind, code) in [
        (SignalKind::interrupt(), 130),
        (SignalKind::terminate(), 143),
    ] {
        let Ok(mut sig) = signal(kind) else { continue };
        tokio::spawn(async move {
            if sig.recv().await.is_some() {
                crate::transport::peer::kill_all_peers();
                eprintln!("parity: interrupted; every peer was stopped");
                std::process::exit(code);
            }
        });
    }
}

/// The target of a run: the `--target` file, else the `--mcp`/`--acp` commands, else the
/// bundled reference (both surfaces); `--mcp`, `--acp` and `--tool-method` override the file.
fn run_target(args: &RunArgs) -> Result<crate::engine::target::Target, String> {
    use crate::engine::target::{AcpSurface, McpSurface, Target};
    let mut target = match &args.target {
        Some(path) => crate::engine::target::load(path).map_err(|e| e.to_string())?,
        None if args.mcp.is_none() && args.acp.is_none() && args.url.is_none() => {
            crate::engine::target::reference()
        }
        None => Target {
            name: [
                args.mcp.as_deref(),
                args.acp.as_deref(),
                args.url.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" + "),
            ..Target::default()
        },
    };
    if let Some(cmd) = &args.mcp {
        PeerSpec::from_command_line(cmd).map_err(|e| format!("--mcp: {e}"))?;
        target.mcp = Some(McpSurface {
            command: cmd.clone(),
            eras: args.era.unwrap_or(EraSel::All),
            reference: false,
            rules: target.mcp.map(|m| m.rules).unwrap_or_default(),
        });
    }
    if let Some(cmd) = &args.acp {
        PeerSpec::from_command_line(cmd).map_err(|e| format!("--acp: {e}"))?;
        let old = target.acp.take();
        target.acp = Some(AcpSurface {
            command: cmd.clone(),
            tool_method: old.as_ref().and_then(|a| a.tool_method.clone()),
            cancel_prompt: old.as_ref().and_then(|a| a.cancel_prompt.clone()),
            params: old.as_ref().and_then(|a| a.params.clone()),
            rules: old.map(|a| a.rules).unwrap_or_default(),
        });
    }
    if let Some(url) = &args.url {
        if !url.starts_with("http://") {
            return Err(format!(
                "--url: {url:?} is not an http:// URL (parity talks to loopback endpoints without TLS)"
            ));
        }
        // The file's result declarations stay with its HTTP surface, as `--mcp` keeps them.
        let rules = target.http.take().map(|h| h.rules).unwrap_or_default();
        target.http = Some(crate::engine::target::HttpSurface {
            source: crate::engine::http_surface::FacadeSource::Url(url.clone()),
            rules,
        });
        target.reference_facade = None;
    }
    let bundled = args.target.is_none() && args.mcp.is_none() && args.acp.is_none();
    if let Some(which) = &args.call_tools {
        target.calls.read_only = which == "read-only";
    }
    if let Some(m) = &args.tool_method {
        match target.acp.as_mut() {
            Some(a) => {
                a.tool_method = Some(m.clone());
                if bundled {
                    // The bundled agent serves the method it is asked to check.
                    a.command = format!(
                        "{} --tool-method {}",
                        a.command,
                        crate::engine::target::shell_quote(m)
                    );
                }
            }
            None => {
                return Err("--tool-method needs an ACP surface (--acp or a target file)".into())
            }
        }
    }
    if let Some(p) = &args.cancel_prompt {
        match target.acp.as_mut() {
            Some(a) => a.cancel_prompt = Some(p.clone()),
            None => {
                return Err("--cancel-prompt needs an ACP surface (--acp or a target file)".into())
            }
        }
    }
    for p in &args.volatile {
        if !crate::engine::outcome::valid_pointer(p) {
            return Err(format!(
                "--volatile: {p:?} is not a JSON pointer (RFC 6901: empty, or starting with `/`)"
            ));
        }
        target.equivalence.volatile.push(p.clone());
    }
    Ok(target)
}

/// The profiles a run with no `--profile` and no `profiles` key runs on `target`, in the
/// registry's order (parity's own: `mcp` with an MCP surface, `acp` with an ACP surface,
/// `equivalence` with both, `mcp-http` with an HTTP surface (or the bundled facade), `facade`
/// with `[facade]` declarations (or the bundled facade), `hygiene` with `[hygiene]`,
/// `dispatcher` with `[dispatcher]` and a stdio surface, `guard` with `[guard]`).
pub fn allowed_profiles(
    registry: &crate::engine::profile::Registry,
    target: &crate::engine::target::Target,
) -> Vec<String> {
    registry.defaults_for(target)
}

/// The profiles `parity run` with no target, surface or `--profile` runs on the bundled
/// reference ([`allowed_profiles`] of `crate::engine::target::reference`); `run --help` and the docs
/// name these.
pub fn default_run_profiles() -> Vec<String> {
    allowed_profiles(
        &crate::profiles::builtin(),
        &crate::engine::target::reference(),
    )
}

/// The profiles to run: `--profile`, else the target's, else [`allowed_profiles`].
///
/// Errors: a profile the registry does not hold, or one the target cannot run (why, naming the
/// flag or table that would supply it).
fn run_profiles(
    registry: &crate::engine::profile::Registry,
    args: &RunArgs,
    target: &crate::engine::target::Target,
) -> Result<Vec<String>, String> {
    if let Some(e) = target.unknown_profile(&registry.names()) {
        return Err(e.to_string());
    }
    let mut profiles = if !args.profile.is_empty() {
        args.profile.clone()
    } else if !target.profiles.is_empty() {
        target.profiles.clone()
    } else {
        allowed_profiles(registry, target)
    };
    profiles.dedup();
    // A target that declares only `[guard]`, run by a parity built without the feature.
    if profiles.is_empty()
        && target.guard.is_some()
        && registry.get("guard").is_none()
        && cfg!(not(feature = "guard"))
    {
        return Err(
            "the target declares only [guard], and this parity was built without the `guard` feature (docs/library.md)"
                .to_string(),
        );
    }
    // A target whose only surfaces are HTTP ones (`[surfaces.http]`, `[facade]`), run by a
    // parity built without the `http` feature.
    #[cfg(not(feature = "http"))]
    if profiles.is_empty() && (target.http.is_some() || target.facade.is_some()) {
        return Err(format!(
            "the target's [surfaces.http] and [facade] need MCP over HTTP: {}",
            crate::transport::http_bridge::NO_HTTP
        ));
    }
    for p in &profiles {
        match registry.get(p) {
            Some(profile) => profile.ready(target)?,
            None => {
                return Err(format!(
                    "unknown profile {p} (known: {})",
                    registry.names().join(", ")
                ))
            }
        }
    }
    Ok(profiles)
}

/// A run that happened: the redacted report and what the reporters need to print it.
struct Finished {
    /// The run's report, redacted (DESIGN.md §Redaction), the baseline applied.
    report: crate::engine::run::RunReport,
    /// Why profiles could not run (redacted); non-empty means exit 3.
    could_not_run: Vec<String>,
    /// The profiles that ran.
    profiles: Vec<String>,
    /// `--partition`, when given.
    partition: Option<crate::engine::select::Partition>,
    /// No case was selected and no shard took any.
    empty_selection: bool,
    /// The baseline file applied, when one was.
    baseline: Option<PathBuf>,
    /// The check whose failure stopped the run under `--fail-fast`, when one did.
    stopped_by: Option<String>,
}

/// Plans and runs `parity run`'s profiles from `args` with `registry`, up to the finished,
/// redacted report (the reporters print it: [`cmd_run`]).
///
/// Errors: a usage or configuration error (a bad flag, target, scenario or baseline), as the
/// sentence `parity run` prints after `error: ` before it exits 2.
async fn execute(
    args: &RunArgs,
    registry: &crate::engine::profile::Registry,
) -> Result<Finished, String> {
    #[cfg(not(feature = "http"))]
    if let Some(url) = &args.url {
        return Err(format!(
            "--url {url}: {}",
            crate::transport::http_bridge::NO_HTTP
        ));
    }
    let target = match run_target(args) {
        Ok(t) => t,
        Err(e) => {
            return Err(e.to_string());
        }
    };
    let profiles = match run_profiles(registry, args, &target) {
        Ok(p) => p,
        Err(e) => {
            return Err(e.to_string());
        }
    };
    let eff = Effective::new(args, &target);
    {
        let argv: Vec<String> = [
            target.mcp.as_ref().map(|m| m.command.as_str()),
            target.acp.as_ref().map(|a| a.command.as_str()),
        ]
        .into_iter()
        .flatten()
        .flat_map(|c| crate::transport::peer::split_words(c).unwrap_or_default())
        .collect();
        let env = target
            .hygiene
            .as_ref()
            .map(|h| h.env.clone())
            .unwrap_or_default();
        let user: Vec<String> = args.redact.iter().chain(&target.redact).cloned().collect();
        if let Err(e) = crate::engine::redact::install_from(&env, &argv, &user) {
            return Err(e.to_string());
        }
    }
    if args.accept && eff.snapshots.is_none() {
        return Err("--accept needs a snapshot directory (--snapshots DIR, or `snapshots` under the target's [run])".to_string());
    }
    let slow_call = match &args.slow_call {
        Some(sc) => match parse_slow_call(sc) {
            Ok(c) => Some(c),
            Err(e) => {
                return Err(format!("--slow-call: {e}"));
            }
        },
        None => None,
    };
    for (flag, path) in [
        ("--json", &args.json),
        ("--junit", &args.junit),
        ("--html", &args.html),
    ] {
        let Some(path) = path else { continue };
        if path.is_dir() {
            return Err(format!(
                "{flag}: {} is a directory, not a file",
                path.display()
            ));
        }
        // A missing directory is created now, so a bad path stops the run before it starts.
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(d) = dir {
            if let Err(e) = std::fs::create_dir_all(d) {
                return Err(format!(
                    "{flag}: cannot create the directory {} of {}: {e}",
                    d.display(),
                    path.display()
                ));
            }
        }
    }
    if let Some(e) = same_file(&[
        ("--json", args.json.as_deref()),
        ("--junit", args.junit.as_deref()),
        ("--html", args.html.as_deref()),
        ("--baseline", eff.baseline.as_deref()),
    ]) {
        return Err(e.to_string());
    }
    let partition = match args
        .partition
        .as_deref()
        .map(crate::engine::select::Partition::parse)
    {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            return Err(e.to_string());
        }
    };
    if args.line_cap == 0 {
        return Err("--line-cap must be at least 1 byte".to_string());
    }
    if !(eff.timeout_multiplier > 0.0 && eff.timeout_multiplier.is_finite()) {
        return Err("--timeout-multiplier must be a positive number".to_string());
    }
    let mut timing = Timing::scaled(eff.timeout_multiplier);
    let scale =
        |ms: u64| std::time::Duration::from_millis((ms as f64 * eff.timeout_multiplier) as u64);
    if let Some(ms) = target.message_ms {
        timing.message = scale(ms);
    }
    if let Some(ms) = target.case_ms {
        timing.case = scale(ms);
    }
    if let Some(ms) = target.silence_ms {
        timing.silence = scale(ms);
    }
    if let Some(ms) = target.startup_ms {
        timing.startup = scale(ms);
    }
    // --- scenarios (crate::engine::scenario): shipped + --scenarios, malformed → exit 2 ---
    let scenarios = match crate::engine::scenario::load_all(&eff.scenarios, &registry.check_ids()) {
        Ok(s) => s,
        Err(e) => {
            return Err(e.to_string());
        }
    };
    let selection = match crate::engine::select::Selection::new(
        &args.filter,
        &args.skip,
        partition.clone(),
        &crate::engine::select::units(registry, &scenarios),
    ) {
        Ok(s) => s,
        Err(e) => {
            return Err(e.to_string());
        }
    };
    let baseline = match &eff.baseline {
        None => None,
        Some(path) => {
            let known =
                |check: &str| crate::engine::select::known_check(registry, check, &scenarios);
            match crate::reports::baseline::load(
                path,
                &crate::reports::baseline::Known {
                    check: &known,
                    bindings: &registry.bindings(),
                },
            ) {
                Ok(b) => Some(std::sync::Arc::new(b)),
                Err(e) => {
                    return Err(e.to_string());
                }
            }
        }
    };
    let snapshots = match &eff.snapshots {
        Some(dir) => match crate::features::snapshot::Store::new(
            dir,
            args.accept,
            crate::protocol::replay::volatile_names(&target.equivalence.volatile),
        ) {
            Ok(s) => Some(std::sync::Arc::new(s)),
            Err(e) => {
                return Err(e.to_string());
            }
        },
        None => None,
    };
    let progress = crate::reports::report::Progress::new(args.quiet);
    let control = crate::engine::run::RunControl {
        scenario_listener: snapshots
            .clone()
            .map(|s| s as std::sync::Arc<dyn crate::engine::run::ScenarioListener>),
        retries: args.retries,
        fail_fast: args.fail_fast,
        expected: baseline.clone().map(|b| {
            Box::new(move |id: &str| b.lists(id).is_some()) as crate::engine::run::ExpectedFn
        }),
        progress: Some(progress.sink()),
        ..Default::default()
    };
    let mut opts = RunOptions {
        eras: args.era.unwrap_or(EraSel::All),
        selection: std::sync::Arc::new(selection),
        jobs: usize::try_from(eff.jobs).unwrap_or(usize::MAX),
        timing,
        control: std::sync::Arc::new(control),
    };
    let is_reference =
        args.target.is_none() && args.mcp.is_none() && args.acp.is_none() && args.url.is_none();
    let started = std::time::Instant::now();
    let mut report = crate::engine::run::RunReport {
        target: target.name.clone(),
        started_at: Some(std::time::SystemTime::now()),
        ..crate::engine::run::RunReport::default()
    };
    let mut could_not_run: Vec<String> = Vec::new();
    for profile in &profiles {
        if let Some(by) = opts.control.stopped_by() {
            report.notes.push(format!(
                "profile {profile} not started: --fail-fast stopped the run after {by} failed"
            ));
            continue;
        }
        tracing::info!(profile = %profile, target = %target.name, "profile starting");
        let Some(p) = registry.get(profile) else {
            continue;
        };
        let req = crate::engine::profile::RunRequest {
            target: &target,
            opts: &opts,
            scenarios: &scenarios,
            era: args.era,
            line_cap: args.line_cap,
            slow_call: slow_call.clone(),
            is_reference,
            seed: args.seed,
            cases: args.cases,
        };
        match p.run(&req).await {
            Ok(r) => {
                could_not_run.extend(r.could_not_run);
                if let Some(eras) = r.eras {
                    opts.eras = eras;
                }
                let mut ran = r.report;
                ran.ran_by(p.name());
                merge(&mut report, ran);
            }
            Err(e) => {
                return Err(e.to_string());
            }
        }
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    report.partition = partition
        .as_ref()
        .map(crate::engine::select::Partition::describe);
    let empty_selection = report.cases.is_empty() && opts.selection.sharded_out() == 0;
    report.could_not_run = could_not_run.clone();
    if empty_selection && could_not_run.is_empty() {
        report.could_not_run.push(format!(
            "no case matched the selection (--filter: {}; --skip: {}; profiles: {})",
            show_list(&args.filter),
            show_list(&args.skip),
            profiles.join(", ")
        ));
    }
    report.notes.extend(report.could_not_run.clone());
    if let Some(store) = &snapshots {
        let whole_run = partition.is_none()
            && args.filter.is_empty()
            && args.skip.is_empty()
            && opts.eras == EraSel::All
            && opts.control.stopped_by().is_none();
        let gone = store.unreferenced();
        if let Some(line) = store.summary() {
            eprintln!("{line}");
        }
        if whole_run && !gone.is_empty() {
            let names: Vec<String> = gone.iter().map(|p| p.display().to_string()).collect();
            let note = format!(
                "{} snapshot(s) that no scenario produced any more (delete them if the scenario is gone): {}",
                gone.len(),
                names.join(", ")
            );
            eprintln!("note: {note}");
            report.notes.push(note);
        }
    }
    if let Some(b) = &baseline {
        // Narrowed runs see only part of what a wide entry covers.
        let whole_run = partition.is_none()
            && args.filter.is_empty()
            && args.skip.is_empty()
            && opts.eras == EraSel::All;
        b.apply(&mut report, whole_run);
    }
    // Redacted once, here: every reporter below prints from the redacted report.
    crate::engine::redact::report(&mut report);
    let could_not_run: Vec<String> = could_not_run
        .iter()
        .map(|c| crate::engine::redact::text(c))
        .collect();
    progress.finish();
    Ok(Finished {
        report,
        could_not_run,
        profiles,
        partition,
        empty_selection,
        baseline: eff.baseline.clone(),
        stopped_by: opts.control.stopped_by(),
    })
}

/// `parity run`: runs ([`execute`]), then prints the console report and writes `--json`,
/// `--junit` and `--html`; returns the exit code.
async fn cmd_run(args: RunArgs, registry: &crate::engine::profile::Registry) -> i32 {
    let Finished {
        report,
        could_not_run,
        profiles,
        partition,
        empty_selection,
        baseline,
        stopped_by,
    } = match execute(&args, registry).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut out = std::io::stdout().lock();
    let style = if args.quiet {
        crate::reports::report::Style::Quiet
    } else if args.verbose {
        crate::reports::report::Style::Verbose
    } else {
        crate::reports::report::Style::Normal
    };
    let _ = crate::reports::report::print_console_colored(
        &report,
        &mut out,
        style,
        args.color.for_stdout(),
    );
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        let _ = crate::reports::report::print_github_annotations(
            &report,
            baseline.as_deref(),
            &mut out,
        );
    }
    if let Some(by) = &stopped_by {
        let not_started = report
            .cases
            .iter()
            .filter(|c| {
                c.verdict == crate::engine::check::Verdict::NotRun
                    && c.message.contains("--fail-fast")
            })
            .count();
        let _ = writeln!(
            out,
            "--fail-fast: stopped after {by}; {not_started} case(s) not started (reported not-run)"
        );
    }
    drop(out);
    if let Err(e) = write_report_files(&args, &report, baseline.as_deref()) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    if !could_not_run.is_empty() {
        for c in &could_not_run {
            eprintln!("error: {c}");
        }
        return EXIT_COULD_NOT_RUN;
    }
    if report.cases.is_empty() && partition.is_some() && !empty_selection {
        eprintln!(
            "parity: shard {} selects no case (nothing to run here; the other shards run the rest)",
            report.partition.as_deref().unwrap_or("")
        );
    } else if report.cases.is_empty() {
        eprintln!(
            "error: no case matched the selection (--filter: {}; --skip: {}; profiles: {}); `parity list` shows every check id",
            show_list(&args.filter),
            show_list(&args.skip),
            profiles.join(", ")
        );
    }
    report.exit_code()
}

/// Writes the report files `parity run` was asked for: `--json`, `--junit` and `--html` (each
/// optional), from the redacted `report` and the `baseline` file it was judged against.
///
/// Errors: the first file that could not be written, as "failed to write PATH: REASON".
fn write_report_files(
    args: &RunArgs,
    report: &crate::engine::run::RunReport,
    baseline: Option<&Path>,
) -> Result<(), String> {
    let failed =
        |path: &Path, e: &dyn std::fmt::Display| format!("failed to write {}: {e}", path.display());
    if let Some(path) = &args.json {
        crate::reports::report::write_json(report, baseline, path).map_err(|e| failed(path, &e))?;
    }
    if let Some(path) = &args.junit {
        crate::reports::junit::write(report, path).map_err(|e| failed(path, &e))?;
    }
    if let Some(path) = &args.html {
        let json_value = crate::reports::report::to_json(report, baseline);
        crate::reports::html::write(std::slice::from_ref(&json_value), path)
            .map_err(|e| failed(path, &e))?;
    }
    Ok(())
}

/// A list of flag values for messages, `none` when empty.
fn show_list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// Appends one profile's report to the run's.
fn merge(into: &mut crate::engine::run::RunReport, r: crate::engine::run::RunReport) {
    into.eras.extend(r.eras);
    into.startup_ms.extend(r.startup_ms);
    into.notes.extend(r.notes);
    into.cases.extend(r.cases);
    into.profiles.extend(r.profiles);
    into.seed = into.seed.or(r.seed);
}

/// The first two flags naming the same file (so one output would overwrite another, or an
/// input), as an error message; `None` when all differ. Paths are compared as given and, when
/// they exist, canonicalized.
fn same_file(paths: &[(&str, Option<&std::path::Path>)]) -> Option<String> {
    let key = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let given: Vec<(&str, &std::path::Path)> = paths
        .iter()
        .filter_map(|(f, p)| p.map(|p| (*f, p)))
        .collect();
    for (i, (fa, a)) in given.iter().enumerate() {
        for (fb, b) in given.iter().skip(i + 1) {
            if a == b || key(a) == key(b) {
                return Some(format!(
                    "{fa} and {fb} name the same file ({}): one would overwrite the other",
                    a.display()
                ));
            }
        }
    }
    None
}

/// Parses `{"name": "...", "arguments": {...}, "ms": N}` (`ms` defaults to 1000).
fn parse_slow_call(s: &str) -> Result<SlowCall, String> {
    let v: Value = serde_json::from_str(s).map_err(|e| format!("not JSON: {e}"))?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or("field `name` (string) is required")?;
    let args = v.get("arguments").cloned().unwrap_or(json!({}));
    if !args.is_object() {
        return Err("field `arguments` must be an object".into());
    }
    let ms = match v.get("ms") {
        None => 1000,
        Some(m) => m
            .as_u64()
            .ok_or("field `ms` must be a non-negative integer (milliseconds)")?,
    };
    Ok(SlowCall {
        name: name.to_string(),
        arguments: args,
        ms,
    })
}
