/**
 * askslack's host API JSON (see the repository README and
 * `waterfall/types.go`, `waterfall/steer.go`, `hostapi/server.go`).
 * The seed's fields keep the seed's names; askslack's additions sit beside them.
 *
 * @module
 */
import type {
  AskUserQuestionAnswerItem,
  AskUserQuestionIntent,
  ToolCallId,
  UserQuestionProjectionView,
} from './seed000.js'

/** The asking agent as askslack stores it. */
export interface AskslackAgent {
  /** Required by the host API. */
  id: string
  /** The session whose queue receives late answers (`GET /v1/sessions/{id}/messages`). */
  sessionId?: string
  /** Set for an agent owned by another agent; such an agent may not ask a human (`DELEGATED_CALLER`). */
  ownerId?: string
  /** The end user the agent acts for (seed 004's `principal`). */
  principal?: string
  /** The issuing task (seed 004's `sourceTaskId`). */
  sourceTaskId?: string
}

/** An option as askslack takes it: seed 000's plus seed 004's `preview`. */
export interface AskslackOption {
  label: string
  description?: string
  preview?: string
}

/** A question as askslack takes it (seed 000's `AskUserQuestionItem`, options with `preview`). */
export interface AskslackQuestion {
  id: string
  question: string
  detail?: string
  header?: string
  options?: AskslackOption[]
  multiSelect?: boolean
  intent?: AskUserQuestionIntent
}

/** Body of `POST /v1/asks`. */
export interface AskRequest {
  /** Idempotency key: a repeat re-attaches to the same question, never posts twice. */
  callId: ToolCallId
  agent: AskslackAgent
  questions: AskslackQuestion[]
  /** Makes the ask timed: when the window closes the result is `{pending: true, callId}`. */
  timeoutMs?: number
  /** Slack channel id overriding the bot's default (`ASKSLACK_CHANNEL`). */
  channel?: string
  /** Set on a tool-permission ask (its question's id is `permission`): what standing rules match. */
  permission?: AskslackPermission
}

/** What a tool-permission ask is about: the tool, and the command or file it acts on. */
export interface AskslackPermission {
  tool: string
  command?: string
  path?: string
  repo?: string
  /** Fields of the tool's input a person may change before allowing it ("Edit & allow…"): list them only when the agent runs the edited input. */
  editable?: EditableField[]
}

/** One field of a tool's input a person may edit: its key in the input, and the value the agent gave (at most 3,000 characters). */
export interface EditableField {
  name: string
  label?: string
  value: string
  multiline?: boolean
  /** `"command"` or `"path"`: the field is also the permission's command or path (same value), so rules and quorum judge an edit of it as the call it makes. */
  of?: 'command' | 'path'
}

/** An answer item as askslack returns it: the seed's, plus `edited` on a tool permission allowed with changes. */
export interface AnswerItem extends AskUserQuestionAnswerItem {
  /** New values for the permission's editable fields, by name (only those the person changed): run the call with them. */
  edited?: Record<string, string>
}

/** Who answered, when and through which surface. It travels beside the seed's answers. */
export interface Respondent {
  userId?: string
  userName?: string
  /** RFC 3339 time. */
  at: string
  /** `"slack"` or `"api"`. */
  surface: string
  channel?: string
  messageTs?: string
}

/** `POST /v1/asks` when answered: the seed's batch plus `respondent`. */
export interface AnsweredResult {
  answers: AnswerItem[]
  respondent: Respondent
}

/** `POST /v1/asks` when a timed window closed first. */
export interface PendingResult {
  pending: true
  callId: ToolCallId
}

/** What `POST /v1/asks` returns with status 200. */
export type AskResult = AnsweredResult | PendingResult

/** True when an ask result is the pending one. */
export function isPending(r: AskResult | { pending?: unknown }): r is PendingResult {
  return (r as { pending?: unknown }).pending === true
}

/** The state of one ask. */
export type AskState = 'open' | 'continued' | 'settled' | 'aborted'

/** Where the Slack message of an ask lives. */
export interface MessageRef {
  channel: string
  ts: string
  [k: string]: unknown
}

/** A late answer delivered to the agent as a user message whose source names the call. */
export interface SteeredMessage {
  /** `reply:<callId>`; acknowledge it with this id. */
  id: string
  callId: ToolCallId
  source: { kind: 'user-question'; callId: ToolCallId }
  answers: AnswerItem[]
  respondent: Respondent
  /** The answer rendered for a model: labels quoted, typed text fenced as untrusted data. */
  text: string
  /** RFC 3339 time the late answer arrived. */
  queuedAt: string
}

/** `GET /v1/asks/{callId}` (also what `DELETE` returns). */
export interface AskStatus {
  callId: ToolCallId
  state: AskState
  agent: AskslackAgent
  questions: AskslackQuestion[]
  created: string
  deadline?: string
  /** Set once settled. */
  answers?: AnswerItem[]
  respondent?: Respondent
  /** A late answer waiting for the agent to admit it. */
  reply?: SteeredMessage
  message?: MessageRef
  version: number
}

/** Body of `POST /v1/asks/{callId}/answer`. */
export interface AnswerBody {
  answers: AnswerItem[]
  respondent?: { userId?: string; userName?: string }
}

/** What `POST /v1/asks/{callId}/answer` returns: `continued` is the seed's `answer()` result. */
export interface AnswerResult {
  state: AskState
  continued: boolean
  /** Set when the answer was queued as a steered message. */
  messageId?: string
}

/** What `POST /v1/sessions/{id}/messages/{id}/ack` returns. */
export interface AckResult {
  acked: boolean
  callId: ToolCallId
  state: AskState
}

/** `GET /v1/sessions/{id}/questions`: the seed's projection of the session's timed questions. */
export type Projection = UserQuestionProjectionView
