//! Discovery merge and name resolution (seed rules 4–11, 25, 26).
//!
//! [`publish`] builds the catalogue one caller sees:
//!
//! 1. downstream tools first, in server order; a bare name offered by more than one
//!    downstream server is published as `server<sep>tool` for **every** occurrence
//!    (rule 9);
//! 2. then the tools of in-process sources in registration order, skipping session-bound
//!    sources for an anonymous caller (rule 4); a source tool whose bare name is already
//!    published (by a downstream server or an earlier source) is published as
//!    `provider<sep>tool` (rules 10, 11).
//!
//! [`resolve`] mirrors discovery (rule 25): an exact published name first, in catalogue
//! order; then, for a source tool published bare, `provider<sep>tool` (rule 26). A name
//! the caller's catalogue does not hold resolves to nothing, so an anonymous call to a
//! session-bound tool fails exactly like a call to a made-up name (rule 24).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::source::SourceTool;

/// Where a published entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The downstream server at this index of the facade's downstream list.
    Downstream(usize),
    /// The source at this index of the facade's source list.
    Source(usize),
}

/// One published capability.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The name the caller sees and calls.
    pub published: String,
    /// The name the provider knows.
    pub bare: String,
    /// The downstream server name or the source's provider label.
    pub provider: String,
    /// Where calls go.
    pub origin: Origin,
    /// The tool's description, its input schema and its annotations.
    pub tool: SourceTool,
}

/// The tools of one provider, as input to [`publish`].
#[derive(Debug, Clone)]
pub struct ProviderTools {
    /// The downstream server name or source provider label.
    pub provider: String,
    /// Where calls go.
    pub origin: Origin,
    /// Its tools (already filtered for the caller: a session-bound source is absent for
    /// an anonymous caller).
    pub tools: Vec<SourceTool>,
}

/// The merge rule as a function, so a faulty peer can substitute another order (the
/// reference uses [`publish`]).
pub type NamingFn = fn(&[ProviderTools], &[ProviderTools], &str) -> Vec<Entry>;

/// Builds the catalogue from downstream and source tools with separator `sep` (rules
/// 9–11).
pub fn publish(downstream: &[ProviderTools], sources: &[ProviderTools], sep: &str) -> Vec<Entry> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for p in downstream {
        let mut seen = HashSet::new();
        for t in &p.tools {
            if seen.insert(t.name.as_str()) {
                *count.entry(t.name.as_str()).or_default() += 1;
            }
        }
    }
    let mut entries = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for p in downstream {
        for t in &p.tools {
            let published = if count.get(t.name.as_str()).copied().unwrap_or(0) > 1 {
                format!("{}{sep}{}", p.provider, t.name)
            } else {
                t.name.clone()
            };
            if taken.insert(published.clone()) {
                entries.push(entry(published, p, t));
            }
        }
    }
    for p in sources {
        for t in &p.tools {
            let published = if taken.contains(&t.name) {
                format!("{}{sep}{}", p.provider, t.name)
            } else {
                t.name.clone()
            };
            // A prefixed name that is itself taken cannot be published without ambiguity.
            if taken.insert(published.clone()) {
                entries.push(entry(published, p, t));
            }
        }
    }
    entries
}

fn entry(published: String, p: &ProviderTools, t: &SourceTool) -> Entry {
    Entry {
        published,
        bare: t.name.clone(),
        provider: p.provider.clone(),
        origin: p.origin,
        tool: t.clone(),
    }
}

/// The entry `name` calls in `entries` (rules 25, 26), or `None`.
pub fn resolve<'a>(entries: &'a [Entry], name: &str, sep: &str) -> Option<&'a Entry> {
    if let Some(e) = entries.iter().find(|e| e.published == name) {
        return Some(e);
    }
    entries.iter().find(|e| {
        matches!(e.origin, Origin::Source(_))
            && e.published == e.bare
            && name.len() == e.provider.len() + sep.len() + e.bare.len()
            && name.starts_with(&e.provider)
            && name[e.provider.len()..].starts_with(sep)
            && name.ends_with(&e.bare)
    })
}

/// `risk` of a discovery entry (rule 7): `read` when `readOnlyHint` is true, else
/// `destructive` when `destructiveHint` is true, else `write`.
pub fn risk(annotations: &Value) -> &'static str {
    let hint = |k: &str| annotations.get(k).and_then(Value::as_bool) == Some(true);
    if hint("readOnlyHint") {
        "read"
    } else if hint("destructiveHint") {
        "destructive"
    } else {
        "write"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(names: &[&str]) -> Vec<SourceTool> {
        names
            .iter()
            .map(|n| SourceTool {
                name: (*n).into(),
                description: String::new(),
                input_schema: json!({}),
                annotations: Value::Null,
                output_schema: Value::Null,
            })
            .collect()
    }

    fn provider(name: &str, origin: Origin, names: &[&str]) -> ProviderTools {
        ProviderTools {
            provider: name.into(),
            origin,
            tools: tools(names),
        }
    }

    fn names(entries: &[Entry]) -> Vec<&str> {
        entries.iter().map(|e| e.published.as_str()).collect()
    }

    #[test]
    fn downstream_duplicates_are_prefixed_everywhere() {
        let d = [
            provider("a", Origin::Downstream(0), &["x", "y"]),
            provider("b", Origin::Downstream(1), &["x", "z"]),
        ];
        assert_eq!(names(&publish(&d, &[], ":")), ["a:x", "y", "b:x", "z"]);
    }

    #[test]
    fn a_source_never_steals_a_downstream_name_and_the_first_source_keeps_a_shared_one() {
        let d = [provider("ref", Origin::Downstream(0), &["read_file"])];
        let s = [
            provider("parity", Origin::Source(0), &["read_file", "status"]),
            provider("echo", Origin::Source(1), &["echo_channel"]),
            provider("echo2", Origin::Source(2), &["echo_channel"]),
        ];
        let e = publish(&d, &s, ":");
        assert_eq!(
            names(&e),
            [
                "read_file",
                "parity:read_file",
                "status",
                "echo_channel",
                "echo2:echo_channel"
            ]
        );
        assert_eq!(
            resolve(&e, "read_file", ":").unwrap().origin,
            Origin::Downstream(0)
        );
        assert_eq!(
            resolve(&e, "parity:read_file", ":").unwrap().origin,
            Origin::Source(0)
        );
        assert_eq!(
            resolve(&e, "echo2:echo_channel", ":").unwrap().origin,
            Origin::Source(2)
        );
        // Rule 26: a source tool published bare also answers to provider:tool.
        assert_eq!(
            resolve(&e, "echo:echo_channel", ":").unwrap().origin,
            Origin::Source(1)
        );
        assert!(resolve(&e, "ref:read_file", ":").is_none());
        assert!(resolve(&e, "made_up", ":").is_none());
    }

    #[test]
    fn risk_labels() {
        assert_eq!(
            risk(&json!({"readOnlyHint": true, "destructiveHint": true})),
            "read"
        );
        assert_eq!(risk(&json!({"destructiveHint": true})), "destructive");
        assert_eq!(risk(&Value::Null), "write");
    }
}
