// What the agent-SDK adapter tests share: one bot and fake Slack, and a
// person who answers a question as it shows in Slack.
import { AskslackClient } from '../src/index.js'
import { binaries, Deployment, freePort, type Binaries, type Fake } from './harness.js'

export interface World {
  bins: Binaries
  d: Deployment
  fake: Fake
  client: AskslackClient
}

export async function startWorld(): Promise<World> {
  const bins = binaries()
  const d = new Deployment(bins)
  const botPort = await freePort()
  const fake = await d.startFake(botPort)
  const bot = await d.startBot({ port: botPort })
  return { bins, d, fake, client: new AskslackClient({ url: bot.url }) }
}

export async function stopWorld(w: World | undefined): Promise<void> {
  await w?.d.stop()
  w?.bins.cleanup()
}

/** How a person answers: a button, "Other…" with typed text, or "Edit & allow…" with new values. */
export type Reply = { click: string } | { other: string } | { edit: Record<string, string> }

/**
 * Answers the question callId when it shows in Slack (the message whose
 * block ids carry it), as alice: it runs concurrently with the SDK call that
 * asks, and resolves once the answer is given.
 */
export async function answerWhenPosted(fake: Fake, callId: string, reply: Reply): Promise<void> {
  const m = await fake.waitPosted(callId)
  if ('click' in reply) {
    await fake.click(m, reply.click)
    return
  }
  if ('edit' in reply) {
    await fake.click(m, 'Edit & allow…')
    await fake.submitEdit(reply.edit)
    return
  }
  await fake.click(m, 'Other…')
  await fake.submitText(reply.other)
}

/** A unique id per test. */
let n = 0
export const uid = (what: string) => `${what}-${process.pid}-${++n}`

/** Wraps a test body so a failure prints the processes' logs. */
export function withLogs(w: () => World, fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn()
    } catch (err) {
      console.error(w().d.logs())
      throw err
    }
  }
}
