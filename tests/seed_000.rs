//! Acceptance lines of seed 000 (`000_053cae7e53b598d3.txt`): WO-9 (both tables, the
//! escalation lines, resolve), WO-3 and the root refinement, as tests.
//!
//! Genericity (WO-9 rule 4): every behaviour is shown on several ecosystems; the seed's
//! own `pio` rows appear only because they are rows of its tables.

mod common;

use common::{firings, replay_sessions};
use hindsight::config::Config;
use hindsight::guards::convergence::{Breaker, Progress, Thresholds, Tier};
use hindsight::guards::Effect;
use hindsight::ingest::{discover, Policy};
use hindsight::normalize::family::families;
use hindsight::normalize::shell::normalize_shell_for_family;
use hindsight::normalize::{RunState, ToolKind};
use hindsight::replay::{replay_project, RunReplay};
use hindsight::synth::Run;
use serde_json::json;

const ABS: &str = "/home/dev/proj";

/// The canonical convergence family of a shell command run in `cwd`.
fn family(command: &str, cwd: &str) -> String {
    let args = json!({ "command": command });
    families(
        ToolKind::Shell,
        "shell",
        args.as_object().expect("object"),
        None,
        Some(cwd),
    )
    .action
}

fn abs(s: &str) -> String {
    s.replace("<abs>", ABS)
}

// ---------------------------------------------------------------- WO-9 genericity table

/// (base, variants that must MERGE, cwd) — seed 000, WO-9 "Acceptance", genericity table,
/// row for row; `<abs>` is the run's absolute project root.
const MUST_MERGE: &[(&str, &[&str], &str)] = &[
    (
        "npm test",
        &["npm test 2>&1", "npm test | tail -50"],
        "<abs>",
    ),
    (
        "cargo build",
        &["cargo build 2>&1 | head", "cargo build 2>/dev/null"],
        "<abs>",
    ),
    (
        "cd firmware && pio run",
        &[
            "cd <abs>/firmware && pio run 2>&1",
            "cd <abs>/firmware && pio run | tail",
        ],
        "<abs>",
    ),
    (
        "pytest -q",
        &["pytest -q 2>&1", "pytest -q | tail -80"],
        "<abs>",
    ),
    ("make", &["make 2>/dev/null", "cd <abs> && make"], "<abs>"),
    ("go test ./...", &["go test ./... 2>&1 | tail"], "<abs>"),
    (
        "pio run",
        &[
            "pio run 2>&1",
            "cd <abs>/firmware/esp32 && pio run | tail -100",
        ],
        "<abs>/firmware/esp32",
    ),
];

#[test]
fn wo9_genericity_table_every_variant_merges_with_its_base() {
    for (base, variants, cwd) in MUST_MERGE {
        let cwd = abs(cwd);
        let want = family(base, &cwd);
        for variant in *variants {
            assert_eq!(
                family(&abs(variant), &cwd),
                want,
                "`{variant}` must merge with `{base}`"
            );
        }
    }
}

/// Seed 000, WO-9 9a's worked examples.
#[test]
fn wo9_design_examples() {
    assert_eq!(
        family("npm test 2>&1 | tail -50", ABS),
        family("npm test", ABS)
    );
    assert_eq!(family("cargo build 2>&1", ABS), family("cargo build", ABS));
    let with_tee = family(&abs("cd <abs>/svc && pytest -q | tee log"), ABS);
    assert_eq!(with_tee, family("cd svc && pytest -q | tee log", ABS));
    // Only the `cd` path form is normalized: `-q` and the writing `tee` stay.
    assert_eq!(with_tee, "shell:cd svc && pytest -q | tee log");
}

/// The live incident that motivated WO-9: three families at rounds=1 become one.
#[test]
fn wo9_origin_three_variants_are_one_family() {
    let cwd = "/home/dev/actuator";
    let variants = [
        "cd firmware/esp32 && pio run 2>&1 | tail -100",
        "cd firmware/esp32 && pio run 2>&1",
        "cd /home/dev/actuator/firmware/esp32 && pio run",
    ];
    let keys: std::collections::BTreeSet<String> =
        variants.iter().map(|v| family(v, cwd)).collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
}

// ---------------------------------------------------------------- WO-9 non-merge table

/// Seed 000, WO-9 "Non-merge table" plus rule 3's examples: must stay DISTINCT.
const MUST_STAY_DISTINCT: &[(&str, &str)] = &[
    ("npm test", "npm run test:e2e"),
    ("make", "make clean"),
    ("go build ./a", "go build ./b"),
    ("cargo build -e x", "cargo build -e y"),
    ("npm test", "npm test -- --grep auth"),
];

#[test]
fn wo9_non_merge_table_stays_distinct() {
    for (a, b) in MUST_STAY_DISTINCT {
        assert_ne!(
            family(a, ABS),
            family(b, ABS),
            "`{a}` and `{b}` must stay distinct"
        );
        // Decoration on either side must not merge them either.
        assert_ne!(
            family(&format!("{a} 2>&1 | tail"), ABS),
            family(&format!("{b} 2>/dev/null"), ABS)
        );
    }
}

#[test]
fn normalizer_is_idempotent_on_every_table_entry() {
    let all = MUST_MERGE
        .iter()
        .flat_map(|(b, vs, _)| std::iter::once(*b).chain(vs.iter().copied()))
        .chain(MUST_STAY_DISTINCT.iter().flat_map(|(a, b)| [*a, *b]));
    for cmd in all {
        let once = normalize_shell_for_family(&abs(cmd), Some(ABS));
        assert_eq!(normalize_shell_for_family(&once, Some(ABS)), once, "{cmd}");
    }
}

// ---------------------------------------------------------------- replay helpers

fn turns_of(run: &RunReplay, guard: &str, action: &str) -> Vec<u32> {
    firings(run, guard)
        .iter()
        .filter(|f| f.action == action)
        .map(|f| f.turn)
        .collect()
}

/// A run in which `variants` of one command fail in turn, one per turn.
fn failing(cwd: &str, variants: &[String], output: &str) -> Run {
    let mut run = Run::new("1780000000000-t", cwd, 100);
    for v in variants {
        run.turn(10).shell(v, false, output);
    }
    run
}

/// Five cosmetic variants of `base` (never the same string twice).
fn five_variants(base: &str) -> Vec<String> {
    vec![
        base.to_string(),
        format!("{base} 2>&1"),
        format!("{base} | tail -50"),
        format!("cd {ABS} && {base} 2>/dev/null"),
        format!("{base} 2>&1 | head -20"),
    ]
}

// ---------------------------------------------------------------- WO-9 escalation lines

/// "For any base, three varied failures → one family, rounds 3 → stalled; a 5th →
/// abandon → terminal_incomplete (validated with a non-pio base, e.g. npm test)."
#[test]
fn wo9_varied_failures_escalate_for_any_base() {
    for base in [
        "npm test",
        "cargo build",
        "pytest -q",
        "make",
        "go test ./...",
    ] {
        let runs = replay_sessions(
            &[failing(ABS, &five_variants(base), "exit status 1")],
            &Config::default(),
        );
        let run = &runs[0];
        assert_eq!(
            turns_of(run, "convergence_breaker", "stalled"),
            vec![3],
            "{base}"
        );
        assert_eq!(
            turns_of(run, "convergence_breaker", "abandon"),
            vec![5],
            "{base}"
        );
        let abandon = firings(run, "convergence_breaker")
            .into_iter()
            .find(|f| f.action == "abandon")
            .expect("abandon");
        assert_eq!(abandon.effect, Effect::Terminal);
        assert!(abandon
            .detail
            .as_deref()
            .unwrap_or_default()
            .contains("terminal_incomplete"));
        assert_eq!(
            abandon.family.as_deref(),
            Some(format!("shell:{base}").as_str())
        );
    }
}

/// "A successful verification command clears the family (resolve()), so a later
/// unrelated failure starts at round 1."
#[test]
fn wo9_resolve_on_success_clears_the_family() {
    let mut run = Run::new("1780000000000-r", ABS, 100);
    run.turn(10).shell(
        "cargo test",
        false,
        "test result: FAILED. 1 passed; 2 failed",
    );
    run.turn(10).shell(
        "cargo test 2>&1",
        false,
        "test result: FAILED. 2 passed; 1 failed",
    );
    run.turn(10).shell(
        "cargo test | tail",
        true,
        "test result: ok. 3 passed; 0 failed",
    );
    run.turn(10).shell(
        "cargo test",
        false,
        "test result: FAILED. 2 passed; 1 failed",
    );
    run.turn(10).shell(
        "cargo test",
        false,
        "test result: FAILED. 2 passed; 1 failed",
    );
    let runs = replay_sessions(&[run], &Config::default());
    // Two failures after the success: rounds 2, not 4. Nothing escalates.
    assert!(
        firings(&runs[0], "convergence_breaker").is_empty(),
        "{:?}",
        runs[0].firings
    );

    let mut breaker = Breaker::new(Thresholds::default(), Progress::Mutation);
    let mut state = RunState::new();
    let mut trajectory = Run::new("1780000000000-b", ABS, 100);
    trajectory.turn(1).shell("make check", false, "FAIL");
    trajectory.turn(1).shell("make check", true, "ok");
    trajectory.turn(1).shell("make check", false, "FAIL");
    let loaded = trajectory.to_loaded();
    let mut after_results = Vec::new();
    for event in &loaded.events {
        let norm = state.step(event);
        breaker.observe(&norm);
        if matches!(norm.step, hindsight::normalize::Step::Result { .. }) {
            after_results.push(breaker.rounds("main", "shell:make check"));
        }
    }
    assert_eq!(after_results, vec![1, 0, 1]);
}

// ---------------------------------------------------------------- WO-3

/// "Same family observed 5× (across a simulated session boundary) → verdict abandon."
#[test]
fn wo3_five_rounds_across_a_session_boundary_abandon() {
    let variants = five_variants("npm run lint");
    let s1 = failing(ABS, &variants[..3], "✖ 4 problems (4 errors, 0 warnings)");
    let mut s2 = failing(ABS, &variants[3..], "✖ 4 problems (4 errors, 0 warnings)");
    s2.id = "1780000000001-s2".into();
    let runs = replay_sessions(&[s1, s2], &Config::default());
    assert_eq!(
        turns_of(&runs[0], "convergence_breaker", "stalled"),
        vec![3]
    );
    assert!(turns_of(&runs[0], "convergence_breaker", "abandon").is_empty());
    assert_eq!(
        turns_of(&runs[1], "convergence_breaker", "abandon"),
        vec![2]
    );
}

/// "A productive mutation between failures decays the count (no false abandon)."
#[test]
fn wo3_productive_mutation_decays_the_count() {
    let mut run = Run::new("1780000000000-m", ABS, 100);
    for i in 0..6 {
        run.turn(10).shell("make", false, "make: *** [all] Error 2");
        run.turn(10).edit(
            "src/main.c",
            &format!("int v{i};"),
            &format!("long v{i};"),
            Ok("applied"),
        );
    }
    let runs = replay_sessions(&[run], &Config::default());
    assert!(
        firings(&runs[0], "convergence_breaker").is_empty(),
        "{:?}",
        runs[0].firings
    );
}

/// "Cross-session: store round-trips the carry; a fresh breaker seeded from the store
/// trips on round 1": with 4 rounds carried, the resumed session abandons on its first
/// failure.
#[test]
fn wo3_resumed_session_trips_on_its_first_round() {
    let variants = five_variants("go vet ./...");
    let s1 = failing(ABS, &variants[..4], "vet: x.go:3:1: unreachable code");
    let mut s2 = failing(ABS, &variants[4..], "vet: x.go:3:1: unreachable code");
    s2.id = "1780000000001-s2".into();
    let runs = replay_sessions(&[s1, s2], &Config::default());
    assert_eq!(
        turns_of(&runs[1], "convergence_breaker", "abandon"),
        vec![1]
    );
}

/// The project's recorded store as `.omnius/convergence-ledger.json`, with `runs` beside it.
fn project_with_store(runs: &[Run], store: serde_json::Value) -> Vec<RunReplay> {
    let dir = tempfile::tempdir().expect("tempdir");
    let omnius = dir.path().join("p/.omnius");
    for run in runs {
        run.write_to(&omnius);
    }
    std::fs::write(omnius.join("convergence-ledger.json"), store.to_string()).expect("store");
    let projects = discover(&[dir.path().join("p")]).expect("discover");
    replay_project(&projects[0], &Config::default(), Policy::Strict, &|| {}).expect("replay")
}

/// "A fresh breaker seeded from the store trips on round 1", from the recording alone:
/// the store (keyed as the harness keyed it, error class and all) holds 5 rounds of a
/// family, the recorded run rebuilds 1, so 4 came from runs no longer recorded and the
/// recorded failure is the family's 5th round. The report says where they came from.
#[test]
fn wo3_breaker_seeded_from_the_recorded_store_trips_on_round_1() {
    for (cwd, command, key, output) in [
        (
            "/w/shop",
            "npm test 2>&1 | tail -30",
            "shell:npm test:tool_failed",
            "Tests: 2 failed",
        ),
        (
            "/w/crate",
            "cargo build",
            "shell:cd /w/crate && cargo build 2>&1:tool_failed",
            "error[E0425]: x",
        ),
        (
            "/w/api",
            "pytest -q",
            "shell:pytest -q :tool_failed",
            "1 failed, 3 passed",
        ),
    ] {
        let mut run = Run::new("1780000000000-resumed", cwd, 100);
        run.turn(10).shell(command, false, output);
        let store = json!({"version": 1, "families": {key: {"rounds": 5}}});
        let runs = project_with_store(&[run], store);
        let abandon: Vec<_> = firings(&runs[0], "convergence_breaker")
            .into_iter()
            .filter(|f| f.action == "abandon")
            .collect();
        assert_eq!(abandon.len(), 1, "{command}: {:?}", runs[0].firings);
        assert_eq!(abandon[0].turn, 1);
        assert!(
            abandon[0].detail.as_deref().is_some_and(
                |d| d.contains("5 rounds (4 carried from the recorded convergence ledger)")
            ),
            "{:?}",
            abandon[0].detail
        );
        let carried = &runs[0].metrics["convergence_breaker"]["carried_from_store"];
        assert_eq!(carried.as_object().map(|m| m.len()), Some(1), "{carried}");
    }
}

/// A store whose rounds the recorded runs rebuild carries nothing extra in: the same
/// rounds are not counted twice.
#[test]
fn wo3_store_rounds_the_runs_rebuild_are_not_counted_twice() {
    let mut run = Run::new("1780000000000-whole", "/w/svc", 100);
    for command in [
        "go test ./...",
        "go test ./... 2>&1",
        "go test ./... | tail",
    ] {
        run.turn(10)
            .shell(command, false, "--- FAIL: TestX (0.00s)\nFAIL");
    }
    let store =
        json!({"version": 1, "families": {"shell:go test ./...:tool_failed": {"rounds": 3}}});
    let runs = project_with_store(&[run], store);
    assert_eq!(
        turns_of(&runs[0], "convergence_breaker", "stalled"),
        vec![3]
    );
    assert!(turns_of(&runs[0], "convergence_breaker", "abandon").is_empty());
    let metrics = runs[0].metrics.get("convergence_breaker");
    assert!(metrics.is_none_or(|m| m.get("carried_from_store").is_none()));
}

/// Every threshold is configurable; the tiers follow it.
#[test]
fn wo3_thresholds_are_configurable() {
    let mut config = Config::default();
    config.set("convergence_breaker.stalled=2").expect("set");
    config.set("convergence_breaker.abandon=3").expect("set");
    let runs = replay_sessions(
        &[failing(ABS, &five_variants("npm test"), "Tests: 1 failed")],
        &config,
    );
    assert_eq!(
        turns_of(&runs[0], "convergence_breaker", "stalled"),
        vec![2]
    );
    assert_eq!(
        turns_of(&runs[0], "convergence_breaker", "abandon"),
        vec![3]
    );
    let t = Thresholds::default();
    assert_eq!(
        [1, 2, 3, 4, 5].map(|r| t.tier(r)),
        [
            Tier::Healthy,
            Tier::ConvergingWarn,
            Tier::Stalled,
            Tier::Stalled,
            Tier::Abandon
        ]
    );
}

// ---------------------------------------------------------------- root refinement

/// An edit that lands, then a rebuild whose output is `output`, `n` times.
fn edit_build_loop(command: &str, outputs: &[String]) -> Run {
    let mut run = Run::new("1780000000000-l", ABS, 100);
    for (i, out) in outputs.iter().enumerate() {
        run.turn(10).edit(
            "src/lib.ts",
            &format!("let a{i} = 1"),
            &format!("let b{i} = 1"),
            Ok("applied"),
        );
        run.turn(10).shell(command, false, out);
    }
    run
}

fn tsc(n: usize) -> String {
    (0..n)
        .map(|i| format!("src/lib.ts({i},1): error TS2322: Type 'string' is not assignable\n"))
        .collect()
}

fn pytest(failed: usize) -> String {
    format!("FAILED tests/test_api.py::test_{failed}\n{failed} failed, 9 passed in 0.21s\n")
}

fn gcc(n: usize) -> String {
    (0..n)
        .map(|i| format!("src/io.c:{i}:5: error: unknown type name 'buf_t'\n"))
        .collect()
}

/// "stagnant → escalate" and "signal-over-mutation authority": the same error count after
/// every landed edit escalates, although each edit is a mutation.
#[test]
fn root_refinement_futile_edit_loops_escalate() {
    let cases: [(&str, Vec<String>); 3] = [
        ("npx tsc --noEmit", (0..5).map(|_| tsc(3)).collect()),
        ("pytest -q", (0..5).map(|_| pytest(2)).collect()),
        ("make", (0..5).map(|_| gcc(4)).collect()),
    ];
    for (command, outputs) in cases {
        let runs = replay_sessions(&[edit_build_loop(command, &outputs)], &Config::default());
        assert_eq!(
            turns_of(&runs[0], "diagnostic_delta", "stalled"),
            vec![6],
            "{command}"
        );
        assert_eq!(
            turns_of(&runs[0], "diagnostic_delta", "abandon"),
            vec![10],
            "{command}"
        );
        // WO-3's mutation rule treats each edit as progress: the loop looks healthy.
        assert!(
            firings(&runs[0], "convergence_breaker").is_empty(),
            "{command}"
        );
    }
}

/// "dropping → hold": a loop whose error count falls never escalates.
#[test]
fn root_refinement_falling_error_count_holds() {
    let cases: [(&str, Vec<String>); 3] = [
        ("npx tsc --noEmit", [6, 5, 4, 3, 2, 1].map(tsc).to_vec()),
        ("pytest -q", [6, 5, 4, 3, 2, 1].map(pytest).to_vec()),
        ("cargo check", [6, 5, 4, 3, 2, 1].map(gcc).to_vec()),
    ];
    for (command, outputs) in cases {
        let runs = replay_sessions(&[edit_build_loop(command, &outputs)], &Config::default());
        assert!(
            firings(&runs[0], "diagnostic_delta").is_empty(),
            "{command}: {:?}",
            runs[0].firings
        );
    }
}

/// "worsening → escalate fastest": a rising count reaches stalled a round earlier.
#[test]
fn root_refinement_worsening_escalates_fastest() {
    let rising = [1, 2, 3, 4, 5].map(tsc).to_vec();
    let runs = replay_sessions(
        &[edit_build_loop("npx tsc --noEmit", &rising)],
        &Config::default(),
    );
    // rounds 1, 3 (stalled at the 2nd failure, turn 4), 5 (abandon at the 3rd, turn 6).
    assert_eq!(turns_of(&runs[0], "diagnostic_delta", "stalled"), vec![4]);
    assert_eq!(turns_of(&runs[0], "diagnostic_delta", "abandon"), vec![6]);
}

/// Without a signal the refinement falls back to the mutation rule ("legacy behavior
/// preserved"): crashes with no diagnostics between landed edits do not escalate.
#[test]
fn root_refinement_without_signal_falls_back_to_mutations() {
    let outputs: Vec<String> = (0..6)
        .map(|_| "Segmentation fault (core dumped)".to_string())
        .collect();
    let runs = replay_sessions(
        &[edit_build_loop("./run_sim", &outputs)],
        &Config::default(),
    );
    assert!(firings(&runs[0], "diagnostic_delta").is_empty());
    // And with no edits in between, it escalates like WO-3.
    let runs = replay_sessions(
        &[failing(
            ABS,
            &five_variants("./run_sim"),
            "Segmentation fault",
        )],
        &Config::default(),
    );
    assert_eq!(turns_of(&runs[0], "diagnostic_delta", "abandon"), vec![5]);
}

/// A count that only looks smaller because the model piped the build through `tail` is
/// not progress: alternating views of the same failing build still escalate.
#[test]
fn root_refinement_a_shorter_view_is_not_progress() {
    let full = gcc(4);
    let tail: String = full.lines().skip(2).map(|l| format!("{l}\n")).collect();
    let mut run = Run::new("1780000000000-v", ABS, 100);
    for i in 0..5 {
        if i % 2 == 0 {
            run.turn(10).shell("make", false, &full);
        } else {
            run.turn(10).shell("make 2>&1 | tail -n 2", false, &tail);
        }
    }
    let runs = replay_sessions(&[run], &Config::default());
    // The count never changed, so each failure is one round: abandon at the 5th, not
    // earlier (a filtered count is never the baseline a later full count "rises" from).
    assert_eq!(
        turns_of(&runs[0], "diagnostic_delta", "abandon"),
        vec![5],
        "{:?}",
        runs[0].firings
    );
}
