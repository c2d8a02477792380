//! The `parity` binary: see [`parity_harness::cli`].

use std::io::Write;

fn main() {
    parity_harness::cli::logging::init();
    let code = parity_harness::cli::main();
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // Exit at once: a peer's pending blocking read must not hold the process open.
    std::process::exit(code);
}
