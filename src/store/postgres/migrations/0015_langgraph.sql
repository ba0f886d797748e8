-- LangGraph.js checkpoints (baton/langgraph), as SQLite migration 0018: one row per thread with its
-- retention, the checkpoints of every namespace, channel values once per (channel, version), and
-- the pending writes of each checkpoint. Ids sort by byte order (COLLATE "C"), as in SQLite.

CREATE TABLE langgraph_threads (
  thread_id TEXT COLLATE "C" PRIMARY KEY,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  last_checkpoint_id TEXT COLLATE "C",
  last_step INTEGER,
  last_source TEXT,
  expires_at BIGINT
);

CREATE INDEX langgraph_threads_expires ON langgraph_threads (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE langgraph_checkpoints (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL,
  checkpoint_id TEXT COLLATE "C" NOT NULL,
  parent_checkpoint_id TEXT COLLATE "C",
  type TEXT NOT NULL,
  checkpoint BYTEA NOT NULL,
  metadata_type TEXT NOT NULL,
  metadata BYTEA NOT NULL,
  channel_versions TEXT NOT NULL,
  step INTEGER,
  source TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

CREATE INDEX langgraph_checkpoints_newest ON langgraph_checkpoints (checkpoint_id, thread_id, checkpoint_ns);

CREATE TABLE langgraph_writes (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL,
  checkpoint_id TEXT COLLATE "C" NOT NULL,
  task_id TEXT COLLATE "C" NOT NULL,
  idx INTEGER NOT NULL,
  task_path TEXT COLLATE "C" NOT NULL DEFAULT '',
  channel TEXT NOT NULL,
  type TEXT NOT NULL,
  value BYTEA NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

CREATE TABLE langgraph_blobs (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL,
  channel TEXT COLLATE "C" NOT NULL,
  version TEXT COLLATE "C" NOT NULL,
  type TEXT NOT NULL,
  value BYTEA NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);
