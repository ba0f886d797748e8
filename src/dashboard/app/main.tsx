/** The dashboard app: a header with the navigation and the live state, then the page of the URL. */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './app.css';
import { startLive } from './live.ts';
import { DecisionsPage } from './pages/decisions-page.tsx';
import { DeliveriesPage } from './pages/deliveries-page.tsx';
import { OverviewPage } from './pages/overview-page.tsx';
import { RunPage } from './pages/run-page.tsx';
import { RunsPage } from './pages/runs-page.tsx';
import { href, route } from './router.ts';
import { config, liveState, setToken, token } from './state.ts';

const NAV = [
  ['overview', '/', 'Overview'],
  ['runs', '/runs', 'Runs'],
  ['decisions', '/decisions', 'Decisions'],
  ['deliveries', '/deliveries', 'Deliveries'],
] as const;

function TokenForm() {
  const [value, setValue] = useState('');
  return (
    <main id="main" class="page">
      <h1>Sign in</h1>
      <form
        class="card token-form"
        onSubmit={(e) => {
          e.preventDefault();
          setToken(value.trim());
        }}
      >
        <label for="token">API token (the server's --token / BATON_TOKEN)</label>
        <input
          id="token"
          type="password"
          autocomplete="current-password"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit">Open the dashboard</button>
      </form>
    </main>
  );
}

function Page() {
  const r = route.value;
  switch (r.page) {
    case 'overview':
      return <OverviewPage />;
    case 'runs':
      return <RunsPage params={r.params} />;
    case 'run':
      return <RunPage id={r.id ?? ''} params={r.params} />;
    case 'decisions':
      return <DecisionsPage />;
    case 'deliveries':
      return <DeliveriesPage params={r.params} />;
    default:
      return (
        <main id="main" class="page">
          <h1>Not found</h1>
          <p>
            No dashboard page here. <a href={href('/')}>Go to the overview</a>.
          </p>
        </main>
      );
  }
}

function App() {
  const current = route.value.page === 'run' ? 'runs' : route.value.page;
  if (config.auth && !token.value) return <TokenForm />;
  startLive();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('/')}>
          Baton
        </a>
        <nav aria-label="Dashboard">
          {NAV.map(([page, path, label]) => (
            <a key={page} href={href(path)} aria-current={current === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class={`live ${liveState.value}`} role="status" aria-live="polite">
          {liveState.value === 'live'
            ? 'live'
            : liveState.value === 'connecting'
              ? 'connecting…'
              : 'offline, retrying'}
        </span>
        {config.readOnly && <span class="badge">read-only</span>}
      </header>
      <Page />
    </>
  );
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
