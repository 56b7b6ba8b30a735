/**
 * A minimal fetch over `node:http`/`node:https`, the client's default on
 * Node. Node's built-in fetch (undici) gives up on a response whose headers
 * take more than 300 s (`UND_ERR_HEADERS_TIMEOUT`) and closes the
 * connection — and askslack withdraws a question whose blocking request
 * closes. A person may take longer than that to answer, so the blocking ask
 * must not time out on its own: `node:http` has no such limit.
 *
 * @module
 */
import type { FetchLike } from './client.js'

type Resp = Awaited<ReturnType<FetchLike>>

/** Loads `node:http` and `node:https` and returns a {@link FetchLike} over them. */
export async function nodeHttpFetch(): Promise<FetchLike> {
  const [http, https] = await Promise.all([import('node:http'), import('node:https')])
  return (input, init) => new Promise<Resp>((resolve, reject) => {
    const signal = init.signal
    if (signal?.aborted) return reject(abortReason(signal))
    const url = new URL(input)
    const headers: Record<string, string | number> = { ...init.headers }
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body)
    const mod = url.protocol === 'https:' ? https : http
    let settled = false
    const done = (fn: () => void) => {
      if (settled) return
      settled = true
      signal?.removeEventListener('abort', onAbort)
      fn()
    }
    const req = mod.request(url, { method: init.method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', (e) => done(() => reject(e)))
      res.on('end', () => done(() => {
        const body = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: res.statusCode ?? 0,
          headers: {
            get(name: string) {
              const v = res.headers[name.toLowerCase()]
              return v === undefined ? null : Array.isArray(v) ? v.join(', ') : String(v)
            },
          },
          text: async () => body,
        })
      }))
    })
    const onAbort = () => {
      const reason = abortReason(signal!)
      req.destroy(reason)
      done(() => reject(reason))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (e) => done(() => reject(e)))
    if (init.body !== undefined) req.write(init.body)
    req.end()
  })
}

function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason
  if (r instanceof Error) return r
  const e = new Error('This operation was aborted')
  e.name = 'AbortError'
  return e
}

/** True on Node (and runtimes that provide its `node:http`). */
export function onNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process
  return typeof p?.versions?.node === 'string'
}
