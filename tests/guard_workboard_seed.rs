//! Acceptance of `workboard_seed`: seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-07
//! "Complex Tasks Must Seed A Durable Workboard Or Todo Tree".
//!
//! The seed gives no numbers for a complex task; hindsight's defaults are 8 turns and 4
//! distinct canonical action families (`min_turns`, `min_families`).

mod common;

use common::{firings, metric_value, replay, replay_with};
use hindsight::config::Config;
use hindsight::guards::Firing;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::{json, Value};

const GUARD: &str = "workboard_seed";

fn seeded(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

/// A training task: discovery, model repair, integration, a training run and checks, one
/// step per turn over ten turns, with `todos_at` turns writing the todo tree.
fn training_run(todos_at: &[u32]) -> Run {
    let mut run = Run::new("1780000000000-wb1", "/w/robot", 5000);
    let steps: [&dyn Fn(&mut Run); 10] = [
        &|r| r.read("models/arm.urdf", "<robot name=\"arm\">"),
        &|r| {
            r.shell(
                "python scripts/check_model.py models/arm.urdf",
                false,
                "error: loop joint",
            )
        },
        &|r| {
            r.edit(
                "models/arm.urdf",
                "<joint name=\"k1\"",
                "<joint name=\"k1b\"",
                Ok("applied"),
            )
        },
        &|r| {
            r.shell(
                "python scripts/check_model.py models/arm.urdf",
                true,
                "model ok",
            )
        },
        &|r| r.read("configs/train.yaml", "steps: 1000"),
        &|r| r.write("configs/arm.yaml", "model: models/arm.urdf"),
        &|r| {
            r.shell(
                "python train.py --config configs/arm.yaml --steps 200",
                true,
                "step 200 reward 0.4",
            )
        },
        &|r| r.shell("python eval.py --ckpt runs/latest", true, "reward 0.41"),
        &|r| r.read("runs/latest/metrics.csv", "step,reward"),
        &|r| r.shell("python eval.py --ckpt runs/latest", true, "reward 0.42"),
    ];
    for (i, step) in steps.iter().enumerate() {
        run.turn(300);
        step(&mut run);
        let turn = i as u32 + 1;
        if todos_at.contains(&turn) {
            let status = if turn < 8 { "in_progress" } else { "completed" };
            run.todos(json!([
                {"id": "repair", "status": if turn >= 4 { "completed" } else { "in_progress" },
                 "content": "repair the closed-loop joint"},
                {"id": "integrate", "status": status, "content": "wire the model into training"},
                {"id": "train", "status": status, "content": "run a short training"},
                {"id": "verify", "status": "pending", "content": "observe reward progress"}
            ]));
        }
    }
    run
}

/// "A multi-step training/robotics task starts with non-empty durable decomposition."
/// A run that never writes one is flagged once, where it became multi-step.
#[test]
fn td07_multi_step_run_without_decomposition_is_seeded() {
    let replay = replay(&training_run(&[]));
    let fired = seeded(&replay);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    let f = fired[0];
    assert_eq!((f.turn, f.action.as_str()), (8, "seed_decomposition"));
    assert!(
        f.detail
            .as_deref()
            .unwrap_or_default()
            .starts_with("8 turns and 6 action families"),
        "{:?}",
        f.detail
    );
    assert_eq!(metric_value(&replay, GUARD, "decomposed"), json!(0));
    assert_eq!(metric_value(&replay, GUARD, "first_todo_turn"), Value::Null);
    assert_eq!(metric_value(&replay, GUARD, "multi_step_turn"), json!(8));
}

/// Same line: the decomposition must come first. A todo tree written only after the run
/// became multi-step does not undo the firing.
#[test]
fn td07_late_decomposition_still_fires() {
    let replay = replay(&training_run(&[9]));
    assert_eq!(seeded(&replay).len(), 1);
    assert_eq!(metric_value(&replay, GUARD, "decomposed"), json!(1));
    assert_eq!(metric_value(&replay, GUARD, "first_todo_turn"), json!(9));
}

/// "Workboard cards or nested todos update as evidence is collected."
/// A tree written at the start and updated as checks pass is quiet.
#[test]
fn td07_early_tree_updated_with_evidence_is_quiet() {
    let replay = replay(&training_run(&[1, 4, 8]));
    assert!(seeded(&replay).is_empty(), "{:#?}", seeded(&replay));
    assert_eq!(metric_value(&replay, GUARD, "first_todo_turn"), json!(1));
    assert_eq!(metric_value(&replay, GUARD, "todo_writes"), json!(3));
}

/// "Completion review sees unresolved cards/blockers when verification has not happened."
/// With the tree in place, a completion claim over the still-pending verification card
/// is held by `verified_completion`.
#[test]
fn td07_completion_review_sees_unresolved_cards() {
    let mut run = training_run(&[1, 4, 8]);
    run.turn(100).complete("completed", "training runs");
    let replay = replay(&run);
    let hold = replay
        .firings
        .iter()
        .find(|f| f.guard == "verified_completion")
        .expect("the claim is held");
    assert_eq!(hold.detail.as_deref(), Some("open todos: verify (pending)"));
}

/// Short tasks and long single-family loops are not multi-step; the thresholds are
/// settings.
#[test]
fn thresholds_decide_what_is_multi_step() {
    let mut short = Run::new("1780000000000-wb2", "/w/web", 1000);
    short.turn(100).read("src/a.js", "export {}");
    short
        .turn(100)
        .edit("src/a.js", "export {}", "export const a = 1", Ok("applied"));
    short.turn(100).shell("npm test", true, "Tests: 3 passed");
    assert!(seeded(&replay(&short)).is_empty());

    let mut looping = Run::new("1780000000000-wb3", "/w/go", 1000);
    for _ in 0..6 {
        looping
            .turn(100)
            .shell("go test ./...", false, "--- FAIL: TestX");
        looping.turn(100).read("x_test.go", "package x");
    }
    let replay_loop = replay(&looping);
    assert!(seeded(&replay_loop).is_empty());
    assert_eq!(metric_value(&replay_loop, GUARD, "families"), json!(2));

    let mut config = Config::default();
    config.set("workboard_seed.min_families=2").expect("set");
    config.set("workboard_seed.min_turns=3").expect("set");
    let fired = replay_with(&looping, &config);
    assert_eq!(seeded(&fired).len(), 1);
    assert_eq!(seeded(&fired)[0].turn, 3);
}
