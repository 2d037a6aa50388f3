//! The path from JSON text to every function: whatever the bytes, parsing
//! and then each operation on the value (as a request, a response, an
//! invocation, a key) returns or fails with an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_provenance::{
    AuditContext, Initiator, KeyOptions, LiftOptions, Policy, ValidateOptions, attach_invocation,
    audit_record, clear_initiator, echo_turn_id, is_reserved_meta_key, is_valid_meta_key,
    lift_legacy_arguments, sanitize, stamp_initiator, validate,
};
use mcp_provenance_fuzz::message;

fuzz_target!(|data: &[u8]| {
    let Some(value) = message(data) else { return };
    let keys = KeyOptions::default();
    let _ = validate(&value, &ValidateOptions::default());
    let _ = sanitize(value.clone(), &Policy::default());
    let _ = stamp_initiator(value.clone(), Initiator::App, &keys);
    let _ = clear_initiator(value.clone(), &keys);
    let _ = attach_invocation(value.clone(), value.clone(), &keys);
    let _ = echo_turn_id(&value, value.clone(), &keys);
    let _ = lift_legacy_arguments(
        value.clone(),
        &LiftOptions {
            remove: true,
            ..LiftOptions::default()
        },
    );
    let _ = audit_record(&value, &AuditContext::default());
    let _ = Policy::from_value(&value);
    let _ = AuditContext::from_value(&value);
    let _ = KeyOptions::from_value(&value);
    if let Some(key) = value.as_str() {
        let _ = (is_valid_meta_key(key), is_reserved_meta_key(key));
    }
});
