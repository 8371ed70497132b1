//! A subscription's delivery over a real socket pair, with the socket as its sink: output written by the actor
//! itself while the connection has nothing left to write, never ahead of what it still has to write, and a
//! frame the socket takes only in part finished by the connection, so the byte stream is every frame, whole and
//! in order. Frames are gathered until the actor writes them, its bound fills, or another event is due.

use std::io::Read;
use std::time::Duration;

use crossbeam_channel::unbounded;

use super::*;
use crate::process::delivery::{self, Delivery, Recipient};
use crate::process::{Event, Output};
use crate::terminal::DIRECT_WRITE_BATCH_BYTES;

/// A subscriber's delivery whose connection offered its socket, and the peer end of that socket.
fn with_socket() -> (Delivery<Event>, Recipient<Event>, Arc<UnixStream>, UnixStream) {
    let (delivery, recipient) = delivery::channel(1024, DIRECT_WRITE_BATCH_BYTES);
    let (ours, peer) = UnixStream::pair().expect("a socket pair");
    let ours = Arc::new(ours);
    recipient.offer(Arc::new(SocketSink(ours.clone())));
    (delivery, recipient, ours, peer)
}

fn output(start: u64, byte: u8, len: usize) -> Event {
    Event::Output(Output::new(start, &vec![byte; len]).expect("an output frame"))
}

fn title() -> Event {
    Event::message(Response::TitleChanged { title: "t".into() })
}

/// What the peer has received so far, without waiting.
fn received(peer: &mut UnixStream) -> Vec<u8> {
    peer.set_nonblocking(true).unwrap();
    let mut got = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    while let Ok(n) = peer.read(&mut buffer) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buffer[..n]);
    }
    peer.set_nonblocking(false).unwrap();
    got
}

#[test]
fn output_goes_straight_to_the_socket_when_nothing_is_in_flight() {
    let (mut delivery, recipient, _ours, mut peer) = with_socket();
    let event = output(0, b'a', 100);
    delivery.push(event.clone());
    assert_eq!(delivery.flush(), delivery::Pushed::Delivered);
    assert!(recipient.receiver().is_empty(), "the connection's thread had nothing to do");
    let mut got = vec![0u8; event.frame().len()];
    peer.read_exact(&mut got).expect("the frame");
    assert_eq!(got, event.frame());
}

#[test]
fn output_waits_behind_what_the_connection_has_not_yet_written() {
    let (mut delivery, recipient, _ours, mut peer) = with_socket();
    // A JSON event always goes through the connection; until it says it wrote it, output follows it there.
    delivery.push(title());
    let later = output(0, b'b', 10);
    delivery.push(later.clone());
    delivery.flush();
    assert_eq!(recipient.receiver().len(), 2, "both wait for the connection, in order");
    let first = recipient.receiver().recv().unwrap();
    assert!(matches!(first, Event::Message(_)));
    recipient.written(1);
    assert_eq!(recipient.receiver().recv().unwrap(), later);
    recipient.written(1);
    assert!(received(&mut peer).is_empty(), "nothing was written by the actor meanwhile");
    // Now nothing is in flight: the next output is written directly again.
    let direct = output(10, b'c', 10);
    delivery.push(direct.clone());
    assert!(delivery.has_gathered());
    delivery.flush();
    assert!(recipient.receiver().is_empty());
    assert_eq!(received(&mut peer), direct.frame());
}

#[test]
fn a_frame_the_socket_takes_in_part_is_finished_by_the_connection_in_order() {
    let (mut delivery, recipient, ours, mut peer) = with_socket();
    // The peer does not read yet: the socket buffer fills, one frame goes in part, the rest queue.
    let mut frames = Vec::new();
    let mut offset = 0;
    for n in 0..200u32 {
        let event = output(offset, b'a' + (n % 26) as u8, 8192);
        offset += 8192;
        frames.extend_from_slice(event.frame());
        delivery.push(event);
    }
    delivery.flush();
    assert!(!recipient.receiver().is_empty(), "the socket did not take everything at once");
    // The connection's thread writes what it was handed, as `serve_subscription` does; the peer reads it all.
    let (done, all) = unbounded();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; 200 * (8192 + 21)];
        let mut filled = 0;
        while filled < got.len() {
            match peer.read(&mut got[filled..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => filled += n,
            }
        }
        got.truncate(filled);
        let _ = done.send(got);
    });
    let mut writer: &UnixStream = &ours;
    while let Ok(event) = recipient.receiver().recv_timeout(Duration::from_millis(100)) {
        let batch = recipient.batch(event, WRITE_BATCH_BYTES);
        for slice in batch.slices() {
            std::io::Write::write_all(&mut writer, &slice).unwrap();
        }
        recipient.written(batch.len());
    }
    assert_eq!(frames.len(), 200 * (8192 + 21), "frame size as counted by the reader");
    let got = all.recv_timeout(Duration::from_secs(30)).expect("the peer read everything");
    assert_eq!(got.len(), frames.len());
    assert!(got == frames, "every frame, whole and in order");
    reader.join().unwrap();
}

#[test]
fn output_is_gathered_until_the_actor_writes_it_then_goes_in_one_piece_in_order() {
    let (mut delivery, recipient, _ours, mut peer) = with_socket();
    let events = [output(0, b'a', 10), output(10, b'b', 20), output(30, b'c', 30)];
    for event in &events {
        delivery.push(event.clone());
    }
    assert!(received(&mut peer).is_empty(), "nothing is written while the actor gathers");
    assert_eq!(delivery.flush(), delivery::Pushed::Delivered);
    assert!(!delivery.has_gathered());
    let expected: Vec<u8> = events.iter().flat_map(|e| e.frame().to_vec()).collect();
    assert_eq!(received(&mut peer), expected);
    assert!(recipient.receiver().is_empty(), "all of it went straight to the socket");
}

#[test]
fn another_event_for_the_subscriber_writes_the_gathered_output_before_it() {
    let (mut delivery, recipient, _ours, mut peer) = with_socket();
    let first = output(0, b'a', 10);
    let second = output(10, b'b', 10);
    delivery.push(first.clone());
    delivery.push(second.clone());
    delivery.push(title());
    assert!(!delivery.has_gathered());
    assert_eq!(received(&mut peer), [first.frame(), second.frame()].concat(), "the output first");
    assert!(matches!(recipient.receiver().try_recv(), Ok(Event::Message(_))), "then the event, in the channel");
}

#[test]
fn gathering_stops_at_its_bound_and_writes_at_once() {
    let (mut delivery, _recipient, _ours, mut peer) = with_socket();
    let mut expected = Vec::new();
    let mut offset = 0;
    while expected.len() < DIRECT_WRITE_BATCH_BYTES {
        let event = output(offset, b'x', 8192);
        offset += 8192;
        expected.extend_from_slice(event.frame());
        delivery.push(event);
    }
    assert!(!delivery.has_gathered(), "the bound was reached, so everything gathered was written");
    assert_eq!(received(&mut peer), expected);
    // One frame short of the bound stays gathered.
    delivery.push(output(offset, b'y', 8192));
    assert!(delivery.has_gathered());
}
