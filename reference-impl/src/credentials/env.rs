//! The child-environment builder (seed rules 48–52, `seed-rules.md` §6; the seed's
//! `withoutRawMcpCredentials`).
//!
//! Shape: an environment is an [`EnvMap`] (name → value, `OsString`s, sorted by name). A
//! [`ChildEnvBuilder`] holds two lists of variable names:
//!
//! - **legacy raw-credential variables** ([`LEGACY_RAW_CREDENTIAL_VARS`] by default), which carry
//!   a bearer value itself and must never reach a child (rule 49);
//! - **stale file/endpoint variables** ([`STALE_FILE_ENDPOINT_VARS`] by default), which the
//!   parent may have inherited from its own parent and which would point the child at another
//!   host's file or endpoint.
//!
//! [`ChildEnvBuilder::mask`] mirrors the seed's function: it copies the given environment (or
//! the inherited one) and marks every listed variable as unset, keeping the key present as
//! [`None`] so a spawner that merges over the inherited environment still removes it.
//! [`ChildEnvBuilder::build`] then adds the current file path and endpoint. The input is never
//! mutated; every other variable, including unrelated `*_FILE` variables, is kept as it was.
//! [`apply`] hands a [`MaskedEnv`] to a `Command`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::{AUTHORIZATION_FILE_VAR, AUTHORIZATION_VAR, ENDPOINT_VAR};

/// An environment: variable name → value.
pub type EnvMap = BTreeMap<OsString, OsString>;

/// An environment for a child: `Some(value)` is passed, `None` is a masked variable that must
/// not reach the child (the seed's "set to undefined, key kept present").
pub type MaskedEnv = BTreeMap<OsString, Option<OsString>>;

/// Variables that carry a raw `Authorization` value: the seed's three
/// (`LEGACY_RAW_MCP_CREDENTIAL_ENV`, rule 49) and parity's own [`AUTHORIZATION_VAR`].
pub const LEGACY_RAW_CREDENTIAL_VARS: [&str; 4] = [
    "T3_ACP_MCP_AUTHORIZATION",
    "T3_MCP_BEARER_TOKEN",
    "T3_CODE_MCP_AUTHORIZATION",
    AUTHORIZATION_VAR,
];

/// File and endpoint variables a parent may have inherited from its own parent: parity's
/// [`AUTHORIZATION_FILE_VAR`] and [`ENDPOINT_VAR`], and the seed's `T3_ACP_MCP_AUTHORIZATION_FILE`
/// and `T3_ACP_MCP_ENDPOINT`. They are removed before the current ones are added, so a child
/// never sees a stale path or endpoint next to the current one.
pub const STALE_FILE_ENDPOINT_VARS: [&str; 4] = [
    AUTHORIZATION_FILE_VAR,
    ENDPOINT_VAR,
    "T3_ACP_MCP_AUTHORIZATION_FILE",
    "T3_ACP_MCP_ENDPOINT",
];

/// Builds a child's environment without raw credentials (rules 48–52).
///
/// [`ChildEnvBuilder::default`] uses [`LEGACY_RAW_CREDENTIAL_VARS`],
/// [`STALE_FILE_ENDPOINT_VARS`], and writes the current values to [`AUTHORIZATION_FILE_VAR`] and
/// [`ENDPOINT_VAR`]. Names are compared exactly (environment names are case-sensitive on POSIX).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildEnvBuilder {
    legacy: Vec<OsString>,
    stale: Vec<OsString>,
    file_var: OsString,
    endpoint_var: OsString,
}

impl Default for ChildEnvBuilder {
    fn default() -> Self {
        ChildEnvBuilder {
            legacy: LEGACY_RAW_CREDENTIAL_VARS
                .iter()
                .map(OsString::from)
                .collect(),
            stale: STALE_FILE_ENDPOINT_VARS
                .iter()
                .map(OsString::from)
                .collect(),
            file_var: AUTHORIZATION_FILE_VAR.into(),
            endpoint_var: ENDPOINT_VAR.into(),
        }
    }
}

impl ChildEnvBuilder {
    /// The default builder (see the type's documentation).
    pub fn new() -> Self {
        ChildEnvBuilder::default()
    }

    /// Replaces the list of legacy raw-credential variables.
    #[must_use]
    pub fn legacy_vars<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.legacy = names.into_iter().map(Into::into).collect();
        self
    }

    /// Replaces the list of stale file/endpoint variables.
    #[must_use]
    pub fn stale_vars<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.stale = names.into_iter().map(Into::into).collect();
        self
    }

    /// Names the variables [`build`](Self::build) writes the current file path and endpoint to
    /// (default [`AUTHORIZATION_FILE_VAR`] and [`ENDPOINT_VAR`]; the seed's ACP bridge reads
    /// `T3_ACP_MCP_AUTHORIZATION_FILE` and `T3_ACP_MCP_ENDPOINT`).
    #[must_use]
    pub fn current_vars(
        mut self,
        file_var: impl Into<OsString>,
        endpoint_var: impl Into<OsString>,
    ) -> Self {
        self.file_var = file_var.into();
        self.endpoint_var = endpoint_var.into();
        self
    }

    /// The legacy raw-credential variables.
    pub fn legacy(&self) -> &[OsString] {
        &self.legacy
    }

    /// The stale file/endpoint variables.
    pub fn stale(&self) -> &[OsString] {
        &self.stale
    }

    /// A copy of `env` (or, when `None`, of the inherited process environment, rule 51) with
    /// every legacy raw-credential variable masked: present as `None` whether or not it was set
    /// (rule 49). Every other variable is kept unchanged, stale file/endpoint variables
    /// included (rule 50); `env` is not mutated.
    pub fn mask(&self, env: Option<&EnvMap>) -> MaskedEnv {
        let mut out: MaskedEnv = match env {
            Some(map) => map
                .iter()
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
            None => std::env::vars_os().map(|(k, v)| (k, Some(v))).collect(),
        };
        for name in &self.legacy {
            out.insert(name.clone(), None);
        }
        out
    }

    /// The child's environment: [`mask`](Self::mask), then the stale file/endpoint variables
    /// masked too, then the current file path (`file`) and endpoint (`endpoint`) added when
    /// given (rule 48). With `endpoint` `None` the endpoint variable stays masked, so the child
    /// sees none rather than an inherited one.
    pub fn build(
        &self,
        env: Option<&EnvMap>,
        file: Option<&Path>,
        endpoint: Option<&str>,
    ) -> MaskedEnv {
        let mut out = self.mask(env);
        for name in &self.stale {
            out.insert(name.clone(), None);
        }
        if let Some(path) = file {
            out.insert(self.file_var.clone(), Some(path.as_os_str().to_owned()));
        }
        if let Some(url) = endpoint {
            out.insert(self.endpoint_var.clone(), Some(url.into()));
        }
        out
    }
}

/// The variables of `env` a child actually receives (the masked ones dropped).
pub fn passed(env: &MaskedEnv) -> EnvMap {
    env.iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k.clone(), v.clone())))
        .collect()
}

/// Gives `cmd` exactly the environment `env` describes: the command's environment is cleared,
/// then every `Some` variable is set, so masked (`None`) and unlisted variables never reach the
/// child.
pub fn apply(env: &MaskedEnv, cmd: &mut tokio::process::Command) {
    cmd.env_clear();
    for (k, v) in env {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
}

/// Whether `name` is one of `list`.
pub fn listed(list: &[OsString], name: &OsStr) -> bool {
    list.iter().any(|n| n == name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn map(pairs: &[(&str, &str)]) -> EnvMap {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn masks_every_legacy_raw_credential_variable_and_keeps_the_rest() {
        let input = map(&[
            ("PATH", "/usr/bin"),
            ("T3_ACP_MCP_AUTHORIZATION", "Bearer a"),
            ("T3_MCP_BEARER_TOKEN", "b"),
            ("T3_CODE_MCP_AUTHORIZATION", "Bearer c"),
            ("PARITY_MCP_AUTHORIZATION", "Bearer d"),
            ("T3_ACP_MCP_AUTHORIZATION_FILE", "/tmp/x/authorization"),
            ("OTHER_FILE", "/etc/other"),
        ]);
        let before = input.clone();
        let masked = ChildEnvBuilder::new().mask(Some(&input));
        // Strict equality, as the seed's test: the legacy keys present and unset, the rest kept.
        let expected: MaskedEnv = [
            ("PATH", Some("/usr/bin")),
            ("T3_ACP_MCP_AUTHORIZATION", None),
            ("T3_MCP_BEARER_TOKEN", None),
            ("T3_CODE_MCP_AUTHORIZATION", None),
            ("PARITY_MCP_AUTHORIZATION", None),
            (
                "T3_ACP_MCP_AUTHORIZATION_FILE",
                Some("/tmp/x/authorization"),
            ),
            ("OTHER_FILE", Some("/etc/other")),
        ]
        .into_iter()
        .map(|(k, v)| (OsString::from(k), v.map(OsString::from)))
        .collect();
        assert_eq!(masked, expected);
        assert_eq!(input, before, "rule 50: the input is not mutated");
    }

    #[test]
    fn masks_legacy_variables_that_were_not_set() {
        let masked = ChildEnvBuilder::new().mask(Some(&map(&[("HOME", "/root")])));
        for name in LEGACY_RAW_CREDENTIAL_VARS {
            assert_eq!(masked.get(OsStr::new(name)), Some(&None), "{name}");
        }
        assert_eq!(passed(&masked), map(&[("HOME", "/root")]));
    }

    #[test]
    fn starts_from_the_inherited_environment_when_none_is_set() {
        let masked = ChildEnvBuilder::new().mask(None);
        let path = std::env::var_os("PATH").expect("the test runs with PATH set");
        assert_eq!(masked.get(OsStr::new("PATH")), Some(&Some(path)));
        let inherited: EnvMap = std::env::vars_os().collect();
        for (k, v) in &inherited {
            if !listed(ChildEnvBuilder::new().legacy(), k) {
                assert_eq!(masked.get(k), Some(&Some(v.clone())), "{k:?}");
            }
        }
    }

    #[test]
    fn build_replaces_stale_file_and_endpoint_variables_with_the_current_ones() {
        let input = map(&[
            ("PATH", "/usr/bin"),
            ("PARITY_MCP_AUTHORIZATION", "Bearer raw"),
            ("PARITY_MCP_AUTHORIZATION_FILE", "/old/authorization"),
            ("PARITY_MCP_ENDPOINT", "http://127.0.0.1:1/old"),
            ("T3_ACP_MCP_AUTHORIZATION_FILE", "/old/t3"),
            ("T3_ACP_MCP_ENDPOINT", "http://127.0.0.1:1/t3"),
            ("SSL_CERT_FILE", "/etc/ssl/cert.pem"),
        ]);
        let env = ChildEnvBuilder::new().build(
            Some(&input),
            Some(Path::new("/new/authorization")),
            Some("http://127.0.0.1:2/mcp"),
        );
        assert_eq!(
            passed(&env),
            map(&[
                ("PATH", "/usr/bin"),
                ("PARITY_MCP_AUTHORIZATION_FILE", "/new/authorization"),
                ("PARITY_MCP_ENDPOINT", "http://127.0.0.1:2/mcp"),
                ("SSL_CERT_FILE", "/etc/ssl/cert.pem"),
            ])
        );
        // Without an endpoint the stale one does not survive.
        let env = ChildEnvBuilder::new().build(Some(&input), Some(Path::new("/new/a")), None);
        assert_eq!(env.get(OsStr::new("PARITY_MCP_ENDPOINT")), Some(&None));
        assert_eq!(env.get(OsStr::new("T3_ACP_MCP_ENDPOINT")), Some(&None));
    }

    #[test]
    fn lists_are_configurable() {
        let input = map(&[("MY_TOKEN", "secret"), ("T3_MCP_BEARER_TOKEN", "kept")]);
        let builder = ChildEnvBuilder::new()
            .legacy_vars(["MY_TOKEN"])
            .stale_vars(Vec::<String>::new())
            .current_vars("T3_ACP_MCP_AUTHORIZATION_FILE", "T3_ACP_MCP_ENDPOINT");
        let env = builder.build(Some(&input), Some(Path::new("/p")), Some("http://[::1]:1/"));
        assert_eq!(
            passed(&env),
            map(&[
                ("T3_MCP_BEARER_TOKEN", "kept"),
                ("T3_ACP_MCP_AUTHORIZATION_FILE", "/p"),
                ("T3_ACP_MCP_ENDPOINT", "http://[::1]:1/"),
            ])
        );
    }
}
