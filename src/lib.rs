#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// A panic in WebAssembly is a trap that can poison the instance: outside
// tests, every failure is a value.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::string_slice,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod audit;
mod diagnostics;
mod echo;
mod error;
mod initiator;
mod invocation;
mod keys;
mod legacy;
mod message;
mod options;
mod pointer;
mod policy;
mod sanitize;
mod text;
mod validate;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use audit::{
    AuditContext, AuditRecord, ClientAsserted, HostAttested, RequestId, Witnessed, audit_record,
};
pub use diagnostics::{Action, Change, Code, Diagnostic, Report, Rule, Severity};
pub use echo::echo_turn_id;
pub use error::Error;
pub use initiator::{Initiator, clear_initiator, stamp_initiator};
pub use invocation::attach_invocation;
pub use keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY, is_reserved_meta_key, is_valid_meta_key};
pub use legacy::{LiftOptions, lift_legacy_arguments};
pub use policy::{FieldPolicy, IntentPolicy, Policy};
pub use sanitize::{Sanitized, sanitize};
pub use validate::{ValidateOptions, validate};
