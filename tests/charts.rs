//! The charts on hand-made data: every file written, readable, and byte-identical on a
//! second write.

use hindsight::report::charts::{
    charts, write_all, ChartData, ChartKind, CorpusChart, Mark, RunChart, SweepPoint, Thresholds,
};
use std::collections::BTreeMap;
use std::path::Path;

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

fn thresholds() -> Thresholds {
    Thresholds {
        converging_warn: 2,
        stalled: 3,
        abandon: 5,
    }
}

fn failed_run() -> RunChart {
    let tokens: Vec<(u32, u64)> = (1..=24)
        .map(|t| (t, 4_000 + u64::from(t) * 1_150 + u64::from(t % 4) * 700))
        .collect();
    let mut rounds = BTreeMap::new();
    rounds.insert(
        "cargo build (workspace, package myactuator-driver, all targets)".to_string(),
        vec![(3, 1), (6, 2), (9, 3), (12, 4), (15, 5), (18, 6)],
    );
    rounds.insert(
        "cargo test".to_string(),
        vec![(4, 1), (8, 2), (13, 2), (16, 3)],
    );
    rounds.insert("edit src/lib.rs".to_string(), vec![(5, 1), (11, 1)]);
    rounds.insert("ls".to_string(), vec![(2, 0)]);
    RunChart {
        name: "myactuator/run-1".into(),
        tokens,
        measured: true,
        marks: vec![
            Mark::new(9, "convergence_breaker", "stalled", false),
            Mark::new(9, "diagnostic_delta", "stalled", false),
            Mark::new(10, "dedup_gate", "suppress", false),
            Mark::new(14, "convergence_breaker", "abandon", true),
            Mark::new(14, "directive_escalation", "escalate", false),
            Mark::new(14, "directive_escalation", "escalate", false),
            Mark::new(14, "evidence_folding", "fold", false),
            Mark::new(14, "stale_edit_recovery", "recover", false),
            Mark::new(15, "ledger_finalization", "finalize", false),
            Mark::new(20, "verified_completion", "terminal_incomplete", true),
        ],
        cut_at: Some(14),
        rounds,
        thresholds: thresholds(),
    }
}

fn healthy_run() -> RunChart {
    RunChart {
        name: "npm-app/run 2".into(),
        tokens: (1..=12).map(|t| (t, 2_000 + u64::from(t) * 300)).collect(),
        measured: false,
        marks: vec![Mark::new(6, "dedup_gate", "suppress", false)],
        cut_at: None,
        rounds: BTreeMap::new(),
        thresholds: thresholds(),
    }
}

fn data() -> ChartData {
    let mut first_fire = BTreeMap::new();
    first_fire.insert("convergence_breaker".to_string(), vec![9, 8, 9, 12, 6]);
    first_fire.insert("dedup_gate".to_string(), vec![10, 4]);
    first_fire.insert("verified_completion".to_string(), vec![20]);
    first_fire.insert("never_fired".to_string(), vec![]);
    ChartData {
        runs: vec![failed_run(), healthy_run()],
        corpus: CorpusChart {
            savings: vec![
                ("WO-3 (convergence_breaker)".into(), 95_200),
                ("WO-TD-04 (evidence_folding)".into(), 12_400),
                ("dedup gate (dedup_gate)".into(), 8_150),
                ("fixes 16-17 (verified_completion)".into(), 4_000),
                ("WO-5 (compaction_policy)".into(), 0),
                ("all guards (combined)".into(), 101_300),
            ],
            first_fire,
            runs: 6,
        },
        sweep: Some(vec![
            point("stalled=2 abandon=4", 120_000, 3, false),
            point("stalled=3 abandon=5", 101_300, 0, true),
            point("stalled=3 abandon=6", 90_000, 0, false),
            point("stalled=4 abandon=6", 90_000, 0, false),
            point("stalled=2 abandon=5", 110_000, 1, false),
            SweepPoint {
                saved_interval: Some([20_000, 60_000]),
                false_terminal_interval: Some([0.0, 1.2]),
                ..point("stalled=5 abandon=8", 40_000, 0, false)
            },
        ]),
    }
}

fn point(label: &str, saved: u64, false_fires: u64, is_default: bool) -> SweepPoint {
    SweepPoint {
        saved_interval: None,
        false_terminal_interval: None,
        label: label.into(),
        tokens_saved_on_failed: saved,
        false_terminal_on_healthy: false_fires,
        is_default,
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where to keep the charts for a look: `HINDSIGHT_CHARTS_DIR`, else a temporary directory.
fn out_dir(tmp: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    match std::env::var_os("HINDSIGHT_CHARTS_DIR") {
        Some(dir) => Path::new(&dir).join(name),
        None => tmp.path().join(name),
    }
}

#[test]
fn every_chart_is_written_readable_and_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let data = data();
    let first = write_all(&data, &out_dir(&tmp, "a")).unwrap();
    let stems: Vec<&str> = first.iter().map(|f| f.stem.as_str()).collect();
    assert_eq!(
        stems,
        [
            "savings",
            "first-fire",
            "sweep",
            "tokens-myactuator-run-1",
            "convergence-myactuator-run-1",
            "tokens-npm-app-run-2",
            "convergence-npm-app-run-2",
        ]
    );
    let kinds: Vec<ChartKind> = first.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            ChartKind::Savings,
            ChartKind::FirstFire,
            ChartKind::Sweep,
            ChartKind::Tokens,
            ChartKind::Convergence,
            ChartKind::Tokens,
            ChartKind::Convergence,
        ]
    );
    for file in &first {
        let svg = file.svg_text().unwrap();
        assert!(svg.contains("<svg"), "{}", file.stem);
        assert!(
            svg.contains(&file.title),
            "{}: title {:?} missing",
            file.stem,
            file.title
        );
        let png = read(&file.png_path);
        assert!(png.starts_with(PNG_MAGIC), "{}", file.stem);
        assert!(png.len() > 10_000, "{}: {} bytes", file.stem, png.len());
    }

    let svg_of = |stem: &str| {
        first
            .iter()
            .find(|f| f.stem == stem)
            .unwrap()
            .svg_text()
            .unwrap()
    };
    let tokens = svg_of("tokens-myactuator-run-1");
    for needle in [
        "tokens per request",
        "turn",
        "saved by the earliest terminal firing (turn 14)",
        // The breaker's lane, and its terminal firing labelled (issue #16).
        ">\nconvergence_breaker\n<",
        ">\nabandon\n<",
    ] {
        assert!(tokens.contains(needle), "tokens chart lacks {needle:?}");
    }
    assert!(svg_of("tokens-npm-app-run-2").contains("tokens per request (estimated)"));
    let convergence = svg_of("convergence-myactuator-run-1");
    for needle in [
        "converging_warn (2)",
        "stalled (3)",
        "abandon (5)",
        "cargo test",
    ] {
        assert!(convergence.contains(needle), "convergence lacks {needle:?}");
    }
    assert!(
        !convergence.contains(">ls<"),
        "a family that never counted a round"
    );
    assert!(svg_of("convergence-npm-app-run-2").contains("no failing family"));
    assert!(svg_of("savings").contains("tokens saved (counterfactual)"));
    let first_fire = svg_of("first-fire");
    assert!(first_fire.contains("first-fire turn"));
    assert!(!first_fire.contains("never_fired"));
    let sweep = svg_of("sweep");
    assert!(sweep.contains("default thresholds"));
    // Issue #29: a point with intervals draws them, and the legend says what they are.
    assert!(sweep.contains("95% interval (bootstrap over projects)"));

    // Same data, same bytes.
    let second = write_all(&data, &out_dir(&tmp, "b")).unwrap();
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(read(&a.svg_path), read(&b.svg_path), "{}.svg", a.stem);
        assert_eq!(read(&a.png_path), read(&b.png_path), "{}.png", a.stem);
    }
}

#[test]
fn empty_data_draws_notes_instead_of_failing() {
    let tmp = tempfile::tempdir().unwrap();
    let empty_run = RunChart {
        name: "empty".into(),
        tokens: vec![],
        measured: false,
        marks: vec![],
        cut_at: None,
        rounds: BTreeMap::new(),
        thresholds: thresholds(),
    };
    let data = ChartData {
        runs: vec![empty_run],
        corpus: CorpusChart {
            savings: vec![],
            first_fire: BTreeMap::new(),
            runs: 0,
        },
        sweep: Some(vec![]),
    };
    let files = write_all(&data, &out_dir(&tmp, "empty")).unwrap();
    assert_eq!(files.len(), 5);
    let notes = [
        "no savings recorded",
        "no guard fired",
        "no sweep settings",
        "no turns recorded",
        "no failing family",
    ];
    for (file, note) in files.iter().zip(notes) {
        assert!(file.svg_text().unwrap().contains(note), "{}", file.stem);
        assert!(read(&file.png_path).starts_with(PNG_MAGIC));
    }
}

#[test]
fn svg_text_is_available_without_writing() {
    let data = data();
    let specs = charts(&data);
    let svg = specs[0].svg().unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains(&specs[0].title));
}

/// The charts of the shipped corpora: built from a real replay, every one drawn.
#[test]
fn shipped_corpora_chart_without_error() {
    use hindsight::config::Config;
    use hindsight::ingest::{discover, Policy};
    use hindsight::replay::replay_all;
    use hindsight::report::Report;

    // Relative, as on the command line (cargo runs tests in the package root), so the
    // run names, titles and stems do not carry this machine's path.
    let projects = discover(&[Path::new("corpora").to_path_buf()]).expect("discover corpora/");
    let config = Config::default();
    let runs = replay_all(&projects, &config, Policy::Strict, &|| {}).expect("replay");
    let report = Report::build(&runs, &hindsight::cost::Prices::built_in());
    let every_run: Vec<usize> = (0..runs.len()).collect();
    let data = ChartData::build(&runs, &report, &config, &every_run, None);
    let tmp = tempfile::tempdir().unwrap();
    let files = write_all(&data, &out_dir(&tmp, "corpora")).unwrap();
    assert_eq!(files.len(), 2 + 2 * runs.len());
    for file in &files {
        assert!(read(&file.png_path).starts_with(PNG_MAGIC), "{}", file.stem);
    }
}
