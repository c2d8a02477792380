//! The session-token registry (seed rules 14–21, `../shared/spec/seed-rules.md` §2).
//!
//! A token is 32 bytes from the operating system's random source, encoded as unpadded
//! base64url (43 characters). The registry never stores a token: it stores the SHA-256
//! digest of the token's bytes beside the channel id. [`SessionTokens::resolve`] hashes the
//! presented value (of any length) to the same fixed 32 bytes and compares it with
//! **every** registered digest through [`subtle::ConstantTimeEq`], folding the results
//! without branching, so neither the position of the first differing byte nor the length
//! of the presented value shows in the time taken (fault class B21).
//!
//! Handles are cheap clones that share one table: a mint or revoke through any handle is
//! seen by the very next [`SessionTokens::resolve`] through any other (rule 16). Profile
//! **[later]** of rule 17: a second mint for one channel leaves the first token valid;
//! [`SessionTokens::revoke_token`] removes exactly one token (rule 19) and
//! [`SessionTokens::revoke_channel`] all of a channel's (rule 18).

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

/// Random bytes per token (rule 14).
pub const TOKEN_BYTES: usize = 32;

/// Length of an encoded token: 43 unpadded base64url characters.
pub const TOKEN_CHARS: usize = 43;

/// The identity a request resolved to (seed §1.1 `SessionCtx`): the channel the token was
/// minted for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCtx {
    /// The channel id given to [`SessionTokens::mint`].
    pub channel_id: String,
}

/// Why a token could not be minted.
#[derive(Debug, thiserror::Error)]
pub enum MintError {
    /// The operating system's random source failed; no token was registered.
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

struct Entry {
    digest: [u8; 32],
    channel: String,
}

/// A shared token table. Cloning shares the table (seed `SessionTokens`).
#[derive(Clone, Default)]
pub struct SessionTokens {
    entries: Arc<RwLock<Vec<Entry>>>,
}

impl std::fmt::Debug for SessionTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Digests are not secrets, but nothing about tokens belongs in logs.
        f.debug_struct("SessionTokens")
            .field("live", &self.read().len())
            .finish()
    }
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

impl SessionTokens {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Vec<Entry>> {
        // A panic while holding the lock leaves a consistent Vec; keep serving.
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Entry>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Mints a new token bound to `channel` (rules 14, 15): 32 OS-random bytes as
    /// unpadded base64url. Earlier tokens of the channel stay valid (rule 17, profile
    /// **[later]**).
    ///
    /// # Errors
    /// [`MintError::Random`] when the OS random source fails.
    pub fn mint(&self, channel: &str) -> Result<String, MintError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| MintError::Random(e.to_string()))?;
        let token = URL_SAFE_NO_PAD.encode(bytes);
        self.write().push(Entry {
            digest: digest(token.as_bytes()),
            channel: channel.to_owned(),
        });
        Ok(token)
    }

    /// The context of a live `token`, or `None` for an unknown or revoked one (rule 20).
    ///
    /// Every entry is visited and compared in constant time; the presented value is hashed
    /// first, so its length does not short-circuit anything either.
    pub fn resolve(&self, token: &str) -> Option<SessionCtx> {
        let presented = digest(token.as_bytes());
        let entries = self.read();
        let mut found = subtle::Choice::from(0u8);
        let mut index = 0u64;
        for (i, entry) in entries.iter().enumerate() {
            let equal = entry.digest.ct_eq(&presented);
            index = u64::conditional_select(&index, &(i as u64), equal);
            found |= equal;
        }
        if bool::from(found) {
            let i = usize::try_from(index).ok()?;
            entries.get(i).map(|e| SessionCtx {
                channel_id: e.channel.clone(),
            })
        } else {
            None
        }
    }

    /// Revokes exactly one token (rule 19). Returns whether it was live; revoking a token
    /// that is already gone is a no-op and never touches another token of its channel.
    pub fn revoke_token(&self, token: &str) -> bool {
        let presented = digest(token.as_bytes());
        let mut entries = self.write();
        let before = entries.len();
        entries.retain(|e| !bool::from(e.digest.ct_eq(&presented)));
        entries.len() != before
    }

    /// Revokes every token of `channel` and no other (rule 18). Returns how many were live.
    pub fn revoke_channel(&self, channel: &str) -> usize {
        let mut entries = self.write();
        let before = entries.len();
        entries.retain(|e| e.channel != channel);
        before - entries.len()
    }

    /// How many tokens are live.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no token is live.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }
}

/// The registry interface the facade uses, so tests and faulty peers can layer behaviour
/// around [`SessionTokens`] (the reference implementation of every method).
pub trait TokenRegistry: Send + Sync {
    /// See [`SessionTokens::mint`].
    ///
    /// # Errors
    /// As [`SessionTokens::mint`].
    fn mint(&self, channel: &str) -> Result<String, MintError>;
    /// See [`SessionTokens::resolve`].
    fn resolve(&self, token: &str) -> Option<SessionCtx>;
    /// See [`SessionTokens::revoke_token`].
    fn revoke_token(&self, token: &str) -> bool;
    /// See [`SessionTokens::revoke_channel`].
    fn revoke_channel(&self, channel: &str) -> usize;
}

impl TokenRegistry for SessionTokens {
    fn mint(&self, channel: &str) -> Result<String, MintError> {
        SessionTokens::mint(self, channel)
    }
    fn resolve(&self, token: &str) -> Option<SessionCtx> {
        SessionTokens::resolve(self, token)
    }
    fn revoke_token(&self, token: &str) -> bool {
        SessionTokens::revoke_token(self, token)
    }
    fn revoke_channel(&self, channel: &str) -> usize {
        SessionTokens::revoke_channel(self, channel)
    }
}

/// The identity of one HTTP request (rules 2, 3): `Some` only for an `Authorization`
/// value of exactly `Bearer <live token>` (case-sensitive scheme, one space). A missing
/// header, another scheme, a value that is not text, an empty or unknown token all give
/// `None`, the anonymous view, never an error.
pub fn ctx_from_authorization(
    tokens: &dyn TokenRegistry,
    value: Option<&[u8]>,
) -> Option<SessionCtx> {
    let value = std::str::from_utf8(value?).ok()?;
    let token = value.strip_prefix("Bearer ")?;
    if token.is_empty() {
        return None;
    }
    tokens.resolve(token)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn mint_resolve_revoke_lifecycle() {
        let t = SessionTokens::new();
        let a = t.mint("chan-1").unwrap();
        assert_eq!(a.len(), TOKEN_CHARS);
        assert!(a
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(t.resolve(&a).unwrap().channel_id, "chan-1");
        assert!(t.resolve("not-a-token").is_none());
        assert!(t.resolve("").is_none());
        // A second mint for one channel does not invalidate the first (T1).
        let b = t.mint("chan-1").unwrap();
        assert_ne!(a, b);
        assert!(t.resolve(&a).is_some() && t.resolve(&b).is_some());
        // Revoking one leaves the other (R1); revoking it again is a no-op.
        assert!(t.revoke_token(&a));
        assert!(!t.revoke_token(&a));
        assert!(t.resolve(&a).is_none());
        assert_eq!(t.resolve(&b).unwrap().channel_id, "chan-1");
        let other = t.mint("chan-2").unwrap();
        assert_eq!(t.revoke_channel("chan-1"), 1);
        assert!(t.resolve(&b).is_none());
        assert_eq!(t.resolve(&other).unwrap().channel_id, "chan-2");
    }

    #[test]
    fn clones_share_state() {
        let broker = SessionTokens::new();
        let facade = broker.clone();
        let token = broker.mint("c").unwrap();
        assert!(facade.resolve(&token).is_some());
        broker.revoke_token(&token);
        assert!(facade.resolve(&token).is_none());
    }

    #[test]
    fn every_mint_is_distinct() {
        let t = SessionTokens::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(t.mint("c").unwrap()));
        }
    }

    #[test]
    fn a_token_with_one_byte_changed_or_a_prefix_does_not_resolve() {
        let t = SessionTokens::new();
        let token = t.mint("c").unwrap();
        let mut changed = token.clone().into_bytes();
        let last = changed.len() - 1;
        changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
        assert!(t.resolve(std::str::from_utf8(&changed).unwrap()).is_none());
        assert!(t.resolve(&token[..42]).is_none());
        assert!(t.resolve(&format!("{token}x")).is_none());
    }

    #[test]
    fn authorization_values() {
        let t = SessionTokens::new();
        let token = t.mint("chan-42").unwrap();
        let good = format!("Bearer {token}");
        assert_eq!(
            ctx_from_authorization(&t, Some(good.as_bytes()))
                .unwrap()
                .channel_id,
            "chan-42"
        );
        for bad in [
            format!("bearer {token}"),
            format!("Bearer  {token}"),
            format!("Basic {token}"),
            token.clone(),
            "Bearer ".to_owned(),
            String::new(),
            "Bearer wrong".to_owned(),
        ] {
            assert!(
                ctx_from_authorization(&t, Some(bad.as_bytes())).is_none(),
                "{bad:?}"
            );
        }
        assert!(ctx_from_authorization(&t, Some(&[0xff, 0xfe])).is_none());
        assert!(ctx_from_authorization(&t, None).is_none());
    }
}
