//! validate, on any JSON value, as a message and as a response to itself:
//! never a panic; `valid` exactly when no diagnostic is an error; at most 64
//! diagnostics and a summary (MSG-2).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_provenance::{Severity, ValidateOptions, validate};
use mcp_provenance_fuzz::message;

fuzz_target!(|data: &[u8]| {
    let Some(message) = message(data) else { return };
    for request in [None, Some(&message)] {
        let report = validate(
            &message,
            &ValidateOptions {
                request,
                ..ValidateOptions::default()
            },
        );
        assert_eq!(
            report.valid,
            report
                .diagnostics
                .iter()
                .all(|d| d.severity != Severity::Error)
        );
        assert!(report.diagnostics.len() <= 65);
    }
});
