//! The work-order review document: the charts and the corpus tables, as Markdown (charts
//! linked) and as one self-contained HTML page (charts inlined as SVG, no network).

use super::tables::{all, cost_cell, notes, thousands, TableModel};
use super::Report;
use std::io::Write;

/// A chart as the document shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    pub title: String,
    /// Path of the SVG relative to the document (Markdown links to it).
    pub svg_link: String,
    /// The SVG itself (HTML inlines it).
    pub svg: String,
    /// `corpus` or `run`: where the figure belongs in the document.
    pub section: Section,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Corpus,
    Run,
}

/// A run's explain page, written beside the document in two formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainPage {
    /// `project/run`.
    pub label: String,
    pub markdown_link: String,
    pub html_link: String,
}

/// The decision table that opens the review (issue #29, item 6), and the rule behind each
/// verdict word, written under it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionTable {
    pub table: TableModel,
    pub rules: Vec<String>,
}

/// The post-mortem parts of the review (issue #14): the explain page of each run the
/// review looks at, and the failed runs grouped by their earliest terminal guard; with
/// labels, the decision table first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostMortem {
    pub decision: Option<DecisionTable>,
    pub pages: Vec<ExplainPage>,
    pub failed: Option<TableModel>,
    /// Which runs the review charts and explains, and why those (issue #16).
    pub picked: Option<String>,
}

/// Links to the data files written beside the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub label: String,
    pub link: String,
}

fn headline(report: &Report) -> String {
    let s = &report.summary;
    format!(
        "{} runs of {} projects, {} turns, {} tokens ({} estimated), cost {}; all guards together would have saved {} tokens ({}).",
        s.runs,
        s.projects,
        s.turns,
        thousands(s.tokens_total),
        thousands(s.tokens_estimated),
        cost_cell(s.cost_usd, s.cost_unpriced_tokens),
        thousands(s.tokens_saved_combined),
        cost_cell(s.cost_saved_usd_combined, s.cost_unpriced_tokens)
    )
}

pub fn markdown(
    report: &Report,
    figures: &[Figure],
    data: &[DataFile],
    post: &PostMortem,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "# hindsight: work-order review\n\n{}\n",
        headline(report)
    )?;
    if let Some(d) = &post.decision {
        writeln!(out, "## {}\n", d.table.title)?;
        super::markdown::table(&d.table, out)?;
        writeln!(out)?;
        for rule in &d.rules {
            writeln!(out, "- {}", super::markdown::escape(rule))?;
        }
        writeln!(out)?;
    }
    if let Some(model) = &post.failed {
        writeln!(out, "## {}\n", model.title)?;
        super::markdown::table(model, out)?;
        writeln!(out)?;
    }
    if !post.pages.is_empty() {
        writeln!(out, "## Runs explained\n")?;
        if let Some(picked) = &post.picked {
            writeln!(out, "{}\n", super::markdown::escape(picked))?;
        }
        for p in &post.pages {
            writeln!(
                out,
                "- {}: [Markdown]({}), [HTML]({})",
                super::markdown::escape(&p.label),
                p.markdown_link,
                p.html_link
            )?;
        }
        writeln!(out)?;
    }
    for (section, heading) in [(Section::Corpus, "Corpus"), (Section::Run, "Runs")] {
        let shown: Vec<&Figure> = figures.iter().filter(|f| f.section == section).collect();
        if shown.is_empty() {
            continue;
        }
        writeln!(out, "## {heading}\n")?;
        for f in shown {
            writeln!(out, "### {}\n\n![{}]({})\n", f.title, f.title, f.svg_link)?;
        }
    }
    writeln!(out, "## Tables\n")?;
    for d in data {
        writeln!(out, "- [{}]({})", d.label, d.link)?;
    }
    writeln!(out)?;
    super::markdown::tables(report, "###", out)
}

/// Text escaped for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_table(model: &TableModel, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "<h3>{}</h3>\n<table>\n<thead><tr>", esc(&model.title))?;
    for h in &model.headers {
        write!(out, "<th>{}</th>", esc(h))?;
    }
    writeln!(out, "</tr></thead>\n<tbody>")?;
    for row in &model.rows {
        write!(out, "<tr>")?;
        for (i, cell) in row.iter().enumerate() {
            let class = if model.numeric.contains(&i) {
                " class=\"n\""
            } else {
                ""
            };
            write!(out, "<td{class}>{}</td>", esc(cell))?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody>\n</table>")
}

/// The page style of the review and the explain pages.
pub const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px}\
th{background:#f3f3f3}td.n{text-align:right}figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}";

pub fn html(
    report: &Report,
    figures: &[Figure],
    data: &[DataFile],
    post: &PostMortem,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hindsight: work-order review</title>\n<style>{STYLE}</style>\n</head>\n<body>"
    )?;
    writeln!(
        out,
        "<h1>hindsight: work-order review</h1>\n<p>{}</p>",
        esc(&headline(report))
    )?;
    if let Some(d) = &post.decision {
        html_table(&d.table, out)?;
        writeln!(out, "<ul>")?;
        for rule in &d.rules {
            writeln!(out, "<li>{}</li>", esc(rule))?;
        }
        writeln!(out, "</ul>")?;
    }
    if let Some(model) = &post.failed {
        html_table(model, out)?;
    }
    if !post.pages.is_empty() {
        writeln!(out, "<h2>Runs explained</h2>")?;
        if let Some(picked) = &post.picked {
            writeln!(out, "<p>{}</p>", esc(picked))?;
        }
        writeln!(out, "<ul>")?;
        for p in &post.pages {
            writeln!(
                out,
                "<li>{}: <a href=\"{}\">HTML</a>, <a href=\"{}\">Markdown</a></li>",
                esc(&p.label),
                esc(&p.html_link),
                esc(&p.markdown_link)
            )?;
        }
        writeln!(out, "</ul>")?;
    }
    for (section, heading) in [(Section::Corpus, "Corpus"), (Section::Run, "Runs")] {
        let shown: Vec<&Figure> = figures.iter().filter(|f| f.section == section).collect();
        if shown.is_empty() {
            continue;
        }
        writeln!(out, "<h2>{heading}</h2>")?;
        for f in shown {
            writeln!(
                out,
                "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
                strip_prolog(&f.svg),
                esc(&f.title)
            )?;
        }
    }
    writeln!(out, "<h2>Tables</h2>\n<ul>")?;
    for d in data {
        writeln!(
            out,
            "<li><a href=\"{}\">{}</a></li>",
            esc(&d.link),
            esc(&d.label)
        )?;
    }
    writeln!(out, "</ul>")?;
    for model in all(report) {
        html_table(&model, out)?;
    }
    for note in notes(report) {
        writeln!(out, "<p><em>{}</em></p>", esc(&note))?;
    }
    writeln!(out, "</body>\n</html>")
}

/// An SVG document without its XML prolog, so it can sit inside HTML.
pub fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
