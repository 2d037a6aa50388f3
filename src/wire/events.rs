//! An event stream (`text/event-stream`) read as the clients read it, the
//! WHATWG grammar: lines end with CRLF, LF or CR alone; an empty line ends
//! an event; a byte-order mark opening the stream is no part of its first
//! line; `data` lines (the value after the colon, one space dropped) make
//! the event's data, joined by LF; a line opening with a colon is a comment.
//!
//! [`Splitter`] finds where each event ends as the stream comes, piece by
//! piece, looking at each byte once; [`Event`] reads one event's lines and
//! writes it again with other data.

const CR: u8 = b'\r';
const LF: u8 = b'\n';
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// What a byte of the stream was, for the caller to cut the stream by.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Cut {
    /// The event under way ends with this byte (the break of its empty line).
    EventEnd,
    /// The LF of a CRLF whose CR ended an event: a byte between two events.
    Gap,
}

/// Where the events of a stream end, fed a byte at a time.
#[derive(Debug)]
pub(super) struct Splitter {
    /// The last byte ended a line (or the stream has just begun).
    line_start: bool,
    /// The last byte was a CR: an LF now is the rest of its break.
    cr: bool,
    /// That CR ended an event, so that LF stands between two events.
    ended_on_cr: bool,
    /// How many bytes of a byte-order mark opened the stream so far; `None`
    /// once past where one can be.
    bom: Option<usize>,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter {
            line_start: true,
            cr: false,
            ended_on_cr: false,
            bom: Some(0),
        }
    }
}

impl Splitter {
    /// What `byte`, the next of the stream, was: `None` for a byte inside an event.
    pub(super) fn feed(&mut self, byte: u8) -> Option<Cut> {
        if let Some(matched) = self.bom {
            match BOM.get(matched) {
                Some(&expected) if byte == expected => {
                    self.bom = (matched + 1 < BOM.len()).then_some(matched + 1);
                    return None;
                }
                _ => self.bom = None,
            }
        }
        if std::mem::take(&mut self.cr) && byte == LF {
            return std::mem::take(&mut self.ended_on_cr).then_some(Cut::Gap);
        }
        self.ended_on_cr = false;
        if byte != CR && byte != LF {
            self.line_start = false;
            return None;
        }
        self.cr = byte == CR;
        if self.line_start {
            self.ended_on_cr = self.cr;
            return Some(Cut::EventEnd);
        }
        self.line_start = true;
        None
    }
}

/// The ranges of the non-empty lines of `bytes`, each without its break.
fn lines(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == CR || byte == LF {
            if at > start {
                lines.push((start, at));
            }
            at += if byte == CR && bytes.get(at + 1) == Some(&LF) {
                2
            } else {
                1
            };
            start = at;
        } else {
            at += 1;
        }
    }
    if at > start {
        lines.push((start, at));
    }
    lines
}

/// One event, read: its lines, and which of them are `data` lines.
pub(super) struct Event<'a> {
    bytes: &'a [u8],
    /// The byte-order mark that opens it, when it opens the stream with one.
    bom: usize,
    lines: Vec<(usize, usize)>,
    /// For each line, its value when it is a `data` line.
    data: Vec<Option<(usize, usize)>>,
}

impl<'a> Event<'a> {
    /// Reads an event: `bytes` up to the break of the empty line that ends
    /// it, that break left out; `first` when it opens the stream (a
    /// byte-order mark then is no part of its first line).
    pub(super) fn read(bytes: &'a [u8], first: bool) -> Self {
        let skip = if first && bytes.starts_with(&BOM) {
            BOM.len()
        } else {
            0
        };
        let lines: Vec<(usize, usize)> = lines(bytes.get(skip..).unwrap_or_default())
            .into_iter()
            .map(|(start, end)| (start + skip, end + skip))
            .collect();
        let data = lines
            .iter()
            .map(|&(start, end)| {
                let line = bytes.get(start..end).unwrap_or_default();
                let value = match line.strip_prefix(b"data") {
                    Some([]) => return Some((end, end)),
                    Some([b':', b' ', ..]) => start + 6,
                    Some([b':', ..]) => start + 5,
                    _ => return None,
                };
                Some((value, end))
            })
            .collect();
        Event {
            bytes,
            bom: skip,
            lines,
            data,
        }
    }

    /// Its data, as a client dispatches it: the values of its `data` lines
    /// joined by LF; `None` when it has none, or only empty ones (a comment,
    /// a `retry`, the event that primes a resumable stream): no client takes
    /// a message from it.
    pub(super) fn data(&self) -> Option<Vec<u8>> {
        let values: Vec<&[u8]> = self
            .data
            .iter()
            .flatten()
            .map(|&(start, end)| self.bytes.get(start..end).unwrap_or_default())
            .collect();
        if values.iter().all(|value| value.is_empty()) {
            return None;
        }
        Some(values.join(&LF))
    }

    /// Its id, as a client keeps it for `Last-Event-ID`: the value of its
    /// last `id` line, unless that holds a NUL (which clients pass over).
    pub(super) fn id(&self) -> Option<&'a [u8]> {
        let mut id = None;
        for &(start, end) in &self.lines {
            let line = self.bytes.get(start..end).unwrap_or_default();
            let value = match line.strip_prefix(b"id") {
                Some([]) => &[][..],
                Some([b':', b' ', rest @ ..]) | Some([b':', rest @ ..]) => rest,
                _ => continue,
            };
            if !value.contains(&0) {
                id = Some(value);
            }
        }
        id
    }

    /// The event written again with `data` (LF-separated) as its data: the
    /// lines before its first `data` line as they came, then a `data` line
    /// for each line of `data`, then its other lines, joined by LF; the
    /// break that ended its last line as it came.
    pub(super) fn with_data(&self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + data.len());
        let tail = self.lines.last().map_or(self.bytes.len(), |&(_, end)| end);
        out.extend_from_slice(self.bytes.get(..self.bom).unwrap_or_default());
        let first = self
            .data
            .iter()
            .position(Option::is_some)
            .unwrap_or(self.lines.len());
        let line = |out: &mut Vec<u8>, &(start, end): &(usize, usize)| {
            out.extend_from_slice(self.bytes.get(start..end).unwrap_or_default());
            out.push(LF);
        };
        for range in self.lines.iter().take(first) {
            line(&mut out, range);
        }
        for part in data.split(|&byte| byte == LF) {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(part);
            out.push(LF);
        }
        for (range, data) in self.lines.iter().zip(&self.data).skip(first) {
            if data.is_none() {
                line(&mut out, range);
            }
        }
        let ending = self.bytes.get(tail..).unwrap_or_default();
        if !ending.is_empty() {
            out.pop();
            out.extend_from_slice(ending);
        }
        out
    }
}

/// A JSON-RPC message (compact JSON text, one line) as an event of its own.
pub(super) fn event(message: &str) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The stream cut into events and gaps, fed in pieces of `size` bytes.
    fn cut(stream: &[u8], size: usize) -> Vec<(Cut, usize)> {
        let mut splitter = Splitter::default();
        let mut cuts = Vec::new();
        for (at, byte) in stream.chunks(size).flatten().enumerate() {
            if let Some(cut) = splitter.feed(*byte) {
                cuts.push((cut, at));
            }
        }
        cuts
    }

    #[test]
    fn every_line_ending_ends_an_event() {
        let stream = b"data: 1\n\ndata: 2\r\n\r\ndata: 3\r\rdata: 4\n\r\n";
        for size in [1, 2, 3, stream.len()] {
            assert_eq!(
                cut(stream, size),
                [
                    (Cut::EventEnd, 8),
                    (Cut::EventEnd, 18),
                    (Cut::Gap, 19),
                    (Cut::EventEnd, 28),
                    (Cut::EventEnd, 37),
                    (Cut::Gap, 38)
                ],
                "{size}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_opens_no_line() {
        assert_eq!(
            cut(b"\xEF\xBB\xBF\ndata: 1\n\n", 1),
            [(Cut::EventEnd, 3), (Cut::EventEnd, 12)]
        );
        // Anywhere else it is a byte of a line.
        assert_eq!(
            cut(b"data: 1\n\n\xEF\xBB\xBF\n\n", 1),
            [(Cut::EventEnd, 8), (Cut::EventEnd, 13)]
        );
    }

    #[test]
    fn data_is_read_as_clients_read_it() {
        let event = Event::read(
            b"\xEF\xBB\xBFevent: message\r\ndata:{\"a\":\rid: 7\ndata\ndata:  1}\r\n",
            true,
        );
        assert_eq!(event.data().as_deref(), Some(&b"{\"a\":\n\n 1}"[..]));
        assert_eq!(
            event.with_data(b"{}\n\n 2}"),
            b"\xEF\xBB\xBFevent: message\ndata: {}\ndata: \ndata:  2}\nid: 7\r\n"
        );
        assert_eq!(event.id(), Some(&b"7"[..]));
        assert_eq!(
            Event::read(b"id: a\nid:b\x00\nid:c\ndata: x\n", false).id(),
            Some(&b"c"[..])
        );
        assert_eq!(
            Event::read(b"id: a\nid: b\x00\n", false).id(),
            Some(&b"a"[..])
        );
        for none in [
            &b": comment\n"[..],
            b"id: 1\ndata:\n",
            b"retry: 10\n",
            b"datum: 1\n",
        ] {
            assert_eq!(Event::read(none, false).data(), None);
        }
    }
}
