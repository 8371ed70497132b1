//! The terminal service: the registry of terminals by id, in creation order, and the operations that span
//! them (create, list, get, terminate, shutdown).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use opencode_pty_protocol::ProcessInfo;

use crate::error::ServiceError;
use crate::terminal::{PtySpec, TerminalConfig, TerminalHandle};

/// Every terminal of one daemon.
#[derive(Debug)]
pub struct TerminalService {
    config: TerminalConfig,
    next_id: AtomicU64,
    /// Ordered by id, which is creation order. `None` once shut down: nothing more is created.
    terminals: Mutex<Option<BTreeMap<u64, Arc<TerminalHandle>>>>,
}

impl TerminalService {
    /// An empty service whose terminals use `config`.
    pub fn new(config: TerminalConfig) -> TerminalService {
        TerminalService { config, next_id: AtomicU64::new(1), terminals: Mutex::new(Some(BTreeMap::new())) }
    }

    fn terminals(&self) -> MutexGuard<'_, Option<BTreeMap<u64, Arc<TerminalHandle>>>> {
        self.terminals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a terminal; ids are assigned in creation order and never reused.
    pub fn create_pty(&self, spec: PtySpec) -> Result<ProcessInfo, ServiceError> {
        if self.terminals().is_none() {
            return Err(ServiceError::invalid("the daemon is shutting down"));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let handle = Arc::new(TerminalHandle::spawn(id, spec, self.config)?);
        let info = handle.info()?;
        let mut terminals = self.terminals();
        let Some(terminals) = terminals.as_mut() else {
            // Shut down meanwhile: the new terminal goes with the rest (dropping the handle terminates it).
            return Err(ServiceError::invalid("the daemon is shutting down"));
        };
        terminals.insert(id, handle);
        Ok(info)
    }

    /// The terminal with this id.
    pub fn get_handle(&self, id: u64) -> Result<Arc<TerminalHandle>, ServiceError> {
        self.terminals().as_ref().and_then(|t| t.get(&id)).cloned().ok_or(ServiceError::NotFound(id))
    }

    /// One terminal, its foreground process refreshed.
    pub fn get(&self, id: u64) -> Result<ProcessInfo, ServiceError> {
        self.get_handle(id)?.info()
    }

    /// Every terminal in creation order, foreground processes refreshed. A terminal that stops answering is
    /// left out rather than failing the whole list.
    pub fn list(&self) -> Vec<ProcessInfo> {
        let handles: Vec<_> = self.terminals().iter().flat_map(|t| t.values().cloned()).collect();
        handles.iter().filter_map(|h| h.info().ok()).collect()
    }

    /// Removes a terminal, kills its child and joins its threads. A second call for the same id fails.
    pub fn terminate(&self, id: u64) -> Result<(), ServiceError> {
        let handle = self.terminals().as_mut().and_then(|t| t.remove(&id)).ok_or(ServiceError::NotFound(id))?;
        handle.terminate();
        Ok(())
    }

    /// Terminates every terminal in parallel and joins them all; afterwards nothing more can be created.
    pub fn shutdown(&self) {
        let handles: Vec<_> = self.terminals().take().into_iter().flat_map(|t| t.into_values()).collect();
        std::thread::scope(|scope| {
            for handle in &handles {
                scope.spawn(move || handle.terminate());
            }
        });
    }
}

impl Drop for TerminalService {
    fn drop(&mut self) {
        self.shutdown();
    }
}
