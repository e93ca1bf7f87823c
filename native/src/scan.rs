//! One session file in the native trace format, read chunk by chunk (spec §1.1-§1.5).
//!
//! The specification is `SessionScanner` in `pytest_entropy/ingest/native.py` on its plain
//! path (`scan_stream`, `_trace_line`, `_model_line`, `_parse`, `_emit`): every line is
//! numbered and counted by kind (the prefilter of [`crate::lines::Prefilter`]); a trace
//! line is parsed, navigated to `details.trace` (or `message.details.trace`), guarded and
//! metered with the current model; a model line moves the model cursor. Whatever is skipped
//! is counted, and the first notes (line number and problem) are kept, as
//! `ScanDiagnostics.note` keeps the first ten samples.
//!
//! The scanner owns its state; the caller feeds chunks and takes the finished data at the
//! end. A malformed line's note needs the Python reader's own error text, which this crate
//! does not reproduce: the note keeps the line's bytes until the caller supplies the text
//! ([`Scanner::malformed_notes`], [`Scanner::resolve_note`]), which it does after each chunk.

use crate::guard::{get, guard, Refusal};
use crate::json::{self, JsString, Select, Value};
use crate::lines::{Line, LineKind, LineSplitter, Prefilter};
use crate::meter::{MeterState, Operation};
use crate::tallies::Tallies;

/// `ScanDiagnostics.SAMPLE_LIMIT`: a file's notes past this many can never be shown.
pub const NOTE_LIMIT: usize = 10;

/// An operation as the guard and the meter read it: the members they compare built whole,
/// every other string only checked to be one (argument values, results, errors).
const OPERATION: Select = Select::Object(
    &[
        ("type", Select::All),
        ("sequence", Select::All),
        ("ref", Select::All),
        ("outcome", Select::All),
        ("failureStage", Select::All),
        // Named only so that their keys are not allocated: read by shape, as the others.
        ("args", Select::Shape),
        ("provider", Select::Shape),
        ("action", Select::Shape),
        ("error", Select::Shape),
        ("result", Select::Shape),
        ("resultTruncated", Select::Shape),
        // Metric v3's guard checks a witness's every member (v2's refuses the key).
        ("normalization", Select::All),
    ],
    &Select::Shape,
);
const COUNTS: Select = Select::Object(
    &[
        ("droppedValues", Select::All),
        ("truncatedValues", Select::All),
        ("redactedValues", Select::All),
        ("droppedOperations", Select::All),
    ],
    &Select::All,
);
/// The trace envelope as the guard reads it (every member kept: unknown keys matter).
const ENVELOPE: Select = Select::Object(
    &[
        ("kind", Select::All),
        ("version", Select::All),
        ("outcome", Select::All),
        ("phases", Select::All),
        ("operations", Select::Items(&OPERATION)),
        ("counts", COUNTS),
        ("error", Select::Shape),
    ],
    &Select::Shape,
);
/// What a trace line's reader looks at: `details.trace`, or `message.details.trace`.
const TRACE_DETAILS: Select = Select::Members(&[("trace", ENVELOPE)]);
pub const TRACE_LINE: Select = Select::Members(&[
    ("details", TRACE_DETAILS),
    ("message", Select::Members(&[("details", TRACE_DETAILS)])),
]);
/// For the tallies (`tallies.rs`): the operations' arguments whole (the trial checks them,
/// the evidence tallies their values) and/or the audits beside the trace.
const OPERATION_ARGS: Select = Select::Object(
    &[
        ("type", Select::All),
        ("sequence", Select::All),
        ("ref", Select::All),
        ("outcome", Select::All),
        ("failureStage", Select::All),
        ("args", Select::All),
        ("provider", Select::Shape),
        ("action", Select::Shape),
        ("error", Select::Shape),
        ("result", Select::Shape),
        ("resultTruncated", Select::Shape),
        // Metric v3's guard checks a witness's every member (v2's refuses the key).
        ("normalization", Select::All),
    ],
    &Select::Shape,
);
const ENVELOPE_ARGS: Select = Select::Object(
    &[
        ("kind", Select::All),
        ("version", Select::All),
        ("outcome", Select::All),
        ("phases", Select::All),
        ("operations", Select::Items(&OPERATION_ARGS)),
        ("counts", COUNTS),
        ("error", Select::Shape),
    ],
    &Select::Shape,
);
const ARGS_DETAILS: Select = Select::Members(&[("trace", ENVELOPE_ARGS)]);
const AUDITS_DETAILS: Select = Select::Members(&[("trace", ENVELOPE), ("audits", Select::All)]);
const ARGS_AUDITS_DETAILS: Select =
    Select::Members(&[("trace", ENVELOPE_ARGS), ("audits", Select::All)]);
const ARGS_LINE: Select = Select::Members(&[
    ("details", ARGS_DETAILS),
    ("message", Select::Members(&[("details", ARGS_DETAILS)])),
]);
const AUDITS_LINE: Select = Select::Members(&[
    ("details", AUDITS_DETAILS),
    ("message", Select::Members(&[("details", AUDITS_DETAILS)])),
]);
const ARGS_AUDITS_LINE: Select = Select::Members(&[
    ("details", ARGS_AUDITS_DETAILS),
    (
        "message",
        Select::Members(&[("details", ARGS_AUDITS_DETAILS)]),
    ),
]);
/// Metric v3 reads a trace line's model fields too (`model_from_record`), beside `details`.
macro_rules! with_model {
    ($details:expr) => {
        Select::Members(&[
            ("type", Select::All),
            ("provider", Select::All),
            ("modelId", Select::All),
            ("details", $details),
            (
                "message",
                Select::Members(&[
                    ("role", Select::All),
                    ("provider", Select::All),
                    ("model", Select::All),
                    ("details", $details),
                ]),
            ),
        ])
    };
}
const TRACE_LINE_V3: Select = with_model!(TRACE_DETAILS);
const ARGS_LINE_V3: Select = with_model!(ARGS_DETAILS);
const AUDITS_LINE_V3: Select = with_model!(AUDITS_DETAILS);
const ARGS_AUDITS_LINE_V3: Select = with_model!(ARGS_AUDITS_DETAILS);
/// The same with the trace whole: for its exact `JSON.stringify` size, when needed.
const WHOLE_DETAILS: Select = Select::Members(&[("trace", Select::All)]);
pub const WHOLE_TRACE_LINE: Select = Select::Members(&[
    ("details", WHOLE_DETAILS),
    ("message", Select::Members(&[("details", WHOLE_DETAILS)])),
]);
/// What a model line's reader looks at (`model_from_record`).
pub const MODEL_LINE: Select = Select::Members(&[
    ("type", Select::All),
    ("provider", Select::All),
    ("modelId", Select::All),
    (
        "message",
        Select::Members(&[
            ("role", Select::All),
            ("provider", Select::All),
            ("model", Select::All),
        ]),
    ),
]);

/// What a note says: a text, or a malformed line waiting for the reader's error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    Text(String),
    Malformed(Vec<u8>),
}

/// One note: the 1-based line number and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub line: u64,
    pub problem: Problem,
}

/// The counters of `ScanDiagnostics` a scan fills (by their Python names).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    pub lines: u64,
    pub empty_lines: u64,
    pub ignored_lines: u64,
    pub model_lines: u64,
    pub trace_lines: u64,
    pub oversized_lines: u64,
    pub malformed_lines: u64,
    pub non_object_lines: u64,
    pub lines_without_details: u64,
    pub lines_without_trace: u64,
    pub fallback_parsed_lines: u64,
    pub traces: u64,
    pub rejected_traces: u64,
}

/// The line loop's state for one file.
pub struct Scanner {
    splitter: LineSplitter,
    prefilter: Prefilter,
    mentions: Option<Vec<Vec<u8>>>,
    pub counts: Counts,
    /// `rejection_reasons` in first-seen order.
    pub reasons: Vec<(&'static str, u64)>,
    pub notes: Vec<Note>,
    /// The model cursor (WTF-8), `None` before any model is announced.
    pub model: Option<Vec<u8>>,
    pub meter: MeterState,
    /// What the scan gathers beside the meter (nothing unless the caller asks).
    pub tallies: Tallies,
    /// Reads as metric v3 does (`SessionScanner(metric_version=3)`): its guard allows a
    /// normal-form witness, its model prefilter white space, a trace line moves the model
    /// cursor too, and only a guarded trace's line gives audits.
    pub v3: bool,
}

/// `model_from_record`: the model a `model_change` record or an assistant message names.
fn model_from_record(record: &json::Object) -> Option<Vec<u8>> {
    let named = |object: &json::Object, provider: &str, model: &str| {
        let text = |key| match get(object, key) {
            Some(Value::String(s)) if !s.as_wtf8().is_empty() => Some(s.as_wtf8()),
            _ => None,
        };
        let (p, m) = (text(provider)?, text(model)?);
        Some([p, b"/", m].concat())
    };
    if matches!(get(record, "type"), Some(Value::String(s)) if s.as_wtf8() == b"model_change") {
        return named(record, "provider", "modelId");
    }
    match get(record, "message") {
        Some(Value::Object(message)) if matches!(get(message, "role"), Some(Value::String(s)) if s.as_wtf8() == b"assistant") => {
            named(message, "provider", "model")
        }
        _ => None,
    }
}

/// The trace of a record read before (`details.trace` or `message.details.trace`).
fn trace_of<'a>(record: &'a Value<'a>) -> Option<&'a Value<'a>> {
    let Value::Object(record) = record else {
        return None;
    };
    get(details_of(record)?, "trace")
}

/// `details`, or `message.details`, when it is an object.
fn details_of<'a>(record: &'a json::Object<'a>) -> Option<&'a json::Object<'a>> {
    if let Some(Value::Object(details)) = get(record, "details") {
        return Some(details);
    }
    match get(record, "message") {
        Some(Value::Object(message)) => match get(message, "details") {
            Some(Value::Object(details)) => Some(details),
            _ => None,
        },
        _ => None,
    }
}

impl Scanner {
    /// A scanner starting from `model`; with `mentions`, trace lines that cannot mention
    /// one of those quoted byte strings are counted and skipped unread.
    pub fn new(line_cap: usize, model: Option<Vec<u8>>, mentions: Option<Vec<Vec<u8>>>) -> Self {
        Scanner {
            splitter: LineSplitter::new(line_cap),
            prefilter: Prefilter::default(),
            mentions,
            counts: Counts::default(),
            reasons: Vec::new(),
            notes: Vec::new(),
            model,
            meter: MeterState::default(),
            tallies: Tallies::default(),
            v3: false,
        }
    }

    /// The same scanner reading as metric v3 does.
    pub fn v3(mut self) -> Self {
        self.v3 = true;
        self
    }

    /// Reads every line the chunk completes.
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut lines = Vec::new();
        self.splitter.feed(chunk, &mut lines);
        for line in &lines {
            self.line(line);
        }
    }

    /// The end of the stream: reads the last line when the stream did not end with `\n`.
    pub fn finish(&mut self) {
        if let Some(last) = self.splitter.finish() {
            self.line(&last);
        }
    }

    /// Whether the stream ended with `\n` (or was empty).
    pub fn terminated(&self) -> bool {
        self.splitter.terminated()
    }

    /// The notes still waiting for a malformed line's error text: (position, line bytes).
    pub fn malformed_notes(&self) -> Vec<(usize, &[u8])> {
        self.notes
            .iter()
            .enumerate()
            .filter_map(|(at, note)| match &note.problem {
                Problem::Malformed(raw) => Some((at, raw.as_slice())),
                Problem::Text(_) => None,
            })
            .collect()
    }

    /// Gives the note at `at` its text.
    pub fn resolve_note(&mut self, at: usize, text: String) {
        if let Some(note) = self.notes.get_mut(at) {
            note.problem = Problem::Text(text);
        }
    }

    fn note(&mut self, problem: Problem) {
        if self.notes.len() < NOTE_LIMIT {
            let line = self.counts.lines;
            self.notes.push(Note { line, problem });
        }
    }

    fn note_text(&mut self, text: &str) {
        if self.notes.len() < NOTE_LIMIT {
            self.note(Problem::Text(text.to_owned()));
        }
    }

    fn line(&mut self, line: &Line<'_>) {
        self.counts.lines += 1;
        let kind = if self.v3 {
            self.prefilter.classify_v3(line)
        } else {
            self.prefilter.classify(line)
        };
        match kind {
            LineKind::Trace => {
                self.counts.trace_lines += 1;
                let raw = line.bytes();
                let wanted = match &self.mentions {
                    None => true,
                    Some(mentions) => {
                        let quoted: Vec<&[u8]> = mentions.iter().map(Vec::as_slice).collect();
                        crate::lines::may_mention(raw, &quoted)
                    }
                };
                if wanted {
                    self.trace_line(raw);
                }
            }
            LineKind::Oversized => {
                self.counts.oversized_lines += 1;
                self.note_text("line longer than the cap");
            }
            LineKind::Empty => self.counts.empty_lines += 1,
            LineKind::Model => {
                self.counts.model_lines += 1;
                if let Some(parsed) = self.parse(line.bytes(), &MODEL_LINE) {
                    if let Value::Object(record) = &parsed.value {
                        if let Some(model) = model_from_record(record) {
                            self.model = Some(model);
                        }
                    }
                }
            }
            LineKind::Ignored => self.counts.ignored_lines += 1,
        }
    }

    /// `_parse`: the line's object, counting and noting what makes it unusable.
    fn parse<'r>(&mut self, raw: &'r [u8], select: &Select) -> Option<json::Parsed<'r>> {
        let parsed = match json::parse_selected(raw, select) {
            Ok(parsed) => parsed,
            Err(_) => {
                self.counts.malformed_lines += 1;
                if self.notes.len() < NOTE_LIMIT {
                    self.note(Problem::Malformed(raw.to_vec()));
                }
                return None;
            }
        };
        if !parsed.fast {
            self.counts.fallback_parsed_lines += 1;
        }
        if !matches!(parsed.value, Value::Object(_)) {
            self.counts.non_object_lines += 1;
            self.note_text("line is not a JSON object");
            return None;
        }
        Some(parsed)
    }

    /// `_trace_line`: parse, navigate, guard, meter.
    fn trace_line(&mut self, raw: &[u8]) {
        let wants = (self.tallies.wants_arguments(), self.tallies.wants_audits());
        let select = match (self.v3, wants) {
            (false, (false, false)) => &TRACE_LINE,
            (false, (true, false)) => &ARGS_LINE,
            (false, (false, true)) => &AUDITS_LINE,
            (false, (true, true)) => &ARGS_AUDITS_LINE,
            (true, (false, false)) => &TRACE_LINE_V3,
            (true, (true, false)) => &ARGS_LINE_V3,
            (true, (false, true)) => &AUDITS_LINE_V3,
            (true, (true, true)) => &ARGS_AUDITS_LINE_V3,
        };
        let Some(parsed) = self.parse(raw, select) else {
            return;
        };
        if self.v3 {
            // v3 moves the cursor on every parsed line, before the line's trace is metered.
            if let Value::Object(record) = &parsed.value {
                if let Some(model) = model_from_record(record) {
                    self.model = Some(model);
                }
            }
        }
        let source_length = parsed.fast.then_some(raw.len());
        let Some((trace, audits)) = self.locate(&parsed.value) else {
            return;
        };
        let mut guarded = false;
        if let Some(trace) = trace {
            match self.meter_trace(trace, source_length, false) {
                Some(passed) => guarded = passed,
                None => {
                    // The exact size of a trace read without its strings: read the line
                    // again, whole (the same bytes parse the same way; a failure would be
                    // this crate's bug).
                    let whole = json::parse_selected(raw, &WHOLE_TRACE_LINE);
                    match whole.as_ref().ok().and_then(|p| trace_of(&p.value)) {
                        Some(trace) => {
                            guarded = self.meter_trace(trace, source_length, true) == Some(true);
                        }
                        None => self.reject("guard error: native core"),
                    }
                }
            }
        }
        // The audits beside the trace (`_harvest`): v2 whatever became of it, v3 only
        // those of a guarded trace.
        if guarded || !self.v3 {
            self.tallies.audits(audits);
        }
    }

    /// The line's trace and audits, counting a line without details or without a trace;
    /// `None` for a line without details.
    #[allow(clippy::type_complexity)]
    fn locate<'v>(
        &mut self,
        record: &'v Value<'v>,
    ) -> Option<(Option<&'v Value<'v>>, Option<&'v Value<'v>>)> {
        let Value::Object(record) = record else {
            return None;
        };
        let Some(details) = details_of(record) else {
            self.counts.lines_without_details += 1;
            return None;
        };
        let trace = get(details, "trace");
        if trace.is_none() {
            self.counts.lines_without_trace += 1;
        }
        Some((trace, get(details, "audits")))
    }

    /// Guards and meters one trace: whether it passed, `None` when the whole trace is
    /// needed first.
    fn meter_trace(
        &mut self,
        trace: &Value,
        source_length: Option<usize>,
        whole: bool,
    ) -> Option<bool> {
        match guard(trace, source_length, whole, self.v3) {
            Err(Refusal::NeedsWholeTrace) => return None,
            Err(Refusal::Reason(reason)) => {
                self.reject(reason);
                return Some(false);
            }
            Ok(guarded) => {
                self.counts.traces += 1;
                let operations: Vec<Operation<'_>> = guarded
                    .operations
                    .iter()
                    .map(|op| Operation {
                        reference: op.reference.as_wtf8(),
                        outcome: op.outcome,
                        stage: op.stage,
                        signature: &op.signature,
                    })
                    .collect();
                let task = guarded.task_key.map(JsString::as_wtf8);
                self.meter
                    .add_signed(&operations, task, self.model.as_deref());
                let calls = guarded.operations.iter();
                self.tallies
                    .trace(calls.map(|op| (op.reference, op.args, op.outcome)));
            }
        }
        Some(true)
    }

    fn reject(&mut self, reason: &'static str) {
        self.counts.rejected_traces += 1;
        match self.reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, count)) => *count += 1,
            None => self.reasons.push((reason, 1)),
        }
        if self.notes.len() < NOTE_LIMIT {
            self.note(Problem::Text(format!("trace skipped: {reason}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"{"type":"message","message":{"role":"toolResult","details":{"trace":{"kind":"pi-fabric.execution","version":1,"outcome":"succeeded","phases":["t"],"operations":[{"type":"call","sequence":1,"ref":"pi.read","args":{"path":"a"},"outcome":"succeeded"}],"counts":{"droppedValues":0,"truncatedValues":0,"redactedValues":0,"droppedOperations":0}}}}}"#;

    #[test]
    fn counts_lines_as_the_scanner() {
        let data = format!(
            "{TRACE}\n\n{{\"type\":\"model_change\",\"provider\":\"p\",\"modelId\":\"m\"}}\n \n{{pi-fabric.execution\n[\"pi-fabric.execution\"]\n{}\n{TRACE}",
            TRACE.replace("\"version\":1", "\"version\":2")
        );
        for size in [1, 7, 64, data.len()] {
            let mut scanner = Scanner::new(1 << 20, None, None);
            for chunk in data.as_bytes().chunks(size) {
                scanner.feed(chunk);
            }
            scanner.finish();
            let c = &scanner.counts;
            assert_eq!(
                (c.lines, c.empty_lines, c.ignored_lines, c.model_lines),
                (8, 1, 1, 1)
            );
            assert_eq!(
                (c.trace_lines, c.malformed_lines, c.non_object_lines),
                (5, 1, 1)
            );
            assert_eq!((c.traces, c.rejected_traces), (2, 1));
            assert_eq!(scanner.reasons, vec![("version is not 1", 1)]);
            assert_eq!(scanner.notes.len(), 3);
            assert_eq!(scanner.notes[0].line, 5);
            assert_eq!(scanner.malformed_notes().len(), 1);
            assert_eq!(scanner.meter.traces, 2);
            assert_eq!(scanner.meter.models.entries()[0].1.traces, 1);
            assert_eq!(scanner.model.as_deref(), Some(&b"p/m"[..]));
            assert!(!scanner.terminated());
        }
    }

    #[test]
    fn mentions_skip_lines_unread() {
        let mut scanner = Scanner::new(1 << 20, None, Some(vec![b"\"pi.write\"".to_vec()]));
        scanner.feed(format!("{TRACE}\n").as_bytes());
        scanner.finish();
        assert_eq!((scanner.counts.trace_lines, scanner.counts.traces), (1, 0));
    }
}
