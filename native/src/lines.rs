//! Lines of a session file, and which of them the trace reader looks at.
//!
//! The specification is `pytest_entropy/ingest/lines.py` (the split) and
//! `pytest_entropy/ingest/native.py` (`SessionScanner.scan_stream`, the prefilter):
//!
//! * bytes are split on `\n` only (spec §14 #23): a `\r` before it stays in the line (the
//!   JSON reader's JavaScript trim removes it later), and an empty line is a line;
//! * a final piece without `\n` is a line too, and the stream is then not *terminated*;
//!   a stream that ends with `\n` (or is empty) has no empty line after the last `\n`;
//! * a line longer than the cap is [`Line::Oversized`]; its bytes are never accumulated;
//! * splitting chunk by chunk gives exactly the lines of splitting the whole.

use memchr::memchr;
use memchr::memmem::Finder;
use std::borrow::Cow;

/// `DEFAULT_LINE_CAP` of `ingest/lines.py`: 64 MiB.
pub const DEFAULT_LINE_CAP: usize = 64 << 20;

/// One line without its `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes (borrowed from the chunk, or owned when it spanned chunks).
    Text(Cow<'a, [u8]>),
    /// Longer than the cap (Python's `OVERSIZED` marker).
    Oversized,
}

impl Line<'_> {
    /// The bytes of a kept line; an oversized line has none (as Python's empty marker).
    pub fn bytes(&self) -> &[u8] {
        match self {
            Line::Text(bytes) => bytes,
            Line::Oversized => b"",
        }
    }
}

/// Splits a byte stream fed in chunks; the carried remainder is at most `cap` bytes.
#[derive(Debug)]
pub struct LineSplitter {
    cap: usize,
    pending: Vec<u8>,
    has_pending: bool,
    skipping: bool,
    bytes_read: u64,
    ends_with_newline: bool,
}

impl LineSplitter {
    /// A splitter whose lines longer than `cap` bytes become [`Line::Oversized`].
    pub fn new(cap: usize) -> Self {
        LineSplitter {
            cap,
            pending: Vec::new(),
            has_pending: false,
            skipping: false,
            bytes_read: 0,
            ends_with_newline: true,
        }
    }

    /// Appends to `out` every line the chunk completes.
    pub fn feed<'a>(&mut self, chunk: &'a [u8], out: &mut Vec<Line<'a>>) {
        if chunk.is_empty() {
            return;
        }
        self.bytes_read += chunk.len() as u64;
        self.ends_with_newline = chunk[chunk.len() - 1] == b'\n';
        let mut start = 0;
        if self.skipping || self.has_pending {
            let Some(cut) = memchr(b'\n', chunk) else {
                if !self.skipping {
                    self.pending.extend_from_slice(chunk);
                    if self.pending.len() > self.cap {
                        self.drop_pending(true);
                    }
                }
                return;
            };
            if self.skipping || self.pending.len() + cut > self.cap {
                out.push(Line::Oversized);
            } else {
                self.pending.extend_from_slice(&chunk[..cut]);
                out.push(Line::Text(Cow::Owned(std::mem::take(&mut self.pending))));
            }
            self.drop_pending(false);
            start = cut + 1;
        }
        let mut rest = &chunk[start..];
        while let Some(cut) = memchr(b'\n', rest) {
            out.push(self.kept(&rest[..cut]));
            rest = &rest[cut + 1..];
        }
        if !rest.is_empty() {
            if rest.len() > self.cap {
                self.skipping = true;
            } else {
                self.pending.extend_from_slice(rest);
                self.has_pending = true;
            }
        }
    }

    /// The last line when the stream did not end with `\n`.
    pub fn finish(&mut self) -> Option<Line<'static>> {
        let last = if self.skipping {
            Some(Line::Oversized)
        } else if self.has_pending {
            Some(Line::Text(Cow::Owned(std::mem::take(&mut self.pending))))
        } else {
            None
        };
        self.drop_pending(false);
        last
    }

    /// Whether the stream ended with `\n` or was empty (`LineRead.terminated`).
    pub fn terminated(&self) -> bool {
        self.ends_with_newline
    }

    /// Bytes fed so far (`LineRead.bytes_read`).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    fn kept<'a>(&self, line: &'a [u8]) -> Line<'a> {
        if line.len() > self.cap {
            Line::Oversized
        } else {
            Line::Text(Cow::Borrowed(line))
        }
    }

    fn drop_pending(&mut self, skipping: bool) {
        self.pending.clear();
        self.has_pending = false;
        self.skipping = skipping;
    }
}

/// Every line of a whole buffer, and whether it ended with `\n` (or was empty).
pub fn split_lines(data: &[u8], cap: usize) -> (Vec<Line<'_>>, bool) {
    let mut splitter = LineSplitter::new(cap);
    let mut lines = Vec::new();
    splitter.feed(data, &mut lines);
    lines.extend(splitter.finish());
    (lines, splitter.terminated())
}

/// What the trace reader does with a line (`SessionScanner.scan_stream`'s tallies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Holds `pi-fabric.execution`: a candidate for the trace-V1 reader.
    Trace,
    /// Longer than the cap.
    Oversized,
    /// No bytes at all (a line of spaces is not empty: it is ignored).
    Empty,
    /// Holds `"type":"model_change"` or `"role":"assistant"`: may move the model cursor.
    Model,
    /// Anything else: counted, never parsed.
    Ignored,
}

/// The byte marks of `ingest/native.py` (`_TRACE_MARK`, `_MODEL_CHANGE_MARK`,
/// `_ASSISTANT_MARK`), each searched once per line in the Python order.
pub struct Prefilter {
    trace: Finder<'static>,
    model_change: Finder<'static>,
    assistant: Finder<'static>,
    type_name: Finder<'static>,
    role_name: Finder<'static>,
}

impl Default for Prefilter {
    fn default() -> Self {
        Prefilter {
            trace: Finder::new(b"pi-fabric.execution"),
            model_change: Finder::new(b"\"type\":\"model_change\""),
            assistant: Finder::new(b"\"role\":\"assistant\""),
            type_name: Finder::new(b"\"type\""),
            role_name: Finder::new(b"\"role\""),
        }
    }
}

/// JavaScript's `\s` at `raw[at..]`: the length in bytes of the white space there (the
/// ASCII spaces and the Unicode ones in UTF-8), 0 when there is none.
fn js_space(raw: &[u8], at: usize) -> usize {
    match raw.get(at..).unwrap_or_default() {
        [b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ', ..] => 1,
        [0xC2, 0xA0, ..] => 2,
        [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..]
        | [0xEF, 0xBB, 0xBF, ..] => 3,
        _ => 0,
    }
}

/// Whether `"name"\s*:\s*"value"` (both quoted in `name` and `value`) occurs in `raw`.
fn spaced_pair(raw: &[u8], name: &Finder<'_>, value: &[u8]) -> bool {
    let mut from = 0;
    while let Some(found) = name.find(&raw[from..]) {
        let mut at = from + found + name.needle().len();
        let skip = |mut at: usize| loop {
            match js_space(raw, at) {
                0 => return at,
                n => at += n,
            }
        };
        at = skip(at);
        if raw.get(at) == Some(&b':') && raw[skip(at + 1)..].starts_with(value) {
            return true;
        }
        // The name's closing quote may open the next occurrence.
        from += found + 1;
    }
    false
}

impl Prefilter {
    /// Metric v3's kind: as [`Prefilter::classify`], with white space allowed around the
    /// colon of a model line's mark (`is_model_line_v3` in `ingest/model_lines.py`).
    pub fn classify_v3(&self, line: &Line<'_>) -> LineKind {
        match self.classify(line) {
            LineKind::Ignored => {
                let Line::Text(raw) = line else {
                    return LineKind::Ignored;
                };
                if spaced_pair(raw, &self.type_name, b"\"model_change\"")
                    || spaced_pair(raw, &self.role_name, b"\"assistant\"")
                {
                    LineKind::Model
                } else {
                    LineKind::Ignored
                }
            }
            kind => kind,
        }
    }

    /// The line's kind; the trace mark is looked for first, as in Python.
    pub fn classify(&self, line: &Line<'_>) -> LineKind {
        let raw = match line {
            Line::Oversized => return LineKind::Oversized,
            Line::Text(raw) => raw,
        };
        if self.trace.find(raw).is_some() {
            LineKind::Trace
        } else if raw.is_empty() {
            LineKind::Empty
        } else if self.model_change.find(raw).is_some() || self.assistant.find(raw).is_some() {
            LineKind::Model
        } else {
            LineKind::Ignored
        }
    }
}

/// `_may_mention`: whether a trace line may hold one of the quoted strings `mentions`.
/// A line with a backslash may spell one with escapes, so it is always read.
pub fn may_mention(raw: &[u8], mentions: &[&[u8]]) -> bool {
    memchr(b'\\', raw).is_some()
        || mentions
            .iter()
            .any(|mention| memchr::memmem::find(raw, mention).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(data: &[u8], cap: usize) -> (Vec<Option<Vec<u8>>>, bool) {
        let (lines, terminated) = split_lines(data, cap);
        let out = lines
            .into_iter()
            .map(|line| match line {
                Line::Text(bytes) => Some(bytes.into_owned()),
                Line::Oversized => None,
            })
            .collect();
        (out, terminated)
    }

    #[test]
    fn splits_on_newline_only() {
        let (lines, terminated) = texts(b"a\r\n\nb", 10);
        assert_eq!(
            lines,
            vec![Some(b"a\r".to_vec()), Some(vec![]), Some(b"b".to_vec())]
        );
        assert!(!terminated);
        assert_eq!(texts(b"", 10), (vec![], true));
        assert_eq!(texts(b"\n", 10), (vec![Some(vec![])], true));
    }

    #[test]
    fn the_cap_is_inclusive() {
        let (lines, _) = texts(b"12345\n123456\n123456", 5);
        assert_eq!(lines, vec![Some(b"12345".to_vec()), None, None]);
    }

    #[test]
    fn chunks_give_the_lines_of_the_whole() {
        let data = b"first\r\n\nsecond line that is long\nx\n\nlast";
        for cap in [0, 3, 6, 100] {
            let whole = texts(data, cap);
            for size in 1..data.len() + 1 {
                let mut splitter = LineSplitter::new(cap);
                let mut got: Vec<Option<Vec<u8>>> = Vec::new();
                for chunk in data.chunks(size) {
                    let mut out = Vec::new();
                    splitter.feed(chunk, &mut out);
                    got.extend(out.into_iter().map(|l| match l {
                        Line::Text(b) => Some(b.into_owned()),
                        Line::Oversized => None,
                    }));
                }
                if let Some(last) = splitter.finish() {
                    got.push(match last {
                        Line::Text(b) => Some(b.into_owned()),
                        Line::Oversized => None,
                    });
                }
                assert_eq!(
                    (got, splitter.terminated()),
                    whole,
                    "cap {cap} chunk {size}"
                );
                assert_eq!(splitter.bytes_read(), data.len() as u64);
            }
        }
    }

    #[test]
    fn classifies_as_the_scanner() {
        let filter = Prefilter::default();
        let kind = |raw: &[u8]| filter.classify(&Line::Text(Cow::Borrowed(raw)));
        assert_eq!(kind(b"{\"kind\":\"pi-fabric.execution\"}"), LineKind::Trace);
        assert_eq!(kind(b""), LineKind::Empty);
        assert_eq!(kind(b" "), LineKind::Ignored);
        assert_eq!(kind(b"{\"type\":\"model_change\"}"), LineKind::Model);
        assert_eq!(kind(b"{\"role\":\"assistant\"}"), LineKind::Model);
        assert_eq!(kind(b"{\"role\": \"assistant\"}"), LineKind::Ignored);
        assert_eq!(filter.classify(&Line::Oversized), LineKind::Oversized);
        let v3 = |raw: &[u8]| filter.classify_v3(&Line::Text(Cow::Borrowed(raw)));
        assert_eq!(v3(b"{\"role\": \"assistant\"}"), LineKind::Model);
        assert_eq!(
            v3(b"{\"type\" \t:\xc2\xa0\xe2\x80\xaf\"model_change\"}"),
            LineKind::Model
        );
        assert_eq!(v3(b"\"type\"type\" : \"model_change\""), LineKind::Model);
        assert_eq!(
            v3(b"{\"type\":\xe2\x80\x8b\"model_change\"}"),
            LineKind::Ignored
        );
        assert_eq!(v3(b"{\"type\" : \"model_changes\"}"), LineKind::Ignored);
        assert_eq!(v3(b"{\"type\" : \"model\"}"), LineKind::Ignored);
        assert_eq!(v3(b"{\"role\"::\"assistant\"}"), LineKind::Ignored);
        assert_eq!(v3(b" "), LineKind::Ignored);
        assert_eq!(v3(b""), LineKind::Empty);
        assert!(may_mention(b"{\"a\\n\"}", &[b"\"ref\""]));
        assert!(may_mention(b"{\"ref\":1}", &[b"\"x\"", b"\"ref\""]));
        assert!(!may_mention(b"{\"refs\":1}", &[b"\"ref\""]));
    }
}
