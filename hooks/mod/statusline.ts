// The run's state under the prompt, as the status line it is.
//
// `$.ui.status` pins a plugin's text among the engine's notices, after a `⚠ <plugin>: ` lead, so a step or a
// task count read as an alarm, and the lead left 56 of the row's 76 columns. The terminal's StatusLine site
// (under the prompt, above the hint line) is where a session's state is drawn: the person's own `statusLine`
// command's output first, then this row, dim as the engine draws a status line, fitted to the site's columns.
import type { EngineInterface, RenderElement, RenderInput } from 'claude-code'
import type { CheckpointSettings } from './checkpoint'
import { statusRow } from './checkpoint'

/** The StatusLine site's text with the row under what the person's command printed; the site as it was without one. */
export async function drawStatusLine(
  $: EngineInterface,
  e: RenderInput<'StatusLine'>,
  next: (e: RenderInput<'StatusLine'>) => Promise<RenderElement>,
  settings: CheckpointSettings,
): Promise<RenderElement> {
  const row = e.props.maxRows > 0 ? await statusRow($, settings, e.props.columns) : undefined
  if (row === undefined) return next(e)
  const own = (e.props.text ?? '').replace(/\n+$/, '')
  return next({ ...e, props: { ...e.props, text: own === '' ? row : `${own}\n${row}` } })
}
