/**
 * @askslack/client — ask a person in Slack from a TypeScript agent harness.
 *
 * - {@link AskslackClient}: askslack's host API.
 * - {@link askslackAnswerer}: a listener for seed 000's `'user-questions/request'` waterfall.
 * - {@link askslackOnQuestion}: seed 004's `OnQuestion`, with the pure mappings both ways.
 * - {@link lateAnswers}: a session's late answers, read and acknowledged.
 *
 * @module
 */
export * from './seed000.js'
export * from './seed004.js'
export * from './wire.js'
export * from './client.js'
export * from './answerer.js'
export * from './onquestion.js'
export * from './late.js'
export * from './nodefetch.js'
