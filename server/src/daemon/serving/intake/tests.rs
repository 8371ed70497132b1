//! The frame intake on socket pairs: what a frame's buffer takes from its budget as bytes arrive, a spent
//! budget refusing (after its wait) and giving the room back, and what the budgets must not cut.

use std::io::Write;
use std::os::unix::net::UnixStream;

use super::*;

/// A frame header declaring `len` payload bytes.
fn header(len: usize) -> [u8; FRAME_HEADER_BYTES] {
    u32::try_from(len).expect("fits").to_be_bytes()
}

#[test]
fn a_small_frame_takes_nothing_from_a_spent_budget() {
    let budget = Budget::new(0);
    let mut frame = header(5).to_vec();
    frame.extend_from_slice(b"{\"a\"}");
    let payload = read_payload_waiting(&mut &frame[..], &budget, Duration::ZERO).expect("read");
    assert_eq!(payload.bytes(), b"{\"a\"}");
    assert_eq!(budget.held(), 0);
}

#[test]
fn the_largest_frame_is_read_whole_and_gives_its_room_back() {
    let budget = Budget::new(MAX_AUTHENTICATED_PARTIAL_BYTES);
    let mut frame = header(MAX_FRAME_BYTES).to_vec();
    frame.resize(FRAME_HEADER_BYTES + MAX_FRAME_BYTES, b'x');
    let payload = read_payload_waiting(&mut &frame[..], &budget, Duration::ZERO).expect("read");
    assert_eq!(payload.bytes().len(), MAX_FRAME_BYTES);
    assert_eq!(budget.held(), MAX_FRAME_BYTES - UNBUDGETED_FRAME_BYTES);
    drop(payload);
    assert_eq!(budget.held(), 0);
}

#[test]
fn a_partial_frame_holds_what_arrived_not_what_it_declared() {
    let budget = Budget::new(MAX_UNAUTHENTICATED_BYTES);
    let (mut client, server) = UnixStream::pair().expect("pair");
    let sent = 1024 * 1024;
    let reader = std::thread::scope(|scope| {
        let reading =
            scope.spawn(|| read_payload_waiting(&mut &server, &budget, Duration::ZERO).map(|p| p.bytes.len()));
        client.write_all(&header(MAX_FRAME_BYTES)).expect("header");
        client.write_all(&vec![b' '; sent]).expect("part of the body");
        // Wait (bounded by the socket, which the reader drains) until the reader took all of it in.
        let held = loop {
            let held = budget.held();
            if held >= sent - UNBUDGETED_FRAME_BYTES || reading.is_finished() {
                break held;
            }
            std::thread::yield_now();
        };
        assert!(held <= 2 * sent, "{held} bytes held for {sent} sent");
        client.shutdown(std::net::Shutdown::Write).expect("shutdown");
        reading.join().expect("reader")
    });
    assert!(matches!(reader, Err(IntakeError::Frame(FrameError::EofInPayload { got, .. })) if got == sent));
    assert_eq!(budget.held(), 0, "the room is given back");
}

#[test]
fn a_frame_that_gets_no_room_is_read_to_its_end_and_refused() {
    let budget = Budget::new(MAX_FRAME_BYTES);
    assert!(budget.take(MAX_FRAME_BYTES, Instant::now()));
    let len = 4 * UNBUDGETED_FRAME_BYTES;
    let mut frame = header(len).to_vec();
    frame.resize(FRAME_HEADER_BYTES + len, b' ');
    // A second frame behind it is still whole: the refused one was read to its end.
    frame.extend_from_slice(&header(2));
    frame.extend_from_slice(b"{}");
    let mut reader = &frame[..];
    let refused = read_payload_waiting(&mut reader, &budget, Duration::from_millis(1));
    assert!(matches!(refused, Err(IntakeError::ShortOfRoom)), "{refused:?}");
    budget.give_back(MAX_FRAME_BYTES);
    let next = read_payload_waiting(&mut reader, &budget, Duration::ZERO).expect("the next frame");
    assert_eq!(next.bytes(), b"{}");
}

#[test]
fn a_frame_waits_for_room_given_back_within_its_wait() {
    let budget = Budget::new(MAX_FRAME_BYTES);
    assert!(budget.take(MAX_FRAME_BYTES, Instant::now()));
    let len = 4 * UNBUDGETED_FRAME_BYTES;
    let mut frame = header(len).to_vec();
    frame.resize(FRAME_HEADER_BYTES + len, b' ');
    std::thread::scope(|scope| {
        let reading = scope.spawn(|| read_payload_waiting(&mut &frame[..], &budget, Duration::from_secs(60)).is_ok());
        // The reader waits on the budget (nothing else can block it), until the room comes back.
        budget.give_back(MAX_FRAME_BYTES);
        assert!(reading.join().expect("reader"), "read once the room came back");
    });
}

#[test]
fn headers_over_the_limit_and_cut_streams_are_framing_errors() {
    let budget = Budget::new(0);
    let over = header(MAX_FRAME_BYTES + 1);
    assert!(matches!(read_payload(&mut &over[..], &budget), Err(IntakeError::Frame(FrameError::FrameTooLarge { .. }))));
    assert!(matches!(
        read_payload(&mut &over[..2], &budget),
        Err(IntakeError::Frame(FrameError::EofInHeader { got: 2 }))
    ));
    assert!(matches!(read_payload(&mut &[][..], &budget), Err(IntakeError::Ended)));
}
