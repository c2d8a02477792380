//! The servers `parity` itself is: the reference (`parity reference mcp | acp | facade`), the
//! faulty and benign peers (`parity fake …`) and the fake dispatcher, each a subcommand the
//! profiles and the self-test start as a peer.

use super::*;

pub(super) async fn serve_reference(args: ReferenceArgs) -> i32 {
    let (root, _guard) = match reference_root(args.root) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: failed to prepare the reference workspace: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    let dispatcher = match reference_dispatcher(root, args.policy.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut config = parity_reference::mcp::McpServerConfig::new(dispatcher);
    config.page_size = args.page_size;
    if let Some(v) = args.server_version {
        config.server_version = v;
    }
    match parity_reference::mcp::serve_stdio(config).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("parity reference mcp: {e}");
            1
        }
    }
}

/// Serves the reference facade (or, with `fault`, the faulty facade built from it; with
/// `benign`, the benign one) until SIGTERM/SIGINT, or stdin EOF when stdin is a pipe. The
/// first stdout line is the endpoint URL (only its port for a benign facade that prints
/// one). Exit 0 after a clean stop, 2 for bad options (a non-loopback `--listen`, a bad
/// `--downstream` or separator), 1 for a listener error.
#[cfg(feature = "http")]
pub async fn serve_facade(
    args: FacadeArgs,
    fault: Option<parity_fakes::FacadeFault>,
    http_fault: Option<parity_fakes::HttpFault>,
    benign: Option<parity_fakes::FacadeBenign>,
) -> i32 {
    use parity_reference::facade::{self, audit::AuditSink, http, registry::SessionTokens, source};
    use std::sync::Arc;
    let listener = match http::bind(&args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: --listen: {e}");
            return EXIT_USAGE;
        }
    };
    if args.separator.is_empty()
        || !args
            .separator
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    {
        eprintln!("error: --separator must be non-empty and use only A-Z a-z 0-9 _ . - (the MCP tool-name characters)");
        return EXIT_USAGE;
    }
    let mut downstream = Vec::new();
    for d in &args.downstream {
        let Some((name, command)) = d.split_once('=') else {
            eprintln!("error: --downstream `{d}`: expected NAME=COMMAND");
            return EXIT_USAGE;
        };
        let words = match crate::transport::peer::split_words(command) {
            Ok(w) if !w.is_empty() => w,
            Ok(_) => {
                eprintln!("error: --downstream `{name}`: the command is empty");
                return EXIT_USAGE;
            }
            Err(e) => {
                eprintln!("error: --downstream `{name}`: {e}");
                return EXIT_USAGE;
            }
        };
        downstream.push(facade::downstream::DownstreamSpec {
            name: name.to_owned(),
            program: words[0].clone(),
            args: words[1..].to_vec(),
        });
    }
    let (root, _guard) = match reference_root(args.root.clone()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: failed to prepare the reference workspace: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    let sink = match &args.audit_log {
        Some(p) => match AuditSink::file(p) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: --audit-log {}: {e}", p.display());
                return EXIT_USAGE;
            }
        },
        None => AuditSink::stderr(),
    };
    let audit: Arc<dyn facade::audit::AuditLog> = match &benign {
        Some(b) => (b.audit)(sink),
        None => Arc::new(sink),
    };
    let mut sources: Vec<Arc<dyn source::CapabilitySource>> = Vec::new();
    let mut workspace = None;
    if !args.no_dispatcher {
        let config = match reference_dispatcher(root, args.policy.as_deref()) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        };
        let dispatcher = Arc::new(parity_reference::dispatcher::Dispatcher::new(config));
        workspace = Some(dispatcher.clone());
        sources.push(Arc::new(source::DispatcherSource::new(
            "parity", dispatcher,
        )));
    }
    let labels = if args.session_source.is_empty() {
        vec!["echo".to_owned()]
    } else {
        args.session_source.clone()
    };
    for label in labels {
        sources.push(Arc::new(source::EchoSource::new(label, "echo_channel")));
    }
    let mut config = facade::FacadeConfig::new(Arc::new(SessionTokens::new()), sources, audit);
    config.mode = if args.catalogue == "direct" {
        facade::CatalogueMode::Direct
    } else {
        facade::CatalogueMode::Meta
    };
    config.separator = args.separator.clone();
    config.downstream = downstream;
    config.features = workspace;
    if let Some(f) = &fault {
        (f.configure)(&mut config);
    }
    if let Some(b) = &benign {
        (b.configure)(&mut config);
    }
    let started = Arc::new(facade::Facade::start(config).await);
    let service: Arc<dyn http::McpService> = match &fault {
        Some(f) => (f.wrap)(started),
        None => started,
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: the listener has no address: {e}");
            return 1;
        }
    };
    if benign.is_some_and(|b| b.prints_port) {
        crate::outln!("{}", addr.port());
    } else {
        crate::outln!("http://{addr}{}", args.path);
    }
    let http_config = http::HttpConfig {
        path: args.path.clone(),
        admin: args.admin,
        response: if args.response == "sse" {
            http::ResponseMode::Sse
        } else {
            http::ResponseMode::Json
        },
        ..http::HttpConfig::default()
    };
    let served = match http_fault {
        Some(f) => {
            parity_fakes::serve_http_fault(f, listener, service, http_config, facade_stop()).await
        }
        None => http::serve(listener, service, http_config, facade_stop()).await,
    };
    match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("parity reference facade: {e}");
            1
        }
    }
}

/// `parity fake-facade-admin`: a token hook for a facade serving parity's admin hook
/// (`POST <origin>/admin/mint` `{"channel":C}` → `{"token":T}`, `POST <origin>/admin/revoke`
/// `{"token":T}`), the facade named by its endpoint `url` or its `port` on 127.0.0.1. `mint`
/// prints the token on stdout; `revoke` prints nothing. Exit 0, or 1 with one stderr line
/// that never holds the token or the channel's token.
#[cfg(feature = "http")]
pub(super) async fn facade_admin(
    url: Option<String>,
    port: Option<u16>,
    action: &str,
    value: &str,
) -> i32 {
    use crate::transport::http::{HttpClient, HttpRequest};
    let endpoint = match (url, port) {
        (Some(u), _) => u,
        (None, Some(p)) => format!("http://127.0.0.1:{p}/"),
        (None, None) => {
            eprintln!("error: give --url or --port");
            return EXIT_USAGE;
        }
    };
    let base = crate::profiles::facade::admin_base(&endpoint);
    let (to, body) = match action {
        "mint" => (
            format!("{base}/mint"),
            serde_json::json!({"channel": value}),
        ),
        _ => (
            format!("{base}/revoke"),
            serde_json::json!({"token": value}),
        ),
    };
    let client = match HttpClient::new(&to) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let ex = match client.send(HttpRequest::post_json(&body), deadline).await {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: POST {to}: {e}");
            return 1;
        }
    };
    if ex.status >= 400 {
        eprintln!("error: POST {to}: HTTP {}", ex.status);
        return 1;
    }
    if action == "mint" {
        let token = serde_json::from_slice::<serde_json::Value>(&ex.body)
            .ok()
            .and_then(|v| v.get("token").and_then(|t| t.as_str()).map(str::to_owned));
        match token {
            Some(t) => crate::outln!("{t}"),
            None => {
                eprintln!("error: POST {to}: HTTP {} without `token`", ex.status);
                return 1;
            }
        }
    }
    0
}

/// Completes on SIGTERM or SIGINT, or at EOF of stdin when stdin is a pipe (the harness
/// closes it first in the stdio shutdown sequence).
#[cfg(feature = "http")]
pub(super) async fn facade_stop() {
    use std::os::unix::fs::FileTypeExt;
    let stdin_is_pipe = std::fs::metadata("/dev/stdin")
        .map(|m| m.file_type().is_fifo())
        .unwrap_or(false);
    // stdin is read on a detached thread: a blocking read the runtime would wait for at
    // shutdown must not keep a SIGTERM from stopping the facade.
    let (eof_tx, eof_rx) = tokio::sync::oneshot::channel::<()>();
    if stdin_is_pipe {
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 1024];
            let mut stdin = std::io::stdin();
            while let Ok(n) = stdin.read(&mut buf) {
                if n == 0 {
                    break;
                }
            }
            let _ = eof_tx.send(());
        });
    }
    let eof = async move {
        if eof_rx.await.is_err() {
            std::future::pending::<()>().await
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = eof => {}
        () = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

pub(super) async fn serve_reference_acp(args: ReferenceAcpArgs) -> i32 {
    let (root, _guard) = match reference_root(args.root) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: failed to prepare the reference workspace: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    let dispatcher = match reference_dispatcher(root, args.policy.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut config = parity_reference::acp::AcpAgentConfig::new(dispatcher);
    config.tool_method = args.tool_method;
    match parity_reference::acp::serve_stdio(config).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("parity reference acp: {e}");
            1
        }
    }
}

/// The reference dispatcher's configuration over `root`: the defaults, with the policy file
/// applied when one is given (docs/dispatcher.md).
///
/// Errors: the policy file cannot be read or is invalid (`file:line:col: key: message`).
pub fn reference_dispatcher(
    root: PathBuf,
    policy: Option<&std::path::Path>,
) -> Result<parity_reference::dispatcher::DispatcherConfig, String> {
    let mut config = parity_reference::dispatcher::DispatcherConfig::new(root);
    if let Some(path) = policy {
        parity_reference::dispatcher::Policy::load(path)
            .map_err(|e| e.to_string())?
            .apply(&mut config);
    }
    Ok(config)
}

/// `parity fake-dispatcher FAULT mcp|acp [--policy FILE]`: the reference surface over a
/// dispatcher configured by the policy file, behind the dispatcher fault.
pub(super) async fn serve_fake_dispatcher(
    fault: &str,
    surface: &str,
    policy: Option<&std::path::Path>,
) -> i32 {
    let Some(info) = parity_fakes::find_dispatcher_fault(fault) else {
        eprintln!("error: unknown faulty dispatcher `{fault}`; `parity fake --list` lists them");
        return EXIT_USAGE;
    };
    let (root, guard) = match reference_root(None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    let dispatcher = match reference_dispatcher(root, policy) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let code = if surface == "acp" {
        parity_fakes::serve_faulty_acp(
            (info.make)(),
            parity_reference::acp::AcpAgentConfig::new(dispatcher),
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
        .await
    } else {
        parity_fakes::serve_faulty(
            (info.make)(),
            parity_reference::mcp::McpServerConfig::new(dispatcher),
            tokio::io::stdin(),
            tokio::io::stdout(),
        )
        .await
    };
    drop(guard);
    std::process::exit(code);
}

/// The reference's workspace: the given root, or a fresh temporary directory seeded with two
/// files (`README.md`, `notes/hello.txt`) and removed when the guard drops.
pub fn reference_root(
    root: Option<PathBuf>,
) -> std::io::Result<(PathBuf, Option<tempfile::TempDir>)> {
    if let Some(r) = root {
        return Ok((r, None));
    }
    let dir = tempfile::Builder::new()
        .prefix("parity-reference-")
        .tempdir()?;
    std::fs::write(dir.path().join("README.md"), "parity reference workspace\n")?;
    std::fs::create_dir_all(dir.path().join("notes"))?;
    std::fs::write(dir.path().join("notes/hello.txt"), "hello\n")?;
    Ok((dir.path().to_path_buf(), Some(dir)))
}

pub(super) async fn cmd_fake(fault: Option<String>, list: bool) -> i32 {
    if list || fault.is_none() {
        for f in parity_fakes::catalogue() {
            crate::outln!("{:<28} {}", f.name, f.description);
        }
        for f in parity_fakes::acp_catalogue() {
            crate::outln!("{:<28} {}", f.name, f.description);
        }
        for f in parity_fakes::acp_benign_catalogue() {
            crate::outln!("{:<28} (benign) {}", f.name, f.description);
        }
        #[cfg(feature = "http")]
        for f in parity_fakes::http_catalogue() {
            crate::outln!(
                "{:<28} {} (serve with `parity fake-http {}`)",
                f.name,
                f.description,
                f.name
            );
        }
        #[cfg(feature = "http")]
        for f in parity_fakes::http_benign_catalogue() {
            crate::outln!(
                "{:<28} (benign) {} (serve with `parity fake-http {}`)",
                f.name,
                f.description,
                f.name
            );
        }
        #[cfg(feature = "http")]
        for f in parity_fakes::facade_catalogue() {
            crate::outln!(
                "{:<28} {} (serve with `parity fake-facade {}`)",
                f.name,
                f.description,
                f.name
            );
        }
        #[cfg(feature = "http")]
        for f in parity_fakes::facade_benign_catalogue() {
            crate::outln!(
                "{:<28} (benign) {} (serve with `parity fake-facade {}`)",
                f.name,
                f.description,
                f.name
            );
        }
        for f in parity_fakes::dispatcher_catalogue() {
            crate::outln!(
                "{:<28} {} (serve with `parity fake-dispatcher {} mcp|acp --policy FILE`)",
                f.name,
                f.description,
                f.name
            );
        }
        for f in parity_fakes::host_catalogue() {
            crate::outln!(
                "{:<28} {} (serve with `parity fake-host {}`)",
                f.name,
                f.description,
                f.name
            );
        }
        for b in parity_fakes::host_benign_catalogue() {
            crate::outln!(
                "{:<28} (benign) {} (serve with `parity fake-host {}`)",
                b.name,
                b.description,
                b.name
            );
        }
        for f in parity_fakes::benign_catalogue() {
            crate::outln!("{:<28} benign: {}", f.name, f.description);
        }
        crate::outln!(
            "{:<28} starts a `setsid sleep 600` grandchild, then serves the reference",
            "setsid-child"
        );
        for (name, what) in parity_fakes::load::LOAD_PEERS {
            crate::outln!("{name:<28} (load) {what}");
        }
        if !list {
            eprintln!("error: name a fault (the list above), e.g. `parity fake stdout-banner`");
        }
        return if list { 0 } else { EXIT_USAGE };
    }
    let name = fault.unwrap_or_default();
    let (root, _guard) = match reference_root(None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_COULD_NOT_RUN;
        }
    };
    let acp_layer = parity_fakes::find_acp(&name)
        .map(|f| (f.make, f.tool_method))
        .or_else(|| parity_fakes::find_acp_benign(&name).map(|b| (b.make, None)));
    if let Some((make, tool_method)) = acp_layer {
        let mut config = parity_reference::acp::AcpAgentConfig::new(
            parity_reference::dispatcher::DispatcherConfig::new(root),
        );
        if let Some(m) = tool_method {
            config.tool_method = m.to_string();
        }
        let code =
            parity_fakes::serve_faulty_acp(make(), config, tokio::io::stdin(), tokio::io::stdout())
                .await;
        drop(_guard);
        std::process::exit(code);
    }
    let config = parity_reference::mcp::McpServerConfig::new(
        parity_reference::dispatcher::DispatcherConfig::new(root),
    );
    if parity_fakes::load::LOAD_PEERS
        .iter()
        .any(|(n, _)| *n == name)
    {
        let code =
            parity_fakes::load::serve_load(&name, config, tokio::io::stdin(), tokio::io::stdout())
                .await
                .unwrap_or(EXIT_USAGE);
        drop(_guard);
        std::process::exit(code);
    }
    if name == "setsid-child" {
        if let Err(e) = parity_fakes::spawn_setsid_grandchild() {
            eprintln!("error: {e}");
        }
        return match parity_reference::mcp::serve_stdio(config).await {
            Ok(()) => 0,
            Err(_) => 1,
        };
    }
    let make = match (parity_fakes::find(&name), parity_fakes::find_benign(&name)) {
        (Some(info), _) => info.make,
        (None, Some(info)) => info.make,
        (None, None) => {
            eprintln!("error: unknown fault {name:?} (see `parity fake --list`)");
            return EXIT_USAGE;
        }
    };
    let code =
        parity_fakes::serve_faulty(make(), config, tokio::io::stdin(), tokio::io::stdout()).await;
    drop(_guard);
    // Exit without waiting for the runtime: a faulty peer may have tasks that never end.
    std::process::exit(code);
}
