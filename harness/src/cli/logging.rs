//! Diagnostics through `tracing`, to stderr, filtered by `RUST_LOG` (default: warnings), each
//! line redacted by the process's redactor ([`crate::engine::redact`]).

/// Installs the stderr subscriber once; later calls do nothing.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| crate::engine::redact::LogWriter)
        .try_init();
}
