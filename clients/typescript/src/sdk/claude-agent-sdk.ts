// The Claude Agent SDK's seam: `canUseTool`, called before each tool call
// the permission mode does not settle, and for AskUserQuestion, Claude's
// question tool (https://docs.claude.com/en/docs/agent-sdk/permissions).
// Typed structurally so this module needs the SDK only at the caller's.
import { isPending } from '../wire.js'
import { type AdapterOptions, type SdkQuestion, answersByQuestion, askApproval, editedInput, questionRequest } from './common.js'

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

/**
 * canUseTool for `query({ options: { canUseTool } })`: a tool call becomes a
 * permission ask in Slack (its name, its input, the SDK's reason), and
 * AskUserQuestion becomes a question whose answers go back in the tool's
 * input (`answers`, keyed by question text). "Other…" text denies with that
 * text as the message Claude reads; "Edit & allow…" runs the call with the
 * text fields a person changed (AdapterOptions.edit). A timed wait that closes unanswered
 * denies (never allows) and says so; the late answer reaches the session
 * (`lateAnswers`) to resume it with `query({ prompt: message.text, options: { resume } })`.
 */
export function canUseTool(opts: AdapterOptions): ClaudeCanUseTool {
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
    const reason = options.decisionReason ?? options.description ?? options.title
    // Claude runs the updatedInput it is given: a person may edit first.
    const d = await askApproval('claude', { toolCallId: options.toolUseID, tool: toolName, input, editable: true, ...(reason ? { reason } : {}) }, opts, signal)
    switch (d.kind) {
      case 'allow':
        return { behavior: 'allow', toolUseID: options.toolUseID, updatedInput: editedInput(input, d) }
      case 'deny':
        return { behavior: 'deny', toolUseID: options.toolUseID, message: d.message }
      default:
        return { behavior: 'deny', toolUseID: options.toolUseID,
          message: `Not run: nobody has decided in Slack yet (ask ${d.callId}). The decision will arrive as a new message.` }
    }
  }
}
