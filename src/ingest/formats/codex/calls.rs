//! Codex's tool calls and their outputs, read into canonical calls and results.

use super::field::{missing, wrong};
use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::builder::canonical_tool;
use crate::ingest::formats::values::{opt_str, typed, typed_at};
use crate::ingest::json::nested;
use serde_json::{Map, Value};

/// A call as the event model takes it.
pub(super) struct Call {
    pub id: String,
    pub tool: String,
    pub args: Map<String, Value>,
    /// The call's own working directory (`workdir`), when it names one.
    pub cwd: Option<String>,
}

/// What an output records: the text the model saw and whether the call failed.
pub(super) struct Output {
    pub text: String,
    pub failed: bool,
}

/// A `function_call` (`arguments` is a JSON string) or a `custom_tool_call` (`input` is
/// free text, e.g. an `apply_patch` patch).
pub(super) fn function_call(p: &Map<String, Value>, custom: bool) -> Result<Call, FieldError> {
    let id = req_str(p, "call_id")?.to_string();
    let name = req_str(p, "name")?;
    let args = if custom {
        let input = req_str(p, "input")?;
        let mut args = Map::new();
        args.insert("input".into(), Value::String(input.to_string()));
        args
    } else {
        arguments(p)?
    };
    Ok(mapped(id, name, args))
}

/// A `local_shell_call`: `action.command` (argv) run in `action.working_directory`.
pub(super) fn local_shell_call(p: &Map<String, Value>) -> Result<Call, FieldError> {
    let id = match p.get("call_id").or_else(|| p.get("id")) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => return Err(wrong("call_id", "string", v)),
        None => return Err(missing("call_id")),
    };
    let action = match p.get("action") {
        Some(Value::Object(a)) => a,
        Some(v) => return Err(wrong("action", "object", v)),
        None => return Err(missing("action")),
    };
    let mut args = Map::new();
    if let Some(command) = action.get("command") {
        args.insert("command".into(), command.clone());
    }
    if let Some(dir) = action.get("working_directory") {
        args.insert("workdir".into(), dir.clone());
    }
    Ok(mapped(id, "local_shell", args))
}

/// The arguments of a `function_call`: its `arguments` string parsed as a JSON object.
fn arguments(p: &Map<String, Value>) -> Result<Map<String, Value>, FieldError> {
    let text = match p.get("arguments") {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::String(s)) => s,
        // Some writers keep the object itself.
        Some(Value::Object(map)) => return Ok(map.clone()),
        Some(v) => return Err(wrong("arguments", "JSON string", v)),
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(v) => Err(wrong("arguments", "JSON object", &v)),
        Err(e) => Err(FieldError::new(
            "arguments",
            ProblemKind::InvalidJson(e.to_string()),
        )),
    }
}

/// A call in the canonical vocabulary: shell calls carry their command as one line, a
/// patch (as `apply_patch`, or inside a shell command) is an edit of the files it names.
fn mapped(id: String, name: &str, mut args: Map<String, Value>) -> Call {
    let cwd = args
        .get("workdir")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut tool = canonical_tool(super::TOOLS, name);
    if tool == "shell" {
        if let Some(line) = command_line(args.get("command").or_else(|| args.get("cmd"))) {
            args.remove("cmd");
            args.insert("command".into(), Value::String(line));
        }
    }
    let patch = match tool.as_str() {
        "file_edit" => args
            .get("input")
            .or_else(|| args.get("patch"))
            .and_then(Value::as_str)
            .map(str::to_string),
        "shell" => args
            .get("command")
            .and_then(Value::as_str)
            .and_then(patch_in_command),
        _ => None,
    };
    if let Some(patch) = patch {
        let files = patch_files(&patch);
        tool = "file_edit".into();
        if let Some(first) = files.first() {
            args.insert("path".into(), Value::String(first.clone()));
        }
        args.insert(
            "paths".into(),
            Value::Array(files.into_iter().map(Value::String).collect()),
        );
        args.insert("patch".into(), Value::String(patch));
        args.remove("input");
        args.remove("command");
    }
    Call {
        id,
        tool,
        args,
        cwd,
    }
}

/// The command of a shell call as a shell line: a string as it is; an argv array as the
/// script of `bash -lc <script>` (and `sh -c`, `zsh -lc`, ...), else its words joined,
/// quoted where the shell would need it.
pub(super) fn command_line(command: Option<&Value>) -> Option<String> {
    match command? {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            if let [shell, flag, script] = words.as_slice() {
                let shell = shell.rsplit('/').next().unwrap_or(shell);
                let is_shell = ["bash", "sh", "zsh", "dash"].contains(&shell);
                let is_c = flag.starts_with('-') && !flag.starts_with("--") && flag.ends_with('c');
                if is_shell && is_c {
                    return Some((*script).to_string());
                }
            }
            Some(
                words
                    .iter()
                    .map(|w| quoted(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        _ => None,
    }
}

fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The patch a shell command hands to `apply_patch` (`apply_patch <<'EOF' ... EOF`, or
/// `apply_patch '<patch>'`): the text from `*** Begin Patch` to `*** End Patch`.
fn patch_in_command(line: &str) -> Option<String> {
    let head = line.trim_start();
    if !(head.starts_with("apply_patch") || head.starts_with("applypatch")) {
        return None;
    }
    let start = line.find("*** Begin Patch")?;
    let end = line[start..]
        .find("*** End Patch")
        .map_or(line.len(), |e| start + e + "*** End Patch".len());
    Some(line[start..end].to_string())
}

/// The files a patch names (`*** Add File:`, `*** Update File:`, `*** Delete File:`,
/// `*** Move to:`), in order, each once.
pub(super) fn patch_files(patch: &str) -> Vec<String> {
    const HEADS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut files: Vec<String> = Vec::new();
    for line in patch.lines() {
        let named = HEADS.iter().find_map(|h| line.strip_prefix(h));
        if let Some(path) = named.map(str::trim).filter(|p| !p.is_empty()) {
            if !files.iter().any(|f| f == path) {
                files.push(path.to_string());
            }
        }
    }
    files
}

/// A `function_call_output` / `custom_tool_call_output`'s `output`: a string (since 0.4x a
/// JSON string `{"output", "metadata": {"exit_code"}}` for shell calls, or the text forms
/// `Exit code: N` and `Process exited with code N`), or a structured payload (`content`,
/// `success`, `metadata`) or a list of content items.
pub(super) fn output(p: &Map<String, Value>) -> Result<Output, FieldError> {
    match p.get("output") {
        None | Some(Value::Null) => Ok(Output {
            text: String::new(),
            failed: false,
        }),
        // Older Codex wraps an exec's output as JSON in the string; a command's own output
        // may be JSON too. Only a wrapper whose members have the wrapper's types is read as
        // one: anything else is the command's text, as recorded, and no problem.
        Some(Value::String(s)) => Ok(match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) if o.contains_key("output") || o.contains_key("metadata") => {
                structured(&o).unwrap_or_else(|_| plain(s))
            }
            _ => plain(s),
        }),
        Some(Value::Object(o)) => structured(o).map_err(|e| nested("output", e)),
        Some(Value::Array(items)) => {
            let mut texts = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = format!("output[{i}]");
                if !item.is_object() {
                    return Err(wrong(&at, "object", item));
                }
                texts.extend(opt_str(item.get("text"), &format!("{at}.text"))?);
            }
            Ok(Output {
                text: texts.join("\n"),
                failed: false,
            })
        }
        Some(v) => Err(wrong("output", "string or object", v)),
    }
}

/// A plain-text output: failed when its first line states a non-zero exit code.
fn plain(s: &str) -> Output {
    Output {
        failed: text_exit_code(s).is_some_and(|c| c != 0),
        text: s.to_string(),
    }
}

/// A structured output: failed when `metadata.exit_code` is not 0 or `success` is false.
/// A field of another type than these is a problem.
fn structured(o: &Map<String, Value>) -> Result<Output, FieldError> {
    let text = match opt_str(o.get("output"), "output")? {
        Some(text) => Some(text),
        None => opt_str(o.get("content"), "content")?,
    };
    let text = text.unwrap_or_default().to_string();
    let metadata = o.get("metadata");
    let exit = typed_at(
        metadata,
        "metadata",
        &["exit_code"],
        "integer",
        Value::as_i64,
    )?;
    let exit = exit.or_else(|| text_exit_code(&text));
    let refused = typed(o.get("success"), "success", "boolean", Value::as_bool)? == Some(false);
    Ok(Output {
        failed: refused || exit.is_some_and(|c| c != 0),
        text,
    })
}

/// The exit code a plain-text shell output states on its first line (`Exit code: N`,
/// Codex's shell output) or on any line (`Process exited with code N`, its unified exec).
fn text_exit_code(text: &str) -> Option<i64> {
    let first = text.trim_start().lines().next()?;
    if let Some(code) = first.strip_prefix("Exit code: ") {
        return code.trim().parse().ok();
    }
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Process exited with code "))
        .and_then(|c| c.trim().parse().ok())
}

fn req_str<'a>(p: &'a Map<String, Value>, key: &str) -> Result<&'a str, FieldError> {
    match p.get(key) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(missing(key)),
        Some(v) => Err(wrong(key, "string", v)),
    }
}

/// `update_plan`'s `plan` (`[{step, status}]`) as a todo list.
pub(super) fn plan(args: &Map<String, Value>) -> Option<Vec<crate::model::Todo>> {
    let steps = args.get("plan")?.as_array()?;
    Some(
        steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                Some(crate::model::Todo {
                    id: (i + 1).to_string(),
                    parent_id: None,
                    status: s.get("status")?.as_str()?.to_string(),
                    content: s.get("step")?.as_str()?.to_string(),
                    verify_command: None,
                })
            })
            .collect(),
    )
}
