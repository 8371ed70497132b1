//! The process allocator's one setting that lets a quiet daemon's memory go: large buffers freed go back to
//! the kernel (issue 31).
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
//! either threshold again. It lives here because this crate already owns how the process's pages come and go
//! (`pages`).

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
