/**
 * Text of a PDF, page by page, through pdf.js (pdfjs-dist legacy build, the one meant for Node).
 * Loaded on first use: most resolutions never touch a PDF and pdf.js is large.
 */
import { BatonError } from '../core/index.ts';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;

function formatError(message: string, cause?: unknown): BatonError {
  return new BatonError('REF_FORMAT_ERROR', message, { cause, data: { field: 'format' } });
}

/** One string per page; lines end where pdf.js reports an end of line. */
export async function pdfPageTexts(bytes: Uint8Array, signal: AbortSignal): Promise<string[]> {
  if (!isPdf(bytes)) throw formatError('file is not a PDF (no %PDF- header)');
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await pdfjs;
  const task = getDocument({
    // pdf.js takes ownership of (detaches) the buffer it is given.
    data: new Uint8Array(bytes),
    // Text extraction needs neither compiled font programs nor system fonts.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  const onAbort = () => {
    task.destroy().catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const doc = await task.promise;
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      if (signal.aborted) throw signal.reason;
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
      pages.push(text.trimEnd());
      page.cleanup();
    }
    return pages;
  } catch (cause) {
    if (signal.aborted) throw signal.reason;
    throw formatError(`PDF text could not be extracted: ${(cause as Error)?.message ?? cause}`, cause);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await task.destroy();
  }
}

export function isPdf(bytes: Uint8Array): boolean {
  // The header may follow up to 1024 bytes of junk (PDF 32000-1, 7.5.2 notes readers accept it).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString(
    'latin1',
  );
  return head.includes('%PDF-');
}
