/**
 * The demo's knowledge base: the data-transfer protocol's example tables (papers, knowledge_atoms,
 * relations, quality_records) in the demo's database, built from the shipped corpus, and declared so
 * db_query references can read them (Baton adds its run history as execution_logs).
 */
import { readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { TableDeclarations } from '../../src/refs/index.ts';
import { analyzeItem, type CorpusItem, tokens } from './analyze.ts';

export const KNOWLEDGE_TABLES: TableDeclarations = {
  papers: { columns: ['paper_id', 'title', 'words'] },
  knowledge_atoms: { columns: ['atom_id', 'paper_id', 'atom_type', 'content', 'confidence', 'domain'] },
  relations: { columns: ['relation_id', 'from_atom', 'to_atom', 'relation_type', 'shared_terms'] },
  quality_records: { columns: ['record_id', 'paper_id', 'quality_score', 'atoms'] },
};

export function buildKnowledgeBase(db: Database.Database): void {
  const exists = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knowledge_atoms'")
    .get();
  if (exists) return;
  const papers = JSON.parse(
    readFileSync(new URL('./corpus/papers.json', import.meta.url), 'utf8'),
  ) as CorpusItem[];
  db.exec(`
    CREATE TABLE papers (paper_id TEXT PRIMARY KEY, title TEXT NOT NULL, words INTEGER NOT NULL);
    CREATE TABLE knowledge_atoms (atom_id TEXT PRIMARY KEY, paper_id TEXT NOT NULL, atom_type TEXT NOT NULL,
      content TEXT NOT NULL, confidence REAL NOT NULL, domain TEXT NOT NULL);
    CREATE TABLE relations (relation_id INTEGER PRIMARY KEY, from_atom TEXT NOT NULL, to_atom TEXT NOT NULL,
      relation_type TEXT NOT NULL, shared_terms TEXT NOT NULL);
    CREATE TABLE quality_records (record_id INTEGER PRIMARY KEY, paper_id TEXT NOT NULL, quality_score REAL NOT NULL,
      atoms INTEGER NOT NULL);`);
  const atoms: Array<{ id: string; paper: string; terms: Set<string> }> = [];
  db.transaction(() => {
    for (const p of papers) {
      db.prepare('INSERT INTO papers VALUES (?, ?, ?)').run(p.id, p.title, p.text.split(/\s+/).length);
      const { claims } = analyzeItem(p, 'papers');
      claims.forEach((c, i) => {
        const id = `${p.id}_a${i + 1}`;
        const type = c.score >= 0.8 ? 'claim' : 'evidence';
        db.prepare('INSERT INTO knowledge_atoms VALUES (?, ?, ?, ?, ?, ?)').run(
          id,
          p.id,
          type,
          c.text,
          c.score,
          'agent_runtimes',
        );
        atoms.push({ id, paper: p.id, terms: new Set(tokens(c.text)) });
      });
      const scores = claims.map((c) => c.score);
      const quality = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : 0;
      db.prepare('INSERT INTO quality_records (paper_id, quality_score, atoms) VALUES (?, ?, ?)').run(
        p.id,
        Math.round(quality * 100) / 100,
        claims.length,
      );
    }
    for (let i = 0; i < atoms.length; i++)
      for (let j = i + 1; j < atoms.length; j++) {
        const a = atoms[i] as (typeof atoms)[number];
        const b = atoms[j] as (typeof atoms)[number];
        if (a.paper === b.paper) continue;
        const shared = [...a.terms].filter((t) => b.terms.has(t));
        if (shared.length >= 3)
          db.prepare(
            'INSERT INTO relations (from_atom, to_atom, relation_type, shared_terms) VALUES (?, ?, ?, ?)',
          ).run(a.id, b.id, 'supports', shared.join(' '));
      }
  })();
}
