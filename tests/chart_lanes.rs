//! The tokens chart stays readable on long runs (issue #16): a synthetic 500-turn run with
//! twenty guards firing, one of them on every turn, and a terminal cut. Checked from the
//! SVG: no two texts overlap, the token curve is drawn above every firing lane, a guard
//! firing every turn is one band (not hundreds of ticks), and the terminal cut is a tick in
//! the terminal colour.

use hindsight::guards::registry;
use hindsight::report::charts::{ChartKind, ChartSpec, Mark, RunChart, Source, Thresholds};

const TURNS: u32 = 500;
/// The colours the chart draws firings in (tokens.rs `OTHER`, the palette's red).
const FIRING: &str = "#B06800";
const TERMINAL: &str = "#D62728";
/// The token curve's colour (the palette's blue).
const CURVE: &str = "#1F77B4";

/// 500 turns of a growing context; `evidence_folding` folds on every turn, the breaker
/// stalls at 120 and abandons at 180 (the cut), and every other guard fires a few times.
fn long_run() -> RunChart {
    let mut marks: Vec<Mark> = (1..=TURNS)
        .map(|t| Mark::new(t, "evidence_folding", "fold", false))
        .collect();
    marks.push(Mark::new(120, "convergence_breaker", "stalled", false));
    marks.push(Mark::new(180, "convergence_breaker", "abandon", true));
    marks.push(Mark::new(121, "diagnostic_delta", "stalled", false));
    marks.push(Mark::new(181, "diagnostic_delta", "abandon", true));
    // A sub-agent's abandon two turns after the stall: its label has no room beside it.
    marks.push(Mark::new(123, "diagnostic_delta", "abandon", false));
    let others = registry().into_iter().map(|e| e.info.id).filter(|g| {
        ![
            "evidence_folding",
            "convergence_breaker",
            "diagnostic_delta",
        ]
        .contains(g)
    });
    for (i, guard) in others.enumerate() {
        for k in 0..4u32 {
            let turn = (7 + i as u32 * 23 + k * 97) % TURNS + 1;
            marks.push(Mark::new(turn, guard, "advise", false));
        }
    }
    RunChart {
        name: "long-run".into(),
        tokens: (1..=TURNS)
            .map(|t| (t, 20_000 + u64::from(t) * 300))
            .collect(),
        measured: true,
        marks,
        cut_at: Some(180),
        rounds: Default::default(),
        thresholds: Thresholds {
            converging_warn: 2,
            stalled: 3,
            abandon: 5,
        },
    }
}

fn svg(run: &RunChart) -> String {
    let spec = ChartSpec {
        kind: ChartKind::Tokens,
        title: "tokens".into(),
        stem: "tokens-long-run".into(),
        source: Source::Tokens(run),
    };
    spec.svg().expect("drawn")
}

/// One SVG element: its tag and attributes, and its text content.
struct Element {
    tag: String,
    attrs: Vec<(String, String)>,
    content: String,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn num(&self, name: &str) -> f64 {
        self.attr(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("<{}> has no number `{name}`", self.tag))
    }
}

/// The elements of plotters' SVG output (one element per tag, no nesting but `<svg>`).
fn elements(svg: &str) -> Vec<Element> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let end = rest.find('>').expect("a closed tag");
        let tag_text = &rest[..end];
        rest = &rest[end + 1..];
        if tag_text.starts_with('/') || tag_text.starts_with('?') {
            continue;
        }
        let (tag, attrs) = tag_text.split_once(' ').unwrap_or((tag_text, ""));
        let mut parsed = Vec::new();
        for pair in attrs.split("\" ") {
            if let Some((k, v)) = pair.trim().split_once("=\"") {
                parsed.push((k.to_string(), v.trim_end_matches(['"', '/']).to_string()));
            }
        }
        let content = if tag == "text" {
            let close = rest.find("</text>").expect("closed text");
            let c = rest[..close].trim().to_string();
            rest = &rest[close..];
            c
        } else {
            String::new()
        };
        out.push(Element {
            tag: tag.to_string(),
            attrs: parsed,
            content,
        });
    }
    out
}

/// A text's box in pixels (x0, y0, x1, y1), from its anchor, baseline shift and size; a
/// character is taken as 0.6 of the font size wide (DejaVu Sans is narrower on average).
fn text_box(e: &Element) -> (f64, f64, f64, f64) {
    let (x, y, size) = (e.num("x"), e.num("y"), e.num("font-size"));
    let w = e.content.chars().count() as f64 * size * 0.6;
    let x0 = match e.attr("text-anchor") {
        Some("middle") => x - w / 2.0,
        Some("end") => x - w,
        _ => x,
    };
    // plotters anchors: dy="0.76em" is the top, dy="0.5ex" the middle, none the baseline.
    let top = match e.attr("dy") {
        Some("0.76em") => y,
        Some("0.5ex") => y - size / 2.0,
        _ => y - size * 0.8,
    };
    if e.attr("transform")
        .is_some_and(|t| t.starts_with("rotate(270"))
    {
        // Turned a quarter anticlockwise about (x, y): the width runs upwards.
        let (cx, cy) = (x, y);
        return (cx - size / 2.0, cy - w / 2.0, cx + size / 2.0, cy + w / 2.0);
    }
    (x0, top, x0 + w, top + size)
}

fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

#[test]
fn no_two_texts_overlap_on_a_500_turn_run() {
    let svg = svg(&long_run());
    let texts: Vec<Element> = elements(&svg)
        .into_iter()
        .filter(|e| e.tag == "text" && !e.content.is_empty())
        .collect();
    assert!(
        texts.len() > 40,
        "axis ticks, lane names, labels: {}",
        texts.len()
    );
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            assert!(
                !overlap(text_box(a), text_box(b)),
                "`{}` {:?} overlaps `{}` {:?}",
                a.content,
                text_box(a),
                b.content,
                text_box(b)
            );
        }
    }
    // Every guard has its lane, named; the course changes are labelled.
    let content: Vec<&str> = texts.iter().map(|t| t.content.as_str()).collect();
    for guard in registry().iter().map(|e| e.info.id) {
        assert!(
            content
                .iter()
                .any(|c| c.trim_end_matches('…') == guard
                    || guard.starts_with(c.trim_end_matches('…'))),
            "lane of {guard}"
        );
    }
    assert!(content.contains(&"abandon") && content.contains(&"stalled"));
    assert!(
        !content.contains(&"fold"),
        "a firing every turn is not labelled"
    );
}

#[test]
fn the_curve_is_drawn_above_the_lanes_and_every_turn_is_one_band() {
    let svg = svg(&long_run());
    let all = elements(&svg);
    let curve = all
        .iter()
        .filter(|e| e.tag == "polyline" && e.attr("stroke") == Some(CURVE))
        .max_by_key(|e| e.attr("points").map_or(0, str::len))
        .expect("the token curve");
    let curve_bottom = curve
        .attr("points")
        .expect("points")
        .split_whitespace()
        .filter_map(|p| p.split_once(',')?.1.parse::<f64>().ok())
        .fold(f64::MIN, f64::max);
    let firings: Vec<&Element> = all
        .iter()
        .filter(|e| e.tag == "rect" && matches!(e.attr("fill"), Some(FIRING | TERMINAL)))
        .collect();
    assert!(!firings.is_empty());
    for f in &firings {
        assert!(
            f.num("y") > curve_bottom,
            "a firing mark at y {} above the curve's bottom {curve_bottom}",
            f.num("y")
        );
    }
    // The lanes (above the turn axis's title; the legend is below it): 20 guards' ticks,
    // evidence_folding's 500 firings as one wide band, and the terminal cuts (two guards
    // abandon) in the terminal colour.
    let axis_title = all
        .iter()
        .find(|e| e.tag == "text" && e.content == "turn")
        .expect("the turn axis")
        .num("y");
    let lane_marks = firings.iter().filter(|f| f.num("y") < axis_title);
    let wide = lane_marks
        .clone()
        .filter(|f| f.num("width") > 500.0)
        .count();
    assert_eq!(wide, 1, "one band for the guard firing every turn");
    assert!(lane_marks.clone().count() < 100, "ticks, not hundreds");
    let terminal = lane_marks
        .filter(|f| f.attr("fill") == Some(TERMINAL))
        .count();
    assert_eq!(terminal, 2, "the two abandons");
}

#[test]
fn the_png_draws_the_same_layout() {
    let run = long_run();
    let spec = ChartSpec {
        kind: ChartKind::Tokens,
        title: "tokens".into(),
        stem: "tokens-long-run".into(),
        source: Source::Tokens(&run),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tokens.png");
    spec.write_png(&path).expect("written");
    let png = std::fs::read(&path).expect("read");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    // Written twice, byte for byte the same.
    let again = dir.path().join("again.png");
    spec.write_png(&again).expect("written");
    assert_eq!(png, std::fs::read(&again).expect("read"));
    if let Some(keep) = std::env::var_os("HINDSIGHT_KEEP_CHART") {
        std::fs::copy(&path, keep).expect("kept");
    }
}
