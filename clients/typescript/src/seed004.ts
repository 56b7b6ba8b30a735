/**
 * The AskUserQuestion seam of seed `004_*` (a peer harness's tool), copied
 * from its TypeScript declarations: the request the harness hands to its
 * `onQuestion`, and the header-keyed answer with a free-text `note` it expects
 * back.
 *
 * @module
 */

export interface AskQuestionOption {
  /** The choice text the user picks. */
  label: string
  /** What this option means / its trade-off. */
  description: string
  /** Optional preview content (mockup / code snippet / comparison) shown while this option is focused. The
   *  engine only TRANSPORTS it — it rides the {@link AskQuestionRequest} to `onQuestion` untouched. */
  preview?: string
}

export interface AskQuestion {
  /** The full question. */
  question: string
  /** A short header/label (≤ ~12 chars) for UIs. */
  header: string
  /** 2-4 mutually-exclusive choices (unless multiSelect). */
  options: AskQuestionOption[]
  /** Allow selecting more than one option. */
  multiSelect?: boolean
}

export interface AskQuestionRequest {
  toolCallId: string
  /** 1-4 questions. */
  questions: AskQuestion[]
  /** Runner-filled source identity: the issuing task's end-user principal, for per-user attribution by an
   *  AGGREGATING onQuestion. Undefined ⇒ none. */
  readonly principal?: string
  /** Runner-filled source-task identity (= issuing task's session id), for per-worker attribution by an
   *  aggregating onQuestion. */
  readonly sourceTaskId?: string
}

/** One question's answer: the selected option label(s) + an optional free-text note. */
export interface QuestionAnswerItem {
  header: string
  selected: string[]
  note?: string
}

export interface QuestionAnswer {
  answers: QuestionAnswerItem[]
}

/**
 * The content-ask seam: the deployment routes an AskUserQuestion to a real human/UI and returns their
 * selection. `signal` fires on task abort: race your wait so an unanswered question is released at the
 * deadline (it does not hang the worker).
 */
export type OnQuestion = (req: AskQuestionRequest, signal?: AbortSignal) => Promise<QuestionAnswer>
