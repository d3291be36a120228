//! Charts for work-order reviews (plotters), written as SVG and PNG.
//!
//! One file per chart kind; each reads [`data::ChartData`] only and draws onto any plotters
//! [`DrawingBackend`], so one function serves SVG and PNG. Text is drawn with the DejaVu Sans
//! font embedded in the binary (registered once by [`register_fonts`]), so PNGs render the
//! same on a machine with no fonts installed; SVGs carry their text as `<text>` elements.
//!
//! The output is deterministic: no randomness, stable ordering, fixed colours; writing the
//! same [`ChartData`] twice gives byte-identical files.

pub mod convergence;
pub mod data;
pub mod first_fire;
pub mod savings;
pub mod sweep;
pub mod tokens;

mod common;

pub use common::{DrawError, PALETTE};
pub use data::{ChartData, CorpusChart, Mark, RunChart, SweepPoint, Thresholds};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Width and height, in pixels, every chart is drawn at.
pub const SIZE: (u32, u32) = (1000, 600);

/// The only font family the charts use (plotters' own defaults use it too).
pub const FONT_FAMILY: &str = "sans-serif";

/// Registers the embedded DejaVu Sans (normal and bold) for [`FONT_FAMILY`] with plotters.
///
/// Idempotent; called by every renderer here, so callers need it only when drawing a chart
/// module's `draw` function onto a backend of their own.
pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a known-good TTF; were they rejected, drawing reports
        // `FontUnavailable` as a `ChartError::Draw` instead of panicking here.
        let _ =
            plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT_FAMILY, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Why a chart could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("drawing chart `{stem}`: {source}")]
    Draw {
        stem: String,
        #[source]
        source: DrawError,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}: {message}", path.display())]
    Png { path: PathBuf, message: String },
}

/// What a chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChartKind {
    /// Corpus: tokens saved per work order.
    Savings,
    /// Corpus: first-fire turn distribution per guard.
    FirstFire,
    /// Threshold sweep: savings against false terminal firings.
    Sweep,
    /// Per run: tokens per turn with the firings.
    Tokens,
    /// Per run: convergence rounds per family.
    Convergence,
}

impl ChartKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Savings => "savings",
            Self::FirstFire => "first-fire",
            Self::Sweep => "sweep",
            Self::Tokens => "tokens",
            Self::Convergence => "convergence",
        }
    }

    /// Whether the chart covers the whole corpus (or sweep) rather than one run.
    pub fn is_corpus(self) -> bool {
        matches!(self, Self::Savings | Self::FirstFire | Self::Sweep)
    }
}

impl std::fmt::Display for ChartKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The data one chart draws.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    Savings(&'a CorpusChart),
    FirstFire(&'a CorpusChart),
    Sweep(&'a [SweepPoint]),
    Tokens(&'a RunChart),
    Convergence(&'a RunChart),
}

/// One chart to draw: its kind, title, file stem and data.
#[derive(Debug, Clone)]
pub struct ChartSpec<'a> {
    pub kind: ChartKind,
    pub title: String,
    pub stem: String,
    pub source: Source<'a>,
}

impl ChartSpec<'_> {
    /// Draws the chart onto any plotters drawing area (registers the fonts first).
    pub fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError> {
        register_fonts();
        let drawn = match self.source {
            Source::Savings(c) => savings::draw(root, c),
            Source::FirstFire(c) => first_fire::draw(root, c),
            Source::Sweep(points) => sweep::draw(root, points),
            Source::Tokens(run) => tokens::draw(root, run),
            Source::Convergence(run) => convergence::draw(root, run),
        };
        drawn.map_err(|source| ChartError::Draw {
            stem: self.stem.clone(),
            source,
        })
    }

    /// The chart as SVG text, [`SIZE`] pixels, e.g. to inline in an HTML report.
    pub fn svg(&self) -> Result<String, ChartError> {
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(|e| self.draw_error(e))?;
        }
        Ok(text)
    }

    /// Draws the chart as a PNG file of [`SIZE`] pixels, a new file at `path` put in place
    /// once whole ([`crate::output::stage`]: whatever file or link was there is replaced,
    /// and a failed write leaves no part of the image).
    pub fn write_png(&self, path: &Path) -> Result<(), ChartError> {
        let io = |source| ChartError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut staged = crate::output::stage(path).map_err(io)?;
        // The encoder opens the file by its name and writes it whole on `present`.
        drop(staged.take_file());
        {
            let root = BitMapBackend::new(staged.writing_at(), SIZE).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(|e| ChartError::Png {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        }
        staged.commit().map_err(io)
    }

    fn draw_error(&self, e: impl std::fmt::Display) -> ChartError {
        ChartError::Draw {
            stem: self.stem.clone(),
            source: DrawError::new(e),
        }
    }
}

/// One chart written by [`write_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartFile {
    pub kind: ChartKind,
    pub title: String,
    pub stem: String,
    pub svg_path: PathBuf,
    pub png_path: PathBuf,
}

impl ChartFile {
    /// The SVG text as written, e.g. to inline in an HTML report.
    pub fn svg_text(&self) -> Result<String, ChartError> {
        std::fs::read_to_string(&self.svg_path).map_err(|source| ChartError::Io {
            path: self.svg_path.clone(),
            source,
        })
    }
}

/// Every chart of `data`, in a stable order: the corpus charts (`savings`, `first-fire`,
/// `sweep` if there is a sweep), then per run `tokens-<slug>` and `convergence-<slug>`.
///
/// The slug is the run name with every character but ASCII letters and digits replaced by
/// `-`; should two runs give the same slug, the later ones get `-2`, `-3`, ... appended.
pub fn charts(data: &ChartData) -> Vec<ChartSpec<'_>> {
    let mut specs = vec![
        ChartSpec {
            kind: ChartKind::Savings,
            title: savings::title(&data.corpus),
            stem: "savings".into(),
            source: Source::Savings(&data.corpus),
        },
        ChartSpec {
            kind: ChartKind::FirstFire,
            title: first_fire::title(&data.corpus),
            stem: "first-fire".into(),
            source: Source::FirstFire(&data.corpus),
        },
    ];
    if let Some(points) = &data.sweep {
        specs.push(ChartSpec {
            kind: ChartKind::Sweep,
            title: sweep::title(points),
            stem: "sweep".into(),
            source: Source::Sweep(points),
        });
    }
    let mut slugs = BTreeSet::new();
    for run in &data.runs {
        let base = slug(&run.name);
        let mut unique = base.clone();
        let mut n = 1;
        while !slugs.insert(unique.clone()) {
            n += 1;
            unique = format!("{base}-{n}");
        }
        specs.push(ChartSpec {
            kind: ChartKind::Tokens,
            title: tokens::title(run),
            stem: format!("tokens-{unique}"),
            source: Source::Tokens(run),
        });
        specs.push(ChartSpec {
            kind: ChartKind::Convergence,
            title: convergence::title(run),
            stem: format!("convergence-{unique}"),
            source: Source::Convergence(run),
        });
    }
    specs
}

/// A run name as a file-name part: ASCII letters and digits kept, everything else `-`.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if s.is_empty() {
        "run".into()
    } else {
        s
    }
}

/// The SVG text of one chart (see [`charts`]), e.g. to inline in an HTML report.
pub fn svg_string(spec: &ChartSpec<'_>) -> Result<String, ChartError> {
    spec.svg()
}

/// Writes every chart of `data` as `<stem>.svg` and `<stem>.png` into `dir` (created if
/// missing) and lists them in the order of [`charts`].
pub fn write_all(data: &ChartData, dir: &Path) -> Result<Vec<ChartFile>, ChartError> {
    crate::output::create_dir(dir).map_err(|source| ChartError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files = Vec::new();
    for spec in charts(data) {
        let svg_path = dir.join(format!("{}.svg", spec.stem));
        let png_path = dir.join(format!("{}.png", spec.stem));
        let svg = spec.svg()?;
        crate::output::write_file(&svg_path, svg).map_err(|source| ChartError::Io {
            path: svg_path.clone(),
            source,
        })?;
        spec.write_png(&png_path)?;
        files.push(ChartFile {
            kind: spec.kind,
            title: spec.title,
            stem: spec.stem,
            svg_path,
            png_path,
        });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_replace_non_alphanumerics() {
        assert_eq!(slug("proj/run-1.a"), "proj-run-1-a");
        assert_eq!(slug(""), "run");
    }

    #[test]
    fn colliding_slugs_are_numbered() {
        let run = |name: &str| RunChart {
            name: name.into(),
            tokens: vec![],
            measured: true,
            marks: vec![],
            cut_at: None,
            rounds: Default::default(),
            thresholds: Thresholds {
                converging_warn: 2,
                stalled: 3,
                abandon: 5,
            },
        };
        let data = ChartData {
            runs: vec![run("a/b"), run("a-b")],
            corpus: CorpusChart {
                savings: vec![],
                first_fire: Default::default(),
                runs: 2,
            },
            sweep: None,
        };
        let stems: Vec<String> = charts(&data).into_iter().map(|s| s.stem).collect();
        assert_eq!(
            stems,
            [
                "savings",
                "first-fire",
                "tokens-a-b",
                "convergence-a-b",
                "tokens-a-b-2",
                "convergence-a-b-2"
            ]
        );
    }
}
