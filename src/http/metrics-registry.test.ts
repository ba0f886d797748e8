import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics-registry.ts';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and histograms in the text exposition format', async () => {
    const r = new MetricsRegistry();
    const requests = r.counter('http_requests_total', 'Requests.');
    const runs = r.gauge('runs', 'Runs by status.');
    const latency = r.histogram('save_ms', 'Save time in ms.', [1, 5]);
    requests.inc({ route: '/runs', status: '200' });
    requests.inc({ status: '200', route: '/runs' }, 2);
    requests.inc({ route: 'say "hi"\\\n', status: '404' });
    runs.set(3, { status: 'queued' });
    latency.observe(0.5);
    latency.observe(3);
    latency.observe(9);
    latency.observe(Number.NaN);
    expect(await r.render()).toBe(
      [
        '# HELP http_requests_total Requests.',
        '# TYPE http_requests_total counter',
        'http_requests_total{route="/runs",status="200"} 3',
        'http_requests_total{route="say \\"hi\\"\\\\\\n",status="404"} 1',
        '# HELP runs Runs by status.',
        '# TYPE runs gauge',
        'runs{status="queued"} 3',
        '# HELP save_ms Save time in ms.',
        '# TYPE save_ms histogram',
        'save_ms_bucket{le="1"} 1',
        'save_ms_bucket{le="5"} 2',
        'save_ms_bucket{le="+Inf"} 3',
        'save_ms_sum 12.5',
        'save_ms_count 3',
        '',
      ].join('\n'),
    );
    expect(requests.get({ status: '200', route: '/runs' })).toBe(3);
    expect(latency.count()).toBe(3);
  });

  it('runs collectors before rendering, and refuses bad or duplicate names', async () => {
    const r = new MetricsRegistry();
    const g = r.gauge('depth', 'Queue depth.');
    let depth = 0;
    r.collect(() => g.set(++depth));
    expect(await r.render()).toContain('depth 1\n');
    expect(await r.render()).toContain('depth 2\n');
    expect(() => r.counter('depth', 'again')).toThrow('metric depth is already registered');
    expect(() => r.counter('bad-name', 'x')).toThrow(/is not valid/);
  });
});
