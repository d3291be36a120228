use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    hindsight::cmd::run(hindsight::cmd::Cli::parse())
}
