//! The lifecycle every process goes through on its way to its final event, PTY and pipe alike: it runs until
//! both the child's end and the end of its output are known (in either order, each once), and then ends, once,
//! with the final answer it published. A terminal's actor and a pipe process's shared state both keep one
//! [`Ending`], each with its own notion of the child's end (`C`) and of what it publishes (`P`).

/// Where a process is on its way to its final event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending<C, P> {
    /// Running: what is known of its end so far.
    Running {
        /// How the child ended, once the wait thread has said.
        child: Option<C>,
        /// Whether the reader has reached the end of the output.
        output_ended: bool,
    },
    /// Both ends were known and the final answer was published.
    Ended {
        /// How the child ended.
        child: C,
        /// What was published.
        published: P,
    },
}

impl<C, P> Default for Ending<C, P> {
    fn default() -> Self {
        Ending::Running { child: None, output_ended: false }
    }
}

impl<C, P> Ending<C, P> {
    /// Records how the child ended; only the first report counts.
    pub(crate) fn child_ended(&mut self, end: C) {
        if let Ending::Running { child: child @ None, .. } = self {
            *child = Some(end);
        }
    }

    /// Records the end of the output.
    pub(crate) fn output_ended(&mut self) {
        if let Ending::Running { output_ended, .. } = self {
            *output_ended = true;
        }
    }

    /// How the child ended, once known.
    pub(crate) fn child(&self) -> Option<&C> {
        match self {
            Ending::Running { child, .. } => child.as_ref(),
            Ending::Ended { child, .. } => Some(child),
        }
    }

    /// Whether the end of the output is known.
    pub(crate) fn is_output_ended(&self) -> bool {
        match self {
            Ending::Running { output_ended, .. } => *output_ended,
            Ending::Ended { .. } => true,
        }
    }

    /// The final answer, once published.
    pub(crate) fn published(&self) -> Option<&P> {
        match self {
            Ending::Running { .. } => None,
            Ending::Ended { published, .. } => Some(published),
        }
    }

    /// How the child ended, when both ends are known and the process has not ended yet: it is time to
    /// [`Self::settle`].
    pub(crate) fn ready(&self) -> Option<&C> {
        match self {
            Ending::Running { child: Some(child), output_ended: true } => Some(child),
            _ => None,
        }
    }

    /// Ends the process when both ends are known and it has not ended yet: `publish` makes the final answer
    /// from how the child ended. Returns that answer when it was made now, and `None` otherwise.
    pub(crate) fn settle(&mut self, publish: impl FnOnce(&C) -> P) -> Option<&P> {
        self.ready()?;
        let Ending::Running { child: Some(child), .. } = std::mem::take(self) else { return None };
        let published = publish(&child);
        *self = Ending::Ended { child, published };
        self.published()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Test = Ending<u32, String>;

    #[test]
    fn it_ends_only_once_both_ends_are_known_in_either_order() {
        let mut child_first = Test::default();
        child_first.child_ended(7);
        assert_eq!(child_first.ready(), None);
        assert_eq!(child_first.settle(|c| format!("exited {c}")), None, "the output still flows");
        child_first.output_ended();
        assert_eq!(child_first.ready(), Some(&7));
        assert_eq!(child_first.settle(|c| format!("exited {c}")).map(String::as_str), Some("exited 7"));

        let mut output_first = Test::default();
        output_first.output_ended();
        assert_eq!(output_first.settle(|c| format!("exited {c}")), None, "the child still runs");
        output_first.child_ended(3);
        assert_eq!(output_first.settle(|c| format!("exited {c}")).map(String::as_str), Some("exited 3"));
    }

    #[test]
    fn it_publishes_once_and_keeps_the_first_child_end() {
        let mut ending = Test::default();
        ending.child_ended(1);
        ending.child_ended(2);
        ending.output_ended();
        assert!(ending.settle(|c| c.to_string()).is_some());
        assert_eq!(ending.settle(|_| unreachable!("published already")), None);
        ending.child_ended(9);
        assert_eq!((ending.child(), ending.published().map(String::as_str)), (Some(&1), Some("1")));
        assert!(ending.is_output_ended());
    }
}
