// What the agent-SDK adapters share: a tool approval as a permission ask,
// a question as a question ask, and the answer read back as a decision.
// Each adapter maps its SDK's seam onto these and the decision back.
import type { AskslackClient } from '../client.js'
import type { AskslackQuestion, AskRequest, AnsweredResult, AskResult, EditableField } from '../wire.js'
import { isPending } from '../wire.js'

/** Labels of a permission ask's options. */
export const ALLOW = 'Allow'
export const DENY = 'Deny'

/** What every adapter needs to ask. */
export interface AdapterOptions {
  client: AskslackClient
  /** The agent's id as Slack shows it (default: the adapter's SDK name). */
  agentId?: string
  /** The agent session the asks belong to: the SDK's thread or run id. Late answers are read per session. */
  sessionId?: string
  /**
   * How long to wait for a person. Unset: until someone answers. Set: when it
   * closes unanswered the adapter returns what its SDK takes for "not
   * decided" — never an approval — and the answer given later reaches the
   * session as a late answer, to resume from.
   */
  timeoutMs?: number
  /** Slack channel id overriding the bot's default. */
  channel?: string
  /** The repository the agent works in, for standing rules. */
  repo?: string
  /**
   * Offer "Edit & allow…" where the SDK runs an edited input (the Claude
   * Agent SDK; LangChain's HITL middleware where the action allows "edit"):
   * the top-level text fields of the tool's input, prefilled, to change
   * before allowing. Default true; false asks Allow or Deny only.
   */
  edit?: boolean
}

/** A tool call an SDK wants approved. */
export interface ToolApproval {
  /** The id of the tool call (the ask's callId is derived from it). */
  toolCallId: string
  tool: string
  input: unknown
  /** The SDK's own reason text, when it gives one. */
  reason?: string
  /** The SDK runs an edited input: a person may change the input's text fields before allowing. */
  editable?: boolean
}

/** What a person decided about a tool call, or that nobody has yet. */
export type ApprovalDecision =
  | { kind: 'allow'; by: string; edited?: Record<string, string> }
  | { kind: 'deny'; by: string; message: string }
  | { kind: 'pending'; callId: string }

/** How much of a tool's input a message shows: Slack cuts the rest. */
const MAX_INPUT = 2800

/** A short, readable account of a tool's input for the question's detail. */
export function summarizeInput(input: unknown): string {
  let text: string
  try {
    text = typeof input === 'string' ? input : JSON.stringify(input, null, 2)
  } catch {
    text = String(input)
  }
  if (text === undefined) text = ''
  if (text.length > MAX_INPUT) text = text.slice(0, MAX_INPUT) + '\n…'
  return '```\n' + text.replaceAll('```', '`\u200b``') + '\n```'
}

/** Limits of an editable field (the host's: what a Slack input holds). */
const MAX_EDIT = 3000
const MAX_EDITABLE = 4
const FIELD_NAME = /^[A-Za-z0-9_]{1,64}$/

/**
 * The top-level text fields of a tool's input a person may edit, with the
 * values given; the one that is the permission's command or path says so
 * (`of`), so the bot judges an edit of it as the call it makes.
 */
export function editableOf(input: unknown, permission?: AskRequest['permission']): EditableField[] {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return []
  const out: EditableField[] = []
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if (out.length === MAX_EDITABLE) break
    if (typeof value !== 'string' || value === '' || [...value].length > MAX_EDIT || value.includes('\0') || !FIELD_NAME.test(name)) continue
    const f: EditableField = { name, value }
    if (/[\r\n]/.test(value) || value.length > 80) f.multiline = true
    if (permission?.command !== undefined && value === permission.command) f.of = 'command'
    else if (permission?.path !== undefined && value === permission.path) f.of = 'path'
    out.push(f)
  }
  return out
}

/** The input the person allowed: the agent's, with their edits in place. */
export function editedInput<T>(input: T, d: ApprovalDecision): T {
  if (d.kind !== 'allow' || !d.edited || !input || typeof input !== 'object') return input
  return { ...input, ...d.edited }
}

/** The command or file a tool's input names, for standing rules. */
function permissionOf(tool: string, input: unknown, repo?: string): AskRequest['permission'] {
  const p: NonNullable<AskRequest['permission']> = { tool }
  if (input && typeof input === 'object') {
    const o = input as Record<string, unknown>
    // A command or a path, never both (the bot refuses both).
    const command = o.command ?? o.cmd
    const path = o.file_path ?? o.path ?? o.filePath
    if (typeof command === 'string' && command !== '') p.command = command
    else if (typeof path === 'string' && path !== '') p.path = path
  }
  if (repo) p.repo = repo
  return p
}

/** A callId the host accepts, derived from the SDK's own tool-call id. */
export function callIdFor(prefix: string, toolCallId: string): string {
  const id = `${prefix}-${toolCallId}`.replace(/[^A-Za-z0-9._:-]/g, '_')
  return id.length > 128 ? id.slice(0, 128) : id
}

/** The permission ask of a tool approval. */
export function approvalRequest(sdk: string, a: ToolApproval, o: AdapterOptions): AskRequest {
  const detail = [a.reason ? `_${a.reason}_` : '', summarizeInput(a.input)].filter(Boolean).join('\n\n')
  const req: AskRequest = {
    callId: callIdFor(sdk, a.toolCallId),
    agent: { id: o.agentId ?? sdk, ...(o.sessionId ? { sessionId: o.sessionId } : {}) },
    questions: [{
      id: 'permission', header: 'Permission', question: `Allow ${a.tool}?`, detail,
      options: [{ label: ALLOW, description: 'Run it as asked' }, { label: DENY, description: 'Do not run it' }],
    }],
    permission: permissionOf(a.tool, a.input, o.repo),
  }
  if (a.editable && o.edit !== false) {
    const editable = editableOf(a.input, req.permission)
    if (editable.length > 0) req.permission!.editable = editable
  }
  if (o.timeoutMs !== undefined) req.timeoutMs = o.timeoutMs
  if (o.channel) req.channel = o.channel
  return req
}

/** Who answered, in words. */
export function answeredBy(r: AnsweredResult): string {
  return r.respondent.userName || r.respondent.userId || r.respondent.surface || 'someone'
}

/**
 * Reads an approval's answer: "Allow" allows; "Deny" denies; text typed in
 * "Other…" denies with that text as the message the agent reads (it is what
 * the person wants the agent to do instead). A timed wait that closed is
 * pending, never allowed.
 */
export function decisionOf(r: AskResult): ApprovalDecision {
  if (isPending(r)) return { kind: 'pending', callId: r.callId }
  const it = r.answers.find((a) => a.id === 'permission') ?? r.answers[0]
  const by = answeredBy(r)
  if (it?.custom) return { kind: 'deny', by, message: it.custom }
  if (it?.selected.includes(ALLOW)) {
    return it.edited && Object.keys(it.edited).length > 0 ? { kind: 'allow', by, edited: { ...it.edited } } : { kind: 'allow', by }
  }
  return { kind: 'deny', by, message: `Denied by ${by} in Slack.` }
}

/** Asks a person about a tool call and returns their decision. */
export async function askApproval(sdk: string, a: ToolApproval, o: AdapterOptions, signal?: AbortSignal): Promise<ApprovalDecision> {
  const r = await o.client.ask(approvalRequest(sdk, a, o), signal ? { signal } : {})
  return decisionOf(r)
}

/** A question for a person, as the SDKs' question tools carry it. */
export interface SdkQuestion {
  question: string
  header?: string
  options?: Array<{ label: string; description?: string; preview?: string }>
  multiSelect?: boolean
}

/** The question ask of a question tool's call. */
export function questionRequest(sdk: string, toolCallId: string, qs: SdkQuestion[], o: AdapterOptions): AskRequest {
  const questions: AskslackQuestion[] = qs.map((q, i) => {
    const out: AskslackQuestion = { id: `q${i}`, question: q.question }
    if (q.header) out.header = q.header
    if (q.options?.length) out.options = q.options.map((op) => ({ label: op.label, ...(op.description ? { description: op.description } : {}), ...(op.preview ? { preview: op.preview } : {}) }))
    if (q.multiSelect) out.multiSelect = true
    return out
  })
  const req: AskRequest = {
    callId: callIdFor(sdk, toolCallId),
    agent: { id: o.agentId ?? sdk, ...(o.sessionId ? { sessionId: o.sessionId } : {}) },
    questions,
  }
  if (o.timeoutMs !== undefined) req.timeoutMs = o.timeoutMs
  if (o.channel) req.channel = o.channel
  return req
}

/**
 * The answers of a question ask keyed by question text, each the chosen
 * labels joined with ", " and any typed text after them (Claude Code's
 * AskUserQuestion reads answers this way).
 */
export function answersByQuestion(qs: SdkQuestion[], r: AnsweredResult): Record<string, string> {
  const out: Record<string, string> = {}
  qs.forEach((q, i) => {
    const it = r.answers.find((a) => a.id === `q${i}`)
    if (!it) return
    out[q.question] = [...it.selected, ...(it.custom ? [it.custom] : [])].join(', ')
  })
  return out
}

/**
 * A JSON schema, the part the ask-a-person tool uses. Typed with mutable
 * arrays and literal `type`s so that it fits what each SDK's `tool()` takes
 * without a cast: the AI SDK's `jsonSchema()` (JSON Schema 7) and
 * `@openai/agents`' `parameters` (`JsonObjectSchema`).
 */
export interface JsonSchema {
  type: 'object' | 'array' | 'string' | 'boolean' | 'number' | 'integer'
  description?: string
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  required?: string[]
  additionalProperties?: boolean
}

/**
 * A JSON schema of an object (a tool's input). `Open` is its top level's
 * `additionalProperties`: `@openai/agents` takes `false` only for strict tools
 * and `true` only for non-strict ones.
 */
export interface JsonObjectSchema<Open extends boolean = false> extends JsonSchema {
  type: 'object'
  properties: Record<string, JsonSchema>
  required: string[]
  additionalProperties: Open
}

/** The JSON schema of the ask-a-person tool's input (a fresh copy each call: callers may change theirs). */
export function askPersonSchema(): JsonObjectSchema {
  return {
    type: 'object',
    properties: {
      question: { type: 'string', description: 'The question, in one or two sentences.' },
      options: {
        type: 'array',
        description: 'The answers to offer (2 to 10); the person may also type their own.',
        items: { type: 'object', properties: { label: { type: 'string' }, description: { type: 'string' } }, required: ['label'], additionalProperties: false },
      },
      multiSelect: { type: 'boolean', description: 'Whether several options may be chosen.' },
    },
    required: ['question', 'options'],
    additionalProperties: false,
  }
}

/** The ask-a-person tool's input. */
export interface AskPersonInput {
  question: string
  options: Array<{ label: string; description?: string }>
  multiSelect?: boolean
}

/**
 * Whether input is an AskPersonInput. The SDKs hand `execute` what the model
 * sent, unchecked against the schema (a JSON schema types it `unknown`).
 */
export function isAskPersonInput(input: unknown): input is AskPersonInput {
  if (!input || typeof input !== 'object') return false
  const o = input as Record<string, unknown>
  return typeof o.question === 'string' && o.question.trim() !== '' && Array.isArray(o.options) &&
    o.options.every((op) => !!op && typeof op === 'object' && typeof (op as Record<string, unknown>).label === 'string' &&
      ['string', 'undefined'].includes(typeof (op as Record<string, unknown>).description)) &&
    (o.multiSelect === undefined || typeof o.multiSelect === 'boolean')
}

/**
 * A question tool for SDKs that have none of their own: its name,
 * description, JSON-schema input and execute, to wrap with the SDK's own
 * `tool()` (`@openai/agents`' `tool({ ...spec, parameters: spec.parameters })`,
 * the AI SDK's `tool({ ..., inputSchema: jsonSchema(spec.parameters) })`).
 * The result is what the model reads: the chosen labels, or the typed text;
 * when a timed wait closes unanswered, that nobody has answered yet (the
 * answer then arrives as a late answer of the session).
 */
export function askPersonTool<P extends JsonObjectSchema<boolean>>(sdk: string, opts: AdapterOptions, parameters: P) {
  let n = 0
  return {
    name: 'ask_person',
    description: 'Ask a person on the team a question in Slack and wait for their answer. Use it when a decision is theirs to make.',
    parameters,
    /**
     * Asks the question and returns what the model reads. `input` is what the
     * model sent (the SDKs type it `unknown`); one that does not fit the
     * schema is refused with a text saying what the tool takes.
     */
    async execute(input: unknown, toolCallId?: string, signal?: AbortSignal): Promise<string> {
      if (!isAskPersonInput(input)) {
        return 'ask_person was not asked: it takes {"question": string, "options": [{"label": string, "description"?: string}], "multiSelect"?: boolean}.'
      }
      const id = toolCallId ?? `${Date.now().toString(36)}-${++n}`
      const qs: SdkQuestion[] = [{ question: input.question, options: input.options, ...(input.multiSelect ? { multiSelect: true } : {}) }]
      const r = await opts.client.ask(questionRequest(sdk, id, qs, opts), signal ? { signal } : {})
      if (isPending(r)) return `Nobody has answered yet (ask ${r.callId}); the answer will arrive later as a new message. Go on without it.`
      const it = r.answers[0]
      const who = answeredBy(r)
      if (it?.custom && !it.selected.length) return `${who} answered: ${it.custom}`
      return `${who} chose: ${[...(it?.selected ?? []), ...(it?.custom ? [it.custom] : [])].join(', ')}`
    },
  }
}
