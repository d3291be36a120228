//! Which guards a replay runs, in lanes (issue #29, item 7: one-pass sweeps).
//!
//! A plain replay runs one configuration's guards: one lane. A sweep runs, over one read
//! of each run, the guards its grid leaves alone once (lane 0) and the guards it sweeps
//! once per grid point (lane `k` for point `k - 1`). Guards do not see each other's
//! firings (each reads the normalized stream and writes its own), so lane 0 plus lane `k`
//! is exactly what a replay at point `k - 1` runs.

use crate::config::{Config, ConfigError};
use crate::guards::{Entry, Guard};

/// The guards of a replay: one configuration's, or a sweep's lanes.
#[derive(Debug, Clone)]
pub struct Lineup {
    base: Config,
    /// Each grid point's configuration; empty for a plain replay.
    points: Vec<Config>,
    /// The guards the grid sets: built per point, not in lane 0.
    swept: Vec<&'static str>,
}

/// One project's guards, each with its lane.
pub struct Laned {
    pub lane: usize,
    pub entry: Entry,
    pub guard: Box<dyn Guard>,
}

impl Lineup {
    /// Every guard of `config`, once.
    pub fn one(config: &Config) -> Self {
        Self {
            base: config.clone(),
            points: Vec::new(),
            swept: Vec::new(),
        }
    }

    /// `base`'s guards but `swept` once, and `swept` once per point of `points`.
    pub fn sweep(base: &Config, points: Vec<Config>, swept: Vec<&'static str>) -> Self {
        Self {
            base: base.clone(),
            points,
            swept,
        }
    }

    /// Lane 0 and one lane per grid point.
    pub fn lanes(&self) -> usize {
        1 + self.points.len()
    }

    /// Whether an external guard that cannot judge a run is recorded rather than fatal.
    pub fn lenient_guards(&self) -> bool {
        self.base.lenient_guards
    }

    /// Fresh guards for one project, lane by lane.
    pub fn build(&self) -> Result<Vec<Laned>, ConfigError> {
        let swept = |id: &str| self.swept.contains(&id);
        let shared = self.base.build_where(|id| !swept(id))?;
        let mut laned: Vec<Laned> = shared
            .into_iter()
            .map(|(entry, guard)| Laned {
                lane: 0,
                entry,
                guard,
            })
            .collect();
        for (k, point) in self.points.iter().enumerate() {
            let own = point.build_where(swept)?;
            laned.extend(own.into_iter().map(|(entry, guard)| Laned {
                lane: k + 1,
                entry,
                guard,
            }));
        }
        Ok(laned)
    }
}
