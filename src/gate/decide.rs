//! The decision that opens a work-order review (issue #29, item 6; docs/GATE.md,
//! *Deciding*): per guard, the best of its settings under the constraints, chosen on the
//! training projects and scored on the held-out ones ([`super::select`]), the lift of its
//! firing against the labels, and a one-word verdict from those figures.
//!
//! Each guard is judged alone: its own savings, its own terminal firings of the main agent
//! (the other guards as recorded), so the table answers "should we ship this one".

use super::scores::{bootstrap, discrimination, total, Discrimination};
use super::select::{choose, Choice, HeldOut, Selection};
use super::sweep::{Point, Setting};
use crate::report::tables::{rate_cell, share_cell, tokens_range, TableModel};
use serde::Serialize;

/// Fewer held-out runs than this of either label is `too few runs`: the intervals on them
/// would be as wide as the scale.
pub const MIN_HELD_OUT: u64 = 5;

/// The one word a row ends in (docs/GATE.md, *Deciding*, has the rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ship,
    Hold,
    NotDiscriminating,
    TooFewRuns,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ship => "ship",
            Self::Hold => "hold",
            Self::NotDiscriminating => "not discriminating",
            Self::TooFewRuns => "too few runs",
        }
    }
}

/// One guard's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub guard: String,
    pub work_order: String,
    /// The setting chosen on the training projects and its held-out figures, beside the
    /// defaults' ([`choose`]).
    pub choice: Choice,
    /// The lift of its firing, over every labelled run at the setting judged (the chosen
    /// one, else the defaults): the share of the runs it fired on that failed, and of the
    /// runs it did not fire on, in thousandths, with intervals.
    pub failed_if_fired_permille: Option<u32>,
    pub failed_if_fired_interval: Option<[u32; 2]>,
    pub failed_if_not_fired_permille: Option<u32>,
    pub failed_if_not_fired_interval: Option<[u32; 2]>,
    pub discriminates: Option<Discrimination>,
    pub verdict: Verdict,
    /// Why that word, in a sentence.
    pub why: String,
}

impl Decision {
    /// The held-out figures the verdict is read from: the chosen setting's, else the
    /// defaults'.
    pub fn judged(&self) -> Option<&HeldOut> {
        self.choice
            .chosen
            .as_ref()
            .or(self.choice.defaults.as_ref())
    }
}

/// Decides on `guard` from its `points` (its settings, scored alone over the labelled
/// runs; one point when only its defaults were replayed).
pub fn decide(
    guard: &str,
    work_order: &str,
    points: &[Point],
    selection: &Selection,
    holdout: f64,
    resamples: u32,
) -> Decision {
    let choice = choose(points, selection, holdout, resamples);
    let judged_setting = choice
        .chosen
        .as_ref()
        .or(choice.defaults.as_ref())
        .map(|h| &h.setting);
    let point = points
        .iter()
        .find(|p| Some(&p.setting) == judged_setting)
        .or(points.first());
    let (whole, intervals) = match point {
        Some(p) => {
            let whole = total(p.tallies());
            (whole, bootstrap(p.tallies(), resamples).with_edges(&whole))
        }
        None => Default::default(),
    };
    let discriminates = discrimination(&whole, &intervals);
    let share = |part: u64, of: u64| (of > 0).then(|| (part * 1000 / of) as u32);
    let fired = whole.fired_failed + whole.fired_healthy;
    let not_fired = whole.failed + whole.healthy - fired;
    let mut decision = Decision {
        guard: guard.to_string(),
        work_order: work_order.to_string(),
        failed_if_fired_permille: share(whole.fired_failed, fired),
        failed_if_fired_interval: intervals.failed_if_fired_permille,
        failed_if_not_fired_permille: share(whole.failed - whole.fired_failed, not_fired),
        failed_if_not_fired_interval: intervals.failed_if_not_fired_permille,
        discriminates,
        choice,
        verdict: Verdict::Hold,
        why: String::new(),
    };
    (decision.verdict, decision.why) = verdict(&decision, selection);
    decision
}

/// The verdict and why, by the rules in order (docs/GATE.md, *Deciding*).
fn verdict(d: &Decision, selection: &Selection) -> (Verdict, String) {
    let Some(judged) = d.judged() else {
        return (Verdict::TooFewRuns, "no labelled run was scored".into());
    };
    let f = &judged.figures;
    if f.failed_runs < MIN_HELD_OUT || f.healthy_runs < MIN_HELD_OUT {
        return (
            Verdict::TooFewRuns,
            format!(
                "held out: {} failed and {} healthy runs; at least {MIN_HELD_OUT} of each are needed",
                f.failed_runs, f.healthy_runs
            ),
        );
    }
    match d.discriminates {
        None => return (Verdict::NotDiscriminating, "it never fired".into()),
        Some(Discrimination::No) => {
            return (
                Verdict::NotDiscriminating,
                "it fires on as large a share of the healthy runs as of the failed ones".into(),
            )
        }
        _ => {}
    }
    let Some(chosen) = &d.choice.chosen else {
        return (
            Verdict::Hold,
            format!(
                "no setting meets {} on the training projects",
                selection.describe()
            ),
        );
    };
    if let Some(broken) = selection.broken(&chosen.tally) {
        return (
            Verdict::Hold,
            format!("the chosen setting breaks {broken} on the held-out projects"),
        );
    }
    match chosen.figures.intervals.tokens_saved_on_failed {
        Some([lo, _]) if lo > 0 => {}
        _ => {
            return (
                Verdict::Hold,
                "its savings on the held-out failed runs could be none (the interval reaches 0)"
                    .into(),
            )
        }
    }
    if d.discriminates == Some(Discrimination::Unclear) {
        return (
            Verdict::Hold,
            "it fires on more of the failed runs, but the two shares' intervals overlap".into(),
        );
    }
    (
        Verdict::Ship,
        "meets the constraints on the held-out projects, saves tokens there with an interval above 0, and fires on more of the failed runs than of the healthy ones, intervals apart".into(),
    )
}

/// The rule behind each verdict word, as the review writes it under the table (and
/// docs/GATE.md, *Deciding*, states it).
pub fn rules(selection: &Selection, holdout: f64) -> Vec<String> {
    vec![
        format!(
            "Each guard alone (its own savings and terminal firings of the main agent), its settings chosen under {} on the training projects and scored on the projects held out by a hash of their names (--holdout {holdout}); intervals are 95% bootstrap intervals over projects.",
            selection.describe()
        ),
        format!("too few runs: the held-out projects have fewer than {MIN_HELD_OUT} failed or {MIN_HELD_OUT} healthy runs."),
        "not discriminating: it never fired, or it fires on as large a share of the healthy runs as of the failed ones (all labelled runs).".into(),
        "hold: no setting meets the constraints on the training projects; or the chosen one breaks them on the held-out projects; or its held-out savings interval reaches 0; or it fires on more of the failed runs but the two shares' intervals overlap.".into(),
        "ship: none of the above: it meets the constraints on the held-out projects, saves tokens there with an interval above 0, and fires on more of the failed runs than of the healthy ones, intervals apart.".into(),
        "lift: the share of the runs it fired on that failed, against the share of the runs it did not fire on that failed.".into(),
    ]
}

/// The decision table: one row per guard.
pub fn table(decisions: &[Decision]) -> TableModel {
    let rows = decisions
        .iter()
        .map(|d| {
            let judged = d.judged();
            let f = judged.map(|h| &h.figures);
            let setting = match (&d.choice.chosen, judged) {
                (Some(h), _) | (None, Some(h)) if h.setting.is_empty() => "defaults".into(),
                (Some(h), _) => shown(&h.setting),
                (None, Some(h)) => format!("none meets; defaults {}", shown(&h.setting)),
                (None, None) => "-".into(),
            };
            let rate = |n: u64, of: u64, interval| rate_cell(n as usize, of as usize, interval);
            vec![
                d.guard.clone(),
                d.work_order.clone(),
                setting,
                f.map_or("-".into(), |f| {
                    tokens_range(f.tokens_saved_on_failed, f.intervals.tokens_saved_on_failed)
                }),
                f.map_or("-".into(), |f| {
                    rate(
                        f.failed_cut,
                        f.failed_runs,
                        f.intervals.cut_on_failed_permille,
                    )
                }),
                f.map_or("-".into(), |f| {
                    rate(
                        f.false_terminal_on_healthy,
                        f.healthy_runs,
                        f.intervals.cut_on_healthy_permille,
                    )
                }),
                format!(
                    "{} vs {}",
                    share_cell(d.failed_if_fired_permille, d.failed_if_fired_interval),
                    share_cell(
                        d.failed_if_not_fired_permille,
                        d.failed_if_not_fired_interval
                    )
                ),
                d.verdict.as_str().into(),
                d.why.clone(),
            ]
        })
        .collect();
    TableModel {
        title: "Decision: is each guard worth shipping?".into(),
        headers: vec![
            "guard",
            "work order",
            "setting",
            "saved on failed (held out)",
            "failed runs cut (held out)",
            "healthy runs cut (held out)",
            "lift: failed if fired vs if not",
            "verdict",
            "why",
        ],
        rows,
        numeric: vec![3, 4, 5],
    }
}

/// `abandon=3 stalled=2`: each swept key (without its guard) and value.
fn shown(setting: &Setting) -> String {
    setting
        .iter()
        .map(|(name, v)| format!("{}={v}", name.rsplit('.').next().unwrap_or(name)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::labels::Label;
    use crate::gate::sweep::{points, SweptRun};

    /// `projects` projects of one failed and one healthy run each; `outcome(project,
    /// failed)` says whether the guard fired and cut there, and what it saved.
    fn runs(projects: usize, outcome: impl Fn(usize, bool) -> (bool, bool, u64)) -> Vec<SweptRun> {
        let mut runs = Vec::new();
        for p in 0..projects {
            for (label, failed) in [(Label::Failed, true), (Label::Healthy, false)] {
                let (fired, cut, saved) = outcome(p, failed);
                runs.push(SweptRun {
                    project: format!("project-{p:03}"),
                    run_id: label.as_str().to_string(),
                    harness: "omnius".into(),
                    model: "m".into(),
                    label,
                    fired: vec![fired],
                    cut: vec![cut],
                    saved: vec![saved],
                    usd: None,
                });
            }
        }
        runs
    }

    fn judge(runs: &[SweptRun], select: &str) -> Decision {
        let scored = points(vec![Vec::new()], runs, 400);
        decide("g", "WO-1", &scored, &select.parse().unwrap(), 0.3, 400)
    }

    #[test]
    fn a_guard_that_cuts_only_failed_runs_over_many_projects_ships() {
        let d = judge(
            &runs(40, |_, failed| {
                (failed, failed, if failed { 1000 } else { 0 })
            }),
            "false_cut_rate<=0.01",
        );
        assert_eq!(d.verdict, Verdict::Ship, "{}", d.why);
        assert_eq!(d.failed_if_fired_permille, Some(1000));
        assert_eq!(d.failed_if_not_fired_permille, Some(0));
    }

    #[test]
    fn few_held_out_runs_are_too_few_whatever_the_guard_did() {
        let d = judge(
            &runs(4, |_, failed| (failed, failed, 1000)),
            "false_cut_rate<=0.01",
        );
        assert_eq!(d.verdict, Verdict::TooFewRuns, "{}", d.why);
        assert!(d.why.contains("at least 5"), "{}", d.why);
    }

    #[test]
    fn a_guard_firing_everywhere_or_nowhere_does_not_discriminate() {
        let everywhere = judge(&runs(40, |_, _| (true, false, 0)), "false_cut_rate<=0.01");
        assert_eq!(everywhere.verdict, Verdict::NotDiscriminating);
        let nowhere = judge(&runs(40, |_, _| (false, false, 0)), "false_cut_rate<=0.01");
        assert_eq!(nowhere.verdict, Verdict::NotDiscriminating);
        assert_eq!(nowhere.why, "it never fired");
    }

    #[test]
    fn a_guard_that_breaks_the_constraint_or_may_save_nothing_is_held() {
        // Cuts every failed run and one healthy run in four: no setting meets 1%.
        let cuts_healthy = judge(
            &runs(40, |p, failed| {
                let fires = failed || p % 4 == 0;
                (fires, fires, 1000)
            }),
            "false_cut_rate<=0.01",
        );
        assert_eq!(cuts_healthy.verdict, Verdict::Hold);
        assert!(
            cuts_healthy.why.contains("no setting meets"),
            "{}",
            cuts_healthy.why
        );
        // Advises on failed runs only: discriminates, but saves nothing it can count.
        let advises = judge(
            &runs(40, |_, failed| (failed, false, 0)),
            "false_cut_rate<=0.01",
        );
        assert_eq!(advises.verdict, Verdict::Hold);
        assert!(advises.why.contains("could be none"), "{}", advises.why);
    }

    #[test]
    fn the_table_has_a_row_per_guard_with_its_verdict() {
        let d = judge(
            &runs(40, |_, failed| (failed, failed, 1000)),
            "false_cut_rate<=0.01",
        );
        let table = table(std::slice::from_ref(&d));
        assert_eq!(table.rows.len(), 1);
        assert_eq!(table.rows[0][2], "defaults");
        assert_eq!(table.rows[0][7], "ship");
        assert!(table.rows[0][6].starts_with("1.00"), "{:?}", table.rows[0]);
    }
}
