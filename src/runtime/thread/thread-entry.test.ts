import { describe, expect, it } from 'vitest';
import { threadEntry, toModuleUrl } from './thread-entry.ts';

const BUILT = 'file:///app/node_modules/baton/dist/runtime/thread/thread-entry.js';
const SOURCE = 'file:///repo/src/runtime/thread/thread-entry.ts';

describe('toModuleUrl', () => {
  it('keeps a file URL and turns an absolute path into one', () => {
    expect(toModuleUrl('file:///app/tasks.js')).toBe('file:///app/tasks.js');
    expect(toModuleUrl('/app/my tasks.js')).toBe('file:///app/my%20tasks.js');
  });

  it('refuses a relative path, naming the option and what it expects', () => {
    expect(() => toModuleUrl('./tasks.js')).toThrow(
      'module must be a file URL or an absolute path (import.meta.url of the module that exports the task), got "./tasks.js"',
    );
  });
});

describe('threadEntry', () => {
  it('starts built JavaScript on thread-main.js with no loader', () => {
    expect(threadEntry('file:///app/tasks.js', BUILT).href).toBe(
      'file:///app/node_modules/baton/dist/runtime/thread/thread-main.js',
    );
  });

  it('registers tsx first when Baton runs from its TypeScript sources', () => {
    const entry = threadEntry('file:///app/tasks.js', SOURCE);
    expect(entry.protocol).toBe('data:');
    const code = decodeURIComponent(entry.pathname.replace(/^text\/javascript,/, ''));
    expect(code).toContain('register();');
    expect(code).toContain('tsx/dist/esm/api/index.mjs');
    expect(code).toContain('await import("file:///repo/src/runtime/thread/thread-main.ts")');
  });

  it('registers tsx for a task module written in TypeScript even from built JavaScript', () => {
    const code = decodeURIComponent(threadEntry('file:///app/tasks.mts', BUILT).href);
    expect(code).toContain('register();');
    expect(code).toContain('thread-main.js');
  });
});
