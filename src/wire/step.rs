//! What an [`Exchange`](super::Exchange) says to do: how a request starts,
//! and each step of the answer the client gets (its head once known, its
//! pieces, whether it is over).

use std::ops::Range;

/// What a middleware does with a request, once begun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Not the middleware's (a path it does not watch): to the app as it came.
    Pass,
    /// To the app as it came, its answer through the exchange (a GET stream, a DELETE).
    Watch,
    /// Read the body (up to the bound), then [`Exchange::admit`](super::Exchange::admit) it.
    Read,
}

/// A change to the head of the answer: a header removed (`None`) or set.
pub type Edit = (&'static str, Option<String>);

/// The head of the answer the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// Its status.
    pub status: u16,
    /// The changes to the app's headers, in order.
    pub edits: Vec<Edit>,
    /// The rest of the app's answer goes on as it comes: no more calls.
    pub passes: bool,
}

impl Head {
    /// `headers` (the app's, names in any case) with the edits made: each
    /// removed header's every value gone, each set one last.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::__bindings::wire::Head;
    ///
    /// let head = Head { status: 200, edits: vec![("content-length", None), ("content-length", Some("2".into()))], passes: false };
    /// let edited = head.edited(&[("Content-Length", "9"), ("mcp-session-id", "s-1")]);
    /// assert_eq!(edited, [("mcp-session-id".to_owned(), "s-1".to_owned()), ("content-length".to_owned(), "2".to_owned())]);
    /// ```
    pub fn edited<N: AsRef<str>, V: AsRef<str>>(
        &self,
        headers: &[(N, V)],
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| (name.as_ref().to_owned(), value.as_ref().to_owned()))
            .collect();
        for (name, value) in &self.edits {
            out.retain(|(key, _)| !key.eq_ignore_ascii_case(name));
            if let Some(value) = value {
                out.push(((*name).to_owned(), value.clone()));
            }
        }
        out
    }
}

/// A piece of the answer the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// These bytes of the piece just given.
    Given(Range<usize>),
    /// Bytes of the exchange's own.
    Made(Vec<u8>),
}

/// What to send of the answer now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The head, once it is known; sent before the pieces.
    pub head: Option<Head>,
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
    /// The answer is over: end it; what the app still sends is dropped.
    pub over: bool,
}

impl Step {
    pub(super) fn given(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Given(last)) if last.end == range.start => last.end = range.end,
            _ => self.pieces.push(Piece::Given(range)),
        }
    }

    pub(super) fn made(&mut self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.pieces.push(Piece::Made(bytes));
        }
    }
}
