//! The exit codes every `parity` command shares (DESIGN.md §Command line): 0 every result as
//! expected; 1 a check failed or timed out; 2 usage or configuration error; 3 could not run (the
//! target did not start, or no check executed).

/// Exit code: usage or configuration error (a bad flag, an unreadable or malformed file).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: could not run (the target did not start, or no check executed).
pub const EXIT_COULD_NOT_RUN: i32 = 3;
