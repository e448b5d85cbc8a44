// session-workflow's hooks module: the work-state section of the system prompt.
//
// The Python writer (`session-workflow state ...`) composes the section text and its snapshot key and stores
// them in <project>/.claude/session-workflow/work-state.json; this module only reads, checks and latches
// them, so the text is built in one place. The latch keeps the prompt cache: the text is taken again only
// when the ticket's identity changes, at session start and after a real compaction of the main conversation,
// never on a step change. The engine itself sends a thread the system prompt it started with (a --resume
// included), so what the model reads here is the state as of the thread's start; changes in between reach it
// through the UserPromptSubmit command hook.
import type { EngineInterface, PromptComposeResult, PromptComposeSection, Register } from 'claude-code'
import { atom, read, update } from 'claude-code'
import type { SessionWorkflowPromptSnapshot } from '../../types'

const SECTION_ID = 'session-workflow:work-state'
/** The field the command hooks read on stdin to know this module is loaded (context.MOD_PAYLOAD_KEY). */
const MOD_PAYLOAD_KEY = 'session_workflow_mod'
const STATE_FILE = '.claude/session-workflow/work-state.json'
const FORMAT_VERSION = 1
/** The writer guarantees this bound; the module still refuses a section over it rather than trust the file. */
export const MAX_SECTION_BYTES = 1024
// As the Python reader (workstate.py, workstate_section.py): a file over 64 KiB is not trusted, a ticket is
// an issue number or a tracker id such as PROJ-12, an owner a printable session id.
const MAX_FILE_BYTES = 64 * 1024
const MAX_ISSUE_NUMBER = 2 ** 53
const TICKET_ID = /^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,63}$/
const SESSION_ID = /^[!-~]{1,256}$/

const promptSnapshot = atom({ plugin: 'session-workflow', key: 'promptSnapshot' } as const, null)

/** What the module takes from a work-state file: its owner session, the snapshot key and the section text. */
export type StoredSection = { owner: string; key: string; text: string }

/** The UTF-8 length of a string, counted without allocating (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let bytes = 0
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        index++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/**
 * True when every line of the text is printable: no control character but the line breaks, and no lone
 * surrogate. The Python writer never stores either; a hand-edited file could, and a lone surrogate in the system
 * prompt makes the Messages API refuse every request of the session.
 */
export function isPrintableSection(text: string): boolean {
  if (/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/.test(text)) return false
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = index + 1 < text.length ? text.charCodeAt(index + 1) : 0
      if (next < 0xdc00 || next > 0xdfff) return false
      index++
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return false
  }
  return true
}

/**
 * The section a work-state file's text stores, or null when it is not one this module can use: over
 * MAX_FILE_BYTES, not a JSON object, another format version, no ticket, title or owner session, a malformed
 * map, or no section of non-empty key and text within MAX_SECTION_BYTES. The identity checks are the Python
 * reader's, so the two never disagree on whether a state is in play. Pure: tested without an engine.
 */
export function parseWorkState(raw: string): StoredSection | null {
  if (utf8Length(raw) > MAX_FILE_BYTES) return null
  let state: unknown
  try {
    state = JSON.parse(raw)
  } catch {
    return null
  }
  if (!isRecord(state) || state.version !== FORMAT_VERSION) return null
  const { ticket, title, map, session, section } = state
  const isTicket = isIssueNumber(ticket) || (typeof ticket === 'string' && TICKET_ID.test(ticket))
  if (!isTicket || typeof title !== 'string' || !(map === null || map === undefined || isIssueNumber(map))) return null
  if (typeof session !== 'string' || !SESSION_ID.test(session) || !isRecord(section)) return null
  const { key, text } = section
  if (typeof key !== 'string' || key === '' || typeof text !== 'string' || text.trim() === '') return null
  if (utf8Length(text) > MAX_SECTION_BYTES || !isPrintableSection(text)) return null
  return { owner: session, key, text }
}

function isIssueNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < MAX_ISSUE_NUMBER
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The section this session owns: the project root first (where the session started, as the Python hooks'
 * start dir), then the working directory when it differs. A missing, unreadable or untrusted file, or one
 * another session owns (orphaned here), is passed over; the first owned one wins, as in the Python reader.
 */
async function ownedSection($: EngineInterface, session: string): Promise<StoredSection | null> {
  const root = await $.session.root()
  const cwd = await $.session.cwd()
  for (const dir of root === cwd ? [root] : [root, cwd]) {
    let raw: string
    try {
      // One byte over the bound, so a file just over it is refused rather than read cut short.
      raw = await $.fs.read(`${dir.replace(/[\\/]+$/, '')}/${STATE_FILE}`, { length: MAX_FILE_BYTES + 1 })
    } catch {
      continue
    }
    const stored = parseWorkState(raw)
    if (stored !== null && stored.owner === session) return stored
  }
  return null
}

/**
 * The section text for this render: none when this session owns no state; the latched text while the
 * snapshot key stands; else the stored text, latched unless the render only measures.
 */
async function workStateText($: EngineInterface, isMeasuring: boolean): Promise<string | null> {
  const session = await $.session.id()
  const stored = await ownedSection($, session)
  if (stored === null) return null
  // The owner is part of the key, so a session that adopts a state another one latched takes it afresh.
  const key = `${session}\n${stored.key}`
  const latched = await read($, promptSnapshot)
  if (latched !== null && latched.key === key) return latched.text
  const snapshot: SessionWorkflowPromptSnapshot = { key, text: stored.text }
  if (!isMeasuring) await update($, promptSnapshot, () => snapshot)
  return snapshot.text
}

/** Drops the latch so the next compose takes the stored text again; no write when it is already dropped. */
async function dropSnapshot($: EngineInterface): Promise<void> {
  if ((await read($, promptSnapshot)) !== null) await update($, promptSnapshot, () => null)
}

/** The engine's sections with ours appended last (any earlier copy of our id removed, ids stay unique). */
function withSection(composed: PromptComposeResult, text: string): PromptComposeResult {
  const section: PromptComposeSection = { id: SECTION_ID, text, scope: 'session' }
  return { ...composed, sections: [...composed.sections.filter(({ id }) => id !== SECTION_ID), section] }
}

/** A command hook's stdin with the field that says this module is loaded. */
function withModMarker<Payload extends object>(payload: Payload): Payload {
  return { ...payload, [MOD_PAYLOAD_KEY]: 1 }
}

export const register: Register = (on) => {
  on('prompt.compose', async ($, e, next) => {
    // Called once and first: nothing below can keep the engine's own sections from the request.
    const composed = await next(e)
    if (e.traits.includes('bare')) return composed
    try {
      const text = await workStateText($, e.traits.includes('analysis'))
      return text === null ? composed : withSection(composed, text)
    } catch {
      return composed
    }
  })

  on('session.start', async ($, e, next) => {
    const started = await next(e)
    try {
      await dropSnapshot($)
    } catch {
      // The latch is only ever a cache: a stale one is replaced at the next key change or compaction.
    }
    return started
  })

  on('session.compact', async ($, e, next) => {
    const compacted = await next(e)
    // A real compaction of the main conversation restarts its prompt, so the section may move on; a skip,
    // a precompute (installs nothing) or a subagent's own compaction leaves the main prompt as it was.
    if (e.agentId === undefined && e.trigger !== 'precompute' && compacted.messages !== undefined) {
      try {
        await dropSnapshot($)
      } catch {
        // As above: never let the latch fail a compaction.
      }
    }
    return compacted
  })

  // The SessionStart command hook's own work-state part is the fallback for builds without this module: the
  // field below, on its stdin, says this module puts the section in the prompt of the thread that starts.
  // UserPromptSubmit is deliberately left unmarked: the engine keeps a thread's first system prompt (through
  // --resume too), so a ticket changed mid-thread reaches the model only through that hook's additionalContext.
  on('classic.SessionStart', ($, e, next) => next(withModMarker(e))).catch(($, e, next) => next(e))
}
