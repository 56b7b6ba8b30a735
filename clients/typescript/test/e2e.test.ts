// End-to-end: the adapters against the real askslack binary and the
// project's fake Slack (both built from this repository).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  AskslackClient,
  askslackAnswerer,
  askslackOnQuestion,
  lateAnswers,
  respondentOf,
  TimedOutError,
  UserQuestionError,
  type AskQuestionRequest,
  type AskUserQuestionRequest,
  type SteeredMessage,
} from '../src/index.js'
import { binaries, Deployment, eventually, freePort, hasControls, type Binaries, type Fake } from './harness.js'

let bins: Binaries
let d: Deployment
let fake: Fake
let client: AskslackClient
let run = 0
const uid = (what: string) => `${what}-${process.pid}-${++run}`

before(async () => {
  bins = binaries()
  d = new Deployment(bins)
  const botPort = await freePort()
  fake = await d.startFake(botPort)
  const bot = await d.startBot({ port: botPort })
  client = new AskslackClient({ url: bot.url })
})

after(async () => {
  await d?.stop()
  bins?.cleanup()
})

/** Wraps a test body so a failure prints the processes' logs. */
function withLogs(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn()
    } catch (err) {
      console.error(d.logs())
      throw err
    }
  }
}

const deployQuestion = (id = 'q1') => ({
  id, question: 'Deploy to production now?', header: 'Deploy',
  options: [{ label: 'Yes', description: 'ship it' }, { label: 'No' }],
})

const noNext = async (): Promise<never> => { throw new Error('next() must not be called') }

describe('askslackAnswerer (seed 000 waterfall)', () => {
  test('a click in Slack answers the request', withLogs(async () => {
    const callId = uid('wf-answer')
    const answerer = askslackAnswerer(client)
    const request: AskUserQuestionRequest = {
      questions: [deployQuestion()],
      agent: { id: 'agent-1', sessionId: uid('sess') },
      wait: { callId },
    }
    const pending = answerer(request, noNext)
    const msg = await fake.waitPosted(callId)
    assert.equal(msg.channel, 'C0QUESTIONS')
    assert.ok(hasControls(msg))
    await fake.click(msg, 'Yes')
    const answer = await pending
    assert.deepEqual(answer, { answers: [{ id: 'q1', selected: ['Yes'] }] })
    const who = respondentOf(answer)
    assert.equal(who?.userId, 'U0ALICE')
    assert.equal(who?.userName, 'alice')
    assert.equal(who?.surface, 'slack')
    const st = await client.get(callId)
    assert.equal(st.state, 'settled')
  }))

  test('next() is taken when askslack has no route (NO_PROVIDER)', withLogs(async () => {
    const lonely = await d.startBot({ channel: '' }) // no ASKSLACK_CHANNEL: nothing routes an ask without a channel
    const c = new AskslackClient({ url: lonely.url })
    const callId = uid('wf-noprovider')
    const request = { questions: [deployQuestion()], agent: { id: 'agent-1' }, wait: { callId } }
    await assert.rejects(c.ask({ callId: uid('raw'), agent: { id: 'a' }, questions: [deployQuestion()] }), (e: unknown) => {
      assert.ok(e instanceof UserQuestionError)
      assert.equal(e.code, 'NO_PROVIDER')
      assert.equal(e.status, 503)
      return true
    })
    let nextCalls = 0
    const fromNext = { answers: [{ id: 'q1', selected: ['No'], custom: 'terminal said so' }] }
    const answer = await askslackAnswerer(c)(request, async () => { nextCalls++; return fromNext })
    assert.equal(nextCalls, 1)
    assert.equal(answer, fromNext)
    // Nothing reached Slack.
    assert.equal(await fake.message(callId), undefined)
  }))

  test('aborting the signal withdraws the Slack question', withLogs(async () => {
    const callId = uid('wf-abort')
    const ac = new AbortController()
    const pending = askslackAnswerer(client)(
      { questions: [deployQuestion()], agent: { id: 'agent-1' }, signal: ac.signal, wait: { callId } }, noNext)
    const msg = await fake.waitPosted(callId)
    ac.abort(new Error('the user interrupted the agent'))
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(e instanceof UserQuestionError)
      assert.equal(e.name, 'UserQuestionError')
      assert.equal(e.code, 'ASK_ABORTED')
      return true
    })
    const withdrawn = await eventually('the withdrawn message', async () => {
      const m = (await fake.messages()).find((x) => x.ts === msg.ts && x.channel === msg.channel)
      return m && JSON.stringify(m.blocks).includes('withdrew') ? m : undefined
    })
    assert.equal(hasControls(withdrawn), false)
    assert.equal((await client.get(callId)).state, 'aborted')
  }))
})

describe('askslackOnQuestion (seed 004)', () => {
  test('round trip: header-keyed answers, a typed "Other…" answer as note, attribution kept', withLogs(async () => {
    const onQuestion = askslackOnQuestion(client)
    const req: AskQuestionRequest = {
      toolCallId: uid('toolu'),
      principal: 'alice@example.com',
      sourceTaskId: uid('task'),
      questions: [{
        question: 'Which database should the service use?',
        header: 'Database',
        options: [
          { label: 'Postgres', description: 'relational, managed', preview: 'CREATE TABLE users (id bigint primary key);' },
          { label: 'SQLite', description: 'embedded' },
        ],
      }],
    }
    const first = onQuestion(req)
    const msg = await fake.waitPosted(req.toolCallId)
    await fake.click(msg, 'Postgres')
    assert.deepEqual(await first, { answers: [{ header: 'Database', selected: ['Postgres'] }] })
    const st = await client.get(req.toolCallId)
    assert.equal(st.agent.principal, 'alice@example.com')
    assert.equal(st.agent.sourceTaskId, req.sourceTaskId)
    assert.equal(st.agent.sessionId, req.sourceTaskId)
    assert.equal(st.questions[0]!.id, 'q0')
    assert.equal(st.questions[0]!.options![0]!.preview, 'CREATE TABLE users (id bigint primary key);')

    // A typed answer ("Other…" modal) comes back as the note.
    const again: AskQuestionRequest = { ...req, toolCallId: uid('toolu') }
    const second = onQuestion(again)
    const msg2 = await fake.waitPosted(again.toolCallId)
    await fake.click(msg2, 'Other…')
    await fake.submitText('CockroachDB, we already run it')
    assert.deepEqual(await second, { answers: [{ header: 'Database', selected: [], note: 'CockroachDB, we already run it' }] })
  }))

  test('the signal withdraws the question', withLogs(async () => {
    const req: AskQuestionRequest = { toolCallId: uid('toolu'), questions: [{ question: 'Proceed?', header: 'Go', options: [{ label: 'Yes', description: '' }, { label: 'No', description: '' }] }] }
    const ac = new AbortController()
    const p = askslackOnQuestion(client)(req, ac.signal)
    await fake.waitPosted(req.toolCallId)
    ac.abort()
    await assert.rejects(p, { code: 'ASK_ABORTED' })
    assert.equal((await client.get(req.toolCallId)).state, 'aborted')
  }))
})

describe('late answers', () => {
  test('a timed ask goes pending; an answer through the API is queued, read and acknowledged', withLogs(async () => {
    const sessionId = uid('sess')
    const callId = uid('late-api')
    const answerer = askslackAnswerer(client, { timeoutMs: 1500 })
    const t0 = Date.now()
    const err = await answerer(
      { questions: [deployQuestion()], agent: { id: 'agent-1', sessionId }, wait: { callId, timed: true } }, noNext,
    ).then(() => assert.fail('resolved'), (e: unknown) => e)
    assert.ok(err instanceof TimedOutError, String(err))
    assert.equal(err.code, 'ASK_TIMED_OUT')
    assert.deepEqual(err.result, { pending: true, callId })
    assert.ok(Date.now() - t0 >= 1400, 'the window lasted about timeoutMs')
    assert.equal((await client.get(callId)).state, 'continued')
    assert.deepEqual((await client.projection(sessionId)).active.map((q) => [q.callId, q.state]), [[callId, 'continued']])

    const late = lateAnswers(client, sessionId, { waitMs: 200 })
    assert.deepEqual(await late.read(0), [])
    const res = await client.answer(callId, { answers: [{ id: 'q1', selected: ['No'] }], respondent: { userName: 'ops-console' } })
    assert.equal(res.continued, true)
    assert.equal(res.messageId, `reply:${callId}`)
    // A second late answer while one waits: REPLY_QUEUED.
    await assert.rejects(client.answer(callId, { answers: [{ id: 'q1', selected: ['Yes'] }] }), { code: 'REPLY_QUEUED', status: 409 })

    const [msg, ...rest] = await late.read()
    assert.equal(rest.length, 0)
    assert.equal(msg!.id, `reply:${callId}`)
    assert.deepEqual(msg!.source, { kind: 'user-question', callId })
    assert.deepEqual(msg!.answers, [{ id: 'q1', selected: ['No'] }])
    assert.equal(msg!.respondent.surface, 'api')
    assert.match(msg!.text, /No/)
    // Not acknowledged yet: still continued, still waiting.
    assert.equal((await client.get(callId)).state, 'continued')
    assert.equal((await late.read(0)).length, 1)
    const acked = await late.ack(msg!)
    assert.equal(acked.state, 'settled')
    assert.equal((await client.get(callId)).state, 'settled')
    assert.deepEqual(await late.read(0), [])
    const proj = await client.projection(sessionId)
    assert.deepEqual(proj.active, [])
    assert.deepEqual(proj.settled, [{ callId, answers: [{ id: 'q1', selected: ['No'] }] }])
  }))

  test('a loop that takes one late answer and breaks has consumed it: the next read never delivers it again', withLogs(async () => {
    const sessionId = uid('sess')
    const callId = uid('late-break')
    assert.deepEqual(await client.ask({ callId, agent: { id: 'agent-1', sessionId }, questions: [deployQuestion()], timeoutMs: 500 }), { pending: true, callId })
    await client.answer(callId, { answers: [{ id: 'q1', selected: ['Yes'] }], respondent: { userName: 'ops-console' } })
    const took: string[] = []
    for await (const msg of lateAnswers(client, sessionId, { waitMs: 5_000 })) {
      took.push(msg.callId)
      break
    }
    assert.deepEqual(took, [callId])
    assert.equal((await client.get(callId)).state, 'settled', 'the question is settled: the answer reached the agent')
    assert.deepEqual(await lateAnswers(client, sessionId).read(0), [], 'a second loop gets nothing')
  }))

  test('a late click in Slack arrives through the iterator, acknowledged after processing', withLogs(async () => {
    const sessionId = uid('sess')
    const callId = uid('late-click')
    const res = await client.ask({ callId, agent: { id: 'agent-1', sessionId }, questions: [deployQuestion()], timeoutMs: 1000 })
    assert.deepEqual(res, { pending: true, callId })
    const msg = await fake.waitPosted(callId)
    await eventually('the continued message', async () => {
      const m = (await fake.messages()).find((x) => x.ts === msg.ts)
      return m && m.updated > 0 && hasControls(m) ? m : undefined
    })
    const ac = new AbortController()
    const seen: SteeredMessage[] = []
    const reading = (async () => {
      for await (const m of lateAnswers(client, sessionId, { waitMs: 5_000, signal: ac.signal })) {
        seen.push(m)
        assert.equal((await client.get(m.callId)).state, 'continued') // not acknowledged while processing
        if (seen.length === 1) {
          // Let the iterator come back for the next message (acknowledging this one), then stop.
          setTimeout(() => ac.abort(), 300)
        }
      }
    })()
    await fake.click(msg, 'Yes')
    await reading
    assert.equal(seen.length, 1)
    assert.equal(seen[0]!.callId, callId)
    assert.deepEqual(seen[0]!.answers, [{ id: 'q1', selected: ['Yes'] }])
    assert.equal(seen[0]!.respondent.userId, 'U0ALICE')
    assert.equal((await client.get(callId)).state, 'settled')
    assert.deepEqual(await client.messages(sessionId), [])
  }))
})
