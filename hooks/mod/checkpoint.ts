// The checkpoint nudge and the run's state on the status line.
//
// Re-injection after a compaction brings back only what was written down; a cursor that lagged a phase comes
// back a phase stale, and an automatic compaction arrives unannounced. This half of the module watches the
// context fill on the main thread's tool calls and, once per crossing of a point ahead of the engine's own
// auto-compaction threshold, asks the model to write the anchor this session keeps (one line, after a tool
// result, never seen by the user). "Keeps" is what the module saw: this session's own Bash calls of
// `session-workflow anchor new|step|write|close`, whose output names the anchor's absolute path, counted only when
// that path is a regular *.md file in the session's own project anchors folder and the writer's trust record
// (outside every project, which a Bash call's output cannot forge) vouches for it as it is now, kept by this
// session. The time of the last write is exact, and a session that only read someone else's anchor is never
// nagged about it. The same observations, plus the work state and the task store read after
// their writers run, feed one status row (drawn on the terminal's status line by statusline.ts), recomputed from
// memory (no disk read) as time passes.
import type { EngineInterface, PluginOptions, ToolCallInput, ToolCallResult } from 'claude-code'
import { atom, read, update } from 'claude-code'
import type {
  SessionWorkflowCheckpoint,
  SessionWorkflowKeptAnchor,
  SessionWorkflowTicket,
  SessionWorkflowTasks,
} from '../../types'
import { columns, cutColumns, oneLine, shellCommand } from './text'
import { projectDir, taskListDir, trustDir, whereEnv } from './where'
import { readStateFile, readStateRecord, utf8Length } from './workstate'

export { oneLine } from './text'

/** The reminder's bound: one line the model reads after a tool result. */
export const MAX_REMINDER_BYTES = 300
/**
 * The status row's bound, in terminal columns, where the site does not say: the `columns` of the StatusLine site
 * (`e.props.columns`) at an 80-column terminal, 2.1.332's margins of two either side left out (measured in tmux).
 */
export const STATUS_COLUMNS = 76
/** The title keeps at least this many columns before a part after it is dropped. */
const MIN_TITLE_COLUMNS = 12
/** The engine's gap between its effective window and its auto-compaction threshold (2.1.332, measured). */
const ENGINE_THRESHOLD_GAP = 13_000
/** Window less the output reserve (20,000) less that gap: where 2.1.332 compacts when the breakdown is absent. */
const ENGINE_WINDOW_GAP = 33_000
const ANCHOR_HEAD_BYTES = 4096
const MAX_TASK_FILES = 256
const MAX_TASK_FILE_BYTES = 16 * 1024
const MAX_SCANNED_OUTPUT = 64 * 1024
const KEPT_SESSIONS = 32
/** The reminders kept per session for `session-workflow log` (core/ledger.py `reminders_path`), newest last. */
export const LEDGER_REMINDERS = 32
const STORE_KEY = 'keptAnchors'
const TICK_MS = 60_000
const MINUTE_MS = 60_000

/** The userConfig keys (`.claude-plugin/plugin.json`) and their defaults, as the manifest declares them. */
export type CheckpointSettings = { marginPoints: number; staleMinutes: number; showStatus: boolean }
export const DEFAULT_SETTINGS: CheckpointSettings = { marginPoints: 15, staleMinutes: 30, showStatus: true }

export function settingsOf(options: PluginOptions): CheckpointSettings {
  const number = (value: unknown, fallback: number, low: number, high: number) =>
    typeof value === 'number' && Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : fallback
  return {
    marginPoints: number(options.nudge_margin, DEFAULT_SETTINGS.marginPoints, 0, 90),
    staleMinutes: number(options.stale_minutes, DEFAULT_SETTINGS.staleMinutes, 1, 10_080),
    showStatus: typeof options.status_line === 'boolean' ? options.status_line : DEFAULT_SETTINGS.showStatus,
  }
}

const EMPTY: SessionWorkflowCheckpoint = { anchor: null, crossing: null, ticket: null, tasks: null }
const checkpoint = atom({ plugin: 'session-workflow', key: 'checkpoint' } as const, EMPTY)

// ---------------------------------------------------------------------------------------------------------------
// Pure parts: tested without an engine.

/**
 * The auto-compaction threshold in force: the engine's reported one, lowered by `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
 * as the engine lowers it (a percentage of its effective window, never above the reported threshold). The
 * engine's context breakdown leaves the override out of the figure it reports, so the module applies it.
 */
export function thresholdInForce(reported: number, pctOverride: string | undefined): number {
  const pct = Number.parseFloat(pctOverride ?? '')
  if (!(pct > 0 && pct <= 100)) return reported
  return Math.min(Math.floor(((reported + ENGINE_THRESHOLD_GAP) * pct) / 100), reported)
}

/**
 * Where the nudge fires: `marginPoints` points of the compaction window ahead of the threshold, never earlier
 * than half the threshold (a lowered threshold leaves no room for 15 points); null when the nudge is off.
 */
export function nudgePoint(threshold: number, compactionWindow: number, marginPoints: number): number | null {
  if (marginPoints <= 0 || threshold <= 0) return null
  return Math.max(Math.ceil(threshold / 2), threshold - Math.round((compactionWindow * marginPoints) / 100))
}

export type Crossing = SessionWorkflowCheckpoint['crossing']
/** Where the fill stands: at or past the point, within the re-arm band just below it, or below that. */
export type FillLevel = 'above' | 'band' | 'below'
/** How far below the point, in points of the compaction window, the fill must fall to arm the nudge again. */
export const REARM_POINTS = 5

export function fillLevel(tokens: number, point: number, compactionWindow: number): FillLevel {
  if (tokens >= point) return 'above'
  return tokens >= point - Math.round((compactionWindow * REARM_POINTS) / 100) ? 'band' : 'below'
}

/**
 * One main-thread tool result's verdict: the crossing as it now stands and whether this result carries the
 * reminder: once per crossing, only for a kept anchor last written before the crossing. The crossing ends when
 * the fill falls below the band under the point (a compaction does that), so a fill wavering at the point is
 * one crossing, not many; within the band it stands as it was.
 */
export function judgeCrossing(
  crossing: Crossing,
  level: FillLevel,
  now: number,
  writtenAt: number | null,
): { crossing: Crossing; remind: boolean } {
  if (level === 'below') return { crossing: null, remind: false }
  if (level === 'band') return { crossing, remind: false }
  const current = crossing ?? { at: now, reminded: false }
  const remind = !current.reminded && writtenAt !== null && writtenAt < current.at
  return { crossing: remind ? { ...current, reminded: true } : current, remind }
}

function thousands(tokens: number): string {
  return tokens >= 10_000 ? `${Math.round(tokens / 1000)}k` : String(tokens)
}

/**
 * The reminder: one line within MAX_REMINDER_BYTES naming the anchor and the exact command (the path shell-quoted,
 * so a path with spaces or quotes is one argument), the ticket's step riding along when it lags the anchor's last
 * write. The longest variant that fits wins; a path too long for
 * any is named as the anchor `session-workflow anchor list` shows.
 */
export function reminderLine(
  path: string,
  fill: { tokens: number; threshold: number },
  ticket: { label: string; step: string } | null,
): string {
  const where = `Context at ${thousands(fill.tokens)} tokens, auto-compaction at ${thousands(fill.threshold)}:`
  const step = `${shellCommand('session-workflow', 'anchor', 'step', path)} "done: …; next: …"`
  const write = '(or `anchor write` with the whole anchor when a line is not enough)'
  const lagging = ticket === null ? '' : `; ticket ${ticket.label} is still at step "${ticket.step}"`
  const state = ticket === null ? '' : `${lagging}: session-workflow state step <step>`
  const variants = [
    `${where} write the cursor down now: ${step} ${write}${state}`,
    `${where} write the cursor down now: ${step}${state}`,
    `${where} write the cursor down now: ${step}`,
    `Checkpoint now: ${step}`,
    `${where} write the cursor of this session's anchor down now` +
      ' (session-workflow anchor list; anchor step FILE "…")',
  ]
  return variants.find((line) => utf8Length(line) <= MAX_REMINDER_BYTES) ?? variants[variants.length - 1]!
}

/** How long ago, in the largest whole unit; `STALE` in place of "ago" past the stale bound. */
function age(ms: number, isStale: boolean): string {
  const minutes = Math.floor(Math.max(0, ms) / MINUTE_MS)
  const mark = isStale ? 'STALE' : 'ago'
  if (minutes < 1) return isStale ? 'STALE' : 'now'
  if (minutes < 60) return `${minutes}m ${mark}`
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h ${mark}`
  return `${Math.floor(minutes / (24 * 60))}d ${mark}`
}

/**
 * The status row: the kept anchor's title, step and the age of its last write (marked STALE past
 * `staleMinutes`), the ticket and its step, the open tasks; undefined when there is none of them. One line
 * within `width` columns (the StatusLine site's): the title gives way first (down to MIN_TITLE_COLUMNS),
 * then the tasks shorten to `tasks 1+2` (active + pending) and go, then the ticket.
 */
export function statusText(
  state: Pick<SessionWorkflowCheckpoint, 'anchor' | 'ticket' | 'tasks'>,
  now: number,
  staleMinutes: number,
  width: number = STATUS_COLUMNS,
): string | undefined {
  const { anchor, ticket, tasks } = state
  const ticketPart = ticket === null ? [] : [`${ticket.label} ${ticket.step}`]
  const open = tasks !== null && tasks.inProgress + tasks.pending > 0 ? tasks : null
  const tasksLong = open === null ? [] : [`tasks ${open.inProgress} active, ${open.pending} pending`]
  const tasksShort = open === null ? [] : [`tasks ${open.inProgress}+${open.pending}`]
  if (anchor === null) {
    const line = [...ticketPart, ...tasksLong].join(' · ')
    return line === '' ? undefined : cutColumns(line, width)
  }
  const elapsed = now - anchor.writtenAt
  const tail = ` · step ${anchor.step} · ${age(elapsed, elapsed > staleMinutes * MINUTE_MS)}`
  const choices = [[...ticketPart, ...tasksLong], [...ticketPart, ...tasksShort], ticketPart, []]
  const title = Math.min(MIN_TITLE_COLUMNS, columns(anchor.title))
  const after = (parts: readonly string[]) => parts.map((part) => ` · ${part}`).join('')
  const fits = (parts: readonly string[]) => width - columns(`⚓ ${tail}${after(parts)}`) >= title
  const rest = after(choices.find(fits) ?? [])
  const room = Math.max(width - columns(`⚓ ${tail}${rest}`), MIN_TITLE_COLUMNS)
  return cutColumns(`⚓ ${cutColumns(anchor.title, room)}${tail}${rest}`, width)
}

/** What a writer's output says it did: `new`, `step` and `write` wrote `path`; `close` closed it. The step it
 * printed is not kept: the kept anchor's step is read from the file, once verified (`keptAnchor`). */
export type WriterEvent = { verb: 'wrote' | 'closed'; path: string }

const WRITER_CALL = /(?:^|[\s;&|(`$])session-workflow\s+anchor\s+(?:new|step|write|close)\b/
const STEP_LINE = /^step \d{1,9} -> \d{1,9} {2}(\/.*\.md)$/
const WROTE_LINE = /^wrote (\/.*\.md) \(step \d{1,9}\)$/
const CLOSED_LINE = /^closed (\/.*?\.md) -> \//
const NEW_LINE = /^\/.*\/\.claude\/anchors\/[^/]+\.md$/
const ANCHOR_PATH = /\/\.claude\/anchors\/[^/]+\.md$/
const STATE_CALL = /\bsession-workflow\s+state\b/
const TASK_FILE = /^[1-9]\d{0,17}\.json$/

/**
 * The anchor writes a Bash call made, from its output, in order; none unless the command ran an anchor writer.
 * The writers print the absolute path they wrote (`new`: the path; `step`: `step P -> N  PATH`; `write`:
 * `wrote PATH (step N)`; `close`: `closed PATH -> CLOSED`), so what counts is what a writer really wrote.
 */
export function writerEvents(command: string, output: string): WriterEvent[] {
  if (!WRITER_CALL.test(command)) return []
  const isNew = /\banchor\s+new\b/.test(command)
  const events: WriterEvent[] = []
  for (const raw of output.slice(0, MAX_SCANNED_OUTPUT).split('\n')) {
    const line = raw.replace(/\r$/, '')
    let match: RegExpExecArray | null
    if ((match = STEP_LINE.exec(line) ?? WROTE_LINE.exec(line)) !== null) events.push({ verb: 'wrote', path: match[1]! })
    else if ((match = CLOSED_LINE.exec(line)) !== null) events.push({ verb: 'closed', path: match[1]! })
    else if (isNew && NEW_LINE.test(line)) events.push({ verb: 'wrote', path: line })
  }
  return events.filter(({ path }) => ANCHOR_PATH.test(path) && !path.endsWith('.closed.md'))
}

/**
 * The title and step an anchor's head holds: the first `# ` heading (else `task:`) and the `step:` line. A
 * heading inside an HTML comment (a template's prompt) is none.
 */
export function anchorHead(head: string): { title: string | null; step: number | null } {
  const lines = head.split(/\r?\n/)
  let title: string | null = null
  let task: string | null = null
  let step: number | null = null
  let inFrontMatter = lines[0]?.replace(/^\ufeff/, '') === '---'
  let inComment = false
  for (const [index, line] of lines.entries()) {
    if (inFrontMatter && index > 0) {
      if (line === '---') inFrontMatter = false
      else if (/^task\s*:/i.test(line)) task = line.replace(/^task\s*:/i, '')
      else if (/^step\s*:\s*\d{1,9}\s*$/i.test(line)) step = Number(line.replace(/\D/g, ''))
    } else if (!inFrontMatter) {
      const wasInComment = inComment
      inComment = commentOpenAfter(line, inComment)
      if (!wasInComment && title === null && line.startsWith('# ')) title = line.slice(2)
    }
  }
  const chosen = oneLine(title ?? task ?? '')
  return { title: chosen === '' ? null : chosen, step }
}

/** Whether an HTML comment is still open at the end of `line`, given whether one was open at its start. */
function commentOpenAfter(line: string, open: boolean): boolean {
  let position = 0
  for (;;) {
    const found = open ? line.indexOf('-->', position) : line.indexOf('<!--', position)
    if (found < 0) return open
    position = found + (open ? 3 : 4)
    open = !open
  }
}

/** The first `max` code points of `text`: a cut never splits an astral character into a lone surrogate. */
function firstPoints(text: string, max: number): string {
  return Array.from(text).slice(0, max).join('')
}

/** The ticket a work-state file holds for `session`: its label (`#34`, `PROJ-7`), step and write time. */
export function ticketOf(raw: string, session: string): SessionWorkflowTicket | null {
  const state = readStateRecord(raw)
  if (state === null || state.session !== session) return null
  const { ticket, step, updated_at: updatedAt } = state
  const label = typeof ticket === 'number' ? `#${ticket}` : firstPoints(oneLine(String(ticket)), 64)
  const when = typeof updatedAt === 'string' ? Date.parse(updatedAt) : Number.NaN
  return {
    label,
    step: typeof step === 'string' && oneLine(step) !== '' ? firstPoints(oneLine(step), 24) : '-',
    updatedAt: Number.isFinite(when) ? when : null,
  }
}

/** The open tasks among task files' texts: in progress and pending, as Claude Code's TaskList counts them. */
export function countTasks(files: readonly string[]): SessionWorkflowTasks {
  const tasks = { inProgress: 0, pending: 0 }
  for (const raw of files) {
    let record: unknown
    try {
      record = JSON.parse(raw)
    } catch {
      continue
    }
    const status = typeof record === 'object' && record !== null ? (record as { status?: unknown }).status : null
    if (status === 'in_progress') tasks.inProgress++
    else if (status === 'pending') tasks.pending++
  }
  return tasks
}

// ---------------------------------------------------------------------------------------------------------------
// I/O: the engine's session, files and store.

type Limits = { window: number; threshold: number; compactionWindow: number } | null
/** The engine's auto-compaction figures, asked once per model window (a module reload asks again). */
let limits: { window: number; value: Limits } | null = null
/** The text last pinned, so an unchanged line is not sent again. */
let shown: string | undefined

async function limitsFor($: EngineInterface, window: number): Promise<Limits> {
  if (limits !== null && limits.window === window) return limits.value
  const { context } = await $.session.usage({ breakdown: 'summary' })
  const breakdown = context.breakdown
  let value: Limits = null
  if (breakdown === undefined) value = { window, threshold: window - ENGINE_WINDOW_GAP, compactionWindow: window }
  else if (breakdown.isAutoCompactEnabled && breakdown.autoCompactThreshold !== undefined) {
    const override = await $.env.get('CLAUDE_AUTOCOMPACT_PCT_OVERRIDE')
    const threshold = thresholdInForce(breakdown.autoCompactThreshold, override)
    value = { window, threshold, compactionWindow: breakdown.rawMaxTokens }
  }
  limits = { window, value }
  return value
}

async function save($: EngineInterface, before: SessionWorkflowCheckpoint, after: SessionWorkflowCheckpoint) {
  if (JSON.stringify(before) !== JSON.stringify(after)) await update($, checkpoint, () => after)
}

async function readText($: EngineInterface, path: string, length: number): Promise<string | null> {
  try {
    return await $.fs.read(path, { length })
  } catch {
    return null
  }
}

async function isThere($: EngineInterface, path: string): Promise<boolean> {
  try {
    return await $.fs.exists(path)
  } catch {
    return false
  }
}

/** Python's `safe_name`: every character but ASCII letters, digits, `_` and `-` made a `-` (by code point). */
function safeName(text: string): string {
  return Array.from(text, (char) => (/^[A-Za-z0-9_-]$/.test(char) ? char : '-')).join('')
}

function utf8Of(text: string): number[] {
  const bytes: number[] = []
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (code < 0x80) bytes.push(code)
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63))
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63))
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63))
  }
  return bytes
}

/** The trust record's file for an anchor's real path, named as core/locations.py `record_name` names it. */
export function recordFile(trustDir: string, realPath: string): string {
  let hash = 0xcbf29ce484222325n
  for (const byte of utf8Of(realPath)) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
  const prefix = safeName(Array.from(realPath).slice(0, 64).join(''))
  return `${trustDir}/${prefix}-${hash.toString(16).padStart(16, '0')}.json`
}

/**
 * Whether a trust record's text vouches for the file at `realPath` as `stat` sees it now, kept by `session`: the
 * record of this path (anchor/registry.py's format 1) holding an identity of this size and millisecond mtime (the
 * engine's stat gives no inode) and naming the session among its keepers.
 */
export function recordVouches(
  raw: string,
  realPath: string,
  stat: { size: number; mtimeMs: number },
  session: string,
): boolean {
  let record: unknown
  try {
    record = JSON.parse(raw)
  } catch {
    return false
  }
  if (typeof record !== 'object' || record === null) return false
  const { v, path, ids, sessions } = record as Record<string, unknown>
  if (v !== 1 || path !== realPath || !Array.isArray(ids) || !Array.isArray(sessions)) return false
  const matches = (id: unknown) =>
    Array.isArray(id) &&
    id.length === 4 &&
    id[2] === stat.size &&
    typeof id[3] === 'number' &&
    Math.abs(id[3] / 1e6 - stat.mtimeMs) < 1
  return ids.slice(0, 2).some(matches) && sessions.includes(session)
}

/** `time.strftime("%Y-%m-%dT%H:%M:%SZ")` of the ledger's Python lines, so both sort as one list. */
function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`
}

type ReminderEntry = { ts: string; anchor: string; tokens: number; threshold: number }

/**
 * Keeps a reminder for `session-workflow log` in this session's file beside the compaction ledger (core/ledger.py
 * `reminders_path`): the newest LEDGER_REMINDERS as one JSON list, rewritten whole (a mod writes whole files; one
 * session, one writer). A reminder is only for an anchor a trust record vouched for, so the state folder is the
 * writers' own; a failure here never costs the reminder itself.
 */
async function noteReminder($: EngineInterface, session: string, entry: ReminderEntry): Promise<void> {
  try {
    const trust = await trustFolder($)
    if (trust === null || !/^[A-Za-z0-9_-]{1,100}$/.test(session)) return
    const path = `${trust.slice(0, -'/anchors'.length)}/reminders/${session}.json`
    const before = await readText($, path, 64 * 1024)
    let kept: unknown = []
    try {
      kept = before === null ? [] : JSON.parse(before)
    } catch {
      kept = []
    }
    const list = Array.isArray(kept) ? kept.filter((item) => typeof item === 'object' && item !== null) : []
    await $.fs.write(path, JSON.stringify([...list, entry].slice(-LEDGER_REMINDERS)))
  } catch {
    // The ledger is a record of what was sent: a reminder it could not note is still sent.
  }
}

/** Where the writer keeps the trust records (where.ts `trustDir`, from HOME and XDG_STATE_HOME). */
async function trustFolder($: EngineInterface): Promise<string | null> {
  const system = await $.session.machine().then(({ sysname }) => sysname, () => '')
  return trustDir(await whereEnv($), system)
}

/**
 * The writer event when the module can verify it, else null: a `wrote` names a regular `*.md` file (not hidden,
 * not closed) directly in the anchors folder of the session's project (where.ts `projectDir`), as resolved, that the writer's trust record vouches for as it is now, kept by this session; a `closed` names a
 * path that is gone. A plain `echo` in the same Bash call can print any line but none of that.
 */
async function verified($: EngineInterface, event: WriterEvent, session: string): Promise<WriterEvent | null> {
  if (event.verb === 'closed') return (await isThere($, event.path)) ? null : event
  try {
    const own = await $.fs.stat(event.path, { resolve: true })
    const real = own.realPath
    if (own.kind !== 'file' || real === undefined) return null
    const project = (await $.fs.stat(await projectDir($), { resolve: true })).realPath
    const name = real.slice(real.lastIndexOf('/') + 1)
    const inFolder = project !== undefined && real === `${project.replace(/\/+$/, '')}/.claude/anchors/${name}`
    if (!inFolder || !name.endsWith('.md') || name.endsWith('.closed.md') || name.startsWith('.')) return null
    const folder = await trustFolder($)
    const record = folder === null ? null : await readText($, recordFile(folder, real), 16 * 1024)
    return record !== null && recordVouches(record, real, own, session) ? event : null
  } catch {
    return null
  }
}

/** The kept anchor as its verified file says: the title and the step its HEAD holds, never the step a printed line
 * claims (another line of the same Bash call, an `echo`, can print any step beside the writer's). */
async function keptAnchor($: EngineInterface, event: WriterEvent, now: number): Promise<SessionWorkflowKeptAnchor> {
  const head = anchorHead((await readText($, event.path, ANCHOR_HEAD_BYTES)) ?? '')
  const name = event.path.slice(event.path.lastIndexOf('/') + 1, -'.md'.length)
  return { path: event.path, title: head.title ?? name, step: head.step ?? 0, writtenAt: now }
}

/** The kept anchors of recent sessions, by session id, so a `--resume` in a new process still knows its own. */
type KeptBySession = Record<string, SessionWorkflowKeptAnchor | null>

async function remember($: EngineInterface, session: string, anchor: SessionWorkflowKeptAnchor | null) {
  const stored = await $.store.get(STORE_KEY)
  const kept: KeptBySession = typeof stored === 'object' && stored !== null ? { ...(stored as KeptBySession) } : {}
  delete kept[session]
  kept[session] = anchor
  const sessions = Object.keys(kept)
  for (const old of sessions.slice(0, Math.max(0, sessions.length - KEPT_SESSIONS))) delete kept[old]
  await $.store.set(STORE_KEY, kept)
}

async function recalled($: EngineInterface, session: string): Promise<SessionWorkflowKeptAnchor | null> {
  const stored = await $.store.get(STORE_KEY)
  const anchor = typeof stored === 'object' && stored !== null ? (stored as KeptBySession)[session] : undefined
  const isKept =
    typeof anchor === 'object' &&
    anchor !== null &&
    typeof anchor.path === 'string' &&
    ANCHOR_PATH.test(anchor.path) &&
    typeof anchor.title === 'string' &&
    typeof anchor.step === 'number' &&
    typeof anchor.writtenAt === 'number'
  return isKept && (await isThere($, anchor.path)) ? { ...anchor, title: oneLine(anchor.title) } : null
}

/** This session's ticket: its project's work state (where.ts `projectDir`, as the prompt's section). */
async function readTicket($: EngineInterface, session: string): Promise<SessionWorkflowTicket | null> {
  const raw = await readStateFile($, await projectDir($))
  return raw === null ? null : ticketOf(raw, session)
}

/** The session's open tasks from Claude Code's task store (where.ts `taskListDir`, `<config>/tasks/<list id>`). */
async function readTasks($: EngineInterface, session: string): Promise<SessionWorkflowTasks | null> {
  const folder = taskListDir(await whereEnv($), session)
  if (folder === null) return null
  let entries
  try {
    entries = await $.fs.list(folder)
  } catch {
    return null
  }
  const files = entries
    .filter(({ name, kind, size }) => kind === 'file' && TASK_FILE.test(name) && size <= MAX_TASK_FILE_BYTES)
    .slice(0, MAX_TASK_FILES)
  const texts = await Promise.all(files.map(({ name }) => readText($, `${folder}/${name}`, MAX_TASK_FILE_BYTES)))
  const tasks = countTasks(texts.filter((text): text is string => text !== null))
  return tasks.inProgress + tasks.pending === 0 ? null : tasks
}

/** Redraws the status row (drawn by `statusRow` under the prompt) when what it says has changed. */
function pin($: EngineInterface, state: SessionWorkflowCheckpoint, now: number, settings: CheckpointSettings) {
  const text = settings.showStatus ? statusText(state, now, settings.staleMinutes) : undefined
  if (text === shown) return
  shown = text
  $.ui.invalidate('ui.render')
}

/** The status row for a site `columns` wide, from memory (no disk read); undefined when there is nothing to say. */
export async function statusRow(
  $: EngineInterface,
  settings: CheckpointSettings,
  columns: number,
): Promise<string | undefined> {
  if (!settings.showStatus) return undefined
  return statusText(await read($, checkpoint), await $.clock.now(), settings.staleMinutes, columns)
}

/**
 * After one tool call: note what our writers did (any loop of this session), then, on the main thread, judge
 * the fill and answer the reminder to attach, or null. A session with no state pays one state read: the
 * session id, the clock and the fill are asked only when there is something to do with them.
 */
export async function afterToolCall(
  $: EngineInterface,
  e: ToolCallInput,
  result: ToolCallResult,
  settings: CheckpointSettings,
): Promise<string | null> {
  const before = await read($, checkpoint)
  let state = before
  let now: number | null = null
  const clock = async () => (now ??= await $.clock.now())
  if (e.tool === 'Bash' && typeof e.command === 'string') {
    for (const seen of writerEvents(e.command, typeof result.text === 'string' ? result.text : '')) {
      const event = await verified($, seen, await $.session.id())
      if (event === null) continue
      if (event.verb === 'wrote') state = { ...state, anchor: await keptAnchor($, event, await clock()) }
      else if (state.anchor?.path === event.path) state = { ...state, anchor: null }
    }
    if (state.anchor !== before.anchor) await remember($, await $.session.id(), state.anchor)
    if (STATE_CALL.test(e.command)) state = { ...state, ticket: await readTicket($, await $.session.id()) }
  } else if (e.tool === 'TaskCreate' || e.tool === 'TaskUpdate') {
    state = { ...state, tasks: await readTasks($, await $.session.id()) }
  }
  let reminder: string | null = null
  const anchor = state.anchor
  if (e.agentId === undefined && anchor !== null && settings.marginPoints > 0) {
    const { context } = await $.session.usage()
    const found = context.tokens === undefined ? null : await limitsFor($, context.window)
    const point = found === null ? null : nudgePoint(found.threshold, found.compactionWindow, settings.marginPoints)
    if (found !== null && point !== null && context.tokens !== undefined) {
      const level = fillLevel(context.tokens, point, found.compactionWindow)
      // At the threshold the compaction comes before the model reads this result, and Claude Code keeps the last
      // tool result verbatim after it: a reminder there would reach the new thread with figures no longer true.
      const compacting = context.tokens >= found.threshold
      const verdict =
        !compacting && (level === 'above' || state.crossing !== null)
          ? judgeCrossing(state.crossing, level, await clock(), anchor.writtenAt)
          : null
      if (verdict !== null) state = { ...state, crossing: verdict.crossing }
      // The one read a reminder costs: an anchor closed or moved out of this session's sight is kept no longer.
      if (verdict?.remind === true && !(await isThere($, anchor.path))) state = { ...state, anchor: null }
      else if (verdict?.remind === true) {
        const { ticket } = state
        const lags = ticket !== null && ticket.updatedAt !== null && ticket.updatedAt < anchor.writtenAt
        const fill = { tokens: context.tokens, threshold: found.threshold }
        reminder = reminderLine(anchor.path, fill, lags ? ticket : null)
        await noteReminder($, await $.session.id(), { ts: isoSeconds(await clock()), anchor: anchor.path, ...fill })
      }
    }
  }
  if (state !== before) {
    await save($, before, state)
    pin($, state, await clock(), settings)
  }
  return reminder
}

/** At session start: the kept anchor a `--resume` recalls, the ticket and the tasks; the status line's clock. */
export async function atSessionStart($: EngineInterface, settings: CheckpointSettings): Promise<void> {
  const session = await $.session.id()
  const before = await read($, checkpoint)
  const state = {
    ...before,
    anchor: before.anchor ?? (await recalled($, session)),
    ticket: await readTicket($, session),
    tasks: await readTasks($, session),
  }
  await save($, before, state)
  pin($, state, await $.clock.now(), settings)
  if (settings.showStatus && (await $.session.surfaces()).length > 0) {
    // The age on the line moves with time alone: recomputed from memory, nothing read from disk.
    $.clock.every(TICK_MS, () => {
      void (async () => pin($, await read($, checkpoint), await $.clock.now(), settings))().catch(() => {})
    })
  }
}

/**
 * The anchor the session a /clear ended kept, held in this process until the clear's SessionStart block says
 * whether the new session continues it (`atClearBlock`); null otherwise.
 */
let clearedAnchor: SessionWorkflowKeptAnchor | null = null

/** At session end (a /clear too, after which no session.start fires): the next session starts with nothing. */
export async function atSessionEnd(
  $: EngineInterface,
  settings: CheckpointSettings,
  reason: string | undefined = undefined,
): Promise<void> {
  const before = await read($, checkpoint)
  clearedAnchor = reason === 'clear' ? before.anchor : null
  await save($, before, EMPTY)
  pin($, EMPTY, 0, settings)
}

/** The header of the plugin's own block at a /clear (hook/compose.py `header("clear")`). */
const CLEAR_HEADER = 'session-workflow: state restored from disk at SessionStart (clear).'

/**
 * After the SessionStart(clear) hooks ran: when the plugin's block names the anchor the cleared session kept as
 * the run's own (its ``Control anchor: `<path>` `` line, the path in a code span), the new session keeps it, so the status row and the reminder
 * go on without a writer call. Only that anchor, which this module verified when it was written: another hook's
 * text can at most name it again, never another file.
 */
export async function atClearBlock(
  $: EngineInterface,
  contexts: readonly string[],
  settings: CheckpointSettings,
): Promise<void> {
  const anchor = clearedAnchor
  clearedAnchor = null
  if (anchor === null) return
  const named = contexts.some(
    (text) => text.startsWith(`${CLEAR_HEADER}\n`) && text.includes(`Control anchor: \`${anchor.path}\`\n`),
  )
  if (!named || !(await isThere($, anchor.path))) return
  const before = await read($, checkpoint)
  const state = { ...before, anchor }
  await remember($, await $.session.id(), anchor)
  await save($, before, state)
  pin($, state, await $.clock.now(), settings)
}
