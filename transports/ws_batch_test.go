package transports

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordingConn records each Write call, to count system calls a batch would make.
type recordingConn struct {
	net.Conn
	writes [][]byte
	fail   error
}

func (r *recordingConn) Write(p []byte) (int, error) {
	if r.fail != nil {
		return 0, r.fail
	}
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func TestBatchConnWritesThroughOutsideABatch(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	_, err := b.Write([]byte("handshake"))
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("handshake")}, rec.writes)
}

func TestBatchConnGathersABatchIntoOneWrite(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	b.begin()
	for _, frame := range []string{"one", "two", "three"} {
		_, err := b.Write([]byte(frame))
		require.NoError(t, err)
	}
	require.Empty(t, rec.writes, "nothing is written while the batch is open")
	require.NoError(t, b.end())
	require.Equal(t, [][]byte{[]byte("onetwothree")}, rec.writes)

	require.NoError(t, b.end(), "an empty batch writes nothing")
	require.Len(t, rec.writes, 1)
}

func TestBatchConnWritesOutALargeBatchEarly(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	b.begin()
	big := bytes.Repeat([]byte("x"), maxBatchBytes)
	_, err := b.Write(big)
	require.NoError(t, err)
	require.Len(t, rec.writes, 1, "a batch at the bound is written before it grows further")
	_, err = b.Write([]byte("tail"))
	require.NoError(t, err)
	require.NoError(t, b.end())
	require.Equal(t, []byte("tail"), rec.writes[1])
}

func TestBatchConnReportsTheWriteErrorAtEnd(t *testing.T) {
	broken := errors.New("connection reset")
	b := &batchConn{Conn: &recordingConn{fail: broken}}
	b.begin()
	_, err := b.Write([]byte("frame"))
	require.NoError(t, err, "the failure shows when the batch is written")
	require.ErrorIs(t, b.end(), broken)
}
