//! The JSON report: the machine-readable form later tools (gate, sweep) read back.

use super::Report;
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
