import { describe, expect, it } from 'vitest';
import { headingMatches, markdownHeadings, markdownSections, pdfSections } from './document-sections.ts';
import { structuralSummary } from './transform-values.ts';

describe('Markdown headings', () => {
  it('reads ATX (with closing hashes) and setext headings, not code fences or thematic breaks', () => {
    const lines = [
      '# Title #',
      'para',
      '',
      '---',
      'Setext One',
      '==========',
      '~~~~',
      '# not a heading',
      '~~~~',
      '####### seven is text',
      '  ## Indented two',
      '- item',
      '---',
    ];
    expect(markdownHeadings(lines).map((h) => [h.level, h.text])).toEqual([
      [1, 'Title'],
      [1, 'Setext One'],
      [2, 'Indented two'],
    ]);
  });

  it('ends a section at a heading of the same or higher level only', () => {
    const md = '# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne';
    expect(markdownSections(md, ['b', 'A', 'd'])).toEqual({
      b: '## B\nb\n### C\nc',
      A: '# A\na\n## B\nb\n### C\nc\n## D\nd',
      d: '## D\nd',
    });
  });

  it('matches headings ignoring case, spacing, a trailing colon and numbering on either side', () => {
    expect(headingMatches('3.1  Methodology:', 'methodology')).toBe(true);
    expect(headingMatches('IV. Results', 'results')).toBe(true);
    expect(headingMatches('Methodology', '2. methodology')).toBe(true);
    expect(headingMatches('Methods and data', 'methods')).toBe(false);
  });
});

describe('PDF sections', () => {
  const pages = ['Abstract\nShort.\n1 Introduction\nIntro text', 'continues here.\n2 Related Work\nOthers.'];

  it('runs a heading section across pages to the next heading-like line', () => {
    expect(pdfSections(pages, ['introduction'])).toEqual({
      introduction: '1 Introduction\nIntro text\ncontinues here.',
    });
  });

  it('does not end a section at a numbered line that is not a heading', () => {
    const s = pdfSections(['Results\n3 of 4 runs passed.\nDiscussion\nx'], ['results']);
    expect(s).toEqual({ results: 'Results\n3 of 4 runs passed.' });
  });
});

describe('structural summary', () => {
  it('describes arrays by count, item types, keys and first items, cutting long strings', () => {
    const long = 'x'.repeat(300);
    const s = structuralSummary([{ a: 1, b: long }, { a: 2, c: [1, 2, 3] }, 'text', 4, null]) as Record<
      string,
      unknown
    >;
    expect(s).toEqual({
      summary_of: 'array',
      total_items: 5,
      item_types: { object: 2, string: 1, number: 1, null: 1 },
      item_keys: ['a', 'b', 'c'],
      first_items: [
        { summary_of: 'object', key_count: 2, keys: ['a', 'b'] },
        { summary_of: 'object', key_count: 2, keys: ['a', 'c'] },
        'text',
      ],
    });
  });

  it('describes objects field by field and strings by length and preview', () => {
    expect(structuralSummary({ n: 1, list: [1, 2], s: 'y'.repeat(250) })).toEqual({
      summary_of: 'object',
      key_count: 3,
      fields: { n: 1, list: { summary_of: 'array', total_items: 2 }, s: `${'y'.repeat(200)}…` },
    });
    expect(structuralSummary('abc')).toEqual({ summary_of: 'string', length: 3, preview: 'abc' });
    expect(structuralSummary(7)).toBe(7);
  });
});
