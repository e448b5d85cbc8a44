// session-workflow's hooks module: the work-state section of the system prompt.
//
// The Python writer (`session-workflow state ...`) keeps the work state in
// <project>/.claude/session-workflow/work-state.json; this module reads and checks it and builds the section from
// its fields exactly as the Python side does (text.ts, held to Python's output by the tests), so a stored or
// hand-edited text never reaches the prompt as such. The latch keeps the prompt cache: the text is taken again only
// when the ticket's identity changes, at session start and after a real compaction of the main conversation,
// never on a step change. The engine itself sends a thread the system prompt it started with (a --resume
// included), so what the model reads here is the state as of the thread's start; changes in between reach it
// through the UserPromptSubmit command hook. The checkpoint nudge and the status row live in checkpoint.ts, the
// row's site in statusline.ts.
import type { EngineInterface, PromptComposeResult, PromptComposeSection, Register } from 'claude-code'
import { atom, read, update } from 'claude-code'
import type { SessionWorkflowPromptSnapshot } from '../../types'
import { afterToolCall, atClearBlock, atSessionEnd, atSessionStart, settingsOf } from './checkpoint'
import type { StoredSection } from './workstate'
import { drawStatusLine } from './statusline'
import { projectDir } from './where'
import { parseWorkState, readStateFile } from './workstate'

export { MAX_SECTION_BYTES, parseWorkState, utf8Length } from './workstate'

const SECTION_ID = 'session-workflow:work-state'
/** The field the command hooks read on stdin to know this module is loaded (context.MOD_PAYLOAD_KEY). */
const MOD_PAYLOAD_KEY = 'session_workflow_mod'

const promptSnapshot = atom({ plugin: 'session-workflow', key: 'promptSnapshot' } as const, null)

/**
 * The section this session owns: its project's work state (where.ts `projectDir`, the Python hooks' project). A
 * missing, unreadable or untrusted file, or one another session owns (orphaned here), gives none, as in the Python
 * reader.
 */
async function ownedSection($: EngineInterface, session: string): Promise<StoredSection | null> {
  const raw = await readStateFile($, await projectDir($))
  const stored = raw === null ? null : parseWorkState(raw)
  return stored !== null && stored.owner === session ? stored : null
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

export const register: Register = (on, options) => {
  const settings = settingsOf(options)

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
    try {
      await atSessionStart($, settings)
    } catch {
      // The status line is a convenience: a failed read leaves it as it was.
    }
    return started
  })

  on('session.end', async ($, e, next) => {
    try {
      await atSessionEnd($, settings, e.reason)
    } catch {
      // Nothing to undo: a state left behind names an anchor the next session's writers replace.
    }
    return next(e)
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
  // After a /clear, the block the command hook sent says whether the new session goes on with the cleared one's
  // anchor (checkpoint.ts `atClearBlock`).
  on('classic.SessionStart', async ($, e, next) => {
    const result = await next(withModMarker(e))
    if (e.source === 'clear') {
      try {
        await atClearBlock($, result.additionalContext ?? [], settings)
      } catch {
        // The status row and the reminder are conveniences: the next writer call brings them back.
      }
    }
    return result
  }).catch(($, e, next) => next(e))

  // The checkpoint nudge and the status line (checkpoint.ts): what our writers did, the context fill, and at
  // most one reminder on a main-thread tool result. The tool has run by then; a failure returns its result.
  on('tool.call', async ($, e, next) => {
    const result = await next(e)
    if (result.deny !== undefined) return result
    try {
      const reminder = await afterToolCall($, e, result, settings)
      return reminder === null ? result : { ...result, context: [...(result.context ?? []), reminder] }
    } catch {
      return result
    }
  }).catch(($, e, next) => next(e))

  // The status row (statusline.ts): the run's state on the terminal's status line, under the prompt.
  on('ui.render', { component: 'StatusLine' }, ($, e, next) => drawStatusLine($, e, next, settings)).catch(
    ($, e, next) => next(e),
  )
}
