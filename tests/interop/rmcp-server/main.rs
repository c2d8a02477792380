//! A small MCP server built on the official Rust SDK (crates.io `rmcp`, pinned in the workspace),
//! written the way the SDK's examples write one: a `#[tool_router]` impl, `#[tool_handler]` on
//! `ServerHandler`, `serve(stdio())` for stdio and `StreamableHttpService` under axum for
//! Streamable HTTP. parity's interop tests run it as a real third-party peer:
//!
//! ```sh
//! target/debug/examples/rmcp_interop_server              # stdio
//! target/debug/examples/rmcp_interop_server --http PORT  # http://127.0.0.1:PORT/mcp
//! ```
//!
//! It is an example of the `parity-tests` package, so `cargo test --workspace` builds it on
//! the dependencies the tests already compile. The SDK's defaults are kept (sessions, SSE
//! responses, its Host allowlist): they are what users get. Over stdio it never writes to stdout
//! itself.

use std::sync::Arc;

use rmcp::{
    handler::server::wrapper::Parameters,
    model::{ServerCapabilities, ServerConfig},
    schemars, tool, tool_handler, tool_router,
    transport::streamable_http_server::session::local::LocalSessionManager,
    transport::{stdio, StreamableHttpServerConfig, StreamableHttpService},
    ServerHandler, ServiceExt,
};

/// `echo`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoRequest {
    /// The text to return.
    text: String,
}

/// `add`'s arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    /// The left operand.
    a: i64,
    /// The right operand.
    b: i64,
}

/// The server: two tools, nothing else. `#[tool_handler]` routes calls through the router
/// `#[tool_router]` generates (`Self::tool_router()`), so the struct holds no state.
#[derive(Debug, Clone, Default)]
struct Interop;

#[tool_router]
impl Interop {
    #[tool(description = "Return the given text unchanged.")]
    fn echo(&self, Parameters(EchoRequest { text }): Parameters<EchoRequest>) -> String {
        text
    }

    #[tool(description = "Add two integers.")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        a.wrapping_add(b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for Interop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("Test peer for parity: echo, add.")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            let service = Interop.serve(stdio()).await?;
            service.waiting().await?;
        }
        [flag, port] if flag == "--http" => {
            let port: u16 = port.parse()?;
            let service = StreamableHttpService::new(
                || Ok(Interop),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            // Loopback only: the interop runs never leave 127.0.0.1.
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            axum::serve(listener, router).await?;
        }
        _ => {
            eprintln!("usage: rmcp_interop_server [--http PORT]");
            std::process::exit(2);
        }
    }
    Ok(())
}
