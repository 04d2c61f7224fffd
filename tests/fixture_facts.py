"""A small DSH-shaped repository for the fact detectors, written from scratch.

Every detector in src/dshaudit/facts/registry.toml has something to find here,
next to decoys it must not count. Four commits, tagged:

- v1: the base layout (expected values are spelled out in tests/unit/facts/test_detectors.py);
- v2: values change: the hook timeout becomes `5 * 60 * 1000`, a session event
  type and a third Cordis plugin (Group) are added, "Ollama" appears in a doc
  and in a source comment, one more doc;
- v3: a file tree-sitter-typescript 0.23.2 cannot parse (`override accessor`)
  with the `persistSession` needle on the very line of its ERROR node;
- v4: edge cases that are right by each detector's written definition but easy
  for a syntax query to get wrong (`'append' as const`, `new ns.Impl()`, a
  `!Object.hasOwn` required-field check, a source file holding a NUL byte, ...).

`tree_at(tag)` gives the files at a tag and `line_of` the line of a text in one
of them, so tests can state evidence as `path:line` without magic numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fixture_repo import _commit, _write, git

TAGS = ("v1", "v2", "v3", "v4")


def _json(text: str) -> str:
    return text.strip("\n") + "\n"


# -- vendor/ ---------------------------------------------------------------------

CONTEXT = """\
import { Fiber } from './fiber'
import { EventsService } from './events'
import { LoggerService } from './logger'
import { ReflectService } from './reflect'
import { RegistryService } from './registry'

export interface Context {
  fiber: Fiber
}

export class Context {
  static readonly origin = 'cordis'

  constructor(config: Context.Config = {}) {
    const self = this
    this.root = self
    this.config = config
    this.fiber = new Fiber(self, {}, null)
    this.reflect = new ReflectService(self)
    this.registry = new RegistryService(self)
    this.events = new EventsService(self)
    this.logger = new LoggerService(self)
    this.fiber.start()
  }

  extend(meta: object) {
    const child = Object.create(this)
    this.cache = new Map()
    return child
  }
}

export namespace Context {
  export interface Config {
    debug?: boolean
  }
}

class Other {
  constructor() {
    this.x = new Fiber(null, {}, null)
  }
}
"""

# v4: a service built from a namespaced class is still `new <Impl>(...)`.
CONTEXT_V4 = CONTEXT.replace(
    "    this.logger = new LoggerService(self)\n",
    "    this.logger = new LoggerService(self)\n    this.timer = new timers.TimerService(self)\n",
).replace("import { Fiber } from './fiber'\n", "import { Fiber } from './fiber'\nimport * as timers from './timer'\n")

FIBER = """\
export class Fiber {
  constructor(public ctx: unknown, public meta: object, public parent: Fiber | null) {
    this.children = new Set()
  }

  start() {
    return this
  }
}
"""

# -- packages/boot ------------------------------------------------------------------

APP_BOOT = """\
import Loader, { type Entry } from '@deepseek-ai/cordis-plugin-loader'
import Include from '@deepseek-ai/cordis-plugin-include'
import Hmr from '@deepseek-ai/cordis-plugin-hmr'
import type {} from '@deepseek-ai/cordis-plugin-timer'
import Logger from '@deepseek-ai/dsh-logger'
import type { Context } from '@deepseek-ai/cordis'

export type HmrConfig = Hmr.Config

export interface BootOptions {
  bare?: boolean
  entries: Entry[]
}

export async function boot(ctx: Context, options: BootOptions) {
  ctx.loader.builtins.include = options.bare
    ? Include
    : class extends Include {}
  ctx.loader.disabled.hmr = Hmr
  ctx.plugin(Logger)
  await ctx.plugin(Loader, { entries: options.entries })
  return ctx
}
"""

APP_BOOT_V2 = APP_BOOT.replace(
    "import Hmr from '@deepseek-ai/cordis-plugin-hmr'\n",
    "import Hmr from '@deepseek-ai/cordis-plugin-hmr'\nimport Group from '@deepseek-ai/cordis-plugin-group'\n",
).replace(
    "  ctx.loader.disabled.hmr = Hmr\n",
    "  ctx.loader.disabled.hmr = Hmr\n  ctx.loader.builtins.group = Group\n",
)

# -- packages/core -------------------------------------------------------------------

AGENT_LOOP = """\
import type { Message, Session, SurfaceOp } from '@deepseek-ai/dsh-session'

export interface AppendOptions {
  surfaceOp: SurfaceOp
}

export function appendMessage(session: Session, message: Message) {
  return session.append({
    type: 'assistant/message',
    surfaceOp: 'append',
    data: message,
  })
}
"""

# v4: the same op with a const assertion is still the string 'append'.
AGENT_LOOP_V4 = (
    AGENT_LOOP
    + """
export function appendToolResult(session: Session, message: Message) {
  return session.append({ type: 'tool/result', surfaceOp: 'append' as const, data: message })
}
"""
)

AGENT_LOOP_SPEC = """\
import { appendMessage } from './loop'

// FIXME: flaky under fake timers
const removed = { type: 'assistant/message', surfaceOp: 'remove' }

export { appendMessage, removed }
"""

KNOWN_EVENT_TYPES = """\
/** Every session event type this build understands. Generated; do not edit. */
import { PLUGIN_EVENT_TYPES } from './plugin-events'

export const KNOWN_SESSION_EVENT_TYPES: ReadonlySet<string> = new Set([
  'session/created',
  'user/message',
  'assistant/message',
  ...PLUGIN_EVENT_TYPES,
])

export const RETIRED_SESSION_EVENT_TYPES: ReadonlySet<string> = new Set([
  'turn/legacy',
])
"""

KNOWN_EVENT_TYPES_V2 = KNOWN_EVENT_TYPES.replace(
    "  'assistant/message',\n", "  'assistant/message',\n  'compaction/end',\n"
)

SESSION_TYPES = """\
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number }

export interface SurfaceEvent {
  type: string
  surfaceOp?: SurfaceOp
}

export interface Session {
  append(event: SurfaceEvent): number
  restore(mode: 'snapshot' | 'restore'): void
}
"""

SESSION_TESTING = """\
// A name with "test" in it is still source: only .spec/.e2e/.test names and test folders are tests.
export function makeSession() {
  return { events: [] as unknown[] }
}
"""

SESSION_STORE_TEST = """\
import { makeSession } from './testing'

export const store = makeSession()
"""

SESSION_REPLAY_UNDER_TESTS = """\
export const replayed = true
"""

# -- packages/context ---------------------------------------------------------------

TIME_CONTEXT = """\
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import type { Context } from '@deepseek-ai/cordis'

export const name = 'time-context'

export function apply(ctx: Context) {
  let previous: string | undefined
  ctx.on('agent/step', (turn: number) => {
    const text = render(new Date(), turn)
    if (previous === text) return
    previous = text
    return createUserMessage({
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: name, form: 'snapshot', sections: [{ name, text }] },
    })
  })
}

function render(now: Date, turn: number): string {
  return `turn ${turn} at ${now.toISOString()}`
}
"""

TIME_INVARIANT = """\
export const KNOWN_FORMS = ['instructions', 'snapshot'] as const
export const label = { name: 'snapshot' }

export function isTimeSnapshot(source: { form: string }, mode: 'snapshot' | 'restore' = 'snapshot'): boolean {
  if (source.form !== 'snapshot') return false
  return mode === 'snapshot'
}
"""

TIME_INVARIANT_SPEC = """\
import { isTimeSnapshot } from '../src/invariant'

const source = { kind: 'plugin', form: 'snapshot', sections: [] }
export const ok = isTimeSnapshot(source)
"""

TMUX_CONTEXT = """\
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import type { Context } from '@deepseek-ai/cordis'
import { capture } from './capture'

export function apply(ctx: Context, config: { target: string }) {
  ctx.on('agent/step', async (seq: number) => {
    const pane = await capture(config.target)
    if (pane.kind === 'reject') return
    if (pane.lines === 0) return
    const text = pane.text
    return {
      surfaceOp: { op: 'replace', start: seq, end: seq },
      message: createUserMessage({
        content: [{ type: 'text', text }],
        source: { kind: 'plugin', plugin: 'tmux-context', form: 'snapshot', sections: [{ name: 'pane', text }] },
      }),
    }
  })
}
"""

# v4: a third producer whose form carries a const assertion; it is still `form: 'snapshot'`.
CWD_CONTEXT_V4 = """\
import { createUserMessage } from '@deepseek-ai/dsh-llm'

export function cwdMessage(cwd: string) {
  return createUserMessage({
    content: [{ type: 'text', text: cwd }],
    source: { kind: 'plugin', plugin: 'cwd-context', form: 'snapshot' as const, sections: [] },
  })
}
"""

COMPACTION = """\
// TODO: compact by token budget, not by message count
// todo: this lower-case note is not a marker
export const TODOS = ['TODO_LIST', 'XHACK']

export function compact(messages: unknown[]) {
  return messages.slice(-10)
}
"""

COMPACTION_TEST_HELPER = """\
export const prepended = { type: 'user/message', surfaceOp: 'prepend' }
"""

# -- packages/client -----------------------------------------------------------------

CONNECTION_FIXTURE = """\
import type { SurfaceEvent, SurfaceOp } from '@deepseek-ai/dsh-session'

function pickOp(event: { replaces?: number }): SurfaceOp {
  return event.replaces === undefined ? 'append' : { op: 'replace', start: event.replaces, end: event.replaces }
}

export function replay(push: (event: SurfaceEvent) => void) {
  push({ type: 'user/message', surfaceOp: 'append' })
  push({ type: 'assistant/message', surfaceOp: pickOp({}) })
}
"""

REPLAY_TSX = """\
import React from 'react'

export function Replay({ events }: { events: string[] }) {
  const first = { type: 'user/message', surfaceOp: 'append' }
  return (
    <ol data-first={first.type}>
      {/* HACK: keys are indexes until events carry ids */}
      {events.map((e, i) => <li key={i}>{e}</li>)}
    </ol>
  )
}
"""

REPLAY_SPEC_TSX = """\
import { Replay } from './Replay'

export const rendered = <Replay events={['a']} />
"""

# v4: a source file git calls binary (a raw NUL in a string, as DSH has in a test
# file): its surfaceOp must be counted, or the fact refused, never silently dropped.
RUNTIME_PROVENANCE_V4 = (
    "export const SEPARATOR = '\x00'\n"
    "export const provenanceEvent = { type: 'context/provenance', surfaceOp: 'append' }\n"
)

# -- packages/llm --------------------------------------------------------------------

LLM_MESSAGE = """\
export type MessageForm =
  | 'instructions'
  | 'snapshot'

export interface SnapshotSource {
  readonly kind: 'plugin'
  readonly form: 'snapshot'
  readonly sections: readonly { name: string; text: string }[]
}

export function createUserMessage(message: object) {
  return { role: 'user', ...message }
}
"""

LLM_PROVIDERS_V2 = """\
// Local model servers (Ollama and the like) are not a provider here.
export const PROVIDERS = ['deepseek'] as const
"""

# -- packages/subagent ---------------------------------------------------------------

SUBAGENT_TYPES = """\
export interface SubagentCapabilities {
  readonly outputSchema: boolean
  readonly depthLimit: boolean
}

export interface SpawnOptions {
  /** How deep this spawn is; a provider with depthLimit compares it to the budget. */
  delegationDepth?: number
}
"""

OUT_OF_PROCESS = """\
import type { SubagentCapabilities } from './types'

/** What a provider that starts its agent in another process can promise. */
export const NO_START_CAPABILITIES: SubagentCapabilities = Object.freeze({
  outputSchema: false,
  depthLimit: false,
})
"""

SUBAGENT_SERVICE_SPEC = """\
import type { SubagentCapabilities } from '../src/types'

const ALL_CAPS: SubagentCapabilities = { outputSchema: true, depthLimit: true }

export class FakeProvider {
  readonly capabilities: SubagentCapabilities = ALL_CAPS
}
"""

FORK_PROVIDER = """\
import type { SpawnOptions, SubagentCapabilities } from '@deepseek-ai/dsh-subagent'

export class ForkProvider {
  readonly name = 'fork'
  readonly capabilities: SubagentCapabilities = { outputSchema: true, depthLimit: true }

  spawn(options: SpawnOptions) {
    const depth = (options.delegationDepth ?? 0) + 1
    return { depth }
  }
}
"""

FORK_PROVIDER_SPEC = """\
import type { SubagentCapabilities } from '@deepseek-ai/dsh-subagent'

export class FakeForkProvider {
  readonly capabilities: SubagentCapabilities = { outputSchema: false, depthLimit: false }
}
"""

ACP_PROVIDER = """\
import type { SubagentCapabilities } from '@deepseek-ai/dsh-subagent'

export class AcpProvider {
  readonly name = 'acp'
  readonly capabilities: SubagentCapabilities = { outputSchema: false, depthLimit: false }
}
"""

# v4: the ACP client side also has `capabilities`, of another type: not a provider's.
ACP_PROVIDER_V4 = (
    ACP_PROVIDER
    + """
export class AcpClientSide {
  readonly capabilities = { fs: { readTextFile: true }, depthLimit: true }
}
"""
)

CLAUDE_CODE_PROVIDER = """\
import { query } from '@anthropic-ai/claude-agent-sdk'
import { NO_START_CAPABILITIES, type SubagentCapabilities } from '@deepseek-ai/dsh-subagent'

export class ClaudeCodeProvider {
  readonly name = 'claude-code'
  readonly capabilities: SubagentCapabilities = NO_START_CAPABILITIES

  run(prompt: string) {
    return query({
      prompt,
      options: {
        persistSession: false,
        disallowedTools: ['AskUserQuestion'],
      },
    })
  }
}
"""

# Line 1 does not parse with tree-sitter-typescript 0.23.2; the needle is far below.
CLAUDE_CODE_RESUME = """\
export type * from './sdk-types'

export function resumeOptions(sessionId: string) {
  return {
    resume: sessionId,
    persistSession: false,
  }
}
"""

CLAUDE_CODE_TYPES = """\
export interface RunOptions {
  persistSession?: boolean
  prompt: string
}
"""

CLAUDE_CODE_SPEC = """\
import { resumeOptions } from '../src/resume'

export const forTests = { ...resumeOptions('s'), persistSession: true }
"""

# v3: `override accessor` (TypeScript 4.9) is an ERROR for the grammar, on the needle's line.
CLAUDE_CODE_DEFAULTS_V3 = """\
import { QueryDefaultsBase } from './base'

export class QueryDefaults extends QueryDefaultsBase {
  override accessor persistSession = false
}
"""

CODEX_PROVIDER = """\
import { NO_START_CAPABILITIES, type SubagentCapabilities } from '@deepseek-ai/dsh-subagent'

export class CodexProvider {
  readonly name = 'codex'
  readonly capabilities: SubagentCapabilities = NO_START_CAPABILITIES

  options() {
    return { persistSession: true }
  }
}
"""

TOOL_SUBAGENT_CONFIG = """\
import { z } from 'zod'

export interface SubagentToolConfig {
  maxDepth?: number
}

export const Config = z.object({
  maxDepth: z.number().int().min(1).default(3),
  timeoutMs: z.number().default(120_000),
})

export function clampDepth(config: SubagentToolConfig) {
  return { maxDepth: config.maxDepth ?? 3 }
}
"""

TOOL_SUBAGENT_CONFIG_SPEC = """\
import { z } from 'zod'

export const TestConfig = z.object({ maxDepth: z.number().default(99) })
"""

# -- packages/hooks, session, interaction ------------------------------------------

HOOK_RUNNER = """\
/** How long a hook may run before it is killed: ten minutes. */
export const DEFAULT_HOOK_TIMEOUT_MS = 600_000

export const DEFAULT_HOOK_TIMEOUT_MS_FLOOR = 1_000

export function timeoutOf(hook: { timeoutSec?: number }, defaultTimeoutMs?: number): number {
  const timeout = hook.timeoutSec !== undefined ? hook.timeoutSec * 1000 : (defaultTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS)
  return timeout
}
"""

HOOK_RUNNER_V2 = HOOK_RUNNER.replace(
    "ten minutes. */\nexport const DEFAULT_HOOK_TIMEOUT_MS = 600_000",
    "five minutes. */\nexport const DEFAULT_HOOK_TIMEOUT_MS = 5 * 60 * 1000",
)

HOOK_INDEX = """\
export { DEFAULT_HOOK_TIMEOUT_MS, timeoutOf } from './runner'
export const DEFAULT_HOOK_TIMEOUT_MS_ALIAS = 1
"""

JSONL_FORMAT = """\
export interface HeaderLine { [key: string]: unknown }

export function fromHeaderLine(line: HeaderLine): { id: string } {
  if (Object.hasOwn(line, 'sandboxMode') || Object.hasOwn(line, 'approvalPolicy')) {
    throw new Error('session header uses retired policy baseline fields')
  }
  if (Object.hasOwn(line, 'title')) {
    console.warn('session header title is ignored')
  }
  if (Object.hasOwn(line, 'legacyId')) return migrate(line)
  if (hasOwn(line, 'cwd')) {
    throw new Error('cwd moved to the workspace record')
  }
  return { id: String(line.id) }
}

function hasOwn(o: object, k: string): boolean {
  return k in o
}

function migrate(line: HeaderLine) {
  return { id: String(line.legacyId) }
}
"""

# v4: a required field: its ABSENCE throws, so it is not a retired field.
JSONL_FORMAT_V4 = JSONL_FORMAT.replace(
    "  if (Object.hasOwn(line, 'title')) {\n",
    "  if (!Object.hasOwn(line, 'sessionId')) {\n"
    "    throw new Error('session header has no sessionId')\n"
    "  }\n"
    "  if (Object.hasOwn(line, 'title')) {\n",
)

JSONL_FORMAT_SPEC = """\
export function strict(x: object) {
  if (Object.hasOwn(x, 'fixtureOnly')) {
    throw new Error('fixture field')
  }
}
"""

APPROVAL = """\
import type { Context } from '@deepseek-ai/cordis'

export type ApprovalOutcome = 'approved' | 'denied' | 'unavailable'
const OUTCOMES: readonly ApprovalOutcome[] = ['approved', 'denied', 'unavailable']

export class ApprovalService {
  constructor(private ctx: Context) {}

  request(req: object): Promise<ApprovalOutcome> {
    return Promise.resolve().then(
      () => this.ctx.waterfall(
        'approval/request', req,
        () => Promise.resolve<ApprovalOutcome>('unavailable'),
      ),
    ).then(
      outcome => OUTCOMES.includes(outcome) ? outcome : 'unavailable',
      () => 'unavailable',
    )
  }

  announce(req: object) {
    return this.ctx.emit('approval/asked', req).then(() => 'asked')
  }
}
"""

APPROVAL_SPEC = """\
export const answered = Promise.resolve('x').then(x => x, () => 'approved')
export const viaWaterfall = (ctx: any) => ctx.waterfall('approval/request', {}, () => 'denied')
"""

# -- apps, scripts, test support ----------------------------------------------------

CLI_MAIN = """\
// TODO FIXME: both markers on one line count as one line
export const mode = { surfaceOp: 'replace-all' }
// fixme later (lower case: not a marker)
"""

CLI_E2E = """\
import { mode } from '../src/main'

export const e2e = mode
"""

TEST_SUPPORT = """\
export function fakeClock() {
  return { now: () => 0 }
}
"""

SCRIPT_GEN = """\
export const generated = ['session/created']
"""

SCRIPT_MTS = """\
// TODO: an .mts file is not counted by the .ts/.tsx rules
export const build = true
"""

VITEST_CONFIG = """\
export default { test: { include: ['packages/**/*.spec.ts'] } }
"""

VITEST_SETUP = """\
export const setup = true
"""

COSMOKIT = """\
export function noop() {}
"""

# -- manifests, docs, patches --------------------------------------------------------

ROOT_PACKAGE_JSON = _json("""
{
  "name": "@deepseek-ai/dsh-root",
  "private": true,
  "dependencies": {
    "@deepseek-ai/dsh-cli": "workspace:*",
    "zod": "^4.0.0"
  },
  "devDependencies": {
    "tsx": "^4.0.0",
    "typescript": "^5.9.0",
    "vitest": "^3.2.0"
  },
  "peerDependencies": {
    "react": "^19.0.0"
  },
  "pnpm": {
    "patchedDependencies": {
      "node-pty@1.2.0": "patches/node-pty@1.2.0.patch"
    }
  }
}
""")

WORKSPACE_YAML = """\
packages:
  - vendor/*
  - packages/*/*
  - apps/*
  - '!packages/legacy/*'

linkWorkspacePackages: true

patchedDependencies:
  left-pad@1.3.0: patches/left-pad@1.3.0.patch
"""

CLAUDE_CODE_PACKAGE_JSON = _json("""
{
  "name": "@deepseek-ai/dsh-subagent-claude-code",
  "version": "0.1.0",
  "dependencies": {
    "@deepseek-ai/dsh-subagent": "workspace:*",
    "@anthropic-ai/claude-agent-sdk": "0.2.10"
  }
}
""")

CODEX_PACKAGE_JSON = _json("""
{
  "name": "@deepseek-ai/dsh-subagent-codex",
  "version": "0.1.0",
  "dependencies": {
    "@openai/codex-sdk": "^0.5.0"
  },
  "optionalDependencies": {
    "@openai/codex": "0.46.0"
  }
}
""")

PATCH = """\
diff --git a/index.js b/index.js
--- a/index.js
+++ b/index.js
@@ -1 +1 @@
-old
+new
"""


def _manifest(name: str) -> str:
    return _json(f'{{\n  "name": "{name}",\n  "version": "0.1.0"\n}}')


# Workspace members at every tag (folders holding a package.json matched by a glob).
MEMBERS = (
    "apps/cli",
    "packages/boot/app-boot",
    "packages/client/connection",
    "packages/client/ui",
    "packages/context/time-context",
    "packages/context/tmux-context",
    "packages/core/agent-loop",
    "packages/core/session",
    "packages/hooks/hook-protocol",
    "packages/interaction/user-approval",
    "packages/llm/llm",
    "packages/session/session-persistence-jsonl",
    "packages/subagent/subagent",
    "packages/subagent/subagent-acp",
    "packages/subagent/subagent-claude-code",
    "packages/subagent/subagent-codex",
    "packages/subagent/subagent-fork",
    "packages/subagent/tool-subagent",
    "packages/test-support/fakes",
    "vendor/cordis",
    "vendor/cosmokit",
)

V1: dict[str, str] = {
    # manifests and workspace
    "package.json": ROOT_PACKAGE_JSON,
    "pnpm-workspace.yaml": WORKSPACE_YAML,
    **{f"{m}/package.json": _manifest(f"@fixture/{m.rsplit('/', 1)[-1]}") for m in MEMBERS},
    "vendor/cordis/package.json": _manifest("@deepseek-ai/cordis"),
    "vendor/cosmokit/package.json": _manifest("@deepseek-ai/cosmokit"),
    "packages/subagent/subagent-claude-code/package.json": CLAUDE_CODE_PACKAGE_JSON,
    "packages/subagent/subagent-codex/package.json": CODEX_PACKAGE_JSON,
    # decoy manifests: excluded by `!`, nested too deep, outside every glob
    "packages/legacy/old-shell/package.json": _manifest("@fixture/old-shell"),
    "packages/core/session/fixtures/demo/package.json": _manifest("@fixture/demo"),
    "vendor/cordis/packages/loader/package.json": _manifest("@deepseek-ai/cordis-plugin-loader"),
    "scripts/package.json": _manifest("@fixture/scripts"),
    "vendor/README.md": "# Vendored packages\n",
    "vendor/notes/NOTES.txt": "not a package\n",
    "patches/node-pty@1.2.0.patch": PATCH,
    "patches/left-pad@1.3.0.patch": PATCH,
    # docs: two pairs and a lone English page; decoys outside docs/ or not .md
    "docs/architecture.md": "# Architecture\n\nA TODO in Markdown is not a marker.\n",
    "docs/architecture.zh.md": "# 架构\n",
    "docs/guide/setup.md": "# Setup\n",
    "docs/guide/setup.zh.md": "# 安装\n",
    "docs/guide/faq.md": "# FAQ\n",
    "docs/notes.mdx": "# Notes\n",
    "docs/diagram.svg": "<svg/>\n",
    "README.md": "# DSH fixture\n",
    "packages/core/session/README.zh.md": "# 会话\n",
    # vendor sources
    "vendor/cordis/src/context.ts": CONTEXT,
    "vendor/cordis/src/fiber.ts": FIBER,
    "vendor/cosmokit/src/index.ts": COSMOKIT,
    # packages
    "packages/boot/app-boot/src/index.ts": APP_BOOT,
    "packages/core/agent-loop/src/loop.ts": AGENT_LOOP,
    "packages/core/agent-loop/src/loop.spec.ts": AGENT_LOOP_SPEC,
    "packages/core/session/src/known-event-types.ts": KNOWN_EVENT_TYPES,
    "packages/core/session/src/types.ts": SESSION_TYPES,
    "packages/core/session/src/testing.ts": SESSION_TESTING,
    "packages/core/session/src/store.test.ts": SESSION_STORE_TEST,
    "packages/core/session/src/__tests__/replay.ts": SESSION_REPLAY_UNDER_TESTS,
    "packages/context/time-context/src/index.ts": TIME_CONTEXT,
    "packages/context/time-context/src/invariant.ts": TIME_INVARIANT,
    "packages/context/time-context/tests/invariant.spec.ts": TIME_INVARIANT_SPEC,
    "packages/context/tmux-context/src/index.ts": TMUX_CONTEXT,
    "packages/context/compaction/src/index.ts": COMPACTION,
    "packages/context/compaction/tests/helpers.ts": COMPACTION_TEST_HELPER,
    "packages/client/connection/src/fixture.ts": CONNECTION_FIXTURE,
    "packages/client/ui/src/Replay.tsx": REPLAY_TSX,
    "packages/client/ui/src/Replay.spec.tsx": REPLAY_SPEC_TSX,
    "packages/client/ui/vitest.config.ts": VITEST_CONFIG,
    "packages/llm/llm/src/message.ts": LLM_MESSAGE,
    "packages/subagent/subagent/src/types.ts": SUBAGENT_TYPES,
    "packages/subagent/subagent/src/out-of-process.ts": OUT_OF_PROCESS,
    "packages/subagent/subagent/tests/service.spec.ts": SUBAGENT_SERVICE_SPEC,
    "packages/subagent/subagent-fork/src/index.ts": FORK_PROVIDER,
    "packages/subagent/subagent-fork/src/index.spec.ts": FORK_PROVIDER_SPEC,
    "packages/subagent/subagent-acp/src/index.ts": ACP_PROVIDER,
    "packages/subagent/subagent-claude-code/src/index.ts": CLAUDE_CODE_PROVIDER,
    "packages/subagent/subagent-claude-code/src/resume.ts": CLAUDE_CODE_RESUME,
    "packages/subagent/subagent-claude-code/src/types.ts": CLAUDE_CODE_TYPES,
    "packages/subagent/subagent-claude-code/tests/run.spec.ts": CLAUDE_CODE_SPEC,
    "packages/subagent/subagent-codex/src/index.ts": CODEX_PROVIDER,
    "packages/subagent/tool-subagent/src/config.ts": TOOL_SUBAGENT_CONFIG,
    "packages/subagent/tool-subagent/src/config.spec.ts": TOOL_SUBAGENT_CONFIG_SPEC,
    "packages/hooks/hook-protocol/src/runner.ts": HOOK_RUNNER,
    "packages/hooks/hook-protocol/src/index.ts": HOOK_INDEX,
    "packages/session/session-persistence-jsonl/src/format.ts": JSONL_FORMAT,
    "packages/session/session-persistence-jsonl/src/format.spec.ts": JSONL_FORMAT_SPEC,
    "packages/interaction/user-approval/src/index.ts": APPROVAL,
    "packages/interaction/user-approval/tests/approval.spec.ts": APPROVAL_SPEC,
    "packages/test-support/fakes/src/index.ts": TEST_SUPPORT,
    "apps/cli/src/main.ts": CLI_MAIN,
    "apps/cli/test/cli.e2e.ts": CLI_E2E,
    "scripts/gen.ts": SCRIPT_GEN,
    "scripts/build.mts": SCRIPT_MTS,
    "vitest.config.ts": VITEST_CONFIG,
    "vitest.e2e.config.ts": VITEST_CONFIG,
    "vitest.setup.ts": VITEST_SETUP,
    "vitest.config.mts": VITEST_CONFIG,
    "website/index.js": "export const site = true\n",
}

CHANGES: dict[str, dict[str, str]] = {
    "v1": V1,
    "v2": {
        "packages/hooks/hook-protocol/src/runner.ts": HOOK_RUNNER_V2,
        "packages/core/session/src/known-event-types.ts": KNOWN_EVENT_TYPES_V2,
        "packages/boot/app-boot/src/index.ts": APP_BOOT_V2,
        "packages/llm/llm/src/providers.ts": LLM_PROVIDERS_V2,
        "docs/providers.md": "# Providers\n\nDSH does not talk to ollama.\nOLLAMA_HOST is ignored.\n",
    },
    "v3": {
        "packages/subagent/subagent-claude-code/src/defaults.ts": CLAUDE_CODE_DEFAULTS_V3,
    },
    "v4": {
        "vendor/cordis/src/context.ts": CONTEXT_V4,
        "packages/core/agent-loop/src/loop.ts": AGENT_LOOP_V4,
        "packages/context/cwd-context/src/index.ts": CWD_CONTEXT_V4,
        "packages/subagent/subagent-acp/src/index.ts": ACP_PROVIDER_V4,
        "packages/session/session-persistence-jsonl/src/format.ts": JSONL_FORMAT_V4,
        "packages/client/runtime/src/provenance.ts": RUNTIME_PROVENANCE_V4,
    },
}

DATES = {
    "v1": "2026-09-01T10:00:00Z",
    "v2": "2026-09-02T10:00:00Z",
    "v3": "2026-09-03T10:00:00Z",
    "v4": "2026-09-04T10:00:00Z",
}


def tree_at(tag: str) -> dict[str, str]:
    """Every file at a tag, by path."""
    files: dict[str, str] = {}
    for t in TAGS[: TAGS.index(tag) + 1]:
        files.update(CHANGES[t])
    return files


def line_of(path: str, text: str, tag: str = "v1", nth: int = 1) -> int:
    """The 1-based line of the nth line of `path` at `tag` holding `text`."""
    hits = [i + 1 for i, line in enumerate(tree_at(tag)[path].split("\n")) if text in line]
    if len(hits) < nth:
        raise AssertionError(f"{text!r} is not {nth} times in {path} at {tag}")
    return hits[nth - 1]


def at(path: str, text: str, tag: str = "v1", nth: int = 1) -> str:
    """`path:line` of a text, as evidence prints it."""
    return f"{path}:{line_of(path, text, tag, nth)}"


@dataclass(frozen=True)
class FactsRepo:
    path: Path
    shas: dict[str, str]  # tag -> commit SHA


def build_facts_repo(base: Path) -> FactsRepo:
    root = base / "dsh-facts"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    shas = {}
    for tag in TAGS:
        for path, content in CHANGES[tag].items():
            _write(root, path, content)
        shas[tag] = _commit(root, f"{tag}: fixture for the fact detectors", DATES[tag], tag)
    return FactsRepo(root, shas)
