//! A terminal's titles: the one given at creation, the latest OSC 0/2 title and the user's rename, and which of
//! them is the effective title that clients see and that `TitleChanged` announces.

use opencode_pty_protocol::MAX_TITLE_CHARS;

/// The three titles of a PTY. The effective title is the user title, else the OSC title, else the creation
/// title; an empty OSC or user title counts as unset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Titles {
    /// The title given at creation, shown when neither of the others is set.
    initial: String,
    /// The latest title the program set with OSC 0/2, tracked even while a user title hides it.
    osc: Option<String>,
    /// The title set by `rename`.
    user: Option<String>,
}

impl Titles {
    /// Titles with only the creation title set.
    pub(crate) fn new(initial: String) -> Titles {
        Titles { initial, osc: None, user: None }
    }

    /// Titles as an upgrade's state left them.
    pub(crate) fn restored(initial: String, osc: Option<String>, user: Option<String>) -> Titles {
        Titles { initial, osc: non_empty(osc), user: non_empty(user) }
    }

    /// The latest OSC title, when one is set.
    pub(crate) fn osc(&self) -> Option<&str> {
        self.osc.as_deref()
    }

    /// Records the title the emulator reports after an OSC 0/2 change (`None` or empty: the program reset it).
    /// Returns the new effective title when it changed, `None` when there is nothing to publish.
    /// A title longer than `MAX_TITLE_CHARS` is cut to that many characters.
    pub(crate) fn set_osc(&mut self, title: Option<String>) -> Option<String> {
        let title = title.map(|mut title| {
            if let Some((end, _)) = title.char_indices().nth(MAX_TITLE_CHARS) {
                title.truncate(end);
            }
            title
        });
        let old = std::mem::replace(&mut self.osc, non_empty(title));
        self.changed_from(self.user.as_deref(), old.as_deref())
    }

    /// Sets the user title (`rename`); `None` or empty clears it, so the OSC or creation title shows again.
    /// Returns the new effective title when it changed, `None` when there is nothing to publish.
    pub(crate) fn set_user(&mut self, title: Option<String>) -> Option<String> {
        let old = std::mem::replace(&mut self.user, non_empty(title));
        self.changed_from(old.as_deref(), self.osc.as_deref())
    }

    /// The title clients see: the user title, else the OSC title, else the creation title.
    pub(crate) fn effective(&self) -> &str {
        pick(self.user.as_deref(), self.osc.as_deref(), &self.initial)
    }

    /// The user title, when one is set.
    pub(crate) fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The effective title if it differs from the one the previous `user` and `osc` values gave.
    fn changed_from(&self, user: Option<&str>, osc: Option<&str>) -> Option<String> {
        let before = pick(user, osc, &self.initial);
        let now = self.effective();
        (now != before).then(|| now.to_owned())
    }
}

/// The precedence rule, on borrowed values.
fn pick<'a>(user: Option<&'a str>, osc: Option<&'a str>, initial: &'a str) -> &'a str {
    user.or(osc).unwrap_or(initial)
}

/// An empty title is no title.
fn non_empty(title: Option<String>) -> Option<String> {
    title.filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_owned())
    }

    #[test]
    fn an_osc_title_replaces_the_initial_one() {
        let mut titles = Titles::new("shell".into());
        assert_eq!(titles.effective(), "shell");
        assert_eq!(titles.set_osc(some("vim")), some("vim"));
        assert_eq!(titles.effective(), "vim");
        assert_eq!(titles.user(), None);
    }

    #[test]
    fn a_user_title_hides_osc_changes() {
        let mut titles = Titles::new("shell".into());
        titles.set_osc(some("vim"));
        assert_eq!(titles.set_user(some("mine")), some("mine"));
        assert_eq!(titles.effective(), "mine");
        assert_eq!(titles.user(), Some("mine"));
        assert_eq!(titles.set_osc(some("less")), None, "hidden behind the user title: nothing to publish");
        assert_eq!(titles.effective(), "mine");
    }

    #[test]
    fn clearing_the_user_title_shows_the_latest_osc_title() {
        let mut titles = Titles::new("shell".into());
        titles.set_user(some("mine"));
        titles.set_osc(some("vim"));
        titles.set_osc(some("less"));
        assert_eq!(titles.set_user(None), some("less"));
        assert_eq!(titles.effective(), "less");
        assert_eq!(titles.user(), None);
    }

    #[test]
    fn an_empty_osc_title_falls_back_to_the_initial_one() {
        let mut titles = Titles::new("shell".into());
        titles.set_osc(some("vim"));
        assert_eq!(titles.set_osc(some("")), some("shell"));
        assert_eq!(titles.effective(), "shell");
        titles.set_osc(some("vim"));
        assert_eq!(titles.set_osc(None), some("shell"));
    }

    #[test]
    fn the_same_effective_title_is_not_published_again() {
        let mut titles = Titles::new("shell".into());
        assert_eq!(titles.set_osc(some("shell")), None, "same as the initial title");
        assert_eq!(titles.set_osc(some("vim")), some("vim"));
        assert_eq!(titles.set_osc(some("vim")), None);
        assert_eq!(titles.set_user(some("vim")), None, "the user title equals the OSC one");
        assert_eq!(titles.user(), Some("vim"));
        assert_eq!(titles.set_user(some("vim")), None);
        assert_eq!(titles.set_user(None), None, "the OSC title underneath is the same");
    }

    #[test]
    fn a_long_osc_title_is_cut_to_the_limit() {
        let mut titles = Titles::new("shell".into());
        let long: String = std::iter::repeat_n('é', MAX_TITLE_CHARS + 5).collect();
        let cut = titles.set_osc(Some(long)).expect("a change");
        assert_eq!(cut.chars().count(), MAX_TITLE_CHARS);
        assert!(cut.chars().all(|c| c == 'é'), "cut at a character boundary");
        let exact: String = std::iter::repeat_n('x', MAX_TITLE_CHARS).collect();
        assert_eq!(titles.set_osc(Some(exact.clone())), Some(exact), "a title at the limit is kept whole");
    }

    #[test]
    fn an_empty_user_title_clears_it() {
        let mut titles = Titles::new("shell".into());
        titles.set_user(some("mine"));
        assert_eq!(titles.set_user(some("")), some("shell"));
        assert_eq!(titles.user(), None);
        assert_eq!(titles.effective(), "shell");
    }
}
