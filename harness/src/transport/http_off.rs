//! The HTTP bridge of a `parity` built without the `http` feature (docs/library.md §Features):
//! the same entry points as the real bridge, so the layers above need no feature switches, but a
//! URL surface is refused with [`NO_HTTP`] and no note is ever a bridge's.

use crate::transport::peer::Peer;
use std::time::Duration;

/// Why a URL surface cannot be reached: the sentence every refusal carries.
pub const NO_HTTP: &str =
    "this parity was built without the `http` feature, so it cannot reach a Streamable HTTP surface";

/// Never a bridge's note: without HTTP nothing is bridged.
pub fn bare_refusal(_note: &str) -> bool {
    false
}

/// Refuses `url`. Errors: always, with [`NO_HTTP`] and the URL.
pub fn peer(url: &str, _line_cap: usize, _deadline: Duration) -> Result<Peer, String> {
    Err(format!("{NO_HTTP} ({url})"))
}
