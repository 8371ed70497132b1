//! Holds chosen terminals' actors before they start, so a test can show what does not wait for them.

use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender, bounded};

static HELD: Mutex<Vec<(u64, Receiver<()>)>> = Mutex::new(Vec::new());

/// The actor of terminal `id` waits at its start until the returned sender is dropped.
pub(crate) fn hold(id: u64) -> Sender<()> {
    let (open, held) = bounded(0);
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push((id, held));
    open
}

/// Called by every actor at its start: waits while its terminal is held.
pub(super) fn pass(id: u64) {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let Some(n) = held.iter().position(|(held, _)| *held == id) else { return };
    let (_, gate) = held.swap_remove(n);
    drop(held);
    let _ = gate.recv();
}
