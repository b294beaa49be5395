import { useId, useState } from 'react';
import { apiToken, jwtClaims, setApiToken } from './auth.js';
import { describeViewer, useViewer } from './viewer.jsx';

/**
 * TokenControl lets a user save the credential of a server that requires one: a static API token
 * or a JWT from its identity provider. It says who the server takes the page for (viewer) and,
 * for a JWT being pasted, when it expires. Saving reloads the page so every client (HTTP and
 * websocket) starts over with the new credential.
 */
export function TokenControl() {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(apiToken);
  const inputId = useId();
  const hasToken = Boolean(apiToken());
  const viewer = useViewer();
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
        {buttonText(hasToken, viewer)}
      </button>
      {open && (
        <form className="token-form" onSubmit={save}>
          <p className="viewer-status small" role="status">{describeViewer(viewer)}</p>
          <label htmlFor={inputId}>Bearer token for this server: a static API token or a JWT from its identity provider (only needed when it requires credentials)</label>
          <input id={inputId} type="password" value={draft} onChange={(e) => setDraft(e.target.value)} autoComplete="off" />
          <DraftHint draft={draft} />
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

function buttonText(hasToken, viewer) {
  if (!hasToken) return 'API token';
  if (viewer.status === 'expired') return 'API token: expired';
  if (viewer.status === 'ready' && viewer.viewer.subject) return `API token: ${viewer.viewer.name || viewer.viewer.subject}`;
  return 'API token: set';
}

// DraftHint tells what a pasted JWT says about itself (unverified: the server decides).
function DraftHint({ draft }) {
  const claims = jwtClaims(draft);
  if (!claims) return null;
  const exp = typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : null;
  const expired = exp && exp.getTime() <= Date.now();
  return (
    <p className={`small ${expired ? 'operation-error' : 'muted'}`} data-jwt-hint>
      A JWT{claims.sub ? ` for ${claims.sub}` : ''}
      {exp ? `, ${expired ? 'expired' : 'expires'} ${exp.toLocaleString()}` : ', without an expiry (the server refuses those)'}.
    </p>
  );
}
