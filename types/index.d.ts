// session-workflow's contract: the session state its hooks module keeps (`$.state`), nothing added to `$`.

/**
 * The work-state section as latched for this session: the snapshot key the text was taken under (the owner
 * session and the writer's identity key, never the step) and the text sent in the system prompt.
 */
export type SessionWorkflowPromptSnapshot = {
  key: string
  text: string
}

/** The anchor this session keeps: the last one its own `session-workflow anchor` writers wrote, and when. */
export type SessionWorkflowKeptAnchor = {
  /** Absolute, as the writer printed it. */
  path: string
  title: string
  step: number
  /** When this session last wrote it, in `$.clock.now()` milliseconds. */
  writtenAt: number
}

/** The work state's ticket as the status line shows it: `#34` or `PROJ-7`, its step, when it was written. */
export type SessionWorkflowTicket = {
  label: string
  step: string
  updatedAt: number | null
}

/** The open tasks in the session's task list. */
export type SessionWorkflowTasks = {
  inProgress: number
  pending: number
}

/**
 * What the checkpoint nudge and the status line know of this session, refreshed when the writers run and
 * emptied at session end (a /clear included); `crossing` is set while the context fill stands at or past the
 * nudge point (when it got there, and whether the reminder went out).
 */
export type SessionWorkflowCheckpoint = {
  anchor: SessionWorkflowKeptAnchor | null
  crossing: { at: number; reminded: boolean } | null
  ticket: SessionWorkflowTicket | null
  tasks: SessionWorkflowTasks | null
}

declare module 'claude-code' {
  interface PluginState {
    'session-workflow': {
      /** The latched section; null means "rebuild at the next compose". */
      promptSnapshot: SessionWorkflowPromptSnapshot | null
      /** The checkpoint nudge's and the status line's view of this session. */
      checkpoint: SessionWorkflowCheckpoint
    }
  }
}
