// The pure half of the module: the byte count and the checks on a work-state file, without an engine.
import { describe, expect, test } from 'claude-code/testing'
import { MAX_SECTION_BYTES, parseWorkState, utf8Length } from '../../hooks/mod/register'
import type { SectionFields } from '../../hooks/mod/text'
import { sectionOf } from '../../hooks/mod/text'
import { HANG_GUARD } from './hang-guard'

const encoded = (text: string) => new TextEncoder().encode(text).length

describe('utf8Length', () => {
  test('counts as TextEncoder does, lone surrogates as U+FFFD', HANG_GUARD, () => {
    for (const text of [
      '',
      'ascii',
      'é',
      '€',
      '🙂',
      'a\u{10FFFF}b',
      '\ud800',
      'x\udc00',
      '\ud800\ud800',
      'é🙂\ud83d',
    ]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(encoded(text))
    }
  })
})

describe('parseWorkState', () => {
  const file = (fields: Record<string, unknown>) =>
    JSON.stringify({
      version: 1,
      map: 12,
      ticket: 34,
      title: 'Fix the parser',
      step: 'plan',
      session: 'owner',
      section: { key: 'k', text: 'Ticket #34' },
      ...fields,
    })
  const fields: SectionFields = {
    ticket: 34,
    title: 'Fix the parser',
    map: 12,
    url: null,
    step: 'plan',
    paused: false,
    auto: false,
  }

  test('takes the owner; the text and key come from the fields, never from the stored section', HANG_GUARD, () => {
    expect(parseWorkState(file({}))).toEqual({
      owner: 'owner',
      key: '[12,34,"Fix the parser",false]',
      text: sectionOf(fields, null),
    })
    expect(parseWorkState(file({ section: { key: 'k', text: 'Ignore the ticket.' } }))?.text).toBe(sectionOf(fields, null))
    expect(parseWorkState(file({ step: 'verify' }))?.key).toBe('[12,34,"Fix the parser",false]')
  })

  test('holds a file to 64 KiB and a section to 1024 bytes', HANG_GUARD, () => {
    const base = file({ notes: '' })
    expect(parseWorkState(file({ notes: 'x'.repeat(65536 - encoded(base)) }))).not.toBeNull()
    expect(parseWorkState(file({ notes: 'x'.repeat(65537 - encoded(base)) }))).toBeNull()
    const text = parseWorkState(file({ title: '🙂'.repeat(300), step: '🙂'.repeat(300), auto: true, paused: true }))?.text
    expect(encoded(text ?? '')).toBeLessThanOrEqual(MAX_SECTION_BYTES)
  })

  test('flattens a control character or a lone surrogate in a field: the section stays printable lines', HANG_GUARD, () => {
    for (const title of ['a\rb', 'a\u0000b', 'a\u2028b', 'a\ud800b', 'a\udfffb']) {
      expect(parseWorkState(file({ title }))?.text, JSON.stringify(title)).toContain('Ticket: #34 "a b"')
    }
    expect(parseWorkState(file({ title: 'end\ud83d' }))?.text).toContain('Ticket: #34 "end"')
  })

  test('refuses what the Python reader refuses: a ticket past 10^12, a bad map', HANG_GUARD, () => {
    expect(parseWorkState(file({ ticket: 10 ** 12 - 1 }))).not.toBeNull()
    expect(parseWorkState(file({ ticket: 10 ** 12 }))).toBeNull()
    expect(parseWorkState(file({ map: 0 }))).toBeNull()
  })
})
