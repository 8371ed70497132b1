//! The kept page mappings (`vt/src/pages/kept.rs`): a range libghostty unmaps while parsing comes back zeroed
//! for its next mapping of the same length, the slots are bounded, and everything kept goes back to the kernel
//! on release and when the thread ends. One test function on purpose: whether a range is still mapped is read
//! from the kernel, and a test running beside it could be given a just-unmapped range by its own `mmap`.

use std::ffi::c_void;

use opencode_pty_vt::{KEPT_MAPPINGS, MAX_KEPT_BYTES, Parsing, mmap64, munmap, release_kept_mappings, reused_mappings};

const PAGE: usize = 4096;

fn map(len: usize) -> *mut c_void {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // Safety: a fresh private anonymous mapping, through the crate's definition.
    let map = unsafe { mmap64(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
    assert_ne!(map, libc::MAP_FAILED);
    map
}

fn unmap(addr: *mut c_void, len: usize) {
    // Safety: a mapping this test made and uses no more.
    assert_eq!(unsafe { munmap(addr, len) }, 0);
}

/// Whether `[addr, addr + len)` is mapped at all (mincore fails with ENOMEM on an unmapped range).
fn mapped(addr: *mut c_void, len: usize) -> bool {
    let mut resident = vec![0u8; len / PAGE];
    // Safety: one byte per page of the range.
    unsafe { libc::mincore(addr, len, resident.as_mut_ptr()) == 0 }
}

#[test]
fn unmapped_ranges_are_kept_reused_zeroed_bounded_and_released() {
    let len = 8 * PAGE;
    {
        let _parsing = Parsing::begin();
        let first = map(len);
        // Safety: inside the mapping.
        unsafe { first.cast::<u8>().write_bytes(0xAB, len) };
        let before = reused_mappings();
        unmap(first, len);
        assert!(mapped(first, len), "kept, not unmapped");
        let other = map(2 * len);
        assert_ne!(other, first, "another length is a new mapping");
        let second = map(len);
        assert_eq!(second, first, "the same length reuses the kept range");
        assert_eq!(reused_mappings(), before + 1);
        // Safety: `len` bytes of the mapping.
        let bytes = unsafe { std::slice::from_raw_parts(second.cast::<u8>(), len) };
        assert!(bytes.iter().all(|&b| b == 0), "zeroed, as a fresh mapping is");
        unmap(second, len);
        unmap(other, 2 * len);
        assert!(mapped(second, len) && mapped(other, 2 * len), "both kept");
        release_kept_mappings();
        assert!(!mapped(second, len) && !mapped(other, 2 * len), "released to the kernel");

        // One past the slots, and one past the size, are unmapped at once.
        let maps: Vec<_> = (0..=KEPT_MAPPINGS).map(|_| map(len)).collect();
        for &m in &maps {
            unmap(m, len);
        }
        assert_eq!(maps.iter().filter(|&&m| mapped(m, len)).count(), KEPT_MAPPINGS);
        let large = map(MAX_KEPT_BYTES + PAGE);
        unmap(large, MAX_KEPT_BYTES + PAGE);
        assert!(!mapped(large, PAGE), "past the size bound, unmapped");
        release_kept_mappings();
        assert!(maps.iter().all(|&m| !mapped(m, len)));
    }
    // Outside a parse nothing is kept.
    let outside = map(len);
    unmap(outside, len);
    assert!(!mapped(outside, len), "outside a parse, unmapped");

    // A thread that ends gives back what it kept.
    let kept = std::thread::spawn(move || {
        let _parsing = Parsing::begin();
        let m = map(len);
        unmap(m, len);
        assert!(mapped(m, len));
        m as usize
    })
    .join()
    .expect("the thread ran");
    assert!(!mapped(kept as *mut c_void, len), "unmapped when the thread ended");
}
