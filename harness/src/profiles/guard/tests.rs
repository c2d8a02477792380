//! Unit tests of the guard: stripping per language, symbol and entry-point matching, rules-file
//! errors, skips, and the ratchet baseline.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Strips `src` and asserts the length and the newlines are unchanged.
fn stripped(lang: Lang, src: &str) -> String {
    let out = strip(lang, src).unwrap();
    assert_eq!(out.len(), src.len(), "{lang:?}: length changed");
    let nl = |s: &str| s.match_indices('\n').map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(nl(&out), nl(src), "{lang:?}: newlines moved");
    out
}

#[test]
fn rust_comments_strings_and_chars_are_blanked() {
    let src = "// secret in a comment\nfn f() {\n    let s = \"secret\"; /* secret */\n    let r = r#\"secret\"#;\n    /// secret doc\n    secret();\n}\n";
    let out = stripped(Lang::Rust, src);
    assert_eq!(out.matches("secret").count(), 1, "{out}");
    assert!(out.contains("    secret();"));
}

#[test]
fn typescript_and_tsx_keep_template_substitutions() {
    let src = "// secret\nconst a = 'secret';\nconst b = `x ${secret()} y secret`;\n/* secret */ secret2();\n";
    let out = stripped(Lang::TypeScript, src);
    assert_eq!(out.matches("secret").count(), 2, "{out}");
    assert!(out.contains("${secret()}"));
    assert!(out.contains("secret2();"));
    let tsx = "const e = <div title=\"secret\">{secret()}</div>; // secret\n";
    let out = stripped(Lang::Tsx, tsx);
    assert_eq!(out.matches("secret").count(), 1, "{out}");
}

#[test]
fn javascript_strings_and_comments_are_blanked() {
    let src = "const x = \"secret\"; // secret\nsecret(1);\n";
    let out = stripped(Lang::JavaScript, src);
    assert_eq!(out.matches("secret").count(), 1, "{out}");
    assert!(out.contains("secret(1);"));
}

#[test]
fn python_keeps_fstring_interpolations() {
    let src = "# secret\nx = 'secret'\ny = \"\"\"secret\nsecret\"\"\"\nz = f\"a {secret()} secret\"\nsecret()\n";
    let out = stripped(Lang::Python, src);
    assert_eq!(out.matches("secret").count(), 2, "{out}");
    assert!(out.contains("{secret()}"));
}

#[test]
fn go_strings_runes_and_comments_are_blanked() {
    let src = "package m\n// secret\nvar a = \"secret\"\nvar b = `secret`\nvar c = 's'\nfunc f() { secret() }\n";
    let out = stripped(Lang::Go, src);
    assert_eq!(out.matches("secret").count(), 1, "{out}");
    assert!(out.contains("{ secret() }"));
}

#[test]
fn multibyte_text_stays_utf8_and_columns_count_characters() {
    let rules = parse_rules(
        "g.toml",
        "[[rule]]\nid = \"r\"\nkind = \"forbidden\"\nreason = \"x\"\nfiles = [\"**\"]\nsymbols = [\"bad\"]\n",
    )
    .unwrap();
    let src = "// é\nlet s = \"ünïcödé\"; bad();\n";
    let FileResult::Checked { found, .. } = check_file(&rules, "a.rs", src.as_bytes()) else {
        panic!("skipped")
    };
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].col), (2, 20));
}

#[test]
fn language_by_extension() {
    assert_eq!(Lang::of("a/b.rs"), Some(Lang::Rust));
    assert_eq!(Lang::of("a/b.mts"), Some(Lang::TypeScript));
    assert_eq!(Lang::of("b.tsx"), Some(Lang::Tsx));
    assert_eq!(Lang::of("b.cjs"), Some(Lang::JavaScript));
    assert_eq!(Lang::of("b.pyi"), Some(Lang::Python));
    assert_eq!(Lang::of("b.go"), Some(Lang::Go));
    assert_eq!(Lang::of("Makefile"), None);
    assert_eq!(Lang::of("b.toml"), None);
}

#[test]
fn symbols_match_on_word_boundaries() {
    let re = Regex::new(&symbol_regex("listDir")).unwrap();
    assert!(re.is_match("x = listDir(p)"));
    assert!(!re.is_match("x = listDirs(p)"));
    assert!(!re.is_match("x = mylistDir(p)"));
    let re = Regex::new(&symbol_regex("tools::")).unwrap();
    assert!(re.is_match("use crate::tools::x"));
    assert!(!re.is_match("use crate::mytools::x"));
    let re = Regex::new(&symbol_regex("spawn(")).unwrap();
    assert!(re.is_match("spawn(cmd)"));
    assert!(!re.is_match("respawn(cmd)"));
}

const ENTRY: &str = r#"
[[rule]]
id = "entry"
kind = "entry-point"
reason = "surfaces call only call"
files = ["src/surfaces/**"]
receivers = ["dispatcher", "ToolDispatcher"]
entry = ["call"]
"#;

fn violations(rules: &str, path: &str, src: &str) -> Vec<Violation> {
    let rules = parse_rules("g.toml", rules).unwrap();
    match check_file(&rules, path, src.as_bytes()) {
        FileResult::Checked { found, .. } => found,
        FileResult::Skipped(s) => panic!("skipped: {s:?}"),
    }
}

#[test]
fn entry_point_rules_see_member_shapes() {
    let src = "await dispatcher.call(x);\nToolDispatcher.call(y);\ndispatcher.locks.take();\nthis.dispatcher?.reset();\n// dispatcher.reset()\n";
    let v = violations(ENTRY, "src/surfaces/mcp/server.ts", src);
    let at: Vec<(usize, usize)> = v.iter().map(|v| (v.line, v.col)).collect();
    assert_eq!(at, vec![(3, 1), (4, 6)], "{v:#?}");
    assert!(v[0].what.contains("`locks`"), "{}", v[0].what);
    // Out of scope: nothing.
    assert!(violations(ENTRY, "src/tools/dispatch.ts", src).is_empty());
}

#[test]
fn confined_rules_allow_listed_files_only() {
    let rules = r#"
[[rule]]
id = "spawn"
kind = "confined"
reason = "only the runtime spawns"
allow = ["src/runtime/*.ts"]
patterns = ['\bspawn\(']
"#;
    assert!(violations(rules, "src/runtime/exec.ts", "spawn(x)\n").is_empty());
    let v = violations(rules, "src/tools/x.ts", "const a = 1; spawn(x)\n");
    assert_eq!((v[0].line, v[0].col, v[0].rule.as_str()), (1, 14, "spawn"));
    // `*` does not cross a directory.
    assert_eq!(
        violations(rules, "src/runtime/deep/x.ts", "spawn(x)\n").len(),
        1
    );
}

#[test]
fn code_mode_ignores_comments_and_strings_all_mode_does_not() {
    let rule = |mode: &str| {
        format!(
            "[[rule]]\nid = \"r\"\nkind = \"forbidden\"\nreason = \"x\"\nmode = \"{mode}\"\nfiles = [\"**\"]\nsymbols = [\"listDir\"]\n"
        )
    };
    let src = "// listDir\nconst s = \"listDir\";\n";
    assert!(violations(&rule("code"), "a.ts", src).is_empty());
    assert_eq!(violations(&rule("all"), "a.ts", src).len(), 2);
    // No grammar for the extension: matched as it is.
    assert_eq!(violations(&rule("code"), "a.txt", src).len(), 2);
}

#[test]
fn binary_and_non_utf8_files_are_skipped() {
    let rules = parse_rules("g.toml", ENTRY).unwrap();
    let mut bin = b"dispatcher.reset()".to_vec();
    bin.push(0);
    assert!(matches!(
        check_file(&rules, "src/surfaces/a.ts", &bin),
        FileResult::Skipped(Skipped {
            why: SkipReason::Binary,
            ..
        })
    ));
    assert!(matches!(
        check_file(&rules, "src/surfaces/a.ts", b"dispatcher.reset(\xff)"),
        FileResult::Skipped(Skipped {
            why: SkipReason::NotUtf8,
            ..
        })
    ));
}

fn rules_error(text: &str) -> RulesError {
    parse_rules("guard.toml", text).unwrap_err()
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let e = rules_error(
        "version = 1\n\n[[rule]]\nid = \"a\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"x\"]\nsymbols = [\"s\"]\n\n[[rule]]\nid = \"b\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"x\"]\nsymbol = [\"s\"]\n",
    );
    assert_eq!((e.line, e.key.as_str()), (15, "rule[1].symbol"), "{e}");
    assert!(e.to_string().starts_with("guard.toml:15:"), "{e}");
    let e = rules_error("versio = 1\n");
    assert_eq!((e.line, e.key.as_str()), (1, "versio"), "{e}");
}

#[test]
fn bad_glob_and_regex_name_file_line_and_key() {
    let e = rules_error(
        "[[rule]]\nid = \"a\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"src/**\", \"src/[z-a]\"]\nsymbols = [\"s\"]\n",
    );
    assert_eq!(
        (e.line, e.col, e.key.as_str()),
        (5, 20, "rule[0].files"),
        "{e}"
    );
    assert!(e.message.contains("invalid glob"), "{e}");
    let e = rules_error(
        "[[rule]]\nid = \"a\"\nkind = \"confined\"\nreason = \"r\"\nallow = [\"x\"]\npatterns = [\n  'ok',\n  'bad(',\n]\n",
    );
    assert_eq!((e.line, e.key.as_str()), (8, "rule[0].patterns"), "{e}");
    assert!(e.message.contains("invalid regular expression"), "{e}");
}

#[test]
fn other_bad_rules_are_errors() {
    let base = "[[rule]]\nid = \"a\"\nreason = \"r\"\n";
    let cases = [
        (
            "kind = \"nope\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\n",
            "rule[0].kind",
        ),
        ("kind = \"forbidden\"\nsymbols=[\"s\"]\n", "rule[0].files"),
        ("kind = \"forbidden\"\nfiles=[\"x\"]\n", "rule[0].symbols"),
        (
            "kind = \"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\nseverity=\"fatal\"\n",
            "rule[0].severity",
        ),
        (
            "kind = \"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\nmode=\"some\"\n",
            "rule[0].mode",
        ),
        (
            "kind = \"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\nallow=[\"y\"]\n",
            "rule[0].allow",
        ),
        (
            "kind = \"entry-point\"\nfiles=[\"x\"]\nentry=[\"call\"]\n",
            "rule[0].receivers",
        ),
        (
            "kind = \"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\nreceivers=[\"d\"]\n",
            "rule[0].receivers",
        ),
    ];
    for (rest, key) in cases {
        let e = rules_error(&format!("{base}{rest}"));
        assert_eq!(e.key, key, "{rest}: {e}");
        assert!(e.line > 0, "{e}");
    }
    let dup = format!("{base}kind=\"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\n{base}kind=\"forbidden\"\nfiles=[\"x\"]\nsymbols=[\"s\"]\n");
    assert_eq!(rules_error(&dup).key, "rule[1].id");
    assert_eq!(rules_error("version = 2\n").key, "version");
}

#[test]
fn baseline_ratchet_marks_known_and_reports_stale() {
    let rules = r#"
[[rule]]
id = "r"
kind = "forbidden"
reason = "x"
files = ["**"]
symbols = ["bad"]
"#;
    let mut report = GuardReport {
        violations: violations(rules, "a.rs", "bad();\nok();\nbad();\n"),
        ..GuardReport::default()
    };
    assert_eq!(report.errors(), 2);
    let b = Baseline::from_report(&report);
    assert_eq!(b.violations.len(), 2);
    assert_eq!(b.violations[1].occurrence, 1);
    b.apply(&mut report);
    assert_eq!((report.errors(), report.baselined()), (0, 2));
    assert!(!report.failed());
    // One fixed (the second occurrence gone), lines moved: the other still matches, one stale.
    let mut fixed = GuardReport {
        violations: violations(rules, "a.rs", "// moved\nbad();\n"),
        ..GuardReport::default()
    };
    b.apply(&mut fixed);
    assert_eq!(
        (fixed.errors(), fixed.baselined(), fixed.stale.len()),
        (0, 1, 1)
    );
    assert!(fixed.failed());
    assert_eq!(fixed.stale[0].occurrence, 1);
}

#[test]
fn selftest_trees_fail_per_rule_kind_and_the_clean_tree_passes() {
    let runs = selftest_runs();
    assert_eq!(runs.len(), SELFTEST_FAULTS.len() + 1);
    for (name, report) in runs {
        let case = &report.cases[0];
        assert_eq!(case.id, "guard.rules@source#guard-1");
        match name {
            Some(fault) => {
                assert_eq!(
                    case.verdict,
                    crate::engine::check::Verdict::Fail,
                    "{fault}: {case:?}"
                );
                let (_, file, _) = SELFTEST_FAULTS.iter().find(|f| f.0 == fault).unwrap();
                assert!(
                    case.evidence
                        .iter()
                        .any(|e| e.starts_with(&format!("{file}:"))),
                    "{fault}: {:?}",
                    case.evidence
                );
            }
            None => assert_eq!(
                case.verdict,
                crate::engine::check::Verdict::Pass,
                "{case:?}"
            ),
        }
    }
}

#[test]
fn a_missing_key_names_its_rule() {
    let e = rules_error(
        "[[rule]]\nid = \"a\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"x\"]\nsymbols = [\"s\"]\n\n[[rule]]\nid = \"b\"\nkind = \"forbidden\"\nfiles = [\"x\"]\nsymbols = [\"s\"]\n",
    );
    assert!(e.message.contains("missing field `reason`"), "{e}");
    assert_eq!(e.key, "rule[1].reason", "{e}");
    assert!(e.line >= 8, "{e}");
}

/// The rows of docs/guard.md's "Rules are textual" table, for `receivers = ["dispatcher"]`,
/// `entry = ["call"]`.
#[test]
fn the_documented_textual_limits_hold() {
    let rules = "[[rule]]\nid = \"e\"\nkind = \"entry-point\"\nreason = \"r\"\nfiles = [\"**\"]\nreceivers = [\"dispatcher\"]\nentry = [\"call\"]\n";
    let members = |src: &str| -> Vec<String> {
        violations(rules, "s.ts", src)
            .iter()
            .map(|v| v.what.split('`').nth(1).unwrap_or("").to_string())
            .collect()
    };
    assert!(members("await dispatcher.call(params);\n").is_empty());
    assert_eq!(members("dispatcher.reset();\n"), ["reset"]);
    assert_eq!(members("this.dispatcher?.locks.clear();\n"), ["locks"]);
    assert!(members("// dispatcher.reset()\n").is_empty());
    assert!(members("const d = dispatcher; d.reset();\n").is_empty());
    assert!(members("import { reset } from \"../tools/dispatch\"; reset();\n").is_empty());
    assert!(members("dispatcher[\"reset\"]();\n").is_empty());
    assert_eq!(members("config.dispatcher.clone();\n"), ["clone"]);
    let forbidden = "[[rule]]\nid = \"f\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"**\"]\nsymbols = [\"listDir\"]\n";
    let v = violations(
        forbidden,
        "s.ts",
        "import { listDir as ls } from \"./fs\";\nls(p);\n",
    );
    assert_eq!((v.len(), v[0].line, v[0].col), (1, 1, 10));
}

#[test]
fn the_prefilter_never_skips_a_match_that_appears_only_after_stripping() {
    // Neither `dispatcher.tools` nor `spawn(` is in the raw text: a comment sits between the
    // receiver and the member, and between `spawn` and `(`. Both match once it is blanked.
    let rules = r#"
[[rule]]
id = "entry"
kind = "entry-point"
reason = "only call"
files = ["**"]
receivers = ["dispatcher"]
entry = ["call"]

[[rule]]
id = "spawn"
kind = "forbidden"
reason = "no spawn"
files = ["**"]
patterns = ['\bspawn\s*\(']
"#;
    let src = "dispatcher\n    // note\n    .tools();\nspawn /* c */ (1);\n";
    let found = violations(rules, "a.rs", src);
    let at: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|v| (v.rule.as_str(), v.line, v.col))
        .collect();
    assert_eq!(at, vec![("entry", 1, 1), ("spawn", 4, 1)], "{found:?}");
}

#[test]
fn a_file_over_the_parse_cap_is_matched_unparsed() {
    let rules = parse_rules(
        "g.toml",
        "[[rule]]\nid = \"r\"\nkind = \"forbidden\"\nreason = \"x\"\nfiles = [\"**\"]\nsymbols = [\"bad\"]\n",
    )
    .unwrap();
    // A comment naming the symbol: blanked when parsed, matched when over the cap.
    let mut big = String::from("// bad\n");
    while big.len() <= PARSE_CAP {
        big.push_str("let x = 1; // filler filler filler filler filler filler filler\n");
    }
    let FileResult::Checked {
        parsed,
        unparsed_large,
        found,
    } = check_file(&rules, "big.rs", big.as_bytes())
    else {
        panic!("skipped")
    };
    assert!(!parsed && unparsed_large);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].line, found[0].col), (1, 4));
    // Under the cap the same comment is blanked.
    let FileResult::Checked {
        parsed,
        unparsed_large,
        found,
    } = check_file(&rules, "small.rs", b"// bad\nfn f() {}\n")
    else {
        panic!("skipped")
    };
    assert!(parsed && !unparsed_large && found.is_empty());
}

#[test]
fn a_file_over_the_read_cap_is_not_read_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.rs");
    std::fs::write(&p, "0123456789bad\n").unwrap();
    assert_eq!(read_capped(&p, 14).unwrap().map(|b| b.len()), Some(14));
    assert_eq!(read_capped(&p, 13).unwrap(), None);
    let r = GuardReport {
        skipped: vec![Skipped {
            path: "huge.rs".into(),
            why: SkipReason::TooLarge,
            detail: String::new(),
        }],
        files_unparsed_large: 2,
        ..GuardReport::default()
    };
    let console = render_console(&r, true);
    assert!(console.contains("skipped: huge.rs (too large"), "{console}");
    assert!(
        console.contains("2 matched unparsed (over 4 MiB)"),
        "{console}"
    );
    let json = to_json(&r);
    assert_eq!(json["files_unparsed_large"], 2);
    assert_eq!(json["skipped"][0]["why"], "too-large");
}

#[test]
fn javascript_regex_literals_and_jsx_text_are_blanked() {
    let src = "const re = /secret\\(/g;\nsecret(1);\n";
    for lang in [Lang::JavaScript, Lang::TypeScript] {
        let out = stripped(lang, src);
        assert_eq!(out.matches("secret").count(), 1, "{lang:?}: {out}");
        assert!(out.contains("secret(1);"));
    }
    let jsx = "const e = <p>call secret() here {secret()}</p>;\n";
    for lang in [Lang::JavaScript, Lang::Tsx] {
        let out = stripped(lang, jsx);
        assert_eq!(out.matches("secret").count(), 1, "{lang:?}: {out}");
        assert!(out.contains("{secret()}"));
    }
}

#[test]
fn pattern_prefixes_are_literals_every_match_starts_with() {
    assert_eq!(pattern_prefix(r"\bspawn\s*\(").as_deref(), Some("spawn"));
    assert_eq!(
        pattern_prefix(r"\bstd::process::\{[^}]*\bCommand\b").as_deref(),
        Some("std::process::")
    );
    assert_eq!(pattern_prefix(r"colou?r").as_deref(), Some("colo"));
    assert_eq!(pattern_prefix(r"a+b"), None);
    assert_eq!(pattern_prefix(r"\b(std|tokio)::\{"), None);
    assert_eq!(pattern_prefix(r"foo|bar"), None);
    assert_eq!(pattern_prefix(r"(?i)spawn"), None);
    assert_eq!(pattern_prefix(r"^spawn"), None);
    assert_eq!(pattern_prefix(r"[a-z]+"), None);
}

#[test]
fn rules_with_cr_only_line_endings_name_a_line_and_a_key() {
    let e = rules_error("version = 1\r[[rule]]\rid = \"x\"\r");
    assert_eq!((e.line, e.col, e.key.as_str()), (1, 12, "version"), "{e}");
    let e = rules_error("version = 1\n[[rule]]\rid = \"x\"\n");
    assert_eq!((e.line, e.key.as_str()), (2, "rule[0]"), "{e}");
}

#[test]
fn rules_that_are_not_utf8_name_the_line_column_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("guard.toml");
    std::fs::write(&path, b"version = 1\n[[rule]]\nid = \"x\xff\"\n").unwrap();
    let e = load_rules(&path).unwrap_err();
    assert_eq!((e.line, e.col, e.key.as_str()), (3, 8, "rule[0].id"), "{e}");
    assert!(e.message.contains("not valid UTF-8"), "{e}");
}
