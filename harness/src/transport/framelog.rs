//! The bounded frame log of one session: what a peer's frames cost parity's memory.
//!
//! Every frame a session sees goes through [`FrameLog::push`], but the log keeps only a
//! bounded part of them (`docs/architecture.md` §Memory budget):
//! - **pinned frames**: the harness's own writes (`c2s`) but its answers to the peer's
//!   requests, stderr (already capped by the peer), the exit status, notes, and every stdout
//!   line that is not a request or notification of the peer (responses, and lines that are no
//!   JSON-RPC message at all: what the envelope monitors judge) — up to [`Budget::pinned`]
//!   bytes; past it they count as ordinary frames;
//! - **the head**: the first ordinary frames (the peer's requests and notifications, and
//!   parity's answers to its requests), up to [`Budget::head`] bytes;
//! - **the tail**: the latest ordinary frames after the head, up to [`Budget::tail`] bytes;
//!   older ones are dropped as newer ones come.
//!
//! Each kept line is cut to [`FRAME_KEEP`] bytes; a cut line keeps its full length and the
//! SHA-256 of all its bytes, and is marked [`crate::transport::wire::Line::elided`]. The frames dropped
//! between two kept frames are shown, where they were, as one [`Frame::Gap`] with their count
//! and bytes, so evidence and monitors say what they did not see.

use crate::transport::wire::{Dir, Frame, Line, WireEvent};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};

/// Most bytes of one line the log keeps (64 KiB); the rest is counted and hashed.
pub const FRAME_KEEP: usize = 64 * 1024;

/// What one kept frame is counted as, beyond its bytes (the frame's own fields and the map
/// entry), so a flood of empty lines is bounded too.
pub const FRAME_OVERHEAD: usize = 192;

/// The byte budgets of one frame log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of pinned frames (the harness's writes, responses, non-messages, stderr, notes).
    pub pinned: usize,
    /// Bytes of the first ordinary frames (the peer's requests and notifications).
    pub head: usize,
    /// Bytes of the latest ordinary frames after the head.
    pub tail: usize,
    /// Most bytes of one line kept ([`FRAME_KEEP`] for a session).
    pub line: usize,
}

impl Budget {
    /// A session's budget: 4 MiB pinned, a 1 MiB head and a 1 MiB tail (6 MiB at most).
    pub const SESSION: Budget = Budget {
        pinned: 4 << 20,
        head: 1 << 20,
        tail: 1 << 20,
        line: FRAME_KEEP,
    };

    /// The budget of a session log kept for the monitors once the logs of its revision hold
    /// [`ERA_BUDGET`] bytes: 32 KiB pinned, a 16 KiB head and a 16 KiB tail.
    pub const THIN: Budget = Budget {
        pinned: 32 << 10,
        head: 16 << 10,
        tail: 16 << 10,
        line: 4 << 10,
    };

    /// [`Budget::SESSION`], with every part raised to at least `bytes` and lines kept whole
    /// (a replayed session must keep the whole recording it is compared with: `crate::protocol::replay`).
    pub fn at_least(bytes: usize) -> Budget {
        let s = Budget::SESSION;
        Budget {
            pinned: s.pinned.max(bytes),
            head: s.head.max(bytes),
            tail: s.tail.max(bytes),
            line: usize::MAX,
        }
    }

    /// The budget of a scenario's sessions: [`Budget::SESSION`] with 16 MiB pinned and lines
    /// kept whole, so a step's exchange and its snapshot are compared on whole messages.
    pub const SCENARIO: Budget = Budget {
        pinned: 16 << 20,
        head: 1 << 20,
        tail: 1 << 20,
        line: usize::MAX,
    };
}

/// Bytes of session logs the run keeps per protocol revision for the monitors (8 MiB): past
/// it, each further session log is thinned to [`Budget::THIN`] before it is kept.
pub const ERA_BUDGET: usize = 8 << 20;

/// One kept frame and the frames dropped just before it.
#[derive(Debug, Clone)]
struct Kept {
    ev: WireEvent,
    /// Bytes this frame counts against its part of the budget.
    size: usize,
    /// Frames dropped between the previous kept frame and this one.
    gap_frames: u64,
    /// Their bytes (line lengths).
    gap_bytes: u64,
}

/// The part of the budget a frame was kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Pinned,
    Head,
    Tail,
}

/// A bounded, ordered log of one session's frames. Indexes count every frame pushed, kept or
/// not, so a mark taken with [`FrameLog::len`] stays valid as frames are dropped.
#[derive(Debug, Clone)]
pub struct FrameLog {
    budget: Budget,
    kept: BTreeMap<u64, Kept>,
    /// Indexes of the kept tail frames, oldest first.
    tail: VecDeque<u64>,
    pinned_used: usize,
    head_used: usize,
    tail_used: usize,
    pushed: u64,
    dropped_frames: u64,
    dropped_bytes: u64,
    /// Frames dropped after the last kept frame (or pushed as a gap), waiting for the next.
    pending_gap: Option<(u64, u64)>,
}

impl Default for FrameLog {
    fn default() -> Self {
        FrameLog::new(Budget::SESSION)
    }
}

impl FrameLog {
    /// An empty log with the given budget.
    pub fn new(budget: Budget) -> FrameLog {
        FrameLog {
            budget,
            kept: BTreeMap::new(),
            tail: VecDeque::new(),
            pinned_used: 0,
            head_used: 0,
            tail_used: 0,
            pushed: 0,
            dropped_frames: 0,
            dropped_bytes: 0,
            pending_gap: None,
        }
    }

    /// The log `events` would have given under `budget` (their gaps kept as gaps).
    pub fn thinned(events: Vec<WireEvent>, budget: Budget) -> Vec<WireEvent> {
        let mut log = FrameLog::new(budget);
        for ev in events {
            log.push(ev);
        }
        log.events_from(0)
    }

    /// How many frames were pushed so far (kept or not): the mark for [`FrameLog::events_from`].
    pub fn len(&self) -> usize {
        self.pushed as usize
    }

    /// Whether no frame was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Frames dropped so far and their bytes (lines cut to a prefix are not counted here).
    pub fn dropped(&self) -> (u64, u64) {
        (self.dropped_frames, self.dropped_bytes)
    }

    /// Adds a line the peer's reader read whole (or as an over-cap prefix), copying only what
    /// the log keeps of it: the whole line when it is pinned and fits in what is left of the
    /// pinned budget (so responses and non-messages are judged whole), else its first
    /// [`Budget::line`] bytes. Classified on all its bytes, before any cut.
    pub fn push_line(&mut self, dir: Dir, t: std::time::Duration, line: &Line) {
        let pin = pinned_line(dir, line);
        let whole = FRAME_OVERHEAD + line.bytes.len();
        let keep = if pin && self.pinned_used + whole <= self.budget.pinned {
            usize::MAX
        } else {
            self.budget.line
        };
        let ev = WireEvent {
            dir,
            t,
            frame: Frame::Line(kept_copy(line, keep)),
        };
        self.pushed += 1;
        self.push_as(ev, pin);
    }

    /// Adds a frame, cutting a long line to [`FRAME_KEEP`] bytes and dropping the oldest tail
    /// frames past the budget. A [`Frame::Gap`] pushed (a log thinned again) is counted as the
    /// frames it stands for.
    pub fn push(&mut self, mut ev: WireEvent) {
        self.pushed += 1;
        if let Frame::Gap { frames, bytes } = ev.frame {
            self.dropped_frames += frames;
            self.dropped_bytes += bytes;
            self.pending_gap = Some(match self.pending_gap {
                Some((f, b)) => (f + frames, b + bytes),
                None => (frames, bytes),
            });
            return;
        }
        let pin = pinned(&ev);
        if let Frame::Line(l) = &mut ev.frame {
            if l.bytes.len() > self.budget.line {
                // The digest is of the whole line: only a line that is whole here gets one.
                if l.sha256.is_none() && l.bytes.len() as u64 == l.len {
                    l.sha256 = Some(hex(&Sha256::digest(&l.bytes)));
                }
                l.bytes.truncate(self.budget.line);
                l.bytes.shrink_to_fit();
                l.elided = true;
            }
        }
        self.push_as(ev, pin);
    }

    /// Adds a frame already cut, pinned or not.
    fn push_as(&mut self, ev: WireEvent, pin: bool) {
        let idx = self.pushed - 1;
        let size = frame_cost(&ev);
        let part = if pin && self.pinned_used + size <= self.budget.pinned {
            Part::Pinned
        } else if self.tail.is_empty() && self.head_used + size <= self.budget.head {
            Part::Head
        } else {
            Part::Tail
        };
        match part {
            Part::Pinned => self.pinned_used += size,
            Part::Head => self.head_used += size,
            Part::Tail => {
                self.tail_used += size;
                self.tail.push_back(idx);
            }
        }
        let (gap_frames, gap_bytes) = self.pending_gap.take().unwrap_or((0, 0));
        self.kept.insert(
            idx,
            Kept {
                ev,
                size,
                gap_frames,
                gap_bytes,
            },
        );
        while self.tail_used > self.budget.tail && self.tail.len() > 1 {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.drop_frame(old);
        }
    }

    /// Drops the kept frame `idx`; its count and bytes (and its own gap) move to the gap of
    /// the next kept frame.
    fn drop_frame(&mut self, idx: u64) {
        let Some(k) = self.kept.remove(&idx) else {
            return;
        };
        self.tail_used = self.tail_used.saturating_sub(k.size);
        let len = k.ev.line().map_or(0, |l| l.len);
        self.dropped_frames += 1;
        self.dropped_bytes += len;
        let frames = k.gap_frames + 1;
        let bytes = k.gap_bytes + len;
        match self.kept.range_mut(idx + 1..).next() {
            Some((_, next)) => {
                next.gap_frames += frames;
                next.gap_bytes += bytes;
            }
            None => {
                self.pending_gap = Some(match self.pending_gap {
                    Some((f, b)) => (f + frames, b + bytes),
                    None => (frames, bytes),
                });
            }
        }
    }

    /// The kept frames pushed at index `from` or later, in order, each gap of dropped frames
    /// shown as one [`Frame::Gap`] where the frames were (at the time of the frame after it).
    pub fn events_from(&self, from: usize) -> Vec<WireEvent> {
        let mut out = Vec::new();
        for k in self.kept.range(from as u64..).map(|(_, k)| k) {
            // A gap in front of the first frame at or after a mark taken inside the gap may
            // hold frames from before the mark too: it is shown whole.
            if k.gap_frames > 0 {
                out.push(gap_event(k.ev.t, k.gap_frames, k.gap_bytes));
            }
            out.push(k.ev.clone());
        }
        if let Some((f, b)) = self.pending_gap {
            let t = self
                .kept
                .values()
                .next_back()
                .map(|k| k.ev.t)
                .unwrap_or_default();
            out.push(gap_event(t, f, b));
        }
        out
    }

    /// The kept frames, newest first, without gaps (for lookups of the latest note or write).
    pub fn iter_rev(&self) -> impl Iterator<Item = &WireEvent> {
        self.kept.values().rev().map(|k| &k.ev)
    }
}

/// What a frame counts against a budget: its line's bytes kept plus [`FRAME_OVERHEAD`].
pub fn frame_cost(ev: &WireEvent) -> usize {
    FRAME_OVERHEAD + ev.line().map_or(0, |l| l.bytes.len())
}

/// The frames and bytes the [`Frame::Gap`]s among `events` stand for: `(0, 0)` for a whole log.
pub fn left_out<'a>(events: impl IntoIterator<Item = &'a WireEvent>) -> (u64, u64) {
    events.into_iter().fold((0, 0), |(f, b), e| match e.frame {
        Frame::Gap { frames, bytes } => (f + frames, b + bytes),
        _ => (f, b),
    })
}

/// The copy of `l` a log keeping `keep` bytes of a line keeps: the line itself, or its first
/// `keep` bytes with its full length and the SHA-256 of all of it, marked `elided` (without
/// copying the rest).
pub fn kept_copy(l: &Line, keep: usize) -> Line {
    if l.bytes.len() <= keep {
        return l.clone();
    }
    Line {
        bytes: l.bytes[..keep].to_vec(),
        sha256: l
            .sha256
            .clone()
            .or_else(|| Some(hex(&Sha256::digest(&l.bytes)))),
        elided: true,
        ..l.clone_header()
    }
}

fn gap_event(t: std::time::Duration, frames: u64, bytes: u64) -> WireEvent {
    WireEvent {
        // Never protocol: a gap is a remark beside the frames, like a note.
        dir: Dir::Note,
        t,
        frame: Frame::Gap { frames, bytes },
    }
}

/// Whether a frame is kept ahead of the head and tail. On stdout: everything but the peer's
/// own requests and notifications (its responses, and lines that are no message). On stdin:
/// everything but parity's answers to the peer's requests (its own requests, notifications
/// and probes). Stderr, exits and notes always.
fn pinned(ev: &WireEvent) -> bool {
    ev.line().is_none_or(|l| pinned_line(ev.dir, l))
}

fn pinned_line(dir: Dir, l: &Line) -> bool {
    match dir {
        Dir::S2c => has_method(l) != Some(true),
        Dir::C2s => has_method(l) != Some(false),
        _ => true,
    }
}

/// Whether a line is a JSON object with a `method` (a request or notification: `Some(true)`)
/// or without one (a response: `Some(false)`); `None` for anything else. Read without building
/// the value.
fn has_method(l: &Line) -> Option<bool> {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<serde::de::IgnoredAny>,
    }
    if l.elided || l.over_cap {
        return None;
    }
    serde_json::from_slice::<Probe>(&l.bytes)
        .ok()
        .map(|p| p.method.is_some())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::time::Duration;

    fn line(dir: Dir, text: &str) -> WireEvent {
        WireEvent {
            dir,
            t: Duration::ZERO,
            frame: Frame::Line(Line {
                bytes: text.as_bytes().to_vec(),
                len: text.len() as u64,
                over_cap: false,
                sha256: None,
                terminated: true,
                elided: false,
            }),
        }
    }

    fn note() -> WireEvent {
        line(
            Dir::S2c,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}"#,
        )
    }

    #[test]
    fn a_flood_keeps_head_tail_and_every_pinned_frame() {
        let budget = Budget {
            pinned: 10_000,
            head: 1_000,
            tail: 1_000,
            line: FRAME_KEEP,
        };
        let mut log = FrameLog::new(budget);
        log.push(line(
            Dir::C2s,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ));
        for _ in 0..10_000 {
            log.push(note());
        }
        log.push(line(Dir::S2c, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        log.push(line(Dir::S2c, "not json"));
        let ev = log.events_from(0);
        assert!(ev.len() < 40, "{} frames kept", ev.len());
        let gaps: Vec<_> = ev
            .iter()
            .filter_map(|e| match e.frame {
                Frame::Gap { frames, bytes } => Some((frames, bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(gaps.len(), 1);
        let (dropped, bytes) = log.dropped();
        assert_eq!(gaps[0], (dropped, bytes));
        let kept_notes = ev
            .iter()
            .filter(|e| {
                e.line()
                    .is_some_and(|l| l.bytes == note().line().unwrap().bytes)
            })
            .count();
        assert_eq!(kept_notes as u64 + dropped, 10_000);
        let last = ev
            .iter()
            .rev()
            .filter_map(WireEvent::line)
            .take(2)
            .collect::<Vec<_>>();
        assert_eq!(last[0].bytes, b"not json");
        assert_eq!(last[1].bytes, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(log.len(), 10_003);
    }

    #[test]
    fn a_long_line_keeps_its_length_and_digest() {
        let mut log = FrameLog::default();
        let big = "x".repeat(FRAME_KEEP * 3);
        log.push(line(Dir::S2c, &big));
        let ev = log.events_from(0);
        let l = ev[0].line().unwrap();
        assert_eq!(l.bytes.len(), FRAME_KEEP);
        assert_eq!(l.len, big.len() as u64);
        assert!(l.elided);
        assert_eq!(
            l.sha256.as_deref(),
            Some(hex(&Sha256::digest(big.as_bytes())).as_str())
        );
    }

    #[test]
    fn marks_stay_valid_and_thinning_keeps_the_gap_totals() {
        let mut log = FrameLog::new(Budget {
            pinned: 1_000,
            head: 500,
            tail: 500,
            line: FRAME_KEEP,
        });
        for _ in 0..1_000 {
            log.push(note());
        }
        let mark = log.len();
        log.push(line(Dir::C2s, "{}"));
        let after = log.events_from(mark);
        assert_eq!(after.len(), 1);
        let all = log.events_from(0);
        let thin = FrameLog::thinned(all.clone(), Budget::THIN);
        let total = |ev: &[WireEvent]| {
            ev.iter()
                .map(|e| match e.frame {
                    Frame::Gap { frames, .. } => frames,
                    _ => 1,
                })
                .sum::<u64>()
        };
        assert_eq!(total(&all), 1_001);
        assert_eq!(total(&thin), 1_001);
    }

    #[test]
    fn a_long_response_is_kept_whole_and_a_long_notification_is_cut() {
        let mut log = FrameLog::default();
        let pad = "p".repeat(FRAME_KEEP * 4);
        let response = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"pad":"{pad}"}}}}"#);
        let notification = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{pad}"}}}}"#
        );
        for text in [&response, &notification] {
            let l = line(Dir::S2c, text);
            log.push_line(Dir::S2c, Duration::ZERO, l.line().unwrap());
        }
        let ev = log.events_from(0);
        let kept: Vec<&Line> = ev.iter().filter_map(WireEvent::line).collect();
        assert_eq!(kept[0].bytes, response.as_bytes(), "the response is whole");
        assert!(!kept[0].elided);
        assert_eq!(kept[1].bytes.len(), FRAME_KEEP, "the notification is cut");
        assert!(kept[1].elided);
        assert_eq!(kept[1].len, notification.len() as u64);
        assert_eq!(
            kept[1].sha256.as_deref(),
            Some(hex(&Sha256::digest(notification.as_bytes())).as_str())
        );
    }
}
