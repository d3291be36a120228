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
//! Everything here is linear in requests plus firings, up to a log factor: one sweep per
//! thread for a set of firings acting together, and an offline range query for each
//! firing alone (issue #13's stuck loops fire on every turn).

use crate::guards::{Effect, Firing};
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
        let mut saved = Saved::default();
        for (agent, indices) in &self.threads {
            let spans: Vec<Span> = firings
                .iter()
                .filter(|f| f.agent == *agent)
                .filter_map(|f| self.span(f, indices))
                .collect();
            let reductions = sweep(indices.len(), &spans);
            for (&i, reduction) in indices.iter().zip(reductions) {
                let r = &self.requests[i];
                let (tokens, usd) = if cuts.cuts(r) {
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
        // Suppressions alone are a sum of min(tokens, request) over a span: answered
        // together, per thread, by one offline pass.
        let mut queries: BTreeMap<&str, Vec<(usize, Span)>> = BTreeMap::new();
        for (k, f) in firings.iter().enumerate() {
            let Some(indices) = self.threads.get(f.agent.as_str()) else {
                if f.effect == Effect::Terminal && f.agent == MAIN {
                    out[k] = self.after(f.turn);
                }
                continue;
            };
            match f.effect {
                Effect::Terminal if f.agent == MAIN => out[k] = self.after(f.turn),
                Effect::Terminal => {
                    let from = first_after(self.requests, indices, f.turn);
                    out[k] = sum_tokens(indices[from..].iter().map(|&i| self.requests[i].tokens));
                }
                Effect::Advisory => {}
                Effect::Shrink { .. } | Effect::Suppress { .. } => {
                    if let Some(span) = self.span(f, indices) {
                        queries.entry(f.agent.as_str()).or_default().push((k, span));
                    }
                }
            }
        }
        for (agent, spans) in queries {
            let tokens: Vec<u64> = self.threads[agent]
                .iter()
                .map(|&i| self.requests[i].tokens)
                .collect();
            for ((k, _), sum) in spans.iter().zip(sums_of_min(&tokens, &spans)) {
                out[*k] = sum;
            }
        }
        out
    }

    /// Tokens of every request after `turn`, of every thread.
    fn after(&self, turn: u32) -> u64 {
        self.suffix[self.requests.partition_point(|r| r.turn <= turn)]
    }

    /// The requests of `indices` (one thread's) a non-terminal firing reaches.
    fn span<'f>(&self, f: &'f Firing, indices: &[usize]) -> Option<Span<'f>> {
        let (start, end, tokens) = match f.effect {
            Effect::Shrink { tokens } => (
                first_at_or_after(self.requests, indices, f.turn),
                first_after(self.requests, indices, f.turn),
                tokens,
            ),
            Effect::Suppress { tokens } => {
                let until = self.next_compaction(&f.agent, f.turn);
                (
                    first_after(self.requests, indices, f.turn),
                    first_at_or_after(self.requests, indices, until),
                    tokens,
                )
            }
            Effect::Terminal | Effect::Advisory => return None,
        };
        (start < end && tokens > 0).then_some(Span {
            start,
            end,
            tokens,
            subject: f.subject.as_deref(),
        })
    }

    /// The turn of `agent`'s first compaction after `turn`: its context no longer carries
    /// what it held before.
    fn next_compaction(&self, agent: &str, turn: u32) -> u32 {
        // Searched, not scanned: a long run compacts many times and every suppression
        // asks (issue #13).
        self.compactions
            .get(agent)
            .and_then(|turns| turns.get(turns.partition_point(|&c| c <= turn)).copied())
            .unwrap_or(u32::MAX)
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

    fn cuts(&self, r: &Request) -> bool {
        let after = |c: Option<u32>| c.is_some_and(|c| r.turn > c);
        after(self.main) || after(self.threads.get(r.agent.as_str()).copied())
    }
}

/// The first position in `indices` whose request's turn is after `turn`.
fn first_after(requests: &[Request], indices: &[usize], turn: u32) -> usize {
    indices.partition_point(|&i| requests[i].turn <= turn)
}

/// The first position in `indices` whose request's turn is `turn` or later.
fn first_at_or_after(requests: &[Request], indices: &[usize], turn: u32) -> usize {
    indices.partition_point(|&i| requests[i].turn < turn)
}

/// The reduction each of `n` positions gets from `spans` acting together: spans without a
/// subject add up; spans about one subject (one result suppressed by several guards) take
/// off their largest figure, once.
fn sweep(n: usize, spans: &[Span]) -> Vec<u64> {
    let mut starts: Vec<usize> = (0..spans.len()).collect();
    starts.sort_by_key(|&s| spans[s].start);
    let mut ends = starts.clone();
    ends.sort_by_key(|&s| spans[s].end);
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

/// The spans covering the current position.
#[derive(Default)]
struct Active<'f> {
    /// Sum of spans without a subject (u128: no overflow before the final cap).
    plain: u128,
    /// Per subject, a multiset of figures; the largest counts.
    by_subject: BTreeMap<&'f str, BTreeMap<u64, usize>>,
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
