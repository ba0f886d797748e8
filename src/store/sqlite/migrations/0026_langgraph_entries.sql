-- LangGraph checkpoints, pending writes and channel values in ONE table (issue 17 item 4). A commit
-- writes every page it touched in full, so a step costs by the B-trees it touches: with three tables,
-- each a rowid tree plus its primary-key index, a step's put and writes touched six leaves (11.7 WAL
-- frames a step on bench/langgraph's small graph). In one table a step's rows are appended side by
-- side to one rowid tree, and its checkpoint and the writes of its parent sit next to each other in
-- one key index: three leaves (the rowid tree, the key index, the values index), and a put is one
-- statement. Rowid, not WITHOUT ROWID: in an index B-tree a row over ~1 KB spills to an overflow page.
--
-- kind 0: a checkpoint (value = the serialized checkpoint without its channel values and versions;
--         task_id '' and idx 0 so it has a key);
-- kind 1: a pending write of checkpoint_id (task_id, idx, task_path, channel, value);
-- kind 2: a channel's value at one version (channel, version; no checkpoint_id: every checkpoint
--         that did not change the channel shares it). 'empty' type: no value at this version.
CREATE TABLE langgraph_entries (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  kind INTEGER NOT NULL CHECK (kind IN (0, 1, 2)),
  checkpoint_id TEXT,
  task_id TEXT,
  idx INTEGER,
  task_path TEXT,
  channel TEXT,
  version TEXT,
  parent_checkpoint_id TEXT,
  step INTEGER,
  source TEXT,
  created_at INTEGER,
  type TEXT NOT NULL,
  metadata_type TEXT,
  metadata BLOB,
  -- The checkpoint's channel versions as JSON: which values it reads, and which retention keeps.
  channel_versions TEXT,
  value BLOB NOT NULL,
  CHECK ((kind = 2) = (checkpoint_id IS NULL AND version IS NOT NULL))
) STRICT;

INSERT INTO langgraph_entries (thread_id, checkpoint_ns, kind, checkpoint_id, task_id, idx,
    parent_checkpoint_id, step, source, created_at, type, metadata_type, metadata, channel_versions, value)
  SELECT thread_id, checkpoint_ns, 0, checkpoint_id, '', 0, parent_checkpoint_id, step, source, created_at,
    type, metadata_type, metadata, channel_versions, checkpoint
  FROM langgraph_checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id;

INSERT INTO langgraph_entries (thread_id, checkpoint_ns, kind, checkpoint_id, task_id, idx, task_path,
    channel, type, value)
  SELECT thread_id, checkpoint_ns, 1, checkpoint_id, task_id, idx, task_path, channel, type, value
  FROM langgraph_writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx;

INSERT INTO langgraph_entries (thread_id, checkpoint_ns, kind, channel, version, type, value)
  SELECT thread_id, checkpoint_ns, 2, channel, version, type, value
  FROM langgraph_blobs ORDER BY thread_id, checkpoint_ns, version, channel;

DROP TABLE langgraph_checkpoints;
DROP TABLE langgraph_writes;
DROP TABLE langgraph_blobs;

-- Checkpoints and writes: the primary key they had, with the kind between (a step's checkpoint
-- follows its parent's writes). Partial: values (checkpoint_id NULL) have no entry here.
CREATE UNIQUE INDEX langgraph_entries_key
  ON langgraph_entries (thread_id, checkpoint_ns, checkpoint_id, kind, task_id, idx)
  WHERE checkpoint_id IS NOT NULL;

-- Values by version before channel: a step gives every channel it changes the same new version, so
-- its values sit side by side.
CREATE UNIQUE INDEX langgraph_entries_values
  ON langgraph_entries (thread_id, checkpoint_ns, version, channel)
  WHERE version IS NOT NULL;
