//! The bundled reference and the fakes as targets: this binary's `reference mcp`,
//! `reference acp` and `fake <name>` subcommands, with what they declare (the slow call, the
//! ACP tool method and cancellable prompt). The default run and the self-test use them.

use crate::engine::check::{McpTarget, SlowCall};
use crate::transport::peer::PeerSpec;
use serde_json::json;

/// The checks the bundled reference skips by design, with the revision they skip at (`None`:
/// every revision they run at): the 2026-07-28 logging rules, since the reference does not
/// adopt logging at that revision (it deprecates logging and says new implementations SHOULD
/// NOT adopt it), so it sends no `notifications/message` there either; and the input-required
/// retry, since the reference never asks for input. `parity selftest` proves them on the
/// benign peers `benign-modern-logging` and `benign-input-required` instead.
pub const SKIPPED_BY_DESIGN: &[(&str, Option<&str>)] = &[
    ("mcp.modern.log-level-invalid", None),
    ("mcp.modern.log-level-honoured", None),
    ("mcp.logging.message-shape", Some("2026-07-28")),
    ("mcp.modern.input-required-retry", None),
];

/// Whether the case `check@binding#revision` is one the reference skips by design
/// ([`SKIPPED_BY_DESIGN`]).
pub fn skipped_by_design(case_id: &str) -> bool {
    let (check, rest) = case_id.split_once('@').unwrap_or((case_id, ""));
    let revision = rest.rsplit_once('#').map_or("", |(_, r)| r);
    SKIPPED_BY_DESIGN
        .iter()
        .any(|(c, rev)| *c == check && rev.is_none_or(|r| r == revision))
}

/// The reference target: this binary's `reference mcp`, with its declared slow call.
pub fn reference_target() -> McpTarget {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    McpTarget {
        name: "parity reference mcp".into(),
        spec: PeerSpec::new(exe, vec!["reference".into(), "mcp".into()]),
        slow_call: Some(reference_slow_call()),
        reference: true,
        tool_method: None,
        tool_params: None,
        cancel_prompt: None,
        http: None,
        // The reference's tools that change nothing: calling `write_file` or `exec` with
        // generated arguments is harmless in its own workspace, but over HTTP one facade serves
        // every session from one workspace, and a file written by one check would change the
        // resources another lists.
        calls: crate::engine::check::CallPolicy {
            safe: ["read_file", "list_dir", "status"]
                .map(String::from)
                .to_vec(),
            never: Vec::new(),
            read_only: false,
        },
        prompt_arguments: [(
            "explain_file".to_string(),
            serde_json::Map::from_iter([("path".to_string(), json!("README.md"))]),
        )]
        .into_iter()
        .collect(),
    }
}

/// The slow call the reference declares: `exec` of `sleep 0.2`, cancellable, 200 ms when left
/// alone (short, so the cancellation check can listen past its natural end).
pub fn reference_slow_call() -> SlowCall {
    SlowCall {
        name: "exec".into(),
        arguments: json!({"argv": ["sleep", "0.2"]}),
        ms: 200,
    }
}

/// A faulty peer as a target: this binary's `fake <name>`.
pub fn fake_target(name: &str) -> McpTarget {
    let mut t = reference_target();
    t.name = format!("parity fake {name}");
    t.spec.args = vec!["fake".into(), name.into()];
    // A faulty peer wraps the reference dispatcher and workspace.
    t.reference = true;
    t
}

/// The reference ACP agent as a target of the ACP profile: this binary's `reference acp`, its
/// tool method and its cancellable prompt declared.
pub fn reference_acp_target() -> McpTarget {
    let mut t = reference_target();
    t.name = "parity reference acp".into();
    t.spec.args = vec!["reference".into(), "acp".into()];
    t.slow_call = None;
    t.tool_method = Some(parity_reference::acp::TOOL_METHOD.into());
    t.cancel_prompt = Some(parity_reference::acp::WAIT_FOR_CANCEL.into());
    t
}

/// A faulty or benign ACP agent as a target of the ACP profile: this binary's `fake <name>`,
/// declaring the tool method the fault serves, or for a benign agent
/// (`parity_fakes::acp_benign_catalogue`) the one its entry declares (usually none).
pub fn acp_fake_target(name: &str) -> McpTarget {
    let mut t = reference_acp_target();
    t.name = format!("parity fake {name}");
    t.spec.args = vec!["fake".into(), name.into()];
    if let Some(m) = parity_fakes::find_acp(name).and_then(|f| f.tool_method) {
        t.tool_method = Some(m.into());
    }
    if let Some(b) = parity_fakes::find_acp_benign(name) {
        t.tool_method = b.tool_method.map(str::to_string);
    }
    t
}
