//! The one redactor of a parity process, shared by `record` and every report (docs/redaction.md).
//!
//! `run`, `replay`, `hygiene` and `record` install a [`Redactor`] at start
//! ([`install`]); from then on every output goes through it: the finished run report (case
//! messages, evidence, notes, could-not-run reasons) before any reporter sees it, so console,
//! JSON, JUnit, HTML and GitHub annotations print the same redacted text; snapshot files; replay
//! differences; and the `tracing` log on stderr ([`LogWriter`]). `record` applies the same
//! rules to the transcript it writes.
//!
//! The rules ([`Redactor::new`]): the values of environment variables whose names contain
//! `TOKEN`, `SECRET`, `KEY` or `PASSWORD` (any case; 6 bytes or longer), secret values on the
//! surface command lines, `Authorization` values, bearer tokens, passwords in URLs, each
//! `--redact` value, and each entry of the target file's top-level `redact = [...]`. A literal
//! value is found as it is, JSON-escaped up to four levels deep, URL-encoded and base64-encoded.

use crate::protocol::transcript::Redactor;
use std::sync::{Arc, RwLock};

static INSTALLED: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

/// Builds the process's redactor from this process's environment (which the peers inherit),
/// the extra environment given to peers, the peers' command lines, and the user's values or
/// patterns (`--redact`, then the target's `redact`), and installs it.
///
/// Errors: a user pattern that is not a valid regular expression (`--redact #N: …`).
pub fn install_from(
    extra_env: &[(String, String)],
    argv: &[String],
    user: &[String],
) -> Result<(), String> {
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    env.extend(extra_env.iter().cloned());
    install(Redactor::new(&env, argv, user)?);
    Ok(())
}

/// Installs `r` as the process's redactor (replacing an earlier one).
pub fn install(r: Redactor) {
    if let Ok(mut g) = INSTALLED.write() {
        *g = Some(Arc::new(r));
    }
}

/// The installed redactor, if any.
pub fn current() -> Option<Arc<Redactor>> {
    INSTALLED.read().ok().and_then(|g| g.clone())
}

/// `s` with every rule of the installed redactor applied (unchanged when none is installed).
pub fn text(s: &str) -> String {
    match current() {
        Some(r) => r.apply_str(s),
        None => s.to_owned(),
    }
}

/// Redacts, in place, everything of a run report that reporters print: case messages and
/// evidence, notes and could-not-run reasons. Ids, verdicts and spec text are parity's own.
pub fn report(report: &mut crate::engine::run::RunReport) {
    let Some(r) = current() else { return };
    for c in &mut report.cases {
        c.message = r.apply_str(&c.message);
        for e in &mut c.evidence {
            *e = r.apply_str(e);
        }
    }
    for n in &mut report.notes {
        *n = r.apply_str(n);
    }
    for n in &mut report.could_not_run {
        *n = r.apply_str(n);
    }
}

/// A `tracing` writer that redacts each write before it reaches stderr: a log event is written
/// in one call, so a secret inside one is found whole.
pub struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut err = std::io::stderr().lock();
        match current() {
            Some(r) => err.write_all(&r.apply(buf))?,
            None => err.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn red(env_value: &str) -> Redactor {
        Redactor::new(&[("API_KEY".into(), env_value.into())], &[], &[]).unwrap()
    }

    #[test]
    fn a_secret_is_found_json_escaped_up_to_four_levels() {
        for secret in ["s3cr\"et\\välue/x<", "plainsecret123", "a\u{1F600}bcdef"] {
            let r = red(secret);
            assert!(!r.apply_str(secret).contains(secret));
            let mut v = serde_json::Value::String(secret.to_string());
            // Level 1 (a JSON string) through level 4.
            for level in 1..=4 {
                let text = v.to_string();
                let out = r.apply_str(&format!("pre {text} post"));
                assert!(!out.contains(secret), "level {level}: {out}");
                assert!(
                    out.contains("[REDACTED:env:API_KEY]"),
                    "level {level}: {out}"
                );
                v = serde_json::Value::String(text);
            }
            // ASCII-only escaping (Python's json.dumps default) of the same value.
            let ascii: String = secret
                .chars()
                .map(|c| match c {
                    '"' => "\\\"".to_string(),
                    '\\' => "\\\\".to_string(),
                    c if c.is_ascii() => c.to_string(),
                    c => c
                        .encode_utf16(&mut [0u16; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04X}"))
                        .collect(),
                })
                .collect();
            assert!(r.apply_str(&ascii).contains("[REDACTED"), "{ascii}");
        }
    }

    #[test]
    fn a_secret_is_found_url_and_base64_encoded() {
        use base64::Engine as _;
        let secret = "tok/en+value=1";
        let r = red(secret);
        let url = "tok%2Fen%2Bvalue%3D1";
        assert!(!r.apply_str(url).contains(url));
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("xy{secret}z"));
        assert!(r.apply_str(&b64).contains("[REDACTED"), "{b64}");
    }

    #[test]
    fn a_literal_redact_value_gets_every_form_and_a_regex_stays_a_regex() {
        let r = Redactor::new(&[], &[], &["ab\"cd".into(), "acct-[0-9]+".into()]).unwrap();
        let nested = serde_json::Value::String(serde_json::json!({"v": "ab\"cd"}).to_string());
        assert!(!r.apply_str(&nested.to_string()).contains("cd"));
        assert_eq!(r.apply_str("acct-42"), "[REDACTED:user-2]");
    }
}
