//! The ecosystems a generated project is built in: commands, files, source-code templates
//! and the cosmetic variants of a command (seed 000 WO-9).

use crate::rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lang {
    Rust,
    Cpp,
    Ts,
    Py,
    Go,
    Kotlin,
}

/// One project's ecosystem: its commands, its files and the shape of its tools' output.
pub(super) struct Eco {
    pub(super) project: &'static str,
    pub(super) lang: Lang,
    /// Build commands (a firmware layout builds in a subdirectory: `cd SUB && ...`).
    pub(super) builds: &'static [&'static str],
    pub(super) tests: &'static [&'static str],
    pub(super) files: &'static [&'static str],
}

pub(super) const ECOS: [Eco; 8] = [
    Eco {
        project: "firmware-motor",
        lang: Lang::Cpp,
        builds: &[
            "cd firmware/esp32 && pio run",
            "cd firmware/esp32 && pio run -e esp32dev_debug",
        ],
        tests: &["cd firmware/esp32 && pio test -e native"],
        files: &[
            "firmware/esp32/src/pal.cpp",
            "firmware/esp32/include/types.h",
            "firmware/esp32/src/can_bus.cpp",
            "firmware/esp32/src/motor.cpp",
            "firmware/esp32/platformio.ini",
        ],
    },
    Eco {
        project: "parser",
        lang: Lang::Rust,
        builds: &[
            "cargo build",
            "cargo check --all-targets",
            "cargo clippy -- -D warnings",
        ],
        tests: &["cargo test", "cargo test lexer::"],
        files: &[
            "src/lexer.rs",
            "src/parser.rs",
            "src/ast.rs",
            "src/span.rs",
            "Cargo.toml",
        ],
    },
    Eco {
        project: "webapp",
        lang: Lang::Ts,
        builds: &["npx tsc --noEmit", "npm run build"],
        tests: &["npm test", "npx jest src/auth"],
        files: &[
            "src/auth.ts",
            "src/api/client.ts",
            "src/components/Login.tsx",
            "src/store.ts",
            "package.json",
        ],
    },
    Eco {
        project: "pipeline",
        lang: Lang::Py,
        builds: &["mypy src", "mypy src --strict"],
        tests: &["pytest -q", "python -m pytest tests/test_io.py"],
        files: &[
            "src/pipeline/io.py",
            "src/pipeline/stages.py",
            "src/pipeline/config.py",
            "tests/test_io.py",
            "pyproject.toml",
        ],
    },
    Eco {
        project: "svc",
        lang: Lang::Go,
        builds: &["go build ./...", "go vet ./..."],
        tests: &["go test ./...", "go test ./internal/store -run TestPut"],
        files: &[
            "internal/store/store.go",
            "internal/api/handler.go",
            "cmd/svc/main.go",
            "internal/store/store_test.go",
            "go.mod",
        ],
    },
    Eco {
        project: "engine",
        lang: Lang::Cpp,
        builds: &["cmake --build build -j2", "make -C build"],
        tests: &["ctest --test-dir build --output-on-failure"],
        files: &[
            "src/renderer.cpp",
            "src/scene.cpp",
            "include/engine/scene.hpp",
            "tests/scene_test.cpp",
            "CMakeLists.txt",
        ],
    },
    Eco {
        project: "android-app",
        lang: Lang::Kotlin,
        builds: &["./gradlew assembleDebug", "./gradlew compileDebugKotlin"],
        tests: &["./gradlew testDebugUnitTest"],
        files: &[
            "app/src/main/java/com/example/app/MainActivity.kt",
            "app/src/main/java/com/example/app/LoginViewModel.kt",
            "app/src/main/java/com/example/app/data/Repository.kt",
            "app/build.gradle.kts",
        ],
    },
    Eco {
        project: "sim",
        lang: Lang::Rust,
        builds: &["cargo build --workspace", "cargo build -p sim-core"],
        tests: &["cargo test -p sim-core", "cargo nextest run"],
        files: &[
            "crates/sim-core/src/world.rs",
            "crates/sim-core/src/step.rs",
            "crates/sim-io/src/lib.rs",
            "crates/sim-core/tests/step.rs",
        ],
    },
];

pub(super) const IDENTS: [&str; 20] = [
    "token", "span", "buf", "config", "state", "frame", "motor", "client", "store", "item", "node",
    "reader", "writer", "offset", "count", "request", "session", "handle", "value", "path",
];
const TYPES: [&str; 15] = [
    "Token",
    "Span",
    "Config",
    "State",
    "Frame",
    "MotorConfig",
    "Client",
    "Store",
    "Item",
    "Node",
    "Reader",
    "Request",
    "Session",
    "Handle",
    "Value",
];

/// Fills `{v}`, `{w}`, `{f}`, `{T}`, `{n}` in a template.
pub(super) fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let (text, len) = if after.starts_with("{v}") || after.starts_with("{w}") {
            (rng.pick(&IDENTS).to_string(), 3)
        } else if after.starts_with("{f}") {
            (
                format!(
                    "{}_{}",
                    rng.pick(&[
                        "parse", "load", "apply", "update", "read", "emit", "resolve", "check"
                    ]),
                    rng.pick(&IDENTS)
                ),
                3,
            )
        } else if after.starts_with("{T}") {
            (rng.pick(&TYPES).to_string(), 3)
        } else if after.starts_with("{n}") {
            (rng.below(4096).to_string(), 3)
        } else {
            ("{".to_string(), 1)
        };
        out.push_str(&text);
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

impl Lang {
    pub(super) fn source_templates(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "use crate::{w}::{T};",
                "#[derive(Debug, Clone, PartialEq)]",
                "pub struct {T} {",
                "    pub {v}: u32,",
                "    pub {w}: Vec<{T}>,",
                "}",
                "impl {T} {",
                "    pub fn {f}(&mut self, {v}: &str) -> Result<Option<{T}>, Error> {",
                "        let {v} = self.{f}(&{w})?;",
                "        if {v}.is_empty() { return Ok(None); }",
                "        match {v}.get({n}) {",
                "            Some(x) => self.{w} += x.len() as u32,",
                "            None => return Err(Error::Missing({n})),",
                "        }",
                "    }",
                "    // {f}: keep the {w} in step with the {v}",
            ],
            Lang::Cpp => &[
                "#include \"{w}.h\"",
                "struct {T} {",
                "    float {v};",
                "    uint32_t {w}_id = {n};",
                "};",
                "void {f}({T}& {v}) {",
                "    if ({v}.{w}_id == {n}) { return; }",
                "    {v}.{w} = static_cast<float>({n}) * 0.5f;",
                "    for (size_t i = 0; i < {n}; ++i) { {f}({v}); }",
                "}",
                "// {f}: keep {w} in range",
                "static constexpr int k{T}Max = {n};",
            ],
            Lang::Ts => &[
                "import { {T} } from './{w}';",
                "export interface {T} {",
                "  {v}: string;",
                "  {w}?: number;",
                "}",
                "export async function {f}({v}: {T}): Promise<{T} | undefined> {",
                "  const {w} = await api.get(`/{v}/${{v}.id}`);",
                "  if (!{w}.ok) return undefined;",
                "  return { ...{v}, {w}: {n} };",
                "}",
                "// {f}: retry once on 401",
            ],
            Lang::Py => &[
                "from pipeline.{w} import {T}",
                "class {T}:",
                "    {v}: int = {n}",
                "    def {f}(self, {v}: str) -> \"{T} | None\":",
                "        {w} = self.{f}({v})",
                "        if not {w}:",
                "            return None",
                "        return {T}({v}={w}[{n}])",
                "",
                "# {f}: keep {w} sorted",
            ],
            Lang::Go => &[
                "import \"svc/internal/{w}\"",
                "type {T} struct {",
                "\t{v} string",
                "\t{w} int",
                "}",
                "func (s *{T}) {f}(ctx context.Context, {v} string) (*{T}, error) {",
                "\tif err := s.{f}(ctx, {w}); err != nil {",
                "\t\treturn nil, fmt.Errorf(\"{f}: %w\", err)",
                "\t}",
                "\treturn &{T}{ {v}: {v} }, nil",
                "}",
                "// {f} keeps {w} consistent.",
            ],
            Lang::Kotlin => &[
                "import com.example.app.{w}.{T}",
                "data class {T}(val {v}: String, val {w}: Int = {n})",
                "class {T}ViewModel(private val repo: Repository) : ViewModel() {",
                "    fun {f}({v}: String) {",
                "        viewModelScope.launch { _{w}.value = repo.{f}({v}) }",
                "    }",
                "}",
                "// {f}: debounce {w}",
            ],
        }
    }

    pub(super) fn source(self, rng: &mut Rng, lines: usize) -> String {
        let templates = self.source_templates();
        let mut out = String::new();
        for _ in 0..lines {
            let template = rng_pick_str(rng, templates);
            out.push_str(&fill(rng, template));
            out.push('\n');
        }
        out
    }
}

pub(super) fn rng_pick_str(rng: &mut Rng, xs: &'static [&'static str]) -> &'static str {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A cosmetic variant of a command: the same action, spelled differently (seed 000 WO-9).
pub(super) fn variant(rng: &mut Rng, cmd: &str, cwd: &str) -> String {
    match rng.below(10) {
        0 | 1 => cmd.to_string(),
        2 => format!("{cmd} 2>&1"),
        3 => format!("{cmd} 2>&1 | tail -50"),
        4 => format!("{cmd} 2>&1 | tail -100"),
        5 => format!("{cmd} | head -60"),
        6 => format!("{cmd} 2>/dev/null"),
        7 => match cmd.strip_prefix("cd ") {
            Some(rest) => format!("cd {cwd}/{rest}"),
            None => format!("cd {cwd} && {cmd}"),
        },
        8 => format!("{cmd} 2>&1 | grep -E 'error|FAIL' | head -40"),
        _ => format!("{cmd}  "),
    }
}

/// A repository map block of about `chars` characters.
pub(super) fn repo_map(rng: &mut Rng, eco: &Eco, chars: usize) -> String {
    let mut out = String::with_capacity(chars + 128);
    out.push_str("[REPO MAP]\n");
    let ext = eco.files[0].rsplit('.').next().unwrap_or("txt");
    while out.len() < chars {
        let line = fill(
            rng,
            &format!("src/{{w}}/{{v}}_{{n}}.{ext}: {{T}}, {{f}}, {{f}}, {{T}}Error\n"),
        );
        out.push_str(&line);
    }
    out
}
