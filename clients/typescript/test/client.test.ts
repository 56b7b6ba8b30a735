// Unit tests of the client and adapters over a scripted fetch (no network).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  AskslackClient,
  askslackAnswerer,
  askslackOnQuestion,
  isPendingAnswer,
  lateAnswers,
  respondentOf,
  TimedOutError,
  UserQuestionError,
  type FetchLike,
  type SteeredMessage,
} from '../src/index.js'

interface Call { method: string; url: string; body?: unknown; headers: Record<string, string> }
type Handler = (c: Call, signal?: AbortSignal) => Promise<[number, unknown]> | [number, unknown]

function scripted(handler: Handler): { fetch: FetchLike; calls: Call[] } {
  const calls: Call[] = []
  const fetch: FetchLike = async (url, init) => {
    const c: Call = { method: init.method, url, headers: init.headers, ...(init.body ? { body: JSON.parse(init.body) } : {}) }
    calls.push(c)
    const [status, body] = await handler(c, init.signal)
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    return { status, headers: { get: () => null }, text: async () => text }
  }
  return { fetch, calls }
}

const respondent = { userId: 'U0ALICE', userName: 'alice', at: '2026-01-01T00:00:00Z', surface: 'slack' }
const question = { id: 'q1', question: 'Deploy?', options: [{ label: 'Yes' }, { label: 'No' }] }

/** Resolves when signal aborts, rejecting like fetch does. */
const hang = (signal?: AbortSignal) => new Promise<never>((_, rej) => {
  signal?.addEventListener('abort', () => rej(signal.reason), { once: true })
})

test('requests carry the token and JSON; API errors become UserQuestionError', async () => {
  const { fetch, calls } = scripted(() => [400, { error: { code: 'BAD_TIMEOUT', message: 'timeoutMs must be positive' } }])
  const c = new AskslackClient({ url: 'http://bot/', token: 'tok', fetch })
  await assert.rejects(c.ask({ callId: 'c1', agent: { id: 'a' }, questions: [question], timeoutMs: -1 }), (e: unknown) => {
    assert.ok(e instanceof UserQuestionError)
    assert.equal(e.name, 'UserQuestionError')
    assert.equal(e.code, 'BAD_TIMEOUT')
    assert.equal(e.status, 400)
    assert.equal(e.message, 'timeoutMs must be positive')
    return true
  })
  assert.equal(calls.length, 1)
  assert.equal(calls[0]!.method, 'POST')
  assert.equal(calls[0]!.url, 'http://bot/v1/asks')
  assert.equal(calls[0]!.headers.authorization, 'Bearer tok')
  assert.equal(calls[0]!.headers['content-type'], 'application/json')
})

test('paths are escaped and waitMs is passed', async () => {
  const { fetch, calls } = scripted(() => [200, { messages: [] }])
  const c = new AskslackClient({ url: 'http://bot', fetch })
  assert.deepEqual(await c.messages('sess/1', 1500), [])
  await c.get('call 1', { waitMs: 10 })
  await c.ack('s', 'reply:c1')
  assert.deepEqual(calls.map((x) => `${x.method} ${x.url}`), [
    'GET http://bot/v1/sessions/sess%2F1/messages?waitMs=1500',
    'GET http://bot/v1/asks/call%201?waitMs=10',
    'POST http://bot/v1/sessions/s/messages/reply%3Ac1/ack',
  ])
  assert.equal(calls[0]!.headers.authorization, undefined)
})

test('ask re-attaches with the same request while the bot is UNAVAILABLE', async () => {
  let n = 0
  const { fetch, calls } = scripted(() => ++n < 3
    ? [503, { error: { code: 'UNAVAILABLE', message: 'shutting down' } }]
    : [200, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent }])
  const c = new AskslackClient({ url: 'http://bot', fetch })
  const res = await c.ask({ callId: 'c1', agent: { id: 'a' }, questions: [question] })
  assert.deepEqual(res, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent })
  assert.equal(calls.length, 3)
  assert.deepEqual(calls[2]!.body, calls[0]!.body)
  // With re-attaching off, the first failure stands; a non-JSON 502 reads as UNAVAILABLE.
  const once = new AskslackClient({ url: 'http://bot', fetch: scripted(() => [502, 'Bad Gateway']).fetch, reattachMs: 0 })
  await assert.rejects(once.ask({ callId: 'c2', agent: { id: 'a' }, questions: [question] }), { code: 'UNAVAILABLE' })
})

test('a wait attached for long and then cut re-attaches (its window counts from the failure)', async (t) => {
  let now = 1_000_000
  t.mock.method(Date, 'now', () => now)
  let n = 0
  const { fetch, calls } = scripted(() => {
    if (++n === 1) {
      now += 10 * 60_000 // ten minutes attached, then a proxy cuts it
      return [504, '<html>Gateway Timeout</html>']
    }
    return [200, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent }]
  })
  const c = new AskslackClient({ url: 'http://bot', fetch, reattachMs: 60_000 })
  const res = await c.ask({ callId: 'c1', agent: { id: 'a' }, questions: [question] })
  assert.deepEqual(res, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent })
  assert.equal(calls.length, 2)
})

test('ask re-attaches on a reset connection and 502/503/504; a 500 and NO_PROVIDER are final', async () => {
  const faults: Array<() => [number, unknown]> = [
    () => { throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) },
    () => [502, '<html>Bad Gateway</html>'],
    () => [504, '<html>Gateway Timeout</html>'],
    () => [503, 'Service Unavailable'],
  ]
  let n = 0
  const { fetch, calls } = scripted(() => n < faults.length
    ? faults[n++]!()
    : [200, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent }])
  const c = new AskslackClient({ url: 'http://bot', fetch })
  const res = await c.ask({ callId: 'c1', agent: { id: 'a' }, questions: [question] })
  assert.deepEqual(res, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent })
  assert.equal(calls.length, 5)
  for (const x of calls) assert.deepEqual(x.body, calls[0]!.body)
  for (const [status, body, code] of [[500, 'oops', 'INTERNAL'], [503, { error: { code: 'NO_PROVIDER', message: 'no human' } }, 'NO_PROVIDER']] as const) {
    const once = scripted(() => [status, body])
    const c2 = new AskslackClient({ url: 'http://bot', fetch: once.fetch })
    await assert.rejects(c2.ask({ callId: 'c2', agent: { id: 'a' }, questions: [question] }), { code })
    assert.equal(once.calls.length, 1, `${status} ${code} must not be retried`)
  }
})

test('start sends Prefer: respond-async; get passes the seen version', async () => {
  const { fetch, calls } = scripted(() => [202, { callId: 'c1', state: 'open', version: 1 }])
  const c = new AskslackClient({ url: 'http://bot', fetch })
  const st = await c.start({ callId: 'c1', agent: { id: 'a' }, questions: [question] })
  assert.equal(st.state, 'open')
  assert.equal(calls[0]!.headers.prefer, 'respond-async')
  await c.get('c1', { waitMs: 1000, version: 1 })
  assert.equal(calls[1]!.url, 'http://bot/v1/asks/c1?waitMs=1000&version=1')
})

test('aborting an ask aborts the request, withdraws it with DELETE and rejects ASK_ABORTED', async () => {
  const { fetch, calls } = scripted((c, signal) => c.method === 'POST' ? hang(signal) : [200, { callId: 'c1', state: 'aborted' }])
  const client = new AskslackClient({ url: 'http://bot', fetch })
  const ac = new AbortController()
  const p = client.ask({ callId: 'c1', agent: { id: 'a' }, questions: [question] }, { signal: ac.signal })
  setTimeout(() => ac.abort(new Error('user pressed Esc')), 20)
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof UserQuestionError)
    assert.equal(e.code, 'ASK_ABORTED')
    assert.equal((e.cause as Error).message, 'user pressed Esc')
    return true
  })
  assert.deepEqual(calls.map((x) => `${x.method} ${x.url}`), ['POST http://bot/v1/asks', 'DELETE http://bot/v1/asks/c1'])
  // Already aborted: nothing is posted.
  const before = calls.length
  await assert.rejects(client.ask({ callId: 'c2', agent: { id: 'a' }, questions: [question] }, { signal: AbortSignal.abort() }), { code: 'ASK_ABORTED' })
  assert.equal(calls.length, before)
})

test('answerer: answers with a hidden respondent, falls through on NO_PROVIDER only', async () => {
  let reply: [number, unknown] = [200, { answers: [{ id: 'q1', selected: [], custom: 'wait' }], respondent }]
  const { fetch, calls } = scripted(() => reply)
  const answerer = askslackAnswerer(new AskslackClient({ url: 'http://bot', fetch }), { agent: { id: 'dflt', principal: 'p' }, channel: 'C0X' })
  const next = async () => ({ answers: [{ id: 'q1', selected: ['No'] }] })
  const got = await answerer({ questions: [question], agent: { id: 'agent-1', sessionId: 's1' }, wait: { callId: 'call-9' } }, next)
  assert.deepEqual(got, { answers: [{ id: 'q1', selected: [], custom: 'wait' }] })
  assert.deepEqual(respondentOf(got), respondent)
  assert.deepEqual(Object.keys(got), ['answers'])
  assert.deepEqual(calls[0]!.body, {
    callId: 'call-9', agent: { id: 'agent-1', sessionId: 's1', principal: 'p' }, questions: [question], channel: 'C0X',
  })
  reply = [503, { error: { code: 'NO_PROVIDER', message: 'no human available; proceed with your best judgment' } }]
  assert.deepEqual(await answerer({ questions: [question] }, next), { answers: [{ id: 'q1', selected: ['No'] }] })
  reply = [403, { error: { code: 'DELEGATED_CALLER', message: 'owned' } }]
  await assert.rejects(answerer({ questions: [question] }, next), { code: 'DELEGATED_CALLER' })
})

test('answerer: a timed request whose window closes rejects ASK_TIMED_OUT, or returns the pending result', async () => {
  const { fetch, calls } = scripted(() => [200, { pending: true, callId: 'call-t' }])
  const client = new AskslackClient({ url: 'http://bot', fetch })
  const timed = { questions: [question], wait: { callId: 'call-t', timed: true } }
  const next = async () => { throw new Error('next must not run') }
  await assert.rejects(askslackAnswerer(client, { timeoutMs: 1000 })(timed, next), (e: unknown) => {
    assert.ok(e instanceof TimedOutError)
    assert.equal(e.code, 'ASK_TIMED_OUT')
    assert.deepEqual(e.result, { pending: true, callId: 'call-t' })
    return true
  })
  assert.equal((calls[0]!.body as { timeoutMs?: number }).timeoutMs, 1000)
  const res = await askslackAnswerer(client, { timeoutMs: () => 2000, onPending: 'return' })(timed, next)
  assert.ok(isPendingAnswer(res))
  assert.equal((calls[1]!.body as { timeoutMs?: number }).timeoutMs, 2000)
  // Not timed: no timeoutMs is sent even when configured.
  await askslackAnswerer(client, { timeoutMs: 1000, onPending: 'return' })({ questions: [question] }, next)
  assert.equal((calls[2]!.body as { timeoutMs?: number }).timeoutMs, undefined)
})

test('OnQuestion: fallback on NO_PROVIDER, errors otherwise', async () => {
  const { fetch } = scripted(() => [503, { error: { code: 'NO_PROVIDER', message: 'no human' } }])
  const client = new AskslackClient({ url: 'http://bot', fetch })
  const req = { toolCallId: 't1', questions: [{ question: 'Q?', header: 'H', options: [{ label: 'A', description: '' }, { label: 'B', description: '' }] }] }
  await assert.rejects(askslackOnQuestion(client)(req), { code: 'NO_PROVIDER' })
  const fallback = async () => ({ answers: [{ header: 'H', selected: ['A'] }] })
  assert.deepEqual(await askslackOnQuestion(client, { fallback })(req), { answers: [{ header: 'H', selected: ['A'] }] })
})

test('lateAnswers: acknowledges a message once the body is done with it, leaving the loop included', async () => {
  const msg = (id: string): SteeredMessage => ({
    id: `reply:${id}`, callId: id, source: { kind: 'user-question', callId: id },
    answers: [{ id: 'q1', selected: ['Yes'] }], respondent, text: 'The user answered', queuedAt: respondent.at,
  })
  const queue = [msg('c1'), msg('c2'), msg('c3'), msg('c4')]
  const { fetch, calls } = scripted((c) => {
    if (c.method === 'POST') {
      const id = decodeURIComponent(c.url.split('/').at(-2)!)
      const i = queue.findIndex((m) => m.id === id)
      if (i >= 0) queue.splice(i, 1)
      return [200, { acked: true, callId: id.slice(6), state: 'settled' }]
    }
    return [200, { messages: queue }]
  })
  const client = new AskslackClient({ url: 'http://bot', fetch })
  const ac = new AbortController()
  const seen: string[] = []
  for await (const m of lateAnswers(client, 's1', { waitMs: 10, signal: ac.signal })) {
    seen.push(m.id)
    // Nothing acknowledged while the body runs.
    assert.equal(calls.filter((c) => c.method === 'POST' && c.url.includes(m.id.replace(':', '%3A'))).length, 0)
    if (m.id === 'reply:c2') break
  }
  assert.deepEqual(seen, ['reply:c1', 'reply:c2'])
  // c1 was acknowledged when the loop came back, c2 when the loop broke out
  // with it (the next read must not deliver it again); c3, never received, waits.
  assert.deepEqual(queue.map((m) => m.id), ['reply:c3', 'reply:c4'])
  // A body that throws has had the message too: the iterator cannot tell a throw from a break.
  await assert.rejects((async () => {
    for await (const m of lateAnswers(client, 's1', { waitMs: 10 })) throw new Error(`failed on ${m.id}`)
  })(), /failed on reply:c3/)
  assert.deepEqual(queue.map((m) => m.id), ['reply:c4'])
  // read() and ack() leave the acknowledgement to the caller.
  const late = lateAnswers(client, 's1', { waitMs: 0 })
  const [m4] = await late.read()
  assert.deepEqual(queue.map((m) => m.id), ['reply:c4'])
  await late.ack(m4!)
  assert.deepEqual(await late.read(0), [])
})
