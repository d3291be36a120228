//! Guard settings: the seeds' defaults, overridden from a JSON file or `guard.key=value`.
//!
//! The file maps guard ids to partial settings objects, e.g.
//! `{"convergence_breaker": {"abandon": 6}}`. Unknown guards and unknown keys are errors,
//! so a typo never silently leaves a default in place. Its `external` member declares
//! external guards (issue #15, docs/EVENTS.md "Declaring an external guard").

use crate::guards::external::Declaration;
use crate::guards::{registry, Configured};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Settings objects by guard id; absent guards use their defaults.
    pub guards: BTreeMap<String, Value>,
    /// An external guard that cannot judge a run has its results for the run left out
    /// and listed under the run's `input.problems`, instead of failing the command.
    pub lenient_guards: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("unknown guard `{0}` (see `hindsight guards`)")]
    UnknownGuard(String),
    #[error("`{name}` could be any of {candidates}: use the full guard id")]
    AmbiguousGuard { name: String, candidates: String },
    #[error("guard `{guard}`: {message}")]
    Settings { guard: String, message: String },
    #[error("`{0}`: expected guard.key=value")]
    Assignment(String),
}

/// A `--config` file, read: settings by guard id, and the external guards it declares.
#[derive(Debug, Default)]
pub struct ConfigFile {
    pub guards: BTreeMap<String, Value>,
    pub external: BTreeMap<String, Declaration>,
}

/// The member of a config file that declares external guards.
const EXTERNAL: &str = "external";

impl ConfigFile {
    /// Reads `path`; the settings are checked later, once the external guards it declares
    /// are installed ([`Config::build`]).
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let file_error = |message: String| ConfigError::File {
            path: shown.clone(),
            message,
        };
        let value = crate::ingest::unique::read_user_file(path).map_err(file_error)?;
        let mut guards: BTreeMap<String, Value> =
            serde_json::from_value(value).map_err(|e| file_error(e.to_string()))?;
        let external = match guards.remove(EXTERNAL) {
            Some(v) => {
                serde_json::from_value(v).map_err(|e| file_error(format!("`{EXTERNAL}`: {e}")))?
            }
            None => BTreeMap::new(),
        };
        Ok(Self { guards, external })
    }
}

impl Config {
    /// Settings read from a config file, checked against the catalogue.
    pub fn from_file(file: ConfigFile) -> Result<Self, ConfigError> {
        let config = Self {
            guards: file.guards,
            lenient_guards: false,
        };
        config.build()?;
        Ok(config)
    }

    /// Applies `guard.key=value`; the value is read as JSON, else taken as a string. The
    /// guard is resolved here; the settings are checked by [`Config::build`] once every
    /// assignment is in, so `--set breaker.stalled=9 --set breaker.abandon=10` is judged
    /// as a whole.
    pub fn set(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (path, value) = assignment
            .split_once('=')
            .ok_or_else(|| ConfigError::Assignment(assignment.into()))?;
        let (guard, key) = path
            .split_once('.')
            .ok_or_else(|| ConfigError::Assignment(assignment.into()))?;
        let guard = resolve_guard(guard)?;
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
        let section = self
            .guards
            .entry(guard.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = section {
            map.insert(key.to_string(), value);
        }
        Ok(())
    }

    /// The settings of guard `id` as its own settings type: the object given (partial
    /// objects keep the other defaults), else the defaults. Settings [`Config::build`]
    /// refuses are read as the defaults; every command builds the guards first.
    pub fn settings<S: serde::de::DeserializeOwned + Default>(&self, id: &str) -> S {
        self.guards
            .get(id)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }

    /// What identifies the guards a replay ran with, for its report (issue #32, F): every
    /// registered guard (an external one with its command) and a digest of the settings
    /// each ran with, its defaults with the given keys over them, so a setting given at its
    /// default value is the same replay as one left alone.
    pub fn identity(&self) -> (Vec<String>, String) {
        let mut guards = Vec::new();
        let mut settings = Map::new();
        for entry in registry() {
            let id = entry.info.id;
            guards.push(match entry.command() {
                Some(command) => format!("{id}={command}"),
                None => id.to_string(),
            });
            let mut effective = entry.defaults();
            if let (Value::Object(effective), Some(Value::Object(given))) =
                (&mut effective, self.guards.get(id))
            {
                effective.extend(given.clone());
            }
            settings.insert(id.to_string(), effective);
        }
        settings.insert("lenient_guards".into(), Value::Bool(self.lenient_guards));
        let canonical = Value::Object(settings).to_string();
        (guards, crate::hash::digest(canonical.as_bytes()))
    }

    /// One fresh instance of every registered guard, configured.
    pub fn build(&self) -> Result<Vec<Configured>, ConfigError> {
        self.build_where(|_| true)
    }

    /// [`Config::build`] of the guards whose id `keep` accepts (a sweep builds the guards
    /// it sweeps once per grid point and the others once); only their settings are checked.
    pub fn build_where(&self, keep: impl Fn(&str) -> bool) -> Result<Vec<Configured>, ConfigError> {
        let entries = registry();
        if let Some(unknown) = self
            .guards
            .keys()
            .find(|id| !entries.iter().any(|e| e.info.id == id.as_str()))
        {
            return Err(ConfigError::UnknownGuard(unknown.clone()));
        }
        entries
            .into_iter()
            .filter(|entry| keep(entry.info.id))
            .map(|entry| {
                let guard = entry
                    .build(self.guards.get(entry.info.id))
                    .map_err(|message| ConfigError::Settings {
                        guard: entry.info.id.to_string(),
                        message,
                    })?;
                Ok((entry, guard))
            })
            .collect()
    }
}

/// A guard id, or a unique word of one (`breaker` for `convergence_breaker`), as the
/// sweep and `--set` accept it.
pub fn resolve_guard(name: &str) -> Result<&'static str, ConfigError> {
    let ids: Vec<&'static str> = registry().iter().map(|e| e.info.id).collect();
    if let Some(id) = ids.iter().find(|id| **id == name) {
        return Ok(id);
    }
    let matches: Vec<&'static str> = ids
        .into_iter()
        .filter(|id| id.split('_').any(|word| word == name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(ConfigError::UnknownGuard(name.to_string())),
        many => Err(ConfigError::AmbiguousGuard {
            name: name.to_string(),
            candidates: many.join(", "),
        }),
    }
}
