// The field that tells the Python command hooks this module delivers the work-state section, so they do not.
import type { ClassicEventOf } from 'claude-code'
import { expect, test } from 'claude-code/testing'
import { HANG_GUARD } from './hang-guard'

const KEY = 'session_workflow_mod'

test('SessionStart command hooks see the field once, for every source', HANG_GUARD, async ($, on) => {
  const seen: ClassicEventOf['classic.SessionStart'][] = []
  on('classic.SessionStart', ($, e) => {
    seen.push(e)
    return {}
  })
  for (const source of ['startup', 'resume', 'clear', 'compact'] as const) {
    await $.classic.SessionStart({ source })
  }
  expect(seen.map((e) => [e.source, (e as Record<string, unknown>)[KEY]])).toEqual([
    ['startup', 1],
    ['resume', 1],
    ['clear', 1],
    ['compact', 1],
  ])
})

test('UserPromptSubmit command hooks get their stdin untouched', HANG_GUARD, async ($, on) => {
  const seen: ClassicEventOf['classic.UserPromptSubmit'][] = []
  on('classic.UserPromptSubmit', ($, e) => {
    seen.push(e)
    return {}
  })
  await $.classic.UserPromptSubmit({ prompt: 'hi' })
  expect(seen).toHaveLength(1)
  expect(seen[0]).toMatchObject({ prompt: 'hi' })
  expect(KEY in (seen[0] ?? {})).toBe(false)
})

test("the command hooks' answer comes back unchanged", HANG_GUARD, async ($, on) => {
  on('classic.SessionStart', () => ({ additionalContext: ['from the command hook'] }))
  expect(await $.classic.SessionStart({ source: 'startup' })).toEqual({ additionalContext: ['from the command hook'] })
})

test('the command hooks run once, marked, even when they fail', HANG_GUARD, async ($, on) => {
  const seen: ClassicEventOf['classic.SessionStart'][] = []
  on('classic.SessionStart', ($, e) => {
    seen.push(e)
    throw new Error('the command hook failed')
  })
  await $.classic.SessionStart({ source: 'startup' }).catch(() => undefined)
  expect(seen).toHaveLength(1)
  expect(seen[0]).toMatchObject({ source: 'startup', [KEY]: 1 })
})
