"""JUnit XML, for CI test reports: a testsuite per findings file, a testcase
per citation and per claim (in file order), a <failure> for each that fails.

Testcases carry `file` and `line` attributes (the place in the findings file),
and a failure's `type` is the status. Counts agree with the JSON summary:
tests = citations + claims, failures = failed citations + failed claims.
Findings and DSH text are untrusted: ElementTree escapes markup, and
characters XML 1.0 cannot hold at all (most control characters) are written
as visible `\\xNN` escapes first, so the document always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..model import CheckResult
from .common import Entry, entries

# Everything outside XML 1.0's Char production (tab, LF and CR are allowed).
_NOT_XML_RE = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    return _NOT_XML_RE.sub(
        lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100 else "\\u%04x" % ord(m.group()), text
    )


def _testcase(parent: ET.Element, e: Entry) -> None:
    case = ET.SubElement(parent, "testcase", {
        "classname": xml_safe(e.source.file),
        "name": xml_safe(f"{e.source.line}:{e.source.column} {e.target}"),
        "file": xml_safe(e.source.file),
        "line": str(e.source.line),
    })
    if e.ok:
        return
    failure = ET.SubElement(case, "failure", {"type": e.status, "message": xml_safe(e.message)})
    lines = [f"{e.source}: {e.summary}"]
    lines += [f"  {place}: {place.url}" for place in e.places]
    failure.text = xml_safe("\n".join(lines))


def render(result: CheckResult, context) -> str:
    items = entries(result, context.web_url)
    by_file: dict[str, list[Entry]] = {}
    for e in items:
        by_file.setdefault(e.source.file, []).append(e)
    root = ET.Element("testsuites", {
        "name": "dshaudit check",
        "tests": str(len(items)),
        "failures": str(sum(1 for e in items if not e.ok)),
        "errors": "0",
        "skipped": "0",
    })
    for file in sorted(by_file):
        cases = sorted(by_file[file], key=lambda e: (e.source.line, e.source.column, e.kind))
        suite = ET.SubElement(root, "testsuite", {
            "name": xml_safe(file),
            "tests": str(len(cases)),
            "failures": str(sum(1 for e in cases if not e.ok)),
            "errors": "0",
            "skipped": "0",
        })
        for e in cases:
            _testcase(suite, e)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
