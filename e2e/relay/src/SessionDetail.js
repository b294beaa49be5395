// Read by relay-compiler only (never imported): the documents of one session's view. The fragment
// is refetchable, so Relay refetches and pages it through `node(id:)` with the session's global id.

graphql`
  fragment SessionDetail_session on Session
  @refetchable(queryName: "SessionDetailRefetchQuery")
  @argumentDefinitions(
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    id
    localId
    workspaceId
    title
    turns(first: $first, after: $after, last: $last, before: $before)
    @connection(key: "SessionDetail_turns") {
      totalCount
      edges {
        node {
          id
          localId
          sequence
        }
      }
    }
  }
`;

// The session with its first two turns. (A null literal in @arguments counts as not given, so the
// fragment has no default page size: each query names its own direction.)
graphql`
  query SessionDetailQuery($workspaceId: ID!, $id: ID!) {
    session(workspaceId: $workspaceId, id: $id) {
      ...SessionDetail_session @arguments(first: 2)
    }
  }
`;

// The session with its last two turns, to page the turns backward from the newest.
graphql`
  query SessionDetailLatestQuery($workspaceId: ID!, $id: ID!) {
    session(workspaceId: $workspaceId, id: $id) {
      ...SessionDetail_session @arguments(last: 2)
    }
  }
`;
