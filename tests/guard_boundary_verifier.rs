//! Seed 000 (`000_053cae7e53b598d3.txt`) WO-1 "In-Loop Structural Verifier": every
//! acceptance line as a test, each shown on C/C++ (gcc/clang) and TypeScript (tsc), as the
//! genericity invariant asks ("WO-1 parses gcc/clang and tsc").

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::guards::{Effect, Firing};
use hindsight::replay::RunReplay;
use hindsight::synth::Run;

const GUARD: &str = "boundary_verifier";

fn blocks(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

const SENSOR_H: &str = "#pragma once\ntypedef struct {\n    int channel;\n    float gain;\n} SensorConfig;\nint read_sensor(const SensorConfig *cfg, int channel);\n";
const SENSOR_C: &str = "#include \"sensor.h\"\nint read_sensor(const SensorConfig *cfg, int channel) {\n    return (int)(cfg->gain * channel);\n}\n";
const WIRE_DTS: &str = "export interface Packet {\n  id: number;\n}\nexport declare function frame(p: Packet, level: number): Uint8Array;\n";
const CLIENT_TS: &str = "import { Packet, frame } from '../types/wire';\nexport const send = (p: Packet) => frame(p, 1).length;\n";

/// A header (gcc) whose prototype gains a parameter at turn 2, the build failing at turn 5.
fn gcc_signature_drift() -> Run {
    let mut run = Run::new("1783300000000-bv-a", "/w/fw", 1000);
    run.turn(100).write("include/sensor.h", SENSOR_H);
    run.write("src/sensor.c", SENSOR_C);
    run.turn(100).edit(
        "include/sensor.h",
        "int read_sensor(const SensorConfig *cfg, int channel);",
        "int read_sensor(const SensorConfig *cfg, int channel, int samples);",
        Ok("applied"),
    );
    run.turn(100)
        .read("src/main.c", "int main(void) { return 0; }");
    run.turn(100).edit("README.md", "v1", "v2", Ok("applied"));
    run.turn(100).shell(
        "make",
        false,
        "src/sensor.c:2:5: error: conflicting types for 'read_sensor'\n\
         include/sensor.h:6:5: note: previous declaration of 'read_sensor' was here\n\
         make: *** [Makefile:9: build/sensor.o] Error 1",
    );
    run
}

/// The same drift in a `.d.ts` (tsc): a declared function's parameter changes type at turn 2.
/// (tsc's arity error, TS2554 "Expected 1 arguments, but got 2", names no symbol; the type
/// error does.)
fn tsc_signature_drift() -> Run {
    let mut run = Run::new("1783300000000-bv-b", "/w/web", 1000);
    run.turn(100).write("types/wire.d.ts", WIRE_DTS);
    run.write("src/client.ts", CLIENT_TS);
    run.turn(100).edit(
        "types/wire.d.ts",
        "export declare function frame(p: Packet, level: number): Uint8Array;",
        "export interface FrameOptions {\n  level: number;\n}\nexport declare function frame(p: Packet, opts: FrameOptions): Uint8Array;",
        Ok("applied"),
    );
    run.turn(100)
        .edit("src/ui/theme.ts", "#333", "#222", Ok("applied"));
    run.turn(100).shell("npm run lint", true, "0 problems");
    run.turn(100).shell(
        "npx tsc --noEmit",
        false,
        "src/client.ts(2,50): error TS2345: Argument of type 'number' is not assignable to parameter of type 'FrameOptions'.",
    );
    run
}

/// "After editing a header, a signature-mismatch is reported within the same turn (not N
/// turns later)."
#[test]
fn wo1_signature_mismatch_is_reported_in_the_header_edit_turn() {
    for (run, header, symbol) in [
        (gcc_signature_drift(), "include/sensor.h", "read_sensor"),
        (tsc_signature_drift(), "types/wire.d.ts", "FrameOptions"),
    ] {
        let replay = replay(&run);
        let fired = blocks(&replay);
        assert_eq!(fired.len(), 1, "{header}: {fired:?}");
        let block = fired[0];
        // Reported at the edit's turn (2), not at the build three turns later (5).
        assert_eq!(block.turn, 2, "{header}");
        assert_eq!(block.action, "boundary_block");
        assert_eq!(block.effect, Effect::Advisory);
        assert_eq!(block.family.as_deref(), Some(header));
        assert_eq!(
            block.detail.as_deref(),
            Some(format!("`{symbol}` drifted; diagnostic at turn 5; 3 turns lost").as_str())
        );
        assert_eq!(metric(&replay, GUARD, "boundary_edits"), 2, "{header}");
        assert_eq!(metric(&replay, GUARD, "blocks"), 1);
        assert_eq!(metric(&replay, GUARD, "turns_lost_total"), 3);
    }
}

/// "given a fixture with a header/impl drift, verdict.ok === false and diagnostics name
/// the drifted symbol." The verdict is not ok exactly when a block fires, and the block
/// names the symbol; an implementation that matches its header gives no block.
#[test]
fn wo1_header_impl_drift_is_not_ok_and_names_the_symbol() {
    let drift = |header: &str, decl: &str, impl_path: &str, impl_text: &str, diag: &str| {
        let mut run = Run::new("1783300000000-bv-c", "/w/p", 1000);
        run.turn(100).write(header, decl);
        run.turn(100).write(impl_path, impl_text);
        run.turn(100).read("notes.md", "todo");
        run.turn(100).shell("build", false, diag);
        replay(&run)
    };
    let c = drift(
        "include/sensor.h",
        SENSOR_H,
        "src/sensor.c",
        "#include \"sensor.h\"\nint sample(SensorConfig cfg) { return cfg.rate_hz; }\n",
        "src/sensor.c:2:45: error: 'SensorConfig' has no member named 'rate_hz'",
    );
    let ts = drift(
        "types/wire.d.ts",
        WIRE_DTS,
        "src/client.ts",
        "import { Packet } from '../types/wire';\nexport const size = (p: Packet) => p.len;\n",
        "src/client.ts(2,38): error TS2339: Property 'len' does not exist on type 'Packet'.",
    );
    for (replay, header, symbol) in [
        (c, "include/sensor.h", "SensorConfig"),
        (ts, "types/wire.d.ts", "Packet"),
    ] {
        let fired = blocks(&replay);
        assert_eq!(fired.len(), 1, "{header}: verdict.ok must be false");
        assert_eq!(fired[0].family.as_deref(), Some(header));
        let detail = fired[0].detail.as_deref().unwrap_or_default();
        assert!(
            detail.starts_with(&format!("`{symbol}` drifted")),
            "{detail}"
        );
        // Caught when the implementation was written against the imagined shape (turn 2).
        assert_eq!(fired[0].turn, 2);
    }

    // No drift: the same files and a diagnostic about something else.
    let mut run = Run::new("1783300000000-bv-d", "/w/p", 1000);
    run.turn(100).write("include/sensor.h", SENSOR_H);
    run.turn(100).write("src/sensor.c", SENSOR_C);
    run.turn(100).shell(
        "make",
        false,
        "src/log.c:3:1: error: expected ';' before '}' token",
    );
    assert!(blocks(&replay(&run)).is_empty(), "verdict.ok must be true");
}

/// "Regression harness: replaying the ... edit produces a boundary block before the next
/// unrelated file edit." The implementation is written whole against an imagined shape of
/// the header's type; the run then moves on to an unrelated file and builds only later.
#[test]
fn wo1_block_lands_before_the_next_unrelated_file_edit() {
    let cases = [
        (
            "include/uart.hpp",
            "#pragma once\nnamespace io {\nstruct PortConfig {\n    int baud;\n};\nclass Uart {\npublic:\n    bool open(const PortConfig &cfg);\n};\n}\n",
            "src/uart.cpp",
            "#include \"uart.hpp\"\nbool io::Uart::open(const PortConfig &cfg) {\n    return cfg.baud_rate > 0 && cfg.parity;\n}\n",
            "src/uart.cpp:3:16: error: no member named 'baud_rate' in 'io::PortConfig'",
        ),
        (
            "types/wire.d.ts",
            WIRE_DTS,
            "src/encode.ts",
            "import { Packet } from '../types/wire';\nexport function encode(p: Packet): string {\n  return p.header.kind;\n}\n",
            "src/encode.ts(3,12): error TS2339: Property 'header' does not exist on type 'Packet'.",
        ),
    ];
    for (header, decl, impl_path, impl_text, diag) in cases {
        let mut run = Run::new("1783300000000-bv-e", "/w/p", 1000);
        run.turn(100).write(header, decl);
        run.turn(100).write(impl_path, impl_text);
        run.turn(100).edit(
            "src/unrelated/log.c",
            "level = 1",
            "level = 2",
            Ok("applied"),
        );
        let unrelated_turn = run.turn;
        run.turn(100).edit("docs/notes.md", "a", "b", Ok("applied"));
        run.turn(100).shell("build", false, diag);
        let replay = replay(&run);
        let fired = blocks(&replay);
        assert_eq!(fired.len(), 1, "{header}: {fired:?}");
        assert!(
            fired[0].turn < unrelated_turn,
            "{header}: block at {} not before the unrelated edit at {unrelated_turn}",
            fired[0].turn
        );
        assert_eq!(metric(&replay, GUARD, "turns_lost_total"), 3);
    }
}

/// Nothing is lost when the run's own check named the symbol in the edit's turn, and a
/// passing verification after the edit closes it (a later diagnostic is another cause).
#[test]
fn wo1_quiet_when_caught_in_time_or_verified() {
    let mut run = Run::new("1783300000000-bv-f", "/w/fw", 1000);
    run.turn(100).write("include/sensor.h", SENSOR_H);
    run.shell(
        "make",
        false,
        "src/main.c:4:9: error: too few arguments to function 'read_sensor'",
    );
    run.turn(100).write("types/wire.d.ts", WIRE_DTS);
    run.turn(100)
        .shell("npm test", true, "Tests: 14 passed, 14 total");
    run.turn(100).shell(
        "npx tsc --noEmit",
        false,
        "src/client.ts(2,41): error TS2339: Property 'len' does not exist on type 'Packet'.",
    );
    let replay = replay(&run);
    assert!(blocks(&replay).is_empty(), "{:?}", blocks(&replay));
    assert_eq!(metric(&replay, GUARD, "boundary_edits"), 2);
    assert_eq!(metric(&replay, GUARD, "blocks"), 0);
}

/// `min_turns_lost` is a setting: at 0 the in-turn catch is reported too.
#[test]
fn wo1_min_turns_lost_is_configurable() {
    let mut run = Run::new("1783300000000-bv-g", "/w/fw", 1000);
    run.turn(100).write("include/sensor.h", SENSOR_H);
    run.shell(
        "make",
        false,
        "src/main.c:4:9: error: too few arguments to function 'read_sensor'",
    );
    let mut config = Config::default();
    config
        .set("boundary_verifier.min_turns_lost=0")
        .expect("setting");
    let replay = replay_with(&run, &config);
    assert_eq!(blocks(&replay).len(), 1);
    assert_eq!(metric(&replay, GUARD, "turns_lost_total"), 0);
}
