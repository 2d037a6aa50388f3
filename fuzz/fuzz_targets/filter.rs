//! The wire filter on any bytes, under three sets of options: an outcome,
//! never a panic; when nothing was refused or changed, what goes on is the
//! input itself, and every message's account can be written as a line.
//! The same bytes, read as the server's answer to themselves, are echoed
//! (WIRE-7): an answer or `None`, never a panic, and what comes back is
//! JSON the echo reads again to itself (echoing twice changes nothing).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_provenance::{Filter, FilterContext, Verdict};
use serde_json::json;

fn filters() -> &'static [Filter; 3] {
    static FILTERS: OnceLock<[Filter; 3]> = OnceLock::new();
    FILTERS.get_or_init(|| {
        [
            json!(null),
            json!({"policy": {"userIntent": "redact", "unknownFields": "keep"}, "liftLegacy": true,
                   "invocationKeys": ["com.example/ai"], "uiKeys": ["com.example/ui"]}),
            json!({"policy": {"maxEnvelopeBytes": 64}, "maxDepth": 8, "maxBatch": 2}),
        ]
        .map(|options| Filter::from_value(&options).expect("valid options"))
    })
}

fuzz_target!(|data: &[u8]| {
    for filter in filters() {
        let outcome = filter.filter(data, &FilterContext::default());
        let untouched = outcome
            .messages
            .iter()
            .all(|seen| seen.refused.is_none() && seen.changes.is_empty());
        if let Verdict::Forward { body, .. } = &outcome.verdict {
            if untouched {
                assert_eq!(body.as_bytes(), data);
            }
        }
        assert_eq!(outcome.lines().len(), outcome.messages.len());
        let turns: Vec<&str> = outcome.messages.iter().filter_map(|seen| seen.turn.as_deref()).collect();
        if let Some(echoed) = filter.echo(data, turns.iter().copied()) {
            let again = filter.echo(echoed.as_bytes(), turns.iter().copied());
            assert_eq!(again.as_deref(), Some(echoed.as_ref()));
        }
    }
});
