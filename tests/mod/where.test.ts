// The mod's folder rules held to the Python side's: the task list and the trust folder against what Python gives
// for the same environments (tests/mod/python-where.ts, generated and checked by tests/core/test_where.py). The
// project (the engine's root, never the shell's cwd) is held in work-state-section.test.ts.
import { describe, expect, test } from 'claude-code/testing'
import { projectDir, taskListDir, trustDir } from '../../hooks/mod/where'
import type { WhereEnv } from '../../hooks/mod/where'
import { PYTHON_WHERE } from './python-where'
import { HANG_GUARD } from './hang-guard'

describe('where', () => {
  test('the task list and the trust folder are the folders Python names, environment by environment', HANG_GUARD, () => {
    expect(PYTHON_WHERE.length).toBe(68)
    const wrong = PYTHON_WHERE.filter(({ env, session, sysname, tasks, trust }) => {
      const given = env as WhereEnv
      return taskListDir(given, session) !== tasks || trustDir(given, sysname) !== trust
    })
    expect(wrong).toEqual([])
  })

  test('a relative CLAUDE_CONFIG_DIR is ignored, as Python ignores it', HANG_GUARD, () => {
    expect(taskListDir({ HOME: '/h', CLAUDE_CONFIG_DIR: 'cfg' }, 's')).toBe('/h/.claude/tasks/s')
    expect(taskListDir({ CLAUDE_CONFIG_DIR: 'cfg' }, 's')).toBe(null)
    expect(taskListDir({ HOME: '/h', CLAUDE_CODE_TASK_LIST_ID: 'a/b' }, 's')).toBe('/h/.claude/tasks/a-b')
  })
})
