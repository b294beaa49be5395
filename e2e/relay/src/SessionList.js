// Read by relay-compiler only (never imported): the documents of the session list, which pages a
// workspace's sessions both ways. The tests import the artifacts compiled from them.

// The list as a fragment on Query, so its pagination query is generated from it.
graphql`
  fragment SessionList_query on Query
  @refetchable(queryName: "SessionListPaginationQuery")
  @argumentDefinitions(
    workspaceId: { type: "ID!" }
    first: { type: "Int" }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    sessions(workspaceId: $workspaceId, first: $first, after: $after, last: $last, before: $before)
    @connection(key: "SessionList_sessions") {
      totalCount
      edges {
        node {
          id
          title
        }
      }
    }
  }
`;

graphql`
  query SessionListQuery($workspaceId: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    ...SessionList_query
    @arguments(workspaceId: $workspaceId, first: $first, after: $after, last: $last, before: $before)
  }
`;
