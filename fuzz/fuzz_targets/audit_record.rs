//! auditRecord, on any JSON value under three policies: never a panic;
//! every string of the record is free of AI-13 characters (AI-13, and the
//! decision that method, tool, ids, initiator and diagnostics are too), and
//! the fields the policy limits keep within their limits (AI-14).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_provenance::{AuditContext, audit_record};
use mcp_provenance_fuzz::{forbidden, message, policy};

fuzz_target!(|data: &[u8]| {
    let Some(message) = message(data) else { return };
    let policy = policy(data);
    let context = AuditContext {
        policy: Some(policy.clone()),
        ..AuditContext::default()
    };
    let Ok(record) = audit_record(&message, &context) else {
        return;
    };
    let asserted = &record.client_asserted;
    let limited = [
        (&asserted.invocation_reason, policy.max_reason_bytes),
        (&asserted.model, policy.max_model_bytes),
        (&asserted.user_intent, policy.max_intent_bytes),
        (&asserted.turn_id, policy.max_turn_id_bytes),
    ];
    for (text, limit) in limited {
        if let Some(text) = text {
            assert!(
                text.len() <= limit as usize,
                "a recorded field is over its limit"
            );
        }
    }
    let json = serde_json::to_value(&record).expect("a record serializes");
    let mut texts = Vec::new();
    mcp_provenance_fuzz::strings(&json, &mut texts);
    // The diagnostics' pointers and messages as much as the client's text.
    for text in &texts {
        assert!(
            !text.chars().any(forbidden),
            "an AI-13 character in {text:?}"
        );
    }
});
