//! One SWE-agent action string read as a tool name and canonical arguments.

use serde_json::{json, Map, Value};

/// The table key of an action: its command word, or `str_replace_editor <command>`.
pub fn command_key(action: &str) -> String {
    let words = split(first_line(action));
    match words.as_slice() {
        [tool, sub, ..] if tool == "str_replace_editor" => format!("{tool} {sub}"),
        [word, ..] => word.clone(),
        [] => String::new(),
    }
}

/// The canonical arguments of an action whose command is `key` (a [`super::TOOLS`] entry,
/// or a plain shell command). `open_file` is the file the windowed tools act on.
pub fn arguments(key: &str, action: &str, open_file: Option<&str>) -> Map<String, Value> {
    let line = split(first_line(action));
    let arg = |i: usize| line.get(i).cloned();
    let mut args = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            args.insert(k.to_string(), v);
        }
    };
    let open = open_file.map(|p| json!(p));
    match key {
        "edit" => {
            put("path", open);
            match arg(1).as_deref().and_then(line_range) {
                Some((start, end)) => {
                    put("startLine", Some(json!(start)));
                    put("endLine", Some(json!(end)));
                    put("new_string", Some(json!(body(action, "end_of_edit"))));
                }
                // The replace-style `edit <search> <replace>` of later tool bundles.
                None => {
                    let all = split(action);
                    put("old_string", all.get(1).map(|s| json!(s)));
                    put("new_string", all.get(2).map(|s| json!(s)));
                }
            }
        }
        "insert" => {
            put("path", open);
            put(
                "insert_line",
                arg(1).and_then(|n| n.parse::<u64>().ok()).map(|n| json!(n)),
            );
            put("new_string", Some(json!(body(action, "end_of_insert"))));
        }
        "open" => {
            put("path", arg(1).map(|p| json!(p)));
            put("line", arg(2).map(|n| json!(n)));
        }
        "goto" => {
            put("path", open);
            put("line", arg(1).map(|n| json!(n)));
        }
        "scroll_up" | "scroll_down" => put("path", open),
        "search_dir" | "find_file" | "search_file" => {
            put("pattern", arg(1).map(|p| json!(p)));
            let default = (key == "search_file").then_some(open).flatten();
            put("path", arg(2).map(|p| json!(p)).or(default));
        }
        "create" => {
            put("path", arg(1).map(|p| json!(p)));
            put("content", Some(json!("")));
        }
        "submit" => {}
        k if k.starts_with("str_replace_editor ") => {
            let all = split(action);
            put("path", all.get(2).map(|p| json!(p)));
            let mut rest = all.iter().skip(3);
            while let Some(flag) = rest.next() {
                let name = match flag.as_str() {
                    "--old_str" => "old_string",
                    "--new_str" => "new_string",
                    "--file_text" => "content",
                    "--insert_line" => "insert_line",
                    "--view_range" => {
                        let range: Vec<Value> = rest.by_ref().take(2).map(|n| number(n)).collect();
                        put("view_range", Some(Value::Array(range)));
                        continue;
                    }
                    _ => continue,
                };
                put(
                    name,
                    rest.next().map(|v| {
                        if name == "insert_line" {
                            number(v)
                        } else {
                            json!(v)
                        }
                    }),
                );
            }
        }
        _ => put("command", Some(json!(action.trim()))),
    }
    args
}

/// A step the model answered: a tool call, or an empty action beside a non-empty
/// `response` (the model replied with no command). A harness exit (`exit_*`) is the harness
/// ending the run, and an empty action with no response records no reply.
pub fn is_model_call(action: &str, response: &str) -> bool {
    is_tool_call(action) || (action.trim().is_empty() && !response.trim().is_empty())
}

/// An action the model chose to run: not empty, and no harness exit (`exit_*`).
pub fn is_tool_call(action: &str) -> bool {
    let a = action.trim();
    let exit = a
        .strip_prefix("exit_")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
    !a.is_empty() && !exit
}

/// `(open_file, working_dir, recorded after the action)` of a step's `state`.
pub fn state(step: &Map<String, Value>) -> (Option<String>, Option<String>, bool) {
    let (state, after) = match step.get("state") {
        Some(Value::String(s)) => (
            serde_json::from_str::<Value>(s.trim()).unwrap_or_default(),
            false,
        ),
        Some(v @ Value::Object(_)) => (v.clone(), true),
        _ => return (None, None, false),
    };
    let get = |k: &str| {
        state
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && *s != "n/a")
            .map(str::to_string)
    };
    (get("open_file"), get("working_dir"), after)
}

/// The file an action leaves open in the windowed tools (`open`, `create`).
pub fn opens(key: &str, action: &str) -> Option<String> {
    matches!(key, "open" | "create")
        .then(|| split(first_line(action)).get(1).cloned())
        .flatten()
}

fn first_line(action: &str) -> &str {
    action.trim_start().lines().next().unwrap_or("")
}

/// `287:295` as a line range.
fn line_range(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(':')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn number(s: &str) -> Value {
    s.parse::<i64>().map_or_else(|_| json!(s), |n| json!(n))
}

/// The lines after the command line, up to the terminator line.
fn body(action: &str, end: &str) -> String {
    let lines: Vec<&str> = action
        .trim_start()
        .lines()
        .skip(1)
        .take_while(|l| l.trim_end() != end)
        .collect();
    lines.join("\n")
}

/// Shell words: whitespace separates; `'...'` is literal; `"..."` and a bare backslash escape.
pub fn split(s: &str) -> Vec<String> {
    let (mut words, mut word, mut open) = (Vec::new(), String::new(), false);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                open = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                open = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => word.push(n),
                            Some(n) => word.extend(['\\', n]),
                            None => word.push('\\'),
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if open || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                open = false;
            }
            c => word.push(c),
        }
    }
    if open || !word.is_empty() {
        words.push(word);
    }
    words
}
