//! The middleware, whatever the stack: its options read once, which
//! requests it watches (the paths the app routes), the sessions it
//! remembers, and an [`Exchange`] for each request. A middleware for a
//! stack (Node, Fetch, ASGI, tower) only moves bytes between its stack and
//! the exchange.

use std::sync::{Arc, Mutex};

use super::exchange::{Exchange, Shared};
use super::filter::Filter;
use super::options::GatewayOptions;
use super::sessions::Sessions;
use super::step::Start;
use crate::error::Error;
#[cfg(feature = "value")]
use crate::options::FromOptions;
use crate::options::Naming;

/// A middleware's core: its filter and options, and the sessions the app
/// issued; an [`Exchange`] for each request. Cheap to clone: clones share
/// their sessions.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Gateway, GatewayOptions};
///
/// let gateway = Gateway::new(GatewayOptions { paths: Some(vec!["/mcp".into()]), ..GatewayOptions::default() })?;
/// // Each request is an exchange, which a middleware drives (`ProvenanceLayer`
/// // with the feature `tower`): here one for a body of at most 1 MiB.
/// let exchange = gateway.begin("POST", "/mcp/", &[("content-type", "application/json")]);
/// assert_eq!(exchange.max_body_bytes(), 1 << 20);
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Gateway(Arc<Shared>);

impl Gateway {
    /// A gateway with `options`, checked (its filter's, as [`Filter::new`]).
    /// Messages name the fields.
    ///
    /// # Errors
    ///
    /// The filter's errors, and `invalid-limit` or `invalid-option` for its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Gateway, GatewayOptions};
    ///
    /// let err = Gateway::new(GatewayOptions { max_body_bytes: 0, ..GatewayOptions::default() }).unwrap_err();
    /// assert_eq!(err.to_string(), "option `max_body_bytes` must be a positive integer");
    /// ```
    pub fn new(options: GatewayOptions) -> Result<Self, Error> {
        Gateway::build(options, Naming::Rust)
    }

    /// A gateway with `options`, checked, naming them as `naming` says.
    pub(crate) fn build(options: GatewayOptions, naming: Naming) -> Result<Self, Error> {
        options.check_own(naming)?;
        let filter = Filter::build(options.filter.clone(), naming)?;
        let sessions = Mutex::new(Sessions::new(options.max_sessions as usize));
        Ok(Gateway(Arc::new(Shared::new(filter, options, sessions))))
    }

    /// A gateway from options with their JS names (`null` for the
    /// defaults); messages name the options as JS does.
    ///
    /// # Errors
    ///
    /// `unknown-option` for a name neither the filter nor the middleware has,
    /// and the errors of [`Gateway::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Gateway;
    /// use serde_json::json;
    ///
    /// let err = Gateway::from_value(&json!({"maxBodyBytes": 0})).unwrap_err();
    /// assert_eq!(err.to_string(), "option `maxBodyBytes` must be a positive integer");
    /// assert!(Gateway::from_value(&json!({"policy": {"userIntent": "redact"}, "echo": false, "paths": ["/mcp"]})).is_ok());
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        let options = GatewayOptions::from_slot(crate::json::Slot::of(value))?;
        Gateway::build(options, Naming::Js)
    }

    /// Its filter.
    pub fn filter(&self) -> &Filter {
        &self.0.filter
    }

    /// Its options.
    pub fn options(&self) -> &GatewayOptions {
        &self.0.options
    }

    /// The exchange of one request: its HTTP `method`, the `path` the app
    /// routes it by (without a root path a server strips, or a mount's
    /// prefix a framework strips), and its headers, names in any case, a
    /// header sent twice as two pairs.
    pub fn begin<N: AsRef<str>, V: AsRef<str>>(
        &self,
        method: &str,
        path: &str,
        headers: &[(N, V)],
    ) -> Exchange {
        let start = if !self.watches(path) {
            Start::Pass
        } else if method.eq_ignore_ascii_case("POST") {
            Start::Read
        } else {
            Start::Watch
        };
        Exchange::new(Arc::clone(&self.0), start, method, headers)
    }

    /// Whether requests to `path` are the middleware's.
    fn watches(&self, path: &str) -> bool {
        let Some(paths) = &self.0.options.paths else {
            return true;
        };
        paths.iter().any(|pattern| routes(pattern, path))
    }
}

/// Whether the app may route `path` to the endpoint `pattern`: the same
/// path (a trailing slash aside, `*` one segment), or one below it. As
/// loosely as any stack routes: segments compared without regard to case
/// (Express's default), after their `%XX` escapes are read (Hono's), and an
/// empty segment (`//`) passed over. Matching more than the app routes only
/// filters a request the app would not serve as MCP; matching less would
/// let one it serves through unread.
fn routes(pattern: &str, path: &str) -> bool {
    let (pattern, path) = (segments(pattern), segments(path));
    pattern.len() <= path.len()
        && pattern
            .iter()
            .zip(&path)
            .all(|(wanted, given)| wanted == "*" || wanted.eq_ignore_ascii_case(given))
}

/// The non-empty segments of a path, each with its escapes read.
fn segments(path: &str) -> Vec<std::borrow::Cow<'_, str>> {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .map(decoded)
        .collect()
}

/// A path segment with its `%XX` escapes read (an escape that reads as no
/// UTF-8 left as it came).
fn decoded(segment: &str) -> std::borrow::Cow<'_, str> {
    if !segment.contains('%') {
        return std::borrow::Cow::Borrowed(segment);
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(value) => {
                out.push(value);
                at += 3;
            }
            None => {
                out.push(byte);
                at += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(text) => std::borrow::Cow::Owned(text),
        Err(_) => std::borrow::Cow::Borrowed(segment),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn an_endpoint_owns_the_paths_below_it() {
        for path in ["/mcp", "/mcp/", "/mcp//", "/mcp/sse", "/mcp/messages/x"] {
            assert!(routes("/mcp", path), "{path}");
        }
        for path in ["/mc", "/mcpx", "/", "/other/mcp"] {
            assert!(!routes("/mcp", path), "{path}");
        }
        // As loosely as any stack routes: Express without regard to case, Hono after escapes.
        for path in ["/MCP", "/%6Dcp", "/%4d%43%50/x", "//mcp"] {
            assert!(routes("/mcp", path), "{path}");
        }
        assert!(routes("/servers/*/mcp", "/servers/a1/mcp/"));
        assert!(!routes("/servers/*/mcp", "/servers/mcp"));
        assert!(routes("/", "/anything"));
    }

    #[test]
    fn a_gateway_reads_what_its_paths_route_and_watches_the_rest() -> Result<(), Error> {
        let options = GatewayOptions {
            paths: Some(vec!["/mcp".into()]),
            ..GatewayOptions::default()
        };
        let gateway = Gateway::new(options)?;
        let headers = [("content-type", "application/json")];
        assert_eq!(
            gateway.begin("POST", "/mcp/", &headers).start(),
            Start::Read
        );
        assert_eq!(
            gateway.begin("POST", "/token", &headers).start(),
            Start::Pass
        );
        assert_eq!(gateway.begin("GET", "/mcp", &headers).start(), Start::Watch);
        Ok(())
    }
}
