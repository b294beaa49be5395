package resolvers_test

import (
	"net/http"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

func bearer(token string) client.Option { return client.AddHeader("Authorization", "Bearer "+token) }

func TestWorkspaceTokens(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{auth: tokenAuth(t, tokA+"=wa, "+tokB+"=wb")})
	api.seedSession("wa", "s", 1, "")

	read := `query($ws: ID!) { sessions(workspaceId: $ws) { totalCount } }`
	write := `mutation($ws: ID!) { reportSession(input: {workspaceId: $ws, id: "n", provider: "simulated"}) { id } }`
	for _, tc := range []struct {
		name, query, ws, code string
		opts                  []client.Option
	}{
		{"read without a token", read, "wa", "UNAUTHENTICATED", nil},
		{"read with an unknown token", read, "wa", "UNAUTHENTICATED", []client.Option{bearer("nope")}},
		{"read with a non-bearer scheme", read, "wa", "UNAUTHENTICATED", []client.Option{client.AddHeader("Authorization", "Basic "+tokA)}},
		{"read another workspace", read, "wb", "FORBIDDEN", []client.Option{bearer(tokA)}},
		{"write another workspace", write, "wa", "FORBIDDEN", []client.Option{bearer(tokB)}},
		{"write without a token", write, "wb", "UNAUTHENTICATED", nil},
		{"read own workspace", read, "wa", "", []client.Option{bearer(tokA)}},
		{"write own workspace", write, "wb", "", []client.Option{bearer(tokB)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := api.with(t).do(tc.query, nil, map[string]any{"ws": tc.ws}, tc.opts...)
			if tc.code == "" {
				require.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			require.Equal(t, tc.code, errs[0].code())
		})
	}

	t.Run("introspection needs no token", func(t *testing.T) {
		var got struct {
			Schema struct{ QueryType struct{ Name string } }
		}
		api.with(t).mustDo(`{ Schema: __schema { queryType { name } } }`, &got, nil)
		require.Equal(t, "Query", got.Schema.QueryType.Name)
	})

	t.Run("a forbidden write changes nothing", func(t *testing.T) {
		var got struct{ Session *struct{ ID string } }
		api.with(t).mustDo(`{ session(workspaceId: "wa", id: "n") { id } }`, &got, nil, bearer(tokA))
		require.Nil(t, got.Session)
	})

	t.Run("websocket: token in connection_init", func(t *testing.T) {
		ws := api.with(t).dialWS(map[string]any{"authorization": "Bearer " + tokA})
		ws.subscribe("own", eventsSubscription, map[string]any{"ws": "wa"})
		ws.subscribe("other", eventsSubscription, map[string]any{"ws": "wb"})
		errs := ws.streamError("other")
		require.Equal(t, "FORBIDDEN", errs[0].code())
	})

	t.Run("websocket: token in the upgrade request's header", func(t *testing.T) {
		ws := api.with(t).dialWSRaw(nil, http.Header{"Authorization": {"Bearer " + tokB}})
		require.Equal(t, "connection_ack", ws.read().Type)
	})

	for name, payload := range map[string]map[string]any{
		"websocket: no token":      nil,
		"websocket: unknown token": {"authorization": "Bearer nope"},
	} {
		t.Run(name, func(t *testing.T) {
			ws := api.with(t).dialWSRaw(payload)
			_, _, err := ws.conn.ReadMessage()
			var closed *websocket.CloseError
			require.ErrorAs(t, err, &closed, "refused before connection_ack")
			require.Equal(t, 4403, closed.Code)
		})
	}
}
