/**
 * What the store's helper threads (checkpointer.ts, sweeper.ts) share: CommonJS evaluated in a
 * worker that opens its own connection to the store's file (`workerData.driver`, `workerData.file`)
 * and ends when told 'close'. Each thread appends its own message handler.
 */
export const CONNECTION_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
/** True (and the thread ends) when the message is 'close'. */
function closing(m) {
  if (m !== 'close') return false;
  db.close();
  parentPort.close();
  return true;
}
`;
