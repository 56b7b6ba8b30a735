// The Claude Agent SDK adapter against the real `@anthropic-ai/claude-agent-sdk`
// and the Claude Code it drives (its own native build), talking to the
// scripted Messages API of the repository's real-agent tests: the Go test
// TestClaudeAgentSDK (node_test.go) starts one scripted model per case and
// names them in ASKSLACK_CLAUDE_MODELS; without it these tests skip.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk'
import { lateAnswers } from '../src/index.js'
import { callIdFor } from '../src/sdk/common.js'
import { canUseTool } from '../src/sdk/claude-agent-sdk.js'
import { eventually, hasControls } from './harness.js'
import { answerWhenPosted, startWorld, stopWorld, uid, withLogs, type Reply, type World } from './sdkharness.js'

/** The scripted models by case, from the Go test. */
const models: Record<string, string> = JSON.parse(process.env.ASKSLACK_CLAUDE_MODELS ?? '{}')
const skip = Object.keys(models).length === 0 ? 'run by the Go test TestClaudeAgentSDK, which starts the scripted Messages API' : false

let w: World
before(async () => { if (!skip) w = await startWorld() })
after(async () => { await stopWorld(w) })

/** A home and a project folder of the test's own, Claude Code's onboarding done. */
function sandbox(): { home: string; cwd: string } {
  const home = mkdtempSync(join(tmpdir(), 'askslack-claude-home-'))
  const cwd = mkdtempSync(join(tmpdir(), 'askslack-claude-proj-'))
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, autoUpdates: false,
    projects: { [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }))
  return { home, cwd }
}

/** Runs one prompt to its result through the real SDK and CLI. */
async function runClaude(model: string, prompt: string, opts: { canUseTool: ReturnType<typeof canUseTool>; resume?: string; box: { home: string; cwd: string } }) {
  const msgs: SDKMessage[] = []
  const q = query({ prompt, options: {
    cwd: opts.box.cwd, permissionMode: 'default', canUseTool: opts.canUseTool, settingSources: [],
    ...(opts.resume ? { resume: opts.resume } : {}),
    env: { PATH: process.env.PATH ?? '', HOME: opts.box.home, ANTHROPIC_BASE_URL: model, ANTHROPIC_API_KEY: 'sk-ant-scripted-0123456789',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
  } })
  for await (const m of q) msgs.push(m)
  const result = msgs.find((m) => m.type === 'result') as { result?: string; session_id: string } | undefined
  assert.ok(result, 'the query ends with a result: ' + JSON.stringify(msgs.map((m) => m.type)))
  return { text: result.result ?? '', sessionId: result.session_id, msgs }
}

/** The asks already answered, so each test answers only its own. */
const seen = new Set<string>()

/**
 * Answers the next question Claude asks (one whose callId the adapter made
 * from a tool-use id: `claude-toolu_…`) as it shows in Slack. A blocking
 * ask is not in the session's projection, so it is found in Slack itself.
 */
async function answerNext(reply: Reply): Promise<string> {
  const m = await eventually('a question from Claude in Slack', async () =>
    (await w.fake.messages()).find((m) => {
      const id = /ask\/(claude-[^/"]+)\//.exec(JSON.stringify(m.blocks ?? null))?.[1]
      return id && !seen.has(id) && hasControls(m) ? m : undefined
    }), 60_000)
  const callId = /ask\/(claude-[^/"]+)\//.exec(JSON.stringify(m.blocks))![1]!
  seen.add(callId)
  await answerWhenPosted(w.fake, callId, reply)
  return callId
}

describe('Claude Agent SDK: canUseTool', { skip }, () => {
  test('Allow runs the tool', withLogs(() => w, async () => {
    const sessionId = uid('claude')
    const answered = answerNext({ click: 'Allow' })
    const out = await runClaude(models.allow!, 'say hi', { canUseTool: canUseTool({ client: w.client, sessionId }), box: sandbox() })
    await answered
    assert.match(out.text, /askslack-ran/, 'the Bash output reached the model')
  }))

  test('Edit & allow runs the command as the person edited it', withLogs(() => w, async () => {
    const sessionId = uid('claude')
    const box = sandbox()
    const answered = answerNext({ edit: { command: 'touch askslack-edited && ls' } })
    const out = await runClaude(models.edit!, 'make a file', { canUseTool: canUseTool({ client: w.client, sessionId }), box })
    await answered
    assert.ok(existsSync(join(box.cwd, 'askslack-edited')), 'the edited command ran')
    assert.ok(!existsSync(join(box.cwd, 'askslack-ran')), 'the command as asked did not')
    assert.match(out.text, /askslack-edited/)
  }))

  test('"Other…" denies with the typed message Claude reads', withLogs(() => w, async () => {
    const sessionId = uid('claude')
    const answered = answerNext({ other: 'never delete build, clean it with make clean' })
    const out = await runClaude(models.deny!, 'clean up', { canUseTool: canUseTool({ client: w.client, sessionId }), box: sandbox() })
    await answered
    assert.match(out.text, /never delete build, clean it with make clean/)
  }))

  for (const tc of [
    { name: 'AskUserQuestion answered with a label', reply: { click: 'SQLite' }, model: 'question', want: /SQLite/ },
    { name: 'AskUserQuestion answered with "Other…"', reply: { other: 'DuckDB, embedded' }, model: 'question2', want: /DuckDB, embedded/ },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const sessionId = uid('claude')
      const answered = answerNext(tc.reply)
      const out = await runClaude(models[tc.model]!, 'pick a database', { canUseTool: canUseTool({ client: w.client, sessionId }), box: sandbox() })
      await answered
      assert.match(out.text, tc.want, 'the answer reached the model in the tool result')
    }))
  }

  /** A timed wait that closes on Claude's Bash call; alice allows it late in Slack. */
  async function deniedThenAllowedLate(model: string, sessionId: string, box: { home: string; cwd: string }) {
    const first = await runClaude(model, 'deploy', { canUseTool: canUseTool({ client: w.client, sessionId, timeoutMs: 1000 }), box })
    assert.match(first.text, /nobody has decided in Slack yet/, 'Claude was told it was not run')
    assert.ok(!existsSync(join(box.cwd, 'deployed')))
    const [ask, ...more] = (await w.client.projection(sessionId)).active
    assert.ok(ask, 'the ask is still open for a late answer')
    assert.deepEqual(more, [])
    assert.equal(ask.callId.startsWith(callIdFor('claude', '')), true)
    seen.add(ask.callId)
    await answerWhenPosted(w.fake, ask.callId, { click: 'Allow' })
    return { first, ask }
  }

  test('a timed wait that closes denies; the late Allow resumes the session, whose repeat of the call runs without a second ask', withLogs(() => w, async () => {
    const sessionId = uid('claude')
    const box = sandbox()
    const { first, ask } = await deniedThenAllowedLate(models.late!, sessionId, box)
    // The README's loop: take the late answer, resume with it, stop.
    let resumed: Awaited<ReturnType<typeof runClaude>> | undefined
    for await (const msg of lateAnswers(w.client, sessionId, { waitMs: 5_000 })) {
      assert.match(msg.text, /Allow/)
      resumed = await runClaude(models.late!, msg.text, { canUseTool: canUseTool({ client: w.client, sessionId, timeoutMs: 1000, late: msg }), resume: first.sessionId, box })
      break
    }
    assert.ok(resumed)
    assert.equal(resumed.sessionId, first.sessionId, 'the same Claude session went on')
    assert.ok(existsSync(join(box.cwd, 'deployed')), 'the allowed command ran in the resumed session')
    assert.match(resumed.text, /resumed/)
    assert.deepEqual((await w.client.projection(sessionId)).active, [], 'nobody was asked a second time')
    assert.equal((await w.client.get(ask.callId)).state, 'settled', 'the late answer was acknowledged when the loop stopped')
    assert.deepEqual(await lateAnswers(w.client, sessionId).read(0), [], 'a second read does not deliver it again')
  }))

  test('after a late Allow, a different call in the resumed session still asks', withLogs(() => w, async () => {
    const sessionId = uid('claude')
    const box = sandbox()
    const { first } = await deniedThenAllowedLate(models.lateother!, sessionId, box)
    let resumed: Awaited<ReturnType<typeof runClaude>> | undefined
    for await (const msg of lateAnswers(w.client, sessionId, { waitMs: 5_000 })) {
      const asked = answerNext({ click: 'Deny' })
      resumed = await runClaude(models.lateother!, msg.text, { canUseTool: canUseTool({ client: w.client, sessionId, late: msg }), resume: first.sessionId, box })
      await asked
      break
    }
    assert.ok(resumed)
    assert.match(resumed.text, /Denied by alice/, 'the different call was asked about, and denied')
    assert.ok(!existsSync(join(box.cwd, 'deployed-prod')))
    assert.ok(!existsSync(join(box.cwd, 'deployed')))
  }))
})
