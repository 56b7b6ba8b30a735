// The LangGraph adapter against the real `@langchain/langgraph` (a graph
// with no model: nodes that interrupt), the real askslack binary and the
// fake Slack.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from '@langchain/langgraph'
import { lateAnswers } from '../src/index.js'
import { callIdFor } from '../src/sdk/common.js'
import { interruptsOf, lateResume, resumeFor, type HitlDecision, type QuestionAnswer } from '../src/sdk/langgraph.js'
import { answerWhenPosted, startWorld, stopWorld, uid, withLogs, type World } from './sdkharness.js'

let w: World
before(async () => { w = await startWorld() })
after(async () => { await stopWorld(w) })

const State = Annotation.Root({
  ran: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  told: Annotation<string>(),
  db: Annotation<string>(),
})

/** A graph whose one node asks to run a command, the HITL middleware's way. */
function approvalGraph() {
  return new StateGraph(State)
    .addNode('act', () => {
      const resp = interrupt({
        actionRequests: [{ name: 'run_command', args: { command: 'rm -rf build' }, description: 'Clean the build before releasing' }],
        reviewConfigs: [{ actionName: 'run_command', allowedDecisions: ['approve', 'edit', 'reject'] }],
      }) as { decisions: HitlDecision[] }
      const d = resp.decisions[0]!
      if (d.type === 'approve') return { ran: ['rm -rf build'] }
      if (d.type === 'edit') {
        const act = 'editedAction' in d ? d.editedAction : d.edited_action
        return { ran: [String((act.args as { command?: string }).command)], told: 'edited ' + act.name }
      }
      return { told: d.message ?? '' }
    })
    .addEdge(START, 'act').addEdge('act', END)
    .compile({ checkpointer: new MemorySaver() })
}

/** A graph whose one node asks a question. */
function questionGraph() {
  return new StateGraph(State)
    .addNode('ask', () => {
      const a = interrupt({ question: 'Which database?', options: ['PostgreSQL', { label: 'SQLite', description: 'one file' }] }) as QuestionAnswer
      return { db: a.custom ?? a.selected[0] ?? '' }
    })
    .addEdge(START, 'ask').addEdge('ask', END)
    .compile({ checkpointer: new MemorySaver() })
}

describe('LangGraph: interrupts resumed with a person\'s answer', () => {
  for (const tc of [
    { name: 'Allow approves the action', reply: { click: 'Allow' }, ran: ['rm -rf build'], told: undefined },
    { name: 'Deny rejects it', reply: { click: 'Deny' }, ran: [], told: /Denied by alice/ },
    { name: '"Other…" rejects with the typed message', reply: { other: 'keep build/cache' }, ran: [], told: /keep build\/cache/ },
    { name: 'Edit & allow resumes with an edit decision', reply: { edit: { command: 'rm -rf build/tmp' } }, ran: ['rm -rf build/tmp'], told: /edited run_command/ },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const graph = approvalGraph()
      const thread = uid('thread')
      const config = { configurable: { thread_id: thread } }
      const first = await graph.invoke({}, config)
      const [intr] = interruptsOf(first)
      assert.ok(intr, 'the graph stops at the interrupt')
      const answered = answerWhenPosted(w.fake, callIdFor('langgraph', `${intr.id}-0`), tc.reply)
      const r = await resumeFor(intr, { client: w.client, sessionId: thread })
      await answered
      assert.ok('resume' in r)
      const done = await graph.invoke(new Command({ resume: r.resume }), config)
      assert.deepEqual(done.ran, tc.ran)
      if (tc.told) assert.match(done.told, tc.told)
      assert.equal(interruptsOf(done).length, 0)
    }))
  }

  for (const tc of [
    { name: 'a question answered with a label', reply: { click: 'SQLite' }, db: 'SQLite' },
    { name: 'a question answered with "Other…"', reply: { other: 'DuckDB' }, db: 'DuckDB' },
  ]) {
    test(tc.name, withLogs(() => w, async () => {
      const graph = questionGraph()
      const config = { configurable: { thread_id: uid('thread') } }
      const [intr] = interruptsOf(await graph.invoke({}, config))
      assert.ok(intr)
      const answered = answerWhenPosted(w.fake, callIdFor('langgraph', intr.id!), tc.reply)
      const r = await resumeFor(intr, { client: w.client, sessionId: config.configurable.thread_id })
      await answered
      assert.ok('resume' in r)
      const done = await graph.invoke(new Command({ resume: r.resume }), config)
      assert.equal(done.db, tc.db)
    }))
  }

  test('a timed wait that closes leaves the thread interrupted; the late answer resumes it', withLogs(() => w, async () => {
    const graph = approvalGraph()
    const thread = uid('thread')
    const config = { configurable: { thread_id: thread } }
    const [intr] = interruptsOf(await graph.invoke({}, config))
    assert.ok(intr)
    const r = await resumeFor(intr, { client: w.client, sessionId: thread, timeoutMs: 800 })
    assert.ok('pending' in r, 'nothing decided')
    assert.equal((await graph.getState(config)).next.length, 1, 'the thread is still waiting')
    await answerWhenPosted(w.fake, callIdFor('langgraph', `${intr.id}-0`), { click: 'Allow' })
    let resume: unknown
    for await (const msg of lateAnswers(w.client, thread, { waitMs: 5_000 })) {
      resume = lateResume(intr, msg)
      if (resume) break
    }
    const done = await graph.invoke(new Command({ resume }), config)
    assert.deepEqual(done.ran, ['rm -rf build'])
  }))
})
