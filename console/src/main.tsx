import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentKey, gql, loginMessage, setKey } from './api';
import { EventsPage } from './pages/events';
import { PlaygroundPage } from './pages/playground';
import { PoliciesPage } from './pages/policies';
import { ProjectsPage } from './pages/projects';
import { SessionsPage } from './pages/sessions';
import './styles.css';

const PAGES = [
  { id: 'events', label: 'Events', Page: EventsPage },
  { id: 'sessions', label: 'Agent sessions', Page: SessionsPage },
  { id: 'playground', label: 'Playground', Page: PlaygroundPage },
  { id: 'policies', label: 'Policies', Page: PoliciesPage },
  { id: 'projects', label: 'Projects', Page: ProjectsPage },
] as const;
type PageId = (typeof PAGES)[number]['id'];

/** The page is the URL's hash (#events): the key never goes into the URL. */
const pageFromHash = (): PageId => {
  const id = location.hash.replace(/^#\/?/, '');
  return (PAGES.find((p) => p.id === id)?.id ?? 'events') as PageId;
};

/** A read that needs a full-scope key: a traffic key is refused (403 insufficient_key_scope) before GraphQL runs. */
const WHOAMI = '{ projects(limit: 1) { count } }';

function Login({ onLogin }: { onLogin: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const value = String(new FormData(e.currentTarget as HTMLFormElement).get('apiKey') ?? '').trim();
    if (!value) return setError('Enter a project API key (svc_sk_…).');
    setBusy(true);
    setError(null);
    try {
      await gql(WHOAMI, {}, value);
      setKey(value);
      onLogin();
    } catch (err) {
      setError(loginMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form onSubmit={submit} class="card" aria-describedby={error ? 'login-error' : undefined}>
        <h1>Gateway console</h1>
        <p class="muted">Sign in with a full-scope project API key. It is kept in this tab only (session storage), never in the URL.</p>
        <label for="apiKey">API key</label>
        <input id="apiKey" name="apiKey" type="password" autocomplete="off" spellcheck={false} placeholder="svc_sk_…" required />
        <button type="submit" disabled={busy}>{busy ? 'Checking…' : 'Sign in'}</button>
        {error && (
          <p id="login-error" class="error" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(currentKey() !== null);
  const [page, setPage] = useState<PageId>(pageFromHash());
  useEffect(() => {
    const onHash = () => setPage(pageFromHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  if (!signedIn) return <Login onLogin={() => setSignedIn(true)} />;
  const Page = PAGES.find((p) => p.id === page)!.Page;
  return (
    <div class="shell">
      <header>
        <span class="brand">Gateway console</span>
        <nav aria-label="Main">
          {PAGES.map((p) => (
            <a key={p.id} href={`#${p.id}`} data-testid={`nav-${p.id}`} aria-current={p.id === page ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <button
          class="link"
          onClick={() => {
            setKey(null);
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="content">
        <Page />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
