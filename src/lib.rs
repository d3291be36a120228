//! hindsight: replays coding-agent harness guards over recorded telemetry.
//!
//! The modules read as the data flow, each depending only on those before it:
//! `ingest -> model -> normalize -> guards -> replay -> cost -> report -> cmd`.

pub mod cmd;
pub mod config;
pub mod cost;
pub mod guards;
pub mod ingest;
pub mod model;
pub mod normalize;
pub mod replay;
pub mod report;
pub mod synth;
