package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// eventsChannel is the channel the events trigger (migration 7) notifies on every commit that
// appended events.
const eventsChannel = "forkgraph_events"

// WatchEvents returns a channel that receives a value soon after any process commits events to
// the log, until ctx ends; a Feed uses it to wake up instead of waiting for its next poll. On
// PostgreSQL one extra connection LISTENs; when it breaks it is opened again (with a growing
// pause), and a lost notification costs only the Feed's polling interval. On SQLite it returns
// nil: every writer is this process, whose commits wake the Feed directly.
func (db *DB) WatchEvents(ctx context.Context) <-chan struct{} {
	if db.dialect.name != DriverPostgres {
		return nil
	}
	wake := make(chan struct{}, 1)
	go db.listen(ctx, wake)
	return wake
}

func (db *DB) listen(ctx context.Context, wake chan<- struct{}) {
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("store: event listener lost its connection; polling until it is back", "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOnce holds one LISTEN connection until it fails or ctx ends. It wakes the Feed once when
// the connection is up, since notifications sent while it was down are lost.
func (db *DB) listenOnce(ctx context.Context, wake chan<- struct{}) error {
	conn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+eventsChannel); err != nil {
		return err
	}
	for {
		select {
		case wake <- struct{}{}:
		default:
		}
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
	}
}
