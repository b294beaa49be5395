// The Relay app of the e2e suite, run with relay-runtime alone (no React): an Environment whose
// network posts to /graphql, and the three things react-relay's hooks would do for a component,
// done by hand with relay-runtime's own helpers: load a query and keep it retained, read a
// fragment from the store, load the next or previous page of a fragment's @connection, and refetch
// a @refetchable fragment. It imports the artifacts relay-compiler wrote from src/ (compile.mjs).
import relay from 'relay-runtime';
import { incrementalFetch } from './incremental.mjs';

const {
  Environment,
  Network,
  RecordSource,
  Store,
  createOperationDescriptor,
  fetchQuery,
  getPaginationMetadata,
  getPaginationVariables,
  getRefetchMetadata,
  getRequest,
  getSelector,
  getValueAtPath,
  getVariablesFromFragment,
} = relay;

/**
 * createEnvironment returns a Relay Environment with its own empty store whose network posts each
 * operation's text to graphqlURL. requests, when given, receives every operation's name and
 * variables, so a test can check what Relay asked the server for.
 */
export function createEnvironment(graphqlURL, requests = []) {
  const network = Network.create(async (params, variables) => {
    requests.push({ name: params.name, variables });
    const res = await fetch(graphqlURL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: params.text, variables, operationName: params.name }),
    });
    const body = await res.json();
    // Relay keeps partial data with errors; this app treats any error as a failed request.
    if (body.errors?.length) throw new Error(`${params.name}: ${JSON.stringify(body.errors)}`);
    return body;
  });
  return new Environment({ network, store: new Store(new RecordSource()) });
}

/**
 * createIncrementalEnvironment returns a Relay Environment whose network reads @defer's
 * incremental delivery (incremental.mjs), as a Relay app that defers fragments needs.
 */
export function createIncrementalEnvironment(graphqlURL) {
  return new Environment({ network: Network.create(incrementalFetch(graphqlURL)), store: new Store(new RecordSource()) });
}

/**
 * streamQuery fetches a query with deferred fragments, keeps it retained, and calls onNext with
 * the query's data as the store holds it after each payload Relay committed; it resolves once the
 * response is complete.
 */
export function streamQuery(environment, query, variables, onNext) {
  const operation = createOperationDescriptor(getRequest(query), variables);
  environment.retain(operation);
  return new Promise((resolve, reject) => {
    fetchQuery(environment, query, variables, { fetchPolicy: 'network-only' }).subscribe({
      next: () => onNext(environment.lookup(operation.fragment).data),
      error: reject,
      complete: () => resolve(environment.lookup(operation.fragment).data),
    });
  });
}

/** isMissing reports whether the store lacks fragment's data at fragmentRef (a deferred one not yet here). */
export function isMissing(environment, fragment, fragmentRef) {
  return environment.lookup(getSelector(fragment, fragmentRef)).isMissingData;
}

/**
 * loadQuery fetches a query, keeps its data retained in the store (so garbage collection never
 * takes it while a test reads it) and returns the query's data as the store holds it: fragment
 * references that readFragment resolves.
 */
export async function loadQuery(environment, query, variables) {
  const operation = createOperationDescriptor(getRequest(query), variables);
  environment.retain(operation);
  await fetchQuery(environment, query, variables, { fetchPolicy: 'network-only' }).toPromise();
  return environment.lookup(operation.fragment).data;
}

/** readFragment returns what the store holds now for fragment at fragmentRef. */
export function readFragment(environment, fragment, fragmentRef) {
  const selector = getSelector(fragment, fragmentRef);
  if (selector == null) throw new Error(`no ${fragment.name} at this reference`);
  return environment.lookup(selector).data;
}

/**
 * loadMore fetches the next ('forward') or previous ('backward') count edges of the fragment's
 * @connection with its generated pagination query, as usePaginationFragment does: the cursor is the
 * connection's endCursor (forward) or startCursor (backward) in the store, the other direction's
 * arguments are nulled, and ConnectionHandler merges the page into the connection the fragment
 * reads. Returns the fragment's data after the merge.
 */
export async function loadMore(environment, fragment, fragmentRef, direction, count) {
  const { paginationRequest, paginationMetadata, connectionPathInFragmentData, identifierField } =
    getPaginationMetadata(fragment, fragment.name);
  const data = readFragment(environment, fragment, fragmentRef);
  const { pageInfo } = getValueAtPath(data, connectionPathInFragmentData);
  const cursor = direction === 'forward' ? pageInfo.endCursor : pageInfo.startCursor;
  const variables = getPaginationVariables(
    direction,
    count,
    cursor,
    withIdentifier(getVariablesFromFragment(fragment, fragmentRef), fragment, data, identifierField),
    {},
    paginationMetadata,
  );
  await fetchQuery(environment, paginationRequest, variables, { fetchPolicy: 'network-only' }).toPromise();
  return readFragment(environment, fragment, fragmentRef);
}

/**
 * refetch fetches the fragment again with its generated refetch query (for a fragment on a Node
 * type: `node(id:)` with the record's id) and returns the fragment's data as the store then holds it.
 */
export async function refetch(environment, fragment, fragmentRef) {
  const { refetchableRequest, identifierInfo } = getRefetchMetadata(fragment, fragment.name);
  const data = readFragment(environment, fragment, fragmentRef);
  const variables = withIdentifier(
    getVariablesFromFragment(fragment, fragmentRef),
    fragment,
    data,
    identifierInfo?.identifierField,
  );
  await fetchQuery(environment, refetchableRequest, variables, { fetchPolicy: 'network-only' }).toPromise();
  return readFragment(environment, fragment, fragmentRef);
}

// withIdentifier adds the record's id to the variables of a refetch through node(id:).
function withIdentifier(variables, fragment, data, identifierField) {
  if (identifierField == null) return variables;
  const id = data?.[identifierField];
  if (typeof id !== 'string') throw new Error(`${fragment.name} has no ${identifierField} to refetch by`);
  const { identifierInfo } = getRefetchMetadata(fragment, fragment.name);
  return { ...variables, [identifierInfo.identifierQueryVariableName]: id };
}
