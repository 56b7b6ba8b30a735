// The AI SDK's seam: a tool that needs approval makes generateText and
// streamText return `tool-approval-request` parts instead of running it; the
// app answers each with a `tool-approval-response` in a `tool` message and
// calls the model again (https://ai-sdk.dev/docs/ai-sdk-core/tools-and-tool-calling).
// Typed structurally so this module needs the SDK only at the caller's.
import type { SteeredMessage } from '../wire.js'
import { type AdapterOptions, type ApprovalDecision, askApproval, askPersonSchema, askPersonTool, callIdFor, decisionOf } from './common.js'

/** A `tool-approval-request` content part (the fields read here). */
export interface AiApprovalRequest {
  type: 'tool-approval-request'
  approvalId: string
  toolCall: { toolCallId: string; toolName: string; input: unknown }
  reason?: string
  isAutomatic?: boolean
}

/** The SDK's ToolApprovalResponse. */
export interface AiApprovalResponse {
  type: 'tool-approval-response'
  approvalId: string
  approved: boolean
  reason?: string
}

/** What became of a result's approval requests. */
export interface AiApprovals {
  /** The responses to add as `{ role: 'tool', content: responses }` before calling the model again. */
  responses: AiApprovalResponse[]
  /**
   * The requests nobody decided in time (a timed wait closed): keep them;
   * their late answers (`lateApprovalResponse`) complete the responses.
   * Never approved meanwhile.
   */
  pending: Array<{ approvalId: string; callId: string }>
}

const SDK = 'ai-sdk'

function responseOf(approvalId: string, d: ApprovalDecision): AiApprovalResponse | undefined {
  switch (d.kind) {
    case 'allow':
      return { type: 'tool-approval-response', approvalId, approved: true, reason: `Approved by ${d.by} in Slack.` }
    case 'deny':
      return { type: 'tool-approval-response', approvalId, approved: false, reason: d.message }
  }
  return undefined
}

/**
 * Asks a person about each manual approval request in a result's content
 * (automatic ones are the SDK's own), one permission ask each: "Allow"
 * approves, "Deny" denies, "Other…" text denies with that text as the
 * reason the model reads.
 */
export async function approvalResponses(result: { content: ReadonlyArray<{ type: string }> }, opts: AdapterOptions, signal?: AbortSignal): Promise<AiApprovals> {
  const out: AiApprovals = { responses: [], pending: [] }
  for (const part of result.content) {
    if (part.type !== 'tool-approval-request') continue
    const req = part as AiApprovalRequest
    if (req.isAutomatic) continue
    const d = await askApproval(SDK, { toolCallId: req.toolCall.toolCallId, tool: req.toolCall.toolName, input: req.toolCall.input,
      ...(req.reason ? { reason: req.reason } : {}) }, opts, signal)
    const resp = responseOf(req.approvalId, d)
    if (resp) out.responses.push(resp)
    else out.pending.push({ approvalId: req.approvalId, callId: d.kind === 'pending' ? d.callId : '' })
  }
  return out
}

/**
 * The response a late answer gives one of the pending requests (undefined
 * when the message answers none of them).
 */
export function lateApprovalResponse(pending: AiApprovals['pending'], msg: SteeredMessage): AiApprovalResponse | undefined {
  const p = pending.find((x) => x.callId === msg.callId)
  if (!p) return undefined
  return responseOf(p.approvalId, decisionOf({ answers: msg.answers, respondent: msg.respondent }))
}

/** The callId a tool call's approval is asked under. */
export const approvalCallId = (toolCallId: string): string => callIdFor(SDK, toolCallId)

/**
 * A question tool for `generateText({ tools: { ask_person: tool({ description:
 * spec.description, inputSchema: jsonSchema(spec.parameters), execute: (input,
 * { toolCallId, abortSignal }) => spec.execute(input, toolCallId, abortSignal) }) } })`.
 */
export const askPerson = (opts: AdapterOptions) => askPersonTool(SDK, opts, askPersonSchema())
