//! The replay and record parts: parsing and comparing a recorded session, and the latency the
//! recording proxy adds (`parity bench --only replay`, `--only record`).

use super::*;

/// The replay part's figures: a generated transcript parsed and compared with itself, against
/// a floor of plain `serde_json::from_slice` of every line, all timed in the same run. Times
/// are medians of [`REPLAY_REPEATS`] passes, in ms; rates are messages per second.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayBench {
    /// c2s and s2c messages in the transcript (the figures are per message).
    pub messages: usize,
    /// Lines of the transcript (header, messages, the `exit` event).
    pub lines: usize,
    /// Size of the transcript text in bytes.
    pub bytes: usize,
    /// Timed passes (each: floor, parse, compare, in a rotating order).
    pub repeats: usize,
    /// Floor: `serde_json::from_slice::<Value>` of every line of the transcript.
    pub floor_ms: f64,
    /// [`crate::protocol::transcript::parse`] of the text.
    pub parse_ms: f64,
    /// [`crate::protocol::replay::Exchange::of_transcript`] of the parsed recording, then
    /// [`crate::protocol::replay::compare`] with the live side (the same session, prepared untimed).
    pub compare_ms: f64,
    /// Parse plus compare: the whole replay comparison (median of the passes' sums).
    pub total_ms: f64,
    /// `messages` ÷ floor time.
    pub floor_per_s: f64,
    /// `messages` ÷ parse time.
    pub parse_per_s: f64,
    /// `messages` ÷ compare time.
    pub compare_per_s: f64,
    /// `messages` ÷ total time: the figure judged (≥ [`REPLAY_TARGET_PER_S`]).
    pub total_per_s: f64,
    /// Messages whose bytes are the same on both sides (the rest differ in volatile values
    /// only, or in the order of notifications).
    pub identical: usize,
    /// Differences `compare` found (0: the sides differ in normalized values only).
    pub differences: usize,
}

/// The record part's figures: round trips of [`RECORD_LINE`] through `cat` directly (the
/// floor) and through `parity record --out FILE -- cat`, interleaved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordBench {
    /// Bytes of the line sent (without its newline).
    pub line_bytes: usize,
    /// Round trips through `cat` via [`Peer`].
    pub floor: Latency,
    /// Round trips through the recording proxy in front of `cat`.
    pub proxy: Latency,
    /// (proxy median − floor median) ÷ 2: a round trip crosses the proxy twice (one c2s and
    /// one s2c message). The figure judged (≤ [`RECORD_TARGET_US`]).
    pub added_per_message_us: f64,
    /// c2s and s2c events in the transcript the proxy wrote (each should equal the round
    /// trips made, warm-up included).
    pub recorded: (usize, usize),
    /// Round trips made through the proxy, warm-up included.
    pub round_trips: usize,
    /// Size of the transcript in bytes.
    pub transcript_bytes: u64,
}

/// A small deterministic generator (xorshift64*) for the replay transcript's variety.
pub(super) struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One generated `tools/call`: its name, arguments and the reference's `CallToolResult` for
/// it (`content` text, `structuredContent` outcome, `isError`), shaped as the reference
/// answers. `live` moves `status`' `since_ms` (the live server started later).
pub(super) fn replay_call(rng: &mut Rng, i: u64, live: bool) -> (&'static str, Value, Value) {
    const WORDS: [&str; 8] = [
        "alpha", "budget", "design", "notes", "review", "release", "meeting", "todo",
    ];
    let word = |rng: &mut Rng| WORDS[rng.below(WORDS.len() as u64) as usize];
    let path = |rng: &mut Rng| format!("{}/{}-{}.md", word(rng), word(rng), rng.below(1000));
    let ok = |value: Value| {
        json!({
            "content": [{"type": "text", "text": value.to_string()}],
            "structuredContent": {"outcome": "ok", "value": value, "warnings": []},
            "isError": false
        })
    };
    let refused = |code: &str, message: String| {
        json!({
            "content": [{"type": "text", "text": message}],
            "structuredContent": {"outcome": "refused", "code": code, "message": message,
                "warnings": []},
            "isError": true
        })
    };
    match rng.below(10) {
        0..=2 => {
            let p = path(rng);
            let lines: Vec<String> = (0..1 + rng.below(6))
                .map(|n| format!("{} {} {n}: {}", word(rng), word(rng), rng.below(100_000)))
                .collect();
            (
                "read_file",
                json!({"path": p}),
                ok(json!({"content": lines.join("\n")})),
            )
        }
        3 => {
            let p = path(rng);
            let message = format!("path `{p}` does not exist");
            (
                "read_file",
                json!({"path": p}),
                refused("NOT_FOUND", message),
            )
        }
        4 => {
            let entries: Vec<Value> = (0..rng.below(8))
                .map(|n| {
                    let kind = if rng.below(3) == 0 { "dir" } else { "file" };
                    json!({"name": format!("{}-{n}", word(rng)), "kind": kind})
                })
                .collect();
            (
                "list_dir",
                json!({"path": word(rng)}),
                ok(json!({"entries": entries})),
            )
        }
        5 => {
            let content = format!("{} {} {}", word(rng), word(rng), rng.below(1 << 20));
            let value = json!({"bytes_written": content.len()});
            (
                "write_file",
                json!({"path": path(rng), "content": content}),
                ok(value),
            )
        }
        6 => {
            let text = format!("{} {}", word(rng), rng.below(10_000));
            (
                "exec",
                json!({"argv": ["echo", text], "timeout_ms": 1000 + rng.below(9) * 1000}),
                ok(json!({"exit_code": 0, "stdout": format!("{text}\n"), "stderr": ""})),
            )
        }
        _ => {
            let since_ms = 1_796_049_117_270_u64 + i * 7 + if live { 3_600_000 } else { 0 };
            (
                "status",
                json!({}),
                ok(json!({"label": "active", "state": "active", "reason": null,
                    "since_ms": since_ms})),
            )
        }
    }
}

/// The c2s and s2c messages of a generated MCP session with the reference, `messages` of
/// them: the `initialize` handshake, then `tools/call` requests with varied arguments and
/// their responses shaped as the reference's (`status`, `read_file`, `list_dir`,
/// `write_file`, `exec`; some refused); every eighth call has a `notifications/progress`
/// before its response and every thirteenth a `notifications/message` with a timestamp.
///
/// `live` gives the same session as a later run of a newer build answers it: other
/// `serverInfo.version`, `since_ms` and timestamps, and the two notifications in the other
/// order when a call has both. The ids are the same; the replay normalizer (with the volatile
/// key `since_ms`) finds no difference.
pub fn replay_session(
    messages: usize,
    live: bool,
) -> Vec<(crate::protocol::transcript::Direction, Vec<u8>)> {
    use crate::protocol::transcript::Direction;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut msgs: Vec<(Direction, Value)> = Vec::with_capacity(messages + 3);
    let version = if live {
        "0.2.0"
    } else {
        env!("CARGO_PKG_VERSION")
    };
    msgs.push((
        Direction::C2s,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench-client", "version": "1.0.0"}}}),
    ));
    msgs.push((
        Direction::S2c,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "parity-reference", "version": version},
            "instructions": "Reference workspace tools for parity."}}),
    ));
    msgs.push((
        Direction::C2s,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    let mut id = 1u64;
    while msgs.len() < messages {
        let (name, arguments, result) = replay_call(&mut rng, id, live);
        let mut params = json!({"name": name, "arguments": arguments});
        if id.is_multiple_of(8) {
            params["_meta"] = json!({"progressToken": format!("p-{id}")});
        }
        msgs.push((
            Direction::C2s,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        ));
        let mut notes = Vec::new();
        if id.is_multiple_of(8) {
            notes.push(
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": format!("p-{id}"), "progress": 1, "total": 2}}),
            );
        }
        if id.is_multiple_of(13) {
            let hour = if live { 15 } else { 14 };
            notes.push(
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "info", "logger": "parity-reference",
                "data": {"at": format!("2026-11-30T{hour}:{:02}:{:02}.{:03}Z",
                    id / 60 % 60, id % 60, id % 1000), "call": name}}}),
            );
        }
        if live {
            notes.reverse();
        }
        msgs.extend(notes.into_iter().map(|n| (Direction::S2c, n)));
        msgs.push((
            Direction::S2c,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        ));
        id += 1;
    }
    msgs.truncate(messages);
    msgs.into_iter()
        .map(|(dir, v)| (dir, serde_json::to_vec(&v).unwrap_or_default()))
        .collect()
}

/// A `parity-transcript/1` text of the recorded [`replay_session`] of `messages` (as
/// `parity record` writes it), ending with an `exit` event.
pub fn replay_transcript(messages: usize) -> String {
    use crate::protocol::transcript::{Direction, Event, Header};
    let header = Header {
        parity: env!("CARGO_PKG_VERSION").into(),
        protocol: "mcp".into(),
        era: Some("legacy".into()),
        protocol_version: Some(json!("2025-11-25")),
        transport: "stdio".into(),
        command: vec!["parity".into(), "reference".into(), "mcp".into()],
        started_unix_ms: 1_796_049_117_266,
        redaction: Vec::new(),
    };
    let mut text = header.to_json().to_string();
    text.push('\n');
    let mut seq = 0u64;
    for (dir, bytes) in replay_session(messages, false) {
        seq += 1;
        let ev = Event::line(seq, seq / 20, dir, bytes);
        text.push_str(&ev.to_json().to_string());
        text.push('\n');
    }
    let mut exit = Event::line(seq + 1, seq / 20, Direction::Exit, Vec::new());
    exit.status = Some("exit status: 0".into());
    exit.code = Some(0);
    text.push_str(&exit.to_json().to_string());
    text.push('\n');
    text
}

/// The replay part: [`replay_transcript`] of `messages`, then `repeats` passes of the floor,
/// the parse and the comparison, in a rotating order.
///
/// Errors: the transcript does not parse, holds the wrong number of messages, or compares
/// with differences.
pub fn replay_speed(messages: usize, repeats: usize) -> Result<ReplayBench, String> {
    use crate::protocol::replay::{compare, Exchange, Normalizer};
    let messages = messages.max(3);
    let repeats = repeats.max(1);
    let text = replay_transcript(messages);
    let lines = text.lines().count();
    let parsed = crate::protocol::transcript::parse("bench", &text).map_err(|e| e.to_string())?;
    // The live side: the same session from a later run, as `Exchange::of_wire` gives it
    // (line 0), prepared untimed.
    let live: Vec<Exchange> = replay_session(messages, true)
        .into_iter()
        .map(|(dir, bytes)| Exchange {
            dir,
            bytes,
            line: 0,
        })
        .collect();
    let recorded_len = Exchange::of_transcript(&parsed).len();
    if recorded_len != messages || live.len() != messages {
        return Err(format!(
            "the generated sessions have {recorded_len} and {} messages, not {messages}",
            live.len()
        ));
    }
    let identical = Exchange::of_transcript(&parsed)
        .iter()
        .zip(&live)
        .filter(|(r, l)| r.bytes == l.bytes)
        .count();
    // The volatile key a user replaying against the reference gives (`status`' `since_ms`).
    let norm = Normalizer::new(Vec::new(), vec!["since_ms".into()]);
    let (mut floor, mut parse, mut comp, mut total) = (vec![], vec![], vec![], vec![]);
    let mut differences = 0;
    for rep in 0..repeats {
        let mut this_parse = Duration::ZERO;
        let mut this_compare = Duration::ZERO;
        for step in 0..3 {
            match (step + rep) % 3 {
                0 => {
                    let t0 = Instant::now();
                    for line in text.as_bytes().split(|b| *b == b'\n') {
                        if line.is_empty() {
                            continue;
                        }
                        let v: Value = serde_json::from_slice(line)
                            .map_err(|e| format!("floor: a line is not JSON: {e}"))?;
                        std::hint::black_box(v);
                    }
                    floor.push(t0.elapsed());
                }
                1 => {
                    let t0 = Instant::now();
                    let t = crate::protocol::transcript::parse("bench", &text)
                        .map_err(|e| e.to_string())?;
                    this_parse = t0.elapsed();
                    std::hint::black_box(&t);
                }
                _ => {
                    let t0 = Instant::now();
                    let recorded = Exchange::of_transcript(&parsed);
                    let diffs = compare(&recorded, &live, &norm);
                    this_compare = t0.elapsed();
                    differences = diffs.len();
                }
            }
        }
        parse.push(this_parse);
        comp.push(this_compare);
        total.push(this_parse + this_compare);
    }
    if differences > 0 {
        return Err(format!(
            "the live session compared with the recording gave {differences} difference(s)"
        ));
    }
    let med = |d: &[Duration]| {
        let mut ms: Vec<f64> = d.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        median(&ms)
    };
    let rate = |ms: f64| messages as f64 / (ms / 1e3).max(1e-9);
    let (floor_ms, parse_ms, compare_ms, total_ms) =
        (med(&floor), med(&parse), med(&comp), med(&total));
    Ok(ReplayBench {
        messages,
        lines,
        bytes: text.len(),
        repeats,
        floor_ms,
        parse_ms,
        compare_ms,
        total_ms,
        floor_per_s: rate(floor_ms),
        parse_per_s: rate(parse_ms),
        compare_per_s: rate(compare_ms),
        total_per_s: rate(total_ms),
        identical,
        differences,
    })
}

/// The record part: [`RECORD_LINE`] round trips through `cat` and through `parity record --out
/// FILE -- cat` (this binary), interleaved as the other latency parts; then both peers are
/// shut down, the transcript is read back (every line must be in it) and removed.
pub(super) async fn record_latencies(
    iterations: usize,
    warmup: usize,
) -> Result<RecordBench, String> {
    let dir = tempfile::Builder::new()
        .prefix("parity-bench-record-")
        .tempdir()
        .map_err(|e| format!("failed to create a temporary directory: {e}"))?;
    let out = dir.path().join("transcript.jsonl");
    let frame = format!("{RECORD_LINE}\n").into_bytes();
    let mut rigs = Vec::new();
    let result = async {
        let cat = PeerSpec::new("cat", Vec::new());
        let peer = Peer::spawn(&cat).map_err(|e| format!("`{}`: {e}", cat.display()))?;
        rigs.push(Rig::Frame(peer, frame.clone()));
        let out_arg = out.to_string_lossy();
        let proxy = self_spec(&["record", "--out", &out_arg, "--", "cat"]);
        let peer = Peer::spawn(&proxy).map_err(|e| format!("`{}`: {e}", proxy.display()))?;
        rigs.push(Rig::Frame(peer, frame.clone()));
        interleaved(&mut rigs, iterations, warmup).await
    }
    .await;
    close(rigs).await;
    let figures = result?;
    let (Some(floor), Some(proxy)) = (figures.first().copied(), figures.get(1).copied()) else {
        return Err("missing figures".into());
    };
    let transcript_bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let t = crate::protocol::transcript::load(&out)
        .map_err(|e| format!("the proxy's transcript: {e}"))?;
    let count = |d: crate::protocol::transcript::Direction| {
        t.events.iter().filter(|(_, e)| e.dir == d).count()
    };
    let recorded = (
        count(crate::protocol::transcript::Direction::C2s),
        count(crate::protocol::transcript::Direction::S2c),
    );
    let round_trips = iterations + warmup;
    dir.close()
        .map_err(|e| format!("failed to remove the temporary transcript: {e}"))?;
    if recorded != (round_trips, round_trips) {
        return Err(format!(
            "the proxy recorded {} c2s and {} s2c lines for {round_trips} round trips",
            recorded.0, recorded.1
        ));
    }
    Ok(RecordBench {
        line_bytes: RECORD_LINE.len(),
        floor,
        proxy,
        added_per_message_us: (proxy.median_us - floor.median_us) / 2.0,
        recorded,
        round_trips,
        transcript_bytes,
    })
}
