// Every `ts` example in the README compiles under strict TypeScript against
// the SDK packages installed here and this package as a user imports it
// (`@askslack/client…`, through package.json's exports to dist/). Each example
// is its own module; the names it takes as given (the app's client, model,
// agent, graph…) are declared before it, from the table below.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package's folder (this file runs as dist/test/readme.test.js). */
const root = fileURLToPath(new URL('../../', import.meta.url))

/** The README's `ts` code blocks, in order. */
export function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

const client = `declare const client: A.AskslackClient\n`
const header = `import type * as A from '@askslack/client'\n`

/**
 * What each example takes as given, by a line only it has. An example no
 * entry matches fails the test: say what it takes as given here.
 */
const givens: Array<{ match: string; declare: string }> = [
  { match: 'const client = new AskslackClient({\n  url: process.env.ASKSLACK_URL', declare: '' },
  { match: "harness.on('user-questions/request'", declare: client + `
declare const harness: {
  on(event: 'user-questions/request', answerer: A.UserQuestionAnswerer): void
  ask(request: { questions: A.AskUserQuestionItem[]; agent?: A.Agent; signal?: AbortSignal }): Promise<A.AskUserQuestionAnswer>
}
declare const questions: A.AskUserQuestionItem[]
declare const agent: A.Agent
declare const signal: AbortSignal
` },
  { match: 'createAskUserQuestionTool(', declare: client + `
declare function createAskUserQuestionTool(onQuestion: A.OnQuestion): unknown
declare const terminalOnQuestion: A.OnQuestion
` },
  { match: 'await agent.steer(msg.text', declare: client + `
declare const sessionId: string
declare const agent: { steer(text: string, opts: { source: A.SteeredMessage['source'] }): Promise<void> }
` },
  { match: 'await admit(msg)', declare: client + `
declare const sessionId: string
declare function admit(msg: A.SteeredMessage): Promise<void>
` },
  { match: "prompt: 'Cut the release'", declare: '' },
  { match: 'await decideInterruptions(first', declare: client + `
import type { Agent as OpenAIAgent } from '@openai/agents'
declare const agent: OpenAIAgent
declare const input: string
declare const runId: string
` },
  { match: 'await approvalResponses(result', declare: client + `
import type { LanguageModel, ModelMessage, ToolSet } from 'ai'
declare const model: LanguageModel
declare const tools: ToolSet
declare const messages: ModelMessage[]
declare const sessionId: string
` },
  { match: 'interruptsOf(await graph.invoke(input, config))', declare: client + `
declare const config: { configurable: { thread_id: string } }
declare const input: Record<string, unknown>
declare const graph: { invoke(input: unknown, config: { configurable: { thread_id: string } }): Promise<unknown> }
` },
  { match: "from '@askslack/client/ai-sdk'\n\nconst spec = askPerson", declare: client + `
import type { LanguageModel, ModelMessage } from 'ai'
declare const model: LanguageModel
declare const messages: ModelMessage[]
declare const sessionId: string
` },
  { match: "from '@askslack/client/openai-agents'\n\nconst spec = askPerson", declare: client + `
declare const runId: string
` },
]

test('every ts example in the README compiles under strict TypeScript against the installed SDKs', () => {
  const blocks = tsBlocks(readFileSync(join(root, 'README.md'), 'utf8'))
  assert.ok(blocks.length >= 10, `the README's ts examples: found ${blocks.length}`)
  // Inside the package, so that '@askslack/client' resolves as a user's import does (package.json exports).
  const dir = mkdtempSync(join(root, '.readme-check-'))
  try {
    const files: string[] = []
    blocks.forEach((code, i) => {
      const given = givens.filter((g) => code.includes(g.match))
      assert.equal(given.length, 1, `README example ${i + 1} needs exactly one entry in readme.test.ts's givens (has ${given.length}):\n${code}`)
      const file = `example${String(i + 1).padStart(2, '0')}.ts`
      // export {}: a module of its own even when the example imports nothing.
      writeFileSync(join(dir, file), header + given[0]!.declare + '\n' + code + '\nexport {}\n')
      files.push(file)
    })
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext',
        lib: ['ES2022'], types: ['node'], skipLibCheck: true,
      },
      files,
    }))
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' })
    const out = `${tsc.stdout}${tsc.stderr}`
    const shown = out.replace(/example(\d+)\.ts/g, (f, n: string) => `${f} (README example ${Number(n)})`)
    assert.equal(tsc.status, 0, `tsc --strict on the README's examples:\n${shown}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
