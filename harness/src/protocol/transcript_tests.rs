//! Unit tests of `transcript`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

#[test]
fn invalid_utf8_names_the_line_column_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut bytes = format!("{}\n", head()).into_bytes();
    bytes.extend_from_slice(b"{\"seq\":1,\"text\":\"a\xff\"}\n");
    std::fs::write(&path, bytes).unwrap();
    let e = load(&path).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (2, Some("text")), "{e}");
    assert!(
        e.message.contains("column 19") && e.message.contains("not valid UTF-8"),
        "{e}"
    );
}

#[test]
fn cr_only_line_endings_are_named() {
    let text = format!("{}\r{}\r", head(), head());
    let e = parse("t.jsonl", &text).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    assert!(
        e.message.contains("CR only") && e.message.contains("column"),
        "{e}"
    );
}

#[test]
fn a_member_is_found_before_a_column() {
    assert_eq!(last_member(r#"{"a":1,"b":"x\"y"#).as_deref(), Some("b"));
    assert_eq!(last_member(r#"{"a":"k\":"#).as_deref(), Some("a"));
    assert_eq!(last_member("garbage"), None);
}

#[test]
fn a_transcript_may_start_with_a_byte_order_mark() {
    let header = r#"{"format":"parity-transcript/1","parity":"0.1.0","protocol":"mcp","era":"legacy","protocol_version":"2025-11-25","transport":"stdio","command":["x"],"started_unix_ms":1,"redaction":[]}"#;
    let with = parse("t.jsonl", &format!("\u{FEFF}{header}\n")).unwrap();
    let without = parse("t.jsonl", &format!("{header}\n")).unwrap();
    assert_eq!(with.header.protocol, without.header.protocol);
}

fn head() -> String {
    format!(r#"{{"format":"{FORMAT}","parity":"0.1.0","protocol":"mcp","transport":"stdio"}}"#)
}

#[test]
fn write_json_is_to_json() {
    let mut evs = vec![
        Event::line(1, 2, Direction::C2s, br#"{"a":"\u00e9\"\\"}"#.to_vec()),
        Event::line(
            2,
            3,
            Direction::Stderr,
            "tab\there é \u{1}".as_bytes().to_vec(),
        ),
        Event::line(3, 4, Direction::S2c, vec![0xff]),
        Event::line(4, 5, Direction::Exit, Vec::new()),
    ];
    evs[1].partial = true;
    evs[0].len = Some(99);
    evs[0].sha256 = Some("ab".into());
    evs[3].code = Some(3);
    evs[3].status = Some("exit status: 3".into());
    for e in evs {
        let mut out = Vec::new();
        e.write_json(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), e.to_json().to_string());
    }
}

#[test]
fn round_trip_and_base64() {
    let mut ev = Event::line(1, 3, Direction::S2c, vec![0xff, b'a']);
    ev.partial = true;
    let text = format!("{}\n{}\n", head(), ev.to_json());
    let t = parse("t.jsonl", &text).unwrap();
    assert_eq!(t.events[0].1, ev);
    assert_eq!(t.events[0].0, 2);
}

#[test]
fn errors_name_line_and_field() {
    let e = parse("t.jsonl", "").unwrap_err();
    assert_eq!((e.line, e.message.contains("missing header")), (1, true));
    let e = parse("t.jsonl", r#"{"seq":1}"#).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("format"));
    let e = parse("t.jsonl", r#"{"format":"parity-transcript/9"}"#).unwrap_err();
    assert!(e.to_string().contains("unknown format version"), "{e}");
    let ev = |s: u64| Event::line(s, 0, Direction::C2s, b"{}".to_vec()).to_json();
    let e = parse("t.jsonl", &format!("{}\n{}\n{}\n", head(), ev(1), ev(3))).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (3, Some("seq")));
    let e = parse("t.jsonl", &format!("{}\n{}\n{{\"seq\":2,", head(), ev(1))).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.to_string().starts_with("t.jsonl:3: not JSON"), "{e}");
    let e = parse(
        "t.jsonl",
        &format!(
            "{}\n{{\"seq\":1,\"t_ms\":0,\"dir\":\"c2s\",\"raw\":\"x\",\"zz\":1}}",
            head()
        ),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "t.jsonl:2: field `zz`: unknown field");
}

#[test]
fn fast_reader_agrees_with_the_general_reader() {
    let lines = [
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"{\"a\":1}"}"#,
        r#"{"dir":"s2c","seq":1,"t_ms":5,"raw":"x\u00e9","len":9,"sha256":"ab","partial":true}"#,
        r#"{"seq":1,"t_ms":0,"dir":"stderr","raw_b64":"/2E="}"#,
        r#"{"seq":1,"t_ms":0,"dir":"exit","status":"exit status: 0","code":-9}"#,
        r#"{"seq":1,"t_ms":0,"dir":"exit"}"#,
        r#" {"seq":1,"t_ms":0,"dir":"c2s","raw":"x"}"#,
        // Lines the fast reader leaves to the general one:
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":null}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"a","raw":"b"}"#,
        r#"[1,0,"c2s","x"]"#,
        r#"{"seq":1,"t_ms":0,"dir":"exit","code":4294967296}"#,
        r#"{"seq":1,"t_ms":0,"dir":"exit","raw":"x"}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"x","code":1}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"x","len":3}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"x","raw_b64":"eA=="}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s"}"#,
        r#"{"seq":1.0,"t_ms":0,"dir":"c2s","raw":"x"}"#,
        r#"{"seq":1,"t_ms":-0,"dir":"c2s","raw":"x"}"#,
        r#"{"seq":1,"t_ms":0,"dir":"up","raw":"x"}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw_b64":"!!"}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"x","zz":1}"#,
        r#"{"seq":1,"t_ms":0,"dir":"c2s","raw":"x"} x"#,
    ];
    for l in lines {
        let general = object("t.jsonl", 2, l).and_then(event_from);
        if let Some(fast) = fast_event(l) {
            assert_eq!(Ok(fast), general, "{l}");
        }
        let whole = parse("t.jsonl", &format!("{}\n{l}\n", head()));
        assert_eq!(
            whole.map(|t| t.events),
            general.map(|e| vec![(2, e)]),
            "{l}"
        );
    }
}

#[test]
fn redaction_covers_env_args_authorization_bearer_and_user() {
    let env = vec![
        ("MY_API_TOKEN".to_string(), "canary-1234567".to_string()),
        ("HOME".to_string(), "/home/someone".to_string()),
        ("DB_PASSWORD".to_string(), "pa\"ss\\word".to_string()),
    ];
    let argv = vec![
        "srv".to_string(),
        "--api-key".to_string(),
        "argsecret99".to_string(),
        "--password=pw-secret-1".to_string(),
    ];
    let r = Redactor::new(&env, &argv, &["acct-[0-9]+".to_string()]).unwrap();
    let line = br#"{"q":"pa\"ss\\word","a":"canary-1234567","b":"argsecret99 pw-secret-1","Authorization":"Bearer abc.def","c":"bearer xyz123","d":"acct-42","e":"/home/someone"}"#;
    let out = String::from_utf8(r.apply(line).into_owned()).unwrap();
    for s in [
        "canary-1234567",
        "argsecret99",
        "pw-secret-1",
        "abc.def",
        "xyz123",
        "acct-42",
    ] {
        assert!(!out.contains(s), "{s} leaked: {out}");
    }
    // A secret holding a quote and a backslash is found in its JSON-escaped form too.
    assert!(!out.contains(r#"ss\\word"#), "{out}");
    assert!(out.contains(r#""q":"[REDACTED:env:DB_PASSWORD]""#), "{out}");
    assert!(out.contains("/home/someone"), "{out}");
    assert!(
        out.contains(r#""Authorization":"[REDACTED:authorization]""#),
        "{out}"
    );
    assert!(serde_json::from_str::<Value>(&out).is_ok(), "{out}");
    assert!(Redactor::new(&[], &[], &["(".to_string()]).is_err());
}

#[test]
fn redaction_keeps_json_valid_and_finds_other_encodings() {
    let env = vec![("SVC_SECRET".to_string(), "sec<r>et/é".to_string())];
    let argv: Vec<String> = [
        "docker",
        "run",
        "-e",
        "GITHUB_TOKEN=ghp_abc",
        "img",
        "--key",
        "k1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let r = Redactor::new(&env, &argv, &[]).unwrap();
    let lines: [&[u8]; 5] = [
            // An escaped Authorization header inside a JSON string, and a schema property.
            br#"{"cmd":"curl -H \"Authorization: Bearer tok123456\" x","p":{"authorization":{"type":"string"}}}"#,
            // Go's and Python's escaping of the same secret.
            br#"{"go":"sec\u003cr\u003eet\/\u00e9","py":"sec<r>et/\u00E9"}"#,
            br#"{"url":"postgres://user:hunter22@db:5432/x"}"#,
            br#"{"t":"ghp_abc"}"#,
            b"\xff authorization: sekrit-value",
        ];
    for line in lines {
        let out = r.apply(line).into_owned();
        let text = String::from_utf8_lossy(&out);
        for leak in [
            "tok123456",
            "sec\\u003c",
            "sec<r>",
            "hunter22",
            "ghp_abc",
            "sekrit",
        ] {
            assert!(!text.contains(leak), "{leak} leaked: {text}");
        }
        if line[0] == b'{' {
            assert!(serde_json::from_slice::<Value>(&out).is_ok(), "{text}");
        }
    }
    let schema = r.apply(lines[0]).into_owned();
    assert!(String::from_utf8_lossy(&schema).contains(r#""authorization":{"type":"string"}"#));
    // In the header, secret arguments are replaced whole, whatever their length.
    assert_eq!(
        r.command(&argv),
        vec![
            "docker",
            "run",
            "-e",
            "GITHUB_TOKEN=[REDACTED:arg:3]",
            "img",
            "--key",
            "[REDACTED:arg:6]"
        ]
    );
}
