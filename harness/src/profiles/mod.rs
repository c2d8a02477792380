//! Layer 4, the profiles, one folder each: `mcp` (stdio, both eras; its `http` folder is the
//! `mcp-http` profile, the same checks over Streamable HTTP plus the transport's own), `acp`, `equivalence` (with its generated calls), `facade`, `hygiene`, `dispatcher` and
//! `guard`.
//!
//! Invariant: a profile holds its catalogue and its checks; it imports the engine and the layers
//! below, never another profile.

pub mod acp;
pub mod dispatcher;
pub mod equivalence;
#[cfg(feature = "http")]
pub mod facade;
#[cfg(feature = "guard")]
pub mod guard;
pub mod hygiene;
pub mod mcp;

/// parity's own profiles, in the order a run runs them: `mcp`, `acp`, `equivalence`,
/// `mcp-http`, `facade`, `hygiene`, `dispatcher`, `guard` (built with the `guard` feature, the
/// default). This is the one place that names
/// every profile; the command line, selection, baselines and `parity list` iterate it. A
/// library user adds a profile with `Registry::register` (docs/library.md).
pub fn builtin() -> crate::engine::profile::Registry {
    use std::sync::Arc;
    let mut r = crate::engine::profile::Registry::new();
    let all: Vec<Arc<dyn crate::engine::profile::Profile>> = vec![
        Arc::new(mcp::McpProfile),
        Arc::new(acp::AcpProfile),
        Arc::new(equivalence::EquivalenceProfile),
        #[cfg(feature = "http")]
        Arc::new(mcp::http::McpHttpProfile),
        #[cfg(feature = "http")]
        Arc::new(facade::FacadeProfile),
        Arc::new(hygiene::HygieneProfile),
        Arc::new(dispatcher::DispatcherProfile),
    ];
    // Built with the `guard` feature (the default).
    #[cfg(feature = "guard")]
    let all = {
        let mut all = all;
        all.push(Arc::new(guard::GuardProfile));
        all
    };
    for p in all {
        // The names are distinct, so registering cannot fail.
        let _ = r.register(p);
    }
    r
}

#[cfg(test)]
mod tests {
    use crate::engine::select::known_check;

    #[test]
    fn families_fall_under_their_unit() {
        assert!(known_check(
            &super::builtin(),
            "equivalence.generated.read_file",
            &[]
        ));
        assert!(known_check(
            &super::builtin(),
            "mcp.stdio.stdout-purity",
            &[]
        ));
        assert!(!known_check(&super::builtin(), "mcp.no-such-check", &[]));
        assert!(!known_check(
            &super::builtin(),
            "equivalence.generatedx",
            &[]
        ));
    }
}
