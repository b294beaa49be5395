// Read by relay-compiler only (never imported): the documents of one session's view. The fragment
// is refetchable, so Relay refetches and pages it through `node(id:)` with the session's global id.

graphql`
  fragment SessionDetail_session on Session
  @refetchable(queryName: "SessionDetailRefetchQuery")
  @argumentDefinitions(first: { type: "Int", defaultValue: 2 }, after: { type: "String" }) {
    id
    localId
    workspaceId
    title
    turns(first: $first, after: $after) @connection(key: "SessionDetail_turns") {
      totalCount
      edges {
        node {
          id
          sequence
        }
      }
    }
  }
`;

graphql`
  query SessionDetailQuery($workspaceId: ID!, $id: ID!) {
    session(workspaceId: $workspaceId, id: $id) {
      ...SessionDetail_session
    }
  }
`;
