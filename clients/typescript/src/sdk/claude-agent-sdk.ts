// The Claude Agent SDK's seam: `canUseTool`, called before each tool call
// the permission mode does not settle, and for AskUserQuestion, Claude's
// question tool (https://docs.claude.com/en/docs/agent-sdk/permissions).
// Typed structurally so this module needs the SDK only at the caller's.
import { createHash } from 'node:crypto'
import { isPending, type SteeredMessage } from '../wire.js'
import { type AdapterOptions, type SdkQuestion, answersByQuestion, askApproval, callIdFor, decisionOf, editedInput, questionRequest } from './common.js'

/** What canUseTool needs: the adapters' options, and the late answers a resumed session goes on from. */
export interface ClaudeAdapterOptions extends AdapterOptions {
  /**
   * The late answers this session resumes with (`lateAnswers`). A late
   * Allow lets the resumed session's repeat of the call it allowed — the
   * same tool with the same input — run once without a second ask (with the
   * person's edits, when they edited it); a different call asks as usual.
   */
  late?: SteeredMessage | readonly SteeredMessage[]
}

/** The SDK's PermissionResult (`@anthropic-ai/claude-agent-sdk`). */
export type ClaudePermissionResult =
  | { behavior: 'allow'; updatedInput?: Record<string, unknown>; toolUseID?: string }
  | { behavior: 'deny'; message: string; interrupt?: boolean; toolUseID?: string }

/** The options the SDK passes canUseTool (the fields read here). */
export interface ClaudeCanUseToolOptions {
  signal: AbortSignal
  toolUseID: string
  decisionReason?: string
  title?: string
  description?: string
}

/** The SDK's CanUseTool. */
export type ClaudeCanUseTool = (toolName: string, input: Record<string, unknown>, options: ClaudeCanUseToolOptions) => Promise<ClaudePermissionResult>

/** The question tool Claude asks people with. */
export const ASK_USER_QUESTION = 'AskUserQuestion'

/** A value as JSON with every object's keys sorted: equal values, equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map((x) => canonical(x === undefined ? null : x)).join(',') + ']'
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return '{' + Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => JSON.stringify(k) + ':' + canonical(o[k])).join(',') + '}'
  }
  return JSON.stringify(v) ?? 'null'
}

/** Names a tool call by what it does: the same tool with the same input, the same name. */
function callDigest(toolName: string, input: unknown): string {
  return createHash('sha256').update(canonical([toolName, input])).digest('hex').slice(0, 32)
}

/**
 * The callId of a permission ask: the tool-use id, then the call's digest,
 * so that its answer names the call it allowed (a resumed session's repeat
 * of the call has a new tool-use id and the same digest).
 */
export function permissionCallId(toolUseID: string, toolName: string, input: unknown): string {
  return callIdFor('claude', permissionKey(toolUseID, callDigest(toolName, input)))
}

/** What askApproval derives the callId from (it stays under 128 characters with the digest last). */
const permissionKey = (toolUseID: string, digest: string): string => `${toolUseID.slice(0, 80)}.${digest}`

/** The late answers' Allows, each usable once, by the digest of the call each allowed. */
function lateAllows(late: ClaudeAdapterOptions['late']): Map<string, SteeredMessage> {
  const out = new Map<string, SteeredMessage>()
  const list: readonly SteeredMessage[] = late === undefined ? [] : 'id' in late ? [late] : late
  for (const msg of list) {
    const m = /^claude-.*\.([0-9a-f]{32})$/.exec(msg.callId)
    if (m && msg.answers.some((a) => a.id === 'permission') && decisionOf({ answers: msg.answers, respondent: msg.respondent }).kind === 'allow') out.set(m[1]!, msg)
  }
  return out
}

/**
 * canUseTool for `query({ options: { canUseTool } })`: a tool call becomes a
 * permission ask in Slack (its name, its input, the SDK's reason), and
 * AskUserQuestion becomes a question whose answers go back in the tool's
 * input (`answers`, keyed by question text). "Other…" text denies with that
 * text as the message Claude reads; "Edit & allow…" runs the call with the
 * text fields a person changed (AdapterOptions.edit). A timed wait that closes unanswered
 * denies (never allows) and says so; the late answer reaches the session
 * (`lateAnswers`) to resume it with `query({ prompt: msg.text, options: {
 * resume, canUseTool: canUseTool({ ...opts, late: msg }) } })`: a late Allow
 * then lets the resumed session's repeat of the call run once without asking
 * again (`ClaudeAdapterOptions.late`).
 */
export function canUseTool(opts: ClaudeAdapterOptions): ClaudeCanUseTool {
  const allowed = lateAllows(opts.late)
  return async (toolName, input, options) => {
    const signal = options.signal
    if (toolName === ASK_USER_QUESTION) {
      const qs = (Array.isArray(input.questions) ? input.questions : []) as SdkQuestion[]
      const r = await opts.client.ask(questionRequest('claude', options.toolUseID, qs, opts), signal ? { signal } : {})
      if (isPending(r)) {
        return { behavior: 'deny', toolUseID: options.toolUseID,
          message: `Nobody has answered in Slack yet (ask ${r.callId}). Go on without the answer; it will arrive as a new message.` }
      }
      return { behavior: 'allow', toolUseID: options.toolUseID, updatedInput: { ...input, answers: answersByQuestion(qs, r) } }
    }
    const digest = callDigest(toolName, input)
    const late = allowed.get(digest)
    if (late) {
      // The call a person allowed after the wait, made again by the resumed session: once.
      allowed.delete(digest)
      return { behavior: 'allow', toolUseID: options.toolUseID, updatedInput: editedInput(input, decisionOf({ answers: late.answers, respondent: late.respondent })) }
    }
    const reason = options.decisionReason ?? options.description ?? options.title
    // Claude runs the updatedInput it is given: a person may edit first.
    const d = await askApproval('claude', { toolCallId: permissionKey(options.toolUseID, digest), tool: toolName, input, editable: true, ...(reason ? { reason } : {}) }, opts, signal)
    switch (d.kind) {
      case 'allow':
        return { behavior: 'allow', toolUseID: options.toolUseID, updatedInput: editedInput(input, d) }
      case 'deny':
        return { behavior: 'deny', toolUseID: options.toolUseID, message: d.message }
      default:
        return { behavior: 'deny', toolUseID: options.toolUseID,
          message: `Not run: nobody has decided in Slack yet (ask ${d.callId}). The decision will arrive as a new message; ` +
            'if it allows the call, make the same call again (same input) and it runs without asking again.' }
    }
  }
}
