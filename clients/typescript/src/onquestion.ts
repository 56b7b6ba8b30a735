/**
 * askslackOnQuestion: seed 004's `OnQuestion` over askslack, and the pure
 * mappings between seed 004's header-keyed answers (with `note`) and
 * askslack's id-keyed ones (with `custom`).
 *
 * @module
 */
import { AskslackClient } from './client.js'
import { UserQuestionError } from './seed000.js'
import type { AskUserQuestionAnswer, AskUserQuestionAnswerItem } from './seed000.js'
import type { AskQuestion, AskQuestionRequest, OnQuestion, QuestionAnswer, QuestionAnswerItem } from './seed004.js'
import type { AskRequest, AskslackAgent, AskslackQuestion, Respondent } from './wire.js'
import { isPending } from './wire.js'
import { TimedOutError } from './answerer.js'

/** The question id askslack uses for seed 004's question at index `i`: `"q0"`, `"q1"`, … */
export function questionId(i: number): string {
  return `q${i}`
}

const idPattern = /^[A-Za-z0-9\-_.:@+=]{1,128}$/

export interface ToAskslackOptions {
  /**
   * The asking agent. Defaults: `id` = the request's `sourceTaskId` or
   * `"agent"`; `sessionId` = `sourceTaskId` (seed 004: the issuing task's
   * session id) when it is a valid askslack id. The request's `principal` and
   * `sourceTaskId` win over these.
   */
  agent?: Partial<AskslackAgent>
  /** Slack channel id (default: the bot's `ASKSLACK_CHANNEL`). */
  channel?: string
  /** Makes the ask timed (see {@link AskslackOnQuestionOptions.timeoutMs}). */
  timeoutMs?: number
}

/**
 * Seed 004 request → askslack request. Question `i` gets id `"q<i>"` (stable
 * for the same request; headers need not be unique); `callId` is the
 * `toolCallId`; `principal` and `sourceTaskId` go to the agent. Pure.
 */
export function askQuestionRequestToAskslack(req: AskQuestionRequest, opts: ToAskslackOptions = {}): AskRequest {
  const agent: AskslackAgent = { id: 'agent' }
  const d = opts.agent ?? {}
  if (req.sourceTaskId) agent.id = req.sourceTaskId
  if (req.sourceTaskId && idPattern.test(req.sourceTaskId)) agent.sessionId = req.sourceTaskId
  for (const k of ['id', 'sessionId', 'ownerId', 'principal', 'sourceTaskId'] as const) {
    const v = d[k]
    if (typeof v === 'string' && v !== '') agent[k] = v
  }
  if (req.principal) agent.principal = req.principal
  if (req.sourceTaskId) agent.sourceTaskId = req.sourceTaskId
  const out: AskRequest = {
    callId: req.toolCallId,
    agent,
    questions: req.questions.map((q, i): AskslackQuestion => {
      const aq: AskslackQuestion = {
        id: questionId(i),
        question: q.question,
        options: (q.options ?? []).map((o) => {
          const opt: { label: string; description?: string; preview?: string } = { label: o.label }
          if (o.description !== undefined && o.description !== '') opt.description = o.description
          if (o.preview !== undefined && o.preview !== '') opt.preview = o.preview
          return opt
        }),
      }
      if (q.header !== undefined && q.header !== '') aq.header = q.header
      if (q.multiSelect) aq.multiSelect = true
      return aq
    }),
  }
  if (opts.channel) out.channel = opts.channel
  if (opts.timeoutMs !== undefined) out.timeoutMs = opts.timeoutMs
  return out
}

/**
 * askslack request → seed 004 request: the inverse of
 * {@link askQuestionRequestToAskslack} (question order is kept; ids are
 * dropped). Pure.
 */
export function askslackToAskQuestionRequest(req: AskRequest): AskQuestionRequest {
  const out: { -readonly [K in keyof AskQuestionRequest]: AskQuestionRequest[K] } = {
    toolCallId: req.callId,
    questions: req.questions.map((q): AskQuestion => {
      const aq: AskQuestion = {
        question: q.question,
        header: q.header ?? '',
        options: (q.options ?? []).map((o) => {
          const opt: AskQuestion['options'][number] = { label: o.label, description: o.description ?? '' }
          if (o.preview !== undefined && o.preview !== '') opt.preview = o.preview
          return opt
        }),
      }
      if (q.multiSelect) aq.multiSelect = true
      return aq
    }),
  }
  if (req.agent.principal) out.principal = req.agent.principal
  if (req.agent.sourceTaskId) out.sourceTaskId = req.agent.sourceTaskId
  return out
}

/**
 * askslack answer → seed 004 answer: one item per question of `req`, in
 * question order, keyed by the question's `header`; `custom` becomes `note`.
 * A question the batch does not name is `{header, selected: []}`. Pure.
 */
export function askslackAnswerToQuestionAnswer(req: AskQuestionRequest, answer: AskUserQuestionAnswer): QuestionAnswer {
  const byId = new Map<string, AskUserQuestionAnswerItem>()
  for (const a of answer.answers ?? []) byId.set(a.id, a)
  return {
    answers: req.questions.map((q, i): QuestionAnswerItem => {
      const a = byId.get(questionId(i))
      const item: QuestionAnswerItem = { header: q.header, selected: [...(a?.selected ?? [])] }
      if (a?.custom !== undefined && a.custom !== '') item.note = a.custom
      return item
    }),
  }
}

/**
 * seed 004 answer → askslack answer (for `POST /v1/asks/{callId}/answer` from
 * a seed 004 UI): items are matched to questions by `header`, in order (the
 * n-th item with a header answers the n-th question with it); `note` becomes
 * `custom`. Every question gets exactly one item (`selected: []` when the
 * answer has none for it). Items whose header names no question are dropped.
 * Pure. askslack itself then enforces its rules (e.g. a single-select
 * question takes a note *or* a selection: `BAD_ANSWER` otherwise).
 */
export function questionAnswerToAskslack(req: AskQuestionRequest, answer: QuestionAnswer): AskUserQuestionAnswer {
  const pools = new Map<string, QuestionAnswerItem[]>()
  for (const it of answer.answers ?? []) {
    const pool = pools.get(it.header) ?? []
    pool.push(it)
    pools.set(it.header, pool)
  }
  return {
    answers: req.questions.map((q, i): AskUserQuestionAnswerItem => {
      const it = pools.get(q.header)?.shift()
      const out: AskUserQuestionAnswerItem = { id: questionId(i), selected: [...(it?.selected ?? [])] }
      if (it?.note !== undefined && it.note !== '') out.custom = it.note
      return out
    }),
  }
}

export interface AskslackOnQuestionOptions extends ToAskslackOptions {
  /**
   * Makes every ask timed: when the window closes without an answer the
   * OnQuestion rejects with a `TimedOutError` (code `ASK_TIMED_OUT`; the
   * question stays open in Slack and a late answer reaches the session's
   * queue, see `lateAnswers`). Default: untimed, the wait lasts until an
   * answer or the signal.
   */
  timeoutMs?: number
  /**
   * Called instead of failing when askslack has no route for the question
   * (`NO_PROVIDER`), e.g. a terminal prompt. Without it the OnQuestion rejects
   * with that `UserQuestionError`, whose message the tool can show the model
   * ("no human available; proceed with your best judgment").
   */
  fallback?: OnQuestion
  /** Called with who answered (askslack's `respondent`). */
  onRespondent?: (respondent: Respondent, toolCallId: string) => void
}

/**
 * Seed 004's `OnQuestion` over askslack: asks with `callId = toolCallId`,
 * maps the answer back to header-keyed items (`custom` → `note`). `signal`
 * aborting withdraws the Slack question (`DELETE`) and rejects with
 * `ASK_ABORTED`.
 */
export function askslackOnQuestion(client: AskslackClient, opts: AskslackOnQuestionOptions = {}): OnQuestion {
  return async (req, signal) => {
    const body = askQuestionRequestToAskslack(req, opts)
    let res
    try {
      res = await client.ask(body, signal ? { signal } : {})
    } catch (err) {
      if (opts.fallback && err instanceof UserQuestionError && err.code === 'NO_PROVIDER') return opts.fallback(req, signal)
      throw err
    }
    if (isPending(res)) throw new TimedOutError(res)
    opts.onRespondent?.(res.respondent, req.toolCallId)
    const qa = askslackAnswerToQuestionAnswer(req, res)
    Object.defineProperty(qa, 'respondent', { value: res.respondent, enumerable: false })
    return qa
  }
}
