"""A small DSH-shaped git repository, built from scratch for the tests.

Three commits, tagged v1, v2, v3:
- v1: a Cordis-like `Context` class, an agent registry, a TSX component, docs,
  a non-UTF-8 text file, a binary, a CRLF file with no final newline;
- v2: three lines inserted above the constructor (everything below shifts),
  the registry file renamed, the TSX component edited;
- v3: a symbolic link and a submodule (gitlink) entry added.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

CONTEXT_V1 = """\
import { Fiber } from './fiber'
import { ReflectService } from './reflect'

export interface Context {
  fiber: Fiber
}

export class Context {
  static readonly origin = 'cordis'
  baseUrl?: string

  constructor(config: object = {}) {
    const self = this
    this.fiber = new Fiber(self, {}, Object.create(null), null, () => [])
    this.reflect = new ReflectService(self)
    this.registry = new RegistryService(self)
    this.events = new EventsService(self)
    this.logger = new LoggerService(self)
  }

  get name(): string {
    return 'root'
  }

  plugin(apply: unknown) {
    return this.registry.plugin(apply)
  }
}

export namespace Context {
  export interface Config {
    timeout?: number
  }
}
"""

CONTEXT_V2 = CONTEXT_V1.replace(
    "  constructor(config: object = {}) {\n",
    "  // The five services below are built before any plugin runs.\n"
    "  // They are not registered through the registry.\n"
    "  // See docs/architecture.md.\n"
    "  constructor(config: object = {}) {\n",
)

AGENT = """\
export interface AgentFactory {
  create(options: AgentOptions): Agent
  readonly name: string
}

export const defaults = {
  maxDepth: 3,
  surfaceOp: 'append',
  build() {
    return 1
  },
}

export class AgentRegistry {
  private factory?: AgentFactory

  setFactory(factory: AgentFactory): () => void {
    if (this.factory) throw new Error('an agent factory is already registered')
    this.factory = factory
    return () => { this.factory = undefined }
  }
}

export function createAgent(registry: AgentRegistry) {
  return registry
}
"""

APP_V1 = """\
import React from 'react'

export function App({ title }: { title: string }) {
  return <div className="app">{title}</div>
}

export const Panel = () => <section>panel</section>
"""

APP_V2 = APP_V1.replace('<div className="app">', '<main className="app">').replace("</div>", "</main>")

ARCHITECTURE = """\
# Architecture

DSH is a set of plugins on a small core.
There is no privileged core to patch: everything is a plugin.
Configuration drives loading.
"""

PACKAGE_JSON = """\
{
  "name": "dsh-fixture",
  "private": true,
  "devDependencies": {
    "typescript": "^5.0.0"
  }
}
"""


@dataclass(frozen=True)
class FixtureRepo:
    path: Path  # ordinary repository with a work tree
    bare: Path  # bare clone whose config file was removed (some mirrors ship none)
    shas: dict[str, str]  # tag -> commit SHA


def git(cwd: Path, *args: str, env: dict | None = None) -> str:
    full_env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Fixture",
        "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
        "GIT_COMMITTER_NAME": "Fixture",
        "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
        **(env or {}),
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=full_env, check=True, capture_output=True, text=True
    ).stdout.strip()


def configure_shouting(root: Path) -> None:
    """The clone's configuration names an attributes file that gives .ts files a diff driver,
    and gives that driver a textconv filter that upper-cases the text: a user's own settings
    may (`core.attributesFile` is read in a bare clone too), and `git diff` and `git log -G`
    run such a filter unless told not to."""
    attributes = root / "user-attributes"
    attributes.write_text("*.ts diff=shout\n")
    git(root, "config", "core.attributesFile", str(attributes))
    git(root, "config", "diff.shout.textconv", "tr a-z A-Z <")


def _write(root: Path, rel: str, content: str | bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content.encode() if isinstance(content, str) else content)


def _commit(root: Path, message: str, date: str, tag: str, add: bool = True) -> str:
    if add:
        git(root, "add", "-A")
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git(root, "commit", "-q", "-m", message, env=env)
    git(root, "tag", tag)
    return git(root, "rev-parse", "HEAD")


def build_fixture_repo(base: Path) -> FixtureRepo:
    root = base / "dsh"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    shas = {}

    _write(root, "vendor/cordis/src/context.ts", CONTEXT_V1)
    _write(root, "packages/core/agent/src/index.ts", AGENT)
    _write(root, "packages/ui/src/App.tsx", APP_V1)
    _write(root, "docs/architecture.md", ARCHITECTURE)
    _write(root, "package.json", PACKAGE_JSON)
    _write(root, "packages/legacy/notes.txt", b"caf\xe9 au lait\nna\xefve line two\nthird\n")
    _write(root, "assets/logo.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
    _write(root, "packages/core/session/src/crlf.ts", "export const a = 1\r\nexport const b = 2\r\nexport const c = 3")
    shas["v1"] = _commit(root, "v1: initial layout", "2026-08-01T10:00:00Z", "v1")

    _write(root, "vendor/cordis/src/context.ts", CONTEXT_V2)
    git(root, "mv", "packages/core/agent/src/index.ts", "packages/core/agent/src/registry.ts")
    _write(root, "packages/ui/src/App.tsx", APP_V2)
    shas["v2"] = _commit(root, "v2: document the constructor, rename the registry", "2026-08-02T10:00:00Z", "v2")

    os.symlink("../vendor/cordis/src/context.ts", root / "docs/context-link.ts")
    git(root, "add", "-A")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{shas['v1']},vendor/submodule")
    shas["v3"] = _commit(root, "v3: a link and a submodule", "2026-08-03T10:00:00Z", "v3", add=False)

    bare = base / "dsh-bare.git"
    git(base, "clone", "-q", "--bare", str(root), str(bare))
    (bare / "config").unlink()
    return FixtureRepo(root, bare, shas)


def write_config(folder: Path, repo: FixtureRepo, default_pin: str = "v1") -> Path:
    pins = "\n".join(f'{tag} = "{sha}"' for tag, sha in sorted(repo.shas.items()))
    path = folder / "dshaudit.toml"
    path.write_text(
        f'default_pin = "{default_pin}"\n\n[upstream]\nurl = "https://example.invalid/dsh"\n\n[pins]\n{pins}\n'
    )
    return path


def bare_clone(repo: FixtureRepo, dest: Path) -> Path:
    """A bare clone of the fixture repository at `dest`: one a test may move refs in and fetch into."""
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(dest)], check=True)
    return dest


def commit_elsewhere(repo: FixtureRepo, work: Path, files: dict[str, str]) -> str:
    """A commit on top of the fixture repository, made in a clone of it at `work` (which a
    clone that lacks it can fetch it from): its SHA."""
    subprocess.run(["git", "clone", "-q", str(repo.path), str(work)], check=True)
    git(work, "config", "user.name", "t")
    git(work, "config", "user.email", "t@example.invalid")
    for rel, content in files.items():
        _write(work, rel, content)
    return _commit(work, "later", "2026-08-09T10:00:00Z", "later")
