//! The thread rule: which later requests a firing's effect reaches (docs/COUNTERFACTUAL.md,
//! *Threads*).
//!
//! Each agent thread (the main agent, each sub-agent) sends its own context. A result
//! suppressed at turn T is missing from the later requests of the thread that carried it,
//! until that thread's next compaction, and from no other thread's; a shrink takes its
//! tokens off the request of the firing's own (turn, thread). A terminal firing of the
//! main agent ends the run: every later request of every thread is saved; one of a
//! sub-agent ends that sub-agent's later requests only.
//!
//! A set of firings acting together costs one pass per thread, linear in its requests
//! plus firings: spans found by cursors that only move forward, ordered by a counting
//! sort, and swept once. Each firing alone is answered by an offline range query, linear
//! up to a log factor (issue #13's stuck loops fire on every turn).

use crate::guards::{Effect, Firing};
use crate::hash::HashMap;
use crate::model::sum_tokens;
use crate::replay::Compaction;
use std::collections::BTreeMap;

/// One model request as the cost model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub turn: u32,
    pub agent: String,
    pub tokens: u64,
    /// What the request cost, when priced or recorded.
    pub usd: Option<f64>,
    /// Dollars per prompt token, to price a reduction of the prompt.
    pub prompt_rate: Option<f64>,
}

/// What a set of firings would have saved.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Saved {
    pub tokens: u64,
    /// Over the priced requests only.
    pub usd: f64,
}

/// The requests of one run by thread, and each thread's compactions.
pub struct Timeline<'a> {
    requests: &'a [Request],
    /// Request indices per thread, in turn order.
    threads: BTreeMap<&'a str, Vec<usize>>,
    /// Turns of each thread's compactions, ascending.
    compactions: BTreeMap<&'a str, Vec<u32>>,
    /// `suffix[i]`: tokens of requests `i..` (requests are in turn order).
    suffix: Vec<u64>,
}

/// A non-terminal effect over a span of one thread's requests.
struct Span<'f> {
    start: usize,
    end: usize,
    tokens: u64,
    subject: Option<&'f str>,
}

impl<'a> Timeline<'a> {
    /// `requests` in turn order.
    pub fn new(requests: &'a [Request], compactions: &'a [Compaction]) -> Self {
        let mut threads: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, r) in requests.iter().enumerate() {
            threads.entry(r.agent.as_str()).or_default().push(i);
        }
        let mut by_thread: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
        for c in compactions {
            by_thread.entry(c.agent.as_str()).or_default().push(c.turn);
        }
        for turns in by_thread.values_mut() {
            turns.sort_unstable();
        }
        let mut suffix: Vec<u64> = vec![0; requests.len() + 1];
        for i in (0..requests.len()).rev() {
            suffix[i] = suffix[i + 1].saturating_add(requests[i].tokens);
        }
        Self {
            requests,
            threads,
            compactions: by_thread,
            suffix,
        }
    }

    /// What `firings` would have saved acting together.
    pub fn saved(&self, firings: &[&Firing]) -> Saved {
        let cuts = Cuts::of(firings);
        let mut by_thread = self.by_thread(firings.iter().copied().enumerate());
        let mut saved = Saved::default();
        for (agent, indices) in &self.threads {
            let own = by_thread.remove(agent).unwrap_or_default();
            let spans: Vec<Span> = self
                .spans(agent, indices, own)
                .into_iter()
                .map(|(_, s)| s)
                .collect();
            let reductions = sweep(indices.len(), &spans);
            let cut = cuts.of_thread(agent);
            for (&i, reduction) in indices.iter().zip(reductions) {
                let r = &self.requests[i];
                let (tokens, usd) = if cut.is_some_and(|c| r.turn > c) {
                    (r.tokens, r.usd)
                } else {
                    let tokens = reduction.min(r.tokens);
                    (tokens, prompt_cost(r, tokens))
                };
                saved.tokens = saved.tokens.saturating_add(tokens);
                saved.usd += usd.unwrap_or(0.0);
            }
        }
        saved
    }

    /// Tokens each firing would have saved alone, in the order given.
    pub fn saved_alone(&self, firings: &[Firing]) -> Vec<u64> {
        let mut out = vec![0; firings.len()];
        let mut suppressions = Vec::new();
        for (k, f) in firings.iter().enumerate() {
            match f.effect {
                Effect::Terminal if f.agent == MAIN => out[k] = self.after(f.turn),
                Effect::Terminal => {
                    if let Some(indices) = self.threads.get(f.agent.as_str()) {
                        let from = first_after(self.requests, indices, f.turn);
                        out[k] =
                            sum_tokens(indices[from..].iter().map(|&i| self.requests[i].tokens));
                    }
                }
                Effect::Advisory => {}
                Effect::Shrink { .. } | Effect::Suppress { .. } => suppressions.push((k, f)),
            }
        }
        // Suppressions and shrinks alone are a sum of min(tokens, request) over a span:
        // answered together, per thread, by one offline pass.
        for (agent, own) in self.by_thread(suppressions.into_iter()) {
            let indices = &self.threads[agent];
            let spans = self.spans(agent, indices, own);
            let tokens: Vec<u64> = indices.iter().map(|&i| self.requests[i].tokens).collect();
            for ((k, _), sum) in spans.iter().zip(sums_of_min(&tokens, &spans)) {
                out[*k] = sum;
            }
        }
        out
    }

    /// `firings` (each with a key) grouped by the thread they act on; firings of an agent
    /// with no requests reach none and are left out.
    fn by_thread<'f, K>(
        &self,
        firings: impl Iterator<Item = (K, &'f Firing)>,
    ) -> BTreeMap<&'a str, Vec<(K, &'f Firing)>> {
        let mut out: BTreeMap<&'a str, Vec<(K, &'f Firing)>> = BTreeMap::new();
        for (k, f) in firings {
            if let Some((&agent, _)) = self.threads.get_key_value(f.agent.as_str()) {
                out.entry(agent).or_default().push((k, f));
            }
        }
        out
    }

    /// The spans of the firings of `agent`'s thread (each with its key) over its requests
    /// (`indices`). Taken in turn order, every bound a firing asks for moves only forward,
    /// so cursors find them all in one pass over the thread: linear, where a search per
    /// firing through a long run's requests missed the cache at every step (issue #13).
    fn spans<'f, K: Copy>(
        &self,
        agent: &str,
        indices: &[usize],
        mut firings: Vec<(K, &'f Firing)>,
    ) -> Vec<(K, Span<'f>)> {
        // Stable, and one pass when already in turn order (a run's firings are).
        firings.sort_by_key(|(_, f)| f.turn);
        let turn_of = |p: usize| self.requests[indices[p]].turn;
        let compactions = self.compactions.get(agent).map_or(&[][..], Vec::as_slice);
        let mut at_turn = Cursor::default();
        let mut after_turn = Cursor::default();
        let mut at_compaction = Cursor::default();
        let mut compaction = Cursor::default();
        let mut out = Vec::with_capacity(firings.len());
        for (k, f) in firings {
            let turn = f.turn;
            let (start, end, tokens) = match f.effect {
                Effect::Shrink { tokens } => (
                    at_turn.first(indices.len(), |p| turn_of(p) >= turn),
                    after_turn.first(indices.len(), |p| turn_of(p) > turn),
                    tokens,
                ),
                Effect::Suppress { tokens } => {
                    // The turn of the thread's first compaction after `turn`: its context no
                    // longer carries what it held before.
                    let next = compaction.first(compactions.len(), |c| compactions[c] > turn);
                    let until = compactions.get(next).copied().unwrap_or(u32::MAX);
                    (
                        after_turn.first(indices.len(), |p| turn_of(p) > turn),
                        at_compaction.first(indices.len(), |p| turn_of(p) >= until),
                        tokens,
                    )
                }
                Effect::Terminal | Effect::Advisory => continue,
            };
            if start < end && tokens > 0 {
                out.push((
                    k,
                    Span {
                        start,
                        end,
                        tokens,
                        subject: f.subject.as_deref(),
                    },
                ));
            }
        }
        out
    }

    /// Tokens of every request after `turn`, of every thread.
    fn after(&self, turn: u32) -> u64 {
        self.suffix[self.requests.partition_point(|r| r.turn <= turn)]
    }
}

/// The agent whose terminal firing ends every thread.
pub(crate) const MAIN: &str = "main";

/// Where terminal firings end the run: the main agent's earliest cuts every thread, a
/// sub-agent's earliest cuts its own thread.
struct Cuts<'f> {
    main: Option<u32>,
    threads: BTreeMap<&'f str, u32>,
}

impl<'f> Cuts<'f> {
    fn of(firings: &[&'f Firing]) -> Self {
        let mut cuts = Self {
            main: None,
            threads: BTreeMap::new(),
        };
        for f in firings.iter().filter(|f| f.effect == Effect::Terminal) {
            if f.agent == MAIN {
                cuts.main = Some(cuts.main.map_or(f.turn, |c| c.min(f.turn)));
            } else {
                let c = cuts.threads.entry(f.agent.as_str()).or_insert(f.turn);
                *c = (*c).min(f.turn);
            }
        }
        cuts
    }

    /// The turn after which `agent`'s requests are cut, if any.
    fn of_thread(&self, agent: &str) -> Option<u32> {
        let own = self.threads.get(agent).copied();
        self.main.into_iter().chain(own).min()
    }
}

/// The first position in `indices` whose request's turn is after `turn`.
fn first_after(requests: &[Request], indices: &[usize], turn: u32) -> usize {
    indices.partition_point(|&i| requests[i].turn <= turn)
}

/// A position that only moves forward: the first of `0..len` where a predicate that
/// turns true and stays true (as positions rise) holds, for predicates that only get
/// stricter from one call to the next.
#[derive(Default)]
struct Cursor(usize);

impl Cursor {
    fn first(&mut self, len: usize, holds: impl Fn(usize) -> bool) -> usize {
        while self.0 < len && !holds(self.0) {
            self.0 += 1;
        }
        self.0
    }
}

/// The reduction each of `n` positions gets from `spans` acting together: spans without a
/// subject add up; spans about one subject (one result suppressed by several guards) take
/// off their largest figure, once.
fn sweep(n: usize, spans: &[Span]) -> Vec<u64> {
    let starts = by_position(n, spans.iter().map(|s| s.start));
    let ends = by_position(n, spans.iter().map(|s| s.end));
    let (mut next_start, mut next_end) = (0, 0);
    let mut active = Active::default();
    let mut out = Vec::with_capacity(n);
    for p in 0..n {
        while next_end < ends.len() && spans[ends[next_end]].end <= p {
            active.remove(&spans[ends[next_end]]);
            next_end += 1;
        }
        while next_start < starts.len() && spans[starts[next_start]].start <= p {
            active.add(&spans[starts[next_start]]);
            next_start += 1;
        }
        out.push(active.total());
    }
    out
}

/// The indices of `positions` (each at most `n`) ordered by position: a counting sort, so
/// a sweep stays linear however the spans interleave.
fn by_position(n: usize, positions: impl Iterator<Item = usize> + Clone) -> Vec<usize> {
    let mut first = vec![0usize; n + 2];
    for p in positions.clone() {
        first[p.min(n) + 1] += 1;
    }
    for i in 1..first.len() {
        first[i] += first[i - 1];
    }
    let mut out = vec![0; first[n + 1]];
    for (k, p) in positions.enumerate() {
        let slot = &mut first[p.min(n)];
        out[*slot] = k;
        *slot += 1;
    }
    out
}

/// The spans covering the current position.
#[derive(Default)]
struct Active<'f> {
    /// Sum of spans without a subject (u128: no overflow before the final cap).
    plain: u128,
    /// Per subject covered now, a multiset of figures; the largest counts. Hashed, and a
    /// subject leaves when its last span ends, so a long run's suppressions cost a lookup
    /// each, not a search among every subject seen.
    by_subject: HashMap<&'f str, BTreeMap<u64, usize>>,
    /// Sum over subjects of their largest figure.
    subjects: u128,
}

impl<'f> Active<'f> {
    fn add(&mut self, s: &Span<'f>) {
        match s.subject {
            None => self.plain += u128::from(s.tokens),
            Some(subject) => {
                let set = self.by_subject.entry(subject).or_default();
                let before = largest(set);
                *set.entry(s.tokens).or_default() += 1;
                self.subjects = self.subjects - before + largest(set);
            }
        }
    }

    fn remove(&mut self, s: &Span<'f>) {
        match s.subject {
            None => self.plain -= u128::from(s.tokens),
            Some(subject) => {
                let Some(set) = self.by_subject.get_mut(subject) else {
                    return;
                };
                let before = largest(set);
                if let Some(count) = set.get_mut(&s.tokens) {
                    *count -= 1;
                    if *count == 0 {
                        set.remove(&s.tokens);
                    }
                }
                self.subjects = self.subjects - before + largest(set);
                if set.is_empty() {
                    self.by_subject.remove(subject);
                }
            }
        }
    }

    fn total(&self) -> u64 {
        u64::try_from(self.plain + self.subjects).unwrap_or(u64::MAX)
    }
}

fn largest(set: &BTreeMap<u64, usize>) -> u128 {
    set.keys().next_back().map_or(0, |&t| u128::from(t))
}

/// For each span, the sum over its positions of `min(span.tokens, tokens[p])`, all
/// answered in one pass: spans by increasing figure, positions entering a Fenwick tree as
/// their tokens fall below it.
fn sums_of_min(tokens: &[u64], spans: &[(usize, Span)]) -> Vec<u64> {
    let mut by_size: Vec<usize> = (0..tokens.len()).collect();
    by_size.sort_by_key(|&p| tokens[p]);
    let mut queries: Vec<usize> = (0..spans.len()).collect();
    queries.sort_by_key(|&q| spans[q].1.tokens);
    let mut below = Fenwick::new(tokens.len());
    let mut entered = 0;
    let mut out = vec![0; spans.len()];
    for q in queries {
        let span = &spans[q].1;
        while entered < by_size.len() && tokens[by_size[entered]] < span.tokens {
            below.add(by_size[entered], tokens[by_size[entered]]);
            entered += 1;
        }
        let (sum, count) = below.range(span.start, span.end);
        let rest = (span.end - span.start) as u128 - count;
        let total = sum + rest * u128::from(span.tokens);
        out[q] = u64::try_from(total).unwrap_or(u64::MAX);
    }
    out
}

/// Prefix sums of (tokens, count) over positions.
struct Fenwick {
    sum: Vec<u128>,
    count: Vec<u128>,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Self {
            sum: vec![0; n + 1],
            count: vec![0; n + 1],
        }
    }

    fn add(&mut self, position: usize, tokens: u64) {
        let mut i = position + 1;
        while i < self.sum.len() {
            self.sum[i] += u128::from(tokens);
            self.count[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// (sum, count) over positions `..end`.
    fn prefix(&self, end: usize) -> (u128, u128) {
        let (mut sum, mut count) = (0, 0);
        let mut i = end;
        while i > 0 {
            sum += self.sum[i];
            count += self.count[i];
            i -= i & i.wrapping_neg();
        }
        (sum, count)
    }

    fn range(&self, start: usize, end: usize) -> (u128, u128) {
        let (hi, hi_count) = self.prefix(end);
        let (lo, lo_count) = self.prefix(start);
        (hi - lo, hi_count - lo_count)
    }
}

/// What taking `tokens` off `r`'s prompt saves in dollars: at the request's blended prompt
/// price, never more than the request cost.
fn prompt_cost(r: &Request, tokens: u64) -> Option<f64> {
    let usd = r.prompt_rate? * tokens as f64;
    Some(r.usd.map_or(usd, |cap| usd.min(cap)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_position_orders_stably_and_keeps_the_end_position() {
        // Positions 0..=n: a span's end may be the thread's length.
        let order = by_position(4, [3, 1, 4, 1, 0, 3].into_iter());
        assert_eq!(order, vec![4, 1, 3, 0, 5, 2]);
        assert!(by_position(0, std::iter::empty()).is_empty());
    }

    #[test]
    fn a_cursor_only_moves_forward_and_stops_at_the_end() {
        let turns = [1, 3, 3, 7];
        let mut after = Cursor::default();
        assert_eq!(after.first(turns.len(), |p| turns[p] > 0), 0);
        assert_eq!(after.first(turns.len(), |p| turns[p] > 3), 3);
        assert_eq!(after.first(turns.len(), |p| turns[p] > 3), 3);
        assert_eq!(after.first(turns.len(), |p| turns[p] > 9), 4);
    }
}
