//! sanitize, on any JSON value under three policies: never a panic; what it
//! returns holds no AI-13 character in its envelope, keeps each field
//! within its limit and the envelope within its own (AI-13, AI-14), and
//! sanitizing it again changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_provenance::sanitize;
use mcp_provenance_fuzz::{envelope, forbidden, js_json_len, message, policy, strings};

fuzz_target!(|data: &[u8]| {
    let Some(message) = message(data) else { return };
    let policy = policy(data);
    let Ok(out) = sanitize(message, &policy) else {
        return;
    };
    // Only a request carries the envelope; a response is returned as it is.
    let request = out
        .message
        .get("method")
        .is_some_and(serde_json::Value::is_string);
    if let Some(envelope) = envelope(&out.message).filter(|_| request) {
        let mut texts = Vec::new();
        strings(envelope, &mut texts);
        assert!(
            texts.iter().all(|text| !text.chars().any(forbidden)),
            "an AI-13 character is left"
        );
        let limits = [
            ("/invocationReason/text", policy.max_reason_bytes),
            ("/model/name", policy.max_model_bytes),
            ("/userIntent/text", policy.max_intent_bytes),
            ("/turnId", policy.max_turn_id_bytes),
        ];
        for (pointer, limit) in limits {
            if let Some(text) = envelope.pointer(pointer).and_then(|v| v.as_str()) {
                assert!(text.len() <= limit as usize, "{pointer} is over its limit");
            }
        }
        assert!(
            js_json_len(envelope) <= policy.max_envelope_bytes as usize,
            "the envelope is over its limit"
        );
    }
    let again = sanitize(out.message.clone(), &policy).expect("what sanitize returns, it takes");
    assert!(
        again.changes.is_empty(),
        "sanitizing twice changed {:?}",
        again.changes
    );
    assert_eq!(again.message, out.message);
});
