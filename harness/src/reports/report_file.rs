//! Reading JSON reports back (`parity baseline write --from`, `parity report merge`).
//!
//! [`load`] reads a report written by `parity run --json` (schema version 2, or 1 from an older
//! parity; see `crate::reports::report` and `docs/report.schema.json`) and checks what the readers rely
//! on: the text is JSON; no object has a key twice (`serde_json` would keep the last silently;
//! a text scan finds the second one); `schema_version` is 1 or 2; `cases` is an object whose
//! keys are case ids `check@binding#revision` with a known binding and revision and a check
//! parity knows or that the case describes itself (a `kind`, its `check` and a `requirement`,
//! as every case of a report does: a user's scenario needs no `--scenarios` to be read back),
//! each an object with a known `verdict`. It does not hold the report to the whole
//! schema: fields it does not read may be missing.
//!
//! Errors ([`ReportFileError`]) name the file and the 1-based line, and the case when one is
//! concerned: ``r.json:12: case `mcp.x@mcp-stdio#2025-11-25`: unknown check `mcp.x` …``;
//! `r.json:3:7: not JSON: expected value`.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The report schema versions [`load`] reads.
pub const READABLE_SCHEMA_VERSIONS: [u64; 2] = [1, 2];

/// A JSON report that could not be loaded.
///
/// Displays as `FILE:LINE:COL: MESSAGE` for JSON syntax errors, ``FILE:LINE: case `ID`: MESSAGE``
/// for an error about one case, `FILE:LINE: MESSAGE` otherwise, and `FILE: MESSAGE` when no line
/// applies (the file could not be read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ReportFileError {
    /// The file, as given.
    pub file: PathBuf,
    /// 1-based line; 0 when no line applies.
    pub line: usize,
    /// 1-based column; 0 when not given.
    pub column: usize,
    /// The case id, when the error concerns one case.
    pub case: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ReportFileError {
    fn render(&self) -> String {
        let mut s = self.file.display().to_string();
        if self.line > 0 {
            s.push_str(&format!(":{}", self.line));
            if self.column > 0 {
                s.push_str(&format!(":{}", self.column));
            }
        }
        if let Some(c) = &self.case {
            s.push_str(&format!(": case `{c}`"));
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

/// Loads a JSON report written by `parity run --json`, checking each case id against what
/// parity `known`s (a case that describes its own check is accepted too).
///
/// Errors: the file cannot be read; it is not JSON; a key appears twice in one object (the
/// line of the second); `schema_version` is missing or not 1 or 2; `cases` is missing or not
/// an object; a case key is not a case id, or names an unknown binding or revision, or a check
/// that is neither known nor described by the case (the message names `--scenarios`); a
/// case is not an object or has no known `verdict`. See [`ReportFileError`].
pub fn load(
    path: &Path,
    known: &crate::reports::baseline::Known,
) -> Result<Value, ReportFileError> {
    let err = |line: usize, case: Option<&str>, message: String| ReportFileError {
        file: path.to_path_buf(),
        line,
        column: 0,
        case: case.map(str::to_string),
        message,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(0, None, format!("cannot read the report: {e}")))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        let (line, column) = (e.line(), e.column());
        let full = e.to_string();
        let suffix = format!(" at line {line} column {column}");
        let msg = full.strip_suffix(&suffix).unwrap_or(&full);
        ReportFileError {
            file: path.to_path_buf(),
            line,
            column,
            case: None,
            message: format!("not JSON: {msg}"),
        }
    })?;

    // Keys and their lines (the text is valid JSON now).
    let mut scan = Scan {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        top: HashMap::new(),
        cases: HashMap::new(),
        dup: None,
    };
    scan.value(Where::Root);
    if let Some(d) = scan.dup {
        return Err(match d.place {
            Where::CasesObject => err(
                d.line,
                Some(&d.key),
                format!(
                    "appears twice as a key of `cases` (lines {} and {})",
                    d.first, d.line
                ),
            ),
            _ => err(
                d.line,
                None,
                format!(
                    "key `{}` appears twice in one object (lines {} and {})",
                    d.key, d.first, d.line
                ),
            ),
        });
    }
    let top_line = |k: &str| scan.top.get(k).copied().unwrap_or(1);

    let Some(obj) = value.as_object() else {
        return Err(err(
            1,
            None,
            format!(
                "expected a parity JSON report (an object), got {}",
                describe(&value)
            ),
        ));
    };
    match obj.get("schema_version") {
        None => {
            return Err(err(
                1,
                None,
                "missing `schema_version` (not a report written by `parity run --json`?)".into(),
            ))
        }
        Some(v) if v.as_u64().is_some_and(|n| READABLE_SCHEMA_VERSIONS.contains(&n)) => {}
        Some(v) => {
            return Err(err(
                top_line("schema_version"),
                None,
                format!(
                    "schema_version {v} is not one this parity reads (1 or 2); a newer parity wrote it?"
                ),
            ))
        }
    }
    let cases = match obj.get("cases") {
        None => return Err(err(1, None, "missing `cases`".into())),
        Some(Value::Object(m)) => m,
        Some(v) => {
            return Err(err(
                top_line("cases"),
                None,
                format!(
                    "`cases` must be an object keyed by case id, got {}",
                    describe(v)
                ),
            ))
        }
    };
    for (id, c) in cases {
        let line = scan.cases.get(id.as_str()).copied().unwrap_or(1);
        // A check parity does not know (a user's scenario) is accepted when the case describes
        // it itself: the report is then all a reader needs.
        let check = |check: &str| (known.check)(check) || describes(c, check);
        let known = crate::reports::baseline::Known {
            check: &check,
            bindings: known.bindings,
        };
        crate::reports::baseline::check_case_id(id, &known).map_err(|m| {
            let m = if m.starts_with("unknown check") {
                format!(
                    "{m}; the case does not describe its check either (string `kind`, `check` \
                     and `requirement`, as `parity run --json` writes them)"
                )
            } else {
                m
            };
            err(line, Some(id), m)
        })?;
        let Some(c) = c.as_object() else {
            return Err(err(
                line,
                Some(id),
                format!("expected an object, got {}", describe(c)),
            ));
        };
        match c.get("verdict") {
            Some(Value::String(v))
                if crate::reports::report::ORDER
                    .iter()
                    .any(|o| o.as_str() == v) => {}
            Some(v) => {
                return Err(err(
                    line,
                    Some(id),
                    format!(
                        "unknown verdict {v} (expected {})",
                        crate::reports::report::ORDER
                            .iter()
                            .map(|o| o.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
            None => return Err(err(line, Some(id), "no `verdict`".into())),
        }
    }
    Ok(value)
}

/// Whether the case `c` describes the check `check` itself, as every case `parity run --json`
/// writes does: a known `kind` (`active`, `monitor`, `scenario`), `check` equal to `check`, and
/// a string `requirement`.
fn describes(c: &Value, check: &str) -> bool {
    matches!(
        c.get("kind").and_then(Value::as_str),
        Some("active" | "monitor" | "scenario")
    ) && c.get("check").and_then(Value::as_str) == Some(check)
        && c.get("requirement").is_some_and(Value::is_string)
}

/// The check ids of the cases of a loaded report that describe their check themselves (see
/// [`load`]), for readers that must accept them elsewhere too (a baseline being rewritten).
pub fn described_checks(report: &Value) -> std::collections::BTreeSet<String> {
    let Some(cases) = report.get("cases").and_then(Value::as_object) else {
        return Default::default();
    };
    cases
        .values()
        .filter_map(|c| {
            let check = c.get("check").and_then(Value::as_str)?;
            describes(c, check).then(|| check.to_owned())
        })
        .collect()
}

use crate::base::util::json_type as describe;

/// Where a value sits, for the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// The document.
    Root,
    /// The value of the top-level `cases` key.
    CasesObject,
    /// Anywhere else.
    Other,
}

/// The first duplicate key found.
#[derive(Debug)]
struct Dup {
    place: Where,
    key: String,
    first: usize,
    line: usize,
}

/// A scan of JSON text that has already parsed: the lines of the top-level keys and of the keys
/// of `cases`, and the first key that appears twice in one object.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
    top: HashMap<String, usize>,
    cases: HashMap<String, usize>,
    dup: Option<Dup>,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => return,
            }
            self.i += 1;
        }
    }

    /// A string at the cursor (on its opening quote), decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => {
                    let raw = self.b.get(start..self.i)?;
                    return serde_json::from_slice(raw).ok();
                }
                _ => {}
            }
        }
        None
    }

    /// Skips one value, recording keys. Stops at the first duplicate.
    fn value(&mut self, place: Where) {
        self.ws();
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                let mut seen: HashMap<String, usize> = HashMap::new();
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b'"') => {}
                        Some(b',') => {
                            self.i += 1;
                            continue;
                        }
                        Some(b'}') => {
                            self.i += 1;
                            return;
                        }
                        _ => return,
                    }
                    let line = self.line;
                    let Some(key) = self.string() else { return };
                    if let Some(first) = seen.get(&key) {
                        self.dup = Some(Dup {
                            place,
                            key,
                            first: *first,
                            line,
                        });
                        return;
                    }
                    seen.insert(key.clone(), line);
                    self.ws();
                    if self.peek() != Some(b':') {
                        return;
                    }
                    self.i += 1;
                    let inner = match place {
                        Where::Root if key == "cases" => Where::CasesObject,
                        _ => Where::Other,
                    };
                    match place {
                        Where::Root => {
                            self.top.insert(key, line);
                        }
                        Where::CasesObject => {
                            self.cases.insert(key, line);
                        }
                        Where::Other => {}
                    }
                    self.value(inner);
                    if self.dup.is_some() {
                        return;
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return;
                        }
                        None => return,
                        Some(_) => {
                            let before = self.i;
                            self.value(Where::Other);
                            if self.dup.is_some() || self.i == before {
                                return;
                            }
                        }
                    }
                }
            }
            Some(b'"') => {
                let _ = self.string();
            }
            Some(_) => {
                // A number or a literal.
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.i += 1;
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// [`known`] with parity's own bindings, as a run reads case ids.
    fn k() -> crate::reports::baseline::Known<'static> {
        static B: std::sync::OnceLock<Vec<(&'static str, Vec<&'static str>)>> =
            std::sync::OnceLock::new();
        crate::reports::baseline::Known {
            check: &known,
            bindings: B.get_or_init(|| crate::profiles::builtin().bindings()),
        }
    }

    fn known(c: &str) -> bool {
        [
            "mcp.base.parse-error",
            "mcp.base.batch-rejected",
            "acp.init.x",
            "equivalence.generated",
        ]
        .iter()
        .any(|k| c == *k || c.strip_prefix(k).is_some_and(|r| r.starts_with('.')))
    }

    fn load_text(text: &str) -> Result<Value, ReportFileError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, text).unwrap();
        load(&path, &k())
    }

    fn err(text: &str) -> ReportFileError {
        let e = load_text(text).unwrap_err();
        assert!(e.file.ends_with("report.json"), "{e}");
        e
    }

    /// Renders the error with the file shortened to `report.json`.
    fn shown(e: &ReportFileError) -> String {
        e.to_string()
            .replacen(&e.file.display().to_string(), "report.json", 1)
    }

    const GOOD: &str = r#"{
  "schema_version": 2,
  "target": "t",
  "cases": {
    "mcp.base.parse-error@mcp-stdio#2025-11-25": {
      "verdict": "fail",
      "message": "a \"quoted\" } { brace",
      "evidence": ["[x]", {"a": 1, "b": [1, 2, {"c": null}]}]
    },
    "acp.init.x@acp#v1": {"verdict": "pass"},
    "equivalence.generated.read_file@equivalence#all": {"verdict": "flaky"}
  }
}
"#;

    #[test]
    fn loads_a_good_report_and_version_1() {
        let v = load_text(GOOD).unwrap();
        assert_eq!(v["cases"].as_object().unwrap().len(), 3);
        let v1 = GOOD.replace("\"schema_version\": 2", "\"schema_version\": 1");
        assert!(load_text(&v1).is_ok());
    }

    #[test]
    fn unreadable_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(&dir.path().join("gone.json"), &k()).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(
            e.to_string()
                .contains("gone.json: cannot read the report: "),
            "{e}"
        );
    }

    #[test]
    fn not_json_names_line_and_column() {
        let e = err("{\n  \"schema_version\": 2,\n  \"cases\": {,}\n}\n");
        assert_eq!((e.line, e.column), (3, 13));
        assert_eq!(
            shown(&e),
            "report.json:3:13: not JSON: key must be a string"
        );
        let e = err("");
        assert_eq!(
            shown(&e),
            "report.json:1: not JSON: EOF while parsing a value"
        );
    }

    #[test]
    fn duplicate_case_key_names_the_second_line() {
        let text = r#"{
  "schema_version": 2,
  "cases": {
    "mcp.base.parse-error@mcp-stdio#2025-11-25": {"verdict": "fail"},
    "acp.init.x@acp#v1": {"verdict": "pass"},
    "mcp.base.parse-error@mcp-stdio#2025-11-25": {"verdict": "pass"}
  }
}"#;
        let e = err(text);
        assert_eq!(
            shown(&e),
            "report.json:6: case `mcp.base.parse-error@mcp-stdio#2025-11-25`: appears twice as a key of `cases` (lines 4 and 6)"
        );
    }

    #[test]
    fn duplicate_key_elsewhere() {
        let e = err("{\"schema_version\": 2,\n\"cases\": {},\n\"cases\": {}}");
        assert_eq!(
            shown(&e),
            "report.json:3: key `cases` appears twice in one object (lines 2 and 3)"
        );
        let e = err(
            "{\"schema_version\": 2, \"cases\": {\n\"acp.init.x@acp#v1\": {\"verdict\": \"pass\",\n \"verdict\": \"fail\"}}}",
        );
        assert_eq!(e.line, 3);
        assert!(e.message.contains("`verdict` appears twice"), "{e}");
    }

    #[test]
    fn schema_version_checked() {
        let e = err("{\"cases\": {}}");
        assert_eq!(e.line, 1);
        assert!(e.message.starts_with("missing `schema_version`"), "{e}");
        let e = err("{\n\"cases\": {},\n\"schema_version\": 3}");
        assert_eq!(e.line, 3);
        assert!(e.message.starts_with("schema_version 3 is not one"), "{e}");
        let e = err("{\n\"schema_version\": \"2\", \"cases\": {}}");
        assert_eq!(e.line, 2);
        let e = err("[1]");
        assert!(e.message.contains("got an array"), "{e}");
    }

    #[test]
    fn cases_must_be_an_object() {
        let e = err("{\"schema_version\": 2}");
        assert!(e.message.starts_with("missing `cases`"), "{e}");
        let e = err("{\"schema_version\": 2,\n\n \"cases\": []}");
        assert_eq!(
            shown(&e),
            "report.json:3: `cases` must be an object keyed by case id, got an array"
        );
    }

    fn case_err(id: &str, body: &str) -> ReportFileError {
        err(&format!(
            "{{\"schema_version\": 2, \"cases\": {{\n\"acp.init.x@acp#v1\": {{\"verdict\": \"pass\"}},\n{}: {body}}}}}",
            serde_json::json!(id)
        ))
    }

    #[test]
    fn bad_case_ids_name_the_case_and_line() {
        let e = case_err("mcp.nope@mcp-stdio#2025-11-25", "{\"verdict\": \"pass\"}");
        assert_eq!(
            shown(&e),
            "report.json:3: case `mcp.nope@mcp-stdio#2025-11-25`: unknown check `mcp.nope` (`parity list` shows every check and scenario; a scenario of your own is known once its directory is given with `--scenarios DIR`); the case does not describe its check either (string `kind`, `check` and `requirement`, as `parity run --json` writes them)"
        );
        let e = case_err("mcp.base.parse-error", "{\"verdict\": \"pass\"}");
        assert_eq!(e.line, 3);
        assert!(e.message.starts_with("not a case id"), "{e}");
        let e = case_err(
            "mcp.base.parse-error@http#2025-11-25",
            "{\"verdict\": \"pass\"}",
        );
        assert!(e.message.starts_with("unknown binding `http`"), "{e}");
        let e = case_err(
            "mcp.base.parse-error@mcp-stdio#2025-11-24",
            "{\"verdict\": \"pass\"}",
        );
        assert!(
            e.message.starts_with("unknown revision `#2025-11-24`"),
            "{e}"
        );
    }

    #[test]
    fn a_case_that_describes_its_own_check_needs_no_scenarios() {
        let id = "mycalc.divide@mcp-stdio#2025-11-25";
        let good = r#"{"kind": "scenario", "check": "mycalc.divide", "requirement": "r", "verdict": "fail"}"#;
        let text = format!(
            "{{\"schema_version\": 2, \"cases\": {{\n{}: {good}}}}}",
            serde_json::json!(id)
        );
        let v = load_text(&text).unwrap();
        assert_eq!(
            described_checks(&v).into_iter().collect::<Vec<_>>(),
            ["mycalc.divide"]
        );
        // Half a description is none: another check, no requirement, an unknown kind.
        for body in [
            r#"{"kind": "scenario", "check": "mycalc.other", "requirement": "r", "verdict": "fail"}"#,
            r#"{"kind": "scenario", "check": "mycalc.divide", "verdict": "fail"}"#,
            r#"{"kind": "guess", "check": "mycalc.divide", "requirement": "r", "verdict": "fail"}"#,
        ] {
            let e = case_err(id, body);
            assert!(
                e.message.starts_with("unknown check `mycalc.divide`"),
                "{e}"
            );
            assert!(e.message.contains("--scenarios DIR"), "{e}");
        }
    }

    #[test]
    fn bad_case_values() {
        let id = "mcp.base.batch-rejected@mcp-stdio#2025-03-26";
        let e = case_err(id, "[]");
        assert_eq!((e.line, e.case.as_deref()), (3, Some(id)));
        assert_eq!(e.message, "expected an object, got an array");
        let e = case_err(id, "{\"verdict\": \"passed\"}");
        assert!(e.message.starts_with("unknown verdict \"passed\""), "{e}");
        let e = case_err(id, "{}");
        assert_eq!(e.message, "no `verdict`");
    }

    #[test]
    fn scan_survives_escapes_and_nesting() {
        let text = "{\"schema_version\": 2, \"cases\": {\"a\\\"b\": 1, \"x\": [\"\\\\\", {\"y\": [[]]}], \"equivalence.generated.z@equivalence#all\": {\"verdict\": \"skip\"}}}";
        // `a"b` is not a case id: the first error is about it, on line 1.
        let e = err(text);
        assert_eq!((e.line, e.case.as_deref()), (1, Some("a\"b")));
    }
}
