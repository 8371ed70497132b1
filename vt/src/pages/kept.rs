//! Page mappings libghostty releases while it parses are kept, still mapped, for its next mapping of the same
//! length. With a full scrollback libghostty maps a new page and releases its oldest one about every 50 KiB of
//! output (pages that outgrew the standard size are not recycled in place but replaced); each such map and
//! unmap is a system call, the map populates every page (see [`super::mmap64`]) and the unmap flushes the TLB
//! of every other CPU running one of our threads. Keeping the released range and handing it back zeroed spares
//! both: measured in process (64 MiB of log text at 80x24), about four in five maps are answered this way and
//! the parse runs 8-15% faster.
//!
//! Bounds: a thread keeps at most [`KEPT_MAPPINGS`] ranges of at most [`MAX_KEPT_BYTES`] each, only those
//! released during a parse on that thread, and gives them back to the kernel when told the terminal is idle
//! ([`release_kept_mappings`], which the daemon's actor calls whenever it has caught up with its terminal's
//! output) and when the thread ends.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many released ranges a parsing thread keeps: libghostty swaps pages of two sizes (grown once or twice)
/// while its scrollback is full; with two slots about four in five of its maps reuse a kept range (one slot:
/// one in two, four: five in six, for twice the memory held).
pub const KEPT_MAPPINGS: usize = 2;

/// The largest range kept (1 MiB); libghostty's pages at 80 columns are 392-452 KiB, wider terminals' larger
/// ones are unmapped as before.
pub const MAX_KEPT_BYTES: usize = 1024 * 1024;

/// The ranges one thread keeps: `(address, length)`, a length of 0 marking a free slot. Dropped with the thread,
/// which unmaps them.
struct Kept([(usize, usize); KEPT_MAPPINGS]);

impl Kept {
    /// Unmaps every kept range; how many there were.
    fn release(&mut self) -> u64 {
        let mut released = 0;
        for (addr, len) in std::mem::replace(&mut self.0, [(0, 0); KEPT_MAPPINGS]) {
            if len > 0 {
                // Safety: a range libghostty released with munmap and nothing has used since it was kept.
                unsafe { libc::syscall(libc::SYS_munmap, addr, len) };
                released += 1;
            }
        }
        released
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

thread_local! {
    static KEPT: RefCell<Kept> = const { RefCell::new(Kept([(0, 0); KEPT_MAPPINGS])) };
}

/// How many of libghostty's mappings were answered with a range it had released before.
static REUSED: AtomicU64 = AtomicU64::new(0);

/// How many `mmap64` calls during a parse were answered with a range libghostty released earlier on the same
/// thread: it grows while a full scrollback swaps pages, which shows libghostty reaches this crate's `munmap`.
pub fn reused_mappings() -> u64 {
    REUSED.load(Ordering::Relaxed)
}

/// How many kept ranges went back to the kernel on release (not counting a thread's end).
static RELEASED: AtomicU64 = AtomicU64::new(0);

/// How many kept ranges [`release_kept_mappings`] gave back to the kernel, in every thread.
pub fn released_mappings() -> u64 {
    RELEASED.load(Ordering::Relaxed)
}

/// Whether the calling thread keeps any range (see the module documentation).
pub fn holds_kept_mappings() -> bool {
    KEPT.try_with(|kept| kept.borrow().0.iter().any(|&(_, len)| len > 0)).unwrap_or(false)
}

/// Unmaps the ranges the calling thread keeps. Call it when the thread's terminal has gone quiet, so a terminal
/// that printed a flood and then idles holds no more memory than libghostty itself does.
pub fn release_kept_mappings() {
    let released = KEPT.try_with(|kept| kept.borrow_mut().release()).unwrap_or(0);
    RELEASED.fetch_add(released, Ordering::Relaxed);
}

/// Takes a kept range of exactly `len` bytes, zeroed, if the calling thread holds one.
pub(super) fn take_zeroed(len: usize) -> Option<*mut c_void> {
    let addr = KEPT
        .try_with(|kept| {
            let mut kept = kept.borrow_mut();
            let slot = kept.0.iter_mut().find(|(_, kept_len)| *kept_len == len)?;
            Some(std::mem::replace(slot, (0, 0)).0)
        })
        .ok()??;
    let range = addr as *mut c_void;
    // Safety: `len` bytes libghostty released on this thread, still mapped read-write and private (the maps
    // this answers are such); zeroed, they hold what a fresh anonymous mapping would.
    unsafe { range.cast::<u8>().write_bytes(0, len) };
    REUSED.fetch_add(1, Ordering::Relaxed);
    Some(range)
}

/// `munmap(2)` as the process sees it. While the calling thread parses (see [`super::Parsing`]), a page-aligned
/// range of at most [`MAX_KEPT_BYTES`] goes into a free slot of the thread's [`KEPT_MAPPINGS`] instead of back
/// to the kernel (see the module documentation). Anything else, and every range once the slots are full, is
/// the system call.
///
/// # Safety
///
/// As `munmap(2)`: the range is memory the caller mapped and uses no more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    if super::parsing() && len > 0 && len <= MAX_KEPT_BYTES && (addr as usize).is_multiple_of(super::page_size()) {
        let kept = KEPT.try_with(|kept| {
            let mut kept = kept.borrow_mut();
            let free = kept.0.iter_mut().find(|(_, kept_len)| *kept_len == 0)?;
            *free = (addr as usize, len);
            Some(())
        });
        if let Ok(Some(())) = kept {
            return 0;
        }
    }
    // Safety: the caller's arguments, passed to the system call unchanged.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}
