//! The coherence score of the files a run has written (seed 000 WO-2 "Design").
//!
//! `coherenceScore ∈ [0,1]` is the mean of the components that have evidence:
//! (a) `1 - duplicates / definitions` over type definitions. A name defined in several
//!     files is duplicated when one of them is shared (a header, a `.d.ts`, a TypeScript
//!     `export`): two `.c` files or two components may each keep a private type of the same
//!     name. A name defined twice in one C/C++ file is duplicated unless the file selects
//!     code with the preprocessor (the two may be `#ifdef` alternatives);
//! (b) of the implemented functions that have a declaration, the share whose parameter
//!     count matches one of the declarations of that name (overloads match any);
//! (c) `1 - unresolved / symbols`, only while diagnostics name unresolved symbols.

use crate::guards::boundary_verifier::decls::{Decl, DeclKind};
use std::collections::{BTreeMap, BTreeSet};

/// The latest known text of one file and what it declares.
pub struct Unit {
    /// Other files include or import it (a header or a declaration file).
    pub shared: bool,
    /// Every definition in the text counts (C/C++ without conditional compilation);
    /// otherwise one per name, as `#ifdef` branches and TypeScript interface merging may
    /// legally repeat a name.
    pub repeats: bool,
    pub text: String,
    pub decls: Vec<Decl>,
}

/// The worst incoherence found, for the firing's family and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Culprit {
    Duplicate {
        name: String,
        defs: usize,
        files: usize,
    },
    Mismatch {
        name: String,
        defined: usize,
        declared: Vec<usize>,
    },
    Unresolved {
        name: String,
    },
}

impl Culprit {
    pub fn name(&self) -> &str {
        match self {
            Self::Duplicate { name, .. }
            | Self::Mismatch { name, .. }
            | Self::Unresolved { name } => name,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Self::Duplicate { name, defs, files } if defs == files => {
                format!("`{name}` defined in {files} files")
            }
            Self::Duplicate { name, defs, files } => {
                let plural = if *files == 1 { "" } else { "s" };
                format!("`{name}` defined {defs} times in {files} file{plural}")
            }
            Self::Mismatch {
                name,
                defined,
                declared,
            } => {
                let declared: Vec<String> = declared.iter().map(usize::to_string).collect();
                let plural = if *defined == 1 { "" } else { "s" };
                format!(
                    "`{name}` defined with {defined} parameter{plural}, declared with {}",
                    declared.join(" or ")
                )
            }
            Self::Unresolved { name } => format!("`{name}` unresolved"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Coherence {
    pub score: f64,
    pub culprit: Option<Culprit>,
    /// The files behind the incoherence (duplicating or mismatching ones).
    pub files: BTreeSet<String>,
}

/// The score of `units` with the `unresolved` names seen in diagnostics; `None` when no
/// component has evidence (no types, no declared functions, nothing unresolved).
pub fn assess(units: &BTreeMap<String, Unit>, unresolved: &BTreeSet<String>) -> Option<Coherence> {
    let mut parts = Vec::new();
    let mut culprits = Vec::new();
    let mut files = BTreeSet::new();
    if let Some((value, worst)) = duplicates(units, &mut files) {
        parts.push(value);
        culprits.extend(worst);
    }
    if let Some((value, worst)) = signatures(units, &mut files) {
        parts.push(value);
        culprits.extend(worst);
    }
    if let Some(first) = unresolved.iter().next() {
        let mut symbols: BTreeSet<&str> = units
            .values()
            .flat_map(|u| u.decls.iter().map(|d| d.name.as_str()))
            .collect();
        symbols.extend(unresolved.iter().map(String::as_str));
        parts.push(1.0 - unresolved.len() as f64 / symbols.len() as f64);
        culprits.push(Culprit::Unresolved {
            name: first.clone(),
        });
    }
    if parts.is_empty() {
        return None;
    }
    Some(Coherence {
        score: parts.iter().sum::<f64>() / parts.len() as f64,
        culprit: culprits.into_iter().next(),
        files,
    })
}

/// Component (a) and the most duplicated type.
fn duplicates(
    units: &BTreeMap<String, Unit>,
    files: &mut BTreeSet<String>,
) -> Option<(f64, Option<Culprit>)> {
    // Per name: definitions per file, and whether any of them is shared.
    let mut by_name: BTreeMap<String, (BTreeMap<&str, usize>, bool)> = BTreeMap::new();
    for (path, unit) in units {
        // A tag and a typedef of one name are one type; count each namespace apart.
        let mut counts: BTreeMap<(String, bool), usize> = BTreeMap::new();
        for d in unit.decls.iter().filter(|d| d.kind == DeclKind::TypeDef) {
            *counts.entry((d.qualified(), d.alias)).or_default() += 1;
            by_name.entry(d.qualified()).or_default().1 |= unit.shared || d.exported;
        }
        for ((name, _), n) in counts {
            let n = if unit.repeats { n } else { 1 };
            let slot = by_name.entry(name).or_default().0.entry(path).or_default();
            *slot = (*slot).max(n);
        }
    }
    let (mut defs, mut distinct) = (0usize, 0usize);
    let mut worst: Option<(usize, Culprit)> = None;
    for (name, (per_file, shared)) in &by_name {
        let name_defs: usize = per_file.values().sum();
        let name_distinct = if *shared { 1 } else { per_file.len() };
        defs += name_defs;
        distinct += name_distinct;
        let extra = name_defs - name_distinct.min(name_defs);
        if extra == 0 {
            continue;
        }
        files.extend(per_file.keys().map(|p| p.to_string()));
        if worst.as_ref().is_none_or(|(most, _)| extra > *most) {
            let culprit = Culprit::Duplicate {
                name: name.clone(),
                defs: name_defs,
                files: per_file.len(),
            };
            worst = Some((extra, culprit));
        }
    }
    (defs > 0).then(|| {
        let value = 1.0 - (defs - distinct.min(defs)) as f64 / defs as f64;
        (value, worst.map(|(_, c)| c))
    })
}

/// Component (b) and the first mismatched function (by file, then name).
fn signatures(
    units: &BTreeMap<String, Unit>,
    files: &mut BTreeSet<String>,
) -> Option<(f64, Option<Culprit>)> {
    let mut declared: BTreeMap<&str, (BTreeSet<usize>, BTreeSet<&str>)> = BTreeMap::new();
    for (path, unit) in units {
        for d in unit.decls.iter().filter(|d| d.kind == DeclKind::FnDecl) {
            if let Some(n) = d.params {
                let entry = declared.entry(d.name.as_str()).or_default();
                entry.0.insert(n);
                entry.1.insert(path);
            }
        }
    }
    let mut defined: BTreeSet<(&str, String, usize)> = BTreeSet::new();
    for (path, unit) in units {
        for d in unit.decls.iter().filter(|d| d.kind == DeclKind::FnDef) {
            if let (Some(n), true) = (d.params, declared.contains_key(d.name.as_str())) {
                defined.insert((path, d.qualified(), n));
            }
        }
    }
    let (mut matched, mut worst) = (0usize, None);
    for (path, qualified, n) in &defined {
        let name = qualified.rsplit("::").next().unwrap_or(qualified);
        let Some((counts, decl_files)) = declared.get(name) else {
            continue;
        };
        if counts.contains(n) {
            matched += 1;
            continue;
        }
        files.insert(path.to_string());
        files.extend(decl_files.iter().map(|p| p.to_string()));
        worst.get_or_insert_with(|| Culprit::Mismatch {
            name: name.to_string(),
            defined: *n,
            declared: counts.iter().copied().collect(),
        });
    }
    let total = defined.len();
    (total > 0).then(|| (matched as f64 / total as f64, worst))
}
