/**
 * Resolves a file reference: confine the path, read at most `maxFileBytes`, decode, pick sections.
 *
 * Value: md and txt → the text; json → the parsed value; pdf → the text of all pages, separated by
 * blank lines. With `sections` → an object from each requested name to its text (or value, for
 * JSON) or null when not found (see document-sections.ts); txt has no sections.
 *
 * `format` defaults from the extension (.md/.markdown, .txt, .json, .pdf; anything else txt).
 * `encoding` is any WHATWG label TextDecoder knows (utf-8 default; utf-16le, windows-1252,
 * shift_jis, gbk, …), decoded with fatal errors so bytes invalid in the declared encoding fail.
 * Errors: REF_PERMISSION_DENIED (outside the workspace), REF_NOT_FOUND (missing),
 * REF_FORMAT_ERROR (unknown encoding, invalid bytes, binary content read as text, invalid JSON or
 * PDF, not a regular file, larger than the cap — data.reason 'too_large').
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { TextDecoder } from 'node:util';
import { BatonError } from '../core/index.ts';
import { jsonSections, markdownSections, pdfSections, type SectionMap } from './document-sections.ts';
import { pdfPageTexts } from './pdf-text.ts';
import type { FileFormat, FileReference } from './reference-schema.ts';
import { confinedPath, type WorkspaceOptions } from './workspace-path.ts';

export interface FileReaderOptions extends WorkspaceOptions {
  maxFileBytes: number;
}

const formatError = (message: string, data: Record<string, unknown> = {}, cause?: unknown) =>
  new BatonError('REF_FORMAT_ERROR', message, { cause, data });

const EXTENSIONS: Record<string, FileFormat> = {
  '.md': 'md',
  '.markdown': 'md',
  '.txt': 'txt',
  '.json': 'json',
  '.pdf': 'pdf',
};

export function inferFormat(file: string): FileFormat {
  return EXTENSIONS[path.extname(file).toLowerCase()] ?? 'txt';
}

function decoderFor(encoding: string): TextDecoder {
  try {
    return new TextDecoder(encoding, { fatal: true });
  } catch (cause) {
    throw formatError(`encoding ${JSON.stringify(encoding)} is not supported`, { field: 'encoding' }, cause);
  }
}

/** Binary content read as text: NUL characters, or many control characters (not tab/newlines). */
function looksBinary(text: string): boolean {
  const sample = text.slice(0, 8192);
  if (sample.includes('\0')) return true;
  let controls = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c && c !== 0x1b) || c === 0x7f)
      controls++;
  }
  return controls > sample.length * 0.1;
}

function decode(bytes: Uint8Array, encoding: string, requested: string): string {
  const decoder = decoderFor(encoding);
  const binary = () =>
    formatError(`file ${JSON.stringify(requested)} holds binary data, not ${decoder.encoding} text`, {
      field: 'format',
    });
  // Outside UTF-16 a NUL byte is never text; checking bytes first names the real problem.
  if (!decoder.encoding.startsWith('utf-16') && bytes.subarray(0, 8192).includes(0)) throw binary();
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    throw formatError(
      `file ${JSON.stringify(requested)} is not valid ${decoder.encoding}`,
      { field: 'encoding', encoding: decoder.encoding },
      cause,
    );
  }
  if (looksBinary(text)) throw binary();
  return text;
}

/** Stops waiting when the attempt's signal fires (the operation itself cannot be cancelled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function readCapped(
  real: string,
  requested: string,
  max: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  // O_NOFOLLOW: the real path has no symlink at its end; refuse one swapped in since the check.
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer forever, holding one of libuv's
  // four pool threads (four FIFOs stop every later file read); it opens at once and is refused below.
  const opening = open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const fh = await abortable(opening, signal).catch((cause) => {
    if (signal.aborted && cause === signal.reason) {
      void opening.then((late) => late.close()).catch(() => undefined);
      throw cause;
    }
    throw new BatonError('REF_NOT_FOUND', `file ${JSON.stringify(requested)} could not be opened`, {
      cause,
      data: { field: 'path' },
    });
  });
  try {
    const st = await fh.stat();
    if (!st.isFile())
      throw formatError(
        `path ${JSON.stringify(requested)} is not a regular file (FIFOs, sockets and devices are never read)`,
        { field: 'path' },
      );
    // A hard link made inside the workspace can name a file that lives outside it, and no path check
    // can tell: a file with more than one link is refused.
    if (st.nlink > 1)
      throw new BatonError(
        'REF_PERMISSION_DENIED',
        `file ${JSON.stringify(requested)} has ${st.nlink} hard links; a hard link may reach outside the workspace, so it is not read`,
        { data: { field: 'path', path: requested, links: st.nlink } },
      );
    const tooLarge = (size: number) =>
      formatError(`file ${JSON.stringify(requested)} is larger than the ${max}-byte limit`, {
        field: 'path',
        reason: 'too_large',
        size,
        limit: max,
      });
    if (st.size > max) throw tooLarge(st.size);
    // Read up to max + 1 bytes: the file may have grown since stat.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let filled = 0;
    while (filled < buf.length) {
      if (signal.aborted) throw signal.reason;
      const { bytesRead } = await fh.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > max) throw tooLarge(filled);
    return buf.subarray(0, filled);
  } finally {
    await fh.close();
  }
}

export async function resolveFile(
  ref: FileReference,
  opts: FileReaderOptions,
  permittedRoots: readonly string[] | undefined,
  signal: AbortSignal,
): Promise<unknown> {
  const encoding = ref.encoding ?? 'utf-8';
  decoderFor(encoding); // an unknown label fails before any I/O
  const real = await confinedPath(ref.path, opts, permittedRoots);
  const bytes = await readCapped(real, ref.path, opts.maxFileBytes, signal);
  return parseContent(ref, bytes, ref.format ?? inferFormat(real), encoding, signal);
}

/** Text sections are never null, so all null means none was found. */
function someFound(sections: SectionMap, ref: FileReference): SectionMap {
  if (Object.values(sections).some((v) => v !== null)) return sections;
  throw new BatonError(
    'REF_NOT_FOUND',
    `none of the sections ${JSON.stringify(ref.sections)} is in ${JSON.stringify(ref.path)}`,
    { data: { field: 'sections' } },
  );
}

async function parseContent(
  ref: FileReference,
  bytes: Uint8Array,
  format: FileFormat,
  encoding: string,
  signal: AbortSignal,
): Promise<unknown> {
  const sections = ref.sections;
  switch (format) {
    case 'pdf': {
      const pages = await pdfPageTexts(bytes, signal);
      return sections ? someFound(pdfSections(pages, sections), ref) : pages.join('\n\n');
    }
    case 'json': {
      let value: unknown;
      try {
        value = JSON.parse(decode(bytes, encoding, ref.path));
      } catch (cause) {
        if (cause instanceof BatonError) throw cause;
        throw formatError(
          `file ${JSON.stringify(ref.path)} is not valid JSON: ${(cause as Error).message}`,
          { field: 'format' },
          cause,
        );
      }
      return sections ? jsonSections(value, sections) : value;
    }
    case 'md': {
      const text = decode(bytes, encoding, ref.path);
      return sections ? someFound(markdownSections(text, sections), ref) : text;
    }
    case 'txt':
      if (sections)
        throw formatError('sections apply to md, pdf and json files, not txt', { field: 'sections' });
      return decode(bytes, encoding, ref.path);
  }
}
