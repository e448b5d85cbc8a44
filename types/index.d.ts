// session-workflow's contract: the session state its hooks module keeps (`$.state`), nothing added to `$`.

/**
 * The work-state section as latched for this session: the snapshot key the text was taken under (the owner
 * session and the writer's identity key, never the step) and the text sent in the system prompt.
 */
export type SessionWorkflowPromptSnapshot = {
  key: string
  text: string
}

declare module 'claude-code' {
  interface PluginState {
    'session-workflow': {
      /** The latched section; null means "rebuild at the next compose". */
      promptSnapshot: SessionWorkflowPromptSnapshot | null
    }
  }
}
