//! Seed 000 (`000_053cae7e53b598d3.txt`) WO-2 "Contract-Coherence Regime Switch (patch ⇄
//! regenerate)": every acceptance line as a test, on C/C++ and TypeScript ("WO-2 scans
//! C/C++ and TS"), plus the design's components and its edit ban.

mod common;

use common::{firings, metric_value, replay, replay_sessions};
use hindsight::config::Config;
use hindsight::guards::{Effect, Firing};
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::Value;

const GUARD: &str = "coherence_gate";

fn regenerates(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

/// Three definitions of one type in three files plus one other type, as the seed's
/// fixture: C headers, or TypeScript modules exporting an interface.
fn triple_duplicate(c: bool) -> Run {
    let mut run = Run::new("1783300000000-cg-a", "/w/p", 1000);
    if c {
        run.turn(100).write(
            "include/types.h",
            "typedef struct { int channel; } SensorConfig;\ntypedef struct { char data[8]; } Packet;\n",
        );
        run.turn(100).write(
            "include/sensor.h",
            "struct SensorConfig { int channel; };\n",
        );
        run.turn(100).write(
            "include/config.h",
            "typedef struct SensorConfig { short channel; } SensorConfig;\n",
        );
    } else {
        run.turn(100).write(
            "src/types.ts",
            "export interface SensorConfig { channel: number }\nexport type Packet = Uint8Array;\n",
        );
        run.turn(100).write(
            "src/sensor.ts",
            "export interface SensorConfig { channel: string }\n",
        );
        run.turn(100).write(
            "src/config.d.ts",
            "interface SensorConfig { rate: number }\n",
        );
    }
    run
}

/// A coherent unit: one definition per type, implementations matching their declarations.
fn coherent(c: bool) -> Run {
    let mut run = Run::new("1783300000000-cg-b", "/w/p", 1000);
    if c {
        run.turn(100).write(
            "include/sensor.h",
            "typedef struct { int channel; } SensorConfig;\nint read_sensor(const SensorConfig *cfg, int channel);\n",
        );
        run.turn(100).write(
            "src/sensor.c",
            "#include \"sensor.h\"\nint read_sensor(const SensorConfig *cfg, int channel) { return cfg->channel + channel; }\n",
        );
    } else {
        run.turn(100).write(
            "types/sensor.d.ts",
            "export interface SensorConfig { channel: number }\nexport declare function readSensor(cfg: SensorConfig, channel: number): number;\n",
        );
        run.turn(100).write(
            "src/sensor.ts",
            "import { SensorConfig } from '../types/sensor';\nexport function readSensor(cfg: SensorConfig, channel: number): number {\n  return cfg.channel + channel;\n}\n",
        );
    }
    run
}

/// "unit test on a 3×-duplicate-typedef fixture → score < 0.6 → verdict `regenerate`; a
/// coherent fixture → `patch`."
#[test]
fn wo2_triple_duplicate_regenerates_and_coherent_patches() {
    for c in [true, false] {
        let replay = replay(&triple_duplicate(c));
        let fired = regenerates(&replay);
        assert_eq!(fired.len(), 1, "c={c}: {fired:?}");
        assert_eq!(fired[0].turn, 3, "the third definition");
        assert_eq!(fired[0].action, "regenerate");
        assert_eq!(fired[0].effect, Effect::Advisory);
        assert_eq!(fired[0].family.as_deref(), Some("SensorConfig"));
        assert_eq!(
            fired[0].detail.as_deref(),
            Some("score 0.50: `SensorConfig` defined in 3 files")
        );
        assert_eq!(metric_value(&replay, GUARD, "verdict"), "regenerate");
        assert_eq!(metric_value(&replay, GUARD, "score_x100"), 50);
        assert_eq!(metric_value(&replay, GUARD, "min_score_x100"), 50);

        let replay = replay_coherent(c);
        assert!(regenerates(&replay).is_empty(), "c={c}");
        assert_eq!(metric_value(&replay, GUARD, "verdict"), "patch");
        assert_eq!(metric_value(&replay, GUARD, "score_x100"), 100);
    }
}

fn replay_coherent(c: bool) -> RunReplay {
    replay(&coherent(c))
}

/// "Integration: myactuator `types.h` replay → `regenerate`", replayed generically: the
/// type layer is written across two sessions of one project; the file texts carry, so the
/// third definition in the second session tips the score.
#[test]
fn wo2_types_layer_across_sessions_regenerates() {
    let full = triple_duplicate(true);
    let mut first = Run::new("1783300000000-cg-c1", "/w/p", 1000);
    let mut second = Run::new("1783300000001-cg-c2", "/w/p", 1000);
    // Session 1: the first two writes; session 2: the third.
    let writes: Vec<&Value> = full
        .events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .collect();
    for (i, call) in writes.iter().enumerate() {
        let run = if i < 2 { &mut first } else { &mut second };
        let path = call["args"]["path"].as_str().expect("path");
        let content = call["args"]["content"].as_str().expect("content");
        run.turn(100).write(path, content);
    }
    let mut sessions = replay_sessions(&[first, second], &Config::default()).into_iter();
    let (one, two) = (sessions.next().expect("one"), sessions.next().expect("two"));
    assert!(regenerates(&one).is_empty());
    assert_eq!(metric_value(&one, GUARD, "verdict"), "patch");
    assert_eq!(metric_value(&one, GUARD, "score_x100"), 67);
    let fired = regenerates(&two);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].turn, 1);
    assert_eq!(metric_value(&two, GUARD, "verdict"), "regenerate");
}

/// Design (b): the fraction of implemented functions whose signature matches a declaration.
#[test]
fn wo2_signature_mismatch_regenerates() {
    let cases = [
        (
            "include/uart.hpp",
            "class Uart {\npublic:\n    bool open(int baud);\n};\n",
            "src/uart.cpp",
            "#include \"uart.hpp\"\nbool Uart::open(int baud, int flags) { return baud > flags; }\n",
            "score 0.50: `open` defined with 2 parameters, declared with 1",
        ),
        (
            "types/wire.d.ts",
            "export interface Packet { id: number }\nexport declare function frame(p: Packet): Uint8Array;\n",
            "src/wire.ts",
            "import { Packet } from '../types/wire';\nexport const frame = (p: Packet, level: number) => new Uint8Array(level);\n",
            "score 0.50: `frame` defined with 2 parameters, declared with 1",
        ),
    ];
    for (decl_path, decl, impl_path, impl_text, detail) in cases {
        let mut run = Run::new("1783300000000-cg-d", "/w/p", 1000);
        run.turn(100).write(decl_path, decl);
        run.turn(100).write(impl_path, impl_text);
        let replay = replay(&run);
        let fired = regenerates(&replay);
        assert_eq!(fired.len(), 1, "{decl_path}");
        assert_eq!(fired[0].turn, 2);
        assert_eq!(fired[0].detail.as_deref(), Some(detail));
    }
}

/// Design (c): symbols the diagnostics report unresolved lower the score until a write
/// defines them.
#[test]
fn wo2_unresolved_symbols_lower_the_score() {
    let mut run = Run::new("1783300000000-cg-e", "/w/p", 1000);
    run.turn(100).write(
        "include/sensor.h",
        "typedef struct { int channel; } SensorConfig;\n",
    );
    run.turn(100).shell(
        "make",
        false,
        "src/bus.c:3:1: error: unknown type name 'Packet'",
    );
    // Symbols {SensorConfig, send, Packet}, one unresolved: (1 + 2/3) / 2.
    run.turn(100)
        .write("include/bus.h", "void send(Packet *p);\n");
    run.turn(100).write(
        "include/packet.h",
        "typedef struct { char data[8]; } Packet;\n",
    );
    let replay = replay(&run);
    assert!(regenerates(&replay).is_empty());
    assert_eq!(metric_value(&replay, GUARD, "min_score_x100"), 83);
    assert_eq!(metric_value(&replay, GUARD, "score_x100"), 100);
}

/// "forbids incremental `file_edit` on the incoherent unit until it compiles once": edits
/// of the incoherent files between the `regenerate` and the next passing verification are
/// counted; edits elsewhere, and after the build passes, are not.
#[test]
fn wo2_patches_while_incoherent_are_counted_until_it_compiles() {
    let mut run = triple_duplicate(true);
    run.turn(100).edit(
        "include/sensor.h",
        "int channel;",
        "long channel;",
        Ok("applied"),
    );
    run.turn(100).edit(
        "include/config.h",
        "short channel;",
        "int channel;",
        Ok("applied"),
    );
    run.turn(100)
        .edit("src/main.c", "return 1;", "return 0;", Ok("applied"));
    run.turn(100).shell("make test", true, "12 passed");
    run.turn(100).edit(
        "include/sensor.h",
        "long channel;",
        "int channel;",
        Ok("applied"),
    );
    let replay = replay(&run);
    assert_eq!(metric_value(&replay, GUARD, "patches_while_incoherent"), 2);
    assert_eq!(metric_value(&replay, GUARD, "regenerates"), 1);
}

/// A recovered score re-arms the gate: a regeneration that removes the duplicates brings it
/// back above the floor, and a later relapse fires again.
#[test]
fn wo2_fires_again_after_recovering() {
    let mut run = triple_duplicate(false);
    run.turn(100)
        .write("src/sensor.ts", "export const SENSOR_COUNT = 4;\n");
    run.turn(100)
        .write("src/config.d.ts", "declare const VERSION: string;\n");
    run.turn(100).write(
        "src/legacy.ts",
        "export interface SensorConfig { legacy: true }\nexport interface Packet { id: number }\n",
    );
    let replay = replay(&run);
    let turns: Vec<u32> = regenerates(&replay).iter().map(|f| f.turn).collect();
    // Turn 4: 2 definitions of SensorConfig left, 0.67 (recovered); turn 5: 1.00; turn 6:
    // SensorConfig and Packet each in 2 files, 0.50.
    assert_eq!(turns, [3, 6]);
    assert_eq!(metric_value(&replay, GUARD, "regenerates"), 2);
    assert_eq!(metric_value(&replay, GUARD, "score_x100"), 50);
}

/// Design (a) within one file: a C/C++ header defining one struct twice is a duplicate
/// (a redefinition); a tag and its typedef are one type, and definitions the preprocessor
/// chooses between (`#ifdef` alternatives) are not counted twice.
#[test]
fn wo2_repeated_definition_in_one_header() {
    let score = |text: &str| {
        let mut run = Run::new("1783300000000-cg-f", "/w/p", 1000);
        run.turn(100).write("include/types.h", text);
        let replay = replay(&run);
        let detail = regenerates(&replay).first().and_then(|f| f.detail.clone());
        (metric_value(&replay, GUARD, "score_x100").as_u64(), detail)
    };
    assert_eq!(
        score("struct SensorConfig { float gain; };\nstruct SensorConfig { int id; };\n"),
        (
            Some(50),
            Some("score 0.50: `SensorConfig` defined 2 times in 1 file".into())
        )
    );
    assert_eq!(
        score("#ifndef TYPES_H\n#define TYPES_H\ntypedef struct SensorConfig { int id; } SensorConfig;\n#endif\n"),
        (Some(100), None)
    );
    assert_eq!(
        score("#ifdef USE_FLOAT\nstruct SensorConfig { float gain; };\n#else\nstruct SensorConfig { int gain; };\n#endif\n"),
        (Some(100), None)
    );
}
