//! JUnit XML for CI systems: one test case per run and expectation (and per baseline
//! regression), so failures show up where CI shows test failures.

use super::baseline::Regression;
use super::judge::Verdict;
use std::io::Write;

fn escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '&' => "&amp;".to_string(),
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&apos;".to_string(),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => " ".to_string(),
            c => c.to_string(),
        })
        .collect()
}

pub fn write(
    verdicts: &[Verdict],
    regressions: &[Regression],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let failures = verdicts.iter().filter(|v| !v.pass).count() + regressions.len();
    let tests = verdicts.len() + regressions.len();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="hindsight gate" tests="{tests}" failures="{failures}">"#
    )?;
    writeln!(
        out,
        r#"  <testsuite name="expectations" tests="{}" failures="{}">"#,
        verdicts.len(),
        verdicts.iter().filter(|v| !v.pass).count()
    )?;
    for v in verdicts {
        let head = format!(
            r#"    <testcase classname="{}" name="{}""#,
            escape(&v.run),
            escape(&v.case)
        );
        if v.pass {
            writeln!(out, "{head}/>")?;
        } else {
            writeln!(out, "{head}>")?;
            writeln!(out, r#"      <failure message="{}"/>"#, escape(&v.message))?;
            writeln!(out, "    </testcase>")?;
        }
    }
    writeln!(out, "  </testsuite>")?;
    if !regressions.is_empty() {
        writeln!(
            out,
            r#"  <testsuite name="baseline" tests="{0}" failures="{0}">"#,
            regressions.len()
        )?;
        for r in regressions {
            writeln!(
                out,
                r#"    <testcase classname="{}" name="{}">"#,
                escape(&r.run),
                escape(&r.case)
            )?;
            writeln!(out, r#"      <failure message="{}"/>"#, escape(&r.message))?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}
