// Where things are, as the Python side says (src/session_workflow/core/where.py, core/locations.py), ported once:
// the session's project, Claude Code's task list for the session, the writer's trust records. One function each;
// tests/core/test_where.py holds Python to the table in tests/mod/python-where.ts and tests/mod/where.test.ts holds
// these to it, over unset, relative and absolute CLAUDE_CONFIG_DIR, HOME and XDG_STATE_HOME and a set or unset
// CLAUDE_CODE_TASK_LIST_ID.
import type { EngineInterface } from 'claude-code'

/** The variables the rules read (a project's `env` block can set the list id, never HOME, XDG_* or the config). */
export type WhereEnv = {
  HOME?: string | undefined
  XDG_STATE_HOME?: string | undefined
  CLAUDE_CONFIG_DIR?: string | undefined
  CLAUDE_CODE_TASK_LIST_ID?: string | undefined
}

/**
 * The session's project: the engine's project root, where the session started (a shell `cd` does not move it).
 * Claude Code reads `.claude/settings.json` there and gives it to the Python hooks as CLAUDE_PROJECT_DIR, and its
 * Bash tool's commands find it as the first cwd of the session's transcript (measured on 2.1.332).
 */
export async function projectDir($: EngineInterface): Promise<string> {
  return $.session.root()
}

/** Python's `os.path.join(base, name)` for a relative `name`. */
function join(base: string, name: string): string {
  return base.endsWith('/') ? `${base}${name}` : `${base}/${name}`
}

const isAbsolute = (path: string | undefined): path is string =>
  path !== undefined && path.startsWith('/') && !path.includes('\0')

/** Claude Code's configuration folder: CLAUDE_CONFIG_DIR when absolute (a relative one is ignored, as Python
 * ignores it), else `$HOME/.claude`; null without an absolute home. */
export function configDir(env: WhereEnv): string | null {
  if (isAbsolute(env.CLAUDE_CONFIG_DIR)) return env.CLAUDE_CONFIG_DIR
  return isAbsolute(env.HOME) ? join(env.HOME, '.claude') : null
}

/** Where Claude Code keeps the session's tasks: `<config>/tasks/<CLAUDE_CODE_TASK_LIST_ID or the session id>`, the
 * id made a file name as Claude Code makes it (every UTF-16 unit but `[A-Za-z0-9_-]` a `-`). */
export function taskListDir(env: WhereEnv, session: string): string | null {
  const config = configDir(env)
  const id = env.CLAUDE_CODE_TASK_LIST_ID || session
  if (config === null || id === '') return null
  return join(join(config, 'tasks'), id.replace(/[^A-Za-z0-9_-]/g, '-'))
}

/** The user's state folder for session-workflow (platformdirs' `user_state_dir`, from the environment alone):
 * XDG_STATE_HOME when absolute, else `$HOME/.local/state` (macOS: `$HOME/Library/Application Support`). */
export function userStateDir(env: WhereEnv, sysname: string): string | null {
  const given = env.XDG_STATE_HOME ?? ''
  const home = env.HOME ?? ''
  let base: string
  if (given.startsWith('/')) base = given
  else if (home.startsWith('/'))
    base = `${home.replace(/\/+$/, '')}${sysname === 'Darwin' ? '/Library/Application Support' : '/.local/state'}`
  else return null
  return base.includes('\0') ? null : join(base, 'session-workflow')
}

/** Where the writer keeps the anchors' trust records (`core/locations.py` `trust_dir`). */
export function trustDir(env: WhereEnv, sysname: string): string | null {
  const root = userStateDir(env, sysname)
  return root === null ? null : join(root, 'anchors')
}

/** The variables the rules read, from the engine. */
export async function whereEnv($: EngineInterface): Promise<WhereEnv> {
  const [HOME, XDG_STATE_HOME, CLAUDE_CONFIG_DIR, CLAUDE_CODE_TASK_LIST_ID] = await Promise.all([
    $.env.get('HOME'),
    $.env.get('XDG_STATE_HOME'),
    $.env.get('CLAUDE_CONFIG_DIR'),
    $.env.get('CLAUDE_CODE_TASK_LIST_ID'),
  ])
  return { HOME, XDG_STATE_HOME, CLAUDE_CONFIG_DIR, CLAUDE_CODE_TASK_LIST_ID }
}
