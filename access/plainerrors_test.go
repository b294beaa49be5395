package access

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The header bound is exact: a request whose line and headers are maxBytes on the wire passes,
// one a byte longer is refused with 431 and a code.
func TestLimitHeadersIsExact(t *testing.T) {
	t.Parallel()
	const limit = 1000
	srv := httptest.NewServer(LimitHeaders(limit, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})))
	defer srv.Close()
	send := func(size int) (int, string) {
		head := "GET /x HTTP/1.1\r\nHost: h\r\n"
		pad := size - len(head) - len("X-Pad: \r\n") - len("\r\n")
		request := head + "X-Pad: " + strings.Repeat("p", pad) + "\r\n\r\n"
		require.Len(t, request, size)
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = io.WriteString(conn, request)
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, _ := send(limit)
	require.Equal(t, http.StatusOK, status)
	status, body := send(limit + 1)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status)
	require.Contains(t, body, `"code":"REQUEST_HEADERS_TOO_LARGE"`)
}

// Only net/http's own answers are rewritten: a handler's response, even a plain-text 400 with
// the same headers, has a Date and passes as it is; so does a websocket frame.
func TestCodeNetHTTPAnswerTouchesNetHTTPsOwnOnly(t *testing.T) {
	t.Parallel()
	coded, ok := codeNetHTTPAnswer([]byte("HTTP/1.1 431 Request Header Fields Too Large" + netHTTPErrorHeaders +
		"431 Request Header Fields Too Large"))
	require.True(t, ok)
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(coded))), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	require.Contains(t, string(body), `"code":"REQUEST_HEADERS_TOO_LARGE"`)

	for name, p := range map[string]string{
		"a handler's plain 400": "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n" +
			"Connection: close\r\nDate: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n400 Bad Request",
		"a 200":      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nok",
		"a fragment": "HTTP/1.1 4",
	} {
		_, ok := codeNetHTTPAnswer([]byte(p))
		require.False(t, ok, name)
	}

	var out strings.Builder
	c := &codedConn{Conn: writerConn{&out}}
	frame := []byte{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'}
	n, err := c.Write(frame)
	require.NoError(t, err)
	require.Equal(t, len(frame), n)
	require.Equal(t, string(frame), out.String())
}

// writerConn is a net.Conn that only writes, to w.
type writerConn struct{ w io.Writer }

func (c writerConn) Write(p []byte) (int, error)    { return c.w.Write(p) }
func (writerConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (writerConn) Close() error                     { return nil }
func (writerConn) LocalAddr() net.Addr              { return nil }
func (writerConn) RemoteAddr() net.Addr             { return nil }
func (writerConn) SetDeadline(time.Time) error      { return nil }
func (writerConn) SetReadDeadline(time.Time) error  { return nil }
func (writerConn) SetWriteDeadline(time.Time) error { return nil }
