//! JSON with JavaScript's `JSON.parse(line.trim())` semantics, exactly as the plain Python
//! specification decides (`pytest_entropy/ingest/jsonparse.py`, `core/jscompat.py`).
//!
//! The Python reader is orjson on the raw bytes, with a fallback (`errors="replace"` decode,
//! JavaScript trim, the standard library's decoder, an iterative parser past its recursion
//! limit) for what orjson refuses. Together they accept exactly what `JSON.parse` accepts,
//! and this parser mirrors the pair, including which of them would have read the line
//! ([`Parsed::fast`], counted by the scanner as `fallback_parsed_lines`):
//!
//! * invalid UTF-8 becomes U+FFFD (maximal subparts, as Python's decoder); not fast;
//! * JavaScript trim whitespace (BOM, NBSP, U+2028, ...) around the value is removed; only
//!   `" \t\n\r"` there keeps the line fast;
//! * a lone surrogate escape is kept (strings are WTF-8, see [`JsString`]); not fast;
//! * a number beyond the double range is ±Infinity (`1e400`); not fast;
//! * nesting has no limit (the parser keeps its own stack); deeper than 1024: not fast;
//! * `NaN` / `Infinity` literals are refused;
//! * the last of duplicate keys wins and keeps the first one's position (a Python dict);
//!   [`Object::js_order`] gives JavaScript's own-key order (array-index keys first);
//! * an integer token stays an integer when orjson keeps one (within i64 or u64). Beyond
//!   that a fast line gives a double (orjson) while a fallback line keeps the exact integer
//!   up to 300 characters (Python's `int`; past 300 the fallback reads a double too).
//!   The difference is invisible in JavaScript (both print the same text, see `jsnum`);
//!   it is mirrored, not explained: it is what the specification does.

use std::collections::HashMap;

/// orjson's nesting limit: 1024 containers deep parse, 1025 do not.
const FAST_DEPTH: usize = 1024;
/// `_parse_int` in jsonparse.py: a longer integer token is read as a double.
const EXACT_INTEGER_CHARS: usize = 300;
/// Objects at least this large find duplicate keys through a hash index.
const INDEXED_OBJECT: usize = 12;

/// A string as JavaScript holds it: UTF-8 text, or WTF-8 when it holds a lone surrogate
/// (UTF-8 that also encodes U+D800-U+DFFF, never a high one followed by a low one). A
/// string without escapes is borrowed from the line it was read from (no allocation).
#[derive(Clone, Debug)]
pub struct JsString<'a> {
    repr: Repr<'a>,
}

#[derive(Clone, Debug)]
enum Repr<'a> {
    /// The text as it stands in the line (or one of the names a selective read looks for).
    Borrowed(&'a str),
    Text(String),
    Wtf8(Vec<u8>),
}

// Equal text is equal whatever holds it.
impl PartialEq for JsString<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_wtf8() == other.as_wtf8()
    }
}

impl Eq for JsString<'_> {}

impl std::hash::Hash for JsString<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.as_wtf8());
    }
}

impl Default for JsString<'_> {
    fn default() -> Self {
        JsString {
            repr: Repr::Borrowed(""),
        }
    }
}

impl<'a> JsString<'a> {
    /// The text when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        match &self.repr {
            Repr::Borrowed(text) => Some(text),
            Repr::Text(text) => Some(text),
            Repr::Wtf8(_) => None,
        }
    }

    /// The WTF-8 bytes (UTF-8 when there is no lone surrogate).
    pub fn as_wtf8(&self) -> &[u8] {
        match &self.repr {
            Repr::Borrowed(text) => text.as_bytes(),
            Repr::Text(text) => text.as_bytes(),
            Repr::Wtf8(bytes) => bytes,
        }
    }

    /// The same string owning its text (for a value that outlives its line).
    pub fn into_owned(self) -> JsString<'static> {
        let repr = match self.repr {
            Repr::Borrowed(text) => Repr::Text(text.to_owned()),
            Repr::Text(text) => Repr::Text(text),
            Repr::Wtf8(bytes) => Repr::Wtf8(bytes),
        };
        JsString { repr }
    }

    /// Code points, lone surrogates included.
    pub fn code_points(&self) -> CodePoints<'_> {
        CodePoints {
            bytes: self.as_wtf8(),
            at: 0,
        }
    }

    /// UTF-16 code units (what JavaScript's `<` and `length` see).
    pub fn code_units(&self) -> impl Iterator<Item = u16> + '_ {
        self.code_points().flat_map(|cp| {
            if cp > 0xFFFF {
                let v = cp - 0x10000;
                [
                    Some(0xD800 + (v >> 10) as u16),
                    Some(0xDC00 + (v & 0x3FF) as u16),
                ]
            } else {
                [Some(cp as u16), None]
            }
            .into_iter()
            .flatten()
        })
    }

    fn push_str(&mut self, text: &str) {
        if let Repr::Borrowed(own) = self.repr {
            self.repr = Repr::Text(own.to_owned());
        }
        match &mut self.repr {
            Repr::Text(own) => own.push_str(text),
            Repr::Wtf8(bytes) => bytes.extend_from_slice(text.as_bytes()),
            Repr::Borrowed(_) => {}
        }
    }

    fn push_code_point(&mut self, cp: u32) {
        if let Repr::Borrowed(own) = self.repr {
            self.repr = Repr::Text(own.to_owned());
        }
        if let (Some(c), Repr::Text(own)) = (char::from_u32(cp), &mut self.repr) {
            own.push(c);
            return;
        }
        if let Repr::Text(own) = &mut self.repr {
            self.repr = Repr::Wtf8(std::mem::take(own).into_bytes());
        }
        let Repr::Wtf8(bytes) = &mut self.repr else {
            return;
        };
        // Generalised UTF-8: the bit layout of UTF-8, applied to surrogates too.
        if cp < 0x80 {
            bytes.push(cp as u8);
        } else if cp < 0x800 {
            bytes.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
        } else if cp < 0x10000 {
            bytes.extend_from_slice(&[
                0xE0 | (cp >> 12) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]);
        } else {
            bytes.extend_from_slice(&[
                0xF0 | (cp >> 18) as u8,
                0x80 | ((cp >> 12) & 0x3F) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]);
        }
    }
}

impl From<&str> for JsString<'_> {
    fn from(text: &str) -> Self {
        JsString {
            repr: Repr::Text(text.to_owned()),
        }
    }
}

/// The code points of a [`JsString`].
pub struct CodePoints<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let bytes = self.bytes;
        let first = *bytes.get(self.at)? as u32;
        let (len, init) = match first {
            0x00..=0x7F => (1, first),
            0xC0..=0xDF => (2, first & 0x1F),
            0xE0..=0xEF => (3, first & 0x0F),
            _ => (4, first & 0x07),
        };
        let end = (self.at + len).min(bytes.len());
        let cp = bytes[self.at + 1..end]
            .iter()
            .fold(init, |cp, &b| (cp << 6) | (b as u32 & 0x3F));
        self.at = end;
        Some(cp)
    }
}

/// A JSON number as the specification holds it: JavaScript sees only the double
/// ([`Number::to_f64`]); the integer forms are Python's `int`s.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    UInt(u64),
    /// An integer beyond u64/i64 from a fallback line, as its decimal text.
    Big(Box<str>),
    Float(f64),
}

impl Number {
    /// The value JavaScript holds (correctly rounded, ties to even).
    pub fn to_f64(&self) -> f64 {
        match self {
            Number::Int(v) => *v as f64,
            Number::UInt(v) => *v as f64,
            Number::Big(text) => text.parse().unwrap_or(f64::NAN),
            Number::Float(v) => *v,
        }
    }
}

/// A parsed JSON value; its strings may borrow from the line it was read from.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(JsString<'a>),
    Array(Vec<Value<'a>>),
    Object(Object<'a>),
}

impl Drop for Value<'_> {
    /// Drops nested containers with a loop: a value nested 10**5 deep must not overflow
    /// the stack on its way out, as it does not on its way in. The first container's own
    /// items (or members) become the loop's stack, so a shallow value allocates nothing.
    fn drop(&mut self) {
        fn is_nest(v: &Value) -> bool {
            matches!(v, Value::Array(a) if !a.is_empty())
                || matches!(v, Value::Object(o) if !o.is_empty())
        }
        let mut items = Vec::new();
        let mut members = Vec::new();
        match self {
            Value::Array(found) if found.iter().any(is_nest) => items = std::mem::take(found),
            Value::Object(object) if object.entries.iter().any(|(_, v)| is_nest(v)) => {
                members = std::mem::take(&mut object.entries);
            }
            _ => return,
        }
        loop {
            let mut value = match items.pop() {
                Some(value) => value,
                None => match members.pop() {
                    Some((_, value)) => value,
                    None => return,
                },
            };
            // Its children join the stacks; it then drops empty.
            match &mut value {
                Value::Array(found) if items.is_empty() => items = std::mem::take(found),
                Value::Array(found) => items.append(found),
                Value::Object(object) if members.is_empty() => {
                    members = std::mem::take(&mut object.entries);
                }
                Value::Object(object) => members.append(&mut object.entries),
                _ => {}
            }
        }
    }
}

/// An object's members in insertion order (a Python dict's order): a repeated key keeps
/// its first position and takes the last value.
#[derive(Clone, Debug, Default)]
pub struct Object<'a> {
    entries: Vec<(JsString<'a>, Value<'a>)>,
    /// Boxed on purpose: a value stays small (40 bytes, not 80), and so does every
    /// container's allocation; the index exists only for the rare large object.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<JsString<'a>, usize>>>,
}

impl PartialEq for Object<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

/// The members or items a navigated record (an operation, a trace's operations) has room
/// for before it first grows: one allocation instead of three. Containers built whole grow
/// from empty instead (Rust's own steps, 4, 8, 16, ...): a document of many two-member
/// objects held 8 slots for each (`parse_json` of a 3.4 MB pool file peaked 5 MB higher).
const ROOM: usize = 8;

impl<'a> Object<'a> {
    fn with_room() -> Self {
        Object {
            entries: Vec::with_capacity(ROOM),
            index: None,
        }
    }

    /// Sets `key`, replacing the value of an existing key in place.
    pub fn insert(&mut self, key: JsString<'a>, value: Value<'a>) {
        if let Some(at) = self.position(&key) {
            self.entries[at].1 = value;
            return;
        }
        self.push_new(key, value);
    }

    /// Appends a member whose key the object does not hold yet.
    fn push_new(&mut self, key: JsString<'a>, value: Value<'a>) {
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.entries.len());
        }
        self.entries.push((key, value));
    }

    fn position(&mut self, key: &JsString<'a>) -> Option<usize> {
        if self.index.is_none() && self.entries.len() >= INDEXED_OBJECT {
            let index = self
                .entries
                .iter()
                .enumerate()
                .map(|(at, (k, _))| (k.clone(), at))
                .collect();
            self.index = Some(Box::new(index));
        }
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    /// The members, taken out (the object is left empty).
    pub fn take_entries(&mut self) -> Vec<(JsString<'a>, Value<'a>)> {
        self.index = None;
        std::mem::take(&mut self.entries)
    }

    /// Members in insertion order.
    pub fn entries(&self) -> &[(JsString<'a>, Value<'a>)] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Member positions in JavaScript's own-key order (`js_own_keys`): array-index keys
    /// ascending, then the others in insertion order.
    pub fn js_order(&self) -> Vec<usize> {
        let mut indexed: Vec<(u32, usize)> = Vec::new();
        let mut others = Vec::with_capacity(self.entries.len());
        for (at, (key, _)) in self.entries.iter().enumerate() {
            match array_index(key.as_wtf8()) {
                Some(n) => indexed.push((n, at)),
                None => others.push(at),
            }
        }
        if indexed.is_empty() {
            return others;
        }
        indexed.sort_unstable();
        indexed
            .into_iter()
            .map(|(_, at)| at)
            .chain(others)
            .collect()
    }
}

/// `is_array_index_key`: `"0"` or digits without a leading zero, at most 2**32 - 2.
pub fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key[0] == b'0' && key.len() > 1) {
        return None;
    }
    let mut n: u64 = 0;
    for &b in key {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    (n <= 0xFFFF_FFFE).then_some(n as u32)
}

/// A parsed line: the value, and whether orjson (the fast path) would have read it.
#[derive(Debug, PartialEq)]
pub struct Parsed<'a> {
    pub value: Value<'a>,
    pub fast: bool,
}

/// Why `JSON.parse` refuses the text; `offset` counts bytes of the trimmed, decoded text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at offset {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// JavaScript's `String.prototype.trim` set (`JS_WHITESPACE` in jscompat.py).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// `parse_json_bytes`: one line's bytes to a value.
pub fn parse(raw: &[u8]) -> Result<Parsed<'_>, ParseError> {
    parse_selected(raw, &Select::All)
}

/// Which parts of a value to build; the rest is read (every byte checked exactly as the
/// full parse checks it, and counted in [`Parsed::fast`]) but never built.
#[derive(Debug)]
pub enum Select {
    /// The whole value.
    All,
    /// For an object, only these members (each by its own selection), in the object's
    /// order, a repeated key's last value winning; any other value is read and becomes
    /// `null` (the reader then only learns that it was not an object).
    Members(&'static [(&'static str, Select)]),
    /// For an object, every member: the named ones by their own selection, the others by
    /// the second; any other value by [`Select::Shape`].
    Object(&'static [(&'static str, Select)], &'static Select),
    /// For an array, every item by this selection; any other value by [`Select::Shape`].
    Items(&'static Select),
    /// The value's shape: containers (with their keys), numbers, booleans and `null` as
    /// they are, every string value empty (read, checked, not built).
    Shape,
}

/// [`parse`] building only what `select` names: a line's record navigated to the few
/// members a reader looks at, without building the rest (tool output, message text).
/// It accepts and refuses exactly what [`parse`] does, with the same `fast`.
pub fn parse_selected<'a>(raw: &'a [u8], select: &Select) -> Result<Parsed<'a>, ParseError> {
    match std::str::from_utf8(raw) {
        Ok(text) => read(text, true, select),
        Err(_) => {
            // The replacement text lives only here: the value takes its strings with it.
            let text = String::from_utf8_lossy(raw);
            let parsed = read(&text, false, select)?;
            Ok(Parsed {
                value: detach(parsed.value),
                fast: parsed.fast,
            })
        }
    }
}

/// [`parse_selected`] on decoded text; `valid`: the line was valid UTF-8.
fn read<'a>(text: &'a str, valid: bool, select: &Select) -> Result<Parsed<'a>, ParseError> {
    let json_trimmed = text.trim_matches(is_json_whitespace);
    let trimmed = json_trimmed.trim_matches(is_js_whitespace);
    let mut parser = Parser {
        text: trimmed.as_bytes(),
        source: trimmed,
        at: 0,
        fast: valid && trimmed.len() == json_trimmed.len(),
        big: false,
        frames: Vec::new(),
        skipping: Vec::new(),
    };
    let mut value = parser.selected(select, 0)?;
    parser.skip();
    if parser.at != parser.text.len() {
        return parser.fail("extra data after the JSON value");
    }
    if parser.fast && parser.big {
        to_doubles(&mut value);
    }
    Ok(Parsed {
        value,
        fast: parser.fast,
    })
}

/// A container being copied by [`detach`]: the items copied so far and those still to go.
enum Detaching<'x> {
    Array(Vec<Value<'static>>, std::vec::IntoIter<Value<'x>>),
    Object(
        Vec<(JsString<'static>, Value<'static>)>,
        std::vec::IntoIter<(JsString<'x>, Value<'x>)>,
    ),
}

/// A scalar owning its text at once; a container opened on `stack` (`None`).
fn detach_start<'x>(
    mut value: Value<'x>,
    stack: &mut Vec<Detaching<'x>>,
) -> Option<Value<'static>> {
    Some(match &mut value {
        Value::Array(items) if !items.is_empty() => {
            let items = std::mem::take(items);
            stack.push(Detaching::Array(
                Vec::with_capacity(items.len()),
                items.into_iter(),
            ));
            return None;
        }
        Value::Object(object) if !object.is_empty() => {
            let entries = std::mem::take(&mut object.entries);
            let copied = Vec::with_capacity(entries.len());
            stack.push(Detaching::Object(copied, entries.into_iter()));
            return None;
        }
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Object(_) => Value::Object(Object::default()),
        Value::String(text) => Value::String(std::mem::take(text).into_owned()),
        Value::Number(number) => Value::Number(number.clone()),
        Value::Bool(b) => Value::Bool(*b),
        Value::Null => Value::Null,
    })
}

impl Value<'_> {
    /// The same value owning every string (for a value kept beyond its line).
    pub fn into_owned(self) -> Value<'static> {
        detach(self)
    }
}

/// The same value owning every string, copied with a loop (nesting has no limit).
fn detach(value: Value<'_>) -> Value<'static> {
    let mut stack = Vec::new();
    let mut finished = detach_start(value, &mut stack);
    loop {
        if let Some(done) = finished.take() {
            match stack.last_mut() {
                None => return done,
                Some(Detaching::Array(copied, _)) => copied.push(done),
                Some(Detaching::Object(copied, _)) => {
                    if let Some(last) = copied.last_mut() {
                        last.1 = done;
                    }
                }
            }
        }
        let child = match stack.last_mut() {
            Some(Detaching::Array(_, rest)) => rest.next(),
            Some(Detaching::Object(copied, rest)) => rest.next().map(|(key, child)| {
                copied.push((key.into_owned(), Value::Null));
                child
            }),
            None => unreachable!("a container is open"),
        };
        finished = match child {
            Some(child) => detach_start(child, &mut stack),
            None => match stack.pop() {
                Some(Detaching::Array(copied, _)) => Some(Value::Array(copied)),
                Some(Detaching::Object(entries, _)) => Some(Value::Object(Object {
                    entries,
                    index: None,
                })),
                None => unreachable!("a container is open"),
            },
        };
    }
}

/// orjson reads an integer beyond i64/u64 as a double.
fn to_doubles(value: &mut Value<'_>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(number @ Number::Big(_)) => *number = Number::Float(number.to_f64()),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(object) => stack.extend(object.entries.iter_mut().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// The position of the first quote, backslash or control character (what ends a run of a
/// string's plain bytes), eight bytes at a time. In each word the lowest flagged byte is
/// exact (a borrow only ever flags bytes above a byte that qualified).
fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let w = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        let found = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| at + p)
}

enum Frame<'a> {
    Array(Vec<Value<'a>>),
    Object(Object<'a>, JsString<'a>),
}

struct Parser<'a> {
    text: &'a [u8],
    source: &'a str,
    at: usize,
    fast: bool,
    big: bool,
    /// The explicit stacks of [`Parser::value`] and [`Parser::skip_value`], kept between
    /// the many values of one line (one allocation each per line, not per value).
    frames: Vec<Frame<'a>>,
    skipping: Vec<bool>,
}

impl<'a> Parser<'a> {
    fn fail<T>(&self, message: &'static str) -> Result<T, ParseError> {
        Err(ParseError {
            offset: self.at,
            message,
        })
    }

    fn skip(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// One value that sits inside `open` containers, with an explicit stack instead of
    /// recursion; `elide`: string values are read but left empty ([`Select::Shape`]).
    fn value(&mut self, open: usize, elide: bool) -> Result<Value<'a>, ParseError> {
        // A scalar needs no stack (most selected members are one).
        self.skip();
        match self.peek() {
            Some(b'"') if elide => {
                self.skip_string()?;
                return Ok(Value::String(JsString::default()));
            }
            Some(b'"') => return self.string().map(Value::String),
            Some(b'{' | b'[') | None => {}
            Some(_) => return self.scalar(),
        }
        let mut stack = std::mem::take(&mut self.frames);
        let value = self.value_on(&mut stack, open, elide);
        stack.clear();
        self.frames = stack;
        value
    }

    fn value_on(
        &mut self,
        stack: &mut Vec<Frame<'a>>,
        open: usize,
        elide: bool,
    ) -> Result<Value<'a>, ParseError> {
        loop {
            self.skip();
            let mut value = match self.peek() {
                Some(b'{') => {
                    self.at += 1;
                    self.skip();
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        self.note_depth(open + stack.len() + 1);
                        Value::Object(Object::default())
                    } else {
                        let key = self.key()?;
                        stack.push(Frame::Object(Object::default(), key));
                        self.note_depth(open + stack.len());
                        continue;
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    self.skip();
                    if self.peek() == Some(b']') {
                        self.at += 1;
                        self.note_depth(open + stack.len() + 1);
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        self.note_depth(open + stack.len());
                        continue;
                    }
                }
                Some(b'"') if elide => {
                    self.skip_string()?;
                    Value::String(JsString::default())
                }
                Some(b'"') => Value::String(self.string()?),
                Some(_) => self.scalar()?,
                None => return self.fail("unexpected end of text"),
            };
            // Attach the value, closing every container that ends here.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                self.skip();
                let next = self.peek();
                match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        if next == Some(b',') {
                            self.at += 1;
                            break;
                        }
                        if next != Some(b']') {
                            return self.fail("expected ',' or ']'");
                        }
                    }
                    Frame::Object(object, key) => {
                        object.insert(std::mem::take(key), value);
                        if next == Some(b',') {
                            self.at += 1;
                            *key = self.key()?;
                            break;
                        }
                        if next != Some(b'}') {
                            return self.fail("expected ',' or '}'");
                        }
                    }
                }
                self.at += 1;
                value = match stack.pop() {
                    Some(Frame::Array(items)) => Value::Array(items),
                    Some(Frame::Object(object, _)) => Value::Object(object),
                    None => unreachable!("the stack was not empty"),
                };
            }
        }
    }

    /// One value inside `open` containers, built as `select` says.
    fn selected(&mut self, select: &Select, open: usize) -> Result<Value<'a>, ParseError> {
        let (members, rest) = match select {
            Select::All => return self.value(open, false),
            Select::Shape => return self.value(open, true),
            Select::Items(item) => return self.items(item, open),
            Select::Members(members) => (*members, None),
            Select::Object(members, rest) => (*members, Some(*rest)),
        };
        self.skip();
        if self.peek() != Some(b'{') {
            if rest.is_some() {
                return self.value(open, true);
            }
            self.skip_value(open)?;
            return Ok(Value::Null);
        }
        self.at += 1;
        self.note_depth(open + 1);
        // Only the named members of a navigated record are kept: most hold one or two.
        let mut object = match rest {
            Some(_) => Object::with_room(),
            None => Object::default(),
        };
        // The named members met so far, by their position in `members`.
        let mut seen: u64 = 0;
        self.skip();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(object));
        }
        loop {
            let (key, named) = self.named_key(members, rest.is_some())?;
            match named.map(|at| &members[at].1).or(rest) {
                Some(inner) => {
                    let value = self.selected(inner, open + 1)?;
                    // A named key seen for the first time cannot repeat any key before it
                    // (the others are not its name): appended without a search.
                    let first = named.filter(|&at| at < 64 && seen & (1 << at) == 0);
                    match first {
                        Some(at) => {
                            seen |= 1 << at;
                            object.push_new(key, value);
                        }
                        None => object.insert(key, value),
                    }
                }
                None => self.skip_value(open + 1)?,
            }
            self.skip();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(object));
                }
                _ => return self.fail("expected ',' or '}'"),
            }
        }
    }

    /// An array inside `open` containers, each item built as `item` says.
    fn items(&mut self, item: &Select, open: usize) -> Result<Value<'a>, ParseError> {
        self.skip();
        if self.peek() != Some(b'[') {
            return self.value(open, true);
        }
        self.at += 1;
        self.note_depth(open + 1);
        let mut items = Vec::with_capacity(ROOM);
        self.skip();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.selected(item, open + 1)?);
            self.skip();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return self.fail("expected ',' or ']'"),
            }
        }
    }

    /// Reads one value inside `open` containers without building it.
    fn skip_value(&mut self, open: usize) -> Result<(), ParseError> {
        let mut stack = std::mem::take(&mut self.skipping);
        let skipped = self.skip_on(&mut stack, open);
        stack.clear();
        self.skipping = stack;
        skipped
    }

    /// `stack`: the open containers of the skipped value, true for an object.
    fn skip_on(&mut self, stack: &mut Vec<bool>, open: usize) -> Result<(), ParseError> {
        loop {
            self.skip();
            match self.peek() {
                Some(b'{') | Some(b'[') => {
                    let object = self.peek() == Some(b'{');
                    self.at += 1;
                    self.skip();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.at += 1;
                        self.note_depth(open + stack.len() + 1);
                    } else {
                        stack.push(object);
                        self.note_depth(open + stack.len());
                        if object {
                            self.skip_key()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => self.skip_string()?,
                Some(b't' | b'f' | b'n') => {
                    self.scalar()?;
                }
                Some(_) => self.skip_number()?,
                None => return self.fail("unexpected end of text"),
            }
            // After a value: close every container that ends here.
            loop {
                let Some(&object) = stack.last() else {
                    return Ok(());
                };
                self.skip();
                let next = self.peek();
                if next == Some(b',') {
                    self.at += 1;
                    if object {
                        self.skip_key()?;
                    }
                    break;
                }
                if object && next != Some(b'}') {
                    return self.fail("expected ',' or '}'");
                }
                if !object && next != Some(b']') {
                    return self.fail("expected ',' or ']'");
                }
                self.at += 1;
                stack.pop();
            }
        }
    }

    fn skip_key(&mut self) -> Result<(), ParseError> {
        self.skip();
        if self.peek() != Some(b'"') {
            return self.fail("expected a string key");
        }
        self.skip_string()?;
        self.skip();
        if self.peek() != Some(b':') {
            return self.fail("expected ':'");
        }
        self.at += 1;
        Ok(())
    }

    /// A string literal read, not built: what [`Parser::string`] checks and notes.
    fn skip_string(&mut self) -> Result<(), ParseError> {
        self.at += 1;
        loop {
            let rest = &self.text[self.at..];
            let Some(end) = special_byte(rest) else {
                return self.fail("unterminated string");
            };
            self.at += end;
            match rest[end] {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => {}
                _ => return self.fail("invalid control character in a string"),
            }
            match self.text.get(self.at + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.at += 2,
                Some(b'u') => {
                    let unit = u32::from(self.hex4(self.at + 2)?);
                    self.at += 6;
                    let mut paired = false;
                    if (0xD800..0xDC00).contains(&unit) && self.text[self.at..].starts_with(b"\\u")
                    {
                        let low = u32::from(self.hex4(self.at + 2)?);
                        if (0xDC00..0xE000).contains(&low) {
                            self.at += 6;
                            paired = true;
                        }
                    }
                    if !paired && (0xD800..0xE000).contains(&unit) {
                        self.fast = false; // orjson refuses lone surrogates
                    }
                }
                Some(_) => return self.fail("invalid escape"),
                None => return self.fail("unterminated string"),
            }
        }
    }

    /// A number read, not built: the grammar, and whether a double overflows.
    fn skip_number(&mut self) -> Result<(), ParseError> {
        let (start, integral, exponent) = self.number_token()?;
        let length = self.at - start;
        if integral && length <= EXACT_INTEGER_CHARS {
            return Ok(());
        }
        // Without an exponent only more than 308 integer digits can overflow a double.
        if !exponent && length <= 308 {
            return Ok(());
        }
        let token = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
        if token.parse::<f64>().is_ok_and(f64::is_infinite) {
            self.fast = false;
        }
        Ok(())
    }

    fn note_depth(&mut self, depth: usize) {
        if depth > FAST_DEPTH {
            self.fast = false;
        }
    }

    /// [`Parser::key`] and the position of the member it names in `members`. A key spelled
    /// exactly as a member's name (names hold no quote, backslash or control character) is
    /// recognised in place; any other key without an escape names none of them, and is
    /// borrowed from the line when `keep` asks for it (an empty string otherwise). Only a
    /// key with an escape is decoded before it is compared.
    fn named_key(
        &mut self,
        members: &[(&'static str, Select)],
        keep: bool,
    ) -> Result<(JsString<'a>, Option<usize>), ParseError> {
        self.skip();
        if self.peek() == Some(b'"') {
            let start = self.at + 1;
            let rest = &self.text[start..];
            let found = members.iter().position(|(name, _)| {
                let name = name.as_bytes();
                rest.get(name.len()) == Some(&b'"') && rest.starts_with(name)
            });
            if let Some(at) = found {
                let name = members[at].0;
                self.at = start + name.len() + 1;
                self.colon()?;
                let key = JsString {
                    repr: Repr::Borrowed(name),
                };
                return Ok((key, Some(at)));
            }
            if let Some(end) = special_byte(rest).filter(|&end| rest[end] == b'"') {
                self.at = start + end + 1;
                self.colon()?;
                let key = match keep {
                    // Both ends are ASCII bytes, so the slice is on character boundaries.
                    true => JsString {
                        repr: Repr::Borrowed(&self.source[start..start + end]),
                    },
                    false => JsString::default(),
                };
                return Ok((key, None));
            }
        }
        let key = self.key()?;
        let at = members
            .iter()
            .position(|(name, _)| name.as_bytes() == key.as_wtf8());
        Ok((key, at))
    }

    /// The `:` after a member's key.
    fn colon(&mut self) -> Result<(), ParseError> {
        self.skip();
        if self.peek() != Some(b':') {
            return self.fail("expected ':'");
        }
        self.at += 1;
        Ok(())
    }

    /// A member's key and its `:`.
    fn key(&mut self) -> Result<JsString<'a>, ParseError> {
        self.skip();
        if self.peek() != Some(b'"') {
            return self.fail("expected a string key");
        }
        let key = self.string()?;
        self.skip();
        if self.peek() != Some(b':') {
            return self.fail("expected ':'");
        }
        self.at += 1;
        Ok(key)
    }

    /// A literal or a number, told apart by the first byte.
    fn scalar(&mut self) -> Result<Value<'a>, ParseError> {
        let (literal, value) = match self.peek() {
            Some(b't') => (&b"true"[..], Value::Bool(true)),
            Some(b'f') => (&b"false"[..], Value::Bool(false)),
            Some(b'n') => (&b"null"[..], Value::Null),
            _ => return self.number().map(Value::Number),
        };
        if !self.text[self.at..].starts_with(literal) {
            return self.fail("expected a JSON value");
        }
        self.at += literal.len();
        Ok(value)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`: moves past the token; returns
    /// where it starts, whether it is integral and whether it has an exponent.
    fn number_token(&mut self) -> Result<(usize, bool, bool), ParseError> {
        let start = self.at;
        let text = self.text;
        let digits = |mut at: usize| {
            while text.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            at
        };
        let mut at = start + usize::from(text.get(start) == Some(&b'-'));
        match text.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => at = digits(at),
            _ => return self.fail("expected a JSON value"),
        }
        let mut integral = true;
        let mut exponent = false;
        if text.get(at) == Some(&b'.') && text.get(at + 1).is_some_and(u8::is_ascii_digit) {
            at = digits(at + 1);
            integral = false;
        }
        if let Some(b'e' | b'E') = text.get(at) {
            let sign = usize::from(matches!(text.get(at + 1), Some(b'+' | b'-')));
            if text.get(at + 1 + sign).is_some_and(u8::is_ascii_digit) {
                at = digits(at + 1 + sign);
                integral = false;
                exponent = true;
            }
        }
        self.at = at;
        Ok((start, integral, exponent))
    }

    fn number(&mut self) -> Result<Number, ParseError> {
        let (start, integral, _) = self.number_token()?;
        let (text, at) = (self.text, self.at);
        // The token is ASCII by construction.
        let token = std::str::from_utf8(&text[start..at]).unwrap_or("");
        if token == "-0" {
            // JSON.parse keeps negative zero; the plain reader does too (issue 27).
            return Ok(Number::Float(-0.0));
        }
        if integral && token.len() <= EXACT_INTEGER_CHARS {
            if let Ok(v) = token.parse::<i64>() {
                return Ok(Number::Int(v));
            }
            if let Ok(v) = token.parse::<u64>() {
                return Ok(Number::UInt(v));
            }
            self.big = true;
            return Ok(Number::Big(token.into()));
        }
        let value: f64 = token.parse().unwrap_or(f64::NAN);
        if value.is_infinite() {
            self.fast = false;
        }
        Ok(Number::Float(value))
    }

    /// A string literal from its opening quote.
    fn string(&mut self) -> Result<JsString<'a>, ParseError> {
        self.at += 1;
        let start = self.at;
        let Some(end) = special_byte(&self.text[start..]) else {
            return self.fail("unterminated string");
        };
        if self.text[start + end] == b'"' {
            // No escape: the text as it stands in the line (both ends are ASCII bytes).
            self.at += end + 1;
            return Ok(JsString {
                repr: Repr::Borrowed(&self.source[start..start + end]),
            });
        }
        // The next quote bounds the string unless it is escaped: one allocation, mostly.
        let guess = memchr::memchr(b'"', &self.text[self.at..]).unwrap_or(0);
        let mut out = JsString {
            repr: Repr::Text(String::with_capacity(guess)),
        };
        loop {
            let rest = &self.text[self.at..];
            let Some(end) = special_byte(rest) else {
                return self.fail("unterminated string");
            };
            // Both ends sit on ASCII bytes, so the slice is on character boundaries.
            out.push_str(&self.source[self.at..self.at + end]);
            self.at += end;
            match rest[end] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => self.escape(&mut out)?,
                _ => return self.fail("invalid control character in a string"),
            }
        }
    }

    fn escape(&mut self, out: &mut JsString<'a>) -> Result<(), ParseError> {
        let Some(&kind) = self.text.get(self.at + 1) else {
            return self.fail("unterminated string");
        };
        let simple = match kind {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let unit = self.hex4(self.at + 2)?;
                self.at += 6;
                let mut cp = u32::from(unit);
                if (0xD800..0xDC00).contains(&cp) && self.text[self.at..].starts_with(b"\\u") {
                    let low = u32::from(self.hex4(self.at + 2)?);
                    if (0xDC00..0xE000).contains(&low) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        self.at += 6;
                    }
                }
                if (0xD800..0xE000).contains(&cp) {
                    self.fast = false; // orjson refuses lone surrogates
                }
                out.push_code_point(cp);
                return Ok(());
            }
            _ => return self.fail("invalid escape"),
        };
        out.push_code_point(u32::from(simple));
        self.at += 2;
        Ok(())
    }

    fn hex4(&self, at: usize) -> Result<u16, ParseError> {
        let digits = self.text.get(at..at + 4).unwrap_or(b"");
        let text = std::str::from_utf8(digits).unwrap_or("");
        if text.len() != 4 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ParseError {
                offset: at,
                message: "invalid \\uXXXX escape",
            });
        }
        u16::from_str_radix(text, 16).map_err(|_| ParseError {
            offset: at,
            message: "invalid \\uXXXX escape",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &[u8]) -> Parsed<'_> {
        parse(raw).unwrap_or_else(|e| panic!("{e}: {raw:?}"))
    }

    #[test]
    fn duplicates_keep_their_first_position() {
        let parsed = ok(br#"{"a":1,"b":2,"a":3}"#);
        let Value::Object(object) = &parsed.value else {
            panic!("not an object")
        };
        let keys: Vec<_> = object.entries().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, [Some("a"), Some("b")]);
        assert_eq!(object.entries()[0].1, Value::Number(Number::Int(3)));
    }

    #[test]
    fn duplicates_in_a_large_object() {
        let mut text = String::from("{");
        for i in 0..40 {
            text += &format!("\"k{}\":{i},", i % 20);
        }
        text += "\"k0\":true}";
        let parsed = ok(text.as_bytes());
        let Value::Object(object) = &parsed.value else {
            panic!("not an object")
        };
        assert_eq!(object.len(), 20);
        assert_eq!(object.entries()[0].1, Value::Bool(true));
        assert_eq!(object.entries()[19].1, Value::Number(Number::Int(39)));
    }

    #[test]
    fn array_index_keys_come_first_in_js_order() {
        let parsed = ok(br#"{"b":0,"10":0,"01":0,"2":0,"-1":0,"4294967295":0,"4294967294":0}"#);
        let Value::Object(object) = &parsed.value else {
            panic!("not an object")
        };
        let order: Vec<_> = object
            .js_order()
            .into_iter()
            .map(|at| object.entries()[at].0.as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            order,
            ["2", "10", "4294967294", "b", "01", "-1", "4294967295"]
        );
    }

    #[test]
    fn numbers_as_the_specification() {
        let number = |raw: &[u8]| {
            let parsed = ok(raw);
            match &parsed.value {
                Value::Number(n) => (n.clone(), parsed.fast),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(number(b"-0").0.to_f64().to_bits(), (-0.0f64).to_bits());
        assert_eq!(number(b"-0.0").0.to_f64().to_bits(), (-0.0f64).to_bits());
        assert_eq!(number(b"1e400"), (Number::Float(f64::INFINITY), false));
        assert_eq!(
            number(b"18446744073709551615"),
            (Number::UInt(u64::MAX), true)
        );
        assert_eq!(
            number(b"18446744073709551616"),
            (Number::Float(18446744073709551616.0), true)
        );
        assert_eq!(
            number("\u{feff}18446744073709551616".as_bytes()),
            (Number::Big("18446744073709551616".into()), false)
        );
        assert_eq!(number(b"5e-324"), (Number::Float(5e-324), true));
        assert!(parse(b"NaN").is_err() && parse(b"-Infinity").is_err());
        for bad in [
            &b"01"[..],
            b"1.",
            b".5",
            b"1e",
            b"-",
            b"+1",
            b"[1,]",
            b"{\"a\":1,}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn strings_keep_lone_surrogates() {
        let string = |raw: &[u8]| match &ok(raw).value {
            Value::String(s) => s.clone().into_owned(),
            other => panic!("{other:?}"),
        };
        let lone = string(br#""\ud800x""#);
        assert_eq!(lone.code_units().collect::<Vec<_>>(), [0xD800, 0x78]);
        assert!(lone.as_str().is_none());
        let pair = string(br#""\ud83d\ude00""#);
        assert_eq!(pair.as_str(), Some("\u{1F600}"));
        assert_eq!(string(b"\"\xff\"").as_str(), Some("\u{FFFD}"));
        assert!(!ok(b"\"\xff\"").fast);
        assert!(parse(b"\"a\x01\"").is_err());
    }

    #[test]
    fn control_characters_anywhere_in_a_long_string() {
        for at in [0, 31, 32, 40, 63, 64, 99] {
            let mut text = vec![b'a'; 100];
            text[at] = 0x1F;
            let raw = [&b"\""[..], &text, b"\""].concat();
            let error = parse(&raw).expect_err("a raw control character");
            assert_eq!(error.offset, at + 1);
            text[at] = 0x20;
            assert!(parse(&[&b"\""[..], &text, b"\""].concat()).is_ok());
        }
    }

    #[test]
    fn javascript_trim_and_fast() {
        assert!(ok(b" \t1\r").fast);
        assert!(!ok("\u{feff}1".as_bytes()).fast);
        assert!(!ok("1\u{2028}".as_bytes()).fast);
        assert!(!ok(b"\x0c1").fast);
        assert!(parse("1\u{85}".as_bytes()).is_err());
    }

    #[test]
    fn special_bytes_are_found_first() {
        let naive = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        let pieces: [&[u8]; 9] = [
            b"a",
            b"\"",
            b"\\",
            b"\x1f",
            b"\x00",
            b"\x20",
            b"\x7f",
            b"\xc3\xa9",
            b"!",
        ];
        let mut state = 12345u64;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            for _ in 0..(state % 23) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.extend_from_slice(pieces[(state >> 33) as usize % pieces.len()]);
            }
            assert_eq!(special_byte(&text), naive(&text), "{text:?}");
        }
    }

    #[test]
    fn values_stay_small() {
        // Containers allocate room for eight members up front: keep each one small.
        assert!(std::mem::size_of::<Value<'_>>() <= 40);
        assert!(std::mem::size_of::<JsString<'_>>() <= 32);
    }

    #[test]
    fn no_depth_limit() {
        for depth in [1024, 1025, 200_000] {
            let text = "[".repeat(depth) + &"]".repeat(depth);
            assert_eq!(ok(text.as_bytes()).fast, depth <= 1024);
        }
        // A line of invalid UTF-8 takes its strings with it, copied without recursion.
        let raw = [
            b"[".repeat(200_000),
            b"\"\xff\"".to_vec(),
            b"]".repeat(200_000),
        ]
        .concat();
        assert!(!ok(&raw).fast);
    }

    /// Hostile members: whether a member is built, read by shape or skipped, and whether
    /// its strings are borrowed or owned, the line is accepted or refused alike (the same
    /// error at the same offset), `fast` is the same and a kept member is the same value.
    #[test]
    fn skipped_members_are_read_as_built_ones() {
        const KEEP: Select = Select::Members(&[("keep", Select::All)]);
        const SHAPED: Select = Select::Object(&[("keep", Select::All)], &Select::Shape);
        const ITEMS: Select = Select::Members(&[("keep", Select::Items(&Select::Shape))]);
        let pieces: [&[u8]; 24] = [
            b"\"plain\"",
            b"\"esc\\n\\u00e9\"",
            b"\"\\ud800\"",
            b"\"\\udc00\\ud800x\"",
            b"\"\\ud83d\\ude00\"",
            b"\"\\u12G4\"",
            b"\"\\x\"",
            b"\"a\x01\"",
            b"\"open",
            b"\"\xc3\xa9\xff\"",
            b"-0",
            b"1e400",
            b"123456789012345678901234567890",
            b"01",
            b"1.",
            b"tru",
            b"null",
            b"[1,{\"k\":[true,false]},\"s\"]",
            b"{\"a\":1,\"a\":\"\\ud800\"}",
            b"[[[[[[[[]]]]]]]]",
            b"{\"x\":}",
            b"[1,]",
            b"{",
            b" \t",
        ];
        let mut state = 2024u64;
        let mut pick = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            pieces[(state >> 33) as usize % pieces.len()]
        };
        for round in 0..4000 {
            let (skip, keep) = (pick(), pick());
            let deep = round % 7 == 0;
            let skip = if deep {
                [b"[".repeat(1030), skip.to_vec(), b"]".repeat(1030)].concat()
            } else {
                skip.to_vec()
            };
            // Every third line repeats both keys: the last value wins, in the first place.
            let again = if round % 3 == 0 {
                [&b",\"keep\":"[..], pick(), b",\"skip\":", &skip].concat()
            } else {
                Vec::new()
            };
            let line = [
                &b"{\"skip\":"[..],
                &skip,
                b",\"keep\":",
                keep,
                b",\"other\":",
                &skip,
                &again,
                b"}",
            ]
            .concat();
            let full = parse(&line);
            read_alike(&line, &full, &KEEP, true, false);
            read_alike(&line, &full, &SHAPED, true, true);
            read_alike(&line, &full, &ITEMS, false, false);
        }
    }

    /// `select`'s read of `line` against the full parse `full`: the same error at the same
    /// offset, or the same `fast` and objects both; with `kept`, the same `keep` member;
    /// with `names`, every member kept in the same places.
    fn read_alike(
        line: &[u8],
        full: &Result<Parsed<'_>, ParseError>,
        select: &Select,
        kept: bool,
        names: bool,
    ) {
        let shown = String::from_utf8_lossy(&line[..line.len().min(120)]);
        let part = parse_selected(line, select);
        match (full, &part) {
            (Err(a), Err(b)) => assert_eq!(a, b, "{shown} {select:?}"),
            (Ok(a), Ok(b)) => {
                assert_eq!(a.fast, b.fast, "{shown} {select:?}");
                let (Value::Object(whole), Value::Object(some)) = (&a.value, &b.value) else {
                    panic!("not objects: {shown}");
                };
                let built = |o: &Object<'_>| get_member(o, "keep").map(|v| v.clone().into_owned());
                if kept {
                    assert_eq!(built(whole), built(some), "{shown} {select:?}");
                }
                if names {
                    let keys = |o: &Object<'_>| -> Vec<Vec<u8>> {
                        o.entries()
                            .iter()
                            .map(|(k, _)| k.as_wtf8().to_vec())
                            .collect()
                    };
                    assert_eq!(keys(whole), keys(some), "{shown}");
                }
                let owned = a.value.clone().into_owned();
                assert_eq!(owned, a.value);
            }
            _ => panic!("{shown} {select:?}: {full:?} / {part:?}"),
        }
    }

    /// Keys a selective read recognises in place or must decode: a member's name spelled
    /// with an escape is that member, a name's prefix or extension is not, and a broken key
    /// is refused as the full parse refuses it (the same error at the same offset).
    #[test]
    fn member_names_are_matched_as_decoded_keys() {
        const SHAPED: Select = Select::Object(&[("keep", Select::All)], &Select::Shape);
        const KEEP: Select = Select::Members(&[("keep", Select::All)]);
        let keys: [&[u8]; 9] = [
            b"\"keep\"",
            b"\"ke\\u0065p\"",
            b"\"kee\"",
            b"\"keeps\"",
            b"\"\"",
            b"\"k\x01\"",
            b"\"keep",
            b"keep",
            b"\"keep\" ",
        ];
        for first in keys {
            for second in keys {
                let line = [&b"{"[..], first, b":1,", second, b": \"x\"}"].concat();
                let full = parse(&line);
                read_alike(&line, &full, &SHAPED, true, true);
                read_alike(&line, &full, &KEEP, true, false);
            }
        }
    }

    fn get_member<'v>(object: &'v Object<'v>, key: &str) -> Option<&'v Value<'v>> {
        let entries = object.entries();
        entries
            .iter()
            .find(|(k, _)| k.as_wtf8() == key.as_bytes())
            .map(|(_, v)| v)
    }
}
