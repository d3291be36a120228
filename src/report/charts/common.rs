//! What the charts share: colours, text styles, number formats, a legend drawn below the
//! plot, and a small collision check for labels placed by hand.

use super::FONT_FAMILY;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::fmt::Display;

/// A drawing error from plotters (backend, font or layout), as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DrawError(pub String);

impl DrawError {
    pub fn new(e: impl Display) -> Self {
        Self(e.to_string())
    }
}

pub(crate) type Drawn<T = ()> = Result<T, DrawError>;

/// Maps any plotters error into a [`DrawError`].
pub(crate) fn de(e: impl Display) -> DrawError {
    DrawError::new(e)
}

/// The series colours, in order (Tableau 10 without its grey).
pub const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),  // blue
    RGBColor(255, 127, 14),  // orange
    RGBColor(44, 160, 44),   // green
    RGBColor(214, 39, 40),   // red
    RGBColor(148, 103, 189), // purple
    RGBColor(140, 86, 75),   // brown
    RGBColor(227, 119, 194), // pink
    RGBColor(23, 190, 207),  // cyan
    RGBColor(188, 189, 34),  // olive
];
pub(crate) const BLUE_: RGBColor = PALETTE[0];
pub(crate) const ORANGE_: RGBColor = PALETTE[1];
pub(crate) const RED_: RGBColor = PALETTE[3];
/// Text and axes.
pub(crate) const INK: RGBColor = RGBColor(34, 34, 34);
/// Secondary text (notes, reference lines).
pub(crate) const MUTED: RGBColor = RGBColor(105, 105, 105);
pub(crate) const GRID_LIGHT: RGBColor = RGBColor(238, 238, 238);
pub(crate) const GRID_BOLD: RGBColor = RGBColor(215, 215, 215);

pub(crate) const TITLE_SIZE: f64 = 22.0;
pub(crate) const AXIS_DESC_SIZE: f64 = 16.0;
pub(crate) const TICK_SIZE: f64 = 13.0;
pub(crate) const LABEL_SIZE: f64 = 12.0;
pub(crate) const LEGEND_SIZE: f64 = 14.0;

/// Text in [`FONT_FAMILY`] of `size` and `color`.
pub(crate) fn text_style(size: f64, color: RGBColor) -> TextStyle<'static> {
    let mut style: TextStyle<'static> = (FONT_FAMILY, size).into_font().into();
    style.color = color.to_backend_color();
    style
}

pub(crate) fn text(size: f64) -> TextStyle<'static> {
    text_style(size, INK)
}

pub(crate) fn title_style() -> TextStyle<'static> {
    // `FontDesc::style` keeps the regular face's glyphs (plotters 0.3.7): ask for bold anew.
    let mut style: TextStyle<'static> =
        FontDesc::new(FONT_FAMILY.into(), TITLE_SIZE, FontStyle::Bold).into();
    style.color = INK.to_backend_color();
    style
}

pub(crate) fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A token count for an axis tick: `950`, `12k`, `1.5k`, `2.5M`.
pub(crate) fn compact(v: f64) -> String {
    let a = v.abs();
    if a < 1e3 && (v - v.round()).abs() > 1e-6 {
        // Tokens are whole: no tick between two of them.
        return String::new();
    }
    let (scaled, unit) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if (scaled - scaled.round()).abs() < 1e-6 {
        format!("{}", scaled.round() as i64)
    } else {
        format!("{scaled:.1}")
    };
    format!("{s}{unit}")
}

/// An axis tick that shows whole numbers only (turns, counts, rounds).
pub(crate) fn integer_tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 && *v >= -1e-6 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// How many ticks make every whole number in `lo..=hi` (when few) labelled.
pub(crate) fn integer_ticks(lo: f64, hi: f64) -> usize {
    let span = (hi - lo).max(1.0).ceil() as usize;
    (span + 1).min(16)
}

/// `s` cut to `max` characters, ending in `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` cut to `max` characters by dropping its middle (`…`), keeping how it starts and
/// ends (paths, commands).
pub(crate) fn truncate_middle(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max || max < 3 {
        return truncate(s, max);
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// The size in pixels `text` takes in `style`.
pub(crate) fn text_size<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> Drawn<(i32, i32)> {
    let (w, h) = area.estimate_text_size(text, style).map_err(de)?;
    Ok((w as i32, h as i32))
}

/// `text` shortened (with `…`) until it is at most `max_px` wide.
pub(crate) fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max_px: i32,
) -> Drawn<String> {
    let mut chars = text.chars().count();
    let mut candidate = text.to_string();
    while chars > 1 && text_size(area, &candidate, style)?.0 > max_px {
        chars -= 1;
        candidate = truncate(text, chars);
    }
    Ok(candidate)
}

/// A point in backend pixels made relative to `area` (for drawing on `area` directly).
pub(crate) fn relative<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
) -> (i32, i32) {
    let (bx, by) = area.get_base_pixel();
    (x - bx, y - by)
}

/// Draws a chart's axes and grid in the house style, once the chart has set its own
/// descriptions, ticks and formatters on `mesh`.
pub(crate) fn draw_mesh<X, Y, DB>(mesh: &mut plotters::chart::MeshStyle<'_, '_, X, Y, DB>) -> Drawn
where
    X: Ranged + plotters::coord::ranged1d::ValueFormatter<<X as Ranged>::ValueType>,
    Y: Ranged + plotters::coord::ranged1d::ValueFormatter<<Y as Ranged>::ValueType>,
    DB: DrawingBackend,
{
    mesh.max_light_lines(1)
        .axis_desc_style(text(AXIS_DESC_SIZE))
        .label_style(text(TICK_SIZE))
        .light_line_style(GRID_LIGHT)
        .bold_line_style(GRID_BOLD)
        .axis_style(INK)
        .draw()
        .map_err(de)
}

/// A note in the middle of the plotting area (given as absolute pixel ranges): an empty
/// chart says why it is empty.
pub(crate) fn note_in_plot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x_pixels, y_pixels): (std::ops::Range<i32>, std::ops::Range<i32>),
    message: &str,
) -> Drawn {
    let middle = (
        (x_pixels.start + x_pixels.end) / 2,
        (y_pixels.start + y_pixels.end) / 2,
    );
    note(area, relative(area, middle), message)
}

/// A line of text in the middle of a rectangle of `area` (pixels relative to `area`).
pub(crate) fn note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    center: (i32, i32),
    message: &str,
) -> Drawn {
    let style = anchored(text_style(18.0, MUTED), HPos::Center, VPos::Center);
    let (w, h) = text_size(area, message, &style)?;
    let (x, y) = center;
    let bg = Rectangle::new(
        [
            (x - w / 2 - 10, y - h / 2 - 8),
            (x + w / 2 + 10, y + h / 2 + 8),
        ],
        WHITE.filled(),
    );
    area.draw(&bg).map_err(de)?;
    area.draw(&Text::new(message.to_string(), center, style))
        .map_err(de)
}

/// The plot's area and the legend strip below it.
pub(crate) type PlotAndStrip<DB> = (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>);

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    Line(ShapeStyle),
    Dot(ShapeStyle, i32),
    Box(ShapeStyle),
    /// Text only (e.g. `+3 more families`).
    None,
}

/// A legend drawn in a strip below the plot, entries flowing left to right and wrapping.
#[derive(Debug, Default)]
pub(crate) struct Legend {
    entries: Vec<(Swatch, String)>,
}

const SWATCH_W: i32 = 28;
const SWATCH_GAP: i32 = 7;
const ENTRY_GAP: i32 = 26;
const ROW_H: i32 = 22;
const LEGEND_PAD: i32 = 8;
const LEGEND_LEFT: i32 = 24;

impl Legend {
    pub(crate) fn push(&mut self, swatch: Swatch, label: impl Into<String>) {
        self.entries.push((swatch, label.into()));
    }

    /// Each entry's (x, row), laid out for a strip `width` pixels wide.
    fn layout<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        width: i32,
    ) -> Drawn<Vec<(i32, i32, String)>> {
        let style = text(LEGEND_SIZE);
        let mut out = Vec::new();
        let (mut x, mut row) = (LEGEND_LEFT, 0);
        let max_w = width - 2 * LEGEND_LEFT;
        for (swatch, label) in &self.entries {
            let sw = if matches!(swatch, Swatch::None) {
                0
            } else {
                SWATCH_W + SWATCH_GAP
            };
            let label = fit(area, label, &style, max_w - sw)?;
            let w = sw + text_size(area, &label, &style)?.0;
            if x > LEGEND_LEFT && x + w > LEGEND_LEFT + max_w {
                row += 1;
                x = LEGEND_LEFT;
            }
            out.push((x, row, label));
            x += w + ENTRY_GAP;
        }
        Ok(out)
    }

    /// Splits `root` into the plot area and the legend strip below it (none when empty).
    pub(crate) fn split<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Drawn<PlotAndStrip<DB>> {
        if self.entries.is_empty() {
            return Ok((root.clone(), None));
        }
        let (w, h) = root.dim_in_pixel();
        let rows = self
            .layout(root, w as i32)?
            .iter()
            .map(|(_, row, _)| row + 1)
            .max()
            .unwrap_or(0);
        let height = rows * ROW_H + 2 * LEGEND_PAD;
        let (plot, strip) = root.split_vertically(h as i32 - height);
        Ok((plot, Some(strip)))
    }

    /// Draws the entries into the strip returned by [`Legend::split`].
    pub(crate) fn draw<DB: DrawingBackend>(&self, strip: &DrawingArea<DB, Shift>) -> Drawn {
        let (w, _) = strip.dim_in_pixel();
        let style = anchored(text(LEGEND_SIZE), HPos::Left, VPos::Center);
        let layout = self.layout(strip, w as i32)?;
        for ((swatch, _), (x, row, label)) in self.entries.iter().zip(layout) {
            let cy = LEGEND_PAD + row * ROW_H + ROW_H / 2;
            let (x0, x1) = (x, x + SWATCH_W);
            match *swatch {
                Swatch::Line(s) => strip.draw(&PathElement::new(vec![(x0, cy), (x1, cy)], s)),
                Swatch::Dot(s, r) => strip.draw(&Circle::new(((x0 + x1) / 2, cy), r, s)),
                Swatch::Box(s) => strip.draw(&Rectangle::new([(x0, cy - 7), (x1, cy + 7)], s)),
                Swatch::None => Ok(()),
            }
            .map_err(de)?;
            let tx = if matches!(swatch, Swatch::None) {
                x
            } else {
                x1 + SWATCH_GAP
            };
            strip
                .draw(&Text::new(label, (tx, cy), style.clone()))
                .map_err(de)?;
        }
        Ok(())
    }
}

/// Rectangles (pixels) already taken by hand-placed labels, points or a legend.
#[derive(Debug, Default)]
pub(crate) struct Occupied(Vec<(i32, i32, i32, i32)>);

impl Occupied {
    /// Whether `(x0, y0, x1, y1)` overlaps anything taken, with `gap` pixels to spare.
    pub(crate) fn collides(&self, r: (i32, i32, i32, i32), gap: i32) -> bool {
        self.0
            .iter()
            .any(|o| r.0 < o.2 + gap && o.0 < r.2 + gap && r.1 < o.3 + gap && o.1 < r.3 + gap)
    }

    pub(crate) fn take(&mut self, r: (i32, i32, i32, i32)) {
        self.0.push(r);
    }
}

/// Median and quartiles (medians of the lower and upper halves) of sorted values.
pub(crate) fn quartiles(sorted: &[u32]) -> Option<(f64, f64, f64)> {
    fn median(v: &[u32]) -> Option<f64> {
        match v.len() {
            0 => None,
            n if n % 2 == 1 => Some(f64::from(v[n / 2])),
            n => Some((f64::from(v[n / 2 - 1]) + f64::from(v[n / 2])) / 2.0),
        }
    }
    let n = sorted.len();
    let m = median(sorted)?;
    let lower = &sorted[..n / 2];
    let upper = &sorted[n.div_ceil(2)..];
    Some((median(lower).unwrap_or(m), m, median(upper).unwrap_or(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(123), "123");
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(0.5), "");
        assert_eq!(compact(12000.0), "12k");
        assert_eq!(compact(1500.0), "1.5k");
        assert_eq!(compact(2_500_000.0), "2.5M");
        assert_eq!(integer_tick(&3.0), "3");
        assert_eq!(integer_tick(&2.5), "");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate_middle("abcdefgh", 5), "ab…gh");
        assert_eq!(truncate_middle("abc", 5), "abc");
    }

    #[test]
    fn quartiles_of_small_sets() {
        assert_eq!(quartiles(&[]), None);
        assert_eq!(quartiles(&[4]), Some((4.0, 4.0, 4.0)));
        assert_eq!(quartiles(&[1, 3]), Some((1.0, 2.0, 3.0)));
        assert_eq!(quartiles(&[1, 2, 3, 4, 5]), Some((1.5, 3.0, 4.5)));
    }
}
