"""The fact detectors on the DSH-shaped fixture of tests/fixture_facts.py.

One test (at least) per detector in src/dshaudit/facts/registry.toml, each
stating the exact value, its key fields and evidence `path:line`, with the
decoys next to what is counted. Then: parse errors, the registry's layout, and
measuring only the ids asked for. `dshaudit facts` and claims through `dshaudit
check` are in tests/cli/test_facts.py.

Expected values are written by hand from the fixture's files; `at()` only
turns "the line holding this text" into `path:line` so evidence does not rest
on magic numbers.
"""

from __future__ import annotations

import tomllib

import pytest

from conftest import REPO_ROOT
from dshaudit.core.model import FactStatus, Pin
from dshaudit.facts.book import measure, registry
from dshaudit.git.repository import DshRepository
from dshaudit.lang.symbols import parse
from fixture_facts import at, line_of, tree_at

REGISTRY_TOML = REPO_ROOT / "src" / "dshaudit" / "facts" / "registry.toml"

COVERED: set[str] = set()


def covers(*fact_ids: str):
    """Mark a test as the test of these detectors (see test_every_detector_has_a_test)."""

    def mark(fn):
        COVERED.update(fact_ids)
        return fn

    return mark


@pytest.fixture(scope="session")
def facts(facts_repo):
    """facts(id, tag) -> Fact, measuring every detector once per tag."""
    repository = DshRepository.open(str(facts_repo.path), "https://example.invalid/dsh")
    by_tag: dict[str, dict] = {}

    def get(fact_id: str, tag: str = "v1"):
        if tag not in by_tag:
            pin = Pin(tag, facts_repo.shas[tag])
            by_tag[tag] = {f.id: f for f in measure(repository.snapshot(pin.sha, tag), pin)}
        return by_tag[tag][fact_id]

    return get


def ok(fact):
    assert fact.status is FactStatus.OK, f"{fact.id}: {fact.status}: {fact.message}"
    return fact


def evidence(fact) -> list[str]:
    return [str(e) for e in fact.evidence]


def span(path: str, first: str, last: str, tag: str = "v1") -> str:
    return f"{path}:{line_of(path, first, tag)}-{line_of(path, last, tag)}"


def error_lines(path: str, tag: str) -> list[int]:
    """Lines where tree-sitter-typescript puts an ERROR or MISSING node."""
    tree = parse(path, tree_at(tag)[path].encode())
    out, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            out.append(node.start_point[0] + 1)
        stack.extend(node.children)
    return sorted(out)


# -- core, boot --------------------------------------------------------------------

CONTEXT = "vendor/cordis/src/context.ts"


@covers("core.context-builtin-services")
def test_context_builtin_services(facts):
    f = ok(facts("core.context-builtin-services"))
    # `this.root = self` and `this.config = config` are not `new`; `this.cache = new Map()`
    # is in a method, `this.x = new Fiber(...)` in another class's constructor.
    assert f.value == ["fiber", "reflect", "registry", "events", "logger"]
    assert f.fields == {"count": 5, "names": ["events", "fiber", "logger", "reflect", "registry"]}
    assert evidence(f) == [
        at(CONTEXT, "this.fiber = new Fiber"),
        at(CONTEXT, "this.reflect = new"),
        at(CONTEXT, "this.registry = new"),
        at(CONTEXT, "this.events = new"),
        at(CONTEXT, "this.logger = new"),
    ]
    assert evidence(f)[0] == "vendor/cordis/src/context.ts:18"


def test_context_builtin_services_namespaced_impl(facts):
    """v4 adds `this.timer = new timers.TimerService(self)`: still `this.<name> = new <Impl>(...)`."""
    f = ok(facts("core.context-builtin-services", "v4"))
    assert f.value == ["fiber", "reflect", "registry", "events", "logger", "timer"]
    assert at(CONTEXT, "this.timer = new timers.TimerService", "v4") in evidence(f)


BOOT = "packages/boot/app-boot/src/index.ts"


@covers("boot.static-loader-plugins")
def test_static_loader_plugins(facts):
    f = ok(facts("boot.static-loader-plugins"))
    # Hmr is imported but only assigned to `ctx.loader.disabled`, Logger is mounted but
    # is no cordis-plugin-*, the timer import is type-only (no default binding).
    assert f.value == ["Include", "Loader"]
    assert f.fields == {"count": 2, "imported": ["Hmr", "Include", "Loader"], "mount_sites": 2}
    assert evidence(f) == [
        at(BOOT, "import Loader"),
        at(BOOT, "import Include"),
        span(BOOT, "ctx.loader.builtins.include", "class extends Include"),
        at(BOOT, "ctx.plugin(Loader"),
    ]
    assert "packages/boot/app-boot/src/index.ts:16-18" in evidence(f)


def test_static_loader_plugins_at_v2(facts):
    f = ok(facts("boot.static-loader-plugins", "v2"))
    assert f.value == ["Group", "Include", "Loader"]
    assert f.fields == {"count": 3, "imported": ["Group", "Hmr", "Include", "Loader"], "mount_sites": 3}
    assert at(BOOT, "ctx.loader.builtins.group = Group", "v2") in evidence(f)
    assert at(BOOT, "import Group", "v2") in evidence(f)


# -- session -------------------------------------------------------------------------


@covers("session.surface-op-kinds")
def test_surface_op_kinds(facts):
    f = ok(facts("session.surface-op-kinds"))
    # Not counted: `surfaceOp: SurfaceOp` in interfaces, 'remove' in loop.spec.ts,
    # 'prepend' in compaction/tests/, 'replace-all' in apps/ (outside packages/).
    assert f.value == {
        "packages/client/connection": ["append", "computed"],
        "packages/client/ui": ["append"],
        "packages/context/tmux-context": ["replace"],
        "packages/core/agent-loop": ["append"],
    }
    assert f.fields == {
        "agent_loop": ["append"],
        "replace_packages": ["packages/context/tmux-context"],
        "kinds": ["append", "computed", "replace"],
        "sites": 5,
    }
    assert evidence(f) == [
        at("packages/client/connection/src/fixture.ts", "surfaceOp: 'append'"),
        at("packages/client/connection/src/fixture.ts", "surfaceOp: pickOp"),
        at("packages/client/ui/src/Replay.tsx", "surfaceOp: 'append'"),
        at("packages/context/tmux-context/src/index.ts", "surfaceOp: { op: 'replace'"),
        at("packages/core/agent-loop/src/loop.ts", "surfaceOp: 'append'"),
    ]
    assert "packages/core/agent-loop/src/loop.ts:10" in evidence(f)


def test_surface_op_const_assertion_is_the_string(facts):
    """v4: `surfaceOp: 'append' as const` (as DSH's tests write it) is the string 'append'."""
    f = ok(facts("session.surface-op-kinds", "v4"))
    assert f.value["packages/core/agent-loop"] == ["append"]
    assert f.fields["agent_loop"] == ["append"]
    assert at("packages/core/agent-loop/src/loop.ts", "'append' as const", "v4") in evidence(f)


def test_surface_op_in_a_file_git_calls_binary_is_not_dropped(facts):
    """v4: a source file with a raw NUL byte holds `surfaceOp: 'append'`: count it or refuse, never skip it."""
    f = facts("session.surface-op-kinds", "v4")
    if f.status is FactStatus.OK:
        assert f.value.get("packages/client/runtime") == ["append"], (
            "packages/client/runtime/src/provenance.ts:2 was dropped"
        )
    else:
        assert "packages/client/runtime/src/provenance.ts" in f.message


KNOWN = "packages/core/session/src/known-event-types.ts"


@covers("session.known-event-types")
def test_known_event_types(facts):
    f = ok(facts("session.known-event-types"))
    # The spread `...PLUGIN_EVENT_TYPES` is no string member; RETIRED_SESSION_EVENT_TYPES is another set.
    assert f.value == ["session/created", "user/message", "assistant/message"]
    assert f.fields == {"count": 3, "names": ["assistant/message", "session/created", "user/message"]}
    assert evidence(f) == [
        at(KNOWN, "'session/created'"),
        at(KNOWN, "'user/message'"),
        at(KNOWN, "'assistant/message'"),
    ]
    assert evidence(f)[0] == "packages/core/session/src/known-event-types.ts:5"


def test_known_event_types_at_v2(facts):
    f = ok(facts("session.known-event-types", "v2"))
    assert f.value == ["session/created", "user/message", "assistant/message", "compaction/end"]
    assert f.fields["count"] == 4
    assert evidence(f)[-1] == at(KNOWN, "'compaction/end'", "v2")


JSONL = "packages/session/session-persistence-jsonl/src/format.ts"


@covers("session.retired-header-fields")
def test_retired_header_fields(facts):
    f = ok(facts("session.retired-header-fields"))
    # Not counted: 'title' (the block warns), 'legacyId' (returns), 'cwd' (a local
    # hasOwn, not Object.hasOwn), 'fixtureOnly' (a .spec.ts file).
    assert f.value == ["approvalPolicy", "sandboxMode"]
    assert f.fields == {"count": 2}
    assert evidence(f) == [span(JSONL, "Object.hasOwn(line, 'sandboxMode')", "  }")]
    assert evidence(f) == ["packages/session/session-persistence-jsonl/src/format.ts:4-6"]


def test_retired_header_fields_ignore_required_fields(facts):
    """v4: `if (!Object.hasOwn(line, 'sessionId')) throw`: its ABSENCE throws; it is not retired."""
    f = ok(facts("session.retired-header-fields", "v4"))
    assert f.value == ["approvalPolicy", "sandboxMode"]
    assert f.fields == {"count": 2}


# -- context -------------------------------------------------------------------------

TIME = "packages/context/time-context/src/index.ts"
TMUX = "packages/context/tmux-context/src/index.ts"


@covers("context.snapshot-producers")
def test_snapshot_producers(facts):
    f = ok(facts("context.snapshot-producers"))
    # Not producers: the `readonly form: 'snapshot'` type, `source.form !== 'snapshot'`,
    # `{ name: 'snapshot' }`, a parameter default, and the .spec.ts object literal.
    # tmux-context returns early only on `pane.kind === 'reject'` and `pane.lines === 0`
    # (literal operands): it does not deduplicate.
    assert f.value == {
        "packages/context/time-context": {
            "sites": [at(TIME, "form: 'snapshot'")],
            "deduplicates": True,
            "surface_ops": [],
        },
        "packages/context/tmux-context": {
            "sites": [at(TMUX, "form: 'snapshot'")],
            "deduplicates": False,
            "surface_ops": ["replace"],
        },
    }
    assert f.fields == {
        "count": 2,
        "producers": ["time-context", "tmux-context"],
        "deduplicating": ["time-context"],
        "not_deduplicating": ["tmux-context"],
        "setting_surface_op": ["tmux-context"],
    }
    assert evidence(f) == [
        at(TIME, "if (previous === text) return"),
        at(TIME, "form: 'snapshot'"),
        at(TMUX, "form: 'snapshot'"),
    ]
    assert at(TMUX, "pane.kind === 'reject'") not in evidence(f)


def test_snapshot_producer_with_const_assertion(facts):
    """v4: `form: 'snapshot' as const` in an object literal builds a snapshot source too."""
    f = ok(facts("context.snapshot-producers", "v4"))
    assert f.fields["producers"] == ["cwd-context", "time-context", "tmux-context"]
    assert f.value["packages/context/cwd-context"] == {
        "sites": [at("packages/context/cwd-context/src/index.ts", "form: 'snapshot' as const", "v4")],
        "deduplicates": False,
        "surface_ops": [],
    }


# -- subagent ------------------------------------------------------------------------

SUBAGENT_SRC = "packages/subagent"


@covers("subagent.depth-limit")
def test_depth_limit(facts):
    f = ok(facts("subagent.depth-limit"))
    # FakeForkProvider (src/index.spec.ts) and FakeProvider (tests/) are tests; the
    # delegationDepth mention in packages/subagent/subagent is not the providers' package.
    assert f.value == {
        "subagent-acp": {
            "class": "AcpProvider",
            "depthLimit": False,
            "declared": "explicit",
            "mentions_delegation_depth": False,
        },
        "subagent-claude-code": {
            "class": "ClaudeCodeProvider",
            "depthLimit": False,
            "declared": "inherited from NO_START_CAPABILITIES",
            "mentions_delegation_depth": False,
        },
        "subagent-codex": {
            "class": "CodexProvider",
            "depthLimit": False,
            "declared": "inherited from NO_START_CAPABILITIES",
            "mentions_delegation_depth": False,
        },
        "subagent-fork": {
            "class": "ForkProvider",
            "depthLimit": True,
            "declared": "explicit",
            "mentions_delegation_depth": True,
        },
    }
    assert f.fields == {
        "out_of_process_default": False,
        "enforcing": ["subagent-fork"],
        "not_enforcing": ["subagent-acp", "subagent-claude-code", "subagent-codex"],
        "inheriting_default": ["subagent-claude-code", "subagent-codex"],
        "without_delegation_depth": ["subagent-acp", "subagent-claude-code", "subagent-codex"],
        "count": 4,
    }
    oop = f"{SUBAGENT_SRC}/subagent/src/out-of-process.ts"
    assert evidence(f) == [
        at(f"{SUBAGENT_SRC}/subagent-acp/src/index.ts", "readonly capabilities"),
        at(f"{SUBAGENT_SRC}/subagent-claude-code/src/index.ts", "readonly capabilities"),
        at(f"{SUBAGENT_SRC}/subagent-codex/src/index.ts", "readonly capabilities"),
        at(f"{SUBAGENT_SRC}/subagent-fork/src/index.ts", "readonly capabilities"),
        span(oop, "NO_START_CAPABILITIES", "})"),
    ]
    assert "packages/subagent/subagent/src/out-of-process.ts:4-7" in evidence(f)


def test_depth_limit_ignores_other_capabilities_fields(facts):
    """v4: `class AcpClientSide { readonly capabilities = {...} }` is not a `capabilities:
    SubagentCapabilities` declaration; it must neither count nor replace AcpProvider."""
    f = ok(facts("subagent.depth-limit", "v4"))
    assert f.value["subagent-acp"] == {
        "class": "AcpProvider",
        "depthLimit": False,
        "declared": "explicit",
        "mentions_delegation_depth": False,
    }
    assert f.fields["enforcing"] == ["subagent-fork"]
    assert at(f"{SUBAGENT_SRC}/subagent-acp/src/index.ts", "class AcpClientSide", "v4") not in evidence(f)


CLAUDE = "packages/subagent/subagent-claude-code/src"


@covers("subagent.claude-code.persist-session")
def test_persist_session(facts):
    f = ok(facts("subagent.claude-code.persist-session"))
    # `persistSession: true` in tests/run.spec.ts and in subagent-codex would disagree;
    # the interface property is a type. resume.ts has a parse error on line 1, far from
    # its needle on line 6, so it is measured.
    assert f.value is False
    assert f.fields == {"sites": 2}
    assert evidence(f) == [
        at(f"{CLAUDE}/index.ts", "persistSession: false"),
        at(f"{CLAUDE}/resume.ts", "persistSession: false"),
    ]
    assert evidence(f)[1] == "packages/subagent/subagent-claude-code/src/resume.ts:6"


def test_parse_error_far_from_the_needle_still_measures(facts):
    path = f"{CLAUDE}/resume.ts"
    assert error_lines(path, "v1") == [1]  # `export type * from` is an ERROR for the grammar
    assert line_of(path, "persistSession") == 6
    f = ok(facts("subagent.claude-code.persist-session", "v2"))
    assert f"{path}:6" in evidence(f)


def test_parse_error_on_the_needle_line_cannot_evaluate(facts):
    path = f"{CLAUDE}/defaults.ts"
    assert error_lines(path, "v3") == [4]  # `override accessor persistSession = false`
    assert line_of(path, "persistSession", "v3") == 4
    f = facts("subagent.claude-code.persist-session", "v3")
    assert f.status is FactStatus.CANNOT_EVALUATE
    assert f.value is None
    assert f.fields == {}
    assert "packages/subagent/subagent-claude-code/src/defaults.ts:4" in f.message
    assert "'persistSession'" in f.message and "(line 4)" in f.message
    assert evidence(f) == ["packages/subagent/subagent-claude-code/src/defaults.ts:4"]
    # Other detectors at the same pin are not affected.
    assert ok(facts("subagent.max-depth-default", "v3")).value == 3


TOOL = "packages/subagent/tool-subagent/src/config.ts"


@covers("subagent.max-depth-default")
def test_max_depth_default(facts):
    f = ok(facts("subagent.max-depth-default"))
    # Not counted: `.default(99)` in config.spec.ts, `maxDepth: config.maxDepth ?? 3`
    # (no .default), `timeoutMs: ....default(120_000)` (another key).
    assert f.value == 3
    assert f.fields == {"sites": 1}
    assert evidence(f) == [at(TOOL, "maxDepth: z.number()")]
    assert evidence(f) == ["packages/subagent/tool-subagent/src/config.ts:8"]


@covers("subagent.sdk-dependencies")
def test_sdk_dependencies(facts):
    f = ok(facts("subagent.sdk-dependencies"))
    claude = "packages/subagent/subagent-claude-code/package.json"
    codex = "packages/subagent/subagent-codex/package.json"
    # `@openai/codex-sdk` in dependencies is another package.
    assert f.value == {
        "@anthropic-ai/claude-agent-sdk": {"version": "0.2.10", "section": "dependencies", "manifest": claude},
        "@openai/codex": {"version": "0.46.0", "section": "optionalDependencies", "manifest": codex},
    }
    assert f.fields == {
        "claude-code_version": "0.2.10",
        "claude-code_section": "dependencies",
        "claude-code_runtime": True,
        "codex_version": "0.46.0",
        "codex_section": "optionalDependencies",
        "codex_runtime": False,
    }
    assert evidence(f) == [at(claude, '"@anthropic-ai/claude-agent-sdk"'), at(codex, '"@openai/codex"')]
    assert evidence(f) == [f"{claude}:6", f"{codex}:8"]


# -- hooks, interaction ----------------------------------------------------------------

RUNNER = "packages/hooks/hook-protocol/src/runner.ts"


@covers("hooks.default-timeout-ms")
def test_default_hook_timeout(facts):
    f = ok(facts("hooks.default-timeout-ms"))
    # DEFAULT_HOOK_TIMEOUT_MS_FLOOR and index.ts's alias are other constants.
    assert f.value == 600_000
    assert f.fields == {"sites": 1, "minutes": 10}
    assert evidence(f) == [at(RUNNER, "export const DEFAULT_HOOK_TIMEOUT_MS = ")]
    assert evidence(f) == ["packages/hooks/hook-protocol/src/runner.ts:2"]


def test_default_hook_timeout_at_v2_is_arithmetic(facts):
    f = ok(facts("hooks.default-timeout-ms", "v2"))
    assert f.value == 300_000  # `5 * 60 * 1000`
    assert f.fields == {"sites": 1, "minutes": 5}


APPROVAL = "packages/interaction/user-approval/src/index.ts"


@covers("approval.fallback-outcome")
def test_approval_fallback(facts):
    f = ok(facts("approval.fallback-outcome"))
    # Not counted: `.then(() => 'asked')` (no rejection handler), the waterfall's
    # event name, and the 'approved'/'denied' fallbacks of tests/approval.spec.ts.
    assert f.value == "unavailable"
    assert f.fields == {"outcomes": ["unavailable"], "sites": 2}
    lines = tree_at("v1")[APPROVAL].split("\n")
    assert lines[9].strip() == "return Promise.resolve().then(" and lines[17] == "    )"
    assert lines[10].strip() == "() => this.ctx.waterfall(" and lines[13] == "      ),"
    assert evidence(f) == [f"{APPROVAL}:10-18", f"{APPROVAL}:11-14"]


# -- manifests ---------------------------------------------------------------------------

# The fixture writes a package.json into each of these, beside folders that are no members.
from fixture_facts import MEMBERS  # noqa: E402


@covers("workspace.packages")
def test_workspace_packages(facts):
    f = ok(facts("workspace.packages"))
    # Not members: packages/legacy/old-shell (`!` exclusion), packages/context/compaction
    # (no package.json), packages/core/session/fixtures/demo and vendor/cordis/packages/loader
    # (too deep for the globs), scripts/ (no glob), the root.
    assert f.value == 21
    assert f.fields == {
        "count": 21,
        "members": list(MEMBERS),
        "families": [
            "boot",
            "client",
            "context",
            "core",
            "hooks",
            "interaction",
            "llm",
            "session",
            "subagent",
            "test-support",
        ],
        "family_count": 10,
    }
    assert evidence(f) == [
        at("pnpm-workspace.yaml", "- vendor/*"),
        at("pnpm-workspace.yaml", "- packages/*/*"),
        at("pnpm-workspace.yaml", "- apps/*"),
        at("pnpm-workspace.yaml", "!packages/legacy/*"),
    ]
    assert "pnpm-workspace.yaml:5" in evidence(f)


@covers("root.dependencies")
def test_root_dependencies(facts):
    f = ok(facts("root.dependencies"))
    # peerDependencies (react) are neither.
    assert f.value == {"production": 2, "development": 3}
    assert f.fields == {"production": 2, "development": 3, "development_names": ["tsx", "typescript", "vitest"]}
    assert evidence(f) == [at("package.json", '"dependencies"'), at("package.json", '"devDependencies"')]
    assert evidence(f) == ["package.json:4", "package.json:8"]


@covers("vendor.packages")
def test_vendor_packages(facts):
    f = ok(facts("vendor.packages"))
    # vendor/cordis/packages/loader is nested, vendor/notes has no package.json.
    assert f.value == ["@deepseek-ai/cordis", "@deepseek-ai/cosmokit"]
    assert f.fields == {"count": 2, "folders": ["vendor/cordis", "vendor/cosmokit"]}
    assert evidence(f) == ["vendor/cordis/package.json:2", "vendor/cosmokit/package.json:2"]


@covers("root.patches")
def test_root_patches(facts):
    f = ok(facts("root.patches"))
    # node-pty from package.json's pnpm.patchedDependencies, left-pad from pnpm-workspace.yaml.
    assert f.value == ["left-pad@1.3.0", "node-pty@1.2.0"]
    assert f.fields == {
        "count": 2,
        "files": ["patches/left-pad@1.3.0.patch", "patches/node-pty@1.2.0.patch"],
        "declared": ["left-pad@1.3.0", "node-pty@1.2.0"],
    }
    assert evidence(f) == ["patches/left-pad@1.3.0.patch:1", "patches/node-pty@1.2.0.patch:1"]


# -- scale --------------------------------------------------------------------------------


@covers("scale.typescript-files")
def test_typescript_files(facts):
    f = ok(facts("scale.typescript-files"))
    # 48 .ts/.tsx files (scripts/build.mts, vitest.config.mts, website/index.js are not).
    # Tests (13): 8 .spec.ts, 1 .spec.tsx, 1 .e2e.ts, store.test.ts, __tests__/replay.ts,
    # compaction/tests/helpers.ts. session/src/testing.ts is source. Support: test-support/fakes.
    assert f.value == 48
    assert f.fields == {"total": 48, "test": 13, "source": 35, "test_with_support": 14, "source_without_support": 34}
    assert f.evidence == ()
    expected = sorted(p for p in tree_at("v1") if p.endswith((".ts", ".tsx")))
    assert len(expected) == 48
    f2 = ok(facts("scale.typescript-files", "v2"))  # + packages/llm/llm/src/providers.ts
    assert f2.fields == {"total": 49, "test": 13, "source": 36, "test_with_support": 14, "source_without_support": 35}


@covers("scale.test-files")
def test_test_files(facts):
    f = ok(facts("scale.test-files"))
    # .test.ts, tests/ folders and vitest.setup.ts are no spec/e2e/vitest-config names;
    # vitest.config.mts is not .ts.
    counts = {"spec": 8, "spec_tsx": 1, "e2e": 1, "vitest_configs": 3}
    assert f.value == counts
    assert f.fields == counts
    assert evidence(f) == ["packages/client/ui/vitest.config.ts:1", "vitest.config.ts:1", "vitest.e2e.config.ts:1"]


@covers("scale.docs")
def test_docs(facts):
    f = ok(facts("scale.docs"))
    # README.md, packages/core/session/README.zh.md, docs/notes.mdx, docs/diagram.svg are not docs/**/*.md.
    assert f.value == 5
    assert f.fields == {"total": 5, "chinese": 2, "english": 3}
    assert ok(facts("scale.docs", "v2")).fields == {"total": 6, "chinese": 2, "english": 4}


@covers("scale.markers")
def test_markers(facts):
    f = ok(facts("scale.markers"))
    # Not markers: `todo:`/`fixme` (lower case), TODOS / TODO_LIST / XHACK (not whole
    # words), a TODO in docs/architecture.md and in scripts/build.mts (not .ts/.tsx).
    assert f.value == 4
    assert f.fields == {"lines": 4, "TODO": 2, "FIXME": 2, "HACK": 1}
    assert evidence(f) == [
        at("apps/cli/src/main.ts", "TODO FIXME"),
        at("packages/client/ui/src/Replay.tsx", "HACK:"),
        at("packages/context/compaction/src/index.ts", "// TODO:"),
        at("packages/core/agent-loop/src/loop.spec.ts", "FIXME:"),
    ]
    assert "packages/client/ui/src/Replay.tsx:7" in evidence(f)


@covers("scale.absent-strings")
def test_absent_strings(facts):
    f = ok(facts("scale.absent-strings"))
    assert f.value == {"ollama": 0}
    assert f.fields == {"ollama_files": 0, "total_files": 0}
    assert f.evidence == ()
    f2 = ok(facts("scale.absent-strings", "v2"))  # "ollama", "OLLAMA_HOST", "Ollama"
    assert f2.value == {"ollama": 2}
    assert f2.fields == {"ollama_files": 2, "total_files": 2}
    assert evidence(f2) == ["docs/providers.md:3", "docs/providers.md:4", "packages/llm/llm/src/providers.ts:1"]


# -- the registry itself ----------------------------------------------------------------


def test_every_detector_has_a_test():
    ids = {entry["id"] for entry in tomllib.loads(REGISTRY_TOML.read_text(encoding="utf-8"))["fact"]}
    assert ids == set(registry())
    assert sorted(ids - COVERED) == [], "detectors without a test in tests/unit/facts/test_detectors.py"
    assert sorted(COVERED - ids) == [], "tests of detectors that are not in registry.toml"


def test_layout_from_the_registry():
    """Package folders and test files as the [layout] table of registry.toml defines them."""
    from dshaudit.facts.engine import layout

    where = layout()
    assert [
        where.package_of(p)
        for p in [
            "packages/core/agent-loop/src/loop.ts",
            "packages/core/README.md",
            "vendor/cordis/src/context.ts",
            "vendor/README.md",
            "apps/cli/src/main.ts",
            "python/sdk/x.py",
            "examples/demo/a.ts",
            "docs/a.md",
            "package.json",
        ]
    ] == [
        "packages/core/agent-loop",
        "packages",
        "vendor/cordis",
        "vendor",
        "apps/cli",
        "python/sdk",
        "examples/demo",
        "docs",
        "package.json",
    ]
    tests = [
        "a/b.spec.ts",
        "a/b.spec.tsx",
        "a/b.e2e.ts",
        "a/b.test.tsx",
        "a/tests/h.ts",
        "a/test/h.ts",
        "a/__tests__/r.tsx",
    ]
    sources = [
        "a/b.ts",
        "a/spec.ts",
        "a/b.spec.mts",
        "a/tests.ts",
        "a/testing/h.ts",
        "tests",
        "packages/test-support/f/x.ts",
    ]
    assert [p for p in tests + sources if where.is_test_path(p)] == tests
    assert [p for p in tests + sources if where.is_test_support(p)] == ["packages/test-support/f/x.ts"]
    assert [where.family_of(f) for f in ["packages/core/session", "packages/core", "vendor/cordis", "apps/cli/x"]] == [
        "core",
        None,
        None,
        None,
    ]


def test_layout_is_data():
    from dshaudit.facts.engine import Layout

    other = Layout(
        {"package_roots": {"libs": 1}, "test_dirs": ["spec"], "test_file_suffixes": ["_test.ts"], "test_support": []}
    )
    assert other.package_of("libs/a/src/x.ts") == "libs/a"
    assert other.package_of("packages/core/agent-loop/src/loop.ts") == "packages"
    assert other.is_test_path("src/spec/x.ts") and other.is_test_path("src/x_test.ts")
    assert not other.is_test_path("src/x.spec.ts") and not other.is_test_support("packages/test-support/f/x.ts")


def test_measure_only_the_ids_asked_for(facts_repo):
    repository = DshRepository.open(str(facts_repo.path), "https://example.invalid/dsh")
    pin = Pin("v2", facts_repo.shas["v2"])
    got = measure(repository.snapshot(pin.sha, "v2"), pin, ["scale.docs", "hooks.default-timeout-ms"])
    assert [f.id for f in got] == ["hooks.default-timeout-ms", "scale.docs"]
    assert [f.value for f in got] == [300_000, 6]
    assert all(f.pin == pin for f in got)
