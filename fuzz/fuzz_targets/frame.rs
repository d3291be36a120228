//! Context-window frame parser: arbitrary bytes (a mutable copy, since simd-json parses
//! in place) through `parse_frame` with fresh `simd_json::Buffers`.
//!
//! Must never panic. The result must also not depend on the buffers' history: a second
//! parse of a fresh copy with the buffers already used gives the same result.
#![no_main]

use hindsight::ingest::frames::parse_frame;
use libfuzzer_sys::fuzz_target;

const PATH: &str = "fuzz/context/frame-0001.json";

fuzz_target!(|data: &[u8]| {
    let mut buffers = simd_json::Buffers::default();
    let mut bytes = data.to_vec();
    let first = parse_frame(&mut bytes, PATH, &mut buffers);

    let mut again = data.to_vec();
    let second = parse_frame(&mut again, PATH, &mut buffers);
    assert_eq!(first, second, "reused buffers changed the result");
});
