//! The JSON report: the machine-readable form later tools (gate, sweep, merge) read back.
//!
//! Written piece by piece ([`JsonStream`]): the header, each run's entry as soon as it is
//! known, then the summary and the input section. A replay can so write its report while
//! it runs, keeping only the summary (issue #13); a report held whole is written through
//! the same pieces, so the bytes are those of `serde_json`'s pretty printer either way.

use super::{Replayed, Report, RunReport, Summary, UnreadReport, REPORT_FORMAT};
use crate::shard::Shard;
use serde::Serialize;
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut stream = JsonStream::begin(&mut *out, report.format)?;
    for run in &report.runs {
        stream.run(run)?;
    }
    stream.finish(
        &report.summary,
        &report.input,
        report.replayed.as_ref(),
        report.shard.as_ref(),
    )
}

/// A JSON report being written.
pub struct JsonStream<'w> {
    out: &'w mut dyn Write,
    runs: usize,
}

impl<'w> JsonStream<'w> {
    /// Writes the report's opening, up to its `runs` array.
    pub fn begin(out: &'w mut dyn Write, format: u32) -> std::io::Result<Self> {
        write!(out, "{{\n  \"format\": {format},\n  \"runs\": [")?;
        Ok(Self { out, runs: 0 })
    }

    /// A report in the current shape.
    pub fn begin_current(out: &'w mut dyn Write) -> std::io::Result<Self> {
        Self::begin(out, REPORT_FORMAT)
    }

    /// Writes the next run's entry.
    pub fn run(&mut self, run: &RunReport) -> std::io::Result<()> {
        self.run_entry(&run_entry(run)?)
    }

    /// Writes the next run's entry, serialized by [`run_entry`].
    pub fn run_entry(&mut self, entry: &[u8]) -> std::io::Result<()> {
        let separator = if self.runs == 0 { "\n    " } else { ",\n    " };
        self.out.write_all(separator.as_bytes())?;
        self.out.write_all(entry)?;
        self.runs += 1;
        Ok(())
    }

    /// Closes the `runs` array and writes the summary, the input section, what identifies
    /// the replay and, for a shard's report, the shard.
    pub fn finish(
        self,
        summary: &Summary,
        input: &UnreadReport,
        replayed: Option<&Replayed>,
        shard: Option<&Shard>,
    ) -> std::io::Result<()> {
        let out = self.out;
        if self.runs > 0 {
            out.write_all(b"\n  ")?;
        }
        out.write_all(b"],\n  \"summary\": ")?;
        nested(&mut *out, summary, "  ")?;
        out.write_all(b",\n  \"input\": ")?;
        nested(&mut *out, input, "  ")?;
        if let Some(replayed) = replayed {
            out.write_all(b",\n  \"replayed\": ")?;
            nested(&mut *out, replayed, "  ")?;
        }
        if let Some(shard) = shard {
            out.write_all(b",\n  \"shard\": ")?;
            nested(&mut *out, shard, "  ")?;
        }
        out.write_all(b"\n}\n")
    }
}

/// A run's entry as the report holds it (its bytes at their nesting depth): a replay
/// serializes each run on a worker thread and keeps only these bytes until the run's
/// turn to be written.
pub fn run_entry(run: &RunReport) -> std::io::Result<Vec<u8>> {
    const INDENT: &str = "    ";
    let text = serde_json::to_string_pretty(run)?;
    // Allocated at its final size, not grown by doubling: runs waiting for their turn hold
    // these bytes, and a long run's entry is large.
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut entry = Vec::with_capacity(text.len() + breaks * INDENT.len());
    indent_lines(&mut entry, &text, INDENT)?;
    Ok(entry)
}

/// `value` pretty-printed at a nesting depth whose lines start with `indent`, its first
/// line where the cursor is.
fn nested(out: &mut dyn Write, value: &impl Serialize, indent: &str) -> std::io::Result<()> {
    indent_lines(out, &serde_json::to_string_pretty(value)?, indent)
}

/// Writes pretty-printed JSON `text` with every line after the first starting with
/// `indent`. JSON strings hold no raw line breaks, so this nests the document exactly as
/// the pretty printer would have.
fn indent_lines(out: &mut dyn Write, text: &str, indent: &str) -> std::io::Result<()> {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
            out.write_all(indent.as_bytes())?;
        }
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{summarize, Report};

    fn report(runs: usize) -> Report {
        let run: RunReport = serde_json::from_value(serde_json::json!({
            "project": "p", "run_id": "r\n\"x\"", "format": "omnius", "session": 1,
            "turns": 2, "tokens_total": 10, "tokens_recorded": 10, "tokens_estimated": 0,
            "tokens_by_kind": {"input": 8, "cache_write": 0, "cache_read": 0, "output": 2,
                               "unknown": 0},
            "cost_usd": null, "cost_recorded_usd": 0.0, "cost_unpriced_tokens": 10,
            "unpriced_models": [], "models": [],
            "ledger": {"recorded": "open", "finalized": "open"},
            "firings": [], "savings": {"by_guard": {}, "combined": 0, "cut_at_turn": null,
                                       "cost_saved_usd": null},
            "metrics": {"g": {"m": [1, {"a": []}]}},
            "input": {"records": 1, "bytes": 2, "skipped": 0, "problems": [],
                      "unknown_types": {}, "unknown_fields": {}}
        }))
        .expect("a run entry");
        let runs = vec![run; runs];
        let summary = summarize(&runs);
        Report {
            format: REPORT_FORMAT,
            runs,
            summary,
            input: UnreadReport::default(),
            replayed: None,
            shard: None,
        }
    }

    #[test]
    fn piece_by_piece_is_the_pretty_printers_bytes() {
        for (n, shard) in [(0, None), (1, None), (3, Some((2, 3)))] {
            let mut report = report(n);
            report.shard = shard.map(|(index, count)| Shard { index, count });
            report.replayed = shard.map(|_| crate::report::Replayed {
                hindsight: "0.1.0".into(),
                paths: vec!["corpora/".into()],
                guards: vec!["convergence_breaker".into()],
                settings: "0123456789abcdef".into(),
                prices: "fedcba9876543210".into(),
            });
            let mut streamed = Vec::new();
            render(&report, &mut streamed).expect("writes");
            let mut whole = serde_json::to_vec_pretty(&report).expect("serializes");
            whole.push(b'\n');
            assert_eq!(
                String::from_utf8_lossy(&streamed),
                String::from_utf8_lossy(&whole),
                "{n} runs"
            );
        }
    }
}
