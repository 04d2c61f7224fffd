"""JUnit XML, for CI test reports: a testsuite per findings file, a testcase
per diagnostic (for `check`: every citation and claim, in file order), a
<failure> for each that fails.

Testcases carry `file` and `line` attributes (the place in the findings file),
and a failure's `type` is the status. Counts agree with the JSON summary:
tests = citations + claims, failures = failed citations + failed claims. A
diagnostic worth showing that does not fail (a warning without --strict)
keeps its message in <system-out>.
Findings and DSH text are untrusted: ElementTree escapes markup, and
characters XML 1.0 cannot hold at all (most control characters) are written
as visible `\\xNN` escapes first, so the document always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dshaudit.core.diagnostics import Diagnostic, Outcome
from dshaudit.output.interface import RenderContext

NEEDS_REPOSITORY = False
RENDERS_DIAGNOSTICS = True

# Everything outside XML 1.0's Char production (tab, LF and CR are allowed).
_NOT_XML_RE = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML_RE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def _testcase(parent: ET.Element, e: Diagnostic, strict: bool, shown: bool) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": xml_safe(e.source.file),
            "name": xml_safe(f"{e.source.line}:{e.source.column} {e.target or e.status}"),
            "file": xml_safe(e.source.file),
            "line": str(e.source.line),
        },
    )
    lines = [f"{e.source}: {e.summary}"]
    lines += [f"  {place}: {place.url}" for place in e.places]
    if e.fails(strict):
        failure = ET.SubElement(case, "failure", {"type": str(e.status), "message": xml_safe(e.message)})
        failure.text = xml_safe("\n".join(lines))
    elif shown:
        ET.SubElement(case, "system-out").text = xml_safe("\n".join(lines))


def render(outcome: Outcome, context: RenderContext) -> str:
    items = outcome.diagnostics
    shown = {id(d) for d in outcome.shown}
    by_file: dict[str, list[Diagnostic]] = {file: [] for file in outcome.files}
    for e in items:
        by_file.setdefault(e.source.file, []).append(e)
    root = ET.Element(
        "testsuites",
        {
            "name": f"dshaudit {outcome.command}",
            "tests": str(len(items)),
            "failures": str(sum(1 for e in items if e.fails(outcome.strict))),
            "errors": "0",
            "skipped": "0",
        },
    )
    for file in sorted(by_file):
        cases = sorted(by_file[file], key=lambda e: (e.source.line, e.source.column, e.kind))
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": xml_safe(file),
                "tests": str(len(cases)),
                "failures": str(sum(1 for e in cases if e.fails(outcome.strict))),
                "errors": "0",
                "skipped": "0",
            },
        )
        for e in cases:
            _testcase(suite, e, outcome.strict, id(e) in shown)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
