import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.ts';

describe('SseParser', () => {
  it('parses events with id, type and data, skipping comments', () => {
    const p = new SseParser();
    const out = p.feed('retry: 2000\n: hello\n\nid: 7\nevent: run:queued\ndata: {"a":1}\n\n: heartbeat\n\n');
    expect(out).toEqual([{ event: 'run:queued', data: '{"a":1}', lastEventId: '7' }]);
    expect(p.retryMs).toBe(2000);
    expect(p.comments).toBe(2);
  });

  it('gives the same messages however the text is split, with LF, CRLF or CR line ends', () => {
    const text = '\uFEFFid: 1\r\nevent: a\r\ndata: x\r\n\r\nid: 2\rdata: y\rdata: z\r\rdata: no id\n\n';
    const whole = new SseParser().feed(text);
    expect(whole).toEqual([
      { event: 'a', data: 'x', lastEventId: '1' },
      { event: 'message', data: 'y\nz', lastEventId: '2' },
      { event: 'message', data: 'no id', lastEventId: '2' },
    ]);
    for (let size = 1; size <= 5; size++) {
      const p = new SseParser();
      const got = [];
      for (let i = 0; i < text.length; i += size) got.push(...p.feed(text.slice(i, i + size)));
      expect(got, `chunks of ${size}`).toEqual(whole);
    }
  });

  it('follows the format on field details: one optional space, no colon, unknown fields, empty data', () => {
    const p = new SseParser();
    expect(p.feed('data:  two spaces\ndata\nfoo: bar\n\nevent: only-type\n\nid\ndata:\n\n')).toEqual([
      { event: 'message', data: ' two spaces\n', lastEventId: '' },
      { event: 'message', data: '', lastEventId: '' },
    ]);
    expect(p.feed('retry: soon\n\n')).toEqual([]);
    expect(p.retryMs).toBeUndefined();
  });
});
