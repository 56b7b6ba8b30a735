/**
 * The user-questions seam of seed `000_*`, copied from its TypeScript. Field
 * names and comments are the seed's; where askslack needs a type the seed only
 * names (`Agent`, `ToolCallId`, `HarnessError`, `Scoped`), a minimal
 * structural stand-in is declared and marked as such.
 *
 * @module
 */

/** Stand-in: the seed's tool call identity. */
export type ToolCallId = string

/**
 * Stand-in for the seed's `Agent`: the fields askslack reads. A harness's own
 * agent object is structurally compatible when it carries at least `id`.
 * `sessionId` names the session whose queue receives late answers; `ownerId`
 * is set for an agent owned by another agent (which may not ask a human:
 * `DELEGATED_CALLER`); `principal` is the end user the agent acts for.
 */
export interface Agent {
  id: string
  sessionId?: string
  ownerId?: string
  principal?: string
}

/** Stand-in for the seed's `Scoped<T>`: the `this` of a scope-filtered listener. */
export type Scoped<T> = { readonly scope?: T } | undefined

/** One selectable answer offered to the user. */
export interface AskUserQuestionOption {
  /** User-facing label. */
  label: string
  /** Optional extra context rendered by capable UIs. */
  description?: string
}

/**
 * A caller-declared presentation intent: the question IS this kind of
 * decision, so a UI that recognises the tag may present it as such instead of as a
 * generic option list. Tagged so further intents can be added; a UI that does
 * not know a tag renders the generic flow, and the answer encoding is identical
 * either way — an intent changes presentation only, never the protocol.
 */
export type AskUserQuestionIntent = {
  /** A plan submitted for review: `detail` is the plan markdown `ask()` requires, and the decision approves or declines it. */
  kind: 'plan-review'
  /**
   * The option label that approves the plan; every other option declines it.
   * Named rather than positional so no UI infers the verdict from option order.
   * An `approve` naming no option of its own question is rejected at `ask()`.
   */
  approve: string
  /** Logged tool invocation whose arguments contain the reviewed plan. */
  callId?: ToolCallId
}

/** One question in a user-questions request. */
export interface AskUserQuestionItem {
  /** Stable caller-provided question id, echoed in the answer. */
  id: string
  /** The question to display. */
  question: string
  /** Optional supporting detail rendered with the question but kept out of option labels. */
  detail?: string
  /** Optional short heading/group label. */
  header?: string
  /** Optional choices the UI can render as a menu. */
  options?: AskUserQuestionOption[]
  /** Whether more than one option may be selected. Defaults to single-select. */
  multiSelect?: boolean
  /** Optional presentation intent for capable UIs; absent asks for the generic option list. */
  intent?: AskUserQuestionIntent
}

/** Client-safe payload declared for the user-question answerer waterfall. */
export interface AskUserQuestionRequestEvent {
  /** Questions to display. */
  questions: AskUserQuestionItem[]
  /** Agent identity projected to the corresponding Client Context in transit. */
  agent?: Agent
  /** Cancellation lifetime of the pending request. */
  signal?: AbortSignal
  /**
   * Tool call the Client card is keyed by. Timed answerers attach to the
   * business wait stream before starting their local countdown.
   */
  wait?: {
    /** Tool call the Client card is keyed by. */
    callId: ToolCallId
    /** True for a foreground wait that requires a Client claim; absent for indefinite waits. */
    timed?: boolean
  }
}

/** Request for a human answer. */
export interface AskUserQuestionRequest extends AskUserQuestionRequestEvent {}

/** Answer to one question. */
export interface AskUserQuestionAnswerItem {
  /** The answered question id. */
  id: string
  /** Selected option labels. May accompany custom text for a multi-select question. */
  selected: string[]
  /** Optional free-text "Other" answer. */
  custom?: string
}

/** The human's answer. */
export interface AskUserQuestionAnswer {
  /** Structured answers keyed by question id. */
  answers: AskUserQuestionAnswerItem[]
}

/** Timed ask result returned when the foreground answer window closes. */
export type TimedUserQuestionResult = AskUserQuestionAnswer | { pending: true; callId: ToolCallId }

/** `open` while the tool call may still return the answer; `continued` once the answer can only arrive as a new turn. */
export type UserQuestionState = 'open' | 'continued'

/** One unanswered timed `ask_user_question` call reconstructed from the Session log. */
export interface PendingUserQuestion {
  readonly callId: ToolCallId
  readonly questions: readonly AskUserQuestionItem[]
  readonly state: UserQuestionState
}

/**
 * One timed `ask_user_question` call and the answers it settled with: the
 * batch its own result carried when the user answered inside the window,
 * otherwise the batch its late reply carried, because that call's own result
 * recorded the timeout. A transcript row reads what the user finally answered
 * from here, and only a call listed here was a timed one.
 */
export interface SettledUserQuestion {
  /** The settled call. */
  readonly callId: ToolCallId
  /** The recorded batch, one entry per question; empty when the late reply carried none. */
  readonly answers: readonly AskUserQuestionAnswerItem[]
}

/**
 * Both halves of one Session's timed `ask_user_question` state, as every
 * Client reads them. A call made while the blocking legacy tool was in
 * effect appears in neither half.
 */
export interface UserQuestionProjectionView {
  /** Calls that can still take an answer, in ask order. */
  readonly active: readonly PendingUserQuestion[]
  /** Calls an answer settled, in settlement order. */
  readonly settled: readonly SettledUserQuestion[]
}

/** Stand-in for the seed's `HarnessError`: an `Error` with a stable `code`. */
export class HarnessError extends Error {
  /** Stable machine-readable code. */
  readonly code: string
  constructor(message: string, code: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    this.name = 'HarnessError'
  }
}

/** Stable error taxonomy for user-questions failures. */
export class UserQuestionError extends HarnessError {
  /** askslack addition: the HTTP status the host API answered with, when the error came from it. */
  status?: number
  constructor(message: string, code: string, options?: ErrorOptions) {
    super(message, code, options)
    this.name = 'UserQuestionError'
  }
}

/**
 * The codes a {@link UserQuestionError} carries: the seed's (`EMPTY_QUESTIONS`,
 * `BAD_TIMEOUT`, `BAD_ANSWER`, `DELEGATED_CALLER`, `CALLER_NOT_LIVE`,
 * `REPLY_QUEUED`, `ASK_ABORTED`, `ASK_TIMED_OUT`, `NO_PROVIDER`) and the ones
 * askslack's host API adds.
 */
export type UserQuestionErrorCode =
  | 'EMPTY_QUESTIONS'
  | 'BAD_REQUEST'
  | 'BAD_TIMEOUT'
  | 'BAD_ANSWER'
  | 'DELEGATED_CALLER'
  | 'CALLER_NOT_LIVE'
  | 'REPLY_QUEUED'
  | 'ASK_ABORTED'
  | 'ASK_TIMED_OUT'
  | 'NO_PROVIDER'
  | 'NOT_FOUND'
  | 'CALL_CONFLICT'
  | 'NOT_CONTINUED'
  | 'ALREADY_SETTLED'
  | 'UNAVAILABLE'
  | 'UNAUTHORIZED'
  | 'INTERNAL'
  // askslack's own, beyond the seed's: a session at its limit of active
  // asks (429), a route the caller's role does not allow (403), an ask
  // naming another principal than the one its caller is bound to (403).
  | 'SESSION_FULL'
  | 'FORBIDDEN'
  | 'PRINCIPAL_MISMATCH'

/**
 * The `'user-questions/request'` waterfall listener: return an answer to
 * claim the request or call `next()` to delegate.
 */
export type UserQuestionAnswerer = (
  this: Scoped<Agent> | void,
  request: AskUserQuestionRequestEvent,
  next: () => Promise<AskUserQuestionAnswer>,
) => Promise<AskUserQuestionAnswer>
