//! The explain page as one document of sections and lines, built once from an
//! [`Explain`] and drawn by each format (text, Markdown, HTML), as the report's tables are
//! built once and drawn twice: the formats decide only how a line, a code span and a
//! heading look.

use super::recording::{FailureFamily, FrameFacts};
use super::timeline::Span;
use super::{Carry, Cut, Explain, FiringRef, TurnTokens};
use crate::report::tables::{cost_cell, thousands, tokens_cell};
use crate::report::FiringReport;
use std::collections::BTreeMap;

/// A piece of a line: plain words, or recorded text shown as code (a family, a path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
}

/// One fact: a line of inlines, under a sub-heading when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A sub-heading within a section.
    Heading(String),
    Line(Vec<Inline>),
    /// Where the HTML page draws the run's charts.
    Charts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub items: Vec<Item>,
}

/// The document of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    pub title: String,
    pub sections: Vec<Section>,
}

/// Families and files listed before `and N more`.
const LISTED: usize = 12;

/// Builds a line from words and code spans.
#[derive(Default)]
struct Line(Vec<Inline>);

impl Line {
    fn t(mut self, s: impl Into<String>) -> Self {
        self.0.push(Inline::Text(flat(s.into())));
        self
    }
    fn c(mut self, s: impl Into<String>) -> Self {
        self.0.push(Inline::Code(flat(s.into())));
        self
    }
    fn item(self) -> Item {
        Item::Line(self.0)
    }
}

fn line() -> Line {
    Line::default()
}

/// Recorded text on one line: a family can hold a here-document, a detail a newline.
fn flat(s: String) -> String {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    } else {
        s
    }
}

/// `turn 5` or `turns 5-9`.
pub fn turns(from: u32, to: u32) -> String {
    if from == to {
        format!("turn {from}")
    } else {
        format!("turns {from}-{to}")
    }
}

fn times(n: u64) -> String {
    match n {
        1 => "once".into(),
        n => format!("{} times", thousands(n)),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn at(t: &TurnTokens) -> String {
    format!(
        "{} at turn {}",
        tokens_cell(t.tokens, u64::from(t.estimated)),
        t.turn
    )
}

pub fn build(e: &Explain) -> Doc {
    let h = &e.header;
    Doc {
        title: format!("hindsight explain: {}/{}", h.project, h.run_id),
        sections: vec![
            header(e),
            evidence(e),
            fired(e),
            Section {
                title: "Timeline".into(),
                items: e.timeline.iter().map(span).collect(),
            },
            look_first(e),
        ],
    }
}

fn header(e: &Explain) -> Section {
    let h = &e.header;
    let mut items = vec![
        line()
            .t("project ")
            .c(&h.project)
            .t(", run ")
            .c(&h.run_id)
            .t(format!(", read as {}", h.format))
            .item(),
        carry(h.session, h.sessions, &h.carry_in),
    ];
    let k = &h.tokens_by_kind;
    let mut tokens = format!(
        "{}, {} tokens",
        plural(h.turns as u64, "turn", "turns"),
        tokens_cell(h.tokens_total, h.tokens_estimated)
    );
    if h.tokens_estimated > 0 {
        tokens.push_str(&format!(
            " ({} recorded, ~{} estimated)",
            thousands(h.tokens_recorded),
            thousands(h.tokens_estimated)
        ));
    } else if h.tokens_total > 0 {
        let kinds: Vec<String> = [
            ("input", k.input),
            ("cache write", k.cache_write),
            ("cache read", k.cache_read),
            ("output", k.output),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{kind} {}", thousands(*n)))
        .collect();
        tokens.push_str(&format!(" recorded ({})", kinds.join(", ")));
    }
    tokens.push_str(&format!(
        "; cost {}",
        cost_cell(h.cost_usd, h.cost_unpriced_tokens)
    ));
    if h.cost_unpriced_tokens > 0 {
        tokens.push_str(&format!(
            " ({} tokens have no price)",
            thousands(h.cost_unpriced_tokens)
        ));
    }
    items.push(line().t(tokens).item());
    items.push(
        line()
            .t("ledger recorded ")
            .c(&h.ledger.recorded)
            .t(", finalized ")
            .c(&h.ledger.finalized)
            .item(),
    );
    if let Some(label) = &h.label {
        items.push(line().t(format!("labelled {label}")).item());
    }
    items.push(Item::Charts);
    Section {
        title: "Run".into(),
        items,
    }
}

fn carry(session: usize, sessions: usize, carried: &[Carry]) -> Item {
    let l = line().t(format!("session {session} of {sessions}; "));
    if carried.is_empty() {
        return l.t("nothing carried in").item();
    }
    let mut l = l.t("carried in: ");
    for (i, c) in carried.iter().enumerate() {
        if i > 0 {
            l = l.t("; ");
        }
        let by: Vec<String> = c.rounds.iter().map(|(g, r)| format!("{g} {r}")).collect();
        l = l.c(&c.family).t(format!(" (rounds: {})", by.join(", ")));
    }
    l.item()
}

fn evidence(e: &Explain) -> Section {
    let ev = &e.evidence;
    let mut items = vec![Item::Heading("Mutations".into())];
    let m = &ev.mutations;
    items.push(match (m.first_turn, m.last_turn) {
        (Some(first), Some(last)) => {
            let mut l = line().t(format!(
                "{}, {}",
                plural(m.count, "mutation", "mutations"),
                if first == last {
                    format!("at turn {last}")
                } else {
                    format!("turns {first}-{last}")
                }
            ));
            if m.failed_verdict > 0 {
                l = l.t(format!(
                    ", {} with a failed verdict",
                    thousands(m.failed_verdict)
                ));
            }
            l = l.t(": ");
            l = listed(l, m.files.iter().map(String::as_str), m.files.len());
            l.item()
        }
        _ => line().t("no mutation recorded").item(),
    });
    items.push(Item::Heading("Failures by family".into()));
    if ev.failures.is_empty() {
        items.push(line().t("no failed result recorded").item());
    }
    for f in ev.failures.iter().take(LISTED) {
        items.push(failure(f));
    }
    if ev.failures.len() > LISTED {
        items.push(
            line()
                .t(format!(
                    "and {} more families (--format json lists them all)",
                    ev.failures.len() - LISTED
                ))
                .item(),
        );
    }
    items.push(Item::Heading("Directives".into()));
    if ev.directives.is_empty() {
        items.push(line().t("no directive recorded").item());
    }
    for d in &ev.directives {
        let mut l = line().c(&d.required_action);
        if !d.sources.is_empty() {
            let sources: Vec<&str> = d.sources.iter().map(String::as_str).collect();
            l = l.t(format!(" (from {})", sources.join(", ")));
        }
        let records = if d.records == d.directives {
            String::new()
        } else {
            format!(" ({} records)", thousands(d.records))
        };
        l = l.t(format!(
            ": {}{records}, {}; {} ignored, {} answered, {} unanswered at the end",
            plural(d.directives, "directive", "directives"),
            turns(d.first_turn, d.last_turn),
            thousands(d.ignored),
            thousands(d.answered),
            thousands(d.pending_at_end)
        ));
        items.push(l.item());
    }
    if let (Some(first), Some(last)) = (ev.refused.first_turn, ev.refused.last_turn) {
        items.push(
            line()
                .t(format!(
                    "{} refused by the harness (error class ",
                    plural(ev.refused.calls, "call", "calls")
                ))
                .c("blocked")
                .t(format!("), {}", turns(first, last)))
                .item(),
        );
    }
    items.push(Item::Heading("Context".into()));
    items.extend(context(e));
    items.push(Item::Heading("Todos".into()));
    items.push(match &ev.todos {
        None => line()
            .t("no todo list or workboard recorded (no todo_write)")
            .item(),
        Some(t) => {
            let statuses: Vec<String> = t
                .by_status
                .iter()
                .map(|(s, n)| format!("{} {s}", thousands(*n)))
                .collect();
            let last = t
                .last_turn
                .map_or(String::new(), |l| format!(", the last at turn {l}"));
            line()
                .t(format!(
                    "{}{last}: {} at the end{}",
                    plural(t.writes, "todo write", "todo writes"),
                    plural(t.items, "item", "items"),
                    if statuses.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", statuses.join(", "))
                    }
                ))
                .item()
        }
    });
    items.push(Item::Heading("Completion".into()));
    items.extend(completion(e));
    items.push(Item::Heading("Compactions".into()));
    if ev.compactions.is_empty() {
        items.push(line().t("no compaction recorded").item());
    }
    for c in &ev.compactions {
        items.push(
            line()
                .t(format!(
                    "turn {} ({}): {} → {} tokens",
                    c.turn,
                    c.agent,
                    thousands(c.before_tokens),
                    thousands(c.after_tokens)
                ))
                .item(),
        );
    }
    Section {
        title: "Evidence snapshot".into(),
        items,
    }
}

/// `a`, `b` and `c`, then `and N more`.
fn listed<'s>(mut l: Line, names: impl Iterator<Item = &'s str>, total: usize) -> Line {
    for (i, name) in names.take(LISTED).enumerate() {
        if i > 0 {
            l = l.t(", ");
        }
        l = l.c(name);
    }
    if total > LISTED {
        l = l.t(format!(" and {} more", total - LISTED));
    }
    l
}

fn failure(f: &FailureFamily) -> Item {
    let mut l = line().c(&f.family);
    if f.agent != super::MAIN {
        l = l.t(format!(" ({})", f.agent));
    }
    let classes: Vec<String> = f
        .classes
        .iter()
        .map(|(c, n)| {
            if f.classes.len() == 1 {
                c.to_string()
            } else {
                format!("{c} {n}")
            }
        })
        .collect();
    l = l.t(format!(
        ": failed {}, {}",
        times(f.failures),
        turns(f.first_turn, f.last_turn)
    ));
    if !classes.is_empty() {
        l = l.t(format!(" ({})", classes.join(", ")));
    }
    if let Some(ok) = f.succeeded_before {
        l = l.t(format!(", after it succeeded at turn {ok}"));
    }
    if let Some(r) = f.peak_rounds.filter(|&r| r > 1) {
        l = l.t(format!(", up to {r} rounds"));
    }
    let last = match (&f.last_diagnostic, &f.last_output_line) {
        (Some(d), _) => Some(("last diagnostic", d)),
        (None, Some(o)) => Some(("last output line", o)),
        (None, None) => None,
    };
    if let Some((what, text)) = last {
        l = l.t(format!("; {what} ")).c(text);
        if f.last_line_count > 1 {
            l = l.t(format!(
                " (the last {} failures in a row)",
                thousands(f.last_line_count)
            ));
        }
    }
    l.item()
}

fn context(e: &Explain) -> Vec<Item> {
    let c = &e.evidence.context;
    let mut items = Vec::new();
    // One figure per turn, with every name it has ("peak, last").
    let mut named: Vec<(TurnTokens, Vec<&str>)> = Vec::new();
    for (point, name) in [
        (&c.first, "first"),
        (&c.after_last_mutation, "after the last mutation"),
        (&c.peak, "peak"),
        (&c.last, "last"),
    ] {
        let Some(p) = point else { continue };
        match named.iter_mut().find(|(q, _)| q.turn == p.turn) {
            Some((_, names)) => names.push(name),
            None => named.push((*p, vec![name])),
        }
    }
    named.sort_by_key(|(p, _)| p.turn);
    let points: Vec<String> = named
        .iter()
        .map(|(p, names)| format!("{} ({})", at(p), names.join(", ")))
        .collect();
    if points.is_empty() {
        items.push(line().t("no request recorded").item());
    } else {
        items.push(
            line()
                .t(format!(
                    "request tokens of {}: {}",
                    c.agent,
                    points.join(", ")
                ))
                .item(),
        );
    }
    match (&c.first_frame, &c.last_frame) {
        (Some(first), Some(last)) if c.frames > 1 => {
            let first_line = line().t(format!("{} frames; first ", thousands(c.frames)));
            items.push(frame(first_line, first, &c.evidence_marker));
            items.push(frame(line().t("last "), last, &c.evidence_marker));
        }
        (_, Some(last)) => items.push(frame(line().t("1 frame: "), last, &c.evidence_marker)),
        _ => items.push(line().t("no context frame recorded").item()),
    }
    if let Some(last) = &c.last_frame {
        if c.repeated.is_empty() {
            items.push(
                line()
                    .t(format!(
                        "no block repeated in the frame of turn {}",
                        last.turn
                    ))
                    .item(),
            );
        }
        for r in c.repeated.iter().take(LISTED) {
            items.push(
                line()
                    .t(format!(
                        "repeated {} in the frame of turn {} ({} message): ",
                        times(r.count),
                        last.turn,
                        r.role
                    ))
                    .c(&r.text)
                    .item(),
            );
        }
        if c.repeated.len() > LISTED {
            items.push(
                line()
                    .t(format!(
                        "and {} more repeated blocks",
                        c.repeated.len() - LISTED
                    ))
                    .item(),
            );
        }
    }
    items
}

fn frame(l: Line, f: &FrameFacts, marker: &str) -> Item {
    let prompt = f.system_prompt_chars.map_or_else(
        || "system prompt size not recorded".to_string(),
        |n| format!("system prompt {} chars", thousands(n)),
    );
    let estimate = f.estimated_tokens.map_or(String::new(), |n| {
        format!(", ~{} tokens (the frame's own estimate)", thousands(n))
    });
    let mut l = l.t(format!(
        "turn {} ({}): {} messages, {prompt}, {}",
        f.turn,
        f.agent,
        thousands(f.messages),
        plural(
            f.injected_blocks,
            "injected system block",
            "injected system blocks"
        ),
    ));
    if f.evidence_blocks > 0 {
        l = l
            .t(format!(" ({} ", thousands(f.evidence_blocks)))
            .c(marker)
            .t(")");
    }
    l.t(format!(
        ", evidence {} chars{estimate}",
        thousands(f.evidence_chars)
    ))
    .item()
}

fn completion(e: &Explain) -> Vec<Item> {
    let c = &e.evidence.completion;
    let mut items = Vec::new();
    if c.claims.is_empty() {
        items.push(line().t("no completion claim recorded").item());
    }
    for claim in c.claims.iter().take(LISTED) {
        let status = claim.status.as_deref().unwrap_or("(no status)");
        let mut l = line()
            .t(format!("claim at turn {}: ", claim.turn))
            .c(status);
        l = l.t(if claim.claims_success {
            " (claims success)"
        } else {
            " (not a success status)"
        });
        if let Some(s) = &claim.summary {
            l = l.t(": ").c(s);
        }
        items.push(l.item());
    }
    let k = &c.checks;
    items.push(match (k.first_turn, k.last_turn) {
        (Some(first), Some(last)) => line()
            .t(format!(
                "{}, {}; {} passed{}",
                plural(k.attempts, "check", "checks"),
                turns(first, last),
                thousands(k.passed),
                k.last_passed_turn
                    .map_or(String::new(), |t| format!(", the last at turn {t}"))
            ))
            .item(),
        _ => line().t("no check (verification) recorded").item(),
    });
    if let Some(m) = c.last_mutation_turn {
        let verdict = match k.last_passed_turn {
            Some(p) if p > m => format!("a check passed after it, at turn {p}"),
            Some(p) => format!("the last passing check was before it, at turn {p}"),
            None => "no check ever passed".to_string(),
        };
        items.push(
            line()
                .t(format!("last mutation at turn {m}; {verdict}"))
                .item(),
        );
    }
    let mut l = line()
        .t("ledger ")
        .c(&c.ledger.recorded)
        .t(" → ")
        .c(&c.ledger.finalized);
    if let Some(f) = &c.finalized_because {
        l = l.t(format!(" at turn {}", f.turn));
        if let Some(d) = &f.detail {
            l = l.t(": ").t(d);
        }
    }
    items.push(l.item());
    items
}

/// (guard, action, family) of a firing group.
type GroupKey<'a> = (&'a str, &'a str, Option<&'a str>);

fn fired(e: &Explain) -> Section {
    let f = &e.fired;
    let mut items = Vec::new();
    if f.firings.is_empty() {
        items.push(line().t("no guard would have fired").item());
    }
    // Repeats of one guard, action and family are one line with their count and turns.
    let mut groups: BTreeMap<GroupKey, Vec<&FiringReport>> = BTreeMap::new();
    for firing in &f.firings {
        let key = (
            firing.guard.as_str(),
            firing.action.as_str(),
            firing.family.as_deref(),
        );
        groups.entry(key).or_default().push(firing);
    }
    let mut ordered: Vec<Vec<&FiringReport>> = groups.into_values().collect();
    ordered.sort_by_key(|g| (g[0].turn, g[0].guard.as_str(), g[0].action.as_str()));
    for group in ordered {
        items.push(firing_group(&group));
    }
    items.push(Item::Heading("Savings".into()));
    match &f.cut {
        Some(cut) => items.push(cut_line(cut)),
        None => items.push(line().t("no guard would have ended the run").item()),
    }
    for g in &f.by_guard {
        items.push(
            line()
                .t(format!(
                    "{} ({}) alone: {} tokens, {} ({})",
                    g.guard,
                    g.work_order,
                    thousands(g.tokens_saved),
                    cost_cell(g.cost_saved_usd, e.header.cost_unpriced_tokens),
                    plural(g.firings as u64, "firing", "firings")
                ))
                .item(),
        );
    }
    items.push(
        line()
            .t(format!(
                "all guards together: {} tokens, {}",
                thousands(f.combined_tokens),
                cost_cell(f.combined_cost_usd, e.header.cost_unpriced_tokens)
            ))
            .item(),
    );
    Section {
        title: "What would have fired".into(),
        items,
    }
}

fn firing_group(group: &[&FiringReport]) -> Item {
    let first = group[0];
    let last = group[group.len() - 1];
    let saved: u64 = group.iter().map(|f| f.tokens_saved).sum();
    let count = if group.len() > 1 {
        format!(" ×{}", group.len())
    } else {
        String::new()
    };
    let mut l = line().t(format!(
        "{}: {} {}{count} ({}, {})",
        turns(first.turn, last.turn),
        first.guard,
        first.action,
        first.work_order,
        first.effect
    ));
    if first.agent != super::MAIN {
        l = l.t(format!(" [{}]", first.agent));
    }
    if let Some(family) = &first.family {
        l = l.t(" on ").c(family);
    }
    if let Some(d) = &first.detail {
        l = l.t(format!(": {d}"));
    }
    if saved > 0 {
        l = l.t(format!("; saves {} tokens alone", thousands(saved)));
    }
    l.item()
}

fn names(firings: &[FiringRef]) -> String {
    let names: Vec<String> = firings
        .iter()
        .map(|f| format!("{} {}", f.guard, f.action))
        .collect();
    names.join(", ")
}

fn cut_line(cut: &Cut) -> Item {
    let cost = cut.cost_saved_usd.map_or(String::new(), |usd| {
        format!(", {}", cost_cell(Some(usd), 0))
    });
    line()
        .t(format!(
            "earliest terminal cut: turn {} ({}), saving every later request: {} tokens{cost}",
            cut.turn,
            names(&cut.firings),
            thousands(cut.tokens_saved)
        ))
        .item()
}

fn span(s: &Span) -> Item {
    let mut l = line().t(turns(s.from, s.to));
    if let Some(t) = &s.tokens {
        let mark = |n: u64| tokens_cell(n, u64::from(t.estimated));
        l = l.t(if s.turns > 1 {
            format!(" ({} → {} tokens)", mark(t.first), mark(t.last))
        } else {
            format!(" ({} tokens)", mark(t.first))
        });
    }
    if s.agent != super::MAIN {
        l = l.t(format!(" [{}]", s.agent));
    }
    l = l.t(":");
    let mut first = true;
    let mut sep = |l: Line| {
        let l = if first { l.t(" ") } else { l.t("; ") };
        first = false;
        l
    };
    for c in &s.calls {
        l = sep(l).c(&c.family).t(format!(" {}", c.outcome));
        if s.turns > 1 {
            l = l.t(format!(" {}", times(c.times)));
        }
        let mut notes: Vec<String> = c.class.iter().map(|c| c.to_string()).collect();
        if let Some([lo, hi]) = c.errors {
            let each = if c.times > 1 { " each" } else { "" };
            notes.push(if lo == hi {
                format!("{} {}{each}", lo, if lo == 1 { "error" } else { "errors" })
            } else {
                format!("{lo}-{hi} errors")
            });
        }
        if c.mutation {
            notes.push("mutation".into());
        }
        if !notes.is_empty() {
            l = l.t(format!(" ({})", notes.join(", ")));
        }
    }
    for (action, n) in &s.directives {
        let count = if *n > 1 {
            format!(" ×{n}")
        } else {
            String::new()
        };
        l = sep(l).t("directive ").c(action).t(count);
    }
    for claim in &s.claims {
        l = sep(l).t("task_complete ").c(claim);
    }
    if s.compactions > 0 {
        l = sep(l).t(plural(
            u64::from(s.compactions),
            "compaction",
            "compactions",
        ));
    }
    if s.calls.is_empty() && s.directives.is_empty() && s.claims.is_empty() && s.compactions == 0 {
        l = sep(l).t("no tool call");
    }
    if !s.firings.is_empty() {
        let fired: Vec<String> = s
            .firings
            .iter()
            .map(|f| {
                if f.count > 1 {
                    format!("{} {} ×{}", f.guard, f.action, f.count)
                } else {
                    format!("{} {}", f.guard, f.action)
                }
            })
            .collect();
        l = l.t(format!("; fired: {}", fired.join(", ")));
    }
    l.item()
}

fn look_first(e: &Explain) -> Section {
    let lf = &e.look_first;
    let mut items = Vec::new();
    match &lf.highest_tier {
        Some(t) => {
            let mut l = line()
                .t(format!(
                    "highest tier reached: {} at turn {}, by ",
                    t.tier, t.turn
                ))
                .c(&t.family);
            if t.agent != super::MAIN {
                l = l.t(format!(" [{}]", t.agent));
            }
            l = l.t(format!(" ({})", t.guards.join(", ")));
            if let Some(first) = t.first_firings.first() {
                l = l.t(format!(
                    "; the earliest firing on that family: turn {}, {}",
                    first.turn,
                    names(&t.first_firings)
                ));
            }
            items.push(l.item());
        }
        None => items.push(
            line()
                .t("no family reached a convergence tier (stalled or abandon)")
                .item(),
        ),
    }
    match lf.earliest_terminal.first() {
        Some(first) => {
            let mut l = line().t(format!(
                "earliest terminal guard: turn {}, {}",
                first.turn,
                names(&lf.earliest_terminal)
            ));
            if let Some(d) = &first.detail {
                l = l.t(format!(" ({d})"));
            }
            items.push(l.item());
        }
        None => items.push(line().t("no guard would have ended the run").item()),
    }
    Section {
        title: "Where to look first".into(),
        items,
    }
}
