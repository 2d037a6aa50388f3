//! The same rules as the JS package, natively, on real traffic: reads the
//! JSON lines the prototype's gateway wrote (one per request as it was
//! forwarded to the server, and one per exchange with its `outcome`, which
//! this skips) and prints, one JSON line per request, the audit record and
//! the sanitize changes the Rust core computes for it.
//!
//! ```sh
//! make demo && cargo run --example audit_jsonl -- target/prototype/gateway.jsonl
//! ```
//!
//! js-tests/prototype.test.mjs checks these against what the Node server
//! stored through WebAssembly, field for field.

use std::error::Error;
use std::fs::File;
use std::io::{BufRead, BufReader};

use mcp_provenance::{AuditContext, Policy, audit_record, sanitize};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: cargo run --example audit_jsonl -- <gateway.jsonl>")?;
    for line in BufReader::new(File::open(path)?).lines() {
        let entry: Value = serde_json::from_str(&line?)?;
        let Some(request) = entry.get("message") else {
            continue;
        };
        let context = AuditContext {
            session_id: entry["session"].as_str().map(str::to_owned),
            ..AuditContext::default()
        };
        let record = audit_record(request, &context)?;
        let changes = sanitize(request.clone(), &Policy::default())?.changes;
        println!("{}", json!({ "record": record, "changes": changes }));
    }
    Ok(())
}
