// The client's typed documents, for use with client.request / client.subscribe (or any client
// that understands TypedDocumentString).
export {
  AbandonForkOperationDocument,
  AcknowledgeForkOperationDocument,
  ForkOperationDocument,
  ForkOperationUpdatedDocument,
  ForkSessionDocument,
  ReconcileForkOperationDocument,
  SessionNodeDocument,
  SessionTurnsPageDocument,
  SessionsPageDocument,
  TypedDocumentString,
  WorkspaceEventCursorDocument,
  WorkspaceEventsDocument,
} from './generated/graphql.js';
export type * from './generated/graphql.js';
