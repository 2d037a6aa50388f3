//! What the native test suites share.

use mcp_provenance::{Error, ErrorKind};

/// The JS class the npm package throws an error of this kind as, which the
/// vectors and the error tests name.
pub fn js_class(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::Input => "TypeError",
        ErrorKind::Range => "RangeError",
        // As binding/src/lib.rs throws a kind it does not know of.
        _ => "Error",
    }
}
