// The pure half of the checkpoint nudge: the threshold, the point, the crossing verdict, the writers' output.
import { describe, expect, test } from 'claude-code/testing'
import {
  anchorHead,
  fillLevel,
  judgeCrossing,
  nudgePoint,
  recordFile,
  recordVouches,
  reminderLine,
  statusText,
  thresholdInForce,
  writerEvents,
} from '../../hooks/mod/checkpoint'
import { shellCommand } from '../../hooks/mod/text'
import { HANG_GUARD } from './hang-guard'
import { PYTHON_RECORDS } from './python-records'

const ANCHOR = '/p/.claude/anchors/2026-11-30-run.md'

describe('the threshold and the point', () => {
  test('CLAUDE_AUTOCOMPACT_PCT_OVERRIDE only lowers the threshold, as the engine does', HANG_GUARD, () => {
    // Default model: a 1,000,000 window, 980,000 effective, auto-compaction at 967,000.
    expect(thresholdInForce(967_000, undefined)).toBe(967_000)
    expect(thresholdInForce(967_000, '50')).toBe(490_000)
    expect(thresholdInForce(967_000, '5')).toBe(49_000)
    expect(thresholdInForce(967_000, '100')).toBe(967_000)
    for (const ignored of ['0', '-3', '101', 'x', '']) expect(thresholdInForce(967_000, ignored)).toBe(967_000)
  })

  test('15 points of the compaction window ahead, never before half the threshold, 0 for off', HANG_GUARD, () => {
    expect(nudgePoint(967_000, 1_000_000, 15)).toBe(817_000)
    expect(nudgePoint(67_000, 100_000, 15)).toBe(52_000)
    expect(nudgePoint(167_000, 200_000, 15)).toBe(137_000)
    expect(nudgePoint(49_000, 1_000_000, 15)).toBe(24_500)
    expect(nudgePoint(67_000, 100_000, 0)).toBeNull()
  })
})

describe('the crossing', () => {
  test('the fill against the point: at or past it, the 5-point band below it, below that', HANG_GUARD, () => {
    expect(fillLevel(52_000, 52_000, 100_000)).toBe('above')
    expect(fillLevel(51_999, 52_000, 100_000)).toBe('band')
    expect(fillLevel(47_000, 52_000, 100_000)).toBe('band')
    expect(fillLevel(46_999, 52_000, 100_000)).toBe('below')
  })

  test('below the band: no crossing, no reminder', HANG_GUARD, () => {
    expect(judgeCrossing({ at: 5, reminded: true }, 'below', 9, 1)).toEqual({ crossing: null, remind: false })
  })

  test('the first result past the point reminds when the anchor was written before', HANG_GUARD, () => {
    expect(judgeCrossing(null, 'above', 9, 1)).toEqual({ crossing: { at: 9, reminded: true }, remind: true })
  })

  test('once per crossing, a fill wavering in the band included', HANG_GUARD, () => {
    const reminded = { at: 9, reminded: true }
    expect(judgeCrossing(reminded, 'above', 12, 1)).toEqual({ crossing: reminded, remind: false })
    expect(judgeCrossing(reminded, 'band', 13, 1)).toEqual({ crossing: reminded, remind: false })
    expect(judgeCrossing(reminded, 'above', 14, 1)).toEqual({ crossing: reminded, remind: false })
    expect(judgeCrossing(null, 'band', 13, 1)).toEqual({ crossing: null, remind: false })
  })

  test('an anchor written at or after the crossing, or none: no reminder', HANG_GUARD, () => {
    expect(judgeCrossing(null, 'above', 9, 9)).toEqual({ crossing: { at: 9, reminded: false }, remind: false })
    expect(judgeCrossing({ at: 9, reminded: false }, 'above', 12, 10).remind).toBe(false)
    expect(judgeCrossing(null, 'above', 9, null).remind).toBe(false)
  })
})

describe('the reminder line', () => {
  test('one line of at most 300 bytes, the leanest form for a long path', HANG_GUARD, () => {
    const fill = { tokens: 820_000, threshold: 967_000 }
    const long = `/p/${'d'.repeat(180)}/.claude/anchors/run.md`
    const line = reminderLine(long, fill, { label: '#34', step: 'plan' })
    expect(line).toBe(`Checkpoint now: session-workflow anchor step ${long} "done: …; next: …"`)
    const huge = `/p/${'d'.repeat(400)}/.claude/anchors/run.md`
    const fallback = reminderLine(huge, fill, null)
    expect(fallback).toBe(
      "Context at 820k tokens, auto-compaction at 967k: write the cursor of this session's anchor down now (session-workflow anchor list; anchor step FILE \"…\")",
    )
    for (const text of [line, fallback]) expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(300)
  })
})

describe('the reminder line, over generated paths', () => {
  test('at most 300 UTF-8 bytes whatever the path holds; a path named whenever its shortest line fits', HANG_GUARD, () => {
    // Paths of one- to four-byte characters (an astral one is two UTF-16 units), one character longer at a time,
    // so every byte count around the bound is met: a count in UTF-16 units lets a non-ASCII path's line past
    // 300 bytes, a `<` drops the line that fills exactly 300.
    const fill = { tokens: 820_000, threshold: 967_000 }
    let exact = 0
    for (const pad of ['d', 'é', '中', '🙂']) {
      for (let count = 1; count <= 280; count++) {
        const path = `/p/${pad.repeat(count)}/.claude/anchors/run.md`
        const command = shellCommand('session-workflow', 'anchor', 'step', path)
        const shortest = new TextEncoder().encode(`Checkpoint now: ${command} "done: …; next: …"`).length
        exact += shortest === 300 ? 1 : 0
        for (const ticket of [null, { label: '#34', step: 'plan' }]) {
          const line = reminderLine(path, fill, ticket)
          const where = `${JSON.stringify(pad)} x ${count}`
          expect(new TextEncoder().encode(line).length, where).toBeLessThanOrEqual(300)
          expect(line.includes(command), where).toBe(shortest <= 300)
        }
      }
    }
    expect(exact).toBeGreaterThan(0)
  })
})

describe("the writers' output", () => {
  test('new, step, write and close, by what they print', HANG_GUARD, () => {
    expect(writerEvents('session-workflow anchor new --task "Run"', `${ANCHOR}\n`)).toEqual([
      { verb: 'wrote', path: ANCHOR },
    ])
    expect(writerEvents(`session-workflow anchor step ${ANCHOR} "x"`, `step 2 -> 3  ${ANCHOR}\nHEAD: 900 units\n`)).toEqual([
      { verb: 'wrote', path: ANCHOR },
    ])
    expect(writerEvents(`cd /p && session-workflow anchor write ${ANCHOR} <<'EOF'\n…\nEOF`, `wrote ${ANCHOR} (step 7)\r\n`)).toEqual([
      { verb: 'wrote', path: ANCHOR },
    ])
    expect(writerEvents(`session-workflow anchor close ${ANCHOR} --outcome ok`, `closed ${ANCHOR} -> /p/.claude/anchors/2026-11-30-run.closed.md\n`)).toEqual([
      { verb: 'closed', path: ANCHOR },
    ])
  })

  test('a path with spaces', HANG_GUARD, () => {
    const spaced = '/home/dev/my project/.claude/anchors/2026-11-30-run.md'
    expect(writerEvents(`session-workflow anchor step "${spaced}" x`, `step 0 -> 1  ${spaced}\n`)).toEqual([
      { verb: 'wrote', path: spaced },
    ])
    const closed = spaced.replace(/\.md$/, '.closed.md')
    expect(writerEvents(`session-workflow anchor close "${spaced}" --outcome ok`, `closed ${spaced} -> ${closed}\n`)).toEqual([
      { verb: 'closed', path: spaced },
    ])
  })

  test('nothing from a command that ran no writer, or a line no writer prints', HANG_GUARD, () => {
    expect(writerEvents(`echo "step 2 -> 3  ${ANCHOR}"`, `step 2 -> 3  ${ANCHOR}\n`)).toEqual([])
    expect(writerEvents('session-workflow anchor list', `${ANCHOR}\n`)).toEqual([])
    expect(writerEvents(`session-workflow anchor step ${ANCHOR} x`, `${ANCHOR}\n`)).toEqual([])
    expect(writerEvents('session-workflow anchor step /tmp/x.md x', 'step 1 -> 2  /tmp/x.md\n')).toEqual([])
    expect(writerEvents('session-workflow anchor new --task x', 'relative/.claude/anchors/a.md\n')).toEqual([])
  })
})

describe("an anchor's head", () => {
  test('the first heading, else the task; the frontmatter step', HANG_GUARD, () => {
    expect(anchorHead('---\ntask: The task\nstep: 4\n---\n\n# The title\n')).toEqual({ title: 'The title', step: 4 })
    expect(anchorHead('\ufeff---\ntask: The task\n---\n\nno heading\n')).toEqual({ title: 'The task', step: null })
    expect(anchorHead('# A \u001b[31mred\u001b[0m\u202e title\n')).toEqual({ title: 'A [31mred [0m title', step: null })
    expect(anchorHead('')).toEqual({ title: null, step: null })
    // A template's prompts are HTML comments: a heading inside one is no title.
    const prompt = '---\ntask: The task\n---\n\n<!-- Fill in:\n# Example title\n-->\n<!-- a --><!--\n# Nor this\n-->\n'
    expect(anchorHead(prompt)).toEqual({ title: 'The task', step: null })
    expect(anchorHead(`${prompt}# The title\n`)).toEqual({ title: 'The title', step: null })
  })
})

describe('the status text', () => {
  const anchor = { path: ANCHOR, title: 'Run', step: 2, writtenAt: 0 }
  test('nothing without state; each part alone', HANG_GUARD, () => {
    expect(statusText({ anchor: null, ticket: null, tasks: null }, 0, 30)).toBeUndefined()
    expect(statusText({ anchor: null, ticket: null, tasks: { inProgress: 0, pending: 0 } }, 0, 30)).toBeUndefined()
    expect(statusText({ anchor: null, ticket: { label: '#34', step: 'plan', updatedAt: null }, tasks: null }, 0, 30)).toBe(
      '#34 plan',
    )
    expect(statusText({ anchor: null, ticket: null, tasks: { inProgress: 0, pending: 3 } }, 0, 30)).toBe(
      'tasks 0 active, 3 pending',
    )
    expect(statusText({ anchor, ticket: null, tasks: null }, 30 * 60_000, 30)).toBe('⚓ Run · step 2 · 30m ago')
    expect(statusText({ anchor, ticket: null, tasks: null }, 30 * 60_000 + 1, 30)).toBe('⚓ Run · step 2 · 30m STALE')
    expect(statusText({ anchor, ticket: null, tasks: null }, 50 * 3_600_000, 30)).toBe('⚓ Run · step 2 · 2d STALE')
  })

  test('76 columns, the StatusLine site at an 80-column terminal: the title gives way first', HANG_GUARD, () => {
    const ticket = { label: '#34', step: 'execute', updatedAt: null }
    const tasks = { inProgress: 1, pending: 2 }
    const line = (title: string, width?: number) =>
      statusText({ anchor: { ...anchor, title }, ticket, tasks }, 0, 30, width)
    expect(line('Run')).toBe('⚓ Run · step 2 · now · #34 execute · tasks 1 active, 2 pending')
    // What 2.1.332 drew in tmux at 80 columns, whole (⚓ takes two columns there).
    expect(line('Migrate the whole billing service to the new ledger')).toBe(
      '⚓ Migrate the who… · step 2 · now · #34 execute · tasks 1 active, 2 pending',
    )
    expect(line('x'.repeat(60))).toBe(`⚓ ${'x'.repeat(15)}… · step 2 · now · #34 execute · tasks 1 active, 2 pending`)
    // Down to 12 columns of title; then the tasks shorten, then they go, then the ticket.
    const review = { label: 'PROJ-1234', step: 'implementation', updatedAt: null }
    const reviewed = (title: string) => statusText({ anchor: { ...anchor, title }, ticket: review, tasks }, 0, 30)
    expect(reviewed('Port the parser to grammar v2')).toBe(
      '⚓ Port the parser to… · step 2 · now · PROJ-1234 implementation · tasks 1+2',
    )
    expect(line('Port the parser to grammar v2', 58)).toBe('⚓ Port the pars… · step 2 · now · #34 execute · tasks 1+2')
    const stale = { anchor: { ...anchor, title: 'Port the parser' }, ticket, tasks }
    expect(statusText(stale, 3 * 3_600_000, 30, 52)).toBe('⚓ Port the parser · step 2 · 3h STALE · #34 execute')
    const long = { label: 'VERY-LONG-TRACKER-ID-12345', step: 'implementation-review', updatedAt: null }
    expect(statusText({ ...stale, ticket: long }, 3 * 3_600_000, 30, 52)).toBe('⚓ Port the parser · step 2 · 3h STALE')
    for (const title of ['Run', 'Port the parser to v2', 'x'.repeat(60), '⚓⚓⚓ 移植'.repeat(9)]) {
      let columns = 0
      for (const char of line(title) ?? '') columns += /[\u2693\u2e80-\ua4cf]/.test(char) ? 2 : 1
      expect(columns).toBeLessThanOrEqual(76)
      expect(columns).toBeGreaterThanOrEqual(title.length > 30 ? 75 : 0)
    }
  })
})

describe("the writer's trust record, as Python names and writes it (tests/mod/python-records.ts)", () => {
  const { trustDir, names, record, stat, session, anchor } = PYTHON_RECORDS

  test('each path\'s record file is the one core/locations.py names: ASCII, spaces, non-ASCII, astral, long', HANG_GUARD, () => {
    expect(names.length).toBeGreaterThanOrEqual(14)
    for (const { path, file } of names) expect(recordFile(trustDir, path)).toBe(file)
  })

  test('the record vouches for the file at the stat the writer left: its size, its mtime to the millisecond', HANG_GUARD, () => {
    expect(stat.mtimeMs % 1000).toBeGreaterThan(1) // a reading in seconds and one in milliseconds disagree
    expect(recordVouches(record, anchor.path, stat, session)).toBe(true)
    expect(recordVouches(record, anchor.path, { ...stat, mtimeMs: stat.mtimeMs + 400 }, session)).toBe(false)
    expect(recordVouches(record, anchor.path, { ...stat, mtimeMs: stat.mtimeMs - 2 }, session)).toBe(false)
    expect(recordVouches(record, anchor.path, { ...stat, mtimeMs: Math.floor(stat.mtimeMs / 1000) }, session)).toBe(false)
    expect(recordVouches(record, anchor.path, { ...stat, size: stat.size + 1 }, session)).toBe(false)
    expect(recordVouches(record, anchor.path, stat, 'another-session')).toBe(false)
    expect(recordVouches(record, `${anchor.path}x`, stat, session)).toBe(false)
  })
})
