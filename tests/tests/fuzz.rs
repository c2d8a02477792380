//! Property tests over arbitrary and mutated input (docs/architecture.md §Fuzzing): the newline
//! frame decoder, the SSE parser and HTTP answers, and every file-format loader (target, guard
//! rules, scenario, baseline, transcript), seeded by mutating the files and documentation
//! examples shipped in the repository. Each must not panic, must end (inputs are bounded), and
//! every loader error must name the file and a 1-based line.
//!
//! `cargo test` runs a modest number of cases per property; `PROPTEST_CASES=N` sets it (the
//! raw HTTP property, which opens a connection per case, runs N/100). No regression files are
//! written: a failure prints its minimal input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parity_harness::transport::wire::{classify, LineReader, OVER_CAP_PREFIX};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Cases per property unless `PROPTEST_CASES` says otherwise.
const CASES: u32 = 160;

fn config(divisor: u32) -> Config {
    let cases = match std::env::var("PROPTEST_CASES") {
        Ok(v) => v.parse::<u32>().unwrap_or(CASES),
        Err(_) => CASES,
    };
    Config {
        cases: (cases / divisor).max(8),
        failure_persistence: None,
        ..Config::default()
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The fenced code blocks of `lang` in the docs.
fn doc_blocks(lang: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let fence = format!("```{lang}");
    let Ok(dir) = std::fs::read_dir(repo().join("docs")) else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            if l.trim() == fence {
                let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
                out.push(format!("{}\n", block.join("\n")).into_bytes());
            }
        }
    }
    out
}

fn files_under(dir: &Path, ext: &str, out: &mut Vec<Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
}

struct Seeds {
    target: Vec<Vec<u8>>,
    guard: Vec<Vec<u8>>,
    scenario: Vec<Vec<u8>>,
    baseline: Vec<Vec<u8>>,
    transcript: Vec<Vec<u8>>,
}

fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let toml = doc_blocks("toml");
        let mut guard: Vec<Vec<u8>> = toml
            .iter()
            .filter(|b| String::from_utf8_lossy(b).contains("[[rule]]"))
            .cloned()
            .collect();
        for p in ["guard.toml", "tests/fixtures/guard/ts-project/guard.toml"] {
            if let Ok(b) = std::fs::read(repo().join(p)) {
                guard.push(b);
            }
        }
        let target: Vec<Vec<u8>> = toml
            .iter()
            .filter(|b| !String::from_utf8_lossy(b).contains("[[rule]]"))
            .cloned()
            .collect();
        let mut scenario = Vec::new();
        files_under(&repo().join("harness/scenarios"), "yaml", &mut scenario);
        let baseline: Vec<Vec<u8>> = doc_blocks("yaml")
            .into_iter()
            .filter(|b| String::from_utf8_lossy(b).contains("expected-failures"))
            .collect();
        let mut transcript = Vec::new();
        files_under(&repo().join("harness/scenarios"), "jsonl", &mut transcript);
        for (name, set) in [
            ("target", &target),
            ("guard", &guard),
            ("scenario", &scenario),
            ("baseline", &baseline),
            ("transcript", &transcript),
        ] {
            assert!(!set.is_empty(), "no {name} seeds found in the repository");
        }
        Seeds {
            target,
            guard,
            scenario,
            baseline,
            transcript,
        }
    })
}

/// Bytes that make file formats go wrong: line endings, quotes, brackets, invalid UTF-8, a
/// byte-order mark, YAML and TOML syntax.
const TOKENS: &[&[u8]] = &[
    b"\r",
    b"\n",
    b"\r\n",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\"",
    b"'",
    b"[",
    b"]",
    b"{",
    b"}",
    b":",
    b"=",
    b"- ",
    b"#",
    b"\\",
    b"\t",
    b"\0",
    b"[[rule]]",
    b"version = 2",
    b"version: 7",
    b"&a ",
    b"*a",
    b"!!binary ",
    b"~",
    b"null",
    b"1e999",
    b"-9223372036854775809",
    b"\"\"\"",
    b"'''",
    b"{{",
    b",",
    b"|",
    b">",
    b"? ",
    b"%YAML 1.2\n",
    b"---\n",
    b"...\n",
    b"\\u0000",
    b"\"seq\":",
    b"\"dir\":\"s2c\"",
    b"  ",
    b"\x7f",
    b"\xe2\x80\xa8",
];

/// One edit of a seed.
#[derive(Debug, Clone)]
enum Op {
    Insert(usize, Vec<u8>),
    Token(usize, usize),
    Delete(usize, usize),
    Set(usize, u8),
    Duplicate(usize, usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(a, b)| Op::Insert(a, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Op::Token(a, t)),
        (any::<usize>(), 1usize..64).prop_map(|(a, n)| Op::Delete(a, n)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Op::Set(a, b)),
        (any::<usize>(), 1usize..256, any::<usize>())
            .prop_map(|(a, n, to)| Op::Duplicate(a, n, to)),
    ]
}

/// `seed` with `ops` applied; at most 256 KiB.
fn mutate(seed: &[u8], ops: &[Op]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for op in ops {
        let at = |a: usize, len: usize| if len == 0 { 0 } else { a % (len + 1) };
        match op {
            Op::Insert(a, bytes) => {
                let i = at(*a, b.len());
                b.splice(i..i, bytes.iter().copied());
            }
            Op::Token(a, t) => {
                let i = at(*a, b.len());
                b.splice(i..i, TOKENS[*t].iter().copied());
            }
            Op::Delete(a, n) => {
                let i = at(*a, b.len());
                let end = (i + n).min(b.len());
                b.drain(i..end);
            }
            Op::Set(a, v) => {
                if !b.is_empty() {
                    let i = a % b.len();
                    b[i] = *v;
                }
            }
            Op::Duplicate(a, n, to) => {
                let i = at(*a, b.len());
                let end = (i + n).min(b.len());
                let piece = b[i..end].to_vec();
                let j = at(*to, b.len());
                b.splice(j..j, piece);
            }
        }
        b.truncate(256 * 1024);
    }
    b
}

/// A mutated seed from `set`, or (one time in five) arbitrary bytes.
fn input(set: fn(&Seeds) -> &Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = set(seeds()).len();
    prop_oneof![
        4 => (0..n, prop::collection::vec(op(), 0..10))
            .prop_map(move |(i, ops)| mutate(&set(seeds())[i], &ops)),
        1 => prop::collection::vec(any::<u8>(), 0..2048),
    ]
}

/// Whether `shown` starts with `file:LINE` for a line of 1 or more.
fn located(shown: &str, file: &str) -> bool {
    let Some(rest) = shown.strip_prefix(file).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u64>().is_ok_and(|l| l >= 1)
}

/// Writes `bytes` as `name` in a fresh directory and gives its path (kept alive by the dir).
fn write(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let shown = path.display().to_string();
    (dir, path, shown)
}

/// The error's text must be located and bounded (a few lines, whatever the input).
fn check_error(shown: &str, file: &str, input: &[u8]) -> Result<(), TestCaseError> {
    prop_assert!(
        located(shown, file),
        "unlocated error: {shown}\ninput: {:?}",
        String::from_utf8_lossy(input)
    );
    prop_assert!(
        shown.len() < file.len() + 4000,
        "an error of {} bytes: {}",
        shown.len(),
        &shown[..shown.len().min(600)]
    );
    Ok(())
}

/// Inputs the random ones rarely hit: empty, blank, a lone line ending, a byte-order mark
/// alone, one invalid byte. Every loader's error on them is located too.
#[test]
fn every_loader_locates_its_errors_on_edge_inputs() {
    let edges: [&[u8]; 8] = [
        b"",
        b"\n",
        b"\r",
        b"\r\n",
        b" \t ",
        b"\xef\xbb\xbf",
        b"\xff",
        b"#\n",
    ];
    let known = |c: &str| {
        parity_harness::engine::select::known_check(&parity_harness::profiles::builtin(), c, &[])
    };
    for bytes in edges {
        let errors: Vec<(String, String)> = vec![
            {
                let (_d, p, f) = write("parity.toml", bytes);
                (
                    parity_harness::engine::target::load(&p)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default(),
                    f,
                )
            },
            {
                let (_d, p, f) = write("guard.toml", bytes);
                (
                    parity_harness::profiles::guard::load_rules(&p)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default(),
                    f,
                )
            },
            {
                let (_d, p, f) = write("s.yaml", bytes);
                (
                    parity_harness::engine::scenario::load_path(&p)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default(),
                    f,
                )
            },
            {
                let (_d, p, f) = write("baseline.yaml", bytes);
                (
                    parity_harness::reports::baseline::load(
                        &p,
                        &parity_harness::reports::baseline::Known {
                            check: &known,
                            bindings: &parity_harness::profiles::builtin().bindings(),
                        },
                    )
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
                    f,
                )
            },
            {
                let (_d, p, f) = write("t.jsonl", bytes);
                (
                    parity_harness::protocol::transcript::load(&p)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default(),
                    f,
                )
            },
        ];
        for (shown, file) in errors {
            assert!(
                shown.is_empty() || located(&shown, &file),
                "{bytes:?}: {shown}"
            );
        }
    }
}

proptest! {
    #![proptest_config(config(1))]

    #[test]
    fn target_files(bytes in input(|s| &s.target)) {
        let (_d, path, file) = write("parity.toml", &bytes);
        if let Err(e) = parity_harness::engine::target::load(&path) {
            check_error(&e.to_string(), &file, &bytes)?;
        }
    }

    #[test]
    fn guard_rules_files(bytes in input(|s| &s.guard)) {
        let (_d, path, file) = write("guard.toml", &bytes);
        if let Err(e) = parity_harness::profiles::guard::load_rules(&path) {
            check_error(&e.to_string(), &file, &bytes)?;
        }
    }

    #[test]
    fn scenario_files(bytes in input(|s| &s.scenario)) {
        let (_d, path, file) = write("s.yaml", &bytes);
        if let Err(e) = parity_harness::engine::scenario::load_path(&path) {
            check_error(&e.to_string(), &file, &bytes)?;
        }
    }

    #[test]
    fn baseline_files(bytes in input(|s| &s.baseline)) {
        let (_d, path, file) = write("baseline.yaml", &bytes);
        let known = |c: &str| parity_harness::engine::select::known_check(&parity_harness::profiles::builtin(), c, &[]);
        if let Err(e) = parity_harness::reports::baseline::load(&path, &parity_harness::reports::baseline::Known {
            check: &known,
            bindings: &parity_harness::profiles::builtin().bindings(),
        }) {
            check_error(&e.to_string(), &file, &bytes)?;
        }
    }

    #[test]
    fn transcript_files(bytes in input(|s| &s.transcript)) {
        let (_d, path, file) = write("t.jsonl", &bytes);
        if let Err(e) = parity_harness::protocol::transcript::load(&path) {
            check_error(&e.to_string(), &file, &bytes)?;
        }
    }

    /// The newline decoder over any bytes, cap and read size: the lines it gives add up to the
    /// input; a line within the cap is kept whole, one over it as its prefix, its length and
    /// its SHA-256; classifying any line never panics.
    #[test]
    fn line_reader(
        bytes in prop_oneof![
            input(|s| &s.transcript),
            prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'{'), any::<u8>()], 0..6000),
        ],
        cap in 1usize..6000,
        chunk in 1usize..700,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let lines = rt.block_on(async {
            let reader = tokio::io::BufReader::with_capacity(chunk, std::io::Cursor::new(bytes.clone()));
            let mut r = LineReader::new(reader, cap);
            let mut out = Vec::new();
            while let Ok(Some(l)) = r.next_line().await {
                out.push(l);
            }
            out
        });
        let mut rest: &[u8] = &bytes;
        for l in &lines {
            let len = l.len as usize;
            prop_assert!(len <= rest.len());
            let (seg, after) = rest.split_at(len);
            if l.over_cap {
                prop_assert!(len > cap);
                prop_assert_eq!(&l.bytes[..], &seg[..len.min(OVER_CAP_PREFIX)]);
                let sha: String = Sha256::digest(seg).iter().map(|b| format!("{b:02x}")).collect();
                prop_assert_eq!(l.sha256.as_deref(), Some(sha.as_str()));
            } else {
                prop_assert!(len <= cap);
                prop_assert_eq!(&l.bytes[..], seg);
            }
            rest = if l.terminated {
                prop_assert_eq!(after.first(), Some(&b'\n'));
                &after[1..]
            } else {
                prop_assert!(after.is_empty());
                after
            };
            let _ = classify(&l.bytes);
        }
        prop_assert!(rest.is_empty(), "{} bytes not returned", rest.len());
    }

    /// The SSE parser and the body reading of an answer, over mutated and arbitrary bodies
    /// under each content type: no panic, and an error message of bounded size.
    #[test]
    fn sse_and_answer_bodies(
        body in prop_oneof![
            (prop::collection::vec(op(), 0..10), 0usize..3).prop_map(|(ops, i)| {
                let seed: [&[u8]; 3] = [
                    b"id: 1\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
                    b"data: {\"a\":\ndata: 1}\r\n\r\n: keepalive\rretry: 10\r\r",
                    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}",
                ];
                mutate(seed[i], &ops)
            }),
            prop::collection::vec(any::<u8>(), 0..2048),
        ],
        content_type in prop::sample::select(vec![
            Some("text/event-stream"), Some("application/json"), Some("Text/Event-Stream; charset=utf-8"),
            Some(""), Some("text/plain"), None,
        ]),
        truncated in any::<bool>(),
    ) {
        if let Err(e) = parity_harness::transport::http::parse_sse(&body) {
            prop_assert!(e.to_string().len() < 4000 + body.len() / 4);
        }
        let x = parity_harness::transport::http::HttpExchange {
            status: 200,
            headers: content_type.map(|t| vec![("content-type".to_string(), t.to_string())]).unwrap_or_default(),
            received: body.len() as u64 + u64::from(truncated),
            body,
            truncated,
            elapsed: std::time::Duration::ZERO,
        };
        let _ = x.messages();
        let _ = x.summary(Some(200));
        prop_assert_eq!(x.cap_note().is_some(), truncated);
    }
}

proptest! {
    #![proptest_config(config(100))]

    /// Raw HTTP answers (mutated and arbitrary) over a real connection: the client returns an
    /// exchange or an error before its deadline, never panics.
    #[test]
    fn raw_http_answers(
        raw in prop_oneof![
            (prop::collection::vec(op(), 0..8), 0usize..2).prop_map(|(ops, i)| {
                let seed: [&[u8]; 2] = [
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\"id\":1}\n\n",
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"id\":1}\n",
                ];
                mutate(seed[i], &ops)
            }),
            prop::collection::vec(any::<u8>(), 0..512),
        ],
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            let answer = raw.clone();
            let server = tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                if let Ok((mut sock, _)) = listener.accept().await {
                    let mut buf = vec![0u8; 16 * 1024];
                    let _ = sock.read(&mut buf).await;
                    let _ = sock.write_all(&answer).await;
                    let _ = sock.shutdown().await;
                }
            });
            let client = parity_harness::transport::http::HttpClient::new(&url).unwrap().with_body_cap(4096);
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
            let got = client
                .send(parity_harness::transport::http::HttpRequest::post_json(&serde_json::json!({"id": 1})), deadline)
                .await;
            if let Ok(x) = got {
                let _ = x.messages();
                let _ = x.summary(Some(100));
            }
            server.abort();
        });
    }
}
