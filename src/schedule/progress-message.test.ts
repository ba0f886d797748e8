import { describe, expect, it } from 'vitest';
import { BatonError, ValidationError } from '../core/index.ts';
import {
  composeSystem,
  DEFAULT_PROGRESS_MESSAGE,
  DEFAULT_PROGRESS_TEMPLATE,
  loadPromptTemplate,
  progressMessage,
  renderTemplate,
} from './index.ts';

const base = { toolName: 'local__image_draw', scheduledDelayMs: 120_000, elapsedMs: 125_000 } as const;

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.field;
    throw err;
  }
  throw new Error('expected a ValidationError');
}

describe('prompt templates', () => {
  it('ships a default template with English and Chinese text', () => {
    const t = DEFAULT_PROGRESS_TEMPLATE;
    expect(t.name).toBe('schedule_progress');
    for (const lang of ['en', 'zh'] as const) {
      expect(composeSystem(t, {}, lang).length).toBeGreaterThan(20);
      expect(typeof t.user === 'object' && t.user[lang]).toContain('{{task}}');
    }
    expect(composeSystem(t, {}, 'zh')).toMatch(/[\u4e00-\u9fff]/);
  });

  it('validates a template and names the bad field', () => {
    expect(fieldOf(() => loadPromptTemplate('x'))).toBe('template');
    expect(fieldOf(() => loadPromptTemplate({ user: 'u' }))).toBe('template.system');
    expect(fieldOf(() => loadPromptTemplate({ system: 's' }))).toBe('template.user');
    expect(fieldOf(() => loadPromptTemplate({ system: 's', user: { zh: '' } }))).toBe('template.user.zh');
    expect(fieldOf(() => loadPromptTemplate({ system: 's', user: { fr: 'x' } }))).toBe('template.user.fr');
    expect(fieldOf(() => loadPromptTemplate({ system: 's', user: 'u', maxLength: 0 }))).toBe(
      'template.maxLength',
    );
    const t = loadPromptTemplate({ system: 's', user: 'u' });
    expect([t.name, t.maxLength, t.message]).toEqual(['schedule_progress', 200, undefined]);
  });

  it('appends the global brand voice, then the progress overlay, to the system prompt', () => {
    const t = loadPromptTemplate({ system: { en: 'SYSTEM', zh: '系统' }, user: 'u' });
    expect(composeSystem(t, { global: 'BRAND', schedule_progress: 'PROGRESS' }, 'en')).toBe(
      'SYSTEM\n\nBRAND\n\nPROGRESS',
    );
    expect(composeSystem(t, { schedule_progress: ' P ' }, 'zh')).toBe('系统\n\nP');
    expect(composeSystem(t)).toBe('SYSTEM');
  });

  it('fills {{placeholders}} and empties unknown ones', () => {
    expect(renderTemplate('{{a}} and {{ b }} / {{missing}}!', { a: 'x', b: 2 })).toBe('x and 2 / !');
  });
});

describe('progressMessage', () => {
  it('gives a friendly default message without technical terms when nothing is configured', async () => {
    const en = await progressMessage({ ...base, language: 'en' });
    const zh = await progressMessage({ ...base, language: 'zh' });
    expect(en).toBe(DEFAULT_PROGRESS_MESSAGE.en);
    expect(zh).toBe('正在为您处理中，还需要一些时间，请稍候~');
    for (const text of [en, zh]) expect(text).not.toMatch(/\bms\b|tool|image_draw|\d{3,}|工具/i);
  });

  it('renders a given template’s message in the schedule’s language', async () => {
    const template = loadPromptTemplate({
      system: 's',
      user: 'u',
      message: { en: 'Still on {{task}}, {{overdue}} late.', zh: '{{task}}还在进行，已经过了{{elapsed}}。' },
    });
    expect(await progressMessage({ ...base, language: 'en', template })).toBe(
      'Still on image draw, 5 seconds late.',
    );
    expect(await progressMessage({ ...base, language: 'zh', template })).toBe(
      'image draw还在进行，已经过了2分钟5秒。',
    );
  });

  it('asks the model with the composed system prompt and the rendered user prompt', async () => {
    const calls: Array<[string, string]> = [];
    const text = await progressMessage({
      ...base,
      language: 'zh',
      overlays: { global: '用活泼的语气', schedule_progress: '加一个表情' },
      generate: async (system, prompt) => {
        calls.push([system, prompt]);
        return '  “正在为您绘制精美的图片，还需要一些时间，请稍候~”  ';
      },
    });
    expect(text).toBe('正在为您绘制精美的图片，还需要一些时间，请稍候~');
    const [system, prompt] = calls[0] as [string, string];
    expect(system.endsWith('用活泼的语气\n\n加一个表情')).toBe(true);
    expect(prompt).toContain('image draw');
    expect(prompt).toContain('2分钟');
    expect(prompt).not.toContain('{{');
  });

  it('falls back to the plain message when the model fails, is empty, too long or leaks the tool id', async () => {
    const replies: Array<() => Promise<string>> = [
      async () => {
        throw new Error('rate limited');
      },
      async () => '   ',
      async () => '很长'.repeat(150),
      async () => 'local__image_draw is still running',
    ];
    for (const reply of replies)
      expect(await progressMessage({ ...base, language: 'en', generate: reply })).toBe(
        DEFAULT_PROGRESS_MESSAGE.en,
      );
  });

  it('passes the abort signal to the model and throws its reason when it fires', async () => {
    const controller = new AbortController();
    const reason = new BatonError('CANCELLED', 'run cancelled');
    let seen: AbortSignal | undefined;
    const pending = progressMessage({
      ...base,
      language: 'en',
      signal: controller.signal,
      generate: (_s, _p, signal) => {
        seen = signal;
        return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      },
    });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(seen).toBe(controller.signal);
  });

  it('speaks in the brand overlay without a model, and when the model fails', async () => {
    const overlays = {
      global: '你是“橙子助手”，语气亲切。',
      schedule_progress_message: {
        zh: '橙子助手还在为您{{task}}，已经{{elapsed}}了，马上就好～',
        en: 'Orange is still on your {{task}} ({{elapsed}} so far), almost there!',
      },
    };
    const base = { toolName: 'local__image_draw', scheduledDelayMs: 120_000, elapsedMs: 180_000, overlays };
    expect(await progressMessage({ ...base, language: 'zh' })).toBe(
      '橙子助手还在为您image draw，已经3分钟了，马上就好～',
    );
    expect(await progressMessage({ ...base, language: 'en' })).toBe(
      'Orange is still on your image draw (3 minutes so far), almost there!',
    );
    const failing = async () => {
      throw new Error('model down');
    };
    expect(await progressMessage({ ...base, language: 'en', generate: failing })).toMatch(/^Orange is still/);
    // A model still gets the voice overlays in its system prompt.
    let system = '';
    await progressMessage({
      ...base,
      language: 'zh',
      generate: async (s) => {
        system = s;
        return '橙子正在努力中～';
      },
    });
    expect(system).toContain('橙子助手');
  });

  it('refuses overlays it cannot use, naming the field', async () => {
    const base = { toolName: 'x', language: 'en' as const, scheduledDelayMs: 1, elapsedMs: 2 };
    await expect(progressMessage({ ...base, overlays: { global: 42 } as never })).rejects.toThrow(
      /^overlays\.global must be a string/,
    );
    await expect(progressMessage({ ...base, overlays: { brand: 'x' } as never })).rejects.toThrow(
      /^overlays\.brand must be absent/,
    );
  });

  it('checks its input', async () => {
    await expect(progressMessage({ ...base, language: 'fr' as 'en' })).rejects.toMatchObject({
      field: 'language',
    });
    await expect(progressMessage({ ...base, language: 'en', elapsedMs: -1 })).rejects.toMatchObject({
      field: 'elapsedMs',
    });
  });
});
