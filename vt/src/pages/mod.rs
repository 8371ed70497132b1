//! libghostty's page memory, made cheap to recycle and to grow: the process's `madvise`, `mmap64`, `munmap`
//! and `mremap`, which act for libghostty only while it is the caller and on memory it mapped itself.
//!
//! libghostty-vt releases each recycled scrollback page with `madvise(MADV_DONTNEED)` and faults it back in
//! zero-filled; in a multi-threaded daemon every such call also flushes the TLB of each other CPU running one
//! of our threads (an inter-processor interrupt per call), which measured as most of a terminal's ingest cost.
//! The executable defines these four functions, and the dynamic linker binds libghostty's imports to them
//! (glibc's own callers use its internal aliases and are unaffected). For `MADV_DONTNEED` on a page libghostty
//! mapped, `madvise` zeroes the resident pages instead: exactly the contents the kernel would leave (zero) in
//! private anonymous memory, without faulting a page in (so the resident size never grows from it) and
//! without an interrupt.
//!
//! The same goes for the pages libghostty maps while it parses: it reads fresh page memory before writing it,
//! so each 4 KiB page is first mapped to the kernel's shared zero page and then copied on the first write, a
//! fault that also flushes the other CPUs' TLBs. While a thread is inside
//! [`Terminal::write`](crate::Terminal::write), `mmap64` makes private anonymous writable mappings of at most
//! [`MAX_POPULATED_BYTES`] with `MAP_POPULATE`, writable from the start. A new terminal's first pages, mapped
//! outside a parse, are made as asked, so an idle terminal stays small.
//!
//! Zeroing in place is right only for private anonymous writable memory: in a shared or file-backed mapping it
//! would write zeros into the file, in a read-only one it would fault. So it happens only when both hold:
//! - the calling thread is inside libghostty (the thread-local mark of [`inside`], set around the libghostty
//!   calls that map, discard or free pages), and
//! - the range starts a mapping that `mmap64` made for libghostty (private, anonymous, writable) and that has
//!   not been unmapped or moved since ([`record`]; `munmap`, `mremap` and fixed mappings keep it true).
//!
//! Every other call, from any thread, is the plain system call with the caller's arguments, made with
//! `syscall(2)` rather than by looking up glibc's function with `dlsym(RTLD_NEXT)`: glibc's wrappers for these
//! four are the bare system call (setting `errno` on failure, as `syscall` does), while `dlsym` takes the
//! loader's lock and may allocate, so it could deadlock when called from an allocator, a signal handler or a
//! child forked while another thread held that lock, and it needs the dynamic loader at all. None of these
//! functions allocate, lock or panic.

mod inside;
mod record;
#[cfg(test)]
mod tests;

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use inside::Inside;
use inside::Mark;
use record::RECORD;

/// How many `MADV_DONTNEED` calls were answered by zeroing in place (see [`zeroed_in_place`]).
static ZEROED: AtomicU64 = AtomicU64::new(0);

/// How many `MADV_DONTNEED` calls in this process were answered by zeroing resident pages in place instead of
/// the system call: it grows while a terminal recycles scrollback pages, which shows libghostty reaches this
/// crate's `madvise`.
pub fn zeroed_in_place() -> u64 {
    ZEROED.load(Ordering::Relaxed)
}

/// How many `MADV_DONTNEED` calls made inside libghostty went to the system call (see [`kernel_discards`]).
static KERNEL_DISCARDS: AtomicU64 = AtomicU64::new(0);

/// How many `MADV_DONTNEED` calls made while a thread was inside libghostty went to the system call instead of
/// being zeroed in place: the range was not one libghostty mapped through this crate, or was larger than
/// [`MAX_ZEROED_PAGES`]. It stays flat while a terminal recycles pages, which shows every page libghostty
/// discards was recorded when it was mapped.
pub fn kernel_discards() -> u64 {
    KERNEL_DISCARDS.load(Ordering::Relaxed)
}

/// The largest range, in pages, zeroed in place (16 MiB of 4 KiB pages); libghostty's page runs are far
/// smaller. Larger ranges go to the system call, so the residency vector stays on the stack.
pub const MAX_ZEROED_PAGES: usize = 4096;

/// How many mappings were made writable up front because libghostty made them while parsing.
static POPULATED: AtomicU64 = AtomicU64::new(0);

/// How many of libghostty's mappings made during [`crate::Terminal::write`] were populated writable up front
/// (see the module documentation): it grows while a terminal's page pool grows, which shows libghostty reaches
/// this crate's `mmap64`.
pub fn populated_mappings() -> u64 {
    POPULATED.load(Ordering::Relaxed)
}

/// The largest mapping made writable up front (64 MiB); libghostty's pages are far smaller (about 400 KiB at
/// 80 columns). Larger ones are mapped as asked.
pub const MAX_POPULATED_BYTES: usize = 64 * 1024 * 1024;

// A mapping that is populated is also recorded.
const _: () = assert!(MAX_POPULATED_BYTES <= record::MAX_RECORDED_BYTES);

/// `madvise(2)` as the process sees it; see the module documentation. Not part of the crate's API: it exists
/// only as the symbol libghostty's import binds to.
///
/// # Safety
///
/// As `madvise(2)`: `addr` is page-aligned and `[addr, addr + len)` is memory the caller owns and may discard.
#[unsafe(no_mangle)]
unsafe extern "C" fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int {
    if advice == libc::MADV_DONTNEED && inside::mark() != Mark::Outside {
        // Safety: the calling thread is inside libghostty, and the range lies in a private anonymous writable
        // mapping that libghostty made through `mmap64` and has neither unmapped nor moved (the record).
        if RECORD.holds(addr as usize, len) && unsafe { zero_resident(addr, len) } {
            ZEROED.fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        KERNEL_DISCARDS.fetch_add(1, Ordering::Relaxed);
    }
    // Safety: the caller's arguments, passed through to the system call unchanged.
    unsafe { libc::syscall(libc::SYS_madvise, addr, len, advice) as c_int }
}

/// Zeroes the resident pages of `[addr, addr + len)`; false (nothing done) when the range cannot be checked.
///
/// # Safety
///
/// The range is private anonymous writable memory the caller may discard.
unsafe fn zero_resident(addr: *mut c_void, len: usize) -> bool {
    // Safety: sysconf has no preconditions.
    let page = match usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }) {
        Ok(page) if page > 0 => page,
        _ => return false,
    };
    let pages = len.div_ceil(page);
    if len == 0 || pages > MAX_ZEROED_PAGES || !(addr as usize).is_multiple_of(page) {
        return false;
    }
    let mut resident = [0u8; MAX_ZEROED_PAGES];
    // Safety: the vector holds at least one byte per page of the range.
    if unsafe { libc::mincore(addr, len, resident.as_mut_ptr()) } != 0 {
        return false;
    }
    for (index, state) in resident[..pages].iter().enumerate() {
        if state & 1 == 1 {
            let start = index * page;
            let count = page.min(len - start);
            // Safety: inside the range the caller may discard; the page is resident, so writing faults nothing.
            unsafe { addr.cast::<u8>().add(start).write_bytes(0, count) };
        }
    }
    true
}

/// `mmap64(2)` as the process sees it; see the module documentation. Inside libghostty, a private anonymous
/// writable mapping is recorded, and while parsing it is populated too.
///
/// # Safety
///
/// As `mmap(2)`.
#[unsafe(no_mangle)]
unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off64_t,
) -> *mut c_void {
    let mark = inside::mark();
    let ours = mark != Mark::Outside && page_like(len, prot, flags);
    let mut flags = flags;
    if ours && mark == Mark::Parsing {
        flags |= libc::MAP_POPULATE;
        POPULATED.fetch_add(1, Ordering::Relaxed);
    }
    if flags & libc::MAP_FIXED != 0 {
        // Whatever was mapped there is replaced (even if the call then fails, the old pages may be gone).
        RECORD.forget(addr as usize, len);
    }
    // Safety: the caller's arguments, passed to the system call (with MAP_POPULATE at most added, which changes
    // when pages are faulted in, not what the mapping holds); it reports failure as MAP_FAILED with errno set.
    let map = unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, offset) as *mut c_void };
    if ours && map != libc::MAP_FAILED {
        RECORD.insert(map as usize, len);
    }
    map
}

/// Whether a mapping asked for with these arguments is one libghostty's pages are made of: private,
/// anonymous, writable, no stack and no larger than [`MAX_POPULATED_BYTES`].
fn page_like(len: usize, prot: c_int, flags: c_int) -> bool {
    // MAP_TYPE, not the MAP_PRIVATE bit alone: MAP_SHARED_VALIDATE has that bit set too.
    flags & libc::MAP_TYPE == libc::MAP_PRIVATE
        && flags & libc::MAP_ANONYMOUS != 0
        && flags & (libc::MAP_NORESERVE | libc::MAP_STACK | libc::MAP_GROWSDOWN) == 0
        && prot & libc::PROT_WRITE != 0
        && len <= MAX_POPULATED_BYTES
}

/// `munmap(2)` as the process sees it: the system call, after the record forgets the range.
///
/// # Safety
///
/// As `munmap(2)`.
#[unsafe(no_mangle)]
unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    // First, so no other thread can be handed the range while it is still recorded.
    RECORD.forget(addr as usize, len);
    // Safety: the caller's arguments, passed through to the system call unchanged.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}

/// `mremap(2)` as the process sees it: the system call; a recorded mapping moved or resized whole stays
/// recorded at its new place, any other recorded range it touches is forgotten.
///
/// C declares it variadic, with `new_address` read only under `MREMAP_FIXED`; Rust cannot define a variadic
/// function, so it takes five arguments and reads the fifth only under `MREMAP_FIXED`, as glibc does. On the
/// Linux ABIs this crate is built for (x86-64, AArch64) a variadic call passes these arguments in the same
/// registers as a plain one.
///
/// # Safety
///
/// As `mremap(2)`.
#[unsafe(no_mangle)]
unsafe extern "C" fn mremap(
    old: *mut c_void,
    old_len: usize,
    new_len: usize,
    flags: c_int,
    new_address: *mut c_void,
) -> *mut c_void {
    let was_recorded = RECORD.forget(old as usize, old_len);
    let new_address = if flags & libc::MREMAP_FIXED != 0 {
        // The destination is replaced.
        RECORD.forget(new_address as usize, new_len);
        new_address
    } else {
        std::ptr::null_mut()
    };
    // Safety: the caller's arguments, passed to the system call (a null new address where the caller passed
    // none, which the kernel then ignores); it reports failure as MAP_FAILED with errno set.
    let moved = unsafe { libc::syscall(libc::SYS_mremap, old, old_len, new_len, flags, new_address) as *mut c_void };
    if was_recorded && moved != libc::MAP_FAILED {
        // The same private anonymous writable mapping, of the same owner, at its new place and length.
        RECORD.insert(moved as usize, new_len);
    }
    moved
}

/// Makes sure this module is linked into every program that uses the library (see [`crate::Terminal::new`]).
pub(crate) fn linked() {
    std::hint::black_box(madvise as unsafe extern "C" fn(*mut c_void, usize, c_int) -> c_int);
    std::hint::black_box(
        mmap64 as unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, libc::off64_t) -> *mut c_void,
    );
    std::hint::black_box(munmap as unsafe extern "C" fn(*mut c_void, usize) -> c_int);
    std::hint::black_box(mremap as unsafe extern "C" fn(*mut c_void, usize, usize, c_int, *mut c_void) -> *mut c_void);
}
