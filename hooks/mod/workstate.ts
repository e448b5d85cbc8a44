// What the module reads from a work-state file (`session-workflow state ...` writes it): the checks that decide
// whether a state is in play, shared by the system-prompt section and the status line.

import type { EngineInterface } from 'claude-code'
import type { SectionFields } from './text'
import { sectionOf, slugOfIssueUrl } from './text'

export { MAX_SECTION_BYTES } from './text'

/** What the module takes from a work-state file: its owner session, the snapshot key and the section text. */
export type StoredSection = { owner: string; key: string; text: string }

export const STATE_FILE = '.claude/session-workflow/work-state.json'
const FORMAT_VERSION = 1
// As the Python reader (workstate/state.py, workstate/section.py): a file over 64 KiB is not trusted, a ticket
// is an issue number or a tracker id such as PROJ-12, an owner a printable session id.
export const MAX_FILE_BYTES = 64 * 1024
const MAX_ISSUE_NUMBER = 10 ** 12
const TICKET_ID = /^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,63}$/
const SESSION_ID = /^[!-~]{1,256}$/

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
 * A work-state file's record when this module can trust it: within MAX_FILE_BYTES, a JSON object of this format
 * version with a ticket, a title, an owner session and a well-formed map; else null. The identity checks are the
 * Python reader's, so the two never disagree on whether a state is in play.
 */
export function readStateRecord(raw: string): Record<string, unknown> | null {
  if (utf8Length(raw) > MAX_FILE_BYTES) return null
  let state: unknown
  try {
    state = JSON.parse(raw)
  } catch {
    return null
  }
  if (!isRecord(state) || state.version !== FORMAT_VERSION) return null
  const { ticket, title, map, session } = state
  const isTicket = isIssueNumber(ticket) || (typeof ticket === 'string' && TICKET_ID.test(ticket))
  if (!isTicket || typeof title !== 'string' || !(map === null || map === undefined || isIssueNumber(map))) return null
  if (typeof session !== 'string' || !SESSION_ID.test(session)) return null
  return state
}

/** The fields of a trusted record that the section names, defaulted as the Python reader defaults them. */
function sectionFields(state: Record<string, unknown>): SectionFields {
  const text = (value: unknown) => (typeof value === 'string' ? value : null)
  return {
    ticket: state.ticket as number | string,
    title: state.title as string,
    map: typeof state.map === 'number' ? state.map : null,
    url: text(state.url),
    step: text(state.step) ?? '',
    paused: state.paused === true,
    auto: state.auto === true,
  }
}

/**
 * The section of a work-state file, or null when its record is not one this module can trust (readStateRecord).
 * Built from the state's fields as the Python side builds it (text.ts `sectionOf`), never taken from the file: the
 * stored text counts only as the choice between the section without links and the one with the links of the
 * ticket's GitHub URL (the Python reader, failing both, adds the links of the origin remote, which this module
 * does not read). The key is the fields the Python snapshot key names (never the step). Pure: tested without an
 * engine.
 */
export function parseWorkState(raw: string): StoredSection | null {
  const state = readStateRecord(raw)
  if (state === null) return null
  const fields = sectionFields(state)
  const stored = isRecord(state.section) ? state.section.text : undefined
  const bare = sectionOf(fields, null)
  const text = stored === bare ? bare : sectionOf(fields, slugOfIssueUrl(fields.url))
  const key = JSON.stringify([fields.map, fields.ticket, fields.title, fields.auto])
  return { owner: state.session as string, key, text }
}

function isIssueNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < MAX_ISSUE_NUMBER
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The text of `dir`'s work-state file, or null when it is missing, refused, not a regular file, or lands outside
 * `dir` (a symlinked `.claude`, state folder or file leading out of the project: the repository's content is data,
 * and the Python hooks pass such a state over too). One byte over the bound is read, so a file just over it is
 * refused rather than read cut short.
 */
export async function readStateFile($: EngineInterface, dir: string): Promise<string | null> {
  const folder = dir.replace(/[\\/]+$/, '')
  const path = `${folder}/${STATE_FILE}`
  try {
    const [own, base] = await Promise.all([$.fs.stat(path, { resolve: true }), $.fs.stat(folder, { resolve: true })])
    const real = own.realPath
    const root = base.realPath?.replace(/[\\/]+$/, '')
    if (own.kind !== 'file' || real === undefined || root === undefined || !real.startsWith(`${root}/`)) return null
    return await $.fs.read(path, { length: MAX_FILE_BYTES + 1 })
  } catch {
    return null
  }
}
