-- Fewer database pages written per LangGraph step (issue 17 item 4). Each commit writes every page
-- it touched in full, so a step's cost follows the number of B-trees it touches, not its bytes:
-- - the newest root checkpoint of a thread is read from the checkpoints' primary key when a thread
--   is listed, instead of being kept on the thread row, which was rewritten at every step;
-- - list() across all threads (no thread id) sorts the checkpoints instead of walking an index that
--   every put had to extend.
DROP INDEX langgraph_checkpoints_newest;
ALTER TABLE langgraph_threads DROP COLUMN last_checkpoint_id;
ALTER TABLE langgraph_threads DROP COLUMN last_step;
ALTER TABLE langgraph_threads DROP COLUMN last_source;
