package store

import (
	"database/sql"
)

// PoolStats returns the connection pool's statistics (open, in use, idle, waits), for metrics.
// It returns zero statistics if the pool cannot be reached.
func (db *DB) PoolStats() sql.DBStats {
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return sql.DBStats{}
	}
	return sqlDB.Stats()
}
