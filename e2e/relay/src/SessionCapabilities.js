// Read by relay-compiler only (never imported): a deferred fragment, which Relay reads through the
// incremental network layer of ../incremental.mjs. The fragment's fields are resolved apart from
// the session (its capabilities and its turn count), so they come in a later payload.

graphql`
  fragment SessionCapabilities_session on Session {
    lifecycleCapabilities {
      fork
      forkThroughTurn
    }
    turns(first: 1) {
      totalCount
    }
  }
`;

graphql`
  query SessionCapabilitiesQuery($workspaceId: ID!, $id: ID!) {
    session(workspaceId: $workspaceId, id: $id) {
      id
      title
      ...SessionCapabilities_session @defer(label: "capabilities")
    }
  }
`;
