import { useId, useState } from 'react';
import { apiToken, setApiToken } from './auth.js';

/**
 * TokenControl lets a user save the API token of a server that runs with workspace tokens. Saving
 * reloads the page so every client (HTTP and websocket) starts over with the new credentials.
 */
export function TokenControl() {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(apiToken);
  const inputId = useId();
  const hasToken = Boolean(apiToken());
  const save = (e) => {
    e.preventDefault();
    setApiToken(draft);
    window.location.reload();
  };
  const clear = () => {
    setApiToken('');
    window.location.reload();
  };
  return (
    <div className="token-control">
      <button type="button" className="topbar-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {hasToken ? 'API token: set' : 'API token'}
      </button>
      {open && (
        <form className="token-form" onSubmit={save}>
          <label htmlFor={inputId}>Bearer token for this server (only needed when it runs with API tokens)</label>
          <input id={inputId} type="password" value={draft} onChange={(e) => setDraft(e.target.value)} autoComplete="off" />
          <div className="token-actions">
            <button type="submit" className="primary">Save</button>
            {hasToken && <button type="button" onClick={clear}>Remove</button>}
            <button type="button" onClick={() => setOpen(false)}>Cancel</button>
          </div>
        </form>
      )}
    </div>
  );
}
