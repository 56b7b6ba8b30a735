// Test harness: the real askslack binary and the project's fake Slack, built
// once per run (or taken from ASKSLACK_BIN / FAKESLACK_BIN, which the Go test
// in node_test.go sets) and started as child processes.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const SECRET = 'S'
export const CHANNEL = 'C0QUESTIONS'

/** The repository root: the nearest parent holding askslack's go.mod. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const mod = join(dir, 'go.mod')
    if (existsSync(mod) && readFileSync(mod, 'utf8').includes('module github.com/askslack/askslack')) return dir
    const up = dirname(dir)
    if (up === dir) throw new Error('askslack repository root not found above ' + fileURLToPath(import.meta.url))
    dir = up
  }
}

function goBinary(): string {
  for (const p of (process.env.PATH ?? '').split(':')) {
    if (p && existsSync(join(p, 'go'))) return join(p, 'go')
  }
  if (existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go'
  throw new Error('go not found on PATH or in /usr/local/go/bin')
}

export interface Binaries { askslack: string; fakeslack: string; cleanup(): void }

/** Builds (or reuses) the two binaries. */
export function binaries(): Binaries {
  const a = process.env.ASKSLACK_BIN, f = process.env.FAKESLACK_BIN
  if (a && f && existsSync(a) && existsSync(f)) return { askslack: a, fakeslack: f, cleanup() {} }
  const dir = mkdtempSync(join(tmpdir(), 'askslack-ts-'))
  const root = repoRoot()
  const go = goBinary()
  const env = { ...process.env, PATH: `${process.env.PATH ?? ''}:${dirname(go)}` }
  const askslack = join(dir, 'askslack'), fakeslack = join(dir, 'fakeslack')
  execFileSync(go, ['build', '-o', askslack, './cmd/askslack'], { cwd: root, env, stdio: 'inherit' })
  execFileSync(go, ['build', '-o', fakeslack, './internal/slackfake/cmd/fakeslack'], { cwd: root, env, stdio: 'inherit' })
  return { askslack, fakeslack, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer()
    s.once('error', rej)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => res(port))
    })
  })
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls fn until it returns a value other than undefined, or fails after timeoutMs. */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v !== undefined) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await sleep(50)
  }
}

/** A child process of the test, with its output kept for failure reports. */
export class Proc {
  readonly child: ChildProcess
  output = ''
  #exited: Promise<void>
  constructor(readonly name: string, bin: string, args: string[], env: Record<string, string>) {
    this.child = spawn(bin, args, { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    const keep = (b: Buffer) => { this.output = (this.output + b.toString()).slice(-200_000) }
    this.child.stdout!.on('data', keep)
    this.child.stderr!.on('data', keep)
    this.#exited = new Promise((r) => this.child.once('exit', () => r()))
  }
  get running(): boolean { return this.child.exitCode === null && this.child.signalCode === null }
  async stop(): Promise<void> {
    if (this.running) {
      this.child.kill('SIGTERM')
      const t = setTimeout(() => this.child.kill('SIGKILL'), 5_000)
      await this.#exited
      clearTimeout(t)
    }
  }
}

/** A message as the fake's control API lists it. */
export interface FakeMessage { channel: string; ts: string; text: string; blocks?: unknown; updated: number }

/** The fake Slack's control API. */
export class Fake {
  constructor(readonly url: string, readonly proc: Proc) {}
  get apiURL(): string { return this.url + '/api/' }
  async messages(): Promise<FakeMessage[]> {
    const r = await fetch(this.url + '/_fake/messages')
    return (await r.json()) as FakeMessage[]
  }
  /** The message posted for callId (its block ids carry `ask/<callId>/`). */
  async message(callId: string): Promise<FakeMessage | undefined> {
    return (await this.messages()).find((m) => JSON.stringify(m.blocks ?? null).includes(`ask/${callId}/`))
  }
  waitPosted(callId: string): Promise<FakeMessage> {
    return eventually(`the question ${callId} in Slack`, () => this.message(callId))
  }
  async views(): Promise<FakeView[]> {
    const r = await fetch(this.url + '/_fake/views')
    return (await r.json()) as FakeView[]
  }
  /** Submits an open modal of user, filling its text input with text. */
  async submitText(text: string, user = 'U0ALICE'): Promise<void> {
    const view = await eventually('an open modal', async () =>
      (await this.views()).find((v) => !v.closed && v.user_id === user))
    const input = (view.view.blocks ?? []).find((b) => b.type === 'input' && b.element?.type === 'plain_text_input')
    if (!input) throw new Error('the modal has no text input: ' + JSON.stringify(view.view))
    await this.control('submit', { view_id: view.id, user, values: { [input.block_id]: [text] } })
  }
  /** Submits user's open Edit & allow form with new values for its fields, by name. */
  async submitEdit(fields: Record<string, string>, user = 'U0ALICE'): Promise<void> {
    const view = await eventually('an open Edit & allow form', async () =>
      (await this.views()).find((v) => !v.closed && v.user_id === user && JSON.stringify(v.view).includes('askslack.edit')))
    const values: Record<string, string[]> = {}
    for (const [name, value] of Object.entries(fields)) {
      const input = (view.view.blocks ?? []).find((b) => b.type === 'input' && String(b.block_id).endsWith('/edit/' + name))
      if (!input) throw new Error(`the form has no field ${name}: ` + JSON.stringify(view.view))
      values[input.block_id] = [value]
    }
    await this.control('submit', { view_id: view.id, user, values })
  }
  async #post(what: string, body: unknown): Promise<void> {
    const r = await fetch(this.url + '/_fake/' + what, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await r.text()
    if (r.status !== 200 || /"error"\s*:\s*"[^"]/.test(text)) throw new Error(`${what}: HTTP ${r.status}: ${text}`)
  }
  control(what: string, body: unknown): Promise<void> { return this.#post(what, body) }
  click(m: { channel: string; ts: string }, button: string, user = 'U0ALICE'): Promise<void> {
    return this.#post('click', { channel: m.channel, ts: m.ts, user, button })
  }
}

/** A modal as the fake's control API lists it. */
export interface FakeView { id: string; user_id: string; closed: boolean; view: { blocks?: Array<Record<string, any>> } }

export function hasControls(m: FakeMessage): boolean {
  const b = JSON.stringify(m.blocks ?? null)
  return b.includes('"actions"') || b.includes('"button"')
}

async function waitReady(url: string, proc: Proc): Promise<void> {
  await eventually(`${proc.name} ready`, async () => {
    if (!proc.running) throw new Error(`${proc.name} exited:\n${proc.output}`)
    const r = await fetch(url + '/readyz')
    await r.text()
    return r.status === 200 ? true : undefined
  }, 30_000)
}

async function waitListening(url: string, proc: Proc): Promise<void> {
  await eventually(`${proc.name} listening`, async () => {
    if (!proc.running) throw new Error(`${proc.name} exited:\n${proc.output}`)
    const r = await fetch(url + '/_fake/messages')
    await r.text()
    return r.status === 200 ? true : undefined
  }, 30_000)
}

/** A fake Slack plus askslack bots, torn down together. */
export class Deployment {
  readonly procs: Proc[] = []
  fake!: Fake
  constructor(readonly bins: Binaries) {}

  /** Starts the fake Slack delivering interactions to a bot on botPort. */
  async startFake(botPort: number): Promise<Fake> {
    const port = await freePort()
    const p = new Proc('fakeslack', this.bins.fakeslack, [
      '-addr', `127.0.0.1:${port}`, '-signing-secret', SECRET, '-bot-token', 'xoxb-test',
      '-interaction-url', `http://127.0.0.1:${botPort}/slack/interactions`, '-users', 'U0ALICE:alice',
    ], {})
    this.procs.push(p)
    this.fake = new Fake(`http://127.0.0.1:${port}`, p)
    await waitListening(this.fake.url, p)
    return this.fake
  }

  /** Starts a bot on port (fresh when omitted); channel '' starts it without ASKSLACK_CHANNEL. */
  async startBot(opts: { port?: number; channel?: string } = {}): Promise<{ url: string; proc: Proc }> {
    const port = opts.port ?? await freePort()
    const env: Record<string, string> = {
      SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: this.fake.apiURL,
      ASKSLACK_ADDR: `127.0.0.1:${port}`, ASKSLACK_LOG_LEVEL: 'debug',
      // The fake enforces no rate limits and the whole suite runs through one
      // bot: pacing to Slack's real limits would only slow it (as in the Go
      // end-to-end harness); the Go tests cover pacing with the limits on.
      ASKSLACK_SLACK_PACING: 'false',
    }
    const channel = opts.channel ?? CHANNEL
    if (channel) env.ASKSLACK_CHANNEL = channel
    const p = new Proc(`askslack:${port}`, this.bins.askslack, [], env)
    this.procs.push(p)
    const url = `http://127.0.0.1:${port}`
    await waitReady(url, p)
    return { url, proc: p }
  }

  logs(): string {
    return this.procs.map((p) => `--- ${p.name} ---\n${p.output}`).join('\n')
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.stop()))
  }
}

