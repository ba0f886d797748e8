-- LangGraph channel values keyed by version before channel (issue 17 item 4). Every channel a step
-- updates gets the same new version, so in this order a step's values sit side by side in the
-- primary-key index and its commit writes one leaf of it; keyed by channel first they spread over
-- the index (a 200-node chain: 2.2 leaves a step, each a 4 KB WAL frame). Lookups give the whole
-- key and deletes a prefix of thread and namespace, so no statement changes. SQLite cannot reorder
-- a primary key in place: the table is rebuilt, every row copied.
CREATE TABLE langgraph_blobs_by_version (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  channel TEXT NOT NULL,
  version TEXT NOT NULL,
  type TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, version, channel)
) STRICT;

INSERT INTO langgraph_blobs_by_version (thread_id, checkpoint_ns, channel, version, type, value)
  SELECT thread_id, checkpoint_ns, channel, version, type, value FROM langgraph_blobs;

DROP TABLE langgraph_blobs;

ALTER TABLE langgraph_blobs_by_version RENAME TO langgraph_blobs;
