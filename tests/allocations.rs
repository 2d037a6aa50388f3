//! A clean envelope costs no allocation: `validate`, and `sanitize` of a
//! message it leaves unchanged, borrow everything they read and build their
//! diagnostics, paths and messages only when there is one to report.
#![cfg(all(feature = "value", not(target_arch = "wasm32")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mcp_provenance::{Policy, ValidateOptions, sanitize, validate};
use serde_json::json;

/// Counts the allocations of the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations(run: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    run();
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn a_clean_envelope_allocates_nothing() {
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "execute_query", "arguments": {"query": "SELECT 1"},
        "_meta": {
            "io.modelcontextprotocol/aiInvocation": {
                "invocationReason": {"text": "The user asked for sample employee rows."},
                "model": {"name": "example-model"},
                "userIntent": {"text": "Show me 10 employées", "redacted": false},
                "turnId": "2f4f0c9e-8d72-4c66-9c6f-3f7f3e6a1c9f"},
            "io.modelcontextprotocol/ui": {"initiator": "app"}}}});
    let options = ValidateOptions::default();
    let policy = Policy::default();
    let mut message = Some(request.clone());
    let counted = allocations(|| {
        assert!(validate(&request, &options).diagnostics.is_empty());
        let out = sanitize(message.take().unwrap_or_default(), &policy);
        assert!(out.is_ok_and(|out| out.changes.is_empty()));
    });
    assert_eq!(counted, 0);
    // The count is real: a diagnostic allocates.
    let bad = json!({"method": "tools/call", "params": {"_meta": {
        "io.modelcontextprotocol/aiInvocation": {"turnId": 1}}}});
    assert!(allocations(|| drop(validate(&bad, &options))) > 0);
}
