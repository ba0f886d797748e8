/**
 * `sections` of a file reference: pick parts of a Markdown document by heading, of a PDF by page
 * or heading, of a JSON object by top-level key.
 *
 * Heading match: case-insensitive, whitespace collapsed, a trailing ":" ignored, and a leading
 * number ("2.", "3.1", "IV.") optional on either side, so "methodology" finds "3. Methodology".
 * The first matching heading wins. The result maps each requested name to its text (heading line
 * included) or null when it is not found; the resolver reports REF_NOT_FOUND when all are null.
 */
import { BatonError } from '../core/index.ts';

export type SectionMap = Record<string, string | null>;

function normalize(s: string): string {
  return s.replace(/\s+/g, ' ').trim().replace(/\s*:$/, '').toLowerCase();
}

const NUMBERING = /^(?:\d+(?:\.\d+)*\.?|[ivxlcdm]+\.|[a-z]\.)\s+/;

export function headingMatches(candidate: string, wanted: string): boolean {
  const c = normalize(candidate);
  const w = normalize(wanted);
  if (c === '' || w === '') return false;
  return c === w || c.replace(NUMBERING, '') === w.replace(NUMBERING, '');
}

interface Heading {
  level: number;
  text: string;
  /** Index of the heading's first line. */
  line: number;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const NOT_PARAGRAPH = /^ {0,3}(?:[>*+-]|\d+[.)]|#)/;

/** ATX and setext headings outside fenced code blocks. */
export function markdownHeadings(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  lines.forEach((line, i) => {
    const f = FENCE.exec(line);
    if (fence !== null) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && line.trim() === f[1]) fence = null;
      return;
    }
    if (f) {
      fence = f[1]!;
      return;
    }
    const atx = ATX.exec(line);
    if (atx) {
      out.push({ level: atx[1]!.length, text: atx[2] ?? '', line: i });
      return;
    }
    const prev = lines[i - 1];
    const setext = SETEXT.exec(line);
    const prevIsHeading = out.length > 0 && out[out.length - 1]!.line === i - 1;
    if (
      setext &&
      i > 0 &&
      prev !== undefined &&
      prev.trim() !== '' &&
      !prevIsHeading &&
      !NOT_PARAGRAPH.test(prev)
    )
      out.push({ level: setext[1]![0] === '=' ? 1 : 2, text: prev.trim(), line: i - 1 });
  });
  return out;
}

/** A section runs to the next heading of the same or a higher level (a smaller number). */
export function markdownSections(text: string, names: readonly string[]): SectionMap {
  const lines = text.split(/\r\n|\n|\r/);
  const headings = markdownHeadings(lines);
  const out: SectionMap = {};
  for (const name of names) {
    const at = headings.findIndex((h) => headingMatches(h.text, name));
    if (at < 0) {
      out[name] = null;
      continue;
    }
    const h = headings[at]!;
    const next = headings.slice(at + 1).find((n) => n.level <= h.level);
    out[name] = lines
      .slice(h.line, next ? next.line : lines.length)
      .join('\n')
      .trimEnd();
  }
  return out;
}

const PAGE = /^page:(\d+)$/i;
const PAGES = /^pages:(\d+)-(\d+)$/i;
/** Lines that look like the start of another section in extracted PDF text. */
const PDF_NUMBERED_HEADING = /^(?:\d+(?:\.\d+)*\.?|[IVX]+\.)\s+\p{Lu}.{0,80}$/u;
const PDF_NAMED_HEADING =
  /^(?:abstract|introduction|related work|background|methods?|methodology|experiments?|results|discussion|conclusions?|references|bibliography|acknowledge?ments?|appendix(?: [a-z])?)$/i;
const looksLikePdfHeading = (line: string) => PDF_NUMBERED_HEADING.test(line) || PDF_NAMED_HEADING.test(line);

function badSpec(name: string, index: number, why: string): BatonError {
  return new BatonError('REF_FORMAT_ERROR', `sections[${index}] ${JSON.stringify(name)}: ${why}`, {
    data: { field: `sections[${index}]` },
  });
}

/**
 * PDF sections from per-page text: `page:N`, `pages:A-B` (1-based, inclusive; out of range is
 * null), or a heading found on a line of the text, running to the next line that looks like a
 * heading (numbered like "2 Method" or a common paper section name) or to the end. PDFs carry no
 * heading markup, so the heading rule is a heuristic; pages are exact.
 */
export function pdfSections(pages: readonly string[], names: readonly string[]): SectionMap {
  const out: SectionMap = {};
  const lines = pages.join('\n').split('\n');
  names.forEach((name, i) => {
    const one = PAGE.exec(name.trim());
    const range = PAGES.exec(name.trim());
    if (one || range) {
      const from = Number(one ? one[1] : range![1]);
      const to = Number(one ? one[1] : range![2]);
      if (from < 1 || to < from) throw badSpec(name, i, 'pages are numbered from 1 and ranges go upwards');
      const picked = pages.slice(from - 1, to);
      out[name] = picked.length > 0 ? picked.join('\n\n') : null;
      return;
    }
    if (/^pages?:/i.test(name.trim())) throw badSpec(name, i, 'expected page:N or pages:A-B');
    const start = lines.findIndex((l) => headingMatches(l, name));
    if (start < 0) {
      out[name] = null;
      return;
    }
    let end = start + 1;
    while (end < lines.length && !looksLikePdfHeading(lines[end]!.trim())) end++;
    out[name] = lines.slice(start, end).join('\n').trimEnd();
  });
  return out;
}

/** JSON sections: top-level keys of an object (a missing key is null; none present is REF_NOT_FOUND). */
export function jsonSections(value: unknown, names: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BatonError('REF_FORMAT_ERROR', 'sections of a JSON file need a top-level object', {
      data: { field: 'sections' },
    });
  const obj = value as Record<string, unknown>;
  if (!names.some((n) => Object.hasOwn(obj, n)))
    throw new BatonError('REF_NOT_FOUND', `none of the keys ${JSON.stringify(names)} is in the JSON object`, {
      data: { field: 'sections' },
    });
  return Object.fromEntries(names.map((n) => [n, Object.hasOwn(obj, n) ? obj[n] : null]));
}
