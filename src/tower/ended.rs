//! An exchange that hands its outcome to the audit sink once it is over:
//! when the body of its answer has been sent, or dropped (the client gone,
//! the service failed), whichever way the answer went.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::layer::{Account, Sink};
use crate::wire::Exchange;

/// An exchange, and where its outcome goes when it is dropped: the sink,
/// with when the request came. Stands for the exchange (it derefs to it).
pub(super) struct Ended {
    exchange: Exchange,
    sink: Option<(Arc<Sink>, Instant)>,
}

impl Ended {
    /// `exchange`, its outcome kept for `sink` (none: nothing kept, nothing given).
    pub(super) fn new(mut exchange: Exchange, sink: Option<Arc<Sink>>, began: Instant) -> Self {
        if sink.is_some() {
            exchange.keep_outcome();
        }
        Ended {
            exchange,
            sink: sink.map(|sink| (sink, began)),
        }
    }
}

impl Deref for Ended {
    type Target = Exchange;

    fn deref(&self) -> &Exchange {
        &self.exchange
    }
}

impl DerefMut for Ended {
    fn deref_mut(&mut self) -> &mut Exchange {
        &mut self.exchange
    }
}

impl Drop for Ended {
    /// Hands the outcome and its line to the sink. The answer is gone: a
    /// sink that fails changes nothing of it, and stderr says so once,
    /// with the sink's code alone.
    fn drop(&mut self) {
        let Some((sink, began)) = self.sink.take() else {
            return;
        };
        let ms = began.elapsed().as_secs_f64() * 1000.0;
        let Some(outcome) = self.exchange.outcome(ms, Some(std::process::id()), host()) else {
            return;
        };
        if let Err(failure) = sink(Account::Outcome(&outcome), &outcome.json()) {
            let code: String = failure.code().chars().take(64).collect();
            eprintln!(
                "mcp-provenance: an exchange's outcome was not kept: its audit failed (code {code:?})"
            );
        }
    }
}

/// The name of the host, read once: the kernel's (Linux), else `HOSTNAME`
/// or `COMPUTERNAME`; none where neither says.
fn host() -> Option<&'static str> {
    static HOST: OnceLock<Option<String>> = OnceLock::new();
    HOST.get_or_init(|| {
        let named = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())?;
        let name = named.trim();
        (!name.is_empty()).then(|| name.to_owned())
    })
    .as_deref()
}
