import { DEFAULT_WORKSPACE } from './config.js';

// Routes live in the URL hash (#/explorer?workspace=demo) so the Go handler serves one document
// for every view and a reload keeps the view.

/** parseRoute turns a location hash into { view, workspace }. */
export function parseRoute(hash) {
  const [path, query = ''] = hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  const view = path.replace(/^\/+/, '') === 'explorer' ? 'explorer' : 'playground';
  const workspace = (params.get('workspace') || '').trim() || DEFAULT_WORKSPACE;
  return { view, workspace };
}

/** routeHref is the inverse of parseRoute. */
export function routeHref({ view, workspace }) {
  if (view !== 'explorer') return '#/';
  return `#/explorer?workspace=${encodeURIComponent(workspace || DEFAULT_WORKSPACE)}`;
}
