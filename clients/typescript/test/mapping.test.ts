// Unit tests of the pure mappings (no network).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  askQuestionRequestToAskslack,
  askslackAnswerToQuestionAnswer,
  askslackToAskQuestionRequest,
  questionAnswerToAskslack,
  toAskRequest,
  toAskslackAgent,
  toSeedAnswers,
  type AskQuestionRequest,
} from '../src/index.js'
import { approvalRequest, decisionOf, editableOf, editedInput } from '../src/sdk/common.js'

const req004: AskQuestionRequest = {
  toolCallId: 'toolu_01ABC',
  principal: 'alice@example.com',
  sourceTaskId: 'task-7',
  questions: [
    {
      question: 'Which database?',
      header: 'Database',
      options: [
        { label: 'Postgres', description: 'relational', preview: 'CREATE TABLE t (id int);' },
        { label: 'SQLite', description: 'embedded' },
      ],
    },
    {
      question: 'Which features?',
      header: 'Features',
      multiSelect: true,
      options: [
        { label: 'Auth', description: 'login' },
        { label: 'Billing', description: 'payments' },
        { label: 'Search', description: 'full text' },
      ],
    },
    {
      question: 'Second database?',
      header: 'Database',
      options: [
        { label: 'Redis', description: 'cache' },
        { label: 'None', description: 'no second one' },
      ],
    },
  ],
}

test('seed 004 request → askslack request', () => {
  const r = askQuestionRequestToAskslack(req004, { channel: 'C0OTHER' })
  assert.deepEqual(r, {
    callId: 'toolu_01ABC',
    channel: 'C0OTHER',
    agent: { id: 'task-7', sessionId: 'task-7', principal: 'alice@example.com', sourceTaskId: 'task-7' },
    questions: [
      {
        id: 'q0', question: 'Which database?', header: 'Database',
        options: [
          { label: 'Postgres', description: 'relational', preview: 'CREATE TABLE t (id int);' },
          { label: 'SQLite', description: 'embedded' },
        ],
      },
      {
        id: 'q1', question: 'Which features?', header: 'Features', multiSelect: true,
        options: [
          { label: 'Auth', description: 'login' },
          { label: 'Billing', description: 'payments' },
          { label: 'Search', description: 'full text' },
        ],
      },
      {
        id: 'q2', question: 'Second database?', header: 'Database',
        options: [{ label: 'Redis', description: 'cache' }, { label: 'None', description: 'no second one' }],
      },
    ],
  })
  // The same request maps to the same ids (a re-attach asks the same thing).
  assert.deepEqual(askQuestionRequestToAskslack(req004, { channel: 'C0OTHER' }), r)
})

test('seed 004 request → askslack agent: defaults, and the request wins for principal', () => {
  const r = askQuestionRequestToAskslack(
    { toolCallId: 'c1', questions: [], principal: 'bob' },
    { agent: { id: 'worker-1', sessionId: 'sess-9', principal: 'nobody' }, timeoutMs: 5000 },
  )
  assert.deepEqual(r.agent, { id: 'worker-1', sessionId: 'sess-9', principal: 'bob' })
  assert.equal(r.timeoutMs, 5000)
  const bare = askQuestionRequestToAskslack({ toolCallId: 'c2', questions: [] })
  assert.deepEqual(bare.agent, { id: 'agent' })
  // A source task id that is no valid askslack id is attribution only, not a session.
  const odd = askQuestionRequestToAskslack({ toolCallId: 'c3', questions: [], sourceTaskId: 'task with spaces' })
  assert.deepEqual(odd.agent, { id: 'task with spaces', sourceTaskId: 'task with spaces' })
})

test('askslack request → seed 004 request is the inverse', () => {
  assert.deepEqual(askslackToAskQuestionRequest(askQuestionRequestToAskslack(req004)), req004)
})

test('askslack answer → seed 004 answer: header-keyed, custom → note, in question order', () => {
  const qa = askslackAnswerToQuestionAnswer(req004, {
    answers: [
      { id: 'q2', selected: [], custom: 'Valkey, not Redis' },
      { id: 'q0', selected: ['Postgres'] },
      { id: 'q1', selected: ['Auth', 'Search'], custom: 'and SSO' },
    ],
  })
  assert.deepEqual(qa, {
    answers: [
      { header: 'Database', selected: ['Postgres'] },
      { header: 'Features', selected: ['Auth', 'Search'], note: 'and SSO' },
      { header: 'Database', selected: [], note: 'Valkey, not Redis' },
    ],
  })
  // A question the batch leaves out reads as skipped.
  assert.deepEqual(askslackAnswerToQuestionAnswer(req004, { answers: [{ id: 'q1', selected: ['Billing'] }] }).answers, [
    { header: 'Database', selected: [] },
    { header: 'Features', selected: ['Billing'] },
    { header: 'Database', selected: [] },
  ])
})

test('seed 004 answer → askslack answer: note → custom, repeated headers in order, one item per question', () => {
  const a = questionAnswerToAskslack(req004, {
    answers: [
      { header: 'Database', selected: ['SQLite'] },
      { header: 'Database', selected: [], note: 'none for now' },
      { header: 'Unknown', selected: ['x'] },
    ],
  })
  assert.deepEqual(a, {
    answers: [
      { id: 'q0', selected: ['SQLite'] },
      { id: 'q1', selected: [] },
      { id: 'q2', selected: [], custom: 'none for now' },
    ],
  })
})

test('answers survive the round trip both ways', () => {
  const batch = {
    answers: [
      { id: 'q0', selected: ['Postgres'] },
      { id: 'q1', selected: ['Auth'], custom: 'also SSO' },
      { id: 'q2', selected: [], custom: 'Valkey' },
    ],
  }
  assert.deepEqual(questionAnswerToAskslack(req004, askslackAnswerToQuestionAnswer(req004, batch)), batch)
  const qa = {
    answers: [
      { header: 'Database', selected: ['SQLite'] },
      { header: 'Features', selected: [], note: 'later' },
      { header: 'Database', selected: ['None'] },
    ],
  }
  assert.deepEqual(askslackAnswerToQuestionAnswer(req004, questionAnswerToAskslack(req004, qa)), qa)
})

test('seed 000 request → askslack request', () => {
  const signal = new AbortController().signal
  const r = toAskRequest(
    {
      questions: [{
        id: 'plan', question: 'Approve the plan?', detail: '# Plan\n1. do it', header: 'Plan',
        options: [{ label: 'Approve' }, { label: 'Decline', description: 'say why' }],
        intent: { kind: 'plan-review', approve: 'Approve' },
      }],
      agent: { id: 'agent-1', sessionId: 'sess-1' },
      signal,
      wait: { callId: 'call-1', timed: true },
    },
    { agent: { id: 'ignored', principal: 'U0ALICE' }, channel: 'C0X', timeoutMs: 60_000 },
  )
  assert.deepEqual(r, {
    callId: 'call-1',
    agent: { id: 'agent-1', sessionId: 'sess-1', principal: 'U0ALICE' },
    questions: [{
      id: 'plan', question: 'Approve the plan?', detail: '# Plan\n1. do it', header: 'Plan',
      options: [{ label: 'Approve' }, { label: 'Decline', description: 'say why' }],
      intent: { kind: 'plan-review', approve: 'Approve' },
    }],
    timeoutMs: 60_000,
    channel: 'C0X',
  })
  // No wait: a fresh UUID call id each time; no agent: "agent".
  const a = toAskRequest({ questions: [{ id: 'q', question: '?' }] })
  const b = toAskRequest({ questions: [{ id: 'q', question: '?' }] })
  assert.match(a.callId, /^[0-9a-f-]{36}$/)
  assert.notEqual(a.callId, b.callId)
  assert.deepEqual(a.agent, { id: 'agent' })
  assert.deepEqual(toAskslackAgent({ id: 'x', ownerId: 'parent' }), { id: 'x', ownerId: 'parent' })
})

test('answer items keep the seed shape', () => {
  assert.deepEqual(toSeedAnswers([{ id: 'a', selected: ['x'], custom: '' }, { id: 'b', selected: [], custom: 'hi' }]), [
    { id: 'a', selected: ['x'] },
    { id: 'b', selected: [], custom: 'hi' },
  ])
  assert.deepEqual(toSeedAnswers(null), [])
})

test('Edit & allow: editable fields only where the SDK runs an edited input; edits read back', () => {
  const client = {} as never
  const input = { command: 'rm -rf build', timeout: 30, description: 'x'.repeat(3001), 'bad key': 'v', script: 'a\nb' }
  const asked = approvalRequest('claude', { toolCallId: 't1', tool: 'Bash', input, editable: true }, { client })
  assert.deepEqual(asked.permission?.editable, [{ name: 'command', value: 'rm -rf build', of: 'command' }, { name: 'script', value: 'a\nb', multiline: true }])
  assert.equal(approvalRequest('openai-agents', { toolCallId: 't1', tool: 'Bash', input }, { client }).permission?.editable, undefined)
  assert.equal(approvalRequest('claude', { toolCallId: 't1', tool: 'Bash', input, editable: true }, { client, edit: false }).permission?.editable, undefined)
  const d = decisionOf({ answers: [{ id: 'permission', selected: ['Allow'], edited: { command: 'rm -rf build/tmp' } }], respondent: { userName: 'alice', at: '', surface: 'slack' } })
  assert.deepEqual(d, { kind: 'allow', by: 'alice', edited: { command: 'rm -rf build/tmp' } })
  assert.deepEqual(editedInput(input, d), { ...input, command: 'rm -rf build/tmp' })
  assert.deepEqual(editableOf(['a']), [])
})
