//! The fan-out's policy: an observer that outgrows its bound is dropped and its subscription ends after what
//! its channel holds; a controller is never dropped, and counts as behind, then stalled, as events are held for
//! it. (How each subscriber's delivery writes, gathers and holds is tested in `process/delivery/tests.rs`, and
//! with a socket in `daemon/serving/subscription/tests.rs`.)

use crossbeam_channel::{TryRecvError, bounded};
use opencode_pty_protocol::{Response, Role};

use super::*;
use crate::process::Output;

fn output(start: u64, len: usize) -> Event {
    Event::Output(Output::new(start, &vec![b'x'; len]).expect("an output frame"))
}

fn title() -> Event {
    Event::message(Response::TitleChanged { title: "t".into() })
}

/// A fan-out with one subscriber in `role`, whose connection reads nothing.
fn with(role: Role) -> (Fanout, ProcessSubscription) {
    let (commands, _unused) = bounded(8);
    let mut fanout = Fanout::default();
    let (_key, subscription) = fanout.add("s".into(), role, OptIns::NONE, commands);
    (fanout, subscription)
}

#[test]
fn an_observer_past_its_event_bound_is_dropped_and_its_subscription_ends_after_its_queue() {
    let (mut fanout, subscription) = with(Role::Observer);
    for _ in 0..OBSERVER_QUEUE_EVENTS + OBSERVER_BACKLOG_EVENTS {
        assert!(fanout.publish(&title(), None).is_empty(), "kept while within its bound");
    }
    assert!(fanout.iter().next().is_some_and(Subscriber::is_behind));
    let removed = fanout.publish(&title(), None);
    assert_eq!(removed.len(), 1, "one event more and it is too slow to keep");
    drop(removed);
    assert!(subscription.is_ended(), "its blocked write may give up");
    let queued = subscription.receiver().try_iter().count();
    assert_eq!(queued, OBSERVER_QUEUE_EVENTS, "what its channel held is still delivered");
    assert_eq!(subscription.receiver().try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn an_observer_past_its_byte_bound_is_dropped() {
    let (mut fanout, _subscription) = with(Role::Observer);
    let mut offset = 0;
    // No socket was offered: every output frame goes through the channel, then into the backlog.
    for _ in 0..OBSERVER_QUEUE_EVENTS {
        fanout.publish(&output(offset, 8), None);
        offset += 8;
    }
    let mut published = 0;
    loop {
        let removed = fanout.publish(&output(offset, 8192), None);
        offset += 8192;
        published += 8192;
        if !removed.is_empty() {
            break;
        }
        assert!(published <= OBSERVER_BACKLOG_BYTES, "kept past its byte bound");
    }
    assert!(published > OBSERVER_BACKLOG_BYTES, "dropped only past its bound");
}

#[test]
fn a_controller_is_never_dropped_and_is_behind_then_stalled() {
    let (mut fanout, subscription) = with(Role::Controller);
    for _ in 0..CONTROLLER_QUEUE_EVENTS {
        fanout.publish(&title(), Some("s"));
    }
    let controller = |fanout: &Fanout| (fanout.get("s").unwrap().is_behind(), fanout.get("s").unwrap().is_stalled());
    assert_eq!(controller(&fanout), (false, false), "its channel holds them");
    fanout.publish(&title(), Some("s"));
    assert_eq!(controller(&fanout), (true, false), "behind once anything is held");
    for _ in 1..CONTROLLER_BACKLOG_EVENTS {
        fanout.publish(&title(), Some("s"));
    }
    assert_eq!(controller(&fanout), (true, true), "stalled at its bound");
    for _ in 0..OBSERVER_BACKLOG_EVENTS {
        assert!(fanout.publish(&title(), Some("s")).is_empty(), "a controller is never dropped");
    }
    assert!(!subscription.is_ended());
}

#[test]
fn a_subscription_dropped_is_pruned_and_the_actor_is_told() {
    let (commands, told) = bounded(8);
    let mut fanout = Fanout::default();
    let (key, subscription) = fanout.add("s".into(), Role::Observer, OptIns::NONE, commands);
    assert!(fanout.prune_dropped().is_empty());
    drop(subscription);
    assert!(matches!(told.try_recv(), Ok(Command::Detach { key: detached }) if detached == key));
    let pruned = fanout.prune_dropped();
    assert_eq!(pruned.iter().map(|s| s.key).collect::<Vec<_>>(), [key]);
}

#[test]
fn held_events_are_listed_for_the_wait_and_sent_in_order() {
    let (mut fanout, subscription) = with(Role::Observer);
    for _ in 0..OBSERVER_QUEUE_EVENTS {
        fanout.publish(&title(), None);
    }
    let held = output(0, 10);
    fanout.publish(&held, None);
    let pending = fanout.pending();
    assert_eq!(pending.len(), 1);
    // The connection takes one; the actor's wait finds room and sends the held event.
    subscription.receiver().try_recv().expect("an event");
    let mut select = crossbeam_channel::Select::new();
    select.send(&pending[0].sender);
    let operation = select.select();
    assert!(fanout.send_held(operation, &pending[0]).is_none());
    assert!(fanout.pending().is_empty());
    assert_eq!(subscription.receiver().try_iter().last(), Some(held));
}
