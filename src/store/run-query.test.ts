/** The page of runs both stores answer, rendered once (the contract suites run it against both). */
import { describe, expect, it } from 'vitest';
import { MAX_PAGE, renderRunQuery } from './run-query.ts';

describe('renderRunQuery', () => {
  it('renders the same filters in both dialects, differing only in placeholders and the JSON test', () => {
    const q = {
      status: 'waiting' as const,
      name: 'work',
      createdAfter: 5,
      createdBefore: 9,
      beforeId: 'r9',
      scheduled: true,
      limit: 20,
    };
    const lite = renderRunQuery('sqlite', 'runs', q);
    const pg = renderRunQuery('postgres', 'baton.runs', q);
    expect(lite.values).toEqual(['waiting', 'work', 5, 9, 'r9', 20]);
    expect(pg.values).toEqual(lite.values);
    expect(lite.text).toBe(
      "SELECT * FROM runs WHERE parent_id IS NULL AND status = ? AND name = ? AND created_at >= ? AND created_at < ? AND json_extract(options, '$.schedule') IS NOT NULL AND id < ? ORDER BY id DESC LIMIT ?",
    );
    expect(pg.text).toBe(
      "SELECT * FROM baton.runs WHERE parent_id IS NULL AND status = $1 AND name = $2 AND created_at >= $3 AND created_at < $4 AND (options::jsonb -> 'schedule') IS NOT NULL AND id < $5 ORDER BY id DESC LIMIT $6",
    );
  });

  it("reads a flow's steps oldest first and lists everything when asked for no top level", () => {
    expect(renderRunQuery('sqlite', 'runs', { parentId: 'f' }).text).toBe(
      'SELECT * FROM runs WHERE parent_id = ? ORDER BY id LIMIT ?',
    );
    expect(renderRunQuery('sqlite', 'runs', { topLevel: false }).text).toBe(
      'SELECT * FROM runs ORDER BY id DESC LIMIT ?',
    );
  });

  it('caps the page between 1 and MAX_PAGE, 100 by default', () => {
    const limit = (l?: number) => renderRunQuery('sqlite', 'runs', { limit: l }).values.at(-1);
    expect(limit()).toBe(100);
    expect(limit(0)).toBe(1);
    expect(limit(-5)).toBe(1);
    expect(limit(10 ** 9)).toBe(MAX_PAGE);
  });

  it('passes hostile values as parameters, never as SQL', () => {
    const evil = "x' OR 1=1; DROP TABLE runs; --";
    const { text, values } = renderRunQuery('postgres', 'runs', { name: evil, parentId: evil });
    expect(text).not.toContain('DROP');
    expect(values).toEqual([evil, evil, 100]);
  });
});
