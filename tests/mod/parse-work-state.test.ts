// The pure half of the module: the byte count and the checks on a work-state file, without an engine.
import { describe, expect, test } from 'claude-code/testing'
import { MAX_SECTION_BYTES, parseWorkState, utf8Length } from '../../hooks/mod/register'

const encoded = (text: string) => new TextEncoder().encode(text).length

describe('utf8Length', () => {
  test('counts as TextEncoder does, lone surrogates as U+FFFD', () => {
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
      session: 'owner',
      section: { key: 'k', text: 'Ticket #34' },
      ...fields,
    })

  test('takes the owner, key and text', () => {
    expect(parseWorkState(file({}))).toEqual({ owner: 'owner', key: 'k', text: 'Ticket #34' })
  })

  test('holds a file to 64 KiB and a section to 1024 bytes', () => {
    const base = file({ notes: '' })
    expect(parseWorkState(file({ notes: 'x'.repeat(65536 - encoded(base)) }))).not.toBeNull()
    expect(parseWorkState(file({ notes: 'x'.repeat(65537 - encoded(base)) }))).toBeNull()
    const text = 'é'.repeat(MAX_SECTION_BYTES / 2)
    expect(parseWorkState(file({ section: { key: 'k', text } }))?.text).toBe(text)
    expect(parseWorkState(file({ section: { key: 'k', text: `${text}x` } }))).toBeNull()
  })

  test('refuses a section with a control character or a lone surrogate', () => {
    expect(parseWorkState(file({ section: { key: 'k', text: 'line one\nline two 🙂' } }))).not.toBeNull()
    for (const text of ['a\rb', 'a\u0000b', 'a\u2028b', 'a\ud800b', 'a\udfffb', 'end\ud83d']) {
      expect(parseWorkState(file({ section: { key: 'k', text } })), JSON.stringify(text)).toBeNull()
    }
  })
})
