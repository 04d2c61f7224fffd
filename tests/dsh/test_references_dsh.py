"""Names and quoted code against a real DSH clone ($DSH_REPO): a real constant's
value, a real deletion, a phantom, and findings/ naming nothing that is not there.
Skipped, with the reason, when no clone is named."""

from __future__ import annotations

import pytest

from conftest import REPO_ROOT
from dshaudit.checking.mentions import absent_claims, document_exemptions, document_names
from dshaudit.checking.references import check_references, prefetch_references
from dshaudit.core.model import LineRange, SourceLocation
from dshaudit.core.references import ReferenceStatus
from dshaudit.documents.findings import collect_markdown
from dshaudit.documents.names import CODE, Name
from dshaudit.git.repository import DshRepository
from dshaudit.index import nameindex
from dshaudit.platform import cache

pytestmark = pytest.mark.dsh

RC7 = "99f6f02fecdb7dff40c3fbc9470f5907c29f74ca"
RC2 = "b150a551b8d465e31e418e1b2eaf5e79bbb7d28e"
PINS = {"rc7", "rc2"}  # pin names in prose name pins, not code


@pytest.fixture
def repository(dsh_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    nameindex.forget()
    cache.begin()
    yield DshRepository.open(str(dsh_repo), "unused")
    cache.end()
    nameindex.forget()


def refs(snapshot, *texts: str):
    items = [(Name(t, CODE, 0, len(t)), SourceLocation("f.md", i + 1, 1)) for i, t in enumerate(texts)]
    return check_references(items, snapshot, exempt=set(), absent=[])


def test_a_constant_compares_with_its_real_value(repository):
    snap = repository.snapshot(RC7)
    ok, differs = refs(snap, "DEFAULT_HOOK_TIMEOUT_MS = 600_000", "const DEFAULT_HOOK_TIMEOUT_MS = 60_000")
    assert ok.status is ReferenceStatus.OK
    assert ok.place == ("packages/hooks/hook-protocol/src/runner.ts", LineRange(20, 20))
    assert differs.status is ReferenceStatus.VALUE_DIFFERS
    assert differs.message.startswith(
        "`DEFAULT_HOOK_TIMEOUT_MS` is 600_000 at packages/hooks/hook-protocol/src/runner.ts:20, not 60_000"
    )


def test_a_name_deleted_between_the_pins(repository):
    [at_rc7] = refs(repository.snapshot(RC7), "AppShellService")
    assert at_rc7.status is ReferenceStatus.OK
    [at_rc2] = refs(repository.snapshot(RC2), "AppShellService")
    assert at_rc2.status is ReferenceStatus.DELETED
    assert "deleted at dedb730a 2026-08-18" in at_rc2.message


def test_a_phantom(repository):
    [ref] = refs(repository.snapshot(RC7), "OllamaProvider")
    assert ref.status is ReferenceStatus.PHANTOM
    assert "nor in the 200 first-parent commits up to it" in ref.message


def test_findings_name_nothing_that_is_not_at_their_pin(repository):
    """Every name and fragment of findings/ checks out at rc7 (the pin of every file)."""
    snap = repository.snapshot(RC7)
    documents = []
    for path in collect_markdown([REPO_ROOT / "findings"]):
        text = path.read_text(encoding="utf-8")
        items = [(n, SourceLocation(path.name, line, col)) for n, line, col in document_names(text)]
        absent = [(t, SourceLocation(path.name, line, col)) for t, line, col in absent_claims(text)]
        documents.append((items, absent, document_exemptions(text) | PINS))
    prefetch_references([(items, None) for items, _, _ in documents], snap)
    found = [
        r for items, absent, exempt in documents for r in check_references(items, snap, exempt=exempt, absent=absent)
    ]
    failing = [f"{r.source}: {r.status}: {r.message}" for r in found if not r.ok]
    assert failing == []
    assert sum(r.kind == "fragment" for r in found) >= 30
    assert sum(r.status is ReferenceStatus.ABSENT_CONFIRMED for r in found) >= 5
    assert len(found) >= 400


def _findings_at(snap):
    found = []
    for path in collect_markdown([REPO_ROOT / "findings"]):
        text = path.read_text(encoding="utf-8")
        items = [(n, SourceLocation(path.name, line, col)) for n, line, col in document_names(text)]
        absent = [(t, SourceLocation(path.name, line, col)) for t, line, col in absent_claims(text)]
        found += check_references(items, snap, exempt=document_exemptions(text) | PINS, absent=absent)
    return [(r.source, r.text, r.status, r.message, r.place) for r in found]


def test_rc2_from_an_rc7_cache_answers_as_a_cold_lookup_at_rc2(dsh_repo, tmp_path, monkeypatch):
    """Indexed from rc7 (only the files that changed are searched), the findings'
    names, fragments and absence claims at rc2 get the answers a cold lookup gives."""

    def at(sha, folder):
        monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / folder))
        nameindex.forget()
        cache.begin()
        return DshRepository.open(str(dsh_repo), "unused").snapshot(sha)

    cold = _findings_at(at(RC2, "cold"))
    cache.end()
    _findings_at(at(RC7, "warm"))
    cache.end()
    snap = at(RC2, "warm")
    derived = _findings_at(snap)
    cache.end()
    assert nameindex.index_for(snap).base == RC7
    assert derived == cold
    nameindex.forget()
