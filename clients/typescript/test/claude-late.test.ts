// The Claude Agent SDK adapter's late path, driven as the SDK drives it
// (canUseTool called with a tool, its input and a tool-use id) against the
// real askslack binary and the fake Slack: a late Allow lets the resumed
// session's repeat of the call it allowed run once without a second ask; any
// other call still asks. claude-agent-sdk.test.ts checks the same with the
// real SDK and Claude Code (run by the Go test TestClaudeAgentSDK).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { lateAnswers, type SteeredMessage } from '../src/index.js'
import { canUseTool, permissionCallId, type ClaudePermissionResult } from '../src/sdk/claude-agent-sdk.js'
import { startWorld, stopWorld, uid, withLogs, type World } from './sdkharness.js'

let w: World
before(async () => { w = await startWorld() })
after(async () => { await stopWorld(w) })

const deploy = { command: 'make deploy', description: 'Deploy' }
const call = (fn: ReturnType<typeof canUseTool>, toolUseID: string, input: Record<string, unknown> = deploy): Promise<ClaudePermissionResult> =>
  fn('Bash', input, { signal: new AbortController().signal, toolUseID })

/** A permission asked with a 300 ms window that closes, answered late through the API, read back as the session's late answer. */
async function lateAnswer(sessionId: string, answer: { selected: string[]; edited?: Record<string, string> }): Promise<SteeredMessage> {
  const first = await call(canUseTool({ client: w.client, sessionId, timeoutMs: 300 }), `toolu_first_${sessionId}`)
  const callId = permissionCallId(`toolu_first_${sessionId}`, 'Bash', deploy)
  assert.equal(first.behavior, 'deny', 'a wait that closed never allows')
  assert.match((first as { message: string }).message, new RegExp(`ask ${callId.replaceAll('.', '\\.')}`), 'Claude is told which ask')
  await w.client.answer(callId, { answers: [{ id: 'permission', ...answer }], respondent: { userName: 'alice' } })
  for await (const msg of lateAnswers(w.client, sessionId, { waitMs: 5_000 })) return msg
  throw new Error('no late answer')
}

/** The session's asks that are still open: each is a question a person was asked. */
const openAsks = async (sessionId: string) => (await w.client.projection(sessionId)).active.map((q) => q.callId)

describe('Claude Agent SDK: a late Allow and the resumed session', () => {
  test('the repeat of the allowed call runs once without a second ask; the next repeat and a different call ask', withLogs(() => w, async () => {
    const sessionId = uid('claude-late')
    const msg = await lateAnswer(sessionId, { selected: ['Allow'] })
    assert.match(msg.callId, /^claude-toolu_first_[^.]+\.[0-9a-f]{32}$/, 'the answer names the call it allowed')
    const resumed = canUseTool({ client: w.client, sessionId, timeoutMs: 300, late: msg })
    // The same tool with the same input (its keys in another order), under a new tool-use id.
    const again = await call(resumed, 'toolu_again', { description: 'Deploy', command: 'make deploy' })
    assert.deepEqual(again, { behavior: 'allow', toolUseID: 'toolu_again', updatedInput: { description: 'Deploy', command: 'make deploy' } })
    assert.deepEqual(await openAsks(sessionId), [], 'no second question in Slack')
    // Once: a third run of it asks.
    assert.equal((await call(resumed, 'toolu_third')).behavior, 'deny')
    // A different call asks too.
    const other = await call(resumed, 'toolu_other', { command: 'make deploy-prod', description: 'Deploy' })
    assert.equal(other.behavior, 'deny')
    assert.deepEqual((await openAsks(sessionId)).sort(), [
      permissionCallId('toolu_third', 'Bash', deploy), permissionCallId('toolu_other', 'Bash', { command: 'make deploy-prod', description: 'Deploy' }),
    ].sort())
  }))

  test('an edited late Allow runs the repeat with the edits', withLogs(() => w, async () => {
    const sessionId = uid('claude-late')
    const msg = await lateAnswer(sessionId, { selected: ['Allow'], edited: { command: 'make deploy ENV=staging' } })
    const again = await call(canUseTool({ client: w.client, sessionId, timeoutMs: 300, late: [msg] }), 'toolu_again')
    assert.deepEqual(again, { behavior: 'allow', toolUseID: 'toolu_again', updatedInput: { command: 'make deploy ENV=staging', description: 'Deploy' } })
  }))

  test('a late Deny allows nothing: the repeat asks again', withLogs(() => w, async () => {
    const sessionId = uid('claude-late')
    const msg = await lateAnswer(sessionId, { selected: ['Deny'] })
    const again = await call(canUseTool({ client: w.client, sessionId, timeoutMs: 300, late: msg }), 'toolu_again')
    assert.equal(again.behavior, 'deny')
    assert.deepEqual(await openAsks(sessionId), [permissionCallId('toolu_again', 'Bash', deploy)])
  }))
})
