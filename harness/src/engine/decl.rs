//! Declarations: what a target file says about the surfaces that are not a plain MCP server
//! or ACP agent, for the profiles that drive them: `[facade]`, `[hygiene]`, `[dispatcher]` and
//! `[guard]` (docs/target.md). The formats are the target file's, so they live with it in the
//! engine: [`crate::engine::target`] parses and validates them (errors name file, line and key),
//! and each profile reads its own declaration from the [`crate::engine::target::Target`].
//! The defaults are the bundled reference's conventions.

use serde_json::{json, Value};
use std::path::PathBuf;

// --- [facade] (docs/facade.md) ----------------------------------------------------------------

/// How the catalogue is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogueForm {
    /// `search_capabilities` / `execute_capability` (seed rule 1).
    #[default]
    Meta,
    /// One MCP tool per capability.
    Direct,
}

/// How a facade answers a request whose credentials do not resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BadToken {
    /// The anonymous view, never an error (seed rule 3).
    #[default]
    Anonymous,
    /// HTTP 401 for a bad `Authorization` value (a declared deviation).
    Unauthorized,
}

/// What a second mint for one channel does (seed rule 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Remint {
    /// Both tokens stay valid (profile [later], the reference's).
    #[default]
    Coexist,
    /// The earlier token stops working (profile [1454]).
    Replace,
}

/// How tokens are minted and revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hooks {
    /// parity's admin hook: `POST <base>/mint` with `{"channel":C}` → `{"token":T}`,
    /// `POST <base>/revoke` with `{"token":T}`.
    Admin(String),
    /// Commands: the mint command gets the channel as its last argument and prints the
    /// token; the revoke command gets the token as its last argument. In each word of either
    /// command line, [`HOOK_PLACEHOLDERS`] are filled from the facade's endpoint
    /// ([`fill_endpoint`]).
    Commands {
        /// The mint command line.
        mint: String,
        /// The revoke command line.
        revoke: String,
    },
}

/// The placeholders a hook command may hold: the endpoint URL (the declared `url`, or what
/// the started command printed, or the URL built from the port it printed), its host and
/// its port (80 when the URL gives none).
pub const HOOK_PLACEHOLDERS: [&str; 3] = ["{url}", "{host}", "{port}"];

/// `word` with [`HOOK_PLACEHOLDERS`] filled from the endpoint `url`
/// ([`crate::engine::http_surface::host_and_port`]).
pub fn fill_endpoint(word: &str, url: &str) -> String {
    if !word.contains('{') {
        return word.to_owned();
    }
    let (host, port) = crate::engine::http_surface::host_and_port(url);
    word.replace("{url}", url)
        .replace("{host}", &host)
        .replace("{port}", &port)
}

/// The expected catalogues of the declared topology (published names).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topology {
    /// What an anonymous caller sees.
    pub anonymous: Vec<String>,
    /// What a caller with a live token sees.
    pub session: Vec<String>,
}

/// How many audit lines one source call writes (`[facade.audit] lines`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuditLines {
    /// An entry line before dispatch and an exit line with the error flag after the source
    /// returns (seed rule 33; the reference's), `"entry-exit"`.
    #[default]
    EntryExit,
    /// One line per call, carrying the error flag, `"one"`.
    One,
}

/// Where a member of an audit line sits: a member name of the line's object, or, written
/// with a leading `/`, a JSON pointer into it (`/fields/tool` for a `tracing` JSON line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditField(pub String);

impl AuditField {
    /// The member of `line` this field names, if present.
    pub fn get<'a>(&self, line: &'a Value) -> Option<&'a Value> {
        if self.0.starts_with('/') {
            line.pointer(&self.0)
        } else {
            line.get(&self.0)
        }
    }

    /// The field as written, for messages (`args_sha256`, `/fields/tool`).
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl From<&str> for AuditField {
    fn from(s: &str) -> Self {
        AuditField(s.to_owned())
    }
}

/// The shape of the facade's audit lines (`[facade.audit]`, docs/facade.md): the default is
/// the reference's, seed rules 33–35 as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditShape {
    /// Entry and exit lines, or one line per call.
    pub lines: AuditLines,
    /// The provider label (default `provider`).
    pub provider: AuditField,
    /// The bare tool name (default `tool`).
    pub tool: AuditField,
    /// The caller's channel, as the facade's lines find a case's own (default `channel`).
    pub channel: AuditField,
    /// The lowercase hex SHA-256 of the compact arguments (default `args_sha256`).
    pub hash: AuditField,
    /// The error flag, a boolean on exit lines (or on the one line) (default `is_error`).
    pub is_error: AuditField,
    /// What marks an entry line, `(field, value)`: a line whose field holds this string is an
    /// entry line and every other line of the channel an exit line. `None` (the default):
    /// a line without the error flag is an entry line. Only with [`AuditLines::EntryExit`].
    pub entry: Option<(AuditField, String)>,
}

impl Default for AuditShape {
    /// The reference's lines (seed rules 33–35): entry and exit, `provider`, `tool`,
    /// `channel`, `args_sha256`, `is_error` on the exit line.
    fn default() -> Self {
        AuditShape {
            lines: AuditLines::EntryExit,
            provider: "provider".into(),
            tool: "tool".into(),
            channel: "channel".into(),
            hash: "args_sha256".into(),
            is_error: "is_error".into(),
            entry: None,
        }
    }
}

impl AuditShape {
    /// Whether `line` is an entry line (always `false` with one line per call).
    pub fn is_entry(&self, line: &Value) -> bool {
        match (self.lines, &self.entry) {
            (AuditLines::One, _) => false,
            (AuditLines::EntryExit, Some((field, value))) => {
                field.get(line).and_then(Value::as_str) == Some(value.as_str())
            }
            (AuditLines::EntryExit, None) => self.is_error.get(line).is_none(),
        }
    }

    /// How many lines one call writes: 2 (entry and exit) or 1.
    pub fn lines_per_call(&self) -> usize {
        match self.lines {
            AuditLines::EntryExit => 2,
            AuditLines::One => 1,
        }
    }
}

/// The call `facade.audit-no-plaintext` makes with a canary in a string argument
/// (`canary_argument`, `canary_arguments`).
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    /// The audited tool to call, as published (the session tool unless `canary_argument`
    /// is written `tool.argument`).
    pub tool: String,
    /// Its string argument that gets the canary.
    pub argument: String,
    /// Its other arguments (an object): `canary_arguments`, else `session_arguments` for the
    /// session tool and `{}` for another tool.
    pub arguments: Value,
}

/// What a facade target declares (`[facade]` of the target file, docs/target.md).
#[derive(Debug, Clone, PartialEq)]
pub struct FacadeDecl {
    /// Catalogue form.
    pub catalogue: CatalogueForm,
    /// Mint/revoke hooks.
    pub hooks: Hooks,
    /// Bad-credential behaviour.
    pub bad_token: BadToken,
    /// Re-mint profile.
    pub remint: Remint,
    /// A session-bound tool's published name.
    pub session_tool: String,
    /// Valid arguments for it (an object).
    pub session_arguments: Value,
    /// The tool `facade.preflight-before-dispatch` calls with arguments its schema rejects:
    /// `preflight_tool`, default the session tool.
    pub preflight_tool: String,
    /// Arguments the input schema of `preflight_tool` rejects (an object):
    /// `preflight_invalid_arguments`, or `invalid_arguments` for the session tool.
    pub invalid_arguments: Value,
    /// The call that carries a canary to look for plaintext arguments in the audit log.
    pub canary: Option<Canary>,
    /// The facade's audit log (JSON lines), when it writes one parity can read.
    pub audit_log: Option<PathBuf>,
    /// The shape of its lines.
    pub audit: AuditShape,
    /// Expected catalogues.
    pub topology: Option<Topology>,
}

// --- [hygiene] (docs/hygiene.md) ---------------------------------------------------------------

/// The header template of the reference launcher: `Bearer {token}`.
pub const DEFAULT_HEADER: &str = "Bearer {token}";

/// The variable the reference launcher reads the header from.
pub const DEFAULT_VARIABLE: &str = "PARITY_MCP_AUTHORIZATION";

/// Legacy raw-credential variables planted with the legacy canary (seed rule 49).
pub const DEFAULT_LEGACY: [&str; 3] = [
    "T3_ACP_MCP_AUTHORIZATION",
    "T3_MCP_BEARER_TOKEN",
    "T3_CODE_MCP_AUTHORIZATION",
];

/// The stale file variables of the seed host (t3code's bridge variable and the reference
/// launcher's own), planted by the reference's hygiene target ([`hygiene_reference`]) naming
/// a decoy file that holds the legacy canary. Not a default: another host's parent leaves
/// other variables, so a target names its own in `stale_file_vars` (default none).
pub const REFERENCE_STALE_FILE_VARS: [&str; 2] = [
    "PARITY_MCP_AUTHORIZATION_FILE",
    "T3_ACP_MCP_AUTHORIZATION_FILE",
];

/// The reference launcher's rotation line: `rotate {header}`.
pub const DEFAULT_ROTATION_LINE: &str = "rotate {header}";

/// How the token reaches the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// In this environment variable (the header).
    Env {
        /// The variable.
        variable: String,
    },
    /// As the first stdin line, this template (`{header}`, `{token}`) filled in.
    Stdin {
        /// The line template.
        line: String,
    },
    /// In a file parity writes (0600 in a 0700 directory), named by `variable` in the host's
    /// environment and/or by `{credential_file}` in its command.
    File {
        /// The variable carrying the path, if any.
        variable: Option<String>,
    },
}

/// How a rotation is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// No hook: `hygiene.rotation` is skipped.
    None,
    /// A stdin line, this template filled in with the new header.
    Stdin {
        /// The line template.
        line: String,
    },
    /// parity rewrites the delivered file (atomically), then sends `signal` to the host, if any.
    File {
        /// The signal (`HUP`, `USR1`, …).
        signal: Option<String>,
    },
}

/// What a host declares (`[hygiene]` of the target file, `docs/target.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HygieneDecl {
    /// The host command line (split like a shell); `parity hygiene -- CMD…` overrides it.
    pub command: Option<String>,
    /// The delivered form of the credential: the template, with `{token}`, that parity hands
    /// the host (the environment variable's value, the delivered file's bytes, `{header}` in
    /// the stdin and rotation lines).
    pub header: String,
    /// The stored form: the template, with `{token}`, of what a credential file the host hands
    /// its children must hold (seed rule 39, `hygiene.file.content`, `hygiene.rotation`);
    /// `None` is the same as [`HygieneDecl::header`]. Use [`HygieneDecl::stored_form`].
    pub stored: Option<String>,
    /// The delivery channel.
    pub delivery: Delivery,
    /// Extra variables for the host (e.g. its endpoint).
    pub env: Vec<(String, String)>,
    /// Variables that name credential files in a child's environment besides `*_FILE` ones.
    pub file_vars: Vec<String>,
    /// Legacy raw-credential variables planted with the legacy canary.
    pub legacy: Vec<String>,
    /// Stale file variables planted naming the decoy file (`hygiene.stale-file`); default none.
    pub stale_file_vars: Vec<String>,
    /// The rotation hook.
    pub rotation: Rotation,
    /// The host's working directory (default: a fresh empty one).
    pub cwd: Option<PathBuf>,
    /// The tree counts as settled after this long without a process event, in milliseconds.
    pub settle_ms: u64,
    /// After the host ends, how long its descendants may take to end, in milliseconds.
    pub linger_ms: u64,
    /// Follow the tree with ptrace (false: subreaper plus `/proc` polling).
    pub ptrace: bool,
    /// The polling interval of the fallback, in milliseconds.
    pub poll_ms: u64,
}

impl Default for HygieneDecl {
    /// The reference launcher's conventions: header `Bearer {token}` in
    /// `PARITY_MCP_AUTHORIZATION`, stored as delivered, rotation by the stdin line
    /// `rotate {header}`, the rule-49 legacy variables ([`DEFAULT_LEGACY`]), no stale file
    /// variables, settle 300 ms, linger 1000 ms, ptrace, poll 5 ms.
    fn default() -> Self {
        HygieneDecl {
            command: None,
            header: DEFAULT_HEADER.into(),
            stored: None,
            delivery: Delivery::Env {
                variable: DEFAULT_VARIABLE.into(),
            },
            env: Vec::new(),
            file_vars: Vec::new(),
            legacy: DEFAULT_LEGACY.iter().map(|s| s.to_string()).collect(),
            stale_file_vars: Vec::new(),
            rotation: Rotation::Stdin {
                line: DEFAULT_ROTATION_LINE.into(),
            },
            cwd: None,
            settle_ms: 300,
            linger_ms: 1000,
            ptrace: true,
            poll_ms: crate::transport::proctrack::DEFAULT_POLL.as_millis() as u64,
        }
    }
}

impl HygieneDecl {
    /// The template of what a credential file must hold: [`HygieneDecl::stored`], else the
    /// delivered [`HygieneDecl::header`].
    pub fn stored_form(&self) -> &str {
        self.stored.as_deref().unwrap_or(&self.header)
    }
}

/// The dummy loopback endpoint the bundled reference's bridge is given (nothing listens; the
/// bridge sends no request during the probe).
pub const REFERENCE_ENDPOINT: &str = "http://127.0.0.1:9/mcp";

/// The bundled reference as a hygiene target: `parity reference launch -- parity reference
/// bridge` (without the `http` feature, `… -- parity reference mcp`) with
/// [`REFERENCE_ENDPOINT`], under the default declarations plus the seed host's stale file
/// variables ([`REFERENCE_STALE_FILE_VARS`]), which the launcher replaces with its own.
pub fn hygiene_reference(exe: &str) -> HygieneDecl {
    let q = crate::engine::target::shell_quote(exe);
    // The launched child: the stdio-to-HTTP bridge, or, in a build without the `http` feature
    // (which has no bridge), the reference MCP server over stdio, which the launcher hands the
    // same file and environment.
    let child = if cfg!(feature = "http") {
        "bridge"
    } else {
        "mcp"
    };
    HygieneDecl {
        command: Some(format!("{q} reference launch -- {q} reference {child}")),
        env: vec![("PARITY_MCP_ENDPOINT".into(), REFERENCE_ENDPOINT.into())],
        stale_file_vars: REFERENCE_STALE_FILE_VARS
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..HygieneDecl::default()
    }
}

// --- [dispatcher] (docs/dispatcher.md) ---------------------------------------------------------

/// The default tolerance beyond the budget for the settle, in milliseconds.
pub const DEFAULT_TOLERANCE_MS: u64 = 3_000;

/// The default budget the slow-start configuration declares, in milliseconds.
pub const DEFAULT_BUDGET_MS: u64 = 200;

/// The tool names the target publishes for the four tools the profile calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNames {
    /// The status tool (default `status`).
    pub status: String,
    /// The retry tool (default `retry`).
    pub retry: String,
    /// A read-only tool (default `read_file`).
    pub read_file: String,
    /// A mutating tool (default `write_file`).
    pub write_file: String,
}

impl Default for ToolNames {
    fn default() -> Self {
        ToolNames {
            status: "status".into(),
            retry: "retry".into(),
            read_file: "read_file".into(),
            write_file: "write_file".into(),
        }
    }
}

/// Extra arguments appended to every surface command, per configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Configs {
    /// A start longer than any case (e.g. 30 s) with the declared budget, advisory mode.
    pub slow_start: Vec<String>,
    /// The same slow start in required mode.
    pub required: Vec<String>,
    /// A first start attempt that fails at once (state `error`); the next attempt succeeds.
    pub flaky: Vec<String>,
    /// A backend that starts, then begins stopping on its own (the `stopping` row of the
    /// retry table); that row is skipped without it.
    pub stopping: Option<Vec<String>>,
}

/// What a target declares for the profile (`[dispatcher]`, docs/dispatcher.md).
#[derive(Debug, Clone, PartialEq)]
pub struct DispatcherDecl {
    /// Tool names.
    pub tools: ToolNames,
    /// The two display labels: the active one first, then the one for every other state.
    pub labels: [String; 2],
    /// The startup budget of the slow-start configurations, milliseconds.
    pub budget_ms: u64,
    /// Allowed lateness of the first answer and of the settle beyond the budget, milliseconds.
    pub tolerance_ms: u64,
    /// The reason `status` reports after a budget overrun.
    pub budget_reason: String,
    /// The refusal code of a mutation in required mode while not active.
    pub required_code: String,
    /// Arguments of a read-only call that succeeds in a fresh workspace.
    pub read_arguments: Value,
    /// Arguments of a mutating call that succeeds when allowed.
    pub write_arguments: Value,
    /// Configurations.
    pub configs: Configs,
    /// Pointers into outcomes normalized before the cross-surface comparison.
    pub volatile: Vec<String>,
    /// The bundled reference: the profile writes its policy files and fills `configs`.
    pub reference: bool,
}

impl Default for DispatcherDecl {
    fn default() -> Self {
        DispatcherDecl {
            tools: ToolNames::default(),
            labels: ["active".into(), "disconnected".into()],
            budget_ms: DEFAULT_BUDGET_MS,
            tolerance_ms: DEFAULT_TOLERANCE_MS,
            budget_reason: "STARTUP_BUDGET_EXCEEDED".into(),
            required_code: "BACKEND_NOT_ACTIVE".into(),
            read_arguments: json!({"path": "README.md"}),
            write_arguments: json!({"path": "parity-dispatcher-probe.txt", "content": "probe"}),
            configs: Configs::default(),
            volatile: vec!["/value/since_ms".into()],
            reference: false,
        }
    }
}

/// The reference declarations: the defaults, `reference` set so the profile writes the
/// policy files.
pub fn dispatcher_reference() -> DispatcherDecl {
    DispatcherDecl {
        reference: true,
        ..DispatcherDecl::default()
    }
}

// --- [guard] (docs/guard.md) -------------------------------------------------------------------

/// A target's `[guard]` table, paths resolved against the target file's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardDecl {
    /// The rules file (`rules`, default `guard.toml`).
    pub rules: PathBuf,
    /// The tree to scan (`root`, default the target file's directory).
    pub root: PathBuf,
    /// A ratchet baseline (`baseline`), if any.
    pub baseline: Option<PathBuf>,
}
