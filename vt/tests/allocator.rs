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

#[test]
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
