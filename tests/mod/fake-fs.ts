// The engine's `fs.stat` for the mod tests, answering from the test's in-memory files: a path is a file when the
// map holds it, a folder when some file lies below it; `links` says where a path really lands (a symbolic link);
// `stats` gives a file's size and mtime (else 0: a file no writer's record names).
import type { On } from 'claude-code'

export type FakeStat = { size: number; mtimeMs: number }

export function fakeStat(
  on: On,
  files: Map<string, string>,
  links: Map<string, string>,
  stats: Map<string, FakeStat> = new Map(),
): void {
  on('fs.stat', ($, e) => {
    const isFile = files.has(e.path)
    const isDir = [...files.keys()].some((path) => path.startsWith(`${e.path}/`))
    if (!isFile && !isDir) return { deny: `stat ${e.path} failed: ENOENT` }
    const realPath = links.get(e.path) ?? e.path
    const { size, mtimeMs } = stats.get(e.path) ?? { size: 0, mtimeMs: 0 }
    return { value: { kind: isFile ? 'file' : 'dir', size, mtimeMs, isLink: realPath !== e.path, realPath } }
  })
}
