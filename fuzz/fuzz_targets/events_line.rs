//! `events.jsonl` stream parser: arbitrary bytes (any number of lines, invalid UTF-8,
//! a truncated last line, ...) through `read_events`, in lenient and in strict mode.
//!
//! Must never panic. Beyond that, the two modes must agree: lenient mode never fails
//! (it counts and skips), strict mode fails exactly when lenient mode found a problem,
//! and when neither found one both return the same events.
#![no_main]

use hindsight::ingest::events::read_events;
use hindsight::ingest::{IngestStats, Policy, Problems};
use libfuzzer_sys::fuzz_target;

const PATH: &str = "fuzz/events.jsonl";

fuzz_target!(|data: &[u8]| {
    let mut lenient_problems = Problems::default();
    let mut lenient_stats = IngestStats::default();
    let lenient = read_events(
        data,
        PATH,
        Policy::Lenient,
        &mut lenient_problems,
        &mut lenient_stats,
    )
    .expect("lenient mode never fails");
    assert_eq!(
        lenient_stats.bytes,
        data.len() as u64,
        "every byte is counted"
    );
    assert_eq!(lenient_stats.records, lenient.len() as u64);

    let mut strict_problems = Problems::default();
    let mut strict_stats = IngestStats::default();
    let strict = read_events(
        data,
        PATH,
        Policy::Strict,
        &mut strict_problems,
        &mut strict_stats,
    );
    assert_eq!(
        strict_problems.count, 0,
        "strict mode returns problems, never counts them"
    );
    match strict {
        Ok(events) => {
            assert_eq!(
                lenient_problems.count, 0,
                "strict accepted what lenient flagged"
            );
            assert_eq!(events, lenient, "strict and lenient read different events");
        }
        Err(error) => {
            assert!(
                lenient_problems.count > 0,
                "strict failed on clean input: {error}"
            );
            assert_eq!(
                Some(&error),
                lenient_problems.listed.first(),
                "strict stops on the first problem lenient lists"
            );
        }
    }
});
