/**
 * The decisions inbox: every open question with its menu as buttons, the partial findings beside
 * it, a countdown to its timeout and the answer the policy gives if nobody does. A click answers;
 * if someone else answered first, the page says who and what.
 */
import { useState } from 'preact/hooks';
import type { DecisionsPage as Inbox } from '../../../client/index.ts';
import { ApiError, api } from '../api.ts';
import { Countdown, ErrorNote, Json, Loading, RunLink } from '../components/bits.tsx';
import { config } from '../state.ts';
import { useLoad } from '../use-load.ts';

type Decision = Inbox['decisions'][number];

function Question({ d, onAnswered }: { d: Decision; onAnswered: (text: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const [mode, setMode] = useState(d.request.otherModes[0] ?? '');
  const [manual, setManual] = useState('');
  const answer = async (choice: string) => {
    setBusy(true);
    setError(undefined);
    try {
      let extra: { mode?: string; input?: unknown } = {};
      if (choice === 'different_mode') extra = { mode };
      if (choice === 'manual_input') {
        try {
          extra = { input: JSON.parse(manual) as unknown };
        } catch {
          // Plain text is the research as written.
          extra = { input: manual };
        }
      }
      await api.decide(d.runId, { choice, ...extra });
      onAnswered(`Answered ${d.runId}: ${choice}. The run continues.`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && typeof e.details.answeredBy === 'string') {
        const choiceWas = (e.details.answer as { choice?: string } | undefined)?.choice ?? '?';
        onAnswered(
          `Too late: ${d.runId} was already answered by ${e.details.answeredBy} (${choiceWas}) at ${e.details.answeredAt}.`,
        );
      } else setError(e as Error);
    }
    setBusy(false);
  };
  const headingId = `q-${d.runId}`;
  return (
    <article class="card question" aria-labelledby={headingId}>
      <h2 id={headingId}>
        <RunLink run={{ id: d.runId, rootId: d.rootId }} /> <span class="muted">{d.name}</span>
      </h2>
      <p class="reason">{d.reason}</p>
      <pre class="message">{d.request.message}</pre>
      <p>
        If nobody answers, the policy answers <b class="policy-answer">{d.policyAnswer.choice}</b>
        {d.timeoutAt !== null ? (
          <>
            {' '}
            <Countdown at={d.timeoutAt} />
          </>
        ) : (
          ' — this question waits until someone answers.'
        )}
      </p>
      {!config.readOnly && (
        <fieldset class="choices">
          <legend class="sr-only">Answers for {d.runId}</legend>
          {d.request.choices
            .filter((c) => c.id !== 'manual_input')
            .map((c) => (
              <span key={c.id} class="choice">
                <button
                  type="button"
                  disabled={busy || (c.id === 'different_mode' && mode === '')}
                  data-choice={c.id}
                  class={c.id === d.policyAnswer.choice ? 'default' : ''}
                  onClick={() => void answer(c.id)}
                >
                  {c.label ?? c.id}
                </button>
                {c.id === 'different_mode' && (
                  <label>
                    <span class="sr-only">Mode for {d.runId}</span>
                    <select value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
                      {d.request.otherModes.map((m) => (
                        <option key={m} value={m}>
                          {m}
                        </option>
                      ))}
                    </select>
                  </label>
                )}
              </span>
            ))}
        </fieldset>
      )}
      {!config.readOnly && d.request.choices.some((c) => c.id === 'manual_input') && (
        <details class="manual">
          <summary>Answer with your own findings (manual input)</summary>
          <label for={`manual-${d.runId}`}>Findings as JSON, or plain text</label>
          <textarea
            id={`manual-${d.runId}`}
            rows={4}
            value={manual}
            onInput={(e) => setManual(e.currentTarget.value)}
          />
          <button
            type="button"
            disabled={busy || manual.trim() === ''}
            data-choice="manual_input"
            onClick={() => void answer('manual_input')}
          >
            Submit manual input
          </button>
        </details>
      )}
      <ErrorNote error={error} />
      <details>
        <summary>
          Partial findings ({d.findingsTotal}
          {d.findingsTotal > d.findings.length ? `, last ${d.findings.length} shown` : ''})
        </summary>
        {d.findings.length === 0 ? <p class="muted">None yet.</p> : <Json value={d.findings} />}
      </details>
    </article>
  );
}

export function DecisionsPage() {
  const { data, error, reload } = useLoad<Inbox>(
    () => api.decisions(),
    'decisions',
    (events) => events.some((e) => e.type.startsWith('decision:') || e.type === 'run:waiting'),
  );
  const [notes, setNotes] = useState<string[]>([]);
  return (
    <main id="main" class="page">
      <h1>Decisions</h1>
      <div role="status" aria-live="polite">
        {notes.map((n) => (
          <p key={n} class="ok">
            {n}
          </p>
        ))}
      </div>
      <ErrorNote error={error} />
      {!data ? (
        <Loading />
      ) : data.decisions.length === 0 ? (
        <p class="muted">No question is waiting for an answer.</p>
      ) : (
        data.decisions.map((d) => (
          <Question
            key={d.runId}
            d={d}
            onAnswered={(text) => {
              setNotes((n) => [text, ...n].slice(0, 5));
              reload();
            }}
          />
        ))
      )}
    </main>
  );
}
