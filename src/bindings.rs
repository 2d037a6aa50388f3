//! The one door into the core for the crates of this workspace that stand
//! on it: binding/ (the npm package's wasm module), python/ (the Python
//! package's extension module), and this crate's own tests, which check
//! the exchange step by step as the bindings drive it.
//!
//! Not part of the API, and not covered by semver: what it holds changes
//! with the bindings, which are built from this repository alone. A Rust
//! user has the crate root. The door names each item it lets through, so
//! that the rest of the core stays private; its modules are named for the
//! modules of the core they open onto, so that a binding's call reads the
//! same (`initiator::stamp_edits`) whichever side of the door it is on.

/// The audit record, as the bindings build it from views.
pub mod audit {
    pub use crate::audit::{MAX_RECORDED_NAME_BYTES, READS, record};
    pub use crate::wire::record_json as json;

    /// The JS name of the member of an audit context holding the policy,
    /// and with it the keys.
    pub const POLICY: &str = crate::audit::POLICY.js;
}

/// The correlation ids a record reads.
pub mod correlation {
    pub use crate::correlation::{MAX_ID_BYTES, OPTION, known_keys};
}

/// The edits a rule makes, for a binding that applies them itself.
pub mod edit {
    pub use crate::edit::{Edit, Put, Target};
}

/// The rules on views: the turn id's echo (AI-11).
pub mod echo {
    #[cfg(feature = "value")]
    pub use crate::echo::echo_edits;
    pub use crate::echo::{READS, echo};
}

/// Errors made by a binding, in the core's form.
pub mod error {
    use crate::diagnostics::Code;
    use crate::error::Error;

    /// An error of `code` saying `message`, for a binding that raises a
    /// failure of its own as the core would.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error::new(code, message)
    }
}

/// The rules on views: the initiator (UI-1..5).
pub mod initiator {
    pub use crate::initiator::{READS, clear, stamp};
    #[cfg(feature = "value")]
    pub use crate::initiator::{clear_edits, stamp_edits};
}

/// The rules on views: attaching an envelope.
pub mod invocation {
    #[cfg(feature = "value")]
    pub use crate::invocation::attach_edits;
    pub use crate::invocation::{READS, attach};
}

/// JSON values as the core reads them, borrowed; the npm package's compact
/// form of them.
pub mod json {
    pub use crate::json::{Number, Slot, Text, Tree, compact, is_one_line, write_exact};
}

/// The JS names of the key options, as every options object holds them.
pub mod keys {
    use crate::keys::{INVOCATION_KEY, UI_KEY_OPTION};

    /// `invocationKey` and `uiKey`.
    pub const OPTIONS: [&str; 2] = [INVOCATION_KEY.js, UI_KEY_OPTION.js];
}

/// The rules on views: lifting legacy arguments (AI-17).
pub mod legacy {
    #[cfg(feature = "value")]
    pub use crate::legacy::lift_edits;
    pub use crate::legacy::{READS, lift};
}

/// What a call needs a message to be, and how deep a reader goes.
pub mod message {
    pub use crate::message::{MAX_DEPTH, Unreadable};
}

/// Options read from a runtime's values, by their JS names
/// (`FromOptions::from_slot`): checked as they are read, and their errors
/// naming them as JS does.
pub mod options {
    pub use crate::options::FromOptions;
}

/// JSON Pointers to the places of the table.
pub mod path {
    pub use crate::path::{MAX_SEGMENT_BYTES, Path, key_name};
}

/// The rules on views: sanitize's plan (AI-8, AI-12..15).
pub mod sanitize {
    #[cfg(feature = "value")]
    pub use crate::sanitize::plan_value;
    pub use crate::sanitize::{Plan, READS, plan};
}

/// The one table of a message, which a binding reads its runtime's values by.
pub mod schema {
    pub use crate::schema::{
        ENVELOPE, EnvelopeField, FIELDS, Group, Key, MESSAGE, Node, Place, Read, Reads,
    };
}

/// Strings made safe to show.
pub mod text {
    pub use crate::text::visible;
}

/// Every finding on a message, as JS and Python ask for them: their key
/// options read but not checked, and every KEY-3 problem reported in the
/// report with the JS names of the options.
pub mod validate {
    use crate::correlation::CorrelationKind;
    use crate::diagnostics::Report;
    use crate::error::Error;
    use crate::json::Slot;
    use crate::keys::KeyOptions;
    use crate::options::{FromOptions, Naming, Options};
    #[cfg(feature = "value")]
    use crate::validate::ValidateOptions;
    pub use crate::validate::{READS, option_diagnostic};
    use crate::view::MessageView;

    /// The key options of a call to `validate` by their JS names (`null`
    /// for the defaults), read but not checked: the report says what is
    /// wrong with them, all of it.
    pub fn keys(options: Slot<'_>) -> Result<KeyOptions, Error> {
        let members = KeyOptions::MEMBERS;
        KeyOptions::read(&Options::new(
            options,
            KeyOptions::WHAT,
            members,
            Naming::Js,
        )?)
    }

    /// `validate` on views, KEY-3 problems named as JS names them.
    pub fn check(
        message: &MessageView,
        request: Option<&MessageView>,
        keys: &KeyOptions,
        extra: &[(String, CorrelationKind)],
    ) -> Report {
        crate::validate::check(message, request, keys, extra, Naming::Js)
    }

    /// `validate` on values, KEY-3 problems named as JS names them.
    #[cfg(feature = "value")]
    pub fn validate(message: &serde_json::Value, options: &ValidateOptions) -> Report {
        crate::validate::validate_as(message, options, Naming::Js)
    }
}

/// A message read through the table.
pub mod view {
    pub use crate::view::{Envelope, MessageView};
}

/// The exchange as a state machine, step by step, for the middlewares the
/// bindings are made into; and the filter, the gateway and a filter's
/// context made from options as JSON text, for a binding that reads no
/// `serde_json::Value` (the npm filter module).
pub mod wire {
    use crate::error::Error;
    use crate::options::{FromOptions, Naming};
    pub use crate::wire::{
        Answer, Edit, Exchange, Head, Own, Piece, SESSION_KEY_PREFIX, SESSION_TTL_SECONDS,
        SessionNews, Start, Step, line_head, session_key,
    };
    use crate::wire::{Filter, FilterContext, FilterOptions, Gateway, GatewayOptions, read_json};

    /// A filter from options by their JS names, as JSON text (`None` for
    /// the defaults): the core's own parser reads it. Text that is not one
    /// JSON value, nests too deep or names a member twice is `unreadable`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::__bindings::wire::filter_from_json;
    ///
    /// assert_eq!(filter_from_json(Some(r#"{"maxBatch": 10}"#))?.options().max_batch, 10);
    /// let err = filter_from_json(Some(r#"{"maxBatch": 10, "maxBatch": 20}"#)).unwrap_err();
    /// assert_eq!(err.to_string(), "the value cannot be read as JSON: a member named twice");
    /// let err = filter_from_json(Some(r#"{"maxBatch": 0}"#)).unwrap_err();
    /// assert_eq!(err.to_string(), "filter option `maxBatch` must be an integer from 1 to 100000");
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn filter_from_json(text: Option<&str>) -> Result<Filter, Error> {
        read_json(text, |slot| {
            Filter::build(FilterOptions::from_slot(slot)?, Naming::Js)
        })
    }

    /// A gateway from options by their JS names, as JSON text (`None` for
    /// the defaults), read as [`filter_from_json`] reads them.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::__bindings::wire::gateway_from_json;
    ///
    /// let err = gateway_from_json(Some(r#"{"maxBodyBytes": 0}"#)).unwrap_err();
    /// assert_eq!(err.to_string(), "option `maxBodyBytes` must be a positive integer");
    /// assert!(gateway_from_json(None).is_ok());
    /// ```
    pub fn gateway_from_json(text: Option<&str>) -> Result<Gateway, Error> {
        read_json(text, |slot| {
            Gateway::build(GatewayOptions::from_slot(slot)?, Naming::Js)
        })
    }

    /// A filter's context by its JS names, as JSON text (`None` for none),
    /// read as [`filter_from_json`] reads options.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::__bindings::wire::context_from_json;
    ///
    /// let context = context_from_json(Some(r#"{"principal": "alice"}"#))?;
    /// assert_eq!(context.principal.as_deref(), Some("alice"));
    /// assert!(context_from_json(Some(r#"{"policy": {}}"#)).is_err());
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn context_from_json(text: Option<&str>) -> Result<FilterContext, Error> {
        read_json(text, FilterContext::from_slot)
    }
}
