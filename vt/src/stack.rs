//! The calling thread's stack pages below its current frame, given back to the kernel (issue 31). A terminal's
//! actor touches its stack deepest while libghostty parses output (its parser keeps a buffer of 16 KiB on the
//! stack), and those pages stay resident for the thread's life although nothing uses them while the terminal is
//! quiet: about 20 KiB of each idle terminal's memory. [`release_stack_below_caller`], called once a quiet
//! terminal's memory has been compressed, hands them back; the next deep call finds fresh zeroed pages, a
//! page fault each. A caller that is about to wait calls it last, so that only what the wait itself touches
//! comes back. It lives here because this crate owns how the process's pages come and go (`pages`,
//! `allocator`), and because the stack it releases is libghostty's parser's.

/// Room kept below this function's frame while it releases: the return address of the system call it makes
/// (glibc's `syscall` uses no stack of its own), with room to spare.
pub const STACK_RELEASE_MARGIN_BYTES: usize = 256;

/// Where the stack pointer may be unknown (targets other than x86-64 and AArch64), the room kept below a local
/// of this function instead: the rest of its frame as well (a few hundred bytes in a debug build).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const FALLBACK_MARGIN_BYTES: usize = 4096;

/// Gives back the calling thread's stack pages from the lowest one up to [`STACK_RELEASE_MARGIN_BYTES`] below
/// this function's own frame (rounded down to a page); how many bytes that range spans (0 when it is empty or
/// the stack cannot be found). Nothing live is there: every frame of this thread that is still in use lies
/// above it (the caller's, and this function's), and no other thread may point into a frame that has returned.
/// The pages read as zeros when next touched. A caller that is about to wait gives back everything below the
/// wait's own frames, less what the wait itself touches.
#[inline(never)]
pub fn release_stack_below_caller() -> usize {
    let Some(lowest) = stack_lowest_address() else { return 0 };
    // Read after `stack_lowest_address` returned: nothing but the `madvise` call goes below it from here on.
    let Some(bottom) = frame_bottom() else { return 0 };
    let page = page_size();
    let top = bottom & !(page - 1);
    if top <= lowest {
        return 0;
    }
    let len = top - lowest;
    // The system call itself, through `syscall` (which uses no stack beyond its return address), not the
    // `madvise` symbol: this crate interposes that one (`pages`) with a wrapper whose frame would lie below.
    // Safety: [lowest, top) is this thread's own stack (from its attributes), below this function's frame by
    // at least the margin, so no frame in use lies in it: this function's own frame and the system call's
    // return address are above `top`, and the frames that used the range have returned. Discarding private
    // anonymous pages only makes them read as zeros when touched again, which a new frame never relies on.
    let done = unsafe { libc::syscall(libc::SYS_madvise, lowest as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    if done == 0 { len } else { 0 }
}

/// The lowest address this function's frame may use, less the margin: the stack pointer where it can be read,
/// else a local's address less a wider margin.
#[inline(always)]
fn frame_bottom() -> Option<usize> {
    let sp: usize;
    #[cfg(target_arch = "x86_64")]
    // Safety: reads the stack pointer into a register; touches no memory and no flags.
    unsafe {
        std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // Safety: reads the stack pointer into a register; touches no memory and no flags.
    unsafe {
        std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return sp.checked_sub(STACK_RELEASE_MARGIN_BYTES);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let marker = 0u8;
        let here = std::hint::black_box(std::ptr::addr_of!(marker)) as usize;
        here.checked_sub(FALLBACK_MARGIN_BYTES)
    }
}

/// The lowest usable address of the calling thread's stack (above its guard page), if the thread library
/// tells it.
fn stack_lowest_address() -> Option<usize> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // Safety: `pthread_getattr_np` initialises `attr` for the calling thread (checked by its result before any
    // read); it is destroyed below on every path after that.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) } != 0 {
        return None;
    }
    let mut addr: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // Safety: `attr` was initialised above; `pthread_attr_getstack` writes the two out-parameters, which are
    // valid locals, and `pthread_attr_destroy` frees what the initialisation allocated, once.
    let found = unsafe {
        let found = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        found
    };
    (found == 0 && !addr.is_null() && size > 0).then_some(addr as usize)
}

/// The system's page size (4 KiB when it cannot be asked).
fn page_size() -> usize {
    // Safety: `sysconf` only reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).ok().filter(|size| size.is_power_of_two()).unwrap_or(4096)
}
