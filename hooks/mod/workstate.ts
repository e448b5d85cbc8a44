// What the module reads from a work-state file (`session-workflow state ...` writes it): the checks that decide
// whether a state is in play, shared by the system-prompt section and the status line.

import type { EngineInterface } from 'claude-code'

/** What the module takes from a work-state file: its owner session, the snapshot key and the section text. */
export type StoredSection = { owner: string; key: string; text: string }

export const STATE_FILE = '.claude/session-workflow/work-state.json'
const FORMAT_VERSION = 1
/** The writer guarantees this bound; the module still refuses a section over it rather than trust the file. */
export const MAX_SECTION_BYTES = 1024
// As the Python reader (workstate.py, workstate_section.py): a file over 64 KiB is not trusted, a ticket is
// an issue number or a tracker id such as PROJ-12, an owner a printable session id.
export const MAX_FILE_BYTES = 64 * 1024
const MAX_ISSUE_NUMBER = 2 ** 53
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

/**
 * The section a work-state file's text stores, or null when it is not one this module can use: an untrusted
 * record (readStateRecord), or no section of non-empty key and text within MAX_SECTION_BYTES. Pure: tested
 * without an engine.
 */
export function parseWorkState(raw: string): StoredSection | null {
  const state = readStateRecord(raw)
  if (state === null || !isRecord(state.section)) return null
  const { key, text } = state.section
  if (typeof key !== 'string' || key === '' || typeof text !== 'string' || text.trim() === '') return null
  if (utf8Length(text) > MAX_SECTION_BYTES || !isPrintableSection(text)) return null
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
