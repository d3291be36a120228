//! Scanner and diagnostic-parser cases across C, C++, TypeScript and linker output.

use super::decls::{scan, Decl, DeclKind};
use super::diagnostics::{parse, unresolved_name, Named};

fn kinds(path: &str, src: &str) -> Vec<(DeclKind, String, Option<usize>)> {
    scan(path, src)
        .into_iter()
        .map(|d: Decl| (d.kind, d.qualified(), d.params))
        .collect()
}

use DeclKind::*;

#[test]
fn c_header_types_and_prototypes() {
    let src = r#"
#ifndef SENSOR_H
#define SENSOR_H { unbalanced
#include <stdint.h>
typedef struct {
    int kp;   /* gain { */
    float ki;
} SensorConfig;
typedef struct Packet Packet;
typedef int (*handler_t)(int code, void *ctx);
typedef uint8_t channel_t;
enum Mode { MODE_A, MODE_B };
struct Frame;
extern int g_ready;
int read_sensor(const SensorConfig *cfg,
                int channel);
void reset(void);
#endif
"#;
    assert_eq!(
        kinds("include/sensor.h", src),
        vec![
            (TypeDef, "SensorConfig".into(), None),
            (TypeDecl, "Packet".into(), None),
            (TypeDef, "handler_t".into(), None),
            (TypeDef, "channel_t".into(), None),
            (TypeDef, "Mode".into(), None),
            (TypeDecl, "Frame".into(), None),
            (Value, "g_ready".into(), None),
            (FnDecl, "read_sensor".into(), Some(2)),
            (FnDecl, "reset".into(), Some(0)),
        ]
    );
}

#[test]
fn cpp_namespaces_classes_and_definitions() {
    let src = r#"
namespace io {
template <typename T>
class API_EXPORT Queue final : public Base<T> {
public:
    Queue(int capacity);
    bool push(const T& item, int timeout_ms = 0) const;
    int size() const { return n_; }
private:
    int n_;
};
enum class Level : int { Low, High };
using Bytes = std::vector<uint8_t>;
}
struct Packet *make_packet(int len) {
    if (len > 0) { return nullptr; }
    REGISTER(x);
}
bool io::Queue::push(const T& item, int timeout_ms) const { return true; }
TEST(Queue, Push) { EXPECT_TRUE(1); }
"#;
    assert_eq!(
        kinds("src/queue.cpp", src),
        vec![
            (TypeDef, "io::Queue".into(), None),
            (FnDecl, "io::Queue::Queue".into(), Some(1)),
            (FnDecl, "io::Queue::push".into(), Some(2)),
            (FnDef, "io::Queue::size".into(), Some(0)),
            (TypeDef, "io::Level".into(), None),
            (TypeDef, "io::Bytes".into(), None),
            (FnDef, "make_packet".into(), Some(1)),
            (FnDef, "io::Queue::push".into(), Some(2)),
        ]
    );
}

#[test]
fn typescript_declarations_and_definitions() {
    let src = r#"
import { x } from "./x";
export interface Packet { id: number; body: { len: number } }
interface Props { a: string }
export type Handler<T> = (p: T, ctx: Ctx) => void;
export const enum Level { Low, High }
export abstract class Client { send(p: Packet): void { if (p) { return; } } }
export function encode(p: Packet, level: Level): Uint8Array;
export function encode(p: Packet, level: Level, extra?: unknown): Uint8Array {
  const re = /[{]'/g;
  return new Uint8Array();
}
export async function fetchAll(this: Client, url: string): Promise<{ ok: boolean }> {
  return { ok: true };
}
export const decode = async (buf: Uint8Array, strict = false) => null;
const local = (a: number) => a;
export const VERSION = "1.0";
declare global {
  interface Window { app: unknown }
}
declare module "wire" {
  export function frame(len: number): void;
}
"#;
    assert_eq!(
        kinds("src/wire.ts", src),
        vec![
            (TypeDef, "Packet".into(), None),
            (TypeDef, "Props".into(), None),
            (TypeDef, "Handler".into(), None),
            (TypeDef, "Level".into(), None),
            (TypeDef, "Client".into(), None),
            (FnDecl, "encode".into(), Some(2)),
            (FnDef, "encode".into(), Some(3)),
            (FnDef, "fetchAll".into(), Some(1)),
            (FnDef, "decode".into(), Some(2)),
            (FnDef, "local".into(), Some(1)),
            (Value, "VERSION".into(), None),
            (TypeDef, "global::Window".into(), None),
            (FnDecl, "wire::frame".into(), Some(1)),
        ]
    );
    let exported: Vec<bool> = scan("src/wire.ts", src)
        .iter()
        .map(|d| d.exported)
        .collect();
    assert!(exported[0] && !exported[1]);
}

#[test]
fn dts_functions_are_declarations() {
    let src = "export declare function read(ch: number): number;\nexport function reset(): void\n";
    assert_eq!(
        kinds("types/index.d.ts", src),
        vec![
            (FnDecl, "read".into(), Some(1)),
            (FnDecl, "reset".into(), Some(0))
        ]
    );
}

#[test]
fn diagnostics_across_toolchains() {
    let out = "In file included from src/main.c:1:\n\
        src/main.c:12:5: error: too few arguments to function 'read_sensor'\n\
        include/sensor.h:9:5: note: declared here\n\
        src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'Packet'.\n\
        src/b.ts:4:1 - error TS2304: Cannot find name 'Frame'.\n\
        main.c:(.text+0x1e): undefined reference to `sensor_init'\n\
        make: *** [Makefile:12: build/main.o] Error 1\n";
    let d = parse(out);
    let paths: Vec<&str> = d.iter().map(|d| d.path).collect();
    assert_eq!(
        paths,
        [
            "src/main.c",
            "include/sensor.h",
            "src/a.ts",
            "src/b.ts",
            "main.c"
        ]
    );
    assert!(d[0].error && !d[1].error);
    assert!(Named::new(&d[0]).names("read_sensor"));
    assert!(Named::new(&d[2]).names("Packet"));
    assert!(!Named::new(&d[2]).names("Type"));
    assert!(Named::new(&d[4]).names("sensor_init"));
    assert_eq!(unresolved_name(d[3].message), Some("Frame"));
}

#[test]
fn naming_rules() {
    let named = |m: &str| {
        let line = format!("a.c:1:1: error: {m}");
        let d = parse(&line).pop().expect("one diagnostic");
        (
            Named::new(&d).names("Packet"),
            Named::new(&d).names("SensorConfig"),
        )
    };
    // Quoted in any style, or a distinctive whole word; an apostrophe quotes nothing.
    assert_eq!(
        named("‘struct Packet’ has no member named ‘kp’"),
        (true, false)
    );
    assert_eq!(named("`Packet' undeclared"), (true, false));
    assert_eq!(
        named("Packet size doesn't match SensorConfig"),
        (false, true)
    );
    assert_eq!(named("SensorConfigs differ"), (false, false));
    assert_eq!(
        unresolved_name("unknown type name 'SensorConfig'"),
        Some("SensorConfig")
    );
    assert_eq!(
        unresolved_name("'Packet' does not name a type"),
        Some("Packet")
    );
    assert_eq!(
        unresolved_name("Module '\"./wire\"' has no exported member 'Frame'."),
        Some("Frame")
    );
    assert_eq!(unresolved_name("expected ';' before '}' token"), None);
}

/// Arbitrary text (a deterministic mix of the characters the scanners care about) never
/// panics any scanner or the diagnostic parser.
#[test]
fn arbitrary_text_never_panics() {
    const ALPHABET: &[&str] = &[
        "{",
        "}",
        "(",
        ")",
        "<",
        ">",
        ";",
        ",",
        ":",
        "::",
        "=",
        "=>",
        "*",
        "/",
        "//",
        "/*",
        "*/",
        "\"",
        "'",
        "`",
        "‘",
        "’",
        "\\",
        "#",
        "\n",
        " ",
        "typedef",
        "struct",
        "enum",
        "class",
        "namespace",
        "export",
        "declare",
        "function",
        "const",
        "type",
        "interface",
        "x",
        "Y_1",
        "error:",
        ": error: ",
        "error TS12: ",
        "(1,2)",
        "é",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..400 {
        let mut text = String::new();
        for _ in 0..60 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            text.push_str(ALPHABET[(seed >> 33) as usize % ALPHABET.len()]);
        }
        for path in ["a.h", "a.cpp", "a.ts", "a.d.ts", "a.pyi"] {
            let _ = scan(path, &text);
        }
        for d in parse(&text) {
            let _ = Named::new(&d).names("x");
            let _ = unresolved_name(d.message);
        }
    }
}
