/**
 * Baton's HTTP API inside a serverless function with a hard time limit (`baton/serverless`): sync
 * requests answer by `limit − safetyMargin` with the protocol's resumable 408 after the checkpoint
 * is saved, and the next invocation — any process on the same store — resumes the job.
 *
 * @example
 *   const handler = createServerlessHandler(baton, { limitMs: '26s', safetyMarginMs: '5s' });
 *   export default async (request: Request) => handler(request);
 */
export {
  createServerlessHandler,
  type ServerlessHandler,
  type ServerlessOptions,
} from './create-serverless-handler.ts';
