/**
 * AskslackClient: a dependency-free client of askslack's host API.
 *
 * @module
 */
import { UserQuestionError } from './seed000.js'
import { nodeHttpFetch, onNode } from './nodefetch.js'
import type { UserQuestionProjectionView } from './seed000.js'
import type {
  AckResult,
  AnswerBody,
  AnswerResult,
  AskRequest,
  AskResult,
  AskStatus,
  SteeredMessage,
} from './wire.js'

/** The subset of `fetch` the client uses; pass your own to add proxies, timeouts or tracing. */
export type FetchLike = (input: string, init: {
  method: string
  headers: Record<string, string>
  body?: string
  signal?: AbortSignal
}) => Promise<{
  status: number
  headers: { get(name: string): string | null }
  text(): Promise<string>
}>

export interface AskslackClientOptions {
  /** Where the bot listens (`ASKSLACK_URL`), e.g. `http://127.0.0.1:8080`. */
  url: string
  /** Bearer token (`ASKSLACK_TOKEN`, one of the bot's `ASKSLACK_API_TOKENS`); omit for a loopback bot without tokens. */
  token?: string
  /**
   * The fetch to use. Default: on Node a small fetch over `node:http` (Node's
   * built-in fetch gives up after 300 s without response headers, and a
   * blocking ask waits for a person for as long as it takes); elsewhere
   * `globalThis.fetch`. If you pass Node's or undici's fetch, give it a
   * dispatcher without `headersTimeout`/`bodyTimeout`.
   */
  fetch?: FetchLike
  /**
   * How long `ask()` keeps re-sending the same request (same `callId`, which
   * re-attaches to the open question) through an unbroken run of transient
   * failures: the bot unreachable, a connection reset or cut short, a replica
   * draining (`UNAVAILABLE`), 502/503/504 from a proxy. An attempt that
   * stayed connected for a while (a long wait cut by a proxy's idle timeout)
   * starts a fresh run. Default 120 000 ms; 0 disables.
   */
  reattachMs?: number
  /** How long the `DELETE` that withdraws an aborted ask may take. Default 10 000 ms. */
  withdrawTimeoutMs?: number
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the HTTP request. For `ask()` it also withdraws the question (see {@link AskslackClient.ask}). */
  signal?: AbortSignal
}

/** Options of {@link AskslackClient.get}. */
export interface GetOptions extends CallOptions {
  /** Long-poll: wait up to this long (≤ 300 000 ms) for the ask's version to change, in any state. */
  waitMs?: number
  /** With `waitMs`: the version the caller has seen; a change made since returns at once. */
  version?: number
}

/** Backoff between re-attaches; an attempt longer than the maximum was attached. */
const reattachMinMs = 200
const reattachMaxMs = 5_000

/** The error an aborted ask rejects with. */
export function askAborted(callId: string, reason?: unknown): UserQuestionError {
  return new UserQuestionError(`the ask ${callId} was withdrawn: the caller aborted it`, 'ASK_ABORTED', { cause: reason })
}

const seg = encodeURIComponent

/**
 * A client of askslack's host API. Every failure the API reports
 * (`{"error":{"code","message"}}`) rejects with a {@link UserQuestionError}
 * carrying that `code` and the HTTP `status`; an unreachable bot rejects with
 * code `UNAVAILABLE`.
 */
export class AskslackClient {
  readonly url: string
  readonly #token: string | undefined
  #fetch: FetchLike | Promise<FetchLike>
  readonly #reattachMs: number
  readonly #withdrawTimeoutMs: number

  constructor(opts: AskslackClientOptions) {
    if (!opts || !opts.url) throw new TypeError('AskslackClient: url is required')
    this.url = opts.url.replace(/\/+$/, '')
    this.#token = opts.token || undefined
    if (opts.fetch) {
      this.#fetch = opts.fetch
    } else if (onNode()) {
      const f = nodeHttpFetch()
      f.catch(() => {}) // reported by the first request instead
      this.#fetch = f
    } else if (globalThis.fetch) {
      this.#fetch = globalThis.fetch as unknown as FetchLike
    } else {
      throw new TypeError('AskslackClient: no fetch available; pass options.fetch')
    }
    this.#reattachMs = opts.reattachMs ?? 120_000
    this.#withdrawTimeoutMs = opts.withdrawTimeoutMs ?? 10_000
  }

  /**
   * `POST /v1/asks`: ask and wait. Resolves with `{answers, respondent}` once a
   * person answers, or `{pending: true, callId}` when a timed window
   * (`timeoutMs`) closes first.
   *
   * On a transient failure (see `reattachMs`) it re-sends the same request,
   * which re-attaches to the open question. A request that merely goes away
   * does not withdraw the question: the bot keeps it for its re-attach grace
   * (`ASKSLACK_REATTACH_GRACE`).
   *
   * When `signal` aborts (or is already aborted) it aborts the request, sends
   * `DELETE /v1/asks/{callId}` so the Slack message says the agent withdrew
   * the question, and rejects with `UserQuestionError` code `ASK_ABORTED`
   * (`cause` is the signal's reason). An already-aborted signal posts nothing.
   */
  async ask(request: AskRequest, opts: CallOptions = {}): Promise<AskResult> {
    const { signal } = opts
    if (signal?.aborted) throw askAborted(request.callId, signal.reason)
    const ctrl = new AbortController()
    const onAbort = () => ctrl.abort(signal?.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    let backoff = reattachMinMs
    let failingSince: number | undefined
    try {
      for (;;) {
        const began = Date.now()
        try {
          return await this.#do<AskResult>('POST', '/v1/asks', request, ctrl.signal)
        } catch (err) {
          if (signal?.aborted) {
            await this.#withdraw(request.callId)
            throw askAborted(request.callId, signal.reason)
          }
          if (Date.now() - began > reattachMaxMs) {
            // It was attached for a while: a new run, counted from this
            // failure (counted from when the attempt began, a long wait cut
            // by a proxy would give up at once).
            failingSince = Date.now()
            backoff = reattachMinMs
          }
          failingSince ??= began
          if (!retryable(err) || Date.now() + backoff > failingSince + this.#reattachMs) throw err
        }
        const retry = await sleep(backoff, ctrl.signal)
        if (!retry) {
          await this.#withdraw(request.callId)
          throw askAborted(request.callId, signal?.reason)
        }
        backoff = Math.min(backoff * 2, reattachMaxMs)
      }
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  }

  /**
   * `GET /v1/asks/{callId}`: the ask's state now, or — with `waitMs` — once
   * its version changes (from `version` when given), in any state.
   */
  get(callId: string, opts: GetOptions = {}): Promise<AskStatus> {
    let q = waitQuery(opts.waitMs)
    if (q && opts.version !== undefined) q += `&version=${Math.floor(opts.version)}`
    return this.#do('GET', `/v1/asks/${seg(callId)}${q}`, undefined, opts.signal)
  }

  /**
   * `POST /v1/asks` with `Prefer: respond-async`: the bot stores and posts the
   * question and answers `202` at once with its status; the question lives
   * until answered, withdrawn or retention. Follow it with `get(callId,
   * {waitMs, version})`.
   */
  start(request: AskRequest, opts: CallOptions = {}): Promise<AskStatus> {
    return this.#do('POST', '/v1/asks', request, opts.signal, { prefer: 'respond-async' })
  }

  /**
   * `DELETE /v1/asks/{callId}`: withdraw the question (the Slack message says
   * the agent withdrew it). Withdrawing twice is not an error; an answered ask
   * rejects with `ALREADY_SETTLED`.
   */
  abort(callId: string, opts: CallOptions = {}): Promise<AskStatus> {
    return this.#do('DELETE', `/v1/asks/${seg(callId)}`, undefined, opts.signal)
  }

  /**
   * `POST /v1/asks/{callId}/answer`: answer from another UI. Inside the window
   * (or untimed) it settles the ask; after the window it queues a steered
   * message for the agent (`continued: true`, `messageId`). Errors:
   * `BAD_ANSWER`, `NOT_FOUND`, `ALREADY_SETTLED`, `REPLY_QUEUED`, `ASK_ABORTED`.
   */
  answer(callId: string, body: AnswerBody, opts: CallOptions = {}): Promise<AnswerResult> {
    return this.#do('POST', `/v1/asks/${seg(callId)}/answer`, body, opts.signal)
  }

  /**
   * `GET /v1/sessions/{sessionId}/messages`: the late answers waiting for the
   * session's agent, oldest first. With `waitMs` it long-polls until one is
   * waiting or the time passes (then resolves with `[]`).
   */
  async messages(sessionId: string, waitMs?: number, opts: CallOptions = {}): Promise<SteeredMessage[]> {
    const res = await this.#do<{ messages: SteeredMessage[] | null }>(
      'GET', `/v1/sessions/${seg(sessionId)}/messages${waitQuery(waitMs)}`, undefined, opts.signal)
    return res.messages ?? []
  }

  /**
   * `POST /v1/sessions/{sessionId}/messages/{id}/ack`: the agent admitted the
   * message; the question becomes settled. Acknowledging twice is not an error.
   */
  ack(sessionId: string, id: string, opts: CallOptions = {}): Promise<AckResult> {
    return this.#do('POST', `/v1/sessions/${seg(sessionId)}/messages/${seg(id)}/ack`, undefined, opts.signal)
  }

  /** `GET /v1/sessions/{sessionId}/questions`: the session's timed questions, `{active, settled}`. */
  projection(sessionId: string, opts: CallOptions = {}): Promise<UserQuestionProjectionView> {
    return this.#do('GET', `/v1/sessions/${seg(sessionId)}/questions`, undefined, opts.signal)
  }

  /** Best-effort withdrawal after an abort: errors are ignored (the ask may be answered, or never stored). */
  async #withdraw(callId: string): Promise<void> {
    try {
      await this.abort(callId, { signal: AbortSignal.timeout(this.#withdrawTimeoutMs) })
    } catch {
      // NOT_FOUND: the ask never reached the bot (and the closed request
      // withdraws it if it does); ALREADY_SETTLED: an answer won the race.
    }
  }

  async #do<T>(method: string, path: string, body: unknown, signal: AbortSignal | undefined, extra: Record<string, string> = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...extra }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.#token) headers.authorization = `Bearer ${this.#token}`
    const url = this.url + path
    let res: Awaited<ReturnType<FetchLike>>
    let text: string
    try {
      const f = await this.#fetch
      res = await f(url, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      })
      text = await res.text()
    } catch (err) {
      if (signal?.aborted) throw err
      const e = new UserQuestionError(`askslack unreachable: ${method} ${url}: ${describe(err)}`, 'UNAVAILABLE', { cause: err })
      throw e
    }
    let data: unknown
    try {
      data = text === '' ? undefined : JSON.parse(text)
    } catch {
      data = undefined
    }
    if (res.status < 200 || res.status > 299) {
      const eb = (data as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
      const e = typeof eb?.code === 'string'
        ? new UserQuestionError(typeof eb.message === 'string' ? eb.message : eb.code, eb.code)
        : new UserQuestionError(`askslack: ${method} ${path}: HTTP ${res.status}: ${text.trim().slice(0, 500)}`,
          res.status === 502 || res.status === 503 || res.status === 504 ? 'UNAVAILABLE' : 'INTERNAL')
      e.status = res.status
      throw e
    }
    if (data === undefined) {
      throw new UserQuestionError(`askslack: ${method} ${path}: HTTP ${res.status} with a body that is not JSON`, 'INTERNAL')
    }
    return data as T
  }
}

function waitQuery(waitMs: number | undefined): string {
  if (waitMs === undefined || waitMs <= 0) return ''
  return `?waitMs=${Math.min(Math.floor(waitMs), 300_000)}`
}

/**
 * A failure that re-sending the same callId can heal: the bot unreachable or
 * restarting, a connection reset, a replica shutting down, 502/503/504.
 */
function retryable(err: unknown): boolean {
  return err instanceof UserQuestionError && err.code === 'UNAVAILABLE'
}

/** Resolves true after ms, or false as soon as signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false)
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(true) }, ms)
    const onAbort = () => { clearTimeout(t); resolve(false) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause
    const c = cause instanceof Error ? `: ${(cause as { code?: string }).code ?? cause.message}` : ''
    return err.message + c
  }
  return String(err)
}
