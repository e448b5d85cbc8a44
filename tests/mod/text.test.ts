// The mod's text rules held to the Python side's: the cleaner over every code point against the one table
// (tests/core/test_text.py holds Python's `one_line` to the same table), and the section and the shell quoting
// against what Python gives for the same inputs (tests/mod/python-text.ts, generated and checked by that test).
import { describe, expect, test } from 'claude-code/testing'
import {
  BREAKING_SPANS,
  INVISIBLE_SPANS,
  columns,
  oneLine,
  sectionOf,
  shellCommand,
  shellQuote,
  slugOfIssueUrl,
} from '../../hooks/mod/text'
import { parseWorkState } from '../../hooks/mod/workstate'
import type { SectionFields } from '../../hooks/mod/text'
import { PYTHON_TEXT } from './python-text'
import { HANG_GUARD } from './hang-guard'

const inSpans = (spans: readonly (readonly [number, number])[], code: number) =>
  spans.some(([first, last]) => first <= code && code <= last)

describe('oneLine', () => {
  // 1.1 million code points: a hang guard of two minutes, not the default five seconds, which a loaded machine
  // overran (a timing assertion in disguise).
  test('strips exactly the table, breaks on exactly the table, over every code point', { timeoutMs: 120_000 }, () => {
    // A plane at a time, each code point between two Zs (which keep a run from meeting its neighbour's and the
    // ends from being trimmed): the flattened text, split at the Zs, is each code point's own outcome.
    const wrong: string[] = []
    let stripped = 0
    for (let plane = 0; plane <= 0x10; plane++) {
      const codes: number[] = []
      for (let code = plane * 0x10000; code < (plane + 1) * 0x10000; code++) if (code !== 0x5a) codes.push(code)
      const outcomes = oneLine(`Z${codes.map((code) => String.fromCodePoint(code)).join('Z')}Z`).split('Z').slice(1, -1)
      expect(outcomes.length).toBe(codes.length)
      codes.forEach((code, index) => {
        const char = String.fromCodePoint(code)
        const expected = inSpans(INVISIBLE_SPANS, code) ? '' : inSpans(BREAKING_SPANS, code) ? ' ' : char
        if (outcomes[index] !== expected && wrong.length < 10) wrong.push(code.toString(16))
        if (outcomes[index] === '') stripped++
      })
    }
    expect(oneLine('aZb')).toBe('aZb')
    expect(wrong).toEqual([])
    expect(stripped).toBe(4206)
  })

  test('runs become one space, the ends are trimmed', HANG_GUARD, () => {
    expect(oneLine(' \t a\u00a0\u2028\u00ad b \u3000')).toBe('a b')
    expect(oneLine('x\ud800y\udfffz')).toBe('x y z')
    expect(oneLine('🙂\u{e0041}')).toBe('🙂')
  })
})

describe('columns', () => {
  test('two for each East Asian wide range the status row counts, one just outside them', HANG_GUARD, () => {
    // Every point below is W or F (wide) or N, Na, A or H (narrow) in Unicode's East Asian Width.
    const wide = [0x231a, 0x2693, 0x1100, 0x115f, 0x2e80, 0xa4cf, 0xac00, 0xd7a3, 0xf900, 0xfaff, 0xfe30, 0xfe4f]
    wide.push(0xff00, 0xff60, 0xffe0, 0xffe6, 0x1f300, 0x20000, 0x3fffd)
    const narrow = [0x41, 0xe9, 0x2692, 0x10ff, 0x1160, 0xa4d0, 0xfb00, 0xfe2f, 0xff61, 0x1fb00]
    for (const code of wide) expect(columns(String.fromCodePoint(code)), code.toString(16)).toBe(2)
    for (const code of narrow) expect(columns(String.fromCodePoint(code)), code.toString(16)).toBe(1)
  })
})

describe('as the Python side gives them', () => {
  test('the work-state section of each state', HANG_GUARD, () => {
    for (const { fields, slug, text } of PYTHON_TEXT.sections) {
      const state: SectionFields = { paused: false, auto: false, ...(fields as Omit<SectionFields, 'paused' | 'auto'>) }
      expect(sectionOf(state, slug), JSON.stringify(fields).slice(0, 80)).toBe(text)
    }
  })

  test('a state file is in play with the owner Python gives it, its 64 KiB counted in bytes', HANG_GUARD, () => {
    // Generated around every bound the two readers share: the file's 65,536 UTF-8 bytes padded with one- to
    // four-byte characters (an astral one is two UTF-16 units), the owner's 256 characters, the tracker id's 64,
    // an issue number under 10^12.
    expect(PYTHON_TEXT.states.length).toBeGreaterThan(40)
    for (const { prefix, pad, count, suffix, owner } of PYTHON_TEXT.states) {
      const raw = `${prefix}${pad.repeat(count)}${suffix}`
      expect(parseWorkState(raw)?.owner ?? null, `${JSON.stringify(pad)} x ${count}, ${prefix.slice(-80)}`).toBe(owner)
    }
  })

  test('a path as one shell word', HANG_GUARD, () => {
    for (const { path, quoted } of PYTHON_TEXT.quotes) expect(shellQuote(path), JSON.stringify(path)).toBe(quoted)
  })

  test('a command as shell_command builds it, each word quoted', HANG_GUARD, () => {
    for (const { words, command } of PYTHON_TEXT.commands)
      expect(shellCommand(...words), JSON.stringify(words)).toBe(command)
  })
})

describe('slugOfIssueUrl', () => {
  // What Python's `slug_of_issue_url` gives for the same URLs (src/session_workflow/workstate/section.py).
  test('an issue number holding a zero is a number, and an empty owner or name is no slug', () => {
    expect(slugOfIssueUrl('https://github.com/o/r/issues/10')).toBe('o/r')
    expect(slugOfIssueUrl('https://github.com/o/r/issues/0')).toBe('o/r')
    expect(slugOfIssueUrl('https://github.com//r/issues/1')).toBe(null)
    expect(slugOfIssueUrl('https://github.com/o//issues/1')).toBe(null)
  })
})
