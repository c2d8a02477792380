//! The audit checks of the `facade` profile (seed rules 28, 33–35): pre-flight judged by the
//! audit log, the shape of a call's audit lines and the absence of plaintext arguments and
//! tokens. The log is read as the target declares it ([`AuditShape`]): a case finds its own
//! lines by its channel, polling up to the per-message deadline; nothing appended in that
//! time is a timeout, lines of no case's channel not-run, never a fail.

use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::{
    call_step, channel, clip, live_session, session_with_token, AuditField, AuditLines, AuditShape,
    FacadeCtx, FacadeDecl, Miss, Session,
};
use crate::engine::check::Finding;

/// Most bytes of an audit log read per look: 16 MiB (what the case's own calls wrote).
const AUDIT_READ_CAP: u64 = 16 * 1024 * 1024;

/// The audit log's length now, where a case's own lines will start. A path that is not a
/// regular file is an error (a FIFO or device would block or never end).
async fn audit_len(path: &std::path::Path) -> Result<u64, Miss> {
    let meta = tokio::fs::metadata(path).await.map_err(|e| {
        Miss::Failed(format!(
            "reading the audit log: cannot read {}: {e}",
            path.display()
        ))
    })?;
    if !meta.is_file() {
        return Err(Miss::Failed(format!(
            "reading the audit log: {} is not a regular file",
            path.display()
        )));
    }
    Ok(meta.len())
}

/// What the audit log held from a case's start: the lines of its channel (parsed, under the
/// declared shape), the text read, and what the other lines were.
#[derive(Debug, Default)]
struct AuditRead {
    /// The JSON lines whose channel field is the case's channel.
    lines: Vec<Value>,
    /// The text read (at most [`AUDIT_READ_CAP`] bytes).
    text: String,
    /// How many JSON lines were of other channels, or had no channel field.
    others: usize,
    /// How many non-empty lines were not JSON.
    not_json: usize,
    /// The member names of the first other JSON line (nested members as pointers), never
    /// its values: they may be other cases' lines.
    other_members: Vec<String>,
}

/// The member names of an audit line, one level of nesting as JSON pointers
/// (`level, fields (/fields/message, /fields/tool)`).
fn members(line: &Value) -> Vec<String> {
    let Some(obj) = line.as_object() else {
        return vec!["(not an object)".into()];
    };
    obj.iter()
        .map(|(k, v)| match v.as_object() {
            Some(inner) if !inner.is_empty() => format!(
                "{k} ({})",
                inner
                    .keys()
                    .map(|i| format!("/{k}/{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => k.clone(),
        })
        .collect()
}

/// The audit lines written since byte `from` whose channel field (as `shape` names it) is
/// `channel`, parsed (lines that are not JSON are counted), and the text read. Reads at most
/// [`AUDIT_READ_CAP`] bytes, off the async threads.
async fn audit_lines(
    path: &std::path::Path,
    shape: &AuditShape,
    channel: &str,
    from: u64,
) -> Result<AuditRead, Miss> {
    use std::io::{Read, Seek, SeekFrom};
    audit_len(path).await?;
    let owned = path.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(&owned)?;
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::new();
        f.take(AUDIT_READ_CAP).read_to_end(&mut buf)?;
        Ok(buf)
    })
    .await
    .map_err(|e| Miss::Failed(format!("reading the audit log failed: {e}")))?
    .map_err(|e| {
        Miss::Failed(format!(
            "reading the audit log: cannot read {}: {e}",
            path.display()
        ))
    })?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let mut read = AuditRead::default();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(l) {
            Ok(v) if shape.channel.get(&v).and_then(Value::as_str) == Some(channel) => {
                read.lines.push(v)
            }
            Ok(v) => {
                if read.others == 0 {
                    read.other_members = members(&v);
                }
                read.others += 1;
            }
            Err(_) => read.not_json += 1,
        }
    }
    read.text = text;
    Ok(read)
}

/// Polls the audit log from `from` until `want` lines of `channel` appear or `patience`
/// passes, returning what was read last.
async fn await_audit_lines(
    s: &Session<'_>,
    path: &std::path::Path,
    channel: &str,
    from: u64,
    want: usize,
) -> Result<AuditRead, Miss> {
    await_audit(
        s,
        path,
        channel,
        from,
        &format!("{want} line(s)"),
        &|lines| lines.len() >= want,
    )
    .await
}

/// Polls the audit log from `from` until the lines of `channel` satisfy `done` or the
/// per-message deadline passes, returning what was read last. `what` names what is awaited
/// (for the message of a case past its deadline).
async fn await_audit(
    s: &Session<'_>,
    path: &std::path::Path,
    channel: &str,
    from: u64,
    what: &str,
    done: &(dyn Fn(&[Value]) -> bool + Sync),
) -> Result<AuditRead, Miss> {
    let shape = &s.ctx.target.decl.audit;
    s.waiting(&format!(
        "the audit poll: {what} of channel {channel} in {}",
        path.display()
    ));
    let until = Instant::now() + s.ctx.timing.message;
    loop {
        let read = audit_lines(path, shape, channel, from).await?;
        if done(&read.lines) || Instant::now() >= until {
            return Ok(read);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Why a case found no line of its channel in the audit log: nothing was appended in time
/// (a timeout), or lines were, but none with the declared channel field holding the case's
/// channel (not-run: the declared shape may not be the facade's; their member names say
/// what to declare).
fn no_lines(s: &Session<'_>, read: &AuditRead, path: &std::path::Path, channel: &str) -> Miss {
    let shape = &s.ctx.target.decl.audit;
    let ms = s.ctx.timing.message.as_millis();
    if read.others == 0 && read.not_json == 0 {
        return Miss::Timeout(format!(
            "the audit poll: nothing was appended to the audit log {} within {ms} ms of the answer",
            path.display()
        ));
    }
    let mut what = format!(
        "the audit poll: {} JSON line(s) appended to the audit log {} since the case began, none with `{}` = \"{channel}\"",
        read.others,
        path.display(),
        shape.channel.name()
    );
    if read.not_json > 0 {
        what.push_str(&format!(
            " (and {} line(s) that are not JSON)",
            read.not_json
        ));
    }
    if !read.other_members.is_empty() {
        what.push_str(&format!(
            "; the first holds the members {}",
            read.other_members.join(", ")
        ));
    }
    what.push_str(
        ": if the facade names its fields differently or writes one line per call, declare its lines in [facade.audit] (docs/facade.md)",
    );
    Miss::Failed(what)
}

/// `facade.preflight-before-dispatch` (seed rule 28).
pub(super) async fn preflight(ctx: &FacadeCtx) -> Finding {
    let (mut s, token, ch) = match live_session(ctx, "preflight").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let auth = format!("Bearer {token}");
    let from = match &decl.audit_log {
        Some(p) => Some(tri!(s, audit_len(p).await)),
        None => None,
    };
    let obs = tri!(
        s,
        s.call(Some(&auth), &decl.preflight_tool, &decl.invalid_arguments)
            .await
    );
    if !obs.failed() {
        return s.fail(format!(
            "a call of `{}` with schema-invalid arguments {} was not refused",
            decl.preflight_tool, decl.invalid_arguments
        ));
    }
    let message = obs
        .error
        .as_ref()
        .map(|e| e.1.clone())
        .unwrap_or(obs.text.clone());
    if !message.contains(&decl.preflight_tool) {
        return s.fail(format!(
            "the refusal does not name the capability `{}`: {}",
            decl.preflight_tool,
            clip(&message)
        ));
    }
    if let (Some(path), Some(from)) = (&decl.audit_log, from) {
        // A valid call on the same channel is the barrier: once its lines are in the log,
        // any line of the invalid call would be too.
        let valid = tri!(
            s,
            s.call(Some(&auth), &decl.session_tool, &decl.session_arguments)
                .await
        );
        if valid.failed() {
            return s.not_run(format!(
                "{} (the barrier after the refused call) failed, so the audit log cannot be judged: {}",
                call_step(&decl.session_tool, &decl.session_arguments, Some(&auth)),
                valid.shown()
            ));
        }
        let shape = &decl.audit;
        // The two calls' lines are told apart by tool and argument hash (seed rule 33: the
        // SHA-256 of the compact arguments). Wait for the barrier's own lines, not for a
        // number of lines: a facade that writes late could otherwise show the refused call's
        // lines alone, and they would pass for the barrier's.
        let want = shape.lines_per_call();
        let hash_of = |v: &Value| hex_sha256(&serde_json::to_vec(v).unwrap_or_default());
        let line_of = |l: &Value, tool: &str, hash: &str| {
            shape
                .tool
                .get(l)
                .and_then(Value::as_str)
                .is_some_and(|t| names_tool(t, tool))
                && shape.hash.get(l).and_then(Value::as_str) == Some(hash)
        };
        let (barrier_hash, refused_hash) = (
            hash_of(&decl.session_arguments),
            hash_of(&decl.invalid_arguments),
        );
        let is_barrier = |l: &Value| line_of(l, &decl.session_tool, &barrier_hash);
        // What shows that a call passed pre-flight and reached its source: its entry line
        // (rule 33: logged once pre-flight passed, before dispatch), or with one line per
        // call a line that says the call did not fail. A line that records a refusal is
        // neither: no rule forbids one.
        let reached = |l: &Value| match shape.lines {
            AuditLines::EntryExit => shape.is_entry(l),
            AuditLines::One => shape.is_error.get(l) == Some(&Value::Bool(false)),
        };
        let read = tri!(
            s,
            await_audit(
                &s,
                path,
                &ch,
                from,
                &format!("the {want} line(s) of the barrier call"),
                &|lines| lines.iter().filter(|l| is_barrier(l)).count() >= want,
            )
            .await
        );
        for l in &read.lines {
            s.note(format!("audit: {l}"));
        }
        if read.lines.is_empty() {
            return s.missed(no_lines(&s, &read, path, &ch));
        }
        let what = match shape.lines {
            AuditLines::EntryExit => "entry line",
            AuditLines::One => "line without the error flag",
        };
        // The refused call's lines, when tool and hash tell them from the barrier's (a
        // pre-flight tool of the session tool's name refused with the barrier's arguments
        // could not be told apart: then the lines are counted).
        let distinct = !(bare_name(&decl.preflight_tool) == bare_name(&decl.session_tool)
            && refused_hash == barrier_hash);
        if distinct
            && read
                .lines
                .iter()
                .any(|l| line_of(l, &decl.preflight_tool, &refused_hash) && reached(l))
        {
            return s.fail(format!(
                "the schema-invalid call reached the source: the audit log has an {what} for `{}` whose `{}` is the SHA-256 of the refused arguments {} ({refused_hash})",
                decl.preflight_tool,
                shape.hash.name(),
                clip(&decl.invalid_arguments.to_string())
            ));
        }
        // A facade that hashes otherwise (facade.audit-shape judges that) is judged by the
        // number of such lines on the channel, read at the deadline.
        let count = read.lines.iter().filter(|l| reached(l)).count();
        if count == 0 {
            return s.not_run(format!(
                "{} (the barrier) wrote no audit {what} for its channel, so the log cannot show whether the refused call reached the source",
                call_step(&decl.session_tool, &decl.session_arguments, Some(&auth))
            ));
        }
        if count > 1 {
            return s.fail(format!(
                "the schema-invalid call reached the source: the audit log has an {what} for it beside the valid call's"
            ));
        }
    }
    s.pass()
}

/// A published tool name without its provider prefix (`ref:echo`, `ref.echo` → `echo`): the
/// tool member of an audit line (seed rule 33).
fn bare_name(tool: &str) -> &str {
    tool.rsplit([':', '.']).next().unwrap_or(tool)
}

/// Whether an audit line's tool member names the published tool `published`: its bare name,
/// or the published name whole (a tool published bare whose own name holds a `.`).
fn names_tool(member: &str, published: &str) -> bool {
    member == published || member == bare_name(published)
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `args` (an object) with `value` in member `argument`.
fn with_value(args: &Value, argument: &str, value: &str) -> Value {
    let mut args = args.clone();
    if let Some(obj) = args.as_object_mut() {
        obj.insert(argument.to_owned(), Value::from(value));
    }
    args
}

/// One audited call on a fresh channel with a token: the session, the token, and what the
/// audit log held since the call began. Skips without an audit log; not-run when the call
/// fails (so it may not have reached the source) or no line of its channel appears.
async fn audited_call<'a>(
    ctx: &'a FacadeCtx,
    tag: &str,
    tool: &str,
    args: &Value,
) -> Result<(Session<'a>, String, AuditRead), Finding> {
    let decl = &ctx.target.decl;
    let Some(path) = decl.audit_log.clone() else {
        return Err(Finding::skip(
            "the target declares no audit log ([facade] audit_log)",
        ));
    };
    let (mut s, token, ch) = session_with_token(ctx, tag).await?;
    let from = match audit_len(&path).await {
        Ok(n) => n,
        Err(m) => return Err(s.missed(m)),
    };
    let auth = format!("Bearer {token}");
    let obs = match s.call(Some(&auth), tool, args).await {
        Ok(o) => o,
        Err(m) => return Err(s.missed(m)),
    };
    if obs.failed() {
        return Err(s.not_run(format!(
            "{} failed, so its audit lines cannot be judged: {}",
            call_step(tool, args, Some(&auth)),
            obs.shown()
        )));
    }
    // The exit line (or the one line) may be written just after the response.
    let want = decl.audit.lines_per_call();
    let read = match await_audit_lines(&s, &path, &ch, from, want).await {
        Ok(x) => x,
        Err(m) => return Err(s.missed(m)),
    };
    if read.lines.is_empty() {
        let miss = no_lines(&s, &read, &path, &ch);
        return Err(s.missed(miss));
    }
    Ok((s, token, read))
}

/// The call `facade.audit-shape` audits: the session tool with its valid arguments, and a
/// value in the canary argument when that is the session tool's.
fn shape_call(decl: &FacadeDecl) -> (String, Value) {
    match &decl.canary {
        Some(c) if c.tool == decl.session_tool => (
            c.tool.clone(),
            with_value(&c.arguments, &c.argument, "parity-audit-value"),
        ),
        _ => (decl.session_tool.clone(), decl.session_arguments.clone()),
    }
}

/// `facade.audit-shape` (seed rules 33–35).
pub(super) async fn audit_shape(ctx: &FacadeCtx) -> Finding {
    let decl = &ctx.target.decl;
    let shape = &decl.audit;
    let (tool, args) = shape_call(decl);
    let (mut s, _, read) = match audited_call(ctx, "audit", &tool, &args).await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let lines = read.lines;
    for l in &lines {
        s.note(format!("audit: {l}"));
    }
    let compact = serde_json::to_vec(&args).unwrap_or_default();
    let expected_hash = hex_sha256(&compact);
    let mut problems = Vec::new();
    // The lines that must carry the error flag: the exit lines, or the one line.
    let flagged: Vec<&Value> = match shape.lines {
        AuditLines::EntryExit => {
            let entries = lines.iter().filter(|l| shape.is_entry(l)).count();
            let exits: Vec<&Value> = lines.iter().filter(|l| !shape.is_entry(l)).collect();
            if entries != 1 {
                problems.push(format!("{entries} entry lines for the call (expected 1)"));
            }
            if exits.len() != 1 {
                let marked = match &shape.entry {
                    Some(_) => "",
                    None => " (lines with the error flag)",
                };
                problems.push(format!(
                    "{} exit lines{marked} for the call (expected 1)",
                    exits.len()
                ));
            }
            exits
        }
        AuditLines::One => {
            if lines.len() != 1 {
                problems.push(format!(
                    "{} lines for the call (expected 1: the declared shape writes one line per call)",
                    lines.len()
                ));
            }
            lines.iter().collect()
        }
    };
    let bare = bare_name(&tool);
    let named = |what: &str, field: &AuditField| {
        if field.name() == what {
            format!("`{what}`")
        } else {
            format!("`{}` (the {what})", field.name())
        }
    };
    for l in &lines {
        for (what, field) in [
            ("provider", &shape.provider),
            ("tool", &shape.tool),
            ("channel", &shape.channel),
            ("args_sha256", &shape.hash),
        ] {
            if field.get(l).and_then(Value::as_str).is_none() {
                problems.push(format!("a line lacks the string {}", named(what, field)));
            }
        }
        if let Some(t) = shape.tool.get(l).and_then(Value::as_str) {
            if t != bare {
                problems.push(format!(
                    "{} is {t:?}, not the bare name {bare:?}",
                    named("tool", &shape.tool)
                ));
            }
        }
        if let Some(h) = shape.hash.get(l).and_then(Value::as_str) {
            if h != expected_hash {
                problems.push(format!(
                    "{} is {h:?}; the SHA-256 of the compact arguments {} is {expected_hash:?}",
                    named("args_sha256", &shape.hash),
                    String::from_utf8_lossy(&compact)
                ));
            }
        }
    }
    let which = match shape.lines {
        AuditLines::EntryExit => "the exit line",
        AuditLines::One => "the line",
    };
    for l in &flagged {
        if !shape.is_error.get(l).is_some_and(Value::is_boolean) {
            problems.push(format!(
                "{} of {which} is not a boolean",
                named("is_error", &shape.is_error)
            ));
        }
    }
    problems.dedup();
    if problems.is_empty() {
        s.pass()
    } else {
        s.fail(problems.join("; "))
    }
}

/// `facade.audit-no-plaintext` (seed rule 35).
pub(super) async fn audit_plaintext(ctx: &FacadeCtx) -> Finding {
    let decl = &ctx.target.decl;
    let canary = format!("parity-canary-{}", &channel(ctx, "c")[14..]);
    // With a canary: its tool, its arguments and the canary in its string argument; without
    // one, only the token can be looked for, on the session tool's call.
    let (tool, args) = match &decl.canary {
        Some(c) => (
            c.tool.clone(),
            with_value(&c.arguments, &c.argument, &canary),
        ),
        None => (decl.session_tool.clone(), decl.session_arguments.clone()),
    };
    let (mut s, token, read) = match audited_call(ctx, "plain", &tool, &args).await {
        Ok(x) => x,
        Err(f) => return f,
    };
    for l in &read.lines {
        s.note(format!("audit: {l}"));
    }
    let mut secrets: Vec<(&str, String)> = Vec::new();
    if decl.canary.is_some() {
        secrets.push(("the argument canary", canary.clone()));
    }
    secrets.push(("the bearer token", token.clone()));
    let mut found = Vec::new();
    for (what, secret) in &secrets {
        // Raw, URL-encoded and base64 at every alignment: the forms the hygiene probe and the
        // redactor search for (`crate::base::secret::patterns`).
        if crate::base::secret::patterns(secret)
            .iter()
            .any(|(_, e)| read.text.contains(e.as_str()))
        {
            found.push(*what);
        }
    }
    if found.is_empty() {
        if decl.canary.is_none() {
            return Finding::advisory(
                "the token is absent from the audit log, but no canary_argument is declared, so plaintext arguments could not be looked for",
                s.evidence.clone(),
            );
        }
        s.pass()
    } else {
        s.fail(format!("the audit log contains {}", found.join(" and ")))
    }
}
