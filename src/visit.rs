//! The course of a browser visit once its index is open: which background
//! work it needs (the copy into OPFS, or an update check), whether the
//! reader may still ask for the copy (`saveOffline()`, the drop-in UI's
//! control) and what `info().offline` reports.
//!
//! In: the page's offline policy for this visit ([`OfflineVisit`]: the
//! `open({ offline })` option, the reader's visit count and whether the
//! connection is metered; `js/index.js` reads them, that being I/O) and how
//! the session opened its index ([`Opened`]). Out: a [`VisitPlan`]. Pure
//! computation with no browser types, so its table is tested natively;
//! [`super::session`] applies it and `js/worker.js` only picks the moment.

use serde::{Deserialize, Serialize};

/// `open({ offline })`: when lazy mode copies the whole index into OPFS.
/// Under every policy the pages a visit's searches read are kept in
/// browser storage for the next visit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OfflinePolicy {
    /// When the reader asks for it (`saveOffline()`, the drop-in UI's
    /// "save for offline" control), never on its own: a returning reader
    /// downloads no more than what their searches read.
    #[default]
    Auto,
    /// At once, whatever the connection: the site opts in.
    Always,
    /// Never: only the pages queries read are kept, and `saveOffline()`
    /// refuses.
    Never,
}

/// The policy's inputs for this visit, as the page read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OfflineVisit {
    pub policy: OfflinePolicy,
    /// This browser's visits to the index, this one included (at least 1).
    pub visits: u32,
    /// Save-Data, or a cellular connection: the reader pays for bytes.
    pub metered: bool,
}

impl Default for OfflineVisit {
    /// A page that says nothing: the default policy, a first visit.
    fn default() -> Self {
        OfflineVisit {
            policy: OfflinePolicy::Auto,
            visits: 1,
            metered: false,
        }
    }
}

impl OfflineVisit {
    /// Whether this visit copies the whole index on its own, in the
    /// background (when there is a copy to make). Only a site that opted
    /// in does: the visit count and the connection no longer start a
    /// download nobody asked for (they are still reported).
    pub fn copies_now(&self) -> bool {
        match self.policy {
            OfflinePolicy::Always => true,
            OfflinePolicy::Auto | OfflinePolicy::Never => false,
        }
    }

    /// Whether the reader may ask for the copy (`saveOffline()`).
    pub fn may_save(&self) -> bool {
        self.policy != OfflinePolicy::Never
    }
}

/// How the session got its index, as far as the visit's course depends on
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// From browser storage, with no network: a newer index may be
    /// published.
    Stored,
    /// Downloaded whole during this visit: it is the published one.
    Downloaded,
    /// Read over HTTP Range requests. `copy_pending`: the copy into OPFS
    /// is under way, or could not start (a copy refused for want of room
    /// still runs, to fail with its reason); false once it is complete or
    /// stopped.
    Lazy { copy_pending: bool },
}

/// The work a visit does in the background, after its first answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Background {
    /// Copy the rest of the index into OPFS and switch to the copy (the
    /// `fill` event).
    Fill,
    /// Look for a newer published index (the `update` event).
    Update,
}

/// `info().offline`: the policy's inputs, whether the copy runs and
/// whether the reader can still ask for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfflineState {
    pub policy: OfflinePolicy,
    pub visits: u32,
    pub metered: bool,
    pub copying: bool,
    /// `saveOffline()` would start the copy: the index is read lazily with
    /// no full copy stored or under way, and the policy is not `never`
    /// (the drop-in UI shows its control on this).
    pub can_save: bool,
}

impl OfflineState {
    /// The state once the reader asked for the copy: it runs.
    pub fn saving(self) -> OfflineState {
        OfflineState {
            copying: true,
            can_save: false,
            ..self
        }
    }

    /// The state once the copy stopped: `stored` when it is complete (no
    /// copy left to make), else the reader may ask again.
    pub fn saved(self, stored: bool) -> OfflineState {
        OfflineState {
            copying: false,
            can_save: !stored && self.policy != OfflinePolicy::Never,
            ..self
        }
    }
}

/// What the visit does once its index is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisitPlan {
    pub background: Option<Background>,
    pub offline: OfflineState,
}

/// Decides the visit's background work: a lazily read index with a copy
/// to make copies it when the policy says so; a stored index is checked
/// for a newer one; a downloaded index, or a lazy one not copied, needs
/// nothing.
pub fn plan(visit: OfflineVisit, opened: Opened) -> VisitPlan {
    let pending = matches!(opened, Opened::Lazy { copy_pending: true });
    let copying = pending && visit.copies_now();
    let background = match opened {
        _ if copying => Some(Background::Fill),
        Opened::Stored => Some(Background::Update),
        Opened::Downloaded | Opened::Lazy { .. } => None,
    };
    VisitPlan {
        background,
        offline: OfflineState {
            policy: visit.policy,
            visits: visit.visits,
            metered: visit.metered,
            copying,
            can_save: pending && !copying && visit.may_save(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICIES: [OfflinePolicy; 3] = [
        OfflinePolicy::Auto,
        OfflinePolicy::Always,
        OfflinePolicy::Never,
    ];
    const OPENED: [Opened; 4] = [
        Opened::Stored,
        Opened::Downloaded,
        Opened::Lazy { copy_pending: true },
        Opened::Lazy {
            copy_pending: false,
        },
    ];

    /// The table written out case by case, independently of `copies_now`.
    fn expected_copy(policy: OfflinePolicy, visits: u32, metered: bool) -> bool {
        match (policy, visits, metered) {
            (OfflinePolicy::Always, _, _) => true,
            (OfflinePolicy::Never, _, _) => false,
            (OfflinePolicy::Auto, _, _) => false,
        }
    }

    #[test]
    fn every_policy_visit_count_connection_and_opening_gets_its_background_work() {
        for policy in POLICIES {
            for visits in [1, 2, 3, 40] {
                for metered in [false, true] {
                    let visit = OfflineVisit {
                        policy,
                        visits,
                        metered,
                    };
                    for opened in OPENED {
                        let got = plan(visit, opened);
                        let copy = opened == Opened::Lazy { copy_pending: true }
                            && expected_copy(policy, visits, metered);
                        let want = if copy {
                            Some(Background::Fill)
                        } else if opened == Opened::Stored {
                            Some(Background::Update)
                        } else {
                            None
                        };
                        let case =
                            format!("{policy:?} visits={visits} metered={metered} {opened:?}");
                        assert_eq!(got.background, want, "{case}");
                        assert_eq!(
                            got.offline,
                            OfflineState {
                                policy,
                                visits,
                                metered,
                                copying: copy,
                                can_save: opened == Opened::Lazy { copy_pending: true }
                                    && policy == OfflinePolicy::Auto,
                            },
                            "{case}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn auto_never_copies_on_its_own_but_offers_the_copy() {
        let lazy = Opened::Lazy { copy_pending: true };
        for visits in [1, 2, 10] {
            for metered in [false, true] {
                let visit = OfflineVisit {
                    policy: OfflinePolicy::Auto,
                    visits,
                    metered,
                };
                let got = plan(visit, lazy);
                assert_eq!(got.background, None, "visits={visits} metered={metered}");
                assert!(got.offline.can_save && !got.offline.copying);
            }
        }
        assert!(!plan(OfflineVisit::default(), lazy).offline.copying);
    }

    #[test]
    fn the_reader_asks_for_the_copy_and_may_ask_again_until_it_is_stored() {
        let lazy = Opened::Lazy { copy_pending: true };
        let state = plan(OfflineVisit::default(), lazy).offline;
        let saving = state.saving();
        assert!(saving.copying && !saving.can_save);
        let failed = saving.saved(false);
        assert!(!failed.copying && failed.can_save);
        let stored = saving.saved(true);
        assert!(!stored.copying && !stored.can_save);
        // `never` refuses the copy: nothing to offer, before or after.
        let never = OfflineVisit {
            policy: OfflinePolicy::Never,
            ..OfflineVisit::default()
        };
        assert!(!never.may_save());
        assert!(!plan(never, lazy).offline.can_save);
        assert!(!plan(never, lazy).offline.saved(false).can_save);
        // Nothing to copy: a stored, downloaded or already copied index.
        for opened in [
            Opened::Stored,
            Opened::Downloaded,
            Opened::Lazy {
                copy_pending: false,
            },
        ] {
            assert!(!plan(OfflineVisit::default(), opened).offline.can_save);
        }
    }

    #[test]
    fn a_stored_index_is_checked_for_updates_whatever_the_policy() {
        for policy in POLICIES {
            let visit = OfflineVisit {
                policy,
                visits: 5,
                metered: true,
            };
            let got = plan(visit, Opened::Stored);
            assert_eq!(got.background, Some(Background::Update));
            assert!(!got.offline.copying);
        }
    }

    #[test]
    fn the_policy_reads_and_reports_the_pages_spelling() {
        let visit: OfflineVisit =
            serde_json::from_str(r#"{"policy":"always","visits":3,"metered":true}"#).unwrap();
        assert_eq!(visit.policy, OfflinePolicy::Always);
        let state = plan(visit, Opened::Lazy { copy_pending: true }).offline;
        assert_eq!(
            serde_json::to_value(state).unwrap(),
            serde_json::json!({"policy": "always", "visits": 3, "metered": true, "copying": true, "canSave": false})
        );
        assert_eq!(
            serde_json::to_value(Background::Fill).unwrap(),
            serde_json::json!("fill")
        );
        assert!(serde_json::from_str::<OfflineVisit>(
            r#"{"policy":"sometimes","visits":1,"metered":false}"#
        )
        .is_err());
    }
}
