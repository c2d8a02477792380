//! The Markdown check catalogue, generated from the code (`parity list --markdown`).

/// The catalogue as Markdown.
pub fn markdown() -> String {
    String::new()
}
