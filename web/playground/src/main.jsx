import { StrictMode, Suspense, lazy, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Explorer } from './explorer/Explorer.jsx';
import { parseRoute, routeHref } from './route.js';
import { TokenControl } from './TokenControl.jsx';
import { ViewerProvider } from './viewer.jsx';
import './styles.css';

// GraphiQL is by far the largest dependency; load it only when its view is opened.
const Playground = lazy(() => import('./playground/Playground.jsx'));

function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  return (
    <div className="app">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">forkgraph</span>
        <nav aria-label="Views">
          <a href={routeHref({ view: 'playground' })} aria-current={route.view === 'playground' ? 'page' : undefined}>
            Playground
          </a>
          <a href={routeHref({ view: 'explorer', workspace: route.workspace })} aria-current={route.view === 'explorer' ? 'page' : undefined}>
            Session graph
          </a>
        </nav>
        <TokenControl />
      </header>
      <main id="main" className="view" tabIndex={-1}>
        {route.view === 'explorer' ? (
          <Explorer key={route.workspace} workspaceId={route.workspace} />
        ) : (
          <Suspense fallback={<p className="loading">Loading GraphiQL…</p>}>
            <Playground />
          </Suspense>
        )}
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <ViewerProvider>
      <App />
    </ViewerProvider>
  </StrictMode>,
);
