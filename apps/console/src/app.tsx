import { lazy, Suspense, useEffect, useMemo, useState, type SubmitEvent } from 'react';
import { createGatewayClient, type ConnectionState } from './client';
import { subscriptionExamples } from './examples';
import { LiveView } from './live-view';
import type { ConsoleStart } from './settings';
import { useVitals } from './use-vitals';
import { VitalsView } from './vitals-view';

const Playground = lazy(() => import('./playground'));

const VIEWS = [
  { id: 'playground', title: 'Playground' },
  { id: 'live', title: 'Live view' },
  { id: 'vitals', title: 'Vital signs' },
] as const;
type ViewId = (typeof VIEWS)[number]['id'];

function viewFromHash(): ViewId {
  const id = window.location.hash.slice(1);
  return VIEWS.find((v) => v.id === id)?.id ?? 'playground';
}

/** sessionStorage, not localStorage: a bearer token should not outlive the browser session. */
const TOKEN_KEY = 'wirestream.console.token';

function describeConnection(state: ConnectionState): string {
  switch (state.kind) {
    case 'idle':
      return 'not connected';
    case 'connecting':
      return 'connecting…';
    case 'connected':
      return 'connected';
    case 'closed':
      return `closed ${state.code}${state.reason ? `: ${state.reason}` : ''}`;
  }
}

export function App({ start }: { start: ConsoleStart }) {
  const { settings, schema, websocketUrl } = start;
  const examples = useMemo(() => subscriptionExamples(schema), [schema]);
  const [view, setView] = useState<ViewId>(viewFromHash);
  // Views stay mounted once opened (hidden, not unmounted): a running subscription keeps streaming.
  const [opened, setOpened] = useState<ReadonlySet<ViewId>>(() => new Set([viewFromHash()]));
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY) ?? '');
  const [tokenDraft, setTokenDraft] = useState(token);
  const [connection, setConnection] = useState<ConnectionState>({ kind: 'idle' });
  const client = useMemo(() => createGatewayClient(websocketUrl, token, setConnection), [websocketUrl, token]);
  useEffect(() => () => void client.dispose(), [client]);
  const vitals = useVitals(settings);

  useEffect(() => {
    const onHash = () => {
      const next = viewFromHash();
      setView(next);
      setOpened((s) => (s.has(next) ? s : new Set([...s, next])));
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  function applyToken(event: SubmitEvent<HTMLFormElement>): void {
    event.preventDefault();
    const next = tokenDraft.trim();
    sessionStorage.setItem(TOKEN_KEY, next);
    setConnection({ kind: 'idle' });
    setToken(next);
  }

  return (
    <div className="console">
      <header>
        <span className="brand">Wirestream</span>
        <nav>
          {VIEWS.map((v) => (
            <a key={v.id} href={`#${v.id}`} className={v.id === view ? 'active' : undefined} data-testid={`nav-${v.id}`}>
              {v.title}
            </a>
          ))}
        </nav>
        <form className="token" onSubmit={applyToken}>
          <input
            type="password"
            value={tokenDraft}
            onChange={(e) => setTokenDraft(e.target.value)}
            placeholder="bearer token for connection_init (empty: anonymous)"
            aria-label="bearer token"
            autoComplete="off"
            data-testid="token"
          />
          <button type="submit">Use token</button>
        </form>
        <span className={`connection ${connection.kind}`} title={websocketUrl} data-testid="connection">
          {describeConnection(connection)}
        </span>
      </header>
      <main>
        {opened.has('playground') && (
          <section className={`view ${view === 'playground' ? '' : 'hidden'}`} data-testid="view-playground">
            <Suspense fallback={<p className="muted empty">loading GraphiQL…</p>}>
              <Playground client={client} schema={schema} examples={examples} />
            </Suspense>
          </section>
        )}
        {opened.has('live') && (
          <section className={`view ${view === 'live' ? '' : 'hidden'}`} data-testid="view-live">
            <LiveView client={client} examples={examples} />
          </section>
        )}
        {view === 'vitals' && (
          <section className="view" data-testid="view-vitals">
            <VitalsView vitals={vitals} metricsEnabled={settings.metricsPath !== null} />
          </section>
        )}
      </main>
    </div>
  );
}
