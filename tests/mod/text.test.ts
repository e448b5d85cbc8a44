// The mod's text rules held to the Python side's: the cleaner over every code point against the one table
// (tests/core/test_text.py holds Python's `one_line` to the same table), and the section and the shell quoting
// against what Python gives for the same inputs (tests/mod/python-text.ts, generated and checked by that test).
import { describe, expect, test } from 'claude-code/testing'
import { BREAKING_SPANS, INVISIBLE_SPANS, oneLine, sectionOf, shellQuote } from '../../hooks/mod/text'
import type { SectionFields } from '../../hooks/mod/text'
import { PYTHON_TEXT } from './python-text'

const inSpans = (spans: readonly (readonly [number, number])[], code: number) =>
  spans.some(([first, last]) => first <= code && code <= last)

describe('oneLine', () => {
  test('strips exactly the table, breaks on exactly the table, over every code point', () => {
    const wrong: string[] = []
    let stripped = 0
    for (let code = 0; code <= 0x10ffff; code++) {
      const char = String.fromCodePoint(code)
      const flat = oneLine(`a${char}b`)
      const expected = inSpans(INVISIBLE_SPANS, code) ? 'ab' : inSpans(BREAKING_SPANS, code) ? 'a b' : `a${char}b`
      if (flat !== expected && wrong.length < 10) wrong.push(code.toString(16))
      if (flat === 'ab') stripped++
    }
    expect(wrong).toEqual([])
    expect(stripped).toBe(4206)
  })

  test('runs become one space, the ends are trimmed', () => {
    expect(oneLine(' \t a\u00a0\u2028\u00ad b \u3000')).toBe('a b')
    expect(oneLine('x\ud800y\udfffz')).toBe('x y z')
    expect(oneLine('🙂\u{e0041}')).toBe('🙂')
  })
})

describe('as the Python side gives them', () => {
  test('the work-state section of each state', () => {
    for (const { fields, slug, text } of PYTHON_TEXT.sections) {
      const state: SectionFields = { paused: false, auto: false, ...(fields as Omit<SectionFields, 'paused' | 'auto'>) }
      expect(sectionOf(state, slug), JSON.stringify(fields).slice(0, 80)).toBe(text)
    }
  })

  test('a path as one shell word', () => {
    for (const { path, quoted } of PYTHON_TEXT.quotes) expect(shellQuote(path), JSON.stringify(path)).toBe(quoted)
  })
})
