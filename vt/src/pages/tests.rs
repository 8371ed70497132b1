//! Unit tests of the process's page functions: zeroing in place and populating only for what libghostty
//! mapped, inside libghostty; the kernel's behaviour for everything else; the record through unmapping,
//! moving and mapping over.

use std::io::Write;
use std::os::fd::AsRawFd;

use super::*;

const PAGE: usize = 4096;
const READ_WRITE: c_int = libc::PROT_READ | libc::PROT_WRITE;
const PRIVATE_ANONYMOUS: c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;

/// Which pages of `[map, map + len)` are resident, one 0 or 1 each.
fn resident_pages(map: *mut c_void, len: usize) -> Vec<u8> {
    let mut resident = vec![0u8; len.div_ceil(PAGE)];
    // Safety: one byte per page of the mapping.
    assert_eq!(unsafe { libc::mincore(map, len, resident.as_mut_ptr()) }, 0);
    resident.iter().map(|r| r & 1).collect()
}

/// A fresh mapping through this module's `mmap64`, under whatever mark the thread has.
fn map_with(len: usize, flags: c_int, fd: c_int) -> *mut c_void {
    // Safety: a fresh mapping where the kernel chooses; the callers unmap it.
    let map = unsafe { mmap64(std::ptr::null_mut(), len, READ_WRITE, flags, fd, 0) };
    assert_ne!(map, libc::MAP_FAILED);
    map
}

fn anonymous(len: usize) -> *mut c_void {
    map_with(len, PRIVATE_ANONYMOUS, -1)
}

/// The bytes of `[map, map + len)`.
fn bytes<'a>(map: *mut c_void, len: usize) -> &'a [u8] {
    // Safety: the callers' mappings are readable for `len` bytes and outlive the slice's use.
    unsafe { std::slice::from_raw_parts(map.cast::<u8>(), len) }
}

fn fill(map: *mut c_void, byte: u8, len: usize) {
    // Safety: the callers' mappings are writable for `len` bytes.
    unsafe { map.cast::<u8>().write_bytes(byte, len) };
}

fn discard(map: *mut c_void, len: usize) {
    // Safety: the callers own the mapping and may discard it.
    assert_eq!(unsafe { madvise(map, len, libc::MADV_DONTNEED) }, 0);
}

/// No mark, then each mark, each made when called (guards made together would be dropped out of order).
fn marks() -> [fn() -> Option<Inside>; 3] {
    [|| None, || Some(Inside::call()), || Some(Inside::parsing())]
}

fn unmap(map: *mut c_void, len: usize) {
    // Safety: the callers' own mapping, unmapped once.
    assert_eq!(unsafe { munmap(map, len) }, 0);
}

#[test]
fn the_process_page_functions_are_these() {
    for (name, ours) in [
        (c"madvise", madvise as *const c_void),
        (c"mmap64", mmap64 as *const c_void),
        (c"munmap", munmap as *const c_void),
        (c"mremap", mremap as *const c_void),
    ] {
        // Safety: a null handle is glibc's RTLD_DEFAULT, the global lookup libghostty's imports bind through.
        let found = unsafe { libc::dlsym(std::ptr::null_mut(), name.as_ptr()) };
        assert_eq!(found.cast_const(), ours, "{}", name.to_string_lossy());
    }
}

#[test]
fn discarded_pages_read_as_zero_and_untouched_ones_stay_out() {
    let len = 8 * PAGE;
    let inside = Inside::call();
    let map = anonymous(len);
    // Touch pages 0 and 2 only.
    fill(map, 7, PAGE);
    // Safety: the third page of the mapping.
    fill(unsafe { map.cast::<u8>().add(2 * PAGE).cast() }, 9, PAGE);
    let before = zeroed_in_place();
    discard(map, len);
    assert!(zeroed_in_place() > before, "zeroed in place");
    assert_eq!(resident_pages(map, len), [1, 0, 1, 0, 0, 0, 0, 0], "nothing was faulted in or dropped");
    assert!(bytes(map, len).iter().all(|&b| b == 0), "every discarded byte reads as zero");
    // Other advice reaches the kernel.
    // Safety: as above.
    assert_eq!(unsafe { madvise(map, len, libc::MADV_WILLNEED) }, 0);
    // Outside libghostty the same range is the kernel's to discard: the pages are dropped, not zeroed.
    drop(inside);
    fill(map, 7, len);
    discard(map, len);
    assert_eq!(resident_pages(map, len), [0; 8], "the kernel dropped them");
    assert!(bytes(map, len).iter().all(|&b| b == 0));
    unmap(map, len);
}

#[test]
fn a_private_mapping_made_outside_libghostty_is_discarded_by_the_kernel() {
    let len = 8 * PAGE;
    let map = anonymous(len);
    for make in marks() {
        let mark = make();
        fill(map, 3, len);
        assert_eq!(resident_pages(map, len), [1; 8]);
        discard(map, len);
        assert_eq!(resident_pages(map, len), [0; 8], "the kernel dropped the pages ({mark:?})");
        assert!(bytes(map, len).iter().all(|&b| b == 0), "and they read as zero");
    }
    unmap(map, len);
}

/// A temporary file of `len` bytes of `byte`, open for reading and writing.
fn file_of(byte: u8, len: usize) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temporary file");
    file.write_all(&vec![byte; len]).expect("written");
    file.flush().expect("flushed");
    file
}

#[test]
fn a_shared_file_mapping_keeps_its_bytes_when_discarded() {
    let len = 4 * PAGE;
    let file = file_of(0x5A, len);
    let fd = file.as_file().as_raw_fd();
    // Made outside libghostty, and made inside a parse (shared mappings are never recorded).
    let outside = map_with(len, libc::MAP_SHARED, fd);
    let inside = {
        let _parsing = Inside::parsing();
        map_with(len, libc::MAP_SHARED, fd)
    };
    for map in [outside, inside] {
        for make in marks() {
            let mark = make();
            assert!(bytes(map, len).iter().all(|&b| b == 0x5A), "{mark:?}");
            // Dirty the first page: zeros written over it would reach the file.
            fill(map, 0x5A, PAGE);
            discard(map, len);
            // Through the symbol too, as any library in the process would call it.
            // Safety: the test's own mapping.
            assert_eq!(unsafe { libc::madvise(map, len, libc::MADV_DONTNEED) }, 0);
            assert!(bytes(map, len).iter().all(|&b| b == 0x5A), "the mapping still reads the file ({mark:?})");
            let on_disk = std::fs::read(file.path()).expect("read back");
            assert!(on_disk.iter().all(|&b| b == 0x5A), "the file is intact ({mark:?})");
        }
    }
    unmap(outside, len);
    unmap(inside, len);
}

#[test]
fn a_shared_anonymous_mapping_keeps_its_bytes_when_discarded() {
    let len = 4 * PAGE;
    let _parsing = Inside::parsing();
    let map = map_with(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1);
    fill(map, 0x33, len);
    discard(map, len);
    assert!(bytes(map, len).iter().all(|&b| b == 0x33), "shared memory keeps its contents");
    unmap(map, len);
}

#[test]
fn only_private_anonymous_writable_mappings_are_page_like() {
    let len = 4 * PAGE;
    assert!(page_like(len, READ_WRITE, PRIVATE_ANONYMOUS));
    assert!(page_like(MAX_POPULATED_BYTES, libc::PROT_WRITE, PRIVATE_ANONYMOUS | libc::MAP_POPULATE));
    for (prot, flags) in [
        (READ_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS),
        // Has the MAP_PRIVATE bit set: only the whole type field tells them apart.
        (READ_WRITE, libc::MAP_SHARED_VALIDATE | libc::MAP_ANONYMOUS),
        (READ_WRITE, libc::MAP_PRIVATE),
        (libc::PROT_READ, PRIVATE_ANONYMOUS),
        (READ_WRITE, PRIVATE_ANONYMOUS | libc::MAP_NORESERVE),
        (READ_WRITE, PRIVATE_ANONYMOUS | libc::MAP_STACK),
        (READ_WRITE, PRIVATE_ANONYMOUS | libc::MAP_GROWSDOWN),
    ] {
        assert!(!page_like(len, prot, flags), "{prot:#x} {flags:#x}");
    }
    assert!(!page_like(MAX_POPULATED_BYTES + PAGE, READ_WRITE, PRIVATE_ANONYMOUS));
}

#[test]
fn mappings_made_while_parsing_are_populated_and_others_are_not() {
    let len = 16 * PAGE;
    let plain = anonymous(len);
    assert_eq!(resident_pages(plain, len), vec![0; 16], "outside libghostty nothing is faulted in");
    let call = {
        let _call = Inside::call();
        anonymous(len)
    };
    assert_eq!(resident_pages(call, len), vec![0; 16], "nor inside a call that is no parse");
    let before = populated_mappings();
    let populated = {
        let _parsing = Inside::parsing();
        anonymous(len)
    };
    assert_eq!(resident_pages(populated, len), vec![1; 16], "inside a parse every page is there");
    assert!(populated_mappings() > before, "counted (other tests may parse meanwhile, so only as growing)");
    let after = anonymous(len);
    assert_eq!(resident_pages(after, len), vec![0; 16], "the mark ends with the parse");
    // The populated pages read as zero, as fresh ones do.
    assert!(bytes(populated, len).iter().all(|&b| b == 0));
    for m in [plain, call, populated, after] {
        unmap(m, len);
    }
    // A mapping larger than the bound is made as asked, even while parsing.
    let large = MAX_POPULATED_BYTES + PAGE;
    let unpopulated = {
        let _parsing = Inside::parsing();
        anonymous(large)
    };
    assert_eq!(resident_pages(unpopulated, 4 * PAGE), vec![0; 4], "past the bound nothing is faulted in");
    assert!(!RECORD.holds(unpopulated as usize, PAGE), "nor recorded");
    unmap(unpopulated, large);
    // A failure is reported as mmap reports it.
    // Safety: a zero-length mapping is refused by the kernel, with EINVAL.
    let failed = unsafe { mmap64(std::ptr::null_mut(), 0, libc::PROT_READ, PRIVATE_ANONYMOUS, -1, 0) };
    assert_eq!(failed, libc::MAP_FAILED);
    assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn only_private_anonymous_writable_mappings_made_inside_libghostty_are_recorded() {
    let len = 4 * PAGE;
    let file = file_of(1, len);
    let fd = file.as_file().as_raw_fd();
    let outside = anonymous(len);
    let _call = Inside::call();
    let recorded = anonymous(len);
    let private_file = map_with(len, libc::MAP_PRIVATE, fd);
    let shared = map_with(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1);
    let no_reserve = map_with(len, PRIVATE_ANONYMOUS | libc::MAP_NORESERVE, -1);
    // Safety: a fresh read-only mapping where the kernel chooses.
    let read_only = unsafe { mmap64(std::ptr::null_mut(), len, libc::PROT_READ, PRIVATE_ANONYMOUS, -1, 0) };
    assert_ne!(read_only, libc::MAP_FAILED);
    assert!(RECORD.holds(recorded as usize, len));
    for map in [outside, private_file, shared, no_reserve, read_only] {
        assert!(!RECORD.holds(map as usize, PAGE), "{map:?}");
    }
    for map in [outside, recorded, private_file, shared, no_reserve, read_only] {
        unmap(map, len);
    }
    assert!(!RECORD.holds(recorded as usize, PAGE), "unmapped, forgotten");
}

#[test]
fn the_record_follows_mremap_munmap_and_fixed_mappings() {
    let len = 16 * PAGE;
    let map = {
        let _call = Inside::call();
        anonymous(len)
    };
    assert!(RECORD.holds(map as usize, len));
    // Grown (and maybe moved): recorded at its new place and length, whoever calls.
    // Safety: the test's own mapping, which may move.
    let moved = unsafe { mremap(map, len, 4 * len, libc::MREMAP_MAYMOVE, std::ptr::null_mut()) };
    assert_ne!(moved, libc::MAP_FAILED);
    assert!(RECORD.holds(moved as usize, 4 * len));
    assert!(moved == map || !RECORD.holds(map as usize, PAGE), "the old place is forgotten");
    // Shrunk in place.
    // Safety: as above.
    assert_eq!(unsafe { mremap(moved, 4 * len, 2 * len, 0, std::ptr::null_mut()) }, moved);
    assert!(RECORD.holds(moved as usize, 2 * len) && !RECORD.holds(moved as usize, 3 * len));
    // Moved to a fixed place over another recorded mapping, which is forgotten.
    let target = {
        let _call = Inside::call();
        anonymous(2 * len)
    };
    assert!(RECORD.holds(target as usize, 2 * len));
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
    // Safety: the test's own mappings; the target is replaced.
    let fixed = unsafe { mremap(moved, 2 * len, 2 * len, flags, target) };
    assert_eq!(fixed, target);
    assert!(RECORD.holds(target as usize, 2 * len), "now the moved mapping");
    // A file mapped over part of it: the record goes, and the file is not zeroed when discarded.
    let file = file_of(0x77, PAGE);
    // Safety: replaces the first page of the test's own mapping.
    let over =
        unsafe { mmap64(target, PAGE, READ_WRITE, libc::MAP_SHARED | libc::MAP_FIXED, file.as_file().as_raw_fd(), 0) };
    assert_eq!(over, target);
    assert!(!RECORD.holds(target as usize, PAGE), "forgotten");
    {
        let _parsing = Inside::parsing();
        discard(target, PAGE);
    }
    assert!(std::fs::read(file.path()).expect("read back").iter().all(|&b| b == 0x77));
    // Part unmapped: the rest is forgotten too (only whole mappings are kept).
    let rest = {
        let _call = Inside::call();
        anonymous(len)
    };
    unmap(rest.cast::<u8>().wrapping_add(len - PAGE).cast(), PAGE);
    assert!(!RECORD.holds(rest as usize, PAGE));
    unmap(rest, len - PAGE);
    unmap(target, 2 * len);
}
