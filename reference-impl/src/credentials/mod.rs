//! Credential-file hygiene: the reference side of seed rules 38–56
//! (`seed-rules.md` §5 "Credential files" and §6 "Child environment hygiene"; fault classes
//! B19 and B20).
//!
//! A host that starts agents, bridges or terminals must not hand them a bearer token in an
//! environment variable (it reaches every descendant, logs and crash dumps); it hands them the
//! path of a private file holding the `Authorization` header value instead. This module holds
//! the four parts of the reference host:
//!
//! - [`store`]: [`CredentialStore`], one private directory (0700) and file (0600) per key,
//!   rotated by an exclusively created `<path>.tmp` and a rename (rules 38–47);
//! - [`env`](mod@env): [`ChildEnvBuilder`], which builds a child's environment without the legacy
//!   raw-credential variables and with the current file and endpoint variables (rules 48–52);
//! - [`launch`]: `parity reference launch`, a host that writes the header through the store,
//!   starts one child with the file path in its environment, rotates on a stdin control line and
//!   stops the child and removes every file on stdin EOF, SIGTERM or SIGINT;
//! - [`bridge`]: `parity reference bridge`, a stdio MCP to Streamable HTTP bridge that reads the
//!   header from the file before every request, so it follows a rotation (rules 53–56).
//!
//! The command lines, control lines, exit codes and the decisions the seed leaves open are in
//! `docs/credentials.md`.

#[cfg(feature = "http")]
pub mod bridge;
pub mod env;
pub mod launch;
pub mod store;

pub use env::ChildEnvBuilder;
pub use store::CredentialStore;

/// The variable a child reads the credential file's path from (the post-PR T3 fixture's
/// `T3_ACP_MCP_AUTHORIZATION_FILE`, under parity's prefix; rule 48).
pub const AUTHORIZATION_FILE_VAR: &str = "PARITY_MCP_AUTHORIZATION_FILE";

/// The variable a child reads the MCP endpoint URL from (rule 52: endpoints travel through the
/// environment, never argv).
pub const ENDPOINT_VAR: &str = "PARITY_MCP_ENDPOINT";

/// The variable `parity reference launch` takes the raw `Authorization` header value from when
/// `--bearer-stdin` is not given. It is one of the legacy raw-credential variables: a child never
/// receives it.
pub const AUTHORIZATION_VAR: &str = "PARITY_MCP_AUTHORIZATION";

/// The store key the launcher writes the MCP header under.
pub const MCP_KEY: &str = "mcp";

/// The file name inside each key's directory.
pub const AUTHORIZATION_FILE_NAME: &str = "authorization";

/// The prefix of each key's directory name (`parity-cred-XXXXXX` under the system temp
/// directory).
pub const DIR_PREFIX: &str = "parity-cred-";
