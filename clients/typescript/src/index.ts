// @forkgraph/client: forkgraph's first-party client for frontends.
export { createForkgraphClient, ForkgraphClient, type ForkgraphClientOptions } from './client.js';
export { CredentialError, ForkgraphError, TransportError, TOKEN_CODES, isTokenError, type GraphQLErrorEntry } from './errors.js';
export { ForkHandle, DEFAULT_FORK_TIMING, validChild, type ForkState, type ForkTiming } from './fork-handle.js';
export { forkRefusal, type ForkThroughTurnInput, type ResumeOptions } from './forks.js';
export { SessionGraph, type GraphMessage, type GraphSession, type GraphTurn, type SessionGraphState } from './graph.js';
export { Credentials, HttpTransport, type Document, type RequestOptions, type TokenProvider } from './http.js';
export {
  MemoryForkRecordStore,
  WebStorageForkRecordStore,
  boundaryKey,
  isResumable,
  type AckStatus,
  type Boundary,
  type ForkErrorInfo,
  type ForkRecord,
  type ForkRecordStore,
  type ForkStatus,
  type StorageLike,
} from './records.js';
export type { SSEClientFactory, StreamSink } from './streams.js';
export type { Schedule } from './timing.js';
export { isPendingOperation, type ForkOperation, type ForkResult, type ForkTarget, type Lineage, type Session, type Turn, type WorkspaceEvent } from './types.js';
export type { WatchStatus, WatchWorkspaceOptions, WorkspaceWatch } from './watch.js';
export * as documents from './documents.js';
