// LangGraph's seam: a node calls `interrupt(value)`; the graph stops with the
// value in `__interrupt__` (checkpointed per thread) and resumes when invoked
// again on the same thread with `new Command({ resume })`
// (https://docs.langchain.com/oss/javascript/langgraph/interrupts). Two kinds
// of interrupt value are understood: LangChain's human-in-the-loop
// middleware requests (`actionRequests` / `action_requests`, answered with
// `decisions`: approve, edit, reject) and a question (`{ question, options }`,
// answered with the person's answer).
// Typed structurally so this module needs the SDK only at the caller's.
import type { AnsweredResult, SteeredMessage } from '../wire.js'
import { isPending } from '../wire.js'
import { type AdapterOptions, type ApprovalDecision, type SdkQuestion, askApproval, callIdFor, decisionOf, editedInput, questionRequest } from './common.js'

/** One interrupt as a graph's result carries it. */
export interface GraphInterrupt {
  id?: string
  value?: unknown
}

/** A tool call the HITL middleware asks about. */
interface ActionRequest { name?: string; action?: string; args?: unknown; arguments?: unknown; description?: string }

/** A decision as the HITL middleware takes it. */
export type HitlDecision =
  | { type: 'approve' }
  | { type: 'reject'; message?: string }
  | { type: 'edit'; editedAction: { name: string; args: unknown } }
  | { type: 'edit'; edited_action: { name: string; args: unknown } }

/** The answer a question interrupt resumes with. */
export interface QuestionAnswer {
  /** The labels chosen. */
  selected: string[]
  /** Text typed in "Other…". */
  custom?: string
  /** Who answered. */
  by: string
}

/** What one interrupt resumes with, or that nobody decided yet. */
export type Resume = { resume: unknown } | { pending: string }

const SDK = 'langgraph'

function actionsOf(value: unknown): ActionRequest[] | undefined {
  if (!value || typeof value !== 'object') return undefined
  const v = value as Record<string, unknown>
  const list = v.actionRequests ?? v.action_requests
  return Array.isArray(list) ? (list as ActionRequest[]) : undefined
}

function questionOf(value: unknown): SdkQuestion | undefined {
  if (!value || typeof value !== 'object') return undefined
  const v = value as Record<string, unknown>
  if (typeof v.question !== 'string') return undefined
  const q: SdkQuestion = { question: v.question }
  if (Array.isArray(v.options)) q.options = (v.options as unknown[]).map((o) => (typeof o === 'string' ? { label: o } : (o as { label: string; description?: string })))
  if (v.multiSelect === true) q.multiSelect = true
  if (typeof v.header === 'string') q.header = v.header
  return q
}

/** Whether the HITL request lets a person edit action name's args before it runs (its review config allows "edit"). */
function editAllowed(value: unknown, name: string): boolean {
  if (!value || typeof value !== 'object') return false
  const v = value as Record<string, unknown>
  const configs = v.reviewConfigs ?? v.review_configs
  if (!Array.isArray(configs)) return false
  return configs.some((c: Record<string, unknown>) => (c.actionName ?? c.action_name) === name &&
    Array.isArray(c.allowedDecisions ?? c.allowed_decisions) && ((c.allowedDecisions ?? c.allowed_decisions) as unknown[]).includes('edit'))
}

/** Whether the interrupt came in Python's key style (`action_requests`): its answer goes back in the same. */
function snakeCase(value: unknown): boolean {
  return !!value && typeof value === 'object' && 'action_requests' in (value as Record<string, unknown>)
}

function hitlDecision(d: ApprovalDecision, name: string, args: unknown, snake = false): HitlDecision {
  if (d.kind === 'allow' && d.edited) {
    const action = { name, args: editedInput(args, d) }
    return snake ? { type: 'edit', edited_action: action } : { type: 'edit', editedAction: action }
  }
  return d.kind === 'allow' ? { type: 'approve' } : { type: 'reject', message: d.kind === 'deny' ? d.message : '' }
}

function questionAnswer(r: AnsweredResult): QuestionAnswer {
  const it = r.answers[0]
  const out: QuestionAnswer = { selected: it?.selected ?? [], by: r.respondent.userName || r.respondent.userId || r.respondent.surface }
  if (it?.custom) out.custom = it.custom
  return out
}

/**
 * Asks a person about one interrupt and returns what to resume with: for a
 * HITL request `{ decisions }` (one per action, in order; "Other…" text
 * rejects with it as the message), for a question its answer. The caller's
 * `sessionId` is the graph's thread id. When a timed wait closes the result
 * is `{ pending: callId }` and the thread stays interrupted until its late
 * answer (`lateResume`).
 */
export async function resumeFor(interrupt: GraphInterrupt, opts: AdapterOptions, signal?: AbortSignal): Promise<Resume> {
  const key = interrupt.id ?? 'interrupt'
  const actions = actionsOf(interrupt.value)
  if (actions) {
    const decisions: HitlDecision[] = []
    for (const [i, a] of actions.entries()) {
      const name = a.name ?? a.action ?? 'tool'
      const args = a.args ?? a.arguments ?? {}
      const d = await askApproval(SDK, { toolCallId: `${key}-${i}`, tool: name, input: args, editable: editAllowed(interrupt.value, name),
        ...(a.description ? { reason: a.description } : {}) }, opts, signal)
      if (d.kind === 'pending') return { pending: d.callId }
      decisions.push(hitlDecision(d, name, args, snakeCase(interrupt.value)))
    }
    return { resume: { decisions } }
  }
  const q = questionOf(interrupt.value)
  if (!q) throw new Error(`langgraph: an interrupt askslack cannot ask: ${JSON.stringify(interrupt.value).slice(0, 200)}`)
  const r = await opts.client.ask(questionRequest(SDK, key, [q], opts), signal ? { signal } : {})
  if (isPending(r)) return { pending: r.callId }
  return { resume: questionAnswer(r) }
}

/** The interrupts of an `invoke` result (its `__interrupt__`). */
export function interruptsOf(result: unknown): GraphInterrupt[] {
  const list = (result as { __interrupt__?: unknown } | undefined)?.__interrupt__
  return Array.isArray(list) ? (list as GraphInterrupt[]) : []
}

/**
 * What a late answer resumes an interrupt with: the answer to a question
 * interrupt, or the decision on a one-action HITL interrupt. Undefined when
 * the message is for another interrupt.
 */
export function lateResume(interrupt: GraphInterrupt, msg: SteeredMessage): unknown {
  const key = interrupt.id ?? 'interrupt'
  const actions = actionsOf(interrupt.value)
  if (actions) {
    if (actions.length !== 1 || msg.callId !== callIdFor(SDK, `${key}-0`)) return undefined
    const a = actions[0]!
    return { decisions: [hitlDecision(decisionOf({ answers: msg.answers, respondent: msg.respondent }), a.name ?? a.action ?? 'tool', a.args ?? a.arguments ?? {}, snakeCase(interrupt.value))] }
  }
  if (msg.callId !== callIdFor(SDK, key)) return undefined
  return questionAnswer({ answers: msg.answers, respondent: msg.respondent })
}
