// The OpenAI Agents adapter against the real `@openai/agents` package (a
// scripted Model of ours), the real askslack binary and the fake Slack.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, RunState, Usage, run, tool, type Model, type ModelRequest, type ModelResponse } from '@openai/agents'
import { lateAnswers } from '../src/index.js'
import { callIdFor } from '../src/sdk/common.js'
import { applyLateAnswer, askPerson, decideInterruptions } from '../src/sdk/openai-agents.js'
import { answerWhenPosted, startWorld, stopWorld, uid, withLogs, type World } from './sdkharness.js'

let w: World
before(async () => { w = await startWorld() })
after(async () => { await stopWorld(w) })

/** A scripted model: one function call, then a text reply; it keeps every request's input. */
class Scripted implements Model {
  turn = 0
  inputs: unknown[] = []
  constructor(readonly name: string, readonly args: unknown, readonly callId: string) {}
  async getResponse(req: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(req.input)
    this.turn++
    if (this.turn === 1) {
      return { usage: new Usage(), responseId: `r${this.turn}`,
        output: [{ type: 'function_call', id: `fc-${this.callId}`, callId: this.callId, name: this.name, arguments: JSON.stringify(this.args), status: 'completed' }] }
    }
    return { usage: new Usage(), responseId: `r${this.turn}`,
      output: [{ type: 'message', id: `m${this.turn}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] }
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> { throw new Error('not streamed in these tests') }
}

/** An agent whose command tool needs approval, counting its runs. */
function agentWith(model: Model) {
  const runs: string[] = []
  const runCommand = tool({
    name: 'run_command', description: 'Run a shell command', strict: false,
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: true },
    needsApproval: true,
    execute: async (input: unknown) => { const c = (input as { command: string }).command; runs.push(c); return `ran ${c}` },
  })
  return { agent: new Agent({ name: 'ops', instructions: 'help', model, tools: [runCommand] }), runs }
}

describe('OpenAI Agents: approvals of interrupted runs', () => {
  for (const tc of [
    { name: 'Allow approves and the resumed run runs the tool', reply: { click: 'Allow' }, runs: ['rm -rf build'] },
    { name: 'Deny rejects it', reply: { click: 'Deny' }, runs: [], said: /Denied by alice/ },
    { name: '"Other…" rejects with the typed message the model reads', reply: { other: 'only delete build/tmp' }, runs: [], said: /only delete build\/tmp/ },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const callId = uid('fc')
      const model = new Scripted('run_command', { command: 'rm -rf build' }, callId)
      const { agent, runs } = agentWith(model)
      const first = await run(agent, 'clean the build')
      assert.equal(first.interruptions.length, 1, 'the run stops for approval')
      const answered = answerWhenPosted(w.fake, callIdFor('openai-agents', callId), tc.reply)
      const decided = await decideInterruptions(first, { client: w.client, sessionId: uid('run') })
      await answered
      assert.equal(decided.saved, undefined)
      const second = await run(agent, decided.state)
      assert.equal(second.finalOutput, 'done')
      assert.deepEqual(runs, tc.runs)
      if (tc.said) assert.match(JSON.stringify(model.inputs.at(-1)), tc.said, 'the model is told why')
    }))
  }

  test('a timed wait that closes approves nothing; the late answer resumes the run from its saved state', withLogs(() => w, async () => {
    const callId = uid('fc')
    const sessionId = uid('run')
    const model = new Scripted('run_command', { command: 'make deploy' }, callId)
    const { agent, runs } = agentWith(model)
    const first = await run(agent, 'deploy')
    const decided = await decideInterruptions(first, { client: w.client, sessionId, timeoutMs: 800 })
    assert.equal(decided.decisions[0]!.kind, 'pending')
    assert.ok(decided.saved, 'the state is kept to resume later')
    assert.deepEqual(runs, [])
    // Later, in another process perhaps: alice allows it, the run resumes.
    await answerWhenPosted(w.fake, callIdFor('openai-agents', callId), { click: 'Allow' })
    const state = await RunState.fromString(agent, decided.saved!)
    for await (const msg of lateAnswers(w.client, sessionId, { waitMs: 5_000 })) {
      if (applyLateAnswer(state, msg)) break
    }
    const second = await run(agent, state)
    assert.equal(second.finalOutput, 'done')
    assert.deepEqual(runs, ['make deploy'])
  }))
})

describe('OpenAI Agents: a question tool', () => {
  for (const tc of [
    { name: 'answered with a label', reply: { click: 'SQLite' }, want: 'alice chose: SQLite' },
    { name: 'answered with "Other…"', reply: { other: 'DuckDB' }, want: 'alice answered: DuckDB' },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const callId = uid('fc')
      const spec = askPerson({ client: w.client, sessionId: uid('run') })
      const ask = tool({ name: spec.name, description: spec.description, parameters: spec.parameters, strict: false,
        execute: (input, _ctx, details) => spec.execute(input, details?.toolCall?.callId) })
      const model = new Scripted('ask_person', { question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }, callId)
      const agent = new Agent({ name: 'dev', instructions: 'help', model, tools: [ask] })
      const answered = answerWhenPosted(w.fake, callIdFor('openai-agents', callId), tc.reply)
      const res = await run(agent, 'pick a db')
      await answered
      assert.equal(res.finalOutput, 'done')
      assert.match(JSON.stringify(model.inputs.at(-1)), new RegExp(tc.want))
    }))
  }
})
