/**
 * Reference transfer (protocol 002 §4.3): the downstream agent gets the `data_reference` it can fetch
 * from, the paths it may ask for (`available_paths`), sizes (`data_stats`) and the first few
 * elements as an `inline_preview`. For a task_output reference with a `path`, available paths are
 * that path extended (`$.atoms` → `$.atoms[*].content`); otherwise they are relative to the
 * referenced value's root.
 */

import { splitSentences } from './split-text.ts';
import { isPlainObject } from './validate-options.ts';

/** A protocol `data_reference` (§2): `ref_type` and its type-specific fields, passed through. */
export interface ReferenceInfo {
  ref_type: string;
  [field: string]: unknown;
}

export interface ReferenceTransfer {
  transfer_mode: 'reference';
  reference: ReferenceInfo & { available_paths: string[]; data_stats: Record<string, number> };
  inline_preview: Record<string, unknown> & { preview_count: number };
}

const PREVIEW_CHARS = 60;
const MAX_ELEMENT_PATHS = 20;

/** UTF-8 byte length without allocating the encoded bytes. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const member = (key: string) =>
  IDENT.test(key) ? `.${key}` : `['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;

function relativePaths(value: unknown): string[] {
  if (isPlainObject(value)) return Object.keys(value).map((k) => member(k));
  if (Array.isArray(value)) {
    const fields: string[] = [];
    for (const el of value)
      if (isPlainObject(el))
        for (const k of Object.keys(el))
          if (!fields.includes(k) && fields.length < MAX_ELEMENT_PATHS) fields.push(k);
    return ['[*]', ...fields.map((f) => `[*]${member(f)}`)];
  }
  return [''];
}

export function availablePaths(value: unknown, ref: ReferenceInfo | undefined): string[] {
  const base =
    ref?.ref_type === 'task_output' && typeof ref.path === 'string' && ref.path.startsWith('$')
      ? ref.path
      : '$';
  return relativePaths(value).map((suffix) => base + suffix);
}

export function dataStats(value: unknown, json: string, tokens: number): Record<string, number> {
  const stats: Record<string, number> = {};
  if (Array.isArray(value)) stats.total_items = value.length;
  else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) if (Array.isArray(v)) stats[`total_${k}`] = v.length;
  } else if (typeof value === 'string') {
    stats.total_chars = value.length;
    stats.total_lines = value.split('\n').length;
  }
  stats.estimated_size_bytes = utf8Length(json);
  stats.estimated_tokens = tokens;
  return stats;
}

function cut(text: string): string {
  const chars = Array.from(text);
  return chars.length <= PREVIEW_CHARS ? text : `${chars.slice(0, PREVIEW_CHARS).join('').trimEnd()}...`;
}

function previewElement(el: unknown): unknown {
  if (typeof el === 'string') return cut(el);
  if (!isPlainObject(el)) return Array.isArray(el) ? `[${el.length} items]` : el;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(el)) {
    if (typeof v === 'string') {
      if (Array.from(v).length > PREVIEW_CHARS) out[`${k}_preview`] = cut(v);
      else out[k] = v;
    } else if (v === null || typeof v !== 'object') out[k] = v;
  }
  return out;
}

/** The first `count` elements of each collection, long strings cut to a preview. */
export function inlinePreview(value: unknown, count: number): ReferenceTransfer['inline_preview'] {
  const preview: Record<string, unknown> = {};
  if (Array.isArray(value)) preview.items_preview = value.slice(0, count).map(previewElement);
  else if (typeof value === 'string') {
    const head = value.length > 4000 ? value.slice(0, 4000) : value;
    preview.text_preview = splitSentences(head)
      .slice(0, count)
      .map((s) => cut(s.text));
  } else if (isPlainObject(value)) {
    const arrays = Object.entries(value).filter(([, v]) => Array.isArray(v));
    for (const [k, v] of arrays)
      preview[`${k}_preview`] = (v as unknown[]).slice(0, count).map(previewElement);
    if (arrays.length === 0) preview.fields_preview = previewElement(value);
  } else preview.value_preview = value;
  return { ...preview, preview_count: count };
}

export interface ReferenceRequest {
  ref: ReferenceInfo;
  previewCount: number;
  /** Shrinks the preview until the transfer's content fits. */
  maxTokens?: number | undefined;
  json: string;
  tokens: number;
  countValue: (v: unknown) => number;
}

export function buildReferenceTransfer(
  value: unknown,
  req: ReferenceRequest,
): { transfer: ReferenceTransfer; tokens: number } {
  const reference = {
    ...req.ref,
    available_paths: availablePaths(value, req.ref),
    data_stats: dataStats(value, req.json, req.tokens),
  };
  const make = (n: number): ReferenceTransfer => ({
    transfer_mode: 'reference',
    reference,
    inline_preview: inlinePreview(value, n),
  });
  const contentTokens = (t: ReferenceTransfer) =>
    req.countValue({ reference: t.reference, inline_preview: t.inline_preview });
  let n = req.previewCount;
  let transfer = make(n);
  let tokens = contentTokens(transfer);
  while (req.maxTokens !== undefined && tokens > req.maxTokens && n > 0) {
    n = Math.floor(n / 2);
    transfer = make(n);
    tokens = contentTokens(transfer);
  }
  return { transfer, tokens };
}
