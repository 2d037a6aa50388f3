//! The service: a request through the exchange, its body read and
//! filtered, audited, handed on; the service's answer back through the
//! exchange; and what the exchange reads of `http`'s heads.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body::Body;
use tower_layer::Layer;
use tower_service::Service;

use super::body::{BoxError, Kind, ProvenanceBody, Streaming, queued, whole};
use super::ended::Ended;
use super::layer::ProvenanceLayer;
use crate::wire::{Answer, Own, Start, Step, Verdict};

impl<S> Layer<S> for ProvenanceLayer {
    type Service = Provenance<S>;

    fn layer(&self, inner: S) -> Provenance<S> {
        Provenance {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`ProvenanceLayer`] puts in front of `S`.
#[derive(Clone, Debug)]
pub struct Provenance<S> {
    inner: S,
    layer: ProvenanceLayer,
}

impl<S, B, ResB> Service<Request<B>> for Provenance<S>
where
    S: Service<Request<B>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send,
    B: Body<Data = Bytes> + From<Bytes> + Send + 'static,
    ResB: Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<ProvenanceBody<ResB>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service made ready goes with the request; a clone stays.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(exchange(self.layer.clone(), inner, request))
    }
}

/// One request through the middleware.
async fn exchange<S, B, ResB>(
    layer: ProvenanceLayer,
    mut inner: S,
    request: Request<B>,
) -> Result<Response<ProvenanceBody<ResB>>, S::Error>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    B: Body<Data = Bytes> + From<Bytes>,
    ResB: Body<Data = Bytes>,
    ResB::Error: Into<BoxError>,
{
    let began = Instant::now();
    let (mut parts, body) = request.into_parts();
    let exchange = {
        let headers = pairs(&parts.headers);
        layer
            .gateway
            .begin(parts.method.as_str(), parts.uri.path(), &headers)
    };
    // The outcome of a body the middleware reads goes to the sink, once its answer is over.
    let sink = (exchange.start() == Start::Read)
        .then(|| layer.audit.clone())
        .flatten();
    let mut exchange = Ended::new(exchange, sink, began);
    match exchange.start() {
        Start::Pass => {
            let response = inner.call(Request::from_parts(parts, body)).await?;
            return Ok(response.map(|body| ProvenanceBody::new(Kind::Pass(Box::pin(body)))));
        }
        Start::Watch => {
            let response = inner.call(Request::from_parts(parts, body)).await?;
            return Ok(back(exchange, response).await);
        }
        Start::Read => {}
    }
    if exchange.declared_too_large() {
        return Ok(own(exchange.too_large(), exchange));
    }
    let body = match read(body, exchange.max_body_bytes()).await {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(own(exchange.too_large(), exchange)),
        // The client is gone, or its stack failed: no one to answer.
        Err(()) => return Ok(own(exchange.failed(Own::MiddlewareFailed), exchange)),
    };
    let principal = layer
        .principal
        .as_ref()
        .and_then(|principal| principal(&parts));
    // Without a sink no account is read: no record is made.
    if layer.audit.is_none() {
        exchange.defer_records();
    }
    let forward = {
        let outcome = exchange.admit(&body, received_at(SystemTime::now()), principal);
        let unkept = layer.audited(&outcome);
        match (outcome.verdict, unkept) {
            // A body the filter refused keeps its refusal, whatever the sink did.
            (Verdict::Reject { status, body }, _) => {
                let close = false;
                let answer = Answer {
                    status,
                    body,
                    close,
                };
                return Ok(own(answer, exchange));
            }
            (_, Some(code)) => return Ok(own(exchange.audit_failed(&code), exchange)),
            // Nothing changed: the very bytes, not a copy.
            (
                Verdict::Forward {
                    body: Cow::Borrowed(same),
                    ..
                },
                None,
            ) if same.len() == body.len() => body.clone(),
            (Verdict::Forward { body: forward, .. }, None) => Bytes::from(forward.into_owned()),
        }
    };
    for name in [CONTENT_LENGTH, TRANSFER_ENCODING, ACCEPT_ENCODING] {
        parts.headers.remove(name);
    }
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(forward.len()));
    let response = inner
        .call(Request::from_parts(parts, B::from(forward)))
        .await?;
    Ok(back(exchange, response).await)
}

/// A request's body, whole; `None` once it is past `limit` bytes (nothing
/// more is read); `Err` when it could not be read.
async fn read<B: Body<Data = Bytes>>(body: B, limit: usize) -> Result<Option<Bytes>, ()> {
    let mut body = pin!(body);
    let mut pieces: Vec<Bytes> = Vec::new();
    let mut size = 0usize;
    while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        // Trailers say nothing of the message.
        let Ok(piece) = frame.map_err(|_| ())?.into_data() else {
            continue;
        };
        size = size.saturating_add(piece.len());
        if size > limit {
            return Ok(None);
        }
        pieces.push(piece);
    }
    // Most bodies come in one piece: it is kept, not copied.
    Ok(Some(match pieces.len() {
        1 => pieces.pop().unwrap_or_default(),
        _ => Bytes::from(pieces.concat()),
    }))
}

/// The service's `response` through the exchange: the answer the client
/// gets, once its head is known (an answer held whole is read to its end
/// first).
async fn back<ResB>(mut exchange: Ended, response: Response<ResB>) -> Response<ProvenanceBody<ResB>>
where
    ResB: Body<Data = Bytes>,
    ResB::Error: Into<BoxError>,
{
    let (mut parts, body) = response.into_parts();
    let mut step = {
        let headers = pairs(&parts.headers);
        exchange.head(parts.status.as_u16(), &headers)
    };
    let mut body = Box::pin(body);
    let mut queue = VecDeque::new();
    let mut given = Bytes::new();
    loop {
        let head = step.head.take();
        let over = step.over;
        queued(&mut queue, step, &given);
        if let Some(head) = head {
            parts.status = status(head.status);
            for (name, value) in &head.edits {
                set(&mut parts.headers, name, value.as_deref());
            }
            let body = if over {
                // The answer is whole: what the service still sends is dropped.
                ProvenanceBody::ending(Kind::Whole(whole(queue)), exchange)
            } else if head.passes && queue.is_empty() {
                ProvenanceBody::ending(Kind::Pass(body), exchange)
            } else {
                ProvenanceBody::new(Kind::Exchange(Box::new(Streaming {
                    exchange,
                    inner: Some(body),
                    queue,
                    over: false,
                })))
            };
            return Response::from_parts(parts, body);
        }
        if over {
            // Over with no head: no answer the exchange stands behind.
            return own(exchange.failed(Own::MiddlewareFailed), exchange);
        }
        step = match poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(piece) => {
                    given = piece;
                    exchange.piece(&given)
                }
                Err(_trailers) => Step::default(),
            },
            None => exchange.end(),
            Some(Err(failure)) => {
                // The service's answer broke: so does the client's, nothing of it sent.
                parts.headers.remove(CONTENT_LENGTH);
                let kind = Kind::Failed(Some(failure.into()));
                return Response::from_parts(parts, ProvenanceBody::ending(kind, exchange));
            }
        };
    }
}

/// An answer of the middleware's own, the exchange's outcome given once it is sent.
fn own<ResB>(answer: Answer, exchange: Ended) -> Response<ProvenanceBody<ResB>> {
    let headers = answer.headers();
    let body = ProvenanceBody::ending(Kind::Whole(Bytes::from(answer.body)), exchange);
    let mut response = Response::new(body);
    *response.status_mut() = status(answer.status);
    for (name, value) in &headers {
        set(response.headers_mut(), name, Some(value));
    }
    response
}

/// `code` as a status (500 for none: the core makes none such).
fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// Removes every value of the header `name`, then sets `value` (when some).
fn set(headers: &mut HeaderMap, name: &str, value: Option<&str>) {
    let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
        return;
    };
    headers.remove(&name);
    if let Some(value) = value.and_then(|value| HeaderValue::from_str(value).ok()) {
        headers.append(name, value);
    }
}

/// Headers as text pairs, as the exchange reads them: a value that is not
/// visible ASCII read byte for byte as Latin-1, as every stack reads it.
fn pairs(headers: &HeaderMap) -> Vec<(&str, Cow<'_, str>)> {
    headers
        .iter()
        .map(|(name, value)| {
            let text = match value.to_str() {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => Cow::Owned(value.as_bytes().iter().map(|&b| char::from(b)).collect()),
            };
            (name.as_str(), text)
        })
        .collect()
}

/// `time` as a record's `receivedAt` has it: UTC, to the millisecond
/// (`2026-04-12T13:20:00.123Z`); none before 1970 or past 9999.
fn received_at(time: SystemTime) -> Option<String> {
    let since = time.duration_since(UNIX_EPOCH).ok()?;
    let (seconds, millis) = (since.as_secs(), since.subsec_millis());
    let (days, second) = (seconds / 86_400, seconds % 86_400);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted + 2) / 5 + 1;
    let month = if shifted < 10 {
        shifted + 3
    } else {
        shifted - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year <= 9999).then(|| {
        let (hour, minute, second) = (second / 3600, second % 3600 / 60, second % 60);
        format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use std::time::Duration;

    #[test]
    fn received_at_is_utc_to_the_millisecond() {
        let at = |millis: u64| received_at(UNIX_EPOCH + Duration::from_millis(millis));
        assert_eq!(at(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            at(951_782_400_000).as_deref(),
            Some("2000-02-29T00:00:00.000Z")
        );
        assert_eq!(
            at(1_709_210_096_789).as_deref(),
            Some("2024-02-29T12:34:56.789Z")
        );
        assert_eq!(
            at(1_776_000_000_123).as_deref(),
            Some("2026-04-12T13:20:00.123Z")
        );
        assert_eq!(
            at(253_402_300_799_999).as_deref(),
            Some("9999-12-31T23:59:59.999Z")
        );
        assert_eq!(at(253_402_300_800_000), None);
        assert_eq!(received_at(UNIX_EPOCH - Duration::from_millis(1)), None);
    }

    #[test]
    fn an_edit_replaces_every_value_of_its_header() {
        let mut headers = HeaderMap::new();
        headers.append("content-length", HeaderValue::from_static("9"));
        headers.append("content-length", HeaderValue::from_static("9"));
        headers.append("x-latin", HeaderValue::from_bytes(b"caf\xe9").unwrap());
        set(&mut headers, "content-length", Some("2"));
        set(&mut headers, "content-type", None);
        // As `Head::edited` makes them: each header set goes last.
        assert_eq!(headers.get_all("content-length").iter().count(), 1);
        assert_eq!(
            pairs(&headers),
            [
                ("x-latin", "caf\u{e9}".into()),
                ("content-length", "2".into())
            ]
        );
    }
}
