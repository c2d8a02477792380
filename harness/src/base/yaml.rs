//! YAML parsed into a tree that keeps where every node starts, so the loaders of scenario files
//! and baselines can name the file, line and field of anything wrong (serde-saphyr's spans).
//!
//! [`parse`] returns the root [`Node`]; a YAML syntax error comes back as [`SyntaxError`] with
//! its 1-based line and column and the field path the parser had reached (`steps[2].expect`).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::json;
use std::cell::RefCell;
use std::fmt;

/// A YAML node with the line and column it starts at.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The value.
    pub(crate) kind: Kind,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) col: usize,
}

/// A YAML value whose children keep their locations.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Kind {
    /// What the value is, for error messages: `a string ("x")`, `a list`, `null`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Kind::Null => "null".into(),
            Kind::Bool(b) => format!("a boolean ({b})"),
            Kind::Int(i) => format!("an integer ({i})"),
            Kind::UInt(u) => format!("an integer ({u})"),
            Kind::Float(x) => format!("a number ({x})"),
            Kind::Str(s) => format!(
                "a string ({})",
                crate::base::textfile::clip_quoted(&json!(s).to_string(), 60)
            ),
            Kind::Seq(_) => "a list".into(),
            Kind::Map(_) => "a mapping".into(),
        }
    }
}

thread_local! {
    /// Field path segments noted while a parse error unwinds (innermost first).
    static PARSE_PATH: RefCell<Vec<Seg>> = const { RefCell::new(Vec::new()) };
}

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn note_seg(seg: Seg) {
    PARSE_PATH.with(|p| p.borrow_mut().push(seg));
}

fn key_text(node: &Node) -> String {
    match &node.kind {
        Kind::Str(s) => s.clone(),
        Kind::Int(i) => i.to_string(),
        Kind::UInt(u) => u.to_string(),
        Kind::Bool(b) => b.to_string(),
        Kind::Float(x) => x.to_string(),
        Kind::Null => "null".into(),
        Kind::Seq(_) | Kind::Map(_) => "(complex key)".into(),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<Kind>::deserialize(d)?;
        Ok(Node {
            kind: s.value,
            line: usize::try_from(s.referenced.line()).unwrap_or(0),
            col: usize::try_from(s.referenced.column()).unwrap_or(0),
        })
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Kind, E> {
        Ok(Kind::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Kind, E> {
        Ok(Kind::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Kind, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => Kind::Int(i),
            Err(_) => Kind::UInt(v),
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kind, E> {
        Ok(Kind::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Kind, E> {
        Ok(Kind::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Kind, E> {
        Ok(Kind::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        Kind::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        let mut items = Vec::new();
        loop {
            match seq.next_element::<Node>() {
                Ok(Some(n)) => items.push(n),
                Ok(None) => break,
                Err(e) => {
                    note_seg(Seg::Index(items.len()));
                    return Err(e);
                }
            }
        }
        Ok(Kind::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<Node>()? {
            match map.next_value::<Node>() {
                Ok(v) => entries.push((k, v)),
                Err(e) => {
                    note_seg(Seg::Key(key_text(&k)));
                    return Err(e);
                }
            }
        }
        Ok(Kind::Map(entries))
    }
}

/// Appends a key to a field path: `.key`, or `["key"]` when it is not a plain word.
pub(crate) fn path_key(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '/'));
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", json!(key)),
    }
}

/// Appends an index to a field path: `[i]`.
pub(crate) fn path_index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A YAML syntax error: where, the field path reached, and the parser's message.
#[derive(Debug, Clone)]
pub(crate) struct SyntaxError {
    /// 1-based line; 0 when unknown.
    pub(crate) line: usize,
    /// 1-based column; 0 when unknown.
    pub(crate) column: usize,
    /// The field path the parser had reached (`steps[2].expect`); empty for the document.
    pub(crate) field: String,
    /// The parser's message.
    pub(crate) message: String,
}

/// Parses YAML text into the located tree (strict booleans: only `true`/`false`).
///
/// Errors: the text is not YAML.
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    PARSE_PATH.with(|p| p.borrow_mut().clear());
    let options = serde_saphyr::options! {
        with_snippet: false,
        strict_booleans: true,
    };
    serde_saphyr::from_str_with_options::<Node>(text, options).map_err(|e| {
        let segs = PARSE_PATH.with(|p| std::mem::take(&mut *p.borrow_mut()));
        let mut field = String::new();
        for s in segs.iter().rev() {
            field = match s {
                Seg::Key(k) => path_key(&field, k),
                Seg::Index(i) => path_index(&field, *i),
            };
        }
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        use serde_saphyr::MessageFormatter;
        SyntaxError {
            line: usize::try_from(line).unwrap_or(0),
            column: usize::try_from(column).unwrap_or(0),
            field,
            message: serde_saphyr::UserMessageFormatter
                .format_message(&e)
                .into_owned(),
        }
    })
}
