//! The allocator setting (`return_freed_buffers`): with it, a large buffer freed leaves the process every time,
//! not only the first time (its own test binary: the setting and RSS are the whole process's).

/// This process's resident anonymous memory, in KiB.
fn anon_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let line = status.lines().find(|line| line.starts_with("RssAnon:")).expect("RssAnon");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("KiB")
}

/// A buffer the size of a replay read, every byte touched, then freed.
fn allocate_touch_and_free() {
    let buffer = vec![1u8; 6 << 20];
    std::hint::black_box(&buffer);
}

/// One test, so nothing else in this process allocates meanwhile: first the threshold, then the trim.
#[test]
fn freed_buffers_leave_the_process() {
    large_buffers_freed_leave_the_process_every_time();
    a_trim_gives_back_small_freed_buffers_once_per_interval();
}

/// With the threshold fixed, a large buffer freed leaves the process every time, not only the first time.
fn large_buffers_freed_leave_the_process_every_time() {
    assert!(opencode_pty_vt::return_freed_buffers(), "glibc takes the threshold");
    let before = anon_rss_kib();
    // Without the setting, the first free raises glibc's threshold to 6 MiB and the later buffers stay
    // resident in the heap once freed (checked: 6 MiB more after the loop).
    for round in 0..4 {
        allocate_touch_and_free();
        let after = anon_rss_kib();
        assert!(after < before + 2048, "round {round}: {before} KiB -> {after} KiB after the buffer was freed");
    }
}

/// `trim_free_memory` gives back the small buffers freed in a thread's heap, and does the work at most once
/// per `TRIM_INTERVAL` however often it is called.
fn a_trim_gives_back_small_freed_buffers_once_per_interval() {
    // 32 MiB in buffers under the mmap threshold, made on a thread of their own (its own arena), with one more
    // after them, so that the heap's end is in use and glibc's own trimming at `free` cannot give them back.
    let (buffers, keep) = std::thread::spawn(|| {
        let buffers: Vec<Vec<u8>> = (0..512).map(|_| vec![1u8; 64 << 10]).collect();
        (buffers, vec![1u8; 1024])
    })
    .join()
    .expect("the thread");
    drop(buffers);
    let before = anon_rss_kib();
    assert!(opencode_pty_vt::trim_free_memory(), "the first trim does the work");
    let after = anon_rss_kib();
    assert!(after + 16 * 1024 < before, "the trim gave back the freed buffers: {before} KiB -> {after} KiB");
    assert!(!opencode_pty_vt::trim_free_memory(), "a second trim within the interval does nothing");
    drop(keep);
}
