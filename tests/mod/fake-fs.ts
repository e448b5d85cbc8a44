// The engine's `fs.stat` for the mod tests, answering from the test's in-memory files: a path is a file when the
// map holds it, a folder when some file lies below it; `links` says where a path really lands (a symbolic link).
import type { On } from 'claude-code'

export function fakeStat(on: On, files: Map<string, string>, links: Map<string, string>): void {
  on('fs.stat', ($, e) => {
    const isFile = files.has(e.path)
    const isDir = [...files.keys()].some((path) => path.startsWith(`${e.path}/`))
    if (!isFile && !isDir) return { deny: `stat ${e.path} failed: ENOENT` }
    const realPath = links.get(e.path) ?? e.path
    return { value: { kind: isFile ? 'file' : 'dir', size: 0, mtimeMs: 0, isLink: realPath !== e.path, realPath } }
  })
}
