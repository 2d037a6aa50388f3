//! The body of an answer through the middleware: the service's as it
//! comes, its pieces as the exchange says to send them, or bytes of the
//! middleware's own.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::ended::Ended;
use crate::wire::{Piece, Step};

/// What a body of the layer's answers fails with: the service's body's error, passed on.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of an answer through [`Provenance`](super::Provenance): the service's, as it came
/// or as the exchange says to send it (its pieces in turn, the service's
/// body dropped once the answer is over), or one of the middleware's own.
pub struct ProvenanceBody<B> {
    kind: Kind<B>,
    /// The exchange, when it is not the kind's: its outcome given when the body is dropped.
    _ended: Option<Ended>,
}

impl<B> fmt::Debug for ProvenanceBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Pass(_) => "pass",
            Kind::Whole(_) => "whole",
            Kind::Exchange(_) => "exchange",
            Kind::Failed(_) => "failed",
        };
        f.debug_struct("ProvenanceBody")
            .field("kind", &kind)
            .finish()
    }
}

/// What a [`ProvenanceBody`] sends.
pub(super) enum Kind<B> {
    /// The service's body as it comes.
    Pass(Pin<Box<B>>),
    /// These bytes (then nothing).
    Whole(Bytes),
    /// The service's body through the exchange.
    Exchange(Box<Streaming<B>>),
    /// The service's body failed before anything of it was sent.
    Failed(Option<BoxError>),
}

/// An answer that streams through the exchange.
pub(super) struct Streaming<B> {
    pub(super) exchange: Ended,
    /// The service's body, until the answer is over.
    pub(super) inner: Option<Pin<Box<B>>>,
    /// What to send before reading on.
    pub(super) queue: VecDeque<Bytes>,
    /// Nothing is to be read any more.
    pub(super) over: bool,
}

impl<B> ProvenanceBody<B> {
    pub(super) fn new(kind: Kind<B>) -> Self {
        ProvenanceBody { kind, _ended: None }
    }

    /// A body that ends `exchange`, which its kind does not hold.
    pub(super) fn ending(kind: Kind<B>, exchange: Ended) -> Self {
        ProvenanceBody {
            kind,
            _ended: Some(exchange),
        }
    }
}

impl<B> Body for ProvenanceBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.get_mut().kind {
            Kind::Pass(inner) => inner
                .as_mut()
                .poll_frame(cx)
                .map(|frame| frame.map(|frame| frame.map_err(Into::into))),
            Kind::Whole(bytes) if bytes.is_empty() => Poll::Ready(None),
            Kind::Whole(bytes) => Poll::Ready(Some(Ok(Frame::data(std::mem::take(bytes))))),
            Kind::Failed(failure) => Poll::Ready(failure.take().map(Err)),
            Kind::Exchange(streaming) => streaming.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Pass(inner) => inner.is_end_stream(),
            Kind::Whole(bytes) => bytes.is_empty(),
            Kind::Failed(failure) => failure.is_none(),
            Kind::Exchange(streaming) => streaming.over && streaming.queue.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Pass(inner) => inner.size_hint(),
            Kind::Whole(bytes) => SizeHint::with_exact(bytes.len() as u64),
            _ => SizeHint::default(),
        }
    }
}

impl<B> Streaming<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    /// The next piece to send: one queued, or the next the exchange makes
    /// of the service's body.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        loop {
            if let Some(piece) = self.queue.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
            let Some(inner) = self.inner.as_mut().filter(|_| !self.over) else {
                self.inner = None;
                return Poll::Ready(None);
            };
            let (step, given) = match inner.as_mut().poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(given) => (self.exchange.piece(&given), given),
                    // Trailers are dropped: the body they were about has changed.
                    Err(_trailers) => continue,
                },
                Poll::Ready(None) => (self.exchange.end(), Bytes::new()),
                Poll::Ready(Some(Err(failure))) => {
                    (self.inner, self.over) = (None, true);
                    return Poll::Ready(Some(Err(failure.into())));
                }
            };
            // A head after the first cannot be sent: the one sent stands.
            self.over = step.over;
            queued(&mut self.queue, step, &given);
            if self.over {
                self.inner = None;
            }
        }
    }
}

/// The pieces of `step` as bytes, onto `queue`; `given` the piece just given.
pub(super) fn queued(queue: &mut VecDeque<Bytes>, step: Step, given: &Bytes) {
    for piece in step.pieces {
        let bytes = match piece {
            Piece::Given(range) => cut(given, range),
            Piece::Made(bytes) => Bytes::from(bytes),
        };
        if !bytes.is_empty() {
            queue.push_back(bytes);
        }
    }
}

/// These bytes of `given`, without a copy (none when out of its range).
fn cut(given: &Bytes, range: Range<usize>) -> Bytes {
    if range.start <= range.end && range.end <= given.len() {
        given.slice(range)
    } else {
        Bytes::new()
    }
}

/// The pieces as one.
pub(super) fn whole(mut queue: VecDeque<Bytes>) -> Bytes {
    match queue.len() {
        0 | 1 => queue.pop_front().unwrap_or_default(),
        _ => Bytes::from(queue.into_iter().collect::<Vec<_>>().concat()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_piece_is_cut_only_within_its_bounds() {
        let given = Bytes::from_static(b"abcdef");
        assert_eq!(cut(&given, 1..3), Bytes::from_static(b"bc"));
        assert_eq!(cut(&given, 4..9), Bytes::new());
        assert_eq!(whole(VecDeque::from([given.clone(), given])).len(), 12);
    }
}
