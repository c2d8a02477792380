//! `parity hygiene` (DESIGN.md §Host hygiene): its flags, and the command that runs the hygiene
//! profile on one host and prints its report. The probe itself is `profiles::hygiene`.

use crate::engine::check::Timing;
use crate::engine::run::RunOptions;
use crate::profiles::hygiene::{reference_decl, run_hygiene, HygieneDecl, Overrides};
use std::io::Write;
use std::path::PathBuf;

/// Options of `parity hygiene`.
#[derive(clap::Args, Debug)]
pub struct HygieneArgs {
    /// A target file whose `[hygiene]` declares the host (docs/target.md); `-- CMD` overrides
    /// its command.
    #[arg(long, value_name = "FILE")]
    target: Option<PathBuf>,
    /// Write the JSON report here (schema: docs/report.schema.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write a self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Follow the host with a child subreaper and /proc polling instead of ptrace.
    #[arg(long)]
    no_ptrace: bool,
    /// Polling interval of the /proc fallback, in milliseconds (default 5).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=1000))]
    poll_ms: Option<u64>,
    /// Keep only cases whose id matches one of these globs.
    #[arg(long)]
    filter: Vec<String>,
    /// Drop cases whose id matches one of these globs.
    #[arg(long)]
    skip: Vec<String>,
    /// Multiply every deadline by this factor.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    timeout_multiplier: f64,
    /// Print only the cases that did not pass and the summary.
    #[arg(long, short, conflicts_with = "verbose")]
    quiet: bool,
    /// Print the evidence of every case that did not pass.
    #[arg(long, short)]
    verbose: bool,
    /// A value (or a regular expression) redacted from every report, besides the values of
    /// secret-named environment variables and the probe's canaries; repeatable
    /// (docs/redaction.md).
    #[arg(long, value_name = "VALUE")]
    redact: Vec<String>,
    /// The host command and its arguments, after `--` (default: the target's, else the bundled
    /// `parity reference launch -- parity reference bridge`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

/// `parity hygiene`: exit 0 all as expected, 1 a check failed, 2 usage or configuration
/// error, 3 the host could not be observed (or no check executed).
pub async fn cmd(args: HygieneArgs) -> i32 {
    use crate::base::exit::{EXIT_COULD_NOT_RUN, EXIT_USAGE};
    if !(args.timeout_multiplier > 0.0 && args.timeout_multiplier.is_finite()) {
        eprintln!("error: --timeout-multiplier must be a positive number");
        return EXIT_USAGE;
    }
    for (flag, path) in [
        ("--json", &args.json),
        ("--junit", &args.junit),
        ("--html", &args.html),
    ] {
        if let Some(p) = path.as_deref().filter(|p| p.is_dir()) {
            eprintln!("error: {flag}: {} is a directory, not a file", p.display());
            return EXIT_USAGE;
        }
    }
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    let mut user = args.redact.clone();
    let (name, decl) = match &args.target {
        Some(path) => match crate::engine::target::load(path) {
            Ok(t) => match t.hygiene {
                Some(d) => {
                    user.extend(t.redact.iter().cloned());
                    (t.name, d)
                }
                None => {
                    eprintln!(
                        "error: {} has no [hygiene] table (docs/target.md)",
                        path.display()
                    );
                    return EXIT_USAGE;
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        },
        None if args.command.is_empty() => (
            "parity reference launch -- parity reference bridge".to_owned(),
            reference_decl(&exe),
        ),
        None => (String::new(), HygieneDecl::default()),
    };
    let name = if args.command.is_empty() {
        name
    } else {
        args.command.join(" ")
    };
    let timing = Timing::scaled(args.timeout_multiplier);
    let opts = match RunOptions::new(
        crate::engine::run::EraSel::All,
        &args.filter,
        &args.skip,
        1,
        timing,
    ) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let over = Overrides {
        command: args.command.clone(),
        no_ptrace: args.no_ptrace,
        poll_ms: args.poll_ms,
    };
    if over.command.is_empty() && decl.command.is_none() {
        eprintln!("error: no host command: give `-- CMD…` or `command` in [hygiene]");
        return EXIT_USAGE;
    }
    if let Err(e) = crate::engine::redact::install_from(&decl.env, &over.command, &user) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let mut report = run_hygiene(&name, &decl, &over, &opts).await;
    report.ran_by(crate::engine::profile::Profile::name(
        &crate::profiles::hygiene::HygieneProfile,
    ));
    crate::engine::redact::report(&mut report);
    if report.cases.is_empty() && report.could_not_run.is_empty() {
        eprintln!("error: no case matched the selection; `parity list` shows every check id");
        return EXIT_COULD_NOT_RUN;
    }
    let style = if args.quiet {
        crate::reports::report::Style::Quiet
    } else if args.verbose {
        crate::reports::report::Style::Verbose
    } else {
        crate::reports::report::Style::Normal
    };
    {
        let mut out = std::io::stdout().lock();
        for n in report.notes.iter().filter(|n| n.starts_with("hygiene")) {
            let _ = writeln!(out, "{n}");
        }
        let _ = crate::reports::report::print_console(&report, &mut out, style);
    }
    if let Some(path) = &args.json {
        if let Err(e) = crate::reports::report::write_json(&report, None, path) {
            eprintln!("error: failed to write {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    if let Some(path) = &args.junit {
        if let Err(e) = crate::reports::junit::write(&report, path) {
            eprintln!("error: failed to write {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    if let Some(path) = &args.html {
        let json = crate::reports::report::to_json(&report, None);
        if let Err(e) = crate::reports::html::write(std::slice::from_ref(&json), path) {
            eprintln!("error: failed to write {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    for c in &report.could_not_run {
        eprintln!("error: {c}");
    }
    report.exit_code()
}
