// package.json promises what the tested SDKs need: `engines.node` is at
// least the newest Node any of them — or any package they depend on —
// declares, as installed here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))

interface Manifest { name: string; version: string; engines?: { node?: string }; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> }

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest

/** [major, minor, patch] */
type Version = [number, number, number]

const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/**
 * The oldest Node a range admits, for the ranges packages write in engines
 * (">=22", ">= 18.14.0", "^20.19 || >=22", "20.x || 22.x"): the lowest bound
 * of its alternatives.
 */
export function minNode(range: string): Version {
  const lows = range.split('||').map((alt) => {
    const m = /(\d+)(?:\.(\d+|x))?(?:\.(\d+|x))?/.exec(alt)
    if (!m) return [0, 0, 0] as Version
    return [Number(m[1]), Number(m[2] === 'x' ? 0 : m[2] ?? 0), Number(m[3] === 'x' ? 0 : m[3] ?? 0)] as Version
  })
  return lows.reduce((a, b) => (cmp(a, b) <= 0 ? a : b))
}

/** Where `name` resolves from the package in `from` (Node's lookup up the node_modules folders). */
function resolve(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const at = join(dir, 'node_modules', name)
    if (existsSync(join(at, 'package.json'))) return at
    if (dirname(dir) === dir) return undefined
  }
}

test('minNode reads the ranges packages write', () => {
  assert.deepEqual(minNode('>=22'), [22, 0, 0])
  assert.deepEqual(minNode('>= 18.14.0'), [18, 14, 0])
  assert.deepEqual(minNode('^20.19.0 || >=22.12'), [20, 19, 0])
  assert.deepEqual(minNode('20.x || 22.x'), [20, 0, 0])
})

test("engines.node is at least what every tested SDK and its dependencies declare", () => {
  const own = readManifest(root)
  assert.ok(own.engines?.node, 'package.json has engines.node')
  const sdks = Object.keys(own.peerDependencies ?? {})
  assert.ok(sdks.length >= 4, 'the SDKs are peer dependencies')
  const needs: Array<{ pkg: string; node: Version; range: string }> = []
  const seen = new Set<string>()
  const walk = (dir: string) => {
    if (seen.has(dir)) return
    seen.add(dir)
    const m = readManifest(dir)
    if (m.engines?.node) needs.push({ pkg: `${m.name}@${m.version}`, node: minNode(m.engines.node), range: m.engines.node })
    for (const dep of Object.keys(m.dependencies ?? {})) {
      const at = resolve(dep, dir)
      if (at) walk(at)
    }
  }
  for (const sdk of sdks) {
    const at = resolve(sdk, root)
    assert.ok(at, `${sdk} is installed (npm ci)`)
    walk(at)
  }
  const newest = needs.reduce((a, b) => (cmp(a.node, b.node) >= 0 ? a : b))
  const ours = minNode(own.engines.node)
  const wants = needs.filter((n) => cmp(n.node, ours) > 0).map((n) => `${n.pkg} (node ${n.range})`)
  assert.deepEqual(wants, [], `engines.node is "${own.engines.node}", but these tested packages need more`)
  assert.equal(cmp(ours, newest.node), 0, `engines.node "${own.engines.node}" asks for more than any tested SDK needs (the most: ${newest.pkg}, node ${newest.range})`)
})
