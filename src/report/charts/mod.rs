//! Charts for work-order reviews (plotters), written as SVG and PNG.
//!
//! One file per chart kind; each reads [`data::ChartData`] only. Text is drawn with the
//! DejaVu Sans font embedded in the binary (registered once), so PNGs render the same on a
//! machine with no fonts installed; SVGs carry their text as `<text>` elements.

pub mod data;

pub use data::{ChartData, CorpusChart, Mark, RunChart, SweepPoint, Thresholds};
