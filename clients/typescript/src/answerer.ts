/**
 * askslackAnswerer: a listener for seed 000's `'user-questions/request'`
 * waterfall that forwards the request to askslack.
 *
 * @module
 */
import { AskslackClient } from './client.js'
import { UserQuestionError } from './seed000.js'
import type {
  Agent,
  AskUserQuestionAnswer,
  AskUserQuestionAnswerItem,
  AskUserQuestionItem,
  AskUserQuestionRequestEvent,
  TimedUserQuestionResult,
  UserQuestionAnswerer,
} from './seed000.js'
import type { AnsweredResult, AskRequest, AskslackAgent, AskslackQuestion, PendingResult, Respondent } from './wire.js'
import { isPending } from './wire.js'

export interface AskslackAnswererOptions {
  /**
   * The agent to ask as when the request carries none, and defaults for the
   * fields it does not carry (e.g. a `principal`). `request.agent` wins
   * field by field. Without either the agent id is `"agent"`.
   */
  agent?: Partial<AskslackAgent>
  /** Slack channel id for these questions (default: the bot's `ASKSLACK_CHANNEL`). */
  channel?: string
  /**
   * The foreground window of a timed request (`request.wait.timed`): a number
   * of milliseconds, or a function of the request (e.g. one that attaches to
   * the harness's wait stream and returns its `remainingMs`). `undefined`
   * asks untimed. Ignored for requests that are not timed.
   */
  timeoutMs?: number | ((request: AskUserQuestionRequestEvent) => number | undefined | Promise<number | undefined>)
  /**
   * What a closed timed window becomes. `'reject'` (default, seed 000's
   * protocol): reject with `UserQuestionError` code `ASK_TIMED_OUT`, which the
   * harness's `askTimed()` maps to its pending result; the error's `result`
   * is `{pending: true, callId}`. `'return'`: resolve with that
   * `TimedUserQuestionResult` itself (typed as the answer, so check
   * {@link isPendingAnswer}).
   */
  onPending?: 'reject' | 'return'
  /**
   * Error codes on which the request is handed to `next()` instead of
   * failing. Default `['NO_PROVIDER']` (askslack has no route for it). Add
   * `'UNAVAILABLE'` to fall back when the bot is unreachable.
   */
  fallThroughOn?: readonly string[]
  /** Called with who answered (askslack's `respondent`) for every answer. */
  onRespondent?: (respondent: Respondent, callId: string) => void
}

/** The timed-out error of a timed ask whose window closed: `result` is the seed's pending result. */
export class TimedOutError extends UserQuestionError {
  readonly result: PendingResult
  constructor(result: PendingResult) {
    super(`no answer inside the window; the question ${result.callId} stays open in Slack and a late answer arrives as a new message`, 'ASK_TIMED_OUT')
    this.result = result
  }
}

/** True when an answerer result is the pending one (`onPending: 'return'`). */
export function isPendingAnswer(r: TimedUserQuestionResult): r is { pending: true; callId: string } {
  return (r as { pending?: unknown }).pending === true
}

/** askslack's `respondent` of an answer the answerer returned (kept as a non-enumerable property). */
export function respondentOf(answer: AskUserQuestionAnswer): Respondent | undefined {
  return (answer as { respondent?: Respondent }).respondent
}

/** Maps a seed agent onto askslack's agent, over defaults. Pure. */
export function toAskslackAgent(agent: Agent | undefined, defaults: Partial<AskslackAgent> = {}): AskslackAgent {
  const out: AskslackAgent = { id: 'agent' }
  const pick = (src: object | undefined) => {
    if (!src) return
    const s = src as Record<string, unknown>
    for (const k of ['id', 'sessionId', 'ownerId', 'principal', 'sourceTaskId'] as const) {
      if (typeof s[k] === 'string' && s[k] !== '') out[k] = s[k] as string
    }
  }
  pick(defaults)
  pick(agent)
  return out
}

/** Maps seed 000 questions onto askslack's (the same shape; only known fields travel). Pure. */
export function toAskslackQuestions(questions: readonly AskUserQuestionItem[]): AskslackQuestion[] {
  return questions.map((q) => {
    const out: AskslackQuestion = { id: q.id, question: q.question }
    if (q.detail !== undefined) out.detail = q.detail
    if (q.header !== undefined) out.header = q.header
    if (q.options !== undefined) {
      out.options = q.options.map((o) => {
        const opt: { label: string; description?: string; preview?: string } = { label: o.label }
        if (o.description !== undefined) opt.description = o.description
        const preview = (o as { preview?: unknown }).preview
        if (typeof preview === 'string') opt.preview = preview
        return opt
      })
    }
    if (q.multiSelect !== undefined) out.multiSelect = q.multiSelect
    if (q.intent !== undefined) out.intent = { ...q.intent }
    return out
  })
}

/** Copies answer items to the seed's exact shape (`custom` only when set). Pure. */
export function toSeedAnswers(items: readonly AskUserQuestionAnswerItem[] | null | undefined): AskUserQuestionAnswerItem[] {
  return (items ?? []).map((a) => {
    const out: AskUserQuestionAnswerItem = { id: a.id, selected: [...(a.selected ?? [])] }
    if (a.custom !== undefined && a.custom !== '') out.custom = a.custom
    return out
  })
}

function withRespondent(res: AnsweredResult): AskUserQuestionAnswer {
  const answer: AskUserQuestionAnswer = { answers: toSeedAnswers(res.answers) }
  Object.defineProperty(answer, 'respondent', { value: res.respondent, enumerable: false })
  return answer
}

/** A fresh tool call id for a request that names none. */
export function newCallId(): string {
  return globalThis.crypto.randomUUID()
}

/**
 * Builds the host API request for a seed 000 request (`opts.timeoutMs` makes
 * it timed). Pure apart from a fresh `crypto.randomUUID()` call id when
 * `request.wait` names none.
 */
export function toAskRequest(
  request: AskUserQuestionRequestEvent,
  opts: { agent?: Partial<AskslackAgent>; channel?: string; timeoutMs?: number } = {},
): AskRequest {
  const body: AskRequest = {
    callId: request.wait?.callId || newCallId(),
    agent: toAskslackAgent(request.agent, opts.agent),
    questions: toAskslackQuestions(request.questions ?? []),
  }
  if (opts.timeoutMs !== undefined) body.timeoutMs = opts.timeoutMs
  if (opts.channel) body.channel = opts.channel
  return body
}

/**
 * A listener for seed 000's `'user-questions/request'` waterfall that asks a
 * person in Slack through askslack:
 *
 * - the request becomes `POST /v1/asks` (`callId` from `request.wait.callId`
 *   or a fresh UUID; `agent` from `request.agent` over `opts.agent`);
 * - the answer resolves as `{answers}`; `respondentOf(answer)` says who
 *   answered;
 * - `NO_PROVIDER` (askslack has no route for the request) calls and returns
 *   `next()`, as do the other codes in `opts.fallThroughOn`;
 * - `request.signal` aborting aborts the request, withdraws the Slack
 *   question (`DELETE /v1/asks/{callId}`) and rejects with code `ASK_ABORTED`;
 * - a timed request (`wait.timed` with `opts.timeoutMs`) whose window closes
 *   rejects with `ASK_TIMED_OUT` (a {@link TimedOutError}), or resolves with
 *   `{pending: true, callId}` with `onPending: 'return'`.
 */
export function askslackAnswerer(client: AskslackClient, opts: AskslackAnswererOptions = {}): UserQuestionAnswerer {
  const passOn = new Set(opts.fallThroughOn ?? ['NO_PROVIDER'])
  return async function answerer(request, next) {
    const timeoutMs = request.wait?.timed
      ? typeof opts.timeoutMs === 'function' ? await opts.timeoutMs(request) : opts.timeoutMs
      : undefined
    const body = toAskRequest(request, {
      ...(opts.agent ? { agent: opts.agent } : {}),
      ...(opts.channel ? { channel: opts.channel } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    })
    let res
    try {
      res = await client.ask(body, request.signal ? { signal: request.signal } : {})
    } catch (err) {
      if (err instanceof UserQuestionError && passOn.has(err.code)) return next()
      throw err
    }
    if (isPending(res)) {
      if (opts.onPending === 'return') return res as unknown as AskUserQuestionAnswer
      throw new TimedOutError(res)
    }
    opts.onRespondent?.(res.respondent, body.callId)
    return withRespondent(res)
  }
}

/**
 * Ask through askslack and keep who answered: the same mapping as
 * {@link askslackAnswerer} without the waterfall. Resolves with
 * `{answers, respondent, callId}` or the pending result.
 */
export async function askWithRespondent(
  client: AskslackClient,
  request: AskUserQuestionRequestEvent,
  opts: { agent?: Partial<AskslackAgent>; channel?: string; timeoutMs?: number } = {},
): Promise<(AskUserQuestionAnswer & { respondent: Respondent; callId: string }) | PendingResult> {
  const body = toAskRequest(request, opts)
  const res = await client.ask(body, request.signal ? { signal: request.signal } : {})
  if (isPending(res)) return res
  return { answers: toSeedAnswers(res.answers), respondent: res.respondent, callId: body.callId }
}
