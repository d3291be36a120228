//! Package installs (`pip install -e .`, `npm ci`, `go get`, `cargo add`): a change to
//! what the next run sees that is not a change to the project's code (issue #10; the
//! decision is in docs/GUARDS.md, *Outcomes*).

use super::code::is_interpreter;
use super::grammar::{base_name, parse, Pipeline};

/// Package managers, and the subcommands that change what is installed. `apt-cache` only
/// ever queries (`apt-cache search`, `policy`), but is the manager's query tool all the same.
const PACKAGE_MANAGERS: [&str; 25] = [
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "conda",
    "mamba",
    "micromamba",
    "npm",
    "yarn",
    "pnpm",
    "bun",
    "cargo",
    "go",
    "gem",
    "bundle",
    "apt",
    "apt-get",
    "apt-cache",
    "apk",
    "brew",
    "dnf",
    "yum",
    "composer",
    "easy_install",
];
const INSTALL_WORDS: [&str; 7] = ["install", "uninstall", "add", "remove", "i", "ci", "get"];

/// Whether the line installs or removes packages (`pip install -e .`, `npm ci`,
/// `go get`, `python -m pip install`): it changes what the next run sees without
/// changing the project's code.
pub fn installs(command: &str) -> bool {
    installs_in(&parse(command))
}

pub(super) fn installs_in(list: &[Pipeline]) -> bool {
    list.iter()
        .flat_map(|p| &p.commands)
        .any(|c| is_install(c.effective()))
}

pub(super) fn is_install(words: &[String]) -> bool {
    subcommand(words).is_some_and(|sub| INSTALL_WORDS.contains(&sub))
}

/// Subcommands of a package manager that only report what is installed or available.
const QUERY_WORDS: [&str; 14] = [
    "list", "show", "freeze", "info", "ls", "search", "outdated", "view", "config", "policy",
    "depends", "rdepends", "madison", "showpkg",
];

/// Whether the command asks a package manager what is installed (`pip list`, `npm ls`,
/// `pip show x`): it shows, and checks nothing.
pub(super) fn is_package_query(words: &[String]) -> bool {
    subcommand(words).is_some_and(|sub| QUERY_WORDS.contains(&sub))
}

/// The subcommand of a package manager's command line (`install` of `python -m pip
/// install x`, of `uv pip install x`), if the command runs one.
fn subcommand(words: &[String]) -> Option<&str> {
    let program = words.first().map(|w| base_name(w))?;
    let mut rest: Vec<&str> = words[1..]
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .collect();
    let manager = if is_interpreter(program) && words.get(1).is_some_and(|w| w == "-m") {
        // `python -m pip install`: the module is the manager.
        rest.first()
            .is_some_and(|m| PACKAGE_MANAGERS.contains(m))
            .then(|| rest.remove(0))
    } else {
        PACKAGE_MANAGERS.contains(&program).then_some(program)
    };
    manager?;
    // `uv pip install`: a manager's own pip.
    if rest.first() == Some(&"pip") {
        rest.remove(0);
    }
    rest.first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_installs_are_told_apart() {
        for install in [
            "pip install -e .",
            "python -m pip install pytest==7.4",
            "npm ci",
            "npm i lodash",
            "cargo add serde",
            "go get golang.org/x/text",
            "uv pip install numpy",
            "cd /testbed && pip install -q pytest",
        ] {
            assert!(installs(install), "{install}");
        }
        for other in [
            "pip list",
            "npm test",
            "cargo build",
            "go test ./...",
            "git add .",
            "make install-check",
        ] {
            assert!(!installs(other), "{other}");
        }
    }
}
