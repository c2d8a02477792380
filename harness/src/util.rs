//! Small helpers shared by the harness modules.

/// Cuts `s` to at most `max` bytes on a character boundary, adding `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(super::clip("héllo", 2), "h…");
        assert_eq!(super::clip("abc", 5), "abc");
    }
}
