"""Objects of the clone read one at a time (git/objects.py), through the two `git cat-file`
processes a handle keeps running."""

from __future__ import annotations

import pytest

from dshaudit.core.errors import RepoError
from dshaudit.git.objects import BlobStore, ObjectReader
from fixture_repo import git

BINARY = b"\x00\x01\xff\nno final newline"


@pytest.fixture
def objects(make_repo):
    """A reader of a repository holding a text file, a binary, an empty file and an annotated tag."""
    built = make_repo({"a.txt": "alpha\n", "bin.dat": BINARY, "empty": ""})
    git(built.root, "tag", "-a", "-m", "annotated", "ann", built.shas[0])
    ids = {
        name: git(built.root, "rev-parse", rev)
        for name, rev in (("commit", "HEAD"), ("tree", "HEAD^{tree}"), ("tag", "ann"))
        + tuple((path, f"HEAD:{path}") for path in ("a.txt", "bin.dat", "empty"))
    }
    reader = ObjectReader(str(built.root / ".git"))
    yield reader, ids
    reader.close()


def test_the_kind_of_each_object_and_none_for_one_the_clone_lacks(objects):
    reader, ids = objects
    kinds = {name: reader.kind(ids[name]) for name in ("commit", "tree", "tag", "a.txt", "empty")}
    assert kinds == {"commit": "commit", "tree": "tree", "tag": "tag", "a.txt": "blob", "empty": "blob"}
    assert reader.kind("1" * 40) is None
    assert reader.kind(ids["commit"].upper()) == "commit"  # hex digits, whatever their case


def test_contents_come_whole_one_after_another(objects):
    reader, ids = objects
    assert [reader.read(ids[p]) for p in ("bin.dat", "empty", "a.txt", "bin.dat")] == [BINARY, b"", b"alpha\n", BINARY]
    assert reader.read(ids["commit"]).startswith(b"tree " + ids["tree"].encode())


def test_an_object_the_clone_lacks_is_a_repo_error_and_the_reader_reads_on(objects):
    reader, ids = objects
    with pytest.raises(RepoError, match="^cannot read object 1{40}: git cat-file says '1{40} missing'$"):
        reader.read("1" * 40)
    assert reader.read(ids["a.txt"]) == b"alpha\n"


def test_only_hex_digits_reach_git(objects):
    """A revision is no id (ValueError, before git is asked), and a newline inside an id
    (which git would read as a second question) is dropped with the other blanks."""
    reader, ids = objects
    for revision in ("HEAD", f"{ids['commit']}^", "ann"):
        with pytest.raises(ValueError):
            reader.kind(revision)
        with pytest.raises(ValueError):
            reader.read(revision)
    assert reader.kind(f"{ids['a.txt']}\n{ids['bin.dat']}") is None  # one id of 80 digits, which no object has
    assert (reader.kind(ids["tree"]), reader.read(ids["a.txt"])) == ("tree", b"alpha\n")


def test_a_closed_reader_starts_again_when_asked(objects):
    reader, ids = objects
    assert reader.read(ids["a.txt"]) == b"alpha\n"
    reader.close()
    reader.close()
    assert (reader.kind(ids["tag"]), reader.read(ids["empty"])) == ("tag", b"")


def test_a_handle_reads_through_its_reader(make_repo):
    built = make_repo({"a.txt": "alpha\n"})
    repository = built.repository()
    snapshot = repository.snapshot(built.shas[0])
    assert snapshot.read(snapshot.entry("a.txt").blob_sha) == b"alpha\n"
    assert repository.object_type(built.shas[0]) == "commit" and repository.object_type("1" * 40) is None
    repository.close()


def test_the_store_keeps_the_blobs_used_last_up_to_its_limit():
    store = BlobStore(limit=10)
    store.put("a", b"aaaa")
    store.put("b", b"bbbb")
    assert store.get("a") == b"aaaa"  # used: now the last to go
    store.put("c", b"cccc")  # 12 bytes: the one used longest ago goes
    assert (store.get("a"), store.get("b"), store.get("c")) == (b"aaaa", None, b"cccc")
    store.put("huge", b"x" * 11)  # more than the whole limit: kept by nobody, pushes nothing out
    assert (store.get("huge"), store.get("a"), store.get("c")) == (None, b"aaaa", b"cccc")
