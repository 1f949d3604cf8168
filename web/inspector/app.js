// The inspector's root: the key form, then a hash route (#/ the sessions,
// #/s/<id> one session). Every string from the server is rendered as a text
// child (Preact escapes it); nothing is ever set as HTML.
import { render } from './vendor/preact.mjs';
import { useEffect, useState } from './vendor/hooks.mjs';
import { api, clearKey, getKey, html, setKey } from './api.js';
import { SessionsPage } from './sessions-page.js';
import { SessionPage } from './session-page.js';

function Login({ onDone, problem }) {
  const [key, setK] = useState('');
  const [err, setErr] = useState(problem);
  const submit = async (e) => {
    e.preventDefault();
    setKey(key.trim());
    try {
      await api('GET', '/v1/sessions?limit=1');
      onDone();
    } catch (x) {
      clearKey();
      setErr(x.status === 401 ? 'That key was refused.' : x.message);
    }
  };
  return html`<main class="login">
    <h1>openboa inspector</h1>
    <form onSubmit=${submit}>
      <label for="key">API key</label>
      <p class="hint">The server's key (OPENBOA_API_KEY, or <code>.openboa/api-key</code> in the home). Kept for this tab only.</p>
      <input id="key" name="key" type="password" autocomplete="off" value=${key} onInput=${(e) => setK(e.currentTarget.value)} autofocus />
      <button type="submit" disabled=${!key.trim()}>Open</button>
      ${err && html`<p class="error" role="alert">${err}</p>`}
    </form>
  </main>`;
}

const route = () => {
  const m = /^#\/s\/([0-9a-f-]{36})$/.exec(location.hash);
  return m ? { page: 'session', id: m[1] } : { page: 'sessions' };
};

function App() {
  const [authed, setAuthed] = useState(!!getKey());
  const [problem, setProblem] = useState(null);
  const [r, setR] = useState(route());
  useEffect(() => {
    const onHash = () => setR(route());
    const onUnauth = () => {
      clearKey();
      setProblem('The key was refused: give it again.');
      setAuthed(false);
    };
    addEventListener('hashchange', onHash);
    addEventListener('openboa:unauthorized', onUnauth);
    return () => {
      removeEventListener('hashchange', onHash);
      removeEventListener('openboa:unauthorized', onUnauth);
    };
  }, []);
  if (!authed) return html`<${Login} problem=${problem} onDone=${() => setAuthed(true)} />`;
  const logout = () => {
    clearKey();
    setAuthed(false);
  };
  return html`<div class="shell">
    <header class="top">
      <a href="#/" class="brand">openboa</a>
      <span class="grow"></span>
      <button class="link" onClick=${logout}>Forget key</button>
    </header>
    ${r.page === 'session' ? html`<${SessionPage} key=${r.id} id=${r.id} />` : html`<${SessionsPage} />`}
  </div>`;
}

const root = document.getElementById('app');
// Preact renders into what is there: take the boot note out first.
root.textContent = '';
render(html`<${App} />`, root);
