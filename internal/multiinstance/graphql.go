package multiinstance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// GraphQLError is one entry of a response's errors.
type GraphQLError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e GraphQLError) Code() string {
	code, _ := e.Extensions["code"].(string)
	return code
}

// ResponseError is a GraphQL response that carried errors.
type ResponseError struct{ Errors []GraphQLError }

// Error lists the messages with their codes.
func (e *ResponseError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, ge := range e.Errors {
		msgs[i] = fmt.Sprintf("%s (%s)", ge.Message, ge.Code())
	}
	return "graphql: " + strings.Join(msgs, "; ")
}

// Client posts GraphQL operations to one endpoint.
type Client struct {
	URL  string // http://addr/graphql
	HTTP *http.Client
}

// NewClient returns a client for endpoint with a per-request timeout.
func NewClient(endpoint string) *Client {
	return &Client{URL: endpoint, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Do posts query with vars and decodes the response's data into out (which may be nil). A
// response with errors is a *ResponseError.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	var envelope struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil {
		return fmt.Errorf("HTTP %d, undecodable body %q: %w", resp.StatusCode, raw, err)
	}
	if len(envelope.Errors) > 0 {
		return &ResponseError{Errors: envelope.Errors}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(envelope.Data, out); err != nil {
		return fmt.Errorf("decode data %s: %w", envelope.Data, err)
	}
	return nil
}
