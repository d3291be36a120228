//! hindsight: replays coding-agent harness guards over recorded telemetry.
//!
//! The modules read as the data flow, each depending only on those before it:
//! `ingest -> model -> normalize -> guards -> replay -> cost -> report -> gate -> cmd`;
//! `synth` writes runs in the recorded format (the producer side of `ingest`); `output` is
//! where every command writes (the check against what it reads), used by `report`, `synth`
//! and `cmd`; `shard` splits a corpus by whole projects for runs across machines, used by
//! `cmd` (`--shard`) and `report` (merging shard reports); `events` writes the annotated
//! stream as the documented JSON Lines of docs/EVENTS.md (it reads `normalize` and `model`
//! only, and `cmd` drives it); `recent` is the table of recent values through which
//! `ingest` and `normalize` share what a run repeats, and `hash` the hasher of every
//! in-memory table; `rng` the seeded generator `synth` and the gate's bootstrap share.

pub mod cmd;
pub mod config;
pub mod cost;
pub mod events;
pub mod gate;
pub mod guards;
pub mod hash;
pub mod ingest;
pub mod interrupt;
pub mod model;
pub mod normalize;
pub mod output;
pub mod recent;
pub mod replay;
pub mod report;
pub(crate) mod rng;
pub mod shard;
pub mod synth;
