//! Text files as every loader reads them: UTF-8 with a located error, lines ended by LF, CRLF
//! or a lone CR, byte offsets turned into a line and a column, and quoted values clipped.
//!
//! The file-format loaders (target and guard rules in TOML; scenarios and baselines in YAML;
//! transcripts in JSONL) share these so that every error names the file, a 1-based line and
//! column, whatever the line endings, and never quotes megabytes of a bad value.

use std::path::Path;

/// At most this many bytes of a value are quoted in an error message
/// ([`clip_quoted`]).
pub const MAX_QUOTED: usize = 300;

/// At most this many bytes of a whole error message (or of the key or field it names) are
/// printed; the rest is left out and counted ([`clip_quoted`]).
pub const MAX_MESSAGE: usize = 1000;

/// `s` cut to at most `max` bytes on a character boundary; when cut, followed by
/// `… (N more bytes)`, N the number of bytes left out. `s` itself when it fits.
pub fn clip_quoted(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &s[..end], s.len() - end)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`. A line ends at LF,
/// CRLF or a lone CR (so a file with old Mac line endings is located as its editor shows it).
/// An offset past the end, or inside a character, counts up to the nearest earlier boundary.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate().take(end) {
        // The CR of a CRLF ends no line: its LF does.
        let ends = *b == b'\n' || (*b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
        if ends {
            line += 1;
            start = i + 1;
        }
    }
    let col = text.get(start..end).unwrap_or("").chars().count() + 1;
    (line, col)
}

/// The lines of `text`, each without its ending (LF, CRLF or a lone CR); the same lines
/// [`line_col`] counts. A final line ending adds no empty line.
pub fn lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(text.get(start..i).unwrap_or(""));
                start = i + 1;
            }
            b'\r' => {
                out.push(text.get(start..i).unwrap_or(""));
                if b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < b.len() {
        out.push(text.get(start..).unwrap_or(""));
    }
    out
}

/// The byte offset of the first carriage return not followed by a line feed, if any.
pub fn lone_cr(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\r', b).find(|&i| b.get(i + 1) != Some(&b'\n'))
}

/// Why a file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read.
    Io(std::io::Error),
    /// The file is not UTF-8: the first invalid byte is at `offset` (0-based), at 1-based
    /// `line` and `col` (characters) of the text before it.
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
        /// The invalid byte's value.
        byte: u8,
        /// 1-based line of that byte.
        line: usize,
        /// 1-based column (in characters) of that byte.
        col: usize,
        /// The valid text before it, for naming the key or field at fault.
        before: String,
    },
}

impl ReadError {
    /// A message without the file name, e.g. `not valid UTF-8: byte 0xff at byte offset 21`
    /// for [`ReadError::NotUtf8`], or `failed to read <what>: <io error>`.
    pub fn message(&self, what: &str) -> String {
        match self {
            ReadError::Io(e) => format!("failed to read {what}: {e}"),
            ReadError::NotUtf8 { offset, byte, .. } => format!(
                "not valid UTF-8: byte 0x{byte:02x} at byte offset {offset} (save {what} as UTF-8)"
            ),
        }
    }

    /// The 1-based line and column of the error; `(0, 0)` for an I/O error.
    pub fn place(&self) -> (usize, usize) {
        match self {
            ReadError::Io(_) => (0, 0),
            ReadError::NotUtf8 { line, col, .. } => (*line, *col),
        }
    }
}

/// `bytes` as UTF-8 text, or where the first invalid byte is ([`ReadError::NotUtf8`]).
pub fn utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let byte = bytes.get(offset).copied().unwrap_or(0);
        let before = String::from_utf8_lossy(bytes.get(..offset).unwrap_or_default()).into_owned();
        let (line, col) = line_col(&before, before.len());
        ReadError::NotUtf8 {
            offset,
            byte,
            line,
            col,
            before,
        }
    })
}

/// Reads the file at `path` as UTF-8 text.
///
/// Errors: [`ReadError::Io`] when it cannot be read, [`ReadError::NotUtf8`] (with the place
/// of the first invalid byte) when it is not UTF-8.
pub fn read_utf8(path: &Path) -> Result<String, ReadError> {
    utf8(std::fs::read(path).map_err(ReadError::Io)?)
}

/// The key a YAML line holds (`  - case: x` → `case`), or the nearest such key on an earlier
/// line, for naming the field of an error located by line only. `None` when there is none.
pub fn yaml_key_near(text: &str, line: usize) -> Option<String> {
    let all = lines(text);
    let upto = all.get(..line.min(all.len())).unwrap_or_default();
    upto.iter().rev().find_map(|l| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        if t.starts_with('#') {
            return None;
        }
        let (k, _) = t.split_once(':')?;
        let k = k.trim().trim_matches('"').trim_matches('\'');
        (!k.is_empty() && !k.contains(' ')).then(|| clip_quoted(k, 80))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lf_crlf_and_lone_cr_alike() {
        for text in ["a\nbc\nd", "a\r\nbc\r\nd", "a\rbc\rd"] {
            let d = text.find('d').unwrap_or(0);
            assert_eq!(line_col(text, d), (3, 1), "{text:?}");
            let c = text.find('c').unwrap_or(0);
            assert_eq!(line_col(text, c), (2, 2), "{text:?}");
            assert_eq!(lines(text), vec!["a", "bc", "d"], "{text:?}");
        }
        // The offset of the CR of a CRLF is still on its line.
        assert_eq!(line_col("ab\r\nc", 2), (1, 3));
        assert_eq!(line_col("ab\rc", 3), (2, 1));
        assert_eq!(line_col("é", 1), (1, 1));
        assert_eq!(line_col("x", 99), (1, 2));
        assert_eq!(lines("a\n"), vec!["a"]);
        assert_eq!(lone_cr("a\r\nb"), None);
        assert_eq!(lone_cr("a\r\nb\rc"), Some(4));
    }

    #[test]
    fn clip_quoted_says_how_much_was_left_out() {
        let big = "z".repeat(10_000_000);
        let c = clip_quoted(&big, MAX_QUOTED);
        assert!(c.len() < MAX_QUOTED + 40, "{}", c.len());
        assert!(
            c.ends_with(&format!("… ({} more bytes)", 10_000_000 - MAX_QUOTED)),
            "{c}"
        );
        assert_eq!(clip_quoted("ab", 2), "ab");
        assert_eq!(clip_quoted("héllo", 2), "h… (5 more bytes)");
    }

    #[test]
    fn invalid_utf8_is_located() {
        let e = utf8(b"version = 1\nname = \"a\xffb\"\n".to_vec());
        let Err(e) = e else {
            panic!("accepted invalid UTF-8");
        };
        assert_eq!(e.place(), (2, 10));
        let m = e.message("the target file");
        assert!(m.contains("0xff") && m.contains("byte offset 21"), "{m}");
        assert_eq!(utf8(b"ok".to_vec()).ok().as_deref(), Some("ok"));
    }

    #[test]
    fn a_yaml_key_is_found_on_its_line_or_above() {
        let t = "version: 1\nexpected-failures:\n  - case: \"x\"\n    reason: |\n      text\n";
        assert_eq!(yaml_key_near(t, 3).as_deref(), Some("case"));
        assert_eq!(yaml_key_near(t, 5).as_deref(), Some("reason"));
        assert_eq!(yaml_key_near("", 1), None);
    }
}
