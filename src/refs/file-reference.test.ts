import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BatonError, isBatonError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import { makePdf } from './fixtures/make-pdf.ts';
import { createResolver, type Resolver } from './resolver.ts';

const markdown = [
  '# Attention Is All You Need',
  '',
  '## Abstract',
  'We propose the Transformer.',
  '',
  '## 1. Introduction',
  'Recurrent models are slow.',
  '### Background detail',
  'Sub-section text.',
  '',
  '```',
  '## Methodology',
  'this heading is code, not a heading',
  '```',
  '',
  'Methodology',
  '-----------',
  'Self-attention everywhere.',
  '',
  '## Results',
  'BLEU 28.4.',
].join('\n');

let root: string;
let resolver: Resolver;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'baton-refs-files-'));
  mkdirSync(path.join(root, 'papers'));
  writeFileSync(path.join(root, 'papers', 'attention.md'), markdown);
  writeFileSync(path.join(root, 'papers', 'plain.txt'), 'just text\n');
  writeFileSync(
    path.join(root, 'papers', 'meta.json'),
    '{"title":"Attention","year":2017,"authors":["Vaswani"]}',
  );
  writeFileSync(path.join(root, 'papers', 'broken.json'), '{"title":');
  writeFileSync(path.join(root, 'papers', 'nulls.json'), '{"venue":null}');
  writeFileSync(path.join(root, 'papers', 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café"
  writeFileSync(path.join(root, 'papers', 'sjis.txt'), Buffer.from([0x93, 0xfa, 0x96, 0x7b])); // 日本
  writeFileSync(
    path.join(root, 'papers', 'image.txt'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
  );
  writeFileSync(path.join(root, 'papers', 'big.txt'), 'x'.repeat(4096));
  writeFileSync(
    path.join(root, 'papers', 'transformer.pdf'),
    makePdf([
      ['Abstract', 'We propose the Transformer.', '1 Introduction', 'Recurrent models are slow.'],
      ['2 Methodology', 'Self-attention (scaled).', 'References', 'Bahdanau 2014'],
    ]),
  );
  resolver = createResolver({
    workspaceRoot: root,
    maxFileBytes: 2048,
    clock: new ManualClock(),
    getTaskOutput: async () => ({ status: 'missing' }),
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const read = (p: string, extra: Record<string, unknown> = {}) =>
  resolver.resolveReference({ ref_type: 'file', path: `/workspace/papers/${p}`, ...extra });
const value = async (p: string, extra: Record<string, unknown> = {}) => {
  const r = await read(p, extra);
  if (!r.ok) throw new Error(`expected success, got ${r.failure.error_code}: ${r.failure.error_message}`);
  return r.value;
};
const errorOf = (p: string, extra: Record<string, unknown> = {}) => read(p, extra).catch((e: unknown) => e);

describe('file formats', () => {
  it('reads md and txt as text and json as a value, the format taken from the extension', async () => {
    expect(await value('attention.md')).toBe(markdown);
    expect(await value('plain.txt')).toBe('just text\n');
    expect(await value('meta.json')).toEqual({ title: 'Attention', year: 2017, authors: ['Vaswani'] });
    expect(await value('meta.json', { format: 'txt' })).toContain('"title"');
  });

  it('extracts the text of a PDF with pdf.js, pages separated by a blank line', async () => {
    expect(await value('transformer.pdf', { format: 'pdf' })).toBe(
      'Abstract\nWe propose the Transformer.\n1 Introduction\nRecurrent models are slow.\n\n' +
        '2 Methodology\nSelf-attention (scaled).\nReferences\nBahdanau 2014',
    );
  });

  it.each([
    ['broken.json', {}, 'not valid JSON'],
    ['plain.txt', { format: 'pdf' }, 'not a PDF'],
    ['image.txt', { format: 'txt' }, 'binary data'],
    ['big.txt', {}, 'larger than the 2048-byte limit'],
    ['plain.txt', { sections: ['intro'] }, 'sections apply to md, pdf and json'],
  ])('%s %j is REF_FORMAT_ERROR (%s), aborting by default', async (p, extra, message) => {
    const err = await errorOf(p, extra);
    expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
    expect((err as BatonError).message).toContain(message);
  });

  it('marks an oversized file with reason too_large and its size', async () => {
    const err = (await errorOf('big.txt')) as BatonError;
    expect(err.data).toMatchObject({ reason: 'too_large', size: 4096, limit: 2048 });
  });
});

describe('only regular files, each with one link', () => {
  it('refuses FIFOs at once instead of waiting for a writer, and reads files normally afterwards', async () => {
    // Four FIFOs with no writer used to fill libuv's four pool threads, hanging every later read.
    for (let i = 0; i < 5; i++) {
      const made = spawnSync('mkfifo', [path.join(root, 'papers', `pipe${i}.txt`)]);
      expect(made.status).toBe(0);
    }
    const errors = await Promise.all(Array.from({ length: 5 }, (_, i) => errorOf(`pipe${i}.txt`)));
    for (const err of errors) {
      expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
      expect((err as BatonError).message).toMatch(/is not a regular file/);
    }
    expect(await value('plain.txt')).toBe('just text\n');
  });

  it('refuses a hard link, which can name a file outside the workspace', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'baton-refs-outside-'));
    try {
      writeFileSync(path.join(outside, 'secret.txt'), 'the secret');
      linkSync(path.join(outside, 'secret.txt'), path.join(root, 'papers', 'hardlink.txt'));
      const err = (await errorOf('hardlink.txt')) as BatonError;
      expect(isBatonError(err, 'REF_PERMISSION_DENIED')).toBe(true);
      expect(err.message).toMatch(/has 2 hard links/);
      expect(JSON.stringify(err)).not.toContain('the secret');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('encodings', () => {
  it('decodes other encodings through TextDecoder', async () => {
    expect(await value('latin1.txt', { encoding: 'latin1' })).toBe('café');
    expect(await value('sjis.txt', { encoding: 'shift_jis' })).toBe('日本');
  });

  it('fails bytes that are invalid in the declared encoding instead of replacing them', async () => {
    const err = await errorOf('latin1.txt');
    expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
    expect((err as BatonError).message).toContain('not valid utf-8');
  });

  it('refuses an unknown encoding label with REF_FORMAT_ERROR naming it', async () => {
    const err = await errorOf('plain.txt', { encoding: 'utf-9' });
    expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
    expect((err as BatonError).message).toContain('"utf-9" is not supported');
  });
});

describe('sections', () => {
  it('picks Markdown sections by heading, case-insensitive, to the next heading of the same level', async () => {
    const s = (await value('attention.md', {
      sections: ['abstract', 'INTRODUCTION', 'methodology'],
    })) as Record<string, string | null>;
    expect(s.abstract).toBe('## Abstract\nWe propose the Transformer.');
    expect(s.INTRODUCTION).toBe(
      '## 1. Introduction\nRecurrent models are slow.\n### Background detail\nSub-section text.\n\n```\n## Methodology\nthis heading is code, not a heading\n```',
    );
    expect(s.methodology).toBe('Methodology\n-----------\nSelf-attention everywhere.');
  });

  it('maps a missing section to null, and is REF_NOT_FOUND when none is found', async () => {
    expect(await value('attention.md', { sections: ['results', 'appendix'] })).toEqual({
      results: '## Results\nBLEU 28.4.',
      appendix: null,
    });
    expect(await read('attention.md', { sections: ['appendix'] })).toMatchObject({
      ok: false,
      failure: { error_code: 'REF_NOT_FOUND' },
    });
  });

  it('picks PDF pages and page ranges', async () => {
    const s = await value('transformer.pdf', { sections: ['page:2', 'pages:1-2', 'page:3'] });
    expect(s).toMatchObject({
      'page:2': '2 Methodology\nSelf-attention (scaled).\nReferences\nBahdanau 2014',
      'page:3': null,
    });
    expect((s as Record<string, string>)['pages:1-2']).toContain('Abstract');
    expect((s as Record<string, string>)['pages:1-2']).toContain('Bahdanau');
  });

  it('finds PDF sections by heading text, running to the next heading-like line', async () => {
    expect(await value('transformer.pdf', { sections: ['introduction', 'Methodology'] })).toEqual({
      introduction: '1 Introduction\nRecurrent models are slow.',
      Methodology: '2 Methodology\nSelf-attention (scaled).',
    });
  });

  it('refuses a malformed page spec with REF_FORMAT_ERROR naming it', async () => {
    const err = await errorOf('transformer.pdf', { sections: ['pages:3-1'] });
    expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
    expect((err as BatonError).message).toContain('sections[0]');
  });

  it('picks top-level keys of a JSON object', async () => {
    expect(await value('meta.json', { sections: ['title', 'venue'] })).toEqual({
      title: 'Attention',
      venue: null,
    });
  });
});
