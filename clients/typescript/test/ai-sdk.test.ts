// The AI SDK adapter against the real `ai` package (its mock language model
// from `ai/test`), the real askslack binary and the fake Slack.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { generateText, jsonSchema, tool, type ModelMessage } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { lateAnswers } from '../src/index.js'
import { approvalCallId, approvalResponses, askPerson, lateApprovalResponse } from '../src/sdk/ai-sdk.js'
import { callIdFor } from '../src/sdk/common.js'
import { answerWhenPosted, startWorld, stopWorld, uid, withLogs, type World } from './sdkharness.js'

let w: World
before(async () => { w = await startWorld() })
after(async () => { await stopWorld(w) })

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** A scripted model: a tool call, then text; it keeps every prompt it got. */
function scripted(toolName: string, input: unknown, toolCallId: string) {
  const prompts: unknown[] = []
  let turn = 0
  const model = new MockLanguageModelV4({
    doGenerate: async (opts: { prompt: unknown }) => {
      prompts.push(opts.prompt)
      turn++
      if (turn === 1) {
        return { content: [{ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] }
      }
      return { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: undefined }, usage, warnings: [] }
    },
  })
  return { model, prompts }
}

/** A command tool that needs approval, counting its runs. */
function commandTool() {
  const runs: string[] = []
  const t = tool({
    description: 'Run a shell command',
    inputSchema: jsonSchema<{ command: string }>({ type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }),
    needsApproval: true,
    execute: async ({ command }) => { runs.push(command); return `ran ${command}` },
  })
  return { t, runs }
}

describe('AI SDK: tool approvals', () => {
  for (const tc of [
    { name: 'Allow approves and the tool runs', reply: { click: 'Allow' }, approved: true, reason: /Approved by alice/ },
    { name: 'Deny denies and the tool does not run', reply: { click: 'Deny' }, approved: false, reason: /Denied by alice/ },
    { name: '"Other…" denies with the typed reason the model reads', reply: { other: 'use ls -la, not rm' }, approved: false, reason: /use ls -la, not rm/ },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const toolCallId = uid('call')
      const { model, prompts } = scripted('runCommand', { command: 'rm -rf build' }, toolCallId)
      const { t, runs } = commandTool()
      const messages: ModelMessage[] = [{ role: 'user', content: 'clean the build' }]
      const first = await generateText({ model, tools: { runCommand: t }, messages })
      messages.push(...first.response.messages)
      const answered = answerWhenPosted(w.fake, approvalCallId(toolCallId), tc.reply)
      const got = await approvalResponses(first, { client: w.client, sessionId: uid('thread') })
      await answered
      assert.equal(got.responses.length, 1)
      assert.equal(got.pending.length, 0)
      assert.equal(got.responses[0]!.approved, tc.approved)
      assert.match(got.responses[0]!.reason ?? '', tc.reason)
      messages.push({ role: 'tool', content: got.responses })
      const second = await generateText({ model, tools: { runCommand: t }, messages })
      assert.equal(second.text, 'done')
      assert.deepEqual(runs, tc.approved ? ['rm -rf build'] : [])
      if (!tc.approved) assert.match(JSON.stringify(prompts.at(-1)), tc.reason, 'the model is told why')
    }))
  }

  test('a timed wait that closes is not an approval; the late answer resumes the run', withLogs(() => w, async () => {
    const toolCallId = uid('call')
    const sessionId = uid('thread')
    const { model } = scripted('runCommand', { command: 'make deploy' }, toolCallId)
    const { t, runs } = commandTool()
    const messages: ModelMessage[] = [{ role: 'user', content: 'deploy' }]
    const first = await generateText({ model, tools: { runCommand: t }, messages })
    messages.push(...first.response.messages)
    const got = await approvalResponses(first, { client: w.client, sessionId, timeoutMs: 800 })
    assert.deepEqual(got.responses, [], 'nothing decided')
    assert.equal(got.pending.length, 1)
    assert.equal(runs.length, 0)
    // Tomorrow: alice allows it in Slack; the late answer completes the run.
    await answerWhenPosted(w.fake, approvalCallId(toolCallId), { click: 'Allow' })
    const late = lateAnswers(w.client, sessionId, { waitMs: 5_000 })
    let resp
    for await (const msg of late) {
      resp = lateApprovalResponse(got.pending, msg)
      if (resp) break
    }
    assert.ok(resp?.approved)
    messages.push({ role: 'tool', content: [resp!] })
    const second = await generateText({ model, tools: { runCommand: t }, messages })
    assert.equal(second.text, 'done')
    assert.deepEqual(runs, ['make deploy'])
  }))
})

describe('AI SDK: a question tool', () => {
  for (const tc of [
    { name: 'answered with a label', reply: { click: 'PostgreSQL' }, want: 'alice chose: PostgreSQL' },
    { name: 'answered with "Other…"', reply: { other: 'CockroachDB' }, want: 'alice answered: CockroachDB' },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const toolCallId = uid('ask')
      const spec = askPerson({ client: w.client, sessionId: uid('thread') })
      const ask = tool({
        description: spec.description,
        inputSchema: jsonSchema(spec.parameters),
        execute: (input, { toolCallId, abortSignal }) => spec.execute(input, toolCallId, abortSignal),
      })
      const { model } = scripted('ask_person', { question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }, toolCallId)
      const answered = answerWhenPosted(w.fake, callIdFor('ai-sdk', toolCallId), tc.reply)
      const res = await generateText({ model, tools: { ask_person: ask }, messages: [{ role: 'user', content: 'pick a db' }] })
      await answered
      const out = res.toolResults.find((r) => r.toolCallId === toolCallId)
      assert.equal(out?.output, tc.want)
    }))
  }
})
