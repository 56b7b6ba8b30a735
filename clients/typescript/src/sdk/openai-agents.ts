// OpenAI Agents' seam: a tool with `needsApproval` interrupts the run; the
// run's state approves or rejects each interruption and the run resumes from
// it, now or from its serialized form later
// (https://openai.github.io/openai-agents-js/guides/human-in-the-loop/).
// Typed structurally so this module needs the SDK only at the caller's.
import type { SteeredMessage } from '../wire.js'
import { type AdapterOptions, type ApprovalDecision, type JsonObjectSchema, askApproval, askPersonSchema, askPersonTool, callIdFor, decisionOf } from './common.js'

/** A RunToolApprovalItem (the fields read here). */
export interface AgentsApprovalItem {
  readonly name?: string | undefined
  readonly arguments?: string | undefined
  readonly rawItem: { callId?: string; id?: string; name?: string }
}

/** A RunState (the methods used here). */
export interface AgentsRunState {
  getInterruptions(): AgentsApprovalItem[]
  approve(item: AgentsApprovalItem, options?: { alwaysApprove?: boolean }): void
  reject(item: AgentsApprovalItem, options?: { alwaysReject?: boolean; message?: string }): void
  toString(): string
}

/** A run's result (the fields read here). */
export interface AgentsRunResult<S extends AgentsRunState = AgentsRunState> {
  readonly interruptions?: AgentsApprovalItem[]
  readonly state: S
}

/** What became of a run's interruptions. */
export interface Decided<S extends AgentsRunState = AgentsRunState> {
  /** Each interruption's decision, in order. */
  decisions: ApprovalDecision[]
  /**
   * The state with every decision applied: resume the run with it
   * (`run(agent, decided.state)`) unless some are pending.
   */
  state: S
  /**
   * When some are pending (a timed wait closed unanswered): the state
   * serialized, to keep until their late answers arrive (`applyLateAnswer`
   * on `RunState.fromString(agent, saved)`). Nothing was approved for them.
   */
  saved?: string
}

function toolCallId(item: AgentsApprovalItem): string {
  return item.rawItem.callId ?? item.rawItem.id ?? item.name ?? 'tool'
}

function inputOf(item: AgentsApprovalItem): unknown {
  const args = item.arguments
  if (!args) return {}
  try {
    return JSON.parse(args)
  } catch {
    return args
  }
}

function apply(state: AgentsRunState, item: AgentsApprovalItem, d: ApprovalDecision): void {
  if (d.kind === 'allow') state.approve(item)
  else if (d.kind === 'deny') state.reject(item, { message: d.message })
}

/**
 * Asks a person about each of a run's interruptions, one permission ask
 * each, and applies the answers to the run's state: "Allow" approves,
 * "Deny" rejects, "Other…" text rejects with that text as the message the
 * model reads. The caller's `sessionId` is the run's (it keys late answers).
 */
export async function decideInterruptions<S extends AgentsRunState>(result: AgentsRunResult<S>, opts: AdapterOptions, signal?: AbortSignal): Promise<Decided<S>> {
  const items = result.interruptions ?? result.state.getInterruptions()
  const decisions: ApprovalDecision[] = []
  for (const item of items) {
    const d = await askApproval('openai-agents', { toolCallId: toolCallId(item), tool: item.name ?? item.rawItem.name ?? 'tool', input: inputOf(item) }, opts, signal)
    apply(result.state, item, d)
    decisions.push(d)
  }
  const out: Decided<S> = { decisions, state: result.state }
  if (decisions.some((d) => d.kind === 'pending')) out.saved = result.state.toString()
  return out
}

/**
 * Applies a late answer to the interruption it decides, in a state restored
 * from `Decided.saved`. It reports whether the answer was for one of the
 * state's interruptions (another session's answers are left alone).
 */
export function applyLateAnswer(state: AgentsRunState, msg: SteeredMessage): boolean {
  const item = state.getInterruptions().find((it) => callIdFor('openai-agents', toolCallId(it)) === msg.callId)
  if (!item) return false
  apply(state, item, decisionOf({ answers: msg.answers, respondent: msg.respondent }))
  return true
}

/**
 * A question tool for `new Agent({ tools: [tool({ name: spec.name, description:
 * spec.description, parameters: spec.parameters, strict: false, execute: (input,
 * _ctx, details) => spec.execute(input, details?.toolCall?.callId) })] })`.
 * Not strict: OpenAI's strict mode requires every property, and the
 * question's `multiSelect` and an option's `description` are optional (so the
 * schema's top level says `additionalProperties: true`, as `@openai/agents`
 * requires of a non-strict tool).
 */
export const askPerson = (opts: AdapterOptions) => {
  const parameters: JsonObjectSchema<true> = { ...askPersonSchema(), additionalProperties: true }
  return askPersonTool('openai-agents', opts, parameters)
}
