//! `list` a page at a time (feature `pages`, SPEC D17): [`Client::list_page`] fetches one page, and
//! [`Client::list_all`] every process of a mode through pages, so that no answer has to carry them all.
//!
//! A daemon without the feature ignores `after` and `limit` (unknown members are ignored, SPEC V4) and answers
//! every process without `next`: [`Client::list_all`] then stops after that one answer, so it works against
//! any daemon of protocol 8.

use std::num::NonZeroU32;

use opencode_pty_protocol::{ListRequest, Mode, OptIn, ProcessInfo};

use crate::client::Client;
use crate::error::ClientError;

/// One page of `list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The page's processes, in creation order.
    pub processes: Vec<ProcessInfo>,
    /// When more processes followed the page: the `after` of the next one (its last process's id).
    pub next: Option<u64>,
}

impl Client {
    /// `list` of one page: the processes of `mode` whose id is greater than `after` (from the first with
    /// `None`), at most `limit`, carrying the members of the features `features` names (as
    /// [`Client::list_with`]).
    pub async fn list_page(
        &self,
        mode: Mode,
        after: Option<u64>,
        limit: NonZeroU32,
        features: &[OptIn],
    ) -> Result<ListPage, ClientError> {
        let answer =
            self.exchange(ListRequest { after, features: features.to_vec(), limit: Some(limit), mode }).await?;
        Ok(ListPage { processes: answer.processes, next: answer.next })
    }

    /// Every process of `mode`, fetched in pages of at most `page` processes, in creation order. Each process
    /// comes at most once (pages follow ids, which only grow); one created while the pages are fetched is in
    /// the result when its id is past the page being fetched, and one terminated meanwhile may be missing.
    pub async fn list_all(&self, mode: Mode, page: NonZeroU32) -> Result<Vec<ProcessInfo>, ClientError> {
        self.list_all_with(mode, page, &[]).await
    }

    /// [`Client::list_all`] whose processes carry the members of the features `features` names.
    pub async fn list_all_with(
        &self,
        mode: Mode,
        page: NonZeroU32,
        features: &[OptIn],
    ) -> Result<Vec<ProcessInfo>, ClientError> {
        let mut all = Vec::new();
        let mut after = None;
        loop {
            let ListPage { processes, next } = self.list_page(mode, after, page, features).await?;
            all.extend(processes);
            match next {
                None => return Ok(all),
                // A cursor that does not move on would ask for the same page for ever.
                Some(next) if after.is_some_and(|after| next <= after) => {
                    return Err(ClientError::Protocol(format!("`list` gave the page after {next} again")));
                }
                Some(next) => after = Some(next),
            }
        }
    }
}
