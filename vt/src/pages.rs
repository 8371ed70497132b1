//! Recycled scrollback pages are zeroed in place instead of given back to the kernel. libghostty-vt releases
//! each recycled page run with `madvise(MADV_DONTNEED)` and faults it back in zero-filled; in a multi-threaded
//! daemon every such call also flushes the TLB of each other CPU running one of our threads (an inter-processor
//! interrupt per call), which measured as most of a terminal's ingest cost. This module defines `madvise` in
//! the executable, which the dynamic linker binds libghostty's import to (glibc's own callers use its internal
//! alias and are unaffected): for `MADV_DONTNEED` it zeroes the pages that are resident, which leaves exactly
//! the contents the kernel would (zero) for the private anonymous memory libghostty recycles, never faults a
//! page in, so it never raises the resident size, and costs no interrupt. Anything else, and any range it
//! cannot check, goes to the system call unchanged.
//!
//! The same goes for the pages libghostty maps while it parses (`mmap64`, defined here too): it reads fresh
//! page memory before writing it, so each 4 KiB page is first mapped to the kernel's shared zero page and then
//! copied on the first write, a fault that also flushes the other CPUs' TLBs. While a thread is inside
//! [`Terminal::write`](crate::Terminal::write) (see [`Parsing`]), private anonymous writable mappings of at most
//! [`MAX_POPULATED_BYTES`] are made with `MAP_POPULATE`, writable from the start. Everywhere else (the
//! terminal's first page, Rust's and glibc's own mappings) `mmap64` is the plain system call.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many `MADV_DONTNEED` calls were answered by zeroing in place (see [`zeroed_in_place`]).
static ZEROED: AtomicU64 = AtomicU64::new(0);

/// How many `MADV_DONTNEED` calls in this process were answered by zeroing resident pages in place instead of
/// the system call: it grows while a terminal recycles scrollback pages, which shows libghostty reaches this
/// `madvise`.
pub fn zeroed_in_place() -> u64 {
    ZEROED.load(Ordering::Relaxed)
}

/// The largest range, in pages, zeroed in place (16 MiB of 4 KiB pages); libghostty's page runs are far
/// smaller. Larger ranges go to the system call, so the residency vector stays on the stack.
pub const MAX_ZEROED_PAGES: usize = 4096;

/// `madvise(2)` as the process sees it; see the module documentation.
///
/// # Safety
///
/// As `madvise(2)`: `addr` is page-aligned and `[addr, addr + len)` is memory the caller owns and may discard.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int {
    // Safety: the caller's contract is madvise's, which covers discarding (zeroing) the range.
    if advice == libc::MADV_DONTNEED && unsafe { zero_resident(addr, len) } {
        ZEROED.fetch_add(1, Ordering::Relaxed);
        return 0;
    }
    // Safety: the caller's arguments, passed through to the system call unchanged.
    unsafe { libc::syscall(libc::SYS_madvise, addr, len, advice) as c_int }
}

/// Zeroes the resident pages of `[addr, addr + len)`; false (nothing done) when the range cannot be checked.
///
/// # Safety
///
/// The range is memory the caller may discard.
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

thread_local! {
    /// Whether this thread is inside a libghostty parse (see [`Parsing`]).
    static PARSING: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as parsing until dropped: mappings libghostty makes meanwhile are populated.
pub(crate) struct Parsing {
    was: bool,
}

impl Parsing {
    pub(crate) fn begin() -> Parsing {
        Parsing { was: PARSING.with(|parsing| parsing.replace(true)) }
    }
}

impl Drop for Parsing {
    fn drop(&mut self) {
        PARSING.with(|parsing| parsing.set(self.was));
    }
}

/// `mmap64(2)` as the process sees it; see the module documentation.
///
/// # Safety
///
/// As `mmap(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off64_t,
) -> *mut c_void {
    let private_anonymous = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    let mut flags = flags;
    if flags & private_anonymous == private_anonymous
        && flags & (libc::MAP_NORESERVE | libc::MAP_STACK | libc::MAP_GROWSDOWN) == 0
        && prot & libc::PROT_WRITE != 0
        && len <= MAX_POPULATED_BYTES
        && PARSING.with(Cell::get)
    {
        flags |= libc::MAP_POPULATE;
        POPULATED.fetch_add(1, Ordering::Relaxed);
    }
    // Safety: the caller's arguments, passed to the system call (with MAP_POPULATE at most added, which changes
    // when pages are faulted in, not what the mapping holds); it reports failure as MAP_FAILED with errno set.
    unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, offset) as *mut c_void }
}

/// Makes sure this module is linked into every program that uses the library (see [`crate::Terminal::new`]).
pub(crate) fn linked() {
    std::hint::black_box(madvise as unsafe extern "C" fn(*mut c_void, usize, c_int) -> c_int);
    std::hint::black_box(
        mmap64 as unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, libc::off64_t) -> *mut c_void,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discarded_pages_read_as_zero_and_untouched_ones_stay_out() {
        let page = 4096;
        let len = 8 * page;
        // Safety: a fresh private anonymous mapping of `len` bytes, unmapped at the end.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let bytes = map.cast::<u8>();
        // Touch pages 0 and 2 only.
        // Safety: inside the mapping.
        unsafe {
            bytes.write_bytes(7, page);
            bytes.add(2 * page).write_bytes(9, page);
        }
        // Safety: the whole mapping is ours to discard.
        assert_eq!(unsafe { madvise(map, len, libc::MADV_DONTNEED) }, 0);
        let mut resident = [0u8; 8];
        // Safety: one byte per page of the mapping.
        assert_eq!(unsafe { libc::mincore(map, len, resident.as_mut_ptr()) }, 0);
        assert_eq!(resident.map(|r| r & 1), [1, 0, 1, 0, 0, 0, 0, 0], "nothing was faulted in");
        // Safety: inside the mapping.
        let all = unsafe { std::slice::from_raw_parts(bytes, len) };
        assert!(all.iter().all(|&b| b == 0), "every discarded byte reads as zero");
        // Other advice reaches the kernel.
        // Safety: as above.
        assert_eq!(unsafe { madvise(map, len, libc::MADV_WILLNEED) }, 0);
        // Safety: the mapping made above.
        assert_eq!(unsafe { libc::munmap(map, len) }, 0);
    }

    /// Whether every page of `[map, map + len)` is resident.
    fn resident_pages(map: *mut c_void, len: usize) -> Vec<u8> {
        let mut resident = vec![0u8; len / 4096];
        // Safety: one byte per page of the mapping.
        assert_eq!(unsafe { libc::mincore(map, len, resident.as_mut_ptr()) }, 0);
        resident.iter().map(|r| r & 1).collect()
    }

    fn map(len: usize) -> *mut c_void {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // Safety: a fresh private anonymous mapping, through this module's definition.
        let map = unsafe { mmap64(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
        assert_ne!(map, libc::MAP_FAILED);
        map
    }

    #[test]
    fn mappings_made_while_parsing_are_populated_and_others_are_not() {
        let len = 16 * 4096;
        let plain = map(len);
        assert_eq!(resident_pages(plain, len), vec![0; 16], "outside a parse nothing is faulted in");
        let before = populated_mappings();
        let populated = {
            let _parsing = Parsing::begin();
            map(len)
        };
        assert_eq!(resident_pages(populated, len), vec![1; 16], "inside a parse every page is there");
        assert!(populated_mappings() > before, "counted (other tests may parse meanwhile, so only as growing)");
        let after = map(len);
        assert_eq!(resident_pages(after, len), vec![0; 16], "the mark ends with the parse");
        // Safety: one byte per page, inside the mapping: the populated pages read as zero, as fresh ones do.
        let bytes = unsafe { std::slice::from_raw_parts(populated.cast::<u8>(), len) };
        assert!(bytes.iter().all(|&b| b == 0));
        for m in [plain, populated, after] {
            // Safety: the mappings made above.
            assert_eq!(unsafe { libc::munmap(m, len) }, 0);
        }
        // A mapping larger than the bound is made as asked, even while parsing.
        let large = MAX_POPULATED_BYTES + 4096;
        let unpopulated = {
            let _parsing = Parsing::begin();
            map(large)
        };
        assert_eq!(resident_pages(unpopulated, 4 * 4096), vec![0; 4], "past the bound nothing is faulted in");
        // Safety: the mapping made just above.
        assert_eq!(unsafe { libc::munmap(unpopulated, large) }, 0);
        // A failure is reported as mmap reports it.
        // Safety: a zero-length mapping is refused by the kernel, with EINVAL.
        let failed =
            unsafe { mmap64(std::ptr::null_mut(), 0, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        assert_eq!(failed, libc::MAP_FAILED);
        assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EINVAL));
    }
}
