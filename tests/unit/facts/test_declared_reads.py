"""Each fact reads no more than registry.toml says, and registry.toml documents the keys
that say it: `dshaudit history` watches only the files a fact declares."""

from __future__ import annotations

import re

from conftest import REPO_ROOT
from declared_reads import check_declared_reads
from dshaudit.git.repository import DshRepository


def test_every_fact_reads_no_more_than_it_declares(facts_repo):
    from dshaudit.core.model import Pin

    repository = DshRepository.open(str(facts_repo.path), "unused")
    for tag, sha in facts_repo.shas.items():
        check_declared_reads(repository.snapshot(sha, tag), Pin(tag, sha))


def test_registry_documents_its_keys():
    text = (REPO_ROOT / "src" / "dshaudit" / "facts" / "registry.toml").read_text()
    for key in ("reads", "lists", "names_only"):
        assert re.search(rf"^#   {key}\b", text, re.M), key
