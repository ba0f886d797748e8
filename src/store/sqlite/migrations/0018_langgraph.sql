-- LangGraph.js checkpoints (baton/langgraph): one row per thread with its retention, the checkpoints
-- of every namespace, channel values stored once per (channel, version) rather than in every
-- checkpoint, and the pending writes of each checkpoint. Values are the bytes LangGraph's
-- serializer produced, with its type tag, so any serializer round-trips exactly.

CREATE TABLE langgraph_threads (
  thread_id TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  -- The newest checkpoint of the root namespace, for `baton ls` without reading blobs.
  last_checkpoint_id TEXT,
  last_step INTEGER,
  last_source TEXT,
  -- Retention: deleted with everything it owns once this time has passed (sliding TTL).
  expires_at INTEGER
) STRICT;

CREATE INDEX langgraph_threads_expires ON langgraph_threads (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE langgraph_checkpoints (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type TEXT NOT NULL,
  checkpoint BLOB NOT NULL,
  metadata_type TEXT NOT NULL,
  metadata BLOB NOT NULL,
  -- The checkpoint's channel versions as JSON: which blobs it reads, and which retention keeps.
  channel_versions TEXT NOT NULL,
  step INTEGER,
  source TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) STRICT;

-- list() without a thread walks every thread newest first.
CREATE INDEX langgraph_checkpoints_newest ON langgraph_checkpoints (checkpoint_id, thread_id, checkpoint_ns);

CREATE TABLE langgraph_writes (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  task_path TEXT NOT NULL DEFAULT '',
  channel TEXT NOT NULL,
  type TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) STRICT;

-- A channel's value at one version; every checkpoint that did not change the channel shares it.
CREATE TABLE langgraph_blobs (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  channel TEXT NOT NULL,
  version TEXT NOT NULL,
  type TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
) STRICT;
