//! `release_stack_below_caller`: the pages a deep call left resident on a thread's stack go back to the kernel,
//! the caller's frame is untouched, and the thread goes on using its stack as before.

/// Resident KiB of the mapping that holds the calling thread's stack (from `/proc/self/smaps`).
#[inline(never)]
fn stack_rss_kib() -> u64 {
    let marker = 0u8;
    let here = std::hint::black_box(std::ptr::addr_of!(marker)) as usize;
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16))
        {
            inside = (start..end).contains(&here);
        } else if inside && let Some(rss) = line.strip_prefix("Rss:") {
            return rss.trim().trim_end_matches("kB").trim().parse().expect("KiB");
        }
    }
    panic!("no mapping holds the stack");
}

/// Fills `KIB` KiB of stack below the caller with bytes derived from `seed` and sums them.
#[inline(never)]
fn deep<const KIB: usize>(seed: u8) -> u64 {
    let mut buffer = [0u8; 1024 * 256];
    let buffer = &mut buffer[..KIB * 1024];
    for (n, byte) in buffer.iter_mut().enumerate() {
        *byte = seed.wrapping_add(n as u8);
    }
    std::hint::black_box(&mut *buffer).iter().map(|&b| u64::from(b)).sum()
}

#[test]
fn a_deep_call_s_stack_pages_are_given_back_and_the_thread_goes_on() {
    let thread = std::thread::Builder::new().stack_size(2 << 20).spawn(|| {
        let kept: Vec<u8> = (0..=255).collect();
        let frame = std::hint::black_box([7u64; 64]);
        let before = stack_rss_kib();
        let sum = deep::<256>(3);
        let touched = stack_rss_kib();
        assert!(touched >= before + 200, "the deep call touched its stack: {before} -> {touched} KiB");
        let released = opencode_pty_vt::release_stack_below_caller();
        let after = stack_rss_kib();
        assert!(released >= 256 * 1024, "released {released} bytes");
        assert!(
            after <= before + (opencode_pty_vt::STACK_RELEASE_MARGIN_BYTES / 1024) as u64 + 8,
            "the pages went back: {before} -> {touched} -> {after} KiB"
        );
        // The caller's frame and heap are as they were, and the stack works as before.
        assert_eq!(std::hint::black_box(frame), [7u64; 64]);
        assert_eq!(kept, (0..=255).collect::<Vec<u8>>());
        assert_eq!(deep::<256>(3), sum);
        assert!(stack_rss_kib() >= before + 200, "touched again, the pages come back");
    });
    thread.expect("a thread").join().expect("the thread's checks");
}

#[test]
fn nothing_is_released_when_the_caller_is_near_the_bottom_of_its_stack() {
    // A thread whose stack holds no more than the margin below the caller gives nothing back, and runs on.
    let thread = std::thread::Builder::new().stack_size(64 * 1024).spawn(|| {
        #[inline(never)]
        fn near_the_bottom(depth: usize) -> usize {
            let pad = std::hint::black_box([depth as u8; 2048]);
            let left = opencode_pty_vt::release_stack_below_caller();
            if left == 0 || depth > 64 { left + usize::from(pad[0]) } else { near_the_bottom(depth + 1) }
        }
        near_the_bottom(0)
    });
    let result = thread.expect("a thread").join().expect("no fault");
    assert!(result < 64 * 1024, "{result}");
}

#[test]
fn released_from_every_offset_within_a_page_the_caller_returns_and_runs_on() {
    // Where the caller's frame falls within a page decides how much room its callees keep below it: calling
    // the release from frames 48 bytes apart over two pages puts every callee (the system call's too) at the
    // edge of the range once. A callee whose frame the range took would return through zeroed memory.
    #[inline(never)]
    fn at_depth(depth: usize) -> usize {
        let pad = std::hint::black_box([depth as u8; 48]);
        let inner = if depth == 0 { 0 } else { at_depth(depth - 1) };
        let released = opencode_pty_vt::release_stack_below_caller();
        assert!(released > 0, "at depth {depth}");
        inner + usize::from(std::hint::black_box(pad)[47] == depth as u8)
    }
    let thread = std::thread::Builder::new().stack_size(2 << 20).spawn(|| at_depth(170));
    assert_eq!(thread.expect("a thread").join().expect("no fault"), 171);
}
