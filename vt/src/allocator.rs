//! The process allocator's settings that let a quiet daemon's memory go (issue 31): large buffers freed go back
//! to the kernel at once, and the small ones freed in a thread's heap when a terminal has been compressed.
//!
//! glibc's `malloc` serves a request of at least its mmap threshold (128 KiB at start) from a mapping of its
//! own, returned to the kernel on `free`, but it raises that threshold to the size of each such block freed, up
//! to 32 MiB, and its trim threshold with it. In the daemon that means: the first replay read, snapshot or large
//! frame of a few MiB is freed back to the kernel, and every later one is carved from a thread's arena and kept
//! there, resident, after it is freed. Measured with four quiet, compressed terminals attached again and again
//! (replay from their first byte and a snapshot each time): the daemon's anonymous RSS once quiet grew from
//! 7.5 MiB to 40 MiB and stayed; with the threshold fixed, 8.3 MiB after every round.
//!
//! [`return_freed_buffers`] fixes the threshold at [`MMAP_THRESHOLD_BYTES`], which also stops glibc from moving
//! either threshold again. [`trim_free_memory`], which a terminal's actor calls when it has compressed its
//! memory, gives the free memory left inside the arenas back too (`malloc_trim`; about 0.2-0.3 MiB of a full
//! terminal's output buffers in the bench), at most once per [`TRIM_INTERVAL`]. They live here because this
//! crate already owns how the process's pages come and go (`pages`).

/// Allocations of at least this many bytes get their own mapping, given back to the kernel when freed: glibc's
/// own starting threshold (128 KiB), kept from growing.
pub const MMAP_THRESHOLD_BYTES: usize = 128 * 1024;

/// Fixes the C allocator's mmap threshold at [`MMAP_THRESHOLD_BYTES`] for the whole process; whether the
/// allocator took it. Call it once, early (before the threads that allocate start, though it is safe at any
/// time). Rust's default global allocator is this `malloc`, so the daemon's own buffers follow it too.
pub fn return_freed_buffers() -> bool {
    let threshold = libc::c_int::try_from(MMAP_THRESHOLD_BYTES).unwrap_or(libc::c_int::MAX);
    // Safety: `mallopt` only sets one of malloc's tuning parameters (it takes malloc's own lock); the value is a
    // size glibc accepts (at most its 32 MiB limit on 64-bit targets). No memory is touched.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, threshold) == 1 }
}

/// The least time between two [`trim_free_memory`] calls that do the work: a trim walks every arena of the
/// allocator under its lock, so a thousand terminals going quiet together make one trim, not a thousand.
pub const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// When the last trim ran, in milliseconds since the first call (0: never).
static LAST_TRIM_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The instant the trims' clock counts from.
static TRIM_EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Gives the free memory inside the allocator's arenas back to the kernel (`malloc_trim`): the small buffers
/// freed below the mmap threshold, which stay in each thread's heap otherwise. At most once per
/// [`TRIM_INTERVAL`] in the whole process (later calls within it do nothing); whether this call trimmed.
pub fn trim_free_memory() -> bool {
    use std::sync::atomic::Ordering;
    let epoch = *TRIM_EPOCH.get_or_init(std::time::Instant::now);
    // Never 0 once counted, so that 0 keeps meaning "never".
    let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX).max(1);
    let last = LAST_TRIM_MS.load(Ordering::Relaxed);
    let interval = u64::try_from(TRIM_INTERVAL.as_millis()).unwrap_or(u64::MAX);
    if last != 0 && now.saturating_sub(last) < interval {
        return false;
    }
    if LAST_TRIM_MS.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        return false;
    }
    // Safety: `malloc_trim` only returns free memory of malloc's own arenas to the kernel, under malloc's locks;
    // no memory in use is touched.
    unsafe { libc::malloc_trim(0) };
    true
}
