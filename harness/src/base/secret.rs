//! The forms a secret is searched for in: raw, URL-encoded and base64 at three alignments
//! (seed rules on canaries; `docs/hygiene.md`). Used by the hygiene probe's searches and by the
//! transcript redactor, so it sits in the shared vocabulary.

/// The patterns of a secret: raw, URL-encoded, and for base64 (standard and URL-safe) the part
/// of the encoding of `<k arbitrary bytes><secret><anything>` that does not depend on the `k`
/// bytes or what follows, for k = 0, 1, 2. Duplicates are dropped.
pub fn patterns(secret: &str) -> Vec<(&'static str, String)> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine as _;
    let mut v: Vec<(&'static str, String)> = vec![("raw", secret.to_owned())];
    let url: String = secret
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    v.push(("URL-encoded", url));
    const LABELS: [(&str, &str); 3] = [
        ("base64", "base64url"),
        ("base64 (offset 1)", "base64url (offset 1)"),
        ("base64 (offset 2)", "base64url (offset 2)"),
    ];
    for (pad, (std_label, url_label)) in LABELS.iter().enumerate() {
        let mut bytes = vec![0u8; pad];
        bytes.extend_from_slice(secret.as_bytes());
        for (label, engine) in [(std_label, &STANDARD_NO_PAD), (url_label, &URL_SAFE_NO_PAD)] {
            let enc = engine.encode(&bytes);
            let skip = (pad * 4).div_ceil(3);
            let core: String = enc.chars().skip(skip).collect();
            let keep = core.len().saturating_sub(3);
            if keep >= 8 {
                v.push((*label, core[..keep].to_owned()));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    v.retain(|(_, p)| seen.insert(p.clone()));
    v
}
