/**
 * lateAnswers: read a session's queue of late answers (steered user
 * messages) and acknowledge each once the agent has taken it in.
 *
 * @module
 */
import type { AskslackClient } from './client.js'
import { UserQuestionError } from './seed000.js'
import type { AckResult, SteeredMessage } from './wire.js'

export interface LateAnswersOptions {
  /** Long-poll window of one read, ≤ 300 000 ms. Default 25 000. */
  waitMs?: number
  /** Ends the iteration (cleanly) and any read in flight. */
  signal?: AbortSignal
}

/**
 * A session's late answers. Either iterate —
 *
 * ```ts
 * for await (const msg of lateAnswers(client, sessionId, { signal })) {
 *   await agent.steer(msg.text)        // acknowledged when the body is done with it
 * }
 * ```
 *
 * — or use `read()` and `ack()` yourself.
 */
export interface LateAnswers extends AsyncIterable<SteeredMessage> {
  readonly sessionId: string
  /**
   * The messages waiting now, oldest first; with `waitMs` (default the
   * options' `waitMs`; 0 = don't wait) waits until one arrives or the time
   * passes (then `[]`). A message stays in the queue until acknowledged.
   */
  read(waitMs?: number): Promise<SteeredMessage[]>
  /** The agent admitted the message: the question becomes settled. Idempotent. */
  ack(message: SteeredMessage | string): Promise<AckResult>
}

/**
 * The late answers of `sessionId` (the `agent.sessionId` the asks carried).
 *
 * The async iterator long-polls the queue and yields each message. A message
 * the loop body received is acknowledged when the body is done with it: when
 * the loop comes back for the next one, and equally when the loop is left —
 * `break`, `return`, or a throw (a `for await` loop tells its iterator only
 * that it was left, not how). So the natural loop that takes one answer and
 * stops is correct: the next read, by this process or another, never
 * delivers that answer again. To keep a message queued when handling it
 * fails, use `read()` and `ack()` instead. Messages of a batch the loop never
 * received stay queued. The iterator ends when `signal` aborts.
 */
export function lateAnswers(client: AskslackClient, sessionId: string, opts: LateAnswersOptions = {}): LateAnswers {
  const waitMs = opts.waitMs ?? 25_000
  const signal = opts.signal
  const read = async (w: number = waitMs): Promise<SteeredMessage[]> =>
    client.messages(sessionId, w, signal ? { signal } : {})
  const ack = (message: SteeredMessage | string): Promise<AckResult> =>
    client.ack(sessionId, typeof message === 'string' ? message : message.id)
  const consumed = async (msg: SteeredMessage): Promise<void> => {
    try {
      await ack(msg)
    } catch (err) {
      // The question was withdrawn meanwhile, or already admitted: nothing to acknowledge.
      if (!(err instanceof UserQuestionError && (err.code === 'NOT_FOUND' || err.code === 'ASK_ABORTED'))) throw err
    }
  }
  async function* iterate(): AsyncGenerator<SteeredMessage, void, undefined> {
    while (!signal?.aborted) {
      let batch: SteeredMessage[]
      try {
        batch = await read()
      } catch (err) {
        if (signal?.aborted) return
        throw err
      }
      for (const msg of batch) {
        try {
          yield msg
        } finally {
          // Resumed for the next message, or closed by a loop that was left:
          // either way the body had the message.
          await consumed(msg)
        }
      }
    }
  }
  return { sessionId, read, ack, [Symbol.asyncIterator]: iterate }
}
