//! WO-3's convergence breaker (seed 000) as an external guard: the starting point for
//! porting a harness's own guard to `hindsight --guard` (docs/EVENTS.md, "Protocol").
//!
//!   cargo build --release --example breaker
//!   hindsight replay corpora/ --guard wo3=target/release/examples/breaker
//!
//! Rounds of one (agent, family) count its failures; its success (or one implying it) clears
//! them; a file written or package installed since its last failure restarts them at 1.
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};

/// Everything the project's next session starts with: hindsight hands it back (`state`).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct State {
    /// agent -> family -> (rounds, mutations at its last failure, tier reported: 0, 1, 2)
    tracks: BTreeMap<String, BTreeMap<String, (u64, u64, usize)>>,
    /// Files written or packages installed, by agent.
    mutations: BTreeMap<String, u64>,
}

impl State {
    /// One tool result; a firing when a family newly reaches stalled or abandon.
    fn result(&mut self, r: &Value, thresholds: [u64; 2]) -> serde_json::Result<Option<Value>> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let (agent, family) = (text(&r["agent"]), text(&r["family"]));
        let seen = self.mutations.entry(agent.clone()).or_default();
        *seen += u64::from(r["mutation"] == true || r["environment"] == true);
        let (seen, tracks) = (*seen, self.tracks.entry(agent.clone()).or_default());
        if r["success"] == true {
            let implied: Vec<String> = serde_json::from_value(r["implies"].clone())?;
            let s = &r["signal"];
            let reports = s["count"].as_u64() > Some(0) || s["reported"].as_u64() > Some(0);
            if !(r["verification"] == true && reports) {
                tracks.retain(|f, _| *f != family && !implied.contains(f));
            }
            return Ok(None);
        }
        let t = tracks.entry(family.clone()).or_default();
        // Progress since the family's last failure starts a new trajectory.
        let restart = t.0 > 0 && seen > t.1;
        t.0 = if restart { 1 } else { t.0 + 1 };
        t.1 = seen;
        t.2 *= usize::from(!restart); // a new trajectory has reported nothing yet
        let tier = thresholds.iter().filter(|&&n| t.0 >= n).count();
        if tier <= t.2 {
            return Ok(None);
        }
        t.2 = tier;
        let (action, effect) = match (tier, agent == "main") {
            (2, true) => ("abandon", "terminal"), // a sub-agent's abandon ends only the sub-agent
            (2, false) => ("abandon", "advisory"),
            _ => ("stalled", "advisory"),
        };
        let firing = json!({"type": "firing", "turn": r["turn"], "agent": agent, "action": action,
            "effect": effect, "family": family, "detail": format!("{} rounds", t.0)});
        Ok(Some(firing))
    }

    /// The done marker: the state to hand back, and the rounds carried, as reports show them.
    fn done(&self) -> Value {
        let mut carry = Vec::new();
        for (agent, families) in &self.tracks {
            let agent: &str = if agent == "main" { "" } else { agent }; // "agent: family"
            let sep = if agent.is_empty() { "" } else { ": " };
            for (family, t) in families.iter().filter(|(_, t)| t.0 > 0) {
                carry.push(json!({"family": format!("{agent}{sep}{family}"), "rounds": t.0}));
            }
        }
        json!({"type": "done", "state": self, "carry": carry})
    }
}

fn main() -> std::io::Result<()> {
    let (mut state, mut thresholds) = (State::default(), [3, 5]);
    let (mut out, mut firings) = (std::io::stdout().lock(), Vec::new());
    for line in std::io::stdin().lock().lines() {
        let e: Value = serde_json::from_str(&line?)?;
        match e["type"].as_str() {
            Some("hello") => {
                let setting = |key: &str, default| e["settings"][key].as_u64().unwrap_or(default);
                thresholds = [setting("stalled", 3), setting("abandon", 5)];
            }
            Some("run_start") => {
                state = serde_json::from_value(e["state"].clone()).unwrap_or_default()
            }
            Some("tool_result") => firings.extend(state.result(&e, thresholds)?),
            Some("run_end") => {
                for f in firings.drain(..).chain([state.done()]) {
                    writeln!(out, "{f}")?;
                }
                out.flush()?;
            }
            _ => {}
        }
    }
    Ok(())
}
